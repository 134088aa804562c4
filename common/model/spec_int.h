/* spec_int.h: the parsed spec as spec.c builds it and validate.c reads it.
 * Private to those two files; everyone else uses spec.h. All strings point
 * into YAML nodes owned by the spec's YAML document. */
#ifndef ENPU_SPEC_INT_H
#define ENPU_SPEC_INT_H

#include <stddef.h>
#include <stdint.h>
#include "spec.h"
#include "ydoc.h"

typedef struct enpu_sstr {
	const char *s;           /* NULL when absent */
	int line, col;
} enpu_sstr;

typedef struct enpu_stensor {
	enpu_sstr name;
	enpu_dtype dtype;
	enpu_shape shape;
	int line, col;           /* the entry */
} enpu_stensor;

typedef struct enpu_sop {
	enpu_sstr name, op;
	enpu_sstr *in; int n_in;
	enpu_sstr *out; int n_out;
	const enpu_ynode *attrs;  /* mapping, or NULL when absent/empty */
	int component;
	int line, col;
} enpu_sop;

typedef struct enpu_scomp {
	enpu_sstr name;
	int first_op, n_ops;
	int line, col;
} enpu_scomp;

struct enpu_spec {
	char *label;
	int line, col;            /* the top-level mapping */
	int version;              /* `eulernpu:` 1 or 2 (v2 adds ops: ops.h `since`) */
	enpu_sstr name, backend;  /* backend.s NULL when absent */
	enpu_stensor *inputs; int n_inputs;
	enpu_sstr *outputs; int n_outputs;
	enpu_stensor *weights; int n_weights;
	enpu_scomp *comps; int n_comps;
	enpu_sop *ops; int n_ops;
	struct json_object *targets;  /* object: backend -> object, or NULL */
	const enpu_ynode *targets_node; /* the `targets` mapping, for positions; NULL when absent */
	enpu_limits lim;
	enpu_ydoc *doc;           /* owns every node */
};

/* "label:line:col" into buf; returns buf. */
const char *enpu_spec_where(const enpu_spec *s, int line, int col, char *buf, size_t cap);

#endif

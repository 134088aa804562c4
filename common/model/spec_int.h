/* spec_int.h: the parsed spec as spec.c builds it and validate*.c read it.
 * Private to those files; everyone else uses spec.h. All strings point
 * into YAML nodes owned by the spec's YAML document. */
#ifndef ENPU_SPEC_INT_H
#define ENPU_SPEC_INT_H

#include <stdarg.h>
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

/* Input k of op (op table row d), tensor t: where the row says it is an
 * int64 weight (gather's indices), it must be one. 0, or -1 with E0207 at
 * the name that reads it (validate_ir.c). */
struct enpu_irtensor;
int enpu_check_input_dtype(const enpu_spec *s, const enpu_sop *op, const enpu_opdef *d, int k,
			   const struct enpu_irtensor *t, enpu_err *e);
/* The dtypes of op's inputs (tensor indices in[] of g) against its row's
 * type rule: 0 with *out the output's dtype, or -1 with E0207 at the input
 * at fault ("reads 'q' (int8) as input 1, which must be float32", "mixed
 * types") (validate_ir.c). */
struct enpu_graph;
int enpu_check_op_types(const enpu_spec *s, const enpu_sop *op, const enpu_opdef *d,
			const struct enpu_graph *g, const int *in, enpu_dtype *out, enpu_err *e);

/* The three-line error at line:col of the spec (validate_attrs.c). */
int enpu_spec_fail(const enpu_spec *s, enpu_err *e, int line, int col, enpu_code code,
		   const char *fix, const char *fmt, ...) __attribute__((format(printf, 7, 8)));
/* op's `attrs:` into a (defaults first) through the op's row d: 0, or -1
 * with E0209/E0201 at the attribute's line:col (validate_attrs.c). */
int enpu_parse_op_attrs(const enpu_spec *s, const enpu_sop *op, const enpu_opdef *d,
			enpu_attrs *a, enpu_err *e);
/* A shape rule's reason "attribute 'NAME'..." or "attribute 'NAME'[i]..."
 * is about that attribute (entry i) of op: its line:col when the spec
 * writes it, else the op's. 1 if why is such a reason. */
int enpu_attr_where(const enpu_sop *op, const char *why, int *line, int *col);

#endif

/* spec_int.h: the parsed spec as spec.c builds it and validate.c reads it.
 * Private to those two files; everyone else uses spec.h. All strings point
 * into YAML nodes owned by the spec's node arena. */
#ifndef ENPU_SPEC_INT_H
#define ENPU_SPEC_INT_H

#include <stddef.h>
#include <stdint.h>
#include "spec.h"

enum { ENPU_YN_SCALAR, ENPU_YN_SEQ, ENPU_YN_MAP };

/* A YAML node. Aliases are not copied: an alias is one more pointer to the
 * anchored node, so the tree is a DAG and nodes are freed via the arena. */
typedef struct enpu_ynode {
	int kind;
	int line, col;           /* 1-based start of the node */
	int plain;               /* scalar written without quotes or tag */
	char *text;              /* scalar, NUL-terminated */
	size_t len;
	struct enpu_ynode **kids; /* seq: n items; map: n pairs, kids[2i] key, kids[2i+1] value */
	size_t n, alloc;
	uint64_t size;           /* nodes in the subtree after alias expansion */
	int height;              /* 1 for a scalar */
} enpu_ynode;

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
	enpu_sstr name, backend;  /* backend.s NULL when absent */
	enpu_stensor *inputs; int n_inputs;
	enpu_sstr *outputs; int n_outputs;
	enpu_stensor *weights; int n_weights;
	enpu_scomp *comps; int n_comps;
	enpu_sop *ops; int n_ops;
	struct json_object *targets;  /* object: backend -> object, or NULL */
	const enpu_ynode *targets_node; /* the `targets` mapping, for positions; NULL when absent */
	enpu_limits lim;
	enpu_ynode **nodes; size_t n_nodes, alloc_nodes;  /* arena */
};

/* A standalone YAML document (a target file) parsed by the spec's loader,
 * with the same alias, node-count and depth limits and node positions.
 * An empty document has a NULL root. Errors name label:line:col. */
typedef struct enpu_ydoc enpu_ydoc;
int enpu_yaml_parse(const char *text, size_t len, const char *label, const enpu_limits *lim,
		    enpu_ydoc **doc, enpu_err *e);
const enpu_ynode *enpu_ydoc_root(const enpu_ydoc *d);
void enpu_ydoc_free(enpu_ydoc *d);

/* "label:line:col" into buf; returns buf. */
const char *enpu_spec_where(const enpu_spec *s, int line, int col, char *buf, size_t cap);

/* Plain-scalar readers (YAML 1.2 core schema). 0 ok; -1 not of that type;
 * -2 (int only) out of range of int64. */
int enpu_ynode_int(const enpu_ynode *n, int64_t *v);
int enpu_ynode_float(const enpu_ynode *n, double *v);
int enpu_ynode_bool(const enpu_ynode *n, int *v);
int enpu_ynode_null(const enpu_ynode *n);

/* Levenshtein distance, capped: returns cap + 1 when larger (cheap on
 * long or very different strings). */
int enpu_edit_distance(const char *a, const char *b, int cap);

/* The closest of a NULL-terminated list of names (edit distance at most 2,
 * and less than the candidate's length), or NULL when none is close. */
const char *enpu_closest(const char *w, const char *const *cands);
/* "a, b, c" into buf, truncated to fit cap. */
void enpu_join(const char *const *list, char *buf, size_t cap);

#endif

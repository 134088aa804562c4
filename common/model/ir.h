/* ir.h: the validated op graph. The validator builds it from a spec; the
 * compiler writes it as graph.json; the executor reads it back from there.
 * All names and arrays are owned by the graph (enpu_graph_free). */
#ifndef ENPU_IR_H
#define ENPU_IR_H

#include "ops.h"
#include "tensor.h"

typedef enum enpu_tkind {
	ENPU_TK_INPUT,        /* graph input: a key of input.npz */
	ENPU_TK_WEIGHT,       /* a key of weights.npz */
	ENPU_TK_INTERMEDIATE, /* produced by an op (may also be a graph output) */
} enpu_tkind;

typedef struct enpu_irtensor {
	char *name;
	enpu_dtype dtype;
	enpu_shape shape;
	enpu_tkind kind;
	int is_output;        /* named in the spec's outputs */
	int producer;         /* op index, -1 for inputs and weights */
	int last_use;         /* last op index reading it, -1 if none */
	int line, col;        /* where the spec declared or produced it (0 = unknown) */
} enpu_irtensor;

#define ENPU_MAX_OP_INPUTS 64
#define ENPU_MAX_OP_OUTPUTS 64   /* = ENPU_MAX_SPLIT (ops.h): split's most outputs */

typedef struct enpu_irop {
	char *name;
	const enpu_opdef *def;
	int n_in, n_out;
	int *in;              /* tensor indices, n_in of them */
	int *out;             /* tensor indices, n_out of them (1 <= n_out <=
			       * ENPU_MAX_OP_OUTPUTS; only split writes several) */
	enpu_attrs attrs;     /* resolved and normalized */
	int component;        /* index into graph components */
	int line, col;
} enpu_irop;

typedef struct enpu_graph {
	char *name;
	char *backend;        /* the backend it was validated for */
	enpu_irtensor *tensors; int n_tensors;
	enpu_irop *ops; int n_ops;          /* in schedule order */
	int *inputs; int n_inputs;          /* tensor indices, spec order */
	int *outputs; int n_outputs;        /* tensor indices, spec order */
	char **components; int n_components;
} enpu_graph;

void enpu_graph_free(enpu_graph *g);   /* frees g itself too; NULL ok */
int enpu_graph_find(const enpu_graph *g, const char *tensor_name); /* -1 if none */

#endif

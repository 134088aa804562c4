/* npusim_graphs.h: hand-built graphs for the npu_sim model's unit tests
 * (test_npusim.c, test_npusim_v2.c): tensors, ops, targets, the model run
 * and a check of the three SRAM/DRAM operands. */
#ifndef NPUSIM_GRAPHS_H
#define NPUSIM_GRAPHS_H

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "npusim.h"

/* ---- hand-built graphs --------------------------------------------------- */

static inline enpu_graph *mk(void)
{
	enpu_graph *g = calloc(1, sizeof(*g));

	g->name = strdup("t");
	g->backend = strdup("npu_sim");
	g->tensors = calloc(32, sizeof(*g->tensors));
	g->ops = calloc(16, sizeof(*g->ops));
	g->inputs = calloc(32, sizeof(int));
	g->outputs = calloc(32, sizeof(int));
	return g;
}

/* A tensor of the given dims (ndim of them). */
static inline int tens(enpu_graph *g, const char *name, enpu_tkind kind, int ndim, const int64_t *dims)
{
	enpu_irtensor *t = &g->tensors[g->n_tensors];

	t->name = strdup(name);
	t->dtype = ENPU_DT_F32;
	t->shape.ndim = ndim;
	for (int i = 0; i < ndim; i++)
		t->shape.dim[i] = dims[i];
	t->kind = kind;
	t->producer = t->last_use = -1;
	if (kind == ENPU_TK_INPUT)
		g->inputs[g->n_inputs++] = g->n_tensors;
	return g->n_tensors++;
}

#define T(g, name, kind, ...) \
	tens(g, name, kind, (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__})

static inline enpu_irop *op(enpu_graph *g, const char *name, enpu_opid id, int n_in, const int *in, int out)
{
	enpu_irop *o = &g->ops[g->n_ops++];

	o->name = strdup(name);
	o->def = enpu_op_by_id(id);
	enpu_attrs_defaults(o->def, &o->attrs);
	o->n_in = n_in;
	o->n_out = 1;
	o->in = calloc((size_t)n_in, sizeof(int));
	memcpy(o->in, in, (size_t)n_in * sizeof(int));
	o->out = malloc(sizeof(int));
	o->out[0] = out;
	g->tensors[out].producer = g->n_ops - 1;
	return o;
}

/* One matmul of M x K times K x N. */
static inline enpu_graph *matmul_graph(int64_t M, int64_t N, int64_t K)
{
	enpu_graph *g = mk();
	int a = T(g, "a", ENPU_TK_INPUT, M, K), b = T(g, "b", ENPU_TK_WEIGHT, K, N);
	int o = T(g, "o", ENPU_TK_INTERMEDIATE, M, N);

	op(g, "mm", ENPU_OP_MATMUL, 2, (int[]){a, b}, o);
	return g;
}

static inline enpu_npu_target tgt(int rows, int cols, enpu_dataflow df)
{
	enpu_npu_target t;

	enpu_npu_target_default(&t);
	t.rows = rows;
	t.cols = cols;
	t.dataflow = df;
	return t;
}

static inline void model(const enpu_graph *g, const enpu_npu_target *t, uint64_t arena, enpu_npu_report *r)
{
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(enpu_npu_model(g, t, arena, r, &e), 0, "model failed: %s", e.message);
	cr_assert_eq(r->n_ops, g->n_ops);
}

#define EXPECT3(arr, x, y, z) do { \
	cr_expect_eq((arr)[0], (uint64_t)(x), #arr "[ifmap] = %llu, want %llu", (unsigned long long)(arr)[0], (unsigned long long)(x)); \
	cr_expect_eq((arr)[1], (uint64_t)(y), #arr "[filter] = %llu, want %llu", (unsigned long long)(arr)[1], (unsigned long long)(y)); \
	cr_expect_eq((arr)[2], (uint64_t)(z), #arr "[ofmap] = %llu, want %llu", (unsigned long long)(arr)[2], (unsigned long long)(z)); \
} while (0)

#endif

/* plan.c: the memory planner. Every intermediate tensor gets an offset in
 * one arena; tensors whose lifetimes (closed op intervals) do not overlap
 * may share bytes; and the plan's verification. Part of the compute core:
 * libc only (plan.json in both directions lives in planjson.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "plan.h"
#include "ops.h"

/* numel times the dtype's element size (an op output is float32, or spec
 * v3's int8, uint8, int32 by its op's type rule). */
static int tensor_bytes(const enpu_irtensor *t, uint64_t *out)
{
	uint64_t n, es = enpu_dtype_size(t->dtype);

	if (!es || enpu_shape_numel(&t->shape, &n) < 0 || n > UINT64_MAX / es)
		return -1;
	*out = n * es;
	return 0;
}

void enpu_plan_lifetimes(const enpu_graph *g, int *first, int *last)
{
	for (int i = 0; i < g->n_tensors; i++)
		first[i] = last[i] = -1;
	for (int k = 0; k < g->n_ops; k++) {
		const enpu_irop *op = &g->ops[k];
		for (int j = 0; j < op->n_in; j++)
			last[op->in[j]] = k;
		for (int j = 0; j < op->n_out; j++)
			if (first[op->out[j]] < 0)
				first[op->out[j]] = k;
	}
	for (int i = 0; i < g->n_tensors; i++) {
		if (g->tensors[i].kind != ENPU_TK_INTERMEDIATE)
			continue;
		if (g->tensors[i].is_output && g->n_ops > 0)
			last[i] = g->n_ops - 1;
		if (last[i] < first[i])
			last[i] = first[i];
	}
}

uint64_t enpu_plan_op_scratch_bytes(const enpu_graph *g, int k)
{
	const enpu_irop *op = &g->ops[k];
	enpu_shape in[ENPU_MAX_OP_INPUTS];

	if (!op->def->scratch || op->n_in > ENPU_MAX_OP_INPUTS || op->n_out < 1)
		return 0;
	for (int j = 0; j < op->n_in; j++)
		in[j] = g->tensors[op->in[j]].shape;
	return op->def->scratch(&op->attrs, in, op->n_in, &g->tensors[op->out[0]].shape);
}

void enpu_plan_free(enpu_plan *p)
{
	if (!p)
		return;
	free(p->bufs);
	free(p->tensor_buf);
	free(p->op_scratch);
	memset(p, 0, sizeof(*p));
}

static int overlaps(const enpu_plan_buf *a, const enpu_plan_buf *b)
{
	return a->first_op <= b->last_op && b->first_op <= a->last_op;
}

/* A buffer for every intermediate tensor, with its size and lifetime, and
 * one for every op's scratch. The number of buffers, or -1. */
static int collect_bufs(const enpu_graph *g, enpu_plan *p, const int *first, const int *last,
			enpu_err *e)
{
	int n = 0;

	for (int i = 0; i < g->n_tensors; i++) {
		const enpu_irtensor *t = &g->tensors[i];
		p->tensor_buf[i] = -1;
		if (t->kind != ENPU_TK_INTERMEDIATE)
			continue;
		enpu_plan_buf *b = &p->bufs[n];
		b->tensor = i;
		if (tensor_bytes(t, &b->bytes) < 0)
			return enpu_fail(e, ENPU_E_LIMIT, "plan", NULL,
					 "tensor '%s' is too large to plan", t->name);
		if (first[i] < 0)
			return enpu_fail(e, ENPU_E_INTERNAL, "plan", NULL,
					 "tensor '%s' is never produced", t->name);
		b->first_op = first[i];
		b->last_op = last[i];
		p->tensor_buf[i] = n;
		n++;
	}
	for (int k = 0; k < g->n_ops; k++) {
		uint64_t bytes = enpu_plan_op_scratch_bytes(g, k);
		p->op_scratch[k] = -1;
		if (!bytes)
			continue;
		p->bufs[n] = (enpu_plan_buf){.tensor = -1, .bytes = bytes, .first_op = k, .last_op = k};
		p->op_scratch[k] = n;
		n++;
	}
	return n;
}

int enpu_plan_build(const enpu_graph *g, enpu_plan *p, enpu_err *e)
{
	int *first = NULL, *last = NULL, n, rc;
	const char *strategy;

	memset(p, 0, sizeof(*p));
	if (g->n_tensors <= 0) {
		p->tensor_buf = NULL;
		return 0;
	}
	size_t cap = (size_t)g->n_tensors + (size_t)g->n_ops;
	first = malloc(sizeof(int) * (size_t)g->n_tensors);
	last = malloc(sizeof(int) * (size_t)g->n_tensors);
	p->tensor_buf = malloc(sizeof(int) * (size_t)g->n_tensors);
	p->op_scratch = malloc(sizeof(int) * (size_t)(g->n_ops ? g->n_ops : 1));
	p->bufs = calloc(cap, sizeof(*p->bufs));
	if (!first || !last || !p->tensor_buf || !p->op_scratch || !p->bufs) {
		enpu_fail(e, ENPU_E_NOMEM, "plan", NULL, "cannot allocate the memory plan");
		goto fail;
	}
	p->n_tensors = g->n_tensors;
	p->n_ops = g->n_ops;
	enpu_plan_lifetimes(g, first, last);
	if ((n = collect_bufs(g, p, first, last, e)) < 0)
		goto fail;
	p->n_bufs = n;
	if ((rc = enpu_plan_place(p->bufs, n, &p->arena_bytes, &p->lower_bound, &strategy)) < 0) {
		if (rc == -2)
			enpu_fail(e, ENPU_E_LIMIT, "plan", NULL, "the memory plan overflows 64 bits");
		else
			enpu_fail(e, ENPU_E_NOMEM, "plan", NULL, "cannot allocate the memory plan");
		goto fail;
	}
	snprintf(p->strategy, sizeof p->strategy, "%s", strategy);
	free(first);
	free(last);
	return 0;
fail:
	free(first);
	free(last);
	enpu_plan_free(p);
	return -1;
}

/* What a buffer holds, for errors: the tensor, or "scratch of OP". */
static const char *buf_name(const enpu_graph *g, const enpu_plan_buf *b)
{
	return b->tensor >= 0 ? g->tensors[b->tensor].name : "(an op's scratch)";
}

/* Scratch buffer k: its op's, once, live at that op alone, aligned inside
 * the arena. */
static int verify_scratch(const enpu_graph *g, const enpu_plan *p, int k, const char *label,
			  enpu_err *e)
{
	const enpu_plan_buf *b = &p->bufs[k];
	int op = b->first_op;

	if (!p->op_scratch || op < 0 || op >= g->n_ops || b->last_op != op ||
	    p->op_scratch[op] != k)
		return enpu_fail(e, ENPU_E_ARTIFACT, label, NULL,
				 "buffer %d is scratch of no op, or not its op's one", k);
	/* its size is not checked against this build's kernels: a kernel
	 * takes a planned scratch only when it holds what it needs (else the
	 * heap), so an artifact planned by another version still runs */
	if (b->bytes == 0)
		return enpu_fail(e, ENPU_E_ARTIFACT, label, NULL,
				 "the scratch of op '%s' is empty", g->ops[op].name);
	if (b->offset % ENPU_PLAN_ALIGN || b->offset > p->arena_bytes ||
	    p->arena_bytes - b->offset < b->bytes)
		return enpu_fail(e, ENPU_E_ARTIFACT, label, NULL,
				 "the scratch of op '%s' lies outside the arena or is misaligned",
				 g->ops[op].name);
	return 0;
}

int enpu_plan_verify(const enpu_graph *g, const enpu_plan *p, const char *label,
		     enpu_err *e)
{
	int *first = NULL, *last = NULL, *seen = NULL, rc = -1;

	if (g->n_tensors == 0)
		return 0;
	first = malloc(sizeof(int) * (size_t)g->n_tensors);
	last = malloc(sizeof(int) * (size_t)g->n_tensors);
	seen = calloc((size_t)g->n_tensors, sizeof(int));
	if (!first || !last || !seen) {
		enpu_fail(e, ENPU_E_NOMEM, label, NULL, "cannot verify the memory plan");
		goto out;
	}
	if (p->n_tensors != g->n_tensors) {
		enpu_fail(e, ENPU_E_ARTIFACT, label, NULL, "plan does not match the graph");
		goto out;
	}
	enpu_plan_lifetimes(g, first, last);
	if (p->op_scratch && p->n_ops != g->n_ops) {
		enpu_fail(e, ENPU_E_ARTIFACT, label, NULL, "plan's scratch does not match the graph");
		goto out;
	}
	for (int k = 0; k < p->n_bufs; k++) {
		const enpu_plan_buf *b = &p->bufs[k];
		uint64_t want;
		if (b->tensor == -1) {
			if (verify_scratch(g, p, k, label, e) < 0)
				goto out;
			continue;
		}
		if (b->tensor < 0 || b->tensor >= g->n_tensors ||
		    g->tensors[b->tensor].kind != ENPU_TK_INTERMEDIATE) {
			enpu_fail(e, ENPU_E_ARTIFACT, label, NULL,
				  "buffer %d is not for an intermediate tensor", k);
			goto out;
		}
		const char *nm = g->tensors[b->tensor].name;
		if (seen[b->tensor]++) {
			enpu_fail(e, ENPU_E_ARTIFACT, label, NULL,
				  "tensor '%s' has more than one buffer", nm);
			goto out;
		}
		if (tensor_bytes(&g->tensors[b->tensor], &want) < 0 || want != b->bytes) {
			enpu_fail(e, ENPU_E_ARTIFACT, label, NULL,
				  "buffer of tensor '%s' has the wrong size", nm);
			goto out;
		}
		if (b->offset % ENPU_PLAN_ALIGN || b->offset > p->arena_bytes ||
		    p->arena_bytes - b->offset < b->bytes) {
			enpu_fail(e, ENPU_E_ARTIFACT, label, NULL,
				  "buffer of tensor '%s' lies outside the arena or is misaligned", nm);
			goto out;
		}
		if (b->first_op != first[b->tensor] || b->last_op != last[b->tensor]) {
			enpu_fail(e, ENPU_E_ARTIFACT, label, NULL,
				  "buffer of tensor '%s' has the wrong lifetime [%d, %d], expected [%d, %d]",
				  nm, b->first_op, b->last_op, first[b->tensor], last[b->tensor]);
			goto out;
		}
		if (p->tensor_buf[b->tensor] != k) {
			enpu_fail(e, ENPU_E_ARTIFACT, label, NULL, "plan index of tensor '%s' is wrong", nm);
			goto out;
		}
	}
	for (int i = 0; i < g->n_tensors; i++)
		if (g->tensors[i].kind == ENPU_TK_INTERMEDIATE && !seen[i]) {
			enpu_fail(e, ENPU_E_ARTIFACT, label, NULL,
				  "tensor '%s' has no buffer", g->tensors[i].name);
			goto out;
		}
	for (int k = 0; p->op_scratch && k < g->n_ops; k++)
		if (p->op_scratch[k] >= 0 && (p->op_scratch[k] >= p->n_bufs ||
					      p->bufs[p->op_scratch[k]].tensor != -1 ||
					      p->bufs[p->op_scratch[k]].first_op != k)) {
			enpu_fail(e, ENPU_E_ARTIFACT, label, NULL,
				  "plan index of op '%s''s scratch is wrong", g->ops[k].name);
			goto out;
		}
	/* Quadratic, but plans are small next to the kernels' work. */
	for (int a = 0; a < p->n_bufs; a++)
		for (int b = a + 1; b < p->n_bufs; b++) {
			const enpu_plan_buf *x = &p->bufs[a], *y = &p->bufs[b];
			if (!overlaps(x, y) || x->bytes == 0 || y->bytes == 0)
				continue;
			if (x->offset < y->offset + y->bytes && y->offset < x->offset + x->bytes) {
				enpu_fail(e, ENPU_E_ARTIFACT, label, NULL,
					  "buffers of live tensors '%s' and '%s' overlap",
					  buf_name(g, x), buf_name(g, y));
				goto out;
			}
		}
	rc = 0;
out:
	free(first); free(last); free(seen);
	return rc;
}

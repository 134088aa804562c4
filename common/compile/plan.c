/* plan.c: the memory planner. Every intermediate tensor gets an offset in
 * one arena; tensors whose lifetimes (closed op intervals) do not overlap
 * may share bytes; and the plan's verification. Part of the compute core:
 * libc only (plan.json in both directions lives in planjson.c). */
#include <stdlib.h>
#include <string.h>
#include "plan.h"

static int tensor_bytes(const enpu_irtensor *t, uint64_t *out)
{
	uint64_t n;

	if (enpu_shape_numel(&t->shape, &n) < 0 || n > UINT64_MAX / sizeof(float))
		return -1;
	*out = n * sizeof(float);
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

void enpu_plan_free(enpu_plan *p)
{
	if (!p)
		return;
	free(p->bufs);
	free(p->tensor_buf);
	memset(p, 0, sizeof(*p));
}

static int overlaps(const enpu_plan_buf *a, const enpu_plan_buf *b)
{
	return a->first_op <= b->last_op && b->first_op <= a->last_op;
}

static int align_up(uint64_t x, uint64_t *out)
{
	if (x > UINT64_MAX - (ENPU_PLAN_ALIGN - 1))
		return -1;
	*out = (x + ENPU_PLAN_ALIGN - 1) & ~(uint64_t)(ENPU_PLAN_ALIGN - 1);
	return 0;
}

/* Sort state for qsort (no globals: indices carry what they need). */
typedef struct order_ent { uint64_t key; int idx; } order_ent;

static int by_size_desc(const void *x, const void *y)
{
	const order_ent *a = x, *b = y;
	if (a->key != b->key)
		return a->key > b->key ? -1 : 1;
	return (a->idx > b->idx) - (a->idx < b->idx);
}

static int by_offset(const void *x, const void *y)
{
	const order_ent *a = x, *b = y;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return (a->idx > b->idx) - (a->idx < b->idx);
}

/* A buffer for every intermediate tensor, with its size and lifetime;
 * order[] gets (bytes, buffer) for each. The number of buffers, or -1. */
static int collect_bufs(const enpu_graph *g, enpu_plan *p, const int *first, const int *last,
			order_ent *order, enpu_err *e)
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
		order[n].key = b->bytes;
		order[n].idx = n;
		n++;
	}
	return n;
}

/* Buffer b at the lowest aligned offset free of the placed buffers that
 * live at the same time (live: scratch). -1 when it overflows 64 bits. */
static int place(enpu_plan *p, enpu_plan_buf *b, const int *placed, int n_placed,
		 order_ent *live)
{
	int n_live = 0;
	uint64_t cand = 0, end;

	for (int j = 0; j < n_placed; j++) {
		const enpu_plan_buf *o = &p->bufs[placed[j]];
		if (overlaps(b, o) && o->bytes > 0) {
			live[n_live].key = o->offset;
			live[n_live].idx = placed[j];
			n_live++;
		}
	}
	qsort(live, (size_t)n_live, sizeof(*live), by_offset);
	for (int j = 0; j < n_live && b->bytes > 0; j++) {
		const enpu_plan_buf *o = &p->bufs[live[j].idx];
		if (cand <= o->offset && o->offset - cand >= b->bytes)
			break;   /* fits in the gap before o */
		if (o->offset > UINT64_MAX - o->bytes || align_up(o->offset + o->bytes, &end) < 0)
			return -1;
		if (end > cand)
			cand = end;
	}
	if (cand > UINT64_MAX - b->bytes)
		return -1;
	b->offset = cand;
	if (cand + b->bytes > p->arena_bytes)
		p->arena_bytes = cand + b->bytes;
	return 0;
}

int enpu_plan_build(const enpu_graph *g, enpu_plan *p, enpu_err *e)
{
	int *first = NULL, *last = NULL, *placed = NULL, n_placed = 0;
	order_ent *order = NULL, *live = NULL;
	int n;

	memset(p, 0, sizeof(*p));
	if (g->n_tensors <= 0) {
		p->tensor_buf = NULL;
		return 0;
	}
	first = malloc(sizeof(int) * (size_t)g->n_tensors);
	last = malloc(sizeof(int) * (size_t)g->n_tensors);
	p->tensor_buf = malloc(sizeof(int) * (size_t)g->n_tensors);
	p->bufs = calloc((size_t)g->n_tensors, sizeof(*p->bufs));
	order = calloc((size_t)g->n_tensors, sizeof(*order));
	live = calloc((size_t)g->n_tensors, sizeof(*live));
	placed = calloc((size_t)g->n_tensors, sizeof(*placed));
	if (!first || !last || !p->tensor_buf || !p->bufs || !order || !live || !placed) {
		enpu_fail(e, ENPU_E_NOMEM, "plan", NULL, "cannot allocate the memory plan");
		goto fail;
	}
	p->n_tensors = g->n_tensors;
	enpu_plan_lifetimes(g, first, last);
	if ((n = collect_bufs(g, p, first, last, order, e)) < 0)
		goto fail;
	p->n_bufs = n;
	qsort(order, (size_t)n, sizeof(*order), by_size_desc);
	for (int k = 0; k < n; k++) {
		if (place(p, &p->bufs[order[k].idx], placed, n_placed, live) < 0)
			goto too_big;
		placed[n_placed++] = order[k].idx;
	}
	if (align_up(p->arena_bytes, &p->arena_bytes) < 0)
		goto too_big;
	free(first); free(last); free(order); free(live); free(placed);
	return 0;
too_big:
	enpu_fail(e, ENPU_E_LIMIT, "plan", NULL, "the memory plan overflows 64 bits");
fail:
	free(first); free(last); free(order); free(live); free(placed);
	enpu_plan_free(p);
	return -1;
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
	for (int k = 0; k < p->n_bufs; k++) {
		const enpu_plan_buf *b = &p->bufs[k];
		uint64_t want;
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
	/* Quadratic, but plans are small next to the kernels' work. */
	for (int a = 0; a < p->n_bufs; a++)
		for (int b = a + 1; b < p->n_bufs; b++) {
			const enpu_plan_buf *x = &p->bufs[a], *y = &p->bufs[b];
			if (!overlaps(x, y) || x->bytes == 0 || y->bytes == 0)
				continue;
			if (x->offset < y->offset + y->bytes && y->offset < x->offset + x->bytes) {
				enpu_fail(e, ENPU_E_ARTIFACT, label, NULL,
					  "buffers of live tensors '%s' and '%s' overlap",
					  g->tensors[x->tensor].name, g->tensors[y->tensor].name);
				goto out;
			}
		}
	rc = 0;
out:
	free(first); free(last); free(seen);
	return rc;
}

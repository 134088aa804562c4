/* planplace.c: where the memory planner puts each buffer (plan.h,
 * enpu_plan_place). Part of the compute core: libc only.
 *
 * A buffer has a size and a closed lifetime [first_op, last_op]; two
 * buffers whose lifetimes meet must not share bytes; offsets are
 * ENPU_PLAN_ALIGN-aligned; the arena is the aligned end of the highest
 * buffer. The lower bound is the most any step needs: the largest sum,
 * over the buffers live at one step, of their sizes rounded up to the
 * alignment (every buffer but the top one is followed by an aligned
 * start, and the arena's end is aligned). Strategies, each placing
 * buffers one by one at the lowest aligned offset where they fit (first
 * fit against the placed buffers they meet):
 *   greedy-size     largest first
 *   greedy-breadth  the steps that need most first, each step's buffers
 *                   largest first (TensorFlow Lite Micro's breadth-first
 *                   greedy)
 *   greedy-first    by first use, then largest first
 *   exact           (at most ENPU_PLAN_EXACT_MAX buffers) every order,
 *                   depth first, cut where it can no longer beat the best;
 *                   first fit in the order of the offsets of an optimal
 *                   placement reproduces it or better, so this finds the
 *                   optimum within ENPU_PLAN_EXACT_NODES steps
 * The smallest arena wins (ties: the earlier strategy); the search stops
 * early when a strategy reaches the lower bound. */
#include <stdlib.h>
#include <string.h>
#include "plan.h"

static int meet(const enpu_plan_buf *a, const enpu_plan_buf *b)
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

int enpu_plan_lower_bound(const enpu_plan_buf *b, int n, uint64_t *lower)
{
	int steps = 0;
	uint64_t *need, best = 0, r;

	for (int i = 0; i < n; i++)
		if (b[i].last_op + 1 > steps)
			steps = b[i].last_op + 1;
	if (!(need = calloc((size_t)(steps ? steps : 1), sizeof(*need))))
		return -1;
	for (int i = 0; i < n; i++) {
		if (align_up(b[i].bytes, &r) < 0) {
			free(need);
			return -2;
		}
		for (int k = b[i].first_op; k <= b[i].last_op; k++) {
			if (need[k] > UINT64_MAX - r) {
				free(need);
				return -2;
			}
			need[k] += r;
		}
	}
	for (int k = 0; k < steps; k++)
		best = need[k] > best ? need[k] : best;
	free(need);
	*lower = best;
	return 0;
}

/* ---- first fit ---------------------------------------------------------- */

typedef struct ent {
	uint64_t key;
	int idx;
} ent;

static int by_key(const void *x, const void *y)
{
	const ent *a = x, *b = y;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return (a->idx > b->idx) - (a->idx < b->idx);
}

/* Buffer i at the lowest aligned offset clear of the placed buffers it
 * meets (placed[0 .. np)); live is room for np entries. Its end, or
 * UINT64_MAX on overflow. */
static uint64_t fit(const enpu_plan_buf *b, int i, const int *placed, int np, uint64_t *off,
		    ent *live)
{
	int nl = 0;
	uint64_t cand = 0, end;

	for (int j = 0; j < np; j++)
		if (b[placed[j]].bytes > 0 && meet(&b[i], &b[placed[j]]))
			live[nl++] = (ent){off[placed[j]], placed[j]};
	qsort(live, (size_t)nl, sizeof(*live), by_key);
	for (int j = 0; j < nl && b[i].bytes > 0; j++) {
		const uint64_t o = live[j].key, sz = b[live[j].idx].bytes;
		if (cand <= o && o - cand >= b[i].bytes)
			break;   /* fits in the gap before it */
		if (o > UINT64_MAX - sz || align_up(o + sz, &end) < 0)
			return UINT64_MAX;
		cand = end > cand ? end : cand;
	}
	if (cand > UINT64_MAX - b[i].bytes)
		return UINT64_MAX;
	off[i] = cand;
	return cand + b[i].bytes;
}

/* First fit in `order`: offsets into off, the (unaligned) top into *top.
 * 0, or -1 on overflow. */
static int first_fit(const enpu_plan_buf *b, int n, const int *order, uint64_t *off,
		     uint64_t *top, ent *live)
{
	*top = 0;
	for (int k = 0; k < n; k++) {
		uint64_t e = fit(b, order[k], order, k, off, live);
		if (e == UINT64_MAX)
			return -1;
		*top = e > *top ? e : *top;
	}
	return 0;
}

/* ---- the orders ---------------------------------------------------------- */

typedef struct sort3 {
	uint64_t a, b;
	int idx;
} sort3;

/* ascending a, then descending b, then index */
static int by_a_then_b_desc(const void *x, const void *y)
{
	const sort3 *p = x, *q = y;

	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	if (p->b != q->b)
		return p->b > q->b ? -1 : 1;
	return (p->idx > q->idx) - (p->idx < q->idx);
}

static void order_size(const enpu_plan_buf *b, int n, int *order, sort3 *s)
{
	for (int i = 0; i < n; i++)
		s[i] = (sort3){0, b[i].bytes, i};
	qsort(s, (size_t)n, sizeof(*s), by_a_then_b_desc);
	for (int i = 0; i < n; i++)
		order[i] = s[i].idx;
}

static void order_first(const enpu_plan_buf *b, int n, int *order, sort3 *s)
{
	for (int i = 0; i < n; i++)
		s[i] = (sort3){(uint64_t)b[i].first_op, b[i].bytes, i};
	qsort(s, (size_t)n, sizeof(*s), by_a_then_b_desc);
	for (int i = 0; i < n; i++)
		order[i] = s[i].idx;
}

/* the steps by need (descending); each step's unplaced buffers by size */
static int order_breadth(const enpu_plan_buf *b, int n, int *order, sort3 *s)
{
	int steps = 0, m = 0, *taken;
	uint64_t *need;
	sort3 *st;

	for (int i = 0; i < n; i++)
		steps = b[i].last_op + 1 > steps ? b[i].last_op + 1 : steps;
	need = calloc((size_t)(steps ? steps : 1), sizeof(*need));
	st = calloc((size_t)(steps ? steps : 1), sizeof(*st));
	taken = calloc((size_t)(n ? n : 1), sizeof(*taken));
	if (!need || !st || !taken) {
		free(need), free(st), free(taken);
		return -1;
	}
	for (int i = 0; i < n; i++)
		for (int k = b[i].first_op; k <= b[i].last_op; k++)
			need[k] += b[i].bytes;   /* sizes were checked by the lower bound */
	for (int k = 0; k < steps; k++)
		st[k] = (sort3){UINT64_MAX - need[k], 0, k};
	qsort(st, (size_t)steps, sizeof(*st), by_a_then_b_desc);
	for (int t = 0; t < steps; t++) {
		int k = st[t].idx, c = 0;
		for (int i = 0; i < n; i++)
			if (!taken[i] && b[i].first_op <= k && k <= b[i].last_op)
				s[c++] = (sort3){0, b[i].bytes, i};
		qsort(s, (size_t)c, sizeof(*s), by_a_then_b_desc);
		for (int j = 0; j < c; j++)
			taken[s[j].idx] = 1, order[m++] = s[j].idx;
	}
	free(need), free(st), free(taken);
	return 0;
}

/* ---- exact search ------------------------------------------------------ */

typedef struct search {
	const enpu_plan_buf *b;
	int n;
	int *order, *used;
	uint64_t *off, *best_off, best, lower;
	long nodes;
	ent *live;
} search;

static void dfs(search *s, int depth, uint64_t top)
{
	uint64_t atop;

	if (align_up(top, &atop) < 0 || atop >= s->best || s->best == s->lower)
		return;
	if (depth == s->n) {
		s->best = atop;
		memcpy(s->best_off, s->off, sizeof(*s->off) * (size_t)s->n);
		return;
	}
	for (int i = 0; i < s->n; i++) {
		if (s->used[i] || ++s->nodes > ENPU_PLAN_EXACT_NODES)
			continue;
		uint64_t e = fit(s->b, i, s->order, depth, s->off, s->live);
		if (e == UINT64_MAX)
			continue;
		s->used[i] = 1;
		s->order[depth] = i;
		dfs(s, depth + 1, e > top ? e : top);
		s->used[i] = 0;
	}
}

/* ---- the choice ---------------------------------------------------------- */

int enpu_plan_place(enpu_plan_buf *b, int n, uint64_t *arena, uint64_t *lower,
		    const char **strategy)
{
	static const char *const names[] = {"greedy-size", "greedy-breadth", "greedy-first"};
	int *order = malloc(sizeof(int) * (size_t)(n ? n : 1));
	int *used = calloc((size_t)(n ? n : 1), sizeof(int));
	uint64_t *off = malloc(sizeof(uint64_t) * (size_t)(n ? n : 1));
	uint64_t *best_off = malloc(sizeof(uint64_t) * (size_t)(n ? n : 1));
	sort3 *s3 = malloc(sizeof(sort3) * (size_t)(n ? n : 1));
	ent *live = malloc(sizeof(ent) * (size_t)(n ? n : 1));
	uint64_t best = UINT64_MAX, top, atop;
	int rc = -1, lb;

	*strategy = names[0];
	if (!order || !used || !off || !best_off || !s3 || !live)
		goto out;
	if ((lb = enpu_plan_lower_bound(b, n, lower)) < 0) {
		rc = lb;
		goto out;
	}
	/* the greedy orders; past ENPU_PLAN_GREEDY_MAX buffers the first only
	 * (each is quadratic in the buffers) */
	for (int st = 0; st < 3 && best > *lower && (st == 0 || n <= ENPU_PLAN_GREEDY_MAX); st++) {
		if (st == 0)
			order_size(b, n, order, s3);
		else if (st == 1 && order_breadth(b, n, order, s3) < 0)
			goto out;
		else if (st == 2)
			order_first(b, n, order, s3);
		if (first_fit(b, n, order, off, &top, live) < 0 || align_up(top, &atop) < 0) {
			rc = -2;
			goto out;
		}
		if (atop < best) {
			best = atop;
			*strategy = names[st];
			memcpy(best_off, off, sizeof(*off) * (size_t)n);
		}
	}
	if (best > *lower && n <= ENPU_PLAN_EXACT_MAX) {
		search s = {.b = b, .n = n, .order = order, .used = used, .off = off,
			    .best_off = best_off, .best = best, .lower = *lower, .live = live};
		dfs(&s, 0, 0);
		if (s.best < best) {
			best = s.best;
			*strategy = "exact";
		}
	}
	for (int i = 0; i < n; i++)
		b[i].offset = best_off[i];
	*arena = n ? best : 0;
	rc = 0;
out:
	free(order), free(used), free(off), free(best_off), free(s3), free(live);
	return rc;
}

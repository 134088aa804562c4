/* jobs_queue.c: the order-statistic treap and the deadline heap of
 * jobs_queue.h. The treap keeps, in every node, the size of its subtree
 * and how many nodes of each kind it holds, so that a rank (a queue
 * position, and the backends of the jobs ahead for the ETA) and the first
 * node of some kinds (a board taking work) descend one path. Priorities
 * come from a xorshift generator: the keys are the table's own numbers,
 * never a client's, so no input can unbalance the tree. */
#include <stdlib.h>
#include <string.h>
#include "jobs_queue.h"

static int kind_of(int kind)
{
	return kind >= 0 && kind < JQ_KINDS - 1 ? kind : JQ_KINDS - 1;
}

static int size_of(const jq_node *t)
{
	return t ? t->size : 0;
}

/* A node's aggregates from its children's. */
static void pull(jq_node *t)
{
	int k;

	t->size = 1 + size_of(t->l) + size_of(t->r);
	for (k = 0; k < JQ_KINDS; k++)
		t->cnt[k] = (t->l ? t->l->cnt[k] : 0) + (t->r ? t->r->cnt[k] : 0);
	t->cnt[t->kind]++;
}

/* 1 when subtree t holds a node of one of the kinds. */
static int holds(const jq_node *t, unsigned kinds)
{
	int k;

	if (!t)
		return 0;
	for (k = 0; k < JQ_KINDS && k < 32; k++)
		if ((kinds & (1u << k)) && t->cnt[k] > 0)
			return 1;
	return 0;
}

/* t into l (keys < key) and r (keys >= key). */
static void split(jq_node *t, int64_t key, jq_node **l, jq_node **r)
{
	if (!t) {
		*l = *r = NULL;
		return;
	}
	if (t->key < key) {
		split(t->r, key, &t->r, r);
		*l = t;
	} else {
		split(t->l, key, l, &t->l);
		*r = t;
	}
	pull(t);
}

/* Every key of a is smaller than every key of b. */
static jq_node *merge(jq_node *a, jq_node *b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	if (a->pri > b->pri) {
		a->r = merge(a->r, b);
		pull(a);
		return a;
	}
	b->l = merge(a, b->l);
	pull(b);
	return b;
}

static jq_node *insert(jq_node *t, jq_node *n)
{
	if (!t)
		return n;
	if (n->pri > t->pri) {
		split(t, n->key, &n->l, &n->r);
		pull(n);
		return n;
	}
	if (n->key < t->key)
		t->l = insert(t->l, n);
	else
		t->r = insert(t->r, n);
	pull(t);
	return t;
}

static jq_node *erase(jq_node *t, const jq_node *n)
{
	if (!t)
		return NULL;
	if (t == n)
		return merge(t->l, t->r);
	if (n->key < t->key)
		t->l = erase(t->l, n);
	else
		t->r = erase(t->r, n);
	pull(t);
	return t;
}

void jq_init(jq *q, uint64_t seed)
{
	q->root = NULL;
	q->rng = seed ? seed : 0x9e3779b97f4a7c15ull;
}

void jq_insert(jq *q, jq_node *n)
{
	q->rng ^= q->rng << 13;
	q->rng ^= q->rng >> 7;
	q->rng ^= q->rng << 17;
	n->pri = (uint32_t)(q->rng >> 32);
	n->kind = kind_of(n->kind);
	n->l = n->r = NULL;
	pull(n);
	q->root = insert(q->root, n);
}

void jq_remove(jq *q, jq_node *n)
{
	q->root = erase(q->root, n);
	n->l = n->r = NULL;
}

jq_node *jq_first(const jq *q)
{
	jq_node *t = q->root;

	while (t && t->l)
		t = t->l;
	return t;
}

jq_node *jq_first_of(const jq *q, unsigned kinds)
{
	jq_node *t = q->root;

	if (!holds(t, kinds))
		return NULL;
	for (;;) {
		if (holds(t->l, kinds))
			t = t->l;
		else if (kinds & (1u << t->kind))
			return t;
		else
			t = t->r;   /* holds one, since t did */
	}
}

int jq_rank(const jq *q, int64_t key, int ahead[JQ_KINDS])
{
	const jq_node *t = q->root;
	int k, rank = 0;

	if (ahead)
		memset(ahead, 0, sizeof(int) * JQ_KINDS);
	while (t) {
		if (key <= t->key) {
			t = t->l;
			continue;
		}
		rank += size_of(t->l) + 1;
		if (ahead) {
			for (k = 0; t->l && k < JQ_KINDS; k++)
				ahead[k] += t->l->cnt[k];
			ahead[t->kind]++;
		}
		t = t->r;
	}
	return rank;
}

int jq_count(const jq *q)
{
	return size_of(q->root);
}

int jq_count_of(const jq *q, unsigned kinds)
{
	int k, n = 0;

	for (k = 0; q->root && k < JQ_KINDS && k < 32; k++)
		if (kinds & (1u << k))
			n += q->root->cnt[k];
	return n;
}

static void each(const jq_node *t, void (*fn)(void *, void *), void *arg)
{
	while (t) {
		each(t->l, fn, arg);
		fn(t->item, arg);
		t = t->r;
	}
}

void jq_foreach(const jq *q, void (*fn)(void *item, void *arg), void *arg)
{
	each(q->root, fn, arg);
}

/* ---- the heap ------------------------------------------------------------------ */

int jheap_reserve(jheap *h, int n)
{
	jheap_ent *na;
	int ncap;

	if (n <= h->cap)
		return 0;
	ncap = h->cap ? h->cap : 64;
	while (ncap < n)
		ncap *= 2;
	na = realloc(h->a, (size_t)ncap * sizeof *na);
	if (!na)
		return -1;
	h->a = na;
	h->cap = ncap;
	return 0;
}

static void place(jheap *h, int i, jheap_ent e)
{
	h->a[i] = e;
	*e.pos = i;
}

static void sift_up(jheap *h, int i)
{
	jheap_ent e = h->a[i];

	while (i > 0 && e.key < h->a[(i - 1) / 2].key) {
		place(h, i, h->a[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	place(h, i, e);
}

static void sift_down(jheap *h, int i)
{
	jheap_ent e = h->a[i];

	for (;;) {
		int c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->a[c + 1].key < h->a[c].key)
			c++;
		if (!(h->a[c].key < e.key))
			break;
		place(h, i, h->a[c]);
		i = c;
	}
	place(h, i, e);
}

int jheap_push(jheap *h, double key, void *item, int *pos)
{
	jheap_ent e = {key, item, pos};

	if (h->n >= h->cap && jheap_reserve(h, h->n + 1) != 0)
		return -1;
	h->a[h->n++] = e;
	sift_up(h, h->n - 1);
	return 0;
}

const jheap_ent *jheap_top(const jheap *h)
{
	return h->n > 0 ? &h->a[0] : NULL;
}

void jheap_remove(jheap *h, int i)
{
	int *gone;

	if (i < 0 || i >= h->n)
		return;
	gone = h->a[i].pos;
	h->n--;
	if (i < h->n) {   /* the last entry fills the hole, then finds its place */
		place(h, i, h->a[h->n]);
		if (i > 0 && h->a[i].key < h->a[(i - 1) / 2].key)
			sift_up(h, i);
		else
			sift_down(h, i);
	}
	*gone = -1;
}

void jheap_free(jheap *h)
{
	free(h->a);
	h->a = NULL;
	h->n = h->cap = 0;
}

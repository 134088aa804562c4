/* jobs_queue.h: the two structures under the job table's queues
 * (jobs_queue.c), kept free of the table so that tests drive them alone:
 *
 * jq, an order-statistic treap: items ordered by a unique 64-bit key, each
 * of a kind (a backend's registry index; JQ_KINDS - 1 = unknown). Insert,
 * remove, the first item (of some kinds), and the rank of a key (how many
 * items come before it, in all and of each kind) take O(log n) expected.
 * The caller owns the nodes (fills key, kind and item, then inserts):
 * insertion never allocates, so it cannot fail.
 *
 * jheap, a binary min-heap of items by a double (a deadline), each item
 * knowing its place (an int the heap keeps up to date; -1 when out):
 * push, pop and removal from the middle take O(log n). Space reserved
 * ahead (jheap_reserve) makes a push that cannot fail. */
#ifndef SRV_JOBS_QUEUE_H
#define SRV_JOBS_QUEUE_H

#include <stdint.h>
#include "ops.h"

#define JQ_KINDS (ENPU_BACKENDS_MAX + 1)   /* the backends, and one for "unknown" */

typedef struct jq_node {
	int64_t key;               /* unique in its treap; smaller comes first */
	int kind;                  /* 0 .. JQ_KINDS - 1 */
	void *item;
	/* the treap's own */
	uint32_t pri;
	int size;                  /* nodes in this subtree */
	struct jq_node *l, *r;
	int cnt[JQ_KINDS];         /* nodes of each kind in this subtree */
} jq_node;

typedef struct jq {
	jq_node *root;
	uint64_t rng;              /* xorshift state of the node priorities */
} jq;

void jq_init(jq *q, uint64_t seed);
/* Insert n (key, kind and item filled; kind out of range counts as unknown). */
void jq_insert(jq *q, jq_node *n);
/* Take n out (it must be in q); the node is the caller's again. */
void jq_remove(jq *q, jq_node *n);
/* The first node, or the first whose kind's bit (1u << kind) is in kinds; NULL if none. */
jq_node *jq_first(const jq *q);
jq_node *jq_first_of(const jq *q, unsigned kinds);
/* How many nodes have a smaller key than key; ahead (NULL = not wanted)
 * gets how many of each kind. */
int jq_rank(const jq *q, int64_t key, int ahead[JQ_KINDS]);
/* Nodes in all, and of the kinds whose bits are in kinds. */
int jq_count(const jq *q);
int jq_count_of(const jq *q, unsigned kinds);
/* fn(item, arg) on every node in order (recursion depth O(log n) expected). */
void jq_foreach(const jq *q, void (*fn)(void *item, void *arg), void *arg);

typedef struct jheap_ent {
	double key;
	void *item;
	int *pos;                  /* the item's place in the heap, kept up to date */
} jheap_ent;

typedef struct jheap {
	jheap_ent *a;
	int n, cap;
} jheap;

/* Room for at least n entries: 0, or -1 when out of memory. */
int jheap_reserve(jheap *h, int n);
/* Push; *pos is set. 0, or -1 when out of memory (never after a
 * jheap_reserve that made room). */
int jheap_push(jheap *h, double key, void *item, int *pos);
/* The smallest key's entry, NULL when empty. */
const jheap_ent *jheap_top(const jheap *h);
/* Take out the entry at place i (its *pos becomes -1). */
void jheap_remove(jheap *h, int i);
void jheap_free(jheap *h);

#endif

/* jobs_index.c: the job table's indexes, so that no cost grows with the
 * table: a hash of the ids (find in O(1)), every job in order of
 * submission (the list's order, newest first), the two queues (an
 * order-statistic treap each, jobs_queue.c: enqueue, dequeue, cancel from
 * the middle and a position in O(log n)) with their deadline heaps, the
 * queued board jobs of each backend in the order they were queued (a
 * board's absence fails the oldest first), the running jobs, and the
 * finished ones in the order they ended, so that retention (--job-ttl,
 * --job-history) pops from one end. All under the table's lock. */
#include <stdlib.h>
#include <string.h>
#include "jobs_int.h"

#define HASH_MIN 1024

unsigned jobs_hash_id(const char *id)
{
	uint64_t h = 0xcbf29ce484222325ull;   /* FNV-1a */

	for (; *id; id++) {
		h ^= (unsigned char)*id;
		h *= 0x100000001b3ull;
	}
	return (unsigned)(h ^ (h >> 32));
}

int jobs_index_init(srv_jobs *j)
{
	j->hash = calloc(HASH_MIN, sizeof *j->hash);
	if (!j->hash)
		return -1;
	j->hmask = HASH_MIN - 1;
	jq_init(&j->lq, 0x2545f4914f6cdd1dull);
	jq_init(&j->rq, 0x9e3779b97f4a7c15ull);
	return 0;
}

void jobs_index_free(srv_jobs *j)
{
	job *jb = j->oldest, *next;

	for (; jb; jb = next) {
		next = jb->anext;
		jobs_job_free(jb);
	}
	j->oldest = j->newest = NULL;
	j->n_all = 0;
	free(j->hash);
	j->hash = NULL;
	jobs_uses_free(j);
	jheap_free(&j->lheap);
	jheap_free(&j->rheap);
}

job *jobs_find(srv_jobs *j, const char *id)
{
	job *jb;

	if (!j->hash)
		return NULL;
	for (jb = j->hash[jobs_hash_id(id) & j->hmask]; jb; jb = jb->hnext)
		if (!strcmp(jb->id, id))
			return jb;
	return NULL;
}

/* Twice the buckets once there are more jobs than buckets; a failed
 * growth keeps the table as it is (longer chains, still right). */
static void hash_grow(srv_jobs *j)
{
	unsigned n = (j->hmask + 1) * 2, i;
	job **nh;

	if (n == 0 || (size_t)j->n_all <= (size_t)j->hmask + 1)
		return;
	nh = calloc(n, sizeof *nh);
	if (!nh)
		return;
	for (i = 0; i <= j->hmask; i++) {
		job *jb = j->hash[i], *next;
		for (; jb; jb = next) {
			unsigned b = jobs_hash_id(jb->id) & (n - 1);
			next = jb->hnext;
			jb->hnext = nh[b];
			nh[b] = jb;
		}
	}
	free(j->hash);
	j->hash = nh;
	j->hmask = n - 1;
}

int jobs_add(srv_jobs *j, job *jb)
{
	unsigned b;
	jheap *h = jb->remote ? &j->rheap : &j->lheap;

	/* room for every unfinished job of this kind in its heap now, so
	 * that putting a running one back (a board fault) cannot fail */
	if (jheap_reserve(h, h->n + j->run.n + 1) != 0)
		return -1;
	jb->hpos = -1;
	jb->order = j->next_order + 1;
	if (jobs_enqueue(j, jb, 0) != 0)   /* cannot fail after the above; be safe */
		return -1;
	j->next_order++;
	b = jobs_hash_id(jb->id) & j->hmask;
	jb->hnext = j->hash[b];
	j->hash[b] = jb;
	jb->aprev = j->newest;
	jb->anext = NULL;
	if (j->newest)
		j->newest->anext = jb;
	else
		j->oldest = jb;
	j->newest = jb;
	j->n_all++;
	hash_grow(j);
	jobs_uses_job(j, jb, jb->input, 1);
	return 0;
}

/* Take jb out of the hash and the submission list; free it, or (dead non-NULL) put it on *dead
 * for jobs_free_dead once the lock is let go. */
static void drop_into(srv_jobs *j, job *jb, job **dead)
{
	job **pp = &j->hash[jobs_hash_id(jb->id) & j->hmask];

	for (; *pp; pp = &(*pp)->hnext)
		if (*pp == jb) {
			*pp = jb->hnext;
			break;
		}
	if (jb->aprev)
		jb->aprev->anext = jb->anext;
	else
		j->oldest = jb->anext;
	if (jb->anext)
		jb->anext->aprev = jb->aprev;
	else
		j->newest = jb->aprev;
	j->n_all--;
	jobs_uses_job(j, jb, jb->input, -1);
	if (jb->state == S_SUCCEEDED) {
		jobs_uses_job(j, jb, jb->result, -1);
		jobs_uses_job(j, jb, jb->report, -1);
	}
	jobs_unqueue(j, jb);
	jobs_list_remove(jb);
	if (dead) {
		jb->hnext = *dead;   /* out of the hash: its link is free */
		*dead = jb;
	} else {
		jobs_job_free(jb);
	}
}

static void drop(srv_jobs *j, job *jb)
{
	drop_into(j, jb, NULL);
}

void jobs_free_dead(job *dead)
{
	while (dead) {
		job *next = dead->hnext;

		jobs_job_free(dead);
		dead = next;
	}
}

void jobs_list_push(jlist *l, job *jb)
{
	jobs_list_remove(jb);
	jb->lnext = NULL;
	jb->lprev = l->tail;
	if (l->tail)
		l->tail->lnext = jb;
	else
		l->head = jb;
	l->tail = jb;
	l->n++;
	jb->list = l;
}

void jobs_list_remove(job *jb)
{
	jlist *l = jb->list;

	if (!l)
		return;
	if (jb->lprev)
		jb->lprev->lnext = jb->lnext;
	else
		l->head = jb->lnext;
	if (jb->lnext)
		jb->lnext->lprev = jb->lprev;
	else
		l->tail = jb->lprev;
	l->n--;
	jb->lnext = jb->lprev = NULL;
	jb->list = NULL;
}

/* The sort key: a higher priority first, then submission; a job put
 * back at the head comes before all (the last put back first). */
static int64_t key_of(srv_jobs *j, const job *jb, int at_head)
{
	if (at_head)
		return --j->next_head;
	return ((int64_t)(SRV_PRIO_HIGH - jb->prio) << 50) + (int64_t)jb->order;
}

int jobs_enqueue(srv_jobs *j, job *jb, int at_head)
{
	jheap *h = jb->remote ? &j->rheap : &j->lheap;

	if (jb->inq || !jb->qn)
		return jb->inq ? 0 : -1;
	if (jheap_push(h, jb->deadline, jb, &jb->hpos) != 0)
		return -1;
	jb->qn->key = key_of(j, jb, at_head);
	jb->qn->kind = jb->bk;
	jb->qn->item = jb;
	jq_insert(jb->remote ? &j->rq : &j->lq, jb->qn);
	jb->inq = 1;
	jb->t_queued = srv_now();
	if (jb->remote) {
		j->rqueued++;
		if (jb->bk >= 0 && jb->bk < ENPU_BACKENDS_MAX)
			jobs_list_push(&j->bwait[jb->bk], jb);
	} else {
		j->queued++;
	}
	return 0;
}

void jobs_unqueue(srv_jobs *j, job *jb)
{
	if (!jb->inq)
		return;
	jq_remove(jb->remote ? &j->rq : &j->lq, jb->qn);
	jheap_remove(jb->remote ? &j->rheap : &j->lheap, jb->hpos);
	jb->inq = 0;
	if (jb->remote) {
		j->rqueued--;
		jobs_list_remove(jb);
	} else {
		j->queued--;
	}
}

int jobs_position(const srv_jobs *j, const job *jb, int ahead[JQ_KINDS])
{
	if (!jb->inq)
		return 0;
	return jq_rank(jb->remote ? &j->rq : &j->lq, jb->qn->key, ahead) + 1;
}

/* 1 when the oldest ended job is past the TTL or the history bound. */
static int due(const srv_jobs *j, double now)
{
	const job *jb = j->fin.head;

	return jb && (j->fin.n > j->history || now - jb->t_finished >= j->ttl_s);
}

int jobs_prune_into(srv_jobs *j, int max, job **dead)
{
	double now = srv_now();

	for (; max > 0 && due(j, now); max--) {
		job *jb = j->fin.head;

		if (jb->watchers > 0 || jb->pins > 0) {   /* stays until let go */
			jobs_list_remove(jb);
			jb->doomed = 1;
			continue;
		}
		drop_into(j, jb, dead);
	}
	return due(j, now);
}

int jobs_prune(srv_jobs *j, int max)
{
	return jobs_prune_into(j, max, NULL);
}

void jobs_let_go(srv_jobs *j, job *jb)
{
	if (jb->doomed && jb->watchers == 0 && jb->pins == 0)
		drop(j, jb);
}

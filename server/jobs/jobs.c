/* jobs.c: the job table: its policy, its states and their transitions
 * (each moves the job between the indexes of jobs_index.c), its compact
 * error, submission (both queues are ordered by priority, then first come
 * first served), queries, cancellation. The indexes and retention are
 * jobs_index.c's, the workers, timer and drain jobs_run.c's, a job's JSON,
 * the list and the event streams jobs_json.c's, the board queue
 * jobs_remote.c's; jobs_int.h is what they share. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "jobs_int.h"
#include "fault.h"

const char *const jobs_state_names[S_COUNT] = {
	JOB_QUEUED, JOB_RUNNING, JOB_SUCCEEDED, JOB_FAILED, JOB_CANCELLED, JOB_TIMED_OUT,
};

static const char *const prio_names[] = {PRIO_LOW, PRIO_NORMAL, PRIO_HIGH};

int srv_prio_parse(const char *s)
{
	int i;
	for (i = 0; s && i < 3; i++)
		if (!strcmp(s, prio_names[i]))
			return i;
	return -1;
}

const char *srv_prio_name(int prio)
{
	return prio >= 0 && prio < 3 ? prio_names[prio] : PRIO_NORMAL;
}

int srv_job_state_parse(const char *s)
{
	int i;
	for (i = 0; s && i < S_COUNT; i++)
		if (!strcmp(s, jobs_state_names[i]))
			return i;
	return -1;
}

void srv_jobs_on_store(srv_jobs *j, void (*fn)(void *), void *arg)
{
	pthread_mutex_lock(&j->mu);
	j->on_store = fn;
	j->on_store_arg = arg;
	pthread_mutex_unlock(&j->mu);
}

void srv_jobs_set_observer(srv_jobs *j, const srv_observer *obs)
{
	pthread_mutex_lock(&j->mu);
	j->obs = obs;
	pthread_mutex_unlock(&j->mu);
}

void srv_jobs_set_policy(srv_jobs *j, int timeout_s, int ttl_s, int history)
{
	pthread_mutex_lock(&j->mu);
	j->timeout_s = timeout_s > 0 ? timeout_s : DEFAULT_TIMEOUT;
	j->ttl_s = ttl_s > 0 ? ttl_s : DEFAULT_TTL;
	j->history = history > 0 ? history : DEFAULT_HISTORY;
	pthread_mutex_unlock(&j->mu);
}

void srv_jobs_set_node(srv_jobs *j, const char *node)
{
	pthread_mutex_lock(&j->mu);
	if (node && enpu_node_id_ok(node))
		snprintf(j->node_prefix, sizeof j->node_prefix, "%s-", node);
	else
		j->node_prefix[0] = '\0';
	pthread_mutex_unlock(&j->mu);
}

char *jobs_json_text(json_object *o)
{
	return o ? strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
							 JSON_C_TO_STRING_NOSLASHESCAPE)) : NULL;
}

void jobs_set_err(job *jb, const enpu_err *e)
{
	size_t a = strlen(e->message) + 1, b = strlen(e->where) + 1, c = strlen(e->fix) + 1;
	char *t = malloc(a + b + c);

	free(jb->err.text);
	jb->err.code = e->code;
	jb->err.sys_errno = e->sys_errno;
	jb->err.text = t;   /* out of memory: the code alone */
	if (t) {
		memcpy(t, e->message, a);
		memcpy(t + a, e->where, b);
		memcpy(t + a + b, e->fix, c);
	}
}

void jobs_get_err(const job *jb, enpu_err *e)
{
	const char *t = jb->err.text;
	enpu_err none = ENPU_ERR_INIT;

	*e = none;
	e->code = jb->err.code;
	e->sys_errno = jb->err.sys_errno;
	if (!t)
		return;
	snprintf(e->message, sizeof e->message, "%s", t);
	t += strlen(t) + 1;
	snprintf(e->where, sizeof e->where, "%s", t);
	t += strlen(t) + 1;
	snprintf(e->fix, sizeof e->fix, "%s", t);
}

void jobs_drop_snaps(job *jb)
{
	int k;

	if (!jb->snaps)
		return;
	for (k = 0; k < N_SNAPS; k++)
		free(jb->snaps->text[k]);
	free(jb->snaps);
	jb->snaps = NULL;
}

void jobs_job_free(job *jb)
{
	free(jb->input_name);
	free(jb->outputs);
	free(jb->extra);
	free(jb->board_error);
	free(jb->last_fault);
	free(jb->err.text);
	free(jb->qn);
	jobs_drop_snaps(jb);
	free(jb);
}

pthread_cond_t *jobs_done_cv(srv_jobs *j, const char *id)
{
	return &j->done[jobs_hash_id(id) % JOBS_DONE_STRIPES];
}

void jobs_wake_all(srv_jobs *j)
{
	for (int i = 0; i < JOBS_DONE_STRIPES; i++)
		pthread_cond_broadcast(&j->done[i]);
}

/* Every state change goes through here (its fields already filled): the
 * counter moves, watchers get a snapshot, waiters wake. Under the lock. */
void jobs_set_state(srv_jobs *j, job *jb, int state)
{
	jb->state = state;
	jb->seq++;
	if (jb->watchers > 0 && !jb->snaps)
		jb->snaps = calloc(1, sizeof *jb->snaps);
	if (jb->watchers > 0 && jb->snaps) {   /* out of memory: readers get the state now */
		int k = (int)(jb->seq % N_SNAPS);
		free(jb->snaps->text[k]);
		jb->snaps->text[k] = jobs_job_text(j, jb);
		jb->snaps->seq[k] = jb->seq;
		jb->snaps->state[k] = state;
	}
	pthread_cond_broadcast(jobs_done_cv(j, jb->id));
	jobs_feed_push(j, jb);
}

void jobs_start_run(srv_jobs *j, job *jb)
{
	jobs_unqueue(j, jb);
	jobs_list_push(&j->run, jb);
	if (jb->started.tv_sec == 0) {
		clock_gettime(CLOCK_REALTIME, &jb->started);
		jb->t_started = srv_now();
	}
	jb->t_attempt = srv_now();
	jobs_set_state(j, jb, S_RUNNING);
}

void jobs_finish(srv_jobs *j, job *jb, int state, const enpu_err *e)
{
	double now = srv_now();

	jobs_unqueue(j, jb);
	if (e)
		jobs_set_err(jb, e);
	free(jb->qn);              /* it never queues again */
	jb->qn = NULL;
	clock_gettime(CLOCK_REALTIME, &jb->finished);
	jb->t_finished = now;
	jobs_list_push(&j->fin, jb);   /* out of the running list */
	if (state == S_SUCCEEDED) {    /* its owner may read what it made */
		jobs_uses_job(j, jb, jb->result, 1);
		jobs_uses_job(j, jb, jb->report, 1);
	}
	/* the counters move before any waiter can see the final state (it
	 * needs our lock); the metrics lock is a leaf, so this nests safely */
	srv_obs_job_done(j->obs, jb->backend, jobs_state_names[state],
			     (jb->started.tv_sec ? jb->t_started : now) - jb->t_created,
			     jb->started.tv_sec ? now - jb->t_started : -1);
	jobs_set_state(j, jb, state);
}

/* A run time for the ETA estimator. Under the lock. */
void jobs_learn(srv_jobs *j, int bk, double seconds)
{
	if (bk < 0 || bk >= enpu_backend_count() || !(seconds >= 0))
		return;
	j->avg[bk] = j->avg[bk] > 0 ? (1 - EWMA_ALPHA) * j->avg[bk] + EWMA_ALPHA * seconds
				    : (seconds > 0 ? seconds : 1e-6);
}

/* E0813 for a job that ran out of time; under the lock. */
void jobs_fail_timeout(srv_jobs *j, job *jb, const char *what)
{
	enpu_err e = ENPU_ERR_INIT;

	if (jb->last_fault)
		enpu_fail(&e, ENPU_E_JOB_TIMEOUT, jb->id, NULL,
			  "job '%s' (%s) did not finish within %d s (--job-timeout): %s; last board "
			  "error: %s", jb->id, jb->backend, jb->timeout_s, what, jb->last_fault);
	else
		enpu_fail(&e, ENPU_E_JOB_TIMEOUT, jb->id,
			  jb->remote ? NULL : "raise the job's timeout or --job-timeout, or use a less busy server",
			  "job '%s' (%s) did not finish within %d s (--job-timeout): %s", jb->id,
			  jb->backend, jb->timeout_s, what);
	jb->failure = "timeout";
	jobs_finish(j, jb, S_TIMED_OUT, &e);
}

void jobs_breathe(srv_jobs *j)
{
	struct timespec ts = {0, 100000};   /* 0.1 ms: a waiter gets the lock */

	pthread_mutex_unlock(&j->mu);
	nanosleep(&ts, NULL);
	pthread_mutex_lock(&j->mu);
}

/* A fresh id into jb: the node's prefix (--node-id), then 16 random hex
 * digits (64 bits). */
static void job_new_id(const srv_jobs *j, job *jb)
{
	size_t n = strlen(j->node_prefix);

	memcpy(jb->id, j->node_prefix, n);
	srv_random_hex(jb->id + n, ENPU_JOB_HEX);
}

/* A new job for q, made without the lock (its allocations, its id's
 * random bytes, its fields): NULL when out of memory. */
static job *job_new(const srv_jobs *j, const srv_jobreq *q)
{
	job *jb = calloc(1, sizeof *jb);

	if (jb) {
		jb->input_name = strdup(q->input_name ? q->input_name : "");
		jb->qn = calloc(1, sizeof *jb->qn);
	}
	if (!jb || !jb->input_name || !jb->qn) {
		if (jb)
			jobs_job_free(jb);
		return NULL;
	}
	job_new_id(j, jb);
	snprintf(jb->artifact, sizeof jb->artifact, "%s", q->artifact);
	snprintf(jb->backend, sizeof jb->backend, "%s", q->backend);
	snprintf(jb->input, sizeof jb->input, "%s", q->input);
	snprintf(jb->owner, sizeof jb->owner, "%s", q->owner ? q->owner : "");
	snprintf(jb->model, sizeof jb->model, "%s", q->model ? q->model : "");
	jb->bk = enpu_backend_parse(q->backend);
	jb->prio = q->priority >= SRV_PRIO_LOW && q->priority <= SRV_PRIO_HIGH ? q->priority
		   : SRV_PRIO_NORMAL;
	jb->state = S_QUEUED;
	jb->remote = q->remote != 0;
	return jb;
}

/* Queue jb (job_new's) for both kinds of submit. exact: the timeout as
 * given (boards.c's callers), else capped by the policy's. Under the lock;
 * 0 (with *here the job when it was started for the caller,
 * SRV_HERE_ONLY), SRV_HERE_REFUSED, or -1 + *e; jb is the table's on 0,
 * still the caller's otherwise. */
static int submit_locked(srv_jobs *j, const srv_jobreq *q, int exact, job *jb, char id[ENPU_JOB_ID_SIZE],
			 enpu_err *e, job **here)
{
	if (j->stopping)
		return enpu_fail(e, ENPU_E_STORAGE, NULL, "retry once the server is back",
				 "the server is shutting down");
	if (q->here == SRV_HERE_ONLY && (q->remote || !jobs_slot_for_submitter(j)))
		return SRV_HERE_REFUSED;   /* it would queue: nothing done */
	if (j->queued + j->rqueued >= j->max_queue)
		return enpu_fail(e, ENPU_E_QUEUE_FULL, NULL, "retry after a moment",
				 "%d jobs are already waiting (the --max-queue limit)",
				 j->queued + j->rqueued);
	while (jobs_find(j, jb->id))   /* 64 random bits: all but never */
		job_new_id(j, jb);
	if (exact)
		jb->timeout_s = q->timeout_s > 0 ? q->timeout_s : 0;
	else
		jb->timeout_s = q->timeout_s > 0 && q->timeout_s < j->timeout_s ? q->timeout_s
			      : j->timeout_s;
	clock_gettime(CLOCK_REALTIME, &jb->created);
	jb->t_created = srv_now();
	jb->deadline = jb->t_created + jb->timeout_s;
	if (jobs_add(j, jb) != 0)   /* nothing holds it yet */
		return enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
	jobs_feed_push(j, jb);
	if (jb->remote) {
		pthread_cond_broadcast(&j->rwork);
	} else if (q->here == SRV_HERE_ONLY) {
		/* a worker would take it next (checked above): its submitter does */
		j->free_slots--;
		j->n_here++;
		jb->checked = 1;           /* the route's srv_artifact_verify, just now */
		jobs_start_run(j, jb);
		*here = jb;
	} else {
		pthread_cond_signal(&j->work);
	}
	memcpy(id, jb->id, sizeof jb->id);
	return 0;
}

static int submit(srv_jobs *j, const srv_jobreq *q, int exact, char id[ENPU_JOB_ID_SIZE], enpu_err *e)
{
	job *here = NULL, *jb = job_new(j, q), *dead = NULL;
	int rc;

	if (!jb)
		return enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
	pthread_mutex_lock(&j->mu);
	rc = submit_locked(j, q, exact, jb, id, e, &here);
	if (rc == 0)   /* keeps up with the history bound; the timer does the rest */
		jobs_prune_into(j, 4, &dead);
	pthread_mutex_unlock(&j->mu);
	if (rc != 0)
		jobs_job_free(jb);
	jobs_free_dead(dead);   /* out of the table, freed without the lock */
	return rc == 0 && here ? 1 : rc;   /* SRV_HERE_REFUSED passes through */
}

int srv_jobs_submit_req(srv_jobs *j, const srv_jobreq *q, char id[ENPU_JOB_ID_SIZE], enpu_err *e)
{
	return submit(j, q, 0, id, e);
}

int srv_jobs_runs_fast(srv_jobs *j, const char *artifact, double max_s)
{
	const jlast *l;
	int ok;

	pthread_mutex_lock(&j->mu);
	l = jobs_last_run(j, artifact);
	ok = max_s > 0 && !srv_fault_may_pause() && jobs_slot_for_submitter(j) &&
	     !strcmp(l->artifact, artifact) && l->seconds < max_s;
	pthread_mutex_unlock(&j->mu);
	return ok;
}

void srv_jobs_run_here(srv_jobs *j, const char *id)
{
	job *jb;

	pthread_mutex_lock(&j->mu);
	jb = jobs_find(j, id);   /* running: never pruned */
	pthread_mutex_unlock(&j->mu);
	if (jb)
		jobs_run_here(j, jb);
}

int srv_jobs_submit(srv_jobs *j, const char *artifact, const char *backend,
		    const char *input, const char *input_name, char id[ENPU_JOB_ID_SIZE], enpu_err *e)
{
	srv_jobreq q = {artifact, backend, input, input_name, SRV_PRIO_NORMAL, 0, 0, NULL, 0, NULL};
	return submit(j, &q, 0, id, e);
}

int srv_jobs_submit_remote(srv_jobs *j, const char *artifact, const char *backend,
			   const char *input, const char *input_name, int timeout_s,
			   char id[ENPU_JOB_ID_SIZE], enpu_err *e)
{
	srv_jobreq q = {artifact, backend, input, input_name, SRV_PRIO_NORMAL, timeout_s, 1, NULL, 0, NULL};
	return submit(j, &q, 1, id, e);
}

json_object *srv_jobs_get(srv_jobs *j, const char *id, int wait_s, int *final)
{
	struct timespec deadline;
	json_object *o = NULL;
	job *jb;
	int waited;

	*final = 0;
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += wait_s;
	pthread_mutex_lock(&j->mu);
	jb = jobs_find(j, id);
	waited = jb && jobs_waiting(j, jb);
	/* jobs are only freed by jobs_prune() and jobs_let_go(), which keep
	 * unfinished ones and run under this lock; find again after each
	 * wake-up all the same. A board job that starts waiting for a board
	 * is answered at once: it says why. */
	while (jb && !FINAL(jb->state) && !j->stopping && wait_s > 0 &&
	       (waited || !jobs_waiting(j, jb))) {
		if (pthread_cond_timedwait(jobs_done_cv(j, id), &j->mu, &deadline) == ETIMEDOUT)
			break;
		jb = jobs_find(j, id);
	}
	if (jb && FINAL(jb->state) && !jb->remote) {
		/* A finished local job changes no more: its JSON is built
		 * outside the lock (the job held, pins, so that it stays), the
		 * lock's longest hold on a job's path otherwise. */
		*final = 1;
		jb->pins++;
		pthread_mutex_unlock(&j->mu);
		o = jobs_job_json(j, jb, NULL);
		pthread_mutex_lock(&j->mu);
		jb->pins--;
		jobs_let_go(j, jb);
	} else if (jb) {
		*final = FINAL(jb->state);
		o = jobs_job_json(j, jb, NULL);
	}
	pthread_mutex_unlock(&j->mu);
	return o;
}

static int job_blob(srv_jobs *j, const char *id, int report, char digest[65], const char **state)
{
	int ret = -1;
	job *jb;

	pthread_mutex_lock(&j->mu);
	jb = jobs_find(j, id);
	if (jb) {
		*state = jobs_state_names[jb->state];
		ret = jb->state == S_SUCCEEDED;
		if (ret)
			memcpy(digest, report ? jb->report : jb->result, 65);
	}
	pthread_mutex_unlock(&j->mu);
	return ret;
}

int srv_jobs_result(srv_jobs *j, const char *id, char digest[65], const char **state)
{
	return job_blob(j, id, 0, digest, state);
}

int srv_jobs_report(srv_jobs *j, const char *id, char digest[65], const char **state)
{
	return job_blob(j, id, 1, digest, state);
}

int srv_jobs_cancel(srv_jobs *j, const char *id)
{
	enpu_err e = ENPU_ERR_INIT;
	job *jb;
	int ret = 0;

	pthread_mutex_lock(&j->mu);
	jb = jobs_find(j, id);
	if (!jb) {
		pthread_mutex_unlock(&j->mu);
		return -1;
	}
	if (FINAL(jb->state))
		ret = 1;
	else if (!jb->cancel)
		jb->cancel = SRV_CANCEL_USER;
	if (jb->state == S_QUEUED) {
		enpu_fail(&e, ENPU_E_JOB_FAILED, jb->id, NULL,
			  "job '%s' was cancelled before it started", jb->id);
		jb->failure = "cancelled";
		jobs_finish(j, jb, S_CANCELLED, &e);
	}
	pthread_mutex_unlock(&j->mu);
	return ret;
}

void srv_jobs_stats(srv_jobs *j, int *queued, int *running, int *workers)
{
	pthread_mutex_lock(&j->mu);
	*queued = j->queued + j->rqueued;
	*running = j->run.n;
	*workers = j->stopping ? 0 : j->n_workers;
	pthread_mutex_unlock(&j->mu);
}

int srv_jobs_idle(srv_jobs *j)
{
	int idle;
	pthread_mutex_lock(&j->mu);
	idle = j->queued == 0 && j->rqueued == 0 && j->run.n == 0;
	pthread_mutex_unlock(&j->mu);
	return idle;
}

typedef struct pins {
	char (*p)[65];
	int n, cap, bad;
} pins;

static void pin(void *item, void *arg)
{
	const job *jb = item;
	pins *ps = arg;

	if (ps->bad)
		return;
	if (ps->n + 2 > ps->cap) {
		int ncap = ps->cap ? ps->cap * 2 : 32;
		char (*np)[65] = realloc(ps->p, (size_t)ncap * sizeof *np);
		if (!np) {
			ps->bad = 1;
			return;
		}
		ps->p = np;
		ps->cap = ncap;
	}
	memcpy(ps->p[ps->n++], jb->input, 65);
	memcpy(ps->p[ps->n++], jb->artifact, 65);
}

/* The queued jobs (in both queues) and the running ones: never the
 * finished, however many are kept. */
int srv_jobs_pins(srv_jobs *j, char (**out)[65])
{
	pins ps = {NULL, 0, 0, 0};

	*out = NULL;
	pthread_mutex_lock(&j->mu);
	jq_foreach(&j->lq, pin, &ps);
	jq_foreach(&j->rq, pin, &ps);
	for (job *jb = j->run.head; jb; jb = jb->lnext)
		pin(jb, &ps);
	pthread_mutex_unlock(&j->mu);
	if (ps.bad) {
		free(ps.p);
		return -1;
	}
	*out = ps.p;
	return ps.n;
}

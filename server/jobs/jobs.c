/* jobs.c: the job table: its policy, its states and their transitions,
 * submission (both queues are ordered by priority, then first come first
 * served), queries, cancellation and retention. The workers and timer are
 * jobs_run.c's, a job's JSON and event streams jobs_json.c's, the board
 * queue jobs_remote.c's; jobs_int.h is what they share. */
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

job *jobs_find(srv_jobs *j, const char *id)
{
	int i;
	for (i = j->n_all - 1; i >= 0; i--)
		if (!strcmp(j->all[i]->id, id))
			return j->all[i];
	return NULL;
}

void jobs_drop_snaps(job *jb)
{
	int k;
	for (k = 0; k < N_SNAPS; k++) {
		free(jb->snap[k]);
		jb->snap[k] = NULL;
		jb->snap_seq[k] = 0;
	}
}

void jobs_job_free(job *jb)
{
	json_object_put(jb->outputs);
	json_object_put(jb->extra);
	json_object_put(jb->board_error);
	jobs_drop_snaps(jb);
	free(jb);
}

/* Forget finished jobs past the TTL, and the oldest ones past the history
 * bound. A job someone streams the events of stays. Under the lock. */
void jobs_prune(srv_jobs *j)
{
	struct timespec now;
	int i, k = 0, n_final = 0, over;

	clock_gettime(CLOCK_REALTIME, &now);
	for (i = 0; i < j->n_all; i++)
		n_final += FINAL(j->all[i]->state);
	over = n_final - j->history;
	for (i = 0; i < j->n_all; i++) {
		job *jb = j->all[i];
		double age = (double)(now.tv_sec - jb->finished.tv_sec) +
			     (double)(now.tv_nsec - jb->finished.tv_nsec) / 1e9;
		if (FINAL(jb->state) && jb->watchers == 0 && (over > 0 || age >= j->ttl_s)) {
			jobs_job_free(jb);
			over--;
		} else {
			j->all[k++] = jb;
		}
	}
	j->n_all = k;
}

/* Insert jb after every job of the same or a higher priority. */
static void enqueue(job **head, job **tail, job *jb)
{
	job **pp = head;

	while (*pp && (*pp)->prio >= jb->prio)
		pp = &(*pp)->qnext;
	jb->qnext = *pp;
	*pp = jb;
	if (!jb->qnext)
		*tail = jb;
}

/* Take jb out of the queue headed by *head (tail kept right). */
void jobs_unqueue(job **head, job **tail, job *jb)
{
	job **pp;

	for (pp = head; *pp; pp = &(*pp)->qnext)
		if (*pp == jb) {
			*pp = jb->qnext;
			break;
		}
	jb->qnext = NULL;
	*tail = NULL;
	for (job *q = *head; q; q = q->qnext)
		*tail = q;
}

/* Every state change goes through here (its fields already filled): the
 * counter moves, watchers get a snapshot, waiters wake. Under the lock. */
void jobs_set_state(srv_jobs *j, job *jb, int state)
{
	jb->state = state;
	jb->seq++;
	if (jb->watchers > 0) {
		int k = (int)(jb->seq % N_SNAPS);
		free(jb->snap[k]);
		jb->snap[k] = jobs_job_text(j, jb);
		jb->snap_seq[k] = jb->seq;
		jb->snap_state[k] = state;
	}
	pthread_cond_broadcast(&j->done);
}

void jobs_finish(srv_jobs *j, job *jb, int state)
{
	double now = srv_now();

	clock_gettime(CLOCK_REALTIME, &jb->finished);
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
	if (jb->last_fault[0])
		enpu_fail(&jb->err, ENPU_E_JOB_TIMEOUT, jb->id, NULL,
			  "job '%s' (%s) did not finish within %d s (--job-timeout): %s; last board "
			  "error: %s", jb->id, jb->backend, jb->timeout_s, what, jb->last_fault);
	else
		enpu_fail(&jb->err, ENPU_E_JOB_TIMEOUT, jb->id,
			  jb->remote ? NULL : "raise the job's timeout or --job-timeout, or use a less busy server",
			  "job '%s' (%s) did not finish within %d s (--job-timeout): %s", jb->id,
			  jb->backend, jb->timeout_s, what);
	jb->failure = "timeout";
	jobs_finish(j, jb, S_TIMED_OUT);
}

/* Both kinds of submit. exact: the timeout as given (boards.c's callers),
 * else capped by the policy's. */
static int submit(srv_jobs *j, const srv_jobreq *q, int exact, char id[33], enpu_err *e)
{
	job *jb;

	pthread_mutex_lock(&j->mu);
	if (j->stopping) {
		pthread_mutex_unlock(&j->mu);
		return enpu_fail(e, ENPU_E_STORAGE, NULL, "retry once the server is back",
				 "the server is shutting down");
	}
	if (j->queued + j->rqueued >= j->max_queue) {
		pthread_mutex_unlock(&j->mu);
		return enpu_fail(e, ENPU_E_QUEUE_FULL, NULL, "retry after a moment",
				 "%d jobs are already waiting (the --max-queue limit)",
				 j->queued + j->rqueued);
	}
	if (j->n_all == j->cap_all) {
		int ncap = j->cap_all ? j->cap_all * 2 : 64;
		job **na = realloc(j->all, (size_t)ncap * sizeof *na);
		if (!na) {
			pthread_mutex_unlock(&j->mu);
			return enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
		}
		j->all = na;
		j->cap_all = ncap;
	}
	jb = calloc(1, sizeof *jb);
	if (!jb) {
		pthread_mutex_unlock(&j->mu);
		return enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
	}
	do
		srv_random_hex(jb->id, 16);
	while (jobs_find(j, jb->id));
	snprintf(jb->artifact, sizeof jb->artifact, "%s", q->artifact);
	snprintf(jb->backend, sizeof jb->backend, "%s", q->backend);
	snprintf(jb->input, sizeof jb->input, "%s", q->input);
	snprintf(jb->input_name, sizeof jb->input_name, "%s", q->input_name);
	snprintf(jb->owner, sizeof jb->owner, "%s", q->owner ? q->owner : "");
	jb->bk = enpu_backend_parse(q->backend);
	jb->prio = q->priority >= SRV_PRIO_LOW && q->priority <= SRV_PRIO_HIGH ? q->priority
		   : SRV_PRIO_NORMAL;
	if (exact)
		jb->timeout_s = q->timeout_s > 0 ? q->timeout_s : 0;
	else
		jb->timeout_s = q->timeout_s > 0 && q->timeout_s < j->timeout_s ? q->timeout_s
			      : j->timeout_s;
	clock_gettime(CLOCK_REALTIME, &jb->created);
	jb->t_created = srv_now();
	jb->deadline = jb->t_created + jb->timeout_s;
	jb->state = S_QUEUED;
	j->all[j->n_all++] = jb;
	if (q->remote) {
		jb->remote = 1;
		enqueue(&j->rhead, &j->rtail, jb);
		j->rqueued++;
		pthread_cond_broadcast(&j->rwork);
	} else {
		enqueue(&j->qhead, &j->qtail, jb);
		j->queued++;
		pthread_cond_signal(&j->work);
	}
	memcpy(id, jb->id, 33);
	jobs_prune(j);
	pthread_mutex_unlock(&j->mu);
	return 0;
}

int srv_jobs_submit_req(srv_jobs *j, const srv_jobreq *q, char id[33], enpu_err *e)
{
	return submit(j, q, 0, id, e);
}

int srv_jobs_submit(srv_jobs *j, const char *artifact, const char *backend,
		    const char *input, const char *input_name, char id[33], enpu_err *e)
{
	srv_jobreq q = {artifact, backend, input, input_name, SRV_PRIO_NORMAL, 0, 0, NULL};
	return submit(j, &q, 0, id, e);
}

int srv_jobs_submit_remote(srv_jobs *j, const char *artifact, const char *backend,
			   const char *input, const char *input_name, int timeout_s,
			   char id[33], enpu_err *e)
{
	srv_jobreq q = {artifact, backend, input, input_name, SRV_PRIO_NORMAL, timeout_s, 1, NULL};
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
	waited = jb && jb->waiting[0];
	/* jobs are only freed by jobs_prune(), which keeps unfinished ones and runs
	 * under this lock; find again after each wake-up all the same. A board
	 * job that starts waiting for a board is answered at once: it says why. */
	while (jb && !FINAL(jb->state) && !j->stopping && wait_s > 0 &&
	       (waited || !jb->waiting[0])) {
		if (pthread_cond_timedwait(&j->done, &j->mu, &deadline) == ETIMEDOUT)
			break;
		jb = jobs_find(j, id);
	}
	if (jb) {
		*final = FINAL(jb->state);
		o = jobs_job_json(j, jb, NULL);
	}
	pthread_mutex_unlock(&j->mu);
	return o;
}

json_object *srv_jobs_list(srv_jobs *j, unsigned states, const char *backend, int limit,
			   const srv_ident *who)
{
	json_object *arr = json_object_new_array();
	double rw[2] = {-2, -2};
	int i, n = 0;

	pthread_mutex_lock(&j->mu);
	for (i = j->n_all - 1; i >= 0 && n < limit; i--) {
		const job *jb = j->all[i];
		if (states && !(states & (1u << jb->state)))
			continue;
		if (backend && strcmp(backend, jb->backend) != 0)
			continue;
		if (who && !srv_ident_owns(who, jb->owner))
			continue;
		json_object_array_add(arr, jobs_job_json(j, jb, rw));
		n++;
	}
	pthread_mutex_unlock(&j->mu);
	return arr;
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
		if (jb->remote) {
			jobs_unqueue(&j->rhead, &j->rtail, jb);
			j->rqueued--;
		} else {
			jobs_unqueue(&j->qhead, &j->qtail, jb);
			j->queued--;
		}
		enpu_fail(&jb->err, ENPU_E_JOB_FAILED, jb->id, NULL,
			  "job '%s' was cancelled before it started", jb->id);
		jb->failure = "cancelled";
		jobs_finish(j, jb, S_CANCELLED);
	}
	pthread_mutex_unlock(&j->mu);
	return ret;
}

void srv_jobs_stats(srv_jobs *j, int *queued, int *running, int *workers)
{
	pthread_mutex_lock(&j->mu);
	*queued = j->queued + j->rqueued;
	*running = j->running;
	*workers = j->stopping ? 0 : j->n_workers;
	pthread_mutex_unlock(&j->mu);
}

int srv_jobs_idle(srv_jobs *j)
{
	int idle;
	pthread_mutex_lock(&j->mu);
	idle = j->queued == 0 && j->rqueued == 0 && j->running == 0;
	pthread_mutex_unlock(&j->mu);
	return idle;
}

int srv_jobs_pins(srv_jobs *j, char (**out)[65])
{
	char (*p)[65] = NULL;
	int i, n = 0, cap = 0;

	*out = NULL;
	pthread_mutex_lock(&j->mu);
	for (i = 0; i < j->n_all; i++) {
		job *jb = j->all[i];
		if (FINAL(jb->state))
			continue;
		if (n + 2 > cap) {
			int ncap = cap ? cap * 2 : 32;
			char (*np)[65] = realloc(p, (size_t)ncap * sizeof *np);
			if (!np) {
				pthread_mutex_unlock(&j->mu);
				free(p);
				return -1;
			}
			p = np;
			cap = ncap;
		}
		memcpy(p[n++], jb->input, 65);
		memcpy(p[n++], jb->artifact, 65);
	}
	pthread_mutex_unlock(&j->mu);
	*out = p;
	return n;
}

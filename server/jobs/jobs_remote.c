/* jobs_remote.c: the board jobs' queue (zynq_ps, fpga_board on a lab
 * server). boards.c's dispatchers take from it, report each try's end and
 * drive its timeouts (srv_jobs_expire); a job carries the board that ran it
 * and how many tries it took. The queue is the table's board treap
 * (jobs_index.c): a dispatcher finds the first job of its backends in
 * O(log n); a backend with no board up is a fact of the backend (since
 * when, and why), so its queued jobs show why they wait and fail after
 * --board-wait oldest first, without a pass over the queue. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "jobs_int.h"


/* ---- board jobs ------------------------------------------------------------ */

static job *take_match(srv_jobs *j, unsigned mask)
{
	jq_node *n = j->drain_fired ? NULL : jq_first_of(&j->rq, mask);
	return n ? n->item : NULL;
}

int srv_jobs_take_remote(srv_jobs *j, unsigned mask, const atomic_int *gate, const char *board,
			 double wait_s, srv_rjob *out)
{
	struct timespec deadline;
	job *jb;
	long ns;

	clock_gettime(CLOCK_REALTIME, &deadline);
	ns = deadline.tv_nsec + (long)((wait_s - (double)(long)wait_s) * 1e9);
	deadline.tv_sec += (time_t)wait_s + ns / 1000000000L;
	deadline.tv_nsec = ns % 1000000000L;
	pthread_mutex_lock(&j->mu);
	while (!j->stopping && !(jb = take_match(j, mask))) {
		if (pthread_cond_timedwait(&j->rwork, &j->mu, &deadline) == ETIMEDOUT) {
			jb = j->stopping ? NULL : take_match(j, mask);
			break;
		}
	}
	if (j->stopping) {
		pthread_mutex_unlock(&j->mu);
		return -1;
	}
	if (!jb || !atomic_load(gate)) {
		pthread_mutex_unlock(&j->mu);
		return 0;
	}
	jb->attempts++;
	snprintf(jb->board, sizeof jb->board, "%s", board);
	jobs_start_run(j, jb);
	memset(out, 0, sizeof *out);
	memcpy(out->id, jb->id, sizeof out->id);
	memcpy(out->artifact, jb->artifact, sizeof out->artifact);
	memcpy(out->backend, jb->backend, sizeof out->backend);
	memcpy(out->input, jb->input, sizeof out->input);
	snprintf(out->input_name, sizeof out->input_name, "%s", jb->input_name);
	out->cancel = &jb->cancel;
	out->deadline = jb->deadline;
	out->attempt = jb->attempts;
	pthread_mutex_unlock(&j->mu);
	return 1;
}

/* A board's result for jb: its files become the job's. Under the lock. */
static void remote_ok(srv_jobs *j, job *jb, srv_rresult *res)
{
	memcpy(jb->result, res->result, sizeof jb->result);
	memcpy(jb->report, res->report, sizeof jb->report);
	jb->seconds = res->seconds;
	jb->outputs = jobs_json_text(res->outputs);
	jb->extra = jobs_json_text(res->extra);
	json_object_put(res->outputs);
	json_object_put(res->extra);
	res->outputs = res->extra = NULL;
	jobs_learn(j, jb->bk, srv_now() - jb->t_attempt);
	jobs_finish(j, jb, S_SUCCEEDED, NULL);
}

/* A board fault: jb goes back to the head of the remote queue while it
 * has tries left, else fails E0812. Under the lock. 1 = requeued. */
static int remote_fault(srv_jobs *j, job *jb, srv_rresult *res, const enpu_err *e, int retries)
{
	enpu_err fe = *e;

	free(jb->last_fault);
	jb->last_fault = strdup(e->message);
	free(jb->board_error);
	jb->board_error = res ? jobs_json_text(res->board_error) : NULL;
	if (res) {
		json_object_put(res->board_error);
		res->board_error = NULL;
	}
	if (jb->attempts <= retries && !jb->cancel && !j->stopping && !j->drain_fired) {
		/* back to the head: it has waited longest (its queue node and
		 * heap room were kept, so this cannot fail) */
		jobs_list_remove(jb);
		if (jobs_enqueue(j, jb, 1) == 0) {
			jobs_set_state(j, jb, S_QUEUED);
			pthread_cond_broadcast(&j->rwork);
			return 1;
		}
	}
	fe.code = ENPU_E_BOARD_FAULT;
	if (jb->attempts > 1) {
		size_t n = strlen(fe.message);
		snprintf(fe.message + n, sizeof fe.message - n, " (after %d tries on boards)",
			 jb->attempts);
	}
	jb->failure = "board";
	jobs_finish(j, jb, S_FAILED, &fe);
	return 0;
}

/* A run on a board that ended cancelled: by the user, by shutdown, by the
 * drain's deadline, or by its own. Under the lock. */
static void remote_cancelled(srv_jobs *j, job *jb)
{
	enpu_err e = ENPU_ERR_INIT;
	char what[160];

	if (jb->cancel == SRV_CANCEL_USER)
		enpu_fail(&e, ENPU_E_JOB_FAILED, jb->id, NULL,
			  "job '%s' was cancelled (and on board '%s')", jb->id, jb->board);
	else if (jb->cancel == SRV_CANCEL_SHUTDOWN)
		enpu_fail(&e, ENPU_E_JOB_FAILED, jb->id, "submit it again",
			  "the server shut down while job '%s' ran on board '%s'", jb->id,
			  jb->board);
	else if (jb->cancel == SRV_CANCEL_DRAIN)
		enpu_fail(&e, ENPU_E_JOB_FAILED, jb->id, "submit it again",
			  "the server's drain timed out (--drain-timeout %d s) while job '%s' ran "
			  "on board '%s'", j->drain_s, jb->id, jb->board);
	else {
		snprintf(what, sizeof what, "cancelled on board '%s'", jb->board);
		jobs_fail_timeout(j, jb, what);
		return;
	}
	jb->failure = "cancelled";
	jobs_finish(j, jb, S_CANCELLED, &e);
}

int srv_jobs_remote_done(srv_jobs *j, const char *id, srv_rkind kind, srv_rresult *res,
			 const enpu_err *e, int retries)
{
	job *jb;
	int requeued = 0;

	pthread_mutex_lock(&j->mu);
	jb = jobs_find(j, id);
	if (!jb || jb->state != S_RUNNING) {   /* cannot happen: running jobs stay */
		pthread_mutex_unlock(&j->mu);
		return 0;
	}
	jb->seconds = 0;
	if (kind == SRV_RUN_FAULT && srv_now() >= jb->deadline)
		kind = SRV_RUN_CANCEL;
	switch (kind) {
	case SRV_RUN_OK:
		remote_ok(j, jb, res);
		break;
	case SRV_RUN_MODEL:
		jb->failure = "model";
		jobs_finish(j, jb, S_FAILED, e);
		break;
	case SRV_RUN_FAULT:
		requeued = remote_fault(j, jb, res, e, retries);
		break;
	case SRV_RUN_CANCEL:
		remote_cancelled(j, jb);
		break;
	}
	pthread_mutex_unlock(&j->mu);
	return requeued;
}

/* Backend bk has no board up (why says so): from now, or since it went
 * down, its queued jobs show why; the ones that have waited so board_wait
 * seconds (the oldest queued first) fail E0811, at most *budget of them.
 * Under the lock. */
static void no_board(srv_jobs *j, int bk, const char *why, int board_wait, double now,
		     int *budget)
{
	jlist *w = &j->bwait[bk];

	if (!j->bk_down[bk]) {
		j->bk_down[bk] = now;
		if (w->n)
			jobs_wake_all(j);   /* long-polls answer with the reason */
	}
	snprintf(j->bk_why[bk], sizeof j->bk_why[bk], "%s", why ? why : "waiting for a board");
	while (*budget > 0 && w->head) {
		job *q = w->head;
		double since = q->t_queued > j->bk_down[bk] ? q->t_queued : j->bk_down[bk];
		enpu_err e = ENPU_ERR_INIT;

		if (now - since < board_wait)
			break;
		enpu_fail(&e, ENPU_E_NO_BOARD, q->backend, NULL, "job '%s' waited %d s and no "
			  "board serving %s came up (%s)", q->id, board_wait, q->backend,
			  j->bk_why[bk]);
		q->failure = "board";
		jobs_finish(j, q, S_FAILED, &e);
		(*budget)--;
	}
}

/* One batch of srv_jobs_expire: 1 when more is due. */
static int expire_remote(srv_jobs *j, unsigned up_mask, const char *const *waiting,
			 int board_wait)
{
	double now = srv_now();
	const jheap_ent *top;
	int bk, budget = JOBS_BATCH;

	for (bk = 0; bk < enpu_backend_count() && bk < ENPU_BACKENDS_MAX; bk++) {
		if (up_mask & (1u << bk)) {
			j->bk_down[bk] = 0;
			j->bk_why[bk][0] = '\0';
		} else {
			no_board(j, bk, waiting ? waiting[bk] : NULL, board_wait, now, &budget);
		}
	}
	for (; budget > 0 && (top = jheap_top(&j->rheap)) && now >= top->key; budget--) {
		job *q = top->item;
		jobs_fail_timeout(j, q, q->attempts ? "no board took it again"
			     : "no board serving it was up");
	}
	for (job *jb = j->run.head; jb; jb = jb->lnext)
		if (jb->remote && now >= jb->deadline && !jb->cancel)
			jb->cancel = SRV_CANCEL_TIMEOUT;
	return budget == 0;
}

void srv_jobs_expire(srv_jobs *j, unsigned up_mask, const char *const *waiting, int board_wait)
{
	pthread_mutex_lock(&j->mu);
	while (expire_remote(j, up_mask, waiting, board_wait))
		jobs_breathe(j);
	pthread_mutex_unlock(&j->mu);
}

void srv_jobs_kick(srv_jobs *j)
{
	pthread_mutex_lock(&j->mu);
	pthread_cond_broadcast(&j->rwork);
	pthread_mutex_unlock(&j->mu);
}

int srv_jobs_remote_queued(srv_jobs *j, unsigned mask)
{
	int n;

	pthread_mutex_lock(&j->mu);
	n = jq_count_of(&j->rq, mask);
	pthread_mutex_unlock(&j->mu);
	return n;
}

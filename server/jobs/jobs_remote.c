/* jobs_remote.c: the board jobs' queue (zynq_ps, fpga_board on a lab
 * server). boards.c's dispatchers take from it, report each try's end and
 * drive its timeouts (srv_jobs_expire); a job carries the board that ran it
 * and how many tries it took. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "jobs_int.h"


/* ---- board jobs ------------------------------------------------------------ */

static job *take_match(srv_jobs *j, unsigned mask)
{
	for (job *q = j->rhead; q; q = q->qnext)
		if (q->bk >= 0 && (mask & (1u << q->bk)))
			return q;
	return NULL;
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
	jobs_unqueue(&j->rhead, &j->rtail, jb);
	j->rqueued--;
	j->running++;
	jb->attempts++;
	snprintf(jb->board, sizeof jb->board, "%s", board);
	if (jb->started.tv_sec == 0) {
		clock_gettime(CLOCK_REALTIME, &jb->started);
		jb->t_started = srv_now();
	}
	jb->t_attempt = srv_now();
	jb->t_noboard = 0;
	jb->waiting[0] = '\0';
	jobs_set_state(j, jb, S_RUNNING);
	memset(out, 0, sizeof *out);
	memcpy(out->id, jb->id, sizeof out->id);
	memcpy(out->artifact, jb->artifact, sizeof out->artifact);
	memcpy(out->backend, jb->backend, sizeof out->backend);
	memcpy(out->input, jb->input, sizeof out->input);
	memcpy(out->input_name, jb->input_name, sizeof out->input_name);
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
	jb->outputs = res->outputs;
	jb->extra = res->extra;
	res->outputs = res->extra = NULL;
	jobs_learn(j, jb->bk, srv_now() - jb->t_attempt);
	jobs_finish(j, jb, S_SUCCEEDED);
}

/* A board fault: jb goes back to the head of the remote queue while it
 * has tries left, else fails E0812. Under the lock. 1 = requeued. */
static int remote_fault(srv_jobs *j, job *jb, srv_rresult *res, const enpu_err *e, int retries)
{
	snprintf(jb->last_fault, sizeof jb->last_fault, "%s", e->message);
	json_object_put(jb->board_error);
	jb->board_error = res ? res->board_error : NULL;
	if (res)
		res->board_error = NULL;
	if (jb->attempts <= retries && !jb->cancel && !j->stopping) {
		/* back to the head: it has waited longest */
		jb->qnext = j->rhead;
		j->rhead = jb;
		if (!j->rtail)
			j->rtail = jb;
		j->rqueued++;
		jobs_set_state(j, jb, S_QUEUED);
		pthread_cond_broadcast(&j->rwork);
		return 1;
	}
	jb->err = *e;
	jb->err.code = ENPU_E_BOARD_FAULT;
	if (jb->attempts > 1) {
		size_t n = strlen(jb->err.message);
		snprintf(jb->err.message + n, sizeof jb->err.message - n,
			 " (after %d tries on boards)", jb->attempts);
	}
	jb->failure = "board";
	jobs_finish(j, jb, S_FAILED);
	return 0;
}

/* A run on a board that ended cancelled: by the user, by shutdown, or by
 * its deadline. Under the lock. */
static void remote_cancelled(srv_jobs *j, job *jb)
{
	char what[160];

	if (jb->cancel == SRV_CANCEL_USER) {
		enpu_fail(&jb->err, ENPU_E_JOB_FAILED, jb->id, NULL,
			  "job '%s' was cancelled (and on board '%s')", jb->id, jb->board);
		jb->failure = "cancelled";
		jobs_finish(j, jb, S_CANCELLED);
	} else if (jb->cancel == SRV_CANCEL_SHUTDOWN) {
		enpu_fail(&jb->err, ENPU_E_JOB_FAILED, jb->id, "submit it again",
			  "the server shut down while job '%s' ran on board '%s'", jb->id,
			  jb->board);
		jb->failure = "cancelled";
		jobs_finish(j, jb, S_CANCELLED);
	} else {
		snprintf(what, sizeof what, "cancelled on board '%s'", jb->board);
		jobs_fail_timeout(j, jb, what);
	}
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
	j->running--;
	jb->seconds = 0;
	if (kind == SRV_RUN_FAULT && srv_now() >= jb->deadline)
		kind = SRV_RUN_CANCEL;
	switch (kind) {
	case SRV_RUN_OK:
		remote_ok(j, jb, res);
		break;
	case SRV_RUN_MODEL:
		jb->err = *e;
		jb->failure = "model";
		jobs_finish(j, jb, S_FAILED);
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

/* Queued job q with no board up for it since q->t_noboard: past
 * board_wait, it fails E0811. Under the lock. 1 = failed. */
static int board_wait_over(srv_jobs *j, job *q, const char *waiting, int board_wait, double now)
{
	if (!q->t_noboard)
		q->t_noboard = now;
	if (!q->waiting[0])
		pthread_cond_broadcast(&j->done);   /* long-polls answer with the reason */
	snprintf(q->waiting, sizeof q->waiting, "%s", waiting ? waiting : "waiting for a board");
	if (now - q->t_noboard < board_wait)
		return 0;
	jobs_unqueue(&j->rhead, &j->rtail, q);
	j->rqueued--;
	enpu_fail(&q->err, ENPU_E_NO_BOARD, q->backend, NULL, "job '%s' waited %d s and no board "
		  "serving %s came up (%s)", q->id, board_wait, q->backend, q->waiting);
	q->failure = "board";
	q->waiting[0] = '\0';
	jobs_finish(j, q, S_FAILED);
	return 1;
}

void srv_jobs_expire(srv_jobs *j, unsigned up_mask, const char *const *waiting, int board_wait)
{
	double now = srv_now();
	job *q, *next;
	int i;

	pthread_mutex_lock(&j->mu);
	for (q = j->rhead; q; q = next) {
		next = q->qnext;
		if (q->bk >= 0 && !(up_mask & (1u << q->bk))) {
			if (board_wait_over(j, q, waiting ? waiting[q->bk] : NULL, board_wait, now))
				continue;
		} else {
			q->t_noboard = 0;
			q->waiting[0] = '\0';
		}
		if (now < q->deadline)
			continue;
		jobs_unqueue(&j->rhead, &j->rtail, q);
		j->rqueued--;
		jobs_fail_timeout(j, q, q->attempts ? "no board took it again"
			     : "no board serving it was up");
	}
	for (i = 0; i < j->n_all; i++) {
		job *jb = j->all[i];
		if (jb->remote && jb->state == S_RUNNING && now >= jb->deadline && !jb->cancel)
			jb->cancel = SRV_CANCEL_TIMEOUT;
	}
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
	int n = 0;

	pthread_mutex_lock(&j->mu);
	for (job *q = j->rhead; q; q = q->qnext)
		if (q->bk >= 0 && (mask & (1u << q->bk)))
			n++;
	pthread_mutex_unlock(&j->mu);
	return n;
}

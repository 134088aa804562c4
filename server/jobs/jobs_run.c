/* jobs_run.c: the worker pool and the timer of the job table. Each worker
 * owns a kernel thread pool (enpu_par) and takes one job at a time: load
 * the artifact (via the LRU in artifact.c), enpu_run into tmp/, store the
 * result and the report.json in the CAS. Results are the same bytes for
 * any worker count. The timer times out queued local jobs past their
 * deadline and flags running ones (enpu_run polls the flag between ops),
 * and prunes finished jobs. Also the table's start, shutdown and free. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "jobs_int.h"
#include "artifact.h"
#include "ops.h"
#include "fault.h"
#include "npz.h"


static json_object *outputs_json(const enpu_artifact *a)
{
	const enpu_graph *g = enpu_artifact_graph(a);
	json_object *arr = json_object_new_array();
	int i, d;

	for (i = 0; g && i < g->n_outputs; i++) {
		const enpu_irtensor *t = &g->tensors[g->outputs[i]];
		json_object *o = json_object_new_object(), *sh = json_object_new_array();
		for (d = 0; d < t->shape.ndim; d++)
			json_object_array_add(sh, json_object_new_int64(t->shape.dim[d]));
		json_object_object_add(o, F_NAME, json_object_new_string(t->name));
		json_object_object_add(o, F_SHAPE, sh);
		json_object_array_add(arr, o);
	}
	return arr;
}

/* Run one job outside the lock; fills result/report/outputs/err. 0 or -1.
 * The job's fields are only read by others once it is finished (under the
 * lock), so filling them here is safe. */
static int run_job(srv_jobs *j, job *jb, enpu_par *par)
{
	enpu_artifact *a = NULL;
	enpu_run_info info;
	enpu_tlist inputs = ENPU_TLIST_INIT, results = ENPU_TLIST_INIT;
	enpu_buf res = ENPU_BUF_INIT, rep = ENPU_BUF_INIT;
	const char *label = jb->input_name;
	char in[4300];
	int ret = -1;

	memset(&info, 0, sizeof info);
	srv_cas_blob_path(j->cas, jb->input, in, sizeof in);
	srv_fault_point("board-run");   /* accepted (202), never runs */
	if (srv_artifact_get(j->cas, jb->artifact, j->lim, &a, &jb->err) != 0)
		goto out;
	/* in memory: the result and report go into the CAS as they are
	 * written (hashed on the way), never through a temp file */
	if (enpu_npz_read(in, label, j->lim, &inputs, &jb->err) != 0 ||
	    enpu_run_mem(a, &inputs, label, &results, &rep, par, &jb->cancel, j->lim,
			 &info, &jb->err) != 0 ||
	    enpu_npz_write_mem(&results, "result.npz", &res, &jb->err) != 0)
		goto out;
	srv_fault_point("result");   /* the result made, not stored, job running */
	if (srv_cas_put_mem(j->cas, res.data, res.len, jb->result, &jb->err) != 0 ||
	    srv_cas_put_mem(j->cas, rep.data, rep.len, jb->report, &jb->err) != 0)
		goto out;
	jb->seconds = info.seconds;
	jb->outputs = outputs_json(a);
	if (info.has_npu) {
		jb->has_npu = 1;
		jb->npu_cycles = info.npu_cycles;
		jb->npu_time_us = info.npu_time_us;
		jb->npu_dram_bytes = info.npu_dram_bytes;
		jb->npu_utilisation = info.npu_utilisation;
		jb->npu_clock_mhz = info.npu_clock_mhz;
	}
	ret = 0;
out:
	if (ret != 0)
		srv_fault_storage(&jb->err);   /* a full cache disk is E0810, not E0003 */
	enpu_tlist_free(&inputs);
	enpu_tlist_free(&results);
	enpu_buf_free(&res);
	enpu_buf_free(&rep);
	srv_artifact_release(a);
	return ret;
}

/* A local run that stopped with its cancel flag up: say why. Under the lock. */
static void end_cancelled(srv_jobs *j, job *jb)
{
	char why[sizeof jb->err.message];

	snprintf(why, sizeof why, "%s", jb->err.message);
	if (jb->cancel == SRV_CANCEL_TIMEOUT) {
		jobs_fail_timeout(j, jb, why[0] ? why : "stopped while running");
		return;
	}
	if (jb->cancel == SRV_CANCEL_SHUTDOWN)
		enpu_fail(&jb->err, ENPU_E_JOB_FAILED, jb->id, "submit it again",
			  "the server shut down while job '%s' ran (%s)", jb->id, why);
	else
		enpu_fail(&jb->err, ENPU_E_JOB_FAILED, jb->id, NULL,
			  "job '%s' was cancelled while running (%s)", jb->id, why);
	jb->failure = "cancelled";
	jobs_finish(j, jb, S_CANCELLED);
}

static void *worker(void *arg)
{
	srv_jobs *j = arg;
	enpu_par *par = enpu_par_create(j->par_threads);

	pthread_mutex_lock(&j->mu);
	for (;;) {
		job *jb;
		while (!j->stopping && !j->qhead)
			pthread_cond_wait(&j->work, &j->mu);
		if (j->stopping)
			break;
		jb = j->qhead;
		jobs_unqueue(&j->qhead, &j->qtail, jb);
		j->queued--;
		j->running++;
		clock_gettime(CLOCK_REALTIME, &jb->started);
		jb->t_started = jb->t_attempt = srv_now();
		jobs_set_state(j, jb, S_RUNNING);
		pthread_mutex_unlock(&j->mu);

		double t0 = srv_now();
		int rc = run_job(j, jb, par);
		if (rc == 0 && j->on_store)
			j->on_store(j->on_store_arg);
		if (rc == 0)
			srv_log("info", "job=%s artifact=%.12s succeeded in %.3fs", jb->id,
				jb->artifact, srv_now() - t0);
		else
			srv_log("warn", "job=%s artifact=%.12s %s: %s %s", jb->id, jb->artifact,
				jb->cancel == SRV_CANCEL_TIMEOUT ? "timed out" : jb->cancel ? "cancelled"
				: "failed", enpu_code_info_of(jb->err.code)->id, jb->err.message);

		pthread_mutex_lock(&j->mu);
		j->running--;
		if (rc == 0) {
			jobs_learn(j, jb->bk, srv_now() - t0);
			jobs_finish(j, jb, S_SUCCEEDED);
		} else {
			jb->seconds = srv_now() - t0;
			if (jb->cancel) {
				end_cancelled(j, jb);
			} else {
				jobs_learn(j, jb->bk, jb->seconds);
				jb->failure = "model";
				jobs_finish(j, jb, S_FAILED);
			}
		}
	}
	pthread_mutex_unlock(&j->mu);
	enpu_par_destroy(par);
	return NULL;
}

/* Time out queued local jobs past their deadline; flag running ones. */
static void expire_local(srv_jobs *j)
{
	double now = srv_now();
	job *q, *next;
	int i;

	for (q = j->qhead; q; q = next) {
		next = q->qnext;
		if (now < q->deadline)
			continue;
		jobs_unqueue(&j->qhead, &j->qtail, q);
		j->queued--;
		jobs_fail_timeout(j, q, "it was still waiting in the queue");
	}
	for (i = 0; i < j->n_all; i++) {
		job *jb = j->all[i];
		if (!jb->remote && jb->state == S_RUNNING && now >= jb->deadline && !jb->cancel)
			jb->cancel = SRV_CANCEL_TIMEOUT;
	}
}

static void *timer_main(void *arg)
{
	srv_jobs *j = arg;

	pthread_mutex_lock(&j->mu);
	while (!j->timer_stop) {
		struct timespec t;

		expire_local(j);
		jobs_prune(j);
		pthread_mutex_unlock(&j->mu);
		pthread_mutex_lock(&j->mu);
		if (j->timer_stop)
			break;
		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_nsec += TICK_NS;
		if (t.tv_nsec >= 1000000000L) {
			t.tv_sec++;
			t.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&j->tick, &j->mu, &t);
	}
	pthread_mutex_unlock(&j->mu);
	return NULL;
}

srv_jobs *srv_jobs_start(srv_cas *cas, const enpu_limits *lim, int workers, int threads,
			 int max_queue, enpu_err *e)
{
	srv_jobs *j = calloc(1, sizeof *j);
	int i;

	if (!j || workers < 1) {
		free(j);
		enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "cannot create the job table");
		return NULL;
	}
	j->cas = cas;
	j->lim = lim;
	j->max_queue = max_queue;
	j->par_threads = threads;
	j->timeout_s = DEFAULT_TIMEOUT;
	j->ttl_s = DEFAULT_TTL;
	j->history = DEFAULT_HISTORY;
	pthread_mutex_init(&j->mu, NULL);
	pthread_cond_init(&j->work, NULL);
	pthread_cond_init(&j->done, NULL);
	pthread_cond_init(&j->rwork, NULL);
	pthread_cond_init(&j->tick, NULL);
	j->threads = calloc((size_t)workers, sizeof *j->threads);
	if (!j->threads) {
		srv_jobs_free(j);
		enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
		return NULL;
	}
	for (i = 0; i < workers; i++) {
		if (pthread_create(&j->threads[i], NULL, worker, j) != 0) {
			srv_jobs_free(j);
			enpu_fail(e, ENPU_E_INTERNAL, NULL, NULL, "cannot start worker thread %d", i);
			return NULL;
		}
		j->n_workers++;
	}
	if (pthread_create(&j->timer, NULL, timer_main, j) != 0) {
		srv_jobs_free(j);
		enpu_fail(e, ENPU_E_INTERNAL, NULL, NULL, "cannot start the job timer thread");
		return NULL;
	}
	j->timer_on = 1;
	return j;
}

/* Cancel every job of a queue: the server stops. Under the lock. */
static void drain_queue(srv_jobs *j, job **head, job **tail)
{
	while (*head) {
		job *jb = *head;
		*head = jb->qnext;
		jb->qnext = NULL;
		enpu_fail(&jb->err, ENPU_E_JOB_FAILED, jb->id, "submit it again",
			  "the server shut down before job '%s' started", jb->id);
		jb->failure = "cancelled";
		jobs_finish(j, jb, S_CANCELLED);
	}
	*tail = NULL;
}

void srv_jobs_shutdown(srv_jobs *j)
{
	int i;

	if (!j)
		return;
	pthread_mutex_lock(&j->mu);
	j->stopping = 1;
	drain_queue(j, &j->qhead, &j->qtail);
	j->queued = 0;
	drain_queue(j, &j->rhead, &j->rtail);
	j->rqueued = 0;
	/* board jobs in flight stop at once (the dispatchers cancel them on
	 * their boards); local ones are left to finish, or to time out */
	for (i = 0; i < j->n_all; i++)
		if (j->all[i]->remote && j->all[i]->state == S_RUNNING)
			j->all[i]->cancel = SRV_CANCEL_SHUTDOWN;
	pthread_cond_broadcast(&j->work);
	pthread_cond_broadcast(&j->rwork);
	pthread_cond_broadcast(&j->done);
	pthread_mutex_unlock(&j->mu);
	for (i = 0; i < j->n_workers; i++)
		pthread_join(j->threads[i], NULL);
	j->n_workers = 0;
	if (j->timer_on) {
		pthread_mutex_lock(&j->mu);
		j->timer_stop = 1;
		pthread_cond_broadcast(&j->tick);
		pthread_mutex_unlock(&j->mu);
		pthread_join(j->timer, NULL);
		j->timer_on = 0;
	}
}

void srv_jobs_free(srv_jobs *j)
{
	int i;

	if (!j)
		return;
	srv_jobs_shutdown(j);
	for (i = 0; i < j->n_all; i++)
		jobs_job_free(j->all[i]);
	free(j->all);
	free(j->threads);
	pthread_mutex_destroy(&j->mu);
	pthread_cond_destroy(&j->work);
	pthread_cond_destroy(&j->done);
	pthread_cond_destroy(&j->rwork);
	pthread_cond_destroy(&j->tick);
	free(j);
}

/* jobs.c: the job table, its FIFO queue and the worker pool. Each worker
 * owns a kernel thread pool (enpu_par) and takes one job at a time: load
 * the artifact (via the LRU in artifact.c), enpu_run into tmp/, store the
 * result and the report.json in the CAS. Results are the same bytes for any
 * worker count. Board jobs (zynq_ps, fpga_board on a lab server) wait in a
 * second queue that boards.c's dispatchers take from; they carry a deadline,
 * the board that ran them and how many tries it took. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "srv.h"
#include "artifact.h"
#include "http.h"
#include "ops.h"
#include "jobs.h"

#define MAX_KEEP 10000          /* finished jobs remembered */

enum { S_QUEUED, S_RUNNING, S_SUCCEEDED, S_FAILED };
static const char *const state_names[] = {JOB_QUEUED, JOB_RUNNING, JOB_SUCCEEDED, JOB_FAILED};

typedef struct job {
	char id[33];
	char artifact[65];
	char backend[32];
	char input[65];
	char input_name[256];
	int state;
	struct timespec created, started, finished;
	double seconds;
	char result[65];
	char report[65];          /* report.json in the CAS, once succeeded */
	int has_npu;              /* npu_sim: the model's totals below */
	uint64_t npu_cycles, npu_dram_bytes;
	double npu_time_us, npu_utilisation, npu_clock_mhz;
	json_object *outputs;
	enpu_err err;
	volatile int cancel;
	struct job *qnext;
	/* board jobs */
	int remote, bk, attempts, timeout_s;
	double deadline;
	char board[64];
	char last_fault[800];      /* the last board fault, for a timeout's message */
	const char *failure;       /* "model", "board", "timeout", "cancelled" once failed */
	json_object *extra;        /* keys of the board's job JSON shown as they are */
} job;

struct srv_jobs {
	srv_cas *cas;
	const enpu_limits *lim;
	pthread_mutex_t mu;
	pthread_cond_t work, done, rwork;
	job **all;
	int n_all, cap_all;
	job *qhead, *qtail;        /* local jobs, for the workers */
	job *rhead, *rtail;        /* board jobs, for boards.c */
	int queued, rqueued, running, max_queue, stopping;
	pthread_t *threads;
	int n_workers, par_threads;
	void (*on_store)(void *);
	void *on_store_arg;
};

void srv_jobs_on_store(srv_jobs *j, void (*fn)(void *), void *arg)
{
	pthread_mutex_lock(&j->mu);
	j->on_store = fn;
	j->on_store_arg = arg;
	pthread_mutex_unlock(&j->mu);
}

static job *find(srv_jobs *j, const char *id)
{
	int i;
	for (i = j->n_all - 1; i >= 0; i--)
		if (!strcmp(j->all[i]->id, id))
			return j->all[i];
	return NULL;
}

static void job_free(job *jb)
{
	json_object_put(jb->outputs);
	json_object_put(jb->extra);
	free(jb);
}

/* Forget the oldest finished jobs past MAX_KEEP. Under the lock. */
static void prune(srv_jobs *j)
{
	int i, k = 0, drop = j->n_all - MAX_KEEP;

	if (drop <= 0)
		return;
	for (i = 0; i < j->n_all; i++) {
		job *jb = j->all[i];
		if (drop > 0 && jb->state >= S_SUCCEEDED) {
			job_free(jb);
			drop--;
		} else {
			j->all[k++] = jb;
		}
	}
	j->n_all = k;
}

/* Take jb out of the queue headed by *head (tail kept right). */
static void unqueue(job **head, job **tail, job *jb)
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

static void finish(srv_jobs *j, job *jb, int state)
{
	clock_gettime(CLOCK_REALTIME, &jb->finished);
	jb->state = state;
	pthread_cond_broadcast(&j->done);
}

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

/* The clock of an npu_sim report's totals (the run info has cycles and
 * time, not the clock it was timed at); 0 when it cannot be read. */
static double report_clock(const char *path)
{
	json_object *o = json_object_from_file(path), *npu, *tot, *clk;
	double mhz = 0;

	if (o && json_object_object_get_ex(o, F_NPU, &npu) &&
	    json_object_object_get_ex(npu, "totals", &tot) &&
	    json_object_object_get_ex(tot, F_CLOCK_MHZ, &clk) &&
	    (json_object_is_type(clk, json_type_double) || json_object_is_type(clk, json_type_int)))
		mhz = json_object_get_double(clk);
	json_object_put(o);
	return mhz;
}

/* Run one job outside the lock; fills result/report/outputs/err. 0 or -1.
 * The job's fields are only read by others once it is finished (under the
 * lock), so filling them here is safe. */
static int run_job(srv_jobs *j, job *jb, enpu_par *par)
{
	enpu_artifact *a = NULL;
	enpu_run_info info;
	char in[4300], out[4300], rep[4300];
	int ret = -1;

	memset(&info, 0, sizeof info);
	srv_cas_blob_path(j->cas, jb->input, in, sizeof in);
	srv_cas_tmpname(j->cas, ".npz", out, sizeof out);
	srv_cas_tmpname(j->cas, ".json", rep, sizeof rep);
	if (srv_artifact_get(j->cas, jb->artifact, j->lim, &a, &jb->err) != 0)
		goto out;
	if (enpu_run(a, in, jb->input_name, out, rep, par, &jb->cancel, j->lim, &info,
		     &jb->err) != 0)
		goto out;
	if (srv_cas_put_file(j->cas, out, jb->result, &jb->err) != 0 ||
	    srv_cas_put_file(j->cas, rep, jb->report, &jb->err) != 0)
		goto out;
	jb->seconds = info.seconds;
	jb->outputs = outputs_json(a);
	if (strcmp(enpu_artifact_backend(a), "npu_sim") == 0) {
		jb->has_npu = 1;
		jb->npu_cycles = info.npu_cycles;
		jb->npu_time_us = info.npu_time_us;
		jb->npu_dram_bytes = info.npu_dram_bytes;
		jb->npu_utilisation = info.npu_utilisation;
		jb->npu_clock_mhz = report_clock(rep);
	}
	ret = 0;
out:
	unlink(out);
	unlink(rep);
	srv_artifact_release(a);
	return ret;
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
		j->qhead = jb->qnext;
		if (!j->qhead)
			j->qtail = NULL;
		j->queued--;
		j->running++;
		jb->state = S_RUNNING;
		clock_gettime(CLOCK_REALTIME, &jb->started);
		pthread_mutex_unlock(&j->mu);

		double t0 = srv_now();
		int rc = run_job(j, jb, par);
		if (rc == 0 && j->on_store)
			j->on_store(j->on_store_arg);
		if (rc == 0)
			srv_log("info", "job=%s artifact=%.12s succeeded in %.3fs", jb->id,
				jb->artifact, srv_now() - t0);
		else
			srv_log("warn", "job=%s artifact=%.12s failed: %s %s", jb->id, jb->artifact,
				enpu_code_info_of(jb->err.code)->id, jb->err.message);

		pthread_mutex_lock(&j->mu);
		j->running--;
		if (rc != 0) {
			jb->seconds = srv_now() - t0;
			jb->failure = jb->cancel ? "cancelled" : "model";
		}
		finish(j, jb, rc == 0 ? S_SUCCEEDED : S_FAILED);
	}
	pthread_mutex_unlock(&j->mu);
	enpu_par_destroy(par);
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
	pthread_mutex_init(&j->mu, NULL);
	pthread_cond_init(&j->work, NULL);
	pthread_cond_init(&j->done, NULL);
	pthread_cond_init(&j->rwork, NULL);
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
	return j;
}

void srv_jobs_shutdown(srv_jobs *j)
{
	int i;

	if (!j)
		return;
	pthread_mutex_lock(&j->mu);
	j->stopping = 1;
	while (j->qhead) {
		job *jb = j->qhead;
		j->qhead = jb->qnext;
		enpu_fail(&jb->err, ENPU_E_JOB_FAILED, jb->id, "submit it again",
			  "the server shut down before job '%s' started", jb->id);
		jb->failure = "cancelled";
		finish(j, jb, S_FAILED);
	}
	j->qtail = NULL;
	j->queued = 0;
	while (j->rhead) {
		job *jb = j->rhead;
		j->rhead = jb->qnext;
		enpu_fail(&jb->err, ENPU_E_JOB_FAILED, jb->id, "submit it again",
			  "the server shut down before job '%s' started", jb->id);
		jb->failure = "cancelled";
		finish(j, jb, S_FAILED);
	}
	j->rtail = NULL;
	j->rqueued = 0;
	/* board jobs in flight stop at once (the dispatchers cancel them on
	 * their boards); local ones are left to finish */
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
}

void srv_jobs_free(srv_jobs *j)
{
	int i;

	if (!j)
		return;
	srv_jobs_shutdown(j);
	for (i = 0; i < j->n_all; i++)
		job_free(j->all[i]);
	free(j->all);
	free(j->threads);
	pthread_mutex_destroy(&j->mu);
	pthread_cond_destroy(&j->work);
	pthread_cond_destroy(&j->done);
	pthread_cond_destroy(&j->rwork);
	free(j);
}

/* Both kinds of submit: remote jobs go to the board queue with a deadline. */
static int submit(srv_jobs *j, const char *artifact, const char *backend, const char *input,
		  const char *input_name, int remote, int timeout_s, char id[33], enpu_err *e)
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
	while (find(j, jb->id));
	snprintf(jb->artifact, sizeof jb->artifact, "%s", artifact);
	snprintf(jb->backend, sizeof jb->backend, "%s", backend);
	snprintf(jb->input, sizeof jb->input, "%s", input);
	snprintf(jb->input_name, sizeof jb->input_name, "%s", input_name);
	clock_gettime(CLOCK_REALTIME, &jb->created);
	jb->state = S_QUEUED;
	j->all[j->n_all++] = jb;
	if (remote) {
		jb->remote = 1;
		jb->bk = enpu_backend_parse(backend);
		jb->deadline = srv_now() + timeout_s;
		jb->timeout_s = timeout_s;
		if (j->rtail)
			j->rtail->qnext = jb;
		else
			j->rhead = jb;
		j->rtail = jb;
		j->rqueued++;
		pthread_cond_broadcast(&j->rwork);
	} else {
		if (j->qtail)
			j->qtail->qnext = jb;
		else
			j->qhead = jb;
		j->qtail = jb;
		j->queued++;
		pthread_cond_signal(&j->work);
	}
	memcpy(id, jb->id, 33);
	prune(j);
	pthread_mutex_unlock(&j->mu);
	return 0;
}

int srv_jobs_submit(srv_jobs *j, const char *artifact, const char *backend,
		    const char *input, const char *input_name, char id[33], enpu_err *e)
{
	return submit(j, artifact, backend, input, input_name, 0, 0, id, e);
}

int srv_jobs_submit_remote(srv_jobs *j, const char *artifact, const char *backend,
			   const char *input, const char *input_name, int timeout_s,
			   char id[33], enpu_err *e)
{
	return submit(j, artifact, backend, input, input_name, 1, timeout_s, id, e);
}

static void add_time(json_object *o, const char *key, const struct timespec *t)
{
	char buf[48];
	if (t->tv_sec == 0) {
		json_object_object_add(o, key, NULL);
		return;
	}
	srv_time_str(t, buf, sizeof buf);
	json_object_object_add(o, key, json_object_new_string(buf));
}

/* Under the lock. */
static json_object *job_json(const job *jb)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, F_ID, json_object_new_string(jb->id));
	json_object_object_add(o, F_STATE, json_object_new_string(state_names[jb->state]));
	json_object_object_add(o, F_ARTIFACT, json_object_new_string(jb->artifact));
	json_object_object_add(o, F_BACKEND, json_object_new_string(jb->backend));
	json_object_object_add(o, F_INPUT, json_object_new_string(jb->input));
	add_time(o, F_CREATED, &jb->created);
	add_time(o, F_STARTED, &jb->started);
	add_time(o, F_FINISHED, &jb->finished);
	json_object_object_add(o, F_SECONDS, jb->state >= S_SUCCEEDED ?
			       srv_json_double(jb->seconds) : NULL);
	json_object_object_add(o, F_RESULT, jb->state == S_SUCCEEDED ?
			       json_object_new_string(jb->result) : NULL);
	json_object_object_add(o, F_OUTPUTS, jb->outputs ? json_object_get(jb->outputs)
			       : json_object_new_array());
	json_object_object_add(o, F_REPORT, jb->state == S_SUCCEEDED ?
			       json_object_new_string(jb->report) : NULL);
	if (jb->state == S_SUCCEEDED && jb->has_npu) {
		json_object *n = json_object_new_object();

		json_object_object_add(n, F_CYCLES, json_object_new_int64(
			jb->npu_cycles > INT64_MAX ? INT64_MAX : (int64_t)jb->npu_cycles));
		json_object_object_add(n, F_TIME_US, srv_json_double(jb->npu_time_us));
		json_object_object_add(n, F_CLOCK_MHZ, jb->npu_clock_mhz > 0 ?
				       srv_json_double(jb->npu_clock_mhz) : NULL);
		json_object_object_add(n, F_DRAM_BYTES, json_object_new_int64(
			jb->npu_dram_bytes > INT64_MAX ? INT64_MAX : (int64_t)jb->npu_dram_bytes));
		json_object_object_add(n, F_UTILISATION, srv_json_double(jb->npu_utilisation));
		json_object_object_add(o, F_NPU, n);
	}
	if (jb->remote) {
		json_object_object_add(o, F_BOARD, jb->board[0] ? json_object_new_string(jb->board)
				       : NULL);
		json_object_object_add(o, F_ATTEMPTS, json_object_new_int(jb->attempts));
		if (jb->state == S_SUCCEEDED && jb->extra) {
			json_object_object_foreach(jb->extra, k, v)
				json_object_object_add(o, k, json_object_get(v));
		}
	}
	if (jb->state == S_FAILED) {
		json_object *w = srv_error_json(&jb->err);
		json_object_object_add(o, F_ERROR, json_object_get(json_object_object_get(w, F_ERROR)));
		json_object_object_add(o, F_FAILURE, json_object_new_string(
			jb->failure ? jb->failure : "model"));
		json_object_put(w);
	}
	return o;
}

json_object *srv_jobs_get(srv_jobs *j, const char *id, int wait_s, int *final)
{
	struct timespec deadline;
	json_object *o = NULL;
	job *jb;

	*final = 0;
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += wait_s;
	pthread_mutex_lock(&j->mu);
	jb = find(j, id);
	/* jobs are only freed by prune(), which keeps unfinished ones and runs
	 * under this lock, so jb stays valid while we wait on it */
	while (jb && jb->state < S_SUCCEEDED && !j->stopping && wait_s > 0) {
		if (pthread_cond_timedwait(&j->done, &j->mu, &deadline) == ETIMEDOUT)
			break;
		jb = find(j, id);
	}
	if (jb) {
		*final = jb->state >= S_SUCCEEDED;
		o = job_json(jb);
	}
	pthread_mutex_unlock(&j->mu);
	return o;
}

int srv_jobs_result(srv_jobs *j, const char *id, char digest[65], const char **state)
{
	int ret = -1;
	job *jb;

	pthread_mutex_lock(&j->mu);
	jb = find(j, id);
	if (jb) {
		*state = state_names[jb->state];
		ret = jb->state == S_SUCCEEDED;
		if (ret)
			memcpy(digest, jb->result, 65);
	}
	pthread_mutex_unlock(&j->mu);
	return ret;
}

int srv_jobs_report(srv_jobs *j, const char *id, char digest[65], const char **state)
{
	int ret = -1;
	job *jb;

	pthread_mutex_lock(&j->mu);
	jb = find(j, id);
	if (jb) {
		*state = state_names[jb->state];
		ret = jb->state == S_SUCCEEDED;
		if (ret)
			memcpy(digest, jb->report, 65);
	}
	pthread_mutex_unlock(&j->mu);
	return ret;
}

int srv_jobs_cancel(srv_jobs *j, const char *id)
{
	job *jb;

	pthread_mutex_lock(&j->mu);
	jb = find(j, id);
	if (!jb) {
		pthread_mutex_unlock(&j->mu);
		return -1;
	}
	if (jb->state < S_SUCCEEDED && !jb->cancel)
		jb->cancel = SRV_CANCEL_USER;
	if (jb->state == S_QUEUED) {
		if (jb->remote) {
			unqueue(&j->rhead, &j->rtail, jb);
			j->rqueued--;
		} else {
			unqueue(&j->qhead, &j->qtail, jb);
			j->queued--;
		}
		enpu_fail(&jb->err, ENPU_E_JOB_FAILED, jb->id, NULL, "job '%s' was cancelled", jb->id);
		jb->failure = "cancelled";
		finish(j, jb, S_FAILED);
	}
	pthread_mutex_unlock(&j->mu);
	return 0;
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
	unqueue(&j->rhead, &j->rtail, jb);
	j->rqueued--;
	j->running++;
	jb->state = S_RUNNING;
	jb->attempts++;
	snprintf(jb->board, sizeof jb->board, "%s", board);
	if (jb->started.tv_sec == 0)
		clock_gettime(CLOCK_REALTIME, &jb->started);
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

/* The E0813 of a job that ran out of time; under the lock. */
static void fail_timeout(srv_jobs *j, job *jb, int timeout_s, const char *what)
{
	if (jb->last_fault[0])
		enpu_fail(&jb->err, ENPU_E_JOB_TIMEOUT, jb->id, NULL,
			  "job '%s' (%s) did not finish within %d s (--job-timeout): %s; last board "
			  "error: %s", jb->id, jb->backend, timeout_s, what, jb->last_fault);
	else
		enpu_fail(&jb->err, ENPU_E_JOB_TIMEOUT, jb->id, NULL,
			  "job '%s' (%s) did not finish within %d s (--job-timeout): %s", jb->id,
			  jb->backend, timeout_s, what);
	jb->failure = "timeout";
	finish(j, jb, S_FAILED);
}

int srv_jobs_remote_done(srv_jobs *j, const char *id, srv_rkind kind, srv_rresult *res,
			 const enpu_err *e, int retries)
{
	job *jb;
	int requeued = 0;

	pthread_mutex_lock(&j->mu);
	jb = find(j, id);
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
		memcpy(jb->result, res->result, sizeof jb->result);
		memcpy(jb->report, res->report, sizeof jb->report);
		jb->seconds = res->seconds;
		jb->outputs = res->outputs;
		jb->extra = res->extra;
		res->outputs = res->extra = NULL;
		finish(j, jb, S_SUCCEEDED);
		break;
	case SRV_RUN_MODEL:
		jb->err = *e;
		jb->failure = "model";
		finish(j, jb, S_FAILED);
		break;
	case SRV_RUN_FAULT:
		snprintf(jb->last_fault, sizeof jb->last_fault, "%s", e->message);
		if (jb->attempts <= retries && !jb->cancel && !j->stopping) {
			/* back to the head: it has waited longest */
			jb->state = S_QUEUED;
			jb->qnext = j->rhead;
			j->rhead = jb;
			if (!j->rtail)
				j->rtail = jb;
			j->rqueued++;
			requeued = 1;
			pthread_cond_broadcast(&j->rwork);
			break;
		}
		jb->err = *e;
		jb->err.code = ENPU_E_BOARD_FAULT;
		if (jb->attempts > 1) {
			size_t n = strlen(jb->err.message);
			snprintf(jb->err.message + n, sizeof jb->err.message - n,
				 " (after %d tries on boards)", jb->attempts);
		}
		jb->failure = "board";
		finish(j, jb, S_FAILED);
		break;
	case SRV_RUN_CANCEL:
		if (jb->cancel == SRV_CANCEL_USER) {
			enpu_fail(&jb->err, ENPU_E_JOB_FAILED, jb->id, NULL,
				  "job '%s' was cancelled (and on board '%s')", jb->id, jb->board);
			jb->failure = "cancelled";
			finish(j, jb, S_FAILED);
		} else if (jb->cancel == SRV_CANCEL_SHUTDOWN) {
			enpu_fail(&jb->err, ENPU_E_JOB_FAILED, jb->id, "submit it again",
				  "the server shut down while job '%s' ran on board '%s'", jb->id,
				  jb->board);
			jb->failure = "cancelled";
			finish(j, jb, S_FAILED);
		} else {
			char what[160];
			snprintf(what, sizeof what, "cancelled on board '%s'", jb->board);
			fail_timeout(j, jb, jb->timeout_s, what);
		}
		break;
	}
	pthread_mutex_unlock(&j->mu);
	return requeued;
}

void srv_jobs_expire(srv_jobs *j)
{
	double now = srv_now();
	job *q, *next;
	int i;

	pthread_mutex_lock(&j->mu);
	for (q = j->rhead; q; q = next) {
		next = q->qnext;
		if (now < q->deadline)
			continue;
		unqueue(&j->rhead, &j->rtail, q);
		j->rqueued--;
		fail_timeout(j, q, q->timeout_s, q->attempts ? "no board took it again"
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

int srv_jobs_pins(srv_jobs *j, char (**out)[65])
{
	char (*p)[65] = NULL;
	int i, n = 0, cap = 0;

	*out = NULL;
	pthread_mutex_lock(&j->mu);
	for (i = 0; i < j->n_all; i++) {
		job *jb = j->all[i];
		if (jb->state >= S_SUCCEEDED)
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

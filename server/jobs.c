/* jobs.c: the job table, its priority queues, the worker pool and the
 * timer. Each worker owns a kernel thread pool (enpu_par) and takes one job
 * at a time: load the artifact (via the LRU in artifact.c), enpu_run into
 * tmp/, store the result and the report.json in the CAS. Results are the
 * same bytes for any worker count. Board jobs (zynq_ps, fpga_board on a lab
 * server) wait in a second queue that boards.c's dispatchers take from; they
 * carry the board that ran them and how many tries it took. Both queues are
 * ordered by priority, then first come first served. Every job has a
 * deadline (queue + run): the timer thread times out queued local jobs and
 * flags running ones (enpu_run polls the flag between ops); boards.c's timer
 * does the same for board jobs through srv_jobs_expire. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "srv.h"
#include "artifact.h"
#include "http.h"
#include "obs.h"
#include "ops.h"
#include "jobs.h"
#include "fault.h"

#define DEFAULT_TIMEOUT 600       /* seconds, queue + run */
#define DEFAULT_TTL     86400     /* seconds a finished job is kept */
#define DEFAULT_HISTORY 10000     /* finished jobs kept at most */
#define TICK_NS         100000000L  /* the timer's period: 100 ms */
#define N_SNAPS         8         /* state changes kept for a slow event reader */
#define EWMA_ALPHA      0.3       /* weight of the newest run time in the average */

enum { S_QUEUED, S_RUNNING, S_SUCCEEDED, S_FAILED, S_CANCELLED, S_TIMED_OUT, S_COUNT };
static const char *const state_names[S_COUNT] = {
	JOB_QUEUED, JOB_RUNNING, JOB_SUCCEEDED, JOB_FAILED, JOB_CANCELLED, JOB_TIMED_OUT,
};
#define FINAL(s) ((s) >= S_SUCCEEDED)

static const char *const prio_names[] = {PRIO_LOW, PRIO_NORMAL, PRIO_HIGH};

typedef struct job {
	char id[33];
	char artifact[65];
	char backend[32];
	char input[65];
	char input_name[256];
	int state, prio, bk;
	struct timespec created, started, finished;
	double t_created, t_started, t_attempt;   /* srv_now() */
	double deadline;
	int timeout_s;
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
	int remote, attempts;
	char board[64];
	char last_fault[800];      /* the last board fault, for a timeout's message */
	const char *failure;       /* "model", "board", "timeout", "cancelled" once failed */
	json_object *extra;        /* keys of the board's job JSON shown as they are */
	/* event streams: a counter of state changes and, while someone
	 * watches, the JSON of the last few */
	unsigned seq;
	int watchers;
	char *snap[N_SNAPS];
	unsigned snap_seq[N_SNAPS];
	int snap_state[N_SNAPS];
} job;

struct srv_jobs {
	srv_cas *cas;
	const enpu_limits *lim;
	pthread_mutex_t mu;
	pthread_cond_t work, done, rwork, tick;
	job **all;                 /* in order of submission */
	int n_all, cap_all;
	job *qhead, *qtail;        /* local jobs, for the workers */
	job *rhead, *rtail;        /* board jobs, for boards.c */
	int queued, rqueued, running, max_queue, stopping;
	pthread_t *threads;
	int n_workers, par_threads;
	pthread_t timer;
	int timer_on, timer_stop;
	int timeout_s, ttl_s, history;
	double avg[ENPU_BK_COUNT]; /* moving average of run seconds; 0 = none yet */
	void (*on_store)(void *);
	void *on_store_arg;
	const srv_observer *obs;   /* told of each final state; NULL = none */
};

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
		if (!strcmp(s, state_names[i]))
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

static job *find(srv_jobs *j, const char *id)
{
	int i;
	for (i = j->n_all - 1; i >= 0; i--)
		if (!strcmp(j->all[i]->id, id))
			return j->all[i];
	return NULL;
}

static void drop_snaps(job *jb)
{
	int k;
	for (k = 0; k < N_SNAPS; k++) {
		free(jb->snap[k]);
		jb->snap[k] = NULL;
		jb->snap_seq[k] = 0;
	}
}

static void job_free(job *jb)
{
	json_object_put(jb->outputs);
	json_object_put(jb->extra);
	drop_snaps(jb);
	free(jb);
}

/* Forget finished jobs past the TTL, and the oldest ones past the history
 * bound. A job someone streams the events of stays. Under the lock. */
static void prune(srv_jobs *j)
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
			job_free(jb);
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

static double avg_of(const srv_jobs *j, int bk)
{
	return bk >= 0 && bk < ENPU_BK_COUNT ? j->avg[bk] : 0;
}

/* Seconds of work still ahead in the running jobs of one kind (local or
 * board): each one's average run time minus what it has run so far. -1
 * when a backend involved has no average yet. */
static double running_work(const srv_jobs *j, int remote, double now)
{
	double w = 0;
	int i;

	for (i = 0; i < j->n_all; i++) {
		const job *r = j->all[i];
		double a;
		if (r->state != S_RUNNING || r->remote != remote)
			continue;
		if ((a = avg_of(j, r->bk)) <= 0)
			return -1;
		if (a > now - r->t_attempt)
			w += a - (now - r->t_attempt);
	}
	return w;
}

/* Queue position (1 = next) and ETA of a queued job; the ETA is -1 when
 * unknown. The estimator: the running jobs' remaining time plus the
 * average run time of every job ahead of it, shared by the workers (board
 * jobs: one at a time), plus its own average run time. Averages are
 * exponential moving averages (weight 0.3 for the newest) of the run times
 * of the jobs that ended on each backend. Under the lock. */
static void queue_place(const srv_jobs *j, const job *jb, double run_work[2], int *pos,
			double *eta)
{
	const job *q = jb->remote ? j->rhead : j->qhead;
	double work, own = avg_of(j, jb->bk), now = srv_now();
	int slots = jb->remote ? 1 : (j->n_workers > 0 ? j->n_workers : 1);

	if (run_work[jb->remote] < -1.5)     /* not computed yet */
		run_work[jb->remote] = running_work(j, jb->remote, now);
	work = run_work[jb->remote];
	*pos = 1;
	for (; q && q != jb; q = q->qnext) {
		double a = avg_of(j, q->bk);
		(*pos)++;
		if (a <= 0)
			work = -1;
		else if (work >= 0)
			work += a;
	}
	*eta = work < 0 || own <= 0 ? -1 : floor((work / slots + own) * 10 + 0.5) / 10;
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

/* Under the lock. run_work caches the running jobs' work over a list
 * ({-2, -2} = not computed). */
static json_object *job_json(const srv_jobs *j, const job *jb, double run_work[2])
{
	json_object *o = json_object_new_object();
	double rw[2] = {-2, -2};

	if (!run_work)
		run_work = rw;
	json_object_object_add(o, F_ID, json_object_new_string(jb->id));
	json_object_object_add(o, F_STATE, json_object_new_string(state_names[jb->state]));
	json_object_object_add(o, F_ARTIFACT, json_object_new_string(jb->artifact));
	json_object_object_add(o, F_BACKEND, json_object_new_string(jb->backend));
	json_object_object_add(o, F_INPUT, json_object_new_string(jb->input));
	json_object_object_add(o, F_PRIORITY, json_object_new_string(srv_prio_name(jb->prio)));
	json_object_object_add(o, F_TIMEOUT, json_object_new_int(jb->timeout_s));
	if (jb->state == S_QUEUED) {
		int pos;
		double eta;
		queue_place(j, jb, run_work, &pos, &eta);
		json_object_object_add(o, F_POSITION, json_object_new_int(pos));
		json_object_object_add(o, F_ETA, eta >= 0 ? srv_json_double(eta) : NULL);
	} else {
		json_object_object_add(o, F_POSITION, NULL);
		json_object_object_add(o, F_ETA, NULL);
	}
	add_time(o, F_CREATED, &jb->created);
	add_time(o, F_STARTED, &jb->started);
	add_time(o, F_FINISHED, &jb->finished);
	json_object_object_add(o, F_SECONDS, FINAL(jb->state) ? srv_json_double(jb->seconds) : NULL);
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
	if (FINAL(jb->state) && jb->state != S_SUCCEEDED) {
		json_object *w = srv_error_json(&jb->err);
		json_object_object_add(o, F_ERROR, json_object_get(json_object_object_get(w, F_ERROR)));
		json_object_object_add(o, F_FAILURE, json_object_new_string(
			jb->failure ? jb->failure : "model"));
		json_object_put(w);
	}
	return o;
}

static char *job_text(const srv_jobs *j, const job *jb)
{
	json_object *o = job_json(j, jb, NULL);
	char *s = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
							JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return s;
}

/* Every state change goes through here (its fields already filled): the
 * counter moves, watchers get a snapshot, waiters wake. Under the lock. */
static void set_state(srv_jobs *j, job *jb, int state)
{
	jb->state = state;
	jb->seq++;
	if (jb->watchers > 0) {
		int k = (int)(jb->seq % N_SNAPS);
		free(jb->snap[k]);
		jb->snap[k] = job_text(j, jb);
		jb->snap_seq[k] = jb->seq;
		jb->snap_state[k] = state;
	}
	pthread_cond_broadcast(&j->done);
}

static void finish(srv_jobs *j, job *jb, int state)
{
	double now = srv_now();

	clock_gettime(CLOCK_REALTIME, &jb->finished);
	/* the counters move before any waiter can see the final state (it
	 * needs our lock); the metrics lock is a leaf, so this nests safely */
	srv_obs_job_done(j->obs, jb->backend, state_names[state],
			     (jb->started.tv_sec ? jb->t_started : now) - jb->t_created,
			     jb->started.tv_sec ? now - jb->t_started : -1);
	set_state(j, jb, state);
}

/* A run time for the ETA estimator. Under the lock. */
static void learn(srv_jobs *j, int bk, double seconds)
{
	if (bk < 0 || bk >= ENPU_BK_COUNT || !(seconds >= 0))
		return;
	j->avg[bk] = j->avg[bk] > 0 ? (1 - EWMA_ALPHA) * j->avg[bk] + EWMA_ALPHA * seconds
				    : (seconds > 0 ? seconds : 1e-6);
}

/* E0813 for a job that ran out of time; under the lock. */
static void fail_timeout(srv_jobs *j, job *jb, const char *what)
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
	finish(j, jb, S_TIMED_OUT);
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
	srv_fault_point("board-run");   /* accepted (202), never runs */
	if (srv_artifact_get(j->cas, jb->artifact, j->lim, &a, &jb->err) != 0)
		goto out;
	if (enpu_run(a, in, jb->input_name, out, rep, par, &jb->cancel, j->lim, &info,
		     &jb->err) != 0)
		goto out;
	srv_fault_point("result");   /* result.npz written in tmp/, not stored, job running */
	if (srv_cas_put_file(j->cas, out, jb->result, &jb->err) != 0 ||
	    srv_cas_put_file(j->cas, rep, jb->report, &jb->err) != 0)
		goto out;
	jb->seconds = info.seconds;
	jb->outputs = outputs_json(a);
	if (info.has_npu) {
		jb->has_npu = 1;
		jb->npu_cycles = info.npu_cycles;
		jb->npu_time_us = info.npu_time_us;
		jb->npu_dram_bytes = info.npu_dram_bytes;
		jb->npu_utilisation = info.npu_utilisation;
		jb->npu_clock_mhz = report_clock(rep);
	}
	ret = 0;
out:
	if (ret != 0)
		srv_fault_storage(&jb->err);   /* a full cache disk is E0810, not E0003 */
	unlink(out);
	unlink(rep);
	srv_artifact_release(a);
	return ret;
}

/* A local run that stopped with its cancel flag up: say why. Under the lock. */
static void end_cancelled(srv_jobs *j, job *jb)
{
	char why[sizeof jb->err.message];

	snprintf(why, sizeof why, "%s", jb->err.message);
	if (jb->cancel == SRV_CANCEL_TIMEOUT) {
		fail_timeout(j, jb, why[0] ? why : "stopped while running");
		return;
	}
	if (jb->cancel == SRV_CANCEL_SHUTDOWN)
		enpu_fail(&jb->err, ENPU_E_JOB_FAILED, jb->id, "submit it again",
			  "the server shut down while job '%s' ran (%s)", jb->id, why);
	else
		enpu_fail(&jb->err, ENPU_E_JOB_FAILED, jb->id, NULL,
			  "job '%s' was cancelled while running (%s)", jb->id, why);
	jb->failure = "cancelled";
	finish(j, jb, S_CANCELLED);
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
		unqueue(&j->qhead, &j->qtail, jb);
		j->queued--;
		j->running++;
		clock_gettime(CLOCK_REALTIME, &jb->started);
		jb->t_started = jb->t_attempt = srv_now();
		set_state(j, jb, S_RUNNING);
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
			learn(j, jb->bk, srv_now() - t0);
			finish(j, jb, S_SUCCEEDED);
		} else {
			jb->seconds = srv_now() - t0;
			if (jb->cancel) {
				end_cancelled(j, jb);
			} else {
				learn(j, jb->bk, jb->seconds);
				jb->failure = "model";
				finish(j, jb, S_FAILED);
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
		unqueue(&j->qhead, &j->qtail, q);
		j->queued--;
		fail_timeout(j, q, "it was still waiting in the queue");
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
		prune(j);
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
		finish(j, jb, S_CANCELLED);
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
		job_free(j->all[i]);
	free(j->all);
	free(j->threads);
	pthread_mutex_destroy(&j->mu);
	pthread_cond_destroy(&j->work);
	pthread_cond_destroy(&j->done);
	pthread_cond_destroy(&j->rwork);
	pthread_cond_destroy(&j->tick);
	free(j);
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
	while (find(j, jb->id));
	snprintf(jb->artifact, sizeof jb->artifact, "%s", q->artifact);
	snprintf(jb->backend, sizeof jb->backend, "%s", q->backend);
	snprintf(jb->input, sizeof jb->input, "%s", q->input);
	snprintf(jb->input_name, sizeof jb->input_name, "%s", q->input_name);
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
	prune(j);
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
	srv_jobreq q = {artifact, backend, input, input_name, SRV_PRIO_NORMAL, 0, 0};
	return submit(j, &q, 0, id, e);
}

int srv_jobs_submit_remote(srv_jobs *j, const char *artifact, const char *backend,
			   const char *input, const char *input_name, int timeout_s,
			   char id[33], enpu_err *e)
{
	srv_jobreq q = {artifact, backend, input, input_name, SRV_PRIO_NORMAL, timeout_s, 1};
	return submit(j, &q, 1, id, e);
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
	 * under this lock; find again after each wake-up all the same */
	while (jb && !FINAL(jb->state) && !j->stopping && wait_s > 0) {
		if (pthread_cond_timedwait(&j->done, &j->mu, &deadline) == ETIMEDOUT)
			break;
		jb = find(j, id);
	}
	if (jb) {
		*final = FINAL(jb->state);
		o = job_json(j, jb, NULL);
	}
	pthread_mutex_unlock(&j->mu);
	return o;
}

json_object *srv_jobs_list(srv_jobs *j, unsigned states, const char *backend, int limit)
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
		json_object_array_add(arr, job_json(j, jb, rw));
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
	jb = find(j, id);
	if (jb) {
		*state = state_names[jb->state];
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
	jb = find(j, id);
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
			unqueue(&j->rhead, &j->rtail, jb);
			j->rqueued--;
		} else {
			unqueue(&j->qhead, &j->qtail, jb);
			j->queued--;
		}
		enpu_fail(&jb->err, ENPU_E_JOB_FAILED, jb->id, NULL,
			  "job '%s' was cancelled before it started", jb->id);
		jb->failure = "cancelled";
		finish(j, jb, S_CANCELLED);
	}
	pthread_mutex_unlock(&j->mu);
	return ret;
}

/* ---- event streams ------------------------------------------------------------ */

int srv_jobs_watch(srv_jobs *j, const char *id, unsigned *seq, char **json, int *final)
{
	job *jb;

	pthread_mutex_lock(&j->mu);
	jb = find(j, id);
	if (!jb) {
		pthread_mutex_unlock(&j->mu);
		return -1;
	}
	jb->watchers++;
	*seq = jb->seq;
	*json = job_text(j, jb);
	*final = FINAL(jb->state);
	pthread_mutex_unlock(&j->mu);
	return 0;
}

int srv_jobs_watch_next(srv_jobs *j, const char *id, unsigned *seq, double wait_s,
			char **json, int *final)
{
	struct timespec dl;
	long ns;
	int rc;

	clock_gettime(CLOCK_REALTIME, &dl);
	if (wait_s < 0)
		wait_s = 0;
	ns = dl.tv_nsec + (long)((wait_s - floor(wait_s)) * 1e9);
	dl.tv_sec += (time_t)wait_s + ns / 1000000000L;
	dl.tv_nsec = ns % 1000000000L;
	pthread_mutex_lock(&j->mu);
	for (;;) {
		job *jb = find(j, id);
		if (!jb) {
			rc = -1;
			break;
		}
		if (jb->seq != *seq) {
			unsigned want = *seq + 1;
			int k = (int)(want % N_SNAPS);
			if (jb->snap[k] && jb->snap_seq[k] == want) {
				*json = strdup(jb->snap[k]);
				*final = FINAL(jb->snap_state[k]);
				*seq = want;
			} else {   /* fell behind, or not watched then: the state now */
				*json = job_text(j, jb);
				*final = FINAL(jb->state);
				*seq = jb->seq;
			}
			rc = *json ? 1 : -1;
			break;
		}
		if (j->stopping) {
			rc = -1;
			break;
		}
		if (pthread_cond_timedwait(&j->done, &j->mu, &dl) == ETIMEDOUT) {
			rc = 0;
			break;
		}
	}
	pthread_mutex_unlock(&j->mu);
	return rc;
}

void srv_jobs_unwatch(srv_jobs *j, const char *id)
{
	job *jb;

	pthread_mutex_lock(&j->mu);
	jb = find(j, id);
	if (jb && jb->watchers > 0 && --jb->watchers == 0)
		drop_snaps(jb);
	pthread_mutex_unlock(&j->mu);
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
	jb->attempts++;
	snprintf(jb->board, sizeof jb->board, "%s", board);
	if (jb->started.tv_sec == 0) {
		clock_gettime(CLOCK_REALTIME, &jb->started);
		jb->t_started = srv_now();
	}
	jb->t_attempt = srv_now();
	set_state(j, jb, S_RUNNING);
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
		learn(j, jb->bk, srv_now() - jb->t_attempt);
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
			jb->qnext = j->rhead;
			j->rhead = jb;
			if (!j->rtail)
				j->rtail = jb;
			j->rqueued++;
			requeued = 1;
			set_state(j, jb, S_QUEUED);
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
			finish(j, jb, S_CANCELLED);
		} else if (jb->cancel == SRV_CANCEL_SHUTDOWN) {
			enpu_fail(&jb->err, ENPU_E_JOB_FAILED, jb->id, "submit it again",
				  "the server shut down while job '%s' ran on board '%s'", jb->id,
				  jb->board);
			jb->failure = "cancelled";
			finish(j, jb, S_CANCELLED);
		} else {
			char what[160];
			snprintf(what, sizeof what, "cancelled on board '%s'", jb->board);
			fail_timeout(j, jb, what);
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
		fail_timeout(j, q, q->attempts ? "no board took it again"
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

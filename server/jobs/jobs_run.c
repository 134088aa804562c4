/* jobs_run.c: the worker pool and the timer of the job table. Each worker
 * owns a kernel thread pool (enpu_par) and takes one job at a time: load
 * the artifact (via the LRU in artifact.c), enpu_run into tmp/, store the
 * result and the report.json in the CAS. Results are the same bytes for
 * any worker count. The timer times out queued local jobs past their
 * deadline (the earliest first, from the deadline heap) and flags running
 * ones (enpu_run polls the flag between ops), and forgets finished jobs,
 * in batches with the lock let go between them;
 * and at the drain's deadline (srv_jobs_drain) it cancels the queued jobs
 * and stops the running ones. Also the table's start, shutdown and free. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "jobs_int.h"
#include "artifact.h"
#include "ops.h"
#include "fault.h"
#include "npz.h"


/* The job's input tensors. A small input (most are) is read whole and
 * parsed in memory: libzip's file source costs two stats and five seeks
 * more per job; read before, its bytes are a copy from the cache's memory
 * (srv_cas_read_small: a stat, no open and read). A larger one, or one
 * that does not read, goes through enpu_npz_read (its words for what is
 * wrong). An input whose bytes equal those of one parsed before (of at
 * most INPUT_MEMO_BYTES, INPUT_MEMO_SLOTS of them by digest) is a copy of
 * its tensors: the same bytes parse to the same tensors, and libzip's
 * open of an archive was a tenth of a small job's time. */
#define SMALL_INPUT (1 << 20)
#define INPUT_MEMO_SLOTS 16
#define INPUT_MEMO_BYTES (64 * 1024)
typedef struct input_memo {
	char digest[65];
	enpu_buf bytes;      /* what was parsed */
	enpu_tlist t;        /* into these */
} input_memo;
static input_memo input_memo_tab[INPUT_MEMO_SLOTS];
static pthread_mutex_t input_memo_mu = PTHREAD_MUTEX_INITIALIZER;

static input_memo *input_slot(const char *digest)
{
	/* a digest's first hex digit: 16 slots */
	return &input_memo_tab[(digest[0] <= '9' ? digest[0] - '0' : digest[0] - 'a' + 10) %
			       INPUT_MEMO_SLOTS];
}

/* 1 with *out the copy of the tensors b parsed to before, 0 when not known. */
static int input_memo_get(const char *digest, const enpu_buf *b, enpu_tlist *out, enpu_err *e)
{
	input_memo *m = input_slot(digest);
	int hit = 0;

	pthread_mutex_lock(&input_memo_mu);
	if (!strcmp(m->digest, digest) && m->bytes.len == b->len &&
	    !memcmp(m->bytes.data, b->data, b->len))
		hit = enpu_tlist_copy(&m->t, out, e) == 0 ? 1 : -1;
	pthread_mutex_unlock(&input_memo_mu);
	return hit;
}

static void input_memo_put(const char *digest, const enpu_buf *b, const enpu_tlist *t)
{
	input_memo *m = input_slot(digest);
	enpu_err ign = ENPU_ERR_INIT;

	if (b->len > INPUT_MEMO_BYTES)
		return;
	pthread_mutex_lock(&input_memo_mu);
	m->digest[0] = '\0';
	enpu_buf_reset(&m->bytes);
	enpu_tlist_free(&m->t);
	if (enpu_buf_add(&m->bytes, b->data, b->len) == 0 && enpu_tlist_copy(t, &m->t, &ign) == 0)
		memcpy(m->digest, digest, sizeof m->digest);
	pthread_mutex_unlock(&input_memo_mu);
}

static void input_memo_clear(void)
{
	pthread_mutex_lock(&input_memo_mu);
	for (int i = 0; i < INPUT_MEMO_SLOTS; i++) {
		input_memo_tab[i].digest[0] = '\0';
		enpu_buf_free(&input_memo_tab[i].bytes);
		enpu_tlist_free(&input_memo_tab[i].t);
	}
	pthread_mutex_unlock(&input_memo_mu);
}

static int read_input(srv_cas *c, const char *digest, const char *path, const char *label,
		      const enpu_limits *lim, enpu_tlist *out, enpu_err *e)
{
	enpu_buf b = ENPU_BUF_INIT;
	int rc;

	if (srv_cas_read_small(c, digest, SMALL_INPUT, &b) != 0)
		rc = enpu_npz_read(path, label, lim, out, e);
	else if ((rc = input_memo_get(digest, &b, out, e)) != 0)
		rc = rc > 0 ? 0 : -1;
	else if ((rc = enpu_npz_read_mem(b.data, b.len, label, lim, out, e)) == 0)
		input_memo_put(digest, &b, out);
	enpu_buf_free(&b);
	return rc;
}

/* Run one job outside the lock; fills result/report/outputs, or *e. 0 or
 * -1. The job's fields are only read by others once it is finished (under
 * the lock), so filling them here is safe. */
static int run_job(srv_jobs *j, job *jb, enpu_par *par, enpu_err *e)
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
	srv_fault_hold(&jb->cancel);    /* EULERNPUD_HOLD: running, until released */
	if ((jb->checked ? srv_artifact_get_checked : srv_artifact_get)(j->cas, jb->artifact, j->lim,
									 &a, e) != 0)
		goto out;
	/* in memory: the result and report go into the CAS as they are
	 * written (hashed on the way), never through a temp file */
	if (read_input(j->cas, jb->input, in, label, j->lim, &inputs, e) != 0 ||
	    enpu_run_mem(a, &inputs, label, &results, &rep, par, &jb->cancel, j->lim,
			 &info, e) != 0 ||
	    enpu_npz_write_mem(&results, "result.npz", &res, e) != 0)
		goto out;
	srv_fault_point("result");   /* the result made, not stored, job running */
	/* not fsynced: what a crash loses, a resubmission makes again, byte
	 * for byte (the job table itself is in memory; docs/architecture.md) */
	if (srv_cas_put_mem_volatile(j->cas, res.data, res.len, jb->result, e) != 0 ||
	    srv_cas_put_mem_volatile(j->cas, rep.data, rep.len, jb->report, e) != 0)
		goto out;
	jb->seconds = info.seconds;
	jb->outputs = strdup(enpu_artifact_outputs_json(a));   /* NULL: none shown */
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
		srv_fault_storage(e);   /* a full cache disk is E0810, not E0003 */
	enpu_tlist_free(&inputs);
	enpu_tlist_free(&results);
	enpu_buf_free(&res);
	enpu_buf_free(&rep);
	srv_artifact_release(a);
	return ret;
}

/* A local run that stopped with its cancel flag up (*e: where it
 * stopped): say why. Under the lock. */
static void end_cancelled(srv_jobs *j, job *jb, const enpu_err *stopped)
{
	char why[sizeof stopped->message];
	enpu_err e = ENPU_ERR_INIT;

	snprintf(why, sizeof why, "%s", stopped->message);
	if (jb->cancel == SRV_CANCEL_TIMEOUT) {
		jobs_fail_timeout(j, jb, why[0] ? why : "stopped while running");
		return;
	}
	if (jb->cancel == SRV_CANCEL_SHUTDOWN)
		enpu_fail(&e, ENPU_E_JOB_FAILED, jb->id, "submit it again",
			  "the server shut down while job '%s' ran (%s)", jb->id, why);
	else if (jb->cancel == SRV_CANCEL_DRAIN)
		enpu_fail(&e, ENPU_E_JOB_FAILED, jb->id, "submit it again",
			  "the server's drain timed out (--drain-timeout %d s) while job '%s' ran (%s)",
			  j->drain_s, jb->id, why);
	else
		enpu_fail(&e, ENPU_E_JOB_FAILED, jb->id, NULL,
			  "job '%s' was cancelled while running (%s)", jb->id, why);
	jb->failure = "cancelled";
	jobs_finish(j, jb, S_CANCELLED, &e);
}

/* The end of a local run, under the lock. */
static void end_run(srv_jobs *j, job *jb, int rc, double t0, const enpu_err *e)
{
	if (rc == 0) {
		jlast *l = jobs_last_run(j, jb->artifact);
		double s = srv_now() - t0;

		jobs_learn(j, jb->bk, s);
		memcpy(l->artifact, jb->artifact, sizeof l->artifact);
		l->seconds = s;
		jobs_finish(j, jb, S_SUCCEEDED, NULL);
		return;
	}
	jb->seconds = srv_now() - t0;
	if (jb->cancel) {
		end_cancelled(j, jb, e);
	} else {
		jobs_learn(j, jb->bk, jb->seconds);
		jb->failure = "model";
		jobs_finish(j, jb, S_FAILED, e);
	}
}

/* The next local job to start, NULL when none may (or the drain ended). */
static job *next_local(srv_jobs *j)
{
	jq_node *n = j->drain_fired ? NULL : jq_first(&j->lq);
	return n ? n->item : NULL;
}

/* Run jb (started, its slot taken) without the lock, end it, give the slot
 * back (here: a run on its submitter's thread, counted in n_here, in the
 * same hold of the lock). Called and returns without the lock. */
static void run_taken(srv_jobs *j, job *jb, enpu_par *par, int here)
{
	enpu_err e = ENPU_ERR_INIT;
	double t0 = srv_now();
	int rc = run_job(j, jb, par, &e);

	if (rc == 0 && j->on_store)
		j->on_store(j->on_store_arg);
	if (rc == 0)
		srv_log_job_done(jb->id, jb->artifact, srv_now() - t0);
	else
		srv_log("warn", "job=%s artifact=%.12s %s: %s %s", jb->id, jb->artifact,
			jb->cancel == SRV_CANCEL_TIMEOUT ? "timed out" : jb->cancel ? "cancelled"
			: "failed", enpu_code_info_of(e.code)->id, e.message);
	pthread_mutex_lock(&j->mu);
	end_run(j, jb, rc, t0, &e);
	j->free_slots++;
	if (next_local(j))
		pthread_cond_signal(&j->work);
	if (here && --j->n_here == 0)
		pthread_cond_broadcast(&j->here_done);
	pthread_mutex_unlock(&j->mu);
}

/* A worker: takes the next local job while a slot is free (a run on its
 * submitter's thread holds one too, so --workers bounds both kinds). */
static void *worker(void *arg)
{
	srv_jobs *j = arg;
	enpu_par *par = enpu_par_create(j->par_threads);

	pthread_mutex_lock(&j->mu);
	for (;;) {
		job *jb;

		while (!j->stopping && !(j->free_slots > 0 && next_local(j)))
			pthread_cond_wait(&j->work, &j->mu);
		if (j->stopping)
			break;
		jb = next_local(j);
		jobs_start_run(j, jb);
		j->free_slots--;
		pthread_mutex_unlock(&j->mu);
		run_taken(j, jb, par, 0);
		pthread_mutex_lock(&j->mu);
	}
	pthread_mutex_unlock(&j->mu);
	enpu_par_destroy(par);
	return NULL;
}

/* Only with --threads 1 (submit_locked checks): a one-thread pool is a
 * calloc, not a thread start. */
void jobs_run_here(srv_jobs *j, job *jb)
{
	enpu_par *par = enpu_par_create(1);

	run_taken(j, jb, par, 1);
	enpu_par_destroy(par);
}

/* Time out at most max queued local jobs past their deadline (the
 * earliest first, from the heap); flag the running ones. 1 when more are
 * due. */
static int expire_local(srv_jobs *j, int max)
{
	double now = srv_now();
	const jheap_ent *top;

	for (; max > 0 && (top = jheap_top(&j->lheap)) && now >= top->key; max--)
		jobs_fail_timeout(j, top->item, "it was still waiting in the queue");
	for (job *jb = j->run.head; jb; jb = jb->lnext)
		if (!jb->remote && now >= jb->deadline && !jb->cancel)
			jb->cancel = SRV_CANCEL_TIMEOUT;
	top = jheap_top(&j->lheap);
	return top && now >= top->key;
}

/* End every queued job (both queues) as cancelled, in batches: the server
 * stops (drain = 0) or its drain timed out. Under the lock. */
static void cancel_queued(srv_jobs *j, int drain)
{
	for (;;) {
		for (int n = 0; n < JOBS_BATCH; n++) {
			jq_node *qn = jq_first(&j->lq);
			enpu_err e = ENPU_ERR_INIT;
			job *jb;

			if (!qn)
				qn = jq_first(&j->rq);
			if (!qn)
				return;
			jb = qn->item;
			if (drain)
				enpu_fail(&e, ENPU_E_JOB_FAILED, jb->id, "submit it again",
					  "the server's drain timed out (--drain-timeout %d s) before "
					  "job '%s' started", j->drain_s, jb->id);
			else
				enpu_fail(&e, ENPU_E_JOB_FAILED, jb->id, "submit it again",
					  "the server shut down before job '%s' started", jb->id);
			jb->failure = "cancelled";
			jobs_finish(j, jb, S_CANCELLED, &e);
		}
		jobs_breathe(j);
	}
}

/* Past the drain's deadline: no job starts any more, the queued ones are
 * cancelled, the running ones asked to stop at their next op. Once. */
static void drain_check(srv_jobs *j)
{
	if (!j->drain_at || j->drain_fired || srv_now() < j->drain_at)
		return;
	j->drain_fired = 1;
	cancel_queued(j, 1);
	for (job *jb = j->run.head; jb; jb = jb->lnext)
		if (!jb->cancel)
			jb->cancel = SRV_CANCEL_DRAIN;
	jobs_wake_all(j);
}

void srv_jobs_drain(srv_jobs *j, int timeout_s)
{
	pthread_mutex_lock(&j->mu);
	if (!j->drain_at) {
		j->drain_s = timeout_s > 0 ? timeout_s : 0;
		j->drain_at = srv_now() + j->drain_s;
	}
	pthread_mutex_unlock(&j->mu);
}

int srv_jobs_drain_over(srv_jobs *j)
{
	int over;

	pthread_mutex_lock(&j->mu);
	drain_check(j);
	over = j->drain_fired;
	pthread_mutex_unlock(&j->mu);
	return over;
}

static void *timer_main(void *arg)
{
	srv_jobs *j = arg;

	pthread_mutex_lock(&j->mu);
	while (!j->timer_stop) {
		struct timespec t;

		/* in batches, the lock let go between them: however many jobs
		 * expire or are forgotten at once, nobody waits long for it */
		while (!j->timer_stop && (expire_local(j, JOBS_BATCH) | jobs_prune(j, JOBS_BATCH)))
			jobs_breathe(j);
		drain_check(j);
		if (j->timer_stop)
			break;
		srv_realtime_after(TICK_NS / 1e9, &t);
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

	if (!j || workers < 1 || jobs_index_init(j) != 0 || jobs_feed_init(j) != 0) {
		if (j) {
			jobs_index_free(j);
			jobs_feed_free(j);
		}
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
	for (int k = 0; k < JOBS_DONE_STRIPES; k++)
		pthread_cond_init(&j->done[k], NULL);
	pthread_cond_init(&j->rwork, NULL);
	pthread_cond_init(&j->tick, NULL);
	pthread_cond_init(&j->here_done, NULL);
	j->free_slots = workers;
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

void srv_jobs_shutdown(srv_jobs *j)
{
	int i;

	if (!j)
		return;
	pthread_mutex_lock(&j->mu);
	j->stopping = 1;
	cancel_queued(j, 0);
	/* board jobs in flight stop at once (the dispatchers cancel them on
	 * their boards); local ones are left to finish, to time out, or to
	 * stop at the drain's deadline (the timer runs until they have) */
	for (job *jb = j->run.head; jb; jb = jb->lnext)
		if (jb->remote)
			jb->cancel = SRV_CANCEL_SHUTDOWN;
	pthread_cond_broadcast(&j->work);
	pthread_cond_broadcast(&j->rwork);
	jobs_wake_all(j);
	pthread_mutex_unlock(&j->mu);
	for (i = 0; i < j->n_workers; i++)
		pthread_join(j->threads[i], NULL);
	j->n_workers = 0;
	pthread_mutex_lock(&j->mu);     /* runs on submitters' threads end too */
	while (j->n_here > 0)
		pthread_cond_wait(&j->here_done, &j->mu);
	pthread_mutex_unlock(&j->mu);
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
	if (!j)
		return;
	srv_jobs_shutdown(j);
	jobs_index_free(j);
	jobs_feed_free(j);
	free(j->threads);
	pthread_mutex_destroy(&j->mu);
	pthread_cond_destroy(&j->work);
	for (int k = 0; k < JOBS_DONE_STRIPES; k++)
		pthread_cond_destroy(&j->done[k]);
	pthread_cond_destroy(&j->rwork);
	pthread_cond_destroy(&j->tick);
	pthread_cond_destroy(&j->here_done);
	free(j);
	input_memo_clear();   /* a cache of every table's inputs: no state */
}

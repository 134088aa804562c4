/* par.c: a persistent pthread pool for the kernels (see par.h).
 *
 * Workers are created once and sleep on a condition variable. enpu_par_for
 * publishes one job (fn, ctx, chunking), wakes them, takes chunks itself
 * too, and returns when every chunk has run and no worker still holds the
 * job. Chunks are handed out under the mutex: there are only a few per
 * thread, so the lock is cheap next to the work.
 *
 * Jobs come in bursts (every op of a run, the packing then the compute of
 * one GEMM), and a sleeping thread takes tens of microseconds to wake on
 * a virtual machine, as long as a small GEMM's whole half: so a worker
 * polls for the next job for SPIN_NS after each before it sleeps, and the
 * caller polls as long for the workers to finish before it sleeps (as
 * OpenMP runtimes and OpenBLAS do). Work is never split differently:
 * which thread runs a chunk changes no bit (par.h). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include "par.h"

#define MAX_THREADS 256
#define CHUNKS_PER_THREAD 4
#define SPIN_NS 100000L   /* 0.1 ms of polling before a thread sleeps */

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
	__asm__ __volatile__("yield");
#endif
}

static long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long)t.tv_sec * 1000000000L + t.tv_nsec;
}

/* Poll until done(p) or SPIN_NS have passed; called without the mutex. */
static void spin_until(const struct enpu_par *p, int (*done)(const struct enpu_par *))
{
	long end = now_ns() + SPIN_NS;

	for (int i = 1; !done(p); i++) {
		cpu_relax();
		if (i % 64 == 0 && now_ns() > end)
			return;
	}
}

struct enpu_par {
	int nthreads;              /* including the caller */
	int nworkers;              /* created threads: nthreads - 1 */
	pthread_t *workers;
	pthread_mutex_t mu;
	pthread_cond_t work_cv;    /* job published, or stop */
	pthread_cond_t done_cv;    /* last chunk finished / worker left */
	/* written under mu; atomic so that a polling thread may read them
	 * without it (spin_until) */
	atomic_ulong gen;          /* bumped per job */
	atomic_int stop;
	/* the current job, valid while busy */
	enpu_par_fn fn;
	void *ctx;
	size_t n, chunk, next, nchunks;
	atomic_size_t finished;
	atomic_int active;         /* workers inside the current job */
	void *scratch;             /* the current op's planned scratch */
	size_t scratch_bytes;
};

/* Take chunks of the current job until none are left. Called with mu held;
 * returns with mu held. */
static void run_chunks(enpu_par *p)
{
	while (p->next < p->n) {
		size_t b = p->next;
		size_t e = p->n - b > p->chunk ? b + p->chunk : p->n;
		enpu_par_fn fn = p->fn;
		void *ctx = p->ctx;
		p->next = e;
		pthread_mutex_unlock(&p->mu);
		fn(ctx, b, e);
		pthread_mutex_lock(&p->mu);
		p->finished++;
	}
}

static _Thread_local unsigned long spin_seen;   /* the worker's last job */

static int job_or_stop(const enpu_par *p)
{
	return atomic_load(&p->stop) || atomic_load(&p->gen) != spin_seen;
}

static int job_done(const enpu_par *p)
{
	return atomic_load(&p->finished) >= p->nchunks && atomic_load(&p->active) == 0;
}

static void *worker_main(void *arg)
{
	enpu_par *p = arg;
	unsigned long seen = 0;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		if (!p->stop && p->gen == seen) {   /* the next job is near: poll first */
			spin_seen = seen;
			pthread_mutex_unlock(&p->mu);
			spin_until(p, job_or_stop);
			pthread_mutex_lock(&p->mu);
		}
		while (!p->stop && p->gen == seen)
			pthread_cond_wait(&p->work_cv, &p->mu);
		if (p->stop)
			break;
		seen = p->gen;
		p->active++;
		run_chunks(p);
		p->active--;
		if (p->active == 0 && p->finished == p->nchunks)
			pthread_cond_signal(&p->done_cv);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

enpu_par *enpu_par_create(int nthreads)
{
	enpu_par *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	if (nthreads < 1)
		nthreads = 1;
	if (nthreads > MAX_THREADS)
		nthreads = MAX_THREADS;
	p->nthreads = nthreads;
	if (pthread_mutex_init(&p->mu, NULL) != 0)
		goto fail_mu;
	if (pthread_cond_init(&p->work_cv, NULL) != 0)
		goto fail_work;
	if (pthread_cond_init(&p->done_cv, NULL) != 0)
		goto fail_done;
	if (nthreads > 1) {
		p->workers = calloc((size_t)nthreads - 1, sizeof(pthread_t));
		if (!p->workers)
			goto fail;
		for (int i = 0; i < nthreads - 1; i++) {
			if (pthread_create(&p->workers[i], NULL, worker_main, p) != 0)
				goto fail;
			p->nworkers++;
		}
	}
	return p;

fail:
	enpu_par_destroy(p);
	return NULL;
fail_done:
	pthread_cond_destroy(&p->work_cv);
fail_work:
	pthread_mutex_destroy(&p->mu);
fail_mu:
	free(p);
	return NULL;
}

void enpu_par_destroy(enpu_par *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = 1;
	pthread_cond_broadcast(&p->work_cv);
	pthread_mutex_unlock(&p->mu);
	for (int i = 0; i < p->nworkers; i++)
		pthread_join(p->workers[i], NULL);
	free(p->workers);
	pthread_cond_destroy(&p->done_cv);
	pthread_cond_destroy(&p->work_cv);
	pthread_mutex_destroy(&p->mu);
	free(p);
}

void enpu_par_set_scratch(enpu_par *p, void *mem, size_t bytes)
{
	if (!p)
		return;
	p->scratch = mem;
	p->scratch_bytes = mem ? bytes : 0;
}

void *enpu_par_scratch(enpu_par *p, size_t bytes)
{
	return p && p->scratch && p->scratch_bytes >= bytes ? p->scratch : NULL;
}

int enpu_par_threads(const enpu_par *p)
{
	return p ? p->nthreads : 1;
}

void enpu_par_for(enpu_par *p, size_t n, size_t grain, enpu_par_fn fn, void *ctx)
{
	if (n == 0)
		return;
	if (grain == 0)
		grain = 1;
	if (!p || p->nworkers == 0 || n <= grain) {
		fn(ctx, 0, n);
		return;
	}
	/* About CHUNKS_PER_THREAD chunks per thread for balance, none shorter
	 * than grain. */
	size_t want = (size_t)p->nthreads * CHUNKS_PER_THREAD;
	size_t chunk = n / want + (n % want != 0);
	if (chunk < grain)
		chunk = grain;

	pthread_mutex_lock(&p->mu);
	p->fn = fn;
	p->ctx = ctx;
	p->n = n;
	p->chunk = chunk;
	p->next = 0;
	p->nchunks = n / chunk + (n % chunk != 0);
	p->finished = 0;
	p->gen++;
	pthread_cond_broadcast(&p->work_cv);
	run_chunks(p);
	if (!job_done(p)) {   /* the workers' last chunks: poll first */
		pthread_mutex_unlock(&p->mu);
		spin_until(p, job_done);
		pthread_mutex_lock(&p->mu);
	}
	while (p->finished < p->nchunks || p->active > 0)
		pthread_cond_wait(&p->done_cv, &p->mu);
	pthread_mutex_unlock(&p->mu);
}

/* evict.c: the --cache-max bound and the cache's garbage collection. The
 * bound counts the bytes of CAS blobs (artifact directories are hard links
 * to them). When a store pushes the total past it, the least recently used
 * blobs (the index's LRU, refreshed on every use by srv_cas_touch) go
 * first, except those a queued or running job needs; then the artifacts
 * that listed an evicted blob go too (the index's reverse map: a later run
 * of such an artifact uploads it again). A pass costs O(evicted log N):
 * it never walks the cache. The start-up pass (srv_cache_start) runs in
 * the background while the daemon answers; a store past the bound
 * meanwhile waits for it (one pass at a time). A bound
 * smaller than what concurrent clients hold in flight (inputs uploaded but
 * not yet submitted, results not yet fetched) makes those the victims: size
 * --cache-max well above that. */
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "srv.h"
#include "buf.h"
#include "digest.h"
#include "cas.h"
#include "jobs.h"
#include "artifact.h"
#include "fault.h"
#include "models.h"

typedef struct pins {
	char (*d)[65];
	int n, cap;
} pins;

static pthread_mutex_t evict_mu = PTHREAD_MUTEX_INITIALIZER;
/* A pass holds it exclusively (from its pins to its last removal), a job
 * submission shared from its checks of what the job needs until the job
 * is queued: so a pass either ends before the checks or sees the job's
 * pins. Writers first, so that submissions cannot starve a pass. */
static pthread_rwlock_t pin_rw;
static pthread_once_t pin_once = PTHREAD_ONCE_INIT;

static void pin_init(void)
{
	pthread_rwlockattr_t at;

	pthread_rwlockattr_init(&at);
	pthread_rwlockattr_setkind_np(&at, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&pin_rw, &at);
	pthread_rwlockattr_destroy(&at);
}

void srv_cache_pin_begin(srv_ctx *ctx)
{
	(void)ctx;
	pthread_once(&pin_once, pin_init);
	pthread_rwlock_rdlock(&pin_rw);
}

int srv_cache_pin_try(srv_ctx *ctx)
{
	(void)ctx;
	pthread_once(&pin_once, pin_init);
	return pthread_rwlock_tryrdlock(&pin_rw) == 0;
}

void srv_cache_pin_end(srv_ctx *ctx)
{
	(void)ctx;
	pthread_rwlock_unlock(&pin_rw);
}

/* evict_mu and the pass's hold of pin_rw */
static void pass_lock(void)
{
	pthread_mutex_lock(&evict_mu);
	pthread_once(&pin_once, pin_init);
	pthread_rwlock_wrlock(&pin_rw);
}

static void pass_unlock(void)
{
	pthread_rwlock_unlock(&pin_rw);
	pthread_mutex_unlock(&evict_mu);
}
static atomic_int busy;          /* a pass is evicting (GET /v1/cache: evicting) */

static int add_pin(pins *p, const char *d)
{
	if (p->n == p->cap) {
		int ncap = p->cap ? p->cap * 2 : 64;
		char (*nd)[65] = realloc(p->d, (size_t)ncap * sizeof *nd);
		if (!nd)
			return -1;
		p->d = nd;
		p->cap = ncap;
	}
	memcpy(p->d[p->n++], d, 65);
	return 0;
}

static int cmp_dig(const void *a, const void *b)
{
	return strcmp(a, b);
}

static int pinned(const pins *p, const char *d)
{
	return p->n && bsearch(d, p->d, (size_t)p->n, sizeof *p->d, cmp_dig) != NULL;
}

/* Pin id and, when it is an artifact, every file it lists and its
 * manifest. */
static int pin_with_files(srv_ctx *ctx, pins *p, const char *id)
{
	enpu_manifest m;
	enpu_buf raw = ENPU_BUF_INIT;
	enpu_err e = ENPU_ERR_INIT;
	char dig[65];
	int k, rc = 0;

	if (add_pin(p, id) != 0)
		return -1;
	if (srv_artifact_manifest(ctx->cas, id, &m, &raw, &e) != 0) {
		enpu_buf_free(&raw);
		return 0;
	}
	for (k = 0; k < m.n && rc == 0; k++)
		rc = add_pin(p, m.files[k].sha256);
	enpu_sha256_hex(raw.data, raw.len, dig);
	enpu_manifest_free(&m);
	enpu_buf_free(&raw);
	return rc == 0 ? add_pin(p, dig) : -1;
}

/* Inputs and artifacts (every file and the manifest) of unfinished jobs,
 * and the artifacts of deployed models. */
static int collect_pins(srv_ctx *ctx, pins *p)
{
	char (*jp)[65] = NULL, (*mp)[65] = NULL;
	int n = 0, nm = 0, i, rc = 0;

	if ((ctx->jobs && (n = srv_jobs_pins(ctx->jobs, &jp)) < 0) ||
	    (ctx->models && (nm = srv_models_pins(ctx->models, &mp)) < 0)) {
		free(jp);
		return -1;
	}
	for (i = 0; i < n && rc == 0; i++)
		rc = pin_with_files(ctx, p, jp[i]);
	for (i = 0; i < nm && rc == 0; i++)
		rc = pin_with_files(ctx, p, mp[i]);
	free(jp);
	free(mp);
	if (rc == 0 && p->n > 1)
		qsort(p->d, (size_t)p->n, sizeof *p->d, cmp_dig);
	return rc;
}

int srv_cache_pinned(srv_ctx *ctx, const char *digest)
{
	pins p = {NULL, 0, 0};
	int r;

	if (collect_pins(ctx, &p) != 0) {
		free(p.d);
		return -1;
	}
	r = pinned(&p, digest);
	free(p.d);
	return r;
}

static int keep_pinned(const char *digest, void *arg)
{
	return pinned(arg, digest);
}

/* Drop the artifacts (not pinned) listing blob digest, their directories
 * left in later; the count. */
static int drop_users(srv_ctx *ctx, const pins *p, const char *digest, srv_paths *later)
{
	char (*ids)[65];
	int n = srv_cas_blob_users(ctx->cas, digest, &ids), i, dropped = 0;

	for (i = 0; i < n; i++)
		if (!pinned(p, ids[i]))
			dropped += srv_artifact_drop_into(ctx->cas, ids[i], later);
	free(ids);
	return dropped;
}

/* Evict down to max, EVICT_BATCH blobs per hold of the index's lock, and
 * the artifacts that listed them; counts into res. Called with evict_mu
 * held. Stops early when the daemon stops. What a batch takes out of the
 * cache (blobs, action-cache entries, artifact directories: each by a
 * rename into tmp/, in that order) goes to the reclaimer at the batch's
 * end (srv_cas_reclaim): the pass ends with it all out of the cache, its
 * files removed in the background. */
#define EVICT_BATCH 256
static void evict_locked(srv_ctx *ctx, uint64_t max, const pins *p, srv_gc_result *res)
{
	srv_cas_entry v[EVICT_BATCH];
	srv_cache_stats st;
	srv_paths later = SRV_PATHS_INIT;
	int n, i, first = 1;

	atomic_store(&busy, 1);
	while (max && !ctx->stopping) {
		/* one blob alone first: the fault point stands between it and the rest */
		n = srv_cas_evict_lru(ctx->cas, max, keep_pinned, (void *)p, v, first ? 1 : EVICT_BATCH,
				      &later);
		if (n == 0)
			break;
		for (i = 0; i < n; i++) {
			srv_owners_drop(ctx->cas, v[i].digest, &later);
			res->evicted++;
			res->evicted_bytes += v[i].size;
			srv_cas_count(ctx->cas, SRV_EV_EVICT, v[i].size);
		}
		if (first)
			srv_fault_point("evict");   /* one gone, the pass not done */
		first = 0;
		for (i = 0; i < n; i++)
			res->artifacts_dropped += (uint64_t)drop_users(ctx, p, v[i].digest, &later);
		srv_cas_reclaim(ctx->cas, &later);
	}
	/* a batch that took nothing (all gone behind our back) may have made
	 * its directory: removed with the rest */
	srv_cas_reclaim(ctx->cas, &later);
	srv_cas_stats(ctx->cas, &st);
	res->held_bytes = st.blob_bytes;
	atomic_store(&busy, 0);
}

/* Artifacts (not pinned) that are bad or lost a blob; the count. */
static int drop_lost(srv_ctx *ctx, const pins *p)
{
	char (*ids)[65];
	int n = srv_cas_lost_artifacts(ctx->cas, &ids), i, dropped = 0;

	for (i = 0; i < n && !ctx->stopping; i++)
		if (!pinned(p, ids[i]))
			dropped += srv_artifact_drop(ctx->cas, ids[i]);
	free(ids);
	return dropped;
}

void srv_cache_enforce(srv_ctx *ctx)
{
	uint64_t max = ctx->cfg.cache_max;
	srv_gc_result res;
	pins p = {NULL, 0, 0};
	srv_cache_stats st;

	if (max == 0)
		return;
	srv_cas_stats(ctx->cas, &st);   /* the index's figure: no disk access */
	if (st.blob_bytes <= max)
		return;
	memset(&res, 0, sizeof res);
	pass_lock();
	srv_cas_stats(ctx->cas, &st);
	if (st.blob_bytes <= max || collect_pins(ctx, &p) != 0)
		goto out;
	evict_locked(ctx, max, &p, &res);
	srv_log("info", "cache: evicted %llu blob(s) (%llu bytes) and %llu artifact(s); %llu of "
		"%llu bytes held%s", (unsigned long long)res.evicted,
		(unsigned long long)res.evicted_bytes, (unsigned long long)res.artifacts_dropped,
		(unsigned long long)res.held_bytes, (unsigned long long)max,
		res.held_bytes > max ? " (the rest is in use)" : "");
out:
	pass_unlock();
	free(p.d);
}

/* Re-hash every blob (not the pinned ones' bytes in use: those too, a job
 * holding a bad blob would fail anyway). */
static void verify_all(srv_ctx *ctx, srv_gc_result *res)
{
	srv_cas_entry *v = NULL;
	char path[4300];
	uint64_t total;
	int n = 0, i;

	if (srv_cas_list(ctx->cas, &v, &n, &total) != 0)
		return;
	for (i = 0; i < n; i++) {
		srv_cas_blob_path(ctx->cas, v[i].digest, path, sizeof path);
		res->verified++;
		if (srv_cas_check_file(ctx->cas, path, v[i].digest, 1) ||
		    !srv_cas_has(ctx->cas, v[i].digest, NULL))
			continue;
		if (srv_cas_remove(ctx->cas, v[i].digest)) {
			res->integrity_failures++;
			srv_cas_count(ctx->cas, SRV_EV_INTEGRITY, 0);
			srv_log("warn", "cache: blob %s does not hash to its name: dropped",
				v[i].digest);
		}
	}
	free(v);
}

/* gc's work; resync: reconcile the index with the disk first (not at
 * start-up, where the index was just built from it). */
static int gc(srv_ctx *ctx, int verify, int resync, srv_gc_result *res)
{
	pins p = {NULL, 0, 0};
	int ret = -1;

	memset(res, 0, sizeof *res);
	res->max_bytes = ctx->cfg.cache_max;
	pass_lock();
	if (collect_pins(ctx, &p) != 0)
		goto out;
	res->tmp_removed = (uint64_t)srv_cas_clean_tmp(ctx->cas, SRV_TMP_STALE);
	if (resync && srv_cas_resync(ctx->cas) != 0)
		goto out;
	if (verify)
		verify_all(ctx, res);
	evict_locked(ctx, ctx->cfg.cache_max, &p, res);
	res->artifacts_dropped += (uint64_t)drop_lost(ctx, &p);
	res->ac_dropped = (uint64_t)srv_ac_drop_for(ctx->cas, NULL);
	srv_owners_prune(ctx->cas);   /* records a crash left without their blob */
	ret = 0;
out:
	pass_unlock();
	free(p.d);
	srv_cas_save_stats(ctx->cas);
	srv_log("info", "cache: gc evicted %llu blob(s) (%llu bytes), dropped %llu artifact(s), "
		"%llu action-cache entr%s, %llu temp entr%s%s",
		(unsigned long long)res->evicted, (unsigned long long)res->evicted_bytes,
		(unsigned long long)res->artifacts_dropped, (unsigned long long)res->ac_dropped,
		res->ac_dropped == 1 ? "y" : "ies", (unsigned long long)res->tmp_removed,
		res->tmp_removed == 1 ? "y" : "ies", verify ? " (verified every blob)" : "");
	return ret;
}

int srv_cache_gc(srv_ctx *ctx, int verify, srv_gc_result *res)
{
	int rc = gc(ctx, verify, 1, res);

	srv_cas_reclaim_wait(ctx->cas);   /* what it freed is free when it answers */
	return rc;
}

/* ---- the start-up pass, in the background ---------------------------------- */

static pthread_t bg;
static int bg_running;
static atomic_int bg_pending;   /* started, not yet done */

static void *bg_main(void *arg)
{
	srv_gc_result res;

	gc(arg, 0, 0, &res);
	atomic_store(&bg_pending, 0);
	return NULL;
}

int srv_cache_start(srv_ctx *ctx)
{
	srv_gc_result res;

	atomic_store(&bg_pending, 1);
	if (pthread_create(&bg, NULL, bg_main, ctx) == 0) {
		bg_running = 1;
		return 0;
	}
	srv_log("warn", "cache: no thread for the start-up pass: running it now");
	gc(ctx, 0, 0, &res);
	atomic_store(&bg_pending, 0);
	return 0;
}

void srv_cache_stop(void)
{
	if (bg_running)
		pthread_join(bg, NULL);
	bg_running = 0;
}

int srv_cache_evicting(void)
{
	return atomic_load(&busy) || atomic_load(&bg_pending);
}

/* evict.c: the --cache-max bound and the cache's garbage collection. The
 * bound counts the bytes of CAS blobs (artifact directories are hard links
 * to them). When a store pushes the total past it, the least recently used
 * blobs (mtime, refreshed on every use by srv_cas_touch) go first, except
 * those a queued or running job needs; then artifact directories that lost
 * a file go too (a later run of such an artifact uploads it again). A bound
 * smaller than what concurrent clients hold in flight (inputs uploaded but
 * not yet submitted, results not yet fetched) makes those the victims: size
 * --cache-max well above that. */
#include <dirent.h>
#include <pthread.h>
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

typedef struct pins {
	char (*d)[65];
	int n, cap;
} pins;

static pthread_mutex_t evict_mu = PTHREAD_MUTEX_INITIALIZER;

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

static int cmp_lru(const void *a, const void *b)
{
	const srv_cas_entry *x = a, *y = b;
	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
	return strcmp(x->digest, y->digest);
}

static int pinned(const pins *p, const char *d)
{
	return p->n && bsearch(d, p->d, (size_t)p->n, sizeof *p->d, cmp_dig) != NULL;
}

/* Inputs and artifacts (every file and the manifest) of unfinished jobs. */
static int collect_pins(srv_ctx *ctx, pins *p)
{
	char (*jp)[65] = NULL, dig[65];
	int n, i, k;

	if (!ctx->jobs)
		return 0;
	n = srv_jobs_pins(ctx->jobs, &jp);
	if (n < 0)
		return -1;
	for (i = 0; i < n; i++) {
		enpu_manifest m;
		enpu_buf raw = ENPU_BUF_INIT;
		enpu_err e = ENPU_ERR_INIT;

		if (add_pin(p, jp[i]) != 0)
			goto fail;
		if (srv_artifact_manifest(ctx->cas, jp[i], &m, &raw, &e) != 0) {
			enpu_buf_free(&raw);
			continue;
		}
		for (k = 0; k < m.n; k++)
			if (add_pin(p, m.files[k].sha256) != 0) {
				enpu_manifest_free(&m);
				enpu_buf_free(&raw);
				goto fail;
			}
		enpu_sha256_hex(raw.data, raw.len, dig);
		enpu_manifest_free(&m);
		enpu_buf_free(&raw);
		if (add_pin(p, dig) != 0)
			goto fail;
	}
	free(jp);
	if (p->n > 1)
		qsort(p->d, (size_t)p->n, sizeof *p->d, cmp_dig);
	return 0;
fail:
	free(jp);
	return -1;
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

/* Remove artifact directories (not pinned) that lost a blob. */
static int drop_artifacts(srv_ctx *ctx, const pins *p)
{
	char dir[4200];
	DIR *d;
	struct dirent *de;
	int n = 0, i;

	snprintf(dir, sizeof dir, "%s/artifacts", srv_cas_root(ctx->cas));
	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		enpu_manifest m;
		enpu_err e = ENPU_ERR_INIT;
		int lost = 0;

		if (!enpu_is_sha256_hex(de->d_name) || pinned(p, de->d_name))
			continue;
		if (srv_artifact_manifest(ctx->cas, de->d_name, &m, NULL, &e) != 0) {
			/* a directory without a readable manifest is no artifact */
			n += srv_artifact_drop(ctx->cas, de->d_name);
			continue;
		}
		for (i = 0; i < m.n && !lost; i++)
			lost = !srv_cas_has(ctx->cas, m.files[i].sha256, NULL);
		enpu_manifest_free(&m);
		if (lost)
			n += srv_artifact_drop(ctx->cas, de->d_name);
	}
	closedir(d);
	return n;
}

/* Evict down to max; counts into res. Called with evict_mu held. */
static void evict_locked(srv_ctx *ctx, uint64_t max, const pins *p, srv_gc_result *res)
{
	srv_cas_entry *v = NULL;
	char path[4300];
	uint64_t total = 0;
	int n = 0, i;

	if (srv_cas_list(ctx->cas, &v, &n, &total) != 0)
		goto out;
	if (max && total > max) {
		if (n > 1)
			qsort(v, (size_t)n, sizeof *v, cmp_lru);
		for (i = 0; i < n && total > max; i++) {
			if (pinned(p, v[i].digest))
				continue;
			srv_cas_blob_path(ctx->cas, v[i].digest, path, sizeof path);
			if (unlink(path) != 0)
				continue;
			srv_owners_drop(ctx->cas, v[i].digest);
			total -= v[i].size;
			res->evicted++;
			res->evicted_bytes += v[i].size;
			srv_cas_count(ctx->cas, SRV_EV_EVICT, v[i].size);
			if (res->evicted == 1)
				srv_fault_point("evict");   /* one gone, the pass not done */
		}
	}
	res->held_bytes = total;
out:
	free(v);
}

void srv_cache_enforce(srv_ctx *ctx)
{
	uint64_t max = ctx->cfg.cache_max;
	srv_gc_result res;
	pins p = {NULL, 0, 0};
	uint64_t total;
	srv_cache_stats st;

	if (max == 0)
		return;
	memset(&res, 0, sizeof res);
	pthread_mutex_lock(&evict_mu);
	srv_cas_stats(ctx->cas, &st);
	total = st.blob_bytes;
	if (total <= max || collect_pins(ctx, &p) != 0)
		goto out;
	evict_locked(ctx, max, &p, &res);
	if (res.evicted)
		res.artifacts_dropped = (uint64_t)drop_artifacts(ctx, &p);
	srv_log("info", "cache: evicted %llu blob(s) (%llu bytes) and %llu artifact(s); %llu of "
		"%llu bytes held%s", (unsigned long long)res.evicted,
		(unsigned long long)res.evicted_bytes, (unsigned long long)res.artifacts_dropped,
		(unsigned long long)res.held_bytes, (unsigned long long)max,
		res.held_bytes > max ? " (the rest is in use)" : "");
out:
	pthread_mutex_unlock(&evict_mu);
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
		if (unlink(path) == 0) {
			srv_owners_drop(ctx->cas, v[i].digest);
			res->integrity_failures++;
			srv_cas_count(ctx->cas, SRV_EV_INTEGRITY, 0);
			srv_log("warn", "cache: blob %s does not hash to its name: dropped",
				v[i].digest);
		}
	}
	free(v);
}

int srv_cache_gc(srv_ctx *ctx, int verify, srv_gc_result *res)
{
	pins p = {NULL, 0, 0};
	int ret = -1;

	memset(res, 0, sizeof *res);
	res->max_bytes = ctx->cfg.cache_max;
	pthread_mutex_lock(&evict_mu);
	if (collect_pins(ctx, &p) != 0)
		goto out;
	res->tmp_removed = (uint64_t)srv_cas_clean_tmp(ctx->cas, SRV_TMP_STALE);
	if (verify)
		verify_all(ctx, res);
	evict_locked(ctx, ctx->cfg.cache_max, &p, res);
	res->artifacts_dropped = (uint64_t)drop_artifacts(ctx, &p);
	res->ac_dropped = (uint64_t)srv_ac_drop_for(ctx->cas, NULL);
	srv_owners_prune(ctx->cas);   /* records a crash left without their blob */
	ret = 0;
out:
	pthread_mutex_unlock(&evict_mu);
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

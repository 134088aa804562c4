/* evict.c: the --cache-max bound. The bound counts the bytes of CAS blobs
 * (artifact directories are hard links to them). When a store pushes the
 * total past it, the least recently used blobs (mtime, refreshed on every
 * use by srv_cas_touch) go first, except those a queued or running job
 * needs; then artifact directories that lost a file go too (a later run
 * of such an artifact uploads it again). */
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

typedef struct cand {
	char digest[65];
	uint64_t size;
	struct timespec mtime;
} cand;

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

static int cmp_cand(const void *a, const void *b)
{
	const cand *x = a, *y = b;
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

/* Every blob with its size and mtime. -1 on out of memory. */
static int scan_blobs(srv_cas *c, cand **out, int *n_out, uint64_t *total)
{
	char dir[4200], sub[4460], p[4720];
	cand *v = NULL;
	int n = 0, cap = 0;
	DIR *d, *d2;
	struct dirent *de, *de2;
	struct stat st;

	*total = 0;
	snprintf(dir, sizeof dir, "%s/cas", srv_cas_root(c));
	d = opendir(dir);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (strlen(de->d_name) != 2 || de->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof sub, "%s/%s", dir, de->d_name);
		d2 = opendir(sub);
		while (d2 && (de2 = readdir(d2))) {
			if (!enpu_is_sha256_hex(de2->d_name))
				continue;
			snprintf(p, sizeof p, "%s/%s", sub, de2->d_name);
			if (stat(p, &st) != 0 || !S_ISREG(st.st_mode))
				continue;
			if (n == cap) {
				int ncap = cap ? cap * 2 : 256;
				cand *nv = realloc(v, (size_t)ncap * sizeof *nv);
				if (!nv) {
					closedir(d2);
					closedir(d);
					free(v);
					return -1;
				}
				v = nv;
				cap = ncap;
			}
			memcpy(v[n].digest, de2->d_name, 65);
			v[n].size = (uint64_t)st.st_size;
			v[n].mtime = st.st_mtim;
			*total += (uint64_t)st.st_size;
			n++;
		}
		if (d2)
			closedir(d2);
	}
	closedir(d);
	*out = v;
	*n_out = n;
	return 0;
}

/* Inputs and artifacts (every file and the manifest) of unfinished jobs. */
static int collect_pins(srv_ctx *ctx, pins *p)
{
	char (*jp)[65] = NULL, dig[65];
	int n = srv_jobs_pins(ctx->jobs, &jp), i, k;

	if (n < 0)
		return -1;
	for (i = 0; i < n; i++) {
		srv_manifest m;
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
				srv_manifest_free(&m);
				enpu_buf_free(&raw);
				goto fail;
			}
		enpu_sha256_hex(raw.data, raw.len, dig);
		srv_manifest_free(&m);
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

/* Remove artifact directories (not pinned) that lost a file. */
static int drop_artifacts(srv_ctx *ctx, const pins *p)
{
	char dir[4200], ad[4460];
	DIR *d;
	struct dirent *de;
	int n = 0, i;

	snprintf(dir, sizeof dir, "%s/artifacts", srv_cas_root(ctx->cas));
	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		srv_manifest m;
		enpu_err e = ENPU_ERR_INIT;
		int lost = 0;

		if (!enpu_is_sha256_hex(de->d_name) || pinned(p, de->d_name))
			continue;
		if (srv_artifact_manifest(ctx->cas, de->d_name, &m, NULL, &e) != 0)
			continue;
		for (i = 0; i < m.n && !lost; i++)
			lost = !srv_cas_has(ctx->cas, m.files[i].sha256, NULL);
		srv_manifest_free(&m);
		if (!lost)
			continue;
		snprintf(ad, sizeof ad, "%s/%s", dir, de->d_name);
		srv_rmtree(ad);
		n++;
	}
	closedir(d);
	return n;
}

void srv_cache_enforce(srv_ctx *ctx)
{
	uint64_t max = ctx->cfg.cache_max, total = 0, freed = 0;
	cand *v = NULL;
	pins p = {NULL, 0, 0};
	char path[4300];
	int n = 0, i, evicted = 0, arts;

	if (max == 0)
		return;
	pthread_mutex_lock(&evict_mu);
	if (scan_blobs(ctx->cas, &v, &n, &total) != 0 || total <= max)
		goto out;
	if (collect_pins(ctx, &p) != 0)
		goto out;
	if (n > 1)
		qsort(v, (size_t)n, sizeof *v, cmp_cand);
	for (i = 0; i < n && total > max; i++) {
		if (pinned(&p, v[i].digest))
			continue;
		srv_cas_blob_path(ctx->cas, v[i].digest, path, sizeof path);
		if (unlink(path) != 0)
			continue;
		total -= v[i].size;
		freed += v[i].size;
		evicted++;
	}
	arts = evicted ? drop_artifacts(ctx, &p) : 0;
	srv_log("info", "cache: evicted %d blob(s) (%llu bytes) and %d artifact(s); %llu of %llu "
		"bytes held%s", evicted, (unsigned long long)freed, arts, (unsigned long long)total,
		(unsigned long long)max, total > max ? " (the rest is in use)" : "");
out:
	pthread_mutex_unlock(&evict_mu);
	free(v);
	free(p.d);
}

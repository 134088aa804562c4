/* cas.c: the daemon's cache directory (layout in cas.h): open and close,
 * the persisted counters, blob paths and presence, removal, listing,
 * eviction's step and the temp space. A blob's presence is a stat() of
 * its file; questions about every blob are the index's (cas_index.h,
 * built at open by cas_scan.c). Uploads are cas_put.c's, integrity
 * checks cas_verify.c's, the action cache cas_ac.c's. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <json-c/json.h>
#include "buf.h"
#include "digest.h"
#include "srv.h"
#include "cas_int.h"
#include "fault.h"

static const char *const cnt_names[CNT_N] = {
	"ac_hits", "ac_misses", "cas_hits", "cas_misses", "evictions", "evicted_bytes",
	"integrity_failures", "artifact_loads",
};

const char *srv_cas_root(const srv_cas *c) { return c->root; }

static void stats_path(const srv_cas *c, char *out, size_t cap)
{
	snprintf(out, cap, "%s/stats.json", c->root);
}

/* Counters from the last run; a missing or damaged file starts at zero. */
static void load_stats(srv_cas *c)
{
	char p[4200];
	enpu_buf b = ENPU_BUF_INIT;
	enpu_err e = ENPU_ERR_INIT;
	json_object *root = NULL, *v;
	int i;

	stats_path(c, p, sizeof p);
	if (enpu_read_file(p, 64u << 10, &b, &e) != 0)
		goto out;
	root = json_tokener_parse(b.data);
	if (!root || !json_object_is_type(root, json_type_object))
		goto out;
	for (i = 0; i < CNT_N; i++)
		if (json_object_object_get_ex(root, cnt_names[i], &v) &&
		    json_object_is_type(v, json_type_int) && json_object_get_int64(v) > 0)
			atomic_store(&c->cnt[i], (unsigned long long)json_object_get_int64(v));
out:
	json_object_put(root);
	enpu_buf_free(&b);
}

void srv_cas_save_stats(srv_cas *c)
{
	char p[4200];
	json_object *o = json_object_new_object();
	enpu_err e = ENPU_ERR_INIT;
	const char *text;
	int i;

	if (!o)
		return;
	for (i = 0; i < CNT_N; i++)
		json_object_object_add(o, cnt_names[i],
				       json_object_new_int64((int64_t)atomic_load(&c->cnt[i])));
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY);
	stats_path(c, p, sizeof p);
	srv_cas_write_atomic(c, p, text, strlen(text), &e);
	json_object_put(o);
}

void srv_cas_count(srv_cas *c, srv_cas_event ev, uint64_t bytes)
{
	switch (ev) {
	case SRV_EV_AC_HIT: atomic_fetch_add(&c->cnt[CNT_AC_HITS], 1); break;
	case SRV_EV_AC_MISS: atomic_fetch_add(&c->cnt[CNT_AC_MISSES], 1); break;
	case SRV_EV_CAS_HIT: atomic_fetch_add(&c->cnt[CNT_CAS_HITS], 1); break;
	case SRV_EV_CAS_MISS: atomic_fetch_add(&c->cnt[CNT_CAS_MISSES], 1); break;
	case SRV_EV_EVICT:
		atomic_fetch_add(&c->cnt[CNT_EVICTIONS], 1);
		atomic_fetch_add(&c->cnt[CNT_EVICTED_BYTES], bytes);
		break;
	case SRV_EV_INTEGRITY: atomic_fetch_add(&c->cnt[CNT_INTEGRITY], 1); break;
	case SRV_EV_LOAD: atomic_fetch_add(&c->cnt[CNT_LOADS], 1); break;
	}
}

void srv_cas_stats(struct srv_cas *c, srv_cache_stats *out)
{
	ix_counts k;

	memset(out, 0, sizeof *out);
	ix_counts_get(c->ix, &k);
	out->blobs = k.blobs;
	out->blob_bytes = k.blob_bytes;
	out->artifacts = k.artifacts;
	out->ac_entries = k.ac;
	out->ac_hits = atomic_load(&c->cnt[CNT_AC_HITS]);
	out->ac_misses = atomic_load(&c->cnt[CNT_AC_MISSES]);
	out->cas_hits = atomic_load(&c->cnt[CNT_CAS_HITS]);
	out->cas_misses = atomic_load(&c->cnt[CNT_CAS_MISSES]);
	out->evictions = atomic_load(&c->cnt[CNT_EVICTIONS]);
	out->evicted_bytes = atomic_load(&c->cnt[CNT_EVICTED_BYTES]);
	out->integrity_failures = atomic_load(&c->cnt[CNT_INTEGRITY]);
	out->artifact_loads = atomic_load(&c->cnt[CNT_LOADS]);
}

srv_cas *srv_cas_open(const char *dir, enpu_err *e)
{
	srv_cas *c = calloc(1, sizeof *c);
	if (!c) {
		enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&c->memo_mu, NULL);
	pthread_mutex_init(&c->ix_mu, NULL);
	pthread_mutex_init(&c->rc_mu, NULL);
	pthread_cond_init(&c->rc_more, NULL);
	pthread_cond_init(&c->rc_idle, NULL);
	c->root = strdup(dir);
	c->ix = ix_new();
	if (!c->ix) {
		enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
		goto fail;
	}
	if (!c->root || strlen(dir) > 3000) {
		enpu_fail(e, ENPU_E_USAGE, dir, NULL, "cache directory path too long");
		goto fail;
	}
	snprintf(c->cas, sizeof c->cas, "%s/cas", dir);
	snprintf(c->ac, sizeof c->ac, "%s/ac", dir);
	snprintf(c->tmp, sizeof c->tmp, "%s/tmp", dir);
	snprintf(c->art, sizeof c->art, "%s/artifacts", dir);
	if (enpu_mkdirs(c->cas, 0755, e) || enpu_mkdirs(c->ac, 0755, e) ||
	    enpu_mkdirs(c->tmp, 0700, e) || enpu_mkdirs(c->art, 0755, e))
		goto fail;
	cas_clean_dir(c->tmp);
	load_stats(c);
	/* the layout before fan-out directories, then the index in one pass */
	if (cas_migrate(c) != 0 || cas_index_sync(c) != 0) {
		enpu_fail(e, ENPU_E_NOMEM, dir, NULL, "out of memory indexing the cache");
		goto fail;
	}
	return c;
fail:
	srv_cas_close(c);
	return NULL;
}

void srv_cas_close(srv_cas *c)
{
	if (!c)
		return;
	cas_reclaim_stop(c);
	if (c->cas[0] && c->ix)
		srv_cas_save_stats(c);
	ix_free(c->ix);
	pthread_mutex_destroy(&c->ix_mu);
	pthread_mutex_destroy(&c->rc_mu);
	pthread_cond_destroy(&c->rc_more);
	pthread_cond_destroy(&c->rc_idle);
	pthread_mutex_destroy(&c->memo_mu);
	for (int i = 0; i < BYTES_SLOTS; i++)
		free(c->bmemo[i].bytes);
	free(c->root);
	free(c);
}

void srv_cas_blob_path(const srv_cas *c, const char *digest, char *out, size_t cap)
{
	char fan[3] = {digest[0], digest[0] ? digest[1] : '\0', '\0'};

	enpu_str_cat(out, cap, c->cas, "/", fan, "/", digest, (char *)NULL);
}

int srv_cas_has(const srv_cas *c, const char *digest, uint64_t *size)
{
	char p[4200];
	struct stat st;

	if (!enpu_is_sha256_hex(digest))
		return 0;
	srv_cas_blob_path(c, digest, p, sizeof p);
	if (stat(p, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	if (size)
		*size = (uint64_t)st.st_size;
	return 1;
}

int srv_cas_remove(srv_cas *c, const char *digest)
{
	char p[4200];
	int gone;

	if (!enpu_is_sha256_hex(digest))
		return 0;
	srv_cas_blob_path(c, digest, p, sizeof p);
	pthread_mutex_lock(&c->ix_mu);
	gone = unlink(p) == 0;
	if (gone || errno == ENOENT)
		ix_blob_del(c->ix, digest, NULL);
	pthread_mutex_unlock(&c->ix_mu);
	if (gone)
		srv_owners_drop(c, digest, NULL);
	return gone;
}

typedef struct blob_list {
	srv_cas_entry *v;
	int n, cap;
	uint64_t total;
} blob_list;

static int list_one(const char *dig, uint64_t size, void *arg)
{
	blob_list *l = arg;

	if (l->n == l->cap) {
		int ncap = l->cap ? l->cap * 2 : 256;
		srv_cas_entry *nv = realloc(l->v, (size_t)ncap * sizeof *nv);
		if (!nv)
			return -1;
		l->v = nv;
		l->cap = ncap;
	}
	memcpy(l->v[l->n].digest, dig, 65);
	l->v[l->n].size = size;
	l->total += size;
	l->n++;
	return 0;
}

int srv_cas_list(srv_cas *c, srv_cas_entry **out, int *n_out, uint64_t *total)
{
	blob_list l = {NULL, 0, 0, 0};
	int rc, i;

	*out = NULL;
	*n_out = 0;
	*total = 0;
	pthread_mutex_lock(&c->ix_mu);
	rc = ix_blob_each(c->ix, list_one, &l);
	for (i = 0; rc == 0 && i < l.n; i++)
		ix_blob_get(c->ix, l.v[i].digest, NULL, &l.v[i].mtime);
	pthread_mutex_unlock(&c->ix_mu);
	if (rc != 0) {
		free(l.v);
		return -1;
	}
	*out = l.v;
	*n_out = l.n;
	*total = l.total;
	return 0;
}

/* Take blob file p out of cas/: by srv_cas_take (a rename into later's
 * directory: the last unlink of a file frees its blocks, which can wait
 * for the disk), but a file another name still links (an artifact's file,
 * removed with its directory) by an unlink, which frees nothing and costs
 * less than the rename. Should the other name go meanwhile, this unlink
 * is the last one: slower, no less right. 1 when it went. */
static int take_blob(srv_cas *c, const char *p, srv_paths *later)
{
	struct stat st;

	if (later && lstat(p, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink > 1)
		return unlink(p) == 0;
	return srv_cas_take(c, p, later);
}

int srv_cas_evict_lru(srv_cas *c, uint64_t max, int (*keep)(const char *digest, void *arg),
		      void *arg, srv_cas_entry *out, int cap, srv_paths *later)
{
	const ix_blob *b, *next;
	char p[4200];
	ix_counts k;
	int n = 0;

	pthread_mutex_lock(&c->ix_mu);
	for (b = ix_lru_first(c->ix); b && n < cap; b = next) {
		const char *dig = ix_blob_digest(b);
		next = ix_lru_next(c->ix, b);
		ix_counts_get(c->ix, &k);
		if (k.blob_bytes <= max)
			break;
		if (keep && keep(dig, arg))
			continue;
		char d[65];
		int gone;
		memcpy(d, dig, 65);
		srv_cas_blob_path(c, d, p, sizeof p);
		gone = take_blob(c, p, later);
		if (!gone && errno != ENOENT)
			continue;   /* cannot be removed: the next one */
		if (gone) {   /* (gone behind our back: forgotten, no eviction) */
			memcpy(out[n].digest, d, 65);
			out[n].size = ix_blob_size(b);
			ix_blob_get(c->ix, d, NULL, &out[n].mtime);
			n++;
		}
		ix_blob_del(c->ix, d, NULL);
	}
	pthread_mutex_unlock(&c->ix_mu);
	return n;
}

static int has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), k = strlen(suf);

	return n >= k && !strcmp(s + n - k, suf);
}

int srv_cas_clean_tmp(srv_cas *c, int max_age)
{
	DIR *d = opendir(c->tmp);
	struct dirent *de;
	struct stat st;
	char sub[4400];
	time_t now = time(NULL);
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(sub, sizeof sub, "%s/%s", c->tmp, de->d_name);
		/* a removal's rename (".rm": evict.c, artifact.c) is never used
		 * again, whatever its age */
		if (!has_suffix(de->d_name, ".rm") &&
		    (lstat(sub, &st) != 0 || now - st.st_mtime < max_age))
			continue;
		srv_rmtree(sub);
		n++;
	}
	closedir(d);
	return n;
}

void srv_cas_tmpname(srv_cas *c, const char *suffix, char *out, size_t cap)
{
	char r[33];
	srv_random_hex(r, 32);
	/* the root is at most 3000 bytes (srv_cas_open), so this always fits */
	if (snprintf(out, cap, "%s/%s%s", c->tmp, r, suffix ? suffix : "") >= (int)cap)
		out[0] = '\0';
}

int cas_take_name(srv_cas *c, srv_paths *l, char *out, size_t cap)
{
	if (l && l->into && l->k >= CAS_TAKE_PER_DIR)
		cas_paths_seal(l);   /* full: the next take makes a new one */
	if (l && !l->into) {
		srv_cas_tmpname(c, ".rm", out, cap);
		/* a removal's directory: not fsynced, as no removal is */
		if (out[0] && mkdir(out, 0700) == 0 && !(l->into = strdup(out)))
			rmdir(out);
	}
	if (l && l->into) {
		if (snprintf(out, cap, "%s/%x", l->into, l->k++) < (int)cap)
			return 1;
		out[0] = '\0';
		return 0;
	}
	srv_cas_tmpname(c, ".rm", out, cap);
	return 0;
}

int srv_cas_take(srv_cas *c, const char *path, srv_paths *later)
{
	char tmp[4300];
	int inside;

	if (later) {
		inside = cas_take_name(c, later, tmp, sizeof tmp);
		if (tmp[0] && rename(path, tmp) == 0) {
			if (!inside && srv_paths_add(later, tmp) != 0)
				unlink(tmp);   /* no room in the list: now, then */
			return 1;
		}
		/* into the batch's own directory (nothing removes it before the
		 * batch ends), ENOENT says path is not there: an unlink would say
		 * the same (an eviction's owner record, for the blobs nobody
		 * uploaded, is not there) */
		if (inside && errno == ENOENT)
			return 0;
	}
	return unlink(path) == 0;
}

int srv_cas_tmpdir(srv_cas *c, char *out, size_t cap, enpu_err *e)
{
	srv_cas_tmpname(c, ".d", out, cap);
	if (mkdir(out, 0755) != 0)
		return enpu_fail(e, ENPU_E_STORAGE, out, NULL, "cannot create '%s': %s",
				 out, strerror(errno));
	return 0;
}

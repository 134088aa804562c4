/* routes_cache.c: cache management over HTTP. GET /v1/cache (stats), GET
 * /v1/cache/entries (blobs, artifacts and action-cache entries, newest use
 * first), DELETE /v1/cache/entries/{id} (never what a queued or running job
 * needs: 409), POST /v1/cache/gc (evict, drop dangling entries and stale
 * temp files, optionally re-hash every blob). Roles are checked by http.c. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <json-c/json.h>
#include "srv.h"
#include "digest.h"
#include "cas.h"
#include "artifact.h"
#include "routes.h"

#define LIST_DEFAULT 1000
#define LIST_MAX     100000

static json_object *u64(uint64_t v)
{
	return json_object_new_int64(v > INT64_MAX ? INT64_MAX : (int64_t)v);
}

static json_object *rate(uint64_t hits, uint64_t misses)
{
	if (hits + misses == 0)
		return NULL;
	return srv_json_double((double)hits / (double)(hits + misses));
}

void srv_get_cache_stats(srv_ctx *ctx, srv_req *r)
{
	srv_cache_stats st;
	json_object *o = json_object_new_object();

	srv_cas_stats(ctx->cas, &st);
	json_object_object_add(o, F_BLOBS, u64(st.blobs));
	json_object_object_add(o, F_BLOB_BYTES, u64(st.blob_bytes));
	json_object_object_add(o, F_MAX_BYTES, u64(ctx->cfg.cache_max));
	json_object_object_add(o, F_ARTIFACTS, u64(st.artifacts));
	json_object_object_add(o, F_AC_ENTRIES, u64(st.ac_entries));
	json_object_object_add(o, F_AC_HITS, u64(st.ac_hits));
	json_object_object_add(o, F_AC_MISSES, u64(st.ac_misses));
	json_object_object_add(o, F_AC_HIT_RATE, rate(st.ac_hits, st.ac_misses));
	json_object_object_add(o, F_CAS_HITS, u64(st.cas_hits));
	json_object_object_add(o, F_CAS_MISSES, u64(st.cas_misses));
	json_object_object_add(o, F_CAS_HIT_RATE, rate(st.cas_hits, st.cas_misses));
	json_object_object_add(o, F_EVICTIONS, u64(st.evictions));
	json_object_object_add(o, F_EVICTED_BYTES, u64(st.evicted_bytes));
	json_object_object_add(o, F_INTEGRITY_FAILURES, u64(st.integrity_failures));
	json_object_object_add(o, F_ARTIFACT_LOADS, u64(st.artifact_loads));
	srv_reply_json(r, 200, o);
}

/* One listed entry, with its last use for sorting. */
typedef struct row {
	struct timespec t;
	json_object *o;
} row;

typedef struct rows {
	row *v;
	size_t n, cap;
} rows;

static int add_row(rows *rs, const char *kind, const char *id, int64_t bytes,
		   const struct timespec *t, const char *artifact)
{
	char ts[64];
	json_object *o;

	if (rs->n == rs->cap) {
		size_t ncap = rs->cap ? rs->cap * 2 : 256;
		row *nv = realloc(rs->v, ncap * sizeof *nv);
		if (!nv)
			return -1;
		rs->v = nv;
		rs->cap = ncap;
	}
	o = json_object_new_object();
	if (!o)
		return -1;
	srv_time_str(t, ts, sizeof ts);
	json_object_object_add(o, F_KIND, json_object_new_string(kind));
	json_object_object_add(o, F_ID, json_object_new_string(id));
	if (bytes >= 0)
		json_object_object_add(o, F_BYTES, json_object_new_int64(bytes));
	if (artifact)
		json_object_object_add(o, F_ARTIFACT_ID, json_object_new_string(artifact));
	json_object_object_add(o, F_LAST_USE, json_object_new_string(ts));
	rs->v[rs->n].t = *t;
	rs->v[rs->n].o = o;
	rs->n++;
	return 0;
}

static int cmp_newest(const void *a, const void *b)
{
	const row *x = a, *y = b;
	if (x->t.tv_sec != y->t.tv_sec)
		return x->t.tv_sec > y->t.tv_sec ? -1 : 1;
	if (x->t.tv_nsec != y->t.tv_nsec)
		return x->t.tv_nsec > y->t.tv_nsec ? -1 : 1;
	return 0;
}

static int list_blobs(srv_ctx *ctx, rows *rs)
{
	srv_cas_entry *v;
	uint64_t total;
	int n, i, ret = 0;

	if (srv_cas_list(ctx->cas, &v, &n, &total) != 0)
		return -1;
	for (i = 0; i < n && ret == 0; i++)
		ret = add_row(rs, KIND_BLOB, v[i].digest, (int64_t)v[i].size, &v[i].mtime, NULL);
	free(v);
	return ret;
}

static int list_artifacts(srv_ctx *ctx, rows *rs)
{
	char dir[4200];
	DIR *d;
	struct dirent *de;
	int ret = 0;

	snprintf(dir, sizeof dir, "%s/artifacts", srv_cas_root(ctx->cas));
	d = opendir(dir);
	if (!d)
		return 0;
	while (ret == 0 && (de = readdir(d))) {
		uint64_t bytes;
		struct timespec t;
		if (!enpu_is_sha256_hex(de->d_name) ||
		    srv_artifact_usage(ctx->cas, de->d_name, &bytes, &t) != 0)
			continue;
		ret = add_row(rs, KIND_ARTIFACT, de->d_name, (int64_t)bytes, &t, NULL);
	}
	closedir(d);
	return ret;
}

static int list_ac(srv_ctx *ctx, rows *rs)
{
	srv_ac_entry *v;
	int n, i, ret = 0;

	if (srv_ac_list(ctx->cas, &v, &n) != 0)
		return -1;
	for (i = 0; i < n && ret == 0; i++)
		ret = add_row(rs, KIND_AC, v[i].key, -1, &v[i].mtime, v[i].id);
	free(v);
	return ret;
}

void srv_get_cache_entries(srv_ctx *ctx, srv_req *r)
{
	const char *kind = srv_req_query(r, Q_KIND), *lim_s = srv_req_query(r, Q_LIMIT);
	long limit = LIST_DEFAULT;
	rows rs = {NULL, 0, 0};
	json_object *o, *arr;
	size_t i;
	int rc = 0;

	if (kind && *kind && strcmp(kind, KIND_BLOB) && strcmp(kind, KIND_ARTIFACT) &&
	    strcmp(kind, KIND_AC)) {
		srv_reply_fail(r, ENPU_E_BAD_REQUEST, Q_KIND,
			       "query 'kind' is '%.40s'; it takes blob, artifact or ac", kind);
		return;
	}
	if (lim_s) {
		char *end;
		limit = strtol(lim_s, &end, 10);
		if (!*lim_s || *end || limit < 1 || limit > LIST_MAX) {
			srv_reply_fail(r, ENPU_E_BAD_REQUEST, Q_LIMIT,
				       "query 'limit' is '%.40s'; it takes 1 to %d", lim_s, LIST_MAX);
			return;
		}
	}
	if (kind && !*kind)
		kind = NULL;
	if (!kind || !strcmp(kind, KIND_ARTIFACT))
		rc |= list_artifacts(ctx, &rs);
	if (!kind || !strcmp(kind, KIND_AC))
		rc |= list_ac(ctx, &rs);
	if (!kind || !strcmp(kind, KIND_BLOB))
		rc |= list_blobs(ctx, &rs);
	if (rc != 0) {
		for (i = 0; i < rs.n; i++)
			json_object_put(rs.v[i].o);
		free(rs.v);
		srv_reply_fail(r, ENPU_E_NOMEM, NULL, "out of memory listing the cache");
		return;
	}
	if (rs.n > 1)
		qsort(rs.v, rs.n, sizeof *rs.v, cmp_newest);
	arr = json_object_new_array();
	for (i = 0; i < rs.n; i++) {
		if (i < (size_t)limit)
			json_object_array_add(arr, rs.v[i].o);
		else
			json_object_put(rs.v[i].o);
	}
	o = json_object_new_object();
	json_object_object_add(o, F_ENTRIES, arr);
	json_object_object_add(o, F_TOTAL, u64(rs.n));
	free(rs.v);
	srv_reply_json(r, 200, o);
}

/* 409: a queued or running job needs the entry. */
static void reply_in_use(srv_req *r, const char *what, const char *id)
{
	enpu_err e = ENPU_ERR_INIT;

	enpu_fail(&e, ENPU_E_CONFLICT, id, "wait for the jobs that use it to finish, or "
		  "cancel them", "%s '%.12s' is needed by a queued or running job", what, id);
	srv_reply_error(r, &e, NULL);
}

void srv_delete_cache_entry(srv_ctx *ctx, srv_req *r)
{
	const char *id = srv_req_param(r, 0);
	char dir[4300], art[65];
	struct stat st;
	const char *kind = NULL;
	int ac_dropped = 0, pin;
	json_object *o;

	if (!enpu_is_sha256_hex(id)) {
		srv_reply_fail(r, ENPU_E_BAD_REQUEST, id,
			       "'%.80s' is not a digest or an artifact id (64 lowercase hex)", id);
		return;
	}
	srv_artifact_dir(ctx->cas, id, dir, sizeof dir);
	if (stat(dir, &st) == 0)
		kind = KIND_ARTIFACT;
	else if (srv_cas_has(ctx->cas, id, NULL))
		kind = KIND_BLOB;
	else if (srv_ac_get(ctx->cas, id, art))
		kind = KIND_AC;
	if (!kind) {
		srv_reply_fail(r, ENPU_E_NOT_FOUND, id, "no blob, artifact or action-cache entry "
			       "'%.80s' in the cache", id);
		return;
	}
	if (strcmp(kind, KIND_AC) != 0) {
		pin = srv_cache_pinned(ctx, id);
		if (pin < 0) {
			srv_reply_fail(r, ENPU_E_NOMEM, NULL, "out of memory");
			return;
		}
		if (pin) {
			reply_in_use(r, kind, id);
			return;
		}
	}
	if (!strcmp(kind, KIND_ARTIFACT)) {
		/* srv_artifact_drop takes its entries too; count them first */
		srv_ac_entry *v;
		int n, i;
		if (srv_ac_list(ctx->cas, &v, &n) == 0) {
			for (i = 0; i < n; i++)
				ac_dropped += !strcmp(v[i].id, id);
			free(v);
		}
		srv_artifact_drop(ctx->cas, id);
	} else if (!strcmp(kind, KIND_BLOB)) {
		srv_cas_remove(ctx->cas, id);
	} else {
		ac_dropped = srv_ac_remove(ctx->cas, id);
	}
	srv_log("info", "cache: removed %s %s", kind, id);
	o = json_object_new_object();
	json_object_object_add(o, F_REMOVED, json_object_new_string(kind));
	json_object_object_add(o, F_ID, json_object_new_string(id));
	json_object_object_add(o, F_AC_DROPPED, json_object_new_int(ac_dropped));
	srv_reply_json(r, 200, o);
}

void srv_post_cache_gc(srv_ctx *ctx, srv_req *r)
{
	const char *v = srv_req_query(r, Q_VERIFY);
	srv_gc_result res;
	srv_cache_stats st;
	json_object *o;
	int verify = v && (!strcmp(v, "1") || !strcmp(v, "true") || !strcmp(v, "yes"));

	if (v && !verify && strcmp(v, "0") && strcmp(v, "false") && strcmp(v, "no")) {
		srv_reply_fail(r, ENPU_E_BAD_REQUEST, Q_VERIFY,
			       "query 'verify' is '%.40s'; it takes 1 or 0", v);
		return;
	}
	if (srv_cache_gc(ctx, verify, &res) != 0) {
		srv_reply_fail(r, ENPU_E_NOMEM, NULL, "out of memory collecting the cache");
		return;
	}
	srv_cas_stats(ctx->cas, &st);
	o = json_object_new_object();
	json_object_object_add(o, F_EVICTIONS, u64(res.evicted));
	json_object_object_add(o, F_EVICTED_BYTES, u64(res.evicted_bytes));
	json_object_object_add(o, F_ARTIFACTS_DROPPED, u64(res.artifacts_dropped));
	json_object_object_add(o, F_AC_DROPPED, u64(res.ac_dropped));
	json_object_object_add(o, F_TMP_REMOVED, u64(res.tmp_removed));
	json_object_object_add(o, F_VERIFIED, u64(res.verified));
	json_object_object_add(o, F_INTEGRITY_FAILURES, u64(res.integrity_failures));
	json_object_object_add(o, F_BLOBS, u64(st.blobs));
	json_object_object_add(o, F_BLOB_BYTES, u64(st.blob_bytes));
	json_object_object_add(o, F_MAX_BYTES, u64(ctx->cfg.cache_max));
	srv_reply_json(r, 200, o);
}

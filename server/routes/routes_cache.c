/* routes_cache.c: cache management over HTTP. GET /v1/cache (stats, from
 * the index's counts), GET /v1/cache/entries (blobs, artifacts and
 * action-cache entries, newest use first, a page at a time from the index:
 * ?limit=, and ?cursor= the previous page's "next"), DELETE /v1/cache/entries/{id} (never what a queued or running job
 * needs: 409), POST /v1/cache/gc (evict, drop dangling entries and stale
 * temp files, optionally re-hash every blob). Roles are checked by http.c. */
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

json_object *srv_cache_stats_json(srv_ctx *ctx)
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
	json_object_object_add(o, F_EVICTING, json_object_new_boolean(srv_cache_evicting()));
	json_object_object_add(o, F_RECLAIMING, json_object_new_int64(srv_cas_reclaiming(ctx->cas)));
	return o;
}

void srv_get_cache_stats(srv_ctx *ctx, srv_req *r)
{
	srv_reply_json(r, 200, srv_cache_stats_json(ctx));
}

static const char *const kind_names[IX_NKINDS] = {KIND_BLOB, KIND_AC, KIND_ARTIFACT};

static json_object *entry_json(const ix_entry *v)
{
	char ts[64];
	json_object *o = json_object_new_object();

	srv_time_str(&v->used, ts, sizeof ts);
	json_object_object_add(o, F_KIND, json_object_new_string(kind_names[v->kind]));
	json_object_object_add(o, F_ID, json_object_new_string(v->id));
	if (v->bytes >= 0)
		json_object_object_add(o, F_BYTES, json_object_new_int64(v->bytes));
	if (v->kind == IX_AC)
		json_object_object_add(o, F_ARTIFACT_ID, json_object_new_string(v->art));
	json_object_object_add(o, F_LAST_USE, json_object_new_string(ts));
	return o;
}

/* The cursor after entry v: "SECONDS.NANOSECONDS.KIND.ID", opaque to clients. */
static void cursor_str(const ix_entry *v, char *out, size_t cap)
{
	snprintf(out, cap, "%lld.%09ld.%d.%s", (long long)v->used.tv_sec, (long)v->used.tv_nsec,
		 (int)v->kind, v->id);
}

/* 0, or -1 when s is no cursor this daemon gives. */
static int cursor_parse(const char *s, ix_cursor *c)
{
	char tail[80], check[160];
	long long sec;
	long nsec;
	int kind, n = 0;

	if (strlen(s) > 120 ||
	    sscanf(s, "%lld.%ld.%d.%70s%n", &sec, &nsec, &kind, tail, &n) != 4 || s[n] ||
	    sec < 0 || nsec < 0 || nsec > 999999999 || kind < 0 || kind >= IX_NKINDS ||
	    !enpu_is_sha256_hex(tail))
		return -1;
	c->used.tv_sec = (time_t)sec;
	c->used.tv_nsec = nsec;
	c->kind = (ix_kind)kind;
	memcpy(c->id, tail, 65);
	/* one spelling only: what cursor_str writes */
	snprintf(check, sizeof check, "%lld.%09ld.%d.%s", sec, nsec, kind, tail);
	return strcmp(check, s) == 0 ? 0 : -1;
}

/* ?kind= as a mask of ix kinds; -1 when it is none of them. */
static int kind_mask(const char *kind)
{
	int k;

	if (!kind || !*kind)
		return (1 << IX_NKINDS) - 1;
	for (k = 0; k < IX_NKINDS; k++)
		if (!strcmp(kind, kind_names[k]))
			return 1 << k;
	return -1;
}

static uint64_t kind_total(srv_ctx *ctx, int mask)
{
	srv_cache_stats st;

	srv_cas_stats(ctx->cas, &st);
	return (mask & (1 << IX_BLOB) ? st.blobs : 0) + (mask & (1 << IX_AC) ? st.ac_entries : 0) +
	       (mask & (1 << IX_ARTIFACT) ? st.artifacts : 0);
}

/* One page: JSON for the entries it returns only, from the index. */
void srv_get_cache_entries(srv_ctx *ctx, srv_req *r)
{
	const char *kind = srv_req_query(r, Q_KIND), *lim_s = srv_req_query(r, Q_LIMIT);
	const char *cur_s = srv_req_query(r, Q_CURSOR);
	long limit = LIST_DEFAULT;
	int mask = kind_mask(kind), n, i, more;
	ix_cursor cur;
	ix_entry *v;
	json_object *o, *arr;
	char next[128];

	if (mask < 0) {
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
	if (cur_s && cursor_parse(cur_s, &cur) != 0) {
		srv_reply_fail(r, ENPU_E_BAD_REQUEST, Q_CURSOR, "query 'cursor' is '%.40s'; it takes "
			       "the 'next' of a previous answer", cur_s);
		return;
	}
	v = malloc((size_t)limit * sizeof *v);
	if (!v) {
		srv_reply_fail(r, ENPU_E_NOMEM, NULL, "out of memory listing the cache");
		return;
	}
	n = srv_cas_page(ctx->cas, (unsigned)mask, cur_s ? &cur : NULL, (int)limit, v, &more);
	arr = json_object_new_array();
	for (i = 0; i < n; i++)
		json_object_array_add(arr, entry_json(&v[i]));
	o = json_object_new_object();
	json_object_object_add(o, F_ENTRIES, arr);
	json_object_object_add(o, F_TOTAL, u64(kind_total(ctx, mask)));
	if (more && n > 0) {
		cursor_str(&v[n - 1], next, sizeof next);
		json_object_object_add(o, F_NEXT, json_object_new_string(next));
	}
	free(v);
	srv_reply_json(r, 200, o);
}

/* 409: a queued or running job needs the entry. */
static void reply_in_use(srv_req *r, const char *what, const char *id)
{
	enpu_err e = ENPU_ERR_INIT;

	enpu_fail(&e, ENPU_E_CONFLICT, id, "wait for the jobs that use it to finish, or "
		  "cancel them; retire a model that runs it (`eulernpu models rm NAME:V`)",
		  "%s '%.12s' is needed by a queued or running job, or a deployed model", what, id);
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
		/* srv_artifact_drop takes its entries too (and counts none) */
		ac_dropped = srv_ac_drop_for(ctx->cas, id);
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

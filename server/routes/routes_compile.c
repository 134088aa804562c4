/* routes_compile.c: POST /v1/validate and POST /v1/compile. Both resolve
 * the backend's target options (an uploaded target file, else the spec's
 * targets.<backend>). Compile first asks the action cache (key: compiler
 * id, backend, the canonical resolved target, spec and weights digests); a
 * miss compiles into tmp/, stores every file in the CAS, installs
 * artifacts/<id>/ and writes the entry. Either way the answer comes from
 * the artifact's manifest (its summary): nothing is loaded. */
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>
#include "srv.h"
#include "backend.h"
#include "digest.h"
#include "npz.h"
#include "plan.h"
#include "cas.h"
#include "artifact.h"
#include "remote.h"
#include "routes.h"
#include "fault.h"

#define DEFAULT_SPEC_NAME    "spec.yaml"
#define DEFAULT_WEIGHTS_NAME "weights.npz"
#define DEFAULT_TARGET_NAME  "target.yaml"

static int backend_ok(srv_req *r, const char *b)
{
	if (b && (strlen(b) == 0 || strlen(b) >= 32)) {
		srv_reply_fail(r, ENPU_E_BAD_REQUEST, F_BACKEND, "field 'backend' is not a backend name");
		return -1;
	}
	return 0;
}

/* The optional "target" field: absent (*have = 0) or the digest of a blob
 * the CAS holds (its path in path, its label in *label). -1 after a reply. */
static int target_field(srv_ctx *ctx, srv_req *r, char *path, size_t cap, const char **label,
			int *have)
{
	const char *d = NULL;

	*have = 0;
	*label = NULL;
	if (srv_field_str(r, F_TARGET, 0, &d) || srv_field_str(r, F_TARGET_NAME, 0, label))
		return -1;
	if (!d)
		return 0;
	if (srv_blob_field(ctx, r, F_TARGET, path, cap))
		return -1;
	if (!*label || !**label)
		*label = DEFAULT_TARGET_NAME;
	*have = 1;
	return 0;
}

/* fpga_board: how many ops the partition puts on the PL and the PS, so
 * that validate can say so (compile answers from the manifest's summary). */
static void add_partition(json_object *o, const enpu_graph *g, const enpu_target *t)
{
	enpu_err e = ENPU_ERR_INIT;
	int pl = 0, ps = 0, seg = 0;

	if (!enpu_target_def(t)->counts || !enpu_target_def(t)->plan)
		return;   /* only a backend that splits the graph says where ops go */
	if (enpu_backend_counts(g, t, &pl, &ps, &seg, &e) == 0) {
		json_object_object_add(o, F_PL_OPS, json_object_new_int(pl));
		json_object_object_add(o, F_PS_OPS, json_object_new_int(ps));
		json_object_object_add(o, F_PL_SEGMENTS, json_object_new_int(seg));
	}
}

void srv_post_validate(srv_ctx *ctx, srv_req *r)
{
	const enpu_buf *raw = srv_req_raw(r);
	const char *label = NULL, *backend = NULL, *tlabel = NULL;
	char path[4300], tpath[4300];
	int have_t = 0;
	enpu_spec *spec = NULL;
	enpu_graph *g = NULL;
	enpu_target *tgt = NULL;
	enpu_err e = ENPU_ERR_INIT;
	json_object *o;

	if (raw) {
		label = srv_req_query(r, "name");
		backend = srv_req_query(r, F_BACKEND);
	} else if (srv_field_str(r, F_SPEC_NAME, 0, &label) ||
		   srv_field_str(r, F_BACKEND, 0, &backend) ||
		   srv_blob_field(ctx, r, F_SPEC, path, sizeof path) ||
		   target_field(ctx, r, tpath, sizeof tpath, &tlabel, &have_t)) {
		return;
	}
	if (backend_ok(r, backend))
		return;
	if (!label || !*label)
		label = DEFAULT_SPEC_NAME;
	if ((raw ? enpu_spec_parse(raw->data ? raw->data : "", raw->len, label, ctx->lim, &spec, &e)
		 : enpu_spec_load(path, label, ctx->lim, &spec, &e)) != 0 ||
	    enpu_target_resolve(spec, backend, have_t ? tpath : NULL, tlabel, ctx->lim, &tgt,
				&e) != 0 ||
	    enpu_validate_for(spec, tgt, &g, &e) != 0) {
		srv_reply_error(r, &e, NULL);
		goto out;
	}
	o = json_object_new_object();
	json_object_object_add(o, F_OKAY, json_object_new_boolean(1));
	json_object_object_add(o, F_NAME, json_object_new_string(g->name ? g->name : enpu_spec_name(spec)));
	json_object_object_add(o, F_OPERATORS, json_object_new_int(g->n_ops));
	json_object_object_add(o, F_COMPONENTS, json_object_new_int(g->n_components));
	json_object_object_add(o, F_BACKEND, json_object_new_string(enpu_target_backend(tgt)));
	add_partition(o, g, tgt);
	srv_reply_json(r, 200, o);
out:
	enpu_target_free(tgt);
	enpu_graph_free(g);
	enpu_spec_free(spec);
}

/* The action-cache key of a compile (see ARCHITECTURE.md, "Action cache").
 * The target enters as its canonical resolved JSON (defaults filled, keys
 * sorted), not as written: the same options in the spec or in a target
 * file, spelled either way, are one key; any change is another. v2: v1
 * hashed the spec's raw targets.<backend>. -1 on allocation failure. */
static int ac_key(const enpu_target *t, const char *spec_d, const char *weights_d, char key[65])
{
	json_object *tj = enpu_target_json(t);
	const char *ts = tj ? json_object_to_json_string_ext(tj, JSON_C_TO_STRING_PLAIN) : "null";

	return srv_ac_key(ENPU_COMPILER_ID, enpu_target_backend(t), ts ? ts : "null", spec_d,
			  weights_d, key);
}

/* After a compile failed to read a file: when one of its blobs went away
 * meanwhile (evicted by a concurrent store under --cache-max), answer 409
 * E0804 with the missing list, as srv_blob_field does before the compile,
 * so that the client uploads it again. 1 when so (replied), else 0. */
static int reply_if_evicted(srv_ctx *ctx, srv_req *r)
{
	static const char *const keys[] = {F_SPEC, F_WEIGHTS, F_TARGET};
	json_object *m = json_object_new_array();
	const char *d, *first = NULL, *key = NULL;
	size_t i;

	for (i = 0; i < sizeof keys / sizeof keys[0]; i++)
		if (srv_field_str(r, keys[i], 0, &d) == 0 && d && !srv_cas_has(ctx->cas, d, NULL)) {
			json_object_array_add(m, json_object_new_string(d));
			if (!first) {
				first = d;
				key = keys[i];
			}
		}
	if (!first) {
		json_object_put(m);
		return 0;
	}
	srv_reply_blobs_missing(r, m, key, first, "left the server during the compile (evicted)");
	return 1;
}

static int link_known(void *cas, const char *from, const char *to)
{
	return srv_cas_link_known(cas, from, to);
}

/* A cache miss: compile into a temp directory (the weights streamed from
 * their blob member by member, never held in memory; the blob's address
 * is its digest: not hashed again), store the files by the digests the
 * compile computed and install the artifact; record key -> id in the
 * action cache. 0, or -1 + *e. */
static int compile_new(srv_ctx *ctx, const enpu_spec *spec, const enpu_target *tgt,
		       const char *weights_p, const char *weights_name, const char *weights_d,
		       const char *spec_d, const char *key, char id[65], enpu_err *e)
{
	enpu_compiled cc;
	char tmp[4300];
	int rc = -1;
	/* the weights file the blob itself, linked as the cache links (its
	 * check stays a stat) */
	enpu_linker lk = {link_known, ctx->cas};

	memset(&cc, 0, sizeof cc);
	if (srv_cas_tmpdir(ctx->cas, tmp, sizeof tmp, e) != 0)
		return -1;
	if (enpu_compile_to_dir(spec, tgt, weights_p, weights_name ? weights_name : "weights.npz",
				weights_d, spec_d, ctx->lim, tmp, &lk, &cc, e) != 0 ||
	    srv_artifact_ingest_compiled(ctx->cas, tmp, &cc, e) != 0) {
		srv_rmtree(tmp);
		goto out;
	}
	memcpy(id, cc.info.artifact_id, 65);
	srv_log("info", "compiled artifact=%.12s backend=%s spec=%.12s", id, cc.info.backend, spec_d);
	rc = srv_ac_put(ctx->cas, key, id, e);
out:
	enpu_compiled_free(&cc);
	return rc;
}

/* 200 with the artifact id, whether it was cached, the backend and the
 * summary, and the artifact's files: from its manifest alone (the cache's
 * manifests are its own or were checked at import). */
static void reply_compiled(srv_ctx *ctx, srv_req *r, const char *id, int cached,
			   const enpu_manifest *m, const enpu_buf *raw)
{
	json_object *res = json_object_new_object();

	json_object_object_add(res, F_ARTIFACT_ID, json_object_new_string(id));
	json_object_object_add(res, F_CACHED, json_object_new_boolean(cached));
	json_object_object_add(res, F_BACKEND, json_object_new_string(m->backend));
	enpu_msummary_to_json(&m->summary, res);
	/* the daemon's own user also gets each file's path in the cache, to
	 * link instead of download */
	json_object_object_add(res, F_FILES, srv_artifact_files_json(ctx->cas, m, raw,
								     srv_req_is_own_user(r)));
	srv_reply_json(r, 200, res);
}

/* A compile request's fields. */
typedef struct compile_req {
	const char *spec_d, *weights_d, *backend, *spec_name, *weights_name, *tlabel;
	char spec_p[4300], weights_p[4300], target_p[4300];
	int have_t;
	int weights_absent;   /* not readable here: only a remote hit can answer */
} compile_req;

/* The weights field: a blob r may read (its path in q->weights_p), or,
 * with a remote cache, one that is not here (q->weights_absent): the
 * remote may hold the artifact, and then the weights need not come. -1
 * after a reply. */
static int weights_field(srv_ctx *ctx, srv_req *r, compile_req *q)
{
	const char *d;

	if (!ctx->remote)
		return srv_blob_field(ctx, r, F_WEIGHTS, q->weights_p, sizeof q->weights_p);
	if (srv_field_digest(r, F_WEIGHTS, &d) != 0)
		return -1;
	if (!srv_cas_verify(ctx->cas, d, NULL) || !srv_blob_readable(ctx, r, d)) {
		q->weights_absent = 1;
		return 0;
	}
	return srv_blob_field(ctx, r, F_WEIGHTS, q->weights_p, sizeof q->weights_p);
}

/* -1 after a reply. */
static int compile_fields(srv_ctx *ctx, srv_req *r, compile_req *q)
{
	if (srv_blob_field(ctx, r, F_SPEC, q->spec_p, sizeof q->spec_p) ||
	    weights_field(ctx, r, q) ||
	    srv_field_str(r, F_BACKEND, 0, &q->backend) || backend_ok(r, q->backend) ||
	    srv_field_str(r, F_SPEC_NAME, 0, &q->spec_name) ||
	    srv_field_str(r, F_WEIGHTS_NAME, 0, &q->weights_name) ||
	    target_field(ctx, r, q->target_p, sizeof q->target_p, &q->tlabel, &q->have_t))
		return -1;
	srv_field_str(r, F_SPEC, 1, &q->spec_d);
	srv_field_str(r, F_WEIGHTS, 1, &q->weights_d);
	if (!q->spec_name || !*q->spec_name)
		q->spec_name = DEFAULT_SPEC_NAME;
	if (!q->weights_name || !*q->weights_name)
		q->weights_name = DEFAULT_WEIGHTS_NAME;
	return 0;
}

/* The artifact of key: the action cache's when it names one that is
 * present and intact (srv_artifact_verify drops a bad one with its entry,
 * and it is compiled again), else a fresh compile; its manifest into *m
 * and *raw. When a concurrent store's eviction (--cache-max) removes it
 * before its manifest is read, look up or compile again rather than
 * answer 404 for the artifact this request made. 0, or -1 + *e. */
static int lookup_or_compile(srv_ctx *ctx, const compile_req *q, const enpu_spec *spec,
			     const enpu_target *tgt, const char *key, char id[65], int *cached,
			     enpu_manifest *m, enpu_buf *raw, enpu_err *e)
{
	for (int tries = 1;; tries++) {
		*cached = srv_ac_get(ctx->cas, key, id) && srv_artifact_verify(ctx->cas, id, NULL, NULL);
		/* a local miss asks the remote cache (remote.h): a trusted entry
		 * brings the artifact, checked, into the local cache */
		if (!*cached && srv_remote_fetch(ctx->remote, key, id))
			*cached = srv_artifact_verify(ctx->cas, id, NULL, NULL);
		if (*cached) {
			srv_cas_count(ctx->cas, SRV_EV_AC_HIT, 0);
			srv_ac_touch(ctx->cas, key);
			srv_artifact_touch(ctx->cas, id);
		} else {
			srv_cas_count(ctx->cas, SRV_EV_AC_MISS, 0);
			if (compile_new(ctx, spec, tgt, q->weights_p, q->weights_name, q->weights_d,
					q->spec_d, key, id, e) != 0) {
				/* A blob evicted under the compile and stored again by
				 * another client since: compile again. One still gone is
				 * the caller's 409 (reply_if_evicted). */
				if (e->code != ENPU_E_IO || tries == 3 ||
				    !srv_cas_has(ctx->cas, q->weights_d, NULL) ||
				    !srv_cas_has(ctx->cas, q->spec_d, NULL))
					return -1;
				*e = (enpu_err)ENPU_ERR_INIT;
				continue;
			}
			srv_remote_push(ctx->remote, key, id);   /* queued: never waited for */
		}
		if (srv_artifact_manifest(ctx->cas, id, m, raw, e) == 0)
			return 0;
		if (e->code != ENPU_E_NOT_FOUND)
			return -1;
		if (tries == 3)
			return enpu_fail(e, ENPU_E_STORAGE, id, "raise --cache-max above what "
					 "concurrent clients hold in flight, or retry",
					 "artifact '%.12s' was evicted as soon as it was compiled, %d "
					 "times: the cache bound is too small for the work in flight",
					 id, tries);
		*e = (enpu_err)ENPU_ERR_INIT;
	}
}

/* The weights are not here (weights_field): the artifact may come from
 * the remote cache, whose trusted entry for key is what lets a caller
 * name weights it did not upload (the remote is one trust domain:
 * docs/access.md, "The remote cache"); a local entry counts only
 * when the remote names the same artifact. Else 409 E0804 for the
 * weights, as without a remote: the client uploads them and asks again.
 * 0 with the manifest, or -1 after a reply. */
static int remote_only(srv_ctx *ctx, srv_req *r, const compile_req *q, const char *key,
		       char id[65], enpu_manifest *m, enpu_buf *raw)
{
	enpu_err e = ENPU_ERR_INIT;

	if (srv_remote_fetch(ctx->remote, key, id) && srv_artifact_verify(ctx->cas, id, NULL, NULL) &&
	    srv_artifact_manifest(ctx->cas, id, m, raw, &e) == 0) {
		srv_cas_count(ctx->cas, SRV_EV_AC_HIT, 0);
		srv_ac_touch(ctx->cas, key);
		srv_artifact_touch(ctx->cas, id);
		return 0;
	}
	json_object *miss = json_object_new_array();
	json_object_array_add(miss, json_object_new_string(q->weights_d));
	srv_reply_blobs_missing(r, miss, F_WEIGHTS, q->weights_d, "is not on the server");
	return -1;
}

/* POST /v1/compile. A hit answers from the artifact's manifest: nothing
 * is loaded. */
void srv_post_compile(srv_ctx *ctx, srv_req *r)
{
	compile_req q;
	char key[65], id[65];
	enpu_spec *spec = NULL;
	enpu_target *tgt = NULL;
	enpu_err e = ENPU_ERR_INIT;
	enpu_buf raw = ENPU_BUF_INIT;
	enpu_manifest m;
	int cached = 0;

	memset(&q, 0, sizeof q);
	if (compile_fields(ctx, r, &q))
		return;
	/* Resolve first: an invalid target is an error before any cache, and
	 * the key needs its canonical form. */
	if (enpu_spec_load(q.spec_p, q.spec_name, ctx->lim, &spec, &e) != 0 ||
	    enpu_target_resolve(spec, q.backend, q.have_t ? q.target_p : NULL, q.tlabel, ctx->lim,
				&tgt, &e) != 0)
		goto fail;
	if (ac_key(tgt, q.spec_d, q.weights_d, key) != 0) {
		enpu_fail(&e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
		goto fail;
	}
	if (q.weights_absent) {
		if (remote_only(ctx, r, &q, key, id, &m, &raw) != 0)
			goto out;   /* replied */
		cached = 1;
	} else if (lookup_or_compile(ctx, &q, spec, tgt, key, id, &cached, &m, &raw, &e) != 0) {
		goto fail;
	}
	reply_compiled(ctx, r, id, cached, &m, &raw);
	enpu_manifest_free(&m);
	if (!cached)
		srv_cache_enforce(ctx);
	goto out;
fail:
	srv_fault_storage(&e);   /* the compile's writes to a full cache disk: 507 E0810 */
	if (e.code != ENPU_E_IO || !reply_if_evicted(ctx, r))
		srv_reply_error(r, &e, NULL);
out:
	enpu_buf_free(&raw);
	enpu_target_free(tgt);
	enpu_spec_free(spec);
}

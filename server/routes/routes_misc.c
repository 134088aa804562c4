/* routes_misc.c: GET /v1/health, GET /v1/backends (the op x backend
 * capability matrix from the op table), POST /v1/compare, GET /metrics,
 * GET /v1/boards (the metrics themselves: metrics.c). Health answers 503
 * with status "draining" once SIGTERM started the drain. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>
#include "srv.h"
#include "backend.h"
#include "ops.h"
#include "cas.h"
#include "jobs.h"
#include "artifact.h"
#include "boards.h"
#include "pl.h"
#include "json.h"
#include "routes.h"
#include "metrics.h"
#include "daemon.h"
#include "remote.h"

/* A backend is available when at least one op lowers to it: a fact of
 * the build, found once (every health check asks). */
static unsigned avail;
static pthread_once_t avail_once = PTHREAD_ONCE_INIT;

static void find_available(void)
{
	int i;

	for (i = 0; i < ENPU_OP_COUNT; i++) {
		const enpu_opdef *d = enpu_op_by_id((enpu_opid)i);
		if (d)
			avail |= enpu_backends_lowering(d);
	}
}

static unsigned available_mask(void)
{
	pthread_once(&avail_once, find_available);
	return avail;
}

static json_object *mask_json(unsigned m)
{
	json_object *a = json_object_new_array();
	int b;
	for (b = 0; b < enpu_backend_count(); b++)
		if (m & (1u << b))
			json_object_array_add(a, json_object_new_string(enpu_backend_name(b)));
	return a;
}

static json_object *available_json(void)
{
	return mask_json(available_mask());
}

/* The backends jobs can run on here: a board agent runs all it has; a
 * local or lab server runs the board backends only through boards that are
 * up now. */
static unsigned runnable_mask(srv_ctx *ctx)
{
	unsigned m = available_mask();
	unsigned onboard = enpu_backends_on_board();

	if (ctx->cfg.role == SRV_ROLE_BOARD)
		return m;
	return (m & ~onboard) | (srv_boards_up_mask(ctx->boards) & onboard);
}

static const char *const role_names[] = {"local", "server", "board"};

json_object *srv_health_json(srv_ctx *ctx)
{
	json_object *o = json_object_new_object();
	int q, run, w;

	srv_jobs_stats(ctx->jobs, &q, &run, &w);
	/* draining (SIGTERM): no new jobs, so a load balancer must stop
	 * sending them here; 503 with the same body says so */
	enpu_json_addc(o, F_STATUS, json_object_new_string(ctx->draining ? "draining" : "ok"));
	enpu_json_addc(o, F_VERSION, json_object_new_string(srv_state_version()));
	enpu_json_addc(o, F_UPTIME, json_object_new_int64((int64_t)srv_state_uptime()));
	if (ctx->cfg.role == SRV_ROLE_LOCAL)   /* the private daemon: eulernpu daemon status */
		enpu_json_addc(o, F_CACHE_DIR, json_object_new_string(ctx->cfg.cache_dir));
	enpu_json_addc(o, F_ROLE, json_object_new_string(role_names[ctx->cfg.role]));
	if (ctx->cfg.node_id)   /* which node answered, through a balancer */
		enpu_json_addc(o, F_NODE, json_object_new_string(ctx->cfg.node_id));
	if (ctx->cfg.role == SRV_ROLE_BOARD) {
		const enpu_pl_driver *pl = enpu_pl_current();
		enpu_json_addc(o, F_PL, json_object_new_string(
			!strcmp(pl->name, SRV_PL_EMULATED) ? SRV_PL_EMULATED_DESC : pl->description));
	}
	enpu_json_addc(o, F_WORKERS, json_object_new_int(w));
	enpu_json_addc(o, F_THREADS, json_object_new_int(ctx->cfg.threads));
	enpu_json_addc(o, F_QUEUE_DEPTH, json_object_new_int(q));
	enpu_json_addc(o, F_RUNNING, json_object_new_int(run));
	enpu_json_addc(o, F_BACKENDS, mask_json(runnable_mask(ctx)));
	enpu_json_addc(o, F_ARTIFACTS_CACHED, json_object_new_int64(srv_artifact_count(ctx->cas)));
	enpu_json_addc(o, F_BLOBS_RECEIVED, json_object_new_int64(
		(int64_t)atomic_load(&ctx->blobs_received)));
	enpu_json_addc(o, F_BLOBS_BYTES, json_object_new_int64(
		(int64_t)atomic_load(&ctx->blobs_bytes_received)));
	enpu_json_addc(o, F_BLOBS_LOCAL, json_object_new_int64(
		(int64_t)atomic_load(&ctx->blobs_local)));
	enpu_json_addc(o, F_BLOBS_LOCAL_VOUCHED, json_object_new_int64(
		(int64_t)atomic_load(&ctx->blobs_local_vouched)));
	if (ctx->remote)   /* "ok", or "degraded": compiles are local only */
		enpu_json_addc(o, F_REMOTE_CACHE, srv_remote_health_json(ctx->remote));
	return o;
}

void srv_get_health(srv_ctx *ctx, srv_req *r)
{
	srv_reply_json(r, ctx->draining ? 503 : 200, srv_health_json(ctx));
}

void srv_get_boards(srv_ctx *ctx, srv_req *r)
{
	srv_reply_json(r, 200, srv_boards_json(ctx->boards));
}

void srv_get_backends(srv_ctx *ctx, srv_req *r)
{
	json_object *o = json_object_new_object(), *all = json_object_new_array();
	json_object *ops = json_object_new_array();
	int b, i;
	(void)ctx;

	for (b = 0; b < enpu_backend_count(); b++)
		json_object_array_add(all, json_object_new_string(enpu_backend_name(b)));
	for (i = 0; i < ENPU_OP_COUNT; i++) {
		const enpu_opdef *d = enpu_op_by_id((enpu_opid)i);
		json_object *row, *bk;
		if (!d)
			continue;
		row = json_object_new_object();
		bk = json_object_new_object();
		for (b = 0; b < enpu_backend_count(); b++)
			json_object_object_add(bk, enpu_backend_name(b),
					       json_object_new_boolean((enpu_backends_lowering(d) >> b) & 1u));
		json_object_object_add(row, F_OP, json_object_new_string(d->name));
		json_object_object_add(row, F_BACKENDS, bk);
		json_object_array_add(ops, row);
	}
	json_object_object_add(o, F_BACKENDS, all);
	json_object_object_add(o, F_AVAILABLE, available_json());
	json_object_object_add(o, F_OPS, ops);
	srv_reply_json(r, 200, o);
}

void srv_reply_blobs_missing(srv_req *r, json_object *missing, const char *key,
			     const char *first, const char *why)
{
	json_object *extra = json_object_new_object();
	enpu_err e = ENPU_ERR_INIT;

	json_object_object_add(extra, F_MISSING, missing);
	enpu_fail(&e, ENPU_E_BLOB_MISSING, key, "upload it with PUT " API_BLOBS "{sha256}",
		  "blob %s ('%s') %s", first, key, why);
	srv_reply_error(r, &e, extra);
}

static int blob_field(srv_ctx *ctx, srv_req *r, const char *key, char *path, size_t cap,
		      int known)
{
	const char *d;
	if (srv_field_digest(r, key, &d) != 0)
		return -1;
	/* a damaged blob counts as missing, and so does one r may not read */
	if ((!known && !srv_cas_verify(ctx->cas, d, NULL)) || !srv_blob_readable(ctx, r, d)) {
		json_object *m = json_object_new_array();
		json_object_array_add(m, json_object_new_string(d));
		srv_reply_blobs_missing(r, m, key, d, "is not on the server");
		return -1;
	}
	srv_cas_touch(ctx->cas, d);
	srv_cas_blob_path(ctx->cas, d, path, cap);
	return 0;
}

int srv_blob_field(srv_ctx *ctx, srv_req *r, const char *key, char *path, size_t cap)
{
	return blob_field(ctx, r, key, path, cap, 0);
}

int srv_blob_field_known(srv_ctx *ctx, srv_req *r, const char *key, char *path, size_t cap)
{
	return blob_field(ctx, r, key, path, cap, 1);
}

void srv_post_compare(srv_ctx *ctx, srv_req *r)
{
	char got[4300], exp[4300];
	const char *got_name, *exp_name;
	enpu_cmp_opts o = {1e-5, 0, 0};
	enpu_cmp_result res;
	enpu_err e = ENPU_ERR_INIT;
	json_object *out;

	if (srv_blob_field(ctx, r, F_GOT, got, sizeof got) ||
	    srv_blob_field(ctx, r, F_EXPECTED, exp, sizeof exp) ||
	    srv_field_str(r, F_GOT_NAME, 0, &got_name) ||
	    srv_field_str(r, F_EXPECTED_NAME, 0, &exp_name) ||
	    srv_field_double(r, F_TOL, 1e-5, &o.atol) || srv_field_double(r, F_RTOL, 0, &o.rtol) ||
	    srv_field_bool(r, F_EXACT, 0, &o.exact))
		return;
	memset(&res, 0, sizeof res);
	if (enpu_compare(got, got_name ? got_name : "got.npz", exp,
			 exp_name ? exp_name : "expected.npz", &o, ctx->lim, &res, &e) != 0) {
		srv_reply_error(r, &e, NULL);
		return;
	}
	out = json_object_new_object();
	json_object_object_add(out, F_OKAY, json_object_new_boolean(res.ok));
	json_object_object_add(out, F_TENSORS, json_object_new_int(res.n_tensors));
	json_object_object_add(out, F_MAX_ABS_DIFF, srv_json_double(res.max_abs_diff));
	json_object_object_add(out, F_TOL, srv_json_double(o.atol));
	json_object_object_add(out, F_RTOL, srv_json_double(o.rtol));
	json_object_object_add(out, F_EXACT, json_object_new_boolean(o.exact));
	if (!res.ok) {
		json_object *w = json_object_new_object(), *ej = srv_error_json(&e);
		json_object_object_add(w, "tensor", json_object_new_string(res.tensor));
		json_object_object_add(w, "index", json_object_new_string(res.index));
		json_object_object_add(w, "got", srv_json_double(res.got));
		json_object_object_add(w, "expected", srv_json_double(res.expected));
		json_object_object_add(w, "diff", srv_json_double(res.diff));
		json_object_object_add(out, F_WORST, w);
		json_object_object_add(out, F_ERROR, json_object_get(json_object_object_get(ej, F_ERROR)));
		json_object_put(ej);
	}
	srv_reply_json(r, 200, out);
}

void srv_get_metrics(srv_ctx *ctx, srv_req *r)
{
	enpu_buf b = ENPU_BUF_INIT;

	b.cap = 16u << 20;   /* bounded series: far below this */
	if (srv_metrics_render(ctx, &b) != 0) {
		enpu_buf_free(&b);
		srv_reply_fail(r, ENPU_E_INTERNAL, API_METRICS, "the metrics page is over %zu bytes", b.cap);
		return;
	}
	srv_reply_text(r, 200, b.data ? b.data : "", "text/plain; version=0.0.4; charset=utf-8");
	enpu_buf_free(&b);
}

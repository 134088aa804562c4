/* routes_jobs.c: POST /v1/jobs (queue a run with a priority and a
 * timeout; ?wait=S answers when done), GET /v1/jobs (the list, filtered),
 * GET /v1/jobs/{id}[?wait=S] (long-poll), /events (server-sent events of
 * its state changes), DELETE (cancel), /result (the result.npz bytes) and
 * /report. A job names its artifact, or a model (name[:version]; without
 * a version its newest ready one: models.h), resolved at submit. A long
 * poll waits on a handler thread, an event stream between its events too
 * (http.h's srv_where, srv_req_await). On a local or lab server, zynq_ps
 * and fpga_board jobs go to the board pool (boards.c); with no board for
 * them, 503 at once. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include <microhttpd.h>
#include "srv.h"
#include "buf.h"
#include "digest.h"
#include "ops.h"
#include "artifact.h"
#include "jobs.h"
#include "boards.h"
#include "models.h"
#include "routes.h"

#define DEFAULT_INPUT_NAME "input.npz"
#define LIST_DEFAULT 100
#define LIST_MAX     10000

/* An id that names another node (--node-id; a balancer in front of both
 * routes it there): 1 after a 404 E0822 that names the owner, 0 when the
 * id names no node or this one. */
static int other_node(srv_ctx *ctx, srv_req *r, const char *id)
{
	const char *self = ctx->cfg.node_id;
	char node[ENPU_NODE_ID_MAX + 1];
	enpu_err e = ENPU_ERR_INIT;
	json_object *extra;

	if (!enpu_job_id_parse(id, node) || !node[0] || (self && !strcmp(node, self)))
		return 0;
	enpu_fail(&e, ENPU_E_OTHER_NODE, id, NULL, "job '%s' belongs to node '%s'; this server "
		  "is %s%s%s", id, node, self ? "node '" : "not a node (no --node-id)",
		  self ? self : "", self ? "'" : "");
	extra = json_object_new_object();
	json_object_object_add(extra, F_NODE, json_object_new_string(node));
	srv_reply_error(r, &e, extra);
	return 1;
}

/* Another identity's job answers exactly as a job that does not exist
 * (docs/access.md): 1 after that 404, 0 when the caller may see it. An
 * id of another node says so (other_node). */
static int not_yours(srv_ctx *ctx, srv_req *r, const char *id)
{
	if (other_node(ctx, r, id))
		return 1;
	if (srv_jobs_visible(ctx->jobs, id, srv_req_who(r)))
		return 0;
	srv_reply_fail(r, ENPU_E_NOT_FOUND, id, "no job '%.40s' on this server", id);
	return 1;
}

/* input_name is a label: only its base name is kept, so no client's
 * directories show in the job or its errors. */
static const char *base_name(const char *s)
{
	const char *b = s;

	for (; s && *s; s++)
		if (*s == '/' || *s == '\\')
			b = s + 1;
	return b;
}

static void reply_job(srv_ctx *ctx, srv_req *r, const char *id, int wait_s, int fresh)
{
	int final = 0;
	json_object *o = srv_jobs_get(ctx->jobs, id, wait_s, &final);
	char loc[128];

	if (!o) {
		srv_reply_fail(r, ENPU_E_NOT_FOUND, id, "no job '%.40s' on this server", id);
		return;
	}
	srv_reply_json(r, final ? 200 : 202, o);
	if (fresh) {
		snprintf(loc, sizeof loc, API_JOBS "/%s", id);
		srv_reply_header(r, "Location", loc);
	}
}

/* The artifact's files and the input are verified and unchanged: their
 * checks cost a stat each, no hashing (which is for a handler thread). */
static int known_good(srv_ctx *ctx, srv_req *r, const char *art, char *backend, size_t cap)
{
	const char *in = NULL;
	char p[4300];

	if (srv_field_str(r, F_INPUT, 0, &in) || !in || !enpu_is_sha256_hex(in))
		return 0;   /* the thread's run of the handler says what is wrong */
	srv_cas_blob_path(ctx->cas, in, p, sizeof p);
	return srv_cas_known_good(ctx->cas, p, in) &&
	       srv_artifact_known_good(ctx->cas, art, backend, cap);
}

/* Whether a job of backend goes to a board: 1, 0, or with *e (E0811) -1
 * when no board serves it, -2 when all of its boards are down (the
 * caller's answer adds the boards). Never run here; refused now rather
 * than queued forever, and said now rather than after the job timeout. */
static int on_board(srv_ctx *ctx, const char *backend, enpu_err *e)
{
	if (ctx->cfg.role == SRV_ROLE_BOARD || !srv_backend_on_board(backend))
		return 0;
	if (!srv_boards_serves(ctx->boards, backend)) {
		enpu_fail(e, ENPU_E_NO_BOARD, F_BACKEND, NULL,
			  "no board serves backend '%s' (this server fronts %d board%s%s)",
			  backend, ctx->cfg.n_boards, ctx->cfg.n_boards == 1 ? "" : "s",
			  ctx->cfg.n_boards ? " and none of them serves it" : "");
		return -1;
	}
	return srv_boards_check_up(ctx->boards, backend, e) != 0 ? -2 : 1;
}

int srv_job_submit(srv_ctx *ctx, const srv_ident *who, const char *art, const char *input,
		   const char *input_name, const char *model, int timeout_s, char id[ENPU_JOB_ID_SIZE],
		   enpu_err *e)
{
	enpu_manifest m;
	srv_jobreq q = {0};
	int remote, here = 0, rc = -1;

	srv_cache_pin_begin(ctx);
	if (!srv_artifact_verify(ctx->cas, art, &m, e))
		goto out;
	if (!srv_cas_has(ctx->cas, input, NULL)) {
		enpu_fail(e, ENPU_E_BLOB_MISSING, F_INPUT, "send it again",
			  "the input '%.12s' left the cache before its job was queued", input);
		goto free_m;
	}
	if ((remote = on_board(ctx, m.backend, e)) < 0)
		goto free_m;
	srv_artifact_touch(ctx->cas, art);
	q.artifact = art;
	q.backend = m.backend;
	q.input = input;
	q.input_name = input_name;
	q.priority = SRV_PRIO_NORMAL;
	q.timeout_s = timeout_s;
	q.remote = remote;
	q.owner = who->name;
	q.model = model;
	/* the caller waits on this thread anyway: the run here when a worker
	 * slot is free and nothing is queued, as a short ?wait job's is */
	q.here = remote ? SRV_HERE_NO : SRV_HERE_ONLY;
	if ((here = srv_jobs_submit_req(ctx->jobs, &q, id, e)) == SRV_HERE_REFUSED) {
		q.here = SRV_HERE_NO;
		here = srv_jobs_submit_req(ctx->jobs, &q, id, e);
	}
	rc = here < 0 ? -1 : 0;
free_m:
	enpu_manifest_free(&m);
out:
	srv_cache_pin_end(ctx);   /* before a run here: it stores, and may evict */
	if (rc == 0 && here == 1)
		srv_jobs_run_here(ctx->jobs, id);
	return rc;
}

void srv_post_job(srv_ctx *ctx, srv_req *r)
{
	const char *art, *input, *input_name, *prio_s, *model;
	char path[4300], id[ENPU_JOB_ID_SIZE], model_art[65], model_ref[96];
	enpu_manifest m;
	enpu_err e = ENPU_ERR_INIT;
	char backend[32];
	int wait_s, remote = 0, prio = SRV_PRIO_NORMAL, here, on_loop, fast;
	double timeout;
	srv_jobreq q = {0};

	if (srv_query_wait(r, &wait_s) || srv_field_str(r, F_ARTIFACT, 0, &art) ||
	    srv_field_str(r, F_MODEL, 0, &model) ||
	    srv_field_str(r, F_INPUT_NAME, 0, &input_name) ||
	    srv_field_str(r, F_PRIORITY, 0, &prio_s) || srv_field_double(r, F_TIMEOUT, 0, &timeout))
		return;
	if (prio_s && (prio = srv_prio_parse(prio_s)) < 0) {
		srv_reply_fail(r, ENPU_E_BAD_REQUEST, F_PRIORITY,
			       "field 'priority' must be low, normal or high, not '%.40s'", prio_s);
		return;
	}
	if (!(timeout <= 7 * 86400.0)) {
		srv_reply_fail(r, ENPU_E_BAD_REQUEST, F_TIMEOUT,
			       "field 'timeout' must be at most 604800 seconds (0 = the server's)");
		return;
	}
	if (!art == !model) {
		srv_reply_fail(r, ENPU_E_BAD_REQUEST, art ? F_MODEL : F_ARTIFACT,
			       art ? "give field 'artifact' or field 'model', not both"
				   : "missing required field 'artifact' (or 'model': name[:version])");
		return;
	}
	if (model) {
		/* the model's artifact (readiness is the cache's index: in memory) */
		char name[SRV_MODEL_NAME_MAX + 1];
		long v;

		if (srv_model_ref_parse(model, F_MODEL, name, sizeof name, &v, &e) != 0 ||
		    srv_models_resolve(ctx->models, name, v, model_art, &v, &e) != 0) {
			srv_reply_error(r, &e, NULL);
			return;
		}
		snprintf(model_ref, sizeof model_ref, "%s:%ld", name, v);
		art = model_art;
	}
	if (!enpu_is_sha256_hex(art)) {
		srv_reply_fail(r, ENPU_E_BAD_REQUEST, F_ARTIFACT,
			       "field 'artifact' is not an artifact id (64 lowercase hex): '%.80s'", art);
		return;
	}
	/* On the HTTP thread only what cannot block: a submit, or a waited-for
	 * run this artifact's last run says is short (--loop-job-us); all else
	 * (a long run, an eviction pass under way) goes to a handler thread. */
	on_loop = srv_req_on_loop(r);
	fast = on_loop && wait_s > 0 && srv_jobs_runs_fast(ctx->jobs, art,
							   fmin(ctx->cfg.loop_job_us / 1e6, wait_s));
	if (on_loop && ((wait_s > 0 && !fast) || !srv_cache_pin_try(ctx))) {
		srv_req_defer(r);
		return;
	}
	/* No eviction pass runs from here until the job is queued (its pins
	 * are then seen by every later pass): what is checked now is what
	 * the job finds when it runs. */
	if (!on_loop)
		srv_cache_pin_begin(ctx);
	/* Check its files now (a stat each when unchanged): a bad artifact
	 * fails the request, not the job. The backend is the manifest's (the
	 * cache's manifests are trusted); the worker loads the artifact. On
	 * the loop, only files already verified pass: hashing is for a thread. */
	if (on_loop && !known_good(ctx, r, art, backend, sizeof backend)) {
		srv_cache_pin_end(ctx);
		srv_req_defer(r);
		return;
	}
	if (!on_loop) {
		if (!srv_artifact_verify(ctx->cas, art, &m, &e)) {
			srv_reply_error(r, &e, NULL);
			goto unpin;
		}
		snprintf(backend, sizeof backend, "%s", m.backend);
		enpu_manifest_free(&m);
	}
	if ((remote = on_board(ctx, backend, &e)) < 0) {
		srv_reply_error(r, &e, remote == -2 ? srv_boards_json(ctx->boards) : NULL);
		goto unpin;
	}
	/* on the loop, known_good has just checked the input */
	if ((on_loop ? srv_blob_field_known : srv_blob_field)(ctx, r, F_INPUT, path, sizeof path))
		goto unpin;
	srv_field_str(r, F_INPUT, 1, &input);
	input_name = base_name(input_name);
	if (!input_name || !*input_name)
		input_name = DEFAULT_INPUT_NAME;
	srv_artifact_touch(ctx->cas, art);
	q.artifact = art;
	q.backend = backend;
	q.input = input;
	q.input_name = input_name;
	q.priority = prio;
	q.timeout_s = (int)ceil(timeout);   /* capped by --job-timeout */
	q.remote = remote;
	q.owner = srv_req_who(r)->name;
	q.model = model ? model_ref : NULL;
	/* a short run the caller waits for: here on the loop, or not at all */
	q.here = fast ? SRV_HERE_ONLY : SRV_HERE_NO;
	here = srv_jobs_submit_req(ctx->jobs, &q, id, &e);
	if (here < 0) {
		srv_reply_error(r, &e, NULL);
		goto unpin;
	}
	if (here == SRV_HERE_REFUSED) {   /* it would wait in the queue: not here */
		srv_cache_pin_end(ctx);
		srv_req_defer(r);
		return;
	}
	srv_cache_pin_end(ctx);   /* before the run: it stores, and may evict */
	if (here)
		srv_jobs_run_here(ctx->jobs, id);
	reply_job(ctx, r, id, wait_s, 1);
	return;
unpin:
	srv_cache_pin_end(ctx);
}

void srv_get_job(srv_ctx *ctx, srv_req *r)
{
	int wait_s;

	if (srv_query_wait(r, &wait_s) || not_yours(ctx, r, srv_req_param(r, 0)))
		return;
	reply_job(ctx, r, srv_req_param(r, 0), wait_s, 0);
}

/* Cancel: 200 with the job once it is cancelled (a queued one), 202 while
 * a running one reaches its next op boundary, 409 when it had finished. */
void srv_delete_job(srv_ctx *ctx, srv_req *r)
{
	const char *id = srv_req_param(r, 0);
	int rc;

	if (not_yours(ctx, r, id))
		return;
	rc = srv_jobs_cancel(ctx->jobs, id);
	if (rc < 0) {
		srv_reply_fail(r, ENPU_E_NOT_FOUND, id, "no job '%.40s' on this server", id);
		return;
	}
	if (rc > 0) {
		int final = 0;
		json_object *o = srv_jobs_get(ctx->jobs, id, 0, &final);
		json_object *st = o ? json_object_object_get(o, F_STATE) : NULL;
		json_object *extra = json_object_new_object();
		enpu_err e = ENPU_ERR_INIT;

		enpu_fail(&e, ENPU_E_CONFLICT, id, "nothing to do: the job has ended",
			  "job '%.40s' has already finished (%s): there is nothing to cancel", id,
			  st ? json_object_get_string(st) : "?");
		if (o)
			json_object_object_add(extra, F_JOB, json_object_get(o));
		json_object_put(o);
		srv_reply_error(r, &e, extra);
		return;
	}
	reply_job(ctx, r, id, 0, 0);
}

/* GET /v1/jobs?state=queued,running&backend=npu_sim&limit=50 */
void srv_list_jobs(srv_ctx *ctx, srv_req *r)
{
	const char *states = srv_req_query(r, Q_STATE), *backend = srv_req_query(r, Q_BACKEND);
	const char *lim = srv_req_query(r, Q_LIMIT);
	unsigned mask = 0;
	long limit = LIST_DEFAULT;
	json_object *o;

	if (states && *states) {
		char buf[256], *tok, *save = NULL;

		if (strlen(states) >= sizeof buf) {
			srv_reply_fail(r, ENPU_E_BAD_REQUEST, Q_STATE, "query 'state' is too long");
			return;
		}
		snprintf(buf, sizeof buf, "%s", states);
		for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			int s = srv_job_state_parse(tok);
			if (s < 0) {
				srv_reply_fail(r, ENPU_E_BAD_REQUEST, Q_STATE,
					       "query 'state': '%.40s' is not a job state (queued, running, "
					       "succeeded, failed, cancelled, timed_out)", tok);
				return;
			}
			mask |= 1u << s;
		}
	}
	if (backend && *backend && enpu_backend_parse(backend) < 0) {
		srv_reply_fail(r, ENPU_E_BAD_REQUEST, Q_BACKEND,
			       "query 'backend': '%.40s' is not a backend (cpu_ref, npu_sim, zynq_ps, "
			       "fpga_board)", backend);
		return;
	}
	if (lim) {
		char *end;
		errno = 0;
		limit = strtol(lim, &end, 10);
		if (errno || end == lim || *end || limit < 1 || limit > LIST_MAX) {
			srv_reply_fail(r, ENPU_E_BAD_REQUEST, Q_LIMIT,
				       "query 'limit' must be a whole number in [1, %d], not '%.40s'",
				       LIST_MAX, lim);
			return;
		}
	}
	o = json_object_new_object();
	json_object_object_add(o, F_JOBS, srv_jobs_list(ctx->jobs, mask,
							backend && *backend ? backend : NULL,
							(int)limit, srv_req_who(r)));
	srv_reply_json(r, 200, o);
}

/* The source of a job's event stream: each state change once, as it
 * comes (srv_jobs_watch_next); the stream ends after the final state. */
typedef struct job_watch {
	srv_ctx *ctx;
	char id[64];
	unsigned seq;
	int final;
} job_watch;

static int job_next(void *cls, double wait_s, enpu_buf *out)
{
	job_watch *w = cls;
	char *json = NULL;
	int rc;

	if (w->final)
		return -1;
	rc = srv_jobs_watch_next(w->ctx->jobs, w->id, &w->seq, wait_s, &json, &w->final);
	if (rc == 1 && json && srv_sse_event(out, "state", NULL, json) != 0)
		rc = -1;
	free(json);
	return rc < 0 ? -1 : 0;
}

static void job_unwatch(void *cls)
{
	job_watch *w = cls;

	srv_jobs_unwatch(w->ctx->jobs, w->id);
	free(w);
}

/* GET /v1/jobs/{id}/events: server-sent events, one "state" event per state
 * change (the current state first), streamed as they happen; the stream
 * ends after the final state, or after SRV_WAIT_MAX seconds. */
void srv_get_job_events(srv_ctx *ctx, srv_req *r)
{
	const char *id = srv_req_param(r, 0);
	job_watch *w = calloc(1, sizeof *w);
	enpu_buf first = ENPU_BUF_INIT;
	char *json = NULL;

	if (!w) {
		srv_reply_fail(r, ENPU_E_NOMEM, NULL, "out of memory");
		return;
	}
	if (not_yours(ctx, r, id)) {
		free(w);
		return;
	}
	if (srv_jobs_watch(ctx->jobs, id, &w->seq, &json, &w->final) != 0) {
		free(w);
		srv_reply_fail(r, ENPU_E_NOT_FOUND, id, "no job '%.40s' on this server", id);
		return;
	}
	w->ctx = ctx;
	snprintf(w->id, sizeof w->id, "%s", id);
	if (json && srv_sse_event(&first, "state", NULL, json) != 0) {
		free(json);
		job_unwatch(w);
		srv_reply_fail(r, ENPU_E_NOMEM, NULL, "out of memory");
		return;
	}
	free(json);
	srv_reply_sse(r, &first, job_next, w, job_unwatch, &ctx->stopping, srv_now() + SRV_WAIT_MAX);
	enpu_buf_free(&first);
}

/* A succeeded job's blob (result.npz or report.json), 404 before that. */
static void reply_job_blob(srv_ctx *ctx, srv_req *r, int report)
{
	const char *id = srv_req_param(r, 0), *state = NULL;
	char dig[65], path[4300];
	int rc;

	if (not_yours(ctx, r, id))
		return;
	rc = report ? srv_jobs_report(ctx->jobs, id, dig, &state)
		    : srv_jobs_result(ctx->jobs, id, dig, &state);
	if (rc < 0) {
		srv_reply_fail(r, ENPU_E_NOT_FOUND, id, "no job '%.40s' on this server", id);
		return;
	}
	if (rc == 0) {
		srv_reply_fail(r, ENPU_E_NOT_FOUND, id, "job '%.40s' has no %s: it is %s", id,
			       report ? "report" : "result", state);
		return;
	}
	if (!srv_cas_verify(ctx->cas, dig, NULL)) {   /* evicted, or damaged and dropped */
		srv_reply_fail(r, ENPU_E_NOT_FOUND, id, "the %s of job '%.40s' is no longer in the "
			       "cache (evicted or damaged): run the job again",
			       report ? "report" : "result", id);
		return;
	}
	srv_cas_blob_path(ctx->cas, dig, path, sizeof path);
	srv_reply_file(r, path, report ? "application/json" : "application/octet-stream");
}

void srv_get_job_result(srv_ctx *ctx, srv_req *r)
{
	reply_job_blob(ctx, r, 0);
}

/* report.json as enpu_run wrote it: the bytes whose digest the job names. */
void srv_get_job_report(srv_ctx *ctx, srv_req *r)
{
	reply_job_blob(ctx, r, 1);
}

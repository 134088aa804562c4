/* routes_jobs.c: POST /v1/jobs (queue a run; ?wait=S answers when done),
 * GET /v1/jobs/{id}[?wait=S] (long-poll), DELETE (cancel), /result (the
 * result.npz bytes) and /report. A long poll blocks only its own
 * connection thread. On a local or lab server, zynq_ps and fpga_board jobs
 * go to the board pool (boards.c); with no board for them, 503 at once. */
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>
#include "srv.h"
#include "digest.h"
#include "artifact.h"
#include "jobs.h"
#include "boards.h"
#include "routes.h"

#define DEFAULT_INPUT_NAME "input.npz"

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

void srv_post_job(srv_ctx *ctx, srv_req *r)
{
	const char *art, *input, *input_name;
	char path[4300], id[33];
	enpu_artifact *a = NULL;
	enpu_err e = ENPU_ERR_INIT;
	char backend[32];
	int wait_s, remote = 0;

	if (srv_query_wait(r, &wait_s) || srv_field_str(r, F_ARTIFACT, 1, &art) ||
	    srv_field_str(r, F_INPUT_NAME, 0, &input_name))
		return;
	if (!enpu_is_sha256_hex(art)) {
		srv_reply_fail(r, ENPU_E_BAD_REQUEST, F_ARTIFACT,
			       "field 'artifact' is not an artifact id (64 lowercase hex): '%.80s'", art);
		return;
	}
	/* Load (and verify) now: a bad artifact fails the request, not the job. */
	if (srv_artifact_get(ctx->cas, art, ctx->lim, &a, &e) != 0) {
		srv_reply_error(r, &e, NULL);
		return;
	}
	snprintf(backend, sizeof backend, "%s", enpu_artifact_backend(a));
	srv_artifact_release(a);
	if (ctx->cfg.role != SRV_ROLE_BOARD && srv_backend_on_board(backend)) {
		/* never run here; refused now rather than queued forever */
		if (!srv_boards_serves(ctx->boards, backend)) {
			enpu_fail(&e, ENPU_E_NO_BOARD, F_BACKEND, NULL,
				  "no board serves backend '%s' (this server fronts %d board%s%s)",
				  backend, ctx->cfg.n_boards, ctx->cfg.n_boards == 1 ? "" : "s",
				  ctx->cfg.n_boards ? " and none of them serves it" : "");
			srv_reply_error(r, &e, NULL);
			return;
		}
		remote = 1;
	}
	if (srv_blob_field(ctx, r, F_INPUT, path, sizeof path))
		return;
	srv_field_str(r, F_INPUT, 1, &input);
	if (!input_name || !*input_name)
		input_name = DEFAULT_INPUT_NAME;
	srv_artifact_touch(ctx->cas, art);
	if ((remote ? srv_jobs_submit_remote(ctx->jobs, art, backend, input, input_name,
					     ctx->cfg.job_timeout, id, &e)
		    : srv_jobs_submit(ctx->jobs, art, backend, input, input_name, id, &e)) != 0) {
		srv_reply_error(r, &e, NULL);
		return;
	}
	reply_job(ctx, r, id, wait_s, 1);
}

void srv_get_job(srv_ctx *ctx, srv_req *r)
{
	int wait_s;

	if (srv_query_wait(r, &wait_s))
		return;
	reply_job(ctx, r, srv_req_param(r, 0), wait_s, 0);
}

void srv_delete_job(srv_ctx *ctx, srv_req *r)
{
	const char *id = srv_req_param(r, 0);

	if (srv_jobs_cancel(ctx->jobs, id) != 0) {
		srv_reply_fail(r, ENPU_E_NOT_FOUND, id, "no job '%.40s' on this server", id);
		return;
	}
	reply_job(ctx, r, id, 0, 0);
}

/* A succeeded job's blob (result.npz or report.json), 404 before that. */
static void reply_job_blob(srv_ctx *ctx, srv_req *r, int report)
{
	const char *id = srv_req_param(r, 0), *state = NULL;
	char dig[65], path[4300];
	int rc = report ? srv_jobs_report(ctx->jobs, id, dig, &state)
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

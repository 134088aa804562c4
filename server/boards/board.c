/* board.c: one board agent as the lab server sees it. Every call is bounded
 * (--board-timeout, plus the long-poll time the call asks for) and can be
 * aborted at once by the job's cancel flag or deadline (a libcurl progress
 * callback). A job is forwarded in steps (prepare, upload, submit, wait,
 * outcome, fetch, verify). Nothing a board says is believed: its job JSON
 * is read strictly (proto/wire.c), the result is bounded and checked
 * against the artifact's outputs (board_check.c). Failures are sorted into
 * model errors (passed through intact) and faults of the board (refused,
 * timed out, 5xx, an error of its own, an answer that is not what the API
 * promises). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "srv.h"
#include "buf.h"
#include "digest.h"
#include "restc.h"
#include "wire.h"
#include "artifact.h"
#include "board.h"
#include "npz.h"
#include "ir.h"

#define RESP_CAP (16u << 20)     /* JSON answers and error bodies from a board */
#define JSON_DEPTH 64
#define REPORT_CAP (16u << 20)   /* a job's report.json from a board */

struct srv_blink {
	char *name, *url;
	int timeout;
	enpu_rest *r;
	const volatile int *cancel;  /* of the job being forwarded, or NULL */
	double deadline;             /* 0 = none */
	int no_abort;                /* the cancel call itself must not be aborted */
};

static const char *blink_cacert;

void srv_blink_set_cacert(const char *path)
{
	blink_cacert = path;
}

/* ---- how the board link words failures (enpu_rest_ops) -------------------- */

/* Returns -1 fault (*e), -2 aborted here, -3 our own storage (*e). */
static int on_fault(void *ud, const enpu_rest_req *q, const enpu_rest_fault *f, enpu_err *e)
{
	const srv_blink *l = ud;

	switch (f->why) {
	case ENPU_REST_ABORTED:
		return -2;
	case ENPU_REST_SINK:
		return -3;          /* our own storage failed; *e says how */
	case ENPU_REST_FILE:
		enpu_fail(e, ENPU_E_STORAGE, q->upload_file, NULL, "cannot read '%s': %s",
			  q->upload_file, strerror(f->file_errno));
		return -3;
	default:
		return enpu_fail(e, ENPU_E_BOARD_FAULT, l->name, NULL, "board '%s' (%s): %s %s: %s",
				 l->name, l->url, q->method, q->path,
				 f->why == ENPU_REST_TOO_LARGE ? "the answer is too large" : f->text);
	}
}

/* A non-2xx answer where the API promises one: always a fault of the board
 * (401: it refused our token). -1. */
static int on_status(void *ud, const enpu_rest_req *q, long status, const enpu_buf *resp,
		     enpu_err *e)
{
	const srv_blink *l = ud;
	json_object *o = enpu_rest_parse(l->r, resp), *er;
	enpu_err be;

	if (o && json_object_object_get_ex(o, F_ERROR, &er) &&
	    json_object_is_type(er, json_type_object)) {
		srv_board_err_from_json(er, l->name, &be);
		srv_log("warn", "board=%s %s %s: HTTP %ld %s %.400s", l->name, q->method, q->path,
			status, enpu_code_info_of(be.code)->id, be.message);
		enpu_fail(e, status == 401 ? ENPU_E_AUTH : ENPU_E_BOARD_FAULT, l->name, NULL,
			  "board '%s' (%s): %s %s answered HTTP %ld %s%s", l->name, l->url,
			  q->method, q->path, status, enpu_code_info_of(be.code)->id,
			  status == 401 ? " (it refused the lab's --board-token-file)" : "");
	} else {
		enpu_fail(e, status == 401 ? ENPU_E_AUTH : ENPU_E_BOARD_FAULT, l->name, NULL,
			  "board '%s' (%s): %s %s answered HTTP %ld without an error body", l->name,
			  l->url, q->method, q->path, status);
	}
	json_object_put(o);
	return -1;
}

static int on_broken(void *ud, const enpu_rest_req *q, int what, enpu_err *e)
{
	const srv_blink *l = ud;

	if (what == ENPU_REST_NO_MISSING)
		return enpu_fail(e, ENPU_E_BOARD_FAULT, l->name, NULL,
				 "board '%s': POST " API_BLOBS_MISSING " answered no '" F_MISSING "' list",
				 l->name);
	return enpu_fail(e, ENPU_E_BOARD_FAULT, l->name, NULL,
			 "board '%s' (%s): %s %s: the answer is not a JSON object", l->name,
			 l->url, q->method, q->path);
}

static int on_xfer_on(void *ud, const enpu_rest_req *q)
{
	return 1;
}

/* The job's cancel flag or deadline aborts a call at once. */
static int on_xfer(void *ud, const enpu_rest_req *q, uint64_t dt, uint64_t dn, uint64_t ut,
		   uint64_t un)
{
	const srv_blink *l = ud;

	if (l->no_abort)
		return 0;
	if (l->cancel && *l->cancel)
		return 1;
	return l->deadline > 0 && srv_now() >= l->deadline;
}

/* ---- the link ----------------------------------------------------------------- */

srv_blink *srv_blink_new(const char *name, const char *url, const char *token, int timeout_s)
{
	srv_blink *l = calloc(1, sizeof *l);
	enpu_rest_cfg cfg = {"eulernpud/" ENPU_VERSION " (board link)", timeout_s, timeout_s,
			     RESP_CAP, JSON_DEPTH,
			     {on_fault, on_status, on_broken, on_xfer_on, on_xfer, NULL, l}};

	if (!l)
		return NULL;
	l->name = strdup(name);
	l->url = strdup(url);
	l->timeout = timeout_s;
	l->r = enpu_rest_new(url, &cfg);
	/* the token goes to the board on every call, socket or TCP */
	if (!l->name || !l->url || !l->r ||
	    enpu_rest_set_auth(l->r, token, 1, blink_cacert) != 0) {
		srv_blink_free(l);
		return NULL;
	}
	return l;
}

void srv_blink_free(srv_blink *l)
{
	if (!l)
		return;
	enpu_rest_free(l->r);
	free(l->name);
	free(l->url);
	free(l);
}

/* One call. 0 = the board answered (*status), -1 = fault (*e), -2 =
 * aborted here, -3 = local failure (*e). */
static int call(srv_blink *l, const enpu_rest_req *q, long *status, enpu_buf *resp,
		enpu_err *e)
{
	return enpu_rest_do(l->r, q, status, resp, e);
}

/* A call whose 2xx answer must be a JSON object. 0 (*out set, or the
 * status in *status when it is not 2xx and accept_fail), -1 fault, -2
 * aborted, -3 local failure. */
static int call_json(srv_blink *l, const enpu_rest_req *q, int accept_fail, long *status,
		     json_object **out, enpu_err *e)
{
	return enpu_rest_json(l->r, q, accept_fail, status, out, NULL, e);
}

void srv_board_err_from_json(json_object *err, const char *board, enpu_err *e)
{
	const char *id, *msg;

	if (enpu_wire_err_from_json(err, e, &id, &msg) != 0)
		enpu_fail(e, ENPU_E_BOARD_FAULT, board, NULL, "board '%s' answered error %.20s: %.400s",
			  board, id ? id : "(no code)", msg ? msg : "(no message)");
}

/* ---- health ------------------------------------------------------------- */

int srv_blink_health(srv_blink *l, const volatile int *stop, json_object **out, enpu_err *e)
{
	enpu_rest_req c = {.method = "GET", .path = API_HEALTH};
	enpu_rest_req p = {.method = "POST", .path = API_BLOBS_MISSING,
			   .body = "{\"" F_DIGESTS "\":[]}"};
	json_object *h = NULL, *probe = NULL;
	long st;

	int rc;

	l->cancel = stop;
	l->deadline = 0;
	*out = NULL;
	p.body_len = strlen(p.body);
	rc = call_json(l, &c, 0, &st, &h, e);
	if (rc == 0)
		rc = call_json(l, &p, 0, &st, &probe, e);
	l->cancel = NULL;
	json_object_put(probe);
	if (rc != 0) {
		if (rc == -2)
			enpu_fail(e, ENPU_E_BOARD_FAULT, l->name, NULL, "health check of board '%s' "
				  "stopped: the server is shutting down", l->name);
		json_object_put(h);
		return -1;
	}
	*out = h;
	return 0;
}

/* ---- forwarding a job ------------------------------------------------------ */

typedef struct blob_put {
	srv_blink *l;
	srv_cas *cas;
	char (*digs)[65];
} blob_put;

/* PUT path from our CAS: blob i of the list. */
static int put_blob(void *ud, int i, const char *path, enpu_err *e)
{
	blob_put *bp = ud;
	char file[4300];
	enpu_rest_req pu = {.method = "PUT", .path = path, .upload_file = file};
	json_object *ans = NULL;
	long st;
	int rc;

	srv_cas_blob_path(bp->cas, bp->digs[i], file, sizeof file);
	rc = call_json(bp->l, &pu, 0, &st, &ans, e);
	json_object_put(ans);
	return rc;
}

/* POST /v1/blobs/missing for digs, then PUT each missing one from our CAS. */
static int ensure_blobs(srv_blink *l, srv_cas *cas, char (*digs)[65], int n, int *n_put,
			enpu_err *e)
{
	const char **d = calloc((size_t)n + 1, sizeof *d);
	blob_put bp = {l, cas, digs};
	int i, rc;

	if (!d) {
		enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
		return -3;
	}
	for (i = 0; i < n; i++)
		d[i] = digs[i];
	rc = enpu_rest_blobs_sync(l->r, n, d, put_blob, &bp, n_put, e);
	free(d);
	return rc;
}

/* The artifact on the board: GET its manifest; on 404 import it (PUT with
 * our manifest), uploading blobs again once if the board lost one meanwhile. */
static int ensure_artifact(srv_blink *l, srv_cas *cas, const char *id, const enpu_buf *raw,
			   char (*digs)[65], int n, int *n_put, enpu_err *e)
{
	char path[200];
	enpu_rest_req g = {.method = "GET", .path = path};
	enpu_rest_req p = {.method = "PUT", .path = path, .body = raw->data, .body_len = raw->len};
	json_object *o = NULL;
	long st;
	int rc, tries;

	snprintf(path, sizeof path, API_ARTIFACTS "%s", id);
	rc = call_json(l, &g, 1, &st, &o, e);
	json_object_put(o);
	if (rc != 0 || (st >= 200 && st < 300))
		return rc;
	if (st != 404)
		return enpu_fail(e, ENPU_E_BOARD_FAULT, l->name, NULL,
				 "board '%s': GET %s answered HTTP %ld", l->name, path, st);
	for (tries = 0; tries < 2; tries++) {
		rc = call_json(l, &p, 1, &st, &o, e);
		if (rc != 0)
			return rc;
		if (st >= 200 && st < 300) {
			json_object_put(o);
			return 0;
		}
		if (st != 409 || tries == 1) {
			json_object *er = NULL;
			enpu_err be;
			if (o && json_object_object_get_ex(o, F_ERROR, &er))
				srv_board_err_from_json(er, l->name, &be);
			else
				enpu_fail(&be, ENPU_E_SERVER, NULL, NULL, "no error body");
			json_object_put(o);
			return enpu_fail(e, ENPU_E_BOARD_FAULT, l->name, NULL,
					 "board '%s' would not import artifact '%.12s': HTTP %ld %s",
					 l->name, id, st, enpu_code_info_of(be.code)->id);
		}
		json_object_put(o);
		o = NULL;
		rc = ensure_blobs(l, cas, digs, n, n_put, e);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* A download into our CAS, at most cap bytes (0 = no bound). */
typedef struct bounded {
	srv_upload *up;
	uint64_t n, cap;
	int over;
} bounded;

/* A 2xx body into our CAS upload; past the cap nothing more is written. */
static int cas_sink(void *ud, const void *p, size_t n, int *errno_out, enpu_err *e)
{
	bounded *b = ud;

	b->n += n;
	if (b->cap && b->n > b->cap) {
		b->over = 1;
		return enpu_fail(e, ENPU_E_BOARD_FAULT, NULL, NULL, "too large");
	}
	return srv_upload_write(b->up, p, n, e) != 0 ? -1 : 0;
}

/* Stream GET path (a job's result or report) into our CAS, at most cap
 * bytes (0 = no bound); the bytes must hash to expect. */
static int fetch_blob(srv_blink *l, srv_cas *cas, const char *path, const char *expect,
		      uint64_t cap, enpu_err *e)
{
	bounded b = {.cap = cap};
	enpu_rest_req c = {.method = "GET", .path = path, .sink = cas_sink, .sink_ud = &b};
	srv_upload *down;
	char dig[65];
	int rc;

	b.up = down = srv_upload_begin(cas, e);
	if (!down)
		return -3;
	srv_upload_volatile(down);   /* a job's result or report: made again after a crash */
	rc = enpu_rest_fetch(l->r, &c, NULL, e);
	if (rc != 0) {
		srv_upload_abort(down);
		if (b.over)
			return enpu_fail(e, ENPU_E_BOARD_FAULT, l->name, NULL, "board '%s' returned more "
					 "than the %llu bytes the job's outputs take: GET %s", l->name,
					 (unsigned long long)cap, path);
		return rc;
	}
	if (srv_upload_finish(down, expect, dig, NULL, e) != 0) {
		if (e->code == ENPU_E_BLOB_DIGEST)
			return enpu_fail(e, ENPU_E_BOARD_FAULT, l->name, NULL,
					 "board '%s': GET %s: the bytes do not match the job's digest %.12s",
					 l->name, path, expect);
		return -3;
	}
	return 0;
}

/* Keys of a board's job JSON shown with the job beyond the standard ones;
 * any other key is ignored. */
static const char *const extra_keys[] = {F_NPU, "fpga"};

static json_object *extra_of(json_object *job)
{
	json_object *x = NULL, *v;
	size_t i;

	for (i = 0; i < sizeof extra_keys / sizeof extra_keys[0]; i++) {
		if (!json_object_object_get_ex(job, extra_keys[i], &v) ||
		    !json_object_is_type(v, json_type_object))
			continue;
		if (!x)
			x = json_object_new_object();
		json_object_object_add(x, extra_keys[i], json_object_get(v));
	}
	return x;
}

/* Seconds to long-poll: half the call timeout, within the deadline. */
static long poll_wait(const srv_blink *l)
{
	long w = l->timeout / 2;
	double left = l->deadline - srv_now();

	if (w < 1)
		w = 1;
	if (w > SRV_WAIT_MAX)
		w = SRV_WAIT_MAX;
	if (left < (double)w)
		w = left > 1 ? (long)left + 1 : 1;
	return w;
}

/* One forwarding of a job: what its steps share. Step results: 0, -1
 * fault (*e), -2 aborted here, -3 our own failure (*e), -4 the board's
 * verdict on the job (*e, kind in fw->kind). */
typedef struct fwd {
	srv_blink *l;
	srv_cas *cas;
	const srv_rjob *rj;
	enpu_manifest m;
	enpu_buf raw;
	char (*digs)[65];
	int n, n_put;
	char bid[ENPU_JOB_ID_SIZE], path[300];
	json_object *job;           /* the board's last answer about the job */
	enpu_wire_output want[ENPU_WIRE_JOB_OUTPUTS];   /* the artifact's outputs */
	int n_want;
	json_object *board_error;   /* the board's own error, as data */
	enpu_wire_job wj;           /* ... as read */
	srv_rkind kind;
} fwd;

/* The digests the board needs: the artifact's files, its manifest, the input. */
static int fwd_prepare(fwd *f, enpu_err *e)
{
	int i;

	if (srv_artifact_manifest(f->cas, f->rj->artifact, &f->m, &f->raw, e) != 0)
		return -3;
	f->n = f->m.n + 2;
	f->digs = calloc((size_t)f->n, sizeof *f->digs);
	if (!f->digs)
		return enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory"), -3;
	for (i = 0; i < f->m.n; i++)
		memcpy(f->digs[i], f->m.files[i].sha256, 65);
	enpu_sha256_hex(f->raw.data, f->raw.len, f->digs[f->m.n]);
	memcpy(f->digs[f->m.n + 1], f->rj->input, 65);
	return 0;
}

/* Upload the blobs the board lacks, then import the artifact. */
static int fwd_upload(fwd *f, enpu_err *e)
{
	int rc = ensure_blobs(f->l, f->cas, f->digs, f->n, &f->n_put, e);

	return rc ? rc : ensure_artifact(f->l, f->cas, f->rj->artifact, &f->raw, f->digs, f->n,
					 &f->n_put, e);
}

/* f->job read into f->wj: an answer that is not job JSON is a fault. */
static int fwd_read(fwd *f, const char *what, enpu_err *e)
{
	char why[160];

	if (enpu_wire_job_read(f->job, &f->wj, why, sizeof why) == 0)
		return 0;
	return enpu_fail(e, ENPU_E_BOARD_FAULT, f->l->name, NULL, "board '%s' returned %s that is "
			 "not a valid job: %s", f->l->name, what, why);
}

/* The board's error object er about the job (or NULL) into *e: -4 (its
 * verdict, f->kind) or -1 (a fault). */
static int fwd_board_error(fwd *f, json_object *er, const char *what, enpu_err *e)
{
	enpu_err be;

	if (!er)
		return enpu_fail(e, ENPU_E_BOARD_FAULT, f->l->name, NULL,
				 "board '%s': %s without saying why", f->l->name, what);
	srv_board_err_from_json(er, f->l->name, &be);
	json_object_put(f->board_error);
	f->kind = srv_board_wrap(&be, f->l->name, what, e, &f->board_error);
	if (f->kind == SRV_RUN_FAULT && be.code != ENPU_E_BOARD_FAULT)
		srv_log("warn", "job=%s board=%s: %s: %s %.400s", f->rj->id, f->l->name, what,
			enpu_code_info_of(be.code)->id, be.message);
	return f->kind == SRV_RUN_FAULT ? -1 : -4;
}

/* POST the job (once more from the upload when the board's cache lost the
 * artifact or input meanwhile); its id into f->bid. */
static int fwd_submit(fwd *f, enpu_err *e)
{
	json_object *req = json_object_new_object();
	int rc, again;

	json_object_object_add(req, F_ARTIFACT, json_object_new_string(f->rj->artifact));
	json_object_object_add(req, F_INPUT, json_object_new_string(f->rj->input));
	json_object_object_add(req, F_INPUT_NAME, json_object_new_string(f->rj->input_name));
	for (again = 1;; again = 0) {
		long w = poll_wait(f->l), st;
		enpu_rest_req c = {.method = "POST", .path = f->path, .timeout = w};

		snprintf(f->path, sizeof f->path, API_JOBS "?" Q_WAIT "=%ld", w);
		c.body = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
		c.body_len = strlen(c.body);
		json_object_put(f->job);
		f->job = NULL;
		rc = fwd_upload(f, e);
		if (rc == 0)
			rc = call_json(f->l, &c, 1, &st, &f->job, e);
		if (rc == 0 && (st == 404 || st == 409) && again)
			continue;
		if (rc == 0 && (st < 200 || st >= 300)) {
			/* the board refused this job (bad artifact or input) */
			json_object *er = NULL;
			if (f->job && (!json_object_object_get_ex(f->job, F_ERROR, &er) ||
				       !json_object_is_type(er, json_type_object)))
				er = NULL;
			rc = fwd_board_error(f, er, "it refused the job", e);
		}
		break;
	}
	json_object_put(req);
	if (rc == 0)
		rc = fwd_read(f, "a new job", e);
	if (rc == 0 && !enpu_job_id_parse(f->wj.id, NULL))
		rc = enpu_fail(e, ENPU_E_BOARD_FAULT, f->l->name, NULL,
			       "board '%s': the new job has no valid id", f->l->name);
	if (rc == 0)   /* parsed: it fits */
		memcpy(f->bid, f->wj.id, strlen(f->wj.id) + 1);
	return rc;
}

/* Long-poll the board's job until it ends. */
static int fwd_wait(fwd *f, enpu_err *e)
{
	while (!strcmp(f->wj.state, JOB_QUEUED) || !strcmp(f->wj.state, JOB_RUNNING)) {
		long w = poll_wait(f->l), st;
		enpu_rest_req c = {.method = "GET", .path = f->path, .timeout = w};
		int rc;

		snprintf(f->path, sizeof f->path, API_JOBS "/%s?" Q_WAIT "=%ld", f->bid, w);
		json_object_put(f->job);
		f->job = NULL;
		rc = call_json(f->l, &c, 0, &st, &f->job, e);
		if (rc == 0)
			rc = fwd_read(f, "a job", e);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* How the board's job ended: failed is its verdict (-4 or a fault),
 * succeeded needs result and report digests. */
static int fwd_outcome(fwd *f, enpu_err *e)
{
	char what[120];

	if (!strcmp(f->wj.state, JOB_FAILED)) {
		snprintf(what, sizeof what, "its job '%s' failed", f->bid);
		return fwd_board_error(f, f->wj.error, what, e);
	}
	if (strcmp(f->wj.state, JOB_SUCCEEDED) != 0 || !f->wj.result[0] || !f->wj.report[0])
		return enpu_fail(e, ENPU_E_BOARD_FAULT, f->l->name, NULL,
				 "board '%s': job '%s' ended as '%.40s' without result and report digests",
				 f->l->name, f->bid, f->wj.state);
	return 0;
}

/* The result and the report into our CAS, each checked by its digest. */
static int fwd_fetch(fwd *f, srv_rresult *res, enpu_err *e)
{
	int rc;

	memcpy(res->result, f->wj.result, 65);
	memcpy(res->report, f->wj.report, 65);
	snprintf(f->path, sizeof f->path, API_JOBS "/%s" API_JOB_RESULT, f->bid);
	rc = fetch_blob(f->l, f->cas, f->path, res->result, srv_board_result_cap(f->want, f->n_want),
			e);
	if (rc == 0) {
		snprintf(f->path, sizeof f->path, API_JOBS "/%s" API_JOB_REPORT, f->bid);
		rc = fetch_blob(f->l, f->cas, f->path, res->report, REPORT_CAP, e);
	}
	return rc;
}

/* The artifact's graph outputs: what a result must hold. */
static int fwd_expect(fwd *f, const enpu_limits *lim, enpu_err *e)
{
	enpu_artifact *a = NULL;
	const enpu_graph *g;
	int i, d;

	if (srv_artifact_get(f->cas, f->rj->artifact, lim, &a, e) != 0)
		return -3;
	g = enpu_artifact_graph(a);
	f->n_want = 0;
	for (i = 0; g && i < g->n_outputs && i < ENPU_WIRE_JOB_OUTPUTS; i++) {
		const enpu_irtensor *t = &g->tensors[g->outputs[i]];
		enpu_wire_output *w = &f->want[f->n_want++];

		snprintf(w->name, sizeof w->name, "%s", t->name);
		w->dtype = t->dtype;
		w->ndim = t->shape.ndim < ENPU_WIRE_RANK ? t->shape.ndim : ENPU_WIRE_RANK;
		for (d = 0; d < w->ndim; d++)
			w->dim[d] = t->shape.dim[d];
	}
	srv_artifact_release(a);
	return 0;
}

/* The job succeeded and its files are ours: the result must be an npz of
 * exactly the artifact's outputs (float32, the shapes the graph gives),
 * and the outputs the board claims must be those. The outputs shown with
 * the job are the artifact's own. */
static int fwd_verify(fwd *f, srv_rresult *res, enpu_err *e)
{
	enpu_tlist got = ENPU_TLIST_INIT;
	enpu_err ne = ENPU_ERR_INIT;
	char file[4300];
	int rc = 0;

	srv_cas_blob_path(f->cas, res->result, file, sizeof file);
	if (enpu_npz_read(file, "the result", NULL, &got, &ne) != 0)
		rc = enpu_fail(e, ENPU_E_BOARD_FAULT, f->l->name, NULL, "board '%s' returned a "
			       "result that is not a valid npz: %s", f->l->name, ne.message);
	else if (srv_board_check_result(f->want, f->n_want, &got, f->l->name, e) != 0 ||
		 srv_board_check_claim(f->want, f->n_want, &f->wj, f->l->name, e) != 0)
		rc = -1;
	enpu_tlist_free(&got);
	if (rc != 0)
		return rc;
	res->seconds = f->wj.seconds >= 0 ? f->wj.seconds : 0;
	res->outputs = srv_board_outputs_json(f->want, f->n_want);
	res->extra = extra_of(f->job);
	return 0;
}

/* Stop the board's job too (DELETE); bounded by --board-timeout alone. */
static void fwd_cancel(fwd *f)
{
	enpu_buf resp = ENPU_BUF_INIT;
	enpu_rest_req c = {.method = "DELETE", .path = f->path};
	enpu_err ignore;
	long st;

	snprintf(f->path, sizeof f->path, API_JOBS "/%s", f->bid);
	f->l->no_abort = 1;
	if (call(f->l, &c, &st, &resp, &ignore) == 0)
		srv_log("info", "job=%s cancelled on board=%s (board_job=%s): HTTP %ld", f->rj->id,
			f->l->name, f->bid, st);
	enpu_buf_free(&resp);
	f->l->no_abort = 0;
}

srv_rkind srv_blink_run(srv_blink *l, srv_cas *cas, const enpu_limits *lim, const srv_rjob *rj,
			srv_rresult *res, enpu_err *e)
{
	fwd f = {.l = l, .cas = cas, .rj = rj, .raw = ENPU_BUF_INIT, .kind = SRV_RUN_FAULT};
	int rc;

	memset(res, 0, sizeof *res);
	l->cancel = rj->cancel;
	l->deadline = rj->deadline;
	l->no_abort = 0;
	rc = fwd_prepare(&f, e);
	if (rc == 0)
		rc = fwd_expect(&f, lim, e);
	if (rc == 0)
		rc = fwd_submit(&f, e);
	if (rc == 0) {
		srv_log("info", "job=%s board=%s board_job=%s attempt=%d uploaded=%d", rj->id,
			l->name, f.bid, rj->attempt, f.n_put);
		rc = fwd_wait(&f, e);
	}
	if (rc == 0)
		rc = fwd_outcome(&f, e);
	if (rc == 0)
		rc = fwd_fetch(&f, res, e);
	if (rc == 0)
		rc = fwd_verify(&f, res, e);
	/* -1 fault (*e), -2 aborted here, -3 our own failure (*e), -4 the
	 * board's verdict (f.kind) */
	f.kind = rc == 0 ? SRV_RUN_OK : rc == -2 ? SRV_RUN_CANCEL : rc == -3 ? SRV_RUN_MODEL
		 : rc == -4 ? f.kind : SRV_RUN_FAULT;
	if (f.kind == SRV_RUN_CANCEL && f.bid[0])
		fwd_cancel(&f);
	if (f.kind != SRV_RUN_OK) {
		json_object_put(res->outputs);
		json_object_put(res->extra);
		res->outputs = res->extra = NULL;
	}
	res->board_error = f.kind == SRV_RUN_FAULT ? f.board_error : NULL;
	if (!res->board_error)
		json_object_put(f.board_error);
	l->cancel = NULL;
	l->deadline = 0;
	json_object_put(f.job);
	free(f.digs);
	enpu_manifest_free(&f.m);
	enpu_buf_free(&f.raw);
	return f.kind;
}

/* board.c: one board agent as the lab server sees it. Every call is bounded
 * (--board-timeout, plus the long-poll time the call asks for) and can be
 * aborted at once by the job's cancel flag or deadline (a libcurl progress
 * callback). Failures are sorted into the board's own job errors (passed
 * through intact) and faults of the board (refused, timed out, 5xx, an
 * answer that is not what the API promises). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>
#include <json-c/json.h>
#include "srv.h"
#include "buf.h"
#include "digest.h"
#include "artifact.h"
#include "board.h"

#define RESP_CAP (16u << 20)     /* JSON answers and error bodies from a board */

struct srv_blink {
	char *name, *url, *base, *sock;
	char *auth;                  /* "Authorization: Bearer ..." or NULL; never logged */
	int timeout;
	CURL *h;
	const volatile int *cancel;  /* of the job being forwarded, or NULL */
	double deadline;             /* 0 = none */
	int no_abort;                /* the cancel call itself must not be aborted */
};

static const char *blink_cacert;

void srv_blink_set_cacert(const char *path)
{
	blink_cacert = path;
}

srv_blink *srv_blink_new(const char *name, const char *url, const char *token, int timeout_s)
{
	srv_blink *l = calloc(1, sizeof *l);
	size_t n;

	if (!l)
		return NULL;
	l->name = strdup(name);
	l->url = strdup(url);
	if (!strncmp(url, "unix:", 5)) {
		l->sock = strdup(url + 5);
		l->base = strdup("http://localhost");
	} else {
		l->base = strdup(url);
	}
	if (token) {
		n = strlen(token) + 32;
		l->auth = malloc(n);
		if (l->auth)
			snprintf(l->auth, n, H_AUTHORIZATION ": Bearer %s", token);
	}
	l->timeout = timeout_s;
	l->h = curl_easy_init();
	if (!l->name || !l->url || !l->base || (!strncmp(url, "unix:", 5) && !l->sock) ||
	    (token && !l->auth) || !l->h) {
		srv_blink_free(l);
		return NULL;
	}
	n = strlen(l->base);
	while (n > 0 && l->base[n - 1] == '/')
		l->base[--n] = '\0';
	return l;
}

void srv_blink_free(srv_blink *l)
{
	if (!l)
		return;
	if (l->h)
		curl_easy_cleanup(l->h);
	free(l->name);
	free(l->url);
	free(l->base);
	free(l->sock);
	free(l->auth);
	free(l);
}

/* ---- one HTTP call ------------------------------------------------------- */

typedef struct bcall {
	const char *method, *path;
	const char *body;            /* POST/PUT body (JSON unless ctype) */
	size_t len;
	const char *upload;          /* PUT this file instead */
	srv_upload *down;            /* a 2xx body is streamed here */
	long wait;                   /* seconds the board may hold the call */
} bcall;

typedef struct sink {
	CURL *h;
	enpu_buf *buf;
	srv_upload *down;
	int decided, to_down, err;
	enpu_err *e;
} sink;

static size_t on_write(char *p, size_t size, size_t nmemb, void *ud)
{
	sink *s = ud;
	size_t n = size * nmemb;

	if (!s->decided) {
		long st = 0;
		curl_easy_getinfo(s->h, CURLINFO_RESPONSE_CODE, &st);
		s->to_down = s->down && st >= 200 && st < 300;
		s->decided = 1;
	}
	if (s->to_down) {
		if (srv_upload_write(s->down, p, n, s->e) != 0) {
			s->err = 1;
			return 0;
		}
		return n;
	}
	if (enpu_buf_add(s->buf, p, n) != 0) {
		s->err = 2;
		return 0;
	}
	return n;
}

static int on_progress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	const srv_blink *l = ud;
	(void)dt; (void)dn; (void)ut; (void)un;

	if (l->no_abort)
		return 0;
	if (l->cancel && *l->cancel)
		return 1;
	return l->deadline > 0 && srv_now() >= l->deadline;
}

/* 0 = the board answered (*status), -1 = fault (*e), -2 = aborted here. */
static int call(srv_blink *l, const bcall *c, long *status, enpu_buf *resp, enpu_err *e)
{
	char errbuf[CURL_ERROR_SIZE] = "", url[4400];
	struct curl_slist *hdrs = NULL;
	sink s = {l->h, resp, c->down, 0, 0, 0, e};
	FILE *up = NULL;
	CURLcode rc;
	int ret = -1;

	*status = 0;
	if (resp->cap == 0)
		resp->cap = RESP_CAP;
	snprintf(url, sizeof url, "%s%s", l->base, c->path);
	curl_easy_reset(l->h);
	curl_easy_setopt(l->h, CURLOPT_URL, url);
	if (l->sock)
		curl_easy_setopt(l->h, CURLOPT_UNIX_SOCKET_PATH, l->sock);
	curl_easy_setopt(l->h, CURLOPT_ERRORBUFFER, errbuf);
	if (blink_cacert)
		curl_easy_setopt(l->h, CURLOPT_CAINFO, blink_cacert);
	curl_easy_setopt(l->h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(l->h, CURLOPT_CONNECTTIMEOUT, (long)l->timeout);
	curl_easy_setopt(l->h, CURLOPT_TIMEOUT, (long)l->timeout + c->wait);
	curl_easy_setopt(l->h, CURLOPT_USERAGENT, "eulernpud/" ENPU_VERSION " (board link)");
	curl_easy_setopt(l->h, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(l->h, CURLOPT_WRITEDATA, &s);
	curl_easy_setopt(l->h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(l->h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(l->h, CURLOPT_XFERINFODATA, l);
	hdrs = curl_slist_append(hdrs, "Expect:");
	if (l->auth)
		hdrs = curl_slist_append(hdrs, l->auth);
	if (c->upload) {
		long long size;
		up = fopen(c->upload, "rb");
		if (!up || fseek(up, 0, SEEK_END) != 0 || (size = ftell(up)) < 0 ||
		    fseek(up, 0, SEEK_SET) != 0) {
			enpu_fail(e, ENPU_E_STORAGE, c->upload, NULL, "cannot read '%s': %s",
				  c->upload, strerror(errno));
			ret = -3;
			goto out;
		}
		hdrs = curl_slist_append(hdrs, "Content-Type: application/octet-stream");
		curl_easy_setopt(l->h, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(l->h, CURLOPT_READDATA, up);
		curl_easy_setopt(l->h, CURLOPT_INFILESIZE_LARGE, (curl_off_t)size);
	} else if (!strcmp(c->method, "POST") || !strcmp(c->method, "PUT")) {
		hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
		curl_easy_setopt(l->h, CURLOPT_POSTFIELDS, c->body ? c->body : "");
		curl_easy_setopt(l->h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(c->body ? c->len : 0));
		if (!strcmp(c->method, "PUT"))
			curl_easy_setopt(l->h, CURLOPT_CUSTOMREQUEST, "PUT");
	} else if (strcmp(c->method, "GET") != 0) {
		curl_easy_setopt(l->h, CURLOPT_CUSTOMREQUEST, c->method);
	}
	curl_easy_setopt(l->h, CURLOPT_HTTPHEADER, hdrs);
	rc = curl_easy_perform(l->h);
	if (rc == CURLE_OK) {
		curl_easy_getinfo(l->h, CURLINFO_RESPONSE_CODE, status);
		ret = 0;
	} else if (rc == CURLE_ABORTED_BY_CALLBACK) {
		ret = -2;
	} else if (rc == CURLE_WRITE_ERROR && s.err == 1) {
		ret = -3;           /* our own storage failed; *e says how */
	} else {
		enpu_fail(e, ENPU_E_BOARD_FAULT, l->name, NULL, "board '%s' (%s): %s %s: %s",
			  l->name, l->url, c->method, c->path,
			  rc == CURLE_WRITE_ERROR ? "the answer is too large"
			  : errbuf[0] ? errbuf : curl_easy_strerror(rc));
	}
out:
	if (up)
		fclose(up);
	curl_slist_free_all(hdrs);
	return ret;
}

static json_object *parse_obj(const enpu_buf *b)
{
	json_tokener *tok;
	json_object *o;

	if (!b->data || b->len == 0 || b->len > (size_t)0x7fffffff)
		return NULL;
	tok = json_tokener_new_ex(64);
	if (!tok)
		return NULL;
	o = json_tokener_parse_ex(tok, b->data, (int)b->len);
	if (json_tokener_get_error(tok) != json_tokener_success ||
	    !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	return o;
}

void srv_board_err_from_json(json_object *err, const char *board, enpu_err *e)
{
	json_object *v;
	const char *id = NULL, *msg = NULL, *where = NULL, *fix = NULL;
	const enpu_code_info *ci;

	if (json_object_object_get_ex(err, "code", &v))
		id = json_object_get_string(v);
	if (json_object_object_get_ex(err, "message", &v))
		msg = json_object_get_string(v);
	if (json_object_object_get_ex(err, "where", &v))
		where = json_object_get_string(v);
	if (json_object_object_get_ex(err, "fix", &v))
		fix = json_object_get_string(v);
	ci = id ? enpu_code_by_id(id) : NULL;
	*e = (enpu_err)ENPU_ERR_INIT;
	if (!ci) {
		enpu_fail(e, ENPU_E_BOARD_FAULT, board, NULL, "board '%s' answered error %.20s: %.400s",
			  board, id ? id : "(no code)", msg ? msg : "(no message)");
		return;
	}
	e->code = ci->code;
	snprintf(e->message, sizeof e->message, "%s", msg ? msg : ci->title);
	snprintf(e->where, sizeof e->where, "%s", where ? where : "");
	snprintf(e->fix, sizeof e->fix, "%s", fix ? fix : "");
}

/* A non-2xx answer where the API promises one: always a fault of the board
 * (401: it refused our token). -1. */
static int bad_status(srv_blink *l, const bcall *c, long status, const enpu_buf *resp,
		      enpu_err *e)
{
	json_object *o = parse_obj(resp), *er;
	enpu_err be;

	if (o && json_object_object_get_ex(o, F_ERROR, &er) &&
	    json_object_is_type(er, json_type_object)) {
		srv_board_err_from_json(er, l->name, &be);
		enpu_fail(e, status == 401 ? ENPU_E_AUTH : ENPU_E_BOARD_FAULT, l->name, NULL,
			  "board '%s' (%s): %s %s answered HTTP %ld: %s %s", l->name, l->url,
			  c->method, c->path, status, enpu_code_info_of(be.code)->id, be.message);
	} else {
		enpu_fail(e, status == 401 ? ENPU_E_AUTH : ENPU_E_BOARD_FAULT, l->name, NULL,
			  "board '%s' (%s): %s %s answered HTTP %ld without an error body", l->name,
			  l->url, c->method, c->path, status);
	}
	json_object_put(o);
	return -1;
}

/* A call whose 2xx answer must be a JSON object. 0 (*out set, or the
 * status in *status when it is not 2xx and accept_fail), -1 fault, -2
 * aborted, -3 local failure. */
static int call_json(srv_blink *l, const bcall *c, int accept_fail, long *status,
		     json_object **out, enpu_err *e)
{
	enpu_buf resp = ENPU_BUF_INIT;
	int rc = call(l, c, status, &resp, e);

	*out = NULL;
	if (rc != 0)
		goto out;
	if (*status < 200 || *status >= 300) {
		if (accept_fail && *status != 401 && *status != 429 && *status < 500) {
			*out = parse_obj(&resp);
			goto out;
		}
		rc = bad_status(l, c, *status, &resp, e);
		goto out;
	}
	*out = parse_obj(&resp);
	if (!*out)
		rc = enpu_fail(e, ENPU_E_BOARD_FAULT, l->name, NULL,
			       "board '%s' (%s): %s %s: the answer is not a JSON object", l->name,
			       l->url, c->method, c->path);
out:
	enpu_buf_free(&resp);
	return rc;
}

/* ---- health ------------------------------------------------------------- */

int srv_blink_health(srv_blink *l, const volatile int *stop, json_object **out, enpu_err *e)
{
	bcall c = {"GET", API_HEALTH, NULL, 0, NULL, NULL, 0};
	bcall p = {"POST", API_BLOBS_MISSING, "{\"" F_DIGESTS "\":[]}", 0, NULL, NULL, 0};
	json_object *h = NULL, *probe = NULL;
	long st;

	int rc;

	l->cancel = stop;
	l->deadline = 0;
	*out = NULL;
	p.len = strlen(p.body);
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

/* POST /v1/blobs/missing for digs, then PUT each missing one from our CAS. */
static int ensure_blobs(srv_blink *l, srv_cas *cas, char (*digs)[65], int n, int *n_put,
			enpu_err *e)
{
	json_object *req = json_object_new_object(), *arr = json_object_new_array();
	json_object *res = NULL, *missing;
	bcall c = {"POST", API_BLOBS_MISSING, NULL, 0, NULL, NULL, 0};
	char path[200], file[4300];
	long st;
	int i, k, rc;

	json_object_object_add(req, F_DIGESTS, arr);
	for (i = 0; i < n; i++)
		json_object_array_add(arr, json_object_new_string(digs[i]));
	c.body = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
	c.len = strlen(c.body);
	rc = call_json(l, &c, 0, &st, &res, e);
	if (rc != 0)
		goto out;
	if (!json_object_object_get_ex(res, F_MISSING, &missing) ||
	    !json_object_is_type(missing, json_type_array)) {
		rc = enpu_fail(e, ENPU_E_BOARD_FAULT, l->name, NULL,
			       "board '%s': POST " API_BLOBS_MISSING " answered no '" F_MISSING "' list",
			       l->name);
		goto out;
	}
	/* Walk our list, not the board's: each digest at most once, and nothing
	 * we were not about to send. */
	for (i = 0; i < n; i++) {
		int want = 0, dup = 0;
		for (k = 0; k < (int)json_object_array_length(missing); k++) {
			const char *d = json_object_get_string(json_object_array_get_idx(missing, k));
			if (d && !strcmp(d, digs[i]))
				want = 1;
		}
		for (k = 0; k < i; k++)
			if (!strcmp(digs[k], digs[i]))
				dup = 1;
		if (!want || dup)
			continue;
		bcall pu = {"PUT", path, NULL, 0, file, NULL, 0};
		json_object *ans = NULL;
		snprintf(path, sizeof path, API_BLOBS "%s", digs[i]);
		srv_cas_blob_path(cas, digs[i], file, sizeof file);
		rc = call_json(l, &pu, 0, &st, &ans, e);
		json_object_put(ans);
		if (rc != 0)
			goto out;
		if (n_put)
			(*n_put)++;
	}
	rc = 0;
out:
	json_object_put(req);
	json_object_put(res);
	return rc;
}

/* The artifact on the board: GET its manifest; on 404 import it (PUT with
 * our manifest), uploading blobs again once if the board lost one meanwhile. */
static int ensure_artifact(srv_blink *l, srv_cas *cas, const char *id, const enpu_buf *raw,
			   char (*digs)[65], int n, int *n_put, enpu_err *e)
{
	char path[200];
	bcall g = {"GET", path, NULL, 0, NULL, NULL, 0};
	bcall p = {"PUT", path, raw->data, raw->len, NULL, NULL, 0};
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
					 "board '%s' would not import artifact '%.12s': HTTP %ld %s %s",
					 l->name, id, st, enpu_code_info_of(be.code)->id, be.message);
		}
		json_object_put(o);
		o = NULL;
		rc = ensure_blobs(l, cas, digs, n, n_put, e);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* Stream GET path into our CAS; the bytes must hash to expect. */
static int fetch_blob(srv_blink *l, srv_cas *cas, const char *path, const char *expect,
		      enpu_err *e)
{
	enpu_buf resp = ENPU_BUF_INIT;
	bcall c = {"GET", path, NULL, 0, NULL, NULL, 0};
	char dig[65];
	long st;
	int rc;

	c.down = srv_upload_begin(cas, e);
	if (!c.down)
		return -3;
	rc = call(l, &c, &st, &resp, e);
	if (rc == 0 && (st < 200 || st >= 300))
		rc = bad_status(l, &c, st, &resp, e);
	enpu_buf_free(&resp);
	if (rc != 0) {
		srv_upload_abort(c.down);
		return rc;
	}
	if (srv_upload_finish(c.down, expect, dig, NULL, e) != 0) {
		if (e->code == ENPU_E_BLOB_DIGEST)
			return enpu_fail(e, ENPU_E_BOARD_FAULT, l->name, NULL,
					 "board '%s': GET %s: the bytes do not match the job's digest %.12s",
					 l->name, path, expect);
		return -3;
	}
	return 0;
}

static int digest_field(json_object *o, const char *key, char out[65])
{
	json_object *v;
	const char *s;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return -1;
	s = json_object_get_string(v);
	if (!enpu_is_sha256_hex(s))
		return -1;
	memcpy(out, s, 65);
	return 0;
}

static const char *const job_keys[] = {
	F_ID, F_STATE, F_ARTIFACT, F_BACKEND, F_INPUT, F_CREATED, F_STARTED, F_FINISHED,
	F_SECONDS, F_RESULT, F_OUTPUTS, F_REPORT, F_BOARD, F_ATTEMPTS, F_ERROR, F_FAILURE,
};

/* Keys of the board's job JSON beyond the standard ones ("npu", "fpga"). */
static json_object *extra_of(json_object *job)
{
	json_object *x = NULL;
	size_t i;

	json_object_object_foreach(job, k, v) {
		int std = 0;
		for (i = 0; i < sizeof job_keys / sizeof job_keys[0]; i++)
			if (!strcmp(k, job_keys[i]))
				std = 1;
		if (std)
			continue;
		if (!x)
			x = json_object_new_object();
		json_object_object_add(x, k, json_object_get(v));
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

static const char *job_state(json_object *job)
{
	json_object *v;
	return json_object_object_get_ex(job, F_STATE, &v) && json_object_is_type(v, json_type_string)
	       ? json_object_get_string(v) : NULL;
}

srv_rkind srv_blink_run(srv_blink *l, srv_cas *cas, const srv_rjob *rj, srv_rresult *res,
			enpu_err *e)
{
	srv_manifest m;
	enpu_buf raw = ENPU_BUF_INIT;
	char (*digs)[65] = NULL, path[300], bid[33] = "";
	json_object *req = NULL, *job = NULL, *v;
	srv_rkind kind = SRV_RUN_FAULT;
	const char *state;
	long st;
	int i, n, rc, n_put = 0, reuploaded = 0;

	memset(res, 0, sizeof *res);
	l->cancel = rj->cancel;
	l->deadline = rj->deadline;
	l->no_abort = 0;
	if (srv_artifact_manifest(cas, rj->artifact, &m, &raw, e) != 0) {
		enpu_buf_free(&raw);
		return SRV_RUN_MODEL;
	}
	n = m.n + 2;
	digs = calloc((size_t)n, sizeof *digs);
	if (!digs) {
		enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
		kind = SRV_RUN_MODEL;
		goto out;
	}
	for (i = 0; i < m.n; i++)
		memcpy(digs[i], m.files[i].sha256, 65);
	enpu_sha256_hex(raw.data, raw.len, digs[m.n]);
	memcpy(digs[m.n + 1], rj->input, 65);

upload:
	rc = ensure_blobs(l, cas, digs, n, &n_put, e);
	if (rc == 0)
		rc = ensure_artifact(l, cas, rj->artifact, &raw, digs, n, &n_put, e);
	if (rc != 0)
		goto failed;

	req = json_object_new_object();
	json_object_object_add(req, F_ARTIFACT, json_object_new_string(rj->artifact));
	json_object_object_add(req, F_INPUT, json_object_new_string(rj->input));
	json_object_object_add(req, F_INPUT_NAME, json_object_new_string(rj->input_name));
	{
		long w = poll_wait(l);
		bcall c = {"POST", path, NULL, 0, NULL, NULL, w};
		snprintf(path, sizeof path, API_JOBS "?" Q_WAIT "=%ld", w);
		c.body = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
		c.len = strlen(c.body);
		rc = call_json(l, &c, 1, &st, &job, e);
		if (rc != 0)
			goto failed;
		if ((st == 404 || st == 409) && !reuploaded) {
			/* its cache evicted the artifact or input since we looked:
			 * once more from the top */
			reuploaded = 1;
			json_object_put(req);
			json_object_put(job);
			req = job = NULL;
			goto upload;
		}
		if (st < 200 || st >= 300) {
			/* the board refused this job (bad artifact or input): its
			 * error, as it said it */
			json_object *er;
			if (job && json_object_object_get_ex(job, F_ERROR, &er) &&
			    json_object_is_type(er, json_type_object)) {
				srv_board_err_from_json(er, l->name, e);
				kind = SRV_RUN_MODEL;
			} else {
				enpu_fail(e, ENPU_E_BOARD_FAULT, l->name, NULL,
					  "board '%s': POST " API_JOBS " answered HTTP %ld without an error body",
					  l->name, st);
			}
			goto out;
		}
	}
	if (!json_object_object_get_ex(job, F_ID, &v) || !json_object_is_type(v, json_type_string) ||
	    strlen(json_object_get_string(v)) >= sizeof bid ||
	    strspn(json_object_get_string(v), "0123456789abcdef") != strlen(json_object_get_string(v))) {
		enpu_fail(e, ENPU_E_BOARD_FAULT, l->name, NULL, "board '%s': the new job has no valid id",
			  l->name);
		goto out;
	}
	snprintf(bid, sizeof bid, "%s", json_object_get_string(v));
	srv_log("info", "job=%s board=%s board_job=%s attempt=%d uploaded=%d", rj->id, l->name, bid,
		rj->attempt, n_put);

	while ((state = job_state(job)) &&
	       (!strcmp(state, JOB_QUEUED) || !strcmp(state, JOB_RUNNING))) {
		long w = poll_wait(l);
		bcall c = {"GET", path, NULL, 0, NULL, NULL, w};
		snprintf(path, sizeof path, API_JOBS "/%s?" Q_WAIT "=%ld", bid, w);
		json_object_put(job);
		job = NULL;
		rc = call_json(l, &c, 0, &st, &job, e);
		if (rc != 0)
			goto failed;
	}
	if (!state) {
		enpu_fail(e, ENPU_E_BOARD_FAULT, l->name, NULL, "board '%s': job '%s' has no state",
			  l->name, bid);
		goto out;
	}
	if (!strcmp(state, JOB_FAILED)) {
		json_object *er;
		if (!json_object_object_get_ex(job, F_ERROR, &er) ||
		    !json_object_is_type(er, json_type_object)) {
			enpu_fail(e, ENPU_E_BOARD_FAULT, l->name, NULL,
				  "board '%s': job '%s' failed without saying why", l->name, bid);
			goto out;
		}
		srv_board_err_from_json(er, l->name, e);
		/* The board's trouble, not the model's: it shut down, ran out of
		 * disk or memory, or hit a bug. Another board may do better. */
		kind = e->code == ENPU_E_JOB_FAILED || e->code == ENPU_E_STORAGE ||
		       e->code == ENPU_E_NOMEM || e->code == ENPU_E_INTERNAL ||
		       e->code == ENPU_E_BOARD_FAULT ? SRV_RUN_FAULT : SRV_RUN_MODEL;
		if (kind == SRV_RUN_FAULT) {
			char msg[sizeof e->message];
			snprintf(msg, sizeof msg, "%s", e->message);
			enpu_fail(e, ENPU_E_BOARD_FAULT, l->name, NULL, "board '%s': job '%s' failed there: %.600s",
				  l->name, bid, msg);
		}
		goto out;
	}
	if (strcmp(state, JOB_SUCCEEDED) != 0 || digest_field(job, F_RESULT, res->result) != 0 ||
	    digest_field(job, F_REPORT, res->report) != 0) {
		enpu_fail(e, ENPU_E_BOARD_FAULT, l->name, NULL,
			  "board '%s': job '%s' ended as '%.40s' without result and report digests",
			  l->name, bid, state);
		goto out;
	}
	snprintf(path, sizeof path, API_JOBS "/%s" API_JOB_RESULT, bid);
	rc = fetch_blob(l, cas, path, res->result, e);
	if (rc == 0) {
		snprintf(path, sizeof path, API_JOBS "/%s" API_JOB_REPORT, bid);
		rc = fetch_blob(l, cas, path, res->report, e);
	}
	if (rc != 0)
		goto failed;
	if (json_object_object_get_ex(job, F_SECONDS, &v))
		res->seconds = json_object_get_double(v);
	if (json_object_object_get_ex(job, F_OUTPUTS, &v) && json_object_is_type(v, json_type_array))
		res->outputs = json_object_get(v);
	res->extra = extra_of(job);
	kind = SRV_RUN_OK;
	goto out;

failed:
	/* rc: -1 fault (*e), -2 aborted here, -3 our own storage (*e) */
	kind = rc == -2 ? SRV_RUN_CANCEL : rc == -3 ? SRV_RUN_MODEL : SRV_RUN_FAULT;
out:
	if (kind == SRV_RUN_CANCEL && bid[0]) {
		/* stop it on the board too; bounded by --board-timeout alone */
		enpu_buf resp = ENPU_BUF_INIT;
		bcall c = {"DELETE", path, NULL, 0, NULL, NULL, 0};
		enpu_err ignore;
		snprintf(path, sizeof path, API_JOBS "/%s", bid);
		l->no_abort = 1;
		if (call(l, &c, &st, &resp, &ignore) == 0)
			srv_log("info", "job=%s cancelled on board=%s (board_job=%s): HTTP %ld", rj->id,
				l->name, bid, st);
		enpu_buf_free(&resp);
		l->no_abort = 0;
	}
	l->cancel = NULL;
	l->deadline = 0;
	json_object_put(req);
	json_object_put(job);
	free(digs);
	srv_manifest_free(&m);
	enpu_buf_free(&raw);
	return kind;
}

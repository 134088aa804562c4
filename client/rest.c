/* rest.c: the client's REST calls, over the shared client of proto/restc.h:
 * how the CLI words failures (exit codes, fixes to suggest), progress bars,
 * and atomic downloads verified against their digest. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <json-c/json.h>
#include "api.h"
#include "buf.h"
#include "cli.h"
#include "rest.h"
#include "restc.h"
#include "progress.h"

#define RESP_CAP (64u << 20)      /* JSON answers and error bodies */
#define CONNECT_TIMEOUT 10L
#define JSON_DEPTH 32             /* json-c's default */
#define UNREACH_FIX "start eulernpud, or unset EULERNPU_SERVER to use a private daemon"

/* ---- how the client words failures (enpu_rest_ops) ----------------------- */

static int on_fault(void *ud, const enpu_rest_req *q, const enpu_rest_fault *f, enpu_err *e)
{
	const char *url = enpu_rest_url(ud), *sock = enpu_rest_socket(ud);

	switch (f->why) {
	case ENPU_REST_CONNECT:
		if (sock)
			return enpu_fail(e, ENPU_E_UNREACHABLE, url, UNREACH_FIX,
					 "no daemon answers on socket '%s': %s", sock,
					 f->os_errno ? strerror(f->os_errno) : f->code_text);
		return enpu_fail(e, ENPU_E_UNREACHABLE, url, UNREACH_FIX,
				 "cannot connect to the server: %s", f->text);
	case ENPU_REST_TLS:
		return enpu_fail(e, ENPU_E_TLS, url,
				 "check --cacert FILE (or EULERNPU_CACERT): it must name the CA that "
				 "signed the server's certificate, for the host name in the URL",
				 "cannot make a trusted TLS connection to the server: %s", f->text);
	case ENPU_REST_TIMEOUT:
		return enpu_fail(e, ENPU_E_UNREACHABLE, url, UNREACH_FIX,
				 "%s %s: the server did not answer in time", q->method, q->path);
	case ENPU_REST_TOO_LARGE:
	case ENPU_REST_SINK:
	case ENPU_REST_SINK_IO:
		return enpu_fail(e, f->why == ENPU_REST_TOO_LARGE ? ENPU_E_SERVER : ENPU_E_IO, url,
				 NULL, "%s %s: cannot store the answer: %s", q->method, q->path,
				 f->why == ENPU_REST_TOO_LARGE ? "too large" : strerror(f->sink_errno));
	case ENPU_REST_FILE:
		return enpu_fail(e, ENPU_E_IO, q->upload_file, NULL, "cannot open '%s': %s",
				 q->upload_file, strerror(f->file_errno));
	case ENPU_REST_READ:
		return enpu_fail(e, ENPU_E_IO, q->upload_file, NULL,
				 "cannot read '%s' while uploading it",
				 q->upload_file ? q->upload_file : "(body)");
	case ENPU_REST_ABORTED:
		if (cli_interrupts)
			return enpu_fail(e, ENPU_E_JOB_FAILED, url, NULL, "%s %s: interrupted",
					 q->method, q->path);
		/* fall through */
	default:
		/* the connection broke (reset, no answer): worth another try */
		return enpu_fail(e, ENPU_E_UNREACHABLE, url, UNREACH_FIX, "%s %s failed: %s",
				 q->method, q->path, f->text);
	}
}

static int on_status(void *ud, const enpu_rest_req *q, long status, const enpu_buf *resp,
		     enpu_err *e)
{
	struct json_object *o = enpu_rest_parse(ud, resp), *err;

	if (o && json_object_object_get_ex(o, "error", &err) &&
	    json_object_is_type(err, json_type_object)) {
		cli_err_from_json(err, e);
		/* the client's side of a refused token: where it came from */
		if (e->code == ENPU_E_AUTH)
			snprintf(e->fix, sizeof e->fix, "check the token: --token-file FILE, else "
				 "$EULERNPU_TOKEN, else the config file's token must hold the "
				 "token the server was given");
	} else if (status == 502 || status == 503 || status == 504) {
		/* a gateway in front of the server, or the server away: try later */
		enpu_fail(e, ENPU_E_UNREACHABLE, enpu_rest_url(ud), NULL,
			  "the server (or a proxy in front of it) answered HTTP %ld without an "
			  "error body", status);
	} else {
		enpu_fail(e, ENPU_E_SERVER, enpu_rest_url(ud), NULL,
			  "the server answered HTTP %ld without an error body", status);
	}
	json_object_put(o);
	return -1;
}

static int on_broken(void *ud, const enpu_rest_req *q, int what, enpu_err *e)
{
	const char *url = enpu_rest_url(ud);

	if (what == ENPU_REST_NO_MISSING)
		return enpu_fail(e, ENPU_E_SERVER, url, NULL, "POST %s: the answer has no '%s' list",
				 API_BLOBS_MISSING, F_MISSING);
	return enpu_fail(e, ENPU_E_SERVER, url, NULL, "%s %s: the answer is not a JSON object",
			 q->method, q->path);
}

/* A labelled upload or download draws a bar; any request made during a
 * wait on a job keeps the wait's status line fresh. curl calls on_xfer
 * about once a second even when no byte moves, so a long-poll keeps the
 * wait line's seconds ticking too. */
static int on_xfer_on(void *ud, const enpu_rest_req *q)
{
	return (q->label && cli_progress_xfer_begin(q->label)) || cli_progress_waiting() ||
	       cli_abort_at > 0;
}

static int on_xfer(void *ud, const enpu_rest_req *q, uint64_t dltotal, uint64_t dlnow,
		   uint64_t ultotal, uint64_t ulnow)
{
	if (q->label && q->upload_file)
		cli_progress_xfer(ulnow, ultotal);
	else if (q->label)
		cli_progress_xfer(dlnow, dltotal);
	else
		cli_progress_tick();
	return cli_abort_at > 0 && cli_interrupts >= cli_abort_at;
}

static void on_xfer_off(void *ud)
{
	cli_progress_xfer_end();
}

/* ---- retries and interrupts ----------------------------------------------- */

volatile sig_atomic_t cli_interrupts;
int cli_abort_at;
static int retry_n = CLI_RETRY_DEFAULT, retry_quiet;
static long retry_max_s = CLI_RETRY_MAX_TIME_DEFAULT;

void cli_rest_retry(int n, long max_s, int quiet)
{
	retry_n = n;
	retry_max_s = max_s;
	retry_quiet = quiet;
}

/* One line per retry on stderr, unless quiet (--json). */
static int on_retry(void *ud, const enpu_rest_req *q, long status, long wait_s, int n, int max)
{
	if (cli_abort_at > 0 && cli_interrupts >= cli_abort_at)
		return 1;
	if (!retry_quiet)
		fprintf(stderr, "server busy (%ld), retrying in %ld s (%d/%d)\n", status, wait_s, n,
			max);
	return 0;
}

/* ---- the connection ------------------------------------------------------- */

/* The token goes to TCP servers only: a socket's permissions are its
 * access control. */
int cli_conn_set_auth(cli_conn *c, const char *token, const char *cacert)
{
	return enpu_rest_set_auth(c, token, 0, cacert);
}

cli_conn *cli_conn_new(const char *url, enpu_err *e)
{
	enpu_rest_cfg cfg = {"eulernpu/" CLI_VERSION, CONNECT_TIMEOUT, 0, RESP_CAP, JSON_DEPTH,
			     {on_fault, on_status, on_broken, on_xfer_on, on_xfer, on_xfer_off,
			      NULL}};
	cli_conn *c;

	if (strncmp(url, "unix:", 5) != 0 && enpu_rest_url_kind(url) != 2) {
		enpu_fail(e, ENPU_E_USAGE, "--server",
			  "give unix:/path/to.sock or http://host:port",
			  "server '%s' is neither unix:PATH nor an http:// URL", url);
		return NULL;
	}
	if (enpu_rest_url_kind(url) == 0) {
		enpu_fail(e, ENPU_E_USAGE, "--server", "give unix:/path/to.sock",
			  "server '%s' names no socket path", url);
		return NULL;
	}
	c = enpu_rest_new(url, &cfg);
	if (!c)
		enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "cannot set up a connection to '%s'", url);
	else
		enpu_rest_set_retry(c, retry_n, retry_max_s, on_retry);
	return c;
}

void cli_conn_free(cli_conn *c)
{
	enpu_rest_free(c);
}

const char *cli_conn_url(const cli_conn *c)
{
	return enpu_rest_url(c);
}

/* ---- calls ------------------------------------------------------------------ */

/* A 2xx body into the file descriptor ud points at. */
static int fd_sink(void *ud, const void *p, size_t n, int *errno_out, enpu_err *e)
{
	if (enpu_write_all(*(const int *)ud, p, n) != 0) {
		*errno_out = errno ? errno : EIO;
		return -1;
	}
	return 0;
}

int cli_http_do(cli_conn *c, const cli_req *r, long *status, enpu_buf *resp, enpu_err *e)
{
	return enpu_rest_do(c, r, status, resp, e) == 0 ? 0 : -1;
}

int cli_http_fail(cli_conn *c, long status, const enpu_buf *resp, enpu_err *e)
{
	return on_status(c, NULL, status, resp, e);
}

int cli_http_json(cli_conn *c, const char *method, const char *path,
		  struct json_object *body, long timeout, struct json_object **out,
		  long *out_status, struct json_object **err_body, enpu_err *e)
{
	enpu_rest_req q = {0};
	struct json_object *o = NULL;
	int ret;

	if (body)
		q.body = json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN |
							JSON_C_TO_STRING_NOSLASHESCAPE);
	q.method = method;
	q.path = path;
	q.body_len = q.body ? strlen(q.body) : 0;
	q.timeout = timeout;
	ret = enpu_rest_json(c, &q, 0, out_status, &o, err_body, e) == 0 ? 0 : -1;
	if (out)
		*out = o;
	else
		json_object_put(o);
	return ret;
}

int cli_http_download(cli_conn *c, const char *path, const char *dest,
		      const char *sha256, long timeout, enpu_err *e)
{
	return cli_http_download_as(c, path, dest, dest, sha256, timeout, e);
}

int cli_http_download_as(cli_conn *c, const char *path, const char *dest, const char *label,
			 const char *sha256, long timeout, enpu_err *e)
{
	char tmp[PATH_MAX], got[65];
	enpu_rest_req q = {0};
	int fd;

	/* a temporary file beside dest, renamed into place once verified: a
	 * failed or cut download leaves dest as it was and nothing else */
	fd = cli_tmp_open(dest, tmp, sizeof tmp, e);
	if (fd < 0)
		return -1;
	q.method = "GET";
	q.path = path;
	q.sink = fd_sink;
	q.sink_ud = &fd;
	q.timeout = timeout;
	q.label = label;
	/* the bytes are hashed as they arrive */
	if (enpu_rest_fetch(c, &q, sha256 ? got : NULL, e) != 0) {
		close(fd);
		unlink(tmp);
		return cli_local_io(e, dest);   /* a local write failing is the user's disk */
	}
	if (sha256 && strcmp(got, sha256) != 0) {
		close(fd);
		unlink(tmp);
		return enpu_fail(e, ENPU_E_ARTIFACT_DIGEST, path, NULL,
				 "downloaded bytes hash to %.12s…, the server listed %.12s…", got,
				 sha256);
	}
	return cli_tmp_commit(fd, tmp, dest, e);
}

int cli_http_health(cli_conn *c, enpu_err *e)
{
	enpu_buf resp = ENPU_BUF_INIT;
	cli_req r = {0};
	long status;
	int ret;

	r.method = "GET";
	r.path = "/v1/health";
	r.timeout = 5;
	ret = cli_http_do(c, &r, &status, &resp, e);
	if (ret == 0 && status != 200)
		ret = enpu_fail(e, ENPU_E_UNREACHABLE, cli_conn_url(c), NULL,
				"health check answered HTTP %ld", status);
	enpu_buf_free(&resp);
	return ret;
}

/* ---- blobs: upload only what the server lacks ------------------------------ */

typedef struct blob_put {
	cli_conn *c;
	const char *const *paths;
} blob_put;

int cli_conn_own_daemon(const cli_conn *c)
{
	const char *url = cli_conn_url(c);
	struct stat sb;

	return url && !strncmp(url, "unix:", 5) && stat(url + 5, &sb) == 0 &&
	       S_ISSOCK(sb.st_mode) && sb.st_uid == geteuid();
}

/* PUT path naming file i (H_LOCAL_FILE) to our own daemon, which copies
 * it itself: 0 when it stored it, -1 (nothing said) when the bytes must
 * be sent after all. When our digest record vouches for the file as it
 * is now, its identity goes along (H_LOCAL_STAT): the daemon then need
 * not hash the copy. */
static int put_local(blob_put *bp, int i, const char *path)
{
	char real[PATH_MAX], hdr[PATH_MAX + 64], st[200], sthdr[256];
	const char *hdrs[3] = {hdr, NULL, NULL}, *digest = path + strlen(API_BLOBS);
	enpu_buf resp = ENPU_BUF_INIT;
	enpu_err e = ENPU_ERR_INIT;
	cli_req r = {0};
	long status = 0;

	if (!cli_conn_own_daemon(bp->c) || !realpath(bp->paths[i], real) ||
	    strpbrk(real, "\r\n") ||
	    (size_t)snprintf(hdr, sizeof hdr, H_LOCAL_FILE ": %s", real) >= sizeof hdr)
		return -1;
	if (!strncmp(path, API_BLOBS, strlen(API_BLOBS)) &&
	    cli_sha256_vouch(real, digest, st, sizeof st) == 0) {
		snprintf(sthdr, sizeof sthdr, H_LOCAL_STAT ": %s", st);
		hdrs[1] = sthdr;
	}
	r.method = "PUT";
	r.path = path;
	r.body = "";
	r.content_type = "application/octet-stream";
	r.headers = hdrs;
	if (cli_http_do(bp->c, &r, &status, &resp, &e) < 0)
		status = 0;
	enpu_buf_free(&resp);
	return status >= 200 && status < 300 ? 0 : -1;
}

/* PUT path: to our own daemon the file's name, else the bytes, streamed
 * from file i (the server verifies its digest either way). */
static int put_blob(void *ud, int i, const char *path, enpu_err *e)
{
	blob_put *bp = ud;
	enpu_buf resp = ENPU_BUF_INIT;
	cli_req r = {0};
	long status;
	int ret = -1;

	if (put_local(bp, i, path) == 0)
		return 0;
	r.method = "PUT";
	r.path = path;
	r.upload_file = bp->paths[i];
	r.label = bp->paths[i];
	if (cli_http_do(bp->c, &r, &status, &resp, e) < 0)
		goto out;
	if (status < 200 || status >= 300) {
		cli_http_fail(bp->c, status, &resp, e);
		goto out;
	}
	ret = 0;
out:
	enpu_buf_free(&resp);
	return ret;
}

/* put_blob, but for the deferred index: noted, not sent. */
typedef struct defer_put {
	blob_put bp;
	int defer, *deferred;
} defer_put;

static int put_or_defer(void *ud, int i, const char *path, enpu_err *e)
{
	defer_put *d = ud;

	if (i == d->defer) {
		*d->deferred = 1;
		return 0;
	}
	return put_blob(&d->bp, i, path, e);
}

int cli_blobs_ensure_defer(cli_conn *c, int n, const char *const *paths,
			   const char *const *digests, int defer, int *deferred, enpu_err *e)
{
	defer_put d = {{c, paths}, defer, deferred};

	*deferred = 0;
	return enpu_rest_blobs_sync(c, n, digests, put_or_defer, &d, NULL, e) != 0 ? -1 : 0;
}

int cli_blob_put(cli_conn *c, const char *path, const char *digest, enpu_err *e)
{
	blob_put bp = {c, &path};
	char p[128];

	snprintf(p, sizeof p, "%s%s", API_BLOBS, digest);
	return put_blob(&bp, 0, p, e) != 0 ? -1 : 0;
}

int cli_blobs_ensure(cli_conn *c, int n, const char *const *paths,
		     const char *const *digests, int *n_put, enpu_err *e)
{
	blob_put bp = {c, paths};
	int puts = 0;

	if (n_put)
		*n_put = 0;
	if (enpu_rest_blobs_sync(c, n, digests, put_blob, &bp, &puts, e) != 0)
		return -1;
	if (n_put)
		*n_put = puts;
	return 0;
}

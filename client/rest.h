/* rest.h: the client's side of the REST API over libcurl: one connection
 * (a Unix socket or http://host:port), JSON requests, streamed uploads and
 * verified downloads, and the translation of failures into enpu_err. */
#ifndef CLI_REST_H
#define CLI_REST_H

#include <signal.h>
#include <stddef.h>
#include "err.h"
#include "buf.h"
#include "restc.h"

struct json_object;
typedef struct enpu_rest cli_conn;  /* the shared client, worded the CLI's way */

/* url: "unix:/path/to.sock" or "http://host:port" (https too). Returns NULL
 * with *e (ENPU_E_USAGE for a URL of another form, ENPU_E_NOMEM). */
cli_conn *cli_conn_new(const char *url, enpu_err *e);
void cli_conn_free(cli_conn *c);
/* Send "Authorization: Bearer token" on http(s) requests (token copied;
 * NULL for none), and verify an https server against cacert (NULL: the
 * system's CAs). */
int cli_conn_set_auth(cli_conn *c, const char *token, const char *cacert);
const char *cli_conn_url(const cli_conn *c);    /* as given */
/* 1 when the server is our own daemon: a Unix socket that we own (then it
 * takes blobs by path, and the "local" paths it gives are files of our
 * own cache). */
int cli_conn_own_daemon(const cli_conn *c);

/* Retries of 429 and 503 answers (restc.h's enpu_rest_set_retry) for the
 * connections opened from now on: n times within max_s seconds; quiet:
 * no "server busy" line on stderr (--json). */
#define CLI_RETRY_DEFAULT 3
#define CLI_RETRY_MAX_TIME_DEFAULT 60
void cli_rest_retry(int n, long max_s, int quiet);

/* Interrupts: cli_interrupts counts SIGINTs (a handler's only work); while
 * cli_abort_at > 0, a call in flight aborts (curl's progress callback, about
 * once a second; a retry's wait is cut by the signal itself) once
 * cli_interrupts reaches it, failing with ENPU_E_JOB_FAILED "interrupted". */
extern volatile sig_atomic_t cli_interrupts;
extern int cli_abort_at;

/* A request: method, path, body (or upload_file, streamed), timeout in
 * seconds (0 = none), and label: the file named in a progress bar
 * (progress.h) for an upload or download, or NULL. */
typedef enpu_rest_req cli_req;

/* Perform r. While progress is on (progress.h), a labelled upload or
 * download draws a bar, and any request made during a wait on a job keeps
 * the wait's status line fresh. Returns 0 when the server answered (any
 * status: *status, the body in resp unless it went to r's sink), -1 with *e when it could not be
 * reached (ENPU_E_UNREACHABLE, where = the URL) or the transfer broke
 * (ENPU_E_SERVER / ENPU_E_IO). */
int cli_http_do(cli_conn *c, const cli_req *r, long *status, enpu_buf *resp, enpu_err *e);

/* Turn a non-2xx answer into *e: the JSON error object when there is one,
 * else ENPU_E_SERVER naming the status. Returns -1. */
int cli_http_fail(cli_conn *c, long status, const enpu_buf *resp, enpu_err *e);

/* A JSON call: body (may be NULL; not consumed) is serialized and sent;
 * a 2xx answer is parsed into *out (caller puts it). A non-2xx answer
 * fills *e and returns -1; if out_status is non-NULL it gets the status,
 * and *err_body (if non-NULL) the parsed error body for callers that read
 * more from it (409's missing digests). */
int cli_http_json(cli_conn *c, const char *method, const char *path,
		  struct json_object *body, long timeout, struct json_object **out,
		  long *out_status, struct json_object **err_body, enpu_err *e);

/* GET path into dest atomically (cli_tmp_open: a temporary name beside it,
 * fsync, rename). If sha256 is non-NULL the bytes must hash to it
 * (ENPU_E_ARTIFACT_DIGEST otherwise, dest untouched). */
int cli_http_download(cli_conn *c, const char *path, const char *dest,
		      const char *sha256, long timeout, enpu_err *e);
/* The same, its progress bar naming label instead of dest (compile's
 * files land in a temporary directory but are shown under --out). */
int cli_http_download_as(cli_conn *c, const char *path, const char *dest, const char *label,
			 const char *sha256, long timeout, enpu_err *e);

/* A finished job jid's result into out, verified against wj->result, and
 * (report non-NULL) its report.json into report. 0 or -1 with *e. */
struct enpu_wire_job;
int cli_job_fetch(cli_conn *c, const char *jid, const struct enpu_wire_job *wj, const char *out,
		  const char *report, enpu_err *e);

/* GET /v1/health with a short timeout: 0 when a daemon answers 200. */
int cli_http_health(cli_conn *c, enpu_err *e);

/* ---- blobs ------------------------------------------------------- */

/* Make sure the server holds the n files whose sha256 digests are given:
 * POST /v1/blobs/missing, then PUT each missing one, streamed from its
 * file (once per digest). *n_put (may be NULL) counts uploads. */
int cli_blobs_ensure(cli_conn *c, int n, const char *const *paths,
		     const char *const *digests, int *n_put, enpu_err *e);
/* The same, but blob defer (an index) is not uploaded: *deferred = 1 when
 * the server lacks it (a compile's weights, which a server with a remote
 * cache may not need). cli_blob_put uploads one file as digest. */
int cli_blobs_ensure_defer(cli_conn *c, int n, const char *const *paths,
			   const char *const *digests, int defer, int *deferred, enpu_err *e);
int cli_blob_put(cli_conn *c, const char *path, const char *digest, enpu_err *e);

/* ---- private daemon (autostart.c) ------------------------------------ */

/* The private daemon's directory: $XDG_RUNTIME_DIR/eulernpu, else
 * /tmp/eulernpu-$UID. Pure (does not touch the file system). */
int cli_private_dir(char *out, size_t cap);

/* The private daemon's files in that directory, and its URL. */
typedef struct cli_private {
	char dir[4096], sock[4200], lock[4200], log[4200], pidf[4200], url[4210];
} cli_private;
/* Fill *p (no file system access but none). 0 or -1 with *e. */
int cli_private_paths(cli_private *p, enpu_err *e);
/* The pid of the daemon holding p's pid file lock: 0 when none does (no
 * daemon, whatever pid a stale file names), -1 when one does but its pid
 * is not written yet. */
long cli_private_pid(const cli_private *p);
/* SIGTERM to the private daemon, then wait at most wait_ms for it to let go
 * of its lock. 0 stopped, 1 none was running, -1 with *e. */
int cli_private_stop(const cli_private *p, int wait_ms, enpu_err *e);

/* Find the private daemon (started on demand) and put its URL,
 * "unix:<dir>/eulernpud.sock", into url. 0 or -1 with *e. */
int cli_autostart(char *url, size_t cap, enpu_err *e);

#endif

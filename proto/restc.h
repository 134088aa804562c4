/* restc.h: the one REST client of the API in openapi.yaml, over libcurl,
 * shared by the CLI (client/rest.c) and the lab server's board link
 * (server/boards/board.c). Each side supplies how failures read (enpu_rest_ops). */
#ifndef ENPU_RESTC_H
#define ENPU_RESTC_H

#include <stddef.h>
#include <stdint.h>
#include "err.h"
#include "buf.h"

struct json_object;
typedef struct enpu_rest enpu_rest;

/* What became of a call that got no usable answer. */
typedef enum enpu_rest_why {
	ENPU_REST_CONNECT = 1,   /* refused, no such host or socket */
	ENPU_REST_TLS,           /* no trusted TLS connection */
	ENPU_REST_TIMEOUT,       /* no answer in time */
	ENPU_REST_TOO_LARGE,     /* the answer passed the response cap */
	ENPU_REST_SINK,          /* the 2xx sink refused bytes (its own *e) */
	ENPU_REST_SINK_IO,       /* ... or sink_errno says why */
	ENPU_REST_FILE,          /* the upload file cannot be opened (file_errno) */
	ENPU_REST_READ,          /* ... or read while sending */
	ENPU_REST_ABORTED,       /* the xfer callback stopped it */
	ENPU_REST_OTHER,
} enpu_rest_why;

typedef struct enpu_rest_fault {
	enpu_rest_why why;
	const char *text;        /* curl's words for it: its message, else ... */
	const char *code_text;   /* ... the words for its code alone */
	int os_errno;            /* ENPU_REST_CONNECT: the socket's errno, or 0 */
	int sink_errno;          /* ENPU_REST_SINK_IO */
	int file_errno;          /* ENPU_REST_FILE */
} enpu_rest_fault;

/* One request. A 2xx body goes to sink when set (decided at its first
 * byte), else into the response buffer like any other answer. */
typedef struct enpu_rest_req {
	const char *method;       /* "GET", "POST", "PUT", "DELETE" */
	const char *path;         /* "/v1/...", with any query */
	const char *body;         /* request body (POST/PUT) or NULL */
	size_t body_len;
	const char *content_type; /* of body; NULL = application/json */
	const char *upload_file;  /* PUT: stream this file (body unused) */
	/* n bytes of a 2xx body: 0, or -1 with *errno_out (0: *e says why) */
	int (*sink)(void *ud, const void *p, size_t n, int *errno_out, enpu_err *e);
	void *sink_ud;
	long timeout;             /* whole request, seconds; 0 = none */
	const char *label;        /* a name for progress (ops.xfer_on), or NULL */
	const char *const *headers;   /* more header lines ("Name: value"), NULL-ended, or NULL */
} enpu_rest_req;

#define ENPU_REST_NOT_OBJECT 1  /* the answer is not a JSON object */
#define ENPU_REST_NO_MISSING 2  /* POST /v1/blobs/missing: no "missing" list */

/* How one side words its failures. Each returns what the call returns
 * (negative) after filling *e. */
typedef struct enpu_rest_ops {
	/* no usable answer */
	int (*fault)(void *ud, const enpu_rest_req *q, const enpu_rest_fault *f, enpu_err *e);
	/* a non-2xx answer where success was due */
	int (*status)(void *ud, const enpu_rest_req *q, long status, const enpu_buf *resp,
		      enpu_err *e);
	/* a 2xx answer that is not what the API promises (ENPU_REST_NOT_OBJECT,
	 * ENPU_REST_NO_MISSING) */
	int (*broken)(void *ud, const enpu_rest_req *q, int what, enpu_err *e);
	/* progress, all three may be NULL: xfer_on before sending (non-zero:
	 * call xfer about once a second, moving or not; its non-zero aborts
	 * the call), xfer_off once it is over */
	int (*xfer_on)(void *ud, const enpu_rest_req *q);
	int (*xfer)(void *ud, const enpu_rest_req *q, uint64_t dltotal, uint64_t dlnow,
		    uint64_t ultotal, uint64_t ulnow);
	void (*xfer_off)(void *ud);
	void *ud;
} enpu_rest_ops;

/* The URL's form: 1 "unix:PATH" (PATH non-empty), 2 http:// or https://,
 * 0 anything else. Pure. */
int enpu_rest_url_kind(const char *url);

/* How a connection behaves: agent is the User-Agent (kept, not copied);
 * connect_s bounds connecting; call_s bounds every call, plus its own
 * timeout (both 0: no bound); resp_cap bounds a buffered answer; depth
 * bounds JSON nesting. */
typedef struct enpu_rest_cfg {
	const char *agent;
	long connect_s, call_s;
	size_t resp_cap;
	int depth;
	enpu_rest_ops ops;
} enpu_rest_cfg;

/* A connection to url (a form above; copied); ops get cfg->ops.ud, or
 * the connection itself when that is NULL. NULL when url has no form or
 * out of memory. Every TCP request sends the process's session (H_SESSION,
 * api.h), the same for every connection of the process. */
enpu_rest *enpu_rest_new(const char *url, const enpu_rest_cfg *cfg);
void enpu_rest_free(enpu_rest *r);
/* Send "Authorization: Bearer token" (copied; NULL: none) on TCP calls,
 * and on socket calls too when on_socket; verify https against cacert
 * (NULL: the system's CAs). 0 or -1 (out of memory). */
int enpu_rest_set_auth(enpu_rest *r, const char *token, int on_socket, const char *cacert);
/* Retry answers 429 and 503 (the server refused the request: nothing was
 * done) up to n times within max_s seconds from the first try, waiting
 * what Retry-After says (seconds or an HTTP date, as curl reads it; each
 * wait at least 1 s and at most ENPU_REST_RETRY_CAP s), for requests that are safe to
 * send again: GET, HEAD, PUT, DELETE, and POST /v1/jobs, /v1/compile and
 * /v1/blobs/missing. note (may be NULL) hears of each retry before its
 * wait (n: this retry, 1-based; max: the limit); its non-zero, or a
 * signal during the wait, ends the retries with the answer in hand.
 * n == 0 (the default): no retries. */
#define ENPU_REST_RETRY_CAP 30
typedef int (*enpu_rest_retry_note)(void *ud, const enpu_rest_req *q, long status,
				    long wait_s, int n, int max);
void enpu_rest_set_retry(enpu_rest *r, int n, long max_s, enpu_rest_retry_note note);
/* Whether q may be sent again after a 429 or 503 answer (above). Pure. */
int enpu_rest_retry_safe(const enpu_rest_req *q);

const char *enpu_rest_url(const enpu_rest *r);     /* as given */
const char *enpu_rest_socket(const enpu_rest *r);  /* the socket path or NULL */

/* Perform q. 0 when the server answered (any status: *status, the body in
 * resp unless it went to the sink); else what ops->fault returned. */
int enpu_rest_do(enpu_rest *r, const enpu_rest_req *q, long *status, enpu_buf *resp,
		 enpu_err *e);

/* resp parsed as JSON (any type) within the connection's depth, or NULL. */
struct json_object *enpu_rest_parse(const enpu_rest *r, const enpu_buf *resp);

/* Perform q expecting a JSON object: 0 with *out (caller puts). A non-2xx
 * answer: if accept_4xx and it is neither 401, 429 nor 5xx, 0 with *out
 * the parsed body (an object, or NULL); else ops->status, and *err_body
 * (may be NULL) the parsed body (any JSON, or NULL). *status (may be
 * NULL) gets the status of any answer. */
int enpu_rest_json(enpu_rest *r, const enpu_rest_req *q, int accept_4xx, long *status,
		   struct json_object **out, struct json_object **err_body, enpu_err *e);

/* GET path, its 2xx body to q's sink; the bytes hash to got (may be NULL)
 * as they stream. A non-2xx answer: ops->status. */
int enpu_rest_fetch(enpu_rest *r, const enpu_rest_req *q, char got[65], enpu_err *e);

/* Make sure the server holds the n blobs of digests: POST /v1/blobs/missing,
 * then put(i) for each missing one, once per digest, never one the server
 * named that is not ours. *n_put (may be NULL) counts the uploads. */
int enpu_rest_blobs_sync(enpu_rest *r, int n, const char *const *digests,
			 int (*put)(void *ud, int i, const char *path, enpu_err *e), void *ud,
			 int *n_put, enpu_err *e);

#endif

/* http.h: libmicrohttpd glue (http.c, http_req.c, http_body.c, http_reply.c;
 * http_int.h inside). One srv_req per request (in MHD's *req_cls,
 * freed in the completion callback); a route table maps method + path
 * pattern to a handler; request bodies are read before the handler runs:
 * JSON (capped, depth-limited), multipart forms (file parts streamed into
 * the CAS, so a handler sees {"spec": "<digest>", "spec_name": "..."} just
 * as if a client had sent JSON), raw bytes, or a blob streamed to the CAS.
 * A handler answers exactly once with one of the srv_reply_* calls. */
#ifndef SRV_HTTP_H
#define SRV_HTTP_H

#include <stdint.h>
#include "srv.h"
#include "buf.h"
#include "cas.h"

struct json_object;
struct MHD_Daemon;

typedef struct srv_req srv_req;
typedef void (*srv_handler)(srv_ctx *ctx, srv_req *r);

typedef enum srv_body {
	SRV_BODY_NONE,   /* ignored */
	SRV_BODY_FORM,   /* JSON object, or multipart form -> srv_req_json */
	SRV_BODY_SPEC,   /* as FORM when JSON/multipart; otherwise raw YAML -> srv_req_raw */
	SRV_BODY_RAW,    /* raw bytes up to --max-json-bytes -> srv_req_raw */
	SRV_BODY_BLOB,   /* streamed into the CAS -> srv_req_take_upload */
} srv_body;

/* Who may call a route on TCP when the server has a token file: anyone
 * (health), a token of role user (compile, run, read), or admin (cache and
 * board management). Unix sockets rely on file permissions instead. */
typedef enum { SRV_ROLE_PUBLIC, SRV_ROLE_USER, SRV_ROLE_ADMIN } srv_access;

/* Where a route's handler runs. The HTTP threads (--http-threads) each
 * serve many connections from one epoll loop, so a handler that can block
 * (disk-bound or long work, a long poll, a call to a board) runs on a
 * handler thread while its connection waits off the loop: SRV_ON_THREAD,
 * the default. SRV_ON_LOOP: it answers from memory at once, on the loop.
 * SRV_ON_LOOP_NOWAIT: on the loop unless ?wait=S asks for a long poll. */
typedef enum { SRV_ON_THREAD, SRV_ON_LOOP, SRV_ON_LOOP_NOWAIT } srv_where;

typedef struct srv_route {
	const char *method;
	const char *pattern;   /* "/v1/jobs/ * /result": "*" one segment, "**" the rest */
	srv_body body;
	srv_handler fn;
	srv_access access;
	srv_where where;
} srv_route;

/* Start serving on a listening socket (bound and listening); NULL on error
 * (logged). quiesce stops accepting and hands the listening socket back
 * (the caller closes it; -1 if MHD kept it); stop shuts down completely. */
struct MHD_Daemon *srv_http_start(srv_ctx *ctx, int listen_fd);
int srv_http_quiesce(struct MHD_Daemon *d);
/* 1 when libmicrohttpd was built with TLS (GnuTLS). A TCP listener serves
 * HTTPS when ctx->tls_cert_pem and tls_key_pem are set. */
int srv_http_tls_supported(void);
void srv_http_stop(struct MHD_Daemon *d);
/* Requests in flight, and the CLOCK_MONOTONIC time of the last activity. */
int srv_http_active(void);
double srv_http_last_activity(void);

/* ---- request accessors ---------------------------------------------------- */
const char *srv_req_param(const srv_req *r, int i);        /* "*" captures */
const char *srv_req_query(const srv_req *r, const char *key);
const char *srv_req_header(const srv_req *r, const char *name);
struct json_object *srv_req_json(const srv_req *r);         /* NULL if none */
const enpu_buf *srv_req_raw(const srv_req *r);               /* NULL if none */
srv_upload *srv_req_take_upload(srv_req *r);                 /* caller finishes/aborts */
/* Who sent the request (its token's name, or its Unix peer's uid). */
const srv_ident *srv_req_who(const srv_req *r);
/* 1 when it came over a Unix socket from the daemon's own user (who may
 * then be given paths inside the cache, the daemon's files being its). */
int srv_req_is_own_user(const srv_req *r);
/* The request id: 16 lowercase hex, sent back as X-Request-Id and logged. */
const char *srv_req_id(const srv_req *r);

/* Field helpers: each answers 400 ENPU_E_BAD_REQUEST naming the field and
 * returns -1 when the field is required and absent or has the wrong type. */
int srv_field_str(srv_req *r, const char *key, int required, const char **out);
int srv_field_digest(srv_req *r, const char *key, const char **out);  /* required */
int srv_field_double(srv_req *r, const char *key, double dflt, double *out);
int srv_field_bool(srv_req *r, const char *key, int dflt, int *out);
/* ?wait=S (0 when absent, capped at SRV_WAIT_MAX); -1 after a 400 reply. */
int srv_query_wait(srv_req *r, int *seconds);

/* For a handler that starts on the loop (SRV_ON_LOOP) and finds its work
 * may block: srv_req_defer, before any reply, has it called again from
 * the start on a handler thread, so whatever it did first it must be able
 * to do twice. srv_req_on_loop: 1 while it runs on the loop. */
int srv_req_on_loop(const srv_req *r);
void srv_req_defer(srv_req *r);

/* Run wait(arg) on a handler thread with r's connection off the event loop;
 * once it returns, the connection resumes and MHD pulls r's stream again.
 * 0: handed over (a stream reader then returns 0); 1: no thread could be
 * had, so wait(arg) has already run here. */
int srv_req_await(srv_req *r, void (*wait)(void *), void *arg);

/* ---- replies (exactly one per request) ------------------------------------ */
/* Takes ownership of obj. */
void srv_reply_json(srv_req *r, unsigned status, struct json_object *obj);
/* The error body with the catalogue's status; extra (owned, may be NULL) is
 * merged into the top level ({"error": ..., "missing": [...]}). */
void srv_reply_error(srv_req *r, const enpu_err *e, struct json_object *extra);
void srv_reply_fail(srv_req *r, enpu_code code, const char *where, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* A body of n bytes (copied). */
void srv_reply_bytes(srv_req *r, unsigned status, const void *p, size_t n,
		     const char *content_type);
/* A text body (copied). */
void srv_reply_text(srv_req *r, unsigned status, const char *text, const char *content_type);
/* A file streamed from disk; 404 error when it cannot be opened. */
void srv_reply_file(srv_req *r, const char *path, const char *content_type);
/* An extra header on the reply already made. */
/* A body of unknown length produced by fn as MHD pulls it, on an HTTP
 * thread, so fn must not block: fn returns bytes written into buf, or
 * MHD_CONTENT_READER_END_OF_STREAM; with nothing to send yet it calls
 * srv_req_await and returns 0. free_fn(cls) runs when the response is done
 * with, also when it could not be created. */
typedef ssize_t (*srv_stream_fn)(void *cls, uint64_t pos, char *buf, size_t max);
void srv_reply_stream(srv_req *r, unsigned status, const char *content_type,
		      srv_stream_fn fn, void *cls, void (*free_fn)(void *));
void srv_reply_header(srv_req *r, const char *name, const char *value);

/* A server-sent event stream (http_sse.c): first (may be NULL) at once,
 * then whatever next appends. next(src, wait_s, out) runs on a handler
 * thread: it waits up to wait_s (a second at most) for what comes, appends
 * its events to out (srv_sse_event) and answers 0 to go on, -1 when the
 * stream ends after what it appended. The stream also ends when *stopping
 * is set or srv_now() passes end; src_free(src) runs once it is done. */
typedef int (*srv_sse_next_fn)(void *src, double wait_s, enpu_buf *out);
void srv_reply_sse(srv_req *r, const enpu_buf *first, srv_sse_next_fn next, void *src,
		   void (*src_free)(void *), const volatile int *stopping, double end);
/* "id: ID\n" (when id is not NULL), "event: EVENT\n", "data: JSON\n\n"
 * appended to out (json on one line); 0 or -1 out of memory. */
int srv_sse_event(enpu_buf *out, const char *event, const char *id, const char *json);

/* A JSON number printed with 9 significant digits (null if not finite). */
struct json_object *srv_json_double(double d);

/* A time as srv_time_str writes it (UTC, milliseconds), or null when it
 * was never set (tv_sec 0). */
struct json_object *srv_json_time(const struct timespec *t);

/* A JSON string of text that may hold a client's bytes: invalid UTF-8
 * becomes U+FFFD. */
struct json_object *srv_json_text(const char *s);

/* The {"error": {...}} object of an error (under /v2, srv_reply_error
 * answers the Open Inference Protocol's {"error": "message", "code"}). */
struct json_object *srv_error_json(const enpu_err *e);

#endif

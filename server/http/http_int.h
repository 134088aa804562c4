/* http_int.h: a request's state (struct srv_req) and the helpers the files
 * of the HTTP layer share, and nothing else includes: http.c (MHD glue,
 * listeners, the connection reaper), http_req.c (routing, accessors and
 * field helpers), http_body.c (body intake) and http_reply.c (replies). */
#ifndef SRV_HTTP_INT_H
#define SRV_HTTP_INT_H

#include <stddef.h>
#include <stdint.h>
#include <microhttpd.h>
#include <json-c/json.h>
#include "srv.h"
#include "http.h"

struct listener;

#define MAX_PARAMS 4

typedef enum mode { M_NONE, M_JSON, M_RAW, M_MULTI, M_BLOB, M_DISCARD } mode;

struct srv_req {
	struct MHD_Connection *conn;
	srv_ctx *ctx;
	const struct listener *lst;
	const srv_route *route;
	char method[16];
	char *url;
	char *params[MAX_PARAMS];
	int n_params;
	unsigned long id;
	char rid[17];              /* request id: 16 lowercase hex */
	double t0;
	srv_ident who;             /* who sent it (srv_auth_identify) */
	long peer_uid;             /* the Unix peer's uid; -1 on TCP or unknown */

	mode mode;
	uint64_t limit, received;
	enpu_buf raw;
	srv_upload *upload;
	/* multipart */
	struct MHD_PostProcessor *pp;
	json_object *form, *names;
	char part_key[128];
	char *part_file;           /* filename of the current part, NULL for a field */
	int part_open;
	uint64_t part_bytes, form_bytes;
	enpu_buf part_val;
	srv_upload *part_up;

	enpu_err err;              /* an error while reading the body */
	int failed;
	int off;                   /* the handler ran off the loop: answer on resume */
	int on_loop;               /* the handler is running on an HTTP thread */
	int defer;                 /* ... and asked to be run on a handler thread */
	json_object *json;

	struct MHD_Response *resp;
	unsigned status;
	uint64_t resp_bytes;
};

/* 1 when n bytes at s are valid UTF-8 (http_reply.c). */
int http_utf8_valid(const char *s, size_t n);

/* The route of r's method and URL, its "*" captures in r->params; NULL
 * when none matches, with the methods that would in allow ("" = no path
 * matches: 404, else 405). http_req.c. */
const srv_route *http_route_find(srv_req *r, char *allow, size_t cap);

/* The bounds eulernpud sets on a request's head, below the memory MHD is
 * given per connection (HTTP_CONN_MEMORY): a request past them gets the
 * JSON error (414 E0818, 431 E0819) from http_head_too_large, never
 * libmicrohttpd's own HTML page, which it sends only for a head that does
 * not fit its memory at all. MHD clears that memory after every request
 * (96 KiB of it cost a fifth of a health check's time): it is MHD's default
 * 32 KiB, and the bounds are Node.js's (16 KiB of headers) and 8 KiB of
 * path and query, with room left for MHD's own records. */
#define HTTP_MAX_URI       (8 * 1024)
#define HTTP_MAX_HEADERS   (16 * 1024)
#define HTTP_CONN_MEMORY   (32 * 1024)

/* 1, with r's error reply set, when r's URI (path and query) or its
 * headers are past the bounds above; 0 otherwise. http_req.c. */
int http_head_too_large(srv_req *r);

/* Body intake (http_body.c), called by the MHD callback in order: begin
 * once the route is known (checks Content-Length against the route's
 * limit, opens the upload or post processor; 0, or -1 with r->failed set),
 * feed with each chunk, end once the body is in (parses JSON, closes the
 * upload). Errors are kept in r->err / r->failed for the reply. */
int http_begin_body(srv_req *r);
void http_feed_body(srv_req *r, const char *data, size_t n);
void http_end_body(srv_req *r);

#endif

/* http_reply.c: the replies a handler makes (exactly one per request):
 * JSON, errors in the catalogue's shape, text, files, streams, plus the
 * JSON value helpers that keep a client's bytes valid UTF-8. */
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "http_int.h"
#include "wire.h"

/* ---- errors and replies ------------------------------------------------------ */

/* 1 when n bytes at s are valid UTF-8 (NULs included: callers refuse them
 * where they matter). */
int http_utf8_valid(const char *s, size_t n)
{
	size_t i = 0, k;
	unsigned long cp;

	for (; i < n; i += k)
		if (!(k = enpu_utf8_seq(s + i, n - i, &cp)))
			return 0;
	return 1;
}

/* A JSON string of text that may hold bytes from a request (a URL, a query
 * value, a file name): valid UTF-8 for strict parsers (wire.c). */
json_object *srv_json_text(const char *s)
{
	return enpu_wire_text(s);
}

/* {"error": e}: the error object's format has its home in proto/wire.c. */
json_object *srv_error_json(const enpu_err *e)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, F_ERROR, enpu_wire_err_to_json(e));
	return o;
}

static void set_response(srv_req *r, unsigned status, struct MHD_Response *resp, uint64_t n)
{
	if (r->resp) /* answer once: a second reply is a bug; the last one wins */
		MHD_destroy_response(r->resp);
	r->resp = resp;
	r->status = status;
	r->resp_bytes = n;
}

void srv_reply_json(srv_req *r, unsigned status, json_object *obj)
{
	size_t n;
	const char *s = json_object_to_json_string_length(obj,
			JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n);
	char *body = malloc(n + 2);
	struct MHD_Response *resp;

	if (!body) {
		json_object_put(obj);
		return;
	}
	memcpy(body, s, n);
	body[n++] = '\n';
	body[n] = '\0';
	json_object_put(obj);
	resp = MHD_create_response_from_buffer(n, body, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(body);
		return;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	set_response(r, status, resp, n);
}

void srv_reply_bytes(srv_req *r, unsigned status, const void *p, size_t n,
		     const char *content_type)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(n, (void *)p,
								    MHD_RESPMEM_MUST_COPY);
	if (!resp)
		return;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
	set_response(r, status, resp, n);
}

void srv_reply_text(srv_req *r, unsigned status, const char *text, const char *content_type)
{
	srv_reply_bytes(r, status, text, strlen(text), content_type);
}

/* The Open Inference Protocol's error form, for every answer under /v2:
 * {"error": "the message"}, with our code beside it for people. */
static json_object *oip_error_json(const enpu_err *e, const enpu_code_info *info)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, F_ERROR, json_object_new_string(e->message[0] ? e->message :
								  info->title));
	json_object_object_add(o, F_CODE, json_object_new_string(info->id));
	return o;
}

void srv_reply_error(srv_req *r, const enpu_err *e, json_object *extra)
{
	const enpu_code_info *info = enpu_code_info_of(e->code);
	int oip = r->url && !strncmp(r->url, API_V2, strlen(API_V2)) &&
		  (r->url[strlen(API_V2)] == '\0' || r->url[strlen(API_V2)] == '/');
	json_object *o = oip ? oip_error_json(e, info) : srv_error_json(e);

	if (extra) {
		json_object_object_foreach(extra, k, v)
			json_object_object_add(o, k, json_object_get(v));
		json_object_put(extra);
	}
	srv_reply_json(r, (unsigned)info->http_status, o);
	if (e->code == ENPU_E_QUEUE_FULL)
		srv_reply_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "1");
}

void srv_reply_fail(srv_req *r, enpu_code code, const char *where, const char *fmt, ...)
{
	enpu_err e = ENPU_ERR_INIT;
	va_list ap;

	e.code = code;
	snprintf(e.where, sizeof e.where, "%s", where ? where : "");
	va_start(ap, fmt);
	vsnprintf(e.message, sizeof e.message, fmt, ap);
	va_end(ap);
	srv_reply_error(r, &e, NULL);
}

void srv_reply_file(srv_req *r, const char *path, const char *content_type)
{
	struct stat st;
	struct MHD_Response *resp;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		srv_reply_fail(r, ENPU_E_NOT_FOUND, r->url, "'%s' is not on the server", r->url);
		return;
	}
	resp = MHD_create_response_from_fd((uint64_t)st.st_size, fd);  /* owns fd */
	if (!resp) {
		close(fd);
		srv_reply_fail(r, ENPU_E_INTERNAL, NULL, "cannot create a response");
		return;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
	set_response(r, MHD_HTTP_OK, resp, (uint64_t)st.st_size);
}

void srv_reply_stream(srv_req *r, unsigned status, const char *content_type,
		      srv_stream_fn fn, void *cls, void (*free_fn)(void *))
{
	struct MHD_Response *resp =
		MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, fn, cls, free_fn);

	if (!resp) {
		if (free_fn)
			free_fn(cls);
		srv_reply_fail(r, ENPU_E_INTERNAL, NULL, "cannot create a response");
		return;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
	set_response(r, status, resp, 0);
}

void srv_reply_header(srv_req *r, const char *name, const char *value)
{
	if (r->resp)
		MHD_add_response_header(r->resp, name, value);
}

json_object *srv_json_time(const struct timespec *t)
{
	char buf[48];

	if (t->tv_sec == 0)
		return NULL;
	srv_time_str(t, buf, sizeof buf);
	return json_object_new_string(buf);
}

json_object *srv_json_double(double d)
{
	char buf[64];

	/* json-c's default "%.17g" shows 1e-05 as 1.0000000000000001e-05 */
	if (!isfinite(d))
		return NULL;
	snprintf(buf, sizeof buf, "%.9g", d);
	if (!strpbrk(buf, ".eE"))
		strcat(buf, ".0");
	return json_object_new_double_s(d, buf);
}

/* http.c: libmicrohttpd glue for eulernpud: per-request state, the route
 * dispatch (404 / 405 with Allow), body intake (JSON, multipart into the
 * CAS, raw, blob streams) with size limits checked against Content-Length
 * up front and while streaming, JSON and file replies, and the access log. */
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <microhttpd.h>
#include <json-c/json.h>
#include <openssl/crypto.h>
#include "srv.h"
#include "digest.h"
#include "http.h"
#include "obs.h"
#include "routes.h"

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
	json_object *json;

	struct MHD_Response *resp;
	unsigned status;
	uint64_t resp_bytes;
};

/* One per MHD daemon: whether it serves TCP (tokens apply) and TLS. */
typedef struct listener {
	srv_ctx *ctx;
	struct MHD_Daemon *d;
	int tcp, tls;
} listener;

#define MAX_LISTENERS 8
static listener listeners[MAX_LISTENERS];

static atomic_int n_active;
static atomic_ulong next_id;
static atomic_llong last_ms;

const char *srv_req_id(const srv_req *r) { return r->rid; }

/* 64 random bits per request (unique across restarts and daemons, unlike a
 * counter); the counter is the fallback if getrandom fails. */
static void make_rid(srv_req *r)
{
	uint64_t v;

	if (getrandom(&v, sizeof v, GRND_NONBLOCK) != (ssize_t)sizeof v)
		v = ((uint64_t)getpid() << 40) ^ (uint64_t)r->id;
	snprintf(r->rid, sizeof r->rid, "%016llx", (unsigned long long)v);
}

static void touch(void)
{
	atomic_store(&last_ms, (long long)(srv_now() * 1000.0));
}

int srv_http_active(void) { return atomic_load(&n_active); }
double srv_http_last_activity(void) { return (double)atomic_load(&last_ms) / 1000.0; }

/* ---- errors and replies ------------------------------------------------------ */

/* 1 when n bytes at s are valid UTF-8 (NULs included: callers refuse them
 * where they matter). */
static int utf8_valid(const char *s, size_t n)
{
	size_t i = 0, k;
	unsigned long cp;

	for (; i < n; i += k)
		if (!(k = enpu_utf8_seq(s + i, n - i, &cp)))
			return 0;
	return 1;
}

/* A JSON string of text that may hold bytes from a request (a URL, a query
 * value, a file name): each byte that is not valid UTF-8 becomes U+FFFD, so
 * every reply is valid JSON for strict parsers. */
json_object *srv_json_text(const char *s)
{
	size_t n = s ? strlen(s) : 0, i, k;
	enpu_buf b = ENPU_BUF_INIT;
	unsigned long cp;
	json_object *o;

	for (i = 0; i < n; i += k) {
		k = enpu_utf8_seq(s + i, n - i, &cp);
		if (!k) {
			enpu_buf_add(&b, "\xef\xbf\xbd", 3);
			k = 1;
		} else {
			enpu_buf_add(&b, s + i, k);
		}
	}
	o = json_object_new_string_len(b.data ? b.data : "", (int)b.len);
	enpu_buf_free(&b);
	return o;
}

json_object *srv_error_json(const enpu_err *e)
{
	const enpu_code_info *info = enpu_code_info_of(e->code);
	json_object *o = json_object_new_object(), *er = json_object_new_object();
	char see[64];

	snprintf(see, sizeof see, "eulernpu explain %s", info->id);
	json_object_object_add(er, "code", json_object_new_string(info->id));
	json_object_object_add(er, "title", json_object_new_string(info->title));
	json_object_object_add(er, "message", srv_json_text(e->message));
	json_object_object_add(er, "where", srv_json_text(e->where));
	json_object_object_add(er, "fix", srv_json_text(e->fix[0] ? e->fix : info->fix));
	json_object_object_add(er, "see", json_object_new_string(see));
	json_object_object_add(o, F_ERROR, er);
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

void srv_reply_text(srv_req *r, unsigned status, const char *text, const char *content_type)
{
	size_t n = strlen(text);
	struct MHD_Response *resp = MHD_create_response_from_buffer(n, (void *)text,
								    MHD_RESPMEM_MUST_COPY);
	if (!resp)
		return;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
	set_response(r, status, resp, n);
}

void srv_reply_error(srv_req *r, const enpu_err *e, json_object *extra)
{
	const enpu_code_info *info = enpu_code_info_of(e->code);
	json_object *o = srv_error_json(e);

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

/* ---- accessors and field helpers ---------------------------------------------- */

const char *srv_req_param(const srv_req *r, int i)
{
	return i >= 0 && i < r->n_params ? r->params[i] : "";
}

const char *srv_req_query(const srv_req *r, const char *key)
{
	return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, key);
}

const char *srv_req_header(const srv_req *r, const char *name)
{
	return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
}

json_object *srv_req_json(const srv_req *r) { return r->json; }
const enpu_buf *srv_req_raw(const srv_req *r) { return r->mode == M_RAW ? &r->raw : NULL; }

srv_upload *srv_req_take_upload(srv_req *r)
{
	srv_upload *u = r->upload;
	r->upload = NULL;
	return u;
}

static json_object *field(const srv_req *r, const char *key)
{
	json_object *v;
	if (!r->json || !json_object_object_get_ex(r->json, key, &v) ||
	    json_object_is_type(v, json_type_null))
		return NULL;
	return v;
}

int srv_field_str(srv_req *r, const char *key, int required, const char **out)
{
	json_object *v = field(r, key);

	*out = NULL;
	if (!v) {
		if (!required)
			return 0;
		srv_reply_fail(r, ENPU_E_BAD_REQUEST, key, "field '%s' is required", key);
		return -1;
	}
	if (!json_object_is_type(v, json_type_string)) {
		srv_reply_fail(r, ENPU_E_BAD_REQUEST, key, "field '%s' must be a string", key);
		return -1;
	}
	*out = json_object_get_string(v);
	/* "\u0000" would cut the value short: "<digest>\u0000junk" is not a digest */
	if (strlen(*out) != (size_t)json_object_get_string_len(v)) {
		*out = NULL;
		srv_reply_fail(r, ENPU_E_BAD_REQUEST, key, "field '%s' holds a NUL character", key);
		return -1;
	}
	return 0;
}

int srv_field_digest(srv_req *r, const char *key, const char **out)
{
	if (srv_field_str(r, key, 1, out) != 0)
		return -1;
	if (!enpu_is_sha256_hex(*out)) {
		srv_reply_fail(r, ENPU_E_BAD_REQUEST, key,
			       "field '%s' is not a sha256 digest (64 lowercase hex): '%.80s'",
			       key, *out);
		return -1;
	}
	return 0;
}

int srv_field_double(srv_req *r, const char *key, double dflt, double *out)
{
	json_object *v = field(r, key);
	char *end;

	*out = dflt;
	if (!v)
		return 0;
	if (json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)) {
		/* as for strings: json-c reads -1, NaN and -Infinity too */
		*out = json_object_get_double(v);
		if (*out >= 0)
			return 0;
	} else if (json_object_is_type(v, json_type_string)) {
		const char *s = json_object_get_string(v);
		*out = strtod(s, &end);
		if (end != s && *end == '\0' && *out >= 0 && *out == *out)
			return 0;
	}
	srv_reply_fail(r, ENPU_E_BAD_REQUEST, key, "field '%s' must be a non-negative number", key);
	return -1;
}

int srv_field_bool(srv_req *r, const char *key, int dflt, int *out)
{
	json_object *v = field(r, key);

	*out = dflt;
	if (!v)
		return 0;
	if (json_object_is_type(v, json_type_boolean) || json_object_is_type(v, json_type_int)) {
		*out = json_object_get_boolean(v);
		return 0;
	}
	if (json_object_is_type(v, json_type_string)) {
		const char *s = json_object_get_string(v);
		if (!strcmp(s, "1") || !strcasecmp(s, "true") || !strcasecmp(s, "yes")) {
			*out = 1;
			return 0;
		}
		if (!strcmp(s, "0") || !strcasecmp(s, "false") || !strcasecmp(s, "no")) {
			*out = 0;
			return 0;
		}
	}
	srv_reply_fail(r, ENPU_E_BAD_REQUEST, key, "field '%s' must be true or false", key);
	return -1;
}

int srv_query_wait(srv_req *r, int *seconds)
{
	const char *s = srv_req_query(r, Q_WAIT);
	char *end;
	long v;

	*seconds = 0;
	if (!s)
		return 0;
	v = strtol(s, &end, 10);
	if (end == s || *end || v < 0) {
		srv_reply_fail(r, ENPU_E_BAD_REQUEST, Q_WAIT,
			       "query parameter 'wait' must be whole seconds, not '%.40s'", s);
		return -1;
	}
	*seconds = v > SRV_WAIT_MAX ? SRV_WAIT_MAX : (int)v;
	return 0;
}

/* ---- routing ------------------------------------------------------------------ */

/* Match url against pattern; on success fill params (allocated). */
static int match(const char *pat, const char *url, srv_req *r)
{
	const char *cap[MAX_PARAMS];
	size_t caplen[MAX_PARAMS];
	int n = 0, i;

	while (*pat && *url) {
		if (pat[0] == '*' && pat[1] == '*') {
			if (!*url || n == MAX_PARAMS)
				return 0;
			cap[n] = url;
			caplen[n++] = strlen(url);
			url += strlen(url);
			pat += 2;
			break;
		}
		if (*pat == '*') {
			size_t len = strcspn(url, "/");
			if (len == 0 || n == MAX_PARAMS)
				return 0;
			cap[n] = url;
			caplen[n++] = len;
			url += len;
			pat++;
			continue;
		}
		if (*pat != *url)
			return 0;
		pat++;
		url++;
	}
	if (*pat || *url)
		return 0;
	if (r) {
		for (i = 0; i < n; i++)
			r->params[i] = strndup(cap[i], caplen[i]);
		r->n_params = n;
	}
	return 1;
}

static const srv_route *route_find(srv_req *r, char *allow, size_t cap)
{
	int i, any = 0;
	const char *m = !strcmp(r->method, "HEAD") ? "GET" : r->method;

	allow[0] = '\0';
	for (i = 0; i < srv_n_routes; i++) {
		const srv_route *rt = &srv_routes[i];
		if (!match(rt->pattern, r->url, NULL))
			continue;
		if (!strcmp(rt->method, r->method) ||
		    (!strcmp(rt->method, m) && !strcmp(m, "GET"))) {
			match(rt->pattern, r->url, r);
			return rt;
		}
		if (!strstr(allow, rt->method)) {
			snprintf(allow + strlen(allow), cap - strlen(allow), "%s%s",
				 any ? ", " : "", rt->method);
			if (!strcmp(rt->method, "GET") && !strstr(allow, "HEAD"))
				snprintf(allow + strlen(allow), cap - strlen(allow), ", HEAD");
		}
		any = 1;
	}
	return NULL;
}

/* ---- bodies ---------------------------------------------------------------------- */

static void body_fail(srv_req *r, enpu_code code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void body_fail(srv_req *r, enpu_code code, const char *fmt, ...)
{
	va_list ap;

	if (r->failed)
		return;
	r->failed = 1;
	memset(&r->err, 0, sizeof r->err);
	r->err.code = code;
	va_start(ap, fmt);
	vsnprintf(r->err.message, sizeof r->err.message, fmt, ap);
	va_end(ap);
	r->mode = M_DISCARD;
}

static void part_close(srv_req *r)
{
	char dig[65], namekey[160];
	const char *base;

	if (!r->part_open)
		return;
	r->part_open = 0;
	if (r->part_up) {
		srv_upload *u = r->part_up;
		r->part_up = NULL;
		if (srv_upload_finish(u, NULL, dig, NULL, &r->err) != 0) {
			r->failed = 1;
			r->mode = M_DISCARD;
		} else {
			json_object_object_add(r->form, r->part_key, json_object_new_string(dig));
			base = strrchr(r->part_file, '/');
			base = base ? base + 1 : r->part_file;
			snprintf(namekey, sizeof namekey, "%s_name", r->part_key);
			if (*base)
				json_object_object_add(r->names, namekey, srv_json_text(base));
		}
	} else if (!r->failed && !utf8_valid(r->part_val.data, r->part_val.len)) {
		body_fail(r, ENPU_E_BAD_REQUEST, "multipart field '%s' is not UTF-8 text", r->part_key);
	} else if (!r->failed) {
		json_object_object_add(r->form, r->part_key,
				       json_object_new_string_len(r->part_val.data ? r->part_val.data : "",
								  (int)r->part_val.len));
	}
	enpu_buf_reset(&r->part_val);
	free(r->part_file);
	r->part_file = NULL;
}

static enum MHD_Result post_iter(void *cls, enum MHD_ValueKind kind, const char *key,
				 const char *filename, const char *content_type,
				 const char *transfer_encoding, const char *data, uint64_t off,
				 size_t size)
{
	srv_req *r = cls;
	(void)kind; (void)content_type; (void)transfer_encoding;

	if (r->failed || !key)
		return MHD_YES;
	if (!r->part_open || strcmp(key, r->part_key) != 0 ||
	    (off == 0 && r->part_bytes > 0) ||
	    (!filename != !r->part_file)) {
		part_close(r);
		if (r->failed)
			return MHD_YES;
		if (strlen(key) >= sizeof r->part_key - 8) {
			body_fail(r, ENPU_E_BAD_REQUEST, "multipart field name too long");
			return MHD_YES;
		}
		snprintf(r->part_key, sizeof r->part_key, "%s", key);
		r->part_open = 1;
		r->part_bytes = 0;
		if (filename) {
			r->part_file = strdup(filename);
			r->part_up = srv_upload_begin(r->ctx->cas, &r->err);
			if (!r->part_up || !r->part_file) {
				r->failed = 1;
				r->mode = M_DISCARD;
				return MHD_YES;
			}
		}
	}
	if (size == 0)
		return MHD_YES;
	r->part_bytes += size;
	if (r->part_up) {
		if (srv_upload_write(r->part_up, data, size, &r->err) != 0) {
			r->failed = 1;
			r->mode = M_DISCARD;
		}
	} else {
		r->form_bytes += size;
		if (r->form_bytes > SRV_FORM_MAX || enpu_buf_add(&r->part_val, data, size) != 0)
			body_fail(r, ENPU_E_TOO_LARGE, "multipart text fields exceed %u bytes",
				  SRV_FORM_MAX);
	}
	return MHD_YES;
}

/* The setting that bounds this request's body, for the error message. */
static const char *limit_flag(const srv_req *r)
{
	return r->mode == M_MULTI || r->mode == M_BLOB ? "--max-upload"
	     : r->mode == M_RAW && r->route->body == SRV_BODY_SPEC ? "--max-spec-bytes"
	     : "--max-json-bytes";
}

static const char *limit_fix(const srv_req *r)
{
	const char *f = limit_flag(r);
	return !strcmp(f, "--max-upload") ? "send a smaller file, or raise the server's --max-upload"
	     : !strcmp(f, "--max-spec-bytes") ? "send a smaller spec, or raise the server's --max-spec-bytes"
	     : "send a smaller request, or raise the server's --max-json-bytes";
}

static int begin_body(srv_req *r)
{
	const char *ct = srv_req_header(r, MHD_HTTP_HEADER_CONTENT_TYPE);
	const char *cl = srv_req_header(r, MHD_HTTP_HEADER_CONTENT_LENGTH);
	int multi = ct && !strncasecmp(ct, "multipart/form-data", 19);
	int json = ct && !strncasecmp(ct, "application/json", 16);
	srv_ctx *ctx = r->ctx;

	switch (r->route->body) {
	case SRV_BODY_NONE:
		r->mode = M_DISCARD;
		r->limit = UINT64_MAX;
		return 0;
	case SRV_BODY_FORM:
		r->mode = multi ? M_MULTI : M_JSON;
		break;
	case SRV_BODY_SPEC:
		r->mode = multi ? M_MULTI : json ? M_JSON : M_RAW;
		break;
	case SRV_BODY_RAW:
		r->mode = M_RAW;
		break;
	case SRV_BODY_BLOB:
		r->mode = M_BLOB;
		break;
	}
	r->limit = r->mode == M_MULTI || r->mode == M_BLOB ? ctx->cfg.max_upload
		 : r->mode == M_RAW && r->route->body == SRV_BODY_SPEC ? ctx->lim->max_spec_bytes
		 : ctx->cfg.max_json_bytes;
	if (cl) {
		char *end;
		unsigned long long n = strtoull(cl, &end, 10);
		if (end != cl && n > r->limit) {
			enpu_err le = ENPU_ERR_INIT;
			enpu_fail(&le, ENPU_E_TOO_LARGE, NULL, limit_fix(r),
				  "request body of %llu bytes exceeds the limit of %llu bytes (%s)",
				  n, (unsigned long long)r->limit, limit_flag(r));
			srv_reply_error(r, &le, NULL);
			return -1;
		}
	}
	if (r->mode == M_BLOB) {
		if (!enpu_is_sha256_hex(srv_req_param(r, 0))) {
			srv_reply_fail(r, ENPU_E_BAD_REQUEST, srv_req_param(r, 0),
				       "'%.80s' is not a sha256 digest (64 lowercase hex)",
				       srv_req_param(r, 0));
			return -1;
		}
		r->upload = srv_upload_begin(ctx->cas, &r->err);
		if (!r->upload) {
			srv_reply_error(r, &r->err, NULL);
			return -1;
		}
	} else if (r->mode == M_MULTI) {
		r->form = json_object_new_object();
		r->names = json_object_new_object();
		r->pp = MHD_create_post_processor(r->conn, 64 * 1024, post_iter, r);
		if (!r->pp) {
			srv_reply_fail(r, ENPU_E_BAD_REQUEST, NULL,
				       "cannot parse the multipart body (missing boundary?)");
			return -1;
		}
	} else {
		r->raw.cap = (size_t)r->limit;
	}
	return 0;
}

static void feed_body(srv_req *r, const char *data, size_t n)
{
	r->received += n;
	if (r->mode != M_DISCARD && r->received > r->limit) {
		body_fail(r, ENPU_E_TOO_LARGE, "request body exceeds the limit of %llu bytes (%s)",
			  (unsigned long long)r->limit, limit_flag(r));
		snprintf(r->err.fix, sizeof r->err.fix, "%s", limit_fix(r));
		return;
	}
	switch (r->mode) {
	case M_JSON:
	case M_RAW:
		if (enpu_buf_add(&r->raw, data, n) != 0)
			body_fail(r, ENPU_E_NOMEM, "out of memory reading the body");
		break;
	case M_MULTI:
		if (MHD_post_process(r->pp, data, n) != MHD_YES)
			body_fail(r, ENPU_E_BAD_REQUEST, "malformed multipart body");
		break;
	case M_BLOB:
		if (srv_upload_write(r->upload, data, n, &r->err) != 0) {
			r->failed = 1;
			r->mode = M_DISCARD;
		}
		break;
	default:
		break;
	}
}

static void end_body(srv_req *r)
{
	if (r->pp) {
		MHD_destroy_post_processor(r->pp);
		r->pp = NULL;
		part_close(r);
		if (!r->failed) {
			/* a file part's name fills *_name unless the form gave it */
			json_object_object_foreach(r->names, k, v)
				if (!json_object_object_get_ex(r->form, k, NULL))
					json_object_object_add(r->form, k, json_object_get(v));
			r->json = r->form;
			r->form = NULL;
		}
	}
	if (r->mode == M_JSON && !r->failed) {
		json_tokener *tok = json_tokener_new_ex(r->ctx->cfg.max_json_depth);

		/* names from a JSON body end up in replies and logs: UTF-8 only */
		if (tok)
			json_tokener_set_flags(tok, JSON_TOKENER_VALIDATE_UTF8);
		json_object *o = NULL;
		size_t end = 0;
		enum json_tokener_error je = json_tokener_error_parse_eof;

		if (tok && r->raw.len <= r->ctx->cfg.max_json_bytes) {
			o = json_tokener_parse_ex(tok, r->raw.data ? r->raw.data : "", (int)r->raw.len);
			je = json_tokener_get_error(tok);
			end = json_tokener_get_parse_end(tok);
		}
		while (end < r->raw.len && strchr(" \t\r\n", r->raw.data[end]))
			end++;
		if (!o || je != json_tokener_success || end != r->raw.len) {
			if (je == json_tokener_error_depth) {
				body_fail(r, ENPU_E_TOO_LARGE, "request body nests JSON deeper than "
					  "%d levels (--max-json-depth)", r->ctx->cfg.max_json_depth);
				snprintf(r->err.fix, sizeof r->err.fix, "send a flatter body, or raise "
					 "the server's --max-json-depth");
			}
			body_fail(r, ENPU_E_BAD_REQUEST, "request body is not valid JSON: %s",
				  !o && r->raw.len == 0 ? "empty body"
				  : je != json_tokener_success ? json_tokener_error_desc(je)
				  : "trailing data after the object");
			json_object_put(o);
		} else if (!json_object_is_type(o, json_type_object)) {
			body_fail(r, ENPU_E_BAD_REQUEST, "request body must be a JSON object");
			json_object_put(o);
		} else {
			r->json = o;
		}
		json_tokener_free(tok);
	}
}

/* ---- MHD callbacks --------------------------------------------------------------- */

static void hconn_busy(struct MHD_Connection *conn, int busy);

static enum MHD_Result queue(srv_req *r)
{
	enum MHD_Result ret;

	if (!r->resp)
		srv_reply_fail(r, ENPU_E_INTERNAL, NULL, "handler gave no answer");
	if (!r->resp)
		return MHD_NO;
	MHD_add_response_header(r->resp, "X-Request-Id", r->rid);
	ret = MHD_queue_response(r->conn, r->status, r->resp);
	MHD_destroy_response(r->resp);
	r->resp = NULL;
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_data_size, void **req_cls)
{
	const listener *lst = cls;
	srv_ctx *ctx = lst->ctx;
	srv_req *r = *req_cls;
	char allow[128], who[64];
	int deny;
	(void)version;

	if (!r) {
		r = calloc(1, sizeof *r);
		if (!r)
			return MHD_NO;
		*req_cls = r;
		atomic_fetch_add(&n_active, 1);
		hconn_busy(conn, 1);
		touch();
		r->conn = conn;
		r->ctx = ctx;
		r->lst = lst;
		r->id = atomic_fetch_add(&next_id, 1) + 1;
		make_rid(r);
		r->t0 = srv_now();
		r->url = strdup(url);
		snprintf(r->method, sizeof r->method, "%s", method);
		if (!r->url)
			return MHD_NO;
		r->route = route_find(r, allow, sizeof allow);
		if (!r->route) {
			if (allow[0]) {
				srv_reply_fail(r, ENPU_E_METHOD, url, "%s is not allowed on '%s' (allowed: %s)",
					       method, url, allow);
				srv_reply_header(r, MHD_HTTP_HEADER_ALLOW, allow);
			} else {
				srv_reply_fail(r, ENPU_E_NOT_FOUND, url, "no route '%s %s'", method, url);
			}
			return queue(r);
		}
		/* tokens: on TCP (and everywhere with --token-file); never logged */
		deny = srv_auth_decide(ctx, lst->tcp, (int)r->route->access,
				       srv_req_header(r, MHD_HTTP_HEADER_AUTHORIZATION), who, sizeof who);
		if (deny == 401) {
			srv_reply_fail(r, ENPU_E_AUTH, url, "%s '%s' needs 'Authorization: Bearer TOKEN' "
				       "with a token this server knows", method, url);
			srv_reply_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
			return queue(r);
		}
		if (deny == 403) {
			srv_reply_fail(r, ENPU_E_FORBIDDEN, url, "token '%s' has role user; %s '%s' "
				       "needs role admin", who, method, url);
			return queue(r);
		}
		if (ctx->draining && !strcmp(r->method, "POST") && !strcmp(r->route->pattern, API_JOBS)) {
			srv_reply_fail(r, ENPU_E_UNREACHABLE, url, "the server is shutting down and "
				       "takes no new jobs");
			srv_reply_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "30");
			return queue(r);
		}
		if (begin_body(r) != 0)
			return queue(r);
		return MHD_YES;
	}
	if (*upload_data_size) {
		/* MHD bounds idle gaps (--conn-timeout); this bounds the whole body */
		if (ctx->cfg.request_timeout > 0 && !r->failed &&
		    srv_now() - r->t0 > (double)ctx->cfg.request_timeout) {
			srv_log("warn", "req=%s %s %s: body not received within --request-timeout "
				"%d s; closing the connection", r->rid, r->method, r->url,
				ctx->cfg.request_timeout);
			return MHD_NO;
		}
		feed_body(r, upload_data, *upload_data_size);
		*upload_data_size = 0;
		return MHD_YES;
	}
	end_body(r);
	touch();
	if (r->failed)
		srv_reply_error(r, &r->err, NULL);
	else
		r->route->fn(ctx, r);
	return queue(r);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
			 enum MHD_RequestTerminationCode toe)
{
	srv_req *r = *req_cls;
	double secs;
	int i;
	(void)cls; (void)conn;

	if (!r)
		return;
	hconn_busy(conn, 0);
	secs = srv_now() - r->t0;
	/* the request's log line is the observer's (metrics.c in the daemon) */
	if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK)
		srv_log("debug", "req=%s aborted (code %d)", r->rid, (int)toe);
	srv_obs_request(r->ctx->obs, r->method, r->route ? r->route->pattern : "unmatched", r->status,
			r->resp_bytes, secs, r->rid);
	if (r->pp)
		MHD_destroy_post_processor(r->pp);
	if (r->part_up)
		srv_upload_abort(r->part_up);
	if (r->upload)
		srv_upload_abort(r->upload);
	if (r->resp)
		MHD_destroy_response(r->resp);
	json_object_put(r->form);
	json_object_put(r->names);
	json_object_put(r->json);
	enpu_buf_free(&r->raw);
	enpu_buf_free(&r->part_val);
	free(r->part_file);
	for (i = 0; i < r->n_params; i++)
		free(r->params[i]);
	free(r->url);
	free(r);
	*req_cls = NULL;
	touch();
	atomic_fetch_sub(&n_active, 1);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char line[512];
	size_t n;
	(void)cls;

	vsnprintf(line, sizeof line, fmt, ap);
	n = strlen(line);
	while (n && line[n - 1] == '\n')
		line[--n] = '\0';
	srv_log("warn", "mhd: %s", line);
}

/* ---- slow headers ------------------------------------------------------------------ */

/* --conn-timeout bounds idle gaps only, so a client sending a header byte a
 * second never trips it, and the --request-timeout check in on_request runs
 * only once the headers are in: a few such clients would hold every slot of
 * --conn-limit. So every connection is listed from accept to close, and a
 * reaper shuts the socket of one whose request has not got past its headers
 * within --conn-timeout (or --request-timeout, if smaller) since it connected
 * or since its last request ended. MHD closes a socket only after its CLOSED
 * notification, which takes the lock the reaper holds: never a reused fd. */
typedef struct hconn {
	struct hconn *next, *prev;
	int fd;
	int busy;          /* a request is past its headers (until it completes) */
	int cut;
	double since;      /* connected, or the last request ended */
	double bound;
} hconn;

static pthread_mutex_t hconn_mu = PTHREAD_MUTEX_INITIALIZER;
static hconn *hconns;
static pthread_once_t reaper_once = PTHREAD_ONCE_INIT;

static void *reaper(void *arg)
{
	(void)arg;
	for (;;) {
		double now;
		sleep(1);
		now = srv_now();
		pthread_mutex_lock(&hconn_mu);
		for (hconn *h = hconns; h; h = h->next)
			if (!h->busy && !h->cut && now - h->since > h->bound) {
				srv_log("warn", "a request's headers did not arrive within %.0f s "
					"(--conn-timeout, --request-timeout); closing the connection",
					h->bound);
				shutdown(h->fd, SHUT_RDWR);
				h->cut = 1;
			}
		pthread_mutex_unlock(&hconn_mu);
	}
	return NULL;
}

static void reaper_start(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, reaper, NULL) == 0)
		pthread_detach(t);
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	const listener *lst = cls;
	hconn *h = *socket_context;
	int rt = lst->ctx->cfg.request_timeout, ct = lst->ctx->cfg.conn_timeout;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		if (!ci || !(h = calloc(1, sizeof *h)))
			return;
		h->fd = ci->connect_fd;
		h->since = srv_now();
		h->bound = rt > 0 && rt < ct ? rt : ct;
		pthread_mutex_lock(&hconn_mu);
		h->next = hconns;
		if (hconns)
			hconns->prev = h;
		hconns = h;
		pthread_mutex_unlock(&hconn_mu);
		*socket_context = h;
		return;
	}
	if (!h)
		return;
	pthread_mutex_lock(&hconn_mu);
	if (h->prev)
		h->prev->next = h->next;
	else
		hconns = h->next;
	if (h->next)
		h->next->prev = h->prev;
	pthread_mutex_unlock(&hconn_mu);
	free(h);
	*socket_context = NULL;
}

static void hconn_busy(struct MHD_Connection *conn, int busy)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	hconn *h = ci ? ci->socket_context : NULL;

	if (!h)
		return;
	pthread_mutex_lock(&hconn_mu);
	h->busy = busy;
	h->since = srv_now();
	pthread_mutex_unlock(&hconn_mu);
}

/* MHD's own %HH decoding, except that a path or argument holding %00 stays
 * escaped: decoded, the NUL would end the C string early, so that
 * "/v1/blobs/<digest>%00junk" passed as the digest. Escaped, it is refused. */
static size_t unescape(void *cls, struct MHD_Connection *c, char *s)
{
	(void)cls; (void)c;
	if (strstr(s, "%00"))
		return strlen(s);
	return MHD_http_unescape(s);
}

/* A TCP listening socket (as opposed to a Unix one): tokens and TLS apply. */
static int is_tcp(int fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0)
		return 1;   /* unknown: the stricter choice */
	return ss.ss_family != AF_UNIX;
}

struct MHD_Daemon *srv_http_start(srv_ctx *ctx, int listen_fd)
{
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
			 MHD_USE_ERROR_LOG | MHD_USE_ITC;
	struct MHD_OptionItem tls[3] = {{MHD_OPTION_END, 0, NULL}};
	listener *l = NULL;
	int i;

	touch();
	pthread_once(&reaper_once, reaper_start);
	for (i = 0; i < MAX_LISTENERS; i++)
		if (!listeners[i].ctx) {
			l = &listeners[i];
			break;
		}
	if (!l) {
		srv_log("error", "too many listening sockets (at most %d)", MAX_LISTENERS);
		return NULL;
	}
	l->ctx = ctx;
	l->tcp = is_tcp(listen_fd);
	l->tls = l->tcp && ctx->tls_cert_pem && ctx->tls_key_pem;
	if (l->tls) {
		flags |= MHD_USE_TLS;
		tls[0] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, ctx->tls_cert_pem};
		tls[1] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, ctx->tls_key_pem};
		tls[2] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
	}
	l->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, l,
				MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
				MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL,
				MHD_OPTION_LISTEN_SOCKET, listen_fd,
				MHD_OPTION_NOTIFY_COMPLETED, on_completed, ctx,
				MHD_OPTION_NOTIFY_CONNECTION, on_connection, l,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned int)ctx->cfg.conn_limit,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)ctx->cfg.conn_timeout,
				MHD_OPTION_ARRAY, tls,
				MHD_OPTION_END);
	if (!l->d) {
		srv_log("error", "cannot start the HTTP%s server on fd %d", l->tls ? "S" : "",
			listen_fd);
		memset(l, 0, sizeof *l);
		return NULL;
	}
	return l->d;
}

int srv_http_tls_supported(void)
{
	return MHD_is_feature_supported(MHD_FEATURE_TLS) == MHD_YES;
}

int srv_http_quiesce(struct MHD_Daemon *d)
{
	/* After a quiesce the listening socket is ours to close again. */
	return d ? (int)MHD_quiesce_daemon(d) : -1;
}

void srv_http_stop(struct MHD_Daemon *d)
{
	int i;

	if (!d)
		return;
	MHD_stop_daemon(d);
	for (i = 0; i < MAX_LISTENERS; i++)
		if (listeners[i].d == d)
			memset(&listeners[i], 0, sizeof listeners[i]);
}

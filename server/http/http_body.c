/* http_body.c: request body intake: JSON (capped, depth-limited),
 * multipart forms (file parts streamed into the CAS, text fields kept),
 * raw bytes, or a blob streamed into the CAS, with size limits checked
 * against Content-Length up front and while streaming. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "digest.h"
#include "json.h"
#include "http_int.h"

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
			enpu_err oe = ENPU_ERR_INIT;
			/* the sender proved it holds the bytes (docs/access.md) */
			if (srv_owners_add(r->ctx->cas, dig, r->who.name, &oe) != 0)
				srv_log("warn", "req=%s cache: cannot record the uploader of %s: %s",
					r->rid, dig, oe.message);
			json_object_object_add(r->form, r->part_key, json_object_new_string(dig));
			base = strrchr(r->part_file, '/');
			base = base ? base + 1 : r->part_file;
			snprintf(namekey, sizeof namekey, "%s_name", r->part_key);
			if (*base)
				json_object_object_add(r->names, namekey, srv_json_text(base));
		}
	} else if (!r->failed && !http_utf8_valid(r->part_val.data, r->part_val.len)) {
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

int http_begin_body(srv_req *r)
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
		if (srv_req_header(r, H_LOCAL_FILE)) {   /* the route copies the file: no body */
			if (cl && strtoull(cl, NULL, 10) > 0) {
				srv_reply_fail(r, ENPU_E_BAD_REQUEST, H_LOCAL_FILE,
					       "a blob named by " H_LOCAL_FILE " takes no body");
				return -1;
			}
			r->mode = M_DISCARD;
			return 0;
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

void http_feed_body(srv_req *r, const char *data, size_t n)
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

void http_end_body(srv_req *r)
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
		json_tokener *tok;

		enpu_json_thread();
		tok = json_tokener_new_ex(r->ctx->cfg.max_json_depth);

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

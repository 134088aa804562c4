/* http_req.c: a request as a handler sees it: the route that matched and
 * its "*" captures, the query and headers, and the typed field helpers
 * that answer 400 naming the field. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "digest.h"
#include "http_int.h"
#include "routes.h"

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

/* ---- bounds on the request's head -------------------------------------------------- */

static enum MHD_Result add_len(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	size_t *n = cls;
	(void)kind;
	*n += strlen(key) + (value ? strlen(value) : 0) + 4;   /* "k: v\r\n", "k=v&" */
	return MHD_YES;
}

int http_head_too_large(srv_req *r)
{
	size_t uri = strlen(r->url), head = 0;

	MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, add_len, &uri);
	MHD_get_connection_values(r->conn, MHD_HEADER_KIND, add_len, &head);
	if (uri > HTTP_MAX_URI) {
		srv_reply_fail(r, ENPU_E_URI_TOO_LONG, NULL, "the request's path and query are about "
			       "%zu bytes; the server reads at most %d", uri, HTTP_MAX_URI);
		return 1;
	}
	if (head > HTTP_MAX_HEADERS) {
		srv_reply_fail(r, ENPU_E_HEADERS_TOO_LARGE, NULL, "the request's headers are about "
			       "%zu bytes; the server reads at most %d", head, HTTP_MAX_HEADERS);
		return 1;
	}
	return 0;
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

const srv_route *http_route_find(srv_req *r, char *allow, size_t cap)
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

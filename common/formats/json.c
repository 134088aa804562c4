/* json.c: the json-c helpers every JSON file of the project shares (json.h):
 * one output style, strict parsing with a size bound, typed field access
 * whose errors name the file and the field, canonical forms. */
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "json.h"

#define JSON_FLAGS (JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | \
		    JSON_C_TO_STRING_NOSLASHESCAPE)

int enpu_json_dump(struct json_object *o, enpu_buf *out, enpu_err *e)
{
	size_t n;
	const char *s = json_object_to_json_string_length(o, JSON_FLAGS, &n);

	if (!s || enpu_buf_add(out, s, n) < 0 || enpu_buf_add(out, "\n", 1) < 0)
		return enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "cannot serialize JSON");
	return 0;
}

void enpu_json_thread(void)
{
	static _Thread_local int done;
	locale_t c;

	if (done)
		return;
	done = 1;
	c = newlocale(LC_ALL_MASK, "C", (locale_t)0);   /* the static C object: no malloc */
	if (c)
		uselocale(c);
}

struct json_object *enpu_json_parse(const char *text, size_t len, const char *label,
				    enpu_err *e)
{
	struct json_tokener *tok;
	json_object *o = NULL;

	enpu_json_thread();

	if (len > ENPU_ARTIFACT_MAX_JSON || len > INT32_MAX) {
		enpu_fail(e, ENPU_E_ARTIFACT, label, NULL, "'%s' is too large", label);
		return NULL;
	}
	if (!(tok = json_tokener_new_ex(64))) {
		enpu_fail(e, ENPU_E_NOMEM, label, NULL, "cannot parse '%s'", label);
		return NULL;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	o = json_tokener_parse_ex(tok, text, (int)len);
	if (!o || json_tokener_get_error(tok) != json_tokener_success ||
	    json_tokener_get_parse_end(tok) != len) {
		/* Trailing whitespace after the value is fine; anything else is not. */
		size_t end = json_tokener_get_parse_end(tok);
		int ok = o && json_tokener_get_error(tok) == json_tokener_success;
		for (size_t i = end; ok && i < len; i++)
			if (text[i] != ' ' && text[i] != '\n' && text[i] != '\t' && text[i] != '\r')
				ok = 0;
		if (!ok) {
			enpu_fail(e, ENPU_E_ARTIFACT, label, NULL, "'%s' is not valid JSON: %s",
				  label, o ? "trailing data" :
				  json_tokener_error_desc(json_tokener_get_error(tok)));
			json_object_put(o);
			o = NULL;
		}
	}
	json_tokener_free(tok);
	return o;
}

int enpu_cmp_strptr(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

json_object *enpu_json_exact_double(double d)
{
	char buf[40];

	if (d == floor(d) && fabs(d) < 9007199254740992.0) {   /* 1000, not 1e+03 */
		snprintf(buf, sizeof(buf), "%.0f", d);
		return json_object_new_double_s(d, buf);
	}
	for (int p = 1; p <= 17; p++) {
		snprintf(buf, sizeof(buf), "%.*g", p, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	return json_object_new_double_s(d, buf);
}

void enpu_json_put(json_object *o, const char *k, json_object *v, int *bad)
{
	if (!v || json_object_object_add(o, k, v)) {
		json_object_put(v);
		*bad = 1;
	}
}

json_object *enpu_json_raw(const char *text)
{
	json_object *o = json_object_new_array();
	char *copy = strdup(text);

	if (!o || !copy) {
		json_object_put(o);
		free(copy);
		return NULL;
	}
	/* json-c's own serializer for this: the userdata, as it is */
	json_object_set_serializer(o, json_object_userdata_to_json_string, copy,
				   json_object_free_userdata);
	return o;
}

void enpu_json_push(json_object *a, json_object *v, int *bad)
{
	if (!v || json_object_array_add(a, v)) {
		json_object_put(v);
		*bad = 1;
	}
}

static const char *type_name(json_type t)
{
	switch (t) {
	case json_type_null: return "null";
	case json_type_boolean: return "a boolean";
	case json_type_double: return "a number";
	case json_type_int: return "an integer";
	case json_type_object: return "an object";
	case json_type_array: return "an array";
	case json_type_string: return "a string";
	}
	return "a value";
}

struct json_object *enpu_json_field(struct json_object *o, const char *key, json_type t,
				    const char *label, const char *ctx, enpu_err *e)
{
	json_object *v = NULL;

	if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v)) {
		enpu_fail(e, ENPU_E_ARTIFACT, label, NULL, "%sfield '%s' is missing", ctx, key);
		return NULL;
	}
	if (!json_object_is_type(v, t)) {
		enpu_fail(e, ENPU_E_ARTIFACT, label, NULL, "%sfield '%s' must be %s",
			  ctx, key, type_name(t));
		return NULL;
	}
	return v;
}

int enpu_json_int(struct json_object *v, int64_t lo, int64_t hi, const char *label,
		  const char *what, int64_t *out, enpu_err *e)
{
	int64_t x;

	if (!json_object_is_type(v, json_type_int))
		return enpu_fail(e, ENPU_E_ARTIFACT, label, NULL, "%s must be an integer", what);
	x = json_object_get_int64(v);
	if (x < lo || x > hi)
		return enpu_fail(e, ENPU_E_ARTIFACT, label, NULL,
				 "%s is %lld, outside [%lld, %lld]", what, (long long)x,
				 (long long)lo, (long long)hi);
	*out = x;
	return 0;
}

struct json_object *enpu_json_canonical(struct json_object *o)
{
	json_object *r;

	if (!o)
		return NULL;
	if (json_object_is_type(o, json_type_array)) {
		size_t n = json_object_array_length(o);
		if (!(r = json_object_new_array()))
			return NULL;
		for (size_t i = 0; i < n; i++) {
			json_object *c = json_object_array_get_idx(o, i);
			json_object_array_add(r, c ? enpu_json_canonical(c) : NULL);
		}
		return r;
	}
	if (json_object_is_type(o, json_type_object)) {
		int n = json_object_object_length(o), i = 0;
		const char **keys = malloc(sizeof(char *) * (size_t)(n ? n : 1));
		if (!keys || !(r = json_object_new_object())) {
			free(keys);
			return NULL;
		}
		json_object_object_foreach(o, k, v) {
			(void)v;
			keys[i++] = k;
		}
		qsort(keys, (size_t)n, sizeof(*keys), enpu_cmp_strptr);
		for (i = 0; i < n; i++) {
			json_object *c = json_object_object_get(o, keys[i]);
			json_object_object_add(r, keys[i], c ? enpu_json_canonical(c) : NULL);
		}
		free(keys);
		return r;
	}
	return json_object_get(o);
}

/* ---- reading back what the project wrote ------------------------------- */

int enpu_jread_fail(enpu_jread *r, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return enpu_fail(r->e, ENPU_E_ARTIFACT, r->label, "recompile the artifact", "%s: %s",
			 r->what, msg);
}

int enpu_jread_fields(enpu_jread *r, json_object *o, const char *const *fields,
		      json_object **vals)
{
	if (!json_object_is_type(o, json_type_object))
		return enpu_jread_fail(r, "not an object");
	json_object_object_foreach(o, key, val) {
		int j;

		(void)val;
		for (j = 0; fields[j]; j++)
			if (!strcmp(key, fields[j]))
				break;
		if (!fields[j])
			return enpu_jread_fail(r, "unknown field '%.64s'", key);
	}
	for (int i = 0; fields[i]; i++)
		if (!json_object_object_get_ex(o, fields[i], &vals[i]))
			return enpu_jread_fail(r, "missing field '%s'", fields[i]);
	return 0;
}

int enpu_jread_int(enpu_jread *r, json_object *v, const char *what, int64_t lo, int64_t hi,
		   int64_t *out)
{
	int64_t x;

	if (!json_object_is_type(v, json_type_int))
		return enpu_jread_fail(r, "'%s' is not an integer", what);
	x = json_object_get_int64(v);
	if (x < lo || x > hi)
		return enpu_jread_fail(r, "'%s' is %lld, not in %lld..%lld", what, (long long)x,
				       (long long)lo, (long long)hi);
	*out = x;
	return 0;
}

int enpu_jread_ints(enpu_jread *r, json_object *v, const char *what, size_t n, int64_t lo,
		    int64_t hi, int64_t *out)
{
	if (!json_object_is_type(v, json_type_array) || json_object_array_length(v) != n)
		return enpu_jread_fail(r, "'%s' is not a list of %zu integers", what, n);
	for (size_t i = 0; i < n; i++)
		if (enpu_jread_int(r, json_object_array_get_idx(v, i), what, lo, hi, &out[i]))
			return -1;
	return 0;
}

int enpu_jread_num(enpu_jread *r, json_object *v, const char *what, int zero_ok, double hi,
		   double *out)
{
	double x;

	if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
		return enpu_jread_fail(r, "'%s' is not a number", what);
	x = json_object_get_double(v);
	if (!isfinite(x) || x < 0 || (x == 0 && !zero_ok) || x > hi)
		return enpu_jread_fail(r, "'%s' is out of range", what);
	*out = x;
	return 0;
}

int enpu_jread_choice(enpu_jread *r, json_object *v, const char *what, const char *const *names,
		      int *idx)
{
	const char *s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
	char list[256];
	size_t off = 0;

	for (int i = 0; s && names[i]; i++)
		if (!strcmp(s, names[i])) {
			*idx = i;
			return 0;
		}
	list[0] = 0;
	for (int i = 0; names[i] && off < sizeof(list); i++)
		off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s", i ? ", " : "",
					names[i]);
	return enpu_jread_fail(r, "'%s' is not one of %s", what, list);
}

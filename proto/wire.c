/* wire.c: the wire formats shared by server, client and the artifact
 * loader: error objects in and out, string fields, path safety, job JSON
 * read into a struct. No I/O here, and nothing from server/ or client/. */
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>
#include "api.h"
#include "buf.h"
#include "wire.h"

const char *enpu_wire_str(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

int enpu_wire_err_from_json(struct json_object *err, enpu_err *e, const char **code,
			    const char **msg)
{
	const char *id = enpu_wire_str(err, "code");
	const char *m = enpu_wire_str(err, "message");
	const char *where = enpu_wire_str(err, "where");
	const char *fix = enpu_wire_str(err, "fix");
	const enpu_code_info *ci = id ? enpu_code_by_id(id) : NULL;

	*e = (enpu_err)ENPU_ERR_INIT;
	if (code)
		*code = id;
	if (msg)
		*msg = m;
	if (!ci)
		return -1;
	e->code = ci->code;
	snprintf(e->message, sizeof e->message, "%s", m ? m : ci->title);
	snprintf(e->where, sizeof e->where, "%s", where ? where : "");
	snprintf(e->fix, sizeof e->fix, "%s", fix ? fix : "");
	return 0;
}

int enpu_wire_path_is_safe(const char *p, size_t max)
{
	const char *seg = p;
	size_t len;

	if (!p || !*p || p[0] == '/')
		return 0;
	len = strlen(p);
	if (len > max)
		return 0;
	for (const char *c = p; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f || *c == '\\')
			return 0;
	/* Every component non-empty and neither "." nor "..". */
	for (;;) {
		const char *end = strchr(seg, '/');
		size_t n = end ? (size_t)(end - seg) : strlen(seg);

		if (n == 0 || (n == 1 && seg[0] == '.') ||
		    (n == 2 && seg[0] == '.' && seg[1] == '.'))
			return 0;
		if (!end)
			break;
		seg = end + 1;
	}
	return 1;
}

/* ---- error objects out ------------------------------------------------------ */

struct json_object *enpu_wire_text(const char *s)
{
	size_t n = s ? strlen(s) : 0, i, k;
	enpu_buf b = ENPU_BUF_INIT;
	unsigned long cp;
	struct json_object *o;

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

struct json_object *enpu_wire_err_to_json(const enpu_err *e)
{
	const enpu_code_info *info = enpu_code_info_of(e->code);
	struct json_object *er = json_object_new_object();
	char see[64];

	snprintf(see, sizeof see, "eulernpu explain %s", info->id);
	json_object_object_add(er, "code", json_object_new_string(info->id));
	json_object_object_add(er, "title", json_object_new_string(info->title));
	json_object_object_add(er, "message", enpu_wire_text(e->message));
	json_object_object_add(er, "where", enpu_wire_text(e->where));
	json_object_object_add(er, "fix", enpu_wire_text(e->fix[0] ? e->fix : info->fix));
	json_object_object_add(er, "see", json_object_new_string(see));
	return er;
}

/* ---- job JSON in ------------------------------------------------------------- */

static int bad(char *why, size_t cap, const char *fmt, const char *key)
{
	if (why && cap)
		snprintf(why, cap, fmt, key);
	return -1;
}

/* o[key] as a string into out (cap bytes, "" when absent or null); -1 when
 * it is another type or does not fit. */
static int str_field(struct json_object *o, const char *key, char *out, size_t cap, char *why,
		     size_t wcap)
{
	struct json_object *v;
	size_t n;

	out[0] = '\0';
	if (!json_object_object_get_ex(o, key, &v) || !v)
		return 0;
	if (!json_object_is_type(v, json_type_string))
		return bad(why, wcap, "'%s' is not a string", key);
	n = (size_t)json_object_get_string_len(v);
	if (n >= cap || memchr(json_object_get_string(v), 0, n))
		return bad(why, wcap, "'%s' is too long", key);
	memcpy(out, json_object_get_string(v), n + 1);
	return 0;
}

/* o[key] as a number into *out (-1 when absent or null; negative refused). */
static int num_field(struct json_object *o, const char *key, double *out, char *why, size_t wcap)
{
	struct json_object *v;

	*out = -1;
	if (!json_object_object_get_ex(o, key, &v) || !v)
		return 0;
	if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
		return bad(why, wcap, "'%s' is not a number", key);
	*out = json_object_get_double(v);
	if (!(*out >= 0 && *out <= 1e15))
		return bad(why, wcap, "'%s' is out of range", key);
	return 0;
}

static int output_read(struct json_object *v, enpu_wire_output *t, char *why, size_t wcap)
{
	struct json_object *sh, *d;
	size_t i, n;

	if (!json_object_is_type(v, json_type_object))
		return bad(why, wcap, "an entry of '%s' is not an object", F_OUTPUTS);
	if (str_field(v, F_NAME, t->name, sizeof t->name, why, wcap) != 0 || !t->name[0])
		return bad(why, wcap, "an output has no valid '%s'", F_NAME);
	if (!json_object_object_get_ex(v, F_SHAPE, &sh) || !json_object_is_type(sh, json_type_array) ||
	    (n = json_object_array_length(sh)) > ENPU_WIRE_RANK)
		return bad(why, wcap, "an output has no valid '%s'", F_SHAPE);
	t->ndim = (int)n;
	for (i = 0; i < n; i++) {
		d = json_object_array_get_idx(sh, i);
		if (!json_object_is_type(d, json_type_int) || json_object_get_int64(d) < 0 ||
		    json_object_get_int64(d) > ENPU_WIRE_DIM_MAX)
			return bad(why, wcap, "an output's '%s' has a dimension out of range", F_SHAPE);
		t->dim[i] = json_object_get_int64(d);
	}
	return 0;
}

static int digest_ok(const char *s)
{
	return !*s || (strlen(s) == 64 && strspn(s, "0123456789abcdef") == 64);
}

int enpu_wire_job_read(struct json_object *o, enpu_wire_job *j, char *why, size_t cap)
{
	static const char *const states[] = {JOB_QUEUED, JOB_RUNNING, JOB_SUCCEEDED, JOB_FAILED,
					     JOB_CANCELLED, JOB_TIMED_OUT};
	struct json_object *v;
	double pos, att;
	size_t i, n;
	int known = 0;

	memset(j, 0, sizeof *j);
	if (!o || !json_object_is_type(o, json_type_object))
		return bad(why, cap, "the job is not a JSON object%s", "");
	if (str_field(o, F_ID, j->id, sizeof j->id, why, cap) != 0 ||
	    str_field(o, F_STATE, j->state, sizeof j->state, why, cap) != 0 ||
	    str_field(o, F_BACKEND, j->backend, sizeof j->backend, why, cap) != 0 ||
	    str_field(o, F_BOARD, j->board, sizeof j->board, why, cap) != 0 ||
	    str_field(o, F_FAILURE, j->failure, sizeof j->failure, why, cap) != 0 ||
	    str_field(o, F_RESULT, j->result, sizeof j->result, why, cap) != 0 ||
	    str_field(o, F_REPORT, j->report, sizeof j->report, why, cap) != 0 ||
	    str_field(o, F_WAITING, j->waiting, sizeof j->waiting, why, cap) != 0 ||
	    num_field(o, F_SECONDS, &j->seconds, why, cap) != 0 ||
	    num_field(o, F_ETA, &j->eta, why, cap) != 0 ||
	    num_field(o, F_POSITION, &pos, why, cap) != 0 ||
	    num_field(o, F_ATTEMPTS, &att, why, cap) != 0)
		return -1;
	j->position = (long long)pos;
	j->attempts = (long long)att;
	if (!j->id[0] || strspn(j->id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				"0123456789_-") != strlen(j->id))
		return bad(why, cap, "the job has no valid '%s'", F_ID);
	for (i = 0; i < sizeof states / sizeof states[0]; i++)
		known |= !strcmp(j->state, states[i]);
	if (!known)
		return bad(why, cap, "the job has no valid '%s'", F_STATE);
	if (!digest_ok(j->result) || !digest_ok(j->report))
		return bad(why, cap, "the job's '%s' or 'report' is not a sha256 digest", F_RESULT);
	if (json_object_object_get_ex(o, F_OUTPUTS, &v) && v) {
		if (!json_object_is_type(v, json_type_array) ||
		    (n = json_object_array_length(v)) > ENPU_WIRE_JOB_OUTPUTS)
			return bad(why, cap, "'%s' is not a list of at most 64 outputs", F_OUTPUTS);
		for (i = 0; i < n; i++)
			if (output_read(json_object_array_get_idx(v, i), &j->outputs[i], why, cap) != 0)
				return -1;
		j->n_outputs = (int)n;
	}
	if (json_object_object_get_ex(o, F_ERROR, &v) && v) {
		if (!json_object_is_type(v, json_type_object))
			return bad(why, cap, "'%s' is not an object", F_ERROR);
		j->error = v;
	}
	return 0;
}

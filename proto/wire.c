/* wire.c: the wire formats shared by server, client and the artifact
 * loader: error objects in and out, string fields, path safety,
 * manifest.json, job JSON read into a struct. No I/O here, and nothing
 * from server/ or client/. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "api.h"
#include "buf.h"
#include "wire.h"
#include "enpu.h"
#include "json.h"
#include "digest.h"
#include "backend.h"

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

/* ---- manifest.json ------------------------------------------------------ */

#define FIX_RECOMPILE "recompile the artifact"

/* A string field of o that must equal want (want NULL: any string). */
static const char *mf_str(json_object *o, const char *key, const char *want, const char *label,
			  const char *ctx, enpu_err *e)
{
	json_object *v = enpu_json_field(o, key, json_type_string, label, ctx, e);

	if (!v)
		return NULL;
	if (want && strcmp(json_object_get_string(v), want) != 0) {
		enpu_fail(e, ENPU_E_ARTIFACT, label, FIX_RECOMPILE, "%sfield '%s' is not \"%s\"",
			  ctx, key, want);
		return NULL;
	}
	return json_object_get_string(v);
}

/* format, version, id, backend and its target, compiler, spec, layout */
static int mf_header(enpu_manifest *m, const char *label, enpu_err *e)
{
	json_object *v, *spec;
	const enpu_backend_def *d;
	const char *s;
	int64_t iv;

	if (!mf_str(m->root, "format", "eulernpu-artifact", label, "", e) ||
	    !(v = enpu_json_field(m->root, "version", json_type_int, label, "", e)) ||
	    enpu_json_int(v, 1, 1, label, "field 'version'", &iv, e) < 0 ||
	    !(s = mf_str(m->root, "id", NULL, label, "", e)))
		return -1;
	if (!enpu_is_sha256_hex(s))
		return enpu_fail(e, ENPU_E_ARTIFACT, label, FIX_RECOMPILE,
				 "field 'id' is not a sha256 digest");
	memcpy(m->id, s, 65);
	if (!(s = mf_str(m->root, "backend", NULL, label, "", e)))
		return -1;
	if (!(d = enpu_backend_by_name(s)))
		return enpu_fail(e, ENPU_E_ARTIFACT, label, FIX_RECOMPILE,
				 "field 'backend': unknown backend '%s'", s);
	snprintf(m->backend, sizeof m->backend, "%s", s);
	if (d->opts_size &&
	    !(m->target = enpu_json_field(m->root, "target", json_type_object, label, "", e)))
		return -1;
	if (!mf_str(m->root, "compiler", NULL, label, "", e) ||
	    !(spec = enpu_json_field(m->root, "spec", json_type_object, label, "", e)) ||
	    !mf_str(spec, "name", NULL, label, "spec: ", e) ||
	    !mf_str(m->root, "layout", "spec", label, "", e) ||
	    !(s = mf_str(m->root, "weights", NULL, label, "", e)))
		return -1;
	snprintf(m->weights, sizeof m->weights, "%s", s);
	return 0;
}

/* files: [{path, sha256, bytes}], safe, sorted; the id is theirs */
static int mf_files(enpu_manifest *m, const char *label, enpu_err *e)
{
	json_object *files = enpu_json_field(m->root, "files", json_type_array, label, "", e);
	const char *paths[ENPU_MANIFEST_FILES], *digs[ENPU_MANIFEST_FILES];
	char id[65], ctx[32];
	size_t n;

	if (!files)
		return -1;
	if ((n = json_object_array_length(files)) > ENPU_MANIFEST_FILES)
		return enpu_fail(e, ENPU_E_ARTIFACT, label, NULL,
				 "field 'files' lists more than %d files", ENPU_MANIFEST_FILES);
	if (!(m->files = calloc(n ? n : 1, sizeof *m->files)))
		return enpu_fail(e, ENPU_E_NOMEM, label, NULL, "cannot read the manifest");
	for (size_t i = 0; i < n; i++) {
		json_object *f = json_object_array_get_idx(files, i), *b;
		enpu_mfile *mf = &m->files[i];
		const char *p, *d;
		int64_t iv;

		snprintf(ctx, sizeof ctx, "file %zu: ", i);
		if (!(p = mf_str(f, "path", NULL, label, ctx, e)) ||
		    !(d = mf_str(f, "sha256", NULL, label, ctx, e)) ||
		    !(b = enpu_json_field(f, "bytes", json_type_int, label, ctx, e)) ||
		    enpu_json_int(b, 0, INT64_MAX, label, "field 'bytes'", &iv, e) < 0)
			return -1;
		if (!enpu_wire_path_is_safe(p, ENPU_MANIFEST_PATH) || strcmp(p, "manifest.json") == 0)
			return enpu_fail(e, ENPU_E_ARTIFACT, label, "the artifact's files stay inside it",
					 "file path '%s' is not a plain relative path inside the "
					 "artifact", p);
		if (!enpu_is_sha256_hex(d))
			return enpu_fail(e, ENPU_E_ARTIFACT, label, FIX_RECOMPILE,
					 "file '%s': field 'sha256' is not a sha256 digest", p);
		if (i > 0 && strcmp(m->files[i - 1].path, p) >= 0)
			return enpu_fail(e, ENPU_E_ARTIFACT, label, FIX_RECOMPILE,
					 "field 'files' is not sorted by path, or lists '%s' twice", p);
		snprintf(mf->path, sizeof mf->path, "%s", p);
		memcpy(mf->sha256, d, 65);
		mf->bytes = (uint64_t)iv;
		paths[i] = mf->path;
		digs[i] = mf->sha256;
		m->n++;
	}
	if (!enpu_manifest_find(m, "graph.json") || !enpu_manifest_find(m, "plan.json") ||
	    !enpu_manifest_find(m, m->weights))
		return enpu_fail(e, ENPU_E_ARTIFACT, label, FIX_RECOMPILE,
				 "the manifest must list graph.json, plan.json and '%s'", m->weights);
	enpu_artifact_id_of(paths, digs, m->n, id);
	if (strcmp(id, m->id) != 0)
		return enpu_fail(e, ENPU_E_ARTIFACT, label, FIX_RECOMPILE,
				 "artifact id %.12s... does not match its files (%.12s...)", m->id, id);
	return 0;
}

static int mf_count(json_object *o, const char *key, int64_t hi, const char *label,
		    int64_t *out, enpu_err *e)
{
	char what[64];
	json_object *v = enpu_json_field(o, key, json_type_int, label, "summary: ", e);

	snprintf(what, sizeof what, "summary: field '%s'", key);
	return v ? enpu_json_int(v, 0, hi, label, what, out, e) : -1;
}

/* "summary", when there (an older build's manifest has none: has_summary
 * stays 0, and loading derives it). */
static int mf_summary(enpu_manifest *m, const char *label, enpu_err *e)
{
	json_object *s;
	enpu_msummary *sm = &m->summary;
	int64_t v[6];

	if (!json_object_object_get_ex(m->root, "summary", NULL))
		return 0;
	m->has_summary = 1;
	s = enpu_json_field(m->root, "summary", json_type_object, label, "", e);
	if (!s || mf_count(s, F_OPERATORS, INT_MAX, label, &v[0], e) < 0 ||
	    mf_count(s, F_COMPONENTS, INT_MAX, label, &v[1], e) < 0 ||
	    mf_count(s, F_ARENA_BYTES, INT64_MAX, label, &v[2], e) < 0)
		return -1;
	sm->operators = (int)v[0];
	sm->components = (int)v[1];
	sm->arena_bytes = (uint64_t)v[2];
	if (!json_object_object_get_ex(s, F_PL_OPS, NULL))
		return 0;
	if (mf_count(s, F_PL_OPS, INT_MAX, label, &v[3], e) < 0 ||
	    mf_count(s, F_PS_OPS, INT_MAX, label, &v[4], e) < 0 ||
	    mf_count(s, F_PL_SEGMENTS, INT_MAX, label, &v[5], e) < 0)
		return -1;
	sm->partition = 1;
	sm->pl_ops = (int)v[3];
	sm->ps_ops = (int)v[4];
	sm->pl_segments = (int)v[5];
	return 0;
}

int enpu_manifest_parse(const char *text, size_t len, const char *label, enpu_manifest *m,
			enpu_err *e)
{
	memset(m, 0, sizeof *m);
	if (!label)
		label = "manifest.json";
	if (len > ENPU_MANIFEST_MAX)
		return enpu_fail(e, ENPU_E_ARTIFACT, label, FIX_RECOMPILE,
				 "manifest.json is larger than %u bytes", ENPU_MANIFEST_MAX);
	if (!(m->root = enpu_json_parse(text ? text : "", len, label, e)))
		return -1;
	if (!json_object_is_type(m->root, json_type_object)) {
		enpu_fail(e, ENPU_E_ARTIFACT, label, FIX_RECOMPILE, "manifest.json is not a JSON object");
		goto fail;
	}
	if (mf_header(m, label, e) < 0 || mf_files(m, label, e) < 0 || mf_summary(m, label, e) < 0)
		goto fail;
	return 0;
fail:
	enpu_manifest_free(m);
	return -1;
}

void enpu_manifest_free(enpu_manifest *m)
{
	if (!m)
		return;
	json_object_put(m->root);
	free(m->files);
	memset(m, 0, sizeof *m);
}

static int cmp_mfile(const void *a, const void *b)
{
	return strcmp(((const enpu_mfile *)a)->path, ((const enpu_mfile *)b)->path);
}

const enpu_mfile *enpu_manifest_find(const enpu_manifest *m, const char *path)
{
	enpu_mfile key;

	if (!path || strlen(path) >= sizeof key.path || !m->n)
		return NULL;
	snprintf(key.path, sizeof key.path, "%s", path);
	return bsearch(&key, m->files, (size_t)m->n, sizeof *m->files, cmp_mfile);
}

int enpu_msummary_to_json(const enpu_msummary *s, json_object *o)
{
	int bad = 0;

	enpu_json_put(o, F_OPERATORS, json_object_new_int(s->operators), &bad);
	enpu_json_put(o, F_COMPONENTS, json_object_new_int(s->components), &bad);
	enpu_json_put(o, F_ARENA_BYTES, json_object_new_int64((int64_t)s->arena_bytes), &bad);
	if (s->partition) {
		enpu_json_put(o, F_PL_OPS, json_object_new_int(s->pl_ops), &bad);
		enpu_json_put(o, F_PS_OPS, json_object_new_int(s->ps_ops), &bad);
		enpu_json_put(o, F_PL_SEGMENTS, json_object_new_int(s->pl_segments), &bad);
	}
	return bad ? -1 : 0;
}

int enpu_manifest_with_summary(const enpu_manifest *m, const enpu_msummary *s, enpu_buf *out,
			       enpu_err *e)
{
	json_object *root = json_object_new_object(), *sum = json_object_new_object();
	int bad = !root || !sum, rc;

	json_object_object_foreach(m->root, key, val) {
		if (!strcmp(key, "summary"))
			continue;
		if (!strcmp(key, "files") && sum) {
			enpu_json_put(root, "summary", sum, &bad);
			sum = NULL;
		}
		/* values may be null (a spec without a digest) */
		if (root && json_object_object_add(root, key, json_object_get(val)) != 0) {
			json_object_put(val);
			bad = 1;
		}
	}
	if (sum)
		enpu_json_put(root, "summary", sum, &bad);
	else if (!bad)
		bad = enpu_msummary_to_json(s, json_object_object_get(root, "summary")) < 0;
	rc = bad ? enpu_fail(e, ENPU_E_NOMEM, "manifest.json", NULL, "cannot build manifest.json")
		 : enpu_json_dump(root, out, e);
	json_object_put(root);
	return rc;
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

int enpu_model_name_ok(const char *name)
{
	size_t i, n = name ? strlen(name) : 0;

	if (n == 0 || n > ENPU_MODEL_NAME_MAX)
		return 0;
	for (i = 0; i < n; i++) {
		char ch = name[i];
		int alnum = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			    (ch >= '0' && ch <= '9');
		if (!alnum && (i == 0 || (ch != '.' && ch != '_' && ch != '-')))
			return 0;
	}
	return 1;
}

long enpu_model_version_parse(const char *s)
{
	long v = 0;

	if (!s || !*s || *s == '0' || strlen(s) > 10)
		return 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return 0;
		v = v * 10 + (*s - '0');
	}
	return v <= ENPU_MODEL_VERSION_MAX ? v : 0;
}

int enpu_node_id_ok(const char *node)
{
	size_t n = node ? strlen(node) : 0;

	return n >= 1 && n <= ENPU_NODE_ID_MAX &&
	       strspn(node, "abcdefghijklmnopqrstuvwxyz0123456789") == n;
}

int enpu_job_id_parse(const char *id, char node[ENPU_NODE_ID_MAX + 1])
{
	const char *dash = id ? strchr(id, '-') : NULL, *hex = dash ? dash + 1 : id;
	size_t nn = dash ? (size_t)(dash - id) : 0;
	char nd[ENPU_NODE_ID_MAX + 1] = "";

	if (node)
		node[0] = '\0';
	if (!id || strlen(hex) != ENPU_JOB_HEX || strspn(hex, "0123456789abcdef") != ENPU_JOB_HEX)
		return 0;
	if (dash) {
		if (nn > ENPU_NODE_ID_MAX)
			return 0;
		memcpy(nd, id, nn);
		nd[nn] = '\0';
		if (!enpu_node_id_ok(nd))
			return 0;
	}
	if (node)
		memcpy(node, nd, nn + 1);
	return 1;
}

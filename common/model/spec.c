/* spec.c: spec.yaml (format v1) parsing: the YAML loader (ydoc.c) builds the
 * node tree with every node's line:col, then the schema walk here fills an
 * enpu_spec, with `targets` as JSON for the backends. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "buf.h"
#include "spec_int.h"

typedef struct pctx {
	enpu_spec *s;
	const enpu_limits *lim;
	enpu_err *e;
	const enpu_ynode *root;
} pctx;

static const char *const top_keys[] = {"eulernpu", "name", "backend", "inputs", "outputs",
				       "weights", "components", "targets", NULL};
enum { K_VERSION, K_NAME, K_BACKEND, K_INPUTS, K_OUTPUTS, K_WEIGHTS, K_COMPONENTS,
       K_TARGETS, K_NTOP };
static const char *const tensor_keys[] = {"name", "dtype", "shape", NULL};
static const char *const comp_keys[] = {"name", "ops", NULL};
static const char *const op_keys[] = {"name", "op", "in", "out", "attrs", NULL};

const char *enpu_spec_where(const enpu_spec *s, int line, int col, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s:%d:%d", s && s->label ? s->label : "spec.yaml", line, col);
	return buf;
}

static int fail_at(pctx *c, const enpu_ynode *n, enpu_code code, const char *fix,
		   const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int fail_at(pctx *c, const enpu_ynode *n, enpu_code code, const char *fix,
		   const char *fmt, ...)
{
	enpu_yread rd = {c->s->label, code, c->e};
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = enpu_yread_failv(&rd, n, fix, fmt, ap);
	va_end(ap);
	return r;
}

static int nomem(pctx *c)
{
	return enpu_fail(c->e, ENPU_E_NOMEM, c->s->label, NULL, "out of memory parsing the spec");
}

/* ---- schema ----------------------------------------------------------- */

/* Split a mapping into the values of its allowed keys (vals[i] for
 * allowed[i], NULL when absent). Unknown and duplicate keys fail. */
static int fields(pctx *c, const enpu_ynode *map, const char *const *allowed,
		  const enpu_ynode **vals, const char *in_what)
{
	return enpu_yaml_fields(map, allowed, in_what, c->s->label, ENPU_E_SCHEMA, ENPU_YF_KEY,
				NULL, vals, c->e);
}

static int need(pctx *c, const enpu_ynode *v, const enpu_ynode *map, const char *key,
		const char *in_what)
{
	if (v)
		return 0;
	return fail_at(c, map, ENPU_E_SCHEMA, NULL, "missing required key '%s' %s", key, in_what);
}

static int valid_name(const char *s, size_t len)
{
	if (len == 0 || strlen(s) != len)
		return 0;
	for (size_t i = 0; i < len; i++) {
		char ch = s[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' || ch == '-'))
			return 0;
	}
	return 1;
}

/* A string-valued field: a non-null scalar without NUL bytes. */
static int get_str(pctx *c, const enpu_ynode *v, enpu_sstr *out, const char *what)
{
	if (!v || v->kind != ENPU_YN_SCALAR || enpu_ynode_null(v) || strlen(v->text) != v->len)
		return fail_at(c, v, ENPU_E_SCHEMA, NULL, "%s must be a string", what);
	out->s = v->text;
	out->line = v->line;
	out->col = v->col;
	return 0;
}

static int get_list(pctx *c, const enpu_ynode *v, const char *what, int nonempty)
{
	if (v->kind != ENPU_YN_SEQ)
		return fail_at(c, v, ENPU_E_SCHEMA, NULL, "%s must be a list", what);
	if (nonempty && v->n == 0)
		return fail_at(c, v, ENPU_E_SCHEMA, NULL, "%s must not be empty", what);
	if (v->n > (size_t)c->lim->max_yaml_nodes || v->n > (size_t)(INT32_MAX / 2))
		return fail_at(c, v, ENPU_E_LIMIT, NULL, "%s is too long", what);
	return 0;
}

static int parse_dtype(pctx *c, const enpu_ynode *v, const char *kind, const char *name,
		       enpu_dtype *dt)
{
	enpu_sstr s;
	char what[128];

	snprintf(what, sizeof(what), "'dtype' of %s '%.64s'", kind, name);
	if (get_str(c, v, &s, what))
		return -1;
	*dt = enpu_dtype_parse(s.s);
	if (*dt == ENPU_DT_F32)
		return 0;
	/* spec v3: int8, uint8, int32 inputs and weights (the ops' type rules
	 * in validate.c check each use) */
	if ((*dt == ENPU_DT_I8 || *dt == ENPU_DT_U8 || *dt == ENPU_DT_I32) && c->s->version >= 3)
		return 0;
	/* spec v2: int64 weights (gather's indices; validate.c checks the use) */
	if (*dt == ENPU_DT_I64 && strcmp(kind, "weight") == 0 && c->s->version >= 2)
		return 0;
	if (*dt == ENPU_DT_I64)
		return fail_at(c, v, ENPU_E_DTYPE, strcmp(kind, "weight") == 0 ?
			       "write 'eulernpu: 2' at the top of the spec" : "use float32",
			       "dtype int64 of %s '%.64s' %s", kind, name, strcmp(kind, "weight") == 0 ?
			       "needs eulernpu: 2 (int64 weights are gather's indices)" :
			       "is not allowed: only weights may be int64 (gather's indices)");
	if (*dt == ENPU_DT_I8 || *dt == ENPU_DT_U8 || *dt == ENPU_DT_I32)
		return fail_at(c, v, ENPU_E_DTYPE, "write 'eulernpu: 3' at the top of the spec",
			       "dtype '%s' of %s '%.64s' needs eulernpu: 3 (this spec is eulernpu: %d)",
			       s.s, kind, name, c->s->version);
	return fail_at(c, v, ENPU_E_DTYPE, "use float32",
		       "unknown dtype '%.64s' of %s '%.64s' (specs take float32; int64 weights from "
		       "eulernpu: 2; int8, uint8, int32 from eulernpu: 3)", s.s, kind, name);
}

static int parse_shape(pctx *c, const enpu_ynode *v, const char *kind, const char *name,
		       enpu_shape *sh)
{
	uint64_t numel;
	char buf[200];

	if (v->kind != ENPU_YN_SEQ)
		return fail_at(c, v, ENPU_E_SCHEMA, "write the shape as a list such as [1, 8]",
			       "'shape' of %s '%.64s' must be a list of positive integers", kind, name);
	if (v->n > ENPU_MAX_DIMS)
		return fail_at(c, v, ENPU_E_LIMIT, NULL,
			       "%s '%.64s' has %zu dimensions; at most %d are supported", kind, name,
			       v->n, ENPU_MAX_DIMS);
	memset(sh, 0, sizeof(*sh));
	sh->ndim = (int)v->n;
	for (size_t i = 0; i < v->n; i++) {
		int64_t d;
		int r = enpu_ynode_int(v->kids[i], &d);

		if (r == -2)
			return fail_at(c, v->kids[i], ENPU_E_LIMIT,
				       "make the tensor smaller or raise max_tensor_elems",
				       "dimension %zu of %s '%.64s' is too large (more than %llu elements)",
				       i, kind, name, (unsigned long long)c->lim->max_tensor_elems);
		if (r || d < 0)
			return fail_at(c, v->kids[i], ENPU_E_SCHEMA, "write the shape as a list such as [1, 8]",
				       "'shape' of %s '%.64s' must be a list of positive integers", kind, name);
		if (d == 0)
			return fail_at(c, v->kids[i], ENPU_E_SHAPE, "use dimensions >= 1",
				       "%s '%.64s' has a zero dimension; empty tensors are not supported in spec v1",
				       kind, name);
		sh->dim[i] = d;
	}
	if (enpu_shape_numel(sh, &numel) || numel > c->lim->max_tensor_elems)
		return fail_at(c, v, ENPU_E_LIMIT, "make the tensor smaller or raise max_tensor_elems",
			       "%s '%.64s' of shape %s has more than %llu elements", kind, name,
			       enpu_shape_str(sh, buf, sizeof(buf)),
			       (unsigned long long)c->lim->max_tensor_elems);
	return 0;
}

/* inputs / weights: lists of {name, dtype, shape}. */
static int parse_tensors(pctx *c, const enpu_ynode *list, const char *key, const char *kind,
			 enpu_stensor **out, int *n_out)
{
	enpu_stensor *t;
	char what[64];

	snprintf(what, sizeof(what), "'%s'", key);
	if (get_list(c, list, what, 0))
		return -1;
	if (list->n == 0)
		return 0;
	t = calloc(list->n, sizeof(*t));
	if (!t)
		return nomem(c);
	*out = t;
	for (size_t i = 0; i < list->n; i++) {
		const enpu_ynode *it = list->kids[i], *v[3];
		char in_what[64];

		snprintf(in_what, sizeof(in_what), "in %s %zu", kind, i + 1);
		if (it->kind != ENPU_YN_MAP)
			return fail_at(c, it, ENPU_E_SCHEMA, "write {name: x, dtype: float32, shape: [1, 8]}",
				       "each entry of '%s' must be a mapping {name, dtype, shape}", key);
		if (fields(c, it, tensor_keys, v, in_what) ||
		    need(c, v[0], it, "name", in_what) || need(c, v[1], it, "dtype", in_what) ||
		    need(c, v[2], it, "shape", in_what))
			return -1;
		snprintf(what, sizeof(what), "'name' of %s %zu", kind, i + 1);
		if (get_str(c, v[0], &t[i].name, what) ||
		    parse_dtype(c, v[1], kind, t[i].name.s, &t[i].dtype) ||
		    parse_shape(c, v[2], kind, t[i].name.s, &t[i].shape))
			return -1;
		t[i].line = it->line;
		t[i].col = it->col;
		(*n_out)++;
	}
	return 0;
}

static int parse_strlist(pctx *c, const enpu_ynode *v, const char *what, int nonempty,
			 enpu_sstr **out, int *n)
{
	enpu_sstr *a;

	if (get_list(c, v, what, nonempty))
		return -1;
	*n = 0;
	if (v->n == 0)
		return 0;
	a = calloc(v->n, sizeof(*a));
	if (!a)
		return nomem(c);
	*out = a;
	for (size_t i = 0; i < v->n; i++) {
		char w[160];

		snprintf(w, sizeof(w), "each entry of %s", what);
		if (get_str(c, v->kids[i], &a[i], w))
			return -1;
		(*n)++;
	}
	return 0;
}

static int parse_op(pctx *c, const enpu_ynode *it, int comp, enpu_sop *op)
{
	const enpu_ynode *v[5];
	char what[160];
	const char *nm;

	if (it->kind != ENPU_YN_MAP)
		return fail_at(c, it, ENPU_E_SCHEMA, "write {name: fc1, op: matmul, in: [x, w], out: h}",
			       "each op must be a mapping {name, op, in, out, attrs}");
	if (fields(c, it, op_keys, v, "in an op") || need(c, v[0], it, "name", "in an op"))
		return -1;
	op->line = it->line;
	op->col = it->col;
	op->component = comp;
	if (get_str(c, v[0], &op->name, "'name' of an op"))
		return -1;
	nm = op->name.s;
	snprintf(what, sizeof(what), "in op '%.64s'", nm);
	if (need(c, v[1], it, "op", what) || need(c, v[2], it, "in", what) ||
	    need(c, v[3], it, "out", what))
		return -1;
	snprintf(what, sizeof(what), "'op' of op '%.64s'", nm);
	if (get_str(c, v[1], &op->op, what))
		return -1;
	snprintf(what, sizeof(what), "'in' of op '%.64s'", nm);
	if (parse_strlist(c, v[2], what, 0, &op->in, &op->n_in))
		return -1;
	snprintf(what, sizeof(what), "'out' of op '%.64s'", nm);
	if (v[3]->kind == ENPU_YN_SCALAR) {
		if (!(op->out = calloc(1, sizeof(*op->out))))
			return nomem(c);
		if (get_str(c, v[3], &op->out[0], what))
			return -1;
		op->n_out = 1;
	} else if (parse_strlist(c, v[3], what, 1, &op->out, &op->n_out)) {
		return -1;
	}
	if (v[4] && !enpu_ynode_null(v[4])) {
		if (v[4]->kind != ENPU_YN_MAP)
			return fail_at(c, v[4], ENPU_E_SCHEMA, "write attrs: {name: value, ...}",
				       "'attrs' of op '%.64s' must be a mapping", nm);
		op->attrs = v[4];
	}
	return 0;
}

static int parse_components(pctx *c, const enpu_ynode *list)
{
	enpu_spec *s = c->s;
	uint64_t total = 0;
	int k = 0;

	if (get_list(c, list, "'components'", 1))
		return -1;
	/* count the ops first: one allocation, and the max_ops limit up front */
	for (size_t i = 0; i < list->n; i++) {
		const enpu_ynode *it = list->kids[i], *ops;

		if (it->kind == ENPU_YN_MAP && (ops = enpu_ynode_get(it, "ops")) && ops->kind == ENPU_YN_SEQ)
			total += ops->n;
	}
	if (total > c->lim->max_ops)
		return fail_at(c, list, ENPU_E_LIMIT, "split the model or raise max_ops",
			       "spec has %llu ops (limit %llu)", (unsigned long long)total,
			       (unsigned long long)c->lim->max_ops);
	s->comps = calloc(list->n, sizeof(*s->comps));
	s->ops = total ? calloc((size_t)total, sizeof(*s->ops)) : NULL;
	if (!s->comps || (total && !s->ops))
		return nomem(c);
	for (size_t i = 0; i < list->n; i++) {
		const enpu_ynode *it = list->kids[i], *v[2];
		enpu_scomp *cp = &s->comps[i];
		char what[128];

		if (it->kind != ENPU_YN_MAP)
			return fail_at(c, it, ENPU_E_SCHEMA, "write {name: hidden, ops: [...]}",
				       "each component must be a mapping {name, ops}");
		if (fields(c, it, comp_keys, v, "in a component") ||
		    need(c, v[0], it, "name", "in a component"))
			return -1;
		if (get_str(c, v[0], &cp->name, "'name' of a component"))
			return -1;
		snprintf(what, sizeof(what), "in component '%.64s'", cp->name.s);
		if (need(c, v[1], it, "ops", what))
			return -1;
		snprintf(what, sizeof(what), "'ops' of component '%.64s'", cp->name.s);
		if (get_list(c, v[1], what, 1))
			return -1;
		cp->line = it->line;
		cp->col = it->col;
		cp->first_op = k;
		s->n_comps++;
		for (size_t j = 0; j < v[1]->n; j++) {
			/* total was counted from the first "ops" key; fields() has
			 * since ruled out a second one, so k stays in bounds */
			if (parse_op(c, v[1]->kids[j], (int)i, &s->ops[k]))
				return s->n_ops = k + 1, -1;
			s->n_ops = ++k;
			cp->n_ops++;
		}
	}
	return 0;
}

/* YAML to JSON for targets: plain scalars become null/bool/int/double,
 * anything quoted a string. Depth is bounded by max_yaml_depth. */
static int to_json(pctx *c, const enpu_ynode *n, json_object **out)
{
	*out = NULL;
	if (n->kind == ENPU_YN_SCALAR) {
		int64_t iv;
		double dv;
		int bv;

		if (enpu_ynode_null(n))
			return 0;
		if (enpu_ynode_bool(n, &bv) == 0)
			*out = json_object_new_boolean(bv);
		else if (enpu_ynode_int(n, &iv) == 0)
			*out = json_object_new_int64(iv);
		else if (enpu_ynode_float(n, &dv) == 0)
			*out = json_object_new_double(dv);
		else
			*out = json_object_new_string_len(n->text, (int)(n->len > INT32_MAX ? INT32_MAX : n->len));
		return *out ? 0 : nomem(c);
	}
	if (n->kind == ENPU_YN_SEQ) {
		if (!(*out = json_object_new_array()))
			return nomem(c);
		for (size_t i = 0; i < n->n; i++) {
			json_object *v;

			if (to_json(c, n->kids[i], &v))
				goto fail;
			if (json_object_array_add(*out, v)) {
				json_object_put(v);
				nomem(c);
				goto fail;
			}
		}
		return 0;
	}
	if (!(*out = json_object_new_object()))
		return nomem(c);
	for (size_t i = 0; i < n->n; i++) {
		const enpu_ynode *k = n->kids[2 * i];
		json_object *v;

		if (k->kind != ENPU_YN_SCALAR || strlen(k->text) != k->len) {
			fail_at(c, k, ENPU_E_TARGET, NULL, "keys in targets must be strings");
			goto fail;
		}
		if (json_object_object_get_ex(*out, k->text, NULL)) {
			fail_at(c, k, ENPU_E_SCHEMA, "remove one of the two",
				"duplicate key '%.64s' in targets", k->text);
			goto fail;
		}
		if (to_json(c, n->kids[2 * i + 1], &v))
			goto fail;
		if (json_object_object_add(*out, k->text, v)) {
			json_object_put(v);
			nomem(c);
			goto fail;
		}
	}
	return 0;
fail:
	json_object_put(*out);
	*out = NULL;
	return -1;
}

static int parse_targets(pctx *c, const enpu_ynode *v)
{
	char known[128];
	const char *names[ENPU_BACKENDS_MAX + 1];
	json_object *sub;

	for (int i = 0; i < enpu_backend_count(); i++)
		names[i] = enpu_backend_name(i);
	names[enpu_backend_count()] = NULL;
	enpu_join(names, known, sizeof(known));
	if (enpu_ynode_null(v))
		return 0;
	if (v->kind != ENPU_YN_MAP)
		return fail_at(c, v, ENPU_E_TARGET, "write targets: {npu_sim: {...}}",
			       "'targets' must be a mapping from backend to settings");
	for (size_t i = 0; i < v->n; i++) {
		const enpu_ynode *k = v->kids[2 * i], *val = v->kids[2 * i + 1];

		if (k->kind != ENPU_YN_SCALAR || enpu_backend_parse(k->text) < 0)
			return fail_at(c, k, ENPU_E_TARGET, NULL, "unknown backend '%.64s' in targets (known: %s)",
				       k->kind == ENPU_YN_SCALAR ? k->text : "?", known);
		if (!enpu_ynode_null(val) && val->kind != ENPU_YN_MAP)
			return fail_at(c, val, ENPU_E_TARGET, NULL,
				       "settings of target '%s' must be a mapping", k->text);
	}
	if (to_json(c, v, &c->s->targets))
		return -1;
	/* a backend written with no settings is an empty object, not null */
	json_object_object_foreach(c->s->targets, key, val) {
		if (!val) {
			if (!(sub = json_object_new_object()) ||
			    json_object_object_add(c->s->targets, key, sub))
				return nomem(c);
		}
	}
	return 0;
}

static int parse_root(pctx *c)
{
	enpu_spec *s = c->s;
	const enpu_ynode *root = c->root, *v[K_NTOP];
	int64_t ver;

	if (!root || enpu_ynode_null(root))
		return fail_at(c, NULL, ENPU_E_SCHEMA, "start the file with 'eulernpu: 1'",
			       "spec is empty");
	if (root->kind != ENPU_YN_MAP)
		return fail_at(c, root, ENPU_E_SCHEMA, "start the file with 'eulernpu: 1'",
			       "spec must be a mapping with keys eulernpu, name, inputs, outputs, weights, components");
	s->line = root->line;
	s->col = root->col;
	/* the version first: a newer spec may have keys this one does not know */
	v[K_VERSION] = enpu_ynode_get(root, "eulernpu");
	if (!v[K_VERSION])
		return fail_at(c, root, ENPU_E_SCHEMA, "add 'eulernpu: 1' (the spec format version)",
			       "missing required key 'eulernpu'");
	if (enpu_ynode_int(v[K_VERSION], &ver) || ver < 1 || ver > 3)
		return fail_at(c, v[K_VERSION], ENPU_E_VERSION,
			       "write 'eulernpu: 1', 'eulernpu: 2' or 'eulernpu: 3', or upgrade eulernpu",
			       "unsupported spec format version '%.32s'",
			       v[K_VERSION]->kind == ENPU_YN_SCALAR ? v[K_VERSION]->text : "?");
	s->version = (int)ver;
	if (fields(c, root, top_keys, v, "at the top level") ||
	    need(c, v[K_NAME], root, "name", "at the top level") ||
	    need(c, v[K_INPUTS], root, "inputs", "at the top level") ||
	    need(c, v[K_OUTPUTS], root, "outputs", "at the top level") ||
	    need(c, v[K_COMPONENTS], root, "components", "at the top level"))
		return -1;
	if (get_str(c, v[K_NAME], &s->name, "'name'"))
		return -1;
	if (!valid_name(s->name.s, v[K_NAME]->len))
		return fail_at(c, v[K_NAME], ENPU_E_NAME, "use letters, digits, '_', '.' and '-'",
			       "spec name '%.64s' is not a valid name", s->name.s);
	if (v[K_BACKEND] && get_str(c, v[K_BACKEND], &s->backend, "'backend'"))
		return -1;
	if (get_list(c, v[K_INPUTS], "'inputs'", 1) ||
	    parse_tensors(c, v[K_INPUTS], "inputs", "input", &s->inputs, &s->n_inputs))
		return -1;
	if (parse_strlist(c, v[K_OUTPUTS], "'outputs'", 1, &s->outputs, &s->n_outputs))
		return -1;
	if (v[K_WEIGHTS] && !enpu_ynode_null(v[K_WEIGHTS]) &&
	    parse_tensors(c, v[K_WEIGHTS], "weights", "weight", &s->weights, &s->n_weights))
		return -1;
	if (parse_components(c, v[K_COMPONENTS]))
		return -1;
	if (v[K_TARGETS] && parse_targets(c, v[K_TARGETS]))
		return -1;
	if (v[K_TARGETS] && !enpu_ynode_null(v[K_TARGETS]))
		s->targets_node = v[K_TARGETS];
	return 0;
}

int enpu_spec_parse(const char *yaml, size_t len, const char *label,
		    const enpu_limits *lim, enpu_spec **out, enpu_err *e)
{
	enpu_yaml_opts o = {0};
	pctx c;
	enpu_spec *s;

	*out = NULL;
	if (!lim)
		lim = enpu_limits_default();
	memset(&c, 0, sizeof(c));
	s = calloc(1, sizeof(*s));
	if (!s || !(s->label = strdup(label ? label : "spec.yaml"))) {
		free(s);
		return enpu_fail(e, ENPU_E_NOMEM, label, NULL, "out of memory parsing the spec");
	}
	s->lim = *lim;
	c.s = s;
	c.lim = lim;
	c.e = e;
	if (len > lim->max_spec_bytes) {
		enpu_fail(e, ENPU_E_LIMIT, s->label, "make the spec smaller or raise max_spec_bytes",
			  "spec is %zu bytes (limit %llu)", len, (unsigned long long)lim->max_spec_bytes);
		goto fail;
	}
	o.what = "spec";
	o.max_bytes = lim->max_spec_bytes;
	o.max_nodes = lim->max_yaml_nodes;
	o.max_depth = lim->max_yaml_depth;
	if (enpu_yaml_load(yaml, len, s->label, &o, &s->doc, e))
		goto fail;
	c.root = enpu_ydoc_root(s->doc);
	if (parse_root(&c))
		goto fail;
	*out = s;
	return 0;
fail:
	enpu_spec_free(s);
	return -1;
}

int enpu_spec_load(const char *path, const char *label, const enpu_limits *lim,
		   enpu_spec **out, enpu_err *e)
{
	enpu_buf b = ENPU_BUF_INIT;
	int r;

	*out = NULL;
	if (!lim)
		lim = enpu_limits_default();
	if (enpu_read_file(path, lim->max_spec_bytes, &b, e))
		return -1;
	r = enpu_spec_parse(b.data ? b.data : "", b.len, label ? label : path, lim, out, e);
	enpu_buf_free(&b);
	return r;
}

void enpu_spec_free(enpu_spec *s)
{
	if (!s)
		return;
	enpu_ydoc_free(s->doc);
	for (int i = 0; i < s->n_ops; i++) {
		free(s->ops[i].in);
		free(s->ops[i].out);
	}
	free(s->ops);
	free(s->comps);
	free(s->inputs);
	free(s->weights);
	free(s->outputs);
	json_object_put(s->targets);
	free(s->label);
	free(s);
}

const char *enpu_spec_name(const enpu_spec *s)
{
	return s->name.s;
}

const char *enpu_spec_label(const enpu_spec *s)
{
	return s->label;
}

const char *enpu_spec_backend(const enpu_spec *s)
{
	return s->backend.s ? s->backend.s : "cpu_ref";
}

int enpu_spec_n_ops(const enpu_spec *s)
{
	return s->n_ops;
}

int enpu_spec_n_components(const enpu_spec *s)
{
	return s->n_comps;
}

struct json_object *enpu_spec_target(const enpu_spec *s, const char *backend)
{
	json_object *v;

	if (!s->targets || !backend || !json_object_object_get_ex(s->targets, backend, &v))
		return NULL;
	return v;
}

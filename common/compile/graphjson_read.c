/* graphjson_read.c: graph.json -> enpu_graph. Reading trusts nothing:
 * every field is type checked, every reference resolved, every shape rule
 * re-run, so a tampered graph.json is ENPU_E_ARTIFACT and never a crash.
 * Also the check of graph.json's lowerings against the backend's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "graphjson.h"
#include "backend.h"

/* ---- reading ------------------------------------------------------------ */


static int parse_float(json_object *v, float *out)
{
	if (json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)) {
		*out = (float)json_object_get_double(v);
		return 0;
	}
	if (json_object_is_type(v, json_type_string)) {
		const char *s = json_object_get_string(v);
		if (strcmp(s, "inf") == 0) { *out = INFINITY; return 0; }
		if (strcmp(s, "-inf") == 0) { *out = -INFINITY; return 0; }
		if (strcmp(s, "nan") == 0) { *out = NAN; return 0; }
	}
	return -1;
}

static int parse_int(json_object *v, int64_t lo, int64_t hi, int64_t *out)
{
	int64_t x;

	if (!json_object_is_type(v, json_type_int))
		return -1;
	x = json_object_get_int64(v);
	if (x < lo || x > hi)
		return -1;
	*out = x;
	return 0;
}

/* A LIST or SIZES attribute: at most cap int64s into vals, *n of them. */
static int parse_i64s(json_object *v, size_t cap, int *n, int64_t *vals)
{
	size_t len;

	if (!json_object_is_type(v, json_type_array) || (len = json_object_array_length(v)) > cap)
		return -1;
	for (size_t i = 0; i < len; i++)
		if (parse_int(json_object_array_get_idx(v, i), INT64_MIN, INT64_MAX, &vals[i]) < 0)
			return -1;
	*n = (int)len;
	return 0;
}

/* One attribute from JSON into a; -1 when the value has the wrong type. */
static int parse_attr(const enpu_attrdef *ad, json_object *v, enpu_attrs *a)
{
	char *base = (char *)a + ad->offset;
	int64_t x;
	size_t n;

	switch (ad->type) {
	case ENPU_ATTR_FLOAT:
		return parse_float(v, (float *)base);
	case ENPU_ATTR_INT:
		if (parse_int(v, INT32_MIN, INT32_MAX, &x) < 0)
			return -1;
		*(int *)base = (int)x;
		return 0;
	case ENPU_ATTR_BOOL01:
		if (parse_int(v, 0, 1, &x) < 0)
			return -1;
		*(int *)base = (int)x;
		return 0;
	case ENPU_ATTR_INTS:
		if (!json_object_is_type(v, json_type_array) ||
		    json_object_array_length(v) != (size_t)ad->count)
			return -1;
		for (int i = 0; i < ad->count; i++) {
			if (parse_int(json_object_array_get_idx(v, (size_t)i), INT32_MIN, INT32_MAX, &x) < 0)
				return -1;
			((int *)base)[i] = (int)x;
		}
		return 0;
	case ENPU_ATTR_DIMS:
		if (!json_object_is_type(v, json_type_array) ||
		    (n = json_object_array_length(v)) > ENPU_MAX_DIMS)
			return -1;
		for (size_t i = 0; i < n; i++) {
			if (parse_int(json_object_array_get_idx(v, i), INT64_MIN, INT64_MAX, &x) < 0)
				return -1;
			a->shape[i] = x;
		}
		a->n_shape = (int)n;
		return 0;
	case ENPU_ATTR_PERM:
		if (!json_object_is_type(v, json_type_array) ||
		    (n = json_object_array_length(v)) > ENPU_MAX_DIMS)
			return -1;
		for (size_t i = 0; i < n; i++) {
			if (parse_int(json_object_array_get_idx(v, i), INT32_MIN, INT32_MAX, &x) < 0)
				return -1;
			a->perm[i] = (int)x;
		}
		a->n_perm = (int)n;
		return 0;
	case ENPU_ATTR_FLOATS:
		if (!json_object_is_type(v, json_type_array) ||
		    json_object_array_length(v) != (size_t)ad->count)
			return -1;
		for (int i = 0; i < ad->count; i++)
			if (parse_float(json_object_array_get_idx(v, (size_t)i), (float *)base + i) < 0)
				return -1;
		return 0;
	case ENPU_ATTR_LIST:
		return parse_i64s(v, ad->count < ENPU_MAX_LIST ? (size_t)ad->count : ENPU_MAX_LIST,
				  &((enpu_ilist *)base)->n, ((enpu_ilist *)base)->v);
	case ENPU_ATTR_SIZES:
		return parse_i64s(v, ad->count < ENPU_MAX_SPLIT ? (size_t)ad->count : ENPU_MAX_SPLIT,
				  &((enpu_sizes *)base)->n, ((enpu_sizes *)base)->v);
	case ENPU_ATTR_ENUM:
		if (!json_object_is_type(v, json_type_string) || !ad->choices)
			return -1;
		for (int i = 0; ad->choices[i]; i++)
			if (strcmp(ad->choices[i], json_object_get_string(v)) == 0) {
				*(int *)base = i;
				return 0;
			}
		return -1;
	}
	return -1;
}

static int parse_shape(json_object *arr, const enpu_limits *lim, enpu_shape *s)
{
	size_t n = json_object_array_length(arr);
	uint64_t numel;
	int64_t x;

	if (n > ENPU_MAX_DIMS)
		return -1;
	s->ndim = (int)n;
	for (size_t i = 0; i < n; i++) {
		if (parse_int(json_object_array_get_idx(arr, i), 0, INT64_MAX, &x) < 0)
			return -1;
		s->dim[i] = x;
	}
	if (enpu_shape_numel(s, &numel) < 0 || numel > lim->max_tensor_elems ||
	    numel > lim->max_tensor_bytes / sizeof(float))
		return -1;
	return 0;
}

/* name -> index maps are json-c objects: a hash table we already link. */
static int map_get(json_object *map, const char *name)
{
	json_object *v;
	return json_object_object_get_ex(map, name, &v) ? json_object_get_int(v) : -1;
}

static int parse_names(json_object *arr, json_object *tmap, int **idx, int *n)
{
	size_t len = json_object_array_length(arr);

	*idx = malloc(sizeof(int) * (len ? len : 1));
	if (!*idx)
		return -1;
	*n = (int)len;
	for (size_t i = 0; i < len; i++) {
		json_object *s = json_object_array_get_idx(arr, i);
		if (!json_object_is_type(s, json_type_string) ||
		    ((*idx)[i] = map_get(tmap, json_object_get_string(s))) < 0)
			return -1;
	}
	return 0;
}

/* The reader's state: the graph being built, name -> index maps of its
 * tensors, components and ops, and where errors go. */
typedef struct rd {
	enpu_graph *g;
	json_object *tmap, *cmap, *omap;
	const char *label;
	const enpu_limits *lim;
	enpu_err *e;
} rd;

#define RBAD(...) return enpu_fail(r->e, ENPU_E_ARTIFACT, r->label, NULL, __VA_ARGS__)
#define RNOMEM() return enpu_fail(r->e, ENPU_E_NOMEM, r->label, NULL, "cannot load '%s'", r->label)

static int read_header(rd *r, json_object *root, char **weights)
{
	json_object *v;
	int64_t iv;

	if (!(v = enpu_json_field(root, "format", json_type_string, r->label, "", r->e)))
		return -1;
	if (strcmp(json_object_get_string(v), "eulernpu-graph") != 0)
		RBAD("field 'format' is not \"eulernpu-graph\"");
	if (!(v = enpu_json_field(root, "version", json_type_int, r->label, "", r->e)) ||
	    enpu_json_int(v, 1, 1, r->label, "field 'version'", &iv, r->e) < 0)
		return -1;
	if (!(v = enpu_json_field(root, "name", json_type_string, r->label, "", r->e)))
		return -1;
	if (!(r->g->name = strdup(json_object_get_string(v))))
		RNOMEM();
	if (!(v = enpu_json_field(root, "backend", json_type_string, r->label, "", r->e)))
		return -1;
	if (enpu_backend_parse(json_object_get_string(v)) < 0)
		RBAD("field 'backend': unknown backend '%s'", json_object_get_string(v));
	if (!(r->g->backend = strdup(json_object_get_string(v))))
		RNOMEM();
	if (!(v = enpu_json_field(root, "weights", json_type_string, r->label, "", r->e)))
		return -1;
	if (!(*weights = strdup(json_object_get_string(v))))
		RNOMEM();
	if (!(v = enpu_json_field(root, "layout", json_type_string, r->label, "", r->e)))
		return -1;
	if (strcmp(json_object_get_string(v), "spec") != 0)
		RBAD("field 'layout': unknown weights layout '%s'", json_object_get_string(v));
	return 0;
}

static int read_components(rd *r, json_object *root)
{
	enpu_graph *g = r->g;
	json_object *arr;
	size_t n;

	if (!(arr = enpu_json_field(root, "components", json_type_array, r->label, "", r->e)))
		return -1;
	n = json_object_array_length(arr);
	if (n > r->lim->max_ops + 1)
		RBAD("field 'components' has too many entries");
	if (!(g->components = calloc(n ? n : 1, sizeof(char *))))
		RNOMEM();
	for (size_t i = 0; i < n; i++) {
		json_object *s = json_object_array_get_idx(arr, i);
		if (!json_object_is_type(s, json_type_string))
			RBAD("field 'components' entry %zu must be a string", i);
		if (map_get(r->cmap, json_object_get_string(s)) >= 0)
			RBAD("component '%s' is listed twice", json_object_get_string(s));
		json_object_object_add(r->cmap, json_object_get_string(s), json_object_new_int((int)i));
		if (!(g->components[i] = strdup(json_object_get_string(s))))
			RNOMEM();
		g->n_components = (int)i + 1;
	}
	return 0;
}

static int read_tensor(rd *r, json_object *o, size_t i)
{
	enpu_irtensor *t = &r->g->tensors[i];
	json_object *v;
	char ctx[48];
	const char *kind;

	snprintf(ctx, sizeof(ctx), "tensor %zu: ", i);
	t->producer = t->last_use = -1;
	if (!(v = enpu_json_field(o, "name", json_type_string, r->label, ctx, r->e)))
		return -1;
	if (map_get(r->tmap, json_object_get_string(v)) >= 0)
		RBAD("tensor '%s' is listed twice", json_object_get_string(v));
	if (!(t->name = strdup(json_object_get_string(v))))
		RNOMEM();
	r->g->n_tensors = (int)i + 1;
	json_object_object_add(r->tmap, t->name, json_object_new_int((int)i));
	snprintf(ctx, sizeof(ctx), "tensor '%.30s': ", t->name);
	if (!(v = enpu_json_field(o, "dtype", json_type_string, r->label, ctx, r->e)))
		return -1;
	if ((t->dtype = enpu_dtype_parse(json_object_get_string(v))) == ENPU_DT_INVALID)
		RBAD("%sunsupported dtype '%s'", ctx, json_object_get_string(v));
	if (!(v = enpu_json_field(o, "shape", json_type_array, r->label, ctx, r->e)))
		return -1;
	if (parse_shape(v, r->lim, &t->shape) < 0)
		RBAD("%sfield 'shape' is not a valid shape within the limits", ctx);
	if (!(v = enpu_json_field(o, "kind", json_type_string, r->label, ctx, r->e)))
		return -1;
	kind = json_object_get_string(v);
	if (strcmp(kind, "input") == 0)
		t->kind = ENPU_TK_INPUT;
	else if (strcmp(kind, "weight") == 0)
		t->kind = ENPU_TK_WEIGHT;
	else if (strcmp(kind, "intermediate") == 0)
		t->kind = ENPU_TK_INTERMEDIATE;
	else
		RBAD("%sunknown kind '%s'", ctx, kind);
	if (t->dtype == ENPU_DT_I64 && t->kind != ENPU_TK_WEIGHT)
		RBAD("%sonly weights may be %s", ctx, enpu_dtype_name(t->dtype));
	if (!(v = enpu_json_field(o, "output", json_type_boolean, r->label, ctx, r->e)))
		return -1;
	t->is_output = json_object_get_boolean(v);
	return 0;
}

static int read_tensors(rd *r, json_object *root)
{
	json_object *arr;
	size_t n;

	if (!(arr = enpu_json_field(root, "tensors", json_type_array, r->label, "", r->e)))
		return -1;
	n = json_object_array_length(arr);
	if (n > (r->lim->max_ops + 1) * (ENPU_MAX_OP_INPUTS + 1) || n > INT32_MAX / 2)
		RBAD("field 'tensors' has too many entries");
	if (!(r->g->tensors = calloc(n ? n : 1, sizeof(*r->g->tensors))))
		RNOMEM();
	for (size_t i = 0; i < n; i++)
		if (read_tensor(r, json_object_array_get_idx(arr, i), i) < 0)
			return -1;
	return 0;
}

/* inputs and outputs: each input/output tensor listed exactly once */
static int read_io(rd *r, json_object *root)
{
	enpu_graph *g = r->g;
	json_object *arr;
	int n_in = 0, n_outp = 0;

	if (!(arr = enpu_json_field(root, "inputs", json_type_array, r->label, "", r->e)))
		return -1;
	if (parse_names(arr, r->tmap, &g->inputs, &g->n_inputs) < 0)
		RBAD("field 'inputs' names an unknown tensor");
	if (!(arr = enpu_json_field(root, "outputs", json_type_array, r->label, "", r->e)))
		return -1;
	if (parse_names(arr, r->tmap, &g->outputs, &g->n_outputs) < 0)
		RBAD("field 'outputs' names an unknown tensor");
	for (int i = 0; i < g->n_tensors; i++) {
		n_in += g->tensors[i].kind == ENPU_TK_INPUT;
		n_outp += g->tensors[i].is_output != 0;
	}
	if (n_in != g->n_inputs)
		RBAD("field 'inputs' does not list every input tensor once");
	if (n_outp != g->n_outputs)
		RBAD("field 'outputs' does not list every output tensor once");
	for (int i = 0; i < g->n_inputs; i++) {
		if (g->tensors[g->inputs[i]].kind != ENPU_TK_INPUT)
			RBAD("input '%s' is not an input tensor", g->tensors[g->inputs[i]].name);
		for (int j = 0; j < i; j++)
			if (g->inputs[j] == g->inputs[i])
				RBAD("input '%s' is listed twice", g->tensors[g->inputs[i]].name);
	}
	for (int i = 0; i < g->n_outputs; i++) {
		if (!g->tensors[g->outputs[i]].is_output)
			RBAD("output '%s' is not marked as an output", g->tensors[g->outputs[i]].name);
		for (int j = 0; j < i; j++)
			if (g->outputs[j] == g->outputs[i])
				RBAD("output '%s' is listed twice", g->tensors[g->outputs[i]].name);
	}
	return 0;
}

/* An op's attributes: exactly the op's table, every one present. */
static int read_attrs(rd *r, enpu_irop *op, json_object *at, const char *ctx)
{
	int n_def = 0, bit = 0;

	enpu_attrs_defaults(op->def, &op->attrs);
	for (const enpu_attrdef *ad = op->def->attrs; ad->name; ad++, bit++) {
		json_object *av;
		if (!json_object_object_get_ex(at, ad->name, &av)) {
			if (enpu_attr_since(op->def, bit) != op->def->since)
				continue;   /* v2's on a v1 op: absent = default */
			RBAD("%sattribute '%s' is missing", ctx, ad->name);
		}
		n_def++;
		if (parse_attr(ad, av, &op->attrs) < 0)
			RBAD("%sattribute '%s' has an invalid value", ctx, ad->name);
		if (!((ad->type == ENPU_ATTR_DIMS && op->attrs.n_shape == 0) ||
		      (ad->type == ENPU_ATTR_PERM && op->attrs.n_perm == 0) ||
		      (ad->type == ENPU_ATTR_LIST &&
		       ((const enpu_ilist *)((const char *)&op->attrs + ad->offset))->n == 0) ||
		      (ad->type == ENPU_ATTR_SIZES &&
		       ((const enpu_sizes *)((const char *)&op->attrs + ad->offset))->n == 0)))
			op->attrs.set |= 1u << bit;
	}
	if (json_object_object_length(at) != n_def)
		RBAD("%sattrs holds attributes that operator '%s' does not have", ctx, op->def->name);
	return 0;
}

/* An op's inputs (produced by then, of the dtypes its row says) and its
 * outputs (as many as the row says, intermediates not produced yet); in_sh
 * gets the inputs' shapes. */
static int read_op_io(rd *r, enpu_irop *op, json_object *ins, json_object *outs,
		      const char *ctx, enpu_shape *in_sh)
{
	enpu_graph *g = r->g;
	size_t nin = json_object_array_length(ins), nout = json_object_array_length(outs);
	int max_in = op->def->max_in < 0 ? ENPU_MAX_OP_INPUTS : op->def->max_in;
	enpu_irtensor *t;
	enpu_dtype dt[ENPU_MAX_OP_INPUTS], odt;
	int bad;
	char why[400];

	if (nin < (size_t)op->def->min_in || nin > (size_t)max_in || nin > ENPU_MAX_OP_INPUTS)
		RBAD("%shas %zu inputs, %s takes %d to %d", ctx, nin, op->def->name,
		     op->def->min_in, max_in);
	if (parse_names(ins, r->tmap, &op->in, &op->n_in) < 0)
		RBAD("%sfield 'in' names an unknown tensor", ctx);
	for (int j = 0; j < op->n_in; j++) {
		t = &g->tensors[op->in[j]];
		if (t->kind == ENPU_TK_INTERMEDIATE && t->producer < 0)
			RBAD("%sreads tensor '%s' before it is produced", ctx, t->name);
		if ((t->dtype == ENPU_DT_I64) != (j < 32 && (op->def->int64_in >> j & 1)))
			RBAD("%sreads tensor '%s' of dtype %s as input %d", ctx, t->name,
			     enpu_dtype_name(t->dtype), j + 1);
		in_sh[j] = t->shape;
		dt[j] = t->dtype;
	}
	if (enpu_op_out_dtype(op->def, dt, op->n_in, NULL, &odt, &bad, why, sizeof(why)) < 0)
		RBAD("%s%s", ctx, why);
	if (nout < 1 || nout > ENPU_MAX_OP_OUTPUTS ||
	    (op->def->n_out >= 0 && nout != (size_t)op->def->n_out))
		RBAD("%sfield 'out' names %zu tensors, %s writes %d", ctx, nout, op->def->name,
		     op->def->n_out);
	if (parse_names(outs, r->tmap, &op->out, &op->n_out) < 0)
		RBAD("%sfield 'out' names an unknown tensor", ctx);
	for (int j = 0; j < op->n_out; j++) {
		t = &g->tensors[op->out[j]];
		if (t->kind != ENPU_TK_INTERMEDIATE)
			RBAD("%swrites '%s', which is not an intermediate", ctx, t->name);
		if (t->producer >= 0)
			RBAD("%swrites '%s', which op '%s' already produced", ctx, t->name,
			     g->ops[t->producer].name);
		if (t->dtype != odt)
			RBAD("%swrites '%s' as %s, its type rule gives %s", ctx, t->name,
			     enpu_dtype_name(t->dtype), enpu_dtype_name(odt));
		for (int i = 0; i < j; i++)
			if (op->out[i] == op->out[j])
				RBAD("%swrites '%s' twice", ctx, t->name);
	}
	return 0;
}

/* Op k, in schedule order: it reads only tensors that exist by then, and
 * its shape rule gives back exactly the recorded output shape. Its kernel
 * and lowering are the artifact loader's to check against the backend's
 * plan (enpu_graph_check_lowerings). */
static int read_op(rd *r, json_object *o, size_t k)
{
	enpu_graph *g = r->g;
	enpu_irop *op = &g->ops[k];
	json_object *v, *ins, *outs, *at, *low;
	enpu_shape in_sh[ENPU_MAX_OP_INPUTS], out_sh[ENPU_MAX_OP_OUTPUTS];
	char ctx[80], why[256], want[128], got[128];

	snprintf(ctx, sizeof(ctx), "op %zu: ", k);
	if (!(v = enpu_json_field(o, "name", json_type_string, r->label, ctx, r->e)))
		return -1;
	if (map_get(r->omap, json_object_get_string(v)) >= 0)
		RBAD("op '%s' is listed twice", json_object_get_string(v));
	if (!(op->name = strdup(json_object_get_string(v))))
		RNOMEM();
	g->n_ops = (int)k + 1;
	json_object_object_add(r->omap, op->name, json_object_new_int((int)k));
	snprintf(ctx, sizeof(ctx), "op '%.60s': ", op->name);
	if (!(v = enpu_json_field(o, "op", json_type_string, r->label, ctx, r->e)))
		return -1;
	if (!(op->def = enpu_op_by_name(json_object_get_string(v))))
		RBAD("%sunknown operator '%s'", ctx, json_object_get_string(v));
	if (!(v = enpu_json_field(o, "component", json_type_string, r->label, ctx, r->e)))
		return -1;
	if ((op->component = map_get(r->cmap, json_object_get_string(v))) < 0)
		RBAD("%sunknown component '%s'", ctx, json_object_get_string(v));
	if (!(ins = enpu_json_field(o, "in", json_type_array, r->label, ctx, r->e)) ||
	    !(outs = enpu_json_field(o, "out", json_type_array, r->label, ctx, r->e)) ||
	    !(at = enpu_json_field(o, "attrs", json_type_object, r->label, ctx, r->e)) ||
	    !(v = enpu_json_field(o, "kernel", json_type_string, r->label, ctx, r->e)) ||
	    !(low = enpu_json_field(o, "lowering", json_type_string, r->label, ctx, r->e)))
		return -1;
	if (read_op_io(r, op, ins, outs, ctx, in_sh) < 0 || read_attrs(r, op, at, ctx) < 0)
		return -1;
	why[0] = '\0';
	if (op->def->shape(&op->attrs, in_sh, op->n_in, out_sh, op->n_out, why, sizeof(why)) < 0)
		RBAD("%sshape rule of '%s' fails: %s", ctx, op->def->name, why);
	for (int j = 0; j < op->n_out; j++) {
		enpu_irtensor *t = &g->tensors[op->out[j]];

		if (!enpu_shape_eq(&out_sh[j], &t->shape))
			RBAD("%soutput '%s' is recorded as %s but the shape rule gives %s", ctx,
			     t->name, enpu_shape_str(&t->shape, got, sizeof(got)),
			     enpu_shape_str(&out_sh[j], want, sizeof(want)));
		t->producer = (int)k;
	}
	for (int j = 0; j < op->n_in; j++)
		g->tensors[op->in[j]].last_use = (int)k;
	return 0;
}

static int read_ops(rd *r, json_object *root)
{
	json_object *arr;
	size_t n;

	if (!(arr = enpu_json_field(root, "ops", json_type_array, r->label, "", r->e)))
		return -1;
	n = json_object_array_length(arr);
	if (n > r->lim->max_ops)
		RBAD("field 'ops' has %zu entries, more than the limit of %llu", n,
		     (unsigned long long)r->lim->max_ops);
	if (!(r->g->ops = calloc(n ? n : 1, sizeof(*r->g->ops))))
		RNOMEM();
	for (size_t k = 0; k < n; k++)
		if (read_op(r, json_object_array_get_idx(arr, k), k) < 0)
			return -1;
	for (int i = 0; i < r->g->n_tensors; i++)
		if (r->g->tensors[i].kind == ENPU_TK_INTERMEDIATE && r->g->tensors[i].producer < 0)
			RBAD("tensor '%s' is never produced", r->g->tensors[i].name);
	return 0;
}

int enpu_graph_from_root(json_object *root, const char *label, const enpu_limits *lim,
			 enpu_graph **out, char **weights, enpu_err *e)
{
	rd r = {NULL, NULL, NULL, NULL, label, lim ? lim : enpu_limits_default(), e};
	int rc = -1;

	*out = NULL;
	*weights = NULL;
	r.tmap = json_object_new_object();
	r.cmap = json_object_new_object();
	r.omap = json_object_new_object();
	r.g = calloc(1, sizeof(*r.g));
	if (!r.tmap || !r.cmap || !r.omap || !r.g)
		enpu_fail(e, ENPU_E_NOMEM, label, NULL, "cannot load '%s'", label);
	else if (read_header(&r, root, weights) == 0 && read_components(&r, root) == 0 &&
		 read_tensors(&r, root) == 0 && read_io(&r, root) == 0 && read_ops(&r, root) == 0)
		rc = 0;
	json_object_put(r.tmap);
	json_object_put(r.cmap);
	json_object_put(r.omap);
	if (rc < 0) {
		enpu_graph_free(r.g);
		free(*weights);
		*weights = NULL;
		return -1;
	}
	*out = r.g;
	return 0;
}

int enpu_graph_from_json(const char *text, size_t len, const char *label,
			 const enpu_limits *lim, enpu_graph **out, char **weights,
			 enpu_err *e)
{
	json_object *root;
	int rc;

	*out = NULL;
	*weights = NULL;
	if (!(root = enpu_json_parse(text, len, label, e)))
		return -1;
	rc = enpu_graph_from_root(root, label, lim, out, weights, e);
	json_object_put(root);
	return rc;
}

int enpu_graph_check_lowerings(const enpu_graph *g, const void *st, json_object *root,
			       const char *label, enpu_err *e)
{
	const enpu_backend_def *def = enpu_backend_by_name(g->backend);
	json_object *ops;

	if (!def)
		return enpu_fail(e, ENPU_E_ARTIFACT, label, NULL, "unknown backend '%s'",
				 g->backend ? g->backend : "?");
	if (!json_object_object_get_ex(root, "ops", &ops) ||
	    !json_object_is_type(ops, json_type_array) ||
	    json_object_array_length(ops) != (size_t)g->n_ops)
		return enpu_fail(e, ENPU_E_ARTIFACT, label, NULL,
				 "field 'ops' does not match the graph");
	for (int k = 0; k < g->n_ops; k++) {
		json_object *o = json_object_array_get_idx(ops, (size_t)k), *kv = NULL, *lv = NULL;
		char kname[128];
		const char *low = def->lowering(g, st, k, kname, sizeof(kname)), *ks, *ls;

		json_object_object_get_ex(o, "kernel", &kv);
		json_object_object_get_ex(o, "lowering", &lv);
		ks = json_object_is_type(kv, json_type_string) ? json_object_get_string(kv) : "";
		ls = json_object_is_type(lv, json_type_string) ? json_object_get_string(lv) : "";
		if (strcmp(ks, kname) != 0 || strcmp(ls, low) != 0)
			return enpu_fail(e, ENPU_E_ARTIFACT, label, "recompile the artifact",
					 "op '%s': kernel '%.64s' and lowering '%.32s' are not %s's "
					 "(%s, %s)", g->ops[k].name, ks, ls, def->name, kname, low);
	}
	return 0;
}

/* graphjson.c: enpu_graph -> graph.json, and the outputs' JSON that
 * report.json and a loaded artifact share. The reader is graphjson_read.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "graphjson.h"
#include "backend.h"

/* ---- writing ------------------------------------------------------------ */

static const char *kind_name(enpu_tkind k)
{
	switch (k) {
	case ENPU_TK_INPUT: return "input";
	case ENPU_TK_WEIGHT: return "weight";
	case ENPU_TK_INTERMEDIATE: return "intermediate";
	}
	return "?";
}

/* A float as the shortest decimal that reads back (through strtod then a
 * cast, which is what json-c and the loader do) to the same bits; non-finite
 * values as the strings "inf", "-inf", "nan" (JSON has no such numbers). */
static json_object *float_json(float f)
{
	char s[48];

	if (isnan(f))
		return json_object_new_string("nan");
	if (isinf(f))
		return json_object_new_string(f > 0 ? "inf" : "-inf");
	for (int prec = 6; prec <= 17; prec++) {
		snprintf(s, sizeof(s), "%.*g", prec, (double)f);
		float back = (float)strtod(s, NULL);
		if (memcmp(&back, &f, sizeof(f)) == 0)
			break;
	}
	if (!strpbrk(s, ".e"))
		strcat(s, ".0");   /* stays a JSON double; keeps the sign of -0.0 */
	return json_object_new_double_s((double)f, s);
}

static json_object *ints_json(const int *v, int n)
{
	json_object *a = json_object_new_array();
	for (int i = 0; a && i < n; i++)
		json_object_array_add(a, json_object_new_int(v[i]));
	return a;
}

/* A LIST or SIZES attribute: n int64s (at most cap). */
static json_object *i64s_json(const int64_t *v, int n, int cap)
{
	json_object *arr = json_object_new_array();
	for (int i = 0; arr && i < n && i < cap; i++)
		json_object_array_add(arr, json_object_new_int64(v[i]));
	return arr;
}

static json_object *attr_json(const enpu_attrdef *ad, const enpu_attrs *a)
{
	const char *base = (const char *)a + ad->offset;

	switch (ad->type) {
	case ENPU_ATTR_FLOAT:
		return float_json(*(const float *)base);
	case ENPU_ATTR_INT:
	case ENPU_ATTR_BOOL01:
		return json_object_new_int(*(const int *)base);
	case ENPU_ATTR_INTS:
		return ints_json((const int *)base, ad->count);
	case ENPU_ATTR_DIMS: {
		json_object *arr = json_object_new_array();
		for (int i = 0; arr && i < a->n_shape && i < ENPU_MAX_DIMS; i++)
			json_object_array_add(arr, json_object_new_int64(a->shape[i]));
		return arr;
	}
	case ENPU_ATTR_PERM:
		return ints_json(a->perm, a->n_perm < ENPU_MAX_DIMS ? a->n_perm : ENPU_MAX_DIMS);
	case ENPU_ATTR_FLOATS: {
		json_object *arr = json_object_new_array();
		for (int i = 0; arr && i < ad->count; i++)
			json_object_array_add(arr, float_json(((const float *)base)[i]));
		return arr;
	}
	case ENPU_ATTR_LIST:
		return i64s_json(((const enpu_ilist *)base)->v, ((const enpu_ilist *)base)->n,
				 ENPU_MAX_LIST);
	case ENPU_ATTR_SIZES:
		return i64s_json(((const enpu_sizes *)base)->v, ((const enpu_sizes *)base)->n,
				 ENPU_MAX_SPLIT);
	case ENPU_ATTR_ENUM: {
		int v = *(const int *)base, n = 0;
		while (ad->choices && ad->choices[n])
			n++;
		return json_object_new_string(v >= 0 && v < n ? ad->choices[v] : "?");
	}
	}
	return NULL;
}

static json_object *names_json(const enpu_graph *g, const int *idx, int n)
{
	json_object *a = json_object_new_array();
	for (int i = 0; a && i < n; i++)
		json_object_array_add(a, json_object_new_string(g->tensors[idx[i]].name));
	return a;
}

/* graph.json's "tensors": one object each. NULL when out of memory. */
static json_object *tensors_json(const enpu_graph *g)
{
	json_object *arr = json_object_new_array();

	for (int i = 0; arr && i < g->n_tensors; i++) {
		const enpu_irtensor *t = &g->tensors[i];
		json_object *o = json_object_new_object(), *sh = json_object_new_array();
		if (!o || !sh) {
			json_object_put(o);
			json_object_put(sh);
			json_object_put(arr);
			return NULL;
		}
		json_object_object_add(o, "name", json_object_new_string(t->name));
		json_object_object_add(o, "dtype", json_object_new_string(enpu_dtype_name(t->dtype)));
		for (int d = 0; d < t->shape.ndim; d++)
			json_object_array_add(sh, json_object_new_int64(t->shape.dim[d]));
		json_object_object_add(o, "shape", sh);
		json_object_object_add(o, "kind", json_object_new_string(kind_name(t->kind)));
		json_object_object_add(o, "output", json_object_new_boolean(t->is_output));
		json_object_array_add(arr, o);
	}
	return arr;
}

/* graph.json's "ops": each with its kernel and lowering by backend def
 * (plan state st). NULL when out of memory. */
static json_object *ops_json(const enpu_graph *g, const enpu_backend_def *def, const void *st)
{
	json_object *arr = json_object_new_array();
	char kname[128];
	const char *lowering;

	for (int k = 0; arr && k < g->n_ops; k++) {
		const enpu_irop *op = &g->ops[k];
		json_object *o = json_object_new_object(), *at = json_object_new_object();
		if (!o || !at) {
			json_object_put(o);
			json_object_put(at);
			json_object_put(arr);
			return NULL;
		}
		json_object_object_add(o, "name", json_object_new_string(op->name));
		json_object_object_add(o, "op", json_object_new_string(op->def->name));
		json_object_object_add(o, "component",
				       json_object_new_string(g->components[op->component]));
		json_object_object_add(o, "in", names_json(g, op->in, op->n_in));
		json_object_object_add(o, "out", names_json(g, op->out, op->n_out));
		/* an attribute spec v2 gave a v1 op is written only when it
		 * is not the default: v1 models keep their graph.json */
		for (int i = 0; op->def->attrs[i].name; i++)
			if (enpu_attr_since(op->def, i) == op->def->since ||
			    !enpu_attr_is_default(op->def, i, &op->attrs))
				json_object_object_add(at, op->def->attrs[i].name,
						       attr_json(&op->def->attrs[i], &op->attrs));
		json_object_object_add(o, "attrs", at);
		lowering = def->lowering(g, st, k, kname, sizeof(kname));
		json_object_object_add(o, "kernel", json_object_new_string(kname));
		json_object_object_add(o, "lowering", json_object_new_string(lowering));
		json_object_array_add(arr, o);
	}
	return arr;
}

json_object *enpu_graph_outputs_json(const enpu_graph *g)
{
	json_object *outs = json_object_new_array();
	int bad = !outs;

	for (int i = 0; !bad && i < g->n_outputs; i++) {
		const enpu_irtensor *t = &g->tensors[g->outputs[i]];
		json_object *o = json_object_new_object(), *sh = json_object_new_array();

		if (!o || !sh) {
			json_object_put(o);
			json_object_put(sh);
			bad = 1;
			break;
		}
		for (int d = 0; d < t->shape.ndim; d++)
			enpu_json_push(sh, json_object_new_int64(t->shape.dim[d]), &bad);
		enpu_json_put(o, "name", json_object_new_string(t->name), &bad);
		enpu_json_put(o, "shape", sh, &bad);
		enpu_json_push(outs, o, &bad);
	}
	if (bad) {
		json_object_put(outs);
		return NULL;
	}
	return outs;
}

int enpu_graph_to_json(const enpu_graph *g, const char *weights, const char *layout,
		       const void *st, enpu_buf *out, enpu_err *e)
{
	const enpu_backend_def *def = enpu_backend_by_name(g->backend);
	json_object *root = json_object_new_object(), *arr;
	int rc;

	if (!def) {
		json_object_put(root);
		return enpu_fail(e, ENPU_E_INTERNAL, "graph.json", NULL, "graph '%s' has no backend",
				 g->name);
	}
	if (!root)
		goto nomem;
	json_object_object_add(root, "format", json_object_new_string("eulernpu-graph"));
	json_object_object_add(root, "version", json_object_new_int(1));
	json_object_object_add(root, "name", json_object_new_string(g->name));
	json_object_object_add(root, "backend", json_object_new_string(g->backend));
	json_object_object_add(root, "weights", json_object_new_string(weights));
	json_object_object_add(root, "layout", json_object_new_string(layout));
	json_object_object_add(root, "inputs", names_json(g, g->inputs, g->n_inputs));
	json_object_object_add(root, "outputs", names_json(g, g->outputs, g->n_outputs));
	if (!(arr = json_object_new_array()))
		goto nomem;
	json_object_object_add(root, "components", arr);
	for (int i = 0; i < g->n_components; i++)
		json_object_array_add(arr, json_object_new_string(g->components[i]));
	if (!(arr = tensors_json(g)))
		goto nomem;
	json_object_object_add(root, "tensors", arr);
	if (!(arr = ops_json(g, def, st)))
		goto nomem;
	json_object_object_add(root, "ops", arr);
	rc = enpu_json_dump(root, out, e);
	json_object_put(root);
	return rc;
nomem:
	json_object_put(root);
	return enpu_fail(e, ENPU_E_NOMEM, "graph.json", NULL, "cannot build graph.json");
}

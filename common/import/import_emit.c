/* import_emit.c: emitting one spec op (imp_emit, import_int.h). The
 * attributes a mapping gives by the contract's names are resolved through
 * the op's own attribute table (ops.c) into an enpu_attrs, so this file
 * knows no op's fields; the op's shape rule gives the output shapes; when
 * every input is a float32 constant the op's reference kernel computes
 * the outputs at import time (folding: the bits cpu_ref would give) and
 * no spec op is written. Otherwise constants it reads become weights
 * (float32; int64 for gather's indices, which are never folded). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "import_int.h"

static imp_attr *ia_add(imp_attrs *a, const char *name, int type)
{
	imp_attr *t;

	for (int k = 0; k < a->n; k++)
		if (!strcmp(a->a[k].name, name))
			return memset(&a->a[k], 0, sizeof(a->a[k])), a->a[k].name = name,
			       a->a[k].type = type, &a->a[k];
	if (a->n == IMP_MAX_ATTRS)
		return NULL;
	t = &a->a[a->n++];
	memset(t, 0, sizeof(*t));
	t->name = name;
	t->type = type;
	return t;
}

void ia_int(imp_attrs *a, const char *name, int64_t v)
{
	imp_attr *t = ia_add(a, name, IA_INT);
	if (t)
		t->i = v;
}

void ia_float(imp_attrs *a, const char *name, float v)
{
	imp_attr *t = ia_add(a, name, IA_FLOAT);
	if (t)
		t->f = v;
}

void ia_str(imp_attrs *a, const char *name, const char *v)
{
	imp_attr *t = ia_add(a, name, IA_STR);
	if (t)
		t->s = v;
}

void ia_ints(imp_attrs *a, const char *name, const int64_t *v, int n)
{
	imp_attr *t = ia_add(a, name, IA_INTS);
	if (!t)
		return;
	t->n = n < ENPU_MAX_LIST ? n : ENPU_MAX_LIST;
	for (int k = 0; k < t->n; k++)
		t->v[k] = v[k];
}

void ia_floats(imp_attrs *a, const char *name, const float *v, int n)
{
	imp_attr *t = ia_add(a, name, IA_FLOATS);
	if (!t)
		return;
	t->n = n < ENPU_MAX_LIST ? n : ENPU_MAX_LIST;
	for (int k = 0; k < t->n; k++)
		t->fv[k] = v[k];
}

/* One attribute into the op's field by its table row; why on failure. */
static int set_attr(const enpu_attrdef *ad, const imp_attr *t, enpu_attrs *a, char *why, size_t wl)
{
	char *base = (char *)a + ad->offset;
	int scalar = t->type == IA_INT || t->type == IA_FLOAT;
	int list = t->type == IA_INTS;

	switch (ad->type) {
	case ENPU_ATTR_FLOAT:
		if (!scalar)
			break;
		*(float *)base = t->type == IA_FLOAT ? t->f : (float)t->i;
		return 0;
	case ENPU_ATTR_INT:
	case ENPU_ATTR_BOOL01:
		if (t->type != IA_INT || t->i < -(1LL << 31) || t->i >= (1LL << 31))
			break;
		*(int *)base = (int)t->i;
		return 0;
	case ENPU_ATTR_INTS:
		if (!list || t->n != ad->count)
			break;
		for (int k = 0; k < t->n; k++)
			((int *)base)[k] = (int)t->v[k];
		return 0;
	case ENPU_ATTR_DIMS:
		if (!list || t->n > ENPU_MAX_DIMS)
			break;
		a->n_shape = t->n;
		memcpy(a->shape, t->v, (size_t)t->n * sizeof(int64_t));
		return 0;
	case ENPU_ATTR_PERM:
		if (!list || t->n > ENPU_MAX_DIMS)
			break;
		a->n_perm = t->n;
		for (int k = 0; k < t->n; k++)
			a->perm[k] = (int)t->v[k];
		return 0;
	case ENPU_ATTR_ENUM:
		for (int k = 0; t->type == IA_STR && ad->choices[k]; k++)
			if (!strcmp(ad->choices[k], t->s)) {
				*(int *)base = k;
				return 0;
			}
		break;
	case ENPU_ATTR_FLOATS:
		if (t->type != IA_FLOATS || t->n != ad->count)
			break;
		memcpy(base, t->fv, (size_t)t->n * sizeof(float));
		return 0;
	case ENPU_ATTR_SIZES:
		if (!list || t->n > ad->count || t->n > ENPU_MAX_SPLIT)
			break;
		((enpu_sizes *)base)->n = t->n;
		memcpy(((enpu_sizes *)base)->v, t->v, (size_t)t->n * sizeof(int64_t));
		return 0;
	case ENPU_ATTR_LIST: {
		enpu_ilist *l = (enpu_ilist *)base;
		if (!list || t->n > ad->count)
			break;
		l->n = t->n;
		memcpy(l->v, t->v, (size_t)t->n * sizeof(int64_t));
		return 0;
	}
	}
	snprintf(why, wl, "attribute %s: a value spec v2 cannot express", t->name);
	return -1;
}

static int to_attrs(const enpu_opdef *d, const imp_attrs *at, enpu_attrs *a, char *why, size_t wl)
{
	enpu_attrs_defaults(d, a);
	for (int k = 0; at && k < at->n; k++) {
		int j;
		for (j = 0; d->attrs[j].name; j++)
			if (!strcmp(d->attrs[j].name, at->a[k].name))
				break;
		if (!d->attrs[j].name) {
			snprintf(why, wl, "spec op %s of this build has no attribute %s", d->name,
				 at->a[k].name);
			return -1;
		}
		if (set_attr(&d->attrs[j], &at->a[k], a, why, wl))
			return -1;
		a->set |= 1u << j;
	}
	return 0;
}

/* The kernel on constant inputs: the outputs become constants. */
static int run_kernel(imp_ctx *c, const enpu_opdef *d, const enpu_attrs *a, const int *in,
		      int n_in, const enpu_shape *os, const int *out, int n_out)
{
	enpu_view iv[64], ov[16];

	for (int k = 0; k < n_in; k++) {
		iv[k].shape = c->v[in[k]].shape;
		iv[k].data = c->v[in[k]].f;
		iv[k].dtype = ENPU_DT_F32;   /* only float32 constants fold */
	}
	for (int k = 0; k < n_out; k++) {
		if (imp_const_alloc(c, out[k], ENPU_ONNX_FLOAT, &os[k]))
			return -1;
		ov[k].shape = os[k];
		ov[k].data = c->v[out[k]].f;
		ov[k].dtype = ENPU_DT_F32;
	}
	if (d->kernel(a, iv, n_in, ov, n_out, NULL))
		return enpu_fail(c->e, ENPU_E_NOMEM, c->label, NULL, "out of memory folding a constant");
	return 0;
}

static int record(imp_ctx *c, const char *op, const int *in, int n_in, const imp_attrs *at,
		  const int *out, int n_out)
{
	imp_op *o;
	char base[300];
	const enpu_onnx_node *n = c->cur;

	if (c->nops == c->aops) {
		size_t na = c->aops ? 2 * c->aops : 64;
		imp_op *no = realloc(c->ops, na * sizeof(*no));
		if (!no)
			goto nomem;
		c->ops = no;
		c->aops = na;
	}
	o = &c->ops[c->nops];
	memset(o, 0, sizeof(*o));
	/* its name: the node's (scopes dropped but the component's), then _2, ... */
	{
		const char *p = n->name;
		int slashes = 0;
		for (const char *q = p; *q; q++)
			slashes += *q == '/';
		if (slashes >= 3) {
			p = strchr(p + (*p == '/'), '/');
		}
		if (!*p)
			p = n->op_type;
		if (c->cur_sub)
			snprintf(base, sizeof(base), "%.250s_%d", p, c->cur_sub + 1);
		else
			snprintf(base, sizeof(base), "%.250s", p);
	}
	c->cur_sub++;
	o->op = op;
	o->n_in = n_in;
	o->n_out = n_out;
	o->in = malloc(((size_t)n_in + 1) * sizeof(int));
	o->out = malloc(((size_t)n_out + 1) * sizeof(int));
	o->name = imp_unique(c, base);
	o->comp = c->cur_comp ? strdup(c->cur_comp) : NULL;
	c->nops++;
	if (!o->in || !o->out || !o->name || (c->cur_comp && !o->comp))
		goto nomem;
	memcpy(o->in, in, (size_t)n_in * sizeof(int));
	memcpy(o->out, out, (size_t)n_out * sizeof(int));
	if (at)
		o->at = *at;
	for (int k = 0; k < n_in; k++) {
		imp_val *v = &c->v[in[k]];
		if (v->kind == IV_CONST)
			v->weight = 1;
		if (!v->spec && !(v->spec = imp_unique(c, v->onnx)))
			goto nomem;
	}
	for (int k = 0; k < n_out; k++) {
		imp_val *v = &c->v[out[k]];
		for (size_t j = 0; j < c->m->n_out && !v->spec; j++)
			if (c->out_spec[j] && !strcmp(c->m->out[j].name, v->onnx)) {
				v->spec = c->out_spec[j];
				c->out_spec[j] = NULL;
			}
		if (!v->spec && !(v->spec = imp_unique(c, v->onnx)))
			goto nomem;
	}
	return 0;
nomem:
	return enpu_fail(c->e, ENPU_E_NOMEM, c->label, NULL, "out of memory importing the model");
}

int imp_emit(imp_ctx *c, const enpu_onnx_node *n, const char *op, const int *in, int n_in,
	     const imp_attrs *at, const int *out, int n_out)
{
	const enpu_opdef *d = enpu_op_by_name(op);
	enpu_shape is[64], os[16];
	enpu_dtype dts[64], odt = ENPU_DT_F32;
	enpu_attrs a;
	char why[400];
	int all_const = 1, bad;

	if (!d)
		return imp_bad(c, n, "needs spec op %s, which this build does not have", op);
	if (n_in > 64 || n_out > 16)
		return imp_bad(c, n, "%d inputs, %d outputs: more than the importer takes", n_in, n_out);
	if (to_attrs(d, at, &a, why, sizeof(why)))
		return imp_bad(c, n, "%s", why);
	for (int k = 0; k < n_in; k++) {
		if (in[k] < 0)
			return imp_bad(c, n, "input %d is missing", k);
		const imp_val *v = &c->v[in[k]];
		/* the quantised ops (spec v3) are not folded: the spec keeps
		 * them, so a run computes them as cpu_ref would */
		if (v->kind != IV_CONST || v->dtype != ENPU_ONNX_FLOAT || d->since >= 3)
			all_const = 0;
		/* an op without a type rule reads an int32 constant (gather's
		 * indices) as int64, as before spec v3 */
		if (!d->types && v->kind == IV_CONST && v->sdt)
			c->v[in[k]].sdt = ENPU_DT_INVALID;
		/* gather's indices: the one int64 weight spec v2 has; spec v3's
		 * ops read int8, uint8, int32 as their type rule says (below) */
		if (v->kind == IV_CONST && imp_spec_dtype(v) == ENPU_DT_I64 &&
		    (k != 1 || strcmp(op, "gather")))
			return imp_bad(c, n, "input '%.60s' is not float32 data, which a spec op "
				       "would read at run time (runtime int64 data)", v->onnx);
		if (!d->types && v->kind != IV_CONST && imp_spec_dtype(v) != ENPU_DT_F32)
			return imp_bad(c, n, "input '%.60s' is %s, which spec op %s does not take",
				       v->onnx, enpu_dtype_name(imp_spec_dtype(v)), op);
		is[k] = v->shape;
		dts[k] = imp_spec_dtype(v);
	}
	if (d->types && enpu_op_out_dtype(d, dts, n_in, NULL, &odt, &bad, why, sizeof(why)))
		return imp_bad(c, n, "%s %s", op, why);
	if (d->shape(&a, is, n_in, os, n_out, why, sizeof(why)))
		return imp_bad(c, n, "%s: %s", op, why);
	for (int k = 0; k < n_out; k++)
		for (int j = 0; j < os[k].ndim; j++)
			if (os[k].dim[j] < 1)
				return imp_bad(c, n, "%s would give an empty tensor, which specs do not have", op);
	if (all_const && d->kernel)
		return run_kernel(c, d, &a, in, n_in, os, out, n_out);
	for (int k = 0; k < n_out; k++) {
		c->v[out[k]].shape = os[k];
		enpu_shape_numel(&os[k], &c->v[out[k]].numel);
		c->v[out[k]].kind = IV_RUNTIME;
		c->v[out[k]].dtype = odt == ENPU_DT_F32 ? ENPU_ONNX_FLOAT : ENPU_ONNX_INT64;
		c->v[out[k]].sdt = odt == ENPU_DT_F32 ? ENPU_DT_INVALID : odt;
	}
	return record(c, op, in, n_in, at, out, n_out);
}

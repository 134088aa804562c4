/* import_write.c: the importer's output. Spec names (imp_unique: ONNX
 * names sanitized to [A-Za-z0-9_.-]+, scopes' '/' as '.', made unique
 * across ops, tensors and components with _2, _3, ...), the spec YAML
 * (a comment header naming the model file and opset, `eulernpu: 2`,
 * inputs, outputs, weights, components) and the weights npz (float32
 * constants that spec ops read, and int64 for gather's indices, named
 * after their initializers).
 *
 * Components: consecutive ops of one scope key (import.c's set_scope:
 * "/layer1/layer1.0/conv1/Conv" -> "layer1.0") form one component; ops
 * without a scope belong to one named after the model. A key that comes
 * back after another starts a new component, named key_2, key_3, ... so
 * no component name repeats. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "import_int.h"
#include "npz.h"
#include "ydoc.h"

/* The spec text being written; bad is set by a failed append. */
typedef struct wb {
	enpu_buf *b;
	int bad;
} wb;

static void ap(wb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ap(wb *b, const char *fmt, ...)
{
	va_list ap_;

	va_start(ap_, fmt);
	b->bad |= enpu_buf_vaddf(b->b, fmt, ap_) != 0;
	va_end(ap_);
}

static int name_char(char ch)
{
	return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
	       ch == '_' || ch == '.' || ch == '-';
}

/* base sanitized into out (cap >= 16): leading '/' dropped, '/' -> '.',
 * other characters -> '_', a leading '-' or '.' prefixed with "t", and so
 * is a name YAML reads as null ("null", "NULL"), which is no name. */
static void sanitize(const char *base, char *out, size_t cap)
{
	size_t o = 0;

	while (*base == '/')
		base++;
	if (*base == '-' || *base == '.')
		out[o++] = 't';
	for (; *base && o + 12 < cap; base++)
		out[o++] = *base == '/' ? '.' : name_char(*base) ? *base : '_';
	if (!o)
		out[o++] = 't';
	out[o] = 0;
	if (enpu_yaml_null_text(out)) {
		memmove(out + 1, out, o + 1);
		out[0] = 't';
	}
}

char *imp_unique(imp_ctx *c, const char *base)
{
	char s[200], t[224];

	sanitize(base, s, sizeof(s));
	strcpy(t, s);
	for (int k = 2; imp_smap_get(&c->names, t) >= 0; k++)
		snprintf(t, sizeof(t), "%s_%d", s, k);
	if (imp_smap_put(&c->names, t, 1))
		return NULL;
	return strdup(t);
}

static void put_shape(wb *b, const enpu_shape *s)
{
	ap(b, "[");
	for (int k = 0; k < s->ndim; k++)
		ap(b, "%s%lld", k ? ", " : "", (long long)s->dim[k]);
	ap(b, "]");
}

static void put_float(wb *b, float f)
{
	char t[40];

	if (isnan(f))
		snprintf(t, sizeof(t), ".nan");
	else if (isinf(f))
		snprintf(t, sizeof(t), "%s.inf", f < 0 ? "-" : "");
	else
		snprintf(t, sizeof(t), "%.9g", (double)f);
	/* "1" would read back as an integer: fine for float attributes */
	ap(b, "%s", t);
}

static void put_attrs(wb *b, const imp_attrs *at)
{
	if (!at->n)
		return;
	ap(b, ", attrs: {");
	for (int k = 0; k < at->n; k++) {
		const imp_attr *t = &at->a[k];
		ap(b, "%s%s: ", k ? ", " : "", t->name);
		switch (t->type) {
		case IA_INT:
			ap(b, "%lld", (long long)t->i);
			break;
		case IA_FLOAT:
			put_float(b, t->f);
			break;
		case IA_STR:
			ap(b, "%s", t->s);
			break;
		case IA_INTS:
		case IA_FLOATS:
			ap(b, "[");
			for (int j = 0; j < t->n; j++) {
				ap(b, "%s", j ? ", " : "");
				if (t->type == IA_INTS)
					ap(b, "%lld", (long long)t->v[j]);
				else
					put_float(b, t->fv[j]);
			}
			ap(b, "]");
			break;
		}
	}
	ap(b, "}");
}

static void put_op(imp_ctx *c, wb *b, const imp_op *o)
{
	ap(b, "      - {name: %s, op: %s, in: [", o->name, o->op);
	for (int k = 0; k < o->n_in; k++)
		ap(b, "%s%s", k ? ", " : "", c->v[o->in[k]].spec);
	ap(b, "], out: ");
	if (o->n_out == 1) {
		ap(b, "%s", c->v[o->out[0]].spec);
	} else {
		ap(b, "[");
		for (int k = 0; k < o->n_out; k++)
			ap(b, "%s%s", k ? ", " : "", c->v[o->out[k]].spec);
		ap(b, "]");
	}
	put_attrs(b, &o->at);
	ap(b, "}\n");
}

static int same_comp(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static int put_components(imp_ctx *c, wb *b)
{
	imp_smap seen = {0};
	int rc = 0;

	ap(b, "components:%s\n", c->nops ? "" : " []");
	for (size_t k = 0; k < c->nops && !rc; k++) {
		const char *key = c->ops[k].comp ? c->ops[k].comp : c->model_name;
		if (k == 0 || !same_comp(c->ops[k].comp, c->ops[k - 1].comp)) {
			int times = imp_smap_get(&seen, key);
			char nm[240], *u;

			if (times < 0)
				snprintf(nm, sizeof(nm), "%.200s", key);
			else
				snprintf(nm, sizeof(nm), "%.200s_%d", key, times + 1);
			if (imp_smap_put(&seen, key, times < 0 ? 1 : times + 1) || !(u = imp_unique(c, nm))) {
				rc = -1;
				break;
			}
			ap(b, "  - name: %s\n    ops:\n", u);
			free(u);
		}
		put_op(c, b, &c->ops[k]);
	}
	imp_smap_free(&seen);
	return rc;
}

/* s for a YAML comment: printable ASCII, anything else '?', truncated. */
static void printable(const char *s, char *out, size_t cap)
{
	size_t o = 0;

	for (; *s && o + 1 < cap; s++)
		out[o++] = *s >= 0x20 && *s < 0x7f ? *s : '?';
	out[o] = 0;
}

/* The spec version the model needs: 3 when it has a quantised op or an
 * int8, uint8 or int32 tensor (spec v3), else 2. */
static int spec_version(const imp_ctx *c)
{
	for (size_t k = 0; k < c->nops; k++) {
		const enpu_opdef *d = enpu_op_by_name(c->ops[k].op);
		if (d && d->since >= 3)
			return 3;
	}
	for (size_t k = 0; k < c->nv; k++)
		if ((c->v[k].kind == IV_INPUT || c->v[k].weight || c->v[k].kind == IV_RUNTIME) &&
		    c->v[k].sdt && c->v[k].sdt != ENPU_DT_F32)
			return 3;
	return 2;
}

static int write_yaml(imp_ctx *c, const int64_t *outs, wb *b)
{
	int nw = 0;

	char label[200], prod[80];

	printable(c->label, label, sizeof(label));
	printable(c->m->producer, prod, sizeof(prod));
	ap(b, "# Imported by eulernpu import from %s\n# (ONNX opset %lld, IR version %lld%s%s).\n",
	   label, (long long)c->opset, (long long)c->m->ir_version, prod[0] ? ", producer " : "", prod);
	ap(b, "eulernpu: %d\nname: %s\ninputs:", spec_version(c), c->model_name);
	for (size_t k = 0; k < c->nv; k++)
		if (c->v[k].kind == IV_INPUT) {
			ap(b, "\n  - {name: %s, dtype: %s, shape: ", c->v[k].spec,
			   enpu_dtype_name(imp_spec_dtype(&c->v[k])));
			put_shape(b, &c->v[k].shape);
			ap(b, "}");
		}
	ap(b, "%s\noutputs: [", b->b->len && b->b->data[b->b->len - 1] == ':' ? " []" : "");
	for (size_t k = 0; k < c->m->n_out; k++)
		ap(b, "%s%s", k ? ", " : "", c->v[outs[k]].spec);
	ap(b, "]\nweights:");
	for (size_t k = 0; k < c->nv; k++)
		if (c->v[k].weight) {
			ap(b, "\n  - {name: %s, dtype: %s, shape: ", c->v[k].spec,
			   enpu_dtype_name(imp_spec_dtype(&c->v[k])));
			put_shape(b, &c->v[k].shape);
			ap(b, "}");
			nw++;
		}
	ap(b, "%s\n", nw ? "" : " []");
	return put_components(c, b) || b->bad ? -1 : 0;
}

static int write_npz(imp_ctx *c, enpu_buf *out)
{
	enpu_tlist l = ENPU_TLIST_INIT;
	int rc = 0;

	for (size_t k = 0; k < c->nv && !rc; k++) {
		const imp_val *v = &c->v[k];
		enpu_tensor t = {0};

		if (!v->weight)
			continue;
		int f = v->dtype == ENPU_ONNX_FLOAT;

		t.dtype = imp_spec_dtype(v);
		t.shape = v->shape;
		t.name = strdup(v->spec);
		if (!t.name || enpu_tensor_alloc(&t, NULL, c->e)) {
			enpu_tensor_free(&t);
			rc = enpu_fail(c->e, ENPU_E_NOMEM, c->label, NULL, "out of memory writing weights");
			break;
		}
		/* the value's data (float32, or int64s widened from int8, uint8,
		 * int32) in the weight's dtype */
		for (uint64_t j = 0; j < v->numel; j++)
			switch (t.dtype) {
			case ENPU_DT_F32:
				t.data[j] = f ? v->f[j] : (float)v->i[j];
				break;
			case ENPU_DT_I8:
				t.i8[j] = (int8_t)v->i[j];
				break;
			case ENPU_DT_U8:
				t.u8[j] = (uint8_t)v->i[j];
				break;
			case ENPU_DT_I32:
				t.i32[j] = (int32_t)v->i[j];
				break;
			default:
				t.i64[j] = v->i[j];
				break;
			}
		rc = enpu_tlist_push(&l, &t, c->e);
		enpu_tensor_free(&t);
	}
	if (!rc)
		rc = enpu_npz_write_mem(&l, "weights.npz", out, c->e);
	enpu_tlist_free(&l);
	return rc;
}

int imp_write(imp_ctx *c, const int64_t *outs, enpu_buf *spec, enpu_buf *weights)
{
	const char *nm = c->o->name ? c->o->name : c->m->graph_name[0] ? c->m->graph_name : "model";
	char s[200];

	sanitize(nm, s, sizeof(s));
	if (!(c->model_name = strdup(s)))
		return enpu_fail(c->e, ENPU_E_NOMEM, c->label, NULL, "out of memory");
	wb w = {spec, 0};

	if (write_yaml(c, outs, &w))
		return enpu_fail(c->e, ENPU_E_NOMEM, c->label, NULL, "out of memory writing the spec");
	return write_npz(c, weights);
}

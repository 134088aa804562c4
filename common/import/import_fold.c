/* import_fold.c: constant folding of nodes whose inputs are all constant
 * (imp_fold, import_int.h) where no spec kernel applies: int64/bool data
 * (PyTorch's shape arithmetic: Shape, Gather, Unsqueeze, Concat, Range,
 * Equal, Where, ... ) and data movement of any dtype (Reshape, Expand of a
 * class token to the batch, Slice, Transpose). Float arithmetic is not
 * folded here: the mapping emits the spec op and imp_emit runs its kernel,
 * so folded values are cpu_ref's. Every constant made here is sized
 * against the limits first (imp_const_alloc), so ConstantOfShape of 1e12
 * elements is an error, not an allocation. */
#include <stdlib.h>
#include <string.h>
#include "import_int.h"

typedef int (*fold_fn)(imp_ctx *c, const enpu_onnx_node *n, const int *in, int out);

static int is_int(const imp_val *v)
{
	return v->dtype != ENPU_ONNX_FLOAT;
}

static double getd(const imp_val *v, uint64_t k)
{
	return v->f ? (double)v->f[k] : (double)v->i[k];
}

static int64_t geti(const imp_val *v, uint64_t k)
{
	return v->i ? v->i[k] : (int64_t)v->f[k];
}

/* dst[di] = src[si] (same storage class: float or int) */
static void cp(imp_val *d, uint64_t di, const imp_val *s, uint64_t si)
{
	if (d->f)
		d->f[di] = s->f ? s->f[si] : (float)s->i[si];
	else
		d->i[di] = s->i ? s->i[si] : (int64_t)s->f[si];
}

/* Read constant input k as up to max int64s: count, or -1 when absent. */
static int ints_of(const imp_ctx *c, int idx, int64_t *v, int max)
{
	const imp_val *x;

	if (idx < 0)
		return -1;
	x = &c->v[idx];
	if (x->numel > (uint64_t)max)
		return -2;
	for (uint64_t k = 0; k < x->numel; k++)
		v[k] = geti(x, k);
	return (int)x->numel;
}

/* The flat index into a tensor of shape in broadcast to out, for the flat
 * output index o. */
static uint64_t bidx(const enpu_shape *in, const enpu_shape *out, uint64_t o)
{
	uint64_t r = 0, stride = 1;

	for (int k = out->ndim - 1, j = in->ndim - 1; k >= 0; k--, j--) {
		uint64_t ok = o % (uint64_t)out->dim[k];
		o /= (uint64_t)out->dim[k];
		if (j < 0)
			continue;
		if (in->dim[j] != 1)
			r += ok * stride;
		stride *= (uint64_t)in->dim[j];
	}
	return r;
}

static int bcast(imp_ctx *c, const enpu_onnx_node *n, const enpu_shape *a, const enpu_shape *b,
		 enpu_shape *o)
{
	int nd = a->ndim > b->ndim ? a->ndim : b->ndim;

	o->ndim = nd;
	for (int k = 0; k < nd; k++) {
		int64_t x = k - (nd - a->ndim) >= 0 ? a->dim[k - (nd - a->ndim)] : 1;
		int64_t y = k - (nd - b->ndim) >= 0 ? b->dim[k - (nd - b->ndim)] : 1;
		if (x != y && x != 1 && y != 1)
			return imp_bad(c, n, "shapes do not broadcast (%lld vs %lld)", (long long)x,
				       (long long)y) + 1;
		o->dim[k] = x == 1 ? y : x;
	}
	return 0;
}

/* A shape of count dims from v: a dim < 0 is an error. */
static int shape_of(imp_ctx *c, const enpu_onnx_node *n, const int64_t *v, int count, enpu_shape *s)
{
	if (count > ENPU_MAX_DIMS)
		return imp_bad(c, n, "a shape of %d dims (at most %d)", count, ENPU_MAX_DIMS) + 1;
	s->ndim = count;
	for (int k = 0; k < count; k++) {
		if (v[k] < 0)
			return imp_bad(c, n, "a negative dim %lld", (long long)v[k]) + 1;
		s->dim[k] = v[k];
	}
	return 0;
}

static int out_dtype_of(const imp_val *v)
{
	return v->dtype == ENPU_ONNX_BOOL ? ENPU_ONNX_BOOL : is_int(v) ? ENPU_ONNX_INT64 : ENPU_ONNX_FLOAT;
}

/* out = x with another shape (Reshape, Squeeze, Unsqueeze, Flatten, Identity) */
static int reshaped(imp_ctx *c, int x, int out, const enpu_shape *s)
{
	if (imp_const_alloc(c, out, out_dtype_of(&c->v[x]), s))
		return -1;
	for (uint64_t k = 0; k < c->v[out].numel; k++)
		cp(&c->v[out], k, &c->v[x], k);
	return 0;
}

static int f_constant(imp_ctx *c, const enpu_onnx_node *n, const int *in, int out)
{
	const enpu_onnx_attr *a = n->n_attr ? &n->attr[0] : NULL;
	enpu_shape s = {0};

	if (!a)
		return imp_bad(c, n, "a Constant without a value") + 1;
	if (!strcmp(a->name, "value") && a->type == ENPU_ONNX_A_TENSOR) {
		const enpu_onnx_tensor *t = a->t;
		if (!t->f && !t->i)
			return imp_bad(c, n, "a constant of ONNX data type %d", t->elem_type) + 1;
		if (imp_const_alloc(c, out, t->f ? ENPU_ONNX_FLOAT : t->elem_type == ENPU_ONNX_BOOL ?
				    ENPU_ONNX_BOOL : ENPU_ONNX_INT64, &t->shape))
			return -1;
		if (t->f)
			memcpy(c->v[out].f, t->f, t->numel * sizeof(float));
		else
			memcpy(c->v[out].i, t->i, t->numel * sizeof(int64_t));
		return 0;
	}
	if ((!strcmp(a->name, "value_float") && a->type == ENPU_ONNX_A_FLOAT) ||
	    (!strcmp(a->name, "value_int") && a->type == ENPU_ONNX_A_INT)) {
		if (imp_const_alloc(c, out, a->type == ENPU_ONNX_A_FLOAT ? ENPU_ONNX_FLOAT : ENPU_ONNX_INT64, &s))
			return -1;
		if (a->type == ENPU_ONNX_A_FLOAT)
			c->v[out].f[0] = a->f;
		else
			c->v[out].i[0] = a->i;
		return 0;
	}
	if ((!strcmp(a->name, "value_floats") && a->type == ENPU_ONNX_A_FLOATS) ||
	    (!strcmp(a->name, "value_ints") && a->type == ENPU_ONNX_A_INTS)) {
		s.ndim = 1;
		s.dim[0] = (int64_t)a->n;
		if (imp_const_alloc(c, out, a->type == ENPU_ONNX_A_FLOATS ? ENPU_ONNX_FLOAT : ENPU_ONNX_INT64, &s))
			return -1;
		if (a->n && a->type == ENPU_ONNX_A_FLOATS)
			memcpy(c->v[out].f, a->floats, a->n * sizeof(float));
		else if (a->n)
			memcpy(c->v[out].i, a->ints, a->n * sizeof(int64_t));
		return 0;
	}
	return imp_bad(c, n, "a Constant of attribute %.32s", a->name) + 1;
}

static int f_constant_of_shape(imp_ctx *c, const enpu_onnx_node *n, const int *in, int out)
{
	const enpu_onnx_attr *a = enpu_onnx_attr_find(n, "value");
	int64_t v[ENPU_MAX_DIMS];
	enpu_shape s;
	int k = ints_of(c, in[0], v, ENPU_MAX_DIMS), dt = ENPU_ONNX_FLOAT, rc;

	if (k < 0)
		return imp_bad(c, n, "a shape of more than %d dims", ENPU_MAX_DIMS) + 1;
	if ((rc = shape_of(c, n, v, k, &s)))
		return rc;
	if (a && a->type == ENPU_ONNX_A_TENSOR && a->t->i)
		dt = a->t->elem_type == ENPU_ONNX_BOOL ? ENPU_ONNX_BOOL : ENPU_ONNX_INT64;
	else if (a && !(a->type == ENPU_ONNX_A_TENSOR && a->t->f))
		return imp_bad(c, n, "a value of another data type") + 1;
	if (imp_const_alloc(c, out, dt, &s))
		return -1;
	for (uint64_t j = 0; a && a->t->numel && j < c->v[out].numel; j++)
		if (dt == ENPU_ONNX_FLOAT)
			c->v[out].f[j] = a->t->f[0];
		else
			c->v[out].i[j] = a->t->i[0];
	return 0;
}

int imp_fold_shape(imp_ctx *c, const enpu_onnx_node *n, const int *in, int out);
int imp_fold_shape(imp_ctx *c, const enpu_onnx_node *n, const int *in, int out)
{
	const imp_val *x = &c->v[in[0]];
	enpu_shape s = {1, {0}};
	int64_t r = x->shape.ndim, st = oa_int(n, "start", 0), en = oa_int(n, "end", r);

	if (!strcmp(n->op_type, "Size")) {
		s.ndim = 0;
		if (imp_const_alloc(c, out, ENPU_ONNX_INT64, &s))
			return -1;
		c->v[out].i[0] = (int64_t)x->numel;
		if (x->kind != IV_CONST) {
			uint64_t p = 1;
			for (int k = 0; k < x->shape.ndim; k++)
				p *= (uint64_t)x->shape.dim[k];
			c->v[out].i[0] = (int64_t)p;
		}
		return 0;
	}
	st = st < 0 ? st + r : st;
	en = en < 0 ? en + r : en;
	st = st < 0 ? 0 : st > r ? r : st;
	en = en < 0 ? 0 : en > r ? r : en;
	s.dim[0] = en > st ? en - st : 0;
	if (imp_const_alloc(c, out, ENPU_ONNX_INT64, &s))
		return -1;
	for (int64_t k = st; k < en; k++)
		c->v[out].i[k - st] = x->shape.dim[k];
	return 0;
}

static int f_shape(imp_ctx *c, const enpu_onnx_node *n, const int *in, int out)
{
	return imp_fold_shape(c, n, in, out);
}

static int f_gather(imp_ctx *c, const enpu_onnx_node *n, const int *in, int out)
{
	const imp_val *x = &c->v[in[0]], *ix = &c->v[in[1]];
	int64_t axis = oa_int(n, "axis", 0), r = x->shape.ndim;
	enpu_shape s = {0};
	uint64_t outer = 1, inner = 1, dim;

	if (!is_int(ix))
		return imp_bad(c, n, "float indices") + 1;
	if (axis < -r || axis >= r)
		return imp_bad(c, n, "axis %lld out of range", (long long)axis) + 1;
	axis = axis < 0 ? axis + r : axis;
	if (r - 1 + ix->shape.ndim > ENPU_MAX_DIMS)
		return imp_bad(c, n, "more than %d dims", ENPU_MAX_DIMS) + 1;
	for (int k = 0; k < axis; k++)
		s.dim[s.ndim++] = x->shape.dim[k], outer *= (uint64_t)x->shape.dim[k];
	for (int k = 0; k < ix->shape.ndim; k++)
		s.dim[s.ndim++] = ix->shape.dim[k];
	for (int k = (int)axis + 1; k < r; k++)
		s.dim[s.ndim++] = x->shape.dim[k], inner *= (uint64_t)x->shape.dim[k];
	dim = (uint64_t)x->shape.dim[axis];
	for (uint64_t j = 0; j < ix->numel; j++) {
		int64_t q = ix->i[j];
		if (q < -(int64_t)dim || q >= (int64_t)dim)
			return imp_bad(c, n, "index %lld out of range (dim %llu)", (long long)q,
				       (unsigned long long)dim) + 1;
	}
	if (imp_const_alloc(c, out, out_dtype_of(x), &s))
		return -1;
	for (uint64_t o = 0, d = 0; o < outer; o++)
		for (uint64_t j = 0; j < ix->numel; j++) {
			int64_t q = ix->i[j] < 0 ? ix->i[j] + (int64_t)dim : ix->i[j];
			for (uint64_t i = 0; i < inner; i++)
				cp(&c->v[out], d++, x, (o * dim + (uint64_t)q) * inner + i);
		}
	return 0;
}

/* Squeeze/Unsqueeze axes: the attribute before opset 13, else input 1. */
static int axes_of(imp_ctx *c, const enpu_onnx_node *n, const int *in, int64_t *ax)
{
	if (c->opset < 13)
		return oa_ints(n, "axes", ax, ENPU_MAX_DIMS);
	return ints_of(c, n->n_in > 1 ? in[1] : -1, ax, ENPU_MAX_DIMS);
}

static int f_squeeze(imp_ctx *c, const enpu_onnx_node *n, const int *in, int out)
{
	const imp_val *x = &c->v[in[0]];
	int64_t ax[ENPU_MAX_DIMS];
	int na = axes_of(c, n, in, ax), drop[ENPU_MAX_DIMS] = {0};
	enpu_shape s = {0};

	if (na == -2)
		return imp_bad(c, n, "too many axes") + 1;
	for (int k = 0; k < na; k++) {
		int64_t a = ax[k] < 0 ? ax[k] + x->shape.ndim : ax[k];
		if (a < 0 || a >= x->shape.ndim || x->shape.dim[a] != 1)
			return imp_bad(c, n, "axis %lld is not a dim of size 1", (long long)ax[k]) + 1;
		drop[a] = 1;
	}
	for (int k = 0; k < x->shape.ndim; k++)
		if (!(na < 0 ? x->shape.dim[k] == 1 : drop[k]))
			s.dim[s.ndim++] = x->shape.dim[k];
	return reshaped(c, in[0], out, &s);
}

static int f_unsqueeze(imp_ctx *c, const enpu_onnx_node *n, const int *in, int out)
{
	const imp_val *x = &c->v[in[0]];
	int64_t ax[ENPU_MAX_DIMS];
	int na = axes_of(c, n, in, ax), put[ENPU_MAX_DIMS] = {0}, r;
	enpu_shape s = {0};

	if (na < 0 || x->shape.ndim + na > ENPU_MAX_DIMS)
		return imp_bad(c, n, "axes absent or more than %d dims", ENPU_MAX_DIMS) + 1;
	r = x->shape.ndim + na;
	for (int k = 0; k < na; k++) {
		int64_t a = ax[k] < 0 ? ax[k] + r : ax[k];
		if (a < 0 || a >= r || put[a])
			return imp_bad(c, n, "axis %lld out of range or repeated", (long long)ax[k]) + 1;
		put[a] = 1;
	}
	for (int k = 0, j = 0; k < r; k++)
		s.dim[k] = put[k] ? 1 : x->shape.dim[j++];
	s.ndim = r;
	return reshaped(c, in[0], out, &s);
}

static int f_reshape(imp_ctx *c, const enpu_onnx_node *n, const int *in, int out)
{
	const imp_val *x = &c->v[in[0]];
	int64_t v[ENPU_MAX_DIMS];
	int k = ints_of(c, in[1], v, ENPU_MAX_DIMS), neg = -1;
	uint64_t p = 1;
	enpu_shape s;

	if (k < 0)
		return imp_bad(c, n, "a target shape of more than %d dims", ENPU_MAX_DIMS) + 1;
	for (int j = 0; j < k; j++) {
		if (v[j] == 0 && !oa_int(n, "allowzero", 0))
			v[j] = j < x->shape.ndim ? x->shape.dim[j] : 0;
		if (v[j] == -1 && neg < 0)
			neg = j;
		else if (v[j] < 0)
			return imp_bad(c, n, "target dim %lld", (long long)v[j]) + 1;
		else
			p *= (uint64_t)v[j];
	}
	if (neg >= 0)
		v[neg] = p ? (int64_t)(x->numel / p) : 0;
	if (shape_of(c, n, v, k, &s))
		return 2;
	if ((neg >= 0 ? p * (uint64_t)v[neg] : p) != x->numel)
		return imp_bad(c, n, "target shape has another element count") + 1;
	return reshaped(c, in[0], out, &s);
}

static int f_flatten(imp_ctx *c, const enpu_onnx_node *n, const int *in, int out)
{
	const imp_val *x = &c->v[in[0]];
	int64_t axis = oa_int(n, "axis", 1), r = x->shape.ndim;
	enpu_shape s = {2, {1, 1}};

	axis = axis < 0 ? axis + r : axis;
	if (axis < 0 || axis > r)
		return imp_bad(c, n, "axis out of range") + 1;
	for (int k = 0; k < r; k++)
		s.dim[k >= axis] *= x->shape.dim[k];
	return reshaped(c, in[0], out, &s);
}

static int f_identity(imp_ctx *c, const enpu_onnx_node *n, const int *in, int out)
{
	return reshaped(c, in[0], out, &c->v[in[0]].shape);
}

static int f_concat(imp_ctx *c, const enpu_onnx_node *n, const int *in, int out)
{
	const imp_val *x0 = NULL;
	int64_t axis = oa_int(n, "axis", 0), r, total = 0;
	enpu_shape s;
	uint64_t outer = 1, inner = 1, d = 0;

	for (size_t k = 0; k < n->n_in; k++)
		if (in[k] >= 0 && c->v[in[k]].numel)
			x0 = x0 ? x0 : &c->v[in[k]];
	if (!x0)
		x0 = &c->v[in[0]];
	r = x0->shape.ndim;
	axis = axis < 0 ? axis + r : axis;
	if (axis < 0 || axis >= r)
		return imp_bad(c, n, "axis out of range") + 1;
	s = x0->shape;
	for (size_t k = 0; k < n->n_in; k++) {
		const imp_val *x = &c->v[in[k]];
		if (!x->numel && x->shape.ndim == 1)
			continue;   /* an empty shape list */
		if (x->shape.ndim != r || is_int(x) != is_int(x0))
			return imp_bad(c, n, "inputs of other ranks or data types") + 1;
		for (int j = 0; j < r; j++)
			if (j != axis && x->shape.dim[j] != s.dim[j])
				return imp_bad(c, n, "inputs of other shapes") + 1;
		total += x->shape.dim[axis];
	}
	s.dim[axis] = total;
	for (int j = 0; j < axis; j++)
		outer *= (uint64_t)s.dim[j];
	for (int j = (int)axis + 1; j < r; j++)
		inner *= (uint64_t)s.dim[j];
	if (imp_const_alloc(c, out, out_dtype_of(x0), &s))
		return -1;
	for (uint64_t o = 0; o < outer; o++)
		for (size_t k = 0; k < n->n_in; k++) {
			const imp_val *x = &c->v[in[k]];
			uint64_t blk;
			if (!x->numel)
				continue;
			blk = (uint64_t)x->shape.dim[axis] * inner;
			for (uint64_t i = 0; i < blk; i++)
				cp(&c->v[out], d++, x, o * blk + i);
		}
	return 0;
}

static int f_cast(imp_ctx *c, const enpu_onnx_node *n, const int *in, int out)
{
	const imp_val *x = &c->v[in[0]];
	int64_t to = oa_int(n, "to", 0);
	int dt = to == ENPU_ONNX_FLOAT || to == ENPU_ONNX_DOUBLE ? ENPU_ONNX_FLOAT :
		to == ENPU_ONNX_BOOL ? ENPU_ONNX_BOOL : to == ENPU_ONNX_INT64 || to == ENPU_ONNX_INT32 ?
		ENPU_ONNX_INT64 : 0;

	if (!dt)
		return imp_bad(c, n, "a cast to ONNX data type %lld", (long long)to) + 1;
	if (imp_const_alloc(c, out, dt, &x->shape))
		return -1;
	for (uint64_t k = 0; k < x->numel; k++) {
		if (dt == ENPU_ONNX_FLOAT)
			c->v[out].f[k] = x->f ? x->f[k] : (float)x->i[k];
		else if (dt == ENPU_ONNX_BOOL)
			c->v[out].i[k] = getd(x, k) != 0;
		else
			c->v[out].i[k] = geti(x, k);
	}
	return 0;
}

static int f_range(imp_ctx *c, const enpu_onnx_node *n, const int *in, int out)
{
	const imp_val *a = &c->v[in[0]], *b = &c->v[in[1]], *d = &c->v[in[2]];
	int fl = !is_int(a);
	double st, lim, de, cnt;
	enpu_shape s = {1, {0}};

	if (n->n_in < 3 || a->numel != 1 || b->numel != 1 || d->numel != 1 || getd(d, 0) == 0 ||
	    is_int(b) != !fl || is_int(d) != !fl)
		return imp_bad(c, n, "start, limit and delta must be scalars of one type, delta not 0") + 1;
	st = getd(a, 0), lim = getd(b, 0), de = getd(d, 0);
	cnt = (lim - st) / de;
	cnt = cnt > 0 ? cnt : 0;
	if (cnt > 1e15)
		cnt = 1e15;   /* imp_const_alloc refuses it */
	s.dim[0] = (int64_t)cnt + ((double)(int64_t)cnt < cnt);
	if (imp_const_alloc(c, out, fl ? ENPU_ONNX_FLOAT : ENPU_ONNX_INT64, &s))
		return -1;
	for (int64_t k = 0; k < s.dim[0]; k++)
		if (fl)
			c->v[out].f[k] = a->f[0] + (float)k * d->f[0];
		else
			c->v[out].i[k] = a->i[0] + k * d->i[0];
	return 0;
}

/* Binary on int64 (Add, Sub, Mul, Div) and comparisons on any dtype
 * (Equal, Less, Greater: bool out); float arithmetic is the kernels'. */
static int f_binary(imp_ctx *c, const enpu_onnx_node *n, const int *in, int out)
{
	const imp_val *a = &c->v[in[0]], *b = &c->v[in[1]];
	char op = n->op_type[0];
	int cmp = op == 'E' || op == 'L' || op == 'G', rc;
	enpu_shape s;

	if (!cmp && (!is_int(a) || !is_int(b)))
		return 1;
	if ((rc = bcast(c, n, &a->shape, &b->shape, &s)))
		return rc;
	if (imp_const_alloc(c, out, cmp ? ENPU_ONNX_BOOL : ENPU_ONNX_INT64, &s))
		return -1;
	for (uint64_t k = 0; k < c->v[out].numel; k++) {
		uint64_t i = bidx(&a->shape, &s, k), j = bidx(&b->shape, &s, k);
		int64_t x = geti(a, i), y = geti(b, j), r;
		double dx = getd(a, i), dy = getd(b, j);

		switch (cmp ? n->op_type[0] : n->op_type[0] + n->op_type[1]) {
		case 'E': r = dx == dy; break;
		case 'L': r = dx < dy; break;
		case 'G': r = dx > dy; break;
		case 'A' + 'd': r = (int64_t)((uint64_t)x + (uint64_t)y); break;
		case 'S' + 'u': r = (int64_t)((uint64_t)x - (uint64_t)y); break;
		case 'M' + 'u': r = (int64_t)((uint64_t)x * (uint64_t)y); break;
		default:
			if (y == 0 || (x == INT64_MIN && y == -1))
				return imp_bad(c, n, "integer division by zero") + 1;
			r = x / y;
		}
		c->v[out].i[k] = r;
	}
	return 0;
}

static int f_where(imp_ctx *c, const enpu_onnx_node *n, const int *in, int out)
{
	const imp_val *q = &c->v[in[0]], *x = &c->v[in[1]], *y = &c->v[in[2]];
	enpu_shape s1, s;
	int rc;

	if (is_int(x) != is_int(y))
		return imp_bad(c, n, "x and y of other data types") + 1;
	if ((rc = bcast(c, n, &q->shape, &x->shape, &s1)) || (rc = bcast(c, n, &s1, &y->shape, &s)))
		return rc;
	if (imp_const_alloc(c, out, out_dtype_of(x), &s))
		return -1;
	for (uint64_t k = 0; k < c->v[out].numel; k++) {
		int t = getd(q, bidx(&q->shape, &s, k)) != 0;
		cp(&c->v[out], k, t ? x : y, bidx(t ? &x->shape : &y->shape, &s, k));
	}
	return 0;
}

static int f_expand(imp_ctx *c, const enpu_onnx_node *n, const int *in, int out)
{
	const imp_val *x = &c->v[in[0]];
	int64_t v[ENPU_MAX_DIMS];
	int k = ints_of(c, in[1], v, ENPU_MAX_DIMS), rc;
	enpu_shape t, s;

	if (k < 0)
		return imp_bad(c, n, "a shape of more than %d dims", ENPU_MAX_DIMS) + 1;
	if ((rc = shape_of(c, n, v, k, &t)) || (rc = bcast(c, n, &x->shape, &t, &s)))
		return rc;
	if (imp_const_alloc(c, out, out_dtype_of(x), &s))
		return -1;
	for (uint64_t j = 0; j < c->v[out].numel; j++)
		cp(&c->v[out], j, x, bidx(&x->shape, &s, j));
	return 0;
}

int imp_slice_params(imp_ctx *c, const enpu_onnx_node *n, const int *in, int64_t *st, int64_t *en,
		     int64_t *ax, int64_t *sp);
/* Slice's starts, ends, axes, steps (attributes before opset 10, inputs
 * after): the count, or 2 after imp_bad. Absent axes 0.., steps 1. */
int imp_slice_params(imp_ctx *c, const enpu_onnx_node *n, const int *in, int64_t *st, int64_t *en,
		     int64_t *ax, int64_t *sp)
{
	int ns, ne, na, np;

	if (c->opset < 10) {
		ns = oa_ints(n, "starts", st, ENPU_MAX_DIMS);
		ne = oa_ints(n, "ends", en, ENPU_MAX_DIMS);
		na = oa_ints(n, "axes", ax, ENPU_MAX_DIMS);
		np = -1;
	} else {
		for (size_t k = 1; k < n->n_in && k < 5; k++)
			if (in[k] >= 0 && !imp_is_const(c, in[k]))
				return -imp_bad(c, n, "input %zu (%s) is computed at run time", k,
						k == 1 ? "starts" : k == 2 ? "ends" : k == 3 ? "axes" : "steps") - 1;
		ns = ints_of(c, in[1], st, ENPU_MAX_DIMS);
		ne = ints_of(c, in[2], en, ENPU_MAX_DIMS);
		na = ints_of(c, n->n_in > 3 ? in[3] : -1, ax, ENPU_MAX_DIMS);
		np = ints_of(c, n->n_in > 4 ? in[4] : -1, sp, ENPU_MAX_DIMS);
	}
	if (ns < 0 || ns != ne || (na >= 0 && na != ns) || (np >= 0 && np != ns))
		return -imp_bad(c, n, "starts, ends, axes and steps of different lengths") - 1;
	for (int k = 0; k < ns; k++) {
		if (na < 0)
			ax[k] = k;
		if (np < 0)
			sp[k] = 1;
		if (!sp[k])
			return -imp_bad(c, n, "a step of 0") - 1;
	}
	return ns;
}

static int f_slice(imp_ctx *c, const enpu_onnx_node *n, const int *in, int out)
{
	const imp_val *x = &c->v[in[0]];
	int64_t st[ENPU_MAX_DIMS], en[ENPU_MAX_DIMS], ax[ENPU_MAX_DIMS], sp[ENPU_MAX_DIMS];
	int64_t b[ENPU_MAX_DIMS], step[ENPU_MAX_DIMS];
	int ns = imp_slice_params(c, n, in, st, en, ax, sp), r = x->shape.ndim;
	enpu_shape s = x->shape;

	if (ns < 0)
		return 2;
	for (int k = 0; k < r; k++)
		b[k] = 0, step[k] = 1;
	for (int k = 0; k < ns; k++) {
		int64_t a = ax[k] < 0 ? ax[k] + r : ax[k], d, lo, hi;
		if (a < 0 || a >= r)
			return imp_bad(c, n, "axis %lld out of range", (long long)ax[k]) + 1;
		d = x->shape.dim[a];
		lo = st[k] < 0 ? st[k] + d : st[k];
		hi = en[k] < 0 ? (en[k] < -d ? -1 : en[k] + d) : en[k];
		if (sp[k] > 0) {
			lo = lo < 0 ? 0 : lo > d ? d : lo;
			hi = hi < 0 ? 0 : hi > d ? d : hi;
			s.dim[a] = hi > lo ? (hi - lo + sp[k] - 1) / sp[k] : 0;
		} else {
			lo = lo < 0 ? -1 : lo > d - 1 ? d - 1 : lo;
			hi = hi < -1 ? -1 : hi > d - 1 ? d - 1 : hi;
			s.dim[a] = lo > hi ? (lo - hi - sp[k] - 1) / -sp[k] : 0;
		}
		b[a] = lo;
		step[a] = sp[k];
	}
	if (imp_const_alloc(c, out, out_dtype_of(x), &s))
		return -1;
	for (uint64_t o = 0; o < c->v[out].numel; o++) {
		uint64_t rem = o, src = 0, stride = 1;
		for (int k = r - 1; k >= 0; k--) {
			int64_t i = (int64_t)(rem % (uint64_t)s.dim[k]);
			rem /= (uint64_t)s.dim[k];
			src += (uint64_t)(b[k] + i * step[k]) * stride;
			stride *= (uint64_t)x->shape.dim[k];
		}
		cp(&c->v[out], o, x, src);
	}
	return 0;
}

static int f_transpose(imp_ctx *c, const enpu_onnx_node *n, const int *in, int out)
{
	const imp_val *x = &c->v[in[0]];
	int64_t p[ENPU_MAX_DIMS];
	int r = x->shape.ndim, np = oa_ints(n, "perm", p, ENPU_MAX_DIMS), seen[ENPU_MAX_DIMS] = {0};
	enpu_shape s = {r, {0}};
	uint64_t xs[ENPU_MAX_DIMS];

	for (int k = 0; np < 0 && k < r; k++)
		p[k] = r - 1 - k;
	if (np >= 0 && np != r)
		return imp_bad(c, n, "perm of another length") + 1;
	for (int k = 0; k < r; k++) {
		if (p[k] < 0 || p[k] >= r || seen[p[k]]++)
			return imp_bad(c, n, "perm is not a permutation") + 1;
		s.dim[k] = x->shape.dim[p[k]];
	}
	for (int k = r - 1, st = 1; k >= 0; k--)
		xs[k] = (uint64_t)st, st *= (int)x->shape.dim[k];
	if (imp_const_alloc(c, out, out_dtype_of(x), &s))
		return -1;
	for (uint64_t o = 0; o < c->v[out].numel; o++) {
		uint64_t rem = o, src = 0;
		for (int k = r - 1; k >= 0; k--) {
			src += (rem % (uint64_t)s.dim[k]) * xs[p[k]];
			rem /= (uint64_t)s.dim[k];
		}
		cp(&c->v[out], o, x, src);
	}
	return 0;
}

static const struct {
	const char *op;
	fold_fn fn;
	int floats;     /* 1: data movement, folded here on float data too */
	int min_in;     /* inputs it needs */
} folds[] = {
	{"Constant", f_constant, 1, 0}, {"ConstantOfShape", f_constant_of_shape, 1, 1},
	{"Shape", f_shape, 1, 1}, {"Size", f_shape, 1, 1}, {"Gather", f_gather, 1, 2},
	{"Unsqueeze", f_unsqueeze, 1, 1}, {"Squeeze", f_squeeze, 1, 1}, {"Reshape", f_reshape, 1, 2},
	{"Flatten", f_flatten, 1, 1}, {"Identity", f_identity, 1, 1}, {"Dropout", f_identity, 1, 1},
	{"Concat", f_concat, 1, 1}, {"Cast", f_cast, 1, 1}, {"Range", f_range, 1, 3},
	{"Equal", f_binary, 1, 2}, {"Less", f_binary, 1, 2}, {"Greater", f_binary, 1, 2},
	{"Where", f_where, 1, 3}, {"Expand", f_expand, 1, 2}, {"Slice", f_slice, 1, 1},
	{"Transpose", f_transpose, 1, 1},
	{"Add", f_binary, 0, 2}, {"Sub", f_binary, 0, 2}, {"Mul", f_binary, 0, 2}, {"Div", f_binary, 0, 2},
};

int imp_fold(imp_ctx *c, const enpu_onnx_node *n)
{
	int in[64], out, any_int = 0;

	if (n->n_in > 64 || n->n_out < 1 || !n->out[0][0])
		return 1;
	/* spec v3: a DequantizeLinear of constant integers (a QDQ model's
	 * weight that no pattern absorbed, import_qdq.c) is mapped: the spec
	 * keeps it, before the float op that reads it */
	if (!strcmp(n->op_type, "DequantizeLinear"))
		return 1;
	for (size_t k = n->n_in; k < 64; k++)
		in[k] = -1;
	for (size_t k = 0; k < n->n_in; k++) {
		in[k] = imp_in(c, n, k);
		if (in[k] >= 0 && is_int(&c->v[in[k]]))
			any_int = 1;
		if (in[k] >= 0 && !c->v[in[k]].f && !c->v[in[k]].i && c->v[in[k]].numel)
			return imp_bad(c, n, "input '%.60s' is of ONNX data type %d, which is not imported",
				       n->in[k], c->v[in[k]].dtype) + 1;
	}
	for (size_t k = 0; k < sizeof(folds) / sizeof(folds[0]); k++) {
		if (strcmp(folds[k].op, n->op_type))
			continue;
		if (!folds[k].floats && !any_int)
			return 1;
		for (int j = 0; j < folds[k].min_in; j++)
			if (in[j] < 0)
				return imp_bad(c, n, "input %d is missing", j) + 1;
		/* kind 0 until imp_const_alloc gives it data */
		if ((out = imp_newval(c, n->out[0], 0)) < 0)
			return -1;
		int rc = folds[k].fn(c, n, in, out);
		if (rc == 1 && c->v[out].kind != IV_CONST)   /* the mapping makes it */
			imp_smap_put(&c->byname, n->out[0], -1);
		return rc;
	}
	return any_int ? imp_bad(c, n, "op %.32s on int64/bool data is not folded", n->op_type) + 1 : 1;
}

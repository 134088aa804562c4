/* shape.c: the shape rules of the ops (ONNX opset 13 and NumPy semantics).
 * Each rule checks its inputs and attributes, computes the output shape and
 * normalizes the attributes in place. Rules are idempotent: re-running one
 * on its own normalized attributes (as the artifact loader does) gives the
 * same result. Every dimension product is overflow-checked. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "shape.h"

/* The validator turns a why that starts with this into ENPU_E_ATTR: the
 * table cannot say which attributes without a default are required and
 * which are derived here (pool strides, transpose perm). */
#define MISSING "missing required attribute"

#define why_f enpu_shape_why   /* shared with the rules of shape_*.c (shape.h) */

int enpu_shape_why(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (why && whylen) {
		va_start(ap, fmt);
		vsnprintf(why, whylen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* Shape as NumPy prints it, in one of a few rotating static buffers so that
 * two can appear in one message. */
static const char *ps(const enpu_shape *s)
{
	static _Thread_local char bufs[4][160];
	static _Thread_local int k;
	char *b = bufs[k++ & 3];
	size_t off = 0;

	off += (size_t)snprintf(b, sizeof(bufs[0]), "(");
	for (int i = 0; i < s->ndim && i < ENPU_MAX_DIMS && off < sizeof(bufs[0]); i++)
		off += (size_t)snprintf(b + off, sizeof(bufs[0]) - off, "%s%lld",
					i ? ", " : "", (long long)s->dim[i]);
	if (off < sizeof(bufs[0]))
		snprintf(b + off, sizeof(bufs[0]) - off, "%s)", s->ndim == 1 ? "," : "");
	return b;
}

/* Index of attribute `name` in op id's attribute row (the bit in a->set). */
static int attr_bit(enpu_opid id, const char *name)
{
	const enpu_opdef *d = enpu_op_by_id(id);

	if (!d)
		return -1;
	for (int i = 0; d->attrs[i].name; i++)
		if (strcmp(d->attrs[i].name, name) == 0)
			return i;
	return -1;
}

static int is_set(const enpu_attrs *a, enpu_opid id, const char *name)
{
	int bit = attr_bit(id, name);

	return bit >= 0 && (a->set & (1u << bit));
}

static int mul_dims(const int64_t *d, int n, int64_t *out)
{
	int64_t p = 1;

	for (int i = 0; i < n; i++) {
		if (d[i] < 0 || __builtin_mul_overflow(p, d[i], &p))
			return -1;
	}
	*out = p;
	return 0;
}

static int check_rank(const enpu_shape *s, const char *what, char *why, size_t whylen)
{
	if (s->ndim < 0 || s->ndim > ENPU_MAX_DIMS)
		return why_f(why, whylen, "%s has rank %d (at most %d)", what, s->ndim,
			     ENPU_MAX_DIMS);
	for (int i = 0; i < s->ndim; i++)
		if (s->dim[i] < 0)
			return why_f(why, whylen, "%s has a negative dimension", what);
	return 0;
}

static int check_inputs(const enpu_shape *in, int n_in, int lo, int hi,
			char *why, size_t whylen)
{
	if (n_in < lo || (hi >= 0 && n_in > hi)) {
		if (lo == hi)
			return why_f(why, whylen, "expects %d input%s, got %d", lo,
				     lo == 1 ? "" : "s", n_in);
		return why_f(why, whylen, "expects %d to %d inputs, got %d", lo, hi, n_in);
	}
	for (int i = 0; i < n_in; i++) {
		char what[32];

		snprintf(what, sizeof(what), "input %d", i + 1);
		if (check_rank(&in[i], what, why, whylen))
			return -1;
	}
	return 0;
}

int enpu_broadcast_shapes(const enpu_shape *a, const enpu_shape *b, enpu_shape *out,
			  char *why, size_t whylen)
{
	enpu_shape r;

	if (check_rank(a, "left operand", why, whylen) ||
	    check_rank(b, "right operand", why, whylen))
		return -1;
	memset(&r, 0, sizeof(r));
	r.ndim = a->ndim > b->ndim ? a->ndim : b->ndim;
	for (int i = 0; i < r.ndim; i++) {
		/* right-aligned: i counts from the last dimension */
		int ia = a->ndim - 1 - i, ib = b->ndim - 1 - i;
		int64_t da = ia >= 0 ? a->dim[ia] : 1;
		int64_t db = ib >= 0 ? b->dim[ib] : 1;
		int64_t d;

		if (da == db || db == 1)
			d = da;
		else if (da == 1)
			d = db;
		else
			return why_f(why, whylen,
				     "shapes %s and %s do not broadcast (dimension %lld vs %lld)",
				     ps(a), ps(b), (long long)da, (long long)db);
		r.dim[r.ndim - 1 - i] = d;
	}
	*out = r;
	return 0;
}

ENPU_SHAPE_RULE(broadcast)
{
	(void)a;
	if (check_inputs(in, n_in, 2, 2, why, whylen))
		return -1;
	return enpu_broadcast_shapes(&in[0], &in[1], &out[0], why, whylen);
}

ENPU_SHAPE_RULE(matmul)
{
	enpu_shape sa, sb, ba, bb, batch;
	int a1, b1;

	(void)a;
	if (check_inputs(in, n_in, 2, 2, why, whylen))
		return -1;
	if (in[0].ndim == 0 || in[1].ndim == 0)
		return why_f(why, whylen, "matmul does not take scalars (shapes %s and %s)",
			     ps(&in[0]), ps(&in[1]));
	/* NumPy: a 1-D a gains a leading 1, a 1-D b a trailing 1; both are
	 * removed from the result. */
	sa = in[0];
	sb = in[1];
	a1 = sa.ndim == 1;
	b1 = sb.ndim == 1;
	if (a1) {
		sa.ndim = 2;
		sa.dim[1] = sa.dim[0];
		sa.dim[0] = 1;
	}
	if (b1) {
		sb.ndim = 2;
		sb.dim[1] = 1;
	}
	if (sa.dim[sa.ndim - 1] != sb.dim[sb.ndim - 2])
		return why_f(why, whylen, "inner dimensions differ: %s @ %s (%lld vs %lld)",
			     ps(&in[0]), ps(&in[1]), (long long)sa.dim[sa.ndim - 1],
			     (long long)sb.dim[sb.ndim - 2]);
	memset(&ba, 0, sizeof(ba));
	memset(&bb, 0, sizeof(bb));
	ba.ndim = sa.ndim - 2;
	bb.ndim = sb.ndim - 2;
	memcpy(ba.dim, sa.dim, sizeof(int64_t) * (size_t)ba.ndim);
	memcpy(bb.dim, sb.dim, sizeof(int64_t) * (size_t)bb.ndim);
	if (enpu_broadcast_shapes(&ba, &bb, &batch, NULL, 0))
		return why_f(why, whylen, "batch dimensions of %s and %s do not broadcast",
			     ps(&in[0]), ps(&in[1]));
	out[0] = batch;
	if (!a1)
		out[0].dim[out[0].ndim++] = sa.dim[sa.ndim - 2];
	if (!b1)
		out[0].dim[out[0].ndim++] = sb.dim[sb.ndim - 1];
	return 0;
}

ENPU_SHAPE_RULE(gemm)
{
	int64_t m, k, k2, n;

	if (check_inputs(in, n_in, 2, 3, why, whylen))
		return -1;
	if (in[0].ndim != 2 || in[1].ndim != 2)
		return why_f(why, whylen, "gemm needs 2-D a and b, got %s and %s",
			     ps(&in[0]), ps(&in[1]));
	if ((a->trans_a != 0 && a->trans_a != 1) || (a->trans_b != 0 && a->trans_b != 1))
		return why_f(why, whylen, "trans_a and trans_b must be 0 or 1");
	m = a->trans_a ? in[0].dim[1] : in[0].dim[0];
	k = a->trans_a ? in[0].dim[0] : in[0].dim[1];
	k2 = a->trans_b ? in[1].dim[1] : in[1].dim[0];
	n = a->trans_b ? in[1].dim[0] : in[1].dim[1];
	if (k != k2)
		return why_f(why, whylen,
			     "inner dimensions differ: a %s%s and b %s%s give K = %lld vs %lld",
			     ps(&in[0]), a->trans_a ? " (transposed)" : "", ps(&in[1]),
			     a->trans_b ? " (transposed)" : "", (long long)k, (long long)k2);
	if (n_in == 3) {
		const enpu_shape *c = &in[2];
		int64_t mn[2] = {m, n};

		/* ONNX: c is unidirectionally broadcastable to (M, N). */
		if (c->ndim > 2)
			return why_f(why, whylen, "c %s does not broadcast to (%lld, %lld)",
				     ps(c), (long long)m, (long long)n);
		for (int i = 0; i < c->ndim; i++) {
			int64_t d = c->dim[c->ndim - 1 - i], want = mn[1 - i];

			if (d != 1 && d != want)
				return why_f(why, whylen, "c %s does not broadcast to (%lld, %lld)",
					     ps(c), (long long)m, (long long)n);
		}
	}
	memset(&out[0], 0, sizeof(out[0]));
	out[0].ndim = 2;
	out[0].dim[0] = m;
	out[0].dim[1] = n;
	return 0;
}

ENPU_SHAPE_RULE(unary)
{
	if (check_inputs(in, n_in, 1, 1, why, whylen))
		return -1;
	/* clip's bounds: the other unary ops leave min == max == 0 */
	if (a->min > a->max)
		return why_f(why, whylen, "clip min %g is greater than max %g",
			     (double)a->min, (double)a->max);
	out[0] = in[0];
	return 0;
}

/* Normalize axis for rank r into [0, hi) where hi is r (softmax, concat) or
 * r + 1 (flatten). */
static int norm_axis(int *axis, int r, int hi, char *why, size_t whylen)
{
	int lo = -r;

	if (*axis < lo || *axis >= hi)
		return why_f(why, whylen, "axis %d is out of range [%d, %d] for rank %d",
			     *axis, lo, hi - 1, r);
	if (*axis < 0)
		*axis += r;
	return 0;
}

ENPU_SHAPE_RULE(softmax)
{
	if (check_inputs(in, n_in, 1, 1, why, whylen))
		return -1;
	if (in[0].ndim == 0)
		return why_f(why, whylen, "softmax needs at least 1 dimension, got a scalar");
	if (norm_axis(&a->axis, in[0].ndim, in[0].ndim, why, whylen))
		return -1;
	out[0] = in[0];
	return 0;
}

/* One spatial output dimension: floor((size + p0 + p1 - ((k - 1) * dil + 1)) / s) + 1. */
static int spatial(int64_t size, int64_t k, int dil, int s, int p0, int p1,
		   const char *axis, int64_t *o, char *why, size_t whylen)
{
	int64_t ek, padded;

	if (__builtin_mul_overflow(k - 1, (int64_t)dil, &ek) ||
	    __builtin_add_overflow(ek, 1, &ek) ||
	    __builtin_add_overflow(size, (int64_t)p0, &padded) ||
	    __builtin_add_overflow(padded, (int64_t)p1, &padded))
		return why_f(why, whylen, "%s: sizes overflow", axis);
	if (padded < ek)
		return why_f(why, whylen,
			     "output would be empty: padded %s %lld is smaller than the kernel extent %lld",
			     axis, (long long)padded, (long long)ek);
	*o = (padded - ek) / s + 1;
	return 0;
}

/* One spatial axis of a conv or pool: spatial()'s floor size, or with
 * ceil_mode (spec v2 pools) the ceiling, less a last window that would
 * start in the end padding (ONNX, PyTorch): it starts at (o - 1) * s, which
 * must be < size + p0. */
int enpu_shape_axis(int64_t size, int64_t k, int dil, int s, int p0, int p1, int ceil_mode,
		    const char *axis, int64_t *o, char *why, size_t whylen)
{
	if (spatial(size, k, dil, s, p0, p1, axis, o, why, whylen))
		return -1;
	/* spatial() checked that these sums do not overflow */
	if (ceil_mode && (size + p0 + p1 - ((k - 1) * dil + 1)) % s != 0 &&
	    *o * (int64_t)s < size + p0)
		(*o)++;
	return 0;
}

ENPU_SHAPE_RULE(conv2d)
{
	const enpu_shape *x, *w;
	int64_t cg, oh = 0, ow = 0;   /* set by spatial(); 0 quiets -Wmaybe-uninitialized */
	int g = a->group;

	if (check_inputs(in, n_in, 2, 3, why, whylen))
		return -1;
	x = &in[0];
	w = &in[1];
	if (x->ndim != 4)
		return why_f(why, whylen, "x must be 4-D (N, C, H, W), got %s", ps(x));
	if (w->ndim != 4)
		return why_f(why, whylen, "w must be 4-D (M, C/group, kH, kW), got %s", ps(w));
	if (g < 1)
		return why_f(why, whylen, "group must be >= 1, got %d", g);
	for (int i = 0; i < 2; i++) {
		if (a->strides[i] < 1)
			return why_f(why, whylen, "strides must be >= 1, got [%d, %d]",
				     a->strides[0], a->strides[1]);
		if (a->dilations[i] < 1)
			return why_f(why, whylen, "dilations must be >= 1, got [%d, %d]",
				     a->dilations[0], a->dilations[1]);
	}
	for (int i = 0; i < 4; i++)
		if (a->pads[i] < 0)
			return why_f(why, whylen, "pads must be >= 0, got [%d, %d, %d, %d]",
				     a->pads[0], a->pads[1], a->pads[2], a->pads[3]);
	if (x->dim[1] % g)
		return why_f(why, whylen, "input channels %lld are not divisible by group %d",
			     (long long)x->dim[1], g);
	if (w->dim[0] % g)
		return why_f(why, whylen, "output channels %lld are not divisible by group %d",
			     (long long)w->dim[0], g);
	cg = x->dim[1] / g;
	if (w->dim[1] != cg)
		return why_f(why, whylen,
			     "w %s has %lld input channels per group, x %s with group %d needs %lld",
			     ps(w), (long long)w->dim[1], ps(x), g, (long long)cg);
	if (n_in == 3 && (in[2].ndim != 1 || in[2].dim[0] != w->dim[0]))
		return why_f(why, whylen, "bias must be 1-D of size %lld (M), got %s",
			     (long long)w->dim[0], ps(&in[2]));
	if (w->dim[2] < 1 || w->dim[3] < 1)
		return why_f(why, whylen, "kernel dimensions of w %s must be >= 1", ps(w));
	if (spatial(x->dim[2], w->dim[2], a->dilations[0], a->strides[0], a->pads[0],
		    a->pads[2], "height", &oh, why, whylen) ||
	    spatial(x->dim[3], w->dim[3], a->dilations[1], a->strides[1], a->pads[1],
		    a->pads[3], "width", &ow, why, whylen))
		return -1;
	memset(&out[0], 0, sizeof(out[0]));
	out[0].ndim = 4;
	out[0].dim[0] = x->dim[0];
	out[0].dim[1] = w->dim[0];
	out[0].dim[2] = oh;
	out[0].dim[3] = ow;
	return 0;
}

ENPU_SHAPE_RULE(pool2d)
{
	const enpu_shape *x;
	int64_t oh = 0, ow = 0;

	if (check_inputs(in, n_in, 1, 1, why, whylen))
		return -1;
	/* maxpool2d and avgpool2d share the attribute order (kernel, strides,
	 * pads), so maxpool's row gives the bits for both. */
	if (!is_set(a, ENPU_OP_MAXPOOL2D, "kernel"))
		return why_f(why, whylen, MISSING " 'kernel'");
	if (!is_set(a, ENPU_OP_MAXPOOL2D, "strides")) {
		a->strides[0] = a->kernel[0];
		a->strides[1] = a->kernel[1];
	}
	x = &in[0];
	if (x->ndim != 4)
		return why_f(why, whylen, "x must be 4-D (N, C, H, W), got %s", ps(x));
	for (int i = 0; i < 2; i++) {
		if (a->kernel[i] < 1)
			return why_f(why, whylen, "kernel must be >= 1, got [%d, %d]",
				     a->kernel[0], a->kernel[1]);
		if (a->strides[i] < 1)
			return why_f(why, whylen, "strides must be >= 1, got [%d, %d]",
				     a->strides[0], a->strides[1]);
	}
	for (int i = 0; i < 4; i++) {
		/* pads t, l, b, r: t and b pad the height (kernel[0]) */
		int k = a->kernel[i % 2];

		if (a->pads[i] < 0 || a->pads[i] >= k)
			return why_f(why, whylen,
				     "pads must be >= 0 and smaller than the kernel, got [%d, %d, %d, %d] for kernel [%d, %d]",
				     a->pads[0], a->pads[1], a->pads[2], a->pads[3],
				     a->kernel[0], a->kernel[1]);
	}
	/* avgpool2d has no dilations: its fields stay 0 and count as 1;
	 * maxpool2d's rule checked its own (shape_conv.c) */
	if (enpu_shape_axis(x->dim[2], a->kernel[0], a->dilations[0] > 0 ? a->dilations[0] : 1,
			    a->strides[0], a->pads[0], a->pads[2], a->ceil_mode, "height", &oh,
			    why, whylen) ||
	    enpu_shape_axis(x->dim[3], a->kernel[1], a->dilations[1] > 0 ? a->dilations[1] : 1,
			    a->strides[1], a->pads[1], a->pads[3], a->ceil_mode, "width", &ow,
			    why, whylen))
		return -1;
	out[0] = *x;
	out[0].dim[2] = oh;
	out[0].dim[3] = ow;
	return 0;
}

ENPU_SHAPE_RULE(global_avgpool)
{
	(void)a;
	if (check_inputs(in, n_in, 1, 1, why, whylen))
		return -1;
	/* spec v1 specs stay 4-D (validate.c); v2 takes (N, C, L) and any
	 * number >= 1 of spatial dims */
	if (in[0].ndim < 3)
		return why_f(why, whylen,
			     "x must have rank >= 3 (N, C, and at least one spatial dim), got %s",
			     ps(&in[0]));
	out[0] = in[0];
	for (int d = 2; d < in[0].ndim; d++)
		out[0].dim[d] = 1;
	return 0;
}

ENPU_SHAPE_RULE(batchnorm)
{
	static const char *const names[] = {"scale", "bias", "mean", "var"};

	if (check_inputs(in, n_in, 5, 5, why, whylen))
		return -1;
	if (in[0].ndim < 2)
		return why_f(why, whylen, "x must have rank >= 2 (N, C, ...), got %s", ps(&in[0]));
	if (a->epsilon < 0)
		return why_f(why, whylen, "epsilon must be >= 0, got %g", (double)a->epsilon);
	for (int i = 1; i < 5; i++)
		if (in[i].ndim != 1 || in[i].dim[0] != in[0].dim[1])
			return why_f(why, whylen, "%s must be 1-D of size C = %lld, got %s",
				     names[i - 1], (long long)in[0].dim[1], ps(&in[i]));
	out[0] = in[0];
	return 0;
}

ENPU_SHAPE_RULE(reshape)
{
	const enpu_shape *x;
	enpu_shape r;
	int64_t total, known = 1;
	int infer = -1;

	if (check_inputs(in, n_in, 1, 1, why, whylen))
		return -1;
	if (!is_set(a, ENPU_OP_RESHAPE, "shape"))
		return why_f(why, whylen, MISSING " 'shape'");
	x = &in[0];
	if (a->n_shape < 0 || a->n_shape > ENPU_MAX_DIMS)
		return why_f(why, whylen, "shape has %d entries (at most %d)", a->n_shape,
			     ENPU_MAX_DIMS);
	if (mul_dims(x->dim, x->ndim, &total))
		return why_f(why, whylen, "element count of %s overflows", ps(x));
	memset(&r, 0, sizeof(r));
	r.ndim = a->n_shape;
	for (int i = 0; i < a->n_shape; i++) {
		int64_t d = a->shape[i];

		if (d == -1) {
			if (infer >= 0)
				return why_f(why, whylen, "shape has more than one -1");
			infer = i;
			continue;
		}
		if (d == 0) {
			/* ONNX (allowzero = 0): copy the input's dimension */
			if (i >= x->ndim)
				return why_f(why, whylen,
					     "shape entry %d is 0 (copy) but x %s has only %d dimensions",
					     i, ps(x), x->ndim);
			d = x->dim[i];
		} else if (d < 0) {
			return why_f(why, whylen, "shape entry %lld is invalid (use >= 1, 0 or -1)",
				     (long long)d);
		}
		r.dim[i] = d;
		if (__builtin_mul_overflow(known, d, &known))
			return why_f(why, whylen, "target shape's element count overflows");
	}
	if (infer >= 0) {
		if (known == 0 || total % known)
			return why_f(why, whylen,
				     "cannot reshape %s (%lld elements) with a -1: %lld is not a multiple of %lld",
				     ps(x), (long long)total, (long long)total, (long long)known);
		r.dim[infer] = total / known;
	} else if (known != total) {
		return why_f(why, whylen, "cannot reshape %s (%lld element%s) into %s (%lld element%s)",
			     ps(x), (long long)total, total == 1 ? "" : "s", ps(&r),
			     (long long)known, known == 1 ? "" : "s");
	}
	/* normalized: the resolved dims, so a re-run gives the same shape */
	for (int i = 0; i < r.ndim; i++)
		a->shape[i] = r.dim[i];
	out[0] = r;
	return 0;
}

ENPU_SHAPE_RULE(flatten)
{
	int64_t p0, p1;

	if (check_inputs(in, n_in, 1, 1, why, whylen))
		return -1;
	if (norm_axis(&a->axis, in[0].ndim, in[0].ndim + 1, why, whylen))
		return -1;
	if (mul_dims(in[0].dim, a->axis, &p0) ||
	    mul_dims(in[0].dim + a->axis, in[0].ndim - a->axis, &p1))
		return why_f(why, whylen, "element count of %s overflows", ps(&in[0]));
	memset(&out[0], 0, sizeof(out[0]));
	out[0].ndim = 2;
	out[0].dim[0] = p0;
	out[0].dim[1] = p1;
	return 0;
}

ENPU_SHAPE_RULE(transpose)
{
	int r, seen[ENPU_MAX_DIMS] = {0};

	if (check_inputs(in, n_in, 1, 1, why, whylen))
		return -1;
	r = in[0].ndim;
	if (a->n_perm == 0 && r > 0) {
		/* absent perm: reverse the dimensions (ONNX) */
		for (int i = 0; i < r; i++)
			a->perm[i] = r - 1 - i;
		a->n_perm = r;
	}
	if (a->n_perm != r)
		return why_f(why, whylen, "perm has %d entries but x %s has rank %d",
			     a->n_perm, ps(&in[0]), r);
	memset(&out[0], 0, sizeof(out[0]));
	out[0].ndim = r;
	for (int i = 0; i < r; i++) {
		int p = a->perm[i];

		if (p < 0 || p >= r || seen[p])
			return why_f(why, whylen, "perm is not a permutation of 0..%d", r - 1);
		seen[p] = 1;
		out[0].dim[i] = in[0].dim[p];
	}
	return 0;
}

ENPU_SHAPE_RULE(concat)
{
	int r;
	int64_t sum = 0;

	if (check_inputs(in, n_in, 1, -1, why, whylen))
		return -1;
	if (!is_set(a, ENPU_OP_CONCAT, "axis"))
		return why_f(why, whylen, MISSING " 'axis'");
	r = in[0].ndim;
	if (r == 0)
		return why_f(why, whylen, "concat needs inputs of rank >= 1, got a scalar");
	if (norm_axis(&a->axis, r, r, why, whylen))
		return -1;
	for (int i = 0; i < n_in; i++) {
		if (in[i].ndim != r)
			return why_f(why, whylen, "input %d %s has rank %d, input 1 %s has rank %d",
				     i + 1, ps(&in[i]), in[i].ndim, ps(&in[0]), r);
		for (int j = 0; j < r; j++)
			if (j != a->axis && in[i].dim[j] != in[0].dim[j])
				return why_f(why, whylen,
					     "input %d %s differs from input 1 %s in dimension %d (only axis %d may differ)",
					     i + 1, ps(&in[i]), ps(&in[0]), j, a->axis);
		if (__builtin_add_overflow(sum, in[i].dim[a->axis], &sum))
			return why_f(why, whylen, "concatenated dimension overflows");
	}
	out[0] = in[0];
	out[0].dim[a->axis] = sum;
	return 0;
}

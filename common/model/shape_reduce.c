/* shape_reduce.c: the shape rules of spec v2's reductions (reduce_mean,
 * reduce_sum, reduce_max, reduce_min: ONNX ReduceMean/Sum/Max/Min) and of
 * layer_norm (ONNX LayerNormalization, one output), with their attribute
 * checks; docs/spec-format.md writes them down. Like shape.c's rules they
 * are idempotent: the artifact loader re-runs them on the normalized
 * attributes graph.json holds (axes made non-negative, axis too).
 *
 * A dimension of size 0 is allowed (the output is then empty, or the
 * reduction is empty: the kernels give ONNX's values, kernels_reduce.c). */
#include <stdio.h>
#include <string.h>
#include "shape.h"

/* Input i's rank is within ENPU_MAX_DIMS and no dimension is negative. */
static int sane(const enpu_shape *s, int i, char *why, size_t whylen)
{
	if (s->ndim < 0 || s->ndim > ENPU_MAX_DIMS)
		return enpu_shape_why(why, whylen, "input %d has rank %d (at most %d)", i + 1, s->ndim,
				      ENPU_MAX_DIMS);
	for (int d = 0; d < s->ndim; d++)
		if (s->dim[d] < 0)
			return enpu_shape_why(why, whylen, "input %d has a negative dimension", i + 1);
	return 0;
}

/* Dims as NumPy prints a shape: "(4, 5)", "(4,)", "()". */
static void dims_txt(const int64_t *d, int n, char *buf, size_t cap)
{
	size_t off = (size_t)snprintf(buf, cap, "(");

	for (int i = 0; i < n && off < cap; i++)
		off += (size_t)snprintf(buf + off, cap - off, "%s%lld", i ? ", " : "", (long long)d[i]);
	if (off < cap)
		snprintf(buf + off, cap - off, "%s)", n == 1 ? "," : "");
}

/* reduce_*: axes (absent or [] = every axis) each in [-r, r-1], made
 * non-negative in place, none twice; keepdims 1 keeps each reduced dim as
 * 1, keepdims 0 drops it. A rank-0 input reduces over nothing. */
ENPU_SHAPE_RULE(reduce)
{
	int red[ENPU_MAX_DIMS] = {0}, r;

	if (n_in != 1)
		return enpu_shape_why(why, whylen, "expects 1 input, got %d", n_in);
	if (sane(&in[0], 0, why, whylen))
		return -1;
	if (a->keepdims != 0 && a->keepdims != 1)
		return enpu_shape_why(why, whylen, "keepdims must be 0 or 1, got %d", a->keepdims);
	r = in[0].ndim;
	if (a->axes.n < 0 || a->axes.n > ENPU_MAX_DIMS)
		return enpu_shape_why(why, whylen, "axes has %d entries (at most %d)", a->axes.n,
				      ENPU_MAX_DIMS);
	for (int i = 0; i < a->axes.n; i++) {
		int64_t v = a->axes.v[i];

		if (v < -(int64_t)r || v >= (int64_t)r)
			return enpu_shape_why(why, whylen,
					      "axes[%d] is %lld, out of range [%d, %d] for rank %d",
					      i, (long long)v, -r, r - 1, r);
		if (v < 0)
			v += r;
		if (red[v])
			return enpu_shape_why(why, whylen, "axes[%d] names dimension %lld a second time", i,
					      (long long)v);
		red[v] = 1;
		a->axes.v[i] = v;
	}
	memset(&out[0], 0, sizeof(out[0]));
	for (int d = 0; d < r; d++) {
		if (!(red[d] || a->axes.n == 0))
			out[0].dim[out[0].ndim++] = in[0].dim[d];
		else if (a->keepdims)
			out[0].dim[out[0].ndim++] = 1;
	}
	return 0;
}

/* layer_norm: x of rank r >= 1, axis in [-r, r-1] (made non-negative):
 * normalizes over dims axis..r-1. scale and bias (optional, in that order)
 * broadcast to those dims: right-aligned, each dim equal to x's or 1, and
 * any dims before them (rank up to r) 1. epsilon >= 0. The output is x's
 * shape. */
ENPU_SHAPE_RULE(layer_norm)
{
	static const char *const names[] = {"x", "scale", "bias"};
	const enpu_shape *x = &in[0];
	int nd;

	if (n_in < 1 || n_in > 3)
		return enpu_shape_why(why, whylen, "expects 1 to 3 inputs, got %d", n_in);
	for (int i = 0; i < n_in; i++)
		if (sane(&in[i], i, why, whylen))
			return -1;
	if (x->ndim == 0)
		return enpu_shape_why(why, whylen, "layer_norm needs x of rank >= 1, got a scalar");
	if (a->axis < -x->ndim || a->axis >= x->ndim)
		return enpu_shape_why(why, whylen, "axis %d is out of range [%d, %d] for rank %d", a->axis,
				      -x->ndim, x->ndim - 1, x->ndim);
	if (a->axis < 0)
		a->axis += x->ndim;
	if (!(a->epsilon >= 0))
		return enpu_shape_why(why, whylen, "epsilon must be >= 0, got %g", (double)a->epsilon);
	nd = x->ndim - a->axis;
	for (int i = 1; i < n_in; i++) {
		const enpu_shape *s = &in[i];
		int ok = s->ndim <= x->ndim;

		for (int k = 0; ok && k < s->ndim; k++) {
			int64_t want = k < nd ? x->dim[x->ndim - 1 - k] : 1, got = s->dim[s->ndim - 1 - k];

			ok = got == want || got == 1;
		}
		if (!ok) {
			char sb[160], xb[160];

			dims_txt(s->dim, s->ndim, sb, sizeof(sb));
			dims_txt(x->dim + a->axis, nd, xb, sizeof(xb));
			return enpu_shape_why(why, whylen,
					      "%s %s does not broadcast to x's normalized dims %s (axis %d)",
					      names[i], sb, xb, a->axis);
		}
	}
	out[0] = *x;
	return 0;
}

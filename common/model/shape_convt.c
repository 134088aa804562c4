/* shape_convt.c: the shape rules of spec v2's conv_transpose2d (ONNX
 * ConvTranspose) and resize (ONNX Resize over H and W of NCHW), with their
 * attribute checks. Like shape.c's rules they are idempotent: the artifact
 * loader re-runs them on the attributes graph.json holds. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "shape.h"

/* the one-line reason into why (when given); the rule's -1 */
#define why_c(why, whylen, ...) \
	((why) && (whylen) ? snprintf((why), (whylen), __VA_ARGS__) : 0, -1)

/* (N, C, H, W) as "(1, 2, 3, 4)": only 4-D shapes reach the messages. */
static const char *ps4(const enpu_shape *s, char *b, size_t cap)
{
	if (s->ndim != 4) {
		snprintf(b, cap, "of rank %d", s->ndim);
		return b;
	}
	snprintf(b, cap, "(%lld, %lld, %lld, %lld)", (long long)s->dim[0], (long long)s->dim[1],
		 (long long)s->dim[2], (long long)s->dim[3]);
	return b;
}

static int check_n(int n_in, int lo, int hi, char *why, size_t whylen)
{
	if (n_in < lo || n_in > hi)
		return lo == hi ? why_c(why, whylen, "expects %d input, got %d", lo, n_in)
				: why_c(why, whylen, "expects %d to %d inputs, got %d", lo, hi, n_in);
	return 0;
}

/* One spatial output size of conv_transpose2d:
 * (H - 1)*s - p0 - p1 + d*(k - 1) + op + 1, at least 1. */
static int convt_size(int64_t H, int64_t k, int s, int d, int p0, int p1, int op,
		      const char *axis, int64_t *o, char *why, size_t whylen)
{
	int64_t a, b;

	if (__builtin_mul_overflow(H - 1, (int64_t)s, &a) ||
	    __builtin_mul_overflow(k - 1, (int64_t)d, &b) ||
	    __builtin_add_overflow(a, b, &a) ||
	    __builtin_add_overflow(a, (int64_t)op + 1 - p0 - p1, &a))
		return why_c(why, whylen, "%s: sizes overflow", axis);
	if (a < 1)
		return why_c(why, whylen,
			     "output %s would be %lld: the pads (%d + %d) remove more than the transposed convolution produces",
			     axis, (long long)a, p0, p1);
	*o = a;
	return 0;
}

ENPU_SHAPE_RULE(conv_transpose2d)
{
	const enpu_shape *x = &in[0], *w = &in[1];
	int64_t oh = 0, ow = 0;
	int g = a->group;
	char b1[96], b2[96];

	if (check_n(n_in, 2, 3, why, whylen))
		return -1;
	if (x->ndim != 4)
		return why_c(why, whylen, "x must be 4-D (N, C, H, W), got %s", ps4(x, b1, sizeof b1));
	if (w->ndim != 4)
		return why_c(why, whylen, "w must be 4-D (C, M/group, kH, kW), got %s",
			     ps4(w, b1, sizeof b1));
	if (g < 1)
		return why_c(why, whylen, "group must be >= 1, got %d", g);
	for (int i = 0; i < 2; i++) {
		if (a->strides[i] < 1)
			return why_c(why, whylen, "strides must be >= 1, got [%d, %d]",
				     a->strides[0], a->strides[1]);
		if (a->dilations[i] < 1)
			return why_c(why, whylen, "dilations must be >= 1, got [%d, %d]",
				     a->dilations[0], a->dilations[1]);
		/* ONNX (and PyTorch): output_padding below the stride or the dilation */
		if (a->output_padding[i] < 0 ||
		    (a->output_padding[i] >= a->strides[i] && a->output_padding[i] >= a->dilations[i]))
			return why_c(why, whylen,
				     "output_padding must be >= 0 and smaller than the stride or the dilation, got [%d, %d] for strides [%d, %d], dilations [%d, %d]",
				     a->output_padding[0], a->output_padding[1], a->strides[0],
				     a->strides[1], a->dilations[0], a->dilations[1]);
	}
	for (int i = 0; i < 4; i++)
		if (a->pads[i] < 0)
			return why_c(why, whylen, "pads must be >= 0, got [%d, %d, %d, %d]",
				     a->pads[0], a->pads[1], a->pads[2], a->pads[3]);
	if (x->dim[1] != w->dim[0])
		return why_c(why, whylen, "w %s has %lld input channels (its dim 0), x %s has %lld",
			     ps4(w, b1, sizeof b1), (long long)w->dim[0], ps4(x, b2, sizeof b2),
			     (long long)x->dim[1]);
	if (x->dim[1] % g)
		return why_c(why, whylen, "input channels %lld are not divisible by group %d",
			     (long long)x->dim[1], g);
	if (w->dim[1] < 1 || w->dim[2] < 1 || w->dim[3] < 1)
		return why_c(why, whylen, "w %s must have M/group, kH and kW >= 1",
			     ps4(w, b1, sizeof b1));
	if (x->dim[2] < 1 || x->dim[3] < 1)
		return why_c(why, whylen, "x %s must have H and W >= 1", ps4(x, b1, sizeof b1));
	if (w->dim[1] > INT64_MAX / g)
		return why_c(why, whylen, "output channels overflow");
	if (n_in == 3 && (in[2].ndim != 1 || in[2].dim[0] != w->dim[1] * g))
		return why_c(why, whylen, "bias must be 1-D of size %lld (M = group * w's dim 1)",
			     (long long)(w->dim[1] * g));
	if (convt_size(x->dim[2], w->dim[2], a->strides[0], a->dilations[0], a->pads[0],
		       a->pads[2], a->output_padding[0], "height", &oh, why, whylen) ||
	    convt_size(x->dim[3], w->dim[3], a->strides[1], a->dilations[1], a->pads[1],
		       a->pads[3], a->output_padding[1], "width", &ow, why, whylen))
		return -1;
	memset(&out[0], 0, sizeof(out[0]));
	out[0].ndim = 4;
	out[0].dim[0] = x->dim[0];
	out[0].dim[1] = w->dim[1] * g;
	out[0].dim[2] = oh;
	out[0].dim[3] = ow;
	return 0;
}

/* resize: exactly one of scales (NaN, NaN = absent: a spec cannot write a
 * NaN) and sizes (n 0 = absent). Output sizes: sizes, or floor(H * sh) in
 * double (ONNX), at least 1. */
ENPU_SHAPE_RULE(resize)
{
	const enpu_shape *x = &in[0];
	int has_scales = !isnan(a->scales[0]) || !isnan(a->scales[1]);
	int has_sizes = a->sizes.n > 0;
	int64_t o[2];
	char b1[96];

	if (check_n(n_in, 1, 1, why, whylen))
		return -1;
	if (x->ndim != 4)
		return why_c(why, whylen, "x must be 4-D (N, C, H, W), got %s", ps4(x, b1, sizeof b1));
	if (has_scales == has_sizes)
		return why_c(why, whylen, has_sizes ? "give one of 'scales' and 'sizes', not both"
				: "missing required attribute: one of 'scales' or 'sizes'");
	if (x->dim[2] < 1 || x->dim[3] < 1)
		return why_c(why, whylen, "x %s must have H and W >= 1", ps4(x, b1, sizeof b1));
	if (has_sizes) {
		if (a->sizes.n != 2 || a->sizes.v[0] < 1 || a->sizes.v[1] < 1)
			return why_c(why, whylen, "sizes must be [oh, ow], both >= 1");
		o[0] = a->sizes.v[0];
		o[1] = a->sizes.v[1];
	} else {
		for (int i = 0; i < 2; i++) {
			double v = floor((double)x->dim[2 + i] * (double)a->scales[i]);

			if (!(a->scales[i] > 0) || isinf(a->scales[i]))
				return why_c(why, whylen, "scales must be finite and > 0, got [%g, %g]",
					     (double)a->scales[0], (double)a->scales[1]);
			if (v < 1)
				return why_c(why, whylen,
					     "output %s would be floor(%lld * %g) = 0: scale up or give sizes",
					     i ? "width" : "height", (long long)x->dim[2 + i],
					     (double)a->scales[i]);
			if (v > 4611686018427387904.0)
				return why_c(why, whylen, "output sizes overflow");
			o[i] = (int64_t)v;
		}
	}
	out[0] = *x;
	out[0].dim[2] = o[0];
	out[0].dim[3] = o[1];
	return 0;
}

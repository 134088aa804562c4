/* shape_conv.c: shape rules of spec v2's conv and pool ops: conv1d,
 * maxpool1d, avgpool1d (ONNX Conv, MaxPool, AveragePool over one spatial
 * dim: x (N, C, L)), and maxpool2d's, which checks the dilations v2 gave it
 * before the shared 2-D pool rule (shape.c). The output lengths come from
 * enpu_shape_axis (shape.c), the same arithmetic as the 2-D ops: a 1-D op
 * is its 2-D op with H = 1. 1-D pads are [begin, end]. */
#include <stdio.h>
#include <string.h>
#include "shape.h"

/* the validator turns this prefix into ENPU_E_ATTR (shape.c's MISSING) */
#define MISSING "missing required attribute"

#define why1 enpu_shape_why

/* x's rank and dims are sane, and it is 3-D (N, C, L) */
static int x_ncl(const enpu_shape *in, int n_in, int lo, int hi, char *why, size_t whylen)
{
	char b[160];

	if (n_in < lo || n_in > hi)
		return why1(why, whylen, "expects %d to %d inputs, got %d", lo, hi, n_in);
	for (int i = 0; i < n_in; i++) {
		if (in[i].ndim < 0 || in[i].ndim > ENPU_MAX_DIMS)
			return why1(why, whylen, "input %d has rank %d (at most %d)", i + 1,
				    in[i].ndim, ENPU_MAX_DIMS);
		for (int d = 0; d < in[i].ndim; d++)
			if (in[i].dim[d] < 0)
				return why1(why, whylen, "input %d has a negative dimension", i + 1);
	}
	if (in[0].ndim != 3)
		return why1(why, whylen, "x must be 3-D (N, C, L), got %s",
			    enpu_shape_str(&in[0], b, sizeof(b)));
	return 0;
}

/* strides[0], dilations[0] (when dil) >= 1; pads [begin, end] >= 0 */
static int check_1d(const enpu_attrs *a, int dil, char *why, size_t whylen)
{
	if (a->strides[0] < 1)
		return why1(why, whylen, "strides must be >= 1, got [%d]", a->strides[0]);
	if (dil && a->dilations[0] < 1)
		return why1(why, whylen, "dilations must be >= 1, got [%d]", a->dilations[0]);
	if (a->pads[0] < 0 || a->pads[1] < 0)
		return why1(why, whylen, "pads must be >= 0, got [%d, %d]", a->pads[0], a->pads[1]);
	return 0;
}

/* conv1d: x (N, C, L), w (M, C/group, k), bias (M): out (N, M, OL) */
ENPU_SHAPE_RULE(conv1d)
{
	const enpu_shape *x = &in[0], *w = &in[1];
	char b1[160], b2[160];
	int64_t ol;
	int g = a->group;

	if (x_ncl(in, n_in, 2, 3, why, whylen))
		return -1;
	if (w->ndim != 3)
		return why1(why, whylen, "w must be 3-D (M, C/group, k), got %s",
			    enpu_shape_str(w, b1, sizeof(b1)));
	if (g < 1)
		return why1(why, whylen, "group must be >= 1, got %d", g);
	if (check_1d(a, 1, why, whylen))
		return -1;
	if (x->dim[1] % g || w->dim[0] % g)
		return why1(why, whylen,
			    "input channels %lld and output channels %lld must be divisible by group %d",
			    (long long)x->dim[1], (long long)w->dim[0], g);
	if (w->dim[1] != x->dim[1] / g)
		return why1(why, whylen,
			    "w %s has %lld input channels per group, x %s with group %d needs %lld",
			    enpu_shape_str(w, b1, sizeof(b1)), (long long)w->dim[1],
			    enpu_shape_str(x, b2, sizeof(b2)), g, (long long)(x->dim[1] / g));
	if (n_in == 3 && (in[2].ndim != 1 || in[2].dim[0] != w->dim[0]))
		return why1(why, whylen, "bias must be 1-D of size %lld (M), got %s",
			    (long long)w->dim[0], enpu_shape_str(&in[2], b1, sizeof(b1)));
	if (w->dim[2] < 1)
		return why1(why, whylen, "the kernel length of w %s must be >= 1",
			    enpu_shape_str(w, b1, sizeof(b1)));
	if (enpu_shape_axis(x->dim[2], w->dim[2], a->dilations[0], a->strides[0], a->pads[0],
			    a->pads[1], 0, "length", &ol, why, whylen))
		return -1;
	memset(&out[0], 0, sizeof(out[0]));
	out[0].ndim = 3;
	out[0].dim[0] = x->dim[0];
	out[0].dim[1] = w->dim[0];
	out[0].dim[2] = ol;
	return 0;
}

/* maxpool1d and avgpool1d: kernel (bit 0) required, strides (bit 1)
 * default to the kernel; each pad below the kernel (as the 2-D pools) */
static int pool1d(enpu_attrs *a, const enpu_shape *in, int n_in, int dil, enpu_shape *out,
		  char *why, size_t whylen)
{
	int64_t ol;

	if (x_ncl(in, n_in, 1, 1, why, whylen))
		return -1;
	if (!(a->set & 1u))
		return why1(why, whylen, MISSING " 'kernel'");
	if (!(a->set & 2u))
		a->strides[0] = a->kernel[0];
	if (a->kernel[0] < 1)
		return why1(why, whylen, "kernel must be >= 1, got [%d]", a->kernel[0]);
	if (check_1d(a, dil, why, whylen))
		return -1;
	if (a->pads[0] >= a->kernel[0] || a->pads[1] >= a->kernel[0])
		return why1(why, whylen,
			    "pads must be smaller than the kernel, got [%d, %d] for kernel [%d]",
			    a->pads[0], a->pads[1], a->kernel[0]);
	if (enpu_shape_axis(in[0].dim[2], a->kernel[0], dil ? a->dilations[0] : 1, a->strides[0],
			    a->pads[0], a->pads[1], a->ceil_mode, "length", &ol, why, whylen))
		return -1;
	out[0] = in[0];
	out[0].dim[2] = ol;
	return 0;
}

ENPU_SHAPE_RULE(maxpool1d) { return pool1d(a, in, n_in, 1, out, why, whylen); }
ENPU_SHAPE_RULE(avgpool1d) { return pool1d(a, in, n_in, 0, out, why, whylen); }

/* maxpool2d: its dilations (spec v2, default [1, 1]) >= 1, then the 2-D
 * pool rule, which reads them (avgpool2d's stay 0 there and count as 1) */
ENPU_SHAPE_RULE(maxpool2d)
{
	if (a->dilations[0] < 1 || a->dilations[1] < 1)
		return why1(why, whylen, "dilations must be >= 1, got [%d, %d]",
			    a->dilations[0], a->dilations[1]);
	return enpu_s_pool2d(a, in, n_in, out, n_out, why, whylen);
}

/* kernels_v2ew.c: the spec v2 elementwise cpu_ref kernels: pow, min, max
 * (n-ary), prelu (NumPy broadcasting through enpu_bcast2, kernels_ew.c),
 * and hard_sigmoid, hard_swish, elu, softplus (unary). Each output element
 * is the fixed expression written at its kernel (and in docs/spec-format.md);
 * transcendentals come from kmath.c only. Threads split the output range. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "kernels.h"
#include "kmath.h"

#define V2_GRAIN 16384   /* elements per chunk at least: one compare or multiply each */
#define V2_GRAIN_T 1024  /* for the transcendental ones (pow, elu, softplus) */

static size_t numel(const enpu_shape *s)
{
	uint64_t n = 0;
	enpu_shape_numel(s, &n);   /* the shape rule checked it */
	return (size_t)n;
}

/* ---- broadcasting: pow, min, max, prelu --------------------------------- */

enum { V2_POW, V2_MIN, V2_MAX, V2_PRELU };

/* min(a, b) = a < b ? a : b, and a NaN operand (a first) is the result:
 * np.minimum's rule, which on equal operands (-0 and +0) gives b. */
static float min2(float a, float b)
{
	return (a < b || a != a) ? a : b;
}

/* max(a, b) = a > b ? a : b, NaN as min2: on equal operands b. */
static float max2(float a, float b)
{
	return (a > b || a != a) ? a : b;
}

/* prelu: x < 0 ? slope * x : x (-0 and NaN stay as they are) */
static float prelu1(float x, float slope)
{
	return x < 0.0f ? slope * x : x;
}

static void v2_row(int op, float *o, const float *a, size_t sa, const float *b, size_t sb,
		   size_t n)
{
	size_t i;
	switch (op) {
	case V2_POW:   for (i = 0; i < n; i++) o[i] = enpu_powf(a[i * sa], b[i * sb]); break;
	case V2_MIN:   for (i = 0; i < n; i++) o[i] = min2(a[i * sa], b[i * sb]); break;
	case V2_MAX:   for (i = 0; i < n; i++) o[i] = max2(a[i * sa], b[i * sb]); break;
	default:       for (i = 0; i < n; i++) o[i] = prelu1(a[i * sa], b[i * sb]); break;
	}
}

/* pow: y = enpu_powf(a, b) (kmath.c: C99 Annex F's special cases exactly;
 * b = 2 is a * a, b = 0.5 is sqrtf(a), b = 1 is a; |a| a power of two and
 * b an integer is exact; else e^(b ln|a|) in double, rounded once: within
 * 1 ulp of NumPy's float64 pow rounded to float32), NumPy broadcasting. */
ENPU_KERNEL(pow)
{
	return enpu_bcast2(v2_row, V2_POW, &in[0], &in[1], &out[0], V2_GRAIN_T, par);
}

/* min, max over x1 .. xn (broadcast to the output's shape), folded left to
 * right: r = x1; r = min2(r, xk) for k = 2 .. n (max2 for max). A NaN in
 * any input gives NaN; equal operands (-0 and +0) give the later one, as
 * np.minimum / np.maximum do: min(-0, +0) = +0, min(+0, -0) = -0. One pass
 * over the output per input after the first. */
static int fold(int op, const enpu_view *in, int n_in, enpu_view *out, enpu_par *par)
{
	enpu_view acc = out[0];

	if (n_in == 1) {
		/* the shape rule gave x1's shape */
		size_t n = numel(&out[0].shape);
		if (n)
			memcpy(out[0].data, in[0].data, n * sizeof(float));
		return 0;
	}
	enpu_bcast2(v2_row, op, &in[0], &in[1], &out[0], V2_GRAIN, par);
	for (int k = 2; k < n_in; k++)
		enpu_bcast2(v2_row, op, &acc, &in[k], &out[0], V2_GRAIN, par);
	return 0;
}

ENPU_KERNEL(min) { (void)a; return fold(V2_MIN, in, n_in, out, par); }
ENPU_KERNEL(max) { (void)a; return fold(V2_MAX, in, n_in, out, par); }

/* prelu: y = x < 0 ? slope * x : x, one float multiply, slope broadcast to
 * x's shape (-0 stays -0, NaN stays NaN; a NaN slope shows only where
 * x < 0). */
ENPU_KERNEL(prelu)
{
	(void)a;
	return enpu_bcast2(v2_row, V2_PRELU, &in[0], &in[1], &out[0], V2_GRAIN, par);
}

/* ---- unary: hard_sigmoid, hard_swish, elu, softplus --------------------- */

typedef struct v2u_ctx {
	float alpha, beta;
	const float *x;
	float *y;
} v2u_ctx;

/* clamp to [0, 1]: t < 0 ? 0 : (t > 1 ? 1 : t); NaN stays NaN, -0 stays -0 */
static float unit_clamp(float t)
{
	return t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t);
}

/* hard_sigmoid: t = alpha * x; t = t + beta (two roundings); clamp to [0, 1] */
static void hsig_range(void *vctx, size_t i0, size_t i1)
{
	const v2u_ctx *c = vctx;
	for (size_t i = i0; i < i1; i++) {
		float t = c->alpha * c->x[i];
		t = t + c->beta;
		c->y[i] = unit_clamp(t);
	}
}

/* hard_swish: t = x / 6.0f; t = t + 0.5f; c = clamp(t, 0, 1); y = x * c.
 * So x >= 3 gives x, x <= -3 gives -0, -Inf gives NaN (-Inf * 0, as
 * ONNX's formula x * max(0, min(1, x/6 + 1/2)) does). */
static void hswish_range(void *vctx, size_t i0, size_t i1)
{
	const v2u_ctx *c = vctx;
	for (size_t i = i0; i < i1; i++) {
		float x = c->x[i], t = x / 6.0f;
		t = t + 0.5f;
		c->y[i] = x * unit_clamp(t);
	}
}

static void elu_range(void *vctx, size_t i0, size_t i1)
{
	const v2u_ctx *c = vctx;
	for (size_t i = i0; i < i1; i++)
		c->y[i] = enpu_eluf(c->x[i], c->alpha);
}

static void softplus_range(void *vctx, size_t i0, size_t i1)
{
	const v2u_ctx *c = vctx;
	for (size_t i = i0; i < i1; i++)
		c->y[i] = enpu_softplusf(c->x[i]);
}

/* y = f(x) over the whole tensor; threads split the range */
static int v2_unary(enpu_par_fn range, size_t grain, const enpu_attrs *a, const enpu_view *in,
		    enpu_view *out, enpu_par *par)
{
	v2u_ctx c = {.x = in[0].data, .y = out[0].data};
	if (a) {
		c.alpha = a->alpha;
		c.beta = a->beta;
	}
	enpu_par_for(par, numel(&out[0].shape), grain, range, &c);
	return 0;
}

/* hard_sigmoid (alpha 0.2, beta 0.5): t = alpha * x; t = t + beta;
 * y = t < 0 ? 0 : (t > 1 ? 1 : t) */
ENPU_KERNEL(hard_sigmoid) { return v2_unary(hsig_range, V2_GRAIN, a, in, out, par); }
/* hard_swish: t = x / 6.0f; t = t + 0.5f; y = x * (t < 0 ? 0 : (t > 1 ? 1 : t)) */
ENPU_KERNEL(hard_swish) { return v2_unary(hswish_range, V2_GRAIN, a, in, out, par); }
/* elu (alpha 1.0): y = enpu_eluf(x, alpha) (kmath.c: x >= 0 ? x :
 * alpha * (e^x - 1) in double, rounded once; -0 stays -0, -Inf gives -alpha) */
ENPU_KERNEL(elu) { return v2_unary(elu_range, V2_GRAIN_T, a, in, out, par); }
/* softplus: y = enpu_softplusf(x) (kmath.c: ln(1 + e^x) in double, rounded
 * once; x itself for x >= 16; -Inf gives +0) */
ENPU_KERNEL(softplus) { return v2_unary(softplus_range, V2_GRAIN_T, a, in, out, par); }

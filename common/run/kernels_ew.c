/* kernels_ew.c: the elementwise cpu_ref kernels: add, sub, mul, div (NumPy
 * broadcasting), the activations, and batchnorm (per-channel affine).
 * Each output element is a fixed expression of its inputs, written out at
 * each kernel; threads split the output range. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "kernels.h"
#include "kmath.h"
#include "vec.h"

#define EW_GRAIN 16384   /* elements per chunk at least */

static size_t numel(const enpu_shape *s)
{
	size_t n = 1;
	for (int i = 0; i < s->ndim; i++)
		n *= (size_t)s->dim[i];
	return n;
}

/* ---- binary ops with broadcasting ----------------------------------- */

enum { BIN_ADD, BIN_SUB, BIN_MUL, BIN_DIV };

/* The output is walked as rows of its last dim; a and b are read through
 * strides that are 0 along the dims where they broadcast (and for the dims
 * they lack: shapes are right-aligned, NumPy style). */
typedef struct bin_ctx {
	enpu_row2_fn fn;
	int op;
	int rank;                        /* output rank, >= 1 here */
	const int64_t *odim;
	size_t sa[ENPU_MAX_DIMS], sb[ENPU_MAX_DIMS];
	const float *a, *b;
	float *o;
	size_t row;                      /* output last dim */
} bin_ctx;

/* One row of n outputs; sa/sb are 0 or 1. Written per op and per stride
 * pair so that each loop vectorizes (vec.h). */
#define BIN_LOOPS(EXPR) do { \
	if (sa && sb) for (i = 0; i < n; i++) { float x = a[i], y = b[i]; o[i] = EXPR; } \
	else if (sa) { float y = b[0]; for (i = 0; i < n; i++) { float x = a[i]; o[i] = EXPR; } } \
	else if (sb) { float x = a[0]; for (i = 0; i < n; i++) { float y = b[i]; o[i] = EXPR; } } \
	else { float x = a[0], y = b[0]; for (i = 0; i < n; i++) o[i] = EXPR; } \
} while (0)

ENPU_VEC
static void bin_row(int op, float *o, const float *a, size_t sa, const float *b,
		    size_t sb, size_t n)
{
	size_t i;
	switch (op) {
	case BIN_ADD: BIN_LOOPS(x + y); break;
	case BIN_SUB: BIN_LOOPS(x - y); break;
	case BIN_MUL: BIN_LOOPS(x * y); break;
	default:      BIN_LOOPS(x / y); break;
	}
}

static void bin_range(void *vctx, size_t r0, size_t r1)
{
	const bin_ctx *c = vctx;
	int last = c->rank - 1;
	for (size_t r = r0; r < r1; r++) {
		size_t ao = 0, bo = 0, rem = r;
		for (int d = last - 1; d >= 0; d--) {
			size_t idx = rem % (size_t)c->odim[d];
			rem /= (size_t)c->odim[d];
			ao += idx * c->sa[d];
			bo += idx * c->sb[d];
		}
		c->fn(c->op, c->o + r * c->row, c->a + ao, c->sa[last],
		      c->b + bo, c->sb[last], c->row);
	}
}

/* Strides of x (shape s) against an output of rank `rank`: right-aligned,
 * 0 where s has size 1 or lacks the dim. */
static void bcast_strides(const enpu_shape *s, int rank, size_t *st)
{
	size_t acc = 1;
	for (int d = rank - 1; d >= 0; d--) {
		int sd = s->ndim - (rank - d);
		if (sd < 0) {
			st[d] = 0;
			continue;
		}
		st[d] = s->dim[sd] == 1 ? 0 : acc;
		acc *= (size_t)s->dim[sd];
	}
}

static void flat_range(void *vctx, size_t i0, size_t i1)
{
	const bin_ctx *c = vctx;
	/* sa/sb[0] hold 0 or 1: scalar or same-shape operand */
	c->fn(c->op, c->o + i0, c->a + i0 * c->sa[0], c->sa[0],
	      c->b + i0 * c->sb[0], c->sb[0], i1 - i0);
}

int enpu_bcast2(enpu_row2_fn fn, int op, const enpu_view *a, const enpu_view *b,
		enpu_view *out, size_t grain, enpu_par *par)
{
	const enpu_shape *so = &out->shape;
	size_t n = numel(so);
	size_t na = numel(&a->shape), nb = numel(&b->shape);
	bin_ctx c = {.fn = fn, .op = op, .rank = so->ndim, .odim = so->dim,
		     .a = a->data, .b = b->data, .o = out->data};
	if (n == 0)
		return 0;
	if ((na == n || na == 1) && (nb == n || nb == 1)) {
		/* same shape or a one-element operand: one flat range */
		c.sa[0] = na == n ? 1 : 0;
		c.sb[0] = nb == n ? 1 : 0;
		enpu_par_for(par, n, grain, flat_range, &c);
		return 0;
	}
	bcast_strides(&a->shape, so->ndim, c.sa);
	bcast_strides(&b->shape, so->ndim, c.sb);
	c.row = (size_t)so->dim[so->ndim - 1];
	size_t rows = n / c.row;
	enpu_par_for(par, rows, c.row >= grain ? 1 : grain / c.row, bin_range, &c);
	return 0;
}

static int binary(int op, const enpu_view *in, enpu_view *out, enpu_par *par)
{
	return enpu_bcast2(bin_row, op, &in[0], &in[1], &out[0], EW_GRAIN, par);
}

/* add/sub/mul/div: out = a OP b, one IEEE float operation per element, with
 * NumPy broadcasting (shapes right-aligned, size-1 dims stretched). */
ENPU_KERNEL(add) { return binary(BIN_ADD, in, out, par); }
ENPU_KERNEL(sub) { return binary(BIN_SUB, in, out, par); }
ENPU_KERNEL(mul) { return binary(BIN_MUL, in, out, par); }
ENPU_KERNEL(div) { return binary(BIN_DIV, in, out, par); }

/* ---- unary ops ------------------------------------------------------ */

enum { UN_RELU, UN_SIGMOID, UN_TANH, UN_LEAKY, UN_CLIP, UN_GELU, UN_GELU_TANH,
       UN_EXP, UN_SQRT, UN_NEG, UN_ABS, UN_RECIP, UN_ERF, UN_LOG };

typedef struct un_ctx {
	int op;
	float alpha, lo, hi;
	const float *x;
	float *y;
} un_ctx;

/* relu: y = x > 0 ? x : (x is NaN ? x : +0). NaN propagates; -0 gives +0. */
static float relu1(float x)
{
	return x > 0.0f ? x : (x != x ? x : 0.0f);
}

/* leaky_relu: y = x >= 0 ? x : alpha * x. NaN gives alpha * NaN = NaN;
 * -0 >= 0, so -0 stays -0. */
static float leaky1(float x, float alpha)
{
	return x >= 0.0f ? x : alpha * x;
}

/* clip: t = x < lo ? lo : x; y = t > hi ? hi : t (the lower bound first, as
 * np.minimum(np.maximum(x, lo), hi)): NaN propagates, and lo > hi gives hi. */
static float clip1(float x, float lo, float hi)
{
	float t = x < lo ? lo : x;
	return t > hi ? hi : t;
}

/* gelu, approximate = none (ONNX): y = 0.5x (1 + erf(x / sqrt 2)) as
 *   t = x / 1.41421356f;  e = enpu_erff(t);  y = (0.5f * x) * (1.0f + e)  */
static float gelu1(float x)
{
	float t = x / 1.41421356237309504880f;
	float e = enpu_erff(t);
	return (0.5f * x) * (1.0f + e);
}

/* gelu, approximate = tanh: in this order, each step one float op,
 *   x3 = (x * x) * x;  v = x + 0.044715f * x3;  u = 0.7978845608028654f * v;
 *   y = (0.5f * x) * (1.0f + enpu_tanhf(u))  */
static float gelu_tanh1(float x)
{
	float x3 = (x * x) * x;
	float v = x + 0.044715f * x3;
	float u = 0.7978845608028654f * v;
	return (0.5f * x) * (1.0f + enpu_tanhf(u));
}

/* neg: flips the sign bit and nothing else (neg(+0) = -0, NaN payloads
 * kept with the sign flipped); abs clears it (abs(-0) = +0, abs(-NaN) =
 * +NaN). Bit operations, so no float arithmetic can differ between ISAs. */
static float signbit_op(float x, int clear)
{
	uint32_t u;
	memcpy(&u, &x, sizeof(u));
	u = clear ? (u & 0x7fffffffu) : (u ^ 0x80000000u);
	memcpy(&x, &u, sizeof(x));
	return x;
}

ENPU_VEC
static void un_range(void *vctx, size_t i0, size_t i1)
{
	const un_ctx *c = vctx;
	const float *x = c->x;
	float *y = c->y;
	size_t i;
	switch (c->op) {
	case UN_RELU:      for (i = i0; i < i1; i++) y[i] = relu1(x[i]); break;
	case UN_SIGMOID:   enpu_sigmoidf_n(x + i0, y + i0, i1 - i0); break;
	case UN_TANH:      for (i = i0; i < i1; i++) y[i] = enpu_tanhf(x[i]); break;
	case UN_LEAKY:     for (i = i0; i < i1; i++) y[i] = leaky1(x[i], c->alpha); break;
	case UN_CLIP:      for (i = i0; i < i1; i++) y[i] = clip1(x[i], c->lo, c->hi); break;
	case UN_GELU:      for (i = i0; i < i1; i++) y[i] = gelu1(x[i]); break;
	case UN_GELU_TANH: for (i = i0; i < i1; i++) y[i] = gelu_tanh1(x[i]); break;
	case UN_EXP:       enpu_expf_n(x + i0, y + i0, i1 - i0); break;
	case UN_SQRT:      for (i = i0; i < i1; i++) y[i] = sqrtf(x[i]); break;
	case UN_NEG:       for (i = i0; i < i1; i++) y[i] = signbit_op(x[i], 0); break;
	case UN_ABS:       for (i = i0; i < i1; i++) y[i] = signbit_op(x[i], 1); break;
	case UN_RECIP:     for (i = i0; i < i1; i++) y[i] = 1.0f / x[i]; break;
	case UN_ERF:       for (i = i0; i < i1; i++) y[i] = enpu_erff(x[i]); break;
	case UN_LOG:       for (i = i0; i < i1; i++) y[i] = enpu_logf(x[i]); break;
	}
}

static int unary(int op, const enpu_attrs *a, const enpu_view *in, enpu_view *out,
		 enpu_par *par)
{
	un_ctx c = {.op = op, .x = in[0].data, .y = out[0].data};
	if (a) {
		c.alpha = a->alpha;
		c.lo = a->min;
		c.hi = a->max;
	}
	/* the transcendental ones cost ~50x an add: smaller chunks pay off */
	size_t grain = (op == UN_RELU || op == UN_LEAKY || op == UN_CLIP || op == UN_NEG ||
			op == UN_ABS || op == UN_RECIP || op == UN_SQRT) ? EW_GRAIN : 1024;
	enpu_par_for(par, numel(&out[0].shape), grain, un_range, &c);
	return 0;
}

ENPU_KERNEL(relu) { return unary(UN_RELU, a, in, out, par); }
/* sigmoid: y = enpu_sigmoidf(x) (kmath.c: 1 / (1 + e^-x) in double, rounded once) */
ENPU_KERNEL(sigmoid) { return unary(UN_SIGMOID, a, in, out, par); }
/* tanh: y = enpu_tanhf(x) */
ENPU_KERNEL(tanh) { return unary(UN_TANH, a, in, out, par); }
ENPU_KERNEL(leaky_relu) { return unary(UN_LEAKY, a, in, out, par); }
/* int8 and uint8 data: the integer form (kernels_qew.c) */
ENPU_KERNEL(clip)
{
	if (enpu_dtype_q8(in[0].dtype))
		return enpu_k_clip_q(a, in, n_in, out, n_out, par);
	return unary(UN_CLIP, a, in, out, par);
}
ENPU_KERNEL(gelu)
{
	return unary(a && a->approximate == 1 ? UN_GELU_TANH : UN_GELU, a, in, out, par);
}

/* ---- spec v2 unary ops -------------------------------------------- */

/* exp: y = enpu_expf(x) (kmath.c: e^x in double, rounded once; NaN stays
 * NaN, x > 90 and +Inf give +Inf, x < -110 and -Inf give +0) */
ENPU_KERNEL(exp) { return unary(UN_EXP, a, in, out, par); }
/* sqrt: y = sqrtf(x), correctly rounded by IEEE 754 on every ISA:
 * sqrt(-0) = -0, sqrt(+Inf) = +Inf, x < 0 (incl. -Inf) and NaN give NaN */
ENPU_KERNEL(sqrt) { return unary(UN_SQRT, a, in, out, par); }
/* neg: y = x with its sign bit flipped (-0 -> +0, +0 -> -0, NaN -> NaN) */
ENPU_KERNEL(neg) { return unary(UN_NEG, a, in, out, par); }
/* abs: y = x with its sign bit cleared (-0 -> +0, -Inf -> +Inf, -NaN -> NaN) */
ENPU_KERNEL(abs) { return unary(UN_ABS, a, in, out, par); }
/* reciprocal: y = 1.0f / x, one IEEE float divide: 1/+0 = +Inf, 1/-0 =
 * -Inf, 1/±Inf = ±0, NaN stays NaN */
ENPU_KERNEL(reciprocal) { return unary(UN_RECIP, a, in, out, par); }
/* erf: y = enpu_erff(x) (kmath.c series; erf(±0) = ±0, erf(±Inf) = ±1,
 * NaN stays NaN) */
ENPU_KERNEL(erf) { return unary(UN_ERF, a, in, out, par); }
/* log: y = enpu_logf(x) (kmath.c: ln x in double via 2 atanh, rounded
 * once; x < 0 and -Inf give NaN, ±0 give -Inf, +Inf gives +Inf) */
ENPU_KERNEL(log) { return unary(UN_LOG, a, in, out, par); }

/* ---- batchnorm ------------------------------------------------------ */

typedef struct bn_ctx {
	const float *x, *scale, *bias, *mean, *var;
	float *y;
	float eps;
	size_t C, inner;
} bn_ctx;

/* Rows are (n, c) pairs: inner contiguous elements of one channel. */
ENPU_VEC
static void bn_range(void *vctx, size_t r0, size_t r1)
{
	const bn_ctx *b = vctx;
	for (size_t r = r0; r < r1; r++) {
		size_t ch = r % b->C;
		float d = sqrtf(b->var[ch] + b->eps);
		float mu = b->mean[ch], s = b->scale[ch], bi = b->bias[ch];
		const float *x = b->x + r * b->inner;
		float *y = b->y + r * b->inner;
		for (size_t i = 0; i < b->inner; i++)
			y[i] = ((x[i] - mu) / d) * s + bi;
	}
}

/* batchnorm (ONNX BatchNormalization, inference; inputs x, scale, bias,
 * mean, var; channel = dim 1, or dim 0 for a 1-D x). Per element, each step
 * one float op in this order:
 *   d = sqrtf(var[c] + epsilon);  y = ((x - mean[c]) / d) * scale[c] + bias[c] */
ENPU_KERNEL(batchnorm)
{
	const enpu_shape *sx = &in[0].shape;
	bn_ctx b = {.x = in[0].data, .scale = in[1].data, .bias = in[2].data,
		    .mean = in[3].data, .var = in[4].data, .y = out[0].data,
		    .eps = a ? a->epsilon : 1e-5f};
	size_t n = numel(sx);
	if (n == 0)
		return 0;
	b.C = sx->ndim >= 2 ? (size_t)sx->dim[1] : sx->ndim == 1 ? (size_t)sx->dim[0] : 1;
	b.inner = 1;
	for (int d = 2; d < sx->ndim; d++)
		b.inner *= (size_t)sx->dim[d];
	if (b.C == 0 || b.inner == 0)
		return 0;
	size_t rows = n / b.inner;
	enpu_par_for(par, rows, b.inner >= EW_GRAIN ? 1 : EW_GRAIN / b.inner, bn_range, &b);
	return 0;
}

/* order.c: the independent references of order.h and their cases.
 *
 * Every function below is written from the spec format's text, loop by
 * loop, for clarity rather than speed: one output element at a time, its
 * whole chain spelled out. Variant 0 is the documented order; the others
 * are plausible wrong orders that a faster kernel might slip into. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "order.h"
#include "kmath.h"
#include "ops.h"
#include "npz.h"

size_t ord_numel(int ndim, const int64_t *dim)
{
	size_t n = 1;
	for (int i = 0; i < ndim; i++)
		n *= (size_t)dim[i];
	return n;
}

/* ---- matmul: y[b,i,j] = chain over k ascending of fmaf(a[b,i,k], w[k,j], acc) */

static void ref_matmul(const ord_case *c, const float *const *in, float *y, int v)
{
	const ord_tensor *ta = &c->in[0], *tb = &c->in[1];
	int64_t K = ta->dim[ta->ndim - 1], M = ta->dim[ta->ndim - 2], N = tb->dim[1];
	int64_t batch = ta->ndim == 3 ? ta->dim[0] : 1;

	for (int64_t b = 0; b < batch; b++)
		for (int64_t i = 0; i < M; i++)
			for (int64_t j = 0; j < N; j++) {
				const float *a = in[0] + (b * M + i) * K, *w = in[1];
				float acc = 0.0f, odd = 0.0f;
				if (v == 0)
					for (int64_t k = 0; k < K; k++)
						acc = fmaf(a[k], w[k * N + j], acc);
				else if (v == 1)
					for (int64_t k = K - 1; k >= 0; k--)
						acc = fmaf(a[k], w[k * N + j], acc);
				else {   /* two interleaved chains, added at the end */
					for (int64_t k = 0; k < K; k++)
						if (k % 2)
							odd = fmaf(a[k], w[k * N + j], odd);
						else
							acc = fmaf(a[k], w[k * N + j], acc);
					acc = acc + odd;
				}
				y[(b * M + i) * N + j] = acc;
			}
}

/* ---- gemm: s = chain over k of fmaf(A[i,k], B[k,j], acc); y = alpha * s;
 * y = y + beta * c[j] (A = a^T when trans_a, B = b^T when trans_b) */

static void ref_gemm(const ord_case *c, const float *const *in, float *y, int v)
{
	const ord_attrs *at = &c->at;
	int64_t M = at->trans_a ? c->in[0].dim[1] : c->in[0].dim[0];
	int64_t K = at->trans_a ? c->in[0].dim[0] : c->in[0].dim[1];
	int64_t N = at->trans_b ? c->in[1].dim[0] : c->in[1].dim[1];

	for (int64_t i = 0; i < M; i++)
		for (int64_t j = 0; j < N; j++) {
			float acc = 0.0f;
			for (int64_t kk = 0; kk < K; kk++) {
				int64_t k = v == 1 ? K - 1 - kk : kk;
				float av = at->trans_a ? in[0][k * M + i] : in[0][i * K + k];
				float bv = at->trans_b ? in[1][j * K + k] : in[1][k * N + j];
				if (v == 3)
					av = at->alpha * av;
				acc = fmaf(av, bv, acc);
			}
			float cv = c->in[2].ndim == 2 ? in[2][i * N + j] : in[2][j], r;
			if (v == 2)
				r = fmaf(at->alpha, acc, at->beta * cv);
			else if (v == 4)
				r = fmaf(at->beta, cv, at->alpha * acc);
			else if (v == 3)
				r = acc + at->beta * cv;
			else {
				r = at->alpha * acc;
				r = r + at->beta * cv;
			}
			y[i * N + j] = r;
		}
}

/* ---- conv2d: acc = 0; for ci, kh, kw (outermost first): acc = fmaf(w, x,
 * acc) with x = 0.0f on a padded tap (it still takes part); y = acc + bias */

static void ref_conv2d(const ord_case *c, const float *const *in, float *y, int v)
{
	const ord_attrs *at = &c->at;
	const int64_t *xd = c->in[0].dim, *wd = c->in[1].dim;
	int64_t N = xd[0], C = xd[1], H = xd[2], W = xd[3];
	int64_t M = wd[0], Cg = wd[1], KH = wd[2], KW = wd[3];
	int64_t OH = c->out[2], OW = c->out[3], Mg = M / at->group;
	int has_bias = c->n_in == 3;

	for (int64_t n = 0; n < N; n++)
		for (int64_t m = 0; m < M; m++)
			for (int64_t oh = 0; oh < OH; oh++)
				for (int64_t ow = 0; ow < OW; ow++) {
					int64_t g = m / Mg, taps = Cg * KH * KW;
					float acc = (v == 2 && has_bias) ? in[2][m] : 0.0f;
					for (int64_t t = 0; t < taps; t++) {
						int64_t ci, i, j;
						if (v == 4) {            /* kw before kh (ci outermost) */
							ci = t / (KH * KW);
							j = (t / KH) % KW;
							i = t % KH;
						} else if (v == 1) {     /* kh, kw, ci: channels innermost */
							ci = t % Cg;
							j = (t / Cg) % KW;
							i = t / (Cg * KW);
						} else if (v == 2 && !has_bias) {   /* every tap, descending */
							int64_t r = taps - 1 - t;
							ci = r / (KH * KW);
							i = (r / KW) % KH;
							j = r % KW;
						} else {                 /* ci, kh, kw */
							ci = t / (KH * KW);
							i = (t / KW) % KH;
							j = t % KW;
						}
						int64_t ih = oh * at->strides[0] - at->pads[0] + i * at->dilations[0];
						int64_t iw = ow * at->strides[1] - at->pads[1] + j * at->dilations[1];
						float wv = in[1][((m * Cg + ci) * KH + i) * KW + j];
						int inside = ih >= 0 && ih < H && iw >= 0 && iw < W;
						float xv = inside ? in[0][((n * C + g * Cg + ci) * H + ih) * W + iw] : 0.0f;
						if (!inside && v == 3)
							continue;
						acc = fmaf(wv, xv, acc);
					}
					if (has_bias && v != 2)
						acc = acc + in[2][m];
					y[((n * M + m) * OH + oh) * OW + ow] = acc;
				}
}

/* depthwise (one channel per group, where "kh, kw, ci" is no other
 * order): variant 1 takes kw before kh, 2 is ref_conv2d's 2 (bias first,
 * or without bias every tap descending) */
static void ref_conv2d_dw(const ord_case *c, const float *const *in, float *y, int v)
{
	ref_conv2d(c, in, y, v == 1 ? 4 : v);
}

/* 1x1 (where no tap order differs from another): variant 1 is bias first */
static void ref_conv2d_pw(const ord_case *c, const float *const *in, float *y, int v)
{
	ref_conv2d(c, in, y, v == 1 ? 2 : v);
}

/* ---- conv1d (spec v2): acc = 0; for ci, then kw (outermost first):
 * acc = fmaf(w, x, acc) with x = 0.0f on a padded tap; y = acc + bias */

static void ref_conv1d(const ord_case *c, const float *const *in, float *y, int v)
{
	const ord_attrs *at = &c->at;
	const int64_t *xd = c->in[0].dim, *wd = c->in[1].dim;
	int64_t N = xd[0], C = xd[1], L = xd[2], M = wd[0], Cg = wd[1], K = wd[2];
	int64_t OL = c->out[2], Mg = M / at->group;
	int has_bias = c->n_in == 3;

	for (int64_t n = 0; n < N; n++)
		for (int64_t m = 0; m < M; m++)
			for (int64_t ol = 0; ol < OL; ol++) {
				int64_t g = m / Mg;
				float acc = v == 2 && has_bias ? in[2][m] : 0.0f;
				for (int64_t t = 0; t < Cg * K; t++) {
					/* v 1: kw outer, channels inner */
					int64_t ci = v == 1 ? t % Cg : t / K, k = v == 1 ? t / Cg : t % K;
					int64_t il = ol * at->strides[0] - at->pads[0] + k * at->dilations[0];
					float xv = il >= 0 && il < L ? in[0][(n * C + g * Cg + ci) * L + il] : 0.0f;
					acc = fmaf(in[1][(m * Cg + ci) * K + k], xv, acc);
				}
				if (has_bias && v != 2)
					acc = acc + in[2][m];
				y[(n * M + m) * OL + ol] = acc;
			}
}

/* ---- avgpool2d: s = 0; s = s + x over the window's valid taps, kh then
 * kw ascending; y = s / count (valid taps, or kH*kW with count_include_pad;
 * with ceil_mode the taps inside the padded input: variant 4 counts kH*kW) */

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static void ref_avgpool(const ord_case *c, const float *const *in, float *y, int v)
{
	const ord_attrs *at = &c->at;
	const int64_t *xd = c->in[0].dim;
	int64_t planes = xd[0] * xd[1], H = xd[2], W = xd[3], OH = c->out[2], OW = c->out[3];
	int KH = at->kernel[0], KW = at->kernel[1];

	for (int64_t p = 0; p < planes; p++)
		for (int64_t oh = 0; oh < OH; oh++)
			for (int64_t ow = 0; ow < OW; ow++) {
				int64_t hb = oh * at->strides[0] - at->pads[0];
				int64_t wb = ow * at->strides[1] - at->pads[1];
				int64_t h0 = clamp64(hb, 0, H), h1 = clamp64(hb + KH, 0, H);
				int64_t w0 = clamp64(wb, 0, W), w1 = clamp64(wb + KW, 0, W);
				const float *x = in[0] + p * H * W;
				float s = 0.0f;
				if (v == 1) {
					for (int64_t w = w0; w < w1; w++)
						for (int64_t h = h0; h < h1; h++)
							s = s + x[h * W + w];
				} else if (v == 3) {
					for (int64_t h = h1 - 1; h >= h0; h--)
						for (int64_t w = w1 - 1; w >= w0; w--)
							s = s + x[h * W + w];
				} else {
					for (int64_t h = h0; h < h1; h++)
						for (int64_t w = w0; w < w1; w++)
							s = s + x[h * W + w];
				}
				/* count_include_pad: the window clipped to the padded input */
				int64_t eh = (hb + KH < H + at->pads[2] ? hb + KH : H + at->pads[2]) - hb;
				int64_t ew = (wb + KW < W + at->pads[3] ? wb + KW : W + at->pads[3]) - wb;
				float cnt = at->count_include_pad ? (float)(v == 4 ? KH * KW : eh * ew)
								  : (float)((h1 - h0) * (w1 - w0));
				y[(p * OH + oh) * OW + ow] = v == 2 ? s * (1.0f / cnt) : s / cnt;
			}
}

/* ---- global_avgpool: s = 0; s = s + x over h*W + w ascending; y = s / (H*W) */

static void ref_gap(const ord_case *c, const float *const *in, float *y, int v)
{
	const int64_t *xd = c->in[0].dim;
	int64_t planes = xd[0] * xd[1], H = xd[2], W = xd[3], hw = H * W;

	for (int64_t p = 0; p < planes; p++) {
		const float *x = in[0] + p * hw;
		float s = 0.0f;
		if (v == 1)
			for (int64_t i = hw - 1; i >= 0; i--)
				s = s + x[i];
		else if (v == 2)
			for (int64_t w = 0; w < W; w++)
				for (int64_t h = 0; h < H; h++)
					s = s + x[h * W + w];
		else
			for (int64_t i = 0; i < hw; i++)
				s = s + x[i];
		y[p] = v == 3 ? s * (1.0f / (float)hw) : s / (float)hw;
	}
}

/* ---- softmax: m = max; e_i = exp(x_i - m); s = 0, s = s + e_i ascending;
 * y_i = e_i / s */

static void ref_softmax(const ord_case *c, const float *const *in, float *y, int v)
{
	const ord_tensor *t = &c->in[0];
	int64_t outer = 1, len = t->dim[c->at.axis], inner = 1;

	for (int d = 0; d < c->at.axis; d++)
		outer *= t->dim[d];
	for (int d = c->at.axis + 1; d < t->ndim; d++)
		inner *= t->dim[d];
	for (int64_t o = 0; o < outer; o++)
		for (int64_t q = 0; q < inner; q++) {
			const float *x = in[0] + o * len * inner + q;
			float *yy = y + o * len * inner + q;
			float m = -INFINITY, s = 0.0f;
			for (int64_t i = 0; i < len; i++)
				if (x[i * inner] > m)
					m = x[i * inner];
			if (v == 3)
				m = 0.0f;
			for (int64_t i = 0; i < len; i++)
				yy[i * inner] = enpu_expf(x[i * inner] - m);
			if (v == 1)
				for (int64_t i = len - 1; i >= 0; i--)
					s = s + yy[i * inner];
			else
				for (int64_t i = 0; i < len; i++)
					s = s + yy[i * inner];
			for (int64_t i = 0; i < len; i++)
				yy[i * inner] = v == 2 ? yy[i * inner] * (1.0f / s) : yy[i * inner] / s;
		}
}

/* ---- batchnorm: y = ((x - mean) / sqrtf(var + eps)) * scale + bias */

static void ref_batchnorm(const ord_case *c, const float *const *in, float *y, int v)
{
	const ord_tensor *t = &c->in[0];
	int64_t C = t->dim[1], inner = ord_numel(t->ndim - 2, t->dim + 2), rows = t->dim[0] * C;

	for (int64_t r = 0; r < rows; r++) {
		int64_t ch = r % C;
		float sc = in[1][ch], bi = in[2][ch], mu = in[3][ch];
		float d = sqrtf(in[4][ch] + c->at.epsilon);
		for (int64_t i = 0; i < inner; i++) {
			float x = in[0][r * inner + i], o;
			if (v == 1)
				o = ((x - mu) * (1.0f / d)) * sc + bi;
			else if (v == 2)
				o = x * (sc / d) + (bi - mu * (sc / d));
			else if (v == 3)
				o = ((x - mu) * sc) / d + bi;
			else
				o = ((x - mu) / d) * sc + bi;
			y[r * inner + i] = o;
		}
	}
}

/* ---- gelu: none: t = x / 1.41421356f; y = (0.5f * x) * (1.0f + erf(t));
 * tanh: x3 = (x * x) * x; v = x + 0.044715f * x3; u = 0.7978845608f * v;
 * y = (0.5f * x) * (1.0f + tanh(u)) */

static void ref_gelu(const ord_case *c, const float *const *in, float *y, int v)
{
	size_t n = ord_numel(c->in[0].ndim, c->in[0].dim);

	for (size_t i = 0; i < n; i++) {
		float x = in[0][i], o;
		if (c->at.approximate == 0) {
			float t = v == 1 ? x * 0.70710678118654752f : x / 1.41421356f;
			float e = enpu_erff(t);
			o = v == 2 ? 0.5f * (x + x * e) : (0.5f * x) * (1.0f + e);
		} else {
			float x3 = (x * x) * x;
			float vv = v == 1 ? fmaf(0.044715f, x3, x) : x + 0.044715f * x3;
			float u = v == 2 ? 0.7978845608028654f * x + (0.7978845608028654f * 0.044715f) * x3
					 : 0.7978845608028654f * vv;
			o = (0.5f * x) * (1.0f + enpu_tanhf(u));
		}
		y[i] = o;
	}
}

/* ---- the cases -------------------------------------------------------- */

#define IN(n, nd, ...) {n, 0, nd, {__VA_ARGS__}, ORD_WIDE}
#define INg(n, g, nd, ...) {n, 0, nd, {__VA_ARGS__}, g}
#define WT(n, nd, ...) {n, 1, nd, {__VA_ARGS__}, ORD_WIDE}
#define WTg(n, g, nd, ...) {n, 1, nd, {__VA_ARGS__}, g}
#define CONV(sh, sw, pt, pl, pb, pr, dh, dw, g) \
	{.strides = {sh, sw}, .pads = {pt, pl, pb, pr}, .dilations = {dh, dw}, .group = g}
#define POOL(kh, kw, sh, sw, pt, pl, pb, pr, inc) \
	{.kernel = {kh, kw}, .strides = {sh, sw}, .pads = {pt, pl, pb, pr}, .count_include_pad = inc}

const ord_case ord_cases[] = {
	{"order_matmul_k37", "matmul", {.axis = 0}, 2, {IN("x", 2, 3, 37), WT("w", 2, 37, 5)},
	 2, {3, 5}, ref_matmul, 2, {NULL, "k descending", "two interleaved chains"}},
	{"order_matmul_batch", "matmul", {.axis = 0}, 2, {IN("x", 3, 2, 3, 19), WT("w", 2, 19, 4)},
	 3, {2, 3, 4}, ref_matmul, 2, {NULL, "k descending", "two interleaved chains"}},
	{"order_gemm_trans_ab", "gemm", {.alpha = 0.7f, .beta = -1.3f, .trans_a = 1, .trans_b = 1},
	 3, {IN("x", 2, 13, 3), WT("w", 2, 4, 13), WT("c", 1, 4)},
	 2, {3, 4}, ref_gemm, 3,
	 {NULL, "k descending", "fmaf(alpha, s, beta*c)", "alpha folded into a"}},
	/* s and beta*c of one size, so that how they are added shows */
	{"order_gemm_c_full", "gemm", {.alpha = -1.7f, .beta = 0.45f},
	 3, {INg("x", ORD_SOFT, 2, 12, 11), WTg("w", ORD_SOFT, 2, 11, 16), WTg("c", ORD_SOFT, 2, 12, 16)},
	 2, {12, 16}, ref_gemm, 4,
	 {NULL, "k descending", "fmaf(alpha, s, beta*c)", "alpha folded into a",
	  "fmaf(beta, c, alpha*s)"}},
	{"order_conv_pad_stride_dil", "conv2d", CONV(2, 1, 1, 2, 0, 1, 1, 2, 1),
	 3, {IN("x", 4, 1, 3, 7, 8), WT("w", 4, 4, 3, 3, 3), WT("b", 1, 4)},
	 4, {1, 4, 3, 7}, ref_conv2d, 2, {NULL, "kh, kw, ci order", "bias first"}},
	{"order_conv_group", "conv2d", CONV(1, 1, 1, 1, 1, 1, 1, 1, 2),
	 3, {IN("x", 4, 1, 4, 6, 6), WT("w", 4, 6, 2, 3, 3), WT("b", 1, 6)},
	 4, {1, 6, 6, 6}, ref_conv2d, 2, {NULL, "kh, kw, ci order", "bias first"}},
	/* products past gemm.h's small size, so that the packed GEMM core
	 * runs: M, N ragged against every micro-tile, K past one K block
	 * (ENPU_GEMM_KC 256, so the partial sums wait in C between blocks) */
	{"order_matmul_packed", "matmul", {.axis = 0}, 2, {IN("x", 2, 29, 300), WT("w", 2, 300, 45)},
	 2, {29, 45}, ref_matmul, 2, {NULL, "k descending", "two interleaved chains"}},
	{"order_gemm_packed_trans_c", "gemm", {.alpha = -1.7f, .beta = 0.45f, .trans_a = 1, .trans_b = 1},
	 3, {INg("x", ORD_SOFT, 2, 270, 37), WTg("w", ORD_SOFT, 2, 50, 270), WTg("c", ORD_SOFT, 2, 37, 50)},
	 2, {37, 50}, ref_gemm, 4,
	 {NULL, "k descending", "fmaf(alpha, s, beta*c)", "alpha folded into a",
	  "fmaf(beta, c, alpha*s)"}},
	{"order_conv_im2col", "conv2d", CONV(1, 2, 1, 2, 2, 1, 2, 1, 1),
	 3, {IN("x", 4, 1, 6, 20, 23), WT("w", 4, 13, 6, 3, 3), WT("b", 1, 13)},
	 4, {1, 13, 19, 12}, ref_conv2d, 2, {NULL, "kh, kw, ci order", "bias first"}},
	{"order_conv_im2col_group", "conv2d", CONV(1, 1, 1, 1, 1, 1, 1, 1, 2),
	 2, {IN("x", 4, 1, 8, 15, 17), WT("w", 4, 10, 4, 3, 3)},
	 4, {1, 10, 15, 17}, ref_conv2d, 2, {NULL, "kh, kw, ci order", "every tap descending"}},
	{"order_conv_pointwise", "conv2d", CONV(1, 1, 0, 0, 0, 0, 1, 1, 1),
	 3, {IN("x", 4, 2, 40, 9, 11), WT("w", 4, 24, 40, 1, 1), WT("b", 1, 24)},
	 4, {2, 24, 9, 11}, ref_conv2d_pw, 1, {NULL, "bias first"}},
	/* depthwise: rows wider than one vector (16 lanes) with padding at
	 * both ends; then stride 2, dilation 2 and two outputs per channel */
	{"order_conv_depthwise", "conv2d", CONV(1, 1, 1, 1, 1, 1, 1, 1, 5),
	 3, {IN("x", 4, 1, 5, 7, 37), WT("w", 4, 5, 1, 3, 3), WT("b", 1, 5)},
	 4, {1, 5, 7, 37}, ref_conv2d_dw, 2, {NULL, "kw before kh", "bias first"}},
	{"order_conv_depthwise_s2_dil", "conv2d", CONV(2, 2, 2, 1, 0, 2, 2, 2, 3),
	 2, {IN("x", 4, 2, 3, 9, 40), WT("w", 4, 6, 1, 3, 5)},
	 4, {2, 6, 4, 18}, ref_conv2d_dw, 2, {NULL, "kw before kh", "every tap descending"}},
	/* a +inf weight: on a padded tap fmaf(inf, 0.0f, acc) makes the sum NaN,
	 * as ONNX's zero padding does (skipping the tap would give +-inf); the
	 * NaN it creates has an ISA-specific sign until the result is written */
	{"order_conv_pad_inf", "conv2d", CONV(1, 1, 1, 1, 1, 1, 1, 1, 1),
	 2, {IN("x", 4, 1, 2, 5, 5), WTg("w", ORD_WIDE_INF, 4, 2, 2, 3, 3)},
	 4, {1, 2, 5, 5}, ref_conv2d, 3,
	 {NULL, "kh, kw, ci order", "all taps descending", "padded taps skipped"}},
	{"order_avgpool_exclude_pad", "avgpool2d", POOL(3, 3, 2, 2, 1, 1, 1, 1, 0),
	 1, {IN("x", 4, 1, 2, 7, 7)}, 4, {1, 2, 4, 4}, ref_avgpool, 3,
	 {NULL, "kw then kh", "times 1/count", "descending"}},
	{"order_avgpool_include_pad", "avgpool2d", POOL(3, 2, 1, 2, 1, 0, 1, 1, 1),
	 1, {IN("x", 4, 1, 3, 6, 7)}, 4, {1, 3, 6, 4}, ref_avgpool, 3,
	 {NULL, "kw then kh", "times 1/count", "descending"}},
	/* spec v2: the last ceil window runs past the end pads in both dims */
	{"order_avgpool_ceil_include_pad", "avgpool2d",
	 {.kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1}, .count_include_pad = 1,
	  .ceil_mode = 1},
	 1, {IN("x", 4, 1, 2, 8, 8)}, 4, {1, 2, 5, 5}, ref_avgpool, 4,
	 {NULL, "kw then kh", "times 1/count", "descending", "ceil window counts kH*kW"}},
	{"order_conv1d_group_pad_dil", "conv1d",
	 {.strides = {2}, .pads = {2, 1}, .dilations = {2}, .group = 2},
	 3, {IN("x", 3, 2, 4, 13), WT("w", 3, 6, 2, 3), WT("b", 1, 6)},
	 3, {2, 6, 6}, ref_conv1d, 2, {NULL, "kw, ci order", "bias first"}},
	{"order_global_avgpool", "global_avgpool", {.axis = 0},
	 1, {IN("x", 4, 3, 8, 5, 7)}, 4, {3, 8, 1, 1}, ref_gap, 3,
	 {NULL, "descending", "w outer, h inner", "times 1/(H*W)"}},
	{"order_softmax_last", "softmax", {.axis = 1},
	 1, {INg("x", ORD_SOFT, 2, 3, 17)}, 2, {3, 17}, ref_softmax, 3,
	 {NULL, "sum descending", "times 1/s", "no max subtracted"}},
	{"order_softmax_mid", "softmax", {.axis = 1},
	 1, {INg("x", ORD_SOFT, 3, 2, 9, 3)}, 3, {2, 9, 3}, ref_softmax, 3,
	 {NULL, "sum descending", "times 1/s", "no max subtracted"}},
	{"order_batchnorm", "batchnorm", {.epsilon = 1e-3f},
	 5, {IN("x", 4, 2, 3, 4, 5), WT("scale", 1, 3), WT("bias", 1, 3), WT("mean", 1, 3),
	     WTg("var", ORD_POS, 1, 3)},
	 4, {2, 3, 4, 5}, ref_batchnorm, 3,
	 {NULL, "times 1/d", "folded into x*a + b", "scale before the division"}},
	{"order_gelu_none", "gelu", {.approximate = 0},
	 1, {INg("x", ORD_GELU, 2, 4, 32)}, 2, {4, 32}, ref_gelu, 2,
	 {NULL, "x times 1/sqrt2", "0.5f * (x + x*e)"}},
	{"order_gelu_tanh", "gelu", {.approximate = 1},
	 1, {INg("x", ORD_GELU, 2, 4, 32)}, 2, {4, 32}, ref_gelu, 2,
	 {NULL, "fused x + 0.044715*x3", "0.79788456 distributed"}},
	/* spec v2 (order_reduce.c) */
	{"order_reduce_sum_axes02", "reduce_sum", {.axes = {0, 2}, .n_axes = 2, .keepdims = 1},
	 1, {IN("x", 4, 3, 5, 4, 6)}, 4, {1, 5, 1, 6}, ord_ref_reduce, 2,
	 {NULL, "descending", "two interleaved chains"}},
	{"order_reduce_mean_all", "reduce_mean", {.keepdims = 0},
	 1, {IN("x", 3, 5, 7, 9)}, 0, {0}, ord_ref_reduce, 2,
	 {NULL, "descending", "two interleaved chains"}},
	{"order_reduce_mean_last", "reduce_mean", {.axes = {1}, .n_axes = 1, .keepdims = 0},
	 1, {IN("x", 2, 6, 33)}, 1, {6}, ord_ref_reduce, 3,
	 {NULL, "descending", "two interleaved chains", "times 1/count"}},
	{"order_layer_norm_last", "layer_norm", {.axis = 1, .epsilon = 1e-5f},
	 3, {IN("x", 2, 4, 24), WT("scale", 1, 24), WT("bias", 1, 24)}, 2, {4, 24},
	 ord_ref_layer_norm, 3, {NULL, "var by q + d*d", "times 1/den", "scale before the division"}},
	{"order_layer_norm_axis1", "layer_norm", {.axis = 1, .epsilon = 1e-3f},
	 2, {IN("x", 4, 8, 3, 4, 5), WT("scale", 2, 4, 1)}, 4, {8, 3, 4, 5},
	 ord_ref_layer_norm, 3, {NULL, "var by q + d*d", "times 1/den", "scale before the division"}},
	/* spec v2: conv_transpose2d (order_convt.c) */
	{"order_convt_stride_pad", "conv_transpose2d",
	 {.strides = {2, 2}, .pads = {1, 0, 0, 1}, .dilations = {1, 1}, .group = 1,
	  .output_padding = {1, 1}},
	 3, {IN("x", 4, 1, 3, 4, 5), WT("w", 4, 3, 2, 3, 3), WT("b", 1, 2)},
	 4, {1, 2, 9, 11}, ord_ref_conv_transpose2d, 2, {NULL, "kh, kw, ci order", "bias first"}},
	{"order_convt_group_dil", "conv_transpose2d",
	 {.strides = {1, 2}, .pads = {0, 1, 1, 0}, .dilations = {2, 1}, .group = 2},
	 3, {IN("x", 4, 1, 4, 3, 3), WT("w", 4, 4, 2, 2, 3), WT("b", 1, 4)},
	 4, {1, 4, 4, 6}, ord_ref_conv_transpose2d, 2, {NULL, "kh, kw, ci order", "bias first"}},
	/* a +inf weight: the taps between input pixels are skipped, so it never
	 * meets a 0.0f there (a dense GEMM of the zero-inserted input would
	 * make those sums NaN) */
	{"order_convt_inf", "conv_transpose2d",
	 {.strides = {2, 2}, .dilations = {1, 1}, .group = 1},
	 3, {IN("x", 4, 1, 2, 3, 3), WTg("w", ORD_WIDE_INF, 4, 2, 2, 3, 3), WT("b", 1, 2)},
	 4, {1, 2, 7, 7}, ord_ref_conv_transpose2d, 3,
	 {NULL, "kh, kw, ci order", "bias first", "zero-inserted taps added as 0.0f"}},
	/* resize, linear (order_convt.c) */
	{"order_resize_half_pixel", "resize", {.coord = 0, .scales = {2.5f, 1.5f}},
	 1, {IN("x", 4, 1, 2, 5, 6)}, 4, {1, 2, 12, 9}, ord_ref_resize_linear, 3,
	 {NULL, "bottom row first", "lerp a + f*(b - a)", "columns first"}},
	{"order_resize_align_sizes", "resize", {.coord = 2, .sizes = {6, 4}},
	 1, {IN("x", 4, 1, 2, 4, 9)}, 4, {1, 2, 6, 4}, ord_ref_resize_linear, 3,
	 {NULL, "bottom row first", "lerp a + f*(b - a)", "columns first"}},
	{"order_resize_pytorch_down", "resize", {.coord = 3, .scales = {0.6f, 0.75f}},
	 1, {IN("x", 4, 1, 1, 10, 10)}, 4, {1, 1, 6, 7}, ord_ref_resize_linear, 3,
	 {NULL, "bottom row first", "lerp a + f*(b - a)", "columns first"}},
};
const int ord_n_cases = (int)(sizeof ord_cases / sizeof ord_cases[0]);

/* ---- inputs ----------------------------------------------------------- */

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static float unit(uint64_t *s)   /* [0, 1) with 24 bits */
{
	return (float)(splitmix(s) >> 40) * 0x1p-24f;
}

void ord_make_inputs(const ord_case *c, float **in)
{
	for (int t = 0; t < c->n_in; t++) {
		const ord_tensor *d = &c->in[t];
		size_t n = ord_numel(d->ndim, d->dim);
		uint64_t s = 1469598103934665603ull;
		for (const char *p = c->name; *p; p++)
			s = (s ^ (unsigned char)*p) * 1099511628211ull;
		s ^= (uint64_t)(t + 1) * 0x2545f4914f6cdd1dull;
		in[t] = malloc((n ? n : 1) * sizeof(float));
		if (!in[t])
			abort();
		for (size_t i = 0; i < n; i++) {
			float u = unit(&s), x;
			switch (d->gen) {
			case ORD_SOFT: x = -8.0f + 16.0f * u; break;
			case ORD_GELU: x = -6.0f + 12.0f * u; break;
			case ORD_POS:  x = 0.05f + 3.95f * u; break;
			default: {
				int e = (int)(splitmix(&s) % 17) - 8;
				x = ldexpf(1.0f + u, e);
				if (splitmix(&s) & 1)
					x = -x;
			}
			}
			in[t][i] = x;
		}
		if (d->gen == ORD_WIDE_INF && n)
			in[t][0] = INFINITY;
	}
}

/* ---- spec.yaml --------------------------------------------------------- */

#define PUT(...) do { \
	int k_ = snprintf(buf + len, len < cap ? cap - len : 0, __VA_ARGS__); \
	if (k_ < 0) return -1; \
	len += (size_t)k_; \
} while (0)

static const char *ord_coord_name(int coord)
{
	static const char *const names[] = {"half_pixel", "asymmetric", "align_corners",
					    "pytorch_half_pixel"};

	return coord >= 0 && coord < 4 ? names[coord] : "?";
}

int ord_spec_yaml(const ord_case *c, char *buf, size_t cap)
{
	const ord_attrs *a = &c->at;
	size_t len = 0;
	char v2[128];
	const enpu_opdef *od = enpu_op_by_name(c->op);

	ord_v2_attrs(c, v2, sizeof v2);
	PUT("eulernpu: %d\nname: %s\nbackend: cpu_ref\ninputs:\n",
	    (od ? od->since : 1) > 1 || a->ceil_mode ? 2 : 1, c->name);
	for (int pass = 0; pass < 2; pass++) {
		int n = 0;
		if (pass == 1) {
			for (int t = 0; t < c->n_in; t++)
				n += c->in[t].weight;
			PUT("outputs: [y]\nweights:%s\n", n ? "" : " []");
		}
		for (int t = 0; t < c->n_in; t++) {
			const ord_tensor *d = &c->in[t];
			if (d->weight != pass)
				continue;
			PUT("  - {name: %s, dtype: float32, shape: [", d->name);
			for (int i = 0; i < d->ndim; i++)
				PUT("%s%lld", i ? ", " : "", (long long)d->dim[i]);
			PUT("]}\n");
		}
	}
	PUT("components:\n  - name: main\n    ops:\n      - {name: op0, op: %s, in: [", c->op);
	for (int t = 0; t < c->n_in; t++)
		PUT("%s%s", t ? ", " : "", c->in[t].name);
	PUT("], out: y");
	if (!strcmp(c->op, "gemm"))
		PUT(", attrs: {alpha: %.9g, beta: %.9g, trans_a: %d, trans_b: %d}", (double)a->alpha,
		    (double)a->beta, a->trans_a, a->trans_b);
	else if (!strcmp(c->op, "conv2d"))
		PUT(", attrs: {strides: [%d, %d], pads: [%d, %d, %d, %d], dilations: [%d, %d], group: %d}",
		    a->strides[0], a->strides[1], a->pads[0], a->pads[1], a->pads[2], a->pads[3],
		    a->dilations[0], a->dilations[1], a->group);
	else if (!strcmp(c->op, "conv1d"))
		PUT(", attrs: {strides: [%d], pads: [%d, %d], dilations: [%d], group: %d}",
		    a->strides[0], a->pads[0], a->pads[1], a->dilations[0], a->group);
	else if (!strcmp(c->op, "avgpool2d"))
		PUT(", attrs: {kernel: [%d, %d], strides: [%d, %d], pads: [%d, %d, %d, %d], "
		    "count_include_pad: %d%s}", a->kernel[0], a->kernel[1], a->strides[0], a->strides[1],
		    a->pads[0], a->pads[1], a->pads[2], a->pads[3], a->count_include_pad,
		    a->ceil_mode ? ", ceil_mode: 1" : "");
	else if (!strcmp(c->op, "softmax"))
		PUT(", attrs: {axis: %d}", a->axis);
	else if (!strcmp(c->op, "batchnorm"))
		PUT(", attrs: {epsilon: %.9g}", (double)a->epsilon);
	else if (!strcmp(c->op, "gelu"))
		PUT(", attrs: {approximate: %s}", a->approximate ? "tanh" : "none");
	else if (!strcmp(c->op, "conv_transpose2d"))
		PUT(", attrs: {strides: [%d, %d], pads: [%d, %d, %d, %d], output_padding: [%d, %d], "
		    "dilations: [%d, %d], group: %d}", a->strides[0], a->strides[1], a->pads[0],
		    a->pads[1], a->pads[2], a->pads[3], a->output_padding[0], a->output_padding[1],
		    a->dilations[0], a->dilations[1], a->group);
	else if (!strcmp(c->op, "resize") && a->sizes[0] > 0)
		PUT(", attrs: {mode: linear, coordinate_transformation_mode: %s, sizes: [%d, %d]}",
		    ord_coord_name(a->coord), a->sizes[0], a->sizes[1]);
	else if (!strcmp(c->op, "resize"))
		PUT(", attrs: {mode: linear, coordinate_transformation_mode: %s, scales: [%.9g, %.9g]}",
		    ord_coord_name(a->coord), (double)a->scales[0], (double)a->scales[1]);
	else
		PUT("%s", v2);
	PUT("}\n");
	return len < cap ? (int)len : -1;
}

void ord_reference(const ord_case *c, const float *const *in, float *y)
{
	static const uint32_t qnan = 0x7fc00000u;
	size_t n = ord_numel(c->out_ndim, c->out);

	c->fn(c, in, y, 0);
	for (size_t i = 0; i < n; i++)
		if (isnan(y[i]))
			memcpy(&y[i], &qnan, sizeof qnan);
}

/* ---- a case as a model directory -------------------------------------- */

static int push(enpu_tlist *l, const char *name, int ndim, const int64_t *dim, const float *data,
		enpu_err *e)
{
	enpu_tensor t = {0};
	size_t n = ord_numel(ndim, dim);

	t.name = strdup(name);
	t.dtype = ENPU_DT_F32;
	t.shape.ndim = ndim;
	for (int i = 0; i < ndim; i++)
		t.shape.dim[i] = dim[i];
	t.data = malloc((n ? n : 1) * sizeof(float));
	if (!t.name || !t.data) {
		free(t.name);
		free(t.data);
		return -1;
	}
	memcpy(t.data, data, n * sizeof(float));
	return enpu_tlist_push(l, &t, e);
}

int ord_write_case(const ord_case *c, const char *dir, char *why, size_t cap)
{
	enpu_tlist lw = ENPU_TLIST_INIT, li = ENPU_TLIST_INIT, lx = ENPU_TLIST_INIT;
	enpu_err e = ENPU_ERR_INIT;
	float *in[ORD_MAX_IN] = {0}, *y;
	char spec[4096], path[1024];
	int rc = -1, len = ord_spec_yaml(c, spec, sizeof spec);

	y = malloc(ord_numel(c->out_ndim, c->out) * sizeof(float));
	if (len < 0 || !y) {
		snprintf(why, cap, "%s: spec or output buffer", c->name);
		free(y);
		return -1;
	}
	ord_make_inputs(c, in);
	ord_reference(c, (const float *const *)in, y);
	snprintf(path, sizeof path, "%s/spec.yaml", dir);
	if (enpu_write_file_atomic(path, spec, (size_t)len, &e) < 0)
		goto out;
	for (int t = 0; t < c->n_in; t++)
		if (push(c->in[t].weight ? &lw : &li, c->in[t].name, c->in[t].ndim, c->in[t].dim,
			 in[t], &e) < 0)
			goto out;
	if (push(&lx, "y", c->out_ndim, c->out, y, &e) < 0)
		goto out;
	snprintf(path, sizeof path, "%s/weights.npz", dir);
	if (enpu_npz_write(path, &lw, &e) < 0)
		goto out;
	snprintf(path, sizeof path, "%s/input.npz", dir);
	if (enpu_npz_write(path, &li, &e) < 0)
		goto out;
	snprintf(path, sizeof path, "%s/expected.npz", dir);
	if (enpu_npz_write(path, &lx, &e) < 0)
		goto out;
	rc = 0;
out:
	if (rc < 0)
		snprintf(why, cap, "%s: writing %s: %s", c->name, path, e.message);
	for (int t = 0; t < c->n_in; t++)
		free(in[t]);
	free(y);
	enpu_tlist_free(&lw);
	enpu_tlist_free(&li);
	enpu_tlist_free(&lx);
	return rc;
}

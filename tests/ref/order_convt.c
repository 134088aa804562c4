/* order_convt.c: the independent references (order.h) of spec v2's
 * conv_transpose2d and resize (linear), written from docs/spec-format.md's
 * reference arithmetic, one output element at a time; no kernel code.
 * Variant 0 is the documented order; the others are plausible wrong ones. */
#include <math.h>
#include <stdint.h>
#include "order.h"

/* ---- conv_transpose2d: acc = 0; for ci of the group, kh, kw ascending
 * (ci outermost), every tap with oh + pt - kh*dh = ih*sh and ow + pl -
 * kw*dw = iw*sw (exact, in range): acc = fmaf(x, w, acc); y = acc + bias.
 * Variants: 1 kh, kw, ci (channels innermost); 2 bias first; 3 every tap
 * of the zero-inserted input, 0.0f between pixels (a dense GEMM). */

void ord_ref_conv_transpose2d(const ord_case *c, const float *const *in, float *y, int v)
{
	const ord_attrs *at = &c->at;
	const int64_t *xd = c->in[0].dim, *wd = c->in[1].dim;
	int64_t N = xd[0], C = xd[1], H = xd[2], W = xd[3];
	int64_t Mg = wd[1], KH = wd[2], KW = wd[3], Cg = C / at->group;
	int64_t M = Mg * at->group, OH = c->out[2], OW = c->out[3];
	int has_bias = c->n_in == 3;

	for (int64_t n = 0; n < N; n++)
		for (int64_t m = 0; m < M; m++)
			for (int64_t oh = 0; oh < OH; oh++)
				for (int64_t ow = 0; ow < OW; ow++) {
					int64_t g = m / Mg, mm = m % Mg, taps = Cg * KH * KW;
					float acc = (v == 2 && has_bias) ? in[2][m] : 0.0f;

					for (int64_t t = 0; t < taps; t++) {
						int64_t ci, i, j;

						if (v == 1) {
							ci = t % Cg;
							j = (t / Cg) % KW;
							i = t / (Cg * KW);
						} else {
							ci = t / (KH * KW);
							i = (t / KW) % KH;
							j = t % KW;
						}
						int64_t th = oh + at->pads[0] - i * at->dilations[0];
						int64_t tw = ow + at->pads[1] - j * at->dilations[1];
						int hit = th >= 0 && tw >= 0 && th % at->strides[0] == 0 &&
							  tw % at->strides[1] == 0 &&
							  th / at->strides[0] < H && tw / at->strides[1] < W;
						int64_t ch = g * Cg + ci;
						float wv = in[1][((ch * Mg + mm) * KH + i) * KW + j];

						if (hit)
							acc = fmaf(in[0][((n * C + ch) * H + th / at->strides[0]) * W +
									 tw / at->strides[1]], wv, acc);
						else if (v == 3)
							acc = fmaf(0.0f, wv, acc);
					}
					if (has_bias && v != 2)
						acc = acc + in[2][m];
					y[((n * M + m) * OH + oh) * OW + ow] = acc;
				}
}

/* ---- resize, linear: per axis, with s the scale (sizes: (float)out /
 * (float)in) and L the resized length ((float)in * s with scales, out
 * with sizes), x_original in float:
 *   half_pixel ((float)o + 0.5f) / s - 0.5f; pytorch_half_pixel the same
 *   when L > 1, else 0; asymmetric (float)o / s; align_corners
 *   ((float)o * (float)(in - 1)) / (L - 1.0f), 0 when L == 1;
 * fl = floorf(xo), f = xo - fl, taps fl and fl + 1 clamped to [0, in - 1],
 * weights 1 - f and f. Per output: top = fmaf(wr, x[t,r], fmaf(wl, x[t,l],
 * 0)); bot likewise; y = fmaf(wb, bot, fmaf(wt, top, 0)).
 * Variants: 1 the bottom row first; 2 a + f * (b - a) (lerp); 3 columns
 * first (the vertical blends, then the horizontal). */

typedef struct axis_tap {
	int64_t i0, i1;
	float w0, w1;
} axis_tap;

static axis_tap axis_map(const ord_attrs *at, int ax, int64_t o, int64_t n_in, int64_t n_out)
{
	int by_sizes = at->sizes[ax] > 0;
	float s = by_sizes ? (float)n_out / (float)n_in : at->scales[ax];
	float L = by_sizes ? (float)n_out : (float)n_in * s, xo;
	axis_tap t;

	if (at->coord == 1)
		xo = (float)o / s;
	else if (at->coord == 2)
		xo = L == 1.0f ? 0.0f : ((float)o * (float)(n_in - 1)) / (L - 1.0f);
	else if (at->coord == 3 && !(L > 1.0f))
		xo = 0.0f;
	else
		xo = ((float)o + 0.5f) / s - 0.5f;
	float fl = floorf(xo), f = xo - fl;
	int64_t i = (int64_t)fl;

	t.i0 = i < 0 ? 0 : i > n_in - 1 ? n_in - 1 : i;
	t.i1 = i + 1 < 0 ? 0 : i + 1 > n_in - 1 ? n_in - 1 : i + 1;
	t.w0 = 1.0f - f;
	t.w1 = f;
	return t;
}

static float blend(float a, float b, const axis_tap *t, int v)
{
	if (v == 2)
		return a + t->w1 * (b - a);
	return fmaf(t->w1, b, fmaf(t->w0, a, 0.0f));
}

void ord_ref_resize_linear(const ord_case *c, const float *const *in, float *y, int v)
{
	const int64_t *xd = c->in[0].dim;
	int64_t planes = xd[0] * xd[1], H = xd[2], W = xd[3], OH = c->out[2], OW = c->out[3];

	for (int64_t p = 0; p < planes; p++)
		for (int64_t oh = 0; oh < OH; oh++)
			for (int64_t ow = 0; ow < OW; ow++) {
				axis_tap ty = axis_map(&c->at, 0, oh, H, OH);
				axis_tap tx = axis_map(&c->at, 1, ow, W, OW);
				const float *x = in[0] + p * H * W;
				float r;

				if (v == 3) {
					float l = blend(x[ty.i0 * W + tx.i0], x[ty.i1 * W + tx.i0], &ty, 0);
					float rr = blend(x[ty.i0 * W + tx.i1], x[ty.i1 * W + tx.i1], &ty, 0);
					r = blend(l, rr, &tx, 0);
				} else {
					float top = blend(x[ty.i0 * W + tx.i0], x[ty.i0 * W + tx.i1], &tx, v);
					float bot = blend(x[ty.i1 * W + tx.i0], x[ty.i1 * W + tx.i1], &tx, v);
					if (v == 1)
						r = fmaf(ty.w0, top, fmaf(ty.w1, bot, 0.0f));
					else
						r = blend(top, bot, &ty, v);
				}
				y[(p * OH + oh) * OW + ow] = r;
			}
}

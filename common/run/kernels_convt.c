/* kernels_convt.c: the cpu_ref kernels of spec v2's conv_transpose2d (ONNX
 * ConvTranspose) and resize (ONNX Resize over H and W, nearest and linear).
 * Their exact float order is written at each kernel and in
 * docs/spec-format.md ("Reference arithmetic"); tests/ref/order.c holds an
 * independent reference of both. Threads split the outputs only. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include "kernels.h"

/* ---- conv_transpose2d ---------------------------------------------- */

typedef struct convt_ctx {
	const float *x, *w, *bias;
	float *y;
	int64_t C, H, W, Mg, kH, kW, OH, OW, Cg;
	size_t M;
	int sh, sw, dh, dw, pt, pl;
} convt_ctx;

/* The input index a tap reads: o + p - k*d = i*s with 0 <= i < n, else -1. */
static int64_t convt_src(int64_t o, int p, int64_t k, int d, int s, int64_t n)
{
	int64_t t = o + p - k * d;

	if (t < 0 || t % s)
		return -1;
	t /= s;
	return t < n ? t : -1;
}

/* one output plane (n, m) per index */
static void convt_range(void *vctx, size_t p0, size_t p1)
{
	const convt_ctx *c = vctx;

	for (size_t p = p0; p < p1; p++) {
		int64_t n = (int64_t)(p / c->M), m = (int64_t)(p % c->M);
		int64_t g = m / c->Mg, mm = m % c->Mg;
		float *y = c->y + p * (size_t)(c->OH * c->OW);

		for (int64_t oh = 0; oh < c->OH; oh++)
			for (int64_t ow = 0; ow < c->OW; ow++) {
				float acc = 0.0f;

				for (int64_t ci = 0; ci < c->Cg; ci++) {
					int64_t ch = g * c->Cg + ci;
					const float *xp = c->x + (n * c->C + ch) * c->H * c->W;
					const float *wp = c->w + (ch * c->Mg + mm) * c->kH * c->kW;

					for (int64_t kh = 0; kh < c->kH; kh++) {
						int64_t ih = convt_src(oh, c->pt, kh, c->dh, c->sh, c->H);

						if (ih < 0)
							continue;
						for (int64_t kw = 0; kw < c->kW; kw++) {
							int64_t iw = convt_src(ow, c->pl, kw, c->dw, c->sw, c->W);

							if (iw >= 0)
								acc = fmaf(xp[ih * c->W + iw], wp[kh * c->kW + kw], acc);
						}
					}
				}
				y[oh * c->OW + ow] = c->bias ? acc + c->bias[m] : acc;
			}
	}
}

/* conv_transpose2d (ONNX ConvTranspose, NCHW; w is (C, M/group, kH, kW);
 * optional bias (M)), as a gather per output element. For output
 * (n, m, oh, ow) in group g = m / (M/group), mm = m % (M/group):
 *   acc = 0.0f
 *   for ci in the group's input channels ascending, then kh, then kw
 *   ascending (ci outermost), every tap with
 *     oh + pad_t - kh*dil_h = ih*stride_h and ow + pad_l - kw*dil_w = iw*stride_w
 *     (exact division, 0 <= ih < H, 0 <= iw < W):
 *       acc = fmaf(x[n, g*C/group + ci, ih, iw], w[g*C/group + ci, mm, kh, kw], acc)
 *   y = acc + bias[m]   (y = acc without bias)
 * Taps that fall between input pixels (the zero-insertion of the
 * transposed convolution) or outside the input are skipped, not added as
 * 0.0f: an infinite weight there does not make the sum NaN.
 * output_padding only adds output rows/columns (the shape rule's). */
ENPU_KERNEL(conv_transpose2d)
{
	const enpu_shape *sx = &in[0].shape, *sw = &in[1].shape, *so = &out[0].shape;
	int64_t G = a->group > 0 ? a->group : 1;
	convt_ctx c = {
		.x = in[0].data, .w = in[1].data,
		.bias = n_in >= 3 && in[2].data ? in[2].data : NULL,
		.y = out[0].data,
		.C = sx->dim[1], .H = sx->dim[2], .W = sx->dim[3],
		.Mg = sw->dim[1], .kH = sw->dim[2], .kW = sw->dim[3],
		.OH = so->dim[2], .OW = so->dim[3], .Cg = sx->dim[1] / G,
		.M = (size_t)so->dim[1],
		.sh = a->strides[0], .sw = a->strides[1],
		.dh = a->dilations[0], .dw = a->dilations[1],
		.pt = a->pads[0], .pl = a->pads[1]};
	size_t planes = (size_t)so->dim[0] * c.M;
	size_t work = (size_t)c.OH * (size_t)c.OW * (size_t)c.Cg * (size_t)c.kH * (size_t)c.kW;

	(void)n_out;
	if (planes == 0 || c.OH * c.OW == 0)
		return 0;
	enpu_par_for(par, planes, work >= 32768 ? 1 : 32768 / (work ? work : 1), convt_range, &c);
	return 0;
}

/* ---- resize --------------------------------------------------------- */

enum { RS_HALF_PIXEL, RS_ASYMMETRIC, RS_ALIGN_CORNERS, RS_PYTORCH_HALF_PIXEL };
enum { RS_PREFER_FLOOR, RS_PREFER_CEIL, RS_FLOOR, RS_CEIL };

/* One axis's mapping of output index o (0 <= o < out) to the input (in
 * pixels), precomputed once: i0, i1 the two taps (nearest: i0 only), w0,
 * w1 their weights. */
typedef struct rs_tap {
	int64_t i0, i1;
	float w0, w1;
} rs_tap;

static int64_t clampi(int64_t v, int64_t n)
{
	return v < 0 ? 0 : v >= n ? n - 1 : v;
}

/* x_original of output index o, in float (each step one rounding), with
 * s the scale as given, or (float)out / (float)in with sizes, and L the
 * resized length, (float)in * s with scales (ONNX's reference: not the
 * floored output size), (float)out with sizes:
 *   half_pixel:         ((float)o + 0.5f) / s - 0.5f
 *   pytorch_half_pixel: the same when L > 1, else 0.0f
 *   asymmetric:         (float)o / s
 *   align_corners:      ((float)o * (float)(in - 1)) / (L - 1.0f), 0.0f when L == 1 */
static float rs_coord(const enpu_attrs *a, int ax, int64_t o, int64_t n_in, int64_t n_out)
{
	int sizes = isnan(a->scales[ax]);
	float s = sizes ? (float)n_out / (float)n_in : a->scales[ax];
	float L = sizes ? (float)n_out : (float)n_in * s;

	switch (a->coord_mode) {
	case RS_ASYMMETRIC:
		return (float)o / s;
	case RS_ALIGN_CORNERS:
		return L == 1.0f ? 0.0f : ((float)o * (float)(n_in - 1)) / (L - 1.0f);
	case RS_PYTORCH_HALF_PIXEL:
		if (!(L > 1.0f))
			return 0.0f;
		/* fall through */
	default:
		return ((float)o + 0.5f) / s - 0.5f;
	}
}

/* fl = floorf(xo), f = xo - fl. nearest: round_prefer_floor takes fl + 1
 * when f > 0.5f, round_prefer_ceil when f >= 0.5f, floor fl, ceil
 * ceilf(xo); linear: taps fl and fl + 1, weights 1.0f - f and f. Indices
 * clamp to [0, n_in - 1] (ONNX's edge padding). */
static rs_tap rs_map(const enpu_attrs *a, int ax, int64_t o, int64_t n_in, int64_t n_out)
{
	float xo = rs_coord(a, ax, o, n_in, n_out), fl = floorf(xo), f = xo - fl;
	int64_t i = (int64_t)fl;
	rs_tap t;

	if (a->resize_mode == 0) {
		switch (a->nearest_mode) {
		case RS_PREFER_FLOOR: i += f > 0.5f; break;
		case RS_PREFER_CEIL: i += f >= 0.5f; break;
		case RS_FLOOR: break;
		default: i = (int64_t)ceilf(xo); break;
		}
		t.i0 = t.i1 = clampi(i, n_in);
		t.w0 = 1.0f;
		t.w1 = 0.0f;
		return t;
	}
	t.i0 = clampi(i, n_in);
	t.i1 = clampi(i + 1, n_in);
	t.w0 = 1.0f - f;
	t.w1 = f;
	return t;
}

typedef struct rs_ctx {
	const enpu_attrs *a;
	const float *x;
	float *y;
	int64_t H, W, OH, OW;
	const rs_tap *ty, *tx;
} rs_ctx;

/* linear: one row's blend, acc = 0.0f; acc = fmaf(w0, left, acc);
 * acc = fmaf(w1, right, acc) */
static float rs_row(const float *row, const rs_tap *tx)
{
	float acc = 0.0f;

	acc = fmaf(tx->w0, row[tx->i0], acc);
	acc = fmaf(tx->w1, row[tx->i1], acc);
	return acc;
}

/* one output plane (n, c) per index */
static void rs_range(void *vctx, size_t p0, size_t p1)
{
	const rs_ctx *c = vctx;

	for (size_t p = p0; p < p1; p++) {
		const float *x = c->x + p * (size_t)(c->H * c->W);
		float *y = c->y + p * (size_t)(c->OH * c->OW);

		for (int64_t oh = 0; oh < c->OH; oh++) {
			const rs_tap *ty = &c->ty[oh];
			const float *top = x + ty->i0 * c->W, *bot = x + ty->i1 * c->W;

			for (int64_t ow = 0; ow < c->OW; ow++) {
				const rs_tap *tx = &c->tx[ow];
				float acc;

				if (c->a->resize_mode == 0) {
					y[oh * c->OW + ow] = top[tx->i0];
					continue;
				}
				acc = 0.0f;
				acc = fmaf(ty->w0, rs_row(top, tx), acc);
				acc = fmaf(ty->w1, rs_row(bot, tx), acc);
				y[oh * c->OW + ow] = acc;
			}
		}
	}
}

/* resize (ONNX Resize, NCHW, H and W only). Per axis, output index o maps
 * to x_original (rs_coord) and its taps (rs_map). nearest: y = x[n, c,
 * i_h, i_w], a copy. linear, for output (oh, ow) with row taps (t, b),
 * weights (wt, wb) and column taps (l, r), weights (wl, wr):
 *   top = fmaf(wr, x[t, r], fmaf(wl, x[t, l], 0.0f))
 *   bot = fmaf(wr, x[b, r], fmaf(wl, x[b, l], 0.0f))
 *   y   = fmaf(wb, bot, fmaf(wt, top, 0.0f))
 * (the top row first, then the bottom; within a row left, then right). */
ENPU_KERNEL(resize)
{
	const enpu_shape *sx = &in[0].shape, *so = &out[0].shape;
	rs_ctx c = {.a = a, .x = in[0].data, .y = out[0].data,
		    .H = sx->dim[2], .W = sx->dim[3], .OH = so->dim[2], .OW = so->dim[3]};
	size_t planes = (size_t)(sx->dim[0] * sx->dim[1]);
	size_t per = (size_t)(c.OH * c.OW);
	rs_tap *taps;

	(void)n_in;
	(void)n_out;
	if (planes == 0 || per == 0)
		return 0;
	if (!(taps = malloc((size_t)(c.OH + c.OW) * sizeof(*taps))))
		return -1;
	for (int64_t o = 0; o < c.OH; o++)
		taps[o] = rs_map(a, 0, o, c.H, c.OH);
	for (int64_t o = 0; o < c.OW; o++)
		taps[c.OH + o] = rs_map(a, 1, o, c.W, c.OW);
	c.ty = taps;
	c.tx = taps + c.OH;
	enpu_par_for(par, planes, per >= 32768 ? 1 : 32768 / per, rs_range, &c);
	free(taps);
	return 0;
}

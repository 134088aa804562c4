/* kernels_misc.c: cpu_ref kernels for softmax, the pools, and data movement
 * (copy for reshape/flatten, transpose, concat). The reductions here follow
 * docs/spec-format.md: ascending index order from 0.0f, averages divide by the
 * count; threads split outputs only. */
#include <math.h>
#include <string.h>
#include "kernels.h"
#include "kmath.h"

#define GRAIN 16384   /* elements of work per chunk at least */

static size_t numel(const enpu_shape *s)
{
	size_t n = 1;
	for (int i = 0; i < s->ndim; i++)
		n *= (size_t)s->dim[i];
	return n;
}

static size_t grain_for(size_t per_item)
{
	return per_item >= GRAIN ? 1 : GRAIN / (per_item ? per_item : 1);
}

/* ---- softmax -------------------------------------------------------- */

typedef struct sm_ctx {
	const float *x;
	float *y;
	size_t len, inner;
} sm_ctx;

/* Items are (outer, inner) pairs; each owns one line of len elements at
 * stride inner. */
static void sm_range(void *vctx, size_t t0, size_t t1)
{
	const sm_ctx *c = vctx;
	size_t len = c->len, st = c->inner;
	for (size_t t = t0; t < t1; t++) {
		size_t o = t / st, in = t % st;
		const float *x = c->x + o * len * st + in;
		float *y = c->y + o * len * st + in;
		float m = -INFINITY;
		for (size_t i = 0; i < len; i++) {
			float v = x[i * st];
			if (v != v) {
				m = v;
				break;
			}
			if (v > m)
				m = v;
		}
		float s = 0.0f;
		for (size_t i = 0; i < len; i++) {
			float e = enpu_expf(x[i * st] - m);
			y[i * st] = e;
			s = s + e;
		}
		for (size_t i = 0; i < len; i++)
			y[i * st] = y[i * st] / s;
	}
}

/* softmax along axis (normalized, non-negative): for each line,
 *   m = max_i x_i (from -inf; any NaN makes m NaN, so the line is NaN)
 *   e_i = enpu_expf(x_i - m);  s = 0.0f, s = s + e_i for i ascending;
 *   y_i = e_i / s  */
ENPU_KERNEL(softmax)
{
	const enpu_shape *s = &in[0].shape;
	sm_ctx c = {.x = in[0].data, .y = out[0].data, .len = 1, .inner = 1};
	size_t outer = 1;
	int axis = s->ndim ? a->axis : 0;
	for (int d = 0; d < s->ndim; d++) {
		if (d < axis)
			outer *= (size_t)s->dim[d];
		else if (d == axis)
			c.len = (size_t)s->dim[d];
		else
			c.inner *= (size_t)s->dim[d];
	}
	if (c.len == 0 || c.inner == 0 || outer == 0)
		return 0;
	enpu_par_for(par, outer * c.inner, grain_for(c.len * 8), sm_range, &c);
	return 0;
}

/* ---- pools ---------------------------------------------------------- */

typedef struct pool_ctx {
	const float *x;
	float *y;
	size_t H, W, OH, OW;
	int kh, kw, sh, sw, pt, pl;
	int include_pad;
	int dh, dw, pb, pr;      /* maxpool2d's dilations; the end pads (bottom, right) */
} pool_ctx;

/* Clamp the window [o*s - p, o*s - p + k) to [0, n): the valid taps. */
void enpu_pool_window(size_t o, int s, int p, int k, size_t n, size_t *lo, size_t *hi)
{
	int64_t b = (int64_t)o * s - p, e = b + k;
	if (b < 0)
		b = 0;
	if (e > (int64_t)n)
		e = (int64_t)n;
	if (e < b)
		e = b;
	*lo = (size_t)b;
	*hi = (size_t)e;
}

/* The taps o*s - p + j*d (j in [0, k)) of a dilated window that lie in
 * [0, n): the first at *lo, *cnt of them, d apart (d = 1: window()). */
void enpu_pool_taps(size_t o, int s, int p, int k, int d, size_t n, size_t *lo, size_t *cnt)
{
	int64_t b = (int64_t)o * s - p, j0 = 0, j1 = k, room = (int64_t)n - b;

	if (b < 0)
		j0 = (-b + d - 1) / d;
	if (room <= 0)
		j1 = 0;
	else if ((room + d - 1) / d < j1)
		j1 = (room + d - 1) / d;
	if (j1 < j0)
		j1 = j0;
	*lo = j1 > j0 ? (size_t)(b + j0 * d) : 0;
	*cnt = (size_t)(j1 - j0);
}

/* count_include_pad's extent of a window: its taps inside the padded
 * input [-p, n + pe), so with ceil_mode the part past the end padding does
 * not count (ONNX Runtime, PyTorch); k itself without ceil_mode. */
size_t enpu_pool_extent(size_t o, int s, int p, int k, size_t n, int pe)
{
	int64_t b = (int64_t)o * s - p, e = b + k;

	if (e > (int64_t)n + pe)
		e = (int64_t)n + pe;
	return e > b ? (size_t)(e - b) : 0;
}

/* maxpool2d: y = max over the window's valid (non-pad) taps, h then w
 * ascending, starting from -inf (padding never wins); a NaN tap makes the
 * result NaN. A window with no valid tap gives -inf. Taps are dilations
 * apart (spec v2; 1 in v1). */
static void maxpool_range(void *vctx, size_t p0, size_t p1)
{
	const pool_ctx *c = vctx;
	for (size_t p = p0; p < p1; p++) {
		const float *x = c->x + p * c->H * c->W;
		float *y = c->y + p * c->OH * c->OW;
		for (size_t oh = 0; oh < c->OH; oh++) {
			size_t h0, nh;
			enpu_pool_taps(oh, c->sh, c->pt, c->kh, c->dh, c->H, &h0, &nh);
			for (size_t ow = 0; ow < c->OW; ow++) {
				size_t w0, nw;
				enpu_pool_taps(ow, c->sw, c->pl, c->kw, c->dw, c->W, &w0, &nw);
				float m = -INFINITY;
				for (size_t ih = 0, h = h0; ih < nh && m == m; ih++, h += (size_t)c->dh)
					for (size_t iw = 0, w = w0; iw < nw; iw++, w += (size_t)c->dw) {
						float v = x[h * c->W + w];
						if (v != v) {
							m = v;
							break;
						}
						if (v > m)
							m = v;
					}
				y[oh * c->OW + ow] = m;
			}
		}
	}
}

/* avgpool2d: s = 0.0f; s = s + x over the valid taps, kh then kw ascending
 * (plain +); y = s / count, a division. count = the number of valid taps,
 * or kH*kW when count_include_pad (the pad taps add nothing to s); with
 * ceil_mode (spec v2) a window running past the end padding counts only
 * its taps inside the padded input, (float)eh * (float)ew (ONNX Runtime,
 * PyTorch). A window with no valid tap and count_include_pad = 0 gives
 * 0/0 = NaN. */
static void avgpool_range(void *vctx, size_t p0, size_t p1)
{
	const pool_ctx *c = vctx;
	for (size_t p = p0; p < p1; p++) {
		const float *x = c->x + p * c->H * c->W;
		float *y = c->y + p * c->OH * c->OW;
		for (size_t oh = 0; oh < c->OH; oh++) {
			size_t h0, h1;
			enpu_pool_window(oh, c->sh, c->pt, c->kh, c->H, &h0, &h1);
			for (size_t ow = 0; ow < c->OW; ow++) {
				size_t w0, w1;
				enpu_pool_window(ow, c->sw, c->pl, c->kw, c->W, &w0, &w1);
				float s = 0.0f;
				for (size_t h = h0; h < h1; h++)
					for (size_t w = w0; w < w1; w++)
						s = s + x[h * c->W + w];
				float cnt = c->include_pad ?
					(float)enpu_pool_extent(oh, c->sh, c->pt, c->kh, c->H, c->pb) *
					(float)enpu_pool_extent(ow, c->sw, c->pl, c->kw, c->W, c->pr) :
					(float)((h1 - h0) * (w1 - w0));
				y[oh * c->OW + ow] = s / cnt;
			}
		}
	}
}

static int pool(const enpu_attrs *a, const enpu_view *in, enpu_view *out,
		enpu_par *par, enpu_par_fn fn)
{
	const enpu_shape *sx = &in[0].shape, *so = &out[0].shape;
	pool_ctx c = {.x = in[0].data, .y = out[0].data,
		      .H = (size_t)sx->dim[2], .W = (size_t)sx->dim[3],
		      .OH = (size_t)so->dim[2], .OW = (size_t)so->dim[3],
		      .kh = a->kernel[0], .kw = a->kernel[1],
		      .sh = a->strides[0], .sw = a->strides[1],
		      .pt = a->pads[0], .pl = a->pads[1],
		      .include_pad = a->count_include_pad,
		      .dh = a->dilations[0] > 0 ? a->dilations[0] : 1,
		      .dw = a->dilations[1] > 0 ? a->dilations[1] : 1,
		      .pb = a->pads[2], .pr = a->pads[3]};
	size_t planes = (size_t)sx->dim[0] * (size_t)sx->dim[1];
	size_t per = c.OH * c.OW * (size_t)(c.kh > 0 ? c.kh : 1) * (size_t)(c.kw > 0 ? c.kw : 1);
	if (planes == 0 || c.OH == 0 || c.OW == 0)
		return 0;
	enpu_par_for(par, planes, grain_for(per), fn, &c);
	return 0;
}

/* int8 and uint8 data: the integer form (kernels_qew.c) */
ENPU_KERNEL(maxpool2d)
{
	if (enpu_dtype_q8(in[0].dtype))
		return enpu_k_maxpool2d_q(a, in, n_in, out, n_out, par);
	return pool(a, in, out, par, maxpool_range);
}
ENPU_KERNEL(avgpool2d) { return pool(a, in, out, par, avgpool_range); }

typedef struct gap_ctx {
	const float *x;
	float *y;
	size_t hw;
} gap_ctx;

static void gap_range(void *vctx, size_t p0, size_t p1)
{
	const gap_ctx *c = vctx;
	for (size_t p = p0; p < p1; p++) {
		const float *x = c->x + p * c->hw;
		float s = 0.0f;
		for (size_t i = 0; i < c->hw; i++)
			s = s + x[i];
		c->y[p] = s / (float)c->hw;
	}
}

/* global_avgpool: y[n, c, 0, 0] = s / (float)(H*W) with s = 0.0f, s = s + x
 * over h*W + w ascending (plain +). H*W = 0 gives NaN. Spec v2's other
 * spatial ranks the same: s over the C-order flattened spatial dims,
 * divided by (float) of their product. */
ENPU_KERNEL(global_avgpool)
{
	const enpu_shape *sx = &in[0].shape;
	gap_ctx c = {.x = in[0].data, .y = out[0].data, .hw = 1};
	size_t planes = sx->ndim >= 2 ? (size_t)sx->dim[0] * (size_t)sx->dim[1] : 1;
	for (int d = 2; d < sx->ndim; d++)
		c.hw *= (size_t)sx->dim[d];
	enpu_par_for(par, planes, grain_for(c.hw), gap_range, &c);
	return 0;
}

/* ---- data movement -------------------------------------------------- */

/* The bytes of one element of v: its dtype's (spec v3's integer data
 * movement), float32's when the caller left it unset. */
static size_t esize(const enpu_view *v)
{
	size_t es = enpu_dtype_size(v->dtype);

	return es ? es : sizeof(float);
}

/* copy (reshape, flatten): the same bytes under a new shape. */
ENPU_KERNEL(copy)
{
	size_t n = numel(&out[0].shape);
	if (n)
		memcpy(out[0].data, in[0].data, n * esize(&in[0]));
	return 0;
}

typedef struct tr_ctx {
	const float *x;
	float *y;
	size_t es;                   /* element bytes: 4, or 1 (int8, uint8) */
	int rank;
	size_t odim[ENPU_MAX_DIMS];
	size_t ist[ENPU_MAX_DIMS];   /* input stride of output dim d: stride of perm[d] */
} tr_ctx;

/* Rows of the output's last dim; each output index is unraveled once per
 * row, then the input is walked with the permuted stride. */
static void tr_range(void *vctx, size_t r0, size_t r1)
{
	const tr_ctx *c = vctx;
	int last = c->rank - 1;
	size_t row = c->odim[last], st = c->ist[last];
	for (size_t r = r0; r < r1; r++) {
		size_t off = 0, rem = r;
		for (int d = last - 1; d >= 0; d--) {
			off += (rem % c->odim[d]) * c->ist[d];
			rem /= c->odim[d];
		}
		if (c->es == 1) {
			const uint8_t *xb = (const uint8_t *)c->x + off;
			uint8_t *yb = (uint8_t *)c->y + r * row;
			for (size_t i = 0; i < row; i++)
				yb[i] = xb[i * st];
			continue;
		}
		const float *x = c->x + off;   /* float32 and int32: 4 bytes moved */
		float *y = c->y + r * row;
		for (size_t i = 0; i < row; i++)
			memcpy(&y[i], &x[i * st], sizeof(float));
	}
}

/* transpose: out[i_0, ..., i_{r-1}] = in[j] with j[perm[d]] = i_d
 * (out.dim[d] = in.dim[perm[d]]); perm is filled by the shape rule. */
ENPU_KERNEL(transpose)
{
	const enpu_shape *sx = &in[0].shape;
	tr_ctx c = {.x = in[0].data, .y = out[0].data, .es = esize(&in[0]), .rank = sx->ndim};
	size_t n = numel(sx);
	if (n == 0)
		return 0;
	if (sx->ndim <= 1) {
		memcpy(c.y, c.x, n * c.es);
		return 0;
	}
	size_t ist[ENPU_MAX_DIMS], s = 1;
	for (int d = sx->ndim - 1; d >= 0; d--) {
		ist[d] = s;
		s *= (size_t)sx->dim[d];
	}
	for (int d = 0; d < sx->ndim; d++) {
		int pd = a->n_perm ? a->perm[d] : sx->ndim - 1 - d;
		c.odim[d] = (size_t)sx->dim[pd];
		c.ist[d] = ist[pd];
	}
	size_t row = c.odim[sx->ndim - 1];
	enpu_par_for(par, n / row, grain_for(row), tr_range, &c);
	return 0;
}

/* concat along axis: for each outer index (dims before axis), the inputs'
 * blocks (dim[axis] * inner elements each) in input order. */
ENPU_KERNEL(concat)
{
	const enpu_shape *so = &out[0].shape;
	int axis = a->axis;
	size_t outer = 1, inner = 1;
	for (int d = 0; d < so->ndim; d++) {
		if (d < axis)
			outer *= (size_t)so->dim[d];
		else if (d > axis)
			inner *= (size_t)so->dim[d];
	}
	size_t orow = (size_t)so->dim[axis] * inner;
	if (orow == 0 || outer == 0)
		return 0;
	size_t off = 0, es = esize(&out[0]);
	for (int i = 0; i < n_in; i++) {
		size_t blk = (size_t)in[i].shape.dim[axis] * inner;
		if (blk)
			for (size_t o = 0; o < outer; o++)
				memcpy((char *)out[0].data + (o * orow + off) * es,
				       (const char *)in[i].data + o * blk * es, blk * es);
		off += blk;
	}
	return 0;
}

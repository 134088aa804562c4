/* kernels_qew.c: cpu_ref kernels of spec v3's integer forms: maxpool2d
 * and clip on int8/uint8, qlinear_add, qlinear_mul (ONNX Runtime's
 * com.microsoft QLinearAdd, QLinearMul), qlinear_global_avgpool,
 * qlinear_avgpool (QLinearGlobalAveragePool, QLinearAveragePool; NCHW) and
 * qlinear_concat (QLinearConcat). The arithmetic (docs/spec-format.md,
 * "The integer forms"), every double operation in the order written:
 *
 *   maxpool2d   y = the integer maximum over the valid taps (the dtype's
 *               lowest value when there is none)
 *   clip        y = min(max(x, L), H), L = ceil(min), H = floor(max), each
 *               clamped to the dtype's range (an infinite or NaN bound is
 *               the range's end): integers compared as numbers
 *   qlinear_add y = qround(t_a + t_b), t_a = (double)(a - a_zp) *
 *               (double)fl32(s_a / s_y), t_b likewise (both products exact)
 *   qlinear_mul y = requant((a - a_zp) * (b - b_zp), fl32(fl32(s_a * s_b) / s_y))
 *   the pools   s = the exact integer sum of (x - x_zp) over the valid taps
 *               (qlinear_global_avgpool: every h, w), then
 *               y = qround(((double)s * (double)fl32(s_x / s_y)) / (double)count)
 *               with avgpool2d's count
 *   qlinear_concat  each input's element: qround((double)(x - x_zp) *
 *               (double)fl32(s_x / s_y)) (an input with y's scale and zero
 *               point is copied: M = 1 exactly)
 *
 * qround(v) = saturate(zp_y + rne(v)), NaN giving zp_y (kernels_q.c,
 * enpu_qround). Threads split outputs; every result is the same bytes on
 * any thread count. */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "kernels.h"
#include "kq_int.h"
#include "shape.h"

/* ---- maxpool2d, clip on int8/uint8 ----------------------------------------- */

typedef struct qpool {
	const enpu_attrs *a;
	const enpu_view *in, *out;
	int n_in;
	size_t H, W, OH, OW;
} qpool;

static void qpool_geom(qpool *q, const enpu_attrs *a, const enpu_view *in, int n_in,
		       const enpu_view *out)
{
	q->a = a;
	q->in = in;
	q->n_in = n_in;
	q->out = out;
	q->H = (size_t)in[0].shape.dim[2];
	q->W = (size_t)in[0].shape.dim[3];
	q->OH = (size_t)out[0].shape.dim[2];
	q->OW = (size_t)out[0].shape.dim[3];
}

static void qmax_range(void *ctx, size_t p0, size_t p1)
{
	const qpool *q = ctx;
	const enpu_attrs *a = q->a;
	int dh = a->dilations[0] > 0 ? a->dilations[0] : 1, dw = a->dilations[1] > 0 ? a->dilations[1] : 1;
	int32_t lo, hi;

	enpu_qrange(q->out->dtype, &lo, &hi);
	for (size_t p = p0; p < p1; p++)
		for (size_t oh = 0; oh < q->OH; oh++) {
			size_t h0, nh;

			enpu_pool_taps(oh, a->strides[0], a->pads[0], a->kernel[0], dh, q->H, &h0, &nh);
			for (size_t ow = 0; ow < q->OW; ow++) {
				size_t w0, nw;
				int32_t m = lo;

				enpu_pool_taps(ow, a->strides[1], a->pads[1], a->kernel[1], dw, q->W, &w0, &nw);
				for (size_t ih = 0, h = h0; ih < nh; ih++, h += (size_t)dh)
					for (size_t iw = 0, w = w0; iw < nw; iw++, w += (size_t)dw) {
						int32_t v = qget(&q->in[0], (p * q->H + h) * q->W + w);

						if (v > m)
							m = v;
					}
				qput(q->out, (p * q->OH + oh) * q->OW + ow, m);
			}
		}
}

/* maxpool2d on int8/uint8: the integer maximum over the valid taps, from
 * the dtype's lowest value (padding never wins) */
ENPU_KERNEL(maxpool2d_q)
{
	qpool q;
	size_t planes = (size_t)in[0].shape.dim[0] * (size_t)in[0].shape.dim[1];

	(void)n_out;
	qpool_geom(&q, a, in, n_in, out);
	if (planes && q.OH && q.OW)
		enpu_par_for(par, planes, 1, qmax_range, &q);
	return 0;
}

/* clip's integer bound: ceil (lower) or floor (upper) of f, clamped to
 * [lo, hi]; an infinite or NaN bound is dflt */
static int32_t qbound(float f, int up, int32_t lo, int32_t hi, int32_t dflt)
{
	double v = up ? ceil((double)f) : floor((double)f);

	if (v != v || isinf(v))
		return dflt;
	return v < (double)lo ? lo : v > (double)hi ? hi : (int32_t)v;
}

typedef struct qclip {
	const enpu_view *x, *y;
	int32_t lo, hi;
} qclip;

static void qclip_range(void *ctx, size_t b, size_t e)
{
	const qclip *c = ctx;

	for (size_t i = b; i < e; i++) {
		int32_t v = qget(c->x, i);

		v = v < c->lo ? c->lo : v;
		qput(c->y, i, v > c->hi ? c->hi : v);
	}
}

/* clip on int8/uint8: y = min(max(x, L), H) (the lower bound first, so
 * L > H gives H, as the float32 clip) */
ENPU_KERNEL(clip_q)
{
	int32_t lo, hi;
	qclip c = {&in[0], &out[0], 0, 0};

	(void)n_in;
	(void)n_out;
	enpu_qrange(out[0].dtype, &lo, &hi);
	c.lo = qbound(a->min, 1, lo, hi, lo);
	c.hi = qbound(a->max, 0, lo, hi, hi);
	enpu_par_for(par, numel(&out[0].shape), 4096, qclip_range, &c);
	return 0;
}

/* ---- qlinear_add, qlinear_mul ------------------------------------------------ */

typedef struct qbin {
	const enpu_view *in, *out;
	int mul, rank;
	int32_t azp, bzp, yzp;
	float ma, mb;             /* add: fl32(s_a / s_y), fl32(s_b / s_y); mul: ma = M */
	size_t odim[ENPU_MAX_DIMS], sa[ENPU_MAX_DIMS], sb[ENPU_MAX_DIMS];
} qbin;

/* the strides of x broadcast to rank r (0 along a stretched dim) */
static void bstrides(const enpu_shape *x, int r, size_t *st)
{
	size_t s = 1;

	for (int d = r - 1; d >= 0; d--) {
		int k = d - (r - x->ndim);
		int64_t n = k >= 0 ? x->dim[k] : 1;

		st[d] = n == 1 ? 0 : s;
		s *= (size_t)n;
	}
}

static void qbin_range(void *ctx, size_t b, size_t e)
{
	const qbin *q = ctx;

	for (size_t i = b; i < e; i++) {
		size_t rem = i, ia = 0, ib = 0;
		int32_t xa, xb;

		for (int d = q->rank - 1; d >= 0; d--) {
			size_t c = rem % q->odim[d];

			rem /= q->odim[d];
			ia += c * q->sa[d];
			ib += c * q->sb[d];
		}
		xa = qget(&q->in[0], ia) - q->azp;
		xb = qget(&q->in[3], ib) - q->bzp;
		if (q->mul) {
			qput(q->out, i, enpu_requant(xa * xb, q->ma, q->yzp, q->out->dtype));
		} else {
			double ta = (double)xa * (double)q->ma, tb = (double)xb * (double)q->mb;

			qput(q->out, i, enpu_qround(ta + tb, q->yzp, q->out->dtype));
		}
	}
}

static int qbinary(int mul, const enpu_view *in, int n_in, enpu_view *out, enpu_par *par)
{
	qbin q = {.in = in, .out = &out[0], .mul = mul, .rank = out[0].shape.ndim};
	float sa = scale_at(&in[1], 0), sb = scale_at(&in[4], 0), sy = scale_at(&in[6], 0);

	q.azp = zp_at(in, n_in, 2, 0);
	q.bzp = zp_at(in, n_in, 5, 0);
	q.yzp = zp_at(in, n_in, 7, 0);
	if (mul) {
		q.ma = enpu_requant_multiplier(sa, sb, sy);
	} else {
		q.ma = sa / sy;
		q.mb = sb / sy;
	}
	for (int d = 0; d < q.rank; d++)
		q.odim[d] = (size_t)out[0].shape.dim[d];
	bstrides(&in[0].shape, q.rank, q.sa);
	bstrides(&in[3].shape, q.rank, q.sb);
	enpu_par_for(par, numel(&out[0].shape), 4096, qbin_range, &q);
	return 0;
}

/* qlinear_add: y = qround((double)(a - a_zp) * (double)fl32(s_a / s_y) +
 * (double)(b - b_zp) * (double)fl32(s_b / s_y)), NumPy broadcasting */
ENPU_KERNEL(qlinear_add)
{
	(void)a;
	(void)n_out;
	return qbinary(0, in, n_in, out, par);
}

/* qlinear_mul: y = requant((a - a_zp) * (b - b_zp), fl32(fl32(s_a * s_b) / s_y)) */
ENPU_KERNEL(qlinear_mul)
{
	(void)a;
	(void)n_out;
	return qbinary(1, in, n_in, out, par);
}

/* ---- qlinear_global_avgpool, qlinear_avgpool ------------------------------------ */

/* qround(((double)s * (double)m) / (double)count) */
static int32_t qavg(int64_t s, float m, double count, int32_t zp, enpu_dtype dt)
{
	double v = (double)s * (double)m;

	return enpu_qround(v / count, zp, dt);
}

static void qgap_range(void *ctx, size_t p0, size_t p1)
{
	const qpool *q = ctx;
	size_t hw = q->H * q->W;
	int32_t xz = zp_at(q->in, q->n_in, 2, 0), yz = zp_at(q->in, q->n_in, 4, 0);
	float m = scale_at(&q->in[1], 0) / scale_at(&q->in[3], 0);

	for (size_t p = p0; p < p1; p++) {
		int64_t s = 0;

		for (size_t i = 0; i < hw; i++)
			s += qget(&q->in[0], p * hw + i) - xz;
		qput(q->out, p, qavg(s, m, (double)hw, yz, q->out->dtype));
	}
}

/* qlinear_global_avgpool: s = sum over h, w of (x - x_zp), exact; y =
 * qround(((double)s * (double)fl32(s_x / s_y)) / (double)(H * W)) */
ENPU_KERNEL(qlinear_global_avgpool)
{
	qpool q;
	size_t planes = (size_t)in[0].shape.dim[0] * (size_t)in[0].shape.dim[1];

	(void)n_out;
	qpool_geom(&q, a, in, n_in, out);
	enpu_par_for(par, planes, 1, qgap_range, &q);
	return 0;
}

static void qavg_range(void *ctx, size_t p0, size_t p1)
{
	const qpool *q = ctx;
	const enpu_attrs *a = q->a;
	int32_t xz = zp_at(q->in, q->n_in, 2, 0), yz = zp_at(q->in, q->n_in, 4, 0);
	float m = scale_at(&q->in[1], 0) / scale_at(&q->in[3], 0);

	for (size_t p = p0; p < p1; p++)
		for (size_t oh = 0; oh < q->OH; oh++) {
			size_t h0, h1;

			enpu_pool_window(oh, a->strides[0], a->pads[0], a->kernel[0], q->H, &h0, &h1);
			for (size_t ow = 0; ow < q->OW; ow++) {
				size_t w0, w1;
				int64_t s = 0;
				double cnt;

				enpu_pool_window(ow, a->strides[1], a->pads[1], a->kernel[1], q->W, &w0, &w1);
				for (size_t h = h0; h < h1; h++)
					for (size_t w = w0; w < w1; w++)
						s += qget(&q->in[0], (p * q->H + h) * q->W + w) - xz;
				cnt = a->count_include_pad ?
				      (double)enpu_pool_extent(oh, a->strides[0], a->pads[0], a->kernel[0],
							       q->H, a->pads[2]) *
				      (double)enpu_pool_extent(ow, a->strides[1], a->pads[1], a->kernel[1],
							       q->W, a->pads[3]) :
				      (double)((h1 - h0) * (w1 - w0));
				qput(q->out, (p * q->OH + oh) * q->OW + ow, qavg(s, m, cnt, yz, q->out->dtype));
			}
		}
}

/* qlinear_avgpool: s = sum over the valid taps of (x - x_zp) (a pad tap is
 * x_zp: it adds 0), exact; y = qround(((double)s * (double)fl32(s_x /
 * s_y)) / (double)count), count as avgpool2d's (0 taps: NaN, so zp_y) */
ENPU_KERNEL(qlinear_avgpool)
{
	qpool q;
	size_t planes = (size_t)in[0].shape.dim[0] * (size_t)in[0].shape.dim[1];

	(void)n_out;
	qpool_geom(&q, a, in, n_in, out);
	if (planes && q.OH && q.OW)
		enpu_par_for(par, planes, 1, qavg_range, &q);
	return 0;
}

/* ---- qlinear_concat ------------------------------------------------------------ */

typedef struct qcat {
	const enpu_view *in, *out;
	int n_in, n, axis;
	size_t outer, inner, orow;
	size_t off[ENPU_QCONCAT_MAX];   /* input i's first column in an output row */
} qcat;

static void qcat_range(void *ctx, size_t o0, size_t o1)
{
	const qcat *c = ctx;
	int32_t yz = zp_at(c->in, c->n_in, 1, 0);
	float sy = scale_at(&c->in[0], 0);

	for (int i = 0; i < c->n; i++) {
		const enpu_view *x = &c->in[2 + 3 * i];
		size_t blk = (size_t)x->shape.dim[c->axis] * c->inner;
		int32_t xz = zp_at(c->in, c->n_in, 4 + 3 * i, 0);
		float m = scale_at(&c->in[3 + 3 * i], 0) / sy;

		for (size_t o = o0; o < o1; o++)
			for (size_t j = 0; j < blk; j++)
				qput(c->out, o * c->orow + c->off[i] + j,
				     enpu_qround((double)(qget(x, o * blk + j) - xz) * (double)m, yz,
						 c->out->dtype));
	}
}

/* qlinear_concat: concat along axis of each x requantised to y's scale and
 * zero point: qround((double)(x - x_zp) * (double)fl32(s_x / s_y)) */
ENPU_KERNEL(qlinear_concat)
{
	const enpu_shape *so = &out[0].shape;
	qcat c = {.in = in, .out = &out[0], .n_in = n_in, .n = (n_in - 2) / 3, .axis = a->axis,
		  .outer = 1, .inner = 1};
	size_t off = 0;

	(void)n_out;
	if (c.n > ENPU_QCONCAT_MAX)
		return -1;
	for (int d = 0; d < c.axis; d++)
		c.outer *= (size_t)so->dim[d];
	for (int d = c.axis + 1; d < so->ndim; d++)
		c.inner *= (size_t)so->dim[d];
	c.orow = (size_t)so->dim[c.axis] * c.inner;
	for (int i = 0; i < c.n; i++) {
		c.off[i] = off;
		off += (size_t)in[2 + 3 * i].shape.dim[c.axis] * c.inner;
	}
	if (c.orow && c.outer)
		enpu_par_for(par, c.outer, 1, qcat_range, &c);
	return 0;
}

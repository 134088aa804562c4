/* kernels_q.c: cpu_ref kernels of spec v3's quantised ops (ONNX opset 13
 * semantics) and the one requantisation rule every backend uses
 * (docs/spec-format.md, "Quantised arithmetic"):
 *
 *   quantize_linear   y = saturate(rne(x / s) + zp): x / s one float32
 *                     division, rne = round half to even, saturate to the
 *                     output's range; NaN gives zp
 *   dequantize_linear y = (float(x) - float(zp)) * s, in float32
 *   matmul_integer,   acc = sum of (a - a_zp) * (b - b_zp) in exact integer
 *   conv_integer      arithmetic, wrapped to int32 as NumPy's int32 sums
 *                     (padding is x_zp, so it adds 0)
 *   qlinear_matmul,   acc as above (+ bias for qlinear_conv, int32), then
 *   qlinear_conv      y = saturate(zp_y + rne((double)acc * (double)M))
 *                     with M = fl32(fl32(s_a * s_b) / s_y) (float32, in
 *                     that order; per output channel or column when the
 *                     weight's scale is)
 *
 * Integer sums are exact, so order does not matter; threads split outputs.
 * Nothing here depends on the FPU's rounding mode. */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "kernels.h"
#include "kq_int.h"

/* ---- the arithmetic (kernels.h) ------------------------------------------ */

double enpu_rne(double v)
{
	double r, d;

	if (v != v)
		return v;
	r = floor(v);
	d = v - r;        /* exact */
	if (d > 0.5 || (d == 0.5 && fmod(r, 2.0) != 0.0))
		r += 1.0;
	return r;
}

void enpu_qrange(enpu_dtype dt, int32_t *lo, int32_t *hi)
{
	switch (dt) {
	case ENPU_DT_I8:
		*lo = -128;
		*hi = 127;
		break;
	case ENPU_DT_U8:
		*lo = 0;
		*hi = 255;
		break;
	default:
		*lo = INT32_MIN;
		*hi = INT32_MAX;
		break;
	}
}

/* v (an integer-valued double, or +-inf) + zp saturated to dt's range */
static int32_t saturate(double v, int32_t zp, enpu_dtype dt)
{
	int32_t lo, hi;

	enpu_qrange(dt, &lo, &hi);
	v += (double)zp;
	if (v <= (double)lo)
		return lo;
	if (v >= (double)hi)
		return hi;
	return (int32_t)v;
}

int32_t enpu_quantize(float x, float s, int32_t zp, enpu_dtype dt)
{
	float q = x / s;

	if (q != q)
		return saturate(0.0, zp, dt);
	return saturate(enpu_rne((double)q), zp, dt);
}

float enpu_requant_multiplier(float s_a, float s_b, float s_y)
{
	float ab = s_a * s_b;   /* rounded to float32 before the division */

	return ab / s_y;
}

int32_t enpu_qround(double v, int32_t zp, enpu_dtype dt)
{
	if (v != v)
		return saturate(0.0, zp, dt);
	return saturate(enpu_rne(v), zp, dt);
}

int32_t enpu_requant(int32_t acc, float m, int32_t zp, enpu_dtype dt)
{
	return enpu_qround((double)acc * (double)m, zp, dt);
}

/* ---- quantize_linear, dequantize_linear -------------------------------------- */

typedef struct qlin {
	const enpu_view *in;
	int n_in;
	const enpu_view *out;
	size_t inner, chans;      /* per axis: channel of i = i / inner % chans */
} qlin;

static void qlin_geom(const enpu_attrs *a, const enpu_view *in, qlin *q)
{
	const enpu_shape *x = &in[0].shape;

	q->inner = 1;
	q->chans = 1;
	if (numel(&in[1].shape) > 1 && x->ndim > 0) {
		q->chans = (size_t)x->dim[a->axis];
		for (int d = a->axis + 1; d < x->ndim; d++)
			q->inner *= (size_t)x->dim[d];
	}
}

static void quantize_range(void *ctx, size_t b, size_t e)
{
	const qlin *q = ctx;
	const float *x = q->in[0].data;

	for (size_t i = b; i < e; i++) {
		size_t c = i / q->inner % q->chans;

		qput(q->out, i, enpu_quantize(x[i], scale_at(&q->in[1], c),
					      zp_at(q->in, q->n_in, 2, c), q->out->dtype));
	}
}

static void dequantize_range(void *ctx, size_t b, size_t e)
{
	const qlin *q = ctx;
	float *y = q->out->data;

	for (size_t i = b; i < e; i++) {
		size_t c = i / q->inner % q->chans;
		float xf = (float)qget(&q->in[0], i), zf = (float)zp_at(q->in, q->n_in, 2, c);

		y[i] = (xf - zf) * scale_at(&q->in[1], c);
	}
}

/* quantize_linear: y = saturate(rne(x / s[c]) + zp[c]) (x / s in float32;
 * c the channel along axis when the scale is 1-D [C], else 0) */
ENPU_KERNEL(quantize_linear)
{
	qlin q = {in, n_in, out, 1, 1};

	(void)n_out;
	qlin_geom(a, in, &q);
	enpu_par_for(par, numel(&out[0].shape), 4096, quantize_range, &q);
	return 0;
}

/* dequantize_linear: y = (float(x) - float(zp[c])) * s[c], float32 */
ENPU_KERNEL(dequantize_linear)
{
	qlin q = {in, n_in, out, 1, 1};

	(void)n_out;
	qlin_geom(a, in, &q);
	enpu_par_for(par, numel(&out[0].shape), 4096, dequantize_range, &q);
	return 0;
}

/* ---- integer matmul ----------------------------------------------------------- */

/* NumPy matmul's geometry: a [..., M, K] (1-D: [1, K]), b [..., K, N]
 * (1-D: [K, 1]); the batch dims broadcast; the output is [batch, M, N]. */
typedef struct mmgeo {
	const enpu_view *a, *b, *out;
	const enpu_view *in;      /* all inputs, for zero points and scales */
	int n_in;
	int azp, bzp;             /* input index of a's and b's zero point */
	int as, bs, ys, yzp, bias;/* qlinear: inputs of scales, y's zero point; -1 none */
	int64_t m, k, n;
	int nbd;                  /* batch dims of the output */
	int64_t bdim[ENPU_MAX_DIMS], astr[ENPU_MAX_DIMS], bstr[ENPU_MAX_DIMS];
} mmgeo;

static void mm_geom(mmgeo *g)
{
	const enpu_shape *sa = &g->a->shape, *sb = &g->b->shape;
	int na = sa->ndim >= 2 ? sa->ndim - 2 : 0, nb = sb->ndim >= 2 ? sb->ndim - 2 : 0;
	int64_t ma = 1, mb = 1;

	g->m = sa->ndim >= 2 ? sa->dim[sa->ndim - 2] : 1;
	g->k = sa->dim[sa->ndim - 1];
	g->n = sb->ndim >= 2 ? sb->dim[sb->ndim - 1] : 1;
	g->nbd = na > nb ? na : nb;
	/* strides in whole matrices, right-aligned; 0 where a dim broadcasts */
	for (int d = g->nbd - 1; d >= 0; d--) {
		int ia = d - (g->nbd - na), ib = d - (g->nbd - nb);
		int64_t da = ia >= 0 ? sa->dim[ia] : 1, db = ib >= 0 ? sb->dim[ib] : 1;

		g->bdim[d] = da > db ? da : db;
		g->astr[d] = da == 1 ? 0 : ma;
		g->bstr[d] = db == 1 ? 0 : mb;
		ma *= da;
		mb *= db;
	}
}

/* the sum of (a - a_zp) * (b - b_zp[j]) for output row `row` (batch and
 * i), column j; wrapped to int32 */
static int32_t mm_acc(const mmgeo *g, size_t row, int64_t j)
{
	size_t bi = row / (size_t)g->m, i = row % (size_t)g->m, ao = 0, bo = 0;
	int32_t az = zp_at(g->in, g->n_in, g->azp, 0), bz = zp_at(g->in, g->n_in, g->bzp, (size_t)j);
	int64_t acc = 0;

	for (int d = g->nbd - 1; d >= 0; d--) {
		size_t id = bi % (size_t)g->bdim[d];

		bi /= (size_t)g->bdim[d];
		ao += id * (size_t)g->astr[d];
		bo += id * (size_t)g->bstr[d];
	}
	ao = ao * (size_t)(g->m * g->k) + i * (size_t)g->k;
	bo = bo * (size_t)(g->k * g->n) + (size_t)j;
	for (int64_t t = 0; t < g->k; t++)
		acc += (int64_t)(qget(g->a, ao + (size_t)t) - az) *
		       (qget(g->b, bo + (size_t)t * (size_t)g->n) - bz);
	return (int32_t)(uint32_t)(uint64_t)acc;
}

static void mm_range(void *ctx, size_t b, size_t e)
{
	const mmgeo *g = ctx;

	for (size_t row = b; row < e; row++)
		for (int64_t j = 0; j < g->n; j++) {
			size_t o = row * (size_t)g->n + (size_t)j;
			int32_t acc = mm_acc(g, row, j);

			if (g->ys < 0)
				qput(g->out, o, acc);
			else
				qput(g->out, o,
				     enpu_requant(acc, enpu_requant_multiplier(
							  scale_at(&g->in[g->as], 0),
							  scale_at(&g->in[g->bs], (size_t)j),
							  scale_at(&g->in[g->ys], 0)),
						  zp_at(g->in, g->n_in, g->yzp, 0), g->out->dtype));
		}
}

static size_t mm_rows(const mmgeo *g)
{
	size_t r = (size_t)g->m;

	for (int d = 0; d < g->nbd; d++)
		r *= (size_t)g->bdim[d];
	return r;
}

/* matmul_integer: NumPy matmul of (a - a_zp) and (b - b_zp) (b_zp per
 * column when 1-D [N]), int32 */
ENPU_KERNEL(matmul_integer)
{
	mmgeo g = {.a = &in[0], .b = &in[1], .out = &out[0], .in = in, .n_in = n_in, .azp = 2,
		   .bzp = 3, .as = -1, .bs = -1, .ys = -1, .yzp = -1, .bias = -1};

	(void)a;
	(void)n_out;
	mm_geom(&g);
	enpu_par_for(par, mm_rows(&g), 1, mm_range, &g);
	return 0;
}

/* qlinear_matmul: matmul_integer's acc, then the requantisation with
 * M = fl32(fl32(a_scale * b_scale[j]) / y_scale) */
ENPU_KERNEL(qlinear_matmul)
{
	mmgeo g = {.a = &in[0], .b = &in[3], .out = &out[0], .in = in, .n_in = n_in, .azp = 2,
		   .bzp = 5, .as = 1, .bs = 4, .ys = 6, .yzp = 7, .bias = -1};

	(void)a;
	(void)n_out;
	mm_geom(&g);
	enpu_par_for(par, mm_rows(&g), 1, mm_range, &g);
	return 0;
}

/* ---- integer conv ---------------------------------------------------------------- */

typedef struct cvgeo {
	const enpu_attrs *at;
	const enpu_view *x, *w, *out, *in;
	int n_in;
	int xzp, wzp, xs, ws, ys, yzp, bias;   /* input indices; -1 none */
} cvgeo;

/* output row (n, m, oh): every ow */
static void cv_range(void *ctx, size_t b, size_t e)
{
	const cvgeo *g = ctx;
	const enpu_shape *xs = &g->x->shape, *ws = &g->w->shape, *os = &g->out->shape;
	int64_t C = xs->dim[1], H = xs->dim[2], W = xs->dim[3];
	int64_t M = ws->dim[0], Cg = ws->dim[1], KH = ws->dim[2], KW = ws->dim[3];
	int64_t OH = os->dim[2], OW = os->dim[3], Mg = M / g->at->group;
	int32_t xz = zp_at(g->in, g->n_in, g->xzp, 0);

	for (size_t row = b; row < e; row++) {
		int64_t oh = (int64_t)row % OH, m = (int64_t)row / OH % M, n = (int64_t)row / OH / M;
		int64_t c0 = m / Mg * Cg;
		int32_t wz = zp_at(g->in, g->n_in, g->wzp, (size_t)m);
		float mult = 0.0f;

		if (g->ys >= 0)
			mult = enpu_requant_multiplier(scale_at(&g->in[g->xs], 0),
						       scale_at(&g->in[g->ws], (size_t)m),
						       scale_at(&g->in[g->ys], 0));
		for (int64_t ow = 0; ow < OW; ow++) {
			int64_t acc = 0;
			size_t o = (size_t)row * (size_t)OW + (size_t)ow;
			int32_t r;

			for (int64_t ci = 0; ci < Cg; ci++)
				for (int64_t kh = 0; kh < KH; kh++) {
					int64_t ih = oh * g->at->strides[0] - g->at->pads[0] +
						     kh * g->at->dilations[0];

					if (ih < 0 || ih >= H)
						continue;
					for (int64_t kw = 0; kw < KW; kw++) {
						int64_t iw = ow * g->at->strides[1] - g->at->pads[1] +
							     kw * g->at->dilations[1];
						size_t xi, wi;

						if (iw < 0 || iw >= W)
							continue;
						xi = (size_t)(((n * C + c0 + ci) * H + ih) * W + iw);
						wi = (size_t)(((m * Cg + ci) * KH + kh) * KW + kw);
						acc += (int64_t)(qget(g->x, xi) - xz) * (qget(g->w, wi) - wz);
					}
				}
			if (g->bias >= 0 && g->bias < g->n_in)
				acc += qget(&g->in[g->bias], (size_t)m);
			r = (int32_t)(uint32_t)(uint64_t)acc;
			qput(g->out, o, g->ys < 0 ? r :
			     enpu_requant(r, mult, zp_at(g->in, g->n_in, g->yzp, 0), g->out->dtype));
		}
	}
}

static size_t cv_rows(const enpu_shape *o)
{
	return (size_t)(o->dim[0] * o->dim[1] * o->dim[2]);
}

/* conv_integer: for output (n, m, oh, ow), the sum over the group's input
 * channels and the kernel's taps of (x - x_zp) * (w - w_zp[m]), padding
 * adding 0; int32 */
ENPU_KERNEL(conv_integer)
{
	cvgeo g = {a, &in[0], &in[1], &out[0], in, n_in, 2, 3, -1, -1, -1, -1, -1};

	(void)n_out;
	enpu_par_for(par, cv_rows(&out[0].shape), 1, cv_range, &g);
	return 0;
}

/* qlinear_conv: conv_integer's acc + bias[m] (int32), then the
 * requantisation with M = fl32(fl32(x_scale * w_scale[m]) / y_scale) */
ENPU_KERNEL(qlinear_conv)
{
	cvgeo g = {a, &in[0], &in[3], &out[0], in, n_in, 2, 5, 1, 4, 6, 7, 8};

	(void)n_out;
	enpu_par_for(par, cv_rows(&out[0].shape), 1, cv_range, &g);
	return 0;
}

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
 * Nothing here depends on the FPU's rounding mode.
 *
 * The sums run on the integer GEMM (qgemm.c) when every operand is int8 or
 * uint8: the operands minus their zero points (|v| <= 255) in int16 rows
 * (conv: the weights per output channel, and an im2col of x - x_zp per
 * output position, padding 0), summed in uint32, which is the int32 wrap
 * of the exact sum; then bias and enpu_requant per output. The direct
 * loops below remain for any other operand type. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kernels.h"
#include "kq_int.h"
#include "qgemm.h"

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

/* ---- the integer GEMM's operands --------------------------------------------- */

static int is_q8(const enpu_view *v)
{
	return v->dtype == ENPU_DT_I8 || v->dtype == ENPU_DT_U8;
}

/* an optional zero point's dtype is int8/uint8 (or it is absent) */
static int zp_q8(const enpu_view *in, int n_in, int k)
{
	return k >= n_in || !in[k].data || numel(&in[k].shape) == 0 || is_q8(&in[k]);
}

/* element i of an int8 or uint8 view */
static inline int32_t q8get(const enpu_view *v, size_t i)
{
	return v->dtype == ENPU_DT_I8 ? ((const int8_t *)v->data)[i]
				      : ((const uint8_t *)v->data)[i];
}

/* the scratch of int16 operands: the plan's (the op rows' scratch rules
 * below), else, for a caller without a plan (a unit test, the importer's
 * constant folding), the heap: *heap then points to it */
static int16_t *qscratch(enpu_par *par, size_t elems, void **heap)
{
	int16_t *s;

	*heap = NULL;
	if (elems > SIZE_MAX / sizeof(int16_t) / 2)
		return NULL;
	if ((s = enpu_par_scratch(par, elems * sizeof(int16_t))))
		return s;
	return *heap = malloc(elems ? elems * sizeof(int16_t) : 1);
}

/* the sum wrapped to int32, + bias, then the output: int32 as it is, or
 * requantised with the multiplier m */
static void qstore(const enpu_view *out, size_t o, uint32_t acc, int32_t bias, int requant,
		   float m, int32_t yz)
{
	int32_t r = (int32_t)(acc + (uint32_t)bias);

	if (!requant)
		((int32_t *)(void *)out->data)[o] = r;
	else
		qput(out, o, enpu_requant(r, m, yz, out->dtype));
}

/* ---- integer matmul on the GEMM --------------------------------------------------- */

typedef struct qmm {
	const mmgeo *g;
	size_t Kp, bi, ao, bo;    /* the output matrix bi; a's and b's first element */
	int16_t *ap, *bp;         /* [M][Kp] a - a_zp; [N][Kp] b - b_zp (b transposed) */
} qmm;

static void qmm_pack_a(void *ctx, size_t b, size_t e)
{
	const qmm *q = ctx;
	int32_t az = zp_at(q->g->in, q->g->n_in, q->g->azp, 0);
	size_t K = (size_t)q->g->k;

	for (size_t i = b; i < e; i++) {
		int16_t *d = q->ap + i * q->Kp;

		for (size_t t = 0; t < K; t++)
			d[t] = (int16_t)(q8get(q->g->a, q->ao + i * K + t) - az);
		memset(d + K, 0, (q->Kp - K) * sizeof *d);
	}
}

static void qmm_pack_b(void *ctx, size_t b, size_t e)
{
	const qmm *q = ctx;
	size_t K = (size_t)q->g->k, N = (size_t)q->g->n;

	for (size_t j = b; j < e; j++) {
		int32_t bz = zp_at(q->g->in, q->g->n_in, q->g->bzp, j);
		int16_t *d = q->bp + j * q->Kp;

		for (size_t t = 0; t < K; t++)
			d[t] = (int16_t)(q8get(q->g->b, q->bo + t * N + j) - bz);
		memset(d + K, 0, (q->Kp - K) * sizeof *d);
	}
}

static void qmm_store(void *ctx, size_t b, size_t i, size_t j0, const uint32_t *acc, size_t n)
{
	const qmm *q = ctx;
	const mmgeo *g = q->g;
	size_t o = (q->bi * (size_t)g->m + i) * (size_t)g->n + j0;
	int requant = g->ys >= 0;
	int32_t yz = requant ? zp_at(g->in, g->n_in, g->yzp, 0) : 0;

	(void)b;
	for (size_t j = 0; j < n; j++)
		qstore(g->out, o + j, acc[j], 0, requant,
		       requant ? enpu_requant_multiplier(scale_at(&g->in[g->as], 0),
							 scale_at(&g->in[g->bs], j0 + j),
							 scale_at(&g->in[g->ys], 0))
			       : 0.0f,
		       yz);
}

/* the matmul on the GEMM, one output matrix at a time: 0, 1 when it does
 * not apply (the direct loop then), -1 when scratch memory fails */
static int mm_gemm(const mmgeo *g, enpu_par *par)
{
	size_t M = (size_t)g->m, N = (size_t)g->n, rows = mm_rows(g);
	qmm q = {.g = g, .Kp = enpu_qgemm_kp((size_t)g->k)};
	void *heap;
	int16_t *s;

	if (!is_q8(g->a) || !is_q8(g->b) || !zp_q8(g->in, g->n_in, g->azp) ||
	    !zp_q8(g->in, g->n_in, g->bzp) || (g->ys < 0 && g->out->dtype != ENPU_DT_I32))
		return 1;
	if (rows == 0 || N == 0)
		return 0;
	if (q.Kp > SIZE_MAX / 4 / (M + N))
		return -1;
	if (!(s = qscratch(par, q.Kp * (M + N), &heap)))
		return -1;
	q.ap = s;
	q.bp = s + M * q.Kp;
	for (q.bi = 0; q.bi < rows / M; q.bi++) {
		size_t bi = q.bi, ao = 0, bo = 0;
		enpu_qgemm gm = {.batch = 1, .M = M, .N = N, .Kp = q.Kp, .a = q.ap, .b = q.bp,
				 .store = qmm_store, .ctx = &q};

		for (int d = g->nbd - 1; d >= 0; d--) {
			size_t id = bi % (size_t)g->bdim[d];

			bi /= (size_t)g->bdim[d];
			ao += id * (size_t)g->astr[d];
			bo += id * (size_t)g->bstr[d];
		}
		q.ao = ao * M * (size_t)g->k;
		q.bo = bo * (size_t)g->k * N;
		enpu_par_for(par, M, 16, qmm_pack_a, &q);
		enpu_par_for(par, N, 16, qmm_pack_b, &q);
		enpu_qgemm_run(&gm, par);
	}
	free(heap);
	return 0;
}

/* the GEMM's operands of one output matrix: (M + N) rows of Kp int16 */
static size_t mm_scratch(const enpu_shape *sa, const enpu_shape *sb)
{
	size_t M, K, N, kp;

	if (sa->ndim < 1 || sb->ndim < 1)
		return 0;
	M = sa->ndim >= 2 ? (size_t)sa->dim[sa->ndim - 2] : 1;
	K = (size_t)sa->dim[sa->ndim - 1];
	N = sb->ndim >= 2 ? (size_t)sb->dim[sb->ndim - 1] : 1;
	kp = enpu_qgemm_kp(K);
	if (M + N == 0 || kp > SIZE_MAX / sizeof(int16_t) / 4 / (M + N))
		return 0;
	return kp * (M + N) * sizeof(int16_t);
}

ENPU_SCRATCH(matmul_integer)
{
	(void)a;
	(void)out;
	return n_in >= 2 ? mm_scratch(&in[0], &in[1]) : 0;
}

ENPU_SCRATCH(qlinear_matmul)
{
	(void)a;
	(void)out;
	return n_in >= 4 ? mm_scratch(&in[0], &in[3]) : 0;
}

/* matmul_integer: NumPy matmul of (a - a_zp) and (b - b_zp) (b_zp per
 * column when 1-D [N]), int32 */
ENPU_KERNEL(matmul_integer)
{
	mmgeo g = {.a = &in[0], .b = &in[1], .out = &out[0], .in = in, .n_in = n_in, .azp = 2,
		   .bzp = 3, .as = -1, .bs = -1, .ys = -1, .yzp = -1, .bias = -1};
	int r;

	(void)a;
	(void)n_out;
	mm_geom(&g);
	if ((r = mm_gemm(&g, par)) <= 0)
		return r;
	enpu_par_for(par, mm_rows(&g), 1, mm_range, &g);
	return 0;
}

/* qlinear_matmul: matmul_integer's acc, then the requantisation with
 * M = fl32(fl32(a_scale * b_scale[j]) / y_scale) */
ENPU_KERNEL(qlinear_matmul)
{
	mmgeo g = {.a = &in[0], .b = &in[3], .out = &out[0], .in = in, .n_in = n_in, .azp = 2,
		   .bzp = 5, .as = 1, .bs = 4, .ys = 6, .yzp = 7, .bias = -1};
	int r;

	(void)a;
	(void)n_out;
	mm_geom(&g);
	if ((r = mm_gemm(&g, par)) <= 0)
		return r;
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

/* ---- integer conv on the GEMM ---------------------------------------------------- */

typedef struct qcv {
	const cvgeo *g;
	size_t C, H, W, M, Cg, KH, KW, OH, OW, Mg, G, K, Kp, P, n;
	int32_t xz;
	int16_t *wp, *col;        /* [M][Kp] weights - w_zp; [G][P][Kp] x - x_zp */
} qcv;

static void qcv_pack_w(void *ctx, size_t b, size_t e)
{
	const qcv *q = ctx;

	for (size_t m = b; m < e; m++) {
		int32_t wz = zp_at(q->g->in, q->g->n_in, q->g->wzp, m);
		int16_t *d = q->wp + m * q->Kp;

		for (size_t k = 0; k < q->K; k++)
			d[k] = (int16_t)(q8get(q->g->w, m * q->K + k) - wz);
		memset(d + q->K, 0, (q->Kp - q->K) * sizeof *d);
	}
}

/* rows (group, output position) of image n's im2col: k = (ci, kh, kw) */
static void qcv_im2col(void *ctx, size_t b, size_t e)
{
	const qcv *q = ctx;
	const enpu_attrs *at = q->g->at;
	const enpu_view *x = q->g->x;

	for (size_t r = b; r < e; r++) {
		size_t g = r / q->P, p = r % q->P, oh = p / q->OW, ow = p % q->OW, k = 0;
		int16_t *d = q->col + r * q->Kp;

		for (size_t ci = 0; ci < q->Cg; ci++) {
			size_t plane = ((q->n * q->C + g * q->Cg + ci) * q->H) * q->W;

			for (size_t kh = 0; kh < q->KH; kh++) {
				int64_t ih = (int64_t)oh * at->strides[0] - at->pads[0] +
					     (int64_t)kh * at->dilations[0];

				for (size_t kw = 0; kw < q->KW; kw++, k++) {
					int64_t iw = (int64_t)ow * at->strides[1] - at->pads[1] +
						     (int64_t)kw * at->dilations[1];

					d[k] = ih < 0 || ih >= (int64_t)q->H || iw < 0 ||
							       iw >= (int64_t)q->W
						       ? 0
						       : (int16_t)(q8get(x, plane + (size_t)ih * q->W +
									  (size_t)iw) -
								   q->xz);
				}
			}
		}
		memset(d + q->K, 0, (q->Kp - q->K) * sizeof *d);
	}
}

static void qcv_store(void *ctx, size_t g, size_t i, size_t j0, const uint32_t *acc, size_t n)
{
	const qcv *q = ctx;
	const cvgeo *cg = q->g;
	size_t m = g * q->Mg + i, o = (q->n * q->M + m) * q->P + j0;
	int32_t bias = cg->bias >= 0 && cg->bias < cg->n_in ? qget(&cg->in[cg->bias], m) : 0;
	int requant = cg->ys >= 0;
	float mult = 0.0f;
	int32_t yz = 0;

	if (requant) {
		mult = enpu_requant_multiplier(scale_at(&cg->in[cg->xs], 0),
					       scale_at(&cg->in[cg->ws], m),
					       scale_at(&cg->in[cg->ys], 0));
		yz = zp_at(cg->in, cg->n_in, cg->yzp, 0);
	}
	for (size_t j = 0; j < n; j++)
		qstore(cg->out, o + j, acc[j], bias, requant, mult, yz);
}

/* the conv on the GEMM: 0, 1 when it does not apply (the direct loop
 * then), -1 when scratch memory fails */
static int cv_gemm(const cvgeo *g, enpu_par *par)
{
	const enpu_shape *xs = &g->x->shape, *ws = &g->w->shape, *os = &g->out->shape;
	qcv q = {.g = g};
	void *heap;
	int16_t *s;

	if (!is_q8(g->x) || !is_q8(g->w) || !zp_q8(g->in, g->n_in, g->xzp) ||
	    !zp_q8(g->in, g->n_in, g->wzp) || (g->ys < 0 && g->out->dtype != ENPU_DT_I32) ||
	    g->at->group < 1)
		return 1;
	q.C = (size_t)xs->dim[1], q.H = (size_t)xs->dim[2], q.W = (size_t)xs->dim[3];
	q.M = (size_t)ws->dim[0], q.Cg = (size_t)ws->dim[1];
	q.KH = (size_t)ws->dim[2], q.KW = (size_t)ws->dim[3];
	q.OH = (size_t)os->dim[2], q.OW = (size_t)os->dim[3];
	q.G = (size_t)g->at->group, q.Mg = q.M / q.G;
	q.K = q.Cg * q.KH * q.KW, q.Kp = enpu_qgemm_kp(q.K), q.P = q.OH * q.OW;
	q.xz = zp_at(g->in, g->n_in, g->xzp, 0);
	if (cv_rows(os) == 0 || q.P == 0)
		return 0;
	if (q.Kp > SIZE_MAX / 4 / (q.M + q.G * q.P))
		return -1;
	if (!(s = qscratch(par, q.Kp * (q.M + q.G * q.P), &heap)))
		return -1;
	q.wp = s;
	q.col = s + q.M * q.Kp;
	enpu_par_for(par, q.M, 16, qcv_pack_w, &q);
	for (q.n = 0; q.n < (size_t)os->dim[0]; q.n++) {
		enpu_qgemm gm = {.batch = q.G, .M = q.Mg, .N = q.P, .Kp = q.Kp, .a = q.wp,
				 .b = q.col, .a_bs = q.Mg * q.Kp, .b_bs = q.P * q.Kp,
				 .store = qcv_store, .ctx = &q};

		enpu_par_for(par, q.G * q.P, 64, qcv_im2col, &q);
		enpu_qgemm_run(&gm, par);
	}
	free(heap);
	return 0;
}

/* the GEMM's operands: the weights (M rows) and one image's im2col
 * (group x positions rows), of Kp int16 each */
static size_t cv_scratch(const enpu_attrs *a, const enpu_shape *x, const enpu_shape *w,
			 const enpu_shape *o)
{
	size_t K, kp, rows;

	(void)x;
	if (w->ndim != 4 || o->ndim != 4 || a->group < 1)
		return 0;
	K = (size_t)(w->dim[1] * w->dim[2] * w->dim[3]);
	kp = enpu_qgemm_kp(K);
	rows = (size_t)w->dim[0] + (size_t)a->group * (size_t)(o->dim[2] * o->dim[3]);
	if (rows == 0 || kp > SIZE_MAX / sizeof(int16_t) / 4 / rows)
		return 0;
	return kp * rows * sizeof(int16_t);
}

ENPU_SCRATCH(conv_integer)
{
	return n_in >= 2 ? cv_scratch(a, &in[0], &in[1], out) : 0;
}

ENPU_SCRATCH(qlinear_conv)
{
	return n_in >= 4 ? cv_scratch(a, &in[0], &in[3], out) : 0;
}

/* conv_integer: for output (n, m, oh, ow), the sum over the group's input
 * channels and the kernel's taps of (x - x_zp) * (w - w_zp[m]), padding
 * adding 0; int32 */
ENPU_KERNEL(conv_integer)
{
	cvgeo g = {a, &in[0], &in[1], &out[0], in, n_in, 2, 3, -1, -1, -1, -1, -1};
	int r = cv_gemm(&g, par);

	(void)n_out;
	if (r <= 0)
		return r;
	enpu_par_for(par, cv_rows(&out[0].shape), 1, cv_range, &g);
	return 0;
}

/* qlinear_conv: conv_integer's acc + bias[m] (int32), then the
 * requantisation with M = fl32(fl32(x_scale * w_scale[m]) / y_scale) */
ENPU_KERNEL(qlinear_conv)
{
	cvgeo g = {a, &in[0], &in[3], &out[0], in, n_in, 2, 5, 1, 4, 6, 7, 8};
	int r = cv_gemm(&g, par);

	(void)n_out;
	if (r <= 0)
		return r;
	enpu_par_for(par, cv_rows(&out[0].shape), 1, cv_range, &g);
	return 0;
}

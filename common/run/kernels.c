/* kernels.c: the cpu_ref kernels built on the GEMM core (gemm.c): matmul,
 * gemm and conv2d (im2col, or the input itself for a 1x1 conv), and
 * depthwise conv2d's direct kernel; with the scratch each needs (packed A
 * and B), which the memory plan holds. The other kernels live in
 * kernels_ew.c (elementwise, batchnorm) and kernels_misc.c (softmax,
 * pools, data movement).
 *
 * The bits (docs/spec-format.md, "Reference arithmetic"): every output element is
 * acc = 0.0f; for k = 0, 1, ..., K-1: acc = fmaf(A[i,k], B[k,j], acc);
 * then an epilogue in a fixed order. Tiling, packing and threads change only
 * which element is computed when and by whom, never that chain, so the
 * result does not depend on the block sizes or the thread count. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kernels.h"
#include "gemm.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define HAVE_X86_PATHS 1
#include <immintrin.h>
#endif

float *enpu_kscratch(enpu_par *par, size_t floats, float **heap)
{
	float *s;

	*heap = NULL;
	if (floats > SIZE_MAX / sizeof(float))
		return NULL;
	if ((s = enpu_par_scratch(par, floats * sizeof(float))))
		return s;
	return *heap = malloc(floats ? floats * sizeof(float) : 1);
}

/* ---- matmul -------------------------------------------------------- */

/* M, K, N and the batch of a matmul from its shapes (1-D a is (1, K), 1-D
 * b is (K, 1)). */
static void matmul_dims(const enpu_shape *sa, const enpu_shape *sb, size_t *M, size_t *K,
			size_t *N)
{
	*M = sa->ndim >= 2 ? (size_t)sa->dim[sa->ndim - 2] : 1;
	*K = (size_t)sa->dim[sa->ndim - 1];
	*N = sb->ndim >= 2 ? (size_t)sb->dim[sb->ndim - 1] : 1;
}

/* One product's packed B (the batch's products one after the other). */
ENPU_SCRATCH(matmul)
{
	size_t M, K, N;

	if (n_in < 2)
		return 0;
	matmul_dims(&in[0], &in[1], &M, &K, &N);
	return enpu_gemm_scratch_floats(M, N, K) * sizeof(float);
}

/* matmul (NumPy): out[..., i, j] = sum_k a[..., i, k] * b[..., k, j], the sum
 * as acc = 0.0f; for k ascending: acc = fmaf(a[i,k], b[k,j], acc). A 1-D a is
 * (1, K) and a 1-D b is (K, 1), the added dim then dropped from the output;
 * batch dims broadcast (the output's batch dims are already the broadcast
 * shape). No epilogue. */
int enpu_k_matmul_tiles(const enpu_view *in, enpu_view *out, const enpu_gemm_blocks *bl,
			enpu_par *par)
{
	const enpu_shape *sa = &in[0].shape, *sb = &in[1].shape, *so = &out[0].shape;
	int ra = sa->ndim, rb = sb->ndim;
	size_t M, K, N;
	int a_batch = ra > 2 ? ra - 2 : 0, b_batch = rb > 2 ? rb - 2 : 0;
	int o_batch = so->ndim - (ra >= 2) - (rb >= 2);
	size_t nbatch = 1;

	matmul_dims(sa, sb, &M, &K, &N);
	for (int d = 0; d < o_batch; d++)
		nbatch *= (size_t)so->dim[d];
	if (M == 0 || N == 0 || nbatch == 0)
		return 0;

	/* Batch strides (in matrices) of a and b, right-aligned against the
	 * output's batch dims; 0 where a dim broadcasts or is absent. */
	size_t astr[ENPU_MAX_DIMS] = {0}, bstr[ENPU_MAX_DIMS] = {0};
	size_t s = 1;
	for (int d = a_batch - 1; d >= 0; d--) {
		int od = o_batch - a_batch + d;
		astr[od] = sa->dim[d] == 1 ? 0 : s;
		s *= (size_t)sa->dim[d];
	}
	s = 1;
	for (int d = b_batch - 1; d >= 0; d--) {
		int od = o_batch - b_batch + d;
		bstr[od] = sb->dim[d] == 1 ? 0 : s;
		s *= (size_t)sb->dim[d];
	}

	int small = enpu_gemm_small(M, N, K);
	float *heap = NULL, *scratch = NULL, *bp = NULL;
	if (!small) {
		if (!(scratch = enpu_kscratch(par, enpu_gemm_scratch_floats(M, N, K), &heap)))
			return -1;
		bp = enpu_gemm_align(scratch);
	}
	size_t amat = M * K, bmat = K * N, omat = M * N;
	for (size_t bi = 0; bi < nbatch; bi++) {
		size_t ao = 0, bo = 0, rem = bi;
		for (int d = o_batch - 1; d >= 0; d--) {
			size_t idx = rem % (size_t)so->dim[d];
			rem /= (size_t)so->dim[d];
			ao += idx * astr[d];
			bo += idx * bstr[d];
		}
		enpu_gemm g = {.M = M, .N = N, .K = K, .a = in[0].data + ao * amat,
			       .a_rs = K, .a_cs = 1, .b = in[1].data + bo * bmat, .b_rs = N,
			       .b_cs = 1, .c = out[0].data + bi * omat, .ldc = N,
			       .epi = ENPU_EPI_NONE};
		if (small) {
			enpu_gemm_direct(&g);
			continue;
		}
		enpu_gemm_compute(&g, bp, NULL, NULL, bl, par);
	}
	free(heap);
	return 0;
}

ENPU_KERNEL(matmul)
{
	return enpu_k_matmul_tiles(in, out, NULL, par);
}

/* ---- gemm ---------------------------------------------------------- */

ENPU_SCRATCH(gemm)
{
	if (n_in < 2 || in[0].ndim != 2 || out->ndim != 2)
		return 0;
	return enpu_gemm_scratch_floats((size_t)out->dim[0], (size_t)out->dim[1],
					(size_t)(a->trans_a ? in[0].dim[0] : in[0].dim[1])) *
	       sizeof(float);
}

/* gemm (ONNX Gemm): A' = trans_a ? A^T : A (M x K), B' = trans_b ? B^T : B
 * (K x N). s = sum_k fmaf(A'[i,k], B'[k,j], acc) ascending from 0.0f; then
 * y = alpha * s (always, even for alpha = 1: exact); then, when C is given,
 * y = y + (beta * c[i,j]) with C broadcast unidirectionally to (M, N). */
int enpu_k_gemm_tiles(const enpu_attrs *a, const enpu_view *in, int n_in, enpu_view *out,
		      const enpu_gemm_blocks *bl, enpu_par *par)
{
	const enpu_shape *sa = &in[0].shape, *so = &out[0].shape;
	size_t M = (size_t)so->dim[0], N = (size_t)so->dim[1];
	size_t K = (size_t)(a->trans_a ? sa->dim[0] : sa->dim[1]);
	if (M == 0 || N == 0)
		return 0;

	enpu_gemm g = {.M = M, .N = N, .K = K, .a = in[0].data,
		       .a_rs = a->trans_a ? 1 : K, .a_cs = a->trans_a ? M : 1,
		       .b = in[1].data, .b_rs = a->trans_b ? 1 : N, .b_cs = a->trans_b ? K : 1,
		       .c = out[0].data, .ldc = N, .epi = ENPU_EPI_GEMM,
		       .alpha = a->alpha, .beta = a->beta};
	if (n_in >= 3 && in[2].data) {
		const enpu_shape *sc = &in[2].shape;
		g.cin = in[2].data;
		if (sc->ndim == 1) {
			g.cin_cs = sc->dim[0] == 1 ? 0 : 1;
		} else if (sc->ndim == 2) {
			g.cin_rs = sc->dim[0] == 1 ? 0 : (size_t)sc->dim[1];
			g.cin_cs = sc->dim[1] == 1 ? 0 : 1;
		}
	}
	if (enpu_gemm_small(M, N, K)) {
		enpu_gemm_direct(&g);
		return 0;
	}
	float *heap, *scratch = enpu_kscratch(par, enpu_gemm_scratch_floats(M, N, K), &heap);
	if (!scratch)
		return -1;
	enpu_gemm_compute(&g, enpu_gemm_align(scratch), NULL, NULL, bl, par);
	free(heap);
	return 0;
}

ENPU_KERNEL(gemm)
{
	return enpu_k_gemm_tiles(a, in, n_in, out, NULL, par);
}

/* ---- conv2d -------------------------------------------------------- */

/* The conv's sizes: N images, M output channels in G groups of Mg, Cg input
 * channels per group, K = Cg*kH*kW, P = OH*OW output positions. */
typedef struct conv_dims {
	size_t N, C, H, W, M, Cg, kH, kW, OH, OW, G, Mg, K, P;
} conv_dims;

static void conv_dims_of(const enpu_attrs *a, const enpu_shape *x, const enpu_shape *w,
			 const enpu_shape *o, conv_dims *d)
{
	d->N = (size_t)x->dim[0];
	d->C = (size_t)x->dim[1];
	d->H = (size_t)x->dim[2];
	d->W = (size_t)x->dim[3];
	d->M = (size_t)w->dim[0];
	d->Cg = (size_t)w->dim[1];
	d->kH = (size_t)w->dim[2];
	d->kW = (size_t)w->dim[3];
	d->OH = (size_t)o->dim[2];
	d->OW = (size_t)o->dim[3];
	d->G = a->group > 0 ? (size_t)a->group : 1;
	d->Mg = d->M / d->G;
	d->K = d->Cg * d->kH * d->kW;
	d->P = d->OH * d->OW;
}

/* A depthwise conv (one input channel per group) runs directly; a 1x1 conv
 * with stride 1 and no padding reads its input as B; the rest through
 * im2col. */
static int conv_is_depthwise(const conv_dims *d)
{
	return d->Cg == 1 && d->G > 1;
}

static int conv_is_pointwise(const enpu_attrs *a, const conv_dims *d)
{
	return d->kH == 1 && d->kW == 1 && a->strides[0] == 1 && a->strides[1] == 1 &&
	       !a->pads[0] && !a->pads[1] && !a->pads[2] && !a->pads[3];
}

/* A small conv (per image and group a small product, gemm.h) element by
 * element, in the same chain as the GEMM path. */
static void conv_direct(const enpu_attrs *a, const enpu_view *in, const float *bias,
			enpu_view *out, const conv_dims *d)
{
	const float *x = in[0].data, *w = in[1].data;

	for (size_t n = 0; n < d->N; n++)
		for (size_t m = 0; m < d->M; m++) {
			size_t g = m / d->Mg;
			for (size_t oh = 0; oh < d->OH; oh++)
				for (size_t ow = 0; ow < d->OW; ow++) {
					float acc = 0.0f;
					for (size_t ci = 0; ci < d->Cg; ci++)
						for (size_t kh = 0; kh < d->kH; kh++) {
							int64_t ih = (int64_t)(oh * (size_t)a->strides[0] +
									       kh * (size_t)a->dilations[0]) - a->pads[0];
							for (size_t kw = 0; kw < d->kW; kw++) {
								int64_t iw = (int64_t)(ow * (size_t)a->strides[1] +
										       kw * (size_t)a->dilations[1]) - a->pads[1];
								float v = ih >= 0 && ih < (int64_t)d->H && iw >= 0 &&
									  iw < (int64_t)d->W ?
									x[((n * d->C + g * d->Cg + ci) * d->H + (size_t)ih) * d->W +
									  (size_t)iw] : 0.0f;
								acc = fmaf(w[((m * d->Cg + ci) * d->kH + kh) * d->kW + kw], v,
									   acc);
							}
						}
					out[0].data[((n * d->M + m) * d->OH + oh) * d->OW + ow] =
						bias ? acc + bias[m] : acc;
				}
		}
}

/* Packed B: one image's im2col (or input, 1x1) for one group. */
ENPU_SCRATCH(conv2d)
{
	conv_dims d;

	if (n_in < 2 || in[0].ndim != 4 || in[1].ndim != 4 || out->ndim != 4)
		return 0;
	conv_dims_of(a, &in[0], &in[1], out, &d);
	if (conv_is_depthwise(&d))
		return 0;
	return enpu_gemm_scratch_floats(d.Mg, d.P, d.K) * sizeof(float);
}

/* im2col straight into the packed-B layout (gemm.h), one K block of some
 * panels at a time as the GEMM asks (enpu_gemm_packer): row k = (ci, kh,
 * kw) in that order (ci outermost), column j = (oh, ow); a position in the
 * padding holds 0.0f. Whole runs of one output row are copied at a time:
 * for tap kw the valid ow are [lo[kw], hi[kw]) whatever the row. */
#define IM2COL_MAX_KW 64

typedef struct im2col_ctx {
	const float *x;          /* this image's first channel of the group */
	size_t H, W, OH, OW, kH, kW, K, P, nr;
	size_t sh, sw, dh, dw, pt, pl;
	size_t lo[IM2COL_MAX_KW], hi[IM2COL_MAX_KW];
} im2col_ctx;

/* for tap kw, the ow whose iw = ow*sw + kw*dw - pl lies in [0, W) */
static void tap_range(size_t W, size_t OW, size_t sw, size_t off_plus, size_t pl, size_t *lo,
		      size_t *hi)
{
	/* iw >= 0: ow*sw >= pl - off_plus; iw < W: ow*sw < W + pl - off_plus */
	size_t l = pl > off_plus ? (pl - off_plus + sw - 1) / sw : 0;
	size_t h = W + pl > off_plus ? (W + pl - off_plus + sw - 1) / sw : 0;

	*lo = l < OW ? l : OW;
	*hi = h < OW ? h : OW;
}

static void im2col_init(im2col_ctx *x, const enpu_attrs *a, const conv_dims *d, const float *img)
{
	*x = (im2col_ctx){.x = img, .H = d->H, .W = d->W, .OH = d->OH, .OW = d->OW, .kH = d->kH,
			  .kW = d->kW, .K = d->K, .P = d->P, .nr = (size_t)enpu_gemm_nr(),
			  .sh = (size_t)a->strides[0], .sw = (size_t)a->strides[1],
			  .dh = (size_t)a->dilations[0], .dw = (size_t)a->dilations[1],
			  .pt = (size_t)a->pads[0], .pl = (size_t)a->pads[1]};
	for (size_t kw = 0; kw < d->kW; kw++)
		tap_range(d->W, d->OW, x->sw, kw * x->dw, x->pl, &x->lo[kw], &x->hi[kw]);
}

/* cols floats of one packed row: output row oh, columns ow0 .. ow0+cols */
static void im2col_run(const im2col_ctx *x, const float *plane, size_t kh, size_t kw,
		       size_t oh, size_t ow0, size_t cols, float *d)
{
	int64_t ih = (int64_t)(oh * x->sh + kh * x->dh) - (int64_t)x->pt;
	size_t lo = x->lo[kw], hi = x->hi[kw], a, b;

	if (ih < 0 || ih >= (int64_t)x->H || lo >= hi) {
		memset(d, 0, cols * sizeof(float));
		return;
	}
	a = lo > ow0 ? lo - ow0 : 0;
	b = hi > ow0 ? hi - ow0 : 0;
	a = a < cols ? a : cols;
	b = b < cols ? b : cols;
	b = b > a ? b : a;
	memset(d, 0, a * sizeof(float));
	/* iw = ow*sw + kw*dw - pl, within [0, W) for ow in [lo, hi) */
	const float *row = plane + (size_t)ih * x->W + (ow0 + a) * x->sw + kw * x->dw - x->pl;
	if (x->sw == 1)
		memcpy(d + a, row, (b - a) * sizeof(float));
	else
		for (size_t t = 0; t < b - a; t++)
			d[a + t] = row[t * x->sw];
	memset(d + b, 0, (cols - b) * sizeof(float));
}

/* A panel's columns as runs within one output row (the same for every k). */
typedef struct im2col_seg {
	size_t oh, ow, run;
} im2col_seg;

static void im2col_pack(void *vctx, size_t k0, size_t k1, size_t q0, size_t q1, float *bp)
{
	const im2col_ctx *x = vctx;
	size_t nr = x->nr, taps = x->kH * x->kW;
	im2col_seg seg[64];

	for (size_t p = q0; p < q1; p++) {
		size_t j0 = p * nr, j1 = j0 + nr < x->P ? j0 + nr : x->P, ns = 0, cols = j1 - j0;
		float *d = bp + (p * x->K + k0) * nr;
		for (size_t j = j0; j < j1; ns++) {
			seg[ns].oh = j / x->OW;
			seg[ns].ow = j % x->OW;
			seg[ns].run = x->OW - seg[ns].ow < j1 - j ? x->OW - seg[ns].ow : j1 - j;
			j += seg[ns].run;
		}
		size_t ci = k0 / taps, kh = k0 % taps / x->kW, kw = k0 % x->kW;
		for (size_t k = k0; k < k1; k++, d += nr) {
			const float *plane = x->x + ci * x->H * x->W;
			float *o = d;
			for (size_t s = 0; s < ns; o += seg[s].run, s++)
				im2col_run(x, plane, kh, kw, seg[s].oh, seg[s].ow, seg[s].run, o);
			if (cols < nr)
				memset(d + cols, 0, (nr - cols) * sizeof(float));
			if (++kw == x->kW) {
				kw = 0;
				if (++kh == x->kH)
					kh = 0, ci++;
			}
		}
	}
}

/* ---- depthwise conv2d ---------------------------------------------- */

/* One output row of a depthwise channel: y[ow] for ow in [0, OW), each
 * acc = 0.0f; for kh, kw ascending: acc = fmaf(w[kh, kw], v, acc) with v
 * the input or 0.0f in the padding (padded taps are not skipped); then
 * y = acc + bias. Lanes are output positions: each its own chain. */
typedef struct dw_ctx dw_ctx;
typedef void (*dw_row_fn)(const dw_ctx *c, const float *plane, const float *w, float bias,
			  size_t oh, float *y);
struct dw_ctx {
	const float *x, *w, *bias;
	float *y;
	conv_dims d;
	size_t sh, sw, dh, dw, pt, pl;
	dw_row_fn row;
};

/* v for lanes ow0 .. ow0+n of tap (ih, kw) into v[0 .. n), 0.0f outside. */
static void dw_taps(const dw_ctx *c, const float *plane, int64_t ih, size_t kw, size_t ow0,
		    size_t n, float *v)
{
	for (size_t l = 0; l < n; l++) {
		int64_t iw = (int64_t)((ow0 + l) * c->sw + kw * c->dw) - (int64_t)c->pl;
		v[l] = ih >= 0 && ih < (int64_t)c->d.H && iw >= 0 && iw < (int64_t)c->d.W ?
			plane[(size_t)ih * c->d.W + (size_t)iw] : 0.0f;
	}
}

#define DW_LANES 16

static void dw_row_portable(const dw_ctx *c, const float *plane, const float *w, float bias,
			    size_t oh, float *y)
{
	float acc[DW_LANES], v[DW_LANES];

	for (size_t ow0 = 0; ow0 < c->d.OW; ow0 += DW_LANES) {
		size_t n = c->d.OW - ow0 < DW_LANES ? c->d.OW - ow0 : DW_LANES;
		for (size_t l = 0; l < n; l++)
			acc[l] = 0.0f;
		for (size_t kh = 0; kh < c->d.kH; kh++) {
			int64_t ih = (int64_t)(oh * c->sh + kh * c->dh) - (int64_t)c->pt;
			for (size_t kw = 0; kw < c->d.kW; kw++) {
				float wv = w[kh * c->d.kW + kw];
				dw_taps(c, plane, ih, kw, ow0, n, v);
				for (size_t l = 0; l < n; l++)
					acc[l] = fmaf(wv, v[l], acc[l]);
			}
		}
		for (size_t l = 0; l < n; l++)
			y[ow0 + l] = c->bias ? acc[l] + bias : acc[l];
	}
}

#ifdef HAVE_X86_PATHS
/* The same with 16 lanes in one register: per tap, the lanes whose input
 * lies inside the row are loaded (stride 1: one masked load; otherwise a
 * masked gather), the others are 0.0f, and a tap row in the padding is all
 * 0.0f: every tap still takes part. */
__attribute__((target("avx512f")))
static void dw_row_avx512(const dw_ctx *c, const float *plane, const float *w, float bias,
			  size_t oh, float *y)
{
	const int64_t W = (int64_t)c->d.W, sw = (int64_t)c->sw;
	const __m512i lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
	const __m512i step = _mm512_mullo_epi32(lane, _mm512_set1_epi32((int)sw));
	float v[DW_LANES];

	for (size_t ow0 = 0; ow0 < c->d.OW; ow0 += DW_LANES) {
		size_t n = c->d.OW - ow0 < DW_LANES ? c->d.OW - ow0 : DW_LANES;
		__mmask16 live = (__mmask16)((1u << n) - 1u);
		__m512 acc = _mm512_setzero_ps();
		for (size_t kh = 0; kh < c->d.kH; kh++) {
			int64_t ih = (int64_t)(oh * c->sh + kh * c->dh) - (int64_t)c->pt;
			int row_in = ih >= 0 && ih < (int64_t)c->d.H;
			const float *row = plane + (row_in ? (size_t)ih * c->d.W : 0);
			for (size_t kw = 0; kw < c->d.kW; kw++) {
				int64_t iw0 = (int64_t)(ow0 * c->sw + kw * c->dw) - (int64_t)c->pl;
				__m512 xv = _mm512_setzero_ps();
				if (row_in) {
					/* lanes l with 0 <= iw0 + l*sw < W */
					int64_t lo = iw0 >= 0 ? 0 : (-iw0 + sw - 1) / sw;
					int64_t hi = iw0 >= W ? 0 : (W - iw0 + sw - 1) / sw;
					lo = lo > 16 ? 16 : lo;
					hi = hi > 16 ? 16 : hi;
					__mmask16 m = hi > lo ? (__mmask16)(((1u << hi) - 1u) & ~((1u << lo) - 1u)) : 0;
					m &= live;
					if (m && sw == 1)
						xv = _mm512_maskz_loadu_ps(m, row + iw0);
					else if (m)
						xv = _mm512_mask_i32gather_ps(xv, m, _mm512_add_epi32(step,
									    _mm512_set1_epi32((int)iw0)), row, 4);
				}
				acc = _mm512_fmadd_ps(_mm512_set1_ps(w[kh * c->d.kW + kw]), xv, acc);
			}
		}
		if (c->bias)
			acc = _mm512_add_ps(acc, _mm512_set1_ps(bias));
		_mm512_storeu_ps(v, acc);
		memcpy(y + ow0, v, n * sizeof(float));
	}
}
#endif

static void dw_range(void *vctx, size_t r0, size_t r1)
{
	const dw_ctx *c = vctx;
	const conv_dims *d = &c->d;

	for (size_t r = r0; r < r1; r++) {   /* r = (n, m, oh) */
		size_t oh = r % d->OH, m = (r / d->OH) % d->M, n = r / d->OH / d->M;
		const float *plane = c->x + (n * d->C + m / d->Mg) * d->H * d->W;
		const float *w = c->w + m * d->kH * d->kW;
		float bias = c->bias ? c->bias[m] : 0.0f;
		float *y = c->y + ((n * d->M + m) * d->OH + oh) * d->OW;
		c->row(c, plane, w, bias, oh, y);
	}
}

static void depthwise(const enpu_attrs *a, const enpu_view *in, int n_in, enpu_view *out,
		      const conv_dims *d, enpu_par *par)
{
	dw_ctx c = {.x = in[0].data, .w = in[1].data,
		    .bias = n_in >= 3 && in[2].data ? in[2].data : NULL, .y = out[0].data,
		    .d = *d, .sh = (size_t)a->strides[0], .sw = (size_t)a->strides[1],
		    .dh = (size_t)a->dilations[0], .dw = (size_t)a->dilations[1],
		    .pt = (size_t)a->pads[0], .pl = (size_t)a->pads[1], .row = dw_row_portable};
	size_t rows = d->N * d->M * d->OH, per = d->OW * d->kH * d->kW;

#ifdef HAVE_X86_PATHS
	if (!strcmp(enpu_gemm_isa(), "avx512"))
		c.row = dw_row_avx512;
#endif
	enpu_par_for(par, rows, per >= 16384 ? 1 : 16384 / (per ? per : 1), dw_range, &c);
}

/* conv2d (ONNX Conv, NCHW; w is (M, C/group, kH, kW); optional bias (M)).
 * For output (n, m, oh, ow) in group g = m / (M/group):
 *   acc = 0.0f
 *   for ci in group ascending, kh ascending, kw ascending (ci outermost):
 *     ih = oh*stride_h - pad_t + kh*dil_h, iw = ow*stride_w - pad_l + kw*dil_w
 *     v = x[n, g*Cg + ci, ih, iw], or 0.0f when (ih, iw) is in the padding
 *     acc = fmaf(w[m, ci, kh, kw], v, acc)
 *   y = acc + bias[m]   (y = acc without bias)
 * Padded positions are NOT skipped: they contribute fmaf(w, 0.0f, acc),
 * exactly ONNX's zero padding (this differs from skipping only when w is
 * inf/NaN or acc is -0.0). The GEMM per (image, group): A = w of the group
 * (Mg x K, K = Cg*kH*kW), B = im2col (K x OH*OW). */
int enpu_k_conv2d_tiles(const enpu_attrs *a, const enpu_view *in, int n_in, enpu_view *out,
			const enpu_gemm_blocks *bl, enpu_par *par)
{
	conv_dims d;
	const float *bias = n_in >= 3 && in[2].data ? in[2].data : NULL;

	conv_dims_of(a, &in[0].shape, &in[1].shape, &out[0].shape, &d);
	if (d.N == 0 || d.M == 0 || d.P == 0)
		return 0;
	if (conv_is_depthwise(&d)) {
		depthwise(a, in, n_in, out, &d, par);
		return 0;
	}
	if (enpu_gemm_small(d.Mg, d.P, d.K) || d.kW > IM2COL_MAX_KW) {
		conv_direct(a, in, bias, out, &d);
		return 0;
	}
	int pointwise = conv_is_pointwise(a, &d);
	float *heap, *scratch = enpu_kscratch(par, enpu_gemm_scratch_floats(d.Mg, d.P, d.K), &heap);
	if (!scratch)
		return -1;
	float *bp = enpu_gemm_align(scratch);
	for (size_t g = 0; g < d.G; g++) {
		enpu_gemm gc = {.M = d.Mg, .N = d.P, .K = d.K, .a = in[1].data + g * d.Mg * d.K,
				.a_rs = d.K, .a_cs = 1, .b_rs = d.P, .b_cs = 1, .ldc = d.P,
				.epi = bias ? ENPU_EPI_BIAS : ENPU_EPI_NONE,
				.bias = bias ? bias + g * d.Mg : NULL};
		for (size_t n = 0; n < d.N; n++) {
			gc.c = out[0].data + (n * d.M + g * d.Mg) * d.P;
			if (pointwise) {   /* B = the group's input channels as they are */
				gc.b = in[0].data + (n * d.C + g * d.Cg) * d.P;
				enpu_gemm_compute(&gc, bp, NULL, NULL, bl, par);
			} else {
				im2col_ctx ic;
				im2col_init(&ic, a, &d, in[0].data + (n * d.C + g * d.Cg) * d.H * d.W);
				enpu_gemm_compute(&gc, bp, im2col_pack, &ic, bl, par);
			}
		}
	}
	free(heap);
	return 0;
}

ENPU_KERNEL(conv2d)
{
	return enpu_k_conv2d_tiles(a, in, n_in, out, NULL, par);
}

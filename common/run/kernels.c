/* kernels.c: the cpu_ref kernels built on one GEMM core: matmul, gemm and
 * conv2d (im2col). The other kernels live in kernels_ew.c (elementwise,
 * batchnorm) and kernels_misc.c (softmax, pools, data movement).
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

/* Register tile: MR rows x NR columns of C held in accumulators. NR = 16
 * floats is two AVX vectors; B is packed into panels NR columns wide. */
#define MR 4
#define NR ENPU_PACK_NR

/* On x86-64 the micro-kernel has an AVX2+FMA version (vfmadd231ps: each
 * lane is one correctly rounded fused multiply-add, i.e. exactly fmaf),
 * chosen at run time when the CPU has it; everywhere else the portable
 * version calls fmaf (a single instruction on arm64 and on x86 with FMA, a
 * correctly rounded libm routine otherwise). Same bits either way. GCC's
 * auto-vectorizer at -O2 leaves the portable loop scalar, hence the
 * intrinsics. */
#if defined(__x86_64__) && defined(__GNUC__)
#define HAVE_AVX2_PATH 1
#include <immintrin.h>
#endif

/* What happens to a finished sum s = acc at C[i, j] (the epilogue):
 *   EPI_NONE: y = s
 *   EPI_GEMM: y = alpha * s; if c: y = y + (beta * c[i, j])   (c broadcast)
 *   EPI_BIAS: y = s + bias[i]                                  (conv2d) */
enum { EPI_NONE, EPI_GEMM, EPI_BIAS };

typedef struct epilogue {
	int kind;
	float alpha, beta;
	const float *c;          /* EPI_GEMM: may be NULL */
	size_t c_rs, c_cs;       /* element strides of c (0 = broadcast) */
	const float *bias;       /* EPI_BIAS: one per row of C */
} epilogue;

/* One GEMM: C (M x N, row stride ldc) = A (M x K) x B (K x N), with A read
 * through strides (A[i,k] = a[i*a_rs + k*a_cs]) and B already packed by
 * pack_b. */
typedef struct gemm_ctx {
	size_t M, N, K;
	const float *a;
	size_t a_rs, a_cs;
	const float *bp;
	float *c;
	size_t ldc;
	size_t nrb;              /* row blocks: ceil(M / MR) */
	epilogue epi;
} gemm_ctx;

/* Packed B: panel p holds columns [p*NR, p*NR + NR) for every k, as
 * bp[(p*K + k)*NR + col]; columns past N are 0 (computed, never stored). */
typedef struct pack_ctx {
	const float *b;
	size_t b_rs, b_cs, K, N;
	float *bp;
} pack_ctx;

static void pack_b_range(void *vctx, size_t p0, size_t p1)
{
	const pack_ctx *x = vctx;
	for (size_t p = p0; p < p1; p++) {
		float *dst = x->bp + p * x->K * NR;
		size_t j0 = p * NR;
		size_t nc = x->N - j0 < NR ? x->N - j0 : NR;
		for (size_t k = 0; k < x->K; k++) {
			const float *src = x->b + k * x->b_rs + j0 * x->b_cs;
			size_t c = 0;
			if (x->b_cs == 1)
				for (; c < nc; c++)
					dst[c] = src[c];
			else
				for (; c < nc; c++)
					dst[c] = src[c * x->b_cs];
			for (; c < NR; c++)
				dst[c] = 0.0f;
			dst += NR;
		}
	}
}

/* The micro-kernel for ROWS (1..MR) rows: each accumulator runs its own
 * ascending-k fmaf chain from 0.0f. */
static void micro_portable(int rows, size_t K, const float *a, size_t a_rs, size_t a_cs,
			   const float *bp, float acc[MR][NR])
{
	for (int r = 0; r < rows; r++)
		for (int j = 0; j < NR; j++)
			acc[r][j] = 0.0f;
	for (size_t k = 0; k < K; k++) {
		const float *b = bp + k * NR;
		for (int r = 0; r < rows; r++) {
			float av = a[r * a_rs + k * a_cs];
			for (int j = 0; j < NR; j++)
				acc[r][j] = fmaf(av, b[j], acc[r][j]);
		}
	}
}

#ifdef HAVE_AVX2_PATH
/* The same chains, 8 lanes per instruction: acc = fma(a, b, acc) per lane.
 * ROWS is a constant after inlining, so the accumulators stay in registers. */
static inline __attribute__((always_inline, target("avx2,fma"))) void
micro_avx2_rows(const int ROWS, size_t K, const float *a, size_t a_rs, size_t a_cs,
		const float *bp, float acc[MR][NR])
{
	__m256 c[MR][2];
	for (int r = 0; r < ROWS; r++)
		c[r][0] = c[r][1] = _mm256_setzero_ps();
	for (size_t k = 0; k < K; k++) {
		__m256 b0 = _mm256_loadu_ps(bp + k * NR);
		__m256 b1 = _mm256_loadu_ps(bp + k * NR + 8);
		for (int r = 0; r < ROWS; r++) {
			__m256 av = _mm256_set1_ps(a[r * a_rs + k * a_cs]);
			c[r][0] = _mm256_fmadd_ps(av, b0, c[r][0]);
			c[r][1] = _mm256_fmadd_ps(av, b1, c[r][1]);
		}
	}
	for (int r = 0; r < ROWS; r++) {
		_mm256_storeu_ps(acc[r], c[r][0]);
		_mm256_storeu_ps(acc[r] + 8, c[r][1]);
	}
}

__attribute__((target("avx2,fma")))
static void micro_avx2(int rows, size_t K, const float *a, size_t a_rs, size_t a_cs,
		       const float *bp, float acc[MR][NR])
{
	switch (rows) {
	case 4: micro_avx2_rows(4, K, a, a_rs, a_cs, bp, acc); break;
	case 3: micro_avx2_rows(3, K, a, a_rs, a_cs, bp, acc); break;
	case 2: micro_avx2_rows(2, K, a, a_rs, a_cs, bp, acc); break;
	default: micro_avx2_rows(1, K, a, a_rs, a_cs, bp, acc); break;
	}
}

static int use_avx2(void)
{
	static int cached = -1;   /* benign race: every thread computes the same */
	int v = __atomic_load_n(&cached, __ATOMIC_RELAXED);
	if (v < 0) {
		__builtin_cpu_init();
		v = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
		__atomic_store_n(&cached, v, __ATOMIC_RELAXED);
	}
	return v;
}
#endif

static void tile(int rows, size_t K, const float *a, size_t a_rs, size_t a_cs,
		 const float *bp, float acc[MR][NR])
{
#ifdef HAVE_AVX2_PATH
	if (use_avx2()) {
		micro_avx2(rows, K, a, a_rs, a_cs, bp, acc);
		return;
	}
#endif
	micro_portable(rows, K, a, a_rs, a_cs, bp, acc);
}

static void store(const gemm_ctx *g, size_t i0, size_t j0, int rows, size_t ncols,
		  float acc[MR][NR])
{
	const epilogue *ep = &g->epi;
	for (int r = 0; r < rows; r++) {
		size_t i = i0 + (size_t)r;
		float *dst = g->c + i * g->ldc + j0;
		for (size_t j = 0; j < ncols; j++) {
			float s = acc[r][j], y;
			if (ep->kind == EPI_GEMM) {
				y = ep->alpha * s;
				if (ep->c) {
					float cv = ep->c[i * ep->c_rs + (j0 + j) * ep->c_cs];
					y = y + ep->beta * cv;
				}
			} else if (ep->kind == EPI_BIAS) {
				y = s + ep->bias[i];
			} else {
				y = s;
			}
			dst[j] = y;
		}
	}
}

/* Tasks are (panel, row block) pairs, panel-major so that a chunk of
 * consecutive tasks reuses one packed panel of B. */
static void gemm_range(void *vctx, size_t t0, size_t t1)
{
	const gemm_ctx *g = vctx;
	float acc[MR][NR];
	for (size_t t = t0; t < t1; t++) {
		size_t p = t / g->nrb, rb = t % g->nrb;
		size_t i0 = rb * MR, j0 = p * NR;
		int rows = g->M - i0 < MR ? (int)(g->M - i0) : MR;
		size_t ncols = g->N - j0 < NR ? g->N - j0 : NR;
		tile(rows, g->K, g->a + i0 * g->a_rs, g->a_rs, g->a_cs,
		     g->bp + p * g->K * NR, acc);
		store(g, i0, j0, rows, ncols, acc);
	}
}

/* Floats of packed B for K x N: ceil(N/NR)*NR*K, 0 on overflow. At least 1
 * so that malloc never sees 0. */
size_t enpu_packed_floats(size_t K, size_t N)
{
	size_t panels = N / NR + (N % NR != 0), f;
	if (__builtin_mul_overflow(panels, (size_t)NR * (K ? K : 1), &f) ||
	    f > SIZE_MAX / sizeof(float))
		return 0;
	return f;
}

static size_t gemm_grain(size_t K)
{
	/* ~64k multiply-adds per chunk at least, so tiny GEMMs stay on the
	 * caller instead of paying for a wake-up. */
	size_t per_task = (size_t)MR * NR * (K ? K : 1);
	return per_task >= 65536 ? 1 : 65536 / per_task;
}

static void run_gemm(gemm_ctx *g, enpu_par *par)
{
	if (g->M == 0 || g->N == 0)
		return;
	size_t panels = g->N / NR + (g->N % NR != 0);
	g->nrb = g->M / MR + (g->M % MR != 0);
	enpu_par_for(par, panels * g->nrb, gemm_grain(g->K), gemm_range, g);
}

static void pack_b(const float *b, size_t b_rs, size_t b_cs, size_t K, size_t N,
		   float *bp, enpu_par *par)
{
	pack_ctx x = {b, b_rs, b_cs, K, N, bp};
	size_t panels = N / NR + (N % NR != 0);
	size_t per = K * NR;
	enpu_par_for(par, panels, per >= 32768 ? 1 : 32768 / (per ? per : 1),
		     pack_b_range, &x);
}

/* ---- matmul -------------------------------------------------------- */

/* matmul (NumPy): out[..., i, j] = sum_k a[..., i, k] * b[..., k, j], the sum
 * as acc = 0.0f; for k ascending: acc = fmaf(a[i,k], b[k,j], acc). A 1-D a is
 * (1, K) and a 1-D b is (K, 1), the added dim then dropped from the output;
 * batch dims broadcast (the output's batch dims are already the broadcast
 * shape). No epilogue. */
ENPU_KERNEL(matmul)
{
	const enpu_shape *sa = &in[0].shape, *sb = &in[1].shape, *so = &out[0].shape;
	int ra = sa->ndim, rb = sb->ndim;
	size_t M = ra >= 2 ? (size_t)sa->dim[ra - 2] : 1;
	size_t K = (size_t)sa->dim[ra - 1];
	size_t N = rb >= 2 ? (size_t)sb->dim[rb - 1] : 1;
	int a_batch = ra > 2 ? ra - 2 : 0, b_batch = rb > 2 ? rb - 2 : 0;
	int o_batch = so->ndim - (ra >= 2) - (rb >= 2);
	size_t nbatch = 1;
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

	size_t pf = enpu_packed_floats(K, N);
	if (!pf)
		return -1;
	float *bp = malloc(pf * sizeof(float));
	if (!bp)
		return -1;

	size_t amat = M * K, bmat = K * N, omat = M * N;
	size_t packed_for = SIZE_MAX;
	for (size_t bi = 0; bi < nbatch; bi++) {
		size_t ao = 0, bo = 0, rem = bi;
		for (int d = o_batch - 1; d >= 0; d--) {
			size_t idx = rem % (size_t)so->dim[d];
			rem /= (size_t)so->dim[d];
			ao += idx * astr[d];
			bo += idx * bstr[d];
		}
		if (packed_for != bo) {
			pack_b(in[1].data + bo * bmat, N, 1, K, N, bp, par);
			packed_for = bo;
		}
		gemm_ctx g = {.M = M, .N = N, .K = K, .a = in[0].data + ao * amat,
			      .a_rs = K, .a_cs = 1, .bp = bp,
			      .c = out[0].data + bi * omat, .ldc = N,
			      .epi = {.kind = EPI_NONE}};
		run_gemm(&g, par);
	}
	free(bp);
	return 0;
}

/* ---- gemm ---------------------------------------------------------- */

/* gemm (ONNX Gemm): A' = trans_a ? A^T : A (M x K), B' = trans_b ? B^T : B
 * (K x N). s = sum_k fmaf(A'[i,k], B'[k,j], acc) ascending from 0.0f; then
 * y = alpha * s (always, even for alpha = 1: exact); then, when C is given,
 * y = y + (beta * c[i,j]) with C broadcast unidirectionally to (M, N). */
ENPU_KERNEL(gemm)
{
	const enpu_shape *sa = &in[0].shape, *so = &out[0].shape;
	size_t M = (size_t)so->dim[0], N = (size_t)so->dim[1];
	size_t K = (size_t)(a->trans_a ? sa->dim[0] : sa->dim[1]);
	if (M == 0 || N == 0)
		return 0;

	size_t pf = enpu_packed_floats(K, N);
	if (!pf)
		return -1;
	float *bp = malloc(pf * sizeof(float));
	if (!bp)
		return -1;
	if (a->trans_b)
		pack_b(in[1].data, 1, K, K, N, bp, par);   /* B is (N, K) */
	else
		pack_b(in[1].data, N, 1, K, N, bp, par);

	gemm_ctx g = {.M = M, .N = N, .K = K, .a = in[0].data,
		      .a_rs = a->trans_a ? 1 : K, .a_cs = a->trans_a ? M : 1,
		      .bp = bp, .c = out[0].data, .ldc = N};
	g.epi.kind = EPI_GEMM;
	g.epi.alpha = a->alpha;
	g.epi.beta = a->beta;
	if (n_in >= 3 && in[2].data) {
		const enpu_shape *sc = &in[2].shape;
		g.epi.c = in[2].data;
		if (sc->ndim == 1) {
			g.epi.c_cs = sc->dim[0] == 1 ? 0 : 1;
		} else if (sc->ndim == 2) {
			g.epi.c_rs = sc->dim[0] == 1 ? 0 : (size_t)sc->dim[1];
			g.epi.c_cs = sc->dim[1] == 1 ? 0 : 1;
		}
	}
	run_gemm(&g, par);
	free(bp);
	return 0;
}

/* ---- conv2d -------------------------------------------------------- */

/* im2col straight into the packed-B layout: row k = (ci, kh, kw) in that
 * order (ci outermost), column j = (oh, ow); a position in the padding
 * holds 0.0f. */
typedef struct im2col_ctx {
	const float *x;          /* this image's first channel of the group */
	size_t H, W, OH, OW, kH, kW, Cg, K, P;
	int sh, sw, dh, dw, pt, pl;
	float *bp;
} im2col_ctx;

static void im2col_range(void *vctx, size_t p0, size_t p1)
{
	const im2col_ctx *x = vctx;
	for (size_t p = p0; p < p1; p++) {
		float *dst = x->bp + p * x->K * NR;
		size_t j0 = p * NR;
		for (size_t ci = 0; ci < x->Cg; ci++) {
			const float *plane = x->x + ci * x->H * x->W;
			for (size_t kh = 0; kh < x->kH; kh++) {
				for (size_t kw = 0; kw < x->kW; kw++) {
					for (size_t c = 0; c < NR; c++) {
						size_t j = j0 + c;
						float v = 0.0f;
						if (j < x->P) {
							int64_t oh = (int64_t)(j / x->OW), ow = (int64_t)(j % x->OW);
							int64_t ih = oh * x->sh - x->pt + (int64_t)kh * x->dh;
							int64_t iw = ow * x->sw - x->pl + (int64_t)kw * x->dw;
							if (ih >= 0 && ih < (int64_t)x->H &&
							    iw >= 0 && iw < (int64_t)x->W)
								v = plane[(size_t)ih * x->W + (size_t)iw];
						}
						dst[c] = v;
					}
					dst += NR;
				}
			}
		}
	}
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
void enpu_im2col_pack(const enpu_attrs *a, const enpu_view *x, const enpu_shape *w_shape,
		      const enpu_shape *o_shape, size_t n, size_t g, float *bp, enpu_par *par)
{
	const enpu_shape *sx = &x->shape;
	size_t C = (size_t)sx->dim[1], H = (size_t)sx->dim[2], W = (size_t)sx->dim[3];
	size_t Cg = (size_t)w_shape->dim[1], kH = (size_t)w_shape->dim[2];
	size_t kW = (size_t)w_shape->dim[3];
	size_t OH = (size_t)o_shape->dim[2], OW = (size_t)o_shape->dim[3];
	size_t K = Cg * kH * kW, P = OH * OW;
	size_t panels = P / NR + (P % NR != 0), per = K * NR;
	im2col_ctx ic = {
		.x = x->data + (n * C + g * Cg) * H * W,
		.H = H, .W = W, .OH = OH, .OW = OW, .kH = kH, .kW = kW,
		.Cg = Cg, .K = K, .P = P,
		.sh = a->strides[0], .sw = a->strides[1],
		.dh = a->dilations[0], .dw = a->dilations[1],
		.pt = a->pads[0], .pl = a->pads[1], .bp = bp};

	enpu_par_for(par, panels, per >= 32768 ? 1 : 32768 / (per ? per : 1), im2col_range, &ic);
}

ENPU_KERNEL(conv2d)
{
	const enpu_shape *sx = &in[0].shape, *sw = &in[1].shape, *so = &out[0].shape;
	size_t N = (size_t)sx->dim[0];
	size_t M = (size_t)sw->dim[0], Cg = (size_t)sw->dim[1];
	size_t kH = (size_t)sw->dim[2], kW = (size_t)sw->dim[3];
	size_t OH = (size_t)so->dim[2], OW = (size_t)so->dim[3];
	size_t G = a->group > 0 ? (size_t)a->group : 1;
	size_t Mg = M / G, K = Cg * kH * kW, P = OH * OW;
	const float *bias = n_in >= 3 && in[2].data ? in[2].data : NULL;
	if (N == 0 || M == 0 || P == 0)
		return 0;

	size_t pf = enpu_packed_floats(K, P);
	if (!pf)
		return -1;
	float *bp = malloc(pf * sizeof(float));
	if (!bp)
		return -1;

	for (size_t n = 0; n < N; n++) {
		for (size_t g = 0; g < G; g++) {
			enpu_im2col_pack(a, &in[0], sw, so, n, g, bp, par);
			gemm_ctx gc = {.M = Mg, .N = P, .K = K,
				       .a = in[1].data + g * Mg * K, .a_rs = K, .a_cs = 1,
				       .bp = bp, .c = out[0].data + (n * M + g * Mg) * P,
				       .ldc = P};
			if (bias) {
				gc.epi.kind = EPI_BIAS;
				gc.epi.bias = bias + g * Mg;
			}
			run_gemm(&gc, par);
		}
	}
	free(bp);
	return 0;
}

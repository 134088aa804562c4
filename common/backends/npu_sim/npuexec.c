/* npuexec.c: matmul, gemm and conv2d on the simulated systolic array, fold
 * by fold. One GEMM is C (M x N) = A (M x K) x B (K x N); the dataflow maps
 * (Sr, Sc, T) = (M, N, K) for os, (K, N, M) for ws and (K, M, N) for is:
 *
 *   os: output tiles of rows x cols; each streams all of K, so a tile's
 *       sums run k = 0 .. K-1 in one go.
 *   ws: a stationary tile of B (a K-fold of `rows` x an N-fold of `cols`)
 *       while all M rows stream through; the K-folds of one N-fold follow
 *       each other in ascending order and the partial sums are carried in
 *       the output from one fold to the next.
 *   is: the same with a stationary tile of A (K-fold x M-fold), N streams.
 *
 * Whatever the folds, every output element is one chain
 * acc = 0.0f; for k ascending: acc = fmaf(A[m,k], B[k,n], acc), continued
 * across K-folds (a float stored and reloaded is the same float), then the
 * reference kernel's epilogue: the bits of kernels.c for any array size,
 * dataflow and thread count. Threads take whole output tiles (os) or whole
 * N- or M-folds with a block of streamed rows (ws, is), never one sum. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kernels.h"
#include "npuexec.h"

/* Streamed rows (ws: of M; is: of N) per thread task. */
#define STREAM_BLOCK 64

enum { EPI_NONE, EPI_GEMM, EPI_BIAS };

typedef struct tgemm {
	size_t M, N, K;
	/* A[m, k] = a[arow(m) + k * a_cs]; conv: rows are (image, position)
	 * over im2col panels, one packed block of img floats per image */
	const float *a;
	size_t a_rs, a_cs;
	int conv;                /* also: fmaf(B, A, acc), the operand order of
				  * the reference conv (w first), which only
				  * matters for which NaN payload survives */
	size_t P, img;
	/* B[k, n] = b[k * b_rs + n * b_cs] */
	const float *b;
	size_t b_rs, b_cs;
	/* C[m, n] = c[crow(m) + n * c_cs]; conv: crow = image * c_img + position */
	float *c;
	size_t c_rs, c_cs, c_img;
	/* epilogue, as in kernels.c */
	int epi;
	float alpha, beta;
	const float *cin;        /* EPI_GEMM: may be NULL */
	size_t cin_rs, cin_cs;   /* 0 = broadcast */
	const float *bias;       /* EPI_BIAS: one per column n */
	/* the array */
	size_t R, Ccols;
	enpu_dataflow df;
	size_t kfolds;           /* ceil(K / R), at least 1 */
	size_t tasks_x;          /* os: column tiles; ws/is: stream blocks */
} tgemm;

static size_t arow(const tgemm *g, size_t m)
{
	if (g->conv)
		return (m / g->P) * g->img + ENPU_PACK_AT(g->K, 0, m % g->P);
	return m * g->a_rs;
}

static size_t crow(const tgemm *g, size_t m)
{
	if (g->conv)
		return (m / g->P) * g->c_img + m % g->P;
	return m * g->c_rs;
}

/* The reference epilogue of a finished sum s at (m, n). */
static float finish(const tgemm *g, size_t m, size_t n, float s)
{
	float y;

	switch (g->epi) {
	case EPI_GEMM:
		y = g->alpha * s;
		if (g->cin) {
			float cv = g->cin[m * g->cin_rs + n * g->cin_cs];
			y = y + g->beta * cv;
		}
		return y;
	case EPI_BIAS:
		return s + g->bias[n];
	default:
		return s;
	}
}

/* Rows [m0, m1) x columns [n0, n1) over k in [k0, k1): the fold's part of
 * each chain. first: the chain starts here from 0.0f; last: it ends here
 * and the epilogue runs. */
static void fold(const tgemm *g, size_t m0, size_t m1, size_t n0, size_t n1, size_t k0,
		 size_t k1, int first, int last)
{
	for (size_t m = m0; m < m1; m++) {
		const float *ap = g->a + arow(g, m);
		float *cp = g->c + crow(g, m);

		for (size_t n = n0; n < n1; n++) {
			const float *bp = g->b + n * g->b_cs;
			float *dst = cp + n * g->c_cs;
			float acc = first ? 0.0f : *dst;

			if (g->conv)
				for (size_t k = k0; k < k1; k++)
					acc = fmaf(bp[k * g->b_rs], ap[k * g->a_cs], acc);
			else
				for (size_t k = k0; k < k1; k++)
					acc = fmaf(ap[k * g->a_cs], bp[k * g->b_rs], acc);
			*dst = last ? finish(g, m, n, acc) : acc;
		}
	}
}

static size_t lo(size_t i, size_t step)
{
	return i * step;
}

static size_t hi(size_t i, size_t step, size_t n)
{
	return (i + 1) * step < n ? (i + 1) * step : n;
}

/* Task t: os: output tile (row tile, column tile); ws: (N-fold, M block);
 * is: (M-fold, N block). The K-folds of a ws/is task run in ascending order. */
static void task_range(void *vctx, size_t t0, size_t t1)
{
	const tgemm *g = vctx;

	for (size_t t = t0; t < t1; t++) {
		size_t x = t / g->tasks_x, y = t % g->tasks_x;

		if (g->df == ENPU_DF_OS) {
			fold(g, lo(x, g->R), hi(x, g->R, g->M), lo(y, g->Ccols),
			     hi(y, g->Ccols, g->N), 0, g->K, 1, 1);
			continue;
		}
		for (size_t kf = 0; kf < g->kfolds; kf++) {
			size_t k0 = lo(kf, g->R), k1 = hi(kf, g->R, g->K);
			int first = kf == 0, last = kf + 1 == g->kfolds;

			if (g->df == ENPU_DF_WS)
				fold(g, lo(y, STREAM_BLOCK), hi(y, STREAM_BLOCK, g->M),
				     lo(x, g->Ccols), hi(x, g->Ccols, g->N), k0, k1, first, last);
			else
				fold(g, lo(x, g->Ccols), hi(x, g->Ccols, g->M),
				     lo(y, STREAM_BLOCK), hi(y, STREAM_BLOCK, g->N), k0, k1, first,
				     last);
		}
	}
}

static size_t cdiv(size_t a, size_t b)
{
	return a / b + (a % b != 0);
}

static void run(tgemm *g, const enpu_npu_target *t, enpu_par *par)
{
	size_t tasks, work;

	if (g->M == 0 || g->N == 0)
		return;
	g->R = t->rows > 0 ? (size_t)t->rows : 1;
	g->Ccols = t->cols > 0 ? (size_t)t->cols : 1;
	g->df = t->dataflow;
	g->kfolds = g->K ? cdiv(g->K, g->R) : 1;
	switch (g->df) {
	case ENPU_DF_OS:
		g->tasks_x = cdiv(g->N, g->Ccols);
		tasks = cdiv(g->M, g->R) * g->tasks_x;
		work = g->R * g->Ccols;
		break;
	case ENPU_DF_WS:
		g->tasks_x = cdiv(g->M, STREAM_BLOCK);
		tasks = cdiv(g->N, g->Ccols) * g->tasks_x;
		work = STREAM_BLOCK * g->Ccols;
		break;
	default:
		g->tasks_x = cdiv(g->N, STREAM_BLOCK);
		tasks = cdiv(g->M, g->Ccols) * g->tasks_x;
		work = STREAM_BLOCK * g->Ccols;
		break;
	}
	/* ~64k multiply-adds per chunk at least, as the reference kernels
	 * (saturating: only the grain depends on it) */
	if (__builtin_mul_overflow(work, g->K ? g->K : 1, &work))
		work = SIZE_MAX;
	enpu_par_for(par, tasks, work >= 65536 ? 1 : 65536 / (work ? work : 1), task_range, g);
}

/* matmul: one GEMM per broadcast batch, as kernels.c's matmul. */
static int exec_matmul(const enpu_npu_target *t, const enpu_view *in, enpu_view *out,
		       enpu_par *par)
{
	const enpu_shape *sa = &in[0].shape, *sb = &in[1].shape, *so = &out[0].shape;
	int ra = sa->ndim, rb = sb->ndim;
	size_t M = ra >= 2 ? (size_t)sa->dim[ra - 2] : 1;
	size_t K = (size_t)sa->dim[ra - 1];
	size_t N = rb >= 2 ? (size_t)sb->dim[rb - 1] : 1;
	int a_batch = ra > 2 ? ra - 2 : 0, b_batch = rb > 2 ? rb - 2 : 0;
	int o_batch = so->ndim - (ra >= 2) - (rb >= 2);
	size_t nbatch = 1, s, astr[ENPU_MAX_DIMS] = {0}, bstr[ENPU_MAX_DIMS] = {0};

	for (int d = 0; d < o_batch; d++)
		nbatch *= (size_t)so->dim[d];
	if (M == 0 || N == 0 || nbatch == 0)
		return 0;
	s = 1;
	for (int d = a_batch - 1; d >= 0; d--) {
		astr[o_batch - a_batch + d] = sa->dim[d] == 1 ? 0 : s;
		s *= (size_t)sa->dim[d];
	}
	s = 1;
	for (int d = b_batch - 1; d >= 0; d--) {
		bstr[o_batch - b_batch + d] = sb->dim[d] == 1 ? 0 : s;
		s *= (size_t)sb->dim[d];
	}
	for (size_t bi = 0; bi < nbatch; bi++) {
		size_t ao = 0, bo = 0, rem = bi;
		tgemm g;

		for (int d = o_batch - 1; d >= 0; d--) {
			size_t idx = rem % (size_t)so->dim[d];

			rem /= (size_t)so->dim[d];
			ao += idx * astr[d];
			bo += idx * bstr[d];
		}
		memset(&g, 0, sizeof(g));
		g.M = M;
		g.N = N;
		g.K = K;
		g.a = in[0].data + ao * M * K;
		g.a_rs = K;
		g.a_cs = 1;
		g.b = in[1].data + bo * K * N;
		g.b_rs = N;
		g.b_cs = 1;
		g.c = out[0].data + bi * M * N;
		g.c_rs = N;
		g.c_cs = 1;
		g.epi = EPI_NONE;
		run(&g, t, par);
	}
	return 0;
}

/* gemm (ONNX): A' = trans_a ? A^T : A, B' = trans_b ? B^T : B; then
 * alpha * s and + beta * c, as kernels.c's gemm. */
static int exec_gemm(const enpu_npu_target *t, const enpu_attrs *at, const enpu_view *in,
		     int n_in, enpu_view *out, enpu_par *par)
{
	const enpu_shape *sa = &in[0].shape, *so = &out[0].shape;
	tgemm g;

	memset(&g, 0, sizeof(g));
	g.M = (size_t)so->dim[0];
	g.N = (size_t)so->dim[1];
	g.K = (size_t)(at->trans_a ? sa->dim[0] : sa->dim[1]);
	g.a = in[0].data;
	g.a_rs = at->trans_a ? 1 : g.K;
	g.a_cs = at->trans_a ? g.M : 1;
	g.b = in[1].data;
	g.b_rs = at->trans_b ? 1 : g.N;
	g.b_cs = at->trans_b ? g.K : 1;
	g.c = out[0].data;
	g.c_rs = g.N;
	g.c_cs = 1;
	g.epi = EPI_GEMM;
	g.alpha = at->alpha;
	g.beta = at->beta;
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
	run(&g, t, par);
	return 0;
}

/* conv2d: per group one GEMM of M = batch * OH * OW (im2col rows), N = the
 * group's output channels, K = C/group * kH * kW; then + bias. */
static int exec_conv(const enpu_npu_target *t, const enpu_attrs *at, const enpu_view *in,
		     int n_in, enpu_view *out, enpu_par *par)
{
	const enpu_shape *sx = &in[0].shape, *sw = &in[1].shape, *so = &out[0].shape;
	size_t B = (size_t)sx->dim[0], M = (size_t)sw->dim[0], Cg = (size_t)sw->dim[1];
	size_t K = Cg * (size_t)sw->dim[2] * (size_t)sw->dim[3];
	size_t P = (size_t)so->dim[2] * (size_t)so->dim[3];
	size_t G = at->group > 0 ? (size_t)at->group : 1, Mg = M / G, pf, total, rows;
	const float *bias = n_in >= 3 && in[2].data ? in[2].data : NULL;
	float *cols;

	if (B == 0 || M == 0 || P == 0)
		return 0;
	if (!(pf = enpu_packed_floats(K, P)) || __builtin_mul_overflow(pf, B, &total) ||
	    total > SIZE_MAX / sizeof(float) || __builtin_mul_overflow(B, P, &rows))
		return -1;
	if (!(cols = malloc(total * sizeof(float))))
		return -1;
	for (size_t gi = 0; gi < G; gi++) {
		tgemm g;

		for (size_t n = 0; n < B; n++)
			enpu_im2col_pack(at, &in[0], sw, so, n, gi, cols + n * pf, par);
		memset(&g, 0, sizeof(g));
		g.M = rows;
		g.N = Mg;
		g.K = K;
		g.a = cols;
		g.a_cs = ENPU_PACK_NR;
		g.conv = 1;
		g.P = P;
		g.img = pf;
		g.b = in[1].data + gi * Mg * K;
		g.b_rs = 1;
		g.b_cs = K;
		g.c = out[0].data + gi * Mg * P;
		g.c_cs = P;
		g.c_img = M * P;
		if (bias) {
			g.epi = EPI_BIAS;
			g.bias = bias + gi * Mg;
		}
		run(&g, t, par);
	}
	free(cols);
	return 0;
}

int enpu_npu_exec_gemm(const enpu_npu_target *t, const enpu_irop *op, const enpu_view *in,
		       int n_in, enpu_view *out, enpu_par *par)
{
	switch (op->def->id) {
	case ENPU_OP_MATMUL:
		return exec_matmul(t, in, out, par);
	case ENPU_OP_GEMM:
		return exec_gemm(t, &op->attrs, in, n_in, out, par);
	case ENPU_OP_CONV2D:
		return exec_conv(t, &op->attrs, in, n_in, out, par);
	default:
		return -1;
	}
}

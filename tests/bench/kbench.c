/* kbench.c: the in-process rows of `make bench` (tests/bench/bench.sh):
 * our kernels against OpenBLAS, and whole artifacts run against each
 * other, each pair interleaved repetition by repetition in this one
 * process so that the machine's load falls on both alike. Prints one line
 * per row with the medians; asserts nothing (a benchmark, not a test).
 *
 *   kbench gemm N THREADS REPS     matmul N x N x N vs cblas_sgemm
 *   kbench conv THREADS REPS       conv 3x3, 64 -> 64 on 56 x 56, pad 1, with
 *                                  bias, vs im2col + cblas_sgemm + bias
 *   kbench run THREADS REPS DIR INPUT [DIR INPUT ...]
 *                                  each artifact run on its input (in
 *                                  memory, as the daemon's worker runs it),
 *                                  the artifacts taken in turn
 * The matmul and conv pairs are also checked to agree (max |ours - BLAS|
 * relative to the largest |BLAS|) so that a fast wrong kernel shows.
 *
 * A repetition of a matmul or conv row is a block of calls (about 20
 * GFLOP: 9 calls at 1024^3, 596 at 256^3) timed together, ours then the
 * anchor's: the per-call time of a small product is below a thread
 * pool's wake-up on a virtual machine, so a single call measures the
 * wake-up, not the kernel. With threads each block starts after settle():
 * each library's pool polls for a while after a call (OpenBLAS about 2^28
 * cycles, yielding; ours 0.1 ms), and a block right after the other's
 * would share its cores with that polling. */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "enpu.h"
#include "kernels.h"
#include "gemm.h"
#include "npz.h"

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Before a timed block with threads: let the other pool's polling end. */
static void settle(int threads)
{
	if (threads > 1)
		nanosleep(&(struct timespec){0, 200000000L}, NULL);   /* 0.2 s */
}

/* Calls in a block of a product of flop floating-point operations. */
static int block_calls(double flop)
{
	return flop >= 2e10 ? 1 : (int)(2e10 / flop);
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_d);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static float *randbuf(size_t n, unsigned seed)
{
	float *p = aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64);

	srand(seed);
	for (size_t i = 0; p && i < n; i++)
		p[i] = (float)rand() / (float)RAND_MAX - 0.5f;
	return p;
}

static double rel_diff(const float *a, const float *b, size_t n)
{
	double d = 0, m = 0;

	for (size_t i = 0; i < n; i++) {
		d = fmax(d, fabs((double)a[i] - b[i]));
		m = fmax(m, fabs((double)b[i]));
	}
	return m > 0 ? d / m : d;
}

/* The planned scratch, as the engine hands it to a kernel. */
static void *give_scratch(enpu_par *par, size_t bytes)
{
	void *s = aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);

	enpu_par_set_scratch(par, s, bytes);
	return s;
}

static int bench_gemm(size_t n, int threads, int reps)
{
	enpu_par *par = enpu_par_create(threads);
	float *a = randbuf(n * n, 1), *b = randbuf(n * n, 2), *c = randbuf(n * n, 3);
	float *r = randbuf(n * n, 4);
	enpu_view in[2] = {{.shape = {2, {(int64_t)n, (int64_t)n}}, .data = a},
			   {.shape = {2, {(int64_t)n, (int64_t)n}}, .data = b}};
	enpu_view out = {.shape = {2, {(int64_t)n, (int64_t)n}}, .data = c};
	enpu_attrs at;
	double *t0 = calloc((size_t)reps, sizeof(double)), *t1 = calloc((size_t)reps, sizeof(double));
	double flop = 2.0 * (double)n * (double)n * (double)n;

	memset(&at, 0, sizeof at);
	void *s = give_scratch(par, enpu_kscratch_matmul(&at, (enpu_shape[]){in[0].shape, in[1].shape},
							2, &out.shape));
	openblas_set_num_threads(threads);
	int calls = block_calls(flop);

	for (int i = -1; i < reps; i++) {
		double x, y, z, w;

		settle(threads);
		x = now();
		for (int k = 0; k < calls; k++)
			enpu_k_matmul(&at, in, 2, &out, 1, par);
		y = now();
		settle(threads);
		z = now();
		for (int k = 0; k < calls; k++)
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n,
				    1.0f, a, (int)n, b, (int)n, 0.0f, r, (int)n);
		w = now();
		if (i >= 0)
			t0[i] = (y - x) / calls, t1[i] = (w - z) / calls;
	}
	double m0 = median(t0, reps), m1 = median(t1, reps);
	printf("gemm n=%zu threads=%d ours %.1f GFLOP/s openblas %.1f GFLOP/s ratio %.2f "
	       "(isa %s, rel diff %.1e)\n", n, threads, flop / m0 * 1e-9, flop / m1 * 1e-9,
	       m1 / m0, enpu_gemm_isa(), rel_diff(c, r, n * n));
	enpu_par_destroy(par);
	free(s), free(a), free(b), free(c), free(r), free(t0), free(t1);
	return 0;
}

/* The anchor's im2col: column matrix (C*3*3) x (H*W), row-major, pad 1. */
static void im2col3(const float *x, int C, int H, int W, float *col)
{
	for (int c = 0; c < C; c++)
		for (int kh = 0; kh < 3; kh++)
			for (int kw = 0; kw < 3; kw++) {
				float *d = col + (size_t)((c * 3 + kh) * 3 + kw) * H * W;
				for (int oh = 0; oh < H; oh++) {
					int ih = oh - 1 + kh;
					for (int ow = 0; ow < W; ow++) {
						int iw = ow - 1 + kw;
						d[oh * W + ow] = ih >= 0 && ih < H && iw >= 0 && iw < W ?
							x[((size_t)c * H + ih) * W + iw] : 0.0f;
					}
				}
			}
}

static int bench_conv(int threads, int reps)
{
	const int C = 64, M = 64, H = 56, W = 56, K = C * 9, P = H * W;
	enpu_par *par = enpu_par_create(threads);
	float *x = randbuf((size_t)C * H * W, 1), *w = randbuf((size_t)M * K, 2);
	float *b = randbuf((size_t)M, 3), *y = randbuf((size_t)M * P, 4);
	float *r = randbuf((size_t)M * P, 5), *col = randbuf((size_t)K * P, 6);
	enpu_view in[3] = {{.shape = {4, {1, C, H, W}}, .data = x},
			   {.shape = {4, {M, C, 3, 3}}, .data = w},
			   {.shape = {1, {M}}, .data = b}};
	enpu_view out = {.shape = {4, {1, M, H, W}}, .data = y};
	enpu_attrs at;
	double *t0 = calloc((size_t)reps, sizeof(double)), *t1 = calloc((size_t)reps, sizeof(double));
	double flop = 2.0 * M * (double)K * P;

	memset(&at, 0, sizeof at);
	at.strides[0] = at.strides[1] = at.dilations[0] = at.dilations[1] = at.group = 1;
	at.pads[0] = at.pads[1] = at.pads[2] = at.pads[3] = 1;
	void *s = give_scratch(par, enpu_kscratch_conv2d(&at, (enpu_shape[]){in[0].shape,
				in[1].shape, in[2].shape}, 3, &out.shape));
	openblas_set_num_threads(threads);
	int calls = block_calls(flop);

	for (int i = -1; i < reps; i++) {
		double t, u, u2, v;

		settle(threads);
		t = now();
		for (int k = 0; k < calls; k++)
			enpu_k_conv2d(&at, in, 3, &out, 1, par);
		u = now();
		settle(threads);
		u2 = now();
		for (int k = 0; k < calls; k++) {
			im2col3(x, C, H, W, col);
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, P, K, 1.0f, w, K,
				    col, P, 0.0f, r, P);
			for (int m = 0; m < M; m++)
				for (int j = 0; j < P; j++)
					r[(size_t)m * P + j] += b[m];
		}
		v = now();
		if (i >= 0)
			t0[i] = (u - t) / calls, t1[i] = (v - u2) / calls;
	}
	double m0 = median(t0, reps), m1 = median(t1, reps);
	printf("conv3x3 64->64 56x56 threads=%d ours %.1f GFLOP/s im2col+openblas %.1f GFLOP/s "
	       "ratio %.2f (rel diff %.1e)\n", threads, flop / m0 * 1e-9, flop / m1 * 1e-9, m1 / m0,
	       rel_diff(y, r, (size_t)M * P));
	enpu_par_destroy(par);
	free(s), free(x), free(w), free(b), free(y), free(r), free(col), free(t0), free(t1);
	return 0;
}

static int bench_run(int threads, int reps, int n, char **args)
{
	enpu_artifact *a[8];
	enpu_tlist in[8];
	double *t[8];
	enpu_err e;
	enpu_par *par = enpu_par_create(threads);

	if (n < 1 || n > 8)
		return fprintf(stderr, "kbench run: 1 to 8 artifacts\n"), 2;
	for (int k = 0; k < n; k++) {
		memset(&e, 0, sizeof e);
		in[k] = (enpu_tlist)ENPU_TLIST_INIT;
		if (enpu_artifact_load(args[2 * k], NULL, &a[k], &e) != 0 ||
		    enpu_npz_read(args[2 * k + 1], "input.npz", NULL, &in[k], &e) != 0)
			return fprintf(stderr, "kbench: %s: %s\n", args[2 * k], e.message), 1;
		t[k] = calloc((size_t)reps, sizeof(double));
	}
	for (int i = -1; i < reps; i++)
		for (int k = 0; k < n; k++) {
			enpu_tlist res = ENPU_TLIST_INIT;
			enpu_run_info info;
			double x = now();
			if (enpu_run_mem(a[k], &in[k], "input.npz", &res, NULL, par, NULL, NULL, &info,
					 &e) != 0)
				return fprintf(stderr, "kbench: %s: %s\n", args[2 * k], e.message), 1;
			if (i >= 0)
				t[k][i] = now() - x;
			enpu_tlist_free(&res);
		}
	for (int k = 0; k < n; k++) {
		printf("run %s threads=%d median %.3f ms\n", args[2 * k], threads,
		       median(t[k], reps) * 1e3);
		enpu_artifact_free(a[k]);
		enpu_tlist_free(&in[k]);
		free(t[k]);
	}
	enpu_par_destroy(par);
	return 0;
}

int main(int argc, char **argv)
{
	/* OpenBLAS's own threads wait spinning: none unless a row asks */
	openblas_set_num_threads(1);
	if (argc == 5 && !strcmp(argv[1], "gemm"))
		return bench_gemm((size_t)atol(argv[2]), atoi(argv[3]), atoi(argv[4]));
	if (argc == 4 && !strcmp(argv[1], "conv"))
		return bench_conv(atoi(argv[2]), atoi(argv[3]));
	if (argc >= 6 && argc % 2 == 0 && !strcmp(argv[1], "run"))
		return bench_run(atoi(argv[2]), atoi(argv[3]), (argc - 4) / 2, argv + 4);
	fprintf(stderr, "usage: kbench gemm N THREADS REPS | conv THREADS REPS |"
		" run THREADS REPS DIR INPUT [DIR INPUT ...]\n");
	return 2;
}

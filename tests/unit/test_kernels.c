/* test_kernels.c: the cpu_ref kernels against hand-checked values and naive
 * loops written in the documented order (exact bits), thread-count
 * invariance, the fmaf/ascending order of sums, and NaN/inf rules. Output
 * shapes are computed by hand here (no shape.c). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kernels.h"
#include "kmath.h"
#include "kernels_util.h"

TestSuite(matmul, .fini = release_all);
TestSuite(gemm, .fini = release_all);
TestSuite(conv2d, .fini = release_all);
TestSuite(par, .fini = release_all);
TestSuite(ew, .fini = release_all);
TestSuite(softmax, .fini = release_all);
TestSuite(pool, .fini = release_all);
TestSuite(move, .fini = release_all);

/* ---- matmul --------------------------------------------------------- */

Test(matmul, hand_2x3_3x2)
{
	enpu_view in[2] = {mk(SHP(2, 3)), mk(SHP(3, 2))};
	enpu_view out = mk(SHP(2, 2));
	fill(&in[0], (float[]){1, 2, 3, 4, 5, 6});
	fill(&in[1], (float[]){7, 8, 9, 10, 11, 12});
	enpu_attrs a = attrs0();
	cr_assert_eq(enpu_k_matmul(&a, in, 2, &out, 1, NULL), 0);
	assert_same(&out, (float[]){58, 64, 139, 154}, "out");
}

Test(matmul, one_d_operands)
{
	enpu_attrs a = attrs0();
	/* (3) @ (3, 2) -> (2) */
	enpu_view in[2] = {mk(SHP(3)), mk(SHP(3, 2))};
	enpu_view out = mk(SHP(2));
	fill(&in[0], (float[]){1, 2, 3});
	fill(&in[1], (float[]){7, 8, 9, 10, 11, 12});
	cr_assert_eq(enpu_k_matmul(&a, in, 2, &out, 1, NULL), 0);
	assert_same(&out, (float[]){58, 64}, "vec@mat");
	/* (2, 3) @ (3) -> (2) */
	enpu_view in2[2] = {mk(SHP(2, 3)), mk(SHP(3))};
	fill(&in2[0], (float[]){1, 2, 3, 4, 5, 6});
	fill(&in2[1], (float[]){1, 0, -1});
	cr_assert_eq(enpu_k_matmul(&a, in2, 2, &out, 1, NULL), 0);
	assert_same(&out, (float[]){-2, -2}, "mat@vec");
	/* (3) @ (3) -> () */
	enpu_view in3[2] = {mk(SHP(3)), mk(SHP(3))};
	enpu_view o0 = mk(SCALAR);
	fill(&in3[0], (float[]){1, 2, 3});
	fill(&in3[1], (float[]){4, 5, 6});
	cr_assert_eq(enpu_k_matmul(&a, in3, 2, &o0, 1, NULL), 0);
	cr_assert_eq(o0.data[0], 32.0f);
}

/* Naive reference: ascending k, fmaf from 0.0f, with NumPy batch broadcast
 * for a (B1, 1, M, K) x b (B2, K, N) style shapes given as batch strides. */
static float dot_asc(const float *a, size_t as, const float *b, size_t bs, size_t K)
{
	float acc = 0.0f;
	for (size_t k = 0; k < K; k++)
		acc = fmaf(a[k * as], b[k * bs], acc);
	return acc;
}

Test(matmul, batched_broadcast_vs_naive)
{
	/* a (2, 1, 5, 7) @ b (3, 7, 19) -> (2, 3, 5, 19) */
	enpu_view in[2] = {mkrand(SHP(2, 1, 5, 7)), mkrand(SHP(3, 7, 19))};
	enpu_view out = mk(SHP(2, 3, 5, 19));
	enpu_attrs a = attrs0();
	cr_assert_eq(enpu_k_matmul(&a, in, 2, &out, 1, NULL), 0);
	float *want = calloc(2 * 3 * 5 * 19, sizeof(float));
	for (int b0 = 0; b0 < 2; b0++)
		for (int b1 = 0; b1 < 3; b1++)
			for (int i = 0; i < 5; i++)
				for (int j = 0; j < 19; j++)
					want[((b0 * 3 + b1) * 5 + i) * 19 + j] =
						dot_asc(in[0].data + b0 * 35 + i * 7, 1,
							in[1].data + b1 * 133 + j, 19, 7);
	assert_same(&out, want, "batched");
	free(want);
}

/* The expected bits come only from ascending fmaf chains:
 *   out[0,0]: -1 + (1+2^-12)^2, fused: 2^-11 + 2^-24 (mul+add, or the
 *             descending order, gives 2^-11)
 *   out[1,1]: 1 + 2^-24 + 2^-24 ascending is 1 (ties to even twice);
 *             descending it is 1 + 2^-23. */
Test(matmul, fmaf_ascending_order_bits)
{
	const float e = 0x1p-12f, t = 0x1p-24f;
	enpu_view in[2] = {mk(SHP(2, 3)), mk(SHP(3, 2))};
	enpu_view out = mk(SHP(2, 2));
	fill(&in[0], (float[]){-1.0f, 1.0f + e, 0.0f,
			       1.0f, t, t});
	fill(&in[1], (float[]){1.0f, 1.0f,
			       1.0f + e, 1.0f,
			       1.0f, 1.0f});
	enpu_attrs a = attrs0();
	cr_assert_eq(enpu_k_matmul(&a, in, 2, &out, 1, NULL), 0);
	cr_assert_eq(fbits(out.data[0]), fbits(0x1p-11f + 0x1p-24f), "got %a", (double)out.data[0]);
	cr_assert_eq(fbits(out.data[3]), fbits(1.0f), "got %a", (double)out.data[3]);
	/* and the alternatives really differ */
	volatile float p = (1.0f + e) * (1.0f + e);
	cr_assert_neq(fbits(-1.0f + p), fbits(out.data[0]));
	volatile float d = t + t;
	cr_assert_neq(fbits(d + 1.0f), fbits(out.data[3]));

	/* the same through gemm, trans_b, with threads */
	enpu_par *par = enpu_par_create(3);
	enpu_view bt = mk(SHP(2, 3));
	for (int k = 0; k < 3; k++)
		for (int j = 0; j < 2; j++)
			bt.data[j * 3 + k] = in[1].data[k * 2 + j];
	enpu_view gin[2] = {in[0], bt};
	a.trans_b = 1;
	enpu_view gout = mk(SHP(2, 2));
	cr_assert_eq(enpu_k_gemm(&a, gin, 2, &gout, 1, par), 0);
	assert_same(&gout, out.data, "gemm");
	enpu_par_destroy(par);
}

/* ---- gemm ----------------------------------------------------------- */

static void gemm_naive(const enpu_attrs *a, const float *A, const float *B,
		       const float *C, const enpu_shape *cs, size_t M, size_t N,
		       size_t K, float *y)
{
	for (size_t i = 0; i < M; i++)
		for (size_t j = 0; j < N; j++) {
			float acc = 0.0f;
			for (size_t k = 0; k < K; k++) {
				float av = a->trans_a ? A[k * M + i] : A[i * K + k];
				float bv = a->trans_b ? B[j * K + k] : B[k * N + j];
				acc = fmaf(av, bv, acc);
			}
			float v = a->alpha * acc;
			if (C) {
				size_t ci = 0;
				if (cs->ndim == 1)
					ci = cs->dim[0] == 1 ? 0 : j;
				else if (cs->ndim == 2)
					ci = (cs->dim[0] == 1 ? 0 : i) * (size_t)cs->dim[1] +
					     (cs->dim[1] == 1 ? 0 : j);
				v = v + a->beta * C[ci];
			}
			y[i * N + j] = v;
		}
}

Test(gemm, trans_alpha_beta_c_broadcast)
{
	const size_t M = 9, N = 21, K = 13;
	enpu_shape cshapes[] = {SCALAR, SHP(1), SHP(21), SHP(9, 1), SHP(1, 21), SHP(9, 21)};
	for (int ta = 0; ta < 2; ta++)
		for (int tb = 0; tb < 2; tb++)
			for (int ci = -1; ci < 6; ci++) {
				enpu_attrs a = attrs0();
				a.trans_a = ta;
				a.trans_b = tb;
				a.alpha = 0.75f;
				a.beta = -1.5f;
				enpu_view in[3] = {mkrand(ta ? SHP(13, 9) : SHP(9, 13)),
						   mkrand(tb ? SHP(21, 13) : SHP(13, 21)),
						   mkrand(ci >= 0 ? cshapes[ci] : SCALAR)};
				enpu_view out = mk(SHP(9, 21));
				float want[9 * 21];
				cr_assert_eq(enpu_k_gemm(&a, in, ci >= 0 ? 3 : 2, &out, 1, NULL), 0);
				gemm_naive(&a, in[0].data, in[1].data, ci >= 0 ? in[2].data : NULL,
					   &in[2].shape, M, N, K, want);
				assert_same(&out, want, "gemm");
				for (int i = 0; i < 3; i++)
					drop(in[i].data);
				drop(out.data);
			}
}

Test(gemm, hand_checked)
{
	/* A (2,2), B (2,2), C (2): alpha 2, beta 10 */
	enpu_view in[3] = {mk(SHP(2, 2)), mk(SHP(2, 2)), mk(SHP(2))};
	fill(&in[0], (float[]){1, 2, 3, 4});
	fill(&in[1], (float[]){5, 6, 7, 8});
	fill(&in[2], (float[]){1, -1});
	enpu_view out = mk(SHP(2, 2));
	enpu_attrs a = attrs0();
	a.alpha = 2.0f;
	a.beta = 10.0f;
	cr_assert_eq(enpu_k_gemm(&a, in, 3, &out, 1, NULL), 0);
	assert_same(&out, (float[]){2 * 19 + 10, 2 * 22 - 10, 2 * 43 + 10, 2 * 50 - 10}, "gemm");
}

/* ---- conv2d --------------------------------------------------------- */

static void conv_naive(const enpu_attrs *a, const enpu_view *x, const enpu_view *w,
		       const float *bias, enpu_view *y)
{
	int64_t N = x->shape.dim[0], C = x->shape.dim[1], H = x->shape.dim[2], W = x->shape.dim[3];
	int64_t M = w->shape.dim[0], Cg = w->shape.dim[1], kH = w->shape.dim[2], kW = w->shape.dim[3];
	int64_t OH = y->shape.dim[2], OW = y->shape.dim[3], G = a->group, Mg = M / G;
	for (int64_t n = 0; n < N; n++)
		for (int64_t m = 0; m < M; m++)
			for (int64_t oh = 0; oh < OH; oh++)
				for (int64_t ow = 0; ow < OW; ow++) {
					int64_t g = m / Mg;
					float acc = 0.0f;
					for (int64_t c = 0; c < Cg; c++)
						for (int64_t kh = 0; kh < kH; kh++)
							for (int64_t kw = 0; kw < kW; kw++) {
								int64_t ih = oh * a->strides[0] - a->pads[0] + kh * a->dilations[0];
								int64_t iw = ow * a->strides[1] - a->pads[1] + kw * a->dilations[1];
								float v = 0.0f;
								if (ih >= 0 && ih < H && iw >= 0 && iw < W)
									v = x->data[((n * C + g * Cg + c) * H + ih) * W + iw];
								acc = fmaf(w->data[((m * Cg + c) * kH + kh) * kW + kw], v, acc);
							}
					y->data[((n * M + m) * OH + oh) * OW + ow] = bias ? acc + bias[m] : acc;
				}
}

static int64_t conv_out(int64_t n, int k, int s, int p0, int p1, int d)
{
	return (n + p0 + p1 - d * (k - 1) - 1) / s + 1;
}

typedef struct conv_case {
	int N, C, H, W, M, kh, kw, sh, sw, pt, pl, pb, pr, dh, dw, group, bias;
} conv_case;

static const conv_case conv_cases[] = {
	{1, 3, 8, 8, 4, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1},
	{2, 4, 9, 7, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 2, 1},     /* stride, pad, groups */
	{1, 6, 10, 10, 6, 3, 3, 1, 1, 1, 2, 1, 0, 1, 1, 6, 0},   /* depthwise, asym pad */
	{1, 2, 11, 12, 5, 3, 2, 1, 2, 2, 1, 2, 1, 2, 3, 1, 1},   /* dilation */
	{1, 1, 5, 5, 1, 5, 5, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0},     /* 1x1 output */
	{3, 8, 6, 6, 12, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 4, 1},    /* pointwise, groups */
};

static void run_conv_case(const conv_case *cc, enpu_par *par, enpu_view *got, enpu_view *want)
{
	enpu_attrs a = attrs0();
	a.strides[0] = cc->sh; a.strides[1] = cc->sw;
	a.pads[0] = cc->pt; a.pads[1] = cc->pl; a.pads[2] = cc->pb; a.pads[3] = cc->pr;
	a.dilations[0] = cc->dh; a.dilations[1] = cc->dw;
	a.group = cc->group;
	int64_t OH = conv_out(cc->H, cc->kh, cc->sh, cc->pt, cc->pb, cc->dh);
	int64_t OW = conv_out(cc->W, cc->kw, cc->sw, cc->pl, cc->pr, cc->dw);
	rng_state = 12345 + (uint64_t)cc->M;
	enpu_view in[3] = {mkrand(SHP(cc->N, cc->C, cc->H, cc->W)),
			   mkrand(SHP(cc->M, cc->C / cc->group, cc->kh, cc->kw)),
			   mkrand(SHP(cc->M))};
	*got = mk(SHP(cc->N, cc->M, OH, OW));
	cr_assert_eq(enpu_k_conv2d(&a, in, cc->bias ? 3 : 2, got, 1, par), 0);
	if (want) {
		*want = mk(got->shape);
		conv_naive(&a, &in[0], &in[1], cc->bias ? in[2].data : NULL, want);
	}
	for (int i = 0; i < 3; i++)
		drop(in[i].data);
}

Test(conv2d, vs_naive_pad_stride_dilation_group)
{
	for (size_t i = 0; i < sizeof(conv_cases) / sizeof(conv_cases[0]); i++) {
		enpu_view got, want;
		run_conv_case(&conv_cases[i], NULL, &got, &want);
		assert_same(&got, want.data, "conv");
		drop(got.data);
		drop(want.data);
	}
}

Test(conv2d, hand_checked_padding_is_zero)
{
	/* x 1x1x2x2 = [[1,2],[3,4]], w 1x1x3x3 all ones, pad 1: every output
	 * is the sum of its in-bounds neighbours (+ bias 0.5) */
	enpu_view in[3] = {mk(SHP(1, 1, 2, 2)), mk(SHP(1, 1, 3, 3)), mk(SHP(1))};
	fill(&in[0], (float[]){1, 2, 3, 4});
	for (int i = 0; i < 9; i++)
		in[1].data[i] = 1.0f;
	in[2].data[0] = 0.5f;
	enpu_attrs a = attrs0();
	a.pads[0] = a.pads[1] = a.pads[2] = a.pads[3] = 1;
	enpu_view out = mk(SHP(1, 1, 2, 2));
	cr_assert_eq(enpu_k_conv2d(&a, in, 3, &out, 1, NULL), 0);
	assert_same(&out, (float[]){10.5f, 10.5f, 10.5f, 10.5f}, "conv");
	/* padded taps contribute fmaf(w, 0, acc): an inf weight on a pad tap
	 * makes inf * 0 = NaN (ONNX zero padding, documented) */
	in[1].data[0] = INFINITY;
	cr_assert_eq(enpu_k_conv2d(&a, in, 3, &out, 1, NULL), 0);
	cr_assert(isnan(out.data[0]));
}

/* ---- thread invariance ---------------------------------------------- */

Test(par, thread_count_does_not_change_bits)
{
	int counts[] = {2, 3, 4};
	/* matmul big enough to split */
	rng_state = 777;
	enpu_view mm[2] = {mkrand(SHP(3, 67, 45)), mkrand(SHP(45, 83))};
	enpu_view ref = mk(SHP(3, 67, 83)), got = mk(SHP(3, 67, 83));
	enpu_attrs a = attrs0();
	cr_assert_eq(enpu_k_matmul(&a, mm, 2, &ref, 1, NULL), 0);
	/* softmax / pools input */
	enpu_view sx = mkrand(SHP(4, 33, 17));
	enpu_view sref = mk(sx.shape), sgot = mk(sx.shape);
	enpu_attrs sa = attrs0();
	sa.axis = 1;
	cr_assert_eq(enpu_k_softmax(&sa, &sx, 1, &sref, 1, NULL), 0);
	enpu_view px = mkrand(SHP(2, 16, 20, 20));
	enpu_attrs pa = attrs0();
	pa.kernel[0] = pa.kernel[1] = 3;
	pa.strides[0] = pa.strides[1] = 2;
	pa.pads[0] = pa.pads[1] = pa.pads[2] = pa.pads[3] = 1;
	enpu_view mref = mk(SHP(2, 16, 10, 10)), mgot = mk(SHP(2, 16, 10, 10));
	enpu_view aref = mk(SHP(2, 16, 10, 10)), agot = mk(SHP(2, 16, 10, 10));
	cr_assert_eq(enpu_k_maxpool2d(&pa, &px, 1, &mref, 1, NULL), 0);
	cr_assert_eq(enpu_k_avgpool2d(&pa, &px, 1, &aref, 1, NULL), 0);

	for (int t = 0; t < 3; t++) {
		enpu_par *par = enpu_par_create(counts[t]);
		cr_assert_not_null(par);
		cr_assert_eq(enpu_par_threads(par), counts[t]);
		cr_assert_eq(enpu_k_matmul(&a, mm, 2, &got, 1, par), 0);
		cr_assert(memcmp(ref.data, got.data, nel(&ref.shape) * 4) == 0, "matmul, %d threads", counts[t]);
		cr_assert_eq(enpu_k_softmax(&sa, &sx, 1, &sgot, 1, par), 0);
		cr_assert(memcmp(sref.data, sgot.data, nel(&sref.shape) * 4) == 0, "softmax");
		cr_assert_eq(enpu_k_maxpool2d(&pa, &px, 1, &mgot, 1, par), 0);
		cr_assert(memcmp(mref.data, mgot.data, nel(&mref.shape) * 4) == 0, "maxpool");
		cr_assert_eq(enpu_k_avgpool2d(&pa, &px, 1, &agot, 1, par), 0);
		cr_assert(memcmp(aref.data, agot.data, nel(&aref.shape) * 4) == 0, "avgpool");
		for (size_t i = 0; i < sizeof(conv_cases) / sizeof(conv_cases[0]); i++) {
			enpu_view c1, c2;
			run_conv_case(&conv_cases[i], NULL, &c1, NULL);
			run_conv_case(&conv_cases[i], par, &c2, NULL);
			cr_assert(memcmp(c1.data, c2.data, nel(&c1.shape) * 4) == 0, "conv %zu", i);
			drop(c1.data);
			drop(c2.data);
		}
		enpu_par_destroy(par);
	}
}

static void count_range(void *ctx, size_t b, size_t e)
{
	int *hits = ctx;
	for (size_t i = b; i < e; i++)
		__atomic_add_fetch(&hits[i], 1, __ATOMIC_RELAXED);
}

Test(par, covers_every_index_once)
{
	enpu_par *par = enpu_par_create(4);
	cr_assert_not_null(par);
	size_t sizes[] = {1, 2, 7, 100, 1000, 12345};
	for (int rep = 0; rep < 50; rep++)
		for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
			int *hits = calloc(sizes[s], sizeof(int));
			enpu_par_for(par, sizes[s], (size_t)rep % 5, count_range, hits);
			for (size_t i = 0; i < sizes[s]; i++)
				cr_assert_eq(hits[i], 1, "n=%zu i=%zu", sizes[s], i);
			free(hits);
		}
	enpu_par_destroy(par);
	cr_assert_eq(enpu_par_threads(NULL), 1);
	enpu_par *one = enpu_par_create(1);
	int h[3] = {0};
	enpu_par_for(one, 3, 0, count_range, h);
	cr_assert(h[0] == 1 && h[1] == 1 && h[2] == 1);
	enpu_par_destroy(one);
}

/* ---- elementwise ---------------------------------------------------- */

Test(ew, broadcast_rank_mismatch_and_size1)
{
	/* a (3, 1, 4) + b (2, 1) -> (3, 2, 4) */
	enpu_view in[2] = {mkrand(SHP(3, 1, 4)), mkrand(SHP(2, 1))};
	enpu_view out = mk(SHP(3, 2, 4));
	float want[24];
	enpu_attrs a = attrs0();
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 2; j++)
			for (int k = 0; k < 4; k++)
				want[(i * 2 + j) * 4 + k] = in[0].data[i * 4 + k] - in[1].data[j];
	cr_assert_eq(enpu_k_sub(&a, in, 2, &out, 1, NULL), 0);
	assert_same(&out, want, "sub");
	/* scalar divided by a tensor, and a tensor times a 1-element (1,1) */
	enpu_view s2[2] = {mk(SCALAR), mk(SHP(2, 2))};
	s2[0].data[0] = 1.0f;
	fill(&s2[1], (float[]){2, 4, 0, -0.0f});
	enpu_view o2 = mk(SHP(2, 2));
	cr_assert_eq(enpu_k_div(&a, s2, 2, &o2, 1, NULL), 0);
	assert_same(&o2, (float[]){0.5f, 0.25f, INFINITY, -INFINITY}, "div");
	enpu_view m2[2] = {s2[1], mk(SHP(1, 1))};
	m2[1].data[0] = 3.0f;
	cr_assert_eq(enpu_k_mul(&a, m2, 2, &o2, 1, NULL), 0);
	assert_same(&o2, (float[]){6, 12, 0, -0.0f}, "mul");
	/* (4) + (3, 4): row broadcast, with threads */
	enpu_par *par = enpu_par_create(2);
	enpu_view r2[2] = {mk(SHP(4)), mk(SHP(3, 4))};
	fill(&r2[0], (float[]){1, 2, 3, 4});
	fill(&r2[1], (float[]){10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120});
	enpu_view o3 = mk(SHP(3, 4));
	cr_assert_eq(enpu_k_add(&a, r2, 2, &o3, 1, par), 0);
	assert_same(&o3, (float[]){11, 22, 33, 44, 51, 62, 73, 84, 91, 102, 113, 124}, "add");
	enpu_par_destroy(par);
}

Test(ew, activations_documented_rules)
{
	enpu_attrs a = attrs0();
	float xs[] = {-2.0f, -0.0f, 0.0f, 3.0f, NAN, -INFINITY, INFINITY};
	enpu_view x = mk(SHP(7));
	fill(&x, xs);
	enpu_view y = mk(SHP(7));

	cr_assert_eq(enpu_k_relu(&a, &x, 1, &y, 1, NULL), 0);
	assert_same(&y, (float[]){0, 0, 0, 3, NAN, 0, INFINITY}, "relu");
	cr_assert_eq(fbits(y.data[1]), 0u, "relu(-0) is +0");

	a.alpha = 0.1f;
	cr_assert_eq(enpu_k_leaky_relu(&a, &x, 1, &y, 1, NULL), 0);
	assert_same(&y, (float[]){0.1f * -2.0f, -0.0f, 0.0f, 3, NAN, -INFINITY, INFINITY}, "leaky");

	a.min = -1.0f;
	a.max = 1.5f;
	cr_assert_eq(enpu_k_clip(&a, &x, 1, &y, 1, NULL), 0);
	assert_same(&y, (float[]){-1, -0.0f, 0, 1.5f, NAN, -1, 1.5f}, "clip");
	a.min = 2.0f;    /* min > max: max wins */
	cr_assert_eq(enpu_k_clip(&a, &x, 1, &y, 1, NULL), 0);
	cr_assert_eq(y.data[0], 1.5f);

	cr_assert_eq(enpu_k_sigmoid(&a, &x, 1, &y, 1, NULL), 0);
	assert_same(&y, (float[]){enpu_sigmoidf(-2.0f), 0.5f, 0.5f, enpu_sigmoidf(3.0f), NAN, 0, 1}, "sigmoid");
	cr_assert_eq(enpu_k_tanh(&a, &x, 1, &y, 1, NULL), 0);
	assert_same(&y, (float[]){enpu_tanhf(-2.0f), -0.0f, 0.0f, enpu_tanhf(3.0f), NAN, -1, 1}, "tanh");
}

Test(ew, gelu_both_modes)
{
	enpu_attrs a = attrs0();
	enpu_view x = mk(SHP(5));
	fill(&x, (float[]){-3.0f, -0.5f, 0.0f, 0.7f, 2.5f});
	enpu_view y = mk(SHP(5));
	for (int mode = 0; mode < 2; mode++) {
		a.approximate = mode;
		cr_assert_eq(enpu_k_gelu(&a, &x, 1, &y, 1, NULL), 0);
		for (int i = 0; i < 5; i++) {
			float v = x.data[i], want;
			if (mode == 0) {
				float t = v / 1.41421356237309504880f;
				want = (0.5f * v) * (1.0f + enpu_erff(t));
			} else {
				float x3 = (v * v) * v;
				float u = 0.7978845608028654f * (v + 0.044715f * x3);
				want = (0.5f * v) * (1.0f + enpu_tanhf(u));
			}
			cr_assert_eq(fbits(y.data[i]), fbits(want), "gelu mode %d x=%g", mode, (double)v);
			/* and close to the math */
			double xd = v, m = mode == 0 ? 0.5 * xd * (1 + erf(xd / sqrt(2.0)))
				: 0.5 * xd * (1 + tanh(sqrt(2 / M_PI) * (xd + 0.044715 * xd * xd * xd)));
			cr_assert(fabs(y.data[i] - m) <= 1e-6 + 1e-6 * fabs(m));
		}
	}
}

Test(ew, batchnorm_order)
{
	/* x (1, 2, 1, 2), channel 0: mean 1 var 3 scale 2 bias 0.5 */
	enpu_view in[5] = {mk(SHP(1, 2, 1, 2)), mk(SHP(2)), mk(SHP(2)), mk(SHP(2)), mk(SHP(2))};
	fill(&in[0], (float[]){3, -1, 10, 20});
	fill(&in[1], (float[]){2, 1});
	fill(&in[2], (float[]){0.5f, 0});
	fill(&in[3], (float[]){1, 10});
	fill(&in[4], (float[]){3, 0});
	enpu_attrs a = attrs0();
	a.epsilon = 1.0f;
	enpu_view out = mk(SHP(1, 2, 1, 2));
	cr_assert_eq(enpu_k_batchnorm(&a, in, 5, &out, 1, NULL), 0);
	/* d = sqrt(3+1) = 2: (3-1)/2*2+0.5 = 2.5, (-1-1)/2*2+0.5 = -1.5;
	 * d = 1: (10-10)/1*1+0 = 0, 10 */
	assert_same(&out, (float[]){2.5f, -1.5f, 0, 10}, "bn");
}

/* ---- softmax, pools ------------------------------------------------- */

Test(softmax, hand_and_axis_and_nan)
{
	enpu_attrs a = attrs0();
	enpu_view x = mk(SHP(2, 2));
	fill(&x, (float[]){0, 0, 1000, 1000});
	enpu_view y = mk(SHP(2, 2));
	a.axis = 1;
	cr_assert_eq(enpu_k_softmax(&a, &x, 1, &y, 1, NULL), 0);
	assert_same(&y, (float[]){0.5f, 0.5f, 0.5f, 0.5f}, "rows");
	a.axis = 0;   /* columns: e^-1000 underflows to 0 */
	cr_assert_eq(enpu_k_softmax(&a, &x, 1, &y, 1, NULL), 0);
	assert_same(&y, (float[]){0, 0, 1, 1}, "cols");
	/* documented order on a random line */
	rng_state = 99;
	enpu_view r = mkrand(SHP(7)), ry = mk(SHP(7));
	a.axis = 0;
	cr_assert_eq(enpu_k_softmax(&a, &r, 1, &ry, 1, NULL), 0);
	float m = -INFINITY, s = 0.0f, e[7];
	for (int i = 0; i < 7; i++)
		m = r.data[i] > m ? r.data[i] : m;
	for (int i = 0; i < 7; i++) {
		e[i] = enpu_expf(r.data[i] - m);
		s = s + e[i];
	}
	for (int i = 0; i < 7; i++)
		cr_assert_eq(fbits(ry.data[i]), fbits(e[i] / s));
	/* a NaN poisons its line only */
	fill(&x, (float[]){1, NAN, 2, 3});
	a.axis = 1;
	cr_assert_eq(enpu_k_softmax(&a, &x, 1, &y, 1, NULL), 0);
	cr_assert(isnan(y.data[0]) && isnan(y.data[1]));
	cr_assert(!isnan(y.data[2]) && !isnan(y.data[3]));
}

Test(pool, max_avg_hand_checked)
{
	/* x 1x1x3x3 = 1..9, kernel 2, stride 1, pad 1 on top/left only */
	enpu_view x = mk(SHP(1, 1, 3, 3));
	fill(&x, (float[]){1, 2, 3, 4, 5, 6, 7, 8, 9});
	enpu_attrs a = attrs0();
	a.kernel[0] = a.kernel[1] = 2;
	a.strides[0] = a.strides[1] = 1;
	a.pads[0] = a.pads[1] = 1;
	/* OH = (3 + 1 - 2)/1 + 1 = 3 */
	enpu_view y = mk(SHP(1, 1, 3, 3));
	cr_assert_eq(enpu_k_maxpool2d(&a, &x, 1, &y, 1, NULL), 0);
	assert_same(&y, (float[]){1, 2, 3, 4, 5, 6, 7, 8, 9}, "max");
	cr_assert_eq(enpu_k_avgpool2d(&a, &x, 1, &y, 1, NULL), 0);
	assert_same(&y, (float[]){1, 1.5f, 2.5f, 2.5f, 3, 4, 5.5f, 6, 7}, "avg");
	a.count_include_pad = 1;
	cr_assert_eq(enpu_k_avgpool2d(&a, &x, 1, &y, 1, NULL), 0);
	assert_same(&y, (float[]){0.25f, 0.75f, 1.25f, 1.25f, 3, 4, 2.75f, 6, 7}, "avg incl pad");
	/* NaN in a window: max is NaN there, others untouched */
	x.data[4] = NAN;
	cr_assert_eq(enpu_k_maxpool2d(&a, &x, 1, &y, 1, NULL), 0);
	cr_assert(!isnan(y.data[0]) && isnan(y.data[4]) && isnan(y.data[8]) && !isnan(y.data[2]));
	/* -inf is a value like any other */
	x.data[4] = -INFINITY;
	cr_assert_eq(enpu_k_maxpool2d(&a, &x, 1, &y, 1, NULL), 0);
	cr_assert_eq(y.data[4], 4.0f);
}

Test(pool, global_avgpool)
{
	enpu_view x = mk(SHP(2, 2, 2, 2));
	fill(&x, (float[]){1, 2, 3, 4, 0, 0, 0, 1, -1, -1, -1, -1, 8, 8, 8, 9});
	enpu_view y = mk(SHP(2, 2, 1, 1));
	enpu_attrs a = attrs0();
	cr_assert_eq(enpu_k_global_avgpool(&a, &x, 1, &y, 1, NULL), 0);
	assert_same(&y, (float[]){2.5f, 0.25f, -1, 8.25f}, "gap");
}

/* ---- data movement -------------------------------------------------- */

Test(move, transpose_concat_copy)
{
	enpu_attrs a = attrs0();
	enpu_view x = mk(SHP(2, 3, 4));
	for (int i = 0; i < 24; i++)
		x.data[i] = (float)i;
	/* perm (2, 0, 1): out (4, 2, 3), out[i,j,k] = x[j,k,i] */
	a.n_perm = 3;
	a.perm[0] = 2; a.perm[1] = 0; a.perm[2] = 1;
	enpu_view y = mk(SHP(4, 2, 3));
	cr_assert_eq(enpu_k_transpose(&a, &x, 1, &y, 1, NULL), 0);
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 2; j++)
			for (int k = 0; k < 3; k++)
				cr_assert_eq(y.data[(i * 2 + j) * 3 + k], x.data[(j * 3 + k) * 4 + i]);
	/* default perm (reverse) when n_perm = 0 */
	a.n_perm = 0;
	enpu_view yr = mk(SHP(4, 3, 2));
	cr_assert_eq(enpu_k_transpose(&a, &x, 1, &yr, 1, NULL), 0);
	cr_assert_eq(yr.data[1], x.data[12]);   /* yr[0,0,1] = x[1,0,0] */

	/* concat on axis 1: (2,1,2) + (2,2,2) -> (2,3,2) */
	enpu_view cin[2] = {mk(SHP(2, 1, 2)), mk(SHP(2, 2, 2))};
	fill(&cin[0], (float[]){1, 2, 3, 4});
	fill(&cin[1], (float[]){10, 11, 12, 13, 14, 15, 16, 17});
	a.axis = 1;
	enpu_view cy = mk(SHP(2, 3, 2));
	cr_assert_eq(enpu_k_concat(&a, cin, 2, &cy, 1, NULL), 0);
	assert_same(&cy, (float[]){1, 2, 10, 11, 12, 13, 3, 4, 14, 15, 16, 17}, "concat");

	enpu_view flat = mk(SHP(24));
	cr_assert_eq(enpu_k_copy(&a, &x, 1, &flat, 1, NULL), 0);
	cr_assert(memcmp(flat.data, x.data, 24 * 4) == 0);
}

/* spec v2 unary ops: the special values each kernel's comment defines. */
Test(ew, v2_unary_special_values)
{
	enpu_attrs a = attrs0();
	float xs[] = {-2.0f, -0.0f, 0.0f, 4.0f, NAN, -INFINITY, INFINITY, -NAN};
	enpu_view x = mk(SHP(8));
	enpu_view y = mk(SHP(8));
	fill(&x, xs);

	cr_assert_eq(enpu_k_neg(&a, &x, 1, &y, 1, NULL), 0);
	assert_same(&y, (float[]){2, 0.0f, -0.0f, -4, NAN, INFINITY, -INFINITY, NAN}, "neg");
	cr_assert_eq(fbits(y.data[4]), fbits(xs[4]) ^ 0x80000000u, "neg flips NaN's sign bit");
	cr_assert_eq(fbits(y.data[1]), 0u, "neg(-0) is +0");
	cr_assert_eq(enpu_k_abs(&a, &x, 1, &y, 1, NULL), 0);
	assert_same(&y, (float[]){2, 0.0f, 0.0f, 4, NAN, INFINITY, INFINITY, NAN}, "abs");
	cr_assert_eq(fbits(y.data[7]) >> 31, 0u, "abs(-NaN) has its sign cleared");
	cr_assert_eq(enpu_k_sqrt(&a, &x, 1, &y, 1, NULL), 0);
	assert_same(&y, (float[]){NAN, -0.0f, 0.0f, 2, NAN, NAN, INFINITY, NAN}, "sqrt");
	cr_assert_eq(enpu_k_reciprocal(&a, &x, 1, &y, 1, NULL), 0);
	assert_same(&y, (float[]){-0.5f, -INFINITY, INFINITY, 0.25f, NAN, -0.0f, 0.0f, NAN},
		    "reciprocal");
	cr_assert_eq(enpu_k_exp(&a, &x, 1, &y, 1, NULL), 0);
	assert_same(&y, (float[]){enpu_expf(-2.0f), 1, 1, enpu_expf(4.0f), NAN, 0.0f, INFINITY, NAN},
		    "exp");
	cr_assert_eq(enpu_k_erf(&a, &x, 1, &y, 1, NULL), 0);
	assert_same(&y, (float[]){enpu_erff(-2.0f), -0.0f, 0.0f, enpu_erff(4.0f), NAN, -1, 1, NAN},
		    "erf");
	cr_assert_eq(enpu_k_log(&a, &x, 1, &y, 1, NULL), 0);
	assert_same(&y, (float[]){NAN, -INFINITY, -INFINITY, enpu_logf(4.0f), NAN, NAN, INFINITY, NAN},
		    "log");
}

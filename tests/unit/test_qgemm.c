/* test_qgemm.c: the integer GEMM path of conv_integer, qlinear_conv,
 * matmul_integer and qlinear_matmul (kernels_q.c on qgemm.c) against naive
 * loops written out here (int64 sums wrapped to int32, then bias and
 * enpu_requant), byte for byte: random shapes (odd sizes, groups, strides,
 * pads, dilations, per-channel weight zero points, K past the vector
 * width, int8 and uint8), on 1 and 2 threads, under every instruction set
 * this CPU has; and a sum past int32 that wraps as NumPy's int32 does. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gemm.h"
#include "kernels.h"
#include "ops.h"
#include "par.h"
#include "qgemm.h"
#include "shape.h"
#include "view_util.h"

static uint32_t rng = 12345;

static int rnd(int n)
{
	rng = rng * 1103515245u + 12345u;
	return (int)((rng >> 8) % (uint32_t)n);
}

static int32_t get(enpu_dtype dt, const void *p, size_t i)
{
	return dt == ENPU_DT_I8 ? ((const int8_t *)p)[i] : ((const uint8_t *)p)[i];
}

/* n random elements of int8 or uint8 (the extremes included) */
static void *fill(enpu_dtype dt, size_t n)
{
	uint8_t *p = malloc(n ? n : 1);

	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(rnd(8) == 0 ? (rnd(2) ? 0x7f : 0x80) : rnd(256));
	return p;
}

static enpu_dtype rdt(void)
{
	return rnd(2) ? ENPU_DT_I8 : ENPU_DT_U8;
}

/* the instruction sets to try: every one the CPU has */
static const char *const isas[] = {"portable", "avx2", "avx512"};

typedef int (*kernel_fn)(const enpu_attrs *a, const enpu_view *in, int n_in, enpu_view *out,
			 int n_out, enpu_par *par);

/* k on every instruction set the CPU has, on 1 and 2 threads, into out
 * (int32 y32, or yt in y8 when qlinear; both ny elements), against ref;
 * why names the case in a failure. */
static void check_runs(kernel_fn k, const enpu_attrs *at, const enpu_view *in, int n_in,
		       enpu_view *out, int qlinear, enpu_dtype yt, int32_t *y32, void *y8,
		       size_t ny, const int32_t *ref, const char *why)
{
	for (size_t s = 0; s < sizeof isas / sizeof isas[0]; s++) {
		if (enpu_gemm_use_isa(isas[s]) != 0)
			continue;
		for (int th = 1; th <= 2; th++) {
			enpu_par *par = enpu_par_create(th);

			memset(y32, 0x5a, sizeof(int32_t) * ny);
			memset(y8, 0x5a, ny);
			cr_assert_eq(k(at, in, n_in, out, 1, par), 0);
			for (size_t i = 0; i < ny; i++)
				if ((qlinear ? get(yt, y8, i) : y32[i]) != ref[i]) {
					cr_expect_fail("%s (%s, %d threads), element %zu: %d, want %d", why,
						       enpu_qgemm_isa(), th, i,
						       qlinear ? get(yt, y8, i) : y32[i], ref[i]);
					break;
				}
			enpu_par_destroy(par);
		}
	}
}

static void conv_case(int qlinear)
{
	enpu_dtype xt = rdt(), wt = rdt(), yt = rdt();
	int G = 1 + rnd(3), Cg = 1 + rnd(qlinear ? 40 : 9), Mg = 1 + rnd(9), N = 1 + rnd(2);
	int KH = 1 + rnd(3), KW = 1 + rnd(4), H = KH + rnd(7), W = KW + rnd(8);
	int C = G * Cg, M = G * Mg;
	enpu_attrs at;
	enpu_view in[9], out;
	enpu_shape os;
	char why[200];
	float xs = 0.01f + (float)rnd(100) / 500.0f, ys = 0.05f + (float)rnd(100) / 100.0f;
	float *wsc = malloc(sizeof(float) * (size_t)M);
	int32_t *bias = malloc(sizeof(int32_t) * (size_t)M);
	void *x = fill(xt, (size_t)(N * C * H * W)), *w = fill(wt, (size_t)(M * Cg * KH * KW));
	void *xz = fill(xt, 1), *wz = fill(wt, (size_t)M), *yz = fill(yt, 1);
	int perch = rnd(2);

	for (int m = 0; m < M; m++) {
		wsc[m] = 0.001f + (float)rnd(1000) / 100000.0f;
		bias[m] = rnd(200001) - 100000;
	}
	enpu_attrs_defaults(enpu_op_by_name(qlinear ? "qlinear_conv" : "conv_integer"), &at);
	at.group = G;
	for (int i = 0; i < 2; i++) {
		at.strides[i] = 1 + rnd(3);
		at.dilations[i] = 1 + rnd(2);
	}
	for (int i = 0; i < 4; i++)
		at.pads[i] = rnd(3);
	in[0] = view(xt, x, 4, (int64_t[]){N, C, H, W});
	in[1] = view(wt, w, 4, (int64_t[]){M, Cg, KH, KW});
	if (enpu_s_conv_integer(&at, (enpu_shape[]){in[0].shape, in[1].shape}, 2, &os, 1, why,
				sizeof why) != 0)
		goto done;   /* the dilated kernel does not fit: no case */
	size_t ny = (size_t)(os.dim[0] * os.dim[1] * os.dim[2] * os.dim[3]);
	int32_t *ref = malloc(sizeof(int32_t) * ny + 1), *y32 = malloc(sizeof(int32_t) * ny + 1);
	uint8_t *y8 = malloc(ny + 1);
	int64_t OH = os.dim[2], OW = os.dim[3];
	int32_t xzv = get(xt, xz, 0);

	for (int n = 0; n < N; n++)
		for (int m = 0; m < M; m++) {
			int32_t wzv = get(wt, wz, perch ? (size_t)m : 0);

			for (int64_t oh = 0; oh < OH; oh++)
				for (int64_t ow = 0; ow < OW; ow++) {
					int64_t s = 0;

					for (int ci = 0; ci < Cg; ci++)
						for (int kh = 0; kh < KH; kh++)
							for (int kw = 0; kw < KW; kw++) {
								int64_t ih = oh * at.strides[0] - at.pads[0] +
									     kh * at.dilations[0];
								int64_t iw = ow * at.strides[1] - at.pads[1] +
									     kw * at.dilations[1];
								int32_t xv = xzv;

								if (ih >= 0 && ih < H && iw >= 0 && iw < W)
									xv = get(xt, x, (size_t)(((n * C + m / Mg * Cg + ci) * H + ih) * W + iw));
								s += (int64_t)(xv - xzv) *
								     (get(wt, w, (size_t)(((m * Cg + ci) * KH + kh) * KW + kw)) - wzv);
							}
					if (qlinear)
						s += bias[m];
					size_t o = (size_t)(((n * M + m) * OH + oh) * OW + ow);
					int32_t acc = (int32_t)(uint32_t)(uint64_t)s;

					ref[o] = qlinear ? enpu_requant(acc, enpu_requant_multiplier(
										xs, wsc[perch ? m : 0], ys),
									get(yt, yz, 0), yt)
							 : acc;
				}
		}
	if (qlinear) {
		in[3] = in[1];
		in[1] = view(ENPU_DT_F32, &xs, 0, NULL);
		in[2] = view(xt, xz, 0, NULL);
		in[4] = view(ENPU_DT_F32, wsc, perch, (int64_t[]){M});
		in[5] = view(wt, wz, perch, (int64_t[]){M});
		in[6] = view(ENPU_DT_F32, &ys, 0, NULL);
		in[7] = view(yt, yz, 0, NULL);
		in[8] = view(ENPU_DT_I32, bias, 1, (int64_t[]){M});
		out = view(yt, y8, 4, os.dim);
	} else {
		in[2] = view(xt, xz, 0, NULL);
		in[3] = view(wt, wz, perch, (int64_t[]){M});
		out = view(ENPU_DT_I32, y32, 4, os.dim);
	}
	snprintf(why, sizeof why, "%s conv G %d Cg %d Mg %d K %dx%d", qlinear ? "qlinear" : "integer",
		 G, Cg, Mg, KH, KW);
	check_runs(qlinear ? enpu_k_qlinear_conv : enpu_k_conv_integer, &at, in, qlinear ? 9 : 4,
		   &out, qlinear, yt, y32, y8, ny, ref, why);
	free(ref);
	free(y32);
	free(y8);
done:
	free(x), free(w), free(xz), free(wz), free(yz), free(wsc), free(bias);
}

Test(qgemm, conv_random_shapes)
{
	for (int i = 0; i < 60; i++) {
		conv_case(0);
		conv_case(1);
	}
}

/* a [B, M, K] x b [K, N] (b broadcast over the batch), or a [M, K] x b [B, K, N] */
static void mm_case(int qlinear, int M, int K, int N, int big)
{
	enpu_dtype at_ = rdt(), bt = rdt(), yt = rdt();
	int B = 1 + rnd(3), a_batched = rnd(2);
	size_t na = (size_t)(a_batched ? B : 1) * (size_t)(M * K),
	       nb = (size_t)(a_batched ? 1 : B) * (size_t)(K * N), ny = (size_t)(B * M * N);
	void *a = fill(at_, na), *b = fill(bt, nb), *az = fill(at_, 1), *bz = fill(bt, (size_t)N);
	void *yz = fill(yt, 1);
	float as = 0.02f, ys = 0.5f + (float)rnd(100) / 10.0f, *bs = malloc(sizeof(float) * (size_t)N);
	int perch = rnd(2);
	int32_t *ref = malloc(sizeof(int32_t) * ny), *y32 = malloc(sizeof(int32_t) * ny);
	uint8_t *y8 = malloc(ny);
	enpu_attrs att;
	enpu_view in[8], out;
	char why[64];

	if (big) {   /* every product -255 * 255: the sum wraps */
		at_ = ENPU_DT_I8, bt = ENPU_DT_U8, perch = 0;
		memset(a, 0x80, na);
		memset(b, 0xff, nb);
		*(int8_t *)az = 127;
		*(uint8_t *)bz = 0;
	}
	for (int j = 0; j < N; j++)
		bs[j] = 0.001f + (float)rnd(100) / 10000.0f;
	for (int bi = 0; bi < B; bi++)
		for (int i = 0; i < M; i++)
			for (int j = 0; j < N; j++) {
				int64_t s = 0;
				size_t ao = (size_t)(a_batched ? bi : 0) * (size_t)(M * K),
				       bo = (size_t)(a_batched ? 0 : bi) * (size_t)(K * N);

				for (int k = 0; k < K; k++)
					s += (int64_t)(get(at_, a, ao + (size_t)(i * K + k)) - get(at_, az, 0)) *
					     (get(bt, b, bo + (size_t)(k * N + j)) -
					      get(bt, bz, perch ? (size_t)j : 0));
				int32_t acc = (int32_t)(uint32_t)(uint64_t)s;
				size_t o = (size_t)((bi * M + i) * N + j);

				ref[o] = qlinear ? enpu_requant(acc, enpu_requant_multiplier(
								     as, bs[perch ? j : 0], ys),
								 get(yt, yz, 0), yt)
						 : acc;
			}
	if (big && !qlinear)   /* the exact sum is negative; its int32 wrap is not */
		cr_assert(ref[0] == (int32_t)(uint32_t)(uint64_t)(-(int64_t)65025 * K) && ref[0] > 0);
	enpu_attrs_defaults(enpu_op_by_name("matmul_integer"), &att);
	in[0] = a_batched ? view(at_, a, 3, (int64_t[]){B, M, K}) : view(at_, a, 2, (int64_t[]){M, K});
	in[3] = a_batched ? view(bt, b, 2, (int64_t[]){K, N}) : view(bt, b, 3, (int64_t[]){B, K, N});
	if (qlinear) {
		in[1] = view(ENPU_DT_F32, &as, 0, NULL);
		in[2] = view(at_, az, 0, NULL);
		in[4] = view(ENPU_DT_F32, bs, perch, (int64_t[]){N});
		in[5] = view(bt, bz, perch, (int64_t[]){N});
		in[6] = view(ENPU_DT_F32, &ys, 0, NULL);
		in[7] = view(yt, yz, 0, NULL);
		out = view(yt, y8, 3, (int64_t[]){B, M, N});
	} else {
		in[1] = in[3];
		in[2] = view(at_, az, 0, NULL);
		in[3] = view(bt, bz, perch, (int64_t[]){N});
		out = view(ENPU_DT_I32, y32, 3, (int64_t[]){B, M, N});
	}
	snprintf(why, sizeof why, "%s matmul %dx%dx%d", qlinear ? "qlinear" : "integer", M, K, N);
	check_runs(qlinear ? enpu_k_qlinear_matmul : enpu_k_matmul_integer, &att, in, qlinear ? 8 : 4,
		   &out, qlinear, yt, y32, y8, ny, ref, why);
	free(a), free(b), free(az), free(bz), free(yz), free(bs), free(ref), free(y32), free(y8);
}

Test(qgemm, matmul_random_shapes)
{
	for (int i = 0; i < 40; i++) {
		int M = 1 + rnd(13), K = 1 + rnd(i % 4 ? 70 : 300), N = 1 + rnd(40);

		mm_case(0, M, K, N, 0);
		mm_case(1, M, K, N, 0);
	}
}

/* K = 40000 products of -255 * 255: past INT32_MIN, wrapped as NumPy's int32 */
Test(qgemm, matmul_wraps_past_int32)
{
	mm_case(0, 5, 40000, 3, 1);
	mm_case(1, 5, 40000, 3, 1);
}

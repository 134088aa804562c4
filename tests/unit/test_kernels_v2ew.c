/* test_kernels_v2ew.c: the spec v2 elementwise kernels (kernels_v2ew.c):
 * pow, min, max, prelu, hard_sigmoid, hard_swish, elu, softplus. Their
 * special values bit for bit as docs/spec-format.md defines them (sign of
 * zeros included), broadcasting and the left-to-right fold against naive
 * loops, and the same bits on 1 and 3 threads. (test_kernels.c holds the
 * v1 kernels; test_kmath.c checks pow/elu/softplus against libm.) */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kernels.h"
#include "kmath.h"

static uint32_t bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

/* A view over caller storage: dims given as a zero-terminated list (a dim
 * of 0 is never used here); no dims = a 0-d scalar. */
static enpu_view vw(float *data, const int64_t *dims)
{
	enpu_view v;
	memset(&v, 0, sizeof(v));
	while (dims[v.shape.ndim])
		v.shape.dim[v.shape.ndim] = dims[v.shape.ndim], v.shape.ndim++;
	v.data = data;
	return v;
}

#define V(data, ...) vw(data, (const int64_t[]){__VA_ARGS__, 0})

/* Bits equal, or both NaN (a NaN's sign is the engine's business). */
static void same(const float *got, const float *want, int n, const char *what)
{
	for (int i = 0; i < n; i++)
		cr_assert(bits(got[i]) == bits(want[i]) || (isnan(got[i]) && isnan(want[i])),
			  "%s[%d]: got %a, want %a", what, i, (double)got[i], (double)want[i]);
}

static enpu_attrs defaults(enpu_opid id)
{
	enpu_attrs a;
	memset(&a, 0, sizeof(a));
	enpu_attrs_defaults(enpu_op_by_id(id), &a);
	return a;
}

Test(v2ew, pow_special_values_and_broadcast)
{
	/* x (2, 4) ^ y (4,): row 0 is the zero and infinity rules, row 1
	 * negative bases with integer and non-integer exponents */
	float x[] = {-0.0f, -0.0f, -INFINITY, 0.0f, -2.0f, -8.0f, NAN, 1.0f};
	float y[] = {-3.0f, 0.5f, 3.0f, -INFINITY};
	float got[8];
	enpu_view in[2] = {V(x, 2, 4), V(y, 4)}, out = V(got, 2, 4);
	enpu_attrs a = defaults(ENPU_OP_POW);

	cr_assert_eq(enpu_k_pow(&a, in, 2, &out, 1, NULL), 0);
	same(got, (float[]){-INFINITY, 0.0f, -INFINITY, INFINITY, 0.5f * -0.25f, NAN, NAN, 1.0f}, 8,
	     "pow");
	/* y = 0 gives 1 even for NaN; x = 1 gives 1 even for a NaN exponent */
	float x2[] = {NAN, 1.0f}, y2[] = {0.0f, NAN}, g2[2];
	enpu_view i2[2] = {V(x2, 2), V(y2, 2)}, o2 = V(g2, 2);
	cr_assert_eq(enpu_k_pow(&a, i2, 2, &o2, 1, NULL), 0);
	same(g2, (float[]){1.0f, 1.0f}, 2, "pow 1s");
}

/* min/max: a NaN anywhere wins; equal operands give the later one. */
Test(v2ew, min_max_nan_and_signed_zeros)
{
	float a1[] = {-0.0f, 0.0f, 1.0f, NAN, 2.0f, -INFINITY};
	float a2[] = {0.0f, -0.0f, NAN, 1.0f, 3.0f, INFINITY};
	float a3[] = {-0.0f};
	float got[6];
	enpu_view in[3] = {V(a1, 6), V(a2, 6), V(a3, 1)}, out = V(got, 6);
	enpu_attrs a = defaults(ENPU_OP_MIN);

	cr_assert_eq(enpu_k_min(&a, in, 2, &out, 1, NULL), 0);
	same(got, (float[]){0.0f, -0.0f, NAN, NAN, 2.0f, -INFINITY}, 6, "min(a1, a2)");
	cr_assert_eq(bits(got[0]), 0u, "min(-0, +0) is +0 (np.minimum)");
	cr_assert_eq(bits(got[1]), 0x80000000u, "min(+0, -0) is -0 (np.minimum)");
	cr_assert_eq(enpu_k_max(&a, in, 2, &out, 1, NULL), 0);
	same(got, (float[]){0.0f, -0.0f, NAN, NAN, 3.0f, INFINITY}, 6, "max(a1, a2)");
	/* three inputs, the last one broadcast: min(min(a1, a2), -0) */
	cr_assert_eq(enpu_k_min(&a, in, 3, &out, 1, NULL), 0);
	same(got, (float[]){-0.0f, -0.0f, NAN, NAN, -0.0f, -INFINITY}, 6, "min(a1, a2, -0)");
	cr_assert_eq(enpu_k_max(&a, in, 3, &out, 1, NULL), 0);
	same(got, (float[]){-0.0f, -0.0f, NAN, NAN, 3.0f, INFINITY}, 6, "max(a1, a2, -0)");
	/* one input: a copy */
	cr_assert_eq(enpu_k_max(&a, in, 1, &out, 1, NULL), 0);
	same(got, a1, 6, "max(a1)");
}

static float rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return (float)(*s >> 40) / (float)(1u << 24) * 8.0f - 4.0f;
}

/* Four inputs (5, 1, 7), (3, 1), (1, 7), () into (5, 3, 7), folded left to
 * right, against a naive loop; the same bits on 1 and 3 threads. */
Test(v2ew, min_max_fold_broadcast_threads)
{
	static float x1[35], x2[3], x3[7], x4[1], got[105], got3[105], want[105];
	uint64_t s = 0x1234567u;
	for (int i = 0; i < 35; i++)
		x1[i] = rnd(&s);
	for (int i = 0; i < 3; i++)
		x2[i] = rnd(&s);
	for (int i = 0; i < 7; i++)
		x3[i] = rnd(&s);
	x1[3] = NAN;
	x3[2] = -0.0f;
	x4[0] = 0.5f;
	enpu_view in[4] = {V(x1, 5, 1, 7), V(x2, 3, 1), V(x3, 1, 7), vw(x4, (const int64_t[]){0})};
	enpu_view out = V(got, 5, 3, 7), out3 = V(got3, 5, 3, 7);
	enpu_attrs a = defaults(ENPU_OP_MAX);
	enpu_par *par = enpu_par_create(3);
	cr_assert_not_null(par);

	for (int op = 0; op < 2; op++) {
		for (int i = 0; i < 5; i++)
			for (int j = 0; j < 3; j++)
				for (int k = 0; k < 7; k++) {
					float v[4] = {x1[i * 7 + k], x2[j], x3[k], x4[0]}, r = v[0];
					for (int t = 1; t < 4; t++) {
						int take = op ? !(r > v[t] || isnan(r)) : !(r < v[t] || isnan(r));
						r = take ? v[t] : r;
					}
					want[(i * 3 + j) * 7 + k] = r;
				}
		enpu_kernel_fn k = op ? enpu_k_max : enpu_k_min;
		cr_assert_eq(k(&a, in, 4, &out, 1, NULL), 0);
		cr_assert_eq(k(&a, in, 4, &out3, 1, par), 0);
		same(got, want, 105, op ? "max fold" : "min fold");
		cr_assert(memcmp(got, got3, sizeof(got)) == 0, "1 and 3 threads differ");
		cr_assert(isnan(got[3]) && isnan(got[3 + 7]), "x1's NaN reaches every j");
	}
	enpu_par_destroy(par);
}

Test(v2ew, prelu_slope_broadcast)
{
	float x[] = {-2.0f, -0.0f, 0.0f, NAN, -INFINITY, 3.0f};
	float slope[] = {0.25f, -1.0f};   /* (2, 1): one per row */
	float got[6];
	enpu_view in[2] = {V(x, 2, 3), V(slope, 2, 1)}, out = V(got, 2, 3);
	enpu_attrs a = defaults(ENPU_OP_PRELU);

	cr_assert_eq(enpu_k_prelu(&a, in, 2, &out, 1, NULL), 0);
	same(got, (float[]){-0.5f, -0.0f, 0.0f, NAN, INFINITY, 3.0f}, 6, "prelu");
	cr_assert_eq(bits(got[1]), 0x80000000u, "-0 is not < 0: it stays -0");
}

Test(v2ew, hard_sigmoid_hard_swish)
{
	float x[] = {-INFINITY, -3.0f, -2.5f, -0.0f, 1.0f, 2.5f, 3.0f, INFINITY, NAN, 0.7f};
	float got[10], want[10];
	enpu_view in = V(x, 10), out = V(got, 10);
	enpu_attrs a = defaults(ENPU_OP_HARD_SIGMOID);

	cr_assert(a.alpha == 0.2f && a.beta == 0.5f, "defaults alpha 0.2, beta 0.5");
	cr_assert_eq(enpu_k_hard_sigmoid(&a, &in, 1, &out, 1, NULL), 0);
	for (int i = 0; i < 10; i++) {
		float t = 0.2f * x[i];
		t = t + 0.5f;   /* two roundings */
		want[i] = t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t);
	}
	same(got, want, 10, "hard_sigmoid");
	same(got, (float[]){0.0f, 0.0f, want[2], 0.5f, 0.7f, 1.0f, 1.0f, 1.0f, NAN}, 9,
	     "hard_sigmoid values");
	a.alpha = 0.5f;
	a.beta = -0.25f;
	cr_assert_eq(enpu_k_hard_sigmoid(&a, &in, 1, &out, 1, NULL), 0);
	cr_assert_eq(got[4], 0.25f, "alpha and beta are read");

	a = defaults(ENPU_OP_HARD_SWISH);
	cr_assert_eq(enpu_k_hard_swish(&a, &in, 1, &out, 1, NULL), 0);
	for (int i = 0; i < 10; i++) {
		float t = x[i] / 6.0f;
		t = t + 0.5f;
		want[i] = x[i] * (t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t));
	}
	same(got, want, 10, "hard_swish");
	same(got, (float[]){NAN, -0.0f, want[2], -0.0f, want[4], want[5], 3.0f, INFINITY, NAN}, 9,
	     "hard_swish values");
	cr_assert_eq(bits(got[1]), 0x80000000u, "hard_swish(-3) = -3 * 0 = -0");
}

Test(v2ew, elu_softplus)
{
	float x[] = {-INFINITY, -20.0f, -1.0f, -0.0f, 0.0f, 1e-30f, 2.0f, 16.0f, INFINITY, NAN};
	float got[10], want[10];
	enpu_view in = V(x, 10), out = V(got, 10);
	enpu_attrs a = defaults(ENPU_OP_ELU);

	cr_assert(a.alpha == 1.0f, "elu alpha defaults to 1");
	a.alpha = 0.5f;
	cr_assert_eq(enpu_k_elu(&a, &in, 1, &out, 1, NULL), 0);
	for (int i = 0; i < 10; i++)
		want[i] = enpu_eluf(x[i], 0.5f);
	same(got, want, 10, "elu");
	same(got, (float[]){-0.5f, want[1], want[2], -0.0f, 0.0f, 1e-30f, 2.0f, 16.0f, INFINITY, NAN},
	     10, "elu values");
	cr_assert(got[2] < -0.31f && got[2] > -0.32f, "0.5 (e^-1 - 1)");

	a = defaults(ENPU_OP_SOFTPLUS);
	cr_assert_eq(enpu_k_softplus(&a, &in, 1, &out, 1, NULL), 0);
	for (int i = 0; i < 10; i++)
		want[i] = enpu_softplusf(x[i]);
	same(got, want, 10, "softplus");
	same(got, (float[]){0.0f, want[1], want[2], want[3], want[3], want[5], want[6], 16.0f,
			    INFINITY, NAN}, 10, "softplus values");
	cr_assert(got[1] > 0.0f && got[1] < 3e-9f, "softplus(-20) is e^-20, not 0");
}

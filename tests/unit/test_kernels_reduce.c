/* test_kernels_reduce.c: spec v2's reduction and layer_norm kernels
 * (common/run/kernels_reduce.c): hand-checked values, the documented order
 * bit for bit against naive loops written here, thread-count invariance,
 * NaN/±0/Inf rules and the empty reduction (ONNX's values). Output shapes
 * are worked out by hand (no shape rule). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kernels.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static float store[64][512];   /* every view's data: tests are small */
static int n_store;

static enpu_view view(int nd, const int64_t *d, const float *vals)
{
	enpu_view v;
	size_t n = 1;

	memset(&v, 0, sizeof(v));
	v.shape.ndim = nd;
	for (int i = 0; i < nd; i++) {
		v.shape.dim[i] = d[i];
		n *= (size_t)d[i];
	}
	cr_assert(n <= 512 && n_store < 64);
	v.data = store[n_store++];
	memset(v.data, 0, sizeof(store[0]));
	if (vals)
		memcpy(v.data, vals, n * sizeof(float));
	return v;
}

#define V(vals, ...) view((int)N_OF(((int64_t[]){__VA_ARGS__})), (int64_t[]){__VA_ARGS__}, vals)

static void reset(void)
{
	n_store = 0;
}

TestSuite(reduce, .init = reset);
TestSuite(layer_norm, .init = reset);

static enpu_attrs rattrs(int n_axes, const int64_t *axes, int keepdims)
{
	enpu_attrs a;

	memset(&a, 0, sizeof(a));
	a.axes.n = n_axes;
	for (int i = 0; i < n_axes; i++)
		a.axes.v[i] = axes[i];
	a.keepdims = keepdims;
	return a;
}

static uint32_t bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

static void same(const float *got, const float *want, size_t n, const char *what)
{
	for (size_t i = 0; i < n; i++)
		cr_assert(bits(got[i]) == bits(want[i]) || (isnan(got[i]) && isnan(want[i])),
			  "%s[%zu]: got %a, want %a", what, i, (double)got[i], (double)want[i]);
}

typedef int (*kfn)(const enpu_attrs *, const enpu_view *, int, enpu_view *, int, enpu_par *);

Test(reduce, hand_values)
{
	static const float xs[] = {1, 2, 3, 4, 5, 6};
	enpu_view x = V(xs, 2, 3), y2 = V(NULL, 2), y3 = V(NULL, 3), y1 = V(NULL, 1, 1);
	enpu_attrs a1 = rattrs(1, (int64_t[]){1}, 0), a0 = rattrs(1, (int64_t[]){0}, 0);
	enpu_attrs all = rattrs(0, NULL, 1);

	cr_assert_eq(enpu_k_reduce_sum(&a1, &x, 1, &y2, 1, NULL), 0);
	same(y2.data, (float[]){6, 15}, 2, "sum axis 1");
	cr_assert_eq(enpu_k_reduce_sum(&a0, &x, 1, &y3, 1, NULL), 0);
	same(y3.data, (float[]){5, 7, 9}, 3, "sum axis 0");
	cr_assert_eq(enpu_k_reduce_mean(&all, &x, 1, &y1, 1, NULL), 0);
	same(y1.data, (float[]){3.5f}, 1, "mean of all");
	cr_assert_eq(enpu_k_reduce_max(&a1, &x, 1, &y2, 1, NULL), 0);
	same(y2.data, (float[]){3, 6}, 2, "max axis 1");
	cr_assert_eq(enpu_k_reduce_min(&a0, &x, 1, &y3, 1, NULL), 0);
	same(y3.data, (float[]){1, 2, 3}, 3, "min axis 0");
	cr_assert_eq(enpu_k_reduce_mean(&a0, &x, 1, &y3, 1, NULL), 0);
	same(y3.data, (float[]){2.5f, 3.5f, 4.5f}, 3, "mean axis 0");
}

/* Wide-range data, so that the order of a sum changes its bits. */
static void wide(float *p, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		p[i] = ldexpf(1.0f + (float)(seed >> 41) * 0x1p-23f, (int)((seed >> 33) % 17) - 8);
		if (seed >> 63)
			p[i] = -p[i];
	}
}

/* sum and mean over axes {0, 2} of (3, 4, 5): s = 0.0f, s = s + x with the
 * reduced indices (i, k) ascending row-major, i outer; mean s / 15.0f. Also
 * with 3 threads, and a descending order gives other bits somewhere. */
Test(reduce, documented_order_and_threads)
{
	enpu_view x = V(NULL, 3, 4, 5), y = V(NULL, 1, 4, 1), yt = V(NULL, 1, 4, 1);
	enpu_attrs a = rattrs(2, (int64_t[]){0, 2}, 1);
	enpu_par *par = enpu_par_create(3);
	float want[4], mean[4];
	int differs = 0;

	wide(x.data, 60, 7);
	for (int j = 0; j < 4; j++) {
		float s = 0.0f, r = 0.0f;

		for (int i = 0; i < 3; i++)
			for (int k = 0; k < 5; k++)
				s = s + x.data[(i * 4 + j) * 5 + k];
		for (int i = 2; i >= 0; i--)
			for (int k = 4; k >= 0; k--)
				r = r + x.data[(i * 4 + j) * 5 + k];
		want[j] = s;
		mean[j] = s / 15.0f;
		differs += bits(s) != bits(r);
	}
	cr_assert_gt(differs, 0, "the data cannot tell the orders apart");
	cr_assert_eq(enpu_k_reduce_sum(&a, &x, 1, &y, 1, NULL), 0);
	same(y.data, want, 4, "sum");
	cr_assert_eq(enpu_k_reduce_sum(&a, &x, 1, &yt, 1, par), 0);
	same(yt.data, want, 4, "sum, 3 threads");
	cr_assert_eq(enpu_k_reduce_mean(&a, &x, 1, &y, 1, par), 0);
	same(y.data, mean, 4, "mean");
	enpu_par_destroy(par);
}

/* max/min: a NaN anywhere in the reduced elements gives NaN; infinities
 * are ordinary values; of +0 and -0 the first one stays. */
Test(reduce, nan_inf_signed_zero)
{
	static const float xs[] = {1, NAN, 3, -INFINITY, 2, INFINITY, 0.0f, -0.0f, -0.0f, 0.0f};
	enpu_view x = V(xs, 5, 2), y = V(NULL, 5);
	enpu_attrs a = rattrs(1, (int64_t[]){1}, 0);

	cr_assert_eq(enpu_k_reduce_max(&a, &x, 1, &y, 1, NULL), 0);
	same(y.data, (float[]){NAN, 3, INFINITY, 0.0f, -0.0f}, 5, "max");
	cr_assert_eq(bits(y.data[3]), bits(0.0f), "max(+0, -0) keeps +0");
	cr_assert_eq(bits(y.data[4]), bits(-0.0f), "max(-0, +0) keeps -0");
	cr_assert_eq(enpu_k_reduce_min(&a, &x, 1, &y, 1, NULL), 0);
	same(y.data, (float[]){NAN, -INFINITY, 2, 0.0f, -0.0f}, 5, "min");
	cr_assert_eq(bits(y.data[3]), bits(0.0f), "min(+0, -0) keeps +0");
	cr_assert_eq(enpu_k_reduce_sum(&a, &x, 1, &y, 1, NULL), 0);
	same(y.data, (float[]){NAN, -INFINITY, INFINITY, 0.0f, 0.0f}, 5, "sum");
}

/* An empty reduction (a reduced dim of size 0) follows ONNX: sum +0, mean
 * NaN (0/0), max -inf, min +inf. */
Test(reduce, empty_reduction_follows_onnx)
{
	static const struct {
		kfn k;
		float want;
	} cases[] = {
		{enpu_k_reduce_sum, 0.0f}, {enpu_k_reduce_mean, NAN},
		{enpu_k_reduce_max, -INFINITY}, {enpu_k_reduce_min, INFINITY},
	};
	enpu_view x = V(NULL, 2, 0), y = V(NULL, 2);
	enpu_attrs a = rattrs(1, (int64_t[]){1}, 0);

	for (size_t i = 0; i < N_OF(cases); i++) {
		y.data[0] = y.data[1] = 42.0f;
		cr_assert_eq(cases[i].k(&a, &x, 1, &y, 1, NULL), 0);
		same(y.data, (float[]){cases[i].want, cases[i].want}, 2, "empty");
	}
}

/* The documented layer_norm of one row of D, naive, with optional scale
 * and bias of D elements. */
static void ln_row(const float *x, const float *sc, const float *bi, size_t D, float eps,
		   float *y)
{
	float s = 0.0f, q = 0.0f, mean, den;

	for (size_t i = 0; i < D; i++)
		s = s + x[i];
	mean = s / (float)D;
	for (size_t i = 0; i < D; i++) {
		float d = x[i] - mean;

		q = fmaf(d, d, q);
	}
	den = sqrtf(q / (float)D + eps);
	for (size_t i = 0; i < D; i++) {
		y[i] = (x[i] - mean) / den;
		if (sc)
			y[i] = y[i] * sc[i];
		if (bi)
			y[i] = y[i] + bi[i];
	}
}

Test(layer_norm, hand_values)
{
	enpu_view x = V(((float[]){1, 2, 3, 4, 7, 7, 7, 7}), 2, 4), y = V(NULL, 2, 4);
	enpu_attrs a;
	float den = sqrtf(1.25f + 1e-5f);

	memset(&a, 0, sizeof(a));
	a.axis = 1;
	a.epsilon = 1e-5f;
	cr_assert_eq(enpu_k_layer_norm(&a, &x, 1, &y, 1, NULL), 0);
	same(y.data, (float[]){-1.5f / den, -0.5f / den, 0.5f / den, 1.5f / den, 0, 0, 0, 0}, 8,
	     "layer_norm");
	a.epsilon = 0.0f;   /* a constant row with epsilon 0: 0 / 0 */
	cr_assert_eq(enpu_k_layer_norm(&a, &x, 1, &y, 1, NULL), 0);
	cr_assert(isnan(y.data[4]) && isnan(y.data[7]));
}

/* axis 1 of (3, 2, 4): D = 8; scale (2, 1) broadcast over the last dim,
 * bias (4,) over the middle one; against the naive row with the scale and
 * bias expanded by hand; 1 and 3 threads; then without the bias. */
Test(layer_norm, documented_order_broadcast_threads)
{
	enpu_view in[3] = {V(NULL, 3, 2, 4), V(((float[]){0.5f, -2.0f}), 2, 1),
			   V(((float[]){0.25f, -1.0f, 3.0f, 0.0f}), 4)};
	enpu_view y = V(NULL, 3, 2, 4), yt = V(NULL, 3, 2, 4);
	enpu_par *par = enpu_par_create(3);
	float want[24], sc[8], bi[8];
	enpu_attrs a;

	memset(&a, 0, sizeof(a));
	a.axis = 1;
	a.epsilon = 1e-3f;
	wide(in[0].data, 24, 11);
	for (int i = 0; i < 8; i++) {
		sc[i] = in[1].data[i / 4];
		bi[i] = in[2].data[i % 4];
	}
	for (int r = 0; r < 3; r++)
		ln_row(in[0].data + r * 8, sc, bi, 8, 1e-3f, want + r * 8);
	cr_assert_eq(enpu_k_layer_norm(&a, in, 3, &y, 1, NULL), 0);
	same(y.data, want, 24, "scale and bias");
	cr_assert_eq(enpu_k_layer_norm(&a, in, 3, &yt, 1, par), 0);
	same(yt.data, want, 24, "scale and bias, 3 threads");
	cr_assert_eq(enpu_k_layer_norm(&a, in, 2, &y, 1, par), 0);
	for (int r = 0; r < 3; r++)
		ln_row(in[0].data + r * 8, sc, NULL, 8, 1e-3f, want + r * 8);
	same(y.data, want, 24, "scale only");
	enpu_par_destroy(par);
}

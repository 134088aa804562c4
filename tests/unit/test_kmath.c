/* test_kmath.c: the project's exp/log/tanh/erf/sigmoid against libm's double
 * versions (the oracle, rounded to float) over a sweep of every 997th float
 * bit pattern plus special values; and the IEEE special cases exactly. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "kmath.h"

static uint32_t bits_of(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof(u));
	return u;
}

static float float_of(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof(f));
	return f;
}

/* Position on the ordered line of floats: adjacent floats differ by 1,
 * +0 and -0 coincide. */
static int64_t ordkey(float f)
{
	uint32_t u = bits_of(f);
	return (u & 0x80000000u) ? -(int64_t)(u & 0x7fffffffu) : (int64_t)u;
}

static int64_t ulps(float a, float b)
{
	if (a != a || b != b)
		return (a != a && b != b) ? 0 : INT64_MAX;
	int64_t d = ordkey(a) - ordkey(b);
	return d < 0 ? -d : d;
}

typedef float (*f32fn)(float);
typedef double (*f64fn)(double);

static double sigmoid_oracle(double x)
{
	return 1.0 / (1.0 + exp(-x));
}

/* Sweep: every 997th bit pattern (both signs, all exponents, NaNs too),
 * then a dense run near zero and near 1 in magnitude. Returns the max ulp
 * distance and where it happened. */
static int64_t sweep(f32fn f, f64fn oracle, float *worst_x)
{
	int64_t worst = 0;
	*worst_x = 0.0f;
	for (uint64_t u = 0; u <= 0xffffffffu; u += 997) {
		float x = float_of((uint32_t)u);
		float got = f(x);
		float want = (float)oracle((double)x);
		int64_t d = ulps(got, want);
		if (d > worst) {
			worst = d;
			*worst_x = x;
		}
	}
	for (int i = -200000; i <= 200000; i++) {
		float x = (float)i * 1e-4f;     /* [-20, 20] densely */
		int64_t d = ulps(f(x), (float)oracle((double)x));
		if (d > worst) {
			worst = d;
			*worst_x = x;
		}
	}
	return worst;
}

Test(kmath, expf_ulp_sweep)
{
	float wx;
	int64_t w = sweep(enpu_expf, exp, &wx);
	cr_assert(w <= 1, "expf: %lld ulp at %a", (long long)w, (double)wx);
}

Test(kmath, tanhf_ulp_sweep)
{
	float wx;
	int64_t w = sweep(enpu_tanhf, tanh, &wx);
	cr_assert(w <= 1, "tanhf: %lld ulp at %a", (long long)w, (double)wx);
}

Test(kmath, erff_ulp_sweep)
{
	float wx;
	int64_t w = sweep(enpu_erff, erf, &wx);
	cr_assert(w <= 1, "erff: %lld ulp at %a", (long long)w, (double)wx);
}

Test(kmath, sigmoidf_ulp_sweep)
{
	float wx;
	int64_t w = sweep(enpu_sigmoidf, sigmoid_oracle, &wx);
	cr_assert(w <= 1, "sigmoidf: %lld ulp at %a", (long long)w, (double)wx);
}

static int is_neg_zero(float f)
{
	return bits_of(f) == 0x80000000u;
}

static int is_pos_zero(float f)
{
	return bits_of(f) == 0u;
}

Test(kmath, expf_special)
{
	cr_assert(isnan(enpu_expf(NAN)));
	cr_assert_eq(enpu_expf(INFINITY), INFINITY);
	cr_assert(is_pos_zero(enpu_expf(-INFINITY)));
	cr_assert_eq(enpu_expf(0.0f), 1.0f);
	cr_assert_eq(enpu_expf(-0.0f), 1.0f);
	cr_assert_eq(enpu_expf(88.8f), INFINITY);          /* overflow */
	cr_assert_eq(enpu_expf(88.72f), (float)exp((double)88.72f)); /* just below FLT_MAX */
	cr_assert(is_pos_zero(enpu_expf(-104.0f)));         /* underflow to 0 */
	cr_assert_eq(enpu_expf(-100.0f), (float)exp(-100.0)); /* subnormal result */
	cr_assert(enpu_expf(-100.0f) > 0.0f);
	cr_assert_eq(enpu_expf(1.0f), (float)M_E);
	cr_assert_eq(enpu_expf(FLT_MAX), INFINITY);
	cr_assert(is_pos_zero(enpu_expf(-FLT_MAX)));
	cr_assert_eq(enpu_expf(1e-45f), 1.0f);
}

Test(kmath, tanhf_special)
{
	cr_assert(isnan(enpu_tanhf(NAN)));
	cr_assert(isnan(enpu_tanhf(-NAN)));
	cr_assert_eq(enpu_tanhf(INFINITY), 1.0f);
	cr_assert_eq(enpu_tanhf(-INFINITY), -1.0f);
	cr_assert(is_pos_zero(enpu_tanhf(0.0f)));
	cr_assert(is_neg_zero(enpu_tanhf(-0.0f)));
	cr_assert_eq(enpu_tanhf(1e-45f), 1e-45f);           /* least subnormal */
	cr_assert_eq(enpu_tanhf(-1e-30f), -1e-30f);
	cr_assert_eq(enpu_tanhf(20.0f), 1.0f);
	cr_assert_eq(enpu_tanhf(-9.5f), -1.0f);
	cr_assert_eq(enpu_tanhf(0.5f), (float)tanh(0.5));
}

Test(kmath, erff_special)
{
	cr_assert(isnan(enpu_erff(NAN)));
	cr_assert_eq(enpu_erff(INFINITY), 1.0f);
	cr_assert_eq(enpu_erff(-INFINITY), -1.0f);
	cr_assert(is_pos_zero(enpu_erff(0.0f)));
	cr_assert(is_neg_zero(enpu_erff(-0.0f)));
	cr_assert_eq(enpu_erff(1e-45f), (float)erf((double)1e-45f));
	cr_assert_eq(enpu_erff(3.9f), (float)erf(3.9));
	cr_assert_eq(enpu_erff(-4.5f), -1.0f);
	cr_assert_eq(enpu_erff(1.0f), (float)erf(1.0));
}

Test(kmath, sigmoidf_special)
{
	cr_assert(isnan(enpu_sigmoidf(NAN)));
	cr_assert_eq(enpu_sigmoidf(INFINITY), 1.0f);
	cr_assert(is_pos_zero(enpu_sigmoidf(-INFINITY)));
	cr_assert_eq(enpu_sigmoidf(0.0f), 0.5f);
	cr_assert_eq(enpu_sigmoidf(-0.0f), 0.5f);
	cr_assert_eq(enpu_sigmoidf(20.0f), (float)(1.0 / (1.0 + exp(-20.0))));
	/* The far tail is a subnormal, not a flushed zero. */
	cr_assert_eq(enpu_sigmoidf(-95.0f), (float)(1.0 / (1.0 + exp(95.0))));
	cr_assert(enpu_sigmoidf(-95.0f) > 0.0f);
}

/* logf: the sweep (every 997th bit pattern: negatives and NaNs give NaN on
 * both sides) plus every float in [0.5, 2) (where ln x is near 0 and the
 * relative error would show first) and every 64th float of [2^-149, 2^128),
 * against libm's double log rounded to float: within 1 ulp. */
Test(kmath, logf_ulp_sweep)
{
	float wx;
	int64_t w = sweep(enpu_logf, log, &wx);
	cr_assert(w <= 1, "logf: %lld ulp at %a", (long long)w, (double)wx);
	for (uint32_t u = bits_of(0.5f); u < bits_of(2.0f); u++) {
		float x = float_of(u);
		int64_t d = ulps(enpu_logf(x), (float)log((double)x));
		cr_assert(d <= 1, "logf: %lld ulp at %a", (long long)d, (double)x);
	}
	for (uint32_t u = 1; u < 0x7f800000u; u += 64) {
		float x = float_of(u);
		int64_t d = ulps(enpu_logf(x), (float)log((double)x));
		cr_assert(d <= 1, "logf: %lld ulp at %a", (long long)d, (double)x);
	}
}

Test(kmath, logf_special)
{
	cr_assert(isnan(enpu_logf(NAN)));
	cr_assert(isnan(enpu_logf(-1.0f)));
	cr_assert(isnan(enpu_logf(-INFINITY)));
	cr_assert(isnan(enpu_logf(-FLT_MIN)));
	cr_assert_eq(enpu_logf(0.0f), -INFINITY);
	cr_assert_eq(enpu_logf(-0.0f), -INFINITY);
	cr_assert_eq(enpu_logf(INFINITY), INFINITY);
	cr_assert(is_pos_zero(enpu_logf(1.0f)));
	cr_assert_eq(enpu_logf(2.0f), (float)log(2.0));
	cr_assert_eq(enpu_logf(0x1p-149f), (float)log(0x1p-149));
	cr_assert_eq(enpu_logf(FLT_MAX), (float)log((double)FLT_MAX));
}

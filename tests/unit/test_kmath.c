/* test_kmath.c: the project's exp/log/tanh/erf/sigmoid/pow/elu/softplus against libm's double
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

/* ---- spec v2: pow, elu, softplus ------------------------------------- */

/* powf against libm's double pow rounded to float (what NumPy's float64
 * pow cast to float32 gives): for each exponent, every 4099th bit pattern
 * of x (both signs, NaNs, infinities); then random pairs over the ranges
 * real models use. Within 1 ulp. */
Test(kmath, powf_ulp_sweep)
{
	static const float ys[] = {-3.0f, -2.5f, -2.0f, -1.0f, -0.5f, -1.0f / 3.0f, 0.25f, 0.5f,
				   1.0f / 3.0f, 1.5f, 2.0f, 3.0f, 7.0f, 10.5f, 33.0f, -37.25f, 0.0001f,
				   1e6f, 123456.5f, -1e-7f};
	int64_t worst = 0;
	float wx = 0, wy = 0;
	for (size_t k = 0; k < sizeof(ys) / sizeof(ys[0]); k++)
		for (uint64_t u = 0; u <= 0xffffffffu; u += 4099) {
			float x = float_of((uint32_t)u);
			int64_t d = ulps(enpu_powf(x, ys[k]), (float)pow((double)x, (double)ys[k]));
			if (d > worst) {
				worst = d;
				wx = x;
				wy = ys[k];
			}
		}
	uint64_t s = 0x9e3779b97f4a7c15ull;
	for (int i = 0; i < 2000000; i++) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		float x = (float)((double)(s & 0xffffff) / 16777216.0 * 40.0 - 20.0);
		float y = (float)((double)((s >> 24) & 0xffffff) / 16777216.0 * 60.0 - 30.0);
		if (i & 1)
			y = floorf(y);          /* integers: negative x too */
		int64_t d = ulps(enpu_powf(x, y), (float)pow((double)x, (double)y));
		if (d > worst) {
			worst = d;
			wx = x;
			wy = y;
		}
	}
	cr_assert(worst <= 1, "powf: %lld ulp at (%a, %a)", (long long)worst, (double)wx, (double)wy);
}

/* C99 Annex F pow special cases, bit for bit (the sign of zeros and
 * infinities included), and the exact shortcuts: y = 2 is x * x, y = 0.5 is
 * sqrtf(x), y = 1 is x. */
Test(kmath, powf_special)
{
	static const struct {
		float x, y, want;
	} c[] = {
		{NAN, 0.0f, 1.0f}, {NAN, -0.0f, 1.0f}, {-INFINITY, 0.0f, 1.0f}, {1.0f, NAN, 1.0f},
		{1.0f, INFINITY, 1.0f}, {1.0f, -INFINITY, 1.0f}, {-1.0f, INFINITY, 1.0f},
		{-1.0f, -INFINITY, 1.0f},
		{0.0f, -3.0f, INFINITY}, {-0.0f, -3.0f, -INFINITY}, {-0.0f, -2.0f, INFINITY},
		{-0.0f, -0.5f, INFINITY}, {-0.0f, -INFINITY, INFINITY}, {0.0f, -INFINITY, INFINITY},
		{-0.0f, 3.0f, -0.0f}, {0.0f, 3.0f, 0.0f}, {-0.0f, 2.0f, 0.0f}, {-0.0f, 0.5f, 0.0f},
		{-0.0f, 0.7f, 0.0f}, {-0.0f, INFINITY, 0.0f},
		{0.5f, -INFINITY, INFINITY}, {-0.5f, -INFINITY, INFINITY}, {2.0f, -INFINITY, 0.0f},
		{-2.0f, -INFINITY, 0.0f}, {0.5f, INFINITY, 0.0f}, {-0.5f, INFINITY, 0.0f},
		{2.0f, INFINITY, INFINITY}, {-2.0f, INFINITY, INFINITY},
		{-INFINITY, -3.0f, -0.0f}, {-INFINITY, -2.0f, 0.0f}, {-INFINITY, -0.5f, 0.0f},
		{-INFINITY, 3.0f, -INFINITY}, {-INFINITY, 2.0f, INFINITY}, {-INFINITY, 0.5f, INFINITY},
		{INFINITY, -1.0f, 0.0f}, {INFINITY, 0.1f, INFINITY},
		{-8.0f, 1.0f / 3.0f, NAN}, {-2.0f, 0.5f, NAN}, {-FLT_MAX, 1.5f, NAN},
		{NAN, 1.0f, NAN}, {2.0f, NAN, NAN}, {-1.0f, NAN, NAN},
		{-2.0f, 3.0f, -8.0f}, {-2.0f, -3.0f, -0.125f}, {-2.0f, 4.0f, 16.0f},
		{-3.0f, 2.0f, 9.0f}, {-0.0f, 1.0f, -0.0f}, {-1.0f, 33.0f, -1.0f}, {-1.0f, 1e20f, 1.0f},
		{4.0f, 0.5f, 2.0f}, {10.0f, -2.0f, 0.01f}, {2.0f, 128.0f, INFINITY},
		{2.0f, -149.0f, 0x1p-149f}, {2.0f, -150.0f, 0.0f}, {-2.0f, -149.0f, -0x1p-149f},
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		float got = enpu_powf(c[i].x, c[i].y);
		if (isnan(c[i].want))
			cr_expect(isnan(got), "pow(%a, %a) = %a, want NaN", (double)c[i].x,
				  (double)c[i].y, (double)got);
		else
			cr_expect_eq(bits_of(got), bits_of(c[i].want), "pow(%a, %a) = %a, want %a",
				     (double)c[i].x, (double)c[i].y, (double)got, (double)c[i].want);
		/* glibc's pow follows Annex F too */
		float lib = (float)pow((double)c[i].x, (double)c[i].y);
		cr_expect(isnan(got) ? isnan(lib) : bits_of(got) == bits_of(lib),
			  "pow(%a, %a): libm says %a", (double)c[i].x, (double)c[i].y, (double)lib);
	}
	for (uint64_t u = 0; u <= 0xffffffffu; u += 65537) {
		float x = float_of((uint32_t)u);
		float sq = x * x, rt = sqrtf(x);
		cr_assert_eq(bits_of(enpu_powf(x, 1.0f)), bits_of(x) | (isnan(x) ? 0x00400000u : 0),
			     "pow(%a, 1)", (double)x);
		if (isnan(x))
			continue;
		cr_assert_eq(bits_of(enpu_powf(x, 2.0f)), bits_of(sq), "pow(%a, 2) is x * x", (double)x);
		if (x > 0.0f && x < INFINITY)
			cr_assert_eq(bits_of(enpu_powf(x, 0.5f)), bits_of(rt), "pow(%a, 0.5) is sqrtf",
				     (double)x);
	}
}

static float elu1(float x)
{
	return enpu_eluf(x, 1.0f);
}

static double elu_oracle(double x)
{
	return x >= 0.0 ? x : expm1(x);
}

static double softplus_oracle(double x)
{
	return x > 0.0 ? x + log1p(exp(-x)) : log1p(exp(x));
}

Test(kmath, eluf_ulp_sweep)
{
	float wx;
	int64_t w = sweep(elu1, elu_oracle, &wx);
	cr_assert(w <= 1, "eluf: %lld ulp at %a", (long long)w, (double)wx);
	for (uint64_t u = 0x80000000u; u <= 0xffffffffu; u += 101) {
		float x = float_of((uint32_t)u);
		float want = (float)(0.25 * expm1((double)x));
		int64_t d = ulps(enpu_eluf(x, 0.25f), want);
		cr_assert(d <= 1, "eluf(%a, 0.25): %lld ulp", (double)x, (long long)d);
	}
}

Test(kmath, eluf_special)
{
	cr_assert(isnan(enpu_eluf(NAN, 1.0f)));
	cr_assert(isnan(enpu_eluf(-1.0f, NAN)));
	cr_assert(is_neg_zero(enpu_eluf(-0.0f, 1.0f)), "elu(-0) is -0");
	cr_assert(is_pos_zero(enpu_eluf(0.0f, 1.0f)));
	cr_assert_eq(enpu_eluf(INFINITY, 1.0f), INFINITY);
	cr_assert_eq(enpu_eluf(-INFINITY, 1.0f), -1.0f);
	cr_assert_eq(enpu_eluf(-INFINITY, 2.5f), -2.5f);
	cr_assert_eq(enpu_eluf(-1e-30f, 1.0f), -1e-30f);   /* e^x - 1 accurate near 0 */
	cr_assert_eq(enpu_eluf(3.0f, 7.0f), 3.0f);
	cr_assert_eq(enpu_eluf(-1.0f, 1.0f), (float)expm1(-1.0));
}

Test(kmath, softplusf_ulp_sweep)
{
	float wx;
	int64_t w = sweep(enpu_softplusf, softplus_oracle, &wx);
	cr_assert(w <= 1, "softplusf: %lld ulp at %a", (long long)w, (double)wx);
	/* every float of [8, 16), below the x >= 16 shortcut, and of (-1, -0.5]
	 * and [0.5, 1), near where the two branches meet */
	for (uint32_t u = bits_of(8.0f); u < bits_of(16.0f); u++) {
		float x = float_of(u), y = -float_of(u - 0x02000000u);   /* (-1, -0.5] */
		int64_t d = ulps(enpu_softplusf(x), (float)softplus_oracle((double)x));
		cr_assert(d <= 1, "softplusf: %lld ulp at %a", (long long)d, (double)x);
		d = ulps(enpu_softplusf(y), (float)softplus_oracle((double)y));
		cr_assert(d <= 1, "softplusf: %lld ulp at %a", (long long)d, (double)y);
		d = ulps(enpu_softplusf(-y), (float)softplus_oracle(-(double)y));
		cr_assert(d <= 1, "softplusf: %lld ulp at %a", (long long)d, -(double)y);
	}
	/* the shortcut: x itself is the correctly rounded value from 16 up */
	for (uint32_t u = bits_of(16.0f); u < bits_of(32.0f); u++) {
		float x = float_of(u);
		cr_assert_eq(enpu_softplusf(x), (float)softplus_oracle((double)x), "at %a", (double)x);
	}
}

Test(kmath, softplusf_special)
{
	cr_assert(isnan(enpu_softplusf(NAN)));
	cr_assert_eq(enpu_softplusf(INFINITY), INFINITY);
	cr_assert(is_pos_zero(enpu_softplusf(-INFINITY)));
	cr_assert_eq(enpu_softplusf(0.0f), (float)log(2.0));
	cr_assert_eq(enpu_softplusf(-0.0f), (float)log(2.0));
	cr_assert_eq(enpu_softplusf(16.0f), 16.0f);
	cr_assert_eq(enpu_softplusf(FLT_MAX), FLT_MAX);
	cr_assert_eq(enpu_softplusf(-100.0f), (float)exp(-100.0));   /* subnormal, not 0 */
	cr_assert(enpu_softplusf(-100.0f) > 0.0f);
	cr_assert(is_pos_zero(enpu_softplusf(-104.0f)));
}

/* ---- the many-at-once forms: every element's bits as the scalar's ------- */

/* Inputs that walk every exponent (a bit pattern every 2^15), the specials,
 * the thresholds of both functions, and the ranges where e^-x is subnormal
 * or overflows, at odd lengths so the scalar tail runs too. */
static size_t n_inputs(float *x, size_t cap)
{
	static const float spec[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, FLT_MIN,
				     -FLT_MIN, FLT_MAX, -FLT_MAX, 1e-45f, -1e-45f, 88.72f, 88.73f,
				     89.9f, 90.0f, 90.1f, -103.97f, -103.98f, -109.9f, -110.0f,
				     -110.1f, 709.0f, -709.0f, 745.0f, -745.0f, 1000.0f, -1000.0f};
	size_t n = 0;

	for (size_t i = 0; i < sizeof spec / sizeof spec[0]; i++)
		x[n++] = spec[i];
	for (uint64_t b = 0; b < (1ull << 32) && n < cap; b += 1u << 15) {
		uint32_t u = (uint32_t)b;
		memcpy(&x[n++], &u, 4);
	}
	for (float v = -120.0f; v < 120.0f && n < cap; v += 0.0173f)
		x[n++] = v;
	return n;
}

static void same_bits(const float *x, const float *a, const float *b, size_t n, const char *what)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t ua, ub;
		memcpy(&ua, &a[i], 4);
		memcpy(&ub, &b[i], 4);
		if (a[i] != a[i] && b[i] != b[i])
			continue;   /* NaNs leave the kernels canonical; their bits are free here */
		cr_assert_eq(ua, ub, "%s(%a): %08x, scalar %08x", what, (double)x[i], ua, ub);
	}
}

Test(kmath, many_at_once_give_the_scalar_bits)
{
	static float x[160000], y[160000], ref[160000];
	size_t n = n_inputs(x, 160000 - 3);

	for (size_t len = n; len + 3 > n; len--) {   /* three lengths: the tail differs */
		enpu_sigmoidf_n(x, y, len);
		for (size_t i = 0; i < len; i++)
			ref[i] = enpu_sigmoidf(x[i]);
		same_bits(x, y, ref, len, "sigmoid");
		enpu_expf_n(x, y, len);
		for (size_t i = 0; i < len; i++)
			ref[i] = enpu_expf(x[i]);
		same_bits(x, y, ref, len, "exp");
	}
	/* in place */
	memcpy(y, x, n * sizeof(float));
	enpu_sigmoidf_n(y, y, n);
	for (size_t i = 0; i < n; i++)
		ref[i] = enpu_sigmoidf(x[i]);
	same_bits(x, y, ref, n, "sigmoid in place");
}

/* the double e^x both float forms share: every lane's double bits */
Test(kmath, many_at_once_exp_d_gives_the_scalar_double_bits)
{
	static double x[200000], y[200000];
	size_t n = 0;

	for (double v = -760.0; v < 720.0 && n < 199990; v += 0.00751)
		x[n++] = v;
	x[n++] = NAN, x[n++] = INFINITY, x[n++] = -INFINITY, x[n++] = -0.0, x[n++] = 0.0;
	x[n++] = 709.8, x[n++] = 709.81, x[n++] = -745.2, x[n++] = -745.21;
	enpu_kmath_exp_d_n(x, y, n);
	for (size_t i = 0; i < n; i++) {
		double r = enpu_kmath_exp_d(x[i]);
		if (r != r && y[i] != y[i])
			continue;
		cr_assert(!memcmp(&r, &y[i], sizeof r), "exp_d(%a): %a, scalar %a", x[i], y[i], r);
	}
}

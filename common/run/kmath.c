/* kmath.c: the project's own exp, log, tanh, erf, sigmoid, and (spec v2)
 * pow, elu and softplus (see kmath.h).
 *
 * Each float function evaluates in double with plain IEEE operations (+ - * /,
 * floor, ldexp, fabs, copysign: all exactly specified), then rounds once to
 * float. Under -ffp-contract=off this is the same code and the same bits on
 * every platform. The double result is good to a few double ulps, so the
 * float result is the correctly rounded one except when the true value lies
 * within ~1e-16 of a rounding midpoint: then it is 1 ulp off at most. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kmath.h"

/* ln 2 split so that k * LN2_HI is exact for |k| < 2^11 (fdlibm's split). */
#define LN2_HI   6.93147180369123816490e-01
#define LN2_LO   1.90821492927058770002e-10
#define INV_LN2  1.44269504088896338700e+00
#define TWO_OVER_SQRTPI 1.12837916709551257390e+00
#define SQRT2    1.41421356237309504880e+00

/* e^r - 1 for |r| <= 0.35: Taylor series to r^14 (truncation < 1e-19
 * relative), Horner order from the highest term down. Exact relative
 * accuracy near 0, which tanh needs. */
static double expm1_poly(double r)
{
	double p = 1.0 / 87178291200.0;          /* 1/14! */
	p = p * r + 1.0 / 6227020800.0;          /* 1/13! */
	p = p * r + 1.0 / 479001600.0;
	p = p * r + 1.0 / 39916800.0;
	p = p * r + 1.0 / 3628800.0;
	p = p * r + 1.0 / 362880.0;
	p = p * r + 1.0 / 40320.0;
	p = p * r + 1.0 / 5040.0;
	p = p * r + 1.0 / 720.0;
	p = p * r + 1.0 / 120.0;
	p = p * r + 1.0 / 24.0;
	p = p * r + 1.0 / 6.0;
	p = p * r + 0.5;
	p = p * r + 1.0;
	return p * r;
}

/* e^x in double: x = k ln2 + r with |r| <= ln2/2 (Cody-Waite), then
 * 2^k * (1 + expm1_poly(r)). k is rounded half away from zero by an exact
 * truncating conversion; 2^k is built from its bits while it is a normal
 * double (the multiply is then exact), else ldexp. Saturates outside
 * double's range. */
static double exp_d(double x)
{
	if (x != x)
		return x + x;
	if (x > 709.8)
		return HUGE_VAL;
	if (x < -745.2)
		return 0.0;
	double kd = x * INV_LN2;
	int64_t k = (int64_t)(kd >= 0.0 ? kd + 0.5 : kd - 0.5);
	double fk = (double)k;
	double r = (x - fk * LN2_HI) - fk * LN2_LO;
	double p = 1.0 + expm1_poly(r);
	if (k < -1000 || k > 1000)
		return ldexp(p, (int)k);
	uint64_t bits = (uint64_t)(k + 1023) << 52;
	double scale;
	memcpy(&scale, &bits, sizeof(scale));
	return p * scale;
}

/* e^y - 1 in double, accurate relative to the result also near y = 0. */
static double expm1_d(double y)
{
	if (fabs(y) <= 0.35)
		return expm1_poly(y);
	return exp_d(y) - 1.0;
}

float enpu_expf(float x)
{
	if (x != x)
		return x + x;
	if (x > 90.0f)
		return HUGE_VALF;        /* e^88.73 already exceeds FLT_MAX */
	if (x < -110.0f)
		return 0.0f;             /* e^-103.98 is below half the least subnormal */
	return (float)exp_d((double)x);
}

/* tanh|x| = em / (em + 2) with em = e^(2|x|) - 1; the sign is copied back,
 * so tanh(-0) = -0. For |x| >= 10 the result rounds to 1 (1 - tanh 10 is
 * 4e-9, below half an ulp of 1). */
float enpu_tanhf(float x)
{
	if (x != x)
		return x + x;
	double ax = fabs((double)x);
	double t;
	if (ax >= 10.0) {
		t = 1.0;
	} else {
		double em = expm1_d(2.0 * ax);
		t = em / (em + 2.0);
	}
	return copysignf((float)t, x);
}

/* erf|x| = 2/sqrt(pi) * e^(-x^2) * sum_n x (2x^2)^n / (1*3*...*(2n+1)):
 * every term is positive, so there is no cancellation; terms are summed in
 * ascending n until they no longer change the sum. x^2 is exact in double
 * for a float x. For |x| >= 4, 1 - erf|x| < 1.6e-8 rounds to 1. */
float enpu_erff(float x)
{
	if (x != x)
		return x + x;
	double ax = fabs((double)x);
	double r;
	if (ax >= 4.0) {
		r = 1.0;
	} else {
		double x2 = ax * ax;
		double two_x2 = 2.0 * x2;
		double term = ax, sum = ax;
		for (int n = 1; n < 200; n++) {
			term = term * two_x2 / (double)(2 * n + 1);
			double next = sum + term;
			if (next == sum)
				break;
			sum = next;
		}
		r = TWO_OVER_SQRTPI * exp_d(-x2) * sum;
		if (r > 1.0)
			r = 1.0;
	}
	return copysignf((float)r, x);
}

/* sigmoid(x) = 1 / (1 + e^-x), all of it in double (e^-x from exp_d), then
 * one rounding to float; so the tails (down to the subnormals near x = -103)
 * are as accurate as the middle. NaN propagates. */
float enpu_sigmoidf(float x)
{
	if (x != x)
		return x + x;
	double e = exp_d(-(double)x);
	return (float)(1.0 / (1.0 + e));
}

/* ln d in double for a positive finite double d (normal: every float is one
 * as a double): d = m * 2^e exactly from its bits, with m in [1, 2); m >
 * sqrt 2 is halved (exact) so that m lies in [sqrt(2)/2, sqrt 2]. Then,
 * with f = m - 1 (exact) and s = f / (2 + f), |s| <= 0.1716:
 *   ln m = 2 atanh s = 2 (s + s^3/3 + s^5/5 + ... + s^25/25)
 * (Horner in s^2 from the s^25 term down; the next term is < 1e-20 of the
 * sum), and ln d = e * LN2_HI + (e * LN2_LO + ln m), e * LN2_HI exact. */
static double log_d(double d)
{
	uint64_t bits;
	memcpy(&bits, &d, sizeof(bits));
	int e = (int)((bits >> 52) & 0x7ff) - 1023;
	bits = (bits & 0x000fffffffffffffull) | 0x3ff0000000000000ull;
	double m;
	memcpy(&m, &bits, sizeof(m));
	if (m > SQRT2) {
		m = m * 0.5;
		e++;
	}
	double f = m - 1.0;
	double s = f / (2.0 + f);
	double z = s * s;
	double p = 1.0 / 25.0;
	for (int k = 23; k >= 1; k -= 2)
		p = p * z + 1.0 / (double)k;
	double lm = 2.0 * s * p;
	double fe = (double)e;
	return fe * LN2_HI + (fe * LN2_LO + lm);
}

/* ln x for a float x: log_d((double)x), rounded once.
 * Special values: NaN -> NaN, x < 0 (and -Inf) -> NaN, +-0 -> -Inf,
 * +Inf -> +Inf, ln 1 = +0. */
float enpu_logf(float x)
{
	if (x != x)
		return x + x;
	if (x < 0.0f)
		return NAN;
	if (x == 0.0f)
		return -HUGE_VALF;
	if (x == HUGE_VALF)
		return x;
	return (float)log_d((double)x);
}

/* ln(1 + u) in double for u in [0, 1], accurate relative to the result also
 * for tiny u: w = 1 + u; u when w rounds to 1, else
 * log_d(w) * (u / (w - 1)) (Goldberg's correction of the rounding in w). */
static double log1p_d(double u)
{
	double w = 1.0 + u;
	if (w == 1.0)
		return u;
	return log_d(w) * (u / (w - 1.0));
}

/* y odd integer (as a double); |y| >= 2^24 floats are all even integers. */
static int odd_int(double y)
{
	return floor(y) == y && fabs(y) < 16777216.0 && ((int64_t)y & 1);
}

/* 2^(k y) exactly, for |x| = 2^k (its double's fraction bits all 0) and y an
 * integer below 2^24 in magnitude: ldexp of 1.0 in double, where
 * saturating at 2^+-300 changes no float result; -1.0 for any other x, y. */
static double pow2_int(double ax, double y)
{
	uint64_t bits;
	memcpy(&bits, &ax, sizeof(bits));
	if ((bits & 0x000fffffffffffffull) || floor(y) != y || fabs(y) >= 16777216.0)
		return -1.0;
	int64_t e = ((int64_t)((bits >> 52) & 0x7ff) - 1023) * (int64_t)y;
	if (e > 300)
		e = 300;
	if (e < -300)
		e = -300;
	return ldexp(1.0, (int)e);
}

/* x^y, C99 Annex F's special cases first (in this order):
 *   y = ±0 or x = 1: 1 (even for NaN);  x NaN: x;  y NaN: y;
 *   y = ±Inf: 1 for x = -1, else +Inf when (|x| < 1) == (y < 0), else +0;
 *   x = ±0 or ±Inf: |x|^y is +Inf when (x == 0) == (y < 0), else +0,
 *     with x's sign when y is an odd integer;
 * then for finite nonzero x:  y = 1: x;  y = 2: x * x (one float multiply);
 *   x < 0 and y not an integer: NaN;  y = 0.5: sqrtf(x);
 *   |x| a power of two and y an integer: 2^(k y) exactly (pow2_int);
 *   else exp_d(y * log_d(|x|)) in double;
 * negated for x < 0 and odd y, rounded once to float. Never libm's pow. */
float enpu_powf(float x, float y)
{
	if (y == 0.0f || x == 1.0f)
		return 1.0f;
	if (x != x)
		return x + x;
	if (y != y)
		return y + y;
	double dx = (double)x, dy = (double)y, ax = fabs(dx);
	if (fabs(dy) == HUGE_VAL) {
		if (ax == 1.0)
			return 1.0f;
		return (ax < 1.0) == (dy < 0.0) ? HUGE_VALF : 0.0f;
	}
	int odd = odd_int(dy);
	if (dx == 0.0 || ax == HUGE_VAL) {
		float r = (dx == 0.0) == (dy < 0.0) ? HUGE_VALF : 0.0f;
		return odd ? copysignf(r, x) : r;
	}
	if (y == 1.0f)
		return x;
	if (y == 2.0f)
		return x * x;
	if (dx < 0.0 && floor(dy) != dy)
		return NAN;
	if (y == 0.5f)
		return sqrtf(x);
	double r = pow2_int(ax, dy);
	if (r < 0.0)
		r = exp_d(dy * log_d(ax));
	return (float)(odd && dx < 0.0 ? -r : r);
}

/* elu: x for x >= 0 (so -0 stays -0, +Inf stays +Inf), else
 * alpha * (e^x - 1) in double (e^x - 1 by expm1_d, accurate near 0; -Inf
 * gives -alpha), rounded once. NaN propagates. */
float enpu_eluf(float x, float alpha)
{
	if (x != x)
		return x + x;
	if (x >= 0.0f)
		return x;
	return (float)((double)alpha * expm1_d((double)x));
}

/* softplus: ln(1 + e^x) in double, rounded once:
 *   x > 0: x + log1p_d(e^-x);  x <= 0: log1p_d(e^x)
 * and x itself for x >= 16 (ln(1 + e^x) - x < e^-16 < 1.2e-7, under half
 * an ulp of every float >= 16, so x is the correctly rounded value; +Inf
 * too). -Inf gives +0; NaN propagates. */
float enpu_softplusf(float x)
{
	if (x != x)
		return x + x;
	if (x >= 16.0f)
		return x;
	double d = (double)x;
	if (d > 0.0)
		return (float)(d + log1p_d(exp_d(-d)));
	return (float)log1p_d(exp_d(d));
}

/* ---- many at once: the same operations, eight doubles a register ---------
 *
 * enpu_expf_n and enpu_sigmoidf_n give exactly what enpu_expf and
 * enpu_sigmoidf give for each element: exp_d's steps (x * INV_LN2, the
 * half away from zero and truncation, the Cody-Waite split, expm1_poly's
 * Horner steps, the scale built from its bits) done lane by lane with
 * separate IEEE multiplies and adds (no fused multiply-add), the float
 * rounded once at the end. Lanes outside the fast path (NaN, a result past
 * double's range, |k| > 1000) are computed by the scalar function. */

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

__attribute__((target("avx512f")))
static __m512d expm1_poly_v(__m512d r)
{
	static const double c[14] = {
		1.0 / 6227020800.0, 1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0,
		1.0 / 362880.0, 1.0 / 40320.0, 1.0 / 5040.0, 1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0,
		1.0 / 6.0, 0.5, 1.0, 0.0};
	__m512d p = _mm512_set1_pd(1.0 / 87178291200.0);

	for (int i = 0; i < 13; i++)
		p = _mm512_add_pd(_mm512_mul_pd(p, r), _mm512_set1_pd(c[i]));
	return _mm512_mul_pd(p, r);
}

/* exp_d on 8 lanes; *fast: the lanes it computed (the others are to be
 * done by the scalar function) */
__attribute__((target("avx512f")))
static __m512d exp_d_v(__m512d x, __mmask8 *fast)
{
	const __m512d half = _mm512_set1_pd(0.5), zero = _mm512_setzero_pd();
	__mmask8 ok = _mm512_cmp_pd_mask(x, x, _CMP_ORD_Q) &
		      _mm512_cmp_pd_mask(x, _mm512_set1_pd(709.8), _CMP_LE_OQ) &
		      _mm512_cmp_pd_mask(x, _mm512_set1_pd(-745.2), _CMP_GE_OQ);
	__m512d kd = _mm512_mul_pd(x, _mm512_set1_pd(INV_LN2));
	__mmask8 pos = _mm512_cmp_pd_mask(kd, zero, _CMP_GE_OQ);
	__m512d t = _mm512_mask_blend_pd(pos, _mm512_sub_pd(kd, half), _mm512_add_pd(kd, half));
	t = _mm512_mask_blend_pd(ok, zero, t);   /* no conversion of what is not used */
	__m256i k = _mm512_cvttpd_epi32(t);
	__m512d fk = _mm512_cvtepi32_pd(k);
	__m512d r = _mm512_sub_pd(_mm512_sub_pd(x, _mm512_mul_pd(fk, _mm512_set1_pd(LN2_HI))),
				  _mm512_mul_pd(fk, _mm512_set1_pd(LN2_LO)));
	__m512d p = _mm512_add_pd(_mm512_set1_pd(1.0), expm1_poly_v(r));
	__m512i k64 = _mm512_cvtepi32_epi64(k);
	ok &= _mm512_cmp_epi64_mask(k64, _mm512_set1_epi64(-1000), _MM_CMPINT_NLT) &
	      _mm512_cmp_epi64_mask(k64, _mm512_set1_epi64(1000), _MM_CMPINT_LE);
	__m512d scale = _mm512_castsi512_pd(
		_mm512_slli_epi64(_mm512_add_epi64(k64, _mm512_set1_epi64(1023)), 52));
	*fast = ok;
	return _mm512_mul_pd(p, scale);
}

__attribute__((target("avx512f")))
static void sigmoid8(const float *xp, float *y)
{
	float x[8];   /* y may be xp: the fallback lanes read the inputs */

	memcpy(x, xp, sizeof x);
	__m512d xd = _mm512_cvtps_pd(_mm256_loadu_ps(x));
	__m512d neg = _mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(xd),
							   _mm512_set1_epi64((long long)0x8000000000000000ULL)));
	__mmask8 fast;
	__m512d e = exp_d_v(neg, &fast);
	__m512d s = _mm512_div_pd(_mm512_set1_pd(1.0), _mm512_add_pd(_mm512_set1_pd(1.0), e));
	_mm256_storeu_ps(y, _mm512_cvtpd_ps(s));
	for (int l = 0; l < 8; l++)
		if (!(fast >> l & 1))
			y[l] = enpu_sigmoidf(x[l]);
}

__attribute__((target("avx512f")))
static void exp8(const float *xp, float *y)
{
	float x[8];   /* y may be xp: the fallback lanes read the inputs */

	memcpy(x, xp, sizeof x);
	__m512d xd = _mm512_cvtps_pd(_mm256_loadu_ps(x));
	__mmask8 fast;
	__m512d e = exp_d_v(xd, &fast);
	/* enpu_expf's own bounds: past them its answer is +inf or 0 */
	fast &= _mm512_cmp_pd_mask(xd, _mm512_set1_pd(90.0), _CMP_LE_OQ) &
		_mm512_cmp_pd_mask(xd, _mm512_set1_pd(-110.0), _CMP_GE_OQ);
	_mm256_storeu_ps(y, _mm512_cvtpd_ps(e));
	for (int l = 0; l < 8; l++)
		if (!(fast >> l & 1))
			y[l] = enpu_expf(x[l]);
}

__attribute__((target("avx512f")))
static void exp_d_avx512(const double *x, double *y, __mmask8 *fast)
{
	_mm512_storeu_pd(y, exp_d_v(_mm512_loadu_pd(x), fast));
}

static int have_avx512(void)
{
	static int v = -1;   /* benign race: every thread finds the same */
	int c = __atomic_load_n(&v, __ATOMIC_RELAXED);

	if (c < 0) {
		const char *want = getenv("EULERNPU_ISA");
		__builtin_cpu_init();
		c = __builtin_cpu_supports("avx512f") &&
		    !(want && (!strcmp(want, "portable") || !strcmp(want, "avx2")));
		__atomic_store_n(&v, c, __ATOMIC_RELAXED);
	}
	return c;
}
#define HAVE_VEC_PATH 1
#endif

double enpu_kmath_exp_d(double x)
{
	return exp_d(x);
}

void enpu_kmath_exp_d_n(const double *x, double *y, size_t n)
{
	size_t i = 0;
#ifdef HAVE_VEC_PATH
	if (have_avx512())
		for (; i + 8 <= n; i += 8) {
			double in[8];
			__mmask8 fast;
			memcpy(in, x + i, sizeof in);
			exp_d_avx512(in, y + i, &fast);
			for (int l = 0; l < 8; l++)
				if (!(fast >> l & 1))
					y[i + l] = exp_d(in[l]);
		}
#endif
	for (; i < n; i++)
		y[i] = exp_d(x[i]);
}

void enpu_sigmoidf_n(const float *x, float *y, size_t n)
{
	size_t i = 0;
#ifdef HAVE_VEC_PATH
	if (have_avx512())
		for (; i + 8 <= n; i += 8)
			sigmoid8(x + i, y + i);
#endif
	for (; i < n; i++)
		y[i] = enpu_sigmoidf(x[i]);
}

void enpu_expf_n(const float *x, float *y, size_t n)
{
	size_t i = 0;
#ifdef HAVE_VEC_PATH
	if (have_avx512())
		for (; i + 8 <= n; i += 8)
			exp8(x + i, y + i);
#endif
	for (; i < n; i++)
		y[i] = enpu_expf(x[i]);
}

/* kmath.c: the project's own exp, log, tanh, erf and sigmoid (see kmath.h).
 *
 * Each float function evaluates in double with plain IEEE operations (+ - * /,
 * floor, ldexp, fabs, copysign: all exactly specified), then rounds once to
 * float. Under -ffp-contract=off this is the same code and the same bits on
 * every platform. The double result is good to a few double ulps, so the
 * float result is the correctly rounded one except when the true value lies
 * within ~1e-16 of a rounding midpoint: then it is 1 ulp off at most. */
#include <math.h>
#include <stdint.h>
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

/* ln x for a float x, in double, then rounded once. (double)x is a normal
 * double for every finite float x > 0 (float subnormals too), so
 * x = m * 2^e exactly from its bits, with m in [1, 2); m > sqrt 2 is halved
 * (exact) so that m lies in [sqrt(2)/2, sqrt 2]. Then, with f = m - 1
 * (exact) and s = f / (2 + f), |s| <= 0.1716:
 *   ln m = 2 atanh s = 2 (s + s^3/3 + s^5/5 + ... + s^25/25)
 * (Horner in s^2 from the s^25 term down; the next term is < 1e-20 of the
 * sum), and ln x = e * LN2_HI + (e * LN2_LO + ln m), e * LN2_HI exact.
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
	double d = (double)x;
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
	return (float)(fe * LN2_HI + (fe * LN2_LO + lm));
}

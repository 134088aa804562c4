/* kmath.h: the project's own transcendental functions.
 *
 * Same code and same bits on every platform (never libm's exp/tanh/erf,
 * which differ between C libraries). Float in, float out; internally they
 * may use double arithmetic, which is IEEE-exact everywhere we build with
 * -ffp-contract=off. Accuracy goal: within 2 ulp of the true value. */
#ifndef ENPU_KMATH_H
#define ENPU_KMATH_H

float enpu_expf(float x);
float enpu_logf(float x);      /* ln x; NaN for x < 0, -Inf for +-0 */
float enpu_tanhf(float x);
float enpu_erff(float x);
float enpu_sigmoidf(float x);   /* 1 / (1 + e^-x) in double, rounded once */
float enpu_powf(float x, float y);     /* x^y: Annex F special cases, x * x, sqrtf,
					* else e^(y ln|x|) in double, rounded once */
float enpu_eluf(float x, float alpha); /* x >= 0 ? x : alpha (e^x - 1) in double */
float enpu_softplusf(float x);         /* ln(1 + e^x) in double; x for x >= 16 */

/* The same for n elements (y may be x): enpu_sigmoidf and enpu_expf of
 * each, bit for bit, several at a time where the CPU can. */
#include <stddef.h>
void enpu_sigmoidf_n(const float *x, float *y, size_t n);
void enpu_expf_n(const float *x, float *y, size_t n);
/* The double e^x under both (for tests: the many-at-once form must give
 * the scalar's double bits, which the float results hide). */
double enpu_kmath_exp_d(double x);
void enpu_kmath_exp_d_n(const double *x, double *y, size_t n);

#endif

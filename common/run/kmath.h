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

#endif

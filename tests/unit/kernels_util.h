/* kernels_util.h: buffers and checks for the kernel unit tests
 * (test_kernels.c, test_kernels_move.c, test_v2conv.c): shapes, views freed
 * by the suites' fini hook, seeded random data, bit-exact comparison. */
#ifndef KERNELS_UTIL_H
#define KERNELS_UTIL_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kernels.h"

/* ---- helpers -------------------------------------------------------- */

static inline enpu_shape shp(int nd, const int64_t *d)
{
	enpu_shape s;
	memset(&s, 0, sizeof(s));
	s.ndim = nd;
	for (int i = 0; i < nd; i++)
		s.dim[i] = d[i];
	return s;
}

#define SHP(...) shp((int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__})
#define SCALAR shp(0, NULL)

static inline size_t nel(const enpu_shape *s)
{
	size_t n = 1;
	for (int i = 0; i < s->ndim; i++)
		n *= (size_t)s->dim[i];
	return n;
}

/* Every buffer a test makes is registered and freed by the suite's fini
 * hook (so LeakSanitizer stays quiet without a free per line); drop()
 * frees one early. */
#define MAX_LIVE 4096
static float *live[MAX_LIVE];
static int n_live;

static inline void release_all(void)
{
	for (int i = 0; i < n_live; i++)
		free(live[i]);
	n_live = 0;
}

static inline void drop(float *p)
{
	for (int i = 0; i < n_live; i++)
		if (live[i] == p) {
			live[i] = live[--n_live];
			break;
		}
	free(p);
}

static inline enpu_view mk(enpu_shape s)
{
	enpu_view v = {s, calloc(nel(&s) + 1, sizeof(float)), ENPU_DT_F32};
	cr_assert_not_null(v.data);
	cr_assert(n_live < MAX_LIVE);
	live[n_live++] = v.data;
	return v;
}


static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static inline float frand(void)
{
	/* xorshift64*, then a uniform in [-1, 1) plus a wide exponent spread
	 * sometimes, so sums really depend on the order */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	uint64_t r = rng_state * 2685821657736338717ull;
	float u = (float)(r >> 40) / (float)(1u << 24) * 2.0f - 1.0f;
	return u;
}

static inline enpu_view mkrand(enpu_shape s)
{
	enpu_view v = mk(s);
	for (size_t i = 0; i < nel(&s); i++)
		v.data[i] = frand();
	return v;
}

static inline void fill(enpu_view *v, const float *vals)
{
	memcpy(v->data, vals, nel(&v->shape) * sizeof(float));
}

static inline enpu_attrs attrs0(void)
{
	enpu_attrs a;
	memset(&a, 0, sizeof(a));
	a.alpha = 1.0f;
	a.beta = 1.0f;
	a.min = -INFINITY;
	a.max = INFINITY;
	a.strides[0] = a.strides[1] = 1;
	a.dilations[0] = a.dilations[1] = 1;
	a.group = 1;
	a.epsilon = 1e-5f;
	return a;
}

static inline uint32_t fbits(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

static inline void assert_same(const enpu_view *got, const float *want, const char *what)
{
	size_t n = nel(&got->shape);
	for (size_t i = 0; i < n; i++)
		cr_assert(fbits(got->data[i]) == fbits(want[i]) ||
			  (isnan(got->data[i]) && isnan(want[i])),
			  "%s[%zu]: got %a, want %a", what, i, (double)got->data[i], (double)want[i]);
}

#endif

/* test_kernels_move.c: spec v2's pad and slice kernels (kernels_move.c):
 * every pad mode with crops, and slice at the int64 extremes, bit for bit. */
#include "kernels_util.h"

TestSuite(move_v2, .fini = release_all);

/* ---- spec v2 data movement: pad, slice -------------------------------- */

static enpu_attrs pads_of(int n, const int64_t *p, int mode, float value)
{
	enpu_attrs a = attrs0();

	a.pad_pads.n = n;
	memcpy(a.pad_pads.v, p, (size_t)n * sizeof(int64_t));
	a.pad_mode = mode;
	a.pad_value = value;
	return a;
}

/* pad's three modes as np.pad defines them, negative pads cropping first,
 * and the input's bits (a signalling NaN's payload, -0) kept. */
Test(move_v2, pad_modes)
{
	enpu_view x = mk(SHP(4)), y9 = mk(SHP(9)), y5 = mk(SHP(5));
	enpu_view x2 = mk(SHP(2, 3)), y2 = mk(SHP(3, 5));
	enpu_attrs a;

	fill(&x, (float[]){1, 2, 3, 4});
	a = pads_of(2, (int64_t[]){2, 3}, 1, 0);
	cr_assert_eq(enpu_k_pad(&a, &x, 1, &y9, 1, NULL), 0);
	assert_same(&y9, (float[]){3, 2, 1, 2, 3, 4, 3, 2, 1}, "reflect");
	a = pads_of(2, (int64_t[]){2, 3}, 2, 0);
	cr_assert_eq(enpu_k_pad(&a, &x, 1, &y9, 1, NULL), 0);
	assert_same(&y9, (float[]){1, 1, 1, 2, 3, 4, 4, 4, 4}, "edge");
	a = pads_of(2, (int64_t[]){2, 3}, 0, -0.0f);
	cr_assert_eq(enpu_k_pad(&a, &x, 1, &y9, 1, NULL), 0);
	assert_same(&y9, (float[]){-0.0f, -0.0f, 1, 2, 3, 4, -0.0f, -0.0f, -0.0f}, "constant -0");
	a = pads_of(2, (int64_t[]){-1, 2}, 2, 0);
	cr_assert_eq(enpu_k_pad(&a, &x, 1, &y5, 1, NULL), 0);
	assert_same(&y5, (float[]){2, 3, 4, 4, 4}, "crop the begin, edge the end");
	a = pads_of(2, (int64_t[]){2, -1}, 1, 0);
	cr_assert_eq(enpu_k_pad(&a, &x, 1, &y5, 1, NULL), 0);
	assert_same(&y5, (float[]){3, 2, 1, 2, 3}, "reflect against the cropped end");

	fill(&x2, (float[]){1, 2, 3, 4, 5, 6});
	a = pads_of(4, (int64_t[]){1, 0, 0, 2}, 0, 9);
	cr_assert_eq(enpu_k_pad(&a, &x2, 1, &y2, 1, NULL), 0);
	assert_same(&y2, (float[]){9, 9, 9, 9, 9, 1, 2, 3, 9, 9, 4, 5, 6, 9, 9}, "constant 2-D");
	a = pads_of(4, (int64_t[]){1, 0, 0, 2}, 2, 0);
	cr_assert_eq(enpu_k_pad(&a, &x2, 1, &y2, 1, NULL), 0);
	assert_same(&y2, (float[]){1, 2, 3, 3, 3, 1, 2, 3, 3, 3, 4, 5, 6, 6, 6}, "edge 2-D");

	uint32_t snan = 0xff800001u;   /* a signalling NaN with a payload */
	memcpy(&x.data[1], &snan, 4);
	x.data[2] = -0.0f;
	a = pads_of(2, (int64_t[]){2, 3}, 2, 0);
	cr_assert_eq(enpu_k_pad(&a, &x, 1, &y9, 1, NULL), 0);
	cr_assert_eq(fbits(y9.data[3]), snan, "the NaN's bits are copied");
	cr_assert_eq(fbits(y9.data[4]), 0x80000000u, "-0 stays -0");
}

static enpu_attrs slice_of(int n, const int64_t *st, const int64_t *en, const int64_t *ax,
			   const int64_t *sp)
{
	enpu_attrs a = attrs0();

	a.starts.n = a.ends.n = a.axes.n = a.steps.n = n;
	memcpy(a.starts.v, st, (size_t)n * sizeof(int64_t));
	memcpy(a.ends.v, en, (size_t)n * sizeof(int64_t));
	memcpy(a.axes.v, ax, (size_t)n * sizeof(int64_t));
	memcpy(a.steps.v, sp, (size_t)n * sizeof(int64_t));
	return a;
}

/* slice with ONNX's clamping at the int64 extremes: starts/ends of
 * INT64_MAX and INT64_MIN, steps of INT64_MAX and INT64_MIN (one element),
 * negative steps, and an empty result that writes nothing. */
Test(move_v2, slice_extremes)
{
	enpu_view x = mk(SHP(10)), y4 = mk(SHP(4)), y1 = mk(SHP(1)), y0 = mk(SHP(0));
	enpu_view x2 = mk(SHP(3, 4)), y2 = mk(SHP(2, 2));
	enpu_attrs a;

	for (int i = 0; i < 10; i++)
		x.data[i] = (float)i;
	a = slice_of(1, (int64_t[]){INT64_MAX}, (int64_t[]){INT64_MIN}, (int64_t[]){0},
		     (int64_t[]){-3});
	cr_assert_eq(enpu_k_slice(&a, &x, 1, &y4, 1, NULL), 0);
	assert_same(&y4, (float[]){9, 6, 3, 0}, "reverse by 3 from INT64_MAX to INT64_MIN");
	a = slice_of(1, (int64_t[]){-100}, (int64_t[]){100}, (int64_t[]){0}, (int64_t[]){INT64_MAX});
	cr_assert_eq(enpu_k_slice(&a, &x, 1, &y1, 1, NULL), 0);
	assert_same(&y1, (float[]){0}, "step INT64_MAX");
	a = slice_of(1, (int64_t[]){-1}, (int64_t[]){INT64_MIN}, (int64_t[]){0},
		     (int64_t[]){INT64_MIN});
	cr_assert_eq(enpu_k_slice(&a, &x, 1, &y1, 1, NULL), 0);
	assert_same(&y1, (float[]){9}, "step INT64_MIN");
	a = slice_of(1, (int64_t[]){5}, (int64_t[]){2}, (int64_t[]){0}, (int64_t[]){1});
	cr_assert_eq(enpu_k_slice(&a, &x, 1, &y0, 1, NULL), 0);

	fill(&x2, (float[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
	a = slice_of(2, (int64_t[]){-1, 3}, (int64_t[]){0, -5}, (int64_t[]){0, 1},
		     (int64_t[]){-1, -2});
	cr_assert_eq(enpu_k_slice(&a, &x2, 1, &y2, 1, NULL), 0);
	assert_same(&y2, (float[]){11, 9, 7, 5}, "2-D, both reversed");
}

/* pad and slice split output rows over threads: the bytes do not depend on
 * the thread count. */
Test(move_v2, move_threads)
{
	enpu_view x = mkrand(SHP(3, 40, 300));
	enpu_view p1 = mk(SHP(4, 43, 301)), p3 = mk(SHP(4, 43, 301));
	enpu_view s1 = mk(SHP(3, 14, 100)), s3 = mk(SHP(3, 14, 100));
	enpu_par *par = enpu_par_create(3);
	enpu_attrs a;

	cr_assert_not_null(par);
	a = pads_of(6, (int64_t[]){1, -1, 2, 0, 4, -1}, 1, 0);
	cr_assert_eq(enpu_k_pad(&a, &x, 1, &p1, 1, NULL), 0);
	cr_assert_eq(enpu_k_pad(&a, &x, 1, &p3, 1, par), 0);
	cr_assert(memcmp(p1.data, p3.data, nel(&p1.shape) * 4) == 0, "pad: 1 vs 3 threads");
	a = slice_of(2, (int64_t[]){-1, 1}, (int64_t[]){0, 300}, (int64_t[]){1, 2},
		     (int64_t[]){-3, 3});
	cr_assert_eq(enpu_k_slice(&a, &x, 1, &s1, 1, NULL), 0);
	cr_assert_eq(enpu_k_slice(&a, &x, 1, &s3, 1, par), 0);
	cr_assert(memcmp(s1.data, s3.data, nel(&s1.shape) * 4) == 0, "slice: 1 vs 3 threads");
	cr_expect_eq(fbits(s1.data[0]), fbits(x.data[39 * 300 + 1]), "first element");
	enpu_par_destroy(par);
}

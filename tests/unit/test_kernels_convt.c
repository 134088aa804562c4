/* test_kernels_convt.c: spec v2's conv_transpose2d and resize kernels
 * (common/run/kernels_convt.c) against hand-worked values: the skipped
 * zero-insertion taps, output_padding and bias, groups; the four nearest
 * modes on ties, the linear weights and edges, scales against sizes, NaN
 * through a zero weight. Output shapes are given by hand (no shape rule). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kernels.h"

#define MAX_VIEWS 64
static float *bufs[MAX_VIEWS];
static int n_bufs;

static void release(void)
{
	while (n_bufs > 0)
		free(bufs[--n_bufs]);
}

TestSuite(convt, .fini = release);
TestSuite(resize, .fini = release);

/* A zeroed 4-D view (every tensor here is NCHW), freed by the suite. */
static enpu_view v4(int64_t n, int64_t c, int64_t h, int64_t w)
{
	enpu_view v;

	memset(&v, 0, sizeof(v));
	v.shape.ndim = 4;
	v.shape.dim[0] = n, v.shape.dim[1] = c, v.shape.dim[2] = h, v.shape.dim[3] = w;
	v.data = calloc((size_t)(n * c * h * w) + 1, sizeof(float));
	cr_assert_not_null(v.data);
	cr_assert_lt(n_bufs, MAX_VIEWS);
	bufs[n_bufs++] = v.data;
	return v;
}

static void put(enpu_view *v, const float *vals, size_t n)
{
	memcpy(v->data, vals, n * sizeof(float));
}

#define PUT(v, ...) put(&(v), (float[]){__VA_ARGS__}, \
			sizeof((float[]){__VA_ARGS__}) / sizeof(float))

/* the attributes the op table's defaults give conv_transpose2d and resize */
static enpu_attrs defaults(enpu_opid id)
{
	enpu_attrs a;

	enpu_attrs_defaults(enpu_op_by_id(id), &a);
	return a;
}

static void same(const enpu_view *got, const float *want, size_t n, const char *what)
{
	for (size_t i = 0; i < n; i++)
		cr_assert(memcmp(&got->data[i], &want[i], sizeof(float)) == 0 ||
			  (isnan(got->data[i]) && isnan(want[i])),
			  "%s[%zu]: got %a, want %a", what, i, (double)got->data[i], (double)want[i]);
}

/* Stride 2, 2x2 kernel: every input pixel spreads its own 2x2 block; the
 * taps between pixels are skipped (an infinite weight meets no 0.0f:
 * the other outputs stay finite); output_padding adds a row and a column
 * that hold the bias alone. */
Test(convt, stride2_outpad_bias_inf)
{
	enpu_attrs a = defaults(ENPU_OP_CONV_TRANSPOSE2D);
	enpu_view in[3] = {v4(1, 1, 2, 2), v4(1, 1, 2, 2), v4(1, 1, 1, 1)};
	enpu_view y = v4(1, 1, 4, 4), yp = v4(1, 1, 5, 5);
	float want[16], wantp[25];

	PUT(in[0], 1, 2, 3, 4);
	PUT(in[1], 1, 10, 100, 1000);
	in[2].shape.ndim = 1;
	in[2].data[0] = 0.5f;
	a.strides[0] = a.strides[1] = 2;
	cr_assert_eq(enpu_k_conv_transpose2d(&a, in, 2, &y, 1, NULL), 0);
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++)
			want[i * 4 + j] = in[0].data[(i / 2) * 2 + j / 2] * in[1].data[(i % 2) * 2 + j % 2];
	same(&y, want, 16, "stride 2");

	a.output_padding[0] = a.output_padding[1] = 1;
	cr_assert_eq(enpu_k_conv_transpose2d(&a, in, 3, &yp, 1, NULL), 0);
	for (int i = 0; i < 5; i++)
		for (int j = 0; j < 5; j++)
			wantp[i * 5 + j] = i < 4 && j < 4 ? want[i * 4 + j] + 0.5f : 0.5f;
	same(&yp, wantp, 25, "output_padding and bias");

	a.output_padding[0] = a.output_padding[1] = 0;
	in[1].data[0] = INFINITY;
	cr_assert_eq(enpu_k_conv_transpose2d(&a, in, 2, &y, 1, NULL), 0);
	for (int i = 0; i < 16; i++)
		if (i / 4 % 2 == 0 && i % 2 == 0)
			cr_assert(isinf(y.data[i]) && y.data[i] > 0, "tap (0,0) at %d: %a", i,
				  (double)y.data[i]);
		else
			cr_assert(isfinite(y.data[i]), "skipped tap made %d %a", i, (double)y.data[i]);
}

/* group 2: each output channel reads its own input channel only */
Test(convt, group)
{
	enpu_attrs a = defaults(ENPU_OP_CONV_TRANSPOSE2D);
	enpu_view in[2] = {v4(1, 2, 1, 1), v4(2, 1, 1, 1)};
	enpu_view y = v4(1, 2, 1, 1);

	PUT(in[0], 2, 3);
	PUT(in[1], 5, 7);
	a.group = 2;
	cr_assert_eq(enpu_k_conv_transpose2d(&a, in, 2, &y, 1, NULL), 0);
	same(&y, (float[]){10, 21}, 2, "group");
}

static enpu_attrs resize_attrs(int mode, int coord, int nearest, float sh, float sw)
{
	enpu_attrs a = defaults(ENPU_OP_RESIZE);

	a.resize_mode = mode;
	a.coord_mode = coord;
	a.nearest_mode = nearest;
	a.scales[0] = sh;
	a.scales[1] = sw;
	return a;
}

/* nearest on the ties of asymmetric x2 (x_original 0.5, 1.5, ...): the
 * four nearest modes; the last output clamps to the edge */
Test(resize, nearest_modes)
{
	enpu_view x = v4(1, 1, 1, 4), y = v4(1, 1, 1, 8);
	static const float want[4][8] = {
		{10, 10, 20, 20, 30, 30, 40, 40},   /* round_prefer_floor */
		{10, 20, 20, 30, 30, 40, 40, 40},   /* round_prefer_ceil */
		{10, 10, 20, 20, 30, 30, 40, 40},   /* floor */
		{10, 20, 20, 30, 30, 40, 40, 40},   /* ceil */
	};

	PUT(x, 10, 20, 30, 40);
	for (int m = 0; m < 4; m++) {
		enpu_attrs a = resize_attrs(0, 1, m, 1.0f, 2.0f);

		cr_assert_eq(enpu_k_resize(&a, &x, 1, &y, 1, NULL), 0);
		same(&y, want[m], 8, "nearest mode");
	}
	/* half_pixel x3: x_original (o + 0.5)/3 - 0.5; o = 3 is 2/3: floor 0, else 1 */
	enpu_view y12 = v4(1, 1, 1, 12);
	enpu_attrs a = resize_attrs(0, 0, 2, 1.0f, 3.0f);
	cr_assert_eq(enpu_k_resize(&a, &x, 1, &y12, 1, NULL), 0);
	cr_assert_eq(y12.data[3], 10.0f, "floor");
	a.nearest_mode = 0;
	cr_assert_eq(enpu_k_resize(&a, &x, 1, &y12, 1, NULL), 0);
	cr_assert_eq(y12.data[3], 20.0f, "round_prefer_floor");
}

/* linear half_pixel x2 on 2x2: weights 0.75/0.25 (exact), edges clamp;
 * sizes give the same as scales; a NaN tap spreads even at weight 0 */
Test(resize, linear)
{
	enpu_view x = v4(1, 1, 2, 2), y = v4(1, 1, 4, 4);
	enpu_attrs a = resize_attrs(1, 0, 0, 2.0f, 2.0f);
	const float want[16] = {0, 2, 6, 8, 4, 6, 10, 12, 12, 14, 18, 20, 16, 18, 22, 24};

	PUT(x, 0, 8, 16, 24);
	cr_assert_eq(enpu_k_resize(&a, &x, 1, &y, 1, NULL), 0);
	same(&y, want, 16, "linear half_pixel");
	a.scales[0] = a.scales[1] = NAN;
	a.sizes.n = 2;
	a.sizes.v[0] = a.sizes.v[1] = 4;
	cr_assert_eq(enpu_k_resize(&a, &x, 1, &y, 1, NULL), 0);
	same(&y, want, 16, "linear half_pixel by sizes");

	/* asymmetric x2: output 0 sits on input 0 (weights 1, 0), yet the
	 * NaN at input 1 makes it NaN: fmaf(0, NaN, acc) */
	a = resize_attrs(1, 1, 0, 1.0f, 2.0f);
	enpu_view r = v4(1, 1, 1, 2), ry = v4(1, 1, 1, 4);

	PUT(r, 1, NAN);
	cr_assert_eq(enpu_k_resize(&a, &r, 1, &ry, 1, NULL), 0);
	for (int i = 0; i < 4; i++)
		cr_assert(isnan(ry.data[i]), "output %d: %a", i, (double)ry.data[i]);
}

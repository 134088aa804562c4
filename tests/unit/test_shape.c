/* test_shape.c: the ops' shape rules (common/shape.c): every rule, its
 * normalization of attributes, and its error cases. */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include "ops.h"
#include "shape.h"

static enpu_shape sh(int n, ...)
{
	enpu_shape s;
	va_list ap;

	memset(&s, 0, sizeof(s));
	s.ndim = n;
	va_start(ap, n);
	for (int i = 0; i < n; i++)
		s.dim[i] = va_arg(ap, long long);
	va_end(ap);
	return s;
}

#define S(...) sh(__VA_ARGS__)

static enpu_attrs defaults(enpu_opid id)
{
	enpu_attrs a;

	enpu_attrs_defaults(enpu_op_by_id(id), &a);
	return a;
}

static void expect_shape(const enpu_shape *got, enpu_shape want)
{
	cr_assert_eq(got->ndim, want.ndim, "rank %d, want %d", got->ndim, want.ndim);
	for (int i = 0; i < want.ndim; i++)
		cr_assert_eq(got->dim[i], want.dim[i], "dim %d: %lld, want %lld", i,
			     (long long)got->dim[i], (long long)want.dim[i]);
}

/* Run a rule; want_ok 0 expects failure with `substr` in why. */
static enpu_shape run(enpu_shape_fn fn, enpu_attrs *a, int n, const enpu_shape *in,
		      int want_ok, const char *substr)
{
	enpu_shape out;
	char why[512] = "";
	int r;

	memset(&out, 0, sizeof(out));
	r = fn(a, in, n, &out, 1, why, sizeof(why));
	if (want_ok) {
		cr_assert_eq(r, 0, "rule failed: %s", why);
	} else {
		cr_assert_eq(r, -1, "rule accepted a bad case");
		cr_assert(why[0], "no reason given");
		if (substr)
			cr_assert(strstr(why, substr), "why '%s' lacks '%s'", why, substr);
	}
	return out;
}

Test(shape, matmul)
{
	enpu_attrs a = defaults(ENPU_OP_MATMUL);
	enpu_shape in[2], o;

	in[0] = S(2, 1, 8); in[1] = S(2, 8, 16);
	o = run(enpu_s_matmul, &a, 2, in, 1, NULL);
	expect_shape(&o, S(2, 1, 16));
	/* 1-D promotion and removal */
	in[0] = S(1, 8); in[1] = S(2, 8, 4);
	o = run(enpu_s_matmul, &a, 2, in, 1, NULL);
	expect_shape(&o, S(1, 4));
	in[0] = S(2, 3, 8); in[1] = S(1, 8);
	o = run(enpu_s_matmul, &a, 2, in, 1, NULL);
	expect_shape(&o, S(1, 3));
	in[0] = S(1, 8); in[1] = S(1, 8);
	o = run(enpu_s_matmul, &a, 2, in, 1, NULL);
	expect_shape(&o, S(0));
	/* batch broadcast */
	in[0] = S(4, 2, 1, 3, 5); in[1] = S(3, 7, 5, 6);
	o = run(enpu_s_matmul, &a, 2, in, 1, NULL);
	expect_shape(&o, S(4, 2, 7, 3, 6));
	in[0] = S(3, 2, 3, 5); in[1] = S(2, 5, 6);
	o = run(enpu_s_matmul, &a, 2, in, 1, NULL);
	expect_shape(&o, S(3, 2, 3, 6));
	/* errors */
	in[0] = S(2, 1, 8); in[1] = S(2, 16, 4);
	run(enpu_s_matmul, &a, 2, in, 0, "inner dimensions differ");
	in[0] = S(3, 2, 3, 5); in[1] = S(3, 3, 5, 6);
	run(enpu_s_matmul, &a, 2, in, 0, "batch");
	in[0] = S(0); in[1] = S(1, 3);
	run(enpu_s_matmul, &a, 2, in, 0, "scalar");
	run(enpu_s_matmul, &a, 1, in, 0, "expects 2 inputs");
}

Test(shape, gemm)
{
	enpu_attrs a = defaults(ENPU_OP_GEMM);
	enpu_shape in[3], o;

	cr_assert_float_eq(a.alpha, 1.0f, 0);
	in[0] = S(2, 3, 4); in[1] = S(2, 4, 5);
	o = run(enpu_s_gemm, &a, 2, in, 1, NULL);
	expect_shape(&o, S(2, 3, 5));
	a.trans_a = 1; a.trans_b = 1;
	in[0] = S(2, 4, 3); in[1] = S(2, 5, 4); in[2] = S(1, 5);
	o = run(enpu_s_gemm, &a, 3, in, 1, NULL);
	expect_shape(&o, S(2, 3, 5));
	in[2] = S(2, 3, 1);
	run(enpu_s_gemm, &a, 3, in, 1, NULL);
	in[2] = S(0);
	run(enpu_s_gemm, &a, 3, in, 1, NULL);
	in[2] = S(2, 3, 5);
	run(enpu_s_gemm, &a, 3, in, 1, NULL);
	in[2] = S(1, 3);
	run(enpu_s_gemm, &a, 3, in, 0, "does not broadcast");
	in[2] = S(3, 1, 3, 5);
	run(enpu_s_gemm, &a, 3, in, 0, "does not broadcast");
	a.trans_a = 0;
	run(enpu_s_gemm, &a, 2, in, 0, "inner dimensions differ");
	in[0] = S(3, 1, 3, 4);
	run(enpu_s_gemm, &a, 2, in, 0, "2-D");
}

Test(shape, broadcast)
{
	enpu_attrs a = defaults(ENPU_OP_ADD);
	enpu_shape in[2], o;
	char why[256];

	in[0] = S(2, 1, 16); in[1] = S(1, 16);
	o = run(enpu_s_broadcast, &a, 2, in, 1, NULL);
	expect_shape(&o, S(2, 1, 16));
	in[0] = S(3, 8, 1, 6); in[1] = S(3, 7, 1, 5);
	run(enpu_s_broadcast, &a, 2, in, 0, "do not broadcast");
	in[0] = S(4, 8, 1, 6, 1); in[1] = S(3, 7, 1, 5);
	o = run(enpu_s_broadcast, &a, 2, in, 1, NULL);
	expect_shape(&o, S(4, 8, 7, 6, 5));
	in[0] = S(0); in[1] = S(2, 2, 3);
	o = run(enpu_s_broadcast, &a, 2, in, 1, NULL);
	expect_shape(&o, S(2, 2, 3));
	in[0] = S(1, 3); in[1] = S(1, 4);
	run(enpu_s_broadcast, &a, 2, in, 0, "(3,) and (4,)");
	/* exported helper */
	in[0] = S(2, 5, 1); in[1] = S(2, 1, 7);
	cr_assert_eq(enpu_broadcast_shapes(&in[0], &in[1], &o, why, sizeof(why)), 0);
	expect_shape(&o, S(2, 5, 7));
	in[1] = S(2, 4, 7);
	cr_assert_eq(enpu_broadcast_shapes(&in[0], &in[1], &o, why, sizeof(why)), -1);
}

Test(shape, unary)
{
	enpu_attrs a = defaults(ENPU_OP_CLIP);
	enpu_shape in[1], o;

	in[0] = S(3, 2, 3, 4);
	o = run(enpu_s_unary, &a, 1, in, 1, NULL);
	expect_shape(&o, S(3, 2, 3, 4));
	a.min = 2; a.max = 1;
	run(enpu_s_unary, &a, 1, in, 0, "greater than max");
	a = defaults(ENPU_OP_RELU);
	in[0] = S(0);
	o = run(enpu_s_unary, &a, 1, in, 1, NULL);
	expect_shape(&o, S(0));
	run(enpu_s_unary, &a, 2, in, 0, "expects 1 input");
}

Test(shape, softmax)
{
	enpu_attrs a = defaults(ENPU_OP_SOFTMAX);
	enpu_shape in[1], o;

	in[0] = S(3, 2, 3, 4);
	o = run(enpu_s_softmax, &a, 1, in, 1, NULL);
	expect_shape(&o, S(3, 2, 3, 4));
	cr_assert_eq(a.axis, 2, "axis -1 normalized to 2, got %d", a.axis);
	run(enpu_s_softmax, &a, 1, in, 1, NULL);   /* idempotent */
	cr_assert_eq(a.axis, 2);
	a.axis = -3;
	run(enpu_s_softmax, &a, 1, in, 1, NULL);
	cr_assert_eq(a.axis, 0);
	a.axis = 3;
	run(enpu_s_softmax, &a, 1, in, 0, "out of range");
	a.axis = -4;
	run(enpu_s_softmax, &a, 1, in, 0, "out of range");
	in[0] = S(0);
	a.axis = -1;
	run(enpu_s_softmax, &a, 1, in, 0, "scalar");
}

Test(shape, conv2d)
{
	enpu_attrs a = defaults(ENPU_OP_CONV2D);
	enpu_shape in[3], o;

	cr_assert_eq(a.strides[0], 1);
	cr_assert_eq(a.group, 1);
	in[0] = S(4, 1, 3, 8, 8); in[1] = S(4, 4, 3, 3, 3); in[2] = S(1, 4);
	o = run(enpu_s_conv2d, &a, 3, in, 1, NULL);
	expect_shape(&o, S(4, 1, 4, 6, 6));
	a.pads[0] = a.pads[1] = a.pads[2] = a.pads[3] = 1;
	o = run(enpu_s_conv2d, &a, 2, in, 1, NULL);
	expect_shape(&o, S(4, 1, 4, 8, 8));
	a.strides[0] = 2; a.strides[1] = 3;
	o = run(enpu_s_conv2d, &a, 2, in, 1, NULL);
	expect_shape(&o, S(4, 1, 4, 4, 3));   /* floor(7/2)+1, floor(7/3)+1 */
	a = defaults(ENPU_OP_CONV2D);
	a.dilations[0] = a.dilations[1] = 2;
	o = run(enpu_s_conv2d, &a, 2, in, 1, NULL);
	expect_shape(&o, S(4, 1, 4, 4, 4));   /* extent 5 */
	/* asymmetric pads t, l, b, r: the height gets t + b, the width l + r */
	a = defaults(ENPU_OP_CONV2D);
	a.pads[0] = 2; a.pads[1] = 0; a.pads[2] = 0; a.pads[3] = 1;
	o = run(enpu_s_conv2d, &a, 2, in, 1, NULL);
	expect_shape(&o, S(4, 1, 4, 8, 7));   /* 8+2+0-3+1, 8+0+1-3+1 */
	a.pads[0] = 0; a.pads[1] = 1; a.pads[2] = 2; a.pads[3] = 0;
	o = run(enpu_s_conv2d, &a, 2, in, 1, NULL);
	expect_shape(&o, S(4, 1, 4, 8, 7));
	/* groups */
	a = defaults(ENPU_OP_CONV2D);
	a.group = 2;
	in[0] = S(4, 1, 4, 5, 5); in[1] = S(4, 6, 2, 1, 1);
	o = run(enpu_s_conv2d, &a, 2, in, 1, NULL);
	expect_shape(&o, S(4, 1, 6, 5, 5));
	in[1] = S(4, 6, 4, 1, 1);
	run(enpu_s_conv2d, &a, 2, in, 0, "input channels per group");
	in[1] = S(4, 5, 2, 1, 1);
	run(enpu_s_conv2d, &a, 2, in, 0, "output channels 5 are not divisible by group 2");
	a.group = 3;
	in[1] = S(4, 6, 1, 1, 1);
	run(enpu_s_conv2d, &a, 2, in, 0, "not divisible by group 3");
	a.group = 0;
	run(enpu_s_conv2d, &a, 2, in, 0, "group must be >= 1");
	/* bias, ranks, attrs, empty output */
	a = defaults(ENPU_OP_CONV2D);
	in[0] = S(4, 1, 3, 8, 8); in[1] = S(4, 4, 3, 3, 3); in[2] = S(1, 5);
	run(enpu_s_conv2d, &a, 3, in, 0, "bias");
	in[2] = S(2, 1, 4);
	run(enpu_s_conv2d, &a, 3, in, 0, "bias");
	in[0] = S(3, 3, 8, 8);
	run(enpu_s_conv2d, &a, 2, in, 0, "4-D");
	in[0] = S(4, 1, 3, 2, 8);
	run(enpu_s_conv2d, &a, 2, in, 0, "output would be empty");
	in[0] = S(4, 1, 3, 8, 8);
	a.strides[1] = 0;
	run(enpu_s_conv2d, &a, 2, in, 0, "strides");
	a = defaults(ENPU_OP_CONV2D);
	a.dilations[0] = 0;
	run(enpu_s_conv2d, &a, 2, in, 0, "dilations");
	a = defaults(ENPU_OP_CONV2D);
	a.pads[2] = -1;
	run(enpu_s_conv2d, &a, 2, in, 0, "pads");
	/* huge dims and dilation do not overflow */
	a = defaults(ENPU_OP_CONV2D);
	a.dilations[0] = 2147483647;
	in[1] = S(4, 4, 3, INT64_MAX / 2, 3);
	run(enpu_s_conv2d, &a, 2, in, 0, "overflow");
}

Test(shape, pool2d)
{
	enpu_attrs a = defaults(ENPU_OP_MAXPOOL2D);
	enpu_shape in[1], o;

	in[0] = S(4, 1, 3, 8, 8);
	run(enpu_s_pool2d, &a, 1, in, 0, "missing required attribute 'kernel'");
	a.kernel[0] = a.kernel[1] = 2;
	a.set |= 1u << 0;   /* kernel */
	o = run(enpu_s_pool2d, &a, 1, in, 1, NULL);
	expect_shape(&o, S(4, 1, 3, 4, 4));
	cr_assert_eq(a.strides[0], 2, "strides default to the kernel");
	cr_assert_eq(a.strides[1], 2);
	/* explicit strides are kept */
	a.strides[0] = a.strides[1] = 1;
	a.set |= 1u << 1;
	o = run(enpu_s_pool2d, &a, 1, in, 1, NULL);
	expect_shape(&o, S(4, 1, 3, 7, 7));
	/* pads: floor((8 + 1 + 1 - 3) / 2) + 1 = 4 */
	a = defaults(ENPU_OP_AVGPOOL2D);
	a.kernel[0] = a.kernel[1] = 3;
	a.set |= 1u << 0;
	a.strides[0] = a.strides[1] = 2;
	a.set |= 1u << 1;
	a.pads[0] = a.pads[1] = a.pads[2] = a.pads[3] = 1;
	o = run(enpu_s_pool2d, &a, 1, in, 1, NULL);
	expect_shape(&o, S(4, 1, 3, 4, 4));
	a.pads[3] = 3;
	run(enpu_s_pool2d, &a, 1, in, 0, "smaller than the kernel");
	a.pads[3] = -1;
	run(enpu_s_pool2d, &a, 1, in, 0, "pads");
	a.pads[3] = 0;
	a.kernel[1] = 0;
	run(enpu_s_pool2d, &a, 1, in, 0, "kernel must be >= 1");
	a.kernel[1] = 9;
	a.pads[1] = 0;
	in[0] = S(4, 1, 3, 8, 8);
	run(enpu_s_pool2d, &a, 1, in, 0, "output would be empty");
	a.kernel[1] = 3;
	a.strides[0] = 0;
	run(enpu_s_pool2d, &a, 1, in, 0, "strides");
	in[0] = S(3, 3, 8, 8);
	a.strides[0] = 1;
	run(enpu_s_pool2d, &a, 1, in, 0, "4-D");
}

Test(shape, global_avgpool)
{
	enpu_attrs a = defaults(ENPU_OP_GLOBAL_AVGPOOL);
	enpu_shape in[1], o;

	in[0] = S(4, 2, 5, 7, 9);
	o = run(enpu_s_global_avgpool, &a, 1, in, 1, NULL);
	expect_shape(&o, S(4, 2, 5, 1, 1));
	in[0] = S(2, 2, 5);
	run(enpu_s_global_avgpool, &a, 1, in, 0, "rank >= 3");
	/* spec v2: (N, C, L) and any number of spatial dims */
	in[0] = S(3, 2, 5, 7);
	o = run(enpu_s_global_avgpool, &a, 1, in, 1, NULL);
	expect_shape(&o, S(3, 2, 5, 1));
	in[0] = S(5, 2, 5, 7, 3, 4);
	o = run(enpu_s_global_avgpool, &a, 1, in, 1, NULL);
	expect_shape(&o, S(5, 2, 5, 1, 1, 1));
}

/* spec v2: ceil_mode (ONNX, PyTorch): the ceiling, less a last window that
 * would start in the end padding; maxpool2d's dilations. */
Test(shape, pool2d_ceil_dilations)
{
	enpu_attrs a = defaults(ENPU_OP_MAXPOOL2D);
	enpu_shape in[1], o;

	in[0] = S(4, 1, 1, 5, 6);
	a.kernel[0] = a.kernel[1] = 2;
	a.set |= 1u << 0;
	o = run(enpu_s_maxpool2d, &a, 1, in, 1, NULL);
	expect_shape(&o, S(4, 1, 1, 2, 3));
	a.ceil_mode = 1;   /* 5: ceil((5 - 2) / 2) + 1 = 3; 6: (6 - 2) / 2 + 1 = 3 */
	o = run(enpu_s_maxpool2d, &a, 1, in, 1, NULL);
	expect_shape(&o, S(4, 1, 1, 3, 3));
	/* 5 + pad 1: ceil((6 - 2) / 2) + 1 = 3, exact; pad 1 at the end of 6:
	 * ceil((7 - 2) / 2) + 1 = 4, but window 3 would start at 6 >= 6 + 0 */
	a.pads[2] = 1;
	a.pads[3] = 1;
	o = run(enpu_s_maxpool2d, &a, 1, in, 1, NULL);
	expect_shape(&o, S(4, 1, 1, 3, 3));
	/* dilations: extent (3 - 1) * 2 + 1 = 5 over 5 and 6 */
	a = defaults(ENPU_OP_MAXPOOL2D);
	a.kernel[0] = a.kernel[1] = 3;
	a.strides[0] = a.strides[1] = 1;
	a.set |= 3u;
	a.dilations[0] = a.dilations[1] = 2;
	o = run(enpu_s_maxpool2d, &a, 1, in, 1, NULL);
	expect_shape(&o, S(4, 1, 1, 1, 2));
	a.dilations[1] = 0;
	run(enpu_s_maxpool2d, &a, 1, in, 0, "dilations must be >= 1");
	a.dilations[1] = 3;   /* extent 7 > 6 */
	run(enpu_s_maxpool2d, &a, 1, in, 0, "output would be empty");
	/* avgpool2d has no dilations (its fields stay 0): ceil_mode only */
	a = defaults(ENPU_OP_AVGPOOL2D);
	a.kernel[0] = a.kernel[1] = 2;
	a.set |= 1u << 0;
	a.ceil_mode = 1;
	o = run(enpu_s_pool2d, &a, 1, in, 1, NULL);
	expect_shape(&o, S(4, 1, 1, 3, 3));
}

Test(shape, conv1d_pool1d)
{
	enpu_attrs a = defaults(ENPU_OP_CONV1D);
	enpu_shape in[3], o;

	in[0] = S(3, 2, 6, 10);
	in[1] = S(3, 4, 6, 3);
	o = run(enpu_s_conv1d, &a, 2, in, 1, NULL);
	expect_shape(&o, S(3, 2, 4, 8));
	/* stride 2, pads [1, 2], dilation 2: (10 + 3 - 5) / 2 + 1 = 5 */
	a.strides[0] = 2;
	a.pads[0] = 1;
	a.pads[1] = 2;
	a.dilations[0] = 2;
	o = run(enpu_s_conv1d, &a, 2, in, 1, NULL);
	expect_shape(&o, S(3, 2, 4, 5));
	a.group = 2;   /* C 6 / 2 = 3 per group, w has 6 */
	run(enpu_s_conv1d, &a, 2, in, 0, "input channels per group");
	in[1] = S(3, 4, 3, 3);
	o = run(enpu_s_conv1d, &a, 2, in, 1, NULL);
	expect_shape(&o, S(3, 2, 4, 5));
	a.group = 4;
	run(enpu_s_conv1d, &a, 2, in, 0, "divisible by group 4");
	a.group = 2;
	in[1] = S(3, 4, 3, 11);
	run(enpu_s_conv1d, &a, 2, in, 0, "output would be empty");
	in[1] = S(3, 4, 3, 3);
	in[2] = S(1, 5);
	run(enpu_s_conv1d, &a, 3, in, 0, "bias");
	a.dilations[0] = 0;
	run(enpu_s_conv1d, &a, 2, in, 0, "dilations must be >= 1");
	a.dilations[0] = 1;
	in[0] = S(4, 2, 6, 1, 10);
	run(enpu_s_conv1d, &a, 2, in, 0, "3-D (N, C, L)");

	a = defaults(ENPU_OP_MAXPOOL1D);
	in[0] = S(3, 2, 3, 7);
	run(enpu_s_maxpool1d, &a, 1, in, 0, "missing required attribute 'kernel'");
	a.kernel[0] = 2;
	a.set |= 1u << 0;
	o = run(enpu_s_maxpool1d, &a, 1, in, 1, NULL);
	expect_shape(&o, S(3, 2, 3, 3));
	cr_assert_eq(a.strides[0], 2, "strides default to the kernel");
	a.ceil_mode = 1;
	o = run(enpu_s_maxpool1d, &a, 1, in, 1, NULL);
	expect_shape(&o, S(3, 2, 3, 4));
	a.pads[1] = 2;
	run(enpu_s_maxpool1d, &a, 1, in, 0, "smaller than the kernel");
	a.pads[1] = 0;
	a.dilations[0] = 0;
	run(enpu_s_maxpool1d, &a, 1, in, 0, "dilations must be >= 1");
	a = defaults(ENPU_OP_AVGPOOL1D);
	a.kernel[0] = 8;
	a.set |= 1u << 0;
	run(enpu_s_avgpool1d, &a, 1, in, 0, "output would be empty");
	a.kernel[0] = 3;
	a.strides[0] = 2;
	a.set |= 1u << 1;
	a.pads[0] = 1;
	a.ceil_mode = 1;   /* ceil((7 + 1 - 3) / 2) + 1 = 4; window 3 starts at 6 < 8 */
	o = run(enpu_s_avgpool1d, &a, 1, in, 1, NULL);
	expect_shape(&o, S(3, 2, 3, 4));
}

Test(shape, batchnorm)
{
	enpu_attrs a = defaults(ENPU_OP_BATCHNORM);
	enpu_shape in[5], o;

	cr_assert_float_eq(a.epsilon, 1e-5f, 1e-12f);
	in[0] = S(4, 2, 3, 4, 4);
	for (int i = 1; i < 5; i++)
		in[i] = S(1, 3);
	o = run(enpu_s_batchnorm, &a, 5, in, 1, NULL);
	expect_shape(&o, S(4, 2, 3, 4, 4));
	in[0] = S(2, 2, 3);
	run(enpu_s_batchnorm, &a, 5, in, 1, NULL);
	in[3] = S(1, 4);
	run(enpu_s_batchnorm, &a, 5, in, 0, "mean must be 1-D of size C = 3");
	in[3] = S(2, 1, 3);
	run(enpu_s_batchnorm, &a, 5, in, 0, "mean");
	in[3] = S(1, 3);
	in[0] = S(1, 3);
	run(enpu_s_batchnorm, &a, 5, in, 0, "rank >= 2");
	run(enpu_s_batchnorm, &a, 4, in, 0, "expects 5 inputs");
}

static void set_shape(enpu_attrs *a, int n, const int64_t *d)
{
	*a = defaults(ENPU_OP_RESHAPE);
	a->n_shape = n;
	for (int i = 0; i < n; i++)
		a->shape[i] = d[i];
	a->set |= 1u << 0;
}

Test(shape, reshape)
{
	enpu_attrs a;
	enpu_shape in[1], o;

	in[0] = S(3, 2, 3, 4);
	set_shape(&a, 2, (int64_t[]){6, 4});
	o = run(enpu_s_reshape, &a, 1, in, 1, NULL);
	expect_shape(&o, S(2, 6, 4));
	set_shape(&a, 3, (int64_t[]){0, -1, 2});
	o = run(enpu_s_reshape, &a, 1, in, 1, NULL);
	expect_shape(&o, S(3, 2, 6, 2));
	cr_assert_eq(a.shape[1], 6, "-1 resolved in place");
	cr_assert_eq(a.shape[0], 2, "0 resolved in place");
	o = run(enpu_s_reshape, &a, 1, in, 1, NULL);   /* idempotent */
	expect_shape(&o, S(3, 2, 6, 2));
	set_shape(&a, 1, (int64_t[]){-1});
	o = run(enpu_s_reshape, &a, 1, in, 1, NULL);
	expect_shape(&o, S(1, 24));
	/* errors */
	set_shape(&a, 2, (int64_t[]){5, 5});
	run(enpu_s_reshape, &a, 1, in, 0, "cannot reshape");
	set_shape(&a, 2, (int64_t[]){-1, -1});
	run(enpu_s_reshape, &a, 1, in, 0, "more than one -1");
	set_shape(&a, 2, (int64_t[]){5, -1});
	run(enpu_s_reshape, &a, 1, in, 0, "not a multiple");
	set_shape(&a, 2, (int64_t[]){-2, 12});
	run(enpu_s_reshape, &a, 1, in, 0, "invalid");
	set_shape(&a, 4, (int64_t[]){1, 1, 1, 0});
	run(enpu_s_reshape, &a, 1, in, 0, "copy");
	set_shape(&a, 3, (int64_t[]){INT64_MAX, INT64_MAX, 2});
	run(enpu_s_reshape, &a, 1, in, 0, "overflow");
	a = defaults(ENPU_OP_RESHAPE);
	run(enpu_s_reshape, &a, 1, in, 0, "missing required attribute 'shape'");
}

Test(shape, flatten)
{
	enpu_attrs a = defaults(ENPU_OP_FLATTEN);
	enpu_shape in[1], o;

	in[0] = S(4, 2, 3, 4, 5);
	o = run(enpu_s_flatten, &a, 1, in, 1, NULL);
	expect_shape(&o, S(2, 2, 60));
	a.axis = 0;
	o = run(enpu_s_flatten, &a, 1, in, 1, NULL);
	expect_shape(&o, S(2, 1, 120));
	a.axis = 4;
	o = run(enpu_s_flatten, &a, 1, in, 1, NULL);
	expect_shape(&o, S(2, 120, 1));
	a.axis = -1;
	o = run(enpu_s_flatten, &a, 1, in, 1, NULL);
	expect_shape(&o, S(2, 24, 5));
	cr_assert_eq(a.axis, 3);
	a.axis = 5;
	run(enpu_s_flatten, &a, 1, in, 0, "out of range");
	a.axis = -5;
	run(enpu_s_flatten, &a, 1, in, 0, "out of range");
	in[0] = S(3, INT64_MAX, 4, 1);
	a.axis = 0;
	run(enpu_s_flatten, &a, 1, in, 0, "overflow");
}

Test(shape, transpose)
{
	enpu_attrs a = defaults(ENPU_OP_TRANSPOSE);
	enpu_shape in[1], o;

	in[0] = S(3, 2, 3, 4);
	o = run(enpu_s_transpose, &a, 1, in, 1, NULL);
	expect_shape(&o, S(3, 4, 3, 2));
	cr_assert_eq(a.n_perm, 3, "absent perm stored as the reverse");
	cr_assert_eq(a.perm[0], 2);
	cr_assert_eq(a.perm[2], 0);
	o = run(enpu_s_transpose, &a, 1, in, 1, NULL);   /* idempotent */
	expect_shape(&o, S(3, 4, 3, 2));
	a.n_perm = 3; a.perm[0] = 1; a.perm[1] = 2; a.perm[2] = 0;
	o = run(enpu_s_transpose, &a, 1, in, 1, NULL);
	expect_shape(&o, S(3, 3, 4, 2));
	a.perm[2] = 1;
	run(enpu_s_transpose, &a, 1, in, 0, "permutation");
	a.perm[2] = 3;
	run(enpu_s_transpose, &a, 1, in, 0, "permutation");
	a.n_perm = 2;
	run(enpu_s_transpose, &a, 1, in, 0, "rank 3");
}

Test(shape, concat)
{
	enpu_attrs a = defaults(ENPU_OP_CONCAT);
	enpu_shape in[3], o;

	in[0] = S(3, 2, 3, 4); in[1] = S(3, 2, 5, 4); in[2] = S(3, 2, 1, 4);
	run(enpu_s_concat, &a, 3, in, 0, "missing required attribute 'axis'");
	a.axis = -2;
	a.set |= 1u << 0;
	o = run(enpu_s_concat, &a, 3, in, 1, NULL);
	expect_shape(&o, S(3, 2, 9, 4));
	cr_assert_eq(a.axis, 1);
	o = run(enpu_s_concat, &a, 1, in, 1, NULL);
	expect_shape(&o, S(3, 2, 3, 4));
	a.axis = 0;
	run(enpu_s_concat, &a, 3, in, 0, "only axis 0 may differ");
	a.axis = 3;
	run(enpu_s_concat, &a, 3, in, 0, "out of range");
	a.axis = 1;
	in[2] = S(2, 2, 1);
	run(enpu_s_concat, &a, 3, in, 0, "rank");
	in[0] = S(1, INT64_MAX); in[1] = S(1, 2);
	a.axis = 0;
	run(enpu_s_concat, &a, 2, in, 0, "overflow");
	run(enpu_s_concat, &a, 0, in, 0, "inputs");
}

/* spec v2 reductions (shape_reduce.c): axes absent = all, negative axes
 * made non-negative (and a rerun on them gives the same: idempotent),
 * keepdims 1 keeps 1s, 0 drops; duplicates and out-of-range axes fail. */
Test(shape, reduce)
{
	enpu_shape in[1] = {S(3, 2LL, 3LL, 4LL)}, o;
	enpu_attrs a = defaults(ENPU_OP_REDUCE_SUM);

	cr_assert_eq(a.keepdims, 1);
	cr_assert_eq(a.axes.n, 0);
	o = run(enpu_s_reduce, &a, 1, in, 1, NULL);
	expect_shape(&o, S(3, 1LL, 1LL, 1LL));
	a.keepdims = 0;
	o = run(enpu_s_reduce, &a, 1, in, 1, NULL);
	expect_shape(&o, S(0));
	a.axes.n = 2;
	a.axes.v[0] = -1;
	a.axes.v[1] = 0;
	o = run(enpu_s_reduce, &a, 1, in, 1, NULL);
	expect_shape(&o, S(1, 3LL));
	cr_assert_eq(a.axes.v[0], 2, "-1 normalized to 2");
	o = run(enpu_s_reduce, &a, 1, in, 1, NULL);
	expect_shape(&o, S(1, 3LL));
	a.keepdims = 1;
	o = run(enpu_s_reduce, &a, 1, in, 1, NULL);
	expect_shape(&o, S(3, 1LL, 3LL, 1LL));
	a.axes.v[1] = -1;
	run(enpu_s_reduce, &a, 1, in, 0, "axes[1] names dimension 2 a second time");
	a.axes.v[1] = 3;
	run(enpu_s_reduce, &a, 1, in, 0, "axes[1] is 3, out of range [-3, 2] for rank 3");
	a.axes.v[1] = INT64_MIN;
	run(enpu_s_reduce, &a, 1, in, 0, "out of range");
	a.axes.n = 0;
	in[0] = S(0);   /* a scalar reduces over nothing */
	o = run(enpu_s_reduce, &a, 1, in, 1, NULL);
	expect_shape(&o, S(0));
}

/* layer_norm: the output is x's shape; axis normalized; scale/bias
 * broadcast to x[axis:] (rank at most r - axis, each dim equal or 1). */
Test(shape, layer_norm)
{
	enpu_shape in[3] = {S(3, 2LL, 3LL, 4LL), S(2, 3LL, 4LL), S(1, 4LL)}, o;
	enpu_attrs a = defaults(ENPU_OP_LAYER_NORM);

	cr_assert_eq(a.axis, -1);
	cr_assert_float_eq(a.epsilon, 1e-5f, 0);
	run(enpu_s_layer_norm, &a, 3, in, 0, "scale (3, 4) does not broadcast to x's normalized dims (4,)");
	a.axis = -2;
	o = run(enpu_s_layer_norm, &a, 3, in, 1, NULL);
	expect_shape(&o, S(3, 2LL, 3LL, 4LL));
	cr_assert_eq(a.axis, 1);
	in[1] = S(2, 1LL, 4LL);   /* broadcast over the middle dim */
	run(enpu_s_layer_norm, &a, 2, in, 1, NULL);
	in[2] = S(3, 1LL, 1LL, 4LL);   /* leading 1s before the normalized dims */
	run(enpu_s_layer_norm, &a, 3, in, 1, NULL);
	in[2] = S(3, 2LL, 1LL, 4LL);
	run(enpu_s_layer_norm, &a, 3, in, 0, "bias (2, 1, 4) does not broadcast");
	in[2] = S(4, 1LL, 1LL, 1LL, 4LL);
	run(enpu_s_layer_norm, &a, 3, in, 0, "bias (1, 1, 1, 4) does not broadcast");
	run(enpu_s_layer_norm, &a, 1, in, 1, NULL);
	a.axis = 3;
	run(enpu_s_layer_norm, &a, 1, in, 0, "axis 3 is out of range [-3, 2] for rank 3");
	a.axis = 0;
	a.epsilon = -1.0f;
	run(enpu_s_layer_norm, &a, 1, in, 0, "epsilon must be >= 0");
	a.epsilon = 0.0f;
	in[0] = S(0);
	run(enpu_s_layer_norm, &a, 1, in, 0, "rank >= 1");
}

/* ---- spec v2 pad and slice at the int64 extremes ----------------------- */

#include "kernels.h"

/* Values where clamping, crops and overflow change: both int64 ends, one
 * inside them, around 0 and around the dim (5). */
static const int64_t xv[] = {INT64_MIN, INT64_MIN + 1, -(INT64_C(1) << 62), -7, -6, -5, -4, -1,
			     0, 1, 4, 5, 6, (INT64_C(1) << 62), INT64_MAX - 1, INT64_MAX};
#define NXV ((int)(sizeof(xv) / sizeof(xv[0])))

/* ONNX Slice's indices along a dim of n, in 128-bit arithmetic, as the
 * ONNX operator text (and onnxruntime) clamp: negative s and e get n
 * added; then s in [0, n] (k > 0) or [0, n - 1] (k < 0), e in [0, n] or
 * [-1, n - 1]. (Python's slice.indices differs in one place: a start
 * below -n with k < 0 becomes -1 there, 0 here.) Returns how many
 * indices (at most cap). */
static int ref_slice(int64_t s, int64_t e, int64_t k, int64_t n, int64_t *idx, int cap)
{
	__int128 S = s, E = e, hi = k > 0 ? n : n - 1, elo = k > 0 ? 0 : -1;
	int c = 0;

	S = S < 0 ? S + n : S;
	S = S < 0 ? 0 : S > hi ? hi : S;
	E = E < 0 ? E + n : E;
	E = E < elo ? elo : E > hi ? hi : E;
	for (__int128 i = S; (k > 0 ? i < E : i > E) && c < cap; i += k)
		idx[c++] = (int64_t)i;
	return c;
}

/* Every start, end and step of xv (step not 0) on a dim of 5: the slice
 * rule's size and the kernel's elements are ONNX's, and nothing
 * overflows (UBSan) or reads outside x (ASan) in `make SAN=1`. */
Test(shape, v2_slice_int64_sweep)
{
	float xd[5] = {10, 11, 12, 13, 14}, yd[5];
	enpu_shape x = {.ndim = 1, .dim = {5}};
	int checked = 0;

	for (int i = 0; i < NXV; i++)
		for (int j = 0; j < NXV; j++)
			for (int k = 0; k < NXV; k++) {
				enpu_attrs a;
				enpu_shape out;
				int64_t idx[5];
				char why[256];
				int n;

				if (xv[k] == 0)
					continue;
				memset(&a, 0, sizeof(a));
				a.starts.n = a.ends.n = a.steps.n = 1;
				a.starts.v[0] = xv[i];
				a.ends.v[0] = xv[j];
				a.steps.v[0] = xv[k];
				cr_assert_eq(enpu_s_slice(&a, &x, 1, &out, 1, why, sizeof(why)), 0, "%s", why);
				n = ref_slice(xv[i], xv[j], xv[k], 5, idx, 5);
				cr_assert_eq(out.dim[0], n, "slice(%lld, %lld, %lld): %lld elements, want %d",
					     (long long)xv[i], (long long)xv[j], (long long)xv[k],
					     (long long)out.dim[0], n);
				enpu_view in = {x, xd, ENPU_DT_F32}, o = {out, yd, ENPU_DT_F32};
				cr_assert_eq(enpu_k_slice(&a, &in, 1, &o, 1, NULL), 0);
				for (int t = 0; t < n; t++)
					cr_assert_eq(yd[t], xd[idx[t]], "slice(%lld, %lld, %lld)[%d]",
						     (long long)xv[i], (long long)xv[j],
						     (long long)xv[k], t);
				checked++;
			}
	cr_expect_eq(checked, NXV * NXV * (NXV - 1));
}

/* Every begin and end pad of xv, in each mode, on a dim of 5: the rule
 * refuses what crops too much, overflows or reflects too far, and
 * otherwise gives kept + pads elements, which the kernel fills as a
 * crop-then-np.pad reference does (where the result is small enough to
 * hold). */
Test(shape, v2_pad_int64_sweep)
{
	float xd[5] = {10, 11, 12, 13, 14}, yd[32];
	enpu_shape x = {.ndim = 1, .dim = {5}};

	for (int mode = 0; mode < 3; mode++)
		for (int i = 0; i < NXV; i++)
			for (int j = 0; j < NXV; j++) {
				int64_t b = xv[i], e = xv[j];
				__int128 kept = (__int128)5 + (b < 0 ? b : 0) + (e < 0 ? e : 0);
				__int128 size = kept + (b > 0 ? b : 0) + (e > 0 ? e : 0);
				int ok = kept >= 0 && size <= INT64_MAX &&
					 !(mode && kept == 0 && (b > 0 || e > 0)) &&
					 !(mode == 1 && ((b > 0 && b >= kept) || (e > 0 && e >= kept)));
				enpu_attrs a;
				enpu_shape out;
				char why[256];

				memset(&a, 0, sizeof(a));
				a.pad_pads.n = 2;
				a.pad_pads.v[0] = b;
				a.pad_pads.v[1] = e;
				a.pad_mode = mode;
				a.pad_value = -1.0f;
				int r = enpu_s_pad(&a, &x, 1, &out, 1, why, sizeof(why));
				cr_assert_eq(r == 0, ok, "pad(%lld, %lld) mode %d: rule %d (%s)",
					     (long long)b, (long long)e, mode, r, why);
				if (!ok)
					continue;
				cr_assert_eq((__int128)out.dim[0], size);
				if (size > 32)
					continue;
				enpu_view in = {x, xd, ENPU_DT_F32}, o = {out, yd, ENPU_DT_F32};
				cr_assert_eq(enpu_k_pad(&a, &in, 1, &o, 1, NULL), 0);
				int64_t lo = b < 0 ? -b : 0, pb = b > 0 ? b : 0;
				for (int64_t t = 0; t < out.dim[0]; t++) {
					int64_t q = t - pb;   /* index into the kept part */
					float want;

					if (q >= 0 && q < kept)
						want = xd[lo + q];
					else if (mode == 0)
						want = -1.0f;
					else if (mode == 2)
						want = xd[lo + (q < 0 ? 0 : (int64_t)kept - 1)];
					else   /* reflect: bounce off the ends once (pad < kept) */
						want = xd[lo + (q < 0 ? -q : 2 * ((int64_t)kept - 1) - q)];
					cr_assert_eq(yd[t], want, "pad(%lld, %lld) mode %d [%lld]",
						     (long long)b, (long long)e, mode, (long long)t);
				}
			}
}

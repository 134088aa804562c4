/* shape_q.c: shape rules of spec v3's quantised ops (ONNX opset 13
 * QuantizeLinear, DequantizeLinear, MatMulInteger, ConvInteger,
 * QLinearMatMul, QLinearConv; ONNX Runtime's com.microsoft QLinearAdd,
 * QLinearMul, QLinearGlobalAveragePool, QLinearAveragePool, QLinearConcat). The GEMM-like ops take matmul's and
 * conv2d's rules for their data inputs; a scale or zero point is
 * per-tensor (one element: a scalar or a 1-D [1]) or, where ONNX allows
 * it, one per channel (1-D [C]). The dtypes are the op row's type rule
 * (ops.c), checked before. */
#include <string.h>
#include "shape.h"

/* elements of s, or -1 when s is neither a scalar nor 1-D */
static int64_t len01(const enpu_shape *s)
{
	if (s->ndim == 0)
		return 1;
	return s->ndim == 1 ? s->dim[0] : -1;
}

/* in[k] (what) is one element, or when per > 0 also 1-D [per]. */
static int param(const enpu_shape *in, int k, const char *what, int64_t per, char *why,
		 size_t whylen)
{
	int64_t n = len01(&in[k]);
	char sh[96];

	if (n == 1 || (per > 0 && n == per && in[k].ndim == 1))
		return 0;
	enpu_shape_str(&in[k], sh, sizeof(sh));
	if (per > 0)
		return enpu_shape_why(why, whylen,
				      "%s (input %d) must be a scalar or 1-D of size 1 or %lld, got %s",
				      what, k + 1, (long long)per, sh);
	return enpu_shape_why(why, whylen, "%s (input %d) must be a scalar or 1-D of size 1, got %s",
			      what, k + 1, sh);
}

/* zero point k has the shape of its scale s */
static int same_as(const enpu_shape *in, int n_in, int k, int s, const char *what, char *why,
		   size_t whylen)
{
	char a[96], b[96];

	if (k >= n_in || len01(&in[k]) == len01(&in[s]))
		return 0;
	return enpu_shape_why(why, whylen, "%s (input %d) %s must have the shape of its scale %s",
			      what, k + 1, enpu_shape_str(&in[k], a, sizeof(a)),
			      enpu_shape_str(&in[s], b, sizeof(b)));
}

/* quantize_linear and dequantize_linear: x, scale, [zero_point]; a 1-D
 * scale of size > 1 runs along `axis` (normalized here). */
ENPU_SHAPE_RULE(quantize_linear)
{
	const enpu_shape *x = &in[0];
	int64_t c;

	(void)n_out;
	if (n_in < 2 || n_in > 3)
		return enpu_shape_why(why, whylen, "takes 2 or 3 inputs, got %d", n_in);
	/* a per-tensor scale ignores axis (ONNX) */
	if (len01(&in[1]) == 1 && in[1].ndim <= 1) {
		out[0] = *x;
		return same_as(in, n_in, 2, 1, "zero point", why, whylen);
	}
	if (a->axis < -x->ndim || a->axis >= x->ndim)
		return enpu_shape_why(why, whylen, "axis %d is out of range for x of rank %d",
				      a->axis, x->ndim);
	if (a->axis < 0)
		a->axis += x->ndim;
	c = x->dim[a->axis];
	if (param(in, 1, "scale", c, why, whylen) || same_as(in, n_in, 2, 1, "zero point", why, whylen))
		return -1;
	out[0] = *x;
	return 0;
}

/* matmul_integer: a, b as matmul; a's zero point per tensor, b's per
 * tensor or per column (1-D [N], b 2-D or more). */
ENPU_SHAPE_RULE(matmul_integer)
{
	enpu_shape ab[2];
	int64_t ncol;

	(void)n_out;
	if (n_in < 2 || n_in > 4)
		return enpu_shape_why(why, whylen, "takes 2 to 4 inputs, got %d", n_in);
	ab[0] = in[0];
	ab[1] = in[1];
	if (enpu_s_matmul(a, ab, 2, out, 1, why, whylen))
		return -1;
	ncol = in[1].ndim >= 2 ? in[1].dim[in[1].ndim - 1] : 0;
	if ((n_in > 2 && param(in, 2, "a_zero_point", 0, why, whylen)) ||
	    (n_in > 3 && param(in, 3, "b_zero_point", ncol, why, whylen)))
		return -1;
	return 0;
}

/* conv_integer: x, w as conv2d (no bias); x's zero point per tensor, w's
 * per tensor or per output channel (1-D [M]). */
ENPU_SHAPE_RULE(conv_integer)
{
	enpu_shape xw[2];

	(void)n_out;
	if (n_in < 2 || n_in > 4)
		return enpu_shape_why(why, whylen, "takes 2 to 4 inputs, got %d", n_in);
	xw[0] = in[0];
	xw[1] = in[1];
	if (enpu_s_conv2d(a, xw, 2, out, 1, why, whylen))
		return -1;
	if ((n_in > 2 && param(in, 2, "x_zero_point", 0, why, whylen)) ||
	    (n_in > 3 && param(in, 3, "w_zero_point", in[1].dim[0], why, whylen)))
		return -1;
	return 0;
}

/* a_scale, a_zp per tensor; b_scale, b_zp per tensor or per `per`;
 * y_scale, y_zp per tensor */
static int qlinear_params(const enpu_shape *in, int n_in, int64_t per, char *why, size_t whylen)
{
	if (param(in, 1, "a_scale", 0, why, whylen) || same_as(in, n_in, 2, 1, "a_zero_point", why, whylen) ||
	    param(in, 4, "b_scale", per, why, whylen) || same_as(in, n_in, 5, 4, "b_zero_point", why, whylen) ||
	    param(in, 6, "y_scale", 0, why, whylen) || same_as(in, n_in, 7, 6, "y_zero_point", why, whylen))
		return -1;
	return 0;
}

/* qlinear_matmul: a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp; a and
 * b as matmul; b's scale and zero point per tensor or per column. */
ENPU_SHAPE_RULE(qlinear_matmul)
{
	enpu_shape ab[2];

	(void)n_out;
	if (n_in != 8)
		return enpu_shape_why(why, whylen, "takes 8 inputs, got %d", n_in);
	ab[0] = in[0];
	ab[1] = in[3];
	if (enpu_s_matmul(a, ab, 2, out, 1, why, whylen))
		return -1;
	return qlinear_params(in, n_in, in[3].ndim >= 2 ? in[3].dim[in[3].ndim - 1] : 0, why, whylen);
}

/* qlinear_conv: x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, [bias
 * int32 [M]]; x, w (and bias) as conv2d; w's scale and zero point per
 * tensor or per output channel. */
ENPU_SHAPE_RULE(qlinear_conv)
{
	enpu_shape xwb[3];

	(void)n_out;
	if (n_in < 8 || n_in > 9)
		return enpu_shape_why(why, whylen, "takes 8 or 9 inputs, got %d", n_in);
	xwb[0] = in[0];
	xwb[1] = in[3];
	if (n_in == 9)
		xwb[2] = in[8];
	if (enpu_s_conv2d(a, xwb, n_in == 9 ? 3 : 2, out, 1, why, whylen))
		return -1;
	return qlinear_params(in, n_in, in[3].dim[0], why, whylen);
}

/* scales and zero points k, k + 1 (what: "x"), each per tensor */
static int tensor_params(const enpu_shape *in, int n_in, int k, const char *scale,
			 const char *zp, char *why, size_t whylen)
{
	if (param(in, k, scale, 0, why, whylen) || same_as(in, n_in, k + 1, k, zp, why, whylen))
		return -1;
	return 0;
}

/* qlinear_add, qlinear_mul: a, a_scale, a_zp, b, b_scale, b_zp, y_scale,
 * y_zp; a and b broadcast as add's (NumPy); every scale and zero point
 * per tensor. */
ENPU_SHAPE_RULE(qlinear_binary)
{
	enpu_shape ab[2];

	(void)n_out;
	if (n_in != 8)
		return enpu_shape_why(why, whylen, "takes 8 inputs, got %d", n_in);
	ab[0] = in[0];
	ab[1] = in[3];
	if (enpu_s_broadcast(a, ab, 2, out, 1, why, whylen) ||
	    tensor_params(in, n_in, 1, "a_scale", "a_zero_point", why, whylen) ||
	    tensor_params(in, n_in, 4, "b_scale", "b_zero_point", why, whylen) ||
	    tensor_params(in, n_in, 6, "y_scale", "y_zero_point", why, whylen))
		return -1;
	return 0;
}

/* qlinear_global_avgpool: x (NCHW), x_scale, x_zp, y_scale, y_zp, per
 * tensor; the output [N, C, 1, 1] as global_avgpool's */
ENPU_SHAPE_RULE(qlinear_global_avgpool)
{
	(void)n_out;
	if (n_in != 5)
		return enpu_shape_why(why, whylen, "takes 5 inputs, got %d", n_in);
	if (in[0].ndim != 4)
		return enpu_shape_why(why, whylen, "x must be 4-D (NCHW), got %d dims", in[0].ndim);
	if (enpu_s_global_avgpool(a, in, 1, out, 1, why, whylen) ||
	    tensor_params(in, n_in, 1, "x_scale", "x_zero_point", why, whylen) ||
	    tensor_params(in, n_in, 3, "y_scale", "y_zero_point", why, whylen))
		return -1;
	return 0;
}

/* qlinear_avgpool: x as avgpool2d's (its attributes), then x_scale, x_zp,
 * y_scale, y_zp per tensor */
ENPU_SHAPE_RULE(qlinear_avgpool)
{
	(void)n_out;
	if (n_in != 5)
		return enpu_shape_why(why, whylen, "takes 5 inputs, got %d", n_in);
	if (enpu_s_pool2d(a, in, 1, out, 1, why, whylen) ||
	    tensor_params(in, n_in, 1, "x_scale", "x_zero_point", why, whylen) ||
	    tensor_params(in, n_in, 3, "y_scale", "y_zero_point", why, whylen))
		return -1;
	return 0;
}

/* qlinear_concat: y_scale, y_zp, then (x, x_scale, x_zp) per input, per
 * tensor; the xs as concat's along axis */
ENPU_SHAPE_RULE(qlinear_concat)
{
	enpu_shape xs[ENPU_QCONCAT_MAX];
	int n = (n_in - 2) / 3;

	(void)n_out;
	if (n_in < 5 || (n_in - 2) % 3)
		return enpu_shape_why(why, whylen,
				      "takes y_scale, y_zero_point, then (x, x_scale, x_zero_point) "
				      "per input: 5, 8, 11, ... inputs, got %d", n_in);
	if (n > ENPU_QCONCAT_MAX)
		return enpu_shape_why(why, whylen, "takes at most %d inputs to join, got %d",
				      ENPU_QCONCAT_MAX, n);
	if (tensor_params(in, n_in, 0, "y_scale", "y_zero_point", why, whylen))
		return -1;
	for (int i = 0; i < n; i++) {
		xs[i] = in[2 + 3 * i];
		if (tensor_params(in, n_in, 3 + 3 * i, "x_scale", "x_zero_point", why, whylen))
			return -1;
	}
	return enpu_s_concat(a, xs, n, out, 1, why, whylen);
}

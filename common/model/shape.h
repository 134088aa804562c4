/* shape.h: shape rules of the ops (signature: enpu_shape_fn).
 * Semantics follow docs/spec-format.md, then ONNX opset 13 and NumPy. */
#ifndef ENPU_SHAPE_H
#define ENPU_SHAPE_H

#include "ops.h"

#define ENPU_SHAPE_RULE(n) int enpu_s_##n(enpu_attrs *a, const enpu_shape *in, \
	int n_in, enpu_shape *out, int n_out, char *why, size_t whylen)

ENPU_SHAPE_RULE(matmul);
ENPU_SHAPE_RULE(gemm);
ENPU_SHAPE_RULE(broadcast);     /* add, sub, mul, div */
ENPU_SHAPE_RULE(unary);         /* relu, sigmoid, tanh, leaky_relu, clip, gelu; v2: exp, log, sqrt, neg, abs, reciprocal, erf */
ENPU_SHAPE_RULE(softmax);
ENPU_SHAPE_RULE(conv2d);
ENPU_SHAPE_RULE(pool2d);        /* avgpool2d; maxpool2d's rule (shape_conv.c) ends here */
ENPU_SHAPE_RULE(global_avgpool);
ENPU_SHAPE_RULE(batchnorm);
ENPU_SHAPE_RULE(reshape);
ENPU_SHAPE_RULE(flatten);
ENPU_SHAPE_RULE(transpose);
ENPU_SHAPE_RULE(concat);
/* spec v2 data movement (shape_move.c) */
ENPU_SHAPE_RULE(pad);
ENPU_SHAPE_RULE(slice);
ENPU_SHAPE_RULE(squeeze);
ENPU_SHAPE_RULE(unsqueeze);

/* spec v2, shape_reduce.c */
ENPU_SHAPE_RULE(reduce);        /* reduce_mean, reduce_sum, reduce_max, reduce_min */
ENPU_SHAPE_RULE(layer_norm);

/* A rule's reason: fmt into why (when given); returns -1, so that a rule
 * can `return enpu_shape_why(why, whylen, ...)`. */
int enpu_shape_why(char *why, size_t whylen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* spec v2, common/model/shape_convt.c */
ENPU_SHAPE_RULE(conv_transpose2d);
ENPU_SHAPE_RULE(resize);

/* spec v2 elementwise (shape_v2ew.c; pow uses broadcast, hard_sigmoid,
 * hard_swish, elu and softplus use unary) */
ENPU_SHAPE_RULE(nary_broadcast);  /* min, max: every input broadcast together */
ENPU_SHAPE_RULE(prelu);           /* x, slope: slope broadcasts to x */

/* spec v2 conv and pools (shape_conv.c) */
ENPU_SHAPE_RULE(maxpool2d);     /* checks its dilations, then pool2d */
ENPU_SHAPE_RULE(conv1d);
ENPU_SHAPE_RULE(maxpool1d);
ENPU_SHAPE_RULE(avgpool1d);

/* Writes a rule's one-line reason into why (when given); returns -1. */
int enpu_shape_why(char *why, size_t whylen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* One spatial axis of a conv or pool (shape.c): size padded by p0 + p1,
 * kernel k taps dil apart, stride s; floor, or ceil_mode's ceiling without
 * a last window that starts in the end padding. 0, or -1 with why. */
int enpu_shape_axis(int64_t size, int64_t k, int dil, int s, int p0, int p1, int ceil_mode,
		    const char *axis, int64_t *o, char *why, size_t whylen);

/* spec v3 quantised ops (shape_q.c) */
ENPU_SHAPE_RULE(quantize_linear);   /* and dequantize_linear */
ENPU_SHAPE_RULE(matmul_integer);
ENPU_SHAPE_RULE(conv_integer);
ENPU_SHAPE_RULE(qlinear_matmul);
ENPU_SHAPE_RULE(qlinear_conv);
ENPU_SHAPE_RULE(qlinear_binary);    /* qlinear_add, qlinear_mul */
ENPU_SHAPE_RULE(qlinear_global_avgpool);
ENPU_SHAPE_RULE(qlinear_avgpool);
ENPU_SHAPE_RULE(qlinear_concat);
/* the most inputs qlinear_concat joins (an op reads at most 64 tensors) */
#define ENPU_QCONCAT_MAX 32

ENPU_SHAPE_RULE(split);         /* shape_ir.c */
ENPU_SHAPE_RULE(gather);        /* shape_ir.c */

/* gather's n indices against dimension d of x: the position of the first
 * index outside [-d, d - 1], or -1 when all fit. The compiler (and the
 * artifact loader) check once; the kernel trusts them (shape_ir.c). */
int64_t enpu_gather_bad_index(const int64_t *ix, uint64_t n, int64_t d);

/* NumPy broadcasting of two shapes: 0 ok, -1 with why. Used by kernels too. */
int enpu_broadcast_shapes(const enpu_shape *a, const enpu_shape *b, enpu_shape *out,
			  char *why, size_t whylen);

/* slice's plan per input dimension (ONNX clamping; dims it does not slice
 * keep start 0, step 1, all their elements): input index of output index o
 * along dim d = start[d] + o * step[d], o < count[d]. 0, or -1 with why
 * when the attributes do not fit the shape (the slice rule's checks). */
int enpu_slice_plan(const enpu_attrs *a, const enpu_shape *x, int64_t *start, int64_t *step,
		    int64_t *count, char *why, size_t whylen);

#endif

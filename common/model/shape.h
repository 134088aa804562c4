/* shape.h: shape rules of the ops (signature: enpu_shape_fn).
 * Semantics follow docs/spec-format.md, then ONNX opset 13 and NumPy. */
#ifndef ENPU_SHAPE_H
#define ENPU_SHAPE_H

#include "ops.h"

#define ENPU_SHAPE_RULE(n) int enpu_s_##n(enpu_attrs *a, const enpu_shape *in, \
	int n_in, enpu_shape *out, char *why, size_t whylen)

ENPU_SHAPE_RULE(matmul);
ENPU_SHAPE_RULE(gemm);
ENPU_SHAPE_RULE(broadcast);     /* add, sub, mul, div */
ENPU_SHAPE_RULE(unary);         /* relu, sigmoid, tanh, leaky_relu, clip, gelu; v2: exp, log, sqrt, neg, abs, reciprocal, erf */
ENPU_SHAPE_RULE(softmax);
ENPU_SHAPE_RULE(conv2d);
ENPU_SHAPE_RULE(pool2d);        /* maxpool2d, avgpool2d */
ENPU_SHAPE_RULE(global_avgpool);
ENPU_SHAPE_RULE(batchnorm);
ENPU_SHAPE_RULE(reshape);
ENPU_SHAPE_RULE(flatten);
ENPU_SHAPE_RULE(transpose);
ENPU_SHAPE_RULE(concat);

/* NumPy broadcasting of two shapes: 0 ok, -1 with why. Used by kernels too. */
int enpu_broadcast_shapes(const enpu_shape *a, const enpu_shape *b, enpu_shape *out,
			  char *why, size_t whylen);

#endif

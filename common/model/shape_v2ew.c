/* shape_v2ew.c: shape rules of the spec v2 elementwise ops that are not
 * plain unary or two-way broadcasting: min and max (any number of inputs,
 * all broadcast together) and prelu (slope broadcasts to x). pow uses
 * shape.c's broadcast rule; hard_sigmoid, hard_swish, elu and softplus its
 * unary rule. */
#include <stdio.h>
#include <string.h>
#include "shape.h"

/* min, max: x1 .. xn (n >= 1) broadcast together, NumPy style, folded left
 * to right from the 0-d shape (so one input gives its own shape). */
ENPU_SHAPE_RULE(nary_broadcast)
{
	enpu_shape r;
	char sub[400];

	(void)a;
	if (n_in < 1) {
		snprintf(why, whylen, "expects at least 1 input, got %d", n_in);
		return -1;
	}
	memset(&r, 0, sizeof(r));
	for (int i = 0; i < n_in; i++) {
		if (enpu_broadcast_shapes(&r, &in[i], &r, sub, sizeof(sub))) {
			snprintf(why, whylen, "input %d: %s", i + 1, sub);
			return -1;
		}
	}
	out[0] = r;
	return 0;
}

/* prelu: x, slope; slope broadcasts to x's shape (ONNX's unidirectional
 * broadcasting), and the output is x's shape. */
ENPU_SHAPE_RULE(prelu)
{
	enpu_shape r;
	char sx[160], ss[160], sr[160];

	(void)a;
	if (n_in != 2) {
		snprintf(why, whylen, "expects 2 inputs, got %d", n_in);
		return -1;
	}
	if (enpu_broadcast_shapes(&in[0], &in[1], &r, why, whylen))
		return -1;
	if (!enpu_shape_eq(&r, &in[0])) {
		snprintf(why, whylen, "slope %s does not broadcast to x %s (together they make %s)",
			 enpu_shape_pystr(&in[1], ss, sizeof(ss)),
			 enpu_shape_pystr(&in[0], sx, sizeof(sx)), enpu_shape_pystr(&r, sr, sizeof(sr)));
		return -1;
	}
	out[0] = in[0];
	return 0;
}

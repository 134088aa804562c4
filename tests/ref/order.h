/* order.h: independent references for every op with a reduction or a
 * fixed operation order, written directly from the reference arithmetic
 * of the spec format (README.md, "Specs, artifacts, and the bits"), not
 * from the kernels: no kernel, im2col, packing or shape-rule code is used
 * here. Only the spec's own building blocks are shared: C's fmaf (one
 * correctly rounded fused multiply-add) and the project's exp/tanh/erf
 * (common/kmath.c), which the format names as the functions to use.
 *
 * Each case is one op on inputs chosen so that the order matters (wide
 * dynamic range, signs mixed: cancellation). Besides the reference
 * (variant 0) each case has "wrong" variants: the same op summed in
 * another order (reversed, transposed, fused, by reciprocal, ...). A test
 * shows each variant gives other bits on the case's data, so comparing a
 * backend with the reference can fail.
 *
 * Used by tests/unit/test_order.c (every backend against the reference)
 * and tests/ref/order_cases.c (writes the cases as model directories for
 * the cross-ISA runners, tests/e2e/cross.sh). */
#ifndef ENPU_TEST_ORDER_H
#define ENPU_TEST_ORDER_H

#include <stddef.h>
#include <stdint.h>

#define ORD_MAX_IN 5
#define ORD_MAX_VARIANTS 4

enum ord_gen {
	ORD_WIDE,        /* +-[1,2) * 2^e, e in [-8, 8]: sums that cancel */
	ORD_SOFT,        /* uniform [-8, 8] (softmax logits) */
	ORD_GELU,        /* uniform [-6, 6] */
	ORD_POS,         /* uniform [0.05, 4] (variances) */
	ORD_WIDE_INF,    /* ORD_WIDE with element 0 = +inf */
};

typedef struct ord_tensor {
	const char *name;
	int weight;               /* 1 = weights.npz, 0 = input.npz */
	int ndim;
	int64_t dim[4];
	int gen;                  /* enum ord_gen */
} ord_tensor;

/* The op's attributes, as the reference reads them; rendered into the
 * spec's attrs by ord_spec_yaml (only those the op takes, and only when
 * not the default). */
typedef struct ord_attrs {
	float alpha, beta;        /* gemm */
	int trans_a, trans_b;     /* gemm */
	int strides[2], pads[4], dilations[2], group;   /* conv2d (pools: strides, pads);
							 * conv1d: [0] and pads [b, e] */
	int kernel[2], count_include_pad;               /* avgpool2d */
	int ceil_mode;            /* avgpool2d (spec v2: the spec says eulernpu: 2) */
	int axis;                 /* softmax: non-negative here */
	float epsilon;            /* batchnorm */
	int approximate;          /* gelu: 0 none, 1 tanh */
	int axes[4], n_axes;      /* reduce_* (v2): n_axes 0 = all; layer_norm: axis above */
	int keepdims;             /* reduce_* (v2) */
	int output_padding[2];    /* conv_transpose2d (with strides, pads, dilations, group) */
	int coord;                /* resize (linear): 0 half_pixel, 1 asymmetric,
				   * 2 align_corners, 3 pytorch_half_pixel */
	float scales[2];          /* resize: used when sizes[0] is 0 */
	int sizes[2];             /* resize: 0, 0 = scales given */
} ord_attrs;

typedef struct ord_case ord_case;

/* Compute output y (numel of out) from inputs in[] with variant v (0 = the
 * reference). */
typedef void (*ord_fn)(const ord_case *c, const float *const *in, float *y, int v);

struct ord_case {
	const char *name;
	const char *op;           /* as written in spec.yaml */
	ord_attrs at;
	int n_in;
	ord_tensor in[ORD_MAX_IN];
	int out_ndim;
	int64_t out[4];           /* output shape, worked out by hand */
	ord_fn fn;
	int n_variants;           /* wrong variants, 1..n */
	const char *variant[ORD_MAX_VARIANTS + 1];   /* [1..n]: what each does */
};

/* The spec v2 references (order_reduce.c): reduce_sum and reduce_mean
 * (variant 0 the documented order), layer_norm. */
void ord_ref_reduce(const ord_case *c, const float *const *in, float *y, int v);
void ord_ref_layer_norm(const ord_case *c, const float *const *in, float *y, int v);

/* The attrs of a spec v2 op's case as spec.yaml text (", attrs: {...}" or
 * ""), into buf; 1 when op is a v2 op of order_reduce.c, else 0. */
int ord_v2_attrs(const ord_case *c, char *buf, size_t cap);

extern const ord_case ord_cases[];
extern const int ord_n_cases;

size_t ord_numel(int ndim, const int64_t *dim);

/* The case's inputs, deterministic (seeded by the case's name and the
 * tensor's index): in[i] = malloc'ed numel floats. */
void ord_make_inputs(const ord_case *c, float **in);

/* The reference result y of the case on inputs in: variant 0, then every
 * NaN written as the one quiet NaN 0x7fc00000, as results are. */
void ord_reference(const ord_case *c, const float *const *in, float *y);

/* spec.yaml of the case (a one-op model, cpu_ref by default) into buf.
 * Returns the length, or -1 when cap is too small. */
int ord_spec_yaml(const ord_case *c, char *buf, size_t cap);

/* Write the case as a model directory: dir/{spec.yaml, weights.npz,
 * input.npz, expected.npz} (expected = the reference). dir must exist.
 * 0, or -1 with a message in why. */
int ord_write_case(const ord_case *c, const char *dir, char *why, size_t cap);

/* spec v2 references (tests/ref/order_convt.c), ord_fn's signature */
void ord_ref_conv_transpose2d(const ord_case *c, const float *const *in, float *y, int v);
void ord_ref_resize_linear(const ord_case *c, const float *const *in, float *y, int v);

#endif

/* ops.c: the operator table (see ops.h). One row per op of spec v1 (ROW),
 * of spec v2 (ROW2: allowed only in `eulernpu: 2` specs and later) and of
 * spec v3 (ROW3: the quantised ops, with their type rules). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ops.h"
#include "shape.h"
#include "kernels.h"

#define A(field) offsetof(enpu_attrs, field)
static const char *const gelu_modes[] = {"none", "tanh", NULL};

static const enpu_attrdef no_attrs[] = {{NULL, 0, 0, 0, NULL, NULL}};
static const enpu_attrdef gemm_attrs[] = {
	{"alpha", ENPU_ATTR_FLOAT, A(alpha), 0, "1", NULL},
	{"beta", ENPU_ATTR_FLOAT, A(beta), 0, "1", NULL},
	{"trans_a", ENPU_ATTR_BOOL01, A(trans_a), 0, "0", NULL},
	{"trans_b", ENPU_ATTR_BOOL01, A(trans_b), 0, "0", NULL},
	{NULL, 0, 0, 0, NULL, NULL}};
static const enpu_attrdef leaky_attrs[] = {
	{"alpha", ENPU_ATTR_FLOAT, A(alpha), 0, "0.01", NULL},
	{NULL, 0, 0, 0, NULL, NULL}};
static const enpu_attrdef clip_attrs[] = {
	{"min", ENPU_ATTR_FLOAT, A(min), 0, "-.inf", NULL},
	{"max", ENPU_ATTR_FLOAT, A(max), 0, ".inf", NULL},
	{NULL, 0, 0, 0, NULL, NULL}};
static const enpu_attrdef gelu_attrs[] = {
	{"approximate", ENPU_ATTR_ENUM, A(approximate), 0, "none", gelu_modes},
	{NULL, 0, 0, 0, NULL, NULL}};
static const enpu_attrdef softmax_attrs[] = {
	{"axis", ENPU_ATTR_INT, A(axis), 0, "-1", NULL},
	{NULL, 0, 0, 0, NULL, NULL}};
static const enpu_attrdef conv_attrs[] = {
	{"strides", ENPU_ATTR_INTS, A(strides), 2, "[1, 1]", NULL},
	{"pads", ENPU_ATTR_INTS, A(pads), 4, "[0, 0, 0, 0]", NULL},
	{"dilations", ENPU_ATTR_INTS, A(dilations), 2, "[1, 1]", NULL},
	{"group", ENPU_ATTR_INT, A(group), 0, "1", NULL},
	{NULL, 0, 0, 0, NULL, NULL}};
/* strides default to the kernel: the shape rule fills them when not set. */
/* ceil_mode and maxpool2d's dilations came with spec v2 (the rows' n_attrs_v1). */
static const enpu_attrdef maxpool_attrs[] = {
	{"kernel", ENPU_ATTR_INTS, A(kernel), 2, NULL, NULL},
	{"strides", ENPU_ATTR_INTS, A(strides), 2, NULL, NULL},
	{"pads", ENPU_ATTR_INTS, A(pads), 4, "[0, 0, 0, 0]", NULL},
	{"ceil_mode", ENPU_ATTR_BOOL01, A(ceil_mode), 0, "0", NULL},
	{"dilations", ENPU_ATTR_INTS, A(dilations), 2, "[1, 1]", NULL},
	{NULL, 0, 0, 0, NULL, NULL}};
static const enpu_attrdef avgpool_attrs[] = {
	{"kernel", ENPU_ATTR_INTS, A(kernel), 2, NULL, NULL},
	{"strides", ENPU_ATTR_INTS, A(strides), 2, NULL, NULL},
	{"pads", ENPU_ATTR_INTS, A(pads), 4, "[0, 0, 0, 0]", NULL},
	{"count_include_pad", ENPU_ATTR_BOOL01, A(count_include_pad), 0, "0", NULL},
	{"ceil_mode", ENPU_ATTR_BOOL01, A(ceil_mode), 0, "0", NULL},
	{NULL, 0, 0, 0, NULL, NULL}};
static const enpu_attrdef bn_attrs[] = {
	{"epsilon", ENPU_ATTR_FLOAT, A(epsilon), 0, "1e-5", NULL},
	{NULL, 0, 0, 0, NULL, NULL}};
static const enpu_attrdef reshape_attrs[] = {
	{"shape", ENPU_ATTR_DIMS, A(shape), 0, NULL, NULL},
	{NULL, 0, 0, 0, NULL, NULL}};
static const enpu_attrdef flatten_attrs[] = {
	{"axis", ENPU_ATTR_INT, A(axis), 0, "1", NULL},
	{NULL, 0, 0, 0, NULL, NULL}};
static const enpu_attrdef transpose_attrs[] = {
	{"perm", ENPU_ATTR_PERM, A(perm), 0, NULL, NULL},
	{NULL, 0, 0, 0, NULL, NULL}};
static const enpu_attrdef concat_attrs[] = {
	{"axis", ENPU_ATTR_INT, A(axis), 0, NULL, NULL},
	{NULL, 0, 0, 0, NULL, NULL}};
/* spec v2 data movement (shape_move.c, kernels_move.c) */
static const char *const pad_modes[] = {"constant", "reflect", "edge", NULL};
static const enpu_attrdef pad_attrs[] = {
	{"pads", ENPU_ATTR_LIST, A(pad_pads), ENPU_MAX_LIST, NULL, NULL},
	{"mode", ENPU_ATTR_ENUM, A(pad_mode), 0, "constant", pad_modes},
	{"value", ENPU_ATTR_FLOAT, A(pad_value), 0, "0", NULL},
	{NULL, 0, 0, 0, NULL, NULL}};
static const enpu_attrdef slice_attrs[] = {
	{"starts", ENPU_ATTR_LIST, A(starts), ENPU_MAX_DIMS, NULL, NULL},
	{"ends", ENPU_ATTR_LIST, A(ends), ENPU_MAX_DIMS, NULL, NULL},
	{"axes", ENPU_ATTR_LIST, A(axes), ENPU_MAX_DIMS, NULL, NULL},
	{"steps", ENPU_ATTR_LIST, A(steps), ENPU_MAX_DIMS, NULL, NULL},
	{NULL, 0, 0, 0, NULL, NULL}};
static const enpu_attrdef axes_attrs[] = {
	{"axes", ENPU_ATTR_LIST, A(axes), ENPU_MAX_DIMS, NULL, NULL},
	{NULL, 0, 0, 0, NULL, NULL}};
/* spec v2: reduce_mean/sum/max/min, layer_norm */
static const enpu_attrdef reduce_attrs[] = {
	{"axes", ENPU_ATTR_LIST, A(axes), ENPU_MAX_DIMS, NULL, NULL},
	{"keepdims", ENPU_ATTR_BOOL01, A(keepdims), 0, "1", NULL},
	{NULL, 0, 0, 0, NULL, NULL}};
static const enpu_attrdef layer_norm_attrs[] = {
	{"axis", ENPU_ATTR_INT, A(axis), 0, "-1", NULL},
	{"epsilon", ENPU_ATTR_FLOAT, A(epsilon), 0, "1e-5", NULL},
	{NULL, 0, 0, 0, NULL, NULL}};
/* spec v2: conv_transpose2d (ONNX ConvTranspose), resize (ONNX Resize over
 * H and W). resize's scales default to NaN, NaN: "absent" (a spec cannot
 * write a NaN), so graph.json round-trips which of scales and sizes was
 * given. */
static const enpu_attrdef convt_attrs[] = {
	{"strides", ENPU_ATTR_INTS, A(strides), 2, "[1, 1]", NULL},
	{"pads", ENPU_ATTR_INTS, A(pads), 4, "[0, 0, 0, 0]", NULL},
	{"output_padding", ENPU_ATTR_INTS, A(output_padding), 2, "[0, 0]", NULL},
	{"dilations", ENPU_ATTR_INTS, A(dilations), 2, "[1, 1]", NULL},
	{"group", ENPU_ATTR_INT, A(group), 0, "1", NULL},
	{NULL, 0, 0, 0, NULL, NULL}};
static const char *const resize_modes[] = {"nearest", "linear", NULL};
static const char *const resize_coords[] = {"half_pixel", "asymmetric", "align_corners",
					    "pytorch_half_pixel", NULL};
static const char *const resize_nearest[] = {"round_prefer_floor", "round_prefer_ceil",
					     "floor", "ceil", NULL};
static const enpu_attrdef resize_attrs[] = {
	{"mode", ENPU_ATTR_ENUM, A(resize_mode), 0, "nearest", resize_modes},
	{"coordinate_transformation_mode", ENPU_ATTR_ENUM, A(coord_mode), 0, "half_pixel",
	 resize_coords},
	{"nearest_mode", ENPU_ATTR_ENUM, A(nearest_mode), 0, "round_prefer_floor", resize_nearest},
	{"scales", ENPU_ATTR_FLOATS, A(scales), 2, "[nan, nan]", NULL},
	{"sizes", ENPU_ATTR_LIST, A(sizes), 2, NULL, NULL},
	{NULL, 0, 0, 0, NULL, NULL}};
/* spec v2 */
static const enpu_attrdef hard_sigmoid_attrs[] = {
	{"alpha", ENPU_ATTR_FLOAT, A(alpha), 0, "0.2", NULL},
	{"beta", ENPU_ATTR_FLOAT, A(beta), 0, "0.5", NULL},
	{NULL, 0, 0, 0, NULL, NULL}};
static const enpu_attrdef elu_attrs[] = {
	{"alpha", ENPU_ATTR_FLOAT, A(alpha), 0, "1.0", NULL},
	{NULL, 0, 0, 0, NULL, NULL}};
/* spec v2 1-D conv and pools (shape_conv.c, kernels_conv.c): the 2-D
 * fields' first entries; pads are [begin, end]. kernel and strides keep the
 * 2-D pools' positions (bits 0 and 1). */
static const enpu_attrdef conv1d_attrs[] = {
	{"strides", ENPU_ATTR_INTS, A(strides), 1, "[1]", NULL},
	{"pads", ENPU_ATTR_INTS, A(pads), 2, "[0, 0]", NULL},
	{"dilations", ENPU_ATTR_INTS, A(dilations), 1, "[1]", NULL},
	{"group", ENPU_ATTR_INT, A(group), 0, "1", NULL},
	{NULL, 0, 0, 0, NULL, NULL}};
static const enpu_attrdef maxpool1d_attrs[] = {
	{"kernel", ENPU_ATTR_INTS, A(kernel), 1, NULL, NULL},
	{"strides", ENPU_ATTR_INTS, A(strides), 1, NULL, NULL},
	{"pads", ENPU_ATTR_INTS, A(pads), 2, "[0, 0]", NULL},
	{"dilations", ENPU_ATTR_INTS, A(dilations), 1, "[1]", NULL},
	{"ceil_mode", ENPU_ATTR_BOOL01, A(ceil_mode), 0, "0", NULL},
	{NULL, 0, 0, 0, NULL, NULL}};
static const enpu_attrdef avgpool1d_attrs[] = {
	{"kernel", ENPU_ATTR_INTS, A(kernel), 1, NULL, NULL},
	{"strides", ENPU_ATTR_INTS, A(strides), 1, NULL, NULL},
	{"pads", ENPU_ATTR_INTS, A(pads), 2, "[0, 0]", NULL},
	{"count_include_pad", ENPU_ATTR_BOOL01, A(count_include_pad), 0, "0", NULL},
	{"ceil_mode", ENPU_ATTR_BOOL01, A(ceil_mode), 0, "0", NULL},
	{NULL, 0, 0, 0, NULL, NULL}};
static const enpu_attrdef split_attrs[] = {
	{"axis", ENPU_ATTR_INT, A(axis), 0, "0", NULL},
	{"split", ENPU_ATTR_SIZES, A(split), ENPU_MAX_SPLIT, NULL, NULL},
	{NULL, 0, 0, 0, NULL, NULL}};
static const enpu_attrdef gather_attrs[] = {
	{"axis", ENPU_ATTR_INT, A(axis), 0, "0", NULL},
	{NULL, 0, 0, 0, NULL, NULL}};
/* spec v3: quantize_linear, dequantize_linear (the axis of a 1-D scale) */
static const enpu_attrdef qaxis_attrs[] = {
	{"axis", ENPU_ATTR_INT, A(axis), 0, "1", NULL},
	{NULL, 0, 0, 0, NULL, NULL}};

/* spec v3 type rules (ops.h enpu_typerule) */
#define F32 ENPU_DTBIT(ENPU_DT_F32)
#define Q8 (ENPU_DTBIT(ENPU_DT_I8) | ENPU_DTBIT(ENPU_DT_U8))
#define I32 ENPU_DTBIT(ENPU_DT_I32)
/* the data movement ops reshape, flatten, transpose (x of any dtype but
 * int64) and concat (every input of input 0's dtype): the output is
 * input 0's dtype */
static const enpu_typerule move_types = {1, {F32 | Q8 | I32}, {0}, 0, ENPU_DT_F32, 0};
/* x f32, y_scale f32, [y_zero_point int8|uint8] -> the zero point's, uint8 without */
static const enpu_typerule quantize_types = {3, {F32, F32, Q8}, {0, 0, 0}, 2, ENPU_DT_U8, 0};
/* x int8|uint8|int32, x_scale f32, [x_zero_point: x's] -> float32 */
static const enpu_typerule dequantize_types = {3, {Q8 | I32, F32, Q8 | I32}, {0, 0, 1}, -1,
					       ENPU_DT_F32, 0};
/* a (x), b (w), [a's zero point], [b's zero point] -> int32 */
static const enpu_typerule integer_types = {4, {Q8, Q8, Q8, Q8}, {0, 0, 1, 2}, -1, ENPU_DT_I32, 0};
/* a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp, [bias int32] -> y_zp's */
static const enpu_typerule qlinear_types = {9, {Q8, F32, Q8, Q8, F32, Q8, F32, Q8, I32},
					    {0, 0, 1, 0, 0, 4, 0, 0, 0}, 7, ENPU_DT_U8, 0};
/* maxpool2d and clip: float32, or int8/uint8 in and the same out (the
 * integer forms: kernels_qew.c) */
static const enpu_typerule unary_q_types = {1, {F32 | Q8}, {0}, 0, ENPU_DT_F32, 0};
/* qlinear_add, qlinear_mul: a, a_scale, a_zp, b, b_scale, b_zp, y_scale,
 * y_zp; a, b, y of one dtype (ONNX Runtime's T) -> y_zp's */
static const enpu_typerule qbinary_types = {8, {Q8, F32, Q8, Q8, F32, Q8, F32, Q8},
					    {0, 0, 1, 1, 0, 1, 0, 1}, 7, ENPU_DT_U8, 0};
/* qlinear_global_avgpool, qlinear_avgpool: x, x_scale, x_zp, y_scale, y_zp */
static const enpu_typerule qpool_types = {5, {Q8, F32, Q8, F32, Q8}, {0, 0, 1, 0, 1}, 4,
					  ENPU_DT_U8, 0};
/* qlinear_concat: y_scale, y_zp, then (x, x_scale, x_zp) per input, every
 * x and zero point of y_zp's dtype */
static const enpu_typerule qconcat_types = {5, {F32, Q8, Q8, F32, Q8}, {0, 0, 2, 0, 3}, 1,
					    ENPU_DT_U8, 3};
#undef F32
#undef Q8
#undef I32

#define ROW(nm, id, mn, mx, at, sh, k) \
	{#nm, ENPU_OP_##id, mn, mx, 1, at, enpu_s_##sh, enpu_k_##k, #k "_f32", 1, 0, 0, NULL, NULL}
#define ROW2(nm, id, mn, mx, at, sh, k) \
	{#nm, ENPU_OP_##id, mn, mx, 1, at, enpu_s_##sh, enpu_k_##k, #k "_f32", 2, 0, 0, NULL, NULL}
/* ROW and ROW2 of a kernel with scratch memory (kernels.h ENPU_SCRATCH) */
#define ROWS(nm, id, mn, mx, at, sh, k) \
	{#nm, ENPU_OP_##id, mn, mx, 1, at, enpu_s_##sh, enpu_k_##k, #k "_f32", 1, 0, 0, \
	 enpu_kscratch_##k, NULL}
#define ROW2S(nm, id, mn, mx, at, sh, k) \
	{#nm, ENPU_OP_##id, mn, mx, 1, at, enpu_s_##sh, enpu_k_##k, #k "_f32", 2, 0, 0, \
	 enpu_kscratch_##k, NULL}
/* a v1 op whose first nv1 attributes are v1's and the rest spec v2's */
#define ROW12(nm, id, mn, mx, at, sh, k, nv1) \
	{#nm, ENPU_OP_##id, mn, mx, 1, at, enpu_s_##sh, enpu_k_##k, #k "_f32", 1, nv1, 0, NULL, NULL}
/* a v2 row with n_out outputs (-1 = variadic) and int64 inputs (bit mask) */
#define ROW2X(nm, id, mn, mx, nout, i64, at, sh, k) \
	{#nm, ENPU_OP_##id, mn, mx, nout, at, enpu_s_##sh, enpu_k_##k, #k "_f32", 2, 0, i64, NULL, NULL}

/* a v1 row that spec v3 gave a type rule (integer data movement) */
#define ROWT(nm, id, mn, mx, at, sh, k, ty) \
	{#nm, ENPU_OP_##id, mn, mx, 1, at, enpu_s_##sh, enpu_k_##k, #k "_f32", 1, 0, 0, NULL, &ty}
/* ROW12 and ROW with a type rule (maxpool2d and clip take int8 in spec v3) */
#define ROW12T(nm, id, mn, mx, at, sh, k, nv1, ty) \
	{#nm, ENPU_OP_##id, mn, mx, 1, at, enpu_s_##sh, enpu_k_##k, #k "_f32", 1, nv1, 0, NULL, &ty}
/* a v3 row: its kernel (kernels_q.c) "<k>_q" and its type rule */
#define ROW3(nm, id, mn, mx, at, sh, k, ty) \
	{#nm, ENPU_OP_##id, mn, mx, 1, at, enpu_s_##sh, enpu_k_##k, #k "_q", 3, 0, 0, NULL, &ty}
/* ROW3 of a kernel with scratch memory (kernels.h ENPU_SCRATCH) */
#define ROW3S(nm, id, mn, mx, at, sh, k, ty) \
	{#nm, ENPU_OP_##id, mn, mx, 1, at, enpu_s_##sh, enpu_k_##k, #k "_q", 3, 0, 0, \
	 enpu_kscratch_##k, &ty}

static const enpu_opdef ops[ENPU_OP_COUNT] = {
	ROWS(matmul, MATMUL, 2, 2, no_attrs, matmul, matmul),
	ROWS(gemm, GEMM, 2, 3, gemm_attrs, gemm, gemm),
	ROW(add, ADD, 2, 2, no_attrs, broadcast, add),
	ROW(sub, SUB, 2, 2, no_attrs, broadcast, sub),
	ROW(mul, MUL, 2, 2, no_attrs, broadcast, mul),
	ROW(div, DIV, 2, 2, no_attrs, broadcast, div),
	ROW(relu, RELU, 1, 1, no_attrs, unary, relu),
	ROW(sigmoid, SIGMOID, 1, 1, no_attrs, unary, sigmoid),
	ROW(tanh, TANH, 1, 1, no_attrs, unary, tanh),
	ROW(leaky_relu, LEAKY_RELU, 1, 1, leaky_attrs, unary, leaky_relu),
	ROWT(clip, CLIP, 1, 1, clip_attrs, unary, clip, unary_q_types),
	ROW(gelu, GELU, 1, 1, gelu_attrs, unary, gelu),
	ROW(softmax, SOFTMAX, 1, 1, softmax_attrs, softmax, softmax),
	ROWS(conv2d, CONV2D, 2, 3, conv_attrs, conv2d, conv2d),
	ROW12T(maxpool2d, MAXPOOL2D, 1, 1, maxpool_attrs, maxpool2d, maxpool2d, 3, unary_q_types),
	ROW12(avgpool2d, AVGPOOL2D, 1, 1, avgpool_attrs, pool2d, avgpool2d, 4),
	ROW(global_avgpool, GLOBAL_AVGPOOL, 1, 1, no_attrs, global_avgpool, global_avgpool),
	ROW(batchnorm, BATCHNORM, 5, 5, bn_attrs, batchnorm, batchnorm),
	ROWT(reshape, RESHAPE, 1, 1, reshape_attrs, reshape, copy, move_types),
	ROWT(flatten, FLATTEN, 1, 1, flatten_attrs, flatten, copy, move_types),
	ROWT(transpose, TRANSPOSE, 1, 1, transpose_attrs, transpose, transpose, move_types),
	ROWT(concat, CONCAT, 1, -1, concat_attrs, concat, concat, move_types),
	ROW2(exp, EXP, 1, 1, no_attrs, unary, exp),
	ROW2(sqrt, SQRT, 1, 1, no_attrs, unary, sqrt),
	ROW2(neg, NEG, 1, 1, no_attrs, unary, neg),
	ROW2(abs, ABS, 1, 1, no_attrs, unary, abs),
	ROW2(reciprocal, RECIPROCAL, 1, 1, no_attrs, unary, reciprocal),
	ROW2(erf, ERF, 1, 1, no_attrs, unary, erf),
	ROW2(log, LOG, 1, 1, no_attrs, unary, log),
	ROW2(pad, PAD, 1, 1, pad_attrs, pad, pad),
	ROW2(slice, SLICE, 1, 1, slice_attrs, slice, slice),
	ROW2(squeeze, SQUEEZE, 1, 1, axes_attrs, squeeze, copy),
	ROW2(unsqueeze, UNSQUEEZE, 1, 1, axes_attrs, unsqueeze, copy),
	ROW2(reduce_mean, REDUCE_MEAN, 1, 1, reduce_attrs, reduce, reduce_mean),
	ROW2(reduce_sum, REDUCE_SUM, 1, 1, reduce_attrs, reduce, reduce_sum),
	ROW2(reduce_max, REDUCE_MAX, 1, 1, reduce_attrs, reduce, reduce_max),
	ROW2(reduce_min, REDUCE_MIN, 1, 1, reduce_attrs, reduce, reduce_min),
	ROW2(layer_norm, LAYER_NORM, 1, 3, layer_norm_attrs, layer_norm, layer_norm),
	ROW2(conv_transpose2d, CONV_TRANSPOSE2D, 2, 3, convt_attrs, conv_transpose2d, conv_transpose2d),
	ROW2(resize, RESIZE, 1, 1, resize_attrs, resize, resize),
	ROW2(pow, POW, 2, 2, no_attrs, broadcast, pow),
	ROW2(min, MIN, 1, -1, no_attrs, nary_broadcast, min),
	ROW2(max, MAX, 1, -1, no_attrs, nary_broadcast, max),
	ROW2(hard_sigmoid, HARD_SIGMOID, 1, 1, hard_sigmoid_attrs, unary, hard_sigmoid),
	ROW2(hard_swish, HARD_SWISH, 1, 1, no_attrs, unary, hard_swish),
	ROW2(prelu, PRELU, 2, 2, no_attrs, prelu, prelu),
	ROW2(elu, ELU, 1, 1, elu_attrs, unary, elu),
	ROW2(softplus, SOFTPLUS, 1, 1, no_attrs, unary, softplus),
	ROW2S(conv1d, CONV1D, 2, 3, conv1d_attrs, conv1d, conv1d),
	ROW2(maxpool1d, MAXPOOL1D, 1, 1, maxpool1d_attrs, maxpool1d, maxpool1d),
	ROW2(avgpool1d, AVGPOOL1D, 1, 1, avgpool1d_attrs, avgpool1d, avgpool1d),
	ROW2X(split, SPLIT, 1, 1, -1, 0, split_attrs, split, split),
	ROW2X(gather, GATHER, 2, 2, 1, 1u << 1, gather_attrs, gather, gather),
	ROW3(quantize_linear, QUANTIZE_LINEAR, 2, 3, qaxis_attrs, quantize_linear, quantize_linear,
	     quantize_types),
	ROW3(dequantize_linear, DEQUANTIZE_LINEAR, 2, 3, qaxis_attrs, quantize_linear,
	     dequantize_linear, dequantize_types),
	ROW3S(matmul_integer, MATMUL_INTEGER, 2, 4, no_attrs, matmul_integer, matmul_integer,
	      integer_types),
	ROW3S(conv_integer, CONV_INTEGER, 2, 4, conv_attrs, conv_integer, conv_integer,
	      integer_types),
	ROW3S(qlinear_matmul, QLINEAR_MATMUL, 8, 8, no_attrs, qlinear_matmul, qlinear_matmul,
	      qlinear_types),
	ROW3S(qlinear_conv, QLINEAR_CONV, 8, 9, conv_attrs, qlinear_conv, qlinear_conv,
	      qlinear_types),
	ROW3(qlinear_add, QLINEAR_ADD, 8, 8, no_attrs, qlinear_binary, qlinear_add, qbinary_types),
	ROW3(qlinear_mul, QLINEAR_MUL, 8, 8, no_attrs, qlinear_binary, qlinear_mul, qbinary_types),
	ROW3(qlinear_global_avgpool, QLINEAR_GLOBAL_AVGPOOL, 5, 5, no_attrs, qlinear_global_avgpool,
	     qlinear_global_avgpool, qpool_types),
	ROW3(qlinear_avgpool, QLINEAR_AVGPOOL, 5, 5, avgpool_attrs, qlinear_avgpool, qlinear_avgpool,
	     qpool_types),
	ROW3(qlinear_concat, QLINEAR_CONCAT, 5, -1, concat_attrs, qlinear_concat, qlinear_concat,
	     qconcat_types),
};

const enpu_opdef *enpu_op_by_name(const char *name)
{
	for (int i = 0; i < ENPU_OP_COUNT; i++)
		if (strcmp(ops[i].name, name) == 0)
			return &ops[i];
	return NULL;
}

const enpu_opdef *enpu_op_by_id(enpu_opid id)
{
	return (unsigned)id < ENPU_OP_COUNT ? &ops[id] : NULL;
}

/* Defaults are written as YAML scalars so the table reads like the spec;
 * they are parsed here once per op instance (cheap, and never user input). */
static void set_default(const enpu_attrdef *ad, enpu_attrs *a)
{
	char *base = (char *)a + ad->offset;
	const char *s = ad->dflt;

	switch (ad->type) {
	case ENPU_ATTR_FLOAT:
		if (strcmp(s, ".inf") == 0)
			*(float *)base = INFINITY;
		else if (strcmp(s, "-.inf") == 0)
			*(float *)base = -INFINITY;
		else
			*(float *)base = strtof(s, NULL);
		break;
	case ENPU_ATTR_INT:
	case ENPU_ATTR_BOOL01:
		*(int *)base = (int)strtol(s, NULL, 10);
		break;
	case ENPU_ATTR_ENUM:
		for (int i = 0; ad->choices[i]; i++)
			if (strcmp(ad->choices[i], s) == 0)
				*(int *)base = i;
		break;
	case ENPU_ATTR_INTS: {
		const char *p = s;
		for (int i = 0; i < ad->count; i++) {
			while (*p && (*p < '0' || *p > '9') && *p != '-')
				p++;
			((int *)base)[i] = (int)strtol(p, (char **)&p, 10);
		}
		break;
	}
	case ENPU_ATTR_FLOATS: {
		const char *p = s;
		for (int i = 0; i < ad->count; i++) {
			while (*p && (*p == '[' || *p == ',' || *p == ' '))
				p++;
			((float *)base)[i] = strtof(p, (char **)&p);
		}
		break;
	}
	case ENPU_ATTR_LIST: {
		enpu_ilist *l = (enpu_ilist *)base;
		const char *p = s;
		l->n = 0;
		while (l->n < ENPU_MAX_LIST) {
			while (*p && (*p < '0' || *p > '9') && *p != '-')
				p++;
			if (!*p)
				break;
			l->v[l->n++] = strtoll(p, (char **)&p, 10);
		}
		break;
	}
	case ENPU_ATTR_DIMS:
	case ENPU_ATTR_PERM:
	case ENPU_ATTR_SIZES:
		break;   /* no defaults for lists */
	}
}

void enpu_attrs_defaults(const enpu_opdef *d, enpu_attrs *a)
{
	memset(a, 0, sizeof(*a));
	for (const enpu_attrdef *ad = d->attrs; ad->name; ad++)
		if (ad->dflt)
			set_default(ad, a);
}

/* "float32", "int8 or uint8", "int8, uint8 or int32" */
static void dtset_str(unsigned set, char *buf, size_t cap)
{
	int n = 0, k = 0;
	size_t off = 0;

	for (int t = 1; t < ENPU_DT_COUNT; t++)
		n += set >> t & 1;
	buf[0] = '\0';
	for (int t = 1; t < ENPU_DT_COUNT && off < cap; t++)
		if (set >> t & 1) {
			k++;
			off += (size_t)snprintf(buf + off, cap - off, "%s%s",
						k == 1 ? "" : k == n ? " or " : ", ",
						enpu_dtype_name((enpu_dtype)t));
		}
}

int enpu_op_out_dtype(const enpu_opdef *d, const enpu_dtype *dt, int n_in,
		      const char *const *names, enpu_dtype *out, int *bad, char *why,
		      size_t whylen)
{
	const enpu_typerule *r = d->types;
	char want[64];

	for (int k = 0; k < n_in; k++) {
		int j = r ? (k < r->n ? k : r->cycle > 0 ? r->n - r->cycle + (k - r->n) % r->cycle :
			     r->n - 1) : 0;
		unsigned ok = r ? r->in[j] : ENPU_DTBIT(k < 32 && (d->int64_in >> k & 1) ?
							  ENPU_DT_I64 : ENPU_DT_F32);
		/* a variadic op's inputs past the rule's are like the first (concat),
		 * or repeat its last entries (ops.h: cycle) */
		int like = !r ? -1 : k < r->n ? r->like[k] - 1 : r->cycle <= 0 ? 0 :
			   r->like[j] - 1 >= r->n - r->cycle ? r->like[j] - 1 + (k - j) : r->like[j] - 1;

		*bad = k;
		if (dt[k] <= ENPU_DT_INVALID || dt[k] >= ENPU_DT_COUNT || !(ok >> dt[k] & 1)) {
			dtset_str(ok, want, sizeof(want));
			snprintf(why, whylen, "reads '%.64s' (%s) as input %d, which must be %s",
				 names && names[k] ? names[k] : "?", enpu_dtype_name(dt[k]), k + 1,
				 want);
			return -1;
		}
		if (like >= 0 && like < k && dt[like] != dt[k]) {
			snprintf(why, whylen,
				 "has mixed types: input %d '%.64s' is %s but input %d '%.64s' is %s",
				 like + 1, names && names[like] ? names[like] : "?",
				 enpu_dtype_name(dt[like]), k + 1, names && names[k] ? names[k] : "?",
				 enpu_dtype_name(dt[k]));
			return -1;
		}
	}
	*bad = -1;
	if (!r)
		*out = ENPU_DT_F32;
	else
		*out = r->out_from >= 0 && r->out_from < n_in ? dt[r->out_from] : r->out_dt;
	return 0;
}

int enpu_attr_since(const enpu_opdef *d, int i)
{
	return d->n_attrs_v1 > 0 && i >= d->n_attrs_v1 ? 2 : d->since;
}

/* Compares the attribute's field with the default's, byte for byte (the
 * types v2 added to v1 ops: INT, BOOL01, INTS). */
int enpu_attr_is_default(const enpu_opdef *d, int i, const enpu_attrs *a)
{
	const enpu_attrdef *ad = &d->attrs[i];
	enpu_attrs def;
	size_t n;

	switch (ad->type) {
	case ENPU_ATTR_INT:
	case ENPU_ATTR_BOOL01:
		n = sizeof(int);
		break;
	case ENPU_ATTR_INTS:
		n = sizeof(int) * (size_t)ad->count;
		break;
	default:
		return 0;
	}
	enpu_attrs_defaults(d, &def);
	return memcmp((const char *)a + ad->offset, (const char *)&def + ad->offset, n) == 0;
}

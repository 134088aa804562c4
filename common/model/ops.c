/* ops.c: the operator table (see ops.h). One row per op of spec v1 (ROW)
 * and of spec v2 (ROW2: allowed only in `eulernpu: 2` specs). */
#include <math.h>
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
static const enpu_attrdef maxpool_attrs[] = {
	{"kernel", ENPU_ATTR_INTS, A(kernel), 2, NULL, NULL},
	{"strides", ENPU_ATTR_INTS, A(strides), 2, NULL, NULL},
	{"pads", ENPU_ATTR_INTS, A(pads), 4, "[0, 0, 0, 0]", NULL},
	{NULL, 0, 0, 0, NULL, NULL}};
static const enpu_attrdef avgpool_attrs[] = {
	{"kernel", ENPU_ATTR_INTS, A(kernel), 2, NULL, NULL},
	{"strides", ENPU_ATTR_INTS, A(strides), 2, NULL, NULL},
	{"pads", ENPU_ATTR_INTS, A(pads), 4, "[0, 0, 0, 0]", NULL},
	{"count_include_pad", ENPU_ATTR_BOOL01, A(count_include_pad), 0, "0", NULL},
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

#define ROW(nm, id, mn, mx, at, sh, k) \
	{#nm, ENPU_OP_##id, mn, mx, 1, at, enpu_s_##sh, enpu_k_##k, #k "_f32", 1}
#define ROW2(nm, id, mn, mx, at, sh, k) \
	{#nm, ENPU_OP_##id, mn, mx, 1, at, enpu_s_##sh, enpu_k_##k, #k "_f32", 2}

static const enpu_opdef ops[ENPU_OP_COUNT] = {
	ROW(matmul, MATMUL, 2, 2, no_attrs, matmul, matmul),
	ROW(gemm, GEMM, 2, 3, gemm_attrs, gemm, gemm),
	ROW(add, ADD, 2, 2, no_attrs, broadcast, add),
	ROW(sub, SUB, 2, 2, no_attrs, broadcast, sub),
	ROW(mul, MUL, 2, 2, no_attrs, broadcast, mul),
	ROW(div, DIV, 2, 2, no_attrs, broadcast, div),
	ROW(relu, RELU, 1, 1, no_attrs, unary, relu),
	ROW(sigmoid, SIGMOID, 1, 1, no_attrs, unary, sigmoid),
	ROW(tanh, TANH, 1, 1, no_attrs, unary, tanh),
	ROW(leaky_relu, LEAKY_RELU, 1, 1, leaky_attrs, unary, leaky_relu),
	ROW(clip, CLIP, 1, 1, clip_attrs, unary, clip),
	ROW(gelu, GELU, 1, 1, gelu_attrs, unary, gelu),
	ROW(softmax, SOFTMAX, 1, 1, softmax_attrs, softmax, softmax),
	ROW(conv2d, CONV2D, 2, 3, conv_attrs, conv2d, conv2d),
	ROW(maxpool2d, MAXPOOL2D, 1, 1, maxpool_attrs, pool2d, maxpool2d),
	ROW(avgpool2d, AVGPOOL2D, 1, 1, avgpool_attrs, pool2d, avgpool2d),
	ROW(global_avgpool, GLOBAL_AVGPOOL, 1, 1, no_attrs, global_avgpool, global_avgpool),
	ROW(batchnorm, BATCHNORM, 5, 5, bn_attrs, batchnorm, batchnorm),
	ROW(reshape, RESHAPE, 1, 1, reshape_attrs, reshape, copy),
	ROW(flatten, FLATTEN, 1, 1, flatten_attrs, flatten, copy),
	ROW(transpose, TRANSPOSE, 1, 1, transpose_attrs, transpose, transpose),
	ROW(concat, CONCAT, 1, -1, concat_attrs, concat, concat),
	ROW2(exp, EXP, 1, 1, no_attrs, unary, exp),
	ROW2(sqrt, SQRT, 1, 1, no_attrs, unary, sqrt),
	ROW2(neg, NEG, 1, 1, no_attrs, unary, neg),
	ROW2(abs, ABS, 1, 1, no_attrs, unary, abs),
	ROW2(reciprocal, RECIPROCAL, 1, 1, no_attrs, unary, reciprocal),
	ROW2(erf, ERF, 1, 1, no_attrs, unary, erf),
	ROW2(log, LOG, 1, 1, no_attrs, unary, log),
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
	case ENPU_ATTR_DIMS:
	case ENPU_ATTR_PERM:
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

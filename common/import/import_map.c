/* import_map.c: ONNX op -> spec op. ONE table at the end of this file
 * (maps[]): op type, the opsets the row handles, its mapping function; a
 * reader adds an op there. A mapping reads the node's attributes (and the
 * inputs that must be constants: Clip bounds, Reshape shape, Pad pads,
 * Slice starts/ends, Resize scales/sizes, Squeeze/Unsqueeze/Split/Reduce
 * axes) and emits spec ops through imp_emit by the contract's op and
 * attribute names (docs/spec-format.md, Version 2); an op this build lacks
 * is listed as unmappable by imp_emit. Nodes the mapping cannot express
 * are listed with why (imp_bad). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "import_int.h"

int imp_fold_shape(imp_ctx *c, const enpu_onnx_node *n, const int *in, int out);
int imp_slice_params(imp_ctx *c, const enpu_onnx_node *n, const int *in, int64_t *st, int64_t *en,
		     int64_t *ax, int64_t *sp);

/* The node's inputs as value indices (-1 absent). */
int imp_ins(imp_ctx *c, const enpu_onnx_node *n, int *in, int max)
{
	int k;

	for (k = 0; k < (int)n->n_in && k < max; k++)
		in[k] = imp_in(c, n, (size_t)k);
	for (int j = k; j < max; j++)
		in[j] = -1;
	return (int)n->n_in;
}

/* Emit op reading in[0..n_in) into the node's output 0. */
int imp_emit1(imp_ctx *c, const enpu_onnx_node *n, const char *op, const int *in, int n_in,
	      const imp_attrs *at)
{
	int out = imp_outval(c, n, 0);

	return out < 0 ? -1 : imp_emit(c, n, op, in, n_in, at, &out, 1);
}

/* Constant input k as int64s: its count; -1 absent; after imp_bad -2. */
static int const_ints(imp_ctx *c, const enpu_onnx_node *n, int idx, const char *what, int64_t *v,
		      int max)
{
	const imp_val *x;

	if (idx < 0)
		return -1;
	x = &c->v[idx];
	if (x->kind != IV_CONST)
		return imp_bad(c, n, "%s is computed at run time (runtime int64 data)", what), -2;
	if (x->numel > (uint64_t)max)
		return imp_bad(c, n, "%s has %llu values (at most %d)", what,
			       (unsigned long long)x->numel, max), -2;
	for (uint64_t k = 0; k < x->numel; k++)
		v[k] = x->i ? x->i[k] : (int64_t)x->f[k];
	return (int)x->numel;
}

/* A constant float scalar input (Clip bounds, Pad value): 0, -1 absent,
 * -2 after imp_bad. */
static int const_float(imp_ctx *c, const enpu_onnx_node *n, int idx, const char *what, float *f)
{
	if (idx < 0)
		return -1;
	if (c->v[idx].kind != IV_CONST || c->v[idx].numel != 1)
		return imp_bad(c, n, "%s is not a constant scalar", what), -2;
	*f = c->v[idx].f ? c->v[idx].f[0] : (float)c->v[idx].i[0];
	return 0;
}

/* An int list that is an attribute before opset `since` and a constant
 * input (index idx) from it on: as const_ints. */
static int list_arg(imp_ctx *c, const enpu_onnx_node *n, const char *name, int since, int idx,
		    int64_t *v, int max)
{
	if (c->opset < since)
		return oa_ints(n, name, v, max);
	return const_ints(c, n, idx, name, v, max);
}

static int alias0(imp_ctx *c, const enpu_onnx_node *n, int x)
{
	return imp_alias(c, n->out[0], x);
}

/* ---- elementwise ------------------------------------------------------ */

static const struct {
	const char *onnx, *spec;
} same[] = {
	{"Relu", "relu"}, {"Sigmoid", "sigmoid"}, {"Tanh", "tanh"}, {"Exp", "exp"},
	{"Log", "log"}, {"Sqrt", "sqrt"}, {"Neg", "neg"}, {"Abs", "abs"},
	{"Reciprocal", "reciprocal"}, {"Erf", "erf"}, {"Softplus", "softplus"},
	{"HardSwish", "hard_swish"}, {"Add", "add"}, {"Sub", "sub"}, {"Mul", "mul"},
	{"Div", "div"}, {"Pow", "pow"}, {"PRelu", "prelu"}, {"MatMul", "matmul"},
	{"GlobalAveragePool", "global_avgpool"},
};

/* Constant integer data at *idx as a new float32 constant (Pow's integer
 * exponent): every value must be exact in float32. 0, 1 (imp_bad), -1. */
static int float_const(imp_ctx *c, const enpu_onnx_node *n, int *idx)
{
	char name[300];
	int f;

	if (*idx < 0 || !imp_is_const(c, *idx) || !c->v[*idx].i)
		return 0;
	for (uint64_t j = 0; j < c->v[*idx].numel; j++)
		if (c->v[*idx].i[j] > (1 << 24) || c->v[*idx].i[j] < -(1 << 24))
			return imp_bad(c, n, "integer exponent %lld not exact in float32",
				       (long long)c->v[*idx].i[j]);
	snprintf(name, sizeof(name), "%.200s_f32", c->v[*idx].onnx);
	for (int s = 2; imp_find(c, name) >= 0; s++)
		snprintf(name, sizeof(name), "%.200s_f32_%d", c->v[*idx].onnx, s);
	if ((f = imp_newval(c, name, IV_CONST)) < 0 ||
	    imp_const_alloc(c, f, ENPU_ONNX_FLOAT, &c->v[*idx].shape))
		return -1;
	for (uint64_t j = 0; j < c->v[f].numel; j++)
		c->v[f].f[j] = (float)c->v[*idx].i[j];
	*idx = f;
	return 0;
}

static int m_same(imp_ctx *c, const enpu_onnx_node *n)
{
	int in[2], k = imp_ins(c, n, in, 2), rc;

	if (!strcmp(n->op_type, "Pow") && (rc = float_const(c, n, &in[1])))
		return rc;

	for (size_t j = 0; j < sizeof(same) / sizeof(same[0]); j++)
		if (!strcmp(same[j].onnx, n->op_type))
			return imp_emit1(c, n, same[j].spec, in, k > 2 ? 2 : k, NULL);
	return imp_bad(c, n, "no mapping");
}

static int m_alpha(imp_ctx *c, const enpu_onnx_node *n)
{
	imp_attrs at = {0};
	int in[1];
	const char *op = !strcmp(n->op_type, "LeakyRelu") ? "leaky_relu" :
		!strcmp(n->op_type, "Elu") ? "elu" : "hard_sigmoid";

	imp_ins(c, n, in, 1);
	ia_float(&at, "alpha", oa_float(n, "alpha", op[0] == 'l' ? 0.01f : op[0] == 'e' ? 1.0f : 0.2f));
	if (op[0] == 'h')
		ia_float(&at, "beta", oa_float(n, "beta", 0.5f));
	return imp_emit1(c, n, op, in, 1, &at);
}

static int m_gelu(imp_ctx *c, const enpu_onnx_node *n)
{
	imp_attrs at = {0};
	int in[1];

	const char *ap = oa_str(n, "approximate", "none");

	imp_ins(c, n, in, 1);
	if (strcmp(ap, "none") && strcmp(ap, "tanh"))
		return imp_bad(c, n, "approximate %.20s", ap);
	ia_str(&at, "approximate", ap);
	return imp_emit1(c, n, "gelu", in, 1, &at);
}

static int m_clip(imp_ctx *c, const enpu_onnx_node *n)
{
	imp_attrs at = {0};
	int in[3];
	float lo, hi;

	imp_ins(c, n, in, 3);
	if (c->opset < 11) {
		if (enpu_onnx_attr_find(n, "min"))
			ia_float(&at, "min", oa_float(n, "min", 0));
		if (enpu_onnx_attr_find(n, "max"))
			ia_float(&at, "max", oa_float(n, "max", 0));
	} else {
		int a = const_float(c, n, in[1], "min", &lo), b = a == -2 ? -2 :
			const_float(c, n, in[2], "max", &hi);
		if (a == -2 || b == -2)
			return 1;
		if (!a)
			ia_float(&at, "min", lo);
		if (!b)
			ia_float(&at, "max", hi);
	}
	return imp_emit1(c, n, "clip", in, 1, &at);
}

/* Min, Max (n-ary ops), Sum, Mean (add chains, then div by n) */
static int m_nary(imp_ctx *c, const enpu_onnx_node *n)
{
	int in[64], k = imp_ins(c, n, in, 64), acc, out, rc;
	int mean = !strcmp(n->op_type, "Mean");

	if (k > 64)
		return imp_bad(c, n, "more than 64 inputs");
	if (!strcmp(n->op_type, "Min") || !strcmp(n->op_type, "Max"))
		return imp_emit1(c, n, n->op_type[1] == 'i' ? "min" : "max", in, k, NULL);
	if (k == 1 && !mean)
		return alias0(c, n, in[0]);
	acc = in[0];
	for (int j = 1; j < k; j++) {
		int pair[2] = {acc, in[j]};
		out = j == k - 1 && !mean ? imp_outval(c, n, 0) : imp_outval(c, n, -1);
		if (out < 0 || (rc = imp_emit(c, n, "add", pair, 2, NULL, &out, 1)))
			return out < 0 ? -1 : rc;
		acc = out;
	}
	if (mean) {
		char nm[300];
		enpu_shape s = {0};
		int cnt;
		snprintf(nm, sizeof(nm), "%.200s_count", n->out[0]);
		if ((cnt = imp_newval(c, nm, IV_CONST)) < 0 || imp_const_alloc(c, cnt, ENPU_ONNX_FLOAT, &s))
			return -1;
		c->v[cnt].f[0] = (float)k;
		int pair[2] = {acc, cnt};
		return imp_emit1(c, n, "div", pair, 2, NULL);
	}
	return 0;
}

/* ---- linear algebra and normalization --------------------------------- */

static int m_gemm(imp_ctx *c, const enpu_onnx_node *n)
{
	imp_attrs at = {0};
	int in[3], k = imp_ins(c, n, in, 3);

	if (oa_float(n, "alpha", 1) != 1)
		ia_float(&at, "alpha", oa_float(n, "alpha", 1));
	if (oa_float(n, "beta", 1) != 1)
		ia_float(&at, "beta", oa_float(n, "beta", 1));
	if (oa_int(n, "transA", 0))
		ia_int(&at, "trans_a", 1);
	if (oa_int(n, "transB", 0))
		ia_int(&at, "trans_b", 1);
	return imp_emit1(c, n, "gemm", in, k > 2 && in[2] >= 0 ? 3 : 2, &at);
}

static int m_batchnorm(imp_ctx *c, const enpu_onnx_node *n)
{
	imp_attrs at = {0};
	int in[5];

	imp_ins(c, n, in, 5);
	if (oa_int(n, "training_mode", 0) || (n->n_out > 1 && n->out[1][0]))
		return imp_bad(c, n, "training mode (running statistics as outputs)");
	ia_float(&at, "epsilon", oa_float(n, "epsilon", 1e-5f));
	return imp_emit1(c, n, "batchnorm", in, 5, &at);
}

/* Emit op into node output k (k < 0: a temporary), its index in *out. */
static int emit_k(imp_ctx *c, const enpu_onnx_node *n, const char *op, const int *in, int n_in,
		  const imp_attrs *at, int k, int *out)
{
	return (*out = imp_outval(c, n, k)) < 0 ? -1 : imp_emit(c, n, op, in, n_in, at, out, 1);
}

/* LayerNormalization's optional outputs as ONNX's reference computes them:
 * Mean = reduce_mean(X over axis..r-1, keepdims); InvStdDev =
 * reciprocal(sqrt(reduce_mean((X - Mean)^2) + epsilon)). 0, 1, -1. */
static int ln_stats(imp_ctx *c, const enpu_onnx_node *n, int x, int64_t axis, float eps)
{
	imp_attrs rd = {0};
	int64_t ax[ENPU_MAX_DIMS];
	int r = c->v[x].shape.ndim, rc, mean, d, sq, var, e, ve, sd, inv;
	enpu_shape one = {.ndim = 1, .dim = {1}};

	for (int k = (int)axis; k < r; k++)
		ax[k - axis] = k;
	ia_ints(&rd, "axes", ax, r - (int)axis);
	ia_int(&rd, "keepdims", 1);
	if ((rc = emit_k(c, n, "reduce_mean", &x, 1, &rd, n->n_out > 1 && n->out[1][0] ? 1 : -1, &mean)))
		return rc;
	if (n->n_out < 3 || !n->out[2][0])
		return 0;
	if ((rc = emit_k(c, n, "sub", (int[]){x, mean}, 2, NULL, -1, &d)) ||
	    (rc = emit_k(c, n, "mul", (int[]){d, d}, 2, NULL, -1, &sq)) ||
	    (rc = emit_k(c, n, "reduce_mean", &sq, 1, &rd, -1, &var)))
		return rc;
	if ((e = imp_outval(c, n, -1)) < 0 || imp_const_alloc(c, e, ENPU_ONNX_FLOAT, &one))
		return -1;
	c->v[e].f[0] = eps;
	if ((rc = emit_k(c, n, "add", (int[]){var, e}, 2, NULL, -1, &ve)) ||
	    (rc = emit_k(c, n, "sqrt", &ve, 1, NULL, -1, &sd)))
		return rc;
	return emit_k(c, n, "reciprocal", &sd, 1, NULL, 2, &inv);
}

static int m_layernorm(imp_ctx *c, const enpu_onnx_node *n)
{
	imp_attrs at = {0};
	int in[3], k = imp_ins(c, n, in, 3), rc, r = c->v[in[0]].shape.ndim;
	int64_t axis = oa_int(n, "axis", -1);
	float eps = oa_float(n, "epsilon", 1e-5f);

	if (oa_int(n, "stash_type", 1) != 1)
		return imp_bad(c, n, "stash_type %lld", (long long)oa_int(n, "stash_type", 1));
	if (axis < -r || axis >= r)
		return imp_bad(c, n, "axis %lld out of range for rank %d", (long long)axis, r);
	ia_int(&at, "axis", axis);
	ia_float(&at, "epsilon", eps);
	if ((rc = imp_emit1(c, n, "layer_norm", in, k > 2 && in[2] >= 0 ? 3 : 2, &at)))
		return rc;
	if ((n->n_out > 1 && n->out[1][0]) || (n->n_out > 2 && n->out[2][0]))
		return ln_stats(c, n, in[0], axis < 0 ? axis + r : axis, eps);
	return 0;
}

/* Softmax: opset 13 on one axis; before, over the dims from axis on
 * (coerced to 2-D): the last axis directly, else reshape around it. */
static int m_softmax(imp_ctx *c, const enpu_onnx_node *n)
{
	imp_attrs at = {0}, rs = {0};
	int in[1], r, t1, t2, rc;
	int64_t axis = oa_int(n, "axis", c->opset < 13 ? 1 : -1), two[2] = {1, 1};

	imp_ins(c, n, in, 1);
	r = c->v[in[0]].shape.ndim;
	axis = axis < 0 ? axis + r : axis;
	if (c->opset >= 13 || axis == r - 1) {
		ia_int(&at, "axis", c->opset >= 13 ? oa_int(n, "axis", -1) : -1);
		return imp_emit1(c, n, "softmax", in, 1, &at);
	}
	if (axis < 0 || axis >= r)
		return imp_bad(c, n, "axis out of range");
	for (int k = 0; k < r; k++)
		two[k >= axis] *= c->v[in[0]].shape.dim[k];
	ia_ints(&rs, "shape", two, 2);
	if ((t1 = imp_outval(c, n, -1)) < 0 || (rc = imp_emit(c, n, "reshape", in, 1, &rs, &t1, 1)))
		return t1 < 0 ? -1 : rc;
	ia_int(&at, "axis", -1);
	if ((t2 = imp_outval(c, n, -1)) < 0 || (rc = imp_emit(c, n, "softmax", &t1, 1, &at, &t2, 1)))
		return t2 < 0 ? -1 : rc;
	memset(&rs, 0, sizeof(rs));
	ia_ints(&rs, "shape", c->v[in[0]].shape.dim, r);
	return imp_emit1(c, n, "reshape", &t2, 1, &rs);
}

/* ---- data movement ---------------------------------------------------- */

static int m_reshape(imp_ctx *c, const enpu_onnx_node *n)
{
	imp_attrs at = {0};
	int in[2], k;
	int64_t v[ENPU_MAX_DIMS];

	imp_ins(c, n, in, 2);
	if (c->opset < 5 || (k = const_ints(c, n, in[1], "the target shape", v, ENPU_MAX_DIMS)) == -1)
		return imp_bad(c, n, "no target shape");
	if (k < 0)
		return 1;
	for (int j = 0; j < k; j++)
		if (!v[j] && oa_int(n, "allowzero", 0))
			return imp_bad(c, n, "allowzero with a 0 dim");
	ia_ints(&at, "shape", v, k);
	return imp_emit1(c, n, "reshape", in, 1, &at);
}

static int m_flatten(imp_ctx *c, const enpu_onnx_node *n)
{
	imp_attrs at = {0};
	int in[1];

	imp_ins(c, n, in, 1);
	ia_int(&at, "axis", oa_int(n, "axis", 1));
	return imp_emit1(c, n, "flatten", in, 1, &at);
}

static int m_transpose(imp_ctx *c, const enpu_onnx_node *n)
{
	imp_attrs at = {0};
	int in[1];
	int64_t p[ENPU_MAX_DIMS];
	int np = oa_ints(n, "perm", p, ENPU_MAX_DIMS);

	imp_ins(c, n, in, 1);
	if (np >= 0)
		ia_ints(&at, "perm", p, np);
	return imp_emit1(c, n, "transpose", in, 1, &at);
}

static int m_concat(imp_ctx *c, const enpu_onnx_node *n)
{
	imp_attrs at = {0};
	int in[64], k = imp_ins(c, n, in, 64), m = 0;

	if (k > 64)
		return imp_bad(c, n, "more than 64 inputs");
	for (int j = 0; j < k; j++)   /* empty constants add nothing */
		if (in[j] >= 0 && !(imp_is_const(c, in[j]) && !c->v[in[j]].numel))
			in[m++] = in[j];
	ia_int(&at, "axis", oa_int(n, "axis", 0));
	return imp_emit1(c, n, "concat", in, m, &at);
}

/* Identity, Dropout (inference), Cast float -> float: removed. */
static int m_identity(imp_ctx *c, const enpu_onnx_node *n)
{
	int in[1];

	imp_ins(c, n, in, 1);
	if (!strcmp(n->op_type, "Dropout") && n->n_out > 1 && n->out[1][0])
		return imp_bad(c, n, "the mask output");
	if (!strcmp(n->op_type, "Dropout") && n->n_in > 2 && n->in[2][0]) {
		int t = imp_find(c, n->in[2]);
		if (!imp_is_const(c, t) || (c->v[t].numel && (c->v[t].i ? c->v[t].i[0] : c->v[t].f[0] != 0)))
			return imp_bad(c, n, "training_mode (not a constant false)");
	}
	if (!strcmp(n->op_type, "Cast")) {
		int64_t to = oa_int(n, "to", 0);
		if (to != ENPU_ONNX_FLOAT && to != ENPU_ONNX_DOUBLE)
			return imp_bad(c, n, "a cast of run-time data to ONNX data type %lld (runtime int64 data)",
				       (long long)to);
	}
	return alias0(c, n, in[0]);
}

static int m_shape(imp_ctx *c, const enpu_onnx_node *n)
{
	int in[1], out;

	imp_ins(c, n, in, 1);
	if ((out = imp_newval(c, n->out[0], 0)) < 0)
		return -1;
	return imp_fold_shape(c, n, in, out);
}

/* Squeeze, Unsqueeze: axes from the attribute (opset < 13) or input 1. */
static int m_squeeze(imp_ctx *c, const enpu_onnx_node *n)
{
	imp_attrs at = {0};
	int in[2], k;
	int64_t ax[ENPU_MAX_DIMS];

	imp_ins(c, n, in, 2);
	if ((k = list_arg(c, n, "axes", 13, in[1], ax, ENPU_MAX_DIMS)) < -1)
		return 1;
	if (k >= 0)
		ia_ints(&at, "axes", ax, k);
	else if (n->op_type[0] == 'U')
		return imp_bad(c, n, "no axes");
	return imp_emit1(c, n, n->op_type[0] == 'U' ? "unsqueeze" : "squeeze", in, 1, &at);
}

static int m_slice(imp_ctx *c, const enpu_onnx_node *n)
{
	imp_attrs at = {0};
	int in[5];
	int64_t st[ENPU_MAX_DIMS], en[ENPU_MAX_DIMS], ax[ENPU_MAX_DIMS], sp[ENPU_MAX_DIMS];
	int k;

	imp_ins(c, n, in, 5);
	if ((k = imp_slice_params(c, n, in, st, en, ax, sp)) < 0)
		return 1;
	ia_ints(&at, "starts", st, k);
	ia_ints(&at, "ends", en, k);
	ia_ints(&at, "axes", ax, k);
	ia_ints(&at, "steps", sp, k);
	return imp_emit1(c, n, "slice", in, 1, &at);
}

static int m_pad(imp_ctx *c, const enpu_onnx_node *n)
{
	imp_attrs at = {0};
	int in[3], k;
	int64_t p[2 * ENPU_MAX_DIMS];
	float v = 0;
	const char *mode = oa_str(n, "mode", "constant");

	imp_ins(c, n, in, 3);
	if (c->opset < 11) {
		k = oa_ints(n, "pads", p, 2 * ENPU_MAX_DIMS);
		v = oa_float(n, "value", 0);
	} else {
		k = const_ints(c, n, in[1], "pads", p, 2 * ENPU_MAX_DIMS);
		if (k < -1 || const_float(c, n, in[2], "constant_value", &v) == -2)
			return 1;
	}
	if (k < 0)
		return imp_bad(c, n, "no pads");
	if (strcmp(mode, "constant") && strcmp(mode, "reflect") && strcmp(mode, "edge"))
		return imp_bad(c, n, "mode %.20s", mode);
	ia_ints(&at, "pads", p, k);
	ia_str(&at, "mode", !strcmp(mode, "constant") ? "constant" : mode[0] == 'r' ? "reflect" : "edge");
	if (v != 0)
		ia_float(&at, "value", v);
	return imp_emit1(c, n, "pad", in, 1, &at);
}

static int m_split(imp_ctx *c, const enpu_onnx_node *n)
{
	imp_attrs at = {0};
	int in[2], out[16], k;
	int64_t sp[ENPU_MAX_LIST];

	imp_ins(c, n, in, 2);
	if (n->n_out > 16)
		return imp_bad(c, n, "more than 16 outputs");
	if ((k = list_arg(c, n, "split", 13, in[1], sp, ENPU_MAX_LIST)) < -1)
		return 1;
	ia_int(&at, "axis", oa_int(n, "axis", 0));
	if (k >= 0)
		ia_ints(&at, "split", sp, k);
	for (size_t j = 0; j < n->n_out; j++)
		if ((out[j] = imp_outval(c, n, (int)j)) < 0)
			return -1;
	return imp_emit(c, n, "split", in, 1, &at, out, (int)n->n_out);
}

/* Gather with constant indices (int64 or int32, any shape): the contract's
 * gather, the indices written as an int64 weight (checked in range here,
 * so a bad index is the node's error, not the compiler's). */
static int m_gather(imp_ctx *c, const enpu_onnx_node *n)
{
	imp_attrs at = {0};
	const imp_val *ix;
	int in[2], r;
	int64_t axis = oa_int(n, "axis", 0), dim;

	imp_ins(c, n, in, 2);
	if (!imp_is_const(c, in[1]))
		return imp_bad(c, n, "indices computed at run time (runtime int64 data)");
	ix = &c->v[in[1]];
	r = c->v[in[0]].shape.ndim;
	if (axis < -r || axis >= r || !ix->i || ix->dtype != ENPU_ONNX_INT64)
		return imp_bad(c, n, "indices that are not int64 or int32, or axis %lld out of range",
			       (long long)axis);
	dim = c->v[in[0]].shape.dim[axis < 0 ? axis + r : axis];
	for (uint64_t k = 0; k < ix->numel; k++)
		if (ix->i[k] < -dim || ix->i[k] >= dim)
			return imp_bad(c, n, "index %lld out of range", (long long)ix->i[k]);
	ia_int(&at, "axis", axis);
	return imp_emit1(c, n, "gather", in, 2, &at);
}

/* Expand of run-time data: mul by ones of the target shape (exact). */
static int m_expand(imp_ctx *c, const enpu_onnx_node *n)
{
	int in[2], k, ones;
	int64_t v[ENPU_MAX_DIMS];
	enpu_shape s = {0};
	char nm[300];

	imp_ins(c, n, in, 2);
	if ((k = const_ints(c, n, in[1], "the shape", v, ENPU_MAX_DIMS)) < 0)
		return k == -2 ? 1 : imp_bad(c, n, "no shape");
	s.ndim = k;
	for (int j = 0; j < k; j++)
		s.dim[j] = v[j] > 0 ? v[j] : 1;
	snprintf(nm, sizeof(nm), "%.200s_ones", n->out[0]);
	if ((ones = imp_newval(c, nm, IV_CONST)) < 0 || imp_const_alloc(c, ones, ENPU_ONNX_FLOAT, &s))
		return -1;
	for (uint64_t j = 0; j < c->v[ones].numel; j++)
		c->v[ones].f[j] = 1;
	int pair[2] = {in[0], ones};
	return imp_emit1(c, n, "mul", pair, 2, NULL);
}

static int m_reduce(imp_ctx *c, const enpu_onnx_node *n)
{
	imp_attrs at = {0};
	int in[2], k;
	int64_t ax[ENPU_MAX_DIMS];
	const char *op = !strcmp(n->op_type, "ReduceMean") ? "reduce_mean" :
		!strcmp(n->op_type, "ReduceSum") ? "reduce_sum" :
		!strcmp(n->op_type, "ReduceMax") ? "reduce_max" : "reduce_min";

	imp_ins(c, n, in, 2);
	if ((k = list_arg(c, n, "axes", op[7] == 's' ? 13 : 18, in[1], ax, ENPU_MAX_DIMS)) < -1)
		return 1;
	if (k <= 0 && oa_int(n, "noop_with_empty_axes", 0))
		return alias0(c, n, in[0]);
	if (k > 0)
		ia_ints(&at, "axes", ax, k);
	ia_int(&at, "keepdims", oa_int(n, "keepdims", 1));
	return imp_emit1(c, n, op, in, 1, &at);
}

/* Resize (10: X, scales; 11+: X, roi, scales, sizes) and Upsample (7, 8:
 * scales attribute; 9: input); N and C must keep their size. */
static int m_resize(imp_ctx *c, const enpu_onnx_node *n)
{
	imp_attrs at = {0};
	int in[4], up = n->op_type[0] == 'U', si = up || c->opset < 11 ? 1 : 2;
	const char *mode = oa_str(n, "mode", "nearest");
	const char *ctm = up || c->opset < 11 ? "asymmetric" :
		oa_str(n, "coordinate_transformation_mode", "half_pixel");
	const char *nm = up || c->opset < 11 ? "floor" : oa_str(n, "nearest_mode", "round_prefer_floor");
	float sc[4];
	int64_t sz[4];
	int ns = -1, nz = -1;

	imp_ins(c, n, in, 4);
	if (c->v[in[0]].shape.ndim != 4)
		return imp_bad(c, n, "not 4-D (resize is over H and W)");
	if (!strcmp(mode, "bilinear"))
		mode = "linear";
	if (strcmp(mode, "nearest") && strcmp(mode, "linear"))
		return imp_bad(c, n, "mode %.20s not in spec v2", mode);
	if (strcmp(ctm, "half_pixel") && strcmp(ctm, "asymmetric") && strcmp(ctm, "align_corners") &&
	    strcmp(ctm, "pytorch_half_pixel"))
		return imp_bad(c, n, "coordinate_transformation_mode %.30s not in spec v2", ctm);
	if (strcmp(nm, "round_prefer_floor") && strcmp(nm, "round_prefer_ceil") && strcmp(nm, "floor") &&
	    strcmp(nm, "ceil"))
		return imp_bad(c, n, "nearest_mode %.30s not in spec v2", nm);
	if (up && c->opset < 9) {
		const enpu_onnx_attr *a = enpu_onnx_attr_find(n, "scales");
		if (!a || a->type != ENPU_ONNX_A_FLOATS || a->n != 4)
			return imp_bad(c, n, "no scales of 4 values");
		memcpy(sc, a->floats, sizeof(sc));
		ns = 4;
	} else if (in[si] >= 0 && c->v[in[si]].numel) {
		if (!imp_is_const(c, in[si]) || c->v[in[si]].numel != 4 || !c->v[in[si]].f)
			return imp_bad(c, n, "scales not 4 constant floats");
		memcpy(sc, c->v[in[si]].f, sizeof(sc));
		ns = 4;
	}
	if (!up && c->opset >= 11 && in[3] >= 0 &&
	    (nz = const_ints(c, n, in[3], "sizes", sz, 4)) < -1)
		return 1;
	if ((ns == 4) == (nz == 4))
		return imp_bad(c, n, "scales and sizes: exactly one of the two, of 4 values");
	if ((ns == 4 && (sc[0] != 1 || sc[1] != 1)) ||
	    (nz == 4 && (sz[0] != c->v[in[0]].shape.dim[0] || sz[1] != c->v[in[0]].shape.dim[1])))
		return imp_bad(c, n, "N or C resized");
	ia_str(&at, "mode", mode);
	ia_str(&at, "coordinate_transformation_mode", ctm);
	if (!strcmp(mode, "nearest"))
		ia_str(&at, "nearest_mode", nm);
	if (ns == 4)
		ia_floats(&at, "scales", sc + 2, 2);
	else
		ia_ints(&at, "sizes", sz + 2, 2);
	return imp_emit1(c, n, "resize", in, 1, &at);
}

/* spec v3: QuantizeLinear, DequantizeLinear (x, scale, [zero_point]; axis
 * from opset 13), MatMulInteger (a, b, [a_zp], [b_zp]) and QLinearMatMul
 * (its 8 inputs) map one to one; an optional input left out before a given
 * one has no spec form. */
static int m_quant(imp_ctx *c, const enpu_onnx_node *n)
{
	imp_attrs at = {0};
	int in[8], nin = imp_ins(c, n, in, 8);
	const char *op = !strcmp(n->op_type, "QuantizeLinear") ? "quantize_linear" :
			 !strcmp(n->op_type, "DequantizeLinear") ? "dequantize_linear" :
			 !strcmp(n->op_type, "MatMulInteger") ? "matmul_integer" : "qlinear_matmul";

	while (nin > 0 && in[nin - 1] < 0)
		nin--;
	for (int k = 0; k < nin; k++)
		if (in[k] < 0)
			return imp_bad(c, n, "input %d absent while a later one is given", k + 1);
	if (strstr(op, "quantize_linear") && oa_int(n, "axis", 1) != 1)
		ia_int(&at, "axis", oa_int(n, "axis", 1));
	return imp_emit1(c, n, op, in, nin, &at);
}

/* The table: ONNX op type, opsets (within 7-17) the row handles, the
 * inputs it needs, mapping. */
static const imp_mapping maps[] = {
	{"Relu", 7, 17, 1, m_same}, {"Sigmoid", 7, 17, 1, m_same}, {"Tanh", 7, 17, 1, m_same},
	{"Exp", 7, 17, 1, m_same}, {"Log", 7, 17, 1, m_same}, {"Sqrt", 7, 17, 1, m_same},
	{"Neg", 7, 17, 1, m_same}, {"Abs", 7, 17, 1, m_same}, {"Reciprocal", 7, 17, 1, m_same},
	{"Erf", 9, 17, 1, m_same}, {"Softplus", 7, 17, 1, m_same}, {"HardSwish", 14, 17, 1, m_same},
	{"Add", 7, 17, 2, m_same}, {"Sub", 7, 17, 2, m_same}, {"Mul", 7, 17, 2, m_same},
	{"Div", 7, 17, 2, m_same}, {"Pow", 7, 17, 2, m_same}, {"PRelu", 7, 17, 2, m_same},
	{"MatMul", 7, 17, 2, m_same}, {"GlobalAveragePool", 7, 17, 1, m_same},
	{"LeakyRelu", 7, 17, 1, m_alpha}, {"Elu", 7, 17, 1, m_alpha}, {"HardSigmoid", 7, 17, 1, m_alpha},
	{"Gelu", 7, 17, 1, m_gelu}, {"Clip", 7, 17, 1, m_clip},
	{"Min", 7, 17, 1, m_nary}, {"Max", 7, 17, 1, m_nary}, {"Sum", 7, 17, 1, m_nary},
	{"Mean", 7, 17, 1, m_nary},
	{"Gemm", 7, 17, 2, m_gemm}, {"BatchNormalization", 7, 17, 5, m_batchnorm},
	{"LayerNormalization", 17, 17, 1, m_layernorm}, {"Softmax", 7, 17, 1, m_softmax},
	{"Conv", 7, 17, 2, m_conv}, {"MaxPool", 7, 17, 1, m_pool}, {"AveragePool", 7, 17, 1, m_pool},
	{"GlobalMaxPool", 7, 17, 1, m_global_max}, {"ConvTranspose", 7, 17, 2, m_convt},
	{"Reshape", 7, 17, 2, m_reshape}, {"Flatten", 7, 17, 1, m_flatten},
	{"Transpose", 7, 17, 1, m_transpose}, {"Concat", 7, 17, 1, m_concat},
	{"Identity", 7, 17, 1, m_identity}, {"Dropout", 7, 17, 1, m_identity}, {"Cast", 7, 17, 1, m_identity},
	{"Shape", 7, 17, 1, m_shape}, {"Size", 7, 17, 1, m_shape},
	{"Squeeze", 7, 17, 1, m_squeeze}, {"Unsqueeze", 7, 17, 1, m_squeeze},
	{"Slice", 7, 17, 1, m_slice}, {"Pad", 7, 17, 1, m_pad}, {"Split", 7, 17, 1, m_split},
	{"Gather", 7, 17, 2, m_gather}, {"Expand", 8, 17, 2, m_expand},
	{"ReduceMean", 7, 17, 1, m_reduce}, {"ReduceSum", 7, 17, 1, m_reduce},
	{"ReduceMax", 7, 17, 1, m_reduce}, {"ReduceMin", 7, 17, 1, m_reduce},
	{"Resize", 10, 17, 1, m_resize}, {"Upsample", 7, 9, 1, m_resize},
	{"QuantizeLinear", 10, 17, 2, m_quant}, {"DequantizeLinear", 10, 17, 2, m_quant},
	{"MatMulInteger", 10, 17, 2, m_quant}, {"QLinearMatMul", 10, 17, 8, m_quant},
	{"ConvInteger", 10, 17, 2, m_qconv}, {"QLinearConv", 10, 17, 8, m_qconv},
	{"QLinearAdd", 10, 17, 8, m_qlinear_ms}, {"QLinearMul", 10, 17, 8, m_qlinear_ms},
	{"QLinearGlobalAveragePool", 10, 17, 5, m_qlinear_ms},
	{"QLinearAveragePool", 10, 17, 5, m_qlinear_ms}, {"QLinearConcat", 10, 17, 5, m_qlinear_ms},
};

const imp_mapping *imp_map_find(const char *op_type, int64_t opset)
{
	for (size_t k = 0; k < sizeof(maps) / sizeof(maps[0]); k++)
		if (!strcmp(maps[k].onnx, op_type) && opset >= maps[k].from && opset <= maps[k].to)
			return &maps[k];
	return NULL;
}

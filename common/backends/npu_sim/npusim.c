/* npusim.c: the npu_sim backend's model: SCALE-Sim v2 compute cycles of a
 * GEMM, and per op the lowering, tiling, SRAM/DRAM traffic and stalls
 * (docs/npu-sim.md). Its target description is npu_target.c. */
#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "npusim.h"
#include "npumem.h"
#include "graphjson.h"
#include "spec_int.h"

/* npu_sim vector passes (docs/npu-sim.md): one per elementwise step; exp,
 * tanh, erf, log and sqrt count 2 (neg, abs, reciprocal 1); softmax: max, subtract+exp, sum, divide; pools: one
 * per window tap (avg: + the divide; 1-D pools as 2-D with kH = 1); v2
 * reductions: one pass over their input; layer_norm 6 over its input (sum,
 * subtract, square-accumulate, divide, scale, bias). */
static const struct {
	enpu_npu_class cls;
	int passes;
	int v3;   /* a spec v3 op npu_sim lowers (enpu_npu_lowers_op): a v3 op
		   * without a row saying so is E0210 on npu_sim */
} npu_ops[ENPU_OP_COUNT] = {
	[ENPU_OP_MATMUL] = {ENPU_NPU_GEMM, 0, 0},
	[ENPU_OP_GEMM] = {ENPU_NPU_GEMM, 0, 0},
	[ENPU_OP_ADD] = {ENPU_NPU_VECTOR, 1, 0},
	[ENPU_OP_SUB] = {ENPU_NPU_VECTOR, 1, 0},
	[ENPU_OP_MUL] = {ENPU_NPU_VECTOR, 1, 0},
	[ENPU_OP_DIV] = {ENPU_NPU_VECTOR, 1, 0},
	[ENPU_OP_RELU] = {ENPU_NPU_VECTOR, 1, 0},
	[ENPU_OP_SIGMOID] = {ENPU_NPU_VECTOR, 4, 0},
	[ENPU_OP_TANH] = {ENPU_NPU_VECTOR, 2, 0},
	[ENPU_OP_LEAKY_RELU] = {ENPU_NPU_VECTOR, 2, 0},
	[ENPU_OP_CLIP] = {ENPU_NPU_VECTOR, 2, 0},
	[ENPU_OP_GELU] = {ENPU_NPU_VECTOR, 5, 0},
	[ENPU_OP_SOFTMAX] = {ENPU_NPU_VECTOR, 6, 0},
	[ENPU_OP_CONV2D] = {ENPU_NPU_GEMM, 0, 0},
	[ENPU_OP_MAXPOOL2D] = {ENPU_NPU_VECTOR, 1, 0},
	[ENPU_OP_AVGPOOL2D] = {ENPU_NPU_VECTOR, 1, 0},
	[ENPU_OP_GLOBAL_AVGPOOL] = {ENPU_NPU_VECTOR, 1, 0},
	[ENPU_OP_BATCHNORM] = {ENPU_NPU_VECTOR, 4, 0},
	[ENPU_OP_RESHAPE] = {ENPU_NPU_FREE, 0, 0},
	[ENPU_OP_FLATTEN] = {ENPU_NPU_FREE, 0, 0},
	[ENPU_OP_TRANSPOSE] = {ENPU_NPU_MOVE, 1, 0},
	[ENPU_OP_CONCAT] = {ENPU_NPU_MOVE, 1, 0},
	[ENPU_OP_EXP] = {ENPU_NPU_VECTOR, 2, 0},
	[ENPU_OP_SQRT] = {ENPU_NPU_VECTOR, 2, 0},
	[ENPU_OP_NEG] = {ENPU_NPU_VECTOR, 1, 0},
	[ENPU_OP_ABS] = {ENPU_NPU_VECTOR, 1, 0},
	[ENPU_OP_RECIPROCAL] = {ENPU_NPU_VECTOR, 1, 0},
	[ENPU_OP_ERF] = {ENPU_NPU_VECTOR, 2, 0},
	[ENPU_OP_LOG] = {ENPU_NPU_VECTOR, 2, 0},
	[ENPU_OP_PAD] = {ENPU_NPU_MOVE, 1, 0},
	[ENPU_OP_SLICE] = {ENPU_NPU_MOVE, 1, 0},
	[ENPU_OP_SQUEEZE] = {ENPU_NPU_FREE, 0, 0},
	[ENPU_OP_UNSQUEEZE] = {ENPU_NPU_FREE, 0, 0},
	[ENPU_OP_REDUCE_MEAN] = {ENPU_NPU_VECTOR, 1, 0},
	[ENPU_OP_REDUCE_SUM] = {ENPU_NPU_VECTOR, 1, 0},
	[ENPU_OP_REDUCE_MAX] = {ENPU_NPU_VECTOR, 1, 0},
	[ENPU_OP_REDUCE_MIN] = {ENPU_NPU_VECTOR, 1, 0},
	[ENPU_OP_LAYER_NORM] = {ENPU_NPU_VECTOR, 6, 0},
	[ENPU_OP_CONV_TRANSPOSE2D] = {ENPU_NPU_GEMM, 0, 0},
	[ENPU_OP_RESIZE] = {ENPU_NPU_VECTOR, 1, 0},   /* nearest; linear: 6 (model_vector) */
	[ENPU_OP_POW] = {ENPU_NPU_VECTOR, 5, 0},
	[ENPU_OP_MIN] = {ENPU_NPU_VECTOR, 1, 0},   /* min, max: 1 per input after the first (model_vector) */
	[ENPU_OP_MAX] = {ENPU_NPU_VECTOR, 1, 0},
	[ENPU_OP_HARD_SIGMOID] = {ENPU_NPU_VECTOR, 4, 0},
	[ENPU_OP_HARD_SWISH] = {ENPU_NPU_VECTOR, 5, 0},
	[ENPU_OP_PRELU] = {ENPU_NPU_VECTOR, 2, 0},
	[ENPU_OP_ELU] = {ENPU_NPU_VECTOR, 5, 0},
	[ENPU_OP_SOFTPLUS] = {ENPU_NPU_VECTOR, 5, 0},
	[ENPU_OP_CONV1D] = {ENPU_NPU_GEMM, 0, 0},
	[ENPU_OP_MAXPOOL1D] = {ENPU_NPU_VECTOR, 1, 0},
	[ENPU_OP_AVGPOOL1D] = {ENPU_NPU_VECTOR, 1, 0},
	[ENPU_OP_SPLIT] = {ENPU_NPU_MOVE, 1, 0},
	[ENPU_OP_GATHER] = {ENPU_NPU_MOVE, 1, 0},
	/* spec v3 (docs/npu-sim.md, "int8"): the integer GEMMs on the array
	 * (zero points subtracted on the way in, bias and requantisation on
	 * the way out, no cycles of their own); quantize_linear: divide by the
	 * scale, round and add the zero point, saturate; dequantize_linear:
	 * subtract the zero point, multiply by the scale; qlinear_add: two
	 * scaled terms and the rounding; qlinear_mul: the product and the
	 * rounding; the quantised pools: the float pools' passes (model_vector;
	 * the windowed one a rounding more); qlinear_concat: each element requantised on its
	 * move. A later v3 op is one row here. */
	[ENPU_OP_QUANTIZE_LINEAR] = {ENPU_NPU_VECTOR, 3, 1},
	[ENPU_OP_DEQUANTIZE_LINEAR] = {ENPU_NPU_VECTOR, 2, 1},
	[ENPU_OP_MATMUL_INTEGER] = {ENPU_NPU_GEMM, 0, 1},
	[ENPU_OP_CONV_INTEGER] = {ENPU_NPU_GEMM, 0, 1},
	[ENPU_OP_QLINEAR_MATMUL] = {ENPU_NPU_GEMM, 0, 1},
	[ENPU_OP_QLINEAR_CONV] = {ENPU_NPU_GEMM, 0, 1},
	[ENPU_OP_QLINEAR_ADD] = {ENPU_NPU_VECTOR, 3, 1},
	[ENPU_OP_QLINEAR_MUL] = {ENPU_NPU_VECTOR, 2, 1},
	[ENPU_OP_QLINEAR_GLOBAL_AVGPOOL] = {ENPU_NPU_VECTOR, 1, 1},
	[ENPU_OP_QLINEAR_AVGPOOL] = {ENPU_NPU_VECTOR, 1, 1},
	[ENPU_OP_QLINEAR_CONCAT] = {ENPU_NPU_VECTOR, 1, 1},
};

enpu_npu_class enpu_npu_class_of(const enpu_opdef *d)
{
	return npu_ops[d->id].cls;
}

int enpu_npu_passes_of(const enpu_opdef *d)
{
	return npu_ops[d->id].passes;
}

int enpu_npu_lowers_op(const enpu_opdef *d)
{
	return d->since < 3 || npu_ops[d->id].v3;
}

uint64_t enpu_npu_elem_bytes(const enpu_graph *g, const enpu_npu_target *t, int ti)
{
	if (ti >= 0 && ti < g->n_tensors)
		switch (g->tensors[ti].dtype) {
		case ENPU_DT_I8:
		case ENPU_DT_U8:
		case ENPU_DT_I32:
			return enpu_dtype_size(g->tensors[ti].dtype);
		default:
			break;
		}
	return (uint64_t)t->word_bytes;
}

/* ---- saturating arithmetic ---------------------------------------------- */

static uint64_t cdiv(uint64_t a, uint64_t b)
{
	return b ? a / b + (a % b != 0) : 0;
}

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* ---- cycles ------------------------------------------------------------- */

const char *enpu_npu_class_name(enpu_npu_class c)
{
	switch (c) {
	case ENPU_NPU_GEMM: return "gemm";
	case ENPU_NPU_VECTOR: return "vector";
	case ENPU_NPU_FREE: return "free";
	case ENPU_NPU_MOVE: return "move";
	}
	return "?";
}

/* The dataflow's mapping and folds of one GEMM into st; returns the cycles
 * of one fold. */
static uint64_t gemm_map(const enpu_npu_target *t, uint64_t M, uint64_t N, uint64_t K,
			 enpu_npu_opstats *st, int *sat)
{
	uint64_t R = (uint64_t)t->rows, C = (uint64_t)t->cols;

	switch (t->dataflow) {
	case ENPU_DF_WS: st->Sr = K; st->Sc = N; st->T = M; break;
	case ENPU_DF_IS: st->Sr = K; st->Sc = M; st->T = N; break;
	default: st->Sr = M; st->Sc = N; st->T = K; break;
	}
	st->row_folds = cdiv(st->Sr, R);
	st->col_folds = cdiv(st->Sc, C);
	st->folds = npu_mul(st->row_folds, st->col_folds, sat);
	/* os: T + R + C - 2; ws/is: 2R + C + T - 2 (R, C >= 1: never below 0) */
	if (t->dataflow == ENPU_DF_OS)
		return npu_add(st->T, R + C, sat) - 2;
	return npu_add(st->T, 2 * R + C, sat) - 2;
}

uint64_t enpu_npu_gemm_cycles(const enpu_npu_target *t, uint64_t M, uint64_t N, uint64_t K,
			      uint64_t *folds)
{
	enpu_npu_opstats st;
	int sat = 0;
	uint64_t per = gemm_map(t, M, N, K, &st, &sat);
	uint64_t cyc = npu_mul(st.folds, per, &sat);

	if (folds)
		*folds = st.folds;
	if (t->scalesim_compat && cyc > 0 && cyc != UINT64_MAX)
		cyc--;
	return cyc;
}

/* ---- the model ---------------------------------------------------------- */

static uint64_t numel(const enpu_graph *g, int ti, int *sat)
{
	uint64_t n;

	if (ti < 0 || ti >= g->n_tensors || enpu_shape_numel(&g->tensors[ti].shape, &n)) {
		*sat = 1;
		return 0;
	}
	return n;
}

static uint64_t dim(const enpu_shape *s, int i, int *sat)
{
	if (i < 0 || i >= s->ndim || s->dim[i] < 0) {
		*sat = 1;
		return 0;
	}
	return (uint64_t)s->dim[i];
}

/* The input a GEMM-class op's filter (B operand) is: qlinear_matmul's b
 * and qlinear_conv's w come after the A operand's scale and zero point;
 * every other GEMM's is input 1. Input 0 is the ifmap (A); the rest are
 * its bias, scales and zero points. */
static int filter_input(const enpu_irop *op)
{
	return op->def->id == ENPU_OP_QLINEAR_MATMUL || op->def->id == ENPU_OP_QLINEAR_CONV ? 3 : 1;
}

/* M, N, K, groups and the window geometry (one group) of a GEMM-class
 * op. */
static void gemm_dims(const enpu_graph *g, const enpu_irop *op, enpu_npu_opstats *st,
		      enpu_npu_geom *geo, int *sat)
{
	uint64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1, oh = 0, ow = 0;

	const enpu_shape *a = &g->tensors[op->in[0]].shape;
	const enpu_shape *b = &g->tensors[op->in[filter_input(op)]].shape;
	const enpu_shape *o = &g->tensors[op->out[0]].shape;

	st->groups = 1;
	switch (op->def->id) {
	case ENPU_OP_MATMUL:
	case ENPU_OP_MATMUL_INTEGER:
	case ENPU_OP_QLINEAR_MATMUL: {
		/* NumPy: a 1-D operand contributes no M (or N) dim to the output */
		int nb = o->ndim - (a->ndim > 1) - (b->ndim > 1);

		st->K = dim(a, a->ndim - 1, sat);
		st->M = a->ndim > 1 ? dim(a, a->ndim - 2, sat) : 1;
		st->N = b->ndim > 1 ? dim(b, b->ndim - 1, sat) : 1;
		for (int i = 0; i < nb; i++)
			st->groups = npu_mul(st->groups, dim(o, i, sat), sat);
		break;
	}
	case ENPU_OP_GEMM:
		st->M = dim(a, op->attrs.trans_a ? 1 : 0, sat);
		st->K = dim(a, op->attrs.trans_a ? 0 : 1, sat);
		st->N = dim(b, op->attrs.trans_b ? 0 : 1, sat);
		break;
	case ENPU_OP_CONV_TRANSPOSE2D: {
		/* the dense GEMM of the zero-inserted input (docs/npu-sim.md):
		 * M = N*OH*OW, N = M/group, K = C/group*kH*kW, every tap counted */
		uint64_t grp = op->attrs.group > 0 ? (uint64_t)op->attrs.group : 1;

		st->groups = grp;
		st->M = npu_mul(npu_mul(dim(o, 0, sat), dim(o, 2, sat), sat), dim(o, 3, sat), sat);
		st->N = dim(b, 1, sat);
		st->K = npu_mul(npu_mul(dim(b, 0, sat) / grp, dim(b, 2, sat), sat), dim(b, 3, sat), sat);
		/* the stride-1 convolution of the zero-inserted input */
		kh = dim(b, 2, sat), kw = dim(b, 3, sat), oh = dim(o, 2, sat), ow = dim(o, 3, sat);
		dh = op->attrs.dilations[0] > 0 ? (uint64_t)op->attrs.dilations[0] : 1;
		dw = op->attrs.dilations[1] > 0 ? (uint64_t)op->attrs.dilations[1] : 1;
		break;
	}
	default: {   /* conv2d, conv_integer, qlinear_conv: x NCHW, w (M, C/group, kH, kW),
		      * out (B, M, OH, OW); conv1d as conv2d with kH = OH = 1:
		      * w (M, C/group, k), out (B, M, OL) */
		uint64_t grp = op->attrs.group > 0 ? (uint64_t)op->attrs.group : 1;
		int d2 = o->ndim == 4;

		st->groups = grp;
		st->M = npu_mul(npu_mul(dim(o, 0, sat), d2 ? dim(o, 2, sat) : 1, sat), dim(o, 2 + d2, sat), sat);
		st->N = dim(b, 0, sat) / grp;
		st->K = npu_mul(npu_mul(dim(b, 1, sat), d2 ? dim(b, 2, sat) : 1, sat), dim(b, 2 + d2, sat), sat);
		kh = d2 ? dim(b, 2, sat) : 1, kw = dim(b, 2 + d2, sat);
		oh = d2 ? dim(o, 2, sat) : 1, ow = dim(o, 2 + d2, sat);
		if (d2) {
			sh = op->attrs.strides[0] > 0 ? (uint64_t)op->attrs.strides[0] : 1;
			dh = op->attrs.dilations[0] > 0 ? (uint64_t)op->attrs.dilations[0] : 1;
		}
		sw = op->attrs.strides[d2] > 0 ? (uint64_t)op->attrs.strides[d2] : 1;
		dw = op->attrs.dilations[d2] > 0 ? (uint64_t)op->attrs.dilations[d2] : 1;
		break;
	}
	}
	/* a product: one row of K words per window; a convolution: its windows
	 * over the NHWC feature map (npumem.h), the product's when they do not
	 * add up */
	enpu_npu_geom_matrix(geo, st->M, st->N, st->K);
	if (oh && ow && kh && kw) {
		enpu_npu_geom cv = *geo;

		cv.B = dim(o, 0, sat), cv.OH = oh, cv.OW = ow, cv.kH = kh, cv.kW = kw;
		cv.C = st->K / (kh * kw);
		cv.sH = sh, cv.sW = sw, cv.dH = dh, cv.dW = dw;
		if (!enpu_npu_geom_finish(&cv))
			*geo = cv;
	}
}

static int model_gemm(const enpu_graph *g, const enpu_irop *op, const enpu_npu_target *t,
		      enpu_npu_opstats *st, int *sat, enpu_err *e)
{
	uint64_t R = (uint64_t)t->rows, C = (uint64_t)t->cols, extra = 0;
	uint64_t M, N, K, A, B, Cw, rf, cf, per, macs, rd[3], wr[3];
	uint64_t words[3], drd[3], dwr[3], cstall = 0;
	enpu_npu_geom geo;
	int rc, fi = filter_input(op);

	gemm_dims(g, op, st, &geo, sat);
	/* each operand's words in its tensor's element size (int8: 1) */
	geo.eb[ENPU_SRAM_IFMAP] = enpu_npu_elem_bytes(g, t, op->in[0]);
	geo.eb[ENPU_SRAM_FILTER] = enpu_npu_elem_bytes(g, t, op->in[fi]);
	geo.eb[ENPU_SRAM_OFMAP] = enpu_npu_elem_bytes(g, t, op->out[0]);
	/* the bias, gemm's C, the scales and zero points: each in its size */
	for (int j = 1; j < op->n_in; j++)
		if (j != fi)
			extra = npu_add(extra, npu_mul(numel(g, op->in[j], sat),
						       enpu_npu_elem_bytes(g, t, op->in[j]), sat), sat);
	M = st->M, N = st->N, K = st->K;
	per = gemm_map(t, M, N, K, st, sat);
	rf = st->row_folds, cf = st->col_folds;
	st->compute_cycles = npu_mul(npu_mul(st->groups, st->folds, sat), per, sat);
	if (t->scalesim_compat && st->compute_cycles > 0 && !*sat)
		st->compute_cycles--;

	/* SRAM traffic of one group, in words */
	A = npu_mul(M, K, sat), B = npu_mul(K, N, sat), Cw = npu_mul(M, N, sat);
	words[ENPU_SRAM_IFMAP] = A, words[ENPU_SRAM_FILTER] = B, words[ENPU_SRAM_OFMAP] = Cw;
	switch (t->dataflow) {
	case ENPU_DF_OS:
		rd[0] = npu_mul(A, cf, sat), rd[1] = npu_mul(B, rf, sat), wr[2] = Cw, rd[2] = 0;
		st->tile_words[0] = npu_mul(min64(R, M), K, sat);
		st->tile_words[1] = npu_mul(K, min64(C, N), sat);
		st->tile_words[2] = npu_mul(min64(R, M), min64(C, N), sat);
		break;
	case ENPU_DF_WS:
		rd[1] = B, rd[0] = npu_mul(A, cf, sat), wr[2] = npu_mul(Cw, rf, sat);
		rd[2] = rf ? npu_mul(Cw, rf - 1, sat) : 0;
		st->tile_words[1] = npu_mul(min64(R, K), min64(C, N), sat);
		st->tile_words[0] = npu_mul(M, min64(R, K), sat);
		st->tile_words[2] = npu_mul(M, min64(C, N), sat);
		break;
	default:
		rd[0] = A, rd[1] = npu_mul(B, cf, sat), wr[2] = npu_mul(Cw, rf, sat);
		rd[2] = rf ? npu_mul(Cw, rf - 1, sat) : 0;
		st->tile_words[0] = npu_mul(min64(R, K), min64(C, M), sat);
		st->tile_words[1] = npu_mul(min64(R, K), N, sat);
		st->tile_words[2] = npu_mul(min64(C, M), N, sat);
		break;
	}
	if (*sat)
		return 0;

	/* DRAM words of one group: the default model with reuse (npumem.c),
	 * or SCALE-Sim's own counts and, with a bandwidth, its stalls
	 * (npumem_compat.c); groups run one after the other */
	rc = t->scalesim_compat ? enpu_npu_mem_compat(t, &geo, op->name, drd, dwr, &cstall, e)
				: enpu_npu_mem_default(t, &geo, st, drd, dwr, sat, e);
	if (rc < 0)
		return -1;
	st->stall_cycles = npu_mul(cstall, st->groups, sat);
	for (int i = 0; i < ENPU_SRAM_COUNT; i++) {
		uint64_t cap = (uint64_t)t->sram_kib[i] * 1024;

		st->sram_bytes = npu_add(st->sram_bytes, min64(npu_mul(words[i], geo.eb[i], sat), cap), sat);
		st->sram_reads[i] = rd[i];
		/* ifmap, filter: the words fetched; ofmap: the array's writes */
		st->sram_writes[i] = i == ENPU_SRAM_OFMAP ? wr[2] : drd[i];
		st->dram_read_bytes[i] = npu_mul(drd[i], geo.eb[i], sat);
		st->dram_write_bytes[i] = npu_mul(dwr[i], geo.eb[i], sat);
	}
	for (int i = 0; i < ENPU_SRAM_COUNT; i++) {
		st->sram_reads[i] = npu_mul(st->sram_reads[i], st->groups, sat);
		st->sram_writes[i] = npu_mul(st->sram_writes[i], st->groups, sat);
		st->dram_read_bytes[i] = npu_mul(st->dram_read_bytes[i], st->groups, sat);
		st->dram_write_bytes[i] = npu_mul(st->dram_write_bytes[i], st->groups, sat);
	}
	/* bias / gemm C, scales and zero points: read once with the filters,
	 * applied on the way in (zero points) or out (bias, requantisation)
	 * (SCALE-Sim has none: not in scalesim_compat) */
	if (!t->scalesim_compat)
		st->dram_read_bytes[ENPU_SRAM_FILTER] =
			npu_add(st->dram_read_bytes[ENPU_SRAM_FILTER], extra, sat);

	macs = npu_mul(npu_mul(npu_mul(st->groups, M, sat), N, sat), K, sat);
	if (st->compute_cycles)
		st->utilisation = (double)macs / ((double)st->compute_cycles * (double)(R * C));
	if (st->folds)
		st->mapping_efficiency = (double)st->Sr * (double)st->Sc /
					 ((double)st->folds * (double)(R * C));
	return 0;
}

/* Ops whose vector passes run over their input's elements, not their
 * output's: softmax, global_avgpool, the v2 reductions and layer_norm. */
static int costs_input(enpu_opid id)
{
	return id == ENPU_OP_SOFTMAX || id == ENPU_OP_GLOBAL_AVGPOOL ||
	       id == ENPU_OP_QLINEAR_GLOBAL_AVGPOOL || id == ENPU_OP_LAYER_NORM ||
	       id == ENPU_OP_REDUCE_MEAN || id == ENPU_OP_REDUCE_SUM ||
	       id == ENPU_OP_REDUCE_MAX || id == ENPU_OP_REDUCE_MIN;
}

static void model_vector(const enpu_graph *g, const enpu_irop *op, const enpu_npu_target *t,
			 enpu_npu_opstats *st, int *sat)
{
	uint64_t in = 0, out = 0, in_b = 0, out_b = 0, n;
	uint64_t cap;

	/* elements, and bytes in each tensor's element size (int8: 1) */
	for (int i = 0; i < op->n_out; i++) {
		n = numel(g, op->out[i], sat);
		out = npu_add(out, n, sat);
		out_b = npu_add(out_b, npu_mul(n, enpu_npu_elem_bytes(g, t, op->out[i]), sat), sat);
	}
	for (int i = 0; i < op->n_in; i++) {
		n = numel(g, op->in[i], sat);
		in = npu_add(in, n, sat);
		in_b = npu_add(in_b, npu_mul(n, enpu_npu_elem_bytes(g, t, op->in[i]), sat), sat);
	}
	if (op->def->id == ENPU_OP_GATHER) {   /* the gathered rows and the indices */
		n = numel(g, op->in[1], sat);
		in = npu_add(out, n, sat);
		in_b = npu_add(npu_mul(out, enpu_npu_elem_bytes(g, t, op->in[0]), sat),
			       npu_mul(n, enpu_npu_elem_bytes(g, t, op->in[1]), sat), sat);
	}
	st->elements = out;
	st->passes = enpu_npu_passes_of(op->def);
	if (st->cls == ENPU_NPU_MOVE) {
		st->passes = 1;
	} else if (op->def->id == ENPU_OP_MIN || op->def->id == ENPU_OP_MAX) {
		st->passes = op->n_in > 1 ? op->n_in - 1 : 1;   /* one fold step each; a copy */
	} else if (costs_input(op->def->id)) {
		st->elements = numel(g, op->in[0], sat);
	} else if (op->def->id == ENPU_OP_MAXPOOL1D || op->def->id == ENPU_OP_AVGPOOL1D) {
		/* the 2-D pools' passes with kH = 1: k taps (avg: + the divide) */
		uint64_t taps = npu_add((uint64_t)op->attrs.kernel[0],
				    op->def->id == ENPU_OP_AVGPOOL1D, sat);

		if (taps > INT32_MAX)
			*sat = 1;
		st->passes = (int)min64(taps, INT32_MAX);
	} else if (op->def->id == ENPU_OP_MAXPOOL2D || op->def->id == ENPU_OP_AVGPOOL2D ||
		   op->def->id == ENPU_OP_QLINEAR_AVGPOOL) {
		uint64_t taps = npu_mul((uint64_t)op->attrs.kernel[0], (uint64_t)op->attrs.kernel[1], sat);

		if (op->def->id != ENPU_OP_MAXPOOL2D)   /* the divide (quantised: and the rounding) */
			taps = npu_add(taps, 1 + (op->def->id == ENPU_OP_QLINEAR_AVGPOOL), sat);
		if (taps > INT32_MAX)
			*sat = 1;
		st->passes = (int)min64(taps, INT32_MAX);
	} else if (op->def->id == ENPU_OP_RESIZE && op->attrs.resize_mode == 1) {
		st->passes = 6;   /* linear: six fmaf per output (two per row, the blend) */
	}
	st->compute_cycles = npu_mul(cdiv(st->elements, (uint64_t)t->vector_lanes),
				 (uint64_t)st->passes, sat);
	st->sram_reads[ENPU_SRAM_IFMAP] = in;
	st->sram_writes[ENPU_SRAM_OFMAP] = out;
	st->dram_read_bytes[ENPU_SRAM_IFMAP] = in_b;
	st->dram_write_bytes[ENPU_SRAM_OFMAP] = out_b;
	cap = ((uint64_t)t->sram_kib[ENPU_SRAM_IFMAP] + t->sram_kib[ENPU_SRAM_OFMAP]) * 1024;
	st->sram_bytes = min64(npu_add(in_b, out_b, sat), cap);
}

/* DRAM time hidden behind compute by double buffering; the rest stalls. */
static uint64_t stalls(const enpu_npu_target *t, const enpu_npu_opstats *st, int *sat)
{
	double B = t->dram_bytes_per_cycle, q;
	uint64_t bytes = 0, dt;

	if (!(B > 0))
		return 0;
	for (int i = 0; i < ENPU_SRAM_COUNT; i++) {
		bytes = npu_add(bytes, st->dram_read_bytes[i], sat);
		bytes = npu_add(bytes, st->dram_write_bytes[i], sat);
	}
	if (B == floor(B) && B <= 9007199254740992.0) {   /* integral: exact */
		dt = cdiv(bytes, (uint64_t)B);
	} else {
		q = ceil((double)bytes / B);
		if (q >= 18446744073709551615.0) {
			*sat = 1;
			dt = UINT64_MAX;
		} else {
			dt = (uint64_t)q;
		}
	}
	return dt > st->compute_cycles ? dt - st->compute_cycles : 0;
}

int enpu_npu_model(const enpu_graph *g, const enpu_npu_target *t, uint64_t arena_bytes,
		   enpu_npu_report *r, enpu_err *e)
{
	uint64_t resident = 0;
	int sat = 0;

	memset(r, 0, sizeof(*r));
	r->target = *t;
	if (t->rows < 1 || t->cols < 1 || t->vector_lanes < 1 || t->word_bytes < 1 ||
	    !(t->clock_mhz > 0))
		return enpu_fail(e, ENPU_E_INTERNAL, "npu_sim", NULL, "npu_sim target is not valid");
	if (g->n_ops > 0 && !(r->ops = calloc((size_t)g->n_ops, sizeof(*r->ops))))
		return enpu_fail(e, ENPU_E_NOMEM, "npu_sim", NULL, "out of memory modelling the npu");
	r->n_ops = g->n_ops;
	for (int i = 0; i < g->n_ops; i++) {
		const enpu_irop *op = &g->ops[i];
		enpu_npu_opstats *st = &r->ops[i];

		st->op = i;
		st->cls = enpu_npu_class_of(op->def);
		if (!enpu_opmask_has(t->ops, op->def->id)) {
			char where[256];

			snprintf(where, sizeof(where), "op '%.200s'", op->name);
			enpu_fail(e, ENPU_E_LOWERING, where, "add it to the target's 'ops:' list or use cpu_ref",
				  "backend lowering missing for op '%s' on npu_sim: the target's 'ops:' leaves it out",
				  op->def->name);
			goto fail;
		}
		switch (st->cls) {
		case ENPU_NPU_GEMM:
			if (model_gemm(g, op, t, st, &sat, e) < 0)
				goto fail;
			break;
		case ENPU_NPU_VECTOR:
		case ENPU_NPU_MOVE:
			model_vector(g, op, t, st, &sat);
			break;
		default:
			break;
		}
		/* scalesim_compat's GEMMs stall as SCALE-Sim's USER mode does
		 * (model_gemm); everything else by the overlap rule */
		if (st->cls != ENPU_NPU_GEMM || !t->scalesim_compat)
			st->stall_cycles = stalls(t, st, &sat);
		if (sat) {
			enpu_fail(e, ENPU_E_LIMIT, op->name, "make the model smaller",
				  "npu_sim model of op '%s' overflows a 64-bit count", op->name);
			goto fail;
		}
	}
	for (int i = 0; i < g->n_tensors; i++)
		if (g->tensors[i].kind == ENPU_TK_INPUT || g->tensors[i].kind == ENPU_TK_WEIGHT)
			resident = npu_add(resident, npu_mul(numel(g, i, &sat), enpu_npu_elem_bytes(g, t, i), &sat),
					   &sat);
	r->peak_dram_bytes = npu_add(resident, arena_bytes, &sat);
	sat |= enpu_npu_totals(r);
	if (sat) {
		enpu_fail(e, ENPU_E_LIMIT, g->name ? g->name : "npu_sim", "make the model smaller",
			  "npu_sim totals overflow a 64-bit count");
		goto fail;
	}
	return 0;
fail:
	enpu_npu_report_free(r);
	return -1;
}

/* A GEMM op's utilisation and mapping efficiency from its counts: what
 * model_gemm computes, for a model read back from plan.json. */
void enpu_npu_ratios(const enpu_npu_target *t, enpu_npu_opstats *st)
{
	uint64_t R = (uint64_t)t->rows, C = (uint64_t)t->cols;
	int sat = 0;
	uint64_t macs = npu_mul(npu_mul(npu_mul(st->groups, st->M, &sat), st->N, &sat), st->K, &sat);

	st->utilisation = st->mapping_efficiency = 0;
	if (st->cls != ENPU_NPU_GEMM)
		return;
	if (st->compute_cycles)
		st->utilisation = (double)macs / ((double)st->compute_cycles * (double)(R * C));
	if (st->folds)
		st->mapping_efficiency = (double)st->Sr * (double)st->Sc /
					 ((double)st->folds * (double)(R * C));
}

void enpu_npu_roofline_of(const enpu_npu_opstats *st, enpu_npu_roofline *rf)
{
	int sat = 0;

	memset(rf, 0, sizeof(*rf));
	if (st->cls == ENPU_NPU_GEMM)
		rf->macs = npu_mul(npu_mul(npu_mul(st->groups, st->M, &sat), st->N, &sat), st->K, &sat);
	for (int i = 0; i < ENPU_SRAM_COUNT; i++) {
		rf->dram_bytes = npu_add(rf->dram_bytes, st->dram_read_bytes[i], &sat);
		rf->dram_bytes = npu_add(rf->dram_bytes, st->dram_write_bytes[i], &sat);
	}
	if (st->cls == ENPU_NPU_GEMM && rf->dram_bytes) {
		rf->has_intensity = 1;
		rf->intensity = (double)rf->macs / (double)rf->dram_bytes;
	}
	if (!rf->dram_bytes) {
		rf->has_needed = 1;
	} else if (st->compute_cycles) {
		rf->has_needed = 1;
		rf->needed_bytes_per_cycle = (double)rf->dram_bytes / (double)st->compute_cycles;
	}
	rf->memory_bound = st->stall_cycles > 0;
}

int enpu_npu_totals(enpu_npu_report *r)
{
	const enpu_npu_target *t = &r->target;
	uint64_t macs = 0, gemm_cycles = 0;
	int sat = 0;

	r->compute_cycles = r->stall_cycles = r->dram_read_bytes = r->dram_write_bytes = 0;
	r->peak_sram_bytes = 0;
	r->utilisation = 0;
	for (int i = 0; i < r->n_ops; i++) {
		const enpu_npu_opstats *st = &r->ops[i];

		if (st->cls == ENPU_NPU_GEMM) {
			macs = npu_add(macs, npu_mul(npu_mul(npu_mul(st->groups, st->M, &sat), st->N, &sat), st->K, &sat), &sat);
			gemm_cycles = npu_add(gemm_cycles, st->compute_cycles, &sat);
		}
		r->compute_cycles = npu_add(r->compute_cycles, st->compute_cycles, &sat);
		r->stall_cycles = npu_add(r->stall_cycles, st->stall_cycles, &sat);
		for (int k = 0; k < ENPU_SRAM_COUNT; k++) {
			r->dram_read_bytes = npu_add(r->dram_read_bytes, st->dram_read_bytes[k], &sat);
			r->dram_write_bytes = npu_add(r->dram_write_bytes, st->dram_write_bytes[k], &sat);
		}
		if (st->sram_bytes > r->peak_sram_bytes)
			r->peak_sram_bytes = st->sram_bytes;
	}
	r->total_cycles = npu_add(r->compute_cycles, r->stall_cycles, &sat);
	r->time_us = (double)r->total_cycles / t->clock_mhz;
	if (gemm_cycles)
		r->utilisation = (double)macs / ((double)gemm_cycles * (double)t->rows * (double)t->cols);
	return sat;
}

void enpu_npu_report_free(enpu_npu_report *r)
{
	if (!r)
		return;
	free(r->ops);
	r->ops = NULL;
	r->n_ops = 0;
}

/* ---- JSON --------------------------------------------------------------- */

static json_object *jint64(uint64_t v)
{
	return json_object_new_int64(v > INT64_MAX ? INT64_MAX : (int64_t)v);
}

/* 6 significant digits: stable text across platforms and runs. */
static json_object *jdbl(double d)
{
	char buf[32];

	if (!isfinite(d))
		d = 0;
	snprintf(buf, sizeof(buf), "%.6g", d);
	return json_object_new_double_s(strtod(buf, NULL), buf);
}

/* What a section holds: plan.json before the model's counts were in it
 * (an older build's), plan.json, report.json. */
enum { SEC_PLAN_V1, SEC_PLAN, SEC_REPORT };

static json_object *op_json(const enpu_graph *g, const enpu_npu_opstats *st, int mode,
			    int *bad)
{
	const enpu_irop *op = &g->ops[st->op];
	json_object *o = json_object_new_object(), *x, *y;
	enpu_npu_roofline rf;

	if (!o)
		return *bad = 1, NULL;
	enpu_json_put(o, "name", json_object_new_string(op->name), bad);
	enpu_json_put(o, "op", json_object_new_string(op->def->name), bad);
	enpu_json_put(o, "lowering", json_object_new_string(enpu_npu_class_name(st->cls)), bad);
	if (st->cls == ENPU_NPU_GEMM) {
		if ((x = json_object_new_object())) {
			enpu_json_put(x, "M", jint64(st->M), bad);
			enpu_json_put(x, "N", jint64(st->N), bad);
			enpu_json_put(x, "K", jint64(st->K), bad);
			enpu_json_put(x, "groups", jint64(st->groups), bad);
			enpu_json_put(x, "Sr", jint64(st->Sr), bad);
			enpu_json_put(x, "Sc", jint64(st->Sc), bad);
			enpu_json_put(x, "T", jint64(st->T), bad);
			enpu_json_put(x, "row_folds", jint64(st->row_folds), bad);
			enpu_json_put(x, "col_folds", jint64(st->col_folds), bad);
			enpu_json_put(x, "folds", jint64(st->folds), bad);
			if ((y = json_object_new_object()))
				for (int i = 0; i < ENPU_SRAM_COUNT; i++)
					enpu_json_put(y, enpu_npu_sram_name(i), jint64(st->tile_words[i]), bad);
			enpu_json_put(x, "tiles", y, bad);
		}
		enpu_json_put(o, "gemm", x, bad);
	} else if (st->cls == ENPU_NPU_VECTOR || st->cls == ENPU_NPU_MOVE) {
		enpu_json_put(o, "elements", jint64(st->elements), bad);
		enpu_json_put(o, "passes", json_object_new_int(st->passes), bad);
	}
	if (mode != SEC_PLAN_V1) {
		enpu_json_put(o, "compute_cycles", jint64(st->compute_cycles), bad);
		enpu_json_put(o, "stall_cycles", jint64(st->stall_cycles), bad);
	}
	if (mode == SEC_REPORT) {
		enpu_json_put(o, "utilisation", jdbl(st->utilisation), bad);
		enpu_json_put(o, "mapping_efficiency", jdbl(st->mapping_efficiency), bad);
		enpu_npu_roofline_of(st, &rf);
		if (rf.has_intensity)
			enpu_json_put(o, "arithmetic_intensity", jdbl(rf.intensity), bad);
		if (rf.has_needed)
			enpu_json_put(o, "needed_bytes_per_cycle", jdbl(rf.needed_bytes_per_cycle), bad);
		enpu_json_put(o, "memory_bound", json_object_new_boolean(rf.memory_bound), bad);
	}
	if ((x = json_object_new_object()))
		for (int i = 0; i < ENPU_SRAM_COUNT; i++) {
			if ((y = json_object_new_object())) {
				enpu_json_put(y, "reads", jint64(st->sram_reads[i]), bad);
				enpu_json_put(y, "writes", jint64(st->sram_writes[i]), bad);
			}
			enpu_json_put(x, enpu_npu_sram_name(i), y, bad);
		}
	enpu_json_put(o, "sram", x, bad);
	if ((x = json_object_new_object()))
		for (int i = 0; i < ENPU_SRAM_COUNT; i++) {
			if ((y = json_object_new_object())) {
				enpu_json_put(y, "read_bytes", jint64(st->dram_read_bytes[i]), bad);
				enpu_json_put(y, "write_bytes", jint64(st->dram_write_bytes[i]), bad);
			}
			enpu_json_put(x, enpu_npu_sram_name(i), y, bad);
		}
	enpu_json_put(o, "dram", x, bad);
	enpu_json_put(o, "sram_bytes", jint64(st->sram_bytes), bad);
	return o;
}

static json_object *section(const enpu_graph *g, const enpu_npu_report *r, int mode)
{
	json_object *o, *ops, *tot;
	int bad = 0;

	if (!g || !r || g->n_ops != r->n_ops || !(o = json_object_new_object()))
		return NULL;
	enpu_json_put(o, "target", enpu_npu_target_json(&r->target), &bad);
	if ((ops = json_object_new_array()))
		for (int i = 0; i < r->n_ops; i++) {
			if (r->ops[i].op < 0 || r->ops[i].op >= g->n_ops) {
				bad = 1;
				break;
			}
			enpu_json_push(ops, op_json(g, &r->ops[i], mode, &bad), &bad);
		}
	enpu_json_put(o, "ops", ops, &bad);
	if (mode == SEC_PLAN)
		enpu_json_put(o, "peak_dram_bytes", jint64(r->peak_dram_bytes), &bad);
	if (mode == SEC_REPORT) {
		if ((tot = json_object_new_object())) {
			enpu_json_put(tot, "compute_cycles", jint64(r->compute_cycles), &bad);
			enpu_json_put(tot, "stall_cycles", jint64(r->stall_cycles), &bad);
			enpu_json_put(tot, "cycles", jint64(r->total_cycles), &bad);
			enpu_json_put(tot, "clock_mhz", enpu_json_exact_double(r->target.clock_mhz), &bad);
			enpu_json_put(tot, "time_us", jdbl(r->time_us), &bad);
			enpu_json_put(tot, "dram_read_bytes", jint64(r->dram_read_bytes), &bad);
			enpu_json_put(tot, "dram_write_bytes", jint64(r->dram_write_bytes), &bad);
			enpu_json_put(tot, "peak_sram_bytes", jint64(r->peak_sram_bytes), &bad);
			enpu_json_put(tot, "peak_dram_bytes", jint64(r->peak_dram_bytes), &bad);
			enpu_json_put(tot, "utilisation", jdbl(r->utilisation), &bad);
		}
		enpu_json_put(o, "totals", tot, &bad);
	}
	if (bad) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

json_object *enpu_npu_plan_json(const enpu_graph *g, const enpu_npu_report *r, int counts)
{
	return section(g, r, counts ? SEC_PLAN : SEC_PLAN_V1);
}

json_object *enpu_npu_report_json(const enpu_graph *g, const enpu_npu_report *r)
{
	return section(g, r, SEC_REPORT);
}

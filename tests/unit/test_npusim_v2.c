/* test_npusim_v2.c: the npu_sim model's costs of the spec v2 ops
 * (common/backends/npu_sim/npusim.c, docs/npu-sim.md): vector passes,
 * move and free classes, GEMM-class conv1d and conv_transpose2d, split's
 * outputs. The v1 ops' model is test_npusim.c's. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "npusim.h"
#include "npusim_graphs.h"

/* spec v2 unary ops lower as vector passes (docs/npu-sim.md): exp, erf, log
 * and sqrt cost 2 passes, neg, abs and reciprocal 1. */
Test(npusim, v2_unary_passes)
{
	static const struct {
		enpu_opid id;
		int passes;
	} want[] = {
		{ENPU_OP_EXP, 2}, {ENPU_OP_SQRT, 2}, {ENPU_OP_ERF, 2}, {ENPU_OP_LOG, 2},
		{ENPU_OP_NEG, 1}, {ENPU_OP_ABS, 1}, {ENPU_OP_RECIPROCAL, 1},
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const enpu_opdef *d = enpu_op_by_id(want[i].id);

		cr_assert_not_null(d);
		cr_expect_eq(enpu_npu_class_of(d), ENPU_NPU_VECTOR, "%s", d->name);
		cr_expect_eq(enpu_npu_passes_of(d), want[i].passes, "%s", d->name);
		cr_expect_eq(d->since, 2, "%s is a spec v2 op", d->name);
	}
}

/* spec v2 data movement: pad and slice go through the vector unit's data
 * path once (move class, 1 pass); squeeze and unsqueeze only change the
 * shape (free, like reshape). */
Test(npusim, v2_move_classes)
{
	static const struct {
		enpu_opid id;
		enpu_npu_class cls;
		int passes;
	} want[] = {
		{ENPU_OP_PAD, ENPU_NPU_MOVE, 1}, {ENPU_OP_SLICE, ENPU_NPU_MOVE, 1},
		{ENPU_OP_SQUEEZE, ENPU_NPU_FREE, 0}, {ENPU_OP_UNSQUEEZE, ENPU_NPU_FREE, 0},
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const enpu_opdef *d = enpu_op_by_id(want[i].id);

		cr_assert_not_null(d);
		cr_expect_eq(enpu_npu_class_of(d), want[i].cls, "%s", d->name);
		cr_expect_eq(enpu_npu_passes_of(d), want[i].passes, "%s", d->name);
		cr_expect_eq(d->since, 2, "%s is a spec v2 op", d->name);
	}
}

/* spec v2 reductions and layer_norm (docs/npu-sim.md): vector passes over
 * their INPUT's elements: a reduction 1 pass, layer_norm 6 (with or
 * without scale and bias); reads every input, writes the output. */
Test(npusim, v2_reduce_layer_norm_passes)
{
	static const enpu_opid red[] = {ENPU_OP_REDUCE_MEAN, ENPU_OP_REDUCE_SUM,
					ENPU_OP_REDUCE_MAX, ENPU_OP_REDUCE_MIN};
	enpu_graph *g = mk();
	int x = T(g, "x", ENPU_TK_INPUT, 4, 6, 10), s = T(g, "s", ENPU_TK_WEIGHT, 10);
	int outs[4], ln = T(g, "ln", ENPU_TK_INTERMEDIATE, 4, 6, 10);
	int ln1 = T(g, "ln1", ENPU_TK_INTERMEDIATE, 4, 6, 10);
	enpu_npu_target t = tgt(16, 16, ENPU_DF_OS);
	enpu_npu_report r;

	for (int i = 0; i < 4; i++) {
		char nm[8];
		enpu_irop *o;

		snprintf(nm, sizeof(nm), "r%d", i);
		outs[i] = T(g, nm, ENPU_TK_INTERMEDIATE, 4, 1, 1);
		o = op(g, nm, red[i], 1, (int[]){x}, outs[i]);
		o->attrs.axes.n = 2;
		o->attrs.axes.v[0] = 1;
		o->attrs.axes.v[1] = 2;
	}
	op(g, "ln", ENPU_OP_LAYER_NORM, 3, (int[]){x, s, s}, ln)->attrs.axis = 2;
	op(g, "ln1", ENPU_OP_LAYER_NORM, 1, (int[]){ln}, ln1)->attrs.axis = 2;
	t.vector_lanes = 8;
	model(g, &t, 0, &r);
	for (int i = 0; i < 4; i++) {
		cr_expect_eq(r.ops[i].cls, ENPU_NPU_VECTOR);
		cr_expect_eq(r.ops[i].passes, 1);
		cr_expect_eq(r.ops[i].elements, 240, "a reduction costs its input's elements");
		cr_expect_eq(r.ops[i].compute_cycles, 30);
		EXPECT3(r.ops[i].sram_writes, 0, 0, 4);
		cr_expect_eq(enpu_op_by_id(red[i])->since, 2);
	}
	for (int i = 4; i < 6; i++) {
		cr_expect_eq(r.ops[i].cls, ENPU_NPU_VECTOR);
		cr_expect_eq(r.ops[i].passes, 6);
		cr_expect_eq(r.ops[i].elements, 240);
		cr_expect_eq(r.ops[i].compute_cycles, 180);
	}
	EXPECT3(r.ops[4].sram_reads, 260, 0, 0);
	EXPECT3(r.ops[5].sram_reads, 240, 0, 0);
	enpu_npu_report_free(&r);
	enpu_graph_free(g);
}

/* conv_transpose2d is costed as the dense GEMM of its zero-inserted input
 * (docs/npu-sim.md): M = N*OH*OW, N = M/group, K = C/group*kH*kW; resize
 * is vector passes, 1 for nearest and 6 for linear. */
Test(npusim, v2_conv_transpose2d_and_resize)
{
	enpu_graph *g = mk();
	int x = T(g, "x", ENPU_TK_INPUT, 1, 4, 3, 3), w = T(g, "w", ENPU_TK_WEIGHT, 4, 3, 2, 2);
	int b = T(g, "b", ENPU_TK_WEIGHT, 6), y = T(g, "y", ENPU_TK_INTERMEDIATE, 1, 6, 6, 6);
	int rn = T(g, "rn", ENPU_TK_INTERMEDIATE, 1, 6, 12, 12);
	int rl = T(g, "rl", ENPU_TK_INTERMEDIATE, 1, 6, 12, 12);
	enpu_npu_target t = tgt(4, 4, ENPU_DF_OS);
	enpu_npu_report r;
	const enpu_npu_opstats *s;
	enpu_irop *o = op(g, "ct", ENPU_OP_CONV_TRANSPOSE2D, 3, (int[]){x, w, b}, y);

	o->attrs.group = 2;
	o->attrs.strides[0] = o->attrs.strides[1] = 2;
	op(g, "rn", ENPU_OP_RESIZE, 1, (int[]){y}, rn);
	o = op(g, "rl", ENPU_OP_RESIZE, 1, (int[]){y}, rl);
	o->attrs.resize_mode = 1;
	model(g, &t, 0, &r);
	s = &r.ops[0];
	cr_expect(s->cls == ENPU_NPU_GEMM && s->M == 36 && s->N == 3 && s->K == 8 && s->groups == 2,
		  "gemm (M, N, K, groups) = (%llu, %llu, %llu, %llu), want (36, 3, 8, 2)",
		  (unsigned long long)s->M, (unsigned long long)s->N, (unsigned long long)s->K,
		  (unsigned long long)s->groups);
	/* os (36, 3, 8) on 4x4: 9 x 1 folds of 8 + 4 + 4 - 2 = 14, two groups */
	cr_expect_eq(r.ops[0].compute_cycles, 2 * 9 * 14);
	cr_expect_eq(r.ops[0].dram_read_bytes[ENPU_SRAM_FILTER], 2 * 24 * 4 + 6 * 4,
		     "the bias joins the filter reads");
	cr_expect_eq(r.ops[1].cls, ENPU_NPU_VECTOR);
	cr_expect_eq(r.ops[1].passes, 1);
	cr_expect_eq(r.ops[1].compute_cycles, 864 / 16);
	cr_expect_eq(r.ops[2].passes, 6);
	cr_expect_eq(r.ops[2].compute_cycles, 864 / 16 * 6);
	enpu_npu_report_free(&r);
	enpu_graph_free(g);
}

/* spec v2 elementwise ops (docs/npu-sim.md): vector passes; min and max
 * cost one pass per input after the first (a single input: the copy).
 * Their ids lie past 32: the target's `ops:` set holds them (64 bits). */
Test(npusim, v2_ew_passes)
{
	static const struct {
		enpu_opid id;
		int n_in, passes;
	} c[] = {
		{ENPU_OP_POW, 2, 5}, {ENPU_OP_MIN, 3, 2}, {ENPU_OP_MAX, 1, 1}, {ENPU_OP_MAX, 2, 1},
		{ENPU_OP_HARD_SIGMOID, 1, 4}, {ENPU_OP_HARD_SWISH, 1, 5}, {ENPU_OP_PRELU, 2, 2},
		{ENPU_OP_ELU, 1, 5}, {ENPU_OP_SOFTPLUS, 1, 5},
	};
	enpu_graph *g = mk();
	int x[3], y[9];
	enpu_npu_target t = tgt(4, 4, ENPU_DF_OS);
	enpu_npu_report r;
	enpu_err e = ENPU_ERR_INIT;

	for (int i = 0; i < 3; i++)
		x[i] = T(g, "x", ENPU_TK_INPUT, 1, 100);
	for (int i = 0; i < 9; i++) {
		y[i] = T(g, "y", ENPU_TK_INTERMEDIATE, 1, 100);
		op(g, "op", c[i].id, c[i].n_in, x, y[i]);
		cr_expect_eq(enpu_op_by_id(c[i].id)->since, 2);
	}
	t.vector_lanes = 4;
	t.ops = ENPU_OPMASK(ENPU_OP_POW, ENPU_OP_MIN, ENPU_OP_MAX, ENPU_OP_HARD_SIGMOID,
			    ENPU_OP_HARD_SWISH, ENPU_OP_PRELU, ENPU_OP_ELU, ENPU_OP_SOFTPLUS);
	t.ops_given = 1;
	model(g, &t, 0, &r);
	for (int i = 0; i < 9; i++) {
		cr_expect_eq(r.ops[i].cls, ENPU_NPU_VECTOR, "op %d", i);
		cr_expect_eq(r.ops[i].passes, c[i].passes, "op %d: %d passes", i, r.ops[i].passes);
		cr_expect_eq(r.ops[i].compute_cycles, 25u * (unsigned)c[i].passes, "op %d", i);
	}
	enpu_npu_report_free(&r);
	enpu_opmask_clear(&t.ops, ENPU_OP_SOFTPLUS);
	cr_expect_eq(enpu_npu_model(g, &t, 0, &r, &e), -1);
	cr_expect(strstr(e.message, "'softplus'"), "%s", e.message);
	enpu_graph_free(g);
}

/* spec v2: conv1d is GEMM-class, costed as the conv2d with kH = OH = 1 it
 * is; the 1-D pools are vector passes like the 2-D ones (one per tap, avg
 * + the divide). */
Test(npusim, v2_conv1d_pools_as_2d)
{
	enpu_graph *g = mk(), *h = mk();
	int x = T(g, "x", ENPU_TK_INPUT, 2, 4, 9), w = T(g, "w", ENPU_TK_WEIGHT, 6, 2, 3);
	int b = T(g, "b", ENPU_TK_WEIGHT, 6), y = T(g, "y", ENPU_TK_INTERMEDIATE, 2, 6, 7);
	int p = T(g, "p", ENPU_TK_INTERMEDIATE, 2, 6, 3), q = T(g, "q", ENPU_TK_INTERMEDIATE, 2, 6, 2);
	int x2 = T(h, "x", ENPU_TK_INPUT, 2, 4, 1, 9), w2 = T(h, "w", ENPU_TK_WEIGHT, 6, 2, 1, 3);
	int b2 = T(h, "b", ENPU_TK_WEIGHT, 6), y2 = T(h, "y", ENPU_TK_INTERMEDIATE, 2, 6, 1, 7);
	enpu_npu_target t = tgt(4, 4, ENPU_DF_WS);
	enpu_npu_report r, r2;
	enpu_irop *o;

	op(g, "c", ENPU_OP_CONV1D, 3, (int[]){x, w, b}, y)->attrs.group = 2;
	o = op(g, "m", ENPU_OP_MAXPOOL1D, 1, (int[]){y}, p);
	o->attrs.kernel[0] = 3;
	o = op(g, "a", ENPU_OP_AVGPOOL1D, 1, (int[]){p}, q);
	o->attrs.kernel[0] = 2;
	op(h, "c", ENPU_OP_CONV2D, 3, (int[]){x2, w2, b2}, y2)->attrs.group = 2;
	model(g, &t, 0, &r);
	model(h, &t, 0, &r2);
	cr_expect_eq(r.ops[0].cls, ENPU_NPU_GEMM);
	/* per group: M = 2 * 7, N = 6 / 2, K = 2 * 3 */
	cr_expect_eq(r.ops[0].M, 14);
	cr_expect_eq(r.ops[0].N, 3);
	cr_expect_eq(r.ops[0].K, 6);
	cr_expect_eq(r.ops[0].groups, 2);
	cr_expect_eq(r.ops[0].compute_cycles, r2.ops[0].compute_cycles);
	cr_expect(r.ops[0].compute_cycles > 0);
	for (int i = 0; i < ENPU_SRAM_COUNT; i++) {
		cr_expect_eq(r.ops[0].sram_reads[i], r2.ops[0].sram_reads[i]);
		cr_expect_eq(r.ops[0].dram_read_bytes[i], r2.ops[0].dram_read_bytes[i]);
	}
	/* maxpool1d k 3: 36 outputs, 3 passes over the vector lanes */
	cr_expect_eq(r.ops[1].cls, ENPU_NPU_VECTOR);
	cr_expect_eq(r.ops[1].passes, 3);
	cr_expect_eq(r.ops[1].compute_cycles, 3 * ((36 + (uint64_t)t.vector_lanes - 1) / (uint64_t)t.vector_lanes));
	cr_expect_eq(r.ops[2].passes, 3, "avgpool1d k 2: 2 taps + the divide");
	enpu_npu_report_free(&r);
	enpu_npu_report_free(&r2);
	enpu_graph_free(g);
	enpu_graph_free(h);
}
/* split (spec v2) is a move op over all its outputs: x (3, 10) into
 * (3, 4) + (3, 6); 4 lanes: ceil(30 / 4) = 8 cycles, 30 words in and out. */
Test(npusim, v2_split_moves_every_output)
{
	enpu_graph *g = mk();
	int x = T(g, "x", ENPU_TK_INPUT, 3, 10);
	int a = T(g, "a", ENPU_TK_INTERMEDIATE, 3, 4), b = T(g, "b", ENPU_TK_INTERMEDIATE, 3, 6);
	enpu_npu_target t = tgt(16, 16, ENPU_DF_OS);
	enpu_npu_report r;
	enpu_irop *o = op(g, "s", ENPU_OP_SPLIT, 1, (int[]){x}, a);

	free(o->out);
	o->out = malloc(2 * sizeof(int));
	o->out[0] = a;
	o->out[1] = b;
	o->n_out = 2;
	o->attrs.axis = 1;
	g->tensors[b].producer = 0;
	t.vector_lanes = 4;
	model(g, &t, 0, &r);
	cr_expect_eq(r.ops[0].cls, ENPU_NPU_MOVE);
	cr_expect_eq(r.ops[0].elements, 30);
	cr_expect_eq(r.ops[0].compute_cycles, 8);
	EXPECT3(r.ops[0].sram_reads, 30, 0, 0);
	EXPECT3(r.ops[0].sram_writes, 0, 0, 30);
	EXPECT3(r.ops[0].dram_write_bytes, 0, 0, 120);
	enpu_npu_report_free(&r);
	enpu_graph_free(g);
}

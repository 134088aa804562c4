/* test_npusim_q.c: the npu_sim model of spec v3's quantised ops
 * (common/backends/npu_sim/npusim.c, docs/npu-sim.md "int8"): their rows
 * (GEMM class on the array, vector passes), each tensor's element size in
 * the SRAM and DRAM counts, what word_bytes still means, and the bias,
 * scale and zero-point reads. The SCALE-Sim table in int8 and the default
 * model's quarter are test_npusim_scalesim.c's. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "npusim.h"
#include "npusim_graphs.h"

static int dt(enpu_graph *g, int t, enpu_dtype d)
{
	g->tensors[t].dtype = d;
	return t;
}

static int scalar(enpu_graph *g, const char *name, enpu_dtype d)
{
	return dt(g, tens(g, name, ENPU_TK_WEIGHT, 0, NULL), d);
}

/* The integer GEMMs lower on the array, quantize_linear and
 * dequantize_linear on the vector unit (3 and 2 passes); every v1/v2 op
 * lowers as before. */
Test(npusim_q, rows)
{
	static const struct {
		enpu_opid id;
		enpu_npu_class cls;
		int passes;
	} want[] = {
		{ENPU_OP_QUANTIZE_LINEAR, ENPU_NPU_VECTOR, 3}, {ENPU_OP_DEQUANTIZE_LINEAR, ENPU_NPU_VECTOR, 2},
		{ENPU_OP_MATMUL_INTEGER, ENPU_NPU_GEMM, 0}, {ENPU_OP_CONV_INTEGER, ENPU_NPU_GEMM, 0},
		{ENPU_OP_QLINEAR_MATMUL, ENPU_NPU_GEMM, 0}, {ENPU_OP_QLINEAR_CONV, ENPU_NPU_GEMM, 0},
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const enpu_opdef *d = enpu_op_by_id(want[i].id);

		cr_assert_not_null(d);
		cr_expect_eq(d->since, 3, "%s is a spec v3 op", d->name);
		cr_expect(enpu_npu_lowers_op(d), "npu_sim lowers %s", d->name);
		cr_expect_eq(enpu_npu_class_of(d), want[i].cls, "%s", d->name);
		cr_expect_eq(enpu_npu_passes_of(d), want[i].passes, "%s", d->name);
	}
	for (int i = 0; i < ENPU_OP_COUNT; i++) {
		const enpu_opdef *d = enpu_op_by_id((enpu_opid)i);

		if (d->since < 3)
			cr_expect(enpu_npu_lowers_op(d), "npu_sim lowers %s", d->name);
	}
}

/* int8 and uint8 are 1 byte, int32 4, whatever word_bytes says; float32
 * (and gather's int64 indices) are word_bytes. */
Test(npusim_q, element_sizes)
{
	enpu_graph *g = mk();
	enpu_npu_target t = tgt(4, 4, ENPU_DF_WS);
	int f = T(g, "f", ENPU_TK_INPUT, 3), i8 = dt(g, T(g, "i8", ENPU_TK_INPUT, 3), ENPU_DT_I8);
	int u8 = dt(g, T(g, "u8", ENPU_TK_INPUT, 3), ENPU_DT_U8);
	int i32 = dt(g, T(g, "i32", ENPU_TK_INPUT, 3), ENPU_DT_I32);
	int i64 = dt(g, T(g, "i64", ENPU_TK_INPUT, 3), ENPU_DT_I64);

	for (int wb = 1; wb <= 8; wb *= 2) {
		t.word_bytes = wb;
		cr_expect_eq(enpu_npu_elem_bytes(g, &t, f), (uint64_t)wb);
		cr_expect_eq(enpu_npu_elem_bytes(g, &t, i64), (uint64_t)wb);
		cr_expect_eq(enpu_npu_elem_bytes(g, &t, i8), 1);
		cr_expect_eq(enpu_npu_elem_bytes(g, &t, u8), 1);
		cr_expect_eq(enpu_npu_elem_bytes(g, &t, i32), 4);
	}
	enpu_graph_free(g);
}

/* A conv that fits its SRAMs (every operand fetched once) as conv2d with
 * a float bias and as qlinear_conv: the same cycles and SRAM words; DRAM
 * bytes a quarter for the ifmap, the weights and the int8 ofmap; the
 * filter part adds the int32 bias (4 each, as the float bias), the float32
 * scales (4 each) and the int8 zero points (1 each), read once per op. */
Test(npusim_q, qlinear_conv_quarter)
{
	enpu_graph *gf = mk(), *gq = mk();
	enpu_npu_target t = tgt(4, 4, ENPU_DF_WS);
	enpu_npu_report rf, rq;
	const enpu_npu_opstats *f, *q;
	int x, w, b, o, in[9];

	x = T(gf, "x", ENPU_TK_INPUT, 1, 3, 8, 8), w = T(gf, "w", ENPU_TK_WEIGHT, 6, 3, 3, 3);
	b = T(gf, "b", ENPU_TK_WEIGHT, 6), o = T(gf, "o", ENPU_TK_INTERMEDIATE, 1, 6, 6, 6);
	op(gf, "c", ENPU_OP_CONV2D, 3, (int[]){x, w, b}, o);
	in[0] = dt(gq, T(gq, "x", ENPU_TK_INPUT, 1, 3, 8, 8), ENPU_DT_I8);
	in[1] = scalar(gq, "xs", ENPU_DT_F32), in[2] = scalar(gq, "xz", ENPU_DT_I8);
	in[3] = dt(gq, T(gq, "w", ENPU_TK_WEIGHT, 6, 3, 3, 3), ENPU_DT_I8);
	in[4] = T(gq, "ws", ENPU_TK_WEIGHT, 6), in[5] = dt(gq, T(gq, "wz", ENPU_TK_WEIGHT, 6), ENPU_DT_I8);
	in[6] = scalar(gq, "ys", ENPU_DT_F32), in[7] = scalar(gq, "yz", ENPU_DT_I8);
	in[8] = dt(gq, T(gq, "bias", ENPU_TK_WEIGHT, 6), ENPU_DT_I32);
	op(gq, "c", ENPU_OP_QLINEAR_CONV, 9, in,
	       dt(gq, T(gq, "o", ENPU_TK_INTERMEDIATE, 1, 6, 6, 6), ENPU_DT_I8));
	model(gf, &t, 0, &rf);
	model(gq, &t, 0, &rq);
	f = &rf.ops[0], q = &rq.ops[0];
	cr_expect_eq(q->cls, ENPU_NPU_GEMM);
	cr_expect_eq(q->M, 36);
	cr_expect_eq(q->N, 6);
	cr_expect_eq(q->K, 27);
	cr_expect_eq(q->compute_cycles, f->compute_cycles);
	EXPECT3(q->sram_reads, f->sram_reads[0], f->sram_reads[1], f->sram_reads[2]);
	EXPECT3(q->sram_writes, f->sram_writes[0], f->sram_writes[1], f->sram_writes[2]);
	/* float: the 8x8x3 map, the 162 weights + 6 bias, the 216 outputs, 4 bytes each */
	cr_expect_eq(f->dram_read_bytes[0], 192 * 4);
	cr_expect_eq(f->dram_read_bytes[1], 162 * 4 + 6 * 4);
	cr_expect_eq(f->dram_write_bytes[2], 216 * 4);
	EXPECT3(q->dram_read_bytes, 192, 162 + 6 * 4 + (1 + 6 + 1) * 4 + (1 + 6 + 1), 0);
	EXPECT3(q->dram_write_bytes, 0, 0, 216);
	/* resident SRAM: the operands in their sizes */
	cr_expect_eq(f->sram_bytes, (36 * 27 + 27 * 6 + 36 * 6) * 4);
	cr_expect_eq(q->sram_bytes, 36 * 27 + 27 * 6 + 36 * 6);
	/* peak DRAM: inputs and weights in their sizes */
	cr_expect_eq(rf.peak_dram_bytes, (192 + 162 + 6) * 4);
	cr_expect_eq(rq.peak_dram_bytes, 192 + 4 + 1 + 162 + 24 + 6 + 4 + 1 + 24);
	enpu_npu_report_free(&rf);
	enpu_npu_report_free(&rq);
	enpu_graph_free(gf);
	enpu_graph_free(gq);
}

/* matmul_integer: uint8 operands, int32 ofmap (4 bytes, the float
 * output's size); its zero points read with the filter. */
Test(npusim_q, matmul_integer_int32_ofmap)
{
	enpu_graph *g = mk();
	enpu_npu_target t = tgt(4, 4, ENPU_DF_OS);
	enpu_npu_report r;
	const enpu_npu_opstats *s;
	int a = dt(g, T(g, "a", ENPU_TK_INPUT, 2, 8, 16), ENPU_DT_U8);
	int b = dt(g, T(g, "b", ENPU_TK_WEIGHT, 16, 5), ENPU_DT_U8);
	int az = dt(g, T(g, "az", ENPU_TK_WEIGHT, 1), ENPU_DT_U8);
	int bz = dt(g, T(g, "bz", ENPU_TK_WEIGHT, 5), ENPU_DT_U8);
	int o = dt(g, T(g, "o", ENPU_TK_INTERMEDIATE, 2, 8, 5), ENPU_DT_I32);

	op(g, "mm", ENPU_OP_MATMUL_INTEGER, 4, (int[]){a, b, az, bz}, o);
	model(g, &t, 0, &r);
	s = &r.ops[0];
	cr_expect_eq(s->M, 8);
	cr_expect_eq(s->N, 5);
	cr_expect_eq(s->K, 16);
	cr_expect_eq(s->groups, 2);
	cr_expect_eq(s->compute_cycles, enpu_npu_gemm_cycles(&t, 8, 5, 16, NULL) * 2);
	/* everything fits: each operand once; b per batch as matmul's */
	EXPECT3(s->dram_read_bytes, 2 * 8 * 16, 2 * 16 * 5 + 1 + 5, 0);
	EXPECT3(s->dram_write_bytes, 0, 0, 2 * 8 * 5 * 4);
	enpu_npu_report_free(&r);
	enpu_graph_free(g);
}

/* quantize_linear reads float32 and writes int8; dequantize_linear the
 * other way; passes over the output's elements. */
Test(npusim_q, quantize_vector)
{
	enpu_graph *g = mk();
	enpu_npu_target t = tgt(4, 4, ENPU_DF_OS);
	enpu_npu_report r;
	int x = T(g, "x", ENPU_TK_INPUT, 4, 40), s = scalar(g, "s", ENPU_DT_F32);
	int z = scalar(g, "z", ENPU_DT_I8);
	int q = dt(g, T(g, "q", ENPU_TK_INTERMEDIATE, 4, 40), ENPU_DT_I8);
	int y = T(g, "y", ENPU_TK_INTERMEDIATE, 4, 40);

	op(g, "q", ENPU_OP_QUANTIZE_LINEAR, 3, (int[]){x, s, z}, q);
	op(g, "d", ENPU_OP_DEQUANTIZE_LINEAR, 3, (int[]){q, s, z}, y);
	t.vector_lanes = 16;
	model(g, &t, 0, &r);
	cr_expect_eq(r.ops[0].compute_cycles, 10 * 3);
	cr_expect_eq(r.ops[1].compute_cycles, 10 * 2);
	cr_expect_eq(r.ops[0].dram_read_bytes[0], 160 * 4 + 4 + 1);
	cr_expect_eq(r.ops[0].dram_write_bytes[2], 160);
	cr_expect_eq(r.ops[1].dram_read_bytes[0], 160 + 4 + 1);
	cr_expect_eq(r.ops[1].dram_write_bytes[2], 160 * 4);
	cr_expect_eq(r.ops[0].sram_reads[0], 162);
	cr_expect_eq(r.ops[0].sram_bytes, 160 * 4 + 4 + 1 + 160);
	enpu_npu_report_free(&r);
	enpu_graph_free(g);
}

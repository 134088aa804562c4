/* test_npusim.c: the npu_sim model (common/backends/npu_sim/npusim.c).
 * GEMM cycles against the hand-derived table
 * tests/data/npusim/gemm_cycles.tsv, memory counts and stalls on
 * hand-worked cases, vector costs and the model's JSON forms. The target
 * description is test_npu_target.c's. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "npusim.h"
#include "spec.h"
#include "spec_int.h"
#include "buf.h"
#include "pipeline.h"

/* ---- (a) the GEMM cycle table -------------------------------------------- */

Test(npusim, gemm_cycle_table)
{
	char path[512], line[512], df[8];
	unsigned long long M, N, K, cyc, folds;
	int rows, cols, compat, n = 0, lineno = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/npusim/gemm_cycles.tsv", tpl_data_dir("npusim"));
	f = fopen(path, "r");
	cr_assert(f, "cannot open %s", path);
	while (fgets(line, sizeof(line), f)) {
		enpu_npu_target t;
		uint64_t got, gf = 0;

		lineno++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		cr_assert_eq(sscanf(line, "%llu %llu %llu %d %d %7s %d %llu %llu", &M, &N, &K, &rows,
				    &cols, df, &compat, &cyc, &folds), 9, "line %d malformed", lineno);
		enpu_npu_target_default(&t);
		t.rows = rows;
		t.cols = cols;
		t.dataflow = !strcmp(df, "os") ? ENPU_DF_OS : !strcmp(df, "ws") ? ENPU_DF_WS : ENPU_DF_IS;
		cr_assert(!strcmp(df, "os") || !strcmp(df, "ws") || !strcmp(df, "is"), "line %d", lineno);
		t.scalesim_compat = compat;
		got = enpu_npu_gemm_cycles(&t, M, N, K, &gf);
		cr_expect_eq(got, cyc, "line %d: %llu %llu %llu on %dx%d %s compat=%d: %llu cycles, want %llu",
			     lineno, M, N, K, rows, cols, df, compat, (unsigned long long)got, cyc);
		cr_expect_eq(gf, folds, "line %d: %llu folds, want %llu", lineno,
			     (unsigned long long)gf, folds);
		n++;
	}
	fclose(f);
	cr_expect_geq(n, 40, "only %d rows in the table", n);
}

Test(npusim, alexnet_conv1_compat)
{
	enpu_npu_target t;
	uint64_t folds;

	enpu_npu_target_default(&t);
	t.rows = t.cols = 32;
	t.dataflow = ENPU_DF_WS;
	cr_expect_eq(enpu_npu_gemm_cycles(&t, 55 * 55, 96, 363, &folds), 112284);
	cr_expect_eq(folds, 36);
	t.scalesim_compat = 1;
	cr_expect_eq(enpu_npu_gemm_cycles(&t, 55 * 55, 96, 363, NULL), 112283);
}

Test(npusim, gemm_cycles_saturate)
{
	enpu_npu_target t;

	enpu_npu_target_default(&t);
	t.rows = t.cols = 1;
	cr_expect_eq(enpu_npu_gemm_cycles(&t, UINT64_MAX / 2, UINT64_MAX / 2, 5, NULL), UINT64_MAX);
}

#include "npusim_graphs.h"

/* ---- (b) memory counts, hand-worked ------------------------------------- */

/* M=3, N=3, K=4 on 2x2, everything fits (64 KiB SRAMs), 4-byte words.
 * A = 12, B = 12, C = 9 words. */
Test(npusim, mem_os_fits)
{
	enpu_graph *g = matmul_graph(3, 3, 4);
	enpu_npu_target t = tgt(2, 2, ENPU_DF_OS);
	enpu_npu_report r;
	const enpu_npu_opstats *s;

	model(g, &t, 0, &r);
	s = &r.ops[0];
	cr_expect_eq(s->cls, ENPU_NPU_GEMM);
	/* (Sr,Sc,T) = (3,3,4): 2x2 folds, per fold 4+2+2-2 = 6 */
	cr_expect_eq(s->Sr, 3); cr_expect_eq(s->Sc, 3); cr_expect_eq(s->T, 4);
	cr_expect_eq(s->row_folds, 2); cr_expect_eq(s->col_folds, 2); cr_expect_eq(s->folds, 4);
	cr_expect_eq(s->compute_cycles, 24);
	/* ifmap A*col_folds, filter B*row_folds, ofmap written once */
	EXPECT3(s->sram_reads, 24, 24, 0);
	EXPECT3(s->sram_writes, 12, 12, 9);
	EXPECT3(s->dram_read_bytes, 48, 48, 0);
	EXPECT3(s->dram_write_bytes, 0, 0, 36);
	/* tiles: min(R,M)*K, K*min(C,N), min(R,M)*min(C,N) */
	EXPECT3(s->tile_words, 8, 8, 4);
	cr_expect_eq(s->sram_bytes, 48 + 48 + 36);
	cr_expect_float_eq(s->utilisation, 36.0 / (24 * 4), 1e-12);
	cr_expect_float_eq(s->mapping_efficiency, 9.0 / 16, 1e-12);
	cr_expect_eq(s->stall_cycles, 0);
	cr_expect_eq(r.total_cycles, 24);
	cr_expect_eq(r.dram_read_bytes, 96);
	cr_expect_eq(r.dram_write_bytes, 36);
	/* inputs + weights: 24 words * 4 bytes, plus the arena (none) */
	cr_expect_eq(r.peak_dram_bytes, 96);
	cr_expect_eq(r.peak_sram_bytes, 132);
	cr_expect_float_eq(r.utilisation, 0.375, 1e-12);
	enpu_npu_report_free(&r);
	enpu_graph_free(g);
}

Test(npusim, mem_ws_fits)
{
	enpu_graph *g = matmul_graph(3, 3, 4);
	enpu_npu_target t = tgt(2, 2, ENPU_DF_WS);
	enpu_npu_report r;
	const enpu_npu_opstats *s;

	model(g, &t, 0, &r);
	s = &r.ops[0];
	/* (Sr,Sc,T) = (K,N,M) = (4,3,3): 2x2 folds, per fold 2*2+2+3-2 = 7 */
	cr_expect_eq(s->Sr, 4); cr_expect_eq(s->Sc, 3); cr_expect_eq(s->T, 3);
	cr_expect_eq(s->compute_cycles, 28);
	/* filter B once, ifmap A*col_folds, ofmap C*row_folds writes and
	 * C*(row_folds-1) partial-sum reads */
	EXPECT3(s->sram_reads, 24, 12, 9);
	EXPECT3(s->sram_writes, 12, 12, 18);
	EXPECT3(s->dram_read_bytes, 48, 48, 0);
	EXPECT3(s->dram_write_bytes, 0, 0, 36);
	/* tiles: M*min(R,K), min(R,K)*min(C,N), M*min(C,N) */
	EXPECT3(s->tile_words, 6, 4, 6);
	enpu_npu_report_free(&r);
	enpu_graph_free(g);
}

Test(npusim, mem_is_fits)
{
	enpu_graph *g = matmul_graph(3, 3, 4);
	enpu_npu_target t = tgt(2, 2, ENPU_DF_IS);
	enpu_npu_report r;
	const enpu_npu_opstats *s;

	model(g, &t, 0, &r);
	s = &r.ops[0];
	/* (Sr,Sc,T) = (K,M,N) = (4,3,3) */
	cr_expect_eq(s->Sr, 4); cr_expect_eq(s->Sc, 3); cr_expect_eq(s->T, 3);
	cr_expect_eq(s->compute_cycles, 28);
	/* ifmap A once, filter B*col_folds, ofmap as ws */
	EXPECT3(s->sram_reads, 12, 24, 9);
	EXPECT3(s->sram_writes, 12, 12, 18);
	EXPECT3(s->dram_read_bytes, 48, 48, 0);
	EXPECT3(s->dram_write_bytes, 0, 0, 36);
	/* tiles: min(R,K)*min(C,M), min(R,K)*N, min(C,M)*N */
	EXPECT3(s->tile_words, 4, 6, 6);
	enpu_npu_report_free(&r);
	enpu_graph_free(g);
}

/* M=16, N=12, K=10 with 1 KiB SRAMs (512-byte working halves): A = 160 words
 * = 640 B spills, B = 120 words = 480 B fits, C = 192 words = 768 B spills. */
Test(npusim, mem_os_spills)
{
	enpu_graph *g = matmul_graph(16, 12, 10);
	enpu_npu_target t = tgt(2, 2, ENPU_DF_OS);
	enpu_npu_report r;
	const enpu_npu_opstats *s;

	t.sram_kib[0] = t.sram_kib[1] = t.sram_kib[2] = 1;
	model(g, &t, 0, &r);
	s = &r.ops[0];
	/* (16,12,10): 8x6 = 48 folds of 10+2+2-2 = 12 */
	cr_expect_eq(s->folds, 48);
	cr_expect_eq(s->compute_cycles, 576);
	EXPECT3(s->sram_reads, 960, 960, 0);
	/* ifmap: 160 words demanded 6 times (960) in a 128-word half: 160 once,
	 * and of the 800 demanded again the 32/160 that do not fit: 320.
	 * filter: each column fold's 20-word tile fits, fetched once: 120 */
	EXPECT3(s->sram_writes, 320, 120, 192);
	EXPECT3(s->dram_read_bytes, 1280, 480, 0);
	EXPECT3(s->dram_write_bytes, 0, 0, 768);
	cr_expect_eq(s->sram_bytes, 640 + 480 + 768);
	enpu_npu_report_free(&r);
	enpu_graph_free(g);
}

static enpu_npu_opstats ws_spill(double bpc, uint64_t *total)
{
	enpu_graph *g = matmul_graph(16, 12, 10);
	enpu_npu_target t = tgt(2, 2, ENPU_DF_WS);
	enpu_npu_report r;
	enpu_npu_opstats s;

	t.sram_kib[0] = t.sram_kib[1] = t.sram_kib[2] = 1;
	t.dram_bytes_per_cycle = bpc;
	model(g, &t, 0, &r);
	s = r.ops[0];
	*total = r.total_cycles;
	cr_expect_eq(r.stall_cycles, s.stall_cycles);
	cr_expect_eq(r.compute_cycles, s.compute_cycles);
	enpu_npu_report_free(&r);
	enpu_graph_free(g);
	return s;
}

Test(npusim, mem_ws_spills)
{
	uint64_t total;
	enpu_npu_opstats s = ws_spill(0, &total);

	/* (K,N,M) = (10,12,16): 5x6 = 30 folds of 4+2+16-2 = 20 */
	cr_expect_eq(s.compute_cycles, 600);
	EXPECT3(s.sram_reads, 960, 120, 768);
	EXPECT3(s.sram_writes, 320, 120, 960);
	/* ifmap as in mem_os_spills (its 5 row-fold tiles, again for each of
	 * 6 column folds); each column fold's 32 partial sums fit the ofmap
	 * half: written once, never read back */
	EXPECT3(s.dram_read_bytes, 1280, 480, 0);
	EXPECT3(s.dram_write_bytes, 0, 0, 768);
	cr_expect_eq(s.stall_cycles, 0);
	cr_expect_eq(total, 600);
}

Test(npusim, stalls)
{
	uint64_t total;
	enpu_npu_opstats s;

	/* 1280 + 480 + 768 = 2528 DRAM bytes */
	s = ws_spill(4, &total);          /* 632 DRAM cycles vs 600 compute */
	cr_expect_eq(s.stall_cycles, 32);
	cr_expect_eq(total, 632);
	s = ws_spill(100, &total);        /* 26 cycles: hidden */
	cr_expect_eq(s.stall_cycles, 0);
	cr_expect_eq(total, 600);
	s = ws_spill(2.5, &total);        /* ceil(1011.2) = 1012 */
	cr_expect_eq(s.stall_cycles, 412);
	s = ws_spill(0.5, &total);        /* 5056 DRAM cycles */
	cr_expect_eq(s.stall_cycles, 4456);
	cr_expect_eq(total, 5056);
}

/* The roofline of the ws_spill case, by hand: 16*12*10 = 1920 MACs over
 * 2528 DRAM bytes = 0.759494 MACs/byte; 2528 bytes in 600 compute cycles
 * need 4.21333 bytes/cycle: below it the op stalls, at or above it not. */
Test(npusim, roofline)
{
	uint64_t total;
	enpu_npu_opstats s;
	enpu_npu_roofline rf;

	s = ws_spill(4.2, &total);        /* ceil(601.9) = 602 > 600 */
	enpu_npu_roofline_of(&s, &rf);
	cr_expect_eq(rf.macs, 1920);
	cr_expect_eq(rf.dram_bytes, 2528);
	cr_expect(rf.has_intensity && rf.has_needed);
	cr_expect_float_eq(rf.intensity, 1920.0 / 2528, 1e-12);
	cr_expect_float_eq(rf.needed_bytes_per_cycle, 2528.0 / 600, 1e-12);
	cr_expect_eq(s.stall_cycles, 2);
	cr_expect(rf.memory_bound);
	s = ws_spill(4.25, &total);       /* ceil(594.8) = 595 <= 600 */
	enpu_npu_roofline_of(&s, &rf);
	cr_expect_eq(s.stall_cycles, 0);
	cr_expect(!rf.memory_bound);
	cr_expect_float_eq(rf.needed_bytes_per_cycle, 2528.0 / 600, 1e-12);
	s = ws_spill(0, &total);          /* no limit: never memory-bound */
	enpu_npu_roofline_of(&s, &rf);
	cr_expect(!rf.memory_bound);
	cr_expect_float_eq(rf.intensity, 1920.0 / 2528, 1e-12);
	/* a vector op has no MACs: no intensity, but a needed bandwidth */
	memset(&s, 0, sizeof(s));
	s.cls = ENPU_NPU_VECTOR;
	s.compute_cycles = 8;
	s.dram_read_bytes[ENPU_SRAM_IFMAP] = 100;
	s.dram_write_bytes[ENPU_SRAM_OFMAP] = 28;
	s.stall_cycles = 24;
	enpu_npu_roofline_of(&s, &rf);
	cr_expect(!rf.has_intensity);
	cr_expect(rf.has_needed && rf.memory_bound);
	cr_expect_float_eq(rf.needed_bytes_per_cycle, 16.0, 1e-12);
	/* a free op moves nothing: needs 0 bytes/cycle */
	memset(&s, 0, sizeof(s));
	s.cls = ENPU_NPU_FREE;
	enpu_npu_roofline_of(&s, &rf);
	cr_expect(!rf.has_intensity && rf.has_needed && !rf.memory_bound);
	cr_expect_float_eq(rf.needed_bytes_per_cycle, 0.0, 1e-12);
}

/* Towards unlimited bandwidth the stalls vanish: total cycles = compute
 * cycles (SCALE-Sim's CALC mode counts no stalls). */
Test(npusim, stalls_vanish_at_high_bandwidth)
{
	uint64_t total;
	enpu_npu_opstats s;

	s = ws_spill(1e12, &total);
	cr_expect_eq(s.stall_cycles, 0);
	cr_expect_eq(total, s.compute_cycles);
	cr_expect_eq(total, 600);
	s = ws_spill(2528.0 / 600, &total);   /* at the needed bandwidth, within rounding */
	cr_expect_leq(s.stall_cycles, 1);
}

/* Partial sums that do not fit: ws, M=100, N=4, K=6 on 2x2, 128-word
 * halves. Column fold tiles of 100 x 2 = 200 words accumulate over 3 row
 * folds: 72 spill (written, read back) after each of the first 2. */
Test(npusim, mem_ws_psum_spill)
{
	enpu_graph *g = matmul_graph(100, 4, 6);
	enpu_npu_target t = tgt(2, 2, ENPU_DF_WS);
	enpu_npu_report r;
	const enpu_npu_opstats *s;

	t.sram_kib[0] = t.sram_kib[1] = t.sram_kib[2] = 1;
	model(g, &t, 0, &r);
	s = &r.ops[0];
	cr_expect_eq(s->row_folds, 3); cr_expect_eq(s->col_folds, 2);
	/* ofmap: 2 x (200 + 2*72) written, 2 x 2*72 read back */
	EXPECT3(s->dram_write_bytes, 0, 0, 688 * 4);
	/* ifmap: 600 words demanded twice: 600 + 600*(600-128)/600 = 1072 */
	EXPECT3(s->dram_read_bytes, 1072 * 4, 24 * 4, 288 * 4);
	enpu_npu_report_free(&r);
	enpu_graph_free(g);
}

/* Window overlap: a 3x3 conv, 1 channel, 20x20 input (18x18 windows), ws
 * on 4x4 with 128-word halves. Row fold 0 reads offsets (0,0) (0,1) (0,2)
 * (1,0): rows 0-17 x cols 0-19 and row 18 x cols 0-17, 378 pixels for
 * 1296 im2col words; fold 1, offsets (1,1) (1,2) (2,0) (2,1): 342 + 342 -
 * 306 = 378; fold 2, offset (2,2): 324. A repeat comes back within 3
 * output rows of windows (54), whose pixels (78 in folds 0 and 1) fit:
 * each tile costs its unique pixels. The folds demand 378 + 378 + 324 =
 * 1080 of the 400-pixel map: 400 + ceil(680*272/400) = 863. */
Test(npusim, mem_ws_window_reuse)
{
	enpu_graph *g = mk();
	int x = T(g, "x", ENPU_TK_INPUT, 1, 1, 20, 20), w = T(g, "w", ENPU_TK_WEIGHT, 2, 1, 3, 3);
	int y = T(g, "y", ENPU_TK_INTERMEDIATE, 1, 2, 18, 18);
	enpu_npu_target t = tgt(4, 4, ENPU_DF_WS);
	enpu_npu_report r;

	op(g, "c", ENPU_OP_CONV2D, 2, (int[]){x, w}, y);
	t.sram_kib[0] = t.sram_kib[1] = t.sram_kib[2] = 1;
	model(g, &t, 0, &r);
	cr_expect_eq(r.ops[0].row_folds, 3);
	/* ofmap: the 324 x 2 tile spills 520 words after folds 0 and 1 */
	EXPECT3(r.ops[0].dram_read_bytes, 863 * 4, 18 * 4, 1040 * 4);
	EXPECT3(r.ops[0].dram_write_bytes, 0, 0, 1688 * 4);
	enpu_npu_report_free(&r);
	/* with room for it all, the map is read once */
	t.sram_kib[0] = 64;
	model(g, &t, 0, &r);
	EXPECT3(r.ops[0].dram_read_bytes, 400 * 4, 18 * 4, 1040 * 4);
	enpu_npu_report_free(&r);
	enpu_graph_free(g);
}

Test(npusim, conv_groups_bias)
{
	enpu_graph *g = mk();
	int x = T(g, "x", ENPU_TK_INPUT, 1, 4, 5, 5), w = T(g, "w", ENPU_TK_WEIGHT, 6, 2, 3, 3);
	int b = T(g, "b", ENPU_TK_WEIGHT, 6), y = T(g, "y", ENPU_TK_INTERMEDIATE, 1, 6, 3, 3);
	enpu_npu_target t = tgt(2, 2, ENPU_DF_OS);
	enpu_npu_report r;
	const enpu_npu_opstats *s;
	enpu_irop *o = op(g, "c", ENPU_OP_CONV2D, 3, (int[]){x, w, b}, y);

	o->attrs.group = 2;
	model(g, &t, 1000, &r);
	s = &r.ops[0];
	/* im2col per group: M = 1*3*3, N = 6/2, K = 2*3*3 */
	cr_expect_eq(s->M, 9); cr_expect_eq(s->N, 3); cr_expect_eq(s->K, 18);
	cr_expect_eq(s->groups, 2);
	/* (9,3,18): 5x2 = 10 folds of 18+2 = 20; two groups */
	cr_expect_eq(s->compute_cycles, 400);
	EXPECT3(s->sram_reads, 162 * 2 * 2, 54 * 5 * 2, 0);
	/* the im2col matrix is 162 words a group, the feature map the windows
	 * read 2 channels x 5 x 5 = 50: fetched once, it fits */
	EXPECT3(s->sram_writes, 50 * 2, 54 * 2, 27 * 2);
	/* the bias (6 floats) joins the filter reads */
	EXPECT3(s->dram_read_bytes, 50 * 4 * 2, 54 * 4 * 2 + 24, 0);
	EXPECT3(s->dram_write_bytes, 0, 0, 27 * 4 * 2);
	cr_expect_float_eq(s->utilisation, 972.0 / 1600, 1e-12);
	/* x 100 + w 108 + b 6 floats, plus the arena */
	cr_expect_eq(r.peak_dram_bytes, 214 * 4 + 1000);
	enpu_npu_report_free(&r);

	t.scalesim_compat = 1;
	t.word_bytes = 1;
	model(g, &t, 0, &r);
	cr_expect_eq(r.ops[0].compute_cycles, 399, "compat: -1 once per op, not per group");
	/* SCALE-Sim has no bias: compat counts the filters alone */
	cr_expect_eq(r.ops[0].dram_read_bytes[ENPU_SRAM_FILTER], 54 * 2);
	enpu_npu_report_free(&r);
	enpu_graph_free(g);
}

Test(npusim, matmul_batches_and_vectors)
{
	enpu_graph *g = mk();
	int a = T(g, "a", ENPU_TK_INPUT, 2, 3, 3, 4), b = T(g, "b", ENPU_TK_WEIGHT, 4, 3);
	int o1 = T(g, "o1", ENPU_TK_INTERMEDIATE, 2, 3, 3, 3);
	int v = T(g, "v", ENPU_TK_WEIGHT, 4), o2 = T(g, "o2", ENPU_TK_INTERMEDIATE, 3);
	int c = T(g, "c", ENPU_TK_INPUT, 2, 3, 4), o3 = T(g, "o3", ENPU_TK_INTERMEDIATE, 2, 3);
	enpu_npu_target t = tgt(2, 2, ENPU_DF_OS);
	enpu_npu_report r;

	op(g, "batched", ENPU_OP_MATMUL, 2, (int[]){a, b}, o1);
	op(g, "vec_left", ENPU_OP_MATMUL, 2, (int[]){v, b}, o2);
	op(g, "vec_right", ENPU_OP_MATMUL, 2, (int[]){c, v}, o3);
	model(g, &t, 0, &r);
	/* batch dims [2, 3] are six groups of 3x4 times 4x3 (24 cycles each) */
	cr_expect_eq(r.ops[0].groups, 6);
	cr_expect_eq(r.ops[0].M, 3);
	cr_expect_eq(r.ops[0].compute_cycles, 144);
	/* [4] @ [4,3]: M = 1; (1,3,4): 1x2 folds of 6 */
	cr_expect_eq(r.ops[1].M, 1); cr_expect_eq(r.ops[1].N, 3); cr_expect_eq(r.ops[1].K, 4);
	cr_expect_eq(r.ops[1].groups, 1);
	cr_expect_eq(r.ops[1].compute_cycles, 12);
	/* [2,3,4] @ [4]: N = 1, two groups; (3,1,4): 2x1 folds of 6 */
	cr_expect_eq(r.ops[2].M, 3); cr_expect_eq(r.ops[2].N, 1); cr_expect_eq(r.ops[2].groups, 2);
	cr_expect_eq(r.ops[2].compute_cycles, 24);
	enpu_npu_report_free(&r);
	enpu_graph_free(g);
}

Test(npusim, gemm_trans_and_c)
{
	enpu_graph *g = mk();
	int a = T(g, "a", ENPU_TK_INPUT, 4, 3), b = T(g, "b", ENPU_TK_WEIGHT, 5, 4);
	int c = T(g, "c", ENPU_TK_WEIGHT, 5), y = T(g, "y", ENPU_TK_INTERMEDIATE, 3, 5);
	enpu_npu_target t = tgt(2, 2, ENPU_DF_OS);
	enpu_npu_report r;
	enpu_irop *o = op(g, "fc", ENPU_OP_GEMM, 3, (int[]){a, b, c}, y);

	o->attrs.trans_a = o->attrs.trans_b = 1;
	model(g, &t, 0, &r);
	cr_expect_eq(r.ops[0].M, 3); cr_expect_eq(r.ops[0].N, 5); cr_expect_eq(r.ops[0].K, 4);
	/* filter 20 words + C 5 words, 4 bytes each */
	cr_expect_eq(r.ops[0].dram_read_bytes[ENPU_SRAM_FILTER], 100);
	/* (3,5,4): 2x3 folds of 6 */
	cr_expect_eq(r.ops[0].compute_cycles, 36);
	enpu_npu_report_free(&r);
	enpu_graph_free(g);
}

Test(npusim, vector_move_free)
{
	enpu_graph *g = mk();
	int x = T(g, "x", ENPU_TK_INPUT, 1, 100), bias = T(g, "bias", ENPU_TK_WEIGHT, 100);
	int r1 = T(g, "r1", ENPU_TK_INTERMEDIATE, 1, 100), s1 = T(g, "s1", ENPU_TK_INTERMEDIATE, 1, 100);
	int a1 = T(g, "a1", ENPU_TK_INTERMEDIATE, 1, 100);
	int sm_in = T(g, "smi", ENPU_TK_INPUT, 4, 10), sm = T(g, "sm", ENPU_TK_INTERMEDIATE, 4, 10);
	int p = T(g, "p", ENPU_TK_INPUT, 1, 2, 4, 4), mp = T(g, "mp", ENPU_TK_INTERMEDIATE, 1, 2, 2, 2);
	int q = T(g, "q", ENPU_TK_INPUT, 1, 1, 6, 6), ap = T(g, "ap", ENPU_TK_INTERMEDIATE, 1, 1, 2, 2);
	int gp = T(g, "gp", ENPU_TK_INTERMEDIATE, 1, 2, 1, 1);
	int tr = T(g, "tr", ENPU_TK_INTERMEDIATE, 10, 4);
	int u = T(g, "u", ENPU_TK_INPUT, 2, 5), cc = T(g, "cc", ENPU_TK_INTERMEDIATE, 4, 15);
	int rs = T(g, "rs", ENPU_TK_INTERMEDIATE, 100);
	enpu_npu_target t = tgt(16, 16, ENPU_DF_OS);
	enpu_npu_report r;
	enpu_irop *o;

	op(g, "relu", ENPU_OP_RELU, 1, (int[]){x}, r1);
	op(g, "sig", ENPU_OP_SIGMOID, 1, (int[]){r1}, s1);
	op(g, "add", ENPU_OP_ADD, 2, (int[]){s1, bias}, a1);
	op(g, "softmax", ENPU_OP_SOFTMAX, 1, (int[]){sm_in}, sm);
	o = op(g, "max", ENPU_OP_MAXPOOL2D, 1, (int[]){p}, mp);
	o->attrs.kernel[0] = o->attrs.kernel[1] = 2;
	o = op(g, "avg", ENPU_OP_AVGPOOL2D, 1, (int[]){q}, ap);
	o->attrs.kernel[0] = o->attrs.kernel[1] = 3;
	op(g, "gap", ENPU_OP_GLOBAL_AVGPOOL, 1, (int[]){p}, gp);
	op(g, "tr", ENPU_OP_TRANSPOSE, 1, (int[]){sm}, tr);
	op(g, "cat", ENPU_OP_CONCAT, 2, (int[]){sm, u}, cc);
	op(g, "rs", ENPU_OP_RESHAPE, 1, (int[]){a1}, rs);
	t.vector_lanes = 4;
	model(g, &t, 0, &r);
	/* relu: ceil(100/4) * 1 */
	cr_expect_eq(r.ops[0].cls, ENPU_NPU_VECTOR);
	cr_expect_eq(r.ops[0].compute_cycles, 25);
	/* sigmoid: 4 passes */
	cr_expect_eq(r.ops[1].passes, 4);
	cr_expect_eq(r.ops[1].compute_cycles, 100);
	/* add reads both inputs (the weight too) and writes the output */
	cr_expect_eq(r.ops[2].compute_cycles, 25);
	EXPECT3(r.ops[2].sram_reads, 200, 0, 0);
	EXPECT3(r.ops[2].sram_writes, 0, 0, 100);
	EXPECT3(r.ops[2].dram_read_bytes, 800, 0, 0);
	EXPECT3(r.ops[2].dram_write_bytes, 0, 0, 400);
	cr_expect_eq(r.ops[2].sram_bytes, 1200);
	/* softmax: 40 input elements, 6 passes */
	cr_expect_eq(r.ops[3].elements, 40);
	cr_expect_eq(r.ops[3].compute_cycles, 60);
	/* maxpool 2x2: 8 outputs, 4 taps; avgpool 3x3: 4 outputs, 9 taps + divide */
	cr_expect_eq(r.ops[4].passes, 4);
	cr_expect_eq(r.ops[4].compute_cycles, 8);
	cr_expect_eq(r.ops[5].passes, 10);
	cr_expect_eq(r.ops[5].compute_cycles, 10);
	/* global_avgpool: 32 input elements, 1 pass */
	cr_expect_eq(r.ops[6].elements, 32);
	cr_expect_eq(r.ops[6].compute_cycles, 8);
	/* transpose, concat: one move per output element */
	cr_expect_eq(r.ops[7].cls, ENPU_NPU_MOVE);
	cr_expect_eq(r.ops[7].compute_cycles, 10);
	cr_expect_eq(r.ops[8].cls, ENPU_NPU_MOVE);
	cr_expect_eq(r.ops[8].compute_cycles, 15);
	EXPECT3(r.ops[8].dram_read_bytes, 200, 0, 0);
	/* reshape: free */
	cr_expect_eq(r.ops[9].cls, ENPU_NPU_FREE);
	cr_expect_eq(r.ops[9].compute_cycles, 0);
	EXPECT3(r.ops[9].dram_read_bytes, 0, 0, 0);
	cr_expect_eq(r.ops[9].sram_bytes, 0);
	cr_expect_eq(r.utilisation, 0.0, "no GEMM: utilisation 0");
	cr_expect_eq(r.compute_cycles, 25 + 100 + 25 + 60 + 8 + 10 + 8 + 10 + 15);
	enpu_npu_report_free(&r);

	/* a vector op's resident SRAM is capped by ifmap + ofmap capacity */
	t.sram_kib[ENPU_SRAM_IFMAP] = t.sram_kib[ENPU_SRAM_OFMAP] = 1;
	t.vector_lanes = 1;
	{
		enpu_graph *h = mk();
		int big = T(h, "big", ENPU_TK_INPUT, 1000), out = T(h, "out", ENPU_TK_INTERMEDIATE, 1000);

		op(h, "relu", ENPU_OP_RELU, 1, (int[]){big}, out);
		model(h, &t, 0, &r);
		cr_expect_eq(r.ops[0].sram_bytes, 2048);
		cr_expect_eq(r.ops[0].compute_cycles, 1000);
		cr_expect_eq(r.peak_sram_bytes, 2048);
		enpu_npu_report_free(&r);
		enpu_graph_free(h);
	}
	enpu_graph_free(g);
}

Test(npusim, lowering_missing)
{
	enpu_graph *g = mk();
	int x = T(g, "x", ENPU_TK_INPUT, 4), y = T(g, "y", ENPU_TK_INTERMEDIATE, 4);
	enpu_npu_target t = tgt(4, 4, ENPU_DF_OS);
	enpu_npu_report r;
	enpu_err e = ENPU_ERR_INIT;

	op(g, "act", ENPU_OP_TANH, 1, (int[]){x}, y);
	t.ops = ENPU_OPBIT(ENPU_OP_MATMUL);
	t.ops_given = 1;
	cr_expect_eq(enpu_npu_model(g, &t, 0, &r, &e), -1);
	cr_expect_eq(e.code, ENPU_E_LOWERING);
	cr_expect(strstr(e.message, "'tanh'"), "%s", e.message);
	cr_expect(strstr(e.where, "'act'"), "%s", e.where);
	cr_expect_null(r.ops);
	enpu_graph_free(g);
}

Test(npusim, overflow_is_an_error)
{
	/* 2^31 x 2^31 x 2^31 on 1x1: folds * per-fold overflows 64 bits */
	enpu_graph *g = matmul_graph(INT64_C(1) << 31, INT64_C(1) << 31, INT64_C(1) << 31);
	enpu_npu_target t = tgt(1, 1, ENPU_DF_OS);
	enpu_npu_report r;
	enpu_err e = ENPU_ERR_INIT;

	cr_expect_eq(enpu_npu_model(g, &t, 0, &r, &e), -1);
	cr_expect_eq(e.code, ENPU_E_LIMIT);
	enpu_graph_free(g);
}


static json_object *path(json_object *o, const char *p)
{
	char buf[256], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", p);
	for (char *k = strtok_r(buf, ".", &save); k && o; k = strtok_r(NULL, ".", &save)) {
		if (json_object_is_type(o, json_type_array))
			o = json_object_array_get_idx(o, (size_t)atoi(k));
		else if (!json_object_object_get_ex(o, k, &o))
			return NULL;
	}
	return o;
}

/* The model of a small spec, validated as cpu_ref (the graph is the same
 * for every backend), and its plan and report JSON. */
static const char small_spec[] =
	"eulernpu: 1\n"
	"name: small\n"
	"inputs:\n"
	"  - {name: x, dtype: float32, shape: [1, 3, 8, 8]}\n"
	"outputs: [y]\n"
	"weights:\n"
	"  - {name: w, dtype: float32, shape: [4, 3, 3, 3]}\n"
	"  - {name: w2, dtype: float32, shape: [16, 5]}\n"
	"components:\n"
	"  - name: c\n"
	"    ops:\n"
	"      - {name: conv, op: conv2d, in: [x, w], out: c1, attrs: {strides: [2, 2], pads: [1, 1, 1, 1]}}\n"
	"      - {name: act, op: relu, in: [c1], out: a1}\n"
	"      - {name: pool, op: maxpool2d, in: [a1], out: p1, attrs: {kernel: [2, 2]}}\n"
	"      - {name: flat, op: flatten, in: [p1], out: f1}\n"
	"      - {name: fc, op: matmul, in: [f1, w2], out: y}\n";

Test(npusim, spec_graph_and_json)
{
	enpu_spec *s = NULL;
	enpu_graph *g = NULL;
	enpu_err e = ENPU_ERR_INIT;
	enpu_npu_target t;
	enpu_npu_report r;
	json_object *rep, *plan;
	const char *txt1;
	char *txt2;

	cr_assert_eq(enpu_spec_parse(small_spec, sizeof(small_spec) - 1, "small.yaml", NULL, &s, &e), 0, "%s", e.message);
	cr_assert_eq(enpu_validate(s, "cpu_ref", &g, &e), 0, "%s %s", e.where, e.message);
	enpu_npu_target_default(&t);
	model(g, &t, 4096, &r);
	/* conv: out [1,4,4,4]: M = 16, N = 4, K = 27; (16,4,27) on 16x16 os:
	 * 1 fold of 27+16+16-2 = 57 */
	cr_expect_eq(r.ops[0].M, 16); cr_expect_eq(r.ops[0].N, 4); cr_expect_eq(r.ops[0].K, 27);
	cr_expect_eq(r.ops[0].compute_cycles, 57);
	cr_expect_eq(r.ops[1].compute_cycles, 4);      /* relu: 64 / 16 */
	cr_expect_eq(r.ops[2].compute_cycles, 4);      /* pool: 16 / 16 * 4 taps */
	cr_expect_eq(r.ops[3].cls, ENPU_NPU_FREE);
	cr_expect_eq(r.ops[4].compute_cycles, 46);     /* (1,5,16): 16+30 */
	cr_expect_eq(r.total_cycles, 111);
	cr_expect_float_eq(r.time_us, 0.111, 1e-12);
	/* x 192 + w 108 + w2 80 floats + the arena */
	cr_expect_eq(r.peak_dram_bytes, 380 * 4 + 4096);

	rep = enpu_npu_report_json(g, &r);
	plan = enpu_npu_plan_json(g, &r, 1);
	cr_assert(rep && plan);
	cr_expect_str_eq(json_object_get_string(path(rep, "ops.0.lowering")), "gemm");
	cr_expect_str_eq(json_object_get_string(path(rep, "ops.1.lowering")), "vector");
	cr_expect_str_eq(json_object_get_string(path(rep, "ops.3.lowering")), "free");
	cr_expect_str_eq(json_object_get_string(path(rep, "ops.0.name")), "conv");
	cr_expect_str_eq(json_object_get_string(path(rep, "ops.0.op")), "conv2d");
	cr_expect_eq(json_object_get_int64(path(rep, "ops.0.gemm.folds")), 1);
	cr_expect_eq(json_object_get_int64(path(rep, "ops.0.gemm.tiles.ifmap")), 16 * 27);
	cr_expect_eq(json_object_get_int64(path(rep, "ops.2.passes")), 4);
	cr_expect_eq(json_object_get_int64(path(rep, "ops.0.dram.ifmap.read_bytes")),
		     (int64_t)r.ops[0].dram_read_bytes[0]);
	cr_expect_eq(json_object_get_int64(path(rep, "ops.4.sram.filter.reads")), 80);
	cr_expect_eq(json_object_get_int64(path(rep, "totals.cycles")), 111);
	cr_expect_str_eq(json_object_to_json_string(path(rep, "totals.time_us")), "0.111");
	/* conv: 1728 MACs over 57 cycles of 256 PEs, rounded to 6 digits */
	cr_expect_str_eq(json_object_to_json_string(path(rep, "ops.0.utilisation")), "0.118421");
	cr_expect_null(path(rep, "ops.1.gemm"));
	/* the roofline: conv 1728 MACs over its DRAM bytes; no bandwidth
	 * limit, so nothing is memory-bound; relu has no MACs; flatten moves
	 * nothing */
	cr_expect_float_eq(json_object_get_double(path(rep, "ops.0.arithmetic_intensity")),
			   1728.0 / (double)(r.ops[0].dram_read_bytes[0] + r.ops[0].dram_read_bytes[1] +
					     r.ops[0].dram_write_bytes[2]), 1e-5);
	cr_expect_eq(json_object_get_boolean(path(rep, "ops.0.memory_bound")), 0);
	cr_expect_not_null(path(rep, "ops.0.memory_bound"));
	cr_expect_null(path(rep, "ops.1.arithmetic_intensity"));
	cr_expect_float_eq(json_object_get_double(path(rep, "ops.1.needed_bytes_per_cycle")),
			   (64 + 64) * 4 / 4.0, 1e-9);
	cr_expect_str_eq(json_object_to_json_string(path(rep, "ops.3.needed_bytes_per_cycle")), "0");
	cr_expect_null(path(plan, "ops.0.arithmetic_intensity"));
	cr_expect_null(path(plan, "totals"));
	/* plan.json holds the counts, not what is derived from them */
	cr_expect_eq(json_object_get_int64(path(plan, "ops.0.compute_cycles")), 57);
	cr_expect_eq(json_object_get_int64(path(plan, "peak_dram_bytes")), 380 * 4 + 4096);
	cr_expect_null(path(plan, "ops.0.utilisation"));
	cr_expect_not_null(path(plan, "ops.0.gemm.tiles.ofmap"));
	cr_expect_not_null(path(plan, "target.array"));
	/* deterministic: the same text twice */
	txt1 = json_object_to_json_string_ext(rep, JSON_C_TO_STRING_PLAIN);
	txt2 = strdup(txt1);
	json_object_put(rep);
	rep = enpu_npu_report_json(g, &r);
	cr_expect_str_eq(json_object_to_json_string_ext(rep, JSON_C_TO_STRING_PLAIN), txt2);
	free(txt2);
	json_object_put(rep);
	json_object_put(plan);
	enpu_npu_report_free(&r);
	enpu_graph_free(g);
	enpu_spec_free(s);
}

/* The model read back from plan.json (a trusted load) reports the same
 * bytes as the model itself, doubles included (a fractional DRAM rate
 * gives stalls, a ws array non-trivial ratios); an older plan (no counts)
 * says so; a tampered one is refused. */
static void plan_roundtrip(const enpu_graph *g, const enpu_npu_target *t)
{
	enpu_npu_report r, back;
	enpu_err e = ENPU_ERR_INIT;
	json_object *plan, *old, *rep, *rep2;
	char *txt;

	model(g, t, 4096, &r);
	plan = enpu_npu_plan_json(g, &r, 1);
	cr_assert_not_null(plan);
	cr_assert_eq(enpu_npu_plan_read(g, t, plan, "plan.json", &back, &e), 0, "%s", e.message);
	rep = enpu_npu_report_json(g, &r);
	rep2 = enpu_npu_report_json(g, &back);
	cr_assert(rep && rep2);
	txt = strdup(json_object_to_json_string_ext(rep, JSON_C_TO_STRING_PLAIN));
	cr_expect_str_eq(json_object_to_json_string_ext(rep2, JSON_C_TO_STRING_PLAIN), txt);
	cr_expect_eq(back.time_us, r.time_us);
	cr_expect_eq(back.utilisation, r.utilisation);
	for (int i = 0; i < r.n_ops; i++) {
		cr_expect_eq(back.ops[i].utilisation, r.ops[i].utilisation);
		cr_expect_eq(back.ops[i].mapping_efficiency, r.ops[i].mapping_efficiency);
	}
	free(txt);
	json_object_put(rep);
	json_object_put(rep2);
	enpu_npu_report_free(&back);

	old = enpu_npu_plan_json(g, &r, 0);
	cr_assert_not_null(old);
	cr_expect_null(path(old, "ops.0.compute_cycles"));
	cr_expect_eq(enpu_npu_plan_read(g, t, old, "plan.json", &back, &e), 1);
	json_object_put(old);

	/* a negative count, an unknown field, another op's entry */
	json_object_object_add(json_object_array_get_idx(path(plan, "ops"), 0), "stall_cycles",
			       json_object_new_int(-1));
	cr_expect_eq(enpu_npu_plan_read(g, t, plan, "plan.json", &back, &e), -1);
	cr_expect_eq(e.code, ENPU_E_ARTIFACT);
	cr_expect(strstr(e.message, "stall_cycles"), "%s", e.message);
	json_object_object_add(json_object_array_get_idx(path(plan, "ops"), 0), "stall_cycles",
			       json_object_new_int(0));
	json_object_object_add(json_object_array_get_idx(path(plan, "ops"), 1), "extra",
			       json_object_new_int(0));
	cr_expect_eq(enpu_npu_plan_read(g, t, plan, "plan.json", &back, &e), -1);
	cr_expect(strstr(e.message, "extra"), "%s", e.message);
	json_object_object_del(json_object_array_get_idx(path(plan, "ops"), 1), "extra");
	json_object_object_add(json_object_array_get_idx(path(plan, "ops"), 1), "name",
			       json_object_new_string("pool"));
	cr_expect_eq(enpu_npu_plan_read(g, t, plan, "plan.json", &back, &e), -1);
	cr_expect(strstr(e.message, "act"), "%s", e.message);
	json_object_put(plan);
	enpu_npu_report_free(&r);
}

Test(npusim, plan_read_roundtrip)
{
	enpu_spec *s = NULL;
	enpu_graph *g = NULL;
	enpu_err e = ENPU_ERR_INIT;
	enpu_npu_target t;

	cr_assert_eq(enpu_spec_parse(small_spec, sizeof(small_spec) - 1, "small.yaml", NULL, &s, &e), 0, "%s", e.message);
	cr_assert_eq(enpu_validate(s, "cpu_ref", &g, &e), 0, "%s %s", e.where, e.message);
	enpu_npu_target_default(&t);
	plan_roundtrip(g, &t);
	t.rows = 3, t.cols = 5, t.dataflow = ENPU_DF_WS;
	t.dram_bytes_per_cycle = 0.7;
	t.sram_kib[ENPU_SRAM_IFMAP] = 1;
	plan_roundtrip(g, &t);
	t.scalesim_compat = 1, t.word_bytes = 1, t.dataflow = ENPU_DF_IS, t.clock_mhz = 333.3;
	plan_roundtrip(g, &t);
	enpu_graph_free(g);
	enpu_spec_free(s);
}

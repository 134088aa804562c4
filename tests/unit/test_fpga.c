/* test_fpga.c: the fpga_board partition. Hand-built specs with the
 * segments, PS ops, DMA buffers and PL cycles each must give: fusion and
 * where it stops, pl_ops, the buffer and dimension limits, and the records
 * in plan.json and graph.json that the artifact loader holds them to. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>
#include "enpu.h"
#include "npusim.h"
#include "backend.h"
#include "fpga.h"
#include "graphjson.h"

#define HEAD "eulernpu: 1\nname: t\nbackend: fpga_board\n"

/* The MLP of tiny_mlp: fc1 (matmul) bias1 (add) act1 (relu) fc2 bias2. */
static const char mlp[] = HEAD
	"inputs:\n  - {name: x, dtype: float32, shape: [1, 8]}\n"
	"outputs: [logits]\n"
	"weights:\n"
	"  - {name: w1, dtype: float32, shape: [8, 16]}\n"
	"  - {name: b1, dtype: float32, shape: [16]}\n"
	"  - {name: w2, dtype: float32, shape: [16, 4]}\n"
	"  - {name: b2, dtype: float32, shape: [4]}\n"
	"components:\n  - name: main\n    ops:\n"
	"      - {name: fc1,   op: matmul, in: [x, w1],  out: h1}\n"
	"      - {name: bias1, op: add,    in: [h1, b1], out: h2}\n"
	"      - {name: act1,  op: relu,   in: [h2],     out: h}\n"
	"      - {name: fc2,   op: matmul, in: [h, w2],  out: z}\n"
	"      - {name: bias2, op: add,    in: [z, b2],  out: logits}\n";

typedef struct fixture {
	enpu_spec *s;
	enpu_target *t;
	enpu_graph *g;
	enpu_fpga_part p;
} fixture;

/* spec text + the text of targets.fpga_board (appended) -> partition. */
static void build(fixture *f, const char *spec, const char *target)
{
	char text[8192];
	enpu_err e = ENPU_ERR_INIT;

	memset(f, 0, sizeof(*f));
	snprintf(text, sizeof(text), "%s%s%s", spec, target ? "targets:\n  fpga_board: " : "",
		 target ? target : "");
	cr_assert_eq(enpu_spec_parse(text, strlen(text), "spec.yaml", NULL, &f->s, &e), 0,
		     "%s: %s", e.where, e.message);
	cr_assert_eq(enpu_target_resolve(f->s, "fpga_board", NULL, NULL, NULL, &f->t, &e), 0,
		     "%s: %s", e.where, e.message);
	cr_assert_eq(enpu_validate_for(f->s, f->t, &f->g, &e), 0, "%s: %s", e.where, e.message);
	cr_assert_eq(enpu_fpga_partition(f->g, enpu_target_board(f->t), &f->p, &e), 0, "%s",
		     e.message);
	cr_assert_eq(f->p.pl_ops + f->p.ps_ops, f->g->n_ops);
}

static void done(fixture *f)
{
	enpu_fpga_part_free(&f->p);
	enpu_graph_free(f->g);
	enpu_target_free(f->t);
	enpu_spec_free(f->s);
}

/* "fc1 bias1 act1 | fc2 bias2": segments by op names, '|' between them;
 * PS ops as "(name)". */
static void layout(const fixture *f, char *buf, size_t cap)
{
	size_t off = 0;

	buf[0] = 0;
	for (int k = 0; k < f->g->n_ops && off < cap; k++) {
		int s = f->p.op_seg[k];
		const char *sep = k == 0 ? "" : f->p.op_seg[k - 1] == s ? " " : " | ";

		off += (size_t)snprintf(buf + off, cap - off, s >= 0 ? "%s%s" : "%s(%s)", sep,
					f->g->ops[k].name);
	}
}

static void expect_bufs(const fixture *f, const enpu_fpga_buf *b, int n, const char *want)
{
	char got[512];
	size_t off = 0;

	got[0] = 0;
	for (int i = 0; i < n && off < sizeof(got); i++)
		off += (size_t)snprintf(got + off, sizeof(got) - off, "%s%s:%llu", i ? " " : "",
					f->g->tensors[b[i].tensor].name, (unsigned long long)b[i].bytes);
	cr_expect_str_eq(got, want);
}

Test(fpga, mlp_default_target_two_fused_segments)
{
	fixture f;
	char got[256];
	enpu_npu_target m;
	uint64_t c1, c2;

	build(&f, mlp, NULL);
	layout(&f, got, sizeof(got));
	cr_expect_str_eq(got, "fc1 bias1 act1 | fc2 bias2");
	cr_assert_eq(f.p.n_segs, 2);
	cr_expect_eq(f.p.pl_ops, 5);
	cr_expect_eq(f.p.ps_ops, 0);
	expect_bufs(&f, f.p.segs[0].in, f.p.segs[0].n_in, "x:32 w1:512 b1:64");
	expect_bufs(&f, f.p.segs[0].out, f.p.segs[0].n_out, "h:64");
	expect_bufs(&f, f.p.segs[1].in, f.p.segs[1].n_in, "h:64 w2:256 b2:16");
	expect_bufs(&f, f.p.segs[1].out, f.p.segs[1].n_out, "logits:16");
	cr_expect_eq(f.p.segs[0].dma_in_bytes, 608);
	cr_expect_eq(f.p.segs[0].dma_out_bytes, 64);

	/* the PL cycles are the npu_sim model's on an 8x8 os array with 8
	 * lanes, plus the DMA at 8 bytes a cycle */
	enpu_board_pl_model(enpu_target_board(f.t), &m);
	cr_expect_eq(m.rows, 8);
	cr_expect_eq(m.vector_lanes, 8);
	c1 = enpu_npu_gemm_cycles(&m, 1, 16, 8, NULL);
	cr_expect_eq(c1, 44, "2 col folds of 8 + 8 + 8 - 2");
	cr_expect_eq(f.p.segs[0].compute_cycles, c1 + 2 + 2, "add and relu: 16 elements / 8 lanes");
	cr_expect_eq(f.p.segs[0].dma_cycles, (608 + 64) / 8);
	cr_expect_eq(f.p.segs[0].pl_cycles, 48 + 84);
	c2 = enpu_npu_gemm_cycles(&m, 1, 4, 16, NULL);
	cr_expect_eq(f.p.segs[1].compute_cycles, c2 + 1);
	cr_expect_eq(f.p.segs[1].dma_cycles, (64 + 256 + 16 + 16 + 7) / 8);
	cr_expect_eq(f.p.pl_cycles, f.p.segs[0].pl_cycles + f.p.segs[1].pl_cycles);
	cr_expect_eq(f.p.dma_bytes, 672 + 352);
	done(&f);
}

Test(fpga, array_dataflow_and_dma_rate_change_the_cycles)
{
	fixture f;
	enpu_npu_target m;

	build(&f, mlp, "{array: [4, 2], dataflow: ws, dma_bytes_per_cycle: 5}\n");
	enpu_board_pl_model(enpu_target_board(f.t), &m);
	cr_expect_eq(m.dataflow, ENPU_DF_WS);
	cr_expect_eq(f.p.segs[0].compute_cycles, enpu_npu_gemm_cycles(&m, 1, 16, 8, NULL) + 8 + 8,
		     "vector passes at 2 lanes");
	cr_expect_eq(f.p.segs[0].dma_cycles, (672 + 4) / 5);
	done(&f);
}

Test(fpga, pl_ops_restricts_what_the_pl_takes)
{
	fixture f;
	char got[256];

	build(&f, mlp, "{pl_ops: [matmul]}\n");
	layout(&f, got, sizeof(got));
	cr_expect_str_eq(got, "fc1 | (bias1) (act1) | fc2 | (bias2)");
	expect_bufs(&f, f.p.segs[0].out, f.p.segs[0].n_out, "h1:64");
	done(&f);

	build(&f, mlp, "{pl_ops: [gemm, conv2d, add, relu]}\n");
	layout(&f, got, sizeof(got));
	cr_expect_str_eq(got, "(fc1) (bias1) (act1) (fc2) (bias2)", "no GEMM to start a segment");
	cr_expect_eq(f.p.n_segs, 0);
	cr_expect_eq(f.p.pl_cycles, 0);
	done(&f);

	build(&f, mlp, "{pl_ops: [matmul, add]}\n");
	layout(&f, got, sizeof(got));
	cr_expect_str_eq(got, "fc1 bias1 | (act1) | fc2 bias2");
	done(&f);

	build(&f, mlp, "{pl_ops: []}\n");
	cr_expect_eq(f.p.n_segs, 0);
	cr_expect_eq(f.p.ps_ops, 5);
	done(&f);
}

Test(fpga, limits_force_the_ps)
{
	fixture f;
	char got[256];

	/* w1 (8, 16) has a dim over 15: fc1 and what would fuse after it
	 * run on the PS; fc2 reads w2 (16, 4): PS too */
	build(&f, mlp, "{max_dim: 15}\n");
	layout(&f, got, sizeof(got));
	cr_expect_str_eq(got, "(fc1) (bias1) (act1) (fc2) (bias2)");
	done(&f);

	/* 1 KiB of buffer: tensors up to 512 bytes; w1 is exactly 512 */
	build(&f, mlp, "{buffer_kib: 1}\n");
	layout(&f, got, sizeof(got));
	cr_expect_str_eq(got, "fc1 bias1 act1 | fc2 bias2");
	done(&f);
}

/* A fused op over the limits ends the segment; the GEMM stays on the PL. */
Test(fpga, a_fused_op_over_the_limits_ends_the_segment)
{
	static const char spec[] = HEAD
		"inputs:\n  - {name: x, dtype: float32, shape: [1, 8]}\n"
		"outputs: [y]\n"
		"weights:\n"
		"  - {name: w, dtype: float32, shape: [8, 16]}\n"
		"  - {name: big, dtype: float32, shape: [64, 16]}\n"
		"components:\n  - name: main\n    ops:\n"
		"      - {name: mm,  op: matmul, in: [x, w],    out: h}\n"
		"      - {name: bc,  op: add,    in: [h, big],  out: a}\n"
		"      - {name: act, op: relu,   in: [a],       out: y}\n";
	fixture f;
	char got[256];

	build(&f, spec, "{buffer_kib: 4}\n");   /* 2 KiB a tensor; big is 4 KiB */
	layout(&f, got, sizeof(got));
	cr_expect_str_eq(got, "mm | (bc) (act)");
	expect_bufs(&f, f.p.segs[0].out, f.p.segs[0].n_out, "h:64");
	done(&f);

	build(&f, spec, "{buffer_kib: 8}\n");
	layout(&f, got, sizeof(got));
	cr_expect_str_eq(got, "mm bc act");
	expect_bufs(&f, f.p.segs[0].in, f.p.segs[0].n_in, "x:32 w:512 big:4096");
	expect_bufs(&f, f.p.segs[0].out, f.p.segs[0].n_out, "y:4096");
	done(&f);
}

Test(fpga, fusion_stops_at_a_second_reader_and_a_swapped_input)
{
	static const char two_readers[] = HEAD
		"inputs:\n  - {name: x, dtype: float32, shape: [2, 4]}\n"
		"outputs: [y]\n"
		"weights:\n  - {name: w, dtype: float32, shape: [4, 4]}\n"
		"components:\n  - name: main\n    ops:\n"
		"      - {name: mm,  op: matmul, in: [x, w],  out: h}\n"
		"      - {name: r,   op: relu,   in: [h],     out: a}\n"
		"      - {name: s,   op: add,    in: [h, a],  out: y}\n";
	static const char swapped[] = HEAD
		"inputs:\n  - {name: x, dtype: float32, shape: [2, 4]}\n"
		"outputs: [y]\n"
		"weights:\n  - {name: w, dtype: float32, shape: [4, 4]}\n"
		"  - {name: b, dtype: float32, shape: [4]}\n"
		"components:\n  - name: main\n    ops:\n"
		"      - {name: mm,  op: matmul, in: [x, w],  out: h}\n"
		"      - {name: s,   op: add,    in: [b, h],  out: y}\n";
	static const char twice[] = HEAD
		"inputs:\n  - {name: x, dtype: float32, shape: [2, 4]}\n"
		"outputs: [y]\n"
		"weights:\n  - {name: w, dtype: float32, shape: [4, 4]}\n"
		"components:\n  - name: main\n    ops:\n"
		"      - {name: mm,  op: matmul, in: [x, w],  out: h}\n"
		"      - {name: sq,  op: mul,    in: [h, h],  out: y}\n";
	fixture f;
	char got[256];

	build(&f, two_readers, NULL);
	layout(&f, got, sizeof(got));
	cr_expect_str_eq(got, "mm | (r) (s)", "h has two readers");
	expect_bufs(&f, f.p.segs[0].out, f.p.segs[0].n_out, "h:32");
	done(&f);

	build(&f, swapped, NULL);
	layout(&f, got, sizeof(got));
	cr_expect_str_eq(got, "mm | (s)", "h is add's second input");
	done(&f);

	/* one op reading h twice is still its only reader */
	build(&f, twice, NULL);
	layout(&f, got, sizeof(got));
	cr_expect_str_eq(got, "mm sq");
	expect_bufs(&f, f.p.segs[0].in, f.p.segs[0].n_in, "x:32 w:64");
	done(&f);
}

/* A segment tensor that is also a graph output is read back too, and a
 * segment may start right after another. */
Test(fpga, outputs_inside_a_segment_are_read_back)
{
	static const char spec[] = HEAD
		"inputs:\n  - {name: x, dtype: float32, shape: [2, 4]}\n"
		"outputs: [h, y, z]\n"
		"weights:\n  - {name: w, dtype: float32, shape: [4, 4]}\n"
		"components:\n  - name: main\n    ops:\n"
		"      - {name: mm,  op: matmul, in: [x, w],  out: h}\n"
		"      - {name: r,   op: relu,   in: [h],     out: y}\n"
		"      - {name: mm2, op: matmul, in: [y, w],  out: z}\n";
	fixture f;
	char got[256];

	build(&f, spec, NULL);
	layout(&f, got, sizeof(got));
	cr_expect_str_eq(got, "mm r | mm2");
	expect_bufs(&f, f.p.segs[0].out, f.p.segs[0].n_out, "h:32 y:32");
	expect_bufs(&f, f.p.segs[1].in, f.p.segs[1].n_in, "y:32 w:64");
	done(&f);
}

/* tiny_cnn: conv1 alone (batchnorm does not fuse), fc alone; the rest PS. */
Test(fpga, tiny_cnn_partition)
{
	enpu_spec *s = NULL;
	enpu_target *t = NULL;
	enpu_graph *g = NULL;
	enpu_err e = ENPU_ERR_INIT;
	int pl, ps, segs;
	fixture f;
	char got[256];

	cr_assert_eq(enpu_spec_load("examples/tiny_cnn/spec.yaml", "spec.yaml", NULL, &s, &e), 0);
	cr_assert_eq(enpu_target_resolve(s, "fpga_board", NULL, NULL, NULL, &t, &e), 0);
	cr_assert_eq(enpu_validate_for(s, t, &g, &e), 0);
	cr_assert_eq(enpu_backend_counts(g, t, &pl, &ps, &segs, &e), 0);
	cr_expect_eq(pl, 2);
	cr_expect_eq(ps, 6);
	cr_expect_eq(segs, 2);
	f.s = s;
	f.t = t;
	f.g = g;
	cr_assert_eq(enpu_fpga_partition(g, enpu_target_board(t), &f.p, &e), 0);
	layout(&f, got, sizeof(got));
	cr_expect_str_eq(got, "conv1 | (bn1) (relu1) (pool1) (gap) (flat) | fc | (prob)");
	done(&f);
}

Test(fpga, partition_count_for_other_backends)
{
	enpu_spec *s = NULL;
	enpu_target *t = NULL;
	enpu_graph *g = NULL;
	enpu_err e = ENPU_ERR_INIT;
	int pl = -1, ps = -1, segs = -1;

	cr_assert_eq(enpu_spec_parse(mlp, strlen(mlp), "spec.yaml", NULL, &s, &e), 0);
	cr_assert_eq(enpu_target_resolve(s, "zynq_ps", NULL, NULL, NULL, &t, &e), 0);
	cr_assert_eq(enpu_validate_for(s, t, &g, &e), 0);
	cr_assert_eq(enpu_backend_counts(g, t, &pl, &ps, &segs, &e), 0);
	cr_expect(pl == 0 && ps == 5 && segs == 0);
	enpu_target_free(t);
	cr_assert_eq(enpu_target_resolve(s, "cpu_ref", NULL, NULL, NULL, &t, &e), 0);
	cr_assert_eq(enpu_backend_counts(g, t, &pl, &ps, &segs, &e), 0);
	cr_expect(pl == 0 && ps == 0 && segs == 0);
	enpu_target_free(t);
	enpu_graph_free(g);
	enpu_spec_free(s);
}

/* graph.json and plan.json carry the partition; the loader's checks
 * (enpu_graph_check_lowerings, the backend's check_plan) refuse any other. */
Test(fpga, records_and_their_check)
{
	fixture f;
	enpu_buf gj = ENPU_BUF_INIT, pj = ENPU_BUF_INIT, pj2 = ENPU_BUF_INIT, bad = ENPU_BUF_INIT;
	enpu_err e = ENPU_ERR_INIT;
	const enpu_backend_def *d = &enpu_bk_fpga_board;
	json_object *sec, *sec2, *r, *v, *ops;
	char kname[64], *p;

	build(&f, mlp, "{pl_ops: [matmul, add]}\n");
	cr_assert_str_eq(enpu_fpga_op_lowering(f.g, &f.p, 0, kname, sizeof(kname)), "pl");
	cr_assert_str_eq(kname, "fpga_board.pl.0");
	cr_assert_str_eq(enpu_fpga_op_lowering(f.g, &f.p, 2, kname, sizeof(kname)), "ps");
	cr_assert_str_eq(kname, "fpga_board.ps.relu");
	cr_assert_eq(enpu_graph_to_json(f.g, "weights/fpga_board.npz", "spec", &f.p, &gj, &e), 0);
	cr_assert_not_null(r = json_tokener_parse(gj.data));
	cr_assert(json_object_object_get_ex(r, "ops", &ops));
	v = json_object_object_get(json_object_array_get_idx(ops, 3), "kernel");
	cr_expect_str_eq(json_object_get_string(v), "fpga_board.pl.1");
	v = json_object_object_get(json_object_array_get_idx(ops, 3), "lowering");
	cr_expect_str_eq(json_object_get_string(v), "pl");
	cr_assert_eq(enpu_graph_check_lowerings(f.g, &f.p, r, "graph.json", &e), 0, "%s",
		     e.message);
	json_object_put(r);

	/* plan.json's section: deterministic, and exactly what the check wants */
	cr_assert_not_null(sec = d->plan_json(f.g, &f.p.target, &f.p));
	cr_assert_eq(enpu_json_dump(sec, &pj, &e), 0);
	cr_assert_eq(enpu_json_dump(sec, &pj2, &e), 0);
	cr_assert(pj.len == pj2.len && memcmp(pj.data, pj2.data, pj.len) == 0);
	cr_assert(strstr(pj.data, "\"ps_ops\": [\n    \"act1\"\n  ]"), "%s", pj.data);
	cr_assert_not_null(sec2 = json_tokener_parse(pj.data));
	cr_assert_eq(d->check_plan(f.g, &f.p.target, &f.p, sec2, "plan.json", &e), 0, "%s",
		     e.message);
	json_object_put(sec2);

	/* a plan whose cycles were edited */
	cr_assert_eq(enpu_buf_add(&bad, pj.data, pj.len + 1), 0);
	cr_assert_not_null(p = strstr(bad.data, "\"pl_cycles\": "));
	p[13] = p[13] == '9' ? '8' : '9';
	cr_assert_not_null(sec2 = json_tokener_parse(bad.data));
	cr_assert_eq(d->check_plan(f.g, &f.p.target, &f.p, sec2, "plan.json", &e), -1);
	cr_expect_eq(e.code, ENPU_E_ARTIFACT);
	cr_expect(strstr(e.message, "'fpga' section"), "%s", e.message);
	json_object_put(sec2);

	/* graph.json claiming the PL for a PS op */
	bad.len = 0;
	cr_assert_not_null(r = json_tokener_parse(gj.data));
	cr_assert(json_object_object_get_ex(r, "ops", &ops));
	v = json_object_array_get_idx(ops, 2);
	json_object_object_add(v, "kernel", json_object_new_string("fpga_board.pl.0"));
	json_object_object_add(v, "lowering", json_object_new_string("pl"));
	cr_assert_eq(enpu_graph_check_lowerings(f.g, &f.p, r, "graph.json", &e), -1);
	json_object_put(r);
	cr_expect(strstr(e.message, "op 'act1'"), "%s", e.message);

	/* no fpga section at all */
	cr_assert_eq(d->check_plan(f.g, &f.p.target, &f.p, NULL, "plan.json", &e), -1);
	json_object_put(sec);
	enpu_buf_free(&gj);
	enpu_buf_free(&pj);
	enpu_buf_free(&pj2);
	enpu_buf_free(&bad);
	done(&f);
}

/* A compiled fpga_board artifact loads, and its compile info matches. */
Test(fpga, compile_info_and_artifact)
{
	enpu_spec *s = NULL;
	enpu_target *t = NULL;
	enpu_artifact *a = NULL;
	enpu_err e = ENPU_ERR_INIT;
	enpu_compile_info ci;
	enpu_buf pj = ENPU_BUF_INIT;
	char dir[] = "/tmp/enpu_fpga_XXXXXX", out[64], cmd[96], pp[96];

	cr_assert(mkdtemp(dir));
	snprintf(out, sizeof(out), "%s/a", dir);
	cr_assert_eq(enpu_spec_load("examples/tiny_mlp/spec.yaml", "spec.yaml", NULL, &s, &e), 0);
	cr_assert_eq(enpu_target_resolve(s, "fpga_board", NULL, NULL, NULL, &t, &e), 0);
	cr_assert_eq(enpu_compile(s, t, "examples/tiny_mlp/weights.npz", NULL, NULL, out, NULL, &ci,
				  &e), 0, "%s", e.message);
	cr_expect_str_eq(ci.backend, "fpga_board");
	cr_expect_eq(ci.pl_ops + ci.ps_ops, ci.n_ops);
	cr_expect_gt(ci.pl_segments, 0);
	cr_assert_eq(enpu_artifact_load(out, NULL, &a, &e), 0, "%s", e.message);
	cr_assert_not_null(enpu_artifact_fpga(a));
	cr_expect_eq(enpu_artifact_fpga(a)->pl_ops, ci.pl_ops);
	cr_expect_eq(enpu_artifact_board(a)->rows, 8);
	snprintf(pp, sizeof(pp), "%s/plan.json", out);
	cr_assert_eq(enpu_read_file(pp, 0, &pj, &e), 0);
	cr_expect(strstr(pj.data, "\"fpga\": {"), "plan.json has the fpga section");
	cr_expect(!strstr(pj.data, "\"npu\""));
	enpu_artifact_free(a);
	enpu_target_free(t);
	enpu_spec_free(s);
	enpu_buf_free(&pj);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_expect_eq(system(cmd), 0);
}

/* spec v2: conv1d goes to the PL wherever conv2d may (it is the conv2d
 * with kH = 1 the PL runs, same bytes): no pl_ops entry of its own, so the
 * default target and its JSON stay as they were. Its fused relu follows. */
Test(fpga, conv1d_rides_on_conv2d)
{
	static const char spec[] =
		"eulernpu: 2\nname: t\nbackend: fpga_board\n"
		"inputs:\n  - {name: x, dtype: float32, shape: [1, 4, 16]}\n"
		"outputs: [y]\n"
		"weights:\n  - {name: w, dtype: float32, shape: [8, 4, 3]}\n"
		"components:\n  - name: main\n    ops:\n"
		"      - {name: c, op: conv1d, in: [x, w], out: h}\n"
		"      - {name: r, op: relu, in: [h], out: h2}\n"
		"      - {name: p, op: maxpool1d, in: [h2], out: y, attrs: {kernel: [2]}}\n";
	fixture f;
	char got[256];

	build(&f, spec, NULL);
	layout(&f, got, sizeof(got));
	cr_expect_str_eq(got, "c r | (p)");
	cr_expect_gt(f.p.pl_cycles, 0);
	done(&f);
	build(&f, spec, "{pl_ops: [matmul, relu]}\n");
	layout(&f, got, sizeof(got));
	cr_expect_str_eq(got, "(c) (r) (p)", "without conv2d, conv1d stays on the PS");
	done(&f);
}

/* spec v3: the integer GEMMs go to the PL as int8 segments, riding on
 * conv2d's bit (conv_integer, qlinear_conv) and matmul's (matmul_integer,
 * qlinear_matmul): no pl_ops entries of their own, so the target's JSON
 * stays as it was. quantize_linear and dequantize_linear run on the PS.
 * DMA counts each tensor in its own size (int8 1 byte, int32 4). */
Test(fpga, int8_gemms_on_the_pl)
{
	static const char spec[] =
		"eulernpu: 3\nname: t\nbackend: fpga_board\n"
		"inputs:\n  - {name: x, dtype: float32, shape: [1, 2, 6, 6]}\n"
		"  - {name: a, dtype: int8, shape: [3, 8]}\n"
		"outputs: [y, acc, mq, mi]\n"
		"weights:\n"
		"  - {name: xs, dtype: float32, shape: []}\n  - {name: xz, dtype: int8, shape: []}\n"
		"  - {name: w, dtype: int8, shape: [4, 2, 3, 3]}\n"
		"  - {name: ws, dtype: float32, shape: []}\n  - {name: wz, dtype: int8, shape: []}\n"
		"  - {name: ys, dtype: float32, shape: []}\n  - {name: yz, dtype: int8, shape: []}\n"
		"  - {name: bias, dtype: int32, shape: [4]}\n"
		"  - {name: b, dtype: int8, shape: [8, 5]}\n"
		"components:\n  - name: main\n    ops:\n"
		"      - {name: q, op: quantize_linear, in: [x, xs, xz], out: xq}\n"
		"      - {name: c, op: qlinear_conv, in: [xq, xs, xz, w, ws, wz, ys, yz, bias], out: yq}\n"
		"      - {name: d, op: dequantize_linear, in: [yq, ys, yz], out: y}\n"
		"      - {name: ci, op: conv_integer, in: [xq, w, xz, wz], out: acc}\n"
		"      - {name: m, op: qlinear_matmul, in: [a, xs, xz, b, ws, wz, ys, yz], out: mq}\n"
		"      - {name: mm, op: matmul_integer, in: [a, b], out: mi}\n";
	fixture f;
	char got[256];
	const enpu_fpga_seg *s;

	build(&f, spec, NULL);
	layout(&f, got, sizeof(got));
	cr_expect_str_eq(got, "(q) | c | (d) | ci | m | mm");
	cr_assert_eq(f.p.n_segs, 4);
	/* c: DMA in xq (72 int8), the 4 scale/zp scalars (4+1+4+1), w (72),
	 * ys and yz again (de-duplicated: no), bias (16); out yq (4x4x4 int8) */
	s = &f.p.segs[0];
	cr_expect_eq(s->dma_in_bytes, 72 + 4 + 1 + 72 + 4 + 1 + 4 + 1 + 16);
	cr_expect_eq(s->dma_out_bytes, 64);
	cr_expect_eq(f.p.segs[1].dma_out_bytes, 64 * 4, "conv_integer's int32 out");
	cr_expect_eq(f.p.segs[3].dma_in_bytes, 24 + 40);
	cr_expect_eq(f.p.segs[3].dma_out_bytes, 15 * 4);
	done(&f);
	build(&f, spec, "{pl_ops: [relu]}\n");
	layout(&f, got, sizeof(got));
	cr_expect_str_eq(got, "(q) (c) (d) (ci) (m) (mm)", "without conv2d and matmul: the PS");
	done(&f);
	build(&f, spec, "{pl_ops: [matmul]}\n");
	layout(&f, got, sizeof(got));
	cr_expect_str_eq(got, "(q) (c) (d) (ci) | m | mm");
	done(&f);
}

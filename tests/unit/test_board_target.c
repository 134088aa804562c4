/* test_board_target.c: targets.zynq_ps and targets.fpga_board. Defaults,
 * every field, the errors at line:col with their did-you-mean, the
 * canonical JSON (manifest, cache key) and back from it. The spec-level
 * error cases live in tests/data/specs/bad/target_{fpga,zynq}_*.yaml. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>
#include "enpu.h"
#include "npusim.h"
#include "backend.h"
#include "board_target.h"
#include "spec_int.h"

/* Parse a target file's text for backend bk into t; 0 or -1 with *e. */
static int parse(const enpu_backend_def *bk, const char *yaml, enpu_board_target *t, enpu_err *e)
{
	enpu_ydoc *d = NULL;
	int rc;

	cr_assert_eq(enpu_yaml_parse(yaml, strlen(yaml), "t.yaml", NULL, &d, e), 0, "%s",
		     e->message);
	rc = enpu_board_target_parse(bk, enpu_ydoc_root(d), "t.yaml", t, e);
	enpu_ydoc_free(d);
	return rc;
}

static void expect_json(const enpu_board_target *t, const char *want)
{
	json_object *o = enpu_board_target_json(t);

	cr_assert_not_null(o);
	cr_expect_str_eq(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), want);
	json_object_put(o);
}

#define FPGA_DEFAULT_JSON \
	"{\"array\":[8,8],\"buffer_kib\":512,\"clock_mhz\":100,\"cpu\":\"cortex-a9\"," \
	"\"dataflow\":\"os\",\"dma_bytes_per_cycle\":8,\"max_dim\":4096,\"pl_ops\":" \
	"[\"add\",\"clip\",\"conv2d\",\"gemm\",\"leaky_relu\",\"matmul\",\"mul\",\"relu\",\"sub\"]}"

Test(board_target, defaults)
{
	enpu_board_target t;
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(enpu_board_target_parse(&enpu_bk_fpga_board, NULL, "t.yaml", &t, &e), 0);
	cr_expect_eq(t.cpu, ENPU_CPU_CORTEX_A9);
	cr_expect_eq(t.buffer_kib, 512);
	cr_expect_eq(t.max_dim, 4096);
	cr_expect(t.rows == 8 && t.cols == 8);
	cr_expect_eq(t.dataflow, ENPU_DF_OS);
	cr_expect_eq(t.clock_mhz, 100.0);
	cr_expect_eq(t.dma_bytes_per_cycle, 8);
	cr_expect(enpu_opmask_eq(t.pl_ops, ENPU_PL_OPS_DEFAULT));
	cr_expect(!enpu_opmask_has(t.pl_ops, ENPU_OP_DIV), "div is not in the default");
	expect_json(&t, FPGA_DEFAULT_JSON);
	/* an empty file and an explicit null field keep the defaults */
	cr_assert_eq(parse(&enpu_bk_fpga_board, "clock_mhz:\n", &t, &e), 0, "%s", e.message);
	expect_json(&t, FPGA_DEFAULT_JSON);
	cr_assert_eq(parse(&enpu_bk_zynq_ps, "", &t, &e), 0);
	expect_json(&t, "{\"cpu\":\"cortex-a9\"}");
}

Test(board_target, every_field)
{
	enpu_board_target t;
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(parse(&enpu_bk_fpga_board,
			   "pl_ops: [relu, conv2d, gelu, conv2d]\nbuffer_kib: 64\nmax_dim: 1024\n"
			   "array: [4, 16]\ndataflow: is\nclock_mhz: 142.5\ndma_bytes_per_cycle: 16\n"
			   "cpu: cortex-a53\n", &t, &e), 0, "%s", e.message);
	cr_expect(enpu_opmask_eq(t.pl_ops, ENPU_OPMASK(ENPU_OP_RELU, ENPU_OP_CONV2D, ENPU_OP_GELU)));
	expect_json(&t, "{\"array\":[4,16],\"buffer_kib\":64,\"clock_mhz\":142.5,\"cpu\":\"cortex-a53\","
		    "\"dataflow\":\"is\",\"dma_bytes_per_cycle\":16,\"max_dim\":1024,"
		    "\"pl_ops\":[\"conv2d\",\"gelu\",\"relu\"]}");
	cr_assert_eq(parse(&enpu_bk_fpga_board, "pl_ops: []\n", &t, &e), 0);
	cr_expect(enpu_opmask_empty(t.pl_ops));
	cr_assert_eq(parse(&enpu_bk_zynq_ps, "cpu: cortex-a53\n", &t, &e), 0);
	expect_json(&t, "{\"cpu\":\"cortex-a53\"}");
}

/* message prefix, line:col */
static void expect_error(const enpu_backend_def *bk, const char *yaml, const char *where, const char *msg,
			 const char *fix)
{
	enpu_board_target t;
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(parse(bk, yaml, &t, &e), -1, "accepted: %s", yaml);
	cr_expect_eq(e.code, ENPU_E_TARGET);
	cr_expect_str_eq(e.where, where, "%s", e.message);
	cr_expect(strstr(e.message, msg), "message '%s' lacks '%s'", e.message, msg);
	if (fix)
		cr_expect(strstr(e.fix, fix), "fix '%s' lacks '%s'", e.fix, fix);
}

Test(board_target, errors_at_line_and_col)
{
	expect_error(&enpu_bk_fpga_board, "array: [8, 8]\nbuffer_kb: 64\n", "t.yaml:2:1",
		     "unknown field 'buffer_kb' in the fpga_board target (did you mean 'buffer_kib'?)",
		     "use one of: array, buffer_kib, clock_mhz, cpu, dataflow, dma_bytes_per_cycle, max_dim, pl_ops");
	expect_error(&enpu_bk_zynq_ps, "cpu: cortex-a9\nbuffer_kib: 64\n", "t.yaml:2:1",
		     "unknown field 'buffer_kib' in the zynq_ps target", "use one of: cpu");
	expect_error(&enpu_bk_zynq_ps, "cpu: cortex-a52\n", "t.yaml:1:6",
		     "'cpu' must be one of cortex-a9, cortex-a53 (got 'cortex-a52') (did you mean 'cortex-a53'?)",
		     NULL);
	expect_error(&enpu_bk_fpga_board, "pl_ops: [matmul, softmax]\n", "t.yaml:1:18",
		     "op 'softmax' in 'pl_ops' cannot run on the PL", "leave it out (it runs on the PS)");
	/* a spec v2 op, its id past 32 (op sets are 64 bits): runs on the PS */
	expect_error(&enpu_bk_fpga_board, "pl_ops: [softplus]\n", "t.yaml:1:10",
		     "op 'softplus' in 'pl_ops' cannot run on the PL", "leave it out (it runs on the PS)");
	expect_error(&enpu_bk_fpga_board, "pl_ops:\n  - matmul\n  - gemmm\n", "t.yaml:3:5",
		     "unknown op 'gemmm' in 'pl_ops' (did you mean 'gemm'?)", "the PL takes: matmul, gemm");
	expect_error(&enpu_bk_fpga_board, "pl_ops: matmul\n", "t.yaml:1:9", "must be a list", NULL);
	expect_error(&enpu_bk_fpga_board, "array: [8]\n", "t.yaml:1:8", "two integers", NULL);
	expect_error(&enpu_bk_fpga_board, "array: [8, 5000]\n", "t.yaml:1:12", "'array' cols", NULL);
	expect_error(&enpu_bk_fpga_board, "buffer_kib: 0\n", "t.yaml:1:13", "'buffer_kib' must be", NULL);
	expect_error(&enpu_bk_fpga_board, "buffer_kib: 1.5\n", "t.yaml:1:13", "'buffer_kib' must be", NULL);
	expect_error(&enpu_bk_fpga_board, "max_dim: -1\n", "t.yaml:1:10", "'max_dim' must be", NULL);
	expect_error(&enpu_bk_fpga_board, "dma_bytes_per_cycle: 0\n", "t.yaml:1:22",
		     "'dma_bytes_per_cycle' must be", NULL);
	expect_error(&enpu_bk_fpga_board, "clock_mhz: .inf\n", "t.yaml:1:12", "'clock_mhz' must be", NULL);
	expect_error(&enpu_bk_fpga_board, "clock_mhz: fast\n", "t.yaml:1:12", "'clock_mhz' must be", NULL);
	expect_error(&enpu_bk_fpga_board, "dataflow: rs\n", "t.yaml:1:11",
		     "'dataflow' must be one of os, ws, is", NULL);
	expect_error(&enpu_bk_fpga_board, "cpu: cortex-a9\ncpu: cortex-a53\n", "t.yaml:2:1",
		     "duplicate field 'cpu'", NULL);
	expect_error(&enpu_bk_fpga_board, "[1, 2]\n", "t.yaml:1:1", "must be a mapping", NULL);
}

Test(board_target, json_round_trip)
{
	static const char *const texts[] = {
		"", "pl_ops: []\n", "clock_mhz: 142.857\narray: [1, 4096]\ndataflow: ws\n",
		"pl_ops: [div, tanh, matmul]\ncpu: cortex-a53\nmax_dim: 2147483647\n",
	};
	enpu_err e = ENPU_ERR_INIT;

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		enpu_board_target t, back;
		json_object *o, *o2, *p;
		const char *s;

		cr_assert_eq(parse(&enpu_bk_fpga_board, texts[i], &t, &e), 0, "%s", e.message);
		cr_assert_not_null(o = enpu_board_target_json(&t));
		s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
		/* through text, as the loader sees the manifest */
		cr_assert_not_null(p = json_tokener_parse(s));
		cr_assert_eq(enpu_board_target_from_json(&enpu_bk_fpga_board, p, "manifest.json", &back,
							 &e), 0, "%s: %s", s, e.message);
		cr_assert_not_null(o2 = enpu_board_target_json(&back));
		cr_expect_str_eq(json_object_to_json_string_ext(o2, JSON_C_TO_STRING_PLAIN), s);
		json_object_put(o);
		json_object_put(o2);
		json_object_put(p);
	}
}

Test(board_target, from_json_refuses_what_it_does_not_know)
{
	static const char *const bad[] = {
		"{\"cpu\": \"cortex-a9\", \"extra\": 1}",
		"{\"array\": [8, 8]}",
		"[]",
	};
	static const char *const bad_fpga[] = {
		"{\"cpu\": \"cortex-a9\"}",
		"{\"array\":[8,8],\"buffer_kib\":512,\"clock_mhz\":100,\"cpu\":\"cortex-a9\","
		"\"dataflow\":\"os\",\"dma_bytes_per_cycle\":8,\"max_dim\":4096,\"pl_ops\":[\"softmax\"]}",
		"{\"array\":[8,0],\"buffer_kib\":512,\"clock_mhz\":100,\"cpu\":\"cortex-a9\","
		"\"dataflow\":\"os\",\"dma_bytes_per_cycle\":8,\"max_dim\":4096,\"pl_ops\":[]}",
		"{\"array\":[8,8],\"buffer_kib\":512,\"clock_mhz\":-1,\"cpu\":\"cortex-a9\","
		"\"dataflow\":\"os\",\"dma_bytes_per_cycle\":8,\"max_dim\":4096,\"pl_ops\":[]}",
	};
	enpu_board_target t;
	enpu_err e = ENPU_ERR_INIT;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_object *o = json_tokener_parse(bad[i]);

		cr_expect_eq(enpu_board_target_from_json(&enpu_bk_zynq_ps, o, "m", &t, &e), -1, "%s",
			     bad[i]);
		cr_expect_eq(e.code, ENPU_E_ARTIFACT);
		json_object_put(o);
	}
	for (size_t i = 0; i < sizeof(bad_fpga) / sizeof(bad_fpga[0]); i++) {
		json_object *o = json_tokener_parse(bad_fpga[i]);

		cr_expect_eq(enpu_board_target_from_json(&enpu_bk_fpga_board, o, "m", &t, &e), -1, "%s",
			     bad_fpga[i]);
		json_object_put(o);
	}
}

/* Through enpu_target_resolve: the spec's targets and a target file; the
 * canonical JSON is what enpu_target_json returns. */
Test(board_target, resolve_from_spec_and_file)
{
	static const char spec[] =
		"eulernpu: 1\nname: t\n"
		"inputs:\n  - {name: x, dtype: float32, shape: [1, 4]}\n"
		"outputs: [y]\n"
		"components:\n  - name: c\n    ops:\n      - {name: r, op: relu, in: [x], out: y}\n"
		"targets:\n  fpga_board: {buffer_kib: 64, cpu: cortex-a53}\n  zynq_ps: {cpu: cortex-a53}\n";
	char dir[] = "/tmp/enpu_bt_XXXXXX", path[64];
	enpu_spec *s = NULL;
	enpu_target *t = NULL;
	enpu_err e = ENPU_ERR_INIT;
	const enpu_board_target *b;
	FILE *f;

	cr_assert_eq(enpu_spec_parse(spec, strlen(spec), "spec.yaml", NULL, &s, &e), 0, "%s",
		     e.message);
	cr_assert_eq(enpu_target_resolve(s, "fpga_board", NULL, NULL, NULL, &t, &e), 0, "%s",
		     e.message);
	cr_assert_not_null(b = enpu_target_board(t));
	cr_expect_eq(b->buffer_kib, 64);
	cr_expect_eq(b->cpu, ENPU_CPU_CORTEX_A53);
	cr_expect_null(enpu_target_npu(t));
	cr_expect(strstr(json_object_to_json_string_ext(enpu_target_json(t), JSON_C_TO_STRING_PLAIN),
			 "\"buffer_kib\":64,"));
	enpu_target_free(t);
	cr_assert_eq(enpu_target_resolve(s, "zynq_ps", NULL, NULL, NULL, &t, &e), 0);
	cr_expect_str_eq(json_object_to_json_string_ext(enpu_target_json(t), JSON_C_TO_STRING_PLAIN),
			 "{\"cpu\":\"cortex-a53\"}");
	enpu_target_free(t);
	cr_assert_eq(enpu_target_resolve(s, "npu_sim", NULL, NULL, NULL, &t, &e), 0);
	cr_expect_null(enpu_target_board(t));
	enpu_target_free(t);

	/* a target file replaces the spec's targets.fpga_board */
	cr_assert(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/t.yaml", dir);
	cr_assert_not_null(f = fopen(path, "w"));
	fputs("# the lab's boards\narray: [16, 16]\npl_ops: [conv2d]\nmax_dimm: 3\n", f);
	fclose(f);
	cr_assert_eq(enpu_target_resolve(s, "fpga_board", path, "board.yaml", NULL, &t, &e), -1);
	cr_expect_str_eq(e.where, "board.yaml:4:1");
	cr_expect(strstr(e.message, "did you mean 'max_dim'"), "%s", e.message);
	cr_assert_not_null(f = fopen(path, "w"));
	fputs("array: [16, 16]\npl_ops: [conv2d]\n", f);
	fclose(f);
	cr_assert_eq(enpu_target_resolve(s, "fpga_board", path, "board.yaml", NULL, &t, &e), 0);
	cr_expect_eq(enpu_target_board(t)->rows, 16);
	cr_expect_eq(enpu_target_board(t)->buffer_kib, 512, "the spec's 64 does not apply");
	cr_expect(enpu_opmask_eq(enpu_target_board(t)->pl_ops, ENPU_OPBIT(ENPU_OP_CONV2D)));
	enpu_target_free(t);
	remove(path);
	remove(dir);
	enpu_spec_free(s);
}

/* The registry: a backend is its row or its index there (its bit in masks);
 * no enum of ids to keep in step. */
Test(board_target, registry_rows_and_indices)
{
	const enpu_backend_def *seen[ENPU_BACKENDS_MAX] = {0};
	int n = enpu_backend_count();

	cr_assert(n >= 4 && n <= ENPU_BACKENDS_MAX, "%d", n);
	for (int i = 0; i < n; i++) {
		const enpu_backend_def *d = enpu_backend_at(i);

		cr_assert_not_null(d);
		cr_expect_eq(enpu_backend_index(d), i);
		cr_expect_eq(enpu_backend_parse(d->name), i);
		cr_expect_eq(enpu_backend_by_name(d->name), d);
		cr_expect_str_eq(enpu_backend_name(i), d->name);
		cr_expect_eq(!!(enpu_backends_on_board() & (1u << i)), !!d->on_board, "%s", d->name);
		for (int j = 0; j < i; j++)
			cr_expect_neq(seen[j], d, "%s twice", d->name);
		seen[i] = d;
	}
	cr_expect_null(enpu_backend_at(n));
	cr_expect_null(enpu_backend_at(-1));
	cr_expect_eq(enpu_backend_index(NULL), -1);
	cr_expect_str_eq(enpu_backend_name(n), "unknown");
	cr_expect_eq(enpu_backend_parse("npu_simm"), -1);
	cr_expect_eq(enpu_backends_on_board(), (1u << enpu_backend_index(&enpu_bk_zynq_ps)) |
					       (1u << enpu_backend_index(&enpu_bk_fpga_board)));
}

/* What tells the board targets apart is the row's `pl`, not its name: a
 * row named otherwise with pl set takes the PL's fields, and messages name
 * the row. */
Test(board_target, the_row_decides_the_fields)
{
	enpu_backend_def with_pl = enpu_bk_zynq_ps, without = enpu_bk_fpga_board;
	enpu_board_target t;
	enpu_err e = ENPU_ERR_INIT;

	with_pl.name = "other_board";
	with_pl.pl = 1;
	without.name = "plain_board";
	without.pl = 0;
	cr_assert_eq(enpu_bk_fpga_board.pl, 1);
	cr_assert_eq(enpu_bk_zynq_ps.pl, 0);
	cr_assert_eq(parse(&with_pl, "array: [4, 2]\n", &t, &e), 0, "%s", e.message);
	cr_expect_eq(t.pl, 1);
	cr_expect_eq(t.rows, 4);
	cr_expect_eq(t.cols, 2);
	cr_assert_eq(parse(&without, "array: [4, 2]\n", &t, &e), -1);
	cr_expect(strstr(e.message, "in the plain_board target"), "%s", e.message);
}

/* Reading back a manifest's options: errors name the backend's target and
 * the field (enpu_jread, json.c). */
Test(board_target, from_json_messages_name_target_and_field)
{
	static const struct { const enpu_backend_def *d; const char *json, *msg; } cases[] = {
		{&enpu_bk_zynq_ps, "{\"cpu\": \"cortex-a9\", \"extra\": 1}",
		 "zynq_ps target: unknown field 'extra'"},
		{&enpu_bk_zynq_ps, "{}", "zynq_ps target: missing field 'cpu'"},
		{&enpu_bk_zynq_ps, "{\"cpu\": \"cortex-a7\"}",
		 "zynq_ps target: 'cpu' is not one of cortex-a9, cortex-a53"},
		{&enpu_bk_fpga_board,
		 "{\"array\":[8,8],\"buffer_kib\":0,\"clock_mhz\":100,\"cpu\":\"cortex-a9\","
		 "\"dataflow\":\"os\",\"dma_bytes_per_cycle\":8,\"max_dim\":4096,\"pl_ops\":[]}",
		 "fpga_board target: 'buffer_kib' is 0, not in 1..1048576"},
		{&enpu_bk_fpga_board,
		 "{\"array\":[8],\"buffer_kib\":512,\"clock_mhz\":100,\"cpu\":\"cortex-a9\","
		 "\"dataflow\":\"os\",\"dma_bytes_per_cycle\":8,\"max_dim\":4096,\"pl_ops\":[]}",
		 "fpga_board target: 'array' is not a list of 2 integers"},
		{&enpu_bk_fpga_board,
		 "{\"array\":[8,8],\"buffer_kib\":512,\"clock_mhz\":2e6,\"cpu\":\"cortex-a9\","
		 "\"dataflow\":\"os\",\"dma_bytes_per_cycle\":8,\"max_dim\":4096,\"pl_ops\":[]}",
		 "fpga_board target: 'clock_mhz' is out of range"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_object *o = json_tokener_parse(cases[i].json);
		enpu_board_target t;
		enpu_err e = ENPU_ERR_INIT;

		cr_assert(o, "case %zu", i);
		cr_expect_eq(enpu_board_target_from_json(cases[i].d, o, "m.json", &t, &e), -1);
		cr_expect_eq(e.code, ENPU_E_ARTIFACT);
		cr_expect_str_eq(e.where, "m.json");
		cr_expect_str_eq(e.message, cases[i].msg, "case %zu", i);
		json_object_put(o);
	}
}

/* test_board_exact.c: zynq_ps and fpga_board give the very bytes of
 * cpu_ref. Every op case of tests/data/ops, both examples and the random
 * graphs of tests/data/graphs are compiled for cpu_ref, zynq_ps and
 * fpga_board under several fpga targets (the default; another array; every
 * op on the PS; a buffer so small that almost nothing fits; every PL op
 * with a tight max_dim), run, and result.npz compared with memcmp. A
 * counting PL driver proves the executor goes through the pl.h interface. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "enpu.h"
#include "pipeline.h"
#include "buf.h"
#include "pl.h"

static char tmp[64];

static void setup(void)
{
	strcpy(tmp, "/tmp/enpu_boardx_XXXXXX");
	cr_assert(mkdtemp(tmp));
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmp);
}



typedef struct run_spec {
	const char *backend;
	const char *target;   /* target file text; "" = defaults */
} run_spec;

static const run_spec boards[] = {
	{"zynq_ps", ""},
	{"zynq_ps", "cpu: cortex-a53\n"},
	{"fpga_board", ""},
	{"fpga_board", "array: [3, 5]\ndataflow: ws\ndma_bytes_per_cycle: 3\n"},
	{"fpga_board", "pl_ops: []\n"},                          /* everything on the PS */
	{"fpga_board", "buffer_kib: 1\n"},                       /* tensors of <= 512 bytes */
	{"fpga_board", "pl_ops: [matmul, gemm, conv2d, add, sub, mul, div, relu, sigmoid, tanh, "
		       "leaky_relu, clip, gelu]\nmax_dim: 6\narray: [2, 2]\ndataflow: is\n"},
};
#define N_BOARDS (int)(sizeof(boards) / sizeof(boards[0]))

/* Each case on cpu_ref, then on every board target with each thread
 * count; the number of mismatches. *pl_ops sums the ops the PL ran. */
static int check_cases(char names[][256], int n, const int *threads, int n_threads, int *runs,
		       long *pl_ops)
{
	static char why[4096];
	enpu_buf ref = ENPU_BUF_INIT, got = ENPU_BUF_INIT;
	int bad = 0;

	for (int i = 0; i < n; i++) {
		if (tpl_compile_run(names[i], "cpu_ref", NULL, 1, tmp, NULL, &ref, NULL, NULL, why,
				    sizeof(why)) < 0) {
			cr_log_error("%s", why);
			bad++;
			continue;
		}
		for (int k = 0; k < N_BOARDS; k++)
			for (int th = 0; th < n_threads; th++) {
				enpu_run_info ri;

				(*runs)++;
				if (tpl_compile_run(names[i], boards[k].backend, boards[k].target,
						    threads[th], tmp, NULL, &got, NULL, &ri, why,
						    sizeof(why)) < 0) {
					cr_log_error("%s", why);
					bad++;
				} else if (got.len != ref.len || memcmp(got.data, ref.data, ref.len) != 0) {
					cr_log_error("%s: %s (%s, %d threads) result.npz differs from cpu_ref's",
						     names[i], boards[k].backend, boards[k].target, threads[th]);
					bad++;
				} else {
					*pl_ops += ri.pl_ops;
				}
			}
	}
	enpu_buf_free(&ref);
	enpu_buf_free(&got);
	return bad;
}

TestSuite(board_exact, .init = setup, .fini = teardown, .timeout = 600);

Test(board_exact, every_op_case)
{
	static char names[256][256];
	int n = tpl_read_cases("tests/data/ops/cases.txt", "tests/data/ops/", names, 256);
	int one = 1, runs = 0, bad;
	long pl = 0;

	cr_assert_geq(n, 40, "only %d op cases", n);
	bad = check_cases(names, n, &one, 1, &runs, &pl);
	cr_assert_eq(bad, 0, "%d of %d board runs differ from cpu_ref (see the log)", bad, runs);
	cr_assert_gt(pl, 40, "the PL ran only %ld ops", pl);
}

Test(board_exact, examples_and_threads)
{
	static char names[2][256] = {"examples/tiny_mlp", "examples/tiny_cnn"};
	int threads[] = {1, 3}, runs = 0, bad;
	long pl = 0;

	bad = check_cases(names, 2, threads, 2, &runs, &pl);
	cr_assert_eq(bad, 0, "%d of %d board runs differ from cpu_ref (see the log)", bad, runs);
	cr_assert_eq(runs, 2 * N_BOARDS * 2);
	cr_assert_gt(pl, 0);
}

Test(board_exact, random_graphs)
{
	static char names[64][256];
	int n = tpl_read_cases("tests/data/graphs/cases.txt", "tests/data/graphs/", names, 64);
	int one = 1, runs = 0, bad;
	long pl = 0;

	cr_assert_geq(n, 15, "only %d random graphs", n);
	bad = check_cases(names, n, &one, 1, &runs, &pl);
	cr_assert_eq(bad, 0, "%d of %d board runs differ from cpu_ref (see the log)", bad, runs);
	cr_assert_gt(pl, n);
}

/* ---- a second PL driver: counts every call, computes through the
 * emulated one. If the executor bypassed the interface, the counts would
 * not add up to the plan's segments and buffers. */

static struct {
	int open, load, in, start, wait, back, reset, close;
	long in_bytes, back_bytes;
	int fail_start;
} calls;

static int c_open(const enpu_pl_config *cfg, void **h, enpu_err *e)
{
	calls.open++;
	cr_assert_not_null(cfg->target);
	return enpu_pl_emulated.open(cfg, h, e);
}

static int c_load(void *h, const enpu_pl_segment *s, enpu_err *e)
{
	char want[48];

	calls.load++;
	snprintf(want, sizeof(want), "fpga_board.pl.%d", s->seg->id);
	cr_assert_str_eq(s->bitstream, want);
	return enpu_pl_emulated.load(h, s, e);
}

static int c_in(void *h, int buf, const void *data, size_t bytes, enpu_err *e)
{
	calls.in++;
	calls.in_bytes += (long)bytes;
	return enpu_pl_emulated.transfer_in(h, buf, data, bytes, e);
}

static int c_start(void *h, enpu_err *e)
{
	calls.start++;
	if (calls.fail_start)
		return enpu_fail(e, ENPU_E_JOB_FAILED, "pl", NULL, "the PL did not start");
	return enpu_pl_emulated.start(h, e);
}

static int c_wait(void *h, int timeout_ms, uint64_t *cycles, enpu_err *e)
{
	calls.wait++;
	cr_assert_gt(timeout_ms, 0);
	return enpu_pl_emulated.wait(h, timeout_ms, cycles, e);
}

static int c_back(void *h, int buf, void *data, size_t bytes, enpu_err *e)
{
	calls.back++;
	calls.back_bytes += (long)bytes;
	return enpu_pl_emulated.read_back(h, buf, data, bytes, e);
}

static int c_reset(void *h, enpu_err *e)
{
	calls.reset++;
	return enpu_pl_emulated.reset(h, e);
}

static void c_close(void *h)
{
	calls.close++;
	enpu_pl_emulated.close(h);
}

static const enpu_pl_driver counting = {
	"counting", "test driver", c_open, c_load, c_in, c_start, c_wait, c_back, c_reset, c_close,
};

/* Count report.json's segments and sum their DMA bytes and PL cycles. */
static void plan_counts(const char *rp, int *segs, long *in_b, long *out_b, long *cycles)
{
	enpu_buf b = ENPU_BUF_INIT;
	enpu_err e = ENPU_ERR_INIT;
	json_object *r, *f, *s, *v;

	*segs = 0;
	*in_b = *out_b = *cycles = 0;
	cr_assert_eq(enpu_read_file(rp, 0, &b, &e), 0, "%s", e.message);
	cr_assert_not_null(r = json_tokener_parse(b.data));
	cr_assert(json_object_object_get_ex(r, "fpga", &f));
	cr_assert(json_object_object_get_ex(f, "pl", &v));
	cr_assert_str_eq(json_object_get_string(v), "counting");
	cr_assert(json_object_object_get_ex(f, "segments", &s));
	*segs = (int)json_object_array_length(s);
	for (int i = 0; i < *segs; i++) {
		json_object *o = json_object_array_get_idx(s, (size_t)i);

		cr_assert(json_object_object_get_ex(o, "dma_in_bytes", &v));
		*in_b += (long)json_object_get_int64(v);
		cr_assert(json_object_object_get_ex(o, "dma_out_bytes", &v));
		*out_b += (long)json_object_get_int64(v);
		cr_assert(json_object_object_get_ex(o, "pl_cycles", &v));
		*cycles += (long)json_object_get_int64(v);
	}
	json_object_put(r);
	enpu_buf_free(&b);
}

Test(board_exact, executor_goes_through_the_driver_interface)
{
	static char why[4096];
	char rp[128];
	enpu_buf ref = ENPU_BUF_INIT, got = ENPU_BUF_INIT;
	enpu_run_info ri;
	enpu_compile_info ci;
	int segs;
	long in_b, out_b, cyc;

	snprintf(rp, sizeof(rp), "%s/report.json", tmp);
	cr_assert_eq(tpl_compile_run("examples/tiny_cnn", "cpu_ref", NULL, 1, tmp, NULL, &ref, NULL,
				     NULL, why, sizeof(why)), 0, "%s", why);
	enpu_pl_set(&counting);
	cr_assert_str_eq(enpu_pl_current_name(), "counting");
	cr_assert_eq(tpl_compile_run("examples/tiny_cnn", "fpga_board", "", 1, tmp, rp, &got, &ci,
				     &ri, why, sizeof(why)), 0, "%s", why);
	cr_assert(got.len == ref.len && memcmp(got.data, ref.data, ref.len) == 0);
	plan_counts(rp, &segs, &in_b, &out_b, &cyc);
	cr_assert_gt(segs, 0);
	cr_assert_eq(ci.pl_segments, segs);
	cr_assert_eq(ri.pl_segments, segs);
	cr_assert_eq(ci.pl_ops, ri.pl_ops);
	cr_assert_eq(ci.pl_ops + ci.ps_ops, ci.n_ops);
	cr_assert_eq(calls.open, 1);
	cr_assert_eq(calls.close, 1);
	cr_assert_eq(calls.load, segs);
	cr_assert_eq(calls.start, segs);
	cr_assert_eq(calls.wait, segs);
	cr_assert_eq(calls.in_bytes, in_b, "DMA-in bytes %ld vs plan %ld", calls.in_bytes, in_b);
	cr_assert_eq(calls.back_bytes, out_b);
	cr_assert_eq((long)ri.pl_cycles, cyc, "the driver's cycles reach the run info");
	cr_assert_eq(calls.reset, 0);

	/* a PL that fails: the run fails with its error, the PL is reset */
	memset(&calls, 0, sizeof(calls));
	calls.fail_start = 1;
	cr_assert_eq(tpl_compile_run("examples/tiny_cnn", "fpga_board", "", 1, tmp, NULL, &got,
				     NULL, &ri, why, sizeof(why)), -1);
	cr_assert(strstr(why, "the PL did not start"), "%s", why);
	cr_assert_eq(calls.reset, 1);
	cr_assert_eq(calls.close, 1, "closed on failure too");

	/* back to the emulated PL by name */
	cr_assert_eq(enpu_pl_select("emulated", NULL), 0);
	cr_assert_str_eq(enpu_pl_current_name(), "emulated");
	enpu_buf_free(&ref);
	enpu_buf_free(&got);
}

Test(board_exact, pl_registry)
{
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(enpu_pl_by_name("emulated"), &enpu_pl_emulated);
	cr_assert_null(enpu_pl_by_name("uio"));
	cr_assert_str_eq(enpu_pl_names(), "emulated");
	cr_assert_str_eq(enpu_pl_current_name(), "emulated");
	cr_assert_eq(enpu_pl_select("xilinx", &e), -1);
	cr_assert_eq(e.code, ENPU_E_USAGE);
	cr_assert(strstr(e.message, "'xilinx'") && strstr(e.message, "emulated"), "%s", e.message);
	cr_assert_str_eq(enpu_pl_current_name(), "emulated", "an unknown name changes nothing");
}

/* Out-of-order calls to the emulated PL are errors, never crashes. */
Test(board_exact, emulated_pl_refuses_out_of_order_calls)
{
	enpu_err e = ENPU_ERR_INIT;
	void *h = NULL;
	float x[4] = {0};
	uint64_t cyc;

	cr_assert_eq(enpu_pl_emulated.open(NULL, &h, &e), 0);
	cr_assert_eq(enpu_pl_emulated.transfer_in(h, 0, x, sizeof(x), &e), -1);
	cr_assert_eq(enpu_pl_emulated.start(h, &e), -1);
	cr_assert_eq(enpu_pl_emulated.wait(h, 10, &cyc, &e), -1);
	cr_assert_eq(enpu_pl_emulated.read_back(h, 0, x, sizeof(x), &e), -1);
	cr_assert_eq(e.code, ENPU_E_JOB_FAILED);
	cr_assert_eq(enpu_pl_emulated.reset(h, &e), 0);
	enpu_pl_emulated.close(h);
}

/* report.json sections: "fpga" for fpga_board, "zynq" for zynq_ps. */
Test(board_exact, reports)
{
	static char why[4096];
	char rp[128];
	enpu_buf res = ENPU_BUF_INIT, rb = ENPU_BUF_INIT;
	enpu_err e = ENPU_ERR_INIT;
	enpu_run_info ri;
	json_object *r, *f, *v;

	snprintf(rp, sizeof(rp), "%s/report.json", tmp);
	cr_assert_eq(tpl_compile_run("examples/tiny_mlp", "zynq_ps", "cpu: cortex-a53\n", 1, tmp,
				     rp, &res, NULL, &ri, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(ri.pl_ops, 0);
	cr_assert_gt(ri.ps_ops, 0);
	cr_assert_eq(enpu_read_file(rp, 0, &rb, &e), 0, "%s", e.message);
	cr_assert_not_null(r = json_tokener_parse(rb.data));
	cr_assert(json_object_object_get_ex(r, "zynq", &f));
	cr_assert(json_object_object_get_ex(f, "cpu", &v));
	cr_assert_str_eq(json_object_get_string(v), "cortex-a53");
	cr_assert(!json_object_object_get_ex(r, "fpga", NULL));
	json_object_put(r);

	rb.len = 0;
	cr_assert_eq(tpl_compile_run("examples/tiny_mlp", "fpga_board", "", 1, tmp, rp, &res, NULL,
				     &ri, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(enpu_read_file(rp, 0, &rb, &e), 0, "%s", e.message);
	cr_assert_not_null(r = json_tokener_parse(rb.data));
	cr_assert(json_object_object_get_ex(r, "fpga", &f));
	cr_assert(json_object_object_get_ex(f, "pl", &v));
	cr_assert_str_eq(json_object_get_string(v), "emulated");
	cr_assert(json_object_object_get_ex(f, "pl_ops", &v));
	cr_assert_eq(json_object_get_int(v), ri.pl_ops);
	cr_assert(json_object_object_get_ex(f, "ps_ops", &v));
	cr_assert_eq(json_object_get_int(v), ri.ps_ops);
	cr_assert(json_object_object_get_ex(f, "pl_cycles_total", &v));
	cr_assert_eq((uint64_t)json_object_get_int64(v), ri.pl_cycles);
	cr_assert(json_object_object_get_ex(f, "dma_bytes_total", &v));
	cr_assert_gt(json_object_get_int64(v), 0);
	cr_assert(json_object_object_get_ex(f, "segments", &v));
	cr_assert_eq((int)json_object_array_length(v), ri.pl_segments);
	json_object_put(r);
	enpu_buf_free(&res);
	enpu_buf_free(&rb);
}

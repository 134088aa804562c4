/* test_npu_exact.c: npu_sim gives the very bytes of cpu_ref. Every op case
 * of tests/data/ops, both examples and the random graphs of
 * tests/data/graphs (gen.py) are compiled for cpu_ref and for npu_sim under
 * several targets (array sizes that fold M, N and K raggedly; all three
 * dataflows), run, and result.npz compared with memcmp: the npz writer is
 * deterministic, so equal files mean equal bits. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>
#include "enpu.h"
#include "pipeline.h"
#include "buf.h"

static const char *const arrays[] = {"[1, 1]", "[2, 3]", "[16, 16]", "[7, 5]"};
static const char *const flows[] = {"os", "ws", "is"};

static char tmp[64];

static void setup(void)
{
	strcpy(tmp, "/tmp/enpu_npux_XXXXXX");
	cr_assert(mkdtemp(tmp));
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmp);
}



/* Each case: cpu_ref once, then npu_sim under every target of targets;
 * returns the number of mismatches (reported into the log). */
static int check_cases(char names[][256], int n, const char *const *targets, int n_targets,
		       const int *threads, int n_threads, int *runs)
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
		for (int k = 0; k < n_targets; k++)
			for (int th = 0; th < n_threads; th++) {
				(*runs)++;
				if (tpl_compile_run(names[i], "npu_sim", targets[k], threads[th],
						    tmp, NULL, &got, NULL, NULL, why,
						    sizeof(why)) < 0) {
					cr_log_error("%s", why);
					bad++;
				} else if (got.len != ref.len || memcmp(got.data, ref.data, ref.len) != 0) {
					cr_log_error("%s: npu_sim (%s, %d threads) result.npz differs from cpu_ref's",
						     names[i], targets[k], threads[th]);
					bad++;
				}
			}
	}
	enpu_buf_free(&ref);
	enpu_buf_free(&got);
	return bad;
}

static int all_targets(char out[][96])
{
	int n = 0;

	for (size_t a = 0; a < sizeof(arrays) / sizeof(arrays[0]); a++)
		for (size_t f = 0; f < sizeof(flows) / sizeof(flows[0]); f++)
			snprintf(out[n++], 96, "array: %s\ndataflow: %s\n", arrays[a], flows[f]);
	return n;
}

TestSuite(npu_exact, .init = setup, .fini = teardown, .timeout = 600);

Test(npu_exact, every_op_case_every_target)
{
	static char names[256][256], tbuf[12][96];
	const char *targets[12];
	int n = tpl_read_cases("tests/data/ops/cases.txt", "tests/data/ops/", names, 256);
	int nt = all_targets(tbuf), one = 1, runs = 0, bad;

	for (int i = 0; i < nt; i++)
		targets[i] = tbuf[i];
	cr_assert_geq(n, 40, "only %d op cases", n);
	bad = check_cases(names, n, targets, nt, &one, 1, &runs);
	cr_assert_eq(bad, 0, "%d of %d npu_sim runs differ from cpu_ref (see the log)", bad, runs);
}

Test(npu_exact, examples_every_target_and_threads)
{
	static char names[2][256] = {"examples/tiny_mlp", "examples/tiny_cnn"}, tbuf[12][96];
	const char *targets[12];
	int nt = all_targets(tbuf), threads[] = {1, 3}, runs = 0, bad;

	for (int i = 0; i < nt; i++)
		targets[i] = tbuf[i];
	bad = check_cases(names, 2, targets, nt, threads, 2, &runs);
	cr_assert_eq(bad, 0, "%d of %d npu_sim runs differ from cpu_ref (see the log)", bad, runs);
	cr_assert_eq(runs, 48);
}

Test(npu_exact, random_graphs)
{
	static char names[64][256];
	static const char *const targets[] = {
		"array: [3, 2]\ndataflow: ws\n",
		"array: [5, 7]\ndataflow: is\n",
		"array: [4, 4]\ndataflow: os\nsram_kib: {ifmap: 1, filter: 1, ofmap: 1}\n",
	};
	int n = tpl_read_cases("tests/data/graphs/cases.txt", "tests/data/graphs/", names, 64);
	int threads[] = {1, 3}, runs = 0, bad;

	cr_assert_geq(n, 15, "only %d random graphs", n);
	bad = check_cases(names, n, targets, 3, threads, 2, &runs);
	cr_assert_eq(bad, 0, "%d of %d npu_sim runs differ from cpu_ref (see the log)", bad, runs);
}

/* The spec's own targets.npu_sim (no target file) and the default target
 * (none at all) give the same bytes too. */
Test(npu_exact, spec_and_default_targets)
{
	static char why[4096];
	enpu_buf ref = ENPU_BUF_INIT, got = ENPU_BUF_INIT;

	cr_assert_eq(tpl_compile_run("examples/tiny_cnn", "cpu_ref", NULL, 1, tmp, NULL, &ref, NULL,
				     NULL, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(tpl_compile_run("examples/tiny_cnn", "npu_sim", NULL, 1, tmp, NULL, &got, NULL,
				     NULL, why, sizeof(why)), 0, "%s", why);
	cr_assert(got.len == ref.len && memcmp(got.data, ref.data, ref.len) == 0);
	cr_assert_eq(tpl_compile_run("examples/tiny_cnn", "npu_sim", "", 3, tmp, NULL, &got, NULL,
				     NULL, why, sizeof(why)), 0, "%s", why);
	cr_assert(got.len == ref.len && memcmp(got.data, ref.data, ref.len) == 0);
	enpu_buf_free(&ref);
	enpu_buf_free(&got);
}

/* report.json and the run info of an npu_sim run; a cpu_ref report has no
 * "npu" section and zero npu fields. */
Test(npu_exact, report_json_and_run_info)
{
	static char why[4096];
	char rp[128];
	enpu_buf res = ENPU_BUF_INIT, rb = ENPU_BUF_INIT;
	enpu_run_info info;
	enpu_err e = ENPU_ERR_INIT;
	json_object *r, *v, *npu, *tot;

	snprintf(rp, sizeof(rp), "%s/report.json", tmp);
	cr_assert_eq(tpl_compile_run("examples/tiny_cnn", "npu_sim", "array: [8, 8]\ndataflow: ws\n",
				     1, tmp, rp, &res, NULL, &info, why, sizeof(why)), 0, "%s", why);
	cr_assert_gt(info.npu_cycles, 0);
	cr_assert_gt(info.npu_time_us, 0.0);
	cr_assert_gt(info.npu_dram_bytes, 0);
	cr_assert(info.npu_utilisation > 0.0 && info.npu_utilisation <= 1.0, "%g",
		  info.npu_utilisation);
	cr_assert_eq(enpu_read_file(rp, 0, &rb, &e), 0, "%s", e.message);
	cr_assert_not_null(r = json_tokener_parse(rb.data));
	cr_assert(json_object_object_get_ex(r, "format", &v));
	cr_assert_str_eq(json_object_get_string(v), "eulernpu-report");
	cr_assert(json_object_object_get_ex(r, "version", &v) && json_object_get_int(v) == 2);
	cr_assert(json_object_object_get_ex(r, "backend", &v));
	cr_assert_str_eq(json_object_get_string(v), "npu_sim");
	cr_assert(json_object_object_get_ex(r, "artifact", &v) &&
		  strlen(json_object_get_string(v)) == 64);
	cr_assert(!json_object_object_get_ex(r, "seconds", NULL),
		  "a v2 report carries no clock, so a repeated run stores the same bytes");
	cr_assert(json_object_object_get_ex(r, "outputs", &v) &&
		  json_object_array_length(v) == 1);
	cr_assert(json_object_object_get_ex(r, "npu", &npu));
	cr_assert(json_object_object_get_ex(npu, "totals", &tot));
	cr_assert(json_object_object_get_ex(tot, "cycles", &v));
	cr_assert_eq((uint64_t)json_object_get_int64(v), info.npu_cycles,
		     "report.json and the run info agree on the cycles");
	json_object_put(r);

	rb.len = 0;
	cr_assert_eq(tpl_compile_run("examples/tiny_cnn", "cpu_ref", NULL, 1, tmp, rp, &res, NULL,
				     &info, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(info.npu_cycles, 0);
	cr_assert_eq(info.npu_dram_bytes, 0);
	cr_assert_eq(enpu_read_file(rp, 0, &rb, &e), 0, "%s", e.message);
	cr_assert_not_null(r = json_tokener_parse(rb.data));
	cr_assert(!json_object_object_get_ex(r, "npu", NULL), "no npu section for cpu_ref");
	cr_assert(json_object_object_get_ex(r, "backend", &v));
	cr_assert_str_eq(json_object_get_string(v), "cpu_ref");
	json_object_put(r);
	enpu_buf_free(&res);
	enpu_buf_free(&rb);
}

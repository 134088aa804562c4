/* test_order.c: every documented operation order, bit for bit, on every
 * backend. The cases and their independent references are in
 * tests/ref/order.c (written from the spec format's reference arithmetic,
 * sharing no code with the kernels). For each case:
 *   - every "wrong order" variant gives other bits than the reference on
 *     the case's data, so the comparisons below can fail;
 *   - cpu_ref (1 and 3 threads), npu_sim (array shapes that fold M, N and K
 *     raggedly, every dataflow), zynq_ps and fpga_board (the PL emulated,
 *     under targets that move ops between PL and PS) give exactly the
 *     reference's bits.
 * The cross-ISA runners are checked against the same references by
 * tests/e2e/cross.sh (through tests/ref/order_cases.c). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "npz.h"
#include "order.h"
#include "pipeline.h"
#include "gemm.h"

static char tmp[64];

static void setup(void)
{
	strcpy(tmp, "/tmp/enpu_order_XXXXXX");
	cr_assert(mkdtemp(tmp));
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmp);
}

TestSuite(order, .init = setup, .fini = teardown);

static uint32_t bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u;
}

/* The case's reference (v = 0) or variant output: malloc'ed. */
static float *compute(const ord_case *c, int v)
{
	float *in[ORD_MAX_IN] = {0};
	size_t n = ord_numel(c->out_ndim, c->out);
	float *y = calloc(n ? n : 1, sizeof(float));

	cr_assert_not_null(y);
	ord_make_inputs(c, in);
	if (v == 0)
		ord_reference(c, (const float *const *)in, y);
	else
		c->fn(c, (const float *const *)in, y, v);
	for (int t = 0; t < c->n_in; t++)
		free(in[t]);
	return y;
}

/* Elements whose bits differ; *first the first such index. */
static size_t differ(const float *a, const float *b, size_t n, size_t *first)
{
	size_t d = 0;

	for (size_t i = 0; i < n; i++)
		if (bits(a[i]) != bits(b[i]) && d++ == 0)
			*first = i;
	return d;
}

Test(order, every_wrong_order_changes_bits)
{
	int checked = 0;

	for (int k = 0; k < ord_n_cases; k++) {
		const ord_case *c = &ord_cases[k];
		size_t n = ord_numel(c->out_ndim, c->out), first = 0;
		float *ref = compute(c, 0);

		cr_assert_geq(c->n_variants, 1, "%s has no wrong variant to prove the test can fail",
			      c->name);
		for (int v = 1; v <= c->n_variants; v++) {
			float *w = compute(c, v);
			size_t d = differ(ref, w, n, &first);
			cr_expect_gt(d, 0, "%s: the variant '%s' gives the very bits of the reference: "
				     "the case cannot tell the orders apart", c->name, c->variant[v]);
			if (d)
				cr_log_info("%s: '%s' changes %zu of %zu elements", c->name,
					    c->variant[v], d, n);
			checked++;
			free(w);
		}
		free(ref);
	}
	cr_assert_geq(checked, 30);
}

/* Write every case under tmp/cases; names[] gets their directories. */
static void write_cases(char dirs[][256])
{
	char why[1024], base[128];

	snprintf(base, sizeof base, "%s/cases", tmp);
	cr_assert_eq(mkdir(base, 0700), 0);
	for (int k = 0; k < ord_n_cases; k++) {
		snprintf(dirs[k], 256, "%s/%s", base, ord_cases[k].name);
		cr_assert_eq(mkdir(dirs[k], 0700), 0);
		cr_assert_eq(ord_write_case(&ord_cases[k], dirs[k], why, sizeof why), 0, "%s", why);
	}
}

/* Run every case on backend under each target with each thread count and
 * compare with the reference bit for bit; returns the mismatches. */
static int check_backend(char dirs[][256], const char *backend, const char *const *targets,
			 int n_targets, const int *threads, int n_threads, int *runs)
{
	static char why[4096];
	enpu_buf raw = ENPU_BUF_INIT;
	enpu_tlist res = ENPU_TLIST_INIT;
	enpu_err e = ENPU_ERR_INIT;
	int bad = 0;

	for (int k = 0; k < ord_n_cases; k++) {
		const ord_case *c = &ord_cases[k];
		size_t n = ord_numel(c->out_ndim, c->out), first = 0;
		float *ref = compute(c, 0);

		for (int t = 0; t < n_targets; t++)
			for (int h = 0; h < n_threads; h++) {
				(*runs)++;
				enpu_tlist_free(&res);
				if (tpl_compile_run(dirs[k], backend, targets[t], threads[h], tmp, NULL,
						    &raw, NULL, NULL, why, sizeof why) < 0 ||
				    enpu_npz_read_mem(raw.data, raw.len, "result.npz", NULL, &res, &e) < 0) {
					cr_log_error("%s%s", why, e.message);
					bad++;
					continue;
				}
				enpu_tensor *y = enpu_tlist_find(&res, "y");
				if (!y || y->shape.ndim != c->out_ndim) {
					cr_log_error("%s on %s: no output y of rank %d", c->name, backend,
						     c->out_ndim);
					bad++;
					continue;
				}
				size_t d = differ(ref, y->data, n, &first);
				if (d) {
					cr_log_error("%s on %s [%s] with %d threads: %zu of %zu elements "
						     "differ from the reference; first at %zu: got %a "
						     "(0x%08x), want %a (0x%08x)", c->name, backend,
						     targets[t] ? targets[t] : "spec", threads[h], d, n,
						     first, (double)y->data[first], bits(y->data[first]),
						     (double)ref[first], bits(ref[first]));
					bad++;
				}
			}
		free(ref);
	}
	enpu_tlist_free(&res);
	enpu_buf_free(&raw);
	return bad;
}

static char dirs[64][256];

Test(order, cpu_ref_gives_the_reference_bits, .timeout = 300)
{
	const char *spec[] = {NULL};
	const int threads[] = {1, 3};
	int runs = 0;

	cr_assert_leq(ord_n_cases, 64);
	write_cases(dirs);
	cr_assert_eq(check_backend(dirs, "cpu_ref", spec, 1, threads, 2, &runs), 0,
		     "cpu_ref differs from the references (see the log)");
	cr_assert_eq(runs, 2 * ord_n_cases);
}

/* The GEMM core's micro-kernels of every instruction set this CPU has
 * (gemm.h: portable everywhere, AVX2 and AVX-512 where present), on
 * cpu_ref and on npu_sim's default array. */
Test(order, every_instruction_set_gives_the_reference_bits, .timeout = 600)
{
	const char *isas[] = {"portable", "avx2", "avx512"}, *spec[] = {NULL};
	const int threads[] = {1, 3};
	int tried = 0, runs = 0;

	write_cases(dirs);
	for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++) {
		if (enpu_gemm_use_isa(isas[i]) != 0)
			continue;
		cr_assert_str_eq(enpu_gemm_isa(), isas[i]);
		tried++;
		cr_assert_eq(check_backend(dirs, "cpu_ref", spec, 1, threads, 2, &runs), 0,
			     "cpu_ref on %s differs from the references (see the log)", isas[i]);
		cr_assert_eq(check_backend(dirs, "npu_sim", spec, 1, threads, 2, &runs), 0,
			     "npu_sim on %s differs from the references (see the log)", isas[i]);
	}
	cr_assert_geq(tried, 1);
	cr_assert_eq(runs, 4 * tried * ord_n_cases);
}

Test(order, npu_sim_gives_the_reference_bits, .timeout = 600)
{
	static const char *const targets[] = {
		"array: [1, 1]\ndataflow: os\n", "array: [2, 3]\ndataflow: ws\n",
		"array: [16, 16]\ndataflow: is\n", "array: [7, 5]\ndataflow: os\n",
		"array: [7, 5]\ndataflow: ws\n", "array: [3, 2]\ndataflow: is\n",
	};
	const int threads[] = {1, 3};
	int runs = 0;

	write_cases(dirs);
	cr_assert_eq(check_backend(dirs, "npu_sim", targets, 6, threads, 2, &runs), 0,
		     "npu_sim differs from the references (see the log)");
	cr_assert_eq(runs, 12 * ord_n_cases);
}

Test(order, zynq_ps_and_fpga_board_give_the_reference_bits, .timeout = 600)
{
	static const char *const zynq[] = {"", "cpu: cortex-a53\n"};
	static const char *const fpga[] = {
		"",
		"array: [3, 5]\ndataflow: ws\ndma_bytes_per_cycle: 3\n",
		"pl_ops: []\n",
		"buffer_kib: 1\n",
		"pl_ops: [matmul, gemm, conv2d, add, sub, mul, div, relu, sigmoid, tanh, "
		"leaky_relu, clip, gelu]\nmax_dim: 6\narray: [2, 2]\ndataflow: is\n",
	};
	const int threads[] = {1, 2};
	int runs = 0;

	write_cases(dirs);
	cr_assert_eq(check_backend(dirs, "zynq_ps", zynq, 2, threads, 2, &runs), 0,
		     "zynq_ps differs from the references (see the log)");
	cr_assert_eq(check_backend(dirs, "fpga_board", fpga, 5, threads, 2, &runs), 0,
		     "fpga_board differs from the references (see the log)");
	cr_assert_eq(runs, 14 * ord_n_cases);
}

/* The comparison itself can fail: a case run against another case's
 * reference, and one flipped bit, are both noticed. */
Test(order, a_wrong_result_is_noticed)
{
	const ord_case *c = &ord_cases[0];
	size_t n = ord_numel(c->out_ndim, c->out), first = 99;
	float *ref = compute(c, 0), *got = compute(c, 0);

	cr_assert_eq(differ(ref, got, n, &first), 0);
	got[n - 1] = nextafterf(got[n - 1], INFINITY);
	cr_assert_eq(differ(ref, got, n, &first), 1);
	cr_assert_eq(first, n - 1);
	free(ref);
	free(got);
}

/* test_compare.c: enpu_compare: tolerances, the worst offender's report,
 * exact mode, NaN/inf rules, and the key/shape errors. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "enpu.h"
#include "npz.h"

static char dir[64];

static void setup(void)
{
	strcpy(dir, "/tmp/enpu_cmp_XXXXXX");
	cr_assert(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

/* Write file `name` in dir holding one tensor per (name, ndim, dims..., n,
 * values...) group, ended by NULL. */
static const char *npz(const char *name, ...)
{
	static char path[4][128];
	static int slot;
	enpu_tlist l = ENPU_TLIST_INIT;
	enpu_err e = ENPU_ERR_INIT;
	va_list ap;
	const char *tn;
	char *p = path[slot++ % 4];

	va_start(ap, name);
	while ((tn = va_arg(ap, const char *))) {
		enpu_tensor t = {0};
		uint64_t n;
		t.dtype = ENPU_DT_F32;
		t.shape.ndim = va_arg(ap, int);
		for (int d = 0; d < t.shape.ndim; d++)
			t.shape.dim[d] = va_arg(ap, int);
		cr_assert_eq(enpu_tensor_alloc(&t, NULL, &e), 0);
		t.name = strdup(tn);
		enpu_shape_numel(&t.shape, &n);
		for (uint64_t i = 0; i < n; i++)
			t.data[i] = (float)va_arg(ap, double);
		cr_assert_eq(enpu_tlist_push(&l, &t, &e), 0);
	}
	va_end(ap);
	snprintf(p, 128, "%s/%s", dir, name);
	cr_assert_eq(enpu_npz_write(p, &l, &e), 0, "%s", e.message);
	enpu_tlist_free(&l);
	return p;
}

static int cmp(const char *got, const char *exp, double atol, double rtol, int exact,
	       enpu_cmp_result *r, enpu_err *e)
{
	enpu_cmp_opts o = {atol, rtol, exact};
	return enpu_compare(got, "got.npz", exp, "expected.npz", &o, NULL, r, e);
}

TestSuite(compare, .init = setup, .fini = teardown);

Test(compare, equal_passes)
{
	const char *a = npz("a.npz", "logits", 2, 1, 4, 0.5, -1.0, 2.0, 3.0,
			    "h", 1, 2, 1.0, 2.0, NULL);
	const char *b = npz("b.npz", "logits", 2, 1, 4, 0.5, -1.0, 2.0, 3.0,
			    "h", 1, 2, 1.0, 2.0, NULL);
	enpu_cmp_result r;
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(cmp(a, b, 1e-5, 0, 0, &r, &e), 0, "%s", e.message);
	cr_assert_eq(r.ok, 1);
	cr_assert_eq(r.n_tensors, 2);
	cr_assert_eq(r.max_abs_diff, 0.0);
	cr_assert_eq(cmp(a, b, 0, 0, 1, &r, &e), 0);
	cr_assert_eq(r.ok, 1);
}

Test(compare, failure_names_the_worst_element)
{
	const char *got = npz("g.npz", "logits", 2, 1, 4, 0.0, 1.0001, 2.0, 3.001,
			      "h", 1, 2, 1.0, 2.00002, NULL);
	const char *exp = npz("x.npz", "logits", 2, 1, 4, 0.0, 1.0, 2.0, 3.0,
			      "h", 1, 2, 1.0, 2.0, NULL);
	enpu_cmp_result r;
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(cmp(got, exp, 1e-5, 0, 0, &r, &e), 0);
	cr_assert_eq(r.ok, 0);
	cr_assert_eq(e.code, ENPU_E_CMP_DIFF);
	cr_assert_str_eq(r.tensor, "logits");
	cr_assert_str_eq(r.index, "(0, 3)");
	cr_assert_eq(r.got, 3.001f);
	cr_assert_eq(r.expected, 3.0f);
	cr_assert_float_eq(r.diff, (double)3.001f - 3.0, 1e-12);
	cr_assert_float_eq(r.max_abs_diff, (double)3.001f - 3.0, 1e-12);
	cr_assert(strncmp(e.message, "tensor 'logits' differs at (0, 3): got 3.0009999", 47) == 0,
		  "%s", e.message);
}

Test(compare, message_text)
{
	const char *got = npz("g.npz", "logits", 2, 1, 4, 0.0, 0.0, 0.0, 0.51234567, NULL);
	const char *exp = npz("x.npz", "logits", 2, 1, 4, 0.0, 0.0, 0.0, 0.51230001, NULL);
	enpu_cmp_result r;
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(cmp(got, exp, 1e-5, 0, 0, &r, &e), 0);
	cr_assert_eq(r.ok, 0);
	cr_assert_str_eq(e.message, "tensor 'logits' differs at (0, 3): got 0.51234567, "
			 "expected 0.51230001, |diff| 4.566e-05 > tol 1e-05");
}

Test(compare, one_dim_index_and_worst_across_tensors)
{
	const char *got = npz("g.npz", "a", 1, 3, 0.0, 0.1, 0.0, "b", 1, 3, 0.0, 0.0, 0.5, NULL);
	const char *exp = npz("x.npz", "a", 1, 3, 0.0, 0.0, 0.0, "b", 1, 3, 0.0, 0.0, 0.0, NULL);
	enpu_cmp_result r;
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(cmp(got, exp, 1e-5, 0, 0, &r, &e), 0);
	cr_assert_eq(r.ok, 0);
	cr_assert_str_eq(r.tensor, "b");
	cr_assert_str_eq(r.index, "(2,)");
	cr_assert_float_eq(r.max_abs_diff, 0.5, 1e-9);
}

Test(compare, rtol_scales_with_expected)
{
	const char *got = npz("g.npz", "y", 1, 2, 100.01, 0.0, NULL);
	const char *exp = npz("x.npz", "y", 1, 2, 100.0, 0.0, NULL);
	enpu_cmp_result r;
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(cmp(got, exp, 1e-5, 0, 0, &r, &e), 0);
	cr_assert_eq(r.ok, 0);
	cr_assert_eq(cmp(got, exp, 1e-5, 1e-3, 0, &r, &e), 0);
	cr_assert_eq(r.ok, 1);
	cr_assert_eq(cmp(got, exp, 1e-5, 1e-5, 0, &r, &e), 0);
	cr_assert_eq(r.ok, 0);
}

Test(compare, exact_tells_negative_zero)
{
	const char *got = npz("g.npz", "y", 1, 2, -0.0, 1.0, NULL);
	const char *exp = npz("x.npz", "y", 1, 2, 0.0, 1.0, NULL);
	enpu_cmp_result r;
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(cmp(got, exp, 0, 0, 0, &r, &e), 0);
	cr_assert_eq(r.ok, 1);
	cr_assert_eq(cmp(got, exp, 0, 0, 1, &r, &e), 0);
	cr_assert_eq(r.ok, 0);
	cr_assert_str_eq(r.index, "(0,)");
	cr_assert_eq(e.code, ENPU_E_CMP_DIFF);
	/* a tolerance does not loosen exact */
	cr_assert_eq(cmp(npz("g2.npz", "y", 1, 1, 1.0000001, NULL),
			 npz("x2.npz", "y", 1, 1, 1.0, NULL), 1.0, 0, 1, &r, &e), 0);
	cr_assert_eq(r.ok, 0);
}

Test(compare, nan_and_inf_rules)
{
	enpu_cmp_result r;
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(cmp(npz("a.npz", "y", 1, 3, NAN, INFINITY, -INFINITY, NULL),
			 npz("b.npz", "y", 1, 3, NAN, INFINITY, -INFINITY, NULL), 1e-5, 0, 0, &r, &e), 0);
	cr_assert_eq(r.ok, 1);
	cr_assert(!isnan(r.max_abs_diff));
	cr_assert_eq(cmp(npz("a.npz", "y", 1, 2, 1.0, NAN, NULL),
			 npz("b.npz", "y", 1, 2, NAN, 1.0, NULL), 1e-5, 0, 0, &r, &e), 0);
	cr_assert_eq(r.ok, 0);
	cr_assert_str_eq(r.index, "(0,)");
	cr_assert_eq(cmp(npz("a.npz", "y", 1, 1, INFINITY, NULL),
			 npz("b.npz", "y", 1, 1, -INFINITY, NULL), 1e-5, 0, 0, &r, &e), 0);
	cr_assert_eq(r.ok, 0);
	cr_assert_eq(cmp(npz("a.npz", "y", 1, 1, INFINITY, NULL),
			 npz("b.npz", "y", 1, 1, 3.0e38, NULL), 1e30, 0, 0, &r, &e), 0);
	cr_assert_eq(r.ok, 0);
}

/* A NaN or an infinity has no tolerance: the message says which values
 * differ, without a "> tol". */
static void expect_nonfinite(double got, double exp, const char *msg)
{
	enpu_cmp_result r;
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(cmp(npz("a.npz", "y", 1, 2, 0.0, got, NULL),
			 npz("b.npz", "y", 1, 2, 0.0, exp, NULL), 1e-5, 0, 0, &r, &e), 0);
	cr_assert_eq(r.ok, 0);
	cr_assert_eq(e.code, ENPU_E_CMP_DIFF);
	cr_assert_str_eq(e.message, msg);
	cr_assert_null(strstr(e.message, "tol"), "%s", e.message);
}

Test(compare, nan_and_inf_messages)
{
	expect_nonfinite(NAN, 1.5, "tensor 'y' differs at (1,): got NaN where the golden is 1.5 "
			 "(NaN and infinities must match exactly)");
	expect_nonfinite(2.25, NAN, "tensor 'y' differs at (1,): got 2.25 where the golden is NaN "
			 "(NaN and infinities must match exactly)");
	expect_nonfinite(INFINITY, -INFINITY, "tensor 'y' differs at (1,): got +Inf where the "
			 "golden is -Inf (NaN and infinities must match exactly)");
	expect_nonfinite(-INFINITY, -0.5, "tensor 'y' differs at (1,): got -Inf where the "
			 "golden is -0.5 (NaN and infinities must match exactly)");
}

Test(compare, missing_key_message)
{
	const char *got = npz("g.npz", "a", 1, 1, 1.0, "b", 1, 1, 1.0, NULL);
	const char *exp = npz("x.npz", "logits", 1, 1, 1.0, NULL);
	enpu_cmp_result r;
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(cmp(got, exp, 1e-5, 0, 0, &r, &e), -1);
	cr_assert_eq(e.code, ENPU_E_CMP_KEY);
	cr_assert_str_eq(e.message, "the result lacks golden tensor 'logits' "
			 "(got has [a, b], expected has [logits])");
}

Test(compare, extra_key_in_got)
{
	const char *got = npz("g.npz", "logits", 1, 1, 1.0, "extra", 1, 1, 1.0, NULL);
	const char *exp = npz("x.npz", "logits", 1, 1, 1.0, NULL);
	enpu_cmp_result r;
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(cmp(got, exp, 1e-5, 0, 0, &r, &e), -1);
	cr_assert_eq(e.code, ENPU_E_CMP_KEY);
	/* the result has a tensor the golden lacks: said that way round */
	cr_assert_str_eq(e.message, "the result has tensor 'extra' that the golden lacks "
			 "(got has [logits, extra], expected has [logits])");
}

Test(compare, shape_mismatch)
{
	const char *got = npz("g.npz", "y", 2, 1, 4, 1.0, 2.0, 3.0, 4.0, NULL);
	const char *exp = npz("x.npz", "y", 2, 4, 1, 1.0, 2.0, 3.0, 4.0, NULL);
	enpu_cmp_result r;
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(cmp(got, exp, 1e-5, 0, 0, &r, &e), -1);
	cr_assert_eq(e.code, ENPU_E_CMP_SHAPE);
	cr_assert(strstr(e.message, "(1, 4)") && strstr(e.message, "(4, 1)"), "%s", e.message);
}

Test(compare, unreadable_file)
{
	const char *exp = npz("x.npz", "y", 1, 1, 1.0, NULL);
	char bad[128];
	enpu_cmp_result r;
	enpu_err e = ENPU_ERR_INIT;

	snprintf(bad, sizeof(bad), "%s/none.npz", dir);
	cr_assert_eq(cmp(bad, exp, 1e-5, 0, 0, &r, &e), -1);
	cr_assert_neq(e.code, ENPU_OK);
}

/* test_ops.c: every op case of tests/data/ops (listed in cases.txt, one
 * directory name a line: spec.yaml, weights.npz, input.npz, expected.npz)
 * goes through the whole core: compile for cpu_ref, load, run, compare
 * against expected.npz within atol 1e-5, rtol 1e-5. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "enpu.h"
#include "npz.h"

#define DATA "tests/data/ops/"

/* One case; 0 when it passes, else -1 with why filled. */
static int run_case(const char *name, const char *tmp, char *why, size_t cap)
{
	char p[512], w[512], in[512], exp[512], out[512], res[512], buf[2048];
	enpu_spec *s = NULL;
	enpu_target *t = NULL;
	enpu_artifact *a = NULL;
	enpu_err e = ENPU_ERR_INIT;
	enpu_compile_info ci;
	enpu_run_info ri;
	enpu_cmp_opts o = {1e-5, 1e-5, 0};
	enpu_cmp_result r;
	const char *stage = "load spec";
	int rc = -1;

	snprintf(p, sizeof(p), DATA "%s/spec.yaml", name);
	snprintf(w, sizeof(w), DATA "%s/weights.npz", name);
	snprintf(in, sizeof(in), DATA "%s/input.npz", name);
	snprintf(exp, sizeof(exp), DATA "%s/expected.npz", name);
	snprintf(out, sizeof(out), "%s/%s", tmp, name);
	snprintf(res, sizeof(res), "%s/%s.result.npz", tmp, name);
	if (enpu_spec_load(p, "spec.yaml", NULL, &s, &e) < 0)
		goto out;
	stage = "compile";
	if (enpu_target_resolve(s, "cpu_ref", NULL, NULL, NULL, &t, &e) < 0 ||
	    enpu_compile(s, t, w, "weights.npz", NULL, out, NULL, &ci, &e) < 0)
		goto out;
	stage = "load artifact";
	if (enpu_artifact_load(out, NULL, &a, &e) < 0)
		goto out;
	stage = "run";
	if (enpu_run(a, in, "input.npz", res, NULL, NULL, NULL, NULL, &ri, &e) < 0)
		goto out;
	stage = "compare";
	if (enpu_compare(res, "result.npz", exp, "expected.npz", &o, NULL, &r, &e) < 0 || !r.ok)
		goto out;
	rc = 0;
out:
	if (rc < 0) {
		enpu_err_render(&e, buf, sizeof(buf));
		snprintf(why, cap, "%s: %s failed: %s", name, stage, buf);
	}
	enpu_artifact_free(a);
	enpu_target_free(t);
	enpu_spec_free(s);
	return rc;
}

Test(ops, every_case_passes, .timeout = 300)
{
	FILE *f = fopen(DATA "cases.txt", "r");
	char line[256], tmp[64], why[4096], cmd[128];
	static char report[65536];
	int ran = 0, failed = 0;
	size_t used = 0;

	cr_assert(f, "cannot open " DATA "cases.txt (run from the repository root)");
	strcpy(tmp, "/tmp/enpu_ops_XXXXXX");
	cr_assert(mkdtemp(tmp));
	report[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		char *n = line + strspn(line, " \t");
		n[strcspn(n, " \t\r\n#")] = '\0';
		if (!*n)
			continue;
		ran++;
		if (run_case(n, tmp, why, sizeof(why)) < 0) {
			failed++;
			if (used < sizeof(report) - 1)
				used += (size_t)snprintf(report + used, sizeof(report) - used, "%s\n", why);
		}
	}
	fclose(f);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	cr_assert_eq(system(cmd), 0);
	cr_assert_eq(failed, 0, "%d of %d op cases failed:\n%s", failed, ran, report);
	cr_assert_geq(ran, 40, "only %d op cases ran", ran);
}

/* gather's indices are constant: an index outside [-d, d - 1] is an error
 * of compile (E0304 at the op's line:col), checked once, never at run. The
 * case v2_gather_negative reads x (2, 3, 4) along axis -1 (d = 4). */
Test(ops, gather_index_out_of_range_fails_compile)
{
	static const int64_t bad[][4] = {{-1, 0, 4, 2}, {-5, 0, 1, 2}};
	static const char *const pos[] = {"position 2", "position 0"};
	char tmp[64], w[128], out[128], cmd[128];
	enpu_spec *s = NULL;
	enpu_target *t = NULL;
	enpu_err e = ENPU_ERR_INIT;
	enpu_compile_info ci;

	strcpy(tmp, "/tmp/enpu_gather_XXXXXX");
	cr_assert(mkdtemp(tmp));
	cr_assert_eq(enpu_spec_load(DATA "v2_gather_negative/spec.yaml", "spec.yaml", NULL, &s, &e), 0,
		     "%s", e.message);
	cr_assert_eq(enpu_target_resolve(s, "cpu_ref", NULL, NULL, NULL, &t, &e), 0, "%s", e.message);
	for (int k = 0; k < 2; k++) {
		enpu_tlist l = ENPU_TLIST_INIT;
		enpu_tensor x;

		memset(&x, 0, sizeof(x));
		x.name = strdup("idx");
		x.dtype = ENPU_DT_I64;
		x.shape.ndim = 1;
		x.shape.dim[0] = 4;
		cr_assert_eq(enpu_tensor_alloc(&x, NULL, &e), 0);
		memcpy(x.i64, bad[k], sizeof(bad[k]));
		cr_assert_eq(enpu_tlist_push(&l, &x, &e), 0);
		snprintf(w, sizeof(w), "%s/w%d.npz", tmp, k);
		snprintf(out, sizeof(out), "%s/a%d", tmp, k);
		cr_assert_eq(enpu_npz_write(w, &l, &e), 0, "%s", e.message);
		enpu_tlist_free(&l);
		cr_expect_eq(enpu_compile(s, t, w, "weights.npz", NULL, out, NULL, &ci, &e), -1,
			     "index set %d compiled", k);
		cr_expect_eq(e.code, ENPU_E_WEIGHT_VALUE, "%d: %s", k, e.message);
		cr_expect_str_eq(e.where, "spec.yaml:11:9");   /* the op entry */
		cr_expect(strstr(e.message, pos[k]) && strstr(e.message, "out of range [-4, 3]"),
			  "%s", e.message);
	}
	enpu_target_free(t);
	enpu_spec_free(s);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	cr_assert_eq(system(cmd), 0);
}

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

/* test_npuplan.c: the npu model in plan.json. A trusted load (the daemon's
 * cache) reads it instead of deriving it, and reports the same bytes; a
 * deep load derives it and compares the whole section; an older build's
 * artifact (plan.json without the counts, manifest.json without the
 * summary) still loads, deep or trusted, and runs with the same report. */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "enpu.h"
#include "buf.h"
#include "pipeline.h"
#include "graphjson.h"

static char work[64], art[96];

static void setup(void)
{
	enpu_buf res = ENPU_BUF_INIT;
	char why[2048];

	snprintf(work, sizeof work, "/tmp/enpu_npuplan_XXXXXX");
	cr_assert_not_null(mkdtemp(work));
	cr_assert_eq(tpl_compile_run("examples/tiny_cnn", "npu_sim", NULL, 1, work, NULL, &res, NULL,
				     NULL, why, sizeof why), 0, "%s", why);
	snprintf(art, sizeof art, "%s/art0", work);
	cr_assert_eq(access(art, F_OK), 0, "%s", art);
	enpu_buf_free(&res);
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", work);
	cr_expect_eq(system(cmd), 0);
}

TestSuite(npuplan, .init = setup, .fini = teardown);

/* Run the artifact (trusted or deep load): report.json's "npu" section as
 * text into out (cap bytes), the run's info into *ri. 0, or -1 with e. */
static int npu_report(unsigned flags, char *out, size_t cap, enpu_run_info *ri, enpu_err *e)
{
	char rp[128], res[128];
	enpu_artifact *a = NULL;
	enpu_buf b = ENPU_BUF_INIT;
	json_object *root, *npu;
	int rc = -1;

	snprintf(rp, sizeof rp, "%s/report.json", work);
	snprintf(res, sizeof res, "%s/result.npz", work);
	if (enpu_artifact_load_ex(art, NULL, flags, &a, e) < 0)
		return -1;
	if (enpu_run(a, "examples/tiny_cnn/input.npz", "input.npz", res, rp, NULL, NULL, NULL, ri,
		     e) == 0 && enpu_read_file(rp, 0, &b, e) == 0) {
		cr_assert_not_null(root = json_tokener_parse(b.data));
		cr_assert(json_object_object_get_ex(root, "npu", &npu));
		snprintf(out, cap, "%s", json_object_to_json_string_ext(npu, JSON_C_TO_STRING_PLAIN));
		json_object_put(root);
		rc = 0;
	}
	enpu_buf_free(&b);
	enpu_artifact_free(a);
	return rc;
}

static json_object *member(const char *rel)
{
	enpu_buf b = ENPU_BUF_INIT;
	enpu_err e = ENPU_ERR_INIT;
	json_object *o;
	char p[160];

	snprintf(p, sizeof p, "%s/%s", art, rel);
	cr_assert_eq(enpu_read_file(p, 0, &b, &e), 0, "%s", e.message);
	cr_assert_not_null(o = json_tokener_parse(b.data));
	enpu_buf_free(&b);
	return o;
}

static void put_member(const char *rel, json_object *o)
{
	const char *t = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY);

	cr_assert_eq(tpl_rewrite_member(art, rel, t, strlen(t)), 0);
}

/* plan.json as an older build wrote it: no per-op cycles, no peak DRAM */
static void strip_plan_counts(void)
{
	json_object *p = member("plan.json"), *npu, *ops;

	cr_assert(json_object_object_get_ex(p, "npu", &npu));
	cr_assert(json_object_object_get_ex(npu, "ops", &ops));
	json_object_object_del(npu, "peak_dram_bytes");
	for (size_t i = 0; i < json_object_array_length(ops); i++) {
		json_object_object_del(json_object_array_get_idx(ops, i), "compute_cycles");
		json_object_object_del(json_object_array_get_idx(ops, i), "stall_cycles");
	}
	put_member("plan.json", p);
	json_object_put(p);
}

/* plan.json with op 0's ifmap SRAM reads set to v (a count no longer the
 * model's, or not a count) */
static void set_ifmap_reads(json_object *v)
{
	json_object *p = member("plan.json"), *npu, *ops, *sram, *x;

	cr_assert(json_object_object_get_ex(p, "npu", &npu));
	cr_assert(json_object_object_get_ex(npu, "ops", &ops));
	cr_assert(json_object_object_get_ex(json_object_array_get_idx(ops, 0), "sram", &sram));
	cr_assert(json_object_object_get_ex(sram, "ifmap", &x));
	json_object_object_add(x, "reads", v);
	put_member("plan.json", p);
	json_object_put(p);
}

static char deep[65536], trusted[65536];

/* The trusted load reports what the deep one does, byte for byte; it reads
 * the cycles from plan.json (an edit of the same size shows in the run's
 * numbers there), where the deep load refuses the edit. */
Test(npuplan, trusted_load_reads_the_model_from_plan_json)
{
	enpu_run_info ri1, ri2;
	enpu_err e = ENPU_ERR_INIT;
	enpu_buf b = ENPU_BUF_INIT;
	char p[160], *hit;

	cr_assert_eq(npu_report(0, deep, sizeof deep, &ri1, &e), 0, "%s", e.message);
	cr_assert_eq(npu_report(ENPU_LOAD_TRUSTED, trusted, sizeof trusted, &ri2, &e), 0, "%s",
		     e.message);
	cr_expect_str_eq(trusted, deep);
	cr_expect_eq(ri2.npu_cycles, ri1.npu_cycles);
	cr_expect_eq(ri2.npu_utilisation, ri1.npu_utilisation);
	cr_expect_eq(ri2.npu_time_us, ri1.npu_time_us);

	snprintf(p, sizeof p, "%s/plan.json", art);
	cr_assert_eq(enpu_read_file(p, 0, &b, &e), 0, "%s", e.message);
	cr_assert_not_null(hit = strstr(b.data, "\"compute_cycles\": "));
	hit += strlen("\"compute_cycles\": ");
	*hit = *hit == '9' ? '1' : (char)(*hit + 1);   /* the same size, other cycles */
	cr_assert_eq(enpu_write_file_atomic(p, b.data, b.len, &e), 0);
	cr_assert_eq(npu_report(ENPU_LOAD_TRUSTED, trusted, sizeof trusted, &ri2, &e), 0, "%s",
		     e.message);
	cr_expect_neq(ri2.npu_cycles, ri1.npu_cycles);
	cr_expect_str_neq(trusted, deep);
	/* deep: the digest first; with the manifest fixed, the model itself */
	cr_expect_eq(npu_report(0, deep, sizeof deep, &ri1, &e), -1);
	cr_expect_eq(e.code, ENPU_E_ARTIFACT_DIGEST, "%s", e.message);
	cr_assert_eq(tpl_rewrite_member(art, "plan.json", b.data, b.len), 0);
	enpu_buf_free(&b);
	cr_expect_eq(npu_report(0, deep, sizeof deep, &ri1, &e), -1);
	cr_expect_eq(e.code, ENPU_E_ARTIFACT, "%s", e.message);
	cr_expect(strstr(e.message, "npu model"), "%s", e.message);
}

/* A hashed load (the daemon's import: the caller hashed the files) derives
 * the model as the deep load does: a plan.json whose cycles were edited,
 * the manifest fixed to its new digest, is refused by it and by the
 * check without a handle (enpu_artifact_check), and read by the trusted
 * load. */
Test(npuplan, hashed_load_derives_the_model)
{
	enpu_run_info ri;
	enpu_err e = ENPU_ERR_INIT;
	enpu_buf b = ENPU_BUF_INIT;
	char p[160], *hit;

	cr_assert_eq(npu_report(ENPU_LOAD_HASHED, deep, sizeof deep, &ri, &e), 0, "%s", e.message);
	cr_assert_eq(enpu_artifact_check(art, NULL, ENPU_LOAD_HASHED, NULL, &e), 0, "%s", e.message);
	snprintf(p, sizeof p, "%s/plan.json", art);
	cr_assert_eq(enpu_read_file(p, 0, &b, &e), 0, "%s", e.message);
	cr_assert_not_null(hit = strstr(b.data, "\"compute_cycles\": "));
	hit += strlen("\"compute_cycles\": ");
	*hit = *hit == '9' ? '1' : (char)(*hit + 1);
	cr_assert_eq(tpl_rewrite_member(art, "plan.json", b.data, b.len), 0);
	enpu_buf_free(&b);
	cr_assert_eq(npu_report(ENPU_LOAD_TRUSTED, trusted, sizeof trusted, &ri, &e), 0, "%s",
		     e.message);
	cr_expect_eq(npu_report(ENPU_LOAD_HASHED, deep, sizeof deep, &ri, &e), -1);
	cr_expect_eq(e.code, ENPU_E_ARTIFACT, "%s", e.message);
	cr_expect(strstr(e.message, "npu model"), "%s", e.message);
	cr_expect_eq(enpu_artifact_check(art, NULL, ENPU_LOAD_HASHED, NULL, &e), -1);
	cr_expect(strstr(e.message, "npu model"), "%s", e.message);
}

/* Deep load compares the whole section: a count no longer the model's is
 * refused even with the files consistent (and a trusted load of a plan
 * whose ops are malformed is refused too, not trusted blindly). */
Test(npuplan, deep_load_compares_the_whole_section)
{
	enpu_run_info ri;
	enpu_err e = ENPU_ERR_INIT;

	set_ifmap_reads(json_object_new_int64(1));
	cr_expect_eq(npu_report(0, deep, sizeof deep, &ri, &e), -1);
	cr_expect_eq(e.code, ENPU_E_ARTIFACT, "%s", e.message);
	cr_expect(strstr(e.message, "npu model"), "%s", e.message);

	set_ifmap_reads(json_object_new_string("many"));
	cr_expect_eq(npu_report(ENPU_LOAD_TRUSTED, trusted, sizeof trusted, &ri, &e), -1);
	cr_expect_eq(e.code, ENPU_E_ARTIFACT, "%s", e.message);
	cr_expect(strstr(e.message, "reads"), "%s", e.message);
}

/* An older build's plan.json (no counts): deep and trusted loads both
 * derive the model, and the report is the same bytes. */
Test(npuplan, older_plan_without_counts_loads)
{
	enpu_run_info ri;
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(npu_report(0, deep, sizeof deep, &ri, &e), 0, "%s", e.message);
	strip_plan_counts();
	cr_assert_eq(npu_report(0, trusted, sizeof trusted, &ri, &e), 0, "%s", e.message);
	cr_expect_str_eq(trusted, deep);
	cr_assert_eq(npu_report(ENPU_LOAD_TRUSTED, trusted, sizeof trusted, &ri, &e), 0, "%s",
		     e.message);
	cr_expect_str_eq(trusted, deep);
	/* still compared as a whole, deep */
	set_ifmap_reads(json_object_new_int64(1));
	cr_expect_eq(npu_report(0, trusted, sizeof trusted, &ri, &e), -1);
	cr_expect(strstr(e.message, "npu model"), "%s", e.message);
}

/* An older build's manifest.json (no summary) with an older plan.json:
 * loads deep and trusted, the summary derived. */
Test(npuplan, older_manifest_without_summary_loads)
{
	enpu_run_info ri;
	enpu_err e = ENPU_ERR_INIT;
	json_object *m;

	cr_assert_eq(npu_report(0, deep, sizeof deep, &ri, &e), 0, "%s", e.message);
	strip_plan_counts();
	m = member("manifest.json");
	cr_assert(json_object_object_get_ex(m, "summary", NULL));
	json_object_object_del(m, "summary");
	put_member("manifest.json", m);
	json_object_put(m);
	cr_assert_eq(npu_report(0, trusted, sizeof trusted, &ri, &e), 0, "%s", e.message);
	cr_expect_str_eq(trusted, deep);
	cr_assert_eq(npu_report(ENPU_LOAD_TRUSTED, trusted, sizeof trusted, &ri, &e), 0, "%s",
		     e.message);
	cr_expect_str_eq(trusted, deep);
	/* a summary that is there is still checked */
	m = member("manifest.json");
	json_object *s = json_object_new_object();
	json_object_object_add(s, "operators", json_object_new_int(1));
	json_object_object_add(s, "components", json_object_new_int(1));
	json_object_object_add(s, "arena_bytes", json_object_new_int(0));
	json_object_object_add(m, "summary", s);
	put_member("manifest.json", m);
	json_object_put(m);
	cr_expect_eq(npu_report(0, trusted, sizeof trusted, &ri, &e), -1);
	cr_expect(strstr(e.message, "summary"), "%s", e.message);
}

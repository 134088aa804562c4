/* cmd_compare.c: `eulernpu compare --got F --expected F`: compare a result
 * with golden tensors on the server; a difference beyond the tolerance is
 * the worst offender on stderr and exit status 1. --json prints the
 * server's report on stdout, passed or not (the exit status is the same).
 * --junit FILE writes a JUnit XML report (one testcase per golden tensor)
 * for CI, atomically, whether the comparison passed, failed or could not
 * be made. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <json-c/json.h>
#include "api.h"
#include "cli.h"
#include "npz.h"
#include "progress.h"
#include "digest.h"
#include "rest.h"

static const char usage[] =
	"usage: eulernpu compare --got F --expected F [--tol X] [--rtol X] [--exact]\n"
	"                        [--json] [--junit FILE]\n"
	"\n"
	"Compare every tensor of a result with the golden file: it passes when\n"
	"|got - expected| <= tol + rtol * |expected| for every element; integer\n"
	"tensors (int8, uint8, int32, int64) only when every element is equal.\n"
	"\n"
	"  --got F        the result (result.npz)\n"
	"  --expected F   the golden tensors (golden.npz)\n"
	"  --tol X        absolute tolerance (default 1e-05)\n"
	"  --rtol X       relative tolerance (default 0)\n"
	"  --exact        the bytes must be equal\n"
	"  --json         print the server's report as one JSON document: ok,\n"
	"                 tensors, max_abs_diff, tol, rtol, exact (and worst,\n"
	"                 error when it failed); the exit status is the same\n"
	"  --junit FILE   also write a JUnit XML report to FILE (one testcase per\n"
	"                 golden tensor; the worst offender carries the failure),\n"
	"                 written whether the comparison passes or not\n"
	"\n"
	"exit status: 0 equal within tolerance, 1 different, 2 not comparable.\n";

/* Hash both files, upload what the server lacks, POST the comparison:
 * *res the server's report. 0, or -1 with e. */
static int compare_post(cli_ctx *ctx, const char *got, const char *exp, double tol, double rtol,
			int exact, struct json_object **res, enpu_err *e)
{
	struct json_object *req;
	char dg[65], de[65];
	const char *paths[2] = {got, exp}, *digests[2] = {dg, de};
	int rc;

	if (cli_sha256_file(got, dg, e) < 0 || cli_sha256_file(exp, de, e) < 0)
		return -1;
	if (cli_connect(ctx, e) < 0 || cli_blobs_ensure(ctx->conn, 2, paths, digests, NULL, e) < 0)
		return -1;
	req = json_object_new_object();
	json_object_object_add(req, F_GOT, json_object_new_string(dg));
	json_object_object_add(req, F_EXPECTED, json_object_new_string(de));
	json_object_object_add(req, F_GOT_NAME, json_object_new_string(got));
	json_object_object_add(req, F_EXPECTED_NAME, json_object_new_string(exp));
	json_object_object_add(req, F_TOL, json_object_new_double(tol));
	json_object_object_add(req, F_RTOL, json_object_new_double(rtol));
	json_object_object_add(req, F_EXACT, json_object_new_boolean(exact));
	rc = cli_http_json(ctx->conn, "POST", API_COMPARE, req, 0, res, NULL, NULL, e);
	json_object_put(req);
	return rc < 0 ? -1 : 0;
}

/* The report's verdict: 0 passed (*nt tensors, *mad the largest
 * difference), or -1 with e: it failed (the report printed first with
 * --json) or the answer is not a report. */
static int compare_check(struct json_object *res, int json, const char *got, long long *nt,
			 struct json_object **mad, enpu_err *e)
{
	struct json_object *ok, *err;

	if (!json_object_object_get_ex(res, F_OKAY, &ok) || !json_object_is_type(ok, json_type_boolean))
		return enpu_fail(e, ENPU_E_SERVER, API_COMPARE, NULL, "the answer has no '%s'", F_OKAY);
	if (!json_object_get_boolean(ok)) {
		/* the report first, then the error on stderr, as `run --json`
		 * does with a failed job */
		if (json)
			cli_print_json(res);
		if (json_object_object_get_ex(res, F_ERROR, &err) &&
		    json_object_is_type(err, json_type_object))
			cli_err_from_json(err, e);
		else
			enpu_fail(e, ENPU_E_CMP_DIFF, got, NULL, "the tensors differ beyond the tolerance");
		return -1;
	}
	if (cli_json_int(res, F_TENSORS, nt) < 0 ||
	    !json_object_object_get_ex(res, F_MAX_ABS_DIFF, mad) ||
	    !(json_object_is_type(*mad, json_type_double) || json_object_is_type(*mad, json_type_int)))
		return enpu_fail(e, ENPU_E_SERVER, API_COMPARE, NULL, "the answer lacks '%s' or '%s'",
				 F_TENSORS, F_MAX_ABS_DIFF);
	return 0;
}

/* The one line of a comparison that passed. */
static void print_ok(long long nt, struct json_object *mad, int exact, double tol, double rtol)
{
	char a[64], b[64], c[64];

	printf("Compare  OK: %lld tensor%s \xc2\xb7 ", nt, nt == 1 ? "" : "s");
	if (exact) {
		printf("bytes equal\n");
	} else {
		printf("max abs diff %s < tol %s", cli_float_repr(json_object_get_double(mad), a, sizeof a),
		       cli_float_repr(tol, b, sizeof b));
		if (rtol != 0)
			printf(" + rtol %s", cli_float_repr(rtol, c, sizeof c));
		printf("\n");
	}
}

/* s as XML attribute or text content: markup characters as entities,
 * characters XML 1.0 cannot hold (control characters, bytes that are not
 * UTF-8) as '?'. */
static void xml_esc(enpu_buf *b, const char *s)
{
	size_t n = strlen(s);

	while (n > 0) {
		unsigned long cp;
		size_t k = enpu_utf8_seq(s, n, &cp);

		if (k == 0 || (cp < 0x20 && cp != '\t' && cp != '\n') || cp == 0xfffe || cp == 0xffff) {
			enpu_buf_adds(b, "?");
			k = k ? k : 1;
		} else if (cp == '&' || cp == '<' || cp == '>' || cp == '"' || cp == '\'' ||
			   cp == '\n' || cp == '\t') {
			enpu_buf_addf(b, "&#%lu;", cp);
		} else {
			enpu_buf_add(b, s, k);
		}
		s += k;
		n -= k;
	}
}

/* The JUnit report of one comparison: a testcase per tensor of the golden
 * file (read here: the server names only the worst one); res the server's
 * report, or NULL when the comparison could not be made (err says why). */
static int write_junit(const char *file, const char *exp, struct json_object *res,
		       const enpu_err *err, double secs, enpu_err *e)
{
	enpu_tlist ts = ENPU_TLIST_INIT;
	enpu_err ignore = ENPU_ERR_INIT;
	enpu_buf b = ENPU_BUF_INIT;
	struct json_object *w = NULL;
	const char *worst = NULL;
	int ok = res && err->code == ENPU_OK, n, rc;

	if (res && json_object_object_get_ex(res, F_WORST, &w))
		worst = cli_json_str(w, "tensor");
	/* unreadable here (the server said why): one testcase for it all */
	if (enpu_npz_read(exp, exp, NULL, &ts, &ignore) < 0)
		ts.n = 0;
	n = ts.n ? (int)ts.n : 1;
	enpu_buf_addf(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		      "<testsuites>\n<testsuite name=\"eulernpu compare\" tests=\"%d\" "
		      "failures=\"%d\" errors=\"%d\" skipped=\"%d\" time=\"%.3f\">\n", n,
		      res && !ok ? 1 : 0, res ? 0 : 1,
		      res && !ok && ts.n > 1 && worst ? n - 1 : 0, secs);
	for (int i = 0; i < n; i++) {
		const char *name = ts.n ? ts.items[i].name : exp;

		enpu_buf_adds(&b, "  <testcase classname=\"eulernpu compare\" name=\"");
		xml_esc(&b, name);
		/* the server compares all tensors at once: an equal share each */
		enpu_buf_addf(&b, "\" time=\"%.3f\"", secs / n);
		if (ok) {
			enpu_buf_adds(&b, "/>\n");
			continue;
		}
		if (!res || !worst || !ts.n || strcmp(name, worst) == 0) {
			enpu_buf_addf(&b, ">\n    <%s message=\"", res ? "failure" : "error");
			xml_esc(&b, err->message);
			enpu_buf_addf(&b, "\" type=\"%s\">", enpu_code_info_of(err->code)->id);
			xml_esc(&b, err->where);
			enpu_buf_adds(&b, ": ");
			xml_esc(&b, err->message);
			enpu_buf_addf(&b, "</%s>\n  </testcase>\n", res ? "failure" : "error");
		} else {
			enpu_buf_adds(&b, ">\n    <skipped message=\"not reported on its own: the "
				      "comparison failed on tensor '");
			xml_esc(&b, worst);
			enpu_buf_adds(&b, "'\"/>\n  </testcase>\n");
		}
	}
	rc = enpu_buf_adds(&b, "</testsuite>\n</testsuites>\n");
	enpu_tlist_free(&ts);
	if (rc < 0 || !b.data)
		rc = enpu_fail(e, ENPU_E_NOMEM, file, NULL, "out of memory");
	else
		rc = cli_write_output(file, b.data, b.len, e);
	enpu_buf_free(&b);
	return rc;
}

/* --junit must not be --got or --expected. 0, or -1 with e. */
static int check_junit(const char *junit, const char *got, const char *exp, enpu_err *e)
{
	const cli_path outs[1] = {{"--junit", junit}};
	const cli_path ins[2] = {{"--got", got}, {"--expected", exp}};

	return cli_outputs_check("compare", outs, 1, 0, ins, 2, e);
}

static double wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int cmd_compare(cli_ctx *ctx, int argc, char **argv)
{
	enpu_err e = ENPU_ERR_INIT;
	const char *got = NULL, *exp = NULL, *junit = NULL, *pos[1];
	double tol = 1e-5, rtol = 0;
	int exact = 0, json = 0;
	const cli_opt opts[] = {
		{"--exact", CLI_OPT_FLAG, &exact},
		{"--expected", CLI_OPT_STR, &exp},
		{"--got", CLI_OPT_STR, &got},
		{"--json", CLI_OPT_FLAG, &json},
		{"--junit", CLI_OPT_STR, &junit},
		{"--rtol", CLI_OPT_DOUBLE, &rtol},
		{"--tol", CLI_OPT_DOUBLE, &tol},
		{NULL, 0, NULL},
	};
	struct json_object *res = NULL, *mad = NULL;
	enpu_err jerr = ENPU_ERR_INIT;
	long long nt = 0;
	double t0;
	int n_pos, r, made, failed, jrc = 0;

	r = cli_parse_opts("compare", argc, argv, opts, pos, 0, &n_pos, &e);
	if (r == 1) {
		fputs(usage, stdout);
		return 0;
	}
	if (r < 0)
		return cli_report(&e);
	if (!got || !exp)
		return cli_report((cli_usage(&e, "compare", "missing required option '%s'",
					     !got ? "--got" : "--expected"), &e));

	if (junit && check_junit(junit, got, exp, &e) < 0)
		return cli_report(&e);

	cli_progress_setup(json);
	t0 = wall_s();
	made = compare_post(ctx, got, exp, tol, rtol, exact, &res, &e) == 0;
	failed = !made || compare_check(res, json, got, &nt, &mad, &e) < 0;
	/* the report is written however it went: a failure is what CI wants
	 * to see in it (an answer that is no report counts as not made) */
	if (junit && write_junit(junit, exp, made && e.code != ENPU_E_SERVER ? res : NULL, &e,
				 wall_s() - t0, &jerr) < 0)
		jrc = cli_report(&jerr);
	if (failed) {
		json_object_put(res);
		return cli_report(&e);
	}
	if (json)
		cli_print_json(res);
	else
		print_ok(nt, mad, exact, tol, rtol);
	json_object_put(res);
	return jrc;
}

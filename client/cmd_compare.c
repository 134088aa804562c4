/* cmd_compare.c: `eulernpu compare --got F --expected F`: compare a result
 * with golden tensors on the server; a difference beyond the tolerance is
 * the worst offender on stderr and exit status 1. --json prints the
 * server's report on stdout, passed or not (the exit status is the same). */
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>
#include "api.h"
#include "cli.h"
#include "progress.h"
#include "digest.h"
#include "rest.h"

static const char usage[] =
	"usage: eulernpu compare --got F --expected F [--tol X] [--rtol X] [--exact]\n"
	"                        [--json]\n"
	"\n"
	"Compare every tensor of a result with the golden file: it passes when\n"
	"|got - expected| <= tol + rtol * |expected| for every element.\n"
	"\n"
	"  --got F        the result (result.npz)\n"
	"  --expected F   the golden tensors (golden.npz)\n"
	"  --tol X        absolute tolerance (default 1e-05)\n"
	"  --rtol X       relative tolerance (default 0)\n"
	"  --exact        the bytes must be equal\n"
	"  --json         print the server's report as one JSON document: ok,\n"
	"                 tensors, max_abs_diff, tol, rtol, exact (and worst,\n"
	"                 error when it failed); the exit status is the same\n"
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

	if (enpu_sha256_file(got, dg, e) < 0 || enpu_sha256_file(exp, de, e) < 0)
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

int cmd_compare(cli_ctx *ctx, int argc, char **argv)
{
	enpu_err e = ENPU_ERR_INIT;
	const char *got = NULL, *exp = NULL, *pos[1];
	double tol = 1e-5, rtol = 0;
	int exact = 0, json = 0;
	const cli_opt opts[] = {
		{"--exact", CLI_OPT_FLAG, &exact},
		{"--expected", CLI_OPT_STR, &exp},
		{"--got", CLI_OPT_STR, &got},
		{"--json", CLI_OPT_FLAG, &json},
		{"--rtol", CLI_OPT_DOUBLE, &rtol},
		{"--tol", CLI_OPT_DOUBLE, &tol},
		{NULL, 0, NULL},
	};
	struct json_object *res = NULL, *mad = NULL;
	long long nt = 0;
	int n_pos, r;

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

	cli_progress_setup(json);
	if (compare_post(ctx, got, exp, tol, rtol, exact, &res, &e) < 0 ||
	    compare_check(res, json, got, &nt, &mad, &e) < 0) {
		json_object_put(res);
		return cli_report(&e);
	}
	if (json)
		cli_print_json(res);
	else
		print_ok(nt, mad, exact, tol, rtol);
	json_object_put(res);
	return 0;
}

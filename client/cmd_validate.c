/* cmd_validate.c: `eulernpu validate SPEC [--backend B] [--target F]`:
 * upload the spec (and the target file) unless the server has them, and
 * print the validator's one-line summary (--json: the server's answer). */
#include <stdio.h>
#include <json-c/json.h>
#include "api.h"
#include "cli.h"
#include "progress.h"
#include "digest.h"
#include "rest.h"

static const char usage[] =
	"usage: eulernpu validate SPEC [--backend B] [--target F] [--json]\n"
	"\n"
	"Check a spec (spec.yaml) without compiling it: the YAML, the schema,\n"
	"names and references, shapes, and that the backend lowers every op.\n"
	"\n"
	"  --backend B   validate for backend B (default: the spec's own;\n"
	"                see `eulernpu backends`)\n"
	"  --target F    check against these target options (a YAML mapping with\n"
	"                the fields of the spec's targets.<backend>, e.g. npu_sim's\n"
	"                `ops:` list) instead of the spec's\n"
	"  --json        print the server's answer as one JSON document: ok,\n"
	"                name, operators, components, backend (and pl_ops,\n"
	"                ps_ops, pl_segments for fpga_board)\n";

int cmd_validate(cli_ctx *ctx, int argc, char **argv)
{
	enpu_err e = ENPU_ERR_INIT;
	const char *backend = NULL, *target = NULL, *pos[1];
	int json = 0;
	const cli_opt opts[] = {
		{"--backend", CLI_OPT_STR, &backend},
		{"--json", CLI_OPT_FLAG, &json},
		{"--target", CLI_OPT_STR, &target},
		{NULL, 0, NULL},
	};
	struct json_object *req = NULL, *res = NULL;
	char digest[65], dt[65];
	const char *paths[2], *digests[2] = {digest, dt};
	long long nops = 0, ncomp = 0;
	const char *bk;
	int n_pos, r;

	r = cli_parse_opts("validate", argc, argv, opts, pos, 1, &n_pos, &e);
	if (r == 1) {
		fputs(usage, stdout);
		return 0;
	}
	if (r < 0)
		return cli_report(&e);
	if (n_pos != 1)
		return cli_report((cli_usage(&e, "validate", "give the spec file: validate SPEC"), &e));

	paths[0] = pos[0];
	paths[1] = target;
	cli_progress_setup(json);
	/* Local mistakes first: a missing file should not start a daemon. */
	if (cli_sha256_file(pos[0], digest, &e) < 0 ||
	    (target && cli_sha256_file(target, dt, &e) < 0) || cli_connect(ctx, &e) < 0 ||
	    cli_blobs_ensure(ctx->conn, target ? 2 : 1, paths, digests, NULL, &e) < 0)
		goto fail;
	req = json_object_new_object();
	json_object_object_add(req, F_SPEC, json_object_new_string(digest));
	json_object_object_add(req, F_SPEC_NAME, json_object_new_string(pos[0]));
	if (backend)
		json_object_object_add(req, F_BACKEND, json_object_new_string(backend));
	if (target) {
		json_object_object_add(req, F_TARGET, json_object_new_string(dt));
		json_object_object_add(req, F_TARGET_NAME, json_object_new_string(target));
	}
	if (cli_http_json(ctx->conn, "POST", API_VALIDATE, req, 0, &res, NULL, NULL, &e) < 0)
		goto fail;
	bk = cli_json_str(res, F_BACKEND);
	if (cli_json_int(res, F_OPERATORS, &nops) < 0 || cli_json_int(res, F_COMPONENTS, &ncomp) < 0 || !bk) {
		enpu_fail(&e, ENPU_E_SERVER, API_VALIDATE, NULL,
			  "the answer lacks '%s', '%s' or '%s'", F_OPERATORS, F_COMPONENTS, F_BACKEND);
		goto fail;
	}
	if (json) {
		cli_print_json(res);
		goto out;
	}
	printf("Validation OK: %lld operator%s \xc2\xb7 %lld component%s \xc2\xb7 backend=%s\n",
	       nops, nops == 1 ? "" : "s", ncomp, ncomp == 1 ? "" : "s", bk);
	{
		char line[256];
		if (cli_fpga_summary(res, line, sizeof line) == 0)
			printf("%s\n", line);
	}
out:
	json_object_put(req);
	json_object_put(res);
	return 0;
fail:
	json_object_put(req);
	json_object_put(res);
	return cli_report(&e);
}

/* cmd_deploy.c: `eulernpu deploy ARTIFACT --name NAME [--version V]`: make
 * sure the server has the artifact (a directory `compile --out` wrote is
 * imported when it lacks it: artifacts.c), then name it as a model's
 * version: PUT /v1/models/{name}/versions/{v}, or without --version POST
 * .../versions (the next version). `eulernpu run --model NAME[:V]` runs
 * it; `eulernpu models` lists them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "api.h"
#include "cli.h"
#include "rest.h"
#include "digest.h"
#include "wire.h"

static const char usage[] =
	"usage: eulernpu deploy DIR|ID --name NAME [--version V] [--json]\n"
	"\n"
	"Deploy a compiled artifact on the server as a version of a named model;\n"
	"`eulernpu run --model NAME[:V]` and the server's inference routes run it.\n"
	"\n"
	"  DIR|ID        the directory `compile --out` wrote (uploaded if the server\n"
	"                lacks it), or an artifact id (64 hex digits)\n"
	"  --name NAME   the model: 1-64 letters, digits, '.', '_', '-'\n"
	"  --version V   the version, a number from 1 (default: one more than the\n"
	"                model's highest, 1 for a new model). A version names one\n"
	"                artifact: deploying another one as it is refused (E0821)\n"
	"  --json        print the server's answer (the model) as it is\n";

int cmd_deploy(cli_ctx *ctx, int argc, char **argv)
{
	enpu_err e = ENPU_ERR_INIT;
	const char *pos[1], *name = NULL, *ver = NULL;
	int json = 0, n_pos, r, ret = 0;
	const cli_opt opts[] = {
		{"--name", CLI_OPT_STR, &name},
		{"--version", CLI_OPT_STR, &ver},
		{"--json", CLI_OPT_FLAG, &json},
		{NULL, 0, NULL},
	};
	struct json_object *req = NULL, *res = NULL;
	char id[65], path[256];
	long status = 0;

	r = cli_parse_opts("deploy", argc, argv, opts, pos, 1, &n_pos, &e);
	if (r == 1) {
		fputs(usage, stdout);
		return 0;
	}
	if (r < 0)
		return cli_report(&e);
	if (n_pos != 1)
		cli_usage(&e, "deploy", "give the artifact: a directory `compile --out` wrote, "
			  "or an id");
	else if (!name)
		cli_usage(&e, "deploy", "missing required option '--name'");
	else if (!enpu_model_name_ok(name))
		cli_usage(&e, "deploy", "'%s' is not a model name (1-64 letters, digits, '.', "
			  "'_', '-', beginning with a letter or digit)", name);
	else if (ver && !enpu_model_version_parse(ver))
		cli_usage(&e, "deploy", "option '--version' must be a number from 1 to "
			  "2147483647, not '%s'", ver);
	if (e.code != ENPU_OK)
		return cli_report(&e);
	if (cli_artifact_check(pos[0], &e) < 0 || cli_connect(ctx, &e) < 0 ||
	    cli_artifact_use(ctx->conn, pos[0], id, &e) < 0)
		goto fail;
	req = json_object_new_object();
	json_object_object_add(req, F_ARTIFACT, json_object_new_string(id));
	snprintf(path, sizeof path, "%s/%s%s%s%s", API_MODELS, name, API_MODEL_VERSIONS,
		 ver ? "/" : "", ver ? ver : "");
	if (cli_http_json(ctx->conn, ver ? "PUT" : "POST", path, req, 30, &res, &status, NULL,
			  &e) < 0)
		goto fail;
	if (json)
		cli_print_json(res);
	else
		printf("%s %s:%s (artifact %.12s); run it with `eulernpu run --model %s`\n",
		       status == 201 ? "deployed" : "already deployed", name,
		       cli_json_str(res, F_VERSION) ? cli_json_str(res, F_VERSION) : "?", id, name);
	goto out;
fail:
	ret = cli_report(&e);
out:
	json_object_put(req);
	json_object_put(res);
	return ret;
}

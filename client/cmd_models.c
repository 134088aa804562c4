/* cmd_models.c: `eulernpu models [NAME]` (GET /v1/models, or one model):
 * each version of each model as a row of an aligned table, or the
 * server's JSON with --json; `eulernpu models rm NAME[:V]` retires a
 * version, or without one the whole model (DELETE /v1/models/{name}
 * [/versions/{v}]). `eulernpu deploy` adds them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "api.h"
#include "cli.h"
#include "rest.h"
#include "wire.h"

#define NCOL 7

static const char usage[] =
	"usage: eulernpu models [NAME] [--json]\n"
	"       eulernpu models rm NAME[:V] [--json]\n"
	"\n"
	"The models deployed on the server (`eulernpu deploy`), a row per version:\n"
	"name, version (* = the one NAME alone runs: the newest ready), artifact,\n"
	"backend, ready (its artifact is in the server's cache), owner, when.\n"
	"\n"
	"  rm NAME:V  retire version V; rm NAME retires every version (the model's\n"
	"             owner or an admin). Its artifact may then be evicted\n"
	"  --json     print the server's answer as it is\n";

static const char *const heads[NCOL] = {
	"NAME", "VERSION", "ARTIFACT", "BACKEND", "READY", "OWNER", "DEPLOYED",
};

static char *dup_or(const char *s, const char *dflt)
{
	return strdup(s ? s : dflt);
}

/* The rows of one model into cells (from row *at on); the number added, or -1. */
static int model_rows(struct json_object *m, char **cells, size_t cap, size_t *at)
{
	struct json_object *vs, *ready;
	const char *latest = cli_json_str(m, F_LATEST), *name = cli_json_str(m, F_NAME);
	size_t n;

	if (!json_object_object_get_ex(m, F_VERSIONS, &vs) ||
	    !json_object_is_type(vs, json_type_array))
		return 0;
	n = json_object_array_length(vs);
	for (size_t i = 0; i < n && *at < cap; i++, (*at)++) {
		struct json_object *v = json_object_array_get_idx(vs, i);
		const char *ver = cli_json_str(v, F_VERSION), *art = cli_json_str(v, F_ARTIFACT);
		char **row = cells + *at * NCOL, buf[80];

		snprintf(buf, sizeof buf, "%s%s", ver ? ver : "?",
			 ver && latest && !strcmp(ver, latest) ? " *" : "");
		row[0] = dup_or(name, "?");
		row[1] = strdup(buf);
		snprintf(buf, sizeof buf, "%.12s", art ? art : "?");
		row[2] = strdup(buf);
		row[3] = dup_or(cli_json_str(v, F_BACKEND), "?");
		row[4] = strdup(json_object_object_get_ex(v, F_READY, &ready) &&
				json_object_get_boolean(ready) ? "yes" : "no");
		row[5] = dup_or(cli_json_str(v, F_OWNER), "?");
		row[6] = dup_or(cli_json_str(v, F_DEPLOYED), "?");
		for (int c = 0; c < NCOL; c++)
			if (!row[c])
				return -1;
	}
	return 0;
}

static size_t count_versions(struct json_object *m)
{
	struct json_object *vs;

	return json_object_object_get_ex(m, F_VERSIONS, &vs) &&
	       json_object_is_type(vs, json_type_array) ? json_object_array_length(vs) : 0;
}

static int list(cli_ctx *ctx, const char *name, int json, enpu_err *e)
{
	struct json_object *res = NULL, *arr = NULL;
	char path[160], **cells = NULL;
	size_t n = 0, rows = 0;
	int ret = -1;

	snprintf(path, sizeof path, "%s%s%s", API_MODELS, name ? "/" : "", name ? name : "");
	if (cli_connect(ctx, e) < 0 ||
	    cli_http_json(ctx->conn, "GET", path, NULL, 30, &res, NULL, NULL, e) < 0)
		goto out;
	if (json) {
		cli_print_json(res);
		ret = 0;
		goto out;
	}
	if (name) {
		arr = json_object_new_array();
		json_object_array_add(arr, json_object_get(res));
	} else if (json_object_object_get_ex(res, F_MODELS, &arr) &&
		   json_object_is_type(arr, json_type_array)) {
		json_object_get(arr);
	} else {
		enpu_fail(e, ENPU_E_SERVER, API_MODELS, NULL, "the answer has no '%s' list", F_MODELS);
		goto out;
	}
	for (size_t i = 0; i < json_object_array_length(arr); i++)
		n += count_versions(json_object_array_get_idx(arr, i));
	if (n == 0) {
		printf("no models: deploy one with `eulernpu deploy DIR|ID --name NAME`\n");
		ret = 0;
		goto out;
	}
	if (!(cells = calloc(n * NCOL, sizeof *cells))) {
		enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < json_object_array_length(arr); i++)
		if (model_rows(json_object_array_get_idx(arr, i), cells, n, &rows) < 0) {
			enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
			goto out;
		}
	cli_table_print(heads, NCOL, cells, rows);
	ret = 0;
out:
	if (cells)
		for (size_t i = 0; i < n * NCOL; i++)
			free(cells[i]);
	free(cells);
	json_object_put(arr);
	json_object_put(res);
	return ret;
}

static int retire(cli_ctx *ctx, const char *ref, int json, enpu_err *e)
{
	char name[ENPU_MODEL_NAME_MAX + 1], path[200];
	const char *colon = strchr(ref, ':');
	size_t len = colon ? (size_t)(colon - ref) : strlen(ref);
	struct json_object *res = NULL;
	int ret = -1;

	if (len <= ENPU_MODEL_NAME_MAX) {
		memcpy(name, ref, len);
		name[len] = '\0';
	}
	if (len > ENPU_MODEL_NAME_MAX || !enpu_model_name_ok(name))
		return cli_usage(e, "models", "'%s' is not NAME or NAME:VERSION of a model", ref);
	if (colon && !enpu_model_version_parse(colon + 1))
		return cli_usage(e, "models", "'%s' is not a model version (a number from 1)",
				 colon + 1);
	snprintf(path, sizeof path, "%s/%s%s%s%s", API_MODELS, name, colon ? API_MODEL_VERSIONS : "",
		 colon ? "/" : "", colon ? colon + 1 : "");
	if (cli_connect(ctx, e) < 0 ||
	    cli_http_json(ctx->conn, "DELETE", path, NULL, 30, &res, NULL, NULL, e) < 0)
		goto out;
	if (json)
		cli_print_json(res);
	else
		printf("retired %s%s\n", ref, colon ? "" : " (every version)");
	ret = 0;
out:
	json_object_put(res);
	return ret;
}

int cmd_models(cli_ctx *ctx, int argc, char **argv)
{
	enpu_err e = ENPU_ERR_INIT;
	const char *pos[2];
	int json = 0, n_pos, r;
	const cli_opt opts[] = {
		{"--json", CLI_OPT_FLAG, &json},
		{NULL, 0, NULL},
	};

	r = cli_parse_opts("models", argc, argv, opts, pos, 2, &n_pos, &e);
	if (r == 1) {
		fputs(usage, stdout);
		return 0;
	}
	if (r < 0)
		return cli_report(&e);
	if (n_pos >= 1 && !strcmp(pos[0], "rm")) {
		if (n_pos != 2) {
			cli_usage(&e, "models", "rm takes NAME or NAME:VERSION");
			return cli_report(&e);
		}
		return retire(ctx, pos[1], json, &e) < 0 ? cli_report(&e) : 0;
	}
	if (n_pos > 1) {
		cli_usage(&e, "models", "unexpected argument '%s'", pos[1]);
		return cli_report(&e);
	}
	if (n_pos == 1 && !enpu_model_name_ok(pos[0])) {
		cli_usage(&e, "models", "'%s' is not a model name", pos[0]);
		return cli_report(&e);
	}
	return list(ctx, n_pos ? pos[0] : NULL, json, &e) < 0 ? cli_report(&e) : 0;
}

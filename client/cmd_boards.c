/* cmd_boards.c: `eulernpu boards`: the board agents a lab server fronts,
 * from GET /v1/boards, as an aligned table (or the JSON with --json):
 * up/down, busy/idle, queue, the job it runs, backends, cached artifacts,
 * and the last error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "api.h"
#include "cli.h"
#include "rest.h"

#define NCOL 8

static const char usage[] =
	"usage: eulernpu boards [--json]\n"
	"\n"
	"Print the board agents the server sends zynq_ps and fpga_board jobs to:\n"
	"name, up or down, busy or idle, jobs waiting for its backends, the job it\n"
	"runs, the backends it serves, artifacts in its cache, its last error.\n"
	"\n"
	"  --json   print the server's answer (GET /v1/boards) as it is\n";

static const char *const heads[NCOL] = {
	"NAME", "STATE", "BUSY", "QUEUE", "JOB", "BACKENDS", "CACHED", "LAST ERROR",
};

/* One cell as text (owned by the caller). */
static char *cell(struct json_object *b, int col)
{
	struct json_object *v;
	long long n;
	char buf[1024];

	switch (col) {
	case 0:
		return strdup(cli_json_str(b, F_NAME) ? cli_json_str(b, F_NAME) : "?");
	case 1:
		return strdup(cli_json_str(b, F_STATE) ? cli_json_str(b, F_STATE) : "?");
	case 2:
		return strdup(json_object_object_get_ex(b, F_BUSY, &v) && json_object_get_boolean(v)
			      ? "busy" : "idle");
	case 3:
		snprintf(buf, sizeof buf, "%lld", cli_json_int(b, F_QUEUE, &n) == 0 ? n : 0);
		return strdup(buf);
	case 4:
		return strdup(cli_json_str(b, F_JOB) ? cli_json_str(b, F_JOB) : "-");
	case 5:
		buf[0] = '\0';
		if (json_object_object_get_ex(b, F_BACKENDS, &v) &&
		    json_object_is_type(v, json_type_array))
			for (size_t i = 0; i < json_object_array_length(v); i++) {
				const char *s = json_object_get_string(json_object_array_get_idx(v, i));
				size_t len = strlen(buf);
				snprintf(buf + len, sizeof buf - len, "%s%s", i ? "," : "", s ? s : "?");
			}
		return strdup(buf[0] ? buf : "-");
	case 6:
		snprintf(buf, sizeof buf, "%lld", cli_json_int(b, F_ARTIFACTS_CACHED, &n) == 0 ? n : 0);
		return strdup(buf);
	default: {
		/* one line: a message never breaks the table */
		const char *s = cli_json_str(b, F_LAST_ERROR);
		char *o = strdup(s ? s : "-");
		for (char *p = o; p && *p; p++)
			if (*p == '\n' || *p == '\r' || *p == '\t')
				*p = ' ';
		return o;
	}
	}
}

int cmd_boards(cli_ctx *ctx, int argc, char **argv)
{
	enpu_err e = ENPU_ERR_INIT;
	const char *pos[1];
	int json = 0, n_pos, r, ret = 0;
	const cli_opt opts[] = {
		{"--json", CLI_OPT_FLAG, &json},
		{NULL, 0, NULL},
	};
	struct json_object *res = NULL, *arr;
	char **cells = NULL;
	size_t n = 0;

	r = cli_parse_opts("boards", argc, argv, opts, pos, 0, &n_pos, &e);
	if (r == 1) {
		fputs(usage, stdout);
		return 0;
	}
	if (r < 0)
		return cli_report(&e);
	if (cli_connect(ctx, &e) < 0 ||
	    cli_http_json(ctx->conn, "GET", API_BOARDS, NULL, 30, &res, NULL, NULL, &e) < 0)
		goto fail;
	if (!json_object_object_get_ex(res, F_BOARDS, &arr) ||
	    !json_object_is_type(arr, json_type_array)) {
		enpu_fail(&e, ENPU_E_SERVER, API_BOARDS, NULL, "the answer has no '%s' list", F_BOARDS);
		goto fail;
	}
	if (json) {
		printf("%s\n", json_object_to_json_string_ext(res, JSON_C_TO_STRING_PRETTY |
							      JSON_C_TO_STRING_NOSLASHESCAPE));
		goto out;
	}
	n = json_object_array_length(arr);
	if (n == 0) {
		printf("no boards: this server fronts none (eulernpud --board NAME=URL)\n");
		goto out;
	}
	cells = calloc(n * NCOL, sizeof *cells);
	if (!cells) {
		enpu_fail(&e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < n; i++)
		for (int c = 0; c < NCOL; c++)
			if (!(cells[i * NCOL + c] = cell(json_object_array_get_idx(arr, i), c))) {
				enpu_fail(&e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
				goto fail;
			}
	cli_table_print(heads, NCOL, cells, n);
	goto out;
fail:
	ret = cli_report(&e);
out:
	if (cells)
		for (size_t i = 0; i < n * NCOL; i++)
			free(cells[i]);
	free(cells);
	json_object_put(res);
	return ret;
}

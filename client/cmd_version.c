/* cmd_version.c: `eulernpu version`: the client's version, and the
 * server's when one answers (a private daemon is not started for this). */
#include <stdio.h>
#include <json-c/json.h>
#include "api.h"
#include "cli.h"
#include "rest.h"

static const char usage[] =
	"usage: eulernpu version\n"
	"\n"
	"Print the client's version and, if the server answers, the server's.\n";

int cmd_version(cli_ctx *ctx, int argc, char **argv)
{
	enpu_err e = ENPU_ERR_INIT;
	const char *pos[1];
	const cli_opt opts[] = {{NULL, 0, NULL}};
	struct json_object *res = NULL;
	char url[4200], dir[4096];
	cli_conn *c;
	const char *v;
	int n_pos, r;

	r = cli_parse_opts("version", argc, argv, opts, pos, 0, &n_pos, &e);
	if (r == 1) {
		fputs(usage, stdout);
		return 0;
	}
	if (r < 0)
		return cli_report(&e);
	printf("eulernpu %s\n", CLI_VERSION);
	if (ctx->server) {
		snprintf(url, sizeof url, "%s", ctx->server);
	} else if (cli_private_dir(dir, sizeof dir) == 0) {
		snprintf(url, sizeof url, "unix:%s/eulernpud.sock", dir);
	} else {
		url[0] = '\0';
	}
	c = cli_conn_new(url, &e);
	if (c && cli_http_json(c, "GET", API_HEALTH, NULL, 5, &res, NULL, NULL, &e) == 0) {
		v = cli_json_str(res, "version");
		printf("eulernpud %s (%s)\n", v ? v : "(unknown version)", url);
	} else {
		printf("eulernpud not reachable (%s)\n", url);
	}
	json_object_put(res);
	cli_conn_free(c);
	return 0;
}

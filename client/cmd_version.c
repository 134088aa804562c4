/* cmd_version.c: `eulernpu version`: the client's version, and the
 * server's when one answers (a private daemon is not started for this).
 * The server is reached as every verb reaches it (--server, --cacert, the
 * token); when the server asked about (--server, $EULERNPU_SERVER, the
 * config file) does not answer, the error follows the client's version and
 * the exit status is the error's (3 unreachable, 2 TLS trust or token). No
 * private daemon running is not an error. --json: {"client", "server"
 * (null when none answers), "url"}. */
#include <stdio.h>
#include <json-c/json.h>
#include "api.h"
#include "cli.h"
#include "rest.h"

static const char usage[] =
	"usage: eulernpu version [--json]\n"
	"\n"
	"Print the client's version and, if the server answers, the server's. A\n"
	"server given (--server, EULERNPU_SERVER, the config file) that does not\n"
	"answer is an error: exit 3, or 2 for TLS trust and token failures.\n"
	"\n"
	"  --json   print one JSON document: client, server (null when no server\n"
	"           answers), url (the server asked)\n";

int cmd_version(cli_ctx *ctx, int argc, char **argv)
{
	enpu_err e = ENPU_ERR_INIT;
	const char *pos[1];
	int json = 0;
	const cli_opt opts[] = {
		{"--json", CLI_OPT_FLAG, &json},
		{NULL, 0, NULL},
	};
	struct json_object *res = NULL, *doc;
	char url[4200], dir[4096];
	cli_conn *c;
	const char *v;
	int n_pos, r, up;

	r = cli_parse_opts("version", argc, argv, opts, pos, 0, &n_pos, &e);
	if (r == 1) {
		fputs(usage, stdout);
		return 0;
	}
	if (r < 0)
		return cli_report(&e);
	if (!json)
		printf("eulernpu %s\n", CLI_VERSION);
	if (ctx->server) {
		snprintf(url, sizeof url, "%s", ctx->server);
	} else if (cli_private_dir(dir, sizeof dir) == 0) {
		snprintf(url, sizeof url, "unix:%s/eulernpud.sock", dir);
	} else {
		url[0] = '\0';
	}
	fflush(stdout);
	c = cli_conn_new(url, &e);
	if (c && cli_conn_set_auth(c, ctx->token, ctx->cacert) != 0) {
		cli_conn_free(c);
		c = NULL;
		enpu_fail(&e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
	}
	/* no retries: a version check answers now or says why not */
	if (c)
		enpu_rest_set_retry(c, 0, 0, NULL);
	up = c && cli_http_json(c, "GET", API_HEALTH, NULL, 5, &res, NULL, NULL, &e) == 0;
	v = up ? cli_json_str(res, "version") : NULL;
	if (json) {
		doc = json_object_new_object();
		json_object_object_add(doc, "client", json_object_new_string(CLI_VERSION));
		/* a server that answers without a version still answered: "" */
		json_object_object_add(doc, "server", up ? json_object_new_string(v ? v : "") : NULL);
		json_object_object_add(doc, "url", url[0] ? json_object_new_string(url) : NULL);
		cli_print_json(doc);
		json_object_put(doc);
	} else if (up) {
		printf("eulernpud %s (%s)\n", v ? v : "(unknown version)", url);
	} else if (!ctx->server) {
		printf("eulernpud not running (%s; started on demand)\n", url);
	}
	json_object_put(res);
	cli_conn_free(c);
	return up || !ctx->server ? 0 : cli_report(&e);
}

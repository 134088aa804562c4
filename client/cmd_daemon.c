/* cmd_daemon.c: `eulernpu daemon status|stop`: the private daemon (the one
 * the client starts on demand in the runtime directory; never a --server):
 * status prints its pid, socket, version, uptime and cache directory (exit
 * 1 when none runs); stop sends it SIGTERM and waits, bounded, for it to
 * let go of its pid file's lock. Neither starts a daemon. */
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>
#include "api.h"
#include "cli.h"
#include "rest.h"

static const char usage[] =
	"usage: eulernpu daemon status [--json]\n"
	"       eulernpu daemon stop [--wait SECONDS]\n"
	"\n"
	"The private daemon (started on demand when no server is configured):\n"
	"  status   its pid, socket, version, uptime and cache directory; exit 1\n"
	"           when none runs\n"
	"  stop     stop it gracefully (running jobs finish) and wait for it, at\n"
	"           most --wait seconds (default 30); exit 0 when none runs\n"
	"\n"
	"  --json   status as one JSON document: running, pid, socket, version,\n"
	"           uptime_s, cache_dir\n";

static int status(const cli_private *p, int json)
{
	enpu_err e = ENPU_ERR_INIT;
	long pid = cli_private_pid(p), up = -1;
	struct json_object *res = NULL, *doc;
	const char *ver = NULL, *cache = NULL;
	long long v;
	cli_conn *c = pid ? cli_conn_new(p->url, &e) : NULL;

	if (c && cli_http_json(c, "GET", API_HEALTH, NULL, 5, &res, NULL, NULL, &e) == 0) {
		ver = cli_json_str(res, F_VERSION);
		cache = cli_json_str(res, F_CACHE_DIR);
		if (cli_json_int(res, F_UPTIME, &v) == 0)
			up = (long)v;
	}
	if (json) {
		doc = json_object_new_object();
		json_object_object_add(doc, "running", json_object_new_boolean(pid != 0));
		json_object_object_add(doc, "pid", pid > 0 ? json_object_new_int64(pid) : NULL);
		json_object_object_add(doc, "socket", json_object_new_string(p->sock));
		json_object_object_add(doc, "version", ver ? json_object_new_string(ver) : NULL);
		json_object_object_add(doc, "uptime_s", up >= 0 ? json_object_new_int64(up) : NULL);
		json_object_object_add(doc, "cache_dir", cache ? json_object_new_string(cache) : NULL);
		cli_print_json(doc);
		json_object_put(doc);
	} else if (!pid) {
		printf("eulernpud: not running (socket %s)\n", p->sock);
	} else {
		printf("pid      %ld\n", pid);
		printf("socket   %s\n", p->sock);
		printf("version  %s\n", ver ? ver : "- (not answering)");
		if (up >= 0)
			printf("uptime   %ld s\n", up);
		else
			printf("uptime   -\n");
		printf("cache    %s\n", cache ? cache : "-");
	}
	json_object_put(res);
	cli_conn_free(c);
	return pid ? 0 : 1;
}

int cmd_daemon(cli_ctx *ctx, int argc, char **argv)
{
	enpu_err e = ENPU_ERR_INIT;
	const char *pos[1];
	double wait = 30;
	int json = 0, n_pos, r;
	const cli_opt opts[] = {
		{"--json", CLI_OPT_FLAG, &json},
		{"--wait", CLI_OPT_DOUBLE, &wait},
		{NULL, 0, NULL},
	};
	cli_private p;
	long pid;

	(void)ctx;
	r = cli_parse_opts("daemon", argc, argv, opts, pos, 1, &n_pos, &e);
	if (r == 1) {
		fputs(usage, stdout);
		return 0;
	}
	if (r < 0)
		return cli_report(&e);
	if (n_pos != 1 || (strcmp(pos[0], "status") && strcmp(pos[0], "stop"))) {
		cli_usage(&e, "daemon", "say 'status' or 'stop'");
		return cli_report(&e);
	}
	if (cli_private_paths(&p, &e) < 0)
		return cli_report(&e);
	if (!strcmp(pos[0], "status"))
		return status(&p, json);
	pid = cli_private_pid(&p);
	r = cli_private_stop(&p, wait > 86400 ? 86400000 : (int)(wait * 1000), &e);
	if (r < 0)
		return cli_report(&e);
	if (r == 1)
		printf("eulernpud: not running (socket %s)\n", p.sock);
	else
		printf("eulernpud stopped (pid %ld)\n", pid);
	return 0;
}

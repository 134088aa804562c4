/* main.c: eulernpu, the thin client. Global options (--server, --help) may
 * stand before or after the verb; the verb is looked up in the table below
 * and its cmd_x() return value is the exit status. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>
#include "cli.h"
#include "rest.h"

static const cli_verb verbs[] = {
	{"validate", cmd_validate, "check a spec: validate SPEC [--backend B]"},
	{"compile",  cmd_compile,  "compile a spec and weights into an artifact directory"},
	{"run",      cmd_run,      "run an artifact on an input, write the result"},
	{"compare",  cmd_compare,  "compare a result with golden tensors"},
	{"report",   cmd_report,   "print an npu_sim run's cycles and memory traffic per op"},
	{"backends", cmd_backends, "print which ops each backend lowers"},
	{"boards",   cmd_boards,   "print the board agents a lab server fronts, up/down, busy"},
	{"jobs",     cmd_jobs,     "list, show, wait for or cancel the server's jobs"},
	{"cache",    cmd_cache,    "the server's cache: stats, ls, rm ID, gc"},
	{"explain",  cmd_explain,  "explain an error code (E0301), or list them all"},
	{"version",  cmd_version,  "print the client's and the server's versions"},
	{"daemon",   cmd_daemon,   "the private daemon: status (pid, version, uptime) or stop"},
};

static void usage(FILE *f)
{
	fputs("usage: eulernpu [--server URL] [--token-file FILE] [--cacert FILE] VERB [options]\n"
	      "\n"
	      "verbs:\n", f);
	for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
		fprintf(f, "  %-9s %s\n", verbs[i].name, verbs[i].summary);
	fputs("\n"
	      "options:\n"
	      "  --server URL  the daemon: unix:/path/to.sock or http://host:port\n"
	      "                (default: $EULERNPU_SERVER, else a private daemon that\n"
	      "                is started on demand and exits when idle)\n"
	      "  --token-file FILE  send the bearer token in FILE to an http(s) server\n"
	      "                (default: $EULERNPU_TOKEN, else the config file's token)\n"
	      "  --cacert FILE the CA certificates (PEM) that signed an https:// server's\n"
	      "                certificate (default: $EULERNPU_CACERT, else the config\n"
	      "                file's cacert, else the system's CAs)\n"
	      "\n"
	      "config file: $XDG_CONFIG_HOME/eulernpu/config.yaml (~/.config/...), keys\n"
	      "server, token or token_file, cacert; options beat the environment, which\n"
	      "beats the file.\n"
	      "  -h, --help    this help; `eulernpu VERB --help` for a verb's\n"
	      "\n"
	      "exit status: 0 ok, 1 compare or job failed, 2 usage or input error,\n"
	      "3 server unreachable.\n", f);
}

/* Server, token and CA: options > environment > config file. The config
 * file is read only when something is still missing. */
static int resolve_access(cli_ctx *ctx, const char *token_file, cli_config *cfg, enpu_err *e)
{
	const char *env_tok = getenv("EULERNPU_TOKEN"), *env_ca = getenv("EULERNPU_CACERT");
	int have_tok = token_file || (env_tok && *env_tok);
	char path[4096];

	if (!ctx->cacert && env_ca && *env_ca)
		ctx->cacert = env_ca;
	if ((!ctx->server || !ctx->cacert || !have_tok) &&
	    cli_config_path(path, sizeof path) == 0 && cli_config_load(path, cfg, e) != 0)
		return -1;
	if (!ctx->server && cfg->server)
		ctx->server = cfg->server;
	if (!ctx->cacert && cfg->cacert)
		ctx->cacert = cfg->cacert;
	if (token_file)
		return cli_read_token(token_file, &ctx->token, e);
	if (env_tok && *env_tok)
		ctx->token = strdup(env_tok);
	else if (cfg->token)
		ctx->token = strdup(cfg->token);
	else if (cfg->token_file)
		return cli_read_token(cfg->token_file, &ctx->token, e);
	else
		return 0;
	return ctx->token ? 0 : enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
}

/* The command line with the global options taken out: the verb and its
 * arguments in order (args[verb_at] is the verb, -1 none yet), whether
 * -h/--help stood before the verb, and --token-file's value. */
typedef struct cmdline {
	char **args;
	int n, verb_at, help;
	const char *token_file;
} cmdline;

/* A global option at argv[*i] (--server, --token-file, --cacert; the value
 * next or after '='): 1 taken (*i on its value), 0 not one, -1 with e. */
static int global_option(cli_ctx *ctx, cmdline *cl, int argc, char **argv, int *i, enpu_err *e)
{
	const char *a = argv[*i];

	if (strcmp(a, "--server") == 0) {
		if (*i + 1 >= argc || !argv[*i + 1][0])
			return cli_usage(e, NULL, "option '--server' needs a URL");
		ctx->server = argv[++*i];
		return 1;
	}
	if (!strcmp(a, "--token-file") || !strcmp(a, "--cacert") ||
	    !strncmp(a, "--token-file=", 13) || !strncmp(a, "--cacert=", 9)) {
		const char *eq = strchr(a, '='), *v = eq ? eq + 1 : *i + 1 < argc ? argv[++*i] : "";
		int is_tok = !strncmp(a, "--token-file", 12);
		if (!*v)
			return cli_usage(e, NULL, "option '%s' needs a file",
					 is_tok ? "--token-file" : "--cacert");
		if (is_tok)
			cl->token_file = v;
		else
			ctx->cacert = v;
		return 1;
	}
	if (strncmp(a, "--server=", 9) == 0) {
		if (!a[9])
			return cli_usage(e, NULL, "option '--server' needs a URL");
		ctx->server = a + 9;
		return 1;
	}
	return 0;
}

/* Take the global options out wherever they stand (up to "--"); the rest,
 * in order, is the verb and its arguments. 0, or -1 with e. */
static int parse_cmdline(cli_ctx *ctx, int argc, char **argv, cmdline *cl, enpu_err *e)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int r;

		if (strcmp(a, "--") == 0) {
			while (i < argc)
				cl->args[cl->n++] = argv[i++];
			break;
		}
		if ((r = global_option(ctx, cl, argc, argv, &i, e)) < 0)
			return -1;
		if (r > 0)
			continue;
		if (cl->verb_at < 0 && a[0] != '-')
			cl->verb_at = cl->n;
		if (cl->verb_at < 0 && (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)) {
			cl->help = 1;
			continue;
		}
		if (cl->verb_at < 0 && strcmp(a, "--version") == 0) {
			cl->verb_at = cl->n;
			cl->args[cl->n++] = "version";
			continue;
		}
		if (cl->verb_at < 0)
			return cli_usage(e, NULL, "unknown option '%s'", a);
		cl->args[cl->n++] = argv[i];
	}
	return 0;
}

/* Run the verb of cl (the table above): its exit status. */
static int run_verb(cli_ctx *ctx, cmdline *cl, enpu_err *e)
{
	char **args = cl->args;
	int at = cl->verb_at, n = cl->n, ret = -1;

	/* "eulernpu help VERB" is "eulernpu VERB --help". */
	if (strcmp(args[at], "help") == 0) {
		args[at] = args[at + 1];
		args[at + 1] = "--help";
	}
	if (cl->help)
		args[n++] = "--help";
	for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++) {
		if (strcmp(verbs[i].name, args[at]) == 0) {
			curl_global_init(CURL_GLOBAL_DEFAULT);
			ret = verbs[i].fn(ctx, n - at, args + at);
			break;
		}
	}
	if (ret < 0)
		ret = cli_report((cli_usage(e, NULL, "unknown verb '%s'", args[at]), e));
	fflush(stdout);
	return ret;
}

int main(int argc, char **argv)
{
	cli_ctx ctx = CLI_CTX_INIT;
	enpu_err e = ENPU_ERR_INIT;
	cmdline cl = {NULL, 0, -1, 0, NULL};
	const char *env = getenv("EULERNPU_SERVER");
	cli_config cfg = {0};
	int ret;

	if (env && *env)
		ctx.server = env;
	cl.args = calloc((size_t)argc + 1, sizeof *cl.args);
	if (!cl.args) {
		fputs("eulernpu: out of memory\n", stderr);
		return 2;
	}
	if (parse_cmdline(&ctx, argc, argv, &cl, &e) != 0) {
		ret = cli_report(&e);
	} else if (cl.verb_at < 0 && !cl.help) {
		ret = cli_report((cli_usage(&e, NULL, "no verb given (validate, compile, run, compare, ...)"), &e));
	} else if (cl.verb_at < 0 ||
		   (strcmp(cl.args[cl.verb_at], "help") == 0 && cl.verb_at + 1 >= cl.n)) {
		usage(stdout);
		ret = 0;
	} else if (resolve_access(&ctx, cl.token_file, &cfg, &e) != 0) {
		ret = cli_report(&e);
	} else {
		ret = run_verb(&ctx, &cl, &e);
	}
	cli_conn_free(ctx.conn);
	if (ctx.token) {
		memset(ctx.token, 0, strlen(ctx.token));
		free(ctx.token);
	}
	cli_config_free(&cfg);
	free(cl.args);
	return ret;
}

/* main.c: eulernpu, the thin client. Global options (--server, --token-file,
 * --cacert, --retry, --retry-max-time, --help) may stand before or after the verb; the verb is looked up in the table below
 * and its cmd_x() return value is the exit status. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>
#include "cli.h"
#include "rest.h"

static const cli_verb verbs[] = {
	{"import",   cmd_import,   "import an ONNX model into a spec and weights"},
	{"validate", cmd_validate, "check a spec: validate SPEC [--backend B]"},
	{"compile",  cmd_compile,  "compile a spec and weights into an artifact directory"},
	{"run",      cmd_run,      "run an artifact on an input, write the result"},
	{"deploy",   cmd_deploy,   "name an artifact as a version of a model the server runs"},
	{"models",   cmd_models,   "the server's models: list, or rm NAME[:V]"},
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
	fputs("usage: eulernpu [--server URL] [--token-file FILE] [--cacert FILE] [--retry N]\n"
	      "                [--retry-max-time S] VERB [options]\n"
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
	      "  --retry N     retry an answer 429 (queue full) or 503 (busy) N times,\n"
	      "                after the server's Retry-After (default 3, or\n"
	      "                $EULERNPU_RETRY; 0: never)\n"
	      "  --retry-max-time S  stop retrying S seconds after the first try\n"
	      "                (default 60, or $EULERNPU_RETRY_MAX_TIME)\n"
	      "\n"
	      "config file: $XDG_CONFIG_HOME/eulernpu/config.yaml (~/.config/...), keys\n"
	      "server, token or token_file, cacert, retry, retry_max_time; options beat\n"
	      "the environment, which beats the file.\n"
	      "  -h, --help    this help; `eulernpu VERB --help` for a verb's\n"
	      "\n"
	      "exit status: 0 ok, 1 compare or job failed, 2 usage, input or\n"
	      "configuration error (TLS trust, token), 3 retry later (unreachable,\n"
	      "queue full, busy, storage full), 130 interrupted.\n", f);
}

/* Server, token and CA: options > environment > config file. The config
 * file is read only when something is still missing (want_file: a retry
 * setting is). */
static int resolve_access(cli_ctx *ctx, const char *token_file, int want_file, cli_config *cfg,
			  enpu_err *e)
{
	const char *env_tok = getenv("EULERNPU_TOKEN"), *env_ca = getenv("EULERNPU_CACERT");
	int have_tok = token_file || (env_tok && *env_tok);
	char path[4096];

	if (!ctx->cacert && env_ca && *env_ca)
		ctx->cacert = env_ca;
	if ((want_file || !ctx->server || !ctx->cacert || !have_tok) &&
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

/* A count of retries or seconds from what (an option, variable or
 * setting named name): 0 .. max. */
static int parse_count(const char *v, const char *name, long max, long *out, enpu_err *e)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(v, &end, 10);
	if (!*v || *end || errno || n < 0 || n > max)
		return enpu_fail(e, ENPU_E_USAGE, name, "give a whole number from 0 to the limit",
				 "%s takes a whole number from 0 to %ld, not '%s'", name, max, v);
	*out = n;
	return 0;
}

/* Whether a setting is given by its option (opt) or its variable. */
static int has_value(const char *opt, const char *var)
{
	const char *v = getenv(var);

	return opt || (v && *v);
}

/* --retry and --retry-max-time: options > environment > config file. */
static int resolve_retry(const char *opt_n, const char *opt_max, const cli_config *cfg, int quiet,
			 enpu_err *e)
{
	const char *env_n = getenv("EULERNPU_RETRY"), *env_max = getenv("EULERNPU_RETRY_MAX_TIME");
	long n = CLI_RETRY_DEFAULT, max = CLI_RETRY_MAX_TIME_DEFAULT;

	if (cfg->retry && parse_count(cfg->retry, "retry (config file)", 100, &n, e) < 0)
		return -1;
	if (cfg->retry_max_time && parse_count(cfg->retry_max_time,
					       "retry_max_time (config file)", 86400, &max, e) < 0)
		return -1;
	if (env_n && *env_n && parse_count(env_n, "EULERNPU_RETRY", 100, &n, e) < 0)
		return -1;
	if (env_max && *env_max && parse_count(env_max, "EULERNPU_RETRY_MAX_TIME", 86400, &max,
					       e) < 0)
		return -1;
	if (opt_n && parse_count(opt_n, "--retry", 100, &n, e) < 0)
		return -1;
	if (opt_max && parse_count(opt_max, "--retry-max-time", 86400, &max, e) < 0)
		return -1;
	cli_rest_retry((int)n, max, quiet);
	return 0;
}

/* The command line with the global options taken out: the verb and its
 * arguments in order (args[verb_at] is the verb, -1 none yet), whether
 * -h/--help stood before the verb, and the values of --token-file, --retry
 * and --retry-max-time. */
typedef struct cmdline {
	char **args;
	int n, verb_at, help;
	const char *token_file, *retry, *retry_max;
} cmdline;

/* A global option that takes a value (--name V or --name=V) at argv[*i]:
 * 1 with *val, 0 not this one, -1 with e when the value is missing. */
static int opt_value(const char *name, int argc, char **argv, int *i, const char **val,
		     enpu_err *e)
{
	const char *a = argv[*i];
	size_t n = strlen(name);

	if (strncmp(a, name, n) != 0 || (a[n] != '\0' && a[n] != '='))
		return 0;
	*val = a[n] == '=' ? a + n + 1 : *i + 1 < argc ? argv[++*i] : "";
	if (!**val)
		return cli_usage(e, NULL, "option '%s' needs a value", name);
	return 1;
}

/* A global option at argv[*i] (--server, --token-file, --cacert; the value
 * next or after '='): 1 taken (*i on its value), 0 not one, -1 with e. */
static int global_option(cli_ctx *ctx, cmdline *cl, int argc, char **argv, int *i, enpu_err *e)
{
	const char *a = argv[*i];
	int r;

	if ((r = opt_value("--retry", argc, argv, i, &cl->retry, e)) != 0 ||
	    (r = opt_value("--retry-max-time", argc, argv, i, &cl->retry_max, e)) != 0)
		return r;
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

/* Whether the verb's arguments ask for --json (quiet retries). */
static int wants_json(const cmdline *cl)
{
	for (int i = cl->verb_at + 1; i < cl->n; i++)
		if (!strcmp(cl->args[i], "--json"))
			return 1;
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
	cmdline cl = {NULL, 0, -1, 0, NULL, NULL, NULL};
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
	} else if (resolve_access(&ctx, cl.token_file, !has_value(cl.retry, "EULERNPU_RETRY") ||
				  !has_value(cl.retry_max, "EULERNPU_RETRY_MAX_TIME"), &cfg, &e) != 0 ||
		   resolve_retry(cl.retry, cl.retry_max, &cfg, wants_json(&cl), &e) != 0) {
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

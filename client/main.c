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
	{"explain",  cmd_explain,  "explain an error code (E0301), or list them all"},
	{"version",  cmd_version,  "print the client's and the server's versions"},
};

static void usage(FILE *f)
{
	fputs("usage: eulernpu [--server URL] VERB [options]\n"
	      "\n"
	      "verbs:\n", f);
	for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
		fprintf(f, "  %-9s %s\n", verbs[i].name, verbs[i].summary);
	fputs("\n"
	      "options:\n"
	      "  --server URL  the daemon: unix:/path/to.sock or http://host:port\n"
	      "                (default: $EULERNPU_SERVER, else a private daemon that\n"
	      "                is started on demand and exits when idle)\n"
	      "  -h, --help    this help; `eulernpu VERB --help` for a verb's\n"
	      "\n"
	      "exit status: 0 ok, 1 compare or job failed, 2 usage or input error,\n"
	      "3 server unreachable.\n", f);
}

int main(int argc, char **argv)
{
	cli_ctx ctx = CLI_CTX_INIT;
	enpu_err e = ENPU_ERR_INIT;
	char **args;
	int n = 0, verb_at = -1, ret, help = 0;
	const char *env = getenv("EULERNPU_SERVER");

	if (env && *env)
		ctx.server = env;
	args = calloc((size_t)argc + 1, sizeof *args);
	if (!args) {
		fputs("eulernpu: out of memory\n", stderr);
		return 2;
	}
	/* Take --server out wherever it stands (up to "--"); the rest, in
	 * order, is the verb and its arguments. */
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--") == 0) {
			while (i < argc)
				args[n++] = argv[i++];
			break;
		}
		if (strcmp(a, "--server") == 0) {
			if (i + 1 >= argc || !argv[i + 1][0]) {
				ret = cli_report((cli_usage(&e, NULL, "option '--server' needs a URL"), &e));
				goto out;
			}
			ctx.server = argv[++i];
			continue;
		}
		if (strncmp(a, "--server=", 9) == 0) {
			if (!a[9]) {
				ret = cli_report((cli_usage(&e, NULL, "option '--server' needs a URL"), &e));
				goto out;
			}
			ctx.server = a + 9;
			continue;
		}
		if (verb_at < 0 && a[0] != '-')
			verb_at = n;
		if (verb_at < 0 && (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)) {
			help = 1;
			continue;
		}
		if (verb_at < 0 && strcmp(a, "--version") == 0) {
			verb_at = n;
			args[n++] = "version";
			continue;
		}
		if (verb_at < 0) {
			ret = cli_report((cli_usage(&e, NULL, "unknown option '%s'", a), &e));
			goto out;
		}
		args[n++] = argv[i];
	}
	if (verb_at < 0) {
		if (help) {
			usage(stdout);
			ret = 0;
		} else {
			ret = cli_report((cli_usage(&e, NULL, "no verb given (validate, compile, run, compare, ...)"), &e));
		}
		goto out;
	}
	/* "eulernpu help VERB" is "eulernpu VERB --help". */
	if (strcmp(args[verb_at], "help") == 0) {
		if (verb_at + 1 >= n) {
			usage(stdout);
			ret = 0;
			goto out;
		}
		args[verb_at] = args[verb_at + 1];
		args[verb_at + 1] = "--help";
	}
	if (help) {
		args[n++] = "--help";
	}
	ret = -1;
	for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++) {
		if (strcmp(verbs[i].name, args[verb_at]) == 0) {
			curl_global_init(CURL_GLOBAL_DEFAULT);
			ret = verbs[i].fn(&ctx, n - verb_at, args + verb_at);
			break;
		}
	}
	if (ret < 0)
		ret = cli_report((cli_usage(&e, NULL, "unknown verb '%s'", args[verb_at]), &e));
	fflush(stdout);
out:
	cli_conn_free(ctx.conn);
	free(args);
	return ret;
}

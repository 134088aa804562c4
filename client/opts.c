/* opts.c: the verbs' option parser (a table per verb, as curl's getparam),
 * usage errors, and how an error reaches the user: three lines on stderr
 * and the catalogue's exit status. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "cli.h"

int cli_usage(enpu_err *e, const char *verb, const char *fmt, ...)
{
	char fix[128];
	va_list ap;

	snprintf(fix, sizeof fix, "run 'eulernpu%s%s --help' to see the usage",
		 verb ? " " : "", verb ? verb : "");
	enpu_fail(e, ENPU_E_USAGE, NULL, fix, "%s", "");
	va_start(ap, fmt);
	vsnprintf(e->message, sizeof e->message, fmt, ap);
	va_end(ap);
	return -1;
}

static const cli_opt *find_opt(const cli_opt *opts, const char *name, size_t n)
{
	for (; opts && opts->name; opts++)
		if (strlen(opts->name) == n && strncmp(opts->name, name, n) == 0)
			return opts;
	return NULL;
}

static int set_opt(const char *verb, const cli_opt *o, const char *val, enpu_err *e)
{
	char *end;
	double d;

	switch (o->type) {
	case CLI_OPT_STR:
		if (!*val)
			return cli_usage(e, verb, "option '%s' needs a non-empty value", o->name);
		*(const char **)o->dst = val;
		return 0;
	case CLI_OPT_DOUBLE:
		errno = 0;
		d = strtod(val, &end);
		if (!*val || *end || errno == ERANGE || !isfinite(d) || d < 0)
			return cli_usage(e, verb, "option '%s' takes a number >= 0, not '%s'",
					 o->name, val);
		*(double *)o->dst = d;
		return 0;
	case CLI_OPT_FLAG:
		*(int *)o->dst = 1;
		return 0;
	}
	return cli_usage(e, verb, "bad option table entry '%s'", o->name);
}

int cli_parse_opts(const char *verb, int argc, char **argv, const cli_opt *opts,
		   const char **pos, int max_pos, int *n_pos, enpu_err *e)
{
	int only_pos = 0;

	*n_pos = 0;
	/* --help wins wherever it is, before any other complaint. */
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
			return 1;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!only_pos && strcmp(a, "--") == 0) {
			only_pos = 1;
			continue;
		}
		if (!only_pos && a[0] == '-' && a[1] != '\0') {
			const char *eq = strchr(a, '=');
			size_t n = eq ? (size_t)(eq - a) : strlen(a);
			const cli_opt *o = find_opt(opts, a, n);

			if (!o)
				return cli_usage(e, verb, "unknown option '%.*s'", (int)n, a);
			if (o->type == CLI_OPT_FLAG) {
				if (eq)
					return cli_usage(e, verb, "option '%s' takes no value", o->name);
				set_opt(verb, o, "", e);
				continue;
			}
			if (eq) {
				if (set_opt(verb, o, eq + 1, e) < 0)
					return -1;
				continue;
			}
			if (i + 1 >= argc)
				return cli_usage(e, verb, "option '%s' needs a value", o->name);
			if (set_opt(verb, o, argv[++i], e) < 0)
				return -1;
			continue;
		}
		if (*n_pos >= max_pos)
			return cli_usage(e, verb, "unexpected argument '%s'", a);
		pos[(*n_pos)++] = a;
	}
	return 0;
}

int cli_report(const enpu_err *e)
{
	char buf[2048];

	enpu_err_render(e, buf, sizeof buf);
	fputs(buf, stderr);
	fflush(stderr);
	return enpu_code_info_of(e->code)->exit_code;
}

void cli_err_from_json(struct json_object *err, enpu_err *e)
{
	const char *id = cli_json_str(err, "code");
	const char *msg = cli_json_str(err, "message");
	const char *where = cli_json_str(err, "where");
	const char *fix = cli_json_str(err, "fix");
	const enpu_code_info *ci = id ? enpu_code_by_id(id) : NULL;

	*e = (enpu_err)ENPU_ERR_INIT;
	if (!ci) {
		enpu_fail(e, ENPU_E_SERVER, where, fix, "server error %s: %s",
			  id ? id : "(no code)", msg ? msg : "(no message)");
		return;
	}
	e->code = ci->code;
	snprintf(e->message, sizeof e->message, "%s", msg ? msg : ci->title);
	snprintf(e->where, sizeof e->where, "%s", where ? where : "");
	snprintf(e->fix, sizeof e->fix, "%s", fix ? fix : "");
}

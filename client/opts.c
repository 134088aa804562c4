/* opts.c: the verbs' option parser (a table per verb, as curl's getparam),
 * usage errors, and how an error reaches the user: three lines on stderr
 * and the catalogue's exit status. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <json-c/json.h>
#include "cli.h"
#include "ydoc.h"
#include "wire.h"

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
	case CLI_OPT_LIST: {
		cli_strlist *l = o->dst;

		if (!*val)
			return cli_usage(e, verb, "option '%s' needs a non-empty value", o->name);
		if (l->n == CLI_LIST_MAX)
			return cli_usage(e, verb, "option '%s' is given more than %d times", o->name,
					 CLI_LIST_MAX);
		l->v[l->n++] = val;
		return 0;
	}
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
	const char *id, *msg;

	if (enpu_wire_err_from_json(err, e, &id, &msg) != 0)
		enpu_fail(e, ENPU_E_SERVER, enpu_wire_str(err, "where"), enpu_wire_str(err, "fix"),
			  "server error %s: %s", id ? id : "(no code)", msg ? msg : "(no message)");
}

/* ---- the config file --------------------------------------------------- */

int cli_config_path(char *out, size_t cap)
{
	const char *x = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	int n;

	if (x && *x)
		n = snprintf(out, cap, "%s/eulernpu/config.yaml", x);
	else if (home && *home)
		n = snprintf(out, cap, "%s/.config/eulernpu/config.yaml", home);
	else
		return -1;
	return n > 0 && (size_t)n < cap ? 0 : -1;
}

#define CLI_CFG_FIX "write 'server: URL', 'token_file: PATH' (or 'token: TOKEN'), 'cacert: PATH', " \
	"'retry: N' and 'retry_max_time: S' lines"

static int cfg_fail(enpu_err *e, const char *path, const enpu_ynode *n, const char *msg)
{
	char where[600];

	snprintf(where, sizeof where, "%.500s:%d:%d", path, n->line, n->col);
	return enpu_fail(e, ENPU_E_USAGE, where, CLI_CFG_FIX, "%s", msg);
}

/* The settings of the file's top-level mapping into out. */
static int cfg_walk(const char *path, const enpu_ynode *root, cli_config *out, enpu_err *e)
{
	if (!root)
		return 0;
	if (root->kind != ENPU_YN_MAP)
		return cfg_fail(e, path, root, root->kind == ENPU_YN_SCALAR
				? "the file must be a mapping of settings"
				: "each setting takes a single value");
	for (size_t i = 0; i < root->n; i++) {
		const enpu_ynode *k = root->kids[2 * i], *v = root->kids[2 * i + 1];
		char **want;

		if (k->kind != ENPU_YN_SCALAR)
			return cfg_fail(e, path, k, "each setting takes a single value");
		want = !strcmp(k->text, "server") ? &out->server
		     : !strcmp(k->text, "token") ? &out->token
		     : !strcmp(k->text, "token_file") || !strcmp(k->text, "token-file") ? &out->token_file
		     : !strcmp(k->text, "cacert") ? &out->cacert
		     : !strcmp(k->text, "retry") ? &out->retry
		     : !strcmp(k->text, "retry_max_time") || !strcmp(k->text, "retry-max-time")
		       ? &out->retry_max_time : NULL;
		if (!want) {
			char msg[160];

			snprintf(msg, sizeof msg, "unknown setting '%.60s' (known: server, token, "
				 "token_file, cacert, retry, retry_max_time)", k->text);
			return cfg_fail(e, path, k, msg);
		}
		if (v->kind != ENPU_YN_SCALAR)
			return cfg_fail(e, path, v, "each setting takes a single value");
		free(*want);
		*want = v->len ? strdup(v->text) : NULL;
	}
	return 0;
}

/* Zero every scalar of a tree (the file may hold a token). */
static void cfg_wipe(const enpu_ynode *n)
{
	if (!n)
		return;
	if (n->kind == ENPU_YN_SCALAR)
		memset(n->text, 0, n->len);
	for (size_t i = 0; i < (n->kind == ENPU_YN_MAP ? 2 * n->n : n->n); i++)
		cfg_wipe(n->kids[i]);
}

int cli_config_load(const char *path, cli_config *out, enpu_err *e)
{
	enpu_yaml_opts o = {"client configuration", 64u << 10, 1u << 17, 64, ENPU_E_USAGE,
			    "not valid YAML", CLI_CFG_FIX, 1};
	enpu_buf b = ENPU_BUF_INIT;
	enpu_ydoc *doc = NULL;
	int rc;

	memset(out, 0, sizeof *out);
	if (access(path, F_OK) != 0)
		return 0;
	if (enpu_read_file(path, 64u << 10, &b, e) != 0) {
		enpu_buf_free(&b);
		return -1;
	}
	rc = enpu_yaml_load(b.data ? b.data : "", b.len, path, &o, &doc, e);
	if (rc == 0)
		rc = cfg_walk(path, enpu_ydoc_root(doc), out, e);
	if (b.data)
		memset(b.data, 0, b.len);   /* it may hold a token */
	enpu_buf_free(&b);
	cfg_wipe(enpu_ydoc_root(doc));
	enpu_ydoc_free(doc);
	if (rc != 0)
		cli_config_free(out);
	return rc;
}

void cli_config_free(cli_config *c)
{
	if (c->token) {
		memset(c->token, 0, strlen(c->token));
		free(c->token);
	}
	free(c->server);
	free(c->token_file);
	free(c->cacert);
	free(c->retry);
	free(c->retry_max_time);
	memset(c, 0, sizeof *c);
}

int cli_read_token(const char *path, char **out, enpu_err *e)
{
	enpu_buf b = ENPU_BUF_INIT;
	struct stat st;
	size_t n, i;

	*out = NULL;
	if (stat(path, &st) == 0 && (st.st_mode & (S_IRWXG | S_IRWXO)))
		return enpu_fail(e, ENPU_E_USAGE, path, "chmod 600 the file: a token is a password",
				 "token file '%s' may be read or written by others (mode %04o)", path,
				 (unsigned)(st.st_mode & 07777));
	if (enpu_read_file(path, 4096, &b, e) != 0) {
		enpu_buf_free(&b);
		return -1;
	}
	n = b.len;
	for (i = 0; i < n && b.data[i] != '\n'; i++)
		;
	n = i;
	while (n > 0 && strchr("\r\t ", b.data[n - 1]))
		n--;
	for (i = 0; i < n; i++)
		if ((unsigned char)b.data[i] <= ' ' || (unsigned char)b.data[i] == 0x7f)
			break;
	if (n == 0 || i < n) {
		enpu_buf_free(&b);
		return enpu_fail(e, ENPU_E_USAGE, path, "put the token alone on the first line",
				 "token file '%s' does not hold one token of printable characters", path);
	}
	*out = strndup(b.data, n);
	memset(b.data, 0, b.len);
	enpu_buf_free(&b);
	return *out ? 0 : enpu_fail(e, ENPU_E_NOMEM, path, NULL, "out of memory");
}

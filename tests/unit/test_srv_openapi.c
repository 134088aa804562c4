/* test_srv_openapi.c: the API contract. The (method, path) pairs under
 * `paths:` in proto/openapi.yaml and the rows of the route table
 * (srv_routes[], server/routes/routes.c) must be the same set: a route the file
 * does not document, or a documented path no route serves, fails by name.
 * A route's "*" / "**" segments stand for the file's {param} segments by
 * position; HEAD is implied by GET. The file is read by openapi_ops.h,
 * shared with test_srv_access.c (the roles of the same operations). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "routes.h"
#include "err.h"
#include "api.h"
#include "openapi_ops.h"

#define MAX_OPS OA_MAX_OPS

/* ENPU_E_X by enum value, from common/base/err.h (filled by load_code_names) */
static char code_names[ENPU_E_CODE_COUNT][48];

static op ops[MAX_OPS];

/* Routes of the table that none of the n operations documents. */
static int undocumented(int n)
{
	int i, j, missing = 0;
	char c[256];

	for (i = 0; i < srv_n_routes; i++) {
		int found = 0;
		oa_canon(srv_routes[i].pattern, c, sizeof c);
		for (j = 0; j < n; j++)
			if (!strcasecmp(ops[j].method, srv_routes[i].method) && !strcmp(ops[j].canon, c))
				found = 1;
		missing += !found;
	}
	return missing;
}

Test(openapi, canon_maps_params_by_position)
{
	char a[256], b[256];
	oa_canon("/v1/artifacts/{id}/files/{path}", a, sizeof a);
	oa_canon("/v1/artifacts/*/files/**", b, sizeof b);
	cr_assert_str_eq(a, "/v1/artifacts/*/files/*");
	cr_assert_str_eq(a, b);
	oa_canon("/v1/jobs", a, sizeof a);
	cr_assert_str_eq(a, "/v1/jobs");
}

Test(openapi, file_parses_and_has_paths)
{
	int n = oa_load_ops(ops, MAX_OPS);
	cr_assert_gt(n, 10, "'%s' has no readable paths: (got %d operations)", oa_spec_path(), n);
	cr_assert_lt(n, MAX_OPS, "raise MAX_OPS");
}

Test(openapi, routes_and_file_are_the_same_set)
{
	int n = oa_load_ops(ops, MAX_OPS), i, j, bad = 0;
	char c[256];

	cr_assert_gt(n, 0, "cannot read '%s'", oa_spec_path());
	/* route -> file */
	for (i = 0; i < srv_n_routes; i++) {
		int found = 0;
		oa_canon(srv_routes[i].pattern, c, sizeof c);
		for (j = 0; j < n; j++)
			if (!strcasecmp(ops[j].method, srv_routes[i].method) && !strcmp(ops[j].canon, c)) {
				ops[j].seen = 1;
				found = 1;
			}
		if (!found) {
			cr_log_error("route '%s %s' (server/routes/routes.c) is not in %s", srv_routes[i].method,
				     srv_routes[i].pattern, oa_spec_path());
			bad++;
		}
	}
	/* file -> route; a documented HEAD needs a GET route of that path */
	for (j = 0; j < n; j++) {
		if (ops[j].seen)
			continue;
		if (!strcmp(ops[j].method, "head"))
			for (i = 0; i < n; i++)
				if (ops[i].seen && !strcmp(ops[i].method, "get") && !strcmp(ops[i].canon, ops[j].canon))
					ops[j].seen = 1;
		if (!ops[j].seen) {
			cr_log_error("%s documents '%s %s' but no route serves it (server/routes/routes.c)",
				     oa_spec_path(), ops[j].method, ops[j].shown);
			bad++;
		}
	}
	cr_expect_eq(bad, 0, "%d difference(s) between the route table and %s (listed above)", bad,
		     oa_spec_path());
}

/* The checker must notice a difference, or passing proves nothing: a
 * copy of the file without one of its paths fails the comparison. */
Test(openapi, a_missing_path_is_noticed)
{
	char tmp[] = "/tmp/enpu-openapi-XXXXXX";
	FILE *in = fopen(oa_spec_path(), "rb"), *out;
	char line[4096];
	int fd = mkstemp(tmp), skipping = 0, n, base;

	cr_assert(in && fd >= 0);
	base = undocumented(oa_load_ops(ops, MAX_OPS));
	out = fdopen(fd, "w");
	cr_assert(out);
	/* drop the "  /v1/compare:" block: up to the next line indented by
	 * two spaces or less */
	while (fgets(line, sizeof line, in)) {
		if (!strncmp(line, "  /v1/compare:", 14)) {
			skipping = 1;
			continue;
		}
		if (skipping && strncmp(line, "   ", 3))
			skipping = 0;
		if (!skipping)
			fputs(line, out);
	}
	fclose(in);
	fclose(out);
	setenv("ENPU_OPENAPI", tmp, 1);
	n = oa_load_ops(ops, MAX_OPS);
	unsetenv("ENPU_OPENAPI");
	unlink(tmp);
	cr_assert_gt(n, 0);
	cr_assert_eq(undocumented(n), base + 1, "dropping /v1/compare from the file: %d route(s) "
		     "undocumented, %d before", undocumented(n), base);
}

/* ---- statuses: what each handler can answer, as its code says ------------------
 *
 * A handler's statuses are read from its source (server/routes/routes_*.c):
 * the catalogue codes it names (ENPU_E_X: the code's HTTP status) and the
 * numbers it passes to srv_reply_*, in its body and in the static functions
 * of its file that it calls. Each must be among the statuses its operation
 * documents. The other way, each documented status must be one the handler
 * can give, or one the HTTP layer gives before any handler (generic()), or,
 * for a handler that passes on an error made elsewhere (srv_reply_error of
 * an enpu_err it did not fill itself), any status of the catalogue. */

#define MAX_SRC (1 << 20)

typedef struct src_file {
	char name[64];
	char *text;
} src_file;

static src_file srcs[16];
static int n_srcs;

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	size_t n;

	if (!f)
		return NULL;
	buf = malloc(MAX_SRC + 1);
	n = fread(buf, 1, MAX_SRC, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* The enum's names from err.h: each "ENPU_E_X," line whose comment starts
 * with the code's E-number, mapped through the catalogue by that number. */
static void load_code_names(void)
{
	char *t = slurp("common/base/err.h"), *p;

	cr_assert(t, "cannot read common/base/err.h");
	for (p = strstr(t, "\tENPU_E_"); p; p = strstr(p + 1, "\tENPU_E_")) {
		char name[48], id[8];
		const enpu_code_info *ci;
		if (sscanf(p + 1, "%47[A-Z_0-9], /* %7s", name, id) == 2 && (ci = enpu_code_by_id(id)))
			snprintf(code_names[ci->code], sizeof code_names[0], "%s", name);
	}
	free(t);
}

static void load_sources(void)
{
	static const char *const files[] = {"routes_artifacts.c", "routes_blobs.c", "routes_cache.c",
					    "routes_compile.c", "routes_import.c", "routes_jobs.c",
					    "routes_misc.c", "routes_models.c", "routes_oip.c", "routes_www.c",
					    "routes_events.c"};
	size_t i;
	char path[128];

	load_code_names();
	n_srcs = 0;
	for (i = 0; i < sizeof files / sizeof files[0]; i++) {
		snprintf(path, sizeof path, "server/routes/%s", files[i]);
		srcs[n_srcs].text = slurp(path);
		cr_assert(srcs[n_srcs].text, "cannot read %s", path);
		snprintf(srcs[n_srcs].name, sizeof srcs[n_srcs].name, "%s", files[i]);
		n_srcs++;
	}
}

/* The handler names of srv_routes[], in order, from routes.c's rows. */
static int handler_names(char names[][64], int max)
{
	char *t = slurp("server/routes/routes.c"), *p;
	int n = 0;

	cr_assert(t, "cannot read server/routes/routes.c");
	for (p = strstr(t, "\n\t{\""); p && n < max; p = strstr(p + 1, "\n\t{\"")) {
		char *e = strchr(p, '}'), *c = p;
		int k;
		for (k = 0; k < 3 && c && c < e; k++)
			c = strchr(c + 1, ',');
		if (!c || c > e)
			continue;
		c++;
		while (*c == ' ')
			c++;
		k = 0;
		while ((c[k] == '_' || (c[k] >= 'a' && c[k] <= 'z') || (c[k] >= '0' && c[k] <= '9')) && k < 63)
			k++;
		memcpy(names[n], c, (size_t)k);
		names[n++][k] = '\0';
	}
	free(t);
	return n;
}

static int is_ident(char c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* The body of function name defined at a line start in t ("...name(" then
 * "{" ... "\n}"), as [*b, *e); 0 when absent. */
static int find_body(const char *t, const char *name, const char **b, const char **e)
{
	const char *p = t;
	size_t n = strlen(name);

	while ((p = strstr(p, name))) {
		const char *ls = p;
		while (ls > t && ls[-1] != '\n')
			ls--;
		if ((p == t || !is_ident(p[-1])) && p[n] == '(' && ls[0] != '\t' && ls[0] != ' ' &&
		    ls[0] != '/' && ls[0] != '#' && ls[0] != '*') {
			const char *close = strstr(p, ")\n{");
			const char *semi = strchr(p, ';');
			if (close && (!semi || close < semi)) {
				*b = close + 3;
				*e = strstr(*b, "\n}");
				return *e != NULL;
			}
		}
		p += n;
	}
	return 0;
}

typedef struct scan {
	int statuses[32];
	int n;
	int forwards;          /* passes on an error made elsewhere */
	char seen[32][64];
	int n_seen;
} scan;

static void add_status(scan *s, int st)
{
	int i;
	for (i = 0; i < s->n; i++)
		if (s->statuses[i] == st)
			return;
	if (s->n < 32)
		s->statuses[s->n++] = st;
}

static void scan_fn(scan *s, const char *t, const char *name);

static void scan_body(scan *s, const char *t, const char *b, const char *e)
{
	const char *p;

	for (p = b; p < e; p++) {
		if (!strncmp(p, "ENPU_E_", 7) && (p == b || !is_ident(p[-1]))) {
			char id[64];
			int k = 0;
			size_t i, nc;
			const enpu_code_info *tab = enpu_code_table(&nc);
			while (is_ident(p[k]) && k < 63)
				k++;
			memcpy(id, p, (size_t)k);
			id[k] = '\0';
			for (i = 0; i < nc; i++)
				if (!strcmp(code_names[tab[i].code], id))
					add_status(s, tab[i].http_status);
			p += k - 1;
		} else if (!strncmp(p, "srv_reply", 9) && (p == b || !is_ident(p[-1]))) {
			const char *eol = strchr(p, ';');
			const char *q;
			if (!strncmp(p, "srv_reply_error(", 16))
				s->forwards = 1;
			for (q = p; eol && q + 3 <= eol; q++)
				if (q[0] >= '1' && q[0] <= '5' && q[1] >= '0' && q[1] <= '9' && q[2] >= '0' &&
				    q[2] <= '9' && !is_ident(q[-1]) && !is_ident(q[3]))
					add_status(s, (q[0] - '0') * 100 + (q[1] - '0') * 10 + (q[2] - '0'));
		} else if (is_ident(*p) && (p == b || !is_ident(p[-1]))) {
			char id[64];
			int k = 0;
			while (is_ident(p[k]) && k < 63)
				k++;
			if (p[k] == '(' && k < 63) {
				memcpy(id, p, (size_t)k);
				id[k] = '\0';
				scan_fn(s, t, id);
			}
			p += k - 1;
		}
	}
}

/* A function of the same file: scanned once. */
static void scan_fn(scan *s, const char *t, const char *name)
{
	const char *b, *e;
	int i;

	for (i = 0; i < s->n_seen; i++)
		if (!strcmp(s->seen[i], name))
			return;
	if (s->n_seen >= 32 || !find_body(t, name, &b, &e))
		return;
	snprintf(s->seen[s->n_seen++], 64, "%s", name);
	scan_body(s, t, b, e);
}

/* The statuses any route may answer, which need not be documented per
 * operation (but may be): those of the HTTP layer (server/http/) before
 * a handler runs (a route with a body: 400 unreadable, 413 too large, 422
 * not UTF-8; with a token: 401, 403; any: 414, 431), and the server's own
 * faults (500 E0001/E0003, 503 E0002 out of memory). */
static int generic(const srv_route *r, int st)
{
	if (r->access != SRV_ROLE_PUBLIC && (st == 401 || st == 403))
		return 1;
	if (r->body != SRV_BODY_NONE && (st == 400 || st == 413 || st == 422))
		return 1;
	return st == 414 || st == 431 || st == 500 || st == 503;
}

static int any_catalogue_status(int st)
{
	size_t i, nc;
	const enpu_code_info *tab = enpu_code_table(&nc);
	for (i = 0; i < nc; i++)
		if (tab[i].http_status == st)
			return 1;
	return 0;
}

/* Checks both ways; the count of differences, each logged unless quiet
 * (the checks below that the check notices plant them on purpose). */
static int quiet;

static int status_differences(int n)
{
	char names[64][64];
	int nh = handler_names(names, 64), i, j, f, bad = 0;

	cr_assert_eq(nh, srv_n_routes, "routes.c rows read: %d, srv_routes has %d", nh, srv_n_routes);
	load_sources();
	for (i = 0; i < srv_n_routes; i++) {
		const srv_route *r = &srv_routes[i];
		op *o = oa_find(ops, n, r);
		scan s = {.n = 0};
		if (!o)
			continue;   /* routes_and_file_are_the_same_set says so */
		for (f = 0; f < n_srcs && !s.n_seen; f++)
			scan_fn(&s, srcs[f].text, names[i]);
		cr_assert_gt(s.n_seen, 0, "handler %s of '%s %s' not found in server/routes/", names[i],
			     r->method, r->pattern);
		for (j = 0; j < s.n; j++)
			if (!oa_documents(o, s.statuses[j]) && s.statuses[j] != 500 && s.statuses[j] != 503) {
				if (!quiet)
					cr_log_error("'%s %s': %s can answer %d, which %s does not document",
						     r->method, o->shown, names[i], s.statuses[j], oa_spec_path());
				bad++;
			}
		for (j = 0; j < o->n_statuses; j++) {
			int st = o->statuses[j], k, can = 0;
			for (k = 0; k < s.n; k++)
				can |= s.statuses[k] == st;
			can |= generic(r, st) || (st == 200 && r->method[0] == 'G');
			can |= s.forwards && any_catalogue_status(st);
			if (!can) {
				if (!quiet)
					cr_log_error("%s documents %d for '%s %s', which %s never answers",
						     oa_spec_path(), st, r->method, o->shown, names[i]);
				bad++;
			}
		}
	}
	for (f = 0; f < n_srcs; f++)
		free(srcs[f].text);
	return bad;
}

Test(openapi, documented_statuses_are_the_handlers)
{
	int n = oa_load_ops(ops, MAX_OPS), bad;

	cr_assert_gt(n, 0, "cannot read '%s'", oa_spec_path());
	bad = status_differences(n);
	cr_expect_eq(bad, 0, "%d status difference(s) between the handlers and %s (listed above)", bad,
		     oa_spec_path());
}

/* The check must notice: a copy of the file without DELETE /v1/jobs/{id}'s
 * 409 (the handler's E0817), or with a 418 no handler gives, fails. */
static int differences_with(const char *from, const char *to)
{
	char tmp[] = "/tmp/enpu-openapi-XXXXXX", *t = slurp(oa_spec_path()), *p;
	int fd = mkstemp(tmp), n, bad;
	FILE *out;

	cr_assert(t && fd >= 0);
	p = strstr(t, from);
	cr_assert(p, "'%s' is not in %s", from, oa_spec_path());
	out = fdopen(fd, "w");
	fwrite(t, 1, (size_t)(p - t), out);
	fputs(to, out);
	fputs(p + strlen(from), out);
	fclose(out);
	free(t);
	setenv("ENPU_OPENAPI", tmp, 1);
	n = oa_load_ops(ops, MAX_OPS);
	quiet = 1;
	bad = status_differences(n);
	quiet = 0;
	unsetenv("ENPU_OPENAPI");
	unlink(tmp);
	return bad;
}

Test(openapi, a_wrong_status_is_noticed)
{
	int base = status_differences(oa_load_ops(ops, MAX_OPS));

	cr_assert_eq(differences_with("        \"409\":\n          description: \"the job had already finished",
				      "        \"499\":\n          description: \"the job had already finished"), base + 2,
		     "DELETE /v1/jobs/{id} documenting 499 instead of 409: two differences");
	cr_assert_eq(differences_with("  /v1/boards:\n    get:\n      security: [{bearer: [user]}]\n"
				      "      summary: the board agents this server fronts (--board NAME=URL)\n"
				      "      responses:\n",
				      "  /v1/boards:\n    get:\n      security: [{bearer: [user]}]\n"
				      "      summary: the board agents this server fronts (--board NAME=URL)\n"
				      "      responses:\n        \"418\": {description: x}\n"), base + 1,
		     "GET /v1/boards documenting a 418: one difference");
}

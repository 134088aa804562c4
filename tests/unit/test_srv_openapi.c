/* test_srv_openapi.c: the API contract. The (method, path) pairs under
 * `paths:` in proto/openapi.yaml and the rows of the route table
 * (srv_routes[], server/routes.c) must be the same set: a route the file
 * does not document, or a documented path no route serves, fails by name.
 * A route's "*" / "**" segments stand for the file's {param} segments by
 * position; HEAD is implied by GET. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <yaml.h>
#include "routes.h"

#define MAX_OPS 256

typedef struct op {
	char method[8];
	char canon[256];     /* path with every parameter segment as "*" */
	char shown[256];     /* as written, for messages */
	int seen;
} op;

static const char *const http_methods[] = {"get", "put", "post", "delete", "patch", "head", "options", "trace"};

static const char *spec_path(void)
{
	const char *p = getenv("ENPU_OPENAPI");
	return p ? p : "proto/openapi.yaml";
}

/* A parameter segment, "{sha256}" in the file or a star (one segment, or
 * the rest for a double star) in the table, becomes a lone star: both
 * spellings of the blob route come out the same. */
static void canon(const char *path, char *out, size_t cap)
{
	size_t n = 0;
	const char *s = path;

	while (*s && n + 2 < cap) {
		if (*s == '/') {
			out[n++] = *s++;
			continue;
		}
		const char *end = strchr(s, '/');
		size_t len = end ? (size_t)(end - s) : strlen(s);
		if ((s[0] == '{' && s[len - 1] == '}') || (len <= 2 && s[0] == '*' && s[len - 1] == '*')) {
			out[n++] = '*';
		} else {
			size_t k = len < cap - n - 1 ? len : cap - n - 1;
			memcpy(out + n, s, k);
			n += k;
		}
		s += len;
	}
	out[n] = '\0';
}

static yaml_node_t *map_get(yaml_document_t *d, yaml_node_t *m, const char *key)
{
	yaml_node_pair_t *p;
	if (!m || m->type != YAML_MAPPING_NODE)
		return NULL;
	for (p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(d, p->key);
		if (k && k->type == YAML_SCALAR_NODE && !strcmp((char *)k->data.scalar.value, key))
			return yaml_document_get_node(d, p->value);
	}
	return NULL;
}

static int is_method(const char *k)
{
	size_t i;
	for (i = 0; i < sizeof http_methods / sizeof http_methods[0]; i++)
		if (!strcmp(http_methods[i], k))
			return 1;
	return 0;
}

/* Every operation of the file into ops; their count, or -1 when the file
 * cannot be read or has no paths mapping. */
static int load_ops(op *ops, int max)
{
	FILE *f = fopen(spec_path(), "rb");
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_node_t *paths;
	yaml_node_pair_t *p, *q;
	int n = 0;

	if (!f)
		return -1;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_file(&parser, f);
	if (!yaml_parser_load(&parser, &doc)) {
		yaml_parser_delete(&parser);
		fclose(f);
		return -1;
	}
	paths = map_get(&doc, yaml_document_get_root_node(&doc), "paths");
	if (!paths || paths->type != YAML_MAPPING_NODE) {
		n = -1;
		goto out;
	}
	for (p = paths->data.mapping.pairs.start; p < paths->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(&doc, p->key);
		yaml_node_t *item = yaml_document_get_node(&doc, p->value);
		if (!k || k->type != YAML_SCALAR_NODE || !item || item->type != YAML_MAPPING_NODE)
			continue;
		for (q = item->data.mapping.pairs.start; q < item->data.mapping.pairs.top; q++) {
			yaml_node_t *mk = yaml_document_get_node(&doc, q->key);
			const char *m;
			if (!mk || mk->type != YAML_SCALAR_NODE)
				continue;
			m = (const char *)mk->data.scalar.value;
			if (!is_method(m) || n >= max)
				continue;
			snprintf(ops[n].method, sizeof ops[n].method, "%s", m);
			snprintf(ops[n].shown, sizeof ops[n].shown, "%s", (char *)k->data.scalar.value);
			canon(ops[n].shown, ops[n].canon, sizeof ops[n].canon);
			ops[n].seen = 0;
			n++;
		}
	}
out:
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	fclose(f);
	return n;
}

static op ops[MAX_OPS];

/* Routes of the table that none of the n operations documents. */
static int undocumented(int n)
{
	int i, j, missing = 0;
	char c[256];

	for (i = 0; i < srv_n_routes; i++) {
		int found = 0;
		canon(srv_routes[i].pattern, c, sizeof c);
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
	canon("/v1/artifacts/{id}/files/{path}", a, sizeof a);
	canon("/v1/artifacts/*/files/**", b, sizeof b);
	cr_assert_str_eq(a, "/v1/artifacts/*/files/*");
	cr_assert_str_eq(a, b);
	canon("/v1/jobs", a, sizeof a);
	cr_assert_str_eq(a, "/v1/jobs");
}

Test(openapi, file_parses_and_has_paths)
{
	int n = load_ops(ops, MAX_OPS);
	cr_assert_gt(n, 10, "'%s' has no readable paths: (got %d operations)", spec_path(), n);
	cr_assert_lt(n, MAX_OPS, "raise MAX_OPS");
}

Test(openapi, routes_and_file_are_the_same_set)
{
	int n = load_ops(ops, MAX_OPS), i, j, bad = 0;
	char c[256];

	cr_assert_gt(n, 0, "cannot read '%s'", spec_path());
	/* route -> file */
	for (i = 0; i < srv_n_routes; i++) {
		int found = 0;
		canon(srv_routes[i].pattern, c, sizeof c);
		for (j = 0; j < n; j++)
			if (!strcasecmp(ops[j].method, srv_routes[i].method) && !strcmp(ops[j].canon, c)) {
				ops[j].seen = 1;
				found = 1;
			}
		if (!found) {
			cr_log_error("route '%s %s' (server/routes.c) is not in %s", srv_routes[i].method,
				     srv_routes[i].pattern, spec_path());
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
			cr_log_error("%s documents '%s %s' but no route serves it (server/routes.c)",
				     spec_path(), ops[j].method, ops[j].shown);
			bad++;
		}
	}
	cr_expect_eq(bad, 0, "%d difference(s) between the route table and %s (listed above)", bad,
		     spec_path());
}

/* The checker must notice a difference, or passing proves nothing: a
 * copy of the file without one of its paths fails the comparison. */
Test(openapi, a_missing_path_is_noticed)
{
	char tmp[] = "/tmp/enpu-openapi-XXXXXX";
	FILE *in = fopen(spec_path(), "rb"), *out;
	char line[4096];
	int fd = mkstemp(tmp), skipping = 0, n, base;

	cr_assert(in && fd >= 0);
	base = undocumented(load_ops(ops, MAX_OPS));
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
	n = load_ops(ops, MAX_OPS);
	unsetenv("ENPU_OPENAPI");
	unlink(tmp);
	cr_assert_gt(n, 0);
	cr_assert_eq(undocumented(n), base + 1, "dropping /v1/compare from the file: %d route(s) "
		     "undocumented, %d before", undocumented(n), base);
}

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
#include "openapi_ops.h"

#define MAX_OPS OA_MAX_OPS

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

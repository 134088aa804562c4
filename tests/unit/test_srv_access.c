/* test_srv_access.c: who may call each route. proto/openapi.yaml declares
 * a role per operation (`security: []` public, `[{bearer: [user]}]`,
 * `[{bearer: [admin]}]`); the route table's access column (srv_routes[],
 * server/routes/routes.c) must say the same, and the real HTTP layer must enforce
 * it. Three checks, each naming the route that breaks it:
 *  - every operation of the file declares a role, and every row of the
 *    table has the role the file gives its operation;
 *  - an in-process daemon on 127.0.0.1 (port 0) with a --tokens file of one
 *    user and one admin token is called on every row of the table with no
 *    token, a wrong one, the user's and the admin's; the expected answer
 *    comes from the file, never from the table, so a route made public (or
 *    user-level) in routes.c fails here too. A 401 must be E0814 with
 *    "WWW-Authenticate: Bearer";
 *  - the comparison notices a flipped row of a copy of the table, and an
 *    operation whose security line was dropped from a copy of the file.
 * TODO(owners): refusing another user's job (403/404 on GET/DELETE
 * /v1/jobs/{id}...) once jobs have owners; nothing to test before then. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <curl/curl.h>
#include <json-c/json.h>
#include "srv.h"
#include "http.h"
#include "cas.h"
#include "models.h"
#include "jobs.h"
#include "boards.h"
#include "artifact.h"
#include "metrics.h"
#include "routes.h"
#include "openapi_ops.h"

#define TOKEN_USER   "acc-user-7f3e9a1c2b"
#define TOKEN_ADMIN  "acc-admin-5d8b0e4f6a"
#define TOKEN_WRONG  "acc-wrong-0000000000"
/* Plausible values for a route's "*" segments: a digest (not the empty
 * blob's: a PUT of an empty body must not store it) and a job id. */
#define FILL_DIGEST  "5f2b9c1e7a4d3086b1e6c9a2f4d7083e5b1c6a9f2e4d7b0c3a8f1e6d9b2c5a7f"
#define FILL_JOB     "0123456789abcdef0123456789abcdef"
#define FILL_FILE    "manifest.json"
#define REQ_TIMEOUT  20L   /* seconds, one request (a bound, not a check) */

/* ---- the file against the table ---------------------------------------------- */

static op ops[OA_MAX_OPS];

/* Rows of routes[] whose access differs from the role the file declares
 * for their operation (or that the file does not document), each logged
 * by name when loud. */
static int access_mismatches(const srv_route *routes, int n_routes, op *o, int n, int loud)
{
	int i, bad = 0;

	for (i = 0; i < n_routes; i++) {
		const op *d = oa_find(o, n, &routes[i]);
		if (!d) {
			if (loud)
				cr_log_error("route '%s %s' (server/routes/routes.c) is not in %s", routes[i].method,
					     routes[i].pattern, oa_spec_path());
			bad++;
		} else if (d->role != (int)routes[i].access) {
			if (loud)
				cr_log_error("route '%s %s': server/routes/routes.c says %s, %s says %s (%s %s: "
					     "security %s)", routes[i].method, routes[i].pattern,
					     oa_role_name((int)routes[i].access), oa_spec_path(),
					     oa_role_name(d->role), d->method, d->shown, d->role_text);
			bad++;
		}
	}
	return bad;
}

/* Operations of the file without a readable role, each logged when loud. */
static int undeclared(const op *o, int n, int loud)
{
	int j, bad = 0;

	for (j = 0; j < n; j++)
		if (o[j].role < 0) {
			if (loud)
				cr_log_error("%s: '%s %s' declares no role: security %s (want [], "
					     "[{bearer: [user]}] or [{bearer: [admin]}])", oa_spec_path(),
					     o[j].method, o[j].shown, o[j].role_text);
			bad++;
		}
	return bad;
}

Test(access, every_operation_declares_a_role)
{
	int n = oa_load_ops(ops, OA_MAX_OPS), bad;

	cr_assert_gt(n, 10, "'%s' has no readable paths (got %d operations)", oa_spec_path(), n);
	bad = undeclared(ops, n, 1);
	cr_expect_eq(bad, 0, "%d operation(s) of %s without a role (listed above)", bad, oa_spec_path());
}

Test(access, table_and_file_agree)
{
	int n = oa_load_ops(ops, OA_MAX_OPS), bad;

	cr_assert_gt(n, 10, "cannot read '%s'", oa_spec_path());
	bad = access_mismatches(srv_routes, srv_n_routes, ops, n, 1);
	cr_expect_eq(bad, 0, "%d route(s) whose access column disagrees with %s (listed above)", bad,
		     oa_spec_path());
}

/* Passing proves nothing unless a difference fails: in a copy of the
 * table, GET /v1/jobs/{id}/result made public (or admin), then an admin
 * route made user-level, each add one mismatch. Counted from a copy where
 * those rows agree with the file, so this holds whatever the real table
 * says (table_and_file_agree judges that). */
Test(access, a_flipped_row_is_noticed)
{
	srv_route copy[128];
	int n = oa_load_ops(ops, OA_MAX_OPS), i, result = -1, admin = -1, base;
	const op *d;

	cr_assert_gt(n, 10);
	cr_assert_leq(srv_n_routes, 128);
	memcpy(copy, srv_routes, (size_t)srv_n_routes * sizeof copy[0]);
	for (i = 0; i < srv_n_routes; i++) {
		if (!strcmp(copy[i].method, "DELETE") && !strcmp(copy[i].pattern, API_CACHE_ENTRIES "/*"))
			admin = i;
		if (!strcmp(copy[i].method, "GET") && !strcmp(copy[i].pattern, API_JOBS "/*" API_JOB_RESULT))
			result = i;
	}
	cr_assert(result >= 0 && admin >= 0, "no GET /v1/jobs/*/result or DELETE /v1/cache/entries/* row");
	d = oa_find(ops, n, &copy[result]);
	cr_assert(d && d->role == SRV_ROLE_USER, "the file must say user for GET /v1/jobs/{id}/result");
	copy[result].access = SRV_ROLE_USER;
	d = oa_find(ops, n, &copy[admin]);
	cr_assert(d && d->role == SRV_ROLE_ADMIN, "the file must say admin for DELETE /v1/cache/entries/{id}");
	copy[admin].access = SRV_ROLE_ADMIN;
	base = access_mismatches(copy, srv_n_routes, ops, n, 0);

	copy[result].access = SRV_ROLE_PUBLIC;
	cr_expect_eq(access_mismatches(copy, srv_n_routes, ops, n, 0), base + 1,
		     "the result route made public in a copy of the table went unnoticed");
	copy[result].access = SRV_ROLE_ADMIN;
	cr_expect_eq(access_mismatches(copy, srv_n_routes, ops, n, 0), base + 1);
	copy[admin].access = SRV_ROLE_USER;
	cr_expect_eq(access_mismatches(copy, srv_n_routes, ops, n, 0), base + 2,
		     "an admin route made user-level in a copy of the table went unnoticed");
}

/* A copy of the file with the security line of POST /v1/cache/gc dropped:
 * that operation declares nothing, and its route disagrees. */
Test(access, a_dropped_declaration_is_noticed)
{
	char tmp[] = "/tmp/enpu-access-XXXXXX";
	FILE *in = fopen(oa_spec_path(), "rb"), *out;
	char line[4096];
	int fd = mkstemp(tmp), in_gc = 0, dropped = 0, n, base_undeclared, base_mismatches;

	cr_assert(in && fd >= 0);
	n = oa_load_ops(ops, OA_MAX_OPS);
	cr_assert_gt(n, 10);
	base_undeclared = undeclared(ops, n, 0);
	base_mismatches = access_mismatches(srv_routes, srv_n_routes, ops, n, 0);
	out = fdopen(fd, "w");
	cr_assert(out);
	while (fgets(line, sizeof line, in)) {
		if (!strncmp(line, "  /", 3))
			in_gc = !strncmp(line, "  /v1/cache/gc:", 15);
		if (in_gc && strstr(line, "security:")) {
			dropped++;
			continue;
		}
		fputs(line, out);
	}
	fclose(in);
	fclose(out);
	setenv("ENPU_OPENAPI", tmp, 1);
	n = oa_load_ops(ops, OA_MAX_OPS);
	unsetenv("ENPU_OPENAPI");
	unlink(tmp);
	cr_assert_eq(dropped, 1, "expected one security line under /v1/cache/gc, found %d", dropped);
	cr_assert_gt(n, 10);
	cr_expect_eq(undeclared(ops, n, 0), base_undeclared + 1);
	cr_expect_eq(access_mismatches(srv_routes, srv_n_routes, ops, n, 0), base_mismatches + 1);
}

/* ---- the routes over TCP --------------------------------------------------------- */

static srv_ctx ctx;
static struct MHD_Daemon *mhd;
static int port;
static char tmp_dir[256], cache_dir[300], tokens_path[300], log_path[300];

static void enforce_cb(void *arg)
{
	srv_cache_enforce(arg);
}

/* Undo whatever start_daemon did, in any state it left (also after a
 * failed assertion: criterion runs a suite's fini then). */
static void stop_daemon(void)
{
	int s, i;

	if (mhd) {
		ctx.stopping = 1;
		ctx.draining = 1;
		s = srv_http_quiesce(mhd);
		if (s >= 0)
			close(s);
		if (ctx.jobs)
			srv_jobs_shutdown(ctx.jobs);
		for (i = 0; i < 50 && srv_http_active() > 0; i++)
			usleep(100000);
		srv_http_stop(mhd);
		mhd = NULL;
	} else if (ctx.jobs) {
		srv_jobs_shutdown(ctx.jobs);
	}
	srv_boards_free(ctx.boards);
	ctx.boards = NULL;
	srv_jobs_free(ctx.jobs);
	ctx.jobs = NULL;
	srv_models_close(ctx.models);
	ctx.models = NULL;
	srv_cas_close(ctx.cas);
	ctx.cas = NULL;
	srv_auth_shutdown(&ctx);
	srv_artifact_cache_clear();
	curl_global_cleanup();
	srv_log_close();
	if (tmp_dir[0])
		srv_rmtree(tmp_dir);
	tmp_dir[0] = '\0';
}

static void start_daemon(void)
{
	const char *base = getenv("TMPDIR");
	enpu_err e = ENPU_ERR_INIT;
	struct sockaddr_in sa;
	socklen_t len = sizeof sa;
	FILE *f;
	int fd;

	memset(&ctx, 0, sizeof ctx);
	snprintf(tmp_dir, sizeof tmp_dir, "%.200s/enpu-access.XXXXXX", base && *base ? base : "/tmp");
	cr_assert_not_null(mkdtemp(tmp_dir), "mkdtemp: %s", strerror(errno));
	snprintf(cache_dir, sizeof cache_dir, "%s/cache", tmp_dir);
	snprintf(tokens_path, sizeof tokens_path, "%s/tokens", tmp_dir);
	snprintf(log_path, sizeof log_path, "%s/eulernpud.log", tmp_dir);

	/* the daemon logs to a file of its own, never to the caller's stderr */
	cr_assert_eq(srv_log_open(log_path), 0);
	srv_log_set_level("error");
	curl_global_init(CURL_GLOBAL_DEFAULT);

	fd = open(tokens_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	cr_assert_geq(fd, 0, "%s: %s", tokens_path, strerror(errno));
	f = fdopen(fd, "w");
	cr_assert_not_null(f);
	fprintf(f, "# test_srv_access\n%s user alice\n%s admin root\n", TOKEN_USER, TOKEN_ADMIN);
	cr_assert_eq(fclose(f), 0);

	srv_config_defaults(&ctx.cfg);
	ctx.cfg.cache_dir = cache_dir;
	ctx.cfg.socket_path = NULL;
	ctx.cfg.listen = "127.0.0.1:0";
	ctx.cfg.tokens_file = tokens_path;
	ctx.cfg.workers = 1;
	ctx.cfg.conn_timeout = 10;
	ctx.cfg.request_timeout = 10;
	ctx.lim = &ctx.cfg.limits;
	cr_assert_eq(srv_auth_load(&ctx, &e), 0, "--tokens: %s", e.message);
	cr_assert_eq(srv_auth_count(ctx.auth), 2);

	ctx.cas = srv_cas_open(cache_dir, &e);
	cr_assert_not_null(ctx.cas, "%s", e.message);
	ctx.models = srv_models_open(ctx.cas, &e);
	cr_assert_not_null(ctx.models, "%s", e.message);
	ctx.jobs = srv_jobs_start(ctx.cas, ctx.lim, ctx.cfg.workers, ctx.cfg.threads,
				  ctx.cfg.max_queue, &e);
	cr_assert_not_null(ctx.jobs, "%s", e.message);
	srv_jobs_on_store(ctx.jobs, enforce_cb, &ctx);
	ctx.obs = srv_metrics_observer();   /* as the daemon: requests are counted and logged */
	srv_jobs_set_observer(ctx.jobs, ctx.obs);
	srv_jobs_set_policy(ctx.jobs, ctx.cfg.job_timeout, ctx.cfg.job_ttl, ctx.cfg.job_history);
	ctx.boards = srv_boards_start(&ctx, &e);
	cr_assert_not_null(ctx.boards, "%s", e.message);

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(fd, 0);
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = 0;
	if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 64) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
		close(fd);
		cr_assert_fail("cannot listen on 127.0.0.1: %s", strerror(errno));
	}
	port = ntohs(sa.sin_port);
	mhd = srv_http_start(&ctx, fd);
	if (!mhd) {
		close(fd);
		cr_assert_fail("srv_http_start failed (log: %s)", log_path);
	}
}

typedef struct reply {
	long status;
	char body[4096];
	size_t body_len;
	int www_bearer;   /* a WWW-Authenticate: Bearer header came */
	int stream;       /* an event stream: its first bytes say enough */
} reply;

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
	reply *r = arg;
	size_t k = size * n, room = sizeof r->body - 1 - r->body_len;

	memcpy(r->body + r->body_len, p, k < room ? k : room);
	r->body_len += k < room ? k : room;
	r->body[r->body_len] = '\0';
	return r->stream ? 0 : size * n;   /* a stream answered: stop it (not an error) */
}

static size_t on_header(char *p, size_t size, size_t n, void *arg)
{
	reply *r = arg;
	size_t k = size * n;
	static const char name[] = "WWW-Authenticate:";

	if (k > 13 && !strncasecmp(p, "Content-Type:", 13) && strstr(p, "text/event-stream"))
		r->stream = 1;
	if (k > sizeof name && !strncasecmp(p, name, sizeof name - 1)) {
		const char *v = p + sizeof name - 1;
		while (*v == ' ' || *v == '\t')
			v++;
		if (!strncasecmp(v, "Bearer", 6))
			r->www_bearer = 1;
	}
	return k;
}

/* The route's pattern with each "*" filled: a job id after /v1/jobs/, a
 * digest elsewhere; "**" a file name. */
static void fill(const char *pattern, char *url, size_t cap)
{
	size_t n = (size_t)snprintf(url, cap, "http://127.0.0.1:%d", port);
	const char *s;

	for (s = pattern; *s && n + 1 < cap; s++) {
		const char *v = NULL;
		if (s[0] == '*' && s[1] == '*') {
			v = FILL_FILE;
			s++;
		} else if (s[0] == '*') {
			v = !strncmp(pattern, API_JOBS "/", strlen(API_JOBS "/")) ? FILL_JOB : FILL_DIGEST;
		}
		if (v)
			n += (size_t)snprintf(url + n, cap - n, "%s", v);
		else
			url[n++] = *s;
		if (n >= cap)
			n = cap - 1;
	}
	url[n] = '\0';
}

/* One request on route rt with the given token (NULL: no header). POST
 * and PUT send "{}" as JSON: the decision comes before any body is read,
 * and a handler that does run answers it with a 4xx of its own. */
static void call(const srv_route *rt, const char *token, reply *r)
{
	CURL *c = curl_easy_init();
	struct curl_slist *h = NULL;
	char url[512], auth[128];
	CURLcode rc;

	memset(r, 0, sizeof *r);
	cr_assert_not_null(c);
	fill(rt->pattern, url, sizeof url);
	if (token) {
		snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
		h = curl_slist_append(h, auth);
	}
	if (!strcmp(rt->method, "POST") || !strcmp(rt->method, "PUT")) {
		h = curl_slist_append(h, "Content-Type: application/json");
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, "{}");
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, rt->method);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, REQ_TIMEOUT);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, REQ_TIMEOUT);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
	rc = curl_easy_perform(c);
	if (rc == CURLE_WRITE_ERROR && r->stream)
		rc = CURLE_OK;
	if (rc == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	cr_assert_eq(rc, CURLE_OK, "%s %s: %s", rt->method, url, curl_easy_strerror(rc));
}

/* The error code of a JSON error body, or "" */
static void error_code(const char *body, char *code, size_t cap)
{
	json_object *j = json_tokener_parse(body), *err, *c;

	code[0] = '\0';
	/* {"error": {"code"}}, or under /v2 the protocol's {"error": "...", "code"} */
	if (j && json_object_object_get_ex(j, "error", &err) &&
	    json_object_object_get_ex(json_object_is_type(err, json_type_string) ? j : err, "code",
				      &c) && json_object_is_type(c, json_type_string))
		snprintf(code, cap, "%s", json_object_get_string(c));
	json_object_put(j);
}

/* The checks of one answer; the number of failures (each logged). */
static int check(const srv_route *rt, int role, const char *who, const reply *r, long want)
{
	char code[16];
	int bad = 0;

	if (want == 200 ? (r->status == 401 || r->status == 403) : r->status != want) {
		cr_log_error("%s %s (%s in %s) with %s: got %ld, want %s", rt->method, rt->pattern,
			     oa_role_name(role), oa_spec_path(), who, r->status,
			     want == 401 ? "401" : want == 403 ? "403" : "neither 401 nor 403");
		bad++;
	}
	if (r->status == 401) {
		error_code(r->body, code, sizeof code);
		if (strcmp(code, "E0814")) {
			cr_log_error("%s %s with %s: 401 with error code '%s', want E0814 (body: %.200s)",
				     rt->method, rt->pattern, who, code, r->body);
			bad++;
		}
		if (!r->www_bearer) {
			cr_log_error("%s %s with %s: 401 without 'WWW-Authenticate: Bearer'", rt->method,
				     rt->pattern, who);
			bad++;
		}
	}
	if (r->status == 403) {
		error_code(r->body, code, sizeof code);
		if (strcmp(code, "E0815")) {
			cr_log_error("%s %s with %s: 403 with error code '%s', want E0815 (body: %.200s)",
				     rt->method, rt->pattern, who, code, r->body);
			bad++;
		}
	}
	return bad;
}

TestSuite(access_http, .init = start_daemon, .fini = stop_daemon, .timeout = 300);

Test(access_http, every_route_with_every_token)
{
	static const struct { const char *who, *token; } callers[] = {
		{"no token", NULL},
		{"a wrong token", TOKEN_WRONG},
		{"the user token", TOKEN_USER},
		{"the admin token", TOKEN_ADMIN},
	};
	/* want[role][caller]: 401 / 403, or 200 for "neither 401 nor 403" */
	static const long want[3][4] = {
		[SRV_ROLE_PUBLIC] = {200, 200, 200, 200},
		[SRV_ROLE_USER] = {401, 401, 200, 200},
		[SRV_ROLE_ADMIN] = {401, 401, 403, 200},
	};
	int n = oa_load_ops(ops, OA_MAX_OPS), i, k, bad = 0, calls = 0;
	reply r;

	cr_assert_gt(n, 10, "cannot read '%s'", oa_spec_path());
	for (i = 0; i < srv_n_routes; i++) {
		const srv_route *rt = &srv_routes[i];
		const op *d = oa_find(ops, n, rt);   /* the file says who, not the table */
		if (!d || d->role < 0) {
			cr_log_error("%s %s: %s declares no role for it", rt->method, rt->pattern,
				     oa_spec_path());
			bad++;
			continue;
		}
		for (k = 0; k < 4; k++) {
			call(rt, callers[k].token, &r);
			bad += check(rt, d->role, callers[k].who, &r, want[d->role][k]);
			calls++;
		}
	}
	cr_expect_eq(calls, 4 * srv_n_routes);
	cr_expect_eq(bad, 0, "%d access failure(s) over %d routes (listed above)", bad, srv_n_routes);
}

/* A header that is no token at all does not make health refuse. */
Test(access_http, health_is_public_even_with_a_bad_header)
{
	srv_route health = {"GET", API_HEALTH, SRV_BODY_NONE, NULL, SRV_ROLE_PUBLIC, SRV_ON_LOOP};
	reply r;

	call(&health, "not a token at all", &r);
	cr_expect_eq(r.status, 200, "GET /v1/health with a bad token: %ld", r.status);
}

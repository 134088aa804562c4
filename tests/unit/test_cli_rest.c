/* test_cli_rest.c: the client's REST layer (client/rest.c) against a small
 * libmicrohttpd server on a free port that gives canned answers: JSON
 * errors become the catalogue's codes, garbage becomes E0809, downloads are
 * verified before they replace anything, an absent server is E0808; 429 and
 * 503 are retried (Retry-After honoured, counted, never timed) for requests
 * safe to send again, and what a retry can fix exits 3, trust and tokens 2;
 * every request carries the process's session header. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <microhttpd.h>
#include "cli.h"
#include "rest.h"
#include "buf.h"
#include "digest.h"

static struct MHD_Daemon *d;
static char url[64];
static int n_busy, n_full;   /* requests to /busy and /full */

/* /busy: 503 (Retry-After: 1) twice, then 200; /full: 429 always. */
static enum MHD_Result busy_answer(struct MHD_Connection *c, const char *u)
{
	static const char ok[] = "{\"a\":2}";
	static const char full[] = "{\"error\":{\"code\":\"E0806\",\"message\":\"full\"}}";
	int busy = !strcmp(u, "/busy") ? n_busy++ < 2 : (n_full++, 1);
	const char *body = !busy ? ok : full;
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), (void *)body,
								 MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (busy)
		MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "1");
	ret = MHD_queue_response(c, !busy ? 200 : !strcmp(u, "/busy") ? 503 : 429, r);
	MHD_destroy_response(r);
	return ret;
}

/* /later/V: 503 with Retry-After: V ("date+N": an HTTP date N s ahead). */
static enum MHD_Result later_answer(struct MHD_Connection *c, const char *v)
{
	static const char body[] = "{\"error\":{\"code\":\"E0808\",\"message\":\"busy\"}}";
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), (void *)body,
								 MHD_RESPMEM_PERSISTENT);
	char date[64];
	enum MHD_Result ret;

	if (!strncmp(v, "date+", 5)) {
		time_t t = time(NULL) + atoi(v + 5);

		strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", gmtime(&t));
		v = date;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, v);
	ret = MHD_queue_response(c, 503, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *u,
			      const char *method, const char *version, const char *data,
			      size_t *size, void **req_cls)
{
	static const struct { const char *path; unsigned status; const char *body; } canned[] = {
		{"/v1/health", 200, "{\"status\":\"ok\"}"},
		{"/json", 200, "{\"a\":1}"},
		{"/notobj", 200, "[1]"},
		{"/garbage", 500, "oops"},
		{"/gateway", 504, "<html>gateway timeout</html>"},
		{"/err", 422, "{\"error\":{\"code\":\"E0301\",\"message\":\"m\",\"where\":\"w\",\"fix\":\"f\"}}"},
		{"/file", 200, "hello"},
	};
	struct MHD_Response *r;
	enum MHD_Result ret;
	unsigned status = 404;
	const char *body = "{\"error\":{\"code\":\"E0800\",\"message\":\"no route\"}}";

	(void)cls; (void)method; (void)version; (void)data;
	if (*req_cls == NULL) {     /* first call: headers only */
		*req_cls = (void *)1;
		return MHD_YES;
	}
	*size = 0;
	if (!strcmp(u, "/busy") || !strcmp(u, "/full"))
		return busy_answer(c, u);
	if (!strncmp(u, "/later/", 7))
		return later_answer(c, u + 7);
	if (!strcmp(u, "/session")) {   /* {"s": the session header, or null} */
		const char *v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Eulernpu-Session");
		char echo[128];

		snprintf(echo, sizeof echo, v ? "{\"s\":\"%.64s\"}" : "{\"s\":null}", v);
		r = MHD_create_response_from_buffer(strlen(echo), echo, MHD_RESPMEM_MUST_COPY);
		ret = MHD_queue_response(c, 200, r);
		MHD_destroy_response(r);
		return ret;
	}
	for (size_t i = 0; i < sizeof canned / sizeof canned[0]; i++)
		if (strcmp(u, canned[i].path) == 0) {
			status = canned[i].status;
			body = canned[i].body;
		}
	r = MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_PERSISTENT);
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static void setup(void)
{
	const union MHD_DaemonInfo *info;

	d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, answer, NULL,
			     MHD_OPTION_END);
	cr_assert_not_null(d);
	info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	cr_assert_not_null(info);
	snprintf(url, sizeof url, "http://127.0.0.1:%u", (unsigned)info->port);
}

static void teardown(void)
{
	MHD_stop_daemon(d);
}

TestSuite(cli_rest, .init = setup, .fini = teardown);

Test(cli_rest, json_ok_and_not_an_object)
{
	enpu_err e = ENPU_ERR_INIT;
	cli_conn *c = cli_conn_new(url, &e);
	struct json_object *o = NULL;
	long long a = 0;

	cr_assert_not_null(c);
	cr_assert_eq(cli_http_health(c, &e), 0);
	cr_assert_eq(cli_http_json(c, "GET", "/json", NULL, 10, &o, NULL, NULL, &e), 0);
	cr_assert_eq(cli_json_int(o, "a", &a), 0);
	cr_assert_eq(a, 1);
	json_object_put(o);
	cr_assert_eq(cli_http_json(c, "GET", "/notobj", NULL, 10, &o, NULL, NULL, &e), -1);
	cr_assert_eq(e.code, ENPU_E_SERVER);
	cr_assert_null(o);
	cli_conn_free(c);
}

/* Every TCP request of the process carries one session (a balancer keeps
 * the process on one node): 16 hex digits, the same on two connections. */
Test(cli_rest, one_session_header_per_process)
{
	enpu_err e = ENPU_ERR_INIT;
	cli_conn *c1 = cli_conn_new(url, &e), *c2 = cli_conn_new(url, &e);
	struct json_object *o1 = NULL, *o2 = NULL;
	const char *s1, *s2;

	cr_assert(c1 && c2);
	cr_assert_eq(cli_http_json(c1, "GET", "/session", NULL, 10, &o1, NULL, NULL, &e), 0);
	cr_assert_eq(cli_http_json(c2, "GET", "/session", NULL, 10, &o2, NULL, NULL, &e), 0);
	s1 = cli_json_str(o1, "s");
	s2 = cli_json_str(o2, "s");
	cr_assert_not_null(s1, "no X-Eulernpu-Session header");
	cr_assert_eq(strlen(s1), 16, "'%s'", s1);
	cr_assert_eq(strspn(s1, "0123456789abcdef"), 16, "'%s'", s1);
	cr_assert_str_eq(s1, s2 ? s2 : "", "two connections of one process, one session");
	json_object_put(o1);
	json_object_put(o2);
	cli_conn_free(c1);
	cli_conn_free(c2);
}

Test(cli_rest, errors_from_the_server)
{
	enpu_err e = ENPU_ERR_INIT;
	cli_conn *c = cli_conn_new(url, &e);
	struct json_object *o = NULL;
	long st = 0;

	cr_assert_eq(cli_http_json(c, "POST", "/err", NULL, 10, &o, &st, NULL, &e), -1);
	cr_assert_eq(st, 422);
	cr_assert_eq(e.code, ENPU_E_WEIGHT_SHAPE);
	cr_assert_str_eq(e.where, "w");
	cr_assert_str_eq(e.fix, "f");
	cr_assert_eq(cli_http_json(c, "GET", "/garbage", NULL, 10, &o, &st, NULL, &e), -1);
	cr_assert_eq(st, 500);
	cr_assert_eq(e.code, ENPU_E_SERVER);
	cr_assert_eq(enpu_code_info_of(e.code)->exit_code, 2, "a retry cannot fix it");
	/* a gateway's 502/503/504 page: the server is away, try later */
	enpu_rest_set_retry(c, 0, 0, NULL);
	cr_assert_eq(cli_http_json(c, "GET", "/gateway", NULL, 10, &o, &st, NULL, &e), -1);
	cr_assert_eq(st, 504);
	cr_assert_eq(e.code, ENPU_E_UNREACHABLE);
	cr_assert_eq(enpu_code_info_of(e.code)->exit_code, 3);
	cr_assert_eq(cli_http_json(c, "GET", "/nowhere", NULL, 10, &o, &st, NULL, &e), -1);
	cr_assert_eq(e.code, ENPU_E_NOT_FOUND);
	cli_conn_free(c);
}

Test(cli_rest, download_is_verified_and_atomic)
{
	enpu_err e = ENPU_ERR_INIT;
	cli_conn *c = cli_conn_new(url, &e);
	char dir[] = "/tmp/cli_rest.XXXXXX", dest[64], good[65];
	enpu_buf b = ENPU_BUF_INIT;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(dest, sizeof dest, "%s/f.bin", dir);
	enpu_sha256_hex("hello", 5, good);
	cr_assert_eq(enpu_write_file_atomic(dest, "old", 3, &e), 0);
	/* A wrong digest leaves the old file alone, and no temporary behind. */
	cr_assert_eq(cli_http_download(c, "/file", dest, "00000000000000000000000000000000"
				       "00000000000000000000000000000000", 10, &e), -1);
	cr_assert_eq(e.code, ENPU_E_ARTIFACT_DIGEST);
	cr_assert_eq(enpu_read_file(dest, 0, &b, &e), 0);
	cr_assert_str_eq(b.data, "old");
	/* An error answer leaves it alone too. */
	cr_assert_eq(cli_http_download(c, "/err", dest, NULL, 10, &e), -1);
	cr_assert_eq(e.code, ENPU_E_WEIGHT_SHAPE);
	cr_assert_eq(cli_http_download(c, "/file", dest, good, 10, &e), 0);
	enpu_buf_reset(&b);
	cr_assert_eq(enpu_read_file(dest, 0, &b, &e), 0);
	cr_assert_str_eq(b.data, "hello");
	enpu_buf_free(&b);
	unlink(dest);
	cr_assert_eq(rmdir(dir), 0, "a temporary file was left in %s", dir);
	cli_conn_free(c);
}

Test(cli_rest, unreachable_is_exit_3)
{
	enpu_err e = ENPU_ERR_INIT;
	cli_conn *c = cli_conn_new("unix:/nonexistent/eulernpu-test.sock", &e);
	struct json_object *o = NULL;

	cr_assert_not_null(c);
	cr_assert_eq(cli_http_json(c, "GET", "/v1/health", NULL, 5, &o, NULL, NULL, &e), -1);
	cr_assert_eq(e.code, ENPU_E_UNREACHABLE);
	cr_assert_str_eq(e.where, "unix:/nonexistent/eulernpu-test.sock");
	cr_assert_eq(enpu_code_info_of(e.code)->exit_code, 3);
	cli_conn_free(c);
}

static int notes;   /* retries heard by count_note */

Test(cli_rest, retries_429_and_503_then_succeeds)
{
	enpu_err e = ENPU_ERR_INIT;
	cli_conn *c;
	struct json_object *o = NULL;
	long long a = 0;
	long st = 0;

	cli_rest_retry(3, 60, 1);
	c = cli_conn_new(url, &e);
	n_busy = 0;
	cr_assert_eq(cli_http_json(c, "GET", "/busy", NULL, 10, &o, &st, NULL, &e), 0, "%s",
		     e.message);
	cr_assert_eq(st, 200);
	cr_assert_eq(n_busy, 3, "two 503 answers retried, then the answer");
	cr_assert_eq(cli_json_int(o, "a", &a), 0);
	cr_assert_eq(a, 2);
	json_object_put(o);
	cli_conn_free(c);
}

static int count_note(void *ud, const enpu_rest_req *q, long status, long wait_s, int n, int max)
{
	(void)ud; (void)q;
	cr_expect_eq(status, 429);
	cr_expect_eq(wait_s, 1, "Retry-After: 1");
	cr_expect_eq(n, ++notes);
	cr_expect_eq(max, 1);
	return 0;
}

Test(cli_rest, queue_full_exits_3_after_the_retries)
{
	enpu_err e = ENPU_ERR_INIT;
	cli_conn *c = cli_conn_new(url, &e);
	struct json_object *o = NULL;

	enpu_rest_set_retry(c, 1, 60, count_note);
	n_full = notes = 0;
	cr_assert_eq(cli_http_json(c, "GET", "/full", NULL, 10, &o, NULL, NULL, &e), -1);
	cr_assert_eq(n_full, 2, "one retry");
	cr_assert_eq(notes, 1);
	cr_assert_eq(e.code, ENPU_E_QUEUE_FULL);
	cr_assert_eq(enpu_code_info_of(e.code)->exit_code, 3);
	/* a POST that is not a submission is never sent twice */
	n_full = 0;
	cr_assert_eq(cli_http_json(c, "POST", "/full", NULL, 10, &o, NULL, NULL, &e), -1);
	cr_assert_eq(n_full, 1);
	/* no retries: one request */
	enpu_rest_set_retry(c, 0, 0, NULL);
	n_full = 0;
	cr_assert_eq(cli_http_json(c, "GET", "/full", NULL, 10, &o, NULL, NULL, &e), -1);
	cr_assert_eq(n_full, 1);
	cli_conn_free(c);
}

Test(cli_rest, which_requests_are_retried)
{
	static const struct { const char *m, *p; int safe; } t[] = {
		{"GET", "/v1/jobs/abc?wait=60", 1}, {"PUT", "/v1/blobs/x", 1},
		{"DELETE", "/v1/jobs/abc", 1}, {"HEAD", "/v1/health", 1},
		{"POST", "/v1/jobs", 1}, {"POST", "/v1/jobs?wait=0", 1},
		{"POST", "/v1/compile", 1}, {"POST", "/v1/blobs/missing", 1},
		{"POST", "/v1/validate", 0}, {"POST", "/v1/compare", 0},
		{"POST", "/v1/cache/gc", 0}, {"POST", "/v1/jobsx", 0},
		{"POST", "/v1/jobs/abc", 0}, {"PATCH", "/v1/jobs", 0},
	};

	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		enpu_rest_req q = {0};

		q.method = t[i].m;
		q.path = t[i].p;
		cr_expect_eq(enpu_rest_retry_safe(&q), t[i].safe, "%s %s", t[i].m, t[i].p);
	}
}

Test(cli_rest, exit_codes_retry_later_or_fix_it)
{
	cr_expect_eq(enpu_code_info_of(ENPU_E_UNREACHABLE)->exit_code, 3);
	cr_expect_eq(enpu_code_info_of(ENPU_E_QUEUE_FULL)->exit_code, 3);
	cr_expect_eq(enpu_code_info_of(ENPU_E_STORAGE)->exit_code, 3);
	cr_expect_eq(enpu_code_info_of(ENPU_E_SERVER)->exit_code, 2);
	cr_expect_eq(enpu_code_info_of(ENPU_E_TLS)->exit_code, 2);
	cr_expect_eq(enpu_code_info_of(ENPU_E_AUTH)->exit_code, 2);
	cr_expect_eq(enpu_code_info_of(ENPU_E_FORBIDDEN)->exit_code, 2);
	cr_expect_str_eq(enpu_code_info_of(ENPU_E_TLS)->id, "E0820");
}

static long heard_wait;   /* the wait the last retry would take */

static int stop_note(void *ud, const enpu_rest_req *q, long status, long wait_s, int n, int max)
{
	(void)ud; (void)q; (void)n; (void)max;
	cr_expect_eq(status, 503);
	heard_wait = wait_s;
	return 1;   /* no wait: the answer in hand */
}

Test(cli_rest, retry_after_seconds_dates_and_cap)
{
	static const struct { const char *path; long lo, hi; } t[] = {
		{"/later/7", 7, 7}, {"/later/0", 1, 1}, {"/later/1000", 30, 30},
		{"/later/date+12", 10, 12}, {"/later/soon", 1, 1},
	};
	enpu_err e = ENPU_ERR_INIT;
	cli_conn *c = cli_conn_new(url, &e);
	struct json_object *o = NULL;

	enpu_rest_set_retry(c, 3, 600, stop_note);
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		heard_wait = -1;
		cr_assert_eq(cli_http_json(c, "GET", t[i].path, NULL, 10, &o, NULL, NULL, &e), -1);
		cr_expect(heard_wait >= t[i].lo && heard_wait <= t[i].hi, "%s: waits %ld s",
			  t[i].path, heard_wait);
	}
	/* a wait past --retry-max-time is not taken: no retry at all */
	enpu_rest_set_retry(c, 3, 5, stop_note);
	heard_wait = -1;
	cr_assert_eq(cli_http_json(c, "GET", "/later/7", NULL, 10, &o, NULL, NULL, &e), -1);
	cr_expect_eq(heard_wait, -1);
	cli_conn_free(c);
}

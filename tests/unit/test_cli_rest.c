/* test_cli_rest.c: the client's REST layer (client/rest.c) against a small
 * libmicrohttpd server on a free port that gives canned answers: JSON
 * errors become the catalogue's codes, garbage becomes E0809, downloads are
 * verified before they replace anything, an absent server is E0808. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *u,
			      const char *method, const char *version, const char *data,
			      size_t *size, void **req_cls)
{
	static const struct { const char *path; unsigned status; const char *body; } canned[] = {
		{"/v1/health", 200, "{\"status\":\"ok\"}"},
		{"/json", 200, "{\"a\":1}"},
		{"/notobj", 200, "[1]"},
		{"/garbage", 500, "oops"},
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

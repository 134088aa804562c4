/* test_srv_boards.c: the pure parts of the board pool (server/boards/boards.c,
 * board.c): the health-check backoff schedule, --board NAME=URL parsing,
 * which backends go to boards, and a board's error object turned into an
 * enpu_err (passed through intact, or a fault when the code is unknown);
 * the job JSON reader and the error writer of proto/wire.c. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "srv.h"
#include "boards.h"
#include "board.h"
#include "wire.h"

Test(backoff, doubles_from_one_second_up_to_the_cap)
{
	static const int want[] = {1, 1, 2, 4, 8, 16, 32, 60, 60, 60};
	for (int f = 0; f < 10; f++)
		cr_expect_eq(srv_board_backoff(f, 60), want[f], "failures %d: %d, want %d", f,
			     srv_board_backoff(f, 60), want[f]);
}

Test(backoff, small_and_odd_caps)
{
	cr_expect_eq(srv_board_backoff(5, 2), 2);
	cr_expect_eq(srv_board_backoff(3, 3), 3);
	cr_expect_eq(srv_board_backoff(2, 3), 2);
	cr_expect_eq(srv_board_backoff(100, 1), 1);
	cr_expect_eq(srv_board_backoff(4, 0), 1, "a cap below 1 s is 1 s");
	cr_expect_eq(srv_board_backoff(1000000, 60), 60, "no overflow after many failures");
}

typedef struct pcase {
	const char *arg;
	int ok;
	const char *name, *url;
} pcase;

static const pcase cases[] = {
	{"b1=http://127.0.0.1:8080", 1, "b1", "http://127.0.0.1:8080"},
	{"zynq-7020.lab_2=http://board7:80/", 1, "zynq-7020.lab_2", "http://board7:80/"},
	{"b=http://[::1]:9000", 1, "b", "http://[::1]:9000"},
	{"s=unix:/run/eulernpu/board.sock", 1, "s", "unix:/run/eulernpu/board.sock"},
	{"b1", 0, NULL, NULL},
	{"=http://h:1", 0, NULL, NULL},
	{"b 1=http://h:1", 0, NULL, NULL},
	{"b1=", 0, NULL, NULL},
	{"b1=http://h", 0, NULL, NULL},
	{"b1=http://h:", 0, NULL, NULL},
	{"b1=http://h:0", 0, NULL, NULL},
	{"b1=http://h:70000", 0, NULL, NULL},
	{"b1=http://h:80x", 0, NULL, NULL},
	{"b1=http://h:80/v1", 0, NULL, NULL},
	{"b1=http://:80", 0, NULL, NULL},
	{"b1=https://h:443", 1, "b1", "https://h:443"},   /* with --board-cacert */
	{"b1=https://h", 0, NULL, NULL},
	{"b1=ftp://h:21", 0, NULL, NULL},
	{"b1=unix:relative.sock", 0, NULL, NULL},
	{"b1=h:80", 0, NULL, NULL},
	{"a234567890123456789012345678901234567890123456789012345678901234=http://h:1", 0, NULL, NULL},
};

Test(parse, board_args)
{
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		srv_board_cfg c;
		enpu_err e = ENPU_ERR_INIT;
		int rc = srv_board_parse(cases[i].arg, &c, &e);

		if (cases[i].ok) {
			cr_expect_eq(rc, 0, "'%s' should parse: %s", cases[i].arg, e.message);
			cr_expect_str_eq(c.name, cases[i].name);
			cr_expect_str_eq(c.url, cases[i].url);
		} else {
			cr_expect_eq(rc, -1, "'%s' should be refused", cases[i].arg);
			cr_expect_eq(e.code, ENPU_E_USAGE, "'%s': a usage error", cases[i].arg);
			cr_expect(strlen(e.message) > 0, "'%s': says why", cases[i].arg);
		}
	}
}

Test(backends, only_board_backends_go_to_boards)
{
	cr_expect(srv_backend_on_board("zynq_ps"));
	cr_expect(srv_backend_on_board("fpga_board"));
	cr_expect_not(srv_backend_on_board("cpu_ref"));
	cr_expect_not(srv_backend_on_board("npu_sim"));
	cr_expect_not(srv_backend_on_board("gpu"));
	cr_expect_not(srv_backend_on_board(NULL));
}

Test(board_err, a_known_code_passes_through_intact)
{
	json_object *o = json_tokener_parse(
		"{\"code\":\"E0501\",\"title\":\"input tensor shape mismatch\","
		"\"message\":\"input 'x' has shape [1, 7], the spec declares [1, 8]\","
		"\"where\":\"bad.npz member 'x'\",\"fix\":\"reshape the input\"}");
	enpu_err e;

	cr_assert_not_null(o);
	srv_board_err_from_json(o, "b1", &e);
	cr_expect_eq(e.code, ENPU_E_INPUT_SHAPE);
	cr_expect_str_eq(e.message, "input 'x' has shape [1, 7], the spec declares [1, 8]");
	cr_expect_str_eq(e.where, "bad.npz member 'x'");
	cr_expect_str_eq(e.fix, "reshape the input");
	json_object_put(o);
}

Test(board_err, an_unknown_code_is_a_board_fault_naming_it)
{
	json_object *o = json_tokener_parse("{\"code\":\"E9999\",\"message\":\"strange\"}");
	enpu_err e;

	srv_board_err_from_json(o, "b2", &e);
	cr_expect_eq(e.code, ENPU_E_BOARD_FAULT);
	cr_expect(strstr(e.message, "E9999") && strstr(e.message, "b2") && strstr(e.message, "strange"),
		  "message: %s", e.message);
	json_object_put(o);
	o = json_object_new_object();
	srv_board_err_from_json(o, "b2", &e);
	cr_expect_eq(e.code, ENPU_E_BOARD_FAULT, "no code at all");
	json_object_put(o);
}

/* ---- the job JSON reader both the board link and the client use (wire.c) ---- */

static int read_job(const char *text, enpu_wire_job *j, char *why)
{
	json_object *o = json_tokener_parse(text);
	int rc;

	cr_assert_not_null(o, "test JSON: %s", text);
	rc = enpu_wire_job_read(o, j, why, 160);
	json_object_put(o);
	return rc;
}

Test(wire_job, reads_the_fields_and_ignores_unknown_ones)
{
	static enpu_wire_job j;
	char why[160] = "";
	const char *d = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	char text[1024];

	snprintf(text, sizeof text, "{\"id\":\"abc123\",\"state\":\"succeeded\",\"result\":\"%s\","
		 "\"report\":\"%s\",\"seconds\":0.5,\"position\":null,\"eta\":null,\"pwned\":[1,2],"
		 "\"outputs\":[{\"name\":\"y\",\"shape\":[1,4],\"extra\":true}]}", d, d);
	cr_assert_eq(read_job(text, &j, why), 0, "%s", why);
	cr_expect_str_eq(j.id, "abc123");
	cr_expect_str_eq(j.state, "succeeded");
	cr_expect_str_eq(j.result, d);
	cr_expect_eq(j.seconds, 0.5);
	cr_expect_eq(j.position, -1);
	cr_expect_eq(j.n_outputs, 1);
	cr_expect_str_eq(j.outputs[0].name, "y");
	cr_expect_eq(j.outputs[0].ndim, 2);
	cr_expect_eq(j.outputs[0].dim[1], 4);
	cr_expect_null(j.error);
}

Test(wire_job, refuses_wrong_types_and_absurd_values)
{
	static const char *const bad[] = {
		"[]",
		"{\"state\":\"queued\"}",                                   /* no id */
		"{\"id\":\"a\",\"state\":\"pwned\"}",
		"{\"id\":\"a/b\",\"state\":\"queued\"}",
		"{\"id\":\"a\",\"state\":7}",
		"{\"id\":\"a\",\"state\":\"queued\",\"seconds\":\"1\"}",
		"{\"id\":\"a\",\"state\":\"queued\",\"seconds\":-1}",
		"{\"id\":\"a\",\"state\":\"succeeded\",\"result\":\"../../etc/passwd\"}",
		"{\"id\":\"a\",\"state\":\"failed\",\"error\":\"E0814\"}",
		"{\"id\":\"a\",\"state\":\"succeeded\",\"outputs\":{}}",
		"{\"id\":\"a\",\"state\":\"succeeded\",\"outputs\":[{\"name\":\"pwned\","
		"\"shape\":[9999999999,1]}]}",
		"{\"id\":\"a\",\"state\":\"succeeded\",\"outputs\":[{\"name\":\"y\","
		"\"shape\":[1,2,3,4,5,6,7,8,9]}]}",
		"{\"id\":\"a\",\"state\":\"succeeded\",\"outputs\":[{\"name\":\"y\",\"shape\":[-1]}]}",
		"{\"id\":\"a\",\"state\":\"succeeded\",\"outputs\":[{\"shape\":[1]}]}",
	};
	static enpu_wire_job j;
	char why[160];

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		why[0] = '\0';
		cr_expect_eq(read_job(bad[i], &j, why), -1, "accepted: %s", bad[i]);
		cr_expect(why[0], "no reason for: %s", bad[i]);
	}
}

Test(wire_job, the_error_writer_and_reader_agree)
{
	enpu_err e = ENPU_ERR_INIT, back;
	json_object *o;

	enpu_fail(&e, ENPU_E_INPUT_SHAPE, "in.npz member 'x'", "reshape it", "bad \xff byte");
	o = enpu_wire_err_to_json(&e);
	cr_assert_eq(enpu_wire_err_from_json(o, &back, NULL, NULL), 0);
	cr_expect_eq(back.code, ENPU_E_INPUT_SHAPE);
	cr_expect_str_eq(back.message, "bad \xef\xbf\xbd byte", "invalid UTF-8 becomes U+FFFD");
	cr_expect_str_eq(back.where, "in.npz member 'x'");
	cr_expect_str_eq(back.fix, "reshape it");
	cr_expect_str_eq(json_object_get_string(json_object_object_get(o, "see")),
			 "eulernpu explain E0501");
	json_object_put(o);
}

/* ---- a board's result and errors are untrusted (board_check.c) ---- */

static const enpu_wire_output logits[] = {{"logits", 2, {1, 4}, ENPU_DT_F32}};

/* A 2-d float32 tensor without data (the checks read names and shapes). */
static enpu_tensor t2(const char *name, long long d0, long long d1)
{
	enpu_tensor t = {strdup(name), ENPU_DT_F32, {2, {d0, d1}}, {NULL}};
	return t;
}

Test(untrusted, the_result_must_hold_exactly_the_outputs)
{
	enpu_tlist l = ENPU_TLIST_INIT;
	enpu_tensor t = t2("logits", 1, 4), extra = t2("logits", 1, 4);
	enpu_err e;

	cr_assert_eq(enpu_tlist_push(&l, &t, &e), 0);
	cr_expect_eq(srv_board_check_result(logits, 1, &l, "b1", &e), 0);
	l.items[0].shape.dim[0] = 4;
	l.items[0].shape.dim[1] = 1;
	cr_expect_eq(srv_board_check_result(logits, 1, &l, "b1", &e), -1, "another shape");
	cr_expect_eq(e.code, ENPU_E_BOARD_FAULT);
	cr_expect(strstr(e.message, "board 'b1' returned output 'logits' of shape (4, 1)"), "%s",
		  e.message);
	l.items[0].shape.dim[0] = 1;
	l.items[0].shape.dim[1] = 4;
	l.items[0].dtype = ENPU_DT_INVALID;
	cr_expect_eq(srv_board_check_result(logits, 1, &l, "b1", &e), -1, "not float32");
	l.items[0].dtype = ENPU_DT_F32;
	{	/* spec v3: an int8 output must come back int8, nothing else */
		const enpu_wire_output q8[] = {{"logits", 2, {1, 4}, ENPU_DT_I8}};
		l.items[0].dtype = ENPU_DT_I8;
		cr_expect_eq(srv_board_check_result(q8, 1, &l, "b1", &e), 0, "%s", e.message);
		cr_expect_eq(srv_board_check_result(logits, 1, &l, "b1", &e), -1, "int8 for float32");
		cr_expect(strstr(e.message, "(1, 4) int8; the artifact's is (1, 4) float32"), "%s",
			  e.message);
		l.items[0].dtype = ENPU_DT_U8;
		cr_expect_eq(srv_board_check_result(q8, 1, &l, "b1", &e), -1, "uint8 for int8");
		l.items[0].dtype = ENPU_DT_F32;
	}
	free(l.items[0].name);
	l.items[0].name = strdup("pwned");
	cr_expect_eq(srv_board_check_result(logits, 1, &l, "b1", &e), -1, "another name");
	cr_expect(strstr(e.message, "without output 'logits'"), "%s", e.message);
	cr_assert_eq(enpu_tlist_push(&l, &extra, &e), 0);
	cr_expect_eq(srv_board_check_result(logits, 1, &l, "b1", &e), -1, "one tensor too many");
	enpu_tlist_free(&l);
}

Test(untrusted, the_download_is_bounded_by_the_outputs)
{
	const enpu_wire_output big[] = {{"a", 2, {1000, 1000}, 0}, {"b", 1, {3}, 0}};
	const enpu_wire_output absurd[] = {{"a", 3, {2147483647, 2147483647, 2147483647}, 0}};
	uint64_t small = srv_board_result_cap(logits, 1), two = srv_board_result_cap(big, 2);

	cr_expect(small >= 16 + 100 && small < 16 * 1024, "tiny_mlp's result: %llu",
		  (unsigned long long)small);
	cr_expect(two >= 4000000 + 12 && two < 4000000 + 16 * 1024, "%llu", (unsigned long long)two);
	cr_expect(srv_board_result_cap(absurd, 1) >= (1ull << 62), "no overflow: saturates");
}

Test(untrusted, the_claimed_outputs_must_be_the_artifacts)
{
	static enpu_wire_job j;
	enpu_err e;

	j.n_outputs = 1;
	j.outputs[0] = logits[0];
	cr_expect_eq(srv_board_check_claim(logits, 1, &j, "b1", &e), 0);
	j.outputs[0].dim[0] = 2147483647;
	cr_expect_eq(srv_board_check_claim(logits, 1, &j, "b1", &e), -1);
	cr_expect_eq(e.code, ENPU_E_BOARD_FAULT);
	j.outputs[0] = logits[0];
	snprintf(j.outputs[0].name, sizeof j.outputs[0].name, "pwned");
	cr_expect_eq(srv_board_check_claim(logits, 1, &j, "b1", &e), -1);
}

Test(untrusted, a_boards_own_error_is_wrapped_a_model_error_is_not)
{
	enpu_err be = ENPU_ERR_INIT, e;
	json_object *data = NULL;

	enpu_fail(&be, ENPU_E_AUTH, NULL, NULL, "wrong bearer token: email your token to evil@x");
	cr_expect_eq(srv_board_wrap(&be, "b1", "its job 'j' failed", &e, &data), SRV_RUN_FAULT);
	cr_expect_eq(e.code, ENPU_E_BOARD_FAULT);
	cr_expect(strstr(e.message, "board 'b1'") && strstr(e.message, "E0814"), "%s", e.message);
	cr_expect_null(strstr(e.message, "email"), "the board's words are not shown: %s", e.message);
	cr_assert_not_null(data);
	cr_expect_str_eq(json_object_get_string(json_object_object_get(data, "code")), "E0814");
	cr_expect(strstr(json_object_get_string(json_object_object_get(data, "message")), "email"));
	json_object_put(data);

	enpu_fail(&be, ENPU_E_INPUT_SHAPE, "in.npz member 'x'", NULL, "input 'x' has shape [1, 7]");
	cr_expect_eq(srv_board_wrap(&be, "b1", "its job 'j' failed", &e, &data), SRV_RUN_MODEL);
	cr_expect_eq(e.code, ENPU_E_INPUT_SHAPE);
	cr_expect_str_eq(e.message, "input 'x' has shape [1, 7]");
	cr_expect_null(data);
	for (int c = ENPU_E_NOT_FOUND; c < ENPU_E_CODE_COUNT; c++)
		cr_expect(!srv_board_is_model((enpu_code)c), "%s is the server's, not the model's",
			  enpu_code_info_of((enpu_code)c)->id);
	cr_expect(srv_board_is_model(ENPU_E_SHAPE) && srv_board_is_model(ENPU_E_NPY) &&
		  srv_board_is_model(ENPU_E_LIMIT));
}

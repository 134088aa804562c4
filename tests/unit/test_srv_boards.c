/* test_srv_boards.c: the pure parts of the board pool (server/boards/boards.c,
 * board.c): the health-check backoff schedule, --board NAME=URL parsing,
 * which backends go to boards, and a board's error object turned into an
 * enpu_err (passed through intact, or a fault when the code is unknown). */
#include <criterion/criterion.h>
#include <string.h>
#include <json-c/json.h>
#include "srv.h"
#include "boards.h"
#include "board.h"

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

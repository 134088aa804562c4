/* test_srv_config.c: eulernpud's configuration file (server/config.c): a
 * mapping of option names to scalars becomes items with the value's
 * line:col; boards as a list of strings, of {name, url}, or a mapping; and
 * every malformed file is E0816 at file:line:col. --node-id is checked as
 * it is read. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include "srv.h"
#include "daemon.h"

static int parse(const char *text, srv_cfg_file *f, enpu_err *e)
{
	return srv_cfg_parse(text, strlen(text), "d.yaml", f, e);
}

Test(srv_config, scalars_with_positions)
{
	srv_cfg_file f;
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(parse("# comment\nworkers: 2\nlisten: \"127.0.0.1:8080\"\nmax-queue:   5\n", &f, &e), 0,
		     "%s", e.message);
	cr_assert_eq(f.n, 3);
	cr_assert_str_eq(f.items[0].key, "workers");
	cr_assert_str_eq(f.items[0].value, "2");
	cr_assert_eq(f.items[0].line, 2);
	cr_assert_eq(f.items[0].col, 10);
	cr_assert_eq(f.items[0].kcol, 1);
	cr_assert_str_eq(f.items[1].value, "127.0.0.1:8080");
	cr_assert_str_eq(f.items[2].key, "max-queue");
	cr_assert_eq(f.items[2].col, 14);
	srv_cfg_free(&f);
}

Test(srv_config, boards_three_ways)
{
	srv_cfg_file f;
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(parse("boards:\n  - b1=http://h:1\n  - {name: b2, url: 'unix:/s'}\n"
			   "  - name: b3\n    url: https://h:3\n", &f, &e), 0, "%s", e.message);
	cr_assert_eq(f.n, 3);
	cr_assert_str_eq(f.items[0].key, "board");
	cr_assert_str_eq(f.items[0].value, "b1=http://h:1");
	cr_assert_str_eq(f.items[1].value, "b2=unix:/s");
	cr_assert_str_eq(f.items[2].value, "b3=https://h:3");
	cr_assert_eq(f.items[2].line, 4);
	srv_cfg_free(&f);

	cr_assert_eq(parse("boards:\n  x: http://h:1\n  y: http://h:2\n", &f, &e), 0);
	cr_assert_eq(f.n, 2);
	cr_assert_str_eq(f.items[1].value, "y=http://h:2");
	srv_cfg_free(&f);

	cr_assert_eq(parse("board: z=http://h:9\n", &f, &e), 0);
	cr_assert_str_eq(f.items[0].key, "board");
	srv_cfg_free(&f);
}

Test(srv_config, empty_is_empty)
{
	srv_cfg_file f;
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(parse("", &f, &e), 0);
	cr_assert_eq(f.n, 0);
	srv_cfg_free(&f);
	cr_assert_eq(parse("# only a comment\n", &f, &e), 0);
	cr_assert_eq(f.n, 0);
	srv_cfg_free(&f);
}

static void bad(const char *text, const char *where, const char *msg)
{
	srv_cfg_file f;
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(parse(text, &f, &e), -1, "accepted: %s", text);
	cr_assert_eq(e.code, ENPU_E_CONFIG, "%s", e.message);
	cr_assert_str_eq(e.where, where, "for %s: %s", text, e.message);
	cr_assert_not_null(strstr(e.message, msg), "%s", e.message);
	cr_assert_eq(f.n, 0);
}

Test(srv_config, errors_at_file_line_col)
{
	bad("- a\n- b\n", "d.yaml:1:1", "must be a mapping");
	bad("workers: [1, 2]\n", "d.yaml:1:10", "takes a single value");
	bad("workers: {a: 1}\n", "d.yaml:1:10", "takes a single value");
	bad("a: &x 1\nb: *x\n", "d.yaml:1:4", "anchors and aliases");
	bad("boards:\n  - [x]\n", "d.yaml:2:5", "a board must be a string or a mapping");
	bad("boards:\n  - {name: b1}\n", "d.yaml:2:5", "needs a name and a url");
	bad("boards:\n  - {name: b1, uri: x}\n", "d.yaml:2:16", "unknown board key 'uri'");
	bad("boards:\n  b1: [x]\n", "d.yaml:2:7", "must be a string");
	bad("a: 1\n---\nb: 2\n", "d.yaml:2:1", "more than one YAML document");
}

Test(srv_config, syntax_errors_have_a_position)
{
	srv_cfg_file f;
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(parse("workers: 1\n  max-queue: 2\n", &f, &e), -1);
	cr_assert_eq(e.code, ENPU_E_CONFIG);
	cr_assert_not_null(strstr(e.where, "d.yaml:2:"), "%s", e.where);
	cr_assert_not_null(strstr(e.message, "not valid YAML"));
	cr_assert_eq(parse("a: 'open\n", &f, &e), -1);
	cr_assert_not_null(strstr(e.where, "d.yaml:"), "%s", e.where);
}

Test(srv_config, read_missing_file)
{
	srv_cfg_file f;
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(srv_cfg_read("/nonexistent/eulernpud.yaml", &f, &e), -1);
	cr_assert_eq(e.code, ENPU_E_CONFIG);
}

/* --node-id: 1-16 of [a-z0-9], from the file (E0816 at the value) or the
 * command line; none by default. */
Test(srv_config, node_id)
{
	srv_config c;
	srv_cfg_file f;
	enpu_err e = ENPU_ERR_INIT;
	char *argv[] = {"eulernpud", "--node-id", "n2", NULL};
	static const char *const bad_ids[] = {"N1", "n-1", "n_1", "abcdefghijklmnopq", "''"};

	srv_config_defaults(&c);
	cr_assert_null(c.node_id);
	cr_assert_eq(parse("node-id: lab1\n", &f, &e), 0, "%s", e.message);
	cr_assert_eq(srv_opts_apply_file(&c, &f, &e), 0, "%s", e.message);
	cr_assert_str_eq(c.node_id, "lab1");
	cr_assert_eq(srv_opts_parse(3, argv, &c), 0);
	cr_assert_str_eq(c.node_id, "n2", "the command line overrides the file");
	srv_cfg_free(&f);
	for (size_t i = 0; i < sizeof bad_ids / sizeof bad_ids[0]; i++) {
		char text[64];

		snprintf(text, sizeof text, "\nnode-id: %s\n", bad_ids[i]);
		srv_config_defaults(&c);
		cr_assert_eq(parse(text, &f, &e), 0, "%s", e.message);
		cr_assert_eq(srv_opts_apply_file(&c, &f, &e), -1, "'%s' accepted", bad_ids[i]);
		cr_assert_eq(e.code, ENPU_E_CONFIG);
		cr_assert_str_eq(e.where, "d.yaml:2:10", "%s", e.where);
		cr_assert_not_null(strstr(e.message, "is not a node id (1-16 of [a-z0-9])"), "%s",
				   e.message);
		srv_cfg_free(&f);
	}
}

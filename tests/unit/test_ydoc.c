/* test_ydoc.c: the typed YAML getters target readers share (ydoc.h,
 * enpu_yread_*): values in range come back, everything else is the reader's
 * error code at label:line:col of the offending node with its message. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>
#include "ydoc.h"

static const char doc_text[] =
	"n: 7\n"
	"big: 99\n"
	"f: 2.5\n"
	"neg: -1\n"
	"word: wx\n"
	"pair: [3, 4]\n"
	"bad_pair: [3, x]\n"
	"map: {a: 1}\n";

static enpu_ydoc *doc;
static enpu_err err;
static enpu_yread rd = {"t.yaml", ENPU_E_TARGET, &err};

static void setup(void)
{
	enpu_err e = ENPU_ERR_INIT;

	err = (enpu_err)ENPU_ERR_INIT;
	cr_assert_eq(enpu_yaml_parse(doc_text, sizeof(doc_text) - 1, "t.yaml", NULL, &doc, &e), 0,
		     "%s", e.message);
}

static void teardown(void)
{
	enpu_ydoc_free(doc);
}

static const enpu_ynode *get(const char *key)
{
	const enpu_ynode *v = enpu_ynode_get(enpu_ydoc_root(doc), key);

	cr_assert_not_null(v, "%s", key);
	return v;
}

TestSuite(ydoc, .init = setup, .fini = teardown);

Test(ydoc, int_in_range_and_out)
{
	int64_t x = 0;

	cr_expect_eq(enpu_yread_int(&rd, get("n"), "'n'", 1, 10, &x), 0);
	cr_expect_eq(x, 7);
	cr_expect_eq(enpu_yread_int(&rd, get("big"), "'big'", 1, 10, &x), -1);
	cr_expect_eq(err.code, ENPU_E_TARGET);
	cr_expect_str_eq(err.where, "t.yaml:2:6");
	cr_expect_str_eq(err.message, "'big' must be an integer from 1 to 10 (got '99')");
	cr_expect_eq(enpu_yread_int(&rd, get("map"), "'map'", 1, 10, &x), -1);
	cr_expect(strstr(err.message, "(got '{...}')"), "%s", err.message);
	cr_expect_eq(enpu_yread_int(&rd, NULL, "'none'", 1, 10, &x), -1);
	cr_expect_str_eq(err.where, "t.yaml:1:1");
}

Test(ydoc, positive_numbers_bounded_or_not)
{
	double d = 0;

	cr_expect_eq(enpu_yread_pos(&rd, get("f"), "'f'", INFINITY, NULL, &d), 0);
	cr_expect_eq(d, 2.5);
	cr_expect_eq(enpu_yread_pos(&rd, get("neg"), "'neg'", INFINITY, "a fix", &d), -1);
	cr_expect_str_eq(err.message, "'neg' must be a finite number greater than 0 (got '-1')");
	cr_expect_str_eq(err.fix, "a fix");
	cr_expect_eq(enpu_yread_pos(&rd, get("big"), "'big'", 50, NULL, &d), -1);
	cr_expect_str_eq(err.message, "'big' must be a number greater than 0 and at most 50 (got '99')");
	cr_expect_eq(enpu_yread_pos(&rd, get("big"), "'big'", 1e6, NULL, &d), 0);
	cr_expect_eq(d, 99);
}

Test(ydoc, choice_with_did_you_mean)
{
	static const char *const names[] = {"wa", "wx2", NULL};
	static const char *const names2[] = {"wx", "y", NULL};
	int idx = -1;

	cr_expect_eq(enpu_yread_choice(&rd, get("word"), "word", names2, &idx), 0);
	cr_expect_eq(idx, 0);
	cr_expect_eq(enpu_yread_choice(&rd, get("word"), "word", names, &idx), -1);
	cr_expect_str_eq(err.where, "t.yaml:5:7");
	cr_expect_str_eq(err.message, "'word' must be one of wa, wx2 (got 'wx') (did you mean 'wa'?)");
	cr_expect_str_eq(err.fix, "use one of: wa, wx2");
}

Test(ydoc, int_lists)
{
	static const char *const what[] = {"'p' rows", "'p' cols"};
	int64_t v[2] = {0, 0};

	cr_expect_eq(enpu_yread_ints(&rd, get("pair"), "'p'", "two integers", "write p: [1, 2]", 2,
				     what, 1, 8, v), 0);
	cr_expect(v[0] == 3 && v[1] == 4);
	cr_expect_eq(enpu_yread_ints(&rd, get("n"), "'p'", "two integers", "write p: [1, 2]", 2, what,
				     1, 8, v), -1);
	cr_expect_str_eq(err.message, "'p' must be a list of two integers");
	cr_expect_str_eq(err.fix, "write p: [1, 2]");
	cr_expect_eq(enpu_yread_ints(&rd, get("bad_pair"), "'p'", "two integers", NULL, 2, what, 1, 8,
				     v), -1);
	cr_expect_str_eq(err.where, "t.yaml:7:15");
	cr_expect_str_eq(err.message, "'p' cols must be an integer from 1 to 8 (got 'x')");
}

/* enpu_ynode_int takes every int64, INT64_MIN included (slice's ends are
 * written so), and refuses one past either end. */
Test(ydoc, int64_extremes)
{
	static const char text[] = "a: [-9223372036854775808, 9223372036854775807, "
				   "-9223372036854775809, 9223372036854775808, -0x8000000000000000]\n";
	enpu_ydoc *d = NULL;
	enpu_err e = ENPU_ERR_INIT;
	const enpu_ynode *l;
	int64_t x = 0;

	cr_assert_eq(enpu_yaml_parse(text, sizeof(text) - 1, "t.yaml", NULL, &d, &e), 0, "%s",
		     e.message);
	l = enpu_ynode_get(enpu_ydoc_root(d), "a");
	cr_assert(l && l->kind == ENPU_YN_SEQ && l->n == 5);
	cr_expect_eq(enpu_ynode_int(l->kids[0], &x), 0);
	cr_expect_eq(x, INT64_MIN);
	cr_expect_eq(enpu_ynode_int(l->kids[1], &x), 0);
	cr_expect_eq(x, INT64_MAX);
	cr_expect_neq(enpu_ynode_int(l->kids[2], &x), 0, "INT64_MIN - 1 is refused");
	cr_expect_neq(enpu_ynode_int(l->kids[3], &x), 0, "INT64_MAX + 1 is refused");
	cr_expect_eq(enpu_ynode_int(l->kids[4], &x), 0);
	cr_expect_eq(x, INT64_MIN);
	enpu_ydoc_free(d);
}

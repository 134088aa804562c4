/* test_cli_opts.c: the verbs' option parser and error plumbing
 * (client/opts.c), and where the private daemon lives (autostart.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include <json-c/json.h>
#include "cli.h"
#include "rest.h"

typedef struct vals {
	const char *spec, *out;
	double tol;
	int exact;
} vals;

static int parse(vals *v, const char **pos, int *n_pos, enpu_err *e, int argc, char **argv)
{
	const cli_opt opts[] = {
		{"--exact", CLI_OPT_FLAG, &v->exact},
		{"--out", CLI_OPT_STR, &v->out},
		{"--spec", CLI_OPT_STR, &v->spec},
		{"--tol", CLI_OPT_DOUBLE, &v->tol},
		{NULL, 0, NULL},
	};

	return cli_parse_opts("compile", argc, argv, opts, pos, 2, n_pos, e);
}

#define ARGV(...) (char *[]){__VA_ARGS__}
#define ARGC(...) (int)(sizeof((char *[]){__VA_ARGS__}) / sizeof(char *))
#define PARSE(...) parse(&v, pos, &n, &e, ARGC(__VA_ARGS__), ARGV(__VA_ARGS__))

Test(cli_opts, values_flags_positionals)
{
	vals v = {NULL, NULL, 1e-5, 0};
	const char *pos[2];
	enpu_err e = ENPU_ERR_INIT;
	int n;

	cr_assert_eq(PARSE("compile", "--spec", "s.yaml", "p1", "--out=dir", "--exact", "--tol", "0.5"), 0);
	cr_assert_str_eq(v.spec, "s.yaml");
	cr_assert_str_eq(v.out, "dir");
	cr_assert_eq(v.exact, 1);
	cr_assert_float_eq(v.tol, 0.5, 0);
	cr_assert_eq(n, 1);
	cr_assert_str_eq(pos[0], "p1");
}

Test(cli_opts, double_dash_ends_options)
{
	vals v = {0};
	const char *pos[2];
	enpu_err e = ENPU_ERR_INIT;
	int n;

	cr_assert_eq(PARSE("compile", "--", "--spec"), 0);
	cr_assert_eq(n, 1);
	cr_assert_str_eq(pos[0], "--spec");
	cr_assert_null(v.spec);
}

Test(cli_opts, help_wins)
{
	vals v = {0};
	const char *pos[2];
	enpu_err e = ENPU_ERR_INIT;
	int n;

	cr_assert_eq(PARSE("compile", "--bogus", "--help"), 1);
	cr_assert_eq(PARSE("compile", "-h"), 1);
}

Test(cli_opts, usage_errors)
{
	static const char *const bad[][4] = {
		{"compile", "--bogus", NULL, NULL},
		{"compile", "--spec", NULL, NULL},
		{"compile", "--spec=", NULL, NULL},
		{"compile", "--tol", "-1", NULL},
		{"compile", "--tol", "nan", NULL},
		{"compile", "--tol", "1x", NULL},
		{"compile", "--tol=1e999", NULL, NULL},
		{"compile", "--exact=1", NULL, NULL},
		{"compile", "a", "b", "c"},
	};

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		vals v = {0};
		const char *pos[2];
		enpu_err e = ENPU_ERR_INIT;
		int argc = 0, n;
		char *argv[4];

		while (argc < 4 && bad[i][argc]) {
			argv[argc] = (char *)bad[i][argc];
			argc++;
		}
		cr_expect_eq(parse(&v, pos, &n, &e, argc, argv), -1, "case %zu", i);
		cr_expect_eq(e.code, ENPU_E_USAGE, "case %zu", i);
		cr_expect(strstr(e.fix, "eulernpu compile --help") != NULL, "case %zu: fix '%s'", i, e.fix);
		cr_expect_eq(enpu_code_info_of(e.code)->exit_code, 2);
	}
}

Test(cli_opts, server_error_json)
{
	enpu_err e = ENPU_ERR_INIT;
	char buf[1024];
	struct json_object *o = json_tokener_parse(
		"{\"code\":\"E0301\",\"message\":\"spec.yaml:9 declares [8, 16], weights.npz holds [16, 8]\","
		"\"where\":\"op 'fc1' reads weight 'fc1.w'\",\"fix\":\"retrain the weights or correct the spec\"}");

	cr_assert_not_null(o);
	cli_err_from_json(o, &e);
	cr_assert_eq(e.code, ENPU_E_WEIGHT_SHAPE);
	enpu_err_render(&e, buf, sizeof buf);
	cr_assert_str_eq(buf,
		"error[E0301]: weights tensor shape mismatch\n"
		"  op 'fc1' reads weight 'fc1.w': spec.yaml:9 declares [8, 16], weights.npz holds [16, 8]\n"
		"  fix: retrain the weights or correct the spec \xc2\xb7 See: eulernpu explain E0301\n");
	json_object_put(o);

	o = json_tokener_parse("{\"code\":\"E9999\",\"message\":\"new thing\"}");
	cli_err_from_json(o, &e);
	cr_assert_eq(e.code, ENPU_E_SERVER);
	cr_assert(strstr(e.message, "E9999") != NULL);
	json_object_put(o);
}

Test(cli_opts, private_dir_from_env)
{
	char dir[256], want[64];

	setenv("XDG_RUNTIME_DIR", "/run/user/1000", 1);
	cr_assert_eq(cli_private_dir(dir, sizeof dir), 0);
	cr_assert_str_eq(dir, "/run/user/1000/eulernpu");
	setenv("XDG_RUNTIME_DIR", "relative/dir", 1);   /* ignored: not absolute */
	cli_private_dir(dir, sizeof dir);
	snprintf(want, sizeof want, "/tmp/eulernpu-%u", (unsigned)getuid());
	cr_assert_str_eq(dir, want);
	unsetenv("XDG_RUNTIME_DIR");
	cli_private_dir(dir, sizeof dir);
	cr_assert_str_eq(dir, want);
	cr_assert_eq(cli_private_dir(dir, 5), -1);
}

Test(cli_opts, conn_url_forms)
{
	enpu_err e = ENPU_ERR_INIT;
	cli_conn *c;

	c = cli_conn_new("unix:/tmp/x.sock", &e);
	cr_assert_not_null(c);
	cr_assert_str_eq(cli_conn_url(c), "unix:/tmp/x.sock");
	cli_conn_free(c);
	c = cli_conn_new("http://127.0.0.1:8080/", &e);
	cr_assert_not_null(c);
	cli_conn_free(c);
	cr_assert_null(cli_conn_new("ftp://x", &e));
	cr_assert_eq(e.code, ENPU_E_USAGE);
	cr_assert_null(cli_conn_new("unix:", &e));
}

/* import --input: a repeatable option keeps every value in order */
Test(cli_opts, list_option_repeats)
{
	cli_strlist in = {{NULL}, 0};
	const char *name = NULL, *pos[1];
	const cli_opt opts[] = {
		{"--input", CLI_OPT_LIST, &in},
		{"--name", CLI_OPT_STR, &name},
		{NULL, 0, NULL},
	};
	enpu_err e = ENPU_ERR_INIT;
	int n;

	cr_assert_eq(cli_parse_opts("import", ARGC("import", "m.onnx", "--input", "x=1,2", "--name",
						   "n", "--input=y=3"),
				    ARGV("import", "m.onnx", "--input", "x=1,2", "--name", "n",
					 "--input=y=3"), opts, pos, 1, &n, &e), 0, "%s", e.message);
	cr_assert_eq(in.n, 2);
	cr_assert_str_eq(in.v[0], "x=1,2");
	cr_assert_str_eq(in.v[1], "y=3");
	cr_assert_str_eq(name, "n");
	cr_assert_eq(n, 1);
	cr_assert_eq(cli_parse_opts("import", ARGC("import", "--input", ""),
				    ARGV("import", "--input", ""), opts, pos, 1, &n, &e), -1);
	cr_assert_eq(e.code, ENPU_E_USAGE);
}

/* import --input NAME=SHAPE */
Test(cli_opts, bind_syntax)
{
	static const char *const bad[] = {"x", "=1,2", "x=", "x=1,", "x=,1", "x=1,,2", "x=a",
					  "x=0", "x=-1", "x=1.5", "x=1;2", "x=1,2,3,4,5,6,7,8,9",
					  "x=99999999999", "x= 1"};
	cli_bind b;
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(cli_parse_bind("x=1,3,224,224", &b, &e), 0, "%s", e.message);
	cr_assert_str_eq(b.name, "x");
	cr_assert_eq(b.ndim, 4);
	cr_assert_eq(b.dim[0], 1);
	cr_assert_eq(b.dim[3], 224);
	/* the last '=' splits: a name may hold one */
	cr_assert_eq(cli_parse_bind("a=b=7", &b, &e), 0, "%s", e.message);
	cr_assert_str_eq(b.name, "a=b");
	cr_assert_eq(b.ndim, 1);
	cr_assert_eq(b.dim[0], 7);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		e = (enpu_err)ENPU_ERR_INIT;
		cr_assert_eq(cli_parse_bind(bad[i], &b, &e), -1, "'%s' was taken", bad[i]);
		cr_assert_eq(e.code, ENPU_E_USAGE, "'%s'", bad[i]);
		cr_assert(strstr(e.message, bad[i]), "'%s': %s", bad[i], e.message);
	}
}

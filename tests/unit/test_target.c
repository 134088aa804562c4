/* test_target.c: target options (common/target.c) from the spec's
 * targets.<backend> and from a target file: defaults, the canonical JSON,
 * capability, and errors at file:line:col. Also the standalone YAML loader
 * (enpu_yaml_parse) that reads target files with the spec's limits. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>
#include "enpu.h"
#include "npusim.h"
#include "spec_int.h"

static char dir[64];

static void setup(void)
{
	strcpy(dir, "/tmp/enpu_target_XXXXXX");
	cr_assert(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
}

TestSuite(target, .init = setup, .fini = teardown);

/* tiny_mlp with `extra` appended (targets, backend). */
static enpu_spec *spec_with(const char *extra)
{
	static const char base[] =
		"eulernpu: 1\n"
		"name: t\n"
		"inputs:\n"
		"  - {name: x, dtype: float32, shape: [1, 8]}\n"
		"outputs: [y]\n"
		"weights:\n"
		"  - {name: w, dtype: float32, shape: [8, 4]}\n"
		"components:\n"
		"  - name: main\n"
		"    ops:\n"
		"      - {name: mm, op: matmul, in: [x, w], out: h}\n"
		"      - {name: act, op: relu, in: [h], out: y}\n";
	char text[2048];
	enpu_spec *s = NULL;
	enpu_err e = ENPU_ERR_INIT;

	snprintf(text, sizeof(text), "%s%s", base, extra);
	cr_assert_eq(enpu_spec_parse(text, strlen(text), "spec.yaml", NULL, &s, &e), 0,
		     "%s: %s", e.where, e.message);
	return s;
}

static const char *file_with(const char *name, const char *text)
{
	static char path[4][128];
	static int slot;
	char *p = path[slot++ % 4];
	FILE *f;

	snprintf(p, 128, "%s/%s", dir, name);
	f = fopen(p, "w");
	cr_assert(f);
	fputs(text, f);
	fclose(f);
	return p;
}

static const char *json_of(const enpu_target *t)
{
	json_object *o = enpu_target_json(t);

	return o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN) : "null";
}

Test(target, from_spec_with_defaults_filled)
{
	enpu_spec *s = spec_with("targets:\n  npu_sim: {array: [8, 4], dataflow: ws}\n");
	enpu_target *t = NULL;
	enpu_err e = ENPU_ERR_INIT;
	const enpu_npu_target *n;
	enpu_npu_target d;

	cr_assert_eq(enpu_target_resolve(s, "npu_sim", NULL, NULL, NULL, &t, &e), 0, "%s", e.message);
	cr_assert_str_eq(enpu_target_backend(t), "npu_sim");
	cr_assert_not_null(n = enpu_target_npu(t));
	cr_assert_eq(n->rows, 8);
	cr_assert_eq(n->cols, 4);
	cr_assert_eq(n->dataflow, ENPU_DF_WS);
	enpu_npu_target_default(&d);
	cr_assert_eq(n->word_bytes, d.word_bytes, "unwritten fields keep their defaults");
	cr_assert_eq(n->vector_lanes, d.vector_lanes);
	cr_assert(strstr(json_of(t), "\"array\":[8,4]"), "%s", json_of(t));
	cr_assert(strstr(json_of(t), "\"dataflow\":\"ws\""), "%s", json_of(t));
	enpu_target_free(t);

	/* the spec's own backend (cpu_ref by default) has no options */
	cr_assert_eq(enpu_target_resolve(s, NULL, NULL, NULL, NULL, &t, &e), 0, "%s", e.message);
	cr_assert_str_eq(enpu_target_backend(t), "cpu_ref");
	cr_assert_null(enpu_target_json(t));
	cr_assert_null(enpu_target_npu(t));
	enpu_target_free(t);
	enpu_spec_free(s);
}

Test(target, absent_and_empty_give_defaults)
{
	enpu_spec *s = spec_with("backend: npu_sim\n");
	enpu_target *t = NULL, *u = NULL, *v = NULL;
	enpu_err e = ENPU_ERR_INIT;
	enpu_npu_target d;

	enpu_npu_target_default(&d);
	cr_assert_eq(enpu_target_resolve(s, NULL, NULL, NULL, NULL, &t, &e), 0, "%s", e.message);
	cr_assert_str_eq(enpu_target_backend(t), "npu_sim", "backend NULL = the spec's");
	cr_assert_eq(enpu_target_npu(t)->rows, d.rows);
	cr_assert_eq(enpu_target_npu(t)->cols, d.cols);
	cr_assert_eq(enpu_target_npu(t)->dataflow, d.dataflow);
	cr_assert_eq(enpu_target_resolve(s, NULL, file_with("empty.yaml", ""), "empty.yaml", NULL,
					 &u, &e), 0, "%s", e.message);
	cr_assert_eq(enpu_target_resolve(s, NULL, file_with("null.yaml", "# nothing\n~\n"),
					 "null.yaml", NULL, &v, &e), 0, "%s", e.message);
	cr_assert_str_eq(json_of(t), json_of(u));
	cr_assert_str_eq(json_of(t), json_of(v));
	enpu_target_free(t);
	enpu_target_free(u);
	enpu_target_free(v);
	enpu_spec_free(s);
}

/* The same options written in the spec and in a file (in another order,
 * with a default spelled out) give the same canonical JSON. */
Test(target, spec_and_file_canonical_json_equal)
{
	enpu_spec *s = spec_with("targets:\n  npu_sim: {dataflow: is, array: [7, 5], "
				 "sram_kib: {ifmap: 32, filter: 16, ofmap: 8}}\n");
	const char *p = file_with("t.yaml",
				  "# the same target\n"
				  "sram_kib:\n  ofmap: 8\n  filter: 16\n  ifmap: 32\n"
				  "array: [7, 5]\n"
				  "dataflow: is\n");
	enpu_target *a = NULL, *b = NULL, *c = NULL;
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(enpu_target_resolve(s, "npu_sim", NULL, NULL, NULL, &a, &e), 0, "%s", e.message);
	cr_assert_eq(enpu_target_resolve(s, "npu_sim", p, "t.yaml", NULL, &b, &e), 0, "%s", e.message);
	cr_assert_str_eq(json_of(a), json_of(b));
	/* a different file differs */
	cr_assert_eq(enpu_target_resolve(s, "npu_sim", file_with("u.yaml", "array: [7, 6]\n"),
					 "u.yaml", NULL, &c, &e), 0, "%s", e.message);
	cr_assert_str_neq(json_of(a), json_of(c));
	enpu_target_free(a);
	enpu_target_free(b);
	enpu_target_free(c);
	enpu_spec_free(s);
}

/* A target file replaces the spec's targets.<backend> entirely. */
Test(target, file_overrides_spec)
{
	enpu_spec *s = spec_with("targets:\n  npu_sim: {array: [2, 2]}\n");
	enpu_target *t = NULL;
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(enpu_target_resolve(s, "npu_sim", file_with("t.yaml", "dataflow: ws\n"),
					 "t.yaml", NULL, &t, &e), 0, "%s", e.message);
	cr_assert_eq(enpu_target_npu(t)->rows, 16);
	cr_assert_eq(enpu_target_npu(t)->dataflow, ENPU_DF_WS);
	enpu_target_free(t);
	enpu_spec_free(s);
}

static void expect_fail(const enpu_spec *s, const char *backend, const char *path,
			const char *label, enpu_code code, const char *where, const char *msg)
{
	enpu_target *t = NULL;
	enpu_err e = ENPU_ERR_INIT;

	cr_expect_eq(enpu_target_resolve(s, backend, path, label, NULL, &t, &e), -1,
		     "%s should fail", where);
	cr_expect_null(t);
	cr_expect_eq(e.code, code, "%s: code %d, want %d (%s)", where, e.code, code, e.message);
	cr_expect_str_eq(e.where, where, "%s", e.message);
	if (msg)
		cr_expect(strstr(e.message, msg), "'%s' not in '%s'", msg, e.message);
}

Test(target, errors_at_line_and_column)
{
	enpu_spec *s = spec_with("targets:\n  npu_sim:\n    array: [16, 16]\n    dataflow: xs\n");
	enpu_spec *ok = spec_with("");

	/* in the spec: line 16 is `    dataflow: xs` */
	expect_fail(s, "npu_sim", NULL, NULL, ENPU_E_TARGET, "spec.yaml:16:15", "dataflow");
	/* in a file */
	expect_fail(ok, "npu_sim", file_with("a.yaml", "# bad rows\narray: [0, 4]\n"), "a.yaml",
		    ENPU_E_TARGET, "a.yaml:2:9", "rows");
	expect_fail(ok, "npu_sim", file_with("b.yaml", "array: [4, 4]\nlanes: 3\n"), "b.yaml",
		    ENPU_E_TARGET, "b.yaml:2:1", "lanes");
	expect_fail(ok, "npu_sim", file_with("c.yaml", "- array\n- [4, 4]\n"), "c.yaml",
		    ENPU_E_TARGET, "c.yaml:1:1", "mapping");
	expect_fail(ok, "npu_sim", file_with("d.yaml", "array: [4, 4\n"), "d.yaml",
		    ENPU_E_YAML, "d.yaml:2:1", "invalid YAML");
	expect_fail(ok, "npu_sim", file_with("e.yaml", "ops: [matmul, relux]\n"), "e.yaml",
		    ENPU_E_TARGET, "e.yaml:1:15", "relu");
	expect_fail(ok, "npu_sim", file_with("f.yaml", "a: 1\n---\nb: 2\n"), "f.yaml",
		    ENPU_E_SCHEMA, "f.yaml:2:1", "more than one YAML document");
	/* the label defaults to the path */
	{
		const char *p = file_with("g.yaml", "word_bytes: -1\n");
		char where[256];

		snprintf(where, sizeof(where), "%s:1:13", p);
		expect_fail(ok, "npu_sim", p, NULL, ENPU_E_TARGET, where, "word_bytes");
	}
	expect_fail(ok, "tpu", NULL, NULL, ENPU_E_BACKEND, "spec.yaml", "unknown backend 'tpu'");
	enpu_spec_free(s);
	enpu_spec_free(ok);
}

Test(target, cpu_ref_takes_no_options)
{
	enpu_spec *s = spec_with("targets:\n  cpu_ref: {threads: 2}\n");
	enpu_spec *empty = spec_with("targets:\n  cpu_ref: {}\n  npu_sim: {array: [2, 2]}\n");
	enpu_target *t = NULL;
	enpu_err e = ENPU_ERR_INIT;

	expect_fail(s, NULL, NULL, NULL, ENPU_E_TARGET, "spec.yaml:14:12",
		    "backend 'cpu_ref' takes no target options");
	expect_fail(empty, "cpu_ref", file_with("c.yaml", "\n\nthreads: 2\n"), "c.yaml",
		    ENPU_E_TARGET, "c.yaml:3:1", "backend 'cpu_ref' takes no target options");
	/* an empty mapping or file is fine */
	cr_assert_eq(enpu_target_resolve(empty, "cpu_ref", NULL, NULL, NULL, &t, &e), 0, "%s",
		     e.message);
	enpu_target_free(t);
	cr_assert_eq(enpu_target_resolve(empty, "cpu_ref", file_with("d.yaml", "# none\n"), "d.yaml",
					 NULL, &t, &e), 0, "%s", e.message);
	enpu_target_free(t);
	enpu_spec_free(s);
	enpu_spec_free(empty);
}

Test(target, file_size_limit)
{
	enpu_spec *s = spec_with("");
	enpu_limits lim = *enpu_limits_default();
	enpu_target *t = NULL;
	enpu_err e = ENPU_ERR_INIT;

	lim.max_spec_bytes = 16;
	cr_assert_eq(enpu_target_resolve(s, "npu_sim",
					 file_with("big.yaml", "array: [16, 16]\ndataflow: os\n"),
					 "big.yaml", &lim, &t, &e), -1);
	cr_assert_eq(e.code, ENPU_E_LIMIT, "%s", e.message);
	cr_assert_null(t);
	enpu_spec_free(s);
}

Test(target, lowers_follows_backend_and_ops_list)
{
	enpu_spec *s = spec_with("targets:\n  npu_sim: {ops: [matmul, add]}\n");
	enpu_target *t = NULL, *c = NULL;
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(enpu_target_resolve(s, "npu_sim", NULL, NULL, NULL, &t, &e), 0, "%s", e.message);
	cr_assert(enpu_target_lowers(t, enpu_op_by_name("matmul")));
	cr_assert(enpu_target_lowers(t, enpu_op_by_name("add")));
	cr_assert(!enpu_target_lowers(t, enpu_op_by_name("relu")));
	cr_assert(strstr(json_of(t), "\"ops\":[\"add\",\"matmul\"]"), "%s", json_of(t));
	cr_assert_eq(enpu_target_resolve(s, "cpu_ref", NULL, NULL, NULL, &c, &e), 0, "%s", e.message);
	cr_assert(enpu_target_lowers(c, enpu_op_by_name("relu")), "cpu_ref ignores npu ops");
	enpu_target_free(t);
	enpu_target_free(c);
	enpu_spec_free(s);
}

/* The standalone loader keeps positions and the spec's alias limits. */
Test(target, yaml_loader)
{
	static const char bomb[] =
		"a: &a [x, x, x, x, x, x, x, x, x, x]\n"
		"b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
		"c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
		"d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
		"e: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n";
	enpu_limits lim = *enpu_limits_default();
	enpu_ydoc *d = NULL;
	enpu_err e = ENPU_ERR_INIT;
	const enpu_ynode *r;

	cr_assert_eq(enpu_yaml_parse("\nk: [1, 2]\n", 11, "x.yaml", NULL, &d, &e), 0, "%s", e.message);
	cr_assert_not_null(r = enpu_ydoc_root(d));
	cr_assert_eq(r->kind, ENPU_YN_MAP);
	cr_assert_eq(r->n, 1);
	cr_assert_eq(r->kids[1]->line, 2);
	cr_assert_eq(r->kids[1]->col, 4);
	enpu_ydoc_free(d);

	cr_assert_eq(enpu_yaml_parse("", 0, "x.yaml", NULL, &d, &e), 0);
	cr_assert_null(enpu_ydoc_root(d), "an empty document has no root");
	enpu_ydoc_free(d);

	lim.max_yaml_nodes = 10000;
	cr_assert_eq(enpu_yaml_parse(bomb, strlen(bomb), "bomb.yaml", &lim, &d, &e), -1);
	cr_assert_null(d);
	cr_assert_eq(e.code, ENPU_E_LIMIT, "%s", e.message);
	cr_assert(strstr(e.where, "bomb.yaml:"), "%s", e.where);

	lim = *enpu_limits_default();
	lim.max_yaml_depth = 3;
	cr_assert_eq(enpu_yaml_parse("a: {b: {c: {d: 1}}}\n", 20, "deep.yaml", &lim, &d, &e), -1);
	cr_assert_eq(e.code, ENPU_E_LIMIT, "%s", e.message);
}

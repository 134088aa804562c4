/* test_spec.c: spec.yaml parsing (common/spec.c): the fields of a good
 * spec, targets as JSON, positions in errors, and the parser's limits. */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include "spec.h"

/* examples/tiny_mlp/spec.yaml, as docs/spec-format.md gives it */
static const char tiny_mlp[] =
	"eulernpu: 1                 # format version, required\n"
	"name: tiny_mlp\n"
	"backend: cpu_ref\n"
	"inputs:\n"
	"  - {name: x, dtype: float32, shape: [1, 8]}\n"
	"outputs: [logits]\n"
	"weights:\n"
	"  - {name: fc1.w, dtype: float32, shape: [8, 16]}\n"
	"  - {name: fc1.b, dtype: float32, shape: [16]}\n"
	"  - {name: fc2.w, dtype: float32, shape: [16, 4]}\n"
	"  - {name: fc2.b, dtype: float32, shape: [4]}\n"
	"components:\n"
	"  - name: hidden\n"
	"    ops:\n"
	"      - {name: fc1,   op: matmul, in: [x, fc1.w],  out: h1}\n"
	"      - {name: bias1, op: add,    in: [h1, fc1.b], out: h2}\n"
	"      - {name: act1,  op: relu,   in: [h2],        out: h}\n"
	"  - name: head\n"
	"    ops:\n"
	"      - {name: fc2,   op: matmul, in: [h, fc2.w],  out: z}\n"
	"      - {name: bias2, op: add,    in: [z, fc2.b],  out: logits}\n"
	"targets:\n"
	"  npu_sim: {array: [16, 16], dataflow: os, clock_mhz: 1.5e3, trace: true, note: '7'}\n";

/* everything but the inputs: "inputs:" is line 5, its first entry line 6 */
#define HEAD "eulernpu: 1\nname: m\noutputs: [y]\n" \
	"components: [{name: c, ops: [{name: r, op: relu, in: [x], out: y}]}]\n"

static enpu_spec *parse_ok(const char *y)
{
	enpu_spec *s = NULL;
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(enpu_spec_parse(y, strlen(y), "spec.yaml", NULL, &s, &e), 0,
		     "parse failed: %s: %s", e.where, e.message);
	cr_assert_not_null(s);
	return s;
}

static void parse_bad(const char *y, size_t len, const enpu_limits *lim, enpu_code code,
		      const char *where, const char *substr)
{
	enpu_spec *s = NULL;
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(enpu_spec_parse(y, len, "spec.yaml", lim, &s, &e), -1, "bad spec accepted");
	cr_assert_null(s);
	cr_assert_eq(e.code, code, "code %d, want %d (%s: %s)", e.code, code, e.where, e.message);
	if (where)
		cr_assert_str_eq(e.where, where, "where '%s', want '%s' (%s)", e.where, where, e.message);
	if (substr)
		cr_assert(strstr(e.message, substr), "message '%s' lacks '%s'", e.message, substr);
}

Test(spec, tiny_mlp_fields)
{
	enpu_spec *s = parse_ok(tiny_mlp);

	cr_assert_str_eq(enpu_spec_name(s), "tiny_mlp");
	cr_assert_str_eq(enpu_spec_backend(s), "cpu_ref");
	cr_assert_eq(enpu_spec_n_ops(s), 5);
	cr_assert_eq(enpu_spec_n_components(s), 2);
	enpu_spec_free(s);
}

Test(spec, targets_as_json)
{
	enpu_spec *s = parse_ok(tiny_mlp);
	struct json_object *t = enpu_spec_target(s, "npu_sim"), *v;

	cr_assert_not_null(t);
	cr_assert(json_object_is_type(t, json_type_object));
	cr_assert(json_object_object_get_ex(t, "array", &v));
	cr_assert_eq(json_object_array_length(v), 2);
	cr_assert_eq(json_object_get_int(json_object_array_get_idx(v, 0)), 16);
	cr_assert(json_object_is_type(json_object_array_get_idx(v, 0), json_type_int));
	cr_assert(json_object_object_get_ex(t, "dataflow", &v));
	cr_assert_str_eq(json_object_get_string(v), "os");
	cr_assert(json_object_object_get_ex(t, "clock_mhz", &v));
	cr_assert(json_object_is_type(v, json_type_double));
	cr_assert_float_eq(json_object_get_double(v), 1500.0, 1e-9);
	cr_assert(json_object_object_get_ex(t, "trace", &v));
	cr_assert(json_object_is_type(v, json_type_boolean));
	cr_assert(json_object_object_get_ex(t, "note", &v));
	cr_assert(json_object_is_type(v, json_type_string), "quoted '7' stays a string");
	cr_assert_null(enpu_spec_target(s, "fpga_board"));
	cr_assert_null(enpu_spec_target(s, "cpu_ref"));
	enpu_spec_free(s);
}

Test(spec, defaults_and_block_style)
{
	const char *y =
		"eulernpu: 1\n"
		"name: m\n"
		"inputs:\n"
		"  - name: x\n"
		"    dtype: float32\n"
		"    shape:\n"
		"      - 2\n"
		"      - 3\n"
		"outputs:\n"
		"  - y\n"
		"components:\n"
		"  - name: c\n"
		"    ops:\n"
		"      - name: r\n"
		"        op: relu\n"
		"        in: [x]\n"
		"        out: [y]\n";
	enpu_spec *s = parse_ok(y);

	cr_assert_str_eq(enpu_spec_backend(s), "cpu_ref", "backend defaults to cpu_ref");
	cr_assert_eq(enpu_spec_n_ops(s), 1);
	cr_assert_null(enpu_spec_target(s, "npu_sim"));
	enpu_spec_free(s);
}

Test(spec, aliases_within_limits)
{
	/* a modest, legitimate use of anchors */
	const char *y =
		"eulernpu: 1\n"
		"name: m\n"
		"inputs: [{name: x, dtype: float32, shape: &s [2, 3]}]\n"
		"weights: [{name: w, dtype: float32, shape: *s}]\n"
		"outputs: [y]\n"
		"components: [{name: c, ops: [{name: a, op: add, in: [x, w], out: y}]}]\n";
	enpu_spec *s = parse_ok(y);

	cr_assert_eq(enpu_spec_n_ops(s), 1);
	enpu_spec_free(s);
}

Test(spec, error_positions)
{
	/* line 3, column 9: the value of backend is fine; the unknown key is at 4:1 */
	const char *y = "eulernpu: 1\nname: m\nbackend: cpu_ref\nwieghts: []\n";

	parse_bad(y, strlen(y), NULL, ENPU_E_SCHEMA, "spec.yaml:4:1", "did you mean 'weights'");
	y = "eulernpu: 4\nname: m\n";
	parse_bad(y, strlen(y), NULL, ENPU_E_VERSION, "spec.yaml:1:11",
		  "unsupported spec format version '4'");
	y = "name: m\n";
	parse_bad(y, strlen(y), NULL, ENPU_E_SCHEMA, "spec.yaml:1:1", "'eulernpu'");
	y = HEAD "inputs:\n  - {name: x, dtype: int8, shape: [1]}\n";
	parse_bad(y, strlen(y), NULL, ENPU_E_DTYPE, "spec.yaml:6:22",
		  "dtype 'int8' of input 'x' needs eulernpu: 3 (this spec is eulernpu: 1)");
	y = HEAD "inputs:\n  - {name: x, dtype: float32, shape: [1, -3]}\n";
	parse_bad(y, strlen(y), NULL, ENPU_E_SCHEMA, "spec.yaml:6:42",
		  "'shape' of input 'x' must be a list of positive integers");
	y = HEAD "inputs:\n  - {name: x, dtype: float32, shape: [1, 0]}\n";
	parse_bad(y, strlen(y), NULL, ENPU_E_SHAPE, "spec.yaml:6:42", "zero dimension");
}

Test(spec, limits)
{
	enpu_limits lim = *enpu_limits_default();
	const char *y = "eulernpu: 1\nname: m\n";

	lim.max_spec_bytes = 8;
	parse_bad(y, strlen(y), &lim, ENPU_E_LIMIT, NULL, "bytes");
	lim = *enpu_limits_default();
	lim.max_yaml_nodes = 3;
	parse_bad(y, strlen(y), &lim, ENPU_E_LIMIT, NULL, "YAML nodes");
	lim = *enpu_limits_default();
	lim.max_yaml_depth = 2;
	y = "eulernpu: 1\nname: m\ninputs: [[1]]\n";
	parse_bad(y, strlen(y), &lim, ENPU_E_LIMIT, "spec.yaml:3:10", "deeper than 2");
}

Test(spec, alias_bomb_fails_fast)
{
	/* billion laughs: 10^9 nodes after expansion, a few hundred bytes */
	const char *y =
		"a: &a [x, x, x, x, x, x, x, x, x, x]\n"
		"b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
		"c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
		"d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
		"e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
		"f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
		"g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n"
		"h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g, *g]\n"
		"i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h, *h]\n"
		"eulernpu: 1\n";

	parse_bad(y, strlen(y), NULL, ENPU_E_LIMIT, NULL, "after expanding alias");
}

Test(spec, depth_bomb)
{
	size_t n = 100000;
	char *y = malloc(n + 1);

	cr_assert_not_null(y);
	memset(y, '[', n);
	y[n] = 0;
	parse_bad(y, n, NULL, ENPU_E_LIMIT, "spec.yaml:1:65", "deeper than 64");
	free(y);
}

Test(spec, load_missing_file)
{
	enpu_spec *s = NULL;
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(enpu_spec_load("/nonexistent/spec.yaml", NULL, NULL, &s, &e), -1);
	cr_assert_eq(e.code, ENPU_E_IO);
	cr_assert_null(s);
}

Test(spec, many_documents_and_scalars)
{
	const char *y = "eulernpu: 1\n---\neulernpu: 1\n";

	parse_bad(y, strlen(y), NULL, ENPU_E_SCHEMA, "spec.yaml:2:1", "more than one");
	y = "just a string\n";
	parse_bad(y, strlen(y), NULL, ENPU_E_SCHEMA, "spec.yaml:1:1", "must be a mapping");
	y = "";
	parse_bad(y, 0, NULL, ENPU_E_SCHEMA, "spec.yaml:1:1", "empty");
	y = "eulernpu: 1\nname: [a\n";
	parse_bad(y, strlen(y), NULL, ENPU_E_YAML, NULL, "invalid YAML");
}

/* test_validate.c: spec validation (common/validate.c) and, through it, the
 * parser. Data-driven: every tests/data/specs/bad/NAME.yaml opens with
 * "# expect: E0204 12:23" (code, line:col of the error) and must fail so;
 * every tests/data/specs/good/NAME.yaml must validate. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "spec.h"
#include "target.h"
#include "pipeline.h"

/* The data directory, from the repository root (make test) or elsewhere
 * through ENPU_TEST_DATA. */
/* Load and validate (for the spec's own backend): 0 ok, -1 with *e. */
static int check_file(const char *path, const char *label, enpu_err *e)
{
	enpu_spec *s = NULL;
	enpu_graph *g = NULL;
	int r;

	if (enpu_spec_load(path, label, NULL, &s, e))
		return -1;
	r = enpu_validate(s, NULL, &g, e);
	cr_expect((r == 0) == (g != NULL), "%s: graph and return value disagree", label);
	enpu_graph_free(g);
	enpu_spec_free(s);
	return r;
}

static int yaml_name(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return n > 5 && strcmp(d->d_name + n - 5, ".yaml") == 0;
}

static int list_dir(const char *sub, struct dirent ***names)
{
	char dir[512];
	int n;

	snprintf(dir, sizeof(dir), "%s/specs/%s", tpl_data_dir("specs"), sub);
	n = scandir(dir, names, yaml_name, alphasort);
	cr_assert(n >= 0, "cannot read %s", dir);
	return n;
}

Test(validate, bad_specs_fail_with_code_and_position)
{
	struct dirent **names;
	int n = list_dir("bad", &names), checked = 0;

	for (int i = 0; i < n; i++) {
		char path[1024], line[256], code[16] = "", at[32] = "", suffix[40];
		enpu_err e = ENPU_ERR_INIT;
		const char *id;
		FILE *f;
		size_t wl, sl;

		snprintf(path, sizeof(path), "%s/specs/bad/%s", tpl_data_dir("specs"), names[i]->d_name);
		f = fopen(path, "rb");
		cr_assert_not_null(f, "cannot open %s", path);
		if (!fgets(line, sizeof(line), f))
			line[0] = 0;
		fclose(f);
		cr_assert(sscanf(line, "# expect: %15s %31s", code, at) == 2,
			  "%s: first line must be '# expect: E0204 12:23'", names[i]->d_name);
		cr_expect_eq(check_file(path, names[i]->d_name, &e), -1, "%s: accepted",
			     names[i]->d_name);
		id = enpu_code_info_of(e.code)->id;
		cr_expect_str_eq(id, code, "%s: got %s, want %s (%s: %s)", names[i]->d_name, id,
				 code, e.where, e.message);
		snprintf(suffix, sizeof(suffix), ":%s", at);
		wl = strlen(e.where);
		sl = strlen(suffix);
		cr_expect(wl >= sl && strcmp(e.where + wl - sl, suffix) == 0 &&
			  strncmp(e.where, names[i]->d_name, strlen(names[i]->d_name)) == 0,
			  "%s: where '%s', want '%s%s' (%s)", names[i]->d_name, e.where,
			  names[i]->d_name, suffix, e.message);
		cr_expect(e.message[0], "%s: empty message", names[i]->d_name);
		checked++;
		free(names[i]);
	}
	free(names);
	cr_assert_geq(checked, 40, "only %d bad specs found", checked);
}

Test(validate, good_specs_validate)
{
	struct dirent **names;
	int n = list_dir("good", &names);

	cr_assert_geq(n, 3);
	for (int i = 0; i < n; i++) {
		char path[1024];
		enpu_err e = ENPU_ERR_INIT;

		snprintf(path, sizeof(path), "%s/specs/good/%s", tpl_data_dir("specs"), names[i]->d_name);
		cr_expect_eq(check_file(path, names[i]->d_name, &e), 0, "%s: %s: %s",
			     names[i]->d_name, e.where, e.message);
		free(names[i]);
	}
	free(names);
}

static enpu_spec *load_good(const char *name)
{
	char path[1024];
	enpu_spec *s = NULL;
	enpu_err e = ENPU_ERR_INIT;

	snprintf(path, sizeof(path), "%s/specs/good/%s", tpl_data_dir("specs"), name);
	cr_assert_eq(enpu_spec_load(path, "spec.yaml", NULL, &s, &e), 0, "%s: %s", e.where,
		     e.message);
	return s;
}

static const enpu_irtensor *tensor(const enpu_graph *g, const char *name)
{
	int i = enpu_graph_find(g, name);

	cr_assert(i >= 0, "tensor '%s' missing from the graph", name);
	return &g->tensors[i];
}

static void expect_dims(const enpu_irtensor *t, int n, long long d0, long long d1)
{
	cr_expect_eq(t->shape.ndim, n, "'%s' rank %d", t->name, t->shape.ndim);
	cr_expect_eq(t->shape.dim[0], d0, "'%s' dim 0", t->name);
	if (n > 1)
		cr_expect_eq(t->shape.dim[1], d1, "'%s' dim 1", t->name);
}

/* The criterion of the task: tiny_mlp validates to 5 ops, 2 components,
 * h1 (1, 16) and logits (1, 4). */
Test(validate, tiny_mlp_graph)
{
	enpu_spec *s = load_good("tiny_mlp.yaml");
	enpu_graph *g = NULL;
	enpu_err e = ENPU_ERR_INIT;
	const enpu_irtensor *t;

	cr_assert_eq(enpu_validate(s, NULL, &g, &e), 0, "%s: %s", e.where, e.message);
	cr_assert_eq(g->n_ops, 5);
	cr_assert_eq(g->n_components, 2);
	cr_expect_str_eq(g->components[0], "hidden");
	cr_expect_str_eq(g->components[1], "head");
	cr_expect_str_eq(g->name, "tiny_mlp");
	cr_expect_str_eq(g->backend, "cpu_ref");
	expect_dims(tensor(g, "h1"), 2, 1, 16);
	expect_dims(tensor(g, "logits"), 2, 1, 4);
	expect_dims(tensor(g, "h"), 2, 1, 16);
	cr_expect_eq(g->n_tensors, 1 + 4 + 5);
	/* ops in written order, with their components */
	cr_expect_str_eq(g->ops[0].name, "fc1");
	cr_expect_eq(g->ops[0].def->id, ENPU_OP_MATMUL);
	cr_expect_eq(g->ops[2].component, 0);
	cr_expect_eq(g->ops[3].component, 1);
	cr_expect_eq(g->ops[1].n_in, 2);
	cr_expect_eq(g->ops[1].in[0], enpu_graph_find(g, "h1"));
	cr_expect_eq(g->ops[1].in[1], enpu_graph_find(g, "fc1.b"));
	cr_expect_eq(g->ops[4].out[0], enpu_graph_find(g, "logits"));
	/* inputs, outputs, kinds, producers and last uses */
	cr_assert_eq(g->n_inputs, 1);
	cr_expect_eq(g->inputs[0], enpu_graph_find(g, "x"));
	cr_assert_eq(g->n_outputs, 1);
	cr_expect_eq(g->outputs[0], enpu_graph_find(g, "logits"));
	t = tensor(g, "logits");
	cr_expect(t->is_output);
	cr_expect_eq(t->kind, ENPU_TK_INTERMEDIATE);
	cr_expect_eq(t->producer, 4);
	cr_expect_eq(t->last_use, -1);
	t = tensor(g, "x");
	cr_expect_eq(t->kind, ENPU_TK_INPUT);
	cr_expect_eq(t->producer, -1);
	cr_expect_eq(t->last_use, 0);
	cr_expect_eq(t->dtype, ENPU_DT_F32);
	cr_expect_eq(t->line, 5, "x declared on line 5, got %d", t->line);
	t = tensor(g, "fc2.w");
	cr_expect_eq(t->kind, ENPU_TK_WEIGHT);
	cr_expect_eq(t->last_use, 3);
	cr_expect_eq(tensor(g, "h")->last_use, 3);
	cr_expect_eq(tensor(g, "h2")->producer, 1);
	cr_expect(!tensor(g, "h2")->is_output);
	cr_expect_eq(enpu_graph_find(g, "fc1"), -1, "ops are not tensors");
	cr_expect_eq(enpu_graph_find(g, "nope"), -1);
	enpu_graph_free(g);
	enpu_spec_free(s);
}

Test(validate, cnn_attrs_normalized)
{
	enpu_spec *s = load_good("tiny_cnn.yaml");
	enpu_graph *g = NULL;
	enpu_err e = ENPU_ERR_INIT;
	const enpu_irop *op;

	cr_assert_eq(enpu_validate(s, "cpu_ref", &g, &e), 0, "%s: %s", e.where, e.message);
	cr_assert_eq(g->n_ops, 8);
	op = &g->ops[0];
	cr_expect_eq(op->attrs.group, 2);
	cr_expect_eq(op->attrs.pads[3], 1);
	cr_expect_eq(op->attrs.strides[0], 1, "default strides");
	cr_expect(op->attrs.set & (1u << 1), "pads given");
	cr_expect(!(op->attrs.set & (1u << 0)), "strides not given");
	cr_expect_float_eq(g->ops[1].attrs.epsilon, 1e-3f, 1e-9f);
	op = &g->ops[3];   /* maxpool: strides default to the kernel */
	cr_expect_eq(op->attrs.strides[0], 2);
	cr_expect_eq(op->attrs.strides[1], 2);
	cr_expect_eq(g->ops[4].attrs.count_include_pad, 1);
	cr_expect_eq(g->ops[7].attrs.axis, 1, "softmax axis -1 normalized");
	cr_expect_eq(tensor(g, "f1")->shape.dim[1], 8);
	cr_expect_eq(tensor(g, "f4")->shape.dim[2], 4);
	cr_expect_eq(tensor(g, "f5")->shape.dim[3], 2);
	expect_dims(tensor(g, "v"), 2, 2, 32);
	expect_dims(tensor(g, "probs"), 2, 2, 5);
	enpu_graph_free(g);
	enpu_spec_free(s);
}

Test(validate, ops_tour_shapes)
{
	enpu_spec *s = load_good("ops_tour.yaml");
	enpu_graph *g = NULL;
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(enpu_validate(s, NULL, &g, &e), 0, "%s: %s", e.where, e.message);
	expect_dims(tensor(g, "u1"), 2, 2, 12);
	cr_expect_eq(tensor(g, "u2")->shape.dim[0], 4);
	cr_expect_eq(tensor(g, "u2")->shape.dim[2], 2);
	cr_expect_eq(g->ops[9].attrs.n_perm, 3, "absent perm stored as the reverse");
	expect_dims(tensor(g, "u5"), 2, 2, 36);
	cr_expect_eq(g->ops[12].attrs.axis, 1);
	expect_dims(tensor(g, "u6"), 1, 2, 0);
	cr_expect_eq(tensor(g, "u6")->last_use, -1);
	expect_dims(tensor(g, "out"), 2, 1, 6);
	cr_expect(tensor(g, "a")->is_output, "a graph input may be an output");
	cr_expect_eq(g->outputs[1], g->inputs[0]);
	enpu_graph_free(g);
	enpu_spec_free(s);
}

Test(validate, backend_argument)
{
	enpu_spec *s = load_good("tiny_mlp.yaml");
	enpu_graph *g = NULL;
	enpu_err e = ENPU_ERR_INIT;

	cr_expect_eq(enpu_validate(s, "tpu", &g, &e), -1);
	cr_expect_eq(e.code, ENPU_E_BACKEND);
	cr_expect(strstr(e.message, "cpu_ref, npu_sim"), "known backends listed: %s", e.message);
	cr_expect_null(g);
	/* npu_sim lowers every v1 op now */
	cr_expect_eq(enpu_validate(s, "npu_sim", &g, &e), 0, "%s: %s", e.where, e.message);
	cr_expect_str_eq(g->backend, "npu_sim");
	enpu_graph_free(g);
	g = NULL;
	/* boards: every op lowers (fpga_board falls back to the PS) */
	cr_expect_eq(enpu_validate(s, "fpga_board", &g, &e), 0, "%s: %s", e.where, e.message);
	cr_expect_str_eq(g->backend, "fpga_board");
	enpu_graph_free(g);
	g = NULL;
	cr_expect_eq(enpu_validate(s, "zynq_ps", &g, &e), 0, "%s: %s", e.where, e.message);
	enpu_graph_free(g);
	g = NULL;
	cr_expect_eq(enpu_validate(s, "cpu_ref", &g, &e), 0);
	enpu_graph_free(g);
	enpu_spec_free(s);
}

/* E0210: the op, the backend, and the capability matrix in the fix: which
 * backends lower the op type, and the target's ops list that excludes it. */
Test(validate, lowering_missing_names_the_capability)
{
	char path[1024];
	enpu_spec *s = NULL;
	enpu_graph *g = NULL;
	enpu_target *t = NULL;
	enpu_err e = ENPU_ERR_INIT;

	snprintf(path, sizeof(path), "%s/specs/bad/lowering_npu_ops_excludes_relu.yaml",
		 tpl_data_dir("specs"));
	cr_assert_eq(enpu_spec_load(path, "spec.yaml", NULL, &s, &e), 0, "%s", e.message);
	cr_assert_eq(enpu_validate(s, NULL, &g, &e), -1);
	cr_assert_eq(e.code, ENPU_E_LOWERING);
	cr_expect_str_eq(e.message,
			 "backend lowering missing for op 'act1' (relu) on backend 'npu_sim'");
	cr_expect_str_eq(e.where, "spec.yaml:18:9");
	cr_expect(strstr(e.fix, "op type 'relu' is lowered by: cpu_ref, npu_sim"), "%s", e.fix);
	cr_expect(strstr(e.fix, "targets.npu_sim.ops lists: matmul, add"), "%s", e.fix);
	/* the same spec validates for cpu_ref, and for npu_sim with a target
	 * that lists relu */
	cr_expect_eq(enpu_validate(s, "cpu_ref", &g, &e), 0, "%s", e.message);
	enpu_graph_free(g);
	g = NULL;
	cr_assert_eq(enpu_target_resolve(s, "npu_sim", NULL, NULL, NULL, &t, &e), 0, "%s", e.message);
	cr_expect_eq(enpu_validate_for(s, t, &g, &e), -1);
	cr_expect_eq(e.code, ENPU_E_LOWERING);
	enpu_target_free(t);
	enpu_spec_free(s);
}

/* Messages the user sees, for a few errors the brief spells out. */
Test(validate, messages)
{
	static const struct {
		const char *file, *msg;
	} cases[] = {
		{"unknown_op_suggest.yaml", "unknown op 'matmull'; did you mean 'matmul'?"},
		{"read_later_tensor.yaml",
		 "op 'bias1' reads 'h' which is produced later by op 'act1' (ops run in the order written)"},
		{"ref_unknown_suggest.yaml", "did you mean 'h2'?"},
		{"matmul_inner_mismatch.yaml", "op 'fc2': inner dimensions differ"},
		{"dtype_int8.yaml", "dtype 'int8' is not supported yet (spec v1 supports float32)"},
		{"version_3.yaml", "unsupported spec format version '3'"},
		{"v1_uses_v2_op.yaml", "op 'exp' needs eulernpu: 2 (this spec is eulernpu: 1)"},
		{"unknown_backend.yaml", "unknown backend 'tpu'"},
		{"duplicate_top_key.yaml", "duplicate key 'name'"},
		{"dup_op_vs_input.yaml", "already used by the input at dup_op_vs_input.yaml:6:12"},
		{"unknown_attr.yaml", "did you mean 'alpha'?"},
		{"conv_group_mismatch.yaml", "input channels per group"},
		{"output_not_produced.yaml", "did you mean 'logits'?"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char path[1024];
		enpu_err e = ENPU_ERR_INIT;

		snprintf(path, sizeof(path), "%s/specs/bad/%s", tpl_data_dir("specs"), cases[i].file);
		cr_expect_eq(check_file(path, cases[i].file, &e), -1);
		cr_expect(strstr(e.message, cases[i].msg), "%s: '%s' lacks '%s'", cases[i].file,
			  e.message, cases[i].msg);
	}
}

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
#include <json-c/json.h>
#include "graphjson.h"
#include "buf.h"

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
		{"dtype_int8.yaml", "dtype 'int8' of input 'x' needs eulernpu: 3 (this spec is eulernpu: 1)"},
		{"version_4.yaml", "unsupported spec format version '4'"},
		{"v3_int8_into_add.yaml", "op 'a' (add) reads 'xq' (int8) as input 2, which must be float32"},
		{"v3_mixed_zero_point.yaml",
		 "op 'd' (dequantize_linear) has mixed types: input 1 'x' is int8 but input 3 'z' is uint8"},
		{"v2_int8_input.yaml", "dtype 'int8' of input 'x' needs eulernpu: 3 (this spec is eulernpu: 2)"},
		{"v2_uses_v3_op.yaml", "op 'quantize_linear' needs eulernpu: 3 (this spec is eulernpu: 2)"},
		{"v1_uses_v2_op.yaml", "op 'exp' needs eulernpu: 2 (this spec is eulernpu: 1)"},
		{"prelu_slope_grows.yaml",
		 "op 'act': slope (4, 1, 3) does not broadcast to x (2, 3) (together they make (4, 2, 3))"},
		{"max_inputs_no_bcast.yaml",
		 "op 'm': input 3: shapes (2, 3) and (2, 1, 4) do not broadcast (dimension 3 vs 4)"},
		{"unknown_backend.yaml", "unknown backend 'tpu'"},
		{"duplicate_top_key.yaml", "duplicate key 'name'"},
		{"dup_op_vs_input.yaml", "already used by the input at dup_op_vs_input.yaml:6:12"},
		{"unknown_attr.yaml", "did you mean 'alpha'?"},
		{"conv_group_mismatch.yaml", "input channels per group"},
		{"output_not_produced.yaml", "did you mean 'logits'?"},
		{"v2_slice_zero_step.yaml", "op 'm' (slice): attribute 'steps'[1] is 0: a step must not be 0"},
		{"v2_slice_dup_axes.yaml", "attribute 'axes'[1] names axis 1 twice"},
		{"v2_slice_axis_range.yaml", "attribute 'axes'[0] is 3, out of range [-3, 2] for rank 3"},
		{"v2_slice_ends_length.yaml", "attribute 'ends' has 1 entry, 'starts' has 2"},
		{"v2_pad_pads_length.yaml", "attribute 'pads' has 4 entries; x of rank 3 needs 2 x 3 = 6"},
		{"v2_pad_reflect_too_large.yaml", "reflect needs each pad < the size"},
		{"v2_pad_crop_int64_min.yaml", "crops axis 1 (size 3) by more than its size"},
		{"v2_pad_overflow.yaml", "attribute 'pads' makes axis 1's size overflow"},
		{"v2_squeeze_not_one.yaml", "axis 1 of x has size 3; squeeze removes only axes of size 1"},
		{"v2_unsqueeze_dup_axes.yaml", "attribute 'axes'[1] names axis 0 twice"},
		{"v2_unsqueeze_rank_too_big.yaml", "x of rank 7 would become rank 9 (at most 8)"},
		{"v2_unsqueeze_missing_axes.yaml", "missing required attribute 'axes'"},
		{"reduce_axes_duplicate.yaml", "op 'r': axes[1] names dimension 1 a second time"},
		{"reduce_axes_out_of_range.yaml", "axes[1] is -4, out of range [-3, 2] for rank 3"},
		{"reduce_keepdims_two.yaml", "attribute 'keepdims' of op 'r' must be 0 or 1"},
		{"reduce_axes_not_list.yaml", "attribute 'axes' of op 'r' must be a list of at most 8"},
		{"reduce_in_v1_spec.yaml", "op 'reduce_mean' needs eulernpu: 2"},
		{"layer_norm_scale_shape.yaml",
		 "scale (4, 3) does not broadcast to x's normalized dims (3, 4) (axis 1)"},
		{"layer_norm_bias_shape.yaml", "bias (3, 4) does not broadcast to x's normalized dims (4,)"},
		{"layer_norm_axis_range.yaml", "axis 3 is out of range [-3, 2] for rank 3"},
		{"layer_norm_epsilon_negative.yaml", "epsilon must be >= 0"},
		{"layer_norm_four_inputs.yaml", "(layer_norm) takes 1 to 3 inputs, 'in' names 4"},
		{"convt_output_padding.yaml",
		 "output_padding must be >= 0 and smaller than the stride or the dilation, got [2, 1]"},
		{"resize_scales_and_sizes.yaml", "give one of 'scales' and 'sizes', not both"},
		{"resize_no_scales_or_sizes.yaml",
		 "missing required attribute: one of 'scales' or 'sizes'"},
		{"v1_uses_resize.yaml", "op 'resize' needs eulernpu: 2 (this spec is eulernpu: 1)"},
		{"v1_pool_ceil_mode.yaml",
		 "attribute 'ceil_mode' of op 'p' needs eulernpu: 2 (this spec is eulernpu: 1)"},
		{"v1_pool_dilations.yaml", "attribute 'dilations' of op 'p' needs eulernpu: 2"},
		{"v1_global_avgpool_1d.yaml", "x must be 4-D (N, C, H, W) in eulernpu: 1"},
		{"pool1d_kernel_too_long.yaml",
		 "output would be empty: padded length 8 is smaller than the kernel extent 9"},
		{"conv1d_kernel_too_long.yaml", "padded length 8 is smaller than the kernel extent 9"},
		{"conv1d_dilations_zero.yaml", "dilations must be >= 1, got [0]"},
		{"maxpool2d_dilations_zero.yaml", "dilations must be >= 1, got [1, 0]"},
		{"v2_split_sizes_sum.yaml", "split sizes sum to 5, dimension 1 of x is 6"},
		{"v2_split_out_count.yaml", "'split' has 3 sizes but 'out' names 2 tensors"},
		{"v2_split_uneven.yaml", "does not split into 2 equal parts: give 'split' sizes"},
		{"v2_int64_weight_used_by_add.yaml",
		 "op 'a' (add) reads 'idx' (int64) as input 2, which must be float32"},
		{"v2_gather_float_indices.yaml", "it must be an int64 weight, not a float32 weight"},
		{"v1_int64_weight.yaml", "dtype int64 of weight 'idx' needs eulernpu: 2"},
		{"v2_int64_input.yaml", "only weights may be int64"},
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

static void expect_shape(const enpu_irtensor *t, int n, const long long *d)
{
	cr_expect_eq(t->shape.ndim, n, "'%s' rank %d, want %d", t->name, t->shape.ndim, n);
	for (int i = 0; i < n && i < t->shape.ndim; i++)
		cr_expect_eq(t->shape.dim[i], d[i], "'%s' dim %d is %lld, want %lld", t->name, i,
			     (long long)t->shape.dim[i], d[i]);
}

/* spec v2 pad, slice, squeeze, unsqueeze: ONNX's shapes (crop then pad;
 * slice clamping with INT64_MIN/INT64_MAX and negative steps; squeeze of
 * every size-1 axis; unsqueeze's axes index the output), and the rules'
 * normalized attributes (what graph.json records). */
Test(validate, v2_move_shapes)
{
	enpu_spec *s = load_good("v2_move.yaml");
	enpu_graph *g = NULL;
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(enpu_validate(s, NULL, &g, &e), 0, "%s: %s", e.where, e.message);
	expect_shape(tensor(g, "h1"), 4, (long long[]){1, 3, 7, 5});
	expect_shape(tensor(g, "h2"), 4, (long long[]){1, 3, 3, 3});
	cr_expect_eq(g->ops[1].attrs.axes.n, 2);
	cr_expect_eq(g->ops[1].attrs.axes.v[0], 3, "axes -1 stored as 3");
	cr_expect_eq(g->ops[1].attrs.ends.v[0], INT64_MIN, "ends kept as written");
	expect_shape(tensor(g, "h3"), 3, (long long[]){3, 3, 3});
	cr_expect_eq(g->ops[2].attrs.axes.n, 1, "absent axes stored as the size-1 axes");
	cr_expect_eq(g->ops[2].attrs.axes.v[0], 0);
	expect_shape(tensor(g, "y"), 5, (long long[]){3, 1, 3, 3, 1});
	cr_expect_eq(g->ops[3].attrs.axes.v[0], 4, "unsqueeze axes -1 is the output's last");
	enpu_graph_free(g);
	enpu_spec_free(s);
}

/* g as graph.json into j1, read back into *back, written again: the same
 * bytes. */
static void json_round_trip(const enpu_graph *g, enpu_buf *j1, enpu_graph **back)
{
	enpu_buf j2 = ENPU_BUF_INIT;
	enpu_err e = ENPU_ERR_INIT;
	char *wname = NULL;

	cr_assert_eq(enpu_graph_to_json(g, "cpu_ref.npz", "spec", NULL, j1, &e), 0, "%s", e.message);
	cr_assert_eq(enpu_graph_from_json(j1->data, j1->len, "graph.json", NULL, back, &wname, &e), 0,
		     "%s", e.message);
	free(wname);
	cr_assert_eq(enpu_graph_to_json(*back, "cpu_ref.npz", "spec", NULL, &j2, &e), 0, "%s", e.message);
	cr_assert(j1->len == j2.len && memcmp(j1->data, j2.data, j2.len) == 0,
		  "graph.json changed through a round trip");
	enpu_buf_free(&j2);
}

/* The graph.json of root (then freed) is refused as an artifact error. */
static void expect_refused(json_object *root, const char *what)
{
	const char *txt = json_object_to_json_string(root);
	enpu_graph *g = NULL;
	enpu_err e = ENPU_ERR_INIT;
	char *wname = NULL;

	cr_expect_eq(enpu_graph_from_json(txt, strlen(txt), "graph.json", NULL, &g, &wname, &e), -1,
		     "%s accepted", what);
	cr_expect_eq(e.code, ENPU_E_ARTIFACT, "%s: %s", what, e.message);
	enpu_graph_free(g);
	free(wname);
	json_object_put(root);
}

/* split: an op with several outputs, in the IR and through graph.json
 * (written, read back, written again: the same bytes). */
Test(validate, split_outputs_and_graph_json_round_trip)
{
	enpu_spec *s = load_good("v2_split.yaml");
	enpu_graph *g = NULL, *back = NULL;
	enpu_err e = ENPU_ERR_INIT;
	enpu_buf j1 = ENPU_BUF_INIT;
	const enpu_irop *op;
	json_object *root, *outs;

	cr_assert_eq(enpu_validate(s, NULL, &g, &e), 0, "%s: %s", e.where, e.message);
	op = &g->ops[0];
	cr_assert_eq(op->def->id, ENPU_OP_SPLIT);
	cr_assert_eq(op->n_out, 3);
	cr_expect_eq(op->attrs.axis, 1);
	cr_expect_eq(op->out[0], enpu_graph_find(g, "a"));
	cr_expect_eq(op->out[2], enpu_graph_find(g, "c"));
	expect_dims(tensor(g, "a"), 2, 2, 1);
	expect_dims(tensor(g, "b"), 2, 2, 2);
	expect_dims(tensor(g, "c"), 2, 2, 3);
	expect_dims(tensor(g, "c1"), 2, 2, 1);   /* equal parts of c */
	expect_dims(tensor(g, "y"), 2, 2, 4);
	cr_expect_eq(tensor(g, "b")->producer, 0);
	cr_expect_eq(tensor(g, "c1")->producer, 1);
	cr_expect_eq(tensor(g, "b")->last_use, 2);
	json_round_trip(g, &j1, &back);
	root = json_tokener_parse(j1.data);
	cr_assert_not_null(root);
	outs = json_object_object_get(json_object_array_get_idx(json_object_object_get(root, "ops"),
								 0), "out");
	cr_assert_eq(json_object_array_length(outs), 3);
	cr_expect_str_eq(json_object_get_string(json_object_array_get_idx(outs, 1)), "b");
	cr_assert_eq(back->ops[0].n_out, 3);
	cr_assert_eq(back->ops[0].attrs.split.n, 3);
	cr_expect_eq(back->ops[0].attrs.split.v[2], 3);
	cr_assert_eq(back->ops[1].n_out, 3);
	cr_expect_eq(back->ops[1].attrs.split.n, 0);
	enpu_graph_free(back);
	/* op 0 writes one output fewer than its sizes: the reader refuses it */
	json_object_array_del_idx(outs, 2, 1);
	expect_refused(root, "split with an output dropped");
	enpu_buf_free(&j1);
	enpu_graph_free(g);
	enpu_spec_free(s);
}

/* gather's int64 indices: their dtype in the IR and in graph.json (round
 * trip, same bytes); a graph.json giving gather float32 indices, or an
 * int64 tensor that is not a weight, is refused. */
Test(validate, gather_int64_indices_in_graph_json)
{
	static const char *const muts[][2] = {{"idx", "float32"}, {"x", "int64"}};
	enpu_spec *s = load_good("v2_split_gather.yaml");
	enpu_graph *g = NULL, *back = NULL;
	enpu_err e = ENPU_ERR_INIT;
	enpu_buf j1 = ENPU_BUF_INIT;

	cr_assert_eq(enpu_validate(s, NULL, &g, &e), 0, "%s: %s", e.where, e.message);
	cr_expect_eq(tensor(g, "idx")->dtype, ENPU_DT_I64);
	expect_dims(tensor(g, "y"), 3, 2, 2);   /* b (2, 2) by idx (2, 2) on axis 1: (2, 2, 2) */
	json_round_trip(g, &j1, &back);
	cr_expect_eq(back->tensors[enpu_graph_find(back, "idx")].dtype, ENPU_DT_I64);
	enpu_graph_free(back);
	for (int k = 0; k < 2; k++) {
		json_object *root = json_tokener_parse(j1.data), *ts;

		cr_assert_not_null(root);
		ts = json_object_object_get(root, "tensors");
		for (size_t i = 0; i < json_object_array_length(ts); i++) {
			json_object *t = json_object_array_get_idx(ts, i);

			if (!strcmp(json_object_get_string(json_object_object_get(t, "name")), muts[k][0]))
				json_object_object_add(t, "dtype", json_object_new_string(muts[k][1]));
		}
		expect_refused(root, muts[k][0]);
	}
	enpu_buf_free(&j1);
	enpu_graph_free(g);
	enpu_spec_free(s);
}

/* test_import.c: enpu_import (common/import/) in-process. The models come
 * from tests/data/onnx/gen.py (ONNX's own helper, with outputs NumPy
 * computed): each is imported, the spec parsed, validated, compiled and
 * run on cpu_ref from memory, and compared with NumPy's outputs. Also:
 * folding (PyTorch's shape chain, an Expand-ed class token, ConstantOfShape
 * leave no op behind), symbolic dims bound and not, external data, auto_pad,
 * Softmax before and after opset 13, names, the one error listing every
 * unmappable node, limits, hostile bytes, and some of ONNX's node tests
 * (libonnx-testdata) against their own outputs. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "enpu.h"
#include "import.h"
#include "npz.h"
#include "digest.h"
#include "kmath.h"

#define DATA "tests/data/onnx/"
#define NODE "/usr/share/libonnx-testdata/data/node/"

static enpu_buf load(const char *path)
{
	enpu_buf b = ENPU_BUF_INIT;
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(enpu_read_file(path, 1u << 28, &b, &e), 0, "%s: %s", path, e.message);
	return b;
}

/* external data next to the model: ctx is the model's directory */
static int ext_read(void *ctx, const char *location, uint64_t offset, uint64_t length,
		    enpu_buf *out, enpu_err *e)
{
	char path[512];
	enpu_buf b = ENPU_BUF_INIT;

	snprintf(path, sizeof(path), "%s/%s", (const char *)ctx, location);
	if (enpu_read_file(path, 1u << 28, &b, e))
		return -1;
	if (offset > b.len || (length && length > b.len - offset)) {
		enpu_buf_free(&b);
		return enpu_fail(e, ENPU_E_IO, path, NULL, "short file");
	}
	enpu_buf_add(out, b.data + offset, length ? length : b.len - offset);
	enpu_buf_free(&b);
	return 0;
}

static int import_path(const char *path, const enpu_import_bind *bind, int nb, enpu_buf *spec,
		       enpu_buf *w, enpu_err *e)
{
	enpu_buf m = load(path);
	enpu_import_opts o = {0};
	int rc;

	o.bind = bind;
	o.n_bind = nb;
	o.ext = ext_read;
	o.ext_ctx = (void *)"tests/data/onnx";
	rc = enpu_import(m.data, m.len, path, &o, spec, w, e);
	enpu_buf_free(&m);
	return rc;
}

/* Parse, validate, compile (cpu_ref) and run spec with the inputs of
 * in_path; the results into *res. Returns the op count. */
static int run_spec(const enpu_buf *spec, const enpu_buf *w, enpu_tlist *in, enpu_tlist *res)
{
	enpu_err e = ENPU_ERR_INIT;
	enpu_spec *s = NULL;
	enpu_graph *g = NULL;
	enpu_target *t = NULL;
	enpu_tlist wl = ENPU_TLIST_INIT;
	enpu_compiled c;
	enpu_artifact *a = NULL;
	enpu_run_info info;
	char dir[64], digest[65];
	int n_ops;

	cr_assert_eq(enpu_spec_parse(spec->data, spec->len, "spec.yaml", NULL, &s, &e), 0,
		     "%s at %s\n%.*s", e.message, e.where, (int)spec->len, spec->data);
	cr_assert_eq(enpu_validate(s, "cpu_ref", &g, &e), 0, "%s at %s\n%.*s", e.message, e.where,
		     (int)spec->len, spec->data);
	n_ops = enpu_spec_n_ops(s);
	enpu_graph_free(g);
	cr_assert_eq(enpu_npz_read_mem(w->data, w->len, "weights.npz", NULL, &wl, &e), 0, "%s", e.message);
	enpu_sha256_hex(w->data, w->len, digest);
	cr_assert_eq(enpu_target_resolve(s, "cpu_ref", NULL, NULL, NULL, &t, &e), 0, "%s", e.message);
	cr_assert_eq(enpu_compile_mem(s, t, &wl, "weights.npz", digest, NULL, NULL, &c, &e), 0,
		     "%s at %s", e.message, e.where);
	strcpy(dir, "/tmp/enpu_import_XXXXXX");
	cr_assert(mkdtemp(dir));
	strcat(dir, "/a");
	cr_assert_eq(enpu_compiled_write(&c, dir, &e), 0, "%s", e.message);
	cr_assert_eq(enpu_artifact_load(dir, NULL, &a, &e), 0, "%s", e.message);
	cr_assert_eq(enpu_run_mem(a, in, "input.npz", res, NULL, NULL, NULL, NULL, &info, &e), 0,
		     "%s", e.message);
	char cmd[128];
	dir[strlen(dir) - 2] = 0;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
	enpu_artifact_free(a);
	enpu_compiled_free(&c);
	enpu_target_free(t);
	enpu_tlist_free(&wl);
	enpu_spec_free(s);
	return n_ops;
}

static void compare(const enpu_tlist *got, const enpu_tlist *want, double atol, double rtol,
		    const char *what)
{
	cr_assert_eq(got->n, want->n, "%s: %zu outputs, want %zu", what, got->n, want->n);
	for (size_t k = 0; k < want->n; k++) {
		const enpu_tensor *w = &want->items[k], *g = enpu_tlist_find(got, w->name);
		uint64_t n;
		char a[64], b[64];

		cr_assert(g, "%s: no output %s", what, w->name);
		cr_assert(enpu_shape_eq(&g->shape, &w->shape), "%s: %s has shape %s, want %s", what,
			  w->name, enpu_shape_str(&g->shape, a, sizeof(a)), enpu_shape_str(&w->shape, b, sizeof(b)));
		enpu_shape_numel(&w->shape, &n);
		for (uint64_t i = 0; i < n; i++)
			cr_assert(fabs((double)g->data[i] - w->data[i]) <= atol + rtol * fabs(w->data[i]),
				  "%s: %s[%llu] = %.9g, want %.9g", what, w->name, (unsigned long long)i,
				  g->data[i], w->data[i]);
	}
}

/* Import DATA name.onnx, run it on name.in.npz (or in_name's), compare with
 * .out.npz; returns the spec's op count; the spec text into *spec_out. */
static int check_case(const char *name, const char *io, const enpu_import_bind *bind, int nb,
		      enpu_buf *spec_out)
{
	char path[256];
	enpu_buf spec = ENPU_BUF_INIT, w = ENPU_BUF_INIT;
	enpu_tlist in = ENPU_TLIST_INIT, want = ENPU_TLIST_INIT, got = ENPU_TLIST_INIT;
	enpu_err e = ENPU_ERR_INIT;
	int n_ops;

	snprintf(path, sizeof(path), DATA "%s.onnx", name);
	cr_assert_eq(import_path(path, bind, nb, &spec, &w, &e), 0, "%s: %s", name, e.message);
	snprintf(path, sizeof(path), DATA "%s.in.npz", io ? io : name);
	cr_assert_eq(enpu_npz_read(path, path, NULL, &in, &e), 0, "%s", e.message);
	snprintf(path, sizeof(path), DATA "%s.out.npz", io ? io : name);
	cr_assert_eq(enpu_npz_read(path, path, NULL, &want, &e), 0, "%s", e.message);
	n_ops = run_spec(&spec, &w, &in, &got);
	compare(&got, &want, 1e-5, 1e-4, name);
	enpu_tlist_free(&in);
	enpu_tlist_free(&want);
	enpu_tlist_free(&got);
	if (spec_out)
		*spec_out = spec;
	else
		enpu_buf_free(&spec);
	enpu_buf_free(&w);
	return n_ops;
}

static int has(const enpu_buf *b, const char *s)
{
	return memmem(b->data, b->len, s, strlen(s)) != NULL;
}

Test(import, mlp_runs_like_numpy_and_reads_well)
{
	enpu_buf spec;

	cr_assert_eq(check_case("mlp", NULL, NULL, 0, &spec), 5);
	cr_assert(has(&spec, "# Imported by eulernpu import from " DATA "mlp.onnx"), "%.*s",
		  (int)spec.len, spec.data);
	cr_assert(has(&spec, "ONNX opset 13"));
	cr_assert(has(&spec, "eulernpu: 2\nname: mlp\n"));
	/* weights named after their initializers, ops and components after scopes */
	cr_assert(has(&spec, "{name: fc1.weight, dtype: float32, shape: [8, 16]}"));
	cr_assert(has(&spec, "  - name: fc1\n    ops:\n      - {name: fc1.MatMul, op: matmul"));
	cr_assert(has(&spec, "  - name: fc2\n    ops:\n      - {name: fc2.Gemm, op: gemm"), "%.*s",
		  (int)spec.len, spec.data);
	cr_assert(has(&spec, "attrs: {trans_b: 1}"));
	enpu_buf_free(&spec);
}

Test(import, cnn)
{
	cr_assert_eq(check_case("cnn", NULL, NULL, 0, NULL), 7);
}

Test(import, auto_pad_becomes_explicit_pads)
{
	enpu_buf spec;

	check_case("autopad", NULL, NULL, 0, &spec);
	cr_assert(has(&spec, "{name: up_2, op: conv2d, in: [x, wa], out: up, attrs: {strides: [2, 2], pads: [1, 1, 1, 1]}}"),
		  "%.*s", (int)spec.len, spec.data);
	cr_assert(has(&spec, "{name: low_2, op: conv2d, in: [x, wb], out: low, attrs: {strides: [1, 1], pads: [1, 1, 0, 0]}}"));
	enpu_buf_free(&spec);
}

/* Shape -> Gather -> Unsqueeze -> Concat -> Reshape: folded, one reshape
 * with a constant shape remains; the symbolic batch bound to 3, or 1. */
Test(import, torch_shape_chain_folds_with_bound_and_unbound_batch)
{
	enpu_import_bind b = {"x", {4, {3, 4, 2, 2}}};
	enpu_buf spec;

	cr_assert_eq(check_case("torch_reshape", NULL, &b, 1, &spec), 2);
	cr_assert(has(&spec, "{name: x, dtype: float32, shape: [3, 4, 2, 2]}"));
	cr_assert(has(&spec, "op: reshape, in: [x], out: Reshape_output_0, attrs: {shape: [3, -1]}"),
		  "%.*s", (int)spec.len, spec.data);
	cr_assert(!has(&spec, "Gather") && !has(&spec, "Concat"));
	enpu_buf_free(&spec);
	cr_assert_eq(check_case("torch_reshape", "torch_reshape_b1", NULL, 0, &spec), 2);
	cr_assert(has(&spec, "shape: [1, 4, 2, 2]}"));
	enpu_buf_free(&spec);
}

/* Gather with 2-D int64 and 1-D int32 constant indices: two spec
 * gathers, the indices int64 weights (spec.yaml and weights.npz). */
Test(import, gather_indices_become_int64_weights)
{
	enpu_buf spec;

	cr_assert_eq(check_case("gather", NULL, NULL, 0, &spec), 2);
	cr_assert(has(&spec, "op: gather, in: [x, i64], out: g, attrs: {axis: 1}"), "%.*s",
		  (int)spec.len, spec.data);
	cr_assert(has(&spec, "{name: i64, dtype: int64, shape: [3, 2]}"));
	cr_assert(has(&spec, "{name: i32, dtype: int64, shape: [2]}"));
	cr_assert(!has(&spec, "op: slice"));
	enpu_buf_free(&spec);
}

/* QuantizeLinear, QLinearMatMul, DequantizeLinear map one to one onto
 * spec v3's ops: the spec says eulernpu: 3, the int8 initializers are int8
 * weights, and the run gives NumPy's result by ONNX's definition. */
Test(import, quantised_ops_give_a_v3_spec_with_int8_weights)
{
	enpu_buf spec;

	cr_assert_eq(check_case("quant", NULL, NULL, 0, &spec), 3);
	cr_assert(has(&spec, "eulernpu: 3\nname: quant\n"), "%.*s", (int)spec.len, spec.data);
	cr_assert(has(&spec, "{name: b, dtype: int8, shape: [8, 4]}"));
	cr_assert(has(&spec, "{name: xz, dtype: int8, shape: []}"));
	cr_assert(has(&spec, "op: quantize_linear, in: [x, xs, xz]"));
	cr_assert(has(&spec, "op: qlinear_matmul, in: [xq, xs, xz, b, bs, bz, ys, yz], out: yq"));
	cr_assert(has(&spec, "op: dequantize_linear, in: [yq, ys, yz], out: y"));
	enpu_buf_free(&spec);
}

Test(import, a_symbolic_dim_bound_on_one_input_binds_the_others)
{
	enpu_import_bind b = {"a", {2, {4, 3}}};
	enpu_buf spec;

	check_case("two_inputs", NULL, &b, 1, &spec);
	cr_assert(has(&spec, "{name: b, dtype: float32, shape: [4, 3]}"), "%.*s", (int)spec.len, spec.data);
	enpu_buf_free(&spec);
}

Test(import, class_token_expand_and_constant_of_shape_fold)
{
	enpu_import_bind b = {"x", {3, {2, 4, 8}}};
	enpu_buf spec;

	cr_assert_eq(check_case("cls_token", NULL, &b, 1, &spec), 4);
	cr_assert(!has(&spec, "Expand") && !has(&spec, "Range") && !has(&spec, "Where"), "%.*s",
		  (int)spec.len, spec.data);
	/* the expanded token is a weight of the batch's size */
	cr_assert(has(&spec, "{name: ce, dtype: float32, shape: [2, 1, 8]}"));
	enpu_buf_free(&spec);
}

/* Sqrt and Exp of an initializer fold through the spec kernels: the
 * weights hold sqrtf's and enpu_expf's bits, as cpu_ref would compute. */
Test(import, float_constants_fold_through_the_kernels)
{
	static const float c[3] = {2.0f, 3.0f, 5.0f};
	enpu_buf m = load(DATA "fold_float.onnx"), spec = ENPU_BUF_INIT, w = ENPU_BUF_INIT;
	enpu_tlist wl = ENPU_TLIST_INIT;
	enpu_err e = ENPU_ERR_INIT;
	const enpu_tensor *s, *x;

	cr_assert_eq(check_case("fold_float", NULL, NULL, 0, NULL), 2);
	cr_assert_eq(enpu_import(m.data, m.len, "fold_float.onnx", NULL, &spec, &w, &e), 0, "%s", e.message);
	cr_assert(!has(&spec, "op: sqrt") && !has(&spec, "op: exp"), "%.*s", (int)spec.len, spec.data);
	cr_assert_eq(enpu_npz_read_mem(w.data, w.len, "weights.npz", NULL, &wl, &e), 0, "%s", e.message);
	s = enpu_tlist_find(&wl, "s");
	x = enpu_tlist_find(&wl, "e");
	cr_assert(s && x && wl.n == 2, "%.*s", (int)spec.len, spec.data);
	for (int k = 0; k < 3; k++) {
		float a = sqrtf(c[k]), b = enpu_expf(c[k]);
		cr_assert(memcmp(&s->data[k], &a, 4) == 0 && memcmp(&x->data[k], &b, 4) == 0);
	}
	enpu_tlist_free(&wl);
	enpu_buf_free(&spec);
	enpu_buf_free(&w);
	enpu_buf_free(&m);
}

Test(import, softmax_opset_11_coerces_opset_13_does_not)
{
	enpu_buf spec;

	cr_assert_eq(check_case("softmax11", NULL, NULL, 0, &spec), 3);
	cr_assert(has(&spec, "op: reshape") && has(&spec, "shape: [2, 12]"));
	enpu_buf_free(&spec);
	cr_assert_eq(check_case("softmax13", NULL, NULL, 0, &spec), 1);
	cr_assert(has(&spec, "op: softmax, in: [x], out: y, attrs: {axis: 1}"));
	enpu_buf_free(&spec);
}

Test(import, names_are_sanitized_unique_and_components_contiguous)
{
	enpu_buf spec;

	check_case("names", NULL, NULL, 0, &spec);
	cr_assert(has(&spec, "{name: input_0, dtype: float32, shape: [1, 4]}"), "%.*s", (int)spec.len,
		  spec.data);
	cr_assert(has(&spec, "{name: onnx__MatMul_5, dtype: float32"));
	cr_assert(has(&spec, "{name: layer_0.MatMul, op: matmul"));
	cr_assert(has(&spec, "{name: layer_0.MatMul_2, op: relu"));
	cr_assert(has(&spec, "outputs: [out_put]"));
	cr_assert(has(&spec, "  - name: layer_0\n") && has(&spec, "  - name: blk\n") &&
		  has(&spec, "  - name: layer_0_2\n"));
	enpu_buf_free(&spec);
}

Test(import, opset11_clip_reshape_sum_mean_identity_dropout)
{
	enpu_buf spec;

	check_case("misc11", NULL, NULL, 0, &spec);
	cr_assert(has(&spec, "attrs: {min: -0.5, max: 0.75}"), "%.*s", (int)spec.len, spec.data);
	cr_assert(!has(&spec, "Identity") && !has(&spec, "Dropout"));
	enpu_buf_free(&spec);
}

/* Outputs that are other values keep their ONNX names (result.npz's keys):
 * a copy each; one that is a graph input stays the input. */
Test(import, outputs_keep_their_names)
{
	enpu_buf spec;

	cr_assert_eq(check_case("aliases", NULL, NULL, 0, &spec), 3);
	cr_assert(has(&spec, "outputs: [r, y, z, x]"), "%.*s", (int)spec.len, spec.data);
	cr_assert(has(&spec, "{name: Identity, op: reshape, in: [r], out: y, attrs: {shape: [2, 3]}}"));
	enpu_buf_free(&spec);
}

Test(import, external_data_is_read_through_the_caller)
{
	enpu_buf m = load(DATA "external.onnx"), spec = ENPU_BUF_INIT, w = ENPU_BUF_INIT;
	enpu_err e = ENPU_ERR_INIT;

	check_case("external", NULL, NULL, 0, NULL);
	/* without a reader: E0404 naming the tensor and the file */
	cr_assert_eq(enpu_import(m.data, m.len, "external.onnx", NULL, &spec, &w, &e), -1);
	cr_assert_eq(e.code, ENPU_E_IMPORT);
	cr_assert(strstr(e.message, "external.data") && strstr(e.message, "fc1.weight"), "%s", e.message);
	enpu_buf_free(&m);
	/* a location with a ".." component is refused before the reader runs */
	cr_assert_eq(import_path(DATA "external_escape.onnx", NULL, 0, &spec, &w, &e), -1);
	cr_assert_eq(e.code, ENPU_E_IMPORT);
	cr_assert(strstr(e.message, "outside the model's directory"), "%s", e.message);
}

Test(import, every_unmappable_node_is_listed_once)
{
	enpu_buf spec = ENPU_BUF_INIT, w = ENPU_BUF_INIT;
	enpu_err e = ENPU_ERR_INIT;
	char out[2048];

	cr_assert_eq(import_path(DATA "unmappable.onnx", NULL, 0, &spec, &w, &e), -1);
	cr_assert_eq(e.code, ENPU_E_IMPORT);
	enpu_err_render(&e, out, sizeof(out));
	cr_assert(strstr(out, "error[E0404]") && strstr(out, "18 nodes cannot be imported"), "%s", out);
	cr_assert(strstr(out, "'topk_node' (TopK, opset 13): op TopK is not imported"), "%s", out);
	cr_assert(strstr(out, "'custom_node' (Foo, opset 13): domain 'com.example'"), "%s", out);
	cr_assert(strstr(out, "'nonzero_node' (NonZero"), "%s", out);
	cr_assert(strstr(out, "'hardmax_0' (Hardmax"), "%s", out);
	cr_assert(strstr(out, " more"), "%s", out);
	cr_assert(strstr(out, "'bad_gemm' (Gemm, opset 13): gemm: "), "%s", out);
	cr_assert(strstr(out, "'dropout_train' (Dropout, opset 13): training_mode"), "%s", out);
	cr_assert(strstr(out, "'clip_node' (Clip, opset 13): min is computed") ||
		  strstr(out, "'clip_node' (Clip, opset 13): min is not a constant"), "%s", out);
	cr_assert(!strstr(out, "fine_node") && !strstr(out, "after_topk") && !strstr(out, "after_gemm"),
		  "%s", out);
	cr_assert(strstr(out, "See: eulernpu explain E0404"), "%s", out);
}

Test(import, binding_errors_name_the_input)
{
	enpu_buf spec = ENPU_BUF_INIT, w = ENPU_BUF_INIT;
	enpu_err e = ENPU_ERR_INIT;
	enpu_import_bind nope = {"y", {1, {3}}}, rank = {"x", {2, {3, 16}}}, fixed = {"x", {4, {3, 5, 2, 2}}};

	cr_assert_eq(import_path(DATA "torch_reshape.onnx", &nope, 1, &spec, &w, &e), -1);
	cr_assert(e.code == ENPU_E_IMPORT && strstr(e.message, "'y'") &&
		  strstr(e.message, "not an input"), "%s", e.message);
	cr_assert_eq(import_path(DATA "torch_reshape.onnx", &rank, 1, &spec, &w, &e), -1);
	cr_assert(e.code == ENPU_E_IMPORT && strstr(e.message, "x") && strstr(e.message, "2 dims") &&
		  strstr(e.message, "has 4"), "%s", e.message);
	cr_assert_eq(import_path(DATA "torch_reshape.onnx", &fixed, 1, &spec, &w, &e), -1);
	cr_assert(e.code == ENPU_E_IMPORT && strstr(e.message, "fixes it at 4"), "%s", e.message);
	cr_assert_eq(import_path(DATA "zero_dim.onnx", NULL, 0, &spec, &w, &e), -1);
	cr_assert(e.code == ENPU_E_IMPORT && strstr(e.message, "'x' has dim 1 of size 0"), "%s", e.message);
}

Test(import, a_huge_folded_constant_is_a_limit_error)
{
	enpu_buf spec = ENPU_BUF_INIT, w = ENPU_BUF_INIT;
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(import_path(DATA "big_constant.onnx", NULL, 0, &spec, &w, &e), -1);
	cr_assert_eq(e.code, ENPU_E_LIMIT, "%s", e.message);
	cr_assert(strstr(e.message, "huge/ConstantOfShape") && strstr(e.message, "max_tensor_elems"),
		  "%s", e.message);
}

Test(import, opsets_outside_7_to_17_are_refused)
{
	/* libonnx-testdata's Gelu-free models carry their opset; build one by
	 * patching: the relu node test is opset >= 13 */
	enpu_buf m = load(DATA "softmax13.onnx"), spec = ENPU_BUF_INIT, w = ENPU_BUF_INIT;
	enpu_err e = ENPU_ERR_INIT;
	uint8_t *p = memmem(m.data, m.len, "\x10\x0d", 2);   /* opset_import.version = 13 */

	cr_assert(p);
	p[1] = 18;
	cr_assert_eq(enpu_import(m.data, m.len, "m.onnx", NULL, &spec, &w, &e), -1);
	cr_assert(e.code == ENPU_E_IMPORT && strstr(e.message, "opset 18"), "%s", e.message);
	enpu_buf_free(&m);
}

/* Truncated and bit-flipped models: E0403 or E0404, never a crash. */
Test(import, hostile_bytes)
{
	static const char *const names[] = {"cnn", "cls_token", "misc11", "names"};
	enpu_err e = ENPU_ERR_INIT;

	for (int f = 0; f < 4; f++) {
		char path[128];
		snprintf(path, sizeof(path), DATA "%s.onnx", names[f]);
		enpu_buf m = load(path);
		for (size_t cut = 0; cut < m.len; cut += 7) {
			enpu_buf spec = ENPU_BUF_INIT, w = ENPU_BUF_INIT;
			if (enpu_import(m.data, cut, path, NULL, &spec, &w, &e) == 0) {
				enpu_buf_free(&spec);
				enpu_buf_free(&w);
			} else {
				cr_assert(e.code == ENPU_E_ONNX || e.code == ENPU_E_IMPORT ||
					  e.code == ENPU_E_LIMIT, "%s", e.message);
			}
		}
		for (size_t k = 0; k < m.len; k += 3) {
			enpu_buf spec = ENPU_BUF_INIT, w = ENPU_BUF_INIT;
			m.data[k] ^= 0x5a;
			if (enpu_import(m.data, m.len, path, NULL, &spec, &w, &e) == 0) {
				enpu_buf_free(&spec);
				enpu_buf_free(&w);
			}
			m.data[k] ^= 0x5a;
		}
		enpu_buf_free(&m);
	}
	cr_assert_eq(enpu_import("garbage!", 8, "g.onnx", NULL, NULL, NULL, &e), -1);
	cr_assert_eq(e.code, ENPU_E_ONNX);
}

/* ONNX's own node tests: import, run on input_0.pb.., compare with
 * output_0.pb.. at ONNX's tolerance. */
static void node_test(const char *name)
{
	char path[512];
	enpu_buf spec = ENPU_BUF_INIT, w = ENPU_BUF_INIT;
	enpu_tlist in = ENPU_TLIST_INIT, want = ENPU_TLIST_INIT, got = ENPU_TLIST_INIT;
	enpu_err e = ENPU_ERR_INIT;
	enpu_onnx_model *m = NULL;

	snprintf(path, sizeof(path), NODE "%s/model.onnx", name);
	cr_assert_eq(import_path(path, NULL, 0, &spec, &w, &e), 0, "%s: %s", name, e.message);
	{
		enpu_buf mb = load(path);
		cr_assert_eq(enpu_onnx_read(mb.data, mb.len, path, NULL, &m, &e), 0);
		enpu_buf_free(&mb);
	}
	for (int io = 0; io < 2; io++) {
		size_t n = io ? m->n_out : m->n_in;
		for (size_t k = 0; k < n; k++) {
			enpu_onnx_tensor t;
			enpu_tensor x = {0};
			snprintf(path, sizeof(path), NODE "%s/test_data_set_0/%s_%zu.pb", name,
				 io ? "output" : "input", k);
			enpu_buf b = load(path);
			cr_assert_eq(enpu_onnx_read_tensor(b.data, b.len, path, NULL, &t, &e), 0);
			cr_assert(t.f, "%s: not float", path);
			x.name = strdup(io ? m->out[k].name : m->in[k].name);
			x.dtype = ENPU_DT_F32;
			x.shape = t.shape;
			x.data = t.f;
			t.f = NULL;
			cr_assert_eq(enpu_tlist_push(io ? &want : &in, &x, &e), 0);
			enpu_onnx_tensor_free(&t);
			enpu_buf_free(&b);
		}
	}
	run_spec(&spec, &w, &in, &got);
	compare(&got, &want, 1e-6, 1e-3, name);
	enpu_onnx_free(m);
	enpu_tlist_free(&in);
	enpu_tlist_free(&want);
	enpu_tlist_free(&got);
	enpu_buf_free(&spec);
	enpu_buf_free(&w);
}

Test(import, onnx_node_tests)
{
	static const char *const tests[] = {
		"test_relu", "test_conv_with_strides_padding", "test_conv_with_autopad_same",
		"test_gemm_default_matrix_bias", "test_gemm_transposeB", "test_softmax_axis_1",
		"test_softmax_default_axis", "test_maxpool_2d_pads", "test_maxpool_2d_same_upper",
		"test_averagepool_2d_same_lower", "test_flatten_axis1", "test_transpose_default",
		"test_concat_2d_axis_0", "test_batchnorm_example", "test_matmul_3d", "test_add_bcast",
		"test_leakyrelu", "test_clip_default_inbounds", "test_exp",
		"test_sqrt", "test_sum_example", "test_mean_example",
		"test_tanh", "test_sigmoid", "test_div_bcast", "test_neg", "test_abs",
	};

	for (size_t k = 0; k < sizeof(tests) / sizeof(tests[0]); k++)
		node_test(tests[k]);
}

/* test_v2conv.c: spec v2's conv and pool increment where the kernels and
 * the artifact meet it: ceil_mode's last window and its count, maxpool
 * dilations, conv1d and the 1-D pools as their 2-D ops with H = 1 (same
 * bits), global_avgpool over 1-D, and graph.json carrying ceil_mode and
 * maxpool2d's dilations only when not the default (v1 artifacts keep their
 * ids). Shapes are worked out by hand. */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "enpu.h"
#include "kernels.h"
#include "npz.h"
#include "buf.h"
#include "compile_util.h"
#include "kernels_util.h"

static char dir[64];

static void setup(void)
{
	strcpy(dir, "/tmp/enpu_v2conv_XXXXXX");
	cr_assert(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];

	release_all();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(v2conv, .init = setup, .fini = teardown);

/* a fixed spread of values in [-2, 2) (the bits matter, not the law) */
static enpu_view mkspread(enpu_shape s)
{
	static uint32_t st = 12345u;
	enpu_view v = mk(s);

	for (size_t i = 0; i < nel(&s); i++) {
		st = st * 1664525u + 1013904223u;
		v.data[i] = (float)(st >> 8) * 0x1p-22f - 2.0f;
	}
	return v;
}

static json_object *graph_of(const char *sub)
{
	char p[256];
	enpu_buf b = ENPU_BUF_INIT;
	enpu_err e = ENPU_ERR_INIT;
	json_object *g;

	snprintf(p, sizeof(p), "%s/%s/graph.json", dir, sub);
	cr_assert_eq(enpu_read_file(p, 0, &b, &e), 0, "%s", e.message);
	cr_assert((g = json_tokener_parse(b.data)));
	enpu_buf_free(&b);
	return g;
}

static int load(const char *sub, enpu_artifact **a, enpu_err *e)
{
	char p[128];

	snprintf(p, sizeof(p), "%s/%s", dir, sub);
	return enpu_artifact_load(p, NULL, a, e);
}

/* spec v2: ceil_mode's last window and its count, maxpool dilations, the
 * 1-D ops (their 2-D op with H = 1), global_avgpool over 1-D. */
Test(v2conv, pool_ceil_dilations_1d)
{
	/* x = 1..5 as (1, 1, 1, 5); kernel [1, 2], stride 2, pads r 1, ceil:
	 * W out ceil((6 - 2) / 2) + 1 = 3; windows [0,2) [2,4) [4,6): the last
	 * has one input tap and one pad tap */
	enpu_view x = mk(SHP(1, 1, 1, 5));
	fill(&x, (float[]){1, 2, 3, 4, 5});
	enpu_attrs a = attrs0();
	a.kernel[0] = 1;
	a.kernel[1] = 2;
	a.strides[0] = 1;
	a.strides[1] = 2;
	a.pads[3] = 1;
	a.ceil_mode = 1;
	enpu_view y = mk(SHP(1, 1, 1, 3));
	cr_assert_eq(enpu_k_avgpool2d(&a, &x, 1, &y, 1, NULL), 0);
	assert_same(&y, (float[]){1.5f, 3.5f, 5}, "avg exclude pad");
	a.count_include_pad = 1;
	cr_assert_eq(enpu_k_avgpool2d(&a, &x, 1, &y, 1, NULL), 0);
	assert_same(&y, (float[]){1.5f, 3.5f, 2.5f}, "avg include pad: 5 / 2");
	/* no end pad: the ceil window [4, 6) runs past the input; count 1 */
	a.pads[3] = 0;
	cr_assert_eq(enpu_k_avgpool2d(&a, &x, 1, &y, 1, NULL), 0);
	assert_same(&y, (float[]){1.5f, 3.5f, 5}, "include pad, past the end: 5 / 1");
	/* the same as avgpool1d on (1, 1, 5) */
	enpu_attrs b = attrs0();
	enpu_view x1 = x, y1 = y;
	x1.shape = SHP(1, 1, 5);
	y1.shape = SHP(1, 1, 3);
	b.kernel[0] = 2;
	b.strides[0] = 2;
	b.pads[1] = 1;
	b.ceil_mode = 1;
	b.count_include_pad = 1;
	cr_assert_eq(enpu_k_avgpool1d(&b, &x1, 1, &y1, 1, NULL), 0);
	assert_same(&y1, (float[]){1.5f, 3.5f, 2.5f}, "avgpool1d");
	/* maxpool1d, kernel 2 dilation 3 stride 1 pads [2, 0]: out
	 * (5 + 2 - 4) + 1 = 4, taps {-2, 1} {-1, 2} {0, 3} {1, 4} */
	b = attrs0();
	b.kernel[0] = 2;
	b.strides[0] = 1;
	b.dilations[0] = 3;
	b.pads[0] = 2;
	fill(&x1, (float[]){5, -1, 3, 2, -7});
	enpu_view y4 = mk(SHP(1, 1, 4));
	cr_assert_eq(enpu_k_maxpool1d(&b, &x1, 1, &y4, 1, NULL), 0);
	assert_same(&y4, (float[]){-1, 3, 5, -1}, "maxpool1d dilated");
	/* a dilated window with no valid tap gives -inf (x of length 1,
	 * pads [1, 0], kernel 2, dilation 2: taps {-1, 1}) */
	enpu_view xs = mk(SHP(1, 1, 1));
	enpu_view ys = mk(SHP(1, 1, 1));
	xs.data[0] = 4;
	b.dilations[0] = 2;
	b.pads[0] = 1;
	cr_assert_eq(enpu_k_maxpool1d(&b, &xs, 1, &ys, 1, NULL), 0);
	cr_assert(isinf(ys.data[0]) && ys.data[0] < 0, "no valid tap: -inf");
	/* NaN wins within a dilated window only when it is a tap */
	fill(&x1, (float[]){1, NAN, 3, 2, -7});
	cr_assert_eq(enpu_k_maxpool2d(&(enpu_attrs){.kernel = {1, 2}, .strides = {1, 1},
						     .dilations = {1, 2}},
				      &(enpu_view){SHP(1, 1, 1, 5), x1.data, ENPU_DT_F32}, 1,
				      &(enpu_view){SHP(1, 1, 1, 3), y4.data, ENPU_DT_F32}, 1, NULL), 0);
	cr_assert(fbits(y4.data[0]) == fbits(3) && isnan(y4.data[1]) && fbits(y4.data[2]) == fbits(3),
		  "taps {0,2} {1,3} {2,4}");
}

Test(v2conv, conv1d_is_conv2d_with_kh1)
{
	/* x (2, 4, 9), w (6, 2, 3), group 2, stride 2, pads [1, 2],
	 * dilation 2: the same bits as conv2d on (2, 4, 1, 9), (6, 2, 1, 3) */
	enpu_view in[3] = {mkspread(SHP(2, 4, 9)), mkspread(SHP(6, 2, 3)), mkspread(SHP(6))};
	enpu_view in2[3] = {{SHP(2, 4, 1, 9), in[0].data, ENPU_DT_F32}, {SHP(6, 2, 1, 3), in[1].data, ENPU_DT_F32}, in[2]};
	enpu_attrs a = attrs0(), a2 = attrs0();
	a.strides[0] = 2;
	a.pads[0] = 1;
	a.pads[1] = 2;
	a.dilations[0] = 2;
	a.group = a2.group = 2;
	a2.strides[1] = 2;
	a2.pads[1] = 1;
	a2.pads[3] = 2;
	a2.dilations[1] = 2;
	/* OL = (9 + 3 - 5) / 2 + 1 = 4 */
	enpu_view y = mk(SHP(2, 6, 4)), y2 = mk(SHP(2, 6, 1, 4));
	cr_assert_eq(enpu_k_conv1d(&a, in, 3, &y, 1, NULL), 0);
	cr_assert_eq(enpu_k_conv2d(&a2, in2, 3, &y2, 1, NULL), 0);
	cr_assert(memcmp(y.data, y2.data, 48 * sizeof(float)) == 0);
	/* and by hand for output (0, 0, 0): taps -1 (pad), 1, 3 of channels 0, 1 */
	float acc = 0.0f;
	for (int ci = 0; ci < 2; ci++)
		for (int k = 0; k < 3; k++) {
			int il = -1 + 2 * k;
			float v = il >= 0 ? in[0].data[ci * 9 + il] : 0.0f;
			acc = fmaf(in[1].data[ci * 3 + k], v, acc);
		}
	cr_assert_eq(fbits(y.data[0]), fbits(acc + in[2].data[0]));
}

Test(v2conv, global_avgpool_any_rank)
{
	enpu_view x = mk(SHP(2, 2, 3));
	fill(&x, (float[]){1, 2, 3, 0, 0, 1, -1, -1, -1, 8, 8, 9});
	enpu_view y = mk(SHP(2, 2, 1));
	enpu_attrs a = attrs0();
	cr_assert_eq(enpu_k_global_avgpool(&a, &x, 1, &y, 1, NULL), 0);
	assert_same(&y, (float[]){2, 1.0f / 3.0f, -1, 25.0f / 3.0f}, "gap 1-D");
}

/* ceil_mode and maxpool2d's dilations (spec v2) reach graph.json only when
 * not the default, so a v1 model's graph.json (and artifact id) stays as it
 * was; absent, they read back as the default, present as written (the
 * loader re-runs the shape rules: a lost ceil_mode would change y's shape). */
Test(v2conv, graph_json_v2_pool_attrs_only_when_not_default)
{
	static const char head[] =
		"name: pools\ninputs:\n  - {name: x, dtype: float32, shape: [1, 2, 7, 7]}\n"
		"outputs: [y]\nweights: []\ncomponents:\n  - name: main\n    ops:\n";
	static const char v1[] =
		"      - {name: m, op: maxpool2d, in: [x], out: h, attrs: {kernel: [2, 2]}}\n"
		"      - {name: a, op: avgpool2d, in: [h], out: y, attrs: {kernel: [2, 2]}}\n";
	static const char v2[] =
		"      - {name: m, op: maxpool2d, in: [x], out: h, attrs: {kernel: [2, 2], ceil_mode: 1,"
		" dilations: [2, 1]}}\n"
		"      - {name: a, op: avgpool2d, in: [h], out: y, attrs: {kernel: [2, 2], ceil_mode: 1}}\n";
	const char *body[2] = {v1, v2};
	enpu_tlist l = ENPU_TLIST_INIT;
	enpu_err e = ENPU_ERR_INIT;
	char w[128], text[1024], out[128];

	snprintf(w, sizeof(w), "%s/empty.npz", dir);
	cr_assert_eq(enpu_npz_write(w, &l, &e), 0, "%s", e.message);
	for (int v = 0; v < 2; v++) {
		enpu_compile_info info;
		enpu_spec *s = NULL;
		enpu_artifact *a = NULL;
		json_object *g, *ops, *at;
		char sub[8];

		snprintf(text, sizeof(text), "eulernpu: %d\n%s%s", v + 1, head, body[v]);
		cr_assert_eq(enpu_spec_parse(text, strlen(text), "spec.yaml", NULL, &s, &e), 0,
			     "%s", e.message);
		snprintf(sub, sizeof(sub), "p%d", v);
		snprintf(out, sizeof(out), "%s/%s", dir, sub);
		cr_assert_eq(compile_spec(s, "cpu_ref", w, "ab12", out, &info, &e), 0, "%s", e.message);
		enpu_spec_free(s);
		g = graph_of(sub);
		ops = json_object_object_get(g, "ops");
		for (int k = 0; k < 2; k++) {
			at = json_object_object_get(json_object_array_get_idx(ops, (size_t)k), "attrs");
			cr_expect_eq(json_object_object_get_ex(at, "ceil_mode", NULL), v == 1,
				     "v%d op %d: ceil_mode %s", v + 1, k, v ? "missing" : "written");
		}
		at = json_object_object_get(json_object_array_get_idx(ops, 0), "attrs");
		cr_expect_eq(json_object_object_get_ex(at, "dilations", NULL), v == 1);
		cr_expect_eq(json_object_object_length(at), v ? 5 : 3, "v%d maxpool2d attrs", v + 1);
		/* x 7x7: v1 floor 3x3 then 1x1; v2 ceil with dilations [2, 1]: 3x4, then 2x2 */
		cr_expect_eq(json_object_get_int(json_object_array_get_idx(json_object_object_get(
			tensor_entry(g, "y"), "shape"), 3)), v ? 2 : 1);
		json_object_put(g);
		cr_assert_eq(load(sub, &a, &e), 0, "%s", e.message);
		enpu_artifact_free(a);
	}
}

/* test_quant.c: spec v3's integer dtypes and quantised arithmetic: the
 * dtype table, the ops' type rules (ops.c enpu_op_out_dtype), the one
 * quantize and requantisation rule (kernels_q.c) at its edges (ties of
 * both signs, saturation at both ends, negative zero points, per-channel
 * scales, accumulators past 2^24, NaN), and the kernels against integer
 * arithmetic written out here, serial and on threads. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "kernels.h"
#include "ops.h"
#include "par.h"
#include "shape.h"
#include "tensor.h"
#include "view_util.h"

Test(quant, dtype_table)
{
	static const struct {
		enpu_dtype dt;
		const char *name, *descr;
		size_t size;
	} want[] = {
		{ENPU_DT_I8, "int8", "|i1", 1},
		{ENPU_DT_U8, "uint8", "|u1", 1},
		{ENPU_DT_I32, "int32", "<i4", 4},
		{ENPU_DT_F32, "float32", "<f4", 4},
		{ENPU_DT_I64, "int64", "<i8", 8},
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		cr_expect_str_eq(enpu_dtype_name(want[i].dt), want[i].name);
		cr_expect_str_eq(enpu_dtype_descr(want[i].dt), want[i].descr);
		cr_expect_eq(enpu_dtype_size(want[i].dt), want[i].size);
		cr_expect_eq(enpu_dtype_parse(want[i].name), want[i].dt);
		cr_expect_eq(enpu_dtype_from_descr(want[i].descr), want[i].dt);
	}
	cr_expect_eq(enpu_dtype_parse("int16"), ENPU_DT_INVALID);
	cr_expect_eq(enpu_dtype_from_descr("<i2"), ENPU_DT_INVALID);
	cr_expect_eq(enpu_dtype_from_descr(">i4"), ENPU_DT_INVALID);
}

static int rule(const char *op, const enpu_dtype *dt, int n, enpu_dtype *out, int *bad,
		char *why)
{
	static const char *const names[] = {"i0", "i1", "i2", "i3", "i4", "i5", "i6", "i7", "i8",
					    "i9", "i10", "i11", "i12", "i13", "i14", "i15"};

	return enpu_op_out_dtype(enpu_op_by_name(op), dt, n, names, out, bad, why, 200);
}

Test(quant, type_rules)
{
	enpu_dtype out = ENPU_DT_INVALID;
	int bad;
	char why[200];

	/* quantize_linear: the zero point's dtype, uint8 without one */
	cr_assert_eq(rule("quantize_linear", (enpu_dtype[]){ENPU_DT_F32, ENPU_DT_F32, ENPU_DT_I8}, 3,
			  &out, &bad, why), 0, "%s", why);
	cr_expect_eq(out, ENPU_DT_I8);
	cr_assert_eq(rule("quantize_linear", (enpu_dtype[]){ENPU_DT_F32, ENPU_DT_F32}, 2, &out, &bad,
			  why), 0);
	cr_expect_eq(out, ENPU_DT_U8);
	/* dequantize_linear of int32 (a bias) with its int32 zero point */
	cr_assert_eq(rule("dequantize_linear", (enpu_dtype[]){ENPU_DT_I32, ENPU_DT_F32, ENPU_DT_I32}, 3,
			  &out, &bad, why), 0);
	cr_expect_eq(out, ENPU_DT_F32);
	/* the integer GEMMs: int32 */
	cr_assert_eq(rule("matmul_integer", (enpu_dtype[]){ENPU_DT_U8, ENPU_DT_I8, ENPU_DT_U8, ENPU_DT_I8},
			  4, &out, &bad, why), 0);
	cr_expect_eq(out, ENPU_DT_I32);
	/* qlinear_conv: y_zp's dtype; the bias int32 */
	cr_assert_eq(rule("qlinear_conv", (enpu_dtype[]){ENPU_DT_U8, ENPU_DT_F32, ENPU_DT_U8, ENPU_DT_I8,
			  ENPU_DT_F32, ENPU_DT_I8, ENPU_DT_F32, ENPU_DT_I8, ENPU_DT_I32}, 9, &out, &bad,
			  why), 0, "%s", why);
	cr_expect_eq(out, ENPU_DT_I8);

	/* errors: int8 into a float op, the input named */
	cr_assert_eq(rule("add", (enpu_dtype[]){ENPU_DT_F32, ENPU_DT_I8}, 2, &out, &bad, why), -1);
	cr_expect_eq(bad, 1);
	cr_expect_str_eq(why, "reads 'i1' (int8) as input 2, which must be float32");
	/* a float scale given as int8 */
	cr_assert_eq(rule("quantize_linear", (enpu_dtype[]){ENPU_DT_F32, ENPU_DT_I8}, 2, &out, &bad,
			  why), -1);
	cr_expect_str_eq(why, "reads 'i1' (int8) as input 2, which must be float32");
	/* float32 into a quantised input: the accepted set listed */
	cr_assert_eq(rule("dequantize_linear", (enpu_dtype[]){ENPU_DT_F32, ENPU_DT_F32}, 2, &out, &bad,
			  why), -1);
	cr_expect_str_eq(why, "reads 'i0' (float32) as input 1, which must be int8, uint8 or int32");
	/* mixed types: a zero point not of its tensor's dtype */
	cr_assert_eq(rule("matmul_integer", (enpu_dtype[]){ENPU_DT_U8, ENPU_DT_I8, ENPU_DT_U8, ENPU_DT_U8},
			  4, &out, &bad, why), -1);
	cr_expect_eq(bad, 3);
	cr_expect_str_eq(why, "has mixed types: input 2 'i1' is int8 but input 4 'i3' is uint8");
	/* int64 stays gather's indices only */
	cr_assert_eq(rule("gather", (enpu_dtype[]){ENPU_DT_F32, ENPU_DT_I64}, 2, &out, &bad, why), 0);
	cr_assert_eq(rule("gather", (enpu_dtype[]){ENPU_DT_F32, ENPU_DT_I8}, 2, &out, &bad, why), -1);
	cr_expect_str_eq(why, "reads 'i1' (int8) as input 2, which must be int64");
	/* every v1/v2 op is float32 in, float32 out, but the data movement
	 * that spec v3 opened to integers and its integer maxpool2d and clip;
	 * every v3 op has a rule */
	for (int i = 0; i < ENPU_OP_COUNT; i++) {
		const enpu_opdef *d = enpu_op_by_id((enpu_opid)i);
		int moves = d->id == ENPU_OP_RESHAPE || d->id == ENPU_OP_FLATTEN ||
			    d->id == ENPU_OP_TRANSPOSE || d->id == ENPU_OP_CONCAT ||
			    d->id == ENPU_OP_MAXPOOL2D || d->id == ENPU_OP_CLIP;
		cr_expect_eq(d->types != NULL, d->since >= 3 || moves, "%s", d->name);
	}
	/* data movement passes integers through; concat's inputs share one */
	cr_assert_eq(rule("transpose", (enpu_dtype[]){ENPU_DT_U8}, 1, &out, &bad, why), 0);
	cr_expect_eq(out, ENPU_DT_U8);
	cr_assert_eq(rule("reshape", (enpu_dtype[]){ENPU_DT_I32}, 1, &out, &bad, why), 0);
	cr_expect_eq(out, ENPU_DT_I32);
	cr_assert_eq(rule("concat", (enpu_dtype[]){ENPU_DT_I8, ENPU_DT_I8, ENPU_DT_I8}, 3, &out, &bad,
			  why), 0);
	cr_expect_eq(out, ENPU_DT_I8);
	cr_assert_eq(rule("concat", (enpu_dtype[]){ENPU_DT_I8, ENPU_DT_I8, ENPU_DT_U8}, 3, &out, &bad,
			  why), -1);
	cr_expect_eq(bad, 2);
	cr_expect_str_eq(why, "has mixed types: input 1 'i0' is int8 but input 3 'i2' is uint8");
	cr_assert_eq(rule("flatten", (enpu_dtype[]){ENPU_DT_I64}, 1, &out, &bad, why), -1);
	cr_expect_str_eq(why, "reads 'i0' (int64) as input 1, which must be float32, int8, uint8 or int32");
}

Test(quant, round_half_even)
{
	cr_expect_eq(enpu_rne(0.5), 0.0);
	cr_expect_eq(enpu_rne(1.5), 2.0);
	cr_expect_eq(enpu_rne(2.5), 2.0);
	cr_expect_eq(enpu_rne(-0.5), 0.0);
	cr_expect_eq(enpu_rne(-1.5), -2.0);
	cr_expect_eq(enpu_rne(-2.5), -2.0);
	cr_expect_eq(enpu_rne(2.5000000001), 3.0);
	cr_expect_eq(enpu_rne(-2.4999999999), -2.0);
	cr_expect_eq(enpu_rne(4503599627370497.0), 4503599627370497.0);   /* 2^52 + 1 */
	cr_expect(isnan(enpu_rne(NAN)));
}

Test(quant, quantize_edges)
{
	/* ties go to even, both signs: 2.5 -> 2, 3.5 -> 4, -2.5 -> -2 */
	cr_expect_eq(enpu_quantize(5.0f, 2.0f, 0, ENPU_DT_I8), 2);
	cr_expect_eq(enpu_quantize(7.0f, 2.0f, 0, ENPU_DT_I8), 4);
	cr_expect_eq(enpu_quantize(-5.0f, 2.0f, 0, ENPU_DT_I8), -2);
	cr_expect_eq(enpu_quantize(-7.0f, 2.0f, 0, ENPU_DT_I8), -4);
	/* the zero point is added after rounding, then saturation */
	cr_expect_eq(enpu_quantize(5.0f, 2.0f, -3, ENPU_DT_I8), -1);
	cr_expect_eq(enpu_quantize(1000.0f, 1.0f, 0, ENPU_DT_I8), 127);
	cr_expect_eq(enpu_quantize(-1000.0f, 1.0f, 0, ENPU_DT_I8), -128);
	cr_expect_eq(enpu_quantize(-1000.0f, 1.0f, 128, ENPU_DT_U8), 0);
	cr_expect_eq(enpu_quantize(126.0f, 1.0f, 128, ENPU_DT_U8), 254);
	cr_expect_eq(enpu_quantize(300.0f, 1.0f, 0, ENPU_DT_U8), 255);
	cr_expect_eq(enpu_quantize(INFINITY, 1.0f, 0, ENPU_DT_I8), 127);
	cr_expect_eq(enpu_quantize(-INFINITY, 1.0f, 0, ENPU_DT_U8), 0);
	/* NaN: the zero point (dequantizes to 0.0) */
	cr_expect_eq(enpu_quantize(NAN, 1.0f, -7, ENPU_DT_I8), -7);
	cr_expect_eq(enpu_quantize(NAN, 1.0f, 200, ENPU_DT_U8), 200);
	/* x / s is a float32 division: 0.3f / 0.1f rounds to 3.0000002f, so 3 */
	cr_expect_eq(enpu_quantize(0.3f, 0.1f, 0, ENPU_DT_I8), 3);
}

Test(quant, requant_edges)
{
	float m = enpu_requant_multiplier(0.5f, 1.0f, 1.0f);   /* 0.5 exactly */

	cr_expect_eq(m, 0.5f);
	/* ties, both signs, to even */
	cr_expect_eq(enpu_requant(1, m, 0, ENPU_DT_I8), 0);
	cr_expect_eq(enpu_requant(3, m, 0, ENPU_DT_I8), 2);
	cr_expect_eq(enpu_requant(5, m, 0, ENPU_DT_I8), 2);
	cr_expect_eq(enpu_requant(-1, m, 0, ENPU_DT_I8), 0);
	cr_expect_eq(enpu_requant(-3, m, 0, ENPU_DT_I8), -2);
	cr_expect_eq(enpu_requant(-5, m, 0, ENPU_DT_I8), -2);
	/* negative zero points, saturation at both ends */
	cr_expect_eq(enpu_requant(-5, m, -100, ENPU_DT_I8), -102);
	cr_expect_eq(enpu_requant(-100, m, -100, ENPU_DT_I8), -128);
	cr_expect_eq(enpu_requant(1000, m, -100, ENPU_DT_I8), 127);
	cr_expect_eq(enpu_requant(-1000, m, 10, ENPU_DT_U8), 0);
	cr_expect_eq(enpu_requant(1000, m, 10, ENPU_DT_U8), 255);
	/* |acc| past 2^24: float32 would lose its low bits, double does not.
	 * (2^24 + 1) * 2^-24 = 1 + 2^-24 rounds to 1; (2^25 + 3) * 2^-25 ... */
	m = ldexpf(1.0f, -24);
	cr_expect_eq(enpu_requant((1 << 24) + 1, m, 0, ENPU_DT_I8), 1);
	cr_expect_eq(enpu_requant(3 * (1 << 23) , m, 0, ENPU_DT_I8), 2);      /* 1.5 -> 2 */
	cr_expect_eq(enpu_requant(5 * (1 << 23), m, 0, ENPU_DT_I8), 2);       /* 2.5 -> 2 */
	cr_expect_eq(enpu_requant(5 * (1 << 23) + 1, m, 0, ENPU_DT_I8), 3);   /* float32 would say 2 */
	cr_expect_eq(enpu_requant(-(5 * (1 << 23) + 1), m, 0, ENPU_DT_I8), -3);
	cr_expect_eq(enpu_requant(INT32_MAX, 1.0f, 0, ENPU_DT_I32), INT32_MAX);
	cr_expect_eq(enpu_requant(INT32_MIN, 2.0f, 0, ENPU_DT_I32), INT32_MIN);
	/* M: the product rounded to float32 first, then the quotient */
	{
		float a = 0.0066f, b = 0.00705f, y = 0.0107f, ab = a * b;
		cr_expect_eq(enpu_requant_multiplier(a, b, y), ab / y);
	}
}

Test(quant, quantize_per_axis_and_dequantize)
{
	float x[6] = {-1.0f, 0.25f, 3.0f, -3.0f, 1.0f, 2.5f}, s[3] = {0.5f, 0.25f, 1.0f};
	int8_t z[3] = {-1, 0, 5}, q[6];
	float back[6];
	enpu_view in[3] = {view(ENPU_DT_F32, x, 2, (int64_t[]){2, 3}), view(ENPU_DT_F32, s, 1, (int64_t[]){3}),
			   view(ENPU_DT_I8, z, 1, (int64_t[]){3})};
	enpu_view out = view(ENPU_DT_I8, q, 2, (int64_t[]){2, 3}), fo;
	enpu_attrs a;
	enpu_shape os;
	char why[200];

	enpu_attrs_defaults(enpu_op_by_name("quantize_linear"), &a);
	cr_assert_eq(enpu_s_quantize_linear(&a, (enpu_shape[]){in[0].shape, in[1].shape, in[2].shape}, 3,
					    &os, 1, why, sizeof why), 0, "%s", why);
	cr_assert_eq(enpu_k_quantize_linear(&a, in, 3, &out, 1, NULL), 0);
	/* per column (axis 1): s and z of column c */
	cr_expect_eq(q[0], -3);   /* -1 / 0.5 = -2, + -1 */
	cr_expect_eq(q[1], 1);    /* 0.25 / 0.25 = 1 */
	cr_expect_eq(q[2], 8);    /* 3 / 1 + 5 */
	cr_expect_eq(q[3], -7);
	cr_expect_eq(q[4], 4);
	cr_expect_eq(q[5], 7);    /* 2.5 -> 2 (even), + 5 */
	in[0] = out;
	fo = view(ENPU_DT_F32, back, 2, (int64_t[]){2, 3});
	cr_assert_eq(enpu_k_dequantize_linear(&a, in, 3, &fo, 1, NULL), 0);
	cr_expect_eq(back[0], -1.0f);
	cr_expect_eq(back[2], 3.0f);
	cr_expect_eq(back[5], 2.0f);
	/* axis out of range for a per-axis scale: the rule says so */
	a.axis = 2;
	cr_expect_eq(enpu_s_quantize_linear(&a, (enpu_shape[]){in[0].shape, in[1].shape, in[2].shape}, 3,
					    &os, 1, why, sizeof why), -1);
	cr_expect(strstr(why, "axis 2 is out of range"), "%s", why);
}

/* qlinear_matmul of a (B, M, K) uint8 and b (K, N) int8 with b's scale and
 * zero point per column, against the rule written out here; and the same
 * bytes on 3 threads. */
Test(quant, qlinear_matmul_per_column_threads)
{
	enum { B = 2, M = 3, K = 7, N = 5 };
	uint8_t a[B * M * K], az = 131, y1[B * M * N], y2[B * M * N];
	int8_t b[K * N], bz[N] = {-3, 0, 4, -128, 127};
	float as = 0.02f, bs[N] = {0.01f, 0.05f, 0.003f, 0.5f, 0.0007f}, ys = 0.03f;
	uint8_t yz = 120;
	enpu_view in[8], out;
	enpu_attrs at;
	enpu_par *par = enpu_par_create(3);

	for (int i = 0; i < B * M * K; i++)
		a[i] = (uint8_t)(i * 37 + 11);
	for (int i = 0; i < K * N; i++)
		b[i] = (int8_t)(i * 53 - 90);
	in[0] = view(ENPU_DT_U8, a, 3, (int64_t[]){B, M, K});
	in[1] = view(ENPU_DT_F32, &as, 0, NULL);
	in[2] = view(ENPU_DT_U8, &az, 0, NULL);
	in[3] = view(ENPU_DT_I8, b, 2, (int64_t[]){K, N});
	in[4] = view(ENPU_DT_F32, bs, 1, (int64_t[]){N});
	in[5] = view(ENPU_DT_I8, bz, 1, (int64_t[]){N});
	in[6] = view(ENPU_DT_F32, &ys, 0, NULL);
	in[7] = view(ENPU_DT_U8, &yz, 0, NULL);
	out = view(ENPU_DT_U8, y1, 3, (int64_t[]){B, M, N});
	enpu_attrs_defaults(enpu_op_by_name("qlinear_matmul"), &at);
	cr_assert_eq(enpu_k_qlinear_matmul(&at, in, 8, &out, 1, NULL), 0);
	for (int bi = 0; bi < B; bi++)
		for (int i = 0; i < M; i++)
			for (int j = 0; j < N; j++) {
				int32_t acc = 0;
				double v;
				float mult = (as * bs[j]) / ys;
				int r;

				for (int k = 0; k < K; k++)
					acc += (a[(bi * M + i) * K + k] - az) * (b[k * N + j] - bz[j]);
				v = (double)acc * (double)mult;
				r = (int)nearbyint(v) + yz;   /* default rounding: to even */
				r = r < 0 ? 0 : r > 255 ? 255 : r;
				cr_expect_eq(y1[(bi * M + i) * N + j], r, "(%d, %d, %d)", bi, i, j);
			}
	out.data = (float *)(void *)y2;
	cr_assert_eq(enpu_k_qlinear_matmul(&at, in, 8, &out, 1, par), 0);
	cr_expect(memcmp(y1, y2, sizeof y1) == 0, "threads change no byte");
	enpu_par_destroy(par);
}

/* conv_integer with padding and a per-output-channel w_zp, group 2, and
 * qlinear_conv with a bias, against the sums written out here. */
Test(quant, conv_integer_and_qlinear_conv)
{
	enum { C = 4, H = 5, W = 4, M = 2, CG = 2, KH = 3, KW = 2 };
	int8_t x[C * H * W], w[M * CG * KH * KW], xz = -5, wz[M] = {3, -2}, yz = -10;
	int32_t acc[M * H * (W + 1)], bias[M] = {1000, -70000};
	int8_t y[M * H * (W + 1)];
	float xs = 0.1f, wsc[M] = {0.02f, 0.3f}, ys = 0.25f;
	enpu_attrs at;
	enpu_view in[9], out;
	enpu_shape os;
	char why[200];

	for (int i = 0; i < C * H * W; i++)
		x[i] = (int8_t)(i * 29 - 100);
	for (int i = 0; i < M * CG * KH * KW; i++)
		w[i] = (int8_t)(i * 71 + 3);
	enpu_attrs_defaults(enpu_op_by_name("conv_integer"), &at);
	at.group = 2;
	at.pads[0] = at.pads[1] = at.pads[2] = at.pads[3] = 1;
	in[0] = view(ENPU_DT_I8, x, 4, (int64_t[]){1, C, H, W});
	in[1] = view(ENPU_DT_I8, w, 4, (int64_t[]){M, CG, KH, KW});
	in[2] = view(ENPU_DT_I8, &xz, 0, NULL);
	in[3] = view(ENPU_DT_I8, wz, 1, (int64_t[]){M});
	cr_assert_eq(enpu_s_conv_integer(&at, (enpu_shape[]){in[0].shape, in[1].shape, in[2].shape,
				in[3].shape}, 4, &os, 1, why, sizeof why), 0, "%s", why);
	cr_assert(os.dim[1] == M && os.dim[2] == H && os.dim[3] == W + 1);
	out = view(ENPU_DT_I32, acc, 4, os.dim);
	cr_assert_eq(enpu_k_conv_integer(&at, in, 4, &out, 1, NULL), 0);
	for (int m = 0; m < M; m++)
		for (int oh = 0; oh < H; oh++)
			for (int ow = 0; ow < W + 1; ow++) {
				int32_t s = 0;
				for (int ci = 0; ci < CG; ci++)
					for (int kh = 0; kh < KH; kh++)
						for (int kw = 0; kw < KW; kw++) {
							int ih = oh - 1 + kh, iw = ow - 1 + kw;
							int xv = ih < 0 || ih >= H || iw < 0 || iw >= W ? xz :
								 x[((m * CG + ci) * H + ih) * W + iw];
							s += (xv - xz) * (w[((m * CG + ci) * KH + kh) * KW + kw] - wz[m]);
						}
				cr_expect_eq(acc[(m * H + oh) * (W + 1) + ow], s, "(%d, %d, %d)", m, oh, ow);
			}
	/* qlinear_conv: x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, bias */
	in[3] = in[1];
	in[5] = view(ENPU_DT_I8, wz, 1, (int64_t[]){M});
	in[1] = view(ENPU_DT_F32, &xs, 0, NULL);
	in[4] = view(ENPU_DT_F32, wsc, 1, (int64_t[]){M});
	in[6] = view(ENPU_DT_F32, &ys, 0, NULL);
	in[7] = view(ENPU_DT_I8, &yz, 0, NULL);
	in[8] = view(ENPU_DT_I32, bias, 1, (int64_t[]){M});
	out = view(ENPU_DT_I8, y, 4, os.dim);
	cr_assert_eq(enpu_k_qlinear_conv(&at, in, 9, &out, 1, NULL), 0);
	for (int m = 0; m < M; m++)
		for (int i = 0; i < H * (W + 1); i++)
			cr_expect_eq(y[m * H * (W + 1) + i],
				     enpu_requant(acc[m * H * (W + 1) + i] + bias[m],
						  enpu_requant_multiplier(xs, wsc[m], ys), yz, ENPU_DT_I8));
	/* the large negative bias saturates channel 1 at -128 */
	cr_expect_eq(y[H * (W + 1)], -128);
}

/* reshape (copy), transpose and concat move int8 and int32 elements as
 * they move float32s: byte for byte, on any thread count */
Test(quant, integer_data_movement)
{
	int8_t x[24], t[24], cat[48];
	int32_t xi[6] = {1, -2, 70000, INT32_MIN, INT32_MAX, 5}, ti[6];
	enpu_attrs at;
	enpu_view in[2], out;
	enpu_par *par = enpu_par_create(2);

	for (int i = 0; i < 24; i++)
		x[i] = (int8_t)(i * 11 - 128);
	enpu_attrs_defaults(enpu_op_by_name("transpose"), &at);
	at.n_perm = 3;
	at.perm[0] = 2, at.perm[1] = 0, at.perm[2] = 1;
	in[0] = view(ENPU_DT_I8, x, 3, (int64_t[]){2, 3, 4});
	out = view(ENPU_DT_I8, t, 3, (int64_t[]){4, 2, 3});
	cr_assert_eq(enpu_k_transpose(&at, in, 1, &out, 1, par), 0);
	for (int a = 0; a < 2; a++)
		for (int b = 0; b < 3; b++)
			for (int c = 0; c < 4; c++)
				cr_expect_eq(t[(c * 2 + a) * 3 + b], x[(a * 3 + b) * 4 + c]);
	enpu_attrs_defaults(enpu_op_by_name("concat"), &at);
	at.axis = 1;
	in[1] = view(ENPU_DT_I8, t, 3, (int64_t[]){2, 3, 4});
	out = view(ENPU_DT_I8, cat, 3, (int64_t[]){2, 6, 4});
	cr_assert_eq(enpu_k_concat(&at, in, 2, &out, 1, NULL), 0);
	cr_expect(memcmp(cat, x, 12) == 0 && memcmp(cat + 12, t, 12) == 0 &&
		  memcmp(cat + 24, x + 12, 12) == 0 && memcmp(cat + 36, t + 12, 12) == 0);
	enpu_attrs_defaults(enpu_op_by_name("transpose"), &at);
	in[0] = view(ENPU_DT_I32, xi, 2, (int64_t[]){2, 3});
	out = view(ENPU_DT_I32, ti, 2, (int64_t[]){3, 2});
	cr_assert_eq(enpu_k_transpose(&at, in, 1, &out, 1, NULL), 0);
	cr_expect(ti[0] == 1 && ti[1] == INT32_MIN && ti[2] == -2 && ti[3] == INT32_MAX &&
		  ti[4] == 70000 && ti[5] == 5);
	out = view(ENPU_DT_I32, ti, 1, (int64_t[]){6});
	cr_assert_eq(enpu_k_copy(&at, in, 1, &out, 1, NULL), 0);
	cr_expect(memcmp(ti, xi, sizeof xi) == 0);
	enpu_par_destroy(par);
}

/* ---- spec v3's integer forms (kernels_qew.c) ---------------------------- */

/* the type rules of the integer forms: maxpool2d and clip keep int8; the
 * qlinear ops want one dtype for a, b, y; qlinear_concat's triples repeat */
Test(quant, integer_form_type_rules)
{
	enpu_dtype out = ENPU_DT_INVALID;
	int bad;
	char why[200];
	const enpu_dtype F = ENPU_DT_F32, U = ENPU_DT_U8, I = ENPU_DT_I8;

	cr_assert_eq(rule("maxpool2d", (enpu_dtype[]){I}, 1, &out, &bad, why), 0, "%s", why);
	cr_expect_eq(out, I);
	cr_assert_eq(rule("clip", (enpu_dtype[]){U}, 1, &out, &bad, why), 0, "%s", why);
	cr_expect_eq(out, U);
	cr_assert_eq(rule("clip", (enpu_dtype[]){F}, 1, &out, &bad, why), 0, "%s", why);
	cr_expect_eq(out, F);
	cr_expect_eq(rule("clip", (enpu_dtype[]){ENPU_DT_I32}, 1, &out, &bad, why), -1);
	cr_assert_eq(rule("qlinear_add", (enpu_dtype[]){U, F, U, U, F, U, F, U}, 8, &out, &bad, why), 0,
		     "%s", why);
	cr_expect_eq(out, U);
	cr_expect_eq(rule("qlinear_mul", (enpu_dtype[]){U, F, U, I, F, I, F, U}, 8, &out, &bad, why), -1);
	cr_expect_eq(bad, 3);
	cr_expect(strstr(why, "mixed types"), "%s", why);
	cr_assert_eq(rule("qlinear_global_avgpool", (enpu_dtype[]){I, F, I, F, I}, 5, &out, &bad, why), 0,
		     "%s", why);
	cr_expect_eq(out, I);
	/* concat: y_scale, y_zp, (x, s, zp) x 3 */
	cr_assert_eq(rule("qlinear_concat", (enpu_dtype[]){F, U, U, F, U, U, F, U, U, F, U}, 11, &out,
			  &bad, why), 0, "%s", why);
	cr_expect_eq(out, U);
	/* the third triple's scale int8: input 10 */
	cr_expect_eq(rule("qlinear_concat", (enpu_dtype[]){F, U, U, F, U, U, F, U, U, U, U}, 11, &out,
			  &bad, why), -1);
	cr_expect_eq(bad, 9);
	/* the second triple's zero point unlike its x (and y's) */
	cr_expect_eq(rule("qlinear_concat", (enpu_dtype[]){F, I, I, F, I, I, F, U}, 8, &out, &bad, why), -1);
	cr_expect_eq(bad, 7);
	cr_expect(strstr(why, "mixed types: input 6"), "%s", why);
}

Test(quant, clip_and_maxpool_int8)
{
	int8_t x[8] = {-128, -3, -2, 0, 1, 2, 5, 127}, y[8];
	uint8_t ux[4] = {0, 9, 10, 255}, uy[4];
	enpu_view in = view(ENPU_DT_I8, x, 1, (int64_t[]){8}), out = view(ENPU_DT_I8, y, 1, (int64_t[]){8});
	enpu_attrs a;

	enpu_attrs_defaults(enpu_op_by_name("clip"), &a);
	/* bounds round inward: [-2.5, 1.5] -> [-2, 1] */
	a.min = -2.5f;
	a.max = 1.5f;
	cr_assert_eq(enpu_k_clip(&a, &in, 1, &out, 1, NULL), 0);
	cr_expect_arr_eq(y, ((int8_t[]){-2, -2, -2, 0, 1, 1, 1, 1}), 8);
	/* infinite bounds: the dtype's range, nothing changes */
	a.min = -INFINITY;
	a.max = INFINITY;
	cr_assert_eq(enpu_k_clip(&a, &in, 1, &out, 1, NULL), 0);
	cr_expect_arr_eq(y, x, 8);
	/* min > max gives max (lower bound first) */
	a.min = 3.0f;
	a.max = -1.0f;
	cr_assert_eq(enpu_k_clip(&a, &in, 1, &out, 1, NULL), 0);
	cr_expect_arr_eq(y, ((int8_t[]){-1, -1, -1, -1, -1, -1, -1, -1}), 8);
	/* uint8, bounds past the range clamp to it */
	in = view(ENPU_DT_U8, ux, 1, (int64_t[]){4});
	out = view(ENPU_DT_U8, uy, 1, (int64_t[]){4});
	a.min = 10.0f;
	a.max = 1000.0f;
	cr_assert_eq(enpu_k_clip(&a, &in, 1, &out, 1, NULL), 0);
	cr_expect_arr_eq(uy, ((uint8_t[]){10, 10, 10, 255}), 4);

	/* maxpool2d 2x2 stride 2 with a pad of 1 on int8: padding never wins,
	 * even over -128 */
	{
		int8_t px[9] = {-128, -128, -100, -128, -50, -128, 7, -128, -128}, py[4];
		enpu_view pi = view(ENPU_DT_I8, px, 4, (int64_t[]){1, 1, 3, 3});
		enpu_view po = view(ENPU_DT_I8, py, 4, (int64_t[]){1, 1, 2, 2});
		enpu_shape os;
		char why[200];

		enpu_attrs_defaults(enpu_op_by_name("maxpool2d"), &a);
		a.kernel[0] = a.kernel[1] = 2;
		a.strides[0] = a.strides[1] = 2;
		a.pads[0] = a.pads[1] = a.pads[2] = a.pads[3] = 1;
		a.set |= 3u;   /* kernel, strides given */
		cr_assert_eq(enpu_s_maxpool2d(&a, &pi.shape, 1, &os, 1, why, sizeof why), 0, "%s", why);
		cr_assert_eq(os.dim[2], 2);
		cr_assert_eq(enpu_k_maxpool2d(&a, &pi, 1, &po, 1, NULL), 0);
		cr_expect_arr_eq(py, ((int8_t[]){-128, -100, 7, -50}), 4);
	}
}

/* the add rule written out: saturate(zp + rne(ta + tb)) */
static int ref_add(int a, int az, float as, int b, int bz, float bs, float ys, int yz, int lo, int hi)
{
	float ma = as / ys, mb = bs / ys;
	double v = (double)(a - az) * (double)ma + (double)(b - bz) * (double)mb;
	double r = nearbyint(v) + yz;   /* default rounding: to even */

	return r < lo ? lo : r > hi ? hi : (int)r;
}

Test(quant, qlinear_add_mul_edges_broadcast)
{
	/* a [2, 3] uint8, b [3] (broadcast along rows) */
	uint8_t a[6] = {0, 128, 255, 130, 129, 127}, b[3] = {128, 0, 255}, az = 128, bz = 128, yz = 128;
	uint8_t y[6], y2[6];
	float as = 0.5f, bs = 0.5f, ys = 1.0f;
	enpu_view in[8] = {view(ENPU_DT_U8, a, 2, (int64_t[]){2, 3}), view(ENPU_DT_F32, &as, 0, NULL),
			   view(ENPU_DT_U8, &az, 0, NULL), view(ENPU_DT_U8, b, 1, (int64_t[]){3}),
			   view(ENPU_DT_F32, &bs, 0, NULL), view(ENPU_DT_U8, &bz, 0, NULL),
			   view(ENPU_DT_F32, &ys, 0, NULL), view(ENPU_DT_U8, &yz, 0, NULL)};
	enpu_view out = view(ENPU_DT_U8, y, 2, (int64_t[]){2, 3});
	enpu_attrs at;
	enpu_shape os, ins[8];
	char why[200];
	enpu_par *par = enpu_par_create(2);

	enpu_attrs_defaults(enpu_op_by_name("qlinear_add"), &at);
	for (int i = 0; i < 8; i++)
		ins[i] = in[i].shape;
	cr_assert_eq(enpu_s_qlinear_binary(&at, ins, 8, &os, 1, why, sizeof why), 0, "%s", why);
	cr_expect_eq(os.ndim, 2);
	cr_expect_eq(os.dim[1], 3);
	cr_assert_eq(enpu_k_qlinear_add(&at, in, 8, &out, 1, NULL), 0);
	/* (0-128)/2 + 0 = -64 -> 64; 0 + (0-128)/2 = -64 -> 64; (127 + 127)/2 = 127 -> 255;
	 * row 2: 1 + 0 = 1 -> 129; 0.5 - 64 = -63.5 -> -64 (even) -> 64;
	 * -0.5 + 63.5 = 63 -> 191 */
	cr_expect_arr_eq(y, ((uint8_t[]){64, 64, 255, 129, 64, 191}), 6);
	for (int i = 0; i < 6; i++)
		cr_expect_eq(y[i], ref_add(a[i], az, as, b[i % 3], bz, bs, ys, yz, 0, 255), "%d", i);
	/* ties both ways: (129-128)*0.5 = 0.5 -> 0; (127-128)*0.5 = -0.5 -> 0 */
	{
		uint8_t ta[2] = {129, 127}, tb = 128, ty[2];
		enpu_view ti[8];

		memcpy(ti, in, sizeof ti);
		ti[0] = view(ENPU_DT_U8, ta, 1, (int64_t[]){2});
		ti[3] = view(ENPU_DT_U8, &tb, 0, NULL);
		out = view(ENPU_DT_U8, ty, 1, (int64_t[]){2});
		cr_assert_eq(enpu_k_qlinear_add(&at, ti, 8, &out, 1, NULL), 0);
		cr_expect_eq(ty[0], 128);
		cr_expect_eq(ty[1], 128);
	}
	/* the sum in double: 2.5 + 2^-30 rounds to 3; in float32 it would be
	 * 2.5, then 2 (even) */
	{
		int8_t pa = 5, pb = 1, pz = 0, py;
		float sa = 0.5f, sb = ldexpf(1.0f, -30), sy = 1.0f;
		enpu_view pi[8] = {view(ENPU_DT_I8, &pa, 0, NULL), view(ENPU_DT_F32, &sa, 0, NULL),
				   view(ENPU_DT_I8, &pz, 0, NULL), view(ENPU_DT_I8, &pb, 0, NULL),
				   view(ENPU_DT_F32, &sb, 0, NULL), view(ENPU_DT_I8, &pz, 0, NULL),
				   view(ENPU_DT_F32, &sy, 0, NULL), view(ENPU_DT_I8, &pz, 0, NULL)};

		out = view(ENPU_DT_I8, &py, 0, NULL);
		cr_assert_eq(enpu_k_qlinear_add(&at, pi, 8, &out, 1, NULL), 0);
		cr_expect_eq(py, 3, "t_a + t_b in double: got %d", py);
	}
	/* int8 with negative zero points, scales that are not powers of 2,
	 * against the rule; saturation at -128 */
	{
		int8_t ia[5] = {-128, -60, 0, 60, 127}, ib[5] = {127, -5, 3, -128, 0}, iz = -7, jz = -100,
		       kz = -3, iy[5];
		float s1 = 0.0137f, s2 = 0.0291f, s3 = 0.0173f;
		enpu_view ii[8] = {view(ENPU_DT_I8, ia, 1, (int64_t[]){5}), view(ENPU_DT_F32, &s1, 0, NULL),
				   view(ENPU_DT_I8, &iz, 0, NULL), view(ENPU_DT_I8, ib, 1, (int64_t[]){5}),
				   view(ENPU_DT_F32, &s2, 0, NULL), view(ENPU_DT_I8, &jz, 0, NULL),
				   view(ENPU_DT_F32, &s3, 0, NULL), view(ENPU_DT_I8, &kz, 0, NULL)};

		out = view(ENPU_DT_I8, iy, 1, (int64_t[]){5});
		cr_assert_eq(enpu_k_qlinear_add(&at, ii, 8, &out, 1, NULL), 0);
		for (int i = 0; i < 5; i++)
			cr_expect_eq(iy[i], ref_add(ia[i], iz, s1, ib[i], jz, s2, s3, kz, -128, 127), "%d", i);
		cr_expect_eq(iy[0], ref_add(-128, -7, s1, 127, -100, s2, s3, -3, -128, 127));
		/* mul: requant((a - az)(b - bz), fl32(fl32(s1 * s2) / s3)) */
		cr_assert_eq(enpu_k_qlinear_mul(&at, ii, 8, &out, 1, NULL), 0);
		for (int i = 0; i < 5; i++)
			cr_expect_eq(iy[i], enpu_requant((ia[i] + 7) * (ib[i] + 100),
							 (s1 * s2) / s3, -3, ENPU_DT_I8), "%d", i);
		cr_expect_eq(iy[4], 127, "saturates");   /* 134 * 100 * 0.023 */
	}
	/* threads: the same bytes */
	out = view(ENPU_DT_U8, y2, 2, (int64_t[]){2, 3});
	cr_assert_eq(enpu_k_qlinear_add(&at, in, 8, &out, 1, par), 0);
	out = view(ENPU_DT_U8, y, 2, (int64_t[]){2, 3});
	cr_assert_eq(enpu_k_qlinear_add(&at, in, 8, &out, 1, NULL), 0);
	cr_expect(memcmp(y, y2, sizeof y) == 0);
	enpu_par_destroy(par);
}

Test(quant, qlinear_pools)
{
	/* x [1, 2, 2, 3] uint8, zp 10, scale 0.5 -> y scale 0.25, zp 3 */
	uint8_t x[12] = {10, 11, 12, 13, 14, 15, 0, 0, 0, 0, 0, 1}, xz = 10, yz = 3, y[2], p[8];
	float xs = 0.5f, ys = 0.25f;
	enpu_view in[5] = {view(ENPU_DT_U8, x, 4, (int64_t[]){1, 2, 2, 3}), view(ENPU_DT_F32, &xs, 0, NULL),
			   view(ENPU_DT_U8, &xz, 0, NULL), view(ENPU_DT_F32, &ys, 0, NULL),
			   view(ENPU_DT_U8, &yz, 0, NULL)};
	enpu_view out = view(ENPU_DT_U8, y, 4, (int64_t[]){1, 2, 1, 1});
	enpu_attrs at;
	enpu_shape os, ins[5];
	char why[200];

	enpu_attrs_defaults(enpu_op_by_name("qlinear_global_avgpool"), &at);
	for (int i = 0; i < 5; i++)
		ins[i] = in[i].shape;
	cr_assert_eq(enpu_s_qlinear_global_avgpool(&at, ins, 5, &os, 1, why, sizeof why), 0, "%s", why);
	cr_expect_eq(os.dim[2], 1);
	cr_assert_eq(enpu_k_qlinear_global_avgpool(&at, in, 5, &out, 1, NULL), 0);
	/* plane 0: s = 15, 15 * 2 / 6 = 5 -> 8; plane 1: s = -59, -118 / 6 =
	 * -19.67 -> -20 -> saturates at 0 */
	cr_expect_eq(y[0], 8);
	cr_expect_eq(y[1], 0);
	/* a tie: s = 3 over 4 taps with M = 2: 6 / 4 = 1.5 -> 2; 5 / 2 -> 2 */
	{
		uint8_t tx[8] = {11, 11, 11, 10, 11, 11, 11, 12};
		enpu_view ti[5];

		memcpy(ti, in, sizeof ti);
		ti[0] = view(ENPU_DT_U8, tx, 4, (int64_t[]){1, 2, 2, 2});
		cr_assert_eq(enpu_k_qlinear_global_avgpool(&at, ti, 5, &out, 1, NULL), 0);
		cr_expect_eq(y[0], 5);   /* 3 + 2 */
		cr_expect_eq(y[1], 5);   /* s = 5: 10 / 4 = 2.5 -> 2 */
	}
	/* qlinear_avgpool 2x2 stride 1 pad 1 (bottom, right) on plane 0 ([2, 3]):
	 * count the valid taps, or with count_include_pad the padded window */
	enpu_attrs_defaults(enpu_op_by_name("qlinear_avgpool"), &at);
	at.kernel[0] = at.kernel[1] = 2;
	at.strides[0] = at.strides[1] = 1;
	at.pads[2] = at.pads[3] = 1;
	at.set |= 3u;   /* kernel, strides given */
	in[0] = view(ENPU_DT_U8, x, 4, (int64_t[]){1, 1, 2, 3});
	ins[0] = in[0].shape;
	cr_assert_eq(enpu_s_qlinear_avgpool(&at, ins, 5, &os, 1, why, sizeof why), 0, "%s", why);
	cr_assert_eq(os.dim[2], 2);
	cr_assert_eq(os.dim[3], 3);
	out = view(ENPU_DT_U8, p, 4, (int64_t[]){1, 1, 2, 3});
	cr_assert_eq(enpu_k_qlinear_avgpool(&at, in, 5, &out, 1, NULL), 0);
	/* x - zp = [0 1 2; 3 4 5]: windows (0,0) s=8/4: 8*2/4 = 4 -> 7;
	 * (0,1) 12/4 -> 6 -> 9; (0,2) 7/2 -> 7 -> 10; (1,0) 7/2 -> 7 -> 10;
	 * (1,1) 9/2 -> 9 -> 12; (1,2) 5/1 -> 10 -> 13 */
	cr_expect_arr_eq(p, ((uint8_t[]){7, 9, 10, 10, 12, 13}), 6);
	at.count_include_pad = 1;
	cr_assert_eq(enpu_k_qlinear_avgpool(&at, in, 5, &out, 1, NULL), 0);
	/* (0,2): 7*2/4 = 3.5 -> 4 -> 7; (1,1): 18/4 = 4.5 -> 4 -> 7; (1,2): 10/4 = 2.5 -> 2 -> 5 */
	cr_expect_arr_eq(p, ((uint8_t[]){7, 9, 7, 7, 7, 5}), 6);
}

Test(quant, qlinear_concat_requantises)
{
	/* y: scale 0.5, zp -1 (int8); x0 [1, 2] scale 0.5 zp -1 (copied);
	 * x1 [1, 3] scale 0.25 zp 4 (halved: ties to even); x2 [1, 1] scale
	 * 100 (saturates) */
	int8_t x0[2] = {-128, 127}, x1[3] = {5, 7, 3}, x2[1] = {2}, z0 = -1, z1 = 4, z2 = 0, yz = -1, y[6];
	float s0 = 0.5f, s1 = 0.25f, s2 = 100.0f, ys = 0.5f;
	enpu_view in[11] = {view(ENPU_DT_F32, &ys, 0, NULL), view(ENPU_DT_I8, &yz, 0, NULL),
			    view(ENPU_DT_I8, x0, 2, (int64_t[]){1, 2}), view(ENPU_DT_F32, &s0, 0, NULL),
			    view(ENPU_DT_I8, &z0, 0, NULL),
			    view(ENPU_DT_I8, x1, 2, (int64_t[]){1, 3}), view(ENPU_DT_F32, &s1, 0, NULL),
			    view(ENPU_DT_I8, &z1, 0, NULL),
			    view(ENPU_DT_I8, x2, 2, (int64_t[]){1, 1}), view(ENPU_DT_F32, &s2, 0, NULL),
			    view(ENPU_DT_I8, &z2, 0, NULL)};
	enpu_view out = view(ENPU_DT_I8, y, 2, (int64_t[]){1, 6});
	enpu_attrs at;
	enpu_shape os, ins[11];
	char why[200];

	enpu_attrs_defaults(enpu_op_by_name("qlinear_concat"), &at);
	at.axis = -1;
	at.set |= 1u;   /* axis given */
	for (int i = 0; i < 11; i++)
		ins[i] = in[i].shape;
	cr_assert_eq(enpu_s_qlinear_concat(&at, ins, 11, &os, 1, why, sizeof why), 0, "%s", why);
	cr_assert_eq(os.dim[1], 6);
	cr_assert_eq(at.axis, 1);
	cr_assert_eq(enpu_k_qlinear_concat(&at, in, 11, &out, 1, NULL), 0);
	/* x1: (5-4)/2 = 0.5 -> 0; (7-4)/2 = 1.5 -> 2; (3-4)/2 = -0.5 -> 0; + -1 */
	cr_expect_arr_eq(y, ((int8_t[]){-128, 127, -1, 1, -1, 127}), 6);
	/* a count of inputs that is not 2 + 3k is the rule's error */
	cr_expect_eq(enpu_s_qlinear_concat(&at, ins, 10, &os, 1, why, sizeof why), -1);
	cr_expect(strstr(why, "5, 8, 11"), "%s", why);
}

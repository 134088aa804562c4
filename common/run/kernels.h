/* kernels.h: the cpu_ref reference kernels (signature: enpu_kernel_fn).
 *
 * Each follows docs/spec-format.md's reference arithmetic: reductions accumulate
 * in ascending index order from 0.0f with one fmaf per product; averages
 * divide by the count; exp/tanh/erf come from kmath.h; threads split
 * outputs only. The exact operation order of each op is documented at its
 * kernel, and in README.md's "Reference arithmetic" section. */
#ifndef ENPU_KERNELS_H
#define ENPU_KERNELS_H

#include "ops.h"

#define ENPU_KERNEL(n) int enpu_k_##n(const enpu_attrs *a, const enpu_view *in, \
	int n_in, enpu_view *out, int n_out, enpu_par *par)
/* The scratch bytes an op's kernel takes for these shapes (0: none): the
 * memory plan holds them (plan.c), the engine hands them to the kernel
 * through its pool (enpu_par_scratch). */
#define ENPU_SCRATCH(n) size_t enpu_kscratch_##n(const enpu_attrs *a, const enpu_shape *in, \
	int n_in, const enpu_shape *out)

/* A kernel's scratch of `floats` floats: the planned one its pool holds,
 * or, for a caller without a plan (a unit test, the importer's constant
 * folding), from the heap: *heap then points to it (free(*heap) after;
 * NULL otherwise). NULL when the heap has none. */
float *enpu_kscratch(enpu_par *par, size_t floats, float **heap);

ENPU_SCRATCH(matmul);
ENPU_SCRATCH(gemm);
ENPU_SCRATCH(conv2d);
ENPU_SCRATCH(conv1d);
/* the integer GEMM's int16 operands (kernels_q.c) */
ENPU_SCRATCH(matmul_integer);
ENPU_SCRATCH(qlinear_matmul);
ENPU_SCRATCH(conv_integer);
ENPU_SCRATCH(qlinear_conv);

ENPU_KERNEL(matmul);
ENPU_KERNEL(gemm);
ENPU_KERNEL(add);
ENPU_KERNEL(sub);
ENPU_KERNEL(mul);
ENPU_KERNEL(div);
ENPU_KERNEL(relu);
ENPU_KERNEL(sigmoid);
ENPU_KERNEL(tanh);
ENPU_KERNEL(leaky_relu);
ENPU_KERNEL(clip);
ENPU_KERNEL(gelu);
ENPU_KERNEL(softmax);
ENPU_KERNEL(conv2d);
ENPU_KERNEL(maxpool2d);
ENPU_KERNEL(avgpool2d);
ENPU_KERNEL(global_avgpool);
ENPU_KERNEL(batchnorm);
ENPU_KERNEL(copy);        /* reshape, flatten: same bytes, new shape */
ENPU_KERNEL(transpose);
ENPU_KERNEL(concat);
/* spec v2 */
ENPU_KERNEL(exp);
ENPU_KERNEL(sqrt);
ENPU_KERNEL(neg);
ENPU_KERNEL(abs);
ENPU_KERNEL(reciprocal);
ENPU_KERNEL(erf);
ENPU_KERNEL(log);
ENPU_KERNEL(pad);         /* kernels_move.c; squeeze, unsqueeze: copy */
ENPU_KERNEL(slice);
/* spec v2, kernels_reduce.c */
ENPU_KERNEL(reduce_mean);
ENPU_KERNEL(reduce_sum);
ENPU_KERNEL(reduce_max);
ENPU_KERNEL(reduce_min);
ENPU_KERNEL(layer_norm);
/* spec v2, common/run/kernels_convt.c */
ENPU_KERNEL(conv_transpose2d);
ENPU_KERNEL(resize);
/* spec v2 elementwise (kernels_v2ew.c) */
ENPU_KERNEL(pow);
ENPU_KERNEL(min);
ENPU_KERNEL(max);
ENPU_KERNEL(hard_sigmoid);
ENPU_KERNEL(hard_swish);
ENPU_KERNEL(prelu);
ENPU_KERNEL(elu);
ENPU_KERNEL(softplus);
/* spec v3 quantised ops (kernels_q.c): integer inputs and outputs by
 * their views' dtype */
ENPU_KERNEL(quantize_linear);
ENPU_KERNEL(dequantize_linear);
ENPU_KERNEL(matmul_integer);
ENPU_KERNEL(conv_integer);
ENPU_KERNEL(qlinear_matmul);
ENPU_KERNEL(qlinear_conv);
/* spec v3's integer forms (kernels_qew.c): qlinear_add, qlinear_mul,
 * the quantised pools and concat; maxpool2d's and clip's int8/uint8
 * forms, which those kernels call for integer data */
ENPU_KERNEL(qlinear_add);
ENPU_KERNEL(qlinear_mul);
ENPU_KERNEL(qlinear_global_avgpool);
ENPU_KERNEL(qlinear_avgpool);
ENPU_KERNEL(qlinear_concat);
ENPU_KERNEL(maxpool2d_q);
ENPU_KERNEL(clip_q);
/* 1 when dt is int8 or uint8 */
static inline int enpu_dtype_q8(enpu_dtype dt)
{
	return dt == ENPU_DT_I8 || dt == ENPU_DT_U8;
}

/* The pools' windows (kernels_misc.c), shared by the integer pools:
 * enpu_pool_window  the valid taps [lo, hi) of [o*s - p, o*s - p + k) in [0, n)
 * enpu_pool_taps    the valid taps o*s - p + j*d: the first, and how many
 * enpu_pool_extent  count_include_pad's count along one axis (taps inside
 *                   the padded input [-p, n + pe)) */
void enpu_pool_window(size_t o, int s, int p, int k, size_t n, size_t *lo, size_t *hi);
void enpu_pool_taps(size_t o, int s, int p, int k, int d, size_t n, size_t *lo, size_t *cnt);
size_t enpu_pool_extent(size_t o, int s, int p, int k, size_t n, int pe);

/* The quantised arithmetic (kernels_q.c; docs/spec-format.md), one
 * definition for every backend and thread count:
 * enpu_rne          round half to even (NaN stays NaN), exact in double
 * enpu_qrange       [lo, hi] of int8, uint8 (else int32's)
 * enpu_quantize     saturate(rne(x / s) + zp) with x / s in float32;
 *                   NaN gives zp
 * enpu_requant_multiplier  M = fl32(fl32(s_a * s_b) / s_y)
 * enpu_requant      saturate(zp + rne((double)acc * (double)m)) (enpu_qround) */
double enpu_rne(double v);
void enpu_qrange(enpu_dtype dt, int32_t *lo, int32_t *hi);
int32_t enpu_quantize(float x, float s, int32_t zp, enpu_dtype dt);
float enpu_requant_multiplier(float s_a, float s_b, float s_y);
int32_t enpu_requant(int32_t acc, float m, int32_t zp, enpu_dtype dt);
/* enpu_qround       saturate(zp + rne(v)); NaN gives zp (enpu_requant's
 *                   last step, for the integer forms' double expressions) */
int32_t enpu_qround(double v, int32_t zp, enpu_dtype dt);

/* ---- NumPy broadcasting of two operands (kernels_ew.c) ------------------ */

/* One row of n outputs: o[i] = f_op(a[i * sa], b[i * sb]), sa and sb 0 or 1. */
typedef void (*enpu_row2_fn)(int op, float *o, const float *a, size_t sa, const float *b,
			     size_t sb, size_t n);
/* out = fn(op, a, b) elementwise, a and b broadcast to out's shape (right-
 * aligned, size-1 dims stretched); threads split the rows, each chunk at
 * least grain elements. out may be a itself (same shape): each element is
 * read before it is written, by the same thread. Returns 0. */
int enpu_bcast2(enpu_row2_fn fn, int op, const enpu_view *a, const enpu_view *b,
		enpu_view *out, size_t grain, enpu_par *par);
/* spec v2 conv and pools over 1-D (kernels_conv.c) */
ENPU_KERNEL(conv1d);
ENPU_KERNEL(maxpool1d);
ENPU_KERNEL(avgpool1d);
ENPU_KERNEL(split);     /* kernels_ir.c */
ENPU_KERNEL(gather);    /* kernels_ir.c */

/* ---- shared with the npu_sim executor (npuexec.c) ---------------------- */

/* matmul, gemm and conv2d with the GEMM core taking C in the order bl
 * gives (gemm.h; NULL: cpu_ref's blocking), for npu_sim's folds. In
 * conv2d's GEMM the rows of C are output channels and its columns output
 * positions; a depthwise conv runs its direct kernel whatever bl. */
struct enpu_gemm_blocks;
int enpu_k_matmul_tiles(const enpu_view *in, enpu_view *out, const struct enpu_gemm_blocks *bl,
			enpu_par *par);
int enpu_k_gemm_tiles(const enpu_attrs *a, const enpu_view *in, int n_in, enpu_view *out,
		      const struct enpu_gemm_blocks *bl, enpu_par *par);
int enpu_k_conv2d_tiles(const enpu_attrs *a, const enpu_view *in, int n_in, enpu_view *out,
			const struct enpu_gemm_blocks *bl, enpu_par *par);

/* conv1d's and the 1-D pools' 2-D view (kernels_conv.c), which their
 * kernels and npu_sim's conv run: x and w (the first two of in, when 3-D)
 * and out as (N, C, 1, L) and (M, C/group, 1, k), a as the 2-D op's with
 * kH = 1 (stride 1, no pad, dilation 1 along H). in2 has n_in slots. */
void enpu_conv1d_as_2d(const enpu_attrs *a, const enpu_view *in, int n_in, const enpu_view *out,
		       enpu_attrs *a2, enpu_view *in2, enpu_view *out2);

#endif

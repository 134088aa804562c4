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

/* ---- shared with the npu_sim executor (npuexec.c) ---------------------- */

/* The packed-B layout of the GEMM core: panels ENPU_PACK_NR columns wide;
 * element (k, j) of a K x N matrix is at ENPU_PACK_AT(K, k, j). */
#define ENPU_PACK_NR 16
#define ENPU_PACK_AT(K, k, j) \
	(((j) / ENPU_PACK_NR) * (K) * ENPU_PACK_NR + (k) * ENPU_PACK_NR + (j) % ENPU_PACK_NR)

/* Floats of a packed K x N matrix (at least 1); 0 on overflow. */
size_t enpu_packed_floats(size_t K, size_t N);

/* conv2d's im2col (the very one its kernel uses) of image n, group g into
 * bp (enpu_packed_floats(K, OH*OW) floats): row k = (ci, kh, kw), ci
 * outermost, column j = (oh, ow); 0.0f in the padding. x is the conv's
 * input (NCHW), w_shape its weights' shape, o_shape its output's. */
void enpu_im2col_pack(const enpu_attrs *a, const enpu_view *x, const enpu_shape *w_shape,
		      const enpu_shape *o_shape, size_t n, size_t g, float *bp, enpu_par *par);

#endif

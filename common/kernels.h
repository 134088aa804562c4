/* kernels.h: the cpu_ref reference kernels (signature: enpu_kernel_fn).
 *
 * Each follows SPEC_FORMAT.md's reference arithmetic: reductions accumulate
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

#endif

/* kernels_ir.c: cpu_ref kernels of split and gather: data movement only
 * (the same bits, no arithmetic). gather's indices are an int64 weight
 * whose range was checked once at compile (enpu_gather_check); the kernel
 * trusts them. */
#include <string.h>
#include "kernels.h"

/* outer = product of dims before axis, inner = product after it. */
static void around(const enpu_shape *s, int axis, size_t *outer, size_t *inner)
{
	*outer = *inner = 1;
	for (int i = 0; i < axis; i++)
		*outer *= (size_t)s->dim[i];
	for (int i = axis + 1; i < s->ndim; i++)
		*inner *= (size_t)s->dim[i];
}

/* split: output i gets, for every outer index o, the rows
 * [off_i, off_i + size_i) of x's axis (off_i = the sizes before it). */
ENPU_KERNEL(split)
{
	size_t outer, inner, d = (size_t)in[0].shape.dim[a->axis], off = 0;

	around(&in[0].shape, a->axis, &outer, &inner);
	for (int i = 0; i < n_out; i++) {
		size_t s = (size_t)out[i].shape.dim[a->axis];

		if (s && inner)
			for (size_t o = 0; o < outer; o++)
				memcpy(out[i].data + o * s * inner, in[0].data + (o * d + off) * inner,
				       s * inner * sizeof(float));
		off += s;
	}
	return 0;
}

/* gather: y[o, j, :] = x[o, idx_j, :] for every outer index o and every
 * index j (in C order of the indices), idx_j + dim[axis] when negative. */
ENPU_KERNEL(gather)
{
	size_t outer, inner, n = 1, d = (size_t)in[0].shape.dim[a->axis];
	const int64_t *ix = enpu_view_i64(&in[1]);

	around(&in[0].shape, a->axis, &outer, &inner);
	for (int i = 0; i < in[1].shape.ndim; i++)
		n *= (size_t)in[1].shape.dim[i];
	if (!inner)
		return 0;
	for (size_t o = 0; o < outer; o++)
		for (size_t j = 0; j < n; j++) {
			size_t k = (size_t)(ix[j] < 0 ? ix[j] + (int64_t)d : ix[j]);

			memcpy(out[0].data + (o * n + j) * inner, in[0].data + (o * d + k) * inner,
			       inner * sizeof(float));
		}
	return 0;
}

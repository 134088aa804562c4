/* kernels_conv.c: cpu_ref kernels of spec v2's 1-D conv and pools:
 * conv1d, maxpool1d, avgpool1d. Each is its 2-D op with H = 1: x (N, C, L)
 * is viewed as (N, C, 1, L) (the same bytes), w (M, C/group, k) as
 * (M, C/group, 1, k), and the attributes as the 2-D op's with kH = 1,
 * stride 1, no pad and dilation 1 along H. So the arithmetic order is
 * exactly the 2-D kernel's (kernels.c, kernels_misc.c): conv1d
 * acc = fmaf(w[m, ci, kw], v, acc) over ci then kw ascending, then
 * + bias; avgpool1d s = s + x over the window ascending, then / count;
 * maxpool1d the max over the window ascending, NaN wins. */
#include <string.h>
#include "kernels.h"

void enpu_conv1d_as_2d(const enpu_attrs *a, const enpu_view *in, int n_in, const enpu_view *out,
		       enpu_attrs *a2, enpu_view *in2, enpu_view *out2)
{
	*a2 = *a;
	a2->kernel[0] = 1;
	a2->kernel[1] = a->kernel[0];
	a2->strides[0] = 1;
	a2->strides[1] = a->strides[0];
	a2->dilations[0] = 1;
	a2->dilations[1] = a->dilations[0] > 0 ? a->dilations[0] : 1;
	a2->pads[0] = 0;
	a2->pads[1] = a->pads[0];
	a2->pads[2] = 0;
	a2->pads[3] = a->pads[1];
	for (int i = 0; i < n_in; i++) {
		in2[i] = in[i];
		if (i < 2 && in[i].shape.ndim == 3) {   /* x, w: insert H = 1 (kH = 1) */
			in2[i].shape.ndim = 4;
			in2[i].shape.dim[3] = in[i].shape.dim[2];
			in2[i].shape.dim[2] = 1;
		}
	}
	*out2 = out[0];
	if (out[0].shape.ndim == 3) {
		out2->shape.ndim = 4;
		out2->shape.dim[3] = out[0].shape.dim[2];
		out2->shape.dim[2] = 1;
	}
}

/* x and the output only (pools): w's slot is not touched */
static int as_2d(const enpu_attrs *a, const enpu_view *in, int n_in, enpu_view *out,
		 enpu_par *par, enpu_kernel_fn k2)
{
	enpu_attrs a2;
	enpu_view in2[3], out2;

	if (n_in < 1 || n_in > 3)
		return -1;
	enpu_conv1d_as_2d(a, in, n_in, out, &a2, in2, &out2);
	return k2(&a2, in2, n_in, &out2, 1, par);
}

/* conv1d's scratch: conv2d's on the (N, C, 1, L) view */
ENPU_SCRATCH(conv1d)
{
	enpu_attrs a2;
	enpu_view in2[3], o[1] = {{.shape = *out}}, out2;

	if (n_in < 2 || n_in > 3)
		return 0;
	for (int i = 0; i < n_in; i++)
		in2[i] = (enpu_view){.shape = in[i]};
	enpu_conv1d_as_2d(a, in2, n_in, o, &a2, in2, &out2);
	return enpu_kscratch_conv2d(&a2, (enpu_shape[]){in2[0].shape, in2[1].shape,
							 n_in > 2 ? in2[2].shape : in2[1].shape},
				    n_in, &out2.shape);
}

/* conv1d: conv2d (kernels.c) on the (N, C, 1, L) view: for output
 * (n, m, ol), acc = 0.0f; for ci of the group, then kw, ascending:
 * acc = fmaf(w[m, ci, kw], v, acc) with v = x[n, g*Cg + ci, ol*s - pb + kw*d]
 * or 0.0f in the padding; y = acc + bias[m] */
ENPU_KERNEL(conv1d)
{
	(void)n_out;
	return as_2d(a, in, n_in, out, par, enpu_k_conv2d);
}

/* maxpool1d: maxpool2d on the view (max over the window's valid taps,
 * ascending, from -inf; NaN wins) */
ENPU_KERNEL(maxpool1d)
{
	(void)n_out;
	return as_2d(a, in, n_in, out, par, enpu_k_maxpool2d);
}

/* avgpool1d: avgpool2d on the view (s = s + x over the valid taps
 * ascending, y = s / count; count_include_pad counts the taps inside the
 * padded input) */
ENPU_KERNEL(avgpool1d)
{
	(void)n_out;
	return as_2d(a, in, n_in, out, par, enpu_k_avgpool2d);
}

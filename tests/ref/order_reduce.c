/* order_reduce.c: independent references (order.h) of spec v2's
 * reduce_sum, reduce_mean and layer_norm, written from
 * docs/spec-format.md's reference arithmetic, sharing no code with
 * common/run/kernels_reduce.c. Variant 0 is the documented order; the
 * others are wrong orders a faster kernel might slip into.
 * (reduce_max/min have no order to get wrong: only which NaN and which of
 * +0/-0; tests/unit/test_kernels.c checks those.) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "order.h"

/* reduce_sum/mean: s = 0.0f; s = s + x over the reduced elements in
 * ascending row-major order of the reduced indices; mean: y = s / (float)n.
 * Written as one walk over x in row-major order, each element added to its
 * output: restricted to one output, that walk is the reduced indices'
 * row-major order. Variants: 1 the walk descending; 2 two chains (even and
 * odd elements of each output) added at the end; 3 (mean) times 1/n. */
void ord_ref_reduce(const ord_case *c, const float *const *in, float *y, int v)
{
	const ord_tensor *t = &c->in[0];
	int red[4] = {0}, mean = !strcmp(c->op, "reduce_mean");
	size_t n = ord_numel(t->ndim, t->dim), n_out = ord_numel(c->out_ndim, c->out);
	size_t count = 1;
	float *odd = calloc(n_out ? n_out : 1, sizeof(float));
	size_t *seen = calloc(n_out ? n_out : 1, sizeof(size_t));

	if (!odd || !seen)
		abort();
	for (int i = 0; i < c->at.n_axes; i++)
		red[c->at.axes[i]] = 1;
	for (int d = 0; d < t->ndim; d++)
		if (red[d] || c->at.n_axes == 0)
			count *= (size_t)t->dim[d];
	for (size_t o = 0; o < n_out; o++)
		y[o] = 0.0f;
	for (size_t kk = 0; kk < n; kk++) {
		size_t k = v == 1 ? n - 1 - kk : kk, rest = k, o = 0, ost = 1;

		/* the output index: x's coordinates with the reduced ones dropped */
		for (int d = t->ndim - 1; d >= 0; d--) {
			size_t co = rest % (size_t)t->dim[d];

			rest /= (size_t)t->dim[d];
			if (!(red[d] || c->at.n_axes == 0)) {
				o += co * ost;
				ost *= (size_t)t->dim[d];
			}
		}
		if (v == 2 && seen[o]++ % 2)
			odd[o] = odd[o] + in[0][k];
		else
			y[o] = y[o] + in[0][k];
	}
	for (size_t o = 0; o < n_out; o++) {
		if (v == 2)
			y[o] = y[o] + odd[o];
		if (mean)
			y[o] = v == 3 ? y[o] * (1.0f / (float)count) : y[o] / (float)count;
	}
	free(odd);
	free(seen);
}

/* The element of p (a weight broadcast to x's dims axis..r-1, right-aligned)
 * for normalized element i. */
static float bcast_at(const ord_tensor *x, int axis, const ord_tensor *p, const float *pd,
		      int64_t i)
{
	int64_t idx = 0, st = 1;

	for (int k = 0; k < x->ndim - axis; k++) {
		int64_t xd = x->dim[x->ndim - 1 - k], co = i % xd;

		i /= xd;
		if (k < p->ndim) {
			int64_t d = p->dim[p->ndim - 1 - k];

			idx += (d == 1 ? 0 : co) * st;
			st *= d;
		}
	}
	return pd[idx];
}

/* layer_norm over each row of D = x[axis] * ... elements:
 *   mean = (s = 0.0f, s = s + x_i ascending) / (float)D
 *   var = (q = 0.0f, q = fmaf(d_i, d_i, q) ascending, d_i = x_i - mean) / (float)D
 *   y_i = (x_i - mean) / sqrtf(var + epsilon); y_i = y_i * scale_i; y_i = y_i + bias_i
 * Variants: 1 q = q + d_i * d_i (no fmaf); 2 times 1/sqrtf(var + eps);
 * 3 the scale multiplied before the division. */
void ord_ref_layer_norm(const ord_case *c, const float *const *in, float *y, int v)
{
	const ord_tensor *x = &c->in[0];
	int axis = c->at.axis;
	int64_t rows = 1, D = 1;

	for (int d = 0; d < x->ndim; d++)
		*(d < axis ? &rows : &D) *= x->dim[d];
	for (int64_t r = 0; r < rows; r++) {
		const float *xr = in[0] + r * D;
		float s = 0.0f, q = 0.0f, mean, var, den;

		for (int64_t i = 0; i < D; i++)
			s = s + xr[i];
		mean = s / (float)D;
		for (int64_t i = 0; i < D; i++) {
			float d = xr[i] - mean;

			q = v == 1 ? q + d * d : fmaf(d, d, q);
		}
		var = q / (float)D;
		den = sqrtf(var + c->at.epsilon);
		for (int64_t i = 0; i < D; i++) {
			float sc = c->n_in > 1 ? bcast_at(x, axis, &c->in[1], in[1], i) : 1.0f;
			float o;

			if (v == 2)
				o = (xr[i] - mean) * (1.0f / den);
			else if (v == 3)
				o = ((xr[i] - mean) * sc) / den;
			else
				o = (xr[i] - mean) / den;
			if (c->n_in > 1 && v != 3)
				o = o * sc;
			if (c->n_in > 2)
				o = o + bcast_at(x, axis, &c->in[2], in[2], i);
			y[r * D + i] = o;
		}
	}
}

int ord_v2_attrs(const ord_case *c, char *buf, size_t cap)
{
	size_t off = 0;

	buf[0] = 0;
	if (!strcmp(c->op, "layer_norm")) {
		snprintf(buf, cap, ", attrs: {axis: %d, epsilon: %.9g}", c->at.axis,
			 (double)c->at.epsilon);
		return 1;
	}
	if (strncmp(c->op, "reduce_", 7) != 0)
		return 0;
	off += (size_t)snprintf(buf, cap, ", attrs: {keepdims: %d", c->at.keepdims);
	if (c->at.n_axes && off < cap) {
		off += (size_t)snprintf(buf + off, cap - off, ", axes: [");
		for (int i = 0; i < c->at.n_axes && off < cap; i++)
			off += (size_t)snprintf(buf + off, cap - off, "%s%d", i ? ", " : "",
						c->at.axes[i]);
		if (off < cap)
			off += (size_t)snprintf(buf + off, cap - off, "]");
	}
	if (off < cap)
		snprintf(buf + off, cap - off, "}");
	return 1;
}

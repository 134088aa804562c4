/* kernels_reduce.c: cpu_ref kernels of spec v2's reductions (reduce_sum,
 * reduce_mean, reduce_max, reduce_min) and layer_norm. Their exact order
 * is written at each kernel and in docs/spec-format.md ("Reference
 * arithmetic"); tests/ref/order_reduce.c holds an independent reference.
 * Threads split the output elements (reductions) or the rows (layer_norm),
 * never one sum. */
#include <math.h>
#include <stdlib.h>
#include "kernels.h"

#define GRAIN 16384   /* elements of work per chunk at least */

enum { RD_SUM, RD_MEAN, RD_MAX, RD_MIN };

typedef struct rd_ctx {
	const float *x;
	float *y;
	int op;
	int nk, nr;                       /* kept and reduced dims */
	size_t kdim[ENPU_MAX_DIMS], kstr[ENPU_MAX_DIMS];   /* in output order; x strides */
	size_t rdim[ENPU_MAX_DIMS], rstr[ENPU_MAX_DIMS];   /* ascending; x strides */
	size_t count;                     /* reduced elements per output */
} rd_ctx;

/* One output: the reduced elements from x (the output's first element) in
 * ascending row-major order of the reduced indices (an odometer, last
 * reduced dim fastest). */
static float reduce_one(const rd_ctx *c, const float *x)
{
	size_t idx[ENPU_MAX_DIMS] = {0}, off = 0;
	float s = c->op == RD_MAX ? -INFINITY : c->op == RD_MIN ? INFINITY : 0.0f;

	for (size_t n = 0; n < c->count; n++) {
		float v = x[off];

		switch (c->op) {
		case RD_MAX:
			if (v != v)
				return v;
			if (v > s)
				s = v;
			break;
		case RD_MIN:
			if (v != v)
				return v;
			if (v < s)
				s = v;
			break;
		default:
			s = s + v;
		}
		for (int k = c->nr - 1; k >= 0; k--) {
			if (++idx[k] < c->rdim[k]) {
				off += c->rstr[k];
				break;
			}
			off -= (c->rdim[k] - 1) * c->rstr[k];
			idx[k] = 0;
		}
	}
	return c->op == RD_MEAN ? s / (float)c->count : s;
}

static void rd_range(void *vctx, size_t o0, size_t o1)
{
	const rd_ctx *c = vctx;

	for (size_t o = o0; o < o1; o++) {
		size_t base = 0, t = o;

		for (int k = c->nk - 1; k >= 0; k--) {
			base += (t % c->kdim[k]) * c->kstr[k];
			t /= c->kdim[k];
		}
		c->y[o] = reduce_one(c, c->x + base);
	}
}

/* The reduced dims: a->axes (normalized by the shape rule; none = all). */
static int reduce(int op, const enpu_attrs *a, const enpu_view *in, enpu_view *out,
		  enpu_par *par)
{
	const enpu_shape *s = &in[0].shape;
	rd_ctx c = {.x = in[0].data, .y = out[0].data, .op = op, .count = 1};
	int red[ENPU_MAX_DIMS] = {0};
	size_t stride = 1, n_out = 1;

	for (int i = 0; i < a->axes.n; i++)
		red[a->axes.v[i]] = 1;
	for (int d = s->ndim - 1; d >= 0; d--) {   /* strides, innermost first */
		if (red[d] || a->axes.n == 0) {
			c.rstr[c.nr] = stride;
			c.rdim[c.nr++] = (size_t)s->dim[d];
			c.count *= (size_t)s->dim[d];
		} else {
			c.kstr[c.nk] = stride;
			c.kdim[c.nk++] = (size_t)s->dim[d];
			n_out *= (size_t)s->dim[d];
		}
		stride *= (size_t)s->dim[d];
	}
	/* collected innermost first: put both lists in ascending dim order */
	for (int i = 0, j = c.nr - 1; i < j; i++, j--) {
		size_t t = c.rdim[i]; c.rdim[i] = c.rdim[j]; c.rdim[j] = t;
		t = c.rstr[i]; c.rstr[i] = c.rstr[j]; c.rstr[j] = t;
	}
	for (int i = 0, j = c.nk - 1; i < j; i++, j--) {
		size_t t = c.kdim[i]; c.kdim[i] = c.kdim[j]; c.kdim[j] = t;
		t = c.kstr[i]; c.kstr[i] = c.kstr[j]; c.kstr[j] = t;
	}
	enpu_par_for(par, n_out, c.count >= GRAIN ? 1 : GRAIN / (c.count ? c.count : 1),
		     rd_range, &c);
	return 0;
}

/* reduce_sum: s = 0.0f; s = s + x over the reduced elements in ascending
 * row-major order of the reduced indices (plain +, no fmaf). Empty: +0. */
ENPU_KERNEL(reduce_sum) { (void)n_in; (void)n_out; return reduce(RD_SUM, a, in, out, par); }
/* reduce_mean: s as reduce_sum; y = s / (float)count (a divide, never a
 * multiply by 1/count). Empty: 0.0f / 0.0f = NaN (ONNX, NumPy). */
ENPU_KERNEL(reduce_mean) { (void)n_in; (void)n_out; return reduce(RD_MEAN, a, in, out, par); }
/* reduce_max: m = -inf; in the same order, a NaN ends the scan and is the
 * result; else m = x when x > m (of +0 and -0 the first stays). Empty:
 * -inf (ONNX). */
ENPU_KERNEL(reduce_max) { (void)n_in; (void)n_out; return reduce(RD_MAX, a, in, out, par); }
/* reduce_min: as reduce_max from +inf with x < m. Empty: +inf (ONNX). */
ENPU_KERNEL(reduce_min) { (void)n_in; (void)n_out; return reduce(RD_MIN, a, in, out, par); }

/* ---- layer_norm ---------------------------------------------------------- */

typedef struct ln_ctx {
	const float *x, *scale, *bias;
	float *y;
	const size_t *si, *bi;            /* broadcast index of element i, or NULL (= i) */
	size_t D;
	float eps;
} ln_ctx;

static void ln_range(void *vctx, size_t r0, size_t r1)
{
	const ln_ctx *c = vctx;
	size_t D = c->D;

	for (size_t r = r0; r < r1; r++) {
		const float *x = c->x + r * D;
		float *y = c->y + r * D;
		float s = 0.0f, q = 0.0f, mean, var, den;

		for (size_t i = 0; i < D; i++)
			s = s + x[i];
		mean = s / (float)D;
		for (size_t i = 0; i < D; i++) {
			float d = x[i] - mean;

			q = fmaf(d, d, q);
		}
		var = q / (float)D;
		den = sqrtf(var + c->eps);
		for (size_t i = 0; i < D; i++) {
			float t = (x[i] - mean) / den;

			if (c->scale)
				t = t * c->scale[c->si ? c->si[i] : i];
			if (c->bias)
				t = t + c->bias[c->bi ? c->bi[i] : i];
			y[i] = t;
		}
	}
}

/* The index into p (shape ps, broadcast to the normalized dims x[axis:])
 * of each normalized element: NULL when p has all D elements (index i),
 * else a malloc'ed table (*fail set when out of memory). */
static size_t *bcast_index(const enpu_shape *x, int axis, const enpu_shape *ps, size_t D,
			   int *fail)
{
	size_t n = 1, *t;
	int nd = x->ndim - axis;

	for (int k = 0; k < ps->ndim; k++)
		n *= (size_t)ps->dim[k];
	if (n == D)
		return NULL;
	if (!(t = malloc((D ? D : 1) * sizeof(*t)))) {
		*fail = 1;
		return NULL;
	}
	for (size_t i = 0; i < D; i++) {
		size_t rest = i, idx = 0, st = 1;

		for (int k = 0; k < nd; k++) {   /* innermost normalized dim first */
			size_t xd = (size_t)x->dim[x->ndim - 1 - k], co = rest % xd;

			rest /= xd;
			if (k < ps->ndim) {
				size_t pd = (size_t)ps->dim[ps->ndim - 1 - k];

				idx += (pd == 1 ? 0 : co) * st;
				st *= pd;
			}
		}
		t[i] = idx;
	}
	return t;
}

/* layer_norm over the D = x[axis] * ... * x[r-1] elements of each row:
 *   s = 0.0f; s = s + x_i ascending; mean = s / (float)D;
 *   q = 0.0f; d_i = x_i - mean; q = fmaf(d_i, d_i, q) ascending;
 *   var = q / (float)D; den = sqrtf(var + epsilon);
 *   y_i = (x_i - mean) / den; then y_i = y_i * scale_i (with scale); then
 *   y_i = y_i + bias_i (with bias). scale and bias broadcast to x[axis:].
 * Threads split the rows. */
ENPU_KERNEL(layer_norm)
{
	const enpu_shape *s = &in[0].shape;
	ln_ctx c = {.x = in[0].data, .y = out[0].data, .D = 1, .eps = a->epsilon};
	size_t rows = 1, *si = NULL, *bi = NULL;
	int fail = 0;

	(void)n_out;
	for (int d = 0; d < s->ndim; d++) {
		if (d < a->axis)
			rows *= (size_t)s->dim[d];
		else
			c.D *= (size_t)s->dim[d];
	}
	if (n_in >= 2) {
		c.scale = in[1].data;
		c.si = si = bcast_index(s, a->axis, &in[1].shape, c.D, &fail);
	}
	if (n_in >= 3) {
		c.bias = in[2].data;
		c.bi = bi = bcast_index(s, a->axis, &in[2].shape, c.D, &fail);
	}
	if (!fail && c.D)
		enpu_par_for(par, rows, c.D * 4 >= GRAIN ? 1 : GRAIN / (c.D * 4), ln_range, &c);
	free(si);
	free(bi);
	return fail ? -1 : 0;
}

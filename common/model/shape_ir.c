/* shape_ir.c: shape rules of the spec v2 ops that stretch the IR: split
 * (several outputs) and gather (an int64 weight as its indices). Semantics
 * follow ONNX Split (opset 13, sizes as an attribute) and Gather. */
#include <stdio.h>
#include "shape.h"

#define fail enpu_shape_why   /* shape.h: the rules' reason, -1 */

/* axis in [-r, r - 1] becomes non-negative; x must have rank >= 1. */
static int axis_of(int *axis, const enpu_shape *x, char *why, size_t whylen)
{
	char b[160];
	int r = x->ndim;

	if (r == 0)
		return fail(why, whylen, "x must have rank >= 1, got a scalar");
	if (*axis < -r || *axis >= r)
		return fail(why, whylen, "axis %d is out of range [%d, %d] for x %s", *axis, -r,
			    r - 1, enpu_shape_pystr(x, b, sizeof(b)));
	if (*axis < 0)
		*axis += r;
	return 0;
}

/* split: n_out outputs, x's shape but dim[axis] = split[i] (given: one size
 * per output, each >= 0, summing to dim[axis]) or dim[axis] / n_out (absent:
 * dim[axis] must divide evenly). */
ENPU_SHAPE_RULE(split)
{
	int64_t d, sum = 0;

	if (n_in != 1)
		return fail(why, whylen, "expects 1 input, got %d", n_in);
	if (n_out < 1 || n_out > ENPU_MAX_SPLIT)
		return fail(why, whylen, "writes %d outputs (1 to %d)", n_out, ENPU_MAX_SPLIT);
	if (axis_of(&a->axis, &in[0], why, whylen))
		return -1;
	d = in[0].dim[a->axis];
	if (a->split.n && a->split.n != n_out)
		return fail(why, whylen, "'split' has %d sizes but 'out' names %d tensors",
			    a->split.n, n_out);
	if (!a->split.n && d % n_out)
		return fail(why, whylen,
			    "dimension %d (%lld) does not split into %d equal parts: give 'split' sizes",
			    a->axis, (long long)d, n_out);
	for (int i = 0; i < n_out; i++) {
		int64_t s = a->split.n ? a->split.v[i] : d / n_out;

		if (s < 0)
			return fail(why, whylen, "split size %d is negative (%lld)", i + 1,
				    (long long)s);
		if (__builtin_add_overflow(sum, s, &sum))
			return fail(why, whylen, "split sizes overflow");
		out[i] = in[0];
		out[i].dim[a->axis] = s;
	}
	if (sum != d)
		return fail(why, whylen, "split sizes sum to %lld, dimension %d of x is %lld",
			    (long long)sum, a->axis, (long long)d);
	return 0;
}

/* gather: x.shape[:axis] + indices.shape + x.shape[axis+1:]. The indices'
 * values (an int64 weight) are checked against dim[axis] when the weights
 * are known (enpu_gather_check, at compile). */
ENPU_SHAPE_RULE(gather)
{
	const enpu_shape *x = &in[0], *ix = &in[1];
	enpu_shape *o = &out[0];

	if (n_in != 2)
		return fail(why, whylen, "expects 2 inputs, got %d", n_in);
	if (axis_of(&a->axis, x, why, whylen))
		return -1;
	if (x->ndim - 1 + ix->ndim > ENPU_MAX_DIMS)
		return fail(why, whylen, "the output would have rank %d (at most %d)",
			    x->ndim - 1 + ix->ndim, ENPU_MAX_DIMS);
	o->ndim = 0;
	for (int i = 0; i < a->axis; i++)
		o->dim[o->ndim++] = x->dim[i];
	for (int i = 0; i < ix->ndim; i++)
		o->dim[o->ndim++] = ix->dim[i];
	for (int i = a->axis + 1; i < x->ndim; i++)
		o->dim[o->ndim++] = x->dim[i];
	return 0;
}

int64_t enpu_gather_bad_index(const int64_t *ix, uint64_t n, int64_t d)
{
	for (uint64_t i = 0; i < n; i++)
		if (ix[i] < -d || ix[i] >= d)
			return (int64_t)i;
	return -1;
}

/* shape_move.c: the shape rules of spec v2's data movement ops: pad, slice,
 * squeeze and unsqueeze (ONNX Pad, Slice, Squeeze, Unsqueeze; the rules are
 * written down in docs/spec-format.md), with their attribute checks. Like
 * shape.c's rules they are idempotent: the artifact loader re-runs them on
 * the normalized attributes graph.json holds.
 *
 * A reason about one attribute starts with "attribute 'NAME'" (optionally
 * followed by "[i]", the entry): the validator then reports it at that
 * attribute's (entry's) line:col as E0209. Every int64 the spec may hold,
 * INT64_MIN and INT64_MAX included, goes through overflow-checked
 * arithmetic only. */
#include <string.h>
#include "shape.h"

/* the reason into the rule's why (shape.h); returns -1 */
#define WHY(...) enpu_shape_why(why, whylen, __VA_ARGS__)
#define ENTRIES(n) (n), (n) == 1 ? "y" : "ies"   /* for "%d entr%s" */

/* One input of rank <= ENPU_MAX_DIMS with no negative dimension. */
static int one_input(const enpu_shape *in, int n_in, char *why, size_t whylen)
{
	if (n_in != 1)
		return WHY("expects 1 input, got %d", n_in);
	if (in[0].ndim < 0 || in[0].ndim > ENPU_MAX_DIMS)
		return WHY("input 1 has rank %d (at most %d)", in[0].ndim,
			   ENPU_MAX_DIMS);
	for (int i = 0; i < in[0].ndim; i++)
		if (in[0].dim[i] < 0)
			return WHY("input 1 has a negative dimension");
	return 0;
}

/* Axes of attribute `name` (l) against rank r: each in [-r, r-1], made
 * non-negative in place, no axis twice. */
static int norm_axes(enpu_ilist *l, int r, const char *name, char *why, size_t whylen)
{
	int seen[ENPU_MAX_DIMS] = {0};

	for (int i = 0; i < l->n; i++) {
		int64_t v = l->v[i];

		if (v < -(int64_t)r || v >= (int64_t)r)
			return WHY("attribute '%s'[%d] is %lld, out of range [%d, %d] for rank %d",
				   name, i, (long long)v, -r, r - 1, r);
		if (v < 0)
			v += r;
		if (seen[v])
			return WHY("attribute '%s'[%d] names axis %lld twice", name, i,
				   (long long)v);
		seen[v] = 1;
		l->v[i] = v;
	}
	return 0;
}

/* ---- pad ------------------------------------------------------------- */

/* Negative pads crop first, then the positive ones pad what is left: along
 * dim d of size n with pads b (begin) and e (end), the kept part is
 * n + min(b, 0) + min(e, 0) >= 0 and the output size that plus max(b, 0) +
 * max(e, 0). reflect needs each positive pad < the kept size, reflect and
 * edge a kept size >= 1 wherever they pad. */
ENPU_SHAPE_RULE(pad)
{
	static const char *const mode[] = {"constant", "reflect", "edge"};
	const enpu_shape *x = &in[0];
	enpu_shape r;
	int rank;

	if (one_input(in, n_in, why, whylen))
		return -1;
	rank = x->ndim;
	if (a->pad_pads.n == 0)
		return WHY("missing required attribute 'pads'");
	if (a->pad_mode < 0 || a->pad_mode > 2)
		return WHY("attribute 'mode' is not one of constant, reflect, edge");
	if (a->pad_pads.n != 2 * rank)
		return WHY("attribute 'pads' has %d entr%s; x of rank %d needs 2 x %d = %d (all begins, then all ends)",
			   ENTRIES(a->pad_pads.n), rank, rank, 2 * rank);
	memset(&r, 0, sizeof(r));
	r.ndim = rank;
	for (int d = 0; d < rank; d++) {
		int64_t b = a->pad_pads.v[d], e = a->pad_pads.v[rank + d], kept, o;

		if (__builtin_add_overflow(x->dim[d], b < 0 ? b : 0, &kept) ||
		    __builtin_add_overflow(kept, e < 0 ? e : 0, &kept) || kept < 0)
			return WHY("attribute 'pads' crops axis %d (size %lld) by more than its size (begin %lld, end %lld)",
				   d, (long long)x->dim[d], (long long)b, (long long)e);
		if (__builtin_add_overflow(kept, b > 0 ? b : 0, &o) ||
		    __builtin_add_overflow(o, e > 0 ? e : 0, &o))
			return WHY("attribute 'pads' makes axis %d's size overflow", d);
		if (a->pad_mode != 0 && (b > 0 || e > 0) && kept == 0)
			return WHY("attribute 'pads' pads axis %d in %s mode but nothing of it is left to copy",
				   d, mode[a->pad_mode]);
		if (a->pad_mode == 1 && ((b > 0 && b >= kept) || (e > 0 && e >= kept)))
			return WHY("attribute 'pads' reflects axis %d (size %lld after cropping) by %lld: reflect needs each pad < the size",
				   d, (long long)kept, (long long)(b > e ? b : e));
		r.dim[d] = o;
	}
	out[0] = r;
	return 0;
}

/* ---- slice ----------------------------------------------------------- */

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* The attributes' own checks: lengths, steps not 0, axes (filled when
 * absent and made non-negative). Idempotent. */
static int slice_attrs(enpu_attrs *a, int rank, char *why, size_t whylen)
{
	int n = a->starts.n;

	if (n == 0)
		return WHY("missing required attribute 'starts'");
	if (a->ends.n == 0)
		return WHY("missing required attribute 'ends'");
	if (a->ends.n != n)
		return WHY("attribute 'ends' has %d entr%s, 'starts' has %d",
			   ENTRIES(a->ends.n), n);
	if (a->axes.n && a->axes.n != n)
		return WHY("attribute 'axes' has %d entr%s, 'starts' has %d",
			   ENTRIES(a->axes.n), n);
	if (a->steps.n && a->steps.n != n)
		return WHY("attribute 'steps' has %d entr%s, 'starts' has %d",
			   ENTRIES(a->steps.n), n);
	if (!a->axes.n && n > rank)
		return WHY("attribute 'starts' has %d entr%s but x has rank %d (without 'axes' they slice axes 0..%d)",
			   ENTRIES(n), rank, n - 1);
	for (int i = 0; i < a->steps.n; i++)
		if (a->steps.v[i] == 0)
			return WHY("attribute 'steps'[%d] is 0: a step must not be 0", i);
	if (norm_axes(&a->axes, rank, "axes", why, whylen))
		return -1;
	if (!a->axes.n)
		for (a->axes.n = n; n-- > 0;)
			a->axes.v[n] = n;
	if (!a->steps.n)
		for (a->steps.n = n = a->starts.n; n-- > 0;)
			a->steps.v[n] = 1;
	return 0;
}

int enpu_slice_plan(const enpu_attrs *a, const enpu_shape *x, int64_t *start, int64_t *step,
		    int64_t *count, char *why, size_t whylen)
{
	enpu_attrs c = *a;

	if (x->ndim < 0 || x->ndim > ENPU_MAX_DIMS)
		return WHY("x has rank %d (at most %d)", x->ndim, ENPU_MAX_DIMS);
	if (slice_attrs(&c, x->ndim, why, whylen))
		return -1;
	for (int d = 0; d < x->ndim; d++) {
		start[d] = 0;
		step[d] = 1;
		count[d] = x->dim[d];
	}
	for (int i = 0; i < c.starts.n; i++) {
		int d = (int)c.axes.v[i];
		int64_t n = x->dim[d], s = c.starts.v[i], e = c.ends.v[i], k = c.steps.v[i], len;
		uint64_t uk;

		/* ONNX: negative start/end count from the end (s + n cannot
		 * overflow: s < 0 <= n), then clamp to [0, n] for k > 0 and to
		 * [0, n-1] (start) and [-1, n-1] (end) for k < 0 */
		if (s < 0)
			s += n;
		if (e < 0)
			e += n;
		s = k > 0 ? clamp64(s, 0, n) : clamp64(s, 0, n - 1);
		e = k > 0 ? clamp64(e, 0, n) : clamp64(e, -1, n - 1);
		len = k > 0 ? e - s : s - e;    /* both within [-1, n]: no overflow */
		uk = k > 0 ? (uint64_t)k : (uint64_t)0 - (uint64_t)k;   /* |INT64_MIN| too */
		start[d] = s;
		step[d] = k;
		count[d] = len > 0 ? (int64_t)(((uint64_t)len - 1) / uk + 1) : 0;
	}
	return 0;
}

/* Output dim d = the number of indices start, start + step, ... before end
 * (ONNX's clamping, enpu_slice_plan); 0 gives an empty tensor. */
ENPU_SHAPE_RULE(slice)
{
	int64_t start[ENPU_MAX_DIMS], step[ENPU_MAX_DIMS], count[ENPU_MAX_DIMS];

	if (one_input(in, n_in, why, whylen) || slice_attrs(a, in[0].ndim, why, whylen) ||
	    enpu_slice_plan(a, &in[0], start, step, count, why, whylen))
		return -1;
	memset(&out[0], 0, sizeof(out[0]));
	out[0].ndim = in[0].ndim;
	for (int d = 0; d < in[0].ndim; d++)
		out[0].dim[d] = count[d];
	return 0;
}

/* ---- squeeze, unsqueeze ---------------------------------------------- */

/* Removes the axes listed (each of size 1), or, when absent, every axis of
 * size 1; the rule writes the axes it removes into `axes`. */
ENPU_SHAPE_RULE(squeeze)
{
	const enpu_shape *x = &in[0];
	int drop[ENPU_MAX_DIMS] = {0};

	if (one_input(in, n_in, why, whylen) || norm_axes(&a->axes, x->ndim, "axes", why, whylen))
		return -1;
	for (int i = 0; i < a->axes.n; i++)
		if (x->dim[a->axes.v[i]] != 1)
			return WHY("attribute 'axes'[%d]: axis %lld of x has size %lld; squeeze removes only axes of size 1",
				   i, (long long)a->axes.v[i], (long long)x->dim[a->axes.v[i]]);
	if (!a->axes.n)
		for (int d = 0; d < x->ndim; d++)
			if (x->dim[d] == 1)
				a->axes.v[a->axes.n++] = d;
	for (int i = 0; i < a->axes.n; i++)
		drop[a->axes.v[i]] = 1;
	memset(&out[0], 0, sizeof(out[0]));
	for (int d = 0; d < x->ndim; d++)
		if (!drop[d])
			out[0].dim[out[0].ndim++] = x->dim[d];
	return 0;
}

/* Inserts an axis of size 1 at each listed position of the OUTPUT (rank
 * r + number of axes; negative positions count from its end). */
ENPU_SHAPE_RULE(unsqueeze)
{
	const enpu_shape *x = &in[0];
	int add[ENPU_MAX_DIMS] = {0}, orank, k = 0;

	if (one_input(in, n_in, why, whylen))
		return -1;
	if (a->axes.n == 0)
		return WHY("missing required attribute 'axes'");
	orank = x->ndim + a->axes.n;
	if (orank > ENPU_MAX_DIMS)
		return WHY("attribute 'axes' has %d entr%s: x of rank %d would become rank %d (at most %d)",
			   ENTRIES(a->axes.n), x->ndim, orank, ENPU_MAX_DIMS);
	if (norm_axes(&a->axes, orank, "axes", why, whylen))
		return -1;
	for (int i = 0; i < a->axes.n; i++)
		add[a->axes.v[i]] = 1;
	memset(&out[0], 0, sizeof(out[0]));
	out[0].ndim = orank;
	for (int d = 0; d < orank; d++)
		out[0].dim[d] = add[d] ? 1 : x->dim[k++];
	return 0;
}

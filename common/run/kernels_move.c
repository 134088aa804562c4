/* kernels_move.c: cpu_ref kernels of spec v2's data movement ops, pad and
 * slice (squeeze and unsqueeze are the copy kernel: the same bytes under a
 * new shape). No arithmetic: every output element is an input element's
 * bits, copied with memcpy (NaN payloads and -0 kept), or, for pad's
 * constant mode, the attribute `value`. Threads split the output's rows
 * (its last dimension), so the thread count cannot change a bit. */
#include <stdint.h>
#include <string.h>
#include "kernels.h"
#include "shape.h"

#define GRAIN 16384   /* elements per chunk at least */

static size_t move_grain(size_t row)
{
	return row >= GRAIN ? 1 : GRAIN / (row ? row : 1);
}

/* Element strides of a C-order shape; its element count. */
static size_t strides_of(const enpu_shape *s, size_t *st)
{
	size_t n = 1;

	for (int d = s->ndim - 1; d >= 0; d--) {
		st[d] = n;
		n *= (size_t)s->dim[d];
	}
	return n;
}

/* ---- pad ------------------------------------------------------------- */

typedef struct pad_ctx {
	const float *x;
	float *y;
	int rank, mode;
	float value;
	size_t ist[ENPU_MAX_DIMS];
	int64_t odim[ENPU_MAX_DIMS];
	int64_t lo[ENPU_MAX_DIMS];     /* first input index kept (the crop of begin) */
	int64_t kept[ENPU_MAX_DIMS];   /* input indices kept */
	int64_t pb[ENPU_MAX_DIMS];     /* positive begin pad */
} pad_ctx;

/* Index into the kept part for position j (j < 0 or >= kept: in a pad):
 * constant gives -1, edge the nearest end, reflect the mirror image
 * without repeating the edge (-j, 2(kept-1) - j). The rule made
 * kept >= 1 and, for reflect, every pad < kept. */
static int64_t pad_src(int64_t j, int64_t kept, int mode)
{
	if (j >= 0 && j < kept)
		return j;
	if (mode == 0)
		return -1;
	if (mode == 2)
		return j < 0 ? 0 : kept - 1;
	return j < 0 ? -j : 2 * (kept - 1) - j;
}

static void pad_range(void *vctx, size_t r0, size_t r1)
{
	const pad_ctx *c = vctx;
	int last = c->rank - 1;
	int64_t row = c->odim[last], kept = c->kept[last], pb = c->pb[last];

	for (size_t r = r0; r < r1; r++) {
		float *y = c->y + r * (size_t)row;
		size_t off = 0, rem = r;
		int outside = 0;

		for (int d = last - 1; d >= 0; d--) {
			int64_t o = (int64_t)(rem % (size_t)c->odim[d]);
			int64_t j = pad_src(o - c->pb[d], c->kept[d], c->mode);

			rem /= (size_t)c->odim[d];
			if (j < 0)
				outside = 1;
			else
				off += (size_t)(c->lo[d] + j) * c->ist[d];
		}
		for (int64_t i = 0; i < row; i++) {
			int64_t j = outside ? -1 : pad_src(i - pb, kept, c->mode);

			if (j < 0)
				y[i] = c->value;
			else
				memcpy(&y[i], c->x + off + (size_t)(c->lo[last] + j), sizeof(float));
		}
	}
}

/* pad: along each dim, negative pads first crop (begin: the first -b
 * indices, end: the last -e), then positive pads add b before and e after
 * what is left: constant writes `value`, edge repeats the nearest kept
 * element, reflect mirrors the kept elements without repeating the edge
 * (NumPy's np.pad modes 'constant', 'edge', 'reflect'). */
ENPU_KERNEL(pad)
{
	const enpu_shape *sx = &in[0].shape, *so = &out[0].shape;
	pad_ctx c = {.x = in[0].data, .y = out[0].data, .rank = sx->ndim, .mode = a->pad_mode,
		     .value = a->pad_value};
	size_t ost[ENPU_MAX_DIMS], n;

	(void)n_in;
	(void)n_out;
	n = strides_of(so, ost);
	if (n == 0 || sx->ndim < 1)
		return 0;
	strides_of(sx, c.ist);
	for (int d = 0; d < sx->ndim; d++) {
		int64_t b = a->pad_pads.v[d], e = a->pad_pads.v[sx->ndim + d];

		c.odim[d] = so->dim[d];
		c.lo[d] = b < 0 ? -b : 0;
		c.pb[d] = b > 0 ? b : 0;
		c.kept[d] = sx->dim[d] - c.lo[d] - (e < 0 ? -e : 0);
	}
	enpu_par_for(par, n / (size_t)so->dim[sx->ndim - 1], move_grain((size_t)so->dim[sx->ndim - 1]),
		     pad_range, &c);
	return 0;
}

/* ---- slice ----------------------------------------------------------- */

typedef struct slice_ctx {
	const float *x;
	float *y;
	int rank;
	int64_t start[ENPU_MAX_DIMS], step[ENPU_MAX_DIMS], count[ENPU_MAX_DIMS];
	size_t ist[ENPU_MAX_DIMS];
} slice_ctx;

static void slice_range(void *vctx, size_t r0, size_t r1)
{
	const slice_ctx *c = vctx;
	int last = c->rank - 1;
	size_t row = (size_t)c->count[last];

	for (size_t r = r0; r < r1; r++) {
		size_t off = 0, rem = r;
		float *y = c->y + r * row;

		for (int d = last - 1; d >= 0; d--) {
			int64_t o = (int64_t)(rem % (size_t)c->count[d]);

			rem /= (size_t)c->count[d];
			off += (size_t)(c->start[d] + o * c->step[d]) * c->ist[d];
		}
		const float *x = c->x + off;

		if (c->step[last] == 1) {
			memcpy(y, x + c->start[last], row * sizeof(float));
			continue;
		}
		for (size_t i = 0; i < row; i++)
			memcpy(&y[i], &x[c->start[last] + (int64_t)i * c->step[last]], sizeof(float));
	}
}

/* slice: out[o_0, ..., o_{r-1}] = in[start_0 + o_0 step_0, ...], start and
 * step per dim from enpu_slice_plan (ONNX's clamping; o_d * step_d stays
 * within the dim, so nothing overflows). */
ENPU_KERNEL(slice)
{
	const enpu_shape *sx = &in[0].shape;
	slice_ctx c = {.x = in[0].data, .y = out[0].data, .rank = sx->ndim};
	size_t n = 1;

	(void)n_in;
	(void)n_out;
	if (sx->ndim < 1 || enpu_slice_plan(a, sx, c.start, c.step, c.count, NULL, 0))
		return sx->ndim < 1 ? 0 : -1;
	for (int d = 0; d < sx->ndim; d++)
		n *= (size_t)c.count[d];
	if (n == 0)
		return 0;
	strides_of(sx, c.ist);
	enpu_par_for(par, n / (size_t)c.count[sx->ndim - 1],
		     move_grain((size_t)c.count[sx->ndim - 1]), slice_range, &c);
	return 0;
}

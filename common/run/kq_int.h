/* kq_int.h: element access by dtype for the quantised kernels
 * (kernels_q.c, kernels_qew.c): int8, uint8 and int32 data behind an
 * enpu_view's float pointer, read and written as int32. */
#ifndef ENPU_KQ_INT_H
#define ENPU_KQ_INT_H

#include <stdint.h>
#include "kernels.h"

static inline int32_t qget(const enpu_view *v, size_t i)
{
	const void *p = v->data;

	switch (v->dtype) {
	case ENPU_DT_I8:
		return ((const int8_t *)p)[i];
	case ENPU_DT_U8:
		return ((const uint8_t *)p)[i];
	case ENPU_DT_I32:
		return ((const int32_t *)p)[i];
	default:
		return 0;
	}
}

static inline void qput(const enpu_view *v, size_t i, int32_t x)
{
	void *p = v->data;

	switch (v->dtype) {
	case ENPU_DT_I8:
		((int8_t *)p)[i] = (int8_t)x;
		break;
	case ENPU_DT_U8:
		((uint8_t *)p)[i] = (uint8_t)x;
		break;
	case ENPU_DT_I32:
		((int32_t *)p)[i] = x;
		break;
	default:
		break;
	}
}

/* an optional zero point's element i (0 when absent; element 0 when it is
 * per tensor) */
static inline int32_t zp_at(const enpu_view *in, int n_in, int k, size_t i)
{
	uint64_t n;

	if (k >= n_in || !in[k].data || enpu_shape_numel(&in[k].shape, &n) || n == 0)
		return 0;
	return qget(&in[k], n == 1 ? 0 : i);
}

/* a scale's element i (element 0 when it is per tensor) */
static inline float scale_at(const enpu_view *s, size_t i)
{
	uint64_t n;

	if (enpu_shape_numel(&s->shape, &n) || n == 0)
		return 1.0f;
	return s->data[n == 1 ? 0 : i];
}

static inline size_t numel(const enpu_shape *s)
{
	uint64_t n;

	return enpu_shape_numel(s, &n) == 0 ? (size_t)n : 0;
}

#endif

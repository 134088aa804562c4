/* view_util.h: a view of dtype dt over a caller's buffer, for the integer
 * kernel tests (test_quant.c, test_qgemm.c). */
#ifndef VIEW_UTIL_H
#define VIEW_UTIL_H

#include <string.h>
#include "kernels.h"

static inline enpu_view view(enpu_dtype dt, void *mem, int nd, const int64_t *dims)
{
	enpu_view v;

	memset(&v, 0, sizeof v);
	v.dtype = dt;
	v.data = mem;
	v.shape.ndim = nd;
	for (int i = 0; i < nd; i++)
		v.shape.dim[i] = dims[i];
	return v;
}

#endif

/* npumem.h: npu_sim's DRAM traffic model of a GEMM-class op: the default
 * model with reuse and graceful re-fetch (npumem.c), and the trace-level
 * model of scalesim_compat mode (npumem_compat.c). docs/npu-sim.md,
 * "Memory model". */
#ifndef ENPU_NPUMEM_H
#define ENPU_NPUMEM_H

#include <stdint.h>
#include "npusim.h"

/* Every count of the model goes through these: a result that does not fit
 * sets *sat and saturates, and the model turns a saturated op into
 * ENPU_E_LIMIT (npusim.c, npumem.c). */
static inline uint64_t npu_mul(uint64_t a, uint64_t b, int *sat)
{
	uint64_t r;

	if (__builtin_mul_overflow(a, b, &r)) {
		*sat = 1;
		return UINT64_MAX;
	}
	return r;
}

static inline uint64_t npu_add(uint64_t a, uint64_t b, int *sat)
{
	uint64_t r;

	if (__builtin_add_overflow(a, b, &r)) {
		*sat = 1;
		return UINT64_MAX;
	}
	return r;
}

static inline uint64_t npu_umin(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* ceil(a / b); 0 when b is 0. */
static inline uint64_t npu_cdiv(uint64_t a, uint64_t b)
{
	return b ? a / b + (a % b != 0) : 0;
}

/* One group's GEMM seen as a convolution over an NHWC feature map: the
 * ifmap word of window m, column k is pixel (oh*sH + kh*dH, ow*sW + kw*dW)
 * of image b, channel c, with m = (b*OH + oh)*OW + ow and
 * k = (kh*kW + kw)*C + c (channels fastest). A matrix product is the
 * convolution with OH = M, OW = 1, C = K and a 1x1 kernel. H, W: the rows
 * and columns the windows span, (OH-1)*sH + (kH-1)*dH + 1 (likewise W). */
typedef struct enpu_npu_geom {
	uint64_t M, N, K;
	uint64_t B, OH, OW, C, kH, kW, sH, sW, dH, dW, H, W;
	/* bytes of one word of the ifmap, filter and ofmap (their tensors'
	 * element sizes, enpu_npu_elem_bytes): what an SRAM holds in words;
	 * 0 = the target's word_bytes */
	uint64_t eb[ENPU_SRAM_COUNT];
} enpu_npu_geom;

/* Bytes of one word of SRAM i's operand: its tensor's element size, or
 * the target's word_bytes. */
static inline uint64_t enpu_npu_word_of(const enpu_npu_target *t, const enpu_npu_geom *g, int i)
{
	return g->eb[i] ? g->eb[i] : (uint64_t)t->word_bytes;
}

/* The geometry of a matrix product (M x K times K x N); eb all 0. */
void enpu_npu_geom_matrix(enpu_npu_geom *g, uint64_t M, uint64_t N, uint64_t K);
/* H and W from the rest; 1 when a count overflows or M, K do not match. */
int enpu_npu_geom_finish(enpu_npu_geom *g);

/* DRAM words of one group (rd, wr per SRAM) under the default model.
 * st holds the mapping (row_folds, col_folds). *sat on overflow. -1 only
 * when scratch memory cannot be had (ENPU_E_NOMEM). */
int enpu_npu_mem_default(const enpu_npu_target *t, const enpu_npu_geom *g,
			 const enpu_npu_opstats *st, uint64_t rd[ENPU_SRAM_COUNT],
			 uint64_t wr[ENPU_SRAM_COUNT], int *sat, enpu_err *e);

/* SCALE-Sim v2's DRAM counts of one group (npumem_compat.c), replaying its
 * demand order through its read and write buffers: ifmap and filter reads,
 * ofmap writes (rd, wr per SRAM). Without dram_bytes_per_cycle its CALC
 * bandwidth mode (*stall = 0); with it, its USER mode at that many words
 * per cycle per memory, and *stall its stall cycles. ENPU_E_LIMIT when the
 * trace is too long to replay or a count overflows, ENPU_E_NOMEM. name:
 * the op, for the message. */
int enpu_npu_mem_compat(const enpu_npu_target *t, const enpu_npu_geom *g, const char *name,
			uint64_t rd[ENPU_SRAM_COUNT], uint64_t wr[ENPU_SRAM_COUNT], uint64_t *stall,
			enpu_err *e);

#endif

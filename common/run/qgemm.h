/* qgemm.h: the integer GEMM of the quantised kernels (kernels_q.c:
 * conv_integer, qlinear_conv, matmul_integer, qlinear_matmul).
 *
 * For each batch b, C[i, j] = sum over k of A[i, k] * B[j, k], A and B
 * int16 rows of Kp elements (zero-padded past K: a zero adds nothing),
 * summed in uint32 arithmetic, i.e. exactly the int32 wrap of the exact
 * integer sum whatever the order (each product of two int16 of magnitude
 * <= 255 is exact). Micro-kernels per instruction set: AVX-512BW (VNNI
 * when the CPU has it), AVX2 (vpmaddwd) or portable C, chosen from the
 * float GEMM's choice (enpu_gemm_isa: EULERNPU_ISA lowers both). Threads
 * take whole tiles of C (par.h); every sum is one thread's. */
#ifndef ENPU_QGEMM_H
#define ENPU_QGEMM_H

#include <stddef.h>
#include <stdint.h>
#include "par.h"

/* gives the finished sums of row i, columns j0 .. j0+n-1, of batch b */
typedef void (*enpu_qgemm_store)(void *ctx, size_t b, size_t i, size_t j0, const uint32_t *acc,
				 size_t n);

typedef struct enpu_qgemm {
	size_t batch, M, N, Kp;
	const int16_t *a, *b;     /* A[b][i][k] = a[b*a_bs + i*Kp + k]; B likewise */
	size_t a_bs, b_bs;
	enpu_qgemm_store store;
	void *ctx;
} enpu_qgemm;

/* the row length for K: K rounded up to the vector kernels' step */
size_t enpu_qgemm_kp(size_t K);
void enpu_qgemm_run(const enpu_qgemm *g, enpu_par *par);
/* the micro-kernels in use: "portable", "avx2", "avx512bw" or "avx512vnni" */
const char *enpu_qgemm_isa(void);

#endif

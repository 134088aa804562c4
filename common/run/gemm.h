/* gemm.h: the GEMM core of cpu_ref's matmul, gemm and convolutions, and of
 * npu_sim's array (common/backends/npu_sim/npuexec.c).
 *
 * C (M x N) = A (M x K) x B (K x N), then an epilogue. Every element is one
 * chain, whatever the blocking, the instruction set or the thread count:
 *   acc = 0.0f; for k = 0 .. K-1 ascending: acc = fmaf(A[i,k], B[k,j], acc)
 * The K dimension is cut into blocks of ENPU_GEMM_KC; between two blocks
 * the partial sum waits in C as a float, which is exactly the float the
 * chain holds, so the cut changes no bit. Only after the last block does
 * the epilogue run on the finished sum.
 *
 * B is packed first (into scratch memory the caller provides: the op's
 * scratch in the memory plan) into panels of NR columns, k-major,
 * zero-padded past N; A is read where it lies (row- or column-major: a
 * weight matrix is not copied on every run). Register-blocked
 * micro-kernels then compute MR x NR tiles of C, each accumulator one
 * chain: AVX-512 (MR 8, NR 32), AVX2+FMA (MR 6, NR 16), or a portable one
 * calling fmaf (MR 4, NR 16), chosen at run time from the CPU
 * (EULERNPU_ISA=portable|avx2|avx512 picks a lower one; a vector FMA lane
 * is a correctly rounded fused multiply-add, i.e. exactly fmaf). Threads
 * take whole blocks of C, never part of one chain. */
#ifndef ENPU_GEMM_H
#define ENPU_GEMM_H

#include <stddef.h>
#include "par.h"

#define ENPU_GEMM_KC 256

/* What happens to a finished sum s at C[i, j]:
 *   ENPU_EPI_NONE:  y = s
 *   ENPU_EPI_GEMM:  y = alpha * s; with c: y = y + (beta * c[i, j])
 *   ENPU_EPI_BIAS:  y = s + bias[i] */
enum { ENPU_EPI_NONE, ENPU_EPI_GEMM, ENPU_EPI_BIAS };

typedef struct enpu_gemm {
	size_t M, N, K;
	const float *a;          /* A[i,k] = a[i * a_rs + k * a_cs] */
	size_t a_rs, a_cs;
	const float *b;          /* B[k,j] = b[k * b_rs + j * b_cs] */
	size_t b_rs, b_cs;
	float *c;                /* C[i,j] = c[i * ldc + j] */
	size_t ldc;
	int epi;
	float alpha, beta;
	const float *cin;        /* ENPU_EPI_GEMM: may be NULL */
	size_t cin_rs, cin_cs;   /* element strides of cin (0 = broadcast) */
	const float *bias;       /* ENPU_EPI_BIAS: one per row of C */
} enpu_gemm;

/* The micro-kernel's tile: MR rows of A per panel, NR columns of B. */
int enpu_gemm_mr(void);
int enpu_gemm_nr(void);
/* The instruction set in use: "avx512", "avx2" or "portable". */
const char *enpu_gemm_isa(void);
/* Tests only: use the named set from now on (no kernel may be running);
 * -1 when this CPU lacks it. */
int enpu_gemm_use_isa(const char *name);

/* A small product (M * N * K at most ENPU_GEMM_SMALL multiply-adds) is
 * computed directly from A and B, element by element in the same chain,
 * without packing: it takes no scratch (enpu_gemm_direct). */
#define ENPU_GEMM_SMALL 16384
int enpu_gemm_small(size_t M, size_t N, size_t K);
void enpu_gemm_direct(const enpu_gemm *g);

/* Floats of a packed B (K x N) on any instruction set (NR <= 32), plus
 * room to align it to 64 bytes; 0 when it does not fit in size_t. A
 * product's scratch is enpu_gemm_scratch_floats: that, or 0 for a small
 * product. */
size_t enpu_gemm_packed_b_floats(size_t K, size_t N);
size_t enpu_gemm_scratch_floats(size_t M, size_t N, size_t K);

/* p rounded up to a 64-byte boundary (packed panels are read aligned). */
float *enpu_gemm_align(float *p);

/* B's packed layout: panel q (columns q*NR .. q*NR+NR, zero past N) holds
 * rows k at bp[(q*K + k)*NR + j % NR]. A packer fills rows [k0, k1) of
 * panels [q0, q1) of that layout; enpu_gemm_pack_b_rows does it from
 * g->b, conv's im2col from the image. */
typedef void (*enpu_gemm_packer)(void *ctx, size_t k0, size_t k1, size_t q0, size_t q1,
				 float *bp);
void enpu_gemm_pack_b_rows(const enpu_gemm *g, size_t k0, size_t k1, size_t q0, size_t q1,
			   float *bp);

/* npu_sim's order for enpu_gemm_compute (npuexec.c: its array's folds):
 * blocks of bm x bn micro-tiles (bm panels of MR rows, bn panels of NR
 * columns; 0 = all) in row-major order of blocks (col_major = 0) or
 * column-major. */
typedef struct enpu_gemm_blocks {
	size_t bm, bn;
	int col_major;
} enpu_gemm_blocks;

/* C = A x B and the epilogue: B packed in full into bp
 * (enpu_gemm_packed_b_floats, aligned) by pack (NULL: from g->b), then C
 * taken block by block, each block through all of K: bl NULL is cpu_ref's
 * blocking (tiles of about 16 rows by one B panel, a panel's tiles one
 * after the other), else npu_sim's blocks in bl's order. */
void enpu_gemm_compute(const enpu_gemm *g, float *bp, enpu_gemm_packer pack, void *pctx,
		       const enpu_gemm_blocks *bl, enpu_par *par);

#endif

/* gemm.c: the GEMM core (gemm.h): packing B, the micro-kernels per
 * instruction set, cache blocking and the epilogue. Every accumulator of a
 * micro-kernel is one element's chain acc = fmaf(A[i,k], B[k,j], acc) over
 * ascending k; a K block starts from 0.0f (the first) or from the partial
 * sum C holds (the others). A is read where it lies (A[i,k] at
 * a[i*a_rs + k*a_cs]: a weight matrix is not copied on every run); only a
 * last, partial panel of MR rows is copied, zero-padded, per K block. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "gemm.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define HAVE_X86_PATHS 1
#include <immintrin.h>
#endif

#define MR_MAX 16
#define NR_MAX 32
/* rows of C per cpu_ref tile (rounded up to whole MR panels) */
#define CPU_TILE_ROWS 16

/* kc steps of an MR x NR tile: A[r, k] = a[r*ars + k*acs], B's packed
 * panel bp (kc x NR), C at c with row stride ldc. */
typedef void (*micro_fn)(size_t kc, const float *a, size_t ars, size_t acs, const float *bp,
			 float *c, size_t ldc, int first);

typedef struct gemm_isa {
	const char *name;
	int mr, nr;
	micro_fn micro;
} gemm_isa;

/* ---- portable: fmaf (one instruction on arm64 and x86 with FMA) ---------- */

#define P_MR 4
#define P_NR 16

static void micro_portable(size_t kc, const float *a, size_t ars, size_t acs, const float *bp,
			   float *c, size_t ldc, int first)
{
	float acc[P_MR][P_NR];

	for (int r = 0; r < P_MR; r++)
		for (int j = 0; j < P_NR; j++)
			acc[r][j] = first ? 0.0f : c[(size_t)r * ldc + (size_t)j];
	for (size_t k = 0; k < kc; k++, a += acs, bp += P_NR)
		for (int r = 0; r < P_MR; r++) {
			float av = a[(size_t)r * ars];
			for (int j = 0; j < P_NR; j++)
				acc[r][j] = fmaf(av, bp[j], acc[r][j]);
		}
	for (int r = 0; r < P_MR; r++)
		memcpy(c + (size_t)r * ldc, acc[r], sizeof acc[r]);
}

#ifdef HAVE_X86_PATHS
/* ---- AVX2 + FMA: 6 x 16, twelve accumulators ------------------------------ */

#define A2_MR 6
#define A2_NR 16

__attribute__((target("avx2,fma")))
static void micro_avx2(size_t kc, const float *a, size_t ars, size_t acs, const float *bp,
		       float *c, size_t ldc, int first)
{
	__m256 c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51, x, b0, b1;

#define A2_Z(r) c##r##0 = c##r##1 = _mm256_setzero_ps()
#define A2_L(r) c##r##0 = _mm256_loadu_ps(c + r * ldc), c##r##1 = _mm256_loadu_ps(c + r * ldc + 8)
#define A2_F(r) x = _mm256_broadcast_ss(a + r * ars), c##r##0 = _mm256_fmadd_ps(x, b0, c##r##0), \
		c##r##1 = _mm256_fmadd_ps(x, b1, c##r##1)
#define A2_S(r) _mm256_storeu_ps(c + r * ldc, c##r##0), _mm256_storeu_ps(c + r * ldc + 8, c##r##1)
	if (first) {
		A2_Z(0); A2_Z(1); A2_Z(2); A2_Z(3); A2_Z(4); A2_Z(5);
	} else {
		A2_L(0); A2_L(1); A2_L(2); A2_L(3); A2_L(4); A2_L(5);
	}
	for (size_t k = 0; k < kc; k++, a += acs, bp += A2_NR) {
		b0 = _mm256_load_ps(bp);
		b1 = _mm256_load_ps(bp + 8);
		A2_F(0); A2_F(1); A2_F(2); A2_F(3); A2_F(4); A2_F(5);
	}
	A2_S(0); A2_S(1); A2_S(2); A2_S(3); A2_S(4); A2_S(5);
#undef A2_Z
#undef A2_L
#undef A2_F
#undef A2_S
}

/* ---- AVX-512: 8 x 32, sixteen accumulators -------------------------------- */

#define A5_MR 8
#define A5_NR 32

__attribute__((target("avx512f")))
static void micro_avx512(size_t kc, const float *a, size_t ars, size_t acs, const float *bp,
			 float *c, size_t ldc, int first)
{
	__m512 c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51, c60, c61, c70, c71;
	__m512 x, b0, b1;

#define A5_Z(r) c##r##0 = c##r##1 = _mm512_setzero_ps()
#define A5_L(r) c##r##0 = _mm512_loadu_ps(c + r * ldc), c##r##1 = _mm512_loadu_ps(c + r * ldc + 16)
#define A5_F(r) x = _mm512_set1_ps(a[r * ars]), c##r##0 = _mm512_fmadd_ps(x, b0, c##r##0), \
		c##r##1 = _mm512_fmadd_ps(x, b1, c##r##1)
#define A5_S(r) _mm512_storeu_ps(c + r * ldc, c##r##0), _mm512_storeu_ps(c + r * ldc + 16, c##r##1)
	if (first) {
		A5_Z(0); A5_Z(1); A5_Z(2); A5_Z(3); A5_Z(4); A5_Z(5); A5_Z(6); A5_Z(7);
	} else {
		A5_L(0); A5_L(1); A5_L(2); A5_L(3); A5_L(4); A5_L(5); A5_L(6); A5_L(7);
	}
	for (size_t k = 0; k < kc; k++, a += acs, bp += A5_NR) {
		b0 = _mm512_load_ps(bp);
		b1 = _mm512_load_ps(bp + 16);
		A5_F(0); A5_F(1); A5_F(2); A5_F(3); A5_F(4); A5_F(5); A5_F(6); A5_F(7);
	}
	A5_S(0); A5_S(1); A5_S(2); A5_S(3); A5_S(4); A5_S(5); A5_S(6); A5_S(7);
#undef A5_Z
#undef A5_L
#undef A5_F
#undef A5_S
}
#endif

/* ---- the instruction set ---------------------------------------------------- */

static const gemm_isa isa_portable = {"portable", P_MR, P_NR, micro_portable};
#ifdef HAVE_X86_PATHS
static const gemm_isa isa_avx2 = {"avx2", A2_MR, A2_NR, micro_avx2};
static const gemm_isa isa_avx512 = {"avx512", A5_MR, A5_NR, micro_avx512};
#endif

static const gemm_isa *chosen;

/* The best the CPU has of the sets up to `cap` (0 portable, 1 avx2, 2 avx512). */
static const gemm_isa *best(int cap)
{
#ifdef HAVE_X86_PATHS
	__builtin_cpu_init();
	if (cap >= 2 && __builtin_cpu_supports("avx512f"))
		return &isa_avx512;
	if (cap >= 1 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		return &isa_avx2;
#endif
	(void)cap;
	return &isa_portable;
}

static int cap_of(const char *name)
{
	return name && !strcmp(name, "portable") ? 0 : name && !strcmp(name, "avx2") ? 1 : 2;
}

/* The best the CPU has, lowered by EULERNPU_ISA. Chosen once: every thread
 * computes the same answer, so the benign race needs no lock. */
static const gemm_isa *isa(void)
{
	const gemm_isa *v = __atomic_load_n(&chosen, __ATOMIC_ACQUIRE);

	if (v)
		return v;
	v = best(cap_of(getenv("EULERNPU_ISA")));
	__atomic_store_n(&chosen, v, __ATOMIC_RELEASE);
	return v;
}

int enpu_gemm_use_isa(const char *name)
{
	const gemm_isa *v = best(cap_of(name));

	if (strcmp(v->name, name) != 0)
		return -1;
	__atomic_store_n(&chosen, v, __ATOMIC_RELEASE);
	return 0;
}

int enpu_gemm_mr(void)
{
	return isa()->mr;
}

int enpu_gemm_nr(void)
{
	return isa()->nr;
}

const char *enpu_gemm_isa(void)
{
	return isa()->name;
}

/* ---- sizes and packing ------------------------------------------------------- */

static size_t cdiv(size_t a, size_t b)
{
	return a / b + (a % b != 0);
}

/* (rows + round - 1) * K, at least every instruction set's panels (MR or
 * NR <= round), + 16 floats of alignment room; 0 on overflow */
static size_t packed_floats(size_t rows, size_t K, size_t round)
{
	size_t f;

	if (rows > SIZE_MAX - round || __builtin_mul_overflow(rows + round - 1, K ? K : 1, &f) ||
	    f > SIZE_MAX / sizeof(float) - 16)
		return 0;
	return f + 16;
}

size_t enpu_gemm_packed_b_floats(size_t K, size_t N)
{
	return packed_floats(N, K, NR_MAX);
}

int enpu_gemm_small(size_t M, size_t N, size_t K)
{
	size_t w;

	return !__builtin_mul_overflow(M, N, &w) && !__builtin_mul_overflow(w, K, &w) &&
	       w <= ENPU_GEMM_SMALL;
}

size_t enpu_gemm_scratch_floats(size_t M, size_t N, size_t K)
{
	(void)M;
	if (enpu_gemm_small(M, N, K))
		return 0;
	return enpu_gemm_packed_b_floats(K, N);
}

float *enpu_gemm_align(float *p)
{
	uintptr_t u = (uintptr_t)p;

	return (float *)(void *)((u + 63) & ~(uintptr_t)63);
}

void enpu_gemm_pack_b_rows(const enpu_gemm *g, size_t k0, size_t k1, size_t q0, size_t q1,
			   float *bp)
{
	size_t K = g->K, nr = (size_t)isa()->nr;

	for (size_t q = q0; q < q1; q++) {
		float *d = bp + (q * K + k0) * nr;
		size_t j0 = q * nr, nc = g->N - j0 < nr ? g->N - j0 : nr;
		for (size_t k = k0; k < k1; k++, d += nr) {
			const float *src = g->b + k * g->b_rs + j0 * g->b_cs;
			size_t c = 0;
			if (g->b_cs == 1) {
				memcpy(d, src, nc * sizeof(float));
				c = nc;
			} else {
				for (; c < nc; c++)
					d[c] = src[c * g->b_cs];
			}
			for (; c < nr; c++)
				d[c] = 0.0f;
		}
	}
}

/* a grain of about 32k floats copied per chunk */
static size_t pack_grain(size_t per_panel)
{
	return per_panel >= 32768 ? 1 : 32768 / (per_panel ? per_panel : 1);
}

/* ---- compute ------------------------------------------------------------------- */

typedef struct comp_ctx {
	const enpu_gemm *g;
	const gemm_isa *is;
	const float *bp;         /* packed B (read) */
	float *bpw;              /* the same, for the packer */
	enpu_gemm_packer pack;
	void *pctx;
	size_t mp, np;           /* panels of A and B */
	size_t bm, bn;           /* block size in panels */
	size_t mb, nb;           /* blocks along M and N */
	int col_major;
} comp_ctx;

/* The epilogue on rows [i0, i0+rows) x columns [j0, j0+cols) of C. */
static void epilogue(const enpu_gemm *g, size_t i0, size_t rows, size_t j0, size_t cols)
{
	for (size_t i = i0; i < i0 + rows; i++) {
		float *y = g->c + i * g->ldc;
		if (g->epi == ENPU_EPI_BIAS) {
			float bv = g->bias[i];
			for (size_t j = j0; j < j0 + cols; j++)
				y[j] = y[j] + bv;
		} else if (g->epi == ENPU_EPI_GEMM) {
			for (size_t j = j0; j < j0 + cols; j++) {
				float s = g->alpha * y[j];
				if (g->cin)
					s = s + g->beta * g->cin[i * g->cin_rs + j * g->cin_cs];
				y[j] = s;
			}
		}
	}
}

static void direct_portable(const enpu_gemm *g)
{
	for (size_t i = 0; i < g->M; i++)
		for (size_t j = 0; j < g->N; j++) {
			float acc = 0.0f;
			for (size_t k = 0; k < g->K; k++)
				acc = fmaf(g->a[i * g->a_rs + k * g->a_cs], g->b[k * g->b_rs + j * g->b_cs],
					   acc);
			g->c[i * g->ldc + j] = acc;
		}
}

#ifdef HAVE_X86_PATHS
/* The same chains, 16 columns of a row at a time (masked at the row's end);
 * B's columns loaded where they lie (contiguous, or gathered). */
__attribute__((target("avx512f")))
static void direct_avx512(const enpu_gemm *g)
{
	const __m512i lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
	const __m512i cols = _mm512_mullo_epi32(lane, _mm512_set1_epi32((int)g->b_cs));

	for (size_t i = 0; i < g->M; i++)
		for (size_t j0 = 0; j0 < g->N; j0 += 16) {
			size_t n = g->N - j0 < 16 ? g->N - j0 : 16;
			__mmask16 m = (__mmask16)((1u << n) - 1u);
			__m512 acc = _mm512_setzero_ps();
			for (size_t k = 0; k < g->K; k++) {
				const float *b = g->b + k * g->b_rs + j0 * g->b_cs;
				__m512 bv = g->b_cs == 1 ? _mm512_maskz_loadu_ps(m, b)
					: _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, cols, b, 4);
				acc = _mm512_fmadd_ps(_mm512_set1_ps(g->a[i * g->a_rs + k * g->a_cs]), bv, acc);
			}
			_mm512_mask_storeu_ps(g->c + i * g->ldc + j0, m, acc);
		}
}
#endif

void enpu_gemm_direct(const enpu_gemm *g)
{
#ifdef HAVE_X86_PATHS
	/* the gather's indices are 32-bit: B's column stride times 16 must fit */
	if (isa() == &isa_avx512 && g->b_cs <= (size_t)INT32_MAX / 16)
		direct_avx512(g);
	else
#endif
		direct_portable(g);
	if (g->epi != ENPU_EPI_NONE)
		epilogue(g, 0, g->M, 0, g->N);
}

/* One micro-tile: a full one in place, an edge one through a local tile.
 * A's rows at a with strides (ars, acs). */
static void tile(const comp_ctx *x, size_t kc, const float *a, size_t ars, size_t acs,
		 const float *bp, size_t i0, size_t j0, int first)
{
	const enpu_gemm *g = x->g;
	size_t mr = (size_t)x->is->mr, nr = (size_t)x->is->nr;
	size_t rows = g->M - i0 < mr ? g->M - i0 : mr, cols = g->N - j0 < nr ? g->N - j0 : nr;
	float *c = g->c + i0 * g->ldc + j0;
	float t[MR_MAX * NR_MAX];

	if (rows == mr && cols == nr) {
		x->is->micro(kc, a, ars, acs, bp, c, g->ldc, first);
		return;
	}
	if (!first)
		for (size_t r = 0; r < rows; r++)
			memcpy(t + r * nr, c + r * g->ldc, cols * sizeof(float));
	x->is->micro(kc, a, ars, acs, bp, t, nr, first);
	for (size_t r = 0; r < rows; r++)
		memcpy(c + r * g->ldc, t + r * nr, cols * sizeof(float));
}

/* The last panel's rows [i0, M) of A for k in [pc, pc+kc), k-major and
 * zero-padded to MR rows: edge[k*MR + r]. */
static void edge_panel(const enpu_gemm *g, size_t i0, size_t pc, size_t kc, size_t mr,
		       float *edge)
{
	size_t rows = g->M - i0;

	for (size_t k = 0; k < kc; k++)
		for (size_t r = 0; r < mr; r++)
			edge[k * mr + r] = r < rows ? g->a[(i0 + r) * g->a_rs + (pc + k) * g->a_cs] : 0.0f;
}

/* One K block [pc, pc+kc) of rows [p0, p1) x columns [q0, q1) (panels):
 * each B panel, then each A panel against it (the B panel stays in L1). */
static void kblock(const comp_ctx *x, size_t p0, size_t p1, size_t q0, size_t q1, size_t pc,
		   size_t kc, int first, int last, float *edge)
{
	const enpu_gemm *g = x->g;
	size_t mr = (size_t)x->is->mr, nr = (size_t)x->is->nr, K = g->K;
	int has_edge = p1 == x->mp && g->M % mr != 0;

	if (has_edge)
		edge_panel(g, (x->mp - 1) * mr, pc, kc, mr, edge);
	for (size_t q = q0; q < q1; q++) {
		const float *bq = x->bp + (q * K + pc) * nr;
		size_t j0 = q * nr, cols = g->N - j0 < nr ? g->N - j0 : nr;
		for (size_t p = p0; p < p1; p++) {
			size_t i0 = p * mr;
			if (has_edge && p == x->mp - 1)
				tile(x, kc, edge, 1, mr, bq, i0, j0, first);
			else
				tile(x, kc, g->a + i0 * g->a_rs + pc * g->a_cs, g->a_rs, g->a_cs, bq,
				     i0, j0, first);
			if (last && g->epi != ENPU_EPI_NONE)
				epilogue(g, i0, g->M - i0 < mr ? g->M - i0 : mr, j0, cols);
		}
	}
}

/* The K blocks in order: kc of block pc, and whether it is the first or
 * the last (K = 0: one empty block that writes the zero sums). */
#define FOR_KBLOCKS(K, pc, kc, first, last) \
	for (size_t pc = 0, kc, first, last; \
	     kc = (K) - pc < ENPU_GEMM_KC ? (K) - pc : ENPU_GEMM_KC, first = pc == 0, \
	     last = (K) - pc <= ENPU_GEMM_KC, pc == 0 || pc < (K); pc += ENPU_GEMM_KC)

/* Block (bi, bj) of the packed B: its K blocks in order (the block's C
 * stays in cache from one to the next). */
static void fold_block(const comp_ctx *x, size_t bi, size_t bj)
{
	size_t p0 = bi * x->bm, p1 = p0 + x->bm < x->mp ? p0 + x->bm : x->mp;
	size_t q0 = bj * x->bn, q1 = q0 + x->bn < x->np ? q0 + x->bn : x->np;
	float edge[ENPU_GEMM_KC * MR_MAX];

	FOR_KBLOCKS(x->g->K, pc, kc, first, last) {
		kblock(x, p0, p1, q0, q1, pc, kc, (int)first, (int)last, edge);
		if (last)
			break;
	}
}

static void compute_range(void *vctx, size_t t0, size_t t1)
{
	const comp_ctx *x = vctx;

	for (size_t t = t0; t < t1; t++) {
		if (x->col_major)
			fold_block(x, t % x->mb, t / x->mb);
		else
			fold_block(x, t / x->nb, t % x->nb);
	}
}

/* The default packer: B from g->b. */
static void pack_from_b(void *ctx, size_t k0, size_t k1, size_t q0, size_t q1, float *bp)
{
	enpu_gemm_pack_b_rows(ctx, k0, k1, q0, q1, bp);
}

typedef struct full_ctx {
	const comp_ctx *x;
} full_ctx;

static void pack_full_range(void *vctx, size_t q0, size_t q1)
{
	const comp_ctx *x = ((const full_ctx *)vctx)->x;

	x->pack(x->pctx, 0, x->g->K, q0, q1, x->bpw);
}

void enpu_gemm_compute(const enpu_gemm *g, float *bp, enpu_gemm_packer pack, void *pctx,
		       const enpu_gemm_blocks *bl, enpu_par *par)
{
	const gemm_isa *is = isa();
	comp_ctx x = {.g = g, .is = is, .bp = bp, .bpw = bp, .pack = pack ? pack : pack_from_b,
		      .pctx = pack ? pctx : (void *)g};
	full_ctx f = {&x};
	size_t tasks, work;

	if (g->M == 0 || g->N == 0)
		return;
	x.mp = cdiv(g->M, (size_t)is->mr);
	x.np = cdiv(g->N, (size_t)is->nr);
	if (__builtin_mul_overflow(g->M, g->N, &work) ||
	    __builtin_mul_overflow(work, g->K ? g->K : 1, &work))
		work = SIZE_MAX;
	enpu_par_for(par, x.np, pack_grain(g->K * (size_t)is->nr), pack_full_range, &f);
	if (bl) {
		x.bm = bl->bm ? bl->bm : x.mp;
		x.bn = bl->bn ? bl->bn : x.np;
		x.col_major = bl->col_major;
	} else {
		/* cpu_ref: tiles of about CPU_TILE_ROWS rows by one B panel,
		 * each through all of K, a B panel's tiles one after the other
		 * (its panel stays in L2, the tile's C in L1) */
		x.bm = cdiv(CPU_TILE_ROWS, (size_t)is->mr);
		x.bn = 1;
		x.col_major = 1;
	}
	x.bm = x.bm < x.mp ? x.bm : x.mp;
	x.bn = x.bn < x.np ? x.bn : x.np;
	x.mb = cdiv(x.mp, x.bm);
	x.nb = cdiv(x.np, x.bn);
	tasks = x.mb * x.nb;
	/* small products stay on the caller: about 64k multiply-adds a chunk */
	enpu_par_for(par, tasks, work / tasks >= 65536 ? 1 : cdiv(65536, work / tasks + 1),
		     compute_range, &x);
}

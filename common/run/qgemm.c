/* qgemm.c: the integer GEMM (qgemm.h). A tile is QMR rows by QNB columns
 * of C; inside it, 4 x 4 blocks of dot products over the whole Kp (the
 * rows of A and B are contiguous), then single dot products at the edges.
 * All arithmetic is uint32 (vpmaddwd's pair sums of two products of
 * magnitude <= 255 * 255 are exact in int32), so every sum is the exact
 * sum wrapped to 32 bits. */
#include <string.h>
#include "gemm.h"
#include "qgemm.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define HAVE_X86_PATHS 1
#include <immintrin.h>
#endif

#define QK 32      /* Kp is a multiple of this */
#define QMR 4
#define QNR 4
#define QNB 32     /* columns of a tile */

typedef uint32_t (*dot1_fn)(size_t kp, const int16_t *a, const int16_t *b);
typedef void (*dot44_fn)(size_t kp, const int16_t *a, const int16_t *b, uint32_t c[QMR][QNR]);

typedef struct qisa {
	const char *name;
	dot1_fn dot1;
	dot44_fn dot44;
} qisa;

/* ---- portable --------------------------------------------------------------- */

static uint32_t dot1_portable(size_t kp, const int16_t *a, const int16_t *b)
{
	uint32_t s = 0;

	for (size_t k = 0; k < kp; k++)
		s += (uint32_t)((int32_t)a[k] * (int32_t)b[k]);
	return s;
}

static void dot44_portable(size_t kp, const int16_t *a, const int16_t *b, uint32_t c[QMR][QNR])
{
	for (int r = 0; r < QMR; r++)
		for (int j = 0; j < QNR; j++)
			c[r][j] = dot1_portable(kp, a + (size_t)r * kp, b + (size_t)j * kp);
}

#ifdef HAVE_X86_PATHS
/* ---- AVX2: vpmaddwd, 4 x 2 twice ---------------------------------------------- */

__attribute__((target("avx2")))
static uint32_t hsum256(__m256i v)
{
	__m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));

	s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
	s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
	return (uint32_t)_mm_cvtsi128_si32(s);
}

__attribute__((target("avx2")))
static uint32_t dot1_avx2(size_t kp, const int16_t *a, const int16_t *b)
{
	__m256i s = _mm256_setzero_si256();

	for (size_t k = 0; k < kp; k += 16)
		s = _mm256_add_epi32(s, _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(a + k)),
							  _mm256_loadu_si256((const __m256i *)(b + k))));
	return hsum256(s);
}

__attribute__((target("avx2")))
static void dot42_avx2(size_t kp, const int16_t *a, const int16_t *b, uint32_t c[QMR][QNR],
		       int j0)
{
	__m256i s00 = _mm256_setzero_si256(), s01 = s00, s10 = s00, s11 = s00, s20 = s00,
		s21 = s00, s30 = s00, s31 = s00, b0, b1, x;
	const int16_t *b0p = b + (size_t)j0 * kp, *b1p = b0p + kp;

#define Q2_F(r) x = _mm256_loadu_si256((const __m256i *)(a + (size_t)(r) * kp + k)), \
	s##r##0 = _mm256_add_epi32(s##r##0, _mm256_madd_epi16(x, b0)), \
	s##r##1 = _mm256_add_epi32(s##r##1, _mm256_madd_epi16(x, b1))
	for (size_t k = 0; k < kp; k += 16) {
		b0 = _mm256_loadu_si256((const __m256i *)(b0p + k));
		b1 = _mm256_loadu_si256((const __m256i *)(b1p + k));
		Q2_F(0); Q2_F(1); Q2_F(2); Q2_F(3);
	}
#undef Q2_F
	c[0][j0] = hsum256(s00), c[0][j0 + 1] = hsum256(s01);
	c[1][j0] = hsum256(s10), c[1][j0 + 1] = hsum256(s11);
	c[2][j0] = hsum256(s20), c[2][j0 + 1] = hsum256(s21);
	c[3][j0] = hsum256(s30), c[3][j0 + 1] = hsum256(s31);
}

static void dot44_avx2(size_t kp, const int16_t *a, const int16_t *b, uint32_t c[QMR][QNR])
{
	dot42_avx2(kp, a, b, c, 0);
	dot42_avx2(kp, a, b, c, 2);
}

/* ---- AVX-512BW (vpmaddwd) and AVX-512 VNNI (vpdpwssd, the same sums) ---------- */

/* the lanes' sum in vector adds (GCC's _mm512_reduce_add_epi32 adds C ints,
 * whose overflow is undefined; the wrap is the semantics here) */
__attribute__((target("avx512f")))
static uint32_t hsum512(__m512i v)
{
	return hsum256(_mm256_add_epi32(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1)));
}

#define Q5_BODY(MAC)                                                                          \
	__m512i s00 = _mm512_setzero_si512(), s01 = s00, s02 = s00, s03 = s00, s10 = s00,       \
		s11 = s00, s12 = s00, s13 = s00, s20 = s00, s21 = s00, s22 = s00, s23 = s00,     \
		s30 = s00, s31 = s00, s32 = s00, s33 = s00, b0, b1, b2, b3, x;                   \
	for (size_t k = 0; k < kp; k += 32) {                                                    \
		b0 = _mm512_loadu_si512(b + k);                                                  \
		b1 = _mm512_loadu_si512(b + kp + k);                                             \
		b2 = _mm512_loadu_si512(b + 2 * kp + k);                                         \
		b3 = _mm512_loadu_si512(b + 3 * kp + k);                                         \
		Q5_ROW(MAC, 0); Q5_ROW(MAC, 1); Q5_ROW(MAC, 2); Q5_ROW(MAC, 3);                  \
	}                                                                                        \
	Q5_OUT(0); Q5_OUT(1); Q5_OUT(2); Q5_OUT(3)
#define Q5_ROW(MAC, r) x = _mm512_loadu_si512(a + (size_t)(r) * kp + k), \
	s##r##0 = MAC(s##r##0, x, b0), s##r##1 = MAC(s##r##1, x, b1), \
	s##r##2 = MAC(s##r##2, x, b2), s##r##3 = MAC(s##r##3, x, b3)
#define Q5_OUT(r) c[r][0] = hsum512(s##r##0), \
	c[r][1] = hsum512(s##r##1), \
	c[r][2] = hsum512(s##r##2), \
	c[r][3] = hsum512(s##r##3)
#define MAC_BW(s, x, y) _mm512_add_epi32(s, _mm512_madd_epi16(x, y))
#define MAC_VNNI(s, x, y) _mm512_dpwssd_epi32(s, x, y)

__attribute__((target("avx512f,avx512bw")))
static uint32_t dot1_avx512(size_t kp, const int16_t *a, const int16_t *b)
{
	__m512i s = _mm512_setzero_si512();

	for (size_t k = 0; k < kp; k += 32)
		s = MAC_BW(s, _mm512_loadu_si512(a + k), _mm512_loadu_si512(b + k));
	return hsum512(s);
}

__attribute__((target("avx512f,avx512bw")))
static void dot44_avx512bw(size_t kp, const int16_t *a, const int16_t *b, uint32_t c[QMR][QNR])
{
	Q5_BODY(MAC_BW);
}

__attribute__((target("avx512f,avx512bw,avx512vnni")))
static void dot44_avx512vnni(size_t kp, const int16_t *a, const int16_t *b,
			     uint32_t c[QMR][QNR])
{
	Q5_BODY(MAC_VNNI);
}
#undef Q5_BODY
#undef Q5_ROW
#undef Q5_OUT
#undef MAC_BW
#undef MAC_VNNI
#endif

/* ---- the instruction set -------------------------------------------------------- */

static const qisa q_portable = {"portable", dot1_portable, dot44_portable};
#ifdef HAVE_X86_PATHS
static const qisa q_avx2 = {"avx2", dot1_avx2, dot44_avx2};
static const qisa q_avx512bw = {"avx512bw", dot1_avx512, dot44_avx512bw};
static const qisa q_avx512vnni = {"avx512vnni", dot1_avx512, dot44_avx512vnni};
#endif

/* the float GEMM's choice (EULERNPU_ISA included), refined by what the CPU
 * has for integers; cheap enough to ask per call */
static const qisa *qisa_now(void)
{
#ifdef HAVE_X86_PATHS
	const char *f = enpu_gemm_isa();

	__builtin_cpu_init();
	if (!strcmp(f, "avx512") && __builtin_cpu_supports("avx512bw"))
		return __builtin_cpu_supports("avx512vnni") ? &q_avx512vnni : &q_avx512bw;
	if (strcmp(f, "portable") != 0 && __builtin_cpu_supports("avx2"))
		return &q_avx2;
#endif
	return &q_portable;
}

const char *enpu_qgemm_isa(void)
{
	return qisa_now()->name;
}

size_t enpu_qgemm_kp(size_t K)
{
	return K == 0 ? QK : (K + QK - 1) / QK * QK;
}

/* ---- tiles ------------------------------------------------------------------------ */

typedef struct qrun {
	const enpu_qgemm *g;
	const qisa *isa;
	size_t mt, nt;            /* tiles per batch along M and N */
} qrun;

static void tile(const qrun *q, size_t b, size_t i0, size_t j0)
{
	const enpu_qgemm *g = q->g;
	size_t kp = g->Kp, i1 = i0 + QMR < g->M ? i0 + QMR : g->M;
	size_t j1 = j0 + QNB < g->N ? j0 + QNB : g->N, j = j0;
	const int16_t *a = g->a + b * g->a_bs, *bb = g->b + b * g->b_bs;
	uint32_t acc[QMR][QNB], c[QMR][QNR];

	if (i1 - i0 == QMR)
		for (; j + QNR <= j1; j += QNR) {
			q->isa->dot44(kp, a + i0 * kp, bb + j * kp, c);
			for (int r = 0; r < QMR; r++)
				memcpy(&acc[r][j - j0], c[r], sizeof c[r]);
		}
	for (size_t i = i0; i < i1; i++)
		for (size_t jj = j; jj < j1; jj++)
			acc[i - i0][jj - j0] = q->isa->dot1(kp, a + i * kp, bb + jj * kp);
	for (size_t i = i0; i < i1; i++)
		g->store(g->ctx, b, i, j0, acc[i - i0], j1 - j0);
}

static void tiles_range(void *ctx, size_t t0, size_t t1)
{
	const qrun *q = ctx;

	for (size_t t = t0; t < t1; t++) {
		size_t per = q->mt * q->nt, b = t / per, r = t % per;

		tile(q, b, r / q->nt * QMR, r % q->nt * QNB);
	}
}

void enpu_qgemm_run(const enpu_qgemm *g, enpu_par *par)
{
	qrun q = {g, qisa_now(), (g->M + QMR - 1) / QMR, (g->N + QNB - 1) / QNB};

	if (g->M == 0 || g->N == 0 || g->batch == 0)
		return;
	enpu_par_for(par, g->batch * q.mt * q.nt, 1, tiles_range, &q);
}

/* npumem.c: the DRAM traffic of a GEMM-class op on npu_sim
 * (docs/npu-sim.md, "Memory model").
 *
 * The default model: each fold's tile costs the unique words it touches
 * (the overlap of convolution windows is read once), tiles reused by later
 * folds are kept in the operand's SRAM half as far as they fit, and only
 * what does not fit is read again (graceful()). Partial sums spill only
 * when the ofmap tile does not fit its SRAM half. scalesim_compat's replay
 * of SCALE-Sim's buffers is npumem_compat.c. */
#include <stdlib.h>
#include <string.h>
#include "npumem.h"

/* The default model counts window overlap exactly up to this many steps
 * per op; beyond, a tile's unique words are bounded by its im2col words
 * and the feature map (documented). */
#define UNIQUE_MAX_STEPS (UINT64_C(1) << 26)

void enpu_npu_geom_matrix(enpu_npu_geom *g, uint64_t M, uint64_t N, uint64_t K)
{
	memset(g, 0, sizeof(*g));
	g->M = M, g->N = N, g->K = K;
	g->B = 1, g->OH = M, g->OW = 1, g->C = K;
	g->kH = g->kW = g->sH = g->sW = g->dH = g->dW = 1;
	g->H = M, g->W = 1;
}

int enpu_npu_geom_finish(enpu_npu_geom *g)
{
	int sat = 0;
	uint64_t m, k;

	if (!g->B || !g->OH || !g->OW || !g->C || !g->kH || !g->kW || !g->sH || !g->sW ||
	    !g->dH || !g->dW)
		return 1;
	m = npu_mul(npu_mul(g->B, g->OH, &sat), g->OW, &sat);
	k = npu_mul(npu_mul(g->kH, g->kW, &sat), g->C, &sat);
	g->H = npu_add(npu_mul(g->OH - 1, g->sH, &sat), npu_mul(g->kH - 1, g->dH, &sat), &sat) + 1;
	g->W = npu_add(npu_mul(g->OW - 1, g->sW, &sat), npu_mul(g->kW - 1, g->dW, &sat), &sat) + 1;
	npu_mul(npu_mul(npu_mul(g->B, g->H, &sat), g->W, &sat), g->C, &sat);
	return sat || m != g->M || k != g->K;
}

/* ---- the default model --------------------------------------------------- */

/* DRAM words of an operand with U unique words demanded D times in all,
 * whose repeats come back within a working set of X words, in an SRAM
 * half of Wc words: U fetched once, and of the D - U words demanded again
 * the share of the working set that does not fit, (X - Wc) / X, is read
 * again (rounded up). */
static uint64_t again(uint64_t U, uint64_t D, uint64_t X, uint64_t Wc)
{
	unsigned __int128 x;

	if (D <= U || X <= Wc)
		return npu_umin(U, D);
	x = (unsigned __int128)(D - U) * (X - Wc);
	x = x / X + (x % X != 0);
	return U + (uint64_t)x;
}

/* The same when the reuse spans the whole operand (X = U). */
static uint64_t graceful(uint64_t U, uint64_t D, uint64_t Wc)
{
	return again(U, D, U, Wc);
}

typedef struct uniq {
	const enpu_npu_geom *g;
	uint32_t *stamp;      /* B*H*W pixels, NULL past UNIQUE_MAX_STEPS */
	uint32_t epoch;
	uint64_t budget;      /* stamping steps left */
} uniq;

/* Distinct pixels windows [m0, m1) read at kernel offsets [oa, ob]. */
static uint64_t pixels(uniq *u, uint64_t m0, uint64_t m1, uint64_t oa, uint64_t ob)
{
	const enpu_npu_geom *g = u->g;
	uint64_t n = 0, steps = (m1 - m0) * (ob - oa + 1), npix = g->B * g->H * g->W;

	if (oa == ob)
		return m1 - m0;   /* one offset: a pixel per window */
	if (!u->stamp || steps > u->budget)
		return npu_umin(steps, npix);
	u->budget -= steps;
	u->epoch++;
	for (uint64_t m = m0; m < m1; m++) {
		uint64_t b = m / (g->OH * g->OW), r = m % (g->OH * g->OW);
		uint64_t y0 = (r / g->OW) * g->sH, x0 = (r % g->OW) * g->sW;

		for (uint64_t o = oa; o <= ob; o++) {
			uint64_t y = y0 + (o / g->kW) * g->dH, x = x0 + (o % g->kW) * g->dW;
			uint64_t p = (b * g->H + y) * g->W + x;

			if (u->stamp[p] != u->epoch) {
				u->stamp[p] = u->epoch;
				n++;
			}
		}
	}
	return n;
}

/* Unique ifmap words of the tile windows [m0, m1) x columns [k0, k1):
 * channel c of the slice is read at a contiguous range of kernel offsets,
 * one of at most four, each a group of channels. */
static uint64_t tile_unique(uniq *u, uint64_t m0, uint64_t m1, uint64_t k0, uint64_t k1)
{
	uint64_t C = u->g->C, o0 = k0 / C, c0 = k0 % C, o1 = (k1 - 1) / C, c1 = (k1 - 1) % C;
	uint64_t n = 0;
	struct { uint64_t count, oa, ob; } grp[4];

	if (m0 >= m1 || k0 >= k1)
		return 0;
	if (o0 == o1)
		return (c1 - c0 + 1) * (m1 - m0);
	/* (c < c0, c > c1), (c >= c0, c > c1), (c < c0, c <= c1), (c >= c0, c <= c1) */
	grp[0].count = c0 > c1 + 1 ? c0 - c1 - 1 : 0, grp[0].oa = o0 + 1, grp[0].ob = o1 - 1;
	grp[1].count = C - (c0 > c1 + 1 ? c0 : c1 + 1), grp[1].oa = o0, grp[1].ob = o1 - 1;
	grp[2].count = c0 < c1 + 1 ? c0 : c1 + 1, grp[2].oa = o0 + 1, grp[2].ob = o1;
	grp[3].count = c1 >= c0 ? c1 - c0 + 1 : 0, grp[3].oa = o0, grp[3].ob = o1;
	for (int i = 0; i < 4; i++)
		if (grp[i].count && grp[i].oa <= grp[i].ob)
			n += grp[i].count * pixels(u, m0, m1, grp[i].oa, grp[i].ob);
	return n;
}

/* Distinct values of i*s + j*d, 0 <= i < n, 0 <= j < k (all below span). */
static uint64_t union1d(uint64_t n, uint64_t s, uint64_t k, uint64_t d, uint64_t span)
{
	unsigned char *seen;
	uint64_t c = 0;

	if (k == 1 || (s == 1 && d == 1))
		return k == 1 ? n : span;
	if (span > UNIQUE_MAX_STEPS || n * k > UNIQUE_MAX_STEPS || !(seen = calloc(span, 1)))
		return npu_umin(n * k, span);
	for (uint64_t i = 0; i < n; i++)
		for (uint64_t j = 0; j < k; j++)
			if (!seen[i * s + j * d]++)
				c++;
	free(seen);
	return c;
}

/* One SRAM half, in words of its operand. */
static uint64_t half_words(const enpu_npu_target *t, const enpu_npu_geom *g, int i)
{
	return (uint64_t)t->sram_kib[i] * 1024 / 2 / enpu_npu_word_of(t, g, i);
}

int enpu_npu_mem_default(const enpu_npu_target *t, const enpu_npu_geom *g,
			 const enpu_npu_opstats *st, uint64_t rd[ENPU_SRAM_COUNT],
			 uint64_t wr[ENPU_SRAM_COUNT], int *sat, enpu_err *e)
{
	uint64_t R = (uint64_t)t->rows, C = (uint64_t)t->cols, rf = st->row_folds, cf = st->col_folds;
	uint64_t Wi = half_words(t, g, ENPU_SRAM_IFMAP), Wf = half_words(t, g, ENPU_SRAM_FILTER);
	uint64_t Wo = half_words(t, g, ENPU_SRAM_OFMAP), M = g->M, N = g->N, K = g->K;
	uint64_t U, D = 0, npix, nb, band, pass, ifm;
	uniq u = {g, NULL, 0, UNIQUE_MAX_STEPS};

	for (int i = 0; i < ENPU_SRAM_COUNT; i++)
		rd[i] = wr[i] = 0;
	if (!M || !N || !K)
		return 0;
	npix = npu_mul(npu_mul(g->B, g->H, sat), g->W, sat);
	if (*sat)
		return 0;
	/* the whole feature map the windows read: rows x cols per image and channel */
	U = npu_mul(npu_mul(npu_mul(g->B, g->C, sat), union1d(g->OH, g->sH, g->kH, g->dH, g->H), sat),
		 union1d(g->OW, g->sW, g->kW, g->dW, g->W), sat);
	if ((g->kH > 1 || g->kW > 1) && npix <= UNIQUE_MAX_STEPS &&
	    !(u.stamp = calloc(npix, sizeof(*u.stamp))))
		return enpu_fail(e, ENPU_E_NOMEM, "npu_sim", NULL, "out of memory modelling the npu");

	/* ifmap: tiles of the im2col matrix. Windows stream in raster order, so
	 * a repeat comes back within a band of nb output rows of windows (the
	 * rows one input row serves); the band's words are the working set
	 * of reuse between overlapping windows */
	nb = npu_cdiv((g->kH - 1) * g->dH + 1, g->sH);
	band = npu_umin(M, npu_mul(nb, g->OW, sat));
	switch (t->dataflow) {
	case ENPU_DF_WS:   /* tile fr: all windows x K-slice, again for every fc */
		for (uint64_t fr = 0; fr < rf; fr++) {
			uint64_t k0 = fr * R, k1 = npu_umin(k0 + R, K);

			D = npu_add(D, again(tile_unique(&u, 0, M, k0, k1), npu_mul(M, k1 - k0, sat),
					  tile_unique(&u, 0, band, k0, k1), Wi), sat);
		}
		ifm = graceful(U, npu_mul(D, cf, sat), Wi);
		break;
	case ENPU_DF_OS:   /* tile fr: R windows x all K; a pass over them for every fc */
		for (uint64_t fr = 0; fr < rf; fr++) {
			uint64_t m0 = fr * R, m1 = npu_umin(m0 + R, M);

			D = npu_add(D, tile_unique(&u, m0, m1, 0, K), sat);
		}
		pass = again(U, D, tile_unique(&u, 0, npu_umin(M, band + R), 0, K), Wi);
		ifm = npu_add(pass, npu_mul(cf - 1, again(0, pass, U, Wi), sat), sat);
		break;
	default:           /* is: tile (fr, fc): C windows x K-slice, once each */
		for (uint64_t fc = 0; fc < cf; fc++) {
			uint64_t m0 = fc * C, m1 = npu_umin(m0 + C, M), Dfc = 0;

			for (uint64_t fr = 0; fr < rf; fr++) {
				uint64_t k0 = fr * R, k1 = npu_umin(k0 + R, K);

				Dfc = npu_add(Dfc, tile_unique(&u, m0, m1, k0, k1), sat);
			}
			D = npu_add(D, graceful(tile_unique(&u, m0, m1, 0, K), Dfc, Wi), sat);
		}
		ifm = again(U, D, tile_unique(&u, 0, npu_umin(M, band + C), 0, K), Wi);
		break;
	}
	free(u.stamp);
	rd[ENPU_SRAM_IFMAP] = ifm;

	/* filter: no overlap; reuse between folds as far as the half holds it */
	switch (t->dataflow) {
	case ENPU_DF_WS:   /* every tile once */
		rd[ENPU_SRAM_FILTER] = npu_mul(K, N, sat);
		break;
	case ENPU_DF_OS:   /* tile fc: K x C, for rf consecutive folds */
		for (uint64_t fc = 0; fc < cf; fc++) {
			uint64_t tw = npu_mul(K, npu_umin(C, N - fc * C), sat);

			rd[ENPU_SRAM_FILTER] = npu_add(rd[ENPU_SRAM_FILTER],
						    graceful(tw, npu_mul(tw, rf, sat), Wf), sat);
		}
		break;
	default:           /* is: tiles fr: R x N, again for every fc */
		rd[ENPU_SRAM_FILTER] = graceful(npu_mul(K, N, sat), npu_mul(npu_mul(K, N, sat), cf, sat), Wf);
		break;
	}

	/* ofmap: os writes each output once; ws and is accumulate the tile of
	 * column fold fc over rf consecutive folds and spill what the half
	 * cannot hold (written, read back) on all but the last */
	if (t->dataflow == ENPU_DF_OS) {
		wr[ENPU_SRAM_OFMAP] = npu_mul(M, N, sat);
		return 0;
	}
	for (uint64_t fc = 0; fc < cf; fc++) {
		uint64_t tw = t->dataflow == ENPU_DF_WS ? npu_mul(M, npu_umin(C, N - fc * C), sat)
							: npu_mul(npu_umin(C, M - fc * C), N, sat);
		uint64_t spill = npu_mul(tw > Wo ? tw - Wo : 0, rf - 1, sat);

		wr[ENPU_SRAM_OFMAP] = npu_add(wr[ENPU_SRAM_OFMAP], npu_add(tw, spill, sat), sat);
		rd[ENPU_SRAM_OFMAP] = npu_add(rd[ENPU_SRAM_OFMAP], spill, sat);
	}
	return 0;
}

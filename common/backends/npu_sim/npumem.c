/* npumem.c: the DRAM traffic of a GEMM-class op on npu_sim
 * (docs/npu-sim.md, "Memory model").
 *
 * Default model: each fold's tile costs the unique words it touches (the
 * overlap of convolution windows is read once), tiles reused by later
 * folds are kept in the operand's SRAM half as far as they fit, and only
 * what does not fit is read again (graceful()). Partial sums spill only
 * when the ofmap tile does not fit its SRAM half.
 *
 * scalesim_compat: SCALE-Sim v2's counts in CALC bandwidth mode, from its
 * documented and observed behaviour: its demand order (folds col-major,
 * each fold's operand matrices skewed or flipped as its compute units
 * build them), a read buffer that keeps every distinct address since its
 * last flush and flushes when it holds 50 sets of size/100 words, and a
 * write buffer that drains whole lines of one array width. The replay is
 * exact and costs one step per SRAM access. */
#include <stdlib.h>
#include <string.h>
#include "npumem.h"

/* Longest trace scalesim_compat replays per op (SRAM accesses) and the
 * largest address space it tracks. */
#define COMPAT_MAX_STEPS (UINT64_C(1) << 31)
#define COMPAT_MAX_SPACE (UINT64_C(1) << 28)
/* The default model counts window overlap exactly up to this many steps
 * per op; beyond, a tile's unique words are bounded by its im2col words
 * and the feature map (documented). */
#define UNIQUE_MAX_STEPS (UINT64_C(1) << 26)

static uint64_t umin(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static uint64_t cdiv(uint64_t a, uint64_t b)
{
	return b ? a / b + (a % b != 0) : 0;
}

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
		return umin(U, D);
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
		return umin(steps, npix);
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
		return umin(n * k, span);
	for (uint64_t i = 0; i < n; i++)
		for (uint64_t j = 0; j < k; j++)
			if (!seen[i * s + j * d]++)
				c++;
	free(seen);
	return c;
}

/* Bytes of one word of SRAM i's operand: its tensor's element size, or
 * the target's word_bytes. */
static uint64_t word_of(const enpu_npu_target *t, const enpu_npu_geom *g, int i)
{
	return g->eb[i] ? g->eb[i] : (uint64_t)t->word_bytes;
}

/* One SRAM half, in words of its operand. */
static uint64_t half_words(const enpu_npu_target *t, const enpu_npu_geom *g, int i)
{
	return (uint64_t)t->sram_kib[i] * 1024 / 2 / word_of(t, g, i);
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
	nb = cdiv((g->kH - 1) * g->dH + 1, g->sH);
	band = umin(M, npu_mul(nb, g->OW, sat));
	switch (t->dataflow) {
	case ENPU_DF_WS:   /* tile fr: all windows x K-slice, again for every fc */
		for (uint64_t fr = 0; fr < rf; fr++) {
			uint64_t k0 = fr * R, k1 = umin(k0 + R, K);

			D = npu_add(D, again(tile_unique(&u, 0, M, k0, k1), npu_mul(M, k1 - k0, sat),
					  tile_unique(&u, 0, band, k0, k1), Wi), sat);
		}
		ifm = graceful(U, npu_mul(D, cf, sat), Wi);
		break;
	case ENPU_DF_OS:   /* tile fr: R windows x all K; a pass over them for every fc */
		for (uint64_t fr = 0; fr < rf; fr++) {
			uint64_t m0 = fr * R, m1 = umin(m0 + R, M);

			D = npu_add(D, tile_unique(&u, m0, m1, 0, K), sat);
		}
		pass = again(U, D, tile_unique(&u, 0, umin(M, band + R), 0, K), Wi);
		ifm = npu_add(pass, npu_mul(cf - 1, again(0, pass, U, Wi), sat), sat);
		break;
	default:           /* is: tile (fr, fc): C windows x K-slice, once each */
		for (uint64_t fc = 0; fc < cf; fc++) {
			uint64_t m0 = fc * C, m1 = umin(m0 + C, M), Dfc = 0;

			for (uint64_t fr = 0; fr < rf; fr++) {
				uint64_t k0 = fr * R, k1 = umin(k0 + R, K);

				Dfc = npu_add(Dfc, tile_unique(&u, m0, m1, k0, k1), sat);
			}
			D = npu_add(D, graceful(tile_unique(&u, m0, m1, 0, K), Dfc, Wi), sat);
		}
		ifm = again(U, D, tile_unique(&u, 0, umin(M, band + C), 0, K), Wi);
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
			uint64_t tw = npu_mul(K, umin(C, N - fc * C), sat);

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
		uint64_t tw = t->dataflow == ENPU_DF_WS ? npu_mul(M, umin(C, N - fc * C), sat)
							: npu_mul(umin(C, M - fc * C), N, sat);
		uint64_t spill = npu_mul(tw > Wo ? tw - Wo : 0, rf - 1, sat);

		wr[ENPU_SRAM_OFMAP] = npu_add(wr[ENPU_SRAM_OFMAP], npu_add(tw, spill, sat), sat);
		rd[ENPU_SRAM_OFMAP] = npu_add(rd[ENPU_SRAM_OFMAP], spill, sat);
	}
	return 0;
}

/* ---- scalesim_compat: SCALE-Sim v2's buffers ----------------------------- */

/* Its read buffer in CALC mode: a miss adds the address; after 50 sets of
 * size/100 distinct addresses the buffer starts empty again. */
typedef struct rbuf {
	uint32_t *stamp;
	uint32_t epoch;
	uint64_t n, cap, misses;
} rbuf;

static inline void rb_touch(rbuf *b, uint64_t a)
{
	if (b->stamp[a] == b->epoch)
		return;
	b->stamp[a] = b->epoch;
	b->misses++;
	if (++b->n == b->cap) {
		b->epoch++;
		b->n = 0;
	}
}

/* Its write buffer: lines of bw words; when more than its drain half is
 * held it closes the current line (a partial line stays partial) and
 * drains the next ceil(drain/bw) lines, counting a drained line as bw
 * words except the last one's empty places. */
typedef struct wbuf {
	int64_t free, active, drain_end;
	uint64_t bw, drain_lines, line_idx, n_lines, drain_start, writes;
	uint64_t *part_idx, *part_val;   /* partial lines, in order */
	size_t n_part, cap_part, part_cur;
	int nomem;
} wbuf;

static void wb_close_line(wbuf *w)
{
	if (!w->line_idx)
		return;
	if (w->n_part == w->cap_part) {
		size_t nc = w->cap_part ? 2 * w->cap_part : 16;
		uint64_t *a = realloc(w->part_idx, nc * sizeof(*a)), *b;

		if (a)
			w->part_idx = a;
		b = a ? realloc(w->part_val, nc * sizeof(*b)) : NULL;
		if (!a || !b) {
			w->nomem = 1;
			return;
		}
		w->part_val = b;
		w->cap_part = nc;
	}
	w->part_idx[w->n_part] = w->n_lines;
	w->part_val[w->n_part++] = w->line_idx;
	w->n_lines++;
	w->line_idx = 0;
}

static int64_t wb_drain(wbuf *w, int64_t start)
{
	uint64_t end = umin(w->drain_start + w->drain_lines, w->n_lines);
	uint64_t nl = end - w->drain_start, data, last = end - 1;

	if (!nl)
		return start;
	data = nl * w->bw;
	while (w->part_cur < w->n_part && w->part_idx[w->part_cur] < last)
		w->part_cur++;
	if (w->part_cur < w->n_part && w->part_idx[w->part_cur] == last)
		data -= w->bw - w->part_val[w->part_cur];
	w->writes += data;
	w->free += (int64_t)data;
	w->drain_start = end;
	return start + (int64_t)nl - 1;
}

/* n words written in the demand row at cycle cyc; returns that row's stall. */
static int64_t wb_row(wbuf *w, int64_t cyc, uint64_t n)
{
	int64_t cur = cyc;

	for (uint64_t i = 0; i < n; i++) {
		w->free--;
		if (++w->line_idx == w->bw) {
			w->n_lines++;
			w->line_idx = 0;
		}
		if (cur < w->drain_end) {
			if (w->free <= 0)
				cur = w->drain_end;
		} else if (w->free < w->active) {
			wb_close_line(w);
			w->drain_end = wb_drain(w, cur);
		}
	}
	return cur - cyc;
}

/* Valid words in [lo, hi] clipped to [0, n). */
static uint64_t clip_count(int64_t lo, int64_t hi, int64_t n)
{
	if (lo < 0)
		lo = 0;
	if (hi > n - 1)
		hi = n - 1;
	return hi >= lo ? (uint64_t)(hi - lo + 1) : 0;
}

int enpu_npu_mem_compat(const enpu_npu_target *t, const enpu_npu_geom *g, const char *name,
			uint64_t rd[ENPU_SRAM_COUNT], uint64_t wr[ENPU_SRAM_COUNT], enpu_err *e)
{
	uint64_t R = (uint64_t)t->rows, C = (uint64_t)t->cols, M = g->M, N = g->N, K = g->K;
	uint64_t rf, cf, steps, space_i, space_f, *base = NULL, *koff = NULL;
	uint64_t cap[ENPU_SRAM_COUNT], total_o;
	int sat = 0, rc = -1;
	rbuf bi = {0}, bf = {0};
	wbuf w = {0};
	int64_t cyc = 0;

	for (int i = 0; i < ENPU_SRAM_COUNT; i++) {
		uint64_t elems = (uint64_t)t->sram_kib[i] * 1024 / word_of(t, g, i);

		rd[i] = wr[i] = 0;
		cap[i] = elems / 100 * 50;   /* 50 sets of floor(elems / 100) */
		if (!cap[i])
			cap[i] = UINT64_MAX;
	}
	if (!M || !N || !K)
		return 0;
	switch (t->dataflow) {
	case ENPU_DF_WS: rf = cdiv(K, R), cf = cdiv(N, C); break;
	case ENPU_DF_IS: rf = cdiv(K, R), cf = cdiv(M, C); break;
	default: rf = cdiv(M, R), cf = cdiv(N, C); break;
	}
	/* the replay's length: every SRAM access once, and the ofmap writes */
	steps = npu_add(npu_add(npu_mul(npu_mul(M, K, &sat), t->dataflow == ENPU_DF_IS ? 1 : cf, &sat),
			  npu_mul(npu_mul(K, N, &sat), t->dataflow == ENPU_DF_OS ? rf :
					     t->dataflow == ENPU_DF_IS ? cf : 1, &sat), &sat),
		     npu_mul(npu_mul(M, N, &sat), t->dataflow == ENPU_DF_OS ? 1 : rf, &sat), &sat);
	space_i = npu_mul(npu_mul(npu_mul(g->B, g->H, &sat), g->W, &sat), g->C, &sat);
	space_f = npu_mul(K, N, &sat);
	if (sat || steps > COMPAT_MAX_STEPS || space_i > COMPAT_MAX_SPACE ||
	    space_f > COMPAT_MAX_SPACE)
		return enpu_fail(e, ENPU_E_LIMIT, name, "turn scalesim_compat off for this model",
				 "op '%s' is too large for scalesim_compat's trace of SCALE-Sim's "
				 "memory (%llu steps, limit %llu)", name, (unsigned long long)steps,
				 (unsigned long long)COMPAT_MAX_STEPS);
	bi.stamp = calloc(space_i, sizeof(*bi.stamp));
	bf.stamp = calloc(space_f, sizeof(*bf.stamp));
	base = malloc(M * sizeof(*base));
	koff = malloc(K * sizeof(*koff));
	if (!bi.stamp || !bf.stamp || !base || !koff) {
		enpu_fail(e, ENPU_E_NOMEM, name, NULL, "out of memory modelling the npu");
		goto out;
	}
	bi.epoch = bf.epoch = 1;
	bi.cap = cap[ENPU_SRAM_IFMAP], bf.cap = cap[ENPU_SRAM_FILTER];
	/* ifmap address of (m, k) = base[m] + koff[k], NHWC */
	for (uint64_t m = 0; m < M; m++) {
		uint64_t b = m / (g->OH * g->OW), r = m % (g->OH * g->OW);

		base[m] = ((b * g->H + (r / g->OW) * g->sH) * g->W + (r % g->OW) * g->sW) * g->C;
	}
	for (uint64_t k = 0; k < K; k++) {
		uint64_t o = k / g->C;

		koff[k] = ((o / g->kW) * g->dH * g->W + (o % g->kW) * g->dW) * g->C + k % g->C;
	}
	total_o = (uint64_t)t->sram_kib[ENPU_SRAM_OFMAP] * 1024 / word_of(t, g, ENPU_SRAM_OFMAP);
	w.active = (int64_t)cdiv(total_o, 2);
	w.free = (int64_t)total_o;
	w.bw = C;
	w.drain_lines = cdiv(total_o - (uint64_t)w.active, C);

	/* folds in SCALE-Sim's order: column folds outer, row folds inner */
	for (uint64_t fc = 0; fc < cf; fc++)
		for (uint64_t fr = 0; fr < rf; fr++) {
			uint64_t rows, pre, lo, hi, Rv, Cv;

			switch (t->dataflow) {
			case ENPU_DF_WS: {
				uint64_t k0 = fr * R, n0 = fc * C;

				Rv = umin(R, K - k0), Cv = umin(C, N - n0);
				/* ifmap: M x Rv slice skewed, anti-diagonals in column order */
				for (uint64_t d = 0; d + 1 < M + Rv; d++)
					for (uint64_t c = d >= M ? d - M + 1 : 0; c < Rv && c <= d; c++)
						rb_touch(&bi, base[d - c] + koff[k0 + c]);
				/* filter: the Rv x Cv block, rows last to first */
				for (uint64_t j = Rv; j-- > 0;)
					for (uint64_t c = 0; c < Cv; c++)
						rb_touch(&bf, (n0 + c) * K + k0 + j);
				rows = 2 * R + C + M - 2, pre = 2 * R - 1, lo = 0, hi = M;
				break;
			}
			case ENPU_DF_IS: {
				uint64_t k0 = fr * R, m0 = fc * C;

				Rv = umin(R, K - k0), Cv = umin(C, M - m0);
				/* ifmap: the Rv x Cv block (K-slice x windows), rows last to first */
				for (uint64_t j = Rv; j-- > 0;)
					for (uint64_t c = 0; c < Cv; c++)
						rb_touch(&bi, base[m0 + c] + koff[k0 + j]);
				/* filter: N x Rv skewed */
				for (uint64_t d = 0; d + 1 < N + Rv; d++)
					for (uint64_t j = d >= N ? d - N + 1 : 0; j < Rv && j <= d; j++)
						rb_touch(&bf, (d - j) * K + k0 + j);
				rows = 2 * R + C + N - 2, pre = 2 * R - 1, lo = 0, hi = N;
				break;
			}
			default: {
				uint64_t m0 = fr * R, n0 = fc * C;

				Rv = umin(R, M - m0), Cv = umin(C, N - n0);
				/* ifmap: K x Rv skewed; filter: K x Cv skewed */
				for (uint64_t d = 0; d + 1 < K + Rv; d++)
					for (uint64_t r = d >= K ? d - K + 1 : 0; r < Rv && r <= d; r++)
						rb_touch(&bi, base[m0 + r] + koff[d - r]);
				for (uint64_t d = 0; d + 1 < K + Cv; d++)
					for (uint64_t c = d >= K ? d - K + 1 : 0; c < Cv && c <= d; c++)
						rb_touch(&bf, (n0 + c) * K + d - c);
				rows = K + R + C - 2, pre = K - 1, lo = R - Rv, hi = R;
				break;
			}
			}
			/* ofmap: block rows [lo, hi) after pre empty rows, skewed by column */
			for (uint64_t i = 0; i < rows; i++, cyc++) {
				int64_t x = (int64_t)i - (int64_t)pre;
				uint64_t n = clip_count(x - (int64_t)hi + 1, x - (int64_t)lo, (int64_t)Cv);

				cyc += wb_row(&w, cyc, n);
			}
		}
	wb_close_line(&w);
	while (w.drain_start < w.n_lines)
		wb_drain(&w, 0);
	if (w.nomem) {
		enpu_fail(e, ENPU_E_NOMEM, name, NULL, "out of memory modelling the npu");
		goto out;
	}
	rd[ENPU_SRAM_IFMAP] = bi.misses;
	rd[ENPU_SRAM_FILTER] = bf.misses;
	wr[ENPU_SRAM_OFMAP] = w.writes;
	rc = 0;
out:
	free(bi.stamp);
	free(bf.stamp);
	free(base);
	free(koff);
	free(w.part_idx);
	free(w.part_val);
	return rc;
}

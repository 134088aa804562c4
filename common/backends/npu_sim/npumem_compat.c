/* npumem_compat.c: scalesim_compat's DRAM counts and stalls, SCALE-Sim v2's
 * (docs/npu-sim.md, "DRAM traffic in scalesim_compat mode").
 *
 * The replay walks SCALE-Sim's demand matrices row by row (one row a
 * cycle; folds col-major, each fold's operand matrices skewed or flipped
 * as its compute units build them) through models of its buffers:
 *
 * - CALC bandwidth mode (no dram_bytes_per_cycle): a read buffer that
 *   keeps every distinct address since its last flush and flushes when it
 *   holds 50 sets of size/100 words (read_buffer_estimate_bw.py), and a
 *   write buffer that drains lines of one array width (write_buffer.py);
 * - USER bandwidth mode (dram_bytes_per_cycle = its Bandwidth, words per
 *   cycle per memory): a read buffer whose contents are a window of sets
 *   of ceil(size/100) words of the operand's prefetch matrix, advanced by
 *   one prefetch of half the SRAM at each demanded address outside it
 *   (read_buffer.py), prefetches chained one after the other at the
 *   bandwidth; the write buffer drains lines of bandwidth words. A row
 *   stalls for the longest of the three memories' waits.
 *
 * Both are exact, derived from its code and checked against its runs
 * (tests/data/npusim/scalesim/). The replay costs one step per SRAM
 * access and one per demand row. */
#include <stdlib.h>
#include <string.h>
#include "npumem.h"

/* Longest trace the replay walks per op (SRAM accesses), the largest
 * address space it tracks, and (USER mode) the largest prefetch matrix it
 * indexes. */
#define COMPAT_MAX_STEPS (UINT64_C(1) << 31)
#define COMPAT_MAX_SPACE (UINT64_C(1) << 28)
#define USER_MAX_ENTRIES (UINT64_C(1) << 28)
/* The most prefetches (window moves) it replays per operand. */
#define USER_MAX_PREFETCHES (UINT64_C(1) << 31)

/* No address: a place of a matrix that SCALE-Sim fills with -1. */
#define NONE UINT64_MAX

/* The GEMM being replayed, with its mapping. The ifmap word of window m,
 * column k is base[m] + koff[k] (NHWC); filter word (k, n) is n*K + k. */
typedef struct cx {
	enpu_dataflow df;
	uint64_t M, N, K, R, C, rf, cf;
	const uint64_t *base, *koff;
} cx;

/* ---- CALC mode's read buffer ---------------------------------------------- */

/* A miss adds the address; after 50 sets of size/100 distinct addresses
 * the buffer starts empty again. */
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

/* ---- USER mode's read buffer ---------------------------------------------- */

/* The operand's prefetch matrix (its compute unit's): blocks stacked
 * vertically, each rows x width, read row by row or by anti-diagonals
 * (the stacked matrix's, rows descending within one). */
typedef struct pfm {
	uint64_t blocks, rows, width;
	int diag;
} pfm;

/* The address at (row, c) of operand op's prefetch matrix, NONE for a
 * padded place. */
static uint64_t pf_addr(const cx *x, int op, uint64_t row, uint64_t c)
{
	uint64_t f, i, j;

	switch (x->df) {
	case ENPU_DF_WS:
		if (op == ENPU_SRAM_IFMAP) {   /* per fr: M x R, (m, fr*R + c) */
			f = row / x->M, i = row % x->M, j = f * x->R + c;
			return j < x->K ? x->base[i] + x->koff[j] : NONE;
		}
		f = row / x->K, i = row % x->K, j = f * x->C + c;   /* per fc: K x C, (k, fc*C + c) */
		return j < x->N ? j * x->K + i : NONE;
	case ENPU_DF_IS:
		if (op == ENPU_SRAM_IFMAP) {   /* per fc: K x C, (fc*C + c, k) */
			f = row / x->K, i = row % x->K, j = f * x->C + c;
			return j < x->M ? x->base[j] + x->koff[i] : NONE;
		}
		f = row / x->N, i = row % x->N, j = f * x->R + c;   /* per fr: N x R, (fr*R + c, n) */
		return j < x->K ? i * x->K + j : NONE;
	default:
		f = row / x->K, i = row % x->K;
		if (op == ENPU_SRAM_IFMAP) {   /* per fr: K x R, (fr*R + c, k) */
			j = f * x->R + c;
			return j < x->M ? x->base[j] + x->koff[i] : NONE;
		}
		j = f * x->C + c;              /* per fc: K x C, (k, fc*C + c) */
		return j < x->N ? j * x->K + i : NONE;
	}
}

static pfm pf_shape(const cx *x, int op)
{
	pfm p = {0, 0, 0, 1};

	switch (x->df) {
	case ENPU_DF_WS:
		if (op == ENPU_SRAM_IFMAP)
			p.blocks = x->rf, p.rows = x->M, p.width = x->R;
		else
			p.blocks = x->cf, p.rows = x->K, p.width = x->C, p.diag = 0;
		break;
	case ENPU_DF_IS:
		if (op == ENPU_SRAM_IFMAP)
			p.blocks = x->cf, p.rows = x->K, p.width = x->C, p.diag = 0;
		else
			p.blocks = x->rf, p.rows = x->N, p.width = x->R;
		break;
	default:
		if (op == ENPU_SRAM_IFMAP)
			p.blocks = x->rf, p.rows = x->K, p.width = x->R;
		else
			p.blocks = x->cf, p.rows = x->K, p.width = x->C;
		break;
	}
	return p;
}

/* The buffer: the prefetch matrix's valid places in its order, cut into
 * nl sets of eps words; address a is in sets ids[off[a] .. off[a+1])
 * (ascending). A window of na sets from start (mod nl) is resident; each
 * prefetch moves it by np sets and costs P request lines of bw words. */
typedef struct ubuf {
	uint32_t *off, *ids;
	uint64_t nl, na, np, start, k, P, bw, init_words;
	int missed;   /* a prefetch in the current row */
} ubuf;

static int ub_build(ubuf *u, const cx *x, int op, uint64_t space, uint64_t elems, uint64_t bw)
{
	pfm p = pf_shape(x, op);
	uint64_t H = p.blocks * p.rows, W = p.width, n = 0, eps = npu_cdiv(elems, 100);
	uint64_t active = npu_cdiv(elems, 2), prefetch = elems - active, fetch_rows;

	u->off = calloc(space + 1, sizeof(*u->off));
	u->ids = NULL;
	if (!u->off)
		return -1;
	/* two passes over the matrix in its order: count, then place */
	for (int pass = 0; pass < 2; pass++) {
		n = 0;
		for (uint64_t d = 0; d < (p.diag ? H + W - 1 : H * W); d++) {
			uint64_t hi = p.diag ? npu_umin(d, H - 1) : 0, lo = p.diag && d >= W ? d - W + 1 : 0;

			for (uint64_t r = hi + 1; r-- > lo;) {
				uint64_t a = p.diag ? pf_addr(x, op, r, d - r) : pf_addr(x, op, d / W, d % W);

				if (a == NONE)
					continue;
				if (pass)
					u->ids[u->off[a]++] = (uint32_t)(n / eps);
				else
					u->off[a + 1]++;
				n++;
			}
		}
		if (pass)
			break;
		for (uint64_t a = 0; a < space; a++)
			u->off[a + 1] += u->off[a];
		if (!(u->ids = malloc((n ? n : 1) * sizeof(*u->ids))))
			return -1;
	}
	/* the place pass moved each off[a] to its end: shift back */
	memmove(u->off + 1, u->off, space * sizeof(*u->off));
	u->off[0] = 0;
	u->nl = n / eps + 1;   /* the last set, possibly empty, counts */
	u->na = npu_umin(npu_cdiv(active, eps), u->nl);
	u->np = npu_umin(npu_cdiv(prefetch, eps), u->nl - u->na);
	u->P = npu_cdiv(prefetch, bw);
	u->bw = bw;
	fetch_rows = npu_cdiv(H * W, bw);
	u->init_words = npu_umin(npu_cdiv(active, bw), fetch_rows) * bw;
	return 0;
}

static int ub_hit(const ubuf *u, uint64_t a)
{
	const uint32_t *l = u->ids + u->off[a], *e = u->ids + u->off[a + 1];
	uint64_t s = u->start, end = s + u->na;

	if (u->na >= u->nl)
		return 1;
	while (l < e) {   /* the first set at or after the window's start */
		const uint32_t *mid = l + (e - l) / 2;

		if (*mid < s)
			l = mid + 1;
		else
			e = mid;
	}
	if (l < u->ids + u->off[a + 1] && *l < end)
		return 1;
	/* the window wraps: its tail is sets [0, end - nl) */
	return end > u->nl && u->off[a] < u->off[a + 1] && u->ids[u->off[a]] < end - u->nl;
}

/* A demanded address: prefetch until the window holds it. 0; -1 when no
 * set holds it (not SCALE-Sim's case: it would loop for ever); -2 past
 * USER_MAX_PREFETCHES. */
static int ub_touch(ubuf *u, uint64_t a)
{
	for (uint64_t i = 0; !ub_hit(u, a); i++) {
		if (i > u->nl)
			return -1;
		if (u->k >= USER_MAX_PREFETCHES)
			return -2;
		u->start = (u->start + u->np) % u->nl;
		u->k++;
		u->missed = 1;
	}
	return 0;
}

/* The row's wait at cycle cyc: the k-th prefetch is back at cycle
 * k*(P + 1) - 1 (the first fill ends at cycle -1), the row is served a
 * cycle after it; a row that prefetched nothing does not wait. */
static uint64_t ub_row_stall(ubuf *u, uint64_t cyc, int *sat)
{
	uint64_t t;

	if (!u->missed)
		return 0;
	u->missed = 0;
	t = npu_mul(u->k, u->P + 1, sat);
	return t > cyc + 2 ? t - cyc - 2 : 0;
}

/* ---- the write buffer (both modes) ---------------------------------------- */

/* Lines of bw words; when more than its drain half is held it closes the
 * current line (a partial line stays partial) and drains the next
 * ceil(drain/bw) lines, one a cycle, counting a drained line as bw words
 * except the last one's empty places. */
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
	uint64_t end = npu_umin(w->drain_start + w->drain_lines, w->n_lines);
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

/* n words written in the demand row at cycle cyc; returns that row's wait. */
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

/* ---- the replay ------------------------------------------------------------ */

/* Valid words in [lo, hi] clipped to [0, n). */
static uint64_t clip_count(int64_t lo, int64_t hi, int64_t n)
{
	if (lo < 0)
		lo = 0;
	if (hi > n - 1)
		hi = n - 1;
	return hi >= lo ? (uint64_t)(hi - lo + 1) : 0;
}

/* The read buffers of the replay: CALC's or USER's. */
typedef struct rd2 {
	int user;
	rbuf b[2];
	ubuf u[2];
	int lost;   /* an address no set holds */
	int toolong;   /* past USER_MAX_PREFETCHES */
} rd2;

static inline void touch(rd2 *r, int op, uint64_t a)
{
	int rc;

	if (!r->user)
		rb_touch(&r->b[op], a);
	else if ((rc = ub_touch(&r->u[op], a)) < 0)
		*(rc == -1 ? &r->lost : &r->toolong) = 1;
}

/* [lo, hi) of j with 0 <= row - j - off < n, j < w: the columns of a
 * skewed row that hold data. */
static void skew_range(uint64_t row, uint64_t off, uint64_t n, uint64_t w, uint64_t *lo, uint64_t *hi)
{
	*lo = row >= off + n ? row - off - n + 1 : 0;
	*hi = row >= off ? npu_umin(w, row - off + 1) : 0;
}

/* Row j of fold (fc, fr): its ifmap and filter reads, in SCALE-Sim's
 * column order. */
static void fold_row(rd2 *r, const cx *x, uint64_t fc, uint64_t fr, uint64_t j)
{
	uint64_t R = x->R, C = x->C, lo, hi;

	switch (x->df) {
	case ENPU_DF_WS: {
		uint64_t k0 = fr * R, n0 = fc * C, Rv = npu_umin(R, x->K - k0), Cv = npu_umin(C, x->N - n0);

		/* ifmap: R empty rows, the M x Rv slice, skewed by column */
		skew_range(j, R, x->M, Rv, &lo, &hi);
		for (uint64_t c = lo; c < hi; c++)
			touch(r, ENPU_SRAM_IFMAP, x->base[j - R - c] + x->koff[k0 + c]);
		/* filter: the Rv x Cv block, rows last to first */
		if (j + Rv >= R && j < R)
			for (uint64_t c = 0; c < Cv; c++)
				touch(r, ENPU_SRAM_FILTER, (n0 + c) * x->K + k0 + R - 1 - j);
		break;
	}
	case ENPU_DF_IS: {
		uint64_t k0 = fr * R, m0 = fc * C, Rv = npu_umin(R, x->K - k0), Cv = npu_umin(C, x->M - m0);

		/* ifmap: the Rv x Cv block (K-slice x windows), rows last to first */
		if (j + Rv >= R && j < R)
			for (uint64_t c = 0; c < Cv; c++)
				touch(r, ENPU_SRAM_IFMAP, x->base[m0 + c] + x->koff[k0 + R - 1 - j]);
		/* filter: R empty rows, N x Rv skewed */
		skew_range(j, R, x->N, Rv, &lo, &hi);
		for (uint64_t c = lo; c < hi; c++)
			touch(r, ENPU_SRAM_FILTER, (j - R - c) * x->K + k0 + c);
		break;
	}
	default: {
		uint64_t m0 = fr * R, n0 = fc * C, Rv = npu_umin(R, x->M - m0), Cv = npu_umin(C, x->N - n0);

		/* ifmap: K x Rv skewed; filter: K x Cv skewed */
		skew_range(j, 0, x->K, Rv, &lo, &hi);
		for (uint64_t c = lo; c < hi; c++)
			touch(r, ENPU_SRAM_IFMAP, x->base[m0 + c] + x->koff[j - c]);
		skew_range(j, 0, x->K, Cv, &lo, &hi);
		for (uint64_t c = lo; c < hi; c++)
			touch(r, ENPU_SRAM_FILTER, (n0 + c) * x->K + j - c);
		break;
	}
	}
}

int enpu_npu_mem_compat(const enpu_npu_target *t, const enpu_npu_geom *g, const char *name,
			uint64_t rd[ENPU_SRAM_COUNT], uint64_t wr[ENPU_SRAM_COUNT], uint64_t *stall,
			enpu_err *e)
{
	uint64_t R = (uint64_t)t->rows, C = (uint64_t)t->cols, M = g->M, N = g->N, K = g->K;
	uint64_t wb = (uint64_t)t->word_bytes, steps, space[2], *base = NULL, *koff = NULL;
	uint64_t elems[ENPU_SRAM_COUNT], bw = 0, S = 0;
	int sat = 0, rc = -1;
	rd2 r;
	wbuf w = {0};
	cx x;
	int64_t cyc = 0;

	memset(&r, 0, sizeof(r));
	*stall = 0;
	for (int i = 0; i < ENPU_SRAM_COUNT; i++) {
		rd[i] = wr[i] = 0;
		elems[i] = (uint64_t)t->sram_kib[i] * 1024 / enpu_npu_word_of(t, g, i);
	}
	if (!M || !N || !K)
		return 0;
	if (t->dram_bytes_per_cycle > 0) {   /* whole words per cycle (npu_target.c) */
		r.user = 1;
		bw = (uint64_t)t->dram_bytes_per_cycle / wb;
		if (!bw)
			bw = 1;
	}
	x.df = t->dataflow, x.M = M, x.N = N, x.K = K, x.R = R, x.C = C;
	switch (t->dataflow) {
	case ENPU_DF_WS: x.rf = npu_cdiv(K, R), x.cf = npu_cdiv(N, C); break;
	case ENPU_DF_IS: x.rf = npu_cdiv(K, R), x.cf = npu_cdiv(M, C); break;
	default: x.rf = npu_cdiv(M, R), x.cf = npu_cdiv(N, C); break;
	}
	/* the replay's length: every SRAM access once, the ofmap writes, and
	 * (USER) the prefetch matrices indexed */
	steps = npu_add(npu_add(npu_mul(npu_mul(M, K, &sat), t->dataflow == ENPU_DF_IS ? 1 : x.cf, &sat),
			  npu_mul(npu_mul(K, N, &sat), t->dataflow == ENPU_DF_OS ? x.rf :
					     t->dataflow == ENPU_DF_IS ? x.cf : 1, &sat), &sat),
		     npu_mul(npu_mul(M, N, &sat), t->dataflow == ENPU_DF_OS ? 1 : x.rf, &sat), &sat);
	space[0] = npu_mul(npu_mul(npu_mul(g->B, g->H, &sat), g->W, &sat), g->C, &sat);
	space[1] = npu_mul(K, N, &sat);
	for (int op = 0; r.user && op < 2; op++) {
		pfm p = pf_shape(&x, op);

		if (npu_mul(npu_mul(p.blocks, p.rows, &sat), p.width, &sat) > USER_MAX_ENTRIES)
			sat = 1;
	}
	if (sat || steps > COMPAT_MAX_STEPS || space[0] > COMPAT_MAX_SPACE ||
	    space[1] > COMPAT_MAX_SPACE)
		return enpu_fail(e, ENPU_E_LIMIT, name, "turn scalesim_compat off for this model",
				 "op '%s' is too large for scalesim_compat's trace of SCALE-Sim's "
				 "memory (%llu steps, limit %llu)", name, (unsigned long long)steps,
				 (unsigned long long)COMPAT_MAX_STEPS);
	base = malloc(M * sizeof(*base));
	koff = malloc(K * sizeof(*koff));
	if (!base || !koff)
		goto nomem;
	/* ifmap address of (m, k) = base[m] + koff[k], NHWC */
	for (uint64_t m = 0; m < M; m++) {
		uint64_t b = m / (g->OH * g->OW), q = m % (g->OH * g->OW);

		base[m] = ((b * g->H + (q / g->OW) * g->sH) * g->W + (q % g->OW) * g->sW) * g->C;
	}
	for (uint64_t k = 0; k < K; k++) {
		uint64_t o = k / g->C;

		koff[k] = ((o / g->kW) * g->dH * g->W + (o % g->kW) * g->dW) * g->C + k % g->C;
	}
	x.base = base, x.koff = koff;
	for (int op = 0; op < 2; op++) {
		if (r.user) {
			if (ub_build(&r.u[op], &x, op, space[op], elems[op], bw) < 0)
				goto nomem;
		} else {
			if (!(r.b[op].stamp = calloc(space[op], sizeof(*r.b[op].stamp))))
				goto nomem;
			r.b[op].epoch = 1;
			r.b[op].cap = elems[op] / 100 * 50;   /* 50 sets of floor(elems / 100) */
			if (!r.b[op].cap)
				r.b[op].cap = UINT64_MAX;
		}
	}
	w.active = (int64_t)npu_cdiv(elems[ENPU_SRAM_OFMAP], 2);
	w.free = (int64_t)elems[ENPU_SRAM_OFMAP];
	w.bw = r.user ? bw : C;
	w.drain_lines = npu_cdiv(elems[ENPU_SRAM_OFMAP] - (uint64_t)w.active, w.bw);

	/* folds in SCALE-Sim's order: column folds outer, row folds inner; a
	 * demand row a cycle, plus the longest wait of the three memories */
	for (uint64_t fc = 0; fc < x.cf; fc++)
		for (uint64_t fr = 0; fr < x.rf; fr++) {
			uint64_t rows, pre, lo, hi, Cv;

			switch (t->dataflow) {
			case ENPU_DF_WS:
				Cv = npu_umin(C, N - fc * C);
				rows = 2 * R + C + M - 2, pre = 2 * R - 1, lo = 0, hi = M;
				break;
			case ENPU_DF_IS:
				Cv = npu_umin(C, M - fc * C);
				rows = 2 * R + C + N - 2, pre = 2 * R - 1, lo = 0, hi = N;
				break;
			default:
				Cv = npu_umin(C, N - fc * C);
				rows = K + R + C - 2, pre = K - 1, lo = R - npu_umin(R, M - fr * R), hi = R;
				break;
			}
			for (uint64_t i = 0; i < rows; i++) {
				/* ofmap: block rows [lo, hi) after pre empty rows, skewed by column */
				int64_t xr = (int64_t)i - (int64_t)pre;
				uint64_t n = clip_count(xr - (int64_t)hi + 1, xr - (int64_t)lo, (int64_t)Cv), wait;

				fold_row(&r, &x, fc, fr, i);
				wait = (uint64_t)wb_row(&w, cyc, n);
				if (r.user)
					for (int op = 0; op < 2; op++) {
						uint64_t s = ub_row_stall(&r.u[op], (uint64_t)cyc, &sat);

						if (s > wait)
							wait = s;
					}
				S = npu_add(S, wait, &sat);
				if (wait >= (uint64_t)INT64_MAX / 2 - (uint64_t)cyc) {
					sat = 1;   /* cycles past 2^62: stop, E0004 below */
					goto replayed;
				}
				cyc += 1 + (int64_t)wait;
			}
		}
replayed:
	wb_close_line(&w);
	while (w.drain_start < w.n_lines)
		wb_drain(&w, 0);
	if (w.nomem)
		goto nomem;
	if (r.lost) {
		enpu_fail(e, ENPU_E_INTERNAL, name, NULL, "scalesim_compat: an address of op '%s' is in no prefetch set",
			  name);
		goto out;
	}
	for (int op = 0; op < 2; op++)
		rd[op] = r.user ? npu_add(r.u[op].init_words,
					  npu_mul(npu_mul(r.u[op].k, r.u[op].P, &sat), bw, &sat), &sat)
				: r.b[op].misses;
	wr[ENPU_SRAM_OFMAP] = w.writes;
	*stall = S;
	if (sat || r.toolong) {
		enpu_fail(e, ENPU_E_LIMIT, name, "leave dram_bytes_per_cycle out or turn scalesim_compat off",
			  "op '%s': scalesim_compat's replay of SCALE-Sim's USER mode is too long "
			  "(over 2^31 prefetches, or counts past 64 bits)", name);
		goto out;
	}
	rc = 0;
	goto out;
nomem:
	enpu_fail(e, ENPU_E_NOMEM, name, NULL, "out of memory modelling the npu");
out:
	for (int op = 0; op < 2; op++) {
		free(r.b[op].stamp);
		free(r.u[op].off);
		free(r.u[op].ids);
	}
	free(base);
	free(koff);
	free(w.part_idx);
	free(w.part_val);
	return rc;
}

/* report.c: how the client shows an npu_sim run: byte units, the summary
 * line under `run`, and `eulernpu report`'s per-op table. Pure (no I/O), so
 * tests/unit/test_cli_report.c checks them against JSON fixtures. The input
 * is report.json as common/npusim.h describes it, read defensively: a field
 * that is missing or of another type prints as "-". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "api.h"
#include "cli.h"

#define REPORT_FORMAT "eulernpu-report"
#define DOT " \xc2\xb7 "          /* " · " */
#define TIMES "\xc3\x97"          /* "×" */
#define NCOL 12   /* the last 3 (the roofline) only with a DRAM bandwidth */
#define NCOL_BASE 9
#define CELL 64

static const char *const heads[NCOL] = {
	"op", "lowering", "shape", "folds", "cycles", "stall", "util %", "SRAM words", "DRAM bytes",
	"MAC/B", "needs B/c", "bound",
};
/* Text columns left-aligned, numbers right-aligned. */
static const int right[NCOL] = {0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1};
static const char *const operands[] = {"ifmap", "filter", "ofmap"};

char *cli_bytes_str(uint64_t n, char *out, size_t cap)
{
	static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	double v = (double)n;
	size_t u = 0;

	if (n < 1024) {
		snprintf(out, cap, "%llu B", (unsigned long long)n);
		return out;
	}
	v /= 1024.0;
	/* Move up while the one-decimal rounding would show 1024.0 or more. */
	while (u + 1 < sizeof units / sizeof units[0] && round(v * 10.0) >= 10240.0) {
		v /= 1024.0;
		u++;
	}
	snprintf(out, cap, "%.1f %s", v, units[u]);
	return out;
}

size_t cli_text_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xC0) != 0x80)
			w++;
	return w;
}

/* ---- defensive JSON access ---------------------------------------------- */

static struct json_object *jobj(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!o || !json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_object))
		return NULL;
	return v;
}

/* A number (integer or double, finite, >= 0): 0, or -1 when absent. */
static int jnum(struct json_object *o, const char *key, double *out)
{
	struct json_object *v;

	if (!o || !json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, key, &v))
		return -1;
	if (json_object_is_type(v, json_type_int)) {
		*out = (double)json_object_get_int64(v);
	} else if (json_object_is_type(v, json_type_double)) {
		*out = json_object_get_double(v);
	} else {
		return -1;
	}
	return isfinite(*out) && *out >= 0 ? 0 : -1;
}

/* A count (a non-negative integer; a double that is one is accepted). */
static int jcount(struct json_object *o, const char *key, uint64_t *out)
{
	struct json_object *v;
	double d;

	if (!o || !json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, key, &v))
		return -1;
	if (json_object_is_type(v, json_type_int)) {
		int64_t i = json_object_get_int64(v);

		if (i < 0)
			return -1;
		/* json-c clamps past INT64_MAX; take the unsigned value then. */
		*out = i == INT64_MAX ? json_object_get_uint64(v) : (uint64_t)i;
		return 0;
	}
	if (json_object_is_type(v, json_type_double)) {
		d = json_object_get_double(v);
		if (!isfinite(d) || d < 0 || d >= 18446744073709551616.0 || d != floor(d))
			return -1;
		*out = (uint64_t)d;
		return 0;
	}
	return -1;
}

static const char *jstr(struct json_object *o, const char *key)
{
	return o && json_object_is_type(o, json_type_object) ? cli_json_str(o, key) : NULL;
}

/* a + b, saturating: report sums never wrap into a small number. */
static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static void fmt_count(char *out, size_t cap, int have, uint64_t v)
{
	if (have)
		snprintf(out, cap, "%llu", (unsigned long long)v);
	else
		snprintf(out, cap, "-");
}

static void fmt_pct(char *out, size_t cap, int have, double frac)
{
	if (have)
		snprintf(out, cap, "%.1f%%", frac * 100.0);
	else
		snprintf(out, cap, "-");
}

/* A ratio with 3 significant digits or more, never in exponent form. */
static void fmt_ratio(char *out, size_t cap, int have, double v)
{
	if (!have)
		snprintf(out, cap, "-");
	else if (v == 0)
		snprintf(out, cap, "0");
	else
		snprintf(out, cap, v >= 100 ? "%.0f" : v >= 10 ? "%.1f" : "%.2f", v);
}

static void fmt_mhz(char *out, size_t cap, double mhz)
{
	snprintf(out, cap, "%g MHz", mhz);
}

/* ---- run's summary line --------------------------------------------------- */

int cli_npu_summary(struct json_object *npu, char *out, size_t cap)
{
	char cyc[32], t[48], dram[32], util[32], mhz[48];
	uint64_t c = 0, d = 0;
	double us = 0, clk = 0, u = 0;
	int have;

	if (!npu || !json_object_is_type(npu, json_type_object) || jcount(npu, F_CYCLES, &c) < 0)
		return -1;
	fmt_count(cyc, sizeof cyc, 1, c);
	if (jnum(npu, F_TIME_US, &us) == 0)
		snprintf(t, sizeof t, "%.2f \xc2\xb5s", us);
	else
		snprintf(t, sizeof t, "- \xc2\xb5s");
	if (jnum(npu, F_CLOCK_MHZ, &clk) == 0 && clk > 0) {
		fmt_mhz(mhz, sizeof mhz, clk);
	} else {
		snprintf(mhz, sizeof mhz, "- MHz");
	}
	if (jcount(npu, F_DRAM_BYTES, &d) == 0)
		cli_bytes_str(d, dram, sizeof dram);
	else
		snprintf(dram, sizeof dram, "-");
	have = jnum(npu, F_UTILISATION, &u) == 0;
	fmt_pct(util, sizeof util, have, u);
	/* The colon under Run's "OK:" colon, the numbers under its text. */
	snprintf(out, cap, "npu_sim    : %s cycles" DOT "%s at %s" DOT "DRAM %s" DOT "utilisation %s",
		 cyc, t, mhz, dram, util);
	return 0;
}

/* fpga_board's partition, after the Validation/Compile OK line: how many
 * ops went to the PL. -1 when the answer carries no partition. */
int cli_fpga_summary(struct json_object *res, char *out, size_t cap)
{
	uint64_t pl, ps, seg;

	if (!res || jcount(res, F_PL_OPS, &pl) < 0 || jcount(res, F_PS_OPS, &ps) < 0 ||
	    jcount(res, F_PL_SEGMENTS, &seg) < 0)
		return -1;
	snprintf(out, cap, "fpga_board : %llu of %llu ops on the PL in %llu segment%s" DOT
		 "%llu on the PS", (unsigned long long)pl, (unsigned long long)(pl + ps),
		 (unsigned long long)seg, seg == 1 ? "" : "s", (unsigned long long)ps);
	return 0;
}

/* ---- the per-op table ------------------------------------------------------ */

typedef struct row {
	char cell[NCOL][CELL];
	uint64_t cost, stall;
	size_t order;
} row;

/* The memory-bound ops (stall > 0) first, most stall cycles first; then
 * the others, widest cost (compute + stall) first; ties in op order. */
static int by_cost(const void *pa, const void *pb)
{
	const row *a = pa, *b = pb;

	if ((a->stall > 0) != (b->stall > 0))
		return a->stall > 0 ? -1 : 1;
	if (a->stall != b->stall)
		return a->stall > b->stall ? -1 : 1;
	if (a->cost != b->cost)
		return a->cost > b->cost ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

/* Sum reads + writes (SRAM words) or read_bytes + write_bytes (DRAM) over
 * the three operands. 0 when none of them is there. */
static int traffic(struct json_object *op, const char *key, const char *rd, const char *wr,
		   uint64_t *sum)
{
	struct json_object *t = jobj(op, key);
	int have = 0;

	*sum = 0;
	for (size_t i = 0; t && i < sizeof operands / sizeof operands[0]; i++) {
		struct json_object *x = jobj(t, operands[i]);
		uint64_t v;

		if (jcount(x, rd, &v) == 0) {
			*sum = sat_add(*sum, v);
			have = 1;
		}
		if (jcount(x, wr, &v) == 0) {
			*sum = sat_add(*sum, v);
			have = 1;
		}
	}
	return have;
}

static void fill_row(struct json_object *op, size_t i, row *r)
{
	struct json_object *g = jobj(op, "gemm");
	const char *name = jstr(op, "name"), *low = jstr(op, "lowering");
	uint64_t M = 0, N = 0, K = 0, groups = 1, v = 0, comp = 0, stall = 0;
	int have, have_comp, have_stall, is_gemm = low && strcmp(low, "gemm") == 0;
	double u = 0;

	r->order = i;
	snprintf(r->cell[0], CELL, "%s", name && *name ? name : "-");
	snprintf(r->cell[1], CELL, "%s", low && *low ? low : "-");
	if (g && jcount(g, "M", &M) == 0 && jcount(g, "N", &N) == 0 && jcount(g, "K", &K) == 0) {
		int n = snprintf(r->cell[2], CELL, "%llu" TIMES "%llu" TIMES "%llu",
				 (unsigned long long)M, (unsigned long long)N, (unsigned long long)K);

		if (jcount(g, "groups", &groups) == 0 && groups > 1 && n > 0 && n < CELL)
			snprintf(r->cell[2] + n, CELL - (size_t)n, " (" TIMES "%llu)",
				 (unsigned long long)groups);
	} else if (jcount(op, "elements", &v) == 0) {
		snprintf(r->cell[2], CELL, "%llu elem", (unsigned long long)v);
	} else {
		snprintf(r->cell[2], CELL, "-");
	}
	/* Each value is read before it is formatted: an argument list would
	 * not say which comes first. */
	have = is_gemm && jcount(g, "folds", &v) == 0;
	fmt_count(r->cell[3], CELL, have, v);
	have_comp = jcount(op, "compute_cycles", &comp) == 0;
	have_stall = jcount(op, "stall_cycles", &stall) == 0;
	fmt_count(r->cell[4], CELL, have_comp, comp);
	fmt_count(r->cell[5], CELL, have_stall, stall);
	have = is_gemm && jnum(op, "utilisation", &u) == 0;
	fmt_pct(r->cell[6], CELL, have, u);
	have = traffic(op, "sram", "reads", "writes", &v);
	fmt_count(r->cell[7], CELL, have, v);
	if (traffic(op, "dram", "read_bytes", "write_bytes", &v))
		cli_bytes_str(v, r->cell[8], CELL);
	else
		snprintf(r->cell[8], CELL, "-");
	have = jnum(op, "arithmetic_intensity", &u) == 0;
	fmt_ratio(r->cell[9], CELL, have, u);
	have = jnum(op, "needed_bytes_per_cycle", &u) == 0;
	fmt_ratio(r->cell[10], CELL, have, u);
	/* memory-bound = it stalls; an op with no cycles at all is neither */
	snprintf(r->cell[11], CELL, "%s", have_stall && stall > 0 ? "memory" :
		 have_comp && comp > 0 ? "compute" : "-");
	r->cost = sat_add(comp, stall);
	r->stall = stall;
}

static int add_cell(enpu_buf *out, const char *s, size_t width, int right_align, int last)
{
	size_t w = cli_text_width(s), pad = w < width ? width - w : 0;

	if (right_align && enpu_buf_addf(out, "%*s", (int)pad, "") < 0)
		return -1;
	if (enpu_buf_adds(out, s) < 0)
		return -1;
	if (!right_align && !last && enpu_buf_addf(out, "%*s", (int)pad, "") < 0)
		return -1;
	return enpu_buf_adds(out, last ? "\n" : "  ");
}

static int add_line(enpu_buf *out, const char *const *cells, const size_t *width, int ncol)
{
	for (int c = 0; c < ncol; c++)
		if (add_cell(out, cells[c], width[c], right[c], c == ncol - 1) < 0)
			return -1;
	return 0;
}

/* "npu_sim report: 7 ops · array 16×16 · os · 1000 MHz · artifact 1a2b3c4d5e6f" */
static int add_header(enpu_buf *out, struct json_object *rep, struct json_object *npu,
		      size_t n_ops)
{
	struct json_object *t = jobj(npu, "target"), *arr;
	const char *df = jstr(t, "dataflow"), *art = jstr(rep, "artifact");
	char mhz[48];
	double clk, bw;
	int r;

	r = enpu_buf_addf(out, "npu_sim report: %zu op%s", n_ops, n_ops == 1 ? "" : "s");
	if (t && json_object_object_get_ex(t, "array", &arr) &&
	    json_object_is_type(arr, json_type_array) && json_object_array_length(arr) == 2)
		r |= enpu_buf_addf(out, DOT "array %lld" TIMES "%lld",
				   (long long)json_object_get_int64(json_object_array_get_idx(arr, 0)),
				   (long long)json_object_get_int64(json_object_array_get_idx(arr, 1)));
	if (df)
		r |= enpu_buf_addf(out, DOT "%s", df);
	if (jnum(t, "clock_mhz", &clk) == 0 && clk > 0) {
		fmt_mhz(mhz, sizeof mhz, clk);
		r |= enpu_buf_addf(out, DOT "%s", mhz);
	}
	if (jnum(t, "dram_bytes_per_cycle", &bw) == 0 && bw > 0)
		r |= enpu_buf_addf(out, DOT "DRAM %g B/cycle", bw);
	if (t && json_object_get_boolean(json_object_object_get(t, "scalesim_compat")))
		r |= enpu_buf_adds(out, DOT "scalesim_compat");
	if (art)
		r |= enpu_buf_addf(out, DOT "artifact %.12s", art);
	return r | enpu_buf_adds(out, "\n");
}

/* "total  112283 cycles (stall 0) · 112.28 µs at 1000 MHz · DRAM read 1.2 KiB,
 *  write 512 B · peak SRAM 3.0 KiB · utilisation 12.3%" */
static int add_totals(enpu_buf *out, struct json_object *npu)
{
	struct json_object *t = jobj(npu, "totals");
	char a[48], b[48];
	uint64_t v, s;
	double d, clk;
	int r;

	if (jcount(t, "cycles", &v) == 0)
		r = enpu_buf_addf(out, "total: %llu cycles", (unsigned long long)v);
	else
		r = enpu_buf_adds(out, "total: - cycles");
	if (jcount(t, "stall_cycles", &s) == 0)
		r |= enpu_buf_addf(out, " (stall %llu)", (unsigned long long)s);
	if (jnum(t, "time_us", &d) == 0)
		r |= enpu_buf_addf(out, DOT "%.2f \xc2\xb5s", d);
	else
		r |= enpu_buf_adds(out, DOT "- \xc2\xb5s");
	if (jnum(t, "clock_mhz", &clk) == 0 && clk > 0) {
		fmt_mhz(a, sizeof a, clk);
		r |= enpu_buf_addf(out, " at %s", a);
	}
	if (jcount(t, "dram_read_bytes", &v) == 0)
		cli_bytes_str(v, a, sizeof a);
	else
		snprintf(a, sizeof a, "-");
	if (jcount(t, "dram_write_bytes", &v) == 0)
		cli_bytes_str(v, b, sizeof b);
	else
		snprintf(b, sizeof b, "-");
	r |= enpu_buf_addf(out, DOT "DRAM read %s, write %s", a, b);
	if (jcount(t, "peak_sram_bytes", &v) == 0)
		cli_bytes_str(v, a, sizeof a);
	else
		snprintf(a, sizeof a, "-");
	r |= enpu_buf_addf(out, DOT "peak SRAM %s", a);
	d = 0;
	if (jnum(t, "utilisation", &d) == 0)
		fmt_pct(a, sizeof a, 1, d);
	else
		snprintf(a, sizeof a, "-");
	return r | enpu_buf_addf(out, DOT "utilisation %s\n", a);
}

static int render_npu(struct json_object *rep, struct json_object *npu, enpu_buf *out,
		      enpu_err *e)
{
	struct json_object *ops;
	size_t n = 0, width[NCOL];
	const char *cells[NCOL];
	row *rows = NULL;
	double bw;
	/* The roofline columns only for a target with a DRAM bandwidth:
	 * without one nothing stalls. */
	int ret = -1, ncol = jnum(jobj(npu, "target"), "dram_bytes_per_cycle", &bw) == 0 && bw > 0
				     ? NCOL : NCOL_BASE;

	if (json_object_object_get_ex(npu, "ops", &ops) && json_object_is_type(ops, json_type_array))
		n = json_object_array_length(ops);
	if (n && !(rows = calloc(n, sizeof *rows)))
		return enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
	for (size_t i = 0; i < n; i++)
		fill_row(json_object_array_get_idx(ops, i), i, &rows[i]);
	if (n)
		qsort(rows, n, sizeof *rows, by_cost);
	for (int c = 0; c < ncol; c++) {
		width[c] = cli_text_width(heads[c]);
		for (size_t i = 0; i < n; i++)
			if (cli_text_width(rows[i].cell[c]) > width[c])
				width[c] = cli_text_width(rows[i].cell[c]);
	}
	if (add_header(out, rep, npu, n) < 0 || add_line(out, heads, width, ncol) < 0)
		goto nomem;
	for (size_t i = 0; i < n; i++) {
		for (int c = 0; c < ncol; c++)
			cells[c] = rows[i].cell[c];
		if (add_line(out, cells, width, ncol) < 0)
			goto nomem;
	}
	if (add_totals(out, npu) < 0)
		goto nomem;
	ret = 0;
	goto out;
nomem:
	enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
out:
	free(rows);
	return ret;
}

int cli_report_render(struct json_object *rep, const char *label, enpu_buf *out, enpu_err *e)
{
	const char *fmt = jstr(rep, "format"), *bk = jstr(rep, "backend");
	struct json_object *npu = jobj(rep, "npu");
	double secs;

	if (!fmt || strcmp(fmt, REPORT_FORMAT) != 0) {
		char fix[160];

		snprintf(fix, sizeof fix, "give the report.json of `eulernpu run --report FILE`, or a job id");
		return enpu_fail(e, ENPU_E_USAGE, label, fix,
				 "'%s' is not an eulernpu report (no \"format\": \"" REPORT_FORMAT "\")",
				 label);
	}
	if (npu)
		return render_npu(rep, npu, out, e);
	/* "seconds": a version 1 report (a report has no clock since
	 * version 2; the job has it) */
	if (enpu_buf_addf(out, "%s report: no cycle model (only npu_sim has one)",
			  bk ? bk : "-") < 0 ||
	    (jnum(rep, "seconds", &secs) == 0 ? enpu_buf_addf(out, DOT "wall %.6f s\n", secs)
					      : enpu_buf_adds(out, "\n")) < 0)
		return enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
	return 0;
}

/* progress.c: the progress line on stderr. The formatters are pure (a line
 * from numbers and a width) so that the tests can pin them down; the rest
 * keeps the one line the terminal shows, draws it in place with \r and
 * erases it (ESC[K) before anything else is printed. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include <json-c/json.h>
#include "api.h"
#include "cli.h"
#include "progress.h"
#include "wire.h"

#define NAME_MAX_COLS 30
#define NAME_MIN_COLS 8
#define BAR_MIN 10
#define BAR_MAX 40
#define REDRAW 0.2               /* seconds between redraws */

char *cli_progress_eta_str(double secs, char *out, size_t cap)
{
	long long s;

	if (!(secs >= 0) || !isfinite(secs)) {
		snprintf(out, cap, "--");
		return out;
	}
	if (secs >= 100 * 3600.0) {
		snprintf(out, cap, ">99h");
		return out;
	}
	s = (long long)ceil(secs);
	if (s < 60)
		snprintf(out, cap, "%llds", s);
	else if (s < 3600)
		snprintf(out, cap, "%lldm%02llds", s / 60, s % 60);
	else
		snprintf(out, cap, "%lldh%02lldm", s / 3600, s % 3600 / 60);
	return out;
}

/* Byte offset of the first n code points of s (all of s if shorter). */
static size_t cut_cols(const char *s, size_t n)
{
	size_t i = 0, cols = 0;

	while (s[i]) {
		if (((unsigned char)s[i] & 0xC0) != 0x80) {
			if (cols == n)
				break;
			cols++;
		}
		i++;
	}
	return i;
}

/* Append at most cols columns of s to out (cap bytes), with "…" as the
 * last column when s had to be cut. */
static void put_cut(char *out, size_t cap, const char *s, size_t cols)
{
	size_t len = strlen(out);

	if (cols == 0 || len >= cap)
		return;
	if (cli_text_width(s) <= cols)
		snprintf(out + len, cap - len, "%s", s);
	else
		snprintf(out + len, cap - len, "%.*s…", (int)cut_cols(s, cols - 1), s);
}

static void append(char *out, size_t cap, const char *s)
{
	size_t len = strlen(out);

	if (len < cap)
		snprintf(out + len, cap - len, "%s", s);
}

/* The parts a bar line can show, and its levels: what each shows, richest
 * first, for a known total and for an unknown one. */
enum { P_NAME = 1, P_BAR = 2, P_PCT = 4, P_SIZES = 8, P_RATE = 16, P_ETA = 32 };
static const int lv_known[] = {
	P_NAME | P_BAR | P_PCT | P_SIZES | P_RATE | P_ETA, P_NAME | P_BAR | P_PCT | P_SIZES | P_ETA,
	P_NAME | P_BAR | P_PCT, P_NAME | P_PCT, P_PCT,
};
static const int lv_unknown[] = {P_NAME | P_SIZES | P_RATE, P_NAME | P_SIZES, P_SIZES};

/* A bar line's parts as text, and the level and widths chosen for them. */
typedef struct bar_parts {
	char pct[8], sizes[64], rate[48], eta[32];
	int f;                /* the parts shown (P_*) */
	size_t namew, barw;   /* columns of the name, of the bar's inside */
} bar_parts;

/* The percentage, sizes, rate and ETA as text (no percentage or ETA
 * without a total). */
static void bar_texts(bar_parts *bp, uint64_t done, uint64_t total, double elapsed)
{
	char a[24], b[24], t[24];
	double r = elapsed > 0 ? (double)done / elapsed : 0;

	if (total) {
		int p = done >= total ? 100 : (int)((double)done * 100.0 / (double)total);

		if (p == 100 && done < total)
			p = 99;
		snprintf(bp->pct, sizeof bp->pct, "%3d%%", p);
		snprintf(bp->sizes, sizeof bp->sizes, "%s / %s", cli_bytes_str(done, a, sizeof a),
			 cli_bytes_str(total > done ? total : done, b, sizeof b));
		snprintf(bp->eta, sizeof bp->eta, "ETA %s", cli_progress_eta_str(
			r > 0 && total >= done ? (double)(total - done) / r : -1, t, sizeof t));
	} else {
		snprintf(bp->sizes, sizeof bp->sizes, "%s", cli_bytes_str(done, a, sizeof a));
	}
	snprintf(bp->rate, sizeof bp->rate, "%s/s",
		 cli_bytes_str(r < 1.8e19 ? (uint64_t)r : UINT64_MAX, a, sizeof a));
}

/* The richest level of lv that fits avail columns (the last one when none
 * does), and the widths of the name (ncols wide) and the bar in it. */
static void bar_layout(bar_parts *bp, const int *lv, size_t nlv, size_t ncols, size_t avail)
{
	bp->f = lv[nlv - 1];
	for (size_t i = 0; i < nlv; i++) {
		size_t fixed = 0, parts = 0, room, need;

		if (lv[i] & P_PCT)
			fixed += cli_text_width(bp->pct), parts++;
		if (lv[i] & P_SIZES)
			fixed += cli_text_width(bp->sizes), parts++;
		if (lv[i] & P_RATE)
			fixed += cli_text_width(bp->rate), parts++;
		if (lv[i] & P_ETA)
			fixed += cli_text_width(bp->eta), parts++;
		parts += !!(lv[i] & P_NAME) + !!(lv[i] & P_BAR);
		fixed += parts ? parts - 1 : 0;         /* one space between parts */
		need = fixed + (lv[i] & P_BAR ? BAR_MIN + 2 : 0) +
		       ((lv[i] & P_NAME) && ncols ? (ncols < NAME_MIN_COLS ? ncols : NAME_MIN_COLS) : 0);
		if (need > avail && i + 1 < nlv)
			continue;
		bp->f = lv[i];
		room = avail > fixed ? avail - fixed : 0;
		if (bp->f & P_NAME) {
			bp->namew = ncols < NAME_MAX_COLS ? ncols : NAME_MAX_COLS;
			if (bp->f & P_BAR && bp->namew + BAR_MIN + 2 > room)
				bp->namew = room > BAR_MIN + 2 ? room - BAR_MIN - 2 : 0;
			if (bp->namew > room)
				bp->namew = room;
			room -= bp->namew;
		}
		if (bp->f & P_BAR) {
			bp->barw = room >= 2 ? room - 2 : 0;
			if (bp->barw > BAR_MAX)
				bp->barw = BAR_MAX;
		}
		break;
	}
}

/* The chosen parts into out, each followed by a space. */
static void bar_render(char *out, size_t cap, const bar_parts *bp, const char *name,
		       uint64_t done, uint64_t total)
{
	if ((bp->f & P_NAME) && bp->namew) {
		put_cut(out, cap, name, bp->namew);
		append(out, cap, " ");
	}
	if ((bp->f & P_BAR) && bp->barw) {
		size_t fill = total ? (size_t)((double)bp->barw * (double)(done < total ? done : total) /
					       (double)total) : 0;
		char bar[BAR_MAX + 3];

		bar[0] = '[';
		for (size_t k = 0; k < bp->barw; k++)
			bar[1 + k] = k < fill ? '#' : '.';
		bar[1 + bp->barw] = ']';
		bar[2 + bp->barw] = '\0';
		append(out, cap, bar);
		append(out, cap, " ");
	}
	if (bp->f & P_PCT) {
		append(out, cap, bp->pct);
		append(out, cap, " ");
	}
	if (bp->f & P_SIZES) {
		append(out, cap, bp->sizes);
		append(out, cap, " ");
	}
	if (bp->f & P_RATE) {
		append(out, cap, bp->rate);
		append(out, cap, " ");
	}
	if (bp->f & P_ETA)
		append(out, cap, bp->eta);
}

char *cli_progress_bar_line(char *out, size_t cap, const char *name, uint64_t done,
			    uint64_t total, double elapsed, int width)
{
	bar_parts bp;
	size_t avail = width > 1 ? (size_t)width - 1 : 0, ncols;

	if (cap == 0)
		return out;
	out[0] = '\0';
	if (!name)
		name = "";
	memset(&bp, 0, sizeof bp);
	bar_texts(&bp, done, total, elapsed);
	if (total)
		bar_layout(&bp, lv_known, sizeof lv_known / sizeof lv_known[0],
			   cli_text_width(name), avail);
	else
		bar_layout(&bp, lv_unknown, sizeof lv_unknown / sizeof lv_unknown[0],
			   cli_text_width(name), avail);
	bar_render(out, cap, &bp, name, done, total);
	/* drop a trailing space; the last resort on a tiny terminal is a cut */
	ncols = strlen(out);
	while (ncols > 0 && out[ncols - 1] == ' ')
		out[--ncols] = '\0';
	ncols = strspn(out, " ");
	memmove(out, out + ncols, strlen(out + ncols) + 1);
	out[cut_cols(out, avail)] = '\0';
	return out;
}

char *cli_progress_wait_line(char *out, size_t cap, const char *id, const char *state,
			     long long pos, double eta, double elapsed, int width)
{
	char line[512], t[24], el[24];
	size_t avail = width > 1 ? (size_t)width - 1 : 0;

	if (cap == 0)
		return out;
	snprintf(line, sizeof line, "waiting for %s%s%s%s", id && *id ? "job " : "the job",
		 id && *id ? id : "", state && *state ? ": " : "", state && *state ? state : "");
	if (pos >= 1) {
		size_t n = strlen(line);
		snprintf(line + n, sizeof line - n, ", #%lld in queue", pos);
	}
	if (eta >= 0 && isfinite(eta)) {
		size_t n = strlen(line);
		snprintf(line + n, sizeof line - n, ", ETA ~%s",
			 cli_progress_eta_str(eta, t, sizeof t));
	}
	{
		size_t n = strlen(line);
		snprintf(line + n, sizeof line - n, " · %s",
			 cli_progress_eta_str(floor(elapsed), el, sizeof el));
	}
	/* a narrow terminal keeps the facts, not the preamble */
	snprintf(out, cap, "%s", cli_text_width(line) > avail && strncmp(line, "waiting for ", 12) == 0
		 ? line + 12 : line);
	out[cut_cols(out, avail)] = '\0';
	return out;
}

/* ---- the terminal side -------------------------------------------------- */

static struct {
	int on, shown;
	int xfer;                 /* a transfer is in flight */
	double x_t0, last;
	char name[128];
	int wait;                 /* waiting on a job */
	double w_t0;
	char id[100], state[32];
	long long pos;
	double eta;
} P;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int term_width(void)
{
	struct winsize ws;

	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 80;
}

static void draw(const char *line)
{
	fprintf(stderr, "\r%s\033[K", line);
	fflush(stderr);
	P.shown = 1;
}

static void erase(void)
{
	if (!P.shown)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	P.shown = 0;
}

void cli_progress_setup(int json)
{
	memset(&P, 0, sizeof P);
	P.on = !json && isatty(STDERR_FILENO);
}

int cli_progress_xfer_begin(const char *name)
{
	const char *slash;

	if (!P.on)
		return 0;
	erase();
	slash = name ? strrchr(name, '/') : NULL;
	snprintf(P.name, sizeof P.name, "%s", slash ? slash + 1 : name ? name : "");
	P.xfer = 1;
	P.x_t0 = now_s();
	P.last = 0;
	return 1;
}

void cli_progress_xfer(uint64_t done, uint64_t total)
{
	char line[512];
	double t;

	if (!P.on || !P.xfer)
		return;
	t = now_s();
	if (t - P.x_t0 <= CLI_PROGRESS_AFTER || t - P.last < REDRAW)
		return;
	P.last = t;
	draw(cli_progress_bar_line(line, sizeof line, P.name, done, total, t - P.x_t0,
				   term_width()));
}

void cli_progress_xfer_end(void)
{
	if (!P.xfer)
		return;
	erase();
	P.xfer = 0;
	P.last = 0;
}

void cli_progress_wait_begin(const char *id)
{
	if (!P.on)
		return;
	P.wait = 1;
	P.w_t0 = now_s();
	P.last = 0;
	P.pos = -1;
	P.eta = -1;
	snprintf(P.id, sizeof P.id, "%s", id ? id : "");
	P.state[0] = '\0';     /* unknown until the server answers */
}

int cli_progress_waiting(void)
{
	return P.on && P.wait;
}

static void draw_wait(int force)
{
	char line[512];
	double t = now_s();

	if (!P.on || !P.wait || P.xfer || t - P.w_t0 <= CLI_PROGRESS_AFTER)
		return;
	if (!force && t - P.last < REDRAW)
		return;
	P.last = t;
	draw(cli_progress_wait_line(line, sizeof line, P.id, P.state, P.pos,
				    P.eta, t - P.w_t0, term_width()));
}

void cli_progress_wait_job(struct json_object *job)
{
	static enpu_wire_job wj;

	if (!P.on || !P.wait || enpu_wire_job_read(job, &wj, NULL, 0) != 0)
		return;
	if (!P.id[0])
		snprintf(P.id, sizeof P.id, "%s", wj.id);
	snprintf(P.state, sizeof P.state, "%s", wj.state);
	/* a final state is the caller's to print */
	if (strcmp(P.state, JOB_QUEUED) != 0 && strcmp(P.state, JOB_RUNNING) != 0)
		return;
	P.pos = wj.position;
	P.eta = wj.eta;
	draw_wait(1);
}

void cli_progress_tick(void)
{
	draw_wait(0);
}

void cli_progress_end(void)
{
	erase();
	P.xfer = 0;
	P.wait = 0;
}

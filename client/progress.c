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

char *cli_progress_bar_line(char *out, size_t cap, const char *name, uint64_t done,
			    uint64_t total, double elapsed, int width)
{
	/* what each level shows, richest first */
	enum { NAME = 1, BAR = 2, PCT = 4, SIZES = 8, RATE = 16, ETA = 32 };
	static const int known[] = {
		NAME | BAR | PCT | SIZES | RATE | ETA, NAME | BAR | PCT | SIZES | ETA,
		NAME | BAR | PCT, NAME | PCT, PCT,
	};
	static const int unknown[] = {NAME | SIZES | RATE, NAME | SIZES, SIZES};
	const int *lv = total ? known : unknown;
	size_t nlv = total ? sizeof known / sizeof known[0] : sizeof unknown / sizeof unknown[0];
	char pct[8] = "", sizes[64] = "", rate[48] = "", eta[32] = "", a[24], b[24], t[24];
	double r = elapsed > 0 ? (double)done / elapsed : 0;
	size_t avail = width > 1 ? (size_t)width - 1 : 0, ncols;
	int f = lv[nlv - 1];
	size_t namew = 0, barw = 0;

	if (cap == 0)
		return out;
	out[0] = '\0';
	if (!name)
		name = "";
	ncols = cli_text_width(name);
	if (total) {
		int p = done >= total ? 100 : (int)((double)done * 100.0 / (double)total);

		if (p == 100 && done < total)
			p = 99;
		snprintf(pct, sizeof pct, "%3d%%", p);
		snprintf(sizes, sizeof sizes, "%s / %s", cli_bytes_str(done, a, sizeof a),
			 cli_bytes_str(total > done ? total : done, b, sizeof b));
		snprintf(eta, sizeof eta, "ETA %s", cli_progress_eta_str(
			r > 0 && total >= done ? (double)(total - done) / r : -1, t, sizeof t));
	} else {
		snprintf(sizes, sizeof sizes, "%s", cli_bytes_str(done, a, sizeof a));
	}
	snprintf(rate, sizeof rate, "%s/s", cli_bytes_str(r < 1.8e19 ? (uint64_t)r : UINT64_MAX,
							    a, sizeof a));

	for (size_t i = 0; i < nlv; i++) {
		size_t fixed = 0, parts = 0, room, need;

		if (lv[i] & PCT)
			fixed += cli_text_width(pct), parts++;
		if (lv[i] & SIZES)
			fixed += cli_text_width(sizes), parts++;
		if (lv[i] & RATE)
			fixed += cli_text_width(rate), parts++;
		if (lv[i] & ETA)
			fixed += cli_text_width(eta), parts++;
		parts += !!(lv[i] & NAME) + !!(lv[i] & BAR);
		fixed += parts ? parts - 1 : 0;         /* one space between parts */
		need = fixed + ((lv[i] & NAME) && ncols ? (ncols < NAME_MIN_COLS ? ncols : NAME_MIN_COLS) : 0) +
		       (lv[i] & BAR ? BAR_MIN + 2 : 0);
		if (need > avail && i + 1 < nlv)
			continue;
		f = lv[i];
		room = avail > fixed ? avail - fixed : 0;
		if (f & NAME) {
			namew = ncols < NAME_MAX_COLS ? ncols : NAME_MAX_COLS;
			if (f & BAR && namew + BAR_MIN + 2 > room)
				namew = room > BAR_MIN + 2 ? room - BAR_MIN - 2 : 0;
			if (namew > room)
				namew = room;
			room -= namew;
		}
		if (f & BAR) {
			barw = room >= 2 ? room - 2 : 0;
			if (barw > BAR_MAX)
				barw = BAR_MAX;
		}
		break;
	}

	if ((f & NAME) && namew) {
		put_cut(out, cap, name, namew);
		append(out, cap, " ");
	}
	if ((f & BAR) && barw) {
		size_t fill = total ? (size_t)((double)barw * (double)(done < total ? done : total) /
					       (double)total) : 0;
		char bar[BAR_MAX + 3];

		bar[0] = '[';
		for (size_t k = 0; k < barw; k++)
			bar[1 + k] = k < fill ? '#' : '.';
		bar[1 + barw] = ']';
		bar[2 + barw] = '\0';
		append(out, cap, bar);
		append(out, cap, " ");
	}
	if (f & PCT) {
		append(out, cap, pct);
		append(out, cap, " ");
	}
	if (f & SIZES) {
		append(out, cap, sizes);
		append(out, cap, " ");
	}
	if (f & RATE) {
		append(out, cap, rate);
		append(out, cap, " ");
	}
	if (f & ETA)
		append(out, cap, eta);
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

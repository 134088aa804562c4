/* progress.h: progress on stderr for people at a terminal: a bar for
 * uploads and downloads, a one-line status for waits on a job. Shown only
 * when a verb enabled it (not with --json), stderr is a TTY, and the
 * operation has lasted more than a second; stdout never changes. */
#ifndef CLI_PROGRESS_H
#define CLI_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

struct json_object;

#define CLI_PROGRESS_AFTER 1.0   /* seconds before anything is drawn */

/* ---- pure formatters (unit-tested) ------------------------------------ */

/* A time left for people: "7s", "1m05s", "2h03m", ">99h"; "--" when
 * secs is negative or not finite. Returns out. */
char *cli_progress_eta_str(double secs, char *out, size_t cap);

/* The transfer line for a terminal of width columns: name, a [###...] bar,
 * percent, "done / total", rate and ETA, dropping the least useful parts
 * (then shortening the name) until the line fits in width - 1 columns.
 * total 0 = unknown (no bar, no ETA). elapsed in seconds. Returns out. */
char *cli_progress_bar_line(char *out, size_t cap, const char *name, uint64_t done,
			    uint64_t total, double elapsed, int width);

/* The wait line: "waiting for job ID: queued, #2 in queue, ETA ~15s · 12s"
 * ("waiting for the job" when id is NULL or empty; an empty state, pos < 1
 * and eta < 0 leave those parts out; elapsed in whole seconds), cut to
 * width - 1 columns. Returns out. */
char *cli_progress_wait_line(char *out, size_t cap, const char *id, const char *state,
			     long long pos, double eta, double elapsed, int width);

/* ---- the terminal side ------------------------------------------------- */

/* Turn progress on for this run unless json (off by default; verbs that
 * print JSON leave it off). On only when stderr is a TTY. */
void cli_progress_setup(int json);
/* A transfer of the file called name begins (rest.c); 1 when progress is
 * on and the caller should report bytes with cli_progress_xfer. */
int cli_progress_xfer_begin(const char *name);
void cli_progress_xfer(uint64_t done, uint64_t total);
/* A wait on job id begins; cli_progress_wait_job updates state, queue
 * position and ETA from each answer; cli_progress_tick redraws (rest.c
 * calls it while a long-poll is in flight). */
void cli_progress_wait_begin(const char *id);
void cli_progress_wait_job(struct json_object *job);   /* draws only queued/running */
int cli_progress_waiting(void);
void cli_progress_tick(void);
/* Erase the line (if one was drawn) and forget the operation: call before
 * anything else is printed. A wait stays active across a transfer's end. */
void cli_progress_xfer_end(void);
void cli_progress_end(void);

#endif

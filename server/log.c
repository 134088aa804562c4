/* log.c: the daemon's log, one logfmt line per event ("ts=... level=info
 * req=... route=..."), to the --log file (appended) or stderr. When stderr
 * is the journal (sd.c decides, from JOURNAL_STREAM) each line is sent
 * through libsystemd's sd_journal_sendv instead, with its priority and the
 * request id, job id and error code as fields of their own (sd.c says why);
 * when the journal's socket is missing or a send fails, it goes to stderr
 * with a <N> syslog priority and no timestamp (journald adds one). Whatever a caller formats, a bearer token
 * is masked before it is written. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <pthread.h>
#include "srv.h"
#include "metrics.h"
#include "sd.h"

enum { LV_ERROR, LV_WARN, LV_INFO, LV_DEBUG };
static const char *const lv_names[] = {"error", "warn", "info", "debug"};
static const int lv_syslog[] = {3, 4, 6, 7};   /* err, warning, info, debug */

static FILE *logf_;
static int journal;              /* logf_ is stderr and stderr is journald */
static int journal_native;       /* ... and its socket takes fielded lines (sd.c) */
static int min_level = LV_INFO;
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;

static int level_of(const char *name)
{
	int i;
	if (!name)
		return -1;
	if (!strcmp(name, "warning"))
		return LV_WARN;
	for (i = 0; i <= LV_DEBUG; i++)
		if (!strcmp(name, lv_names[i]))
			return i;
	return -1;
}

int srv_log_set_level(const char *name)
{
	int lv = level_of(name);
	if (lv < 0)
		return -1;
	__atomic_store_n(&min_level, lv, __ATOMIC_RELAXED);
	return 0;
}

int srv_log_enabled(const char *level)
{
	int lv = level_of(level);
	return (lv < 0 ? LV_INFO : lv) <= __atomic_load_n(&min_level, __ATOMIC_RELAXED);
}

int srv_log_open(const char *path)
{
	if (!path) {
		logf_ = stderr;
		journal = srv_sd_stderr_is_journal();
		journal_native = journal && srv_sd_journal_native();
		return 0;
	}
	FILE *f = fopen(path, "ae");
	if (!f)
		return -1;
	setvbuf(f, NULL, _IOLBF, 0);
	logf_ = f;
	journal = journal_native = 0;
	return 0;
}

void srv_log_close(void)
{
	pthread_mutex_lock(&log_mu);
	if (logf_ && logf_ != stderr)
		fclose(logf_);
	logf_ = NULL;
	pthread_mutex_unlock(&log_mu);
}

void srv_time_str(const struct timespec *t, char *buf, size_t cap)
{
	struct tm tm;
	char base[32];
	time_t s = t->tv_sec;

	gmtime_r(&s, &tm);
	strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, cap, "%s.%03ldZ", base, (long)(t->tv_nsec / 1000000));
}

double srv_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* "Bearer abc" -> "Bearer ***", and a newline never splits a line. */
static void scrub(char *s)
{
	char *p = s, *q;

	for (q = s; *q; q++)
		if (*q == '\n' || *q == '\r')
			*q = ' ';
	while ((p = strcasestr(p, "bearer ")) != NULL) {
		char *tok = p + 7, *end = tok;
		while (*end && *end != ' ' && *end != '"' && *end != '\'')
			end++;
		if (end - tok >= 3) {        /* shrinks: never past the buffer */
			memmove(tok + 3, end, strlen(end) + 1);
			memcpy(tok, "***", 3);
		} else {
			memset(tok, '*', (size_t)(end - tok));
		}
		p = tok;
	}
}

void srv_log(const char *level, const char *fmt, ...)
{
	struct timespec now;
	char ts[48], msg[2048];
	int lv = level_of(level);
	va_list ap;

	if (lv < 0)
		lv = LV_INFO;
	if (lv > __atomic_load_n(&min_level, __ATOMIC_RELAXED))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	scrub(msg);
	clock_gettime(CLOCK_REALTIME, &now);
	srv_time_str(&now, ts, sizeof ts);
	pthread_mutex_lock(&log_mu);
	if (logf_) {
		if (!journal)
			fprintf(logf_, "ts=%s level=%s %s\n", ts, lv_names[lv], msg);
		else if (!journal_native || srv_sd_journal_send(lv_syslog[lv], lv_names[lv], msg) != 0)
			fprintf(logf_, "<%d>level=%s %s\n", lv_syslog[lv], lv_names[lv], msg);
		fflush(logf_);
	}
	pthread_mutex_unlock(&log_mu);
}

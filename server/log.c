/* log.c: the daemon's log, one logfmt line per event ("ts=... level=info
 * req=... route=..."), to the --log file (appended) or stderr. When stderr
 * is the journal (sd.c decides, from JOURNAL_STREAM) each line is sent
 * through libsystemd's sd_journal_sendv instead, with its priority and the
 * request id, job id and error code as fields of their own (sd.c says why);
 * when the journal's socket is missing or a send fails, it goes to stderr
 * with a <N> syslog priority and no timestamp (journald adds one). Whatever a caller formats, a bearer token
 * is masked before it is written.
 *
 * A line is formatted on the caller's stack and queued whole; a writer
 * thread takes all that is queued in one write(2) and wakes only when
 * lines wait, so at thousands of requests a second the access lines cost
 * a memcpy each, not a write each (a write per line under a lock once took
 * a quarter of a health check's time). Nothing is dropped: a caller waits
 * while the queue (LOG_QUEUE) is full; an error line returns only once it
 * is written; srv_log_close writes the rest before it closes the file. */
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <pthread.h>
#include <unistd.h>
#include "buf.h"
#include "srv.h"
#include "metrics.h"
#include "sd.h"

enum { LV_ERROR, LV_WARN, LV_INFO, LV_DEBUG };
static const char *const lv_names[] = {"error", "warn", "info", "debug"};
static const int lv_syslog[] = {3, 4, 6, 7};   /* err, warning, info, debug */

#define LOG_LINE_MAX 4096

static int log_fd = -1;          /* the --log file, or 2 */
static int journal;              /* log_fd is 2 and stderr is journald */
static int journal_native;       /* ... and its socket takes fielded lines (sd.c) */
static int min_level = LV_INFO;
/* The queue: callers fill q_fill under q_mu while the writer writes
 * q_out outside it; then the two swap. q_seq and q_written count bytes queued
 * and written, so a caller can wait for its own line. */
#define LOG_QUEUE (256 * 1024)
#define LOG_GATHER_S 0.01
#define LOG_GATHER_LINES 32
static pthread_mutex_t q_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_more = PTHREAD_COND_INITIALIZER;   /* lines queued, or stop */
static pthread_cond_t q_done = PTHREAD_COND_INITIALIZER;   /* a batch was written */
static char q_a[LOG_QUEUE], q_b[LOG_QUEUE];
static char *q_fill = q_a, *q_out = q_b;
static size_t q_len, q_lines;
static int q_idle, q_stop, q_run;
static int q_gather;   /* the writer waits for more lines ... */
static int q_sync;     /* ... unless a caller waits for its line */
static unsigned long long q_seq, q_written;
static pthread_t q_thread;

static void write_line(const char *p, size_t n);
static void writer_start(void);

/* Writes what is queued. After a batch of LOG_GATHER_LINES or more it
 * lets lines gather for LOG_GATHER_S before the next (a busy daemon writes
 * a batch, not a line, per wake-up); otherwise what comes is written at
 * once, so a line is in the file as soon as at a few requests a second. */
static void *log_writer(void *arg)
{
	double last = 0.0;
	size_t lines = 0;          /* in the last batch */
	(void)arg;

	pthread_mutex_lock(&q_mu);
	for (;;) {
		char *b;
		size_t n;

		while (!q_len && !q_stop) {
			q_idle = 1;
			pthread_cond_wait(&q_more, &q_mu);
		}
		q_idle = 0;
		if (!q_len)
			break;
		double left = last + LOG_GATHER_S - srv_now();
		if (!q_stop && !q_sync && lines >= LOG_GATHER_LINES && q_len < LOG_QUEUE / 2 &&
		    left > 0) {
			struct timespec until;   /* q_more's clock is CLOCK_REALTIME */
			srv_realtime_after(left, &until);
			q_gather = 1;
			pthread_cond_timedwait(&q_more, &q_mu, &until);
			q_gather = 0;
			continue;
		}
		b = q_fill;
		n = q_len;
		lines = q_lines;
		q_lines = 0;
		q_fill = q_out;
		q_out = b;
		q_len = 0;
		q_sync = 0;
		pthread_mutex_unlock(&q_mu);
		write_line(b, n);
		last = srv_now();

		pthread_mutex_lock(&q_mu);
		q_written += n;
		pthread_cond_broadcast(&q_done);
	}
	pthread_mutex_unlock(&q_mu);
	return NULL;
}

/* Queue a line (sync: and wait until it is written). Without the writer
 * thread (it could not start, or the log is closing) the line is written
 * here, under the lock. */
static void log_put(const char *line, size_t n, int sync)
{
	unsigned long long mine;

	pthread_mutex_lock(&q_mu);
	if (log_fd < 0) {
		pthread_mutex_unlock(&q_mu);
		return;
	}
	if (!q_run || q_stop) {
		write_line(line, n);
		pthread_mutex_unlock(&q_mu);
		return;
	}
	while (q_len + n > LOG_QUEUE) {
		pthread_cond_signal(&q_more);
		pthread_cond_wait(&q_done, &q_mu);
	}
	memcpy(q_fill + q_len, line, n);
	q_len += n;
	q_lines++;
	mine = q_seq += n;
	if (sync)
		q_sync = 1;
	if (q_idle || (sync && q_gather) || q_len > LOG_QUEUE / 2) {
		q_idle = 0;
		pthread_cond_signal(&q_more);
	}
	while (sync && q_written < mine)
		pthread_cond_wait(&q_done, &q_mu);
	pthread_mutex_unlock(&q_mu);
}

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
	int fd;

	writer_start();
	if (!path) {
		log_fd = 2;
		journal = srv_sd_stderr_is_journal();
		journal_native = journal && srv_sd_journal_native();
		return 0;
	}
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	log_fd = fd;
	journal = journal_native = 0;
	return 0;
}

static void writer_start(void)
{
	pthread_mutex_lock(&q_mu);
	if (!q_run) {
		q_stop = 0;
		q_run = pthread_create(&q_thread, NULL, log_writer, NULL) == 0;
	}
	pthread_mutex_unlock(&q_mu);
}

void srv_log_close(void)
{
	int run;

	pthread_mutex_lock(&q_mu);
	q_stop = 1;
	run = q_run;
	pthread_cond_signal(&q_more);
	pthread_mutex_unlock(&q_mu);
	if (run)
		pthread_join(q_thread, NULL);   /* it writes what is queued first */
	pthread_mutex_lock(&q_mu);
	q_run = 0;
	if (log_fd > 2)
		close(log_fd);
	log_fd = -1;
	pthread_mutex_unlock(&q_mu);
}

void srv_time_str(const struct timespec *t, char *buf, size_t cap)
{
	/* the seconds' text is kept per thread: a log line or a job's time
	 * costs no strftime, and no printf */
	static _Thread_local time_t last = (time_t)-1;
	static _Thread_local char base[32];
	unsigned ms = (unsigned)(t->tv_nsec / 1000000) % 1000;
	char tail[6] = {'.', (char)('0' + ms / 100), (char)('0' + ms / 10 % 10),
			(char)('0' + ms % 10), 'Z', '\0'};
	struct tm tm;
	time_t s = t->tv_sec;

	if (s != last) {
		gmtime_r(&s, &tm);
		strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
		last = s;
	}
	enpu_str_cat(buf, cap, base, tail, (char *)NULL);
}

void srv_realtime_after(double s, struct timespec *out)
{
	clock_gettime(CLOCK_REALTIME, out);
	out->tv_sec += (time_t)s;
	out->tv_nsec += (long)((s - (double)(time_t)s) * 1e9);
	if (out->tv_nsec >= 1000000000L) {
		out->tv_sec++;
		out->tv_nsec -= 1000000000L;
	}
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

/* One line in one write; a short write (a full pipe) finishes the line. */
static void write_line(const char *p, size_t n)
{
	(void)enpu_write_all(log_fd, p, n);
}

/* Appenders of srv_log_access's line: bounded by end, never past it. */
static char *put_str(char *p, const char *end, const char *s)
{
	while (*s && p < end)
		*p++ = *s++;
	return p;
}

static char *put_u64(char *p, const char *end, uint64_t v)
{
	char d[20];
	int n = 0;

	do
		d[n++] = (char)('0' + v % 10);
	while ((v /= 10) && n < 20);
	while (n && p < end)
		*p++ = d[--n];
	return p;
}

/* digits of v, zero-padded to width */
static char *put_pad(char *p, const char *end, unsigned v, int width)
{
	for (int i = width - 1; i >= 0; i--, v /= 10)
		if (p + i < end)
			p[i] = (char)('0' + v % 10);
	return p + width < end ? p + width : (char *)end;
}

/* A line built without printf (the lines of every request and every job):
 * "ts=... level=LEVEL " then the caller's fields. Bounded: a field past
 * the end is cut, and the line still ends with its newline. */
typedef struct fast_line {
	char b[512];
	char *p;
} fast_line;
#define FL_END(l) ((l)->b + sizeof (l)->b - 1)   /* room for the newline */

static void fl_begin(fast_line *l, int lv)
{
	struct timespec now;
	char ts[48];

	clock_gettime(CLOCK_REALTIME, &now);
	srv_time_str(&now, ts, sizeof ts);
	l->p = put_str(l->b, FL_END(l), "ts=");
	l->p = put_str(l->p, FL_END(l), ts);
	l->p = put_str(l->p, FL_END(l), " level=");
	l->p = put_str(l->p, FL_END(l), lv_names[lv]);
	l->p = put_str(l->p, FL_END(l), " ");
}

static void fl_str(fast_line *l, const char *s) { l->p = put_str(l->p, FL_END(l), s); }
static void fl_u64(fast_line *l, uint64_t v) { l->p = put_u64(l->p, FL_END(l), v); }

/* v >= 0 with `places` decimals (1 to 3), rounded half up: %.Nf's digits
 * but at an exact tie */
static void fl_fixed(fast_line *l, double v, int places)
{
	unsigned scale = places == 1 ? 10 : places == 2 ? 100 : 1000;
	uint64_t n = v > 0 ? (uint64_t)(v * scale + 0.5) : 0;

	fl_u64(l, n / scale);
	fl_str(l, ".");
	l->p = put_pad(l->p, FL_END(l), (unsigned)(n % scale), places);
}

static void fl_end(fast_line *l)
{
	*l->p++ = '\n';
	log_put(l->b, (size_t)(l->p - l->b), 0);
}

/* Fast lines go to the file or stderr; the journal takes srv_log's fields,
 * and a text that is not the daemon's own ids (lowercase letters, digits,
 * '-': no "bearer ", no newline) only ever goes through srv_log's scrub. */
static int fl_ok(int lv, const char *own)
{
	return lv <= __atomic_load_n(&min_level, __ATOMIC_RELAXED) && !journal &&
	       strspn(own, "0123456789abcdefghijklmnopqrstuvwxyz-") == strlen(own);
}

void srv_log_access(const char *rid, const char *method, const char *route, unsigned status,
		    uint64_t bytes, double ms)
{
	fast_line l;

	if (!fl_ok(LV_INFO, rid)) {
		srv_log("info", "req=%s method=%s route=%s status=%u bytes=%" PRIu64 " ms=%.1f",
			rid, method, route, status, bytes, ms);
		return;
	}
	fl_begin(&l, LV_INFO);
	fl_str(&l, "req=");
	fl_str(&l, rid);
	fl_str(&l, " method=");
	fl_str(&l, method);
	fl_str(&l, " route=");
	fl_str(&l, route);
	fl_str(&l, " status=");
	fl_u64(&l, status);
	fl_str(&l, " bytes=");
	fl_u64(&l, bytes);
	fl_str(&l, " ms=");
	fl_fixed(&l, ms, 1);
	fl_end(&l);
}

void srv_log_job_done(const char *id, const char *artifact, double seconds)
{
	fast_line l;
	char art[13];

	snprintf(art, sizeof art, "%.12s", artifact);
	if (!fl_ok(LV_INFO, id) || !fl_ok(LV_INFO, art)) {
		srv_log("info", "job=%s artifact=%s succeeded in %.3fs", id, art, seconds);
		return;
	}
	fl_begin(&l, LV_INFO);
	fl_str(&l, "job=");
	fl_str(&l, id);
	fl_str(&l, " artifact=");
	fl_str(&l, art);
	fl_str(&l, " succeeded in ");
	fl_fixed(&l, seconds, 3);
	fl_str(&l, "s");
	fl_end(&l);
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
	{
		char line[LOG_LINE_MAX];
		int n = -1;

		if (!journal)
			n = snprintf(line, sizeof line, "ts=%s level=%s %s\n", ts, lv_names[lv], msg);
		else if (!journal_native || srv_sd_journal_send(lv_syslog[lv], lv_names[lv], msg) != 0)
			n = snprintf(line, sizeof line, "<%d>level=%s %s\n", lv_syslog[lv], lv_names[lv],
				     msg);
		if (n >= (int)sizeof line) {   /* cut, still one line */
			n = (int)sizeof line - 1;
			line[n - 1] = '\n';
		}
		if (n > 0)
			log_put(line, (size_t)n, lv == LV_ERROR);
	}
}

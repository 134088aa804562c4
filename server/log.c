/* log.c: the daemon's log. One line per event, with a UTC timestamp, to the
 * --log file (appended, line-buffered) or to stderr when none is given. */
#include <stdarg.h>
#include <stdio.h>
#include <pthread.h>
#include "srv.h"

static FILE *logf_;
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;

int srv_log_open(const char *path)
{
	if (!path) {
		logf_ = stderr;
		return 0;
	}
	FILE *f = fopen(path, "ae");
	if (!f)
		return -1;
	setvbuf(f, NULL, _IOLBF, 0);
	logf_ = f;
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

void srv_log(const char *level, const char *fmt, ...)
{
	struct timespec now;
	char ts[48];
	va_list ap;

	clock_gettime(CLOCK_REALTIME, &now);
	srv_time_str(&now, ts, sizeof ts);
	pthread_mutex_lock(&log_mu);
	if (logf_) {
		fprintf(logf_, "%s %s ", ts, level);
		va_start(ap, fmt);
		vfprintf(logf_, fmt, ap);
		va_end(ap);
		fputc('\n', logf_);
		fflush(logf_);
	}
	pthread_mutex_unlock(&log_mu);
}

/* srv.h: what every module of eulernpud shares: the configuration from the
 * command line, the daemon-wide context handed to each route, and the log.
 */
#ifndef SRV_H
#define SRV_H

#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include "api.h"
#include "enpu.h"

#define SRV_JSON_MAX         (1u << 20)   /* JSON request bodies */
#define SRV_JSON_DEPTH       32
#define SRV_FORM_MAX         (64u << 10)  /* multipart text fields, in total */
#define SRV_WAIT_MAX         300          /* ?wait= cap, seconds */

typedef struct srv_config {
	const char *socket_path;   /* NULL = none (when --listen only) */
	const char *listen;        /* "HOST:PORT" or NULL */
	const char *port_file;
	const char *cache_dir;
	const char *log_file;
	const char *pid_file;
	int workers;
	int threads;
	uint64_t max_upload;
	int max_queue;
	int idle_exit;             /* seconds, 0 = never */
	int conn_limit;
	int conn_timeout;
} srv_config;

struct srv_cas;
struct srv_jobs;

typedef struct srv_ctx {
	srv_config cfg;
	struct srv_cas *cas;
	struct srv_jobs *jobs;
	const enpu_limits *lim;
	volatile int stopping;
} srv_ctx;

/* The log: one line each, timestamped, to --log FILE or stderr. Never
 * fails visibly; thread-safe. */
int srv_log_open(const char *path);      /* NULL = stderr; -1 if it cannot be opened */
void srv_log_close(void);
void srv_log(const char *level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* RFC 3339 UTC ("2025-01-31T12:00:00.123Z") of a CLOCK_REALTIME time. */
void srv_time_str(const struct timespec *t, char *buf, size_t cap);
double srv_now(void);                    /* CLOCK_MONOTONIC seconds */

#endif

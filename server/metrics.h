/* metrics.h: the daemon's Prometheus metrics (GET /metrics, text format
 * 0.0.4) and the log level. Counters are fed through the daemon's observer
 * (obs.h: http.c's requests, jobs.c's finished jobs); gauges are read at scrape time
 * from the job table, the cache and the board pool. Every label value comes
 * from a fixed set (route patterns, backend and state names, HTTP status
 * codes), so the number of series stays bounded whatever clients send. */
#ifndef SRV_METRICS_H
#define SRV_METRICS_H

#include "srv.h"
#include "buf.h"
#include "obs.h"

/* The histogram buckets (seconds) of request latency and job times. */
#define SRV_METRICS_BUCKETS {0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5}
#define SRV_METRICS_NBUCKETS 8

/* The observer that feeds these counters (main.c installs it in srv_ctx
 * and the job table). Its arg is unused; the counters are process-wide. */
const srv_observer *srv_metrics_observer(void);

/* A request completed (obs.h's request hook): counted by route, method and
 * status, timed, and logged here rather than in http.c so that the line
 * carries the route pattern, never the raw URL. Thread-safe. */
void srv_metrics_request(const char *method, const char *route, unsigned status,
			 uint64_t bytes, double seconds, const char *request_id);

/* A job reached a final state: backend ("cpu_ref"...), state ("succeeded",
 * "failed", "cancelled", "timed_out"), seconds queued (created -> started,
 * or -> finished if it never started) and running (started -> finished;
 * negative when it never ran: only the queue time is observed then).
 * Thread-safe; unknown names count under "other". */
void srv_metrics_job_done(const char *backend, const char *state, double queue_s, double run_s);

/* The whole /metrics page into out (appended): the counters plus gauges
 * read from ctx (its jobs, cas and boards may be NULL: their gauges are 0).
 * 0, or -1 when out's cap is reached. */
int srv_metrics_render(srv_ctx *ctx, enpu_buf *out);

/* The job figures of the status event (GET /v1/events), summed over the
 * backends: {"done": {state: count}, "le": [bucket bounds], "queue_s" and
 * "run_s": {"buckets": [count per bucket, not cumulative], "count", "sum"}}.
 * A page takes rates and quantiles from the difference of two. */
struct json_object *srv_metrics_jobs_json(void);

/* A label value escaped for the text format (\\, \", \n), appended. */
int srv_prom_escape(enpu_buf *out, const char *s);

/* Forget every counter (tests). */
void srv_metrics_reset(void);

/* ---- the log (log.c) --------------------------------------------------------
 * Levels, most to least severe: error, warn, info (default), debug. Lines
 * below the level are dropped. srv_log(level, ...) takes these names.
 * 0, or -1 for an unknown name (the level stays as it was). */
int srv_log_set_level(const char *name);
/* 1 when a line at this level would be written. */
int srv_log_enabled(const char *level);

#endif

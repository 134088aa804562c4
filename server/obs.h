/* obs.h: the daemon's observer, an explicit table of hooks that the server
 * context carries (srv_ctx.obs) and the job table is handed: http.c reports
 * each finished request, jobs.c each job that reached a final state.
 * metrics.c provides the daemon's (srv_metrics_observer); tests pass their
 * own or none. Nothing depends on link order. */
#ifndef SRV_OBS_H
#define SRV_OBS_H

#include <stdint.h>

typedef struct srv_observer {
	void *arg;                 /* handed back to every hook */
	/* A request completed (after the reply is sent or the connection
	 * dropped). method: "GET"...; route: the matched route pattern
	 * ("/v1/jobs/ * ") or "unmatched"; status: the HTTP status sent (0 if
	 * none); bytes: response body bytes; seconds: wall time from the first
	 * byte of the request; request_id: 16 lowercase hex, as sent in
	 * X-Request-Id. Called from MHD's threads. */
	void (*request)(void *arg, const char *method, const char *route, unsigned status,
			uint64_t bytes, double seconds, const char *request_id);
	/* A job reached a final state (see srv_metrics_job_done for the
	 * arguments). Called under the job table's lock: the hook must not
	 * call back into the table. */
	void (*job_done)(void *arg, const char *backend, const char *state, double queue_s,
			 double run_s);
} srv_observer;

/* The hooks through a possibly NULL observer (or NULL members). */
static inline void srv_obs_request(const srv_observer *o, const char *method, const char *route,
				   unsigned status, uint64_t bytes, double seconds,
				   const char *request_id)
{
	if (o && o->request)
		o->request(o->arg, method, route, status, bytes, seconds, request_id);
}

static inline void srv_obs_job_done(const srv_observer *o, const char *backend, const char *state,
				    double queue_s, double run_s)
{
	if (o && o->job_done)
		o->job_done(o->arg, backend, state, queue_s, run_s);
}

#endif

/* obs.h: the per-request observability hook. http.c calls srv_obs_request
 * once per request when it completes (after the reply is sent or the
 * connection dropped); metrics.c implements it (requests by route and
 * status, latency histogram). http.c carries a weak no-op so the daemon
 * links before metrics.c exists. */
#ifndef SRV_OBS_H
#define SRV_OBS_H

#include <stdint.h>

/* method: "GET"...; route: the matched route pattern ("/v1/jobs/ * ") or
 * "unmatched"; status: the HTTP status sent (0 if none); bytes: response
 * body bytes; seconds: wall time from the first byte of the request;
 * request_id: 16 lowercase hex, as sent in X-Request-Id. */
void srv_obs_request(const char *method, const char *route, unsigned status,
		     uint64_t bytes, double seconds, const char *request_id);

#endif

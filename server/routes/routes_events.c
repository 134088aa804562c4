/* routes_events.c: GET /v1/events, one server-sent event stream of what a
 * status page shows, so that it polls nothing:
 *   event: hello   {"name", "admin", "seq"}: first, who the stream is for
 *                  (what a page may offer to cancel) and the change number
 *                  it starts after (a job list read after it is current)
 *   event: status  {"health" (without uptime_s), "cache", "boards",
 *                  "metrics" (the job figures, metrics.h)}: at once,
 *                  then only when it changed: at most once a second, or
 *                  0.2 s after job changes (its queue counts then agree
 *                  with the jobs' events at once)
 *   event: job     the job's JSON, at its submission and each state change,
 *                  with "id: N" (the change's number) for Last-Event-ID
 *   event: reset   {"seq"}: the reader fell more than SRV_JOBS_FEED changes
 *                  behind (or resumed from an unknown number); reload the
 *                  list (GET /v1/jobs) and go on from here
 * A user sees the changes of their own jobs, an admin every job's (as GET
 * /v1/jobs lists them). A stream lasts SRV_WAIT_MAX seconds; EventSource
 * reconnects with Last-Event-ID and misses nothing the ring still holds.
 * A job changing twice before it is sent is sent once, as it is then. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "srv.h"
#include "api.h"
#include "boards.h"
#include "jobs.h"
#include "metrics.h"
#include "routes.h"

#define FEED_BATCH 64   /* changes taken per wait */
#define STATUS_GAP 1.0   /* seconds between status events at most... */
#define STATUS_OWED 0.2  /* ...or this soon after job changes (queue counts) */

typedef struct feed_reader {
	srv_ctx *ctx;
	srv_ident who;
	uint64_t since;
	double status_at;       /* srv_now() of the last status event */
	int owed;               /* jobs changed since: the status likely did too */
	char *status;           /* its text, to send only a change */
	srv_feed_ev ev[FEED_BATCH];
} feed_reader;

static json_object *status_json(srv_ctx *ctx)
{
	json_object *o = json_object_new_object();

	json_object *h = srv_health_json(ctx);

	json_object_object_del(h, F_UPTIME);   /* a change every second, of nothing */
	json_object_object_add(o, F_HEALTH, h);
	json_object_object_add(o, F_CACHE, srv_cache_stats_json(ctx));
	if (ctx->boards) {
		json_object *b = srv_boards_json(ctx->boards);
		json_object_object_add(o, F_BOARDS, json_object_get(json_object_object_get(b, F_BOARDS)));
		json_object_put(b);
	}
	json_object_object_add(o, F_METRICS, srv_metrics_jobs_json());
	return o;
}

/* A status event when a second has passed and it changed. */
static int add_status(feed_reader *f, enpu_buf *out, int force)
{
	json_object *o;
	const char *s;
	int rc = 0;

	if (!force && srv_now() - f->status_at < (f->owed ? STATUS_OWED : STATUS_GAP))
		return 0;
	f->status_at = srv_now();
	f->owed = 0;
	o = status_json(f->ctx);
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!f->status || strcmp(f->status, s)) {
		free(f->status);
		f->status = strdup(s);
		rc = srv_sse_event(out, "status", NULL, s);
	}
	json_object_put(o);
	return rc;
}

static int add_hello(feed_reader *f, enpu_buf *out)
{
	json_object *o = json_object_new_object();
	int rc;

	json_object_object_add(o, F_NAME, json_object_new_string(f->who.name));
	json_object_object_add(o, F_ADMIN, json_object_new_boolean(f->who.admin));
	json_object_object_add(o, F_SEQ, json_object_new_int64((int64_t)f->since));
	rc = srv_sse_event(out, "hello", NULL, json_object_to_json_string_ext(o,
			   JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return rc;
}

static int feed_next(void *cls, double wait_s, enpu_buf *out)
{
	feed_reader *f = cls;
	int n, reset, i;
	char num[24];

	if (f->owed)   /* wake in time to send it */
		wait_s = fmin(wait_s, fmax(0, STATUS_OWED - (srv_now() - f->status_at)));
	n = srv_jobs_feed_next(f->ctx->jobs, &f->since, wait_s, f->ev, FEED_BATCH, &reset);
	if (n < 0)
		return -1;
	if (n > 0)
		f->owed = 1;
	if (reset) {
		snprintf(num, sizeof num, "{\"seq\":%llu}", (unsigned long long)f->since);
		if (srv_sse_event(out, "reset", NULL, num) != 0)
			return -1;
	}
	for (i = 0; i < n; i++) {
		json_object *job;
		int final, dup = 0;

		if (!srv_ident_owns(&f->who, f->ev[i].owner))
			continue;
		for (int k = i + 1; k < n && !dup; k++)   /* its later change says it all */
			dup = !strcmp(f->ev[k].id, f->ev[i].id);
		if (dup)
			continue;
		job = srv_jobs_get(f->ctx->jobs, f->ev[i].id, 0, &final);
		if (!job)
			continue;   /* forgotten since (--job-history) */
		snprintf(num, sizeof num, "%llu", (unsigned long long)f->ev[i].seq);
		if (srv_sse_event(out, "job", num, json_object_to_json_string_ext(job,
				  JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)) != 0) {
			json_object_put(job);
			return -1;
		}
		json_object_put(job);
	}
	return add_status(f, out, 0) != 0 ? -1 : 0;
}

static void feed_free(void *cls)
{
	feed_reader *f = cls;

	free(f->status);
	free(f);
}

void srv_get_events(srv_ctx *ctx, srv_req *r)
{
	const char *last = srv_req_header(r, "Last-Event-ID"), *q = srv_req_query(r, Q_SINCE);
	feed_reader *f = calloc(1, sizeof *f);
	enpu_buf first = ENPU_BUF_INIT;
	const char *from = last ? last : q;
	char *end;

	if (!f) {
		srv_reply_fail(r, ENPU_E_NOMEM, NULL, "out of memory");
		return;
	}
	f->ctx = ctx;
	f->who = *srv_req_who(r);
	f->since = srv_jobs_feed_seq(ctx->jobs);
	if (from) {
		unsigned long long s = strtoull(from, &end, 10);
		if (!*from || *end) {
			free(f);
			srv_reply_fail(r, ENPU_E_BAD_REQUEST, Q_SINCE,
				       "'%.40s' is not an event number", from);
			return;
		}
		f->since = s;   /* past the last one: feed_next says reset */
	}
	if (add_hello(f, &first) != 0 || add_status(f, &first, 1) != 0) {
		enpu_buf_free(&first);
		feed_free(f);
		srv_reply_fail(r, ENPU_E_NOMEM, NULL, "out of memory");
		return;
	}
	srv_reply_sse(r, &first, feed_next, f, feed_free, &ctx->stopping,
		      srv_now() + SRV_WAIT_MAX);
	enpu_buf_free(&first);
}

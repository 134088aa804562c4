/* metrics.c: the counters behind GET /metrics and the per-request log line.
 * One mutex guards every counter: a request or a finished job costs one
 * short lock, a scrape copies nothing (it renders under the lock). Labels
 * are indexes into fixed name tables, so series are bounded by design. */
#include <inttypes.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>
#include "srv.h"
#include "obs.h"
#include "metrics.h"
#include "routes.h"
#include "ops.h"
#include "jobs.h"
#include "cas.h"
#include "boards.h"
#include "remote.h"

#define MAX_ROUTES   64           /* distinct route patterns tracked */
#define R_UNMATCHED  MAX_ROUTES   /* no route matched (404/405) */
#define R_OTHER      (MAX_ROUTES + 1)
#define N_RSLOTS     (MAX_ROUTES + 2)
#define MAX_REQ_SERIES 1024       /* (route, method, status) triples */

static const double bucket_le[SRV_METRICS_NBUCKETS] = SRV_METRICS_BUCKETS;
static const char *const bucket_str[SRV_METRICS_NBUCKETS] = {
	"0.001", "0.005", "0.01", "0.05", "0.1", "0.5", "1", "5"};

/* Methods a route can have; anything else a client sends is "OTHER". */
static const char *const methods[] = {"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH", "OTHER"};
#define N_METHODS ((int)(sizeof methods / sizeof methods[0]))

static const char *const job_states[] = {"succeeded", "failed", "cancelled", "timed_out", "other"};
#define N_STATES ((int)(sizeof job_states / sizeof job_states[0]))
#define BK_OTHER ENPU_BACKENDS_MAX   /* a backend's slot is its registry index */
#define N_BK (ENPU_BACKENDS_MAX + 1)
/* the slots of the registry's backends, then "other" */
#define BK_SLOT_USED(i) ((i) < enpu_backend_count() || (i) == BK_OTHER)

typedef struct hist {
	uint64_t b[SRV_METRICS_NBUCKETS];   /* per bucket, not cumulative */
	uint64_t count;
	double sum;
} hist;

typedef struct req_series {
	unsigned char route, method;
	unsigned short status;
	uint64_t n;
} req_series;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static req_series reqs[MAX_REQ_SERIES];
static int n_reqs;
static uint64_t reqs_dropped;          /* past MAX_REQ_SERIES: counted here */
static hist req_dur[N_RSLOTS];
static uint64_t jobs_total[N_BK][N_STATES];
static hist job_queue[N_BK], job_run[N_BK];

static void observe(hist *h, double v)
{
	int i;
	if (!(v >= 0))       /* negative or NaN: not a time */
		return;
	for (i = 0; i < SRV_METRICS_NBUCKETS; i++)
		if (v <= bucket_le[i]) {
			h->b[i]++;
			break;
		}
	h->count++;
	h->sum += v;
}

/* The slot of a route pattern: the index of its first row in srv_routes
 * (several methods share a pattern and so a slot). */
static int route_slot(const char *route)
{
	int i;
	if (!route || !strcmp(route, "unmatched"))
		return R_UNMATCHED;
	for (i = 0; i < srv_n_routes && i < MAX_ROUTES; i++)
		if (!strcmp(srv_routes[i].pattern, route))
			return i;
	return R_OTHER;
}

static const char *slot_name(int s)
{
	return s == R_UNMATCHED ? "unmatched" : s == R_OTHER ? "other" : srv_routes[s].pattern;
}

static int method_idx(const char *m)
{
	int i;
	for (i = 0; m && i < N_METHODS - 1; i++)
		if (!strcmp(methods[i], m))
			return i;
	return N_METHODS - 1;
}

static int backend_idx(const char *b)
{
	int i;
	for (i = 0; b && i < enpu_backend_count(); i++)
		if (!strcmp(enpu_backend_name(i), b))
			return i;
	return BK_OTHER;
}

static const char *backend_label(int i)
{
	return i == BK_OTHER ? "other" : enpu_backend_name(i);
}

static int state_idx(const char *s)
{
	int i;
	for (i = 0; s && i < N_STATES - 1; i++)
		if (!strcmp(job_states[i], s))
			return i;
	return N_STATES - 1;
}

/* The request line is logged here rather than in http.c so that it carries
 * the route pattern, never the raw URL: query strings and ids stay out of
 * the log, and the line reads the same as the metrics' labels. */
void srv_metrics_request(const char *method, const char *route, unsigned status,
			 uint64_t bytes, double seconds, const char *request_id)
{
	int slot = route_slot(route), m = method_idx(method), i;

	if (status > 999)
		status = 0;
	pthread_mutex_lock(&mu);
	for (i = 0; i < n_reqs; i++)
		if (reqs[i].route == slot && reqs[i].method == m && reqs[i].status == status)
			break;
	if (i == n_reqs && n_reqs < MAX_REQ_SERIES) {
		reqs[i].route = (unsigned char)slot;
		reqs[i].method = (unsigned char)m;
		reqs[i].status = (unsigned short)status;
		reqs[i].n = 0;
		n_reqs++;
	}
	if (i < n_reqs)
		reqs[i].n++;
	else
		reqs_dropped++;
	observe(&req_dur[slot], seconds);
	pthread_mutex_unlock(&mu);

	srv_log_access(request_id && *request_id ? request_id : "-", methods[m], slot_name(slot),
		       status, bytes, seconds * 1000.0);
}

void srv_metrics_job_done(const char *backend, const char *state, double queue_s, double run_s)
{
	int b = backend_idx(backend), s = state_idx(state);

	pthread_mutex_lock(&mu);
	jobs_total[b][s]++;
	observe(&job_queue[b], queue_s);
	observe(&job_run[b], run_s);
	pthread_mutex_unlock(&mu);
}

static void obs_request(void *arg, const char *method, const char *route, unsigned status,
			uint64_t bytes, double seconds, const char *request_id)
{
	(void)arg;
	srv_metrics_request(method, route, status, bytes, seconds, request_id);
}

static void obs_job_done(void *arg, const char *backend, const char *state, double queue_s,
			 double run_s)
{
	(void)arg;
	srv_metrics_job_done(backend, state, queue_s, run_s);
}

static const srv_observer metrics_observer = {NULL, obs_request, obs_job_done};

const srv_observer *srv_metrics_observer(void)
{
	return &metrics_observer;
}

void srv_metrics_reset(void)
{
	pthread_mutex_lock(&mu);
	memset(reqs, 0, sizeof reqs);
	n_reqs = 0;
	reqs_dropped = 0;
	memset(req_dur, 0, sizeof req_dur);
	memset(jobs_total, 0, sizeof jobs_total);
	memset(job_queue, 0, sizeof job_queue);
	memset(job_run, 0, sizeof job_run);
	pthread_mutex_unlock(&mu);
}

int srv_prom_escape(enpu_buf *out, const char *s)
{
	for (; s && *s; s++) {
		const char *rep = *s == '\\' ? "\\\\" : *s == '"' ? "\\\"" : *s == '\n' ? "\\n" : NULL;
		if (rep ? enpu_buf_adds(out, rep) : enpu_buf_add(out, s, 1))
			return -1;
	}
	return 0;
}

/* ---- rendering -------------------------------------------------------------- */

typedef struct page {
	enpu_buf *b;
	int err;
} page;

static void put(page *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(page *p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (enpu_buf_vaddf(p->b, fmt, ap))
		p->err = 1;
	va_end(ap);
}

static void label(page *p, const char *s)
{
	if (srv_prom_escape(p->b, s))
		p->err = 1;
}

static void head(page *p, const char *name, const char *type, const char *help)
{
	put(p, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* name{key="val",le="..."} lines, cumulative, then _sum and _count. */
static void put_hist(page *p, const char *name, const char *key, const char *val, const hist *h)
{
	uint64_t cum = 0;
	int i;

	for (i = 0; i <= SRV_METRICS_NBUCKETS; i++) {
		cum += i < SRV_METRICS_NBUCKETS ? h->b[i] : 0;
		put(p, "%s_bucket{%s=\"", name, key);
		label(p, val);
		put(p, "\",le=\"%s\"} %" PRIu64 "\n", i < SRV_METRICS_NBUCKETS ? bucket_str[i] : "+Inf",
		    i < SRV_METRICS_NBUCKETS ? cum : h->count);
	}
	put(p, "%s_sum{%s=\"", name, key);
	label(p, val);
	put(p, "\"} %.9g\n", h->sum);
	put(p, "%s_count{%s=\"", name, key);
	label(p, val);
	put(p, "\"} %" PRIu64 "\n", h->count);
}

static void render_counters(page *p)
{
	int i, s;

	head(p, "eulernpu_http_requests_total", "counter",
	     "HTTP requests answered, by route pattern, method and status.");
	for (i = 0; i < n_reqs; i++) {
		put(p, "eulernpu_http_requests_total{route=\"");
		label(p, slot_name(reqs[i].route));
		put(p, "\",method=\"%s\",status=\"%u\"} %" PRIu64 "\n", methods[reqs[i].method],
		    reqs[i].status, reqs[i].n);
	}
	if (reqs_dropped)
		put(p, "eulernpu_http_requests_total{route=\"other\",method=\"OTHER\",status=\"0\"} %" PRIu64 "\n",
		    reqs_dropped);
	head(p, "eulernpu_http_request_duration_seconds", "histogram",
	     "Time from a request's first byte to its completion, by route pattern.");
	for (s = 0; s < N_RSLOTS; s++)
		if (req_dur[s].count && (s >= MAX_ROUTES || s < srv_n_routes))
			put_hist(p, "eulernpu_http_request_duration_seconds", "route", slot_name(s), &req_dur[s]);

	head(p, "eulernpu_jobs_total", "counter", "Jobs that reached a final state, by backend and state.");
	for (i = 0; i < N_BK; i++)
		for (s = 0; s < N_STATES && BK_SLOT_USED(i); s++) {
			/* the known pairs always (rate() needs the zero); "other" once seen */
			if ((i == BK_OTHER || s == N_STATES - 1) && !jobs_total[i][s])
				continue;
			put(p, "eulernpu_jobs_total{backend=\"%s\",state=\"%s\"} %" PRIu64 "\n",
			    backend_label(i), job_states[s], jobs_total[i][s]);
		}
	head(p, "eulernpu_job_queue_seconds", "histogram",
	     "Time jobs spent queued (created to started, or to finished if never started), by backend.");
	for (i = 0; i < N_BK; i++)
		if (BK_SLOT_USED(i) && (i != BK_OTHER || job_queue[i].count))
			put_hist(p, "eulernpu_job_queue_seconds", "backend", backend_label(i), &job_queue[i]);
	head(p, "eulernpu_job_run_seconds", "histogram", "Time jobs spent running, by backend.");
	for (i = 0; i < N_BK; i++)
		if (BK_SLOT_USED(i) && (i != BK_OTHER || job_run[i].count))
			put_hist(p, "eulernpu_job_run_seconds", "backend", backend_label(i), &job_run[i]);
}

static void boards_count(srv_boards *b, int *up, int *down, int *busy)
{
	json_object *o = srv_boards_json(b), *arr = NULL;
	size_t i, n;

	*up = *down = *busy = 0;
	if (o && json_object_object_get_ex(o, F_BOARDS, &arr) && json_object_is_type(arr, json_type_array)) {
		n = json_object_array_length(arr);
		for (i = 0; i < n; i++) {
			json_object *x = json_object_array_get_idx(arr, i), *v;
			if (json_object_object_get_ex(x, F_STATE, &v) &&
			    !strcmp(json_object_get_string(v), BOARD_UP))
				(*up)++;
			else
				(*down)++;
			if (json_object_object_get_ex(x, F_BUSY, &v) && json_object_get_boolean(v))
				(*busy)++;
		}
	}
	json_object_put(o);
}

/* Board faults per board (bad answers, results that fail the checks,
 * errors of its own): one series per configured board, so bounded. */
static void render_board_faults(page *p, srv_boards *b)
{
	json_object *o = srv_boards_json(b), *arr = NULL, *v;
	size_t i, n;

	head(p, "eulernpu_board_faults_total", "counter",
	     "Jobs a board failed as a board fault (its answer refused), by board.");
	if (o && json_object_object_get_ex(o, F_BOARDS, &arr) && json_object_is_type(arr, json_type_array)) {
		n = json_object_array_length(arr);
		for (i = 0; i < n; i++) {
			json_object *x = json_object_array_get_idx(arr, i);
			put(p, "eulernpu_board_faults_total{board=\"");
			label(p, json_object_get_string(json_object_object_get(x, F_NAME)));
			put(p, "\"} %" PRId64 "\n", json_object_object_get_ex(x, F_FAULTS, &v)
			    ? json_object_get_int64(v) : 0);
		}
	}
	json_object_put(o);
}

/* The remote cache tier (remote.h), when there is one. */
static void render_remote(page *p, srv_ctx *ctx)
{
	srv_remote_stats s;

	if (!ctx || !ctx->remote)
		return;
	srv_remote_stats_get(ctx->remote, &s);
	head(p, "eulernpu_remote_cache_degraded", "gauge",
	     "1 while the remote cache is failing (compiles are local only).");
	put(p, "eulernpu_remote_cache_degraded %d\n", s.degraded);
	head(p, "eulernpu_remote_cache_lookups_total", "counter",
	     "Local misses asked of the remote cache, by result.");
	put(p, "eulernpu_remote_cache_lookups_total{result=\"hit\"} %" PRIu64 "\n", s.hits);
	put(p, "eulernpu_remote_cache_lookups_total{result=\"miss\"} %" PRIu64 "\n", s.misses);
	head(p, "eulernpu_remote_cache_untrusted_total", "counter",
	     "Remote entries ignored: no trusted signature, or naming other inputs.");
	put(p, "eulernpu_remote_cache_untrusted_total %" PRIu64 "\n", s.untrusted);
	head(p, "eulernpu_remote_cache_errors_total", "counter", "Failed calls to the remote cache.");
	put(p, "eulernpu_remote_cache_errors_total %" PRIu64 "\n", s.errors);
	head(p, "eulernpu_remote_cache_bytes_total", "counter", "Bytes from and to the remote cache.");
	put(p, "eulernpu_remote_cache_bytes_total{direction=\"in\"} %" PRIu64 "\n", s.bytes_in);
	put(p, "eulernpu_remote_cache_bytes_total{direction=\"out\"} %" PRIu64 "\n", s.bytes_out);
	head(p, "eulernpu_remote_cache_uploads_total", "counter",
	     "Compiles uploaded to the remote cache, by result.");
	put(p, "eulernpu_remote_cache_uploads_total{result=\"done\"} %" PRIu64 "\n", s.uploads);
	put(p, "eulernpu_remote_cache_uploads_total{result=\"dropped\"} %" PRIu64 "\n", s.dropped);
	head(p, "eulernpu_remote_cache_queue", "gauge", "Compiles waiting for upload.");
	put(p, "eulernpu_remote_cache_queue %d\n", s.queued);
}

static void render_gauges(page *p, srv_ctx *ctx)
{
	int q = 0, run = 0, w = 0, up, down, busy;
	srv_cache_stats cs;

	memset(&cs, 0, sizeof cs);
	if (ctx && ctx->jobs)
		srv_jobs_stats(ctx->jobs, &q, &run, &w);
	if (ctx && ctx->cas)
		srv_cas_stats(ctx->cas, &cs);
	boards_count(ctx ? ctx->boards : NULL, &up, &down, &busy);

	head(p, "eulernpu_queue_depth", "gauge", "Jobs waiting in the queue.");
	put(p, "eulernpu_queue_depth %d\n", q);
	head(p, "eulernpu_jobs_running", "gauge", "Jobs running now.");
	put(p, "eulernpu_jobs_running %d\n", run);
	head(p, "eulernpu_workers", "gauge", "Job worker threads.");
	put(p, "eulernpu_workers %d\n", w);
	head(p, "eulernpu_http_active", "gauge", "HTTP requests in flight.");
	put(p, "eulernpu_http_active %d\n", srv_http_active());

	head(p, "eulernpu_cache_bytes", "gauge", "Bytes of blobs in the cache (what --cache-max bounds).");
	put(p, "eulernpu_cache_bytes %" PRIu64 "\n", cs.blob_bytes);
	head(p, "eulernpu_cache_entries", "gauge", "Cache entries by kind.");
	put(p, "eulernpu_cache_entries{kind=\"blob\"} %" PRIu64 "\n", cs.blobs);
	put(p, "eulernpu_cache_entries{kind=\"artifact\"} %" PRIu64 "\n", cs.artifacts);
	put(p, "eulernpu_cache_entries{kind=\"action\"} %" PRIu64 "\n", cs.ac_entries);
	head(p, "eulernpu_cache_hits_total", "counter",
	     "Lookups that hit: ac = compile action cache, cas = blobs asked for.");
	put(p, "eulernpu_cache_hits_total{cache=\"ac\"} %" PRIu64 "\n", cs.ac_hits);
	put(p, "eulernpu_cache_hits_total{cache=\"cas\"} %" PRIu64 "\n", cs.cas_hits);
	head(p, "eulernpu_cache_misses_total", "counter", "Lookups that missed, as the hits.");
	put(p, "eulernpu_cache_misses_total{cache=\"ac\"} %" PRIu64 "\n", cs.ac_misses);
	put(p, "eulernpu_cache_misses_total{cache=\"cas\"} %" PRIu64 "\n", cs.cas_misses);
	head(p, "eulernpu_cache_evictions_total", "counter", "Blobs evicted (--cache-max, gc).");
	put(p, "eulernpu_cache_evictions_total %" PRIu64 "\n", cs.evictions);
	head(p, "eulernpu_cache_evicted_bytes_total", "counter", "Bytes of the blobs evicted.");
	put(p, "eulernpu_cache_evicted_bytes_total %" PRIu64 "\n", cs.evicted_bytes);
	head(p, "eulernpu_cache_integrity_failures_total", "counter",
	     "Blobs or artifacts dropped because their digest was wrong.");
	put(p, "eulernpu_cache_integrity_failures_total %" PRIu64 "\n", cs.integrity_failures);

	head(p, "eulernpu_boards", "gauge", "Board agents by state.");
	put(p, "eulernpu_boards{state=\"up\"} %d\n", up);
	put(p, "eulernpu_boards{state=\"down\"} %d\n", down);
	head(p, "eulernpu_boards_busy", "gauge", "Board agents running a job now.");
	put(p, "eulernpu_boards_busy %d\n", busy);
	render_board_faults(p, ctx ? ctx->boards : NULL);
	render_remote(p, ctx);

	head(p, "eulernpu_build_info", "gauge", "The daemon's version (always 1).");
	put(p, "eulernpu_build_info{version=\"");
	label(p, ENPU_VERSION);
	put(p, "\"} 1\n");
	if (ctx && ctx->cfg.node_id) {   /* which node answered, through a balancer */
		head(p, "eulernpu_node_info", "gauge", "The daemon's --node-id (always 1).");
		put(p, "eulernpu_node_info{node=\"");
		label(p, ctx->cfg.node_id);
		put(p, "\"} 1\n");
	}
}

int srv_metrics_render(srv_ctx *ctx, enpu_buf *out)
{
	page p = {out, 0};

	/* gauges first, outside the lock: they take the jobs', cache's and
	 * boards' own locks */
	render_gauges(&p, ctx);
	pthread_mutex_lock(&mu);
	render_counters(&p);
	pthread_mutex_unlock(&mu);
	return p.err ? -1 : 0;
}

/* ---- the status event's figures (GET /v1/events) ---------------------------- */

static json_object *hist_json(const hist *h)
{
	json_object *o = json_object_new_object(), *b = json_object_new_array();

	for (int i = 0; i < SRV_METRICS_NBUCKETS; i++)
		json_object_array_add(b, json_object_new_int64((int64_t)h->b[i]));
	json_object_object_add(o, F_BUCKETS, b);
	json_object_object_add(o, F_COUNT, json_object_new_int64((int64_t)h->count));
	json_object_object_add(o, F_SUM, srv_json_double(h->sum));
	return o;
}

static void hist_add(hist *to, const hist *h)
{
	for (int k = 0; k < SRV_METRICS_NBUCKETS; k++)
		to->b[k] += h->b[k];
	to->count += h->count;
	to->sum += h->sum;
}

json_object *srv_metrics_jobs_json(void)
{
	json_object *o = json_object_new_object(), *done = json_object_new_object(),
		    *le = json_object_new_array();
	hist q, r;

	memset(&q, 0, sizeof q);
	memset(&r, 0, sizeof r);
	for (int i = 0; i < SRV_METRICS_NBUCKETS; i++)
		json_object_array_add(le, srv_json_double(bucket_le[i]));
	pthread_mutex_lock(&mu);
	for (int s = 0; s < N_STATES; s++) {
		uint64_t n = 0;
		for (int i = 0; i < N_BK; i++)
			n += jobs_total[i][s];
		json_object_object_add(done, job_states[s], json_object_new_int64((int64_t)n));
	}
	for (int i = 0; i < N_BK; i++) {
		hist_add(&q, &job_queue[i]);
		hist_add(&r, &job_run[i]);
	}
	pthread_mutex_unlock(&mu);
	json_object_object_add(o, F_DONE, done);
	json_object_object_add(o, F_LE, le);
	json_object_object_add(o, F_QUEUE_S, hist_json(&q));
	json_object_object_add(o, F_RUN_S, hist_json(&r));
	return o;
}

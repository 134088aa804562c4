/* test_srv_metrics.c: server/metrics.c without a daemon: label escaping,
 * bounded labels (a raw path or an odd method never becomes a series),
 * cumulative histograms, job counters by backend and final state, and the
 * log level (log.c). */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>
#include "metrics.h"
#include "obs.h"

static char *render(void)
{
	enpu_buf b = ENPU_BUF_INIT;
	cr_assert_eq(srv_metrics_render(NULL, &b), 0);
	return b.data;
}

static int has_line(const char *page, const char *line)
{
	size_t n = strlen(line);
	const char *p = page;
	while ((p = strstr(p, line)) != NULL) {
		if ((p == page || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0'))
			return 1;
		p += n;
	}
	return 0;
}

Test(metrics, escapes_label_values)
{
	enpu_buf b = ENPU_BUF_INIT;
	cr_assert_eq(srv_prom_escape(&b, "a\\b\"c\nd"), 0);
	cr_assert_str_eq(b.data, "a\\\\b\\\"c\\nd");
	enpu_buf_free(&b);
}

Test(metrics, requests_by_route_pattern_method_status)
{
	char *page;
	srv_metrics_reset();
	srv_metrics_request("GET", "/v1/health", 200, 10, 0.0005, "00000000000000aa");
	srv_metrics_request("GET", "/v1/health", 200, 10, 0.002, "00000000000000ab");
	srv_metrics_request("GET", "/v1/jobs/*", 404, 10, 0.2, "00000000000000ac");
	srv_metrics_request("BREW", "/v1/jobs/0123abcd/raw", 404, 1, 7.0, "00000000000000ad");
	srv_metrics_request("GET", "unmatched", 404, 1, 0.0, NULL);
	page = render();
	cr_assert(has_line(page, "eulernpu_http_requests_total{route=\"/v1/health\",method=\"GET\",status=\"200\"} 2"), "%s", page);
	cr_assert(has_line(page, "eulernpu_http_requests_total{route=\"/v1/jobs/*\",method=\"GET\",status=\"404\"} 1"));
	cr_assert(has_line(page, "eulernpu_http_requests_total{route=\"other\",method=\"OTHER\",status=\"404\"} 1"),
		  "a path that is no route pattern and an unknown method are bounded");
	cr_assert(has_line(page, "eulernpu_http_requests_total{route=\"unmatched\",method=\"GET\",status=\"404\"} 1"));
	cr_assert_null(strstr(page, "0123abcd"));
	cr_assert_null(strstr(page, "BREW"));
	/* cumulative buckets: 0.0005 <= .001; 0.002 <= .005 */
	cr_assert(has_line(page, "eulernpu_http_request_duration_seconds_bucket{route=\"/v1/health\",le=\"0.001\"} 1"));
	cr_assert(has_line(page, "eulernpu_http_request_duration_seconds_bucket{route=\"/v1/health\",le=\"0.005\"} 2"));
	cr_assert(has_line(page, "eulernpu_http_request_duration_seconds_bucket{route=\"/v1/health\",le=\"+Inf\"} 2"));
	cr_assert(has_line(page, "eulernpu_http_request_duration_seconds_count{route=\"/v1/health\"} 2"));
	/* 7 s is past the last bucket: only +Inf has it */
	cr_assert(has_line(page, "eulernpu_http_request_duration_seconds_bucket{route=\"other\",le=\"5\"} 0"));
	cr_assert(has_line(page, "eulernpu_http_request_duration_seconds_bucket{route=\"other\",le=\"+Inf\"} 1"));
	free(page);
}

Test(metrics, jobs_by_backend_and_state)
{
	char *page;
	srv_metrics_reset();
	srv_metrics_job_done("cpu_ref", "succeeded", 0.01, 0.3);
	srv_metrics_job_done("cpu_ref", "cancelled", 2.0, -1);     /* never ran */
	srv_metrics_job_done("npu_sim", "timed_out", 0.0, 9.0);
	srv_metrics_job_done("warp_drive", "exploded", 0.0, 0.0);
	page = render();
	cr_assert(has_line(page, "eulernpu_jobs_total{backend=\"cpu_ref\",state=\"succeeded\"} 1"), "%s", page);
	cr_assert(has_line(page, "eulernpu_jobs_total{backend=\"cpu_ref\",state=\"cancelled\"} 1"));
	cr_assert(has_line(page, "eulernpu_jobs_total{backend=\"cpu_ref\",state=\"failed\"} 0"),
		  "known pairs are there at zero");
	cr_assert(has_line(page, "eulernpu_jobs_total{backend=\"npu_sim\",state=\"timed_out\"} 1"));
	cr_assert(has_line(page, "eulernpu_jobs_total{backend=\"other\",state=\"other\"} 1"));
	cr_assert_null(strstr(page, "warp_drive"));
	/* the registry's backends and "other": no slot beyond them shows */
	cr_assert_null(strstr(page, "backend=\"unknown\""), "%s", page);
	cr_assert(has_line(page, "eulernpu_job_queue_seconds_count{backend=\"cpu_ref\"} 2"));
	cr_assert(has_line(page, "eulernpu_job_run_seconds_count{backend=\"cpu_ref\"} 1"),
		  "a job that never ran has no run time");
	cr_assert(has_line(page, "eulernpu_job_run_seconds_bucket{backend=\"cpu_ref\",le=\"0.5\"} 1"));
	cr_assert(has_line(page, "eulernpu_job_run_seconds_bucket{backend=\"cpu_ref\",le=\"0.1\"} 0"));
	cr_assert(has_line(page, "eulernpu_job_run_seconds_sum{backend=\"cpu_ref\"} 0.3"));
	free(page);
}

/* The status event's figures: the same counters, summed over backends,
 * histograms per bucket (not cumulative), in the JSON a page reads. */
Test(metrics, job_figures_for_the_status_event)
{
	json_object *o, *v;
	srv_metrics_reset();
	srv_metrics_job_done("cpu_ref", "succeeded", 0.002, 0.3);
	srv_metrics_job_done("npu_sim", "succeeded", 0.0005, 0.0004);
	srv_metrics_job_done("cpu_ref", "cancelled", 2.0, -1);     /* never ran */
	srv_metrics_job_done("warp_drive", "exploded", 0.0, 7.0);  /* "other", past the last bound */
	o = srv_metrics_jobs_json();
	cr_assert_not_null(o);
	cr_assert(json_object_object_get_ex(o, "done", &v));
	cr_expect_eq(json_object_get_int(json_object_object_get(v, "succeeded")), 2, "%s",
		     json_object_to_json_string(o));
	cr_expect_eq(json_object_get_int(json_object_object_get(v, "cancelled")), 1);
	cr_expect_eq(json_object_get_int(json_object_object_get(v, "failed")), 0);
	cr_expect_eq(json_object_get_int(json_object_object_get(v, "other")), 1);
	cr_assert(json_object_object_get_ex(o, "le", &v));
	cr_expect_eq(json_object_array_length(v), SRV_METRICS_NBUCKETS);
	cr_expect_float_eq(json_object_get_double(json_object_array_get_idx(v, 0)), 0.001, 1e-12);
	cr_assert(json_object_object_get_ex(o, "run_s", &v));
	cr_expect_eq(json_object_get_int(json_object_object_get(v, "count")), 3, "%s",
		     json_object_to_json_string(v));
	cr_expect_float_eq(json_object_get_double(json_object_object_get(v, "sum")), 7.3004, 1e-9);
	json_object *b = json_object_object_get(v, "buckets");
	cr_assert_eq(json_object_array_length(b), SRV_METRICS_NBUCKETS);
	/* 0.0004 in le=0.001 (index 0), 0.3 in le=0.5 (index 5), 7.0 past 5 s: in none */
	int want[SRV_METRICS_NBUCKETS] = {1, 0, 0, 0, 0, 1, 0, 0};
	for (int i = 0; i < SRV_METRICS_NBUCKETS; i++)
		cr_expect_eq(json_object_get_int(json_object_array_get_idx(b, i)), want[i],
			     "bucket %d of %s", i, json_object_to_json_string(b));
	cr_assert(json_object_object_get_ex(o, "queue_s", &v));
	cr_expect_eq(json_object_get_int(json_object_object_get(v, "count")), 4);
	b = json_object_object_get(v, "buckets");
	cr_expect_eq(json_object_get_int(json_object_array_get_idx(b, 0)), 2, "0.0 and 0.0005");
	cr_expect_eq(json_object_get_int(json_object_array_get_idx(b, 1)), 1, "0.002");
	json_object_put(o);
}

Test(metrics, gauges_without_a_daemon_are_zero)
{
	char *page = render();
	cr_assert(has_line(page, "# TYPE eulernpu_queue_depth gauge"));
	cr_assert(has_line(page, "eulernpu_queue_depth 0"));
	cr_assert(has_line(page, "eulernpu_boards{state=\"up\"} 0"));
	cr_assert(has_line(page, "eulernpu_cache_hits_total{cache=\"ac\"} 0"));
	cr_assert(has_line(page, "eulernpu_build_info{version=\"" ENPU_VERSION "\"} 1"));
	free(page);
}

Test(metrics, series_stay_bounded)
{
	char *page, status_path[64];
	int i, lines = 0;
	const char *p;

	srv_metrics_reset();
	for (i = 0; i < 5000; i++) {
		snprintf(status_path, sizeof status_path, "/v1/jobs/%d", i);
		srv_metrics_request(i % 2 ? "GET" : "X", status_path, (unsigned)(100 + i % 900), 0, 0, NULL);
	}
	page = render();
	for (p = page; (p = strstr(p, "eulernpu_http_requests_total{")) != NULL; p++)
		lines++;
	cr_assert_leq(lines, 1025, "%d request series", lines);
	free(page);
}

Test(log, levels)
{
	cr_assert_eq(srv_log_set_level("debug"), 0);
	cr_assert(srv_log_enabled("debug"));
	cr_assert_eq(srv_log_set_level("warn"), 0);
	cr_assert(!srv_log_enabled("info"));
	cr_assert(srv_log_enabled("error"));
	cr_assert_eq(srv_log_set_level("loud"), -1);
	cr_assert(!srv_log_enabled("info"), "an unknown name keeps the level");
	cr_assert_eq(srv_log_set_level("info"), 0);
}

Test(log, logfmt_lines_and_tokens_masked)
{
	char path[] = "/tmp/enpu-log-XXXXXX", text[1024];
	int fd = mkstemp(path);
	FILE *f;
	size_t n;

	cr_assert(fd >= 0);
	close(fd);
	cr_assert_eq(srv_log_open(path), 0);
	srv_log("warn", "auth header 'Authorization: Bearer s3cret-tok' and bearer ab\nsecond");
	srv_log("debug", "dropped at the default level");
	srv_log_close();
	f = fopen(path, "r");
	cr_assert(f);
	n = fread(text, 1, sizeof text - 1, f);
	text[n] = '\0';
	fclose(f);
	unlink(path);
	cr_assert_null(strstr(text, "s3cret-tok"), "%s", text);
	cr_assert_not_null(strstr(text, "Bearer ***"), "%s", text);
	cr_assert_not_null(strstr(text, "bearer ** second"), "%s", text);
	cr_assert_not_null(strstr(text, " level=warn auth header"), "%s", text);
	cr_assert_eq(strncmp(text, "ts=", 3), 0);
	cr_assert_null(strstr(text, "dropped"));
	cr_assert_eq(strchr(text, '\n'), text + n - 1, "one line: %s", text);
}

/* Lines from many threads, through the writer thread's batches: an error
 * line is in the file when srv_log returns; at close every line is there,
 * whole, each thread's in its order. */
#define LOG_THREADS 4
#define LOG_LINES 5000

static void *log_many(void *arg)
{
	long t = (long)arg;

	for (int i = 0; i < LOG_LINES; i++)
		srv_log("info", "thread=%ld line=%d pad=%0200d", t, i, 0);
	return NULL;
}

static char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "r");
	char *b;

	cr_assert(f);
	fseek(f, 0, SEEK_END);
	*n = (size_t)ftell(f);
	rewind(f);
	b = malloc(*n + 1);
	cr_assert(b);
	cr_assert_eq(fread(b, 1, *n, f), *n);
	b[*n] = '\0';
	fclose(f);
	return b;
}

/* The access line and a job's success line, formatted without printf, are
 * the lines srv_log's printf form gives for the same fields (the timestamp aside): the rounding of ms
 * to a tenth, large counts, an id that is not the daemon's own (scrubbed
 * through srv_log), and nothing at a level above info. */
Test(log, access_line_as_printf_gives_it)
{
	static const struct { const char *rid; unsigned status; uint64_t bytes; double ms; } c[] = {
		{"0123456789abcdef", 200, 658, 0.04}, {"-", 404, 0, 0.05}, {"fedcba9876543210", 503, 123456789012ULL, 12.34},
		{"00000000000000ff", 999, UINT64_MAX, 1234567.96}, {"a", 0, 1, 0.0},
		{"Bearer s3cret-tok", 200, 1, 2.5},
	};
	char path[] = "/tmp/enpu-log-XXXXXX";
	int fd = mkstemp(path);
	size_t n, i = 0;
	char *text, *p, *save = NULL;

	cr_assert(fd >= 0);
	close(fd);
	cr_assert_eq(srv_log_open(path), 0);
	for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
		srv_log_access(c[k].rid, "POST", "/v1/jobs", c[k].status, c[k].bytes, c[k].ms);
		srv_log("info", "req=%s method=%s route=%s status=%u bytes=%" PRIu64 " ms=%.1f",
			c[k].rid, "POST", "/v1/jobs", c[k].status, c[k].bytes, c[k].ms);
	}
	srv_log_job_done("0123456789abcdef", "e65d08f6ef01908b0f2c6ebed6f640656cf79ba6460392e15f4caf0ca0edc314", 0.0123);
	srv_log("info", "job=%s artifact=%.12s succeeded in %.3fs", "0123456789abcdef",
		"e65d08f6ef01908b0f2c6ebed6f640656cf79ba6460392e15f4caf0ca0edc314", 0.0123);
	srv_log_job_done("n1-0123456789abcdef", "e65d08f6ef01", 12345.6789);
	srv_log("info", "job=%s artifact=%.12s succeeded in %.3fs", "n1-0123456789abcdef",
		"e65d08f6ef01", 12345.6789);
	cr_assert_eq(srv_log_set_level("warn"), 0);
	srv_log_access("0123456789abcdef", "GET", "/v1/health", 200, 1, 1.0);
	srv_log_job_done("0123456789abcdef", "e65d08f6ef01", 1.0);
	cr_assert_eq(srv_log_set_level("info"), 0);
	srv_log_close();
	text = slurp(path, &n);
	unlink(path);
	cr_assert_null(strstr(text, "s3cret-tok"), "%s", text);
	for (p = strtok_r(text, "\n", &save); p; p = strtok_r(NULL, "\n", &save), i++) {
		char *q = strtok_r(NULL, "\n", &save);
		cr_assert_not_null(q, "line %zu has no twin", i);
		cr_assert_eq(strncmp(p, "ts=", 3), 0);
		cr_assert_eq(strlen(p), strlen(q), "%s\n%s", p, q);
		cr_assert_str_eq(strstr(p, " level="), strstr(q, " level="), "case %zu", i);
	}
	cr_assert_eq(i, sizeof c / sizeof c[0] + 2, "%s", text);
	free(text);
}

Test(log, batched_lines_from_many_threads_all_arrive_whole_and_errors_at_once)
{
	char path[] = "/tmp/enpu-log-XXXXXX";
	int fd = mkstemp(path), next[LOG_THREADS] = {0}, lines = 0;
	pthread_t th[LOG_THREADS];
	size_t n;
	char *text, *p, *save = NULL;

	cr_assert(fd >= 0);
	close(fd);
	cr_assert_eq(srv_log_open(path), 0);
	for (long t = 0; t < LOG_THREADS; t++)
		cr_assert_eq(pthread_create(&th[t], NULL, log_many, (void *)t), 0);
	for (int t = 0; t < LOG_THREADS; t++)
		pthread_join(th[t], NULL);
	srv_log("error", "the last word");
	text = slurp(path, &n);   /* before the close: the error line is there */
	cr_expect_not_null(strstr(text, " level=error the last word\n"));
	free(text);
	srv_log_close();
	text = slurp(path, &n);
	unlink(path);
	for (p = strtok_r(text, "\n", &save); p; p = strtok_r(NULL, "\n", &save)) {
		int t, i;
		const char *q = strstr(p, "thread=");
		lines++;
		if (!q)
			continue;
		cr_assert_eq(sscanf(q, "thread=%d line=%d", &t, &i), 2, "%s", p);
		cr_assert(t >= 0 && t < LOG_THREADS);
		cr_assert_eq(i, next[t], "thread %d: line %d after %d", t, i, next[t] - 1);
		cr_assert_eq(strlen(strstr(p, "pad=")), 204, "a whole line: %s", p);
		next[t]++;
	}
	for (int t = 0; t < LOG_THREADS; t++)
		cr_expect_eq(next[t], LOG_LINES);
	cr_expect_eq(lines, LOG_THREADS * LOG_LINES + 1);
	free(text);
}

/* The API's and the log's time text: UTC to the millisecond, each second's
 * text kept per thread (the same second with other milliseconds, then
 * another second), cut to cap as snprintf cuts. */
Test(log, time_text)
{
	static const struct { time_t s; long ns; const char *want; } c[] = {
		{0, 0, "1970-01-01T00:00:00.000Z"},
		{1796402502, 999999999, "2026-12-04T16:41:42.999Z"},
		{1796402502, 1000000, "2026-12-04T16:41:42.001Z"},
		{1796402503, 120000000, "2026-12-04T16:41:43.120Z"},
		{951782400, 500000000, "2000-02-29T00:00:00.500Z"},
	};
	char b[48];

	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		struct timespec t = {c[i].s, c[i].ns};
		srv_time_str(&t, b, sizeof b);
		cr_assert_str_eq(b, c[i].want, "case %zu", i);
	}
	srv_time_str(&(struct timespec){0, 0}, b, 11);
	cr_assert_str_eq(b, "1970-01-01");
}

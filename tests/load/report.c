/* report.c: the load generator's summary (tests/load/loadgen.h): the
 * clients' counts and latencies merged per request kind, printed as a
 * table on stdout (requests, ok, 429, recovered, failed, p50/p90/p99/max,
 * throughput) and, with --json FILE, written there as JSON. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "loadgen.h"

static const char *const kind_names[K_N] = {
	"put_blob", "head_blob", "compile", "job", "job_poll", "result", "cache",
};

/* The totals of all kinds: requests, ok, 429, recovered, failed. */
enum { T_REQ, T_OK, T_429, T_RECOVERED, T_FAIL, T_N };

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Nearest rank over sorted samples. */
static double pct(const double *s, size_t n, double q)
{
	size_t r;

	if (!n)
		return 0;
	r = (size_t)ceil(q * (double)n);
	return s[r ? r - 1 : 0];
}

/* Every client's counts and latencies into all[]; the iterations. */
static long merge(const client *cs, kstat all[K_N])
{
	long iters = 0;

	memset(all, 0, K_N * sizeof *all);
	for (int i = 0; i < opt.clients; i++) {
		iters += cs[i].iters;
		for (int k = 0; k < K_N; k++) {
			kstat *a = &all[k];
			const kstat *b = &cs[i].ks[k];
			double *nl;

			a->req += b->req;
			a->ok += b->ok;
			a->q429 += b->q429;
			a->recovered += b->recovered;
			a->fail += b->fail;
			if (!b->n)
				continue;
			if (!(nl = realloc(a->lat, (a->n + b->n) * sizeof *nl)))
				continue;
			a->lat = nl;
			memcpy(a->lat + a->n, b->lat, b->n * sizeof *nl);
			a->n += b->n;
		}
	}
	return iters;
}

/* Kind k's row of the table, and its object in kinds. */
static void kind_row(int k, kstat *a, json_object *kinds)
{
	json_object *j;
	double p50, p90, p99, mx;

	qsort(a->lat, a->n, sizeof *a->lat, cmp_double);
	p50 = pct(a->lat, a->n, 0.50);
	p90 = pct(a->lat, a->n, 0.90);
	p99 = pct(a->lat, a->n, 0.99);
	mx = a->n ? a->lat[a->n - 1] : 0;
	printf("%-10s %9ld %9ld %7ld %9ld %7ld %9.2f %9.2f %9.2f %9.2f\n", kind_names[k],
	       a->req, a->ok, a->q429, a->recovered, a->fail, p50, p90, p99, mx);
	j = json_object_new_object();
	json_object_object_add(j, "requests", json_object_new_int64(a->req));
	json_object_object_add(j, "ok", json_object_new_int64(a->ok));
	json_object_object_add(j, "http_429", json_object_new_int64(a->q429));
	json_object_object_add(j, "recovered", json_object_new_int64(a->recovered));
	json_object_object_add(j, "failures", json_object_new_int64(a->fail));
	json_object_object_add(j, "p50_ms", json_object_new_double(p50));
	json_object_object_add(j, "p90_ms", json_object_new_double(p90));
	json_object_object_add(j, "p99_ms", json_object_new_double(p99));
	json_object_object_add(j, "max_ms", json_object_new_double(mx));
	json_object_object_add(kinds, kind_names[k], j);
}

/* The lines under the table: totals, throughput, RSS, evictions or the
 * result digest. */
static void print_totals(const long tot[T_N], long iters, double secs, long rss_warm,
			 long rss_end, long evicted)
{
	printf("%-10s %9ld %9ld %7ld %9ld %7ld\n", "total", tot[T_REQ], tot[T_OK], tot[T_429],
	       tot[T_RECOVERED], tot[T_FAIL]);
	printf("throughput: %.1f requests/s, %.1f iterations/s (%ld iterations)\n",
	       secs > 0 ? (double)tot[T_REQ] / secs : 0, secs > 0 ? (double)iters / secs : 0, iters);
	if (opt.daemon_pid)
		printf("daemon RSS: %ld KiB after the warm-up, %ld KiB at the end\n", rss_warm, rss_end);
	if (opt.mix)
		printf("cache evictions: %ld\n", evicted);
	else
		printf("result digest: %s (every result byte-equal to it)\n", run_ref);
}

/* The whole run as one JSON object (kinds goes into it). */
static json_object *run_json(const long tot[T_N], long iters, double secs, long rss_warm,
			     long rss_end, long evicted, json_object *kinds)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "scenario", json_object_new_string(opt.scenario));
	json_object_object_add(o, "clients", json_object_new_int(opt.clients));
	json_object_object_add(o, "seconds", json_object_new_double(secs));
	json_object_object_add(o, "requests", json_object_new_int64(tot[T_REQ]));
	json_object_object_add(o, "ok", json_object_new_int64(tot[T_OK]));
	json_object_object_add(o, "http_429", json_object_new_int64(tot[T_429]));
	json_object_object_add(o, "recovered", json_object_new_int64(tot[T_RECOVERED]));
	json_object_object_add(o, "failures", json_object_new_int64(tot[T_FAIL]));
	json_object_object_add(o, "iterations", json_object_new_int64(iters));
	json_object_object_add(o, "requests_per_s",
			       json_object_new_double(secs > 0 ? (double)tot[T_REQ] / secs : 0));
	json_object_object_add(o, "iterations_per_s",
			       json_object_new_double(secs > 0 ? (double)iters / secs : 0));
	json_object_object_add(o, "rss_warm_kib", json_object_new_int64(rss_warm));
	json_object_object_add(o, "rss_end_kib", json_object_new_int64(rss_end));
	json_object_object_add(o, "evictions", json_object_new_int64(evicted));
	if (!opt.mix)
		json_object_object_add(o, "result_digest", json_object_new_string(run_ref));
	json_object_object_add(o, "kinds", kinds);
	return o;
}

/* The summary table on stdout and, with --json, the same as JSON. -1 when
 * a request failed or the JSON could not be written. */
int report(client *cs, double secs, long rss_warm, long rss_end, long evicted)
{
	kstat all[K_N];
	long tot[T_N] = {0}, iters = merge(cs, all);
	json_object *o, *kinds = json_object_new_object();
	int ret = 0;

	printf("loadgen: scenario %s, %d clients, %.1f s measured%s\n", opt.scenario, opt.clients,
	       secs, opt.warmup > 0 || opt.warmup_iters > 0 ? " after the warm-up" : "");
	printf("%-10s %9s %9s %7s %9s %7s %9s %9s %9s %9s\n", "kind", "requests", "ok", "429",
	       "recovered", "failed", "p50 ms", "p90 ms", "p99 ms", "max ms");
	for (int k = 0; k < K_N; k++) {
		tot[T_REQ] += all[k].req;
		tot[T_OK] += all[k].ok;
		tot[T_429] += all[k].q429;
		tot[T_RECOVERED] += all[k].recovered;
		tot[T_FAIL] += all[k].fail;
		if (all[k].req)
			kind_row(k, &all[k], kinds);
	}
	print_totals(tot, iters, secs, rss_warm, rss_end, evicted);
	o = run_json(tot, iters, secs, rss_warm, rss_end, evicted, kinds);
	if (opt.json && json_object_to_file_ext(opt.json, o, JSON_C_TO_STRING_PRETTY) != 0) {
		fprintf(stderr, "loadgen: cannot write %s\n", opt.json);
		ret = -1;
	}
	json_object_put(o);
	for (int k = 0; k < K_N; k++)
		free(all[k].lat);
	return tot[T_FAIL] ? -1 : ret;
}

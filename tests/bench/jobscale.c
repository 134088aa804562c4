/* jobscale.c: how the job table's costs grow with its state (issue 14,
 * parts 5 and 7), run by tests/bench/jobscale.sh in `make stress`. A
 * benchmark: it prints what it measured and asserts nothing about speed
 * (exit 1 only when the daemon does not answer as documented).
 *
 * Against a daemon started with --workers 1, the EULERNPUD_HOLD gate
 * (server/fault.h) present and a large --max-queue, so that one job is
 * held running and the rest stay queued:
 *   1. the queue is filled to each size (default 100, 1000, 10000, 30000)
 *      and, at each, the median over --reps of: POST /v1/jobs of one more
 *      job, GET /v1/jobs?limit=50, GET /v1/health, DELETE of a job from
 *      the middle of the queue, GET /metrics; then GET /v1/jobs?limit=10000
 *      once, with health probed from another connection meanwhile (its
 *      worst time);
 *      and the daemon's RSS (--pid);
 *   2. (--hold FILE) the gate is opened, every job runs to its end, and
 *      the RSS per finished job is printed;
 *   3. (--expire-socket, --expire-pid) a second such daemon gets --expire
 *      jobs with a timeout longer than their submission takes, is stopped
 *      (SIGSTOP) until all their deadlines have passed and continued: all
 *      expire at once, and health is probed until the queue is empty.
 *
 *   jobscale --socket S --artifact ID --input DIGEST [--pid P] [--hold F]
 *            [--sizes 100,1000,10000,30000] [--reps 5]
 *            [--expire-socket S2 --expire-pid P2 [--expire N]]
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <curl/curl.h>
#include <json-c/json.h>
#include "clock.h"

#define MAX_SIZES 8

typedef struct conn {
	CURL *h;
	char *body;
	size_t len, cap;
	long status;
	const char *sock;
} conn;

static struct {
	const char *sock, *art, *input, *hold, *xsock;
	long pid, xpid;
	int sizes[MAX_SIZES], n_sizes, reps, expire;
} opt = {NULL, NULL, NULL, NULL, NULL, 0, 0, {100, 1000, 10000, 30000}, 4, 5, 30000};

static size_t on_data(char *p, size_t sz, size_t n, void *arg)
{
	conn *c = arg;
	size_t k = sz * n;

	if (c->len + k + 1 > c->cap) {
		size_t ncap = (c->len + k + 1) * 2;
		char *nb = realloc(c->body, ncap);
		if (!nb)
			return 0;
		c->body = nb;
		c->cap = ncap;
	}
	memcpy(c->body + c->len, p, k);
	c->len += k;
	c->body[c->len] = '\0';
	return k;
}

static void conn_open(conn *c, const char *sock)
{
	memset(c, 0, sizeof *c);
	c->sock = sock;
	c->h = curl_easy_init();
	if (!c->h) {
		fprintf(stderr, "jobscale: curl_easy_init failed\n");
		exit(2);
	}
}

/* One exchange: the seconds it took; c->status (0 = no answer) and
 * c->body hold the answer. */
static double http(conn *c, const char *method, const char *path, const char *json)
{
	struct curl_slist *hd = NULL;
	char url[512];
	double t0 = now_s();

	snprintf(url, sizeof url, "http://localhost%s", path);
	c->len = 0;
	if (c->body)
		c->body[0] = '\0';
	curl_easy_reset(c->h);
	curl_easy_setopt(c->h, CURLOPT_UNIX_SOCKET_PATH, c->sock);
	curl_easy_setopt(c->h, CURLOPT_URL, url);
	curl_easy_setopt(c->h, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c->h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c->h, CURLOPT_WRITEDATA, c);
	curl_easy_setopt(c->h, CURLOPT_TIMEOUT, 600L);
	if (json) {
		hd = curl_slist_append(hd, "Content-Type: application/json");
		curl_easy_setopt(c->h, CURLOPT_HTTPHEADER, hd);
		curl_easy_setopt(c->h, CURLOPT_POSTFIELDS, json);
	}
	c->status = 0;
	if (curl_easy_perform(c->h) == CURLE_OK)
		curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &c->status);
	curl_slist_free_all(hd);
	return now_s() - t0;
}

static void must(const conn *c, long want1, long want2, const char *what)
{
	if (c->status == want1 || c->status == want2)
		return;
	fprintf(stderr, "jobscale: %s: HTTP %ld: %.300s\n", what, c->status,
		c->body ? c->body : "");
	exit(1);
}

/* A number of the last answer's JSON object. */
static long jnum(const conn *c, const char *key)
{
	json_object *o = c->body ? json_tokener_parse(c->body) : NULL, *v;
	long n = json_object_object_get_ex(o, key, &v) ? (long)json_object_get_int64(v) : -1;

	json_object_put(o);
	return n;
}

/* ---- the job ids still queued (a job from the middle is cancelled) ---- */

static char (*ids)[33];
static int n_ids, cap_ids;
static long n_submitted;

static double submit(conn *c, int timeout_s)
{
	char body[400];
	json_object *o, *v;
	double t;

	snprintf(body, sizeof body, "{\"artifact\":\"%s\",\"input\":\"%s\",\"input_name\":"
		 "\"input.npz\",\"timeout\":%d}", opt.art, opt.input, timeout_s);
	t = http(c, "POST", "/v1/jobs", body);
	must(c, 202, 200, "POST /v1/jobs");
	n_submitted++;
	o = json_tokener_parse(c->body);
	if (n_ids == cap_ids) {
		cap_ids = cap_ids ? cap_ids * 2 : 1024;
		ids = realloc(ids, (size_t)cap_ids * sizeof *ids);
		if (!ids)
			exit(2);
	}
	if (json_object_object_get_ex(o, "id", &v))
		snprintf(ids[n_ids++], 33, "%s", json_object_get_string(v));
	json_object_put(o);
	return t;
}

static double cancel_middle(conn *c)
{
	char path[128];
	double t;
	int k = n_ids / 2;

	snprintf(path, sizeof path, "/v1/jobs/%s", ids[k]);
	t = http(c, "DELETE", path, NULL);
	must(c, 200, 200, "DELETE /v1/jobs/{id}");
	memmove(ids[k], ids[k + 1], (size_t)(n_ids - k - 1) * sizeof *ids);
	n_ids--;
	return t;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_d);
	return n ? v[n / 2] : 0;
}

/* ---- a health prober on its own connection ---- */

typedef struct prober {
	pthread_t t;
	conn c;
	atomic_int stop;
	double max, sum;
	long n, last_queue;
} prober;

static void *probe_main(void *arg)
{
	prober *p = arg;

	while (!atomic_load(&p->stop)) {
		double t = http(&p->c, "GET", "/v1/health", NULL);
		if (p->c.status != 200)
			break;
		p->last_queue = jnum(&p->c, "queue_depth");
		if (t > p->max)
			p->max = t;
		p->sum += t;
		p->n++;
		sleep_s(0.002);
	}
	return NULL;
}

static void probe_start(prober *p, const char *sock)
{
	memset(p, 0, sizeof *p);
	p->last_queue = -1;
	conn_open(&p->c, sock);
	pthread_create(&p->t, NULL, probe_main, p);
}

static void probe_stop(prober *p)
{
	atomic_store(&p->stop, 1);
	pthread_join(p->t, NULL);
	curl_easy_cleanup(p->c.h);
	free(p->c.body);
}

/* ---- 1. the table ---- */

static long queued(conn *c)
{
	http(c, "GET", "/v1/health", NULL);
	return jnum(c, "queue_depth");
}

/* One row: the queue filled to size, then the measures. */
static void row(conn *c, int size, double *fill_s)
{
	double ts[5][16], t0 = now_s(), tl, dt;
	long q = queued(c);
	int r, filled = 0;
	prober p;

	while (q + filled < size) {
		submit(c, 0);
		filled++;
	}
	dt = now_s() - t0;
	*fill_s += dt;
	for (r = 0; r < opt.reps && r < 16; r++) {
		ts[0][r] = submit(c, 0);
		ts[1][r] = http(c, "GET", "/v1/jobs?limit=50", NULL);
		must(c, 200, 200, "GET /v1/jobs?limit=50");
		ts[2][r] = http(c, "GET", "/v1/health", NULL);
		must(c, 200, 200, "GET /v1/health");
		ts[3][r] = cancel_middle(c);
		ts[4][r] = http(c, "GET", "/metrics", NULL);
		must(c, 200, 200, "GET /metrics");
	}
	probe_start(&p, opt.sock);
	sleep_s(0.02);
	tl = http(c, "GET", "/v1/jobs?limit=10000", NULL);
	must(c, 200, 200, "GET /v1/jobs?limit=10000");
	probe_stop(&p);
	printf("| %6ld | %8.0f | %9.2f | %9.2f | %9.2f | %9.2f | %10.2f | %12.1f | %14.1f | %7.1f |\n",
	       queued(c), dt > 0 ? filled / dt : 0, median(ts[0], r) * 1e3,
	       median(ts[1], r) * 1e3, median(ts[2], r) * 1e3, median(ts[3], r) * 1e3,
	       median(ts[4], r) * 1e3, tl * 1e3, p.max * 1e3, rss_kib(opt.pid) / 1024.0);
	fflush(stdout);
}

/* ---- 2. finished jobs ---- */

static void finished(conn *c, long rss0)
{
	double t0 = now_s();
	long total = n_submitted, run = 1, q = 1, rss;

	if (unlink(opt.hold) != 0) {
		fprintf(stderr, "jobscale: cannot remove %s: %s\n", opt.hold, strerror(errno));
		exit(1);
	}
	while (q > 0 || run > 0) {
		sleep_s(0.5);
		http(c, "GET", "/v1/health", NULL);
		must(c, 200, 200, "GET /v1/health");
		q = jnum(c, "queue_depth");
		run = jnum(c, "running");
		if (now_s() - t0 > 3600) {
			fprintf(stderr, "jobscale: jobs still running after an hour\n");
			exit(1);
		}
	}
	rss = rss_kib(opt.pid);
	printf("\nfinished: %ld jobs ran to their end in %.1f s; RSS %.1f MiB, %.2f KiB per "
	       "finished job (RSS growth from the empty daemon over the jobs it keeps)\n",
	       total, now_s() - t0, rss / 1024.0, rss > 0 ? (double)(rss - rss0) / (double)total : 0);
}

/* ---- 3. expiry ---- */

static void expire(double rate)
{
	conn c;
	prober p;
	double est = rate > 0 ? opt.expire / rate : 120, t0, t_last, gone;
	int timeout_s = (int)(est * 1.5) + 5, i;

	if (timeout_s > 600)
		timeout_s = 600;   /* --job-timeout's default caps it */
	conn_open(&c, opt.xsock);
	n_ids = 0;
	t0 = now_s();
	for (i = 0; i < opt.expire; i++)
		submit(&c, timeout_s);
	t_last = now_s();
	if (t_last - t0 >= timeout_s) {
		printf("\nexpire: skipped: filling took %.0f s, longer than the %d s timeout\n",
		       t_last - t0, timeout_s);
		return;
	}
	kill((pid_t)opt.xpid, SIGSTOP);   /* every deadline passes while it sleeps */
	sleep_s(t_last + timeout_s + 0.5 - now_s());
	kill((pid_t)opt.xpid, SIGCONT);
	t0 = now_s();
	probe_start(&p, opt.xsock);
	while (now_s() - t0 < 600) {
		sleep_s(0.01);
		if (p.last_queue == 0)
			break;
	}
	gone = now_s() - t0;
	probe_stop(&p);
	printf("\nexpire: %d queued jobs (timeout %d s) past their deadline at once: the queue "
	       "was empty %.2f s after the daemon went on; GET /v1/health meanwhile: %ld answers, "
	       "mean %.2f ms, max %.1f ms\n", opt.expire, timeout_s, gone, p.n,
	       p.n ? p.sum / (double)p.n * 1e3 : 0, p.max * 1e3);
	curl_easy_cleanup(c.h);
	free(c.body);
}

static void usage(void)
{
	fprintf(stderr, "usage: jobscale --socket S --artifact ID --input DIGEST [--pid P] "
		"[--hold FILE] [--sizes N,N,...] [--reps N] [--expire-socket S2 --expire-pid P2 "
		"[--expire N]]\n");
	exit(2);
}

static void parse_sizes(const char *s)
{
	char *end;

	opt.n_sizes = 0;
	while (*s && opt.n_sizes < MAX_SIZES) {
		long n = strtol(s, &end, 10);
		if (end == s || n < 1 || n > 10000000)
			usage();
		opt.sizes[opt.n_sizes++] = (int)n;
		s = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			usage();
	}
}

int main(int argc, char **argv)
{
	conn c;
	double fill_s = 0;
	long rss0;
	int i, filled = 0;

	for (i = 1; i + 1 < argc; i += 2) {
		const char *k = argv[i], *v = argv[i + 1];
		if (!strcmp(k, "--socket")) opt.sock = v;
		else if (!strcmp(k, "--artifact")) opt.art = v;
		else if (!strcmp(k, "--input")) opt.input = v;
		else if (!strcmp(k, "--pid")) opt.pid = atol(v);
		else if (!strcmp(k, "--hold")) opt.hold = v;
		else if (!strcmp(k, "--sizes")) parse_sizes(v);
		else if (!strcmp(k, "--reps")) opt.reps = atoi(v);
		else if (!strcmp(k, "--expire-socket")) opt.xsock = v;
		else if (!strcmp(k, "--expire-pid")) opt.xpid = atol(v);
		else if (!strcmp(k, "--expire")) opt.expire = atoi(v);
		else usage();
	}
	if (i != argc || !opt.sock || !opt.art || !opt.input || opt.reps < 1 ||
	    (opt.xsock && opt.xpid <= 0) || opt.expire < 1)
		usage();
	curl_global_init(CURL_GLOBAL_DEFAULT);
	conn_open(&c, opt.sock);
	rss0 = rss_kib(opt.pid);
	printf("jobscale: local jobs queued behind one held job (--workers 1, EULERNPUD_HOLD); "
	       "times in ms, median of %d (list10000 once, and the slowest health answer "
	       "from another connection during it)\n\n", opt.reps);
	printf("| queued | fill j/s | submit ms | list50 ms | health ms | cancel ms | metrics ms | "
	       "list10000 ms | health max ms | RSS MiB |\n");
	printf("|-------:|---------:|----------:|----------:|----------:|----------:|-----------:|"
	       "-------------:|--------------:|--------:|\n");
	/* the first job is the one held running: the others stay queued */
	submit(&c, 0);
	n_ids = 0;
	for (i = 0; i < 3000; i++) {
		http(&c, "GET", "/v1/health", NULL);
		if (jnum(&c, "running") == 1)
			break;
		sleep_s(0.01);
	}
	if (i == 3000) {
		fprintf(stderr, "jobscale: the first job is not held running (EULERNPUD_HOLD?)\n");
		return 1;
	}
	for (i = 0; i < opt.n_sizes; i++) {
		row(&c, opt.sizes[i], &fill_s);
		filled = opt.sizes[i];
	}
	if (opt.hold)
		finished(&c, rss0);
	if (opt.xsock)
		expire(fill_s > 0 ? filled / fill_s : 0);
	curl_easy_cleanup(c.h);
	free(c.body);
	free(ids);
	curl_global_cleanup();
	return 0;
}

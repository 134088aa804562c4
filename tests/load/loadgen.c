/* loadgen.c: the load generator of the load tests (tests/e2e/load.sh, make
 * stress). N client threads, one libcurl easy handle each (one kept-alive
 * connection), drive eulernpud over its Unix socket or TCP. Scenario "run"
 * repeats one tiny_mlp job and checks that every result is byte-equal to the
 * first; "mix" interleaves compiles of distinct specs, their runs and cache
 * reads, recovering from evictions as client/ does. Any answer other than
 * a success, a documented 429 (Retry-After honoured) or a documented
 * eviction answer that the client recovers from is a failure: exit 1.
 *
 * This file: the options, the run's shared state and main() (setup, the
 * client threads, the warm-up, the measured span, the end). The rest, by
 * seam (loadgen.h): http.c the HTTP client, scenario.c the iterations,
 * setup.c the inputs, report.c the summary. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>
#include "buf.h"
#include "err.h"
#include "loadgen.h"

static const char usage[] =
	"usage: loadgen (--socket PATH | --url URL) [--clients N] [--seconds S | --requests N]\n"
	"               [--scenario run|mix] [--warmup S] [--warmup-iters N] [--json FILE]\n"
	"               [--token-file FILE]"
	" [--example DIR] [--variants N] [--daemon-pid PID]\n"
	"\n"
	"  --socket PATH      the daemon's Unix socket\n"
	"  --url URL          or its base URL (http://127.0.0.1:PORT)\n"
	"  --clients N        concurrent clients, one connection each (default 64)\n"
	"  --seconds S        measure for S seconds after the warm-up (default 30)\n"
	"  --requests N       or stop after N measured iterations in all\n"
	"  --scenario run|mix run: one tiny_mlp job again and again, results byte-equal;\n"
	"                     mix: compiles of distinct specs, their runs, cache reads\n"
	"  --warmup S         seconds before measuring (default 0)\n"
	"  --warmup-iters N   and at least N successful iterations (at most 120 s more)\n"
	"  --json FILE        write the results there as JSON\n"
	"  --token-file FILE  send 'Authorization: Bearer <token>'\n"
	"  --example DIR      the tiny_mlp example (default examples/tiny_mlp)\n"
	"  --variants N       mix: distinct specs (default 24)\n"
	"  --daemon-pid PID   report the daemon's VmRSS after the warm-up and at the end\n";

options opt = {NULL, NULL, "run", NULL, NULL, "examples/tiny_mlp", 64, 24, 0, 30, 0, 0, 0, 0};

char base[1024];
char auth[600];
atomic_int measuring, stopping;
atomic_long tickets;
atomic_long fails_seen;
atomic_long warm_iters;
pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

/* ---- options and main ---- */

static int num(const char *s, double lo, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return errno || end == s || *end || !(*out >= lo);
}

static int parse_args(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		double d = 0;

		if (!strcmp(a, "--help")) {
			fputs(usage, stdout);
			exit(0);
		}
		if (!v) {
			fprintf(stderr, "loadgen: option '%s' needs a value\n%s", a, usage);
			return -1;
		}
		i++;
		if (!strcmp(a, "--socket"))
			opt.socket = v;
		else if (!strcmp(a, "--url"))
			opt.url = v;
		else if (!strcmp(a, "--scenario"))
			opt.scenario = v;
		else if (!strcmp(a, "--json"))
			opt.json = v;
		else if (!strcmp(a, "--token-file"))
			opt.token_file = v;
		else if (!strcmp(a, "--example"))
			opt.example = v;
		else if (!strcmp(a, "--clients") && !num(v, 1, &d) && d <= 4096)
			opt.clients = (int)d;
		else if (!strcmp(a, "--variants") && !num(v, 1, &d) && d <= 1000)
			opt.variants = (int)d;
		else if (!strcmp(a, "--seconds") && !num(v, 0.1, &d))
			opt.seconds = d;
		else if (!strcmp(a, "--warmup") && !num(v, 0, &d))
			opt.warmup = d;
		else if (!strcmp(a, "--warmup-iters") && !num(v, 0, &d))
			opt.warmup_iters = (long)d;
		else if (!strcmp(a, "--requests") && !num(v, 1, &d))
			opt.requests = (long)d;
		else if (!strcmp(a, "--daemon-pid") && !num(v, 1, &d))
			opt.daemon_pid = (long)d;
		else {
			fprintf(stderr, "loadgen: bad option or value: %s %s\n%s", a, v, usage);
			return -1;
		}
	}
	if (!opt.socket == !opt.url) {
		fprintf(stderr, "loadgen: give one of --socket and --url\n%s", usage);
		return -1;
	}
	if (strcmp(opt.scenario, "run") && strcmp(opt.scenario, "mix")) {
		fprintf(stderr, "loadgen: --scenario is run or mix, not '%s'\n", opt.scenario);
		return -1;
	}
	opt.mix = !strcmp(opt.scenario, "mix");
	return 0;
}

static int read_token(void)
{
	enpu_buf b = ENPU_BUF_INIT;
	enpu_err e = ENPU_ERR_INIT;
	size_t n;

	if (!opt.token_file)
		return 0;
	if (enpu_read_file(opt.token_file, 4096, &b, &e) != 0) {
		fprintf(stderr, "loadgen: cannot read %s: %s\n", opt.token_file, e.message);
		return -1;
	}
	n = b.len;
	while (n && (b.data[n - 1] == '\n' || b.data[n - 1] == '\r' || b.data[n - 1] == ' '))
		n--;
	snprintf(auth, sizeof auth, "Authorization: Bearer %.*s", (int)n, b.data ? b.data : "");
	enpu_buf_free(&b);
	return 0;
}

/* Start the clients, a thread each, measuring at once when there is no
 * warm-up: how many started (fewer stops the run). */
static int start_clients(client *cs, pthread_t *th)
{
	int started = 0;

	atomic_store(&tickets, opt.requests);
	atomic_store(&measuring, opt.warmup <= 0 && opt.warmup_iters <= 0);
	for (int i = 0; i < opt.clients; i++) {
		cs[i].id = i;
		cs[i].seed = 7919u * (unsigned)i + 1;
		if (!(cs[i].h = curl_easy_init()) || pthread_create(&th[i], NULL, client_main, &cs[i])) {
			fprintf(stderr, "loadgen: cannot start client %d\n", i);
			atomic_store(&stopping, 1);
			break;
		}
		started++;
	}
	return started;
}

/* The warm-up, then the measured span until its seconds or requests are
 * done; then the clients are told to stop. The span's start; rss_warm
 * gets the daemon's VmRSS after the warm-up. */
static double measure(long *rss_warm)
{
	double t0;

	if (opt.warmup > 0 || opt.warmup_iters > 0) {
		double give_up = now_s() + opt.warmup + WARMUP_MAX_S;

		sleep_s(opt.warmup);
		while (atomic_load(&warm_iters) < opt.warmup_iters && now_s() < give_up)
			sleep_s(0.05);
		atomic_store(&measuring, 1);
	}
	if (opt.daemon_pid)
		*rss_warm = rss_kib(opt.daemon_pid);
	t0 = now_s();
	while (!atomic_load(&stopping) && (opt.requests ? atomic_load(&tickets) > 0
							: now_s() - t0 < opt.seconds))
		sleep_s(0.05);
	atomic_store(&stopping, 1);
	return t0;
}

/* After the clients ended: the evictions (mix, on setup_c's new handle),
 * the daemon's VmRSS at the end, the report. The exit status. */
static int finish(client *cs, client *setup_c, int started, double secs, long rss_warm)
{
	long rss_end = -1, evicted = -1;
	int ret;

	for (int i = 0; i < opt.clients; i++)
		if (cs[i].h)
			curl_easy_cleanup(cs[i].h);
	if (opt.mix) {
		setup_c->h = curl_easy_init();
		evicted = setup_c->h ? evictions(setup_c) : -1;
	}
	/* the end figure once the daemon has closed our connections */
	sleep_s(0.5);
	if (opt.daemon_pid)
		rss_end = rss_kib(opt.daemon_pid);
	ret = report(cs, secs, rss_warm, rss_end, evicted) != 0 || started < opt.clients;
	if (opt.mix && evicted <= 0) {
		fprintf(stderr, "loadgen: mix: the cache evicted nothing (evictions %ld): is "
			"--cache-max small enough?\n", evicted);
		ret = 1;
	}
	if (atomic_load(&fails_seen) > 0)
		fprintf(stderr, "loadgen: %ld failure(s)\n", atomic_load(&fails_seen));
	return ret;
}

int main(int argc, char **argv)
{
	client *cs = NULL, setup_c;
	pthread_t *th = NULL;
	long rss_warm = -1;
	double t0, secs;
	int started, ret = 1;

	if (parse_args(argc, argv) != 0)
		return 2;
	if (read_token() != 0)
		return 2;
	snprintf(base, sizeof base, "%s", opt.url ? opt.url : "http://localhost");
	if (base[0] && base[strlen(base) - 1] == '/')
		base[strlen(base) - 1] = '\0';
	curl_global_init(CURL_GLOBAL_DEFAULT);
	memset(&setup_c, 0, sizeof setup_c);
	setup_c.id = -1;
	if (!(setup_c.h = curl_easy_init()))
		goto out;
	if (setup(&setup_c) != 0) {
		fprintf(stderr, "loadgen: setup failed\n");
		goto out;
	}
	/* the setup connection closes before the clients open theirs: they
	 * may need every connection the daemon's --conn-limit allows */
	curl_easy_cleanup(setup_c.h);
	setup_c.h = NULL;

	cs = calloc((size_t)opt.clients, sizeof *cs);
	th = calloc((size_t)opt.clients, sizeof *th);
	if (!cs || !th)
		goto out;
	started = start_clients(cs, th);
	t0 = measure(&rss_warm);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	secs = now_s() - t0;
	ret = finish(cs, &setup_c, started, secs, rss_warm);
out:
	if (setup_c.h)
		curl_easy_cleanup(setup_c.h);
	enpu_buf_free(&setup_c.resp);
	for (int i = 0; cs && i < opt.clients; i++) {
		enpu_buf_free(&cs[i].resp);
		for (int k = 0; k < K_N; k++)
			free(cs[i].ks[k].lat);
	}
	free(cs);
	free(th);
	free_inputs();
	curl_global_cleanup();
	return ret;
}

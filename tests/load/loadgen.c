/* loadgen.c: the load generator of the load tests (tests/e2e/load.sh, make
 * stress). N client threads, one libcurl easy handle each (one kept-alive
 * connection), drive eulernpud over its Unix socket or TCP. Scenario "run"
 * repeats one tiny_mlp job and checks that every result is byte-equal to the
 * first; "mix" interleaves compiles of distinct specs, their runs and cache
 * reads, recovering from evictions as client/ does. Any answer other than
 * a success, a documented 429 (Retry-After honoured) or a documented
 * eviction answer that the client recovers from is a failure: exit 1. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include <curl/curl.h>
#include <json-c/json.h>
#include "api.h"
#include "buf.h"
#include "digest.h"
#include "err.h"
#include "npz.h"
#include "tensor.h"

#define WAIT_S        60     /* ?wait= of a job's long poll */
#define HTTP_TIMEOUT  (WAIT_S + 30)
#define MAX_TRIES     40     /* recoveries of one operation before it fails */
#define FAILS_SHOWN   8
#define RETRY_MAX_S   10     /* longest Retry-After we sleep (a bigger one is capped) */
#define BODY_SHOWN    2000
#define WARMUP_MAX_S  120    /* --warmup-iters waits at most this much longer */

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

enum { K_PUT, K_HEAD, K_COMPILE, K_JOB, K_POLL, K_RESULT, K_CACHE, K_N };
static const char *const kind_names[K_N] = {
	"put_blob", "head_blob", "compile", "job", "job_poll", "result", "cache",
};

/* What one answer counted as. RECOVERED: a documented eviction answer
 * (409 E0804 with the missing list, 404 for an evicted artifact or result)
 * that the client then repaired. */
enum { O_OK, O_429, O_RECOVERED, O_FAIL };

typedef struct kstat {
	long req, ok, q429, recovered, fail;
	double *lat;          /* ms of the successful answers */
	size_t n, cap;
} kstat;

typedef struct variant {
	char *spec, *weights;
	size_t spec_len, weights_len;
	char ds[65], dw[65];
	char art[65];         /* "" until compiled once */
	char result[65];      /* the first result's digest: every later one must match */
} variant;

typedef struct client {
	int id;
	CURL *h;
	enpu_buf resp;
	char cerr[CURL_ERROR_SIZE];
	char retry_after[32];
	double ms;
	unsigned seed;
	long iters;
	kstat ks[K_N];
} client;

static struct {
	const char *socket, *url, *scenario, *json, *token_file, *example;
	int clients, variants, mix;
	double seconds, warmup;
	long requests, warmup_iters;
	long daemon_pid;
} opt = {NULL, NULL, "run", NULL, NULL, "examples/tiny_mlp", 64, 24, 0, 30, 0, 0, 0, 0};

static char base[1024];
static char auth[600];
static atomic_int measuring, stopping;
static atomic_long tickets;
static atomic_long fails_seen;
static atomic_long warm_iters;   /* successful iterations during the warm-up */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;   /* variants, run_ref */

/* The tiny_mlp files, and (mix) the variants. */
static enpu_buf ex_spec = ENPU_BUF_INIT, ex_weights = ENPU_BUF_INIT, ex_input = ENPU_BUF_INIT;
static char d_spec[65], d_weights[65], d_input[65];
static char run_art[65], run_ref[65];
static variant *vars;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_s(double s)
{
	struct timespec ts;

	if (s <= 0)
		return;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static long rss_kib(long pid)
{
	char path[64], line[256];
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%ld/status", pid);
	if (!(f = fopen(path, "r")))
		return -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/* ---- statistics ---- */

static void note(client *c, int kind, int outcome)
{
	kstat *k = &c->ks[kind];

	/* failures count from the first request on; the rest once measuring */
	if (outcome != O_FAIL && !atomic_load(&measuring))
		return;
	k->req++;
	switch (outcome) {
	case O_OK:
		k->ok++;
		if (k->n == k->cap) {
			size_t ncap = k->cap ? k->cap * 2 : 256;
			double *nl = realloc(k->lat, ncap * sizeof *nl);
			if (!nl)
				return;   /* a lost sample, not a lost count */
			k->lat = nl;
			k->cap = ncap;
		}
		k->lat[k->n++] = c->ms;
		break;
	case O_429:
		k->q429++;
		break;
	case O_RECOVERED:
		k->recovered++;
		break;
	default:
		k->fail++;
	}
}

/* Print the first few failures whole (what, status, body). */
static void show_fail(client *c, const char *what, const char *method, const char *path,
		      long status)
{
	long n = atomic_fetch_add(&fails_seen, 1);

	if (n >= FAILS_SHOWN)
		return;
	if (status < 0)
		fprintf(stderr, "loadgen: client %d: %s: %s %s: transport error: %s\n", c->id, what,
			method, path, c->cerr);
	else
		fprintf(stderr, "loadgen: client %d: %s: %s %s: HTTP %ld: %.*s\n", c->id, what,
			method, path, status, (int)(c->resp.len < BODY_SHOWN ? c->resp.len : BODY_SHOWN),
			c->resp.data ? c->resp.data : "");
}

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

/* ---- HTTP ---- */

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
	client *c = ud;
	return enpu_buf_add(&c->resp, p, sz * n) == 0 ? sz * n : 0;
}

static size_t on_header(char *p, size_t sz, size_t n, void *ud)
{
	client *c = ud;
	size_t len = sz * n;

	if (len > 12 && strncasecmp(p, "Retry-After:", 12) == 0) {
		size_t i = 12, k = 0;
		while (i < len && (p[i] == ' ' || p[i] == '\t'))
			i++;
		while (i < len && p[i] >= '0' && p[i] <= '9' && k + 1 < sizeof c->retry_after)
			c->retry_after[k++] = p[i++];
		c->retry_after[k] = '\0';
	}
	return len;
}

/* One exchange on the client's own handle (its connection is kept: the
 * reset keeps live connections). The status, or -1 on a transport error
 * (c->cerr says which). The body is in c->resp, the time in c->ms. */
static long http(client *c, const char *method, const char *path, const void *body, size_t len,
		 const char *ctype)
{
	struct curl_slist *hs = NULL;
	char url[1200], ct[128];
	long status = -1;
	double t0;
	CURLcode rc;

	curl_easy_reset(c->h);
	enpu_buf_reset(&c->resp);
	c->retry_after[0] = '\0';
	c->cerr[0] = '\0';
	snprintf(url, sizeof url, "%s%s", base, path);
	curl_easy_setopt(c->h, CURLOPT_URL, url);
	if (opt.socket)
		curl_easy_setopt(c->h, CURLOPT_UNIX_SOCKET_PATH, opt.socket);
	curl_easy_setopt(c->h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c->h, CURLOPT_TIMEOUT, (long)HTTP_TIMEOUT);
	curl_easy_setopt(c->h, CURLOPT_ERRORBUFFER, c->cerr);
	curl_easy_setopt(c->h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c->h, CURLOPT_WRITEDATA, c);
	curl_easy_setopt(c->h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c->h, CURLOPT_HEADERDATA, c);
	hs = curl_slist_append(hs, "Expect:");
	if (auth[0])
		hs = curl_slist_append(hs, auth);
	if (ctype) {
		snprintf(ct, sizeof ct, "Content-Type: %s", ctype);
		hs = curl_slist_append(hs, ct);
	}
	curl_easy_setopt(c->h, CURLOPT_HTTPHEADER, hs);
	if (strcmp(method, "HEAD") == 0) {
		curl_easy_setopt(c->h, CURLOPT_NOBODY, 1L);
	} else if (body) {
		curl_easy_setopt(c->h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c->h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
		curl_easy_setopt(c->h, CURLOPT_CUSTOMREQUEST, method);
	} else if (strcmp(method, "GET") != 0) {
		curl_easy_setopt(c->h, CURLOPT_CUSTOMREQUEST, method);
	}
	t0 = now_s();
	rc = curl_easy_perform(c->h);
	c->ms = (now_s() - t0) * 1e3;
	if (rc == CURLE_OK)
		curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &status);
	else if (!c->cerr[0])
		snprintf(c->cerr, sizeof c->cerr, "%s", curl_easy_strerror(rc));
	curl_slist_free_all(hs);
	return status;
}

/* Sleep for Retry-After (1 s when absent), watching the stop flag: -1
 * when the run ended meanwhile (the request is then abandoned, not failed). */
static int honour_retry(client *c)
{
	double s = c->retry_after[0] ? atof(c->retry_after) : 1;
	double end = now_s() + (s > RETRY_MAX_S ? RETRY_MAX_S : s);

	while (now_s() < end) {
		if (atomic_load(&stopping))
			return -1;
		sleep_s(0.05);
	}
	return 0;
}

/* http() that answers 429 by waiting and asking again: the status, -1 on a
 * transport error, -2 when the run stopped during a wait. */
static long call(client *c, int kind, const char *method, const char *path, const void *body,
		 size_t len, const char *ctype)
{
	for (;;) {
		long st = http(c, method, path, body, len, ctype);

		if (st != 429)
			return st;
		note(c, kind, O_429);
		if (honour_retry(c))
			return -2;
	}
}

static long call_json(client *c, int kind, const char *method, const char *path,
		      json_object *o)
{
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	return call(c, kind, method, path, s, strlen(s), "application/json");
}

static json_object *resp_json(client *c)
{
	return c->resp.data ? json_tokener_parse(c->resp.data) : NULL;
}

static const char *jstr(json_object *o, const char *k)
{
	json_object *v;
	return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_string)
	       ? json_object_get_string(v) : NULL;
}

/* The error code of an error body ("E0804"), or "". */
static void err_code(json_object *o, char code[16])
{
	json_object *e;
	const char *s = NULL;

	if (json_object_object_get_ex(o, F_ERROR, &e))
		s = jstr(e, "code");
	snprintf(code, 16, "%s", s ? s : "");
}

/* ---- blobs ---- */

/* The bytes of a digest this client may upload: the example's files and
 * the variants'. */
static int blob_of(const char *d, const char **p, size_t *n)
{
	if (!strcmp(d, d_spec)) { *p = ex_spec.data; *n = ex_spec.len; return 0; }
	if (!strcmp(d, d_weights)) { *p = ex_weights.data; *n = ex_weights.len; return 0; }
	if (!strcmp(d, d_input)) { *p = ex_input.data; *n = ex_input.len; return 0; }
	for (int i = 0; vars && i < opt.variants; i++) {
		if (!strcmp(d, vars[i].ds)) { *p = vars[i].spec; *n = vars[i].spec_len; return 0; }
		if (!strcmp(d, vars[i].dw)) { *p = vars[i].weights; *n = vars[i].weights_len; return 0; }
	}
	return -1;
}

static int put_blob(client *c, const char *d)
{
	char path[128];
	const char *p;
	size_t n;
	long st;

	if (blob_of(d, &p, &n) != 0) {
		snprintf(c->cerr, sizeof c->cerr, "the server asked for blob %.64s, not one of ours", d);
		show_fail(c, "upload", "PUT", d, -1);
		note(c, K_PUT, O_FAIL);
		return -1;
	}
	snprintf(path, sizeof path, API_BLOBS "%s", d);
	st = call(c, K_PUT, "PUT", path, p, n, "application/octet-stream");
	if (st == -2)
		return -2;
	if (st < 200 || st >= 300) {
		show_fail(c, "upload", "PUT", path, st);
		note(c, K_PUT, O_FAIL);
		return -1;
	}
	note(c, K_PUT, O_OK);
	return 0;
}

/* A 409 E0804 answer: upload every digest of its missing list. 0 when it
 * was one (and the uploads worked), -1 when not (a failure), -2 stop. */
static int upload_missing(client *c, int kind, const char *what, const char *method,
			  const char *path, long st)
{
	json_object *o = NULL, *miss;
	char code[16], *ds = NULL;
	size_t n = 0;
	int ret = -1;

	if (st == 409 && (o = resp_json(c))) {
		err_code(o, code);
		if (!strcmp(code, "E0804") && json_object_object_get_ex(o, F_MISSING, &miss) &&
		    json_object_is_type(miss, json_type_array) &&
		    (n = json_object_array_length(miss)) > 0 && (ds = calloc(n, 65))) {
			for (size_t i = 0; i < n; i++)
				snprintf(ds + i * 65, 65, "%s",
					 json_object_get_string(json_object_array_get_idx(miss, i)));
			ret = 0;
		}
	}
	json_object_put(o);
	if (ret != 0) {
		show_fail(c, what, method, path, st);
		note(c, kind, O_FAIL);
		return -1;
	}
	note(c, kind, O_RECOVERED);
	for (size_t i = 0; i < n && ret == 0; i++)
		ret = put_blob(c, ds + i * 65);
	free(ds);
	return ret;
}

/* ---- operations ---- */

/* POST /v1/compile of spec + weights, uploading what the server lacks.
 * art: the artifact id. 0, -1 failure, -2 stop. */
static int compile(client *c, const char *ds, const char *dw, const char *name, char art[65])
{
	json_object *req = json_object_new_object(), *res = NULL;
	const char *id;
	long st;
	int ret = -1;

	json_object_object_add(req, F_SPEC, json_object_new_string(ds));
	json_object_object_add(req, F_WEIGHTS, json_object_new_string(dw));
	json_object_object_add(req, F_SPEC_NAME, json_object_new_string(name));
	json_object_object_add(req, F_BACKEND, json_object_new_string("cpu_ref"));
	for (int t = 0; t < MAX_TRIES; t++) {
		st = call_json(c, K_COMPILE, "POST", API_COMPILE, req);
		if (st == -2 || (st == 409 && atomic_load(&stopping))) {
			ret = -2;
			goto out;
		}
		if (st == 200 || t == MAX_TRIES - 1)
			break;
		if ((ret = upload_missing(c, K_COMPILE, "compile", "POST", API_COMPILE, st)) != 0)
			goto out;
		ret = -1;
	}
	if (st != 200) {
		show_fail(c, "compile: still missing blobs after retries", "POST", API_COMPILE, st);
		note(c, K_COMPILE, O_FAIL);
		goto out;
	}
	res = resp_json(c);
	id = jstr(res, F_ARTIFACT);
	if (!id || !enpu_is_sha256_hex(id)) {
		show_fail(c, "compile: no artifact id", "POST", API_COMPILE, st);
		note(c, K_COMPILE, O_FAIL);
		goto out;
	}
	note(c, K_COMPILE, O_OK);
	snprintf(art, 65, "%s", id);
	ret = 0;
out:
	json_object_put(req);
	json_object_put(res);
	return ret;
}

/* Outcomes of one job attempt. */
enum { J_OK, J_FAIL = -1, J_STOP = -2, J_NOART = 1, J_RERUN = 2 };

/* Submit a job, follow it to the end, fetch its result and check its bytes
 * against the job's result digest; result gets that digest. With evict
 * set, a 404 for the artifact is J_NOART and one for the result J_RERUN
 * (documented eviction answers); without, both are failures. */
static int job_once(client *c, const char *art, int evict, char result[65])
{
	json_object *req = json_object_new_object(), *job = NULL;
	char path[256], jid[100], code[16], got[65];
	const char *s;
	long st;
	int ret = J_FAIL;

	json_object_object_add(req, F_ARTIFACT, json_object_new_string(art));
	json_object_object_add(req, F_INPUT, json_object_new_string(d_input));
	json_object_object_add(req, F_INPUT_NAME, json_object_new_string("input.npz"));
	snprintf(path, sizeof path, API_JOBS "?" Q_WAIT "=%d", WAIT_S);
	for (int t = 0;; t++) {
		st = call_json(c, K_JOB, "POST", path, req);
		if (st == -2 || (st == 409 && atomic_load(&stopping))) {
			ret = J_STOP;
			goto out;
		}
		if (st != 409 || t >= MAX_TRIES)
			break;
		if ((ret = upload_missing(c, K_JOB, "submit", "POST", path, st)) != 0)
			goto out;
		ret = J_FAIL;
	}
	if (st == 404 && evict) {
		json_object *o = resp_json(c);
		err_code(o, code);
		json_object_put(o);
		if (!strcmp(code, "E0800")) {
			note(c, K_JOB, O_RECOVERED);
			ret = J_NOART;
			goto out;
		}
	}
	if (st != 200 && st != 202) {
		show_fail(c, "submit", "POST", path, st);
		note(c, K_JOB, O_FAIL);
		goto out;
	}
	note(c, K_JOB, O_OK);
	job = resp_json(c);
	s = jstr(job, F_ID);
	if (!s || strlen(s) >= sizeof jid) {
		show_fail(c, "submit: no job id", "POST", path, st);
		note(c, K_JOB, O_FAIL);
		goto out;
	}
	snprintf(jid, sizeof jid, "%s", s);
	while ((s = jstr(job, F_STATE)) && (!strcmp(s, JOB_QUEUED) || !strcmp(s, JOB_RUNNING))) {
		snprintf(path, sizeof path, API_JOBS "/%s?" Q_WAIT "=%d", jid, WAIT_S);
		st = call(c, K_POLL, "GET", path, NULL, 0, NULL);
		if (st == -2) {
			ret = J_STOP;
			goto out;
		}
		if (st != 200 && st != 202) {
			show_fail(c, "poll", "GET", path, st);
			note(c, K_POLL, O_FAIL);
			goto out;
		}
		note(c, K_POLL, O_OK);
		json_object_put(job);
		job = resp_json(c);
	}
	if (!s || strcmp(s, JOB_SUCCEEDED) != 0 || !(s = jstr(job, F_RESULT)) ||
	    !enpu_is_sha256_hex(s)) {
		const char *js = json_object_to_json_string(job);
		c->resp.len = 0;
		enpu_buf_adds(&c->resp, js ? js : "(no JSON)");
		show_fail(c, "job did not succeed", "GET", path, st);
		note(c, K_JOB, O_FAIL);
		goto out;
	}
	snprintf(result, 65, "%s", s);
	snprintf(path, sizeof path, API_JOBS "/%s" API_JOB_RESULT, jid);
	st = call(c, K_RESULT, "GET", path, NULL, 0, NULL);
	if (st == -2) {
		ret = J_STOP;
		goto out;
	}
	if (st == 404 && evict) {
		note(c, K_RESULT, O_RECOVERED);
		ret = J_RERUN;
		goto out;
	}
	if (st != 200) {
		show_fail(c, "result", "GET", path, st);
		note(c, K_RESULT, O_FAIL);
		goto out;
	}
	enpu_sha256_hex(c->resp.data ? c->resp.data : "", c->resp.len, got);
	if (strcmp(got, result) != 0) {
		snprintf(c->cerr, sizeof c->cerr, "result bytes hash to %s, the job says %s", got,
			 result);
		show_fail(c, "result digest", "GET", path, -1);
		note(c, K_RESULT, O_FAIL);
		goto out;
	}
	note(c, K_RESULT, O_OK);
	ret = J_OK;
out:
	json_object_put(req);
	json_object_put(job);
	return ret;
}

/* Check a result digest against the reference (the first one seen). */
static int same_result(client *c, char ref[65], const char *got, const char *what)
{
	int bad;

	pthread_mutex_lock(&mu);
	if (!ref[0])
		snprintf(ref, 65, "%s", got);
	bad = strcmp(ref, got) != 0;
	pthread_mutex_unlock(&mu);
	if (bad) {
		snprintf(c->cerr, sizeof c->cerr, "%s: result %s differs from the first, %s", what,
			 got, ref);
		show_fail(c, "result not byte-equal", "GET", "result", -1);
		note(c, K_RESULT, O_FAIL);
		return -1;
	}
	return 0;
}

/* Scenario run: one job of the shared artifact. */
static int iter_run(client *c)
{
	char res[65];
	int r = job_once(c, run_art, 0, res);

	if (r == J_STOP)
		return -2;
	if (r != J_OK)
		return -1;
	return same_result(c, run_ref, res, "tiny_mlp");
}

/* Mix: compile variant v (an action-cache hit, or a compile after an
 * eviction or the first time); every compile of one spec must give one id. */
static int mix_compile(client *c, int v)
{
	variant *x = &vars[v];
	char art[65], name[32];
	int r, bad;

	snprintf(name, sizeof name, "mix%d.yaml", v);
	if ((r = compile(c, x->ds, x->dw, name, art)) != 0)
		return r;
	pthread_mutex_lock(&mu);
	if (!x->art[0])
		memcpy(x->art, art, 65);
	bad = strcmp(x->art, art) != 0;
	pthread_mutex_unlock(&mu);
	if (bad) {
		snprintf(c->cerr, sizeof c->cerr, "variant %d compiled to %s, before to %s", v, art,
			 x->art);
		show_fail(c, "compile not deterministic", "POST", API_COMPILE, -1);
		note(c, K_COMPILE, O_FAIL);
		return -1;
	}
	return 0;
}

/* Mix: run variant v, compiling it again when its artifact was evicted and
 * running again when its result was. */
static int mix_run(client *c, int v)
{
	char art[65], res[65], what[32];
	int r = J_NOART;

	pthread_mutex_lock(&mu);
	memcpy(art, vars[v].art, 65);
	pthread_mutex_unlock(&mu);
	for (int t = 0; t < MAX_TRIES; t++) {
		if (t > 0 && atomic_load(&stopping))
			return -2;   /* abandoned, not failed: the run is over */
		if (!art[0] || r == J_NOART) {
			if ((r = mix_compile(c, v)) != 0)
				return r;
			pthread_mutex_lock(&mu);
			memcpy(art, vars[v].art, 65);
			pthread_mutex_unlock(&mu);
		}
		r = job_once(c, art, 1, res);
		if (r == J_STOP)
			return -2;
		if (r == J_FAIL)
			return -1;
		if (r == J_OK) {
			snprintf(what, sizeof what, "variant %d", v);
			return same_result(c, vars[v].result, res, what);
		}
	}
	snprintf(c->cerr, sizeof c->cerr, "variant %d: no result after %d evictions", v, MAX_TRIES);
	show_fail(c, "run", "POST", API_JOBS, -1);
	note(c, K_JOB, O_FAIL);
	return -1;
}

/* Mix: a cache read: the stats, or HEAD of a blob (present or evicted). */
static int mix_read(client *c, int v)
{
	char path[128];
	long st;

	if (rand_r(&c->seed) % 2) {
		st = call(c, K_CACHE, "GET", API_CACHE, NULL, 0, NULL);
		if (st == -2)
			return -2;
		if (st != 200) {
			show_fail(c, "cache stats", "GET", API_CACHE, st);
			note(c, K_CACHE, O_FAIL);
			return -1;
		}
		note(c, K_CACHE, O_OK);
		return 0;
	}
	snprintf(path, sizeof path, API_BLOBS "%s", rand_r(&c->seed) % 2 ? vars[v].dw : d_input);
	st = call(c, K_HEAD, "HEAD", path, NULL, 0, NULL);
	if (st == -2)
		return -2;
	if (st != 200 && st != 404) {
		show_fail(c, "head", "HEAD", path, st);
		note(c, K_HEAD, O_FAIL);
		return -1;
	}
	note(c, K_HEAD, O_OK);
	return 0;
}

static int iter_mix(client *c)
{
	int v = (int)(rand_r(&c->seed) % (unsigned)opt.variants);
	unsigned what = rand_r(&c->seed) % 10;

	if (what < 3)
		return mix_compile(c, v);
	if (what < 8)
		return mix_run(c, v);
	return mix_read(c, v);
}

static void *client_main(void *arg)
{
	client *c = arg;

	while (!atomic_load(&stopping)) {
		int r;

		if (opt.requests && atomic_load(&measuring) && atomic_fetch_sub(&tickets, 1) <= 0)
			break;
		r = opt.mix ? iter_mix(c) : iter_run(c);
		if (r == 0 && atomic_load(&measuring))
			c->iters++;
		else if (r == 0)
			atomic_fetch_add(&warm_iters, 1);
	}
	return NULL;
}

/* ---- setup ---- */

static int add_tensor(enpu_tlist *l, const char *name, int nd, int64_t d0, int64_t d1,
		      uint32_t *seed, enpu_err *e)
{
	enpu_tensor t;
	uint64_t n = 0;

	memset(&t, 0, sizeof t);
	t.name = strdup(name);
	t.dtype = ENPU_DT_F32;
	t.shape.ndim = nd;
	t.shape.dim[0] = d0;
	t.shape.dim[1] = d1;
	if (!t.name) {
		enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
		return -1;
	}
	if (enpu_tensor_alloc(&t, NULL, e) != 0 || enpu_shape_numel(&t.shape, &n) != 0)
		goto fail;
	for (uint64_t i = 0; i < n; i++) {
		*seed = *seed * 1664525u + 1013904223u;
		t.data[i] = (float)((double)(*seed >> 8) / (double)(1u << 23) - 1.0);
	}
	if (enpu_tlist_push(l, &t, e) == 0)
		return 0;
fail:
	enpu_tensor_free(&t);
	return -1;
}

/* Variant v of tiny_mlp: hidden size 8 + 4v, and on odd v the relu before
 * the bias (another op order): every variant is a distinct spec and
 * artifact, with its own weights.npz (written by the project's writer). */
static int make_variant(int v, const char *tmpdir, variant *x)
{
	enpu_tlist l = ENPU_TLIST_INIT;
	enpu_err e = ENPU_ERR_INIT;
	enpu_buf s = ENPU_BUF_INIT, w = ENPU_BUF_INIT;
	uint32_t seed = 12345u + (uint32_t)v;
	int h = 8 + 4 * v, ret = -1;
	char path[4200], msg[1024];

	if (enpu_buf_addf(&s, "# loadgen mix variant %d\neulernpu: 1\nname: mix%d\nbackend: cpu_ref\n"
			  "inputs:\n  - {name: x, dtype: float32, shape: [1, 8]}\n"
			  "outputs: [logits]\nweights:\n"
			  "  - {name: fc1.w, dtype: float32, shape: [8, %d]}\n"
			  "  - {name: fc1.b, dtype: float32, shape: [%d]}\n"
			  "  - {name: fc2.w, dtype: float32, shape: [%d, 4]}\n"
			  "  - {name: fc2.b, dtype: float32, shape: [4]}\n"
			  "components:\n  - name: hidden\n    ops:\n"
			  "      - {name: fc1, op: matmul, in: [x, fc1.w], out: h1}\n%s"
			  "  - name: head\n    ops:\n"
			  "      - {name: fc2, op: matmul, in: [h, fc2.w], out: z}\n"
			  "      - {name: bias2, op: add, in: [z, fc2.b], out: logits}\n",
			  v, v, h, h, h,
			  v % 2 ? "      - {name: act1, op: relu, in: [h1], out: h2}\n"
				  "      - {name: bias1, op: add, in: [h2, fc1.b], out: h}\n"
				: "      - {name: bias1, op: add, in: [h1, fc1.b], out: h2}\n"
				  "      - {name: act1, op: relu, in: [h2], out: h}\n") != 0) {
		enpu_fail(&e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
		goto out;
	}
	snprintf(path, sizeof path, "%s/w%d.npz", tmpdir, v);
	if (add_tensor(&l, "fc1.w", 2, 8, h, &seed, &e) || add_tensor(&l, "fc1.b", 1, h, 0, &seed, &e) ||
	    add_tensor(&l, "fc2.w", 2, h, 4, &seed, &e) || add_tensor(&l, "fc2.b", 1, 4, 0, &seed, &e) ||
	    enpu_npz_write(path, &l, &e) || enpu_read_file(path, 0, &w, &e))
		goto out;
	unlink(path);
	x->spec_len = s.len;
	x->spec = enpu_buf_detach(&s, NULL);
	x->weights_len = w.len;
	x->weights = enpu_buf_detach(&w, NULL);
	enpu_sha256_hex(x->spec, x->spec_len, x->ds);
	enpu_sha256_hex(x->weights, x->weights_len, x->dw);
	ret = 0;
out:
	if (ret) {
		enpu_err_render(&e, msg, sizeof msg);
		fprintf(stderr, "loadgen: variant %d:\n%s\n", v, msg);
	}
	enpu_tlist_free(&l);
	enpu_buf_free(&s);
	enpu_buf_free(&w);
	return ret;
}

static int read_example(const char *name, enpu_buf *b, char d[65])
{
	char path[4200], msg[1024];
	enpu_err e = ENPU_ERR_INIT;

	snprintf(path, sizeof path, "%s/%s", opt.example, name);
	if (enpu_read_file(path, 0, b, &e) != 0) {
		enpu_err_render(&e, msg, sizeof msg);
		fprintf(stderr, "loadgen: %s\n", msg);
		return -1;
	}
	enpu_sha256_hex(b->data, b->len, d);
	return 0;
}

/* Before the clients start: the files, the variants, and for run the one
 * compile and a first job whose result is the reference. */
static int setup(client *c)
{
	char tmpdir[] = "/tmp/loadgen.XXXXXX", res[65];

	if (read_example("spec.yaml", &ex_spec, d_spec) || read_example("weights.npz", &ex_weights, d_weights) ||
	    read_example("input.npz", &ex_input, d_input))
		return -1;
	if (put_blob(c, d_input) != 0)
		return -1;
	if (opt.mix) {
		int r = 0;

		if (!(vars = calloc((size_t)opt.variants, sizeof *vars)) || !mkdtemp(tmpdir)) {
			fprintf(stderr, "loadgen: cannot make the variants: %s\n", strerror(errno));
			return -1;
		}
		for (int v = 0; v < opt.variants && !r; v++)
			r = make_variant(v, tmpdir, &vars[v]);
		rmdir(tmpdir);
		return r;
	}
	if (put_blob(c, d_spec) || put_blob(c, d_weights) ||
	    compile(c, d_spec, d_weights, "spec.yaml", run_art) || job_once(c, run_art, 0, res) != J_OK)
		return -1;
	snprintf(run_ref, sizeof run_ref, "%s", res);
	return 0;
}

/* GET /v1/cache's evictions (mix), or -1. */
static long evictions(client *c)
{
	json_object *o, *v;
	long n = -1;

	if (http(c, "GET", API_CACHE, NULL, 0, NULL) != 200 || !(o = resp_json(c)))
		return -1;
	if (json_object_object_get_ex(o, F_EVICTIONS, &v))
		n = (long)json_object_get_int64(v);
	json_object_put(o);
	return n;
}

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

/* The summary table on stdout and, with --json, the same as JSON. */
static int report(client *cs, double secs, long rss_warm, long rss_end, long evicted)
{
	kstat all[K_N];
	long tot[5] = {0}, iters = 0;
	json_object *o = json_object_new_object(), *kinds = json_object_new_object();
	int ret = 0;

	memset(all, 0, sizeof all);
	for (int i = 0; i < opt.clients; i++) {
		iters += cs[i].iters;
		for (int k = 0; k < K_N; k++) {
			kstat *a = &all[k], *b = &cs[i].ks[k];
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
	printf("loadgen: scenario %s, %d clients, %.1f s measured%s\n", opt.scenario, opt.clients,
	       secs, opt.warmup > 0 || opt.warmup_iters > 0 ? " after the warm-up" : "");
	printf("%-10s %9s %9s %7s %9s %7s %9s %9s %9s %9s\n", "kind", "requests", "ok", "429",
	       "recovered", "failed", "p50 ms", "p90 ms", "p99 ms", "max ms");
	for (int k = 0; k < K_N; k++) {
		kstat *a = &all[k];
		json_object *j;
		double p50, p90, p99, mx;

		tot[0] += a->req;
		tot[1] += a->ok;
		tot[2] += a->q429;
		tot[3] += a->recovered;
		tot[4] += a->fail;
		if (!a->req)
			continue;
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
	printf("%-10s %9ld %9ld %7ld %9ld %7ld\n", "total", tot[0], tot[1], tot[2], tot[3], tot[4]);
	printf("throughput: %.1f requests/s, %.1f iterations/s (%ld iterations)\n",
	       secs > 0 ? (double)tot[0] / secs : 0, secs > 0 ? (double)iters / secs : 0, iters);
	if (opt.daemon_pid)
		printf("daemon RSS: %ld KiB after the warm-up, %ld KiB at the end\n", rss_warm, rss_end);
	if (opt.mix)
		printf("cache evictions: %ld\n", evicted);
	else
		printf("result digest: %s (every result byte-equal to it)\n", run_ref);

	json_object_object_add(o, "scenario", json_object_new_string(opt.scenario));
	json_object_object_add(o, "clients", json_object_new_int(opt.clients));
	json_object_object_add(o, "seconds", json_object_new_double(secs));
	json_object_object_add(o, "requests", json_object_new_int64(tot[0]));
	json_object_object_add(o, "ok", json_object_new_int64(tot[1]));
	json_object_object_add(o, "http_429", json_object_new_int64(tot[2]));
	json_object_object_add(o, "recovered", json_object_new_int64(tot[3]));
	json_object_object_add(o, "failures", json_object_new_int64(tot[4]));
	json_object_object_add(o, "iterations", json_object_new_int64(iters));
	json_object_object_add(o, "requests_per_s", json_object_new_double(secs > 0 ? (double)tot[0] / secs : 0));
	json_object_object_add(o, "iterations_per_s", json_object_new_double(secs > 0 ? (double)iters / secs : 0));
	json_object_object_add(o, "rss_warm_kib", json_object_new_int64(rss_warm));
	json_object_object_add(o, "rss_end_kib", json_object_new_int64(rss_end));
	json_object_object_add(o, "evictions", json_object_new_int64(evicted));
	if (!opt.mix)
		json_object_object_add(o, "result_digest", json_object_new_string(run_ref));
	json_object_object_add(o, "kinds", kinds);
	if (opt.json && json_object_to_file_ext(opt.json, o, JSON_C_TO_STRING_PRETTY) != 0) {
		fprintf(stderr, "loadgen: cannot write %s\n", opt.json);
		ret = -1;
	}
	json_object_put(o);
	for (int k = 0; k < K_N; k++)
		free(all[k].lat);
	return tot[4] ? -1 : ret;
}

int main(int argc, char **argv)
{
	client *cs = NULL, setup_c;
	pthread_t *th = NULL;
	long rss_warm = -1, rss_end = -1, evicted = -1;
	double t0, secs;
	int started = 0, ret = 1;

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
	if (opt.warmup > 0 || opt.warmup_iters > 0) {
		double give_up = now_s() + opt.warmup + WARMUP_MAX_S;

		sleep_s(opt.warmup);
		while (atomic_load(&warm_iters) < opt.warmup_iters && now_s() < give_up)
			sleep_s(0.05);
		atomic_store(&measuring, 1);
	}
	if (opt.daemon_pid)
		rss_warm = rss_kib(opt.daemon_pid);
	t0 = now_s();
	while (!atomic_load(&stopping) && (opt.requests ? atomic_load(&tickets) > 0
							: now_s() - t0 < opt.seconds))
		sleep_s(0.05);
	atomic_store(&stopping, 1);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	secs = now_s() - t0;
	for (int i = 0; i < opt.clients; i++)
		if (cs[i].h)
			curl_easy_cleanup(cs[i].h);
	if (opt.mix) {
		setup_c.h = curl_easy_init();
		evicted = setup_c.h ? evictions(&setup_c) : -1;
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
	for (int v = 0; vars && v < opt.variants; v++) {
		free(vars[v].spec);
		free(vars[v].weights);
	}
	free(vars);
	enpu_buf_free(&ex_spec);
	enpu_buf_free(&ex_weights);
	enpu_buf_free(&ex_input);
	curl_global_cleanup();
	return ret;
}

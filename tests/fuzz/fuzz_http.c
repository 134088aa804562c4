/* fuzz_http.c: libFuzzer target for eulernpud's request handling. Each
 * input is the raw bytes a client writes on one connection; they go through
 * the real daemon (libmicrohttpd, server/http/http.c, the route table and its
 * handlers) listening on a Unix socket in a temporary directory, whose cache
 * holds tiny_mlp's blobs, its artifacts for cpu_ref and npu_sim and two
 * finished jobs, so that requests naming valid digests reach the deep paths
 * (put back before each input when an earlier one deleted or evicted them).
 *
 * The seeds (tests/fuzz/seeds/http, made by gen.py there) name the blobs and
 * the artifacts by their real digests. Job ids are random, so two 16-byte
 * markers stand for them and are replaced before an input is sent:
 * JOB_ID_KNOWN_000 (a succeeded job) and JOB_ID_FAILED_00 (a failed one).
 *
 * An input fails (abort) when the daemon does not close the connection in
 * time (a hang), or answers 5xx other than 501/503/505/507 (500 is E0001,
 * a bug; 501/505 are libmicrohttpd's answers to what it does not support;
 * 503/507 are documented refusals), or answers with no HTTP/1.x status line.
 *
 * LeakSanitizer stays on (libFuzzer's default -detect_leaks=1): the daemon's
 * long-lived state (job table, CAS, metrics, MHD) is reachable from globals
 * and thread stacks, so LSan does not report it, and each input waits for
 * its request to be completed (and freed) before it returns. (LSan does
 * catch a block lost in another thread under libFuzzer on this machine:
 * checked with a throwaway target.) */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <curl/curl.h>
#include <json-c/json.h>
#include "srv.h"
#include "buf.h"
#include "digest.h"
#include "cas.h"
#include "jobs.h"
#include "boards.h"
#include "http.h"
#include "artifact.h"
#include "metrics.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The artifact ids of tiny_mlp on cpu_ref and npu_sim that the seeds name
 * (gen.py wrote the same). Checked at start: a mismatch only means stale
 * seeds. */
#define SEED_ARTIFACT     "e65d08f6ef01908b0f2c6ebed6f640656cf79ba6460392e15f4caf0ca0edc314"
#define SEED_ARTIFACT_NPU "f64c58f1dbbef448aeabda297a4a65ad4697823c7aa6a8303cc791e19fec96c9"

#define MARK_OK     "JOB_ID_KNOWN_000"
#define MARK_FAILED "JOB_ID_FAILED_00"
#define MARK_LEN    16

#define IO_LIMIT_S     8.0          /* one exchange; > conn_timeout + job_timeout */
#define REPLY_KEEP     (1u << 20)   /* bytes of a reply kept for the checks */
#define SETTLE_S       3.0          /* wait for the request to be completed */

static srv_ctx ctx;
static struct MHD_Daemon *mhd;
static int listen_fd = -1;
static char tmp_dir[512], sock_path[600];
static char spec_d[65], weights_d[65], input_d[65], art_id[65], art_npu[65];
static char ok_job[33], failed_job[33];
static char ex_dir[PATH_MAX];
static int ready;
static int show_replies;      /* FUZZ_HTTP_SHOW=1: print each reply (replaying seeds) */

/* ---- one connection --------------------------------------------------------- */

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Write req on a new connection, half-close, read until EOF. 0 = EOF came,
 * 1 = the daemon neither closed nor answered within limit_s, -1 = cannot
 * connect. The reply's first REPLY_KEEP bytes go to out. */
static int exchange(const void *req, size_t n, enpu_buf *out, double limit_s)
{
	struct sockaddr_un sa;
	double end = now_s() + limit_s;
	size_t off = 0;
	int fd, rc = 1, wdone = 0;
	char buf[16384];

	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof sa.sun_path, "%.*s", (int)sizeof sa.sun_path - 1, sock_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	while (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
		/* a full backlog (EAGAIN) clears as the daemon accepts */
		if (errno != EAGAIN || now_s() > end) {
			close(fd);
			return -1;
		}
		usleep(1000);
	}
	if (n == 0) {
		shutdown(fd, SHUT_WR);
		wdone = 1;
	}
	for (;;) {
		struct pollfd p = {fd, (short)(POLLIN | (wdone ? 0 : POLLOUT)), 0};
		int ms = (int)((end - now_s()) * 1000.0);
		ssize_t k;

		if (ms <= 0)
			break;
		if (poll(&p, 1, ms) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (!wdone && (p.revents & (POLLOUT | POLLERR | POLLHUP))) {
			k = send(fd, (const char *)req + off, n - off, MSG_NOSIGNAL);
			if (k > 0)
				off += (size_t)k;
			else if (k < 0 && errno != EAGAIN && errno != EINTR)
				off = n;   /* EPIPE, ECONNRESET: the daemon closed; read what it said */
			if (off == n) {
				shutdown(fd, SHUT_WR);
				wdone = 1;
			}
		}
		if (p.revents & (POLLIN | POLLERR | POLLHUP)) {
			k = recv(fd, buf, sizeof buf, 0);
			if (k > 0) {
				size_t keep = out->len < REPLY_KEEP ? REPLY_KEEP - out->len : 0;
				if (keep)
					enpu_buf_add(out, buf, (size_t)k < keep ? (size_t)k : keep);
			} else if (k == 0 || (errno != EAGAIN && errno != EINTR)) {
				rc = 0;
				break;
			}
		}
	}
	close(fd);
	return rc;
}

/* Wait until the daemon has completed (and freed) every request, so that a
 * leak check after this input sees a quiet heap. */
static void settle(void)
{
	double end = now_s() + SETTLE_S;

	while (srv_http_active() > 0 && now_s() < end)
		usleep(200);
}

/* The JSON body of a reply (Content-Length framed, as the daemon's JSON
 * replies are). NULL if none. Caller puts. */
static json_object *reply_json(const enpu_buf *b, int *status)
{
	const char *body;

	*status = 0;
	if (!b->data || sscanf(b->data, "HTTP/1.%*c %d", status) != 1)
		return NULL;
	body = strstr(b->data, "\r\n\r\n");
	return body ? json_tokener_parse(body + 4) : NULL;
}

static json_object *request(const char *req, int *status)
{
	enpu_buf b = ENPU_BUF_INIT;
	json_object *o = NULL;

	*status = 0;
	if (exchange(req, strlen(req), &b, 30.0) == 0)
		o = reply_json(&b, status);
	enpu_buf_free(&b);
	settle();
	return o;
}

static json_object *post_json(const char *path, const char *body, int *status)
{
	char req[2048];

	snprintf(req, sizeof req, "POST %s HTTP/1.1\r\nHost: localhost\r\n"
		 "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
		 path, strlen(body), body);
	return request(req, status);
}

/* ---- the state that seeds refer to ------------------------------------------- */

static void die(const char *what) __attribute__((noreturn));
static void die(const char *what)
{
	fprintf(stderr, "fuzz_http: %s\n", what);
	abort();
}

static void put_example(const char *name, char digest[65])
{
	char p[PATH_MAX + 64];
	enpu_err e = ENPU_ERR_INIT;

	snprintf(p, sizeof p, "%s/%s", ex_dir, name);
	if (srv_cas_put_file(ctx.cas, p, digest, &e) != 0) {
		fprintf(stderr, "fuzz_http: %s: %s\n", p, e.message);
		abort();
	}
}

static void compile_known(const char *backend, char id[65])
{
	char body[256];
	int st;
	json_object *o, *v;

	snprintf(body, sizeof body, "{\"spec\":\"%s\",\"weights\":\"%s\",\"backend\":\"%s\"}",
		 spec_d, weights_d, backend);
	o = post_json(API_COMPILE, body, &st);
	if (st != 200 || !json_object_object_get_ex(o, F_ARTIFACT_ID, &v))
		die("cannot compile tiny_mlp through POST /v1/compile");
	snprintf(id, 65, "%s", json_object_get_string(v));
	json_object_put(o);
}

/* Run the known artifact on input until the job ends in state want (the
 * queue may hold an earlier input's jobs: one can time out waiting). */
static void run_known(const char *input, char id[33], const char *want)
{
	char body[256];
	int st, tries;
	json_object *o = NULL, *v, *s;

	snprintf(body, sizeof body, "{\"artifact\":\"%s\",\"input\":\"%s\"}", art_id, input);
	for (tries = 0; tries < 5; tries++) {
		json_object_put(o);
		o = post_json(API_JOBS "?wait=20", body, &st);
		if (json_object_object_get_ex(o, F_ID, &v) && json_object_object_get_ex(o, F_STATE, &s) &&
		    !strcmp(json_object_get_string(s), want)) {
			snprintf(id, 33, "%s", json_object_get_string(v));
			json_object_put(o);
			return;
		}
	}
	fprintf(stderr, "fuzz_http: POST /v1/jobs: status %d, %s\n", st,
		o ? json_object_to_json_string(o) : "(no JSON)");
	die("the known job did not end as expected");
}

/* Put back what the previous inputs removed (DELETE /v1/cache/entries,
 * eviction under --cache-max, jobs past --job-history): a few stat()s when
 * nothing is missing. */
static void ensure_state(void)
{
	char dig[65];
	const char *state;

	if (!srv_cas_has(ctx.cas, spec_d, NULL))
		put_example("spec.yaml", spec_d);
	if (!srv_cas_has(ctx.cas, weights_d, NULL))
		put_example("weights.npz", weights_d);
	if (!srv_cas_has(ctx.cas, input_d, NULL))
		put_example("input.npz", input_d);
	if (!art_id[0] || !srv_artifact_present(ctx.cas, art_id))
		compile_known("cpu_ref", art_id);
	if (!art_npu[0] || !srv_artifact_present(ctx.cas, art_npu))
		compile_known("npu_sim", art_npu);
	if (!ok_job[0] || srv_jobs_result(ctx.jobs, ok_job, dig, &state) != 1 ||
	    !srv_cas_has(ctx.cas, dig, NULL) || srv_jobs_report(ctx.jobs, ok_job, dig, &state) != 1 ||
	    !srv_cas_has(ctx.cas, dig, NULL))
		run_known(input_d, ok_job, JOB_SUCCEEDED);
	/* the weights are no input of the model: the run fails */
	if (!failed_job[0] || srv_jobs_result(ctx.jobs, failed_job, dig, &state) < 0)
		run_known(weights_d, failed_job, JOB_FAILED);
}

/* ---- start and stop ------------------------------------------------------------ */

/* Temp directories of earlier runs that crashed (no atexit then): removed
 * when the process named in them is gone. */
static void sweep_stale(const char *base)
{
	DIR *d = opendir(base);
	struct dirent *de;
	char p[1024];

	while (d && (de = readdir(d))) {
		long pid;
		char *end;
		if (strncmp(de->d_name, "fuzz_http.", 10) != 0)
			continue;
		pid = strtol(de->d_name + 10, &end, 10);
		if (pid <= 0 || *end != '.' || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(p, sizeof p, "%s/%s", base, de->d_name);
		srv_rmtree(p);
	}
	if (d)
		closedir(d);
}

static void stop_daemon(void)
{
	int i, s;

	if (!mhd)
		return;
	ctx.stopping = 1;
	ctx.draining = 1;
	s = srv_http_quiesce(mhd);
	if (s >= 0)
		close(s);
	srv_jobs_shutdown(ctx.jobs);
	for (i = 0; i < 50 && srv_http_active() > 0; i++)
		usleep(100000);
	srv_http_stop(mhd);
	mhd = NULL;
	srv_boards_free(ctx.boards);
	ctx.boards = NULL;
	srv_jobs_free(ctx.jobs);
	ctx.jobs = NULL;
	srv_cas_close(ctx.cas);
	ctx.cas = NULL;
	srv_artifact_cache_clear();
	curl_global_cleanup();
	srv_log_close();
	srv_rmtree(tmp_dir);
}

/* The example's directory: FUZZ_HTTP_EXAMPLE, else examples/tiny_mlp from
 * the working directory or next to the binary's parent (build-fuzz/..). */
static void find_example(const char *argv0)
{
	const char *env = getenv("FUZZ_HTTP_EXAMPLE");
	char exe[PATH_MAX], *slash;
	ssize_t n;
	(void)argv0;

	if (env && *env) {
		snprintf(ex_dir, sizeof ex_dir, "%s", env);
		return;
	}
	snprintf(ex_dir, sizeof ex_dir, "examples/tiny_mlp");
	if (access("examples/tiny_mlp/spec.yaml", R_OK) == 0)
		return;
	n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = '\0';
		if ((slash = strrchr(exe, '/')))
			*slash = '\0';
		snprintf(ex_dir, sizeof ex_dir, "%.4000s/../examples/tiny_mlp", exe);
		if (access(ex_dir, R_OK) == 0)
			return;
	}
	die("cannot find examples/tiny_mlp: run from the source tree or set FUZZ_HTTP_EXAMPLE");
}

/* The daemon's defaults with the limits tightened so that one input cannot
 * take long or hold much. */
static void config(srv_config *c, const char *cache)
{
	srv_config_defaults(c);
	c->cache_dir = cache;
	c->socket_path = sock_path;
	c->workers = 1;
	c->max_upload = 8u << 10;     /* small: inputs reach the limits while streaming */
	c->max_queue = 4;
	c->conn_timeout = 2;
	c->job_timeout = 2;
	c->job_ttl = 60;
	c->job_history = 16;
	c->cache_max = 512u << 10;    /* small: eviction runs too */
	c->limits.max_tensor_elems = 1u << 16;
	c->limits.max_tensor_bytes = 1u << 18;
	c->limits.max_npz_members = 64;
	c->limits.max_npz_bytes = 1u << 20;
	c->limits.max_spec_bytes = 4u << 10;
	c->limits.max_yaml_depth = 32;
	c->limits.max_yaml_nodes = 1u << 14;
	c->limits.max_ops = 256;
	c->max_json_bytes = 4u << 10;
	c->request_timeout = 2;
	c->drain_timeout = 5;
}

static void enforce_cb(void *arg)
{
	srv_cache_enforce(arg);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *base = getenv("ENPU_FUZZ_TMP");   /* tests/fuzz/run.sh's, removed after */
	const char *log = getenv("FUZZ_HTTP_LOG");
	char cache[600];
	struct sockaddr_un sa;
	enpu_err e = ENPU_ERR_INIT;

	if (!base || !*base)
		base = getenv("TMPDIR");
	if (!base || !*base)
		base = "/tmp";
	signal(SIGPIPE, SIG_IGN);
	find_example(argc && *argc > 0 ? (*argv)[0] : NULL);
	sweep_stale(base);
	snprintf(tmp_dir, sizeof tmp_dir, "%.400s/fuzz_http.%ld.XXXXXX", base, (long)getpid());
	if (!mkdtemp(tmp_dir))
		die("mkdtemp failed");
	snprintf(cache, sizeof cache, "%s/cache", tmp_dir);
	snprintf(sock_path, sizeof sock_path, "%s/d.sock", tmp_dir);
	if (strlen(sock_path) >= sizeof sa.sun_path)
		die("socket path too long (set TMPDIR shorter)");
	config(&ctx.cfg, cache);
	ctx.lim = &ctx.cfg.limits;
	/* FUZZ_HTTP_LOG=FILE keeps the daemon's log (info); else errors only,
	 * to /dev/null, so that a long run does not fill a disk */
	if (srv_log_open(log && *log ? log : "/dev/null") != 0)
		die("cannot open the log");
	srv_log_set_level(log && *log ? "info" : "error");
	curl_global_init(CURL_GLOBAL_DEFAULT);
	atexit(stop_daemon);

	ctx.cas = srv_cas_open(cache, &e);
	if (!ctx.cas)
		die(e.message);
	ctx.jobs = srv_jobs_start(ctx.cas, ctx.lim, ctx.cfg.workers, ctx.cfg.threads,
				  ctx.cfg.max_queue, &e);
	if (!ctx.jobs)
		die(e.message);
	srv_jobs_on_store(ctx.jobs, enforce_cb, &ctx);
	srv_jobs_set_policy(ctx.jobs, ctx.cfg.job_timeout, ctx.cfg.job_ttl, ctx.cfg.job_history);
	ctx.boards = srv_boards_start(&ctx, &e);
	if (!ctx.boards)
		die(e.message);

	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof sa.sun_path, "%.*s", (int)sizeof sa.sun_path - 1, sock_path);
	listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (listen_fd < 0 || bind(listen_fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
	    listen(listen_fd, 128) != 0)
		die("cannot listen on the Unix socket");
	mhd = srv_http_start(&ctx, listen_fd);
	if (!mhd)
		die("srv_http_start failed");

	ensure_state();
	if (strcmp(art_id, SEED_ARTIFACT) != 0 || strcmp(art_npu, SEED_ARTIFACT_NPU) != 0)
		fprintf(stderr, "fuzz_http: note: tiny_mlp compiles to artifacts %s (cpu_ref) and %s "
			"(npu_sim), the seeds name %s and %s: regenerate them "
			"(tests/fuzz/seeds/http/gen.py)\n", art_id, art_npu, SEED_ARTIFACT,
			SEED_ARTIFACT_NPU);
	show_replies = getenv("FUZZ_HTTP_SHOW") && *getenv("FUZZ_HTTP_SHOW") == '1';
	ready = 1;
	return 0;
}

/* ---- the checks of a reply ------------------------------------------------------ */

/* Walk the responses of a reply (several when requests were pipelined) and
 * return the first status that is a bug, 0 if none. Framing it does not
 * understand (a HEAD reply's Content-Length, a cut body) ends the walk. */
static int bad_status(const char *p, size_t n, int *bad_at)
{
	size_t off = 0;

	while (off + 12 <= n) {
		const char *r = p + off, *hend, *h;
		int st;
		unsigned long long cl = 0;
		int have_cl = 0, chunked = 0;

		if (memcmp(r, "HTTP/1.", 7) != 0 || r[8] != ' ' ||
		    r[9] < '1' || r[9] > '5' || r[10] < '0' || r[10] > '9' || r[11] < '0' || r[11] > '9')
			return off == 0 ? -1 : 0;
		st = (r[9] - '0') * 100 + (r[10] - '0') * 10 + (r[11] - '0');
		if (st >= 500 && st != 501 && st != 503 && st != 505 && st != 507) {
			*bad_at = (int)off;
			return st;
		}
		hend = memmem(r, n - off, "\r\n\r\n", 4);
		if (!hend)
			return 0;
		for (h = r; h < hend; h++) {
			if (*h != '\n')
				continue;
			if (!strncasecmp(h + 1, "Content-Length:", 15)) {
				cl = strtoull(h + 16, NULL, 10);
				have_cl = 1;
			} else if (!strncasecmp(h + 1, "Transfer-Encoding: chunked", 26)) {
				chunked = 1;
			}
		}
		off = (size_t)(hend + 4 - p);
		if (st < 200 || st == 204 || st == 304)
			continue;
		if (chunked) {
			for (;;) {
				char *end;
				unsigned long long len;
				if (off >= n)
					return 0;
				len = strtoull(p + off, &end, 16);
				if (end == p + off || (size_t)(end - p) > n)
					return 0;
				h = memmem(end, n - (size_t)(end - p), "\r\n", 2);
				if (!h || len > n)
					return 0;
				off = (size_t)(h + 2 - p) + len + 2;
				if (len == 0)
					break;
			}
		} else if (have_cl) {
			if (cl > n - off)
				return 0;
			off += cl;
		} else {
			return 0;   /* read to the end */
		}
	}
	return 0;
}

static void show(const char *what, const uint8_t *p, size_t n)
{
	size_t i, m = n < 4096 ? n : 4096;

	fprintf(stderr, "---- %s (%zu bytes) ----\n", what, n);
	for (i = 0; i < m; i++) {
		unsigned char c = p[i];
		if (c == '\n' || (c >= 0x20 && c < 0x7f))
			fputc(c, stderr);
		else if (c != '\r')
			fprintf(stderr, "\\x%02x", c);
	}
	fprintf(stderr, "\n---- end ----\n");
}

/* ---- one input -------------------------------------------------------------------- */

static void replace_marks(uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i + MARK_LEN <= n; i++) {
		if (p[i] != 'J')
			continue;
		if (!memcmp(p + i, MARK_OK, MARK_LEN))
			memcpy(p + i, ok_job, MARK_LEN);
		else if (!memcmp(p + i, MARK_FAILED, MARK_LEN))
			memcpy(p + i, failed_job, MARK_LEN);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enpu_buf reply = ENPU_BUF_INIT;
	uint8_t *req;
	int rc, st, at = 0;

	if (!ready)
		return 0;
	ensure_state();
	req = malloc(size ? size : 1);
	if (!req)
		return 0;
	memcpy(req, data, size);
	replace_marks(req, size);
	rc = exchange(req, size, &reply, IO_LIMIT_S);
	if (rc < 0)
		die("cannot connect to the daemon");
	if (rc > 0) {
		show("request", req, size);
		show("reply so far", (const uint8_t *)reply.data, reply.len);
		fprintf(stderr, "fuzz_http: the daemon neither answered nor closed the connection "
			"within %.0f s\n", IO_LIMIT_S);
		abort();
	}
	if (show_replies)
		show("reply", (const uint8_t *)reply.data, reply.len);
	st = bad_status(reply.data, reply.len, &at);
	if (st < 0) {
		show("request", req, size);
		show("reply", (const uint8_t *)reply.data, reply.len);
		die("the reply does not start with an HTTP/1.x status line");
	}
	if (st > 0) {
		show("request", req, size);
		show("reply", (const uint8_t *)reply.data + at, reply.len - (size_t)at);
		fprintf(stderr, "fuzz_http: status %d: a server error on a client's input\n", st);
		abort();
	}
	free(req);
	enpu_buf_free(&reply);
	settle();
	return 0;
}

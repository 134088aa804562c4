/* main.c: eulernpud, the daemon. Flags and defaults, the listening sockets
 * (a private Unix socket and/or TCP), signals, the idle timer, and an
 * orderly stop: stop accepting, let running jobs finish, remove the socket
 * and pid file. Everything after flag parsing is logged, never printed. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <curl/curl.h>
#include "srv.h"
#include "buf.h"
#include "boards.h"
#include "pl.h"
#include "cas.h"
#include "jobs.h"
#include "http.h"
#include "artifact.h"

static const char usage[] =
"usage: eulernpud [options]\n"
"\n"
"The eulernpu daemon: a content-addressed cache of compiled artifacts and a\n"
"worker pool, serving the REST API (v1) on a Unix socket and/or TCP.\n"
"\n"
"  --socket PATH         listen on this Unix socket (mode 0600, parent dir 0700);\n"
"                        default $XDG_RUNTIME_DIR/eulernpu/eulernpud.sock, else\n"
"                        /tmp/eulernpu-$UID/eulernpud.sock (used when --listen is absent)\n"
"  --listen HOST:PORT    listen on TCP as well (or only); port 0 picks a free port\n"
"  --port-file FILE      write the TCP port there once listening\n"
"  --cache DIR           cache directory (default $XDG_CACHE_HOME/eulernpu,\n"
"                        else ~/.cache/eulernpu)\n"
"  --workers N           job worker threads (default: number of cores)\n"
"  --threads N           kernel threads per job (default 1)\n"
"  --max-upload BYTES    largest request body (default 1073741824 = 1 GiB)\n"
"  --max-queue N         jobs waiting at most; past it 429 + Retry-After\n"
"                        (default 256; 0 = run no jobs: a compile-only cache)\n"
"  --idle-exit SECONDS   exit after this long with no requests and no jobs\n"
"                        (default 0 = never)\n"
"  --conn-limit N        simultaneous connections (default 64)\n"
"  --conn-timeout SEC    idle connection timeout (default 60)\n"
"  --log FILE            log here instead of stderr (one line per request)\n"
"  --cache-max BYTES     keep at most this many bytes of blobs in the cache\n"
"                        (default 0 = unbounded). Past it, the least recently\n"
"                        used blobs that no queued or running job needs are\n"
"                        evicted, then artifacts that lost a file (a later run\n"
"                        uploads them again)\n"
"  --pid-file FILE       write the daemon's pid there (removed at exit)\n"
"  --version             print the version and exit\n"
"  --help                print this help and exit\n"
"\n"
"Roles and boards:\n"
"  --role local|server|board\n"
"                        local (default) and server run cpu_ref and npu_sim jobs\n"
"                        and send zynq_ps and fpga_board jobs to board agents;\n"
"                        board is a board agent: it runs every backend itself\n"
"  --pl emulated         board role: the PL driver. emulated (the default, and\n"
"                        the only one in this build) computes PL segments with\n"
"                        the reference kernels and models the PL cycles\n"
"  --token-file FILE     require 'Authorization: Bearer <token in FILE>' on every\n"
"                        request but GET /v1/health (401 E0814 otherwise)\n"
"  --board NAME=URL      a board agent to send board jobs to (repeatable);\n"
"                        URL is http://HOST:PORT or unix:/PATH\n"
"  --board-token-file FILE  the bearer token to send to the boards\n"
"  --board-health-interval S  seconds between health checks of a board (default 5)\n"
"  --board-backoff-max S  longest wait between checks of a down board; the wait\n"
"                        starts at 1 s and doubles (default 60)\n"
"  --board-timeout S     bound on each HTTP call to a board (default 30)\n"
"  --board-retries N     a job whose board faults runs on another board at most\n"
"                        N more times (default 2)\n"
"  --job-timeout S       a board job's queue and run time together (default 600);\n"
"                        past it the job is cancelled on its board, E0813\n"
"With no board that serves a job's backend, POST /v1/jobs answers 503 E0811.\n"
"\n"
"SIGTERM or SIGINT: stop accepting, finish running jobs, remove the socket, exit 0.\n";

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
	enpu_err e = ENPU_ERR_INIT;
	char line[1536];
	va_list ap;

	e.code = ENPU_E_USAGE;
	va_start(ap, fmt);
	vsnprintf(e.message, sizeof e.message, fmt, ap);
	va_end(ap);
	snprintf(e.fix, sizeof e.fix, "see eulernpud --help");
	enpu_err_render(&e, line, sizeof line);
	fputs(line, stderr);
	return 2;
}

static int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

typedef enum { O_STR, O_INT, O_U64, O_ROLE, O_BOARD } otype;
typedef struct opt {
	const char *name;
	otype type;
	size_t off;          /* into srv_config */
	uint64_t min, max;
} opt;

#define OFF(f) offsetof(srv_config, f)
static const opt opts[] = {   /* sorted by name */
	{"--board",        O_BOARD, 0, 0, 0},
	{"--board-backoff-max", O_INT, OFF(board_backoff_max), 1, 86400},
	{"--board-health-interval", O_INT, OFF(board_health_interval), 1, 86400},
	{"--board-retries", O_INT, OFF(board_retries), 0, 100},
	{"--board-timeout", O_INT, OFF(board_timeout), 1, 86400},
	{"--board-token-file", O_STR, OFF(board_token_file), 0, 0},
	{"--cache",        O_STR, OFF(cache_dir), 0, 0},
	{"--cache-max",    O_U64, OFF(cache_max), 0, UINT64_MAX / 2},
	{"--conn-limit",   O_INT, OFF(conn_limit), 1, 100000},
	{"--conn-timeout", O_INT, OFF(conn_timeout), 1, 86400},
	{"--idle-exit",    O_INT, OFF(idle_exit), 0, INT_MAX},
	{"--job-timeout",  O_INT, OFF(job_timeout), 1, 7 * 86400},
	{"--listen",       O_STR, OFF(listen), 0, 0},
	{"--log",          O_STR, OFF(log_file), 0, 0},
	{"--max-queue",    O_INT, OFF(max_queue), 0, 1000000},
	{"--max-upload",   O_U64, OFF(max_upload), 1, UINT64_MAX / 2},
	{"--pid-file",     O_STR, OFF(pid_file), 0, 0},
	{"--pl",           O_STR, OFF(pl), 0, 0},
	{"--port-file",    O_STR, OFF(port_file), 0, 0},
	{"--role",         O_ROLE, 0, 0, 0},
	{"--socket",       O_STR, OFF(socket_path), 0, 0},
	{"--threads",      O_INT, OFF(threads), 1, 256},
	{"--token-file",   O_STR, OFF(token_file), 0, 0},
	{"--workers",      O_INT, OFF(workers), 1, 1024},
};

/* 0 = go on, 1 = done (help/version printed), 2 = usage error (printed). */
static int parse_flags(int argc, char **argv, srv_config *c)
{
	int i;
	size_t k;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *val = NULL, *eq;
		char name[64];
		const opt *o = NULL;

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage, stdout);
			return 1;
		}
		if (!strcmp(a, "--version")) {
			printf("eulernpud %s (%s)\n", ENPU_VERSION, ENPU_COMPILER_ID);
			return 1;
		}
		eq = strchr(a, '=');
		snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - a) : (int)strlen(a), a);
		for (k = 0; k < sizeof opts / sizeof opts[0]; k++)
			if (!strcmp(opts[k].name, name))
				o = &opts[k];
		if (!o)
			return usage_error("unknown option '%s'", a);
		if (eq)
			val = eq + 1;
		else if (i + 1 < argc)
			val = argv[++i];
		else
			return usage_error("option '%s' needs a value", name);
		if (o->type == O_ROLE) {
			if (!strcmp(val, "local"))
				c->role = SRV_ROLE_LOCAL;
			else if (!strcmp(val, "server"))
				c->role = SRV_ROLE_SERVER;
			else if (!strcmp(val, "board"))
				c->role = SRV_ROLE_BOARD;
			else
				return usage_error("--role '%s' is not one of local, server, board", val);
		} else if (o->type == O_BOARD) {
			enpu_err be = ENPU_ERR_INIT;
			int k2;
			if (c->n_boards == SRV_MAX_BOARDS)
				return usage_error("at most %d --board options", SRV_MAX_BOARDS);
			if (srv_board_parse(val, &c->boards[c->n_boards], &be) != 0)
				return usage_error("%s", be.message);
			for (k2 = 0; k2 < c->n_boards; k2++)
				if (!strcmp(c->boards[k2].name, c->boards[c->n_boards].name))
					return usage_error("board name '%s' is given twice",
							   c->boards[k2].name);
			c->n_boards++;
		} else if (o->type == O_STR) {
			if (!*val)
				return usage_error("option '%s' needs a non-empty value", name);
			*(const char **)((char *)c + o->off) = val;
		} else {
			uint64_t v;
			if (parse_u64(val, o->min, o->max, &v) != 0)
				return usage_error("option '%s': '%s' is not a whole number in [%llu, %llu]",
						   name, val, (unsigned long long)o->min,
						   (unsigned long long)o->max);
			if (o->type == O_INT)
				*(int *)((char *)c + o->off) = (int)v;
			else
				*(uint64_t *)((char *)c + o->off) = v;
		}
	}
	if (c->port_file && !c->listen)
		return usage_error("--port-file needs --listen HOST:PORT");
	if (c->pl && !enpu_pl_by_name(c->pl))
		return usage_error("--pl '%s' is not a PL driver of this build (known: %s)", c->pl,
				   enpu_pl_names());
	if (c->pl && c->role != SRV_ROLE_BOARD)
		return usage_error("--pl applies to a board agent: add --role board");
	if (c->role == SRV_ROLE_BOARD && (c->n_boards || c->board_token_file))
		return usage_error("a board agent (--role board) fronts no boards: drop --board%s",
				   c->board_token_file ? " and --board-token-file" : "");
	return 0;
}

/* ---- sockets ------------------------------------------------------------ */

static char sock_path_buf[4096], cache_buf[4096];

static int open_unix(const char *path)
{
	struct sockaddr_un sa;
	struct stat st;
	char dir[4096], *slash;
	enpu_err e = ENPU_ERR_INIT;
	mode_t old;
	int fd;

	if (strlen(path) >= sizeof sa.sun_path) {
		srv_log("error", "socket path '%s' is too long (at most %zu bytes)", path,
			sizeof sa.sun_path - 1);
		return -1;
	}
	snprintf(dir, sizeof dir, "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (stat(dir, &st) != 0 && enpu_mkdirs(dir, 0700, &e) != 0) {
			srv_log("error", "cannot create '%s': %s", dir, e.message);
			return -1;
		}
	}
	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			srv_log("error", "'%s' exists and is not a socket; not replacing it", path);
			return -1;
		}
		/* Replace a stale socket only when nothing answers on it. */
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0) {
			close(fd);
			srv_log("error", "another daemon is listening on '%s'", path);
			return -1;
		}
		if (fd >= 0)
			close(fd);
		unlink(path);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto fail;
	old = umask(0177);
	if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
		umask(old);
		goto fail;
	}
	umask(old);
	chmod(path, 0600);
	if (listen(fd, 128) != 0)
		goto fail;
	return fd;
fail:
	srv_log("error", "cannot listen on '%s': %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	return -1;
}

static int open_tcp(const char *hostport, int *port)
{
	char host[256], *colon, sport[16];
	struct addrinfo hints, *res = NULL, *ai;
	int fd = -1, one = 1, rc;

	snprintf(host, sizeof host, "%s", hostport);
	colon = strrchr(host, ':');
	if (!colon) {
		srv_log("error", "--listen '%s' is not HOST:PORT", hostport);
		return -1;
	}
	*colon = '\0';
	snprintf(sport, sizeof sport, "%s", colon + 1);
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = '\0';
	}
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	rc = getaddrinfo(host[0] ? host : NULL, sport, &hints, &res);
	if (rc != 0) {
		srv_log("error", "--listen '%s': %s", hostport, gai_strerror(rc));
		return -1;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 128) == 0)
			break;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		srv_log("error", "cannot listen on '%s': %s", hostport, strerror(errno));
		return -1;
	}
	{
		struct sockaddr_storage ss;
		socklen_t sl = sizeof ss;
		getsockname(fd, (struct sockaddr *)&ss, &sl);
		*port = ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
						 : ntohs(((struct sockaddr_in *)&ss)->sin_port);
	}
	return fd;
}

static void defaults(srv_config *c)
{
	const char *x;

	memset(c, 0, sizeof *c);
	c->workers = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (c->workers < 1)
		c->workers = 1;
	c->threads = 1;
	c->max_upload = 1ull << 30;
	c->max_queue = 256;
	c->conn_limit = 64;
	c->conn_timeout = 60;
	c->board_health_interval = 5;
	c->board_timeout = 30;
	c->board_backoff_max = 60;
	c->job_timeout = 600;
	c->board_retries = 2;
	if ((x = getenv("XDG_CACHE_HOME")) && *x)
		snprintf(cache_buf, sizeof cache_buf, "%s/eulernpu", x);
	else
		snprintf(cache_buf, sizeof cache_buf, "%s/.cache/eulernpu",
			 (x = getenv("HOME")) && *x ? x : "/tmp");
	c->cache_dir = cache_buf;
}

static const char *default_socket(void)
{
	const char *x = getenv("XDG_RUNTIME_DIR");
	if (x && *x)
		snprintf(sock_path_buf, sizeof sock_path_buf, "%s/eulernpu/eulernpud.sock", x);
	else
		snprintf(sock_path_buf, sizeof sock_path_buf, "/tmp/eulernpu-%u/eulernpud.sock",
			 (unsigned)getuid());
	return sock_path_buf;
}

/* A bearer token from a file: one line, trailing whitespace dropped, no
 * spaces or control characters (it goes into a header). Never logged. */
static int read_token(const char *flag, const char *path, char **out)
{
	enpu_buf b = ENPU_BUF_INIT;
	enpu_err e = ENPU_ERR_INIT;
	size_t n, i;

	if (enpu_read_file(path, 4096, &b, &e) != 0) {
		enpu_buf_free(&b);
		return usage_error("%s '%s': %s", flag, path, e.message);
	}
	n = b.len;
	while (n > 0 && (b.data[n - 1] == '\n' || b.data[n - 1] == '\r' || b.data[n - 1] == ' ' ||
			 b.data[n - 1] == '\t'))
		n--;
	for (i = 0; i < n; i++)
		if ((unsigned char)b.data[i] <= ' ' || (unsigned char)b.data[i] == 0x7f)
			break;
	if (n == 0 || i < n) {
		enpu_buf_free(&b);
		return usage_error("%s '%s': the token must be one line of printable characters, "
				   "without spaces", flag, path);
	}
	*out = strndup(b.data, n);
	enpu_buf_free(&b);
	if (!*out)
		return usage_error("out of memory");
	return 0;
}

static void enforce_cb(void *ctx)
{
	srv_cache_enforce(ctx);
}

static int write_small(const char *path, const char *text)
{
	enpu_err e = ENPU_ERR_INIT;
	if (enpu_write_file_atomic(path, text, strlen(text), &e) != 0) {
		srv_log("error", "cannot write '%s': %s", path, e.message);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	srv_ctx ctx;
	enpu_err e = ENPU_ERR_INIT;
	struct MHD_Daemon *d_unix = NULL, *d_tcp = NULL;
	int fd_unix = -1, fd_tcp = -1, port = 0, rc, status = 1;
	sigset_t sigs;
	char line[64];

	memset(&ctx, 0, sizeof ctx);
	defaults(&ctx.cfg);
	rc = parse_flags(argc, argv, &ctx.cfg);
	if (rc == 1)
		return 0;
	if (rc)
		return 2;
	if (!ctx.cfg.socket_path && !ctx.cfg.listen)
		ctx.cfg.socket_path = default_socket();
	if ((ctx.cfg.token_file && read_token("--token-file", ctx.cfg.token_file, &ctx.token)) ||
	    (ctx.cfg.board_token_file &&
	     read_token("--board-token-file", ctx.cfg.board_token_file, &ctx.board_token))) {
		free(ctx.token);
		free(ctx.board_token);
		return 2;
	}
	if (srv_log_open(ctx.cfg.log_file) != 0)
		return usage_error("cannot open log file '%s': %s", ctx.cfg.log_file, strerror(errno));
	ctx.lim = enpu_limits_default();
	if (ctx.cfg.role == SRV_ROLE_BOARD &&
	    enpu_pl_select(ctx.cfg.pl ? ctx.cfg.pl : SRV_PL_EMULATED, &e) != 0)
		return usage_error("%s", e.message);
	curl_global_init(CURL_GLOBAL_DEFAULT);   /* before any thread */

	/* Signals are taken synchronously by this thread: block them before any
	 * thread starts so that every thread inherits the mask. */
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);

	ctx.cas = srv_cas_open(ctx.cfg.cache_dir, &e);
	if (!ctx.cas) {
		srv_log("error", "cannot open cache '%s': %s", ctx.cfg.cache_dir, e.message);
		goto out;
	}
	ctx.jobs = srv_jobs_start(ctx.cas, ctx.lim, ctx.cfg.workers, ctx.cfg.threads,
				  ctx.cfg.max_queue, &e);
	if (!ctx.jobs) {
		srv_log("error", "cannot start workers: %s", e.message);
		goto out;
	}
	srv_jobs_on_store(ctx.jobs, enforce_cb, &ctx);
	if (ctx.cfg.role != SRV_ROLE_BOARD) {
		ctx.boards = srv_boards_start(&ctx, &e);
		if (!ctx.boards) {
			srv_log("error", "cannot start the board pool: %s", e.message);
			goto out;
		}
	}
	if (ctx.cfg.socket_path) {
		if ((fd_unix = open_unix(ctx.cfg.socket_path)) < 0 ||
		    !(d_unix = srv_http_start(&ctx, fd_unix)))
			goto out;
	}
	if (ctx.cfg.listen) {
		if ((fd_tcp = open_tcp(ctx.cfg.listen, &port)) < 0 ||
		    !(d_tcp = srv_http_start(&ctx, fd_tcp)))
			goto out;
		if (ctx.cfg.port_file) {
			snprintf(line, sizeof line, "%d\n", port);
			if (write_small(ctx.cfg.port_file, line) != 0)
				goto out;
		}
	}
	if (ctx.cfg.pid_file) {
		snprintf(line, sizeof line, "%ld\n", (long)getpid());
		if (write_small(ctx.cfg.pid_file, line) != 0)
			goto out;
	}
	srv_log("info", "eulernpud %s listening%s%s%s%s (port %d) cache=%s workers=%d threads=%d "
		"role=%s boards=%d%s%s", ENPU_VERSION, ctx.cfg.socket_path ? " on " : "",
		ctx.cfg.socket_path ? ctx.cfg.socket_path : "", ctx.cfg.listen ? " tcp " : "",
		ctx.cfg.listen ? ctx.cfg.listen : "", port, ctx.cfg.cache_dir, ctx.cfg.workers,
		ctx.cfg.threads, ctx.cfg.role == SRV_ROLE_BOARD ? "board" :
		ctx.cfg.role == SRV_ROLE_SERVER ? "server" : "local", ctx.cfg.n_boards,
		ctx.cfg.role == SRV_ROLE_BOARD ? " pl=" : "",
		ctx.cfg.role == SRV_ROLE_BOARD ? enpu_pl_current()->name : "");

	for (;;) {
		struct timespec tick = {1, 0};
		int sig = sigtimedwait(&sigs, NULL, &tick);
		if (sig == SIGTERM || sig == SIGINT) {
			srv_log("info", "signal %d: stopping", sig);
			break;
		}
		if (ctx.cfg.idle_exit > 0 && srv_http_active() == 0 && srv_jobs_idle(ctx.jobs) &&
		    srv_now() - srv_http_last_activity() >= (double)ctx.cfg.idle_exit) {
			srv_log("info", "idle for %d s: exiting", ctx.cfg.idle_exit);
			break;
		}
	}
	status = 0;
out:
	ctx.stopping = 1;
	/* Stop accepting; then let running jobs finish (waiters wake up); then
	 * close connections; only then free what the handlers use. */
	if (d_unix) {
		int s = srv_http_quiesce(d_unix);
		if (s >= 0)
			close(s);
		fd_unix = -1;
	}
	if (d_tcp) {
		int s = srv_http_quiesce(d_tcp);
		if (s >= 0)
			close(s);
		fd_tcp = -1;
	}
	srv_jobs_shutdown(ctx.jobs);
	srv_http_stop(d_unix);
	srv_http_stop(d_tcp);
	srv_boards_free(ctx.boards);   /* after the table stops: dispatchers leave */
	ctx.boards = NULL;
	if (fd_unix >= 0)
		close(fd_unix);
	if (fd_tcp >= 0)
		close(fd_tcp);
	if (ctx.cfg.socket_path && (d_unix || fd_unix >= 0))
		unlink(ctx.cfg.socket_path);
	if (ctx.cfg.pid_file && status == 0)
		unlink(ctx.cfg.pid_file);
	srv_jobs_free(ctx.jobs);
	srv_cas_close(ctx.cas);
	srv_artifact_cache_clear();
	free(ctx.token);
	free(ctx.board_token);
	curl_global_cleanup();
	srv_log("info", "stopped");
	srv_log_close();
	return status;
}

/* main.c: eulernpud, the daemon. Flags and defaults, the listening sockets
 * (a private Unix socket and/or TCP), signals, the idle timer, and an
 * orderly stop: stop accepting, let running jobs finish, remove the socket
 * and pid file. Everything after flag parsing is logged, never printed. */
#include <errno.h>
#include <grp.h>
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
#include "board.h"
#include "metrics.h"
#include "fault.h"

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
"  --log-level LEVEL     error, warn, info (default) or debug\n"
"  --cache-max BYTES     keep at most this many bytes of blobs in the cache\n"
"                        (default 0 = unbounded). Past it, the least recently\n"
"                        used blobs that no queued or running job needs are\n"
"                        evicted, then artifacts that lost a file (a later run\n"
"                        uploads them again)\n"
"  --pid-file FILE       write the daemon's pid there (removed at exit)\n"
"  --config FILE         read settings from this YAML file first (default\n"
"                        /etc/eulernpu/eulernpud.yaml when it exists; 'none' reads\n"
"                        none). Keys are the long options without '--'; options\n"
"                        given here override the file\n"
"  --check-config        validate the configuration (file and options), print\n"
"                        'configuration OK' and exit 0, or the error and exit 2\n"
"  --drain-timeout S     on SIGTERM, wait at most this long for queued and\n"
"                        running jobs (default 600)\n"
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
"                        URL is http://HOST:PORT, https://HOST:PORT or unix:/PATH\n"
"  --board-cacert FILE   CA certificates (PEM) to check https:// boards with\n"
"  --board-token-file FILE  the bearer token to send to the boards\n"
"  --board-health-interval S  seconds between health checks of a board (default 5)\n"
"  --board-backoff-max S  longest wait between checks of a down board; the wait\n"
"                        starts at 1 s and doubles (default 60)\n"
"  --board-timeout S     bound on each HTTP call to a board (default 30)\n"
"  --board-retries N     a job whose board faults runs on another board at most\n"
"                        N more times (default 2)\n"
"  --job-timeout S       a job's queue and run time together (default 600); a job\n"
"                        may ask for less ('timeout'). Past it a queued job ends\n"
"                        timed_out, a running one stops at its next op (a board\n"
"                        job is cancelled on its board), E0813\n"
"  --job-ttl S           keep a finished job (its JSON, result, report) this long\n"
"                        (default 86400); the blobs stay in the cache\n"
"  --job-history N       keep at most N finished jobs, oldest forgotten first\n"
"                        (default 10000)\n"
"With no board that serves a job's backend, POST /v1/jobs answers 503 E0811.\n"
"\n"
"Access and TLS:\n"
"  --tokens FILE         bearer tokens, one 'TOKEN ROLE [NAME]' per line (ROLE user\n"
"                        or admin; # comments). Every TCP request but GET /v1/health\n"
"                        needs 'Authorization: Bearer TOKEN' (401 E0814); user\n"
"                        tokens may not manage the cache (403 E0815). The file\n"
"                        must not be world-readable. SIGHUP re-reads it\n"
"  --socket-mode MODE    permissions of the Unix socket (default 0600; 0660 with\n"
"                        --socket-group for a shared daemon)\n"
"  --socket-group NAME   group of the Unix socket\n"
"  --tls-cert FILE       serve HTTPS on --listen with this certificate (PEM)...\n"
"  --tls-key FILE        ...and this private key (PEM)\n"
"\n"
"Limits (a request past one fails with a clear error):\n"
"  --max-json-bytes N    JSON request bodies (default 1048576)\n"
"  --max-json-depth N    JSON nesting (default 32)\n"
"  --max-spec-bytes N    a spec file (default 4194304)\n"
"  --max-yaml-depth N    spec YAML nesting (default 64)\n"
"  --max-yaml-nodes N    spec YAML nodes after alias expansion (default 1048576)\n"
"  --max-ops N           ops in a spec (default 100000)\n"
"  --max-tensor-elems N  elements of one tensor (default 268435456)\n"
"  --max-tensor-bytes N  bytes of one tensor (default 1073741824)\n"
"  --max-npz-members N   arrays in an .npz (default 4096)\n"
"  --max-npz-bytes N     decompressed bytes of an .npz (default 2147483648)\n"
"  --request-timeout S   a request body must arrive within S seconds (default\n"
"                        3600; 0 = no bound); --conn-timeout bounds idle gaps\n"
"\n"
"Socket activation: with LISTEN_PID/LISTEN_FDS (systemd), the daemon serves the\n"
"sockets it is handed (Unix or TCP) instead of --socket/--listen.\n"
"\n"
"SIGTERM or SIGINT: drain (POST /v1/jobs answers 503; queued and running jobs\n"
"finish, at most --drain-timeout), then stop, remove the socket, exit 0; a second\n"
"signal stops at once (queued jobs fail, running ones finish). SIGHUP re-reads\n"
"the token files and the boards of the configuration file.\n";

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

typedef enum { O_STR, O_INT, O_U64, O_ROLE, O_BOARD, O_MODE, O_SKIP } otype;
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
	{"--board-cacert", O_STR, OFF(board_cacert), 0, 0},
	{"--board-health-interval", O_INT, OFF(board_health_interval), 1, 86400},
	{"--board-retries", O_INT, OFF(board_retries), 0, 100},
	{"--board-timeout", O_INT, OFF(board_timeout), 1, 86400},
	{"--board-token-file", O_STR, OFF(board_token_file), 0, 0},
	{"--cache",        O_STR, OFF(cache_dir), 0, 0},
	{"--cache-max",    O_U64, OFF(cache_max), 0, UINT64_MAX / 2},
	{"--config",       O_SKIP, 0, 0, 0},
	{"--conn-limit",   O_INT, OFF(conn_limit), 1, 100000},
	{"--conn-timeout", O_INT, OFF(conn_timeout), 1, 86400},
	{"--drain-timeout", O_INT, OFF(drain_timeout), 0, 7 * 86400},
	{"--idle-exit",    O_INT, OFF(idle_exit), 0, INT_MAX},
	{"--job-history",  O_INT, OFF(job_history), 1, 10000000},
	{"--job-timeout",  O_INT, OFF(job_timeout), 1, 7 * 86400},
	{"--job-ttl",      O_INT, OFF(job_ttl), 1, 366 * 86400},
	{"--listen",       O_STR, OFF(listen), 0, 0},
	{"--log",          O_STR, OFF(log_file), 0, 0},
	{"--log-level",    O_STR, OFF(log_level), 0, 0},
	{"--max-json-bytes", O_U64, OFF(max_json_bytes), 64, INT_MAX},
	{"--max-json-depth", O_INT, OFF(max_json_depth), 2, 10000},
	{"--max-npz-bytes", O_U64, OFF(limits.max_npz_bytes), 1, UINT64_MAX / 2},
	{"--max-npz-members", O_U64, OFF(limits.max_npz_members), 1, 1u << 30},
	{"--max-ops",      O_U64, OFF(limits.max_ops), 1, 1u << 30},
	{"--max-queue",    O_INT, OFF(max_queue), 0, 1000000},
	{"--max-spec-bytes", O_U64, OFF(limits.max_spec_bytes), 1, 1ull << 32},
	{"--max-tensor-bytes", O_U64, OFF(limits.max_tensor_bytes), 4, UINT64_MAX / 2},
	{"--max-tensor-elems", O_U64, OFF(limits.max_tensor_elems), 1, UINT64_MAX / 8},
	{"--max-upload",   O_U64, OFF(max_upload), 1, UINT64_MAX / 2},
	{"--max-yaml-depth", O_INT, OFF(limits.max_yaml_depth), 2, 10000},
	{"--max-yaml-nodes", O_U64, OFF(limits.max_yaml_nodes), 16, 1ull << 40},
	{"--pid-file",     O_STR, OFF(pid_file), 0, 0},
	{"--pl",           O_STR, OFF(pl), 0, 0},
	{"--port-file",    O_STR, OFF(port_file), 0, 0},
	{"--request-timeout", O_INT, OFF(request_timeout), 0, 7 * 86400},
	{"--role",         O_ROLE, 0, 0, 0},
	{"--socket",       O_STR, OFF(socket_path), 0, 0},
	{"--socket-group", O_STR, OFF(socket_group), 0, 0},
	{"--socket-mode",  O_MODE, OFF(socket_mode), 0, 0777},
	{"--threads",      O_INT, OFF(threads), 1, 256},
	{"--tls-cert",     O_STR, OFF(tls_cert), 0, 0},
	{"--tls-key",      O_STR, OFF(tls_key), 0, 0},
	{"--token-file",   O_STR, OFF(token_file), 0, 0},
	{"--tokens",       O_STR, OFF(tokens_file), 0, 0},
	{"--workers",      O_INT, OFF(workers), 1, 1024},
};

static const opt *find_opt(const char *name)
{
	size_t k;

	for (k = 0; k < sizeof opts / sizeof opts[0]; k++)
		if (!strcmp(opts[k].name, name))
			return &opts[k];
	return NULL;
}

/* Set one option from its text (a flag's or a config file's): 0, or -1
 * with the reason in e->message. */
static int set_opt(srv_config *c, const opt *o, const char *name, const char *val, enpu_err *e)
{
	if (o->type == O_ROLE) {
		if (!strcmp(val, "local"))
			c->role = SRV_ROLE_LOCAL;
		else if (!strcmp(val, "server"))
			c->role = SRV_ROLE_SERVER;
		else if (!strcmp(val, "board"))
			c->role = SRV_ROLE_BOARD;
		else
			return enpu_fail(e, ENPU_E_USAGE, NULL, NULL,
					 "role '%s' is not one of local, server, board", val);
	} else if (o->type == O_BOARD) {
		enpu_err be = ENPU_ERR_INIT;
		int k2;
		if (c->n_boards == SRV_MAX_BOARDS)
			return enpu_fail(e, ENPU_E_USAGE, NULL, NULL, "at most %d boards", SRV_MAX_BOARDS);
		if (srv_board_parse(val, &c->boards[c->n_boards], &be) != 0)
			return enpu_fail(e, ENPU_E_USAGE, NULL, be.fix, "%s", be.message);
		for (k2 = 0; k2 < c->n_boards; k2++)
			if (!strcmp(c->boards[k2].name, c->boards[c->n_boards].name))
				return enpu_fail(e, ENPU_E_USAGE, NULL, NULL,
						 "board name '%s' is given twice", c->boards[k2].name);
		c->n_boards++;
	} else if (o->type == O_STR) {
		if (!*val)
			return enpu_fail(e, ENPU_E_USAGE, NULL, NULL, "option '%s' needs a non-empty value",
					 name);
		*(const char **)((char *)c + o->off) = val;
	} else if (o->type == O_MODE) {
		char *end;
		long m;
		errno = 0;
		m = strtol(val, &end, 8);
		if (!*val || *end || errno || m < 0 || m > (long)o->max)
			return enpu_fail(e, ENPU_E_USAGE, NULL, NULL,
					 "option '%s': '%s' is not an octal mode such as 0600", name, val);
		*(int *)((char *)c + o->off) = (int)m;
	} else if (o->type != O_SKIP) {
		uint64_t v;
		if (parse_u64(val, o->min, o->max, &v) != 0)
			return enpu_fail(e, ENPU_E_USAGE, NULL, NULL,
					 "option '%s': '%s' is not a whole number in [%llu, %llu]",
					 name, val, (unsigned long long)o->min, (unsigned long long)o->max);
		if (o->type == O_INT)
			*(int *)((char *)c + o->off) = (int)v;
		else
			*(uint64_t *)((char *)c + o->off) = v;
	}
	return 0;
}

/* Apply a configuration file's items; a bad one is E0816 at file:line:col. */
static int apply_file(srv_config *c, const srv_cfg_file *f, enpu_err *e)
{
	char name[80], where[600];
	int i;

	for (i = 0; i < f->n; i++) {
		const srv_cfg_item *it = &f->items[i];
		const opt *o;

		snprintf(where, sizeof where, "%s:%d:%d", f->path, it->line, it->col);
		snprintf(name, sizeof name, "--%s", it->key);
		o = find_opt(name);
		if (!o || o->type == O_SKIP) {
			snprintf(where, sizeof where, "%s:%d:%d", f->path, it->kline, it->kcol);
			return enpu_fail(e, ENPU_E_CONFIG, where, "use the long option names of "
					 "eulernpud --help, without '--'",
					 "unknown setting '%s'", it->key);
		}
		if (set_opt(c, o, name, it->value, e) != 0) {
			e->code = ENPU_E_CONFIG;
			snprintf(e->where, sizeof e->where, "%.500s", where);
			return -1;
		}
	}
	return 0;
}

static int flag_boards;       /* --board given on the command line */

/* 0 = go on, 1 = done (help/version printed), 2 = usage error (printed). */
static int parse_flags(int argc, char **argv, srv_config *c)
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *val = NULL, *eq;
		char name[64];
		const opt *o;
		enpu_err e = ENPU_ERR_INIT;

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage, stdout);
			return 1;
		}
		if (!strcmp(a, "--version")) {
			printf("eulernpud %s (%s)\n", ENPU_VERSION, ENPU_COMPILER_ID);
			return 1;
		}
		if (!strcmp(a, "--check-config"))
			continue;
		eq = strchr(a, '=');
		snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - a) : (int)strlen(a), a);
		o = find_opt(name);
		if (!o)
			return usage_error("unknown option '%s'", a);
		if (eq)
			val = eq + 1;
		else if (i + 1 < argc)
			val = argv[++i];
		else
			return usage_error("option '%s' needs a value", name);
		/* boards on the command line replace those of the file */
		if (o->type == O_BOARD && !flag_boards++)
			c->n_boards = 0;
		if (set_opt(c, o, name, val, &e) != 0)
			return usage_error("%s", e.message);
	}
	return 0;
}

static int check_flags(srv_config *c)
{
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
	if (c->log_level && srv_log_set_level(c->log_level) != 0)
		return usage_error("--log-level '%s' is not one of error, warn, info, debug",
				   c->log_level);
	if (!c->tls_cert != !c->tls_key)
		return usage_error("TLS needs both --tls-cert and --tls-key");
	if (c->socket_group && !getgrnam(c->socket_group))
		return usage_error("--socket-group '%s' is not a group on this system", c->socket_group);
	return 0;
}

/* ---- sockets ------------------------------------------------------------ */

static char sock_path_buf[4096], cache_buf[4096];

static int open_unix(const char *path, int mode, const char *group)
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
		/* a shared socket's group must be able to reach it */
		if (stat(dir, &st) != 0 && enpu_mkdirs(dir, (mode & 0070) ? 0710 : 0700, &e) != 0) {
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
	if (group) {
		struct group *g = getgrnam(group);
		if (!g || chown(path, (uid_t)-1, g->gr_gid) != 0) {
			srv_log("error", "cannot give socket '%s' to group '%s': %s", path, group,
				g ? strerror(errno) : "no such group");
			close(fd);
			return -1;
		}
	}
	if (chmod(path, (mode_t)mode) != 0)
		goto fail;
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

	srv_config_defaults(c);
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

/* A PEM file as a NUL-terminated string (MHD's HTTPS_MEM options). */
static int read_pem(const char *flag, const char *path, char **out)
{
	enpu_buf b = ENPU_BUF_INIT;
	enpu_err e = ENPU_ERR_INIT;

	if (enpu_read_file(path, 1u << 20, &b, &e) != 0 || !b.len) {
		enpu_buf_free(&b);
		return usage_error("%s '%s': %s", flag, path, e.message[0] ? e.message : "empty file");
	}
	*out = strndup(b.data, b.len);
	enpu_buf_free(&b);
	if (!*out)
		return usage_error("out of memory");
	return 0;
}

/* Sockets handed over by systemd (sd_listen_fds(3): LISTEN_PID names us,
 * LISTEN_FDS counts them from fd 3). The variables are unset so that
 * nothing we start inherits them. */
#define SD_LISTEN_FDS_START 3
static int listen_fds(void)
{
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
	uint64_t p, n;
	int i;

	if (!pid || !fds || parse_u64(pid, 1, INT_MAX, &p) != 0 || (pid_t)p != getpid() ||
	    parse_u64(fds, 1, 64, &n) != 0)
		return 0;
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	for (i = 0; i < (int)n; i++)
		fcntl(SD_LISTEN_FDS_START + i, F_SETFD, FD_CLOEXEC);
	return (int)n;
}

/* The TCP port a socket listens on, or 0 for a Unix socket; -1 if it is
 * not a listening stream socket. */
static int socket_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	int acc = 0;
	socklen_t al = sizeof acc;

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &al) != 0 || !acc)
		return -1;
	if (ss.ss_family == AF_UNIX)
		return 0;
	return ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
					: ntohs(((struct sockaddr_in *)&ss)->sin_port);
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

/* Three lines on stderr; exit status 2. */
static int report(const enpu_err *e)
{
	char line[2048];

	enpu_err_render(e, line, sizeof line);
	fputs(line, stderr);
	return 2;
}

#define DEFAULT_CONFIG "/etc/eulernpu/eulernpud.yaml"

/* --config FILE wherever it stands (values of other options skipped), else
 * the default file when it exists; NULL for none. */
static const char *config_path(int argc, char **argv, int *check)
{
	const char *p = NULL;
	int i;

	*check = 0;
	for (i = 1; i < argc; i++) {
		const opt *o;
		if (!strcmp(argv[i], "--check-config"))
			*check = 1;
		else if (!strcmp(argv[i], "--config") && i + 1 < argc)
			p = argv[++i];
		else if (!strncmp(argv[i], "--config=", 9))
			p = argv[i] + 9;
		else if ((o = find_opt(argv[i])) != NULL && i + 1 < argc)
			i++;
	}
	if (!p)
		return access(DEFAULT_CONFIG, F_OK) == 0 ? DEFAULT_CONFIG : NULL;
	return strcmp(p, "none") ? p : NULL;
}

static srv_cfg_file cfgf;     /* its strings back ctx.cfg until exit */

/* SIGHUP: the token files, and the boards of the configuration file (not
 * when --board was given: the command line wins). A bad file changes
 * nothing. */
static void reload(srv_ctx *ctx)
{
	enpu_err e = ENPU_ERR_INIT;

	if (ctx->cfg.tokens_file || ctx->cfg.token_file) {
		if (srv_auth_load(ctx, &e) != 0)
			srv_log("error", "SIGHUP: tokens kept as they were: %s%s%s", e.where,
				e.where[0] ? ": " : "", e.message);
		else
			srv_log("info", "SIGHUP: %d token(s) loaded", srv_auth_count(ctx->auth));
	}
	if (ctx->cfg.config_file && ctx->boards && !flag_boards) {
		srv_cfg_file f;
		srv_config *tmp = malloc(sizeof *tmp);

		if (!tmp)
			return;
		*tmp = ctx->cfg;
		tmp->n_boards = 0;
		if (srv_cfg_read(ctx->cfg.config_file, &f, &e) != 0 || apply_file(tmp, &f, &e) != 0) {
			srv_log("error", "SIGHUP: boards kept as they were: %s: %s", e.where, e.message);
		} else if (srv_boards_reload(ctx->boards, tmp->boards, tmp->n_boards, &e) != 0) {
			srv_log("error", "SIGHUP: boards not reloaded: %s", e.message);
		} else {
			srv_log("info", "SIGHUP: %d board(s) configured", tmp->n_boards);
		}
		srv_cfg_free(&f);
		free(tmp);
	}
}

#define MAX_LISTEN 8

int main(int argc, char **argv)
{
	srv_ctx ctx;
	enpu_err e = ENPU_ERR_INIT;
	struct MHD_Daemon *d[MAX_LISTEN] = {NULL};
	int fds[MAX_LISTEN], nl = 0, port = 0, rc, status = 2, check, activated, i;
	int made_socket = 0;
	const char *cpath;
	double drain_t0 = 0;
	sigset_t sigs;
	char line[64];

	memset(&ctx, 0, sizeof ctx);
	defaults(&ctx.cfg);
	cpath = config_path(argc, argv, &check);
	if (cpath) {
		if (srv_cfg_read(cpath, &cfgf, &e) != 0 || apply_file(&ctx.cfg, &cfgf, &e) != 0) {
			srv_cfg_free(&cfgf);
			return report(&e);
		}
		ctx.cfg.config_file = cpath;
	}
	rc = parse_flags(argc, argv, &ctx.cfg);
	if (rc == 1 || rc) {
		srv_cfg_free(&cfgf);
		return rc == 1 ? 0 : 2;
	}
	if (check_flags(&ctx.cfg) != 0)
		goto early;
	if (srv_auth_load(&ctx, &e) != 0) {
		report(&e);
		goto early;
	}
	if (ctx.cfg.board_token_file &&
	    read_token("--board-token-file", ctx.cfg.board_token_file, &ctx.board_token))
		goto early;
	if (ctx.cfg.tls_cert) {
		if (!srv_http_tls_supported()) {
			usage_error("this libmicrohttpd was built without TLS: --tls-cert cannot be "
				    "served (put a TLS proxy in front, or install a GnuTLS build)");
			goto early;
		}
		if (read_pem("--tls-cert", ctx.cfg.tls_cert, &ctx.tls_cert_pem) ||
		    read_pem("--tls-key", ctx.cfg.tls_key, &ctx.tls_key_pem))
			goto early;
	}
	if (ctx.cfg.board_cacert) {
		if (access(ctx.cfg.board_cacert, R_OK) != 0) {
			usage_error("--board-cacert '%s': %s", ctx.cfg.board_cacert, strerror(errno));
			goto early;
		}
		srv_blink_set_cacert(ctx.cfg.board_cacert);
	}
	if (check) {
		printf("eulernpud: configuration OK%s%s%s\n", cpath ? " (" : "", cpath ? cpath : "",
		       cpath ? ")" : "");
		status = 0;
		goto early;
	}
	activated = listen_fds();
	if (!activated && !ctx.cfg.socket_path && !ctx.cfg.listen)
		ctx.cfg.socket_path = default_socket();
	if (activated)
		ctx.cfg.socket_path = NULL;   /* systemd owns the socket file */
	if (srv_log_open(ctx.cfg.log_file) != 0) {
		usage_error("cannot open log file '%s': %s", ctx.cfg.log_file, strerror(errno));
		goto early;
	}
	srv_fault_init();   /* EULERNPUD_FAULT: crash tests only (fault.h) */
	ctx.lim = &ctx.cfg.limits;
	if (ctx.cfg.role == SRV_ROLE_BOARD &&
	    enpu_pl_select(ctx.cfg.pl ? ctx.cfg.pl : SRV_PL_EMULATED, &e) != 0) {
		usage_error("%s", e.message);
		goto early;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);   /* before any thread */

	/* Signals are taken synchronously by this thread: block them before any
	 * thread starts so that every thread inherits the mask. */
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);

	status = 1;
	ctx.obs = srv_metrics_observer();   /* requests and jobs feed /metrics */
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
	srv_jobs_set_observer(ctx.jobs, ctx.obs);
	srv_jobs_set_policy(ctx.jobs, ctx.cfg.job_timeout, ctx.cfg.job_ttl, ctx.cfg.job_history);
	{ srv_gc_result gr; srv_cache_gc(&ctx, 0, &gr); }   /* finish an eviction a crash cut short */
	if (ctx.cfg.role != SRV_ROLE_BOARD) {
		ctx.boards = srv_boards_start(&ctx, &e);
		if (!ctx.boards) {
			srv_log("error", "cannot start the board pool: %s", e.message);
			goto out;
		}
	}
	if (activated) {
		for (i = 0; i < activated && nl < MAX_LISTEN; i++) {
			int fd = SD_LISTEN_FDS_START + i, p = socket_port(fd);
			if (p < 0) {
				srv_log("error", "fd %d handed over by systemd is not a listening "
					"stream socket", fd);
				goto out;
			}
			if (!(d[nl] = srv_http_start(&ctx, fd)))
				goto out;
			fds[nl++] = fd;
			if (p > 0)
				port = p;
			srv_log("info", "socket activation: serving fd %d (%s)", fd,
				p ? "tcp" : "unix");
		}
	} else {
		if (ctx.cfg.socket_path) {
			int fd = open_unix(ctx.cfg.socket_path, ctx.cfg.socket_mode, ctx.cfg.socket_group);
			if (fd < 0)
				goto out;
			made_socket = 1;
			fds[nl] = fd;
			if (!(d[nl++] = srv_http_start(&ctx, fd)))
				goto out;
		}
		if (ctx.cfg.listen) {
			int fd = open_tcp(ctx.cfg.listen, &port);
			if (fd < 0)
				goto out;
			fds[nl] = fd;
			if (!(d[nl++] = srv_http_start(&ctx, fd)))
				goto out;
		}
	}
	if (ctx.cfg.port_file && port) {
		snprintf(line, sizeof line, "%d\n", port);
		if (write_small(ctx.cfg.port_file, line) != 0)
			goto out;
	}
	if (ctx.cfg.pid_file) {
		snprintf(line, sizeof line, "%ld\n", (long)getpid());
		if (write_small(ctx.cfg.pid_file, line) != 0)
			goto out;
	}
	srv_log("info", "eulernpud %s listening%s%s%s%s%s (port %d%s) cache=%s workers=%d "
		"threads=%d role=%s boards=%d tokens=%d%s%s%s%s", ENPU_VERSION,
		ctx.cfg.socket_path ? " on " : "", ctx.cfg.socket_path ? ctx.cfg.socket_path : "",
		ctx.cfg.listen && !activated ? " tcp " : "",
		ctx.cfg.listen && !activated ? ctx.cfg.listen : "",
		activated ? " on sockets from systemd" : "", port, ctx.tls_cert_pem ? ", tls" : "",
		ctx.cfg.cache_dir, ctx.cfg.workers, ctx.cfg.threads,
		ctx.cfg.role == SRV_ROLE_BOARD ? "board" :
		ctx.cfg.role == SRV_ROLE_SERVER ? "server" : "local", ctx.cfg.n_boards,
		srv_auth_count(ctx.auth),
		ctx.cfg.role == SRV_ROLE_BOARD ? " pl=" : "",
		ctx.cfg.role == SRV_ROLE_BOARD ? enpu_pl_current()->name : "",
		cpath ? " config=" : "", cpath ? cpath : "");

	for (;;) {
		struct timespec tick = {0, 250000000L};
		int sig = sigtimedwait(&sigs, NULL, &tick);
		if (sig == SIGHUP) {
			reload(&ctx);
			continue;
		}
		if (sig == SIGTERM || sig == SIGINT) {
			int q = 0, r = 0, w = 0;
			if (ctx.draining) {
				srv_log("info", "signal %d while draining: stopping now", sig);
				break;
			}
			ctx.draining = 1;
			drain_t0 = srv_now();
			srv_jobs_stats(ctx.jobs, &q, &r, &w);
			srv_log("info", "signal %d: draining: no new jobs; %d queued, %d running "
				"(at most %d s)", sig, q, r, ctx.cfg.drain_timeout);
		}
		if (ctx.draining) {
			if (srv_jobs_idle(ctx.jobs)) {
				srv_log("info", "drained: no jobs left");
				break;
			}
			if (srv_now() - drain_t0 >= (double)ctx.cfg.drain_timeout) {
				srv_log("warn", "drain timeout (%d s): stopping with jobs left",
					ctx.cfg.drain_timeout);
				break;
			}
			continue;
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
	ctx.draining = 1;
	/* Stop accepting; then let running jobs finish (waiters wake up); give
	 * the answers in flight a moment; then close connections; only then
	 * free what the handlers use. */
	for (i = 0; i < nl; i++) {
		if (d[i]) {
			int s = srv_http_quiesce(d[i]);
			if (s >= 0)
				close(s);
			fds[i] = -1;
		}
	}
	srv_jobs_shutdown(ctx.jobs);
	for (i = 0; i < 50 && srv_http_active() > 0; i++)
		usleep(100000);
	for (i = 0; i < nl; i++)
		srv_http_stop(d[i]);
	srv_boards_free(ctx.boards);   /* after the table stops: dispatchers leave */
	ctx.boards = NULL;
	for (i = 0; i < nl; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (made_socket && ctx.cfg.socket_path)
		unlink(ctx.cfg.socket_path);
	if (ctx.cfg.pid_file && status == 0)
		unlink(ctx.cfg.pid_file);
	srv_jobs_free(ctx.jobs);
	srv_cas_close(ctx.cas);
	srv_artifact_cache_clear();
	curl_global_cleanup();
	srv_log("info", "stopped");
	srv_log_close();
early:
	srv_auth_shutdown(&ctx);
	free(ctx.token);
	free(ctx.board_token);
	free(ctx.tls_cert_pem);
	free(ctx.tls_key_pem);
	srv_cfg_free(&cfgf);
	return status;
}

/* options.c: eulernpud's options: the flag table shared by the command
 * line and the configuration file, their defaults and checks, --help, and
 * the secrets that options name (token and PEM files), read before any
 * thread starts. Errors are printed on stderr (the log is not open yet). */
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "srv.h"
#include "buf.h"
#include "boards.h"
#include "metrics.h"
#include "pl.h"
#include "daemon.h"
#include "wire.h"

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
"                        else ~/.cache/eulernpu, else $TMPDIR/eulernpu-cache-$UID);\n"
"                        it must be the daemon's own and not writable by others;\n"
"                        one daemon per cache (the second names the first's pid)\n"
"  --workers N           job worker threads (default: number of cores)\n"
"  --threads N           kernel threads per job (default 1)\n"
"  --max-upload BYTES    largest request body (default 1073741824 = 1 GiB)\n"
"  --max-queue N         jobs waiting at most; past it 429 + Retry-After\n"
"                        (default 256; 0 = run no jobs: a compile-only cache)\n"
"  --idle-exit SECONDS   exit after this long with no requests and no jobs\n"
"                        (default 0 = never; '50ms' for milliseconds). The socket\n"
"                        goes first: a client then starts a fresh daemon\n"
"  --conn-limit N        simultaneous connections (default 64)\n"
"  --http-threads N      threads serving connections, each an event loop\n"
"                        (default: number of cores)\n"
"  --loop-job-us N       a waited-for job whose artifact last ran in under N\n"
"                        microseconds runs on the HTTP thread that took it\n"
"                        (default 1000; 0 = never)\n"
"  --conn-timeout SEC    idle connection timeout (default 60)\n"
"  --log FILE            log here instead of stderr (one line per request)\n"
"  --log-level LEVEL     error, warn, info (default) or debug\n"
"  --cache-max BYTES     keep at most this many bytes of blobs in the cache\n"
"                        (default 0 = unbounded). Past it, the least recently\n"
"                        used blobs that no queued or running job needs are\n"
"                        evicted, then artifacts that lost a file (a later run\n"
"                        uploads them again)\n"
"  --pid-file FILE       write the daemon's pid there, locked while it runs\n"
"                        (removed at exit)\n"
"  --config FILE         read settings from this YAML file first (default\n"
"                        /etc/eulernpu/eulernpud.yaml when it exists; 'none' reads\n"
"                        none). Keys are the long options without '--'; options\n"
"                        given here override the file\n"
"  --check-config        validate the configuration (file and options), print\n"
"                        'configuration OK' and exit 0, or the error and exit 2\n"
"  --drain-timeout S     on SIGTERM, wait at most this long for queued and\n"
"                        running jobs (default 600); then the queued ones are\n"
"                        cancelled and the running ones stop at their next op\n"
"                        (cancelled: \"the server's drain timed out\")\n"
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
"  --node-id NAME        this server's name among several behind one balancer:\n"
"                        1-16 of [a-z0-9]; job ids become NAME-<16 hex> so that\n"
"                        the balancer routes /v1/jobs/NAME-... here, and health\n"
"                        and /metrics name it (default: none, ids are 16 hex)\n"
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
"  --socket-group NAME   group of the Unix socket; also makes the cache group-\n"
"                        readable (files 0640, directories 0750; else 0600/0700)\n"
"                        and lets the cache and socket directories be group-writable\n"
"  --tls-cert FILE       serve HTTPS on --listen with this certificate (PEM)...\n"
"  --tls-key FILE        ...and this private key (PEM)\n"
"  --www DIR             the status page's files, served at / and /ui/ (default\n"
"                        ../share/eulernpu/www or ../server/www beside the\n"
"                        program, where one has an index.html; 'none' = no page).\n"
"                        Read at start-up: at most 64 files, 8 MiB in all\n"
"\n"
"Remote cache (docs/architecture.md, \"Remote cache\"):\n"
"  --remote-cache URL    an HTTP cache (GET/PUT/HEAD URL/cas/<sha256> and\n"
"                        URL/ac/<key>: bazel-remote, nginx WebDAV) in front of the\n"
"                        local cache: a local miss is looked up there\n"
"  --remote-cache-mode read|readwrite\n"
"                        read (default): only read; readwrite: also upload each\n"
"                        local compile, signed (needs --remote-cache-sign-key)\n"
"  --remote-cache-sign-key FILE  PEM Ed25519 private key signing the entries\n"
"                        written (openssl genpkey -algorithm ed25519); not\n"
"                        readable by others. Its public half is trusted\n"
"  --remote-cache-trust FILE  a PEM public key whose entries are taken\n"
"                        (repeatable; a list in the file); entries signed by\n"
"                        no trusted key are ignored and counted\n"
"  --remote-cache-token-file FILE  bearer token sent to the remote\n"
"  --remote-cache-cacert FILE  CA certificates (PEM) to check an https remote\n"
"  --remote-cache-timeout S  bound on a call to the remote; a blob transfer\n"
"                        under 64 KiB/s for this long is dropped (default 2;\n"
"                        '500ms' for milliseconds)\n"
"  --remote-cache-backoff S  a failing remote is left alone (local only,\n"
"                        health 'degraded') this long, then probed (default 30)\n"
"  --remote-cache-queue N  compiles waiting for upload at most (default 256)\n"
"  --remote-cache-miss-ttl S  a key the remote lacked is not asked for again\n"
"                        this long (a compile's retry with the weights;\n"
"                        default 5, 0: ask every time)\n"
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
"  --max-onnx-bytes N    an ONNX model to import (default 1073741824)\n"
"  --max-onnx-nodes N    nodes of an ONNX model's graph (default 100000)\n"
"  --request-timeout S   a request body must arrive within S seconds (default\n"
"                        3600; 0 = no bound); --conn-timeout bounds idle gaps\n"
"\n"
"Socket activation: with LISTEN_PID/LISTEN_FDS (systemd), the daemon serves the\n"
"sockets it is handed (Unix or TCP) instead of --socket/--listen.\n"
"\n"
"SIGTERM or SIGINT: drain (POST /v1/jobs answers 503; queued and running jobs\n"
"finish, at most --drain-timeout, then the jobs left are cancelled, a running\n"
"one at its next op), then stop, remove the socket, exit 0; a second signal\n"
"stops at once (queued jobs fail, running ones finish, or stop at the drain's\n"
"deadline). SIGHUP re-reads the token files and the boards of the configuration\n"
"file.\n";

int srv_usage_error(const char *fmt, ...)
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

int srv_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
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

typedef enum { O_STR, O_INT, O_U64, O_ROLE, O_BOARD, O_MODE, O_MSEC, O_NODE, O_TRUST, O_SKIP } otype;
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
	{"--board-wait",   O_INT, OFF(board_wait), 0, 86400},
	{"--cache",        O_STR, OFF(cache_dir), 0, 0},
	{"--cache-max",    O_U64, OFF(cache_max), 0, UINT64_MAX / 2},
	{"--config",       O_SKIP, 0, 0, 0},
	{"--conn-limit",   O_INT, OFF(conn_limit), 1, 100000},
	{"--conn-timeout", O_INT, OFF(conn_timeout), 1, 86400},
	{"--drain-timeout", O_INT, OFF(drain_timeout), 0, 7 * 86400},
	{"--http-threads", O_INT, OFF(http_threads), 1, 1024},
	{"--idle-exit",    O_MSEC, OFF(idle_exit_ms), 0, INT_MAX / 1000},
	{"--job-history",  O_INT, OFF(job_history), 1, 10000000},
	{"--job-timeout",  O_INT, OFF(job_timeout), 1, 7 * 86400},
	{"--job-ttl",      O_INT, OFF(job_ttl), 1, 366 * 86400},
	{"--listen",       O_STR, OFF(listen), 0, 0},
	{"--log",          O_STR, OFF(log_file), 0, 0},
	{"--log-level",    O_STR, OFF(log_level), 0, 0},
	{"--loop-job-us",  O_INT, OFF(loop_job_us), 0, 10000000},
	{"--max-json-bytes", O_U64, OFF(max_json_bytes), 64, INT_MAX},
	{"--max-json-depth", O_INT, OFF(max_json_depth), 2, 10000},
	{"--max-npz-bytes", O_U64, OFF(limits.max_npz_bytes), 1, UINT64_MAX / 2},
	{"--max-npz-members", O_U64, OFF(limits.max_npz_members), 1, 1u << 30},
	{"--max-onnx-bytes", O_U64, OFF(max_onnx_bytes), 1, UINT64_MAX / 2},
	{"--max-onnx-nodes", O_U64, OFF(max_onnx_nodes), 1, 1u << 30},
	{"--max-ops",      O_U64, OFF(limits.max_ops), 1, 1u << 30},
	{"--max-queue",    O_INT, OFF(max_queue), 0, 1000000},
	{"--max-spec-bytes", O_U64, OFF(limits.max_spec_bytes), 1, 1ull << 32},
	{"--max-tensor-bytes", O_U64, OFF(limits.max_tensor_bytes), 4, UINT64_MAX / 2},
	{"--max-tensor-elems", O_U64, OFF(limits.max_tensor_elems), 1, UINT64_MAX / 8},
	{"--max-upload",   O_U64, OFF(max_upload), 1, UINT64_MAX / 2},
	{"--max-yaml-depth", O_INT, OFF(limits.max_yaml_depth), 2, 10000},
	{"--max-yaml-nodes", O_U64, OFF(limits.max_yaml_nodes), 16, 1ull << 40},
	{"--node-id",      O_NODE, OFF(node_id), 0, 0},
	{"--pid-file",     O_STR, OFF(pid_file), 0, 0},
	{"--pl",           O_STR, OFF(pl), 0, 0},
	{"--port-file",    O_STR, OFF(port_file), 0, 0},
	{"--remote-cache", O_STR, OFF(remote_cache), 0, 0},
	{"--remote-cache-backoff", O_INT, OFF(remote_cache_backoff), 1, 86400},
	{"--remote-cache-cacert", O_STR, OFF(remote_cache_cacert), 0, 0},
	{"--remote-cache-miss-ttl", O_INT, OFF(remote_cache_miss_ttl), 0, 3600},
	{"--remote-cache-mode", O_STR, OFF(remote_cache_mode), 0, 0},
	{"--remote-cache-queue", O_INT, OFF(remote_cache_queue), 1, 100000},
	{"--remote-cache-sign-key", O_STR, OFF(remote_cache_sign_key), 0, 0},
	{"--remote-cache-timeout", O_MSEC, OFF(remote_cache_timeout_ms), 1, 600},
	{"--remote-cache-token-file", O_STR, OFF(remote_cache_token_file), 0, 0},
	{"--remote-cache-trust", O_TRUST, 0, 0, 0},
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
	{"--www",          O_STR, OFF(www_dir), 0, 0},
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
	} else if (o->type == O_NODE) {
		if (!enpu_node_id_ok(val))
			return enpu_fail(e, ENPU_E_USAGE, NULL, "give 1 to 16 lowercase letters and "
					 "digits, such as n1", "option '%s': '%.40s' is not a node id "
					 "(1-16 of [a-z0-9])", name, val);
		*(const char **)((char *)c + o->off) = val;
	} else if (o->type == O_TRUST) {
		if (!*val)
			return enpu_fail(e, ENPU_E_USAGE, NULL, NULL, "option '%s' needs a file name", name);
		if (c->n_remote_cache_trust == SRV_REMOTE_TRUST_CFG)
			return enpu_fail(e, ENPU_E_USAGE, NULL, NULL, "at most %d trusted keys",
					 SRV_REMOTE_TRUST_CFG);
		c->remote_cache_trust[c->n_remote_cache_trust++] = val;
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
	} else if (o->type == O_MSEC) {   /* seconds, or milliseconds with "ms" */
		char num[32];
		size_t n = strlen(val);
		int ms = n > 2 && !strcmp(val + n - 2, "ms");
		uint64_t v;

		snprintf(num, sizeof num, "%.*s", (int)(ms ? n - 2 : n), val);
		if (srv_parse_u64(num, o->min, ms ? o->max * 1000 : o->max, &v) != 0)
			return enpu_fail(e, ENPU_E_USAGE, NULL, NULL,
					 "option '%s': '%s' is not a whole number of seconds (or of "
					 "milliseconds, with 'ms') in [%llu, %llu]", name, val,
					 (unsigned long long)o->min, (unsigned long long)o->max);
		*(int *)((char *)c + o->off) = (int)(ms ? v : v * 1000);
	} else if (o->type != O_SKIP) {
		uint64_t v;
		if (srv_parse_u64(val, o->min, o->max, &v) != 0)
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
int srv_opts_apply_file(srv_config *c, const srv_cfg_file *f, enpu_err *e)
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
static int flag_trust;        /* --remote-cache-trust given there */

int srv_opts_flag_boards(void)
{
	return flag_boards;
}

/* 0 = go on, 1 = done (help/version printed), 2 = usage error (printed). */
int srv_opts_parse(int argc, char **argv, srv_config *c)
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
			return srv_usage_error("unknown option '%s'", a);
		if (eq)
			val = eq + 1;
		else if (i + 1 < argc)
			val = argv[++i];
		else
			return srv_usage_error("option '%s' needs a value", name);
		/* boards on the command line replace those of the file */
		if (o->type == O_BOARD && !flag_boards++)
			c->n_boards = 0;
		if (o->type == O_TRUST && !flag_trust++)   /* so do trusted keys */
			c->n_remote_cache_trust = 0;
		if (set_opt(c, o, name, val, &e) != 0)
			return srv_usage_error("%s", e.message);
	}
	return 0;
}

int srv_opts_check(srv_config *c)
{
	if (c->port_file && !c->listen)
		return srv_usage_error("--port-file needs --listen HOST:PORT");
	if (c->pl && !enpu_pl_by_name(c->pl))
		return srv_usage_error("--pl '%s' is not a PL driver of this build (known: %s)", c->pl,
				   enpu_pl_names());
	if (c->pl && c->role != SRV_ROLE_BOARD)
		return srv_usage_error("--pl applies to a board agent: add --role board");
	if (c->role == SRV_ROLE_BOARD && (c->n_boards || c->board_token_file))
		return srv_usage_error("a board agent (--role board) fronts no boards: drop --board%s",
				   c->board_token_file ? " and --board-token-file" : "");
	if (c->log_level && srv_log_set_level(c->log_level) != 0)
		return srv_usage_error("--log-level '%s' is not one of error, warn, info, debug",
				   c->log_level);
	if (!c->tls_cert != !c->tls_key)
		return srv_usage_error("TLS needs both --tls-cert and --tls-key");
	if (!c->remote_cache && (c->remote_cache_mode || c->remote_cache_sign_key ||
				 c->remote_cache_token_file || c->remote_cache_cacert ||
				 c->n_remote_cache_trust))
		return srv_usage_error("the --remote-cache-* settings need --remote-cache URL");
	if (c->socket_group && !getgrnam(c->socket_group))
		return srv_usage_error("--socket-group '%s' is not a group on this system", c->socket_group);
	return 0;
}

void srv_opts_defaults(srv_config *c)
{
	srv_config_defaults(c);
	c->cache_dir = srv_state_default_cache();
}

/* A bearer token from a file: one line, trailing whitespace dropped, no
 * spaces or control characters (it goes into a header), the file no more
 * open than --tokens (srv_token_file_private). Never logged. */
int srv_read_token(const char *flag, const char *path, char **out)
{
	enpu_buf b = ENPU_BUF_INIT;
	enpu_err e = ENPU_ERR_INIT;
	size_t n, i;

	if (srv_token_file_private(path, &e) != 0) {
		char line[1536];

		snprintf(e.message + strlen(e.message), sizeof e.message - strlen(e.message),
			 " (%s)", flag);
		enpu_err_render(&e, line, sizeof line);
		fputs(line, stderr);
		return 2;
	}
	if (enpu_read_file(path, 4096, &b, &e) != 0) {
		enpu_buf_free(&b);
		return srv_usage_error("%s '%s': %s", flag, path, e.message);
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
		return srv_usage_error("%s '%s': the token must be one line of printable characters, "
				   "without spaces", flag, path);
	}
	*out = strndup(b.data, n);
	enpu_buf_free(&b);
	if (!*out)
		return srv_usage_error("out of memory");
	return 0;
}

/* A PEM file as a NUL-terminated string (MHD's HTTPS_MEM options). */
int srv_read_pem(const char *flag, const char *path, char **out)
{
	enpu_buf b = ENPU_BUF_INIT;
	enpu_err e = ENPU_ERR_INIT;

	if (enpu_read_file(path, 1u << 20, &b, &e) != 0 || !b.len) {
		enpu_buf_free(&b);
		return srv_usage_error("%s '%s': %s", flag, path, e.message[0] ? e.message : "empty file");
	}
	*out = strndup(b.data, b.len);
	enpu_buf_free(&b);
	if (!*out)
		return srv_usage_error("out of memory");
	return 0;
}

#define DEFAULT_CONFIG "/etc/eulernpu/eulernpud.yaml"

/* --config FILE wherever it stands (values of other options skipped), else
 * the default file when it exists; NULL for none. */
const char *srv_opts_config_path(int argc, char **argv, int *check)
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

/* daemon.h: the pieces of the eulernpud program that main.c puts together:
 * its options (options.c) and its listening sockets (listen.c). Nothing
 * else of the server uses them; they live outside main.c so that tests
 * can link them. */
#ifndef SRV_DAEMON_H
#define SRV_DAEMON_H

#include <stdint.h>
#include "srv.h"

struct MHD_Daemon;

/* ---- options (options.c) -------------------------------------------------- */

/* Every default, the cache directory from $XDG_CACHE_HOME or $HOME. */
void srv_opts_defaults(srv_config *c);
/* --config FILE wherever it stands on the command line, else the default
 * file (/etc/eulernpu/eulernpud.yaml) when it exists; NULL for none
 * ("--config none"). *check: --check-config was given. */
const char *srv_opts_config_path(int argc, char **argv, int *check);
/* Apply a configuration file's items; a bad one is E0816 at file:line:col. */
int srv_opts_apply_file(srv_config *c, const srv_cfg_file *f, enpu_err *e);
/* The command line over c: 0 = go on, 1 = done (help/version printed),
 * 2 = usage error (printed). --board replaces the file's boards. */
int srv_opts_parse(int argc, char **argv, srv_config *c);
/* 1 when --board was given on the command line (SIGHUP then keeps them). */
int srv_opts_flag_boards(void);
/* Combinations the table cannot check: 0, or 2 after printing why. */
int srv_opts_check(srv_config *c);
/* A usage error on stderr (E0001 with "see eulernpud --help"); returns 2. */
int srv_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A decimal in [min, max]: 0, or -1. */
int srv_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* A bearer token from a file (one printable line, no spaces; never
 * logged), or a PEM file as a string: 0, or 2 after a usage error. */
int srv_read_token(const char *flag, const char *path, char **out);
int srv_read_pem(const char *flag, const char *path, char **out);

/* ---- private state (state.c) ---------------------------------------------- */

/* $XDG_CACHE_HOME/eulernpu, else ~/.cache/eulernpu, else a per-user
 * ${TMPDIR:-/tmp}/eulernpu-cache-UID (checked like any other). */
const char *srv_state_default_cache(void);
/* Before anything is opened: the umask (private unless --socket-group),
 * the cache and socket directories (ours, not writable by others), the
 * cache lock and the pid file lock (held until exit). 0, or -1 after a
 * three-line E0816 on stderr (and in the log when it is a file). */
int srv_state_prepare(srv_config *c, int activated);
/* The version GET /v1/health reports (EULERNPUD_TEST_VERSION: tests only),
 * and the seconds since srv_state_prepare. */
const char *srv_state_version(void);
/* --idle-exit: 1 when the daemon is to stop now. Idle that long, it first
 * removes its socket's name (a client then waits for it to exit and starts
 * a fresh one) and stops once nothing came in for a short grace after. */
int srv_state_idle(srv_ctx *ctx);
/* At the end, after the cache is closed: let go of the cache lock, then
 * remove the pid file (after a clean run, status 0) and let go of it. */
void srv_state_release(const srv_config *c, int status);
double srv_state_uptime(void);

/* ---- listening sockets (listen.c) ------------------------------------------ */

#define SRV_MAX_LISTEN 8

typedef struct srv_listeners {
	struct MHD_Daemon *d[SRV_MAX_LISTEN];
	int fds[SRV_MAX_LISTEN];
	int n;                    /* entries of d and fds in use */
	int port;                 /* the TCP port served, 0 if none */
	int activated;            /* sockets handed over by systemd (count) */
	int made_socket;          /* we created cfg.socket_path: unlink it at exit */
} srv_listeners;

/* The number of sockets systemd handed over (sd_listen_fds(3)), 0 if none;
 * the LISTEN_* variables are unset so that nothing we start inherits them. */
int srv_listen_fds(void);
/* $XDG_RUNTIME_DIR/eulernpu/eulernpud.sock, else /tmp/eulernpu-UID/... */
const char *srv_default_socket(void);
/* Every socket, listening but not yet served: systemd's (l->activated of
 * them) or else the Unix socket and the TCP address of ctx->cfg, with
 * l->port known. Then serve them all. The daemon announces its port (the
 * --port-file) in between, so that once any socket answers, the file is
 * there. 0, or -1 (logged); what was opened or started is in l either
 * way, for the caller to stop. */
int srv_listen_open(srv_ctx *ctx, srv_listeners *l);
int srv_listen_serve(srv_ctx *ctx, srv_listeners *l);

#endif

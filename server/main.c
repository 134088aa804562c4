/* main.c: eulernpud, the daemon. Puts the pieces together: options
 * (options.c), the cache, job table, board pool and listeners (listen.c),
 * then waits for signals: SIGHUP reloads, SIGTERM drains, the idle timer
 * exits; the stop is orderly: stop accepting, let running jobs finish,
 * remove the socket and pid file. Everything after flag parsing is logged,
 * never printed. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
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
#include "daemon.h"
#include "sd.h"
#include "models.h"
#include "remote.h"
#include "routes.h"

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
	if (ctx->cfg.config_file && ctx->boards && !srv_opts_flag_boards()) {
		srv_cfg_file f;
		srv_config *tmp = malloc(sizeof *tmp);

		if (!tmp)
			return;
		*tmp = ctx->cfg;
		tmp->n_boards = 0;
		if (srv_cfg_read(ctx->cfg.config_file, &f, &e) != 0 || srv_opts_apply_file(tmp, &f, &e) != 0) {
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

/* After the options: their checks and the files they name (tokens, PEM,
 * the boards' CA). 0, or -1 after printing why. */
static int load_secrets(srv_ctx *ctx)
{
	enpu_err e = ENPU_ERR_INIT;

	if (srv_opts_check(&ctx->cfg) != 0)
		return -1;
	if (srv_auth_load(ctx, &e) != 0) {
		report(&e);
		return -1;
	}
	if (ctx->cfg.board_token_file &&
	    srv_read_token("--board-token-file", ctx->cfg.board_token_file, &ctx->board_token))
		return -1;
	if (ctx->cfg.tls_cert) {
		if (!srv_http_tls_supported()) {
			srv_usage_error("this libmicrohttpd was built without TLS: --tls-cert cannot be "
					"served (put a TLS proxy in front, or install a GnuTLS build)");
			return -1;
		}
		if (srv_read_pem("--tls-cert", ctx->cfg.tls_cert, &ctx->tls_cert_pem) ||
		    srv_read_pem("--tls-key", ctx->cfg.tls_key, &ctx->tls_key_pem))
			return -1;
	}
	if (ctx->cfg.remote_cache) {
		srv_remote_cfg rcfg = {ctx->cfg.remote_cache, ctx->cfg.remote_cache_mode,
				       ctx->cfg.remote_cache_token_file, ctx->cfg.remote_cache_cacert,
				       ctx->cfg.remote_cache_sign_key, ctx->cfg.remote_cache_trust,
				       ctx->cfg.n_remote_cache_trust, ctx->cfg.remote_cache_timeout_ms,
				       ctx->cfg.remote_cache_backoff, ctx->cfg.remote_cache_queue,
				       ctx->cfg.remote_cache_miss_ttl};
		ctx->remote = srv_remote_new(&rcfg, &e);
		if (!ctx->remote) {
			if (e.code != ENPU_OK)   /* else said already */
				report(&e);
			return -1;
		}
	}
	if (ctx->cfg.board_cacert) {
		if (access(ctx->cfg.board_cacert, R_OK) != 0) {
			srv_usage_error("--board-cacert '%s': %s", ctx->cfg.board_cacert, strerror(errno));
			return -1;
		}
		srv_blink_set_cacert(ctx->cfg.board_cacert);
	}
	return 0;
}

/* The process before any thread: the socket path, the log, the PL, curl,
 * and the signals, blocked so that every thread inherits the mask (this
 * thread takes them synchronously). 0, or -1 after printing why. */
static int init_process(srv_ctx *ctx, int activated, sigset_t *sigs)
{
	enpu_err e = ENPU_ERR_INIT;

	if (!activated && !ctx->cfg.socket_path && !ctx->cfg.listen)
		ctx->cfg.socket_path = srv_default_socket();
	if (activated)
		ctx->cfg.socket_path = NULL;   /* systemd owns the socket file */
	if (srv_log_open(ctx->cfg.log_file) != 0) {
		srv_usage_error("cannot open log file '%s': %s", ctx->cfg.log_file, strerror(errno));
		return -1;
	}
	if (srv_state_prepare(&ctx->cfg, activated) != 0) {   /* state.c: modes, owners, locks */
		srv_log_close();
		return -1;
	}
	srv_fault_init();   /* EULERNPUD_FAULT: crash tests only (fault.h) */
	ctx->lim = &ctx->cfg.limits;
	if (ctx->cfg.role == SRV_ROLE_BOARD &&
	    enpu_pl_select(ctx->cfg.pl ? ctx->cfg.pl : SRV_PL_EMULATED, &e) != 0) {
		srv_usage_error("%s", e.message);
		return -1;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);   /* before any thread */

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(sigs);
	sigaddset(sigs, SIGTERM);
	sigaddset(sigs, SIGINT);
	sigaddset(sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, sigs, NULL);
	return 0;
}

/* The status page's files (--www, or the directory beside the program),
 * read whole at start-up: 0, or -1 after the three-line error
 * (a --www that cannot be read, lacks index.html or is past the bounds). */
static int open_www(srv_ctx *ctx)
{
	const char *dir = ctx->cfg.www_dir;
	enpu_err e = ENPU_ERR_INIT;

	if (dir && !strcmp(dir, "none"))
		return 0;
	if (!dir)
		dir = srv_www_default_dir();
	if (!dir) {
		srv_log("info", "no status page: no www directory beside the program (--www DIR)");
		return 0;
	}
	ctx->www = srv_www_load(dir, &e);
	if (!ctx->www) {
		if (ctx->cfg.log_file)   /* else the log is stderr: the three lines say it */
			srv_log("error", "%s", e.message);
		report(&e);
		return -1;
	}
	srv_log("info", "status page: %d files from %s", srv_www_count(ctx->www), dir);
	return 0;
}

/* The observer, the cache, the job table and the board pool. 0, or -1
 * (logged). */
static int start_services(srv_ctx *ctx)
{
	enpu_err e = ENPU_ERR_INIT;

	ctx->obs = srv_metrics_observer();   /* requests and jobs feed /metrics */
	ctx->cas = srv_cas_open(ctx->cfg.cache_dir, &e);
	if (!ctx->cas) {
		srv_log("error", "cannot open cache '%s': %s", ctx->cfg.cache_dir, e.message);
		return -1;
	}
	ctx->models = srv_models_open(ctx->cas, &e);
	if (!ctx->models) {
		srv_log("error", "cannot open the models of '%s': %s", ctx->cfg.cache_dir, e.message);
		return -1;
	}
	ctx->jobs = srv_jobs_start(ctx->cas, ctx->lim, ctx->cfg.workers, ctx->cfg.threads,
				   ctx->cfg.max_queue, &e);
	if (!ctx->jobs) {
		srv_log("error", "cannot start workers: %s", e.message);
		return -1;
	}
	if (ctx->remote && srv_remote_start(ctx->remote, ctx->cas, ctx->lim, &e) != 0) {
		srv_log("error", "%s", e.message);
		return -1;
	}
	srv_jobs_on_store(ctx->jobs, enforce_cb, ctx);
	srv_jobs_set_observer(ctx->jobs, ctx->obs);
	srv_jobs_set_policy(ctx->jobs, ctx->cfg.job_timeout, ctx->cfg.job_ttl, ctx->cfg.job_history);
	srv_jobs_set_node(ctx->jobs, ctx->cfg.node_id);
	/* finish an eviction a crash cut short, or bring the cache under a
	 * smaller --cache-max: in the background, the listeners answer meanwhile */
	srv_cache_start(ctx);
	if (ctx->cfg.role != SRV_ROLE_BOARD) {
		ctx->boards = srv_boards_start(ctx, &e);
		if (!ctx->boards) {
			srv_log("error", "cannot start the board pool: %s", e.message);
			return -1;
		}
	}
	return 0;
}

/* --port-file (state.c wrote --pid-file), then the "listening" line. 0, or -1. */
static int announce(srv_ctx *ctx, const srv_listeners *l, const char *cpath)
{
	char line[64];

	if (ctx->cfg.port_file && l->port) {
		snprintf(line, sizeof line, "%d\n", l->port);
		if (write_small(ctx->cfg.port_file, line) != 0)
			return -1;
	}
	srv_log("info", "eulernpud %s listening%s%s%s%s%s (port %d%s) cache=%s workers=%d "
		"threads=%d role=%s boards=%d tokens=%d%s%s%s%s", ENPU_VERSION,
		ctx->cfg.socket_path ? " on " : "", ctx->cfg.socket_path ? ctx->cfg.socket_path : "",
		ctx->cfg.listen && !l->activated ? " tcp " : "",
		ctx->cfg.listen && !l->activated ? ctx->cfg.listen : "",
		l->activated ? " on sockets from systemd" : "", l->port,
		ctx->tls_cert_pem ? ", tls" : "",
		ctx->cfg.cache_dir, ctx->cfg.workers, ctx->cfg.threads,
		ctx->cfg.role == SRV_ROLE_BOARD ? "board" :
		ctx->cfg.role == SRV_ROLE_SERVER ? "server" : "local", ctx->cfg.n_boards,
		srv_auth_count(ctx->auth),
		ctx->cfg.role == SRV_ROLE_BOARD ? " pl=" : "",
		ctx->cfg.role == SRV_ROLE_BOARD ? enpu_pl_current()->name : "",
		cpath ? " config=" : "", cpath ? cpath : "");
	return 0;
}

/* Until it is time to stop: SIGHUP reloads; SIGTERM or SIGINT drains (no
 * new jobs) until the jobs are done; at --drain-timeout the table cancels
 * the queued jobs and stops the running ones at their next op, and once
 * they have ended the daemon stops; a second signal stops at once;
 * --idle-exit ends an idle daemon. */
static void serve(srv_ctx *ctx, const sigset_t *sigs)
{
	int q = 0, r = 0, w = 0, timed_out = 0;

	srv_jobs_stats(ctx->jobs, &q, &r, &w);
	srv_sd_ready(r, q);   /* every listener answers by now */
	for (;;) {
		struct timespec tick = {0, ctx->cfg.idle_exit_ms > 0 && ctx->cfg.idle_exit_ms < 1000
					   ? 20000000L : 250000000L};
		int sig = sigtimedwait(sigs, NULL, &tick);
		if (sig == SIGHUP) {
			srv_sd_reloading();
			reload(ctx);
			srv_jobs_stats(ctx->jobs, &q, &r, &w);
			srv_sd_ready(r, q);
			continue;
		}
		if (sig == SIGTERM || sig == SIGINT) {
			if (ctx->draining) {
				srv_log("info", "signal %d while draining: stopping now", sig);
				break;
			}
			ctx->draining = 1;
			srv_jobs_drain(ctx->jobs, ctx->cfg.drain_timeout);
			srv_jobs_stats(ctx->jobs, &q, &r, &w);
			srv_log("info", "signal %d: draining: no new jobs; %d queued, %d running "
				"(at most %d s)", sig, q, r, ctx->cfg.drain_timeout);
			srv_sd_stopping("draining: %d running, %d queued", r, q);
		}
		if (ctx->draining) {
			if (srv_jobs_idle(ctx->jobs)) {
				srv_log("info", timed_out ? "drain timed out: the jobs left were cancelled"
					: "drained: no jobs left");
				break;
			}
			if (!timed_out && srv_jobs_drain_over(ctx->jobs)) {
				timed_out = 1;
				srv_log("warn", "drain timeout (%d s): the queued jobs are cancelled, the "
					"running ones stop at their next op", ctx->cfg.drain_timeout);
			}
			continue;
		}
		srv_jobs_stats(ctx->jobs, &q, &r, &w);
		srv_sd_status(r, q);
		if (srv_state_idle(ctx))   /* --idle-exit (state.c) */
			break;
	}
}

/* Stop accepting; then let running jobs finish (waiters wake up); give the
 * answers in flight a moment; then close connections; only then free what
 * the handlers use. The pid file goes only after a clean run (status 0). */
static void shut_down(srv_ctx *ctx, srv_listeners *l, int status)
{
	int i;

	srv_sd_stopping("stopping");
	ctx->stopping = 1;
	ctx->draining = 1;
	for (i = 0; i < l->n; i++) {
		if (l->d[i]) {
			int s = srv_http_quiesce(l->d[i]);
			if (s >= 0)
				close(s);
			l->fds[i] = -1;
		}
	}
	srv_jobs_shutdown(ctx->jobs);
	srv_cache_stop();   /* the start-up pass sees ctx->stopping */
	for (i = 0; i < 50 && srv_http_active() > 0; i++)
		usleep(100000);
	for (i = 0; i < l->n; i++)
		srv_http_stop(l->d[i]);
	srv_boards_free(ctx->boards);   /* after the table stops: dispatchers leave */
	ctx->boards = NULL;
	for (i = 0; i < l->n; i++)
		if (l->fds[i] >= 0)
			close(l->fds[i]);
	if (l->made_socket && ctx->cfg.socket_path)
		unlink(ctx->cfg.socket_path);
	srv_remote_free(ctx->remote);   /* no handler is left to use it */
	ctx->remote = NULL;
	srv_jobs_free(ctx->jobs);
	srv_models_close(ctx->models);
	srv_www_free(ctx->www);
	ctx->www = NULL;
	ctx->models = NULL;
	srv_cas_close(ctx->cas);
	srv_state_release(&ctx->cfg, status);   /* the cache lock, then the pid file */
	srv_artifact_cache_clear();
	curl_global_cleanup();
	srv_log("info", "stopped");
	srv_log_close();
}

int main(int argc, char **argv)
{
	srv_ctx ctx;
	srv_listeners l;
	enpu_err e = ENPU_ERR_INIT;
	int rc, status = 2, check;
	const char *cpath;
	sigset_t sigs;

	memset(&ctx, 0, sizeof ctx);
	memset(&l, 0, sizeof l);
	/* With TZ unset, glibc stats /etc/localtime at every local-time
	 * conversion (libzip makes three for each npz a job reads and
	 * writes); set, it reads the zone once. The log is in UTC anyway. */
	setenv("TZ", ":/etc/localtime", 0);
	tzset();
	srv_opts_defaults(&ctx.cfg);
	cpath = srv_opts_config_path(argc, argv, &check);
	if (cpath) {
		if (srv_cfg_read(cpath, &cfgf, &e) != 0 ||
		    srv_opts_apply_file(&ctx.cfg, &cfgf, &e) != 0) {
			srv_cfg_free(&cfgf);
			return report(&e);
		}
		ctx.cfg.config_file = cpath;
	}
	rc = srv_opts_parse(argc, argv, &ctx.cfg);
	if (rc) {
		srv_cfg_free(&cfgf);
		return rc == 1 ? 0 : 2;
	}
	if (load_secrets(&ctx) != 0)
		goto early;
	if (check) {
		if (open_www(&ctx) != 0)   /* the log is closed: its lines go nowhere */
			goto early;
		printf("eulernpud: configuration OK%s%s%s\n", cpath ? " (" : "", cpath ? cpath : "",
		       cpath ? ")" : "");
		status = 0;
		goto early;
	}
	l.activated = srv_listen_fds();
	if (init_process(&ctx, l.activated, &sigs) != 0)
		goto early;

	status = 1;
	if (open_www(&ctx) != 0)
		status = 2;   /* a configuration error (E0816), as --check-config says */
	else if (start_services(&ctx) == 0 && srv_listen_open(&ctx, &l) == 0 &&
		 announce(&ctx, &l, cpath) == 0 && srv_listen_serve(&ctx, &l) == 0) {
		serve(&ctx, &sigs);
		status = 0;
	}
	shut_down(&ctx, &l, status);
early:
	srv_auth_shutdown(&ctx);
	srv_remote_free(ctx.remote);   /* --check-config's, or a failed start's */
	free(ctx.token);
	free(ctx.board_token);
	free(ctx.tls_cert_pem);
	free(ctx.tls_key_pem);
	srv_www_free(ctx.www);   /* --check-config's */
	srv_cfg_free(&cfgf);
	return status;
}

/* state.c: the daemon's private state. Before anything is opened or
 * listened on: the umask (cache files 0600, directories 0700; 0640/0750
 * with --socket-group), the cache and socket directories (ours and not
 * writable by others, else a three-line E0816 naming the path and the
 * fix), the cache lock (one daemon per cache directory) and the pid file
 * lock (held for the daemon's life: the client tells a live daemon by it,
 * not by the pid). Both locks are open file description locks, which a
 * client can test (F_OFD_GETLK) without taking. Also the default cache
 * directory and what GET /v1/health says about the process. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include "srv.h"
#include "buf.h"
#include "daemon.h"
#include "http.h"
#include "jobs.h"

static char cache_buf[4096];
static double started;
static int cache_fd = -1, pid_fd = -1;   /* the locks, held until srv_state_release */

const char *srv_state_default_cache(void)
{
	const char *x, *tmp;

	if ((x = getenv("XDG_CACHE_HOME")) && *x)
		snprintf(cache_buf, sizeof cache_buf, "%s/eulernpu", x);
	else if ((x = getenv("HOME")) && *x)
		snprintf(cache_buf, sizeof cache_buf, "%s/.cache/eulernpu", x);
	else {
		/* a per-user directory, checked like any other: never a shared one */
		tmp = getenv("TMPDIR");
		snprintf(cache_buf, sizeof cache_buf, "%s/eulernpu-cache-%u",
			 tmp && tmp[0] == '/' ? tmp : "/tmp", (unsigned)geteuid());
	}
	return cache_buf;
}

/* The three lines on stderr (E0816, exit 2), and the same in the log when
 * it is a file: the client that started us shows it from there. */
static int refuse(const srv_config *c, const char *path, const char *fix, const char *fmt, ...)
{
	enpu_err e = ENPU_ERR_INIT;
	char line[2048];
	va_list ap;

	e.code = ENPU_E_CONFIG;
	va_start(ap, fmt);
	vsnprintf(e.message, sizeof e.message, fmt, ap);
	va_end(ap);
	snprintf(e.where, sizeof e.where, "%s", path);
	snprintf(e.fix, sizeof e.fix, "%s", fix);
	enpu_err_render(&e, line, sizeof line);
	fputs(line, stderr);
	if (c->log_file)
		srv_log("error", "%s %s: %s (fix: %s)", enpu_code_info_of(e.code)->id, path,
			e.message, fix);
	return -1;
}

/* dir must be a directory owned by us (or by root when root_ok), not
 * writable by others, nor by its group unless a group shares the daemon. */
static int check_dir(const srv_config *c, const char *dir, int root_ok, const char *other)
{
	struct stat st;
	char fix[1200];

	if (stat(dir, &st) != 0)
		return refuse(c, dir, other, "cannot use the directory: %s", strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return refuse(c, dir, other, "not a directory");
	if (st.st_uid != geteuid() && !(root_ok && st.st_uid == 0)) {
		snprintf(fix, sizeof fix, "remove it (its owner can), or %s", other);
		return refuse(c, dir, fix, "the directory belongs to uid %u, not to the daemon's "
			      "uid %u: its owner could read or replace what the daemon keeps there",
			      (unsigned)st.st_uid, (unsigned)geteuid());
	}
	if ((st.st_mode & S_IWOTH) || ((st.st_mode & S_IWGRP) && !c->socket_group)) {
		snprintf(fix, sizeof fix, "chmod go-w '%.400s' (or --socket-group to share it with "
			 "a group), or %s", dir, other);
		return refuse(c, dir, fix, "the directory is writable by %s (mode %04o)",
			      (st.st_mode & S_IWOTH) ? "everyone" : "its group",
			      (unsigned)(st.st_mode & 07777));
	}
	return 0;
}

/* A write lock on the whole of path, held until exit, with our pid written
 * into it. 0; 1 when another process holds it (its pid, from the file, in
 * *holder, 0 if unknown); -1 on an error (errno). */
static int lock_file(const char *path, long *holder, int *fd_out)
{
	struct flock fl;
	char buf[32], line[32];
	ssize_t n;
	int fd, len;

	*holder = 0;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -1;
	memset(&fl, 0, sizeof fl);
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	if (fcntl(fd, F_OFD_SETLK, &fl) != 0) {
		int err = errno;

		if (err == EAGAIN || err == EACCES) {
			n = pread(fd, buf, sizeof buf - 1, 0);
			buf[n > 0 ? n : 0] = '\0';
			*holder = strtol(buf, NULL, 10);
		}
		close(fd);
		errno = err;
		return err == EAGAIN || err == EACCES ? 1 : -1;
	}
	len = snprintf(line, sizeof line, "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) != 0 || pwrite(fd, line, (size_t)len, 0) != len) {
		close(fd);
		return -1;
	}
	*fd_out = fd;   /* open (close-on-exec) until srv_state_release or exit: so is the lock */
	return 0;
}

static int take_lock(const srv_config *c, const char *path, const char *what, const char *other,
		     int *fd)
{
	long holder;
	int r = lock_file(path, &holder, fd);

	if (r < 0)
		return refuse(c, path, other, "cannot lock the %s: %s", what, strerror(errno));
	if (r > 0) {
		char fix[1200];

		snprintf(fix, sizeof fix, "stop it (kill -TERM %ld), or %s", holder, other);
		return refuse(c, path, fix, "another eulernpud (pid %ld) is using this %s",
			      holder, what);
	}
	return 0;
}

/* The directory of the Unix socket: made (0700, 0710 with a group) when
 * missing, then checked; root's directories (/run) are fine. */
static int socket_dir(const srv_config *c)
{
	char dir[4096], *slash;
	enpu_err e = ENPU_ERR_INIT;
	struct stat st;
	const char *other = "choose another with --socket PATH (or set XDG_RUNTIME_DIR)";

	snprintf(dir, sizeof dir, "%s", c->socket_path);
	slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, sizeof dir, ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	if (stat(dir, &st) != 0 && enpu_mkdirs(dir, (c->socket_mode & 0070) ? 0710 : 0700, &e) != 0)
		return refuse(c, dir, other, "cannot create the socket's directory: %s", e.message);
	return check_dir(c, dir, 1, other);
}

int srv_state_prepare(srv_config *c, int activated)
{
	char lock[4200];
	enpu_err e = ENPU_ERR_INIT;
	const char *other = "choose another with --cache DIR";
	mode_t old;

	started = srv_now();
	old = umask(0);
	umask(old | (c->socket_group ? 027 : 077));
	if (enpu_mkdirs(c->cache_dir, 0777, &e) != 0)   /* the umask decides */
		return refuse(c, c->cache_dir, other, "cannot create the cache directory: %s",
			      e.message);
	if (check_dir(c, c->cache_dir, 0, other) != 0)
		return -1;
	snprintf(lock, sizeof lock, "%s/lock", c->cache_dir);
	if (take_lock(c, lock, "cache directory", other, &cache_fd) != 0)
		return -1;
	if (!activated && c->socket_path && socket_dir(c) != 0)
		return -1;
	if (c->pid_file &&
	    take_lock(c, c->pid_file, "pid file", "choose another with --pid-file FILE", &pid_fd) != 0)
		return -1;
	return 0;
}

#define RETIRE_GRACE 0.2   /* seconds: what had connected before the socket went */

int srv_state_idle(srv_ctx *ctx)
{
	static double retired;
	double now = srv_now(), last = srv_http_last_activity();

	if (last < started)
		last = started;   /* no request yet: idle since the start */

	if (ctx->cfg.idle_exit_ms <= 0 || srv_http_active() != 0 || !srv_jobs_idle(ctx->jobs))
		return 0;
	if (!retired) {
		if ((now - last) * 1000.0 < (double)ctx->cfg.idle_exit_ms)
			return 0;
		/* a client between its calls holds a shared flock on the pid file
		 * (autostart.c); ours, kept, makes later clients wait for our exit */
		if (pid_fd >= 0 && flock(pid_fd, LOCK_EX | LOCK_NB) != 0)
			return 0;
		retired = now;
		if (ctx->cfg.socket_path)
			unlink(ctx->cfg.socket_path);
		srv_log("info", "idle for %d ms: the socket is gone, exiting", ctx->cfg.idle_exit_ms);
		return 0;
	}
	return now - (last > retired ? last : retired) >= RETIRE_GRACE;
}

void srv_state_release(const srv_config *c, int status)
{
	if (cache_fd >= 0)
		close(cache_fd);
	cache_fd = -1;
	/* the cache is free before the pid file goes: a client that sees it gone
	 * starts a daemon at once, which takes the cache lock */
	if (c->pid_file && pid_fd >= 0 && status == 0)
		unlink(c->pid_file);
	if (pid_fd >= 0)
		close(pid_fd);
	pid_fd = -1;
}

const char *srv_state_version(void)
{
	const char *v = getenv("EULERNPUD_TEST_VERSION");   /* tests only: eulernpud(8) */

	return v && *v ? v : ENPU_VERSION;
}

double srv_state_uptime(void)
{
	return started > 0 ? srv_now() - started : 0;
}

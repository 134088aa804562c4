/* autostart.c: the private daemon. With no server configured the client
 * finds eulernpud on a socket in the user's runtime directory, or starts one
 * there (detached, exiting when idle), the way a compiler cache does. A
 * daemon is alive while it holds the lock on its pid file (state.c), not
 * while its pid names a process; one of another version is restarted; one
 * that dies at start-up is reported with the first error of its log. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include <json-c/json.h>
#include "api.h"
#include "rest.h"

#define START_WAIT_MS 10000
#define POLL_MS 20

int cli_private_dir(char *out, size_t cap)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	int n;

	if (xdg && xdg[0] == '/')
		n = snprintf(out, cap, "%s/eulernpu", xdg);
	else
		n = snprintf(out, cap, "/tmp/eulernpu-%u", (unsigned)getuid());
	return (n < 0 || (size_t)n >= cap) ? -1 : 0;
}

/* Create dir 0700 (and a missing parent), and refuse one that is not ours:
 * whoever owns the directory could answer on our socket. */
static int own_dir(const char *dir, enpu_err *e)
{
	struct stat st;

	if (mkdir(dir, 0700) < 0 && errno == ENOENT) {
		char parent[PATH_MAX];
		char *slash;

		snprintf(parent, sizeof parent, "%s", dir);
		slash = strrchr(parent, '/');
		if (slash && slash != parent) {
			*slash = '\0';
			if (enpu_mkdirs(parent, 0700, e) < 0)
				return -1;
		}
		mkdir(dir, 0700);
	}
	if (lstat(dir, &st) < 0)
		return enpu_fail(e, ENPU_E_IO, dir, NULL, "cannot create the private daemon's directory: %s",
				 strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return enpu_fail(e, ENPU_E_IO, dir, "remove it, or set EULERNPU_SERVER",
				 "the private daemon's directory is not a directory");
	if (st.st_uid != getuid())
		return enpu_fail(e, ENPU_E_IO, dir, "remove it, or set XDG_RUNTIME_DIR or EULERNPU_SERVER",
				 "the private daemon's directory belongs to uid %u, not to you",
				 (unsigned)st.st_uid);
	if ((st.st_mode & 077) && chmod(dir, 0700) < 0)
		return enpu_fail(e, ENPU_E_IO, dir, NULL, "cannot make the directory private: %s",
				 strerror(errno));
	return 0;
}

/* 1 when a daemon answers GET /v1/health on url; its version into ver. */
static int healthy(const char *url, char *ver, size_t cap)
{
	enpu_err e = ENPU_ERR_INIT;
	cli_conn *c = cli_conn_new(url, &e);
	struct json_object *res = NULL;
	const char *v;
	int ok;

	ver[0] = '\0';
	if (!c)
		return 0;
	ok = cli_http_json(c, "GET", API_HEALTH, NULL, 5, &res, NULL, NULL, &e) == 0;
	v = ok ? cli_json_str(res, "version") : NULL;
	snprintf(ver, cap, "%s", v ? v : "");
	json_object_put(res);
	cli_conn_free(c);
	return ok;
}

long cli_private_pid(const cli_private *p)
{
	struct flock fl;
	char buf[32];
	ssize_t n;
	int fd = open(p->pidf, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return 0;
	memset(&fl, 0, sizeof fl);
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	/* the daemon holds this lock for its life: a stale pid file (a reused
	 * pid, a zombie) holds none, whatever process its pid names */
	if (fcntl(fd, F_OFD_GETLK, &fl) != 0 || fl.l_type == F_UNLCK) {
		close(fd);
		return 0;
	}
	n = pread(fd, buf, sizeof buf - 1, 0);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	n = strtol(buf, NULL, 10);
	return n > 0 ? n : -1;   /* -1: locked, the pid not written yet */
}

/* While it runs, a client holds a shared flock on the daemon's pid file: a
 * daemon idle for --idle-exit retires only when it can take it exclusive,
 * so that it never goes away between a client's calls. Taken after the
 * daemon answered: 1 when it is held (the daemon stays), 0 when the daemon
 * has retired meanwhile (it holds the flock) or its pid file is gone. */
static int hold(const cli_private *p)
{
	static int fd = -1;   /* open until we exit */

	if (fd >= 0)
		close(fd);
	fd = open(p->pidf, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	while (flock(fd, LOCK_SH | LOCK_NB) < 0)
		if (errno != EINTR)
			return 0;
	return 1;
}

/* The daemon binary: $EULERNPU_DAEMON, else eulernpud beside this
 * program, else "eulernpud" from PATH. */
static void daemon_path(char *out, size_t cap)
{
	const char *env = getenv("EULERNPU_DAEMON");
	char self[PATH_MAX];
	ssize_t n;

	if (env && *env) {
		snprintf(out, cap, "%s", env);
		return;
	}
	n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n > 0) {
		char *slash;

		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			if ((size_t)snprintf(out, cap, "%s/eulernpud", self) < cap &&
			    access(out, X_OK) == 0)
				return;
		}
	}
	snprintf(out, cap, "eulernpud");
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Start the daemon in a session of its own, with no controlling terminal;
 * it stays our child while we wait for it (so that we see it die), then
 * init's. Its stdio is /dev/null and every other descriptor is closed: a
 * caller reading our stdout through a pipe must see EOF when we exit, not
 * when the daemon does. A close-on-exec pipe carries exec's errno back. */
static pid_t spawn(const char *bin, const char *const *argv, enpu_err *e)
{
	int pfd[2], err = 0;
	pid_t pid;
	ssize_t n;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return enpu_fail(e, ENPU_E_IO, NULL, NULL, "cannot start '%s': pipe: %s", bin,
				 strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return enpu_fail(e, ENPU_E_IO, NULL, NULL, "cannot start '%s': fork: %s", bin,
				 strerror(errno));
	}
	if (pid == 0) {
		int fd;

		setsid();
		fd = open("/dev/null", O_RDWR | O_NOCTTY);
		if (fd >= 0) {
			dup2(fd, 0);
			dup2(fd, 1);
			dup2(fd, 2);
		}
		if (pfd[1] != 3) {
			dup2(pfd[1], 3);
			fcntl(3, F_SETFD, FD_CLOEXEC);
		}
		for (int i = 4; i < 1024; i++)
			close(i);
		if (chdir("/") < 0) {
			/* not fatal: the daemon takes absolute paths */
		}
		umask(077);
		signal(SIGPIPE, SIG_DFL);
		execvp(bin, (char *const *)argv);
		err = errno;
		if (write(3, &err, sizeof err) < 0) {
			/* nobody to tell */
		}
		_exit(127);
	}
	close(pfd[1]);
	do
		n = read(pfd[0], &err, sizeof err);
	while (n < 0 && errno == EINTR);
	close(pfd[0]);
	if (n == (ssize_t)sizeof err) {
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		return enpu_fail(e, ENPU_E_UNREACHABLE, bin,
				 "install eulernpud beside eulernpu, put it on PATH, or set EULERNPU_DAEMON",
				 "cannot start the private daemon: %s", strerror(err));
	}
	return pid;
}

/* The daemon we started exited (wait status ws) before it answered: its
 * first error line in the log (written from offset off on) becomes *e,
 * with the code it names (E0816 for a bad cache directory: exit 2). */
static int start_failed(const cli_private *p, long off, int ws, enpu_err *e)
{
	char line[2048], fix[1200];
	const enpu_code_info *ci = NULL;
	const char *msg = NULL, *f;
	FILE *lf = fopen(p->log, "re");
	int st = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);

	snprintf(fix, sizeof fix, "see the daemon's log %.1100s", p->log);
	if (lf && fseek(lf, off, SEEK_SET) != 0) {
		fclose(lf);
		lf = NULL;
	}
	while (lf && !msg && fgets(line, sizeof line, lf)) {
		char *m = strstr(line, "level=error ");

		if (!m)
			continue;
		line[strcspn(line, "\n")] = '\0';
		msg = m + 12;
		if (msg[0] == 'E' && strspn(msg + 1, "0123456789") == 4 && msg[5] == ' ') {
			char id[6];

			snprintf(id, sizeof id, "%.5s", msg);
			ci = enpu_code_by_id(id);
			msg += 6;
		}
		if ((f = strstr(msg, " (fix: ")) != NULL && line[strlen(line) - 1] == ')') {
			snprintf(fix, sizeof fix, "%.*s", (int)(strlen(f + 7) - 1), f + 7);
			line[f - line] = '\0';
		}
	}
	if (lf)
		fclose(lf);
	if (!msg)
		return enpu_fail(e, st == 2 ? ENPU_E_CONFIG : ENPU_E_UNREACHABLE, p->log, fix,
				 "the private daemon exited with status %d at start-up", st);
	return enpu_fail(e, ci ? ci->code : st == 2 ? ENPU_E_CONFIG : ENPU_E_UNREACHABLE, p->log,
			 fix, "the private daemon did not start: %s", msg);
}

int cli_private_paths(cli_private *p, enpu_err *e)
{
	if (cli_private_dir(p->dir, sizeof p->dir) < 0)
		return enpu_fail(e, ENPU_E_IO, NULL, "set XDG_RUNTIME_DIR to a shorter path",
				 "the private daemon's directory name is too long");
	snprintf(p->sock, sizeof p->sock, "%s/eulernpud.sock", p->dir);
	snprintf(p->lock, sizeof p->lock, "%s/autostart.lock", p->dir);
	snprintf(p->log, sizeof p->log, "%s/eulernpud.log", p->dir);
	snprintf(p->pidf, sizeof p->pidf, "%s/eulernpud.pid", p->dir);
	if (strlen(p->sock) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return enpu_fail(e, ENPU_E_IO, p->sock, "set XDG_RUNTIME_DIR to a shorter path",
				 "the private daemon's socket path is too long for a Unix socket");
	snprintf(p->url, sizeof p->url, "unix:%s", p->sock);
	return 0;
}

int cli_private_stop(const cli_private *p, int wait_ms, enpu_err *e)
{
	long pid = cli_private_pid(p), t0 = now_ms();

	if (pid == 0)
		return 1;
	if (pid > 0 && kill((pid_t)pid, SIGTERM) != 0 && errno != ESRCH)
		return enpu_fail(e, ENPU_E_IO, p->pidf, NULL, "cannot stop the private daemon "
				 "(pid %ld): %s", pid, strerror(errno));
	while (cli_private_pid(p) != 0) {
		if (now_ms() - t0 >= wait_ms)
			return enpu_fail(e, ENPU_E_UNREACHABLE, p->pidf, "wait for its jobs, or "
					 "kill -KILL it", "the private daemon (pid %ld) did not stop "
					 "within %d s", pid, wait_ms / 1000);
		sleep_ms(POLL_MS);
	}
	return 0;
}

/* Under the autostart lock: until a daemon of our version answers, start
 * one whenever none holds the pid file's lock (none ran, or the last one
 * went away: idle exit, a crash, a stale pid file), and stop one of
 * another version (once). A daemon we started that dies first is an
 * error with its first log line. */
static int wait_for_daemon(const cli_private *p, const char *idle, enpu_err *e)
{
	char bin[PATH_MAX], ver[64], fix[4300];
	const char *argv[] = {bin, "--socket", p->sock, "--idle-exit", idle, "--log", p->log,
			      "--pid-file", p->pidf, NULL};
	long t0 = now_ms(), off = 0;
	pid_t child = 0;
	int restarted = 0, clean_exits = 0, ws;
	struct stat st;

	daemon_path(bin, sizeof bin);
	for (;;) {
		if (healthy(p->url, ver, sizeof ver) && hold(p)) {
			if (!strcmp(ver, CLI_VERSION) || restarted)
				return 0;
			/* another version: stop it, start ours (once) */
			restarted = 1;
			if (cli_private_stop(p, START_WAIT_MS, e) < 0)
				return -1;
			t0 = now_ms();
			continue;
		}
		if (child > 0 && waitpid(child, &ws, WNOHANG) == child) {
			if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
				return start_failed(p, off, ws, e);
			if (++clean_exits > 10)   /* each went idle before we asked */
				return start_failed(p, off, ws, e);
			child = 0;   /* start another */
			continue;
		}
		if (child <= 0 && cli_private_pid(p) == 0) {
			unlink(p->sock);    /* stale, from a daemon that is gone */
			off = stat(p->log, &st) == 0 ? (long)st.st_size : 0;
			child = spawn(bin, argv, e);
			if (child < 0)
				return -1;
			t0 = now_ms();
			continue;
		}
		if (now_ms() - t0 >= START_WAIT_MS)
			break;
		sleep_ms(POLL_MS);
	}
	snprintf(fix, sizeof fix, "see the daemon's log %s", p->log);
	return enpu_fail(e, ENPU_E_UNREACHABLE, p->url, fix,
			 "the private daemon did not answer within %d s", START_WAIT_MS / 1000);
}

int cli_autostart(char *url, size_t cap, enpu_err *e)
{
	cli_private p;
	char ver[64];
	const char *idle = getenv("EULERNPU_IDLE_EXIT");
	size_t nd;
	int lfd, ret = -1;

	if (cli_private_paths(&p, e) < 0)
		return -1;
	if ((size_t)snprintf(url, cap, "%s", p.url) >= cap)
		return enpu_fail(e, ENPU_E_INTERNAL, NULL, NULL, "url buffer too small");
	nd = idle ? strspn(idle, "0123456789") : 0;
	if (!nd || (idle[nd] && strcmp(idle + nd, "ms")))
		idle = "600";
	if (own_dir(p.dir, e) < 0)
		return -1;
	if (healthy(p.url, ver, sizeof ver) && hold(&p) && !strcmp(ver, CLI_VERSION))
		return 0;

	/* One client starts the daemon; the others wait on the lock and then
	 * find it healthy. */
	lfd = open(p.lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (lfd < 0)
		return enpu_fail(e, ENPU_E_IO, p.lock, NULL, "cannot open the autostart lock: %s",
				 strerror(errno));
	while (flock(lfd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			enpu_fail(e, ENPU_E_IO, p.lock, NULL, "cannot take the autostart lock: %s",
				  strerror(errno));
			close(lfd);
			return -1;
		}
	}
	ret = wait_for_daemon(&p, idle, e);
	close(lfd);
	return ret;
}

int cli_connect(cli_ctx *ctx, enpu_err *e)
{
	char url[4200];
	const char *server = ctx->server;

	if (ctx->conn)
		return 0;
	if (!server) {
		if (cli_autostart(url, sizeof url, e) < 0)
			return -1;
		server = url;
	}
	ctx->conn = cli_conn_new(server, e);
	if (ctx->conn && cli_conn_set_auth(ctx->conn, ctx->token, ctx->cacert) != 0) {
		cli_conn_free(ctx->conn);
		ctx->conn = NULL;
		return enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
	}
	return ctx->conn ? 0 : -1;
}

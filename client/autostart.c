/* autostart.c: the private daemon. With no server configured the client
 * finds eulernpud on a socket in the user's runtime directory, or starts one
 * there (detached, exiting when idle), the way a compiler cache does. */
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
#include "rest.h"

#define START_WAIT_MS 10000
#define POLL_MS 50

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

static int healthy(const char *url)
{
	enpu_err e = ENPU_ERR_INIT;
	cli_conn *c = cli_conn_new(url, &e);
	int ok;

	if (!c)
		return 0;
	ok = cli_http_health(c, &e) == 0;
	cli_conn_free(c);
	return ok;
}

/* A daemon from an earlier start that is still alive (its pid file names a
 * live process): we wait for it rather than start a second one. */
static int pid_alive(const char *pidfile)
{
	char buf[32] = "";
	FILE *f = fopen(pidfile, "r");
	long pid;

	if (!f)
		return 0;
	if (!fgets(buf, sizeof buf, f))
		buf[0] = '\0';
	fclose(f);
	pid = strtol(buf, NULL, 10);
	return pid > 1 && pid <= INT_MAX && kill((pid_t)pid, 0) == 0;
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

/* Start the daemon detached: fork, setsid, fork again, so that it is
 * nobody's child but init's and has no controlling terminal. Its stdio is
 * /dev/null and every other descriptor is closed: a caller reading our
 * stdout through a pipe must see EOF when we exit, not when the daemon
 * does. A close-on-exec pipe carries exec's errno back. */
static int spawn(const char *bin, const char *const *argv, enpu_err *e)
{
	int pfd[2], status, err = 0;
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
		if (fork() != 0)
			_exit(0);
		fd = open("/dev/null", O_RDWR);
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
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	do
		n = read(pfd[0], &err, sizeof err);
	while (n < 0 && errno == EINTR);
	close(pfd[0]);
	if (n == (ssize_t)sizeof err)
		return enpu_fail(e, ENPU_E_UNREACHABLE, bin,
				 "install eulernpud beside eulernpu, put it on PATH, or set EULERNPU_DAEMON",
				 "cannot start the private daemon: %s", strerror(err));
	return 0;
}

int cli_autostart(char *url, size_t cap, enpu_err *e)
{
	char dir[PATH_MAX], sock[PATH_MAX + 32], lock[PATH_MAX + 32], log[PATH_MAX + 32];
	char pidf[PATH_MAX + 32], bin[PATH_MAX], fix[PATH_MAX + 64];
	const char *idle = getenv("EULERNPU_IDLE_EXIT");
	int lfd = -1, ret = -1;

	if (cli_private_dir(dir, sizeof dir) < 0)
		return enpu_fail(e, ENPU_E_IO, NULL, "set XDG_RUNTIME_DIR to a shorter path",
				 "the private daemon's directory name is too long");
	snprintf(sock, sizeof sock, "%s/eulernpud.sock", dir);
	snprintf(lock, sizeof lock, "%s/autostart.lock", dir);
	snprintf(log, sizeof log, "%s/eulernpud.log", dir);
	snprintf(pidf, sizeof pidf, "%s/eulernpud.pid", dir);
	if (strlen(sock) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return enpu_fail(e, ENPU_E_IO, sock, "set XDG_RUNTIME_DIR to a shorter path",
				 "the private daemon's socket path is too long for a Unix socket");
	if ((size_t)snprintf(url, cap, "unix:%s", sock) >= cap)
		return enpu_fail(e, ENPU_E_INTERNAL, NULL, NULL, "url buffer too small");
	if (!idle || !*idle || strspn(idle, "0123456789") != strlen(idle))
		idle = "600";

	if (own_dir(dir, e) < 0)
		return -1;
	if (healthy(url))
		return 0;

	/* One client starts the daemon; the others wait on the lock and then
	 * find it healthy. */
	lfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (lfd < 0)
		return enpu_fail(e, ENPU_E_IO, lock, NULL, "cannot open the autostart lock: %s",
				 strerror(errno));
	while (flock(lfd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			enpu_fail(e, ENPU_E_IO, lock, NULL, "cannot take the autostart lock: %s",
				  strerror(errno));
			goto out;
		}
	}
	if (healthy(url)) {
		ret = 0;
		goto out;
	}
	if (!pid_alive(pidf)) {
		const char *argv[] = {bin, "--socket", sock, "--idle-exit", idle, "--log", log,
				      "--pid-file", pidf, NULL};

		unlink(sock);    /* stale, from a daemon that is gone */
		daemon_path(bin, sizeof bin);
		if (spawn(bin, argv, e) < 0)
			goto out;
	}
	for (int waited = 0; waited < START_WAIT_MS; waited += POLL_MS) {
		if (healthy(url)) {
			ret = 0;
			goto out;
		}
		sleep_ms(POLL_MS);
	}
	snprintf(fix, sizeof fix, "see the daemon's log %s", log);
	enpu_fail(e, ENPU_E_UNREACHABLE, url, fix,
		  "the private daemon did not answer within %d s", START_WAIT_MS / 1000);
out:
	if (lfd >= 0)
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

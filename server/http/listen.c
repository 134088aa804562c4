/* listen.c: eulernpud's listening sockets: the private Unix socket
 * (mode, group, refusing to replace a live one), TCP, and sockets handed
 * over by systemd's socket activation (counted and named by libsystemd,
 * sd.c); each gets an HTTP listener. */
#include <errno.h>
#include <grp.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>
#include "srv.h"
#include "buf.h"
#include "http.h"
#include "daemon.h"
#include "sd.h"

#define SD_LISTEN_FDS_START 3   /* sd_listen_fds(3) */

static char sock_path_buf[4096];

static int open_unix(const char *path, int mode, const char *group)
{
	struct sockaddr_un sa;
	struct stat st;
	char dir[4096], *slash;
	enpu_err e = ENPU_ERR_INIT;
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
	/* Bound under the daemon's umask (077, or 027 with --socket-group:
	 * srv_state_prepare), never a narrower one set around the bind: the
	 * umask is the process's, and the cache's threads (the start-up pass)
	 * create files meanwhile. Until the chmod below, only the owner can
	 * connect (a connect needs write permission). */
	if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0)
		goto fail;
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

const char *srv_default_socket(void)
{
	const char *x = getenv("XDG_RUNTIME_DIR");
	if (x && *x)
		snprintf(sock_path_buf, sizeof sock_path_buf, "%s/eulernpu/eulernpud.sock", x);
	else
		snprintf(sock_path_buf, sizeof sock_path_buf, "/tmp/eulernpu-%u/eulernpud.sock",
			 (unsigned)getuid());
	return sock_path_buf;
}

/* Sockets handed over by systemd: sd.c asks libsystemd. */
int srv_listen_fds(void)
{
	return srv_sd_listen_fds();
}

/* The TCP port a socket listens on, or 0 for a Unix socket; -1 if it is
 * not a listening stream socket. */
static int socket_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;

	if (!srv_sd_is_listening(fd) || getsockname(fd, (struct sockaddr *)&ss, &sl) != 0)
		return -1;
	if (ss.ss_family == AF_UNIX)
		return 0;
	return ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
					: ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

int srv_listen_open(srv_ctx *ctx, srv_listeners *l)
{
	int i;

	if (l->activated) {
		if (l->activated > SRV_MAX_LISTEN)
			srv_log("warn", "socket activation: %d sockets handed over, serving the "
				"first %d", l->activated, SRV_MAX_LISTEN);
		for (i = 0; i < l->activated && l->n < SRV_MAX_LISTEN; i++) {
			int fd = SD_LISTEN_FDS_START + i, p = socket_port(fd);
			if (p < 0) {
				srv_log("error", "fd %d handed over by systemd is not a listening "
					"stream socket", fd);
				return -1;
			}
			l->fds[l->n++] = fd;
			if (p > 0)
				l->port = p;
			srv_log("info", "socket activation: serving fd %d (%s) name=%s", fd,
				p ? "tcp" : "unix", srv_sd_fd_name(i));
		}
		return 0;
	}
	if (ctx->cfg.socket_path) {
		int fd = open_unix(ctx->cfg.socket_path, ctx->cfg.socket_mode, ctx->cfg.socket_group);
		if (fd < 0)
			return -1;
		l->made_socket = 1;
		l->fds[l->n++] = fd;
	}
	if (ctx->cfg.listen) {
		int fd = open_tcp(ctx->cfg.listen, &l->port);
		if (fd < 0)
			return -1;
		l->fds[l->n++] = fd;
	}
	return 0;
}

int srv_listen_serve(srv_ctx *ctx, srv_listeners *l)
{
	for (int i = 0; i < l->n; i++)
		if (!(l->d[i] = srv_http_start(ctx, l->fds[i])))
			return -1;
	return 0;
}

/* sd.c: eulernpud and systemd, through libsystemd; every call is a no-op
 * when systemd is not there (no NOTIFY_SOCKET: nothing is sent; no
 * LISTEN_FDS: no socket; stderr not the journal: plain lines).
 *
 * - Notifications (sd_notify): READY=1 once every listener answers,
 *   RELOADING=1 ... READY=1 around a SIGHUP reload, STOPPING=1 when the
 *   drain starts, and STATUS= lines with the job counts, so that
 *   `systemctl status eulernpud` says what the daemon does. The units are
 *   Type=notify: `systemctl start` returns when the daemon answers.
 * - Socket activation: sd_listen_fds_with_names checks LISTEN_PID, counts
 *   the sockets, marks them close-on-exec and unsets the variables; the
 *   names (FileDescriptorName=) go into the log.
 * - The journal. libsystemd has no call that says whether stderr is the
 *   journal, so JOURNAL_STREAM ("DEV:INODE", systemd.exec(5)) is still
 *   compared with stderr's fstat: it is inherited, and only counts while it
 *   is still our stderr. When it is, each line goes through
 *   sd_journal_sendv with structured fields (EULERNPU_REQUEST_ID,
 *   EULERNPU_JOB_ID, EULERNPU_CODE: `journalctl EULERNPU_JOB_ID=...`) rather
 *   than the stream, which only carries text and a <N> priority. We do not
 *   send to the journal unless stderr was connected to it (a daemon started
 *   by hand on a systemd machine keeps its lines on the terminal), nor use
 *   sd_journal_stream_fd (a new stream carries no fields either). As
 *   sd_journal_sendv reports success when the journal's socket is missing
 *   (a container, a test that sets JOURNAL_STREAM), the socket must be
 *   there at start; otherwise, or if a send fails, log.c writes the line to
 *   stderr with its <N> prefix as before. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
#include "sd.h"

/* ---- the service manager ------------------------------------------------- */

static int last_running = -1, last_queued = -1;

void srv_sd_ready(int running, int queued)
{
	last_running = running;
	last_queued = queued;
	sd_notifyf(0, "READY=1\nSTATUS=serving %d jobs, %d queued", running, queued);
}

void srv_sd_reloading(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	sd_notifyf(0, "RELOADING=1\nSTATUS=reloading\nMONOTONIC_USEC=%llu",
		   (unsigned long long)ts.tv_sec * 1000000ULL + (unsigned long long)ts.tv_nsec / 1000);
}

void srv_sd_stopping(const char *fmt, ...)
{
	char status[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(status, sizeof status, fmt, ap);
	va_end(ap);
	sd_notifyf(0, "STOPPING=1\nSTATUS=%s", status);
}

void srv_sd_status(int running, int queued)
{
	if (running == last_running && queued == last_queued)
		return;
	last_running = running;
	last_queued = queued;
	sd_notifyf(0, "STATUS=serving %d jobs, %d queued", running, queued);
}

/* ---- socket activation ----------------------------------------------------- */

static char **fd_names;
static int n_fd_names;

int srv_sd_listen_fds(void)
{
	int n = sd_listen_fds_with_names(1, &fd_names);

	if (n <= 0) {
		fd_names = NULL;
		return 0;
	}
	n_fd_names = fd_names ? n : 0;
	return n;
}

const char *srv_sd_fd_name(int i)
{
	return i >= 0 && i < n_fd_names && fd_names[i] ? fd_names[i] : "unknown";
}

int srv_sd_is_listening(int fd)
{
	return sd_is_socket(fd, AF_UNSPEC, SOCK_STREAM, 1) > 0;
}

/* ---- the journal ------------------------------------------------------------ */

int srv_sd_stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!js || sscanf(js, "%llu:%llu", &dev, &ino) != 2 || fstat(2, &st) != 0)
		return 0;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

/* sd-journal's own path: libsystemd has no call that asks for it. */
int srv_sd_journal_native(void)
{
	struct stat st;

	return stat("/run/systemd/journal/socket", &st) == 0 && S_ISSOCK(st.st_mode);
}

/* Append "KEY=value" (len bytes of value); skipped when it does not fit. */
static void add_field(srv_sd_fields *f, const char *key, const char *val, size_t len)
{
	size_t used = 0, klen = strlen(key);
	int i;

	for (i = 0; i < f->n; i++)
		used += f->iov[i].iov_len;
	if (f->n >= SRV_SD_MAX_FIELDS || used + klen + 1 + len > sizeof f->buf)
		return;
	memcpy(f->buf + used, key, klen);
	f->buf[used + klen] = '=';
	memcpy(f->buf + used + klen + 1, val, len);
	f->iov[f->n].iov_base = f->buf + used;
	f->iov[f->n].iov_len = klen + 1 + len;
	f->n++;
}

/* The value of logfmt key "name=" standing as a word of msg ("-" is none):
 * its start and length, or NULL. A quoted value loses its quotes. */
static const char *logfmt_value(const char *msg, const char *name, size_t *len)
{
	size_t nl = strlen(name);
	const char *p = msg, *v, *end;

	while ((p = strstr(p, name)) != NULL) {
		if ((p == msg || p[-1] == ' ') && p[nl] == '=')
			break;
		p += nl;
	}
	if (!p)
		return NULL;
	v = p + nl + 1;
	if (*v == '"') {
		end = strchr(++v, '"');
		if (!end)
			end = v + strlen(v);
	} else {
		end = v + strcspn(v, " ");
	}
	*len = (size_t)(end - v);
	if (*len == 0 || (*len == 1 && *v == '-'))
		return NULL;
	return v;
}

/* The first word that is an error code ("E0812", maybe followed by ':'). */
static const char *error_code_word(const char *msg)
{
	const char *p;

	for (p = msg; *p; p++) {
		if (*p != 'E' || (p != msg && p[-1] != ' '))
			continue;
		if (isdigit((unsigned char)p[1]) && isdigit((unsigned char)p[2]) &&
		    isdigit((unsigned char)p[3]) && isdigit((unsigned char)p[4]) &&
		    (p[5] == '\0' || strchr(" :,;)", p[5])))
			return p;
	}
	return NULL;
}

int srv_sd_journal_fields(srv_sd_fields *f, int priority, const char *level, const char *msg)
{
	static const struct { const char *key, *field; } keys[] = {
		{"req", "EULERNPU_REQUEST_ID"},
		{"job", "EULERNPU_JOB_ID"},
		{"board", "EULERNPU_BOARD"},
		{"code", "EULERNPU_CODE"},
	};
	char text[2048];
	const char *v;
	size_t i, len;
	int n;

	f->n = 0;
	n = snprintf(text, sizeof text, "level=%s %s", level, msg);
	add_field(f, "MESSAGE", text, n < 0 ? 0 : (size_t)n < sizeof text ? (size_t)n : sizeof text - 1);
	n = snprintf(text, sizeof text, "%d", priority);
	add_field(f, "PRIORITY", text, (size_t)n);
	add_field(f, "SYSLOG_IDENTIFIER", "eulernpud", 9);
	for (i = 0; i < sizeof keys / sizeof keys[0]; i++)
		if ((v = logfmt_value(msg, keys[i].key, &len)) != NULL)
			add_field(f, keys[i].field, v, len);
	if (!logfmt_value(msg, "code", &len) && (v = error_code_word(msg)) != NULL)
		add_field(f, "EULERNPU_CODE", v, 5);
	return f->n;
}

int srv_sd_journal_send(int priority, const char *level, const char *msg)
{
	srv_sd_fields f;

	srv_sd_journal_fields(&f, priority, level, msg);
	return sd_journal_sendv(f.iov, f.n) < 0 ? -1 : 0;
}

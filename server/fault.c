/* fault.c: the named fault points of the crash tests (EULERNPUD_FAULT, see
 * fault.h) and the E0003 -> E0810 mapping of a full cache disk. The points
 * let a test kill -9 the daemon at one exact moment instead of sleeping and
 * hoping; unset, srv_fault_point is one load and a branch. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "srv.h"
#include "fault.h"

static int armed;                 /* set once in srv_fault_init, before any thread */
static char fault_name[64];
static long fault_nth = 1;
static char fault_file[4096];
static atomic_long passes;
static char hold_path[4096];      /* EULERNPUD_HOLD, set once in srv_fault_init */

void srv_fault_init(void)
{
	const char *v = getenv("EULERNPUD_FAULT"), *f = getenv("EULERNPUD_FAULT_FILE");
	const char *colon, *h = getenv("EULERNPUD_HOLD");
	size_t n;

	if (h && *h && strlen(h) < sizeof hold_path) {
		snprintf(hold_path, sizeof hold_path, "%s", h);
		srv_log("warn", "jobs are held while %s exists (EULERNPUD_HOLD): for tests only", hold_path);
	}
	if (!v || !*v)
		return;
	colon = strchr(v, ':');
	n = colon ? (size_t)(colon - v) : strlen(v);
	if (n == 0 || n >= sizeof fault_name) {
		srv_log("warn", "EULERNPUD_FAULT='%.80s' is not NAME or NAME:N: ignored", v);
		return;
	}
	if (colon) {
		char *end;
		errno = 0;
		fault_nth = strtol(colon + 1, &end, 10);
		if (errno || end == colon + 1 || *end || fault_nth < 1) {
			srv_log("warn", "EULERNPUD_FAULT='%.80s' is not NAME or NAME:N: ignored", v);
			return;
		}
	}
	memcpy(fault_name, v, n);
	fault_name[n] = '\0';
	if (f && *f && strlen(f) < sizeof fault_file - 8)
		snprintf(fault_file, sizeof fault_file, "%s", f);
	armed = 1;
	srv_log("warn", "fault point '%s' (pass %ld) armed by EULERNPUD_FAULT: for tests only",
		fault_name, fault_nth);
}

/* The marker appears whole (written aside, then renamed): a test that sees
 * it can read the pid at once. */
static void write_marker(void)
{
	char tmp[sizeof fault_file + 8], line[32];
	int fd, n;

	if (!fault_file[0])
		return;
	snprintf(tmp, sizeof tmp, "%s.tmp", fault_file);
	n = snprintf(line, sizeof line, "%ld\n", (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (write(fd, line, (size_t)n) != n) {
		close(fd);
		unlink(tmp);
		return;
	}
	close(fd);
	if (rename(tmp, fault_file) != 0)
		unlink(tmp);
}

void srv_fault_point(const char *name)
{
	if (!armed)
		return;
	if (strcmp(name, fault_name) != 0 || atomic_fetch_add(&passes, 1) + 1 != fault_nth)
		return;
	srv_log("warn", "fault point %s reached: pausing", name);
	write_marker();
	for (;;)
		pause();
}

void srv_fault_hold(const volatile int *cancel)
{
	const struct timespec tick = {0, 10 * 1000 * 1000};

	if (!hold_path[0])
		return;
	while (!*cancel && access(hold_path, F_OK) == 0)
		nanosleep(&tick, NULL);
}

int srv_fault_may_pause(void)
{
	return armed || hold_path[0];
}

int srv_fault_storage(enpu_err *e)
{
	static const int errs[] = {ENOSPC, EDQUOT, EIO, EROFS};
	size_t i;

	if (e->code != ENPU_E_IO)
		return e->code;
	for (i = 0; i < sizeof errs / sizeof errs[0]; i++)
		if (e->sys_errno == errs[i]) {
			/* the core's message names a path in tmp/: of no use to a client */
			e->code = ENPU_E_STORAGE;
			snprintf(e->message, sizeof e->message,
				 "the server cannot write to its cache directory: %s", strerror(errs[i]));
			e->where[0] = '\0';
			e->fix[0] = '\0';   /* the catalogue's: free disk space on the server */
			break;
		}
	return e->code;
}

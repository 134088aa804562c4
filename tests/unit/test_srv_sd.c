/* test_srv_sd.c: server/sd.c without systemd: the journal fields a log
 * line becomes (request id, job id, board, error code; MESSAGE, PRIORITY,
 * SYSLOG_IDENTIFIER), the JOURNAL_STREAM check, and that STATUS= is sent
 * to NOTIFY_SOCKET only when the job counts change. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "sd.h"

/* The value of field KEY, "" when it is absent. */
static const char *field(const srv_sd_fields *f, const char *key, char *out, size_t cap)
{
	size_t kl = strlen(key);
	int i;

	out[0] = '\0';
	for (i = 0; i < f->n; i++) {
		const char *b = f->iov[i].iov_base;
		size_t l = f->iov[i].iov_len;
		if (l > kl && !memcmp(b, key, kl) && b[kl] == '=') {
			snprintf(out, cap, "%.*s", (int)(l - kl - 1), b + kl + 1);
			return out;
		}
	}
	return out;
}

static int count(const srv_sd_fields *f, const char *key)
{
	size_t kl = strlen(key);
	int i, n = 0;

	for (i = 0; i < f->n; i++)
		if (f->iov[i].iov_len > kl && !memcmp(f->iov[i].iov_base, key, kl) &&
		    ((const char *)f->iov[i].iov_base)[kl] == '=')
			n++;
	return n;
}

Test(sd_journal, request_line_fields)
{
	srv_sd_fields f;
	char v[512];

	srv_sd_journal_fields(&f, 6, "info", "req=r-42 method=GET route=/v1/health status=200 bytes=10");
	cr_assert_str_eq(field(&f, "MESSAGE", v, sizeof v),
			 "level=info req=r-42 method=GET route=/v1/health status=200 bytes=10");
	cr_assert_str_eq(field(&f, "PRIORITY", v, sizeof v), "6");
	cr_assert_str_eq(field(&f, "SYSLOG_IDENTIFIER", v, sizeof v), "eulernpud");
	cr_assert_str_eq(field(&f, "EULERNPU_REQUEST_ID", v, sizeof v), "r-42");
	cr_assert_eq(count(&f, "EULERNPU_JOB_ID"), 0);
	cr_assert_eq(count(&f, "EULERNPU_CODE"), 0);
	cr_assert_eq(f.n, 4);
}

/* What a field holds for a message ("" = the field is absent), and how
 * often it is there (a field never comes twice). */
static const struct {
	const char *msg, *key, *want;
} cases[] = {
	{"job=j-7 artifact=abcdef012345 failed: E0812 board b1 said no", "EULERNPU_JOB_ID", "j-7"},
	{"job=j-7 artifact=abcdef012345 failed: E0812 board b1 said no", "EULERNPU_CODE", "E0812"},
	{"job=j-7 artifact=abcdef012345 failed: E0812 board b1 said no", "EULERNPU_REQUEST_ID", ""},
	/* board_job= is not job=, and "-" is no request id */
	{"req=- board_job=bj-1 job=j-2 board=zc706-1 attempt=1", "EULERNPU_JOB_ID", "j-2"},
	{"req=- board_job=bj-1 job=j-2 board=zc706-1 attempt=1", "EULERNPU_BOARD", "zc706-1"},
	{"req=- board_job=bj-1 job=j-2 board=zc706-1 attempt=1", "EULERNPU_REQUEST_ID", ""},
	/* code= wins over a code in the text */
	{"code=E0001 then E0812: other", "EULERNPU_CODE", "E0001"},
	/* look-alikes are no codes; a quoted value loses its quotes */
	{"XE1234 E12345 E12 e0812 job=\"q 1\"", "EULERNPU_CODE", ""},
	{"XE1234 E12345 E12 e0812 job=\"q 1\"", "EULERNPU_JOB_ID", "q 1"},
	{"req=r-1 aborted (code 3)", "EULERNPU_CODE", ""},
};

Test(sd_journal, fields_of_logfmt_keys_and_codes)
{
	srv_sd_fields f;
	char v[512];
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		srv_sd_journal_fields(&f, 4, "warn", cases[i].msg);
		cr_assert_str_eq(field(&f, cases[i].key, v, sizeof v), cases[i].want, "%s in '%s'",
				 cases[i].key, cases[i].msg);
		cr_assert_eq(count(&f, cases[i].key), cases[i].want[0] ? 1 : 0, "%s in '%s'",
			     cases[i].key, cases[i].msg);
		cr_assert_str_eq(field(&f, "PRIORITY", v, sizeof v), "4");
	}
}

Test(sd_journal, long_message_is_bounded)
{
	srv_sd_fields f;
	char msg[3000], v[4096];

	memset(msg, 'x', sizeof msg - 1);
	msg[sizeof msg - 1] = '\0';
	memcpy(msg, "job=j-9 ", 8);
	srv_sd_journal_fields(&f, 6, "info", msg);
	cr_assert_eq(strncmp(field(&f, "MESSAGE", v, sizeof v), "level=info job=j-9 xxx", 22), 0);
	cr_assert_lt(strlen(v), sizeof f.buf);
	cr_assert_str_eq(field(&f, "EULERNPU_JOB_ID", v, sizeof v), "j-9");
	cr_assert_str_eq(field(&f, "PRIORITY", v, sizeof v), "6");
}

Test(sd_journal, journal_stream_must_be_stderr)
{
	struct stat st;
	char js[64];

	cr_assert_eq(fstat(2, &st), 0);
	unsetenv("JOURNAL_STREAM");
	cr_assert_eq(srv_sd_stderr_is_journal(), 0);
	snprintf(js, sizeof js, "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	setenv("JOURNAL_STREAM", js, 1);
	cr_assert_eq(srv_sd_stderr_is_journal(), 1);
	snprintf(js, sizeof js, "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino + 1);
	setenv("JOURNAL_STREAM", js, 1);
	cr_assert_eq(srv_sd_stderr_is_journal(), 0);
	setenv("JOURNAL_STREAM", "garbage", 1);
	cr_assert_eq(srv_sd_stderr_is_journal(), 0);
	unsetenv("JOURNAL_STREAM");
}

/* Every datagram waiting on fd, joined by " / ". */
static void drain(int fd, char *out, size_t cap)
{
	char m[512];
	ssize_t n;

	out[0] = '\0';
	while ((n = recv(fd, m, sizeof m - 1, MSG_DONTWAIT)) > 0) {
		m[n] = '\0';
		if (out[0])
			strncat(out, " / ", cap - strlen(out) - 1);
		strncat(out, m, cap - strlen(out) - 1);
	}
}

Test(sd_notify, status_only_when_counts_change)
{
	struct sockaddr_un sa;
	char path[] = "/tmp/enpu-sd-XXXXXX", sock[64], got[2048];
	int fd;

	cr_assert_not_null(mkdtemp(path));
	snprintf(sock, sizeof sock, "%s/notify", path);
	fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", sock);
	cr_assert_eq(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	setenv("NOTIFY_SOCKET", sock, 1);

	srv_sd_ready(0, 0);
	srv_sd_status(0, 0);            /* unchanged: nothing */
	srv_sd_status(2, 1);
	srv_sd_status(2, 1);            /* unchanged: nothing */
	srv_sd_status(1, 0);
	srv_sd_stopping("draining: %d running, %d queued", 1, 0);
	drain(fd, got, sizeof got);
	cr_assert_str_eq(got, "READY=1\nSTATUS=serving 0 jobs, 0 queued / "
			 "STATUS=serving 2 jobs, 1 queued / STATUS=serving 1 jobs, 0 queued / "
			 "STOPPING=1\nSTATUS=draining: 1 running, 0 queued");

	unsetenv("NOTIFY_SOCKET");      /* outside systemd: nothing is sent */
	srv_sd_status(5, 5);
	drain(fd, got, sizeof got);
	cr_assert_str_eq(got, "");
	close(fd);
	unlink(sock);
	rmdir(path);
}

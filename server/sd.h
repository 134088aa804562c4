/* sd.h: eulernpud and systemd, through libsystemd (sd.c): the service
 * manager's notifications (READY, RELOADING, STOPPING, STATUS), sockets
 * handed over by socket activation, and log lines sent to the journal with
 * structured fields. Every call is a no-op outside systemd. */
#ifndef SRV_SD_H
#define SRV_SD_H

#include <stddef.h>
#include <sys/uio.h>

/* ---- the service manager (sd_notify(3)) ------------------------------------ */

/* Up and answering: READY=1 with a STATUS line of the job counts. */
void srv_sd_ready(int running, int queued);
/* SIGHUP: RELOADING=1 (with MONOTONIC_USEC, which Type=notify-reload wants). */
void srv_sd_reloading(void);
/* Draining or stopping: STOPPING=1 and STATUS= the formatted text. */
void srv_sd_stopping(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* STATUS=serving N jobs, M queued, sent only when the counts changed. */
void srv_sd_status(int running, int queued);

/* ---- socket activation (sd_listen_fds(3)) ---------------------------------- */

/* The number of sockets handed over (from SD_LISTEN_FDS_START), 0 if none;
 * LISTEN_PID/LISTEN_FDS/LISTEN_FDNAMES are unset and the sockets made
 * close-on-exec, so nothing we start inherits them. */
int srv_sd_listen_fds(void);
/* The name systemd gave socket i (FileDescriptorName=, the socket unit's
 * name by default), or "unknown". */
const char *srv_sd_fd_name(int i);
/* 1 when fd is a listening stream socket. */
int srv_sd_is_listening(int fd);

/* ---- the journal (sd_journal_sendv(3)) ------------------------------------- */

/* 1 when stderr is the stream systemd connected to the journal
 * (JOURNAL_STREAM names its device and inode). */
int srv_sd_stderr_is_journal(void);

/* 1 when the journal's native socket is there: sd_journal_sendv drops a
 * line without a word when it is not, so log.c then keeps to stderr. */
int srv_sd_journal_native(void);

#define SRV_SD_MAX_FIELDS 8
typedef struct srv_sd_fields {
	struct iovec iov[SRV_SD_MAX_FIELDS];
	int n;
	char buf[4096];           /* the fields' text, iov points into it */
} srv_sd_fields;

/* One log line as journal fields: MESSAGE ("level=L msg"), PRIORITY,
 * SYSLOG_IDENTIFIER=eulernpud, and from the logfmt message EULERNPU_REQUEST_ID
 * (req=), EULERNPU_JOB_ID (job=), EULERNPU_BOARD (board=) and EULERNPU_CODE
 * (code=, else the first word that is an error code, E0812). Returns f->n. */
int srv_sd_journal_fields(srv_sd_fields *f, int priority, const char *level, const char *msg);
/* Send one line to the journal: 0, or -1 (the caller writes it to stderr). */
int srv_sd_journal_send(int priority, const char *level, const char *msg);

#endif

/* jobs.h: the job table, a bounded priority queue and the worker pool
 * (jobs.c, jobs_run.c, jobs_json.c, jobs_remote.c; jobs_int.h inside). A
 * job runs an artifact on an input blob into a result blob. The table lives
 * in memory (jobs do not survive a restart); a mutex guards it, a condvar
 * wakes long-poll and event-stream waiters on every state change, and a
 * timer thread enforces each job's timeout (queue + run), the retention
 * of finished jobs (--job-ttl, --job-history) and the drain's deadline.
 * No cost grows with the table (jobs_index.c): a job is found by id in
 * O(1), queued, taken, cancelled and placed (its position) in O(log n),
 * and what expires or is forgotten at once goes in batches, the lock let
 * go between them. */
#ifndef SRV_JOBS_H
#define SRV_JOBS_H

#include <stdatomic.h>
#include "enpu.h"
#include "cas.h"
#include "wire.h"

struct json_object;
struct srv_observer;
struct srv_ident;
typedef struct srv_jobs srv_jobs;

/* workers threads, each with a kernel pool of `threads`; at most max_queue
 * jobs waiting. NULL + *e on failure. */
srv_jobs *srv_jobs_start(srv_cas *cas, const enpu_limits *lim, int workers, int threads,
			 int max_queue, enpu_err *e);
/* Called (outside the lock) after a worker stored a job's result in the
 * CAS: the daemon keeps its cache bound there. */
void srv_jobs_on_store(srv_jobs *j, void (*fn)(void *), void *arg);

/* Tell obs of every job that reaches a final state (its job_done hook,
 * called under the table's lock); NULL = nobody. obs must outlive the
 * table. */
void srv_jobs_set_observer(srv_jobs *j, const struct srv_observer *obs);

/* Priorities: the queue is ordered by priority, then first come first
 * served. */
#define SRV_PRIO_LOW    0
#define SRV_PRIO_NORMAL 1
#define SRV_PRIO_HIGH   2
int srv_prio_parse(const char *s);     /* "low" | "normal" | "high"; -1 otherwise */
const char *srv_prio_name(int prio);

/* The policy (defaults: 600 s, 86400 s, 10000): every job ends within
 * timeout_s of its submission (a job may ask for less); a finished job is
 * forgotten after ttl_s or when more than history finished jobs are kept,
 * oldest first. Its result and report blobs stay in the CAS. */
void srv_jobs_set_policy(srv_jobs *j, int timeout_s, int ttl_s, int history);

/* Job ids from now on begin with "<node>-" (--node-id; enpu_node_id_ok),
 * or have no prefix (node NULL, the default). Set before any submit: a
 * job id names its node so that a balancer routes /v1/jobs/<node>-... */
void srv_jobs_set_node(srv_jobs *j, const char *node);

/* SIGTERM's drain (the daemon takes no new job): it ends within timeout_s
 * seconds from now. At that deadline (the table's timer, or the first
 * srv_jobs_drain_over past it) no job starts any more, the queued ones are
 * cancelled and the running ones (local and board jobs) are asked to stop
 * at their next op boundary: each ends cancelled, its error saying the
 * drain timed out. A second call keeps the first deadline. */
void srv_jobs_drain(srv_jobs *j, int timeout_s);
/* 1 once the drain's deadline has passed (what it does, done). */
int srv_jobs_drain_over(srv_jobs *j);

/* Stop accepting, fail queued jobs, wake every waiter, let running jobs
 * finish (a local one stops at the drain's deadline, when there is one)
 * and join the workers. The table stays readable until free (which shuts
 * down first if needed). */
void srv_jobs_shutdown(srv_jobs *j);
void srv_jobs_free(srv_jobs *j);

/* Queue a job; its id (16 hex) in id. -1 + ENPU_E_QUEUE_FULL (or
 * ENPU_E_STORAGE while shutting down). */
int srv_jobs_submit(srv_jobs *j, const char *artifact, const char *backend,
		    const char *input, const char *input_name, char id[ENPU_JOB_ID_SIZE], enpu_err *e);

/* A submission with every option. */
typedef struct srv_jobreq {
	const char *artifact, *backend, *input, *input_name;
	int priority;              /* SRV_PRIO_* */
	int timeout_s;             /* 0 = the policy's; more is capped to it */
	int remote;                /* a board job (boards.c runs it) */
	const char *owner;         /* who submitted it (srv_ident name); NULL = "" */
	int here;                  /* SRV_HERE_*: the caller waits for it and may run it */
	const char *model;         /* "name:version" it was submitted as, or NULL */
} srv_jobreq;
/* SRV_HERE_ONLY: when a worker slot is free and no job is queued, the job
 * is started for the caller to run (no hand-off to a worker and back);
 * otherwise it is not submitted at all (the answer is SRV_HERE_REFUSED). */
enum { SRV_HERE_NO, SRV_HERE_ONLY };
#define SRV_HERE_REFUSED 2
/* 0; 1 when q->here took it: the caller then calls srv_jobs_run_here
 * (after letting go of any lock of its own: the run stores into the
 * cache, which may evict); SRV_HERE_REFUSED; -1 + *e. */
int srv_jobs_submit_req(srv_jobs *j, const srv_jobreq *q, char id[ENPU_JOB_ID_SIZE], enpu_err *e);
/* Run the job submit_req took for this caller, on this thread. */
void srv_jobs_run_here(srv_jobs *j, const char *id);
/* 1 when a job of artifact would run at once on its submitter's thread
 * (a free slot, an empty queue, --threads 1, no fault gate) and its
 * artifact's last local run took less than max_s: short enough for an
 * HTTP thread, and for the submitter's ?wait (a longer or unknown run goes
 * to a worker, so ?wait=S answers after S seconds whatever the run does). */
int srv_jobs_runs_fast(srv_jobs *j, const char *artifact, double max_s);

/* The job as JSON after waiting up to wait_s seconds for it to finish
 * (*final = 1 when it has). NULL for an unknown id. Caller puts. */
struct json_object *srv_jobs_get(srv_jobs *j, const char *id, int wait_s, int *final);
/* Result digest of a succeeded job: 1; 0 and its state name otherwise;
 * -1 for an unknown id. */
int srv_jobs_result(srv_jobs *j, const char *id, char digest[65], const char **state);
/* Digest of a succeeded job's report.json (in the CAS): 1; 0 and its state
 * name otherwise; -1 for an unknown id. */
int srv_jobs_report(srv_jobs *j, const char *id, char digest[65], const char **state);
/* Ask a job to stop: a queued one is cancelled at once, a running one at
 * its next op boundary (a board job: on its board). 0, 1 when it had
 * already finished, -1 if unknown. */
int srv_jobs_cancel(srv_jobs *j, const char *id);

/* Jobs newest first as a JSON array (caller puts): states is a bit mask
 * (1u << index in queued, running, succeeded, failed, cancelled, timed_out;
 * 0 = all), backend NULL = any, at most limit; who NULL = everyone's, else
 * only the jobs who may see (srv_ident_owns). */
struct json_object *srv_jobs_list(srv_jobs *j, unsigned states, const char *backend, int limit,
				  const struct srv_ident *who);

/* ---- owners (jobs_owner.c) --------------------------------------------------
 * Each job records who submitted it ("owner"); a job another identity may
 * not see is, to it, a job that does not exist. */
/* 1 when job id exists and who may see it (srv_ident_owns), else 0. */
int srv_jobs_visible(srv_jobs *j, const char *id, const struct srv_ident *who);
/* 1 when a job who may see uses digest as its input, result or report. */
int srv_jobs_uses(srv_jobs *j, const struct srv_ident *who, const char *digest);
/* The index of a state name, -1 if unknown. */
int srv_job_state_parse(const char *s);

/* A job's state changes, for a server-sent event stream. watch registers
 * a watcher (each later change is kept for it until read) and gives the
 * job's JSON text now (caller frees), its sequence number and whether it
 * is final: 0, or -1 for an unknown id. next gives the change after *seq:
 * 1 (json, *seq, *final set), 0 when none came within wait_s, -1 when the
 * table stops or the job is gone. unwatch once done. */
int srv_jobs_watch(srv_jobs *j, const char *id, unsigned *seq, char **json, int *final);
int srv_jobs_watch_next(srv_jobs *j, const char *id, unsigned *seq, double wait_s,
			char **json, int *final);
void srv_jobs_unwatch(srv_jobs *j, const char *id);

/* The changes of every job (its submission, each state), numbered 1, 2,
 * ... in order: the stream of all jobs (GET /v1/events). next waits up to
 * wait_s for changes after *since, copies up to cap of them into out and
 * moves *since past them: the count, or -1 once the table stops. When
 * *since is older than the last SRV_JOBS_FEED changes, or newer than the
 * last (from before a restart), *reset = 1 and it starts from now (the
 * reader reloads the list). seq: the last number. */
#define SRV_JOBS_FEED 4096
typedef struct srv_feed_ev {
	uint64_t seq;
	char id[ENPU_JOB_ID_SIZE];
	char owner[64];
} srv_feed_ev;
int srv_jobs_feed_next(srv_jobs *j, uint64_t *since, double wait_s, srv_feed_ev *out, int cap,
		       int *reset);
uint64_t srv_jobs_feed_seq(srv_jobs *j);

/* ---- board jobs (run by boards.c, not by the workers) --------------------- */

/* How a forwarded run ended (board.c). */
typedef enum srv_rkind {
	SRV_RUN_OK = 0,
	SRV_RUN_MODEL,     /* the board's own job error, passed through */
	SRV_RUN_FAULT,     /* the board failed: refused, timed out, 5xx, garbage */
	SRV_RUN_CANCEL,    /* cancelled here (user, --job-timeout, shutdown) */
} srv_rkind;

/* cancel values of a job (enpu_run and the board dispatchers poll it). */
#define SRV_CANCEL_USER     1
#define SRV_CANCEL_TIMEOUT  2
#define SRV_CANCEL_SHUTDOWN 3
#define SRV_CANCEL_DRAIN    4   /* the drain's deadline (--drain-timeout) */

/* A board job handed to a dispatcher. cancel points into the job, which
 * stays valid until srv_jobs_remote_done (running jobs are never freed). */
typedef struct srv_rjob {
	char id[ENPU_JOB_ID_SIZE], artifact[65], backend[32], input[65], input_name[256];
	const volatile int *cancel;
	double deadline;           /* srv_now() seconds */
	int attempt;               /* 1 for the first try */
} srv_rjob;

/* What the dispatcher brings back. outputs/extra/board_error are owned by
 * the job afterwards (extra: other keys of the board's job JSON to show,
 * e.g. "npu"; board_error: a board fault's own error {board, code,
 * message}, shown as data with the failed job). */
typedef struct srv_rresult {
	char result[65], report[65];
	double seconds;
	struct json_object *outputs, *extra, *board_error;
} srv_rresult;

/* Queue a board job (backend is zynq_ps or fpga_board) that must end within
 * timeout_s seconds. As srv_jobs_submit otherwise. */
int srv_jobs_submit_remote(srv_jobs *j, const char *artifact, const char *backend,
			   const char *input, const char *input_name, int timeout_s,
			   char id[ENPU_JOB_ID_SIZE], enpu_err *e);
/* Take the oldest queued board job whose backend bit (1u << its registry index)
 * is in mask, for board `board`, waiting up to wait_s seconds, and only
 * while *gate is non-zero (the board is up: checked when a job is there).
 * 1 = got one (it is running now), 0 = none, -1 = shutting down. */
int srv_jobs_take_remote(srv_jobs *j, unsigned mask, const atomic_int *gate, const char *board,
			 double wait_s, srv_rjob *out);
/* End a try: OK succeeds (res taken), MODEL fails with *e, FAULT requeues
 * the job at the head while tries remain (retries + 1 in all), else fails
 * it with *e; CANCEL fails it as the cancel flag says. Returns 1 when the
 * job went back to the queue. */
int srv_jobs_remote_done(srv_jobs *j, const char *id, srv_rkind kind, srv_rresult *res,
			 const enpu_err *e, int retries);
/* Time out queued board jobs past their deadline (E0813) and flag running
 * ones to stop (SRV_CANCEL_TIMEOUT). A queued job whose backend bit is not
 * in up_mask (no board serving it is up) shows why (waiting[its backend],
 * waiting may be NULL) and fails E0811 once it has waited so board_wait
 * seconds (0 = at once). Called by boards.c's timer (local jobs have the
 * table's own timer). */
void srv_jobs_expire(srv_jobs *j, unsigned up_mask, const char *const *waiting, int board_wait);
/* Wake the dispatchers (a board came up). */
void srv_jobs_kick(srv_jobs *j);
/* Queued board jobs whose backend bit is in mask. */
int srv_jobs_remote_queued(srv_jobs *j, unsigned mask);
/* Digests that queued and running jobs need: their inputs and artifact ids,
 * each as a 65-byte string appended to *out (caller frees). Count or -1. */
int srv_jobs_pins(srv_jobs *j, char (**out)[65]);

void srv_jobs_stats(srv_jobs *j, int *queued, int *running, int *workers);
int srv_jobs_idle(srv_jobs *j);

#endif

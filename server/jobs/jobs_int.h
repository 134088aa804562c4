/* jobs_int.h: the job table's insides, shared by the files that implement
 * jobs.h and by nothing else: jobs.c (the table, its states, submit and
 * queries), jobs_index.c (the id hash, the queues, the lists, retention),
 * jobs_run.c (workers, timer, drain, start and stop), jobs_json.c (a job's
 * JSON and the event streams) and jobs_remote.c (the board queue); the
 * structures themselves are jobs_queue.c's.
 * Every function here is called with the table's lock held (j->mu) unless
 * it says otherwise. */
#ifndef SRV_JOBS_INT_H
#define SRV_JOBS_INT_H

#include <pthread.h>
#include <time.h>
#include <json-c/json.h>
#include "srv.h"
#include "obs.h"
#include "jobs.h"
#include "jobs_queue.h"

#define DEFAULT_TIMEOUT 600       /* seconds, queue + run */
#define DEFAULT_TTL     86400     /* seconds a finished job is kept */
#define DEFAULT_HISTORY 10000     /* finished jobs kept at most */
#define TICK_NS         100000000L  /* the timer's period: 100 ms */
#define N_SNAPS         8         /* state changes kept for a slow event reader */
#define EWMA_ALPHA      0.3       /* weight of the newest run time in the average */

enum { S_QUEUED, S_RUNNING, S_SUCCEEDED, S_FAILED, S_CANCELLED, S_TIMED_OUT, S_COUNT };
extern const char *const jobs_state_names[S_COUNT];   /* the API's names (jobs.c) */
#define FINAL(s) ((s) >= S_SUCCEEDED)

typedef struct job job;

/* A list of jobs through their lnext/lprev; a job is in at most one: its
 * backend's board wait (queued board jobs), the running jobs, or the
 * finished ones (jobs_index.c). */
typedef struct jlist {
	job *head, *tail;
	int n;
} jlist;

/* A job's error, compact (an enpu_err is 1.7 KB, mostly unused): text is
 * "message\0where\0fix\0" in one allocation; NULL = none. */
typedef struct job_err {
	enpu_code code;
	int sys_errno;
	char *text;
} job_err;

/* The JSON of a watched job's last few state changes (jobs_json.c). */
typedef struct job_snaps {
	char *text[N_SNAPS];
	unsigned seq[N_SNAPS];
	int state[N_SNAPS];
} job_snaps;

struct job {
	char id[ENPU_JOB_ID_SIZE];
	char artifact[65];
	int checked;              /* its route verified the artifact just before the run */
	char backend[32];
	char input[65];
	char *input_name;         /* allocated */
	char owner[64];           /* who submitted it (srv_ident name) */
	char model[80];           /* "name:version" it was submitted as, or "" */
	int state, prio, bk;
	struct timespec created, started, finished;
	double t_created, t_started, t_attempt;   /* srv_now() */
	double t_queued;          /* when it (last) entered a queue */
	double t_finished;        /* srv_now() at its end: the TTL counts from it */
	double deadline;
	int timeout_s;
	double seconds;
	char result[65];
	char report[65];          /* report.json in the CAS, once succeeded */
	int has_npu;              /* npu_sim: the model's totals below */
	uint64_t npu_cycles, npu_dram_bytes;
	double npu_time_us, npu_utilisation, npu_clock_mhz;
	char *outputs;            /* JSON text of the outputs; NULL = none ([]) */
	job_err err;              /* once it failed, was cancelled or timed out */
	volatile int cancel;
	/* the indexes (jobs_index.c) */
	uint64_t order;           /* submission number: the list's order, FIFO */
	job *hnext;               /* the id hash's chain */
	job *anext, *aprev;       /* every job, oldest first */
	job *lnext, *lprev;       /* its jlist */
	jlist *list;              /* which one, or NULL */
	jq_node *qn;              /* its queue node, from submission to its end */
	int inq;                  /* in a queue (and its deadline heap) now */
	int hpos;                 /* its place in that heap, -1 = none */
	/* board jobs */
	int remote, attempts;
	char board[64];
	char *last_fault;         /* the last board fault, for a timeout's message */
	const char *failure;      /* "model", "board", "timeout", "cancelled" once failed */
	char *extra;              /* keys of the board's job JSON shown as they are (JSON text) */
	char *board_error;        /* the board's own error as data, when it failed so (text) */
	/* event streams: a counter of state changes and, while someone
	 * watches, the JSON of the last few */
	unsigned seq;
	int watchers;
	job_snaps *snaps;
	/* a job is freed only once nobody holds it: past its retention while
	 * watched or held by a listing in progress (pins), it is doomed and
	 * goes when the last one lets go */
	int pins, doomed;
};

#define JOBS_DONE_STRIPES 64
#define JOBS_LAST_RUNS 256
typedef struct { char artifact[65]; double seconds; } jlast;

struct srv_jobs {
	srv_cas *cas;
	const enpu_limits *lim;
	pthread_mutex_t mu;
	pthread_cond_t work, rwork, tick;
	/* who waits for a job's state (long polls, event streams) waits on
	 * its id's stripe: a change wakes the waiters of that stripe, not of
	 * every job (jobs_done_cv; jobs_wake_all for what concerns all) */
	pthread_cond_t done[JOBS_DONE_STRIPES];
	/* the indexes (jobs_index.c) */
	job **hash;                /* by id, chained; a power of two of buckets */
	unsigned hmask;
	struct juse **uses;        /* (owner, blob) -> jobs that use it (jobs_owner.c) */
	unsigned umask, n_uses;
	int n_all;
	job *oldest, *newest;      /* every job, in order of submission */
	uint64_t next_order;
	int64_t next_head;         /* keys of jobs put back at a queue's head */
	jq lq, rq;                 /* the local and board queues: priority, then FIFO */
	jheap lheap, rheap;        /* their deadlines */
	jlist run;                 /* running jobs, both kinds */
	jlist fin;                 /* finished jobs in the order they ended (not doomed ones) */
	jlist bwait[ENPU_BACKENDS_MAX];   /* queued board jobs of each backend, as queued */
	double bk_down[ENPU_BACKENDS_MAX]; /* no board up for it since (srv_now), 0 = up */
	char bk_why[ENPU_BACKENDS_MAX][512];
	int queued, rqueued, max_queue, stopping;
	char node_prefix[ENPU_NODE_ID_MAX + 2];   /* "<node>-" (--node-id), or "" */
	pthread_t *threads;
	int n_workers, par_threads;
	int free_slots;            /* local runs that may start: --workers minus running */
	int n_here;                /* local runs on their submitter's thread (srv_jobreq.here) */
	pthread_cond_t here_done;  /* n_here fell to 0 */
	pthread_t timer;
	int timer_on, timer_stop;
	int timeout_s, ttl_s, history;
	double drain_at;           /* srv_jobs_drain: the drain's deadline, 0 = none */
	int drain_s, drain_fired;
	double avg[ENPU_BACKENDS_MAX]; /* moving average of run seconds; 0 = none yet */
	jlast last_run[JOBS_LAST_RUNS];   /* by hash of the artifact id (jobs_last_run) */
	void (*on_store)(void *);
	void *on_store_arg;
	const srv_observer *obs;   /* told of each final state; NULL = none */
	/* every job's changes, for the event stream of all jobs (jobs_feed.c) */
	srv_feed_ev *feed;         /* a ring of SRV_JOBS_FEED entries */
	uint64_t feed_seq;         /* the last change's number (0: none yet) */
	int feed_readers;          /* streams waiting on feed_cv */
	pthread_cond_t feed_cv;
};

/* The feed (jobs_feed.c): init/free with the table; jobs_feed_push, under
 * the lock, records that jb changed (its submission, each state). */
int jobs_feed_init(srv_jobs *j);
void jobs_feed_free(srv_jobs *j);
void jobs_feed_push(srv_jobs *j, const job *jb);

/* The blobs jobs use, counted by (owner, digest) and by digest alone, so
 * that srv_jobs_uses is one lookup, not a walk of the table: a job's input
 * from its submission, its result and report once it has succeeded, until
 * it is dropped. Under the lock (jobs_owner.c). */
void jobs_uses_job(srv_jobs *j, const job *jb, const char *digest, int delta);
void jobs_uses_free(srv_jobs *j);

/* Run jb, which submit_locked has started on the caller's thread (its slot
 * taken, n_here counted): called and returns without the lock. jobs_run.c. */
void jobs_run_here(srv_jobs *j, job *jb);

/* ---- the indexes (jobs_index.c) -------------------------------------------- */

int jobs_index_init(srv_jobs *j);
/* Free every job and the indexes. */
void jobs_index_free(srv_jobs *j);
/* The job of an id (O(1)); NULL if unknown. */
job *jobs_find(srv_jobs *j, const char *id);
/* Add a new job (its id, fields and queue node qn set: job_new) to the
 * table and its queue: 0, or -1 out of memory (then nothing holds it). */
int jobs_add(srv_jobs *j, job *jb);
/* Put jb into its queue (local or board) and that queue's deadline heap,
 * at its place (priority, then submission) or at the head: 0, or -1 out
 * of memory (never for a job that was queued before). */
int jobs_enqueue(srv_jobs *j, job *jb, int at_head);
/* Take jb out of its queue (nothing when it is in none). */
void jobs_unqueue(srv_jobs *j, job *jb);
/* A queued job's position (1 = next); ahead gets the kinds of the jobs
 * before it (jq_rank). */
int jobs_position(const srv_jobs *j, const job *jb, int ahead[JQ_KINDS]);
/* jlists */
void jobs_list_push(jlist *l, job *jb);
void jobs_list_remove(job *jb);
/* Forget at most max finished jobs past the TTL or the history bound,
 * oldest ended first (a watched one is doomed instead). 1 when more
 * remain to forget. */
int jobs_prune(srv_jobs *j, int max);
/* The same, the dropped jobs put on *dead (out of the table) for
 * jobs_free_dead to free once the lock is let go. */
int jobs_prune_into(srv_jobs *j, int max, job **dead);
void jobs_free_dead(job *dead);
/* A watcher or a listing let go of jb: a doomed job nobody holds goes. */
void jobs_let_go(srv_jobs *j, job *jb);

/* ---- the table (jobs.c) ---------------------------------------------------- */

/* o as plain JSON text (allocated; NULL for NULL or out of memory). */
char *jobs_json_text(json_object *o);
/* Set a job's error (copied compactly), read it back whole. */
void jobs_set_err(job *jb, const enpu_err *e);
void jobs_get_err(const job *jb, enpu_err *e);
/* Free a job's event snapshots; free a job (it is out of every index). */
void jobs_drop_snaps(job *jb);
void jobs_job_free(job *jb);
/* Every state change goes through jobs_set_state (the job's fields already
 * filled): the counter moves, watchers get a snapshot, waiters wake.
 * jobs_start_run takes a queued job to running (its queue, the running
 * list, the times). jobs_finish ends a job (out of its queue or the running
 * list, into the finished list, e its error: NULL when it succeeded),
 * stamps the end time and tells the observer first. */
void jobs_set_state(srv_jobs *j, job *jb, int state);
/* The hash of a job id that the table's buckets use (jobs_index.c). */
unsigned jobs_hash_id(const char *id);
/* The condition variable the waiters of job id wait on: its stripe by
 * jobs_hash_id (jobs.c). */
pthread_cond_t *jobs_done_cv(srv_jobs *j, const char *id);
/* Wake every waiter of every job (shutdown, the drain, a backend's boards
 * gone). Under the lock. */
void jobs_wake_all(srv_jobs *j);
void jobs_start_run(srv_jobs *j, job *jb);
void jobs_finish(srv_jobs *j, job *jb, int state, const enpu_err *e);
/* A run time (seconds) of backend bk for the ETA estimator. */
void jobs_learn(srv_jobs *j, int bk, double seconds);
/* Fail jb with E0813 (it ran out of time); what says where it was. */
void jobs_fail_timeout(srv_jobs *j, job *jb, const char *what);
/* Jobs dealt with in one go under the lock before it is let go (a batch
 * of timeouts, of forgotten jobs, of a listing's jobs). */
#define JOBS_BATCH 256
/* Let go of the lock for a moment (a waiter gets it), then take it again. */
void jobs_breathe(srv_jobs *j);

/* The last successful local run of an artifact: a direct-mapped table. */
static inline jlast *jobs_last_run(srv_jobs *j, const char *artifact)
{
	return &j->last_run[jobs_hash_id(artifact) % JOBS_LAST_RUNS];
}
/* A local job submitted now could start at once on its submitter's thread:
 * --threads 1, a free worker slot, nothing queued, no drain fired, not
 * stopping. Under the lock. */
static inline int jobs_slot_for_submitter(const srv_jobs *j)
{
	return j->par_threads == 1 && j->free_slots > 0 && j->queued == 0 && !j->drain_fired &&
	       !j->stopping;
}

/* ---- JSON (jobs_json.c) ---------------------------------------------------- */

/* A job as the API shows it. run_work caches the running jobs' remaining
 * work over a list ({-2, -2} = not computed; NULL = no cache). Caller puts. */
json_object *jobs_job_json(const srv_jobs *j, const job *jb, double run_work[2]);
/* The same as plain JSON text (caller frees). */
char *jobs_job_text(const srv_jobs *j, const job *jb);
/* Why a queued board job waits ("waiting for a board: ..."), or NULL. */
const char *jobs_waiting(const srv_jobs *j, const job *jb);

#endif

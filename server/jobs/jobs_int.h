/* jobs_int.h: the job table's insides, shared by the files that implement
 * jobs.h and by nothing else: jobs.c (the table, its states, submit and
 * queries), jobs_run.c (workers, timer, start and stop), jobs_json.c (a
 * job's JSON and the event streams) and jobs_remote.c (the board queue).
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

#define DEFAULT_TIMEOUT 600       /* seconds, queue + run */
#define DEFAULT_TTL     86400     /* seconds a finished job is kept */
#define DEFAULT_HISTORY 10000     /* finished jobs kept at most */
#define TICK_NS         100000000L  /* the timer's period: 100 ms */
#define N_SNAPS         8         /* state changes kept for a slow event reader */
#define EWMA_ALPHA      0.3       /* weight of the newest run time in the average */

enum { S_QUEUED, S_RUNNING, S_SUCCEEDED, S_FAILED, S_CANCELLED, S_TIMED_OUT, S_COUNT };
extern const char *const jobs_state_names[S_COUNT];   /* the API's names (jobs.c) */
#define FINAL(s) ((s) >= S_SUCCEEDED)

typedef struct job {
	char id[33];
	char artifact[65];
	char backend[32];
	char input[65];
	char input_name[256];
	char owner[64];           /* who submitted it (srv_ident name) */
	int state, prio, bk;
	struct timespec created, started, finished;
	double t_created, t_started, t_attempt;   /* srv_now() */
	double deadline;
	int timeout_s;
	double seconds;
	char result[65];
	char report[65];          /* report.json in the CAS, once succeeded */
	int has_npu;              /* npu_sim: the model's totals below */
	uint64_t npu_cycles, npu_dram_bytes;
	double npu_time_us, npu_utilisation, npu_clock_mhz;
	json_object *outputs;
	enpu_err err;
	volatile int cancel;
	struct job *qnext;
	/* board jobs */
	int remote, attempts;
	char board[64];
	char last_fault[800];      /* the last board fault, for a timeout's message */
	const char *failure;       /* "model", "board", "timeout", "cancelled" once failed */
	json_object *extra;        /* keys of the board's job JSON shown as they are */
	json_object *board_error;  /* the board's own error as data, when it failed so */
	double t_noboard;          /* queued since then with no board up for it, or 0 */
	char waiting[512];         /* queued: why ("waiting for a board: ..."), or "" */
	/* event streams: a counter of state changes and, while someone
	 * watches, the JSON of the last few */
	unsigned seq;
	int watchers;
	char *snap[N_SNAPS];
	unsigned snap_seq[N_SNAPS];
	int snap_state[N_SNAPS];
} job;

struct srv_jobs {
	srv_cas *cas;
	const enpu_limits *lim;
	pthread_mutex_t mu;
	pthread_cond_t work, done, rwork, tick;
	job **all;                 /* in order of submission */
	int n_all, cap_all;
	job *qhead, *qtail;        /* local jobs, for the workers */
	job *rhead, *rtail;        /* board jobs, for boards.c */
	int queued, rqueued, running, max_queue, stopping;
	pthread_t *threads;
	int n_workers, par_threads;
	pthread_t timer;
	int timer_on, timer_stop;
	int timeout_s, ttl_s, history;
	double avg[ENPU_BACKENDS_MAX]; /* moving average of run seconds; 0 = none yet */
	void (*on_store)(void *);
	void *on_store_arg;
	const srv_observer *obs;   /* told of each final state; NULL = none */
};

/* ---- the table (jobs.c) ---------------------------------------------------- */

/* The job of an id, newest first; NULL if unknown. */
job *jobs_find(srv_jobs *j, const char *id);
/* Free a job's event snapshots; free a job (it is out of every list). */
void jobs_drop_snaps(job *jb);
void jobs_job_free(job *jb);
/* Forget finished jobs past the TTL or the history bound (not watched ones). */
void jobs_prune(srv_jobs *j);
/* Take jb out of the queue headed by *head (tail kept right). */
void jobs_unqueue(job **head, job **tail, job *jb);
/* Every state change goes through jobs_set_state (the job's fields already
 * filled): the counter moves, watchers get a snapshot, waiters wake.
 * jobs_finish stamps the end time and tells the observer first. */
void jobs_set_state(srv_jobs *j, job *jb, int state);
void jobs_finish(srv_jobs *j, job *jb, int state);
/* A run time (seconds) of backend bk for the ETA estimator. */
void jobs_learn(srv_jobs *j, int bk, double seconds);
/* Fail jb with E0813 (it ran out of time); what says where it was. */
void jobs_fail_timeout(srv_jobs *j, job *jb, const char *what);

/* ---- JSON (jobs_json.c) ---------------------------------------------------- */

/* A job as the API shows it. run_work caches the running jobs' remaining
 * work over a list ({-2, -2} = not computed; NULL = no cache). Caller puts. */
json_object *jobs_job_json(const srv_jobs *j, const job *jb, double run_work[2]);
/* The same as plain JSON text (caller frees). */
char *jobs_job_text(const srv_jobs *j, const job *jb);

#endif

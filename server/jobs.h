/* jobs.h: the job table, a bounded FIFO queue and the worker pool. A job
 * runs an artifact on an input blob into a result blob. The table lives in
 * memory (jobs do not survive a restart); a mutex guards it and a condvar
 * wakes long-poll waiters when a job finishes. */
#ifndef SRV_JOBS_H
#define SRV_JOBS_H

#include "enpu.h"
#include "cas.h"

struct json_object;
typedef struct srv_jobs srv_jobs;

/* workers threads, each with a kernel pool of `threads`; at most max_queue
 * jobs waiting. NULL + *e on failure. */
srv_jobs *srv_jobs_start(srv_cas *cas, const enpu_limits *lim, int workers, int threads,
			 int max_queue, enpu_err *e);
/* Stop accepting, fail queued jobs, wake every waiter, let running jobs
 * finish and join the workers. The table stays readable until free (which
 * shuts down first if needed). */
void srv_jobs_shutdown(srv_jobs *j);
void srv_jobs_free(srv_jobs *j);

/* Queue a job; its id (16 hex) in id. -1 + ENPU_E_QUEUE_FULL (or
 * ENPU_E_STORAGE while shutting down). */
int srv_jobs_submit(srv_jobs *j, const char *artifact, const char *backend,
		    const char *input, const char *input_name, char id[33], enpu_err *e);

/* The job as JSON after waiting up to wait_s seconds for it to finish
 * (*final = 1 when it has). NULL for an unknown id. Caller puts. */
struct json_object *srv_jobs_get(srv_jobs *j, const char *id, int wait_s, int *final);
/* Result digest of a succeeded job: 1; 0 and its state name otherwise;
 * -1 for an unknown id. */
int srv_jobs_result(srv_jobs *j, const char *id, char digest[65], const char **state);
/* Digest of a succeeded job's report.json (in the CAS): 1; 0 and its state
 * name otherwise; -1 for an unknown id. */
int srv_jobs_report(srv_jobs *j, const char *id, char digest[65], const char **state);
/* Ask a job to stop (queued: removed and failed at once). 0, or -1 if unknown. */
int srv_jobs_cancel(srv_jobs *j, const char *id);

void srv_jobs_stats(srv_jobs *j, int *queued, int *running, int *workers);
int srv_jobs_idle(srv_jobs *j);

#endif

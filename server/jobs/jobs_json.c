/* jobs_json.c: a job as the API shows it (GET /v1/jobs/{id}, the list)
 * with its queue position and ETA estimate, and the event streams of its
 * state changes (GET /v1/jobs/{id}/events reads them through
 * srv_jobs_watch*). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "jobs_int.h"
#include "http.h"
#include "wire.h"


static double avg_of(const srv_jobs *j, int bk)
{
	return bk >= 0 && bk < enpu_backend_count() ? j->avg[bk] : 0;
}

/* Seconds of work still ahead in the running jobs of one kind (local or
 * board): each one's average run time minus what it has run so far. -1
 * when a backend involved has no average yet. */
static double running_work(const srv_jobs *j, int remote, double now)
{
	double w = 0;
	int i;

	for (i = 0; i < j->n_all; i++) {
		const job *r = j->all[i];
		double a;
		if (r->state != S_RUNNING || r->remote != remote)
			continue;
		if ((a = avg_of(j, r->bk)) <= 0)
			return -1;
		if (a > now - r->t_attempt)
			w += a - (now - r->t_attempt);
	}
	return w;
}

/* Queue position (1 = next) and ETA of a queued job; the ETA is -1 when
 * unknown. The estimator: the running jobs' remaining time plus the
 * average run time of every job ahead of it, shared by the workers (board
 * jobs: one at a time), plus its own average run time. Averages are
 * exponential moving averages (weight 0.3 for the newest) of the run times
 * of the jobs that ended on each backend. Under the lock. */
static void queue_place(const srv_jobs *j, const job *jb, double run_work[2], int *pos,
			double *eta)
{
	const job *q = jb->remote ? j->rhead : j->qhead;
	double work, own = avg_of(j, jb->bk), now = srv_now();
	int slots = jb->remote ? 1 : (j->n_workers > 0 ? j->n_workers : 1);

	if (run_work[jb->remote] < -1.5)     /* not computed yet */
		run_work[jb->remote] = running_work(j, jb->remote, now);
	work = run_work[jb->remote];
	*pos = 1;
	for (; q && q != jb; q = q->qnext) {
		double a = avg_of(j, q->bk);
		(*pos)++;
		if (a <= 0)
			work = -1;
		else if (work >= 0)
			work += a;
	}
	*eta = work < 0 || own <= 0 ? -1 : floor((work / slots + own) * 10 + 0.5) / 10;
}

static void add_time(json_object *o, const char *key, const struct timespec *t)
{
	char buf[48];
	if (t->tv_sec == 0) {
		json_object_object_add(o, key, NULL);
		return;
	}
	srv_time_str(t, buf, sizeof buf);
	json_object_object_add(o, key, json_object_new_string(buf));
}

/* Under the lock. run_work caches the running jobs' work over a list
 * ({-2, -2} = not computed). */
json_object *jobs_job_json(const srv_jobs *j, const job *jb, double run_work[2])
{
	json_object *o = json_object_new_object();
	double rw[2] = {-2, -2};

	if (!run_work)
		run_work = rw;
	json_object_object_add(o, F_ID, json_object_new_string(jb->id));
	json_object_object_add(o, F_STATE, json_object_new_string(jobs_state_names[jb->state]));
	json_object_object_add(o, F_ARTIFACT, json_object_new_string(jb->artifact));
	json_object_object_add(o, F_BACKEND, json_object_new_string(jb->backend));
	json_object_object_add(o, F_INPUT, json_object_new_string(jb->input));
	json_object_object_add(o, F_PRIORITY, json_object_new_string(srv_prio_name(jb->prio)));
	json_object_object_add(o, F_TIMEOUT, json_object_new_int(jb->timeout_s));
	if (jb->state == S_QUEUED) {
		int pos;
		double eta;
		queue_place(j, jb, run_work, &pos, &eta);
		json_object_object_add(o, F_POSITION, json_object_new_int(pos));
		json_object_object_add(o, F_ETA, eta >= 0 ? srv_json_double(eta) : NULL);
	} else {
		json_object_object_add(o, F_POSITION, NULL);
		json_object_object_add(o, F_ETA, NULL);
	}
	add_time(o, F_CREATED, &jb->created);
	add_time(o, F_STARTED, &jb->started);
	add_time(o, F_FINISHED, &jb->finished);
	json_object_object_add(o, F_SECONDS, FINAL(jb->state) ? srv_json_double(jb->seconds) : NULL);
	json_object_object_add(o, F_RESULT, jb->state == S_SUCCEEDED ?
			       json_object_new_string(jb->result) : NULL);
	json_object_object_add(o, F_OUTPUTS, jb->outputs ? json_object_get(jb->outputs)
			       : json_object_new_array());
	json_object_object_add(o, F_REPORT, jb->state == S_SUCCEEDED ?
			       json_object_new_string(jb->report) : NULL);
	if (jb->state == S_SUCCEEDED && jb->has_npu) {
		json_object *n = json_object_new_object();

		json_object_object_add(n, F_CYCLES, json_object_new_int64(
			jb->npu_cycles > INT64_MAX ? INT64_MAX : (int64_t)jb->npu_cycles));
		json_object_object_add(n, F_TIME_US, srv_json_double(jb->npu_time_us));
		json_object_object_add(n, F_CLOCK_MHZ, jb->npu_clock_mhz > 0 ?
				       srv_json_double(jb->npu_clock_mhz) : NULL);
		json_object_object_add(n, F_DRAM_BYTES, json_object_new_int64(
			jb->npu_dram_bytes > INT64_MAX ? INT64_MAX : (int64_t)jb->npu_dram_bytes));
		json_object_object_add(n, F_UTILISATION, srv_json_double(jb->npu_utilisation));
		json_object_object_add(o, F_NPU, n);
	}
	if (jb->remote) {
		json_object_object_add(o, F_BOARD, jb->board[0] ? json_object_new_string(jb->board)
				       : NULL);
		json_object_object_add(o, F_ATTEMPTS, json_object_new_int(jb->attempts));
		if (jb->state == S_SUCCEEDED && jb->extra) {
			json_object_object_foreach(jb->extra, k, v)
				json_object_object_add(o, k, json_object_get(v));
		}
		if (jb->state == S_QUEUED)
			json_object_object_add(o, F_WAITING, jb->waiting[0] ?
					       srv_json_text(jb->waiting) : NULL);
		if (jb->state == S_FAILED && jb->board_error)
			json_object_object_add(o, F_BOARD_ERROR, json_object_get(jb->board_error));
	}
	if (FINAL(jb->state) && jb->state != S_SUCCEEDED) {
		json_object_object_add(o, F_ERROR, enpu_wire_err_to_json(&jb->err));
		json_object_object_add(o, F_FAILURE, json_object_new_string(
			jb->failure ? jb->failure : "model"));
	}
	/* last: a board's job JSON (extra) names its own caller, not ours */
	json_object_object_add(o, F_INPUT_NAME, srv_json_text(jb->input_name));
	json_object_object_add(o, F_OWNER, srv_json_text(jb->owner));
	return o;
}

char *jobs_job_text(const srv_jobs *j, const job *jb)
{
	json_object *o = jobs_job_json(j, jb, NULL);
	char *s = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
							JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return s;
}

/* ---- event streams ------------------------------------------------------------ */

int srv_jobs_watch(srv_jobs *j, const char *id, unsigned *seq, char **json, int *final)
{
	job *jb;

	pthread_mutex_lock(&j->mu);
	jb = jobs_find(j, id);
	if (!jb) {
		pthread_mutex_unlock(&j->mu);
		return -1;
	}
	jb->watchers++;
	*seq = jb->seq;
	*json = jobs_job_text(j, jb);
	*final = FINAL(jb->state);
	pthread_mutex_unlock(&j->mu);
	return 0;
}

int srv_jobs_watch_next(srv_jobs *j, const char *id, unsigned *seq, double wait_s,
			char **json, int *final)
{
	struct timespec dl;
	long ns;
	int rc;

	clock_gettime(CLOCK_REALTIME, &dl);
	if (wait_s < 0)
		wait_s = 0;
	ns = dl.tv_nsec + (long)((wait_s - floor(wait_s)) * 1e9);
	dl.tv_sec += (time_t)wait_s + ns / 1000000000L;
	dl.tv_nsec = ns % 1000000000L;
	pthread_mutex_lock(&j->mu);
	for (;;) {
		job *jb = jobs_find(j, id);
		if (!jb) {
			rc = -1;
			break;
		}
		if (jb->seq != *seq) {
			unsigned want = *seq + 1;
			int k = (int)(want % N_SNAPS);
			if (jb->snap[k] && jb->snap_seq[k] == want) {
				*json = strdup(jb->snap[k]);
				*final = FINAL(jb->snap_state[k]);
				*seq = want;
			} else {   /* fell behind, or not watched then: the state now */
				*json = jobs_job_text(j, jb);
				*final = FINAL(jb->state);
				*seq = jb->seq;
			}
			rc = *json ? 1 : -1;
			break;
		}
		if (j->stopping) {
			rc = -1;
			break;
		}
		if (pthread_cond_timedwait(&j->done, &j->mu, &dl) == ETIMEDOUT) {
			rc = 0;
			break;
		}
	}
	pthread_mutex_unlock(&j->mu);
	return rc;
}

void srv_jobs_unwatch(srv_jobs *j, const char *id)
{
	job *jb;

	pthread_mutex_lock(&j->mu);
	jb = jobs_find(j, id);
	if (jb && jb->watchers > 0 && --jb->watchers == 0)
		jobs_drop_snaps(jb);
	pthread_mutex_unlock(&j->mu);
}

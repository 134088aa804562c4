/* jobs_json.c: a job as the API shows it (GET /v1/jobs/{id}, the list)
 * with its queue position and ETA estimate, and the event streams of its
 * state changes (GET /v1/jobs/{id}/events reads them through
 * srv_jobs_watch*). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "jobs_int.h"
#include "json.h"
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

	for (const job *r = j->run.head; r; r = r->lnext) {
		double a;
		if (r->remote != remote)
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
 * of the jobs that ended on each backend. The jobs ahead come from the
 * queue's rank, by backend: O(log n), whatever the queue holds. Under the
 * lock. */
static void queue_place(const srv_jobs *j, const job *jb, double run_work[2], int *pos,
			double *eta)
{
	double work, own = avg_of(j, jb->bk), now = srv_now();
	int slots = jb->remote ? 1 : (j->n_workers > 0 ? j->n_workers : 1);
	int ahead[JQ_KINDS], k;

	if (run_work[jb->remote] < -1.5)     /* not computed yet */
		run_work[jb->remote] = running_work(j, jb->remote, now);
	work = run_work[jb->remote];
	*pos = jobs_position(j, jb, ahead);
	for (k = 0; k < JQ_KINDS; k++) {
		double a = k < JQ_KINDS - 1 ? avg_of(j, k) : 0;
		if (!ahead[k])
			continue;
		if (a <= 0)
			work = -1;
		else if (work >= 0)
			work += a * ahead[k];
	}
	*eta = work < 0 || own <= 0 ? -1 : floor((work / slots + own) * 10 + 0.5) / 10;
}

const char *jobs_waiting(const srv_jobs *j, const job *jb)
{
	if (!jb->remote || !jb->inq || jb->bk < 0 || jb->bk >= ENPU_BACKENDS_MAX ||
	    !j->bk_down[jb->bk])
		return NULL;
	return j->bk_why[jb->bk][0] ? j->bk_why[jb->bk] : "waiting for a board";
}

/* A JSON text the job keeps (a board's extra keys or error), parsed
 * again for each answer: nothing is shared with a reply. The outputs,
 * read by no one here, go out as their text (enpu_json_raw). */
static json_object *parsed(const char *text)
{
	return text ? json_tokener_parse(text) : NULL;
}

/* What a succeeded job made: result, outputs, report, npu_sim's totals. */
static void add_results(json_object *o, const job *jb)
{
	json_object *out = jb->outputs ? enpu_json_raw(jb->outputs) : NULL;
	int ok = jb->state == S_SUCCEEDED;

	enpu_json_addc(o, F_RESULT, ok ? json_object_new_string(jb->result) : NULL);
	enpu_json_addc(o, F_OUTPUTS, out ? out : json_object_new_array());
	enpu_json_addc(o, F_REPORT, ok ? json_object_new_string(jb->report) : NULL);
	if (ok && jb->has_npu) {
		json_object *n = json_object_new_object();

		enpu_json_addc(n, F_CYCLES, json_object_new_int64(
			jb->npu_cycles > INT64_MAX ? INT64_MAX : (int64_t)jb->npu_cycles));
		enpu_json_addc(n, F_TIME_US, srv_json_double(jb->npu_time_us));
		enpu_json_addc(n, F_CLOCK_MHZ, jb->npu_clock_mhz > 0 ?
				       srv_json_double(jb->npu_clock_mhz) : NULL);
		enpu_json_addc(n, F_DRAM_BYTES, json_object_new_int64(
			jb->npu_dram_bytes > INT64_MAX ? INT64_MAX : (int64_t)jb->npu_dram_bytes));
		enpu_json_addc(n, F_UTILISATION, srv_json_double(jb->npu_utilisation));
		enpu_json_addc(o, F_NPU, n);
	}
}

/* A board job's own: its board, tries, the board's extra keys, why it
 * waits, the board's error. */
static void add_board(json_object *o, const srv_jobs *j, const job *jb)
{
	json_object *x = jb->state == S_SUCCEEDED ? parsed(jb->extra) : NULL;
	const char *why = jobs_waiting(j, jb);

	enpu_json_addc(o, F_BOARD, jb->board[0] ? json_object_new_string(jb->board) : NULL);
	enpu_json_addc(o, F_ATTEMPTS, json_object_new_int(jb->attempts));
	if (x && json_object_is_type(x, json_type_object)) {
		json_object_object_foreach(x, k, v)
			json_object_object_add(o, k, json_object_get(v));
	}
	json_object_put(x);
	if (jb->state == S_QUEUED)
		enpu_json_addc(o, F_WAITING, why ? srv_json_text(why) : NULL);
	if (jb->state == S_FAILED && jb->board_error)
		enpu_json_addc(o, F_BOARD_ERROR, parsed(jb->board_error));
}

/* Under the lock, or without it for a finished local job that is held
 * (pins: nothing it reads changes then). run_work caches the running
 * jobs' work over a list ({-2, -2} = not computed). */
json_object *jobs_job_json(const srv_jobs *j, const job *jb, double run_work[2])
{
	json_object *o = json_object_new_object();
	double rw[2] = {-2, -2};

	if (!run_work)
		run_work = rw;
	enpu_json_addc(o, F_ID, json_object_new_string(jb->id));
	enpu_json_addc(o, F_STATE, json_object_new_string(jobs_state_names[jb->state]));
	enpu_json_addc(o, F_ARTIFACT, json_object_new_string(jb->artifact));
	enpu_json_addc(o, F_BACKEND, json_object_new_string(jb->backend));
	enpu_json_addc(o, F_INPUT, json_object_new_string(jb->input));
	enpu_json_addc(o, F_PRIORITY, json_object_new_string(srv_prio_name(jb->prio)));
	enpu_json_addc(o, F_TIMEOUT, json_object_new_int(jb->timeout_s));
	if (jb->state == S_QUEUED) {
		int pos;
		double eta;
		queue_place(j, jb, run_work, &pos, &eta);
		enpu_json_addc(o, F_POSITION, json_object_new_int(pos));
		enpu_json_addc(o, F_ETA, eta >= 0 ? srv_json_double(eta) : NULL);
	} else {
		enpu_json_addc(o, F_POSITION, NULL);
		enpu_json_addc(o, F_ETA, NULL);
	}
	enpu_json_addc(o, F_CREATED, srv_json_time(&jb->created));
	enpu_json_addc(o, F_STARTED, srv_json_time(&jb->started));
	enpu_json_addc(o, F_FINISHED, srv_json_time(&jb->finished));
	enpu_json_addc(o, F_SECONDS, FINAL(jb->state) ? srv_json_double(jb->seconds) : NULL);
	add_results(o, jb);
	if (jb->remote)
		add_board(o, j, jb);
	if (FINAL(jb->state) && jb->state != S_SUCCEEDED) {
		enpu_err e;

		jobs_get_err(jb, &e);
		enpu_json_addc(o, F_ERROR, enpu_wire_err_to_json(&e));
		enpu_json_addc(o, F_FAILURE, json_object_new_string(
			jb->failure ? jb->failure : "model"));
	}
	/* last: a board's job JSON (extra) names its own caller, not ours */
	enpu_json_addc(o, F_INPUT_NAME, srv_json_text(jb->input_name));
	enpu_json_addc(o, F_OWNER, srv_json_text(jb->owner));
	if (jb->model[0])
		enpu_json_addc(o, F_MODEL, json_object_new_string(jb->model));
	return o;
}

char *jobs_job_text(const srv_jobs *j, const job *jb)
{
	json_object *o = jobs_job_json(j, jb, NULL);
	char *s = jobs_json_text(o);

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
			const job_snaps *sn = jb->snaps;
			if (sn && sn->text[k] && sn->seq[k] == want) {
				*json = strdup(sn->text[k]);
				*final = FINAL(sn->state[k]);
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
		if (pthread_cond_timedwait(jobs_done_cv(j, id), &j->mu, &dl) == ETIMEDOUT) {
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
	if (jb && jb->watchers > 0 && --jb->watchers == 0) {
		jobs_drop_snaps(jb);
		jobs_let_go(j, jb);
	}
	pthread_mutex_unlock(&j->mu);
}

/* ---- the list ------------------------------------------------------------------ */

static int listed(const job *jb, unsigned states, const char *backend, const srv_ident *who)
{
	return (!states || (states & (1u << jb->state))) &&
	       (!backend || !strcmp(backend, jb->backend)) &&
	       (!who || srv_ident_owns(who, jb->owner));
}

/* Newest first, from the submission list. The lock is let go between
 * batches (JOBS_BATCH jobs shown, or 16 times as many looked at), the
 * next job held (pins) so that it stays; so a long listing never keeps
 * others waiting, and each batch is consistent in itself (positions
 * come from the queue as it is then). */
json_object *srv_jobs_list(srv_jobs *j, unsigned states, const char *backend, int limit,
			   const srv_ident *who)
{
	json_object *arr = json_object_new_array();
	job *jb;
	int n = 0;

	pthread_mutex_lock(&j->mu);
	jb = j->newest;
	while (jb && n < limit) {
		double rw[2] = {-2, -2};
		int budget = JOBS_BATCH * 16;

		for (; jb && n < limit && budget > 0; jb = jb->aprev, budget--) {
			if (!listed(jb, states, backend, who))
				continue;
			json_object_array_add(arr, jobs_job_json(j, jb, rw));
			n++;
			budget -= 15;
		}
		if (jb && n < limit) {
			job *next = jb;

			jb->pins++;
			jobs_breathe(j);
			jb->pins--;
			if (jb->doomed && !jb->watchers && !jb->pins) {   /* forgotten meanwhile */
				next = jb->aprev;
				jobs_let_go(j, jb);
			}
			jb = next;
		}
	}
	pthread_mutex_unlock(&j->mu);
	return arr;
}

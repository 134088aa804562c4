/* test_srv_jobs.c: the job table's queue policy (server/jobs/jobs.c) without
 * running anything: board jobs stay queued until taken, so the order of
 * priorities, positions, cancel, the list filters, the event stream's
 * sequence of states, timeouts capped by the policy and retention are seen
 * exactly. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>
#include "srv.h"
#include "ops.h"
#include "cas.h"
#include "jobs.h"

#define ART "1111111111111111111111111111111111111111111111111111111111111111"
#define INP "2222222222222222222222222222222222222222222222222222222222222222"

static char root[256];
static srv_cas *cas;
static srv_jobs *jobs;
static atomic_int up = 1;
#define ZYNQ (1u << enpu_backend_parse("zynq_ps"))

static void setup(void)
{
	enpu_err e = ENPU_ERR_INIT;

	snprintf(root, sizeof root, "/tmp/enpu-test-jobs.XXXXXX");
	cr_assert_not_null(mkdtemp(root));
	cas = srv_cas_open(root, &e);
	cr_assert_not_null(cas, "%s", e.message);
	jobs = srv_jobs_start(cas, enpu_limits_default(), 1, 1, 4, &e);
	cr_assert_not_null(jobs, "%s", e.message);
}

static void teardown(void)
{
	srv_jobs_free(jobs);
	srv_cas_close(cas);
	srv_rmtree(root);
}

TestSuite(jobs, .init = setup, .fini = teardown);

/* A board job (nothing runs it here): its id. */
static void submit(int prio, int timeout_s, char id[33])
{
	enpu_err e = ENPU_ERR_INIT;
	srv_jobreq q = {ART, "zynq_ps", INP, "in.npz", prio, timeout_s, 1, NULL};
	cr_assert_eq(srv_jobs_submit_req(jobs, &q, id, &e), 0, "%s", e.message);
}

static json_object *get(const char *id)
{
	int final;
	json_object *o = srv_jobs_get(jobs, id, 0, &final);
	cr_assert_not_null(o);
	return o;
}

static const char *field(json_object *o, const char *k)
{
	json_object *v;
	return json_object_object_get_ex(o, k, &v) && v ? json_object_get_string(v) : NULL;
}

static int ifield(json_object *o, const char *k)
{
	json_object *v;
	return json_object_object_get_ex(o, k, &v) && v ? json_object_get_int(v) : -1;
}

Test(jobs, names_parse_both_ways)
{
	cr_expect_eq(srv_prio_parse("low"), SRV_PRIO_LOW);
	cr_expect_eq(srv_prio_parse("normal"), SRV_PRIO_NORMAL);
	cr_expect_eq(srv_prio_parse("high"), SRV_PRIO_HIGH);
	cr_expect_eq(srv_prio_parse("urgent"), -1);
	cr_expect_eq(srv_prio_parse(NULL), -1);
	cr_expect_str_eq(srv_prio_name(SRV_PRIO_HIGH), "high");
	cr_expect_eq(srv_job_state_parse("timed_out"), 5);
	cr_expect_eq(srv_job_state_parse("cancelled"), 4);
	cr_expect_eq(srv_job_state_parse("queued"), 0);
	cr_expect_eq(srv_job_state_parse("done"), -1);
}

Test(jobs, the_queue_runs_by_priority_then_first_come)
{
	char lo[33], n1[33], hi1[33], hi2[33];
	const char *want[4] = {hi1, hi2, n1, lo};
	srv_rjob rj;
	json_object *o;

	submit(SRV_PRIO_LOW, 60, lo);
	submit(SRV_PRIO_NORMAL, 60, n1);
	submit(SRV_PRIO_HIGH, 60, hi1);
	submit(SRV_PRIO_HIGH, 60, hi2);
	for (int i = 0; i < 4; i++) {
		o = get(want[i]);
		cr_expect_eq(ifield(o, F_POSITION), i + 1, "job %d: position %d", i, ifield(o, F_POSITION));
		cr_expect_str_eq(field(o, F_STATE), JOB_QUEUED);
		json_object_put(o);
	}
	o = get(lo);
	cr_expect_str_eq(field(o, F_PRIORITY), "low");
	cr_expect_null(json_object_object_get(o, F_ETA), "no run time known yet: no ETA");
	json_object_put(o);
	for (int i = 0; i < 4; i++) {
		cr_assert_eq(srv_jobs_take_remote(jobs, ZYNQ, &up, "b1", 0.05, &rj), 1);
		cr_expect_str_eq(rj.id, want[i], "take %d", i);
		o = get(rj.id);
		cr_expect_null(json_object_object_get(o, F_POSITION), "a running job has no position");
		json_object_put(o);
	}
}

Test(jobs, a_full_queue_refuses)
{
	char id[33];
	enpu_err e = ENPU_ERR_INIT;
	srv_jobreq q = {ART, "zynq_ps", INP, "in.npz", SRV_PRIO_HIGH, 0, 1, NULL};

	for (int i = 0; i < 4; i++)
		submit(SRV_PRIO_NORMAL, 60, id);
	cr_expect_eq(srv_jobs_submit_req(jobs, &q, id, &e), -1, "a high priority does not jump a full queue");
	cr_expect_eq(e.code, ENPU_E_QUEUE_FULL);
}

Test(jobs, cancel_queued_then_finished_then_unknown)
{
	char id[33], other[33];
	json_object *o;

	submit(SRV_PRIO_NORMAL, 60, id);
	submit(SRV_PRIO_NORMAL, 60, other);
	cr_expect_eq(srv_jobs_cancel(jobs, id), 0);
	o = get(id);
	cr_expect_str_eq(field(o, F_STATE), JOB_CANCELLED);
	cr_expect_str_eq(field(o, F_FAILURE), "cancelled");
	cr_expect_null(json_object_object_get(o, F_STARTED));
	cr_expect_not_null(json_object_object_get(o, F_FINISHED));
	json_object_put(o);
	cr_expect_eq(srv_jobs_cancel(jobs, id), 1, "already finished");
	cr_expect_eq(srv_jobs_cancel(jobs, "0123456789abcdef"), -1);
	o = get(other);
	cr_expect_eq(ifield(o, F_POSITION), 1, "the next one moved up");
	json_object_put(o);
}

Test(jobs, timeouts_are_capped_by_the_policy)
{
	char a[33], b[33], c[33];
	json_object *o;

	srv_jobs_set_policy(jobs, 5, 3600, 100);
	submit(SRV_PRIO_NORMAL, 100, a);
	submit(SRV_PRIO_NORMAL, 2, b);
	submit(SRV_PRIO_NORMAL, 0, c);
	o = get(a);
	cr_expect_eq(ifield(o, F_TIMEOUT), 5);
	json_object_put(o);
	o = get(b);
	cr_expect_eq(ifield(o, F_TIMEOUT), 2);
	json_object_put(o);
	o = get(c);
	cr_expect_eq(ifield(o, F_TIMEOUT), 5);
	json_object_put(o);
}

Test(jobs, a_board_job_past_its_deadline_times_out)
{
	char id[33];
	enpu_err e = ENPU_ERR_INIT;
	json_object *o;

	cr_assert_eq(srv_jobs_submit_remote(jobs, ART, "zynq_ps", INP, "in.npz", 0, id, &e), 0);
	srv_jobs_expire(jobs, ~0u, NULL, 30);
	o = get(id);
	cr_expect_str_eq(field(o, F_STATE), JOB_TIMED_OUT);
	cr_expect_str_eq(field(json_object_object_get(o, F_ERROR), "code"), "E0813");
	json_object_put(o);
}

Test(jobs, list_filters_newest_first)
{
	char a[33], b[33], c[33];
	json_object *arr;

	submit(SRV_PRIO_NORMAL, 60, a);
	submit(SRV_PRIO_NORMAL, 60, b);
	submit(SRV_PRIO_NORMAL, 60, c);
	srv_jobs_cancel(jobs, b);

	arr = srv_jobs_list(jobs, 0, NULL, 100, NULL);
	cr_assert_eq(json_object_array_length(arr), 3);
	cr_expect_str_eq(field(json_object_array_get_idx(arr, 0), F_ID), c);
	cr_expect_str_eq(field(json_object_array_get_idx(arr, 2), F_ID), a);
	json_object_put(arr);

	arr = srv_jobs_list(jobs, 1u << srv_job_state_parse("cancelled"), NULL, 100, NULL);
	cr_assert_eq(json_object_array_length(arr), 1);
	cr_expect_str_eq(field(json_object_array_get_idx(arr, 0), F_ID), b);
	json_object_put(arr);

	arr = srv_jobs_list(jobs, 1u << srv_job_state_parse("queued"), NULL, 1, NULL);
	cr_assert_eq(json_object_array_length(arr), 1, "limit");
	cr_expect_str_eq(field(json_object_array_get_idx(arr, 0), F_ID), c);
	json_object_put(arr);

	arr = srv_jobs_list(jobs, 0, "npu_sim", 100, NULL);
	cr_expect_eq(json_object_array_length(arr), 0, "backend filter");
	json_object_put(arr);
	arr = srv_jobs_list(jobs, 0, "zynq_ps", 100, NULL);
	cr_expect_eq(json_object_array_length(arr), 3);
	json_object_put(arr);
}

static const char *state_of(const char *json)
{
	static char buf[32];
	json_object *o = json_tokener_parse(json);
	snprintf(buf, sizeof buf, "%s", o ? field(o, F_STATE) : "?");
	json_object_put(o);
	return buf;
}

Test(jobs, events_give_every_state_change_in_order)
{
	char id[33], *json = NULL;
	unsigned seq;
	int final = -1;
	srv_rjob rj;
	srv_rresult res;

	submit(SRV_PRIO_NORMAL, 60, id);
	cr_assert_eq(srv_jobs_watch(jobs, id, &seq, &json, &final), 0);
	cr_expect_str_eq(state_of(json), "queued");
	cr_expect_eq(final, 0);
	free(json);
	cr_expect_eq(srv_jobs_watch_next(jobs, id, &seq, 0.05, &json, &final), 0, "nothing new");

	/* two changes before the reader looks: both are there, in order */
	cr_assert_eq(srv_jobs_take_remote(jobs, ZYNQ, &up, "b1", 0.05, &rj), 1);
	memset(&res, 0, sizeof res);
	memset(res.result, 'a', 64);
	memset(res.report, 'b', 64);
	srv_jobs_remote_done(jobs, id, SRV_RUN_OK, &res, NULL, 2);

	cr_assert_eq(srv_jobs_watch_next(jobs, id, &seq, 1, &json, &final), 1);
	cr_expect_str_eq(state_of(json), "running");
	cr_expect_eq(final, 0);
	free(json);
	cr_assert_eq(srv_jobs_watch_next(jobs, id, &seq, 1, &json, &final), 1);
	cr_expect_str_eq(state_of(json), "succeeded");
	cr_expect_eq(final, 1);
	free(json);
	srv_jobs_unwatch(jobs, id);
	cr_expect_eq(srv_jobs_watch(jobs, "0123456789abcdef", &seq, &json, &final), -1);
}

/* Poll (bounded) for the timer to forget a job. */
static int forgotten(const char *id)
{
	for (int i = 0; i < 300; i++) {
		int final;
		json_object *o = srv_jobs_get(jobs, id, 0, &final);
		if (!o)
			return 1;
		json_object_put(o);
		usleep(20000);
	}
	return 0;
}

Test(jobs, history_bound_forgets_the_oldest_finished)
{
	char a[33], b[33], c[33], q[33];
	json_object *o;

	srv_jobs_set_policy(jobs, 600, 3600, 2);
	submit(SRV_PRIO_NORMAL, 60, a);
	submit(SRV_PRIO_NORMAL, 60, b);
	submit(SRV_PRIO_NORMAL, 60, c);
	submit(SRV_PRIO_NORMAL, 60, q);
	srv_jobs_cancel(jobs, a);
	srv_jobs_cancel(jobs, b);
	srv_jobs_cancel(jobs, c);
	cr_expect(forgotten(a), "the oldest finished job is forgotten");
	o = get(b);
	json_object_put(o);
	o = get(c);
	json_object_put(o);
	o = get(q);
	cr_expect_str_eq(field(o, F_STATE), JOB_QUEUED, "an unfinished job always stays");
	json_object_put(o);
}

Test(jobs, ttl_forgets_finished_jobs_but_a_watched_one_stays)
{
	char a[33], b[33], *json;
	unsigned seq;
	int final;

	srv_jobs_set_policy(jobs, 600, 1, 100);
	submit(SRV_PRIO_NORMAL, 60, a);
	submit(SRV_PRIO_NORMAL, 60, b);
	cr_assert_eq(srv_jobs_watch(jobs, b, &seq, &json, &final), 0);
	free(json);
	srv_jobs_cancel(jobs, a);
	srv_jobs_cancel(jobs, b);
	cr_expect(forgotten(a), "past the TTL");
	json_object_put(get(b));
	srv_jobs_unwatch(jobs, b);
	cr_expect(forgotten(b), "once nobody watches it");
}

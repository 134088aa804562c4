/* test_srv_rjobs.c: board jobs in the job table (server/jobs/jobs.c), without
 * boards: the dispatcher's side (take by backend mask, only while the board
 * is up), retries after board faults, model errors passed through intact,
 * the job timeout, cancel, and the job JSON's board/attempts/failure. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>
#include "srv.h"
#include "ops.h"
#include "cas.h"
#include "jobs.h"
#include "backend.h"
#include "artifact.h"

#define ART "1111111111111111111111111111111111111111111111111111111111111111"
#define INP "2222222222222222222222222222222222222222222222222222222222222222"

static char root[256];
static srv_cas *cas;
static srv_jobs *jobs;
static atomic_int up = 1;
#define ZYNQ (1u << enpu_backend_parse("zynq_ps"))
#define FPGA (1u << enpu_backend_parse("fpga_board"))

static void setup(void)
{
	enpu_err e = ENPU_ERR_INIT;

	snprintf(root, sizeof root, "/tmp/enpu-test-rjobs.XXXXXX");
	cr_assert_not_null(mkdtemp(root));
	cas = srv_cas_open(root, &e);
	cr_assert_not_null(cas, "%s", e.message);
	jobs = srv_jobs_start(cas, enpu_limits_default(), 1, 1, 16, &e);
	cr_assert_not_null(jobs, "%s", e.message);
	atomic_store(&up, 1);
}

static void teardown(void)
{
	srv_jobs_free(jobs);
	srv_cas_close(cas);
	srv_rmtree(root);
}

TestSuite(rjobs, .init = setup, .fini = teardown);

static void submit(const char *backend, int timeout_s, char id[ENPU_JOB_ID_SIZE])
{
	enpu_err e = ENPU_ERR_INIT;
	cr_assert_eq(srv_jobs_submit_remote(jobs, ART, backend, INP, "in.npz", timeout_s, id, &e), 0,
		     "%s", e.message);
}

static const char *field(json_object *o, const char *k)
{
	json_object *v;
	return json_object_object_get_ex(o, k, &v) && v ? json_object_get_string(v) : NULL;
}

Test(rjobs, taken_only_for_a_served_backend_and_a_board_that_is_up)
{
	char id[ENPU_JOB_ID_SIZE];
	srv_rjob rj;
	int final;
	json_object *o;

	submit("fpga_board", 60, id);
	cr_expect_eq(srv_jobs_take_remote(jobs, ZYNQ, &up, "b1", 0.05, &rj), 0, "b1 serves zynq_ps only");
	cr_expect_eq(srv_jobs_remote_queued(jobs, FPGA), 1);
	cr_expect_eq(srv_jobs_remote_queued(jobs, ZYNQ), 0);
	atomic_store(&up, 0);
	cr_expect_eq(srv_jobs_take_remote(jobs, FPGA, &up, "b2", 0.05, &rj), 0, "a down board takes nothing");
	atomic_store(&up, 1);
	cr_assert_eq(srv_jobs_take_remote(jobs, ZYNQ | FPGA, &up, "b2", 0.05, &rj), 1);
	cr_expect_str_eq(rj.id, id);
	cr_expect_str_eq(rj.artifact, ART);
	cr_expect_str_eq(rj.input, INP);
	cr_expect_eq(rj.attempt, 1);
	o = srv_jobs_get(jobs, id, 0, &final);
	cr_expect_str_eq(field(o, F_STATE), JOB_RUNNING);
	cr_expect_str_eq(field(o, F_BOARD), "b2");
	json_object_put(o);
}

Test(rjobs, a_board_fault_is_retried_then_fails_as_a_board_fault)
{
	char id[ENPU_JOB_ID_SIZE];
	srv_rjob rj;
	enpu_err e = ENPU_ERR_INIT;
	int final;
	json_object *o, *er;

	submit("zynq_ps", 60, id);
	enpu_fail(&e, ENPU_E_BOARD_FAULT, "b1", NULL, "board 'b1': connection refused");
	cr_assert_eq(srv_jobs_take_remote(jobs, ZYNQ, &up, "b1", 0.05, &rj), 1);
	cr_expect_eq(srv_jobs_remote_done(jobs, id, SRV_RUN_FAULT, NULL, &e, 1), 1, "requeued");
	cr_assert_eq(srv_jobs_take_remote(jobs, ZYNQ, &up, "b2", 0.05, &rj), 1);
	cr_expect_eq(rj.attempt, 2);
	enpu_fail(&e, ENPU_E_AUTH, "b2", NULL, "board 'b2': E0814");
	cr_expect_eq(srv_jobs_remote_done(jobs, id, SRV_RUN_FAULT, NULL, &e, 1), 0, "no tries left");
	o = srv_jobs_get(jobs, id, 0, &final);
	cr_expect(final);
	cr_expect_str_eq(field(o, F_FAILURE), "board");
	cr_expect_eq(json_object_get_int(json_object_object_get(o, F_ATTEMPTS)), 2);
	er = json_object_object_get(o, F_ERROR);
	cr_expect_str_eq(field(er, "code"), "E0812", "always a board fault, whatever the board said");
	cr_expect(strstr(field(er, "message"), "b2") && strstr(field(er, "message"), "after 2 tries"),
		  "%s", field(er, "message"));
	json_object_put(o);
}

Test(rjobs, a_model_error_passes_through_intact)
{
	char id[ENPU_JOB_ID_SIZE];
	srv_rjob rj;
	enpu_err e = ENPU_ERR_INIT;
	int final;
	json_object *o, *er;

	submit("zynq_ps", 60, id);
	cr_assert_eq(srv_jobs_take_remote(jobs, ZYNQ, &up, "b1", 0.05, &rj), 1);
	enpu_fail(&e, ENPU_E_INPUT_SHAPE, "in.npz member 'x'", "reshape it", "input 'x' is [1, 7]");
	cr_expect_eq(srv_jobs_remote_done(jobs, id, SRV_RUN_MODEL, NULL, &e, 2), 0);
	o = srv_jobs_get(jobs, id, 0, &final);
	er = json_object_object_get(o, F_ERROR);
	cr_expect_str_eq(field(o, F_FAILURE), "model");
	cr_expect_str_eq(field(er, "code"), "E0501");
	cr_expect_str_eq(field(er, "message"), "input 'x' is [1, 7]");
	cr_expect_str_eq(field(er, "where"), "in.npz member 'x'");
	cr_expect_str_eq(field(er, "fix"), "reshape it");
	json_object_put(o);
}

Test(rjobs, success_takes_the_results_and_extra_keys)
{
	char id[ENPU_JOB_ID_SIZE];
	srv_rjob rj;
	srv_rresult res;
	int final;
	json_object *o;

	submit("fpga_board", 60, id);
	cr_assert_eq(srv_jobs_take_remote(jobs, FPGA, &up, "b1", 0.05, &rj), 1);
	memset(&res, 0, sizeof res);
	memset(res.result, 'a', 64);
	memset(res.report, 'b', 64);
	res.seconds = 0.5;
	res.outputs = json_tokener_parse("[{\"name\": \"logits\", \"shape\": [1, 4]}]");
	res.extra = json_tokener_parse("{\"fpga\": {\"pl_ops\": 3}}");
	cr_expect_eq(srv_jobs_remote_done(jobs, id, SRV_RUN_OK, &res, NULL, 2), 0);
	cr_expect_null(res.outputs, "taken by the job");
	o = srv_jobs_get(jobs, id, 0, &final);
	cr_expect_str_eq(field(o, F_STATE), JOB_SUCCEEDED);
	cr_expect_eq(strspn(field(o, F_RESULT), "a"), 64);
	cr_expect_eq(json_object_get_int(json_object_object_get(
		json_object_object_get(o, "fpga"), "pl_ops")), 3);
	cr_expect_null(json_object_object_get(o, F_FAILURE));
	json_object_put(o);
}

Test(rjobs, past_the_job_timeout)
{
	char q[ENPU_JOB_ID_SIZE], r[ENPU_JOB_ID_SIZE];
	srv_rjob rj;
	enpu_err e = ENPU_ERR_INIT;
	int final;
	json_object *o;

	submit("zynq_ps", 0, q);               /* queued: fails at the next tick */
	srv_jobs_expire(jobs, ~0u, NULL, 30);
	o = srv_jobs_get(jobs, q, 0, &final);
	cr_expect(final);
	cr_expect_str_eq(field(o, F_FAILURE), "timeout");
	cr_expect_str_eq(field(json_object_object_get(o, F_ERROR), "code"), "E0813");
	json_object_put(o);

	submit("zynq_ps", 0, r);               /* running: flagged, then ended as a timeout */
	atomic_store(&up, 1);
	cr_assert_eq(srv_jobs_take_remote(jobs, ZYNQ, &up, "b1", 0.05, &rj), 1);
	srv_jobs_expire(jobs, ~0u, NULL, 30);
	cr_expect_eq(*rj.cancel, SRV_CANCEL_TIMEOUT);
	srv_jobs_remote_done(jobs, r, SRV_RUN_CANCEL, NULL, &e, 2);
	o = srv_jobs_get(jobs, r, 0, &final);
	cr_expect_str_eq(field(o, F_FAILURE), "timeout");
	cr_expect(strstr(field(json_object_object_get(o, F_ERROR), "message"), "cancelled on board 'b1'"));
	json_object_put(o);
}

Test(rjobs, cancel_a_queued_board_job)
{
	char id[ENPU_JOB_ID_SIZE];
	srv_rjob rj;
	int final;
	json_object *o;

	submit("zynq_ps", 60, id);
	cr_expect_eq(srv_jobs_cancel(jobs, id), 0);
	cr_expect_eq(srv_jobs_take_remote(jobs, ZYNQ, &up, "b1", 0.05, &rj), 0, "gone from the queue");
	o = srv_jobs_get(jobs, id, 0, &final);
	cr_expect_str_eq(field(o, F_STATE), JOB_CANCELLED);
	cr_expect_str_eq(field(o, F_FAILURE), "cancelled");
	json_object_put(o);
}

Test(rjobs, with_no_board_up_a_queued_job_says_why_then_fails_after_board_wait)
{
	const char *why[ENPU_BACKENDS_MAX] = {NULL};
	int zps = enpu_backend_index(enpu_backend_by_name("zynq_ps"));
	char id[ENPU_JOB_ID_SIZE], w[ENPU_JOB_ID_SIZE];
	int final;
	json_object *o;

	why[zps] = "waiting for a board: b1 down since T: refused";
	submit("zynq_ps", 60, id);
	srv_jobs_expire(jobs, FPGA, why, 30);       /* only fpga boards up */
	o = srv_jobs_get(jobs, id, 0, &final);
	cr_expect(!final);
	cr_expect_str_eq(field(o, F_STATE), "queued");
	cr_expect_str_eq(field(o, F_WAITING), why[zps]);
	json_object_put(o);
	srv_jobs_expire(jobs, ZYNQ, why, 30);       /* a board came up: no reason to show */
	o = srv_jobs_get(jobs, id, 0, &final);
	cr_expect_null(field(o, F_WAITING));
	json_object_put(o);
	srv_jobs_expire(jobs, 0, why, 0);           /* --board-wait 0: fails at once */
	o = srv_jobs_get(jobs, id, 0, &final);
	cr_expect(final);
	cr_expect_str_eq(field(o, F_FAILURE), "board");
	cr_expect_str_eq(field(json_object_object_get(o, F_ERROR), "code"), "E0811");
	cr_expect(strstr(field(json_object_object_get(o, F_ERROR), "message"), "b1 down since T"),
		  "%s", field(json_object_object_get(o, F_ERROR), "message"));
	json_object_put(o);

	submit("zynq_ps", 60, w);                   /* within --board-wait: still queued */
	srv_jobs_expire(jobs, 0, why, 30);
	srv_jobs_expire(jobs, 0, why, 30);
	o = srv_jobs_get(jobs, w, 0, &final);
	cr_expect(!final, "waited less than 30 s");
	json_object_put(o);
}

Test(rjobs, a_board_fault_keeps_the_boards_own_error_as_data)
{
	char id[ENPU_JOB_ID_SIZE];
	srv_rjob rj;
	srv_rresult res;
	enpu_err e = ENPU_ERR_INIT;
	int final;
	json_object *o, *be;

	memset(&res, 0, sizeof res);
	res.board_error = json_tokener_parse("{\"board\":\"b1\",\"code\":\"E0814\",\"message\":\"m\"}");
	submit("zynq_ps", 60, id);
	enpu_fail(&e, ENPU_E_BOARD_FAULT, "b1", NULL, "board 'b1' returned an error of its own");
	cr_assert_eq(srv_jobs_take_remote(jobs, ZYNQ, &up, "b1", 0.05, &rj), 1);
	cr_expect_eq(srv_jobs_remote_done(jobs, id, SRV_RUN_FAULT, &res, &e, 0), 0);
	cr_expect_null(res.board_error, "the job took it");
	o = srv_jobs_get(jobs, id, 0, &final);
	be = json_object_object_get(o, F_BOARD_ERROR);
	cr_expect_str_eq(field(json_object_object_get(o, F_ERROR), "code"), "E0812");
	cr_expect_str_eq(field(be, "code"), "E0814");
	cr_expect_str_eq(field(be, F_BOARD), "b1");
	json_object_put(o);
}

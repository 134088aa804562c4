/* test_srv_jobs.c: the job table's queue policy (server/jobs/jobs.c) without
 * running anything: board jobs stay queued until taken, so the order of
 * priorities, positions, cancel, the list filters, the event stream's
 * sequence of states, timeouts capped by the policy and retention are seen
 * exactly. The jqueue suite checks the structures under the queues
 * (jobs_queue.c: the order-statistic treap, the deadline heap) against
 * plain arrays; the bigtable suite a table of thousands of jobs (expiry,
 * retention and a long list in batches, positions after cancels from the
 * middle) and, with local jobs held running by the EULERNPUD_HOLD gate,
 * the job timeout and the drain's deadline. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>
#include "srv.h"
#include "ops.h"
#include "cas.h"
#include "jobs.h"
#include "jobs_queue.h"
#include "fault.h"
#include "obs.h"

#define ART "1111111111111111111111111111111111111111111111111111111111111111"
#define INP "2222222222222222222222222222222222222222222222222222222222222222"

static char root[256];
static srv_cas *cas;
static srv_jobs *jobs;
static atomic_int up = 1;
#define ZYNQ (1u << enpu_backend_parse("zynq_ps"))

static char hold_file[300];

/* A table of one worker with room for max_queue jobs, in a fresh cache;
 * hold: its gate is root/hold (EULERNPUD_HOLD, set before the worker
 * starts, in this test's own process). */
static void open_table(int max_queue, int hold)
{
	enpu_err e = ENPU_ERR_INIT;

	snprintf(root, sizeof root, "/tmp/enpu-test-jobs.XXXXXX");
	cr_assert_not_null(mkdtemp(root));
	if (hold) {
		snprintf(hold_file, sizeof hold_file, "%s/hold", root);
		setenv("EULERNPUD_HOLD", hold_file, 1);
		srv_fault_init();
	}
	cas = srv_cas_open(root, &e);
	cr_assert_not_null(cas, "%s", e.message);
	jobs = srv_jobs_start(cas, enpu_limits_default(), 1, 1, max_queue, &e);
	cr_assert_not_null(jobs, "%s", e.message);
}

static void setup(void)
{
	open_table(4, 0);
}

static void teardown(void)
{
	srv_jobs_free(jobs);
	srv_cas_close(cas);
	srv_rmtree(root);
}

TestSuite(jobs, .init = setup, .fini = teardown);

/* A board job (nothing runs it here): its id. */
static void submit(int prio, int timeout_s, char id[ENPU_JOB_ID_SIZE])
{
	enpu_err e = ENPU_ERR_INIT;
	srv_jobreq q = {ART, "zynq_ps", INP, "in.npz", prio, timeout_s, 1, NULL, 0, NULL};
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

/* --node-id: the ids made from then on begin with "<node>-", parse as
 * job ids naming that node, and find their job; none without it. */
Test(jobs, ids_name_the_node)
{
	char a[ENPU_JOB_ID_SIZE], b[ENPU_JOB_ID_SIZE], node[ENPU_NODE_ID_MAX + 1];
	json_object *o;

	submit(SRV_PRIO_NORMAL, 60, a);
	cr_assert_eq(enpu_job_id_parse(a, node), 1, "'%s'", a);
	cr_assert_str_eq(node, "", "no --node-id: '%s' names no node", a);
	cr_assert_eq(strlen(a), ENPU_JOB_HEX);
	srv_jobs_set_node(jobs, "abcdefghijklmnop");
	submit(SRV_PRIO_NORMAL, 60, b);
	cr_assert_eq(enpu_job_id_parse(b, node), 1, "'%s'", b);
	cr_assert_str_eq(node, "abcdefghijklmnop");
	o = get(b);
	cr_expect_str_eq(field(o, F_ID), b);
	json_object_put(o);
	o = get(a);
	cr_expect_str_eq(field(o, F_ID), a, "the older id still finds its job");
	json_object_put(o);
	srv_jobs_set_node(jobs, NULL);
	submit(SRV_PRIO_NORMAL, 60, b);
	cr_assert_eq(strlen(b), ENPU_JOB_HEX, "'%s'", b);
}

Test(jobs, the_queue_runs_by_priority_then_first_come)
{
	char lo[ENPU_JOB_ID_SIZE], n1[ENPU_JOB_ID_SIZE], hi1[ENPU_JOB_ID_SIZE], hi2[ENPU_JOB_ID_SIZE];
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
	char id[ENPU_JOB_ID_SIZE];
	enpu_err e = ENPU_ERR_INIT;
	srv_jobreq q = {ART, "zynq_ps", INP, "in.npz", SRV_PRIO_HIGH, 0, 1, NULL, 0, NULL};

	for (int i = 0; i < 4; i++)
		submit(SRV_PRIO_NORMAL, 60, id);
	cr_expect_eq(srv_jobs_submit_req(jobs, &q, id, &e), -1, "a high priority does not jump a full queue");
	cr_expect_eq(e.code, ENPU_E_QUEUE_FULL);
}

Test(jobs, cancel_queued_then_finished_then_unknown)
{
	char id[ENPU_JOB_ID_SIZE], other[ENPU_JOB_ID_SIZE];
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
	char a[ENPU_JOB_ID_SIZE], b[ENPU_JOB_ID_SIZE], c[ENPU_JOB_ID_SIZE];
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
	char id[ENPU_JOB_ID_SIZE];
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
	char a[ENPU_JOB_ID_SIZE], b[ENPU_JOB_ID_SIZE], c[ENPU_JOB_ID_SIZE];
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
	char id[ENPU_JOB_ID_SIZE], *json = NULL;
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
	char a[ENPU_JOB_ID_SIZE], b[ENPU_JOB_ID_SIZE], c[ENPU_JOB_ID_SIZE], q[ENPU_JOB_ID_SIZE];
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
	char a[ENPU_JOB_ID_SIZE], b[ENPU_JOB_ID_SIZE], *json;
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

Test(jobs, history_forgets_the_one_that_ended_first)
{
	char a[ENPU_JOB_ID_SIZE], b[ENPU_JOB_ID_SIZE];

	srv_jobs_set_policy(jobs, 600, 3600, 1);
	submit(SRV_PRIO_NORMAL, 60, a);
	submit(SRV_PRIO_NORMAL, 60, b);
	srv_jobs_cancel(jobs, b);   /* b ends first, though a came first */
	srv_jobs_cancel(jobs, a);
	cr_expect(forgotten(b), "the job that ended first is forgotten first");
	json_object_put(get(a));
}

Test(jobs, a_job_put_back_after_a_board_fault_comes_first)
{
	char n1[ENPU_JOB_ID_SIZE], hi[ENPU_JOB_ID_SIZE];
	srv_rjob rj;
	enpu_err e = ENPU_ERR_INIT;
	json_object *o;

	submit(SRV_PRIO_NORMAL, 60, n1);
	cr_assert_eq(srv_jobs_take_remote(jobs, ZYNQ, &up, "b1", 0.05, &rj), 1);
	submit(SRV_PRIO_HIGH, 60, hi);
	enpu_fail(&e, ENPU_E_BOARD_FAULT, "b1", NULL, "board 'b1': connection refused");
	cr_assert_eq(srv_jobs_remote_done(jobs, n1, SRV_RUN_FAULT, NULL, &e, 2), 1);
	o = get(n1);
	cr_expect_eq(ifield(o, F_POSITION), 1, "it has waited longest: at the head");
	json_object_put(o);
	o = get(hi);
	cr_expect_eq(ifield(o, F_POSITION), 2);
	json_object_put(o);
	cr_assert_eq(srv_jobs_take_remote(jobs, ZYNQ, &up, "b2", 0.05, &rj), 1);
	cr_expect_str_eq(rj.id, n1);
	cr_expect_eq(rj.attempt, 2);
}

Test(jobs, the_eta_counts_the_backends_ahead)
{
	char d[ENPU_JOB_ID_SIZE], z1[ENPU_JOB_ID_SIZE], f1[ENPU_JOB_ID_SIZE], z2[ENPU_JOB_ID_SIZE];
	srv_rjob rj;
	srv_rresult res;
	enpu_err e = ENPU_ERR_INIT;
	json_object *o;

	/* one zynq_ps run teaches its average; fpga_board has none */
	submit(SRV_PRIO_NORMAL, 60, d);
	cr_assert_eq(srv_jobs_take_remote(jobs, ZYNQ, &up, "b1", 0.05, &rj), 1);
	memset(&res, 0, sizeof res);
	srv_jobs_remote_done(jobs, d, SRV_RUN_OK, &res, NULL, 2);
	submit(SRV_PRIO_NORMAL, 60, z1);
	cr_assert_eq(srv_jobs_submit_remote(jobs, ART, "fpga_board", INP, "in.npz", 60, f1, &e), 0);
	submit(SRV_PRIO_NORMAL, 60, z2);
	o = get(z1);
	cr_expect_not_null(json_object_object_get(o, F_ETA), "zynq_ps ahead of it: none; its own known");
	json_object_put(o);
	o = get(f1);
	cr_expect_eq(ifield(o, F_POSITION), 2);
	cr_expect_null(json_object_object_get(o, F_ETA), "its own backend has no average");
	json_object_put(o);
	o = get(z2);
	cr_expect_eq(ifield(o, F_POSITION), 3);
	cr_expect_null(json_object_object_get(o, F_ETA), "an fpga_board job of unknown time is ahead");
	json_object_put(o);
	srv_jobs_cancel(jobs, f1);
	o = get(z2);
	cr_expect_eq(ifield(o, F_POSITION), 2);
	cr_expect_not_null(json_object_object_get(o, F_ETA), "only zynq_ps jobs ahead now");
	json_object_put(o);
}

/* ---- the structures (server/jobs/jobs_queue.c) against plain arrays ---- */

static unsigned lcg(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

typedef struct ref { int64_t key; int kind; int in; } ref;

static int rank_of(const ref *r, int n, int64_t key, int ahead[JQ_KINDS])
{
	int k = 0;
	memset(ahead, 0, sizeof(int) * JQ_KINDS);
	for (int i = 0; i < n; i++)
		if (r[i].in && r[i].key < key) {
			k++;
			ahead[r[i].kind]++;
		}
	return k;
}

static void collect(void *item, void *arg)
{
	int64_t **p = arg;
	*(*p)++ = ((jq_node *)item)->key;
}

TestSuite(jqueue);

Test(jqueue, order_ranks_kinds_and_removal_from_the_middle)
{
	enum { N = 3000 };
	static jq_node nodes[N];
	static ref r[N];
	static int64_t seen[N];
	unsigned seed = 7;
	jq q;
	int i, n_in = 0;

	jq_init(&q, 1);
	for (i = 0; i < N; i++) {   /* distinct keys in a shuffled order */
		r[i].key = (int64_t)((unsigned)i * 2654435761u % 1000003u) - 500000;
		r[i].kind = (int)(lcg(&seed) % 5);
		r[i].in = 1;
		nodes[i].key = r[i].key;
		nodes[i].kind = r[i].kind;
		nodes[i].item = &nodes[i];
		jq_insert(&q, &nodes[i]);
		n_in++;
	}
	for (i = 0; i < N; i += 3) {   /* a third out, from anywhere */
		jq_remove(&q, &nodes[i]);
		r[i].in = 0;
		n_in--;
	}
	cr_assert_eq(jq_count(&q), n_in);
	cr_expect_eq(jq_count_of(&q, 1u << 2), rank_of(r, N, INT64_MAX, (int[JQ_KINDS]){0}) -
		     jq_count_of(&q, ~(1u << 2)), "counts by kind add up");
	for (i = 0; i < N; i += 7) {
		int want[JQ_KINDS], got[JQ_KINDS];
		int wr = rank_of(r, N, r[i].key, want), gr = jq_rank(&q, r[i].key, got);
		cr_assert_eq(gr, wr, "rank of key %lld", (long long)r[i].key);
		cr_assert_eq(memcmp(want, got, sizeof want), 0, "kinds ahead of key %lld",
			     (long long)r[i].key);
	}
	int64_t *p = seen;
	jq_foreach(&q, collect, &p);
	cr_assert_eq(p - seen, n_in);
	for (i = 1; i < n_in; i++)
		cr_assert_lt(seen[i - 1], seen[i], "in order");
	cr_expect_eq(jq_first(&q)->key, seen[0]);
	for (unsigned m = 1; m < 32; m++) {   /* the first of some kinds */
		const jq_node *f = jq_first_of(&q, m);
		int64_t want = INT64_MAX;
		for (i = 0; i < N; i++)
			if (r[i].in && (m & (1u << r[i].kind)) && r[i].key < want)
				want = r[i].key;
		if (want == INT64_MAX)
			cr_expect_null(f, "mask %u", m);
		else
			cr_expect(f && f->key == want, "mask %u", m);
	}
	cr_expect_null(jq_first_of(&q, 1u << 9), "no node of that kind");
}

Test(jqueue, an_unknown_kind_counts_apart)
{
	jq q;
	jq_node a = {.key = 1, .kind = -1}, b = {.key = 2, .kind = 99}, c = {.key = 3, .kind = 0};
	int ahead[JQ_KINDS];

	jq_init(&q, 5);
	jq_insert(&q, &c);
	jq_insert(&q, &b);
	jq_insert(&q, &a);
	cr_expect_eq(jq_rank(&q, 3, ahead), 2);
	cr_expect_eq(ahead[JQ_KINDS - 1], 2);
	cr_expect_eq(ahead[0], 0);
	cr_expect_eq(jq_first_of(&q, 1u)->key, 3);
}

Test(jqueue, the_heap_pops_in_order_after_removals)
{
	enum { N = 2000 };
	static int pos[N];
	static double key[N];
	unsigned seed = 11;
	jheap h = {NULL, 0, 0};
	double last = -1;
	int i, left = 0;

	cr_assert_eq(jheap_reserve(&h, N), 0);
	for (i = 0; i < N; i++) {
		key[i] = (double)(lcg(&seed) % 100000) / 7.0;
		cr_assert_eq(jheap_push(&h, key[i], &key[i], &pos[i]), 0);
	}
	for (i = 0; i < N; i += 2)   /* every other one out, wherever it is */
		jheap_remove(&h, pos[i]);
	for (i = 0; i < N; i++) {
		cr_assert_eq(pos[i] < 0, i % 2 == 0, "entry %d: place %d", i, pos[i]);
		if (pos[i] >= 0)
			cr_assert_eq(h.a[pos[i]].item, &key[i], "entry %d knows its place", i);
	}
	while (jheap_top(&h)) {
		const jheap_ent *t = jheap_top(&h);
		int k = (int)((double *)t->item - key);
		cr_assert_geq(t->key, last);
		cr_assert_eq(k % 2, 1, "a removed entry came back");
		last = t->key;
		jheap_remove(&h, 0);
		left++;
	}
	cr_expect_eq(left, N / 2);
	jheap_free(&h);
}

/* ---- a big table: batches, local jobs held running (EULERNPUD_HOLD) ---- */

static void big_setup(void)
{
	open_table(10000, 1);
}

/* Make the gate's file: local jobs the worker takes stay held running. */
static void close_gate(void)
{
	FILE *f = fopen(hold_file, "w");
	cr_assert_not_null(f);
	fclose(f);
}

static void big_teardown(void)
{
	unlink(hold_file);
	teardown();
}

TestSuite(bigtable, .init = big_setup, .fini = big_teardown);

/* A local job (the worker takes it; the gate holds it running). */
static void submit_local(int prio, char id[ENPU_JOB_ID_SIZE])
{
	enpu_err e = ENPU_ERR_INIT;
	srv_jobreq q = {ART, "cpu_ref", INP, "in.npz", prio, 0, 0, NULL, 0, NULL};
	cr_assert_eq(srv_jobs_submit_req(jobs, &q, id, &e), 0, "%s", e.message);
}

/* Poll (bounded) until job id is in state. */
static int becomes(const char *id, const char *state)
{
	for (int i = 0; i < 500; i++) {
		json_object *o = get(id);
		int yes = !strcmp(field(o, F_STATE), state);
		json_object_put(o);
		if (yes)
			return 1;
		usleep(10000);
	}
	return 0;
}

static int count_in(const char *state)
{
	json_object *arr = srv_jobs_list(jobs, 1u << srv_job_state_parse(state), NULL, 10000, NULL);
	int n = (int)json_object_array_length(arr);
	json_object_put(arr);
	return n;
}

/* Which thread ended the last job (the observer runs on it). */
static pthread_t ended_on;
static atomic_int n_ended;

static void note_end(void *arg, const char *backend, const char *state, double q, double r)
{
	(void)arg; (void)backend; (void)state; (void)q; (void)r;
	ended_on = pthread_self();
	atomic_fetch_add(&n_ended, 1);
}

static const srv_observer end_watch = {NULL, NULL, note_end};

/* 1 when it was taken for this thread to run, and has run;
 * SRV_HERE_REFUSED when it would have queued (then nothing was done). */
static int submit_here(char id[ENPU_JOB_ID_SIZE])
{
	enpu_err e = ENPU_ERR_INIT;
	srv_jobreq q = {ART, "cpu_ref", INP, "in.npz", SRV_PRIO_NORMAL, 0, 0, NULL, SRV_HERE_ONLY, NULL};
	int rc = srv_jobs_submit_req(jobs, &q, id, &e);

	cr_assert_geq(rc, 0, "%s", e.message);
	return rc;
}

static int submit_waited(char id[ENPU_JOB_ID_SIZE])
{
	int rc = submit_here(id);

	if (rc == 1)
		srv_jobs_run_here(jobs, id);
	return rc;
}

/* SRV_HERE_ONLY with the worker idle: the submitter runs it (this artifact
 * is not in the cache, so it fails): it has ended, on this thread. */
Test(jobs, a_job_its_submitter_waits_for_runs_on_the_submitters_thread)
{
	char id[ENPU_JOB_ID_SIZE];
	json_object *o;

	srv_jobs_set_observer(jobs, &end_watch);
	atomic_store(&n_ended, 0);
	cr_assert_eq(submit_waited(id), 1, "taken for the submitter");
	cr_assert_eq(atomic_load(&n_ended), 1, "ended before submit returned");
	cr_expect(pthread_equal(ended_on, pthread_self()), "ended on the submitter's thread");
	o = get(id);
	cr_expect_str_eq(field(o, F_STATE), JOB_FAILED);
	json_object_put(o);
	cr_expect(srv_jobs_idle(jobs), "its slot is free again");
}

/* The one worker's slot is held by a running job: a job for the submitter
 * to run is refused rather than run beside it (--workers bounds both
 * kinds), and nothing is queued. */
Test(bigtable, no_run_for_the_submitter_while_every_slot_is_taken)
{
	char held[ENPU_JOB_ID_SIZE], id[ENPU_JOB_ID_SIZE];
	int rc;

	close_gate();
	submit_local(SRV_PRIO_NORMAL, held);
	cr_assert(becomes(held, JOB_RUNNING), "held running");
	rc = submit_here(id);
	cr_expect_eq(rc, SRV_HERE_REFUSED, "no free slot");
	cr_expect_eq(count_in(JOB_QUEUED), 0, "nothing queued");
	cr_expect_eq(count_in(JOB_RUNNING), 1, "only the held one runs");
	if (rc == 1) {   /* taken after all: it must end, or the table never stops */
		unlink(hold_file);
		srv_jobs_run_here(jobs, id);
	}
}

Test(bigtable, board_jobs_past_their_deadline_expire_in_batches)
{
	char id[ENPU_JOB_ID_SIZE];
	enpu_err e = ENPU_ERR_INIT;

	for (int i = 0; i < 1000; i++)   /* four batches and more, all due at once */
		cr_assert_eq(srv_jobs_submit_remote(jobs, ART, "zynq_ps", INP, "in.npz", 0, id, &e), 0);
	srv_jobs_expire(jobs, ~0u, NULL, 30);
	cr_expect_eq(count_in(JOB_TIMED_OUT), 1000);
	cr_expect_eq(count_in(JOB_QUEUED), 0);
	cr_expect_eq(srv_jobs_remote_queued(jobs, ZYNQ), 0);
}

Test(bigtable, queued_local_jobs_expire_in_batches_and_the_held_one_too)
{
	char first[ENPU_JOB_ID_SIZE], id[ENPU_JOB_ID_SIZE];
	int final = 0;
	json_object *o;

	close_gate();
	srv_jobs_set_policy(jobs, 1, 3600, 10000);
	submit_local(SRV_PRIO_NORMAL, first);
	cr_assert(becomes(first, JOB_RUNNING), "held running");
	for (int i = 0; i < 600; i++)
		submit_local(SRV_PRIO_NORMAL, id);
	o = srv_jobs_get(jobs, id, 30, &final);   /* the last one: a bounded long poll */
	cr_assert(final);
	cr_expect_str_eq(field(o, F_STATE), JOB_TIMED_OUT);
	cr_expect(strstr(field(json_object_object_get(o, F_ERROR), "message"), "waiting in the queue"));
	json_object_put(o);
	json_object_put(srv_jobs_get(jobs, first, 30, &final));
	cr_expect(final, "the held one is stopped by its deadline");
	/* the worker may have taken one more, held until its deadline too */
	for (int i = 0; i < 500 && !srv_jobs_idle(jobs); i++)
		usleep(10000);
	cr_expect_eq(count_in(JOB_TIMED_OUT), 601);
}

Test(bigtable, many_finished_jobs_are_forgotten_down_to_the_history)
{
	static char ids[1000][ENPU_JOB_ID_SIZE];
	int n = 0;

	srv_jobs_set_policy(jobs, 600, 3600, 10);
	for (int i = 0; i < 1000; i++)
		submit(SRV_PRIO_NORMAL, 60, ids[i]);
	for (int i = 0; i < 1000; i++)
		srv_jobs_cancel(jobs, ids[i]);
	for (int i = 0; i < 500; i++) {   /* the timer catches up (bounded) */
		json_object *arr = srv_jobs_list(jobs, 0, NULL, 10000, NULL);
		n = (int)json_object_array_length(arr);
		json_object_put(arr);
		if (n == 10)
			break;
		usleep(10000);
	}
	cr_expect_eq(n, 10);
	for (int i = 990; i < 1000; i++)
		json_object_put(get(ids[i]));   /* the last ten ended last: they stay */
}

Test(bigtable, a_long_list_crosses_batches_in_order_with_positions)
{
	enum { N = 5000 };
	static char ids[N][ENPU_JOB_ID_SIZE];
	json_object *arr;
	int i, k;

	for (i = 0; i < N; i++)
		submit(i % 2 ? SRV_PRIO_HIGH : SRV_PRIO_NORMAL, 60, ids[i]);
	for (i = 5; i < N; i += 10)   /* cancel from the middle */
		srv_jobs_cancel(jobs, ids[i]);
	arr = srv_jobs_list(jobs, 0, NULL, N, NULL);
	cr_assert_eq(json_object_array_length(arr), N);
	for (i = 0; i < N; i++)
		cr_assert_str_eq(field(json_object_array_get_idx(arr, (size_t)i), F_ID), ids[N - 1 - i],
				 "newest first, at %d", i);
	json_object_put(arr);
	/* high ones first (odd i, every tenth from 5 cancelled), then the normal ones */
	k = 0;
	for (int pass = 0; pass < 2; pass++)
		for (i = pass ? 0 : 1; i < N; i += 2) {
			json_object *o;
			if (i % 10 == 5)
				continue;
			o = get(ids[i]);
			cr_assert_eq(ifield(o, F_POSITION), ++k, "job %d", i);
			json_object_put(o);
		}
	cr_expect_eq(k, N - N / 10);
}

Test(bigtable, the_drain_deadline_cancels_queued_and_stops_running_jobs)
{
	char run[ENPU_JOB_ID_SIZE], q[ENPU_JOB_ID_SIZE], b[ENPU_JOB_ID_SIZE];
	int final = 0;
	json_object *o;
	const char *msg;

	close_gate();
	submit_local(SRV_PRIO_NORMAL, run);
	cr_assert(becomes(run, JOB_RUNNING), "held running");
	submit_local(SRV_PRIO_NORMAL, q);
	submit(SRV_PRIO_NORMAL, 60, b);
	srv_jobs_drain(jobs, 0);
	cr_expect_eq(srv_jobs_drain_over(jobs), 1);
	o = srv_jobs_get(jobs, run, 30, &final);   /* the gate stays closed: the drain ended it */
	cr_assert(final);
	cr_expect_str_eq(field(o, F_STATE), JOB_CANCELLED);
	msg = field(json_object_object_get(o, F_ERROR), "message");
	cr_expect(strstr(msg, "drain timed out") && strstr(msg, "while job"), "%s", msg);
	json_object_put(o);
	for (int i = 0; i < 2; i++) {
		o = get(i ? b : q);
		cr_expect_str_eq(field(o, F_STATE), JOB_CANCELLED);
		msg = field(json_object_object_get(o, F_ERROR), "message");
		cr_expect(strstr(msg, "drain timed out") && strstr(msg, "before"), "%s", msg);
		json_object_put(o);
	}
	cr_expect(srv_jobs_idle(jobs));
}

Test(bigtable, before_the_drain_deadline_jobs_go_on)
{
	char run[ENPU_JOB_ID_SIZE], q[ENPU_JOB_ID_SIZE];

	close_gate();
	submit_local(SRV_PRIO_NORMAL, run);
	cr_assert(becomes(run, JOB_RUNNING), "held running");
	submit_local(SRV_PRIO_NORMAL, q);
	srv_jobs_drain(jobs, 3600);
	cr_expect_eq(srv_jobs_drain_over(jobs), 0);
	srv_jobs_drain(jobs, 0);   /* a second call keeps the first deadline */
	cr_expect_eq(srv_jobs_drain_over(jobs), 0);
	json_object *o = get(run);
	cr_expect_str_eq(field(o, F_STATE), JOB_RUNNING);
	json_object_put(o);
	o = get(q);
	cr_expect_str_eq(field(o, F_STATE), JOB_QUEUED);
	json_object_put(o);
}

/* The feed of every job's changes (GET /v1/events): each submission and
 * state change numbered in order, with its job and owner; a reader too far
 * behind, or ahead (a number from before a restart), is told to reload. */
Test(jobs, the_feed_numbers_every_change_and_says_when_to_reload)
{
	srv_feed_ev ev[8];
	uint64_t since = srv_jobs_feed_seq(jobs), start = since;
	char a[ENPU_JOB_ID_SIZE], b[ENPU_JOB_ID_SIZE];
	int reset, n;

	cr_expect_eq(srv_jobs_feed_next(jobs, &since, 0.01, ev, 8, &reset), 0, "nothing yet");
	cr_expect_eq(reset, 0);
	submit(SRV_PRIO_NORMAL, 0, a);
	submit(SRV_PRIO_NORMAL, 0, b);
	cr_assert_eq(srv_jobs_cancel(jobs, a), 0);
	n = srv_jobs_feed_next(jobs, &since, 1.0, ev, 8, &reset);
	cr_assert_eq(n, 3, "two submissions and a cancel");
	cr_expect_eq(reset, 0);
	cr_expect_str_eq(ev[0].id, a);
	cr_expect_str_eq(ev[1].id, b);
	cr_expect_str_eq(ev[2].id, a);
	cr_expect_eq(ev[0].seq, start + 1);
	cr_expect_eq(ev[2].seq, start + 3);
	cr_expect_eq(since, start + 3);
	/* a page at a time */
	since = start;
	cr_expect_eq(srv_jobs_feed_next(jobs, &since, 0, ev, 2, &reset), 2);
	cr_expect_eq(srv_jobs_feed_next(jobs, &since, 0, ev, 2, &reset), 1);
	cr_expect_str_eq(ev[0].id, a);
	/* from the future: reset to now */
	since = start + 1000;
	cr_expect_eq(srv_jobs_feed_next(jobs, &since, 0, ev, 8, &reset), 0);
	cr_expect_eq(reset, 1);
	cr_expect_eq(since, start + 3);
	/* more than the ring behind: reset */
	for (int i = 0; i < SRV_JOBS_FEED / 2 + 2; i++) {
		char id[ENPU_JOB_ID_SIZE];
		submit(SRV_PRIO_NORMAL, 0, id);
		cr_assert_eq(srv_jobs_cancel(jobs, id), 0);
	}
	since = start;
	cr_expect_eq(srv_jobs_feed_next(jobs, &since, 0, ev, 8, &reset), 0);
	cr_expect_eq(reset, 1, "the ring no longer holds what follows %llu",
		     (unsigned long long)start);
	cr_expect_eq(since, srv_jobs_feed_seq(jobs));
}

/* cmd_run.c: `eulernpu run --artifact DIR|ID|--model NAME[:V] --input F
 * --out F`: make sure the server has the artifact (importing a local
 * directory when it does not: artifacts.c), or name a deployed model,
 * submit a job, long-poll it to the end, and download the result (and
 * with --report the run's report.json). An npu_sim run adds one line with
 * the cycle model's totals. --detach submits and prints the job id alone
 * (`eulernpu jobs wait ID` follows it); --json prints the final job.
 * Ctrl-C while waiting cancels the job (a second one within INT_GRACE
 * seconds leaves it running) and exits 130. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <json-c/json.h>
#include "api.h"
#include "buf.h"
#include "cli.h"
#include "digest.h"
#include "progress.h"
#include "rest.h"
#include "wire.h"

#define POLL_WAIT 60     /* seconds per long-poll */
#define INT_GRACE 2      /* seconds for a second Ctrl-C to leave the job running */
#define EXIT_INTERRUPTED 130

static const char usage[] =
	"usage: eulernpu run --artifact DIR|ID --input F --out F [--report F] [--timeout S]\n"
	"                    [--priority low|normal|high] [--json]\n"
	"       eulernpu run --model NAME[:V] --input F --out F [options as above]\n"
	"       eulernpu run --artifact DIR|ID --input F --detach [--priority P] [--timeout S]\n"
	"\n"
	"Run a compiled artifact on an input and write the result (.npz).\n"
	"\n"
	"  --artifact DIR|ID  the directory `compile --out` wrote (uploaded if the\n"
	"                     server lacks it), or an artifact id (64 hex digits)\n"
	"  --model NAME[:V]   a model deployed on the server (`eulernpu deploy`): version\n"
	"                     V, or without it the newest version whose artifact is there\n"
	"  --input F          the input tensors (input.npz)\n"
	"  --out F            where to write the result (result.npz)\n"
	"  --report F         also write the run's report.json (for npu_sim: cycles,\n"
	"                     memory traffic per op; see `eulernpu report F`)\n"
	"  --timeout S        give up after S seconds (default 600); the server ends the\n"
	"                     job then too (its queue + run time, capped by --job-timeout)\n"
	"  --priority P       low, normal (default) or high: the server's queue runs\n"
	"                     higher priorities first (CI: low; people: high)\n"
	"  --detach           submit and print the job id alone on stdout, then exit 0\n"
	"                     without waiting (see `eulernpu jobs wait ID`)\n"
	"  --json             print the final job as JSON on stdout (one document)\n";

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void print_job(struct json_object *job)
{
	printf("%s\n", json_object_to_json_string_ext(job, JSON_C_TO_STRING_PRETTY |
						      JSON_C_TO_STRING_NOSLASHESCAPE));
}

static int job_id_ok(const char *s)
{
	return s && *s && strlen(s) < 100 &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == strlen(s);
}

/* "1 output tensor (1, 4)" from the job's outputs. */
static int describe_outputs(const enpu_wire_job *wj, char *out, size_t cap, enpu_err *e)
{
	char tuple[512];
	int n = wj->n_outputs;

	if (n == 0)
		return enpu_fail(e, ENPU_E_SERVER, API_JOBS, NULL, "the finished job lists no '%s'",
				 F_OUTPUTS);
	cli_tuple_str(wj->outputs[0].dim, wj->outputs[0].ndim, tuple, sizeof tuple);
	snprintf(out, cap, "%d output tensor%s %s", n, n == 1 ? "" : "s", tuple);
	return 0;
}

/* The options of one run. */
typedef struct run_opts {
	const char *art, *model, *input, *out, *report, *prio;
	double timeout;
	int detach, json;
} run_opts;

/* Options that parse but do not go together: 0, or -1 with *e. */
static int check_opts(const run_opts *o, enpu_err *e)
{
	const cli_path outs[2] = {{"--out", o->out}, {"--report", o->report}};
	const cli_path ins[2] = {{"--input", o->input}, {"--artifact", o->art}};

	if (o->art && o->model)
		return cli_usage(e, "run", "give --artifact or --model, not both");
	if ((!o->art && !o->model) || !o->input || (!o->out && !o->detach))
		return cli_usage(e, "run", "missing required option '%s'",
				 !o->art && !o->model ? "--artifact (or --model)" :
				 !o->input ? "--input" : "--out");
	if (o->detach && (o->out || o->report || o->json))
		return cli_usage(e, "run", "--detach does not wait: drop '%s' (use "
				 "`eulernpu jobs wait ID`, then the job's result)",
				 o->out ? "--out" : o->report ? "--report" : "--json");
	if (o->timeout <= 0)
		return cli_usage(e, "run", "option '--timeout' must be more than 0 s");
	if (cli_outputs_check("run", outs, 2, 0, ins, 2, e) < 0)
		return -1;
	if (o->prio && strcmp(o->prio, PRIO_LOW) && strcmp(o->prio, PRIO_NORMAL) &&
	    strcmp(o->prio, PRIO_HIGH))
		return cli_usage(e, "run", "option '--priority' must be low, normal or high, not "
				 "'%s'", o->prio);
	return 0;
}

/* The artifact's id on the server (a directory imported when the server
 * lacks it) and the input uploaded (its digest into din). */
static int prepare(cli_ctx *ctx, const run_opts *o, char id[65], char din[65], enpu_err *e)
{
	const char *pp[1] = {o->input}, *dp[1] = {din};

	if ((o->art && cli_artifact_check(o->art, e) < 0) ||
	    cli_sha256_file(o->input, din, e) < 0 || cli_connect(ctx, e) < 0 ||
	    (o->art && cli_artifact_use(ctx->conn, o->art, id, e) < 0))
		return -1;
	return cli_blobs_ensure(ctx->conn, 1, pp, dp, NULL, e);
}

/* POST /v1/jobs: the job as answered into *job, its id into jid. */
static int submit(cli_ctx *ctx, const run_opts *o, const char *id, const char *din,
		  struct json_object **job, char jid[100], enpu_err *e)
{
	struct json_object *req = json_object_new_object();
	char path[256];
	int rc = -1;

	if (o->model)   /* the server picks the version (the newest ready one) */
		json_object_object_add(req, F_MODEL, json_object_new_string(o->model));
	else
		json_object_object_add(req, F_ARTIFACT, json_object_new_string(id));
	json_object_object_add(req, F_INPUT, json_object_new_string(din));
	json_object_object_add(req, F_INPUT_NAME, json_object_new_string(strrchr(o->input, '/') ?
				strrchr(o->input, '/') + 1 : o->input));   /* a base name: no local paths */
	if (o->prio)
		json_object_object_add(req, F_PRIORITY, json_object_new_string(o->prio));
	/* the server ends the job by then too; it caps this by --job-timeout */
	json_object_object_add(req, F_TIMEOUT, json_object_new_int(
		o->timeout > 7 * 86400 ? 7 * 86400 : (int)ceil(o->timeout)));
	if (!o->detach)
		cli_progress_wait_begin(NULL);
	/* the id at once (wait_job long-polls): Ctrl-C can then cancel the job */
	snprintf(path, sizeof path, "%s?%s=0", API_JOBS, Q_WAIT);
	if (cli_http_json(ctx->conn, "POST", path, req, 30, job, NULL, NULL, e) < 0)
		goto out;
	if (!job_id_ok(cli_json_str(*job, F_ID))) {
		enpu_fail(e, ENPU_E_SERVER, API_JOBS, NULL, "the answer has no valid job '%s'", F_ID);
		goto out;
	}
	snprintf(jid, 100, "%s", cli_json_str(*job, F_ID));
	rc = 0;
out:
	json_object_put(req);
	return rc;
}

/* Long-poll job jid until it leaves the queue and the run (cancelling it
 * at the deadline); *job is its last state, read into *wj. A board job
 * waiting for a board says why on stderr, once, after a second. */
static int wait_job(cli_ctx *ctx, const run_opts *o, const char *jid, double deadline,
		    struct json_object **job, enpu_wire_job *wj, enpu_err *e)
{
	char path[256], why[160];
	double t_sub = now_s();
	int said_wait = 0, short_poll;

	for (;;) {
		double left;
		int wait;

		if (cli_interrupts)
			return enpu_fail(e, ENPU_E_JOB_FAILED, jid, NULL, "interrupted");
		cli_progress_wait_job(*job);
		if (enpu_wire_job_read(*job, wj, why, sizeof why) != 0)
			return enpu_fail(e, ENPU_E_SERVER, API_JOBS, NULL, "job '%s': %s", jid, why);
		if (strcmp(wj->state, JOB_QUEUED) != 0 && strcmp(wj->state, JOB_RUNNING) != 0)
			return 0;
		short_poll = wj->waiting[0] && !said_wait;
		if (short_poll && now_s() - t_sub >= 1) {
			fprintf(stderr, "%s: %s\n", jid, wj->waiting);
			said_wait = 1;
			short_poll = 0;
		}
		left = deadline - now_s();
		if (left <= 0) {
			snprintf(path, sizeof path, "%s/%s", API_JOBS, jid);
			cli_http_json(ctx->conn, "DELETE", path, NULL, 10, NULL, NULL, NULL, e);
			return enpu_fail(e, ENPU_E_JOB_FAILED, jid, "raise --timeout, or use a less "
					 "busy server", "the job did not finish within %g s and was "
					 "cancelled", o->timeout);
		}
		wait = left < POLL_WAIT ? (int)ceil(left) : POLL_WAIT;
		if (short_poll && wait > 1)
			wait = 1;
		snprintf(path, sizeof path, "%s/%s?%s=%d", API_JOBS, jid, Q_WAIT, wait);
		json_object_put(*job);
		*job = NULL;
		if (cli_http_json(ctx->conn, "GET", path, NULL, wait + 30, job, NULL, NULL, e) < 0)
			return -1;
	}
}

/* SIGINT: count it, nothing else (rest.h: the call in flight aborts). */
static void on_sigint(int sig)
{
	(void)sig;
	cli_interrupts++;
}

/* Ctrl-C from now on is counted rather than fatal (no SA_RESTART, so a
 * retry's sleep ends); with abort set it aborts the call in flight. */
static void catch_sigint(int abort)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sigint;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	cli_abort_at = abort;
}

/* The wait on job jid was interrupted: cancel the job unless a second
 * Ctrl-C comes within INT_GRACE s, then say what became of it. Exit 130. */
static int interrupted(cli_ctx *ctx, const char *jid)
{
	enpu_err e = ENPU_ERR_INIT;
	struct timespec slice = {0, 100 * 1000 * 1000};
	struct json_object *job = NULL;
	const char *st;
	char path[256];

	cli_progress_end();
	fprintf(stderr, "job %s: interrupted; cancelling it (Ctrl-C again within %d s to leave it "
		"running)\n", jid, INT_GRACE);
	for (int i = 0; i < INT_GRACE * 10 && cli_interrupts < 2; i++)
		nanosleep(&slice, NULL);
	cli_abort_at = 2;   /* a second Ctrl-C during the DELETE stops it too */
	snprintf(path, sizeof path, "%s/%s", API_JOBS, jid);
	if (cli_interrupts < 2 &&
	    cli_http_json(ctx->conn, "DELETE", path, NULL, 10, &job, NULL, NULL, &e) == 0) {
		/* a running job stops at its next op */
		st = cli_json_str(job, F_STATE);
		fprintf(stderr, "job %s: cancelled%s\n", jid, st && !strcmp(st, JOB_CANCELLED) ? "" :
			" (the server stops it at its next op)");
		json_object_put(job);
		return EXIT_INTERRUPTED;
	}
	if (cli_interrupts < 2) {
		cli_report(&e);
		fprintf(stderr, "job %s: not cancelled\n", jid);
		return EXIT_INTERRUPTED;
	}
	fprintf(stderr, "job %s: left running; follow it with `eulernpu jobs wait %s`\n", jid, jid);
	return EXIT_INTERRUPTED;
}

/* A job that ended: its error when it did not succeed, else the result
 * (and report) downloaded and the summary (or the job as JSON) printed. */
static int finish(cli_ctx *ctx, const run_opts *o, struct json_object *job,
		  const enpu_wire_job *wj, const char *jid, enpu_err *e)
{
	const char *state = wj->state;
	struct json_object *npu;
	char line[600], npuline[400];

	if (o->json && strcmp(state, JOB_SUCCEEDED) != 0)
		print_job(job);
	if (strcmp(state, JOB_FAILED) == 0 || strcmp(state, JOB_CANCELLED) == 0 ||
	    strcmp(state, JOB_TIMED_OUT) == 0) {
		if (!wj->error)
			return enpu_fail(e, ENPU_E_JOB_FAILED, jid, NULL,
					 "the job failed without saying why");
		cli_err_from_json(wj->error, e);
		return -1;
	}
	if (strcmp(state, JOB_SUCCEEDED) != 0)
		return enpu_fail(e, ENPU_E_JOB_FAILED, jid, NULL, "the job ended in state '%s'", state);
	if (describe_outputs(wj, line, sizeof line, e) < 0)
		return -1;
	if (cli_job_fetch(ctx->conn, jid, wj, o->out, o->report, e) < 0)
		return -1;
	if (o->json) {
		print_job(job);
	} else {
		printf("Run      OK: %s\n", line);
		if (json_object_object_get_ex(job, F_NPU, &npu) &&
		    cli_npu_summary(npu, npuline, sizeof npuline) == 0)
			printf("%s\n", npuline);
	}
	return 0;
}

int cmd_run(cli_ctx *ctx, int argc, char **argv)
{
	enpu_err e = ENPU_ERR_INIT;
	run_opts o = {.timeout = 600};
	const char *pos[1];
	static enpu_wire_job wj;   /* large; one run per process */
	const cli_opt opts[] = {
		{"--artifact", CLI_OPT_STR, &o.art},
		{"--model", CLI_OPT_STR, &o.model},
		{"--input", CLI_OPT_STR, &o.input},
		{"--out", CLI_OPT_STR, &o.out},
		{"--report", CLI_OPT_STR, &o.report},
		{"--timeout", CLI_OPT_DOUBLE, &o.timeout},
		{"--priority", CLI_OPT_STR, &o.prio},
		{"--detach", CLI_OPT_FLAG, &o.detach},
		{"--json", CLI_OPT_FLAG, &o.json},
		{NULL, 0, NULL},
	};
	struct json_object *job = NULL;
	char id[65], din[65], jid[100];
	double deadline;
	int n_pos, r;

	r = cli_parse_opts("run", argc, argv, opts, pos, 0, &n_pos, &e);
	if (r == 1) {
		fputs(usage, stdout);
		return 0;
	}
	if (r < 0 || check_opts(&o, &e) < 0)
		return cli_report(&e);
	deadline = now_s() + o.timeout;
	cli_progress_setup(o.json);
	if (prepare(ctx, &o, id, din, &e) < 0)
		goto fail;
	/* a Ctrl-C during the submit is heard once the job has an id */
	if (!o.detach)
		catch_sigint(0);
	if (submit(ctx, &o, id, din, &job, jid, &e) < 0) {
		if (!cli_interrupts)
			goto fail;
		cli_progress_end();
		cli_report(&e);   /* a Ctrl-C cut the retries short: no job */
		return EXIT_INTERRUPTED;
	}
	if (o.detach) {
		printf("%s\n", jid);
		json_object_put(job);
		return 0;
	}
	catch_sigint(1);
	if (wait_job(ctx, &o, jid, deadline, &job, &wj, &e) < 0) {
		if (cli_interrupts) {
			json_object_put(job);
			return interrupted(ctx, jid);
		}
		goto fail;
	}
	cli_abort_at = 0;
	signal(SIGINT, SIG_DFL);
	cli_progress_end();
	if (finish(ctx, &o, job, &wj, jid, &e) < 0)
		goto fail;
	json_object_put(job);
	return 0;
fail:
	cli_progress_end();
	json_object_put(job);
	return cli_report(&e);
}

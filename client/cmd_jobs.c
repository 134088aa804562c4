/* cmd_jobs.c: `eulernpu jobs ls|show|wait|cancel|result`: the server's jobs as an
 * aligned table (GET /v1/jobs, filtered), one job's fields, waiting for a
 * job to end (exit 0 when it succeeded, 1 otherwise: scripts and CI follow
 * a `run --detach` with it), cancelling one, and fetching a finished
 * one's result and report (as `run` does, through outputs.c). --json prints the
 * server's JSON as it is. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <json-c/json.h>
#include "api.h"
#include "wire.h"
#include "cli.h"
#include "progress.h"
#include "rest.h"

#define NCOL 7
#define POLL_WAIT 60     /* seconds per long-poll */

static const char usage[] =
	"usage: eulernpu jobs ls [--state S[,S...]] [--backend B] [--limit N] [--json]\n"
	"       eulernpu jobs show ID [--json]\n"
	"       eulernpu jobs wait ID [--timeout S] [--json]\n"
	"       eulernpu jobs cancel ID [--json]\n"
	"       eulernpu jobs result ID --out F [--report F]\n"
	"\n"
	"The server's jobs. States: queued, running, succeeded, failed, cancelled,\n"
	"timed_out.\n"
	"\n"
	"  ls       newest first: id, state, backend, priority, queue position and\n"
	"           ETA (queued jobs), created, run seconds (finished jobs)\n"
	"  show     one job's fields\n"
	"  wait     wait until the job ends: exit 0 when it succeeded, 1 when it\n"
	"           failed, was cancelled or timed out (its error on stderr), or\n"
	"           when --timeout S (default 600) passes first\n"
	"  cancel   cancel a queued or running job (a running one stops between\n"
	"           ops); a finished job cannot be cancelled (exit 2)\n"
	"  result   download a succeeded job's result (--out F) and report.json\n"
	"           (--report F), verified by digest as `run` writes them (a job\n"
	"           still queued or running: exit 2; a failed one: its error)\n"
	"\n"
	"  --state S     ls: only jobs in these states (comma-separated)\n"
	"  --backend B   ls: only jobs of this backend\n"
	"  --limit N     ls: at most N jobs (default 100)\n"
	"  --json        print the server's JSON (one document)\n";

static const char *const heads[NCOL] = {
	"ID", "STATE", "BACKEND", "PRIORITY", "POS/ETA", "CREATED", "SECONDS",
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void print_json(struct json_object *o)
{
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
						      JSON_C_TO_STRING_NOSLASHESCAPE));
}

static const char *str_or(struct json_object *o, const char *key, const char *dflt)
{
	const char *s = cli_json_str(o, key);
	return s ? s : dflt;
}

/* A number field as text ("-" when absent or null). */
static void num_str(struct json_object *o, const char *key, const char *fmt, char *out,
		    size_t cap)
{
	struct json_object *v;

	if (json_object_object_get_ex(o, key, &v) &&
	    (json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
		snprintf(out, cap, fmt, json_object_get_double(v));
	else
		snprintf(out, cap, "-");
}

/* One cell of the table (owned by the caller). */
static char *cell(struct json_object *jb, int col)
{
	char buf[128], eta[64];
	long long pos;

	switch (col) {
	case 0:
		return strdup(str_or(jb, F_ID, "?"));
	case 1:
		return strdup(str_or(jb, F_STATE, "?"));
	case 2:
		return strdup(str_or(jb, F_BACKEND, "?"));
	case 3:
		return strdup(str_or(jb, F_PRIORITY, "-"));
	case 4:
		if (cli_json_int(jb, F_POSITION, &pos) != 0)
			return strdup("-");
		num_str(jb, F_ETA, "~%.0fs", eta, sizeof eta);
		snprintf(buf, sizeof buf, "#%lld %s", pos, eta);
		return strdup(buf);
	case 5: {
		/* "2025-01-31T12:00:00.123Z" -> "2025-01-31 12:00:00" */
		const char *c = str_or(jb, F_CREATED, "-");
		snprintf(buf, sizeof buf, "%.19s", c);
		if (strlen(buf) > 10 && buf[10] == 'T')
			buf[10] = ' ';
		return strdup(buf);
	}
	default:
		num_str(jb, F_SECONDS, "%.3f", buf, sizeof buf);
		return strdup(buf);
	}
}

static int jobs_ls(cli_ctx *ctx, const char *state, const char *backend, double limit, int json,
		   enpu_err *e)
{
	struct json_object *res = NULL, *arr;
	char path[512], **cv = NULL;
	size_t w[NCOL], n = 0;
	int ret = -1;

	snprintf(path, sizeof path, "%s?%s=%d", API_JOBS, Q_LIMIT, (int)limit);
	if (state || backend) {
		/* the values go into a query: only names, no escaping needed */
		const char *vals[2] = {state, backend}, *keys[2] = {Q_STATE, Q_BACKEND};
		for (int k = 0; k < 2; k++) {
			size_t len = strlen(path);
			if (!vals[k])
				continue;
			if (strspn(vals[k], "abcdefghijklmnopqrstuvwxyz_,") != strlen(vals[k]))
				return cli_usage(e, "jobs", "'%s' is not a list of %s names", vals[k],
						 k ? "backend" : "state");
			snprintf(path + len, sizeof path - len, "&%s=%s", keys[k], vals[k]);
		}
	}
	if (cli_connect(ctx, e) < 0 ||
	    cli_http_json(ctx->conn, "GET", path, NULL, 30, &res, NULL, NULL, e) < 0)
		goto out;
	if (!json_object_object_get_ex(res, F_JOBS, &arr) ||
	    !json_object_is_type(arr, json_type_array)) {
		enpu_fail(e, ENPU_E_SERVER, API_JOBS, NULL, "the answer has no '%s' list", F_JOBS);
		goto out;
	}
	if (json) {
		print_json(res);
		ret = 0;
		goto out;
	}
	n = json_object_array_length(arr);
	if (n == 0) {
		printf("no jobs\n");
		ret = 0;
		goto out;
	}
	cv = calloc(n * NCOL, sizeof *cv);
	if (!cv) {
		enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
		goto out;
	}
	for (int c = 0; c < NCOL; c++)
		w[c] = strlen(heads[c]);
	for (size_t i = 0; i < n; i++)
		for (int c = 0; c < NCOL; c++) {
			cv[i * NCOL + c] = cell(json_object_array_get_idx(arr, i), c);
			if (!cv[i * NCOL + c]) {
				enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
				goto out;
			}
			if (cli_text_width(cv[i * NCOL + c]) > w[c])
				w[c] = cli_text_width(cv[i * NCOL + c]);
		}
	for (int c = 0; c < NCOL; c++)
		printf(c < NCOL - 1 ? "%-*s  " : "%*s\n", (int)w[c], heads[c]);
	for (size_t i = 0; i < n; i++)
		for (int c = 0; c < NCOL; c++) {
			const char *s = cv[i * NCOL + c];
			if (c == NCOL - 1)   /* seconds: right-aligned */
				printf("%*s%s\n", (int)(w[c] - cli_text_width(s)), "", s);
			else
				printf("%s%*s  ", s, (int)(w[c] - cli_text_width(s)), "");
		}
	ret = 0;
out:
	if (cv)
		for (size_t i = 0; i < n * NCOL; i++)
			free(cv[i]);
	free(cv);
	json_object_put(res);
	return ret;
}

static int id_ok(const char *s)
{
	return s && *s && strlen(s) < 64 &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == strlen(s);
}

/* The job's fields, one per line: scalars as they are, the error's code
 * and message. */
static void show_text(struct json_object *jb)
{
	static const char *const keys[] = {
		F_ID, F_STATE, F_BACKEND, F_PRIORITY, F_POSITION, F_ETA, F_TIMEOUT, F_ARTIFACT,
		F_INPUT, F_CREATED, F_STARTED, F_FINISHED, F_SECONDS, F_RESULT, F_REPORT,
		F_BOARD, F_ATTEMPTS, F_FAILURE,
	};
	struct json_object *v, *er;

	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		if (!json_object_object_get_ex(jb, keys[i], &v))
			continue;
		printf("%-9s %s\n", keys[i], v ? json_object_get_string(v) : "-");
	}
	if (json_object_object_get_ex(jb, F_ERROR, &er) && json_object_is_type(er, json_type_object))
		printf("%-9s %s: %s\n", F_ERROR, str_or(er, "code", "?"), str_or(er, "message", "?"));
}

static int final_state(const char *s)
{
	return s && strcmp(s, JOB_QUEUED) != 0 && strcmp(s, JOB_RUNNING) != 0;
}

/* `jobs show ID` (GET) or `jobs cancel ID` (DELETE): 0, or -1 with e. */
static int jobs_one(cli_ctx *ctx, const char *method, const char *id, int json, enpu_err *e)
{
	struct json_object *jb = NULL;
	char path[256];

	snprintf(path, sizeof path, "%s/%s", API_JOBS, id);
	if (cli_http_json(ctx->conn, method, path, NULL, 30, &jb, NULL, NULL, e) < 0) {
		json_object_put(jb);
		return -1;
	}
	if (json)
		print_json(jb);
	else if (strcmp(method, "GET") == 0)
		show_text(jb);
	else
		printf("%s %s\n", id, final_state(cli_json_str(jb, F_STATE))
		       ? str_or(jb, F_STATE, "?") : "cancelling (stops at its next op)");
	json_object_put(jb);
	return 0;
}

/* Look at the job until it ends or the deadline passes; *jb gets its last
 * JSON. Its state (in *jb), or NULL with e. */
static const char *wait_poll(cli_ctx *ctx, const char *id, double deadline,
			     struct json_object **jb, enpu_wire_job *wj, enpu_err *e)
{
	char path[256], why[160];

	/* at a terminal, the first look is at once (the status line has a
	 * state and queue position to show), then long-polls */
	for (int quick = cli_progress_waiting();; quick = 0) {
		double left = deadline - now_s();
		int w = quick || left <= 0 ? 0 : left < POLL_WAIT ? (int)ceil(left) : POLL_WAIT;

		snprintf(path, sizeof path, "%s/%s?%s=%d", API_JOBS, id, Q_WAIT, w);
		json_object_put(*jb);
		*jb = NULL;
		if (cli_http_json(ctx->conn, "GET", path, NULL, w + 30, jb, NULL, NULL, e) < 0)
			return NULL;
		if (enpu_wire_job_read(*jb, wj, why, sizeof why) != 0) {
			enpu_fail(e, ENPU_E_SERVER, API_JOBS, NULL, "job '%s': %s", id, why);
			return NULL;
		}
		if (final_state(wj->state) || (w == 0 && !quick))
			return wj->state;
		cli_progress_wait_job(*jb);
	}
}

/* `jobs wait ID`: 0 the job succeeded, 1 it did not (its error reported
 * here), -1 with e (also when timeout passed first). */
static int jobs_wait(cli_ctx *ctx, const char *id, double timeout, int json, enpu_err *e)
{
	double deadline = now_s() + timeout;
	static enpu_wire_job wj;   /* large; one wait per process */
	struct json_object *jb = NULL;
	const char *st;
	int ret = -1;

	cli_progress_setup(json);
	cli_progress_wait_begin(id);
	if (!(st = wait_poll(ctx, id, deadline, &jb, &wj, e)))
		goto out;
	cli_progress_end();
	if (json)
		print_json(jb);
	if (!final_state(st)) {
		enpu_fail(e, ENPU_E_JOB_TIMEOUT, id, "wait longer (--timeout), or cancel it: "
			  "eulernpu jobs cancel ID", "job '%s' is still %s after %g s", id, st,
			  timeout);
		goto out;
	}
	if (strcmp(st, JOB_SUCCEEDED) != 0) {
		if (wj.error)
			cli_err_from_json(wj.error, e);
		else
			enpu_fail(e, ENPU_E_JOB_FAILED, id, NULL, "the job ended %s", st);
		cli_report(e);
		ret = 1;       /* whatever the code: the job did not succeed */
		goto out;
	}
	if (!json)
		printf("%s succeeded in %s s\n", id, json_object_get_string(
			json_object_object_get(jb, F_SECONDS)));
	ret = 0;
out:
	json_object_put(jb);
	return ret;
}

/* `jobs result ID --out F [--report F]`: a finished job's result (and
 * report), verified by digest as `run` does. 0, or -1 with e: the job is
 * not finished (its state), failed (its error), or unknown (the 404). */
static int jobs_result(cli_ctx *ctx, const char *id, const char *out, const char *report,
		       enpu_err *e)
{
	static enpu_wire_job wj;   /* large; one per process */
	struct json_object *jb = NULL;
	char path[256], why[160];
	int ret = -1;

	snprintf(path, sizeof path, "%s/%s", API_JOBS, id);
	if (cli_http_json(ctx->conn, "GET", path, NULL, 30, &jb, NULL, NULL, e) < 0)
		goto out;
	if (enpu_wire_job_read(jb, &wj, why, sizeof why) != 0) {
		enpu_fail(e, ENPU_E_SERVER, API_JOBS, NULL, "job '%s': %s", id, why);
		goto out;
	}
	if (!final_state(wj.state)) {
		enpu_fail(e, ENPU_E_CONFLICT, id, "wait for it: eulernpu jobs wait ID",
			  "job '%s' is %s: it has no result yet", id, wj.state);
		goto out;
	}
	if (strcmp(wj.state, JOB_SUCCEEDED) != 0) {
		if (wj.error)
			cli_err_from_json(wj.error, e);
		else
			enpu_fail(e, ENPU_E_JOB_FAILED, id, NULL, "the job ended %s", wj.state);
		goto out;
	}
	ret = cli_job_fetch(ctx->conn, id, &wj, out, report, e);
	if (ret == 0)
		printf("%s: result written to %s%s%s\n", id, out, report ? ", report to " : "",
		       report ? report : "");
out:
	json_object_put(jb);
	return ret;
}

/* `jobs result`'s checks (--out required, no clash), then the download.
 * The exit status. */
static int cmd_jobs_result(cli_ctx *ctx, const char *id, const char *out, const char *report,
			   int json, enpu_err *e)
{
	const cli_path outs[2] = {{"--out", out}, {"--report", report}};

	if (!out)
		return cli_report((cli_usage(e, "jobs", "`jobs result` needs --out F"), e));
	if (json)
		return cli_report((cli_usage(e, "jobs", "`jobs result` has no --json: use "
					     "`jobs show ID --json`"), e));
	if (cli_outputs_check("jobs", outs, 2, 0, NULL, 0, e) < 0 || cli_connect(ctx, e) < 0 ||
	    jobs_result(ctx, id, out, report, e) < 0)
		return cli_report(e);
	return 0;
}

/* `jobs ls`: its checks, then the table. The exit status. */
static int cmd_jobs_ls(cli_ctx *ctx, const char **pos, int n_pos, const char *state,
		       const char *backend, double limit, int json, enpu_err *e)
{
	if (n_pos > 1)
		return cli_report((cli_usage(e, "jobs", "unexpected argument '%s'", pos[1]), e));
	if (limit < 1 || limit > 10000 || limit != floor(limit))
		return cli_report((cli_usage(e, "jobs", "option '--limit' must be a whole number "
					     "in [1, 10000]"), e));
	return jobs_ls(ctx, state, backend, limit, json, e) < 0 ? cli_report(e) : 0;
}

int cmd_jobs(cli_ctx *ctx, int argc, char **argv)
{
	enpu_err e = ENPU_ERR_INIT;
	const char *pos[2], *state = NULL, *backend = NULL, *sub, *id = NULL;
	const char *out = NULL, *report = NULL;
	double limit = 100, timeout = 600;
	int json = 0, n_pos, r;
	const cli_opt opts[] = {
		{"--state", CLI_OPT_STR, &state},
		{"--backend", CLI_OPT_STR, &backend},
		{"--limit", CLI_OPT_DOUBLE, &limit},
		{"--timeout", CLI_OPT_DOUBLE, &timeout},
		{"--json", CLI_OPT_FLAG, &json},
		{"--out", CLI_OPT_STR, &out},
		{"--report", CLI_OPT_STR, &report},
		{NULL, 0, NULL},
	};

	r = cli_parse_opts("jobs", argc, argv, opts, pos, 2, &n_pos, &e);
	if (r == 1) {
		fputs(usage, stdout);
		return 0;
	}
	if (r < 0)
		return cli_report(&e);
	if (n_pos < 1)
		return cli_report((cli_usage(&e, "jobs", "no subcommand given (ls, show, wait, cancel, result)"), &e));
	sub = pos[0];
	if (strcmp(sub, "ls") == 0)
		return cmd_jobs_ls(ctx, pos, n_pos, state, backend, limit, json, &e);
	if (strcmp(sub, "show") && strcmp(sub, "wait") && strcmp(sub, "cancel") &&
	    strcmp(sub, "result"))
		return cli_report((cli_usage(&e, "jobs", "unknown subcommand '%s' (ls, show, wait, "
					     "cancel, result)", sub), &e));
	if ((out || report) && strcmp(sub, "result") != 0)
		return cli_report((cli_usage(&e, "jobs", "--out and --report go with "
					     "`jobs result`"), &e));
	if (state || backend || limit != 100)
		return cli_report((cli_usage(&e, "jobs", "--state, --backend and --limit go with "
					     "`jobs ls`"), &e));
	if (n_pos < 2 || !id_ok(pos[1]))
		return cli_report((cli_usage(&e, "jobs", n_pos < 2 ? "`jobs %s` needs a job id" :
					     "`jobs %s`: '%s' is not a job id", sub,
					     n_pos < 2 ? "" : pos[1]), &e));
	id = pos[1];
	if (timeout <= 0)
		return cli_report((cli_usage(&e, "jobs", "option '--timeout' must be more than 0 s"), &e));
	if (strcmp(sub, "result") == 0)
		return cmd_jobs_result(ctx, id, out, report, json, &e);
	if (cli_connect(ctx, &e) < 0)
		r = -1;
	else if (strcmp(sub, "wait") != 0)
		r = jobs_one(ctx, strcmp(sub, "show") == 0 ? "GET" : "DELETE", id, json, &e);
	else
		r = jobs_wait(ctx, id, timeout, json, &e);
	if (r >= 0)
		return r;
	cli_progress_end();
	return cli_report(&e);
}

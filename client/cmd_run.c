/* cmd_run.c: `eulernpu run --artifact DIR|ID --input F --out F`: make sure
 * the server has the artifact (importing a local directory when it does
 * not), submit a job, long-poll it to the end, and download the result (and
 * with --report the run's report.json). An npu_sim run adds one line with
 * the cycle model's totals. --detach submits and prints the job id alone
 * (`eulernpu jobs wait ID` follows it); --json prints the final job. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <json-c/json.h>
#include "api.h"
#include "buf.h"
#include "cli.h"
#include "digest.h"
#include "progress.h"
#include "rest.h"
#include "wire.h"

#define MANIFEST "manifest.json"
#define MANIFEST_MAX (16u << 20)
#define POLL_WAIT 60     /* seconds per long-poll */

static const char usage[] =
	"usage: eulernpu run --artifact DIR|ID --input F --out F [--report F] [--timeout S]\n"
	"                    [--priority low|normal|high] [--json]\n"
	"       eulernpu run --artifact DIR|ID --input F --detach [--priority P] [--timeout S]\n"
	"\n"
	"Run a compiled artifact on an input and write the result (.npz).\n"
	"\n"
	"  --artifact DIR|ID  the directory `compile --out` wrote (uploaded if the\n"
	"                     server lacks it), or an artifact id (64 hex digits)\n"
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

/* PUT /v1/artifacts/{id} with the manifest; the server answers 409 (with
 * the digests it lacks) when a file is missing. */
static int put_manifest(cli_conn *c, const char *id, const enpu_buf *man, long *status,
			enpu_err *e)
{
	enpu_buf resp = ENPU_BUF_INIT;
	char path[160];
	cli_req r = {0};
	int ret = -1;

	snprintf(path, sizeof path, "%s%s", API_ARTIFACTS, id);
	r.method = "PUT";
	r.path = path;
	r.body = man->data;
	r.body_len = man->len;
	if (cli_http_do(c, &r, status, &resp, e) < 0)
		goto out;
	if (*status >= 200 && *status < 300)
		ret = 0;
	else
		cli_http_fail(c, *status, &resp, e);
out:
	enpu_buf_free(&resp);
	return ret;
}

/* Use the artifact in dir: read its manifest, and if the server does not
 * know the id, upload the files it lacks (each checked against the
 * manifest first) and import the manifest. */
static int use_artifact_dir(cli_conn *c, const char *dir, char id[65], enpu_err *e)
{
	enpu_buf man = ENPU_BUF_INIT;
	struct json_object *m = NULL, *files, *res = NULL;
	char mpath[PATH_MAX], path[160], mdigest[65];
	char **paths = NULL, (*digs)[65] = NULL;
	const char **pp = NULL, **dp = NULL;
	const char *mid;
	size_t n = 0;
	long status = 0;
	int ret = -1;

	if ((size_t)snprintf(mpath, sizeof mpath, "%s/%s", dir, MANIFEST) >= sizeof mpath)
		return enpu_fail(e, ENPU_E_IO, dir, NULL, "artifact directory path too long");
	if (enpu_read_file(mpath, MANIFEST_MAX, &man, e) < 0)
		goto out;
	m = man.data ? json_tokener_parse(man.data) : NULL;
	mid = cli_json_str(m, F_ID);
	if (!m || !mid || !enpu_is_sha256_hex(mid) ||
	    !json_object_object_get_ex(m, F_FILES, &files) ||
	    !json_object_is_type(files, json_type_array)) {
		enpu_fail(e, ENPU_E_ARTIFACT, mpath, "compile the artifact again",
			  "not an artifact manifest (no valid '%s' and '%s')", F_ID, F_FILES);
		goto out;
	}
	snprintf(id, 65, "%s", mid);

	snprintf(path, sizeof path, "%s%s", API_ARTIFACTS, id);
	if (cli_http_json(c, "GET", path, NULL, 0, &res, &status, NULL, e) == 0) {
		ret = 0;
		goto out;
	}
	if (status != 404)
		goto out;

	n = json_object_array_length(files);
	paths = calloc(n + 1, sizeof *paths);
	digs = calloc(n + 1, sizeof *digs);
	pp = calloc(n + 1, sizeof *pp);
	dp = calloc(n + 1, sizeof *dp);
	if (!paths || !digs || !pp || !dp) {
		enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		struct json_object *f = json_object_array_get_idx(files, i);
		const char *p = cli_json_str(f, F_PATH), *sha = cli_json_str(f, F_SHA256);
		size_t len;

		if (!p || !cli_path_is_safe(p) || !sha || !enpu_is_sha256_hex(sha)) {
			enpu_fail(e, ENPU_E_ARTIFACT, mpath, "compile the artifact again",
				  "file entry %zu has an unsafe path or a malformed digest", i);
			goto out;
		}
		len = strlen(dir) + strlen(p) + 2;
		paths[i] = malloc(len);
		if (!paths[i]) {
			enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
			goto out;
		}
		snprintf(paths[i], len, "%s/%s", dir, p);
		if (enpu_sha256_file(paths[i], digs[i], e) < 0)
			goto out;
		if (strcmp(digs[i], sha) != 0) {
			enpu_fail(e, ENPU_E_ARTIFACT_DIGEST, paths[i], "compile the artifact again",
				  "'%s' does not match the manifest's digest", p);
			goto out;
		}
		pp[i] = paths[i];
		dp[i] = digs[i];
	}
	enpu_sha256_hex(man.data, man.len, mdigest);
	pp[n] = mpath;
	dp[n] = mdigest;
	if (cli_blobs_ensure(c, (int)n + 1, pp, dp, NULL, e) < 0)
		goto out;
	if (put_manifest(c, id, &man, &status, e) == 0) {
		ret = 0;
		goto out;
	}
	/* 409: a blob went missing between our question and the import (an
	 * eviction); ask again, upload, and retry once. */
	if (status != 409)
		goto out;
	if (cli_blobs_ensure(c, (int)n + 1, pp, dp, NULL, e) < 0)
		goto out;
	ret = put_manifest(c, id, &man, &status, e);
out:
	if (paths)
		for (size_t i = 0; i < n; i++)
			free(paths[i]);
	free(paths);
	free(digs);
	free(pp);
	free(dp);
	json_object_put(m);
	json_object_put(res);
	enpu_buf_free(&man);
	return ret;
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

int cmd_run(cli_ctx *ctx, int argc, char **argv)
{
	enpu_err e = ENPU_ERR_INIT;
	const char *art = NULL, *input = NULL, *out = NULL, *report = NULL, *pos[1];
	const char *prio = NULL;
	double timeout = 600;
	int detach = 0, json = 0;
	const cli_opt opts[] = {
		{"--artifact", CLI_OPT_STR, &art},
		{"--input", CLI_OPT_STR, &input},
		{"--out", CLI_OPT_STR, &out},
		{"--report", CLI_OPT_STR, &report},
		{"--timeout", CLI_OPT_DOUBLE, &timeout},
		{"--priority", CLI_OPT_STR, &prio},
		{"--detach", CLI_OPT_FLAG, &detach},
		{"--json", CLI_OPT_FLAG, &json},
		{NULL, 0, NULL},
	};
	struct json_object *req = NULL, *job = NULL, *npu;
	char id[65], din[65], path[256], line[600], jid[100], npuline[400];
	const char *state, *rd, *rep;
	static enpu_wire_job wj;
	char why[160];
	double deadline, t_sub = now_s();
	int said_wait = 0, short_poll;
	struct stat st;
	int n_pos, r, wait;

	r = cli_parse_opts("run", argc, argv, opts, pos, 0, &n_pos, &e);
	if (r == 1) {
		fputs(usage, stdout);
		return 0;
	}
	if (r < 0)
		return cli_report(&e);
	if (!art || !input || (!out && !detach))
		return cli_report((cli_usage(&e, "run", "missing required option '%s'",
					     !art ? "--artifact" : !input ? "--input" : "--out"), &e));
	if (detach && (out || report || json))
		return cli_report((cli_usage(&e, "run", "--detach does not wait: drop '%s' (use "
					     "`eulernpu jobs wait ID`, then the job's result)",
					     out ? "--out" : report ? "--report" : "--json"), &e));
	if (timeout <= 0)
		return cli_report((cli_usage(&e, "run", "option '--timeout' must be more than 0 s"), &e));
	if (prio && strcmp(prio, PRIO_LOW) && strcmp(prio, PRIO_NORMAL) && strcmp(prio, PRIO_HIGH))
		return cli_report((cli_usage(&e, "run", "option '--priority' must be low, normal or "
					     "high, not '%s'", prio), &e));
	deadline = now_s() + timeout;
	cli_progress_setup(json);

	if (stat(art, &st) < 0 && !enpu_is_sha256_hex(art)) {
		enpu_fail(&e, ENPU_E_IO, art, "give the directory that `eulernpu compile --out` wrote",
			  "no such artifact directory, and not an artifact id: %s", strerror(errno));
		goto fail;
	}
	if (enpu_sha256_file(input, din, &e) < 0)
		goto fail;
	if (cli_connect(ctx, &e) < 0)
		goto fail;
	if (stat(art, &st) == 0 && S_ISDIR(st.st_mode)) {
		if (use_artifact_dir(ctx->conn, art, id, &e) < 0)
			goto fail;
	} else if (enpu_is_sha256_hex(art)) {
		snprintf(id, sizeof id, "%s", art);
	} else {
		enpu_fail(&e, ENPU_E_IO, art, "give the directory that `eulernpu compile --out` wrote",
			  "not an artifact directory");
		goto fail;
	}
	{
		const char *pp[1] = {input}, *dp[1] = {din};

		if (cli_blobs_ensure(ctx->conn, 1, pp, dp, NULL, &e) < 0)
			goto fail;
	}

	req = json_object_new_object();
	json_object_object_add(req, F_ARTIFACT, json_object_new_string(id));
	json_object_object_add(req, F_INPUT, json_object_new_string(din));
	json_object_object_add(req, F_INPUT_NAME, json_object_new_string(input));
	if (prio)
		json_object_object_add(req, F_PRIORITY, json_object_new_string(prio));
	/* the server ends the job by then too; it caps this by --job-timeout */
	json_object_object_add(req, F_TIMEOUT, json_object_new_int(
		timeout > 7 * 86400 ? 7 * 86400 : (int)ceil(timeout)));
	if (!detach)
		cli_progress_wait_begin(NULL);
	/* at a terminal, learn the queue position at once rather than wait */
	wait = detach || cli_progress_waiting() ? 0 : timeout < POLL_WAIT ? (int)ceil(timeout)
									  : POLL_WAIT;
	snprintf(path, sizeof path, "%s?%s=%d", API_JOBS, Q_WAIT, wait);
	if (cli_http_json(ctx->conn, "POST", path, req, wait + 30, &job, NULL, NULL, &e) < 0)
		goto fail;
	if (!job_id_ok(cli_json_str(job, F_ID))) {
		enpu_fail(&e, ENPU_E_SERVER, API_JOBS, NULL, "the answer has no valid job '%s'", F_ID);
		goto fail;
	}
	snprintf(jid, sizeof jid, "%s", cli_json_str(job, F_ID));
	if (detach) {
		printf("%s\n", jid);
		json_object_put(req);
		json_object_put(job);
		return 0;
	}

	for (;;) {
		double left;

		cli_progress_wait_job(job);
		if (enpu_wire_job_read(job, &wj, why, sizeof why) != 0) {
			enpu_fail(&e, ENPU_E_SERVER, API_JOBS, NULL, "job '%s': %s", jid, why);
			goto fail;
		}
		state = wj.state;
		if (strcmp(state, JOB_QUEUED) != 0 && strcmp(state, JOB_RUNNING) != 0)
			break;
		/* a board job waiting for a board says why, once, after a second */
		short_poll = wj.waiting[0] && !said_wait;
		if (short_poll && now_s() - t_sub >= 1) {
			fprintf(stderr, "%s: %s\n", jid, wj.waiting);
			said_wait = 1;
			short_poll = 0;
		}
		left = deadline - now_s();
		if (left <= 0) {
			snprintf(path, sizeof path, "%s/%s", API_JOBS, jid);
			cli_http_json(ctx->conn, "DELETE", path, NULL, 10, NULL, NULL, NULL, &e);
			enpu_fail(&e, ENPU_E_JOB_FAILED, jid, "raise --timeout, or use a less busy server",
				  "the job did not finish within %g s and was cancelled", timeout);
			goto fail;
		}
		wait = left < POLL_WAIT ? (int)ceil(left) : POLL_WAIT;
		if (short_poll && wait > 1)
			wait = 1;
		snprintf(path, sizeof path, "%s/%s?%s=%d", API_JOBS, jid, Q_WAIT, wait);
		json_object_put(job);
		if (cli_http_json(ctx->conn, "GET", path, NULL, wait + 30, &job, NULL, NULL, &e) < 0)
			goto fail;
	}
	cli_progress_end();
	if (json && strcmp(state, JOB_SUCCEEDED) != 0)
		print_job(job);
	if (strcmp(state, JOB_FAILED) == 0 || strcmp(state, JOB_CANCELLED) == 0 ||
	    strcmp(state, JOB_TIMED_OUT) == 0) {
		if (wj.error)
			cli_err_from_json(wj.error, &e);
		else
			enpu_fail(&e, ENPU_E_JOB_FAILED, jid, NULL, "the job failed without saying why");
		goto fail;
	}
	if (strcmp(state, JOB_SUCCEEDED) != 0) {
		enpu_fail(&e, ENPU_E_JOB_FAILED, jid, NULL, "the job ended in state '%s'", state);
		goto fail;
	}
	if (describe_outputs(&wj, line, sizeof line, &e) < 0)
		goto fail;
	rd = wj.result;
	snprintf(path, sizeof path, "%s/%s%s", API_JOBS, jid, API_JOB_RESULT);
	if (cli_http_download(ctx->conn, path, out, rd && enpu_is_sha256_hex(rd) ? rd : NULL, 0, &e) < 0)
		goto fail;
	if (report) {
		rep = wj.report;
		if (!enpu_is_sha256_hex(rep)) {
			enpu_fail(&e, ENPU_E_SERVER, jid, "upgrade the server, or run without --report",
				  "job '%s' has no '%s' digest", jid, F_REPORT);
			goto fail;
		}
		snprintf(path, sizeof path, "%s/%s%s", API_JOBS, jid, API_JOB_REPORT);
		if (cli_http_download(ctx->conn, path, report, rep, 0, &e) < 0)
			goto fail;
	}
	if (json) {
		print_job(job);
	} else {
		printf("Run      OK: %s\n", line);
		if (json_object_object_get_ex(job, F_NPU, &npu) &&
		    cli_npu_summary(npu, npuline, sizeof npuline) == 0)
			printf("%s\n", npuline);
	}
	json_object_put(req);
	json_object_put(job);
	return 0;
fail:
	cli_progress_end();
	json_object_put(req);
	json_object_put(job);
	return cli_report(&e);
}

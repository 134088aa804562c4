/* cmd_report.c: `eulernpu report FILE|JOBID`: print an npu_sim run's per-op
 * table, memory-bound ops first, then widest cost first, from a report.json on disk (`run --report`) or
 * from the server (GET /v1/jobs/{id}/report) when the argument names no
 * file. The rendering is report.c's; --json prints the report.json itself
 * (after the same check that it is one). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <json-c/json.h>
#include "api.h"
#include "buf.h"
#include "cli.h"
#include "rest.h"

#define REPORT_MAX (64u << 20)     /* a report of a very large graph still fits */

static const char usage[] =
	"usage: eulernpu report FILE|JOBID [--json]\n"
	"\n"
	"Print where an npu_sim run spends its cycles and its memory traffic:\n"
	"one row per op, the memory-bound ones (with stall cycles) first, most\n"
	"stall first, then the others, the most expensive (compute + stall\n"
	"cycles) first, then the totals. FILE is a report.json written by\n"
	"`eulernpu run --report FILE`; an argument that names no file is taken\n"
	"as a job id and its report is fetched from the server.\n"
	"\n"
	"columns: op, lowering (gemm on the array, vector unit, free, move),\n"
	"shape (M\xc3\x97N\xc3\x97K of the GEMM, with (\xc3\x97G) for G groups, or the element\n"
	"count), folds, compute cycles, stall cycles (DRAM not hidden behind\n"
	"compute), array utilisation, SRAM words read + written, DRAM bytes read +\n"
	"written; with a target's dram_bytes_per_cycle also the roofline: MAC/B\n"
	"(MACs per DRAM byte), needs B/c (the bandwidth at which the op stops\n"
	"stalling: DRAM bytes / compute cycles) and bound (memory or compute).\n"
	"\n"
	"  --json   print the whole report.json as one JSON document instead\n";

static int job_id_ok(const char *s)
{
	return *s && strlen(s) < 100 &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == strlen(s);
}

/* GET /v1/jobs/{id}/report into b. */
static int fetch(cli_ctx *ctx, const char *id, enpu_buf *b, enpu_err *e)
{
	char path[256];
	cli_req r = {0};
	long status = 0;

	if (cli_connect(ctx, e) < 0)
		return -1;
	snprintf(path, sizeof path, "%s/%s%s", API_JOBS, id, API_JOB_REPORT);
	r.method = "GET";
	r.path = path;
	r.timeout = 60;
	if (cli_http_do(ctx->conn, &r, &status, b, e) < 0)
		return -1;
	if (status < 200 || status >= 300)
		return cli_http_fail(ctx->conn, status, b, e);
	return 0;
}

int cmd_report(cli_ctx *ctx, int argc, char **argv)
{
	enpu_err e = ENPU_ERR_INIT;
	int json = 0;
	const cli_opt opts[] = {
		{"--json", CLI_OPT_FLAG, &json},
		{NULL, 0, NULL},
	};
	const char *pos[1], *arg;
	enpu_buf raw = ENPU_BUF_INIT, out = ENPU_BUF_INIT;
	struct json_object *rep = NULL;
	struct json_tokener *tok = NULL;
	struct stat st;
	int n_pos, r;

	r = cli_parse_opts("report", argc, argv, opts, pos, 1, &n_pos, &e);
	if (r == 1) {
		fputs(usage, stdout);
		return 0;
	}
	if (r < 0)
		return cli_report(&e);
	if (n_pos != 1)
		return cli_report((cli_usage(&e, "report", "give a report file or a job id: report FILE|JOBID"), &e));
	arg = pos[0];

	if (stat(arg, &st) == 0) {
		if (enpu_read_file(arg, REPORT_MAX, &raw, &e) < 0)
			goto fail;
	} else if (errno == ENOENT && job_id_ok(arg) && !strchr(arg, '.')) {
		if (fetch(ctx, arg, &raw, &e) < 0)
			goto fail;
	} else {
		enpu_fail(&e, ENPU_E_IO, arg, "give the file `eulernpu run --report FILE` wrote, or a job id",
			  "no such report file, and not a job id: %s", strerror(errno));
		goto fail;
	}
	/* Parse with a depth cap like the server's: a hostile file is an error,
	 * never a deep recursion. */
	tok = json_tokener_new_ex(64);
	if (!tok) {
		enpu_fail(&e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
		goto fail;
	}
	if (raw.data && raw.len == strlen(raw.data))
		rep = json_tokener_parse_ex(tok, raw.data, (int)raw.len + 1);
	if (!rep || !json_object_is_type(rep, json_type_object)) {
		enpu_fail(&e, ENPU_E_USAGE, arg,
			  "give the report.json of `eulernpu run --report FILE`, or a job id",
			  "'%s' is not an eulernpu report (not a JSON object)", arg);
		goto fail;
	}
	if (cli_report_render(rep, arg, &out, &e) < 0)
		goto fail;
	if (json)
		cli_print_json(rep);
	else
		fwrite(out.data, 1, out.len, stdout);
	json_tokener_free(tok);
	json_object_put(rep);
	enpu_buf_free(&raw);
	enpu_buf_free(&out);
	return 0;
fail:
	if (tok)
		json_tokener_free(tok);
	json_object_put(rep);
	enpu_buf_free(&raw);
	enpu_buf_free(&out);
	return cli_report(&e);
}

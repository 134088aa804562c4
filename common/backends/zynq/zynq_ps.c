/* zynq_ps: the ARM cores of a Zynq board (docs/boards.md). Every op
 * is its reference kernel, run by a board agent; the target names the CPU
 * (informational in v1), recorded in plan.json's and report.json's "zynq"
 * section. The board target parser (board_target.c) is shared with
 * fpga_board. */
#include <stdio.h>
#include <json-c/json.h>
#include "backend.h"
#include "board_target.h"
#include "enpu.h"
#include "json.h"

static const char *zynq_lowering(const enpu_graph *g, const void *st, int k, char *kernel,
				 size_t cap)
{
	(void)st;
	snprintf(kernel, cap, "zynq_ps.%s", g->ops[k].def->kernel_name);
	return "ps";
}

/* plan.json's and report.json's "zynq": {"cpu"} */
static struct json_object *zynq_section(const enpu_graph *g, const void *o, const void *st)
{
	json_object *z = json_object_new_object();
	int bad = 0;

	(void)g;
	(void)st;
	enpu_json_put(z, "cpu", json_object_new_string(enpu_board_cpu_name(
					((const enpu_board_target *)o)->cpu)), &bad);
	if (bad) {
		json_object_put(z);
		return NULL;
	}
	return z;
}

static int zynq_check_plan(const enpu_graph *g, const void *o, const void *st,
			   struct json_object *sec, const char *label, enpu_err *e)
{
	json_object *want = zynq_section(g, o, st);
	int same = want && sec && json_object_equal(want, sec);

	json_object_put(want);
	if (!same)
		return enpu_fail(e, ENPU_E_ARTIFACT, label, "recompile the artifact",
				 "the 'zynq' section of plan.json is not the manifest's target");
	return 0;
}

static void zynq_counts(const enpu_graph *g, const void *st, int *pl_ops, int *ps_ops,
			int *pl_segments)
{
	(void)st;
	*pl_ops = *pl_segments = 0;
	*ps_ops = g->n_ops;
}

static struct json_object *zynq_report(const enpu_graph *g, const void *o, const void *st,
				       void *run)
{
	(void)run;
	return zynq_section(g, o, st);
}

static void zynq_run_info(const enpu_graph *g, const void *o, const void *st, void *run,
			  enpu_run_info *ri)
{
	(void)o;
	(void)st;
	(void)run;
	ri->ps_ops = g->n_ops;
}

const enpu_backend_def enpu_bk_zynq_ps = {
	.name = "zynq_ps",
	.on_board = 1,
	.section = "zynq",
	.opts_size = sizeof(enpu_board_target),
	.opts_parse = enpu_board_opts_parse,
	.opts_json = enpu_board_opts_json,
	.opts_from_json = enpu_board_opts_from_json,
	.lowering = zynq_lowering,
	.plan_json = zynq_section,
	.check_plan = zynq_check_plan,
	.counts = zynq_counts,
	.report_json = zynq_report,
	.run_info = zynq_run_info,
};

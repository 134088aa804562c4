/* fpga_board: a Zynq board's programmable logic and ARM cores
 * (docs/boards.md). Its plan is the partition (fpga.c) into PL segments
 * and PS ops; graph.json names each op's side, plan.json's "fpga" section
 * holds the segments, a run drives the PL through the driver of pl.h and
 * reports them in report.json's "fpga" section. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "backend.h"
#include "board_target.h"
#include "enpu.h"
#include "fpga.h"
#include "json.h"
#include "pl.h"

static int fpga_plan(const enpu_graph *g, const void *o, uint64_t arena_bytes, void **st,
		     enpu_err *e)
{
	enpu_fpga_part *p = calloc(1, sizeof *p);

	(void)arena_bytes;
	if (!p)
		return enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "cannot partition '%s'", g->name);
	if (enpu_fpga_partition(g, o, p, e) < 0) {
		enpu_fpga_part_free(p);
		free(p);
		return -1;
	}
	*st = p;
	return 0;
}

static void fpga_state_free(void *st)
{
	if (st) {
		enpu_fpga_part_free(st);
		free(st);
	}
}

static const char *fpga_lowering(const enpu_graph *g, const void *st, int k, char *kernel,
				 size_t cap)
{
	return enpu_fpga_op_lowering(g, st, k, kernel, cap);
}

static struct json_object *fpga_plan_json(const enpu_graph *g, const void *o, const void *st)
{
	(void)o;
	return enpu_fpga_plan_json(g, st);
}

/* plan.json's "fpga" section is exactly the partition of the manifest's
 * target (compared as parsed text on both sides: the same number types) */
static int fpga_check_plan(const enpu_graph *g, const void *o, const void *st,
			   struct json_object *sec, const char *label, enpu_err *e)
{
	json_object *want = NULL, *want2 = NULL;
	const char *txt;
	int rc = -1;

	(void)o;
	if (!sec || !json_object_is_type(sec, json_type_object))
		return enpu_fail(e, ENPU_E_ARTIFACT, label, "recompile the artifact",
				 "an fpga_board plan must have an 'fpga' section");
	if (!(want = enpu_fpga_plan_json(g, st)) ||
	    !(txt = json_object_to_json_string_ext(want, JSON_C_TO_STRING_PLAIN)) ||
	    !(want2 = enpu_json_parse(txt, strlen(txt), label, e))) {
		enpu_fail(e, ENPU_E_NOMEM, label, NULL, "cannot check plan.json");
		goto out;
	}
	if (!json_object_equal(want2, sec)) {
		enpu_fail(e, ENPU_E_ARTIFACT, label, "recompile the artifact",
			  "the 'fpga' section of plan.json is not the partition of the manifest's target");
		goto out;
	}
	rc = 0;
out:
	json_object_put(want);
	json_object_put(want2);
	return rc;
}

static void fpga_counts(const enpu_graph *g, const void *st, int *pl_ops, int *ps_ops,
			int *pl_segments)
{
	const enpu_fpga_part *p = st;

	(void)g;
	*pl_ops = p->pl_ops;
	*ps_ops = p->ps_ops;
	*pl_segments = p->n_segs;
}

static int fpga_run_open(const struct enpu_artifact *a, const void *o, const void *st,
			 enpu_engine *en, void **run, enpu_err *e)
{
	enpu_pl_exec *x = calloc(1, sizeof *x);
	enpu_pl_config cfg = {o, en->par, NULL};

	if (!x)
		return enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "cannot start the PL run");
	x->g = enpu_artifact_graph(a);
	x->part = st;
	x->drv = enpu_pl_current();
	x->data = en->data;
	if (x->drv->open(&cfg, &x->handle, e) < 0) {
		free(x);
		return -1;
	}
	en->hook = enpu_pl_hook;
	en->hook_ctx = x;
	*run = x;
	return 0;
}

static struct json_object *fpga_report(const enpu_graph *g, const void *o, const void *st,
				       void *run)
{
	const enpu_pl_exec *x = run;
	json_object *f = enpu_fpga_report_json(g, st, x->drv->name);
	int bad = 0;

	(void)o;
	if (f)
		enpu_json_put(f, "pl_cycles_measured", json_object_new_int64(
			x->pl_cycles > INT64_MAX ? INT64_MAX : (int64_t)x->pl_cycles), &bad);
	if (bad) {
		json_object_put(f);
		return NULL;
	}
	return f;
}

static void fpga_run_info(const enpu_graph *g, const void *o, const void *st, void *run,
			  enpu_run_info *ri)
{
	const enpu_fpga_part *p = st;
	const enpu_pl_exec *x = run;

	(void)g;
	(void)o;
	ri->pl_ops = p->pl_ops;
	ri->ps_ops = p->ps_ops;
	ri->pl_segments = x->segments_run;
	ri->pl_cycles = x->pl_cycles;
}

static void fpga_run_close(void *run)
{
	enpu_pl_exec *x = run;

	if (x && x->drv && x->drv->close)
		x->drv->close(x->handle);
	free(x);
}

const enpu_backend_def enpu_bk_fpga_board = {
	.name = "fpga_board",
	.on_board = 1,
	.section = "fpga",
	.pl = 1,
	.opts_size = sizeof(enpu_board_target),
	.opts_parse = enpu_board_opts_parse,
	.opts_json = enpu_board_opts_json,
	.opts_from_json = enpu_board_opts_from_json,
	.plan = fpga_plan,
	.state_free = fpga_state_free,
	.lowering = fpga_lowering,
	.plan_json = fpga_plan_json,
	.check_plan = fpga_check_plan,
	.counts = fpga_counts,
	.run_open = fpga_run_open,
	.report_json = fpga_report,
	.run_info = fpga_run_info,
	.run_close = fpga_run_close,
};

/* The board options of a zynq_ps or fpga_board target or artifact. */
const enpu_board_target *enpu_target_board(const enpu_target *t)
{
	const enpu_backend_def *d = enpu_target_def(t);
	return d == &enpu_bk_fpga_board || d == &enpu_bk_zynq_ps ? enpu_target_options(t) : NULL;
}

const enpu_board_target *enpu_artifact_board(const struct enpu_artifact *a)
{
	const enpu_backend_def *d = enpu_artifact_def(a);
	return d == &enpu_bk_fpga_board || d == &enpu_bk_zynq_ps ? enpu_artifact_options(a) : NULL;
}

const enpu_fpga_part *enpu_artifact_fpga(const struct enpu_artifact *a)
{
	return enpu_artifact_def(a) == &enpu_bk_fpga_board ? enpu_artifact_state(a) : NULL;
}

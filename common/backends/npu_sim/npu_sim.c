/* npu_sim: the simulated NPU (docs/npu-sim.md). Matrix products run
 * tiled on a systolic array (npuexec.c), everything else on a vector unit;
 * the bits are cpu_ref's. Its plan is the cycle and memory model
 * (npusim.c): compile writes it into plan.json's "npu" section, a run
 * reports it in report.json's "npu" section. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "backend.h"
#include "enpu.h"
#include "json.h"
#include "npuexec.h"
#include "npusim.h"
#include "plan.h"

static int npu_parse(const enpu_backend_def *d, void *o, const struct enpu_ynode *node,
		     const char *label, enpu_err *e)
{
	(void)d;
	return enpu_npu_target_parse(node, label, o, e);
}

static struct json_object *npu_json(const void *o)
{
	return enpu_npu_target_json(o);
}

static int npu_from_json(const enpu_backend_def *d, void *o, struct json_object *v,
			 const char *label, enpu_err *e)
{
	(void)d;
	return enpu_npu_target_from_json(v, label, o, e);
}

/* every spec v1/v2 op, and the spec v3 ops npusim.c's npu_ops[] has a row
 * for (docs/npu-sim.md, "int8"); another v3 op is E0210 on npu_sim */
static int npu_can_lower(const enpu_opdef *d)
{
	return enpu_npu_lowers_op(d);
}

/* the target's `ops:` list narrows what it lowers */
static int npu_lowers(const void *o, const enpu_opdef *d)
{
	return enpu_opmask_has(((const enpu_npu_target *)o)->ops, d->id);
}

/* the target's `ops:` list is what excludes the op: say so */
static void npu_lowers_fix(const void *o, const enpu_opdef *d, const char *lowered_by, char *fix,
			   size_t cap)
{
	const enpu_npu_target *t = o;
	char ops[256];
	size_t off = 0;

	ops[0] = 0;
	for (int i = 0; i < ENPU_OP_COUNT && off < sizeof(ops); i++)
		if (enpu_opmask_has(t->ops, i))
			off += (size_t)snprintf(ops + off, sizeof(ops) - off, "%s%s", off ? ", " : "",
						enpu_op_by_id((enpu_opid)i)->name);
	snprintf(fix, cap,
		 "op type '%s' is lowered by: %s, but targets.npu_sim.ops lists: %s; "
		 "add '%s' to the target's ops or replace the op",
		 d->name, lowered_by, ops[0] ? ops : "nothing", d->name);
}

static int npu_plan(const enpu_graph *g, const void *o, uint64_t arena_bytes, void **st,
		    enpu_err *e)
{
	enpu_npu_report *r = calloc(1, sizeof *r);

	if (!r)
		return enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "cannot model '%s' on the npu", g->name);
	if (enpu_npu_model(g, o, arena_bytes, r, e) < 0) {
		enpu_npu_report_free(r);
		free(r);
		return -1;
	}
	*st = r;
	return 0;
}

static void npu_state_free(void *st)
{
	if (st) {
		enpu_npu_report_free(st);
		free(st);
	}
}

/* GEMM-class ops: "npu_sim.gemm"; the others "npu_sim.<class>.<op>" */
static const char *npu_lowering(const enpu_graph *g, const void *st, int k, char *kernel,
				size_t cap)
{
	const enpu_opdef *d = g->ops[k].def;
	const char *cls = enpu_npu_class_name(enpu_npu_class_of(d));

	(void)st;
	if (enpu_npu_class_of(d) == ENPU_NPU_GEMM)
		snprintf(kernel, cap, "npu_sim.gemm");
	else
		snprintf(kernel, cap, "npu_sim.%s.%s", cls, d->name);
	return cls;
}

static struct json_object *npu_plan_json(const enpu_graph *g, const void *o, const void *st)
{
	(void)o;
	return enpu_npu_plan_json(g, st, 1);
}

/* plan.json's "npu" target is the manifest's. */
static int check_target(const void *o, json_object *sec, const char *label, enpu_err *e)
{
	json_object *t, *jx = NULL, *jy = NULL;
	enpu_npu_target pt;
	int same;

	if (!sec)
		return enpu_fail(e, ENPU_E_ARTIFACT, label, NULL, "field 'npu' is missing");
	if (!json_object_is_type(sec, json_type_object))
		return enpu_fail(e, ENPU_E_ARTIFACT, label, NULL, "field 'npu' is not an object");
	if (!(t = enpu_json_field(sec, "target", json_type_object, label, "npu: ", e)))
		return -1;
	if (enpu_npu_target_from_json(t, label, &pt, e) < 0)
		return -1;
	jx = enpu_npu_target_json(&pt);
	jy = enpu_npu_target_json(o);
	same = jx && jy && strcmp(json_object_to_json_string_ext(jx, JSON_C_TO_STRING_PLAIN),
				  json_object_to_json_string_ext(jy, JSON_C_TO_STRING_PLAIN)) == 0;
	json_object_put(jx);
	json_object_put(jy);
	if (!same)
		return enpu_fail(e, ENPU_E_ARTIFACT, label, "recompile the artifact",
				 "the npu target in plan.json differs from the one in manifest.json");
	return 0;
}

static const char *plain(json_object *o)
{
	return o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN) : "";
}

/* A deep load: plan.json's "npu" is, field for field, the model derived
 * again (st); an older build's section, without the counts, likewise. */
static int npu_check_plan(const enpu_graph *g, const void *o, const void *st,
			  struct json_object *sec, const char *label, enpu_err *e)
{
	json_object *want, *wops, *gops, *wpeak, *gpeak = NULL;
	int counts, same;

	if (check_target(o, sec, label, e) < 0)
		return -1;
	counts = json_object_object_get_ex(sec, "peak_dram_bytes", &gpeak);
	if (!(want = enpu_npu_plan_json(g, st, counts)))
		return enpu_fail(e, ENPU_E_NOMEM, label, NULL, "cannot check the npu plan");
	same = json_object_object_length(sec) == json_object_object_length(want) &&
	       json_object_object_get_ex(sec, "ops", &gops) &&
	       json_object_object_get_ex(want, "ops", &wops);
	same = same && strcmp(plain(gops), plain(wops)) == 0;
	if (same && counts)
		same = json_object_object_get_ex(want, "peak_dram_bytes", &wpeak) &&
		       strcmp(plain(gpeak), plain(wpeak)) == 0;
	json_object_put(want);
	if (!same)
		return enpu_fail(e, ENPU_E_ARTIFACT, label, "recompile the artifact",
				 "the npu model in plan.json is not the one its graph and target "
				 "give");
	return 0;
}

/* A trusted load: the model as plan.json records it. */
static int npu_plan_read(const enpu_graph *g, const void *o, uint64_t arena_bytes,
			 struct json_object *sec, const char *label, void **st, enpu_err *e)
{
	enpu_npu_report *r;
	int rc;

	(void)arena_bytes;
	if (check_target(o, sec, label, e) < 0)
		return -1;
	if (!(r = calloc(1, sizeof *r)))
		return enpu_fail(e, ENPU_E_NOMEM, label, NULL, "cannot read the npu plan");
	if ((rc = enpu_npu_plan_read(g, o, sec, label, r, e)) != 0) {
		free(r);
		return rc;
	}
	*st = r;
	return 0;
}

typedef struct npu_run {
	const enpu_graph *g;
	const enpu_npu_target *t;
} npu_run;

/* GEMM-class ops run tiled on the target's array; the rest (and the
 * integer GEMMs, exact in any order) are cpu_ref's */
static int npu_hook(void *ctx, int k, const enpu_view *in, int n_in, enpu_view *out,
		    enpu_par *par, enpu_err *e)
{
	const npu_run *r = ctx;
	const enpu_irop *op = &r->g->ops[k];
	int rc;

	if (enpu_npu_class_of(op->def) != ENPU_NPU_GEMM)
		return 1;
	if ((rc = enpu_npu_exec_gemm(r->t, op, in, n_in, out, par)) > 0)
		return 1;   /* an integer GEMM: its reference kernel */
	if (rc < 0)
		return enpu_fail(e, ENPU_E_NOMEM, op->name, NULL,
				 "op '%s' (%s) could not allocate its scratch memory", op->name,
				 op->def->name);
	return 0;
}

static int npu_run_open(const struct enpu_artifact *a, const void *o, const void *st,
			enpu_engine *en, void **run, enpu_err *e)
{
	npu_run *r = calloc(1, sizeof *r);

	(void)st;
	if (!r)
		return enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "cannot start the npu run");
	r->g = enpu_artifact_graph(a);
	r->t = o;
	en->hook = npu_hook;
	en->hook_ctx = r;
	*run = r;
	return 0;
}

static struct json_object *npu_report_json(const enpu_graph *g, const void *o, const void *st,
					   void *run)
{
	(void)o;
	(void)run;
	return enpu_npu_report_json(g, st);
}

static void npu_run_info(const enpu_graph *g, const void *o, const void *st, void *run,
			 enpu_run_info *ri)
{
	const enpu_npu_report *nr = st;

	(void)g;
	(void)o;
	(void)run;
	ri->has_npu = 1;
	ri->npu_cycles = nr->total_cycles;
	ri->npu_time_us = nr->time_us;
	ri->npu_dram_bytes = nr->dram_read_bytes + nr->dram_write_bytes;
	ri->npu_utilisation = nr->utilisation;
	ri->npu_clock_mhz = nr->target.clock_mhz;
}

const enpu_backend_def enpu_bk_npu_sim = {
	.name = "npu_sim",
	.section = "npu",
	.can_lower = npu_can_lower,
	.opts_size = sizeof(enpu_npu_target),
	.opts_parse = npu_parse,
	.opts_json = npu_json,
	.opts_from_json = npu_from_json,
	.lowers = npu_lowers,
	.lowers_fix = npu_lowers_fix,
	.plan = npu_plan,
	.state_free = npu_state_free,
	.lowering = npu_lowering,
	.plan_json = npu_plan_json,
	.check_plan = npu_check_plan,
	.plan_read = npu_plan_read,
	.run_open = npu_run_open,
	.report_json = npu_report_json,
	.run_info = npu_run_info,
	.run_close = free,
};

const enpu_npu_target *enpu_target_npu(const enpu_target *t)
{
	return enpu_target_def(t) == &enpu_bk_npu_sim ? enpu_target_options(t) : NULL;
}

const enpu_npu_target *enpu_artifact_npu(const struct enpu_artifact *a)
{
	return enpu_artifact_def(a) == &enpu_bk_npu_sim ? enpu_artifact_options(a) : NULL;
}

/* exec.c: enpu_run. Checks input.npz against the graph's inputs, runs each
 * op in schedule order over views into the inputs, the weights and one
 * planned arena, and writes the outputs as result.npz. The reference
 * kernels run every op that the artifact's backend (backend.h) does not
 * take over through its engine hook (npu_sim's GEMMs on its array,
 * fpga_board's PL segments): the same bits either way. The backend adds
 * its section to report.json and its numbers to the run's info. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <json-c/json.h>
#include "enpu.h"
#include "engine.h"
#include "backend.h"
#include "json.h"
#include "graphjson.h"
#include "npz.h"
#include "plan.h"

static void inputs_of(const enpu_graph *g, char *buf, size_t cap)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < g->n_inputs && used + 1 < cap; i++) {
		int n = snprintf(buf + used, cap - used, "%s%s", i ? ", " : "",
				 g->tensors[g->inputs[i]].name);
		if (n < 0)
			break;
		used += (size_t)n;
	}
}

static int check_inputs(const enpu_graph *g, const enpu_tlist *in, const char *label,
			enpu_err *e)
{
	char want[256], have[256], s1[96], s2[96];

	for (int i = 0; i < g->n_inputs; i++) {
		const enpu_irtensor *t = &g->tensors[g->inputs[i]];
		const enpu_tensor *x = enpu_tlist_find(in, t->name);
		if (!x) {
			inputs_of(g, want, sizeof(want));
			enpu_tlist_names(in, have, sizeof(have));
			return enpu_fail(e, ENPU_E_INPUT_MISSING, label,
					 "name the arrays of the input file after the graph's inputs",
					 "input '%s' is not in %s (expected [%s], present [%s])",
					 t->name, label, want, have);
		}
		if (x->dtype != t->dtype)
			return enpu_fail(e, ENPU_E_INPUT_SHAPE, label, NULL,
					 "input '%s': expected %s, %s holds %s", t->name,
					 enpu_dtype_name(t->dtype), label, enpu_dtype_name(x->dtype));
		if (!enpu_shape_eq(&x->shape, &t->shape))
			return enpu_fail(e, ENPU_E_INPUT_SHAPE, label,
					 "reshape the input to the declared shape",
					 "input '%s': expected %s, %s holds %s", t->name,
					 enpu_shape_pystr(&t->shape, s1, sizeof(s1)), label,
					 enpu_shape_pystr(&x->shape, s2, sizeof(s2)));
	}
	for (size_t i = 0; i < in->n; i++) {
		int ti = enpu_graph_find(g, in->items[i].name);
		if (ti < 0 || g->tensors[ti].kind != ENPU_TK_INPUT) {
			inputs_of(g, want, sizeof(want));
			return enpu_fail(e, ENPU_E_INPUT_EXTRA, label,
					 "remove it from the input file",
					 "%s holds '%s', which is not a graph input (expected [%s])",
					 label, in->items[i].name, want);
		}
	}
	return 0;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Bind every tensor of the graph to its data: inputs from the input file,
 * weights from the artifact, intermediates into the arena. */
static void bind_tensors(const enpu_artifact *a, const enpu_tlist *in, unsigned char *arena,
			 enpu_engine *en, int64_t *offset)
{
	const enpu_graph *g = enpu_artifact_graph(a);
	const enpu_plan *p = enpu_artifact_plan(a);

	for (int t = 0; t < g->n_tensors; t++) {
		offset[t] = -1;
		switch (g->tensors[t].kind) {
		case ENPU_TK_INPUT:
			en->data[t] = enpu_tlist_find(in, g->tensors[t].name)->data;
			break;
		case ENPU_TK_WEIGHT:   /* kernels never write their inputs */
			en->data[t] = (float *)enpu_artifact_weight(a, t);
			break;
		case ENPU_TK_INTERMEDIATE:
			if (p->tensor_buf[t] >= 0)
				offset[t] = (int64_t)p->bufs[p->tensor_buf[t]].offset;
			break;
		}
	}
	enpu_engine_bind_arena(en, arena, offset);
	en->plan = p;
	en->arena = arena;
}

/* report.json: {"format", "version", "backend", "artifact", "outputs":
 * [{"name", "shape"}], and the backend's section}. A function of the
 * artifact and the input, as the result is: no clock in it (the run's wall
 * time is the job's "seconds"), so the same run is the same bytes, stored
 * once. Version 2; version 1 also had "seconds". */
static int build_report(const enpu_artifact *a, void *run, enpu_buf *b, enpu_err *e)
{
	const enpu_backend_def *def = enpu_artifact_def(a);
	const enpu_graph *g = enpu_artifact_graph(a);
	json_object *root, *outs, *sec;
	size_t at = b->len;
	int rc = -1;

	/* without a backend section the report is the artifact's alone: the
	 * bytes the first run made, kept in the loaded artifact */
	if (!def->report_json && (rc = enpu_artifact_report_memo(a, b)) != 0)
		return rc > 0 ? 0 : enpu_fail(e, ENPU_E_NOMEM, "report.json", NULL,
					      "cannot build report.json");
	rc = -1;
	root = json_object_new_object();
	outs = enpu_graph_outputs_json(g);

	if (!root || !outs) {
		json_object_put(outs);
		goto nomem;
	}
	enpu_json_addc(root, "format", json_object_new_string("eulernpu-report"));
	enpu_json_addc(root, "version", json_object_new_int(2));
	enpu_json_addc(root, "backend", json_object_new_string(enpu_artifact_backend(a)));
	enpu_json_addc(root, "artifact", json_object_new_string(enpu_artifact_id(a)));
	enpu_json_addc(root, "outputs", outs);
	if (def->report_json) {
		if (!(sec = def->report_json(g, enpu_artifact_options(a), enpu_artifact_state(a), run)))
			goto nomem;
		json_object_object_add(root, def->section, sec);
	}
	if (enpu_json_dump(root, b, e) < 0)
		goto out;
	if (!def->report_json)
		enpu_artifact_report_memo_set(a, b->data + at, b->len - at);
	rc = 0;
	goto out;
nomem:
	enpu_fail(e, ENPU_E_NOMEM, "report.json", NULL, "cannot build report.json");
out:
	json_object_put(root);
	return rc;
}

/* The arena of plan p: 64-byte aligned, never 0 bytes. NULL with *e. */
static unsigned char *alloc_arena(const enpu_plan *p, enpu_err *e)
{
	unsigned char *arena;
	size_t asz;

	if (p->arena_bytes > SIZE_MAX - 64) {
		enpu_fail(e, ENPU_E_LIMIT, NULL, NULL, "the arena of %llu bytes is too large",
			  (unsigned long long)p->arena_bytes);
		return NULL;
	}
	/* aligned_alloc wants a multiple of the alignment, and never 0 */
	asz = ((size_t)p->arena_bytes + 63) & ~(size_t)63;
	if (!(arena = aligned_alloc(64, asz ? asz : 64)))
		enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "cannot allocate the arena of %zu bytes", asz);
	return arena;
}

/* The outputs by name, in spec order, onto res; copies, so the arena can go. */
static int collect_outputs(const enpu_graph *g, const enpu_engine *en, const enpu_limits *lim,
			   enpu_tlist *res, enpu_err *e)
{
	for (int i = 0; i < g->n_outputs; i++) {
		const enpu_irtensor *t = &g->tensors[g->outputs[i]];
		enpu_tensor r = {0};
		uint64_t n;
		const float *src = en->data[g->outputs[i]];

		r.dtype = t->dtype;
		r.shape = t->shape;
		if (enpu_tensor_alloc(&r, lim, e) < 0)
			return -1;
		if (!(r.name = strdup(t->name))) {
			enpu_tensor_free(&r);
			return enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "cannot build the result");
		}
		if (enpu_shape_numel(&t->shape, &n) == 0 && n > 0 && src)
			memcpy(r.data, src, (size_t)n * enpu_dtype_size(t->dtype));
		if (enpu_tlist_push(res, &r, e) < 0) {
			enpu_tensor_free(&r);
			return -1;
		}
	}
	return 0;
}

static void fill_info(const enpu_artifact *a, void *run, double seconds, enpu_run_info *info)
{
	const enpu_graph *g = enpu_artifact_graph(a);
	const enpu_backend_def *def = enpu_artifact_def(a);

	memset(info, 0, sizeof(*info));
	info->n_outputs = g->n_outputs;
	if (g->n_outputs > 0)
		enpu_shape_pystr(&g->tensors[g->outputs[0]].shape, info->first_shape,
				 sizeof(info->first_shape));
	info->seconds = seconds;
	if (def->run_info)
		def->run_info(g, enpu_artifact_options(a), enpu_artifact_state(a), run, info);
}

int enpu_run_mem(const enpu_artifact *a, enpu_tlist *in, const char *input_label,
		 enpu_tlist *res, enpu_buf *report, enpu_par *par, const volatile int *cancel,
		 const enpu_limits *lim, enpu_run_info *info, enpu_err *e)
{
	const enpu_graph *g = enpu_artifact_graph(a);
	const enpu_backend_def *def = enpu_artifact_def(a);
	unsigned char *arena = NULL;
	enpu_engine en = {0};
	int64_t *offset = NULL;
	void *run = NULL;
	int opened = 0;
	double t0, t1;
	int rc = -1;

	if (!lim)
		lim = enpu_limits_default();
	if (!input_label)
		input_label = "input.npz";
	if (check_inputs(g, in, input_label, e) < 0 ||
	    !(arena = alloc_arena(enpu_artifact_plan(a), e)))
		goto out;
	en.g = g;
	en.par = par;
	en.cancel = cancel;
	en.data = calloc((size_t)g->n_tensors, sizeof(*en.data));
	offset = calloc((size_t)g->n_tensors, sizeof(*offset));
	if (!en.data || !offset) {
		enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "cannot allocate the tensor table");
		goto out;
	}
	bind_tensors(a, in, arena, &en, offset);
	if (def->run_open) {
		if (def->run_open(a, enpu_artifact_options(a), enpu_artifact_state(a), &en, &run, e) < 0)
			goto out;
		opened = 1;
	}
	t0 = now();
	if (enpu_engine_run(&en, e) < 0)
		goto out;
	t1 = now();
	if (collect_outputs(g, &en, lim, res, e) < 0 ||
	    (report && build_report(a, run, report, e) < 0))
		goto out;
	if (info)
		fill_info(a, run, t1 - t0, info);
	rc = 0;
out:
	if (opened && def->run_close)
		def->run_close(run);
	free(en.data);
	free(offset);
	free(arena);
	if (rc < 0)
		enpu_tlist_free(res);
	return rc;
}

int enpu_run(const enpu_artifact *a, const char *input_path, const char *input_label,
	     const char *result_path, const char *report_path, enpu_par *par,
	     const volatile int *cancel, const enpu_limits *lim, enpu_run_info *info,
	     enpu_err *e)
{
	enpu_tlist in = ENPU_TLIST_INIT, res = ENPU_TLIST_INIT;
	enpu_buf rep = ENPU_BUF_INIT;
	int rc = -1;

	if (!lim)
		lim = enpu_limits_default();
	if (!input_label)
		input_label = "input.npz";
	if (enpu_npz_read(input_path, input_label, lim, &in, e) < 0 ||
	    enpu_run_mem(a, &in, input_label, &res, report_path ? &rep : NULL, par, cancel, lim,
			 info, e) < 0 ||
	    enpu_npz_write(result_path, &res, e) < 0 ||
	    (report_path && enpu_write_file_atomic(report_path, rep.data, rep.len, e) < 0))
		goto out;
	rc = 0;
out:
	enpu_tlist_free(&in);
	enpu_tlist_free(&res);
	enpu_buf_free(&rep);
	return rc;
}

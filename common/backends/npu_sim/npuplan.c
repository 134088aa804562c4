/* npuplan.c: the npu_sim model read back from plan.json's "npu" section
 * (enpu_npu_plan_read), for a trusted load: the daemon's cache, checked
 * deep at import, does not run the model again for every job. The counts
 * are taken as written; the ratios and totals are derived from them with
 * npusim.c's own functions, so report.json is the same bytes either way. */
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <json-c/json.h>
#include "npusim.h"
#include "json.h"

#define COUNT_MAX INT64_MAX

/* Object o's fields (exactly those) as counts into out[]. */
static int read_counts(enpu_jread *jr, json_object *o, const char *const *fields, uint64_t *out)
{
	json_object *v[12];
	int64_t iv;
	int n = 0;

	while (fields[n])
		n++;
	if (enpu_jread_fields(jr, o, fields, v) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		if (enpu_jread_int(jr, v[i], fields[i], 0, COUNT_MAX, &iv) < 0)
			return -1;
		out[i] = (uint64_t)iv;
	}
	return 0;
}

/* o: {"ifmap": {a: .., b: ..}, "filter": .., "ofmap": ..} into x[], y[]. */
static int read_per_sram(enpu_jread *jr, json_object *o, const char *a, const char *b,
			 uint64_t *x, uint64_t *y)
{
	static const char *const srams[] = {"ifmap", "filter", "ofmap", NULL};
	const char *const pair[] = {a, b, NULL};
	json_object *v[ENPU_SRAM_COUNT];
	uint64_t xy[2];

	if (enpu_jread_fields(jr, o, srams, v) < 0)
		return -1;
	for (int i = 0; i < ENPU_SRAM_COUNT; i++) {
		if (read_counts(jr, v[i], pair, xy) < 0)
			return -1;
		x[i] = xy[0], y[i] = xy[1];
	}
	return 0;
}

static int read_gemm(enpu_jread *jr, json_object *o, enpu_npu_opstats *st)
{
	static const char *const f[] = {"M", "N", "K", "groups", "Sr", "Sc", "T", "row_folds",
					"col_folds", "folds", "tiles", NULL};
	static const char *const tiles[] = {"ifmap", "filter", "ofmap", NULL};
	json_object *v[11];
	uint64_t c[10];
	int64_t iv;

	if (enpu_jread_fields(jr, o, f, v) < 0)
		return -1;
	for (int i = 0; i < 10; i++) {
		if (enpu_jread_int(jr, v[i], f[i], 0, COUNT_MAX, &iv) < 0)
			return -1;
		c[i] = (uint64_t)iv;
	}
	st->M = c[0], st->N = c[1], st->K = c[2], st->groups = c[3];
	st->Sr = c[4], st->Sc = c[5], st->T = c[6];
	st->row_folds = c[7], st->col_folds = c[8], st->folds = c[9];
	return read_counts(jr, v[10], tiles, st->tile_words);
}

/* Entry k of "ops": op k of g, its class's fields and nothing else. */
static int read_op(const enpu_graph *g, int k, json_object *o, enpu_jread *jr,
		   enpu_npu_opstats *st)
{
	static const char *const f_gemm[] = {"name", "op", "lowering", "gemm", "compute_cycles",
					     "stall_cycles", "sram", "dram", "sram_bytes", NULL};
	static const char *const f_vec[] = {"name", "op", "lowering", "elements", "passes",
					    "compute_cycles", "stall_cycles", "sram", "dram",
					    "sram_bytes", NULL};
	static const char *const f_free[] = {"name", "op", "lowering", "compute_cycles",
					     "stall_cycles", "sram", "dram", "sram_bytes", NULL};
	const enpu_irop *op = &g->ops[k];
	const char *const *f;
	json_object *v[10];
	int64_t iv;
	int j;

	st->op = k;
	st->cls = enpu_npu_class_of(op->def);
	f = st->cls == ENPU_NPU_GEMM ? f_gemm : st->cls == ENPU_NPU_FREE ? f_free : f_vec;
	if (!json_object_is_type(o, json_type_object))
		return enpu_jread_fail(jr, "op %d is not an object", k);
	if (enpu_jread_fields(jr, o, f, v) < 0)
		return -1;
	if (!json_object_is_type(v[0], json_type_string) ||
	    strcmp(json_object_get_string(v[0]), op->name) != 0 ||
	    !json_object_is_type(v[1], json_type_string) ||
	    strcmp(json_object_get_string(v[1]), op->def->name) != 0 ||
	    !json_object_is_type(v[2], json_type_string) ||
	    strcmp(json_object_get_string(v[2]), enpu_npu_class_name(st->cls)) != 0)
		return enpu_jread_fail(jr, "op %d is not op '%s' (%s, lowered as %s)", k, op->name,
				       op->def->name, enpu_npu_class_name(st->cls));
	j = 3;
	if (st->cls == ENPU_NPU_GEMM) {
		if (read_gemm(jr, v[j++], st) < 0)
			return -1;
	} else if (st->cls != ENPU_NPU_FREE) {
		if (enpu_jread_int(jr, v[j++], "elements", 0, COUNT_MAX, &iv) < 0)
			return -1;
		st->elements = (uint64_t)iv;
		if (enpu_jread_int(jr, v[j++], "passes", 0, INT32_MAX, &iv) < 0)
			return -1;
		st->passes = (int)iv;
	}
	if (enpu_jread_int(jr, v[j++], "compute_cycles", 0, COUNT_MAX, &iv) < 0)
		return -1;
	st->compute_cycles = (uint64_t)iv;
	if (enpu_jread_int(jr, v[j++], "stall_cycles", 0, COUNT_MAX, &iv) < 0)
		return -1;
	st->stall_cycles = (uint64_t)iv;
	if (read_per_sram(jr, v[j++], "reads", "writes", st->sram_reads, st->sram_writes) < 0 ||
	    read_per_sram(jr, v[j++], "read_bytes", "write_bytes", st->dram_read_bytes,
			  st->dram_write_bytes) < 0 ||
	    enpu_jread_int(jr, v[j], "sram_bytes", 0, COUNT_MAX, &iv) < 0)
		return -1;
	st->sram_bytes = (uint64_t)iv;
	return 0;
}

int enpu_npu_plan_read(const enpu_graph *g, const enpu_npu_target *t,
		       struct json_object *sec, const char *label, enpu_npu_report *r,
		       enpu_err *e)
{
	static const char *const fields[] = {"target", "ops", "peak_dram_bytes", NULL};
	enpu_jread jr = {label, "npu", e};
	json_object *v[3];
	int64_t iv;

	memset(r, 0, sizeof(*r));
	r->target = *t;
	if (!sec || !json_object_is_type(sec, json_type_object))
		return enpu_jread_fail(&jr, "the section is missing or not an object");
	if (!json_object_object_get_ex(sec, "peak_dram_bytes", NULL))
		return 1;
	if (enpu_jread_fields(&jr, sec, fields, v) < 0 ||
	    enpu_jread_int(&jr, v[2], "peak_dram_bytes", 0, COUNT_MAX, &iv) < 0)
		return -1;
	r->peak_dram_bytes = (uint64_t)iv;
	if (!json_object_is_type(v[1], json_type_array) ||
	    json_object_array_length(v[1]) != (size_t)g->n_ops)
		return enpu_jread_fail(&jr, "field 'ops' is not a list of the graph's %d ops",
				       g->n_ops);
	if (g->n_ops > 0 && !(r->ops = calloc((size_t)g->n_ops, sizeof(*r->ops))))
		return enpu_fail(e, ENPU_E_NOMEM, label, NULL, "out of memory reading the npu model");
	r->n_ops = g->n_ops;
	for (int k = 0; k < g->n_ops; k++) {
		if (read_op(g, k, json_object_array_get_idx(v[1], (size_t)k), &jr, &r->ops[k]) < 0)
			goto fail;
		enpu_npu_ratios(t, &r->ops[k]);
	}
	if (enpu_npu_totals(r)) {
		enpu_jread_fail(&jr, "the totals overflow a 64-bit count");
		goto fail;
	}
	return 0;
fail:
	enpu_npu_report_free(r);
	return -1;
}

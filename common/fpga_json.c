/* fpga_json.c: the fpga_board partition's records: graph.json's per-op
 * lowering, plan.json's and report.json's "fpga" sections, and the
 * loader's check that an artifact's files hold exactly the partition its
 * target gives. Also the partition counts for validate. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "enpu.h"
#include "fpga.h"
#include "graphjson.h"

static json_object *u64(uint64_t v)
{
	return json_object_new_int64(v > INT64_MAX ? INT64_MAX : (int64_t)v);
}

static json_object *bufs_json(const enpu_graph *g, const enpu_fpga_buf *b, int n, int *bad)
{
	json_object *a = json_object_new_array();

	for (int i = 0; a && i < n; i++) {
		json_object *o = json_object_new_object();

		if (o) {
			enpu_json_put(o, "tensor", json_object_new_string(g->tensors[b[i].tensor].name), bad);
			enpu_json_put(o, "bytes", u64(b[i].bytes), bad);
		}
		enpu_json_push(a, o, bad);
	}
	return a;
}

static json_object *seg_ops_json(const enpu_graph *g, const enpu_fpga_seg *s, int *bad)
{
	json_object *a = json_object_new_array();

	for (int k = s->first_op; a && k < s->first_op + s->n_ops; k++)
		enpu_json_push(a, json_object_new_string(g->ops[k].name), bad);
	return a;
}

static json_object *ps_ops_json(const enpu_graph *g, const enpu_fpga_part *p, int *bad)
{
	json_object *a = json_object_new_array();

	for (int k = 0; a && k < g->n_ops; k++)
		if (p->op_seg[k] < 0)
			enpu_json_push(a, json_object_new_string(g->ops[k].name), bad);
	return a;
}

json_object *enpu_fpga_plan_json(const enpu_graph *g, const enpu_fpga_part *p)
{
	json_object *o = json_object_new_object(), *segs = json_object_new_array();
	int bad = !o || !segs;

	enpu_json_put(o, "target", enpu_board_target_json(&p->target), &bad);
	for (int i = 0; segs && i < p->n_segs; i++) {
		const enpu_fpga_seg *s = &p->segs[i];
		json_object *so = json_object_new_object();
		char kname[48];

		if (so) {
			snprintf(kname, sizeof(kname), "fpga_board.pl.%d", s->id);
			enpu_json_put(so, "id", json_object_new_int(s->id), &bad);
			enpu_json_put(so, "kernel", json_object_new_string(kname), &bad);
			enpu_json_put(so, "ops", seg_ops_json(g, s, &bad), &bad);
			enpu_json_put(so, "dma_in", bufs_json(g, s->in, s->n_in, &bad), &bad);
			enpu_json_put(so, "dma_out", bufs_json(g, s->out, s->n_out, &bad), &bad);
			enpu_json_put(so, "dma_in_bytes", u64(s->dma_in_bytes), &bad);
			enpu_json_put(so, "dma_out_bytes", u64(s->dma_out_bytes), &bad);
			enpu_json_put(so, "dma_bytes", u64(s->dma_in_bytes + s->dma_out_bytes), &bad);
			enpu_json_put(so, "compute_cycles", u64(s->compute_cycles), &bad);
			enpu_json_put(so, "dma_cycles", u64(s->dma_cycles), &bad);
			enpu_json_put(so, "pl_cycles", u64(s->pl_cycles), &bad);
		}
		enpu_json_push(segs, so, &bad);
	}
	enpu_json_put(o, "segments", segs, &bad);
	enpu_json_put(o, "ps_ops", ps_ops_json(g, p, &bad), &bad);
	enpu_json_put(o, "pl_op_count", json_object_new_int(p->pl_ops), &bad);
	enpu_json_put(o, "ps_op_count", json_object_new_int(p->ps_ops), &bad);
	enpu_json_put(o, "pl_cycles", u64(p->pl_cycles), &bad);
	enpu_json_put(o, "dma_bytes", u64(p->dma_bytes), &bad);
	if (bad) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

json_object *enpu_fpga_report_json(const enpu_graph *g, const enpu_fpga_part *p,
				   const char *pl_name)
{
	json_object *o = json_object_new_object(), *segs = json_object_new_array();
	int bad = !o || !segs;
	char us[48];

	enpu_json_put(o, "pl", json_object_new_string(pl_name ? pl_name : "?"), &bad);
	enpu_json_put(o, "target", enpu_board_target_json(&p->target), &bad);
	for (int i = 0; segs && i < p->n_segs; i++) {
		const enpu_fpga_seg *s = &p->segs[i];
		json_object *so = json_object_new_object();

		if (so) {
			enpu_json_put(so, "id", json_object_new_int(s->id), &bad);
			enpu_json_put(so, "ops", seg_ops_json(g, s, &bad), &bad);
			enpu_json_put(so, "pl_cycles", u64(s->pl_cycles), &bad);
			enpu_json_put(so, "compute_cycles", u64(s->compute_cycles), &bad);
			enpu_json_put(so, "dma_cycles", u64(s->dma_cycles), &bad);
			enpu_json_put(so, "dma_in_bytes", u64(s->dma_in_bytes), &bad);
			enpu_json_put(so, "dma_out_bytes", u64(s->dma_out_bytes), &bad);
		}
		enpu_json_push(segs, so, &bad);
	}
	enpu_json_put(o, "segments", segs, &bad);
	enpu_json_put(o, "pl_ops", json_object_new_int(p->pl_ops), &bad);
	enpu_json_put(o, "ps_ops", json_object_new_int(p->ps_ops), &bad);
	enpu_json_put(o, "pl_cycles_total", u64(p->pl_cycles), &bad);
	enpu_json_put(o, "dma_bytes_total", u64(p->dma_bytes), &bad);
	/* 6 significant digits, as npu_sim's doubles: stable text */
	snprintf(us, sizeof(us), "%.6g", (double)p->pl_cycles / p->target.clock_mhz);
	enpu_json_put(o, "pl_time_us", json_object_new_double_s(strtod(us, NULL), us), &bad);
	if (bad) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

int enpu_json_add_section(enpu_buf *doc, const char *key, json_object *obj, const char *label,
			  enpu_err *e)
{
	json_object *root = enpu_json_parse(doc->data, doc->len, label, e);
	int rc;

	if (!root)
		return -1;
	if (!json_object_is_type(root, json_type_object) ||
	    json_object_object_add(root, key, json_object_get(obj))) {
		json_object_put(root);
		return enpu_fail(e, ENPU_E_NOMEM, label, NULL, "cannot add '%s' to %s", key, label);
	}
	doc->len = 0;
	rc = enpu_json_dump(root, doc, e);
	json_object_put(root);
	return rc;
}

int enpu_fpga_graph_json(const enpu_graph *g, const enpu_fpga_part *p, const char *weights,
			 enpu_buf *out, enpu_err *e)
{
	enpu_buf tmp = ENPU_BUF_INIT;
	json_object *root = NULL, *ops;
	int rc = -1, bad = 0;

	if (enpu_graph_to_json(g, weights, "spec", &tmp, e) < 0)
		goto out;
	if (!(root = enpu_json_parse(tmp.data, tmp.len, "graph.json", e)))
		goto out;
	if (!json_object_object_get_ex(root, "ops", &ops) ||
	    json_object_array_length(ops) != (size_t)g->n_ops) {
		enpu_fail(e, ENPU_E_INTERNAL, "graph.json", NULL, "graph.json lost its ops");
		goto out;
	}
	/* json-c replaces a key's value in place: the field order stays */
	for (int k = 0; k < g->n_ops; k++) {
		json_object *o = json_object_array_get_idx(ops, (size_t)k);
		char kname[128];
		const char *low = enpu_fpga_op_lowering(g, p, k, kname, sizeof(kname));

		enpu_json_put(o, "kernel", json_object_new_string(kname), &bad);
		enpu_json_put(o, "lowering", json_object_new_string(low), &bad);
	}
	if (bad) {
		enpu_fail(e, ENPU_E_NOMEM, "graph.json", NULL, "cannot build graph.json");
		goto out;
	}
	rc = enpu_json_dump(root, out, e);
out:
	json_object_put(root);
	enpu_buf_free(&tmp);
	return rc;
}

int enpu_fpga_check_artifact(const enpu_graph *g, const enpu_fpga_part *p,
			     const char *graph_json, size_t glen, const char *plan_json,
			     size_t plen, enpu_err *e)
{
	json_object *gr = NULL, *pr = NULL, *want = NULL, *want2 = NULL, *ops, *have;
	const char *txt;
	int rc = -1;

	if (!(gr = enpu_json_parse(graph_json, glen, "graph.json", e)))
		goto out;
	if (!json_object_object_get_ex(gr, "ops", &ops) ||
	    !json_object_is_type(ops, json_type_array) ||
	    json_object_array_length(ops) != (size_t)g->n_ops) {
		enpu_fail(e, ENPU_E_ARTIFACT, "graph.json", NULL, "field 'ops' does not match the graph");
		goto out;
	}
	for (int k = 0; k < g->n_ops; k++) {
		json_object *o = json_object_array_get_idx(ops, (size_t)k), *kv, *lv;
		char kname[128];
		const char *low = enpu_fpga_op_lowering(g, p, k, kname, sizeof(kname));

		if (!json_object_object_get_ex(o, "kernel", &kv) ||
		    !json_object_object_get_ex(o, "lowering", &lv) ||
		    strcmp(json_object_get_string(kv), kname) != 0 ||
		    strcmp(json_object_get_string(lv), low) != 0) {
			enpu_fail(e, ENPU_E_ARTIFACT, "graph.json", "recompile the artifact",
				  "op '%s': graph.json's lowering is not the fpga_board partition of its target (%s, %s)",
				  g->ops[k].name, low, kname);
			goto out;
		}
	}
	if (!(pr = enpu_json_parse(plan_json, plen, "plan.json", e)))
		goto out;
	if (!json_object_object_get_ex(pr, "fpga", &have) ||
	    !json_object_is_type(have, json_type_object)) {
		enpu_fail(e, ENPU_E_ARTIFACT, "plan.json", "recompile the artifact",
			  "an fpga_board plan must have an 'fpga' section");
		goto out;
	}
	/* compare as parsed text on both sides: the same number types */
	if (!(want = enpu_fpga_plan_json(g, p)) ||
	    !(txt = json_object_to_json_string_ext(want, JSON_C_TO_STRING_PLAIN)) ||
	    !(want2 = enpu_json_parse(txt, strlen(txt), "plan.json", e))) {
		enpu_fail(e, ENPU_E_NOMEM, "plan.json", NULL, "cannot check plan.json");
		goto out;
	}
	if (!json_object_equal(want2, have)) {
		enpu_fail(e, ENPU_E_ARTIFACT, "plan.json", "recompile the artifact",
			  "the 'fpga' section of plan.json is not the partition of the manifest's target");
		goto out;
	}
	rc = 0;
out:
	json_object_put(gr);
	json_object_put(pr);
	json_object_put(want);
	json_object_put(want2);
	return rc;
}

int enpu_fpga_partition_count(const enpu_graph *g, const enpu_target *t, int *pl_ops,
			      int *ps_ops, int *segments, enpu_err *e)
{
	const enpu_board_target *bt = enpu_target_board(t);
	enpu_fpga_part p;

	*pl_ops = *ps_ops = *segments = 0;
	if (!bt)
		return 0;
	if (bt->bk == ENPU_BK_ZYNQ_PS) {
		*ps_ops = g->n_ops;
		return 0;
	}
	if (enpu_fpga_partition(g, bt, &p, e) < 0)
		return -1;
	*pl_ops = p.pl_ops;
	*ps_ops = p.ps_ops;
	*segments = p.n_segs;
	enpu_fpga_part_free(&p);
	return 0;
}

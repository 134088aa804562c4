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
#include "json.h"

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


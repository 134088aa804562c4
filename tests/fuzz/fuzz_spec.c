/* fuzz_spec.c: libFuzzer target for spec.yaml and target files. The bytes
 * are parsed as a spec and validated for every backend (with the spec's own
 * target options resolved); a graph that validates must survive the trip
 * through graph.json and plan.json that compile and the artifact loader
 * make. The same bytes are also read as a `compile --target FILE` file for
 * npu_sim, zynq_ps and fpga_board, whose canonical JSON must read back. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "enpu.h"
#include "npusim.h"
#include "backend.h"
#include "spec_int.h"
#include "graphjson.h"
#include "plan.h"
#include "fpga.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static enpu_limits lim;

/* Tighter than the defaults, so that no single input takes seconds. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	lim = *enpu_limits_default();
	lim.max_spec_bytes = 1u << 20;
	lim.max_yaml_nodes = 1u << 16;
	lim.max_ops = 4096;
	return 0;
}

static void die(const char *what, const enpu_err *e)
{
	char buf[2048];

	enpu_err_render(e, buf, sizeof(buf));
	fprintf(stderr, "fuzz_spec: %s\n%s", what, buf);
	abort();
}

static int same_json(json_object *a, json_object *b)
{
	return a && b && strcmp(json_object_to_json_string_ext(a, JSON_C_TO_STRING_PLAIN),
				json_object_to_json_string_ext(b, JSON_C_TO_STRING_PLAIN)) == 0;
}

/* What compile writes and the artifact loader reads back (cpu_ref form):
 * a validated graph must plan, verify, and read back from its own JSON. */
static void roundtrip_graph(const enpu_graph *g)
{
	enpu_plan plan = ENPU_PLAN_INIT, plan2 = ENPU_PLAN_INIT;
	enpu_buf gj = ENPU_BUF_INIT, pj = ENPU_BUF_INIT;
	enpu_graph *g2 = NULL;
	char *w = NULL;
	enpu_err e = ENPU_ERR_INIT;

	if (enpu_plan_build(g, &plan, &e) < 0)
		goto out;   /* out of memory or an arena size overflow: an error is fine */
	if (enpu_plan_verify(g, &plan, "plan", &e) < 0)
		die("the planner's plan does not verify", &e);
	if (enpu_graph_to_json(g, "weights/cpu_ref.npz", "spec", NULL, &gj, &e) < 0 ||
	    enpu_plan_to_json(g, &plan, &pj, &e) < 0)
		goto out;
	if (enpu_graph_from_json(gj.data, gj.len, "graph.json", &lim, &g2, &w, &e) < 0)
		die("graph.json of a validated graph does not read back", &e);
	if (g2->n_ops != g->n_ops || g2->n_tensors != g->n_tensors || strcmp(w, "weights/cpu_ref.npz"))
		die("graph.json reads back as another graph", &e);
	if (enpu_plan_from_json(g2, pj.data, pj.len, "plan.json", &plan2, &e) < 0)
		die("plan.json of a validated graph does not read back", &e);
	if (plan2.arena_bytes != plan.arena_bytes || plan2.n_bufs != plan.n_bufs)
		die("plan.json reads back as another plan", &e);
out:
	enpu_plan_free(&plan);
	enpu_plan_free(&plan2);
	enpu_buf_free(&gj);
	enpu_buf_free(&pj);
	enpu_graph_free(g2);
	free(w);
}

static void fuzz_spec(const uint8_t *data, size_t size)
{
	enpu_spec *s = NULL;
	enpu_err e = ENPU_ERR_INIT;

	if (enpu_spec_parse((const char *)data, size, "spec.yaml", &lim, &s, &e) < 0)
		return;
	for (int bk = 0; bk < enpu_backend_count(); bk++) {
		const char *name = enpu_backend_name(bk);
		enpu_graph *g = NULL;
		enpu_target *t = NULL;
		int pl, ps, seg;

		if (enpu_validate(s, name, &g, &e) == 0 && enpu_backend_at(bk) == &enpu_bk_cpu_ref)
			roundtrip_graph(g);
		enpu_graph_free(g);
		g = NULL;
		if (enpu_target_resolve(s, name, NULL, NULL, &lim, &t, &e) == 0 &&
		    enpu_validate_for(s, t, &g, &e) == 0)
			enpu_backend_counts(g, t, &pl, &ps, &seg, &e);
		enpu_graph_free(g);
		enpu_target_free(t);
	}
	/* the spec's own backend, as `validate` without --backend does */
	{
		enpu_graph *g = NULL;
		enpu_validate(s, NULL, &g, &e);
		enpu_graph_free(g);
	}
	enpu_spec_free(s);
}

/* A target file: its options, and their canonical JSON read back (the
 * manifest's copy) must give the same canonical JSON. */
static void fuzz_target_file(const uint8_t *data, size_t size)
{
	enpu_ydoc *doc = NULL;
	const enpu_ynode *root;
	enpu_err e = ENPU_ERR_INIT;
	enpu_npu_target n1, n2;

	if (enpu_yaml_parse((const char *)data, size, "target.yaml", &lim, &doc, &e) < 0)
		return;
	root = enpu_ydoc_root(doc);
	if (root && root->kind != ENPU_YN_MAP)
		goto out;   /* enpu_target_resolve refuses it before the options */
	enpu_npu_target_default(&n1);
	if (enpu_npu_target_parse(root, "target.yaml", &n1, &e) == 0) {
		json_object *j1 = enpu_npu_target_json(&n1), *j2 = NULL;
		enpu_npu_target_default(&n2);
		if (j1 && enpu_npu_target_from_json(j1, "manifest.json", &n2, &e) < 0)
			die("npu_sim target JSON does not read back", &e);
		if (j1 && !same_json(j1, j2 = enpu_npu_target_json(&n2)))
			die("npu_sim target JSON reads back as another target", &e);
		json_object_put(j1);
		json_object_put(j2);
	}
	for (int k = 0; k < 2; k++) {
		const enpu_backend_def *bk = k ? &enpu_bk_fpga_board : &enpu_bk_zynq_ps;
		enpu_board_target b1, b2;
		json_object *j1, *j2 = NULL;

		enpu_board_target_default(bk, &b1);
		if (enpu_board_target_parse(bk, root, "target.yaml", &b1, &e) < 0)
			continue;
		if (!(j1 = enpu_board_target_json(&b1)))
			continue;
		enpu_board_target_default(bk, &b2);
		if (enpu_board_target_from_json(bk, j1, "manifest.json", &b2, &e) < 0)
			die("board target JSON does not read back", &e);
		if (!same_json(j1, j2 = enpu_board_target_json(&b2)))
			die("board target JSON reads back as another target", &e);
		json_object_put(j1);
		json_object_put(j2);
	}
out:
	enpu_ydoc_free(doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_spec(data, size);
	fuzz_target_file(data, size);
	return 0;
}

/* engine.c: run a graph's ops in schedule order over in-memory tensors
 * (see engine.h). Each op reads views of its inputs and writes a view of
 * its output; a backend hook may take an op over, the reference kernel
 * runs the rest. */
#include <string.h>
#include "engine.h"

/* A NaN that an operation creates (inf * 0, inf - inf, 0 / 0) has no sign
 * by IEEE 754, and CPUs pick one: x86 sets it (0xffc00000), Arm clears it
 * (0x7fc00000). So that results are the same bytes on every ISA, every NaN
 * in a graph output is written as the one quiet NaN 0x7fc00000. NaNs
 * inside the graph need no care: no op's non-NaN result depends on a NaN's
 * sign or payload. */
static void canonical_nans(float *p, size_t n)
{
	static const uint32_t qnan = 0x7fc00000u;
	for (size_t i = 0; i < n; i++)
		if (p[i] != p[i])
			memcpy(&p[i], &qnan, sizeof qnan);
}

void enpu_engine_bind_arena(enpu_engine *en, unsigned char *arena, const int64_t *offset)
{
	for (int t = 0; t < en->g->n_tensors; t++)
		if (en->g->tensors[t].kind == ENPU_TK_INTERMEDIATE && offset[t] >= 0)
			en->data[t] = (float *)(void *)(arena + offset[t]);
}

static int run_ops(const enpu_engine *en, enpu_err *e)
{
	const enpu_graph *g = en->g;
	enpu_view in[ENPU_MAX_OP_INPUTS], out[ENPU_MAX_OP_OUTPUTS];

	for (int k = 0; k < g->n_ops; k++) {
		const enpu_irop *op = &g->ops[k];
		int r = 1;

		if (en->cancel && *en->cancel)
			return enpu_fail(e, ENPU_E_JOB_FAILED, op->name, NULL,
					 "run cancelled before op '%s'", op->name);
		if (op->n_in > ENPU_MAX_OP_INPUTS || op->n_out < 1 || op->n_out > ENPU_MAX_OP_OUTPUTS)
			return enpu_fail(e, ENPU_E_INTERNAL, op->name, NULL,
					 "op '%s' has %d inputs and %d outputs, more than %d or %d",
					 op->name, op->n_in, op->n_out, ENPU_MAX_OP_INPUTS,
					 ENPU_MAX_OP_OUTPUTS);
		for (int j = 0; j < op->n_in; j++) {
			in[j].shape = g->tensors[op->in[j]].shape;
			in[j].data = en->data[op->in[j]];
			in[j].dtype = g->tensors[op->in[j]].dtype;
		}
		for (int j = 0; j < op->n_out; j++) {
			out[j].shape = g->tensors[op->out[j]].shape;
			out[j].data = en->data[op->out[j]];
			out[j].dtype = g->tensors[op->out[j]].dtype;
		}
		if (en->plan && en->plan->op_scratch && en->arena && en->plan->op_scratch[k] >= 0) {
			const enpu_plan_buf *b = &en->plan->bufs[en->plan->op_scratch[k]];
			enpu_par_set_scratch(en->par, en->arena + b->offset, (size_t)b->bytes);
		} else {
			enpu_par_set_scratch(en->par, NULL, 0);
		}
		if (en->hook && (r = en->hook(en->hook_ctx, k, in, op->n_in, out, en->par, e)) < 0)
			return -1;
		if (r == 1 && op->def->kernel(&op->attrs, in, op->n_in, out, op->n_out, en->par) < 0)
			return enpu_fail(e, ENPU_E_NOMEM, op->name, NULL,
					 "op '%s' (%s) could not allocate its scratch memory",
					 op->name, op->def->name);
	}
	for (int k = 0; k < g->n_outputs; k++) {
		const enpu_irtensor *t = &g->tensors[g->outputs[k]];
		uint64_t n;
		if (t->dtype == ENPU_DT_F32 && en->data[g->outputs[k]] &&
		    enpu_shape_numel(&t->shape, &n) == 0)
			canonical_nans(en->data[g->outputs[k]], (size_t)n);
	}
	return 0;
}

int enpu_engine_run(const enpu_engine *en, enpu_err *e)
{
	int rc = run_ops(en, e);

	enpu_par_set_scratch(en->par, NULL, 0);   /* the arena is the caller's */
	return rc;
}

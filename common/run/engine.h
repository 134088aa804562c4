/* engine.h: the compute core's executor. Runs a validated graph over
 * tensors already in memory: no files, no JSON, no network. enpu_run, the
 * board agent's backends and the cross-ISA test runner all go through it,
 * so the same code decides the bits everywhere. */
#ifndef ENPU_ENGINE_H
#define ENPU_ENGINE_H

#include <stdint.h>
#include "ir.h"
#include "par.h"
#include "plan.h"

/* A backend's hook for one op. Return 0 when it computed the op's output,
 * 1 to let the reference kernel run it, -1 on failure (fill *e). A hook may
 * compute several ops at once (an fpga_board PL segment) and answer 0 for
 * the later ones without touching them. */
typedef int (*enpu_op_hook)(void *ctx, int op, const enpu_view *in, int n_in,
			    enpu_view *out, enpu_par *par, enpu_err *e);

typedef struct enpu_engine {
	const enpu_graph *g;
	float **data;             /* per tensor: inputs', weights' and intermediates'
				   * data (intermediates point into the arena) */
	enpu_par *par;            /* NULL = serial */
	const volatile int *cancel; /* polled between ops; non-zero aborts */
	enpu_op_hook hook;        /* NULL = reference kernels only */
	void *hook_ctx;
	/* the memory plan and its arena: each op's scratch (plan.h) is handed
	 * to its kernel (or the hook) through par (enpu_par_set_scratch);
	 * NULL: kernels take their scratch from the heap */
	const enpu_plan *plan;
	unsigned char *arena;
} enpu_engine;

/* Point every intermediate tensor of g into arena at the offsets of the
 * memory plan (offset[t], -1 for tensors with no buffer). */
void enpu_engine_bind_arena(enpu_engine *en, unsigned char *arena, const int64_t *offset);

/* Run every op in schedule order. 0, or -1 with *e: ENPU_E_JOB_FAILED when
 * cancelled, ENPU_E_NOMEM when a kernel's scratch memory cannot be had, or
 * the hook's error. */
int enpu_engine_run(const enpu_engine *en, enpu_err *e);

#endif

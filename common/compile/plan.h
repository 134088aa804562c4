/* plan.h: the memory planner (one arena for every intermediate tensor,
 * shared between tensors whose lifetimes do not overlap) and plan.json in
 * both directions. Internal to common/: the compiler writes the plan, the
 * artifact loader reads and verifies it, the executor uses it. The planner
 * and verification (plan.c) are part of the compute core and need libc
 * only; plan.json (planjson.c) needs json-c. */
#ifndef ENPU_PLAN_H
#define ENPU_PLAN_H

#include <stdint.h>
#include "ir.h"
#include "buf.h"

struct json_object;

#define ENPU_PLAN_ALIGN 64

typedef struct enpu_plan_buf {
	int tensor;           /* graph tensor index (an intermediate); -1: the
			       * scratch memory of op first_op (= last_op) */
	uint64_t offset;      /* into the arena, ENPU_PLAN_ALIGN-aligned */
	uint64_t bytes;       /* numel * the dtype's size (an int8 output: 1) */
	int first_op, last_op;  /* closed lifetime, op indices */
} enpu_plan_buf;

typedef struct enpu_plan {
	enpu_plan_buf *bufs; int n_bufs;  /* tensors' in tensor index order, then
					   * the ops' scratch in op order */
	int *tensor_buf; int n_tensors;   /* tensor index -> bufs index, -1 = none */
	int *op_scratch; int n_ops;       /* op index -> bufs index, -1 = none
					   * (NULL: no op has scratch) */
	uint64_t arena_bytes;
	uint64_t lower_bound;             /* no plan of these buffers needs less */
	char strategy[16];                /* the placement that won (planplace.c);
					   * "" in an older plan.json */
} enpu_plan;

#define ENPU_PLAN_INIT {NULL, 0, NULL, 0, NULL, 0, 0, 0, ""}

/* The scratch bytes op k's kernel takes (its row's scratch rule on the
 * graph's shapes; 0 for none). Every backend's executor runs the op's
 * GEMMs on the same core, so the same bytes serve them all. */
uint64_t enpu_plan_op_scratch_bytes(const enpu_graph *g, int k);

/* Lifetime of every tensor from the ops alone: first[i] = producing op
 * (-1 for inputs/weights), last[i] = last reading op; graph outputs live
 * to the last op; an unread, non-output intermediate lives at its producer.
 * first/last have g->n_tensors entries. */
void enpu_plan_lifetimes(const enpu_graph *g, int *first, int *last);

/* The planner: a buffer per intermediate tensor and per op's scratch,
 * placed by enpu_plan_place. */
int enpu_plan_build(const enpu_graph *g, enpu_plan *p, enpu_err *e);

/* Offsets for n buffers (bytes, first_op, last_op given; offset set here)
 * so that buffers whose lifetimes meet never share bytes, ENPU_PLAN_ALIGN
 * aligned: the smallest arena of several strategies (planplace.c), or the
 * optimum for at most ENPU_PLAN_EXACT_MAX buffers. *arena: its aligned
 * size; *lower: the lower bound (enpu_plan_lower_bound); *strategy: the
 * winner's name. 0; -1 out of memory; -2 past 64 bits. */
#define ENPU_PLAN_EXACT_MAX 10
#define ENPU_PLAN_EXACT_NODES 2000000L
#define ENPU_PLAN_GREEDY_MAX 4096
int enpu_plan_place(enpu_plan_buf *b, int n, uint64_t *arena, uint64_t *lower,
		    const char **strategy);
/* The most bytes the buffers live at one step take, each rounded up to
 * ENPU_PLAN_ALIGN: no placement needs less. 0; -1 out of memory; -2 past
 * 64 bits. */
int enpu_plan_lower_bound(const enpu_plan_buf *b, int n, uint64_t *lower);
void enpu_plan_free(enpu_plan *p);

/* Check a plan against its graph: every intermediate has exactly one buffer
 * of the right size and lifetime, inside the arena, and buffers that share
 * bytes never share a live op; a scratch buffer is its op's, live at that
 * op alone (a plan may have none, or one of another size: an older
 * plan.json, whose kernels then take what they lack from the heap). label
 * names the file in errors. */
int enpu_plan_verify(const enpu_graph *g, const enpu_plan *p, const char *label,
		     enpu_err *e);

/* plan.json (deterministic bytes) from a plan, and back (then verified). */
int enpu_plan_to_json(const enpu_graph *g, const enpu_plan *p, enpu_buf *out,
		      enpu_err *e);
/* The same with a backend's section (key: borrowed section; NULL = none)
 * after the plan's own fields. Reading gives the section named key (new
 * reference in *section, NULL when absent) and refuses another backend's;
 * what the section says is the backend's to check (backend.h). */
int enpu_plan_to_json_section(const enpu_graph *g, const enpu_plan *p, const char *key,
			      struct json_object *section, enpu_buf *out, enpu_err *e);
int enpu_plan_from_json_section(const enpu_graph *g, const char *text, size_t len,
				const char *label, enpu_plan *p, const char *key,
				struct json_object **section, enpu_err *e);
int enpu_plan_from_json(const enpu_graph *g, const char *text, size_t len,
			const char *label, enpu_plan *p, enpu_err *e);

/* Artifact internals for the executor (artifact.c). */
struct enpu_artifact;
const enpu_plan *enpu_artifact_plan(const struct enpu_artifact *a);
/* Weight data per graph tensor index (NULL for non-weights / unread). */
const float *enpu_artifact_weight(const struct enpu_artifact *a, int tensor);

#endif

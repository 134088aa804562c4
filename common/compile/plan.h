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
	int tensor;           /* graph tensor index (an intermediate) */
	uint64_t offset;      /* into the arena, ENPU_PLAN_ALIGN-aligned */
	uint64_t bytes;       /* numel * 4 */
	int first_op, last_op;  /* closed lifetime, op indices */
} enpu_plan_buf;

typedef struct enpu_plan {
	enpu_plan_buf *bufs; int n_bufs;  /* in tensor index order */
	int *tensor_buf; int n_tensors;   /* tensor index -> bufs index, -1 = none */
	uint64_t arena_bytes;
} enpu_plan;

#define ENPU_PLAN_INIT {NULL, 0, NULL, 0, 0}

/* Lifetime of every tensor from the ops alone: first[i] = producing op
 * (-1 for inputs/weights), last[i] = last reading op; graph outputs live
 * to the last op; an unread, non-output intermediate lives at its producer.
 * first/last have g->n_tensors entries. */
void enpu_plan_lifetimes(const enpu_graph *g, int *first, int *last);

/* Greedy planner: largest buffers first (ties by tensor index), first fit
 * against placed buffers whose lifetimes overlap, aligned offsets. */
int enpu_plan_build(const enpu_graph *g, enpu_plan *p, enpu_err *e);
void enpu_plan_free(enpu_plan *p);

/* Check a plan against its graph: every intermediate has exactly one buffer
 * of the right size and lifetime, inside the arena, and buffers that share
 * bytes never share a live op. label names the file in errors. */
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

/* backend.h: the backend interface. A backend is one row of the registry
 * (backend.c) and one file under common/backends/ that holds everything
 * that makes it differ from the others: its target options, which ops it
 * lowers and how graph.json names them, what compile adds to plan.json,
 * what loading an artifact checks, how a run executes and what it adds to
 * report.json. Code outside asks the row; nothing outside the registry
 * compares backend names.
 *
 * Adding a backend: common/backends/<name>.c (or a folder) defining
 * `const enpu_backend_def enpu_bk_<name>` and one line in backend.c's
 * registry. Code tells backends apart by their row (a pointer) or its
 * registry index (its bit in masks), never by name or an id of its own.
 *
 * Lifetimes: options (void *o) belong to the enpu_target or the artifact
 * that holds them; a backend's plan state (void *st: an npu model, an
 * fpga partition) is made by plan() and freed by state_free(); a run's
 * state (void *run) by run_open() and run_close(). */
#ifndef ENPU_BACKEND_H
#define ENPU_BACKEND_H

#include <stddef.h>
#include <stdint.h>
#include "err.h"
#include "ir.h"
#include "engine.h"

struct json_object;
struct enpu_ynode;
struct enpu_compile_info;
struct enpu_run_info;
struct enpu_artifact;

typedef struct enpu_backend_def {
	const char *name;          /* "npu_sim": specs, the CLI, manifests */
	int on_board;              /* 1: a board agent runs its jobs; a lab
				    * server forwards them */
	const char *section;       /* its plan.json / report.json section, or NULL */
	int pl;                    /* 1: it runs ops on a board's programmable
				    * logic; its board target (zynq/board_target.c)
				    * takes the PL's fields */

	/* The op types it can lower at all (the capability matrix of
	 * `eulernpu backends`); NULL = every op. */
	int (*can_lower)(const enpu_opdef *d);

	/* ---- target options (opts_size 0: the backend takes none) ---- */
	size_t opts_size;
	/* From the YAML mapping of targets.<name> or a target file's root;
	 * node NULL = every default. ENPU_E_TARGET at the node. */
	int (*opts_parse)(const struct enpu_backend_def *d, void *o, const struct enpu_ynode *node,
			  const char *label, enpu_err *e);
	/* Canonical JSON (every field, keys sorted): manifest.json and the
	 * cache key. New reference. */
	struct json_object *(*opts_json)(const void *o);
	/* Back from that JSON (a manifest): ENPU_E_ARTIFACT naming label. */
	int (*opts_from_json)(const struct enpu_backend_def *d, void *o, struct json_object *v,
			      const char *label, enpu_err *e);
	/* 1 if the options let it lower op type d (beyond the op table's
	 * capability bit); NULL = all it can. */
	int (*lowers)(const void *o, const enpu_opdef *d);
	/* The fix line when lowers() refused d (lowered_by: the backends
	 * that lower it); NULL = the generic one. */
	void (*lowers_fix)(const void *o, const enpu_opdef *d, const char *lowered_by, char *fix,
			   size_t cap);

	/* ---- compile and load ---- */
	/* The backend's own plan of g under o (NULL = none): an npu model, a
	 * PL partition. Compile writes it; loading derives it again and checks
	 * the artifact against it. */
	int (*plan)(const enpu_graph *g, const void *o, uint64_t arena_bytes, void **st,
		    enpu_err *e);
	void (*state_free)(void *st);
	/* graph.json's "lowering" of op k (returned) and "kernel" (into
	 * kernel). st may be NULL only for backends without plan(). */
	const char *(*lowering)(const enpu_graph *g, const void *st, int k, char *kernel,
				size_t cap);
	/* plan.json's section (named `section`), new reference; NULL = none. */
	struct json_object *(*plan_json)(const enpu_graph *g, const void *o, const void *st);
	/* Loading: plan.json's section (NULL when absent) says what o and st
	 * say. ENPU_E_ARTIFACT naming label otherwise. NULL = nothing to check
	 * (then the section must be absent). */
	int (*check_plan)(const enpu_graph *g, const void *o, const void *st,
			  struct json_object *section, const char *label, enpu_err *e);
	/* A trusted load (ENPU_LOAD_TRUSTED): st read back from plan.json's
	 * section instead of derived again (NULL = always derive). 1 = the
	 * section predates the facts it needs (an older build's artifact):
	 * the loader derives st with plan() and checks it with check_plan(). */
	int (*plan_read)(const enpu_graph *g, const void *o, uint64_t arena_bytes,
			 struct json_object *section, const char *label, void **st,
			 enpu_err *e);
	/* What compile, validate and a run report: PL/PS op counts. */
	void (*counts)(const enpu_graph *g, const void *st, int *pl_ops, int *ps_ops,
		       int *pl_segments);

	/* ---- run ---- */
	/* Prepare a run of artifact a (options o, state st): set en->hook and
	 * en->hook_ctx when the backend takes ops over. *run may stay NULL. */
	int (*run_open)(const struct enpu_artifact *a, const void *o, const void *st,
			enpu_engine *en, void **run, enpu_err *e);
	/* report.json's section (named `section`), new reference; and the
	 * run's numbers into ri. */
	struct json_object *(*report_json)(const enpu_graph *g, const void *o, const void *st,
					   void *run);
	void (*run_info)(const enpu_graph *g, const void *o, const void *st, void *run,
			 struct enpu_run_info *ri);
	void (*run_close)(void *run);
} enpu_backend_def;

/* The registry: every backend, a row each; enpu_backend_count(),
 * enpu_backend_name() and enpu_backend_parse() are in ops.h. */
const enpu_backend_def *enpu_backend_by_name(const char *name);   /* NULL if unknown */
const enpu_backend_def *enpu_backend_at(int i);                   /* NULL if out of range */
int enpu_backend_index(const enpu_backend_def *d);                /* -1 if not a row */
/* "cpu_ref, npu_sim, zynq_ps, fpga_board" into buf. */
void enpu_backend_names(char *buf, size_t cap);
/* Bits (1u << index) of the backends whose jobs run on board agents. */
unsigned enpu_backends_on_board(void);
/* Bits (1u << index) of the backends that can lower op type d. */
unsigned enpu_backends_lowering(const enpu_opdef *d);

/* How many ops the backend puts on a PL and on a PS for graph g under
 * target t, derived from its plan: for validate, which has no artifact
 * (compile records them once in manifest.json's summary,
 * enpu_msummary_of); all 0 for backends without such a split. */
struct enpu_target;
int enpu_backend_counts(const enpu_graph *g, const struct enpu_target *t, int *pl_ops,
			int *ps_ops, int *segments, enpu_err *e);

/* A loaded artifact's backend, its target options (NULL when it takes
 * none) and its plan state (NULL without plan()): artifact.c. */
const enpu_backend_def *enpu_artifact_def(const struct enpu_artifact *a);
const void *enpu_artifact_options(const struct enpu_artifact *a);
const void *enpu_artifact_state(const struct enpu_artifact *a);

/* Helpers for backends: a target node that must be a mapping (or absent). */
int enpu_backend_need_map(const enpu_backend_def *d, const struct enpu_ynode *node,
			  const char *label, enpu_err *e);

extern const enpu_backend_def enpu_bk_cpu_ref, enpu_bk_npu_sim, enpu_bk_zynq_ps,
	enpu_bk_fpga_board;

#endif

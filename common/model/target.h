/* target.h: the resolved target options of one backend for one compile:
 * from `compile --target FILE.yaml` when given, else the spec's
 * targets.<backend>, with defaults filled and validated. The canonical JSON
 * of the options goes into manifest.json and the compile cache key. */
#ifndef ENPU_TARGET_H
#define ENPU_TARGET_H

#include "spec.h"

struct json_object;

typedef struct enpu_target enpu_target;   /* opaque */

/* backend NULL = the spec's. path NULL = the spec's targets.<backend>;
 * otherwise a YAML file (label names it in errors) whose root mapping holds
 * the backend's options (the same fields as targets.<backend>). Unknown
 * backend: ENPU_E_BACKEND. Invalid options: ENPU_E_TARGET at the YAML node.
 * Backends without options (cpu_ref) accept an empty or absent mapping. */
int enpu_target_resolve(const enpu_spec *s, const char *backend, const char *path,
			const char *label, const enpu_limits *lim, enpu_target **out,
			enpu_err *e);
void enpu_target_free(enpu_target *t);

const char *enpu_target_backend(const enpu_target *t);
/* Its backend's row of the registry (backend.h), and the backend's own
 * options (NULL for a backend that takes none). */
const struct enpu_backend_def *enpu_target_def(const enpu_target *t);
const void *enpu_target_options(const enpu_target *t);
/* Canonical JSON (keys sorted, defaults filled); borrowed; NULL for a
 * backend without options. */
struct json_object *enpu_target_json(const enpu_target *t);
/* 1 if the target lowers op type d (backend capability and, for npu_sim,
 * the target's `ops:` list). */
int enpu_target_lowers(const enpu_target *t, const enpu_opdef *d);

/* enpu_validate with resolved target options: a capability failure names
 * the op, the backend, and the capability matrix (ENPU_E_LOWERING). */
int enpu_validate_for(const enpu_spec *s, const enpu_target *t, enpu_graph **out,
		      enpu_err *e);

#endif

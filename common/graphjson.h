/* graphjson.h: enpu_graph <-> graph.json, and the small json-c helpers that
 * graph.json, plan.json and manifest.json share (one output style, typed
 * field access whose errors name the file and the field). Internal to common/. */
#ifndef ENPU_GRAPHJSON_H
#define ENPU_GRAPHJSON_H

#include <stdint.h>
#include <json-c/json.h>
#include "ir.h"
#include "buf.h"

/* Maximum size of any JSON file of an artifact. */
#define ENPU_ARTIFACT_MAX_JSON (64u << 20)

/* Serialize o (pretty, two-space indent, no slash escapes, trailing
 * newline) appended to out: the same object gives the same bytes. */
int enpu_json_dump(struct json_object *o, enpu_buf *out, enpu_err *e);

/* Building objects without checking every call: add (or push) v, or, when
 * v is NULL (an allocation failed) or cannot be added, drop it and set
 * *bad. The caller checks *bad once at the end. */
void enpu_json_put(struct json_object *o, const char *k, struct json_object *v, int *bad);
void enpu_json_push(struct json_object *a, struct json_object *v, int *bad);
/* An integer-valued double as an integer ("1000"), else the shortest %.Ng
 * that reads back as the same double: canonical and exact. */
struct json_object *enpu_json_exact_double(double d);
/* qsort comparison of two const char * (strcmp order). */
int enpu_cmp_strptr(const void *a, const void *b);

/* Parse strict JSON of exactly len bytes. NULL with ENPU_E_ARTIFACT naming
 * label on any syntax error. Caller puts the result. */
struct json_object *enpu_json_parse(const char *text, size_t len, const char *label,
				    enpu_err *e);

/* Field access: o must be an object; key must exist with type t. Errors are
 * ENPU_E_ARTIFACT "<label>: <ctx>field 'key' ...". ctx may be "" or e.g.
 * "op 'fc1': ". The result is borrowed. */
struct json_object *enpu_json_field(struct json_object *o, const char *key, json_type t,
				    const char *label, const char *ctx, enpu_err *e);
/* An integer in [lo, hi]. */
int enpu_json_int(struct json_object *v, int64_t lo, int64_t hi, const char *label,
		  const char *what, int64_t *out, enpu_err *e);

/* A deep copy with object keys sorted (strcmp), recursively: the canonical
 * form used for target options. NULL in, NULL out. */
struct json_object *enpu_json_canonical(struct json_object *o);

/* graph.json from g; weights names the backend weights file and layout its
 * layout ("spec": every v1 backend, npu_sim included, keeps the spec's
 * layout). Each op's "kernel" and "lowering" are the backend's
 * (enpu_backend_def.lowering, with its plan state st; NULL for backends
 * without one). */
int enpu_graph_to_json(const enpu_graph *g, const char *weights, const char *layout,
		       const void *st, enpu_buf *out, enpu_err *e);

/* graph.json's (text) per-op kernel and lowering are what g's backend
 * gives with plan state st. ENPU_E_ARTIFACT naming label otherwise. */
int enpu_graph_check_lowerings(const enpu_graph *g, const void *st, const char *text, size_t len,
			       const char *label, enpu_err *e);

/* Parse graph.json into a new graph: every reference resolved, every op's
 * shape rule re-run and compared with the recorded shapes, tensors produced
 * once and before use; producer/last_use recomputed. *weights gets the
 * recorded weights file (malloc'd). ENPU_E_ARTIFACT on any inconsistency. */
int enpu_graph_from_json(const char *text, size_t len, const char *label,
			 const enpu_limits *lim, enpu_graph **out, char **weights,
			 enpu_err *e);

/* manifest.json (artifact.c): files are n entries sorted by path (strcmp).
 * spec_sha256 / weights_sha256 may be NULL (written as null); target is
 * the canonical target options or NULL. */
typedef struct enpu_manifest_file {
	const char *path;
	char sha256[65];
	uint64_t bytes;
} enpu_manifest_file;

int enpu_manifest_to_json(const char *id, const char *backend, const char *spec_name,
			  const char *spec_sha256, const char *weights_sha256,
			  const char *weights, const char *layout,
			  struct json_object *target, const enpu_manifest_file *files,
			  int n, enpu_buf *out, enpu_err *e);

#endif

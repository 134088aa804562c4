/* graphjson.h: enpu_graph <-> graph.json, and manifest.json's writer.
 * Internal to common/; the shared json-c helpers are json.h's. */
#ifndef ENPU_GRAPHJSON_H
#define ENPU_GRAPHJSON_H

#include <stdint.h>
#include "ir.h"
#include "json.h"
#include "wire.h"

/* graph.json from g; weights names the backend weights file and layout its
 * layout ("spec": every v1 backend, npu_sim included, keeps the spec's
 * layout). Each op's "kernel" and "lowering" are the backend's
 * (enpu_backend_def.lowering, with its plan state st; NULL for backends
 * without one). */
int enpu_graph_to_json(const enpu_graph *g, const char *weights, const char *layout,
		       const void *st, enpu_buf *out, enpu_err *e);

/* The graph's outputs in order, [{"name", "shape"}]: what report.json says
 * and, as the loaded artifact keeps it (enpu_artifact_outputs_json), a
 * job's "outputs". NULL when memory runs out. */
struct json_object *enpu_graph_outputs_json(const enpu_graph *g);

/* graph.json's (root: the parsed document g was read from) per-op kernel
 * and lowering are what g's backend gives with plan state st.
 * ENPU_E_ARTIFACT naming label otherwise. */
int enpu_graph_check_lowerings(const enpu_graph *g, const void *st, struct json_object *root,
			       const char *label, enpu_err *e);

/* Parse graph.json into a new graph: every reference resolved, every op's
 * shape rule re-run and compared with the recorded shapes, tensors produced
 * once and before use; producer/last_use recomputed. *weights gets the
 * recorded weights file (malloc'd). ENPU_E_ARTIFACT on any inconsistency. */
int enpu_graph_from_json(const char *text, size_t len, const char *label,
			 const enpu_limits *lim, enpu_graph **out, char **weights,
			 enpu_err *e);
/* The same from the parsed document (borrowed): the artifact loader
 * parses graph.json once for this and enpu_graph_check_lowerings. */
int enpu_graph_from_root(struct json_object *root, const char *label, const enpu_limits *lim,
			 enpu_graph **out, char **weights, enpu_err *e);

/* manifest.json (artifact.c; its reader is enpu_manifest_parse, wire.h):
 * files are n entries sorted by path (strcmp). spec_sha256 /
 * weights_sha256 may be NULL (written as null); target is the canonical
 * target options or NULL; summary the compile's facts. */
typedef struct enpu_manifest_file {
	const char *path;
	char sha256[65];
	uint64_t bytes;
} enpu_manifest_file;

int enpu_manifest_to_json(const char *id, const char *backend, const char *spec_name,
			  const char *spec_sha256, const char *weights_sha256,
			  const char *weights, const char *layout,
			  struct json_object *target, const enpu_msummary *summary,
			  const enpu_manifest_file *files, int n, enpu_buf *out, enpu_err *e);

/* The summary facts of graph g with memory arena arena_bytes, planned by
 * backend def into state st: compile writes them, loading compares. */
struct enpu_backend_def;
void enpu_msummary_of(const enpu_graph *g, uint64_t arena_bytes,
		      const struct enpu_backend_def *def, const void *st, enpu_msummary *s);
/* The summary of a loaded artifact, derived from it (what its manifest
 * says, or would say: an older build's manifest has none). */
struct enpu_artifact;
void enpu_artifact_summary(const struct enpu_artifact *a, enpu_msummary *s);
/* Every check enpu_artifact_load_ex makes with flags, without a handle and
 * without the weights' arrays: the weights file's members are scanned
 * (their .npy headers, enpu_npz_scan, as a compile scans its weights blob)
 * and bound to the graph by name, dtype and shape; only gather's index
 * arrays are read, to be checked. For an artifact to be stored, not run
 * now (the daemon's import from its remote cache). The summary its files
 * give into *s (NULL: not wanted). 0, or -1 + *e as the load fails. */
int enpu_artifact_check(const char *dir, const enpu_limits *lim, unsigned flags,
			enpu_msummary *s, enpu_err *e);

#endif

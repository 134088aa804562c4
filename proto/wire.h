/* wire.h: what both sides of the API read and write the same way: the
 * error object {"code","message","where","fix"} to and from an enpu_err,
 * string fields, the one rule for a relative path that names a file of an
 * artifact, the one reader of an artifact's manifest.json, and the job
 * JSON (GET /v1/jobs/{id}) read into a struct. */
#ifndef ENPU_WIRE_H
#define ENPU_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include "err.h"
#include "buf.h"

struct json_object;

/* o's string member key, or NULL (o NULL, no such key, not a string). */
const char *enpu_wire_str(struct json_object *o, const char *key);

/* err's code, message, where and fix as *e (reset first; a missing message
 * is the code's title): 0. When the code is missing or unknown, -1 and *e
 * reset only: the caller says whose error it was (*code and *msg, may be
 * NULL, get the strings as sent, or NULL). */
int enpu_wire_err_from_json(struct json_object *err, enpu_err *e, const char **code,
			    const char **msg);

/* 1 when p is a safe relative path of at most max bytes: non-empty, not
 * absolute, no empty, "." or ".." component (so no trailing slash), no
 * backslash and no control character; else 0 (also for NULL). Pure. */
int enpu_wire_path_is_safe(const char *p, size_t max);

/* ---- manifest.json: the one reader ------------------------------------
 * The writer is enpu_manifest_to_json (common/compile/artifact.c); the
 * format is docs/spec-format.md's "The artifact". Read by the artifact
 * loader, the daemon's cache (its own manifests and imported ones) and the
 * client (a directory it uploads). */

#define ENPU_MANIFEST_MAX   (1u << 20)   /* bytes of manifest.json */
#define ENPU_MANIFEST_FILES 64           /* files it may list */
#define ENPU_MANIFEST_PATH  255          /* bytes of a listed file's path */

typedef struct enpu_mfile {
	char path[ENPU_MANIFEST_PATH + 1];
	char sha256[65];
	uint64_t bytes;
} enpu_mfile;

/* manifest.json's "summary": the facts compile derives once, so that a
 * compile answer (cache hit or not) and a job submission need not load the
 * artifact. Loading an artifact derives them again and refuses a manifest
 * that says otherwise (so an imported manifest is checked once, at import).
 * partition: the backend splits the graph (fpga_board): its op counts. */
typedef struct enpu_msummary {
	int operators, components;
	uint64_t arena_bytes;
	int partition;
	int pl_ops, ps_ops, pl_segments;
} enpu_msummary;

typedef struct enpu_manifest {
	char id[65];                 /* checked against the files' digests */
	char backend[32];            /* a backend of the registry */
	char weights[ENPU_MANIFEST_PATH + 1];   /* a listed file */
	enpu_mfile *files;           /* n, sorted by path, no duplicate */
	int n;
	enpu_msummary summary;       /* valid when has_summary */
	int has_summary;             /* 0: an older build's manifest, without one */
	struct json_object *root;    /* the document (owned) */
	struct json_object *target;  /* root's "target" (borrowed): an object for
				      * a backend with options, else NULL */
} enpu_manifest;

/* Parse and validate manifest.json text (label names it in errors):
 * format, version, id (the sha256 enpu_artifact_id_of gives for the listed
 * files), a known backend and its target object, compiler, spec name,
 * layout, the weights file, files [{path, sha256, bytes}] (safe relative
 * paths, not manifest.json, strictly sorted, graph.json, plan.json and the
 * weights among them, at most ENPU_MANIFEST_FILES), and the summary when
 * there (an older build wrote none). 0, or -1 with ENPU_E_ARTIFACT (*m then
 * holds nothing). */
int enpu_manifest_parse(const char *text, size_t len, const char *label, enpu_manifest *m,
			enpu_err *e);
void enpu_manifest_free(enpu_manifest *m);
/* The listed file at path, or NULL. */
const enpu_mfile *enpu_manifest_find(const enpu_manifest *m, const char *path);
/* m's document with summary s (before "files", as compile writes it), in
 * enpu_json_dump's form: an older build's manifest, completed at import. */
int enpu_manifest_with_summary(const enpu_manifest *m, const enpu_msummary *s, enpu_buf *out,
			       enpu_err *e);
/* s's fields into object o (the summary's own keys, also those of a
 * compile answer: operators, components, arena_bytes[, pl_ops, ps_ops,
 * pl_segments]). 0, or -1 when out of memory. */
int enpu_msummary_to_json(const enpu_msummary *s, struct json_object *o);
/* ---- error objects out ---------------------------------------------------- */

/* A JSON string of s (NULL = "") where each byte that is not valid UTF-8
 * becomes U+FFFD, so that strict parsers read every answer. */
struct json_object *enpu_wire_text(const char *s);

/* e as the API's error object {"code","title","message","where","fix",
 * "see"} (an empty fix is the code's default). The reader above takes it
 * back. Caller puts. */
struct json_object *enpu_wire_err_to_json(const enpu_err *e);

/* ---- job JSON in ----------------------------------------------------------- */

#define ENPU_WIRE_JOB_OUTPUTS 64    /* outputs a job may list */
#define ENPU_WIRE_RANK 8            /* dimensions of one output */
#define ENPU_WIRE_DIM_MAX 2147483647LL

typedef struct enpu_wire_output {
	char name[128];
	int ndim;
	long long dim[ENPU_WIRE_RANK];
	int dtype;           /* enpu_dtype where the reader knows it (a board
			      * result's check: the artifact's), else 0 */
} enpu_wire_output;

/* The body of GET /v1/jobs/{id} as the readers of a job need it. Strings
 * absent or null are "", numbers absent or null are -1 (has_* says). */
typedef struct enpu_wire_job {
	char id[65], state[16], backend[32], board[64], failure[16];
	char result[65], report[65];          /* sha256 hex or "" */
	char waiting[512];                    /* queued: why it waits, or "" */
	double seconds, eta;
	long long position, attempts;
	int n_outputs;
	enpu_wire_output outputs[ENPU_WIRE_JOB_OUTPUTS];
	struct json_object *error;            /* borrowed from the parsed object, or NULL */
} enpu_wire_job;

/* Read job JSON o into *j: every known field must have its type (string,
 * number or null; outputs an array of {name, shape} within the bounds
 * above, result and report sha256 hex, state one of the job states);
 * unknown fields are ignored. 0, or -1 with why (may be NULL) saying
 * which field is wrong. id and state are required. j->error points into
 * o. Pure. */
int enpu_wire_job_read(struct json_object *o, enpu_wire_job *j, char *why, size_t cap);

/* A model's name and version, as the server keeps them and the client
 * asks for them (server/cache/models.h). A name: 1-64 of [A-Za-z0-9._-],
 * beginning with a letter or digit (a file name, never a path). A version:
 * 1 .. 2^31-1 in decimal, no sign, no leading zero; 0 = not a version. */
#define ENPU_MODEL_NAME_MAX 64
#define ENPU_MODEL_VERSION_MAX 2147483647L
int enpu_model_name_ok(const char *name);
long enpu_model_version_parse(const char *s);

/* A job's id: 16 lowercase hex digits (random), after "<node>-" when the
 * server has a --node-id, so that a balancer in front of several servers
 * routes /v1/jobs/<node>-... to the one that owns the job
 * (examples/lab-balancer/). A node id: 1-16 of [a-z0-9]. */
#define ENPU_NODE_ID_MAX 16
#define ENPU_JOB_HEX 16
#define ENPU_JOB_ID_SIZE (ENPU_NODE_ID_MAX + 1 + ENPU_JOB_HEX + 1)   /* with the NUL */
int enpu_node_id_ok(const char *node);
/* 1 when id is a job id of that form, its node (or "" without one) into
 * node; 0 otherwise (node ""). node may be NULL. */
int enpu_job_id_parse(const char *id, char node[ENPU_NODE_ID_MAX + 1]);

#endif

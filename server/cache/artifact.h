/* artifact.h: the artifact index of the cache: artifacts/<id>/ directories
 * with their manifest.json, ingest of a fresh compile, import of a manifest
 * built elsewhere, and a small refcounted LRU of loaded enpu_artifact
 * handles shared by the compile route and the job workers. */
#ifndef SRV_ARTIFACT_H
#define SRV_ARTIFACT_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include "enpu.h"
#include "buf.h"
#include "cas.h"
#include "wire.h"

struct json_object;

/* artifacts/<2 hex>/<id> (whether or not it exists). */
void srv_artifact_dir(const srv_cas *c, const char *id, char *out, size_t cap);
/* Read artifacts/<id>/manifest.json (raw bytes into *raw if non-NULL) and
 * parse it (enpu_manifest_parse: ENPU_E_ARTIFACT). -1 with ENPU_E_NOT_FOUND
 * when absent. The cache's manifests are its own or verified at import:
 * their summary is trusted. */
int srv_artifact_manifest(srv_cas *c, const char *id, enpu_manifest *m, enpu_buf *raw,
			  enpu_err *e);
/* Cheap consistency check: directory present, manifest parses, its files
 * are present with the listed sizes, and its recomputed id is id. 1 = ok. */
int srv_artifact_present(srv_cas *c, const char *id);

/* Integrity: every listed file of artifacts/<id> hashes to its manifest
 * digest (srv_cas_check_file: a stat when already verified and unchanged)
 * and the manifest gives id. 1 = good, 0 = absent. A bad artifact is
 * dropped (srv_artifact_drop), its bad blobs too, and counted: 0 then too,
 * with *e (ENPU_E_NOT_FOUND) saying why when e is non-NULL. On 1, *keep
 * (when non-NULL) is the manifest it checked, the caller's to free. */
int srv_artifact_verify(srv_cas *c, const char *id, enpu_manifest *keep, enpu_err *e);
/* 1 when srv_artifact_verify would pass on stats alone (every file known
 * good: nothing to hash), with its manifest's backend in backend; 0 when
 * it would have to read something (nothing dropped). A manifest that
 * stats as when last checked is not parsed again (a stat per file). */
int srv_artifact_known_good(srv_cas *c, const char *id, char *backend, size_t cap);
/* Remove artifacts/<id>, the action-cache entries naming it, and its loaded
 * handle (at once, or when the last user releases it). 1 = it existed. */
int srv_artifact_drop(srv_cas *c, const char *id);
/* The same, leaving what it takes out of the cache (renamed into tmp/) in
 * later for the caller's srv_paths_remove: a pass dropping many removes
 * them together. */
int srv_artifact_drop_into(srv_cas *c, const char *id, srv_paths *later);
/* Touch (srv_cas_touch) every blob of artifact id and its manifest: it is
 * being used. Silent when the artifact is absent. */
void srv_artifact_touch(srv_cas *c, const char *id);
/* Number of artifacts in the cache (the index's count: no disk access). */
long srv_artifact_count(srv_cas *c);

/* A fresh compile's output dir (under tmp/): store every listed file and
 * manifest.json in the CAS, then move the dir to artifacts/<id> (an
 * existing one is kept and dir removed). */
int srv_artifact_ingest(srv_cas *c, const char *dir, const char *id, enpu_err *e);
/* The same for a compile's own output, written into dir by
 * enpu_compiled_write: its files are stored by the digests enpu_compile_mem
 * computed, not read and hashed again. */
struct enpu_compiled;
int srv_artifact_ingest_compiled(srv_cas *c, const char *dir, const struct enpu_compiled *cc,
				 enpu_err *e);

/* Import a manifest for artifact id, untrusted: the artifact is loaded
 * (enpu_artifact_load: every file, and the summary against what they
 * give) before it becomes visible, and its handle kept for the first job.
 * The files' digests are not computed again when the cache knows them
 * good (their blobs hashed as they were stored, or by the check of the
 * missing blobs; ENPU_LOAD_HASHED). Blobs the CAS lacks are returned in
 * *missing (a json array, caller puts) with -1 and ENPU_E_BLOB_MISSING.
 * *created = 0 when the artifact was already present. */
int srv_artifact_import(srv_cas *c, const char *id, const char *text, size_t len,
			const enpu_limits *lim, struct json_object **missing, int *created,
			enpu_err *e);
/* The same for an artifact to be stored, not run now (the remote cache's
 * fetch): checked as deep (enpu_artifact_check: the weights by their
 * headers, their arrays not read), no handle kept. */
int srv_artifact_import_stored(srv_cas *c, const char *id, const char *text, size_t len,
			       const enpu_limits *lim, struct json_object **missing, int *created,
			       enpu_err *e);

/* [{path, sha256, bytes}...] of the manifest, then manifest.json itself;
 * local: each also with "local", its absolute path in the cache (for the
 * daemon's own user, who may link it instead of downloading it). */
struct json_object *srv_artifact_files_json(const srv_cas *c, const enpu_manifest *m,
					    const enpu_buf *raw, int local);

/* Loaded artifacts: get checks the files on disk (srv_artifact_verify: a
 * failing artifact is dropped and answers ENPU_E_NOT_FOUND) and loads (and
 * verifies) on a miss; every get is paired with a release. The LRU holds a
 * few handles; ones in use are never freed. */
int srv_artifact_get(srv_cas *c, const char *id, const enpu_limits *lim,
		     enpu_artifact **out, enpu_err *e);
/* The same without the check, for a caller that has just made it
 * (srv_artifact_verify in the same request). */
int srv_artifact_get_checked(srv_cas *c, const char *id, const enpu_limits *lim,
			     enpu_artifact **out, enpu_err *e);
void srv_artifact_release(enpu_artifact *a);
void srv_artifact_cache_clear(void);

#endif

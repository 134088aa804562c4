/* models.h: named, versioned models (models.c). A model is a name with
 * numbered versions, each an artifact id; `eulernpu deploy` and
 * PUT /v1/models/{name}/versions/{v} add one, DELETE retires it, jobs and
 * the Open Inference Protocol run a model by name. On disk, in the cache:
 *   models/<name>.json   {"name", "versions": [{"version", "artifact",
 *                        "backend", "owner", "deployed"}]}
 * one file per model, replaced whole (written under tmp/, fsynced,
 * renamed, the directory fsynced): a crash leaves the old model or the
 * new. The files are read at start-up and checked as any input from a
 * shared directory: one that is not what the daemon writes is logged and
 * left out, never trusted. A deployed artifact is pinned against eviction
 * (srv_models_pins, evict.c). */
#ifndef SRV_MODELS_H
#define SRV_MODELS_H

#include "err.h"
#include "wire.h"

struct srv_cas;
struct json_object;
struct srv_ident;

#define SRV_MODEL_NAME_MAX ENPU_MODEL_NAME_MAX   /* bytes of a name (wire.h) */
#define SRV_MODEL_VERSIONS_MAX 1000  /* versions a model holds at once */
#define SRV_MODEL_VERSION_MAX ENPU_MODEL_VERSION_MAX

typedef struct srv_models srv_models;

/* The models of cache c (models/ made if missing). NULL + *e. */
srv_models *srv_models_open(struct srv_cas *c, enpu_err *e);
void srv_models_close(srv_models *m);

/* Names and versions: enpu_model_name_ok, enpu_model_version_parse (wire.h). */
/* "name" or "name:version" -> name (cap bytes) and version (0 = none
 * given). 0, or -1 with *e (E0803 naming field). */
int srv_model_ref_parse(const char *ref, const char *field, char *name, size_t cap,
			long *version, enpu_err *e);

/* Deploy artifact (present in the cache, its backend given) as
 * name:version for who (version 0: one more than the highest, 1 for a
 * new model). *version_out gets the version. 1 = deployed, 0 = it was
 * already, -1 with *e: E0803 (name, version, too many versions), E0815
 * (the model is another owner's), E0821 (the version names another
 * artifact), E0810 (the file could not be written). */
int srv_models_deploy(srv_models *m, const char *name, long version, const char *artifact,
		      const char *backend, const struct srv_ident *who, long *version_out,
		      enpu_err *e);
/* Retire name:version (version 0: every version, and the model). 0, or -1
 * with *e: E0800 (no such model or version), E0815 (not who's). */
int srv_models_retire(srv_models *m, const char *name, long version,
		      const struct srv_ident *who, enpu_err *e);
/* The artifact of name:version, or with version 0 of the highest version
 * whose artifact is in the cache (ready); the version into *version_out.
 * 0, or -1 with *e (E0800: no such model or version, or none ready). */
int srv_models_resolve(srv_models *m, const char *name, long version, char artifact[65],
		       long *version_out, enpu_err *e);
/* {"models": [model...]} (every model, by name), or one model (name not
 * NULL; NULL with *e E0800 when it is unknown). A model: {"name",
 * "latest" (the highest ready version, or null), "versions": [{"version",
 * "artifact", "backend", "owner", "deployed", "ready"}]}. */
struct json_object *srv_models_json(srv_models *m, const char *name, enpu_err *e);
/* The artifact ids of every version (malloc'd, *out), their count; -1
 * when memory runs out. */
int srv_models_pins(srv_models *m, char (**out)[65]);
/* How many models and versions are deployed (metrics, health). */
void srv_models_count(srv_models *m, long *models, long *versions);

#endif

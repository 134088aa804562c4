/* routes.h: the handlers of the REST API (one file per group) and the
 * table that http.c dispatches from. */
#ifndef SRV_ROUTES_H
#define SRV_ROUTES_H

#include <json-c/json.h>
#include "http.h"
#include "wire.h"

/* Shared by the routes: a required digest field naming a blob the CAS must
 * hold; its path in path. Answers 400 / 409 (with "missing") and returns -1. */
int srv_blob_field(srv_ctx *ctx, srv_req *r, const char *key, char *path, size_t cap);
/* The same for a blob the handler has just found good (srv_cas_known_good,
 * on the HTTP loop): who may read it, its touch and path, no second stat. */
int srv_blob_field_known(srv_ctx *ctx, srv_req *r, const char *key, char *path, size_t cap);
/* 409 E0804 with "missing" (a JSON array of digests, taken): "blob FIRST
 * ('KEY') WHY", so that the client uploads them (routes_misc.c). */
void srv_reply_blobs_missing(srv_req *r, json_object *missing, const char *key,
			     const char *first, const char *why);
/* routes_blobs.c: 1 when r's identity may read blob digest (an admin, an
 * uploader of it, or the owner of a job using it); record r's identity as
 * an uploader of digest after an upload that hashed to it. */
int srv_blob_readable(srv_ctx *ctx, srv_req *r, const char *digest);
void srv_blob_uploaded(srv_ctx *ctx, srv_req *r, const char *digest);

/* routes_misc.c */
void srv_get_health(srv_ctx *ctx, srv_req *r);
/* The bodies of GET /v1/health and GET /v1/cache, for the event stream too. */
struct json_object *srv_health_json(srv_ctx *ctx);
struct json_object *srv_cache_stats_json(srv_ctx *ctx);
/* routes_events.c: GET /v1/events, one stream of all jobs, boards, cache */
void srv_get_events(srv_ctx *ctx, srv_req *r);
void srv_get_backends(srv_ctx *ctx, srv_req *r);
void srv_post_compare(srv_ctx *ctx, srv_req *r);
void srv_get_metrics(srv_ctx *ctx, srv_req *r);
void srv_get_boards(srv_ctx *ctx, srv_req *r);
/* routes_models.c: a route's {name} (path param 0) and {v} (param 1)
 * checked by proto/wire.c's rules, for the v1 and the v2 model routes:
 * the name, or NULL with a 400 answered; the version (1 ..), or 0 so. */
const char *srv_model_path_name(srv_req *r);
long srv_model_path_version(srv_req *r);
/* routes_www.c: the status page (GET /, GET /ui/{file}) from --www DIR,
 * read at start-up: at most SRV_WWW_MAX_FILES files of SRV_WWW_MAX_BYTES
 * in all (--help and eulernpud.8 give both numbers), named
 * [a-z0-9][a-z0-9._-]* with a known extension (others left out). */
#define SRV_WWW_MAX_FILES 64
#define SRV_WWW_MAX_BYTES (8 << 20)
typedef struct srv_www srv_www;
/* NULL + *e (E0816 naming DIR) when it cannot be read, lacks index.html
 * or is past the bounds. */
srv_www *srv_www_load(const char *dir, enpu_err *e);
void srv_www_free(srv_www *w);
int srv_www_count(const srv_www *w);
/* BINDIR/../share/eulernpu/www or bin/../server/www, or NULL. */
const char *srv_www_default_dir(void);
void srv_get_www_index(srv_ctx *ctx, srv_req *r);
void srv_get_www_file(srv_ctx *ctx, srv_req *r);
/* routes_blobs.c */
void srv_post_blobs_missing(srv_ctx *ctx, srv_req *r);
void srv_put_blob(srv_ctx *ctx, srv_req *r);
void srv_get_blob(srv_ctx *ctx, srv_req *r);
/* routes_compile.c */
void srv_post_validate(srv_ctx *ctx, srv_req *r);
void srv_post_compile(srv_ctx *ctx, srv_req *r);
/* routes_import.c */
void srv_post_import(srv_ctx *ctx, srv_req *r);
/* routes_artifacts.c */
void srv_get_artifact(srv_ctx *ctx, srv_req *r);
void srv_get_artifact_file(srv_ctx *ctx, srv_req *r);
void srv_put_artifact(srv_ctx *ctx, srv_req *r);
/* routes_jobs.c */
void srv_post_job(srv_ctx *ctx, srv_req *r);
/* Queue a run as POST /v1/jobs does, on a handler thread: the artifact
 * checked, the input present, board jobs routed; for a route of its own
 * (the Open Inference Protocol's infer), which then waits for it. A local
 * job that would start at once is run here, on the caller's thread,
 * before this returns. 0 with the job's id, or -1 + *e. */
int srv_job_submit(srv_ctx *ctx, const srv_ident *who, const char *art, const char *input,
		   const char *input_name, const char *model, int timeout_s, char id[ENPU_JOB_ID_SIZE],
		   enpu_err *e);
void srv_get_job(srv_ctx *ctx, srv_req *r);
void srv_delete_job(srv_ctx *ctx, srv_req *r);
void srv_get_job_result(srv_ctx *ctx, srv_req *r);
void srv_get_job_report(srv_ctx *ctx, srv_req *r);
void srv_list_jobs(srv_ctx *ctx, srv_req *r);        /* GET /v1/jobs?state=&backend=&limit= */
void srv_get_job_events(srv_ctx *ctx, srv_req *r);   /* server-sent events of a job */
/* routes_cache.c */
void srv_get_cache_stats(srv_ctx *ctx, srv_req *r);
void srv_get_cache_entries(srv_ctx *ctx, srv_req *r);
void srv_delete_cache_entry(srv_ctx *ctx, srv_req *r);
void srv_post_cache_gc(srv_ctx *ctx, srv_req *r);

/* routes_oip.c: the Open Inference Protocol v2 */
void srv_get_v2(srv_ctx *ctx, srv_req *r);
void srv_get_v2_live(srv_ctx *ctx, srv_req *r);
void srv_get_v2_ready(srv_ctx *ctx, srv_req *r);
void srv_get_v2_model(srv_ctx *ctx, srv_req *r);
void srv_get_v2_model_version(srv_ctx *ctx, srv_req *r);
void srv_get_v2_model_ready(srv_ctx *ctx, srv_req *r);
void srv_get_v2_model_version_ready(srv_ctx *ctx, srv_req *r);
void srv_post_v2_infer(srv_ctx *ctx, srv_req *r);
void srv_post_v2_version_infer(srv_ctx *ctx, srv_req *r);
void srv_post_v2_repository_index(srv_ctx *ctx, srv_req *r);

/* routes_models.c: named, versioned models */
void srv_get_models(srv_ctx *ctx, srv_req *r);
void srv_get_model(srv_ctx *ctx, srv_req *r);
void srv_delete_model(srv_ctx *ctx, srv_req *r);
void srv_post_model_version(srv_ctx *ctx, srv_req *r);
void srv_put_model_version(srv_ctx *ctx, srv_req *r);
void srv_delete_model_version(srv_ctx *ctx, srv_req *r);

extern const srv_route srv_routes[];
extern const int srv_n_routes;

#endif

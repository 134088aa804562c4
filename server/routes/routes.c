/* routes.c: the REST API of eulernpud as one table (proto/api.h paths).
 * First match of method + pattern wins; a path that matches with another
 * method answers 405 with Allow. GET routes also answer HEAD. */
#include "srv.h"
#include "routes.h"

const srv_route srv_routes[] = {
	{"GET",    API_HEALTH,                      SRV_BODY_NONE, srv_get_health, SRV_ROLE_PUBLIC, SRV_ON_LOOP},
	{"GET",    API_BACKENDS,                    SRV_BODY_NONE, srv_get_backends, SRV_ROLE_USER, SRV_ON_LOOP},
	{"GET",    API_METRICS,                     SRV_BODY_NONE, srv_get_metrics, SRV_ROLE_USER, SRV_ON_LOOP},
	{"POST",   API_BLOBS_MISSING,               SRV_BODY_FORM, srv_post_blobs_missing, SRV_ROLE_USER, SRV_ON_THREAD},
	{"PUT",    API_BLOBS "*",                   SRV_BODY_BLOB, srv_put_blob, SRV_ROLE_USER, SRV_ON_THREAD},
	{"GET",    API_BLOBS "*",                   SRV_BODY_NONE, srv_get_blob, SRV_ROLE_USER, SRV_ON_THREAD},
	{"POST",   API_VALIDATE,                    SRV_BODY_SPEC, srv_post_validate, SRV_ROLE_USER, SRV_ON_THREAD},
	{"POST",   API_COMPILE,                     SRV_BODY_FORM, srv_post_compile, SRV_ROLE_USER, SRV_ON_THREAD},
	{"POST",   API_IMPORT,                      SRV_BODY_FORM, srv_post_import, SRV_ROLE_USER, SRV_ON_THREAD},
	{"GET",    API_ARTIFACTS "*",               SRV_BODY_NONE, srv_get_artifact, SRV_ROLE_USER, SRV_ON_THREAD},
	{"PUT",    API_ARTIFACTS "*",               SRV_BODY_RAW,  srv_put_artifact, SRV_ROLE_USER, SRV_ON_THREAD},
	{"GET",    API_ARTIFACTS "*" API_ARTIFACT_FILES "**", SRV_BODY_NONE, srv_get_artifact_file, SRV_ROLE_USER, SRV_ON_THREAD},
	{"POST",   API_JOBS,                        SRV_BODY_FORM, srv_post_job, SRV_ROLE_USER, SRV_ON_LOOP},
	{"GET",    API_JOBS,                        SRV_BODY_NONE, srv_list_jobs, SRV_ROLE_USER, SRV_ON_LOOP},
	{"GET",    API_JOBS "/*",                   SRV_BODY_NONE, srv_get_job, SRV_ROLE_USER, SRV_ON_LOOP_NOWAIT},
	{"GET",    API_JOBS "/*" API_JOB_EVENTS,    SRV_BODY_NONE, srv_get_job_events, SRV_ROLE_USER, SRV_ON_LOOP},
	{"DELETE", API_JOBS "/*",                   SRV_BODY_NONE, srv_delete_job, SRV_ROLE_USER, SRV_ON_THREAD},
	{"GET",    API_JOBS "/*" API_JOB_RESULT,    SRV_BODY_NONE, srv_get_job_result, SRV_ROLE_USER, SRV_ON_THREAD},
	{"GET",    API_JOBS "/*" API_JOB_REPORT,    SRV_BODY_NONE, srv_get_job_report, SRV_ROLE_USER, SRV_ON_THREAD},
	{"POST",   API_COMPARE,                     SRV_BODY_FORM, srv_post_compare, SRV_ROLE_USER, SRV_ON_THREAD},
	{"GET",    API_BOARDS,                      SRV_BODY_NONE, srv_get_boards, SRV_ROLE_USER, SRV_ON_LOOP},
	{"GET",    API_CACHE,                       SRV_BODY_NONE, srv_get_cache_stats, SRV_ROLE_USER, SRV_ON_LOOP},
	{"GET",    API_CACHE_ENTRIES,               SRV_BODY_NONE, srv_get_cache_entries, SRV_ROLE_ADMIN, SRV_ON_THREAD},
	{"DELETE", API_CACHE_ENTRIES "/*",          SRV_BODY_NONE, srv_delete_cache_entry, SRV_ROLE_ADMIN, SRV_ON_THREAD},
	{"POST",   API_CACHE_GC,                    SRV_BODY_NONE, srv_post_cache_gc, SRV_ROLE_ADMIN, SRV_ON_THREAD},
	{"GET",    API_MODELS,                      SRV_BODY_NONE, srv_get_models, SRV_ROLE_USER, SRV_ON_THREAD},
	{"GET",    API_MODELS "/*",                 SRV_BODY_NONE, srv_get_model, SRV_ROLE_USER, SRV_ON_THREAD},
	{"DELETE", API_MODELS "/*",                 SRV_BODY_NONE, srv_delete_model, SRV_ROLE_USER, SRV_ON_THREAD},
	{"POST",   API_MODELS "/*" API_MODEL_VERSIONS, SRV_BODY_FORM, srv_post_model_version, SRV_ROLE_USER, SRV_ON_THREAD},
	{"PUT",    API_MODELS "/*" API_MODEL_VERSIONS "/*", SRV_BODY_FORM, srv_put_model_version, SRV_ROLE_USER, SRV_ON_THREAD},
	{"DELETE", API_MODELS "/*" API_MODEL_VERSIONS "/*", SRV_BODY_NONE, srv_delete_model_version, SRV_ROLE_USER, SRV_ON_THREAD},
	{"GET",    API_EVENTS,                      SRV_BODY_NONE, srv_get_events, SRV_ROLE_USER, SRV_ON_LOOP},
	/* the status page (routes_www.c): files only, its data comes from the API */
	{"GET",    API_ROOT,                        SRV_BODY_NONE, srv_get_www_index, SRV_ROLE_PUBLIC, SRV_ON_LOOP},
	{"GET",    API_UI "*",                      SRV_BODY_NONE, srv_get_www_file, SRV_ROLE_PUBLIC, SRV_ON_LOOP},
	/* the Open Inference Protocol v2 (routes_oip.c) */
	{"GET",    API_V2,                          SRV_BODY_NONE, srv_get_v2, SRV_ROLE_PUBLIC, SRV_ON_LOOP},
	{"GET",    API_V2_LIVE,                     SRV_BODY_NONE, srv_get_v2_live, SRV_ROLE_PUBLIC, SRV_ON_LOOP},
	{"GET",    API_V2_READY,                    SRV_BODY_NONE, srv_get_v2_ready, SRV_ROLE_PUBLIC, SRV_ON_LOOP},
	{"GET",    API_V2_MODELS "/*",              SRV_BODY_NONE, srv_get_v2_model, SRV_ROLE_USER, SRV_ON_THREAD},
	{"GET",    API_V2_MODELS "/*" API_V2_VERSIONS "/*", SRV_BODY_NONE, srv_get_v2_model_version, SRV_ROLE_USER, SRV_ON_THREAD},
	{"GET",    API_V2_MODELS "/*" API_V2_MODEL_READY, SRV_BODY_NONE, srv_get_v2_model_ready, SRV_ROLE_USER, SRV_ON_THREAD},
	{"GET",    API_V2_MODELS "/*" API_V2_VERSIONS "/*" API_V2_MODEL_READY, SRV_BODY_NONE, srv_get_v2_model_version_ready, SRV_ROLE_USER, SRV_ON_THREAD},
	{"POST",   API_V2_MODELS "/*" API_V2_INFER, SRV_BODY_RAW,  srv_post_v2_infer, SRV_ROLE_USER, SRV_ON_THREAD},
	{"POST",   API_V2_MODELS "/*" API_V2_VERSIONS "/*" API_V2_INFER, SRV_BODY_RAW, srv_post_v2_version_infer, SRV_ROLE_USER, SRV_ON_THREAD},
	{"POST",   API_V2_REPO_INDEX,               SRV_BODY_NONE, srv_post_v2_repository_index, SRV_ROLE_USER, SRV_ON_THREAD},
};
const int srv_n_routes = (int)(sizeof srv_routes / sizeof srv_routes[0]);

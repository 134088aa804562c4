/* routes.c: the REST API of eulernpud as one table (proto/api.h paths).
 * First match of method + pattern wins; a path that matches with another
 * method answers 405 with Allow. GET routes also answer HEAD. */
#include "srv.h"
#include "routes.h"

const srv_route srv_routes[] = {
	{"GET",    API_HEALTH,                      SRV_BODY_NONE, srv_get_health},
	{"GET",    API_BACKENDS,                    SRV_BODY_NONE, srv_get_backends},
	{"GET",    API_METRICS,                     SRV_BODY_NONE, srv_get_metrics},
	{"POST",   API_BLOBS_MISSING,               SRV_BODY_FORM, srv_post_blobs_missing},
	{"PUT",    API_BLOBS "*",                   SRV_BODY_BLOB, srv_put_blob},
	{"GET",    API_BLOBS "*",                   SRV_BODY_NONE, srv_get_blob},
	{"POST",   API_VALIDATE,                    SRV_BODY_SPEC, srv_post_validate},
	{"POST",   API_COMPILE,                     SRV_BODY_FORM, srv_post_compile},
	{"GET",    API_ARTIFACTS "*",               SRV_BODY_NONE, srv_get_artifact},
	{"PUT",    API_ARTIFACTS "*",               SRV_BODY_RAW,  srv_put_artifact},
	{"GET",    API_ARTIFACTS "*" API_ARTIFACT_FILES "**", SRV_BODY_NONE, srv_get_artifact_file},
	{"POST",   API_JOBS,                        SRV_BODY_FORM, srv_post_job},
	{"GET",    API_JOBS "/*",                   SRV_BODY_NONE, srv_get_job},
	{"DELETE", API_JOBS "/*",                   SRV_BODY_NONE, srv_delete_job},
	{"GET",    API_JOBS "/*" API_JOB_RESULT,    SRV_BODY_NONE, srv_get_job_result},
	{"GET",    API_JOBS "/*" API_JOB_REPORT,    SRV_BODY_NONE, srv_get_job_report},
	{"POST",   API_COMPARE,                     SRV_BODY_FORM, srv_post_compare},
	{"GET",    API_BOARDS,                      SRV_BODY_NONE, srv_get_boards},
};
const int srv_n_routes = (int)(sizeof srv_routes / sizeof srv_routes[0]);

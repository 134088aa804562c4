/* routes_artifacts.c: GET /v1/artifacts/{id} (manifest.json), GET
 * /v1/artifacts/{id}/files/{path} (only paths the manifest lists), and PUT
 * /v1/artifacts/{id}: import a manifest whose files are already blobs here.
 * An import never writes the action cache: it cannot answer a compile.
 * Reads verify the artifact's files first (srv_artifact_verify): a bad one
 * is dropped and answers 404, so `eulernpu run --artifact DIR` imports it
 * again. */
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>
#include "srv.h"
#include "digest.h"
#include "artifact.h"
#include "routes.h"

void srv_get_artifact(srv_ctx *ctx, srv_req *r)
{
	const char *id = srv_req_param(r, 0);
	char dir[4300], p[4400];
	enpu_manifest m;
	enpu_err e = ENPU_ERR_INIT;

	if (!srv_artifact_verify(ctx->cas, id, &m, &e)) {
		srv_reply_error(r, &e, NULL);
		return;
	}
	enpu_manifest_free(&m);
	srv_artifact_touch(ctx->cas, id);
	srv_artifact_dir(ctx->cas, id, dir, sizeof dir);
	snprintf(p, sizeof p, "%s/manifest.json", dir);
	srv_reply_file(r, p, "application/json");
}

void srv_get_artifact_file(srv_ctx *ctx, srv_req *r)
{
	const char *id = srv_req_param(r, 0), *path = srv_req_param(r, 1);
	char dir[4300], p[5400];
	enpu_manifest m;
	enpu_err e = ENPU_ERR_INIT;
	int listed;

	if (!srv_artifact_verify(ctx->cas, id, &m, &e)) {
		srv_reply_error(r, &e, NULL);
		return;
	}
	/* Only listed paths (checked plain and relative when parsed), so no
	 * request can reach outside the artifact's directory. */
	listed = !strcmp(path, "manifest.json") || enpu_manifest_find(&m, path);
	enpu_manifest_free(&m);
	if (!listed) {
		srv_reply_fail(r, ENPU_E_NOT_FOUND, path, "artifact '%.12s' has no file '%.200s'", id, path);
		return;
	}
	srv_artifact_dir(ctx->cas, id, dir, sizeof dir);
	snprintf(p, sizeof p, "%s/%s", dir, path);
	srv_reply_file(r, p, strstr(path, ".json") ? "application/json" : "application/octet-stream");
}

void srv_put_artifact(srv_ctx *ctx, srv_req *r)
{
	const char *id = srv_req_param(r, 0);
	const enpu_buf *raw = srv_req_raw(r);
	enpu_err e = ENPU_ERR_INIT;
	json_object *missing = NULL, *o;
	int created = 0;

	if (!enpu_is_sha256_hex(id)) {
		srv_reply_fail(r, ENPU_E_BAD_REQUEST, id, "'%.80s' is not an artifact id (64 lowercase hex)", id);
		return;
	}
	if (!raw || raw->len == 0) {
		srv_reply_fail(r, ENPU_E_BAD_REQUEST, NULL, "the body must be the artifact's manifest.json");
		return;
	}
	if (srv_artifact_import(ctx->cas, id, raw->data, raw->len, ctx->lim, &missing, &created,
				&e) != 0) {
		json_object *extra = NULL;
		if (missing && json_object_array_length(missing) > 0) {
			extra = json_object_new_object();
			json_object_object_add(extra, F_MISSING, json_object_get(missing));
		}
		json_object_put(missing);
		srv_reply_error(r, &e, extra);
		return;
	}
	json_object_put(missing);
	if (created)
		srv_log("info", "imported artifact=%.12s", id);
	o = json_object_new_object();
	json_object_object_add(o, F_ARTIFACT_ID, json_object_new_string(id));
	json_object_object_add(o, "created", json_object_new_boolean(created));
	srv_reply_json(r, created ? 201 : 200, o);
	if (created)
		srv_cache_enforce(ctx);
}

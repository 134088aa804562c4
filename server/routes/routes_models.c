/* routes_models.c: named, versioned models over HTTP (server/cache/models.h).
 * PUT /v1/models/{name}/versions/{v} {"artifact"} deploys (201; 200 when
 * it already was; 409 E0821 when the version names another artifact),
 * POST /v1/models/{name}/versions {"artifact"} deploys as the next
 * version, GET /v1/models lists, GET /v1/models/{name} shows one, DELETE
 * /v1/models/{name}[/versions/{v}] retires a version or the model. Anyone
 * with a token reads them; a model's owner (its first deployer) or an
 * admin changes it. Every handler runs on a thread: a deploy verifies its
 * artifact, a change writes the model's file. */
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>
#include "srv.h"
#include "api.h"
#include "digest.h"
#include "artifact.h"
#include "models.h"
#include "routes.h"

const char *srv_model_path_name(srv_req *r)
{
	const char *name = srv_req_param(r, 0);

	if (!enpu_model_name_ok(name)) {
		srv_reply_fail(r, ENPU_E_BAD_REQUEST, F_NAME,
			       "'%.80s' is not a model name (1-%d letters, digits, '.', '_', '-', "
			       "beginning with a letter or digit)", name ? name : "",
			       SRV_MODEL_NAME_MAX);
		return NULL;
	}
	return name;
}

long srv_model_path_version(srv_req *r)
{
	const char *s = srv_req_param(r, 1);
	long v = enpu_model_version_parse(s);

	if (!v)
		srv_reply_fail(r, ENPU_E_BAD_REQUEST, F_VERSION,
			       "'%.40s' is not a model version (a number from 1 to %ld)",
			       s ? s : "", SRV_MODEL_VERSION_MAX);
	return v;
}

/* Deploy the body's artifact as name:version (0: the next); the model
 * to answer with, and *created; NULL when an error was answered. */
static json_object *deploy(srv_ctx *ctx, srv_req *r, const char *name, long version,
			   int *created)
{
	const char *art;
	enpu_manifest m;
	enpu_err e = ENPU_ERR_INIT;
	json_object *o;
	char num[24];
	long got = 0;
	int rc;

	if (srv_field_str(r, F_ARTIFACT, 1, &art))
		return NULL;
	if (!enpu_is_sha256_hex(art)) {
		srv_reply_fail(r, ENPU_E_BAD_REQUEST, F_ARTIFACT,
			       "field 'artifact' is not an artifact id (64 lowercase hex): '%.80s'", art);
		return NULL;
	}
	/* a model runs only what the cache holds, checked now */
	if (!srv_artifact_verify(ctx->cas, art, &m, &e)) {
		srv_reply_error(r, &e, NULL);
		return NULL;
	}
	rc = srv_models_deploy(ctx->models, name, version, art, m.backend, srv_req_who(r), &got,
			       &e);
	enpu_manifest_free(&m);
	if (rc < 0) {
		srv_reply_error(r, &e, NULL);
		return NULL;
	}
	if (rc)
		srv_log("info", "model %s:%ld deployed: artifact %s by %s", name, got, art,
			srv_req_who(r)->name);
	if (!(o = srv_models_json(ctx->models, name, &e))) {
		srv_reply_error(r, &e, NULL);
		return NULL;
	}
	snprintf(num, sizeof num, "%ld", got);
	json_object_object_add(o, F_VERSION, json_object_new_string(num));
	*created = rc;
	return o;
}

void srv_put_model_version(srv_ctx *ctx, srv_req *r)
{
	const char *name = srv_model_path_name(r);
	json_object *o;
	long v;
	int created;

	if (name && (v = srv_model_path_version(r)) && (o = deploy(ctx, r, name, v, &created)))
		srv_reply_json(r, created ? 201 : 200, o);
}

/* the next version: always a new one */
void srv_post_model_version(srv_ctx *ctx, srv_req *r)
{
	const char *name = srv_model_path_name(r);
	json_object *o;
	int created;

	if (name && (o = deploy(ctx, r, name, 0, &created)))
		srv_reply_json(r, 201, o);
}

void srv_get_models(srv_ctx *ctx, srv_req *r)
{
	enpu_err e = ENPU_ERR_INIT;
	json_object *o = srv_models_json(ctx->models, NULL, &e);

	if (!o)
		srv_reply_error(r, &e, NULL);
	else
		srv_reply_json(r, 200, o);
}

void srv_get_model(srv_ctx *ctx, srv_req *r)
{
	enpu_err e = ENPU_ERR_INIT;
	const char *name = srv_model_path_name(r);
	json_object *o;

	if (!name)
		return;
	if (!(o = srv_models_json(ctx->models, name, &e)))
		srv_reply_error(r, &e, NULL);
	else
		srv_reply_json(r, 200, o);
}

static void retire(srv_ctx *ctx, srv_req *r, const char *name, long version)
{
	enpu_err e = ENPU_ERR_INIT;
	json_object *o;
	char num[24];

	if (srv_models_retire(ctx->models, name, version, srv_req_who(r), &e) != 0) {
		srv_reply_error(r, &e, NULL);
		return;
	}
	srv_log("info", "model %s%s%.0ld retired by %s", name, version ? ":" : "", version,
		srv_req_who(r)->name);
	o = json_object_new_object();
	json_object_object_add(o, F_NAME, json_object_new_string(name));
	snprintf(num, sizeof num, "%ld", version);
	json_object_object_add(o, F_VERSION, version ? json_object_new_string(num) : NULL);
	json_object_object_add(o, F_REMOVED, json_object_new_boolean(1));
	srv_reply_json(r, 200, o);
}

void srv_delete_model(srv_ctx *ctx, srv_req *r)
{
	const char *name = srv_model_path_name(r);

	if (name)
		retire(ctx, r, name, 0);
}

void srv_delete_model_version(srv_ctx *ctx, srv_req *r)
{
	const char *name = srv_model_path_name(r);
	long v;

	if (name && (v = srv_model_path_version(r)))
		retire(ctx, r, name, v);
}

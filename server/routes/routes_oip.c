/* routes_oip.c: the Open Inference Protocol v2 over HTTP, as KServe and
 * Triton define it, over the deployed models (server/cache/models.h):
 * GET /v2 (server metadata), /v2/health/live, /v2/health/ready,
 * GET /v2/models/{name}[/versions/{v}] (metadata: platform
 * eulernpu_<backend>, inputs and outputs), .../ready, POST .../infer, and
 * Triton's POST /v2/repository/index. An infer request's FP32 tensors
 * (JSON data, flat or nested, or the binary tensor data extension) become
 * an input.npz in the cache, run as a job through the same queue as
 * POST /v1/jobs (priorities, timeouts, metrics, boards), and its
 * result.npz is answered as tensors: the same bytes `eulernpu run` writes.
 * Errors are the protocol's {"error": "..."} (http_reply.c, for every
 * path under /v2). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "srv.h"
#include "api.h"
#include "buf.h"
#include "digest.h"
#include "npz.h"
#include "cas.h"
#include "artifact.h"
#include "jobs.h"
#include "models.h"
#include "routes.h"
#include "wire.h"
#include "enpu.h"
#include "json.h"

#define OIP_DATA_DEPTH 64          /* nesting of a tensor's "data" */
#define OIP_INPUT_NAME "infer.npz" /* the job's input label */

/* ---- health and metadata --------------------------------------------------------- */

void srv_get_v2(srv_ctx *ctx, srv_req *r)
{
	json_object *o = json_object_new_object(), *ext = json_object_new_array();

	(void)ctx;
	json_object_array_add(ext, json_object_new_string("binary_tensor_data"));
	json_object_array_add(ext, json_object_new_string("model_repository"));
	json_object_object_add(o, F_NAME, json_object_new_string("eulernpud"));
	json_object_object_add(o, F_VERSION, json_object_new_string(ENPU_VERSION));
	json_object_object_add(o, F_EXTENSIONS, ext);
	srv_reply_json(r, 200, o);
}

void srv_get_v2_live(srv_ctx *ctx, srv_req *r)
{
	json_object *o = json_object_new_object();

	(void)ctx;
	json_object_object_add(o, F_LIVE, json_object_new_boolean(1));
	srv_reply_json(r, 200, o);
}

/* Ready unless the daemon drains or stops (then 503: a probe takes it
 * out of rotation while running jobs finish). */
void srv_get_v2_ready(srv_ctx *ctx, srv_req *r)
{
	json_object *o = json_object_new_object();
	int ready = !ctx->draining && !ctx->stopping;

	json_object_object_add(o, F_READY, json_object_new_boolean(ready));
	srv_reply_json(r, ready ? 200 : 503, o);
}

/* name (path param 0) and version (param 1 when the route has it, else
 * 0) resolved to the artifact that runs; the artifact loaded into *a.
 * 0, or -1 with the error answered. */
static int resolve(srv_ctx *ctx, srv_req *r, int versioned, char art[65], long *version,
		   enpu_artifact **a)
{
	const char *name = srv_model_path_name(r);
	enpu_err e = ENPU_ERR_INIT;

	*version = 0;
	*a = NULL;
	if (!name || (versioned && !(*version = srv_model_path_version(r))))
		return -1;
	if (srv_models_resolve(ctx->models, name, *version, art, version, &e) != 0 ||
	    srv_artifact_get(ctx->cas, art, ctx->lim, a, &e) != 0) {
		srv_reply_error(r, &e, NULL);
		return -1;
	}
	return 0;
}

/* OIP's datatype of a spec dtype (spec v3's int8, uint8, int32 too) */
static const char *oip_datatype(enpu_dtype t)
{
	switch (t) {
	case ENPU_DT_F32:
		return "FP32";
	case ENPU_DT_I64:
		return "INT64";
	case ENPU_DT_I8:
		return "INT8";
	case ENPU_DT_U8:
		return "UINT8";
	case ENPU_DT_I32:
		return "INT32";
	default:
		return "BYTES";
	}
}

static json_object *shape_json(const enpu_shape *s)
{
	json_object *a = json_object_new_array();

	for (int d = 0; d < s->ndim; d++)
		json_object_array_add(a, json_object_new_int64(s->dim[d]));
	return a;
}

static json_object *tensors_meta(const enpu_graph *g, const int *idx, int n)
{
	json_object *arr = json_object_new_array();

	for (int i = 0; i < n; i++) {
		const enpu_irtensor *t = &g->tensors[idx[i]];
		json_object *o = json_object_new_object();

		json_object_object_add(o, F_NAME, json_object_new_string(t->name));
		json_object_object_add(o, F_DATATYPE, json_object_new_string(oip_datatype(t->dtype)));
		json_object_object_add(o, F_SHAPE, shape_json(&t->shape));
		json_object_array_add(arr, o);
	}
	return arr;
}

static void model_metadata(srv_ctx *ctx, srv_req *r, int versioned)
{
	enpu_err e = ENPU_ERR_INIT;
	enpu_artifact *a;
	json_object *o, *m, *vs, *names;
	const enpu_graph *g;
	char art[65], plat[48];
	long v;

	if (resolve(ctx, r, versioned, art, &v, &a) != 0)
		return;
	if (!(m = srv_models_json(ctx->models, srv_req_param(r, 0), &e))) {
		srv_artifact_release(a);
		srv_reply_error(r, &e, NULL);
		return;
	}
	g = enpu_artifact_graph(a);
	o = json_object_new_object();
	names = json_object_new_array();
	if (json_object_object_get_ex(m, F_VERSIONS, &vs))
		for (size_t i = 0; i < json_object_array_length(vs); i++)
			json_object_array_add(names, json_object_get(json_object_object_get(
				json_object_array_get_idx(vs, i), F_VERSION)));
	snprintf(plat, sizeof plat, "eulernpu_%s", enpu_artifact_backend(a));
	json_object_object_add(o, F_NAME, json_object_new_string(srv_req_param(r, 0)));
	json_object_object_add(o, F_VERSIONS, names);
	json_object_object_add(o, F_PLATFORM, json_object_new_string(plat));
	json_object_object_add(o, F_INPUTS, tensors_meta(g, g->inputs, g->n_inputs));
	json_object_object_add(o, F_OUTPUTS, tensors_meta(g, g->outputs, g->n_outputs));
	json_object_put(m);
	srv_artifact_release(a);
	srv_reply_json(r, 200, o);
}

void srv_get_v2_model(srv_ctx *ctx, srv_req *r)
{
	model_metadata(ctx, r, 0);
}

void srv_get_v2_model_version(srv_ctx *ctx, srv_req *r)
{
	model_metadata(ctx, r, 1);
}

/* 200 {"name", "ready": true} when the model (version) can run; an
 * unknown one is 404, one whose artifact is gone 404 too (as resolve
 * says). */
static void model_ready(srv_ctx *ctx, srv_req *r, int versioned)
{
	enpu_artifact *a;
	json_object *o;
	char art[65];
	long v;

	if (resolve(ctx, r, versioned, art, &v, &a) != 0)
		return;
	srv_artifact_release(a);
	o = json_object_new_object();
	json_object_object_add(o, F_NAME, json_object_new_string(srv_req_param(r, 0)));
	json_object_object_add(o, F_READY, json_object_new_boolean(1));
	srv_reply_json(r, 200, o);
}

void srv_get_v2_model_ready(srv_ctx *ctx, srv_req *r)
{
	model_ready(ctx, r, 0);
}

void srv_get_v2_model_version_ready(srv_ctx *ctx, srv_req *r)
{
	model_ready(ctx, r, 1);
}

/* Triton's repository index: a row per deployed version. */
void srv_post_v2_repository_index(srv_ctx *ctx, srv_req *r)
{
	enpu_err e = ENPU_ERR_INIT;
	json_object *m = srv_models_json(ctx->models, NULL, &e), *ms, *out;

	if (!m) {
		srv_reply_error(r, &e, NULL);
		return;
	}
	out = json_object_new_array();
	if (json_object_object_get_ex(m, F_MODELS, &ms))
		for (size_t i = 0; i < json_object_array_length(ms); i++) {
			json_object *md = json_object_array_get_idx(ms, i), *vs;

			if (!json_object_object_get_ex(md, F_VERSIONS, &vs))
				continue;
			for (size_t k = 0; k < json_object_array_length(vs); k++) {
				json_object *v = json_object_array_get_idx(vs, k), *row;
				int ready = json_object_get_boolean(json_object_object_get(v, F_READY));

				row = json_object_new_object();
				json_object_object_add(row, F_NAME,
						       json_object_get(json_object_object_get(md, F_NAME)));
				json_object_object_add(row, F_VERSION,
						       json_object_get(json_object_object_get(v, F_VERSION)));
				json_object_object_add(row, F_STATE, json_object_new_string(
					ready ? "READY" : "UNAVAILABLE"));
				json_object_object_add(row, F_REASON, json_object_new_string(
					ready ? "" : "its artifact is not in the cache"));
				json_object_array_add(out, row);
			}
		}
	json_object_put(m);
	srv_reply_json(r, 200, out);
}

/* ---- infer ------------------------------------------------------------------------- */

typedef struct infer_req {
	json_object *root;            /* the JSON part */
	const unsigned char *bin;     /* the binary part (the extension), and its size */
	size_t bin_len, bin_used;
} infer_req;

/* data (flat or nested arrays of numbers) into x's elements *n ..: floats
 * for FP32, integers within the dtype's range for INT8, UINT8, INT32; 0,
 * or -1 with *e. */
static int flatten(json_object *v, const char *name, enpu_tensor *x, uint64_t cap, uint64_t *n,
		   int depth, enpu_err *e)
{
	if (json_object_is_type(v, json_type_array)) {
		if (depth >= OIP_DATA_DEPTH)
			return enpu_fail(e, ENPU_E_BAD_REQUEST, name, NULL,
					 "input '%s': data nested more than %d deep", name,
					 OIP_DATA_DEPTH);
		for (size_t i = 0; i < json_object_array_length(v); i++)
			if (flatten(json_object_array_get_idx(v, i), name, x, cap, n, depth + 1,
				    e) != 0)
				return -1;
		return 0;
	}
	if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
		return enpu_fail(e, ENPU_E_BAD_REQUEST, name, NULL,
				 "input '%s': data holds %s, not a number", name,
				 json_type_to_name(json_object_get_type(v)));
	if (*n >= cap)
		return enpu_fail(e, ENPU_E_BAD_REQUEST, name, NULL,
				 "input '%s': data holds more than the %llu values its shape has",
				 name, (unsigned long long)cap);
	if (x->dtype != ENPU_DT_F32) {
		int64_t iv = json_object_get_int64(v), lo = x->dtype == ENPU_DT_I8 ? -128 :
			x->dtype == ENPU_DT_U8 ? 0 : INT32_MIN, hi = x->dtype == ENPU_DT_I8 ? 127 :
			x->dtype == ENPU_DT_U8 ? 255 : INT32_MAX;

		if (!json_object_is_type(v, json_type_int) || iv < lo || iv > hi)
			return enpu_fail(e, ENPU_E_BAD_REQUEST, name, NULL,
					 "input '%s': data holds %.40s, not an integer in [%lld, %lld] (%s)",
					 name, json_object_to_json_string(v), (long long)lo,
					 (long long)hi, oip_datatype(x->dtype));
		if (x->dtype == ENPU_DT_I8)
			x->i8[*n] = (int8_t)iv;
		else if (x->dtype == ENPU_DT_U8)
			x->u8[*n] = (uint8_t)iv;
		else
			x->i32[*n] = (int32_t)iv;
		(*n)++;
		return 0;
	}
	x->data[(*n)++] = (float)json_object_get_double(v);
	return 0;
}

/* The request's input for graph tensor t, checked and filled into x. */
static int read_input(infer_req *q, json_object *in, const enpu_irtensor *t,
		      const enpu_limits *lim, enpu_tensor *x, enpu_err *e)
{
	json_object *shape, *dt, *data, *params, *bsz;
	uint64_t numel = 1, n = 0;
	const char *name = t->name;
	char s1[96];

	memset(x, 0, sizeof *x);   /* the caller frees it, whatever is wrong */
	if (!json_object_object_get_ex(in, F_DATATYPE, &dt) ||
	    !json_object_is_type(dt, json_type_string))
		return enpu_fail(e, ENPU_E_BAD_REQUEST, name, NULL,
				 "input '%s' has no datatype", name);
	if (strcmp(json_object_get_string(dt), oip_datatype(t->dtype)))
		return enpu_fail(e, ENPU_E_BAD_REQUEST, name, NULL,
				 "input '%s': datatype '%.20s', the model takes %s", name,
				 json_object_get_string(dt), oip_datatype(t->dtype));
	if (!json_object_object_get_ex(in, F_SHAPE, &shape) ||
	    !json_object_is_type(shape, json_type_array))
		return enpu_fail(e, ENPU_E_BAD_REQUEST, name, NULL, "input '%s' has no shape", name);
	/* the shape is the model's: checked before any data is taken */
	enpu_shape_pystr(&t->shape, s1, sizeof s1);
	int ok = (int)json_object_array_length(shape) == t->shape.ndim;
	for (int d = 0; ok && d < t->shape.ndim; d++) {
		json_object *dim = json_object_array_get_idx(shape, (size_t)d);
		ok = json_object_is_type(dim, json_type_int) &&
		     json_object_get_int64(dim) == t->shape.dim[d];
	}
	if (!ok)
		return enpu_fail(e, ENPU_E_BAD_REQUEST, name, NULL,
				 "input '%s': shape %.60s, the model takes %s", name,
				 json_object_to_json_string_ext(shape, JSON_C_TO_STRING_PLAIN), s1);
	if (t->dtype == ENPU_DT_I64)
		return enpu_fail(e, ENPU_E_BAD_REQUEST, name, NULL,
				 "input '%s' is INT64, which the infer route does not take", name);
	x->dtype = t->dtype;
	x->shape = t->shape;
	if (enpu_shape_numel(&t->shape, &numel) != 0 || enpu_tensor_alloc(x, lim, e) != 0)
		return -1;
	if (!(x->name = strdup(name)))
		return enpu_fail(e, ENPU_E_NOMEM, name, NULL, "out of memory");
	if (json_object_object_get_ex(in, F_PARAMETERS, &params) &&
	    json_object_is_type(params, json_type_object) &&
	    json_object_object_get_ex(params, F_BINARY_DATA_SIZE, &bsz)) {
		int64_t want = (int64_t)(numel * enpu_dtype_size(x->dtype));
		if (!json_object_is_type(bsz, json_type_int) || json_object_get_int64(bsz) != want)
			return enpu_fail(e, ENPU_E_BAD_REQUEST, name, NULL,
					 "input '%s': binary_data_size must be %lld (%llu %s values)",
					 name, (long long)want, (unsigned long long)numel,
					 oip_datatype(x->dtype));
		if (q->bin_len - q->bin_used < (size_t)want)
			return enpu_fail(e, ENPU_E_BAD_REQUEST, name, NULL,
					 "input '%s': the body holds %zu binary bytes past the JSON, "
					 "not the %lld it says", name, q->bin_len - q->bin_used,
					 (long long)want);
		if (want)
			memcpy(x->data, q->bin + q->bin_used, (size_t)want);   /* little endian */
		q->bin_used += (size_t)want;
		return 0;
	}
	if (!json_object_object_get_ex(in, F_DATA, &data))
		return enpu_fail(e, ENPU_E_BAD_REQUEST, name, NULL, "input '%s' has no data", name);
	if (flatten(data, name, x, numel, &n, 0, e) != 0)
		return -1;
	if (n != numel)
		return enpu_fail(e, ENPU_E_BAD_REQUEST, name, NULL,
				 "input '%s': data holds %llu values, its shape %s has %llu", name,
				 (unsigned long long)n, s1, (unsigned long long)numel);
	return 0;
}

/* The request's inputs, against the graph's: every one given once, none
 * other. */
static int read_inputs(infer_req *q, const enpu_graph *g, const enpu_limits *lim,
		       enpu_tlist *out, enpu_err *e)
{
	json_object *ins;
	size_t n;

	if (!json_object_is_type(q->root, json_type_object) ||
	    !json_object_object_get_ex(q->root, F_INPUTS, &ins) ||
	    !json_object_is_type(ins, json_type_array))
		return enpu_fail(e, ENPU_E_BAD_REQUEST, F_INPUTS, NULL,
				 "the body is not an inference request: no 'inputs' list");
	n = json_object_array_length(ins);
	for (size_t i = 0; i < n; i++) {
		json_object *in = json_object_array_get_idx(ins, i), *nm;
		const char *name;
		int ti;

		if (!json_object_is_type(in, json_type_object) ||
		    !json_object_object_get_ex(in, F_NAME, &nm) ||
		    !json_object_is_type(nm, json_type_string))
			return enpu_fail(e, ENPU_E_BAD_REQUEST, F_INPUTS, NULL,
					 "input %zu has no name", i + 1);
		name = json_object_get_string(nm);
		ti = enpu_graph_find(g, name);
		if (ti < 0 || g->tensors[ti].kind != ENPU_TK_INPUT)
			return enpu_fail(e, ENPU_E_BAD_REQUEST, name, NULL,
					 "the model has no input '%.80s'", name);
		if (enpu_tlist_find(out, name))
			return enpu_fail(e, ENPU_E_BAD_REQUEST, name, NULL,
					 "input '%.80s' is given twice", name);
		enpu_tensor x;
		if (read_input(q, in, &g->tensors[ti], lim, &x, e) != 0) {
			enpu_tensor_free(&x);
			return -1;
		}
		if (enpu_tlist_push(out, &x, e) != 0) {
			enpu_tensor_free(&x);
			return -1;
		}
	}
	for (int i = 0; i < g->n_inputs; i++)
		if (!enpu_tlist_find(out, g->tensors[g->inputs[i]].name))
			return enpu_fail(e, ENPU_E_BAD_REQUEST, g->tensors[g->inputs[i]].name, NULL,
					 "input '%s' is missing", g->tensors[g->inputs[i]].name);
	if (q->bin_used != q->bin_len)
		return enpu_fail(e, ENPU_E_BAD_REQUEST, H_INFER_HEADER_LEN, NULL,
				 "%zu binary bytes past the JSON belong to no input",
				 q->bin_len - q->bin_used);
	return 0;
}

/* Which outputs to answer and how: all (JSON data, or binary with the
 * request's binary_data_output), or those "outputs" names. *binary per
 * graph output: 1 binary, 0 JSON, -1 not answered. */
static int select_outputs(json_object *root, const enpu_graph *g, int *binary, enpu_err *e)
{
	json_object *outs, *params, *b;
	int all_bin = 0;

	if (json_object_object_get_ex(root, F_PARAMETERS, &params) &&
	    json_object_object_get_ex(params, F_BINARY_DATA_OUTPUT, &b))
		all_bin = json_object_get_boolean(b);
	for (int i = 0; i < g->n_outputs; i++)
		binary[i] = all_bin;
	if (!json_object_object_get_ex(root, F_OUTPUTS, &outs))
		return 0;
	if (!json_object_is_type(outs, json_type_array))
		return enpu_fail(e, ENPU_E_BAD_REQUEST, F_OUTPUTS, NULL, "'outputs' is not a list");
	for (int i = 0; i < g->n_outputs; i++)
		binary[i] = -1;
	for (size_t k = 0; k < json_object_array_length(outs); k++) {
		json_object *o = json_object_array_get_idx(outs, k), *nm;
		const char *name = json_object_object_get_ex(o, F_NAME, &nm) &&
				   json_object_is_type(nm, json_type_string) ?
				   json_object_get_string(nm) : NULL;
		int i;

		for (i = 0; name && i < g->n_outputs; i++)
			if (!strcmp(g->tensors[g->outputs[i]].name, name))
				break;
		if (!name || i == g->n_outputs)
			return enpu_fail(e, ENPU_E_BAD_REQUEST, F_OUTPUTS, NULL,
					 "the model has no output '%.80s'", name ? name : "(no name)");
		binary[i] = all_bin;
		if (json_object_object_get_ex(o, F_PARAMETERS, &params) &&
		    json_object_object_get_ex(params, F_BINARY_DATA, &b))
			binary[i] = json_object_get_boolean(b);
	}
	return 0;
}

/* Run inputs as a job of art and wait for it: the result's tensors into
 * res, the job id into id. 0, or -1 with *e (the job's own error when it
 * failed). */
static int run_job(srv_ctx *ctx, srv_req *r, const char *art, const char *model_ref,
		   const enpu_tlist *inputs, enpu_tlist *res, char id[ENPU_JOB_ID_SIZE], enpu_err *e)
{
	enpu_buf npz = ENPU_BUF_INIT, rb = ENPU_BUF_INIT;
	char din[65], path[4300];
	json_object *job = NULL, *v;
	int final = 0, rc = -1;

	if (enpu_npz_write_mem(inputs, OIP_INPUT_NAME, &npz, e) != 0 ||
	    srv_cas_put_mem_volatile(ctx->cas, npz.data, npz.len, din, e) != 0 ||
	    srv_job_submit(ctx, srv_req_who(r), art, din, OIP_INPUT_NAME, model_ref, 0, id, e) != 0)
		goto out;
	while (!final) {
		json_object_put(job);
		if (!(job = srv_jobs_get(ctx->jobs, id, 60, &final))) {
			enpu_fail(e, ENPU_E_JOB_FAILED, id, NULL, "job '%s' was forgotten", id);
			goto out;
		}
		if (ctx->stopping && !final) {
			enpu_fail(e, ENPU_E_STORAGE, id, "retry once the server is back",
				  "the server is shutting down");
			goto out;
		}
	}
	if (strcmp(json_object_get_string(json_object_object_get(job, F_STATE)), "succeeded")) {
		if (!json_object_object_get_ex(job, F_ERROR, &v) || enpu_wire_err_from_json(v, e, NULL, NULL) != 0)
			enpu_fail(e, ENPU_E_JOB_FAILED, id, NULL, "job '%s' ended %s", id,
				  json_object_get_string(json_object_object_get(job, F_STATE)));
		goto out;
	}
	if (!json_object_object_get_ex(job, F_RESULT, &v) ||
	    !enpu_is_sha256_hex(json_object_get_string(v))) {
		enpu_fail(e, ENPU_E_INTERNAL, id, NULL, "job '%s' has no result", id);
		goto out;
	}
	srv_cas_blob_path(ctx->cas, json_object_get_string(v), path, sizeof path);
	if (enpu_read_file(path, 0, &rb, e) != 0 ||
	    enpu_npz_read_mem(rb.data, rb.len, "result.npz", ctx->lim, res, e) != 0)
		goto out;
	rc = 0;
out:
	json_object_put(job);
	enpu_buf_free(&npz);
	enpu_buf_free(&rb);
	return rc;
}

static void infer(srv_ctx *ctx, srv_req *r, int versioned)
{
	const enpu_buf *body = srv_req_raw(r);
	const char *hl = srv_req_header(r, H_INFER_HEADER_LEN);
	enpu_err e = ENPU_ERR_INIT;
	enpu_artifact *a = NULL;
	enpu_tlist inputs = ENPU_TLIST_INIT, res = ENPU_TLIST_INIT;
	enpu_buf bin = ENPU_BUF_INIT;
	infer_req q = {0};
	json_object *o = NULL, *outs, *rid;
	json_tokener *tok = NULL;
	const enpu_graph *g;
	char art[65], id[ENPU_JOB_ID_SIZE], ref[96], num[24];
	int *binary = NULL;
	long v;
	size_t jlen;

	if (resolve(ctx, r, versioned, art, &v, &a) != 0)
		return;
	g = enpu_artifact_graph(a);
	jlen = body ? body->len : 0;
	if (hl) {
		char *end;
		unsigned long long n = strtoull(hl, &end, 10);
		if (!*hl || *end || n > jlen) {
			enpu_fail(&e, ENPU_E_BAD_REQUEST, H_INFER_HEADER_LEN, NULL,
				  "%s: '%.20s' is not a length within the body's %zu bytes",
				  H_INFER_HEADER_LEN, hl, jlen);
			goto fail;
		}
		q.bin = (const unsigned char *)body->data + n;
		q.bin_len = jlen - n;
		jlen = n;
	}
	if (!jlen) {
		enpu_fail(&e, ENPU_E_BAD_REQUEST, "body", NULL, "the body holds no inference request");
		goto fail;
	}
	tok = json_tokener_new_ex(ctx->cfg.max_json_depth);
	if (!tok) {
		enpu_fail(&e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
		goto fail;
	}
	enpu_json_thread();
	q.root = json_tokener_parse_ex(tok, (const char *)body->data, (int)jlen);
	if (!q.root || json_tokener_get_error(tok) != json_tokener_success ||
	    json_tokener_get_parse_end(tok) != jlen) {
		enpu_fail(&e, ENPU_E_BAD_REQUEST, "body", NULL, "the body is not one JSON "
			  "document (%s)", json_tokener_error_desc(json_tokener_get_error(tok)));
		goto fail;
	}
	if (!(binary = calloc((size_t)g->n_outputs + 1, sizeof *binary)) ||
	    read_inputs(&q, g, ctx->lim, &inputs, &e) != 0 ||
	    select_outputs(q.root, g, binary, &e) != 0)
		goto fail;
	snprintf(ref, sizeof ref, "%s:%ld", srv_req_param(r, 0), v);
	if (run_job(ctx, r, art, ref, &inputs, &res, id, &e) != 0)
		goto fail;

	o = json_object_new_object();
	outs = json_object_new_array();
	snprintf(num, sizeof num, "%ld", v);
	json_object_object_add(o, F_MODEL_NAME, json_object_new_string(srv_req_param(r, 0)));
	json_object_object_add(o, F_MODEL_VERSION, json_object_new_string(num));
	if (json_object_object_get_ex(q.root, F_ID, &rid) && json_object_is_type(rid, json_type_string))
		json_object_object_add(o, F_ID, json_object_get(rid));
	{
		json_object *p = json_object_new_object();
		json_object_object_add(p, F_JOB, json_object_new_string(id));
		json_object_object_add(o, F_PARAMETERS, p);
	}
	for (int i = 0; i < g->n_outputs; i++) {
		const enpu_tensor *t = enpu_tlist_find(&res, g->tensors[g->outputs[i]].name);
		json_object *x;
		uint64_t n = 0;

		if (binary[i] < 0 || !t)
			continue;
		enpu_shape_numel(&t->shape, &n);
		x = json_object_new_object();
		json_object_object_add(x, F_NAME, json_object_new_string(t->name));
		json_object_object_add(x, F_DATATYPE, json_object_new_string(oip_datatype(t->dtype)));
		json_object_object_add(x, F_SHAPE, shape_json(&t->shape));
		if (binary[i]) {
			json_object *p = json_object_new_object();
			json_object_object_add(p, F_BINARY_DATA_SIZE,
					       json_object_new_int64((int64_t)(n * enpu_dtype_size(t->dtype))));
			json_object_object_add(x, F_PARAMETERS, p);
			if (enpu_buf_add(&bin, t->data, (size_t)n * enpu_dtype_size(t->dtype)) != 0) {
				json_object_put(x);
				enpu_fail(&e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
				json_object_put(outs);
				goto fail;
			}
		} else {
			json_object *d = json_object_new_array_ext((int)n);
			for (uint64_t k = 0; k < n; k++)   /* 9 digits: the float, exactly */
				json_object_array_add(d, t->dtype == ENPU_DT_I8 ? json_object_new_int(t->i8[k]) :
						      t->dtype == ENPU_DT_U8 ? json_object_new_int(t->u8[k]) :
						      t->dtype == ENPU_DT_I32 ? json_object_new_int(t->i32[k]) :
						      srv_json_double(t->data[k]));
			json_object_object_add(x, F_DATA, d);
		}
		json_object_array_add(outs, x);
	}
	json_object_object_add(o, F_OUTPUTS, outs);
	if (bin.len) {
		/* the extension: the JSON, then the outputs' bytes in order */
		size_t n;
		const char *s = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN |
								     JSON_C_TO_STRING_NOSLASHESCAPE, &n);
		enpu_buf all = ENPU_BUF_INIT;
		char len[24];

		if (enpu_buf_add(&all, s, n) != 0 || enpu_buf_add(&all, bin.data, bin.len) != 0) {
			enpu_buf_free(&all);
			enpu_fail(&e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
			goto fail;
		}
		snprintf(len, sizeof len, "%zu", n);
		srv_reply_bytes(r, 200, all.data, all.len, "application/octet-stream");
		srv_reply_header(r, H_INFER_HEADER_LEN, len);
		enpu_buf_free(&all);
		json_object_put(o);
	} else {
		srv_reply_json(r, 200, o);
	}
	o = NULL;
	goto out;
fail:
	srv_reply_error(r, &e, NULL);
out:
	json_object_put(o);
	json_object_put(q.root);
	if (tok)
		json_tokener_free(tok);
	free(binary);
	enpu_tlist_free(&inputs);
	enpu_tlist_free(&res);
	enpu_buf_free(&bin);
	srv_artifact_release(a);
}

void srv_post_v2_infer(srv_ctx *ctx, srv_req *r)
{
	infer(ctx, r, 0);
}

void srv_post_v2_version_infer(srv_ctx *ctx, srv_req *r)
{
	infer(ctx, r, 1);
}

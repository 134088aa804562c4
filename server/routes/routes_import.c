/* routes_import.c: POST /v1/import, ONNX in, spec v2 out. The model and its
 * external-data files are blobs the client uploaded first (POST
 * /v1/blobs/missing, PUT /v1/blobs/{sha256}); the request names them by
 * digest ({"model": D, "external": {"<location as written in the model>":
 * D, ...}, "inputs": {"x": [1, 3, 224, 224]}, "name": "N"}). The import
 * runs on the request's own connection thread, as a compile does, bounded
 * by --max-onnx-bytes and --max-onnx-nodes (and the tensor limits); its
 * spec.yaml and weights.npz are stored in the CAS as blobs the caller may
 * read, and the answer names them with a summary from validating the spec:
 * {"spec": D, "weights": D, "name", "ops", "inputs": [{name, shape}],
 * "outputs": [{name, shape}]}. The client downloads them with GET
 * /v1/blobs/{sha256}. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <json-c/json.h>
#include "srv.h"
#include "cas.h"
#include "digest.h"
#include "import.h"
#include "routes.h"
#include "fault.h"

#define DEFAULT_MODEL_NAME "model.onnx"
#define MAX_EXTERNAL       4096     /* external-data files in one request */
#define MAX_LOCATION       1024     /* bytes of one location */
#define MAX_BINDS          4096     /* entries of "inputs" */

/* The external-data files of a request: location -> blob path. */
typedef struct ext_file {
	const char *location;    /* the request's key (borrowed) */
	char path[4300];
} ext_file;

typedef struct ext_map {
	ext_file *f;
	int n;
	const char *model_label;
} ext_map;

/* enpu_import_ext_fn over the request's blobs: length bytes (0: to the
 * end) at offset of the file the request supplied for location. */
static int ext_read(void *vctx, const char *location, uint64_t offset, uint64_t length,
		    enpu_buf *out, enpu_err *e)
{
	const ext_map *m = vctx;
	const ext_file *f = NULL;
	struct stat st;
	uint64_t n;
	int fd, rc = -1;

	for (int i = 0; i < m->n && !f; i++)
		if (strcmp(m->f[i].location, location) == 0)
			f = &m->f[i];
	if (!f)
		return enpu_fail(e, ENPU_E_BAD_REQUEST, location,
				 "upload the file and name it in \"" F_EXTERNAL "\" ({\"location\": "
				 "sha256}), as `eulernpu import` does",
				 "%s: the model keeps tensor data in the external file '%s', which the "
				 "request's \"" F_EXTERNAL "\" does not supply", m->model_label, location);
	fd = open(f->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		enpu_fail(e, ENPU_E_IO, location, NULL, "cannot read the external-data blob of '%s': %s",
			  location, strerror(errno));
		goto out;
	}
	if (offset > (uint64_t)st.st_size || length > (uint64_t)st.st_size - offset) {
		enpu_fail(e, ENPU_E_ONNX, location, "re-export the model with its external data",
			  "%s: external data of '%s' at offset %llu, length %llu lies past the end "
			  "of the file (%llu bytes)", m->model_label, location,
			  (unsigned long long)offset, (unsigned long long)length,
			  (unsigned long long)st.st_size);
		goto out;
	}
	n = length ? length : (uint64_t)st.st_size - offset;
	enpu_buf_reset(out);
	for (uint64_t got = 0; got < n;) {
		char chunk[65536];
		size_t want = n - got < sizeof chunk ? (size_t)(n - got) : sizeof chunk;
		ssize_t k = pread(fd, chunk, want, (off_t)(offset + got));

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			enpu_fail(e, ENPU_E_IO, location, NULL, "cannot read the external-data blob "
				  "of '%s': %s", location, k < 0 ? strerror(errno) : "short read");
			goto out;
		}
		if (enpu_buf_add(out, chunk, (size_t)k) != 0) {
			enpu_fail(e, ENPU_E_NOMEM, location, NULL, "out of memory for %llu bytes "
				  "of '%s'", (unsigned long long)n, location);
			goto out;
		}
		got += (uint64_t)k;
	}
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

/* Answer 409 E0804 listing every digest of missing (when it has any). */
static int reply_missing(srv_req *r, json_object *missing, const char *key, const char *first)
{
	if (json_object_array_length(missing) == 0) {
		json_object_put(missing);
		return 0;
	}
	srv_reply_blobs_missing(r, missing, key, first, "is not on the server");
	return -1;
}

/* The "external" field: an object of location -> digest, every blob
 * present and readable (else one 409 listing all that are not). -1 after
 * a reply. */
static int external_field(srv_ctx *ctx, srv_req *r, ext_map *m)
{
	json_object *o = NULL, *missing;
	const char *first = NULL;
	char where[128];
	int n;

	if (!json_object_object_get_ex(srv_req_json(r), F_EXTERNAL, &o) || !o)
		return 0;
	if (!json_object_is_type(o, json_type_object)) {
		srv_reply_fail(r, ENPU_E_BAD_REQUEST, F_EXTERNAL, "field '" F_EXTERNAL "' must be an "
			       "object of location -> sha256 digest");
		return -1;
	}
	n = json_object_object_length(o);
	if (n > MAX_EXTERNAL) {
		srv_reply_fail(r, ENPU_E_TOO_LARGE, F_EXTERNAL, "%d external-data files in one request "
			       "(at most %d)", n, MAX_EXTERNAL);
		return -1;
	}
	m->f = calloc(n ? (size_t)n : 1, sizeof *m->f);
	if (!m->f) {
		srv_reply_fail(r, ENPU_E_NOMEM, NULL, "out of memory");
		return -1;
	}
	missing = json_object_new_array();
	json_object_object_foreach(o, loc, v) {
		const char *d = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;

		snprintf(where, sizeof where, F_EXTERNAL ".%.100s", loc);
		if (!*loc || strlen(loc) > MAX_LOCATION || !d || !enpu_is_sha256_hex(d)) {
			json_object_put(missing);
			srv_reply_fail(r, ENPU_E_BAD_REQUEST, where, "'%s' must map a location (1 to %d "
				       "bytes) to a sha256 digest (64 lowercase hex)", where, MAX_LOCATION);
			return -1;
		}
		if (!srv_cas_verify(ctx->cas, d, NULL) || !srv_blob_readable(ctx, r, d)) {
			json_object_array_add(missing, json_object_new_string(d));
			if (!first)
				first = d;
			continue;
		}
		srv_cas_touch(ctx->cas, d);
		m->f[m->n].location = loc;
		srv_cas_blob_path(ctx->cas, d, m->f[m->n].path, sizeof m->f[m->n].path);
		m->n++;
	}
	return reply_missing(r, missing, F_EXTERNAL, first);
}

/* The "inputs" field: an object of graph input name -> list of dims
 * (whole numbers >= 0, at most ENPU_MAX_DIMS). -1 after a reply. */
static int inputs_field(srv_req *r, enpu_import_bind **out, int *n_out)
{
	json_object *o = NULL;
	enpu_import_bind *b;
	char where[128];
	int n, k = 0;

	*out = NULL;
	*n_out = 0;
	if (!json_object_object_get_ex(srv_req_json(r), F_INPUTS, &o) || !o)
		return 0;
	if (!json_object_is_type(o, json_type_object) ||
	    (n = json_object_object_length(o)) > MAX_BINDS) {
		srv_reply_fail(r, ENPU_E_BAD_REQUEST, F_INPUTS, "field '" F_INPUTS "' must be an object "
			       "of input name -> list of dims ({\"x\": [1, 3, 32, 32]})");
		return -1;
	}
	b = calloc(n ? (size_t)n : 1, sizeof *b);
	if (!b) {
		srv_reply_fail(r, ENPU_E_NOMEM, NULL, "out of memory");
		return -1;
	}
	json_object_object_foreach(o, name, dims) {
		size_t nd = json_object_is_type(dims, json_type_array) ?
			    json_object_array_length(dims) : (size_t)-1;

		snprintf(where, sizeof where, F_INPUTS ".%.100s", name);
		if (!*name || nd > ENPU_MAX_DIMS)
			goto bad;
		b[k].name = name;
		b[k].shape.ndim = (int)nd;
		for (size_t i = 0; i < nd; i++) {
			json_object *d = json_object_array_get_idx(dims, i);
			int64_t v;

			if (!json_object_is_type(d, json_type_int) ||
			    (v = json_object_get_int64(d)) < 0 || v > INT32_MAX)
				goto bad;
			b[k].shape.dim[i] = v;
		}
		k++;
	}
	*out = b;
	*n_out = k;
	return 0;
bad:
	free(b);
	srv_reply_fail(r, ENPU_E_BAD_REQUEST, where, "'%s' must be a list of at most %d whole "
		       "numbers >= 0 (the input's dims)", where, ENPU_MAX_DIMS);
	return -1;
}

/* [{"name": ..., "shape": [...]}, ...] of the graph's tensors idx[0..n). */
static json_object *tensors_json(const enpu_graph *g, const int *idx, int n)
{
	json_object *a = json_object_new_array();

	for (int i = 0; i < n; i++) {
		const enpu_irtensor *t = &g->tensors[idx[i]];
		json_object *o = json_object_new_object(), *s = json_object_new_array();

		for (int d = 0; d < t->shape.ndim; d++)
			json_object_array_add(s, json_object_new_int64(t->shape.dim[d]));
		json_object_object_add(o, F_NAME, json_object_new_string(t->name));
		json_object_object_add(o, F_SHAPE, s);
		json_object_array_add(a, o);
	}
	return a;
}

/* Store the import's two files and answer with them and the summary of the
 * spec validated (for cpu_ref, which lowers every op). 0, or -1 + *e. */
static int store_and_reply(srv_ctx *ctx, srv_req *r, const enpu_buf *spec_txt,
			   const enpu_buf *weights, enpu_err *e)
{
	char ds[65], dw[65];
	enpu_spec *spec = NULL;
	enpu_graph *g = NULL;
	json_object *o;

	if (enpu_spec_parse(spec_txt->data, spec_txt->len, "spec.yaml", ctx->lim, &spec, e) != 0 ||
	    enpu_validate(spec, "cpu_ref", &g, e) != 0) {
		enpu_spec_free(spec);
		return -1;
	}
	if (srv_cas_put_mem(ctx->cas, spec_txt->data, spec_txt->len, ds, e) != 0 ||
	    srv_cas_put_mem(ctx->cas, weights->data, weights->len, dw, e) != 0) {
		enpu_graph_free(g);
		enpu_spec_free(spec);
		return -1;
	}
	srv_blob_uploaded(ctx, r, ds);   /* the caller may read what it made */
	srv_blob_uploaded(ctx, r, dw);
	o = json_object_new_object();
	json_object_object_add(o, F_SPEC, json_object_new_string(ds));
	json_object_object_add(o, F_WEIGHTS, json_object_new_string(dw));
	json_object_object_add(o, F_NAME, json_object_new_string(enpu_spec_name(spec)));
	json_object_object_add(o, F_OPS, json_object_new_int(g->n_ops));
	json_object_object_add(o, F_INPUTS, tensors_json(g, g->inputs, g->n_inputs));
	json_object_object_add(o, F_OUTPUTS, tensors_json(g, g->outputs, g->n_outputs));
	srv_log("info", "req=%s imported spec=%.12s weights=%.12s ops=%d", srv_req_id(r), ds, dw,
		g->n_ops);
	srv_reply_json(r, 200, o);
	enpu_graph_free(g);
	enpu_spec_free(spec);
	return 0;
}

/* The model blob into memory, refused past --max-onnx-bytes before it is
 * read. 0, or -1 + *e. */
static int read_model(srv_ctx *ctx, const char *path, const char *label, enpu_buf *b, enpu_err *e)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return enpu_fail(e, ENPU_E_IO, label, NULL, "cannot read the model's blob: %s",
				 strerror(errno));
	if ((uint64_t)st.st_size > ctx->cfg.max_onnx_bytes)
		return enpu_fail(e, ENPU_E_LIMIT, label, "raise the server's --max-onnx-bytes",
				 "%s: the model is %llu bytes, more than --max-onnx-bytes (%llu)",
				 label, (unsigned long long)st.st_size,
				 (unsigned long long)ctx->cfg.max_onnx_bytes);
	return enpu_read_file(path, (size_t)st.st_size + 1, b, e);
}

void srv_post_import(srv_ctx *ctx, srv_req *r)
{
	char mpath[4300];
	const char *label = NULL, *name = NULL;
	ext_map ext = {NULL, 0, NULL};
	enpu_import_bind *bind = NULL;
	enpu_onnx_limits lim = *enpu_onnx_limits_default();
	enpu_import_opts o;
	enpu_buf model = ENPU_BUF_INIT, spec = ENPU_BUF_INIT, weights = ENPU_BUF_INIT;
	enpu_err e = ENPU_ERR_INIT;
	int n_bind = 0;

	if (srv_blob_field(ctx, r, F_MODEL, mpath, sizeof mpath) ||
	    srv_field_str(r, F_MODEL_NAME, 0, &label) || srv_field_str(r, F_NAME, 0, &name) ||
	    inputs_field(r, &bind, &n_bind))
		goto out;
	if (!label || !*label)
		label = DEFAULT_MODEL_NAME;
	ext.model_label = label;
	if (external_field(ctx, r, &ext))
		goto out;
	if (name && (!*name || strlen(name) > 200)) {
		srv_reply_fail(r, ENPU_E_BAD_REQUEST, F_NAME, "field '" F_NAME "' must be 1 to 200 bytes");
		goto out;
	}
	lim.max_model_bytes = ctx->cfg.max_onnx_bytes;
	lim.max_nodes = ctx->cfg.max_onnx_nodes;
	lim.max_tensor_elems = ctx->lim->max_tensor_elems;
	memset(&o, 0, sizeof o);
	o.name = name;
	o.bind = bind;
	o.n_bind = n_bind;
	o.ext = ext_read;
	o.ext_ctx = &ext;
	o.lim = &lim;
	if (read_model(ctx, mpath, label, &model, &e) != 0)
		goto fail;
	if (enpu_import(model.data, model.len, label, &o, &spec, &weights, &e) != 0) {
		if (e.code == ENPU_E_LIMIT)   /* the reader's limits are these settings here */
			snprintf(e.fix, sizeof e.fix, "raise the server's --max-onnx-nodes or "
				 "--max-tensor-elems, whichever the message names");
		goto fail;
	}
	enpu_buf_free(&model);   /* the model can be large: let it go before storing */
	if (store_and_reply(ctx, r, &spec, &weights, &e) != 0)
		goto fail;
	srv_cache_enforce(ctx);
	goto out;
fail:
	srv_fault_storage(&e);   /* writes to a full cache disk: 507 E0810 */
	srv_reply_error(r, &e, NULL);
out:
	enpu_buf_free(&model);
	enpu_buf_free(&spec);
	enpu_buf_free(&weights);
	free(bind);
	free(ext.f);
}

/* artifact.c: manifest.json, and loading a compiled artifact. Loading
 * trusts nothing in the directory: every file's path, size and sha256 is
 * checked against the manifest, the id against the files, then graph.json,
 * plan.json and the weights against each other. The backend's target
 * options (manifest "target") must parse; its plan (an npu model, a PL
 * partition) is derived again from them, and graph.json's lowerings and
 * plan.json's backend section must be what it gives (backend.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "enpu.h"
#include "wire.h"
#include "digest.h"
#include "npz.h"
#include "graphjson.h"
#include "plan.h"
#include "backend.h"

#define MANIFEST_MAX (1u << 20)
#define MAX_FILES 64

struct enpu_artifact {
	char id[65];
	char backend[32];
	enpu_graph *g;
	enpu_plan plan;
	enpu_tlist weights;
	const float **wdata;   /* per tensor index */
	const enpu_backend_def *def;
	void *opts;            /* the backend's target options, from the manifest (or NULL) */
	void *st;              /* the backend's plan, derived again at load (or NULL) */
};

void enpu_artifact_id_of(const char *const *paths, const char *const *digests,
			 int n, char out_hex[65])
{
	enpu_sha256 *c = enpu_sha256_new();
	static const char tag[] = "eulernpu-artifact-v1\n";

	if (!c) {
		out_hex[0] = '\0';
		return;
	}
	enpu_sha256_update(c, tag, sizeof(tag) - 1);
	for (int i = 0; i < n; i++) {
		enpu_sha256_update(c, paths[i], strlen(paths[i]) + 1);   /* with the NUL */
		enpu_sha256_update(c, digests[i], strlen(digests[i]));
		enpu_sha256_update(c, "\n", 1);
	}
	if (enpu_sha256_final(c, out_hex) < 0)
		out_hex[0] = '\0';
}

int enpu_manifest_to_json(const char *id, const char *backend, const char *spec_name,
			  const char *spec_sha256, const char *weights_sha256,
			  const char *weights, const char *layout,
			  struct json_object *target, const enpu_manifest_file *files,
			  int n, enpu_buf *out, enpu_err *e)
{
	json_object *root = json_object_new_object(), *spec, *arr;
	int rc;

	if (!root)
		goto nomem;
	json_object_object_add(root, "format", json_object_new_string("eulernpu-artifact"));
	json_object_object_add(root, "version", json_object_new_int(1));
	json_object_object_add(root, "id", json_object_new_string(id));
	json_object_object_add(root, "backend", json_object_new_string(backend));
	json_object_object_add(root, "compiler", json_object_new_string(ENPU_COMPILER_ID));
	if (!(spec = json_object_new_object()))
		goto nomem;
	json_object_object_add(root, "spec", spec);
	json_object_object_add(spec, "name", json_object_new_string(spec_name));
	json_object_object_add(spec, "sha256",
			       spec_sha256 ? json_object_new_string(spec_sha256) : NULL);
	json_object_object_add(root, "weights_sha256",
			       weights_sha256 ? json_object_new_string(weights_sha256) : NULL);
	json_object_object_add(root, "weights", json_object_new_string(weights));
	json_object_object_add(root, "layout", json_object_new_string(layout));
	json_object_object_add(root, "target", target ? json_object_get(target) : NULL);
	if (!(arr = json_object_new_array()))
		goto nomem;
	json_object_object_add(root, "files", arr);
	for (int i = 0; i < n; i++) {
		json_object *f = json_object_new_object();
		if (!f)
			goto nomem;
		json_object_object_add(f, "path", json_object_new_string(files[i].path));
		json_object_object_add(f, "sha256", json_object_new_string(files[i].sha256));
		json_object_object_add(f, "bytes", json_object_new_int64((int64_t)files[i].bytes));
		json_object_array_add(arr, f);
	}
	rc = enpu_json_dump(root, out, e);
	json_object_put(root);
	return rc;
nomem:
	json_object_put(root);
	return enpu_fail(e, ENPU_E_NOMEM, "manifest.json", NULL, "cannot build manifest.json");
}

/* Refuse symlinks on the way (a link could point out of the artifact) and
 * anything but a regular file at the end. */
static int check_no_links(const char *dir, const char *rel, enpu_err *e)
{
	char path[4096];
	struct stat st;
	size_t dl = strlen(dir);

	if (dl + 1 + strlen(rel) + 1 > sizeof(path))
		return enpu_fail(e, ENPU_E_ARTIFACT, rel, NULL, "path '%s' is too long", rel);
	memcpy(path, dir, dl);
	path[dl] = '/';
	strcpy(path + dl + 1, rel);
	for (char *p = path + dl + 1;; p++) {
		if (*p == '/' || *p == '\0') {
			char c = *p;
			*p = '\0';
			if (lstat(path, &st) < 0) {
				*p = c;
				return enpu_fail(e, ENPU_E_ARTIFACT_DIGEST, rel, NULL,
						 "artifact file '%s' is missing", rel);
			}
			if (S_ISLNK(st.st_mode)) {
				*p = c;
				return enpu_fail(e, ENPU_E_ARTIFACT, rel, NULL,
						 "artifact path '%s' goes through a symbolic link", rel);
			}
			*p = c;
			if (c == '\0')
				break;
		}
	}
	if (!S_ISREG(st.st_mode))
		return enpu_fail(e, ENPU_E_ARTIFACT, rel, NULL,
				 "artifact file '%s' is not a regular file", rel);
	return 0;
}

typedef struct loaded_file {
	char *path;
	char sha256[65];
	enpu_buf data;
} loaded_file;

static void free_files(loaded_file *f, int n)
{
	for (int i = 0; i < n; i++) {
		free(f[i].path);
		enpu_buf_free(&f[i].data);
	}
}

static loaded_file *find_file(loaded_file *f, int n, const char *path)
{
	for (int i = 0; i < n; i++)
		if (strcmp(f[i].path, path) == 0)
			return &f[i];
	return NULL;
}

static int read_member(const char *dir, const char *rel, size_t max, enpu_buf *b, enpu_err *e)
{
	char path[4096];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, rel) >= sizeof(path))
		return enpu_fail(e, ENPU_E_ARTIFACT, rel, NULL, "path '%s' is too long", rel);
	return enpu_read_file(path, max, b, e);
}

/* The weights file against the graph: every weight an op reads is there,
 * with its shape; nothing else is. */
static int bind_weights(enpu_artifact *a, const char *label, enpu_err *e)
{
	enpu_graph *g = a->g;

	a->wdata = calloc((size_t)(g->n_tensors ? g->n_tensors : 1), sizeof(*a->wdata));
	if (!a->wdata)
		return enpu_fail(e, ENPU_E_NOMEM, label, NULL, "cannot bind the weights");
	for (size_t i = 0; i < a->weights.n; i++) {
		enpu_tensor *t = &a->weights.items[i];
		int ti = enpu_graph_find(g, t->name);
		char s1[96], s2[96];
		if (ti < 0 || g->tensors[ti].kind != ENPU_TK_WEIGHT || g->tensors[ti].last_use < 0)
			return enpu_fail(e, ENPU_E_ARTIFACT, label, NULL,
					 "weights file holds '%s', which no op of the graph reads", t->name);
		if (t->dtype != g->tensors[ti].dtype || !enpu_shape_eq(&t->shape, &g->tensors[ti].shape))
			return enpu_fail(e, ENPU_E_ARTIFACT, label, NULL,
					 "weight '%s' is %s in the weights file, %s in the graph", t->name,
					 enpu_shape_str(&t->shape, s1, sizeof(s1)),
					 enpu_shape_str(&g->tensors[ti].shape, s2, sizeof(s2)));
		if (a->wdata[ti])
			return enpu_fail(e, ENPU_E_ARTIFACT, label, NULL,
					 "weights file holds '%s' twice", t->name);
		a->wdata[ti] = t->data;
	}
	for (int i = 0; i < g->n_tensors; i++) {
		const enpu_irtensor *t = &g->tensors[i];
		uint64_t n = 0;
		if (t->kind != ENPU_TK_WEIGHT || t->last_use < 0 || a->wdata[i])
			continue;
		if (enpu_shape_numel(&t->shape, &n) == 0 && n == 0)
			continue;   /* an empty tensor needs no bytes */
		return enpu_fail(e, ENPU_E_ARTIFACT, label, NULL,
				 "weights file lacks '%s', which op '%s' reads", t->name,
				 g->ops[t->last_use].name);
	}
	return 0;
}

/* Two targets agree when their canonical JSON is the same text. */
int enpu_artifact_load(const char *dir, const enpu_limits *lim,
		       enpu_artifact **out, enpu_err *e)
{
	enpu_buf mbuf = ENPU_BUF_INIT;
	json_object *m = NULL, *v, *files, *spec;
	loaded_file lf[MAX_FILES];
	int nf = 0;
	enpu_artifact *a = NULL;
	const char *paths[MAX_FILES] = {NULL}, *digests[MAX_FILES] = {NULL};
	char id[65], *gweights = NULL;
	const char *wpath, *label = "manifest.json";
	loaded_file *gf, *pf, *wf;
	json_object *section = NULL;
	int64_t iv;

	*out = NULL;
	if (!lim)
		lim = enpu_limits_default();
	/* manifest.json too: a symbolic link would read a file outside dir */
	if (check_no_links(dir, "manifest.json", e) < 0 ||
	    read_member(dir, "manifest.json", MANIFEST_MAX, &mbuf, e) < 0) {
		if (e && (e->code == ENPU_E_IO || e->code == ENPU_E_ARTIFACT_DIGEST))
			e->code = ENPU_E_ARTIFACT;
		goto fail;
	}
	if (!(m = enpu_json_parse(mbuf.data, mbuf.len, label, e)))
		goto fail;
	if (!(v = enpu_json_field(m, "format", json_type_string, label, "", e)))
		goto fail;
	if (strcmp(json_object_get_string(v), "eulernpu-artifact") != 0) {
		enpu_fail(e, ENPU_E_ARTIFACT, label, NULL, "field 'format' is not \"eulernpu-artifact\"");
		goto fail;
	}
	if (!(v = enpu_json_field(m, "version", json_type_int, label, "", e)) ||
	    enpu_json_int(v, 1, 1, label, "field 'version'", &iv, e) < 0)
		goto fail;
	if (!(a = calloc(1, sizeof(*a)))) {
		enpu_fail(e, ENPU_E_NOMEM, label, NULL, "cannot load the artifact");
		goto fail;
	}
	if (!(v = enpu_json_field(m, "id", json_type_string, label, "", e)))
		goto fail;
	if (!enpu_is_sha256_hex(json_object_get_string(v))) {
		enpu_fail(e, ENPU_E_ARTIFACT, label, NULL, "field 'id' is not a sha256 digest");
		goto fail;
	}
	memcpy(a->id, json_object_get_string(v), 65);
	if (!(v = enpu_json_field(m, "backend", json_type_string, label, "", e)))
		goto fail;
	if (!(a->def = enpu_backend_by_name(json_object_get_string(v)))) {
		enpu_fail(e, ENPU_E_ARTIFACT, label, NULL, "field 'backend': unknown backend '%s'",
			  json_object_get_string(v));
		goto fail;
	}
	snprintf(a->backend, sizeof(a->backend), "%s", json_object_get_string(v));
	if (a->def->opts_size) {
		if (!(a->opts = calloc(1, a->def->opts_size))) {
			enpu_fail(e, ENPU_E_NOMEM, label, NULL, "cannot load the target");
			goto fail;
		}
		if (!(v = enpu_json_field(m, "target", json_type_object, label, "", e)) ||
		    a->def->opts_from_json(a->def, a->opts, v, label, e) < 0)
			goto fail;
	}
	if (!enpu_json_field(m, "compiler", json_type_string, label, "", e) ||
	    !(spec = enpu_json_field(m, "spec", json_type_object, label, "", e)) ||
	    !enpu_json_field(spec, "name", json_type_string, label, "spec: ", e))
		goto fail;
	if (!(v = enpu_json_field(m, "weights", json_type_string, label, "", e)))
		goto fail;
	wpath = json_object_get_string(v);
	if (!(v = enpu_json_field(m, "layout", json_type_string, label, "", e)))
		goto fail;
	if (strcmp(json_object_get_string(v), "spec") != 0) {
		enpu_fail(e, ENPU_E_ARTIFACT, label, NULL, "field 'layout': unknown layout '%s'",
			  json_object_get_string(v));
		goto fail;
	}
	if (!(files = enpu_json_field(m, "files", json_type_array, label, "", e)))
		goto fail;
	if (json_object_array_length(files) > MAX_FILES) {
		enpu_fail(e, ENPU_E_ARTIFACT, label, NULL, "field 'files' lists more than %d files",
			  MAX_FILES);
		goto fail;
	}

	/* every listed file: safe path, sorted, the right size and digest */
	for (size_t i = 0; i < json_object_array_length(files); i++) {
		json_object *f = json_object_array_get_idx(files, i), *p, *d, *b;
		char ctx[32];
		loaded_file *l = &lf[nf];
		snprintf(ctx, sizeof(ctx), "file %zu: ", i);
		if (!(p = enpu_json_field(f, "path", json_type_string, label, ctx, e)) ||
		    !(d = enpu_json_field(f, "sha256", json_type_string, label, ctx, e)) ||
		    !(b = enpu_json_field(f, "bytes", json_type_int, label, ctx, e)) ||
		    enpu_json_int(b, 0, INT64_MAX, label, "field 'bytes'", &iv, e) < 0)
			goto fail;
		const char *path = json_object_get_string(p);
		if (!enpu_wire_path_is_safe(path, 255) || strcmp(path, "manifest.json") == 0) {
			enpu_fail(e, ENPU_E_ARTIFACT, label, "the artifact's files stay inside it",
				  "file path '%s' is not a plain relative path inside the artifact", path);
			goto fail;
		}
		if (!enpu_is_sha256_hex(json_object_get_string(d))) {
			enpu_fail(e, ENPU_E_ARTIFACT, label, NULL, "file '%s': field 'sha256' is not a sha256 digest", path);
			goto fail;
		}
		if (nf > 0 && strcmp(lf[nf - 1].path, path) >= 0) {
			enpu_fail(e, ENPU_E_ARTIFACT, label, NULL,
				  "field 'files' is not sorted by path, or lists '%s' twice", path);
			goto fail;
		}
		if (check_no_links(dir, path, e) < 0)
			goto fail;
		memset(l, 0, sizeof(*l));
		if (!(l->path = strdup(path))) {
			enpu_fail(e, ENPU_E_NOMEM, label, NULL, "cannot load the artifact");
			goto fail;
		}
		nf++;
		if ((uint64_t)iv > SIZE_MAX - 1 ||
		    read_member(dir, path, (size_t)iv + 1, &l->data, e) < 0 || l->data.len != (uint64_t)iv) {
			enpu_fail(e, ENPU_E_ARTIFACT_DIGEST, path, "recompile the artifact",
				  "artifact file '%s' does not have the size the manifest records (%lld bytes)",
				  path, (long long)iv);
			goto fail;
		}
		enpu_sha256_hex(l->data.data, l->data.len, l->sha256);
		if (strcmp(l->sha256, json_object_get_string(d)) != 0) {
			enpu_fail(e, ENPU_E_ARTIFACT_DIGEST, path, "recompile the artifact",
				  "artifact file '%s' has sha256 %.12s..., the manifest records %.12s...",
				  path, l->sha256, json_object_get_string(d));
			goto fail;
		}
	}
	for (int i = 0; i < nf; i++) {
		paths[i] = lf[i].path;
		digests[i] = lf[i].sha256;
	}
	enpu_artifact_id_of(paths, digests, nf, id);
	if (strcmp(id, a->id) != 0) {
		enpu_fail(e, ENPU_E_ARTIFACT, label, NULL,
			  "artifact id %.12s... does not match its files (%.12s...)", a->id, id);
		goto fail;
	}

	if (!(gf = find_file(lf, nf, "graph.json")) || !(pf = find_file(lf, nf, "plan.json")) ||
	    !(wf = find_file(lf, nf, wpath))) {
		enpu_fail(e, ENPU_E_ARTIFACT, label, NULL,
			  "the manifest must list graph.json, plan.json and '%s'", wpath);
		goto fail;
	}
	if (enpu_graph_from_json(gf->data.data, gf->data.len, "graph.json", lim, &a->g,
				 &gweights, e) < 0)
		goto fail;
	if (strcmp(gweights, wpath) != 0 || strcmp(a->g->backend, a->backend) != 0) {
		enpu_fail(e, ENPU_E_ARTIFACT, "graph.json", NULL,
			  "graph.json and manifest.json disagree on the backend or the weights file");
		goto fail;
	}
	if (enpu_plan_from_json_section(a->g, pf->data.data, pf->data.len, "plan.json", &a->plan,
					a->def->section, &section, e) < 0)
		goto fail;
	/* the backend's plan, derived again: graph.json's lowerings and
	 * plan.json's section must be what it gives */
	if (a->def->plan && a->def->plan(a->g, a->opts, a->plan.arena_bytes, &a->st, e) < 0)
		goto fail;
	if (enpu_graph_check_lowerings(a->g, a->st, gf->data.data, gf->data.len, "graph.json", e) < 0)
		goto fail;
	if (a->def->check_plan) {
		if (a->def->check_plan(a->g, a->opts, a->st, section, "plan.json", e) < 0)
			goto fail;
	} else if (section) {
		enpu_fail(e, ENPU_E_ARTIFACT, "plan.json", NULL, "a %s plan has no '%s' section",
			  a->def->name, a->def->section);
		goto fail;
	}
	if (enpu_npz_read_mem(wf->data.data, wf->data.len, wpath, lim, &a->weights, e) < 0) {
		if (e)
			e->code = ENPU_E_ARTIFACT;
		goto fail;
	}
	if (bind_weights(a, wpath, e) < 0)
		goto fail;

	free(gweights);
	free_files(lf, nf);
	json_object_put(m);
	json_object_put(section);
	enpu_buf_free(&mbuf);
	*out = a;
	return 0;
fail:
	json_object_put(section);
	free(gweights);
	free_files(lf, nf);
	json_object_put(m);
	enpu_buf_free(&mbuf);
	enpu_artifact_free(a);
	return -1;
}

void enpu_artifact_free(enpu_artifact *a)
{
	if (!a)
		return;
	enpu_graph_free(a->g);
	enpu_plan_free(&a->plan);
	enpu_tlist_free(&a->weights);
	free(a->wdata);
	if (a->st && a->def->state_free)
		a->def->state_free(a->st);
	free(a->opts);
	free(a);
}

const char *enpu_artifact_id(const enpu_artifact *a)
{
	return a->id;
}

const char *enpu_artifact_backend(const enpu_artifact *a)
{
	return a->backend;
}

const enpu_graph *enpu_artifact_graph(const enpu_artifact *a)
{
	return a->g;
}

const enpu_plan *enpu_artifact_plan(const struct enpu_artifact *a)
{
	return &a->plan;
}

const float *enpu_artifact_weight(const struct enpu_artifact *a, int tensor)
{
	if (tensor < 0 || tensor >= a->g->n_tensors)
		return NULL;
	return a->wdata[tensor];
}

const enpu_backend_def *enpu_artifact_def(const struct enpu_artifact *a)
{
	return a->def;
}

const void *enpu_artifact_options(const struct enpu_artifact *a)
{
	return a->opts;
}

const void *enpu_artifact_state(const struct enpu_artifact *a)
{
	return a->st;
}

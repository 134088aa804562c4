/* artifact.c: manifest.json's writer (its reader is enpu_manifest_parse,
 * proto/wire.c), and loading a compiled artifact. Loading trusts nothing in
 * the directory: every file's path, size and sha256 (not the sha256 when
 * the caller vouches for it, ENPU_LOAD_TRUSTED, or hashed the files itself,
 * ENPU_LOAD_HASHED) is checked against the manifest, the id against the
 * files, then graph.json, plan.json and the weights against each other
 * (enpu_artifact_check: the weights by their headers, no handle). The backend's target options (manifest
 * "target") must parse; its plan (an npu model, a PL partition) is derived
 * again from them, and graph.json's lowerings, plan.json's backend section
 * and the manifest's summary must be what it gives (backend.h). A trusted
 * load reads the plan from plan.json where the backend can (plan_read: the
 * npu model) instead of deriving it. */
#include <errno.h>
#include <stdatomic.h>
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
#include "shape.h"


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
	char *outputs;         /* enpu_graph_outputs_json's text, made once at load */
	/* report.json's bytes, made at the first run when they depend on the
	 * artifact alone (enpu_artifact_report_memo); set once, then read only */
	_Atomic(struct report_memo *) report;
};

struct report_memo {
	size_t len;
	char bytes[];
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
			  struct json_object *target, const enpu_msummary *summary,
			  const enpu_manifest_file *files, int n, enpu_buf *out, enpu_err *e)
{
	json_object *root = json_object_new_object(), *spec, *arr, *sum;
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
	if (!(sum = json_object_new_object()))
		goto nomem;
	json_object_object_add(root, "summary", sum);
	if (enpu_msummary_to_json(summary, sum) < 0)
		goto nomem;
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

void enpu_msummary_of(const enpu_graph *g, uint64_t arena_bytes, const enpu_backend_def *def,
		      const void *st, enpu_msummary *s)
{
	memset(s, 0, sizeof *s);
	s->operators = g->n_ops;
	s->components = g->n_components;
	s->arena_bytes = arena_bytes;
	/* only a backend that splits the graph says where ops go */
	if (def->counts && def->plan) {
		s->partition = 1;
		def->counts(g, st, &s->pl_ops, &s->ps_ops, &s->pl_segments);
	}
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
 * with its shape; nothing else is; gather's indices are in range. */
static int bind_each(enpu_artifact *a, unsigned char *bound, const char *label, enpu_err *e)
{
	enpu_graph *g = a->g;

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
		if (bound[ti])
			return enpu_fail(e, ENPU_E_ARTIFACT, label, NULL,
					 "weights file holds '%s' twice", t->name);
		bound[ti] = 1;
		a->wdata[ti] = t->data;
	}
	for (int i = 0; i < g->n_tensors; i++) {
		const enpu_irtensor *t = &g->tensors[i];
		uint64_t n = 0;
		if (t->kind != ENPU_TK_WEIGHT || t->last_use < 0 || bound[i])
			continue;
		if (enpu_shape_numel(&t->shape, &n) == 0 && n == 0)
			continue;   /* an empty tensor needs no bytes */
		return enpu_fail(e, ENPU_E_ARTIFACT, label, NULL,
				 "weights file lacks '%s', which op '%s' reads", t->name,
				 g->ops[t->last_use].name);
	}
	/* gather's indices as the compiler checked them: the kernel trusts them */
	for (int k = 0; k < g->n_ops; k++) {
		const enpu_irop *op = &g->ops[k];
		uint64_t n;

		if (op->def->id == ENPU_OP_GATHER &&
		    enpu_shape_numel(&g->tensors[op->in[1]].shape, &n) == 0 && n &&
		    enpu_gather_bad_index((const int64_t *)(const void *)a->wdata[op->in[1]], n,
					  g->tensors[op->in[0]].shape.dim[op->attrs.axis]) >= 0)
			return enpu_fail(e, ENPU_E_ARTIFACT, label, "recompile the artifact",
					 "op '%s' (gather): an index of '%s' is out of range",
					 op->name, g->tensors[op->in[1]].name);
	}
	return 0;
}

/* The weights against the graph (bind_each), a->wdata filled: a checked
 * load's arrays are not read, so no data pointer says which are bound. */
static int bind_weights(enpu_artifact *a, const char *label, enpu_err *e)
{
	size_t n = (size_t)(a->g->n_tensors ? a->g->n_tensors : 1);
	unsigned char *bound = calloc(n, 1);
	int rc;

	a->wdata = calloc(n, sizeof(*a->wdata));
	if (!a->wdata || !bound) {
		free(bound);
		return enpu_fail(e, ENPU_E_NOMEM, label, NULL, "cannot bind the weights");
	}
	rc = bind_each(a, bound, label, e);
	free(bound);
	return rc;
}

/* dir/manifest.json, not through a symbolic link (it could read a file
 * outside dir), parsed and validated (enpu_manifest_parse). */
static int read_manifest(const char *dir, enpu_manifest *m, enpu_err *e)
{
	enpu_buf b = ENPU_BUF_INIT;
	int rc = -1;

	if (check_no_links(dir, "manifest.json", e) < 0 ||
	    read_member(dir, "manifest.json", ENPU_MANIFEST_MAX, &b, e) < 0) {
		if (e && (e->code == ENPU_E_IO || e->code == ENPU_E_ARTIFACT_DIGEST))
			e->code = ENPU_E_ARTIFACT;
	} else {
		rc = enpu_manifest_parse(b.data, b.len, "manifest.json", m, e);
	}
	enpu_buf_free(&b);
	return rc;
}

/* Every listed file, not through a link, with the size and digest the
 * manifest records (which gives the id: enpu_manifest_parse checked); the
 * digest only when hash. Without hash, the file unread (or NULL) is not
 * read: its size is checked by a stat. */
static int read_files(const char *dir, const enpu_manifest *m, int hash, const char *unread,
		      loaded_file *lf, int *nf, enpu_err *e)
{
	for (int i = 0; i < m->n; i++) {
		const enpu_mfile *f = &m->files[i];
		loaded_file *l = &lf[*nf];
		char p[4096];
		struct stat st;

		if (check_no_links(dir, f->path, e) < 0)
			return -1;
		memset(l, 0, sizeof(*l));
		if (!(l->path = strdup(f->path)))
			return enpu_fail(e, ENPU_E_NOMEM, "manifest.json", NULL,
					 "cannot load the artifact");
		(*nf)++;
		if (!hash && unread && !strcmp(f->path, unread)) {
			/* not read here (its reader opens it): its size only */
			snprintf(p, sizeof p, "%s/%s", dir, f->path);   /* fits: check_no_links */
			if (stat(p, &st) == 0 && (uint64_t)st.st_size == f->bytes) {
				memcpy(l->sha256, f->sha256, sizeof l->sha256);
				continue;
			}
			return enpu_fail(e, ENPU_E_ARTIFACT_DIGEST, f->path, "recompile the artifact",
					 "artifact file '%s' does not have the size the manifest "
					 "records (%llu bytes)", f->path, (unsigned long long)f->bytes);
		}
		if (f->bytes > SIZE_MAX - 1 ||
		    read_member(dir, f->path, (size_t)f->bytes + 1, &l->data, e) < 0 ||
		    l->data.len != f->bytes)
			return enpu_fail(e, ENPU_E_ARTIFACT_DIGEST, f->path, "recompile the artifact",
					 "artifact file '%s' does not have the size the manifest "
					 "records (%llu bytes)", f->path, (unsigned long long)f->bytes);
		if (!hash) {
			memcpy(l->sha256, f->sha256, sizeof l->sha256);
			continue;
		}
		enpu_sha256_hex(l->data.data, l->data.len, l->sha256);
		if (strcmp(l->sha256, f->sha256) != 0)
			return enpu_fail(e, ENPU_E_ARTIFACT_DIGEST, f->path, "recompile the artifact",
					 "artifact file '%s' has sha256 %.12s..., the manifest records "
					 "%.12s...", f->path, l->sha256, f->sha256);
	}
	return 0;
}

/* graph.json (parsed once), plan.json and the backend's plan: derived
 * again, and then graph.json's lowerings and plan.json's section must be
 * what it gives; or, on a trusted load, read from plan.json's section
 * (plan_read), which an older build's artifact may not allow. */
static int load_graph_plan(enpu_artifact *a, const char *wpath, const loaded_file *gf,
			   const loaded_file *pf, const enpu_limits *lim, int trusted, enpu_err *e)
{
	json_object *groot, *section = NULL;
	char *gweights = NULL;
	int rc = -1, derive = 1;

	if (!(groot = enpu_json_parse(gf->data.data, gf->data.len, "graph.json", e)))
		return -1;
	if (enpu_graph_from_root(groot, "graph.json", lim, &a->g, &gweights, e) < 0)
		goto out;
	if (strcmp(gweights, wpath) != 0 || strcmp(a->g->backend, a->backend) != 0) {
		enpu_fail(e, ENPU_E_ARTIFACT, "graph.json", NULL,
			  "graph.json and manifest.json disagree on the backend or the weights file");
		goto out;
	}
	if (enpu_plan_from_json_section(a->g, pf->data.data, pf->data.len, "plan.json", &a->plan,
					a->def->section, &section, e) < 0)
		goto out;
	if (trusted && a->def->plan_read) {
		if ((derive = a->def->plan_read(a->g, a->opts, a->plan.arena_bytes, section,
						"plan.json", &a->st, e)) < 0)
			goto out;
	}
	if (derive && a->def->plan &&
	    a->def->plan(a->g, a->opts, a->plan.arena_bytes, &a->st, e) < 0)
		goto out;
	if (enpu_graph_check_lowerings(a->g, a->st, groot, "graph.json", e) < 0)
		goto out;
	if (!derive) {
		/* read, not derived: nothing to compare it with */
	} else if (a->def->check_plan) {
		if (a->def->check_plan(a->g, a->opts, a->st, section, "plan.json", e) < 0)
			goto out;
	} else if (section) {
		enpu_fail(e, ENPU_E_ARTIFACT, "plan.json", NULL, "a %s plan has no '%s' section",
			  a->def->name, a->def->section);
		goto out;
	}
	rc = 0;
out:
	free(gweights);
	json_object_put(section);
	json_object_put(groot);
	return rc;
}

/* The manifest's summary is what the loaded artifact gives: the daemon
 * answers compiles and takes jobs from the summary alone. An older build's
 * manifest has none: it is derived (enpu_artifact_summary), and the
 * daemon's import stores the manifest with it. */
static int check_summary(const enpu_artifact *a, const enpu_msummary *got, enpu_err *e)
{
	enpu_msummary want;

	enpu_msummary_of(a->g, a->plan.arena_bytes, a->def, a->st, &want);
	if (got->operators != want.operators || got->components != want.components ||
	    got->arena_bytes != want.arena_bytes || got->partition != want.partition ||
	    got->pl_ops != want.pl_ops || got->ps_ops != want.ps_ops ||
	    got->pl_segments != want.pl_segments)
		return enpu_fail(e, ENPU_E_ARTIFACT, "manifest.json", "recompile the artifact",
				 "field 'summary' does not match the artifact (%d operators, %d "
				 "components, %llu arena bytes%s)", want.operators, want.components,
				 (unsigned long long)want.arena_bytes,
				 want.partition ? ", and its PL/PS partition" : "");
	return 0;
}

/* The outputs' JSON text, once: each job of the artifact says it. */
static int outputs_text(enpu_artifact *a, enpu_err *e)
{
	json_object *o = enpu_graph_outputs_json(a->g);
	const char *s = o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
							   JSON_C_TO_STRING_NOSLASHESCAPE) : NULL;

	a->outputs = s ? strdup(s) : NULL;
	json_object_put(o);
	return a->outputs ? 0 : enpu_fail(e, ENPU_E_NOMEM, "graph.json", NULL,
					  "cannot load the artifact");
}

/* The weights file dir/rel's members by their headers into a->weights
 * (no data), but for gather's index arrays, read: bind_weights checks
 * them. */
static int scan_weights(enpu_artifact *a, const char *dir, const char *rel,
			const enpu_limits *lim, enpu_err *e)
{
	enpu_npz_index ix;
	char p[4096];
	int rc = 0;

	snprintf(p, sizeof p, "%s/%s", dir, rel);   /* fits: check_no_links */
	if (enpu_npz_scan(p, rel, lim, &ix, e) < 0)
		return -1;
	for (int k = 0; k < a->g->n_ops && rc == 0; k++) {
		const enpu_irop *op = &a->g->ops[k];

		if (op->def->id != ENPU_OP_GATHER)
			continue;
		for (size_t i = 0; i < ix.meta.n && rc == 0; i++)
			if (!strcmp(ix.meta.items[i].name, a->g->tensors[op->in[1]].name))
				rc = enpu_npz_scan_load(&ix, i, rel, e);
	}
	if (rc == 0) {
		a->weights = ix.meta;
		memset(&ix.meta, 0, sizeof ix.meta);
	}
	enpu_npz_index_free(&ix);
	return rc;
}

/* The artifact of manifest m from files lf: target options, graph, plan,
 * summary, weights (check_only: by their headers, scan_weights). */
static int build(enpu_artifact *a, const char *dir, const enpu_manifest *m, loaded_file *lf,
		 int nf, const enpu_limits *lim, int trusted, int check_only, enpu_err *e)
{
	const loaded_file *gf = find_file(lf, nf, "graph.json"), *pf = find_file(lf, nf, "plan.json");
	const loaded_file *wf = find_file(lf, nf, m->weights);

	memcpy(a->id, m->id, sizeof a->id);
	snprintf(a->backend, sizeof(a->backend), "%s", m->backend);
	a->def = enpu_backend_by_name(m->backend);
	if (a->def->opts_size) {
		if (!(a->opts = calloc(1, a->def->opts_size)))
			return enpu_fail(e, ENPU_E_NOMEM, "manifest.json", NULL, "cannot load the target");
		if (a->def->opts_from_json(a->def, a->opts, m->target, "manifest.json", e) < 0)
			return -1;
	}
	if (load_graph_plan(a, m->weights, gf, pf, lim, trusted, e) < 0 ||
	    (m->has_summary && check_summary(a, &m->summary, e) < 0))
		return -1;
	if (check_only ? scan_weights(a, dir, m->weights, lim, e) < 0 :
	    enpu_npz_read_mem(wf->data.data, wf->data.len, m->weights, lim, &a->weights, e) < 0) {
		if (e)
			e->code = ENPU_E_ARTIFACT;
		return -1;
	}
	if (bind_weights(a, m->weights, e) < 0)
		return -1;
	return outputs_text(a, e);
}

int enpu_artifact_load(const char *dir, const enpu_limits *lim,
		       enpu_artifact **out, enpu_err *e)
{
	return enpu_artifact_load_ex(dir, lim, 0, out, e);
}

/* enpu_artifact_load_ex, or with check_only enpu_artifact_check's load */
static int load(const char *dir, const enpu_limits *lim, unsigned flags, int check_only,
		enpu_artifact **out, enpu_err *e)
{
	enpu_manifest m;
	loaded_file lf[ENPU_MANIFEST_FILES];
	int nf = 0, rc = -1;
	enpu_artifact *a = NULL;

	*out = NULL;
	if (!lim)
		lim = enpu_limits_default();
	if (read_manifest(dir, &m, e) < 0)
		return -1;
	if (!(a = calloc(1, sizeof(*a))))
		enpu_fail(e, ENPU_E_NOMEM, "manifest.json", NULL, "cannot load the artifact");
	else if (read_files(dir, &m, !(flags & (ENPU_LOAD_TRUSTED | ENPU_LOAD_HASHED)),
			    check_only ? m.weights : NULL, lf, &nf, e) == 0 &&
		 build(a, dir, &m, lf, nf, lim, flags & ENPU_LOAD_TRUSTED, check_only, e) == 0)
		rc = 0;
	free_files(lf, nf);
	enpu_manifest_free(&m);
	if (rc < 0)
		enpu_artifact_free(a);
	else
		*out = a;
	return rc;
}

int enpu_artifact_load_ex(const char *dir, const enpu_limits *lim, unsigned flags,
			  enpu_artifact **out, enpu_err *e)
{
	return load(dir, lim, flags, 0, out, e);
}

int enpu_artifact_check(const char *dir, const enpu_limits *lim, unsigned flags,
			enpu_msummary *s, enpu_err *e)
{
	enpu_artifact *a;

	if (load(dir, lim, flags, 1, &a, e) != 0)
		return -1;
	if (s)
		enpu_artifact_summary(a, s);
	enpu_artifact_free(a);
	return 0;
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
	free(a->outputs);
	free(atomic_load(&a->report));
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

int enpu_artifact_report_memo(const enpu_artifact *a, enpu_buf *out)
{
	struct report_memo *m = atomic_load(&((enpu_artifact *)a)->report);

	if (!m)
		return 0;
	return enpu_buf_add(out, m->bytes, m->len) == 0 ? 1 : -1;
}

void enpu_artifact_report_memo_set(const enpu_artifact *a, const void *p, size_t n)
{
	struct report_memo *m = malloc(sizeof *m + n), *none = NULL;

	if (!m)
		return;   /* made again at the next run */
	m->len = n;
	memcpy(m->bytes, p, n);
	/* the first to set it wins; the bytes are the same whoever made them */
	if (!atomic_compare_exchange_strong(&((enpu_artifact *)a)->report, &none, m))
		free(m);
}

const char *enpu_artifact_outputs_json(const enpu_artifact *a)
{
	return a->outputs;
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

void enpu_artifact_summary(const enpu_artifact *a, enpu_msummary *s)
{
	enpu_msummary_of(a->g, a->plan.arena_bytes, a->def, a->st, s);
}

const void *enpu_artifact_state(const struct enpu_artifact *a)
{
	return a->st;
}

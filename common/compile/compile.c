/* compile.c: enpu_compile. Validates the spec for a target, checks the
 * weights file against it, plans memory and writes the artifact directory
 * (graph.json, plan.json, weights/<backend>.npz, then manifest.json last,
 * so a directory without a manifest is never mistaken for an artifact).
 * The target's backend (backend.h) decides each op's lowering and makes
 * its own plan (npu_sim's cycle and memory model, fpga_board's PL
 * partition), which goes into graph.json's lowerings and plan.json's
 * backend section. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "enpu.h"
#include "digest.h"
#include "npz.h"
#include "graphjson.h"
#include "plan.h"
#include "backend.h"
#include "shape.h"
#include "shape.h"

/* The spec's file name in weight errors: enpu_spec does not expose the
 * label it was parsed with. */
#define WEIGHTS_FIX "retrain the weights or correct the spec"

static int first_reader(const enpu_graph *g, int t)
{
	for (int k = 0; k < g->n_ops; k++)
		for (int j = 0; j < g->ops[k].n_in; j++)
			if (g->ops[k].in[j] == t)
				return k;
	return -1;
}

/* Weights against the spec's declarations: present, same dtype and shape,
 * nothing undeclared. */
static int check_weights(const enpu_graph *g, const enpu_tlist *w, const char *slabel,
			 const char *wlabel, enpu_err *e)
{
	char have[512], s1[128], s2[128], loc[320];

	for (int i = 0; i < g->n_tensors; i++) {
		const enpu_irtensor *t = &g->tensors[i];
		const enpu_tensor *x;
		int k;

		if (t->kind != ENPU_TK_WEIGHT)
			continue;
		if (t->line > 0)
			snprintf(loc, sizeof(loc), "%.300s:%d", slabel, t->line);
		else
			snprintf(loc, sizeof(loc), "%.300s", slabel);
		if (!(x = enpu_tlist_find(w, t->name))) {
			enpu_tlist_names(w, have, sizeof(have));
			return enpu_fail(e, ENPU_E_WEIGHT_MISSING, wlabel, WEIGHTS_FIX,
					 "weight '%s' declared at %s is not in %s (it holds [%s])",
					 t->name, loc, wlabel, have);
		}
		if (x->dtype != t->dtype)
			return enpu_fail(e, ENPU_E_WEIGHT_DTYPE, wlabel, WEIGHTS_FIX,
					 "weight '%s': %s declares %s, %s holds %s", t->name, loc,
					 enpu_dtype_name(t->dtype), wlabel, enpu_dtype_name(x->dtype));
		if (!enpu_shape_eq(&x->shape, &t->shape)) {
			enpu_shape_str(&t->shape, s1, sizeof(s1));
			enpu_shape_str(&x->shape, s2, sizeof(s2));
			if ((k = first_reader(g, i)) >= 0)
				return enpu_fail(e, ENPU_E_WEIGHT_SHAPE, NULL, WEIGHTS_FIX,
						 "op '%s' reads weight '%s': %s declares %s, %s holds %s",
						 g->ops[k].name, t->name, loc, s1, wlabel, s2);
			return enpu_fail(e, ENPU_E_WEIGHT_SHAPE, NULL, WEIGHTS_FIX,
					 "weight '%s': %s declares %s, %s holds %s",
					 t->name, loc, s1, wlabel, s2);
		}
	}
	for (size_t i = 0; i < w->n; i++) {
		int ti = enpu_graph_find(g, w->items[i].name);
		if (ti < 0 || g->tensors[ti].kind != ENPU_TK_WEIGHT)
			return enpu_fail(e, ENPU_E_WEIGHT_EXTRA, wlabel,
					 "remove it from the weights file or declare it in the spec",
					 "%s holds '%s', which the spec does not declare as a weight",
					 wlabel, w->items[i].name);
	}
	return 0;
}

/* gather's indices (an int64 weight, constant) lie in [-d, d - 1] of the
 * gathered dimension: checked here once, never when the model runs. */
static int check_indices(const enpu_graph *g, const enpu_tlist *w, const char *slabel,
			 enpu_err *e)
{
	for (int k = 0; k < g->n_ops; k++) {
		const enpu_irop *op = &g->ops[k];
		const enpu_tensor *x;
		int64_t d, bad;
		uint64_t n;
		char loc[400];

		if (op->def->id != ENPU_OP_GATHER ||
		    !(x = enpu_tlist_find(w, g->tensors[op->in[1]].name)) ||
		    enpu_shape_numel(&x->shape, &n) < 0)
			continue;
		d = g->tensors[op->in[0]].shape.dim[op->attrs.axis];
		if ((bad = enpu_gather_bad_index(x->i64, n, d)) < 0)
			continue;
		snprintf(loc, sizeof(loc), "%.300s:%d:%d", slabel, op->line, op->col);
		return enpu_fail(e, ENPU_E_WEIGHT_VALUE, loc, NULL,
				 "op '%s' (gather): index %lld at position %lld of '%s' is out of "
				 "range [%lld, %lld] for axis %d of '%s'", op->name,
				 (long long)x->i64[bad], (long long)bad, x->name, (long long)-d,
				 (long long)d - 1, op->attrs.axis, g->tensors[op->in[0]].name);
	}
	return 0;
}

/* outdir may exist only as an empty directory. */
static int check_outdir(const char *dir, enpu_err *e)
{
	struct stat st;
	DIR *d;
	struct dirent *de;
	int nonempty = 0;

	if (stat(dir, &st) < 0) {
		if (errno == ENOENT)
			return 0;
		return enpu_fail(e, ENPU_E_IO, dir, NULL, "cannot access '%s': %s", dir, strerror(errno));
	}
	if (!S_ISDIR(st.st_mode))
		return enpu_fail(e, ENPU_E_IO, dir, "choose another output directory",
				 "output '%s' exists and is not a directory", dir);
	if (!(d = opendir(dir)))
		return enpu_fail(e, ENPU_E_IO, dir, NULL, "cannot open '%s': %s", dir, strerror(errno));
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
			nonempty = 1;
			break;
		}
	closedir(d);
	if (nonempty)
		return enpu_fail(e, ENPU_E_IO, dir, "choose an empty or new output directory",
				 "output directory '%s' is not empty", dir);
	return 0;
}

static int join(char *out, size_t cap, const char *dir, const char *rel, enpu_err *e)
{
	if ((size_t)snprintf(out, cap, "%s/%s", dir, rel) >= cap)
		return enpu_fail(e, ENPU_E_IO, dir, NULL, "path '%s/%s' is too long", dir, rel);
	return 0;
}

static int set_file(enpu_artifact_file *f, const char *path, enpu_buf *b)
{
	snprintf(f->path, sizeof f->path, "%s", path);
	f->data = *b;
	*b = (enpu_buf)ENPU_BUF_INIT;
	enpu_sha256_hex(f->data.data ? f->data.data : "", f->data.len, f->sha256);
	f->size = f->data.len;
	f->on_disk = 0;
	return 0;
}

/* The weights the graph reads, in spec order, in the backend's layout
 * (every v1 backend keeps the spec's layout); borrowed from w, not copied
 * (free bw->items only). */
static int used_weights(const enpu_graph *g, const enpu_tlist *w, enpu_tlist *bw, enpu_err *e)
{
	size_t n = (size_t)(g->n_tensors ? g->n_tensors : 1);
	int *first = malloc(sizeof(int) * n), *last = malloc(sizeof(int) * n), rc = -1;

	bw->items = calloc(n, sizeof(*bw->items));
	if (!first || !last || !bw->items) {
		enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "cannot compile '%s'", g->name);
		goto out;
	}
	bw->alloc = (size_t)g->n_tensors;
	enpu_plan_lifetimes(g, first, last);
	for (int i = 0; i < g->n_tensors; i++)
		if (g->tensors[i].kind == ENPU_TK_WEIGHT && last[i] >= 0)
			bw->items[bw->n++] = *enpu_tlist_find(w, g->tensors[i].name);
	rc = 0;
out:
	free(first);
	free(last);
	return rc;
}

/* What one compile made, for the files. */
typedef struct made {
	const enpu_graph *g;
	const enpu_plan *plan;
	const enpu_backend_def *def;
	const void *st;
	json_object *section;     /* plan.json's backend section, or NULL */
	const enpu_tlist *bw;     /* the weights file's tensors */
	const enpu_npz_index *ix; /* streamed: their source (data not in bw) */
	const char *outdir;       /* streamed: where the weights file goes */
	const enpu_linker *link;  /* streamed: how the weights file is linked, or NULL */
} made;

/* The weights file: built in memory, or (k->ix) into outdir: the weights
 * file itself (linked) when it holds exactly these weights, all stored
 * (its address, weights_sha256, is its digest: not hashed again), else
 * written member by member from it. */
static int weights_file(const made *k, const char *wrel, const char *weights_sha256,
			enpu_artifact_file *f, enpu_err *e)
{
	enpu_buf wb = ENPU_BUF_INIT;
	char path[4200];
	const char **names;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int rc;

	if (!k->ix) {
		if (enpu_npz_write_mem(k->bw, wrel, &wb, e) < 0)
			return -1;
		return set_file(f, wrel, &wb);
	}
	if (join(path, sizeof(path), k->outdir, wrel, e) < 0)
		return -1;
	if (!(names = malloc(sizeof(*names) * (k->bw->n ? k->bw->n : 1))))
		return enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
	for (size_t i = 0; i < k->bw->n; i++)
		names[i] = k->bw->items[i].name;
	rc = 0;
	if (weights_sha256 && enpu_is_sha256_hex(weights_sha256)) {
		rc = enpu_npz_link_from(k->ix, names, k->bw->n, path,
					cpus < 1 ? 1 : cpus > 4 ? 4 : (int)cpus,
					k->link, weights_sha256, &f->size, e);
		if (rc == 1)
			memcpy(f->sha256, weights_sha256, 65);
	}
	if (rc == 0)
		rc = enpu_npz_write_from(k->ix, names, k->bw->n, path, f->sha256, &f->size, e);
	free(names);
	snprintf(f->path, sizeof f->path, "%s", wrel);
	f->on_disk = 1;
	return rc < 0 ? -1 : 0;
}

/* graph.json, plan.json, weights/<backend>.npz, then manifest.json (with
 * the id of the three and the summary) into out->files, and out->info. */
static int make_files(const made *k, const enpu_target *tgt, const char *weights_sha256,
		      const char *spec_digest, enpu_compiled *out, enpu_err *e)
{
	enpu_buf gj = ENPU_BUF_INIT, pj = ENPU_BUF_INIT, mj = ENPU_BUF_INIT;
	enpu_manifest_file mf[3];
	enpu_msummary sum;
	json_object *target = NULL;
	const char *paths[3], *digests[3];
	char wrel[64], id[65];
	int rc = -1;

	snprintf(wrel, sizeof(wrel), "weights/%s.npz", k->g->backend);
	if (enpu_graph_to_json(k->g, wrel, "spec", k->st, &gj, e) < 0 ||
	    enpu_plan_to_json_section(k->g, k->plan, k->def->section, k->section, &pj, e) < 0 ||
	    weights_file(k, wrel, weights_sha256, &out->files[2], e) < 0)
		goto out;
	set_file(&out->files[0], "graph.json", &gj);
	set_file(&out->files[1], "plan.json", &pj);
	for (int i = 0; i < 3; i++) {
		mf[i].path = out->files[i].path;
		mf[i].bytes = out->files[i].size;
		memcpy(mf[i].sha256, out->files[i].sha256, sizeof mf[i].sha256);
		paths[i] = mf[i].path;
		digests[i] = mf[i].sha256;
	}
	enpu_artifact_id_of(paths, digests, 3, id);
	enpu_msummary_of(k->g, k->plan->arena_bytes, k->def, k->st, &sum);
	target = enpu_json_canonical(enpu_target_json(tgt));
	if (enpu_manifest_to_json(id, k->g->backend, k->g->name, spec_digest, weights_sha256, wrel,
				  "spec", target, &sum, mf, 3, &mj, e) < 0)
		goto out;
	set_file(&out->files[3], "manifest.json", &mj);

	memcpy(out->info.artifact_id, id, sizeof(out->info.artifact_id));
	out->info.n_ops = sum.operators;
	out->info.n_components = sum.components;
	snprintf(out->info.backend, sizeof(out->info.backend), "%s", k->g->backend);
	out->info.arena_bytes = sum.arena_bytes;
	if (k->def->counts)
		k->def->counts(k->g, k->st, &out->info.pl_ops, &out->info.ps_ops,
			       &out->info.pl_segments);
	rc = 0;
out:
	json_object_put(target);
	enpu_buf_free(&gj);
	enpu_buf_free(&pj);
	enpu_buf_free(&mj);
	return rc;
}

/* gather's indices, which check_indices reads, loaded from the index */
static int load_indices(const enpu_graph *g, enpu_npz_index *ix, const char *wlabel,
			enpu_err *e)
{
	for (int k = 0; k < g->n_ops; k++) {
		const char *name;
		if (g->ops[k].def->id != ENPU_OP_GATHER)
			continue;
		name = g->tensors[g->ops[k].in[1]].name;
		for (size_t i = 0; i < ix->meta.n; i++)
			if (!strcmp(ix->meta.items[i].name, name) &&
			    enpu_npz_scan_load(ix, i, wlabel, e) < 0)
				return -1;
	}
	return 0;
}

/* enpu_compile_mem's and enpu_compile_to_dir's work: w holds every weight
 * (names, dtypes, shapes; data unless ix streams it). */
static int compile_core(const enpu_spec *spec, const enpu_target *tgt, const enpu_tlist *w,
			enpu_npz_index *ix, const char *outdir, const enpu_linker *link,
			const char *weights_label,
			const char *weights_sha256, const char *spec_digest, const enpu_limits *lim,
			enpu_compiled *out, enpu_err *e)
{
	enpu_graph *g = NULL;
	enpu_tlist bw = ENPU_TLIST_INIT;
	enpu_plan plan = ENPU_PLAN_INIT;
	const enpu_backend_def *def = enpu_target_def(tgt);
	const void *opts = enpu_target_options(tgt);
	void *st = NULL;
	json_object *section = NULL;
	int rc = -1;

	memset(out, 0, sizeof *out);
	if (!lim)
		lim = enpu_limits_default();
	if (!weights_label)
		weights_label = "weights.npz";
	if (enpu_validate_for(spec, tgt, &g, e) < 0 ||
	    check_weights(g, w, enpu_spec_label(spec), weights_label, e) < 0 ||
	    (ix && load_indices(g, ix, weights_label, e) < 0) ||
	    check_indices(g, w, enpu_spec_label(spec), e) < 0 ||
	    enpu_plan_build(g, &plan, e) < 0)
		goto out;
	/* the backend's own plan and its plan.json section */
	if (def->plan && def->plan(g, opts, plan.arena_bytes, &st, e) < 0)
		goto out;
	if (def->plan_json && !(section = def->plan_json(g, opts, st))) {
		enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "cannot build the %s plan of '%s'", def->name,
			  g->name);
		goto out;
	}
	if (used_weights(g, w, &bw, e) < 0)
		goto out;
	rc = make_files(&(made){g, &plan, def, st, section, &bw, ix, outdir, link}, tgt, weights_sha256,
			spec_digest, out, e);
out:
	if (rc < 0)
		enpu_compiled_free(out);
	json_object_put(section);
	if (st && def->state_free)
		def->state_free(st);
	free(bw.items);   /* borrowed tensors: w owns them */
	enpu_plan_free(&plan);
	enpu_graph_free(g);
	return rc;
}

int enpu_compile_mem(const enpu_spec *spec, const enpu_target *tgt, const enpu_tlist *w,
		     const char *weights_label, const char *weights_sha256,
		     const char *spec_digest, const enpu_limits *lim, enpu_compiled *out,
		     enpu_err *e)
{
	return compile_core(spec, tgt, w, NULL, NULL, NULL, weights_label, weights_sha256, spec_digest,
			    lim, out, e);
}

int enpu_compile_to_dir(const enpu_spec *spec, const enpu_target *tgt, const char *weights_path,
			const char *weights_label, const char *weights_sha256,
			const char *spec_digest, const enpu_limits *lim, const char *outdir,
			const enpu_linker *link, enpu_compiled *out, enpu_err *e)
{
	enpu_npz_index ix;
	char path[4096];
	int rc = -1;

	memset(out, 0, sizeof *out);
	if (!lim)
		lim = enpu_limits_default();
	if (!weights_label)
		weights_label = "weights.npz";
	if (check_outdir(outdir, e) < 0 ||
	    enpu_npz_scan(weights_path, weights_label, lim, &ix, e) < 0)
		return -1;
	if (join(path, sizeof(path), outdir, "weights", e) < 0 || enpu_mkdirs(path, 0755, e) < 0 ||
	    compile_core(spec, tgt, &ix.meta, &ix, outdir, link, weights_label, weights_sha256,
			 spec_digest, lim, out, e) < 0 ||
	    enpu_compiled_write(out, outdir, e) < 0)
		goto out;
	rc = 0;
out:
	if (rc < 0) {   /* the streamed weights file too */
		for (int k = 0; k < ENPU_ARTIFACT_FILES; k++)
			if (out->files[k].path[0] &&
			    join(path, sizeof(path), outdir, out->files[k].path, NULL) == 0)
				unlink(path);
		if (join(path, sizeof(path), outdir, "weights", NULL) == 0)
			rmdir(path);
		enpu_compiled_free(out);
	}
	enpu_npz_index_free(&ix);
	return rc;
}

void enpu_compiled_free(enpu_compiled *c)
{
	for (int i = 0; i < ENPU_ARTIFACT_FILES; i++)
		enpu_buf_free(&c->files[i].data);
}

int enpu_compiled_write(const enpu_compiled *c, const char *outdir, enpu_err *e)
{
	char path[4096];
	int i, rc = -1;

	if (!c->files[2].on_disk && check_outdir(outdir, e) < 0)
		return -1;
	if (join(path, sizeof(path), outdir, "weights", e) < 0 || enpu_mkdirs(path, 0755, e) < 0)
		return -1;
	/* the manifest (last) is never written before everything else is */
	for (i = 0; i < ENPU_ARTIFACT_FILES; i++)
		if (c->files[i].on_disk)
			continue;
		else if (join(path, sizeof(path), outdir, c->files[i].path, e) < 0 ||
		    enpu_write_file_atomic(path, c->files[i].data.data ? c->files[i].data.data : "",
					   c->files[i].data.len, e) < 0)
			goto out;
	rc = 0;
out:
	if (rc < 0) {   /* leave no half artifact behind */
		for (int k = 0; k < ENPU_ARTIFACT_FILES; k++)
			if (join(path, sizeof(path), outdir, c->files[k].path, NULL) == 0)
				unlink(path);
		if (join(path, sizeof(path), outdir, "weights", NULL) == 0)
			rmdir(path);
	}
	return rc;
}

int enpu_compile(const enpu_spec *spec, const enpu_target *tgt,
		 const char *weights_path, const char *weights_label,
		 const char *spec_digest, const char *outdir,
		 const enpu_limits *lim, enpu_compile_info *info, enpu_err *e)
{
	enpu_compiled c;
	char wdigest[65];
	int rc = -1;

	memset(&c, 0, sizeof c);
	if (!lim)
		lim = enpu_limits_default();
	if (!weights_label)
		weights_label = "weights.npz";
	if (enpu_sha256_file(weights_path, wdigest, e) < 0 ||
	    enpu_compile_to_dir(spec, tgt, weights_path, weights_label, wdigest, spec_digest, lim,
				outdir, NULL, &c, e) < 0)
		goto out;
	if (info)
		*info = c.info;
	rc = 0;
out:
	enpu_compiled_free(&c);
	return rc;
}

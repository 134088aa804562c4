/* fuzz_artifact.c: libFuzzer target for the artifact loader (manifest.json,
 * graph.json, plan.json, the weights file) through enpu_artifact_load, the
 * code a daemon runs on an artifact that anyone with a token uploads.
 *
 * LLVMFuzzerInitialize compiles two small models (a tiny MLP and a tiny
 * CNN) for every backend into a private temporary directory. Input byte 0
 * picks a file (bits 0-1: manifest, graph, plan, weights), a backend (bits
 * 2-3) and a model (bit 4); the rest replaces that file in a copy of the
 * compiled artifact. For graph, plan and weights the manifest is rewritten
 * with the new digest, size and id, so the fuzzed bytes get past the digest
 * checks into the parsers. An artifact that loads is run on an input.
 * Oracle: a manifest that loads names no path outside the artifact (the
 * work directory holds a file next to it and a symbolic link out of it).
 *
 * ENPU_FUZZ_SEEDS=DIR: write one seed per (model, backend, file) and the
 * path-escape manifests into DIR, then exit (tests/fuzz/seed.sh). */
#include <errno.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <json-c/json.h>
#include "enpu.h"
#include "npz.h"
#include "digest.h"
#include "graphjson.h"
#include "fuzz_tmp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static const char mlp_spec[] =
	"eulernpu: 1\n"
	"name: tiny_mlp\n"
	"inputs:\n"
	"  - {name: x, dtype: float32, shape: [1, 8]}\n"
	"outputs: [logits]\n"
	"weights:\n"
	"  - {name: fc1.w, dtype: float32, shape: [8, 16]}\n"
	"  - {name: fc1.b, dtype: float32, shape: [16]}\n"
	"  - {name: fc2.w, dtype: float32, shape: [16, 4]}\n"
	"  - {name: fc2.b, dtype: float32, shape: [4]}\n"
	"components:\n"
	"  - name: hidden\n"
	"    ops:\n"
	"      - {name: fc1, op: matmul, in: [x, fc1.w], out: h1}\n"
	"      - {name: bias1, op: add, in: [h1, fc1.b], out: h2}\n"
	"      - {name: act1, op: relu, in: [h2], out: h}\n"
	"  - name: head\n"
	"    ops:\n"
	"      - {name: fc2, op: matmul, in: [h, fc2.w], out: z}\n"
	"      - {name: bias2, op: add, in: [z, fc2.b], out: logits}\n"
	"targets:\n"
	"  npu_sim: {array: [4, 4], dataflow: ws}\n";

static const char cnn_spec[] =
	"eulernpu: 1\n"
	"name: tiny_cnn\n"
	"inputs:\n"
	"  - {name: x, dtype: float32, shape: [1, 1, 6, 6]}\n"
	"outputs: [y]\n"
	"weights:\n"
	"  - {name: c.w, dtype: float32, shape: [2, 1, 3, 3]}\n"
	"  - {name: c.b, dtype: float32, shape: [2]}\n"
	"  - {name: bn.s, dtype: float32, shape: [2]}\n"
	"  - {name: bn.b, dtype: float32, shape: [2]}\n"
	"  - {name: bn.m, dtype: float32, shape: [2]}\n"
	"  - {name: bn.v, dtype: float32, shape: [2]}\n"
	"  - {name: fc.w, dtype: float32, shape: [4, 8]}\n"
	"  - {name: fc.b, dtype: float32, shape: [4]}\n"
	"components:\n"
	"  - name: features\n"
	"    ops:\n"
	"      - {name: conv, op: conv2d, in: [x, c.w, c.b], out: c1, attrs: {pads: [1, 1, 1, 1], strides: [2, 2]}}\n"
	"      - {name: bn, op: batchnorm, in: [c1, bn.s, bn.b, bn.m, bn.v], out: c2}\n"
	"      - {name: act, op: leaky_relu, in: [c2], out: c3}\n"
	"      - {name: pool, op: maxpool2d, in: [c3], out: p, attrs: {kernel: [2, 2], pads: [0, 0, 1, 1]}}\n"
	"      - {name: flat, op: flatten, in: [p], out: f}\n"
	"  - name: head\n"
	"    ops:\n"
	"      - {name: fc, op: gemm, in: [f, fc.w, fc.b], out: z, attrs: {trans_b: 1}}\n"
	"      - {name: act2, op: gelu, in: [z], out: g, attrs: {approximate: tanh}}\n"
	"      - {name: prob, op: softmax, in: [g], out: y}\n"
	"targets:\n"
	"  npu_sim: {array: [3, 5], dataflow: is}\n"
	"  fpga_board: {array: [4, 4], buffer_kib: 1}\n";

typedef struct wdecl {
	const char *name;
	int ndim;
	int64_t dim[4];
} wdecl;

static const wdecl mlp_w[] = {
	{"fc1.w", 2, {8, 16}}, {"fc1.b", 1, {16}}, {"fc2.w", 2, {16, 4}}, {"fc2.b", 1, {4}}, {NULL, 0, {0}},
};
static const wdecl mlp_x[] = {{"x", 2, {1, 8}}, {NULL, 0, {0}}};
static const wdecl cnn_w[] = {
	{"c.w", 4, {2, 1, 3, 3}}, {"c.b", 1, {2}}, {"bn.s", 1, {2}}, {"bn.b", 1, {2}},
	{"bn.m", 1, {2}}, {"bn.v", 1, {2}}, {"fc.w", 2, {4, 8}}, {"fc.b", 1, {4}}, {NULL, 0, {0}},
};
static const wdecl cnn_x[] = {{"x", 4, {1, 1, 6, 6}}, {NULL, 0, {0}}};

static const struct model {
	const char *name, *spec;
	const wdecl *w, *x;
} models[2] = {
	{"mlp", mlp_spec, mlp_w, mlp_x},
	{"cnn", cnn_spec, cnn_w, cnn_x},
};

enum { F_MANIFEST, F_GRAPH, F_PLAN, F_WEIGHTS, F_COUNT };
static const char *const fnames[F_COUNT] = {"manifest", "graph", "plan", "weights"};

/* One compiled artifact, in memory. */
typedef struct base {
	char *manifest; size_t manifest_len;
	char *path[F_COUNT];          /* relative paths of graph, plan, weights */
	enpu_buf data[F_COUNT];
} base;

static base bases[2][ENPU_BACKENDS_MAX];
static enpu_limits lim;
static char tmpdir[4096], work[4200], input[2][4200], result[4200], report[4200];
static char outside[] = "{\"outside\": true}\n";
/* What each file of work/a holds now (NULL: fuzzed bytes), to skip rewrites. */
static const enpu_buf *last_put[F_COUNT];

static void fatal(const char *what, const enpu_err *e)
{
	char buf[2048] = "";

	if (e)
		enpu_err_render(e, buf, sizeof(buf));
	fprintf(stderr, "fuzz_artifact: %s\n%s", what, buf);
	abort();
}

static void put(const char *dir, const char *rel, const void *p, size_t n)
{
	char path[8192];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	if (!(f = fopen(path, "wb")) || (n && fwrite(p, 1, n, f) != n) || fclose(f) != 0) {
		perror(path);
		abort();
	}
}

/* Deterministic small values, so that runs are reproducible. */
static void write_npz(const char *path, const wdecl *d)
{
	enpu_tlist l = ENPU_TLIST_INIT;
	enpu_err e = ENPU_ERR_INIT;
	uint64_t n;

	for (; d->name; d++) {
		enpu_tensor t = {0};
		t.shape.ndim = d->ndim;
		memcpy(t.shape.dim, d->dim, sizeof(d->dim));
		if (!(t.name = strdup(d->name)) || enpu_tensor_alloc(&t, NULL, &e) < 0)
			fatal("cannot build the weights", &e);
		enpu_shape_numel(&t.shape, &n);
		for (uint64_t i = 0; i < n; i++)
			t.data[i] = (float)((int)((i * 7 + 3) % 13) - 6) / 8.0f;
		if (enpu_tlist_push(&l, &t, &e) < 0)
			fatal("cannot build the weights", &e);
	}
	if (enpu_npz_write(path, &l, &e) < 0)
		fatal("cannot write an npz", &e);
	enpu_tlist_free(&l);
}

static void compile_base(int m, int bk)
{
	base *b = &bases[m][bk];
	enpu_spec *s = NULL;
	enpu_target *t = NULL;
	enpu_compile_info info;
	enpu_err e = ENPU_ERR_INIT;
	enpu_buf mb = ENPU_BUF_INIT;
	json_object *man, *files;
	char src[4300], out[4400], p[8800];
	const char *bkname = enpu_backend_name(bk);

	snprintf(src, sizeof(src), "%s/src", tmpdir);
	snprintf(p, sizeof(p), "%s/%s-weights.npz", src, models[m].name);
	snprintf(out, sizeof(out), "%s/base/%s-%s", tmpdir, models[m].name, bkname);
	if (enpu_spec_parse(models[m].spec, strlen(models[m].spec), "spec.yaml", &lim, &s, &e) < 0 ||
	    enpu_target_resolve(s, bkname, NULL, NULL, &lim, &t, &e) < 0 ||
	    enpu_compile(s, t, p, "weights.npz", NULL, out, &lim, &info, &e) < 0)
		fatal("cannot compile a base artifact", &e);
	enpu_target_free(t);
	enpu_spec_free(s);

	snprintf(p, sizeof(p), "%s/manifest.json", out);
	if (enpu_read_file(p, 0, &mb, &e) < 0)
		fatal("cannot read a manifest", &e);
	b->manifest = enpu_buf_detach(&mb, &b->manifest_len);
	if (!(man = enpu_json_parse(b->manifest, b->manifest_len, "manifest.json", &e)) ||
	    !(files = json_object_object_get(man, "files")))
		fatal("cannot parse a manifest", &e);
	for (size_t i = 0; i < json_object_array_length(files); i++) {
		const char *rel = json_object_get_string(
			json_object_object_get(json_object_array_get_idx(files, i), "path"));
		int f = strcmp(rel, "graph.json") == 0 ? F_GRAPH
			: strcmp(rel, "plan.json") == 0 ? F_PLAN : F_WEIGHTS;
		if (b->path[f])
			fatal("unexpected file in a compiled artifact", NULL);
		b->path[f] = strdup(rel);
		snprintf(p, sizeof(p), "%s/%s", out, rel);
		if (enpu_read_file(p, 0, &b->data[f], &e) < 0)
			fatal("cannot read an artifact file", &e);
	}
	json_object_put(man);
	if (!b->path[F_GRAPH] || !b->path[F_PLAN] || !b->path[F_WEIGHTS])
		fatal("a compiled artifact lacks a file", NULL);
}

/* A manifest like b's, with file rf's content replaced by (p, n) and, if
 * extra is set, one more entry for (extra, xp, xn); digests, sizes and the
 * id made consistent. Appended to out. */
static void make_manifest(const base *b, int rf, const void *p, size_t n, const char *extra,
			  const void *xp, size_t xn, enpu_buf *out)
{
	enpu_manifest_file mf[F_COUNT + 1];
	const char *paths[F_COUNT + 1], *digests[F_COUNT + 1];
	json_object *man, *files;
	enpu_err e = ENPU_ERR_INIT;
	int nf = 0;
	char id[65];

	for (int f = F_GRAPH; f < F_COUNT; f++) {
		const void *fp = f == rf ? p : b->data[f].data;
		size_t fn = f == rf ? n : b->data[f].len;
		mf[nf].path = b->path[f];
		mf[nf].bytes = fn;
		enpu_sha256_hex(fp, fn, mf[nf].sha256);
		nf++;
	}
	if (extra) {
		mf[nf].path = extra;
		mf[nf].bytes = xn;
		enpu_sha256_hex(xp, xn, mf[nf].sha256);
		nf++;
	}
	/* sorted by path, as the loader requires (a few entries: insertion) */
	for (int i = 1; i < nf; i++)
		for (int j = i; j > 0 && strcmp(mf[j - 1].path, mf[j].path) > 0; j--) {
			enpu_manifest_file tmp = mf[j];
			mf[j] = mf[j - 1];
			mf[j - 1] = tmp;
		}
	for (int i = 0; i < nf; i++) {
		paths[i] = mf[i].path;
		digests[i] = mf[i].sha256;
	}
	enpu_artifact_id_of(paths, digests, nf, id);
	if (!(man = enpu_json_parse(b->manifest, b->manifest_len, "manifest.json", &e)) ||
	    !(files = json_object_new_array()))
		fatal("cannot rebuild a manifest", &e);
	for (int i = 0; i < nf; i++) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "path", json_object_new_string(mf[i].path));
		json_object_object_add(o, "sha256", json_object_new_string(mf[i].sha256));
		json_object_object_add(o, "bytes", json_object_new_int64((int64_t)mf[i].bytes));
		json_object_array_add(files, o);
	}
	json_object_object_add(man, "files", files);
	json_object_object_add(man, "id", json_object_new_string(id));
	if (enpu_json_dump(man, out, &e) < 0)
		fatal("cannot write a manifest", &e);
	json_object_put(man);
}

static void dump_seed(const char *dir, const char *name, int mode, const void *p, size_t n)
{
	char path[8192];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!(f = fopen(path, "wb")) || fputc(mode, f) == EOF || (n && fwrite(p, 1, n, f) != n) ||
	    fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

/* Seeds: every file of every base, and manifests naming paths that leave
 * the artifact (each otherwise consistent, so only the path check stops it). */
static void dump_seeds(const char *dir)
{
	static const char *const escapes[] = {
		"../outside.json", "link/outside.json", "link", "/etc/passwd", "weights/../graph.json",
		"./graph.json", "weights//cpu_ref.npz", "weights/", "weights\\cpu_ref.npz",
		"manifest.json", "..", NULL,
	};
	char name[256];

	for (int m = 0; m < 2; m++)
		for (int bk = 0; bk < enpu_backend_count(); bk++)
			for (int f = 0; f < F_COUNT; f++) {
				const base *b = &bases[m][bk];
				snprintf(name, sizeof(name), "%s_%s_%s", models[m].name,
					 enpu_backend_name(bk), fnames[f]);
				dump_seed(dir, name, f | bk << 2 | m << 4,
					  f == F_MANIFEST ? b->manifest : b->data[f].data,
					  f == F_MANIFEST ? b->manifest_len : b->data[f].len);
			}
	for (int i = 0; escapes[i]; i++) {
		enpu_buf mb = ENPU_BUF_INIT;
		make_manifest(&bases[0][0], -1, NULL, 0, escapes[i], outside, strlen(outside), &mb);
		snprintf(name, sizeof(name), "escape_%02d", i);
		dump_seed(dir, name, F_MANIFEST, mb.data, mb.len);
		enpu_buf_free(&mb);
	}
	exit(0);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *seeds = getenv("ENPU_FUZZ_SEEDS");
	char p[8400];

	lim = *enpu_limits_default();
	lim.max_tensor_elems = 1u << 20;
	lim.max_tensor_bytes = 4u << 20;
	lim.max_npz_bytes = 8u << 20;
	lim.max_npz_members = 256;
	lim.max_ops = 4096;
	snprintf(tmpdir, sizeof(tmpdir), "%s", fuzz_tmpdir());
	/* tmp/src: weights and inputs; tmp/base: compiled artifacts;
	 * tmp/work/a: the artifact under test, with work/outside.json next to
	 * it and a/link -> .. out of it */
	snprintf(work, sizeof(work), "%s/work", tmpdir);
	snprintf(p, sizeof(p), "%s/src", tmpdir);
	if (mkdir(p, 0700) < 0 || mkdir(work, 0700) < 0)
		fatal("cannot make the work directories", NULL);
	for (int m = 0; m < 2; m++) {
		snprintf(p, sizeof(p), "%s/src/%s-weights.npz", tmpdir, models[m].name);
		write_npz(p, models[m].w);
		snprintf(input[m], sizeof(input[m]), "%s/src/%s-input.npz", tmpdir, models[m].name);
		write_npz(input[m], models[m].x);
	}
	for (int m = 0; m < 2; m++)
		for (int bk = 0; bk < enpu_backend_count(); bk++)
			compile_base(m, bk);
	put(work, "outside.json", outside, strlen(outside));
	snprintf(work, sizeof(work), "%s/work/a", tmpdir);
	snprintf(p, sizeof(p), "%s/weights", work);
	if (mkdir(work, 0700) < 0 || mkdir(p, 0700) < 0)
		fatal("cannot make the work directories", NULL);
	snprintf(p, sizeof(p), "%s/link", work);
	if (symlink("..", p) < 0)
		fatal("cannot make the symbolic link", NULL);
	snprintf(result, sizeof(result), "%s/result.npz", tmpdir);
	snprintf(report, sizeof(report), "%s/report.json", tmpdir);
	if (seeds)
		dump_seeds(seeds);
	return 0;
}

/* Every listed path stays inside the artifact: relative, no "." or ".."
 * component, not through the link. Checked on the raw manifest text. */
static void check_paths(const uint8_t *text, size_t n)
{
	json_object *m, *files;
	enpu_err e = ENPU_ERR_INIT;

	if (!(m = enpu_json_parse((const char *)text, n, "manifest.json", &e)))
		fatal("a manifest that loaded does not parse", &e);
	files = json_object_object_get(m, "files");
	for (size_t i = 0; i < json_object_array_length(files); i++) {
		const char *p = json_object_get_string(
			json_object_object_get(json_object_array_get_idx(files, i), "path"));
		if (p[0] == '/' || strncmp(p, "link", 4) == 0 || strstr(p, "..") ||
		    strncmp(p, "./", 2) == 0 || strstr(p, "/./") || strchr(p, '\\'))
			fatal("a manifest naming a path outside the artifact loaded", NULL);
	}
	json_object_put(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int f, bk, m;
	const base *b;
	enpu_buf mb = ENPU_BUF_INIT;
	enpu_artifact *a = NULL;
	enpu_err e = ENPU_ERR_INIT;
	enpu_run_info info;

	if (size < 1)
		return 0;
	f = data[0] & 3;
	bk = (data[0] >> 2) & 3;
	m = (data[0] >> 4) & 1;
	b = &bases[m][bk];
	data++;
	size--;
	for (int i = F_GRAPH; i < F_COUNT; i++) {
		if (i == f) {
			put(work, b->path[i], data, size);
			last_put[i] = NULL;
		} else if (last_put[i] != &b->data[i]) {
			/* the base's bytes: unchanged since the last input? */
			put(work, b->path[i], b->data[i].data, b->data[i].len);
			last_put[i] = &b->data[i];
		}
	}
	if (f == F_MANIFEST) {
		put(work, "manifest.json", data, size);
	} else {
		make_manifest(b, f, data, size, NULL, NULL, 0, &mb);
		put(work, "manifest.json", mb.data, mb.len);
		enpu_buf_free(&mb);
	}
	if (enpu_artifact_load(work, &lim, &a, &e) < 0)
		return 0;
	if (f == F_MANIFEST)
		check_paths(data, size);
	enpu_run(a, input[m], "input.npz", result, report, NULL, NULL, &lim, &info, &e);
	enpu_artifact_free(a);
	return 0;
}

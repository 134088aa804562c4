/* test_artifact.c: compile tiny_mlp into an artifact, load it back, and
 * check that compile is deterministic and that loading refuses tampered,
 * escaping or inconsistent artifacts; weight errors at compile time. */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "enpu.h"
#include "npusim.h"
#include "npz.h"
#include "buf.h"
#include "compile_util.h"
#include "digest.h"
#include "graphjson.h"
#include "plan.h"
#include "pipeline.h"

/* The seed spec of docs/spec-format.md, as examples/tiny_mlp/spec.yaml has it
 * (fc1.w is declared on line 9). */
static const char tiny_mlp[] =
	"# tiny_mlp: the seed model of SPEC_FORMAT.md, 8 -> 16 -> 4.\n"
	"eulernpu: 1\n"
	"name: tiny_mlp\n"
	"backend: cpu_ref\n"
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
	"      - {name: fc1,   op: matmul, in: [x, fc1.w],  out: h1}\n"
	"      - {name: bias1, op: add,    in: [h1, fc1.b], out: h2}\n"
	"      - {name: act1,  op: relu,   in: [h2],        out: h}\n"
	"  - name: head\n"
	"    ops:\n"
	"      - {name: fc2,   op: matmul, in: [h, fc2.w],  out: z}\n"
	"      - {name: bias2, op: add,    in: [z, fc2.b],  out: logits}\n"
	"targets:\n"
	"  npu_sim: {array: [16, 16], dataflow: os}\n";

static char dir[64];

static void setup(void)
{
	strcpy(dir, "/tmp/enpu_art_XXXXXX");
	cr_assert(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(artifact, .init = setup, .fini = teardown);

static void add(enpu_tlist *l, const char *name, int ndim, int64_t d0, int64_t d1, float seed)
{
	enpu_tensor t = {0};
	enpu_err e = ENPU_ERR_INIT;
	uint64_t n;

	t.dtype = ENPU_DT_F32;
	t.shape.ndim = ndim;
	t.shape.dim[0] = d0;
	t.shape.dim[1] = d1;
	cr_assert_eq(enpu_tensor_alloc(&t, NULL, &e), 0);
	t.name = strdup(name);
	enpu_shape_numel(&t.shape, &n);
	for (uint64_t i = 0; i < n; i++)   /* deterministic, sign-varying */
		t.data[i] = seed * (float)((int)(i * 7 % 13) - 6) / 8.0f;
	cr_assert_eq(enpu_tlist_push(&l[0], &t, &e), 0);
}

/* weights.npz in dir; fc1w_swapped writes fc1.w as [16, 8]; drop omits
 * fc2.b; extra adds "stray". */
static const char *weights(const char *name, int fc1w_swapped, int drop, int extra)
{
	static char path[128];
	enpu_tlist l = ENPU_TLIST_INIT;
	enpu_err e = ENPU_ERR_INIT;

	if (fc1w_swapped)
		add(&l, "fc1.w", 2, 16, 8, 0.5f);
	else
		add(&l, "fc1.w", 2, 8, 16, 0.5f);
	add(&l, "fc1.b", 1, 16, 0, 0.1f);
	add(&l, "fc2.w", 2, 16, 4, 0.25f);
	if (!drop)
		add(&l, "fc2.b", 1, 4, 0, 0.2f);
	if (extra)
		add(&l, "stray", 1, 3, 0, 1.0f);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	cr_assert_eq(enpu_npz_write(path, &l, &e), 0, "%s", e.message);
	enpu_tlist_free(&l);
	return path;
}

static enpu_spec *spec(void)
{
	enpu_spec *s = NULL;
	enpu_err e = ENPU_ERR_INIT;
	cr_assert_eq(enpu_spec_parse(tiny_mlp, strlen(tiny_mlp), "spec.yaml", NULL, &s, &e), 0,
		     "%s", e.message);
	return s;
}

static int compile_to(const char *sub, const char *w, enpu_compile_info *info, enpu_err *e)
{
	char out[128];
	enpu_spec *s = spec();
	int rc;

	snprintf(out, sizeof(out), "%s/%s", dir, sub);
	rc = compile_spec(s, NULL, w, "ab12", out, info, e);
	enpu_spec_free(s);
	return rc;
}

static void slurp(const char *sub, const char *rel, enpu_buf *b)
{
	char p[256];
	enpu_err e = ENPU_ERR_INIT;
	snprintf(p, sizeof(p), "%s/%s/%s", dir, sub, rel);
	enpu_buf_reset(b);
	cr_assert_eq(enpu_read_file(p, 0, b, &e), 0, "%s", e.message);
}

static void spit(const char *sub, const char *rel, const void *d, size_t n)
{
	char p[256];
	FILE *f;
	snprintf(p, sizeof(p), "%s/%s/%s", dir, sub, rel);
	cr_assert((f = fopen(p, "wb")));
	cr_assert_eq(fwrite(d, 1, n, f), n);
	fclose(f);
}

static int load(const char *sub, enpu_artifact **a, enpu_err *e)
{
	char p[128];
	snprintf(p, sizeof(p), "%s/%s", dir, sub);
	return enpu_artifact_load(p, NULL, a, e);
}

static const char *files[] = {"graph.json", "plan.json", "weights/cpu_ref.npz", "manifest.json"};

Test(artifact, compile_writes_the_artifact)
{
	enpu_compile_info info;
	enpu_err e = ENPU_ERR_INIT;
	enpu_buf b = ENPU_BUF_INIT;

	cr_assert_eq(compile_to("a", weights("w.npz", 0, 0, 0), &info, &e), 0, "%s", e.message);
	cr_assert_eq(info.n_ops, 5);
	cr_assert_eq(info.n_components, 2);
	cr_assert_str_eq(info.backend, "cpu_ref");
	cr_assert(enpu_is_sha256_hex(info.artifact_id));
	/* h1, h2, h, z, logits of 64/64/64/16/16 bytes, aligned: at most 3 live */
	cr_assert(info.arena_bytes > 0 && info.arena_bytes % 64 == 0);
	cr_assert(info.arena_bytes <= 3 * 64, "%llu", (unsigned long long)info.arena_bytes);
	slurp("a", "manifest.json", &b);
	cr_assert(strstr(b.data, "\"format\": \"eulernpu-artifact\""));
	cr_assert(strstr(b.data, info.artifact_id));
	cr_assert(strstr(b.data, "\"weights\": \"weights/cpu_ref.npz\""), "%s", b.data);
	cr_assert(strstr(b.data, "\"layout\": \"spec\""));
	cr_assert(strstr(b.data, "\"compiler\": \"" ENPU_COMPILER_ID "\""));
	cr_assert(strstr(b.data, "\"sha256\": \"ab12\""));
	slurp("a", "graph.json", &b);
	cr_assert(strstr(b.data, "\"kernel\": \"cpu_ref.matmul_f32\""), "%s", b.data);
	cr_assert(strstr(b.data, "\"kind\": \"weight\""));
	enpu_buf_free(&b);
}

Test(artifact, compile_is_byte_identical)
{
	enpu_compile_info i1, i2;
	enpu_err e = ENPU_ERR_INIT;
	enpu_buf b1 = ENPU_BUF_INIT, b2 = ENPU_BUF_INIT;
	const char *w = weights("w.npz", 0, 0, 0);

	cr_assert_eq(compile_to("a", w, &i1, &e), 0, "%s", e.message);
	cr_assert_eq(compile_to("b", w, &i2, &e), 0, "%s", e.message);
	cr_assert_str_eq(i1.artifact_id, i2.artifact_id);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		slurp("a", files[i], &b1);
		slurp("b", files[i], &b2);
		cr_assert_eq(b1.len, b2.len, "%s", files[i]);
		cr_assert_eq(memcmp(b1.data, b2.data, b1.len), 0, "%s differs", files[i]);
	}
	enpu_buf_free(&b1);
	enpu_buf_free(&b2);
}

Test(artifact, load_round_trip)
{
	enpu_compile_info info;
	enpu_err e = ENPU_ERR_INIT;
	enpu_artifact *a = NULL;
	const enpu_graph *g;

	cr_assert_eq(compile_to("a", weights("w.npz", 0, 0, 0), &info, &e), 0, "%s", e.message);
	cr_assert_eq(load("a", &a, &e), 0, "%s: %s", e.where, e.message);
	cr_assert_str_eq(enpu_artifact_id(a), info.artifact_id);
	cr_assert_str_eq(enpu_artifact_backend(a), "cpu_ref");
	g = enpu_artifact_graph(a);
	cr_assert_eq(g->n_ops, 5);
	cr_assert_eq(g->n_components, 2);
	cr_assert_str_eq(g->ops[0].name, "fc1");
	cr_assert_str_eq(g->ops[4].def->name, "add");
	cr_assert_eq(g->n_outputs, 1);
	cr_assert_str_eq(g->tensors[g->outputs[0]].name, "logits");
	/* what a job's "outputs" says, made once at load */
	cr_assert_str_eq(enpu_artifact_outputs_json(a), "[{\"name\":\"logits\",\"shape\":[1,4]}]");
	enpu_artifact_free(a);
}

Test(artifact, output_dir_must_be_empty)
{
	enpu_compile_info info;
	enpu_err e = ENPU_ERR_INIT;
	const char *w = weights("w.npz", 0, 0, 0);

	cr_assert_eq(compile_to("a", w, &info, &e), 0, "%s", e.message);
	cr_assert_eq(compile_to("a", w, &info, &e), -1);
	cr_assert_eq(e.code, ENPU_E_IO);
	cr_assert(strstr(e.message, "not empty"), "%s", e.message);
}

Test(artifact, tampered_file_is_a_digest_error)
{
	enpu_compile_info info;
	enpu_err e = ENPU_ERR_INIT;
	enpu_buf b = ENPU_BUF_INIT;
	char sub[16];
	const char *w = weights("w.npz", 0, 0, 0);

	for (int i = 0; i < 3; i++) {
		enpu_artifact *a = NULL;
		snprintf(sub, sizeof(sub), "t%d", i);
		cr_assert_eq(compile_to(sub, w, &info, &e), 0, "%s", e.message);
		slurp(sub, files[i], &b);
		b.data[b.len / 2] ^= 0x01;
		spit(sub, files[i], b.data, b.len);
		cr_assert_eq(load(sub, &a, &e), -1, "%s accepted", files[i]);
		cr_assert_null(a);
		cr_assert_eq(e.code, ENPU_E_ARTIFACT_DIGEST, "%s: %s", files[i], e.message);
		cr_assert(strstr(e.message, files[i]), "%s", e.message);
	}
	/* a truncated file and a missing one, too */
	cr_assert_eq(compile_to("t3", w, &info, &e), 0);
	slurp("t3", "plan.json", &b);
	spit("t3", "plan.json", b.data, b.len - 1);
	enpu_artifact *a = NULL;
	cr_assert_eq(load("t3", &a, &e), -1);
	cr_assert_eq(e.code, ENPU_E_ARTIFACT_DIGEST);
	cr_assert_eq(compile_to("t4", w, &info, &e), 0);
	char p[256];
	snprintf(p, sizeof(p), "%s/t4/weights/cpu_ref.npz", dir);
	cr_assert_eq(unlink(p), 0);
	cr_assert_eq(load("t4", &a, &e), -1);
	cr_assert(e.code == ENPU_E_ARTIFACT_DIGEST || e.code == ENPU_E_ARTIFACT);
	enpu_buf_free(&b);
}

/* Replace the first `from` in manifest.json with `to`. */
static void edit_manifest(const char *sub, const char *from, const char *to)
{
	enpu_buf b = ENPU_BUF_INIT, o = ENPU_BUF_INIT;
	char *hit;

	slurp(sub, "manifest.json", &b);
	cr_assert((hit = strstr(b.data, from)), "%s", from);
	enpu_buf_add(&o, b.data, (size_t)(hit - b.data));
	enpu_buf_adds(&o, to);
	enpu_buf_adds(&o, hit + strlen(from));
	spit(sub, "manifest.json", o.data, o.len);
	enpu_buf_free(&b);
	enpu_buf_free(&o);
}

Test(artifact, manifest_paths_cannot_escape)
{
	static const char *bad[] = {"../x", "/etc/passwd", "weights/../graph.json", "./graph.json",
				    "weights//cpu_ref.npz", ""};
	enpu_compile_info info;
	enpu_err e = ENPU_ERR_INIT;
	const char *w = weights("w.npz", 0, 0, 0);
	char sub[16], to[64];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		enpu_artifact *a = NULL;
		snprintf(sub, sizeof(sub), "p%zu", i);
		cr_assert_eq(compile_to(sub, w, &info, &e), 0, "%s", e.message);
		snprintf(to, sizeof(to), "\"path\": \"%s\"", bad[i]);
		edit_manifest(sub, "\"path\": \"graph.json\"", to);
		cr_assert_eq(load(sub, &a, &e), -1, "'%s' accepted", bad[i]);
		cr_assert_eq(e.code, ENPU_E_ARTIFACT, "'%s': %s", bad[i], e.message);
	}
}

Test(artifact, symlinked_file_is_refused)
{
	enpu_compile_info info;
	enpu_err e = ENPU_ERR_INIT;
	enpu_artifact *a = NULL;
	char p[256], q[256];

	cr_assert_eq(compile_to("s", weights("w.npz", 0, 0, 0), &info, &e), 0);
	snprintf(p, sizeof(p), "%s/s/plan.json", dir);
	snprintf(q, sizeof(q), "%s/plan-copy.json", dir);
	cr_assert_eq(rename(p, q), 0);
	cr_assert_eq(symlink(q, p), 0);
	cr_assert_eq(load("s", &a, &e), -1);
	cr_assert_eq(e.code, ENPU_E_ARTIFACT, "%s", e.message);
}

Test(artifact, malformed_manifest)
{
	static const char *edits[][2] = {
		{"\"format\": \"eulernpu-artifact\"", "\"format\": \"zip\""},
		{"\"version\": 1", "\"version\": \"1\""},
		{"\"files\": [", "\"files\": 3, \"x\": ["},
		{"\"bytes\": ", "\"bytes\": -"},
		{"{", "{{"},
	};
	enpu_compile_info info;
	enpu_err e = ENPU_ERR_INIT;
	const char *w = weights("w.npz", 0, 0, 0);
	char sub[16];

	for (size_t i = 0; i < sizeof(edits) / sizeof(edits[0]); i++) {
		enpu_artifact *a = NULL;
		snprintf(sub, sizeof(sub), "m%zu", i);
		cr_assert_eq(compile_to(sub, w, &info, &e), 0, "%s", e.message);
		edit_manifest(sub, edits[i][0], edits[i][1]);
		cr_assert_eq(load(sub, &a, &e), -1, "edit %zu accepted", i);
		cr_assert_eq(e.code, ENPU_E_ARTIFACT, "edit %zu: %s", i, e.message);
	}
	/* a wrong id (files intact) */
	enpu_artifact *a = NULL;
	cr_assert_eq(compile_to("mid", w, &info, &e), 0);
	char to[80];
	snprintf(to, sizeof(to), "\"id\": \"%064d\"", 0);
	char from[80];
	snprintf(from, sizeof(from), "\"id\": \"%s\"", info.artifact_id);
	edit_manifest("mid", from, to);
	cr_assert_eq(load("mid", &a, &e), -1);
	cr_assert_eq(e.code, ENPU_E_ARTIFACT);
}

/* The manifest's summary must be what the artifact gives: the daemon
 * answers compiles and takes jobs from it alone, so loading (and thus an
 * import) refuses one that lies, the files intact. */
Test(artifact, manifest_summary_must_match)
{
	static const char *edits[][2] = {
		{"\"operators\": 5", "\"operators\": 6"},
		{"\"components\": 2", "\"components\": 1"},
		{"\"arena_bytes\": ", "\"arena_bytes\": 1"},
		{"\"arena_bytes\"", "\"pl_ops\": 0, \"ps_ops\": 5, \"pl_segments\": 0, \"arena_bytes\""},
	};
	enpu_compile_info info;
	enpu_err e = ENPU_ERR_INIT;
	enpu_artifact *a = NULL;
	enpu_spec *s = spec();
	const char *w = weights("w.npz", 0, 0, 0);
	char sub[16], out[128];

	for (size_t i = 0; i < sizeof(edits) / sizeof(edits[0]); i++) {
		snprintf(sub, sizeof(sub), "s%zu", i);
		cr_assert_eq(compile_to(sub, w, &info, &e), 0, "%s", e.message);
		cr_assert_eq(load(sub, &a, &e), 0, "%s", e.message);
		enpu_artifact_free(a);
		edit_manifest(sub, edits[i][0], edits[i][1]);
		cr_assert_eq(load(sub, &a, &e), -1, "edit %zu accepted", i);
		cr_assert_eq(e.code, ENPU_E_ARTIFACT, "edit %zu: %s", i, e.message);
		cr_assert(strstr(e.message, "'summary'"), "edit %zu: %s", i, e.message);
	}
	/* fpga_board: the partition's counts too */
	snprintf(out, sizeof(out), "%s/f", dir);
	cr_assert_eq(compile_spec(s, "fpga_board", w, "ab12", out, &info, &e), 0, "%s", e.message);
	cr_assert_eq(load("f", &a, &e), 0, "%s", e.message);
	enpu_artifact_free(a);
	char from[64], to[64];
	snprintf(from, sizeof(from), "\"pl_ops\": %d", info.pl_ops);
	snprintf(to, sizeof(to), "\"pl_ops\": %d", info.pl_ops + 1);
	edit_manifest("f", from, to);
	cr_assert_eq(load("f", &a, &e), -1);
	cr_assert(strstr(e.message, "partition"), "%s", e.message);
	enpu_spec_free(s);
}

/* ENPU_LOAD_TRUSTED (the daemon's cache, which has just checked every
 * digest itself) does not hash the files again: a graph.json with other
 * bytes of the same size loads trusted, and only then. */
Test(artifact, trusted_load_does_not_hash)
{
	enpu_compile_info info;
	enpu_err e = ENPU_ERR_INIT;
	enpu_artifact *a = NULL;
	enpu_buf b = ENPU_BUF_INIT;
	char p[128], *sp;

	cr_assert_eq(compile_to("t", weights("w.npz", 0, 0, 0), &info, &e), 0, "%s", e.message);
	slurp("t", "graph.json", &b);
	cr_assert_not_null(sp = strstr(b.data, "\n  "));
	sp[1] = '\t';   /* JSON whitespace still, the same size, another digest */
	spit("t", "graph.json", b.data, b.len);
	cr_assert_eq(load("t", &a, &e), -1);
	cr_assert_eq(e.code, ENPU_E_ARTIFACT_DIGEST, "%s", e.message);
	snprintf(p, sizeof(p), "%s/t", dir);
	cr_assert_eq(enpu_artifact_load_ex(p, NULL, ENPU_LOAD_TRUSTED, &a, &e), 0, "%s", e.message);
	cr_assert_str_eq(enpu_artifact_id(a), info.artifact_id);
	enpu_artifact_free(a);
	/* the sizes are still checked */
	spit("t", "graph.json", b.data, b.len - 1);
	cr_assert_eq(enpu_artifact_load_ex(p, NULL, ENPU_LOAD_TRUSTED, &a, &e), -1);
	cr_assert_eq(e.code, ENPU_E_ARTIFACT_DIGEST, "%s", e.message);
	enpu_buf_free(&b);
}

/* Rewrite a member with new bytes and fix the manifest (digest, size, id)
 * so that only the member's own consistency is left to catch. */
static void rewrite_consistently(const char *sub, const char *rel, const char *text)
{
	char p[128];

	snprintf(p, sizeof(p), "%s/%s", dir, sub);
	cr_assert_eq(tpl_rewrite_member(p, rel, text, strlen(text)), 0);
}

/* ENPU_LOAD_HASHED (the caller hashed the files) does not hash them again
 * either, and checks the sizes; it derives the plan as a deep load does
 * (test_npuplan: hashed_load_derives_the_model). */
Test(artifact, hashed_load_does_not_hash)
{
	enpu_compile_info info;
	enpu_err e = ENPU_ERR_INIT;
	enpu_artifact *a = NULL;
	enpu_buf b = ENPU_BUF_INIT;
	char p[128], *sp;

	cr_assert_eq(compile_to("t", weights("w.npz", 0, 0, 0), &info, &e), 0, "%s", e.message);
	slurp("t", "graph.json", &b);
	cr_assert_not_null(sp = strstr(b.data, "\n  "));
	sp[1] = '\t';   /* the same size, another digest */
	spit("t", "graph.json", b.data, b.len);
	snprintf(p, sizeof(p), "%s/t", dir);
	cr_assert_eq(enpu_artifact_load_ex(p, NULL, 0, &a, &e), -1);
	cr_assert_eq(e.code, ENPU_E_ARTIFACT_DIGEST, "%s", e.message);
	cr_assert_eq(enpu_artifact_load_ex(p, NULL, ENPU_LOAD_HASHED, &a, &e), 0, "%s", e.message);
	enpu_artifact_free(a);
	cr_assert_eq(enpu_artifact_check(p, NULL, ENPU_LOAD_HASHED, NULL, &e), 0, "%s", e.message);
	spit("t", "graph.json", b.data, b.len - 1);
	cr_assert_eq(enpu_artifact_load_ex(p, NULL, ENPU_LOAD_HASHED, &a, &e), -1);
	cr_assert_eq(e.code, ENPU_E_ARTIFACT_DIGEST, "%s", e.message);
	cr_assert_eq(enpu_artifact_check(p, NULL, ENPU_LOAD_HASHED, NULL, &e), -1);
	cr_assert_eq(e.code, ENPU_E_ARTIFACT_DIGEST, "%s", e.message);
	enpu_buf_free(&b);
}

/* The bytes of the .npz at path (in dir) into b. */
static void npz_bytes(const char *path, enpu_buf *b)
{
	enpu_err e = ENPU_ERR_INIT;

	enpu_buf_reset(b);
	cr_assert_eq(enpu_read_file(path, 0, b, &e), 0, "%s", e.message);
}

/* enpu_artifact_check binds the weights by their headers: a weights file
 * (rewritten consistently: manifest, id) of a wrong shape, lacking a
 * weight or holding one too many is refused with the load's own error;
 * the summary is the load's. */
Test(artifact, check_binds_the_weights_by_their_headers)
{
	enpu_compile_info info;
	enpu_err e = ENPU_ERR_INIT, e2 = ENPU_ERR_INIT;
	enpu_artifact *a = NULL;
	enpu_msummary s1, s2;
	enpu_buf b = ENPU_BUF_INIT;
	char p[128], sub[8];
	const char *bad[3];

	cr_assert_eq(compile_to("c", weights("w.npz", 0, 0, 0), &info, &e), 0, "%s", e.message);
	snprintf(p, sizeof(p), "%s/c", dir);
	cr_assert_eq(enpu_artifact_check(p, NULL, 0, &s1, &e), 0, "%s", e.message);
	cr_assert_eq(load("c", &a, &e), 0, "%s", e.message);
	enpu_artifact_summary(a, &s2);
	enpu_artifact_free(a);
	cr_expect_eq(s1.operators, s2.operators);
	cr_expect_eq(s1.components, s2.components);
	cr_expect_eq(s1.arena_bytes, s2.arena_bytes);

	bad[0] = "fc1.w";
	bad[1] = "fc2.b";
	bad[2] = "stray";
	for (int k = 0; k < 3; k++) {
		snprintf(sub, sizeof(sub), "b%d", k);
		cr_assert_eq(compile_to(sub, weights("w.npz", 0, 0, 0), &info, &e), 0, "%s", e.message);
		npz_bytes(weights("bad.npz", k == 0, k == 1, k == 2), &b);
		snprintf(p, sizeof(p), "%s/%s", dir, sub);
		cr_assert_eq(tpl_rewrite_member(p, "weights/cpu_ref.npz", b.data, b.len), 0);
		cr_assert_eq(enpu_artifact_check(p, NULL, 0, NULL, &e), -1, "weights %d checked", k);
		cr_expect_eq(e.code, ENPU_E_ARTIFACT, "%d: %s", k, e.message);
		cr_expect(strstr(e.message, bad[k]), "%d: %s", k, e.message);
		cr_assert_eq(enpu_artifact_load(p, NULL, &a, &e2), -1);
		cr_expect_str_eq(e.message, e2.message);
	}
	enpu_buf_free(&b);
}

/* Its arrays are not read: a byte of weight data changed in place (the
 * same size; the zip's CRC no longer matches) passes the check when the
 * caller hashed the files (ENPU_LOAD_HASHED: this byte would have failed
 * that hash), where a load, reading them, refuses it. */
Test(artifact, check_reads_no_weight_data)
{
	enpu_compile_info info;
	enpu_err e = ENPU_ERR_INIT;
	enpu_artifact *a = NULL;
	enpu_buf b = ENPU_BUF_INIT;
	char p[128], *mg;
	size_t off;

	cr_assert_eq(compile_to("d", weights("w.npz", 0, 0, 0), &info, &e), 0, "%s", e.message);
	slurp("d", "weights/cpu_ref.npz", &b);
	cr_assert_not_null(mg = memmem(b.data, b.len, "\x93NUMPY", 6));
	off = (size_t)(mg - b.data) + 10 + (unsigned char)mg[8] + 256u * (unsigned char)mg[9];
	cr_assert_lt(off, b.len);
	b.data[off] ^= 0x40;   /* the first data byte of the first member */
	spit("d", "weights/cpu_ref.npz", b.data, b.len);
	snprintf(p, sizeof(p), "%s/d", dir);
	cr_assert_eq(enpu_artifact_check(p, NULL, ENPU_LOAD_HASHED, NULL, &e), 0, "%s", e.message);
	cr_assert_eq(enpu_artifact_load_ex(p, NULL, ENPU_LOAD_HASHED, &a, &e), -1);
	cr_assert_eq(enpu_artifact_check(p, NULL, 0, NULL, &e), -1, "the digest, without the flag");
	cr_expect_eq(e.code, ENPU_E_ARTIFACT_DIGEST, "%s", e.message);
	enpu_buf_free(&b);
}

/* gather's index array is read, and checked: an index out of range in a
 * consistently rewritten weights file is refused by the check too. */
Test(artifact, check_reads_gather_indices)
{
	enpu_spec *s = NULL;
	enpu_compile_info info;
	enpu_err e = ENPU_ERR_INIT;
	enpu_tlist l = ENPU_TLIST_INIT;
	enpu_tensor x;
	enpu_buf b = ENPU_BUF_INIT;
	static const int64_t idx[4] = {-1, 0, 4, 2};
	char out[128], w[128];

	cr_assert_eq(enpu_spec_load("tests/data/ops/v2_gather_negative/spec.yaml", "spec.yaml", NULL,
				    &s, &e), 0, "%s", e.message);
	snprintf(out, sizeof(out), "%s/g", dir);
	cr_assert_eq(compile_spec(s, "cpu_ref", "tests/data/ops/v2_gather_negative/weights.npz",
				  "ab12", out, &info, &e), 0, "%s", e.message);
	enpu_spec_free(s);
	cr_assert_eq(enpu_artifact_check(out, NULL, 0, NULL, &e), 0, "%s", e.message);
	memset(&x, 0, sizeof(x));
	x.name = strdup("idx");
	x.dtype = ENPU_DT_I64;
	x.shape.ndim = 1;
	x.shape.dim[0] = 4;
	cr_assert_eq(enpu_tensor_alloc(&x, NULL, &e), 0);
	memcpy(x.i64, idx, sizeof(idx));
	cr_assert_eq(enpu_tlist_push(&l, &x, &e), 0);
	snprintf(w, sizeof(w), "%s/idx.npz", dir);
	cr_assert_eq(enpu_npz_write(w, &l, &e), 0, "%s", e.message);
	enpu_tlist_free(&l);
	npz_bytes(w, &b);
	cr_assert_eq(tpl_rewrite_member(out, "weights/cpu_ref.npz", b.data, b.len), 0);
	cr_assert_eq(enpu_artifact_check(out, NULL, 0, NULL, &e), -1);
	cr_expect_eq(e.code, ENPU_E_ARTIFACT, "%s", e.message);
	cr_expect(strstr(e.message, "out of range"), "%s", e.message);
	enpu_buf_free(&b);
}

static json_object *graph_of(const char *sub)
{
	enpu_buf b = ENPU_BUF_INIT;
	json_object *g;
	slurp(sub, "graph.json", &b);
	cr_assert((g = json_tokener_parse(b.data)));
	enpu_buf_free(&b);
	return g;
}

Test(artifact, consistent_rewrite_still_loads)
{
	/* the rewriting helper itself keeps a valid artifact valid */
	enpu_compile_info info;
	enpu_err e = ENPU_ERR_INIT;
	enpu_artifact *a = NULL;
	json_object *g;

	cr_assert_eq(compile_to("c", weights("w.npz", 0, 0, 0), &info, &e), 0);
	g = graph_of("c");
	rewrite_consistently("c", "graph.json", json_object_to_json_string_ext(g, JSON_C_TO_STRING_PLAIN));
	json_object_put(g);
	cr_assert_eq(load("c", &a, &e), 0, "%s", e.message);
	enpu_artifact_free(a);
}

Test(artifact, graph_with_wrong_shape_is_refused)
{
	enpu_compile_info info;
	enpu_err e = ENPU_ERR_INIT;
	enpu_artifact *a = NULL;
	json_object *g, *sh;

	cr_assert_eq(compile_to("c", weights("w.npz", 0, 0, 0), &info, &e), 0);
	g = graph_of("c");
	sh = json_object_object_get(tensor_entry(g, "h2"), "shape");
	json_object_array_put_idx(sh, 1, json_object_new_int(15));
	rewrite_consistently("c", "graph.json", json_object_to_json_string_ext(g, JSON_C_TO_STRING_PLAIN));
	json_object_put(g);
	cr_assert_eq(load("c", &a, &e), -1);
	cr_assert_eq(e.code, ENPU_E_ARTIFACT, "%s", e.message);
	cr_assert_str_eq(e.where, "graph.json");
	cr_assert(strstr(e.message, "bias1"), "%s", e.message);
}

Test(artifact, graph_with_bad_fields_is_refused)
{
	static const char *muts[] = {"op", "attrs", "kernel", "in", "unknown_op", "read_later"};
	enpu_compile_info info;
	enpu_err e = ENPU_ERR_INIT;
	const char *w = weights("w.npz", 0, 0, 0);
	char sub[16];

	for (size_t i = 0; i < sizeof(muts) / sizeof(muts[0]); i++) {
		enpu_artifact *a = NULL;
		json_object *g, *ops, *op0;
		snprintf(sub, sizeof(sub), "g%zu", i);
		cr_assert_eq(compile_to(sub, w, &info, &e), 0);
		g = graph_of(sub);
		ops = json_object_object_get(g, "ops");
		op0 = json_object_array_get_idx(ops, 0);
		switch (i) {
		case 0: json_object_object_add(op0, "op", json_object_new_int(3)); break;
		case 1: json_object_object_add(json_object_object_get(op0, "attrs"), "alpha",
					       json_object_new_double(2.0)); break;
		case 2: json_object_object_add(op0, "kernel", json_object_new_string("cpu_ref.evil")); break;
		case 3: json_object_object_add(op0, "in", json_object_new_string("x")); break;
		case 4: json_object_object_add(op0, "op", json_object_new_string("launch")); break;
		case 5: /* fc1 reads h, produced later */
			json_object_array_put_idx(json_object_object_get(op0, "in"), 0,
						  json_object_new_string("h"));
			break;
		}
		rewrite_consistently(sub, "graph.json", json_object_to_json_string(g));
		json_object_put(g);
		cr_assert_eq(load(sub, &a, &e), -1, "mutation %s accepted", muts[i]);
		cr_assert_eq(e.code, ENPU_E_ARTIFACT, "%s: %s", muts[i], e.message);
	}
}

Test(artifact, plan_with_overlap_is_refused)
{
	enpu_compile_info info;
	enpu_err e = ENPU_ERR_INIT;
	enpu_artifact *a = NULL;
	enpu_buf b = ENPU_BUF_INIT;
	json_object *p, *bufs;

	cr_assert_eq(compile_to("c", weights("w.npz", 0, 0, 0), &info, &e), 0);
	slurp("c", "plan.json", &b);
	cr_assert((p = json_tokener_parse(b.data)));
	bufs = json_object_object_get(p, "buffers");
	for (size_t i = 0; i < json_object_array_length(bufs); i++)
		json_object_object_add(json_object_array_get_idx(bufs, i), "offset",
				       json_object_new_int(0));
	rewrite_consistently("c", "plan.json", json_object_to_json_string(p));
	json_object_put(p);
	cr_assert_eq(load("c", &a, &e), -1);
	cr_assert_eq(e.code, ENPU_E_ARTIFACT, "%s", e.message);
	cr_assert(strstr(e.message, "overlap"), "%s", e.message);
	enpu_buf_free(&b);
}

Test(artifact, weight_shape_mismatch_message)
{
	enpu_compile_info info;
	enpu_err e = ENPU_ERR_INIT;
	struct stat st;
	char p[128];

	cr_assert_eq(compile_to("a", weights("w.npz", 1, 0, 0), &info, &e), -1);
	cr_assert_eq(e.code, ENPU_E_WEIGHT_SHAPE);
	cr_assert_str_eq(e.message, "op 'fc1' reads weight 'fc1.w': spec.yaml:9 declares [8, 16], "
			 "weights.npz holds [16, 8]");
	cr_assert_str_eq(e.fix, "retrain the weights or correct the spec");
	snprintf(p, sizeof(p), "%s/a/manifest.json", dir);
	cr_assert_neq(stat(p, &st), 0, "no artifact after a failed compile");
}

Test(artifact, weight_missing_and_extra)
{
	enpu_compile_info info;
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(compile_to("a", weights("w1.npz", 0, 1, 0), &info, &e), -1);
	cr_assert_eq(e.code, ENPU_E_WEIGHT_MISSING);
	cr_assert(strstr(e.message, "'fc2.b'"), "%s", e.message);
	cr_assert_eq(compile_to("b", weights("w2.npz", 0, 0, 1), &info, &e), -1);
	cr_assert_eq(e.code, ENPU_E_WEIGHT_EXTRA);
	cr_assert(strstr(e.message, "'stray'"), "%s", e.message);
}

Test(artifact, canonical_target_json)
{
	json_object *o = json_tokener_parse("{\"b\": 1, \"a\": {\"d\": 2, \"c\": [{\"z\": 1, \"y\": 2}]}}");
	json_object *c = enpu_json_canonical(o);
	cr_assert_str_eq(json_object_to_json_string_ext(c, JSON_C_TO_STRING_PLAIN),
			 "{\"a\":{\"c\":[{\"y\":2,\"z\":1}],\"d\":2},\"b\":1}");
	cr_assert_null(enpu_json_canonical(NULL));
	json_object_put(o);
	json_object_put(c);
}

/* ---- npu_sim artifacts ------------------------------------------------- */

/* Compile the seed spec for npu_sim: the spec's targets.npu_sim, or the
 * target file with the given text. */
static int compile_npu(const char *sub, const char *target_text, enpu_compile_info *info,
		       enpu_err *e)
{
	char out[128], tp[128];
	enpu_spec *s = spec();
	enpu_target *t = NULL;
	int rc = -1;

	snprintf(out, sizeof(out), "%s/%s", dir, sub);
	snprintf(tp, sizeof(tp), "%s/%s.target.yaml", dir, sub);
	if (target_text && enpu_write_file_atomic(tp, target_text, strlen(target_text), e) < 0)
		goto out;
	if (enpu_target_resolve(s, "npu_sim", target_text ? tp : NULL, "target.yaml", NULL, &t,
				e) < 0)
		goto out;
	rc = enpu_compile(s, t, weights("w.npz", 0, 0, 0), "weights.npz", "ab12", out, NULL,
			  info, e);
out:
	enpu_target_free(t);
	enpu_spec_free(s);
	return rc;
}

Test(artifact, npu_sim_artifact_records_lowering_tiling_and_target)
{
	enpu_compile_info info;
	enpu_err e = ENPU_ERR_INIT;
	enpu_buf b = ENPU_BUF_INIT;
	enpu_artifact *a = NULL;
	json_object *p, *npu, *v;
	const enpu_npu_target *t;

	cr_assert_eq(compile_npu("n", NULL, &info, &e), 0, "%s", e.message);
	cr_assert_str_eq(info.backend, "npu_sim");
	slurp("n", "manifest.json", &b);
	cr_assert(strstr(b.data, "\"backend\": \"npu_sim\""), "%s", b.data);
	cr_assert(strstr(b.data, "\"weights\": \"weights/npu_sim.npz\""), "%s", b.data);
	cr_assert(strstr(b.data, "\"layout\": \"spec\""), "%s", b.data);
	cr_assert(strstr(b.data, "\"dataflow\": \"os\""), "the target is recorded: %s", b.data);
	cr_assert(strstr(b.data, "\"array\": ["), "%s", b.data);
	slurp("n", "graph.json", &b);
	cr_assert(strstr(b.data, "\"kernel\": \"npu_sim.gemm\""), "%s", b.data);
	cr_assert(strstr(b.data, "\"lowering\": \"gemm\""), "%s", b.data);
	cr_assert(strstr(b.data, "\"kernel\": \"npu_sim.vector.relu\""), "%s", b.data);
	cr_assert(strstr(b.data, "\"lowering\": \"vector\""), "%s", b.data);
	cr_assert(strstr(b.data, "\"layout\": \"spec\""), "%s", b.data);
	slurp("n", "plan.json", &b);
	cr_assert_not_null(p = json_tokener_parse(b.data));
	cr_assert(json_object_object_get_ex(p, "npu", &npu), "plan.json has the npu section");
	cr_assert(json_object_object_get_ex(npu, "target", &v));
	cr_assert(json_object_object_get_ex(npu, "ops", &v));
	cr_assert_eq(json_object_array_length(v), 5);
	json_object_put(p);

	cr_assert_eq(load("n", &a, &e), 0, "%s", e.message);
	cr_assert_str_eq(enpu_artifact_backend(a), "npu_sim");
	cr_assert_not_null(t = enpu_artifact_npu(a));
	cr_assert_eq(t->rows, 16);
	cr_assert_eq(t->dataflow, ENPU_DF_OS);
	enpu_artifact_free(a);

	/* cpu_ref: "reference" lowering, no npu section, no target */
	cr_assert_eq(compile_to("c", weights("w.npz", 0, 0, 0), &info, &e), 0, "%s", e.message);
	slurp("c", "graph.json", &b);
	cr_assert(strstr(b.data, "\"lowering\": \"reference\""), "%s", b.data);
	slurp("c", "plan.json", &b);
	cr_assert(!strstr(b.data, "\"npu\""), "%s", b.data);
	slurp("c", "manifest.json", &b);
	cr_assert(strstr(b.data, "\"target\": null"), "%s", b.data);
	cr_assert_eq(load("c", &a, &e), 0, "%s", e.message);
	cr_assert_null(enpu_artifact_npu(a));
	enpu_artifact_free(a);
	enpu_buf_free(&b);
}

Test(artifact, npu_sim_compile_is_byte_identical_and_target_keyed)
{
	static const char *const rel[] = {"graph.json", "plan.json", "weights/npu_sim.npz",
					  "manifest.json"};
	enpu_compile_info i1, i2, i3;
	enpu_err e = ENPU_ERR_INIT;
	enpu_buf b1 = ENPU_BUF_INIT, b2 = ENPU_BUF_INIT;

	cr_assert_eq(compile_npu("x1", "array: [7, 5]\ndataflow: ws\n", &i1, &e), 0, "%s", e.message);
	cr_assert_eq(compile_npu("x2", "dataflow: ws\narray: [7, 5]\n", &i2, &e), 0, "%s", e.message);
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		slurp("x1", rel[i], &b1);
		slurp("x2", rel[i], &b2);
		cr_assert(b1.len == b2.len && memcmp(b1.data, b2.data, b1.len) == 0,
			  "%s differs between identical compiles", rel[i]);
	}
	cr_assert_str_eq(i1.artifact_id, i2.artifact_id);
	cr_assert_eq(compile_npu("x3", "array: [7, 5]\ndataflow: is\n", &i3, &e), 0, "%s", e.message);
	cr_assert_str_neq(i1.artifact_id, i3.artifact_id, "another target, another artifact");
	enpu_buf_free(&b1);
	enpu_buf_free(&b2);
}

Test(artifact, npu_sim_target_tampering_is_refused)
{
	enpu_compile_info info;
	enpu_err e = ENPU_ERR_INIT;
	enpu_artifact *a = NULL;
	enpu_buf b = ENPU_BUF_INIT;
	json_object *p;

	/* the manifest's target no longer matches the plan's */
	cr_assert_eq(compile_npu("t1", NULL, &info, &e), 0, "%s", e.message);
	edit_manifest("t1", "\"dataflow\": \"os\"", "\"dataflow\": \"ws\"");
	cr_assert_eq(load("t1", &a, &e), -1);
	cr_assert_eq(e.code, ENPU_E_ARTIFACT, "%s", e.message);
	/* a malformed target */
	cr_assert_eq(compile_npu("t2", NULL, &info, &e), 0, "%s", e.message);
	edit_manifest("t2", "\"dataflow\": \"os\"", "\"dataflow\": \"diagonal\"");
	cr_assert_eq(load("t2", &a, &e), -1);
	cr_assert_eq(e.code, ENPU_E_ARTIFACT, "%s", e.message);
	/* no target at all */
	cr_assert_eq(compile_npu("t3", NULL, &info, &e), 0, "%s", e.message);
	edit_manifest("t3", "\"target\": {", "\"target\": null, \"x\": {");
	cr_assert_eq(load("t3", &a, &e), -1);
	cr_assert_eq(e.code, ENPU_E_ARTIFACT, "%s", e.message);
	/* plan.json without its npu section (files and id kept consistent) */
	cr_assert_eq(compile_npu("t4", NULL, &info, &e), 0, "%s", e.message);
	slurp("t4", "plan.json", &b);
	cr_assert_not_null(p = json_tokener_parse(b.data));
	json_object_object_del(p, "npu");
	rewrite_consistently("t4", "plan.json", json_object_to_json_string(p));
	json_object_put(p);
	cr_assert_eq(load("t4", &a, &e), -1);
	cr_assert_eq(e.code, ENPU_E_ARTIFACT, "%s", e.message);
	cr_assert(strstr(e.message, "'npu'"), "%s", e.message);
	/* a cpu_ref plan with an npu section */
	cr_assert_eq(compile_to("t5", weights("w.npz", 0, 0, 0), &info, &e), 0, "%s", e.message);
	slurp("t5", "plan.json", &b);
	cr_assert_not_null(p = json_tokener_parse(b.data));
	json_object_object_add(p, "npu", json_object_new_object());
	rewrite_consistently("t5", "plan.json", json_object_to_json_string(p));
	json_object_put(p);
	cr_assert_eq(load("t5", &a, &e), -1);
	cr_assert_eq(e.code, ENPU_E_ARTIFACT, "%s", e.message);
	/* graph.json's lowering must be the backend's */
	cr_assert_eq(compile_npu("t6", NULL, &info, &e), 0, "%s", e.message);
	slurp("t6", "graph.json", &b);
	{
		char *hit = strstr(b.data, "\"lowering\": \"vector\"");

		cr_assert(hit);
		memcpy(hit + strlen("\"lowering\": \""), "move  ", 6);
		memmove(hit + strlen("\"lowering\": \"move"), hit + strlen("\"lowering\": \"vector"),
			strlen(hit + strlen("\"lowering\": \"vector")) + 1);
		rewrite_consistently("t6", "graph.json", b.data);
	}
	cr_assert_eq(load("t6", &a, &e), -1);
	cr_assert_eq(e.code, ENPU_E_ARTIFACT, "%s", e.message);
	cr_assert(strstr(e.message, "lowering"), "%s", e.message);
	enpu_buf_free(&b);
}

/* test_exec.c: enpu_run on tiny_mlp: the bits against a hand-written fmaf
 * reference, input errors, thread-count independence, cancellation. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "enpu.h"
#include "npz.h"
#include "buf.h"
#include "digest.h"

static const char spec_text[] =
	"eulernpu: 1\n"
	"name: tiny_mlp\n"
	"inputs:\n"
	"  - {name: x, dtype: float32, shape: [1, 8]}\n"
	"outputs: [logits, %s]\n"
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
	"  npu_sim: {array: [3, 5], dataflow: is}\n";

static char dir[64];
static float W1[8][16], B1[16], W2[16][4], B2[4], X[8];

static void setup(void)
{
	strcpy(dir, "/tmp/enpu_exec_XXXXXX");
	cr_assert(mkdtemp(dir));
	/* deterministic values with awkward low bits, both signs */
	for (int i = 0; i < 8; i++)
		for (int j = 0; j < 16; j++)
			W1[i][j] = sinf((float)(i * 16 + j) * 0.37f) / 3.0f;
	for (int j = 0; j < 16; j++)
		B1[j] = cosf((float)j * 1.3f) / 7.0f;
	for (int i = 0; i < 16; i++)
		for (int j = 0; j < 4; j++)
			W2[i][j] = cosf((float)(i * 4 + j) * 0.91f) / 5.0f;
	for (int j = 0; j < 4; j++)
		B2[j] = (float)j / 9.0f - 0.2f;
	for (int i = 0; i < 8; i++)
		X[i] = (float)(i - 3) / 1.7f;
}

static void teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(exec, .init = setup, .fini = teardown);

static void push(enpu_tlist *l, const char *name, int ndim, int64_t d0, int64_t d1, const float *v)
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
	memcpy(t.data, v, n * sizeof(float));
	cr_assert_eq(enpu_tlist_push(l, &t, &e), 0);
}

static void write_npz(const char *path, enpu_tlist *l)
{
	enpu_err e = ENPU_ERR_INIT;
	cr_assert_eq(enpu_npz_write(path, l, &e), 0, "%s", e.message);
	enpu_tlist_free(l);
}

/* Compile tiny_mlp (extra output `also`, "h" by default) for backend
 * (NULL = the spec's: cpu_ref) and load it. */
static enpu_artifact *build_for(const char *also, const char *backend)
{
	char text[2048], wpath[128], out[128];
	enpu_tlist w = ENPU_TLIST_INIT;
	enpu_spec *s = NULL;
	enpu_artifact *a = NULL;
	enpu_err e = ENPU_ERR_INIT;
	enpu_compile_info info;

	snprintf(text, sizeof(text), spec_text, also);
	cr_assert_eq(enpu_spec_parse(text, strlen(text), "spec.yaml", NULL, &s, &e), 0, "%s", e.message);
	push(&w, "fc1.w", 2, 8, 16, &W1[0][0]);
	push(&w, "fc1.b", 1, 16, 0, B1);
	push(&w, "fc2.w", 2, 16, 4, &W2[0][0]);
	push(&w, "fc2.b", 1, 4, 0, B2);
	snprintf(wpath, sizeof(wpath), "%s/weights.npz", dir);
	write_npz(wpath, &w);
	snprintf(out, sizeof(out), "%s/art-%s-%s", dir, also, backend ? backend : "spec");
	enpu_target *t = NULL;
	cr_assert_eq(enpu_target_resolve(s, backend, NULL, NULL, NULL, &t, &e), 0, "%s", e.message);
	cr_assert_eq(enpu_compile(s, t, wpath, "weights.npz", NULL, out, NULL, &info, &e), 0,
		     "%s", e.message);
	enpu_target_free(t);
	enpu_spec_free(s);
	cr_assert_eq(enpu_artifact_load(out, NULL, &a, &e), 0, "%s", e.message);
	return a;
}

static enpu_artifact *build(const char *also)
{
	return build_for(also, NULL);
}

static const char *input(const char *name, const char *key, int64_t d0, int64_t d1, int extra)
{
	static char path[2][128];
	static int slot;
	char *p = path[slot++ % 2];
	enpu_tlist l = ENPU_TLIST_INIT;

	push(&l, key, 2, d0, d1, X);
	if (extra)
		push(&l, "y", 2, 1, 1, X);
	snprintf(p, 128, "%s/%s", dir, name);
	write_npz(p, &l);
	return p;
}

static int run(enpu_artifact *a, const char *in, const char *res, enpu_par *par,
	       const volatile int *cancel, enpu_run_info *info, enpu_err *e)
{
	char rp[128];
	snprintf(rp, sizeof(rp), "%s/%s", dir, res);
	return enpu_run(a, in, "input.npz", rp, NULL, par, cancel, NULL, info, e);
}

/* The written-out reference for both backends: npu_sim's tiled GEMM (a
 * 3 x 5 input-stationary array, so K = 8 and 16 fold raggedly) keeps the
 * chains. */
static void check_fmaf_reference(const char *backend)
{
	enpu_artifact *a = build_for("h", backend);
	enpu_run_info info;
	enpu_err e = ENPU_ERR_INIT;
	enpu_tlist r = ENPU_TLIST_INIT;
	float h[16], logits[4];
	char rp[128];

	/* the reference arithmetic of docs/spec-format.md, written out */
	for (int j = 0; j < 16; j++) {
		float acc = 0.0f;
		for (int i = 0; i < 8; i++)
			acc = fmaf(X[i], W1[i][j], acc);
		acc = acc + B1[j];
		h[j] = acc > 0.0f ? acc : 0.0f;
	}
	for (int j = 0; j < 4; j++) {
		float acc = 0.0f;
		for (int i = 0; i < 16; i++)
			acc = fmaf(h[i], W2[i][j], acc);
		logits[j] = acc + B2[j];
	}

	cr_assert_eq(run(a, input("in.npz", "x", 1, 8, 0), "r.npz", NULL, NULL, &info, &e), 0,
		     "%s", e.message);
	cr_assert_eq(info.n_outputs, 2);
	cr_assert_str_eq(info.first_shape, "(1, 4)");
	cr_assert(info.seconds >= 0);
	snprintf(rp, sizeof(rp), "%s/r.npz", dir);
	cr_assert_eq(enpu_npz_read(rp, "r.npz", NULL, &r, &e), 0, "%s", e.message);
	cr_assert_eq(r.n, 2);
	cr_assert_str_eq(r.items[0].name, "logits");
	cr_assert_str_eq(r.items[1].name, "h");
	cr_assert_eq(r.items[0].shape.ndim, 2);
	cr_assert_eq(r.items[0].shape.dim[1], 4);
	cr_assert_eq(memcmp(r.items[0].data, logits, sizeof(logits)), 0,
		     "logits differ: %.9g vs %.9g", r.items[0].data[0], logits[0]);
	cr_assert_eq(memcmp(r.items[1].data, h, sizeof(h)), 0);
	enpu_tlist_free(&r);
	enpu_artifact_free(a);
}

Test(exec, tiny_mlp_matches_fmaf_reference)
{
	check_fmaf_reference("cpu_ref");
}

Test(exec, npu_sim_matches_fmaf_reference)
{
	check_fmaf_reference("npu_sim");
}

/* report.json: written atomically where asked; a report that cannot be
 * written fails the run. */
Test(exec, report_json)
{
	enpu_artifact *a = build_for("h", "npu_sim");
	enpu_run_info info;
	enpu_err e = ENPU_ERR_INIT;
	enpu_buf b = ENPU_BUF_INIT;
	const char *in = input("in.npz", "x", 1, 8, 0);
	char rp[128], rep[128];

	snprintf(rp, sizeof(rp), "%s/r.npz", dir);
	snprintf(rep, sizeof(rep), "%s/report.json", dir);
	cr_assert_eq(enpu_run(a, in, "input.npz", rp, rep, NULL, NULL, NULL, &info, &e), 0, "%s",
		     e.message);
	cr_assert_gt(info.npu_cycles, 0);
	cr_assert_eq(enpu_read_file(rep, 0, &b, &e), 0, "%s", e.message);
	cr_assert(strstr(b.data, "\"format\": \"eulernpu-report\""), "%s", b.data);
	cr_assert(strstr(b.data, "\"backend\": \"npu_sim\""), "%s", b.data);
	cr_assert(strstr(b.data, enpu_artifact_id(a)), "%s", b.data);
	cr_assert(strstr(b.data, "\"name\": \"logits\""), "%s", b.data);
	cr_assert(strstr(b.data, "\"npu\": {"), "%s", b.data);
	snprintf(rep, sizeof(rep), "%s/no/such/dir/report.json", dir);
	cr_assert_eq(enpu_run(a, in, "input.npz", rp, rep, NULL, NULL, NULL, &info, &e), -1);
	cr_assert_eq(e.code, ENPU_E_IO, "%s", e.message);
	enpu_buf_free(&b);
	enpu_artifact_free(a);
}

Test(exec, output_that_is_an_input_is_copied)
{
	enpu_artifact *a = build("x");
	enpu_run_info info;
	enpu_err e = ENPU_ERR_INIT;
	enpu_tlist r = ENPU_TLIST_INIT;
	char rp[128];

	cr_assert_eq(run(a, input("in.npz", "x", 1, 8, 0), "r.npz", NULL, NULL, &info, &e), 0,
		     "%s", e.message);
	snprintf(rp, sizeof(rp), "%s/r.npz", dir);
	cr_assert_eq(enpu_npz_read(rp, "r.npz", NULL, &r, &e), 0);
	cr_assert_str_eq(r.items[1].name, "x");
	cr_assert_eq(memcmp(r.items[1].data, X, sizeof(X)), 0);
	enpu_tlist_free(&r);
	enpu_artifact_free(a);
}

Test(exec, input_errors)
{
	enpu_artifact *a = build("h");
	enpu_run_info info;
	enpu_err e = ENPU_ERR_INIT;
	char rp[128];
	struct stat st;

	cr_assert_eq(run(a, input("m.npz", "y", 1, 8, 0), "r.npz", NULL, NULL, &info, &e), -1);
	cr_assert_eq(e.code, ENPU_E_INPUT_MISSING);
	cr_assert(strstr(e.message, "'x'") && strstr(e.message, "expected [x], present [y]"),
		  "%s", e.message);

	cr_assert_eq(run(a, input("s.npz", "x", 8, 1, 0), "r.npz", NULL, NULL, &info, &e), -1);
	cr_assert_eq(e.code, ENPU_E_INPUT_SHAPE);
	cr_assert_str_eq(e.message, "input 'x': expected (1, 8), input.npz holds (8, 1)");

	cr_assert_eq(run(a, input("x.npz", "x", 1, 8, 1), "r.npz", NULL, NULL, &info, &e), -1);
	cr_assert_eq(e.code, ENPU_E_INPUT_EXTRA);
	cr_assert(strstr(e.message, "'y'"), "%s", e.message);

	snprintf(rp, sizeof(rp), "%s/none.npz", dir);
	cr_assert_eq(run(a, rp, "r.npz", NULL, NULL, &info, &e), -1);
	cr_assert_neq(e.code, ENPU_OK);

	snprintf(rp, sizeof(rp), "%s/r.npz", dir);
	cr_assert_neq(stat(rp, &st), 0, "no result after a failed run");
	enpu_artifact_free(a);
}

Test(exec, same_bytes_for_any_thread_count)
{
	enpu_artifact *a = build("h");
	enpu_run_info info;
	enpu_err e = ENPU_ERR_INIT;
	enpu_par *par = enpu_par_create(4);
	enpu_buf b1 = ENPU_BUF_INIT, b4 = ENPU_BUF_INIT;
	const char *in = input("in.npz", "x", 1, 8, 0);
	char p1[128], p4[128];

	cr_assert(par);
	cr_assert_eq(run(a, in, "r1.npz", NULL, NULL, &info, &e), 0, "%s", e.message);
	cr_assert_eq(run(a, in, "r4.npz", par, NULL, &info, &e), 0, "%s", e.message);
	snprintf(p1, sizeof(p1), "%s/r1.npz", dir);
	snprintf(p4, sizeof(p4), "%s/r4.npz", dir);
	cr_assert_eq(enpu_read_file(p1, 0, &b1, &e), 0);
	cr_assert_eq(enpu_read_file(p4, 0, &b4, &e), 0);
	cr_assert_eq(b1.len, b4.len);
	cr_assert_eq(memcmp(b1.data, b4.data, b1.len), 0);
	enpu_buf_free(&b1);
	enpu_buf_free(&b4);
	enpu_par_destroy(par);
	enpu_artifact_free(a);
}

Test(exec, cancel_flag_stops_the_run)
{
	enpu_artifact *a = build("h");
	enpu_run_info info;
	enpu_err e = ENPU_ERR_INIT;
	volatile int cancel = 1, go = 0;
	struct stat st;
	char rp[128];

	cr_assert_eq(run(a, input("in.npz", "x", 1, 8, 0), "r.npz", NULL, &cancel, &info, &e), -1);
	cr_assert_eq(e.code, ENPU_E_JOB_FAILED);
	cr_assert(strstr(e.message, "cancel"), "%s", e.message);
	snprintf(rp, sizeof(rp), "%s/r.npz", dir);
	cr_assert_neq(stat(rp, &st), 0);
	cr_assert_eq(run(a, input("in.npz", "x", 1, 8, 0), "r.npz", NULL, &go, &info, &e), 0);
	enpu_artifact_free(a);
}

/* The in-memory entry points are the file-path ones without the files:
 * enpu_compile_mem builds the very bytes enpu_compile writes (on every
 * backend), and enpu_run_mem gives the results and report.json that
 * enpu_run writes. */
Test(exec, memory_entry_points_give_the_file_bytes)
{
	static const char *const backends[] = {"cpu_ref", "npu_sim", "zynq_ps", "fpga_board"};
	char text[2048], wpath[128], out[128], path[256], digest[65];
	enpu_err e = ENPU_ERR_INIT;

	for (int b = 0; b < 4; b++) {
		enpu_tlist w = ENPU_TLIST_INIT, in = ENPU_TLIST_INIT, res = ENPU_TLIST_INIT;
		enpu_buf disk = ENPU_BUF_INIT, rep = ENPU_BUF_INIT;
		enpu_spec *s = NULL;
		enpu_target *t = NULL;
		enpu_artifact *a = build_for("h", backends[b]);
		enpu_compiled c;
		enpu_run_info info;
		const char *inp = input("in.npz", "x", 1, 8, 0);

		/* compile_mem against the directory build_for wrote */
		snprintf(text, sizeof(text), spec_text, "h");
		cr_assert_eq(enpu_spec_parse(text, strlen(text), "spec.yaml", NULL, &s, &e), 0);
		cr_assert_eq(enpu_target_resolve(s, backends[b], NULL, NULL, NULL, &t, &e), 0);
		snprintf(wpath, sizeof(wpath), "%s/weights.npz", dir);
		cr_assert_eq(enpu_npz_read(wpath, "weights.npz", NULL, &w, &e), 0);
		cr_assert_eq(enpu_sha256_file(wpath, digest, &e), 0);
		cr_assert_eq(enpu_compile_mem(s, t, &w, "weights.npz", digest, NULL, NULL, &c, &e), 0,
			     "%s", e.message);
		cr_assert_str_eq(c.info.artifact_id, enpu_artifact_id(a));
		snprintf(out, sizeof(out), "%s/art-h-%s", dir, backends[b]);
		for (int f = 0; f < ENPU_ARTIFACT_FILES; f++) {
			snprintf(path, sizeof(path), "%s/%s", out, c.files[f].path);
			disk.len = 0;
			cr_assert_eq(enpu_read_file(path, 0, &disk, &e), 0, "%s", e.message);
			cr_assert(disk.len == c.files[f].data.len &&
				  memcmp(disk.data, c.files[f].data.data, disk.len) == 0,
				  "%s: %s differs from the file enpu_compile wrote", backends[b],
				  c.files[f].path);
		}
		cr_assert_str_eq(c.files[ENPU_ARTIFACT_FILES - 1].path, "manifest.json");

		/* run_mem against run */
		cr_assert_eq(run(a, inp, "res.npz", NULL, NULL, &info, &e), 0, "%s", e.message);
		cr_assert_eq(enpu_npz_read(inp, "in.npz", NULL, &in, &e), 0);
		cr_assert_eq(enpu_run_mem(a, &in, "in.npz", &res, &rep, NULL, NULL, NULL, &info, &e), 0,
			     "%s", e.message);
		snprintf(path, sizeof(path), "%s/res-mem.npz", dir);
		cr_assert_eq(enpu_npz_write(path, &res, &e), 0);
		disk.len = 0;
		cr_assert_eq(enpu_read_file(path, 0, &disk, &e), 0);
		{
			enpu_buf ref = ENPU_BUF_INIT;
			snprintf(path, sizeof(path), "%s/res.npz", dir);
			cr_assert_eq(enpu_read_file(path, 0, &ref, &e), 0);
			cr_assert(ref.len == disk.len && memcmp(ref.data, disk.data, ref.len) == 0,
				  "%s: run_mem's result differs from run's", backends[b]);
			enpu_buf_free(&ref);
		}
		cr_assert(rep.len > 0 && strstr(rep.data, "\"eulernpu-report\""));

		enpu_buf_free(&disk);
		enpu_buf_free(&rep);
		enpu_compiled_free(&c);
		enpu_tlist_free(&w);
		enpu_tlist_free(&in);
		enpu_tlist_free(&res);
		enpu_target_free(t);
		enpu_spec_free(s);
		enpu_artifact_free(a);
	}
}

/* report.json of a backend without a section is kept in the loaded
 * artifact after its first run: later runs give the very bytes the first
 * made, appended after what their buffer held, and the same as a fresh
 * load's first run; on every backend the report is the same run to run. */
Test(exec, report_bytes_the_same_at_every_run)
{
	static const char *const backends[] = {"cpu_ref", "npu_sim", "zynq_ps", "fpga_board"};
	enpu_err e = ENPU_ERR_INIT;

	for (int b = 0; b < 4; b++) {
		enpu_artifact *a = build_for("h", backends[b]), *fresh = NULL;
		const char *inp = input("in.npz", "x", 1, 8, 0);
		enpu_buf first = ENPU_BUF_INIT;
		char path[256];

		snprintf(path, sizeof path, "%s/art-h-%s", dir, backends[b]);
		cr_assert_eq(enpu_artifact_load_ex(path, NULL, 0, &fresh, &e), 0, "%s", e.message);

		for (int k = 0; k < 5; k++) {   /* a: runs 0-2; fresh: runs 3 and 4 */
			enpu_tlist in = ENPU_TLIST_INIT, res = ENPU_TLIST_INIT;
			enpu_buf rep = ENPU_BUF_INIT;
			enpu_run_info info;
			const char *pre = k % 2 ? "held before|" : "";

			cr_assert_eq(enpu_buf_adds(&rep, pre), 0);
			cr_assert_eq(enpu_npz_read(inp, "in.npz", NULL, &in, &e), 0);
			cr_assert_eq(enpu_run_mem(k >= 3 ? fresh : a, &in, "in.npz", &res, &rep, NULL,
						  NULL, NULL, &info, &e), 0, "%s", e.message);
			cr_assert_eq(strncmp(rep.data, pre, strlen(pre)), 0, "%s: kept what it held",
				     backends[b]);
			if (k == 0)
				cr_assert_eq(enpu_buf_add(&first, rep.data, rep.len), 0);
			else
				cr_assert(rep.len - strlen(pre) == first.len &&
					  !memcmp(rep.data + strlen(pre), first.data, first.len),
					  "%s: run %d's report differs from the first:\n%s\n---\n%s",
					  backends[b], k, rep.data, first.data);
			enpu_buf_free(&rep);
			enpu_tlist_free(&in);
			enpu_tlist_free(&res);
		}
		cr_assert(strstr(first.data, "\"eulernpu-report\""));
		enpu_buf_free(&first);
		enpu_artifact_free(a);
		enpu_artifact_free(fresh);
	}
}

/* setup.c: what the load generator prepares before its clients start
 * (tests/load/loadgen.h): the tiny_mlp example's files and their digests,
 * for "mix" the variants (distinct specs with their own weights.npz,
 * written by the project's npz writer), for "run" the one compile and a
 * first job whose result is the reference; and at the end, the cache's
 * eviction count. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "api.h"
#include "digest.h"
#include "err.h"
#include "loadgen.h"
#include "npz.h"
#include "tensor.h"

/* The tiny_mlp files, and (mix) the variants. */
enpu_buf ex_spec = ENPU_BUF_INIT, ex_weights = ENPU_BUF_INIT, ex_input = ENPU_BUF_INIT;
char d_spec[65], d_weights[65], d_input[65];
char run_art[65], run_ref[65];
variant *vars;

static int add_tensor(enpu_tlist *l, const char *name, int nd, int64_t d0, int64_t d1,
		      uint32_t *seed, enpu_err *e)
{
	enpu_tensor t;
	uint64_t n = 0;

	memset(&t, 0, sizeof t);
	t.name = strdup(name);
	t.dtype = ENPU_DT_F32;
	t.shape.ndim = nd;
	t.shape.dim[0] = d0;
	t.shape.dim[1] = d1;
	if (!t.name) {
		enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
		return -1;
	}
	if (enpu_tensor_alloc(&t, NULL, e) != 0 || enpu_shape_numel(&t.shape, &n) != 0)
		goto fail;
	for (uint64_t i = 0; i < n; i++) {
		*seed = *seed * 1664525u + 1013904223u;
		t.data[i] = (float)((double)(*seed >> 8) / (double)(1u << 23) - 1.0);
	}
	if (enpu_tlist_push(l, &t, e) == 0)
		return 0;
fail:
	enpu_tensor_free(&t);
	return -1;
}

/* Variant v of tiny_mlp: hidden size 8 + 4v, and on odd v the relu before
 * the bias (another op order): every variant is a distinct spec and
 * artifact, with its own weights.npz (written by the project's writer). */
static int make_variant(int v, const char *tmpdir, variant *x)
{
	enpu_tlist l = ENPU_TLIST_INIT;
	enpu_err e = ENPU_ERR_INIT;
	enpu_buf s = ENPU_BUF_INIT, w = ENPU_BUF_INIT;
	uint32_t seed = 12345u + (uint32_t)v;
	int h = 8 + 4 * v, ret = -1;
	char path[4200], msg[1024];

	if (enpu_buf_addf(&s, "# loadgen mix variant %d\neulernpu: 1\nname: mix%d\nbackend: cpu_ref\n"
			  "inputs:\n  - {name: x, dtype: float32, shape: [1, 8]}\n"
			  "outputs: [logits]\nweights:\n"
			  "  - {name: fc1.w, dtype: float32, shape: [8, %d]}\n"
			  "  - {name: fc1.b, dtype: float32, shape: [%d]}\n"
			  "  - {name: fc2.w, dtype: float32, shape: [%d, 4]}\n"
			  "  - {name: fc2.b, dtype: float32, shape: [4]}\n"
			  "components:\n  - name: hidden\n    ops:\n"
			  "      - {name: fc1, op: matmul, in: [x, fc1.w], out: h1}\n%s"
			  "  - name: head\n    ops:\n"
			  "      - {name: fc2, op: matmul, in: [h, fc2.w], out: z}\n"
			  "      - {name: bias2, op: add, in: [z, fc2.b], out: logits}\n",
			  v, v, h, h, h,
			  v % 2 ? "      - {name: act1, op: relu, in: [h1], out: h2}\n"
				  "      - {name: bias1, op: add, in: [h2, fc1.b], out: h}\n"
				: "      - {name: bias1, op: add, in: [h1, fc1.b], out: h2}\n"
				  "      - {name: act1, op: relu, in: [h2], out: h}\n") != 0) {
		enpu_fail(&e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
		goto out;
	}
	snprintf(path, sizeof path, "%s/w%d.npz", tmpdir, v);
	if (add_tensor(&l, "fc1.w", 2, 8, h, &seed, &e) || add_tensor(&l, "fc1.b", 1, h, 0, &seed, &e) ||
	    add_tensor(&l, "fc2.w", 2, h, 4, &seed, &e) || add_tensor(&l, "fc2.b", 1, 4, 0, &seed, &e) ||
	    enpu_npz_write(path, &l, &e) || enpu_read_file(path, 0, &w, &e))
		goto out;
	unlink(path);
	x->spec_len = s.len;
	x->spec = enpu_buf_detach(&s, NULL);
	x->weights_len = w.len;
	x->weights = enpu_buf_detach(&w, NULL);
	enpu_sha256_hex(x->spec, x->spec_len, x->ds);
	enpu_sha256_hex(x->weights, x->weights_len, x->dw);
	ret = 0;
out:
	if (ret) {
		enpu_err_render(&e, msg, sizeof msg);
		fprintf(stderr, "loadgen: variant %d:\n%s\n", v, msg);
	}
	enpu_tlist_free(&l);
	enpu_buf_free(&s);
	enpu_buf_free(&w);
	return ret;
}

static int read_example(const char *name, enpu_buf *b, char d[65])
{
	char path[4200], msg[1024];
	enpu_err e = ENPU_ERR_INIT;

	snprintf(path, sizeof path, "%s/%s", opt.example, name);
	if (enpu_read_file(path, 0, b, &e) != 0) {
		enpu_err_render(&e, msg, sizeof msg);
		fprintf(stderr, "loadgen: %s\n", msg);
		return -1;
	}
	enpu_sha256_hex(b->data, b->len, d);
	return 0;
}

/* Before the clients start: the files, the variants, and for run the one
 * compile and a first job whose result is the reference. */
int setup(client *c)
{
	char tmpdir[] = "/tmp/loadgen.XXXXXX", res[65];

	if (read_example("spec.yaml", &ex_spec, d_spec) || read_example("weights.npz", &ex_weights, d_weights) ||
	    read_example("input.npz", &ex_input, d_input))
		return -1;
	if (put_blob(c, d_input) != 0)
		return -1;
	if (opt.mix) {
		int r = 0;

		if (!(vars = calloc((size_t)opt.variants, sizeof *vars)) || !mkdtemp(tmpdir)) {
			fprintf(stderr, "loadgen: cannot make the variants: %s\n", strerror(errno));
			return -1;
		}
		for (int v = 0; v < opt.variants && !r; v++)
			r = make_variant(v, tmpdir, &vars[v]);
		rmdir(tmpdir);
		return r;
	}
	if (put_blob(c, d_spec) || put_blob(c, d_weights) ||
	    compile(c, d_spec, d_weights, "spec.yaml", run_art) || job_once(c, run_art, 0, res) != J_OK)
		return -1;
	snprintf(run_ref, sizeof run_ref, "%s", res);
	return 0;
}

/* GET /v1/cache's evictions (mix), or -1. */
long evictions(client *c)
{
	json_object *o, *v;
	long n = -1;

	if (http(c, "GET", API_CACHE, NULL, 0, NULL) != 200 || !(o = resp_json(c)))
		return -1;
	if (json_object_object_get_ex(o, F_EVICTIONS, &v))
		n = (long)json_object_get_int64(v);
	json_object_put(o);
	return n;
}

/* Free what setup() read and made. */
void free_inputs(void)
{
	for (int v = 0; vars && v < opt.variants; v++) {
		free(vars[v].spec);
		free(vars[v].weights);
	}
	free(vars);
	enpu_buf_free(&ex_spec);
	enpu_buf_free(&ex_weights);
	enpu_buf_free(&ex_input);
}

/* runner.c: the cross-ISA test runner. Built from the compute core alone
 * (libc, libm, pthread: no JSON, YAML, zip or network), statically, for
 * armhf and aarch64 (make cross) and natively. It reads bundles written on
 * the host (bundle.h) and rebuilds each graph through the op table (the
 * reader, reader.c); this file runs it with the engine on 1 and on 3
 * threads, checks the two agree bit for bit, and writes the outputs as
 * little-endian floats for the host to compare.
 *
 *   runner BUNDLE OUT [BUNDLE OUT]...   exit 0 all ran; 1 a run failed or
 *                                       the thread counts disagree; 2 a
 *                                       bundle was rejected or usage/io
 *   runner --corrupt BUNDLE             every truncation must be rejected;
 *                                       every single-byte change rejected
 *                                       or run without harm (a self-check
 *                                       of the reader, meant for ASan) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bundle.h"
#include "buf.h"
#include "engine.h"
#include "err.h"
#include "par.h"
#include "reader.h"

static int put_bytes(enpu_buf *o, const void *p, size_t n)
{
	return enpu_buf_add(o, p, n);
}

static int put_u32(enpu_buf *o, uint32_t v)
{
	unsigned char b[4];
	bnd_put32(b, v);
	return put_bytes(o, b, 4);
}

static int put_u64(enpu_buf *o, uint64_t v)
{
	unsigned char b[8];
	bnd_put64(b, v);
	return put_bytes(o, b, 8);
}

/* Run once with nthreads (1 = the caller only; 0 = no pool at all) over a
 * fresh arena filled with `fill` (so a kernel that reads bytes it never
 * wrote shows up as a difference between runs), and append the result
 * file's bytes to out. */
static int run_once(const bundle *b, int nthreads, int fill, enpu_buf *out, enpu_err *e)
{
	const enpu_graph *g = b->g;
	enpu_engine en = {0};
	enpu_par *par = NULL;
	unsigned char *arena = NULL;
	int64_t *offset = NULL;
	size_t asz = ((size_t)b->plan.arena_bytes + 63) & ~(size_t)63;
	int rc = -1;

	if (nthreads > 0 && !(par = enpu_par_create(nthreads))) {
		enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "cannot start %d threads", nthreads);
		goto out;
	}
	arena = aligned_alloc(64, asz ? asz : 64);
	en.data = calloc((size_t)(g->n_tensors ? g->n_tensors : 1), sizeof(*en.data));
	offset = calloc((size_t)(g->n_tensors ? g->n_tensors : 1), sizeof(*offset));
	if (!arena || !en.data || !offset) {
		enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "cannot allocate the arena of %zu bytes", asz);
		goto out;
	}
	memset(arena, fill, asz ? asz : 64);
	en.g = g;
	en.par = par;
	for (int t = 0; t < g->n_tensors; t++) {
		offset[t] = -1;
		if (g->tensors[t].kind != ENPU_TK_INTERMEDIATE)
			en.data[t] = b->data[t];
		else if (b->plan.tensor_buf[t] >= 0)
			offset[t] = (int64_t)b->plan.bufs[b->plan.tensor_buf[t]].offset;
	}
	enpu_engine_bind_arena(&en, arena, offset);
	en.plan = &b->plan;
	en.arena = arena;
	if (enpu_engine_run(&en, e) < 0)
		goto out;

	if (put_bytes(out, BND_RES_MAGIC, 8) < 0 || put_u32(out, (uint32_t)g->n_outputs) < 0)
		goto nomem;
	for (int i = 0; i < g->n_outputs; i++) {
		const enpu_irtensor *t = &g->tensors[g->outputs[i]];
		const float *src = en.data[g->outputs[i]];
		uint64_t n;

		if (enpu_shape_numel(&t->shape, &n) < 0 ||
		    put_u32(out, (uint32_t)strlen(t->name)) < 0 ||
		    put_bytes(out, t->name, strlen(t->name)) < 0 ||
		    put_u32(out, (uint32_t)t->shape.ndim) < 0)
			goto nomem;
		for (int d = 0; d < t->shape.ndim; d++)
			if (put_u64(out, (uint64_t)t->shape.dim[d]) < 0)
				goto nomem;
		if (put_u64(out, n) < 0)
			goto nomem;
		for (uint64_t k = 0; k < n; k++)
			if (put_u32(out, bnd_fbits(src[k])) < 0)
				goto nomem;
	}
	rc = 0;
	goto out;
nomem:
	enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "cannot build the result");
out:
	enpu_par_destroy(par);
	free(arena);
	free(en.data);
	free(offset);
	return rc;
}

static void report(const char *what, const enpu_err *e)
{
	char msg[2048];

	enpu_err_render(e, msg, sizeof(msg));
	fprintf(stderr, "runner: %s\n%s", what, msg);
}

/* One bundle: 2 = rejected, 1 = run failed or threads disagree, 0 ok. */
static int run_bundle(const char *path, const char *out_path)
{
	enpu_buf file = ENPU_BUF_INIT, r1 = ENPU_BUF_INIT, r3 = ENPU_BUF_INIT;
	enpu_err e = ENPU_ERR_INIT;
	bundle b;
	int rc = 2;

	if (enpu_read_file(path, 0, &file, &e) < 0 ||
	    bundle_parse((const unsigned char *)file.data, file.len, path, &b, &e) < 0) {
		report(path, &e);
		enpu_buf_free(&file);
		return 2;
	}
	rc = 1;
	if (run_once(&b, 1, 0x00, &r1, &e) < 0 || run_once(&b, 3, 0xa5, &r3, &e) < 0) {
		report(path, &e);
		goto out;
	}
	if (r1.len != r3.len || memcmp(r1.data, r3.data, r1.len) != 0) {
		fprintf(stderr, "runner: %s: 1 and 3 threads give different bits\n", path);
		goto out;
	}
	if (enpu_write_file_atomic(out_path, r1.data, r1.len, &e) < 0) {
		report(out_path, &e);
		rc = 2;
		goto out;
	}
	printf("%s: %d ops, %d outputs, 1 and 3 threads equal\n", path, b.g->n_ops,
	       b.g->n_outputs);
	rc = 0;
out:
	bundle_free(&b);
	enpu_buf_free(&file);
	enpu_buf_free(&r1);
	enpu_buf_free(&r3);
	return rc;
}

/* Parse a damaged copy; if it parses, run it serially: it must not crash
 * (ASan/UBSan watch), whatever the answer. Returns 1 if it parsed. */
static int try_damaged(const unsigned char *p, size_t len)
{
	enpu_err e = ENPU_ERR_INIT;
	enpu_buf r = ENPU_BUF_INIT;
	bundle b;

	if (bundle_parse(p, len, "damaged", &b, &e) < 0)
		return 0;
	(void)run_once(&b, 0, 0x5a, &r, &e);
	enpu_buf_free(&r);
	bundle_free(&b);
	return 1;
}

/* Every prefix must be rejected (all of them up to 4 KiB, then about 4000
 * spread evenly); every byte (same spread) xor-ed with 0x01, 0x80, 0xff
 * must be rejected or run without harm. */
static int corrupt_check(const char *path)
{
	static const unsigned char flips[] = {0x01, 0x80, 0xff};
	enpu_buf file = ENPU_BUF_INIT;
	enpu_err e = ENPU_ERR_INIT;
	unsigned char *copy = NULL;
	size_t len, step, n_trunc = 0, n_flip = 0, n_parsed = 0;
	int rc = 1;

	if (enpu_read_file(path, 0, &file, &e) < 0) {
		report(path, &e);
		return 2;
	}
	len = file.len;
	step = len / 4000 + 1;
	if (!(copy = malloc(len ? len : 1)))
		goto out;
	memcpy(copy, file.data, len);
	if (!try_damaged(copy, len)) {
		fprintf(stderr, "runner: %s: the undamaged bundle does not parse\n", path);
		goto out;
	}
	for (size_t l = 0; l < len; l += l < 4096 ? 1 : step) {
		/* a fresh allocation of exactly l bytes: ASan sees any overread */
		unsigned char *pre = malloc(l ? l : 1);
		if (!pre)
			goto out;
		memcpy(pre, copy, l);
		if (try_damaged(pre, l)) {
			fprintf(stderr, "runner: %s: a prefix of %zu bytes was accepted\n", path, l);
			free(pre);
			goto out;
		}
		free(pre);
		n_trunc++;
	}
	for (size_t i = 0; i < len; i += step)
		for (size_t f = 0; f < sizeof(flips); f++) {
			copy[i] ^= flips[f];
			n_parsed += (size_t)try_damaged(copy, len);
			copy[i] ^= flips[f];
			n_flip++;
		}
	printf("%s: %zu bytes, %zu truncations rejected, %zu byte changes (%zu still valid, ran)\n",
	       path, len, n_trunc, n_flip, n_parsed);
	rc = 0;
out:
	free(copy);
	enpu_buf_free(&file);
	return rc;
}

int main(int argc, char **argv)
{
	int worst = 0;

	if (argc == 3 && strcmp(argv[1], "--corrupt") == 0)
		return corrupt_check(argv[2]);
	if (argc < 3 || argc % 2 == 0) {
		fprintf(stderr, "usage: runner BUNDLE OUT [BUNDLE OUT]...\n"
				"       runner --corrupt BUNDLE\n");
		return 2;
	}
	for (int i = 1; i + 1 < argc; i += 2) {
		int r = run_bundle(argv[i], argv[i + 1]);
		if (r > worst)
			worst = r;
	}
	return worst;
}

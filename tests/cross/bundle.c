/* bundle.c: the host side of the cross-ISA proof, linked with the full
 * library. It compiles cases for cpu_ref and runs them on this CPU (the
 * reference bits), writes the bundles the runner executes on other CPUs
 * (format in bundle.h), and compares the runner's results with the
 * reference bit for bit.
 *
 *   bundle prep WORK CASE_DIR...     per case (spec.yaml, weights.npz,
 *                                    input.npz): WORK/<case>/art (cpu_ref
 *                                    artifact), result.npz (enpu_run here),
 *                                    case.bundle
 *   bundle write ARTIFACT INPUT.npz OUT.bundle
 *   bundle compare RESULT REF.npz [RESULT REF.npz]...
 *
 * Exit status: 0 all good, 1 a case failed or differs, 2 usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bundle.h"
#include "enpu.h"
#include "buf.h"
#include "npz.h"
#include "plan.h"

_Static_assert(ENPU_MAX_DIMS == BND_DIMS, "bundle v1 fixes 8 dims");

static int put(enpu_buf *o, const void *p, size_t n)
{
	return enpu_buf_add(o, p, n);
}

static int put8(enpu_buf *o, unsigned v)
{
	unsigned char b = (unsigned char)v;
	return put(o, &b, 1);
}

static int put32(enpu_buf *o, uint32_t v)
{
	unsigned char b[4];
	bnd_put32(b, v);
	return put(o, b, 4);
}

static int put64(enpu_buf *o, uint64_t v)
{
	unsigned char b[8];
	bnd_put64(b, v);
	return put(o, b, 8);
}

static int putf(enpu_buf *o, float f)
{
	return put32(o, bnd_fbits(f));
}

static int putstr(enpu_buf *o, const char *s)
{
	size_t n = strlen(s);
	if (n > BND_MAX_STR)
		return -1;
	return put32(o, (uint32_t)n) < 0 ? -1 : put(o, s, n);
}

static int putshape(enpu_buf *o, const enpu_shape *s)
{
	if (put32(o, (uint32_t)s->ndim) < 0)
		return -1;
	for (int d = 0; d < s->ndim; d++)
		if (put64(o, (uint64_t)s->dim[d]) < 0)
			return -1;
	return 0;
}

/* enpu_attrs field by field, in the order bundle.h lists. */
static int putattrs(enpu_buf *o, const enpu_attrs *a)
{
	int r = 0;

	r |= putf(o, a->alpha) | putf(o, a->beta);
	r |= put32(o, (uint32_t)a->trans_a) | put32(o, (uint32_t)a->trans_b);
	r |= putf(o, a->min) | putf(o, a->max);
	r |= put32(o, (uint32_t)a->approximate) | put32(o, (uint32_t)a->axis);
	for (int i = 0; i < 2; i++)
		r |= put32(o, (uint32_t)a->kernel[i]);
	for (int i = 0; i < 2; i++)
		r |= put32(o, (uint32_t)a->strides[i]);
	for (int i = 0; i < 4; i++)
		r |= put32(o, (uint32_t)a->pads[i]);
	for (int i = 0; i < 2; i++)
		r |= put32(o, (uint32_t)a->dilations[i]);
	r |= put32(o, (uint32_t)a->group) | put32(o, (uint32_t)a->count_include_pad);
	r |= putf(o, a->epsilon);
	r |= put32(o, (uint32_t)a->n_shape);
	for (int i = 0; i < BND_DIMS; i++)
		r |= put64(o, (uint64_t)a->shape[i]);
	r |= put32(o, (uint32_t)a->n_perm);
	for (int i = 0; i < BND_DIMS; i++)
		r |= put32(o, (uint32_t)a->perm[i]);
	r |= put32(o, a->set) | put32(o, (uint32_t)a->split.n);
	for (int i = 0; i < a->split.n; i++)
		r |= put64(o, (uint64_t)a->split.v[i]);
	return r ? -1 : 0;
}

/* Then every attribute of the op's row, by its type (bundle.h): the
 * fields spec v2 ops add reach the runner without a format change each. */
static int putrow(enpu_buf *o, const enpu_opdef *d, const enpu_attrs *a)
{
	int r = 0;

	for (const enpu_attrdef *ad = d->attrs; ad->name; ad++) {
		const char *base = (const char *)a + ad->offset;

		switch (ad->type) {
		case ENPU_ATTR_FLOAT:
			r |= putf(o, *(const float *)base);
			break;
		case ENPU_ATTR_INT:
		case ENPU_ATTR_BOOL01:
		case ENPU_ATTR_ENUM:
			r |= put32(o, (uint32_t) * (const int *)base);
			break;
		case ENPU_ATTR_INTS:
			for (int i = 0; i < ad->count; i++)
				r |= put32(o, (uint32_t)((const int *)base)[i]);
			break;
		case ENPU_ATTR_FLOATS:
			for (int i = 0; i < ad->count; i++)
				r |= putf(o, ((const float *)base)[i]);
			break;
		case ENPU_ATTR_LIST: {
			const enpu_ilist *l = (const enpu_ilist *)base;

			r |= put32(o, (uint32_t)l->n);
			for (int i = 0; i < l->n && i < ENPU_MAX_LIST; i++)
				r |= put64(o, (uint64_t)l->v[i]);
			break;
		}
		case ENPU_ATTR_DIMS:
		case ENPU_ATTR_PERM:
		case ENPU_ATTR_SIZES:
			break;   /* in the fixed block above */
		}
	}
	return r ? -1 : 0;
}

static int putdata(enpu_buf *o, int t, const enpu_irtensor *x, const float *f)
{
	uint64_t n;

	if (enpu_shape_numel(&x->shape, &n) < 0 || put32(o, (uint32_t)t) < 0 || put64(o, n) < 0)
		return -1;
	for (uint64_t k = 0; k < n; k++)
		if (x->dtype == ENPU_DT_I64 ? put64(o, (uint64_t)((const int64_t *)(const void *)f)[k]) < 0
					   : putf(o, f[k]) < 0)
			return -1;
	return 0;
}

/* The bundle of a loaded artifact and its inputs (already checked to
 * match the graph) into out. */
static int write_bundle(const enpu_artifact *a, const enpu_tlist *in, enpu_buf *o,
			enpu_err *e)
{
	const enpu_graph *g = enpu_artifact_graph(a);
	const enpu_plan *p = enpu_artifact_plan(a);
	int r = 0;

	r |= put(o, BND_MAGIC, 8) | put32(o, BND_VERSION) | put32(o, 0);
	r |= putstr(o, g->name ? g->name : "") | putstr(o, enpu_artifact_backend(a));
	r |= put32(o, (uint32_t)g->n_tensors);
	for (int t = 0; t < g->n_tensors && !r; t++) {
		const enpu_irtensor *x = &g->tensors[t];
		r |= putstr(o, x->name) | put8(o, (unsigned)x->dtype) | put8(o, (unsigned)x->kind);
		r |= put8(o, x->is_output ? 1 : 0) | put8(o, 0) | putshape(o, &x->shape);
	}
	r |= put32(o, (uint32_t)g->n_inputs);
	for (int i = 0; i < g->n_inputs; i++)
		r |= put32(o, (uint32_t)g->inputs[i]);
	r |= put32(o, (uint32_t)g->n_outputs);
	for (int i = 0; i < g->n_outputs; i++)
		r |= put32(o, (uint32_t)g->outputs[i]);
	r |= put32(o, (uint32_t)g->n_ops);
	for (int k = 0; k < g->n_ops && !r; k++) {
		const enpu_irop *op = &g->ops[k];
		r |= putstr(o, op->name) | putstr(o, op->def->name) | put32(o, (uint32_t)op->n_in);
		for (int j = 0; j < op->n_in; j++)
			r |= put32(o, (uint32_t)op->in[j]);
		r |= put32(o, (uint32_t)op->n_out);
		for (int j = 0; j < op->n_out; j++)
			r |= put32(o, (uint32_t)op->out[j]);
		r |= putattrs(o, &op->attrs) | putrow(o, op->def, &op->attrs);
	}
	r |= put64(o, p->arena_bytes) | put32(o, (uint32_t)p->n_bufs);
	for (int k = 0; k < p->n_bufs; k++) {
		const enpu_plan_buf *b = &p->bufs[k];
		r |= put32(o, b->tensor < 0 ? BND_SCRATCH : (uint32_t)b->tensor) | put64(o, b->offset) |
		     put64(o, b->bytes);
		r |= put32(o, (uint32_t)b->first_op) | put32(o, (uint32_t)b->last_op);
	}
	r |= put32(o, 0);   /* n_data: patched once the entries are written */
	if (r)
		goto nomem;
	{
		size_t at = o->len - 4;
		uint32_t n = 0;

		for (int t = 0; t < g->n_tensors && !r; t++) {
			const enpu_irtensor *x = &g->tensors[t];
			const float *f;
			if (x->kind == ENPU_TK_INPUT)
				f = enpu_tlist_find(in, x->name)->data;
			else if (x->kind == ENPU_TK_WEIGHT)
				f = enpu_artifact_weight(a, t);
			else
				continue;
			if (!f)
				return enpu_fail(e, ENPU_E_INTERNAL, x->name, NULL,
						 "tensor '%s' has no data", x->name);
			r |= putdata(o, t, x, f);
			n++;
		}
		if (r)
			goto nomem;
		bnd_put32((unsigned char *)o->data + at, n);
	}
	if (put(o, BND_END, 8) < 0)
		goto nomem;
	return 0;
nomem:
	return enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "cannot build the bundle");
}

/* Read input.npz and check it against the graph's inputs (names, shapes);
 * enpu_run makes the full check, this is for bundling alone. */
static int read_inputs(const enpu_graph *g, const char *path, enpu_tlist *in, enpu_err *e)
{
	if (enpu_npz_read(path, path, NULL, in, e) < 0)
		return -1;
	for (int i = 0; i < g->n_inputs; i++) {
		const enpu_irtensor *t = &g->tensors[g->inputs[i]];
		const enpu_tensor *x = enpu_tlist_find(in, t->name);
		if (!x || !enpu_shape_eq(&x->shape, &t->shape) || !x->data)
			return enpu_fail(e, ENPU_E_INPUT_SHAPE, path, NULL,
					 "input '%s' is missing or of the wrong shape", t->name);
	}
	return 0;
}

static int bundle_artifact(const enpu_artifact *a, const char *input, const char *out,
			   enpu_err *e)
{
	enpu_tlist in = ENPU_TLIST_INIT;
	enpu_buf b = ENPU_BUF_INIT;
	int rc = -1;

	if (read_inputs(enpu_artifact_graph(a), input, &in, e) < 0 ||
	    write_bundle(a, &in, &b, e) < 0 || enpu_write_file_atomic(out, b.data, b.len, e) < 0)
		goto out;
	rc = 0;
out:
	enpu_buf_free(&b);
	enpu_tlist_free(&in);
	return rc;
}

static void report(const char *what, const enpu_err *e)
{
	char msg[2048];

	enpu_err_render(e, msg, sizeof(msg));
	fprintf(stderr, "bundle: %s\n%s", what, msg);
}

static int cmd_write(int argc, char **argv)
{
	enpu_err e = ENPU_ERR_INIT;
	enpu_artifact *a = NULL;
	int rc = 1;

	if (argc != 3) {
		fprintf(stderr, "usage: bundle write ARTIFACT INPUT.npz OUT.bundle\n");
		return 2;
	}
	if (enpu_artifact_load(argv[0], NULL, &a, &e) < 0 ||
	    bundle_artifact(a, argv[1], argv[2], &e) < 0)
		report(argv[0], &e);
	else
		rc = 0;
	enpu_artifact_free(a);
	return rc;
}

/* One case: compile for cpu_ref, run here, bundle. */
static int prep_one(const char *work, const char *dir)
{
	char name[256], sp[1024], wp[1024], ip[1024], cd[1024], art[1100], res[1100], bnd[1100];
	const char *base;
	enpu_err e = ENPU_ERR_INIT;
	enpu_spec *s = NULL;
	enpu_target *t = NULL;
	enpu_artifact *a = NULL;
	enpu_compile_info ci;
	enpu_run_info ri;
	size_t n = strlen(dir);
	int rc = 1;

	while (n > 1 && dir[n - 1] == '/')
		n--;
	snprintf(name, sizeof(name), "%.*s", (int)n, dir);
	base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
	snprintf(sp, sizeof(sp), "%s/spec.yaml", name);
	snprintf(wp, sizeof(wp), "%s/weights.npz", name);
	snprintf(ip, sizeof(ip), "%s/input.npz", name);
	snprintf(cd, sizeof(cd), "%s/%s", work, base);
	snprintf(art, sizeof(art), "%s/art", cd);
	snprintf(res, sizeof(res), "%s/result.npz", cd);
	snprintf(bnd, sizeof(bnd), "%s/case.bundle", cd);
	if (enpu_mkdirs(cd, 0755, &e) < 0 ||
	    enpu_spec_load(sp, "spec.yaml", NULL, &s, &e) < 0 ||
	    enpu_target_resolve(s, "cpu_ref", NULL, NULL, NULL, &t, &e) < 0 ||
	    enpu_compile(s, t, wp, "weights.npz", NULL, art, NULL, &ci, &e) < 0 ||
	    enpu_artifact_load(art, NULL, &a, &e) < 0 ||
	    enpu_run(a, ip, "input.npz", res, NULL, NULL, NULL, NULL, &ri, &e) < 0 ||
	    bundle_artifact(a, ip, bnd, &e) < 0) {
		report(name, &e);
		goto out;
	}
	printf("prepared %s: %d ops, arena %llu bytes\n", base, ci.n_ops,
	       (unsigned long long)ci.arena_bytes);
	rc = 0;
out:
	enpu_artifact_free(a);
	enpu_target_free(t);
	enpu_spec_free(s);
	return rc;
}

static int cmd_prep(int argc, char **argv)
{
	int rc = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: bundle prep WORK CASE_DIR...\n");
		return 2;
	}
	for (int i = 1; i < argc; i++)
		rc |= prep_one(argv[0], argv[i]);
	return rc;
}

/* ---- compare ------------------------------------------------------------ */

/* The runner's result file as tensors (bundle.h, "Result"). */
static int read_result(const char *path, enpu_tlist *out, enpu_err *e)
{
	enpu_buf f = ENPU_BUF_INIT;
	const unsigned char *p;
	size_t pos = 12, len;
	uint32_t n;
	int rc = -1;

	if (enpu_read_file(path, 0, &f, e) < 0)
		return -1;
	p = (const unsigned char *)f.data;
	len = f.len;
	if (len < 12 || memcmp(p, BND_RES_MAGIC, 8) != 0)
		goto bad;
	n = bnd_get32(p + 8);
	for (uint32_t i = 0; i < n; i++) {
		enpu_tensor t = {0};
		uint32_t sl, nd;
		uint64_t cnt, numel;

		if (len - pos < 4 || (sl = bnd_get32(p + pos)) > BND_MAX_STR || len - pos - 4 < sl)
			goto bad;
		if (!(t.name = strndup((const char *)p + pos + 4, sl)))
			goto bad;
		pos += 4 + sl;
		if (len - pos < 4 || (nd = bnd_get32(p + pos)) > ENPU_MAX_DIMS ||
		    len - pos - 4 < 8 * (size_t)nd + 8) {
			free(t.name);
			goto bad;
		}
		pos += 4;
		t.dtype = ENPU_DT_F32;
		t.shape.ndim = (int)nd;
		for (uint32_t d = 0; d < nd; d++, pos += 8)
			t.shape.dim[d] = (int64_t)bnd_get64(p + pos);
		cnt = bnd_get64(p + pos);
		pos += 8;
		if (enpu_shape_numel(&t.shape, &numel) < 0 || cnt != numel ||
		    cnt > (len - pos) / 4 || enpu_tensor_alloc(&t, NULL, e) < 0) {
			free(t.name);
			goto bad;
		}
		for (uint64_t k = 0; k < cnt; k++, pos += 4)
			t.data[k] = bnd_bitsf(bnd_get32(p + pos));
		if (enpu_tlist_push(out, &t, e) < 0) {
			enpu_tensor_free(&t);
			goto out;
		}
	}
	if (pos != len)
		goto bad;
	rc = 0;
	goto out;
bad:
	enpu_fail(e, ENPU_E_IO, path, NULL, "not a complete runner result file (byte %zu)", pos);
out:
	enpu_buf_free(&f);
	return rc;
}

/* Bit for bit: same names in the same order, same shapes, same bytes. */
static int compare_one(const char *got_path, const char *ref_path)
{
	enpu_tlist got = ENPU_TLIST_INIT, ref = ENPU_TLIST_INIT;
	enpu_err e = ENPU_ERR_INIT;
	uint64_t floats = 0;
	int rc = 1;

	if (read_result(got_path, &got, &e) < 0 || enpu_npz_read(ref_path, ref_path, NULL, &ref, &e) < 0) {
		report(got_path, &e);
		goto out;
	}
	if (got.n != ref.n) {
		printf("DIFF %s: %zu outputs, %s has %zu\n", got_path, got.n, ref_path, ref.n);
		goto out;
	}
	for (size_t i = 0; i < got.n; i++) {
		const enpu_tensor *x = &got.items[i], *y = &ref.items[i];
		char s1[96], s2[96];
		uint64_t n;

		if (strcmp(x->name, y->name) != 0 || !enpu_shape_eq(&x->shape, &y->shape)) {
			printf("DIFF %s: output %zu is '%s' %s, %s has '%s' %s\n", got_path, i, x->name,
			       enpu_shape_str(&x->shape, s1, sizeof(s1)), ref_path, y->name,
			       enpu_shape_str(&y->shape, s2, sizeof(s2)));
			goto out;
		}
		enpu_shape_numel(&x->shape, &n);
		for (uint64_t k = 0; k < n; k++)
			if (bnd_fbits(x->data[k]) != bnd_fbits(y->data[k])) {
				printf("DIFF %s: '%s' flat index %llu: 0x%08x (%.9g) vs 0x%08x (%.9g)\n",
				       got_path, x->name, (unsigned long long)k, bnd_fbits(x->data[k]),
				       (double)x->data[k], bnd_fbits(y->data[k]), (double)y->data[k]);
				goto out;
			}
		floats += n;
	}
	printf("equal %s: %zu outputs, %llu floats bit for bit\n", got_path, got.n,
	       (unsigned long long)floats);
	rc = 0;
out:
	enpu_tlist_free(&got);
	enpu_tlist_free(&ref);
	return rc;
}

static int cmd_compare(int argc, char **argv)
{
	int rc = 0;

	if (argc < 2 || argc % 2) {
		fprintf(stderr, "usage: bundle compare RESULT REF.npz [RESULT REF.npz]...\n");
		return 2;
	}
	for (int i = 0; i + 1 < argc; i += 2)
		rc |= compare_one(argv[i], argv[i + 1]);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "prep") == 0)
		return cmd_prep(argc - 2, argv + 2);
	if (argc >= 2 && strcmp(argv[1], "write") == 0)
		return cmd_write(argc - 2, argv + 2);
	if (argc >= 2 && strcmp(argv[1], "compare") == 0)
		return cmd_compare(argc - 2, argv + 2);
	fprintf(stderr, "usage: bundle prep WORK CASE_DIR...\n"
			"       bundle write ARTIFACT INPUT.npz OUT.bundle\n"
			"       bundle compare RESULT REF.npz [RESULT REF.npz]...\n");
	return 2;
}

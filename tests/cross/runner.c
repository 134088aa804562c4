/* runner.c: the cross-ISA test runner. Built from the compute core alone
 * (libc, libm, pthread: no JSON, YAML, zip or network), statically, for
 * armhf and aarch64 (make cross) and natively. It reads bundles written on
 * the host (bundle.h), rebuilds each graph through the op table, runs it
 * with the engine on 1 and on 3 threads, checks the two agree bit for bit,
 * and writes the outputs as little-endian floats for the host to compare.
 *
 *   runner BUNDLE OUT [BUNDLE OUT]...   exit 0 all ran; 1 a run failed or
 *                                       the thread counts disagree; 2 a
 *                                       bundle was rejected or usage/io
 *   runner --corrupt BUNDLE             every truncation must be rejected;
 *                                       every single-byte change rejected
 *                                       or run without harm (a self-check
 *                                       of the reader, meant for ASan) */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bundle.h"
#include "buf.h"
#include "engine.h"
#include "err.h"
#include "ir.h"
#include "ops.h"
#include "par.h"
#include "plan.h"
#include "tensor.h"

_Static_assert(ENPU_MAX_DIMS == BND_DIMS, "bundle v1 fixes 8 dims");

#define FIX "write the bundle again on the host: bundle write ARTIFACT INPUT.npz OUT"

typedef struct cursor {
	const unsigned char *p;
	size_t len, pos;
	const char *label;
	enpu_err *e;
} cursor;

/* A loaded bundle: the graph, its plan, and the data of inputs and weights
 * (per tensor index, NULL for intermediates). */
typedef struct bundle {
	enpu_graph *g;
	enpu_plan plan;
	float **data;
} bundle;

static int truncated(cursor *c, const char *what)
{
	return enpu_fail(c->e, ENPU_E_ARTIFACT, c->label, FIX,
			 "bundle is truncated at byte %zu reading %s", c->pos, what);
}

static int bad(cursor *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* An inconsistent bundle: the message, and where the reader had got to. */
static int bad(cursor *c, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return enpu_fail(c->e, ENPU_E_ARTIFACT, c->label, FIX, "%s (before byte %zu)", msg,
			 c->pos);
}

static int take(cursor *c, size_t n, const char *what, const unsigned char **out)
{
	*out = c->p;   /* never read on failure; keeps the compiler's flow analysis quiet */
	if (c->len - c->pos < n)
		return truncated(c, what);
	*out = c->p + c->pos;
	c->pos += n;
	return 0;
}

static int u8(cursor *c, const char *what, unsigned *v)
{
	const unsigned char *p;
	if (take(c, 1, what, &p) < 0)
		return -1;
	*v = p[0];
	return 0;
}

static int u32(cursor *c, const char *what, uint32_t *v)
{
	const unsigned char *p;
	if (take(c, 4, what, &p) < 0)
		return -1;
	*v = bnd_get32(p);
	return 0;
}

static int u64(cursor *c, const char *what, uint64_t *v)
{
	const unsigned char *p;
	if (take(c, 8, what, &p) < 0)
		return -1;
	*v = bnd_get64(p);
	return 0;
}

static int i32(cursor *c, const char *what, int *v)
{
	uint32_t u;
	if (u32(c, what, &u) < 0)
		return -1;
	*v = (int)(int32_t)u;   /* two's complement on every target we build for */
	return 0;
}

static int f32(cursor *c, const char *what, float *v)
{
	uint32_t u;
	if (u32(c, what, &u) < 0)
		return -1;
	*v = bnd_bitsf(u);
	return 0;
}

/* A count that precedes records of at least `min_rec` bytes each: bounded
 * by max and by what is left, so a corrupt count never allocates much. */
static int count(cursor *c, const char *what, uint32_t max, size_t min_rec, uint32_t *v)
{
	if (u32(c, what, v) < 0)
		return -1;
	if (*v > max)
		return bad(c, "%s: count %u is over the limit", what, *v);
	if ((uint64_t)*v * min_rec > c->len - c->pos)
		return truncated(c, what);
	return 0;
}

static int str(cursor *c, const char *what, char **out)
{
	const unsigned char *p;
	uint32_t n;

	if (u32(c, what, &n) < 0)
		return -1;
	if (n > BND_MAX_STR)
		return bad(c, "%s: string of %u bytes is too long", what, n);
	if (take(c, n, what, &p) < 0)
		return -1;
	if (memchr(p, '\0', n))
		return bad(c, "%s: string holds a NUL byte", what);
	if (!(*out = malloc((size_t)n + 1)))
		return enpu_fail(c->e, ENPU_E_NOMEM, c->label, NULL, "cannot read %s", what);
	memcpy(*out, p, n);
	(*out)[n] = '\0';
	return 0;
}

static int shape(cursor *c, const char *who, enpu_shape *s)
{
	uint32_t nd;
	uint64_t n;

	if (u32(c, "a shape", &nd) < 0)
		return -1;
	if (nd > ENPU_MAX_DIMS)
		return bad(c, "tensor '%s' has %u dims", who, nd);
	memset(s, 0, sizeof(*s));
	s->ndim = (int)nd;
	for (uint32_t d = 0; d < nd; d++) {
		uint64_t v;
		if (u64(c, "a dim", &v) < 0)
			return -1;
		if (v > INT64_MAX)
			return bad(c, "tensor '%s' has a negative dim", who);
		s->dim[d] = (int64_t)v;
	}
	if (enpu_shape_numel(s, &n) < 0 || n > enpu_limits_default()->max_tensor_elems ||
	    n > SIZE_MAX / sizeof(float))
		return bad(c, "tensor '%s' is larger than the limit", who);
	return 0;
}

static int attrs(cursor *c, enpu_attrs *a)
{
	uint32_t n;

	memset(a, 0, sizeof(*a));
	if (f32(c, "alpha", &a->alpha) < 0 || f32(c, "beta", &a->beta) < 0 ||
	    i32(c, "trans_a", &a->trans_a) < 0 || i32(c, "trans_b", &a->trans_b) < 0 ||
	    f32(c, "min", &a->min) < 0 || f32(c, "max", &a->max) < 0 ||
	    i32(c, "approximate", &a->approximate) < 0 || i32(c, "axis", &a->axis) < 0)
		return -1;
	for (int i = 0; i < 2; i++)
		if (i32(c, "kernel", &a->kernel[i]) < 0)
			return -1;
	for (int i = 0; i < 2; i++)
		if (i32(c, "strides", &a->strides[i]) < 0)
			return -1;
	for (int i = 0; i < 4; i++)
		if (i32(c, "pads", &a->pads[i]) < 0)
			return -1;
	for (int i = 0; i < 2; i++)
		if (i32(c, "dilations", &a->dilations[i]) < 0)
			return -1;
	if (i32(c, "group", &a->group) < 0 ||
	    i32(c, "count_include_pad", &a->count_include_pad) < 0 ||
	    f32(c, "epsilon", &a->epsilon) < 0 || u32(c, "n_shape", &n) < 0)
		return -1;
	if (n > BND_DIMS)
		return bad(c, "attribute 'shape' has %u dims", n);
	a->n_shape = (int)n;
	for (int i = 0; i < BND_DIMS; i++) {
		uint64_t v;
		if (u64(c, "shape", &v) < 0)
			return -1;
		a->shape[i] = (int64_t)v;
	}
	if (u32(c, "n_perm", &n) < 0)
		return -1;
	if (n > BND_DIMS)
		return bad(c, "attribute 'perm' has %u entries", n);
	a->n_perm = (int)n;
	for (int i = 0; i < BND_DIMS; i++)
		if (i32(c, "perm", &a->perm[i]) < 0)
			return -1;
	if (u32(c, "set", &n) < 0)
		return -1;
	a->set = n;
	/* the shape rules check ranges; these flags they take as given */
	if ((unsigned)a->trans_a > 1 || (unsigned)a->trans_b > 1 ||
	    (unsigned)a->count_include_pad > 1 || (unsigned)a->approximate > 1)
		return bad(c, "a 0/1 attribute is out of range");
	return 0;
}

static int by_name(const void *x, const void *y)
{
	return strcmp(**(char **const *)x, **(char **const *)y);
}

/* Names unique: sort pointers to them (n log n: counts can be large). */
static int unique(char **const *names, size_t n)
{
	char ***v;
	int rc = 0;

	if (n < 2)
		return 0;
	if (!(v = malloc(n * sizeof(*v))))
		return -1;
	for (size_t i = 0; i < n; i++)
		v[i] = (char **)names[i];
	qsort(v, n, sizeof(*v), by_name);
	for (size_t i = 1; i < n; i++)
		if (strcmp(*v[i - 1], *v[i]) == 0)
			rc = -1;
	free(v);
	return rc;
}

static int tensors(cursor *c, enpu_graph *g)
{
	uint32_t n;
	char ***names = NULL;
	int rc = -1;

	if (count(c, "tensors", BND_MAX_TENSORS, 12, &n) < 0)
		return -1;
	if (!(g->tensors = calloc(n ? n : 1, sizeof(*g->tensors))) ||
	    !(names = calloc(n ? n : 1, sizeof(*names))))
		goto nomem;
	for (uint32_t i = 0; i < n; i++) {
		enpu_irtensor *t = &g->tensors[i];
		unsigned dt, kind, out, res;

		t->producer = t->last_use = -1;
		if (str(c, "a tensor name", &t->name) < 0)
			goto out;
		g->n_tensors = (int)i + 1;
		names[i] = &t->name;
		if (!t->name[0]) {
			bad(c, "tensor %u has an empty name", i);
			goto out;
		}
		if (u8(c, "dtype", &dt) < 0 || u8(c, "kind", &kind) < 0 ||
		    u8(c, "is_output", &out) < 0 || u8(c, "reserved", &res) < 0)
			goto out;
		if (dt != ENPU_DT_F32 || kind > ENPU_TK_INTERMEDIATE || out > 1 || res) {
			bad(c, "tensor '%s' has an invalid dtype, kind or flag", t->name);
			goto out;
		}
		t->dtype = ENPU_DT_F32;
		t->kind = (enpu_tkind)kind;
		t->is_output = (int)out;
		if (out && t->kind != ENPU_TK_INTERMEDIATE) {
			bad(c, "output '%s' is not produced by an op", t->name);
			goto out;
		}
		if (shape(c, t->name, &t->shape) < 0)
			goto out;
	}
	if (unique(names, n) < 0) {
		bad(c, "tensor names are not unique");
		goto out;
	}
	rc = 0;
	goto out;
nomem:
	enpu_fail(c->e, ENPU_E_NOMEM, c->label, NULL, "cannot allocate %u tensors", n);
out:
	free(names);
	return rc;
}

/* A list of tensor indices, each of the wanted kind, each once, and as
 * many as the graph has of that kind (inputs: kind input; outputs: marked
 * is_output). */
static int index_list(cursor *c, enpu_graph *g, int outputs, int **list, int *n_list)
{
	const char *what = outputs ? "outputs" : "inputs";
	uint32_t n;
	int want = 0;
	char *seen;

	if (count(c, what, (uint32_t)g->n_tensors, 4, &n) < 0)
		return -1;
	if (!(*list = calloc(n ? n : 1, sizeof(int))) ||
	    !(seen = calloc((size_t)g->n_tensors + 1, 1)))
		return enpu_fail(c->e, ENPU_E_NOMEM, c->label, NULL, "cannot read the %s", what);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t t;
		if (u32(c, what, &t) < 0)
			goto fail;
		if (t >= (uint32_t)g->n_tensors || seen[t] ||
		    (outputs ? !g->tensors[t].is_output : g->tensors[t].kind != ENPU_TK_INPUT)) {
			bad(c, "%s: entry %u is not a tensor of that kind, or repeats", what, i);
			goto fail;
		}
		seen[t] = 1;
		(*list)[i] = (int)t;
	}
	*n_list = (int)n;
	for (int t = 0; t < g->n_tensors; t++)
		want += outputs ? g->tensors[t].is_output != 0 : g->tensors[t].kind == ENPU_TK_INPUT;
	if (want != (int)n) {
		bad(c, "%s: the list has %u entries, the graph %d such tensors", what, n, want);
		goto fail;
	}
	free(seen);
	return 0;
fail:
	free(seen);
	return -1;
}

static int ops(cursor *c, enpu_graph *g)
{
	uint32_t n;
	char ***names = NULL;
	int rc = -1;

	if (count(c, "ops", BND_MAX_OPS, 20, &n) < 0)
		return -1;
	if (!(g->ops = calloc(n ? n : 1, sizeof(*g->ops))) ||
	    !(names = calloc(n ? n : 1, sizeof(*names)))) {
		enpu_fail(c->e, ENPU_E_NOMEM, c->label, NULL, "cannot allocate %u ops", n);
		goto out;
	}
	for (uint32_t k = 0; k < n; k++) {
		enpu_irop *op = &g->ops[k];
		enpu_shape in_sh[ENPU_MAX_OP_INPUTS], out_sh[1];
		char *opname = NULL, why[256];
		uint32_t nin, o;
		int max_in;

		if (str(c, "an op name", &op->name) < 0)
			goto out;
		g->n_ops = (int)k + 1;
		names[k] = &op->name;
		if (str(c, "an operator", &opname) < 0)
			goto out;
		op->def = enpu_op_by_name(opname);
		free(opname);
		if (!op->def) {
			bad(c, "op '%s' has an unknown operator", op->name);
			goto out;
		}
		if (u32(c, "n_in", &nin) < 0)
			goto out;
		max_in = op->def->max_in < 0 ? ENPU_MAX_OP_INPUTS : op->def->max_in;
		if (nin < (uint32_t)op->def->min_in || nin > (uint32_t)max_in) {
			bad(c, "op '%s' has %u inputs, outside its operator's arity", op->name, nin);
			goto out;
		}
		if (!(op->in = calloc(nin ? nin : 1, sizeof(int)))) {
			enpu_fail(c->e, ENPU_E_NOMEM, c->label, NULL, "cannot read op '%s'", op->name);
			goto out;
		}
		op->n_in = (int)nin;
		for (uint32_t j = 0; j < nin; j++) {
			uint32_t t;
			if (u32(c, "an op input", &t) < 0)
				goto out;
			if (t >= (uint32_t)g->n_tensors ||
			    (g->tensors[t].kind == ENPU_TK_INTERMEDIATE && g->tensors[t].producer < 0)) {
				bad(c, "op '%s' reads tensor %u, unknown or not yet produced",
				    op->name, t);
				goto out;
			}
			op->in[j] = (int)t;
			in_sh[j] = g->tensors[t].shape;
		}
		if (u32(c, "an op output", &o) < 0)
			goto out;
		if (o >= (uint32_t)g->n_tensors || g->tensors[o].kind != ENPU_TK_INTERMEDIATE ||
		    g->tensors[o].producer >= 0) {
			bad(c, "op '%s' writes tensor %u: not an intermediate, or produced twice",
			    op->name, o);
			goto out;
		}
		op->out[0] = (int)o;
		op->n_out = 1;
		if (attrs(c, &op->attrs) < 0)
			goto out;
		/* the shape rule must give back exactly the recorded shape */
		why[0] = '\0';
		if (op->def->shape(&op->attrs, in_sh, op->n_in, out_sh, why, sizeof(why)) < 0) {
			enpu_fail(c->e, ENPU_E_ARTIFACT, c->label, FIX,
				  "op '%s': shape rule of '%s' fails: %s", op->name, op->def->name, why);
			goto out;
		}
		if (!enpu_shape_eq(&out_sh[0], &g->tensors[o].shape)) {
			bad(c, "op '%s': the recorded output shape is not the shape rule's",
			    op->name);
			goto out;
		}
		g->tensors[o].producer = (int)k;
		for (int j = 0; j < op->n_in; j++)
			g->tensors[op->in[j]].last_use = (int)k;
	}
	for (int i = 0; i < g->n_tensors; i++)
		if (g->tensors[i].kind == ENPU_TK_INTERMEDIATE && g->tensors[i].producer < 0) {
			bad(c, "tensor '%s' is never produced", g->tensors[i].name);
			goto out;
		}
	if (unique(names, n) < 0) {
		bad(c, "op names are not unique");
		goto out;
	}
	rc = 0;
out:
	free(names);
	return rc;
}

static int plan(cursor *c, const enpu_graph *g, enpu_plan *p)
{
	uint32_t n;
	uint64_t arena, end = 0;

	memset(p, 0, sizeof(*p));
	if (u64(c, "arena_bytes", &arena) < 0 ||
	    count(c, "buffers", (uint32_t)g->n_tensors, 28, &n) < 0)
		return -1;
	p->n_tensors = g->n_tensors;
	p->tensor_buf = malloc(sizeof(int) * (size_t)(g->n_tensors ? g->n_tensors : 1));
	p->bufs = calloc(n ? n : 1, sizeof(*p->bufs));
	if (!p->tensor_buf || !p->bufs)
		return enpu_fail(c->e, ENPU_E_NOMEM, c->label, NULL, "cannot read the plan");
	for (int i = 0; i < g->n_tensors; i++)
		p->tensor_buf[i] = -1;
	for (uint32_t k = 0; k < n; k++) {
		enpu_plan_buf *b = &p->bufs[k];
		uint32_t t, f, l;
		if (u32(c, "a buffer's tensor", &t) < 0 || u64(c, "offset", &b->offset) < 0 ||
		    u64(c, "bytes", &b->bytes) < 0 || u32(c, "first_op", &f) < 0 ||
		    u32(c, "last_op", &l) < 0)
			return -1;
		if (t >= (uint32_t)g->n_tensors || p->tensor_buf[t] >= 0 ||
		    f >= (uint32_t)g->n_ops || l >= (uint32_t)g->n_ops)
			return bad(c, "plan: buffer %u is out of range or repeats a tensor", k);
		b->tensor = (int)t;
		b->first_op = (int)f;
		b->last_op = (int)l;
		p->tensor_buf[t] = (int)k;
		p->n_bufs = (int)k + 1;
	}
	p->arena_bytes = arena;
	if (enpu_plan_verify(g, p, c->label, c->e) < 0)
		return -1;
	/* the planner's arena ends at the aligned end of its last buffer; more
	 * would only be an allocation a corrupt file asks for */
	for (int k = 0; k < p->n_bufs; k++)
		if (p->bufs[k].offset + p->bufs[k].bytes > end)
			end = p->bufs[k].offset + p->bufs[k].bytes;   /* verified: no overflow */
	end = (end + ENPU_PLAN_ALIGN - 1) / ENPU_PLAN_ALIGN * ENPU_PLAN_ALIGN;
	if (arena != end || arena > SIZE_MAX - ENPU_PLAN_ALIGN)
		return bad(c, "plan: arena_bytes %llu is not the end of the last buffer",
			   (unsigned long long)arena);
	return 0;
}

static int data(cursor *c, const enpu_graph *g, float **out)
{
	uint32_t n;
	int want = 0;

	if (count(c, "data", (uint32_t)g->n_tensors, 12, &n) < 0)
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t t;
		uint64_t cnt, numel;
		const unsigned char *p;
		float *f;

		if (u32(c, "a data tensor", &t) < 0 || u64(c, "a data count", &cnt) < 0)
			return -1;
		if (t >= (uint32_t)g->n_tensors || out[t] ||
		    g->tensors[t].kind == ENPU_TK_INTERMEDIATE)
			return bad(c, "data: entry %u is not an input or weight, or repeats", i);
		if (enpu_shape_numel(&g->tensors[t].shape, &numel) < 0 || cnt != numel)
			return bad(c, "data of '%s' has %llu floats, not its shape's count",
				   g->tensors[t].name, (unsigned long long)cnt);
		/* numel * 4 fits size_t: shape() checked it */
		if (take(c, (size_t)cnt * sizeof(float), "tensor data", &p) < 0)
			return -1;
		if (!(f = malloc(cnt ? (size_t)cnt * sizeof(float) : 1)))
			return enpu_fail(c->e, ENPU_E_NOMEM, c->label, NULL,
					 "cannot hold the data of '%s'", g->tensors[t].name);
		for (uint64_t k = 0; k < cnt; k++)
			f[k] = bnd_bitsf(bnd_get32(p + 4 * k));
		out[t] = f;
	}
	for (int t = 0; t < g->n_tensors; t++)
		want += g->tensors[t].kind != ENPU_TK_INTERMEDIATE;
	if (want != (int)n)
		return bad(c, "data: %u entries, the graph has %d inputs and weights", n, want);
	return 0;
}

static void bundle_free(bundle *b)
{
	if (b->data && b->g)
		for (int t = 0; t < b->g->n_tensors; t++)
			free(b->data[t]);
	free(b->data);
	enpu_plan_free(&b->plan);
	enpu_graph_free(b->g);
	memset(b, 0, sizeof(*b));
}

/* Parse len bytes into *b. 0, or -1 with *e (nothing left allocated). */
static int bundle_parse(const unsigned char *p, size_t len, const char *label, bundle *b,
			enpu_err *e)
{
	cursor c = {p, len, 0, label, e};
	const unsigned char *m;
	uint32_t version, flags;
	enpu_graph *g;

	memset(b, 0, sizeof(*b));
	if (take(&c, 8, "the magic", &m) < 0)
		return -1;
	if (memcmp(m, BND_MAGIC, 8) != 0)
		return enpu_fail(e, ENPU_E_ARTIFACT, label, FIX, "not a bundle (bad magic)");
	if (u32(&c, "the version", &version) < 0 || u32(&c, "the flags", &flags) < 0)
		return -1;
	if (version != BND_VERSION || flags != 0)
		return enpu_fail(e, ENPU_E_ARTIFACT, label, FIX,
				 "bundle version %u flags %u, this runner reads version %u flags 0",
				 version, flags, BND_VERSION);
	if (!(g = b->g = calloc(1, sizeof(*g))))
		return enpu_fail(e, ENPU_E_NOMEM, label, NULL, "cannot allocate the graph");
	if (str(&c, "the graph name", &g->name) < 0 || str(&c, "the backend", &g->backend) < 0 ||
	    tensors(&c, g) < 0 || index_list(&c, g, 0, &g->inputs, &g->n_inputs) < 0 ||
	    index_list(&c, g, 1, &g->outputs, &g->n_outputs) < 0 || ops(&c, g) < 0 ||
	    plan(&c, g, &b->plan) < 0)
		goto fail;
	if (!(b->data = calloc((size_t)(g->n_tensors ? g->n_tensors : 1), sizeof(float *)))) {
		enpu_fail(e, ENPU_E_NOMEM, label, NULL, "cannot allocate the tensor table");
		goto fail;
	}
	if (data(&c, g, b->data) < 0 || take(&c, 8, "the end marker", &m) < 0)
		goto fail;
	if (memcmp(m, BND_END, 8) != 0 || c.pos != len) {
		enpu_fail(e, ENPU_E_ARTIFACT, label, FIX,
			  "bundle does not end with its end marker at byte %zu", c.pos);
		goto fail;
	}
	return 0;
fail:
	bundle_free(b);
	return -1;
}

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

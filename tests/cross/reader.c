/* reader.c: the cross-ISA runner's bundle reader (reader.h). It checks a
 * bundle (bundle.h) field by field, rebuilds its graph through the op
 * table (every recorded output shape must be what the op's shape rule
 * gives), takes its plan and the data of inputs and weights. Anything
 * inconsistent is an E-ARTIFACT error that says where the reader had got
 * to; nothing damaged is ever run. Compute core only (libc, libm). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bundle.h"
#include "err.h"
#include "ir.h"
#include "ops.h"
#include "plan.h"
#include "reader.h"
#include "tensor.h"

_Static_assert(ENPU_MAX_DIMS == BND_DIMS, "bundle v1 fixes 8 dims");

#define FIX "write the bundle again on the host: bundle write ARTIFACT INPUT.npz OUT"

typedef struct cursor {
	const unsigned char *p;
	size_t len, pos;
	const char *label;
	enpu_err *e;
} cursor;


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
	    n > SIZE_MAX / sizeof(int64_t))
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
	if (u32(c, "n_split", &n) < 0)
		return -1;
	if (n > ENPU_MAX_SPLIT)
		return bad(c, "attribute 'split' has %u entries", n);
	a->split.n = (int)n;
	for (int i = 0; i < a->split.n; i++) {
		uint64_t v;
		if (u64(c, "split", &v) < 0)
			return -1;
		a->split.v[i] = (int64_t)v;
	}
	/* the shape rules check ranges; these flags they take as given */
	if ((unsigned)a->trans_a > 1 || (unsigned)a->trans_b > 1 ||
	    (unsigned)a->count_include_pad > 1 || (unsigned)a->approximate > 1)
		return bad(c, "a 0/1 attribute is out of range");
	return 0;
}

/* The op row's attributes by type, after the fixed block (bundle.h). */
static int row_attrs(cursor *c, const enpu_opdef *d, enpu_attrs *a)
{
	for (const enpu_attrdef *ad = d->attrs; ad->name; ad++) {
		char *base = (char *)a + ad->offset;
		int n = 0;

		switch (ad->type) {
		case ENPU_ATTR_FLOAT:
			if (f32(c, ad->name, (float *)base) < 0)
				return -1;
			break;
		case ENPU_ATTR_INT:
		case ENPU_ATTR_BOOL01:
		case ENPU_ATTR_ENUM:
			if (i32(c, ad->name, (int *)base) < 0)
				return -1;
			while (ad->type == ENPU_ATTR_ENUM && ad->choices && ad->choices[n])
				n++;
			if ((ad->type == ENPU_ATTR_BOOL01 && (unsigned)*(int *)base > 1) ||
			    (ad->type == ENPU_ATTR_ENUM && (unsigned)*(int *)base >= (unsigned)n))
				return bad(c, "attribute '%s' is out of range", ad->name);
			break;
		case ENPU_ATTR_INTS:
			for (int i = 0; i < ad->count; i++)
				if (i32(c, ad->name, (int *)base + i) < 0)
					return -1;
			break;
		case ENPU_ATTR_FLOATS:
			for (int i = 0; i < ad->count; i++)
				if (f32(c, ad->name, (float *)base + i) < 0)
					return -1;
			break;
		case ENPU_ATTR_LIST: {
			enpu_ilist *l = (enpu_ilist *)base;
			uint32_t k;

			if (u32(c, ad->name, &k) < 0)
				return -1;
			if (k > (uint32_t)ad->count || k > ENPU_MAX_LIST)
				return bad(c, "attribute '%s' has %u entries", ad->name, k);
			l->n = (int)k;
			for (int i = 0; i < l->n; i++) {
				uint64_t v;

				if (u64(c, ad->name, &v) < 0)
					return -1;
				l->v[i] = (int64_t)v;
			}
			break;
		}
		case ENPU_ATTR_DIMS:
		case ENPU_ATTR_PERM:
		case ENPU_ATTR_SIZES:
			break;   /* in the fixed block (attrs) */
		}
	}
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
		if ((dt != ENPU_DT_F32 && !(dt == ENPU_DT_I64 && kind == ENPU_TK_WEIGHT)) ||
		    kind > ENPU_TK_INTERMEDIATE || out > 1 || res) {
			bad(c, "tensor '%s' has an invalid dtype, kind or flag", t->name);
			goto out;
		}
		t->dtype = (enpu_dtype)dt;
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

/* Op k's operator (looked up in the op table) and its inputs, each a
 * tensor that exists by now; in_sh gets their shapes. */
static int op_inputs(cursor *c, const enpu_graph *g, enpu_irop *op, enpu_shape *in_sh)
{
	char *opname = NULL;
	uint32_t nin;
	int max_in;

	if (str(c, "an operator", &opname) < 0)
		return -1;
	op->def = enpu_op_by_name(opname);
	free(opname);
	if (!op->def)
		return bad(c, "op '%s' has an unknown operator", op->name);
	if (u32(c, "n_in", &nin) < 0)
		return -1;
	max_in = op->def->max_in < 0 ? ENPU_MAX_OP_INPUTS : op->def->max_in;
	if (nin < (uint32_t)op->def->min_in || nin > (uint32_t)max_in)
		return bad(c, "op '%s' has %u inputs, outside its operator's arity", op->name, nin);
	if (!(op->in = calloc(nin ? nin : 1, sizeof(int))))
		return enpu_fail(c->e, ENPU_E_NOMEM, c->label, NULL, "cannot read op '%s'", op->name);
	op->n_in = (int)nin;
	for (uint32_t j = 0; j < nin; j++) {
		uint32_t t;
		if (u32(c, "an op input", &t) < 0)
			return -1;
		if (t >= (uint32_t)g->n_tensors ||
		    (g->tensors[t].kind == ENPU_TK_INTERMEDIATE && g->tensors[t].producer < 0))
			return bad(c, "op '%s' reads tensor %u, unknown or not yet produced",
				   op->name, t);
		op->in[j] = (int)t;
		in_sh[j] = g->tensors[t].shape;
	}
	return 0;
}

/* Op k's output (an intermediate not produced yet) and attributes; the
 * shape rule must give back exactly the recorded output shape. Then op k
 * is the output's producer and the last user of its inputs so far. */
static int op_output(cursor *c, enpu_graph *g, enpu_irop *op, int k, const enpu_shape *in_sh)
{
	enpu_shape out_sh[ENPU_MAX_OP_OUTPUTS];
	char why[256];
	uint32_t o, nout;

	if (u32(c, "n_out", &nout) < 0)
		return -1;
	if (nout < 1 || nout > ENPU_MAX_OP_OUTPUTS ||
	    (op->def->n_out >= 0 && nout != (uint32_t)op->def->n_out))
		return bad(c, "op '%s' has %u outputs, outside its operator's", op->name, nout);
	if (!(op->out = calloc(nout, sizeof(int))))
		return enpu_fail(c->e, ENPU_E_NOMEM, c->label, NULL, "cannot read op '%s'", op->name);
	for (uint32_t j = 0; j < nout; j++) {
		if (u32(c, "an op output", &o) < 0)
			return -1;
		if (o >= (uint32_t)g->n_tensors || g->tensors[o].kind != ENPU_TK_INTERMEDIATE ||
		    g->tensors[o].producer >= 0)
			return bad(c, "op '%s' writes tensor %u: not an intermediate, or produced twice",
				   op->name, o);
		op->out[j] = (int)o;
		op->n_out = (int)j + 1;
		g->tensors[o].producer = k;
	}
	for (int j = 0; j < op->n_in; j++)
		if ((g->tensors[op->in[j]].dtype == ENPU_DT_I64) !=
		    (j < 32 && (op->def->int64_in >> j & 1)))
			return bad(c, "op '%s' reads a tensor of the wrong dtype", op->name);
	if (attrs(c, &op->attrs) < 0 || row_attrs(c, op->def, &op->attrs) < 0)
		return -1;
	why[0] = '\0';
	if (op->def->shape(&op->attrs, in_sh, op->n_in, out_sh, op->n_out, why, sizeof(why)) < 0)
		return enpu_fail(c->e, ENPU_E_ARTIFACT, c->label, FIX,
				 "op '%s': shape rule of '%s' fails: %s", op->name, op->def->name, why);
	for (int j = 0; j < op->n_out; j++)
		if (!enpu_shape_eq(&out_sh[j], &g->tensors[op->out[j]].shape))
			return bad(c, "op '%s': the recorded output shape is not the shape rule's",
				   op->name);
	for (int j = 0; j < op->n_in; j++)
		g->tensors[op->in[j]].last_use = k;
	return 0;
}

/* The ops, in schedule order: every intermediate produced exactly once,
 * op names unique. */
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
		enpu_shape in_sh[ENPU_MAX_OP_INPUTS];

		if (str(c, "an op name", &op->name) < 0)
			goto out;
		g->n_ops = (int)k + 1;
		names[k] = &op->name;
		if (op_inputs(c, g, op, in_sh) < 0 || op_output(c, g, op, (int)k, in_sh) < 0)
			goto out;
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
	    count(c, "buffers", (uint32_t)(g->n_tensors + g->n_ops), 28, &n) < 0)
		return -1;
	p->n_tensors = g->n_tensors;
	p->n_ops = g->n_ops;
	p->tensor_buf = malloc(sizeof(int) * (size_t)(g->n_tensors ? g->n_tensors : 1));
	p->op_scratch = malloc(sizeof(int) * (size_t)(g->n_ops ? g->n_ops : 1));
	p->bufs = calloc(n ? n : 1, sizeof(*p->bufs));
	if (!p->tensor_buf || !p->op_scratch || !p->bufs)
		return enpu_fail(c->e, ENPU_E_NOMEM, c->label, NULL, "cannot read the plan");
	for (int i = 0; i < g->n_tensors; i++)
		p->tensor_buf[i] = -1;
	for (int i = 0; i < g->n_ops; i++)
		p->op_scratch[i] = -1;
	for (uint32_t k = 0; k < n; k++) {
		enpu_plan_buf *b = &p->bufs[k];
		uint32_t t, f, l;
		if (u32(c, "a buffer's tensor", &t) < 0 || u64(c, "offset", &b->offset) < 0 ||
		    u64(c, "bytes", &b->bytes) < 0 || u32(c, "first_op", &f) < 0 ||
		    u32(c, "last_op", &l) < 0)
			return -1;
		if (f >= (uint32_t)g->n_ops || l >= (uint32_t)g->n_ops)
			return bad(c, "plan: buffer %u names an op out of range", k);
		b->first_op = (int)f;
		b->last_op = (int)l;
		if (t == BND_SCRATCH) {   /* op f's scratch */
			if (p->op_scratch[f] >= 0)
				return bad(c, "plan: buffer %u repeats an op's scratch", k);
			b->tensor = -1;
			p->op_scratch[f] = (int)k;
		} else {
			if (t >= (uint32_t)g->n_tensors || p->tensor_buf[t] >= 0)
				return bad(c, "plan: buffer %u is out of range or repeats a tensor", k);
			b->tensor = (int)t;
			p->tensor_buf[t] = (int)k;
		}
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
		size_t es;
		float *f;

		if (u32(c, "a data tensor", &t) < 0 || u64(c, "a data count", &cnt) < 0)
			return -1;
		if (t >= (uint32_t)g->n_tensors || out[t] ||
		    g->tensors[t].kind == ENPU_TK_INTERMEDIATE)
			return bad(c, "data: entry %u is not an input or weight, or repeats", i);
		if (enpu_shape_numel(&g->tensors[t].shape, &numel) < 0 || cnt != numel)
			return bad(c, "data of '%s' has %llu floats, not its shape's count",
				   g->tensors[t].name, (unsigned long long)cnt);
		es = g->tensors[t].dtype == ENPU_DT_I64 ? 8 : 4;
		/* numel * 8 fits size_t: shape() checked it */
		if (take(c, (size_t)cnt * es, "tensor data", &p) < 0)
			return -1;
		if (!(f = malloc(cnt ? (size_t)cnt * es : 1)))
			return enpu_fail(c->e, ENPU_E_NOMEM, c->label, NULL,
					 "cannot hold the data of '%s'", g->tensors[t].name);
		for (uint64_t k = 0; k < cnt; k++)
			if (es == 8)
				((int64_t *)(void *)f)[k] = (int64_t)bnd_get64(p + 8 * k);
			else
				f[k] = bnd_bitsf(bnd_get32(p + 4 * k));
		out[t] = f;
	}
	for (int t = 0; t < g->n_tensors; t++)
		want += g->tensors[t].kind != ENPU_TK_INTERMEDIATE;
	if (want != (int)n)
		return bad(c, "data: %u entries, the graph has %d inputs and weights", n, want);
	return 0;
}

void bundle_free(bundle *b)
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
int bundle_parse(const unsigned char *p, size_t len, const char *label, bundle *b, enpu_err *e)
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

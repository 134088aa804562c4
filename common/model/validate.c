/* validate.c: a parsed spec into a validated enpu_graph for one backend.
 * Ops are checked in the order written (that order is the schedule):
 * names, the op and its attributes (through the op table), references,
 * shape inference, then the backend's capability. The first error wins. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "spec_int.h"
#include "target.h"
#include "backend.h"

/* What a name in the one namespace (tensors, ops, components) belongs to. */
enum { R_INPUT, R_WEIGHT, R_COMP, R_OP, R_OUT };

typedef struct namerec {
	int kind;
	int ref;          /* R_OP/R_OUT: op index; R_COMP: component index */
	int tensor;       /* graph tensor index, -1 for ops and components */
	int line, col;
} namerec;

typedef struct vctx {
	const enpu_spec *s;
	enpu_err *e;
	enpu_graph *g;
	const enpu_target *t;
	int bk;
	json_object *names;      /* name -> index into recs */
	namerec *recs;
	int n_recs;
	json_object *producers;  /* op output name -> first producing op (for CYCLE) */
} vctx;

#define MISSING_ATTR "missing required attribute"

/* The three-line error at line:col (spec_int.h's enpu_spec_fail). */
#define vfail(c, ...) enpu_spec_fail((c)->s, (c)->e, __VA_ARGS__)

static int nomem(vctx *c)
{
	return enpu_fail(c->e, ENPU_E_NOMEM, c->s->label, NULL, "out of memory validating the spec");
}

static int valid_name(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '.' || *s == '-'))
			return 0;
	return 1;
}

static void backend_list(char *buf, size_t cap, unsigned mask)
{
	size_t off = 0;

	buf[0] = 0;
	for (int i = 0; i < enpu_backend_count() && off < cap; i++)
		if (mask & (1u << i))
			off += (size_t)snprintf(buf + off, cap - off, "%s%s", off ? ", " : "",
						enpu_backend_name(i));
	if (!buf[0])
		snprintf(buf, cap, "none");
}

static void describe(vctx *c, const namerec *r, char *buf, size_t cap)
{
	const enpu_spec *s = c->s;
	char at[600];

	enpu_spec_where(s, r->line, r->col, at, sizeof(at));
	switch (r->kind) {
	case R_INPUT:
		snprintf(buf, cap, "input at %s", at);
		break;
	case R_WEIGHT:
		snprintf(buf, cap, "weight at %s", at);
		break;
	case R_COMP:
		snprintf(buf, cap, "component at %s", at);
		break;
	case R_OP:
		snprintf(buf, cap, "op at %s", at);
		break;
	default:
		snprintf(buf, cap, "output of op '%.64s' at %s", s->ops[r->ref].name.s, at);
		break;
	}
}

/* Enter a name into the one namespace; invalid or duplicate names fail. */
static int add_name(vctx *c, const enpu_sstr *n, int kind, int ref, int tensor,
		    const char *what)
{
	json_object *v;
	namerec *r;

	if (!valid_name(n->s))
		return vfail(c, n->line, n->col, ENPU_E_NAME, "use letters, digits, '_', '.' and '-'",
			     "%s name '%.64s' is not a valid name", what, n->s);
	if (json_object_object_get_ex(c->names, n->s, &v)) {
		char prev[700];

		describe(c, &c->recs[json_object_get_int(v)], prev, sizeof(prev));
		return vfail(c, n->line, n->col, ENPU_E_NAME,
			     "names are shared by tensors, ops and components: rename one",
			     "duplicate name '%.64s' (%s): already used by the %s", n->s, what, prev);
	}
	r = &c->recs[c->n_recs];
	r->kind = kind;
	r->ref = ref;
	r->tensor = tensor;
	r->line = n->line;
	r->col = n->col;
	if (!(v = json_object_new_int(c->n_recs)) || json_object_object_add(c->names, n->s, v)) {
		json_object_put(v);
		return nomem(c);
	}
	c->n_recs++;
	return 0;
}

static int add_tensor(vctx *c, const enpu_sstr *n, enpu_dtype dt, const enpu_shape *sh,
		      enpu_tkind kind, int producer)
{
	enpu_graph *g = c->g;
	enpu_irtensor *t = &g->tensors[g->n_tensors];

	if (!(t->name = strdup(n->s)))
		return nomem(c);
	g->n_tensors++;
	t->dtype = dt;
	t->shape = *sh;
	t->kind = kind;
	t->producer = producer;
	t->last_use = -1;
	t->line = n->line;
	t->col = n->col;
	return 0;
}

/* The closest tensor name defined so far, for "did you mean". */
static const char *closest_tensor(vctx *c, const char *w)
{
	const char *best = NULL;
	int bd = 3;

	for (int i = 0; i < c->g->n_tensors; i++) {
		const char *cand = c->g->tensors[i].name;
		int d = enpu_edit_distance(w, cand, 2);

		if (d < bd && d < (int)strlen(cand)) {
			bd = d;
			best = cand;
		}
	}
	return best;
}

static const char *closest_op(const char *w)
{
	const char *best = NULL;
	int bd = 3;

	for (int i = 0; i < ENPU_OP_COUNT; i++) {
		const char *cand = enpu_op_by_id((enpu_opid)i)->name;
		int d = enpu_edit_distance(w, cand, 2);

		if (d < bd) {
			bd = d;
			best = cand;
		}
	}
	return best;
}

/* ---- ops -------------------------------------------------------------- */

static int resolve_input(vctx *c, int i, const enpu_sstr *in, int *tensor)
{
	const enpu_sop *op = &c->s->ops[i];
	json_object *v;

	if (json_object_object_get_ex(c->names, in->s, &v)) {
		const namerec *r = &c->recs[json_object_get_int(v)];

		if (r->tensor >= 0) {
			*tensor = r->tensor;
			return 0;
		}
		return vfail(c, in->line, in->col, ENPU_E_REF, NULL,
			     "op '%.64s' reads '%.64s', which is %s, not a tensor", op->name.s, in->s,
			     r->kind == R_OP ? "an op" : "a component");
	}
	if (json_object_object_get_ex(c->producers, in->s, &v)) {
		int p = json_object_get_int(v);

		if (p == i)
			return vfail(c, in->line, in->col, ENPU_E_CYCLE, NULL,
				     "op '%.64s' reads '%.64s', which it produces itself", op->name.s, in->s);
		return vfail(c, in->line, in->col, ENPU_E_CYCLE,
			     "move the producing op before its readers",
			     "op '%.64s' reads '%.64s' which is produced later by op '%.64s' (ops run in the order written)",
			     op->name.s, in->s, c->s->ops[p].name.s);
	}
	{
		const char *near = closest_tensor(c, in->s);

		return vfail(c, in->line, in->col, ENPU_E_REF,
			     "read a graph input, a weight, or the output of an earlier op",
			     "op '%.64s' reads unknown tensor '%.64s'%s%s%s", op->name.s, in->s,
			     near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
	}
}

/* The capability matrix in the fix: which backends lower the op type, or
 * the backend's own reason when its options exclude the op. */
static int lowering_missing(vctx *c, const enpu_sop *op, const enpu_opdef *d)
{
	const enpu_backend_def *def = enpu_target_def(c->t);
	const char *bk = def->name;
	char fix[sizeof(c->e->fix)], list[128];
	unsigned lowering = enpu_backends_lowering(d);

	backend_list(list, sizeof(list), lowering);
	if ((lowering & (1u << c->bk)) && def->lowers_fix)
		def->lowers_fix(enpu_target_options(c->t), d, list, fix, sizeof(fix));
	else
		snprintf(fix, sizeof(fix),
			 "op type '%s' is lowered by: %s; compile for one of those or replace the op",
			 d->name, list);
	return vfail(c, op->line, op->col, ENPU_E_LOWERING, fix,
		     "backend lowering missing for op '%.64s' (%s) on backend '%s'",
		     op->name.s, d->name, bk);
}

/* The op's inputs and outputs are as many as its row of the op table says. */
static int check_arity(vctx *c, const enpu_sop *op, const enpu_opdef *d)
{
	if (op->n_in < d->min_in || (d->max_in >= 0 && op->n_in > d->max_in)) {
		if (d->min_in == d->max_in)
			return vfail(c, op->line, op->col, ENPU_E_SCHEMA, NULL,
				     "op '%.64s' (%s) takes %d input%s, 'in' names %d", op->name.s,
				     d->name, d->min_in, d->min_in == 1 ? "" : "s", op->n_in);
		if (d->max_in < 0)
			return vfail(c, op->line, op->col, ENPU_E_SCHEMA, NULL,
				     "op '%.64s' (%s) takes at least %d input%s, 'in' names %d",
				     op->name.s, d->name, d->min_in, d->min_in == 1 ? "" : "s", op->n_in);
		return vfail(c, op->line, op->col, ENPU_E_SCHEMA, NULL,
			     "op '%.64s' (%s) takes %d to %d inputs, 'in' names %d", op->name.s,
			     d->name, d->min_in, d->max_in, op->n_in);
	}
	if (op->n_in > ENPU_MAX_OP_INPUTS)
		return vfail(c, op->line, op->col, ENPU_E_LIMIT, NULL,
			     "op '%.64s' has %d inputs (at most %d)", op->name.s, op->n_in,
			     ENPU_MAX_OP_INPUTS);
	if (d->n_out >= 0 && op->n_out != d->n_out)
		return vfail(c, op->out[0].line, op->out[0].col, ENPU_E_SCHEMA, NULL,
			     "op '%.64s' (%s) produces %d output%s, 'out' names %d", op->name.s,
			     d->name, d->n_out, d->n_out == 1 ? "" : "s", op->n_out);
	if (op->n_out > ENPU_MAX_OP_OUTPUTS)
		return vfail(c, op->out[0].line, op->out[0].col, ENPU_E_LIMIT, NULL,
			     "op '%.64s' has %d outputs (at most %d)", op->name.s, op->n_out,
			     ENPU_MAX_OP_OUTPUTS);
	return 0;
}

/* The op's output shapes from its input shapes (its shape rule), each
 * within max_tensor_elems. */
static int infer_output(vctx *c, const enpu_sop *op, const enpu_opdef *d, enpu_attrs *attrs,
			const enpu_shape *shapes, enpu_shape *oshape)
{
	char why[512], sbuf[200];
	uint64_t numel;

	why[0] = 0;
	memset(oshape, 0, sizeof(*oshape) * (size_t)op->n_out);
	if (d->shape(attrs, shapes, op->n_in, oshape, op->n_out, why, sizeof(why))) {
		int line, col;

		if (strncmp(why, MISSING_ATTR, strlen(MISSING_ATTR)) == 0)
			return vfail(c, op->line, op->col, ENPU_E_ATTR, NULL,
				     "op '%.64s' (%s): %s", op->name.s, d->name, why);
		if (enpu_attr_where(op, why, &line, &col))
			return vfail(c, line, col, ENPU_E_ATTR, NULL, "op '%.64s' (%s): %s",
				     op->name.s, d->name, why);
		return vfail(c, op->line, op->col, ENPU_E_SHAPE, NULL, "op '%.64s': %s",
			     op->name.s, why[0] ? why : "shape inference failed");
	}
	for (int k = 0; k < op->n_out; k++)
		if (enpu_shape_numel(&oshape[k], &numel) || numel > c->s->lim.max_tensor_elems)
			return vfail(c, op->out[k].line, op->out[k].col, ENPU_E_LIMIT,
				     "make the tensor smaller or raise max_tensor_elems",
				     "output '%.64s' of op '%.64s' has shape %s, more than %llu elements",
				     op->out[k].s, op->name.s,
				     enpu_shape_str(&oshape[k], sbuf, sizeof(sbuf)),
				     (unsigned long long)c->s->lim.max_tensor_elems);
	return 0;
}

static int check_op(vctx *c, int i)
{
	const enpu_sop *op = &c->s->ops[i];
	enpu_graph *g = c->g;
	enpu_irop *io = &g->ops[i];
	const enpu_opdef *d;
	enpu_shape shapes[ENPU_MAX_OP_INPUTS], oshape[ENPU_MAX_OP_OUTPUTS];
	enpu_dtype odt = ENPU_DT_F32;

	g->n_ops = i + 1;
	io->line = op->line;
	io->col = op->col;
	io->component = op->component;
	if (!(io->name = strdup(op->name.s)))
		return nomem(c);
	if (add_name(c, &op->name, R_OP, i, -1, "op"))
		return -1;
	if (!(d = enpu_op_by_name(op->op.s))) {
		const char *near = closest_op(op->op.s);

		return vfail(c, op->op.line, op->op.col, ENPU_E_OP,
			     "see docs/spec-format.md for the ops of spec v1 and v2",
			     "unknown op '%.64s'%s%s%s", op->op.s, near ? "; did you mean '" : "",
			     near ? near : "", near ? "'?" : "");
	}
	if (d->since > c->s->version)
		return vfail(c, op->op.line, op->op.col, ENPU_E_OP,
			     d->since == 2 ? "write 'eulernpu: 2' at the top of the spec" :
			     "write 'eulernpu: 3' at the top of the spec",
			     "op '%s' needs eulernpu: %d (this spec is eulernpu: %d)",
			     d->name, d->since, c->s->version);
	io->def = d;
	if (check_arity(c, op, d) || enpu_parse_op_attrs(c->s, op, d, &io->attrs, c->e))
		return -1;
	if (op->n_in && !(io->in = calloc((size_t)op->n_in, sizeof(int))))
		return nomem(c);
	io->n_in = op->n_in;
	for (int k = 0; k < op->n_in; k++) {
		if (resolve_input(c, i, &op->in[k], &io->in[k]) ||
		    enpu_check_input_dtype(c->s, op, d, k, &g->tensors[io->in[k]], c->e))
			return -1;
		shapes[k] = g->tensors[io->in[k]].shape;
	}
	if (enpu_check_op_types(c->s, op, d, g, io->in, &odt, c->e))
		return -1;
	if (infer_output(c, op, d, &io->attrs, shapes, oshape))
		return -1;
	if (d->id == ENPU_OP_GLOBAL_AVGPOOL && c->s->version < 2 && shapes[0].ndim != 4)
		return vfail(c, op->line, op->col, ENPU_E_SHAPE, "write 'eulernpu: 2' at the top of the spec",
			     "op '%.64s': x must be 4-D (N, C, H, W) in eulernpu: 1 (other ranks need eulernpu: 2)",
			     op->name.s);
	/* reads are recorded only now that the op is known to be valid */
	for (int k = 0; k < op->n_in; k++)
		g->tensors[io->in[k]].last_use = i;
	if (!(io->out = calloc((size_t)op->n_out, sizeof(int))))
		return nomem(c);
	for (int k = 0; k < op->n_out; k++) {
		io->out[k] = g->n_tensors;
		io->n_out = k + 1;
		if (add_name(c, &op->out[k], R_OUT, i, g->n_tensors, "output") ||
		    add_tensor(c, &op->out[k], odt, &oshape[k], ENPU_TK_INTERMEDIATE, i))
			return -1;
	}
	if (!enpu_target_lowers(c->t, d))
		return lowering_missing(c, op, d);
	return 0;
}

/* ---- the whole spec --------------------------------------------------- */

static int pick_backend(vctx *c)
{
	const char *backend = enpu_target_backend(c->t);
	const enpu_spec *s = c->s;
	unsigned any = 0, all = (1u << enpu_backend_count()) - 1;
	char list[128];

	backend_list(list, sizeof(list), all);
	/* the spec's own backend must be a known name even when overridden */
	if (s->backend.s && enpu_backend_parse(s->backend.s) < 0)
		return vfail(c, s->backend.line, s->backend.col, ENPU_E_BACKEND, NULL,
			     "unknown backend '%.64s' (known: %s)", s->backend.s, list);
	c->bk = enpu_backend_parse(backend);
	if (c->bk < 0)
		return enpu_fail(c->e, ENPU_E_BACKEND, s->label, NULL,
				 "unknown backend '%.64s' (known: %s)", backend, list);
	for (int i = 0; i < ENPU_OP_COUNT; i++)
		any |= enpu_backends_lowering(enpu_op_by_id((enpu_opid)i));
	if (!(any & (1u << c->bk))) {
		char fix[200];

		backend_list(list, sizeof(list), any);
		snprintf(fix, sizeof(fix), "use a backend this build has: %s", list);
		if (!s->backend.s || strcmp(s->backend.s, backend) != 0)
			return enpu_fail(c->e, ENPU_E_BACKEND, s->label, fix,
					 "backend '%s' is not available in this build", backend);
		return vfail(c, s->backend.line, s->backend.col, ENPU_E_BACKEND, fix,
			     "backend '%s' is not available in this build", backend);
	}
	return 0;
}

static int check_outputs(vctx *c)
{
	const enpu_spec *s = c->s;
	enpu_graph *g = c->g;
	json_object *seen, *v;
	int r = -1;

	if (!(seen = json_object_new_object()))
		return nomem(c);
	for (int i = 0; i < s->n_outputs; i++) {
		const enpu_sstr *o = &s->outputs[i];
		const namerec *rec = NULL;

		if (json_object_object_get_ex(seen, o->s, NULL)) {
			vfail(c, o->line, o->col, ENPU_E_OUTPUT, "list each output once",
			      "output '%.64s' is listed twice", o->s);
			goto out;
		}
		if (json_object_object_add(seen, o->s, NULL)) {
			nomem(c);
			goto out;
		}
		if (json_object_object_get_ex(c->names, o->s, &v))
			rec = &c->recs[json_object_get_int(v)];
		if (!rec) {
			const char *near = closest_tensor(c, o->s);

			vfail(c, o->line, o->col, ENPU_E_OUTPUT,
			      "name an op's output (or a graph input) in 'outputs'",
			      "output '%.64s' is never produced%s%s%s", o->s,
			      near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
			goto out;
		}
		if (rec->tensor < 0 || rec->kind == R_WEIGHT) {
			vfail(c, o->line, o->col, ENPU_E_OUTPUT,
			      "name an op's output (or a graph input) in 'outputs'",
			      "output '%.64s' is %s, not a tensor that the graph produces", o->s,
			      rec->kind == R_WEIGHT ? "a weight" : rec->kind == R_OP ? "an op" : "a component");
			goto out;
		}
		g->outputs[i] = rec->tensor;
		g->tensors[rec->tensor].is_output = 1;
	}
	g->n_outputs = s->n_outputs;
	r = 0;
out:
	json_object_put(seen);
	return r;
}

/* The spec's settings of the other backends are checked too, so that a
 * bad targets.npu_sim is found by validating for cpu_ref as well. */
static int check_other_targets(vctx *c)
{
	const enpu_ynode *m = c->s->targets_node;

	if (!m || m->kind != ENPU_YN_MAP)
		return 0;
	for (size_t i = 0; i < m->n; i++) {
		const enpu_ynode *k = m->kids[2 * i];
		enpu_target *t = NULL;

		if (k->kind != ENPU_YN_SCALAR || strcmp(k->text, enpu_target_backend(c->t)) == 0)
			continue;
		if (enpu_target_resolve(c->s, k->text, NULL, NULL, &c->s->lim, &t, c->e) < 0)
			return -1;
		enpu_target_free(t);
	}
	return 0;
}

int enpu_validate(const enpu_spec *s, const char *backend, enpu_graph **out, enpu_err *e)
{
	enpu_target *t = NULL;
	int r;

	*out = NULL;
	if (enpu_target_resolve(s, backend, NULL, NULL, &s->lim, &t, e) < 0)
		return -1;
	r = enpu_validate_for(s, t, out, e);
	enpu_target_free(t);
	return r;
}

/* The spec's inputs and weights: the graph's first tensors. */
static int add_inputs(vctx *c)
{
	const enpu_spec *s = c->s;
	enpu_graph *g = c->g;

	for (int i = 0; i < s->n_inputs; i++) {
		const enpu_stensor *t = &s->inputs[i];

		g->inputs[i] = g->n_tensors;
		if (add_name(c, &t->name, R_INPUT, i, g->n_tensors, "input") ||
		    add_tensor(c, &t->name, t->dtype, &t->shape, ENPU_TK_INPUT, -1))
			return -1;
		g->n_inputs++;
	}
	for (int i = 0; i < s->n_weights; i++) {
		const enpu_stensor *t = &s->weights[i];

		if (add_name(c, &t->name, R_WEIGHT, i, g->n_tensors, "weight") ||
		    add_tensor(c, &t->name, t->dtype, &t->shape, ENPU_TK_WEIGHT, -1))
			return -1;
	}
	return 0;
}

/* Who produces what, so that reading a later op's output is told apart
 * from reading an unknown name. */
static int map_producers(vctx *c)
{
	const enpu_spec *s = c->s;

	for (int i = s->n_ops - 1; i >= 0; i--) {
		for (int k = 0; k < s->ops[i].n_out; k++) {
			json_object *v = json_object_new_int(i);

			if (!v || json_object_object_add(c->producers, s->ops[i].out[k].s, v)) {
				json_object_put(v);
				return nomem(c);
			}
		}
	}
	return 0;
}

int enpu_validate_for(const enpu_spec *s, const enpu_target *tgt, enpu_graph **out, enpu_err *e)
{
	vctx c;
	enpu_graph *g;
	size_t n_names, n_tensors;
	int r = -1;

	*out = NULL;
	memset(&c, 0, sizeof(c));
	c.s = s;
	c.e = e;
	c.t = tgt;
	if (pick_backend(&c) || check_other_targets(&c))
		return -1;
	n_tensors = (size_t)s->n_inputs + (size_t)s->n_weights;
	for (int i = 0; i < s->n_ops; i++)
		n_tensors += (size_t)s->ops[i].n_out;
	n_names = n_tensors + (size_t)s->n_ops + (size_t)s->n_comps;
	g = c.g = calloc(1, sizeof(*g));
	if (!g)
		return nomem(&c);
	g->tensors = calloc(n_tensors ? n_tensors : 1, sizeof(*g->tensors));
	g->ops = calloc(s->n_ops ? (size_t)s->n_ops : 1, sizeof(*g->ops));
	g->inputs = calloc(s->n_inputs ? (size_t)s->n_inputs : 1, sizeof(int));
	g->outputs = calloc(s->n_outputs ? (size_t)s->n_outputs : 1, sizeof(int));
	g->components = calloc(s->n_comps ? (size_t)s->n_comps : 1, sizeof(char *));
	c.recs = calloc(n_names ? n_names : 1, sizeof(*c.recs));
	c.names = json_object_new_object();
	c.producers = json_object_new_object();
	g->name = strdup(s->name.s);
	g->backend = strdup(enpu_backend_name(c.bk));
	if (!g->tensors || !g->ops || !g->inputs || !g->outputs || !g->components || !c.recs ||
	    !c.names || !c.producers || !g->name || !g->backend) {
		nomem(&c);
		goto out;
	}
	if (add_inputs(&c) || map_producers(&c))
		goto out;
	for (int ci = 0; ci < s->n_comps; ci++) {
		const enpu_scomp *cp = &s->comps[ci];

		if (!(g->components[ci] = strdup(cp->name.s))) {
			nomem(&c);
			goto out;
		}
		g->n_components++;
		if (add_name(&c, &cp->name, R_COMP, ci, -1, "component"))
			goto out;
		for (int k = cp->first_op; k < cp->first_op + cp->n_ops; k++)
			if (check_op(&c, k))
				goto out;
	}
	if (check_outputs(&c))
		goto out;
	*out = g;
	g = NULL;
	r = 0;
out:
	json_object_put(c.names);
	json_object_put(c.producers);
	free(c.recs);
	enpu_graph_free(g);
	return r;
}

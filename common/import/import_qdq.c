/* import_qdq.c: QDQ models (docs/import.md, "Quantised models"). A model
 * that ONNX Runtime's or PyTorch's quantisers write keeps float ops with
 * DequantizeLinear (DQ) before their inputs and QuantizeLinear (Q) after
 * their output. Before the walk, imp_qdq_plan finds the float ops whose
 * every data input is a DQ and whose output goes to one Q only (through a
 * Relu or Clip for Conv, MatMul, Gemm and Add), and plans each as the
 * QOperator node ONNX Runtime would write (QLinearConv, QLinearMatMul,
 * com.microsoft QLinearAdd, QLinearMul, QLinearGlobalAveragePool,
 * QLinearAveragePool, QLinearConcat; MaxPool, Reshape, Flatten and
 * Transpose of equal scale and zero point on the integers themselves),
 * mapped through the table like one read from the model. The DQ and Q
 * nodes the plan absorbs are skipped; every other node, and a float op
 * whose pattern does not hold, imports as it is (dequantize_linear, the
 * float op, quantize_linear: always correct). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "import_int.h"
#include "kernels.h"
#include "shape.h"

/* the graph's uses of value names: node inputs and graph outputs */
typedef struct qgraph {
	imp_smap prod;   /* output name -> node index */
	imp_smap uses;   /* name -> uses */
	imp_smap user;   /* name -> the first node reading it */
} qgraph;

static int uses(const qgraph *g, const char *name)
{
	int u = imp_smap_get(&g->uses, name);

	return u < 0 ? 0 : u;
}

/* the node producing name, or NULL */
static const enpu_onnx_node *producer(const imp_ctx *c, const qgraph *g, const char *name, int *k)
{
	int p = name[0] ? imp_smap_get(&g->prod, name) : -1;

	if (k)
		*k = p;
	return p < 0 ? NULL : &c->m->node[p];
}

/* the one node reading name (a graph output reads it too: none) */
static const enpu_onnx_node *sole_user(const imp_ctx *c, const qgraph *g, const char *name, int *k)
{
	if (uses(g, name) != 1)
		return NULL;
	*k = imp_smap_get(&g->user, name);
	return *k < 0 ? NULL : &c->m->node[*k];   /* -1: the one use is a graph output */
}

static const imp_val *cval(imp_ctx *c, const char *name)
{
	int i = name[0] ? imp_find(c, name) : -1;

	return i >= 0 && c->v[i].kind == IV_CONST ? &c->v[i] : NULL;
}

/* a Q or DQ node's scale and zero point: constants, the zero point given,
 * int8 or uint8 (int32 for a DQ of a bias); per tensor unless per > 0
 * (then also 1-D [per] along axis want_axis) */
static int qparams_ok(imp_ctx *c, const enpu_onnx_node *n, int64_t per, int want_axis)
{
	const imp_val *s, *z;
	int x, r;
	int64_t ax;

	if (n->n_in < 3 || !(s = cval(c, n->in[1])) || !(z = cval(c, n->in[2])) || !s->f || !z->i ||
	    !z->sdt || s->numel != z->numel)
		return 0;
	if (s->numel == 1)
		return 1;
	if (per <= 0 || s->shape.ndim != 1 || (int64_t)s->numel != per)
		return 0;
	if ((x = imp_find(c, n->in[0])) < 0)
		return 0;
	r = c->v[x].shape.ndim;
	ax = oa_int(n, "axis", 1);
	return (ax < 0 ? ax + r : ax) == want_axis;
}

/* input name of anchor n is a DQ (per tensor, or per `per` along axis) */
static const enpu_onnx_node *dq_of(imp_ctx *c, const qgraph *g, const char *name, int64_t per,
				   int axis)
{
	const enpu_onnx_node *d = producer(c, g, name, NULL);

	/* (its x is a graph input, a constant, or a node's output that the
	 * walk defines before the anchor) */
	if (!d || strcmp(d->op_type, "DequantizeLinear") || d->domain[0] ||
	    !qparams_ok(c, d, per, axis))
		return NULL;
	return d;
}

/* the Q after name (through nothing), per tensor */
static const enpu_onnx_node *q_after(imp_ctx *c, const qgraph *g, const char *name, int *k)
{
	const enpu_onnx_node *q = sole_user(c, g, name, k);

	if (!q || strcmp(q->op_type, "QuantizeLinear") || q->domain[0] || !qparams_ok(c, q, 0, 0) ||
	    !q->n_out || !q->out[0][0])
		return NULL;
	return q;
}

static int same_qparams(imp_ctx *c, const enpu_onnx_node *a, const enpu_onnx_node *b)
{
	const imp_val *sa = cval(c, a->in[1]), *za = cval(c, a->in[2]);
	const imp_val *sb = cval(c, b->in[1]), *zb = cval(c, b->in[2]);

	return sa->f[0] == sb->f[0] && za->i[0] == zb->i[0] && za->sdt == zb->sdt;
}

/* ---- the plan ------------------------------------------------------------- */

static void plan_free1(imp_qdq *p)
{
	free(p->in);
	free(p->tmp);
	p->in = NULL;
	p->tmp = NULL;
}

void imp_qdq_free(imp_ctx *c)
{
	for (size_t k = 0; c->qdq && k < c->m->n_node; k++)
		plan_free1(&c->qdq[k]);
	free(c->qdq);
	c->qdq = NULL;
}

static int add_in(imp_qdq *p, const char *name)
{
	p->in[p->n_in++] = name;
	return 0;
}

/* a float scalar that is an initializer or a Constant node's (a Clip
 * bound): 0, or -1 */
static int const_scalar(imp_ctx *c, const qgraph *g, const char *name, float *f)
{
	const imp_val *v = cval(c, name);
	const enpu_onnx_node *k = producer(c, g, name, NULL);
	const enpu_onnx_attr *t;

	if (v && v->f && v->numel == 1) {
		*f = v->f[0];
		return 0;
	}
	if (!k || strcmp(k->op_type, "Constant") || k->domain[0] ||
	    !(t = enpu_onnx_attr_find(k, "value")) || t->type != ENPU_ONNX_A_TENSOR || !t->t ||
	    !t->t->f || t->t->numel != 1)
		return -1;
	*f = t->t->f[0];
	return 0;
}

/* the Relu or Clip between anchor output `name` and its Q: the integer
 * bounds it folds into (qlo, qhi), 0 when there is none, -1 when it does
 * not fold */
static int activation(imp_ctx *c, const qgraph *g, const char *name, const enpu_onnx_node **q,
		      int *qk, int *ak, imp_qdq *p)
{
	const enpu_onnx_node *a = sole_user(c, g, name, ak);
	float lo = 0.0f, hi = INFINITY;
	const imp_val *s, *z;
	int32_t rlo, rhi;

	if (!a || (strcmp(a->op_type, "Relu") && strcmp(a->op_type, "Clip")) || a->domain[0])
		return -1;
	if (a->op_type[0] == 'C') {
		if (c->opset < 11) {
			lo = oa_float(a, "min", -INFINITY);
			hi = oa_float(a, "max", INFINITY);
		} else if ((a->n_in > 1 && a->in[1][0] && const_scalar(c, g, a->in[1], &lo)) ||
			   (a->n_in > 2 && a->in[2][0] && const_scalar(c, g, a->in[2], &hi))) {
			return -1;
		}
	}
	if (!(*q = q_after(c, g, a->out[0], qk)))
		return -1;
	s = cval(c, (*q)->in[1]);
	z = cval(c, (*q)->in[2]);
	enpu_qrange(z->sdt, &rlo, &rhi);
	/* Q(clip(v, lo, hi)) = clamp(Q(v), Q(lo), Q(hi)): Q is monotone */
	p->qlo = lo == -INFINITY ? rlo : enpu_quantize(lo, s->f[0], (int32_t)z->i[0], z->sdt);
	p->qhi = hi == INFINITY ? rhi : enpu_quantize(hi, s->f[0], (int32_t)z->i[0], z->sdt);
	p->clip = p->qlo > rlo || p->qhi < rhi;
	return 0;
}

/* the output side of anchor n: a Q, or (act) a Relu/Clip and a Q; marks
 * what the plan absorbs. 0, or -1 when the pattern does not hold. */
static int out_side(imp_ctx *c, const qgraph *g, const enpu_onnx_node *n, int act, imp_qdq *plan,
		    int k)
{
	const enpu_onnx_node *q;
	int qk = -1, ak = -1;

	if (!n->n_out || !n->out[0][0] || n->n_out > 1)
		return -1;
	if (!(q = q_after(c, g, n->out[0], &qk))) {
		if (!act || activation(c, g, n->out[0], &q, &qk, &ak, &plan[k]))
			return -1;
	}
	plan[k].out = q->out[0];
	plan[k].q = q;
	plan[k].qk = qk;
	plan[k].ak = ak;
	return 0;
}

/* x, x_scale, x_zero_point of DQ d */
static void add_dq(imp_qdq *p, const enpu_onnx_node *d)
{
	add_in(p, d->in[0]);
	add_in(p, d->in[1]);
	add_in(p, d->in[2]);
}

/* Conv, or MatMul: x per tensor, w constant per tensor or per channel
 * (Conv: [M] along 0; MatMul: [N] along the last axis), Conv's bias an
 * int32 constant of scale x_scale * w_scale (float32) and zero point 0 */
static int plan_gemmlike(imp_ctx *c, const qgraph *g, const enpu_onnx_node *n, imp_qdq *p)
{
	int conv = n->op_type[0] == 'C';
	const imp_val *w = NULL;
	const enpu_onnx_node *dx = n->n_in > 1 ? dq_of(c, g, n->in[0], 0, 0) : NULL, *dw, *db = NULL;
	const enpu_onnx_node *pw = n->n_in > 1 ? producer(c, g, n->in[1], NULL) : NULL;
	int64_t per;
	int axis;

	if (!dx || !pw || strcmp(pw->op_type, "DequantizeLinear"))
		return -1;
	w = cval(c, pw->in[0]);
	if (!w || !w->sdt || w->shape.ndim < 2 || (conv && w->shape.ndim != 4))
		return -1;
	per = conv ? w->shape.dim[0] : w->shape.dim[w->shape.ndim - 1];
	axis = conv ? 0 : w->shape.ndim - 1;
	if (!(dw = dq_of(c, g, n->in[1], per, axis)))
		return -1;
	if (conv && n->n_in > 2 && n->in[2][0]) {
		const imp_val *b, *bs, *bz, *xs = cval(c, dx->in[1]), *ws = cval(c, dw->in[1]);

		if (!(db = dq_of(c, g, n->in[2], per, 0)) || !(b = cval(c, db->in[0])) ||
		    b->sdt != ENPU_DT_I32 || b->numel != (uint64_t)per)
			return -1;
		bs = cval(c, db->in[1]);
		bz = cval(c, db->in[2]);
		for (int64_t m = 0; m < per; m++) {
			float want = xs->f[0] * ws->f[ws->numel == 1 ? 0 : m];

			if (bz->i[bz->numel == 1 ? 0 : m] != 0 || bs->f[bs->numel == 1 ? 0 : m] != want)
				return -1;
		}
	}
	if (!(p->in = calloc(9, sizeof(char *))))
		return -2;
	add_dq(p, dx);
	add_dq(p, dw);
	p->op = conv ? "QLinearConv" : "QLinearMatMul";
	if (db)
		p->bias = db->in[0];
	return 0;
}

/* Add, Mul: both inputs DQ per tensor */
static int plan_binary(imp_ctx *c, const qgraph *g, const enpu_onnx_node *n, imp_qdq *p)
{
	const enpu_onnx_node *da = dq_of(c, g, n->in[0], 0, 0);
	const enpu_onnx_node *db = n->n_in > 1 ? dq_of(c, g, n->in[1], 0, 0) : NULL;

	if (!da || !db)
		return -1;
	if (!(p->in = calloc(8, sizeof(char *))))
		return -2;
	add_dq(p, da);
	add_dq(p, db);
	p->op = n->op_type[0] == 'A' ? "QLinearAdd" : "QLinearMul";
	return 0;
}

/* GlobalAveragePool, AveragePool (NCHW: the spec ops' rules say so) */
static int plan_pool(imp_ctx *c, const qgraph *g, const enpu_onnx_node *n, imp_qdq *p)
{
	const enpu_onnx_node *d = dq_of(c, g, n->in[0], 0, 0);

	if (!d)
		return -1;
	if (!(p->in = calloc(5, sizeof(char *))))
		return -2;
	add_dq(p, d);
	p->op = n->op_type[0] == 'G' ? "QLinearGlobalAveragePool" : "QLinearAveragePool";
	return 0;
}

/* Concat: every input DQ per tensor */
static int plan_concat(imp_ctx *c, const qgraph *g, const enpu_onnx_node *n, imp_qdq *p)
{
	const enpu_onnx_node *d[ENPU_QCONCAT_MAX];

	if (n->n_in > ENPU_QCONCAT_MAX || !n->n_in)
		return -1;
	for (size_t k = 0; k < n->n_in; k++)
		if (!(d[k] = dq_of(c, g, n->in[k], 0, 0)))
			return -1;
	if (!(p->in = calloc(2 + 3 * n->n_in, sizeof(char *))))
		return -2;
	p->n_in = 2;   /* y_scale, y_zero_point: the Q's, set below */
	for (size_t k = 0; k < n->n_in; k++)
		add_dq(p, d[k]);
	p->op = "QLinearConcat";
	return 0;
}

/* MaxPool, Reshape, Flatten, Transpose: DQ and Q of equal scale and zero
 * point around them: the op itself on the integers */
static int plan_move(imp_ctx *c, const qgraph *g, const enpu_onnx_node *n, imp_qdq *p)
{
	const enpu_onnx_node *d = dq_of(c, g, n->in[0], 0, 0);

	if (!d || !p->q || !same_qparams(c, d, p->q))
		return -1;
	if (!(p->in = calloc(n->n_in + 1, sizeof(char *))))
		return -2;
	add_in(p, d->in[0]);
	for (size_t k = 1; k < n->n_in; k++)
		add_in(p, n->in[k]);
	p->op = n->op_type;
	p->move = 1;
	return 0;
}

static const struct {
	const char *op;
	int act;   /* a Relu or Clip before the Q folds */
	int (*fn)(imp_ctx *, const qgraph *, const enpu_onnx_node *, imp_qdq *);
} anchors[] = {
	{"Conv", 1, plan_gemmlike}, {"MatMul", 1, plan_gemmlike}, {"Add", 1, plan_binary},
	{"Mul", 0, plan_binary}, {"GlobalAveragePool", 0, plan_pool}, {"AveragePool", 0, plan_pool},
	{"Concat", 0, plan_concat}, {"MaxPool", 0, plan_move}, {"Reshape", 0, plan_move},
	{"Flatten", 0, plan_move}, {"Transpose", 0, plan_move},
};

static int count_uses(imp_ctx *c, qgraph *g)
{
	const enpu_onnx_model *m = c->m;

	for (size_t k = 0; k < m->n_node; k++) {
		for (size_t j = 0; j < m->node[k].n_out; j++)
			if (m->node[k].out[j][0] && imp_smap_put(&g->prod, m->node[k].out[j], (int)k))
				return -1;
		for (size_t j = 0; j < m->node[k].n_in; j++)
			if (m->node[k].in[j][0] &&
			    (imp_smap_put(&g->uses, m->node[k].in[j], uses(g, m->node[k].in[j]) + 1) ||
			     (imp_smap_get(&g->user, m->node[k].in[j]) < 0 &&
			      imp_smap_put(&g->user, m->node[k].in[j], (int)k))))
				return -1;
	}
	for (size_t j = 0; j < m->n_out; j++)
		if (imp_smap_put(&g->uses, m->out[j].name, uses(g, m->out[j].name) + 1))
			return -1;
	return 0;
}

/* Which DQ nodes are left without a reader once the plan's anchors read
 * their inputs instead: skipped. */
static int skip_dead_dqs(imp_ctx *c, qgraph *g, imp_qdq *plan)
{
	const enpu_onnx_model *m = c->m;

	for (size_t k = 0; k < m->n_node; k++) {
		if (!plan[k].op)
			continue;
		for (size_t j = 0; j < m->node[k].n_in; j++)
			if (m->node[k].in[j][0] &&
			    imp_smap_put(&g->uses, m->node[k].in[j], uses(g, m->node[k].in[j]) - 1))
				return -1;
	}
	for (size_t k = 0; k < m->n_node; k++) {
		const enpu_onnx_node *n = &m->node[k];

		if (!strcmp(n->op_type, "DequantizeLinear") && !n->domain[0] && n->n_out == 1 &&
		    uses(g, n->out[0]) == 0)
			plan[k].skip = 1;
	}
	return 0;
}

int imp_qdq_plan(imp_ctx *c)
{
	const enpu_onnx_model *m = c->m;
	qgraph g = {0};
	imp_qdq *plan;
	int any = 0, rc = -1;

	for (size_t k = 0; k < m->n_node && !any; k++)
		any = !strcmp(m->node[k].op_type, "DequantizeLinear");
	if (!any)
		return 0;
	if (!(plan = calloc(m->n_node + 1, sizeof(*plan))) || count_uses(c, &g))
		goto out;
	for (size_t k = 0; k < m->n_node; k++) {
		const enpu_onnx_node *n = &m->node[k];

		if (n->domain[0] || plan[k].skip)
			continue;
		for (size_t a = 0; a < sizeof(anchors) / sizeof(anchors[0]); a++) {
			int r;

			if (strcmp(n->op_type, anchors[a].op))
				continue;
			if (out_side(c, &g, n, anchors[a].act, plan, (int)k))
				break;
			r = anchors[a].fn(c, &g, n, &plan[k]);
			if (r == -2)
				goto out;
			if (r || (plan[k].clip && plan[k].move)) {
				plan_free1(&plan[k]);
				memset(&plan[k], 0, sizeof(plan[k]));
				break;
			}
			plan[plan[k].qk].skip = 1;
			if (plan[k].ak >= 0)
				plan[plan[k].ak].skip = 1;
			break;
		}
	}
	if (skip_dead_dqs(c, &g, plan))
		goto out;
	c->qdq = plan;
	plan = NULL;
	rc = 0;
out:
	if (plan) {
		for (size_t k = 0; k < m->n_node; k++)
			plan_free1(&plan[k]);
		free(plan);
	}
	imp_smap_free(&g.prod);
	imp_smap_free(&g.uses);
	imp_smap_free(&g.user);
	return rc ? enpu_fail(c->e, ENPU_E_NOMEM, c->label, NULL, "out of memory importing the model")
		  : 0;
}

/* ---- emitting a planned node ---------------------------------------------- */

/* Anchor n as planned: the QOperator node, mapped through the table, into
 * the Q's output (or a temporary, then the integer clip into it). */
int imp_qdq_emit(imp_ctx *c, const enpu_onnx_node *n, imp_qdq *p)
{
	enpu_onnx_node f = *n;
	char *outs[1];
	const imp_mapping *mp;
	int rc;

	if (!p->move) {
		if (!strcmp(p->op, "QLinearConcat")) {
			p->in[0] = p->q->in[1];
			p->in[1] = p->q->in[2];
		} else {
			add_in(p, p->q->in[1]);
			add_in(p, p->q->in[2]);
			if (p->bias)
				add_in(p, p->bias);
		}
	}
	f.op_type = (char *)p->op;
	f.domain = (char *)(p->move || !strcmp(p->op, "QLinearConv") ||
			    !strcmp(p->op, "QLinearMatMul") ? "" : "com.microsoft");
	f.in = (char **)p->in;
	f.n_in = (size_t)p->n_in;
	f.out = outs;
	f.n_out = 1;
	outs[0] = (char *)p->out;
	if (p->clip) {
		size_t len = strlen(p->out) + 16;

		if (!(p->tmp = malloc(len)))
			return enpu_fail(c->e, ENPU_E_NOMEM, c->label, NULL, "out of memory importing the model");
		snprintf(p->tmp, len, "%s_unclipped", p->out);
		outs[0] = p->tmp;
	}
	if (!(mp = imp_map_find(f.op_type, c->opset)))
		return imp_bad(c, n, "op %.32s is not imported", f.op_type);
	if ((rc = mp->fn(c, &f)) || !p->clip)
		return rc;
	{
		imp_attrs at = {0};
		int x = imp_find(c, p->tmp), y;

		outs[0] = (char *)p->out;
		ia_float(&at, "min", (float)p->qlo);
		ia_float(&at, "max", (float)p->qhi);
		if ((y = imp_outval(c, &f, 0)) < 0)
			return -1;
		return imp_emit(c, &f, "clip", &x, 1, &at, &y, 1);
	}
}

/* import.c: enpu_import (import.h), the driver. Reads the model
 * (onnx_read), checks the opset (7-17 of the default domain), makes the
 * value table (initializers as constants, external data read through the
 * caller, graph inputs bound by opts->bind or with symbolic dims 1), walks
 * the nodes in topological order (folding what is constant, import_fold.c;
 * mapping the rest, import_map.c), checks the graph outputs, and writes the
 * spec and weights (import_write.c). Nodes it cannot map are collected and
 * reported at once as one E0404. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "import_int.h"

/* ---- string map ------------------------------------------------------- */

static size_t hstr(const char *s)
{
	size_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

int imp_smap_get(const imp_smap *m, const char *k)
{
	if (!m->cap)
		return -1;
	for (size_t i = hstr(k) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->k[i])
			return -1;
		if (!strcmp(m->k[i], k))
			return m->v[i];
	}
}

static int smap_grow(imp_smap *m)
{
	imp_smap n = {calloc(m->cap ? 2 * m->cap : 64, sizeof(char *)), NULL,
		      m->cap ? 2 * m->cap : 64, m->n};

	n.v = calloc(n.cap, sizeof(int));
	if (!n.k || !n.v) {
		free(n.k);
		free(n.v);
		return -1;
	}
	for (size_t j = 0; j < m->cap; j++) {
		if (!m->k[j])
			continue;
		size_t i = hstr(m->k[j]) & (n.cap - 1);
		while (n.k[i])
			i = (i + 1) & (n.cap - 1);
		n.k[i] = m->k[j];
		n.v[i] = m->v[j];
	}
	free(m->k);
	free(m->v);
	*m = n;
	return 0;
}

int imp_smap_put(imp_smap *m, const char *k, int v)
{
	if ((m->n + 1) * 2 > m->cap && smap_grow(m))
		return -1;
	size_t i = hstr(k) & (m->cap - 1);
	while (m->k[i] && strcmp(m->k[i], k))
		i = (i + 1) & (m->cap - 1);
	if (!m->k[i]) {
		if (!(m->k[i] = strdup(k)))
			return -1;
		m->n++;
	}
	m->v[i] = v;
	return 0;
}

void imp_smap_free(imp_smap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->k[i]);
	free(m->k);
	free(m->v);
	memset(m, 0, sizeof(*m));
}

/* ---- values ----------------------------------------------------------- */

static int nomem(imp_ctx *c)
{
	return enpu_fail(c->e, ENPU_E_NOMEM, c->label, NULL, "out of memory importing the model");
}

int imp_bad(imp_ctx *c, const enpu_onnx_node *n, const char *fmt, ...)
{
	char why[200], item[400];
	va_list ap;
	int len;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	c->n_bad++;
	if (n)
		len = snprintf(item, sizeof(item), "%s'%.60s' (%.32s, opset %lld): %s",
			       c->n_listed ? "; " : "", n->name[0] ? n->name : n->out[0],
			       n->op_type, (long long)c->opset, why);
	else
		len = snprintf(item, sizeof(item), "%s%s", c->n_listed ? "; " : "", why);
	/* keep room for " ... and N more" */
	if (c->badlen + (size_t)len + 24 < sizeof(c->bad)) {
		memcpy(c->bad + c->badlen, item, (size_t)len + 1);
		c->badlen += (size_t)len;
		c->n_listed++;
	}
	return 1;
}

int imp_find(imp_ctx *c, const char *onnx)
{
	return imp_smap_get(&c->byname, onnx);
}

int imp_in(imp_ctx *c, const enpu_onnx_node *n, size_t k)
{
	return k < n->n_in && n->in[k][0] ? imp_find(c, n->in[k]) : -1;
}

int imp_newval(imp_ctx *c, const char *onnx, int kind)
{
	if (c->nv == c->av) {
		size_t na = c->av ? 2 * c->av : 64;
		imp_val *nv = realloc(c->v, na * sizeof(*nv));
		if (!nv)
			return nomem(c);
		c->v = nv;
		c->av = na;
	}
	imp_val *v = &c->v[c->nv];
	memset(v, 0, sizeof(*v));
	v->kind = kind;
	v->dtype = ENPU_ONNX_FLOAT;
	if (!(v->onnx = strdup(onnx)) || imp_smap_put(&c->byname, onnx, (int)c->nv)) {
		free(v->onnx);
		return nomem(c);
	}
	return (int)c->nv++;
}

int imp_outval(imp_ctx *c, const enpu_onnx_node *n, int k)
{
	char tmp[300];

	/* kind 0 until imp_emit gives it a shape */
	if (k >= 0)
		return imp_newval(c, n->out[k], 0);
	/* a temporary: unique among ONNX names too (the map refuses none) */
	for (int s = 1;; s++) {
		snprintf(tmp, sizeof(tmp), "%.200s_t%d", n->n_out ? n->out[0] : n->name, s);
		if (imp_find(c, tmp) < 0)
			return imp_newval(c, tmp, 0);
	}
}

int imp_alias(imp_ctx *c, const char *onnx, int idx)
{
	return imp_smap_put(&c->byname, onnx, idx) ? nomem(c) : 0;
}

enpu_dtype imp_spec_dtype(const imp_val *v)
{
	return v->sdt ? v->sdt : v->dtype == ENPU_ONNX_FLOAT ? ENPU_DT_F32 : ENPU_DT_I64;
}

enpu_dtype imp_onnx_sdt(int elem_type)
{
	switch (elem_type) {
	case ENPU_ONNX_FLOAT:
		return ENPU_DT_F32;
	case ENPU_ONNX_INT8:
		return ENPU_DT_I8;
	case ENPU_ONNX_UINT8:
		return ENPU_DT_U8;
	case ENPU_ONNX_INT32:
		return ENPU_DT_I32;
	default:
		return ENPU_DT_INVALID;
	}
}

int imp_is_const(const imp_ctx *c, int idx)
{
	return idx >= 0 && c->v[idx].kind == IV_CONST;
}

/* Make v[idx] a constant of dtype and shape s, zeroed; the element count
 * against max_tensor_elems and the folded total against 4 times that. */
int imp_const_alloc(imp_ctx *c, int idx, int dtype, const enpu_shape *s)
{
	imp_val *v = &c->v[idx];
	uint64_t n = 1;

	for (int k = 0; k < s->ndim; k++) {
		if (s->dim[k] < 0 || (s->dim[k] && n > c->lim->max_tensor_elems / (uint64_t)s->dim[k]))
			goto big;
		n *= (uint64_t)s->dim[k];
	}
	if (n > c->lim->max_tensor_elems || c->folded + n > 4 * c->lim->max_tensor_elems)
		goto big;
	free(v->f);
	free(v->i);
	v->f = NULL;
	v->i = NULL;
	if (dtype == ENPU_ONNX_FLOAT)
		v->f = calloc(n ? n : 1, sizeof(float));
	else
		v->i = calloc(n ? n : 1, sizeof(int64_t));
	if (!v->f && !v->i)
		return nomem(c);
	c->folded += n;
	v->kind = IV_CONST;
	v->dtype = dtype;
	v->sdt = 0;
	v->shape = *s;
	v->numel = n;
	return 0;
big:
	return enpu_fail(c->e, ENPU_E_LIMIT, c->label, "raise max_tensor_elems",
			 "constant '%.200s' (node '%.100s') would have more than %llu elements "
			 "(max_tensor_elems; folded constants together at most 4 times that)",
			 v->onnx, c->cur ? c->cur->name : "", (unsigned long long)c->lim->max_tensor_elems);
}

/* ---- attributes of ONNX nodes ----------------------------------------- */

int64_t oa_int(const enpu_onnx_node *n, const char *name, int64_t dflt)
{
	const enpu_onnx_attr *a = enpu_onnx_attr_find(n, name);
	return a && a->type == ENPU_ONNX_A_INT ? a->i : dflt;
}

float oa_float(const enpu_onnx_node *n, const char *name, float dflt)
{
	const enpu_onnx_attr *a = enpu_onnx_attr_find(n, name);
	return a && a->type == ENPU_ONNX_A_FLOAT ? a->f : dflt;
}

const char *oa_str(const enpu_onnx_node *n, const char *name, const char *dflt)
{
	const enpu_onnx_attr *a = enpu_onnx_attr_find(n, name);
	return a && a->type == ENPU_ONNX_A_STRING ? a->s : dflt;
}

int oa_ints(const enpu_onnx_node *n, const char *name, int64_t *v, int max)
{
	const enpu_onnx_attr *a = enpu_onnx_attr_find(n, name);

	if (!a || a->type != ENPU_ONNX_A_INTS)
		return -1;
	if (a->n > (size_t)max)
		return -2;
	for (size_t k = 0; k < a->n; k++)
		v[k] = a->ints[k];
	return (int)a->n;
}

/* ---- the walk --------------------------------------------------------- */

/* The default domain's opset: 7-17, else E0404. */
static int check_opset(imp_ctx *c)
{
	c->opset = -1;
	for (size_t k = 0; k < c->m->n_opset; k++)
		if (!c->m->opset[k].domain[0] || !strcmp(c->m->opset[k].domain, "ai.onnx"))
			c->opset = c->m->opset[k].version;
	if (c->opset >= 7 && c->opset <= 17)
		return 0;
	return enpu_fail(c->e, ENPU_E_IMPORT, c->label,
			 "re-export the model with an opset from 7 to 17 (torch.onnx.export(..., opset_version=17))",
			 c->opset < 0 ? "the model imports no opset of the default ONNX domain" :
			 "the model uses opset %lld of the default ONNX domain; the importer takes 7 to 17",
			 (long long)c->opset);
}

/* Nodes in an order where every input is defined first (Kahn); ONNX asks
 * for a sorted graph, so this is the identity on well-formed models. */
static int topo_order(imp_ctx *c, size_t *order)
{
	const enpu_onnx_model *m = c->m;
	imp_smap prod = {0};
	int *wait = calloc(m->n_node + 1, sizeof(int));
	size_t *users = NULL, *ustart = calloc(m->n_node + 2, sizeof(size_t)), nq = 0, head = 0;
	int rc = -1;

	if (!wait || !ustart)
		goto out;
	for (size_t k = 0; k < m->n_node; k++)
		for (size_t j = 0; j < m->node[k].n_out; j++)
			if (m->node[k].out[j][0] && imp_smap_put(&prod, m->node[k].out[j], (int)k))
				goto out;
	/* count edges producer -> user, then fill them (CSR) */
	for (size_t k = 0; k < m->n_node; k++)
		for (size_t j = 0; j < m->node[k].n_in; j++) {
			int p = m->node[k].in[j][0] ? imp_smap_get(&prod, m->node[k].in[j]) : -1;
			if (p >= 0 && (size_t)p != k) {
				wait[k]++;
				ustart[p + 1]++;
			}
		}
	for (size_t k = 0; k < m->n_node; k++)
		ustart[k + 1] += ustart[k];
	users = malloc((ustart[m->n_node] + 1) * sizeof(size_t));
	size_t *fillp = calloc(m->n_node + 1, sizeof(size_t));
	if (!users || !fillp) {
		free(fillp);
		goto out;
	}
	for (size_t k = 0; k < m->n_node; k++)
		for (size_t j = 0; j < m->node[k].n_in; j++) {
			int p = m->node[k].in[j][0] ? imp_smap_get(&prod, m->node[k].in[j]) : -1;
			if (p >= 0 && (size_t)p != k)
				users[ustart[p] + fillp[p]++] = k;
		}
	free(fillp);
	for (size_t k = 0; k < m->n_node; k++)
		if (!wait[k])
			order[nq++] = k;
	while (head < nq) {
		size_t k = order[head++];
		for (size_t u = ustart[k]; u < ustart[k + 1]; u++)
			if (--wait[users[u]] == 0)
				order[nq++] = users[u];
	}
	if (nq != m->n_node) {
		rc = enpu_fail(c->e, ENPU_E_IMPORT, c->label, "re-export the model",
			       "the graph has a cycle (%zu of %zu nodes cannot be ordered)",
			       m->n_node - nq, m->n_node);
		goto done;
	}
	rc = 0;
	goto done;
out:
	rc = nomem(c);
done:
	imp_smap_free(&prod);
	free(wait);
	free(users);
	free(ustart);
	return rc;
}

/* The node's scope key (component) and its ops' base name from its
 * name: "/layer1/layer1.0/conv1/Conv" -> "layer1.0", "layer1.0.conv1.Conv";
 * "/fc/Gemm" -> "fc", "fc.Gemm"; "Conv_0" -> none, "Conv_0". */
static int set_scope(imp_ctx *c, const enpu_onnx_node *n)
{
	const char *p = n->name, *part[64];
	size_t len[64];
	int np = 0;

	free(c->cur_comp);
	c->cur_comp = NULL;
	c->cur = n;
	c->cur_sub = 0;
	while (*p && np < 64) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		part[np] = p;
		while (*p && *p != '/')
			p++;
		len[np] = (size_t)(p - part[np]);
		np++;
	}
	if (np >= 2) {
		int k = np >= 3 ? 1 : 0;
		if (!(c->cur_comp = strndup(part[k], len[k])))
			return nomem(c);
	}
	return 0;
}

/* One node: fold it when every input is constant, else map it. */
static int do_node(imp_ctx *c, const enpu_onnx_node *n, imp_qdq *plan)
{
	int all_const = 1, rc;
	const imp_mapping *mp;

	if (set_scope(c, n))
		return -1;
	if (plan && plan->op)
		return imp_qdq_emit(c, n, plan);
	/* ONNX Runtime's quantised ops of its own domain (QOperator models)
	 * are taken: the table's QLinear rows */
	if (n->domain[0] && strcmp(n->domain, "ai.onnx") &&
	    (strcmp(n->domain, "com.microsoft") || strncmp(n->op_type, "QLinear", 7)))
		return imp_bad(c, n, "domain '%.40s' is not imported (only the default ONNX domain "
			       "and com.microsoft's QLinear ops)",
			       n->domain);
	for (size_t k = 0; k < n->n_in; k++) {
		if (!n->in[k][0])
			continue;
		int i = imp_find(c, n->in[k]);
		if (i < 0)
			return imp_bad(c, n, "input '%.60s' is produced by no node", n->in[k]);
		if (!c->v[i].kind)
			return 1;   /* after a node already listed: not listed again */
		if (!imp_is_const(c, i))
			all_const = 0;
	}
	if (all_const) {
		rc = imp_fold(c, n);
		if (rc != 1)
			return rc == 2 ? 1 : rc;
	}
	mp = imp_map_find(n->op_type, c->opset);
	if (!mp)
		return imp_bad(c, n, "op %.32s is not imported", n->op_type);
	if (!n->n_out || !n->out[0][0])
		return imp_bad(c, n, "no output");
	for (int k = 0; k < mp->min_in; k++)
		if ((size_t)k >= n->n_in || !n->in[k][0])
			return imp_bad(c, n, "input %d is missing", k);
	return mp->fn(c, n);
}

static int bind_inputs(imp_ctx *c);
static int load_inits(imp_ctx *c);

static int walk(imp_ctx *c)
{
	size_t *order = malloc((c->m->n_node + 1) * sizeof(size_t));
	int rc = 0;

	if (!order)
		return nomem(c);
	if (topo_order(c, order)) {
		free(order);
		return -1;
	}
	if (imp_qdq_plan(c)) {
		free(order);
		return -1;
	}
	for (size_t k = 0; k < c->m->n_node && rc >= 0; k++) {
		const enpu_onnx_node *n = &c->m->node[order[k]];
		if (c->qdq && c->qdq[order[k]].skip)
			continue;   /* a DQ or Q an anchor absorbed */
		rc = do_node(c, n, c->qdq ? &c->qdq[order[k]] : NULL);
		/* outputs of a node that failed stay undefined: its users say so,
		 * and are listed too, so define them as placeholders */
		for (size_t j = 0; rc == 1 && j < n->n_out; j++) {
			int i = n->out[j][0] ? imp_find(c, n->out[j]) : -2;
			if (i >= 0 && c->v[i].kind != IV_INPUT)
				c->v[i].kind = 0;
			else if (i == -1 && imp_newval(c, n->out[j], 0) < 0)
				rc = -1;
		}
	}
	free(order);
	return rc < 0 ? -1 : 0;
}

static void ctx_free(imp_ctx *c)
{
	imp_qdq_free(c);
	for (size_t k = 0; k < c->nv; k++) {
		free(c->v[k].onnx);
		free(c->v[k].spec);
		free(c->v[k].f);
		free(c->v[k].i);
	}
	free(c->v);
	for (size_t k = 0; k < c->nops; k++) {
		free(c->ops[k].name);
		free(c->ops[k].comp);
		free(c->ops[k].in);
		free(c->ops[k].out);
	}
	free(c->ops);
	imp_smap_free(&c->byname);
	imp_smap_free(&c->names);
	free(c->cur_comp);
	free(c->model_name);
	for (size_t k = 0; c->out_spec && k < c->m->n_out; k++)
		free(c->out_spec[k]);
	free(c->out_spec);
}

/* A graph output that is another value under its own name (an Identity
 * at the end, a graph input, another output): a reshape to its own shape,
 * so result.npz has the ONNX output's name. 0, 1 (listed), -1. */
static int output_copy(imp_ctx *c, size_t k, int i)
{
	char *outs[1] = {c->m->out[k].name};
	enpu_onnx_node fake = {0};
	imp_attrs at = {0};
	int o;

	fake.name = "";   /* the op is named Identity */
	fake.op_type = "Identity";
	fake.domain = "";
	fake.out = outs;
	fake.n_out = 1;
	if (set_scope(c, &fake))
		return -1;
	if (!c->v[i].shape.ndim)
		return imp_bad(c, &fake, "a scalar graph output that is another value");
	ia_ints(&at, "shape", c->v[i].shape.dim, c->v[i].shape.ndim);
	if ((o = imp_outval(c, &fake, 0)) < 0)
		return -1;
	o = imp_emit(c, &fake, "reshape", &i, 1, &at, &o, 1);
	c->cur = NULL;   /* fake goes out of scope */
	return o;
}

/* Graph outputs must be computed at run time (a spec output is an op's
 * output or a graph input), once each, under their own names. */
static int check_outputs(imp_ctx *c, int64_t *outs)
{
	if (!c->m->n_out)
		imp_bad(c, NULL, "the graph has no outputs");
	for (size_t k = 0; k < c->m->n_out; k++) {
		int i = imp_find(c, c->m->out[k].name), rc;
		outs[k] = i;
		for (size_t j = 0; j < k; j++)
			if (!strcmp(c->m->out[j].name, c->m->out[k].name))
				return imp_bad(c, NULL, "graph output '%.60s' is listed twice", c->m->out[k].name);
		if (i < 0)
			imp_bad(c, NULL, "graph output '%.60s' is produced by no node", c->m->out[k].name);
		if (i < 0 || !c->v[i].kind)
			continue;   /* its node is listed already */
		if (c->v[i].kind == IV_CONST) {
			imp_bad(c, NULL, "graph output '%.60s' is a constant (it does not depend on an input)",
				c->m->out[k].name);
			continue;
		}
		/* two outputs that came to be one value (an Identity removed):
		 * the later one gets its own copy, under its own name */
		for (size_t j = 0; j < k && !c->out_spec[k]; j++)
			if (outs[j] == i && !(c->out_spec[k] = imp_unique(c, c->m->out[k].name)))
				return nomem(c);
		if (c->out_spec[k]) {
			if ((rc = output_copy(c, k, i)) < 0)
				return -1;
			outs[k] = rc ? outs[k] : imp_find(c, c->m->out[k].name);
		}
	}
	return 0;
}

static int bad_error(imp_ctx *c)
{
	if (c->n_listed < c->n_bad)
		snprintf(c->bad + c->badlen, sizeof(c->bad) - c->badlen, " ... and %d more",
			 c->n_bad - c->n_listed);
	return enpu_fail(c->e, ENPU_E_IMPORT, c->label, NULL, "%d node%s cannot be imported: %s",
			 c->n_bad, c->n_bad == 1 ? "" : "s", c->bad);
}

int enpu_import(const void *model, size_t len, const char *label,
		const enpu_import_opts *o, enpu_buf *spec, enpu_buf *weights, enpu_err *e)
{
	static const enpu_import_opts none;
	enpu_onnx_model *m = NULL;
	imp_ctx c;
	int64_t *outs = NULL;
	int rc = -1;

	memset(&c, 0, sizeof(c));
	c.o = o ? o : &none;
	c.lim = c.o->lim ? c.o->lim : enpu_onnx_limits_default();
	c.label = label ? label : "model.onnx";
	c.e = e;
	if (enpu_onnx_read(model, len, c.label, c.lim, &m, e))
		return -1;
	c.m = m;
	if (check_opset(&c))
		goto out;
	if (!(outs = calloc(m->n_out + 1, sizeof(*outs)))) {
		nomem(&c);
		goto out;
	}
	if (load_inits(&c) || bind_inputs(&c) || walk(&c) || check_outputs(&c, outs) < 0)
		goto out;
	if (!c.n_bad && !c.nops)
		imp_bad(&c, NULL, "the graph computes nothing (no node to import)");
	if (c.n_bad) {
		bad_error(&c);
		goto out;
	}
	rc = imp_write(&c, outs, spec, weights);
out:
	free(outs);
	ctx_free(&c);
	enpu_onnx_free(m);
	return rc;
}

/* ---- initializers and inputs ------------------------------------------ */

/* An external-data tensor's bytes through the caller: the location is a
 * plain relative path (no absolute path, no ".." component). */
static int read_external(imp_ctx *c, enpu_onnx_tensor *t)
{
	const char *l = t->ext_location, *p;
	enpu_buf b = ENPU_BUF_INIT;
	int rc;

	if (!c->o->ext)
		return enpu_fail(c->e, ENPU_E_IMPORT, c->label,
				 "import the model from its file, next to its data file",
				 "tensor '%.100s' keeps its data in '%.100s', which this import cannot read",
				 t->name, l);
	for (p = l; *p; ) {
		const char *q = strchr(p, '/');
		size_t n = q ? (size_t)(q - p) : strlen(p);
		if ((n == 2 && !strncmp(p, "..", 2)) || l[0] == '/' || strchr(l, '\\'))
			return enpu_fail(c->e, ENPU_E_IMPORT, c->label,
					 "keep the data file next to the model (onnx.save(..., location=NAME))",
					 "tensor '%.100s' names external data '%.100s', outside the model's directory",
					 t->name, l);
		p = q ? q + 1 : p + n;
	}
	if (c->o->ext(c->o->ext_ctx, l, t->ext_offset, t->ext_length, &b, c->e))
		return -1;
	rc = enpu_onnx_tensor_set_raw(t, b.data, b.len, l, c->e);
	enpu_buf_free(&b);
	if (rc)
		c->e->code = ENPU_E_IMPORT;
	return rc;
}

static int load_inits(imp_ctx *c)
{
	enpu_onnx_model *m = (enpu_onnx_model *)c->m;

	for (size_t k = 0; k < m->n_init; k++) {
		enpu_onnx_tensor *t = &m->init[k];
		int i;

		if (t->external && !t->f && !t->i && read_external(c, t))
			return -1;
		if ((i = imp_newval(c, t->name, IV_CONST)) < 0)
			return -1;
		imp_val *v = &c->v[i];
		v->init = 1;
		v->shape = t->shape;
		v->numel = t->numel;
		if (!t->f && !t->i && t->numel) {
			v->dtype = 1000 + t->elem_type;   /* a dtype not read: no data */
			continue;
		}
		if (!t->f && !t->i && !(t->i = calloc(1, sizeof(int64_t))))
			return nomem(c);   /* empty: an empty int64 list */
		v->dtype = t->f ? ENPU_ONNX_FLOAT : t->elem_type == ENPU_ONNX_BOOL ? ENPU_ONNX_BOOL
			: ENPU_ONNX_INT64;
		/* int8, uint8, int32 stay so when a quantised op reads them */
		if (!t->f && imp_onnx_sdt(t->elem_type))
			v->sdt = imp_onnx_sdt(t->elem_type);
		/* the value takes the data over */
		v->f = t->f;
		v->i = t->i;
		t->f = NULL;
		t->i = NULL;
	}
	return 0;
}

/* A symbolic dim's value: what a binding gives the same name on another
 * input (batch bound once binds every input's batch), else 1. */
static int64_t sym_dim(imp_ctx *c, const char *param)
{
	for (int k = 0; k < c->o->n_bind; k++)
		for (size_t j = 0; j < c->m->n_in; j++) {
			const enpu_onnx_value *vi = &c->m->in[j];
			if (strcmp(vi->name, c->o->bind[k].name) || vi->ndim != c->o->bind[k].shape.ndim)
				continue;
			for (int d = 0; d < vi->ndim; d++)
				if (vi->param[d] && !strcmp(vi->param[d], param))
					return c->o->bind[k].shape.dim[d];
		}
	return 1;
}

/* The shape of graph input vi: bound, or its dims (symbolic: as bound on
 * another input, else 1). */
static int input_shape(imp_ctx *c, const enpu_onnx_value *vi, enpu_shape *s)
{
	for (int k = 0; k < c->o->n_bind; k++) {
		if (strcmp(c->o->bind[k].name, vi->name))
			continue;
		*s = c->o->bind[k].shape;
		for (int d = 0; d < s->ndim; d++)
			if (s->dim[d] < 1)
				return enpu_fail(c->e, ENPU_E_IMPORT, c->label, NULL,
						 "--input %.100s binds dim %d to %lld (dims are at least 1)",
						 vi->name, d, (long long)s->dim[d]);
		if (vi->ndim >= 0 && vi->ndim != s->ndim)
			return enpu_fail(c->e, ENPU_E_IMPORT, c->label, NULL,
					 "--input %.100s binds %d dims, but the model's input '%.100s' has %d",
					 vi->name, s->ndim, vi->name, vi->ndim);
		for (int d = 0; d < vi->ndim; d++)
			if (vi->dim[d] > 0 && vi->dim[d] != s->dim[d])
				return enpu_fail(c->e, ENPU_E_IMPORT, c->label, NULL,
						 "--input %.100s binds dim %d to %lld, but the model fixes it at %lld",
						 vi->name, d, (long long)s->dim[d], (long long)vi->dim[d]);
		return 0;
	}
	if (vi->ndim < 0)
		return enpu_fail(c->e, ENPU_E_IMPORT, c->label, "bind its shape with --input NAME=SHAPE",
				 "graph input '%.100s' has no shape in the model", vi->name);
	s->ndim = vi->ndim;
	for (int d = 0; d < vi->ndim; d++) {
		if (!vi->dim[d])
			return enpu_fail(c->e, ENPU_E_IMPORT, c->label, "bind its shape with --input NAME=SHAPE",
					 "graph input '%.100s' has dim %d of size 0 (spec tensors are not empty)",
					 vi->name, d);
		s->dim[d] = vi->dim[d] > 0 ? vi->dim[d] : vi->param[d] ? sym_dim(c, vi->param[d]) : 1;
	}
	return 0;
}

static int bind_inputs(imp_ctx *c)
{
	const enpu_onnx_model *m = c->m;

	for (int k = 0; k < c->o->n_bind; k++) {
		size_t j;
		for (j = 0; j < m->n_in; j++)
			if (!strcmp(m->in[j].name, c->o->bind[k].name) && imp_find(c, m->in[j].name) < 0)
				break;
		if (j == m->n_in)
			return enpu_fail(c->e, ENPU_E_IMPORT, c->label, "name one of the model's graph inputs",
					 "--input names '%.100s', which is not an input of the model",
					 c->o->bind[k].name);
	}
	for (size_t k = 0; k < m->n_in; k++) {
		const enpu_onnx_value *vi = &m->in[k];
		enpu_shape s;
		int i;

		if (imp_find(c, vi->name) >= 0)
			continue;   /* an initializer: a weight, not an input */
		if (vi->not_tensor || (vi->elem_type && !imp_onnx_sdt(vi->elem_type))) {
			imp_bad(c, NULL, "graph input '%.60s' is not a float32, int8, uint8 or int32 "
				"tensor (elem_type %d): runtime int64 data", vi->name, vi->elem_type);
			if (imp_newval(c, vi->name, 0) < 0)
				return -1;
			continue;
		}
		if (input_shape(c, vi, &s) || (i = imp_newval(c, vi->name, IV_INPUT)) < 0)
			return -1;
		c->v[i].shape = s;
		if (vi->elem_type && vi->elem_type != ENPU_ONNX_FLOAT) {
			c->v[i].sdt = imp_onnx_sdt(vi->elem_type);
			c->v[i].dtype = ENPU_ONNX_INT64;
		}
		if (enpu_shape_numel(&s, &c->v[i].numel) || c->v[i].numel > c->lim->max_tensor_elems)
			return enpu_fail(c->e, ENPU_E_IMPORT, c->label, NULL,
					 "graph input '%.100s' would have more than max_tensor_elems elements",
					 vi->name);
		if (!(c->v[i].spec = imp_unique(c, vi->name)))
			return nomem(c);
	}
	/* the graph outputs' names come next: ops named like them yield */
	if (!(c->out_spec = calloc(m->n_out + 1, sizeof(char *))))
		return nomem(c);
	for (size_t k = 0; k < m->n_out; k++)
		if (imp_find(c, m->out[k].name) < 0 && !(c->out_spec[k] = imp_unique(c, m->out[k].name)))
			return nomem(c);
	return 0;
}

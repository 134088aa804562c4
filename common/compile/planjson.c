/* planjson.c: plan.json in both directions (json-c). The planner and the
 * plan's verification stay in plan.c, which the compute core builds
 * without json-c; a plan read here is verified there. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "plan.h"
#include "backend.h"
#include "json.h"

int enpu_plan_to_json(const enpu_graph *g, const enpu_plan *p, enpu_buf *out,
		      enpu_err *e)
{
	return enpu_plan_to_json_section(g, p, NULL, NULL, out, e);
}

int enpu_plan_to_json_section(const enpu_graph *g, const enpu_plan *p, const char *key,
			      struct json_object *section, enpu_buf *out, enpu_err *e)
{
	json_object *root = json_object_new_object(), *sched = json_object_new_array();
	json_object *bufs = json_object_new_array(), *scr = json_object_new_array();
	int rc = -1;

	if (!root || !sched || !bufs || !scr) {
		json_object_put(sched);
		json_object_put(bufs);
		json_object_put(scr);
		goto nomem;
	}
	json_object_object_add(root, "format", json_object_new_string("eulernpu-plan"));
	json_object_object_add(root, "version", json_object_new_int(1));
	for (int k = 0; k < g->n_ops; k++)
		json_object_array_add(sched, json_object_new_string(g->ops[k].name));
	json_object_object_add(root, "schedule", sched);
	json_object_object_add(root, "alignment", json_object_new_int(ENPU_PLAN_ALIGN));
	json_object_object_add(root, "arena_bytes", json_object_new_int64((int64_t)p->arena_bytes));
	if (p->strategy[0]) {   /* which placement won, and how close it is to the bound */
		json_object_object_add(root, "lower_bound",
				       json_object_new_int64((int64_t)p->lower_bound));
		json_object_object_add(root, "strategy", json_object_new_string(p->strategy));
	}
	for (int k = 0; k < p->n_bufs; k++) {
		const enpu_plan_buf *b = &p->bufs[k];
		json_object *o = json_object_new_object();
		if (!o) {
			json_object_put(bufs);
			json_object_put(scr);
			goto nomem;
		}
		if (b->tensor < 0) {   /* an op's scratch */
			json_object_object_add(o, "op", json_object_new_string(g->ops[b->first_op].name));
			json_object_object_add(o, "offset", json_object_new_int64((int64_t)b->offset));
			json_object_object_add(o, "bytes", json_object_new_int64((int64_t)b->bytes));
			json_object_array_add(scr, o);
			continue;
		}
		json_object_object_add(o, "tensor", json_object_new_string(g->tensors[b->tensor].name));
		json_object_object_add(o, "offset", json_object_new_int64((int64_t)b->offset));
		json_object_object_add(o, "bytes", json_object_new_int64((int64_t)b->bytes));
		json_object_object_add(o, "first_op", json_object_new_string(g->ops[b->first_op].name));
		json_object_object_add(o, "last_op", json_object_new_string(g->ops[b->last_op].name));
		json_object_array_add(bufs, o);
	}
	json_object_object_add(root, "buffers", bufs);
	if (json_object_array_length(scr) > 0)
		json_object_object_add(root, "scratch", scr);
	else
		json_object_put(scr);
	if (key && section)
		json_object_object_add(root, key, json_object_get(section));
	rc = enpu_json_dump(root, out, e);
	json_object_put(root);
	return rc;
nomem:
	json_object_put(root);
	return enpu_fail(e, ENPU_E_NOMEM, "plan.json", NULL, "cannot build plan.json");
}

/* The graph's op and tensor names, sorted: buffers name their tensor and
 * ops, and a plan of many buffers is read in n log n, not n * ops. */
typedef struct name_ix {
	const char *name;
	int idx;
} name_ix;

typedef struct plan_names {
	name_ix *ops, *tensors;
} plan_names;

static int cmp_ix(const void *a, const void *b)
{
	return strcmp(((const name_ix *)a)->name, ((const name_ix *)b)->name);
}

static int names_init(const enpu_graph *g, plan_names *nm)
{
	nm->ops = malloc(sizeof(name_ix) * (size_t)(g->n_ops ? g->n_ops : 1));
	nm->tensors = malloc(sizeof(name_ix) * (size_t)(g->n_tensors ? g->n_tensors : 1));
	if (!nm->ops || !nm->tensors)
		return -1;
	for (int k = 0; k < g->n_ops; k++)
		nm->ops[k] = (name_ix){g->ops[k].name, k};
	for (int k = 0; k < g->n_tensors; k++)
		nm->tensors[k] = (name_ix){g->tensors[k].name, k};
	qsort(nm->ops, (size_t)g->n_ops, sizeof(name_ix), cmp_ix);
	qsort(nm->tensors, (size_t)g->n_tensors, sizeof(name_ix), cmp_ix);
	return 0;
}

static void names_free(plan_names *nm)
{
	free(nm->ops);
	free(nm->tensors);
	nm->ops = nm->tensors = NULL;
}

/* name's index in ix (n entries), or -1. */
static int name_find(const name_ix *ix, int n, const char *name)
{
	name_ix key = {name, -1};
	const name_ix *hit = bsearch(&key, ix, (size_t)n, sizeof(name_ix), cmp_ix);

	return hit ? hit->idx : -1;
}

/* The backend's section (key) into *section, new reference, NULL when
 * absent; another backend's section is an error. */
static int read_section(const enpu_graph *g, json_object *root, const char *label,
			const char *key, json_object **section, enpu_err *e)
{
	json_object *v;

	for (int i = 0; i < enpu_backend_count(); i++) {
		const enpu_backend_def *d = enpu_backend_at(i);
		if (d->section && (!key || strcmp(d->section, key) != 0) &&
		    json_object_object_get_ex(root, d->section, NULL))
			return enpu_fail(e, ENPU_E_ARTIFACT, label, NULL,
					 "field '%s' is only for %s plans, the graph is for '%s'",
					 d->section, d->name, g->backend ? g->backend : "?");
	}
	if (section)
		*section = key && json_object_object_get_ex(root, key, &v) ? json_object_get(v) : NULL;
	return 0;
}

int enpu_plan_from_json(const enpu_graph *g, const char *text, size_t len,
			const char *label, enpu_plan *p, enpu_err *e)
{
	return enpu_plan_from_json_section(g, text, len, label, p, NULL, NULL, e);
}

/* plan.json's header: format, version, alignment, arena_bytes, and a
 * schedule that is the graph's op order. */
static int read_header(const enpu_graph *g, json_object *root, const char *label, enpu_plan *p,
		       enpu_err *e)
{
	json_object *v, *sched;
	int64_t iv;

	if (!(v = enpu_json_field(root, "format", json_type_string, label, "", e)))
		return -1;
	if (strcmp(json_object_get_string(v), "eulernpu-plan") != 0)
		return enpu_fail(e, ENPU_E_ARTIFACT, label, NULL,
				 "field 'format' is not \"eulernpu-plan\"");
	if (!(v = enpu_json_field(root, "version", json_type_int, label, "", e)) ||
	    enpu_json_int(v, 1, 1, label, "field 'version'", &iv, e) < 0)
		return -1;
	if (!(v = enpu_json_field(root, "alignment", json_type_int, label, "", e)) ||
	    enpu_json_int(v, ENPU_PLAN_ALIGN, ENPU_PLAN_ALIGN, label, "field 'alignment'", &iv, e) < 0)
		return -1;
	if (!(v = enpu_json_field(root, "arena_bytes", json_type_int, label, "", e)) ||
	    enpu_json_int(v, 0, INT64_MAX, label, "field 'arena_bytes'", &iv, e) < 0)
		return -1;
	p->arena_bytes = (uint64_t)iv;
	if (json_object_object_get_ex(root, "strategy", NULL)) {   /* absent in older plans */
		if (!(v = enpu_json_field(root, "lower_bound", json_type_int, label, "", e)) ||
		    enpu_json_int(v, 0, (int64_t)p->arena_bytes, label, "field 'lower_bound'", &iv, e) < 0 ||
		    !(v = enpu_json_field(root, "strategy", json_type_string, label, "", e)))
			return -1;
		p->lower_bound = (uint64_t)iv;
		if (json_object_get_string_len(v) >= (int)sizeof p->strategy)
			return enpu_fail(e, ENPU_E_ARTIFACT, label, NULL, "field 'strategy' is too long");
		snprintf(p->strategy, sizeof p->strategy, "%s", json_object_get_string(v));
	}
	if (!(sched = enpu_json_field(root, "schedule", json_type_array, label, "", e)))
		return -1;
	if (json_object_array_length(sched) != (size_t)g->n_ops)
		return enpu_fail(e, ENPU_E_ARTIFACT, label, NULL,
				 "field 'schedule' lists %zu ops, the graph has %d",
				 json_object_array_length(sched), g->n_ops);
	for (int k = 0; k < g->n_ops; k++) {
		json_object *s = json_object_array_get_idx(sched, (size_t)k);
		if (!json_object_is_type(s, json_type_string) ||
		    strcmp(json_object_get_string(s), g->ops[k].name) != 0)
			return enpu_fail(e, ENPU_E_ARTIFACT, label, NULL,
					 "field 'schedule' entry %d is not op '%s'", k, g->ops[k].name);
	}
	return 0;
}

/* An op named by buffer k's field (first_op, last_op): its index. */
static int buf_op(const enpu_graph *g, const plan_names *nm, json_object *o, const char *field,
		  size_t k, const char *label, const char *ctx, int *out, enpu_err *e)
{
	json_object *v;

	if (!(v = enpu_json_field(o, field, json_type_string, label, ctx, e)))
		return -1;
	if ((*out = name_find(nm->ops, g->n_ops, json_object_get_string(v))) < 0)
		return enpu_fail(e, ENPU_E_ARTIFACT, label, NULL, "buffer %zu: unknown op '%s'",
				 k, json_object_get_string(v));
	return 0;
}

/* Buffer k (object o) into p->bufs[k], claiming its tensor. */
static int read_buffer(const enpu_graph *g, const plan_names *nm, json_object *o, size_t k,
		       const char *label, enpu_plan *p, enpu_err *e)
{
	enpu_plan_buf *b = &p->bufs[k];
	json_object *v;
	int64_t iv;
	char ctx[64];

	snprintf(ctx, sizeof(ctx), "buffer %zu: ", k);
	if (!json_object_is_type(o, json_type_object))
		return enpu_fail(e, ENPU_E_ARTIFACT, label, NULL, "buffer %zu is not an object", k);
	if (!(v = enpu_json_field(o, "tensor", json_type_string, label, ctx, e)))
		return -1;
	b->tensor = name_find(nm->tensors, g->n_tensors, json_object_get_string(v));
	if (b->tensor < 0 || g->tensors[b->tensor].kind != ENPU_TK_INTERMEDIATE)
		return enpu_fail(e, ENPU_E_ARTIFACT, label, NULL,
				 "buffer %zu: tensor '%s' is not an intermediate of the graph",
				 k, json_object_get_string(v));
	if (p->tensor_buf[b->tensor] >= 0)
		return enpu_fail(e, ENPU_E_ARTIFACT, label, NULL,
				 "tensor '%s' has more than one buffer", json_object_get_string(v));
	p->tensor_buf[b->tensor] = (int)k;
	if (!(v = enpu_json_field(o, "offset", json_type_int, label, ctx, e)) ||
	    enpu_json_int(v, 0, INT64_MAX, label, "field 'offset'", &iv, e) < 0)
		return -1;
	b->offset = (uint64_t)iv;
	if (!(v = enpu_json_field(o, "bytes", json_type_int, label, ctx, e)) ||
	    enpu_json_int(v, 0, INT64_MAX, label, "field 'bytes'", &iv, e) < 0)
		return -1;
	b->bytes = (uint64_t)iv;
	if (buf_op(g, nm, o, "first_op", k, label, ctx, &b->first_op, e) < 0 ||
	    buf_op(g, nm, o, "last_op", k, label, ctx, &b->last_op, e) < 0)
		return -1;
	return 0;
}

/* Scratch entry k ({"op", "offset", "bytes"}) into p->bufs[at], claiming
 * its op. */
static int read_scratch(const enpu_graph *g, const plan_names *nm, json_object *o, size_t k,
			int at, const char *label, enpu_plan *p, enpu_err *e)
{
	enpu_plan_buf *b = &p->bufs[at];
	json_object *v;
	int64_t iv;
	char ctx[64];

	snprintf(ctx, sizeof(ctx), "scratch %zu: ", k);
	if (!json_object_is_type(o, json_type_object))
		return enpu_fail(e, ENPU_E_ARTIFACT, label, NULL, "scratch %zu is not an object", k);
	b->tensor = -1;
	if (buf_op(g, nm, o, "op", k, label, ctx, &b->first_op, e) < 0)
		return -1;
	b->last_op = b->first_op;
	if (p->op_scratch[b->first_op] >= 0)
		return enpu_fail(e, ENPU_E_ARTIFACT, label, NULL, "op '%s' has more than one scratch",
				 g->ops[b->first_op].name);
	p->op_scratch[b->first_op] = at;
	if (!(v = enpu_json_field(o, "offset", json_type_int, label, ctx, e)) ||
	    enpu_json_int(v, 0, INT64_MAX, label, "field 'offset'", &iv, e) < 0)
		return -1;
	b->offset = (uint64_t)iv;
	if (!(v = enpu_json_field(o, "bytes", json_type_int, label, ctx, e)) ||
	    enpu_json_int(v, 1, INT64_MAX, label, "field 'bytes'", &iv, e) < 0)
		return -1;
	b->bytes = (uint64_t)iv;
	return 0;
}

int enpu_plan_from_json_section(const enpu_graph *g, const char *text, size_t len,
				const char *label, enpu_plan *p, const char *key,
				struct json_object **section, enpu_err *e)
{
	json_object *root, *bufs, *scr = NULL;
	plan_names nm = {NULL, NULL};
	size_t nb, ns = 0;

	memset(p, 0, sizeof(*p));
	if (section)
		*section = NULL;
	if (!(root = enpu_json_parse(text, len, label, e)))
		return -1;
	if (read_header(g, root, label, p, e) < 0 ||
	    !(bufs = enpu_json_field(root, "buffers", json_type_array, label, "", e)))
		goto fail;
	nb = json_object_array_length(bufs);
	if (nb > (size_t)g->n_tensors) {
		enpu_fail(e, ENPU_E_ARTIFACT, label, NULL, "field 'buffers' has more entries than tensors");
		goto fail;
	}
	if (json_object_object_get_ex(root, "scratch", NULL)) {
		if (!(scr = enpu_json_field(root, "scratch", json_type_array, label, "", e)))
			goto fail;
		if ((ns = json_object_array_length(scr)) > (size_t)g->n_ops) {
			enpu_fail(e, ENPU_E_ARTIFACT, label, NULL,
				  "field 'scratch' has more entries than ops");
			goto fail;
		}
	}
	p->n_tensors = g->n_tensors;
	p->tensor_buf = malloc(sizeof(int) * (size_t)(g->n_tensors ? g->n_tensors : 1));
	p->bufs = calloc(nb + ns ? nb + ns : 1, sizeof(*p->bufs));
	if (scr) {
		p->n_ops = g->n_ops;
		if ((p->op_scratch = malloc(sizeof(int) * (size_t)(g->n_ops ? g->n_ops : 1))))
			for (int k = 0; k < g->n_ops; k++)
				p->op_scratch[k] = -1;
	}
	if (!p->tensor_buf || !p->bufs || (scr && !p->op_scratch) || names_init(g, &nm) < 0) {
		enpu_fail(e, ENPU_E_NOMEM, label, NULL, "cannot allocate the memory plan");
		goto fail;
	}
	for (int i = 0; i < g->n_tensors; i++)
		p->tensor_buf[i] = -1;
	for (size_t k = 0; k < nb; k++)
		if (read_buffer(g, &nm, json_object_array_get_idx(bufs, k), k, label, p, e) < 0)
			goto fail;
	for (size_t k = 0; k < ns; k++)
		if (read_scratch(g, &nm, json_object_array_get_idx(scr, k), k, (int)(nb + k), label, p,
				 e) < 0)
			goto fail;
	names_free(&nm);
	p->n_bufs = (int)(nb + ns);
	if (read_section(g, root, label, key, section, e) < 0)
		goto fail;
	json_object_put(root);
	if (enpu_plan_verify(g, p, label, e) < 0) {
		if (section) {
			json_object_put(*section);
			*section = NULL;
		}
		enpu_plan_free(p);
		return -1;
	}
	return 0;
fail:
	names_free(&nm);
	json_object_put(root);
	enpu_plan_free(p);
	return -1;
}

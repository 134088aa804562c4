/* validate_attrs.c: the validator's reading of an op's `attrs:` through
 * the op's row of the op table (each attribute's type, default, the spec
 * version that added it), with line:col errors, and where a shape rule's
 * reason about an attribute points (spec_int.h). */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "spec_int.h"

int enpu_spec_fail(const enpu_spec *s, enpu_err *e, int line, int col, enpu_code code,
		   const char *fix, const char *fmt, ...)
{
	char msg[sizeof(e->message)], at[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	enpu_spec_where(s, line, col, at, sizeof(at));
	return enpu_fail(e, code, at, fix, "%s", msg);
}

typedef struct actx {
	const enpu_spec *s;
	enpu_err *e;
} actx;

#define afail(c, ...) enpu_spec_fail((c)->s, (c)->e, __VA_ARGS__)

/* ---- attributes ------------------------------------------------------- */

static int attr_int(const enpu_ynode *v, int *out)
{
	int64_t x;

	if (enpu_ynode_int(v, &x) || x < INT_MIN || x > INT_MAX)
		return -1;
	*out = (int)x;
	return 0;
}

/* A dims (reshape's shape) or perm (transpose's) attribute: a list of at
 * most ENPU_MAX_DIMS integers. nm: the op's name. */
static int attr_dims(actx *c, const char *nm, const enpu_attrdef *ad, const enpu_ynode *v,
		     enpu_attrs *a)
{
	if (v->kind != ENPU_YN_SEQ || v->n > ENPU_MAX_DIMS)
		return afail(c, v->line, v->col, ENPU_E_ATTR, NULL,
			     "attribute '%s' of op '%.64s' must be a list of at most %d integers",
			     ad->name, nm, ENPU_MAX_DIMS);
	for (size_t i = 0; i < v->n; i++) {
		int64_t x;

		if (ad->type == ENPU_ATTR_DIMS ? enpu_ynode_int(v->kids[i], &x) != 0
					       : attr_int(v->kids[i], &a->perm[i]) != 0)
			return afail(c, v->kids[i]->line, v->kids[i]->col, ENPU_E_ATTR, NULL,
				     "attribute '%s' of op '%.64s' must be a list of integers",
				     ad->name, nm);
		if (ad->type == ENPU_ATTR_DIMS)
			a->shape[i] = x;
	}
	if (ad->type == ENPU_ATTR_DIMS)
		a->n_shape = (int)v->n;
	else
		a->n_perm = (int)v->n;
	return 0;
}

/* A list attribute (spec v2, LIST or SIZES): at most ad->count integers
 * into vals, their number into *n. */
static int attr_list(actx *c, const char *nm, const enpu_attrdef *ad, const enpu_ynode *v,
		     int *n, int64_t *vals)
{
	if (v->kind != ENPU_YN_SEQ || v->n > (size_t)ad->count)
		return afail(c, v->line, v->col, ENPU_E_ATTR, NULL,
			     "attribute '%s' of op '%.64s' must be a list of at most %d integers",
			     ad->name, nm, ad->count);
	for (size_t i = 0; i < v->n; i++)
		if (enpu_ynode_int(v->kids[i], &vals[i]))
			return afail(c, v->kids[i]->line, v->kids[i]->col, ENPU_E_ATTR, NULL,
				     "attribute '%s' of op '%.64s' must be a list of integers",
				     ad->name, nm);
	*n = (int)v->n;
	return 0;
}

/* An enum attribute: one of its choices, its index into *out. */
static int attr_enum(actx *c, const char *nm, const enpu_attrdef *ad, const enpu_ynode *v,
		     int *out)
{
	char list[128];
	size_t off = 0;

	if (v->kind == ENPU_YN_SCALAR)
		for (int i = 0; ad->choices[i]; i++)
			if (strcmp(v->text, ad->choices[i]) == 0) {
				*out = i;
				return 0;
			}
	list[0] = 0;
	for (int i = 0; ad->choices[i] && off < sizeof(list); i++)
		off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s", i ? ", " : "",
					ad->choices[i]);
	return afail(c, v->line, v->col, ENPU_E_ATTR, NULL,
		     "attribute '%s' of op '%.64s' must be one of: %s", ad->name, nm, list);
}

static int attr_value(actx *c, const enpu_sop *op, const enpu_attrdef *ad,
		      const enpu_ynode *v, enpu_attrs *a)
{
	char *base = (char *)a + ad->offset;
	const char *nm = op->name.s;
	double d;
	int iv;

	switch (ad->type) {
	case ENPU_ATTR_FLOAT:
		if (enpu_ynode_float(v, &d) || isnan(d) || (isfinite(d) && fabs(d) > FLT_MAX))
			return afail(c, v->line, v->col, ENPU_E_ATTR, NULL,
				     "attribute '%s' of op '%.64s' must be a number", ad->name, nm);
		*(float *)base = (float)d;
		return 0;
	case ENPU_ATTR_INT:
		if (attr_int(v, &iv))
			return afail(c, v->line, v->col, ENPU_E_ATTR, NULL,
				     "attribute '%s' of op '%.64s' must be an integer", ad->name, nm);
		*(int *)base = iv;
		return 0;
	case ENPU_ATTR_BOOL01:
		if (enpu_ynode_bool(v, &iv) && (attr_int(v, &iv) || (iv != 0 && iv != 1)))
			return afail(c, v->line, v->col, ENPU_E_ATTR, NULL,
				     "attribute '%s' of op '%.64s' must be 0 or 1", ad->name, nm);
		*(int *)base = iv;
		return 0;
	case ENPU_ATTR_INTS:
		if (v->kind != ENPU_YN_SEQ || v->n != (size_t)ad->count)
			return afail(c, v->line, v->col, ENPU_E_ATTR, NULL,
				     "attribute '%s' of op '%.64s' must be a list of %d integers",
				     ad->name, nm, ad->count);
		for (int i = 0; i < ad->count; i++)
			if (attr_int(v->kids[i], &((int *)base)[i]))
				return afail(c, v->kids[i]->line, v->kids[i]->col, ENPU_E_ATTR, NULL,
					     "attribute '%s' of op '%.64s' must be a list of %d integers",
					     ad->name, nm, ad->count);
		return 0;
	case ENPU_ATTR_DIMS:
	case ENPU_ATTR_PERM:
		return attr_dims(c, nm, ad, v, a);
	case ENPU_ATTR_FLOATS:
		if (v->kind != ENPU_YN_SEQ || v->n != (size_t)ad->count)
			return afail(c, v->line, v->col, ENPU_E_ATTR, NULL,
				     "attribute '%s' of op '%.64s' must be a list of %d numbers",
				     ad->name, nm, ad->count);
		for (int i = 0; i < ad->count; i++)
			if (enpu_ynode_float(v->kids[i], &d) || isnan(d) ||
			    (isfinite(d) && fabs(d) > FLT_MAX))
				return afail(c, v->kids[i]->line, v->kids[i]->col, ENPU_E_ATTR, NULL,
					     "attribute '%s' of op '%.64s' must be a list of %d numbers",
					     ad->name, nm, ad->count);
			else
				((float *)base)[i] = (float)d;
		return 0;
	case ENPU_ATTR_LIST:
		return attr_list(c, nm, ad, v, &((enpu_ilist *)base)->n, ((enpu_ilist *)base)->v);
	case ENPU_ATTR_SIZES:
		return attr_list(c, nm, ad, v, &((enpu_sizes *)base)->n, ((enpu_sizes *)base)->v);
	case ENPU_ATTR_ENUM:
		return attr_enum(c, nm, ad, v, (int *)base);
	}
	return afail(c, v->line, v->col, ENPU_E_INTERNAL, NULL, "attribute type %d", (int)ad->type);
}

int enpu_parse_op_attrs(const enpu_spec *s, const enpu_sop *op, const enpu_opdef *d, enpu_attrs *a,
			enpu_err *e)
{
	actx ctx = {s, e}, *c = &ctx;

	const enpu_ynode *m = op->attrs;

	enpu_attrs_defaults(d, a);
	if (!m)
		return 0;
	for (size_t i = 0; i < m->n; i++) {
		const enpu_ynode *k = m->kids[2 * i], *v = m->kids[2 * i + 1];
		int j;

		if (k->kind != ENPU_YN_SCALAR)
			return afail(c, k->line, k->col, ENPU_E_SCHEMA, NULL,
				     "attribute names of op '%.64s' must be strings", op->name.s);
		for (j = 0; d->attrs[j].name; j++)
			if (strcmp(d->attrs[j].name, k->text) == 0)
				break;
		if (!d->attrs[j].name) {
			char list[256], near[96] = "";
			size_t off = 0;
			int bd = 3;

			list[0] = 0;
			for (int t = 0; d->attrs[t].name && off < sizeof(list); t++) {
				int dist = enpu_edit_distance(k->text, d->attrs[t].name, 2);

				off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s",
							t ? ", " : "", d->attrs[t].name);
				if (dist < bd) {
					bd = dist;
					snprintf(near, sizeof(near), "; did you mean '%s'?",
						 d->attrs[t].name);
				}
			}
			if (!d->attrs[0].name)
				return afail(c, k->line, k->col, ENPU_E_ATTR, "remove the attribute",
					     "unknown attribute '%.64s' of op '%.64s': '%s' takes no attributes",
					     k->text, op->name.s, d->name);
			return afail(c, k->line, k->col, ENPU_E_ATTR, NULL,
				     "unknown attribute '%.64s' of op '%.64s' (%s takes: %s)%s",
				     k->text, op->name.s, d->name, list, near);
		}
		if (j >= (int)(sizeof(a->set) * CHAR_BIT))
			return afail(c, k->line, k->col, ENPU_E_INTERNAL, NULL,
				     "op '%s' has too many attributes", d->name);
		if (a->set & (1u << j))
			return afail(c, k->line, k->col, ENPU_E_SCHEMA, "remove one of the two",
				     "duplicate key '%s' in attrs of op '%.64s'", k->text, op->name.s);
		if (enpu_attr_since(d, j) > c->s->version)
			return afail(c, k->line, k->col, ENPU_E_ATTR, "write 'eulernpu: 2' at the top of the spec",
				     "attribute '%s' of op '%.64s' needs eulernpu: 2 (this spec is eulernpu: %d)",
				     k->text, op->name.s, c->s->version);
		if (attr_value(c, op, &d->attrs[j], v, a))
			return -1;
		a->set |= 1u << j;
	}
	return 0;
}

/* A shape rule's reason "attribute 'NAME'..." or "attribute 'NAME'[i]..."
 * (shape_move.c) is about that attribute (entry i) of the op: its
 * line:col when the spec writes it, else the op's. 1 if why is such a
 * reason. */
int enpu_attr_where(const enpu_sop *op, const char *why, int *line, int *col)
{
	static const char pre[] = "attribute '";
	const char *name = why + sizeof(pre) - 1, *q;
	const enpu_ynode *m = op->attrs;

	if (strncmp(why, pre, sizeof(pre) - 1) != 0 || !(q = strchr(name, '\'')))
		return 0;
	*line = op->line;
	*col = op->col;
	for (size_t i = 0; m && i < m->n; i++) {
		const enpu_ynode *k = m->kids[2 * i], *v = m->kids[2 * i + 1];
		unsigned long e;
		char *end;

		if (k->kind != ENPU_YN_SCALAR || strlen(k->text) != (size_t)(q - name) ||
		    strncmp(k->text, name, (size_t)(q - name)) != 0)
			continue;
		*line = v->line;
		*col = v->col;
		if (q[1] == '[' && v->kind == ENPU_YN_SEQ &&
		    (e = strtoul(q + 2, &end, 10), *end == ']') && e < v->n) {
			*line = v->kids[e]->line;
			*col = v->kids[e]->col;
		}
	}
	return 1;
}

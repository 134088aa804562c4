/* ydoc.c: the one limited YAML loader: libyaml events into a node tree that
 * keeps every node's line:col. Aliases share the anchored node (no copies);
 * the nodes they stand for are counted as if expanded, so an alias bomb
 * fails fast with ENPU_E_LIMIT. Also the tree's readers and field checks. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>
#include <json-c/json.h>
#include "ydoc.h"

struct enpu_ydoc {
	char *label;
	enpu_ynode **nodes;       /* the arena */
	size_t n_nodes, alloc_nodes;
	const enpu_ynode *root;   /* NULL for an empty document */
};

typedef struct open_node {
	enpu_ynode *node;
	uint64_t start;       /* node count when it opened */
	char *anchor;         /* registered when it closes */
} open_node;

typedef struct lctx {
	enpu_ydoc *d;
	const enpu_yaml_opts *o;
	enpu_err *e;
	const char *yaml;
	size_t len;
	json_object *anchors;     /* name -> index into d->nodes */
	uint64_t count;           /* nodes after expansion so far */
	open_node *stack;
	int depth, max_depth;
	enpu_ynode *root;
	int docs;
	char fix[64];             /* limit_fix's */
} lctx;

/* ---- scalars ---------------------------------------------------------- */

int enpu_yaml_null_text(const char *s)
{
	static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};

	for (int i = 0; nulls[i]; i++)
		if (strcmp(s, nulls[i]) == 0)
			return 1;
	return 0;
}

int enpu_ynode_null(const enpu_ynode *n)
{
	if (!n)
		return 1;
	return n->kind == ENPU_YN_SCALAR && n->plain && enpu_yaml_null_text(n->text);
}

int enpu_ynode_int(const enpu_ynode *n, int64_t *v)
{
	const char *p;
	char *end;
	int base = 10, neg = 0;
	unsigned long long x;

	if (!n || n->kind != ENPU_YN_SCALAR || !n->plain || n->len == 0 ||
	    strlen(n->text) != n->len)
		return -1;
	p = n->text;
	if (*p == '-' || *p == '+')
		neg = *p++ == '-';
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'o')) {
		base = p[1] == 'x' ? 16 : 8;
		p += 2;
	}
	if (!*p)
		return -1;
	for (const char *q = p; *q; q++) {
		int ok = base == 16 ? (*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'f') ||
				      (*q >= 'A' && *q <= 'F')
			 : base == 8 ? *q >= '0' && *q <= '7' : *q >= '0' && *q <= '9';
		if (!ok)
			return -1;
	}
	/* the magnitude unsigned, so that -9223372036854775808 (INT64_MIN, as
	 * slice's ends may be written) fits like every other int64 */
	errno = 0;
	x = strtoull(p, &end, base);
	if (errno == ERANGE || x > (unsigned long long)INT64_MAX + (unsigned long long)neg)
		return -2;
	*v = neg ? (int64_t)(0 - x) : (int64_t)x;
	return 0;
}

int enpu_ynode_float(const enpu_ynode *n, double *v)
{
	const char *p;
	int digits = 0;
	int64_t iv;

	if (enpu_ynode_int(n, &iv) == 0) {
		*v = (double)iv;
		return 0;
	}
	if (!n || n->kind != ENPU_YN_SCALAR || !n->plain || n->len == 0 ||
	    strlen(n->text) != n->len)
		return -1;
	p = n->text;
	if (*p == '-' || *p == '+')
		p++;
	if (!strcmp(p, ".inf") || !strcmp(p, ".Inf") || !strcmp(p, ".INF")) {
		*v = n->text[0] == '-' ? -HUGE_VAL : HUGE_VAL;
		return 0;
	}
	if (p == n->text && (!strcmp(p, ".nan") || !strcmp(p, ".NaN") || !strcmp(p, ".NAN"))) {
		*v = NAN;
		return 0;
	}
	/* [0-9]* ( . [0-9]* )? ( [eE] [-+]? [0-9]+ )? with at least one digit
	 * before the exponent: rules out strtod's "inf", "nan" and hex floats */
	while (*p >= '0' && *p <= '9')
		p++, digits++;
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++)
			digits++;
	if (!digits)
		return -1;
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '-' || *p == '+')
			p++;
		if (!(*p >= '0' && *p <= '9'))
			return -1;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p)
		return -1;
	*v = strtod(n->text, NULL);
	return 0;
}

int enpu_ynode_bool(const enpu_ynode *n, int *v)
{
	static const char *const t[] = {"true", "True", "TRUE", NULL};
	static const char *const f[] = {"false", "False", "FALSE", NULL};

	if (!n || n->kind != ENPU_YN_SCALAR || !n->plain)
		return -1;
	for (int i = 0; t[i]; i++) {
		if (!strcmp(n->text, t[i]))
			return *v = 1, 0;
		if (!strcmp(n->text, f[i]))
			return *v = 0, 0;
	}
	return -1;
}

int enpu_edit_distance(const char *a, const char *b, int cap)
{
	int la = (int)strnlen(a, 257), lb = (int)strnlen(b, 257);
	int row[258], best;

	if (la > 256 || lb > 256 || abs(la - lb) > cap)
		return cap + 1;
	for (int j = 0; j <= lb; j++)
		row[j] = j;
	for (int i = 1; i <= la; i++) {
		int diag = row[0];

		row[0] = i;
		best = row[0];
		for (int j = 1; j <= lb; j++) {
			int up = row[j];
			int v = diag + (a[i - 1] != b[j - 1]);

			if (row[j - 1] + 1 < v)
				v = row[j - 1] + 1;
			if (up + 1 < v)
				v = up + 1;
			row[j] = v;
			diag = up;
			if (v < best)
				best = v;
		}
		if (best > cap)
			return cap + 1;
	}
	return row[lb] > cap ? cap + 1 : row[lb];
}

const char *enpu_closest(const char *w, const char *const *cands)
{
	const char *best = NULL;
	int bd = 3;

	for (int i = 0; cands[i]; i++) {
		int d = enpu_edit_distance(w, cands[i], 2);

		if (d < bd && d < (int)strlen(cands[i])) {
			bd = d;
			best = cands[i];
		}
	}
	return best;
}

void enpu_join(const char *const *list, char *buf, size_t cap)
{
	size_t off = 0;

	if (!cap)
		return;
	buf[0] = 0;
	for (int i = 0; list[i] && off < cap; i++)
		off += (size_t)snprintf(buf + off, cap - off, "%s%s", i ? ", " : "", list[i]);
}

const enpu_ynode *enpu_ynode_get(const enpu_ynode *map, const char *key)
{
	for (size_t i = 0; i < map->n; i++) {
		const enpu_ynode *k = map->kids[2 * i];

		if (k->kind == ENPU_YN_SCALAR && strcmp(k->text, key) == 0)
			return map->kids[2 * i + 1];
	}
	return NULL;
}

/* ---- allowed fields --------------------------------------------------- */

int enpu_yaml_failv(enpu_err *e, enpu_code code, const char *label, int line, int col,
		    const char *fix, const char *fmt, va_list ap)
{
	char msg[sizeof(e->message)], where[600];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	snprintf(where, sizeof(where), "%s:%d:%d", label, line, col);
	return enpu_fail(e, code, where, fix, "%s", msg);
}

int enpu_yaml_fail(enpu_err *e, enpu_code code, const char *label, int line, int col,
		   const char *fix, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = enpu_yaml_failv(e, code, label, line, col, fix, fmt, ap);
	va_end(ap);
	return r;
}

/* ---- typed getters ---------------------------------------------------- */

int enpu_yread_failv(const enpu_yread *r, const enpu_ynode *n, const char *fix, const char *fmt,
		     va_list ap)
{
	return enpu_yaml_failv(r->e, r->code, r->label, n ? n->line : 1, n ? n->col : 1, fix, fmt,
			       ap);
}

int enpu_yread_fail(const enpu_yread *r, const enpu_ynode *n, const char *fix, const char *fmt,
		    ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = enpu_yread_failv(r, n, fix, fmt, ap);
	va_end(ap);
	return rc;
}

const char *enpu_ynode_txt(const enpu_ynode *n)
{
	if (!n)
		return "";
	return n->kind == ENPU_YN_SCALAR ? n->text : n->kind == ENPU_YN_SEQ ? "[...]" : "{...}";
}

int enpu_yread_int(const enpu_yread *r, const enpu_ynode *v, const char *what, int64_t lo,
		   int64_t hi, int64_t *out)
{
	int64_t x;

	if (!v || enpu_ynode_int(v, &x) || x < lo || x > hi)
		return enpu_yread_fail(r, v, NULL, "%s must be an integer from %lld to %lld (got '%.32s')",
				       what, (long long)lo, (long long)hi, enpu_ynode_txt(v));
	*out = x;
	return 0;
}

int enpu_yread_pos(const enpu_yread *r, const enpu_ynode *v, const char *what, double hi,
		   const char *fix, double *out)
{
	double x;

	if (!v || enpu_ynode_float(v, &x) || !isfinite(x) || !(x > 0) || x > hi) {
		if (isinf(hi))
			return enpu_yread_fail(r, v, fix, "%s must be a finite number greater than 0 "
					       "(got '%.32s')", what, enpu_ynode_txt(v));
		return enpu_yread_fail(r, v, fix, "%s must be a number greater than 0 and at most "
				       "%.0f (got '%.32s')", what, hi, enpu_ynode_txt(v));
	}
	*out = x;
	return 0;
}

int enpu_yread_choice(const enpu_yread *r, const enpu_ynode *v, const char *field,
		      const char *const *names, int *idx)
{
	char list[128], fix[160];
	const char *near;

	if (v && v->kind == ENPU_YN_SCALAR)
		for (int i = 0; names[i]; i++)
			if (strcmp(v->text, names[i]) == 0) {
				*idx = i;
				return 0;
			}
	enpu_join(names, list, sizeof(list));
	snprintf(fix, sizeof(fix), "use one of: %s", list);
	near = v && v->kind == ENPU_YN_SCALAR ? enpu_closest(v->text, names) : NULL;
	return enpu_yread_fail(r, v, fix, "'%s' must be one of %s (got '%.32s')%s%s%s", field, list,
			       enpu_ynode_txt(v), near ? " (did you mean '" : "", near ? near : "",
			       near ? "'?)" : "");
}

int enpu_yread_ints(const enpu_yread *r, const enpu_ynode *v, const char *what, const char *shape,
		    const char *fix, size_t n, const char *const *item_what, int64_t lo,
		    int64_t hi, int64_t *out)
{
	if (!v || v->kind != ENPU_YN_SEQ || v->n != n)
		return enpu_yread_fail(r, v, fix, "%s must be a list of %s", what, shape);
	for (size_t i = 0; i < n; i++)
		if (enpu_yread_int(r, v->kids[i], item_what[i], lo, hi, &out[i]))
			return -1;
	return 0;
}

static int unknown_key(enpu_err *e, const enpu_ynode *k, const char *const *allowed,
		       const char *in_what, const char *label, enpu_code code, int flags)
{
	char list[256], fix[320];
	const char *near = enpu_closest(k->text, allowed);

	enpu_join(allowed, list, sizeof(list));
	if (!(flags & ENPU_YF_FIELD))
		return enpu_yaml_fail(e, code, label, k->line, k->col, NULL,
				      "unknown key '%.64s' %s (allowed: %s)%s%s%s", k->text, in_what,
				      list, near ? "; did you mean '" : "", near ? near : "",
				      near ? "'?" : "");
	snprintf(fix, sizeof(fix), "use one of: %s", list);
	return enpu_yaml_fail(e, code, label, k->line, k->col, fix, "unknown field '%.64s' %s%s%s%s",
			      k->text, in_what, near ? " (did you mean '" : "", near ? near : "",
			      near ? "'?)" : "");
}

int enpu_yaml_fields(const enpu_ynode *map, const char *const *allowed, const char *in_what,
		     const char *label, enpu_code code, int flags, const enpu_ynode **keys,
		     const enpu_ynode **vals, enpu_err *e)
{
	const char *noun = flags & ENPU_YF_FIELD ? "field" : "key";
	int n = 0;

	while (allowed[n]) {
		if (keys)
			keys[n] = NULL;
		vals[n++] = NULL;
	}
	for (size_t i = 0; i < map->n; i++) {
		const enpu_ynode *k = map->kids[2 * i], *v = map->kids[2 * i + 1];
		int j;

		if (k->kind != ENPU_YN_SCALAR)
			return enpu_yaml_fail(e, code, label, k->line, k->col, NULL,
					      "keys %s must be strings", in_what);
		for (j = 0; j < n; j++)
			if (strcmp(k->text, allowed[j]) == 0)
				break;
		if (j == n)
			return unknown_key(e, k, allowed, in_what, label, code, flags);
		if (vals[j] || (keys && keys[j]))
			return enpu_yaml_fail(e, code, label, k->line, k->col, "remove one of the two",
					      "duplicate %s '%s' %s", noun, k->text, in_what);
		if (keys)
			keys[j] = k;
		vals[j] = (flags & ENPU_YF_NULL_ABSENT) && enpu_ynode_null(v) ? NULL : v;
	}
	return 0;
}

/* ---- events into nodes ------------------------------------------------ */

static int nomem(lctx *c)
{
	return enpu_fail(c->e, ENPU_E_NOMEM, c->d->label, NULL, "out of memory parsing the %s",
			 c->o->what);
}

static int fail_mark(lctx *c, const yaml_mark_t *m, enpu_code code, const char *fix,
		     const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int fail_mark(lctx *c, const yaml_mark_t *m, enpu_code code, const char *fix,
		     const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = enpu_yaml_failv(c->e, code, c->d->label, (int)m->line + 1, (int)m->column + 1, fix,
			    fmt, ap);
	va_end(ap);
	return r;
}

/* A limit error's code and fix: with the caller's own code the limits are
 * fixed constants, so the fix keeps only its first half ("flatten the file"). */
static enpu_code limit_code(const lctx *c)
{
	return c->o->code ? c->o->code : ENPU_E_LIMIT;
}

static const char *limit_fix(lctx *c, const char *fix)
{
	const char *or = strstr(fix, " or raise");

	if (!c->o->code || !or)
		return fix;
	snprintf(c->fix, sizeof(c->fix), "%.*s", (int)(or - fix - (or[-1] == ',')), fix);
	return c->fix;
}

static enpu_ynode *new_node(lctx *c, int kind, const yaml_mark_t *m)
{
	enpu_ydoc *d = c->d;
	enpu_ynode *n;

	if (++c->count > c->o->max_nodes) {
		fail_mark(c, m, limit_code(c), limit_fix(c, "simplify the file or raise max_yaml_nodes"),
			  "%s has more than %llu YAML nodes (after expanding aliases)",
			  c->o->what, (unsigned long long)c->o->max_nodes);
		return NULL;
	}
	if (d->n_nodes == d->alloc_nodes) {
		size_t na = d->alloc_nodes ? d->alloc_nodes * 2 : 64;
		enpu_ynode **nn = realloc(d->nodes, na * sizeof(*nn));

		if (!nn)
			return nomem(c), NULL;
		d->nodes = nn;
		d->alloc_nodes = na;
	}
	n = calloc(1, sizeof(*n));
	if (!n)
		return nomem(c), NULL;
	d->nodes[d->n_nodes++] = n;
	n->kind = kind;
	n->line = (int)m->line + 1;
	n->col = (int)m->column + 1;
	n->height = 1;
	return n;
}

/* Attach a finished node (or an alias of one) to the open collection. */
static int attach(lctx *c, enpu_ynode *n)
{
	enpu_ynode *p;

	if (c->depth == 0) {
		c->root = n;
		return 0;
	}
	p = c->stack[c->depth - 1].node;
	if (p->n == p->alloc) {
		size_t na = p->alloc ? p->alloc * 2 : 4;
		enpu_ynode **nk = realloc(p->kids, na * sizeof(*nk));

		if (!nk)
			return nomem(c);
		p->kids = nk;
		p->alloc = na;
	}
	p->kids[p->n++] = n;
	if (n->height + 1 > p->height)
		p->height = n->height + 1;
	return 0;
}

static int add_anchor(lctx *c, const char *name, size_t idx)
{
	json_object *v = json_object_new_int64((int64_t)idx);

	if (!v || json_object_object_add(c->anchors, name, v)) {
		json_object_put(v);
		return nomem(c);
	}
	return 0;
}

static int yaml_error(lctx *c, yaml_parser_t *p)
{
	yaml_mark_t m = p->problem_mark;
	const char *invalid = c->o->invalid ? c->o->invalid : "invalid YAML";
	enpu_code code = c->o->code ? c->o->code : ENPU_E_YAML;

	if (p->error == YAML_MEMORY_ERROR)
		return nomem(c);
	if (p->error == YAML_READER_ERROR) {
		/* reader errors (bad UTF-8) only know the byte offset */
		size_t off = p->problem_offset < c->len ? p->problem_offset : c->len;

		m.line = m.column = 0;
		for (size_t i = 0; i < off; i++) {
			if (c->yaml[i] == '\n')
				m.line++, m.column = 0;
			else
				m.column++;
		}
	}
	if (p->context)
		return fail_mark(c, &m, code, c->o->fix, "%s: %s (%s that starts at %d:%d)", invalid,
				 p->problem ? p->problem : "syntax error", p->context,
				 (int)p->context_mark.line + 1, (int)p->context_mark.column + 1);
	return fail_mark(c, &m, code, c->o->fix, "%s: %s", invalid,
			 p->problem ? p->problem : "syntax error");
}

static int on_scalar(lctx *c, yaml_event_t *ev)
{
	enpu_ynode *n = new_node(c, ENPU_YN_SCALAR, &ev->start_mark);

	if (!n)
		return -1;
	n->text = malloc(ev->data.scalar.length + 1);
	if (!n->text)
		return nomem(c);
	memcpy(n->text, ev->data.scalar.value, ev->data.scalar.length);
	n->text[ev->data.scalar.length] = 0;
	n->len = ev->data.scalar.length;
	n->plain = ev->data.scalar.plain_implicit && ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
	n->size = 1;
	if (ev->data.scalar.anchor &&
	    add_anchor(c, (const char *)ev->data.scalar.anchor, c->d->n_nodes - 1))
		return -1;
	return attach(c, n);
}

static int on_open(lctx *c, yaml_event_t *ev)
{
	const yaml_mark_t *m = &ev->start_mark;
	int seq = ev->type == YAML_SEQUENCE_START_EVENT;
	const yaml_char_t *anchor = seq ? ev->data.sequence_start.anchor
				    : ev->data.mapping_start.anchor;
	enpu_ynode *n;

	if (c->depth >= c->max_depth)
		return fail_mark(c, m, limit_code(c),
				 limit_fix(c, "flatten the file or raise max_yaml_depth"),
				 "%s nests deeper than %d levels", c->o->what, c->max_depth);
	n = new_node(c, seq ? ENPU_YN_SEQ : ENPU_YN_MAP, m);
	if (!n)
		return -1;
	c->stack[c->depth].node = n;
	c->stack[c->depth].start = c->count;
	c->stack[c->depth].anchor = NULL;
	if (anchor && !(c->stack[c->depth].anchor = strdup((const char *)anchor)))
		return nomem(c);
	/* the index of n in the arena, recorded for the anchor at the end */
	n->size = c->d->n_nodes - 1;
	c->depth++;
	return 0;
}

static int on_close(lctx *c)
{
	open_node *o = &c->stack[--c->depth];
	size_t idx = (size_t)o->node->size;
	enpu_ynode *n = o->node;
	int r = 0;

	n->size = c->count - o->start + 1;
	if (n->kind == ENPU_YN_MAP)
		n->n /= 2;    /* kids were appended key, value, ...: now pairs */
	/* registered only now, so an alias inside its own anchor is undefined */
	if (o->anchor)
		r = add_anchor(c, o->anchor, idx);
	free(o->anchor);
	o->anchor = NULL;
	return r ? r : attach(c, n);
}

static int on_alias(lctx *c, yaml_event_t *ev)
{
	const yaml_mark_t *m = &ev->start_mark;
	const char *name = (const char *)ev->data.alias.anchor;
	json_object *v;
	enpu_ynode *n;

	if (!json_object_object_get_ex(c->anchors, name, &v))
		return fail_mark(c, m, c->o->code ? c->o->code : ENPU_E_YAML,
				 "define the anchor (&name) before its alias",
				 "invalid YAML: alias '*%s' names no earlier anchor", name);
	n = c->d->nodes[json_object_get_int64(v)];
	if (c->depth + n->height > c->max_depth)
		return fail_mark(c, m, limit_code(c),
				 limit_fix(c, "flatten the file or raise max_yaml_depth"),
				 "%s nests deeper than %d levels (after expanding alias '*%s')",
				 c->o->what, c->max_depth, name);
	/* count what the alias stands for: c->count stays <= the limit,
	 * and n->size <= the limit, so the sum cannot wrap */
	c->count += n->size;
	if (c->count > c->o->max_nodes)
		return fail_mark(c, m, limit_code(c),
				 limit_fix(c, "expand fewer aliases, or raise max_yaml_nodes"),
				 "%s has more than %llu YAML nodes after expanding alias '*%s'",
				 c->o->what, (unsigned long long)c->o->max_nodes, name);
	return attach(c, n);
}

static int has_anchor(const yaml_event_t *ev)
{
	return ev->type == YAML_ALIAS_EVENT ||
	       (ev->type == YAML_SCALAR_EVENT && ev->data.scalar.anchor) ||
	       (ev->type == YAML_MAPPING_START_EVENT && ev->data.mapping_start.anchor) ||
	       (ev->type == YAML_SEQUENCE_START_EVENT && ev->data.sequence_start.anchor);
}

static int on_event(lctx *c, yaml_event_t *ev)
{
	if (c->o->no_aliases && has_anchor(ev))
		return fail_mark(c, &ev->start_mark, c->o->code ? c->o->code : ENPU_E_YAML,
				 "write the value out", "anchors and aliases are not allowed in the %s",
				 c->o->what);
	switch (ev->type) {
	case YAML_DOCUMENT_START_EVENT:
		if (c->docs++)
			return fail_mark(c, &ev->start_mark, c->o->code ? c->o->code : ENPU_E_SCHEMA,
					 "keep one document per file", "%s holds more than one YAML document", c->o->what);
		return 0;
	case YAML_SCALAR_EVENT:
		return on_scalar(c, ev);
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		return on_open(c, ev);
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		return on_close(c);
	case YAML_ALIAS_EVENT:
		return on_alias(c, ev);
	default:
		return 0;
	}
}

static int build_tree(lctx *c)
{
	yaml_parser_t p;
	yaml_event_t ev;
	int r = 0, done = 0;

	if (!yaml_parser_initialize(&p))
		return nomem(c);
	yaml_parser_set_input_string(&p, (const unsigned char *)c->yaml, c->len);
	while (!done) {
		if (!yaml_parser_parse(&p, &ev)) {
			r = yaml_error(c, &p);
			break;
		}
		done = ev.type == YAML_STREAM_END_EVENT;
		r = on_event(c, &ev);
		yaml_event_delete(&ev);
		if (r)
			break;
	}
	yaml_parser_delete(&p);
	for (int i = 0; i < c->depth; i++)
		free(c->stack[i].anchor);
	return r;
}

/* ---- documents -------------------------------------------------------- */

int enpu_yaml_load(const char *text, size_t len, const char *label, const enpu_yaml_opts *o,
		   enpu_ydoc **doc, enpu_err *e)
{
	lctx c;
	enpu_ydoc *d;
	int r = -1;

	*doc = NULL;
	memset(&c, 0, sizeof(c));
	d = calloc(1, sizeof(*d));
	if (!d || !(d->label = strdup(label))) {
		free(d);
		return enpu_fail(e, ENPU_E_NOMEM, label, NULL, "out of memory parsing '%s'", label);
	}
	c.d = d;
	c.o = o;
	c.e = e;
	c.yaml = text ? text : "";
	c.len = text ? len : 0;
	c.max_depth = o->max_depth > 0 ? o->max_depth : 1;
	if (c.len > o->max_bytes) {
		enpu_fail(e, ENPU_E_LIMIT, label, "make the file smaller or raise max_spec_bytes",
			  "'%s' is %zu bytes (limit %llu)", label, c.len,
			  (unsigned long long)o->max_bytes);
		goto out;
	}
	c.anchors = json_object_new_object();
	c.stack = calloc((size_t)c.max_depth, sizeof(*c.stack));
	if (!c.anchors || !c.stack) {
		nomem(&c);
		goto out;
	}
	if (build_tree(&c))
		goto out;
	/* a document holding only `~` or nothing is empty */
	d->root = c.root && !enpu_ynode_null(c.root) ? c.root : NULL;
	*doc = d;
	d = NULL;
	r = 0;
out:
	json_object_put(c.anchors);
	free(c.stack);
	enpu_ydoc_free(d);
	return r;
}

int enpu_yaml_parse(const char *text, size_t len, const char *label, const enpu_limits *lim,
		    enpu_ydoc **doc, enpu_err *e)
{
	enpu_yaml_opts o = {0};

	if (!lim)
		lim = enpu_limits_default();
	o.what = "target file";
	o.max_bytes = lim->max_spec_bytes;
	o.max_nodes = lim->max_yaml_nodes;
	o.max_depth = lim->max_yaml_depth;
	return enpu_yaml_load(text, len, label ? label : "target.yaml", &o, doc, e);
}

const enpu_ynode *enpu_ydoc_root(const enpu_ydoc *d)
{
	return d ? d->root : NULL;
}

const char *enpu_ydoc_label(const enpu_ydoc *d)
{
	return d->label;
}

void enpu_ydoc_free(enpu_ydoc *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n_nodes; i++) {
		free(d->nodes[i]->text);
		free(d->nodes[i]->kids);
		free(d->nodes[i]);
	}
	free(d->nodes);
	free(d->label);
	free(d);
}

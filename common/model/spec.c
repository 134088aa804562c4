/* spec.c: spec.yaml (format v1) parsing: libyaml events into a node tree
 * that keeps every node's line:col, then the schema walk into enpu_spec.
 * Aliases share the anchored node (no copies); the nodes they stand for are
 * counted as if expanded, so an alias bomb fails fast with ENPU_E_LIMIT. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>
#include <json-c/json.h>
#include "buf.h"
#include "spec_int.h"

typedef struct open_node {
	enpu_ynode *node;
	uint64_t start;       /* node count when it opened */
	char *anchor;         /* registered when it closes */
} open_node;

typedef struct pctx {
	enpu_spec *s;
	const enpu_limits *lim;
	enpu_err *e;
	const char *yaml;
	size_t len;
	json_object *anchors;     /* name -> index into s->nodes */
	uint64_t count;           /* nodes after expansion so far */
	open_node *stack;
	int depth, max_depth;
	enpu_ynode *root;
	int docs;
	const char *what;         /* "spec" or "target file", in limit errors */
	char wbuf[600];
} pctx;

static const char *const top_keys[] = {"eulernpu", "name", "backend", "inputs", "outputs",
				       "weights", "components", "targets", NULL};
enum { K_VERSION, K_NAME, K_BACKEND, K_INPUTS, K_OUTPUTS, K_WEIGHTS, K_COMPONENTS,
       K_TARGETS, K_NTOP };
static const char *const tensor_keys[] = {"name", "dtype", "shape", NULL};
static const char *const comp_keys[] = {"name", "ops", NULL};
static const char *const op_keys[] = {"name", "op", "in", "out", "attrs", NULL};

const char *enpu_spec_where(const enpu_spec *s, int line, int col, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s:%d:%d", s && s->label ? s->label : "spec.yaml", line, col);
	return buf;
}

static int failv(pctx *c, int line, int col, enpu_code code, const char *fix,
		 const char *fmt, va_list ap)
{
	char msg[sizeof(c->e->message)];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	enpu_spec_where(c->s, line, col, c->wbuf, sizeof(c->wbuf));
	return enpu_fail(c->e, code, c->wbuf, fix, "%s", msg);
}

static int fail_at(pctx *c, const enpu_ynode *n, enpu_code code, const char *fix,
		   const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int fail_at(pctx *c, const enpu_ynode *n, enpu_code code, const char *fix,
		   const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = failv(c, n ? n->line : 1, n ? n->col : 1, code, fix, fmt, ap);
	va_end(ap);
	return r;
}

static int nomem(pctx *c)
{
	return enpu_fail(c->e, ENPU_E_NOMEM, c->s->label, NULL, "out of memory parsing the spec");
}

/* ---- scalars ---------------------------------------------------------- */

int enpu_ynode_null(const enpu_ynode *n)
{
	static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};

	if (!n)
		return 1;
	if (n->kind != ENPU_YN_SCALAR || !n->plain)
		return 0;
	for (int i = 0; nulls[i]; i++)
		if (strcmp(n->text, nulls[i]) == 0)
			return 1;
	return 0;
}

int enpu_ynode_int(const enpu_ynode *n, int64_t *v)
{
	const char *p;
	char *end;
	int base = 10, neg = 0;
	long long x;

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
	errno = 0;
	x = strtoll(p, &end, base);
	if (errno == ERANGE)
		return -2;
	*v = neg ? -x : x;
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

/* ---- events into nodes ------------------------------------------------ */

static enpu_ynode *new_node(pctx *c, int kind, const yaml_mark_t *m)
{
	enpu_spec *s = c->s;
	enpu_ynode *n;

	if (++c->count > c->lim->max_yaml_nodes) {
		enpu_spec_where(s, (int)m->line + 1, (int)m->column + 1, c->wbuf, sizeof(c->wbuf));
		enpu_fail(c->e, ENPU_E_LIMIT, c->wbuf, "simplify the file or raise max_yaml_nodes",
			  "%s has more than %llu YAML nodes (after expanding aliases)",
			  c->what, (unsigned long long)c->lim->max_yaml_nodes);
		return NULL;
	}
	if (s->n_nodes == s->alloc_nodes) {
		size_t na = s->alloc_nodes ? s->alloc_nodes * 2 : 64;
		enpu_ynode **nn = realloc(s->nodes, na * sizeof(*nn));

		if (!nn)
			return nomem(c), NULL;
		s->nodes = nn;
		s->alloc_nodes = na;
	}
	n = calloc(1, sizeof(*n));
	if (!n)
		return nomem(c), NULL;
	s->nodes[s->n_nodes++] = n;
	n->kind = kind;
	n->line = (int)m->line + 1;
	n->col = (int)m->column + 1;
	n->height = 1;
	return n;
}

/* Attach a finished node (or an alias of one) to the open collection. */
static int attach(pctx *c, enpu_ynode *n)
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

static int add_anchor(pctx *c, const char *name, size_t idx)
{
	json_object *v = json_object_new_int64((int64_t)idx);

	if (!v || json_object_object_add(c->anchors, name, v)) {
		json_object_put(v);
		return nomem(c);
	}
	return 0;
}

static int yaml_error(pctx *c, yaml_parser_t *p)
{
	int line, col;

	if (p->error == YAML_MEMORY_ERROR)
		return nomem(c);
	if (p->error == YAML_READER_ERROR) {
		/* reader errors (bad UTF-8) only know the byte offset */
		size_t off = p->problem_offset < c->len ? p->problem_offset : c->len;

		line = 1;
		col = 1;
		for (size_t i = 0; i < off; i++) {
			if (c->yaml[i] == '\n')
				line++, col = 1;
			else
				col++;
		}
	} else {
		line = (int)p->problem_mark.line + 1;
		col = (int)p->problem_mark.column + 1;
	}
	enpu_spec_where(c->s, line, col, c->wbuf, sizeof(c->wbuf));
	if (p->context)
		return enpu_fail(c->e, ENPU_E_YAML, c->wbuf, NULL, "invalid YAML: %s (%s that starts at %d:%d)",
				 p->problem ? p->problem : "syntax error", p->context,
				 (int)p->context_mark.line + 1, (int)p->context_mark.column + 1);
	return enpu_fail(c->e, ENPU_E_YAML, c->wbuf, NULL, "invalid YAML: %s",
			 p->problem ? p->problem : "syntax error");
}

static int on_event(pctx *c, yaml_event_t *ev)
{
	const yaml_mark_t *m = &ev->start_mark;
	enpu_ynode *n;

	switch (ev->type) {
	case YAML_DOCUMENT_START_EVENT:
		if (c->docs++) {
			enpu_spec_where(c->s, (int)m->line + 1, (int)m->column + 1, c->wbuf,
					sizeof(c->wbuf));
			return enpu_fail(c->e, ENPU_E_SCHEMA, c->wbuf,
					 "keep one document per file", "%s holds more than one YAML document",
					 c->what);
		}
		return 0;
	case YAML_SCALAR_EVENT:
		if (!(n = new_node(c, ENPU_YN_SCALAR, m)))
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
		    add_anchor(c, (const char *)ev->data.scalar.anchor, c->s->n_nodes - 1))
			return -1;
		return attach(c, n);
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT: {
		const yaml_char_t *anchor = ev->type == YAML_SEQUENCE_START_EVENT
			? ev->data.sequence_start.anchor : ev->data.mapping_start.anchor;

		if (c->depth >= c->max_depth) {
			enpu_spec_where(c->s, (int)m->line + 1, (int)m->column + 1, c->wbuf,
					sizeof(c->wbuf));
			return enpu_fail(c->e, ENPU_E_LIMIT, c->wbuf, "flatten the file or raise max_yaml_depth",
					 "%s nests deeper than %d levels", c->what, c->max_depth);
		}
		n = new_node(c, ev->type == YAML_SEQUENCE_START_EVENT ? ENPU_YN_SEQ : ENPU_YN_MAP, m);
		if (!n)
			return -1;
		c->stack[c->depth].node = n;
		c->stack[c->depth].start = c->count;
		c->stack[c->depth].anchor = NULL;
		if (anchor && !(c->stack[c->depth].anchor = strdup((const char *)anchor)))
			return nomem(c);
		/* the index of n in the arena, recorded for the anchor at the end */
		n->size = c->s->n_nodes - 1;
		c->depth++;
		return 0;
	}
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT: {
		open_node *o = &c->stack[--c->depth];
		size_t idx = (size_t)o->node->size;
		int r = 0;

		n = o->node;
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
	case YAML_ALIAS_EVENT: {
		json_object *v;
		const char *name = (const char *)ev->data.alias.anchor;

		if (!json_object_object_get_ex(c->anchors, name, &v)) {
			enpu_spec_where(c->s, (int)m->line + 1, (int)m->column + 1, c->wbuf,
					sizeof(c->wbuf));
			return enpu_fail(c->e, ENPU_E_YAML, c->wbuf, "define the anchor (&name) before its alias",
					 "invalid YAML: alias '*%s' names no earlier anchor", name);
		}
		n = c->s->nodes[json_object_get_int64(v)];
		if (c->depth + n->height > c->max_depth) {
			enpu_spec_where(c->s, (int)m->line + 1, (int)m->column + 1, c->wbuf,
					sizeof(c->wbuf));
			return enpu_fail(c->e, ENPU_E_LIMIT, c->wbuf, "flatten the file or raise max_yaml_depth",
					 "%s nests deeper than %d levels (after expanding alias '*%s')",
					 c->what, c->max_depth, name);
		}
		/* count what the alias stands for: c->count stays <= the limit,
		 * and n->size <= the limit, so the sum cannot wrap */
		c->count += n->size;
		if (c->count > c->lim->max_yaml_nodes) {
			enpu_spec_where(c->s, (int)m->line + 1, (int)m->column + 1, c->wbuf,
					sizeof(c->wbuf));
			return enpu_fail(c->e, ENPU_E_LIMIT, c->wbuf, "expand fewer aliases, or raise max_yaml_nodes",
					 "%s has more than %llu YAML nodes after expanding alias '*%s'",
					 c->what, (unsigned long long)c->lim->max_yaml_nodes, name);
		}
		return attach(c, n);
	}
	default:
		return 0;
	}
}

static int build_tree(pctx *c)
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

/* ---- schema ----------------------------------------------------------- */

static const enpu_ynode *find_key(const enpu_ynode *map, const char *key)
{
	for (size_t i = 0; i < map->n; i++) {
		const enpu_ynode *k = map->kids[2 * i];

		if (k->kind == ENPU_YN_SCALAR && strcmp(k->text, key) == 0)
			return map->kids[2 * i + 1];
	}
	return NULL;
}

/* Split a mapping into the values of its allowed keys (vals[i] for
 * allowed[i], NULL when absent). Unknown and duplicate keys fail. */
static int fields(pctx *c, const enpu_ynode *map, const char *const *allowed,
		  const enpu_ynode **vals, const char *in_what)
{
	int n = 0;

	while (allowed[n])
		vals[n++] = NULL;
	for (size_t i = 0; i < map->n; i++) {
		const enpu_ynode *k = map->kids[2 * i];
		int j;

		if (k->kind != ENPU_YN_SCALAR)
			return fail_at(c, k, ENPU_E_SCHEMA, NULL, "keys %s must be strings", in_what);
		for (j = 0; j < n; j++)
			if (strcmp(k->text, allowed[j]) == 0)
				break;
		if (j == n) {
			char list[256];
			const char *near = enpu_closest(k->text, allowed);

			enpu_join(allowed, list, sizeof(list));
			return fail_at(c, k, ENPU_E_SCHEMA, NULL,
				       "unknown key '%.64s' %s (allowed: %s)%s%s%s", k->text, in_what,
				       list, near ? "; did you mean '" : "", near ? near : "",
				       near ? "'?" : "");
		}
		if (vals[j])
			return fail_at(c, k, ENPU_E_SCHEMA, "remove one of the two", "duplicate key '%s' %s",
				       k->text, in_what);
		vals[j] = map->kids[2 * i + 1];
	}
	return 0;
}

static int need(pctx *c, const enpu_ynode *v, const enpu_ynode *map, const char *key,
		const char *in_what)
{
	if (v)
		return 0;
	return fail_at(c, map, ENPU_E_SCHEMA, NULL, "missing required key '%s' %s", key, in_what);
}

static int valid_name(const char *s, size_t len)
{
	if (len == 0 || strlen(s) != len)
		return 0;
	for (size_t i = 0; i < len; i++) {
		char ch = s[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' || ch == '-'))
			return 0;
	}
	return 1;
}

/* A string-valued field: a non-null scalar without NUL bytes. */
static int get_str(pctx *c, const enpu_ynode *v, enpu_sstr *out, const char *what)
{
	if (!v || v->kind != ENPU_YN_SCALAR || enpu_ynode_null(v) || strlen(v->text) != v->len)
		return fail_at(c, v, ENPU_E_SCHEMA, NULL, "%s must be a string", what);
	out->s = v->text;
	out->line = v->line;
	out->col = v->col;
	return 0;
}

static int get_list(pctx *c, const enpu_ynode *v, const char *what, int nonempty)
{
	if (v->kind != ENPU_YN_SEQ)
		return fail_at(c, v, ENPU_E_SCHEMA, NULL, "%s must be a list", what);
	if (nonempty && v->n == 0)
		return fail_at(c, v, ENPU_E_SCHEMA, NULL, "%s must not be empty", what);
	if (v->n > (size_t)c->lim->max_yaml_nodes || v->n > (size_t)(INT32_MAX / 2))
		return fail_at(c, v, ENPU_E_LIMIT, NULL, "%s is too long", what);
	return 0;
}

static int parse_dtype(pctx *c, const enpu_ynode *v, const char *kind, const char *name,
		       enpu_dtype *dt)
{
	enpu_sstr s;
	char what[128];

	snprintf(what, sizeof(what), "'dtype' of %s '%.64s'", kind, name);
	if (get_str(c, v, &s, what))
		return -1;
	*dt = enpu_dtype_parse(s.s);
	if (*dt == ENPU_DT_F32)
		return 0;
	if (!strcmp(s.s, "int8") || !strcmp(s.s, "int32"))
		return fail_at(c, v, ENPU_E_DTYPE, "use float32 (quantized ops come in a later format version)",
			       "dtype '%s' is not supported yet (spec v1 supports float32)", s.s);
	return fail_at(c, v, ENPU_E_DTYPE, "use float32",
		       "unknown dtype '%.64s' of %s '%.64s' (spec v1 supports float32)", s.s, kind, name);
}

static int parse_shape(pctx *c, const enpu_ynode *v, const char *kind, const char *name,
		       enpu_shape *sh)
{
	uint64_t numel;
	char buf[200];

	if (v->kind != ENPU_YN_SEQ)
		return fail_at(c, v, ENPU_E_SCHEMA, "write the shape as a list such as [1, 8]",
			       "'shape' of %s '%.64s' must be a list of positive integers", kind, name);
	if (v->n > ENPU_MAX_DIMS)
		return fail_at(c, v, ENPU_E_LIMIT, NULL,
			       "%s '%.64s' has %zu dimensions; at most %d are supported", kind, name,
			       v->n, ENPU_MAX_DIMS);
	memset(sh, 0, sizeof(*sh));
	sh->ndim = (int)v->n;
	for (size_t i = 0; i < v->n; i++) {
		int64_t d;
		int r = enpu_ynode_int(v->kids[i], &d);

		if (r == -2)
			return fail_at(c, v->kids[i], ENPU_E_LIMIT,
				       "make the tensor smaller or raise max_tensor_elems",
				       "dimension %zu of %s '%.64s' is too large (more than %llu elements)",
				       i, kind, name, (unsigned long long)c->lim->max_tensor_elems);
		if (r || d < 0)
			return fail_at(c, v->kids[i], ENPU_E_SCHEMA, "write the shape as a list such as [1, 8]",
				       "'shape' of %s '%.64s' must be a list of positive integers", kind, name);
		if (d == 0)
			return fail_at(c, v->kids[i], ENPU_E_SHAPE, "use dimensions >= 1",
				       "%s '%.64s' has a zero dimension; empty tensors are not supported in spec v1",
				       kind, name);
		sh->dim[i] = d;
	}
	if (enpu_shape_numel(sh, &numel) || numel > c->lim->max_tensor_elems)
		return fail_at(c, v, ENPU_E_LIMIT, "make the tensor smaller or raise max_tensor_elems",
			       "%s '%.64s' of shape %s has more than %llu elements", kind, name,
			       enpu_shape_str(sh, buf, sizeof(buf)),
			       (unsigned long long)c->lim->max_tensor_elems);
	return 0;
}

/* inputs / weights: lists of {name, dtype, shape}. */
static int parse_tensors(pctx *c, const enpu_ynode *list, const char *key, const char *kind,
			 enpu_stensor **out, int *n_out)
{
	enpu_stensor *t;
	char what[64];

	snprintf(what, sizeof(what), "'%s'", key);
	if (get_list(c, list, what, 0))
		return -1;
	if (list->n == 0)
		return 0;
	t = calloc(list->n, sizeof(*t));
	if (!t)
		return nomem(c);
	*out = t;
	for (size_t i = 0; i < list->n; i++) {
		const enpu_ynode *it = list->kids[i], *v[3];
		char in_what[64];

		snprintf(in_what, sizeof(in_what), "in %s %zu", kind, i + 1);
		if (it->kind != ENPU_YN_MAP)
			return fail_at(c, it, ENPU_E_SCHEMA, "write {name: x, dtype: float32, shape: [1, 8]}",
				       "each entry of '%s' must be a mapping {name, dtype, shape}", key);
		if (fields(c, it, tensor_keys, v, in_what) ||
		    need(c, v[0], it, "name", in_what) || need(c, v[1], it, "dtype", in_what) ||
		    need(c, v[2], it, "shape", in_what))
			return -1;
		snprintf(what, sizeof(what), "'name' of %s %zu", kind, i + 1);
		if (get_str(c, v[0], &t[i].name, what) ||
		    parse_dtype(c, v[1], kind, t[i].name.s, &t[i].dtype) ||
		    parse_shape(c, v[2], kind, t[i].name.s, &t[i].shape))
			return -1;
		t[i].line = it->line;
		t[i].col = it->col;
		(*n_out)++;
	}
	return 0;
}

static int parse_strlist(pctx *c, const enpu_ynode *v, const char *what, int nonempty,
			 enpu_sstr **out, int *n)
{
	enpu_sstr *a;

	if (get_list(c, v, what, nonempty))
		return -1;
	*n = 0;
	if (v->n == 0)
		return 0;
	a = calloc(v->n, sizeof(*a));
	if (!a)
		return nomem(c);
	*out = a;
	for (size_t i = 0; i < v->n; i++) {
		char w[160];

		snprintf(w, sizeof(w), "each entry of %s", what);
		if (get_str(c, v->kids[i], &a[i], w))
			return -1;
		(*n)++;
	}
	return 0;
}

static int parse_op(pctx *c, const enpu_ynode *it, int comp, enpu_sop *op)
{
	const enpu_ynode *v[5];
	char what[160];
	const char *nm;

	if (it->kind != ENPU_YN_MAP)
		return fail_at(c, it, ENPU_E_SCHEMA, "write {name: fc1, op: matmul, in: [x, w], out: h}",
			       "each op must be a mapping {name, op, in, out, attrs}");
	if (fields(c, it, op_keys, v, "in an op") || need(c, v[0], it, "name", "in an op"))
		return -1;
	op->line = it->line;
	op->col = it->col;
	op->component = comp;
	if (get_str(c, v[0], &op->name, "'name' of an op"))
		return -1;
	nm = op->name.s;
	snprintf(what, sizeof(what), "in op '%.64s'", nm);
	if (need(c, v[1], it, "op", what) || need(c, v[2], it, "in", what) ||
	    need(c, v[3], it, "out", what))
		return -1;
	snprintf(what, sizeof(what), "'op' of op '%.64s'", nm);
	if (get_str(c, v[1], &op->op, what))
		return -1;
	snprintf(what, sizeof(what), "'in' of op '%.64s'", nm);
	if (parse_strlist(c, v[2], what, 0, &op->in, &op->n_in))
		return -1;
	snprintf(what, sizeof(what), "'out' of op '%.64s'", nm);
	if (v[3]->kind == ENPU_YN_SCALAR) {
		if (!(op->out = calloc(1, sizeof(*op->out))))
			return nomem(c);
		if (get_str(c, v[3], &op->out[0], what))
			return -1;
		op->n_out = 1;
	} else if (parse_strlist(c, v[3], what, 1, &op->out, &op->n_out)) {
		return -1;
	}
	if (v[4] && !enpu_ynode_null(v[4])) {
		if (v[4]->kind != ENPU_YN_MAP)
			return fail_at(c, v[4], ENPU_E_SCHEMA, "write attrs: {name: value, ...}",
				       "'attrs' of op '%.64s' must be a mapping", nm);
		op->attrs = v[4];
	}
	return 0;
}

static int parse_components(pctx *c, const enpu_ynode *list)
{
	enpu_spec *s = c->s;
	uint64_t total = 0;
	int k = 0;

	if (get_list(c, list, "'components'", 1))
		return -1;
	/* count the ops first: one allocation, and the max_ops limit up front */
	for (size_t i = 0; i < list->n; i++) {
		const enpu_ynode *it = list->kids[i], *ops;

		if (it->kind == ENPU_YN_MAP && (ops = find_key(it, "ops")) && ops->kind == ENPU_YN_SEQ)
			total += ops->n;
	}
	if (total > c->lim->max_ops)
		return fail_at(c, list, ENPU_E_LIMIT, "split the model or raise max_ops",
			       "spec has %llu ops (limit %llu)", (unsigned long long)total,
			       (unsigned long long)c->lim->max_ops);
	s->comps = calloc(list->n, sizeof(*s->comps));
	s->ops = total ? calloc((size_t)total, sizeof(*s->ops)) : NULL;
	if (!s->comps || (total && !s->ops))
		return nomem(c);
	for (size_t i = 0; i < list->n; i++) {
		const enpu_ynode *it = list->kids[i], *v[2];
		enpu_scomp *cp = &s->comps[i];
		char what[128];

		if (it->kind != ENPU_YN_MAP)
			return fail_at(c, it, ENPU_E_SCHEMA, "write {name: hidden, ops: [...]}",
				       "each component must be a mapping {name, ops}");
		if (fields(c, it, comp_keys, v, "in a component") ||
		    need(c, v[0], it, "name", "in a component"))
			return -1;
		if (get_str(c, v[0], &cp->name, "'name' of a component"))
			return -1;
		snprintf(what, sizeof(what), "in component '%.64s'", cp->name.s);
		if (need(c, v[1], it, "ops", what))
			return -1;
		snprintf(what, sizeof(what), "'ops' of component '%.64s'", cp->name.s);
		if (get_list(c, v[1], what, 1))
			return -1;
		cp->line = it->line;
		cp->col = it->col;
		cp->first_op = k;
		s->n_comps++;
		for (size_t j = 0; j < v[1]->n; j++) {
			/* total was counted from the first "ops" key; fields() has
			 * since ruled out a second one, so k stays in bounds */
			if (parse_op(c, v[1]->kids[j], (int)i, &s->ops[k]))
				return s->n_ops = k + 1, -1;
			s->n_ops = ++k;
			cp->n_ops++;
		}
	}
	return 0;
}

/* YAML to JSON for targets: plain scalars become null/bool/int/double,
 * anything quoted a string. Depth is bounded by max_yaml_depth. */
static int to_json(pctx *c, const enpu_ynode *n, json_object **out)
{
	*out = NULL;
	if (n->kind == ENPU_YN_SCALAR) {
		int64_t iv;
		double dv;
		int bv;

		if (enpu_ynode_null(n))
			return 0;
		if (enpu_ynode_bool(n, &bv) == 0)
			*out = json_object_new_boolean(bv);
		else if (enpu_ynode_int(n, &iv) == 0)
			*out = json_object_new_int64(iv);
		else if (enpu_ynode_float(n, &dv) == 0)
			*out = json_object_new_double(dv);
		else
			*out = json_object_new_string_len(n->text, (int)(n->len > INT32_MAX ? INT32_MAX : n->len));
		return *out ? 0 : nomem(c);
	}
	if (n->kind == ENPU_YN_SEQ) {
		if (!(*out = json_object_new_array()))
			return nomem(c);
		for (size_t i = 0; i < n->n; i++) {
			json_object *v;

			if (to_json(c, n->kids[i], &v))
				goto fail;
			if (json_object_array_add(*out, v)) {
				json_object_put(v);
				nomem(c);
				goto fail;
			}
		}
		return 0;
	}
	if (!(*out = json_object_new_object()))
		return nomem(c);
	for (size_t i = 0; i < n->n; i++) {
		const enpu_ynode *k = n->kids[2 * i];
		json_object *v;

		if (k->kind != ENPU_YN_SCALAR || strlen(k->text) != k->len) {
			fail_at(c, k, ENPU_E_TARGET, NULL, "keys in targets must be strings");
			goto fail;
		}
		if (json_object_object_get_ex(*out, k->text, NULL)) {
			fail_at(c, k, ENPU_E_SCHEMA, "remove one of the two",
				"duplicate key '%.64s' in targets", k->text);
			goto fail;
		}
		if (to_json(c, n->kids[2 * i + 1], &v))
			goto fail;
		if (json_object_object_add(*out, k->text, v)) {
			json_object_put(v);
			nomem(c);
			goto fail;
		}
	}
	return 0;
fail:
	json_object_put(*out);
	*out = NULL;
	return -1;
}

static int parse_targets(pctx *c, const enpu_ynode *v)
{
	char known[128];
	const char *names[ENPU_BK_COUNT + 1];
	json_object *sub;

	for (int i = 0; i < ENPU_BK_COUNT; i++)
		names[i] = enpu_backend_name((enpu_backend)i);
	names[ENPU_BK_COUNT] = NULL;
	enpu_join(names, known, sizeof(known));
	if (enpu_ynode_null(v))
		return 0;
	if (v->kind != ENPU_YN_MAP)
		return fail_at(c, v, ENPU_E_TARGET, "write targets: {npu_sim: {...}}",
			       "'targets' must be a mapping from backend to settings");
	for (size_t i = 0; i < v->n; i++) {
		const enpu_ynode *k = v->kids[2 * i], *val = v->kids[2 * i + 1];

		if (k->kind != ENPU_YN_SCALAR || enpu_backend_parse(k->text) < 0)
			return fail_at(c, k, ENPU_E_TARGET, NULL, "unknown backend '%.64s' in targets (known: %s)",
				       k->kind == ENPU_YN_SCALAR ? k->text : "?", known);
		if (!enpu_ynode_null(val) && val->kind != ENPU_YN_MAP)
			return fail_at(c, val, ENPU_E_TARGET, NULL,
				       "settings of target '%s' must be a mapping", k->text);
	}
	if (to_json(c, v, &c->s->targets))
		return -1;
	/* a backend written with no settings is an empty object, not null */
	json_object_object_foreach(c->s->targets, key, val) {
		if (!val) {
			if (!(sub = json_object_new_object()) ||
			    json_object_object_add(c->s->targets, key, sub))
				return nomem(c);
		}
	}
	return 0;
}

static int parse_root(pctx *c)
{
	enpu_spec *s = c->s;
	const enpu_ynode *root = c->root, *v[K_NTOP];
	int64_t ver;

	if (!root || enpu_ynode_null(root))
		return fail_at(c, NULL, ENPU_E_SCHEMA, "start the file with 'eulernpu: 1'",
			       "spec is empty");
	if (root->kind != ENPU_YN_MAP)
		return fail_at(c, root, ENPU_E_SCHEMA, "start the file with 'eulernpu: 1'",
			       "spec must be a mapping with keys eulernpu, name, inputs, outputs, weights, components");
	s->line = root->line;
	s->col = root->col;
	/* the version first: a newer spec may have keys this one does not know */
	v[K_VERSION] = find_key(root, "eulernpu");
	if (!v[K_VERSION])
		return fail_at(c, root, ENPU_E_SCHEMA, "add 'eulernpu: 1' (the spec format version)",
			       "missing required key 'eulernpu'");
	if (enpu_ynode_int(v[K_VERSION], &ver) || ver != 1)
		return fail_at(c, v[K_VERSION], ENPU_E_VERSION, "write 'eulernpu: 1' or upgrade eulernpu",
			       "unsupported spec format version '%.32s'",
			       v[K_VERSION]->kind == ENPU_YN_SCALAR ? v[K_VERSION]->text : "?");
	if (fields(c, root, top_keys, v, "at the top level") ||
	    need(c, v[K_NAME], root, "name", "at the top level") ||
	    need(c, v[K_INPUTS], root, "inputs", "at the top level") ||
	    need(c, v[K_OUTPUTS], root, "outputs", "at the top level") ||
	    need(c, v[K_COMPONENTS], root, "components", "at the top level"))
		return -1;
	if (get_str(c, v[K_NAME], &s->name, "'name'"))
		return -1;
	if (!valid_name(s->name.s, v[K_NAME]->len))
		return fail_at(c, v[K_NAME], ENPU_E_NAME, "use letters, digits, '_', '.' and '-'",
			       "spec name '%.64s' is not a valid name", s->name.s);
	if (v[K_BACKEND] && get_str(c, v[K_BACKEND], &s->backend, "'backend'"))
		return -1;
	if (get_list(c, v[K_INPUTS], "'inputs'", 1) ||
	    parse_tensors(c, v[K_INPUTS], "inputs", "input", &s->inputs, &s->n_inputs))
		return -1;
	if (parse_strlist(c, v[K_OUTPUTS], "'outputs'", 1, &s->outputs, &s->n_outputs))
		return -1;
	if (v[K_WEIGHTS] && !enpu_ynode_null(v[K_WEIGHTS]) &&
	    parse_tensors(c, v[K_WEIGHTS], "weights", "weight", &s->weights, &s->n_weights))
		return -1;
	if (parse_components(c, v[K_COMPONENTS]))
		return -1;
	if (v[K_TARGETS] && parse_targets(c, v[K_TARGETS]))
		return -1;
	if (v[K_TARGETS] && !enpu_ynode_null(v[K_TARGETS]))
		s->targets_node = v[K_TARGETS];
	return 0;
}

int enpu_spec_parse(const char *yaml, size_t len, const char *label,
		    const enpu_limits *lim, enpu_spec **out, enpu_err *e)
{
	pctx c;
	enpu_spec *s;
	int r = -1;

	*out = NULL;
	if (!lim)
		lim = enpu_limits_default();
	memset(&c, 0, sizeof(c));
	s = calloc(1, sizeof(*s));
	if (!s || !(s->label = strdup(label ? label : "spec.yaml"))) {
		free(s);
		return enpu_fail(e, ENPU_E_NOMEM, label, NULL, "out of memory parsing the spec");
	}
	s->lim = *lim;
	c.s = s;
	c.lim = lim;
	c.e = e;
	c.yaml = yaml;
	c.len = len;
	c.max_depth = lim->max_yaml_depth > 0 ? lim->max_yaml_depth : 1;
	c.what = "spec";
	if (len > lim->max_spec_bytes) {
		enpu_fail(e, ENPU_E_LIMIT, s->label, "make the spec smaller or raise max_spec_bytes",
			  "spec is %zu bytes (limit %llu)", len, (unsigned long long)lim->max_spec_bytes);
		goto out;
	}
	c.anchors = json_object_new_object();
	c.stack = calloc((size_t)c.max_depth, sizeof(*c.stack));
	if (!c.anchors || !c.stack) {
		nomem(&c);
		goto out;
	}
	if (build_tree(&c) || parse_root(&c))
		goto out;
	*out = s;
	s = NULL;
	r = 0;
out:
	json_object_put(c.anchors);
	free(c.stack);
	enpu_spec_free(s);
	return r;
}

/* ---- standalone documents (target files) ------------------------------ */

/* The spec struct serves as the node arena and the label holder; its
 * schema fields stay empty. */
struct enpu_ydoc {
	enpu_spec *s;
	const enpu_ynode *root;   /* NULL for an empty document */
};

int enpu_yaml_parse(const char *text, size_t len, const char *label, const enpu_limits *lim,
		    enpu_ydoc **doc, enpu_err *e)
{
	pctx c;
	enpu_ydoc *d;
	int r = -1;

	*doc = NULL;
	if (!lim)
		lim = enpu_limits_default();
	if (!label)
		label = "target.yaml";
	memset(&c, 0, sizeof(c));
	d = calloc(1, sizeof(*d));
	if (!d || !(d->s = calloc(1, sizeof(*d->s))) || !(d->s->label = strdup(label))) {
		if (d)
			free(d->s);
		free(d);
		return enpu_fail(e, ENPU_E_NOMEM, label, NULL, "out of memory parsing '%s'", label);
	}
	d->s->lim = *lim;
	c.s = d->s;
	c.lim = lim;
	c.e = e;
	c.yaml = text ? text : "";
	c.len = text ? len : 0;
	c.max_depth = lim->max_yaml_depth > 0 ? lim->max_yaml_depth : 1;
	c.what = "target file";
	if (c.len > lim->max_spec_bytes) {
		enpu_fail(e, ENPU_E_LIMIT, label, "make the file smaller or raise max_spec_bytes",
			  "'%s' is %zu bytes (limit %llu)", label, c.len,
			  (unsigned long long)lim->max_spec_bytes);
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

const enpu_ynode *enpu_ydoc_root(const enpu_ydoc *d)
{
	return d ? d->root : NULL;
}

void enpu_ydoc_free(enpu_ydoc *d)
{
	if (!d)
		return;
	enpu_spec_free(d->s);
	free(d);
}

int enpu_spec_load(const char *path, const char *label, const enpu_limits *lim,
		   enpu_spec **out, enpu_err *e)
{
	enpu_buf b = ENPU_BUF_INIT;
	int r;

	*out = NULL;
	if (!lim)
		lim = enpu_limits_default();
	if (enpu_read_file(path, lim->max_spec_bytes, &b, e))
		return -1;
	r = enpu_spec_parse(b.data ? b.data : "", b.len, label ? label : path, lim, out, e);
	enpu_buf_free(&b);
	return r;
}

void enpu_spec_free(enpu_spec *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_nodes; i++) {
		free(s->nodes[i]->text);
		free(s->nodes[i]->kids);
		free(s->nodes[i]);
	}
	free(s->nodes);
	for (int i = 0; i < s->n_ops; i++) {
		free(s->ops[i].in);
		free(s->ops[i].out);
	}
	free(s->ops);
	free(s->comps);
	free(s->inputs);
	free(s->weights);
	free(s->outputs);
	json_object_put(s->targets);
	free(s->label);
	free(s);
}

const char *enpu_spec_name(const enpu_spec *s)
{
	return s->name.s;
}

const char *enpu_spec_label(const enpu_spec *s)
{
	return s->label;
}

const char *enpu_spec_backend(const enpu_spec *s)
{
	return s->backend.s ? s->backend.s : "cpu_ref";
}

int enpu_spec_n_ops(const enpu_spec *s)
{
	return s->n_ops;
}

int enpu_spec_n_components(const enpu_spec *s)
{
	return s->n_comps;
}

struct json_object *enpu_spec_target(const enpu_spec *s, const char *backend)
{
	json_object *v;

	if (!s->targets || !backend || !json_object_object_get_ex(s->targets, backend, &v))
		return NULL;
	return v;
}

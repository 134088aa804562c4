/* target.c: the target options of one compile, resolved from a target file
 * (compile --target) or the spec's targets.<backend>, defaults filled.
 * Positions come from the YAML nodes, so a bad option is an error at its
 * file:line:col; the canonical JSON is what manifest.json records. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "buf.h"
#include "json.h"
#include "spec_int.h"
#include "target.h"
#include "backend.h"

struct enpu_target {
	const enpu_backend_def *def;
	void *opts;              /* the backend's options (def->opts_size bytes), or NULL */
	json_object *json;       /* canonical options, or NULL */
};

/* The mapping of targets.<backend> in the spec, or NULL. */
static const enpu_ynode *spec_node(const enpu_spec *s, const char *backend)
{
	const enpu_ynode *m = s->targets_node;

	if (!m || m->kind != ENPU_YN_MAP)
		return NULL;
	for (size_t i = 0; i < m->n; i++) {
		const enpu_ynode *k = m->kids[2 * i], *v = m->kids[2 * i + 1];

		if (k->kind == ENPU_YN_SCALAR && strcmp(k->text, backend) == 0)
			return enpu_ynode_null(v) ? NULL : v;
	}
	return NULL;
}

/* Options of one backend from node (NULL = none given). */
static int parse_options(enpu_target *t, const enpu_ynode *node, const char *label, enpu_err *e)
{
	const enpu_backend_def *d = t->def;
	char where[600], fix[128];

	if (!d->opts_size) {
		if (enpu_backend_need_map(d, node, label, e) < 0)
			return -1;
		if (node && node->n > 0) {
			snprintf(where, sizeof(where), "%s:%d:%d", label, node->line, node->col);
			snprintf(fix, sizeof(fix), "remove the options of %s", d->name);
			return enpu_fail(e, ENPU_E_TARGET, where, fix,
					 "backend '%s' takes no target options", d->name);
		}
		return 0;
	}
	if (d->opts_parse(d, t->opts, node, label, e) < 0)
		return -1;
	if (!(t->json = d->opts_json(t->opts)))
		return enpu_fail(e, ENPU_E_NOMEM, label, NULL, "out of memory reading the target");
	return 0;
}

int enpu_target_resolve(const enpu_spec *s, const char *backend, const char *path,
			const char *label, const enpu_limits *lim, enpu_target **out,
			enpu_err *e)
{
	enpu_target *t;
	enpu_buf b = ENPU_BUF_INIT;
	enpu_ydoc *doc = NULL;
	const enpu_backend_def *def;
	char known[128], where[600];
	int rc = -1;

	*out = NULL;
	if (!lim)
		lim = enpu_limits_default();
	enpu_backend_names(known, sizeof(known));
	if (!backend) {
		backend = enpu_spec_backend(s);
		if (!enpu_backend_by_name(backend)) {
			snprintf(where, sizeof(where), "%s:%d:%d", s->label, s->backend.line,
				 s->backend.col);
			return enpu_fail(e, ENPU_E_BACKEND, where, NULL,
					 "unknown backend '%.64s' (known: %s)", backend, known);
		}
	}
	if (!(def = enpu_backend_by_name(backend)))
		return enpu_fail(e, ENPU_E_BACKEND, s ? s->label : NULL, NULL,
				 "unknown backend '%.64s' (known: %s)", backend, known);
	if (!(t = calloc(1, sizeof(*t))) || (def->opts_size && !(t->opts = calloc(1, def->opts_size)))) {
		free(t);
		return enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory resolving the target");
	}
	t->def = def;
	if (path) {
		const enpu_ynode *root;

		if (!label)
			label = path;
		if (enpu_read_file(path, lim->max_spec_bytes, &b, e) < 0 ||
		    enpu_yaml_parse(b.data, b.len, label, lim, &doc, e) < 0)
			goto out;
		root = enpu_ydoc_root(doc);
		if (root && root->kind != ENPU_YN_MAP) {
			snprintf(where, sizeof(where), "%s:%d:%d", label, root->line, root->col);
			enpu_fail(e, ENPU_E_TARGET, where, "write the options as a mapping (field: value)",
				  "target file '%s' must hold a mapping of %s options", label, backend);
			goto out;
		}
		if (parse_options(t, root, label, e) < 0)
			goto out;
	} else if (parse_options(t, spec_node(s, backend), s->label, e) < 0) {
		goto out;
	}
	*out = t;
	t = NULL;
	rc = 0;
out:
	enpu_target_free(t);
	enpu_ydoc_free(doc);
	enpu_buf_free(&b);
	return rc;
}

void enpu_target_free(enpu_target *t)
{
	if (!t)
		return;
	json_object_put(t->json);
	free(t->opts);
	free(t);
}

const char *enpu_target_backend(const enpu_target *t)
{
	return t->def->name;
}

const enpu_backend_def *enpu_target_def(const enpu_target *t)
{
	return t->def;
}

const void *enpu_target_options(const enpu_target *t)
{
	return t->opts;
}

struct json_object *enpu_target_json(const enpu_target *t)
{
	return t->json;
}

int enpu_target_lowers(const enpu_target *t, const enpu_opdef *d)
{
	if (t->def->can_lower && !t->def->can_lower(d))
		return 0;
	return !t->def->lowers || t->def->lowers(t->opts, d);
}

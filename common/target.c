/* target.c: the target options of one compile, resolved from a target file
 * (compile --target) or the spec's targets.<backend>, defaults filled.
 * Positions come from the YAML nodes, so a bad option is an error at its
 * file:line:col; the canonical JSON is what manifest.json records. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "buf.h"
#include "graphjson.h"
#include "spec_int.h"
#include "target.h"
#include "board_target.h"

struct enpu_target {
	enpu_backend bk;
	enpu_npu_target npu;     /* npu_sim only */
	enpu_board_target board; /* zynq_ps, fpga_board only */
	json_object *json;       /* canonical options, or NULL */
};

static void known_backends(char *buf, size_t cap)
{
	size_t off = 0;

	buf[0] = 0;
	for (int i = 0; i < ENPU_BK_COUNT && off < cap; i++)
		off += (size_t)snprintf(buf + off, cap - off, "%s%s", i ? ", " : "",
					enpu_backend_name((enpu_backend)i));
}

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
static int parse_options(enpu_target *t, const enpu_ynode *node, const char *label,
			 json_object *spec_json, enpu_err *e)
{
	char where[600];

	if (node && node->kind != ENPU_YN_MAP && t->bk != ENPU_BK_NPU_SIM) {
		snprintf(where, sizeof(where), "%s:%d:%d", label, node->line, node->col);
		return enpu_fail(e, ENPU_E_TARGET, where, "write the options as a mapping (field: value)",
				 "options of backend '%s' must be a mapping",
				 enpu_backend_name(t->bk));
	}
	switch (t->bk) {
	case ENPU_BK_NPU_SIM:
		if (enpu_npu_target_parse(node, label, &t->npu, e) < 0)
			return -1;
		if (!(t->json = enpu_npu_target_json(&t->npu)))
			return enpu_fail(e, ENPU_E_NOMEM, label, NULL, "out of memory reading the target");
		return 0;
	case ENPU_BK_CPU_REF:
		if (node && node->n > 0) {
			snprintf(where, sizeof(where), "%s:%d:%d", label, node->line, node->col);
			return enpu_fail(e, ENPU_E_TARGET, where, "remove the options of cpu_ref",
					 "backend 'cpu_ref' takes no target options");
		}
		return 0;
	case ENPU_BK_ZYNQ_PS:
	case ENPU_BK_FPGA_BOARD:
		(void)spec_json;
		if (enpu_board_target_parse(t->bk, node, label, &t->board, e) < 0)
			return -1;
		if (!(t->json = enpu_board_target_json(&t->board)))
			return enpu_fail(e, ENPU_E_NOMEM, label, NULL, "out of memory reading the target");
		return 0;
	default:
		return enpu_fail(e, ENPU_E_INTERNAL, label, NULL, "backend %d has no target options",
				 (int)t->bk);
	}
}

int enpu_target_resolve(const enpu_spec *s, const char *backend, const char *path,
			const char *label, const enpu_limits *lim, enpu_target **out,
			enpu_err *e)
{
	enpu_target *t;
	enpu_buf b = ENPU_BUF_INIT;
	enpu_ydoc *doc = NULL;
	char known[128], where[600];
	int bk, rc = -1;

	*out = NULL;
	if (!lim)
		lim = enpu_limits_default();
	known_backends(known, sizeof(known));
	if (!backend) {
		backend = enpu_spec_backend(s);
		if (enpu_backend_parse(backend) < 0) {
			snprintf(where, sizeof(where), "%s:%d:%d", s->label, s->backend.line,
				 s->backend.col);
			return enpu_fail(e, ENPU_E_BACKEND, where, NULL,
					 "unknown backend '%.64s' (known: %s)", backend, known);
		}
	}
	if ((bk = enpu_backend_parse(backend)) < 0)
		return enpu_fail(e, ENPU_E_BACKEND, s ? s->label : NULL, NULL,
				 "unknown backend '%.64s' (known: %s)", backend, known);
	if (!(t = calloc(1, sizeof(*t))))
		return enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory resolving the target");
	t->bk = (enpu_backend)bk;
	enpu_npu_target_default(&t->npu);
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
		if (parse_options(t, root, label, NULL, e) < 0)
			goto out;
	} else if (parse_options(t, spec_node(s, backend), s->label,
				 enpu_spec_target(s, backend), e) < 0) {
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
	free(t);
}

const char *enpu_target_backend(const enpu_target *t)
{
	return enpu_backend_name(t->bk);
}

struct json_object *enpu_target_json(const enpu_target *t)
{
	return t->json;
}

const enpu_npu_target *enpu_target_npu(const enpu_target *t)
{
	return t->bk == ENPU_BK_NPU_SIM ? &t->npu : NULL;
}

const enpu_board_target *enpu_target_board(const enpu_target *t)
{
	return t->bk == ENPU_BK_ZYNQ_PS || t->bk == ENPU_BK_FPGA_BOARD ? &t->board : NULL;
}

int enpu_target_lowers(const enpu_target *t, const enpu_opdef *d)
{
	if (!(d->backends & (1u << t->bk)))
		return 0;
	if (t->bk == ENPU_BK_NPU_SIM && !(t->npu.ops & (1u << d->id)))
		return 0;
	return 1;
}

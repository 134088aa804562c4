/* openapi_ops.h: the operations of proto/openapi.yaml for the unit tests
 * that hold the route table (server/routes/routes.c) to it: test_srv_openapi.c
 * (the same set of routes) and test_srv_access.c (the same roles). Each
 * operation: its method, its path with every parameter segment as "*" (a
 * route's "*" and "**" come out the same), and the role its `security`
 * declares, and the statuses its `responses` document. ENPU_OPENAPI names another file (the tests' mutated copies). */
#ifndef TEST_OPENAPI_OPS_H
#define TEST_OPENAPI_OPS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>
#include "http.h"

#define OA_MAX_OPS 256

/* op.role: an srv_access, or one of these */
#define OA_ROLE_MISSING (-1)   /* the operation has no `security` */
#define OA_ROLE_BAD     (-2)   /* a `security` that names no single role (why in role_text) */

typedef struct op {
	char method[8];
	char canon[256];     /* path with every parameter segment as "*" */
	char shown[256];     /* as written, for messages */
	int seen;
	int role;            /* SRV_ROLE_PUBLIC / USER / ADMIN, or OA_ROLE_* */
	char role_text[96];  /* the declaration, for messages */
	int statuses[24];    /* the keys of its `responses` (numbers; "4XX" and the like are 0) */
	int n_statuses;
} op;

static const char *const oa_http_methods[] = {"get", "put", "post", "delete", "patch", "head",
					      "options", "trace"};

static inline const char *oa_spec_path(void)
{
	const char *p = getenv("ENPU_OPENAPI");
	return p ? p : "proto/openapi.yaml";
}

static inline const char *oa_role_name(int role)
{
	switch (role) {
	case SRV_ROLE_PUBLIC: return "public";
	case SRV_ROLE_USER: return "user";
	case SRV_ROLE_ADMIN: return "admin";
	case OA_ROLE_MISSING: return "(no security)";
	default: return "(unreadable security)";
	}
}

/* A parameter segment, "{sha256}" in the file or a star (one segment, or
 * the rest for a double star) in the table, becomes a lone star: both
 * spellings of the blob route come out the same. */
static inline void oa_canon(const char *path, char *out, size_t cap)
{
	size_t n = 0;
	const char *s = path;

	while (*s && n + 2 < cap) {
		if (*s == '/') {
			out[n++] = *s++;
			continue;
		}
		const char *end = strchr(s, '/');
		size_t len = end ? (size_t)(end - s) : strlen(s);
		if ((s[0] == '{' && s[len - 1] == '}') || (len <= 2 && s[0] == '*' && s[len - 1] == '*')) {
			out[n++] = '*';
		} else {
			size_t k = len < cap - n - 1 ? len : cap - n - 1;
			memcpy(out + n, s, k);
			n += k;
		}
		s += len;
	}
	out[n] = '\0';
}

static inline yaml_node_t *oa_map_get(yaml_document_t *d, yaml_node_t *m, const char *key)
{
	yaml_node_pair_t *p;
	if (!m || m->type != YAML_MAPPING_NODE)
		return NULL;
	for (p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(d, p->key);
		if (k && k->type == YAML_SCALAR_NODE && !strcmp((char *)k->data.scalar.value, key))
			return yaml_document_get_node(d, p->value);
	}
	return NULL;
}

static inline int oa_is_method(const char *k)
{
	size_t i;
	for (i = 0; i < sizeof oa_http_methods / sizeof oa_http_methods[0]; i++)
		if (!strcmp(oa_http_methods[i], k))
			return 1;
	return 0;
}

/* The role an operation's `security` list declares: [] public; one
 * requirement {bearer: [user]} or {bearer: [admin]}. Anything else (other
 * schemes, several requirements, no role or several) is OA_ROLE_BAD: the
 * server knows one scheme and one role per route. */
static inline int oa_security_role(yaml_document_t *d, yaml_node_t *sec, char *text, size_t cap)
{
	yaml_node_t *req, *roles, *r;
	const char *name;

	snprintf(text, cap, "(none)");
	if (!sec)
		return OA_ROLE_MISSING;
	if (sec->type != YAML_SEQUENCE_NODE) {
		snprintf(text, cap, "not a list");
		return OA_ROLE_BAD;
	}
	if (sec->data.sequence.items.top == sec->data.sequence.items.start) {
		snprintf(text, cap, "[]");
		return SRV_ROLE_PUBLIC;
	}
	if (sec->data.sequence.items.top - sec->data.sequence.items.start != 1) {
		snprintf(text, cap, "several requirements");
		return OA_ROLE_BAD;
	}
	req = yaml_document_get_node(d, *sec->data.sequence.items.start);
	roles = oa_map_get(d, req, "bearer");
	if (!roles || req->data.mapping.pairs.top - req->data.mapping.pairs.start != 1 ||
	    roles->type != YAML_SEQUENCE_NODE ||
	    roles->data.sequence.items.top - roles->data.sequence.items.start != 1) {
		snprintf(text, cap, "not [{bearer: [ROLE]}]");
		return OA_ROLE_BAD;
	}
	r = yaml_document_get_node(d, *roles->data.sequence.items.start);
	if (!r || r->type != YAML_SCALAR_NODE) {
		snprintf(text, cap, "role is not a name");
		return OA_ROLE_BAD;
	}
	name = (const char *)r->data.scalar.value;
	snprintf(text, cap, "[{bearer: [%.60s]}]", name);
	if (!strcmp(name, "user"))
		return SRV_ROLE_USER;
	if (!strcmp(name, "admin"))
		return SRV_ROLE_ADMIN;
	return OA_ROLE_BAD;
}

/* The status codes an operation's `responses` mapping documents. */
static inline void oa_statuses(yaml_document_t *d, yaml_node_t *resp, op *o)
{
	yaml_node_pair_t *p;

	o->n_statuses = 0;
	if (!resp || resp->type != YAML_MAPPING_NODE)
		return;
	for (p = resp->data.mapping.pairs.start; p < resp->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(d, p->key);
		if (k && k->type == YAML_SCALAR_NODE && o->n_statuses < (int)(sizeof o->statuses / sizeof o->statuses[0]))
			o->statuses[o->n_statuses++] = atoi((const char *)k->data.scalar.value);
	}
}

static inline int oa_documents(const op *o, int status)
{
	int i;
	for (i = 0; i < o->n_statuses; i++)
		if (o->statuses[i] == status)
			return 1;
	return 0;
}

/* Every operation of the file into ops; their count, or -1 when the file
 * cannot be read or has no paths mapping. */
static inline int oa_load_ops(op *ops, int max)
{
	FILE *f = fopen(oa_spec_path(), "rb");
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_node_t *paths;
	yaml_node_pair_t *p, *q;
	int n = 0;

	if (!f)
		return -1;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_file(&parser, f);
	if (!yaml_parser_load(&parser, &doc)) {
		yaml_parser_delete(&parser);
		fclose(f);
		return -1;
	}
	paths = oa_map_get(&doc, yaml_document_get_root_node(&doc), "paths");
	if (!paths || paths->type != YAML_MAPPING_NODE) {
		n = -1;
		goto out;
	}
	for (p = paths->data.mapping.pairs.start; p < paths->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(&doc, p->key);
		yaml_node_t *item = yaml_document_get_node(&doc, p->value);
		if (!k || k->type != YAML_SCALAR_NODE || !item || item->type != YAML_MAPPING_NODE)
			continue;
		for (q = item->data.mapping.pairs.start; q < item->data.mapping.pairs.top; q++) {
			yaml_node_t *mk = yaml_document_get_node(&doc, q->key);
			const char *m;
			if (!mk || mk->type != YAML_SCALAR_NODE)
				continue;
			m = (const char *)mk->data.scalar.value;
			if (!oa_is_method(m) || n >= max)
				continue;
			snprintf(ops[n].method, sizeof ops[n].method, "%s", m);
			snprintf(ops[n].shown, sizeof ops[n].shown, "%s", (char *)k->data.scalar.value);
			oa_canon(ops[n].shown, ops[n].canon, sizeof ops[n].canon);
			ops[n].seen = 0;
			ops[n].role = oa_security_role(&doc, oa_map_get(&doc, yaml_document_get_node(&doc, q->value),
									"security"),
						       ops[n].role_text, sizeof ops[n].role_text);
			oa_statuses(&doc, oa_map_get(&doc, yaml_document_get_node(&doc, q->value), "responses"),
				    &ops[n]);
			n++;
		}
	}
out:
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	fclose(f);
	return n;
}

/* The operation of the n in ops that documents route r, or NULL. */
static inline op *oa_find(op *ops, int n, const srv_route *r)
{
	char c[256];
	int j;

	oa_canon(r->pattern, c, sizeof c);
	for (j = 0; j < n; j++)
		if (!strcasecmp(ops[j].method, r->method) && !strcmp(ops[j].canon, c))
			return &ops[j];
	return NULL;
}

#endif

/* config.c: eulernpud's YAML configuration file, read into a flat list of
 * (option name, value, line, col) items; main.c applies each through the
 * same option table as the command line, so the file and the flags cannot
 * drift apart. The shared YAML loader (common/ydoc.h) reads the file, with
 * anchors and aliases refused (a config file needs none). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "srv.h"
#include "buf.h"
#include "ydoc.h"
#include "onnx_read.h"

/* The file's limits: bytes read, settings, and for the YAML loader nodes
 * (a 1 MiB file holds fewer) and nesting (a config nests three deep). */
#define CFG_MAX_BYTES (1u << 20)
#define CFG_MAX_ITEMS 4096
#define CFG_MAX_NODES (1u << 21)
#define CFG_MAX_DEPTH 64

typedef struct parser {
	const enpu_ynode *key;     /* the top-level key being read */
	const char *path;
	srv_cfg_file *out;
	enpu_err *e;
} parser;

static int fail_at(parser *ps, const enpu_ynode *n, const char *fix, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail_at(parser *ps, const enpu_ynode *n, const char *fix, const char *fmt, ...)
{
	char where[600], msg[700];
	va_list ap;

	snprintf(where, sizeof where, "%s:%d:%d", ps->path, n->line, n->col);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return enpu_fail(ps->e, ENPU_E_CONFIG, where, fix, "%s", msg);
}

static int add(parser *ps, const char *key, const char *val, size_t vlen, const enpu_ynode *at)
{
	srv_cfg_file *f = ps->out;
	srv_cfg_item *ni;

	if (f->n == CFG_MAX_ITEMS)
		return fail_at(ps, at, NULL, "more than %d settings", CFG_MAX_ITEMS);
	ni = realloc(f->items, (size_t)(f->n + 1) * sizeof *ni);
	if (!ni)
		return enpu_fail(ps->e, ENPU_E_NOMEM, ps->path, NULL, "out of memory");
	f->items = ni;
	ni = &f->items[f->n];
	ni->key = strdup(key);
	ni->value = strndup(val, vlen);
	ni->line = at->line;
	ni->col = at->col;
	ni->kline = ps->key->line;
	ni->kcol = ps->key->col;
	if (!ni->key || !ni->value) {
		free(ni->key);
		free(ni->value);
		return enpu_fail(ps->e, ENPU_E_NOMEM, ps->path, NULL, "out of memory");
	}
	f->n++;
	return 0;
}

/* One board entry inside a boards: sequence: "NAME=URL" or {name:, url:}. */
static int board_entry(parser *ps, const enpu_ynode *n)
{
	char name[128] = "", url[600] = "", both[800];

	if (n->kind == ENPU_YN_SCALAR)
		return add(ps, "board", n->text, n->len, n);
	if (n->kind != ENPU_YN_MAP)
		return fail_at(ps, n, "write NAME=URL or {name: NAME, url: URL}",
			       "a board must be a string or a mapping");
	for (size_t i = 0; i < n->n; i++) {
		const enpu_ynode *k = n->kids[2 * i], *v = n->kids[2 * i + 1];
		char key[16];

		if (k->kind != ENPU_YN_SCALAR)
			return fail_at(ps, k, NULL, "a board's keys are name and url");
		snprintf(key, sizeof key, "%.*s", (int)k->len, k->text);
		if (strcmp(key, "name") && strcmp(key, "url"))
			return fail_at(ps, k, "use name and url", "unknown board key '%.40s'", k->text);
		if (v->kind != ENPU_YN_SCALAR)
			return fail_at(ps, v, NULL, "board %s must be a string", key);
		snprintf(!strcmp(key, "name") ? name : url,
			 !strcmp(key, "name") ? sizeof name : sizeof url, "%.*s", (int)v->len, v->text);
	}
	if (!name[0] || !url[0])
		return fail_at(ps, n, "give both name and url", "a board needs a name and a url");
	snprintf(both, sizeof both, "%s=%s", name, url);
	return add(ps, "board", both, strlen(both), n);
}

/* The value of a top-level key. */
static int value(parser *ps, const char *key, const enpu_ynode *n)
{
	int is_board = !strcmp(key, "boards") || !strcmp(key, "board");

	if (n->kind == ENPU_YN_SCALAR)
		return add(ps, is_board ? "board" : key, n->text, n->len, n);
	if (!strcmp(key, "remote-cache-trust") && n->kind == ENPU_YN_SEQ) {   /* a list of files */
		for (size_t i = 0; i < n->n; i++) {
			if (n->kids[i]->kind != ENPU_YN_SCALAR)
				return fail_at(ps, n->kids[i], "list PEM public key files",
					       "a trusted key must be a file name");
			if (add(ps, key, n->kids[i]->text, n->kids[i]->len, n->kids[i]))
				return -1;
		}
		return 0;
	}
	if (!is_board)
		return fail_at(ps, n, "give a single value",
			       "option '%s' takes a single value, not a list or mapping", key);
	if (n->kind == ENPU_YN_SEQ) {
		for (size_t i = 0; i < n->n; i++)
			if (board_entry(ps, n->kids[i]))
				return -1;
		return 0;
	}
	/* mapping NAME: URL */
	for (size_t i = 0; i < n->n; i++) {
		const enpu_ynode *k = n->kids[2 * i], *v = n->kids[2 * i + 1];
		char name[128], both[800];

		if (k->kind != ENPU_YN_SCALAR)
			return fail_at(ps, k, NULL, "a board name must be a string");
		snprintf(name, sizeof name, "%.*s", (int)k->len, k->text);
		if (v->kind != ENPU_YN_SCALAR)
			return fail_at(ps, v, "write NAME: URL", "the URL of board '%s' must be a string",
				       name);
		snprintf(both, sizeof both, "%s=%.*s", name, (int)v->len, v->text);
		if (add(ps, "board", both, strlen(both), v))
			return -1;
	}
	return 0;
}

void srv_config_defaults(srv_config *c)
{
	memset(c, 0, sizeof *c);
	c->workers = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (c->workers < 1)
		c->workers = 1;
	c->threads = 1;
	c->max_upload = 1ull << 30;
	c->max_queue = 256;
	c->conn_limit = 64;
	c->http_threads = c->workers;
	c->loop_job_us = 1000;
	c->conn_timeout = 60;
	c->board_health_interval = 5;
	c->board_timeout = 30;
	c->board_backoff_max = 60;
	c->job_timeout = 600;
	c->job_ttl = 86400;
	c->job_history = 10000;
	c->board_retries = 2;
	c->board_wait = 30;
	c->socket_mode = 0600;
	c->limits = *enpu_limits_default();
	c->max_json_bytes = SRV_JSON_MAX;
	c->max_json_depth = SRV_JSON_DEPTH;
	c->max_onnx_bytes = enpu_onnx_limits_default()->max_model_bytes;
	c->max_onnx_nodes = enpu_onnx_limits_default()->max_nodes;
	c->request_timeout = 3600;
	c->drain_timeout = 600;
	c->node_id = NULL;         /* job ids without a node, as a single server's */
	c->remote_cache_timeout_ms = 2000;
	c->remote_cache_backoff = 30;
	c->remote_cache_queue = 256;
	c->remote_cache_miss_ttl = 5;
}

/* The document's top-level mapping into items. */
static int walk(parser *ps, const enpu_ynode *root)
{
	if (!root)
		return 0;      /* an empty file, or a document with nothing in it */
	if (root->kind != ENPU_YN_MAP)
		return fail_at(ps, root, "write 'option-name: value' lines",
			       "the configuration must be a mapping of option names to values");
	for (size_t i = 0; i < root->n; i++) {
		const enpu_ynode *k = root->kids[2 * i];
		char key[64];

		if (k->kind != ENPU_YN_SCALAR || k->len >= sizeof key)
			return fail_at(ps, k, "write 'option-name: value' lines",
				       "a key must be an option name");
		ps->key = k;
		memcpy(key, k->text, k->len);
		key[k->len] = '\0';
		if (value(ps, key, root->kids[2 * i + 1]))
			return -1;
	}
	return 0;
}

int srv_cfg_parse(const char *text, size_t len, const char *path, srv_cfg_file *out,
		  enpu_err *e)
{
	enpu_yaml_opts o = {"configuration", UINT64_MAX, CFG_MAX_NODES, CFG_MAX_DEPTH,
			    ENPU_E_CONFIG, "not valid YAML", "fix the YAML syntax", 1};
	parser ps = {NULL, path, out, e};
	enpu_ydoc *doc = NULL;
	int rc;

	memset(out, 0, sizeof *out);
	out->path = strdup(path);
	if (!out->path)
		return enpu_fail(e, ENPU_E_NOMEM, path, NULL, "out of memory");
	rc = enpu_yaml_load(text, len, path, &o, &doc, e);
	if (rc == 0)
		rc = walk(&ps, enpu_ydoc_root(doc));
	enpu_ydoc_free(doc);
	if (rc != 0)
		srv_cfg_free(out);
	return rc;
}

int srv_cfg_read(const char *path, srv_cfg_file *out, enpu_err *e)
{
	enpu_buf b = ENPU_BUF_INIT;
	int rc;

	memset(out, 0, sizeof *out);
	if (enpu_read_file(path, CFG_MAX_BYTES, &b, e) != 0) {
		e->code = e->code == ENPU_E_LIMIT ? ENPU_E_LIMIT : ENPU_E_CONFIG;
		enpu_buf_free(&b);
		return -1;
	}
	rc = srv_cfg_parse(b.data ? b.data : "", b.len, path, out, e);
	enpu_buf_free(&b);
	return rc;
}

void srv_cfg_free(srv_cfg_file *f)
{
	int i;

	if (!f)
		return;
	for (i = 0; i < f->n; i++) {
		free(f->items[i].key);
		free(f->items[i].value);
	}
	free(f->items);
	free(f->path);
	memset(f, 0, sizeof *f);
}

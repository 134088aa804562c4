/* config.c: eulernpud's YAML configuration file, read into a flat list of
 * (option name, value, line, col) items; main.c applies each through the
 * same option table as the command line, so the file and the flags cannot
 * drift apart. Anchors and aliases are refused (a config file needs none). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>
#include "srv.h"
#include "buf.h"

#define CFG_MAX_BYTES (1u << 20)
#define CFG_MAX_ITEMS 4096

typedef struct parser {
	yaml_parser_t p;
	yaml_event_t ev;
	int have_ev;
	yaml_mark_t key_mark;      /* of the top-level key being read */
	const char *path;
	srv_cfg_file *out;
	enpu_err *e;
} parser;

static int fail_at(parser *ps, const yaml_mark_t *m, const char *fix, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail_at(parser *ps, const yaml_mark_t *m, const char *fix, const char *fmt, ...)
{
	char where[600], msg[700];
	va_list ap;

	snprintf(where, sizeof where, "%s:%zu:%zu", ps->path, m->line + 1, m->column + 1);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return enpu_fail(ps->e, ENPU_E_CONFIG, where, fix, "%s", msg);
}

static int next(parser *ps)
{
	if (ps->have_ev)
		yaml_event_delete(&ps->ev);
	ps->have_ev = 0;
	if (!yaml_parser_parse(&ps->p, &ps->ev)) {
		yaml_mark_t m = ps->p.problem_mark;
		return fail_at(ps, &m, "fix the YAML syntax", "not valid YAML: %s",
			       ps->p.problem ? ps->p.problem : "parse error");
	}
	ps->have_ev = 1;
	if (ps->ev.type == YAML_ALIAS_EVENT ||
	    ((ps->ev.type == YAML_SCALAR_EVENT) && ps->ev.data.scalar.anchor) ||
	    ((ps->ev.type == YAML_MAPPING_START_EVENT) && ps->ev.data.mapping_start.anchor) ||
	    ((ps->ev.type == YAML_SEQUENCE_START_EVENT) && ps->ev.data.sequence_start.anchor))
		return fail_at(ps, &ps->ev.start_mark, "write the value out",
			       "anchors and aliases are not allowed in the configuration");
	return 0;
}

static int add(parser *ps, const char *key, const char *val, size_t vlen, const yaml_mark_t *m)
{
	srv_cfg_file *f = ps->out;
	srv_cfg_item *ni;

	if (f->n == CFG_MAX_ITEMS)
		return fail_at(ps, m, NULL, "more than %d settings", CFG_MAX_ITEMS);
	ni = realloc(f->items, (size_t)(f->n + 1) * sizeof *ni);
	if (!ni)
		return enpu_fail(ps->e, ENPU_E_NOMEM, ps->path, NULL, "out of memory");
	f->items = ni;
	ni = &f->items[f->n];
	ni->key = strdup(key);
	ni->value = strndup(val, vlen);
	ni->line = (int)m->line + 1;
	ni->col = (int)m->column + 1;
	ni->kline = (int)ps->key_mark.line + 1;
	ni->kcol = (int)ps->key_mark.column + 1;
	if (!ni->key || !ni->value) {
		free(ni->key);
		free(ni->value);
		return enpu_fail(ps->e, ENPU_E_NOMEM, ps->path, NULL, "out of memory");
	}
	f->n++;
	return 0;
}

static const char *scalar(parser *ps, size_t *n)
{
	*n = ps->ev.data.scalar.length;
	return (const char *)ps->ev.data.scalar.value;
}

/* One board entry inside a boards: sequence: "NAME=URL" or {name:, url:}. */
static int board_entry(parser *ps)
{
	char name[128] = "", url[600] = "", both[800];
	yaml_mark_t at = ps->ev.start_mark;
	size_t n;

	if (ps->ev.type == YAML_SCALAR_EVENT) {
		const char *v = scalar(ps, &n);
		return add(ps, "board", v, n, &at);
	}
	if (ps->ev.type != YAML_MAPPING_START_EVENT)
		return fail_at(ps, &at, "write NAME=URL or {name: NAME, url: URL}",
			       "a board must be a string or a mapping");
	for (;;) {
		char k[16];
		if (next(ps))
			return -1;
		if (ps->ev.type == YAML_MAPPING_END_EVENT)
			break;
		if (ps->ev.type != YAML_SCALAR_EVENT)
			return fail_at(ps, &ps->ev.start_mark, NULL, "a board's keys are name and url");
		snprintf(k, sizeof k, "%.*s", (int)ps->ev.data.scalar.length,
			 (const char *)ps->ev.data.scalar.value);
		if (strcmp(k, "name") && strcmp(k, "url"))
			return fail_at(ps, &ps->ev.start_mark, "use name and url",
				       "unknown board key '%.40s'", (const char *)ps->ev.data.scalar.value);
		if (next(ps))
			return -1;
		if (ps->ev.type != YAML_SCALAR_EVENT)
			return fail_at(ps, &ps->ev.start_mark, NULL, "board %s must be a string", k);
		snprintf(!strcmp(k, "name") ? name : url, !strcmp(k, "name") ? sizeof name : sizeof url,
			 "%.*s", (int)ps->ev.data.scalar.length, (const char *)ps->ev.data.scalar.value);
	}
	if (!name[0] || !url[0])
		return fail_at(ps, &at, "give both name and url", "a board needs a name and a url");
	snprintf(both, sizeof both, "%s=%s", name, url);
	return add(ps, "board", both, strlen(both), &at);
}

/* The value of a top-level key (the current event is its first event). */
static int value(parser *ps, const char *key)
{
	int is_board = !strcmp(key, "boards") || !strcmp(key, "board");
	size_t n;

	if (ps->ev.type == YAML_SCALAR_EVENT) {
		const char *v = scalar(ps, &n);
		return add(ps, is_board ? "board" : key, v, n, &ps->ev.start_mark);
	}
	if (!is_board)
		return fail_at(ps, &ps->ev.start_mark, "give a single value",
			       "option '%s' takes a single value, not a list or mapping", key);
	if (ps->ev.type == YAML_SEQUENCE_START_EVENT) {
		for (;;) {
			if (next(ps))
				return -1;
			if (ps->ev.type == YAML_SEQUENCE_END_EVENT)
				return 0;
			if (board_entry(ps))
				return -1;
		}
	}
	/* mapping NAME: URL */
	for (;;) {
		char name[128], both[800];
		if (next(ps))
			return -1;
		if (ps->ev.type == YAML_MAPPING_END_EVENT)
			return 0;
		if (ps->ev.type != YAML_SCALAR_EVENT)
			return fail_at(ps, &ps->ev.start_mark, NULL, "a board name must be a string");
		snprintf(name, sizeof name, "%.*s", (int)ps->ev.data.scalar.length,
			 (const char *)ps->ev.data.scalar.value);
		if (next(ps))
			return -1;
		if (ps->ev.type != YAML_SCALAR_EVENT)
			return fail_at(ps, &ps->ev.start_mark, "write NAME: URL",
				       "the URL of board '%s' must be a string", name);
		snprintf(both, sizeof both, "%s=%.*s", name, (int)ps->ev.data.scalar.length,
			 (const char *)ps->ev.data.scalar.value);
		if (add(ps, "board", both, strlen(both), &ps->ev.start_mark))
			return -1;
	}
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
	c->conn_timeout = 60;
	c->board_health_interval = 5;
	c->board_timeout = 30;
	c->board_backoff_max = 60;
	c->job_timeout = 600;
	c->job_ttl = 86400;
	c->job_history = 10000;
	c->board_retries = 2;
	c->socket_mode = 0600;
	c->limits = *enpu_limits_default();
	c->max_json_bytes = SRV_JSON_MAX;
	c->max_json_depth = SRV_JSON_DEPTH;
	c->request_timeout = 3600;
	c->drain_timeout = 600;
}

int srv_cfg_parse(const char *text, size_t len, const char *path, srv_cfg_file *out,
		  enpu_err *e)
{
	parser ps;
	int rc = -1;

	memset(out, 0, sizeof *out);
	memset(&ps, 0, sizeof ps);
	ps.path = path;
	ps.out = out;
	ps.e = e;
	out->path = strdup(path);
	if (!out->path || !yaml_parser_initialize(&ps.p))
		return enpu_fail(e, ENPU_E_NOMEM, path, NULL, "out of memory");
	yaml_parser_set_input_string(&ps.p, (const unsigned char *)text, len);
	/* stream start, then a document or the stream end (empty file) */
	if (next(&ps) || next(&ps))
		goto out;
	if (ps.ev.type == YAML_STREAM_END_EVENT) {
		rc = 0;
		goto out;
	}
	if (next(&ps))
		goto out;
	if (ps.ev.type == YAML_SCALAR_EVENT && ps.ev.data.scalar.length == 0) {
		rc = 0;      /* a document with nothing in it */
		goto out;
	}
	if (ps.ev.type != YAML_MAPPING_START_EVENT) {
		fail_at(&ps, &ps.ev.start_mark, "write 'option-name: value' lines",
			"the configuration must be a mapping of option names to values");
		goto out;
	}
	for (;;) {
		char key[64];
		if (next(&ps))
			goto out;
		if (ps.ev.type == YAML_MAPPING_END_EVENT)
			break;
		if (ps.ev.type != YAML_SCALAR_EVENT || ps.ev.data.scalar.length >= sizeof key) {
			fail_at(&ps, &ps.ev.start_mark, "write 'option-name: value' lines",
				"a key must be an option name");
			goto out;
		}
		ps.key_mark = ps.ev.start_mark;
		memcpy(key, ps.ev.data.scalar.value, ps.ev.data.scalar.length);
		key[ps.ev.data.scalar.length] = '\0';
		if (next(&ps) || value(&ps, key))
			goto out;
	}
	if (next(&ps))
		goto out;
	if (ps.ev.type != YAML_DOCUMENT_END_EVENT || next(&ps) ||
	    ps.ev.type != YAML_STREAM_END_EVENT) {
		if (ps.ev.type == YAML_DOCUMENT_START_EVENT)
			fail_at(&ps, &ps.ev.start_mark, "keep one document", "more than one YAML document");
		else if (!ps.e->code)
			fail_at(&ps, &ps.ev.start_mark, NULL, "unexpected YAML after the mapping");
		goto out;
	}
	rc = 0;
out:
	if (ps.have_ev)
		yaml_event_delete(&ps.ev);
	yaml_parser_delete(&ps.p);
	if (rc != 0) {
		srv_cfg_free(out);
	}
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

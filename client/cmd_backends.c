/* cmd_backends.c: `eulernpu backends`: the capability matrix from
 * GET /v1/backends, printed as an aligned table of ops × backends (--json:
 * the server's answer). The
 * parser accepts the matrix by op ({"ops": ...}) or by backend
 * ({"backends": {...}}), so that either shape of the answer prints. */
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>
#include "api.h"
#include "cli.h"
#include "rest.h"

#define MAX_BK 32
#define MAX_OPS 512

static const char usage[] =
	"usage: eulernpu backends [--json]\n"
	"\n"
	"Print which ops each backend lowers (\"yes\"), as the server knows it.\n"
	"\n"
	"  --json   print the server's matrix as one JSON document: backends,\n"
	"           available, ops [{op, backends {NAME: true|false}}]\n";

typedef struct matrix {
	const char *bk[MAX_BK];
	const char *op[MAX_OPS];
	unsigned char has[MAX_OPS][MAX_BK];
	int nbk, nop;
} matrix;

static int col(matrix *m, const char *name)
{
	for (int i = 0; i < m->nbk; i++)
		if (strcmp(m->bk[i], name) == 0)
			return i;
	if (m->nbk >= MAX_BK)
		return -1;
	m->bk[m->nbk] = name;
	return m->nbk++;
}

static int row(matrix *m, const char *name)
{
	for (int i = 0; i < m->nop; i++)
		if (strcmp(m->op[i], name) == 0)
			return i;
	if (m->nop >= MAX_OPS)
		return -1;
	m->op[m->nop] = name;
	return m->nop++;
}

static void mark(matrix *m, const char *op, const char *bk, int yes)
{
	int r = row(m, op), c = col(m, bk);

	if (r >= 0 && c >= 0 && yes)
		m->has[r][c] = 1;
}

/* v: which backends one op has, as ["cpu_ref", ...] or {"cpu_ref": true}. */
static void op_backends(matrix *m, const char *op, struct json_object *v)
{
	if (json_object_is_type(v, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(v); i++) {
			struct json_object *b = json_object_array_get_idx(v, i);

			if (json_object_is_type(b, json_type_string))
				mark(m, op, json_object_get_string(b), 1);
		}
	} else if (json_object_is_type(v, json_type_object)) {
		json_object_object_foreach(v, k, val) {
			col(m, k);
			mark(m, op, k, json_object_get_boolean(val));
		}
	}
}

static void parse_ops(matrix *m, struct json_object *ops)
{
	if (json_object_is_type(ops, json_type_object)) {
		json_object_object_foreach(ops, k, v) {
			row(m, k);
			op_backends(m, k, v);
		}
		return;
	}
	if (!json_object_is_type(ops, json_type_array))
		return;
	for (size_t i = 0; i < json_object_array_length(ops); i++) {
		struct json_object *o = json_object_array_get_idx(ops, i), *v;
		const char *name = cli_json_str(o, "op");

		if (!name)
			name = cli_json_str(o, "name");
		if (!name)
			continue;
		row(m, name);
		if (json_object_object_get_ex(o, "backends", &v)) {
			op_backends(m, name, v);
		} else {
			json_object_object_foreach(o, k, val)
				if (json_object_is_type(val, json_type_boolean))
					mark(m, name, k, json_object_get_boolean(val));
		}
	}
}

/* "backends": the column order (names, or objects with their ops), or a
 * map of backend -> ops. */
static void parse_backends(matrix *m, struct json_object *bks)
{
	if (json_object_is_type(bks, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(bks); i++) {
			struct json_object *b = json_object_array_get_idx(bks, i), *ops;
			const char *name = json_object_is_type(b, json_type_string)
				? json_object_get_string(b) : cli_json_str(b, "name");

			if (!name)
				continue;
			col(m, name);
			if (json_object_object_get_ex(b, "ops", &ops) &&
			    json_object_is_type(ops, json_type_array))
				for (size_t k = 0; k < json_object_array_length(ops); k++)
					mark(m, json_object_get_string(json_object_array_get_idx(ops, k)),
					     name, 1);
		}
	} else if (json_object_is_type(bks, json_type_object)) {
		json_object_object_foreach(bks, name, ops) {
			col(m, name);
			if (json_object_is_type(ops, json_type_array))
				for (size_t k = 0; k < json_object_array_length(ops); k++) {
					const char *op = json_object_get_string(json_object_array_get_idx(ops, k));

					if (op)
						mark(m, op, name, 1);
				}
		}
	}
}

int cmd_backends(cli_ctx *ctx, int argc, char **argv)
{
	enpu_err e = ENPU_ERR_INIT;
	const char *pos[1];
	int n_pos, r, w0 = 2, json = 0;
	const cli_opt opts[] = {
		{"--json", CLI_OPT_FLAG, &json},
		{NULL, 0, NULL},
	};
	struct json_object *res = NULL, *v;
	static matrix m;

	r = cli_parse_opts("backends", argc, argv, opts, pos, 0, &n_pos, &e);
	if (r == 1) {
		fputs(usage, stdout);
		return 0;
	}
	if (r < 0)
		return cli_report(&e);
	if (cli_connect(ctx, &e) < 0 ||
	    cli_http_json(ctx->conn, "GET", API_BACKENDS, NULL, 30, &res, NULL, NULL, &e) < 0)
		goto fail;
	memset(&m, 0, sizeof m);
	if (json_object_object_get_ex(res, "backends", &v))
		parse_backends(&m, v);
	if (json_object_object_get_ex(res, "ops", &v) || json_object_object_get_ex(res, "matrix", &v))
		parse_ops(&m, v);
	if (m.nop == 0 || m.nbk == 0) {
		enpu_fail(&e, ENPU_E_SERVER, API_BACKENDS, NULL, "the answer holds no op × backend matrix");
		goto fail;
	}
	if (json) {
		cli_print_json(res);
		json_object_put(res);
		return 0;
	}
	for (int i = 0; i < m.nop; i++)
		if ((int)strlen(m.op[i]) > w0)
			w0 = (int)strlen(m.op[i]);
	printf("%-*s", w0, "op");
	for (int c = 0; c < m.nbk; c++)
		printf("  %s", m.bk[c]);
	printf("\n");
	for (int i = 0; i < m.nop; i++) {
		printf("%-*s", w0, m.op[i]);
		for (int c = 0; c < m.nbk; c++) {
			int w = (int)strlen(m.bk[c]);

			if (c == m.nbk - 1)
				printf("  %s", m.has[i][c] ? "yes" : "-");
			else
				printf("  %-*s", w < 3 ? 3 : w, m.has[i][c] ? "yes" : "-");
		}
		printf("\n");
	}
	json_object_put(res);
	return 0;
fail:
	json_object_put(res);
	return cli_report(&e);
}

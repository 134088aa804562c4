/* cmd_import.c: `eulernpu import MODEL.onnx --out DIR [--input NAME=SHAPE
 * ...] [--name N]`: read the model here only to find its external-data
 * files (relative to the model's directory; an absolute or '..' location
 * is refused), upload what the server lacks, import there (POST
 * /v1/import), and download the spec and weights it made (GET
 * /v1/blobs/{sha256}, verified) into DIR/spec.yaml and DIR/weights.npz.
 * DIR is built beside itself and renamed into place (outputs.c): it must
 * be new or empty, never half-written, never replaced. --json prints the
 * server's answer with "out" (DIR) added. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <json-c/json.h>
#include "api.h"
#include "buf.h"
#include "cli.h"
#include "digest.h"
#include "onnx_read.h"
#include "progress.h"
#include "rest.h"

#define SPEC_FILE    "spec.yaml"
#define WEIGHTS_FILE "weights.npz"
#define MAX_EXT      256          /* distinct external-data files */

static const char usage[] =
	"usage: eulernpu import MODEL.onnx --out DIR [--input NAME=SHAPE ...] [--name N]\n"
	"                       [--json]\n"
	"\n"
	"Import an ONNX model (opsets 7 to 17) into a spec (v2; v3 for a quantised\n"
	"model: int8, uint8, int32 tensors or quantised ops) and its weights,\n"
	"written as DIR/spec.yaml and DIR/weights.npz: they validate, compile and\n"
	"run like a hand-written spec. The server does the import; the model and\n"
	"its external-data files (next to the model) are uploaded when it lacks\n"
	"them.\n"
	"\n"
	"  --out DIR          where to write spec.yaml and weights.npz: a new or\n"
	"                     empty directory (never replaced)\n"
	"  --input NAME=SHAPE bind a graph input's shape, every dim, e.g.\n"
	"                     x=1,3,224,224 (repeatable); a symbolic dim left\n"
	"                     unbound is 1\n"
	"  --name N           the spec's name (default: the graph's name)\n"
	"  --json             print one JSON document: spec, weights (digests),\n"
	"                     name, ops, inputs and outputs [{name, shape}], out\n";

int cli_parse_bind(const char *arg, cli_bind *b, enpu_err *e)
{
	const char *eq = strrchr(arg, '='), *p;
	size_t n = eq ? (size_t)(eq - arg) : 0;

	memset(b, 0, sizeof *b);
	if (!eq || n == 0 || n >= sizeof b->name || !eq[1])
		return cli_usage(e, "import", "--input '%s' is not NAME=SHAPE (e.g. x=1,3,224,224)",
				 arg);
	memcpy(b->name, arg, n);
	for (p = eq + 1;;) {
		char *end;
		long long v;

		if (*p < '0' || *p > '9')
			return cli_usage(e, "import", "--input '%s': the shape is dims separated by "
					 "commas, each a whole number >= 1 (e.g. x=1,3,224,224)", arg);
		errno = 0;
		v = strtoll(p, &end, 10);
		if (errno || v < 1 || v > INT32_MAX)
			return cli_usage(e, "import", "--input '%s': dim '%.*s' is not a whole number "
					 "from 1 to %d", arg, (int)(end - p), p, INT32_MAX);
		if (b->ndim == CLI_BIND_DIMS)
			return cli_usage(e, "import", "--input '%s' has more than %d dims", arg,
					 CLI_BIND_DIMS);
		b->dim[b->ndim++] = v;
		if (*end == '\0')
			return 0;
		if (*end != ',')
			return cli_usage(e, "import", "--input '%s': the shape is dims separated by "
					 "commas, each a whole number >= 1 (e.g. x=1,3,224,224)", arg);
		p = end + 1;
	}
}

/* Every --input parsed, each name once. */
static int parse_binds(const cli_strlist *in, cli_bind *b, enpu_err *e)
{
	for (int i = 0; i < in->n; i++) {
		if (cli_parse_bind(in->v[i], &b[i], e) < 0)
			return -1;
		for (int j = 0; j < i; j++)
			if (strcmp(b[i].name, b[j].name) == 0)
				return cli_usage(e, "import", "--input binds '%s' twice", b[i].name);
	}
	return 0;
}

/* A model's external-data files: each location once, with its path on
 * disk and its digest. */
typedef struct ext_files {
	int n;
	char *loc[MAX_EXT];
	char path[MAX_EXT][PATH_MAX];
	char digest[MAX_EXT][65];
} ext_files;

static void ext_free(ext_files *x)
{
	for (int i = 0; i < x->n; i++)
		free(x->loc[i]);
	x->n = 0;
}

/* 1 when location may be read: relative, no '..' component, no NUL-free
 * oddities (empty, backslash). */
static int location_safe(const char *loc)
{
	const char *s = loc;

	if (!*loc || loc[0] == '/' || strchr(loc, '\\'))
		return 0;
	while (*s) {
		size_t n = strcspn(s, "/");

		if (n == 2 && s[0] == '.' && s[1] == '.')
			return 0;
		s += n;
		if (*s == '/')
			s++;
	}
	return 1;
}

/* Record tensor t's external file (once per location), hashed. */
static int ext_add(ext_files *x, const char *model, const enpu_onnx_tensor *t, enpu_err *e)
{
	char dir[PATH_MAX], *slash;
	const char *loc = t->ext_location ? t->ext_location : "";
	struct stat st;
	int i = x->n;

	for (int j = 0; j < x->n; j++)
		if (strcmp(x->loc[j], loc) == 0)
			return 0;
	if (!location_safe(loc))
		return enpu_fail(e, ENPU_E_ONNX, model, "keep external data in files next to the "
				 "model (a relative location without '..')",
				 "%s: tensor '%s' keeps its data in '%s': an absolute location or one "
				 "with '..' is refused", model, t->name, loc);
	if (x->n == MAX_EXT)
		return enpu_fail(e, ENPU_E_ONNX, model, NULL, "%s: more than %d external-data files",
				 model, MAX_EXT);
	snprintf(dir, sizeof dir, "%s", model);
	slash = strrchr(dir, '/');
	if (slash)
		slash[1] = '\0';
	else
		dir[0] = '\0';
	if ((size_t)snprintf(x->path[i], PATH_MAX, "%s%s", dir, loc) >= PATH_MAX)
		return enpu_fail(e, ENPU_E_IO, loc, NULL, "path too long: '%s%s'", dir, loc);
	if (stat(x->path[i], &st) != 0 || !S_ISREG(st.st_mode))
		return enpu_fail(e, ENPU_E_IO, x->path[i], "put the model's external-data files "
				 "next to it, as they were exported",
				 "%s: tensor '%s' keeps its data in '%s', and '%s' %s", model, t->name,
				 loc, x->path[i], errno == ENOENT ? "does not exist" : "is not a "
				 "readable file");
	if (cli_sha256_file(x->path[i], x->digest[i], e) < 0)
		return -1;
	x->loc[i] = strdup(loc);
	if (!x->loc[i])
		return enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
	x->n++;
	return 0;
}

/* Read MODEL (only for its external-data locations) and hash it and its
 * external files into digest and *x. 0, or -1 with e. */
static int scan_model(const char *model, char digest[65], ext_files *x, enpu_err *e)
{
	enpu_buf b = ENPU_BUF_INIT;
	enpu_onnx_model *m = NULL;
	int rc = -1;

	if (enpu_read_file(model, enpu_onnx_limits_default()->max_model_bytes + 1, &b, e) < 0)
		return -1;
	if (enpu_onnx_read(b.data, b.len, model, NULL, &m, e) < 0)
		goto out;
	for (size_t i = 0; i < m->n_init; i++)
		if (m->init[i].external && ext_add(x, model, &m->init[i], e) < 0)
			goto out;
	enpu_sha256_hex(b.data, b.len, digest);
	rc = 0;
out:
	enpu_onnx_free(m);
	enpu_buf_free(&b);
	return rc;
}

/* Upload what the server lacks and POST the import: *res its answer. */
static int import_post(cli_ctx *ctx, const char *model, const char *md, const ext_files *x,
		       const cli_bind *b, int nb, const char *name, struct json_object **res,
		       enpu_err *e)
{
	const char *paths[MAX_EXT + 1], *digests[MAX_EXT + 1];
	struct json_object *req, *ext, *in;
	int rc;

	paths[0] = model;
	digests[0] = md;
	for (int i = 0; i < x->n; i++) {
		paths[i + 1] = x->path[i];
		digests[i + 1] = x->digest[i];
	}
	if (cli_connect(ctx, e) < 0 || cli_blobs_ensure(ctx->conn, x->n + 1, paths, digests, NULL, e) < 0)
		return -1;
	req = json_object_new_object();
	ext = json_object_new_object();
	in = json_object_new_object();
	json_object_object_add(req, F_MODEL, json_object_new_string(md));
	json_object_object_add(req, F_MODEL_NAME, json_object_new_string(model));
	for (int i = 0; i < x->n; i++)
		json_object_object_add(ext, x->loc[i], json_object_new_string(x->digest[i]));
	json_object_object_add(req, F_EXTERNAL, ext);
	for (int i = 0; i < nb; i++) {
		struct json_object *dims = json_object_new_array();

		for (int d = 0; d < b[i].ndim; d++)
			json_object_array_add(dims, json_object_new_int64(b[i].dim[d]));
		json_object_object_add(in, b[i].name, dims);
	}
	json_object_object_add(req, F_INPUTS, in);
	if (name)
		json_object_object_add(req, F_NAME, json_object_new_string(name));
	rc = cli_http_json(ctx->conn, "POST", API_IMPORT, req, 0, res, NULL, NULL, e);
	json_object_put(req);
	return rc < 0 ? -1 : 0;
}

/* The answer's spec and weights into tmp (to become out), verified. */
static int import_fetch(cli_ctx *ctx, struct json_object *res, const char *tmp, const char *out,
			enpu_err *e)
{
	static const char *const keys[2] = {F_SPEC, F_WEIGHTS}, *const files[2] = {SPEC_FILE, WEIGHTS_FILE};

	for (int i = 0; i < 2; i++) {
		const char *d = cli_json_str(res, keys[i]);
		char url[128], dest[PATH_MAX], label[PATH_MAX];

		if (!d || !enpu_is_sha256_hex(d))
			return enpu_fail(e, ENPU_E_SERVER, API_IMPORT, NULL,
					 "the answer lacks a valid '%s' digest", keys[i]);
		snprintf(url, sizeof url, "%s%s", API_BLOBS, d);
		if ((size_t)snprintf(dest, sizeof dest, "%s/%s", tmp, files[i]) >= sizeof dest)
			return enpu_fail(e, ENPU_E_IO, out, NULL, "path too long: '%s'", out);
		snprintf(label, sizeof label, "%s/%s", out, files[i]);
		if (cli_http_download_as(ctx->conn, url, dest, label, d, 0, e) < 0)
			return -1;
	}
	return 0;
}

/* "  inputs:  x (1, 3, 224, 224), y (4,)" from the answer's list key. */
static void print_tensors(struct json_object *res, const char *key, const char *title)
{
	struct json_object *a, *t, *s;
	size_t n;

	if (!json_object_object_get_ex(res, key, &a) || !json_object_is_type(a, json_type_array))
		return;
	n = json_object_array_length(a);
	printf("  %-8s ", title);
	for (size_t i = 0; i < n; i++) {
		long long dims[16];
		char tup[256];
		int nd = 0;

		t = json_object_array_get_idx(a, i);
		if (json_object_object_get_ex(t, F_SHAPE, &s) && json_object_is_type(s, json_type_array))
			for (size_t d = 0; d < json_object_array_length(s) && nd < 16; d++)
				dims[nd++] = json_object_get_int64(json_object_array_get_idx(s, d));
		printf("%s%s %s", i ? ", " : "", cli_json_str(t, F_NAME) ? cli_json_str(t, F_NAME) : "?",
		       cli_tuple_str(dims, nd, tup, sizeof tup));
	}
	printf("%s\n", n ? "" : "(none)");
}

static void print_summary(struct json_object *res, const char *out)
{
	long long ops = 0;

	cli_json_int(res, F_OPS, &ops);
	printf("Import   OK: %lld op%s \xc2\xb7 %s/" SPEC_FILE " + " WEIGHTS_FILE "\n", ops,
	       ops == 1 ? "" : "s", out);
	print_tensors(res, F_INPUTS, "inputs:");
	print_tensors(res, F_OUTPUTS, "outputs:");
}

int cmd_import(cli_ctx *ctx, int argc, char **argv)
{
	enpu_err e = ENPU_ERR_INIT;
	const char *out = NULL, *name = NULL, *pos[1];
	cli_strlist inputs = {{NULL}, 0};
	int json = 0, n_pos, r;
	const cli_opt opts[] = {
		{"--input", CLI_OPT_LIST, &inputs},
		{"--json", CLI_OPT_FLAG, &json},
		{"--name", CLI_OPT_STR, &name},
		{"--out", CLI_OPT_STR, &out},
		{NULL, 0, NULL},
	};
	static cli_bind binds[CLI_LIST_MAX];
	static ext_files ext;
	struct json_object *res = NULL;
	char tmp[PATH_MAX], md[65];

	r = cli_parse_opts("import", argc, argv, opts, pos, 1, &n_pos, &e);
	if (r == 1) {
		fputs(usage, stdout);
		return 0;
	}
	if (r < 0)
		return cli_report(&e);
	if (n_pos != 1 || !out)
		return cli_report((cli_usage(&e, "import", "%s", n_pos != 1 ? "give the model: "
					     "eulernpu import MODEL.onnx --out DIR" :
					     "missing required option '--out'"), &e));
	if (parse_binds(&inputs, binds, &e) < 0)
		return cli_report(&e);
	{
		const cli_path outs[1] = {{"--out", out}}, ins[1] = {{"MODEL", pos[0]}};

		if (cli_outputs_check("import", outs, 1, 1, ins, 1, &e) < 0 ||
		    scan_model(pos[0], md, &ext, &e) < 0 ||
		    cli_outdir_begin_new("import", out, tmp, sizeof tmp, &e) < 0) {
			ext_free(&ext);
			return cli_report(&e);
		}
	}
	cli_progress_setup(json);
	if (import_post(ctx, pos[0], md, &ext, binds, inputs.n, name, &res, &e) < 0 ||
	    import_fetch(ctx, res, tmp, out, &e) < 0) {
		if (e.code == ENPU_E_IO)   /* a local write: name --out, not tmp */
			cli_local_io(&e, out);
		cli_outdir_abort(tmp);
		goto fail;
	}
	if (cli_outdir_commit_new("import", tmp, out, &e) < 0)
		goto fail;
	ext_free(&ext);
	if (json) {
		json_object_object_add(res, "out", json_object_new_string(out));
		cli_print_json(res);
	} else {
		print_summary(res, out);
	}
	json_object_put(res);
	return 0;
fail:
	ext_free(&ext);
	json_object_put(res);
	return cli_report(&e);
}

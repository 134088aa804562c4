/* cmd_compile.c: `eulernpu compile --spec F --weights F --out DIR`: upload
 * what the server lacks, compile there (or hit its cache), and download the
 * artifact's files into DIR, each verified against its digest. DIR is
 * built beside itself and renamed into place (outputs.c): it is never
 * half-written, and only an empty directory or an old artifact is
 * replaced. --json
 * prints the server's answer with "out" (DIR) added. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include <curl/curl.h>
#include <json-c/json.h>
#include "api.h"
#include "buf.h"
#include "cli.h"
#include "progress.h"
#include "digest.h"
#include "rest.h"

static const char usage[] =
	"usage: eulernpu compile --spec F --weights F [--backend B] [--target F] --out DIR\n"
	"                        [--json]\n"
	"\n"
	"Compile a spec and its weights into an artifact for one backend, and\n"
	"write the artifact's files (manifest.json, graph.json, plan.json,\n"
	"weights/) into DIR. The server keeps compiled artifacts: compiling the\n"
	"same inputs again is a cache hit, and files it holds are not uploaded.\n"
	"\n"
	"  --spec F      the spec (spec.yaml)\n"
	"  --weights F   the weights (weights.npz)\n"
	"  --backend B   cpu_ref, npu_sim, zynq_ps, fpga_board (default: the spec's)\n"
	"  --target F    the backend's target options (a YAML mapping with the\n"
	"                fields of the spec's targets.<backend>), instead of the\n"
	"                spec's; part of the cache key like every other input\n"
	"  --out DIR     where to write the artifact: a new or empty directory, or\n"
	"                one holding an artifact (replaced); written beside DIR\n"
	"                and renamed into place, so a failed compile leaves it be\n"
	"  --json        print one JSON document: artifact, cached, backend,\n"
	"                operators, components, out (DIR), files [{path, sha256,\n"
	"                bytes}] (and pl_ops, ps_ops, pl_segments for fpga_board)\n";

/* "/v1/artifacts/ID/files/a%20b/c": each path segment escaped. */
static int file_url(const char *id, const char *path, enpu_buf *b)
{
	const char *seg = path;

	if (enpu_buf_addf(b, "%s%s%s", API_ARTIFACTS, id, API_ARTIFACT_FILES) < 0)
		return -1;
	for (;;) {
		const char *end = strchr(seg, '/');
		size_t n = end ? (size_t)(end - seg) : strlen(seg);
		char *esc = curl_easy_escape(NULL, seg, (int)n);
		int r;

		if (!esc)
			return -1;
		r = enpu_buf_adds(b, esc);
		curl_free(esc);
		if (r < 0 || (end && enpu_buf_adds(b, "/") < 0))
			return -1;
		if (!end)
			return 0;
		seg = end + 1;
	}
}

/* ---- files the client need not download ------------------------------------ */

/* to, a new file with from's bytes and the mode the umask gives (a
 * reflink where the filesystem allows, else an in-kernel copy). 0, or -1
 * (errno) leaving no to behind. */
static int clone_file(const char *from, const char *to)
{
	return enpu_copy_file(from, to, 0666, 0);   /* the umask decides */
}

/* dest from a file of our own daemon's cache (local, of `bytes` bytes),
 * trusted as our own; 0, or -1 when it cannot be (then it is downloaded). */
static int take_local(const char *local, const char *dest, uint64_t bytes)
{
	struct stat sb;

	if (!local || local[0] != '/' || stat(local, &sb) != 0 || !S_ISREG(sb.st_mode) ||
	    sb.st_uid != geteuid() || (uint64_t)sb.st_size != bytes)
		return -1;
	return clone_file(local, dest);
}

/* dest from out/path when out (the directory being replaced) already has
 * it with this digest: 0, or -1 (then it is downloaded). */
static int take_existing(const char *out, const char *path, const char *sha, uint64_t bytes,
			 const char *dest)
{
	char old[PATH_MAX], dig[65];
	struct stat sb;
	enpu_err e = ENPU_ERR_INIT;

	if ((size_t)snprintf(old, sizeof old, "%s/%s", out, path) >= sizeof old ||
	    lstat(old, &sb) != 0 || !S_ISREG(sb.st_mode) || (uint64_t)sb.st_size != bytes ||
	    cli_sha256_file(old, dig, &e) != 0 || strcmp(dig, sha) != 0)
		return -1;
	return clone_file(old, dest);
}

/* ---- the weights copied while the server works ------------------------------
 * The artifact's weights file is the weights file itself whenever its
 * members are stored (docs/architecture.md, "Cache"): a copy of it into
 * the output, made on a thread while the upload and the compile run, is
 * then that file, and nothing is copied or fetched after the answer. The
 * copy counts only when the file's identity and times (which any write
 * moves: client/digests.c) are the same before it, after it, and after
 * the compile, whose digest of the file they vouch for as the digest
 * record does. Small files are not worth a thread. */
#define PRECOPY_MIN (1u << 20)

typedef struct precopy {
	pthread_t tid;
	int started, ok, used;
	const char *src;
	char dst[PATH_MAX], sha[65];
	struct stat before, after;
} precopy;

static void *precopy_run(void *arg)
{
	precopy *p = arg;

	p->ok = stat(p->src, &p->before) == 0 && clone_file(p->src, p->dst) == 0 &&
		stat(p->src, &p->after) == 0 && enpu_stat_unchanged(&p->before, &p->after);
	return NULL;
}

/* Start copying weights into dir (the temporary output) when it is big. */
static void precopy_start(precopy *p, const char *weights, const char *dir)
{
	struct stat sb;

	memset(p, 0, sizeof *p);
	p->src = weights;
	if (stat(weights, &sb) != 0 || !S_ISREG(sb.st_mode) || (uint64_t)sb.st_size < PRECOPY_MIN ||
	    (size_t)snprintf(p->dst, sizeof p->dst, "%s/.weights.precopy", dir) >= sizeof p->dst)
		return;
	p->started = pthread_create(&p->tid, NULL, precopy_run, p) == 0;
}

/* The copy done; good when the file is still as it was when hashed to sha
 * (the compile's digest of it). */
static void precopy_join(precopy *p, const char *sha)
{
	struct stat now;

	if (!p->started)
		return;
	pthread_join(p->tid, NULL);
	p->started = 0;
	if (p->ok && sha && (p->ok = stat(p->src, &now) == 0 && enpu_stat_unchanged(&p->before, &now)))
		snprintf(p->sha, sizeof p->sha, "%s", sha);
	else
		p->ok = 0;
}

/* dest from the copy when it has this digest and size: 0, or -1. */
static int take_precopy(precopy *p, const char *sha, uint64_t bytes, const char *dest)
{
	if (!p || !p->ok || p->used || strcmp(p->sha, sha) != 0 ||
	    (uint64_t)p->before.st_size != bytes || rename(p->dst, dest) != 0)
		return -1;
	p->used = 1;
	return 0;
}

/* The copy, unused, out of the output; the thread joined first. */
static void precopy_end(precopy *p)
{
	if (p->started) {
		pthread_join(p->tid, NULL);
		p->started = 0;
	}
	if (p->dst[0] && !p->used)
		unlink(p->dst);
}

/* Every file the server listed into dir (the temporary one), refusing
 * paths that would leave it; progress shows them under out. A file is
 * the weights copied meanwhile (pre) when it has their digest, else comes
 * from our own daemon's cache when it says where (cloned or copied, not
 * sent over the socket), else from out when that already holds it with
 * the listed digest, else it is downloaded and checked. */
static int download_files(cli_conn *c, const char *id, struct json_object *files,
			  const char *dir, const char *out, precopy *pre, enpu_err *e)
{
	int own = cli_conn_own_daemon(c);

	size_t n = json_object_array_length(files);

	for (size_t i = 0; i < n; i++) {
		struct json_object *f = json_object_array_get_idx(files, i);
		const char *path = cli_json_str(f, F_PATH), *sha = cli_json_str(f, F_SHA256);
		char dest[PATH_MAX], parent[PATH_MAX], label[PATH_MAX];
		enpu_buf url = ENPU_BUF_INIT;
		char *slash;
		int r;

		if (!path || !cli_path_is_safe(path) || !sha || !enpu_is_sha256_hex(sha))
			return enpu_fail(e, ENPU_E_SERVER, API_COMPILE, NULL,
					 "the server listed an unsafe or malformed artifact file '%s'",
					 path ? path : "(none)");
		if ((size_t)snprintf(dest, sizeof dest, "%s/%s", dir, path) >= sizeof dest)
			return enpu_fail(e, ENPU_E_IO, dir, NULL, "path too long for '%s'", path);
		snprintf(parent, sizeof parent, "%s", dest);
		snprintf(label, sizeof label, "%s/%s", out, path);
		slash = strrchr(parent, '/');
		if (slash) {
			*slash = '\0';
			if (enpu_mkdirs(parent, 0777, e) < 0)   /* the umask decides */
				return cli_local_io(e, dir);
		}
		int64_t bytes = -1;
		struct json_object *bv;
		if (json_object_object_get_ex(f, F_BYTES, &bv) && json_object_is_type(bv, json_type_int))
			bytes = json_object_get_int64(bv);
		if (bytes >= 0 &&
		    (take_precopy(pre, sha, (uint64_t)bytes, dest) == 0 ||
		     (own && take_local(cli_json_str(f, F_LOCAL), dest, (uint64_t)bytes) == 0) ||
		     take_existing(out, path, sha, (uint64_t)bytes, dest) == 0))
			continue;
		if (file_url(id, path, &url) < 0) {
			enpu_buf_free(&url);
			return enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
		}
		r = cli_http_download_as(c, url.data, dest, label, sha, 0, e);
		enpu_buf_free(&url);
		if (r < 0)
			return -1;
	}
	return 0;
}

/* Hash spec, weights and the optional target, upload what the server
 * lacks but the weights, POST the compile: a server with a remote cache
 * may answer it without them (a remote hit). When it answers 409 E0804,
 * upload the weights and POST again. *res the server's answer. 0, or -1
 * with e. */
static int compile_post(cli_ctx *ctx, const char *spec, const char *weights, const char *target,
			const char *backend, char dw[65], struct json_object **res, enpu_err *e)
{
	struct json_object *req;
	char ds[65], dt[65];
	const char *paths[3] = {spec, weights, target}, *digests[3] = {ds, dw, dt};
	long status = 0;
	int rc, deferred = 0;

	if (cli_sha256_file(spec, ds, e) < 0 || cli_sha256_file(weights, dw, e) < 0 ||
	    (target && cli_sha256_file(target, dt, e) < 0))
		return -1;
	if (cli_connect(ctx, e) < 0 ||
	    cli_blobs_ensure_defer(ctx->conn, target ? 3 : 2, paths, digests, 1, &deferred, e) < 0)
		return -1;
	req = json_object_new_object();
	json_object_object_add(req, F_SPEC, json_object_new_string(ds));
	json_object_object_add(req, F_WEIGHTS, json_object_new_string(dw));
	json_object_object_add(req, F_SPEC_NAME, json_object_new_string(spec));
	json_object_object_add(req, F_WEIGHTS_NAME, json_object_new_string(weights));
	if (backend)
		json_object_object_add(req, F_BACKEND, json_object_new_string(backend));
	if (target) {
		json_object_object_add(req, F_TARGET, json_object_new_string(dt));
		json_object_object_add(req, F_TARGET_NAME, json_object_new_string(target));
	}
	rc = cli_http_json(ctx->conn, "POST", API_COMPILE, req, 0, res, &status, NULL, e);
	if (rc < 0 && deferred && status == 409 && e->code == ENPU_E_BLOB_MISSING) {
		*e = (enpu_err)ENPU_ERR_INIT;
		rc = cli_blob_put(ctx->conn, weights, dw, e);
		if (rc == 0)
			rc = cli_http_json(ctx->conn, "POST", API_COMPILE, req, 0, res, NULL, NULL, e);
	}
	json_object_put(req);
	return rc < 0 ? -1 : 0;
}

/* The artifact of the answer res into directory tmp (to become out);
 * *nops its ops. 0, or -1 with e. */
static int compile_fetch(cli_ctx *ctx, struct json_object *res, const char *tmp, const char *out,
			 precopy *pre, long long *nops, enpu_err *e)
{
	struct json_object *files;
	const char *id = cli_json_str(res, F_ARTIFACT);

	if (!id || !enpu_is_sha256_hex(id) || cli_json_int(res, F_OPERATORS, nops) < 0 ||
	    !json_object_object_get_ex(res, F_FILES, &files) ||
	    !json_object_is_type(files, json_type_array))
		return enpu_fail(e, ENPU_E_SERVER, API_COMPILE, NULL,
				 "the answer lacks a valid '%s', '%s' or '%s'", F_ARTIFACT, F_OPERATORS, F_FILES);
	return download_files(ctx->conn, id, files, tmp, out, pre, e) < 0 ? -1 : 0;
}

/* --out is neither an input nor a directory of other files: its
 * temporary sibling into tmp. 0, or -1 with e. */
static int begin_out(const char *out, const char *spec, const char *weights, const char *target,
		     char *tmp, size_t cap, enpu_err *e)
{
	const cli_path outs[1] = {{"--out", out}};
	const cli_path ins[3] = {{"--spec", spec}, {"--weights", weights}, {"--target", target}};

	if (cli_outputs_check("compile", outs, 1, 1, ins, 3, e) < 0)
		return -1;
	return cli_outdir_begin("compile", out, tmp, cap, e);
}

int cmd_compile(cli_ctx *ctx, int argc, char **argv)
{
	enpu_err e = ENPU_ERR_INIT;
	const char *spec = NULL, *weights = NULL, *backend = NULL, *out = NULL, *target = NULL;
	const char *pos[1];
	int json = 0;
	const cli_opt opts[] = {
		{"--backend", CLI_OPT_STR, &backend},
		{"--json", CLI_OPT_FLAG, &json},
		{"--out", CLI_OPT_STR, &out},
		{"--spec", CLI_OPT_STR, &spec},
		{"--target", CLI_OPT_STR, &target},
		{"--weights", CLI_OPT_STR, &weights},
		{NULL, 0, NULL},
	};
	struct json_object *res = NULL;
	char line[256], tmp[PATH_MAX], dw[65];
	long long nops = 0;
	precopy pre;
	int n_pos, r;

	r = cli_parse_opts("compile", argc, argv, opts, pos, 0, &n_pos, &e);
	if (r == 1) {
		fputs(usage, stdout);
		return 0;
	}
	if (r < 0)
		return cli_report(&e);
	if (!spec || !weights || !out)
		return cli_report((cli_usage(&e, "compile", "missing required option '%s'",
					     !spec ? "--spec" : !weights ? "--weights" : "--out"), &e));

	if (begin_out(out, spec, weights, target, tmp, sizeof tmp, &e) < 0)
		return cli_report(&e);

	/* the files go into tmp beside out, which replaces out once complete:
	 * a failed compile leaves out as it was */
	cli_progress_setup(json);
	precopy_start(&pre, weights, tmp);
	r = compile_post(ctx, spec, weights, target, backend, dw, &res, &e);
	precopy_join(&pre, r == 0 ? dw : NULL);
	if (r < 0 || compile_fetch(ctx, res, tmp, out, &pre, &nops, &e) < 0) {
		if (e.code == ENPU_E_IO)   /* a local write: name --out, not tmp */
			snprintf(e.where, sizeof e.where, "%s", out);
		precopy_end(&pre);
		cli_outdir_abort(tmp);
		json_object_put(res);
		return cli_report(&e);
	}
	precopy_end(&pre);
	if (cli_outdir_commit(tmp, out, &e) < 0) {
		json_object_put(res);
		return cli_report(&e);
	}
	if (json) {
		json_object_object_add(res, "out", json_object_new_string(out));
		cli_print_json(res);
	} else {
		printf("Compile  OK: %lld op%s lowered \xc2\xb7 plan written\n", nops, nops == 1 ? "" : "s");
		if (cli_fpga_summary(res, line, sizeof line) == 0)
			printf("%s\n", line);
	}
	json_object_put(res);
	return 0;
}

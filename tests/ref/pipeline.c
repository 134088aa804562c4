/* pipeline.c: see pipeline.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "pipeline.h"
#include <json-c/json.h>
#include "buf.h"
#include "digest.h"
#include "json.h"

int tpl_compile_run(const char *dir, const char *backend, const char *target_yaml, int threads,
		    const char *work, const char *report, enpu_buf *res,
		    enpu_compile_info *ci, enpu_run_info *ri, char *why, size_t cap)
{
	static int seq;
	char sp[512], wp[512], ip[512], out[512], rp[512], tp[512], msg[2048];
	enpu_spec *s = NULL;
	enpu_target *t = NULL;
	enpu_artifact *a = NULL;
	enpu_par *par = NULL;
	enpu_err e = ENPU_ERR_INIT;
	enpu_compile_info ci0;
	enpu_run_info ri0;
	const char *stage = "load spec";
	int n = __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED), rc = -1;

	snprintf(sp, sizeof sp, "%s/spec.yaml", dir);
	snprintf(wp, sizeof wp, "%s/weights.npz", dir);
	snprintf(ip, sizeof ip, "%s/input.npz", dir);
	snprintf(out, sizeof out, "%s/art%d", work, n);
	snprintf(rp, sizeof rp, "%s/res%d.npz", work, n);
	snprintf(tp, sizeof tp, "%s/target%d.yaml", work, n);
	if (enpu_spec_load(sp, "spec.yaml", NULL, &s, &e) < 0)
		goto out;
	stage = "target";
	if (target_yaml && enpu_write_file_atomic(tp, target_yaml, strlen(target_yaml), &e) < 0)
		goto out;
	if (enpu_target_resolve(s, backend, target_yaml ? tp : NULL, "target.yaml", NULL, &t, &e) < 0)
		goto out;
	stage = "compile";
	if (enpu_compile(s, t, wp, "weights.npz", NULL, out, NULL, ci ? ci : &ci0, &e) < 0)
		goto out;
	stage = "load artifact";
	if (enpu_artifact_load(out, NULL, &a, &e) < 0)
		goto out;
	stage = "run";
	if (threads > 1 && !(par = enpu_par_create(threads))) {
		enpu_fail(&e, ENPU_E_NOMEM, NULL, NULL, "no thread pool");
		goto out;
	}
	if (enpu_run(a, ip, "input.npz", rp, report, par, NULL, NULL, ri ? ri : &ri0, &e) < 0)
		goto out;
	stage = "read result";
	res->len = 0;
	if (enpu_read_file(rp, 0, res, &e) < 0)
		goto out;
	rc = 0;
out:
	if (rc < 0) {
		enpu_err_render(&e, msg, sizeof msg);
		snprintf(why, cap, "%s [%s %s, %d threads]: %s failed: %s", dir, backend,
			 target_yaml ? target_yaml : "", threads, stage, msg);
	}
	enpu_par_destroy(par);
	enpu_artifact_free(a);
	enpu_target_free(t);
	enpu_spec_free(s);
	return rc;
}

int tpl_read_cases(const char *list, const char *prefix, char names[][256], int max)
{
	FILE *f = fopen(list, "r");
	char line[256];
	int n = 0;

	if (!f)
		return -1;
	while (n < max && fgets(line, sizeof line, f)) {
		char *p = line + strspn(line, " \t");

		p[strcspn(p, " \t\r\n#")] = '\0';
		if (*p)
			snprintf(names[n++], 256, "%s%.200s", prefix, p);
	}
	fclose(f);
	return n;
}

const char *tpl_data_dir(const char *probe)
{
	static const char *const tries[] = {"tests/data", "../tests/data", "../../tests/data"};
	const char *env = getenv("ENPU_TEST_DATA");
	struct stat st;

	if (env)
		return env;
	for (size_t i = 0; i < sizeof(tries) / sizeof(tries[0]); i++) {
		char p[256];

		snprintf(p, sizeof(p), "%s/%s", tries[i], probe);
		if (stat(p, &st) == 0 && S_ISDIR(st.st_mode))
			return tries[i];
	}
	return "tests/data";
}

/* manifest.json's listed files, hashed again: their digests, sizes and the
 * id (enpu_artifact_id_of) follow the bytes on disk. */
static int refresh_manifest(const char *adir, enpu_err *e)
{
	enpu_buf b = ENPU_BUF_INIT, c = ENPU_BUF_INIT;
	json_object *m = NULL, *fl;
	const char *paths[16], *digests[16];
	char id[65], dig[16][65], p[1024];
	size_t n;
	int rc = -1;

	snprintf(p, sizeof p, "%s/manifest.json", adir);
	if (enpu_read_file(p, 0, &b, e) < 0 || !(m = json_tokener_parse(b.data)) ||
	    !json_object_object_get_ex(m, "files", &fl) || (n = json_object_array_length(fl)) > 16)
		goto out;
	for (size_t i = 0; i < n; i++) {
		json_object *f = json_object_array_get_idx(fl, i);
		const char *fp = json_object_get_string(json_object_object_get(f, "path"));

		snprintf(p, sizeof p, "%s/%s", adir, fp);
		enpu_buf_reset(&c);
		if (enpu_read_file(p, 0, &c, e) < 0)
			goto out;
		enpu_sha256_hex(c.data, c.len, dig[i]);
		json_object_object_add(f, "sha256", json_object_new_string(dig[i]));
		json_object_object_add(f, "bytes", json_object_new_int64((int64_t)c.len));
		paths[i] = fp;
		digests[i] = dig[i];
	}
	enpu_artifact_id_of(paths, digests, (int)n, id);
	json_object_object_add(m, "id", json_object_new_string(id));
	b.len = 0;
	if (enpu_json_dump(m, &b, e) < 0)
		goto out;
	snprintf(p, sizeof p, "%s/manifest.json", adir);
	rc = enpu_write_file_atomic(p, b.data, b.len, e);
out:
	json_object_put(m);
	enpu_buf_free(&b);
	enpu_buf_free(&c);
	return rc;
}

int tpl_rewrite_member(const char *adir, const char *rel, const char *text, size_t len)
{
	enpu_err e = ENPU_ERR_INIT;
	char p[1024];

	snprintf(p, sizeof p, "%s/%s", adir, rel);
	if (enpu_write_file_atomic(p, text, len, &e) < 0)
		return -1;
	return strcmp(rel, "manifest.json") ? refresh_manifest(adir, &e) : 0;
}

/* artifacts.c: an artifact named on the command line (run, deploy), as
 * the directory `compile --out` wrote or an id: a directory's artifact is
 * imported when the server lacks it (its files uploaded, each checked
 * against its manifest first). */
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
#include "rest.h"
#include "wire.h"

#define MANIFEST "manifest.json"

/* PUT /v1/artifacts/{id} with the manifest; the server answers 409 (with
 * the digests it lacks) when a file is missing. */
static int put_manifest(cli_conn *c, const char *id, const enpu_buf *man, long *status,
			enpu_err *e)
{
	enpu_buf resp = ENPU_BUF_INIT;
	char path[160];
	cli_req r = {0};
	int ret = -1;

	snprintf(path, sizeof path, "%s%s", API_ARTIFACTS, id);
	r.method = "PUT";
	r.path = path;
	r.body = man->data;
	r.body_len = man->len;
	if (cli_http_do(c, &r, status, &resp, e) < 0)
		goto out;
	if (*status >= 200 && *status < 300)
		ret = 0;
	else
		cli_http_fail(c, *status, &resp, e);
out:
	enpu_buf_free(&resp);
	return ret;
}

/* dir's files as its manifest lists them, each hashed and checked against
 * its digest: paths and digests into pp and dp (m->n entries; paths[i]
 * malloc'd, freed by the caller). */
static int check_dir_files(const char *dir, const enpu_manifest *m, char **paths,
			   char (*digs)[65], const char **pp, const char **dp, enpu_err *e)
{
	for (int i = 0; i < m->n; i++) {
		const enpu_mfile *f = &m->files[i];
		size_t len = strlen(dir) + strlen(f->path) + 2;

		if (!(paths[i] = malloc(len)))
			return enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
		snprintf(paths[i], len, "%s/%s", dir, f->path);
		if (cli_sha256_file(paths[i], digs[i], e) < 0)
			return -1;
		if (strcmp(digs[i], f->sha256) != 0)
			return enpu_fail(e, ENPU_E_ARTIFACT_DIGEST, paths[i],
					 "compile the artifact again",
					 "'%s' does not match the manifest's digest", f->path);
		pp[i] = paths[i];
		dp[i] = digs[i];
	}
	return 0;
}

/* Upload the n blobs the server lacks and import the manifest. */
static int import_dir(cli_conn *c, const char *id, const enpu_buf *man, int n, const char **pp,
		      const char **dp, enpu_err *e)
{
	long status = 0;

	if (cli_blobs_ensure(c, n, pp, dp, NULL, e) < 0)
		return -1;
	if (put_manifest(c, id, man, &status, e) == 0)
		return 0;
	/* 409: a blob went missing between our question and the import (an
	 * eviction); ask again, upload, and retry once. */
	if (status != 409 || cli_blobs_ensure(c, n, pp, dp, NULL, e) < 0)
		return -1;
	return put_manifest(c, id, man, &status, e);
}

/* Use the artifact in dir: read its manifest (enpu_manifest_parse), and if
 * the server does not know the id, upload the files it lacks (each checked
 * against the manifest first) and import the manifest. */
static int use_artifact_dir(cli_conn *c, const char *dir, char id[65], enpu_err *e)
{
	enpu_buf man = ENPU_BUF_INIT;
	enpu_manifest m;
	struct json_object *res = NULL;
	char mpath[PATH_MAX], path[160], mdigest[65];
	char *paths[ENPU_MANIFEST_FILES + 1] = {NULL}, digs[ENPU_MANIFEST_FILES + 1][65];
	const char *pp[ENPU_MANIFEST_FILES + 1], *dp[ENPU_MANIFEST_FILES + 1];
	long status = 0;
	int ret = -1;

	memset(&m, 0, sizeof m);
	if ((size_t)snprintf(mpath, sizeof mpath, "%s/%s", dir, MANIFEST) >= sizeof mpath)
		return enpu_fail(e, ENPU_E_IO, dir, NULL, "artifact directory path too long");
	if (enpu_read_file(mpath, ENPU_MANIFEST_MAX + 1, &man, e) < 0 ||
	    enpu_manifest_parse(man.data, man.len, mpath, &m, e) < 0)
		goto out;
	snprintf(id, 65, "%s", m.id);

	snprintf(path, sizeof path, "%s%s", API_ARTIFACTS, id);
	if (cli_http_json(c, "GET", path, NULL, 0, &res, &status, NULL, e) == 0) {
		ret = 0;
		goto out;
	}
	if (status != 404 || check_dir_files(dir, &m, paths, digs, pp, dp, e) < 0)
		goto out;
	enpu_sha256_hex(man.data, man.len, mdigest);
	pp[m.n] = mpath;
	dp[m.n] = mdigest;
	ret = import_dir(c, id, &man, m.n + 1, pp, dp, e);
out:
	for (int i = 0; i < m.n; i++)
		free(paths[i]);
	enpu_manifest_free(&m);
	json_object_put(res);
	enpu_buf_free(&man);
	return ret;
}

int cli_artifact_check(const char *art, enpu_err *e)
{
	struct stat st;

	if (stat(art, &st) == 0 ? !S_ISDIR(st.st_mode) : !enpu_is_sha256_hex(art))
		return enpu_fail(e, ENPU_E_IO, art, "give the directory that `eulernpu compile "
				 "--out` wrote, or an artifact id", "%s",
				 stat(art, &st) == 0 ? "not an artifact directory"
				 : "no such artifact directory, and not an artifact id");
	return 0;
}

int cli_artifact_use(cli_conn *c, const char *art, char id[65], enpu_err *e)
{
	struct stat st;

	if (stat(art, &st) == 0 && S_ISDIR(st.st_mode))
		return use_artifact_dir(c, art, id, e);
	if (cli_artifact_check(art, e) < 0)
		return -1;
	snprintf(id, 65, "%s", art);
	return 0;
}

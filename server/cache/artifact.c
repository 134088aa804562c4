/* artifact.c: artifacts/<id>/ in the cache: their manifests (read with
 * enpu_manifest_parse, wire.h), ingest of a compile's output, import of a
 * manifest built elsewhere (materialized from CAS blobs and verified before
 * it becomes visible), and an LRU of loaded handles so that repeated jobs
 * do not re-read and re-verify the weights. */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <json-c/json.h>
#include "srv.h"
#include "digest.h"
#include "artifact.h"
#include "wire.h"
#include "graphjson.h"
#include "fault.h"
#include "artifact_int.h"

#define MANIFEST "manifest.json"

void srv_artifact_dir(const srv_cas *c, const char *id, char *out, size_t cap)
{
	char fan[3] = {id[0], id[0] ? id[1] : '\0', '\0'};

	enpu_str_cat(out, cap, srv_cas_root(c), "/artifacts/", fan, "/", id, (char *)NULL);
}

/* The manifests last read, by artifact id: the bytes and the stat they
 * were read at. A manifest whose file still stats the same
 * (srv_stat_same_file: a rewrite, a rename over it or a touch moves its
 * ctime) is not read again: a use costs one stat. */
#define MAN_MEMO_SLOTS 64
/* With them, once srv_artifact_known_good has parsed them, what it needs
 * (the backend, each file's path and digest), so that a job's check costs
 * stats and no parse; for manifests of at most KG_FILES files with paths
 * shorter than KG_PATH (the rest are parsed at every check). */
#define KG_FILES 8
#define KG_PATH 64
typedef struct kg_list {
	int n;                      /* -1: not parsed (or too large to keep) */
	char backend[32];
	char path[KG_FILES][KG_PATH];
	char sha256[KG_FILES][65];
} kg_list;
typedef struct man_memo {
	char id[65];
	struct stat st;
	enpu_buf bytes;
	kg_list kg;
} man_memo;
static man_memo man_memo_tab[MAN_MEMO_SLOTS];
static pthread_mutex_t man_memo_mu = PTHREAD_MUTEX_INITIALIZER;

static man_memo *man_slot(const char *id)
{
	unsigned h = 0;

	for (int i = 0; i < 8; i++)   /* ids are hex digests: any 8 digits spread */
		h = h * 16 + (unsigned)(id[i] <= '9' ? id[i] - '0' : id[i] - 'a' + 10);
	return &man_memo_tab[h % MAN_MEMO_SLOTS];
}

/* The manifest file at p into *b: from the memo when it stats as it did
 * when read, else read (and remembered when nothing changed meanwhile). */
static int read_manifest(const char *id, const char *p, enpu_buf *b, enpu_err *e)
{
	struct stat st, st2;
	man_memo *mm = man_slot(id);
	int hit = 0;

	if (stat(p, &st) != 0 || !S_ISREG(st.st_mode))
		return enpu_fail(e, ENPU_E_IO, p, NULL, "cannot read '%s'", p);
	pthread_mutex_lock(&man_memo_mu);
	if (!strcmp(mm->id, id) && srv_stat_same_file(&mm->st, &st))
		hit = enpu_buf_add(b, mm->bytes.data, mm->bytes.len) == 0;
	pthread_mutex_unlock(&man_memo_mu);
	if (hit)
		return 0;
	if (enpu_read_file(p, ENPU_MANIFEST_MAX, b, e) != 0)
		return -1;
	if (stat(p, &st2) != 0 || !srv_stat_same_file(&st, &st2) || (uint64_t)st.st_size != b->len)
		return 0;   /* changed while read: not remembered */
	pthread_mutex_lock(&man_memo_mu);
	enpu_buf_free(&mm->bytes);
	mm->id[0] = '\0';
	mm->kg.n = -1;
	if (enpu_buf_add(&mm->bytes, b->data, b->len) == 0) {
		memcpy(mm->id, id, 65);
		mm->st = st;
	}
	pthread_mutex_unlock(&man_memo_mu);
	return 0;
}

int srv_artifact_manifest(srv_cas *c, const char *id, enpu_manifest *m, enpu_buf *raw,
			  enpu_err *e)
{
	char p[4300];
	enpu_buf b = ENPU_BUF_INIT;
	enpu_err ignore;
	int ret;

	if (!enpu_is_sha256_hex(id))
		return enpu_fail(e, ENPU_E_NOT_FOUND, id, NULL, "no artifact '%s'", id);
	srv_artifact_dir(c, id, p, sizeof p);
	strcat(p, "/" MANIFEST);
	if (read_manifest(id, p, &b, &ignore) != 0) {
		enpu_buf_free(&b);
		return enpu_fail(e, ENPU_E_NOT_FOUND, id, "compile it, or import it with PUT "
				 API_ARTIFACTS "{id}", "no artifact '%s' on this server", id);
	}
	ret = enpu_manifest_parse(b.data, b.len, MANIFEST, m, e);
	if (ret == 0 && !m->has_summary) {   /* import completes it: not from here */
		enpu_manifest_free(m);
		ret = enpu_fail(e, ENPU_E_ARTIFACT, id, "compile it again, or import it again with PUT "
				API_ARTIFACTS "{id}", "artifact '%.12s' on this server has no summary", id);
	}
	if (ret == 0 && raw) {
		enpu_buf_free(raw);
		*raw = b;
	} else {
		enpu_buf_free(&b);
	}
	return ret;
}

int srv_artifact_present(srv_cas *c, const char *id)
{
	enpu_manifest m;
	enpu_err e = ENPU_ERR_INIT;
	char dir[4300], p[5400];
	struct stat st;
	int i, ok;

	if (srv_artifact_manifest(c, id, &m, NULL, &e) != 0)
		return 0;
	ok = !strcmp(m.id, id);
	srv_artifact_dir(c, id, dir, sizeof dir);
	for (i = 0; ok && i < m.n; i++) {
		snprintf(p, sizeof p, "%s/%s", dir, m.files[i].path);
		if (stat(p, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != m.files[i].bytes)
			ok = 0;
	}
	enpu_manifest_free(&m);
	return ok;
}

/* The loaded-handle LRU (below) forgets dir; keeps a handle. */

int srv_artifact_drop(srv_cas *c, const char *id)
{
	return srv_artifact_drop_into(c, id, NULL);
}

int srv_artifact_drop_into(srv_cas *c, const char *id, srv_paths *later)
{
	char dir[4300], gone[4300];
	int existed;

	if (!enpu_is_sha256_hex(id))
		return 0;
	srv_artifact_dir(c, id, dir, sizeof dir);
	srv_artifact_lru_forget(dir);
	/* The action-cache entries first: a crash after this leaves an
	 * artifact nothing names, never an entry naming nothing. */
	srv_ac_take_for(c, id, later);
	/* One rename takes the whole directory out of artifacts/ (and the
	 * index), so a crash never leaves half of it there; tmp/ is emptied
	 * at start. A removal is not fsynced (docs/architecture.md, "Cache"):
	 * one that a power cut undoes brings back an artifact whose files are
	 * checked at its next use. */
	existed = srv_cas_unlink_artifact(c, id, later, gone, sizeof gone);
	if (existed) {
		srv_fault_point("drop");
		if (gone[0] && (!later || srv_paths_add(later, gone) != 0))
			srv_rmtree(gone);
	}
	return existed;
}

int srv_artifact_verify(srv_cas *c, const char *id, enpu_manifest *keep, enpu_err *e)
{
	enpu_manifest m;
	enpu_err ign = ENPU_ERR_INIT;
	char dir[4300], p[5400], first[1100] = "";
	struct stat st;
	int i, n_bad = 0, gone = 0;

	if (!enpu_is_sha256_hex(id)) {
		if (e)
			enpu_fail(e, ENPU_E_NOT_FOUND, id, NULL, "no artifact '%.80s'", id);
		return 0;
	}
	srv_artifact_dir(c, id, dir, sizeof dir);
	if (stat(dir, &st) != 0) {
		if (e)
			enpu_fail(e, ENPU_E_NOT_FOUND, id, "compile it, or import it with PUT "
				  API_ARTIFACTS "{id}", "no artifact '%s' on this server", id);
		return 0;
	}
	if (srv_artifact_manifest(c, id, &m, NULL, &ign) != 0) {
		snprintf(first, sizeof first, MANIFEST);
		n_bad = 1;
		goto bad;
	}
	if (strcmp(m.id, id) != 0) {
		snprintf(first, sizeof first, MANIFEST);
		n_bad = 1;
	}
	for (i = 0; i < m.n; i++) {
		snprintf(p, sizeof p, "%s/%s", dir, m.files[i].path);
		if (srv_cas_check_file(c, p, m.files[i].sha256, 0))
			continue;    /* the common case: one stat, known good */
		if (stat(p, &st) != 0) {
			gone = 1;    /* being removed (eviction) or damaged: not ours to count */
			continue;
		}
		if (!n_bad++)
			snprintf(first, sizeof first, "%s", m.files[i].path);
		/* the blob is usually the same inode: drop it too so that the
		 * client uploads it again */
		srv_cas_verify(c, m.files[i].sha256, NULL);
	}
	if (!n_bad && !gone) {
		if (keep)
			*keep = m;   /* the caller's now */
		else
			enpu_manifest_free(&m);
		return 1;
	}
	enpu_manifest_free(&m);
	if (!n_bad) {
		srv_artifact_drop(c, id);
		if (e)
			enpu_fail(e, ENPU_E_NOT_FOUND, id, "compile it, or import it with PUT "
				  API_ARTIFACTS "{id}", "artifact '%.12s' lost a file and was dropped",
				  id);
		return 0;
	}
bad:
	srv_artifact_drop(c, id);
	srv_cas_count(c, SRV_EV_INTEGRITY, 0);
	srv_log("warn", "cache: artifact %s failed its integrity check ('%s' does not hash to "
		"its manifest digest): dropped", id, first);
	if (e)
		enpu_fail(e, ENPU_E_NOT_FOUND, id, "compile it again, or import it again with PUT "
			  API_ARTIFACTS "{id} (eulernpu run --artifact DIR does)",
			  "artifact '%.12s' failed its integrity check on the server ('%s' does not "
			  "hash to its manifest digest) and was dropped", id, first);
	return 0;
}

/* The check list of artifact id whose manifest stats as st, from the memo
 * into *out: 1, or 0 when it has none for that file. */
static int kg_get(const char *id, const struct stat *st, kg_list *out)
{
	man_memo *mm = man_slot(id);
	int hit;

	pthread_mutex_lock(&man_memo_mu);
	hit = !strcmp(mm->id, id) && srv_stat_same_file(&mm->st, st) && mm->kg.n >= 0;
	if (hit)
		*out = mm->kg;
	pthread_mutex_unlock(&man_memo_mu);
	return hit;
}

/* m (parsed from the manifest that stats as st) as id's check list: into
 * *out, and into the memo when its bytes are of that file. 0, or -1 when
 * it does not fit a kg_list. */
static int kg_put(const char *id, const struct stat *st, const enpu_manifest *m, kg_list *out)
{
	man_memo *mm = man_slot(id);
	int i;

	if (m->n > KG_FILES)
		return -1;
	out->n = m->n;
	snprintf(out->backend, sizeof out->backend, "%s", m->backend);
	for (i = 0; i < m->n; i++) {
		if (strlen(m->files[i].path) >= KG_PATH)
			return -1;
		snprintf(out->path[i], KG_PATH, "%s", m->files[i].path);
		memcpy(out->sha256[i], m->files[i].sha256, 65);
	}
	pthread_mutex_lock(&man_memo_mu);
	if (!strcmp(mm->id, id) && srv_stat_same_file(&mm->st, st))
		mm->kg = *out;
	pthread_mutex_unlock(&man_memo_mu);
	return 0;
}

int srv_artifact_known_good(srv_cas *c, const char *id, char *backend, size_t cap)
{
	enpu_manifest m;
	enpu_err ign = ENPU_ERR_INIT;
	char dir[4300], p[5400];
	struct stat st;
	kg_list kg;
	int i, ok;

	if (!enpu_is_sha256_hex(id))
		return 0;
	srv_artifact_dir(c, id, dir, sizeof dir);
	enpu_str_cat(p, sizeof p, dir, "/" MANIFEST, (char *)NULL);
	if (stat(p, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	if (!kg_get(id, &st, &kg)) {
		/* read (the bytes' memo) and parse; kept when it fits */
		if (srv_artifact_manifest(c, id, &m, NULL, &ign) != 0)
			return 0;
		ok = !strcmp(m.id, id);
		if (ok && kg_put(id, &st, &m, &kg) != 0) {
			/* too large to keep: checked from the parse */
			for (i = 0; ok && i < m.n; i++) {
				snprintf(p, sizeof p, "%s/%s", dir, m.files[i].path);
				ok = srv_cas_known_good(c, p, m.files[i].sha256);
			}
			if (ok)
				snprintf(backend, cap, "%s", m.backend);
			enpu_manifest_free(&m);
			return ok;
		}
		enpu_manifest_free(&m);
		if (!ok)
			return 0;
	}
	for (i = 0; i < kg.n; i++) {
		enpu_str_cat(p, sizeof p, dir, "/", kg.path[i], (char *)NULL);
		if (!srv_cas_known_good(c, p, kg.sha256[i]))
			return 0;
	}
	snprintf(backend, cap, "%s", kg.backend);
	return 1;
}

void srv_artifact_touch(srv_cas *c, const char *id)
{
	enpu_manifest m;
	enpu_buf raw = ENPU_BUF_INIT;
	enpu_err e = ENPU_ERR_INIT;
	char dig[65];
	int i;

	if (srv_cas_touch_artifact_recent(c, id))   /* its files' mtimes are fresh */
		return;
	if (srv_artifact_manifest(c, id, &m, &raw, &e) != 0) {
		enpu_buf_free(&raw);
		return;
	}
	for (i = 0; i < m.n; i++)
		srv_cas_touch(c, m.files[i].sha256);
	enpu_sha256_hex(raw.data, raw.len, dig);
	srv_cas_touch(c, dig);
	srv_cas_touch_artifact(c, id);
	enpu_manifest_free(&m);
	enpu_buf_free(&raw);
}

long srv_artifact_count(srv_cas *c)
{
	srv_cache_stats st;

	srv_cas_stats(c, &st);   /* the index's count */
	return (long)st.artifacts;
}

/* rename(dir, artifacts/<id>); when another request got there first, keep
 * theirs (same content by construction) and drop ours. */
static int install_dir(srv_cas *c, const char *dir, const char *id, enpu_err *e)
{
	char dst[4300], shard[4300];

	snprintf(shard, sizeof shard, "%s/artifacts/%.2s", srv_cas_root(c), id);
	srv_artifact_dir(c, id, dst, sizeof dst);
	if (srv_mkdir_shard(shard) != 0)
		return enpu_fail(e, ENPU_E_STORAGE, shard, NULL, "cannot create '%s': %s", shard,
				 strerror(errno));
	if (rename(dir, dst) != 0) {
		if (errno != EEXIST && errno != ENOTEMPTY)
			return enpu_fail(e, ENPU_E_STORAGE, dst, NULL,
					 "cannot install artifact '%s': %s", id, strerror(errno));
		srv_rmtree(dir);
	} else {
		srv_fsync_dir(shard);
	}
	srv_cas_index_artifact(c, id);
	return 0;
}

int srv_artifact_ingest(srv_cas *c, const char *dir, const char *id, enpu_err *e)
{
	char p[5400], dig[65];
	enpu_buf raw = ENPU_BUF_INIT;
	enpu_manifest m;
	int i, ret = -1;

	snprintf(p, sizeof p, "%s/" MANIFEST, dir);
	if (enpu_read_file(p, ENPU_MANIFEST_MAX, &raw, e) != 0)
		goto out0;
	if (enpu_manifest_parse(raw.data, raw.len, MANIFEST, &m, e) != 0)
		goto out0;
	if (strcmp(m.id, id) != 0) {
		enpu_fail(e, ENPU_E_INTERNAL, MANIFEST, NULL,
			  "compiled manifest gives id %s, compile said %s", m.id, id);
		goto out;
	}
	for (i = 0; i < m.n; i++) {
		snprintf(p, sizeof p, "%s/%s", dir, m.files[i].path);
		if (srv_cas_put_file(c, p, dig, e) != 0)
			goto out;
		if (strcmp(dig, m.files[i].sha256) != 0) {
			enpu_fail(e, ENPU_E_ARTIFACT_DIGEST, m.files[i].path, NULL,
				  "compiled file '%s' does not match its manifest digest",
				  m.files[i].path);
			goto out;
		}
		if (i == 0)
			srv_fault_point("compile");   /* written, not yet installed */
	}
	if (srv_cas_put_mem(c, raw.data, raw.len, dig, e) != 0)
		goto out;
	/* an existing directory wins in install_dir: it must be intact */
	srv_artifact_verify(c, id, NULL, NULL);
	ret = install_dir(c, dir, id, e);
out:
	enpu_manifest_free(&m);
out0:
	enpu_buf_free(&raw);
	return ret;
}

int srv_artifact_ingest_compiled(srv_cas *c, const char *dir, const enpu_compiled *cc,
				 enpu_err *e)
{
	char p[5400];

	/* every file but the manifest, then the manifest, by the digests the
	 * compile computed from these very bytes */
	for (int i = 0; i < ENPU_ARTIFACT_FILES; i++) {
		snprintf(p, sizeof p, "%s/%s", dir, cc->files[i].path);
		if (srv_cas_put_file_as(c, p, cc->files[i].sha256, e) != 0)
			return -1;
		if (i == 0)
			srv_fault_point("compile");   /* written, not yet installed */
	}
	/* an existing directory wins in install_dir: it must be intact */
	srv_artifact_verify(c, cc->info.artifact_id, NULL, NULL);
	return install_dir(c, dir, cc->info.artifact_id, e);
}

static int mkparents(const char *root, const char *rel, enpu_err *e)
{
	char p[5400];
	char *slash;

	snprintf(p, sizeof p, "%s/%s", root, rel);
	slash = strrchr(p, '/');
	if (!slash || slash < p + strlen(root) + 1)
		return 0;
	*slash = '\0';
	return enpu_mkdirs(p, 0755, e);
}

/* The blobs of m the CAS lacks (verified: a corrupted blob is dropped and
 * asked for again) into *missing, -1 and ENPU_E_BLOB_MISSING when any;
 * -1 and ENPU_E_ARTIFACT when a blob does not have its listed size. */
static int missing_blobs(srv_cas *c, const enpu_manifest *m, const char *id,
			 json_object **missing, enpu_err *e)
{
	int n_missing = 0;

	*missing = json_object_new_array();
	for (int i = 0; i < m->n; i++) {
		uint64_t sz;

		if (!srv_cas_verify(c, m->files[i].sha256, &sz)) {
			json_object_array_add(*missing, json_object_new_string(m->files[i].sha256));
			n_missing++;
		} else if (sz != m->files[i].bytes) {
			return enpu_fail(e, ENPU_E_ARTIFACT, m->files[i].path, NULL,
					 "file '%s' is listed with %llu bytes, its blob has %llu",
					 m->files[i].path, (unsigned long long)m->files[i].bytes,
					 (unsigned long long)sz);
		}
	}
	if (n_missing)
		return enpu_fail(e, ENPU_E_BLOB_MISSING, id, "upload the missing blobs with PUT "
				 API_BLOBS "{sha256}, then retry",
				 "%d file(s) of artifact '%.12s' are not on the server (first: %s)",
				 n_missing, id,
				 json_object_get_string(json_object_array_get_idx(*missing, 0)));
	json_object_put(*missing);
	*missing = NULL;
	return 0;
}

/* m's files (linked from their blobs, verified by missing_blobs: known
 * good, and so through the link) and the manifest text into tmp. */
static int materialize(srv_cas *c, const enpu_manifest *m, const char *text, size_t len,
		       const char *tmp, enpu_err *e)
{
	char to[5400];

	for (int i = 0; i < m->n; i++) {
		snprintf(to, sizeof to, "%s/%s", tmp, m->files[i].path);
		if (mkparents(tmp, m->files[i].path, e) != 0 ||
		    srv_cas_link_blob(c, m->files[i].sha256, to, e) != 0)
			return -1;
		if (strchr(m->files[i].path, '/')) {
			*strrchr(to, '/') = '\0';
			srv_fsync_dir(to);   /* durable before the rename publishes it */
		}
	}
	snprintf(to, sizeof to, "%s/" MANIFEST, tmp);
	return srv_cas_write_atomic(c, to, text, len, e);
}

/* 1 when every file of m in tmp is known to hash to its digest. */
static int all_known_good(srv_cas *c, const enpu_manifest *m, const char *tmp)
{
	char p[5400];

	for (int i = 0; i < m->n; i++) {
		enpu_str_cat(p, sizeof p, tmp, "/", m->files[i].path, (char *)NULL);
		if (!srv_cas_known_good(c, p, m->files[i].sha256))
			return 0;
	}
	return 1;
}

/* An older build's manifest has no summary: the one the artifact's files
 * give (s) goes into *full and over tmp's manifest.json (the id hashes the
 * files, not the manifest: it stays). full stays empty otherwise. */
static int complete_manifest(srv_cas *c, const enpu_manifest *m, const enpu_msummary *s,
			     const char *tmp, enpu_buf *full, enpu_err *e)
{
	char to[5400];

	if (m->has_summary)
		return 0;
	if (enpu_manifest_with_summary(m, s, full, e) != 0)
		return -1;
	snprintf(to, sizeof to, "%s/" MANIFEST, tmp);
	return srv_cas_write_atomic(c, to, full->data, full->len, e);
}

/* srv_artifact_import, keeping the loaded handle (keep), or
 * srv_artifact_import_stored. */
static int import(srv_cas *c, const char *id, const char *text, size_t len,
		  const enpu_limits *lim, int keep, json_object **missing, int *created,
		  enpu_err *e)
{
	enpu_manifest m;
	char tmp[4300] = "", dir[4300], dig[65];
	enpu_artifact *a = NULL;
	enpu_msummary sum;
	enpu_buf full = ENPU_BUF_INIT;
	unsigned how;
	int ret = -1;

	*missing = NULL;
	*created = 0;
	if (enpu_manifest_parse(text, len, MANIFEST, &m, e) != 0)
		return -1;
	if (strcmp(m.id, id) != 0) {
		enpu_fail(e, ENPU_E_ARTIFACT, MANIFEST, "PUT the manifest under the id that its files give",
			  "manifest files give artifact id %s, not '%s'", m.id, id);
		goto out;
	}
	if (srv_artifact_present(c, id)) {
		ret = 0;
		goto out;
	}
	if (missing_blobs(c, &m, id, missing, e) != 0)
		goto out;
	if (srv_cas_tmpdir(c, tmp, sizeof tmp, e) != 0) {
		tmp[0] = '\0';
		goto out;
	}
	/* Load before it becomes visible (every file, and the summary against
	 * what they give): a bad import never lands, and afterwards the
	 * directory and its manifest are trusted. The files' bytes were hashed
	 * to their digests as they came (an upload, the remote cache's fetch)
	 * or by missing_blobs just now: when the memo still says so of each
	 * file in tmp, the load does not hash them again (ENPU_LOAD_HASHED);
	 * every other check is as deep. */
	if (materialize(c, &m, text, len, tmp, e) != 0)
		goto out;
	srv_cas_count(c, SRV_EV_LOAD, 0);
	how = all_known_good(c, &m, tmp) ? ENPU_LOAD_HASHED : 0;
	if (keep ? enpu_artifact_load_ex(tmp, lim, how, &a, e) != 0 :
	    enpu_artifact_check(tmp, lim, how, &sum, e) != 0)
		goto out;
	if (a)
		enpu_artifact_summary(a, &sum);
	if (complete_manifest(c, &m, &sum, tmp, &full, e) != 0)
		goto out;
	if (full.len) {   /* an older build's manifest, now with its summary */
		text = full.data;
		len = full.len;
	}
	if (srv_cas_put_mem(c, text, len, dig, e) != 0 || install_dir(c, tmp, id, e) != 0)
		goto out;
	tmp[0] = '\0';
	/* the first job needs not load it again */
	srv_artifact_dir(c, id, dir, sizeof dir);
	if (a && srv_artifact_lru_put(dir, a, 0))
		a = NULL;
	*created = 1;
	ret = 0;
out:
	enpu_artifact_free(a);
	enpu_buf_free(&full);
	if (tmp[0])
		srv_rmtree(tmp);
	enpu_manifest_free(&m);
	return ret;
}

int srv_artifact_import(srv_cas *c, const char *id, const char *text, size_t len,
			const enpu_limits *lim, json_object **missing, int *created,
			enpu_err *e)
{
	return import(c, id, text, len, lim, 1, missing, created, e);
}

int srv_artifact_import_stored(srv_cas *c, const char *id, const char *text, size_t len,
			       const enpu_limits *lim, json_object **missing, int *created,
			       enpu_err *e)
{
	return import(c, id, text, len, lim, 0, missing, created, e);
}

/* the file rel of artifact id as an absolute path in the cache */
static json_object *local_path(const srv_cas *c, const char *id, const char *rel)
{
	char dir[4300], p[4600];

	srv_artifact_dir(c, id, dir, sizeof dir);
	snprintf(p, sizeof p, "%s/%s", dir, rel);
	return json_object_new_string(p);
}

json_object *srv_artifact_files_json(const srv_cas *c, const enpu_manifest *m,
				     const enpu_buf *raw, int local)
{
	json_object *arr = json_object_new_array();
	char dig[65];
	int i;

	for (i = 0; i < m->n; i++) {
		json_object *f = json_object_new_object();
		uint64_t bytes = m->files[i].bytes;

		json_object_object_add(f, F_PATH, json_object_new_string(m->files[i].path));
		json_object_object_add(f, F_SHA256, json_object_new_string(m->files[i].sha256));
		json_object_object_add(f, F_BYTES, json_object_new_int64((int64_t)bytes));
		if (local)
			json_object_object_add(f, F_LOCAL, local_path(c, m->id, m->files[i].path));
		json_object_array_add(arr, f);
	}
	if (raw) {
		json_object *f = json_object_new_object();
		enpu_sha256_hex(raw->data, raw->len, dig);
		json_object_object_add(f, F_PATH, json_object_new_string(MANIFEST));
		json_object_object_add(f, F_SHA256, json_object_new_string(dig));
		json_object_object_add(f, F_BYTES, json_object_new_int64((int64_t)raw->len));
		if (local)
			json_object_object_add(f, F_LOCAL, local_path(c, m->id, MANIFEST));
		json_object_array_add(arr, f);
	}
	return arr;
}

/* test_srv_cas.c: the daemon's cache on disk (server/cache/cas.c, artifact.c):
 * blob put/get/verify, streamed uploads, atomic writes, the action cache,
 * manifests, ingest/import of a real compiled artifact, and a restart (a new
 * handle over the same directory) that sees everything; and PUT /v1/blobs
 * through the daemon's HTTP layer on a Unix socket. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <curl/curl.h>
#include <json-c/json.h>
#include "srv.h"
#include "http.h"
#include "buf.h"
#include "digest.h"
#include "cas.h"
#include "artifact.h"
#include "json.h"
#include "cache_util.h"

#define HELLO_SHA "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"

static char root[256];

static void setup(void)
{
	snprintf(root, sizeof root, "/tmp/enpu-test-cas.XXXXXX");
	cr_assert_not_null(mkdtemp(root));
}

static void teardown(void)
{
	srv_artifact_cache_clear();
	srv_rmtree(root);
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;
	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static srv_cas *open_cache(const char *sub)
{
	char p[512];
	enpu_err e = ENPU_ERR_INIT;
	snprintf(p, sizeof p, "%s/%s", root, sub);
	srv_cas *c = srv_cas_open(p, &e);
	cr_assert_not_null(c, "open: %s", e.message);
	return c;
}

static void read_all(const char *path, enpu_buf *b)
{
	enpu_err e = ENPU_ERR_INIT;
	cr_assert_eq(enpu_read_file(path, 0, b, &e), 0, "%s: %s", path, e.message);
}

TestSuite(srv_cas, .init = setup, .fini = teardown);

Test(srv_cas, put_mem_and_get)
{
	srv_cas *c = open_cache("c");
	char dig[65], p[4300];
	enpu_err e = ENPU_ERR_INIT;
	enpu_buf b = ENPU_BUF_INIT;
	uint64_t size = 0;

	cr_assert_eq(srv_cas_has(c, HELLO_SHA, NULL), 0);
	cr_assert_eq(srv_cas_put_mem(c, "hello", 5, dig, &e), 0, "%s", e.message);
	cr_assert_str_eq(dig, HELLO_SHA);
	cr_assert_eq(srv_cas_has(c, HELLO_SHA, &size), 1);
	cr_assert_eq(size, 5);
	srv_cas_blob_path(c, dig, p, sizeof p);
	cr_assert(strstr(p, "/cas/2c/" HELLO_SHA) != NULL, "layout: %s", p);
	read_all(p, &b);
	cr_assert_eq(b.len, 5);
	cr_assert_eq(memcmp(b.data, "hello", 5), 0);
	cr_assert_eq(srv_cas_has(c, "not-a-digest", NULL), 0);
	enpu_buf_free(&b);
	srv_cas_close(c);
}

Test(srv_cas, streamed_upload_verified_and_idempotent)
{
	srv_cas *c = open_cache("c");
	enpu_err e = ENPU_ERR_INIT;
	char dig[65], tmp[512];
	int existed = -1;
	srv_upload *u = srv_upload_begin(c, &e);

	cr_assert_not_null(u);
	cr_assert_eq(srv_upload_write(u, "he", 2, &e), 0);
	cr_assert_eq(srv_upload_write(u, "llo", 3, &e), 0);
	cr_assert_eq(srv_upload_bytes(u), 5);
	cr_assert_eq(srv_upload_finish(u, HELLO_SHA, dig, &existed, &e), 0, "%s", e.message);
	cr_assert_eq(existed, 0);

	u = srv_upload_begin(c, &e);
	srv_upload_write(u, "hello", 5, &e);
	cr_assert_eq(srv_upload_finish(u, HELLO_SHA, dig, &existed, &e), 0);
	cr_assert_eq(existed, 1, "second upload of the same bytes is a no-op");

	snprintf(tmp, sizeof tmp, "%s/c/tmp", root);
	cr_assert_eq(count_entries(tmp), 0, "no temp files left behind");
	srv_cas_close(c);
}

Test(srv_cas, upload_with_wrong_digest_is_rejected)
{
	srv_cas *c = open_cache("c");
	enpu_err e = ENPU_ERR_INIT;
	char dig[65], tmp[512];
	const char *other = "0000000000000000000000000000000000000000000000000000000000000000";
	srv_upload *u = srv_upload_begin(c, &e);

	srv_upload_write(u, "hello", 5, &e);
	cr_assert_eq(srv_upload_finish(u, other, dig, NULL, &e), -1);
	cr_assert_eq(e.code, ENPU_E_BLOB_DIGEST);
	cr_assert_eq(srv_cas_has(c, other, NULL), 0);
	cr_assert_eq(srv_cas_has(c, HELLO_SHA, NULL), 0, "bad upload stores nothing");
	snprintf(tmp, sizeof tmp, "%s/c/tmp", root);
	cr_assert_eq(count_entries(tmp), 0);

	/* every digit counts: a digest off in its last hex digit only */
	const char *near = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9825";
	u = srv_upload_begin(c, &e);
	srv_upload_write(u, "hello", 5, &e);
	cr_assert_eq(srv_upload_finish(u, near, dig, NULL, &e), -1);
	cr_assert_eq(e.code, ENPU_E_BLOB_DIGEST);
	cr_assert_eq(srv_cas_has(c, near, NULL), 0);
	cr_assert_eq(srv_cas_has(c, HELLO_SHA, NULL), 0, "bad upload stores nothing");
	cr_assert_eq(count_entries(tmp), 0);
	srv_cas_close(c);
}

/* A file of n pseudo-random bytes (several copier steps when big), its
 * open fd and fstat; its sha256 into dig. */
static int copy_source(const char *name, size_t n, char dig[65], struct stat *st)
{
	char p[512];
	unsigned char *b = malloc(n);
	int fd;

	cr_assert_not_null(b);
	for (size_t i = 0; i < n; i++)
		b[i] = (unsigned char)(i * 131u + (i >> 9));
	snprintf(p, sizeof p, "%s/%s", root, name);
	fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0644);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, b, n), (ssize_t)n);
	enpu_sha256_hex(b, n, dig);
	free(b);
	cr_assert_eq(fstat(fd, st), 0);
	return fd;
}

/* The daemon's copy of a named file (X-Eulernpu-Local-File): hashed as it
 * is copied, and across the copier's 8 MiB steps. */
Test(srv_cas, copy_fd_hashes_the_copy)
{
	srv_cas *c = open_cache("c");
	enpu_err e = ENPU_ERR_INIT;
	char want[65], dig[65], blob[4200];
	struct stat st;
	int fd = copy_source("src", (17u << 20) + 5, want, &st);
	srv_upload *u = srv_upload_begin(c, &e);

	cr_assert_eq(srv_upload_copy_fd(u, fd, (uint64_t)st.st_size, NULL, NULL, &e), 0, "%s",
		     e.message);
	cr_assert_eq(srv_upload_vouched(u), 0);
	cr_assert_eq(srv_upload_bytes(u), (uint64_t)st.st_size);
	cr_assert_eq(srv_upload_finish(u, want, dig, NULL, &e), 0, "%s", e.message);
	srv_cas_blob_path(c, want, blob, sizeof blob);
	cr_assert_eq(enpu_sha256_file(blob, dig, &e), 0);
	cr_assert_str_eq(dig, want, "the blob holds the file's bytes");
	/* a digest the file does not hash to is refused */
	u = srv_upload_begin(c, &e);
	cr_assert_eq(srv_upload_copy_fd(u, fd, (uint64_t)st.st_size - 1, NULL, NULL, &e), 0);
	cr_assert_eq(srv_upload_finish(u, HELLO_SHA, dig, NULL, &e), -1);
	cr_assert_eq(e.code, ENPU_E_BLOB_DIGEST);
	close(fd);
	srv_cas_close(c);
}

/* A vouched digest is taken at its word while the file keeps the identity
 * vouched for (the copy is not hashed: a digest that is not the file's
 * shows it), and is checked by hashing once the file moved. */
Test(srv_cas, copy_fd_takes_a_vouched_digest_only_for_the_file_vouched_for)
{
	srv_cas *c = open_cache("c");
	enpu_err e = ENPU_ERR_INIT;
	char want[65], dig[65];
	const char *other = "1111111111111111111111111111111111111111111111111111111111111111";
	struct stat st, moved;
	int fd = copy_source("src", 3u << 20, want, &st);
	srv_upload *u = srv_upload_begin(c, &e);

	cr_assert_eq(srv_upload_copy_fd(u, fd, (uint64_t)st.st_size, want, &st, &e), 0, "%s",
		     e.message);
	cr_assert_eq(srv_upload_vouched(u), 1);
	cr_assert_eq(srv_upload_finish(u, want, dig, NULL, &e), 0, "%s", e.message);
	cr_assert_str_eq(dig, want);
	cr_assert(srv_cas_has(c, want, NULL));
	/* not hashed: the word is taken even for a digest the bytes lack */
	u = srv_upload_begin(c, &e);
	cr_assert_eq(srv_upload_copy_fd(u, fd, (uint64_t)st.st_size, other, &st, &e), 0);
	cr_assert_eq(srv_upload_vouched(u), 1);
	cr_assert_eq(srv_upload_finish(u, other, dig, NULL, &e), 0);
	cr_assert_str_eq(dig, other);
	/* the file written since it was vouched for (one byte, same size):
	 * hashed after all, and the stale digest refused */
	cr_assert_eq(pwrite(fd, "x", 1, 100), 1);
	cr_assert_eq(fstat(fd, &moved), 0);
	cr_assert(moved.st_ctim.tv_sec != st.st_ctim.tv_sec || moved.st_ctim.tv_nsec != st.st_ctim.tv_nsec,
		  "a write moves the change time");
	u = srv_upload_begin(c, &e);
	cr_assert_eq(srv_upload_copy_fd(u, fd, (uint64_t)st.st_size, want, &st, &e), 0);
	cr_assert_eq(srv_upload_vouched(u), 0);
	cr_assert_eq(srv_upload_bytes(u), (uint64_t)st.st_size);
	cr_assert_eq(srv_upload_finish(u, want, dig, NULL, &e), -1);
	cr_assert_eq(e.code, ENPU_E_BLOB_DIGEST);
	/* the same vouched for with its old identity but the same bytes
	 * (times moved only): hashed, and stored */
	cr_assert_eq(pwrite(fd, (unsigned char[]){(unsigned char)(100 * 131u)}, 1, 100), 1);
	u = srv_upload_begin(c, &e);
	cr_assert_eq(srv_upload_copy_fd(u, fd, (uint64_t)st.st_size, want, &st, &e), 0);
	cr_assert_eq(srv_upload_vouched(u), 0);
	cr_assert_eq(srv_upload_finish(u, want, dig, NULL, &e), 0, "%s", e.message);
	close(fd);
	srv_cas_close(c);
}

/* A link made through the cache keeps a verified blob known good (its
 * next check a stat, not a hash); a plain link moves its ctime and does
 * not. And a file that already is a link to its blob is left as it is
 * when stored again (no second link beside it). */
Test(srv_cas, links_keep_a_blob_known_good_and_add_no_second_link)
{
	srv_cas *c = open_cache("c");
	enpu_err e = ENPU_ERR_INIT;
	char dig[65], blob[4200], a[512], b[512], lnk[600];
	struct stat st;

	cr_assert_eq(srv_cas_put_mem(c, "hello", 5, dig, &e), 0);
	srv_cas_blob_path(c, dig, blob, sizeof blob);
	cr_assert(srv_cas_known_good(c, blob, dig), "a stored blob is known good");
	snprintf(a, sizeof a, "%s/a", root);
	snprintf(b, sizeof b, "%s/b", root);
	cr_assert_eq(srv_cas_link_known(c, blob, a), 0);
	cr_assert(srv_cas_known_good(c, blob, dig), "the cache's link kept it known good");
	cr_assert(srv_cas_known_good(c, a, dig), "so is the link (the same inode)");
	cr_assert_eq(link(blob, b), 0);
	cr_assert_not(srv_cas_known_good(c, blob, dig), "a plain link moved its ctime");
	cr_assert_eq(srv_cas_link_known(c, blob, b), -1);
	cr_assert_eq(errno, EEXIST);
	/* stored again from a file that is the blob itself */
	cr_assert_eq(srv_cas_put_file_as(c, a, dig, &e), 0, "%s", e.message);
	snprintf(lnk, sizeof lnk, "%s.lnk", a);
	cr_assert_neq(stat(lnk, &st), 0, "a second link was left beside it");
	cr_assert_eq(stat(a, &st), 0);
	cr_assert_eq(st.st_nlink, 3, "blob, a and b");
	srv_cas_close(c);
}

static size_t sink(char *p, size_t size, size_t n, void *ud)
{
	return enpu_buf_add(ud, p, size * n) == 0 ? size * n : 0;
}

/* PUT body to /v1/blobs/<digest> on the Unix socket sock: the HTTP status. */
static long put_blob(const char *sock, const char *digest, const char *body, enpu_buf *resp)
{
	CURL *h = curl_easy_init();
	struct curl_slist *hd = NULL;
	char url[256];
	long st = 0;
	CURLcode rc;

	cr_assert_not_null(h);
	snprintf(url, sizeof url, "http://localhost/v1/blobs/%s", digest);
	hd = curl_slist_append(hd, "Content-Type: application/octet-stream");
	hd = curl_slist_append(hd, "Expect:");
	curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, sock);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "PUT");
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, resp);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 60L);
	rc = curl_easy_perform(h);
	if (rc == CURLE_OK)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &st);
	curl_slist_free_all(hd);
	curl_easy_cleanup(h);
	cr_assert_eq(rc, CURLE_OK, "PUT %s: %s", url, curl_easy_strerror(rc));
	return st;
}

/* The route, not only srv_upload_finish, must hold the bytes to the digest
 * named in the path: bytes that hash elsewhere are refused (422, E0805) and
 * stored under no name; the right digest stores them (201). */
Test(srv_cas, put_blob_route_checks_the_digest_in_the_path)
{
	const char *near = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9825";
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct MHD_Daemon *d;
	enpu_buf resp = ENPU_BUF_INIT;
	char sock[300];
	srv_ctx ctx;
	int fd;

	memset(&ctx, 0, sizeof ctx);
	srv_config_defaults(&ctx.cfg);
	ctx.lim = &ctx.cfg.limits;
	ctx.cas = open_cache("c");
	snprintf(sock, sizeof sock, "%s/s.sock", root);
	cr_assert_lt(strlen(sock), sizeof sa.sun_path);
	memcpy(sa.sun_path, sock, strlen(sock) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(fd, 0);
	cr_assert_eq(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	cr_assert_eq(listen(fd, 16), 0);
	d = srv_http_start(&ctx, fd);
	cr_assert_not_null(d);

	cr_assert_eq(put_blob(sock, near, "hello", &resp), 422, "%.*s", (int)resp.len, resp.data);
	cr_assert(resp.len && memmem(resp.data, resp.len, "E0805", 5), "%.*s", (int)resp.len, resp.data);
	cr_assert_eq(srv_cas_has(ctx.cas, near, NULL), 0);
	cr_assert_eq(srv_cas_has(ctx.cas, HELLO_SHA, NULL), 0, "refused bytes are stored nowhere");
	resp.len = 0;
	cr_assert_eq(put_blob(sock, HELLO_SHA, "hello", &resp), 201, "%.*s", (int)resp.len, resp.data);
	cr_assert_eq(srv_cas_has(ctx.cas, HELLO_SHA, NULL), 1);

	srv_http_stop(d);
	enpu_buf_free(&resp);
	srv_cas_close(ctx.cas);
}

Test(srv_cas, put_file_keeps_source)
{
	srv_cas *c = open_cache("c");
	enpu_err e = ENPU_ERR_INIT;
	char src[512], dig[65];

	snprintf(src, sizeof src, "%s/src.txt", root);
	cr_assert_eq(enpu_write_file_atomic(src, "hello", 5, &e), 0);
	cr_assert_eq(srv_cas_put_file(c, src, dig, &e), 0, "%s", e.message);
	cr_assert_str_eq(dig, HELLO_SHA);
	cr_assert_eq(srv_cas_has(c, HELLO_SHA, NULL), 1);
	struct stat st;
	cr_assert_eq(stat(src, &st), 0, "source still there");
	srv_cas_close(c);
}

Test(srv_cas, atomic_write_replaces_whole_file)
{
	srv_cas *c = open_cache("c");
	enpu_err e = ENPU_ERR_INIT;
	enpu_buf b = ENPU_BUF_INIT;
	char p[512], tmp[512];

	snprintf(p, sizeof p, "%s/c/file.txt", root);
	cr_assert_eq(srv_cas_write_atomic(c, p, "first version", 13, &e), 0);
	cr_assert_eq(srv_cas_write_atomic(c, p, "second", 6, &e), 0);
	read_all(p, &b);
	cr_assert_eq(b.len, 6);
	cr_assert_eq(memcmp(b.data, "second", 6), 0);
	snprintf(tmp, sizeof tmp, "%s/c/tmp", root);
	cr_assert_eq(count_entries(tmp), 0);
	snprintf(p, sizeof p, "%s/no/such/dir/file.txt", root);
	cr_assert_eq(srv_cas_write_atomic(c, p, "x", 1, &e), -1, "unwritable path fails");
	cr_assert_eq(count_entries(tmp), 0, "and leaves no temp file");
	enpu_buf_free(&b);
	srv_cas_close(c);
}

Test(srv_cas, action_cache)
{
	srv_cas *c = open_cache("c");
	enpu_err e = ENPU_ERR_INIT;
	char id[65], key[65];
	const char *id1 = "1111111111111111111111111111111111111111111111111111111111111111";
	const char *id2 = "2222222222222222222222222222222222222222222222222222222222222222";

	enpu_sha256_hex("key", 3, key);
	cr_assert_eq(srv_ac_get(c, key, id), 0);
	cr_assert_eq(srv_ac_put(c, key, id1, &e), 0, "%s", e.message);
	cr_assert_eq(srv_ac_get(c, key, id), 1);
	cr_assert_str_eq(id, id1);
	cr_assert_eq(srv_ac_put(c, key, id2, &e), 0);
	cr_assert_eq(srv_ac_get(c, key, id), 1);
	cr_assert_str_eq(id, id2);
	cr_assert_eq(srv_ac_count(c), 1);
	cr_assert_eq(srv_ac_get(c, "../etc/passwd", id), 0, "keys are digests only");
	srv_cas_close(c);
}

Test(srv_cas, restart_sees_everything_and_cleans_tmp)
{
	srv_cas *c = open_cache("c");
	enpu_err e = ENPU_ERR_INIT;
	char dig[65], key[65], id[65], stray[512], tmp[512];
	const char *id1 = "1111111111111111111111111111111111111111111111111111111111111111";

	enpu_sha256_hex("k", 1, key);
	cr_assert_eq(srv_cas_put_mem(c, "hello", 5, dig, &e), 0);
	cr_assert_eq(srv_ac_put(c, key, id1, &e), 0);
	snprintf(stray, sizeof stray, "%s/c/tmp/half-written.up", root);
	cr_assert_eq(enpu_write_file_atomic(stray, "xx", 2, &e), 0);
	srv_cas_close(c);

	c = open_cache("c");
	cr_assert_eq(srv_cas_has(c, HELLO_SHA, NULL), 1);
	cr_assert_eq(srv_ac_get(c, key, id), 1);
	cr_assert_str_eq(id, id1);
	snprintf(tmp, sizeof tmp, "%s/c/tmp", root);
	cr_assert_eq(count_entries(tmp), 0, "tmp/ emptied at open");
	srv_cas_close(c);
}

/* Compile examples/tiny_mlp into cache A, import it into cache B from
 * blobs only: B gets the same artifact and no action-cache entry. */
Test(srv_cas, ingest_and_import_round_trip)
{
	const char *spec_p = "examples/tiny_mlp/spec.yaml", *w_p = "examples/tiny_mlp/weights.npz";
	struct stat st;
	/* the tests run from the repository root: a missing example is a failure */
	cr_assert(stat(spec_p, &st) == 0 && stat(w_p, &st) == 0,
		  "examples/tiny_mlp not present (the tests run from the repository root)");

	srv_cas *a = open_cache("a"), *b = open_cache("b");
	enpu_err e = ENPU_ERR_INIT;
	enpu_spec *spec = NULL;
	enpu_compile_info info;
	char tmp[4300], dir[4300], mp[4400], bp[4300], dig[65];
	enpu_buf raw = ENPU_BUF_INIT;
	enpu_manifest m;
	json_object *missing = NULL;
	int created = 0;

	cr_assert_eq(enpu_spec_load(spec_p, "spec.yaml", NULL, &spec, &e), 0, "%s", e.message);
	cr_assert_eq(srv_cas_tmpdir(a, tmp, sizeof tmp, &e), 0);
	enpu_target *tgt = NULL;
	cr_assert_eq(enpu_target_resolve(spec, NULL, NULL, NULL, NULL, &tgt, &e), 0, "%s", e.message);
	cr_assert_eq(enpu_compile(spec, tgt, w_p, "weights.npz", NULL, tmp, NULL, &info, &e), 0,
		     "%s", e.message);
	enpu_target_free(tgt);
	cr_assert_eq(srv_artifact_ingest(a, tmp, info.artifact_id, &e), 0, "%s", e.message);
	cr_assert_eq(stat(tmp, &st), -1, "the build dir moved into artifacts/");
	cr_assert_eq(srv_artifact_present(a, info.artifact_id), 1);
	srv_artifact_dir(a, info.artifact_id, dir, sizeof dir);
	snprintf(mp, sizeof mp, "%s/manifest.json", dir);
	read_all(mp, &raw);
	cr_assert_eq(enpu_manifest_parse(raw.data, raw.len, NULL, &m, &e), 0, "%s", e.message);
	cr_assert_str_eq(m.id, info.artifact_id);

	/* B lacks the blobs: 409 material */
	cr_assert_eq(srv_artifact_import(b, info.artifact_id, raw.data, raw.len, NULL, &missing,
					 &created, &e), -1);
	cr_assert_eq(e.code, ENPU_E_BLOB_MISSING);
	cr_assert_not_null(missing);
	cr_assert_eq((int)json_object_array_length(missing), m.n);
	json_object_put(missing);

	for (int i = 0; i < m.n; i++) {
		srv_cas_blob_path(a, m.files[i].sha256, bp, sizeof bp);
		cr_assert_eq(srv_cas_put_file(b, bp, dig, &e), 0);
		cr_assert_str_eq(dig, m.files[i].sha256);
	}
	/* a wrong id is refused */
	cr_assert_eq(srv_artifact_import(b, HELLO_SHA, raw.data, raw.len, NULL, &missing,
					 &created, &e), -1);
	json_object_put(missing);
	cr_assert_eq(srv_artifact_import(b, info.artifact_id, raw.data, raw.len, NULL, &missing,
					 &created, &e), 0, "%s", e.message);
	json_object_put(missing);
	cr_assert_eq(created, 1);
	cr_assert_eq(srv_artifact_present(b, info.artifact_id), 1);
	srv_cache_stats cs;
	srv_cas_stats(b, &cs);
	cr_assert_eq(cs.artifact_loads, 1, "the import loaded it");
	cr_assert_eq(srv_ac_count(b), 0, "an import never writes the action cache");
	cr_assert_eq(srv_artifact_import(b, info.artifact_id, raw.data, raw.len, NULL, &missing,
					 &created, &e), 0);
	json_object_put(missing);
	cr_assert_eq(created, 0, "second import: already present");

	enpu_artifact *h = NULL;
	cr_assert_eq(srv_artifact_get(b, info.artifact_id, NULL, &h, &e), 0, "%s", e.message);
	cr_assert_str_eq(enpu_artifact_id(h), info.artifact_id);
	srv_artifact_release(h);
	srv_cas_stats(b, &cs);
	cr_assert_eq(cs.artifact_loads, 1, "the first job's get takes the import's handle");

	enpu_manifest_free(&m);
	enpu_buf_free(&raw);
	enpu_spec_free(spec);
	srv_cas_close(a);
	srv_cas_close(b);
}

/* ---- stats, integrity, listing (cache management) ------------------------ */

/* Compile examples/tiny_mlp into c; its id in id. Fails when absent. */
static void compile_tiny(srv_cas *c, char id[65])
{
	compile_example(c, "tiny_mlp", id);
}

/* Compile tiny_mlp into a, its id into id, its manifest into raw and *m,
 * and its files as blobs of b: ready to import into b. */
static void compile_for_import(srv_cas *a, srv_cas *b, char id[65], enpu_buf *raw,
			       enpu_manifest *m)
{
	enpu_err e = ENPU_ERR_INIT;
	char dir[4300], mp[4400], bp[4300], dig[65];

	compile_tiny(a, id);
	srv_artifact_dir(a, id, dir, sizeof dir);
	snprintf(mp, sizeof mp, "%s/manifest.json", dir);
	read_all(mp, raw);
	cr_assert_eq(enpu_manifest_parse(raw->data, raw->len, NULL, m, &e), 0, "%s", e.message);
	for (int i = 0; i < m->n; i++) {
		srv_cas_blob_path(a, m->files[i].sha256, bp, sizeof bp);
		cr_assert_eq(srv_cas_put_file(b, bp, dig, &e), 0);
	}
}

/* An import for storage (the remote cache's): checked (one load counted),
 * no handle kept, so the first job loads it; the files of artifacts/<id>/,
 * hard links of blobs hashed as they were stored, stay known good through
 * the link (its first check is a stat, not a hash). */
Test(srv_cas, import_stored_keeps_its_files_known_good)
{
	srv_cas *a = open_cache("a"), *b = open_cache("b");
	enpu_err e = ENPU_ERR_INIT;
	enpu_buf raw = ENPU_BUF_INIT;
	enpu_manifest m;
	json_object *missing = NULL;
	srv_cache_stats cs;
	enpu_artifact *h = NULL;
	char id[65], dir[4300], p[4600];
	int created = 0;

	compile_for_import(a, b, id, &raw, &m);
	cr_assert_eq(srv_artifact_import_stored(b, id, raw.data, raw.len, NULL, &missing, &created,
						&e), 0, "%s", e.message);
	json_object_put(missing);
	cr_assert_eq(created, 1);
	srv_artifact_dir(b, id, dir, sizeof dir);
	for (int i = 0; i < m.n; i++) {
		snprintf(p, sizeof p, "%s/%s", dir, m.files[i].path);
		cr_expect_eq(srv_cas_known_good(b, p, m.files[i].sha256), 1, "%s", m.files[i].path);
	}
	srv_cas_stats(b, &cs);
	cr_assert_eq(cs.artifact_loads, 1, "the import checked it");
	cr_assert_eq(srv_artifact_get(b, id, NULL, &h, &e), 0, "%s", e.message);
	cr_assert_str_eq(enpu_artifact_id(h), id);
	srv_artifact_release(h);
	srv_cas_stats(b, &cs);
	cr_assert_eq(cs.artifact_loads, 2, "no handle was kept: the first job loads it");
	enpu_manifest_free(&m);
	enpu_buf_free(&raw);
	srv_cas_close(a);
	srv_cas_close(b);
}

/* An imported manifest is untrusted: its summary (which compile answers
 * and job submissions use without loading) must be what its files give,
 * or the import is refused and nothing lands. */
Test(srv_cas, import_refuses_a_lying_summary)
{
	srv_cas *a = open_cache("a"), *b = open_cache("b");
	enpu_err e = ENPU_ERR_INIT;
	enpu_buf raw = ENPU_BUF_INIT, lie = ENPU_BUF_INIT;
	enpu_manifest m;
	json_object *missing = NULL;
	char id[65];
	const char *hit;
	int created = 0;

	compile_for_import(a, b, id, &raw, &m);
	cr_assert_not_null(hit = strstr(raw.data, "\"operators\": "));
	enpu_buf_add(&lie, raw.data, (size_t)(hit - raw.data));
	enpu_buf_addf(&lie, "\"operators\": %d", m.summary.operators + 1);
	enpu_buf_adds(&lie, strchr(hit, ','));
	cr_assert_eq(srv_artifact_import(b, id, lie.data, lie.len, NULL, &missing, &created, &e),
		     -1, "a lying summary was imported");
	json_object_put(missing);
	cr_assert_eq(e.code, ENPU_E_ARTIFACT, "%s", e.message);
	cr_assert(strstr(e.message, "'summary'"), "%s", e.message);
	cr_assert_eq(srv_artifact_present(b, id), 0, "nothing lands");
	cr_assert_eq(srv_artifact_import(b, id, raw.data, raw.len, NULL, &missing, &created, &e), 0,
		     "%s", e.message);
	json_object_put(missing);
	cr_assert_eq(created, 1);
	enpu_manifest_free(&m);
	enpu_buf_free(&raw);
	enpu_buf_free(&lie);
	srv_cas_close(a);
	srv_cas_close(b);
}

/* An older build's manifest (no summary) imports: the artifact is loaded
 * deep, and the stored manifest gets the summary its files give, under the
 * same id (which hashes the files), byte for byte what compile writes. */
Test(srv_cas, import_completes_an_older_manifest)
{
	srv_cas *a = open_cache("a"), *b = open_cache("b");
	enpu_err e = ENPU_ERR_INIT;
	enpu_buf raw = ENPU_BUF_INIT, old = ENPU_BUF_INIT, got = ENPU_BUF_INIT;
	enpu_manifest m, m2;
	json_object *missing = NULL, *doc;
	char id[65];
	int created = 0;

	compile_for_import(a, b, id, &raw, &m);
	cr_assert_eq(m.has_summary, 1);
	cr_assert_not_null(doc = json_tokener_parse(raw.data));
	json_object_object_del(doc, "summary");
	cr_assert_eq(enpu_json_dump(doc, &old, &e), 0);
	json_object_put(doc);
	cr_assert_eq(srv_artifact_import(b, id, old.data, old.len, NULL, &missing, &created, &e), 0,
		     "%s", e.message);
	json_object_put(missing);
	cr_assert_eq(created, 1);
	cr_assert_eq(srv_artifact_manifest(b, id, &m2, &got, &e), 0, "%s", e.message);
	cr_expect_eq(m2.has_summary, 1);
	cr_expect_eq(m2.summary.operators, m.summary.operators);
	cr_expect_eq(m2.summary.arena_bytes, m.summary.arena_bytes);
	cr_expect_eq(got.len, raw.len);
	cr_expect_eq(memcmp(got.data, raw.data, raw.len), 0, "the completed manifest is compile's");
	enpu_manifest_free(&m2);
	enpu_manifest_free(&m);
	enpu_buf_free(&raw);
	enpu_buf_free(&old);
	enpu_buf_free(&got);
	srv_cas_close(a);
	srv_cas_close(b);
}

/* Flip one byte in the middle of a file, in place (same inode and size). */
static void flip_byte(const char *path)
{
	FILE *f = fopen(path, "r+b");
	long n;
	int ch;

	cr_assert_not_null(f, "open %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	cr_assert_gt(n, 0);
	fseek(f, n / 2, SEEK_SET);
	ch = fgetc(f);
	fseek(f, n / 2, SEEK_SET);
	fputc(ch ^ 0x5a, f);
	cr_assert_eq(fclose(f), 0);
}

Test(srv_cas, stats_count_entries_and_counters_survive_a_restart)
{
	srv_cas *c = open_cache("s");
	srv_cache_stats st;
	enpu_err e = ENPU_ERR_INIT;
	char d1[65], d2[65];

	srv_cas_stats(c, &st);
	cr_assert_eq(st.blobs, 0);
	cr_assert_eq(st.ac_hits + st.ac_misses + st.cas_hits + st.cas_misses, 0);
	cr_assert_eq(srv_cas_put_mem(c, "hello", 5, d1, &e), 0);
	cr_assert_eq(srv_cas_put_mem(c, "world!", 6, d2, &e), 0);
	cr_assert_eq(srv_ac_put(c, d1, d2, &e), 0);
	srv_cas_count(c, SRV_EV_AC_MISS, 0);
	srv_cas_count(c, SRV_EV_AC_HIT, 0);
	srv_cas_count(c, SRV_EV_AC_HIT, 0);
	srv_cas_count(c, SRV_EV_CAS_HIT, 0);
	srv_cas_count(c, SRV_EV_CAS_MISS, 0);
	srv_cas_count(c, SRV_EV_EVICT, 123);
	srv_cas_stats(c, &st);
	cr_expect_eq(st.blobs, 2);
	cr_expect_eq(st.blob_bytes, 11);
	cr_expect_eq(st.ac_entries, 1);
	cr_expect_eq(st.artifacts, 0);
	cr_expect_eq(st.ac_hits, 2);
	cr_expect_eq(st.ac_misses, 1);
	cr_expect_eq(st.cas_hits, 1);
	cr_expect_eq(st.cas_misses, 1);
	cr_expect_eq(st.evictions, 1);
	cr_expect_eq(st.evicted_bytes, 123);
	srv_cas_close(c);

	c = open_cache("s");
	srv_cas_stats(c, &st);
	cr_expect_eq(st.blobs, 2, "the index is the filesystem");
	cr_expect_eq(st.ac_entries, 1);
	cr_expect_eq(st.ac_hits, 2, "counters saved at close");
	cr_expect_eq(st.evicted_bytes, 123);
	srv_cas_close(c);
}

Test(srv_cas, a_damaged_stats_file_starts_at_zero)
{
	srv_cas *c = open_cache("z");
	srv_cache_stats st;
	char p[512];
	enpu_err e = ENPU_ERR_INIT;

	srv_cas_close(c);
	snprintf(p, sizeof p, "%s/z/stats.json", root);
	cr_assert_eq(enpu_write_file_atomic(p, "{\"ac_hits\": [", 13, &e), 0);
	c = open_cache("z");
	srv_cas_stats(c, &st);
	cr_expect_eq(st.ac_hits, 0);
	srv_cas_close(c);
}

Test(srv_cas, verify_drops_a_blob_with_wrong_bytes)
{
	srv_cas *c = open_cache("v");
	srv_cache_stats st;
	enpu_err e = ENPU_ERR_INIT;
	char d[65], p[4300];
	uint64_t sz = 0;

	cr_assert_eq(srv_cas_put_mem(c, "some bytes to keep", 18, d, &e), 0);
	cr_assert_eq(srv_cas_verify(c, d, &sz), 1);
	cr_assert_eq(sz, 18);
	srv_cas_touch(c, d);
	cr_assert_eq(srv_cas_verify(c, d, NULL), 1, "a touch changes no byte");
	srv_cas_blob_path(c, d, p, sizeof p);
	flip_byte(p);
	cr_assert_eq(srv_cas_verify(c, d, NULL), 0, "a changed file is hashed again");
	cr_assert_eq(srv_cas_has(c, d, NULL), 0, "and dropped");
	srv_cas_stats(c, &st);
	cr_expect_eq(st.integrity_failures, 1);
	cr_assert_eq(srv_cas_verify(c, HELLO_SHA, NULL), 0, "absent is not a failure");
	srv_cas_stats(c, &st);
	cr_expect_eq(st.integrity_failures, 1);
	srv_cas_close(c);
}

/* srv_cas_read_small: a job's input, read again and again. The bytes are
 * the file's, from memory when it stats as it did; never the memory's
 * once the file changed (a flipped byte is read as it now is), and
 * nothing past max or absent. */
Test(srv_cas, read_small_gives_the_file_bytes_never_stale_ones)
{
	srv_cas *c = open_cache("rs");
	enpu_err e = ENPU_ERR_INIT;
	enpu_buf b = ENPU_BUF_INIT, now = ENPU_BUF_INIT;
	char d[65], p[4300];
	static const char text[] = "a small input, read at every run";

	cr_assert_eq(srv_cas_put_mem(c, text, sizeof text - 1, d, &e), 0, "%s", e.message);
	cr_assert_eq(srv_cas_verify(c, d, NULL), 1);
	for (int i = 0; i < 3; i++) {   /* from the file, then from memory */
		enpu_buf_reset(&b);
		cr_assert_eq(srv_cas_read_small(c, d, 1024, &b), 0);
		cr_assert_eq(b.len, sizeof text - 1);
		cr_assert_eq(memcmp(b.data, text, b.len), 0, "read %d", i);
	}
	srv_cas_blob_path(c, d, p, sizeof p);
	flip_byte(p);
	read_all(p, &now);
	for (int i = 0; i < 2; i++) {
		enpu_buf_reset(&b);
		cr_assert_eq(srv_cas_read_small(c, d, 1024, &b), 0);
		cr_assert_eq(b.len, now.len);
		cr_assert_eq(memcmp(b.data, now.data, b.len), 0, "a changed file is read as it is");
		cr_assert_neq(memcmp(b.data, text, b.len), 0);
	}
	enpu_buf_reset(&b);
	cr_assert_eq(srv_cas_read_small(c, d, sizeof text - 2, &b), -1, "past max");
	cr_assert_eq(b.len, 0);
	cr_assert_eq(srv_cas_read_small(c, HELLO_SHA, 1024, &b), -1, "absent");
	cr_assert_eq(srv_cas_read_small(c, "not-a-digest", 1024, &b), -1);
	cr_assert_eq(b.len, 0);
	enpu_buf_free(&b);
	enpu_buf_free(&now);
	srv_cas_close(c);
}

/* A volatile put of bytes put before takes its digest from memory: the
 * digest is always the bytes' own, for the same bytes again, for other
 * bytes of the same length (the same memo slot), and past the memo's
 * size; every blob is stored under it. */
Test(srv_cas, volatile_puts_have_their_own_digests)
{
	srv_cas *c = open_cache("pm");
	enpu_err e = ENPU_ERR_INIT;
	static char big[5000];
	const struct { const char *p; size_t n; } v[] = {
		{"result bytes A", 14}, {"result bytes A", 14}, {"result bytes B", 14},
		{"result bytes A", 14}, {"report: other length", 20}, {big, sizeof big},
		{big, sizeof big},
	};

	memset(big, 'x', sizeof big);
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		char d[65], want[65];
		enpu_buf b = ENPU_BUF_INIT;

		enpu_sha256_hex(v[i].p, v[i].n, want);
		cr_assert_eq(srv_cas_put_mem_volatile(c, v[i].p, v[i].n, d, &e), 0, "%s", e.message);
		cr_assert_str_eq(d, want, "put %zu", i);
		cr_assert_eq(srv_cas_read_small(c, d, sizeof big, &b), 0);
		cr_assert_eq(b.len, v[i].n);
		cr_assert_eq(memcmp(b.data, v[i].p, b.len), 0);
		enpu_buf_free(&b);
	}
	srv_cas_close(c);
}

static void set_mtime(const char *p, time_t t)
{
	struct timespec ts[2] = {{.tv_nsec = UTIME_OMIT}, {.tv_sec = t}};
	cr_assert_eq(utimensat(AT_FDCWD, p, ts, 0), 0, "utimensat %s", p);
}

static time_t mtime_of(const char *p)
{
	struct stat st;
	cr_assert_eq(stat(p, &st), 0, "stat %s", p);
	return st.st_mtim.tv_sec;
}

/* A use writes the blob's mtime (the order a restart reads back) only
 * when its last use is CAS_TOUCH_DISK_S old or more: a blob that every
 * job uses costs no inode write per job. */
Test(srv_cas, touch_writes_the_mtime_only_of_a_blob_not_used_lately)
{
	srv_cas *c = open_cache("t");
	enpu_err e = ENPU_ERR_INIT;
	char d[65], p[4300];
	time_t hour_ago = time(NULL) - 3600;

	cr_assert_eq(srv_cas_put_mem(c, "hello", 5, d, &e), 0, "%s", e.message);
	srv_cas_blob_path(c, d, p, sizeof p);
	srv_cas_close(c);
	set_mtime(p, hour_ago);
	c = open_cache("t");   /* indexed with its last use an hour ago */
	srv_cas_touch(c, d);
	cr_assert_geq(mtime_of(p), hour_ago + 3000, "a blob last used an hour ago gets its mtime");
	set_mtime(p, hour_ago);
	srv_cas_touch(c, d);   /* used again at once */
	cr_assert_eq(mtime_of(p), hour_ago, "a blob used a moment ago is not written again");
	cr_assert_eq(srv_cas_verify(c, d, NULL), 1, "and still known good");
	srv_cas_close(c);
}

Test(srv_cas, check_file_force_rehashes)
{
	srv_cas *c = open_cache("f");
	enpu_err e = ENPU_ERR_INIT;
	char d[65], p[4300];

	cr_assert_eq(srv_cas_put_mem(c, "hello", 5, d, &e), 0);
	cr_assert_str_eq(d, HELLO_SHA);
	srv_cas_blob_path(c, d, p, sizeof p);
	cr_assert_eq(srv_cas_check_file(c, p, d, 0), 1);
	cr_assert_eq(srv_cas_check_file(c, p, d, 1), 1);
	cr_assert_eq(srv_cas_check_file(c, p, "0000000000000000000000000000000000000000000000000000000000000000", 0), 0,
		     "the memo is per digest");
	srv_cas_close(c);
}

/* Rewrite the manifest at p behind the daemon's back: backend cpu_ref
 * becomes npu_sim (the same length), its mtime put back (its ctime moves). */
static void cpu_ref_to_npu_sim_in_place(const char *p)
{
	enpu_buf b = ENPU_BUF_INIT;
	struct stat st;
	char *at;

	cr_assert_eq(stat(p, &st), 0);
	read_all(p, &b);
	cr_assert_not_null(at = memmem(b.data, b.len, "\"cpu_ref\"", 9));
	memcpy(at, "\"npu_sim\"", 9);
	FILE *f = fopen(p, "r+b");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(b.data, 1, b.len, f), b.len);
	fclose(f);
	struct timespec ts[2] = {st.st_atim, st.st_mtim};
	cr_assert_eq(utimensat(AT_FDCWD, p, ts, 0), 0);
	enpu_buf_free(&b);
}

/* A manifest read once is not read again while its file stats the same;
 * one rewritten behind the daemon's back, even to the same size with its
 * mtime put back, is read afresh (the ctime moved). */
Test(srv_cas, a_manifest_changed_after_a_use_is_read_again)
{
	srv_cas *c = open_cache("man");
	enpu_err e = ENPU_ERR_INIT;
	enpu_manifest m;
	char id[65], p[5400];

	compile_tiny(c, id);
	cr_assert_eq(srv_artifact_manifest(c, id, &m, NULL, &e), 0, "%s", e.message);
	cr_assert_str_eq(m.backend, "cpu_ref");
	enpu_manifest_free(&m);
	cr_assert_eq(srv_artifact_manifest(c, id, &m, NULL, &e), 0, "%s", e.message);
	enpu_manifest_free(&m);
	srv_artifact_dir(c, id, p, sizeof p);
	strcat(p, "/manifest.json");
	cpu_ref_to_npu_sim_in_place(p);
	/* read again: an npu_sim manifest without its target is refused */
	cr_assert_eq(srv_artifact_manifest(c, id, &m, NULL, &e), -1,
		     "the rewritten manifest was not read again");
	cr_assert(strstr(e.message, "target"), "%s", e.message);
	srv_cas_close(c);
}

/* A job's check on the HTTP thread (srv_artifact_known_good) parses a
 * manifest once: later checks stat it and each file. A file gone fails the
 * check at once; a manifest rewritten behind the daemon's back is parsed
 * again. */
Test(srv_cas, known_good_keeps_the_parse_while_the_manifest_stats_the_same)
{
	srv_cas *c = open_cache("kg");
	char id[65], p[5400], dir[4300], be[32] = "";

	compile_tiny(c, id);
	cr_assert_eq(srv_artifact_known_good(c, id, be, sizeof be), 1);
	cr_expect_str_eq(be, "cpu_ref");
	be[0] = '\0';
	cr_assert_eq(srv_artifact_known_good(c, id, be, sizeof be), 1, "from the memo");
	cr_expect_str_eq(be, "cpu_ref");
	cr_expect_eq(srv_artifact_known_good(c, "0123", be, sizeof be), 0, "not an id");
	srv_artifact_dir(c, id, dir, sizeof dir);
	snprintf(p, sizeof p, "%s/plan.json", dir);
	cr_assert_eq(rename(p, "kg.plan"), 0);
	cr_expect_eq(srv_artifact_known_good(c, id, be, sizeof be), 0, "a file gone: not good");
	cr_assert_eq(rename("kg.plan", p), 0);
	cr_expect_eq(srv_artifact_known_good(c, id, be, sizeof be), 0,
		     "back, but its ctime moved: to be hashed again (a handler thread's work)");
	cr_assert_eq(srv_artifact_verify(c, id, NULL, NULL), 1, "hashed: good");
	cr_expect_eq(srv_artifact_known_good(c, id, be, sizeof be), 1, "known good again");
	snprintf(p, sizeof p, "%s/manifest.json", dir);
	cpu_ref_to_npu_sim_in_place(p);
	/* parsed again: an npu_sim manifest without its target does not parse */
	cr_expect_eq(srv_artifact_known_good(c, id, be, sizeof be), 0,
		     "the rewritten manifest was not parsed again (backend %s)", be);
	srv_cas_close(c);
}

Test(srv_cas, a_corrupted_artifact_is_dropped_with_its_entries)
{
	srv_cas *c = open_cache("art");
	enpu_err e = ENPU_ERR_INIT;
	enpu_artifact *h = NULL;
	enpu_manifest m;
	srv_cache_stats st;
	char id[65], dir[4300], p[5400];
	struct stat sb;
	int i, big = 0;

	compile_tiny(c, id);
	cr_assert_eq(srv_ac_put(c, HELLO_SHA, id, &e), 0);
	cr_assert_eq(srv_artifact_get(c, id, NULL, &h, &e), 0, "%s", e.message);
	srv_artifact_release(h);
	cr_assert_eq(srv_artifact_verify(c, id, NULL, NULL), 1);

	cr_assert_eq(srv_artifact_manifest(c, id, &m, NULL, &e), 0);
	for (i = 1; i < m.n; i++)
		if (m.files[i].bytes > m.files[big].bytes)
			big = i;
	srv_artifact_dir(c, id, dir, sizeof dir);
	snprintf(p, sizeof p, "%s/%s", dir, m.files[big].path);
	flip_byte(p);

	/* the loaded handle is in the LRU: the files on disk are checked anyway */
	cr_assert_eq(srv_artifact_get(c, id, NULL, &h, &e), -1);
	cr_assert_eq(e.code, ENPU_E_NOT_FOUND, "%s", e.message);
	cr_assert_not_null(strstr(e.message, "integrity"), "%s", e.message);
	cr_assert_eq(stat(dir, &sb), -1, "the directory is gone");
	cr_assert_eq(srv_ac_count(c), 0, "its action-cache entry too");
	cr_assert_eq(srv_cas_has(c, m.files[big].sha256, NULL), 0, "the bad blob too");
	srv_cas_stats(c, &st);
	cr_expect_geq(st.integrity_failures, 1);
	enpu_manifest_free(&m);

	/* the next compile installs it again */
	compile_tiny(c, id);
	cr_assert_eq(srv_artifact_get(c, id, NULL, &h, &e), 0, "%s", e.message);
	srv_artifact_release(h);
	srv_cas_close(c);
}

Test(srv_cas, lists_and_removals)
{
	srv_cas *c = open_cache("l");
	enpu_err e = ENPU_ERR_INIT;
	srv_cas_entry *v;
	srv_ac_entry *a;
	uint64_t total;
	char d1[65], d2[65], t[4300];
	int n;
	struct timespec old[2] = {{1000000, 0}, {1000000, 0}};

	cr_assert_eq(srv_cas_put_mem(c, "one", 3, d1, &e), 0);
	cr_assert_eq(srv_cas_put_mem(c, "three", 5, d2, &e), 0);
	cr_assert_eq(srv_cas_list(c, &v, &n, &total), 0);
	cr_expect_eq(n, 2);
	cr_expect_eq(total, 8);
	free(v);

	cr_assert_eq(srv_ac_put(c, d1, HELLO_SHA, &e), 0);
	cr_assert_eq(srv_ac_put(c, d2, HELLO_SHA, &e), 0);
	cr_assert_eq(srv_ac_list(c, &a, &n), 0);
	cr_expect_eq(n, 2);
	cr_expect_str_eq(a[0].id, HELLO_SHA);
	free(a);
	cr_expect_eq(srv_ac_remove(c, d1), 1);
	cr_expect_eq(srv_ac_remove(c, d1), 0);
	cr_expect_eq(srv_ac_drop_for(c, NULL), 1, "its artifact is absent: dangling");
	cr_expect_eq(srv_ac_count(c), 0);

	cr_expect_eq(srv_cas_remove(c, d1), 1);
	cr_expect_eq(srv_cas_has(c, d1, NULL), 0);

	srv_cas_tmpname(c, ".old", t, sizeof t);
	cr_assert_eq(enpu_write_file_atomic(t, "x", 1, &e), 0);
	cr_assert_eq(utimensat(AT_FDCWD, t, old, 0), 0);
	srv_cas_tmpname(c, ".new", t, sizeof t);
	cr_assert_eq(enpu_write_file_atomic(t, "x", 1, &e), 0);
	cr_expect_eq(srv_cas_clean_tmp(c, SRV_TMP_STALE), 1, "only the stale entry goes");
	cr_expect_eq(access(t, F_OK), 0);
	srv_cas_close(c);
}

/* cas_put.c: writing blobs: streamed uploads hashed as they arrive and
 * installed under their digest (checked against the one expected), puts
 * from memory or a file, and atomic writes of named files. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "buf.h"
#include "digest.h"
#include "srv.h"
#include "cas_int.h"
#include "fault.h"

struct srv_upload {
	srv_cas *c;
	int fd;
	char path[4096];
	enpu_sha256 *sha;
	uint64_t bytes;
};

/* Move a complete temp file to its blob path. An existing blob wins (same
 * bytes by construction). */
static int install_blob(srv_cas *c, const char *tmp, const char *digest, int *existed,
			enpu_err *e)
{
	char dir[4200], dst[4200];

	snprintf(dir, sizeof dir, "%s/%.2s", c->cas, digest);
	srv_cas_blob_path(c, digest, dst, sizeof dst);
	if (existed)
		*existed = 0;
	if (srv_cas_has(c, digest, NULL)) {
		if (existed)
			*existed = 1;
		unlink(tmp);
		srv_cas_touch(c, digest);   /* stored again = used now */
		return 0;
	}
	if (mkdir(dir, 0755) == 0)
		srv_fsync_dir(c->cas);   /* a new fan-out directory must outlive a power cut too */
	else if (errno != EEXIST)
		goto fail;
	if (rename(tmp, dst) != 0)
		goto fail;
	srv_fsync_dir(dir);
	return 0;
fail:
	enpu_fail(e, ENPU_E_STORAGE, dst, NULL, "cannot store blob '%s': %s", digest,
		  strerror(errno));
	unlink(tmp);
	return -1;
}

srv_upload *srv_upload_begin(srv_cas *c, enpu_err *e)
{
	srv_upload *u = calloc(1, sizeof *u);
	if (!u) {
		enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
		return NULL;
	}
	u->c = c;
	srv_cas_tmpname(c, ".up", u->path, sizeof u->path);
	u->fd = open(u->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	u->sha = enpu_sha256_new();
	if (u->fd < 0 || !u->sha) {
		enpu_fail(e, ENPU_E_STORAGE, u->path, NULL, "cannot create upload file: %s",
			  strerror(errno));
		srv_upload_abort(u);
		return NULL;
	}
	return u;
}

int srv_upload_write(srv_upload *u, const void *p, size_t n, enpu_err *e)
{
	const char *s = p;
	size_t off = 0;

	if (enpu_sha256_update(u->sha, p, n) != 0)
		return enpu_fail(e, ENPU_E_INTERNAL, NULL, NULL, "sha256 update failed");
	while (off < n) {
		ssize_t w = write(u->fd, s + off, n - off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return enpu_fail(e, ENPU_E_STORAGE, NULL, NULL, "cannot write upload: %s",
					 strerror(errno));
		}
		off += (size_t)w;
	}
	u->bytes += n;
	if (u->bytes == n && n)
		srv_fault_point("upload");   /* part written, nothing committed */
	return 0;
}

uint64_t srv_upload_bytes(const srv_upload *u) { return u->bytes; }

void srv_upload_abort(srv_upload *u)
{
	if (!u)
		return;
	if (u->fd >= 0) {
		close(u->fd);
		unlink(u->path);
	}
	if (u->sha)
		enpu_sha256_free(u->sha);
	free(u);
}

int srv_upload_finish(srv_upload *u, const char *expect, char digest[65], int *existed,
		      enpu_err *e)
{
	int ret = -1;

	if (fsync(u->fd) != 0 || close(u->fd) != 0) {
		u->fd = -1;
		unlink(u->path);
		enpu_fail(e, ENPU_E_STORAGE, NULL, NULL, "cannot write upload: %s", strerror(errno));
		goto out;
	}
	u->fd = -1;
	enpu_sha256_final(u->sha, digest);
	u->sha = NULL;
	if (expect && strcmp(expect, digest) != 0) {
		unlink(u->path);
		enpu_fail(e, ENPU_E_BLOB_DIGEST, NULL, NULL,
			  "uploaded bytes hash to %s, not '%s' (%llu bytes received)", digest,
			  expect, (unsigned long long)u->bytes);
		goto out;
	}
	ret = install_blob(u->c, u->path, digest, existed, e);
out:
	srv_upload_abort(u);
	return ret;
}

int srv_cas_put_mem(srv_cas *c, const void *p, size_t n, char digest[65], enpu_err *e)
{
	srv_upload *u = srv_upload_begin(c, e);
	if (!u)
		return -1;
	if (srv_upload_write(u, p, n, e) != 0) {
		srv_upload_abort(u);
		return -1;
	}
	return srv_upload_finish(u, NULL, digest, NULL, e);
}

int srv_cas_put_file(srv_cas *c, const char *path, char digest[65], enpu_err *e)
{
	if (enpu_sha256_file(path, digest, e) != 0)
		return -1;
	return srv_cas_put_file_as(c, path, digest, e);
}

int srv_cas_put_file_as(srv_cas *c, const char *path, const char *digest, enpu_err *e)
{
	char tmp[4200];

	if (srv_cas_has(c, digest, NULL)) {
		srv_cas_touch(c, digest);   /* stored again = used now */
		return 0;
	}
	srv_cas_tmpname(c, ".in", tmp, sizeof tmp);
	if (srv_link_or_copy(path, tmp, e) != 0)
		return -1;
	return install_blob(c, tmp, digest, NULL, e);
}

int srv_cas_write_atomic(srv_cas *c, const char *path, const void *p, size_t n, enpu_err *e)
{
	char tmp[4200], dir[4200];
	const char *s = p;
	size_t off = 0;
	int fd;

	srv_cas_tmpname(c, ".w", tmp, sizeof tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		goto fail;
	while (off < n) {
		ssize_t w = write(fd, s + off, n - off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			close(fd);
			goto fail;
		}
		off += (size_t)w;
	}
	if (fsync(fd) != 0) {
		close(fd);
		goto fail;
	}
	if (close(fd) != 0 || rename(tmp, path) != 0)
		goto fail;
	snprintf(dir, sizeof dir, "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash) {
		*slash = '\0';
		srv_fsync_dir(dir[0] ? dir : "/");
	}
	return 0;
fail:
	enpu_fail(e, ENPU_E_STORAGE, path, NULL, "cannot write '%s': %s", path, strerror(errno));
	unlink(tmp);
	return -1;
}

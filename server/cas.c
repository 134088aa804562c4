/* cas.c: blob store, action cache and temp space of the daemon's cache
 * directory (layout in cas.h). No in-memory index: every question is a
 * stat() or an open(), so a restart sees everything that was written. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "buf.h"
#include "digest.h"
#include "cas.h"

struct srv_cas {
	char *root;
	char cas[4096], ac[4096], tmp[4096], art[4096];
};

struct srv_upload {
	srv_cas *c;
	int fd;
	char path[4096];
	enpu_sha256 *sha;
	uint64_t bytes;
};

const char *srv_cas_root(const srv_cas *c) { return c->root; }

void srv_random_hex(char *out, size_t nhex)
{
	unsigned char raw[64];
	size_t n = (nhex + 1) / 2, i;
	static const char hx[] = "0123456789abcdef";

	if (n > sizeof raw)
		n = sizeof raw;
	if (getrandom(raw, n, 0) != (ssize_t)n) {
		/* getrandom cannot fail for <= 256 bytes once seeded; be safe anyway */
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		srand((unsigned)(ts.tv_nsec ^ getpid()));
		for (i = 0; i < n; i++)
			raw[i] = (unsigned char)rand();
	}
	for (i = 0; i < nhex && i / 2 < n; i++)
		out[i] = hx[(raw[i / 2] >> ((i & 1) ? 0 : 4)) & 15];
	out[i] = '\0';
}

int srv_fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int r = fsync(fd);
	close(fd);
	return r;
}

void srv_rmtree(const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return;
	if (S_ISDIR(st.st_mode)) {
		DIR *d = opendir(path);
		struct dirent *de;
		char sub[4096];
		while (d && (de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			if (snprintf(sub, sizeof sub, "%s/%s", path, de->d_name) < (int)sizeof sub)
				srv_rmtree(sub);
		}
		if (d)
			closedir(d);
		rmdir(path);
	} else {
		unlink(path);
	}
}

static int copy_file(const char *from, const char *to, enpu_err *e)
{
	char buf[1 << 16];
	int in = -1, out = -1, ret = -1;
	ssize_t n;

	in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0) {
		enpu_fail(e, ENPU_E_IO, from, NULL, "cannot open '%s': %s", from, strerror(errno));
		goto out;
	}
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (out < 0) {
		enpu_fail(e, ENPU_E_STORAGE, to, NULL, "cannot create '%s': %s", to, strerror(errno));
		goto out;
	}
	while ((n = read(in, buf, sizeof buf)) > 0) {
		ssize_t off = 0;
		while (off < n) {
			ssize_t w = write(out, buf + off, (size_t)(n - off));
			if (w < 0) {
				if (errno == EINTR)
					continue;
				enpu_fail(e, ENPU_E_STORAGE, to, NULL, "cannot write '%s': %s",
					  to, strerror(errno));
				goto out;
			}
			off += w;
		}
	}
	if (n < 0 || fsync(out) != 0) {
		enpu_fail(e, ENPU_E_STORAGE, to, NULL, "cannot copy '%s': %s", from, strerror(errno));
		goto out;
	}
	ret = 0;
out:
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out) != 0 && ret == 0)
		ret = enpu_fail(e, ENPU_E_STORAGE, to, NULL, "cannot close '%s'", to);
	if (ret != 0 && out >= 0)
		unlink(to);
	return ret;
}

int srv_link_or_copy(const char *from, const char *to, enpu_err *e)
{
	if (link(from, to) == 0)
		return 0;
	if (errno == EEXIST)
		return enpu_fail(e, ENPU_E_STORAGE, to, NULL, "'%s' already exists", to);
	return copy_file(from, to, e);
}

static int clean_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char sub[4096];

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (snprintf(sub, sizeof sub, "%s/%s", dir, de->d_name) < (int)sizeof sub)
			srv_rmtree(sub);
	}
	closedir(d);
	return 0;
}

srv_cas *srv_cas_open(const char *dir, enpu_err *e)
{
	srv_cas *c = calloc(1, sizeof *c);
	if (!c) {
		enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
		return NULL;
	}
	c->root = strdup(dir);
	if (!c->root || strlen(dir) > 3000) {
		enpu_fail(e, ENPU_E_USAGE, dir, NULL, "cache directory path too long");
		goto fail;
	}
	snprintf(c->cas, sizeof c->cas, "%s/cas", dir);
	snprintf(c->ac, sizeof c->ac, "%s/ac", dir);
	snprintf(c->tmp, sizeof c->tmp, "%s/tmp", dir);
	snprintf(c->art, sizeof c->art, "%s/artifacts", dir);
	if (enpu_mkdirs(c->cas, 0755, e) || enpu_mkdirs(c->ac, 0755, e) ||
	    enpu_mkdirs(c->tmp, 0700, e) || enpu_mkdirs(c->art, 0755, e))
		goto fail;
	clean_dir(c->tmp);
	return c;
fail:
	srv_cas_close(c);
	return NULL;
}

void srv_cas_close(srv_cas *c)
{
	if (!c)
		return;
	free(c->root);
	free(c);
}

void srv_cas_blob_path(const srv_cas *c, const char *digest, char *out, size_t cap)
{
	snprintf(out, cap, "%s/%.2s/%s", c->cas, digest, digest);
}

int srv_cas_has(const srv_cas *c, const char *digest, uint64_t *size)
{
	char p[4200];
	struct stat st;

	if (!enpu_is_sha256_hex(digest))
		return 0;
	srv_cas_blob_path(c, digest, p, sizeof p);
	if (stat(p, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	if (size)
		*size = (uint64_t)st.st_size;
	return 1;
}

void srv_cas_touch(const srv_cas *c, const char *digest)
{
	char p[4200];

	if (!enpu_is_sha256_hex(digest))
		return;
	srv_cas_blob_path(c, digest, p, sizeof p);
	utimensat(AT_FDCWD, p, NULL, 0);
}

void srv_cas_tmpname(srv_cas *c, const char *suffix, char *out, size_t cap)
{
	char r[33];
	srv_random_hex(r, 32);
	/* the root is at most 3000 bytes (srv_cas_open), so this always fits */
	if (snprintf(out, cap, "%s/%s%s", c->tmp, r, suffix ? suffix : "") >= (int)cap)
		out[0] = '\0';
}

int srv_cas_tmpdir(srv_cas *c, char *out, size_t cap, enpu_err *e)
{
	srv_cas_tmpname(c, ".d", out, cap);
	if (mkdir(out, 0755) != 0)
		return enpu_fail(e, ENPU_E_STORAGE, out, NULL, "cannot create '%s': %s",
				 out, strerror(errno));
	return 0;
}

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
		return 0;
	}
	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
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
	char tmp[4200];

	if (enpu_sha256_file(path, digest, e) != 0)
		return -1;
	if (srv_cas_has(c, digest, NULL))
		return 0;
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

int srv_ac_get(srv_cas *c, const char *key, char id[65])
{
	char p[4200], buf[80];
	ssize_t n;
	int fd;

	if (!enpu_is_sha256_hex(key))
		return 0;
	snprintf(p, sizeof p, "%s/%s", c->ac, key);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n < 64)
		return 0;
	buf[64] = '\0';
	if (!enpu_is_sha256_hex(buf))
		return 0;
	memcpy(id, buf, 65);
	return 1;
}

int srv_ac_put(srv_cas *c, const char *key, const char *id, enpu_err *e)
{
	char p[4200], line[80];
	int n;

	snprintf(p, sizeof p, "%s/%s", c->ac, key);
	n = snprintf(line, sizeof line, "%s\n", id);
	return srv_cas_write_atomic(c, p, line, (size_t)n, e);
}

int srv_ac_count(srv_cas *c)
{
	DIR *d = opendir(c->ac);
	struct dirent *de;
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

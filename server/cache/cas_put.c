/* cas_put.c: writing blobs: streamed uploads hashed as they arrive and
 * installed under their digest (checked against the one expected), puts
 * from memory or a file, and atomic writes of named files. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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
	uint64_t kicked;   /* bytes whose writeback has been started */
	int nosync;        /* srv_cas_put_mem_volatile: no fsync */
	char vouched[65];  /* the digest taken as vouched for (srv_upload_copy_fd), or "" */
};

/* A big upload's writeback starts as it arrives (every KICK_BYTES), so the
 * fsync that commits it waits for its last part only, not for all of it. */
#define KICK_BYTES (8u << 20)

/* fsync an existing file (a blob stored again durably, which may have
 * been stored without an fsync: a job's result). */
static void sync_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

/* Move a complete temp file to its blob path. An existing blob wins (same
 * bytes by construction); stored durably (nosync 0), it is fsynced with
 * its directory, as a new one is. */
static int install_blob(srv_cas *c, const char *tmp, const char *digest, int *existed,
			int nosync, enpu_err *e)
{
	char dir[4200], dst[4200];
	struct stat st;
	int rc;

	snprintf(dir, sizeof dir, "%s/%.2s", c->cas, digest);
	srv_cas_blob_path(c, digest, dst, sizeof dst);
	if (existed)
		*existed = 0;
	if (srv_cas_has(c, digest, NULL)) {
		if (existed)
			*existed = 1;
		unlink(tmp);
		if (!nosync) {
			sync_file(dst);
			srv_fsync_dir(dir);
		}
		srv_cas_touch(c, digest);   /* stored again = used now */
		return 0;
	}
	/* The fan-out directory is made only when the rename says it is
	 * missing (the first blob of its 256th): one call per store, not two. */
	if (rename(tmp, dst) != 0) {
		if (errno != ENOENT)
			goto fail;
		if (mkdir(dir, 0755) == 0)
			srv_fsync_dir(c->cas);   /* a new fan-out directory must outlive a power cut too */
		else if (errno != EEXIST)
			goto fail;
		if (rename(tmp, dst) != 0)
			goto fail;
	}
	if (!nosync)
		srv_fsync_dir(dir);
	/* its digest was computed here from these very bytes: known good,
	 * not hashed again at its first use */
	srv_cas_memo_good(c, dst, digest);
	if (stat(dst, &st) == 0) {
		struct timespec t;
		cas_now(&t);
		pthread_mutex_lock(&c->ix_mu);
		rc = ix_blob_put(c->ix, digest, (uint64_t)st.st_size, &t);
		pthread_mutex_unlock(&c->ix_mu);
		if (rc != 0)   /* stored, not indexed: gc's pass indexes it */
			srv_log("warn", "cache: out of memory indexing blob %s", digest);
	}
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
	if (enpu_sha256_update(u->sha, p, n) != 0)
		return enpu_fail(e, ENPU_E_INTERNAL, NULL, NULL, "sha256 update failed");
	if (enpu_write_all(u->fd, p, n) != 0)
		return enpu_fail(e, ENPU_E_STORAGE, NULL, NULL, "cannot write upload: %s",
				 strerror(errno));
	u->bytes += n;
#ifdef SYNC_FILE_RANGE_WRITE
	if (!u->nosync && u->bytes - u->kicked >= KICK_BYTES) {
		(void)sync_file_range(u->fd, (off_t)u->kicked, (off_t)(u->bytes - u->kicked),
				      SYNC_FILE_RANGE_WRITE);   /* a hint: the fsync decides */
		u->kicked = u->bytes;
	}
#endif
	if (u->bytes == n && n)
		srv_fault_point("upload");   /* part written, nothing committed */
	return 0;
}

/* ---- an upload from a file: the kernel copies, this thread hashes ---------- */

#define COPY_STEP (8u << 20)   /* a copier's step, and a writeback kick */
#define HASH_BUF (1u << 20)   /* the read-and-write copy's buffer */

typedef struct copier {
	int in, out;
	uint64_t size, done;       /* done: bytes in out (under mu) */
	int err, over;             /* errno of a failure (EIO: the source shrank); finished */
	int stop;                  /* the hasher failed: copy no more (under mu) */
	pthread_mutex_t mu;
	pthread_cond_t cv;
} copier;

static void copier_step(copier *k, uint64_t n, int err, int over)
{
	pthread_mutex_lock(&k->mu);
	k->done += n;
	k->err = err;
	k->over = over;
	pthread_cond_signal(&k->cv);
	pthread_mutex_unlock(&k->mu);
}

/* n bytes from in (at offset at) to out by read and write, for where
 * copy_file_range cannot (another filesystem on an older kernel). */
static ssize_t copy_rw(int in, uint64_t at, int out, size_t n, char *buf)
{
	ssize_t r = pread(in, buf, n < HASH_BUF ? n : HASH_BUF, (off_t)at);

	return r > 0 && enpu_write_all(out, buf, (size_t)r) != 0 ? -1 : r;
}

static void *copier_run(void *arg)
{
	copier *k = arg;
	uint64_t at = 0;
	char *buf = NULL;

	while (at < k->size) {
		int stop;
		pthread_mutex_lock(&k->mu);
		stop = k->stop;
		pthread_mutex_unlock(&k->mu);
		if (stop)
			break;
		size_t want = k->size - at < COPY_STEP ? (size_t)(k->size - at) : COPY_STEP;
		loff_t from = (loff_t)at;   /* the source's own offset stays where it is */
		ssize_t n = buf ? copy_rw(k->in, at, k->out, want, buf) :
			    copy_file_range(k->in, &from, k->out, NULL, want, 0);
		if (n < 0 && !buf && at == 0 && enpu_copy_range_unsupported(errno)) {
			if (!(buf = malloc(HASH_BUF))) {
				copier_step(k, 0, ENOMEM, 1);
				return NULL;
			}
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			copier_step(k, 0, n == 0 ? EIO : errno, 1);
			free(buf);
			return NULL;
		}
#ifdef SYNC_FILE_RANGE_WRITE
		(void)sync_file_range(k->out, (off_t)at, n, SYNC_FILE_RANGE_WRITE);   /* a hint */
#endif
		at += (uint64_t)n;
		copier_step(k, (uint64_t)n, 0, at >= k->size);
	}
	if (k->size == 0 || at < k->size)
		copier_step(k, 0, 0, 1);
	free(buf);
	return NULL;
}

/* Bytes [*hashed, to) of the upload's own file (rfd), hashed where they
 * lie: mapped from the page below, COPY_STEP at a time (no copy out of the
 * page cache, and no more of it counted in the daemon's RSS). 0, or an
 * errno. */
static int hash_mapped(srv_upload *u, int rfd, uint64_t *hashed, uint64_t to)
{
	long page = sysconf(_SC_PAGESIZE);

	while (*hashed < to) {
		uint64_t from = *hashed & ~(uint64_t)(page - 1);
		uint64_t end = to - from > COPY_STEP ? from + COPY_STEP : to;
		unsigned char *m = mmap(NULL, (size_t)(end - from), PROT_READ,
					MAP_SHARED | MAP_POPULATE, rfd, (off_t)from);
		int bad;
		if (m == MAP_FAILED)
			return errno;
		bad = enpu_sha256_update(u->sha, m + (*hashed - from), (size_t)(end - *hashed)) != 0;
		munmap(m, (size_t)(end - from));
		if (bad)
			return ENOTRECOVERABLE;   /* the hash itself failed */
		*hashed = end;
	}
	return 0;
}

int srv_upload_copy_fd(srv_upload *u, int fd, uint64_t size, const char *vouched,
		       const struct stat *as, enpu_err *e)
{
	copier k = {.in = fd, .out = u->fd, .size = size};
	uint64_t hashed = 0;
	int rfd = open(u->path, O_RDONLY | O_CLOEXEC), err = 0;
	struct stat after;
	pthread_t tid;

	if (rfd < 0) {
		err = errno;
		goto out;
	}
	pthread_mutex_init(&k.mu, NULL);
	pthread_cond_init(&k.cv, NULL);
	if (vouched && as) {
		/* nothing to hash alongside: the copy runs on this thread */
		copier_run(&k);
		if ((err = k.err) != 0)
			goto destroy;
		if (fstat(fd, &after) == 0 && enpu_stat_unchanged(as, &after)) {
			memcpy(u->vouched, vouched, 65);
			u->bytes = u->kicked = k.done;
			goto destroy;
		}
		/* written meanwhile: the copy is hashed after all, and finish
		 * finds whether it is still the bytes vouched for */
		err = hash_mapped(u, rfd, &hashed, k.done);
		u->bytes = u->kicked = hashed;
		goto destroy;
	}
	if ((err = pthread_create(&tid, NULL, copier_run, &k)) != 0)
		goto destroy;
	for (;;) {
		uint64_t done;
		int over;
		pthread_mutex_lock(&k.mu);
		while (k.done == hashed && !k.over)
			pthread_cond_wait(&k.cv, &k.mu);
		done = k.done;
		over = k.over;
		pthread_mutex_unlock(&k.mu);
		/* what is in the file, hashed where it lies */
		if (!err)
			err = hash_mapped(u, rfd, &hashed, done);
		if (over || err)
			break;
	}
	pthread_mutex_lock(&k.mu);
	k.stop = 1;   /* after an error here: the copier ends at its next step */
	pthread_mutex_unlock(&k.mu);
	pthread_join(tid, NULL);
	if (!err)
		err = k.err;
	u->bytes = hashed;
	u->kicked = hashed;
destroy:
	pthread_mutex_destroy(&k.mu);
	pthread_cond_destroy(&k.cv);
out:
	if (rfd >= 0)
		close(rfd);
	if (!err)
		return 0;
	if (err == EIO)
		return enpu_fail(e, ENPU_E_BAD_REQUEST, NULL, NULL,
				 "the file ended before its %llu bytes were read (changed meanwhile?)",
				 (unsigned long long)size);
	return enpu_fail(e, ENPU_E_STORAGE, NULL, NULL, "cannot copy the file into the cache: %s",
			 strerror(err));
}

int srv_upload_vouched(const srv_upload *u) { return u->vouched[0] != '\0'; }

uint64_t srv_upload_bytes(const srv_upload *u) { return u->bytes; }

void srv_upload_volatile(srv_upload *u) { u->nosync = 1; }

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

	if ((!u->nosync && fsync(u->fd) != 0) || close(u->fd) != 0) {
		u->fd = -1;
		unlink(u->path);
		enpu_fail(e, ENPU_E_STORAGE, NULL, NULL, "cannot write upload: %s", strerror(errno));
		goto out;
	}
	u->fd = -1;
	if (u->vouched[0]) {
		memcpy(digest, u->vouched, 65);
	} else {
		enpu_sha256_final(u->sha, digest);
		u->sha = NULL;
	}
	if (expect && strcmp(expect, digest) != 0) {
		unlink(u->path);
		enpu_fail(e, ENPU_E_BLOB_DIGEST, NULL, NULL,
			  "uploaded bytes hash to %s, not '%s' (%llu bytes received)", digest,
			  expect, (unsigned long long)u->bytes);
		goto out;
	}
	ret = install_blob(u->c, u->path, digest, existed, u->nosync, e);
out:
	srv_upload_abort(u);
	return ret;
}

/* digest of p (n bytes): from the put memo when a put of the same bytes
 * is remembered, else hashed (and remembered when small). */
static void put_digest(srv_cas *c, const void *p, size_t n, char digest[65])
{
	put_memo *m = &c->pmemo[n % PUT_MEMO_SLOTS];
	int hit;

	if (n == 0 || n > PUT_MEMO_MAX) {
		enpu_sha256_hex(p, n, digest);
		return;
	}
	pthread_mutex_lock(&c->memo_mu);
	if ((hit = m->len == n && !memcmp(m->bytes, p, n)))
		memcpy(digest, m->digest, 65);
	pthread_mutex_unlock(&c->memo_mu);
	if (hit)
		return;
	enpu_sha256_hex(p, n, digest);
	pthread_mutex_lock(&c->memo_mu);
	memcpy(m->bytes, p, n);
	memcpy(m->digest, digest, 65);
	m->len = n;
	pthread_mutex_unlock(&c->memo_mu);
}

static int put_mem(srv_cas *c, const void *p, size_t n, char digest[65], int nosync, enpu_err *e)
{
	srv_upload *u;

	/* a job's outputs are often the bytes of an earlier job's: hashed
	 * first (or known: put_digest), a blob already stored costs no file */
	if (nosync) {
		put_digest(c, p, n, digest);
		if (srv_cas_has(c, digest, NULL)) {
			srv_cas_touch(c, digest);
			return 0;
		}
	}
	if (!(u = srv_upload_begin(c, e)))
		return -1;
	if (nosync)
		srv_upload_volatile(u);
	if (srv_upload_write(u, p, n, e) != 0) {
		srv_upload_abort(u);
		return -1;
	}
	return srv_upload_finish(u, NULL, digest, NULL, e);
}

int srv_cas_put_mem(srv_cas *c, const void *p, size_t n, char digest[65], enpu_err *e)
{
	return put_mem(c, p, n, digest, 0, e);
}

int srv_cas_put_mem_volatile(srv_cas *c, const void *p, size_t n, char digest[65], enpu_err *e)
{
	return put_mem(c, p, n, digest, 1, e);
}

int srv_cas_put_file(srv_cas *c, const char *path, char digest[65], enpu_err *e)
{
	if (enpu_sha256_file(path, digest, e) != 0)
		return -1;
	return srv_cas_put_file_as(c, path, digest, e);
}

/* path (a file of an artifact being installed) becomes a hard link to the
 * CAS's blob of the same digest and size, so that the artifact's files
 * take no space of their own; where the link cannot be made, the copy
 * stays (it is the same bytes). */
static void share_blob(srv_cas *c, const char *path, const char *digest, uint64_t size)
{
	char blob[4200], lnk[4300];
	struct stat sb, bb;

	srv_cas_blob_path(c, digest, blob, sizeof blob);
	if (stat(path, &sb) != 0 || (uint64_t)sb.st_size != size || stat(blob, &bb) != 0)
		return;
	/* already a link to it (a weights file the compile linked): a rename
	 * over another link to the same file does nothing, and would leave
	 * the new link beside it */
	if (sb.st_ino == bb.st_ino && sb.st_dev == bb.st_dev)
		return;
	snprintf(lnk, sizeof lnk, "%s.lnk", path);
	if (srv_cas_link_known(c, blob, lnk) != 0)
		return;
	if (rename(lnk, path) != 0)
		unlink(lnk);
}

int srv_cas_put_file_as(srv_cas *c, const char *path, const char *digest, enpu_err *e)
{
	char tmp[4200];
	uint64_t size;

	if (srv_cas_has(c, digest, &size)) {
		srv_cas_touch(c, digest);   /* stored again = used now */
		share_blob(c, path, digest, size);
		return 0;
	}
	srv_cas_tmpname(c, ".in", tmp, sizeof tmp);
	if (srv_link_or_copy(path, tmp, e) != 0)
		return -1;
	return install_blob(c, tmp, digest, NULL, 0, e);
}

int srv_cas_write_atomic(srv_cas *c, const char *path, const void *p, size_t n, enpu_err *e)
{
	char tmp[4200], dir[4200];
	int fd;

	srv_cas_tmpname(c, ".w", tmp, sizeof tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		goto fail;
	if (enpu_write_all(fd, p, n) != 0) {
		close(fd);
		goto fail;
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

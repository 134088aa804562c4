/* cas_verify.c: a blob is only served or used when its bytes hash to its
 * name. A verified file is remembered by inode, size and ctime, so it is
 * hashed again only when it changed; a bad one counts as an integrity
 * failure and is removed. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "digest.h"
#include "srv.h"
#include "cas_int.h"

static int memo_same(const memo *m, const struct stat *st, const char *digest)
{
	return m->ino == st->st_ino && m->dev == st->st_dev && m->size == st->st_size &&
	       m->ctime.tv_sec == st->st_ctim.tv_sec && m->ctime.tv_nsec == st->st_ctim.tv_nsec &&
	       (!digest || !strcmp(m->digest, digest));
}

static memo *memo_slot(srv_cas *c, const struct stat *st)
{
	return &c->memo[(size_t)st->st_ino % MEMO_SLOTS];
}

/* Touching changes the ctime: a file that had hashed right stays known
 * good (our own utimensat changes no byte). The index moves the blob to
 * the newest end of the LRU at every use; the file's mtime, which only
 * carries that order across a restart, is written when the index's last
 * use is CAS_TOUCH_DISK_S or more old, so a blob used by every job costs
 * no inode write per job (docs/architecture.md: the order a restart reads
 * back is the order of uses CAS_TOUCH_DISK_S apart). */
void srv_cas_touch(srv_cas *c, const char *digest)
{
	char p[4200];
	struct stat before, after;
	struct timespec t;
	int recent;
	memo *m;

	if (!enpu_is_sha256_hex(digest))
		return;
	cas_now(&t);
	pthread_mutex_lock(&c->ix_mu);
	recent = ix_blob_touch_recent(c->ix, digest, &t, CAS_TOUCH_DISK_S) == 1;
	pthread_mutex_unlock(&c->ix_mu);
	if (recent)
		return;
	srv_cas_blob_path(c, digest, p, sizeof p);
	pthread_mutex_lock(&c->memo_mu);
	if (stat(p, &before) == 0 && utimensat(AT_FDCWD, p, NULL, 0) == 0 &&
	    stat(p, &after) == 0) {
		m = memo_slot(c, &before);
		if (memo_same(m, &before, digest) && after.st_ino == before.st_ino)
			m->ctime = after.st_ctim;
	}
	pthread_mutex_unlock(&c->memo_mu);
}

/* The file that stats as st hashes to digest. */
static void memo_set(srv_cas *c, const struct stat *st, const char *digest)
{
	pthread_mutex_lock(&c->memo_mu);
	memo *m = memo_slot(c, st);
	m->dev = st->st_dev;
	m->ino = st->st_ino;
	m->size = st->st_size;
	m->ctime = st->st_ctim;
	memcpy(m->digest, digest, 65);
	pthread_mutex_unlock(&c->memo_mu);
}

void srv_cas_memo_good(srv_cas *c, const char *path, const char *digest)
{
	struct stat st;

	if (stat(path, &st) == 0)
		memo_set(c, &st, digest);
}

int srv_cas_known_good(srv_cas *c, const char *path, const char *digest)
{
	struct stat st;
	int known;

	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	pthread_mutex_lock(&c->memo_mu);
	known = memo_same(memo_slot(c, &st), &st, digest);
	pthread_mutex_unlock(&c->memo_mu);
	return known;
}

int srv_cas_link_known(srv_cas *c, const char *from, const char *to)
{
	struct stat before, after;
	int linked, err = 0;
	memo *m;

	/* under the memo's lock, as srv_cas_touch's utimensat: the memo's
	 * ctime moves with the link's, and no other check runs between */
	pthread_mutex_lock(&c->memo_mu);
	linked = stat(from, &before) == 0 && link(from, to) == 0;
	if (!linked)
		err = errno;
	if (linked && stat(to, &after) == 0 && after.st_ino == before.st_ino &&
	    after.st_dev == before.st_dev) {
		m = memo_slot(c, &before);
		if (memo_same(m, &before, NULL))
			m->ctime = after.st_ctim;
	}
	pthread_mutex_unlock(&c->memo_mu);
	errno = err;
	return linked ? 0 : -1;
}

int srv_cas_link_blob(srv_cas *c, const char *digest, const char *to, enpu_err *e)
{
	char p[4200];

	srv_cas_blob_path(c, digest, p, sizeof p);
	return srv_cas_link_known(c, p, to) == 0 ? 0 : srv_link_or_copy(p, to, e);
}

static bytes_memo *bytes_slot(srv_cas *c, const char *digest)
{
	unsigned h = 0;

	for (int i = 0; i < 8; i++)   /* a digest's hex: any 8 digits spread */
		h = h * 16 + (unsigned)(digest[i] <= '9' ? digest[i] - '0' : digest[i] - 'a' + 10);
	return &c->bmemo[h % BYTES_SLOTS];
}

/* n bytes of fd from its start into p; -1 on an error or a short file. */
static int read_all(int fd, unsigned char *p, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, p + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

int srv_cas_read_small(srv_cas *c, const char *digest, size_t max, enpu_buf *out)
{
	char p[4200];
	struct stat st, st2;
	bytes_memo *bm;
	unsigned char *b = NULL;
	size_t n = 0;
	int fd, rc = -1;

	if (!enpu_is_sha256_hex(digest))
		return -1;
	srv_cas_blob_path(c, digest, p, sizeof p);
	if (stat(p, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > max)
		return -1;
	bm = bytes_slot(c, digest);
	pthread_mutex_lock(&c->memo_mu);
	if (bm->bytes && memo_same(&bm->id, &st, digest))
		rc = enpu_buf_add(out, bm->bytes, bm->len);
	pthread_mutex_unlock(&c->memo_mu);
	if (rc == 0)
		return 0;
	if ((fd = open(p, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	if (fstat(fd, &st) == 0 && (uint64_t)st.st_size <= max &&
	    (b = malloc((n = (size_t)st.st_size) + 1)) != NULL && read_all(fd, b, n) == 0 &&
	    fstat(fd, &st2) == 0)
		rc = enpu_buf_add(out, b, n);
	close(fd);
	/* kept only when the verify memo says these very bytes hash right */
	if (rc == 0 && n <= BYTES_MAX && srv_stat_same_file(&st, &st2)) {
		pthread_mutex_lock(&c->memo_mu);
		if (memo_same(memo_slot(c, &st), &st, digest)) {
			free(bm->bytes);
			bm->bytes = b;
			bm->len = n;
			bm->id = *memo_slot(c, &st);
			b = NULL;
		}
		pthread_mutex_unlock(&c->memo_mu);
	}
	free(b);
	return rc;
}

/* srv_cas_check_file of the file at path that stats as st (a regular file). */
static int check_stated(srv_cas *c, const char *path, const struct stat *st, const char *digest,
			int force)
{
	struct stat st2;
	char got[65];
	enpu_err e = ENPU_ERR_INIT;
	int known = 0;

	pthread_mutex_lock(&c->memo_mu);
	known = !force && memo_same(memo_slot(c, st), st, digest);
	pthread_mutex_unlock(&c->memo_mu);
	if (known)
		return 1;
	if (enpu_sha256_file(path, got, &e) != 0 || strcmp(got, digest) != 0)
		return 0;
	/* Remember it only if nothing changed while we read. */
	if (stat(path, &st2) == 0 && srv_stat_same_file(st, &st2))
		memo_set(c, st, digest);
	return 1;
}

int srv_cas_check_file(srv_cas *c, const char *path, const char *digest, int force)
{
	struct stat st;

	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	return check_stated(c, path, &st, digest, force);
}

int srv_cas_verify(srv_cas *c, const char *digest, uint64_t *size)
{
	char p[4200];
	struct stat st;
	uint64_t sz;

	if (!enpu_is_sha256_hex(digest))
		return 0;
	srv_cas_blob_path(c, digest, p, sizeof p);
	/* one stat: there (srv_cas_has's test) and, when unchanged, known good */
	if (stat(p, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	sz = (uint64_t)st.st_size;
	if (!check_stated(c, p, &st, digest, 0)) {
		/* gone meanwhile (evicted) is not corruption */
		if (!srv_cas_has(c, digest, NULL))
			return 0;
		if (srv_cas_remove(c, digest)) {
			srv_cas_count(c, SRV_EV_INTEGRITY, 0);
			srv_log("warn", "cache: blob %s does not hash to its name: dropped (%llu bytes)",
				digest, (unsigned long long)sz);
		}
		return 0;
	}
	if (size)
		*size = sz;
	return 1;
}

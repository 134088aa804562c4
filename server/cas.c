/* cas.c: blob store, action cache and temp space of the daemon's cache
 * directory (layout in cas.h). No in-memory index: every question is a
 * stat() or an open(), so a restart sees everything that was written. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <json-c/json.h>
#include "buf.h"
#include "digest.h"
#include "srv.h"
#include "cas.h"
#include "fault.h"

/* The persisted counters, in stats.json under these names. */
enum { CNT_AC_HITS, CNT_AC_MISSES, CNT_CAS_HITS, CNT_CAS_MISSES, CNT_EVICTIONS,
       CNT_EVICTED_BYTES, CNT_INTEGRITY, CNT_N };
static const char *const cnt_names[CNT_N] = {
	"ac_hits", "ac_misses", "cas_hits", "cas_misses", "evictions", "evicted_bytes",
	"integrity_failures",
};

/* What was last hashed right, by inode: a direct-mapped table (a collision
 * only costs a re-hash). */
#define MEMO_SLOTS 4096
typedef struct memo {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec ctime;
	char digest[65];
} memo;

struct srv_cas {
	char *root;
	char cas[4096], ac[4096], tmp[4096], art[4096];
	atomic_ullong cnt[CNT_N];
	pthread_mutex_t memo_mu;
	memo memo[MEMO_SLOTS];
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

static void stats_path(const srv_cas *c, char *out, size_t cap)
{
	snprintf(out, cap, "%s/stats.json", c->root);
}

/* Counters from the last run; a missing or damaged file starts at zero. */
static void load_stats(srv_cas *c)
{
	char p[4200];
	enpu_buf b = ENPU_BUF_INIT;
	enpu_err e = ENPU_ERR_INIT;
	json_object *root = NULL, *v;
	int i;

	stats_path(c, p, sizeof p);
	if (enpu_read_file(p, 64u << 10, &b, &e) != 0)
		goto out;
	root = json_tokener_parse(b.data);
	if (!root || !json_object_is_type(root, json_type_object))
		goto out;
	for (i = 0; i < CNT_N; i++)
		if (json_object_object_get_ex(root, cnt_names[i], &v) &&
		    json_object_is_type(v, json_type_int) && json_object_get_int64(v) > 0)
			atomic_store(&c->cnt[i], (unsigned long long)json_object_get_int64(v));
out:
	json_object_put(root);
	enpu_buf_free(&b);
}

void srv_cas_save_stats(srv_cas *c)
{
	char p[4200];
	json_object *o = json_object_new_object();
	enpu_err e = ENPU_ERR_INIT;
	const char *text;
	int i;

	if (!o)
		return;
	for (i = 0; i < CNT_N; i++)
		json_object_object_add(o, cnt_names[i],
				       json_object_new_int64((int64_t)atomic_load(&c->cnt[i])));
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY);
	stats_path(c, p, sizeof p);
	srv_cas_write_atomic(c, p, text, strlen(text), &e);
	json_object_put(o);
}

void srv_cas_count(srv_cas *c, srv_cas_event ev, uint64_t bytes)
{
	switch (ev) {
	case SRV_EV_AC_HIT: atomic_fetch_add(&c->cnt[CNT_AC_HITS], 1); break;
	case SRV_EV_AC_MISS: atomic_fetch_add(&c->cnt[CNT_AC_MISSES], 1); break;
	case SRV_EV_CAS_HIT: atomic_fetch_add(&c->cnt[CNT_CAS_HITS], 1); break;
	case SRV_EV_CAS_MISS: atomic_fetch_add(&c->cnt[CNT_CAS_MISSES], 1); break;
	case SRV_EV_EVICT:
		atomic_fetch_add(&c->cnt[CNT_EVICTIONS], 1);
		atomic_fetch_add(&c->cnt[CNT_EVICTED_BYTES], bytes);
		break;
	case SRV_EV_INTEGRITY: atomic_fetch_add(&c->cnt[CNT_INTEGRITY], 1); break;
	}
}

static uint64_t count_names(const char *dir, int sha_only)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	uint64_t n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)))
		if (sha_only ? enpu_is_sha256_hex(de->d_name) : de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* Blobs and their bytes: one readdir per fan-out directory and a stat per
 * blob, cheap next to a scrape interval even for tens of thousands. */
static void count_blobs(const srv_cas *c, uint64_t *n, uint64_t *bytes)
{
	char sub[4400], p[4700];
	DIR *d = opendir(c->cas), *d2;
	struct dirent *de, *de2;
	struct stat st;

	*n = *bytes = 0;
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (strlen(de->d_name) != 2 || de->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof sub, "%s/%s", c->cas, de->d_name);
		d2 = opendir(sub);
		while (d2 && (de2 = readdir(d2))) {
			if (!enpu_is_sha256_hex(de2->d_name))
				continue;
			snprintf(p, sizeof p, "%s/%s", sub, de2->d_name);
			if (stat(p, &st) != 0 || !S_ISREG(st.st_mode))
				continue;
			(*n)++;
			*bytes += (uint64_t)st.st_size;
		}
		if (d2)
			closedir(d2);
	}
	closedir(d);
}

void srv_cas_stats(struct srv_cas *c, srv_cache_stats *out)
{
	memset(out, 0, sizeof *out);
	count_blobs(c, &out->blobs, &out->blob_bytes);
	out->artifacts = count_names(c->art, 1);
	out->ac_entries = count_names(c->ac, 1);
	out->ac_hits = atomic_load(&c->cnt[CNT_AC_HITS]);
	out->ac_misses = atomic_load(&c->cnt[CNT_AC_MISSES]);
	out->cas_hits = atomic_load(&c->cnt[CNT_CAS_HITS]);
	out->cas_misses = atomic_load(&c->cnt[CNT_CAS_MISSES]);
	out->evictions = atomic_load(&c->cnt[CNT_EVICTIONS]);
	out->evicted_bytes = atomic_load(&c->cnt[CNT_EVICTED_BYTES]);
	out->integrity_failures = atomic_load(&c->cnt[CNT_INTEGRITY]);
}

srv_cas *srv_cas_open(const char *dir, enpu_err *e)
{
	srv_cas *c = calloc(1, sizeof *c);
	if (!c) {
		enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&c->memo_mu, NULL);
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
	load_stats(c);
	return c;
fail:
	srv_cas_close(c);
	return NULL;
}

void srv_cas_close(srv_cas *c)
{
	if (!c)
		return;
	if (c->cas[0])
		srv_cas_save_stats(c);
	pthread_mutex_destroy(&c->memo_mu);
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
 * good (our own utimensat changes no byte). */
void srv_cas_touch(srv_cas *c, const char *digest)
{
	char p[4200];
	struct stat before, after;
	memo *m;

	if (!enpu_is_sha256_hex(digest))
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

int srv_cas_check_file(srv_cas *c, const char *path, const char *digest, int force)
{
	struct stat st, st2;
	char got[65];
	enpu_err e = ENPU_ERR_INIT;
	int known = 0;

	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	pthread_mutex_lock(&c->memo_mu);
	known = !force && memo_same(memo_slot(c, &st), &st, digest);
	pthread_mutex_unlock(&c->memo_mu);
	if (known)
		return 1;
	if (enpu_sha256_file(path, got, &e) != 0 || strcmp(got, digest) != 0)
		return 0;
	/* Remember it only if nothing changed while we read. */
	if (stat(path, &st2) == 0 && st2.st_ino == st.st_ino && st2.st_size == st.st_size &&
	    st2.st_ctim.tv_sec == st.st_ctim.tv_sec && st2.st_ctim.tv_nsec == st.st_ctim.tv_nsec) {
		pthread_mutex_lock(&c->memo_mu);
		memo *m = memo_slot(c, &st);
		m->dev = st.st_dev;
		m->ino = st.st_ino;
		m->size = st.st_size;
		m->ctime = st.st_ctim;
		memcpy(m->digest, digest, 65);
		pthread_mutex_unlock(&c->memo_mu);
	}
	return 1;
}

int srv_cas_verify(srv_cas *c, const char *digest, uint64_t *size)
{
	char p[4200];
	uint64_t sz;

	if (!srv_cas_has(c, digest, &sz))
		return 0;
	srv_cas_blob_path(c, digest, p, sizeof p);
	if (!srv_cas_check_file(c, p, digest, 0)) {
		/* gone meanwhile (evicted) is not corruption */
		if (!srv_cas_has(c, digest, NULL))
			return 0;
		if (unlink(p) == 0) {
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

int srv_cas_remove(srv_cas *c, const char *digest)
{
	char p[4200];

	if (!enpu_is_sha256_hex(digest))
		return 0;
	srv_cas_blob_path(c, digest, p, sizeof p);
	return unlink(p) == 0;
}

int srv_cas_list(srv_cas *c, srv_cas_entry **out, int *n_out, uint64_t *total)
{
	char sub[4400], p[4700];
	srv_cas_entry *v = NULL;
	int n = 0, cap = 0;
	DIR *d, *d2;
	struct dirent *de, *de2;
	struct stat st;

	*out = NULL;
	*n_out = 0;
	*total = 0;
	d = opendir(c->cas);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (strlen(de->d_name) != 2 || de->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof sub, "%s/%s", c->cas, de->d_name);
		d2 = opendir(sub);
		while (d2 && (de2 = readdir(d2))) {
			if (!enpu_is_sha256_hex(de2->d_name))
				continue;
			snprintf(p, sizeof p, "%s/%s", sub, de2->d_name);
			if (stat(p, &st) != 0 || !S_ISREG(st.st_mode))
				continue;
			if (n == cap) {
				int ncap = cap ? cap * 2 : 256;
				srv_cas_entry *nv = realloc(v, (size_t)ncap * sizeof *nv);
				if (!nv) {
					closedir(d2);
					closedir(d);
					free(v);
					return -1;
				}
				v = nv;
				cap = ncap;
			}
			memcpy(v[n].digest, de2->d_name, 65);
			v[n].size = (uint64_t)st.st_size;
			v[n].mtime = st.st_mtim;
			*total += (uint64_t)st.st_size;
			n++;
		}
		if (d2)
			closedir(d2);
	}
	closedir(d);
	*out = v;
	*n_out = n;
	return 0;
}

int srv_cas_clean_tmp(srv_cas *c, int max_age)
{
	DIR *d = opendir(c->tmp);
	struct dirent *de;
	struct stat st;
	char sub[4400];
	time_t now = time(NULL);
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(sub, sizeof sub, "%s/%s", c->tmp, de->d_name);
		if (lstat(sub, &st) != 0 || now - st.st_mtime < max_age)
			continue;
		srv_rmtree(sub);
		n++;
	}
	closedir(d);
	return n;
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
	char tmp[4200];

	if (enpu_sha256_file(path, digest, e) != 0)
		return -1;
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

void srv_ac_touch(srv_cas *c, const char *key)
{
	char p[4200];

	if (!enpu_is_sha256_hex(key))
		return;
	snprintf(p, sizeof p, "%s/%s", c->ac, key);
	utimensat(AT_FDCWD, p, NULL, 0);
}

int srv_ac_remove(srv_cas *c, const char *key)
{
	char p[4200];

	if (!enpu_is_sha256_hex(key))
		return 0;
	snprintf(p, sizeof p, "%s/%s", c->ac, key);
	return unlink(p) == 0;
}

int srv_ac_list(srv_cas *c, srv_ac_entry **out, int *n_out)
{
	DIR *d = opendir(c->ac);
	struct dirent *de;
	struct stat st;
	char p[4400];
	srv_ac_entry *v = NULL;
	int n = 0, cap = 0;

	*out = NULL;
	*n_out = 0;
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		char id[65];
		if (!enpu_is_sha256_hex(de->d_name) || !srv_ac_get(c, de->d_name, id))
			continue;
		snprintf(p, sizeof p, "%s/%s", c->ac, de->d_name);
		if (stat(p, &st) != 0)
			continue;
		if (n == cap) {
			int ncap = cap ? cap * 2 : 64;
			srv_ac_entry *nv = realloc(v, (size_t)ncap * sizeof *nv);
			if (!nv) {
				closedir(d);
				free(v);
				return -1;
			}
			v = nv;
			cap = ncap;
		}
		memcpy(v[n].key, de->d_name, 65);
		memcpy(v[n].id, id, 65);
		v[n].mtime = st.st_mtim;
		n++;
	}
	closedir(d);
	*out = v;
	*n_out = n;
	return 0;
}

int srv_ac_drop_for(srv_cas *c, const char *id)
{
	srv_ac_entry *v;
	char p[4400];
	struct stat st;
	int n, i, dropped = 0;

	if (srv_ac_list(c, &v, &n) != 0)
		return 0;
	for (i = 0; i < n; i++) {
		if (id ? strcmp(v[i].id, id) != 0
		       : (snprintf(p, sizeof p, "%s/%s", c->art, v[i].id), stat(p, &st) == 0))
			continue;
		dropped += srv_ac_remove(c, v[i].key);
	}
	free(v);
	return dropped;
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

/* cas_scan.c: the one pass over the cache's disk. At open: move a flat
 * ac/ and artifacts/ (the layout before their fan-out directories) into
 * ac/<2 hex>/ and artifacts/<2 hex>/, one rename per entry (a crash
 * midway leaves entries of both layouts, and the next open moves the
 * rest), then build the index (cas_index.h) from what is there: blobs
 * (a stat each), artifacts (their manifests), action-cache entries. gc
 * runs the same pass to reconcile the index with a disk changed behind the
 * daemon's back: it adds what it finds that the index lacks and removes
 * what it does not find. The disk is untrusted: a name that is not a
 * digest, a file in the wrong fan-out directory, a directory where a file
 * belongs or the reverse, an unreadable manifest are skipped (or, for a
 * manifest, indexed as bad for gc to drop); none stops the pass. Also the
 * index's helpers for artifacts (add, remove, touch, reverse maps). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "digest.h"
#include "srv.h"
#include "cas_int.h"
#include "artifact.h"
#include "fault.h"
#include "wire.h"

#define LOCK(c) pthread_mutex_lock(&(c)->ix_mu)
#define UNLOCK(c) pthread_mutex_unlock(&(c)->ix_mu)

/* ---- migration of the flat layout ---------------------------------------- */

/* Move one flat entry top/<name> into top/<2 hex>/<name>. An entry already
 * in its fan-out directory wins (the flat one is an older copy). */
static int migrate_one(const char *top, const char *name)
{
	char src[4400], shard[4200], dst[4500];
	struct stat st;

	snprintf(src, sizeof src, "%s/%s", top, name);
	snprintf(shard, sizeof shard, "%s/%.2s", top, name);
	snprintf(dst, sizeof dst, "%s/%s", shard, name);
	if (srv_mkdir_shard(shard) != 0)
		return -1;
	if (lstat(dst, &st) == 0) {
		srv_rmtree(src);
		return 0;
	}
	return rename(src, dst);
}

/* Every flat entry of top: regular files (want_dir 0) or directories. */
static long migrate_dir(const char *top, int want_dir)
{
	DIR *d = opendir(top);
	struct dirent *de;
	struct stat st;
	char p[4200];
	long n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (!enpu_is_sha256_hex(de->d_name))
			continue;
		snprintf(p, sizeof p, "%s/%s", top, de->d_name);
		if (lstat(p, &st) != 0 || (want_dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)))
			continue;
		if (migrate_one(top, de->d_name) != 0) {
			srv_log("warn", "cache: cannot move '%s' into its fan-out directory: %s", p,
				strerror(errno));
			continue;
		}
		if (++n == 1)
			srv_fault_point("migrate");   /* one moved, the rest still flat */
	}
	closedir(d);
	if (n) {
		srv_fsync_dir(top);
		srv_log("info", "cache: moved %ld entr%s of %s into fan-out directories", n,
			n == 1 ? "y" : "ies", top);
	}
	return n;
}

int cas_migrate(srv_cas *c)
{
	migrate_dir(c->ac, 0);
	migrate_dir(c->art, 1);
	return 0;
}

/* ---- the index from the disk ---------------------------------------------- */

/* The pass's work: fan-out directories top/<xx>, and for each name in
 * one that is a digest starting with xx, fn(c, sfd, name), sfd the
 * directory's fd (so that fn reaches the entry relative to it: no path
 * walked from the root). SCAN_THREADS threads take the directories in
 * turn: a warm cache is two cores' work of syscalls, a cold one a disk's
 * queue of reads (each entry takes the index's lock alone). */
#define SCAN_THREADS 4
typedef int (*scan_fn)(srv_cas *c, int sfd, const char *name);
typedef struct scan_dir {
	const char *top;
	char sub[3];
	scan_fn fn;
} scan_dir;
typedef struct scan_work {
	srv_cas *c;
	scan_dir *v;
	int n, cap;
	atomic_int next, rc;
} scan_work;

/* top's fan-out directories (two hex digits) onto w's list: 0, or -1. */
static int scan_add(scan_work *w, const char *top, scan_fn fn)
{
	DIR *d = opendir(top);
	struct dirent *de;
	int rc = 0;

	if (!d)
		return 0;
	while (rc == 0 && (de = readdir(d))) {
		if (strlen(de->d_name) != 2 || !strchr("0123456789abcdef", de->d_name[0]) ||
		    !strchr("0123456789abcdef", de->d_name[1]))
			continue;
		if (w->n == w->cap) {
			int ncap = w->cap ? w->cap * 2 : 256;
			scan_dir *nv = realloc(w->v, (size_t)ncap * sizeof *nv);
			if (!nv) {
				rc = -1;
				break;
			}
			w->v = nv;
			w->cap = ncap;
		}
		w->v[w->n].top = top;
		memcpy(w->v[w->n].sub, de->d_name, 3);
		w->v[w->n].fn = fn;
		w->n++;
	}
	closedir(d);
	return rc;
}

static int scan_one(srv_cas *c, const scan_dir *sd)
{
	char sub[4200];
	DIR *d;
	struct dirent *de;
	int rc = 0, fd;

	snprintf(sub, sizeof sub, "%s/%s", sd->top, sd->sub);
	fd = open(sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (!(d = fdopendir(fd))) {
		close(fd);
		return 0;
	}
	while (rc == 0 && (de = readdir(d)))
		if (enpu_is_sha256_hex(de->d_name) && !strncmp(de->d_name, sd->sub, 2))
			rc = sd->fn(c, dirfd(d), de->d_name);
	closedir(d);
	return rc;
}

static void *scan_main(void *arg)
{
	scan_work *w = arg;
	int i;

	while (atomic_load(&w->rc) == 0 && (i = atomic_fetch_add(&w->next, 1)) < w->n)
		if (scan_one(w->c, &w->v[i]) != 0)
			atomic_store(&w->rc, -1);
	return NULL;
}

/* Every directory of w on up to SCAN_THREADS threads (this one too, all
 * of it when none starts), then an empty list: 0, or -1 (out of memory). */
static int scan_run(scan_work *w)
{
	pthread_t th[SCAN_THREADS - 1];
	int k, n_th = 0, rc;

	atomic_store(&w->next, 0);
	for (k = 0; k < SCAN_THREADS - 1 && k < w->n - 1; k++)
		if (pthread_create(&th[n_th], NULL, scan_main, w) == 0)
			n_th++;
	scan_main(w);
	for (k = 0; k < n_th; k++)
		pthread_join(th[k], NULL);
	rc = atomic_load(&w->rc);
	w->n = 0;
	return rc;
}

/* The regular file name in dfd (at most max bytes), malloc'd with a NUL
 * after its *len bytes; NULL when it is unreadable, not a file or larger. */
static char *read_at(int dfd, const char *name, size_t max, size_t *len)
{
	struct stat st;
	int fd = cas_open_ro_at(dfd, name);
	char *p = NULL;
	size_t want, got = 0;
	ssize_t n;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0 ||
	    (uint64_t)st.st_size > max || !(p = malloc((size_t)st.st_size + 2)))
		goto out;
	want = (size_t)st.st_size;
	/* a byte more than its size: a file that grew meanwhile is not read whole */
	while (got < want + 1 && (n = read(fd, p + got, want + 1 - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		got += (size_t)n;
	}
	if (got != want) {
		free(p);
		p = NULL;
		goto out;
	}
	p[got] = '\0';
	*len = got;
out:
	close(fd);
	return p;
}

static int sync_blob(srv_cas *c, int sfd, const char *name)
{
	struct stat st;
	int rc = 0;

	LOCK(c);
	/* under the lock: an eviction unlinks under it too */
	if (!ix_seen(c->ix, IX_BLOB, name) && fstatat(sfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISREG(st.st_mode))
		rc = ix_blob_put(c->ix, name, (uint64_t)st.st_size, &st.st_mtim);
	UNLOCK(c);
	return rc;
}

/* Index artifact id from its manifest, read through dfd (its fan-out
 * directory) when dfd >= 0, else by path (srv_artifact_manifest). */
static void index_artifact(srv_cas *c, int dfd, const char *id);

static int sync_art(srv_cas *c, int sfd, const char *name)
{
	int seen;

	LOCK(c);
	seen = ix_seen(c->ix, IX_ARTIFACT, name);
	UNLOCK(c);
	if (!seen)
		index_artifact(c, sfd, name);
	return 0;
}

static int sync_ac(srv_cas *c, int sfd, const char *name)
{
	char id[65];
	struct timespec used;
	struct stat st;
	int seen, rc = 0;

	LOCK(c);
	seen = ix_seen(c->ix, IX_AC, name);
	UNLOCK(c);
	if (seen)
		return 0;
	if (!cas_ac_read_at(sfd, name, id, &used))
		return 0;
	LOCK(c);
	/* still there (a removal renames it out under the lock) */
	if (!ix_ac_get(c->ix, name, NULL) && fstatat(sfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		rc = ix_ac_put(c->ix, name, id, &used);
	UNLOCK(c);
	return rc;
}

int cas_index_sync(srv_cas *c)
{
	scan_work w;
	int rc, gone;

	memset(&w, 0, sizeof w);
	w.c = c;
	atomic_init(&w.next, 0);
	atomic_init(&w.rc, 0);

	LOCK(c);
	ix_mark(c->ix);
	UNLOCK(c);
	/* blobs (and the entries, which need nothing else) first: an
	 * artifact's last use is its newest blob's */
	rc = scan_add(&w, c->cas, sync_blob);
	if (rc == 0)
		rc = scan_add(&w, c->ac, sync_ac);
	if (rc == 0)
		rc = scan_run(&w);
	if (rc == 0)
		rc = scan_add(&w, c->art, sync_art);
	if (rc == 0)
		rc = scan_run(&w);
	free(w.v);
	if (rc != 0)
		return -1;   /* out of memory: the index keeps what it had */
	LOCK(c);
	gone = ix_sweep(c->ix);
	UNLOCK(c);
	if (gone)
		srv_log("warn", "cache: %d entr%s gone from the disk behind the daemon's back: "
			"forgotten", gone, gone == 1 ? "y" : "ies");
	return 0;
}

int srv_cas_resync(srv_cas *c)
{
	return cas_index_sync(c);
}

/* ---- artifacts in the index ------------------------------------------------ */

/* id's manifest through dfd (id/manifest.json in it): parsed into *m as
 * srv_artifact_manifest does (a manifest without a summary is bad). 0, or
 * -1 when it is unreadable or bad. */
static int manifest_at(int dfd, const char *id, enpu_manifest *m)
{
	char rel[80], *text;
	enpu_err e = ENPU_ERR_INIT;
	size_t len;
	int rc;

	snprintf(rel, sizeof rel, "%s/manifest.json", id);
	if (!(text = read_at(dfd, rel, ENPU_MANIFEST_MAX, &len)))
		return -1;
	rc = enpu_manifest_parse(text, len, "manifest.json", m, &e);
	free(text);
	if (rc == 0 && !m->has_summary) {
		enpu_manifest_free(m);
		rc = -1;
	}
	return rc;
}

static void index_artifact(srv_cas *c, int dfd, const char *id)
{
	enpu_manifest m;
	enpu_err e = ENPU_ERR_INIT;
	char dir[4300], (*files)[65] = NULL;
	struct stat st;
	uint64_t bytes = 0;
	int i, n = 0, bad, isdir;

	bad = dfd >= 0 ? manifest_at(dfd, id, &m) != 0
		       : srv_artifact_manifest(c, id, &m, NULL, &e) != 0;
	if (!bad && m.n > 0 && !(files = calloc((size_t)m.n, sizeof *files))) {
		enpu_manifest_free(&m);
		return;
	}
	for (i = 0; !bad && i < m.n; i++) {
		memcpy(files[i], m.files[i].sha256, 65);
		bytes += m.files[i].bytes;
	}
	if (!bad) {
		n = m.n;
		enpu_manifest_free(&m);
	}
	if (dfd < 0)
		srv_artifact_dir(c, id, dir, sizeof dir);
	LOCK(c);
	/* still there (a removal renames it out under the lock) */
	isdir = (dfd >= 0 ? fstatat(dfd, id, &st, AT_SYMLINK_NOFOLLOW) : lstat(dir, &st)) == 0 &&
		S_ISDIR(st.st_mode);
	if (isdir && !ix_art_has(c->ix, id))
		ix_art_put(c->ix, id, (const char (*)[65])files, n, bytes, bad);
	UNLOCK(c);
	free(files);
}

void srv_cas_index_artifact(srv_cas *c, const char *id)
{
	index_artifact(c, -1, id);
}

int srv_cas_unlink_artifact(srv_cas *c, const char *id, srv_paths *later, char *gone,
			    size_t cap)
{
	char dir[4300];
	struct stat st;
	int existed, inside;

	srv_artifact_dir(c, id, dir, sizeof dir);
	inside = cas_take_name(c, later, gone, cap);
	LOCK(c);
	existed = lstat(dir, &st) == 0;
	/* one rename takes the whole directory out of artifacts/ */
	if (existed && (!gone[0] || rename(dir, gone) != 0)) {
		snprintf(gone, cap, "%s", dir);   /* removed in place, then */
		inside = 0;
	}
	ix_art_del(c->ix, id);
	UNLOCK(c);
	if (!existed || inside)
		gone[0] = '\0';
	return existed;
}

void srv_cas_touch_artifact(srv_cas *c, const char *id)
{
	struct timespec t;

	cas_now(&t);
	LOCK(c);
	ix_art_touch(c->ix, id, &t);
	UNLOCK(c);
}

int srv_cas_has_artifact(srv_cas *c, const char *id)
{
	int has;

	LOCK(c);
	has = ix_art_has(c->ix, id);
	UNLOCK(c);
	return has;
}

int srv_cas_touch_artifact_recent(srv_cas *c, const char *id)
{
	struct timespec t;
	int recent;

	cas_now(&t);
	LOCK(c);
	recent = ix_art_touch_recent(c->ix, id, &t, CAS_TOUCH_DISK_S);
	UNLOCK(c);
	return recent;
}

/* fn's ids copied out under the lock into *out (malloc'd): the count, or
 * -1 out of memory. */
static int copy_ids(srv_cas *c, int (*fn)(const srv_index *, const char *, char (*)[65], int),
		    const char *arg, char (**out)[65])
{
	int cap = 16, n;

	*out = NULL;
	for (;;) {
		char (*v)[65] = malloc((size_t)cap * sizeof *v);
		if (!v)
			return -1;
		LOCK(c);
		n = fn(c->ix, arg, v, cap);
		UNLOCK(c);
		if (n <= cap) {
			*out = v;
			return n;
		}
		free(v);
		cap = n + 16;
	}
}

int srv_cas_blob_users(srv_cas *c, const char *digest, char (**out)[65])
{
	return copy_ids(c, ix_blob_users, digest, out);
}

static int lost_fn(const srv_index *ix, const char *arg, char (*out)[65], int cap)
{
	(void)arg;
	return ix_art_lost(ix, out, cap);
}

int srv_cas_lost_artifacts(srv_cas *c, char (**out)[65])
{
	return copy_ids(c, lost_fn, NULL, out);
}

int cas_ac_keys(srv_cas *c, const char *art, char (**out)[65])
{
	return copy_ids(c, ix_ac_keys_for, art, out);
}

int srv_cas_page(srv_cas *c, unsigned mask, const ix_cursor *from, int limit, ix_entry *out,
		 int *more)
{
	int n;

	LOCK(c);
	n = ix_page(c->ix, mask, from, limit, out, more);
	UNLOCK(c);
	return n;
}

/* cas_fs.c: file helpers of the cache and its users: random names,
 * directory fsync, recursive removal, hard link or copy. */
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
#include <sys/random.h>
#include "buf.h"
#include "srv.h"
#include "cas_int.h"

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

int srv_stat_same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
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

/* How deep srv_rmtree goes (a directory fd a level): nothing the daemon
 * makes is a tenth as deep. */
#define RMTREE_DEPTH 64

/* Remove name (in the directory dfd) and, when it is a directory,
 * everything under it: each entry by unlinkat() relative to its
 * directory's fd, told a directory from a file by the d_type readdir
 * gives (no stat, no path walked from the root), so the reclaimer's
 * work per file is one unlink. is_dir: 1 a directory, 0 not, -1 unknown. */
static void rmtree_at(int dfd, const char *name, int is_dir, int depth)
{
	DIR *d = NULL;
	struct dirent *de;
	int fd;

	if (is_dir <= 0) {
		if (unlinkat(dfd, name, 0) == 0 || (errno != EISDIR && errno != EPERM))
			return;
	}
	fd = depth < RMTREE_DEPTH ? openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
				  : -1;
	if (fd >= 0 && !(d = fdopendir(fd))) {
		close(fd);
		fd = -1;
	}
	if (fd >= 0) {
		while ((de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			rmtree_at(dirfd(d), de->d_name,
				  de->d_type == DT_DIR ? 1 : de->d_type == DT_UNKNOWN ? -1 : 0, depth + 1);
		}
		closedir(d);
	}
	unlinkat(dfd, name, AT_REMOVEDIR);
}

void srv_rmtree(const char *path)
{
	rmtree_at(AT_FDCWD, path, -1, 0);
}

/* Room for one path more in l: 0, or -1 out of memory (l unchanged). */
static int paths_room(srv_paths *l)
{
	if (l->n == l->cap) {
		int ncap = l->cap ? l->cap * 2 : 256;
		char **np = realloc(l->p, (size_t)ncap * sizeof *np);
		if (!np)
			return -1;
		l->p = np;
		l->cap = ncap;
	}
	return 0;
}

int srv_paths_add(srv_paths *l, const char *path)
{
	char *s;

	if (!l || paths_room(l) != 0 || !(s = strdup(path)))
		return -1;
	l->p[l->n++] = s;
	return 0;
}

static void paths_free(srv_paths *l)
{
	for (int i = 0; i < l->n; i++)
		free(l->p[i]);
	free(l->p);
	free(l->into);
	memset(l, 0, sizeof *l);
}

/* l's directory, if it has one, becomes one of its paths (removed here
 * when there is no room for it); the next take makes a new one. */
void cas_paths_seal(srv_paths *l)
{
	if (!l->into)
		return;
	if (paths_room(l) == 0) {
		l->p[l->n++] = l->into;
	} else {
		srv_rmtree(l->into);
		free(l->into);
	}
	l->into = NULL;
	l->k = 0;
}

typedef struct reclaim {
	srv_paths *l;
	atomic_int next;
	atomic_int *stop;   /* NULL, or: set, no path more is started */
	atomic_long *done;  /* NULL, or counts the paths removed */
} reclaim;

static void *reclaim_main(void *arg)
{
	reclaim *r = arg;
	int i;

	while ((!r->stop || !atomic_load(r->stop)) && (i = atomic_fetch_add(&r->next, 1)) < r->l->n) {
		srv_rmtree(r->l->p[i]);
		if (r->done)
			atomic_fetch_sub(r->done, 1);
	}
	return NULL;
}

static void paths_remove(srv_paths *l, atomic_int *stop, atomic_long *done)
{
	pthread_t th[SRV_RECLAIM_THREADS];
	reclaim r;
	int k, n_th = 0;

	cas_paths_seal(l);
	r.l = l;
	r.stop = stop;
	r.done = done;
	atomic_init(&r.next, 0);
	/* one thread per path at most; this one works too, all of it when
	 * none started */
	for (k = 0; k < SRV_RECLAIM_THREADS && k < l->n - 1; k++)
		if (pthread_create(&th[n_th], NULL, reclaim_main, &r) == 0)
			n_th++;
	reclaim_main(&r);
	for (k = 0; k < n_th; k++)
		pthread_join(th[k], NULL);
	paths_free(l);
}

void srv_paths_remove(srv_paths *l)
{
	if (l)
		paths_remove(l, NULL, NULL);
}

/* The reclaimer: takes all that waits, removes it (on up to
 * SRV_RECLAIM_THREADS threads), and again, until stopped. */
static void *reclaimer_main(void *arg)
{
	srv_cas *c = arg;
	srv_paths mine;

	pthread_mutex_lock(&c->rc_mu);
	for (;;) {
		while (!c->rc_q.n && !atomic_load(&c->rc_stop)) {
			pthread_cond_broadcast(&c->rc_idle);   /* rc_pending is 0 */
			pthread_cond_wait(&c->rc_more, &c->rc_mu);
		}
		if (atomic_load(&c->rc_stop))
			break;
		mine = c->rc_q;
		memset(&c->rc_q, 0, sizeof c->rc_q);
		pthread_mutex_unlock(&c->rc_mu);
		paths_remove(&mine, &c->rc_stop, &c->rc_pending);
		pthread_mutex_lock(&c->rc_mu);
	}
	pthread_cond_broadcast(&c->rc_idle);
	pthread_mutex_unlock(&c->rc_mu);
	return NULL;
}

void srv_cas_reclaim(srv_cas *c, srv_paths *l)
{
	int i, queued = 0;

	if (!l)
		return;
	cas_paths_seal(l);
	if (!l->n)
		return;
	pthread_mutex_lock(&c->rc_mu);
	if (!c->rc_started && !atomic_load(&c->rc_stop) &&
	    pthread_create(&c->rc_th, NULL, reclaimer_main, c) == 0)
		c->rc_started = 1;
	if (c->rc_started && !atomic_load(&c->rc_stop)) {
		/* moved over, no copy; what does not fit is removed here */
		for (i = 0; i < l->n && paths_room(&c->rc_q) == 0; i++) {
			c->rc_q.p[c->rc_q.n++] = l->p[i];
			l->p[i] = NULL;
			queued++;
		}
		atomic_fetch_add(&c->rc_pending, queued);
		pthread_cond_signal(&c->rc_more);
	}
	pthread_mutex_unlock(&c->rc_mu);
	if (queued == l->n) {
		paths_free(l);   /* its entries are the queue's now (NULL here) */
		return;
	}
	/* no thread, or no memory to queue the rest: removed now, in turn */
	memmove(l->p, l->p + queued, (size_t)(l->n - queued) * sizeof *l->p);
	l->n -= queued;
	paths_remove(l, NULL, NULL);
}

long srv_cas_reclaiming(srv_cas *c)
{
	return atomic_load(&c->rc_pending);
}

void srv_cas_reclaim_wait(srv_cas *c)
{
	pthread_mutex_lock(&c->rc_mu);
	/* rc_pending counts what is queued and what is being removed */
	while (!atomic_load(&c->rc_stop) && atomic_load(&c->rc_pending) > 0)
		pthread_cond_wait(&c->rc_idle, &c->rc_mu);
	pthread_mutex_unlock(&c->rc_mu);
}

void cas_reclaim_stop(srv_cas *c)
{
	pthread_mutex_lock(&c->rc_mu);
	atomic_store(&c->rc_stop, 1);
	pthread_cond_broadcast(&c->rc_more);
	pthread_mutex_unlock(&c->rc_mu);
	if (c->rc_started)
		pthread_join(c->rc_th, NULL);
	c->rc_started = 0;
	paths_free(&c->rc_q);   /* left in tmp/: the next start removes them */
}

int srv_link_or_copy(const char *from, const char *to, enpu_err *e)
{
	if (link(from, to) == 0)
		return 0;
	if (errno == EEXIST)
		return enpu_fail(e, ENPU_E_STORAGE, to, NULL, "'%s' already exists", to);
	if (enpu_copy_file(from, to, 0644, 1) != 0) {
		int err = errno;
		if (access(from, R_OK) != 0)   /* the source's fault, not the cache's */
			return enpu_fail(e, ENPU_E_IO, from, NULL, "cannot open '%s': %s", from,
					 strerror(err));
		return enpu_fail(e, ENPU_E_STORAGE, to, NULL, "cannot copy '%s' to '%s': %s", from,
				 to, strerror(err));
	}
	return 0;
}

int cas_clean_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		rmtree_at(dirfd(d), de->d_name,
			  de->d_type == DT_DIR ? 1 : de->d_type == DT_UNKNOWN ? -1 : 0, 1);
	}
	closedir(d);
	return 0;
}

int srv_mkdir_shard(const char *dir)
{
	char parent[4200], *slash;

	if (mkdir(dir, 0755) != 0)
		return errno == EEXIST ? 0 : -1;
	snprintf(parent, sizeof parent, "%s", dir);
	slash = strrchr(parent, '/');
	if (slash) {
		*slash = '\0';
		srv_fsync_dir(parent[0] ? parent : "/");
	}
	return 0;
}

void cas_now(struct timespec *t)
{
	clock_gettime(CLOCK_REALTIME, t);
}

int cas_open_ro_at(int dfd, const char *name)
{
	int fl = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK;
	int fd = openat(dfd, name, fl | O_NOATIME);

	if (fd < 0 && errno == EPERM)   /* not the file's owner */
		fd = openat(dfd, name, fl);
	return fd;
}

/* cas_ac.c: the action cache: a key (the hash of a compile's inputs)
 * names an artifact id, one small file each, ac/<2 hex>/<key>. A lookup
 * reads the file (the disk is the truth); the index keeps the entries'
 * last hits, their count and the reverse map artifact -> keys, so that
 * dropping an artifact finds its entries without reading the others. */
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

void cas_ac_path(const srv_cas *c, const char *key, char *out, size_t cap)
{
	snprintf(out, cap, "%s/%.2s/%s", c->ac, key, key);
}

/* An entry's artifact id and its last hit (mtime). 1, or 0 when it is no
 * entry (unreadable, not a file, not an id). */
int cas_ac_read(const char *p, char id[65], struct timespec *used)
{
	return cas_ac_read_at(AT_FDCWD, p, id, used);
}

int cas_ac_read_at(int dfd, const char *name, char id[65], struct timespec *used)
{
	char buf[80];
	struct stat st;
	ssize_t n;
	int fd = cas_open_ro_at(dfd, name);

	if (fd < 0)
		return 0;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n < 64)
		return 0;
	buf[64] = '\0';
	if (!enpu_is_sha256_hex(buf))
		return 0;
	memcpy(id, buf, 65);
	*used = st.st_mtim;
	return 1;
}

int srv_ac_get(srv_cas *c, const char *key, char id[65])
{
	char p[4200];
	struct timespec t;

	if (!enpu_is_sha256_hex(key))
		return 0;
	cas_ac_path(c, key, p, sizeof p);
	return cas_ac_read(p, id, &t);
}

int srv_ac_put(srv_cas *c, const char *key, const char *id, enpu_err *e)
{
	char p[4200], line[80];
	struct timespec t;
	int n;

	if (!enpu_is_sha256_hex(key) || !enpu_is_sha256_hex(id))
		return enpu_fail(e, ENPU_E_INTERNAL, key, NULL, "action-cache key and id are digests");
	snprintf(p, sizeof p, "%s/%.2s", c->ac, key);
	if (srv_mkdir_shard(p) != 0)
		return enpu_fail(e, ENPU_E_STORAGE, p, NULL, "cannot create '%s': %s", p,
				 strerror(errno));
	cas_ac_path(c, key, p, sizeof p);
	n = snprintf(line, sizeof line, "%s\n", id);
	if (srv_cas_write_atomic(c, p, line, (size_t)n, e) != 0)
		return -1;
	cas_now(&t);
	pthread_mutex_lock(&c->ix_mu);
	n = ix_ac_put(c->ix, key, id, &t);
	pthread_mutex_unlock(&c->ix_mu);
	if (n != 0)
		return enpu_fail(e, ENPU_E_NOMEM, key, NULL, "out of memory");
	return 0;
}

int srv_ac_key(const char *compiler, const char *backend, const char *target_json,
	       const char *spec_d, const char *weights_d, char key[65])
{
	enpu_buf b = ENPU_BUF_INIT;
	int r;

	r = enpu_buf_addf(&b, "eulernpu-ac-v2\n%s\n%s\n%s\n%s\n%s\n", compiler, backend,
			  target_json ? target_json : "null", spec_d, weights_d);
	if (r == 0)
		enpu_sha256_hex(b.data, b.len, key);
	enpu_buf_free(&b);
	return r;
}

void srv_ac_touch(srv_cas *c, const char *key)
{
	char p[4200];
	struct timespec t;

	if (!enpu_is_sha256_hex(key))
		return;
	cas_ac_path(c, key, p, sizeof p);
	utimensat(AT_FDCWD, p, NULL, 0);
	cas_now(&t);
	pthread_mutex_lock(&c->ix_mu);
	ix_ac_touch(c->ix, key, &t);
	pthread_mutex_unlock(&c->ix_mu);
}

/* Take key's entry out of ac/ and the index (srv_cas_take: into later,
 * or unlinked when later is NULL). 1 = it was there. */
static int ac_take(srv_cas *c, const char *key, srv_paths *later)
{
	char p[4200];
	int gone;

	if (!enpu_is_sha256_hex(key))
		return 0;
	cas_ac_path(c, key, p, sizeof p);
	pthread_mutex_lock(&c->ix_mu);
	gone = srv_cas_take(c, p, later);
	if (gone || errno == ENOENT)
		ix_ac_del(c->ix, key);
	pthread_mutex_unlock(&c->ix_mu);
	return gone;
}

int srv_ac_remove(srv_cas *c, const char *key)
{
	return ac_take(c, key, NULL);
}

int srv_ac_list(srv_cas *c, srv_ac_entry **out, int *n_out)
{
	ix_entry *v;
	ix_counts k;
	srv_ac_entry *r;
	int n, i, more;

	*out = NULL;
	*n_out = 0;
	ix_counts_get(c->ix, &k);
	/* a few more than counted: entries put meanwhile */
	v = malloc(((size_t)k.ac + 64) * sizeof *v);
	if (!v)
		return -1;
	n = srv_cas_page(c, 1u << IX_AC, NULL, (int)k.ac + 64, v, &more);
	r = malloc(((size_t)n + 1) * sizeof *r);
	if (!r) {
		free(v);
		return -1;
	}
	for (i = 0; i < n; i++) {
		memcpy(r[i].key, v[i].id, 65);
		memcpy(r[i].id, v[i].art, 65);
		r[i].mtime = v[i].used;
	}
	free(v);
	*out = r;
	*n_out = n;
	return 0;
}

int srv_ac_take_for(srv_cas *c, const char *id, srv_paths *later)
{
	char (*keys)[65];
	int n, i, taken = 0;

	if (id && !enpu_is_sha256_hex(id))
		return 0;
	n = cas_ac_keys(c, id, &keys);
	for (i = 0; i < n; i++)
		taken += ac_take(c, keys[i], later);
	free(keys);
	return taken;
}

int srv_ac_drop_for(srv_cas *c, const char *id)
{
	return srv_ac_take_for(c, id, NULL);
}

int srv_ac_count(srv_cas *c)
{
	ix_counts k;

	ix_counts_get(c->ix, &k);
	return (int)k.ac;
}

/* cas_ac.c: the action cache: a key (the hash of a compile's inputs)
 * names an artifact id, one small file each under ac/. */
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

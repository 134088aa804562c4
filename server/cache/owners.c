/* owners.c: who uploaded each blob, so that a blob is readable only by
 * those who proved they hold its bytes (docs/access.md). One small text
 * record per blob, owners/<2 hex>/<sha256>, one identity a line, at most
 * SRV_OWNERS_MAX of them (the oldest goes first). A record is rewritten
 * whole through tmp/ and renamed (never half-written); one mutex orders
 * every change in this process (one daemon per cache directory). A record
 * is written only while its blob is there and removed with it (eviction,
 * integrity drops, removal); gc removes records whose blob is gone. */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cas.h"
#include "buf.h"
#include "digest.h"

static pthread_mutex_t owners_mu = PTHREAD_MUTEX_INITIALIZER;

#define REC_MAX (SRV_OWNERS_MAX * 64)

static void rec_path(srv_cas *c, const char *digest, char *out, size_t cap, int dir_only)
{
	if (dir_only)
		snprintf(out, cap, "%s/owners/%.2s", srv_cas_root(c), digest);
	else
		snprintf(out, cap, "%s/owners/%.2s/%s", srv_cas_root(c), digest, digest);
}

/* A name fit for a record: printable, no newline, not empty. */
static int name_ok(const char *name)
{
	size_t i, n = name ? strlen(name) : 0;

	if (n == 0 || n > 63)
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f)
			return 0;
	return 1;
}

/* The record's text into b (empty when there is none). */
static void rec_read(srv_cas *c, const char *digest, enpu_buf *b)
{
	char p[4400];
	FILE *f;
	char tmp[1024];
	size_t n;

	rec_path(c, digest, p, sizeof p, 0);
	f = fopen(p, "re");
	if (!f)
		return;
	while (b->len < REC_MAX && (n = fread(tmp, 1, sizeof tmp, f)) > 0)
		enpu_buf_add(b, tmp, n);
	fclose(f);
}

/* 1 when line `name` is in text [s, s+n). */
static int rec_has(const char *s, size_t n, const char *name)
{
	size_t k = strlen(name);
	const char *end = s + n;

	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *le = nl ? nl : end;

		if ((size_t)(le - s) == k && !memcmp(s, name, k))
			return 1;
		s = nl ? nl + 1 : end;
	}
	return 0;
}

int srv_owners_has(srv_cas *c, const char *digest, const char *name)
{
	enpu_buf b = ENPU_BUF_INIT;
	int has;

	if (!enpu_is_sha256_hex(digest) || !name_ok(name))
		return 0;
	pthread_mutex_lock(&owners_mu);
	rec_read(c, digest, &b);
	pthread_mutex_unlock(&owners_mu);
	has = b.data && rec_has(b.data, b.len, name);
	enpu_buf_free(&b);
	return has;
}

int srv_owners_add(srv_cas *c, const char *digest, const char *name, enpu_err *e)
{
	enpu_buf old = ENPU_BUF_INIT, neu = ENPU_BUF_INIT;
	char p[4400];
	const char *s, *end;
	int lines = 0, rc = 0;

	if (!enpu_is_sha256_hex(digest) || !name_ok(name))
		return 0;   /* nobody: nothing to record */
	pthread_mutex_lock(&owners_mu);
	/* only while the blob is there: a record never outlives its blob for
	 * long (an eviction removes it under this lock after the blob) */
	if (!srv_cas_has(c, digest, NULL))
		goto out;
	rec_read(c, digest, &old);
	if (old.data && rec_has(old.data, old.len, name))
		goto out;
	s = old.data ? old.data : "";
	end = s + old.len;
	for (const char *q = s; q < end; q++)
		lines += *q == '\n';
	/* bounded: drop the oldest lines to make room */
	while (lines >= SRV_OWNERS_MAX && s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		s = nl ? nl + 1 : end;
		lines--;
	}
	if (enpu_buf_add(&neu, s, (size_t)(end - s)) != 0 || enpu_buf_addf(&neu, "%s\n", name) != 0) {
		rc = enpu_fail(e, ENPU_E_NOMEM, digest, NULL, "out of memory");
		goto out;
	}
	rec_path(c, digest, p, sizeof p, 1);
	if (enpu_mkdirs(p, 0755, e) != 0) {
		rc = -1;
		goto out;
	}
	rec_path(c, digest, p, sizeof p, 0);
	rc = srv_cas_write_atomic(c, p, neu.data, neu.len, e);
out:
	pthread_mutex_unlock(&owners_mu);
	enpu_buf_free(&old);
	enpu_buf_free(&neu);
	return rc;
}

void srv_owners_drop(srv_cas *c, const char *digest, srv_paths *later)
{
	char p[4400];

	if (!enpu_is_sha256_hex(digest))
		return;
	rec_path(c, digest, p, sizeof p, 0);
	pthread_mutex_lock(&owners_mu);
	/* a rename, not the last unlink of a file (which frees its block
	 * and, with -o discard, waits for the disk) */
	srv_cas_take(c, p, later);
	pthread_mutex_unlock(&owners_mu);
}

int srv_owners_prune(srv_cas *c)
{
	char top[4200], sub[4400];
	DIR *d, *sd;
	struct dirent *de, *se;
	int n = 0;

	snprintf(top, sizeof top, "%s/owners", srv_cas_root(c));
	d = opendir(top);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (strlen(de->d_name) != 2 || de->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof sub, "%s/%s", top, de->d_name);
		sd = opendir(sub);
		if (!sd)
			continue;
		while ((se = readdir(sd))) {
			if (!enpu_is_sha256_hex(se->d_name))
				continue;
			pthread_mutex_lock(&owners_mu);
			if (!srv_cas_has(c, se->d_name, NULL) && unlinkat(dirfd(sd), se->d_name, 0) == 0)
				n++;
			pthread_mutex_unlock(&owners_mu);
		}
		closedir(sd);
	}
	closedir(d);
	return n;
}

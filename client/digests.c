/* digests.c: the sha256 of a local file, remembered across runs. A file of
 * DIGEST_MIN bytes or more, once hashed, is recorded in
 * $XDG_CACHE_HOME/eulernpu-client/digests (else ~/.cache/...) with its
 * device, inode, size, modification and change times (nanoseconds); while
 * all of them are unchanged its digest is read back instead of computed,
 * as git's index and ccache do. Any write to the file moves its change
 * time, which no user tool can set back. A file that changed while it was
 * hashed, or whose times are in the last two seconds, is not recorded.
 * EULERNPU_DIGEST_CACHE=off turns the record off (every file is hashed).
 * The record keeps the DIGEST_KEEP newest files; it is rewritten whole
 * (temp + rename), so a concurrent client at worst loses an entry. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "buf.h"
#include "cli.h"
#include "digest.h"

#define DIGEST_MIN (1u << 20)
#define DIGEST_KEEP 512
#define LINE_MAX_LEN (PATH_MAX + 256)

typedef struct rec {
	unsigned long long dev, ino, size;
	long long mt_s, mt_ns, ct_s, ct_ns;
	char sha[65];
	char path[PATH_MAX];
} rec;

static int off(void)
{
	const char *v = getenv("EULERNPU_DIGEST_CACHE");

	return v && (!strcmp(v, "off") || !strcmp(v, "0") || !strcmp(v, "no"));
}

static int record_path(char *out, size_t cap)
{
	const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");

	if (x && x[0] == '/')
		return (size_t)snprintf(out, cap, "%s/eulernpu-client/digests", x) < cap ? 0 : -1;
	if (home && home[0] == '/')
		return (size_t)snprintf(out, cap, "%s/.cache/eulernpu-client/digests", home) < cap ? 0 : -1;
	return -1;
}

static int same(const rec *r, const struct stat *st)
{
	return r->dev == (unsigned long long)st->st_dev && r->ino == (unsigned long long)st->st_ino &&
	       r->size == (unsigned long long)st->st_size && r->mt_s == st->st_mtim.tv_sec &&
	       r->mt_ns == st->st_mtim.tv_nsec && r->ct_s == st->st_ctim.tv_sec &&
	       r->ct_ns == st->st_ctim.tv_nsec;
}

/* The record's entries (at most DIGEST_KEEP), newest last; n of them. */
static rec *load(const char *file, int *n)
{
	FILE *f = fopen(file, "r");
	rec *v = calloc(DIGEST_KEEP + 1, sizeof *v);
	char line[LINE_MAX_LEN];

	*n = 0;
	if (!v) {
		if (f)
			fclose(f);
		return NULL;
	}
	while (f && fgets(line, sizeof line, f)) {
		rec r;
		int used = 0;
		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%llu %llu %llu %lld %lld %lld %lld %64s %n", &r.dev, &r.ino, &r.size,
			   &r.mt_s, &r.mt_ns, &r.ct_s, &r.ct_ns, r.sha, &used) != 8 || used == 0 ||
		    !enpu_is_sha256_hex(r.sha) || line[used] != '/' ||
		    strlen(line + used) >= sizeof r.path)
			continue;   /* a damaged line is only a lost entry */
		snprintf(r.path, sizeof r.path, "%s", line + used);
		if (*n == DIGEST_KEEP) {
			memmove(v, v + 1, sizeof *v * (DIGEST_KEEP - 1));
			(*n)--;
		}
		v[(*n)++] = r;
	}
	if (f)
		fclose(f);
	return v;
}

static void save(const char *file, const rec *v, int n)
{
	char dir[PATH_MAX], tmp[PATH_MAX + 32];
	char *slash;
	FILE *f;
	int fd;

	snprintf(dir, sizeof dir, "%s", file);
	if ((slash = strrchr(dir, '/')))
		*slash = '\0';
	if (mkdir(dir, 0700) != 0 && errno == ENOENT && (slash = strrchr(dir, '/'))) {
		*slash = '\0';   /* $XDG_CACHE_HOME or ~/.cache itself missing */
		if (mkdir(dir, 0700) == 0 || errno == EEXIST)
			*slash = '/';
	}
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return;
	snprintf(tmp, sizeof tmp, "%s.%ld.tmp", file, (long)getpid());
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0)
		return;
	if (!(f = fdopen(fd, "w"))) {
		close(fd);
		unlink(tmp);
		return;
	}
	for (int i = 0; i < n; i++)
		fprintf(f, "%llu %llu %llu %lld %lld %lld %lld %s %s\n", v[i].dev, v[i].ino, v[i].size,
			v[i].mt_s, v[i].mt_ns, v[i].ct_s, v[i].ct_ns, v[i].sha, v[i].path);
	if (fclose(f) != 0 || rename(tmp, file) != 0)
		unlink(tmp);
}

int cli_sha256_file(const char *path, char hex[65], enpu_err *e)
{
	char file[PATH_MAX], real[PATH_MAX];
	struct stat st, st2;
	rec *v;
	int n, i;
	time_t now = time(NULL);

	if (off() || stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < DIGEST_MIN ||
	    record_path(file, sizeof file) != 0 || !realpath(path, real))
		return enpu_sha256_file(path, hex, e);
	if (!(v = load(file, &n)))
		return enpu_sha256_file(path, hex, e);
	for (i = n - 1; i >= 0; i--)
		if (!strcmp(v[i].path, real) && same(&v[i], &st)) {
			memcpy(hex, v[i].sha, 65);
			free(v);
			return 0;
		}
	if (enpu_sha256_file(path, hex, e) != 0) {
		free(v);
		return -1;
	}
	/* recorded only when it did not change while it was read, and not
	 * written within the last two seconds (its times could still move
	 * within their granularity) */
	if (stat(path, &st2) == 0 && enpu_stat_unchanged(&st, &st2) && st.st_ctim.tv_sec + 2 < now &&
	    st.st_mtim.tv_sec + 2 < now) {
		rec r = {(unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
			 (unsigned long long)st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
			 st.st_ctim.tv_sec, st.st_ctim.tv_nsec, "", ""};
		memcpy(r.sha, hex, 65);
		snprintf(r.path, sizeof r.path, "%s", real);
		/* this path's older entry goes; the new one is the newest */
		int m = 0;
		for (i = 0; i < n; i++)
			if (strcmp(v[i].path, real) != 0)
				v[m++] = v[i];
		if (m == DIGEST_KEEP)
			memmove(v, v + 1, sizeof *v * (size_t)--m);
		v[m++] = r;
		save(file, v, m);
	}
	free(v);
	return 0;
}

int cli_sha256_vouch(const char *path, const char *hex, char *out, size_t cap)
{
	char file[PATH_MAX], real[PATH_MAX];
	struct stat st;
	int n, ok = 0;
	rec *v;

	if (off() || stat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
	    record_path(file, sizeof file) != 0 || !realpath(path, real) || !(v = load(file, &n)))
		return -1;
	for (int i = n - 1; i >= 0 && !ok; i--)
		ok = !strcmp(v[i].path, real) && same(&v[i], &st) && !strcmp(v[i].sha, hex);
	free(v);
	if (!ok || (size_t)snprintf(out, cap, "%llu %llu %llu %lld.%09ld %lld.%09ld",
				    (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
				    (unsigned long long)st.st_size, (long long)st.st_mtim.tv_sec,
				    st.st_mtim.tv_nsec, (long long)st.st_ctim.tv_sec,
				    st.st_ctim.tv_nsec) >= cap)
		return -1;
	return 0;
}

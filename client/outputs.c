/* outputs.c: how the client writes what the user asked for, so that an
 * output never destroys data: --out / --report / --junit must not name the
 * same file as each other or as an input (paths compared resolved), files
 * are created beside their destination under a temporary name and renamed
 * into place, and `compile --out DIR` builds the whole directory beside DIR
 * and swaps it in, replacing an existing DIR only when it is an empty
 * directory or an eulernpu artifact. New files and directories get the
 * modes open(2) and mkdir(2) give them: the user's umask decides. A
 * finished job's result and report download here for `run` and `jobs
 * result` alike. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "api.h"
#include "buf.h"
#include "cli.h"
#include "digest.h"
#include "rest.h"
#include "wire.h"

#define MANIFEST "manifest.json"
#define DISK_FIX "check the path's permissions and the free space on your disk, or choose " \
	"another output path"

/* path resolved: realpath of an existing one, else realpath of its
 * parent plus its base name (a new file). 0, or -1 when the parent does
 * not resolve either (then no clash can be decided: the write will say). */
static int resolve(const char *path, char *out)
{
	char d[PATH_MAX], b[PATH_MAX], rd[PATH_MAX];

	if (realpath(path, out))
		return 0;
	if (strlen(path) >= PATH_MAX)
		return -1;
	snprintf(d, sizeof d, "%s", path);
	snprintf(b, sizeof b, "%s", path);
	if (!realpath(dirname(d), rd))
		return -1;
	if ((size_t)snprintf(out, PATH_MAX, "%s/%s", strcmp(rd, "/") ? rd : "", basename(b)) >=
	    PATH_MAX)
		return -1;
	return 0;
}

int cli_outputs_check(const char *verb, const cli_path *outs, int n_out, unsigned dirs,
		      const cli_path *ins, int n_in, enpu_err *e)
{
	static char ro[8][PATH_MAX], ri[8][PATH_MAX];

	if (n_out > 8 || n_in > 8)
		return enpu_fail(e, ENPU_E_INTERNAL, verb, NULL, "too many paths to check");
	for (int i = 0; i < n_out; i++) {
		struct stat st;

		if (!outs[i].path)
			continue;
		if (!(dirs >> i & 1) && stat(outs[i].path, &st) == 0 && S_ISDIR(st.st_mode))
			return cli_usage(e, verb, "'%s' names the directory '%s': give a file name "
					 "in it", outs[i].flag, outs[i].path);
		if (resolve(outs[i].path, ro[i]) < 0)
			continue;
		for (int j = 0; j < i; j++)
			if (outs[j].path && strcmp(ro[i], ro[j]) == 0)
				return cli_usage(e, verb, "'%s' and '%s' name the same file '%s': "
						 "one would overwrite the other", outs[j].flag,
						 outs[i].flag, outs[i].path);
		for (int j = 0; j < n_in; j++)
			if (ins[j].path && resolve(ins[j].path, ri[j]) == 0 &&
			    strcmp(ro[i], ri[j]) == 0)
				return cli_usage(e, verb, "'%s' names the input '%s' of '%s': writing "
						 "it would destroy the input", outs[i].flag,
						 outs[i].path, ins[j].flag);
	}
	return 0;
}

/* "DIR/.BASE.WHAT.XXXXXX" for path into out (X random); 0 or -1. */
static int sibling(const char *path, const char *what, char *out, size_t cap)
{
	static unsigned long seq;
	char d[PATH_MAX], b[PATH_MAX];
	struct timespec ts;

	if (strlen(path) >= PATH_MAX)
		return -1;
	snprintf(d, sizeof d, "%s", path);
	snprintf(b, sizeof b, "%s", path);
	clock_gettime(CLOCK_REALTIME, &ts);
	seq = seq * 6364136223846793005ul + (unsigned long)ts.tv_nsec + (unsigned long)getpid();
	return (size_t)snprintf(out, cap, "%s/.%s.%s.%06lx", dirname(d), basename(b), what,
				(seq >> 20) & 0xfffffful) >= cap ? -1 : 0;
}

/* ENPU_E_IO for a local output: where the path, the fix the user's disk. */
static int local_fail(enpu_err *e, int err, const char *path, const char *what)
{
	enpu_fail(e, ENPU_E_IO, path, DISK_FIX, "cannot %s '%s': %s", what, path, strerror(err));
	e->sys_errno = err;
	return -1;
}

int cli_tmp_open(const char *dest, char *tmp, size_t cap, enpu_err *e)
{
	for (int tries = 0; tries < 100; tries++) {
		int fd;

		if (sibling(dest, "tmp", tmp, cap) < 0)
			return enpu_fail(e, ENPU_E_IO, dest, NULL, "path too long: '%s'", dest);
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			return local_fail(e, errno, dest, "create a file next to");
	}
	return local_fail(e, EEXIST, dest, "create a file next to");
}

int cli_tmp_commit(int fd, const char *tmp, const char *dest, enpu_err *e)
{
	int r = fsync(fd);
	int err = errno;

	if (close(fd) < 0 && r == 0) {
		r = -1;
		err = errno;
	}
	if (r == 0 && rename(tmp, dest) == 0)
		return 0;
	if (r == 0)
		err = errno;
	unlink(tmp);
	return local_fail(e, err, dest, r ? "write" : "rename into");
}

int cli_local_io(enpu_err *e, const char *path)
{
	if (e->code == ENPU_E_IO) {
		int err = e->sys_errno;
		char msg[sizeof e->message];

		snprintf(msg, sizeof msg, "%s", e->message);
		enpu_fail(e, ENPU_E_IO, path, DISK_FIX, "cannot write '%s': %s", path, msg);
		e->sys_errno = err;
	}
	return -1;
}

int cli_write_output(const char *path, const void *p, size_t n, enpu_err *e)
{
	char tmp[PATH_MAX];
	int fd = cli_tmp_open(path, tmp, sizeof tmp, e);

	if (fd < 0)
		return -1;
	if (enpu_write_all(fd, p, n) != 0) {
		int err = errno;

		close(fd);
		unlink(tmp);
		return local_fail(e, err, path, "write");
	}
	return cli_tmp_commit(fd, tmp, path, e);
}

/* ---- a whole directory: compile --out -------------------------------------- */

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	return remove(p) < 0 && errno != ENOENT ? -1 : 0;
}

static void rm_tree(const char *path)
{
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* 1 when dir is an empty directory, 0 when not, -1 when unreadable. */
static int dir_empty(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int empty = 1;

	if (!d)
		return -1;
	while (empty && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			empty = 0;
	closedir(d);
	return empty;
}

/* 1 when dir holds a manifest.json that enpu_manifest_parse accepts. */
static int is_artifact(const char *dir)
{
	char mp[PATH_MAX];
	enpu_buf man = ENPU_BUF_INIT;
	enpu_manifest m;
	enpu_err e = ENPU_ERR_INIT;
	int ok;

	memset(&m, 0, sizeof m);
	if ((size_t)snprintf(mp, sizeof mp, "%s/%s", dir, MANIFEST) >= sizeof mp)
		return 0;
	ok = enpu_read_file(mp, ENPU_MANIFEST_MAX + 1, &man, &e) == 0 &&
	     enpu_manifest_parse(man.data, man.len, mp, &m, &e) == 0;
	enpu_manifest_free(&m);
	enpu_buf_free(&man);
	return ok;
}

/* DIR absent, an empty directory, or (artifact set) an artifact; then
 * its temporary sibling into tmp. */
static int outdir_begin(const char *verb, const char *dir, int artifact, char *tmp, size_t cap,
			enpu_err *e)
{
	struct stat st;

	if (lstat(dir, &st) == 0) {
		if (!S_ISDIR(st.st_mode))   /* a symbolic link too: it would be replaced */
			return cli_usage(e, verb, "--out '%s' exists and is not a directory%s: "
					 "remove it or choose another --out", dir,
					 S_ISLNK(st.st_mode) ? " (a symbolic link)" : "");
		if (dir_empty(dir) != 1 && !artifact)
			return cli_usage(e, verb, "--out '%s' exists and is not empty: give a new "
					 "or empty directory, or remove '%s' first", dir, dir);
		if (dir_empty(dir) != 1 && !is_artifact(dir))
			return cli_usage(e, verb, "--out '%s' holds files that are not an eulernpu "
					 "artifact (no valid %s): give a new or empty directory, "
					 "or remove '%s' first", dir, MANIFEST, dir);
	} else if (errno != ENOENT) {
		return local_fail(e, errno, dir, "look at");
	}
	for (int tries = 0; tries < 100; tries++) {
		if (sibling(dir, "tmp", tmp, cap) < 0)
			return enpu_fail(e, ENPU_E_IO, dir, NULL, "path too long: '%s'", dir);
		if (mkdir(tmp, 0777) == 0)
			return 0;
		if (errno != EEXIST)
			return local_fail(e, errno, dir, "create a directory next to");
	}
	return local_fail(e, EEXIST, dir, "create a directory next to");
}

int cli_outdir_begin(const char *verb, const char *dir, char *tmp, size_t cap, enpu_err *e)
{
	return outdir_begin(verb, dir, 1, tmp, cap, e);
}

int cli_outdir_begin_new(const char *verb, const char *dir, char *tmp, size_t cap, enpu_err *e)
{
	return outdir_begin(verb, dir, 0, tmp, cap, e);
}

int cli_outdir_commit_new(const char *verb, const char *tmp, const char *dir, enpu_err *e)
{
	int err;

	/* rename(2) takes the place of an absent or empty directory, never
	 * of one with files in it */
	if (rename(tmp, dir) == 0)
		return 0;
	err = errno;
	rm_tree(tmp);
	if (err == ENOTEMPTY || err == EEXIST || err == ENOTDIR)
		return cli_usage(e, verb, "--out '%s' gained files while the command ran: it is "
				 "left as it is; give a new or empty directory", dir);
	return local_fail(e, err, dir, "rename into");
}

void cli_outdir_abort(const char *tmp)
{
	rm_tree(tmp);
}

int cli_outdir_commit(const char *tmp, const char *dir, enpu_err *e)
{
	char old[PATH_MAX];
	struct stat st;

	/* a new DIR, or an empty one (rename(2) replaces an empty directory) */
	if (rename(tmp, dir) == 0)
		return 0;
	if ((errno != ENOTEMPTY && errno != EEXIST) || lstat(dir, &st) < 0 ||
	    !S_ISDIR(st.st_mode)) {
		local_fail(e, errno, dir, "rename into");
		rm_tree(tmp);
		return -1;
	}
	/* an artifact (checked by cli_outdir_begin): set the old one aside,
	 * move the new one in, then remove the old. A crash between the two
	 * renames leaves no DIR but both complete copies beside it: the old
	 * as .DIR.old.*, the new as .DIR.tmp.*; after the second, only the
	 * old copy as litter. DIR itself is never half-written. */
	if (sibling(dir, "old", old, sizeof old) < 0 || rename(dir, old) < 0) {
		local_fail(e, errno, dir, "move aside the old");
		rm_tree(tmp);
		return -1;
	}
	if (rename(tmp, dir) < 0) {
		local_fail(e, errno, dir, "rename into");
		rename(old, dir);
		rm_tree(tmp);
		return -1;
	}
	rm_tree(old);
	return 0;
}

/* ---- a finished job's files: run --out, jobs result --out ------------------ */

int cli_job_fetch(cli_conn *c, const char *jid, const enpu_wire_job *wj, const char *out,
		  const char *report, enpu_err *e)
{
	char path[256];
	const char *rd = wj->result;

	snprintf(path, sizeof path, "%s/%s%s", API_JOBS, jid, API_JOB_RESULT);
	if (cli_http_download(c, path, out, enpu_is_sha256_hex(rd) ? rd : NULL, 0, e) < 0)
		return -1;
	if (!report)
		return 0;
	if (!enpu_is_sha256_hex(wj->report))
		return enpu_fail(e, ENPU_E_SERVER, jid, "upgrade the server, or run without "
				 "--report", "job '%s' has no '%s' digest", jid, F_REPORT);
	snprintf(path, sizeof path, "%s/%s%s", API_JOBS, jid, API_JOB_REPORT);
	return cli_http_download(c, path, report, wj->report, 0, e);
}

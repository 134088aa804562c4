/* fuzz_tmp.h: the private work directory of a fuzz target, removed at exit:
 * under ENPU_FUZZ_TMP (run.sh's, removed after even if a fuzzer crashed),
 * else /dev/shm (no disk writes), else $TMPDIR or /tmp. Header-only: each
 * target is one translation unit. */
#ifndef FUZZ_TMP_H
#define FUZZ_TMP_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char fuzz_dir[4096];

static int fuzz_rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st, (void)flag, (void)f;
	return remove(p);
}

static void fuzz_rm_dir(void)
{
	if (fuzz_dir[0])
		nftw(fuzz_dir, fuzz_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The directory, made on the first call; aborts when it cannot be made. */
static const char *fuzz_tmpdir(void)
{
	const char *base = getenv("ENPU_FUZZ_TMP");

	if (fuzz_dir[0])
		return fuzz_dir;
	if (!base)
		base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
	snprintf(fuzz_dir, sizeof fuzz_dir, "%s/enpu-fuzz-XXXXXX", base ? base : "/tmp");
	if (!mkdtemp(fuzz_dir)) {
		perror(fuzz_dir);
		abort();
	}
	atexit(fuzz_rm_dir);
	return fuzz_dir;
}

#endif

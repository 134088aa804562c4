/* test_cli_digests.c: the client's record of file digests (client/
 * digests.c): a recorded file's digest is read back while its inode, size
 * and times are those recorded; any change to the file is hashed again;
 * EULERNPU_DIGEST_CACHE=off ignores the record; a damaged record is
 * ignored line by line. */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utime.h>
#include "cli.h"
#include "digest.h"

static char dir[64], file[192], rec[160];
static const char fake[] = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

static void setup(void)
{
	strcpy(dir, "/tmp/enpu_digests_XXXXXX");
	cr_assert(mkdtemp(dir));
	snprintf(file, sizeof file, "%s/w.bin", dir);
	snprintf(rec, sizeof rec, "%s/eulernpu-client/digests", dir);
	setenv("XDG_CACHE_HOME", dir, 1);
	unsetenv("EULERNPU_DIGEST_CACHE");
	FILE *f = fopen(file, "w");
	cr_assert(f);
	for (int i = 0; i < (2 << 20) / 16; i++)
		fputs("0123456789abcdef", f);
	fclose(f);
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(digests, .init = setup, .fini = teardown);

/* A record line for file as it is now, with digest d (and extra junk lines). */
static void write_record(const char *d)
{
	struct stat st;
	char real[PATH_MAX], sub[160];
	FILE *f;

	cr_assert_eq(stat(file, &st), 0);
	cr_assert(realpath(file, real));
	snprintf(sub, sizeof sub, "%s/eulernpu-client", dir);
	mkdir(sub, 0700);
	cr_assert((f = fopen(rec, "w")));
	fputs("garbage line\n1 2 3 4 5 6 7 nothex /x\n", f);
	fprintf(f, "%llu %llu %llu %lld %lld %lld %lld %s %s\n", (unsigned long long)st.st_dev,
		(unsigned long long)st.st_ino, (unsigned long long)st.st_size,
		(long long)st.st_mtim.tv_sec, (long long)st.st_mtim.tv_nsec,
		(long long)st.st_ctim.tv_sec, (long long)st.st_ctim.tv_nsec, d, real);
	fclose(f);
}

Test(digests, a_recorded_unchanged_file_is_read_back_a_changed_one_hashed)
{
	char got[65], want[65];
	enpu_err e = ENPU_ERR_INIT;
	FILE *f;

	cr_assert_eq(enpu_sha256_file(file, want, &e), 0);
	cr_assert_eq(cli_sha256_file(file, got, &e), 0);
	cr_assert_str_eq(got, want);              /* no record yet: hashed */
	write_record(fake);
	cr_assert_eq(cli_sha256_file(file, got, &e), 0);
	cr_assert_str_eq(got, fake, "the record was not used");
	setenv("EULERNPU_DIGEST_CACHE", "off", 1);
	cr_assert_eq(cli_sha256_file(file, got, &e), 0);
	cr_assert_str_eq(got, want, "EULERNPU_DIGEST_CACHE=off still used the record");
	unsetenv("EULERNPU_DIGEST_CACHE");
	cr_assert((f = fopen(file, "a")));        /* any write moves the times */
	fputs("x", f);
	fclose(f);
	cr_assert_eq(enpu_sha256_file(file, want, &e), 0);
	cr_assert_eq(cli_sha256_file(file, got, &e), 0);
	cr_assert_str_eq(got, want, "a changed file took the recorded digest");
}

/* A small file is always hashed, the record aside. */
Test(digests, small_files_are_always_hashed)
{
	char small[160], got[65], want[65];
	enpu_err e = ENPU_ERR_INIT;

	snprintf(small, sizeof small, "%s/s.bin", dir);
	FILE *f = fopen(small, "w");
	cr_assert(f);
	fputs("tiny", f);
	fclose(f);
	snprintf(file, sizeof file, "%s", small);
	write_record(fake);
	cr_assert_eq(enpu_sha256_file(small, want, &e), 0);
	cr_assert_eq(cli_sha256_file(small, got, &e), 0);
	cr_assert_str_eq(got, want);
}

/* The identity sent with a named file (H_LOCAL_STAT): given only for the
 * digest the record holds for the file as it is now. */
Test(digests, the_identity_vouched_for_is_the_recorded_one)
{
	char got[200], want[200];
	struct stat st;
	FILE *f;

	cr_assert_eq(cli_sha256_vouch(file, fake, got, sizeof got), -1, "no record: nothing vouched");
	write_record(fake);
	cr_assert_eq(stat(file, &st), 0);
	snprintf(want, sizeof want, "%llu %llu %llu %lld.%09ld %lld.%09ld",
		 (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
		 (unsigned long long)st.st_size, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
		 (long long)st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
	cr_assert_eq(cli_sha256_vouch(file, fake, got, sizeof got), 0);
	cr_assert_str_eq(got, want);
	cr_assert_eq(cli_sha256_vouch(file, fake, got, 20), -1, "a short buffer: nothing");
	cr_assert_eq(cli_sha256_vouch(file, "11" "2233445566778899aabbccddeeff00112233445566778899aabbccddeeff00",
				      got, sizeof got), -1, "another digest: nothing");
	setenv("EULERNPU_DIGEST_CACHE", "off", 1);
	cr_assert_eq(cli_sha256_vouch(file, fake, got, sizeof got), -1, "the record off: nothing");
	unsetenv("EULERNPU_DIGEST_CACHE");
	cr_assert((f = fopen(file, "a")));
	fputs("x", f);
	fclose(f);
	cr_assert_eq(cli_sha256_vouch(file, fake, got, sizeof got), -1, "the file changed: nothing");
}

/* The record's directory is made with its parent ($XDG_CACHE_HOME or
 * ~/.cache) when that is missing too. */
Test(digests, the_record_is_kept_where_no_cache_directory_was)
{
	char xdg[128], r[192], got[65];
	enpu_err e = ENPU_ERR_INIT;
	struct stat st;

	snprintf(xdg, sizeof xdg, "%s/fresh", dir);
	setenv("XDG_CACHE_HOME", xdg, 1);
	cr_assert_eq(utime(file, &(struct utimbuf){0, 0}), 0);
	sleep(3);   /* the record takes files whose change time is 2 s old */
	cr_assert_eq(cli_sha256_file(file, got, &e), 0);
	snprintf(r, sizeof r, "%s/eulernpu-client/digests", xdg);
	cr_assert_eq(stat(r, &st), 0, "no record in a fresh $XDG_CACHE_HOME");
}

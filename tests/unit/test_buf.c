/* test_buf.c: the growable buffer, whole-file reads, atomic writes. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "buf.h"
#include "err.h"

Test(buf, grows_and_formats)
{
	enpu_buf b = ENPU_BUF_INIT;

	for (int i = 0; i < 1000; i++)
		cr_assert_eq(enpu_buf_addf(&b, "%d,", i), 0);
	cr_assert_eq(strncmp(b.data, "0,1,2,", 6), 0);
	cr_assert_eq(b.data[b.len], '\0');
	cr_assert_eq(b.len, strlen(b.data));
	enpu_buf_reset(&b);
	cr_assert_eq(b.len, 0);
	cr_assert_str_eq(b.data, "");
	enpu_buf_free(&b);
}

Test(buf, cap_is_enforced_and_leaves_buffer_unchanged)
{
	enpu_buf b = ENPU_BUF_INIT;

	b.cap = 8;
	cr_assert_eq(enpu_buf_adds(&b, "12345"), 0);
	cr_assert_eq(enpu_buf_adds(&b, "6789"), -1);
	cr_assert_str_eq(b.data, "12345");
	cr_assert_eq(enpu_buf_addf(&b, "%s", "abcd"), -1);
	cr_assert_eq(enpu_buf_adds(&b, "678"), 0);
	cr_assert_str_eq(b.data, "12345678");
	enpu_buf_free(&b);
}

Test(buf, read_and_atomic_write)
{
	char dir[] = "/tmp/enpu-buf-XXXXXX", path[256];
	enpu_buf b = ENPU_BUF_INIT;
	enpu_err e = ENPU_ERR_INIT;
	struct stat st;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/a/b/c", dir);
	cr_assert_eq(enpu_mkdirs(path, 0, &e), 0);
	cr_assert_eq(stat(path, &st), 0);
	snprintf(path, sizeof(path), "%s/a/f.txt", dir);
	cr_assert_eq(enpu_write_file_atomic(path, "hello", 5, &e), 0);
	cr_assert_eq(enpu_read_file(path, 0, &b, &e), 0);
	cr_assert_eq(b.len, 5);
	cr_assert_str_eq(b.data, "hello");
	enpu_buf_reset(&b);
	cr_assert_eq(enpu_read_file(path, 4, &b, &e), -1);
	cr_assert_eq(e.code, ENPU_E_LIMIT);
	cr_assert_eq(b.len, 0);
	snprintf(path, sizeof(path), "%s/nope", dir);
	cr_assert_eq(enpu_read_file(path, 0, &b, &e), -1);
	cr_assert_eq(e.code, ENPU_E_IO);
	snprintf(path, sizeof(path), "%s/missing-dir/x", dir);
	cr_assert_eq(enpu_write_file_atomic(path, "x", 1, &e), -1);
	cr_assert_eq(e.code, ENPU_E_IO);
	cr_assert_eq(e.sys_errno, ENOENT, "the errno is kept apart: %d", e.sys_errno);
	enpu_buf_free(&b);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	cr_assert_eq(system(path), 0);
}

/* RFC 3629: shortest forms only, no surrogates, nothing past U+10FFFF, and
 * a sequence cut short by the end of the bytes is invalid. */
Test(buf, utf8_sequences)
{
	static const struct { const char *s; size_t n, want; unsigned long cp; } c[] = {
		{"A", 1, 1, 0x41},
		{"\0", 1, 1, 0},
		{"\xc3\xa9", 2, 2, 0xe9},
		{"\xe2\x82\xac", 3, 3, 0x20ac},
		{"\xf0\x9f\x98\x80", 4, 4, 0x1f600},
		{"\xf4\x8f\xbf\xbf", 4, 4, 0x10ffff},
		{"\xc0\x80", 2, 0, 0},           /* overlong NUL */
		{"\xc1\xbf", 2, 0, 0},           /* overlong */
		{"\xe0\x9f\xbf", 3, 0, 0},       /* overlong */
		{"\xf0\x8f\xbf\xbf", 4, 0, 0},   /* overlong */
		{"\xed\xa0\x80", 3, 0, 0},       /* surrogate U+D800 */
		{"\xf4\x90\x80\x80", 4, 0, 0},   /* U+110000 */
		{"\xf5\x80\x80\x80", 4, 0, 0},
		{"\x80", 1, 0, 0},               /* lone continuation */
		{"\xff", 1, 0, 0},
		{"\xe2\x82", 2, 0, 0},           /* cut short */
		{"\xe2\x28\xac", 3, 0, 0},       /* not a continuation */
		{"", 0, 0, 0},
	};

	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		unsigned long cp = 12345;
		size_t k = enpu_utf8_seq(c[i].s, c[i].n, &cp);
		cr_expect_eq(k, c[i].want, "case %zu: length %zu, want %zu", i, k, c[i].want);
		if (c[i].want)
			cr_expect_eq(cp, c[i].cp, "case %zu: code point %lx", i, cp);
	}
}

/* enpu_str_cat is snprintf("%s%s...") of its strings: the same bytes and
 * the same return at every cap, cut or not. */
Test(buf, str_cat_is_snprintf_of_its_strings)
{
	const char *a = "/var/cache/eulernpu/cas", *b = "/", *c = "9b", *d = "9b9ececc51acba5a";
	char got[64], want[64];

	for (size_t cap = 1; cap <= sizeof got; cap++) {
		size_t n = enpu_str_cat(got, cap, a, b, c, b, d, (char *)NULL);
		int w = snprintf(want, cap, "%s%s%s%s%s", a, b, c, b, d);
		cr_assert_eq(n, (size_t)w, "cap %zu", cap);
		cr_assert_str_eq(got, want, "cap %zu", cap);
	}
	cr_assert_eq(enpu_str_cat(got, sizeof got, (char *)NULL), 0);
	cr_assert_str_eq(got, "");
	cr_assert_eq(enpu_str_cat(got, sizeof got, "", "x", "", (char *)NULL), 1);
	cr_assert_str_eq(got, "x");
}

/* enpu_copy_file: the same bytes in a new file with the mode asked for (as
 * the umask leaves it); never over an existing file; a missing source is
 * its errno and leaves nothing. */
Test(buf, copy_file_makes_a_new_file_of_the_same_bytes)
{
	char dir[] = "/tmp/test_buf_copy.XXXXXX", src[128], dst[128], none[128];
	enpu_buf a = ENPU_BUF_INIT, b = ENPU_BUF_INIT;
	enpu_err e = ENPU_ERR_INIT;
	struct stat sb;
	mode_t old = umask(022);

	cr_assert(mkdtemp(dir));
	snprintf(src, sizeof src, "%s/src", dir);
	snprintf(dst, sizeof dst, "%s/dst", dir);
	snprintf(none, sizeof none, "%s/none", dir);
	for (int i = 0; i < 300000; i++)
		cr_assert_eq(enpu_buf_add(&a, &(char){(char)(i * 7 + i / 256)}, 1), 0);
	cr_assert_eq(enpu_write_file_atomic(src, a.data, a.len, &e), 0, "%s", e.message);
	for (int durable = 0; durable <= 1; durable++) {
		cr_assert_eq(enpu_copy_file(src, dst, 0666, durable), 0, "%s", strerror(errno));
		b.len = 0;
		cr_assert_eq(enpu_read_file(dst, 0, &b, &e), 0);
		cr_assert(b.len == a.len && !memcmp(a.data, b.data, a.len), "other bytes");
		cr_assert_eq(stat(dst, &sb), 0);
		cr_assert_eq(sb.st_mode & 0777, 0644);
		cr_assert_eq(enpu_copy_file(src, dst, 0666, durable), -1, "over an existing file");
		cr_assert_eq(errno, EEXIST);
		cr_assert_eq(unlink(dst), 0);
	}
	cr_assert_eq(enpu_copy_file(none, dst, 0644, 1), -1);
	cr_assert_eq(errno, ENOENT);
	cr_assert_neq(access(dst, F_OK), 0, "a file was left");
	umask(old);
	unlink(src);
	rmdir(dir);
	enpu_buf_free(&a);
	enpu_buf_free(&b);
}

/* Every field of a file's identity counts, to the nanosecond. */
Test(buf, stat_unchanged_compares_every_field)
{
	struct stat a = {0}, b;

	a.st_dev = 2049;
	a.st_ino = 77;
	a.st_size = 1 << 20;
	a.st_mtim = (struct timespec){1000, 5};
	a.st_ctim = (struct timespec){1001, 6};
	b = a;
	cr_assert(enpu_stat_unchanged(&a, &b));
	for (int k = 0; k < 7; k++) {
		b = a;
		switch (k) {
		case 0: b.st_dev++; break;
		case 1: b.st_ino++; break;
		case 2: b.st_size++; break;
		case 3: b.st_mtim.tv_sec++; break;
		case 4: b.st_mtim.tv_nsec++; break;
		case 5: b.st_ctim.tv_sec++; break;
		default: b.st_ctim.tv_nsec++; break;
		}
		cr_assert_not(enpu_stat_unchanged(&a, &b), "field %d ignored", k);
	}
}

/* Every byte reaches the file; a full device is an error with its errno. */
Test(buf, write_all_writes_every_byte_or_fails_with_errno)
{
	char path[] = "/tmp/enpu-write-all.XXXXXX";
	size_t n = 3u << 20;
	unsigned char *p = malloc(n), *q = malloc(n);
	int fd = mkstemp(path), full;

	cr_assert(p && q && fd >= 0);
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(i * 7 + (i >> 12));
	cr_assert_eq(enpu_write_all(fd, p, n), 0);
	cr_assert_eq(pread(fd, q, n, 0), (ssize_t)n);
	cr_assert_eq(memcmp(p, q, n), 0);
	close(fd);
	unlink(path);
	if ((full = open("/dev/full", O_WRONLY)) >= 0) {
		errno = 0;
		cr_assert_eq(enpu_write_all(full, p, 100), -1);
		cr_assert_eq(errno, ENOSPC);
		close(full);
	}
	free(p);
	free(q);
}

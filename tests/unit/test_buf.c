/* test_buf.c: the growable buffer, whole-file reads, atomic writes. */
#include <criterion/criterion.h>
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
	enpu_buf_free(&b);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	cr_assert_eq(system(path), 0);
}

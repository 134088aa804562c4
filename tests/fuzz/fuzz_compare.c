/* fuzz_compare.c: libFuzzer target for enpu_compare of two .npz files.
 * Input: one byte of options (bits 0-2 atol, 3-5 rtol from a table, bit 6
 * exact), a 4-byte little-endian length n, then n bytes of got.npz and the
 * rest as expected.npz. Besides not crashing: a file compared with itself
 * passes, and without rtol the verdict does not depend on the order. */
#include <ftw.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "enpu.h"
#include "fuzz_tmp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static enpu_limits lim;
static char got_path[4200], exp_path[4200];

static void make_tmpdir(void)
{
	snprintf(got_path, sizeof(got_path), "%s/got.npz", fuzz_tmpdir());
	snprintf(exp_path, sizeof(exp_path), "%s/expected.npz", fuzz_tmpdir());
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	lim = *enpu_limits_default();
	lim.max_tensor_elems = 1u << 20;
	lim.max_tensor_bytes = 4u << 20;
	lim.max_npz_bytes = 8u << 20;
	lim.max_npz_members = 512;
	make_tmpdir();
	return 0;
}

static void put(const char *path, const uint8_t *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	if (!f || (n && fwrite(p, 1, n, f) != n) || fclose(f) != 0) {
		perror(path);
		abort();
	}
}

static void die(const char *what, const enpu_err *e)
{
	char buf[2048];

	enpu_err_render(e, buf, sizeof(buf));
	fprintf(stderr, "fuzz_compare: %s\n%s", what, buf);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const double tols[8] = {0, 1e-7, 1e-5, 1e-3, 0.5, 1, 1e30, INFINITY};
	enpu_cmp_opts o;
	enpu_cmp_result r1, r2;
	enpu_err e = ENPU_ERR_INIT;
	uint32_t n;
	int rc1, rc2;

	if (size < 5)
		return 0;
	o.atol = tols[data[0] & 7];
	o.rtol = tols[(data[0] >> 3) & 7];
	o.exact = (data[0] >> 6) & 1;
	n = (uint32_t)data[1] | (uint32_t)data[2] << 8 | (uint32_t)data[3] << 16 |
	    (uint32_t)data[4] << 24;
	data += 5;
	size -= 5;
	if (n > size)
		n = (uint32_t)size;
	put(got_path, data, n);
	put(exp_path, data + n, size - n);

	rc1 = enpu_compare(got_path, "got.npz", exp_path, "expected.npz", &o, &lim, &r1, &e);
	if (rc1 == 0 && r1.ok && e.code != ENPU_OK)
		die("a passing compare left an error", &e);
	if (o.rtol == 0) {
		enpu_err e2 = ENPU_ERR_INIT;
		rc2 = enpu_compare(exp_path, "expected.npz", got_path, "got.npz", &o, &lim, &r2, &e2);
		if (rc1 != rc2)
			die("compare gives another verdict with the files swapped", &e2);
		if (rc1 == 0 && r1.ok != r2.ok)
			die("compare passes one way and fails the other", &e2);
	}
	/* a file against itself: readable means equal */
	if (enpu_compare(got_path, "got.npz", got_path, "got.npz", &o, &lim, &r2, &e) == 0 &&
	    !r2.ok)
		die("a file differs from itself", &e);
	return 0;
}

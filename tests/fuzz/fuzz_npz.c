/* fuzz_npz.c: libFuzzer target for the .npy and .npz readers. The bytes
 * are read as one .npy and as an .npz; whatever reads must write back
 * (enpu_npy_write, enpu_npz_write) and read again as the same tensors, bit
 * for bit: a difference aborts, so the fuzzer reports it as a crash. */
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "npz.h"
#include "fuzz_tmp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static enpu_limits lim;
static char npzpath[4200];

/* the written-back .npz */
static void make_tmpdir(void)
{
	snprintf(npzpath, sizeof(npzpath), "%s/rt.npz", fuzz_tmpdir());
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* 4 MiB per tensor, 8 MiB per file: tests/data/npz/bomb.npz (16 MiB
	 * inflated) is refused by its declared size instead of costing a
	 * second per run; every size and overflow check still applies */
	lim = *enpu_limits_default();
	lim.max_tensor_elems = 1u << 20;
	lim.max_tensor_bytes = 4u << 20;
	lim.max_npz_bytes = 8u << 20;
	lim.max_npz_members = 512;
	make_tmpdir();
	return 0;
}

static void die(const char *what, const enpu_err *e)
{
	char buf[2048];

	enpu_err_render(e, buf, sizeof(buf));
	fprintf(stderr, "fuzz_npz: %s\n%s", what, buf);
	abort();
}

static void same_tensor(const enpu_tensor *a, const enpu_tensor *b, int names)
{
	uint64_t n = 0;
	enpu_err e = ENPU_ERR_INIT;

	if (a->dtype != b->dtype || !enpu_shape_eq(&a->shape, &b->shape) ||
	    enpu_shape_numel(&a->shape, &n) < 0)
		die("round trip changed a dtype or shape", &e);
	if (names && strcmp(a->name, b->name) != 0)
		die("round trip changed a name", &e);
	if (n && memcmp(a->bytes, b->bytes, (size_t)n * enpu_dtype_size(a->dtype)) != 0)
		die("round trip changed the data", &e);
}

static void fuzz_npy(const uint8_t *data, size_t size)
{
	enpu_tensor t = {0}, t2 = {0};
	enpu_buf b = ENPU_BUF_INIT;
	enpu_err e = ENPU_ERR_INIT;

	if (enpu_npy_parse(data, size, "x.npy", &lim, &t, &e) < 0)
		return;
	if (enpu_npy_write(&t, &b, &e) < 0)
		die("a parsed .npy does not write", &e);
	if (enpu_npy_parse(b.data, b.len, "x.npy (written)", &lim, &t2, &e) < 0)
		die("a written .npy does not parse", &e);
	same_tensor(&t, &t2, 0);
	enpu_tensor_free(&t);
	enpu_tensor_free(&t2);
	enpu_buf_free(&b);
}

static void fuzz_npz(const uint8_t *data, size_t size)
{
	enpu_tlist l = ENPU_TLIST_INIT, l2 = ENPU_TLIST_INIT;
	enpu_err e = ENPU_ERR_INIT;

	if (enpu_npz_read_mem(data, size, "input.npz", &lim, &l, &e) < 0)
		goto out;
	if (enpu_npz_write(npzpath, &l, &e) < 0)
		die("a read .npz does not write", &e);
	if (enpu_npz_read(npzpath, "input.npz (written)", &lim, &l2, &e) < 0)
		die("a written .npz does not read", &e);
	if (l.n != l2.n)
		die("round trip changed the member count", &e);
	for (size_t i = 0; i < l.n; i++)
		same_tensor(&l.items[i], &l2.items[i], 1);
out:
	enpu_tlist_free(&l);
	enpu_tlist_free(&l2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_npy(data, size);
	fuzz_npz(data, size);
	return 0;
}

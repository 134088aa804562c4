/* test_npz.c: tests for common/npz.c against files numpy wrote
 * (tests/data/npz/, made by gen.py) and against numpy reading ours.
 * Run from the repository root, as `make tests` does. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "npz.h"
#include "digest.h"

#define DATA "tests/data/npz/"
#define PY "/usr/bin/python3"

/* gen.py's values: element i (C order) is (i % 251) * 0.5 - 7.0, exact in f32 */
static float val(uint64_t i)
{
	return (float)((double)(i % 251) * 0.5 - 7.0);
}

static unsigned char *slurp(const char *name, size_t *len)
{
	char path[512];
	FILE *f;
	long n;
	unsigned char *p;

	snprintf(path, sizeof(path), "%s%s", strchr(name, '/') ? "" : DATA, name);
	f = fopen(path, "rb");
	cr_assert(f, "cannot open %s (run from the repository root)", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	p = malloc((size_t)n + 1);
	cr_assert(p);
	cr_assert_eq(fread(p, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return p;
}

static void check_tensor(const enpu_tensor *t, int ndim, const int64_t *dims)
{
	uint64_t n;

	cr_assert_eq(t->dtype, ENPU_DT_F32);
	cr_assert_eq(t->shape.ndim, ndim, "ndim %d, want %d", t->shape.ndim, ndim);
	for (int i = 0; i < ndim; i++)
		cr_assert_eq(t->shape.dim[i], dims[i], "dim %d is %lld", i, (long long)t->shape.dim[i]);
	cr_assert_eq(enpu_shape_numel(&t->shape, &n), 0);
	for (uint64_t i = 0; i < n; i++)
		cr_assert_eq(t->data[i], val(i), "element %llu is %g, want %g",
			     (unsigned long long)i, t->data[i], val(i));
}

static void parse_file(const char *name, enpu_tensor *t)
{
	enpu_err e = ENPU_ERR_INIT;
	size_t len;
	unsigned char *b = slurp(name, &len);
	int rc = enpu_npy_parse(b, len, name, NULL, t, &e);

	free(b);
	cr_assert_eq(rc, 0, "%s: %s: %s", name, e.where, e.message);
}

Test(npy_read, versions_1_2_3)
{
	enpu_tensor t;

	parse_file("v1.npy", &t);
	check_tensor(&t, 2, (int64_t[]){3, 4});
	cr_assert_null(t.name);
	enpu_tensor_free(&t);
	parse_file("v2.npy", &t);
	check_tensor(&t, 2, (int64_t[]){2, 3});
	enpu_tensor_free(&t);
	parse_file("v3.npy", &t);
	check_tensor(&t, 1, (int64_t[]){5});
	enpu_tensor_free(&t);
	parse_file("odd_header.npy", &t);
	check_tensor(&t, 2, (int64_t[]){2, 2});
	enpu_tensor_free(&t);
	parse_file("dims8.npy", &t);
	check_tensor(&t, 8, (int64_t[]){1, 2, 1, 2, 1, 2, 1, 2});
	enpu_tensor_free(&t);
}

Test(npy_read, scalar_and_zero_size)
{
	enpu_tensor t;

	parse_file("scalar.npy", &t);
	cr_assert_eq(t.shape.ndim, 0);
	cr_assert_eq(t.data[0], 2.5f);
	enpu_tensor_free(&t);
	parse_file("zerodim.npy", &t);
	check_tensor(&t, 2, (int64_t[]){0, 3});
	enpu_tensor_free(&t);
}

Test(npy_read, unaligned_data)
{
	size_t len;
	unsigned char *b = slurp("v1.npy", &len), *u = malloc(len + 3);
	enpu_err e = ENPU_ERR_INIT;
	enpu_tensor t;

	memcpy(u + 3, b, len);
	cr_assert_eq(enpu_npy_parse(u + 3, len, "u", NULL, &t, &e), 0, "%s", e.message);
	check_tensor(&t, 2, (int64_t[]){3, 4});
	enpu_tensor_free(&t);
	free(u);
	free(b);
}

Test(npy_read, limits)
{
	enpu_limits lim = *enpu_limits_default();
	size_t len;
	unsigned char *b = slurp("v1.npy", &len);
	enpu_err e = ENPU_ERR_INIT;
	enpu_tensor t;

	lim.max_tensor_elems = 11;
	cr_assert_eq(enpu_npy_parse(b, len, "v1.npy", &lim, &t, &e), -1);
	cr_assert_eq(e.code, ENPU_E_LIMIT);
	lim.max_tensor_elems = 12;
	lim.max_tensor_bytes = 47;
	cr_assert_eq(enpu_npy_parse(b, len, "v1.npy", &lim, &t, &e), -1);
	cr_assert_eq(e.code, ENPU_E_LIMIT);
	lim.max_tensor_bytes = 48;
	cr_assert_eq(enpu_npy_parse(b, len, "v1.npy", &lim, &t, &e), 0, "%s", e.message);
	enpu_tensor_free(&t);
	free(b);
}

/* Every proper prefix is an error, never a crash or an over-read (each
 * prefix is its own exact-size allocation, so ASan sees any over-read). */
Test(npy_read, truncated_at_every_byte)
{
	size_t len;
	unsigned char *b = slurp("v1.npy", &len);

	for (size_t n = 0; n < len; n++) {
		unsigned char *p = malloc(n ? n : 1);
		enpu_err e = ENPU_ERR_INIT;
		enpu_tensor t;
		memcpy(p, b, n);
		cr_assert_eq(enpu_npy_parse(p, n, "v1.npy", NULL, &t, &e), -1, "prefix %zu accepted", n);
		cr_assert_eq(e.code, ENPU_E_NPY, "prefix %zu: code %d: %s", n, e.code, e.message);
		cr_assert_null(t.data);
		free(p);
	}
	free(b);
}

static void read_npz(const char *name, enpu_tlist *l)
{
	char path[512];
	enpu_err e = ENPU_ERR_INIT;

	snprintf(path, sizeof(path), DATA "%s", name);
	cr_assert_eq(enpu_npz_read(path, name, NULL, l, &e), 0, "%s: %s: %s", name, e.where, e.message);
}

static void check_four(const enpu_tlist *l)
{
	static const char *names[] = {"a", "b", "s", "z"};

	cr_assert_eq(l->n, 4);
	for (int i = 0; i < 4; i++)
		cr_assert_str_eq(l->items[i].name, names[i]);
	check_tensor(&l->items[0], 2, (int64_t[]){2, 3});
	check_tensor(&l->items[1], 1, (int64_t[]){4});
	cr_assert_eq(l->items[2].shape.ndim, 0);
	cr_assert_eq(l->items[2].data[0], 2.5f);
	check_tensor(&l->items[3], 2, (int64_t[]){3, 0});
}

Test(npz_read, savez_stored_and_deflated)
{
	enpu_tlist l = ENPU_TLIST_INIT;

	read_npz("savez.npz", &l);
	check_four(&l);
	enpu_tlist_free(&l);
	read_npz("savez_compressed.npz", &l);
	check_four(&l);
	enpu_tlist_free(&l);
}

Test(npz_read, zip64_big_empty_utf8)
{
	enpu_tlist l = ENPU_TLIST_INIT;

	read_npz("zip64.npz", &l);
	cr_assert_eq(l.n, 1);
	cr_assert_str_eq(l.items[0].name, "w");
	check_tensor(&l.items[0], 2, (int64_t[]){7, 3});
	enpu_tlist_free(&l);
	read_npz("big.npz", &l);
	cr_assert_eq(l.n, 1);
	check_tensor(&l.items[0], 2, (int64_t[]){512, 512});
	enpu_tlist_free(&l);
	read_npz("empty.npz", &l);
	cr_assert_eq(l.n, 0);
	read_npz("utf8name.npz", &l);
	cr_assert_eq(l.n, 1);
	cr_assert_str_eq(l.items[0].name, "caf\xc3\xa9");
	enpu_tlist_free(&l);
}

Test(npz_read, mem_appends_after_existing)
{
	enpu_tlist l = ENPU_TLIST_INIT;
	enpu_err e = ENPU_ERR_INIT;
	size_t len;
	unsigned char *b = slurp("zip64.npz", &len);

	cr_assert_eq(enpu_npz_read_mem(b, len, "zip64.npz", NULL, &l, &e), 0, "%s", e.message);
	free(b);
	b = slurp("savez_compressed.npz", &len);
	cr_assert_eq(enpu_npz_read_mem(b, len, "x.npz", NULL, &l, &e), 0, "%s", e.message);
	cr_assert_eq(l.n, 5);
	cr_assert_str_eq(l.items[0].name, "w");
	cr_assert_str_eq(l.items[4].name, "z");
	/* a failing read leaves the list as it was */
	free(b);
	b = slurp("member_f8.npz", &len);
	cr_assert_eq(enpu_npz_read_mem(b, len, "member_f8.npz", NULL, &l, &e), -1);
	cr_assert_eq(l.n, 5);
	enpu_tlist_free(&l);
	free(b);
}

Test(npz_read, missing_file_or_dir_is_io)
{
	enpu_tlist l = ENPU_TLIST_INIT;
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(enpu_npz_read(DATA "no_such_file.npz", "input.npz", NULL, &l, &e), -1);
	cr_assert_eq(e.code, ENPU_E_IO, "code %d: %s", e.code, e.message);
	cr_assert_str_eq(e.where, "input.npz");
	cr_assert_eq(l.n, 0);
	cr_assert_eq(enpu_npz_read(DATA, "dir", NULL, &l, &e), -1);
	cr_assert_eq(e.code, ENPU_E_IO, "code %d: %s", e.code, e.message);
}

static enpu_code code_named(const char *s)
{
	static const struct { const char *n; enpu_code c; } t[] = {
		{"NPY", ENPU_E_NPY}, {"NPY_DTYPE", ENPU_E_NPY_DTYPE},
		{"NPY_ORDER", ENPU_E_NPY_ORDER}, {"LIMIT", ENPU_E_LIMIT},
		{"IO", ENPU_E_IO},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(t[i].n, s))
			return t[i].c;
	cr_assert_fail("unknown code name '%s' in reject.tsv", s);
	return ENPU_OK;
}

/* Data-driven: tests/data/npz/reject.tsv names each bad file and the error. */
Test(reject, table)
{
	FILE *f = fopen(DATA "reject.tsv", "r");
	char line[1024];
	int cases = 0;

	cr_assert(f, "cannot open reject.tsv");
	while (fgets(line, sizeof(line), f)) {
		char *file, *code, *where, *msg, *save;
		size_t len;
		unsigned char *b;
		enpu_err e = ENPU_ERR_INIT, e2 = ENPU_ERR_INIT;
		int rc;

		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '#' || !line[0])
			continue;
		file = strtok_r(line, "\t", &save);
		code = strtok_r(NULL, "\t", &save);
		where = strtok_r(NULL, "\t", &save);
		msg = strtok_r(NULL, "\t", &save);
		cr_assert(file && code && where && msg, "bad reject.tsv line");
		b = slurp(file, &len);
		if (strstr(file, ".npy")) {
			enpu_tensor t;
			rc = enpu_npy_parse(b, len, file, NULL, &t, &e);
			if (!rc)
				enpu_tensor_free(&t);
		} else {
			enpu_tlist l = ENPU_TLIST_INIT;
			char path[512];
			rc = enpu_npz_read_mem(b, len, file, NULL, &l, &e);
			cr_assert_eq(l.n, 0, "%s: tensors left behind", file);
			snprintf(path, sizeof(path), DATA "%s", file);
			cr_assert_eq(enpu_npz_read(path, file, NULL, &l, &e2), -1, "%s accepted (file)", file);
			cr_assert_eq(e2.code, e.code, "%s: file and memory readers disagree", file);
			cr_assert_str_eq(e2.message, e.message);
			enpu_tlist_free(&l);
		}
		free(b);
		if (!strstr(file, ".npy")) {   /* the streaming reader: at its scan or its copy */
			char path[512], dst[64];
			enpu_npz_index ix;
			enpu_err e3 = ENPU_ERR_INIT;
			int copied = 0;   /* the scan passed: the copy found the fault */
			snprintf(path, sizeof(path), DATA "%s", file);
			snprintf(dst, sizeof dst, "/tmp/enpu_npz_stream_%d.npz", (int)getpid());
			if (enpu_npz_scan(path, file, NULL, &ix, &e3) == 0) {
				const char *names[64];
				char sha[65];
				uint64_t sz;
				copied = 1;
				for (size_t k = 0; k < ix.meta.n && k < 64; k++)
					names[k] = ix.meta.items[k].name;
				cr_assert_eq(enpu_npz_write_from(&ix, names, ix.meta.n < 64 ? ix.meta.n : 64,
								 dst, sha, &sz, &e3), -1,
					     "%s: scanned and copied", file);
				enpu_npz_index_free(&ix);
				unlink(dst);
			}
			/* the source's fault, said as the whole-file reader says it
			 * (a corrupt member found only while copying is no write error) */
			cr_assert_eq(e3.code, code_named(code), "%s: streaming code %d, want %s: %s", file,
				     e3.code, code, e3.message);
			cr_assert(strstr(e3.where, file), "%s: streaming where '%s'", file, e3.where);
			cr_assert(!copied || strstr(e3.message, msg), "%s: copy's message '%s' lacks '%s'",
				  file, e3.message, msg);
		}
		cr_assert_eq(rc, -1, "%s accepted", file);
		cr_assert_eq(e.code, code_named(code), "%s: code %d, want %s: %s", file, e.code, code, e.message);
		cr_assert(strstr(e.where, where), "%s: where '%s' lacks '%s'", file, e.where, where);
		cr_assert(strstr(e.message, msg), "%s: message '%s' lacks '%s'", file, e.message, msg);
		cases++;
	}
	fclose(f);
	cr_assert_geq(cases, 40, "only %d cases in reject.tsv", cases);
}

Test(reject, npz_truncated_at_every_byte)
{
	static const char *files[] = {"savez.npz", "savez_compressed.npz"};

	for (int k = 0; k < 2; k++) {
		size_t len;
		unsigned char *b = slurp(files[k], &len);
		for (size_t n = 0; n < len; n++) {
			unsigned char *p = malloc(n ? n : 1);
			enpu_tlist l = ENPU_TLIST_INIT;
			enpu_err e = ENPU_ERR_INIT;
			memcpy(p, b, n);
			cr_assert_eq(enpu_npz_read_mem(p, n, files[k], NULL, &l, &e), -1,
				     "%s: prefix %zu accepted", files[k], n);
			cr_assert_eq(e.code, ENPU_E_NPY, "%s prefix %zu: code %d: %s", files[k], n, e.code, e.message);
			cr_assert_eq(l.n, 0);
			enpu_tlist_free(&l);
			free(p);
		}
		free(b);
	}
}

Test(reject, zip_bomb_and_member_count)
{
	enpu_limits lim = *enpu_limits_default();
	enpu_tlist l = ENPU_TLIST_INIT;
	enpu_err e = ENPU_ERR_INIT;

	lim.max_npz_bytes = 1 << 20;    /* the member declares 16 MiB + 128 */
	cr_assert_eq(enpu_npz_read(DATA "bomb.npz", "bomb.npz", &lim, &l, &e), -1);
	cr_assert_eq(e.code, ENPU_E_LIMIT, "code %d: %s", e.code, e.message);
	lim = *enpu_limits_default();
	lim.max_tensor_bytes = 1 << 20;
	cr_assert_eq(enpu_npz_read(DATA "bomb.npz", "bomb.npz", &lim, &l, &e), -1);
	cr_assert_eq(e.code, ENPU_E_LIMIT, "code %d: %s", e.code, e.message);
	/* within the limits it is a valid (if large) file */
	cr_assert_eq(enpu_npz_read(DATA "bomb.npz", "bomb.npz", NULL, &l, &e), 0, "%s", e.message);
	cr_assert_eq(l.n, 1);
	cr_assert_eq(l.items[0].shape.dim[0], 4 << 20);
	enpu_tlist_free(&l);

	lim = *enpu_limits_default();
	lim.max_npz_members = 19;
	cr_assert_eq(enpu_npz_read(DATA "many.npz", "many.npz", &lim, &l, &e), -1);
	cr_assert_eq(e.code, ENPU_E_LIMIT);
	cr_assert(strstr(e.message, "holds 20 members"), "%s", e.message);
	lim.max_npz_members = 20;
	cr_assert_eq(enpu_npz_read(DATA "many.npz", "many.npz", &lim, &l, &e), 0, "%s", e.message);
	cr_assert_eq(l.n, 20);
	cr_assert_str_eq(l.items[19].name, "t19");
	enpu_tlist_free(&l);
}

/* ---- writing ---- */

static char tmpdir[64];

static void mk_tmp(void)
{
	strcpy(tmpdir, "/tmp/test_npz.XXXXXX");
	cr_assert(mkdtemp(tmpdir));
}

static void rm_tmp(void)
{
	DIR *d = opendir(tmpdir);
	struct dirent *de;
	char p[512];

	if (!d)
		return;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.') {
			snprintf(p, sizeof(p), "%s/%s", tmpdir, de->d_name);
			unlink(p);
		}
	closedir(d);
	rmdir(tmpdir);
}

TestSuite(npz_write, .init = mk_tmp, .fini = rm_tmp);

static void push(enpu_tlist *l, const char *name, int ndim, const int64_t *dims)
{
	enpu_tensor t = {0};
	enpu_err e = ENPU_ERR_INIT;
	uint64_t n;

	t.name = strdup(name);
	t.dtype = ENPU_DT_F32;
	t.shape.ndim = ndim;
	for (int i = 0; i < ndim; i++)
		t.shape.dim[i] = dims[i];
	cr_assert_eq(enpu_shape_numel(&t.shape, &n), 0);
	t.data = n ? malloc(n * sizeof(float)) : NULL;
	for (uint64_t i = 0; i < n; i++)
		t.data[i] = val(i);
	cr_assert_eq(enpu_tlist_push(l, &t, &e), 0);
}

/* The golden list: write_expected.npz is enpu_npz_write's output for it. */
static void golden_list(enpu_tlist *l)
{
	push(l, "fc1.w", 2, (int64_t[]){4, 3});
	push(l, "fc1.b", 1, (int64_t[]){3});
	push(l, "scale", 0, NULL);
	push(l, "empty", 2, (int64_t[]){0, 5});
	push(l, "x8", 8, (int64_t[]){1, 2, 1, 2, 1, 2, 1, 2});
}

Test(npz_write, npy_bytes_match_numpy)
{
	static const struct { const char *file; int ndim; int64_t dims[2]; } c[] = {
		{"np_2x3.npy", 2, {2, 3}}, {"np_8.npy", 1, {8}}, {"np_scalar.npy", 0, {0}},
		{"np_big1.npy", 2, {12345678901LL, 0}},
	};
	for (size_t k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		enpu_tlist l = ENPU_TLIST_INIT;
		enpu_buf out = ENPU_BUF_INIT;
		enpu_err e = ENPU_ERR_INIT;
		size_t len;
		unsigned char *want = slurp(c[k].file, &len);

		push(&l, "t", c[k].ndim, c[k].dims);
		if (c[k].ndim == 0)
			l.items[0].data[0] = 2.5f;
		cr_assert_eq(enpu_npy_write(&l.items[0], &out, &e), 0, "%s", e.message);
		cr_assert_eq(out.len, len, "%s: %zu bytes, numpy wrote %zu", c[k].file, out.len, len);
		cr_assert_eq(memcmp(out.data, want, len), 0, "%s: bytes differ from numpy's", c[k].file);
		/* the data starts on a 64-byte boundary */
		cr_assert_eq((10 + ((unsigned char)out.data[8] | (unsigned char)out.data[9] << 8)) % 64, 0);
		enpu_buf_free(&out);
		enpu_tlist_free(&l);
		free(want);
	}
}

Test(npz_write, round_trip_and_layout)
{
	enpu_tlist l = ENPU_TLIST_INIT, r = ENPU_TLIST_INIT;
	enpu_err e = ENPU_ERR_INIT;
	char path[128];
	size_t len;
	unsigned char *b;
	DIR *d;
	struct dirent *de;
	int files = 0;

	golden_list(&l);
	snprintf(path, sizeof(path), "%s/out.npz", tmpdir);
	cr_assert_eq(enpu_npz_write(path, &l, &e), 0, "%s", e.message);
	cr_assert_eq(enpu_npz_read(path, "out.npz", NULL, &r, &e), 0, "%s", e.message);
	cr_assert_eq(r.n, l.n);
	for (size_t i = 0; i < l.n; i++) {
		uint64_t n;
		cr_assert_str_eq(r.items[i].name, l.items[i].name);
		cr_assert(enpu_shape_eq(&r.items[i].shape, &l.items[i].shape));
		enpu_shape_numel(&l.items[i].shape, &n);
		if (n)
			cr_assert_eq(memcmp(r.items[i].data, l.items[i].data, n * 4), 0);
	}
	/* first local header: stored, DOS 1980-01-01 00:00, no extra field */
	b = slurp(path, &len);
	cr_assert_eq(memcmp(b, "PK\3\4", 4), 0);
	cr_assert_eq(b[8] | b[9] << 8, 0, "compression method %d", b[8] | b[9] << 8);
	cr_assert_eq(b[10] | b[11] << 8, 0, "dos time");
	cr_assert_eq(b[12] | b[13] << 8, 0x21, "dos date");
	cr_assert_eq(b[28] | b[29] << 8, 0, "extra field of %d bytes", b[28] | b[29] << 8);
	cr_assert_eq(memcmp(b + 30, "fc1.w.npy", 9), 0);
	free(b);
	/* nothing but the target is left in the directory (temp renamed away) */
	d = opendir(tmpdir);
	while ((de = readdir(d)))
		if (de->d_name[0] != '.') {
			cr_assert_str_eq(de->d_name, "out.npz");
			files++;
		}
	closedir(d);
	cr_assert_eq(files, 1);
	enpu_tlist_free(&l);
	enpu_tlist_free(&r);
}

/* Same tensors, same bytes: twice in a row, and as the file checked in
 * (write_expected.npz, produced once by this writer from golden_list). If
 * the format changes on purpose, copy the new file from the path printed. */
Test(npz_write, deterministic_bytes)
{
	enpu_tlist l = ENPU_TLIST_INIT;
	enpu_err e = ENPU_ERR_INIT;
	char p1[128], p2[128];
	size_t n1, n2, ng;
	unsigned char *b1, *b2, *g;

	golden_list(&l);
	snprintf(p1, sizeof(p1), "%s/one.npz", tmpdir);
	snprintf(p2, sizeof(p2), "%s/two.npz", tmpdir);
	cr_assert_eq(enpu_npz_write(p1, &l, &e), 0, "%s", e.message);
	cr_assert_eq(enpu_npz_write(p2, &l, &e), 0, "%s", e.message);
	cr_assert_eq(enpu_npz_write(p2, &l, &e), 0, "overwrite: %s", e.message);
	b1 = slurp(p1, &n1);
	b2 = slurp(p2, &n2);
	g = slurp("write_expected.npz", &ng);
	cr_assert_eq(n1, n2);
	cr_assert_eq(memcmp(b1, b2, n1), 0, "two writes differ");
	cr_assert(n1 == ng && !memcmp(b1, g, ng), "%s differs from " DATA "write_expected.npz", p1);
	free(b1);
	free(b2);
	free(g);
	enpu_tlist_free(&l);
}

Test(npz_write, numpy_reads_ours)
{
	enpu_tlist l = ENPU_TLIST_INIT;
	enpu_err e = ENPU_ERR_INIT;
	char path[128], cmd[2048];

	golden_list(&l);
	snprintf(path, sizeof(path), "%s/ours.npz", tmpdir);
	cr_assert_eq(enpu_npz_write(path, &l, &e), 0, "%s", e.message);
	snprintf(cmd, sizeof(cmd), PY " -c \"\n"
		 "import numpy as np\n"
		 "d = np.load('%s')\n"
		 "want = {'fc1.w': (4, 3), 'fc1.b': (3,), 'scale': (), 'empty': (0, 5), 'x8': (1, 2, 1, 2, 1, 2, 1, 2)}\n"
		 "assert list(d.keys()) == list(want), d.keys()\n"
		 "for k, s in want.items():\n"
		 "    a = d[k]\n"
		 "    v = ((np.arange(a.size) %% 251) * 0.5 - 7.0).astype('<f4').reshape(s)\n"
		 "    assert a.dtype == np.dtype('<f4') and a.shape == s and (a == v).all(), k\n"
		 "\"", path);
	cr_assert_eq(system(cmd), 0, "numpy could not read %s", path);
	enpu_tlist_free(&l);
}

Test(npz_write, empty_list_and_bad_names)
{
	enpu_tlist l = ENPU_TLIST_INIT, r = ENPU_TLIST_INIT;
	enpu_err e = ENPU_ERR_INIT;
	char path[128], cmd[512];
	static const char *bad[] = {"", "a/b", "a\\b", "..", "x..y", "tab\there", "\xff", "a b"};

	snprintf(path, sizeof(path), "%s/empty.npz", tmpdir);
	cr_assert_eq(enpu_npz_write(path, &l, &e), 0, "%s", e.message);
	cr_assert_eq(enpu_npz_read(path, "empty.npz", NULL, &r, &e), 0, "%s", e.message);
	cr_assert_eq(r.n, 0);
	snprintf(cmd, sizeof(cmd), PY " -c \"import numpy as np; assert len(np.load('%s').files) == 0\"", path);
	cr_assert_eq(system(cmd), 0);

	snprintf(path, sizeof(path), "%s/bad.npz", tmpdir);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		push(&l, bad[i], 1, (int64_t[]){2});
		cr_assert_eq(enpu_npz_write(path, &l, &e), -1, "name '%s' accepted", bad[i]);
		cr_assert_eq(e.code, ENPU_E_NAME);
		enpu_tlist_free(&l);
	}
	push(&l, "x", 1, (int64_t[]){2});
	push(&l, "x", 1, (int64_t[]){2});
	cr_assert_eq(enpu_npz_write(path, &l, &e), -1);
	cr_assert_eq(e.code, ENPU_E_NAME);
	cr_assert(strstr(e.message, "more than once"), "%s", e.message);
	cr_assert_eq(access(path, F_OK), -1, "a failed write left a file");
	enpu_tlist_free(&l);
}

/* int64 (spec v2 weights): read as int64, written back byte-identical to
 * numpy's np.save, and through an npz next to a float32 member. */
static const int64_t i8_vals[6] = {INT64_MIN, -1, 0, 1, ((int64_t)1 << 62) + 5, INT64_MAX};

static void check_i64(const enpu_tensor *t)
{
	cr_assert_eq(t->dtype, ENPU_DT_I64);
	cr_assert_eq(enpu_dtype_size(t->dtype), 8);
	for (int i = 0; i < 6; i++)
		cr_assert_eq(t->i64[i], i8_vals[i], "element %d is %lld", i, (long long)t->i64[i]);
}

Test(npz_write, int64_round_trip)
{
	enpu_tensor t;
	enpu_tlist l = ENPU_TLIST_INIT, back = ENPU_TLIST_INIT;
	enpu_buf out = ENPU_BUF_INIT, z = ENPU_BUF_INIT;
	enpu_err e = ENPU_ERR_INIT;
	size_t len;
	unsigned char *want = slurp("i8.npy", &len), *mixed;

	parse_file("i8.npy", &t);
	check_i64(&t);
	cr_assert_eq(t.shape.ndim, 2);
	cr_assert_eq(t.shape.dim[1], 3);
	cr_assert_eq(enpu_npy_write(&t, &out, &e), 0, "%s", e.message);
	cr_assert_eq(out.len, len, "%zu bytes, numpy wrote %zu", out.len, len);
	cr_assert_eq(memcmp(out.data, want, len), 0, "bytes differ from numpy's");
	enpu_tensor_free(&t);
	free(want);
	mixed = slurp("i8_mixed.npz", &len);
	cr_assert_eq(enpu_npz_read_mem(mixed, len, "i8_mixed.npz", NULL, &l, &e), 0, "%s", e.message);
	free(mixed);
	cr_assert_eq(l.n, 2);
	check_tensor(enpu_tlist_find(&l, "x"), 2, (int64_t[]){2, 3});
	check_i64(enpu_tlist_find(&l, "idx"));
	cr_assert_eq(enpu_npz_write_mem(&l, "i8.npz", &z, &e), 0, "%s", e.message);
	cr_assert_eq(enpu_npz_read_mem(z.data, z.len, "i8.npz", NULL, &back, &e), 0, "%s", e.message);
	check_tensor(enpu_tlist_find(&back, "x"), 2, (int64_t[]){2, 3});
	check_i64(enpu_tlist_find(&back, "idx"));
	enpu_tlist_free(&l);
	enpu_tlist_free(&back);
	enpu_buf_free(&out);
	enpu_buf_free(&z);
}

Test(npz_write, dtype_table)
{
	cr_assert_str_eq(enpu_dtype_descr(ENPU_DT_F32), "<f4");
	cr_assert_str_eq(enpu_dtype_descr(ENPU_DT_I64), "<i8");
	cr_assert_eq(enpu_dtype_from_descr("<i8"), ENPU_DT_I64);
	cr_assert_eq(enpu_dtype_from_descr(">i8"), ENPU_DT_INVALID);
	cr_assert_eq(enpu_dtype_parse("int64"), ENPU_DT_I64);
	cr_assert_eq(enpu_dtype_size(ENPU_DT_F32), 4);
	cr_assert_eq(enpu_dtype_size(ENPU_DT_INVALID), 0);
	cr_assert_null(enpu_dtype_descr(ENPU_DT_INVALID));
}

/* ---- the streaming reader and writer (npz_stream.c) ------------------- */

/* The members' names, dtypes, shapes as enpu_npz_read gives them; a
 * member's data loaded on demand; and a file written from members, in
 * another order, byte for byte what enpu_npz_write gives for the same
 * tensors, whether the source members were stored, deflated or zip64. */
Test(npz_stream, scan_load_and_copy_match_the_whole_file_reader)
{
	static const char *files[] = {"savez.npz", "savez_compressed.npz", "zip64.npz",
				      "i8_mixed.npz", "utf8name.npz", "many.npz"};
	char dst[64];

	snprintf(dst, sizeof dst, "/tmp/enpu_npz_copy_%d.npz", (int)getpid());
	for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
		char path[512], sha[65], want_sha[65];
		enpu_tlist l = ENPU_TLIST_INIT, rev = ENPU_TLIST_INIT;
		enpu_npz_index ix;
		enpu_err e = ENPU_ERR_INIT;
		enpu_buf want = ENPU_BUF_INIT;
		const char *names[4096];
		uint64_t sz;
		size_t len;

		snprintf(path, sizeof path, DATA "%s", files[f]);
		read_npz(files[f], &l);
		cr_assert_eq(enpu_npz_scan(path, files[f], NULL, &ix, &e), 0, "%s: %s", files[f], e.message);
		cr_assert_eq(ix.meta.n, l.n, "%s", files[f]);
		for (size_t k = 0; k < l.n; k++) {
			const enpu_tensor *a = &l.items[k], *b = &ix.meta.items[k];
			uint64_t n;
			cr_assert_str_eq(a->name, b->name);
			cr_assert_eq(a->dtype, b->dtype);
			cr_assert(enpu_shape_eq(&a->shape, &b->shape), "%s", a->name);
			cr_assert_null(b->bytes, "%s: data read by the scan", b->name);
			cr_assert_eq(enpu_npz_scan_load(&ix, k, files[f], &e), 0, "%s", e.message);
			enpu_shape_numel(&a->shape, &n);
			cr_assert(n == 0 || !memcmp(a->bytes, b->bytes, n * enpu_dtype_size(a->dtype)),
				  "%s: loaded data differs", a->name);
		}
		/* every member, last first */
		rev.items = calloc(l.n ? l.n : 1, sizeof(*rev.items));
		for (size_t k = 0; k < l.n; k++) {
			rev.items[k] = l.items[l.n - 1 - k];
			names[k] = l.items[l.n - 1 - k].name;
		}
		rev.n = l.n;
		cr_assert_eq(enpu_npz_write_mem(&rev, "want", &want, &e), 0, "%s", e.message);
		cr_assert_eq(enpu_npz_write_from(&ix, names, l.n, dst, sha, &sz, &e), 0, "%s: %s",
			     files[f], e.message);
		unsigned char *got = slurp(dst, &len);
		cr_assert_eq(len, want.len, "%s: %zu bytes, want %zu", files[f], len, want.len);
		cr_assert(!memcmp(got, want.data, len), "%s: other bytes than enpu_npz_write's", files[f]);
		cr_assert_eq(sz, len);
		enpu_sha256_hex(want.data, want.len, want_sha);
		cr_assert_str_eq(sha, want_sha);
		free(got);
		free(rev.items);
		enpu_buf_free(&want);
		enpu_npz_index_free(&ix);
		enpu_tlist_free(&l);
	}
	unlink(dst);
}

/* A name the file lacks is an error naming it, whichever member it stands
 * beside; nothing is left at dst. */
Test(npz_stream, write_from_names_a_member_the_file_lacks)
{
	char path[512], dst[64], sha[65];
	const char *names[3];
	enpu_npz_index ix;
	enpu_err e = ENPU_ERR_INIT;
	uint64_t sz;
	struct stat st;

	snprintf(path, sizeof path, DATA "many.npz");
	snprintf(dst, sizeof dst, "/tmp/enpu_npz_lacks_%d.npz", (int)getpid());
	cr_assert_eq(enpu_npz_scan(path, "many.npz", NULL, &ix, &e), 0, "%s", e.message);
	cr_assert_geq(ix.meta.n, 2);
	names[0] = ix.meta.items[ix.meta.n - 1].name;
	names[1] = "no_such_member";
	names[2] = ix.meta.items[0].name;
	cr_assert_eq(enpu_npz_write_from(&ix, names, 3, dst, sha, &sz, &e), -1);
	cr_assert_eq(e.code, ENPU_E_INTERNAL);
	cr_assert(strstr(e.message, "no_such_member"), "%s", e.message);
	cr_assert_neq(stat(dst, &st), 0, "a file was left at dst");
	enpu_npz_index_free(&ix);
}

/* A file of stored members is the weights file as it is: linked after its
 * members' CRCs pass (parts of a big member on several threads, combined);
 * a deflated file, or other members than those asked for, is not (0:
 * nothing done); a flipped byte in any part fails with E0400. */
static int plain_link(void *ud, const char *from, const char *to)
{
	(void)ud;
	return link(from, to);
}

static const enpu_linker hard = {plain_link, NULL};

Test(npz_stream, link_from_takes_a_stored_file_as_it_is)
{
	char dir[64], src[128], dst[128], bad[128];
	enpu_npz_index ix;
	enpu_err e = ENPU_ERR_INIT;
	enpu_tlist l = ENPU_TLIST_INIT;
	const char *names[2] = {"small", "big"};
	char want[65], got[65];
	struct stat a, b;
	uint64_t sz = 0;

	snprintf(dir, sizeof dir, "/tmp/enpu_npz_link_%d", (int)getpid());
	cr_assert_eq(mkdir(dir, 0700), 0);
	snprintf(src, sizeof src, "%s/w.npz", dir);
	snprintf(dst, sizeof dst, "%s/out.npz", dir);
	snprintf(bad, sizeof bad, "%s/bad.npz", dir);
	push(&l, "big", 1, (int64_t[]){9 * 1024 * 1024 + 7});   /* 36 MiB: two parts */
	push(&l, "small", 2, (int64_t[]){3, 5});
	cr_assert_eq(enpu_npz_write(src, &l, &e), 0, "%s", e.message);
	cr_assert_eq(enpu_sha256_file(src, want, &e), 0);

	cr_assert_eq(enpu_npz_scan(src, "w.npz", NULL, &ix, &e), 0, "%s", e.message);
	cr_assert_eq(ix.all_stored, 1);
	cr_assert_eq(enpu_npz_link_from(&ix, names, 1, dst, 2, &hard, want, &sz, &e), 0, "a member left out");
	cr_assert_neq(access(dst, F_OK), 0);
	for (int threads = 1; threads <= 3; threads++) {
		cr_assert_eq(enpu_npz_link_from(&ix, names, 2, dst, threads, &hard, want, &sz, &e), 1, "%s", e.message);
		cr_assert_eq(stat(src, &a), 0);
		cr_assert_eq(stat(dst, &b), 0);
		cr_assert(a.st_ino == b.st_ino && a.st_dev == b.st_dev, "not a link of the file");
		cr_assert_eq(sz, (uint64_t)a.st_size);
		unlink(dst);
	}
	/* not to be linked: a copy of the same bytes, hashed */
	cr_assert_eq(enpu_npz_link_from(&ix, names, 2, dst, 2, NULL, want, &sz, &e), 1, "%s", e.message);
	cr_assert_eq(stat(src, &a), 0);
	cr_assert_eq(stat(dst, &b), 0);
	cr_assert_neq(a.st_ino, b.st_ino, "a link where a copy was asked for");
	cr_assert_eq(enpu_sha256_file(dst, got, &e), 0);
	cr_assert_str_eq(got, want);
	unlink(dst);
	/* a digest the bytes do not have (the file changed meanwhile): E0003, no file */
	got[0] = got[0] == '0' ? '1' : '0';
	cr_assert_eq(enpu_npz_link_from(&ix, names, 2, dst, 2, NULL, got, &sz, &e), -1);
	cr_assert_eq(e.code, ENPU_E_IO);
	cr_assert_neq(access(dst, F_OK), 0);
	/* a flipped byte early in the big member's data, then past its first 32 MiB */
	for (int k = 0; k < 2; k++) {
		size_t len;
		unsigned char *buf = slurp(src, &len);
		FILE *f;
		enpu_npz_index bx;
		size_t at = (size_t)(k ? 33u << 20 : 1000u);
		buf[at] ^= 0x10;
		cr_assert(f = fopen(bad, "wb"));
		cr_assert_eq(fwrite(buf, 1, len, f), len);
		fclose(f);
		free(buf);
		e = (enpu_err)ENPU_ERR_INIT;
		cr_assert_eq(enpu_npz_scan(bad, "bad.npz", NULL, &bx, &e), 0, "%s", e.message);
		cr_assert_eq(enpu_npz_link_from(&bx, names, 2, dst, 2, &hard, want, &sz, &e), -1, "byte %zu", at);
		cr_assert_eq(e.code, ENPU_E_NPY);
		cr_assert(strstr(e.message, "CRC mismatch") && strstr(e.message, "'big'"), "%s", e.message);
		cr_assert_neq(access(dst, F_OK), 0, "a file was left");
		enpu_npz_index_free(&bx);
	}
	enpu_npz_index_free(&ix);

	/* deflated members: not the file as it is */
	{
		char path[512];
		snprintf(path, sizeof path, DATA "savez_compressed.npz");
		cr_assert_eq(enpu_npz_scan(path, "c.npz", NULL, &ix, &e), 0, "%s", e.message);
		cr_assert_eq(ix.all_stored, 0);
		const char **all = calloc(ix.meta.n, sizeof *all);
		for (size_t k = 0; k < ix.meta.n; k++)
			all[k] = ix.meta.items[k].name;
		cr_assert_eq(enpu_npz_link_from(&ix, all, ix.meta.n, dst, 2, &hard, want, &sz, &e), 0);
		cr_assert_neq(access(dst, F_OK), 0);
		free(all);
		enpu_npz_index_free(&ix);
	}
	enpu_tlist_free(&l);
	unlink(src);
	unlink(bad);
	rmdir(dir);
}

/* test_tensor.c: shapes (overflow-checked numel, formatting), tensor lists. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "tensor.h"
#include "digest.h"

Test(tensor, numel_checks_overflow)
{
	enpu_shape s = {2, {3, 4}};
	uint64_t n = 0;

	cr_assert_eq(enpu_shape_numel(&s, &n), 0);
	cr_assert_eq(n, 12);
	s.ndim = 0;
	cr_assert_eq(enpu_shape_numel(&s, &n), 0);
	cr_assert_eq(n, 1);
	enpu_shape big = {4, {1LL << 20, 1LL << 20, 1LL << 20, 1LL << 20}};
	cr_assert_eq(enpu_shape_numel(&big, &n), -1);
	enpu_shape neg = {2, {3, -1}};
	cr_assert_eq(enpu_shape_numel(&neg, &n), -1);
}

Test(tensor, shape_strings)
{
	char b[64];
	enpu_shape s = {2, {1, 4}}, v = {1, {8}}, z = {0, {0}};

	cr_assert_str_eq(enpu_shape_str(&s, b, sizeof(b)), "[1, 4]");
	cr_assert_str_eq(enpu_shape_pystr(&s, b, sizeof(b)), "(1, 4)");
	cr_assert_str_eq(enpu_shape_pystr(&v, b, sizeof(b)), "(8,)");
	cr_assert_str_eq(enpu_shape_pystr(&z, b, sizeof(b)), "()");
	cr_assert_str_eq(enpu_shape_str(&z, b, sizeof(b)), "[]");
}

/* Extreme dims in full, and a cut like snprintf's at every cap. */
Test(tensor, shape_strings_extremes_and_cuts)
{
	char b[256], want[256];
	enpu_shape big = {8, {INT64_MIN, INT64_MAX, -1, 0, 7, 1000000000000LL, 3, -42}};
	const char *full = "[-9223372036854775808, 9223372036854775807, -1, 0, 7, "
			   "1000000000000, 3, -42]";

	cr_assert_str_eq(enpu_shape_str(&big, b, sizeof b), full);
	for (size_t cap = 1; cap <= strlen(full) + 1; cap++) {
		snprintf(want, cap, "%s", full);
		cr_assert_str_eq(enpu_shape_str(&big, b, cap), want, "cap %zu", cap);
	}
	big.ndim = 1;
	cr_assert_str_eq(enpu_shape_pystr(&big, b, sizeof b), "(-9223372036854775808,)");
}

Test(tensor, alloc_respects_limits_and_lists_own)
{
	enpu_limits lim = *enpu_limits_default();
	enpu_tensor t = {0};
	enpu_tlist l = ENPU_TLIST_INIT;
	enpu_err e = ENPU_ERR_INIT;

	lim.max_tensor_elems = 10;
	t.name = strdup("w");
	t.shape = (enpu_shape){2, {3, 4}};
	cr_assert_eq(enpu_tensor_alloc(&t, &lim, &e), -1);
	cr_assert_eq(e.code, ENPU_E_LIMIT);
	t.shape = (enpu_shape){2, {2, 4}};
	cr_assert_eq(enpu_tensor_alloc(&t, &lim, &e), 0);
	t.data[7] = 1.5f;
	for (int i = 0; i < 20; i++) {
		enpu_tensor u = {0};
		char nm[16];
		snprintf(nm, sizeof(nm), "t%d", i);
		u.name = strdup(nm);
		u.shape = (enpu_shape){1, {i + 1}};
		cr_assert_eq(enpu_tensor_alloc(&u, NULL, &e), 0);
		cr_assert_eq(enpu_tlist_push(&l, &u, &e), 0);
		cr_assert_null(u.name);
	}
	cr_assert_eq(enpu_tlist_push(&l, &t, &e), 0);
	cr_assert_eq(enpu_tlist_find(&l, "w")->data[7], 1.5f);
	cr_assert_eq(enpu_tlist_find(&l, "t19")->shape.dim[0], 20);
	cr_assert_null(enpu_tlist_find(&l, "nope"));
	enpu_tlist_free(&l);
}

/* A copy is deep: every name, dtype, shape and byte, appended after what
 * the destination held, and changing it changes nothing of the source. */
Test(tensor, tlist_copy_is_deep)
{
	enpu_tlist src = ENPU_TLIST_INIT, dst = ENPU_TLIST_INIT;
	enpu_err e = ENPU_ERR_INIT;
	enpu_tensor a = {0}, b = {0}, c = {0};

	a.name = strdup("x");
	a.shape = (enpu_shape){2, {2, 3}};
	cr_assert_eq(enpu_tensor_alloc(&a, NULL, &e), 0);
	for (int i = 0; i < 6; i++)
		a.data[i] = (float)i - 2.5f;
	b.name = strdup("idx");
	b.dtype = ENPU_DT_I64;
	b.shape = (enpu_shape){1, {2}};
	cr_assert_eq(enpu_tensor_alloc(&b, NULL, &e), 0);
	b.i64[0] = -7;
	b.i64[1] = INT64_MAX;
	c.name = strdup("scalar0");
	c.shape = (enpu_shape){1, {0}};   /* no elements */
	cr_assert_eq(enpu_tensor_alloc(&c, NULL, &e), 0);
	cr_assert_eq(enpu_tlist_push(&src, &a, &e), 0);
	cr_assert_eq(enpu_tlist_push(&src, &b, &e), 0);
	cr_assert_eq(enpu_tlist_push(&src, &c, &e), 0);
	cr_assert_eq(enpu_tlist_copy(&src, &dst, &e), 0);
	cr_assert_eq(enpu_tlist_copy(&src, &dst, &e), 0, "appends");
	cr_assert_eq(dst.n, 6);
	for (size_t k = 0; k < dst.n; k++) {
		const enpu_tensor *s = &src.items[k % 3], *d = &dst.items[k];
		cr_assert_str_eq(d->name, s->name);
		cr_assert_neq(d->name, s->name, "its own name");
		cr_assert_eq(d->dtype, s->dtype);
		cr_assert(enpu_shape_eq(&d->shape, &s->shape));
		cr_assert(d->bytes && d->bytes != s->bytes, "its own data");
	}
	cr_assert_eq(memcmp(dst.items[0].data, src.items[0].data, 6 * sizeof(float)), 0);
	cr_assert_eq(dst.items[4].i64[1], INT64_MAX);
	cr_assert_eq(dst.items[4].i64[0], -7);
	dst.items[0].data[5] = 99.0f;
	cr_assert_eq(src.items[0].data[5], 2.5f);
	enpu_tlist_free(&src);
	cr_assert_eq(dst.items[3].data[1], -1.5f, "outlives its source");
	enpu_tlist_free(&dst);
}

Test(digest, sha256_known_vectors)
{
	char h[65];
	enpu_sha256 *c;

	enpu_sha256_hex("abc", 3, h);
	cr_assert_str_eq(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	enpu_sha256_hex("", 0, h);
	cr_assert_str_eq(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	c = enpu_sha256_new();
	enpu_sha256_update(c, "a", 1);
	enpu_sha256_update(c, "bc", 2);
	cr_assert_eq(enpu_sha256_final(c, h), 0);
	cr_assert_str_eq(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	cr_assert(enpu_is_sha256_hex(h));
	h[3] = 'G';
	cr_assert_not(enpu_is_sha256_hex(h));
	cr_assert_not(enpu_is_sha256_hex("abc"));
	cr_assert_not(enpu_is_sha256_hex("BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD"));
}

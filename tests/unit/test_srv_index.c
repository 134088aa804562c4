/* test_srv_index.c: the cache's in-memory index (server/cache/cas_index.c):
 * the LRU order of blobs and its moves, sizes and counts, the reverse maps
 * blob -> artifacts and artifact -> action-cache keys as entries come and
 * go, artifacts that lost a blob, the merged newest-first listing and its
 * cursor, and the mark/sweep that reconciles the index with a disk. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cas_index.h"

static srv_index *ix;

static void setup(void)
{
	ix = ix_new();
	cr_assert_not_null(ix);
}

static void teardown(void)
{
	ix_free(ix);
}

TestSuite(index, .init = setup, .fini = teardown);

/* A digest-looking id: 64 hex of c. */
static const char *hexid(char c)
{
	static char buf[8][65];
	static int k;
	char *b = buf[k++ % 8];

	memset(b, c, 64);
	b[64] = '\0';
	return b;
}

static struct timespec at(long s)
{
	struct timespec t = {1700000000 + s, 0};
	return t;
}

Test(index, lru_is_oldest_first_and_a_touch_moves_to_the_newest_end)
{
	struct timespec t1 = at(1), t2 = at(2), t3 = at(3), t4 = at(4);

	cr_assert_eq(ix_blob_put(ix, hexid('b'), 10, &t2), 0);
	cr_assert_eq(ix_blob_put(ix, hexid('a'), 20, &t1), 0);
	cr_assert_eq(ix_blob_put(ix, hexid('c'), 30, &t3), 0);
	cr_expect_str_eq(ix_blob_digest(ix_lru_first(ix)), hexid('a'));
	cr_expect_str_eq(ix_blob_digest(ix_lru_next(ix, ix_lru_first(ix))), hexid('b'));
	cr_assert_eq(ix_blob_touch(ix, hexid('a'), &t4), 1);
	cr_expect_str_eq(ix_blob_digest(ix_lru_first(ix)), hexid('b'), "a touched: b is oldest");
	const ix_blob *b = ix_lru_first(ix);
	b = ix_lru_next(ix, b);
	b = ix_lru_next(ix, b);
	cr_expect_str_eq(ix_blob_digest(b), hexid('a'), "a is the newest");
	cr_expect_null(ix_lru_next(ix, b));
	cr_expect_eq(ix_blob_touch(ix, hexid('d'), &t4), 0, "absent: nothing to touch");
}

Test(index, sizes_and_counts_follow_puts_and_removals)
{
	struct timespec t = at(1);
	ix_counts k;
	uint64_t sz = 0;

	ix_blob_put(ix, hexid('a'), 100, &t);
	ix_blob_put(ix, hexid('b'), 50, &t);
	ix_counts_get(ix, &k);
	cr_expect_eq(k.blobs, 2);
	cr_expect_eq(k.blob_bytes, 150);
	ix_blob_put(ix, hexid('a'), 70, &t);   /* the same blob again, another size */
	ix_counts_get(ix, &k);
	cr_expect_eq(k.blobs, 2, "a put of a present blob is no new blob");
	cr_expect_eq(k.blob_bytes, 120);
	cr_assert_eq(ix_blob_del(ix, hexid('b'), &sz), 1);
	cr_expect_eq(sz, 50);
	cr_expect_eq(ix_blob_del(ix, hexid('b'), NULL), 0);
	ix_counts_get(ix, &k);
	cr_expect_eq(k.blobs, 1);
	cr_expect_eq(k.blob_bytes, 70);
	cr_expect_eq(ix_blob_get(ix, hexid('a'), &sz, NULL), 1);
	cr_expect_eq(sz, 70);
}

Test(index, a_later_put_refreshes_the_last_use_an_earlier_one_does_not)
{
	struct timespec t1 = at(1), t2 = at(2), t5 = at(5), t6 = at(6), u;

	ix_blob_put(ix, hexid('a'), 1, &t2);
	ix_blob_put(ix, hexid('b'), 1, &t5);
	ix_blob_put(ix, hexid('a'), 1, &t1);
	ix_blob_get(ix, hexid('a'), NULL, &u);
	cr_expect_eq(u.tv_sec, t2.tv_sec, "an older time never moves it back");
	ix_blob_put(ix, hexid('a'), 1, &t6);
	cr_expect_str_eq(ix_blob_digest(ix_lru_first(ix)), hexid('b'), "a is now newer than b");
}

Test(index, blob_to_artifacts_and_artifact_to_keys)
{
	struct timespec t = at(1);
	char files1[2][65], files2[2][65], out[4][65];

	snprintf(files1[0], 65, "%s", hexid('1'));   /* shared by both artifacts */
	snprintf(files1[1], 65, "%s", hexid('2'));
	snprintf(files2[0], 65, "%s", hexid('1'));
	snprintf(files2[1], 65, "%s", hexid('3'));
	cr_assert_eq(ix_art_put(ix, hexid('a'), (const char (*)[65])files1, 2, 10, 0), 0);
	cr_assert_eq(ix_art_put(ix, hexid('b'), (const char (*)[65])files2, 2, 10, 0), 0);
	cr_expect_eq(ix_blob_users(ix, hexid('1'), out, 4), 2, "the shared blob: both");
	cr_expect_eq(ix_blob_users(ix, hexid('2'), out, 4), 1);
	cr_expect_str_eq(out[0], hexid('a'));
	cr_expect_eq(ix_blob_users(ix, hexid('3'), out, 4), 1);
	cr_expect_str_eq(out[0], hexid('b'));
	cr_expect_eq(ix_blob_users(ix, hexid('1'), out, 1), 2, "the count past cap");

	ix_ac_put(ix, hexid('k'), hexid('a'), &t);
	ix_ac_put(ix, hexid('l'), hexid('a'), &t);
	ix_ac_put(ix, hexid('m'), hexid('b'), &t);
	cr_expect_eq(ix_ac_keys_for(ix, hexid('a'), out, 4), 2);
	cr_expect_eq(ix_ac_keys_for(ix, hexid('b'), out, 4), 1);
	cr_expect_str_eq(out[0], hexid('m'));
	/* a key put again names another artifact: the map follows */
	ix_ac_put(ix, hexid('l'), hexid('b'), &t);
	cr_expect_eq(ix_ac_keys_for(ix, hexid('a'), out, 4), 1);
	cr_expect_str_eq(out[0], hexid('k'));
	cr_expect_eq(ix_ac_keys_for(ix, hexid('b'), out, 4), 2);

	cr_assert_eq(ix_art_del(ix, hexid('a')), 1);
	cr_expect_eq(ix_blob_users(ix, hexid('1'), out, 4), 1, "a gone: b only");
	cr_expect_str_eq(out[0], hexid('b'));
	cr_expect_eq(ix_blob_users(ix, hexid('2'), out, 4), 0);
	cr_expect_eq(ix_ac_keys_for(ix, NULL, out, 4), 1, "k names the absent a");
	cr_expect_str_eq(out[0], hexid('k'));
	cr_expect_eq(ix_ac_del(ix, hexid('k')), 1);
	cr_expect_eq(ix_ac_keys_for(ix, NULL, out, 4), 0);
}

Test(index, an_artifact_replaced_keeps_one_set_of_pairs)
{
	char f[2][65], out[4][65];
	ix_counts k;

	snprintf(f[0], 65, "%s", hexid('1'));
	snprintf(f[1], 65, "%s", hexid('1'));   /* listed twice */
	cr_assert_eq(ix_art_put(ix, hexid('a'), (const char (*)[65])f, 2, 1, 0), 0);
	cr_assert_eq(ix_art_put(ix, hexid('a'), (const char (*)[65])f, 1, 1, 0), 0);
	cr_expect_eq(ix_blob_users(ix, hexid('1'), out, 4), 1);
	ix_counts_get(ix, &k);
	cr_expect_eq(k.artifacts, 1);
	ix_art_del(ix, hexid('a'));
	cr_expect_eq(ix_blob_users(ix, hexid('1'), out, 4), 0);
}

Test(index, lost_artifacts_are_those_missing_a_blob_or_bad)
{
	struct timespec t = at(1);
	char f[1][65], out[4][65];

	snprintf(f[0], 65, "%s", hexid('1'));
	ix_blob_put(ix, hexid('1'), 5, &t);
	ix_art_put(ix, hexid('a'), (const char (*)[65])f, 1, 5, 0);
	ix_art_put(ix, hexid('b'), NULL, 0, 0, 1);   /* its manifest unreadable */
	cr_expect_eq(ix_art_lost(ix, out, 4), 1);
	cr_expect_str_eq(out[0], hexid('b'));
	ix_blob_del(ix, hexid('1'), NULL);
	cr_expect_eq(ix_art_lost(ix, out, 4), 2, "a lost its blob");
}

Test(index, an_artifacts_last_use_is_its_newest_blobs)
{
	struct timespec t1 = at(1), t7 = at(7);
	char f[2][65];
	ix_entry e[4];
	int more;

	ix_blob_put(ix, hexid('1'), 5, &t1);
	ix_blob_put(ix, hexid('2'), 5, &t7);
	snprintf(f[0], 65, "%s", hexid('1'));
	snprintf(f[1], 65, "%s", hexid('2'));
	ix_art_put(ix, hexid('a'), (const char (*)[65])f, 2, 10, 0);
	cr_assert_eq(ix_page(ix, 1u << IX_ARTIFACT, NULL, 4, e, &more), 1);
	cr_expect_eq(e[0].used.tv_sec, t7.tv_sec);
	cr_expect_eq(e[0].bytes, 10);
}

/* 9 entries of three kinds, two of them at the same time. */
static void fill_listing(void)
{
	struct timespec t;
	int i;

	for (i = 0; i < 4; i++) {
		t = at(10 * i);
		ix_blob_put(ix, hexid((char)('0' + i)), (uint64_t)i, &t);
	}
	for (i = 0; i < 3; i++) {
		t = at(10 * i + 5);
		ix_ac_put(ix, hexid((char)('a' + i)), hexid('f'), &t);
	}
	ix_art_put(ix, hexid('e'), NULL, 0, 0, 0);
	ix_art_put(ix, hexid('d'), NULL, 0, 0, 0);
	t = at(20);   /* the time of blob '2' */
	ix_art_touch(ix, hexid('e'), &t);
	t = at(100);
	ix_art_touch(ix, hexid('d'), &t);
}

Test(index, the_listing_is_newest_first_across_kinds)
{
	ix_entry e[16];
	int n, more, i;

	fill_listing();
	n = ix_page(ix, 7, NULL, 16, e, &more);
	cr_assert_eq(n, 9);
	cr_expect_eq(more, 0);
	cr_expect_str_eq(e[0].id, hexid('d'));
	for (i = 1; i < n; i++)
		cr_expect(e[i - 1].used.tv_sec > e[i].used.tv_sec ||
			  (e[i - 1].used.tv_sec == e[i].used.tv_sec && e[i - 1].kind > e[i].kind),
			  "entry %d is not after entry %d", i, i - 1);
	cr_expect_eq(e[8].kind, IX_BLOB);
	cr_expect_str_eq(e[8].id, hexid('0'));
	n = ix_page(ix, 1u << IX_AC, NULL, 16, e, &more);
	cr_assert_eq(n, 3, "kind filter");
	cr_expect_str_eq(e[0].art, hexid('f'));
	cr_expect_eq(e[0].bytes, -1);
}

Test(index, pages_by_cursor_give_every_entry_once_in_order)
{
	ix_entry all[16], page[2];
	ix_cursor c;
	int n_all, more = 1, got = 0, n, i;

	fill_listing();
	n_all = ix_page(ix, 7, NULL, 16, all, &more);
	cr_assert_eq(more, 0);
	n = ix_page(ix, 7, NULL, 2, page, &more);
	while (n > 0) {
		for (i = 0; i < n; i++, got++) {
			cr_assert_lt(got, n_all);
			cr_expect_str_eq(page[i].id, all[got].id, "page entry %d", got);
			cr_expect_eq(page[i].kind, all[got].kind);
		}
		if (!more)
			break;
		c.used = page[n - 1].used;
		c.kind = page[n - 1].kind;
		memcpy(c.id, page[n - 1].id, 65);
		n = ix_page(ix, 7, &c, 2, page, &more);
	}
	cr_expect_eq(got, n_all);
}

Test(index, a_cursor_whose_entry_went_or_moved_still_continues_after_it)
{
	ix_entry p[3], rest[16];
	ix_cursor c;
	struct timespec t = at(500);
	int n, more;

	fill_listing();
	n = ix_page(ix, 7, NULL, 3, p, &more);
	cr_assert_eq(n, 3);
	c.used = p[2].used;
	c.kind = p[2].kind;
	memcpy(c.id, p[2].id, 65);
	/* the cursor's own entry is touched (moves to the front), one before it goes */
	if (c.kind == IX_BLOB)
		ix_blob_touch(ix, c.id, &t);
	else if (c.kind == IX_AC)
		ix_ac_touch(ix, c.id, &t);
	else
		ix_art_touch(ix, c.id, &t);
	n = ix_page(ix, 7, &c, 16, rest, &more);
	cr_expect_eq(n, 6, "the 6 entries older than the cursor");
	for (int i = 0; i < n; i++)
		cr_expect(rest[i].used.tv_sec <= c.used.tv_sec);
}

Test(index, a_sweep_forgets_what_the_pass_did_not_see_and_keeps_new_entries)
{
	struct timespec t = at(1);
	ix_counts k;

	ix_blob_put(ix, hexid('a'), 1, &t);
	ix_blob_put(ix, hexid('b'), 2, &t);
	ix_ac_put(ix, hexid('k'), hexid('z'), &t);
	ix_art_put(ix, hexid('z'), NULL, 0, 0, 0);
	ix_mark(ix);
	cr_expect_eq(ix_seen(ix, IX_BLOB, hexid('a')), 1);
	cr_expect_eq(ix_seen(ix, IX_BLOB, hexid('c')), 0, "not indexed");
	cr_expect_eq(ix_seen(ix, IX_ARTIFACT, hexid('z')), 1);
	ix_blob_put(ix, hexid('n'), 4, &t);   /* stored during the pass */
	cr_expect_eq(ix_sweep(ix), 2, "b and the entry k");
	ix_counts_get(ix, &k);
	cr_expect_eq(k.blobs, 2);
	cr_expect_eq(k.blob_bytes, 5);
	cr_expect_eq(k.ac, 0);
	cr_expect_eq(k.artifacts, 1);
	cr_expect_eq(ix_blob_get(ix, hexid('n'), NULL, NULL), 1);
}

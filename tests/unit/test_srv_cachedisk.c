/* test_srv_cachedisk.c: the cache's disk layout and the index built from
 * it (server/cache/cas_scan.c): a flat ac/ and artifacts/ (the layout
 * before fan-out directories) migrated at open, also when half migrated;
 * a damaged directory opened without a crash; the counts kept as the
 * cache changes equal to what the disk holds, also after a reopen; and
 * gc's pass forgets what went behind the daemon's back. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "srv.h"
#include "buf.h"
#include "cas.h"
#include "jobs.h"
#include "artifact.h"
#include "cache_util.h"

static char root[256];

static void setup(void)
{
	snprintf(root, sizeof root, "/tmp/enpu-test-cachedisk.XXXXXX");
	cr_assert_not_null(mkdtemp(root));
}

static void teardown(void)
{
	srv_artifact_cache_clear();
	srv_rmtree(root);
}

TestSuite(cachedisk, .init = setup, .fini = teardown);

static srv_cas *open_root(void)
{
	enpu_err e = ENPU_ERR_INIT;
	srv_cas *c = srv_cas_open(root, &e);

	cr_assert_not_null(c, "open: %s", e.message);
	return c;
}

/* Move top/<2 hex>/<name> back to top/<name>: the old, flat layout. */
static void flatten(const char *top, const char *name)
{
	char from[600], to[600];

	snprintf(from, sizeof from, "%s/%s/%.2s/%s", root, top, name, name);
	snprintf(to, sizeof to, "%s/%s/%s", root, top, name);
	cr_assert_eq(rename(from, to), 0, "flatten %s", from);
}

static int exists(const char *fmt, const char *a, const char *b)
{
	char p[700];
	struct stat st;

	snprintf(p, sizeof p, fmt, root, a, b);
	return stat(p, &st) == 0;
}

Test(cachedisk, a_flat_cache_is_migrated_at_open)
{
	srv_cas *c = open_root();
	enpu_err e = ENPU_ERR_INIT;
	char id[65], got[65];
	const char *key1 = "1111111111111111111111111111111111111111111111111111111111111111";
	const char *key2 = "2222222222222222222222222222222222222222222222222222222222222222";
	srv_cache_stats st;

	compile_example(c, "tiny_mlp", id);
	cr_assert_eq(srv_ac_put(c, key1, id, &e), 0, "%s", e.message);
	cr_assert_eq(srv_ac_put(c, key2, id, &e), 0, "%s", e.message);
	srv_cas_close(c);
	flatten("artifacts", id);
	flatten("ac", key1);
	/* key2 stays where it is: a migration a crash cut short */
	c = open_root();
	cr_expect(exists("%s/artifacts/%.2s/%s", id, id), "the artifact is in its fan-out directory");
	cr_expect_not(exists("%s/artifacts/%s%s", id, ""), "and no longer flat");
	cr_expect(exists("%s/ac/%.2s/%s", key1, key1));
	cr_expect_not(exists("%s/ac/%s%s", key1, ""));
	cr_expect_eq(srv_artifact_present(c, id), 1);
	cr_expect_eq(srv_artifact_verify(c, id, NULL, NULL), 1, "its files intact (the same inodes)");
	cr_expect_eq(srv_ac_get(c, key1, got), 1);
	cr_expect_str_eq(got, id);
	cr_expect_eq(srv_ac_get(c, key2, got), 1);
	srv_cas_stats(c, &st);
	cr_expect_eq(st.artifacts, 1);
	cr_expect_eq(st.ac_entries, 2);
	expect_stats_match_disk(c, root);
	/* dropping it finds both its entries through the index */
	cr_expect_eq(srv_artifact_drop(c, id), 1);
	cr_expect_eq(srv_ac_count(c), 0);
	cr_expect_not(exists("%s/ac/%.2s/%s", key2, key2));
	srv_cas_close(c);
}

Test(cachedisk, a_flat_entry_beside_its_migrated_copy_gives_way)
{
	srv_cas *c = open_root();
	enpu_err e = ENPU_ERR_INIT;
	char id[65], p[700];
	const char *key = "3333333333333333333333333333333333333333333333333333333333333333";

	compile_example(c, "tiny_mlp", id);
	cr_assert_eq(srv_ac_put(c, key, id, &e), 0);
	srv_cas_close(c);
	/* a stale flat copy of the entry (the migrated one wins) */
	snprintf(p, sizeof p, "%s/ac/%s", root, key);
	cr_assert_eq(enpu_write_file_atomic(p, "junk", 4, &e), 0);
	c = open_root();
	cr_expect_not(exists("%s/ac/%s%s", key, ""));
	char got[65];
	cr_expect_eq(srv_ac_get(c, key, got), 1);
	cr_expect_str_eq(got, id);
	srv_cas_close(c);
}

Test(cachedisk, a_damaged_directory_opens_and_gc_drops_the_bad_artifact)
{
	srv_cas *c = open_root();
	enpu_err e = ENPU_ERR_INIT;
	char id[65], p[700];
	srv_cache_stats st;
	const char *bad = "abababababababababababababababababababababababababababababababab";

	compile_example(c, "tiny_mlp", id);
	srv_cas_close(c);
	/* strays of every kind */
	snprintf(p, sizeof p, "%s/cas/zz", root);
	cr_assert_eq(mkdir(p, 0755), 0);
	snprintf(p, sizeof p, "%s/cas/ab/%s", root, bad);   /* a directory named like a blob */
	cr_assert_eq(enpu_mkdirs(p, 0755, &e), 0);
	snprintf(p, sizeof p, "%s/cas/00", root);            /* a file where a fan-out dir goes */
	cr_assert_eq(enpu_write_file_atomic(p, "x", 1, &e), 0);
	snprintf(p, sizeof p, "%s/ac/%.2s/%s", root, bad, bad);
	cr_assert_eq(enpu_mkdirs(p, 0755, &e), 0);           /* a directory where an entry goes */
	snprintf(p, sizeof p, "%s/artifacts/%.2s/%s", root, bad, bad);
	cr_assert_eq(enpu_mkdirs(p, 0755, &e), 0);           /* an artifact with no manifest */
	snprintf(p, sizeof p, "%s/artifacts/%.2s/%s/manifest.json", root, bad, bad);
	cr_assert_eq(enpu_write_file_atomic(p, "{not json", 9, &e), 0);
	snprintf(p, sizeof p, "%s/artifacts/not-an-id", root);
	cr_assert_eq(enpu_write_file_atomic(p, "x", 1, &e), 0);
	c = open_root();
	srv_cas_stats(c, &st);
	cr_expect_eq(st.artifacts, 2, "the good one and the bad one");
	cr_expect_eq(st.ac_entries, 0, "a directory is no entry");

	srv_ctx ctx;
	srv_gc_result res;
	memset(&ctx, 0, sizeof ctx);
	ctx.cas = c;
	cr_assert_eq(srv_cache_gc(&ctx, 0, &res), 0);
	cr_expect_eq(res.artifacts_dropped, 1);
	cr_expect_eq(srv_artifact_present(c, id), 1, "the good one stays");
	srv_cas_stats(c, &st);
	cr_expect_eq(st.artifacts, 1);
	srv_cas_close(c);
}

Test(cachedisk, counts_follow_every_change_and_a_reopen)
{
	srv_cas *c = open_root();
	enpu_err e = ENPU_ERR_INIT;
	char id[65], d1[65], d2[65], d3[65];

	compile_example(c, "tiny_mlp", id);
	expect_stats_match_disk(c, root);
	cr_assert_eq(srv_cas_put_mem(c, "one", 3, d1, &e), 0);
	cr_assert_eq(srv_cas_put_mem(c, "two!", 4, d2, &e), 0);
	cr_assert_eq(srv_cas_put_mem(c, "one", 3, d3, &e), 0);   /* stored again */
	cr_assert_eq(srv_ac_put(c, d1, id, &e), 0);
	cr_assert_eq(srv_ac_put(c, d1, id, &e), 0);              /* replaced */
	cr_assert_eq(srv_ac_put(c, d2, id, &e), 0);
	expect_stats_match_disk(c, root);
	cr_expect_eq(srv_cas_remove(c, d2), 1);
	cr_expect_eq(srv_ac_remove(c, d2), 1);
	expect_stats_match_disk(c, root);
	cr_expect_eq(srv_artifact_drop(c, id), 1);
	expect_stats_match_disk(c, root);
	compile_example(c, "tiny_mlp", id);
	cr_assert_eq(srv_ac_put(c, d2, id, &e), 0);
	expect_stats_match_disk(c, root);
	srv_cache_stats before, after;
	srv_cas_stats(c, &before);
	srv_cas_close(c);
	c = open_root();
	srv_cas_stats(c, &after);
	cr_expect_eq(after.blobs, before.blobs);
	cr_expect_eq(after.blob_bytes, before.blob_bytes);
	cr_expect_eq(after.artifacts, before.artifacts);
	cr_expect_eq(after.ac_entries, before.ac_entries);
	expect_stats_match_disk(c, root);
	srv_cas_close(c);
}

Test(cachedisk, gc_forgets_what_went_behind_the_daemons_back)
{
	srv_cas *c = open_root();
	enpu_err e = ENPU_ERR_INIT;
	char d1[65], d2[65], p[4300], dir[4300];
	srv_ctx ctx;
	srv_gc_result res;
	srv_cache_stats st;

	cr_assert_eq(srv_cas_put_mem(c, "one", 3, d1, &e), 0);
	cr_assert_eq(srv_cas_put_mem(c, "two!", 4, d2, &e), 0);
	srv_cas_blob_path(c, d1, p, sizeof p);
	cr_assert_eq(unlink(p), 0);
	/* and a blob put by hand: indexed by the pass */
	snprintf(dir, sizeof dir, "%s/cas/2c", root);
	enpu_mkdirs(dir, 0755, &e);
	srv_cas_blob_path(c, "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824", p,
			  sizeof p);
	cr_assert_eq(enpu_write_file_atomic(p, "hello", 5, &e), 0);
	srv_cas_stats(c, &st);
	cr_expect_eq(st.blobs, 2, "the index does not watch the disk");
	memset(&ctx, 0, sizeof ctx);
	ctx.cas = c;
	cr_assert_eq(srv_cache_gc(&ctx, 0, &res), 0);
	expect_stats_match_disk(c, root);
	srv_cas_stats(c, &st);
	cr_expect_eq(st.blobs, 2);
	cr_expect_eq(st.blob_bytes, 9);
	srv_cas_close(c);
}

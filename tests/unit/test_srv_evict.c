/* test_srv_evict.c: the --cache-max bound (server/cache/evict.c) on a real cache
 * directory: least recently used blobs go first, touched blobs count as
 * used, blobs that a queued job needs stay, and nothing happens under the
 * bound or with no bound. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "srv.h"
#include "cas.h"
#include "jobs.h"
#include "artifact.h"
#include "cache_util.h"
#include "models.h"
#include "cas_int.h"   /* CAS_TAKE_PER_DIR */

static char root[256];
static srv_ctx ctx;

static void setup(void)
{
	enpu_err e = ENPU_ERR_INIT;

	snprintf(root, sizeof root, "/tmp/enpu-test-evict.XXXXXX");
	cr_assert_not_null(mkdtemp(root));
	memset(&ctx, 0, sizeof ctx);
	ctx.lim = enpu_limits_default();
	ctx.cas = srv_cas_open(root, &e);
	cr_assert_not_null(ctx.cas, "%s", e.message);
	/* no workers would take a job: queued ones stay queued (pinned) */
	ctx.jobs = srv_jobs_start(ctx.cas, ctx.lim, 1, 1, 16, &e);
	cr_assert_not_null(ctx.jobs, "%s", e.message);
	ctx.models = srv_models_open(ctx.cas, &e);
	cr_assert_not_null(ctx.models, "%s", e.message);
}

static void teardown(void)
{
	srv_models_close(ctx.models);
	srv_jobs_free(ctx.jobs);
	srv_cas_close(ctx.cas);
	srv_artifact_cache_clear();
	srv_rmtree(root);
}

/* A 1000-byte blob of fill, last used `age` seconds ago. */
static void put_aged(char fill, int age, char dig[65])
{
	char buf[1000], path[4300];
	enpu_err e = ENPU_ERR_INIT;
	struct timespec t[2];

	memset(buf, fill, sizeof buf);
	cr_assert_eq(srv_cas_put_mem(ctx.cas, buf, sizeof buf, dig, &e), 0, "%s", e.message);
	srv_cas_blob_path(ctx.cas, dig, path, sizeof path);
	clock_gettime(CLOCK_REALTIME, &t[0]);
	t[0].tv_sec -= age;
	t[1] = t[0];
	cr_assert_eq(utimensat(AT_FDCWD, path, t, 0), 0);
}

/* A reclaimer that loses count hangs srv_cas_reclaim_wait: each test fails
 * in 20 s, not at the mutant runner's timeout. */
TestSuite(evict, .init = setup, .fini = teardown, .timeout = 20);

Test(evict, oldest_first_down_to_the_bound)
{
	char a[65], b[65], c[65], d[65];

	put_aged('a', 400, a);
	put_aged('b', 300, b);
	put_aged('c', 200, c);
	put_aged('d', 100, d);
	ctx.cfg.cache_max = 2500;
	srv_cache_enforce(&ctx);
	cr_expect_not(srv_cas_has(ctx.cas, a, NULL), "the oldest goes");
	cr_expect_not(srv_cas_has(ctx.cas, b, NULL), "the second oldest goes");
	cr_expect(srv_cas_has(ctx.cas, c, NULL));
	cr_expect(srv_cas_has(ctx.cas, d, NULL));
}

Test(evict, a_touch_makes_a_blob_recent)
{
	char a[65], b[65], c[65];

	put_aged('a', 300, a);
	put_aged('b', 200, b);
	put_aged('c', 100, c);
	srv_cas_touch(ctx.cas, a);
	ctx.cfg.cache_max = 2000;
	srv_cache_enforce(&ctx);
	cr_expect(srv_cas_has(ctx.cas, a, NULL), "touched: kept");
	cr_expect_not(srv_cas_has(ctx.cas, b, NULL), "now the least recently used");
	cr_expect(srv_cas_has(ctx.cas, c, NULL));
}

Test(evict, unbounded_or_under_the_bound_keeps_everything)
{
	char a[65], b[65];

	put_aged('a', 300, a);
	put_aged('b', 200, b);
	ctx.cfg.cache_max = 0;
	srv_cache_enforce(&ctx);
	ctx.cfg.cache_max = 2000;
	srv_cache_enforce(&ctx);
	cr_expect(srv_cas_has(ctx.cas, a, NULL));
	cr_expect(srv_cas_has(ctx.cas, b, NULL));
}

Test(evict, a_queued_jobs_input_stays)
{
	char a[65], b[65], c[65], id[ENPU_JOB_ID_SIZE];
	enpu_err e = ENPU_ERR_INIT;

	put_aged('a', 300, a);
	put_aged('b', 200, b);
	put_aged('c', 100, c);
	/* a board job (no board takes it here) that needs the oldest blob */
	cr_assert_eq(srv_jobs_submit_remote(ctx.jobs, c, "zynq_ps", a, "in.npz", 60, id, &e), 0,
		     "%s", e.message);
	ctx.cfg.cache_max = 1000;
	srv_cache_enforce(&ctx);
	cr_expect(srv_cas_has(ctx.cas, a, NULL), "pinned by the queued job");
	cr_expect_not(srv_cas_has(ctx.cas, b, NULL));
	cr_expect(srv_cas_has(ctx.cas, c, NULL), "pinned: named as the job's artifact");
}

Test(evict, evictions_are_counted)
{
	char a[65], b[65];
	srv_cache_stats st;

	put_aged('a', 300, a);
	put_aged('b', 200, b);
	ctx.cfg.cache_max = 1500;
	srv_cache_enforce(&ctx);
	srv_cas_stats(ctx.cas, &st);
	cr_expect_eq(st.evictions, 1);
	cr_expect_eq(st.evicted_bytes, 1000);
	cr_expect_eq(st.blobs, 1);
	cr_expect_eq(st.blob_bytes, 1000);
}

Test(evict, pinned_reports_what_a_job_needs)
{
	char a[65], b[65], c[65], id[ENPU_JOB_ID_SIZE];
	enpu_err e = ENPU_ERR_INIT;

	put_aged('a', 300, a);
	put_aged('b', 200, b);
	put_aged('c', 100, c);
	cr_assert_eq(srv_jobs_submit_remote(ctx.jobs, c, "zynq_ps", a, "in.npz", 60, id, &e), 0,
		     "%s", e.message);
	cr_expect_eq(srv_cache_pinned(&ctx, a), 1);
	cr_expect_eq(srv_cache_pinned(&ctx, c), 1);
	cr_expect_eq(srv_cache_pinned(&ctx, b), 0);
}

/* A deployed model's artifact (its files and manifest) is never evicted,
 * whatever the bound; once the model is retired it goes as any other. */
Test(evict, a_deployed_models_artifact_stays)
{
	srv_ident alice = {"alice", 0};
	enpu_err e = ENPU_ERR_INIT;
	char art[65], a[65];
	long v;

	compile_example(ctx.cas, "tiny_mlp", art);
	put_aged('a', 300, a);
	cr_assert_eq(srv_models_deploy(ctx.models, "mlp", 0, art, "cpu_ref", &alice, &v, &e), 1,
		     "%s", e.message);
	cr_expect_eq(srv_cache_pinned(&ctx, art), 1);
	ctx.cfg.cache_max = 1;
	srv_cache_enforce(&ctx);
	cr_expect_not(srv_cas_has(ctx.cas, a, NULL), "an unpinned blob goes");
	cr_expect_eq(srv_artifact_present(ctx.cas, art), 1, "the model's artifact stays");
	cr_assert_eq(srv_models_retire(ctx.models, "mlp", 0, &alice, &e), 0, "%s", e.message);
	cr_expect_eq(srv_cache_pinned(&ctx, art), 0);
	srv_cache_enforce(&ctx);
	cr_expect_eq(srv_artifact_present(ctx.cas, art), 0, "retired: evicted");
}

Test(evict, gc_evicts_and_drops_dangling_entries_and_stale_tmp)
{
	char a[65], b[65], c[65], t[4300];
	enpu_err e = ENPU_ERR_INIT;
	srv_gc_result res;
	struct timespec old[2] = {{1000000, 0}, {1000000, 0}};

	put_aged('a', 300, a);
	put_aged('b', 200, b);
	put_aged('c', 100, c);
	/* an action-cache entry naming an artifact that is not there */
	cr_assert_eq(srv_ac_put(ctx.cas, a, c, &e), 0);
	srv_cas_tmpname(ctx.cas, ".up", t, sizeof t);
	cr_assert_eq(enpu_write_file_atomic(t, "x", 1, &e), 0);
	cr_assert_eq(utimensat(AT_FDCWD, t, old, 0), 0);

	ctx.cfg.cache_max = 2000;
	cr_assert_eq(srv_cache_gc(&ctx, 1, &res), 0);
	cr_expect_eq(res.evicted, 1);
	cr_expect_eq(res.evicted_bytes, 1000);
	cr_expect_eq(res.held_bytes, 2000);
	cr_expect_eq(res.ac_dropped, 1);
	cr_expect_eq(res.tmp_removed, 1);
	cr_expect_eq(res.verified, 3);
	cr_expect_eq(res.integrity_failures, 0);
	cr_expect_not(srv_cas_has(ctx.cas, a, NULL), "least recently used");
	cr_expect_eq(srv_ac_count(ctx.cas), 0);
}

Test(evict, gc_verify_drops_bad_blobs)
{
	char a[65], path[4300];
	srv_gc_result res;
	FILE *f;

	put_aged('a', 300, a);
	srv_cas_blob_path(ctx.cas, a, path, sizeof path);
	f = fopen(path, "r+b");
	cr_assert_not_null(f);
	fputc('z', f);
	fclose(f);
	cr_assert_eq(srv_cache_gc(&ctx, 0, &res), 0);
	cr_expect_eq(res.verified, 0);
	cr_expect(srv_cas_has(ctx.cas, a, NULL), "not verified without verify");
	cr_assert_eq(srv_cache_gc(&ctx, 1, &res), 0);
	cr_expect_eq(res.integrity_failures, 1);
	cr_expect_not(srv_cas_has(ctx.cas, a, NULL));
}


/* Close and reopen the cache (and the job table on it): the index is
 * built again from the disk. */
static void reopen(void)
{
	enpu_err e = ENPU_ERR_INIT;

	srv_jobs_free(ctx.jobs);
	srv_cas_close(ctx.cas);
	ctx.cas = srv_cas_open(root, &e);
	cr_assert_not_null(ctx.cas, "%s", e.message);
	ctx.jobs = srv_jobs_start(ctx.cas, ctx.lim, 1, 1, 16, &e);
	cr_assert_not_null(ctx.jobs, "%s", e.message);
}

Test(evict, the_lru_built_at_open_follows_the_last_uses_on_disk)
{
	char a[65], b[65], c[65];

	/* stored newest first, aged oldest first: the disk's times decide */
	put_aged('c', 100, c);
	put_aged('b', 200, b);
	put_aged('a', 300, a);
	reopen();
	ctx.cfg.cache_max = 1000;
	srv_cache_enforce(&ctx);
	cr_expect_not(srv_cas_has(ctx.cas, a, NULL), "the oldest on disk");
	cr_expect_not(srv_cas_has(ctx.cas, b, NULL));
	cr_expect(srv_cas_has(ctx.cas, c, NULL));
	expect_stats_match_disk(ctx.cas, root);
}

/* Age every blob file of artifact id (its files are the blobs' inodes). */
static void age_artifact(const char *id, int age)
{
	enpu_manifest m;
	enpu_err e = ENPU_ERR_INIT;
	char path[4300];
	struct timespec t[2];

	cr_assert_eq(srv_artifact_manifest(ctx.cas, id, &m, NULL, &e), 0, "%s", e.message);
	clock_gettime(CLOCK_REALTIME, &t[0]);
	t[0].tv_sec -= age;
	t[1] = t[0];
	for (int i = 0; i < m.n; i++) {
		srv_cas_blob_path(ctx.cas, m.files[i].sha256, path, sizeof path);
		cr_assert_eq(utimensat(AT_FDCWD, path, t, 0), 0);
	}
	enpu_manifest_free(&m);
}

static int tmp_entries(void)
{
	char p[512];
	DIR *d;
	struct dirent *de;
	int n = 0;

	snprintf(p, sizeof p, "%s/tmp", root);
	d = opendir(p);
	cr_assert(d);
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return n;
}

Test(evict, an_evicted_blob_takes_the_artifacts_listing_it_and_their_entries)
{
	enpu_err e = ENPU_ERR_INIT;
	char mlp[65], cnn[65], got[65], p[600];
	const char *k1 = "1111111111111111111111111111111111111111111111111111111111111111";
	const char *k2 = "2222222222222222222222222222222222222222222222222222222222222222";
	srv_cache_stats st;
	struct stat sb;

	compile_example(ctx.cas, "tiny_mlp", mlp);
	compile_example(ctx.cas, "tiny_cnn", cnn);
	cr_assert_eq(srv_ac_put(ctx.cas, k1, mlp, &e), 0);
	cr_assert_eq(srv_ac_put(ctx.cas, k2, cnn, &e), 0);
	age_artifact(mlp, 1000);
	reopen();
	srv_cas_stats(ctx.cas, &st);
	/* one byte under: the oldest blob (one of tiny_mlp's) goes */
	ctx.cfg.cache_max = st.blob_bytes - 1;
	srv_cache_enforce(&ctx);
	cr_expect_eq(srv_artifact_present(ctx.cas, mlp), 0, "tiny_mlp lost a blob: dropped");
	cr_expect_eq(srv_ac_get(ctx.cas, k1, got), 0, "with its entry");
	cr_expect_eq(srv_artifact_present(ctx.cas, cnn), 1, "tiny_cnn untouched");
	cr_expect_eq(srv_ac_get(ctx.cas, k2, got), 1);
	srv_cas_stats(ctx.cas, &st);
	cr_expect_eq(st.evictions, 1, "one blob was enough");
	cr_expect_eq(st.artifacts, 1);
	cr_expect_eq(st.ac_entries, 1);
	/* blobs, the entry and the directory went through tmp/ to the
	 * reclaimer, and are gone once it is done */
	srv_cas_reclaim_wait(ctx.cas);
	cr_expect_eq(srv_cas_reclaiming(ctx.cas), 0);
	cr_expect_eq(tmp_entries(), 0);
	snprintf(p, sizeof p, "%s/artifacts/%.2s/%s", root, mlp, mlp);
	cr_expect_neq(lstat(p, &sb), 0, "the artifact's directory is removed");
	snprintf(p, sizeof p, "%s/ac/%.2s/%s", root, k1, k1);
	cr_expect_neq(lstat(p, &sb), 0, "its action-cache file is removed");
	expect_stats_match_disk(ctx.cas, root);
}

Test(evict, a_queued_jobs_artifact_keeps_its_blobs_and_stays)
{
	char mlp[65], in[65], id[ENPU_JOB_ID_SIZE];
	enpu_err e = ENPU_ERR_INIT;
	srv_cache_stats st;

	compile_example(ctx.cas, "tiny_mlp", mlp);
	put_aged('i', 10, in);
	age_artifact(mlp, 1000);
	reopen();
	cr_assert_eq(srv_jobs_submit_remote(ctx.jobs, mlp, "zynq_ps", in, "in.npz", 60, id, &e), 0,
		     "%s", e.message);
	ctx.cfg.cache_max = 1;
	srv_cache_enforce(&ctx);
	cr_expect_eq(srv_artifact_present(ctx.cas, mlp), 1, "pinned: every file stays");
	cr_expect(srv_cas_has(ctx.cas, in, NULL), "the input too");
	srv_cas_stats(ctx.cas, &st);
	cr_expect_gt(st.blob_bytes, 1, "held past the bound: the rest is in use");
	expect_stats_match_disk(ctx.cas, root);
}

Test(evict, stores_after_an_eviction_are_counted_and_evicted_in_turn)
{
	char a[65], b[65], c[65];

	put_aged('a', 300, a);
	put_aged('b', 200, b);
	ctx.cfg.cache_max = 2000;
	srv_cache_enforce(&ctx);
	expect_stats_match_disk(ctx.cas, root);
	put_aged('c', 100, c);   /* over: a (the oldest) goes */
	srv_cache_enforce(&ctx);
	cr_expect_not(srv_cas_has(ctx.cas, a, NULL));
	cr_expect(srv_cas_has(ctx.cas, b, NULL));
	cr_expect(srv_cas_has(ctx.cas, c, NULL));
	srv_cas_touch(ctx.cas, b);
	put_aged('d', 50, a);    /* over again: c is now the least recently used */
	srv_cache_enforce(&ctx);
	cr_expect(srv_cas_has(ctx.cas, b, NULL), "touched: kept");
	cr_expect_not(srv_cas_has(ctx.cas, c, NULL));
	expect_stats_match_disk(ctx.cas, root);
}
Test(evict, removals_left_by_a_crash_go_at_the_next_clean_whatever_their_age)
{
	char rm[4300], up[4300], sub[4400];
	enpu_err e = ENPU_ERR_INIT;

	srv_cas_tmpname(ctx.cas, ".rm", rm, sizeof rm);
	cr_assert_eq(mkdir(rm, 0755), 0);
	snprintf(sub, sizeof sub, "%s/f", rm);
	cr_assert_eq(enpu_write_file_atomic(sub, "x", 1, &e), 0);
	srv_cas_tmpname(ctx.cas, ".up", up, sizeof up);
	cr_assert_eq(enpu_write_file_atomic(up, "x", 1, &e), 0);
	cr_expect_eq(srv_cas_clean_tmp(ctx.cas, SRV_TMP_STALE), 1, "the fresh removal only");
	cr_expect_eq(tmp_entries(), 1, "a fresh upload stays");
}

/* n removals in tmp/ as an eviction leaves them, onto l: files, and
 * (every other one) a directory tree a/b */
static void make_removals(srv_paths *l, int n)
{
	char p[4300], f[4400];
	enpu_err e = ENPU_ERR_INIT;

	for (int i = 0; i < n; i++) {
		srv_cas_tmpname(ctx.cas, ".rm", p, sizeof p);
		if (i % 2) {
			cr_assert_eq(mkdir(p, 0755), 0);
			snprintf(f, sizeof f, "%s/a", p);
			cr_assert_eq(mkdir(f, 0755), 0);
			snprintf(f, sizeof f, "%s/a/b", p);
		} else {
			snprintf(f, sizeof f, "%s", p);
		}
		cr_assert_eq(enpu_write_file_atomic(f, "x", 1, &e), 0);
		cr_assert_eq(srv_paths_add(l, p), 0);
	}
}

Test(evict, a_path_list_is_removed_on_many_threads)
{
	srv_paths l = SRV_PATHS_INIT;

	make_removals(&l, 3 * SRV_RECLAIM_THREADS + 1);
	cr_expect_eq(tmp_entries(), 3 * SRV_RECLAIM_THREADS + 1);
	srv_paths_remove(&l);
	cr_expect_eq(tmp_entries(), 0);
	cr_expect_eq(l.n, 0);
	cr_expect_null(l.p);
	srv_paths_remove(&l);   /* empty: nothing to do */
}

Test(evict, the_reclaimer_removes_what_it_is_handed_in_the_background)
{
	srv_paths l = SRV_PATHS_INIT;
	int round;

	for (round = 0; round < 2; round++) {   /* the thread, started, then reused */
		make_removals(&l, 2 * SRV_RECLAIM_THREADS + 3);
		srv_cas_reclaim(ctx.cas, &l);
		cr_expect_eq(l.n, 0, "handed over: the list is empty");
		cr_expect_null(l.p);
		srv_cas_reclaim_wait(ctx.cas);
		cr_expect_eq(srv_cas_reclaiming(ctx.cas), 0);
		cr_expect_eq(tmp_entries(), 0, "round %d: all removed", round);
	}
	srv_cas_reclaim(ctx.cas, &l);   /* empty: nothing to do */
	srv_cas_reclaim_wait(ctx.cas);
}

/* What srv_cas_take takes goes into the list's one directory under tmp/
 * (a path of the list once sealed), never as loose names in tmp/. */
Test(evict, takes_go_into_one_directory_of_the_list)
{
	srv_paths l = SRV_PATHS_INIT;
	enpu_err e = ENPU_ERR_INIT;
	char f[4300];
	struct stat sb;
	int i;

	for (i = 0; i < 5; i++) {
		snprintf(f, sizeof f, "%s/take%d", root, i);
		cr_assert_eq(enpu_write_file_atomic(f, "x", 1, &e), 0);
		cr_expect_eq(srv_cas_take(ctx.cas, f, &l), 1);
		cr_expect_neq(lstat(f, &sb), 0, "taken out of its place");
	}
	snprintf(f, sizeof f, "%s/take-none", root);
	cr_expect_eq(srv_cas_take(ctx.cas, f, &l), 0, "nothing there: 0");
	cr_expect_eq(l.n, 0, "no loose path: all in the directory");
	cr_assert_not_null(l.into);
	cr_expect_eq(tmp_entries(), 1, "one directory in tmp/");
	snprintf(f, sizeof f, "%s/4", l.into);
	cr_expect_eq(lstat(f, &sb), 0, "the fifth, by its short name");
	srv_cas_reclaim(ctx.cas, &l);
	cr_expect_null(l.into, "sealed: the next take makes a new one");
	cr_expect_eq(l.n, 0);
	srv_cas_reclaim_wait(ctx.cas);
	cr_expect_eq(tmp_entries(), 0, "the directory and all in it removed");
	/* without a list: unlinked in place */
	snprintf(f, sizeof f, "%s/take-now", root);
	cr_assert_eq(enpu_write_file_atomic(f, "x", 1, &e), 0);
	cr_expect_eq(srv_cas_take(ctx.cas, f, NULL), 1);
	cr_expect_neq(lstat(f, &sb), 0);
	cr_expect_eq(tmp_entries(), 0);
}

/* Names in a directory of srv_paths (its entries but . and ..). */
static int dir_names(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	cr_assert_not_null(d, "%s", dir);
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return n;
}

/* More takes than a directory holds: every one of them is in a directory
 * of the list's, none holding more than CAS_TAKE_PER_DIR names. */
Test(evict, takes_fill_directories_of_at_most_the_bound)
{
	srv_paths l = SRV_PATHS_INIT;
	enpu_err e = ENPU_ERR_INIT;
	const int n = 2 * CAS_TAKE_PER_DIR + 5;
	char f[4300];
	int i, total = 0;

	for (i = 0; i < n; i++) {
		snprintf(f, sizeof f, "%s/take%d", root, i);
		cr_assert_eq(enpu_write_file_atomic(f, "x", 1, &e), 0);
		cr_assert_eq(srv_cas_take(ctx.cas, f, &l), 1);
	}
	cr_assert_not_null(l.into);
	cr_expect_eq(l.n, 2, "two full directories sealed onto the list");
	for (i = 0; i < l.n; i++) {
		cr_expect_eq(dir_names(l.p[i]), CAS_TAKE_PER_DIR, "%s", l.p[i]);
		total += dir_names(l.p[i]);
	}
	total += dir_names(l.into);
	cr_expect_eq(total, n, "every take in one of them");
	cr_expect_eq(tmp_entries(), 3);
	srv_cas_reclaim(ctx.cas, &l);
	srv_cas_reclaim_wait(ctx.cas);
	cr_expect_eq(tmp_entries(), 0, "all removed");
}

/* srv_rmtree removes a tree (files, directories, a symlink) and never
 * follows a symlink into what it names. */
Test(evict, rmtree_removes_a_tree_and_not_what_a_symlink_names)
{
	char top[4300], p[4400], keep[4300];
	enpu_err e = ENPU_ERR_INIT;
	struct stat sb;

	snprintf(keep, sizeof keep, "%s/outside", root);
	cr_assert_eq(mkdir(keep, 0755), 0);
	snprintf(p, sizeof p, "%s/precious", keep);
	cr_assert_eq(enpu_write_file_atomic(p, "x", 1, &e), 0);
	srv_cas_tmpname(ctx.cas, ".rm", top, sizeof top);
	cr_assert_eq(mkdir(top, 0755), 0);
	snprintf(p, sizeof p, "%s/a", top);
	cr_assert_eq(mkdir(p, 0755), 0);
	snprintf(p, sizeof p, "%s/a/b", top);
	cr_assert_eq(mkdir(p, 0755), 0);
	snprintf(p, sizeof p, "%s/a/b/f", top);
	cr_assert_eq(enpu_write_file_atomic(p, "x", 1, &e), 0);
	snprintf(p, sizeof p, "%s/g", top);
	cr_assert_eq(enpu_write_file_atomic(p, "x", 1, &e), 0);
	snprintf(p, sizeof p, "%s/a/link", top);
	cr_assert_eq(symlink(keep, p), 0);
	srv_rmtree(top);
	cr_expect_neq(lstat(top, &sb), 0, "the tree is gone");
	snprintf(p, sizeof p, "%s/precious", keep);
	cr_expect_eq(lstat(p, &sb), 0, "what the symlink named stays");
	srv_rmtree(keep);
	cr_expect_neq(lstat(keep, &sb), 0);
	snprintf(p, sizeof p, "%s/never-there", root);
	srv_rmtree(p);   /* nothing there: nothing happens */
	srv_rmtree(top);
}

/* Blobs gone behind the daemon's back are forgotten, not evicted: a pass
 * that takes nothing leaves no directory of its own in tmp/. */
Test(evict, a_pass_that_takes_nothing_leaves_nothing_in_tmp)
{
	enpu_err e = ENPU_ERR_INIT;
	char d1[65], d2[65], p[4300];
	srv_cache_stats st;

	cr_assert_eq(srv_cas_put_mem(ctx.cas, "gone one", 8, d1, &e), 0, "%s", e.message);
	cr_assert_eq(srv_cas_put_mem(ctx.cas, "gone two", 8, d2, &e), 0, "%s", e.message);
	srv_cas_blob_path(ctx.cas, d1, p, sizeof p);
	cr_assert_eq(unlink(p), 0);
	srv_cas_blob_path(ctx.cas, d2, p, sizeof p);
	cr_assert_eq(unlink(p), 0);
	ctx.cfg.cache_max = 1;
	srv_cache_enforce(&ctx);
	srv_cas_reclaim_wait(ctx.cas);
	srv_cas_stats(ctx.cas, &st);
	cr_expect_eq(st.evictions, 0, "nothing was there to evict");
	cr_expect_eq(tmp_entries(), 0, "no directory left in tmp/");
}

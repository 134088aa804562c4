/* test_srv_owners.c: who owns what (docs/access.md). The identity of a
 * request (server/http/auth.c: token name, Unix peer uid, the anonymous
 * identity of a TCP listener without tokens), the owner check, the blob
 * uploaders' record (server/cache/owners.c: added only while the blob is
 * there, bounded, dropped with the blob, pruned by gc) and the job table's
 * view per owner (server/jobs/jobs_owner.c). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <pthread.h>
#include <time.h>
#include <sys/stat.h>
#include <json-c/json.h>
#include "srv.h"
#include "cas.h"
#include "jobs.h"

#define ART "1111111111111111111111111111111111111111111111111111111111111111"
#define INP "2222222222222222222222222222222222222222222222222222222222222222"

static char dir_[256];
static srv_cas *cas;

static void setup(void)
{
	enpu_err e = ENPU_ERR_INIT;

	snprintf(dir_, sizeof dir_, "/tmp/enpu-test-owners.XXXXXX");
	cr_assert_not_null(mkdtemp(dir_));
	cas = srv_cas_open(dir_, &e);
	cr_assert_not_null(cas, "%s", e.message);
}

static void teardown(void)
{
	srv_cas_close(cas);
	srv_rmtree(dir_);
}

/* A context with the token table text (NULL = none). */
static void ctx_tokens(srv_ctx *ctx, const char *text)
{
	enpu_err e = ENPU_ERR_INIT;

	memset(ctx, 0, sizeof *ctx);
	if (text) {
		ctx->auth = srv_auth_parse(text, strlen(text), "tokens", &e);
		cr_assert_not_null(ctx->auth, "%s", e.message);
	}
}

Test(owners, identity_from_tokens)
{
	srv_ctx ctx;
	srv_ident w;

	ctx_tokens(&ctx, "ta user alice\ntb user bob\ntr admin root\n");
	srv_auth_identify(&ctx, 1, -1, "Bearer ta", &w);
	cr_assert_str_eq(w.name, "alice");
	cr_assert_eq(w.admin, 0);
	srv_auth_identify(&ctx, 1, -1, "Bearer tr", &w);
	cr_assert_str_eq(w.name, "root");
	cr_assert_eq(w.admin, 1);
	srv_auth_identify(&ctx, 1, -1, NULL, &w);
	cr_assert_str_eq(w.name, SRV_NOBODY, "no token (a public route) is nobody");
	cr_assert_eq(w.admin, 0);
	/* a Unix socket without --token-file: the peer's uid, tokens ignored */
	srv_auth_identify(&ctx, 0, 4242, "Bearer tr", &w);
	cr_assert_str_eq(w.name, "uid:4242");
	cr_assert_eq(w.admin, 0);
	srv_auth_shutdown(&ctx);
}

Test(owners, identity_from_unix_peer_and_anonymous)
{
	srv_ctx ctx;
	srv_ident w;
	char own[32];

	ctx_tokens(&ctx, NULL);
	srv_auth_identify(&ctx, 0, 4242, NULL, &w);
	cr_assert_str_eq(w.name, "uid:4242");
	cr_assert_eq(w.admin, geteuid() == 4242);
	srv_auth_identify(&ctx, 0, 0, NULL, &w);
	cr_assert_str_eq(w.name, "uid:0");
	cr_assert_eq(w.admin, 1, "root is an admin");
	snprintf(own, sizeof own, "uid:%ld", (long)geteuid());
	srv_auth_identify(&ctx, 0, (long)geteuid(), NULL, &w);
	cr_assert_str_eq(w.name, own);
	cr_assert_eq(w.admin, 1, "the daemon's own uid is an admin");
	srv_auth_identify(&ctx, 0, -1, NULL, &w);
	cr_assert_str_eq(w.name, SRV_NOBODY, "an unknown peer owns nothing");
	cr_assert_eq(w.admin, 0);
	srv_auth_identify(&ctx, 1, -1, "Bearer whatever", &w);
	cr_assert_str_eq(w.name, SRV_ANONYMOUS, "TCP without tokens: one shared identity");
	cr_assert_eq(w.admin, 1);
}

Test(owners, token_file_identity_on_unix)
{
	srv_ctx ctx;
	srv_ident w;
	char dir[] = "/tmp/enpu-test-own.XXXXXX", p[128];
	FILE *f;
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(p, sizeof p, "%s/t", dir);
	f = fopen(p, "w");
	cr_assert_not_null(f);
	fputs("board-secret\n", f);
	fclose(f);
	chmod(p, 0600);   /* a token file must be private */
	memset(&ctx, 0, sizeof ctx);
	ctx.cfg.token_file = p;
	cr_assert_eq(srv_auth_load(&ctx, &e), 0, "%s", e.message);
	srv_auth_identify(&ctx, 0, 4242, "Bearer board-secret", &w);
	cr_assert_str_eq(w.name, "token-file");
	cr_assert_eq(w.admin, 1);
	srv_auth_shutdown(&ctx);
	unlink(p);
	rmdir(dir);
}

Test(owners, owns)
{
	srv_ident alice = {"alice", 0}, root = {"root", 1}, nobody = {SRV_NOBODY, 0};

	cr_assert_eq(srv_ident_owns(&alice, "alice"), 1);
	cr_assert_eq(srv_ident_owns(&alice, "bob"), 0);
	cr_assert_eq(srv_ident_owns(&alice, "alicex"), 0);
	cr_assert_eq(srv_ident_owns(&alice, ""), 0);
	cr_assert_eq(srv_ident_owns(&alice, NULL), 0);
	cr_assert_eq(srv_ident_owns(&root, "bob"), 1, "an admin sees every owner's");
	cr_assert_eq(srv_ident_owns(&nobody, SRV_NOBODY), 0, "nobody owns nothing");
	cr_assert_eq(srv_ident_owns(NULL, "alice"), 0);
}

Test(owners, unnamed_token_named_by_digest_not_line)
{
	enpu_err e = ENPU_ERR_INIT;
	const char *one = "tok admin\n", *two = "x user x\n\n# c\ntok admin\n";
	srv_auth *a = srv_auth_parse(one, strlen(one), "t", &e);
	srv_auth *b = srv_auth_parse(two, strlen(two), "t", &e);
	char n1[64], n2[64], n3[64];
	int role, i;

	cr_assert_not_null(a);
	cr_assert_not_null(b);
	cr_assert_eq(srv_auth_match(a, "Bearer tok", &role, n1, sizeof n1), 1);
	cr_assert_eq(srv_auth_match(b, "Bearer tok", &role, n2, sizeof n2), 1);
	cr_assert_str_eq(n1, n2, "the name does not move with the line");
	cr_assert_eq(strlen(n1), 18);
	cr_assert_eq(strncmp(n1, "token-", 6), 0);
	for (i = 6; i < 18; i++)
		cr_assert(strchr("0123456789abcdef", n1[i]), "%s", n1);
	srv_auth_free(a);
	a = srv_auth_parse("tok2 admin\n", strlen("tok2 admin\n"), "t", &e);
	cr_assert_eq(srv_auth_match(a, "Bearer tok2", &role, n3, sizeof n3), 1);
	cr_assert_str_neq(n1, n3);
	srv_auth_free(a);
	srv_auth_free(b);
}

/* ---- the uploaders' record ------------------------------------------------- */

static void put(const char *text, char d[65])
{
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(srv_cas_put_mem(cas, text, strlen(text), d, &e), 0, "%s", e.message);
}

static int rec_exists(const char *d)
{
	char p[512];
	struct stat st;

	snprintf(p, sizeof p, "%s/owners/%.2s/%s", dir_, d, d);
	return stat(p, &st) == 0;
}

Test(owners, record_add_has_drop, .init = setup, .fini = teardown)
{
	enpu_err e = ENPU_ERR_INIT;
	char d[65];

	put("alice's bytes", d);
	cr_assert_eq(srv_owners_has(cas, d, "alice"), 0);
	cr_assert_eq(srv_owners_add(cas, d, "alice", &e), 0, "%s", e.message);
	cr_assert_eq(srv_owners_add(cas, d, "alice", &e), 0, "twice is once");
	cr_assert_eq(srv_owners_has(cas, d, "alice"), 1);
	cr_assert_eq(srv_owners_has(cas, d, "bob"), 0);
	cr_assert_eq(srv_owners_has(cas, d, "alic"), 0, "a prefix is not a name");
	cr_assert_eq(srv_owners_add(cas, d, "uid:1001", &e), 0);
	cr_assert_eq(srv_owners_has(cas, d, "uid:1001"), 1);
	cr_assert_eq(srv_owners_has(cas, d, "alice"), 1);
	cr_assert_eq(srv_owners_add(cas, d, "bad\nname", &e), 0);
	cr_assert_eq(srv_owners_has(cas, d, "bad\nname"), 0, "a name with a newline is never recorded");
	/* removing the blob removes the record */
	cr_assert_eq(srv_cas_remove(cas, d), 1);
	cr_assert_eq(rec_exists(d), 0);
	cr_assert_eq(srv_owners_has(cas, d, "alice"), 0);
	/* a record is written only while its blob is there */
	cr_assert_eq(srv_owners_add(cas, d, "alice", &e), 0);
	cr_assert_eq(rec_exists(d), 0);
	cr_assert_eq(srv_owners_has(cas, d, "alice"), 0);
}

Test(owners, record_bounded_newest_kept, .init = setup, .fini = teardown)
{
	enpu_err e = ENPU_ERR_INIT;
	char d[65], n[32];
	int i;

	put("shared bytes", d);
	for (i = 0; i < SRV_OWNERS_MAX + 5; i++) {
		snprintf(n, sizeof n, "user%d", i);
		cr_assert_eq(srv_owners_add(cas, d, n, &e), 0, "%s", e.message);
	}
	cr_assert_eq(srv_owners_has(cas, d, "user0"), 0, "the oldest went first");
	cr_assert_eq(srv_owners_has(cas, d, "user4"), 0);
	cr_assert_eq(srv_owners_has(cas, d, "user5"), 1);
	snprintf(n, sizeof n, "user%d", SRV_OWNERS_MAX + 4);
	cr_assert_eq(srv_owners_has(cas, d, n), 1);
}

Test(owners, prune_orphans, .init = setup, .fini = teardown)
{
	enpu_err e = ENPU_ERR_INIT;
	char d1[65], d2[65], p[512];

	put("one", d1);
	put("two", d2);
	cr_assert_eq(srv_owners_add(cas, d1, "alice", &e), 0);
	cr_assert_eq(srv_owners_add(cas, d2, "alice", &e), 0);
	/* a crash between the blob's unlink and the record's */
	srv_cas_blob_path(cas, d1, p, sizeof p);
	cr_assert_eq(unlink(p), 0);
	cr_assert_eq(srv_owners_prune(cas), 1);
	cr_assert_eq(rec_exists(d1), 0);
	cr_assert_eq(rec_exists(d2), 1);
	cr_assert_eq(srv_owners_has(cas, d2, "alice"), 1);
}

/* ---- jobs per owner ---------------------------------------------------------- */

static void submit(srv_jobs *jobs, const char *owner, char id[ENPU_JOB_ID_SIZE])
{
	enpu_err e = ENPU_ERR_INIT;
	srv_jobreq q = {ART, "zynq_ps", INP, "in.npz", SRV_PRIO_NORMAL, 0, 1, owner, 0, NULL};

	cr_assert_eq(srv_jobs_submit_req(jobs, &q, id, &e), 0, "%s", e.message);
}

Test(owners, jobs_visible_listed_used, .init = setup, .fini = teardown)
{
	enpu_err e = ENPU_ERR_INIT;
	srv_jobs *jobs = srv_jobs_start(cas, enpu_limits_default(), 1, 1, 8, &e);
	srv_ident alice = {"alice", 0}, ali = {"ali", 0}, bob = {"bob", 0}, root = {"root", 1};
	char a[ENPU_JOB_ID_SIZE], b[ENPU_JOB_ID_SIZE], other[65], longer[80];
	json_object *arr, *o;
	int final;

	cr_assert_not_null(jobs, "%s", e.message);
	submit(jobs, "alice", a);
	submit(jobs, "bob", b);
	cr_assert_eq(srv_jobs_visible(jobs, a, &alice), 1);
	cr_assert_eq(srv_jobs_visible(jobs, a, &bob), 0, "bob does not see alice's job");
	cr_assert_eq(srv_jobs_visible(jobs, a, &root), 1);
	cr_assert_eq(srv_jobs_visible(jobs, "0123456789abcdef", &root), 0);

	arr = srv_jobs_list(jobs, 0, NULL, 100, &bob);
	cr_assert_eq(json_object_array_length(arr), 1);
	cr_assert_str_eq(json_object_get_string(json_object_object_get(
		json_object_array_get_idx(arr, 0), "id")), b);
	json_object_put(arr);
	arr = srv_jobs_list(jobs, 0, NULL, 100, &root);
	cr_assert_eq(json_object_array_length(arr), 2);
	json_object_put(arr);

	o = srv_jobs_get(jobs, a, 0, &final);
	cr_assert_str_eq(json_object_get_string(json_object_object_get(o, "owner")), "alice");
	cr_assert_str_eq(json_object_get_string(json_object_object_get(o, "input_name")), "in.npz");
	json_object_put(o);

	cr_assert_eq(srv_jobs_uses(jobs, &alice, INP), 1, "alice's job uses its input");
	cr_assert_eq(srv_jobs_uses(jobs, &alice, ART), 0, "an artifact is no input or result");
	memset(other, '3', 64);
	other[64] = '\0';
	cr_assert_eq(srv_jobs_uses(jobs, &alice, other), 0);
	/* keys are compared whole: no prefix of a digest or of an owner */
	snprintf(longer, sizeof longer, "%sff", INP);
	cr_assert_eq(srv_jobs_uses(jobs, &alice, longer), 0, "a longer digest is another");
	cr_assert_eq(srv_jobs_uses(jobs, &ali, INP), 0, "'ali' is not 'alice'");
	cr_assert_eq(srv_jobs_cancel(jobs, b), 0);
	srv_jobs_free(jobs);
	jobs = srv_jobs_start(cas, enpu_limits_default(), 1, 1, 8, &e);
	submit(jobs, "alice", a);
	cr_assert_eq(srv_jobs_uses(jobs, &bob, INP), 0, "bob holds no job that uses it");
	srv_jobs_free(jobs);
}

/* What a job made is its owner's to read once it has succeeded, and no
 * longer once the job is forgotten (--job-history); the same blob used by
 * two owners' jobs stays readable to the one whose job remains. Thousands
 * of other jobs in the table change nothing (one lookup, not a walk). */
Test(owners, results_are_used_while_the_job_is_kept, .init = setup, .fini = teardown)
{
	enpu_err e = ENPU_ERR_INIT;
	srv_jobs *jobs = srv_jobs_start(cas, enpu_limits_default(), 1, 1, 5000, &e);
	srv_ident alice = {"alice", 0}, bob = {"bob", 0}, root = {"root", 1};
	char a[ENPU_JOB_ID_SIZE], b[ENPU_JOB_ID_SIZE], id[ENPU_JOB_ID_SIZE], res_d[65], rep_d[65];
	srv_rresult res;
	srv_rjob rj;
	atomic_int up = 1;

	cr_assert_not_null(jobs, "%s", e.message);
	srv_jobs_set_policy(jobs, 60, 3600, 1);   /* one finished job kept */
	for (int i = 0; i < 3000; i++)
		submit(jobs, "carol", id);
	submit(jobs, "alice", a);
	memset(res_d, '5', 64);
	res_d[64] = '\0';
	memset(rep_d, '6', 64);
	rep_d[64] = '\0';
	cr_expect_eq(srv_jobs_uses(jobs, &alice, res_d), 0, "not before it succeeds");
	for (int i = 0; i < 3000; i++) {   /* carol's first, in order */
		cr_assert_eq(srv_jobs_take_remote(jobs, 1u << enpu_backend_parse("zynq_ps"), &up,
						  "b1", 0.05, &rj), 1);
		cr_assert_eq(srv_jobs_cancel(jobs, rj.id), 0);
	}
	cr_assert_eq(srv_jobs_take_remote(jobs, 1u << enpu_backend_parse("zynq_ps"), &up, "b1",
					  0.05, &rj), 1);
	cr_assert_str_eq(rj.id, a);
	memset(&res, 0, sizeof res);
	memcpy(res.result, res_d, 65);
	memcpy(res.report, rep_d, 65);
	srv_jobs_remote_done(jobs, a, SRV_RUN_OK, &res, NULL, 2);
	cr_expect_eq(srv_jobs_uses(jobs, &alice, res_d), 1, "alice's result");
	cr_expect_eq(srv_jobs_uses(jobs, &alice, rep_d), 1, "alice's report");
	cr_expect_eq(srv_jobs_uses(jobs, &alice, INP), 1);
	cr_expect_eq(srv_jobs_uses(jobs, &bob, res_d), 0, "not bob's");
	cr_expect_eq(srv_jobs_uses(jobs, &root, res_d), 1, "an admin's");
	submit(jobs, "bob", b);     /* the same input, bob's job, queued */
	cr_expect_eq(srv_jobs_uses(jobs, &bob, INP), 1);
	cr_assert_eq(srv_jobs_cancel(jobs, b), 0);   /* finished: alice's is forgotten */
	for (int i = 0; i < 1000; i++) {   /* the timer prunes: bounded poll */
		int final;
		json_object *o = srv_jobs_get(jobs, a, 0, &final);
		if (!o)
			break;
		json_object_put(o);
		usleep(10000);
	}
	cr_expect_eq(srv_jobs_uses(jobs, &alice, res_d), 0, "forgotten with its job");
	cr_expect_eq(srv_jobs_uses(jobs, &alice, INP), 0);
	cr_expect_eq(srv_jobs_uses(jobs, &bob, INP), 1, "bob's cancelled job still names it");
	srv_jobs_free(jobs);
}

/* ---- the record goes with its blob --------------------------------------------- */

Test(owners, eviction_and_integrity_drop_the_record, .init = setup, .fini = teardown)
{
	enpu_err e = ENPU_ERR_INIT;
	char old_d[65], new_d[65], bad[65], p[512], buf[1000];
	struct timespec t[2];
	srv_ctx ctx;
	FILE *f;

	memset(&ctx, 0, sizeof ctx);
	ctx.lim = enpu_limits_default();
	ctx.cas = cas;
	ctx.jobs = srv_jobs_start(cas, ctx.lim, 1, 1, 4, &e);
	cr_assert_not_null(ctx.jobs, "%s", e.message);
	memset(buf, 'o', sizeof buf);
	cr_assert_eq(srv_cas_put_mem(cas, buf, sizeof buf, old_d, &e), 0);
	srv_cas_blob_path(cas, old_d, p, sizeof p);
	clock_gettime(CLOCK_REALTIME, &t[0]);
	t[0].tv_sec -= 500;
	t[1] = t[0];
	cr_assert_eq(utimensat(AT_FDCWD, p, t, 0), 0);
	memset(buf, 'n', sizeof buf);
	cr_assert_eq(srv_cas_put_mem(cas, buf, sizeof buf, new_d, &e), 0);
	cr_assert_eq(srv_owners_add(cas, old_d, "alice", &e), 0);
	cr_assert_eq(srv_owners_add(cas, new_d, "alice", &e), 0);
	ctx.cfg.cache_max = 1500;
	srv_cache_enforce(&ctx);
	cr_assert_eq(srv_cas_has(cas, old_d, NULL), 0, "the older blob was evicted");
	cr_assert_eq(rec_exists(old_d), 0, "and its record with it");
	cr_assert_eq(rec_exists(new_d), 1);

	/* a blob whose bytes went bad is dropped on read, its record too */
	put("will rot", bad);
	cr_assert_eq(srv_owners_add(cas, bad, "alice", &e), 0);
	srv_cas_blob_path(cas, bad, p, sizeof p);
	chmod(p, 0644);
	f = fopen(p, "w");
	cr_assert_not_null(f);
	fputs("rotten", f);
	fclose(f);
	cr_assert_eq(srv_cas_verify(cas, bad, NULL), 0);
	cr_assert_eq(rec_exists(bad), 0);
	srv_jobs_free(ctx.jobs);
}

/* Uploads of one blob by many identities at once: none is lost (each
 * record is rewritten whole under the lock). */
typedef struct adder {
	const char *digest;
	int base;
} adder;

static void *add_many(void *arg)
{
	const adder *a = arg;
	enpu_err e = ENPU_ERR_INIT;
	char n[32];
	int i;

	for (i = 0; i < 8; i++) {
		snprintf(n, sizeof n, "u%d", a->base + i);
		if (srv_owners_add(cas, a->digest, n, &e) != 0)
			return (void *)1;
	}
	return NULL;
}

Test(owners, concurrent_adds_all_kept, .init = setup, .fini = teardown)
{
	pthread_t t[8];
	adder a[8];
	char d[65], n[32];
	void *rc;
	int i;

	put("popular bytes", d);
	for (i = 0; i < 8; i++) {
		a[i].digest = d;
		a[i].base = i * 8;
		cr_assert_eq(pthread_create(&t[i], NULL, add_many, &a[i]), 0);
	}
	for (i = 0; i < 8; i++) {
		cr_assert_eq(pthread_join(t[i], &rc), 0);
		cr_assert_null(rc);
	}
	for (i = 0; i < SRV_OWNERS_MAX; i++) {
		snprintf(n, sizeof n, "u%d", i);
		cr_assert_eq(srv_owners_has(cas, d, n), 1, "%s was lost", n);
	}
}

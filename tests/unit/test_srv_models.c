/* test_srv_models.c: named, versioned models (server/cache/models.c):
 * names and versions, deploy (the next version, idempotent, a conflict,
 * owners), resolve (the newest ready version), retire, the files they
 * survive a restart in, and files in models/ that are not what the daemon
 * wrote (left out, the rest kept). */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <json-c/json.h>
#include "srv.h"
#include "cas.h"
#include "artifact.h"
#include "models.h"
#include "cache_util.h"

#define FAKE "3333333333333333333333333333333333333333333333333333333333333333"

static char root[256];
static srv_cas *cas;
static srv_models *models;
static const srv_ident alice = {"alice", 0}, bob = {"bob", 0}, admin = {"root", 1};

static void setup(void)
{
	enpu_err e = ENPU_ERR_INIT;

	snprintf(root, sizeof root, "/tmp/enpu-test-models.XXXXXX");
	cr_assert_not_null(mkdtemp(root));
	cas = srv_cas_open(root, &e);
	cr_assert_not_null(cas, "%s", e.message);
	models = srv_models_open(cas, &e);
	cr_assert_not_null(models, "%s", e.message);
}

static void teardown(void)
{
	srv_models_close(models);
	srv_cas_close(cas);
	srv_artifact_cache_clear();
	srv_rmtree(root);
}

static void reopen(void)
{
	enpu_err e = ENPU_ERR_INIT;

	srv_models_close(models);
	models = srv_models_open(cas, &e);
	cr_assert_not_null(models, "%s", e.message);
}

static void write_file(const char *name, const char *text)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof p, "%s/models/%s", root, name);
	f = fopen(p, "w");
	cr_assert_not_null(f, "%s: %s", p, strerror(errno));
	fputs(text, f);
	fclose(f);
}

static long count_models(void)
{
	long m, v;
	srv_models_count(models, &m, &v);
	return m;
}

TestSuite(models, .init = setup, .fini = teardown, .timeout = 30);

Test(models, names_versions_and_refs)
{
	char name[SRV_MODEL_NAME_MAX + 1], long_name[80];
	enpu_err e = ENPU_ERR_INIT;
	long v;

	cr_expect(enpu_model_name_ok("mlp"));
	cr_expect(enpu_model_name_ok("resnet-18_v2.onnx"));
	cr_expect_not(enpu_model_name_ok(""));
	cr_expect_not(enpu_model_name_ok(".hidden"), "a name begins with a letter or digit");
	cr_expect_not(enpu_model_name_ok("-x"));
	cr_expect_not(enpu_model_name_ok("a/b"), "never a path");
	cr_expect_not(enpu_model_name_ok("a b"));
	memset(long_name, 'a', 65);
	long_name[65] = '\0';
	cr_expect_not(enpu_model_name_ok(long_name), "at most 64 bytes");
	long_name[64] = '\0';
	cr_expect(enpu_model_name_ok(long_name));

	cr_expect_eq(enpu_model_version_parse("1"), 1);
	cr_expect_eq(enpu_model_version_parse("2147483647"), 2147483647L);
	cr_expect_eq(enpu_model_version_parse("2147483648"), 0);
	cr_expect_eq(enpu_model_version_parse("0"), 0);
	cr_expect_eq(enpu_model_version_parse("01"), 0, "no leading zero");
	cr_expect_eq(enpu_model_version_parse("-1"), 0);
	cr_expect_eq(enpu_model_version_parse("1x"), 0);
	cr_expect_eq(enpu_model_version_parse(""), 0);
	cr_expect_eq(enpu_model_version_parse(NULL), 0);

	cr_assert_eq(srv_model_ref_parse("mlp:3", "model", name, sizeof name, &v, &e), 0);
	cr_expect_str_eq(name, "mlp");
	cr_expect_eq(v, 3);
	cr_assert_eq(srv_model_ref_parse("mlp", "model", name, sizeof name, &v, &e), 0);
	cr_expect_eq(v, 0, "no version: the newest ready");
	cr_expect_eq(srv_model_ref_parse("mlp:", "model", name, sizeof name, &v, &e), -1);
	cr_expect_eq(e.code, ENPU_E_BAD_REQUEST);
	cr_expect_eq(srv_model_ref_parse("../x:1", "model", name, sizeof name, &v, &e), -1);
	cr_expect_eq(srv_model_ref_parse(":1", "model", name, sizeof name, &v, &e), -1);
}

Test(models, deploy_resolve_retire_and_a_restart)
{
	enpu_err e = ENPU_ERR_INIT;
	char art[65], got[65];
	long v;
	json_object *o, *vs;

	compile_example(cas, "tiny_mlp", art);
	cr_assert_eq(srv_models_deploy(models, "mlp", 0, art, "cpu_ref", &alice, &v, &e), 1,
		     "%s", e.message);
	cr_expect_eq(v, 1, "a new model's first version");
	cr_assert_eq(srv_models_deploy(models, "mlp", 0, art, "cpu_ref", &alice, &v, &e), 1);
	cr_expect_eq(v, 2, "one more than the highest");
	cr_assert_eq(srv_models_deploy(models, "mlp", 7, art, "cpu_ref", &alice, &v, &e), 1);
	cr_assert_eq(srv_models_deploy(models, "mlp", 7, art, "cpu_ref", &alice, &v, &e), 0,
		     "the same again: nothing changes");
	cr_expect_eq(v, 7);
	cr_assert_eq(srv_models_deploy(models, "mlp", 7, FAKE, "cpu_ref", &alice, &v, &e), -1);
	cr_expect_eq(e.code, ENPU_E_MODEL_CONFLICT, "a version names one artifact");
	cr_assert_eq(srv_models_deploy(models, "mlp", 9, FAKE, "cpu_ref", &alice, &v, &e), 1);

	/* 9's artifact is not in the cache: the newest ready one is 7 */
	cr_assert_eq(srv_models_resolve(models, "mlp", 0, got, &v, &e), 0, "%s", e.message);
	cr_expect_eq(v, 7);
	cr_expect_str_eq(got, art);
	cr_assert_eq(srv_models_resolve(models, "mlp", 2, got, &v, &e), 0);
	cr_expect_eq(v, 2);
	cr_expect_eq(srv_models_resolve(models, "mlp", 9, got, &v, &e), -1, "not ready");
	cr_expect_eq(e.code, ENPU_E_NOT_FOUND);
	cr_expect_eq(srv_models_resolve(models, "mlp", 3, got, &v, &e), -1, "no version 3");
	cr_expect_eq(srv_models_resolve(models, "cnn", 0, got, &v, &e), -1, "no such model");

	o = srv_models_json(models, "mlp", &e);
	cr_assert_not_null(o, "%s", e.message);
	cr_expect_str_eq(json_object_get_string(json_object_object_get(o, "latest")), "7");
	vs = json_object_object_get(o, "versions");
	cr_assert_eq(json_object_array_length(vs), 4);
	cr_expect_str_eq(json_object_get_string(json_object_object_get(
		json_object_array_get_idx(vs, 3), "version")), "9");
	cr_expect_not(json_object_get_boolean(json_object_object_get(
		json_object_array_get_idx(vs, 3), "ready")));
	cr_expect_str_eq(json_object_get_string(json_object_object_get(
		json_object_array_get_idx(vs, 0), "owner")), "alice");
	json_object_put(o);

	reopen();   /* what was deployed is on the disk */
	cr_expect_eq(count_models(), 1);
	cr_assert_eq(srv_models_resolve(models, "mlp", 0, got, &v, &e), 0, "%s", e.message);
	cr_expect_eq(v, 7);
	cr_assert_eq(srv_models_retire(models, "mlp", 7, &alice, &e), 0, "%s", e.message);
	cr_assert_eq(srv_models_resolve(models, "mlp", 0, got, &v, &e), 0);
	cr_expect_eq(v, 2, "7 retired: 2 is the newest ready");
	cr_expect_eq(srv_models_retire(models, "mlp", 7, &alice, &e), -1, "already retired");
	cr_expect_eq(e.code, ENPU_E_NOT_FOUND);
	reopen();
	cr_assert_eq(srv_models_resolve(models, "mlp", 0, got, &v, &e), 0);
	cr_expect_eq(v, 2, "the retirement survived the restart");
	cr_assert_eq(srv_models_retire(models, "mlp", 0, &alice, &e), 0, "%s", e.message);
	cr_expect_eq(count_models(), 0);
	reopen();
	cr_expect_eq(count_models(), 0, "retired whole: its file is gone");
}

Test(models, a_model_is_its_owners)
{
	enpu_err e = ENPU_ERR_INIT;
	long v;
	char (*pins)[65];

	cr_assert_eq(srv_models_deploy(models, "mlp", 0, FAKE, "cpu_ref", &alice, &v, &e), 1);
	cr_expect_eq(srv_models_deploy(models, "mlp", 0, FAKE, "cpu_ref", &bob, &v, &e), -1);
	cr_expect_eq(e.code, ENPU_E_FORBIDDEN, "bob adds no version to alice's model");
	cr_expect_eq(srv_models_retire(models, "mlp", 1, &bob, &e), -1);
	cr_expect_eq(e.code, ENPU_E_FORBIDDEN);
	cr_expect_eq(srv_models_retire(models, "mlp", 0, &bob, &e), -1);
	cr_assert_eq(srv_models_deploy(models, "mlp", 0, FAKE, "cpu_ref", &admin, &v, &e), 1,
		     "an admin may: %s", e.message);
	cr_expect_eq(v, 2);
	cr_assert_eq(srv_models_deploy(models, "bobs", 0, FAKE, "cpu_ref", &bob, &v, &e), 1);
	cr_expect_eq(srv_models_pins(models, &pins), 3, "every version's artifact");
	free(pins);
	cr_expect_eq(srv_models_retire(models, "mlp", 0, &alice, &e), -1,
		     "version 2 is the admin's, not alice's");
	cr_assert_eq(srv_models_retire(models, "mlp", 0, &admin, &e), 0, "%s", e.message);
	cr_expect_eq(count_models(), 1);
}

Test(models, a_model_holds_at_most_the_limit_of_versions)
{
	enpu_err e = ENPU_ERR_INIT;
	long v;

	for (int i = 0; i < SRV_MODEL_VERSIONS_MAX; i++)
		cr_assert_eq(srv_models_deploy(models, "many", 0, FAKE, "cpu_ref", &alice, &v, &e), 1,
			     "%s", e.message);
	cr_expect_eq(srv_models_deploy(models, "many", 0, FAKE, "cpu_ref", &alice, &v, &e), -1);
	cr_expect_eq(e.code, ENPU_E_BAD_REQUEST);
	cr_expect_eq(srv_models_deploy(models, "many", SRV_MODEL_VERSION_MAX, FAKE, "cpu_ref",
				       &alice, &v, &e), -1);
	reopen();   /* the largest file the daemon writes reads back */
	cr_expect_eq(count_models(), 1);
}

/* models/ is a directory of the cache: what is in it is input like any.
 * Each file that is not what the daemon writes is left out (logged); the
 * good ones load; nothing crashes. */
Test(models, files_the_daemon_did_not_write_are_left_out)
{
	enpu_err e = ENPU_ERR_INIT;
	char p[512], *big = malloc(2 << 20);
	long v, m, n;
	char got[65];

	cr_assert_eq(srv_models_deploy(models, "good", 0, FAKE, "cpu_ref", &alice, &v, &e), 1);
	write_file("junk.json", "{not json");
	write_file("empty.json", "");
	write_file("other.json", "{\"name\": \"notother\", \"versions\": [{\"version\": \"1\", "
		   "\"artifact\": \"" FAKE "\", \"backend\": \"cpu_ref\", \"owner\": \"a\", "
		   "\"deployed\": \"t\"}]}");
	write_file("noversions.json", "{\"name\": \"noversions\", \"versions\": []}");
	write_file("unsorted.json", "{\"name\": \"unsorted\", \"versions\": ["
		   "{\"version\": \"2\", \"artifact\": \"" FAKE "\", \"backend\": \"b\", \"owner\": "
		   "\"a\", \"deployed\": \"t\"}, {\"version\": \"1\", \"artifact\": \"" FAKE "\", "
		   "\"backend\": \"b\", \"owner\": \"a\", \"deployed\": \"t\"}]}");
	write_file("badid.json", "{\"name\": \"badid\", \"versions\": [{\"version\": \"1\", "
		   "\"artifact\": \"../../etc\", \"backend\": \"b\", \"owner\": \"a\", "
		   "\"deployed\": \"t\"}]}");
	write_file("zero.json", "{\"name\": \"zero\", \"versions\": [{\"version\": \"0\", "
		   "\"artifact\": \"" FAKE "\", \"backend\": \"b\", \"owner\": \"a\", "
		   "\"deployed\": \"t\"}]}");
	write_file("notes.txt", "a stray file");
	write_file(".hidden.json", "{}");
	cr_assert_not_null(big);
	memset(big, ' ', (2 << 20) - 1);
	big[(2 << 20) - 1] = '\0';
	write_file("big.json", big);   /* past the 1 MiB a model file may have */
	free(big);
	snprintf(p, sizeof p, "%s/models/link.json", root);
	cr_assert_eq(symlink("good.json", p), 0, "a symlink is not a model file");
	snprintf(p, sizeof p, "%s/models/dir.json", root);
	cr_assert_eq(mkdir(p, 0755), 0);

	reopen();
	srv_models_count(models, &m, &n);
	cr_expect_eq(m, 1, "only the daemon's own file");
	cr_expect_eq(n, 1);
	cr_expect_eq(srv_models_resolve(models, "link", 0, got, &v, &e), -1);
	cr_expect_eq(e.code, ENPU_E_NOT_FOUND);
	/* a left-out name is free: deploying it replaces the bad file */
	cr_assert_eq(srv_models_deploy(models, "junk", 0, FAKE, "cpu_ref", &alice, &v, &e), 1,
		     "%s", e.message);
	reopen();
	cr_expect_eq(count_models(), 2);
}

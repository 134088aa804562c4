/* test_hostile.c: hostile inputs (issue 6, part 2) through the C API: YAML
 * alias bombs and deep nesting, huge declared shapes, npz zip bombs and bad
 * member names, every prefix of the tiny_mlp files and of a compiled
 * artifact's JSON, artifacts pointing outside themselves. Each must be the
 * project's three-line error with the fitting code, never a crash.
 * The files are tests/data/hostile/ (gen.py). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <json-c/json.h>
#include "enpu.h"
#include "npz.h"
#include "buf.h"
#include "digest.h"
#include "graphjson.h"
#include "plan.h"
#include "srv.h"

#define HOST "tests/data/hostile/"
#define MLP "examples/tiny_mlp/"

/* The three lines: "error[CODE]: ...", the detail, "fix: ... See: eulernpu
 * explain CODE". 1 when e renders so; otherwise 0 with the rendering in why. */
static int three_ok(const enpu_err *e, const char *code, char *why, size_t cap)
{
	char buf[4096], head[32], see[64];
	int nl = 0;

	enpu_err_render(e, buf, sizeof buf);
	for (const char *p = buf; *p; p++)
		nl += *p == '\n';
	snprintf(head, sizeof head, "error[%s]: ", code);
	snprintf(see, sizeof see, "See: eulernpu explain %s\n", code);
	if (nl == 3 && !strncmp(buf, head, strlen(head)) && strlen(buf) > strlen(see) &&
	    !strcmp(buf + strlen(buf) - strlen(see), see))
		return 1;
	snprintf(why, cap, "want %s in three lines, got:\n%s", code, buf);
	return 0;
}

static void three_lines(const enpu_err *e, const char *code, const char *what)
{
	char why[4200];

	cr_expect(three_ok(e, code, why, sizeof why), "%s: %s", what, why);
}

/* The prefix loops check thousands of cases: they count the bad ones and
 * assert once (criterion's runner leaks under floods of assertion events). */
typedef struct tally {
	int bad;
	char first[4400];
} tally;

static void tally_bad(tally *t, const char *what, const char *why)
{
	if (!t->bad++)
		snprintf(t->first, sizeof t->first, "%s: %s", what, why);
}

static void tally_three(tally *t, const enpu_err *e, const char *code, const char *what)
{
	char why[4200];

	if (!three_ok(e, code, why, sizeof why))
		tally_bad(t, what, why);
}

static const char *code_id(const enpu_err *e)
{
	return enpu_code_info_of(e->code)->id;
}

static void slurp(const char *path, enpu_buf *b)
{
	enpu_err e = ENPU_ERR_INIT;
	cr_assert_eq(enpu_read_file(path, 1u << 24, b, &e), 0, "%s: %s", path, e.message);
}

static void spit(const char *path, const void *data, size_t n)
{
	FILE *f = fopen(path, "wb");
	cr_assert(f, "%s: %s", path, strerror(errno));
	cr_assert_eq(fwrite(data, 1, n, f), n);
	cr_assert_eq(fclose(f), 0);
}

static char *tmpdir(void)
{
	char *d = strdup("/tmp/enpu-hostile.XXXXXX");
	cr_assert(d && mkdtemp(d), "mkdtemp: %s", strerror(errno));
	return d;
}

static void rmtree(const char *path)
{
	struct stat st;
	DIR *d;
	struct dirent *de;
	char p[4096];

	if (lstat(path, &st) != 0)
		return;
	if (S_ISDIR(st.st_mode) && (d = opendir(path))) {
		while ((de = readdir(d)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
				snprintf(p, sizeof p, "%s/%s", path, de->d_name);
				rmtree(p);
			}
		closedir(d);
		rmdir(path);
	} else {
		unlink(path);
	}
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	cr_assert(d);
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return n;
}

static long maxrss_kb(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/* ---- YAML --------------------------------------------------------------------- */

static void spec_fails(const char *file, const char *code, const char *needle)
{
	enpu_err e = ENPU_ERR_INIT;
	enpu_spec *s = NULL;
	char buf[4096];

	cr_expect_eq(enpu_spec_load(file, file, NULL, &s, &e), -1, "%s was accepted", file);
	enpu_spec_free(s);
	three_lines(&e, code, file);
	enpu_err_render(&e, buf, sizeof buf);
	cr_expect(strstr(buf, needle), "%s: '%s' not in:\n%s", file, needle, buf);
}

Test(yaml, alias_bomb_is_a_limit_naming_the_setting)
{
	spec_fails(HOST "spec_bomb.yaml", "E0004", "max_yaml_nodes");
}

Test(yaml, deep_nesting_is_a_limit_naming_the_setting)
{
	spec_fails(HOST "spec_deep_seq.yaml", "E0004", "max_yaml_depth");
	spec_fails(HOST "spec_deep_map.yaml", "E0004", "max_yaml_depth");
	spec_fails(HOST "spec_deep_alias.yaml", "E0004", "max_yaml_depth");
}

Test(yaml, limits_follow_the_settings)
{
	enpu_limits lim = *enpu_limits_default();
	enpu_err e = ENPU_ERR_INIT;
	enpu_spec *s = NULL;
	enpu_buf b = ENPU_BUF_INIT;

	/* the unmodified example passes, and fails once the limits are tight */
	slurp(MLP "spec.yaml", &b);
	cr_assert_eq(enpu_spec_parse(b.data, b.len, "spec.yaml", &lim, &s, &e), 0, "%s", e.message);
	enpu_spec_free(s);
	lim.max_yaml_depth = 3;
	cr_expect_eq(enpu_spec_parse(b.data, b.len, "spec.yaml", &lim, &s, &e), -1);
	three_lines(&e, "E0004", "depth 3");
	lim = *enpu_limits_default();
	lim.max_yaml_nodes = 50;
	cr_expect_eq(enpu_spec_parse(b.data, b.len, "spec.yaml", &lim, &s, &e), -1);
	three_lines(&e, "E0004", "50 nodes");
	cr_expect(strstr(e.fix, "max_yaml_nodes"), "%s", e.fix);
	enpu_buf_free(&b);
}

Test(yaml, target_file_bomb_and_depth)
{
	enpu_err e = ENPU_ERR_INIT;
	enpu_spec *s = NULL;
	enpu_target *t = NULL;

	cr_assert_eq(enpu_spec_load(MLP "spec.yaml", "spec.yaml", NULL, &s, &e), 0, "%s", e.message);
	cr_expect_eq(enpu_target_resolve(s, "npu_sim", HOST "target_bomb.yaml", "target_bomb.yaml",
					 NULL, &t, &e), -1);
	three_lines(&e, "E0004", "target bomb");
	cr_expect(strstr(e.fix, "max_yaml_nodes"), "%s", e.fix);
	cr_expect_eq(enpu_target_resolve(s, "npu_sim", HOST "target_deep.yaml", "target_deep.yaml",
					 NULL, &t, &e), -1);
	three_lines(&e, "E0004", "target deep");
	cr_expect(strstr(e.fix, "max_yaml_depth"), "%s", e.fix);
	enpu_target_free(t);
	enpu_spec_free(s);
}

Test(yaml, daemon_config_refuses_aliases_and_nesting)
{
	const char *files[] = {HOST "config_bomb.yaml", HOST "config_deep.yaml"};

	for (int i = 0; i < 2; i++) {
		enpu_buf b = ENPU_BUF_INIT;
		enpu_err e = ENPU_ERR_INIT;
		srv_cfg_file f;
		slurp(files[i], &b);
		cr_expect_eq(srv_cfg_parse(b.data, b.len, files[i], &f, &e), -1, "%s", files[i]);
		three_lines(&e, "E0816", files[i]);
		srv_cfg_free(&f);
		enpu_buf_free(&b);
	}
}

Test(yaml, non_utf8_names_are_yaml_errors)
{
	spec_fails(HOST "spec_badutf8_name.yaml", "E0200", "UTF-8");
	spec_fails(HOST "spec_badutf8_op.yaml", "E0200", "UTF-8");
	spec_fails(HOST "spec_badutf8_comment.yaml", "E0200", "UTF-8");
}

/* ---- huge declared shapes -------------------------------------------------------- */

Test(shapes, spec_shapes_over_the_limits)
{
	spec_fails(HOST "spec_shape_overflow.yaml", "E0004", "max_tensor_elems");
	spec_fails(HOST "spec_shape_elems.yaml", "E0004", "max_tensor_elems");
	spec_fails(HOST "spec_shape_dim64.yaml", "E0004", "max_tensor_elems");
	spec_fails(HOST "spec_wshape_overflow.yaml", "E0004", "max_tensor_elems");
}

static void npz_fails(const char *file, const enpu_limits *lim, const char *code, const char *needle)
{
	enpu_tlist l = ENPU_TLIST_INIT;
	enpu_err e = ENPU_ERR_INIT;

	char buf[4096];

	cr_expect_eq(enpu_npz_read(file, file, lim, &l, &e), -1, "%s was accepted", file);
	cr_expect_eq(l.n, 0, "%s: tensors left in the list", file);
	enpu_tlist_free(&l);
	three_lines(&e, code, file);
	enpu_err_render(&e, buf, sizeof buf);
	cr_expect(strstr(buf, needle), "%s: '%s' not in:\n%s", file, needle, buf);
}

Test(shapes, npy_headers_in_weights_and_input)
{
	const char *which[] = {"weights", "input"};

	for (int i = 0; i < 2; i++) {
		char p[256];
		snprintf(p, sizeof p, HOST "%s_hdr_overflow.npz", which[i]);
		npz_fails(p, NULL, "E0400", "overflows");
		snprintf(p, sizeof p, HOST "%s_hdr_elems.npz", which[i]);
		npz_fails(p, NULL, "E0004", "exceeds the limits");
		snprintf(p, sizeof p, HOST "%s_hdr_bigdim.npz", which[i]);
		npz_fails(p, NULL, "E0400", "too large");
	}
}

Test(shapes, compile_with_a_huge_weight_header)
{
	enpu_err e = ENPU_ERR_INIT;
	enpu_spec *s = NULL;
	enpu_target *t = NULL;
	enpu_compile_info info;
	char *d = tmpdir(), out[512];

	snprintf(out, sizeof out, "%s/art", d);
	cr_assert_eq(enpu_spec_load(MLP "spec.yaml", "spec.yaml", NULL, &s, &e), 0);
	cr_assert_eq(enpu_target_resolve(s, NULL, NULL, NULL, NULL, &t, &e), 0, "%s", e.message);
	cr_expect_eq(enpu_compile(s, t, HOST "weights_hdr_elems.npz", "weights.npz", NULL, out, NULL,
				  &info, &e), -1);
	three_lines(&e, "E0004", "compile, huge header");
	cr_expect_eq(enpu_compile(s, t, HOST "weights_hdr_overflow.npz", "weights.npz", NULL, out,
				  NULL, &info, &e), -1);
	three_lines(&e, "E0400", "compile, overflowing header");
	enpu_target_free(t);
	enpu_spec_free(s);
	rmtree(d);
	free(d);
}

/* ---- zip bombs ------------------------------------------------------------------ */

/* bomb.npz: 10 MiB of zeros in 10 KiB. With a 1 MB limit nothing is
 * inflated: the peak RSS of this process must not grow by the expansion. */
Test(bomb, declared_size_over_the_limit_is_refused_unexpanded)
{
	enpu_limits lim = *enpu_limits_default();
	long before;

	lim.max_npz_bytes = 1000000;
	before = maxrss_kb();
	npz_fails(HOST "bomb.npz", &lim, "E0004", "max_npz_bytes");
	lim = *enpu_limits_default();
	lim.max_tensor_bytes = 1000000;
	npz_fails(HOST "bomb.npz", &lim, "E0004", "max_tensor_bytes");
	cr_expect_lt(maxrss_kb() - before, 5 * 1024, "peak RSS grew by %ld KiB",
		     maxrss_kb() - before);
}

/* The headers claim 4096 bytes; the deflate stream holds 10 MiB: at most
 * 4097 bytes are inflated before the lie is caught. */
Test(bomb, size_lie_is_caught_without_expanding)
{
	long before = maxrss_kb();

	npz_fails(HOST "bomb_lie.npz", NULL, "E0400", "size mismatch");
	cr_expect_lt(maxrss_kb() - before, 5 * 1024, "peak RSS grew by %ld KiB",
		     maxrss_kb() - before);
}

Test(bomb, within_the_limits_it_is_read_and_checked)
{
	enpu_tlist l = ENPU_TLIST_INIT;
	enpu_err e = ENPU_ERR_INIT;

	/* the default limits allow 10 MiB: the bomb is an honest (1, 2621440) */
	cr_assert_eq(enpu_npz_read(HOST "bomb.npz", "bomb.npz", NULL, &l, &e), 0, "%s", e.message);
	cr_expect_eq(l.n, 1);
	cr_expect_eq(l.items[0].shape.dim[1], 10 << 18);
	enpu_tlist_free(&l);
	/* a weights member whose 10 MiB hold a (8, 16) array */
	npz_fails(HOST "weights_bomb.npz", NULL, "E0400", "trailing data");
}

/* ---- member names ------------------------------------------------------------------- */

Test(names, hostile_member_names_are_refused_and_nothing_is_written)
{
	const char *tags[] = {"dotdot", "subdir", "abs", "backslash", "dotdotbs", "txt", "noext",
			      "empty", "dup", "badutf8", "overlong", "nul"};
	char cwd[4096], *d = tmpdir();
	struct stat st;

	cr_assert(getcwd(cwd, sizeof cwd));
	for (size_t i = 0; i < sizeof tags / sizeof *tags; i++) {
		char p[4300];
		snprintf(p, sizeof p, "%s/" HOST "name_%s.npz", cwd, tags[i]);
		cr_assert_eq(chdir(d), 0);
		npz_fails(p, NULL, "E0400", "member");
		cr_assert_eq(chdir(cwd), 0);
	}
	npz_fails(HOST "weights_name_dotdot.npz", NULL, "E0400", "path separator");
	cr_expect_eq(count_entries(d), 0, "the reader wrote into the working directory");
	cr_expect_neq(stat("/etc/x.npy", &st), 0);
	rmtree(d);
	free(d);
}

Test(names, writer_refuses_path_names)
{
	const char *bad[] = {"../x", "a/b", "/etc/x", "a\\b", "", "\xff\xfe"};
	char *d = tmpdir(), p[512], up[512];
	struct stat st;

	snprintf(p, sizeof p, "%s/sub", d);
	cr_assert_eq(mkdir(p, 0700), 0);
	snprintf(p, sizeof p, "%s/sub/out.npz", d);
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		enpu_tlist l = ENPU_TLIST_INIT;
		enpu_tensor t = {0};
		enpu_err e = ENPU_ERR_INIT;
		t.name = strdup(bad[i]);
		t.dtype = ENPU_DT_F32;
		t.shape.ndim = 1;
		t.shape.dim[0] = 2;
		cr_assert_eq(enpu_tensor_alloc(&t, NULL, &e), 0);
		cr_assert_eq(enpu_tlist_push(&l, &t, &e), 0);
		cr_expect_eq(enpu_npz_write(p, &l, &e), -1, "name '%s' was written", bad[i]);
		cr_expect_neq(e.code, ENPU_OK);
		enpu_tlist_free(&l);
	}
	snprintf(up, sizeof up, "%s/x.npy", d);
	cr_expect_neq(stat(up, &st), 0);
	cr_expect_neq(stat(p, &st), 0);
	rmtree(d);
	free(d);
}

/* ---- truncation at every byte ---------------------------------------------------------- */

static int only_space(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strchr(" \t\r\n", s[i]))
			return 0;
	return 1;
}

static void npz_prefixes(const char *file)
{
	enpu_buf b = ENPU_BUF_INIT;
	tally t = {0, ""};

	slurp(file, &b);
	for (size_t n = 0; n < b.len; n++) {
		enpu_tlist l = ENPU_TLIST_INIT;
		enpu_err e = ENPU_ERR_INIT;
		char what[64];
		snprintf(what, sizeof what, "%s[:%zu]", file, n);
		if (enpu_npz_read_mem(b.data, n, "x.npz", NULL, &l, &e) != -1)
			tally_bad(&t, what, "read");
		enpu_tlist_free(&l);
		tally_three(&t, &e, "E0400", what);
	}
	cr_expect_eq(t.bad, 0, "%d bad prefixes; first %s", t.bad, t.first);
	{
		enpu_tlist l = ENPU_TLIST_INIT;
		enpu_err e = ENPU_ERR_INIT;
		cr_expect_eq(enpu_npz_read_mem(b.data, b.len, "x.npz", NULL, &l, &e), 0, "%s", e.message);
		enpu_tlist_free(&l);
	}
	enpu_buf_free(&b);
}

Test(truncate, every_prefix_of_weights_and_input)
{
	npz_prefixes(MLP "weights.npz");
	npz_prefixes(MLP "input.npz");
}

Test(truncate, every_prefix_of_the_spec)
{
	enpu_buf b = ENPU_BUF_INIT;
	int valid = 0;
	tally t = {0, ""};

	slurp(MLP "spec.yaml", &b);
	for (size_t n = 0; n <= b.len; n++) {
		enpu_err e = ENPU_ERR_INIT;
		enpu_spec *s = NULL;
		enpu_graph *g = NULL;
		char what[64];
		snprintf(what, sizeof what, "spec.yaml[:%zu]", n);
		if (enpu_spec_parse(b.data, n, "spec.yaml", NULL, &s, &e) == 0 &&
		    enpu_validate(s, NULL, &g, &e) == 0) {
			valid++;   /* a prefix that is a whole spec: a clean result */
			enpu_graph_free(g);
		} else {
			tally_three(&t, &e, code_id(&e), what);
			if (e.code < ENPU_E_YAML || e.code > ENPU_E_TARGET)
				tally_bad(&t, what, code_id(&e));
		}
		enpu_spec_free(s);
	}
	cr_expect_eq(t.bad, 0, "%d bad prefixes; first %s", t.bad, t.first);
	/* the whole file, and the prefixes that cut only the last line's tail
	 * after 'targets:' settings it does not need, are valid */
	cr_expect_geq(valid, 1);
	enpu_buf_free(&b);
}

/* An npu_sim artifact of tiny_mlp in a new directory (graph, plan with its
 * "npu" section, manifest with the target). Returns the directory. */
static char *compile_mlp(const char *backend)
{
	enpu_err e = ENPU_ERR_INIT;
	enpu_spec *s = NULL;
	enpu_target *t = NULL;
	enpu_compile_info info;
	char *d = tmpdir(), out[512];

	snprintf(out, sizeof out, "%s/art", d);
	cr_assert_eq(enpu_spec_load(MLP "spec.yaml", "spec.yaml", NULL, &s, &e), 0);
	cr_assert_eq(enpu_target_resolve(s, backend, NULL, NULL, NULL, &t, &e), 0, "%s", e.message);
	cr_assert_eq(enpu_compile(s, t, MLP "weights.npz", "weights.npz", NULL, out, NULL, &info, &e),
		     0, "%s", e.message);
	enpu_target_free(t);
	enpu_spec_free(s);
	return d;
}

Test(truncate, every_prefix_of_graph_plan_and_manifest)
{
	char *d = compile_mlp("npu_sim"), p[600], art[512];
	enpu_buf gb = ENPU_BUF_INIT, pb = ENPU_BUF_INIT, mb = ENPU_BUF_INIT;
	enpu_graph *g = NULL;
	char *w = NULL;
	enpu_err e = ENPU_ERR_INIT;
	enpu_artifact *a = NULL;
	tally t = {0, ""};

	snprintf(art, sizeof art, "%s/art", d);
	snprintf(p, sizeof p, "%s/graph.json", art);
	slurp(p, &gb);
	snprintf(p, sizeof p, "%s/plan.json", art);
	slurp(p, &pb);
	snprintf(p, sizeof p, "%s/manifest.json", art);
	slurp(p, &mb);
	cr_assert_eq(enpu_graph_from_json(gb.data, gb.len, "graph.json", NULL, &g, &w, &e), 0,
		     "%s", e.message);
	free(w);

	for (size_t n = 0; n < gb.len; n++) {
		enpu_graph *g2 = NULL;
		char *w2 = NULL, what[64];
		snprintf(what, sizeof what, "graph.json[:%zu]", n);
		if (enpu_graph_from_json(gb.data, n, "graph.json", NULL, &g2, &w2, &e) == 0) {
			if (!only_space(gb.data + n, gb.len - n))
				tally_bad(&t, what, "parsed");
			enpu_graph_free(g2);
			free(w2);
		} else {
			tally_three(&t, &e, "E0700", what);
		}
	}
	for (size_t n = 0; n < pb.len; n++) {
		enpu_plan plan;
		json_object *sec = NULL;
		char what[64];
		memset(&plan, 0, sizeof plan);
		snprintf(what, sizeof what, "plan.json[:%zu]", n);
		if (enpu_plan_from_json_section(g, pb.data, n, "plan.json", &plan, "npu", &sec, &e) == 0) {
			if (!only_space(pb.data + n, pb.len - n))
				tally_bad(&t, what, "parsed");
			json_object_put(sec);
			enpu_plan_free(&plan);
		} else {
			tally_three(&t, &e, "E0700", what);
		}
	}
	for (size_t n = 0; n < mb.len; n++) {
		char what[64];
		snprintf(what, sizeof what, "manifest.json[:%zu]", n);
		spit(p, mb.data, n);
		if (enpu_artifact_load(art, NULL, &a, &e) == 0) {
			if (!only_space(mb.data + n, mb.len - n))
				tally_bad(&t, what, "loaded");
			enpu_artifact_free(a);
		} else {
			tally_three(&t, &e, code_id(&e), what);
			if (e.code != ENPU_E_ARTIFACT && e.code != ENPU_E_ARTIFACT_DIGEST &&
			    e.code != ENPU_E_TARGET)
				tally_bad(&t, what, code_id(&e));
		}
	}
	cr_expect_eq(t.bad, 0, "%d bad prefixes; first %s", t.bad, t.first);
	spit(p, mb.data, mb.len);
	cr_expect_eq(enpu_artifact_load(art, NULL, &a, &e), 0, "%s", e.message);
	enpu_artifact_free(a);
	enpu_graph_free(g);
	enpu_buf_free(&gb);
	enpu_buf_free(&pb);
	enpu_buf_free(&mb);
	rmtree(d);
	free(d);
}

/* ---- artifacts pointing outside themselves ----------------------------------------------- */

static void copy_tree(const char *from, const char *to)
{
	static const char *files[] = {"manifest.json", "graph.json", "plan.json",
				      "weights/cpu_ref.npz"};
	char a[512], b[512];

	snprintf(b, sizeof b, "%s/weights", to);
	cr_assert_eq(mkdir(to, 0700), 0);
	cr_assert_eq(mkdir(b, 0700), 0);
	for (int i = 0; i < 4; i++) {
		enpu_buf buf = ENPU_BUF_INIT;
		snprintf(a, sizeof a, "%s/%s", from, files[i]);
		snprintf(b, sizeof b, "%s/%s", to, files[i]);
		slurp(a, &buf);
		spit(b, buf.data, buf.len);
		enpu_buf_free(&buf);
	}
}

/* Rewrite dir/manifest.json with files[i].path set to path. */
static void set_manifest_path(const char *dir, int i, const char *path)
{
	char p[600];
	json_object *m, *f;
	const char *s;

	snprintf(p, sizeof p, "%s/manifest.json", dir);
	m = json_object_from_file(p);
	cr_assert(m);
	f = json_object_array_get_idx(json_object_object_get(m, "files"), (size_t)i);
	cr_assert(f);
	json_object_object_add(f, "path", json_object_new_string(path));
	s = json_object_to_json_string_ext(m, JSON_C_TO_STRING_PLAIN);
	spit(p, s, strlen(s));
	json_object_put(m);
}

static void load_fails(const char *dir, const char *needle)
{
	enpu_err e = ENPU_ERR_INIT;
	enpu_artifact *a = NULL;

	cr_expect_eq(enpu_artifact_load(dir, NULL, &a, &e), -1, "%s loaded", dir);
	enpu_artifact_free(a);
	three_lines(&e, "E0700", dir);
	cr_expect(strstr(e.message, needle), "'%s' not in: %s", needle, e.message);
}

Test(escape, manifests_and_links_pointing_outside)
{
	char *d = compile_mlp("cpu_ref"), art[512], c[512], p[600], q[600];
	const char *paths[] = {"../../etc/passwd", "/etc/passwd", "weights/../../x",
			       "weights\\cpu_ref.npz", "./graph.json", "graph.json/"};
	enpu_err e = ENPU_ERR_INIT;
	enpu_artifact *a = NULL;

	snprintf(art, sizeof art, "%s/art", d);
	/* the copy itself loads: what follows fails because of the change */
	snprintf(c, sizeof c, "%s/copy", d);
	copy_tree(art, c);
	cr_assert_eq(enpu_artifact_load(c, NULL, &a, &e), 0, "%s", e.message);
	enpu_artifact_free(a);
	for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
		snprintf(c, sizeof c, "%s/p%zu", d, i);
		copy_tree(art, c);
		set_manifest_path(c, 0, paths[i]);
		load_fails(c, "not a plain relative path");
	}
	/* graph.json a link to an identical file outside */
	snprintf(c, sizeof c, "%s/lfile", d);
	copy_tree(art, c);
	snprintf(p, sizeof p, "%s/graph.json", c);
	snprintf(q, sizeof q, "%s/art/graph.json", d);
	cr_assert_eq(unlink(p), 0);
	cr_assert_eq(symlink(q, p), 0);
	load_fails(c, "symbolic link");
	/* weights/ a link to the directory outside */
	snprintf(c, sizeof c, "%s/ldir", d);
	copy_tree(art, c);
	snprintf(p, sizeof p, "%s/weights", c);
	snprintf(q, sizeof q, "%s/art/weights", d);
	rmtree(p);
	cr_assert_eq(symlink(q, p), 0);
	load_fails(c, "symbolic link");
	/* manifest.json a link to a valid manifest outside */
	snprintf(c, sizeof c, "%s/lman", d);
	copy_tree(art, c);
	snprintf(p, sizeof p, "%s/manifest.json", c);
	snprintf(q, sizeof q, "%s/art/manifest.json", d);
	cr_assert_eq(unlink(p), 0);
	cr_assert_eq(symlink(q, p), 0);
	load_fails(c, "symbolic link");
	rmtree(d);
	free(d);
}

/* ---- digests --------------------------------------------------------------------------- */

Test(digest, only_64_lowercase_hex)
{
	static const char good[] = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";
	char buf[80];

	cr_expect(enpu_is_sha256_hex(good));
	cr_expect(!enpu_is_sha256_hex(""));
	cr_expect(!enpu_is_sha256_hex("abc"));
	snprintf(buf, sizeof buf, "%.63s", good);
	cr_expect(!enpu_is_sha256_hex(buf));
	snprintf(buf, sizeof buf, "%s0", good);
	cr_expect(!enpu_is_sha256_hex(buf));
	snprintf(buf, sizeof buf, "%s", good);
	buf[0] = 'C';
	cr_expect(!enpu_is_sha256_hex(buf));
	buf[0] = 'g';
	cr_expect(!enpu_is_sha256_hex(buf));
	snprintf(buf, sizeof buf, "../%.61s", good);
	cr_expect(!enpu_is_sha256_hex(buf));
	snprintf(buf, sizeof buf, "%.60s%%00", good);
	cr_expect(!enpu_is_sha256_hex(buf));
}

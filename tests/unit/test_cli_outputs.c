/* test_cli_outputs.c: client/outputs.c without a server: which output
 * paths clash (resolved: "a/../x" is "x", a symbolic link is its target),
 * the atomic file write (umask modes, nothing left on failure), and the
 * directory swap of compile --out (refusing a directory of other files,
 * replacing an artifact, leaving no temporary copy). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "cli.h"

static char root[64];

static void setup(void)
{
	snprintf(root, sizeof root, "/tmp/enpu-outputs.XXXXXX");
	cr_assert_not_null(mkdtemp(root));
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	cr_assert_eq(system(cmd), 0);
}

static void put(const char *rel, const char *text)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof p, "%s/%s", root, rel);
	f = fopen(p, "w");
	cr_assert_not_null(f, "%s", p);
	fputs(text, f);
	fclose(f);
}

static const char *at(const char *rel)
{
	static char bufs[4][256];
	static int i;

	i = (i + 1) % 4;
	snprintf(bufs[i], sizeof bufs[i], "%s/%s", root, rel);
	return bufs[i];
}

/* Entries of root whose name starts with '.' (temporary or old copies). */
static int hidden_entries(void)
{
	DIR *d = opendir(root);
	struct dirent *de;
	int n = 0;

	cr_assert_not_null(d);
	while ((de = readdir(d)))
		n += de->d_name[0] == '.' && strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return n;
}

TestSuite(cli_outputs, .init = setup, .fini = teardown);

Test(cli_outputs, clashes_are_found_on_resolved_paths)
{
	enpu_err e = ENPU_ERR_INIT;
	char spelled[256], sub[256];

	put("in.npz", "x");
	snprintf(sub, sizeof sub, "%s/sub", root);
	cr_assert_eq(mkdir(sub, 0777), 0);
	snprintf(spelled, sizeof spelled, "%s/sub/../out.npz", root);
	{
		cli_path outs[2] = {{"--out", at("out.npz")}, {"--report", spelled}};
		cli_path ins[1] = {{"--input", at("in.npz")}};

		cr_assert_eq(cli_outputs_check("run", outs, 2, 0, ins, 1, &e), -1);
		cr_assert_eq(e.code, ENPU_E_USAGE);
		cr_assert(strstr(e.message, "'--out' and '--report' name the same file"), "%s",
			  e.message);
	}
	cr_assert_eq(symlink(at("in.npz"), at("link")), 0);
	{
		cli_path outs[2] = {{"--out", at("link")}, {"--report", NULL}};
		cli_path ins[1] = {{"--input", at("in.npz")}};

		cr_assert_eq(cli_outputs_check("run", outs, 2, 0, ins, 1, &e), -1);
		cr_assert(strstr(e.message, "names the input"), "%s", e.message);
	}
	{
		cli_path outs[1] = {{"--out", sub}};

		cr_assert_eq(cli_outputs_check("run", outs, 1, 0, NULL, 0, &e), -1);
		cr_assert(strstr(e.message, "names the directory"), "%s", e.message);
		cr_assert_eq(cli_outputs_check("compile", outs, 1, 1, NULL, 0, &e), 0);
	}
	{
		cli_path outs[2] = {{"--out", at("a.npz")}, {"--report", at("b.json")}};
		cli_path ins[1] = {{"--input", at("in.npz")}};

		cr_assert_eq(cli_outputs_check("run", outs, 2, 0, ins, 1, &e), 0);
	}
}

Test(cli_outputs, write_follows_the_umask_and_replaces)
{
	enpu_err e = ENPU_ERR_INIT;
	mode_t old = umask(027);
	struct stat st;
	FILE *f;
	char got[16] = "";

	put("r.npz", "old");
	cr_assert_eq(cli_write_output(at("r.npz"), "new", 3, &e), 0, "%s", e.message);
	umask(old);
	cr_assert_eq(stat(at("r.npz"), &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0640, "mode %o", st.st_mode & 0777);
	f = fopen(at("r.npz"), "r");
	cr_assert_not_null(f);
	cr_assert_not_null(fgets(got, sizeof got, f));
	fclose(f);
	cr_assert_str_eq(got, "new");
	cr_assert_eq(hidden_entries(), 0);
}

Test(cli_outputs, write_failure_is_the_users_disk)
{
	enpu_err e = ENPU_ERR_INIT;

	put("file", "");
	/* a parent that is a file: ENOTDIR whoever runs the test */
	cr_assert_eq(cli_write_output(at("file/r.npz"), "x", 1, &e), -1);
	cr_assert_eq(e.code, ENPU_E_IO);
	cr_assert(strstr(e.where, "file/r.npz"), "%s", e.where);
	cr_assert(strstr(e.fix, "your disk"), "%s", e.fix);
}

Test(cli_outputs, outdir_refuses_other_files)
{
	enpu_err e = ENPU_ERR_INIT;
	char tmp[4096];

	cr_assert_eq(mkdir(at("proj"), 0777), 0);
	put("proj/manifest.json", "{\"name\": \"web app\"}");
	cr_assert_eq(cli_outdir_begin("compile", at("proj"), tmp, sizeof tmp, &e), -1);
	cr_assert_eq(e.code, ENPU_E_USAGE);
	cr_assert(strstr(e.message, "not an eulernpu artifact"), "%s", e.message);
	cr_assert_eq(hidden_entries(), 0);
}

Test(cli_outputs, outdir_new_empty_and_abort)
{
	enpu_err e = ENPU_ERR_INIT;
	char tmp[4096], sub[4200];
	struct stat st;

	/* new */
	cr_assert_eq(cli_outdir_begin("compile", at("art"), tmp, sizeof tmp, &e), 0, "%s", e.message);
	snprintf(sub, sizeof sub, "%s/graph.json", tmp);
	fclose(fopen(sub, "w"));
	cr_assert_eq(cli_outdir_commit(tmp, at("art"), &e), 0, "%s", e.message);
	cr_assert_eq(stat(at("art/graph.json"), &st), 0);
	cr_assert_eq(hidden_entries(), 0);
	/* empty */
	cr_assert_eq(mkdir(at("empty"), 0777), 0);
	cr_assert_eq(cli_outdir_begin("compile", at("empty"), tmp, sizeof tmp, &e), 0);
	cr_assert_eq(cli_outdir_commit(tmp, at("empty"), &e), 0, "%s", e.message);
	cr_assert_eq(hidden_entries(), 0);
	/* a failed compile: abort leaves nothing */
	cr_assert_eq(cli_outdir_begin("compile", at("failed"), tmp, sizeof tmp, &e), 0);
	snprintf(sub, sizeof sub, "%s/weights", tmp);
	cr_assert_eq(mkdir(sub, 0777), 0);
	cli_outdir_abort(tmp);
	cr_assert_neq(stat(at("failed"), &st), 0);
	cr_assert_eq(hidden_entries(), 0);
}

/* import --out DIR: new or empty only; never replaced, not even an
 * artifact, and a DIR that gains files before the commit is left be */
Test(cli_outputs, outdir_new_only)
{
	enpu_err e = ENPU_ERR_INIT;
	char tmp[4096], sub[4200];
	struct stat st;

	cr_assert_eq(mkdir(at("model"), 0777), 0);
	put("model/spec.yaml", "eulernpu: 1\n");
	cr_assert_eq(cli_outdir_begin_new("import", at("model"), tmp, sizeof tmp, &e), -1);
	cr_assert_eq(e.code, ENPU_E_USAGE);
	cr_assert(strstr(e.message, "not empty"), "%s", e.message);
	cr_assert_eq(hidden_entries(), 0);
	/* new */
	cr_assert_eq(cli_outdir_begin_new("import", at("imp"), tmp, sizeof tmp, &e), 0, "%s", e.message);
	snprintf(sub, sizeof sub, "%s/spec.yaml", tmp);
	fclose(fopen(sub, "w"));
	cr_assert_eq(cli_outdir_commit_new("import", tmp, at("imp"), &e), 0, "%s", e.message);
	cr_assert_eq(stat(at("imp/spec.yaml"), &st), 0);
	cr_assert_eq(hidden_entries(), 0);
	/* empty, then filled meanwhile: left as it is */
	cr_assert_eq(mkdir(at("late"), 0777), 0);
	cr_assert_eq(cli_outdir_begin_new("import", at("late"), tmp, sizeof tmp, &e), 0, "%s", e.message);
	put("late/mine.txt", "keep");
	cr_assert_eq(cli_outdir_commit_new("import", tmp, at("late"), &e), -1);
	cr_assert_eq(e.code, ENPU_E_USAGE);
	cr_assert_eq(stat(at("late/mine.txt"), &st), 0);
	cr_assert_eq(hidden_entries(), 0);
}

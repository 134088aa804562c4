/* test_wire.c: proto/wire.c's manifest.json reader (enpu_manifest_parse),
 * the one the artifact loader, the daemon's cache and the client share:
 * a compiled manifest reads back with its id, backend, files and summary;
 * every malformed or unsafe variant is ENPU_E_ARTIFACT. Job and node ids
 * (enpu_job_id_parse, enpu_node_id_ok). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "enpu.h"
#include "npz.h"
#include "wire.h"

/* examples/tiny_mlp compiled in memory for backend (NULL: the spec's). */
static void compile_tiny(const char *backend, enpu_compiled *cc)
{
	enpu_err e = ENPU_ERR_INIT;
	enpu_spec *spec = NULL;
	enpu_target *tgt = NULL;
	enpu_tlist w = ENPU_TLIST_INIT;

	cr_assert_eq(enpu_spec_load("examples/tiny_mlp/spec.yaml", "spec.yaml", NULL, &spec, &e), 0,
		     "%s (the tests run from the repository root)", e.message);
	cr_assert_eq(enpu_target_resolve(spec, backend, NULL, NULL, NULL, &tgt, &e), 0, "%s",
		     e.message);
	cr_assert_eq(enpu_npz_read("examples/tiny_mlp/weights.npz", "weights.npz", NULL, &w, &e), 0);
	cr_assert_eq(enpu_compile_mem(spec, tgt, &w, NULL, NULL, NULL, NULL, cc, &e), 0, "%s",
		     e.message);
	enpu_tlist_free(&w);
	enpu_target_free(tgt);
	enpu_spec_free(spec);
}

static const enpu_buf *manifest_of(const enpu_compiled *cc)
{
	cr_assert_str_eq(cc->files[ENPU_ARTIFACT_FILES - 1].path, "manifest.json");
	return &cc->files[ENPU_ARTIFACT_FILES - 1].data;
}

Test(wire, compiled_manifest_reads_back)
{
	enpu_compiled cc;
	enpu_manifest m;
	enpu_err e = ENPU_ERR_INIT;
	const enpu_buf *b;

	compile_tiny(NULL, &cc);
	b = manifest_of(&cc);
	cr_assert_eq(enpu_manifest_parse(b->data, b->len, NULL, &m, &e), 0, "%s", e.message);
	cr_assert_str_eq(m.id, cc.info.artifact_id);
	cr_assert_str_eq(m.backend, "cpu_ref");
	cr_assert_str_eq(m.weights, "weights/cpu_ref.npz");
	cr_assert_eq(m.n, 3);
	for (int i = 0; i < 3; i++) {
		cr_assert_str_eq(m.files[i].path, cc.files[i].path);
		cr_assert_str_eq(m.files[i].sha256, cc.files[i].sha256);
		cr_assert_eq(m.files[i].bytes, cc.files[i].data.len);
	}
	cr_assert_not_null(enpu_manifest_find(&m, "plan.json"));
	cr_assert_null(enpu_manifest_find(&m, "weights.npz"));
	/* the summary is the compile's */
	cr_assert_eq(m.summary.operators, cc.info.n_ops);
	cr_assert_eq(m.summary.operators, 5);
	cr_assert_eq(m.summary.components, cc.info.n_components);
	cr_assert_eq(m.summary.arena_bytes, cc.info.arena_bytes);
	cr_assert_eq(m.summary.partition, 0, "cpu_ref does not split the graph");
	cr_assert_null(m.target, "cpu_ref takes no options");
	enpu_manifest_free(&m);
	enpu_compiled_free(&cc);
}

Test(wire, fpga_board_manifest_has_the_partition)
{
	enpu_compiled cc;
	enpu_manifest m;
	enpu_err e = ENPU_ERR_INIT;
	const enpu_buf *b;

	compile_tiny("fpga_board", &cc);
	b = manifest_of(&cc);
	cr_assert_eq(enpu_manifest_parse(b->data, b->len, NULL, &m, &e), 0, "%s", e.message);
	cr_assert_str_eq(m.backend, "fpga_board");
	cr_assert_not_null(m.target);
	cr_assert_eq(m.summary.partition, 1);
	cr_assert_eq(m.summary.pl_ops, cc.info.pl_ops);
	cr_assert_eq(m.summary.ps_ops, cc.info.ps_ops);
	cr_assert_eq(m.summary.pl_segments, cc.info.pl_segments);
	cr_assert_eq(m.summary.pl_ops + m.summary.ps_ops, 5);
	enpu_manifest_free(&m);
	enpu_compiled_free(&cc);
}

/* The compiled manifest with its first `from` replaced by `to`. */
static void edited(const enpu_buf *b, const char *from, const char *to, enpu_buf *out)
{
	const char *hit = strstr(b->data, from);

	cr_assert_not_null(hit, "'%s' not in the manifest", from);
	out->len = 0;
	enpu_buf_add(out, b->data, (size_t)(hit - b->data));
	enpu_buf_adds(out, to);
	enpu_buf_add(out, hit + strlen(from), b->len - (size_t)(hit - b->data) - strlen(from));
}

Test(wire, malformed_manifests_are_refused)
{
	static const char *edits[][2] = {
		{"\"format\": \"eulernpu-artifact\"", "\"format\": \"zip\""},
		{"\"version\": 1", "\"version\": 2"},
		{"\"backend\": \"cpu_ref\"", "\"backend\": \"gpu\""},
		{"\"layout\": \"spec\"", "\"layout\": \"packed\""},
		{"\"weights\": \"weights/cpu_ref.npz\"", "\"weights\": \"weights/other.npz\""},
		{"\"path\": \"graph.json\"", "\"path\": \"../graph.json\""},
		{"\"path\": \"graph.json\"", "\"path\": \"/graph.json\""},
		{"\"path\": \"graph.json\"", "\"path\": \"a/./graph.json\""},
		{"\"path\": \"graph.json\"", "\"path\": \"manifest.json\""},
		{"\"path\": \"graph.json\"", "\"path\": \"x.json\""},         /* unsorted */
		{"\"path\": \"graph.json\"", "\"path\": \"plan.json\""},      /* twice */
		{"\"path\": \"plan.json\"", "\"path\": \"plan2.json\""},      /* the id changes */
		{"\"sha256\": \"", "\"sha256\": \"x"},
		{"\"bytes\": ", "\"bytes\": -"},
		{"\"summary\": {", "\"summary\": 3, \"x\": {"},
		{"\"operators\": 5", "\"operators\": -5"},
		{"\"operators\": 5", "\"ops\": 5"},
		{"\"arena_bytes\"", "\"pl_ops\": 1, \"arena_bytes\""},      /* half a partition */
		{"{", "["},
	};
	enpu_compiled cc;
	enpu_manifest m;
	enpu_err e = ENPU_ERR_INIT;
	enpu_buf o = ENPU_BUF_INIT;
	const enpu_buf *b;

	compile_tiny(NULL, &cc);
	b = manifest_of(&cc);
	for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
		edited(b, edits[i][0], edits[i][1], &o);
		cr_assert_eq(enpu_manifest_parse(o.data, o.len, NULL, &m, &e), -1, "edit %zu (%s) "
			     "accepted", i, edits[i][1]);
		cr_assert_eq(e.code, ENPU_E_ARTIFACT, "edit %zu: %s", i, e.message);
		cr_assert_null(m.root, "nothing is kept");
	}
	/* cut anywhere */
	for (size_t n = 0; n < b->len; n += 7) {
		cr_assert_eq(enpu_manifest_parse(b->data, n, NULL, &m, &e), -1, "cut at %zu", n);
		cr_assert_eq(e.code, ENPU_E_ARTIFACT);
	}
	/* an id that is not the files' */
	char from[80], to[80];
	snprintf(from, sizeof from, "\"id\": \"%s\"", cc.info.artifact_id);
	snprintf(to, sizeof to, "\"id\": \"%064d\"", 0);
	edited(b, from, to, &o);
	cr_assert_eq(enpu_manifest_parse(o.data, o.len, NULL, &m, &e), -1);
	cr_assert(strstr(e.message, "does not match its files"), "%s", e.message);
	enpu_buf_free(&o);
	enpu_compiled_free(&cc);
}

Test(wire, limits)
{
	enpu_buf o = ENPU_BUF_INIT;
	enpu_manifest m;
	enpu_err e = ENPU_ERR_INIT;

	/* more than ENPU_MANIFEST_MAX bytes: refused before parsing */
	char *big = malloc(ENPU_MANIFEST_MAX + 1);

	cr_assert_not_null(big);
	memset(big, ' ', ENPU_MANIFEST_MAX + 1);
	cr_assert_eq(enpu_manifest_parse(big, ENPU_MANIFEST_MAX + 1, NULL, &m, &e), -1);
	cr_assert_eq(e.code, ENPU_E_ARTIFACT);
	cr_assert(strstr(e.message, "larger"), "%s", e.message);
	/* more than ENPU_MANIFEST_FILES files */
	enpu_buf_adds(&o, "{\"format\": \"eulernpu-artifact\", \"version\": 1, \"id\": \""
		      "0000000000000000000000000000000000000000000000000000000000000000\", "
		      "\"backend\": \"cpu_ref\", \"compiler\": \"x\", \"spec\": {\"name\": \"s\"}, "
		      "\"layout\": \"spec\", \"weights\": \"w\", \"files\": [");
	for (int i = 0; i <= ENPU_MANIFEST_FILES; i++)
		enpu_buf_addf(&o, "%s{\"path\": \"f%03d\", \"sha256\": \"%064d\", \"bytes\": 0}",
			      i ? ", " : "", i, 0);
	enpu_buf_adds(&o, "]}");
	cr_assert_eq(enpu_manifest_parse(o.data, o.len, NULL, &m, &e), -1);
	cr_assert(strstr(e.message, "more than"), "%s", e.message);
	free(big);
	enpu_buf_free(&o);
}

Test(wire, summary_to_json)
{
	enpu_msummary s = {7, 2, 4096, 1, 3, 4, 2};
	json_object *o = json_object_new_object();

	cr_assert_eq(enpu_msummary_to_json(&s, o), 0);
	cr_assert_str_eq(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
			 "{\"operators\":7,\"components\":2,\"arena_bytes\":4096,\"pl_ops\":3,"
			 "\"ps_ops\":4,\"pl_segments\":2}");
	json_object_put(o);
	s.partition = 0;
	o = json_object_new_object();
	cr_assert_eq(enpu_msummary_to_json(&s, o), 0);
	cr_assert_str_eq(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
			 "{\"operators\":7,\"components\":2,\"arena_bytes\":4096}");
	json_object_put(o);
}

/* Unsafe paths with everything else right: the files stay sorted and the
 * id is recomputed for the edited path, so only the path rule can refuse. */
Test(wire, unsafe_paths_refused_by_the_path_rule)
{
	static const char *bad[] = {"../graph.json", "a/../graph.json", "./graph.json",
				    "/graph.json", "a//graph.json", "a\\graph.json"};
	enpu_compiled cc;
	enpu_manifest m;
	enpu_err e = ENPU_ERR_INIT;
	enpu_buf o = ENPU_BUF_INIT, o2 = ENPU_BUF_INIT;
	const enpu_buf *b;
	char from[80], to[80], id[65];

	compile_tiny(NULL, &cc);
	b = manifest_of(&cc);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		const char *paths[3] = {bad[i], cc.files[1].path, cc.files[2].path};
		const char *digs[3] = {cc.files[0].sha256, cc.files[1].sha256, cc.files[2].sha256};

		cr_assert_str_eq(cc.files[0].path, "graph.json");
		cr_assert_lt(strcmp(bad[i], cc.files[1].path), 0, "'%s' keeps the order", bad[i]);
		enpu_artifact_id_of(paths, digs, 3, id);
		/* JSON text: the backslash escaped */
		snprintf(to, sizeof to, "\"path\": \"%s\"", strchr(bad[i], '\\') ? "a\\\\graph.json"
			 : bad[i]);
		edited(b, "\"path\": \"graph.json\"", to, &o);
		snprintf(from, sizeof from, "\"id\": \"%s\"", cc.info.artifact_id);
		snprintf(to, sizeof to, "\"id\": \"%s\"", id);
		edited(&o, from, to, &o2);
		cr_assert_eq(enpu_manifest_parse(o2.data, o2.len, NULL, &m, &e), -1, "'%s' accepted",
			     bad[i]);
		cr_assert(strstr(e.message, "is not a plain relative path"), "'%s': %s", bad[i],
			  e.message);
	}
	enpu_buf_free(&o);
	enpu_buf_free(&o2);
	enpu_compiled_free(&cc);
}

/* Job ids: 16 lowercase hex digits, alone or after "<node>-" (a node id:
 * 1-16 of [a-z0-9]); the node comes back, and nothing else passes. */
Test(wire, job_ids_with_and_without_a_node)
{
	static const char *const bad[] = {
		"", "0123456789abcde", "0123456789abcdef0", "0123456789ABCDEF", "0123456789abcdeg",
		"-0123456789abcdef", "n1-", "n1--0123456789abcdef", "N1-0123456789abcdef",
		"n_1-0123456789abcdef", "n.1-0123456789abcdef", "n1-0123456789abcdef-",
		"a-b-0123456789abcdef", "0123456789abcdefg-0123456789abcdef",
		"n1-0123456789abcde", "n1-0123456789abcdef0", "../0123456789abcdef",
		"n1/0123456789abcdef", "n1 -0123456789abcdef",
	};
	char node[ENPU_NODE_ID_MAX + 1] = "x";

	cr_assert_eq(enpu_job_id_parse("0123456789abcdef", node), 1);
	cr_assert_str_eq(node, "", "an id without a node names none");
	cr_assert_eq(enpu_job_id_parse("n1-0123456789abcdef", node), 1);
	cr_assert_str_eq(node, "n1");
	cr_assert_eq(enpu_job_id_parse("0123456789abcdef-fedcba9876543210", node), 1);
	cr_assert_str_eq(node, "0123456789abcdef", "a node of 16, the longest");
	cr_assert_eq(enpu_job_id_parse("n2-fedcba9876543210", NULL), 1, "node may be NULL");
	cr_assert_lt(strlen("0123456789abcdef-fedcba9876543210"), ENPU_JOB_ID_SIZE);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		snprintf(node, sizeof node, "x");
		cr_assert_eq(enpu_job_id_parse(bad[i], node), 0, "'%s' accepted", bad[i]);
		cr_assert_str_eq(node, "", "'%s' left a node", bad[i]);
	}
	cr_assert_eq(enpu_job_id_parse(NULL, node), 0);
	cr_assert(enpu_node_id_ok("n1") && enpu_node_id_ok("lab0") && enpu_node_id_ok("0"));
	cr_assert(enpu_node_id_ok("abcdefghijklmnop"), "16 characters");
	cr_assert(!enpu_node_id_ok("abcdefghijklmnopq"), "17 characters");
	cr_assert(!enpu_node_id_ok("") && !enpu_node_id_ok(NULL) && !enpu_node_id_ok("N1") &&
		  !enpu_node_id_ok("n-1") && !enpu_node_id_ok("n_1") && !enpu_node_id_ok("n1 "));
}

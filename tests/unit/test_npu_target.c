/* test_npu_target.c: the npu_sim target description
 * (common/backends/npu_sim/npu_target.c): defaults, every field, the parser's
 * errors (bad target files in tests/data/npusim/targets_bad/) and the
 * canonical JSON both ways. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "npusim.h"
#include "spec.h"
#include "spec_int.h"
#include "buf.h"
#include "pipeline.h"

/* ---- (c) the target parser ---------------------------------------------- */

static int parse_text(const char *text, const char *label, enpu_npu_target *t, enpu_err *e)
{
	enpu_ydoc *d = NULL;
	int r;

	cr_assert_eq(enpu_yaml_parse(text, strlen(text), label, NULL, &d, e), 0, "yaml: %s",
		     e->message);
	r = enpu_npu_target_parse(enpu_ydoc_root(d), label, t, e);
	enpu_ydoc_free(d);
	return r;
}

Test(npusim, target_defaults)
{
	enpu_npu_target t;
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(enpu_npu_target_parse(NULL, "x", &t, &e), 0);
	cr_expect_eq(t.rows, 16); cr_expect_eq(t.cols, 16);
	cr_expect_eq(t.dataflow, ENPU_DF_OS);
	cr_expect_eq(t.sram_kib[0], 64); cr_expect_eq(t.sram_kib[1], 64); cr_expect_eq(t.sram_kib[2], 64);
	cr_expect_eq(t.word_bytes, 4);
	cr_expect_eq(t.dram_bytes_per_cycle, 0.0);
	cr_expect_eq(t.clock_mhz, 1000.0);
	cr_expect_eq(t.vector_lanes, 16);
	cr_expect(enpu_opmask_eq(t.ops, ENPU_OPS_ALL));
	cr_expect_eq(t.ops_given, 0);
	cr_expect_eq(t.scalesim_compat, 0);
	cr_assert_eq(parse_text("{}\n", "t.yaml", &t, &e), 0);
	cr_expect_eq(t.rows, 16);
	cr_assert_eq(parse_text("clock_mhz:\nops: ~\n", "t.yaml", &t, &e), 0, "%s", e.message);
	cr_expect_eq(t.clock_mhz, 1000.0, "null keeps the default");
	cr_expect_eq(t.ops_given, 0);
}

Test(npusim, target_every_field)
{
	enpu_npu_target t;
	enpu_err e = ENPU_ERR_INIT;
	const char *y =
		"array: [8, 32]\n"
		"dataflow: ws\n"
		"sram_kib: {ifmap: 128, ofmap: 32}\n"
		"word_bytes: 2\n"
		"dram_bytes_per_cycle: 12.5\n"
		"clock_mhz: 200\n"
		"vector_lanes: 64\n"
		"ops: [relu, matmul, relu]\n"
		"scalesim_compat: false\n";

	cr_assert_eq(parse_text(y, "t.yaml", &t, &e), 0, "%s %s", e.where, e.message);
	cr_expect_eq(t.rows, 8); cr_expect_eq(t.cols, 32);
	cr_expect_eq(t.dataflow, ENPU_DF_WS);
	cr_expect_eq(t.sram_kib[ENPU_SRAM_IFMAP], 128);
	cr_expect_eq(t.sram_kib[ENPU_SRAM_FILTER], 64, "partial sram_kib keeps the default");
	cr_expect_eq(t.sram_kib[ENPU_SRAM_OFMAP], 32);
	cr_expect_eq(t.word_bytes, 2);
	cr_expect_eq(t.dram_bytes_per_cycle, 12.5);
	cr_expect_eq(t.clock_mhz, 200.0);
	cr_expect_eq(t.vector_lanes, 64);
	cr_expect(enpu_opmask_eq(t.ops, ENPU_OPMASK(ENPU_OP_RELU, ENPU_OP_MATMUL)));
	cr_expect_eq(t.ops_given, 1);
	cr_expect_eq(t.scalesim_compat, 0);

	cr_assert_eq(parse_text("dataflow: is\nscalesim_compat: true\n", "t.yaml", &t, &e), 0);
	cr_expect_eq(t.dataflow, ENPU_DF_IS);
	cr_expect_eq(t.scalesim_compat, 1);
	cr_expect_eq(t.word_bytes, 1, "scalesim_compat forces 1-byte words");
	cr_assert_eq(parse_text("word_bytes: 1\nscalesim_compat: true\n", "t.yaml", &t, &e), 0);
	cr_expect_eq(t.word_bytes, 1);
	/* SCALE-Sim's Bandwidth: whole words per cycle (targets_bad has 12.5) */
	cr_assert_eq(parse_text("scalesim_compat: true\ndram_bytes_per_cycle: 16\n", "t.yaml", &t, &e), 0);
	cr_expect_eq(t.dram_bytes_per_cycle, 16);
}

static int yaml_name(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return n > 5 && strcmp(d->d_name + n - 5, ".yaml") == 0;
}

/* Every targets_bad/NAME.yaml opens with "# expect: LINE:COL message-prefix"
 * and must fail with ENPU_E_TARGET at NAME.yaml:LINE:COL. */
Test(npusim, target_errors)
{
	char dir[512];
	struct dirent **names;
	int n;

	snprintf(dir, sizeof(dir), "%s/npusim/targets_bad", tpl_data_dir("npusim"));
	n = scandir(dir, &names, yaml_name, alphasort);
	cr_assert_geq(n, 15, "too few cases in %s", dir);
	for (int i = 0; i < n; i++) {
		char path[1024], want_where[600], *text = NULL, *nl;
		const char *expect, *msg;
		size_t len = 0;
		int line, col, off = 0;
		enpu_npu_target t;
		enpu_err e = ENPU_ERR_INIT;
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		f = fopen(path, "r");
		cr_assert(f, "%s", path);
		cr_assert_eq(getdelim(&text, &len, 0, f) > 0, 1);
		fclose(f);
		expect = strstr(text, "# expect: ");
		cr_assert(expect == text, "%s: no expect line", path);
		cr_assert_eq(sscanf(expect, "# expect: %d:%d %n", &line, &col, &off), 2, "%s", path);
		msg = expect + off;
		nl = strchr(msg, '\n');
		cr_assert(nl, "%s", path);
		{
			enpu_ydoc *d = NULL;

			cr_assert_eq(enpu_yaml_parse(text, strlen(text), names[i]->d_name, NULL, &d, &e), 0,
				     "%s: yaml: %s", path, e.message);
			cr_expect_eq(enpu_npu_target_parse(enpu_ydoc_root(d), names[i]->d_name, &t, &e), -1,
				     "%s: accepted", path);
			enpu_ydoc_free(d);
		}
		snprintf(want_where, sizeof(want_where), "%s:%d:%d", names[i]->d_name, line, col);
		cr_expect_eq(e.code, ENPU_E_TARGET, "%s: code %d (%s)", path, e.code, e.message);
		cr_expect_str_eq(e.where, want_where, "%s: where %s, want %s (%s)", path, e.where,
				 want_where, e.message);
		*nl = 0;
		cr_expect(strncmp(e.message, msg, strlen(msg)) == 0, "%s: message '%s', want '%s...'",
			  path, e.message, msg);
		free(text);
		free(names[i]);
	}
	free(names);
}

/* ---- (d) JSON ------------------------------------------------------------ */

static void expect_same(const enpu_npu_target *a, const enpu_npu_target *b)
{
	cr_expect_eq(a->rows, b->rows);
	cr_expect_eq(a->cols, b->cols);
	cr_expect_eq(a->dataflow, b->dataflow);
	for (int i = 0; i < ENPU_SRAM_COUNT; i++)
		cr_expect_eq(a->sram_kib[i], b->sram_kib[i]);
	cr_expect_eq(a->word_bytes, b->word_bytes);
	cr_expect_eq(a->dram_bytes_per_cycle, b->dram_bytes_per_cycle);
	cr_expect_eq(a->clock_mhz, b->clock_mhz);
	cr_expect_eq(a->vector_lanes, b->vector_lanes);
	cr_expect(enpu_opmask_eq(a->ops, b->ops));
	cr_expect_eq(a->ops_given, b->ops_given);
	cr_expect_eq(a->scalesim_compat, b->scalesim_compat);
}

static char *target_str(const enpu_npu_target *t)
{
	json_object *o = enpu_npu_target_json(t);
	char *s;

	cr_assert(o);
	s = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return s;
}

Test(npusim, target_json_canonical)
{
	enpu_npu_target t;
	char *s;

	enpu_npu_target_default(&t);
	s = target_str(&t);
	cr_expect_str_eq(s,
		"{\"array\":[16,16],\"clock_mhz\":1000,\"dataflow\":\"os\",\"dram_bytes_per_cycle\":0,"
		"\"ops\":null,\"scalesim_compat\":false,\"sram_kib\":{\"filter\":64,\"ifmap\":64,"
		"\"ofmap\":64},\"vector_lanes\":16,\"word_bytes\":4}");
	free(s);
	t.ops = ENPU_OPMASK(ENPU_OP_RELU, ENPU_OP_ADD, ENPU_OP_CONV2D);
	t.ops_given = 1;
	t.clock_mhz = 0.1;
	s = target_str(&t);
	cr_expect(strstr(s, "\"ops\":[\"add\",\"conv2d\",\"relu\"]"), "%s", s);
	cr_expect(strstr(s, "\"clock_mhz\":0.1,"), "%s", s);
	free(s);
}

Test(npusim, target_json_round_trip)
{
	enpu_npu_target ts[5];
	enpu_err e = ENPU_ERR_INIT;

	enpu_npu_target_default(&ts[0]);
	cr_assert_eq(parse_text("array: [8, 32]\ndataflow: ws\nsram_kib: {ifmap: 128, ofmap: 32}\n"
				"word_bytes: 2\ndram_bytes_per_cycle: 12.5\nclock_mhz: 200\n"
				"vector_lanes: 64\nops: [relu, matmul]\n", "t.yaml", &ts[1], &e), 0);
	cr_assert_eq(parse_text("scalesim_compat: true\ndataflow: is\n", "t.yaml", &ts[2], &e), 0);
	cr_assert_eq(parse_text("dram_bytes_per_cycle: 0.3333333333333333\nclock_mhz: 1234.5678901234567\nops: []\n",
				"t.yaml", &ts[3], &e), 0);
	enpu_npu_target_default(&ts[4]);
	ts[4].dram_bytes_per_cycle = 1e-7;
	ts[4].clock_mhz = 3e9;
	for (int i = 0; i < 5; i++) {
		char *s1 = target_str(&ts[i]), *s2;
		json_object *o = json_tokener_parse(s1);
		enpu_npu_target back;

		cr_assert(o, "%s", s1);
		cr_assert_eq(enpu_npu_target_from_json(o, "manifest.json", &back, &e), 0, "%d: %s", i,
			     e.message);
		json_object_put(o);
		expect_same(&ts[i], &back);
		s2 = target_str(&back);
		cr_expect_str_eq(s1, s2);
		free(s1);
		free(s2);
	}
}

Test(npusim, target_from_json_rejects)
{
	static const char *const bad[] = {
		"[]",
		"{\"array\":[16,16],\"clock_mhz\":1000,\"dataflow\":\"os\",\"dram_bytes_per_cycle\":0,\"ops\":null,\"scalesim_compat\":false,\"sram_kib\":{\"filter\":64,\"ifmap\":64,\"ofmap\":64},\"vector_lanes\":16}",
		"{\"array\":[16,16],\"clock_mhz\":1000,\"dataflow\":\"os\",\"dram_bytes_per_cycle\":0,\"ops\":null,\"scalesim_compat\":false,\"sram_kib\":{\"filter\":64,\"ifmap\":64,\"ofmap\":64},\"vector_lanes\":16,\"word_bytes\":4,\"extra\":1}",
		"{\"array\":[16,16],\"clock_mhz\":1000,\"dataflow\":\"os\",\"dram_bytes_per_cycle\":0,\"ops\":null,\"scalesim_compat\":true,\"sram_kib\":{\"filter\":64,\"ifmap\":64,\"ofmap\":64},\"vector_lanes\":16,\"word_bytes\":4}",
		"{\"array\":[16,16],\"clock_mhz\":1000,\"dataflow\":\"os\",\"dram_bytes_per_cycle\":0,\"ops\":[\"rleu\"],\"scalesim_compat\":false,\"sram_kib\":{\"filter\":64,\"ifmap\":64,\"ofmap\":64},\"vector_lanes\":16,\"word_bytes\":4}",
		"{\"array\":[16],\"clock_mhz\":1000,\"dataflow\":\"os\",\"dram_bytes_per_cycle\":0,\"ops\":null,\"scalesim_compat\":false,\"sram_kib\":{\"filter\":64,\"ifmap\":64,\"ofmap\":64},\"vector_lanes\":16,\"word_bytes\":4}",
		"{\"array\":[16,16],\"clock_mhz\":0,\"dataflow\":\"os\",\"dram_bytes_per_cycle\":0,\"ops\":null,\"scalesim_compat\":false,\"sram_kib\":{\"filter\":64,\"ifmap\":64,\"ofmap\":64},\"vector_lanes\":16,\"word_bytes\":4}",
		"{\"array\":[16,16],\"clock_mhz\":1000,\"dataflow\":\"xs\",\"dram_bytes_per_cycle\":0,\"ops\":null,\"scalesim_compat\":false,\"sram_kib\":{\"filter\":64,\"ifmap\":64,\"ofmap\":64},\"vector_lanes\":16,\"word_bytes\":4}",
		"{\"array\":[16,16],\"clock_mhz\":1000,\"dataflow\":\"os\",\"dram_bytes_per_cycle\":-1,\"ops\":null,\"scalesim_compat\":false,\"sram_kib\":{\"filter\":64,\"ifmap\":64,\"ofmap\":64},\"vector_lanes\":16,\"word_bytes\":4}",
		"{\"array\":[16,16],\"clock_mhz\":1000,\"dataflow\":\"os\",\"dram_bytes_per_cycle\":0,\"ops\":null,\"scalesim_compat\":false,\"sram_kib\":{\"filter\":64,\"ifmap\":64},\"vector_lanes\":16,\"word_bytes\":4}",
		"{\"array\":[16,16],\"clock_mhz\":1000,\"dataflow\":\"os\",\"dram_bytes_per_cycle\":0,\"ops\":null,\"scalesim_compat\":false,\"sram_kib\":{\"filter\":64,\"ifmap\":64,\"ofmap\":64},\"vector_lanes\":\"16\",\"word_bytes\":4}",
		"{\"array\":[16,16],\"clock_mhz\":1000,\"dataflow\":\"os\",\"dram_bytes_per_cycle\":0,\"ops\":null,\"scalesim_compat\":0,\"sram_kib\":{\"filter\":64,\"ifmap\":64,\"ofmap\":64},\"vector_lanes\":16,\"word_bytes\":4}",
		"{\"array\":[16,16],\"clock_mhz\":1000,\"dataflow\":\"os\",\"dram_bytes_per_cycle\":12.5,\"ops\":null,\"scalesim_compat\":true,\"sram_kib\":{\"filter\":64,\"ifmap\":64,\"ofmap\":64},\"vector_lanes\":16,\"word_bytes\":1}",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_object *o = json_tokener_parse(bad[i]);
		enpu_npu_target t;
		enpu_err e = ENPU_ERR_INIT;

		cr_assert(o, "case %zu does not parse", i);
		cr_expect_eq(enpu_npu_target_from_json(o, "manifest.json", &t, &e), -1, "case %zu accepted", i);
		cr_expect_eq(e.code, ENPU_E_ARTIFACT, "case %zu", i);
		cr_expect_str_eq(e.where, "manifest.json");
		cr_expect(!strncmp(e.message, "npu_sim target: ", 16), "case %zu: %s", i, e.message);
		json_object_put(o);
	}
}

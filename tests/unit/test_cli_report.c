/* test_cli_report.c: the client's npu_sim report rendering (client/report.c):
 * byte units, the summary line of `run`, and `eulernpu report`'s table from
 * the JSON fixtures in tests/data/cli/report_*.json (expected text beside
 * them in report_*.txt): memory-bound ops first, then order by cost,
 * alignment, the roofline columns, "-" for what is missing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <criterion/criterion.h>
#include <json-c/json.h>
#include "cli.h"

static void data_path(const char *name, char *path, size_t cap)
{
	const char *src = __FILE__;
	const char *slash = strrchr(src, '/');
	int dirlen = slash ? (int)(slash - src) : 1;

	snprintf(path, cap, "%.*s/../data/cli/%s", dirlen, slash ? src : ".", name);
}

static struct json_object *load(const char *name)
{
	char path[1024];
	struct json_object *o;

	data_path(name, path, sizeof path);
	o = json_object_from_file(path);
	cr_assert_not_null(o, "cannot parse %s", path);
	return o;
}

static char *slurp(const char *name)
{
	char path[1024];
	enpu_buf b = ENPU_BUF_INIT;
	enpu_err e = ENPU_ERR_INIT;

	data_path(name, path, sizeof path);
	cr_assert_eq(enpu_read_file(path, 1 << 20, &b, &e), 0, "cannot read %s", path);
	return enpu_buf_detach(&b, NULL);
}

/* Render a fixture into a fresh string (caller frees). */
static char *render(const char *name)
{
	struct json_object *o = load(name);
	enpu_buf b = ENPU_BUF_INIT;
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(cli_report_render(o, name, &b, &e), 0, "%s: %s", name, e.message);
	json_object_put(o);
	return enpu_buf_detach(&b, NULL);
}

Test(cli_report, bytes_units)
{
	static const struct { uint64_t n; const char *want; } cases[] = {
		{0, "0 B"}, {1, "1 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {1229, "1.2 KiB"},
		{1536, "1.5 KiB"}, {10240, "10.0 KiB"}, {1048063, "1023.5 KiB"},
		/* 1023.95 KiB and up would print as 1024.0 KiB: one unit up instead */
		{1048525, "1.0 MiB"}, {1048576, "1.0 MiB"}, {3u << 20, "3.0 MiB"},
		{1073741824ull, "1.0 GiB"}, {1610612736ull, "1.5 GiB"}, {1ull << 40, "1.0 TiB"},
		{UINT64_MAX, "16.0 EiB"},
	};
	char buf[32];

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		cr_expect_str_eq(cli_bytes_str(cases[i].n, buf, sizeof buf), cases[i].want,
				 "%llu: got '%s', want '%s'", (unsigned long long)cases[i].n, buf,
				 cases[i].want);
}

Test(cli_report, text_width_counts_code_points)
{
	cr_assert_eq(cli_text_width(""), 0);
	cr_assert_eq(cli_text_width("abc"), 3);
	cr_assert_eq(cli_text_width("64\xc3\x97" "8\xc3\x97" "27"), 7);   /* 64×8×27 */
	cr_assert_eq(cli_text_width("1.2 \xc2\xb5s"), 6);                  /* 1.2 µs */
}

Test(cli_report, npu_table_matches_expected_text)
{
	char *got = render("report_npu.json"), *want = slurp("report_npu.txt");

	cr_assert_str_eq(got, want, "got:\n%s\nwant:\n%s", got, want);
	free(got);
	free(want);
}

/* Independent of the expected file: order, alignment, and the dashes. */
Test(cli_report, npu_table_sorted_and_aligned)
{
	char *got = render("report_npu.json"), *save = NULL;
	const char *order[] = {"fc ", "conv1 ", "relu1 ", "dw2 ", "flat ", "tr "};
	size_t width = 0;
	int n = 0;

	for (char *line = strtok_r(got, "\n", &save); line; line = strtok_r(NULL, "\n", &save), n++) {
		if (n == 0) {
			cr_expect(strncmp(line, "npu_sim report: 6 ops", 21) == 0, "header '%s'", line);
			continue;
		}
		if (strncmp(line, "total:", 6) == 0) {
			cr_expect(strstr(line, "1201870 cycles") != NULL, "totals '%s'", line);
			cr_expect(strstr(line, "1201.87 \xc2\xb5s at 1000 MHz") != NULL, "%s", line);
			cr_expect(strstr(line, "DRAM read 80.4 KiB, write 4.5 KiB") != NULL, "%s", line);
			cr_expect(strstr(line, "peak SRAM 10.0 KiB") != NULL, "%s", line);
			cr_expect(strstr(line, "utilisation 4.1%") != NULL, "%s", line);
			break;
		}
		/* Every row of the table as wide as the column header row. */
		if (n == 1) {
			width = cli_text_width(line);
			cr_expect(strncmp(line, "op ", 3) == 0, "column header '%s'", line);
			continue;
		}
		cr_expect_eq(cli_text_width(line), width, "row %d is %zu wide, not %zu: '%s'", n,
			     cli_text_width(line), width, line);
		cr_assert_lt(n - 2, 6);
		cr_expect(strncmp(line, order[n - 2], strlen(order[n - 2])) == 0,
			  "row %d should be '%s': '%s'", n - 2, order[n - 2], line);
	}
	cr_expect_eq(n, 8, "header, column header, 6 rows, totals: saw %d lines", n + 1);
	free(got);
}

/* The memory-bound ops first, most stall first, ties in op order (b before
 * d), then the rest by cost: c (stall 50, cost 60), b (5, 105), d (5, 20),
 * a (0, 1000), whatever their cost; the roofline columns with a bandwidth. */
Test(cli_report, memory_bound_ops_first)
{
	char *got = render("report_npu_stalls.json"), *save = NULL;
	const char *order[] = {"c ", "b ", "d ", "a "};
	int n = 0;

	cr_expect(strstr(got, "8.40   memory") != NULL, "b needs 840 B / 100 cycles: %s", got);
	for (char *line = strtok_r(got, "\n", &save); line; line = strtok_r(NULL, "\n", &save), n++) {
		if (n == 0) {
			cr_expect(strstr(line, "DRAM 8 B/cycle") != NULL, "header '%s'", line);
		} else if (n == 1) {
			cr_expect(strstr(line, "DRAM bytes  MAC/B  needs B/c    bound") != NULL,
				  "column header '%s'", line);
		} else if (n < 6) {
			cr_expect(strncmp(line, order[n - 2], strlen(order[n - 2])) == 0,
				  "row %d should be '%s': '%s'", n - 2, order[n - 2], line);
			cr_expect(strstr(line, n < 5 ? "   memory" : "  compute") != NULL, "%s", line);
		}
	}
	cr_expect_eq(n, 7);
	free(got);
}

/* Without a bandwidth limit the table is as it was: no roofline columns,
 * no bandwidth in the header. */
Test(cli_report, no_bandwidth_no_roofline_columns)
{
	struct json_object *o = load("report_npu.json"), *t;
	enpu_buf b = ENPU_BUF_INIT;
	enpu_err e = ENPU_ERR_INIT;
	char *got;

	cr_assert(json_object_object_get_ex(json_object_object_get(o, "npu"), "target", &t));
	json_object_object_add(t, "dram_bytes_per_cycle", json_object_new_int(0));
	cr_assert_eq(cli_report_render(o, "x", &b, &e), 0, "%s", e.message);
	got = enpu_buf_detach(&b, NULL);
	cr_expect(strstr(got, "B/cycle") == NULL, "%s", got);
	cr_expect(strstr(got, "\nop     lowering  shape        folds  cycles    stall  util %  "
			  "SRAM words  DRAM bytes\nfc ") != NULL, "%s", got);
	cr_expect(strstr(got, "MAC/B") == NULL && strstr(got, "memory") == NULL, "%s", got);
	free(got);
	json_object_put(o);
}

/* Each cell a column holds ends at the same column (right-aligned numbers). */
Test(cli_report, number_columns_right_aligned)
{
	char *got = render("report_npu.json");
	char *l2 = strchr(got, '\n') + 1, *l3 = strchr(l2, '\n') + 1, *l4 = strchr(l3, '\n') + 1;
	const char *cyc_head = strstr(l2, "cycles");
	const char *fc_cyc = strstr(l3, " 1566 "), *conv_cyc = strstr(l4, " 228 ");

	cr_assert(cyc_head && fc_cyc && conv_cyc);
	/* "cycles" ends where "1566" and "228" end (same byte offset: the rows
	 * hold only ASCII before this column except the ×, counted below). */
	cr_expect_eq(cli_text_width(l2) - cli_text_width(cyc_head + 6),
		     cli_text_width(l3) - cli_text_width(fc_cyc + 5));
	cr_expect_eq(cli_text_width(l2) - cli_text_width(cyc_head + 6),
		     cli_text_width(l4) - cli_text_width(conv_cyc + 4));
	free(got);
}

Test(cli_report, cpu_ref_has_no_cycle_model)
{
	char *got = render("report_cpu_ref.json"), *want = slurp("report_cpu_ref.txt");

	cr_assert_str_eq(got, want);
	cr_expect(strstr(got, "cpu_ref") && strstr(got, "no cycle model") && strstr(got, "0.000125 s"));
	free(got);
	free(want);
}

/* version 2 has no clock (the job has the run's seconds): no wall part */
Test(cli_report, cpu_ref_v2_has_no_wall)
{
	char *got = render("report_cpu_ref_v2.json"), *want = slurp("report_cpu_ref_v2.txt");

	cr_assert_str_eq(got, want);
	cr_expect(strstr(got, "wall") == NULL, "%s", got);
	free(got);
	free(want);
}

Test(cli_report, not_a_report_is_a_usage_error)
{
	struct json_object *o = load("report_not.json");
	enpu_buf b = ENPU_BUF_INIT;
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(cli_report_render(o, "x.json", &b, &e), -1);
	cr_expect_eq(e.code, ENPU_E_USAGE);
	cr_expect(strstr(e.message, "'x.json' is not an eulernpu report") != NULL, "%s", e.message);
	cr_expect_eq(b.len, 0);
	json_object_put(o);
	cr_assert_eq(cli_report_render(NULL, "null", &b, &e), -1);
	enpu_buf_free(&b);
}

Test(cli_report, empty_npu_section_prints_dashes)
{
	struct json_object *o = json_tokener_parse(
		"{\"format\": \"eulernpu-report\", \"backend\": \"npu_sim\", \"npu\": {}}");
	enpu_buf b = ENPU_BUF_INIT;
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(cli_report_render(o, "e", &b, &e), 0);
	cr_expect(strstr(b.data, "npu_sim report: 0 ops\n") != NULL, "%s", b.data);
	cr_expect(strstr(b.data, "total: - cycles") != NULL, "%s", b.data);
	cr_expect(strstr(b.data, "utilisation -\n") != NULL, "%s", b.data);
	json_object_put(o);
	enpu_buf_free(&b);
}

Test(cli_report, run_summary_line)
{
	struct json_object *o = json_tokener_parse(
		"{\"cycles\": 1234, \"time_us\": 1.234, \"clock_mhz\": 1000, "
		"\"dram_bytes\": 1229, \"utilisation\": 0.123}");
	struct json_object *partial = json_tokener_parse("{\"cycles\": 7}");
	struct json_object *none = json_tokener_parse("{\"time_us\": 1}");
	char line[256];

	cr_assert_eq(cli_npu_summary(o, line, sizeof line), 0);
	cr_expect_str_eq(line, "npu_sim    : 1234 cycles \xc2\xb7 1.23 \xc2\xb5s at 1000 MHz \xc2\xb7 "
			 "DRAM 1.2 KiB \xc2\xb7 utilisation 12.3%");
	/* The colon sits under "Run      OK:"'s. */
	cr_expect_eq(strchr(line, ':') - line, strchr("Run      OK: x", ':') - "Run      OK: x");
	cr_assert_eq(cli_npu_summary(partial, line, sizeof line), 0);
	cr_expect_str_eq(line, "npu_sim    : 7 cycles \xc2\xb7 - \xc2\xb5s at - MHz \xc2\xb7 DRAM - "
			 "\xc2\xb7 utilisation -");
	cr_expect_eq(cli_npu_summary(none, line, sizeof line), -1);
	cr_expect_eq(cli_npu_summary(NULL, line, sizeof line), -1);
	json_object_put(o);
	json_object_put(partial);
	json_object_put(none);
}

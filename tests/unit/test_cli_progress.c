/* test_cli_progress.c: the progress formatters (client/progress.c): the
 * transfer bar at several terminal widths, byte units and rates, ETA text,
 * what a narrow terminal keeps, and the wait status line. */
#include <stdio.h>
#include <string.h>
#include <criterion/criterion.h>
#include "cli.h"
#include "progress.h"

#define MiB (1024u * 1024u)

/* the [###...] part of a line: its inside width and how many are filled */
static int bar_parts(const char *line, int *fill)
{
	const char *o = strchr(line, '['), *c = o ? strchr(o, ']') : NULL;

	*fill = 0;
	if (!o || !c)
		return -1;
	for (const char *p = o + 1; p < c; p++)
		*fill += *p == '#';
	return (int)(c - o - 1);
}

Test(cli_progress, eta_text)
{
	char b[32];

	cr_assert_str_eq(cli_progress_eta_str(0, b, sizeof b), "0s");
	cr_assert_str_eq(cli_progress_eta_str(6.2, b, sizeof b), "7s");
	cr_assert_str_eq(cli_progress_eta_str(59, b, sizeof b), "59s");
	cr_assert_str_eq(cli_progress_eta_str(65, b, sizeof b), "1m05s");
	cr_assert_str_eq(cli_progress_eta_str(3600, b, sizeof b), "1h00m");
	cr_assert_str_eq(cli_progress_eta_str(7380, b, sizeof b), "2h03m");
	cr_assert_str_eq(cli_progress_eta_str(1e9, b, sizeof b), ">99h");
	cr_assert_str_eq(cli_progress_eta_str(-1, b, sizeof b), "--");
	cr_assert_str_eq(cli_progress_eta_str(0.0 / 0.0, b, sizeof b), "--");
}

Test(cli_progress, full_line_at_80_columns)
{
	char b[512];

	cli_progress_bar_line(b, sizeof b, "input.npz", 32 * MiB, 64 * MiB, 2.0, 80);
	cr_assert_str_eq(b, "input.npz [############............]  50% 32.0 MiB / 64.0 MiB "
			    "16.0 MiB/s ETA 2s");
}

Test(cli_progress, bar_fill_follows_the_bytes)
{
	char b[512];
	int fill, w;

	cli_progress_bar_line(b, sizeof b, "x.npz", 1000, 4000, 1.0, 120);
	w = bar_parts(b, &fill);
	cr_assert_eq(w, 40, "bar width %d in '%s'", w, b);   /* capped */
	cr_assert_eq(fill, 10);
	cr_assert(strstr(b, " 25% 1000 B / 3.9 KiB 1000 B/s ETA 3s"), "%s", b);

	cli_progress_bar_line(b, sizeof b, "x.npz", 0, 100, 0, 80);
	bar_parts(b, &fill);
	cr_assert_eq(fill, 0);
	cr_assert(strstr(b, "  0% 0 B / 100 B 0 B/s ETA --"), "%s", b);

	cli_progress_bar_line(b, sizeof b, "x.npz", 100, 100, 1.0, 80);
	w = bar_parts(b, &fill);
	cr_assert_eq(fill, w);
	cr_assert(strstr(b, "100% 100 B / 100 B"), "%s", b);
	/* 99.9 % done is not 100 % */
	cli_progress_bar_line(b, sizeof b, "x.npz", 9999, 10000, 1.0, 80);
	cr_assert(strstr(b, " 99% "), "%s", b);
}

Test(cli_progress, byte_units)
{
	char b[512];

	cli_progress_bar_line(b, sizeof b, "w.npz", 3ull << 30, 6ull << 30, 3.0, 100);
	cr_assert(strstr(b, "3.0 GiB / 6.0 GiB 1.0 GiB/s ETA 3s"), "%s", b);
	cli_progress_bar_line(b, sizeof b, "w.npz", 512, 2048, 1.0, 100);
	cr_assert(strstr(b, "512 B / 2.0 KiB 512 B/s"), "%s", b);
}

Test(cli_progress, unknown_total_has_no_bar)
{
	char b[512];

	cli_progress_bar_line(b, sizeof b, "x.npz", 5000, 0, 2.0, 80);
	cr_assert_str_eq(b, "x.npz 4.9 KiB 2.4 KiB/s");
}

Test(cli_progress, never_wider_than_the_terminal)
{
	char b[512];
	const char *names[] = {"", "a.npz", "a-very-long-file-name-that-goes-on-and-on.npz",
			       "données-été.npz"};

	for (size_t n = 0; n < sizeof names / sizeof names[0]; n++)
		for (int w = 0; w <= 200; w++) {
			cli_progress_bar_line(b, sizeof b, names[n], 123456789, 987654321, 3.0, w);
			cr_assert(cli_text_width(b) <= (size_t)(w > 0 ? w - 1 : 0),
				  "width %d: '%s' is %zu columns", w, b, cli_text_width(b));
			cli_progress_wait_line(b, sizeof b, "0123abcd", "queued", 12, 340, 75, w);
			cr_assert(cli_text_width(b) <= (size_t)(w > 0 ? w - 1 : 0),
				  "width %d: '%s' is %zu columns", w, b, cli_text_width(b));
		}
}

Test(cli_progress, narrow_terminals_drop_parts_in_order)
{
	char b[512];

	cli_progress_bar_line(b, sizeof b, "input.npz", 32 * MiB, 64 * MiB, 2.0, 60);
	cr_assert_str_eq(b, "input.npz [#######........]  50% 32.0 MiB / 64.0 MiB ETA 2s");
	cli_progress_bar_line(b, sizeof b, "input.npz", 32 * MiB, 64 * MiB, 2.0, 30);
	cr_assert_str_eq(b, "input.npz [######......]  50%");
	cli_progress_bar_line(b, sizeof b, "input.npz", 32 * MiB, 64 * MiB, 2.0, 15);
	cr_assert_str_eq(b, "input.npz  50%");
	cli_progress_bar_line(b, sizeof b, "input.npz", 32 * MiB, 64 * MiB, 2.0, 5);
	cr_assert_str_eq(b, "50%");
	cli_progress_bar_line(b, sizeof b, "input.npz", 32 * MiB, 64 * MiB, 2.0, 0);
	cr_assert_str_eq(b, "");
}

Test(cli_progress, long_names_are_cut_with_an_ellipsis)
{
	char b[512];

	cli_progress_bar_line(b, sizeof b, "a-very-long-file-name-that-goes-on-and-on.npz", 1000,
			      4000, 2.0, 100);
	cr_assert(strncmp(b, "a-very-long-file-name-that-go… [", strlen("a-very-long-file-name-that-go… [")) == 0,
		  "%s", b);
}

Test(cli_progress, wait_line)
{
	char b[512];

	cli_progress_wait_line(b, sizeof b, "j1a2b", "queued", 2, 15, 12.2, 80);
	cr_assert_str_eq(b, "waiting for job j1a2b: queued, #2 in queue, ETA ~15s · 12s");
	cli_progress_wait_line(b, sizeof b, "j1a2b", "running", -1, -1, 65, 80);
	cr_assert_str_eq(b, "waiting for job j1a2b: running · 1m05s");
	cli_progress_wait_line(b, sizeof b, NULL, "queued", -1, -1, 2.9, 80);
	cr_assert_str_eq(b, "waiting for the job: queued · 2s");
	cli_progress_wait_line(b, sizeof b, "j1a2b", "", -1, -1, 3, 80);
	cr_assert_str_eq(b, "waiting for job j1a2b · 3s");
	/* narrow: the preamble goes first */
	cli_progress_wait_line(b, sizeof b, "j1a2b", "running", -1, -1, 5, 30);
	cr_assert_str_eq(b, "job j1a2b: running · 5s");
}

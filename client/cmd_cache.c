/* cmd_cache.c: `eulernpu cache stats|ls|rm ID|gc`: the server's cache as an
 * operator sees it (GET /v1/cache, GET /v1/cache/entries, DELETE
 * /v1/cache/entries/{id}, POST /v1/cache/gc), aligned for people or the
 * server's JSON with --json. ls, rm and gc are admin routes on a lab server. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "api.h"
#include "cli.h"
#include "rest.h"
#include "digest.h"

static const char usage[] =
	"usage: eulernpu cache stats [--json]\n"
	"       eulernpu cache ls [--kind blob|artifact|ac] [--limit N] [--cursor C] [--json]\n"
	"       eulernpu cache rm ID [--json]\n"
	"       eulernpu cache gc [--verify] [--json]\n"
	"\n"
	"The server's cache of blobs, compiled artifacts and action-cache entries.\n"
	"\n"
	"  stats      entries, bytes (and the --cache-max bound), hit rates of the\n"
	"             action cache (compiles) and the CAS (blobs asked for),\n"
	"             evictions and integrity failures\n"
	"  ls         entries, most recently used first (--limit, default 1000);\n"
	"             past the limit it prints the --cursor of the next page\n"
	"  rm ID      remove a blob (by digest), an artifact (by id, with its\n"
	"             action-cache entries) or an action-cache entry (by key);\n"
	"             refused while a queued or running job needs it\n"
	"  gc         evict down to --cache-max now, drop artifacts whose blobs are\n"
	"             gone and stale temporary files; --verify re-hashes every blob\n"
	"\n"
	"  --json     print the server's answer as it is\n";

static void print_json(struct json_object *o)
{
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
						      JSON_C_TO_STRING_NOSLASHESCAPE));
}

static unsigned long long num(struct json_object *o, const char *k)
{
	long long v;
	return cli_json_int(o, k, &v) == 0 && v > 0 ? (unsigned long long)v : 0;
}

/* "3 hits, 1 miss (75.0% hit rate)"; no rate before any lookup. */
static void hits_str(unsigned long long h, unsigned long long m, char *out, size_t cap)
{
	int n = snprintf(out, cap, "%llu hit%s, %llu miss%s", h, h == 1 ? "" : "s", m,
			 m == 1 ? "" : "es");
	if (h + m && n > 0 && (size_t)n < cap)
		snprintf(out + n, cap - (size_t)n, " (%.1f%% hit rate)",
			 100.0 * (double)h / (double)(h + m));
}

static void print_stats(struct json_object *o)
{
	char a[64], b[64], line[256];
	unsigned long long max = num(o, F_MAX_BYTES);
	const char *const labels[] = {
		"blobs", "artifacts", "action cache", "CAS lookups", "evictions", "integrity failures",
	};
	size_t w = 0, i;

	for (i = 0; i < sizeof labels / sizeof labels[0]; i++)
		if (strlen(labels[i]) > w)
			w = strlen(labels[i]);
	cli_bytes_str(num(o, F_BLOB_BYTES), a, sizeof a);
	if (max)
		cli_bytes_str(max, b, sizeof b);
	printf("%-*s  %llu (%s%s%s)\n", (int)w, labels[0], num(o, F_BLOBS), a,
	       max ? " of " : ", no --cache-max", max ? b : "");
	printf("%-*s  %llu\n", (int)w, labels[1], num(o, F_ARTIFACTS));
	hits_str(num(o, F_AC_HITS), num(o, F_AC_MISSES), line, sizeof line);
	printf("%-*s  %llu entr%s, %s\n", (int)w, labels[2], num(o, F_AC_ENTRIES),
	       num(o, F_AC_ENTRIES) == 1 ? "y" : "ies", line);
	hits_str(num(o, F_CAS_HITS), num(o, F_CAS_MISSES), line, sizeof line);
	printf("%-*s  %s\n", (int)w, labels[3], line);
	cli_bytes_str(num(o, F_EVICTED_BYTES), a, sizeof a);
	printf("%-*s  %llu (%s)\n", (int)w, labels[4], num(o, F_EVICTIONS), a);
	printf("%-*s  %llu\n", (int)w, labels[5], num(o, F_INTEGRITY_FAILURES));
}

#define NCOL 5
static const char *const heads[NCOL] = {"KIND", "ID", "BYTES", "LAST USE", "ARTIFACT"};

static void print_entries(struct json_object *o, int cursor)
{
	const char *s_next;
	struct json_object *arr;
	size_t n, i, w[NCOL];
	char (*cells)[NCOL][80];
	int c;

	if (!json_object_object_get_ex(o, F_ENTRIES, &arr) ||
	    !json_object_is_type(arr, json_type_array) || (n = json_object_array_length(arr)) == 0) {
		printf(cursor ? "no entries after the cursor\n" : "the cache is empty\n");
		return;
	}
	cells = calloc(n, sizeof *cells);
	if (!cells)
		return;
	for (c = 0; c < NCOL; c++)
		w[c] = strlen(heads[c]);
	for (i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(arr, i), *v;
		const char *s;
		snprintf(cells[i][0], 80, "%s", (s = cli_json_str(e, F_KIND)) ? s : "?");
		snprintf(cells[i][1], 80, "%s", (s = cli_json_str(e, F_ID)) ? s : "?");
		if (json_object_object_get_ex(e, F_BYTES, &v))
			cli_bytes_str(num(e, F_BYTES), cells[i][2], 80);
		else
			snprintf(cells[i][2], 80, "-");
		snprintf(cells[i][3], 80, "%s", (s = cli_json_str(e, F_LAST_USE)) ? s : "-");
		s = cli_json_str(e, F_ARTIFACT_ID);
		snprintf(cells[i][4], 80, "%.12s", s ? s : "-");
		for (c = 0; c < NCOL; c++)
			if (strlen(cells[i][c]) > w[c])
				w[c] = strlen(cells[i][c]);
	}
	for (c = 0; c < NCOL; c++)
		printf(c < NCOL - 1 ? "%-*s  " : "%-*s\n", c < NCOL - 1 ? (int)w[c] : 0, heads[c]);
	for (i = 0; i < n; i++)
		for (c = 0; c < NCOL; c++) {
			/* bytes right-aligned, the rest left */
			if (c == 2)
				printf("%*s  ", (int)w[c], cells[i][c]);
			else if (c < NCOL - 1)
				printf("%-*s  ", (int)w[c], cells[i][c]);
			else
				printf("%s\n", cells[i][c]);
		}
	s_next = cli_json_str(o, F_NEXT);
	if (s_next)
		printf("(%zu of %llu entries; --limit N shows more, --cursor %s the next page)\n", n,
		       num(o, F_TOTAL), s_next);
	else if (!cursor && (unsigned long long)n < num(o, F_TOTAL))
		printf("(%zu of %llu entries; --limit N shows more)\n", n, num(o, F_TOTAL));
	free(cells);
}

static void print_gc(struct json_object *o)
{
	char a[64], b[64], m[64];
	unsigned long long max = num(o, F_MAX_BYTES);

	cli_bytes_str(num(o, F_EVICTED_BYTES), a, sizeof a);
	cli_bytes_str(num(o, F_BLOB_BYTES), b, sizeof b);
	if (max)
		cli_bytes_str(max, m, sizeof m);
	printf("evicted            %llu blob%s (%s)\n", num(o, F_EVICTIONS),
	       num(o, F_EVICTIONS) == 1 ? "" : "s", a);
	printf("artifacts dropped  %llu\n", num(o, F_ARTIFACTS_DROPPED));
	printf("ac entries dropped %llu\n", num(o, F_AC_DROPPED));
	printf("temp files removed %llu\n", num(o, F_TMP_REMOVED));
	if (num(o, F_VERIFIED))
		printf("verified           %llu blob%s, %llu bad (dropped)\n", num(o, F_VERIFIED),
		       num(o, F_VERIFIED) == 1 ? "" : "s", num(o, F_INTEGRITY_FAILURES));
	printf("now held           %llu blob%s (%s%s%s)\n", num(o, F_BLOBS),
	       num(o, F_BLOBS) == 1 ? "" : "s", b, max ? " of " : ", no --cache-max",
	       max ? m : "");
}

/* The path of `cache ls` with its --kind, --limit and --cursor. 0, or -1 with e. */
static int ls_path(const char *kind, const char *limit, const char *cursor, char *path,
		   size_t cap, enpu_err *e)
{
	int n;

	if (kind && strcmp(kind, KIND_BLOB) && strcmp(kind, KIND_ARTIFACT) &&
	    strcmp(kind, KIND_AC))
		return cli_usage(e, "cache", "--kind is '%s'; it takes blob, artifact or ac", kind);
	if (limit && (strspn(limit, "0123456789") != strlen(limit) || !*limit ||
		      strlen(limit) > 9 || atol(limit) < 1))
		return cli_usage(e, "cache", "--limit is '%s'; it takes a whole number from 1", limit);
	/* a cursor is digits, dots and hex: nothing to escape in a query */
	if (cursor && (!*cursor || strlen(cursor) > 120 ||
		       strspn(cursor, "0123456789abcdef.") != strlen(cursor)))
		return cli_usage(e, "cache", "--cursor is '%.40s'; it takes the cursor a previous "
				 "'cache ls' printed", cursor);
	n = snprintf(path, cap, "%s?", API_CACHE_ENTRIES);
	if (kind)
		n += snprintf(path + n, cap - (size_t)n, "%s=%s&", Q_KIND, kind);
	if (limit)
		n += snprintf(path + n, cap - (size_t)n, "%s=%s&", Q_LIMIT, limit);
	if (cursor)
		n += snprintf(path + n, cap - (size_t)n, "%s=%s&", Q_CURSOR, cursor);
	path[n - 1] = '\0';   /* the last '&', or the '?' of no query */
	return 0;
}

/* The path of `cache rm ID`. 0, or -1 with e. */
static int rm_path(const char **pos, int n_pos, char *path, size_t cap, enpu_err *e)
{
	if (n_pos < 2)
		return cli_usage(e, "cache", "'cache rm' needs an ID (see 'eulernpu cache ls')");
	if (!enpu_is_sha256_hex(pos[1]))
		return cli_usage(e, "cache", "'%s' is not a digest or an artifact id (64 lowercase "
				 "hex, as 'eulernpu cache ls' prints)", pos[1]);
	snprintf(path, cap, "%s/%s", API_CACHE_ENTRIES, pos[1]);
	return 0;
}

/* The answer of subcommand sub for people. */
static void print_answer(const char *sub, struct json_object *res, const char **pos, int cursor)
{
	if (!strcmp(sub, "stats"))
		print_stats(res);
	else if (!strcmp(sub, "ls"))
		print_entries(res, cursor);
	else if (!strcmp(sub, "gc"))
		print_gc(res);
	else
		printf("Removed  %s %s%s\n", cli_json_str(res, F_REMOVED) ? cli_json_str(res, F_REMOVED) : "?",
		       pos[1], num(res, F_AC_DROPPED) ? " (and its action-cache entries)" : "");
}

int cmd_cache(cli_ctx *ctx, int argc, char **argv)
{
	enpu_err e = ENPU_ERR_INIT;
	const char *pos[2], *kind = NULL, *limit = NULL, *cursor = NULL, *sub;
	int json = 0, verify = 0, n_pos = 0, r;
	const cli_opt opts[] = {
		{"--json", CLI_OPT_FLAG, &json},
		{"--kind", CLI_OPT_STR, &kind},
		{"--limit", CLI_OPT_STR, &limit},
		{"--cursor", CLI_OPT_STR, &cursor},
		{"--verify", CLI_OPT_FLAG, &verify},
		{NULL, 0, NULL},
	};
	struct json_object *res = NULL;
	char path[256];

	r = cli_parse_opts("cache", argc, argv, opts, pos, 2, &n_pos, &e);
	if (r == 1) {
		fputs(usage, stdout);
		return 0;
	}
	if (r < 0)
		return cli_report(&e);
	if (n_pos == 0)
		return cli_report((cli_usage(&e, "cache", "missing the subcommand: stats, ls, rm ID or gc"), &e));
	sub = pos[0];
	if (strcmp(sub, "rm") != 0 && n_pos > 1)
		return cli_report((cli_usage(&e, "cache", "'cache %s' takes no argument ('%s')", sub,
					     pos[1]), &e));
	if ((kind || limit || cursor) && strcmp(sub, "ls") != 0)
		return cli_report((cli_usage(&e, "cache", "--kind, --limit and --cursor go with "
					     "'cache ls'"), &e));
	if (verify && strcmp(sub, "gc") != 0)
		return cli_report((cli_usage(&e, "cache", "--verify goes with 'cache gc'"), &e));
	if (!strcmp(sub, "stats"))
		snprintf(path, sizeof path, "%s", API_CACHE);
	else if (!strcmp(sub, "ls"))
		r = ls_path(kind, limit, cursor, path, sizeof path, &e);
	else if (!strcmp(sub, "rm"))
		r = rm_path(pos, n_pos, path, sizeof path, &e);
	else if (!strcmp(sub, "gc"))
		snprintf(path, sizeof path, "%s%s", API_CACHE_GC, verify ? "?" Q_VERIFY "=1" : "");
	else
		r = cli_usage(&e, "cache", "unknown subcommand '%s': stats, ls, rm ID or gc", sub);
	if (r < 0)
		return cli_report(&e);
	if (cli_connect(ctx, &e) < 0 ||
	    cli_http_json(ctx->conn, !strcmp(sub, "rm") ? "DELETE" : !strcmp(sub, "gc") ? "POST" : "GET",
			  path, NULL, !strcmp(sub, "gc") ? 600 : 60, &res, NULL, NULL, &e) < 0) {
		json_object_put(res);
		return cli_report(&e);
	}
	if (json)
		print_json(res);
	else
		print_answer(sub, res, pos, cursor != NULL);
	json_object_put(res);
	return 0;
}

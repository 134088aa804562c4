/* cli.h: what the client's verb files share: the verb table entry, the
 * context (which server, the open connection), the option parser, error
 * reporting, and the pure formatting helpers (Python float repr, NumPy
 * tuples, safe artifact paths) that the unit tests exercise. */
#ifndef CLI_H
#define CLI_H

#include <stddef.h>
#include <stdint.h>
#include "err.h"
#include "buf.h"
#include "enpu.h"

struct json_object;
typedef struct enpu_rest cli_conn;  /* rest.h: proto/restc.h's client */

#define CLI_VERSION ENPU_VERSION   /* one version for both programs (enpu.h) */

/* One run of the tool. server is --server, else $EULERNPU_SERVER, else the
 * config file's server:, else NULL (a private daemon is found or started
 * on first use). token and cacert are found the same way (flags > env >
 * ~/.config/eulernpu/config.yaml). conn is opened by cli_connect and closed
 * by main. */
typedef struct cli_ctx {
	const char *server;
	cli_conn *conn;
	char *token;              /* bearer token for http(s) servers; never printed */
	const char *cacert;       /* CA file for https:// servers */
} cli_ctx;

#define CLI_CTX_INIT {NULL, NULL, NULL, NULL}

/* ---- the client's config file (opts.c) -------------------------------- */

/* ~/.config/eulernpu/config.yaml ($XDG_CONFIG_HOME): a mapping with server,
 * token or token_file, cacert, retry, retry_max_time. Absent file: 0 and nothing set. Values are
 * allocated (caller frees). -1 + *e (ENPU_E_USAGE at path:line:col). */
typedef struct cli_config {
	char *server, *token, *token_file, *cacert, *retry, *retry_max_time;
} cli_config;

int cli_config_path(char *out, size_t cap);
int cli_config_load(const char *path, cli_config *out, enpu_err *e);
void cli_config_free(cli_config *c);
/* A token file's token: the first line, trailing whitespace dropped, one
 * word of printable characters. Allocated into *out. A file that others
 * may read or write (group or world) is refused (ENPU_E_USAGE, chmod 600). */
int cli_read_token(const char *path, char **out, enpu_err *e);

/* A verb: cmd_x(ctx, argc, argv) with argv[0] the verb's name; the return
 * value is the process's exit status. */
typedef int (*cli_cmd_fn)(cli_ctx *ctx, int argc, char **argv);

typedef struct cli_verb {
	const char *name;
	cli_cmd_fn fn;
	const char *summary;      /* one line for `eulernpu --help` */
} cli_verb;

int cmd_validate(cli_ctx *ctx, int argc, char **argv);
int cmd_compile(cli_ctx *ctx, int argc, char **argv);
int cmd_run(cli_ctx *ctx, int argc, char **argv);
int cmd_compare(cli_ctx *ctx, int argc, char **argv);
int cmd_backends(cli_ctx *ctx, int argc, char **argv);
int cmd_explain(cli_ctx *ctx, int argc, char **argv);
int cmd_version(cli_ctx *ctx, int argc, char **argv);
int cmd_daemon(cli_ctx *ctx, int argc, char **argv);
int cmd_report(cli_ctx *ctx, int argc, char **argv);
int cmd_boards(cli_ctx *ctx, int argc, char **argv);
int cmd_deploy(cli_ctx *ctx, int argc, char **argv);
int cmd_models(cli_ctx *ctx, int argc, char **argv);
int cmd_jobs(cli_ctx *ctx, int argc, char **argv);
int cmd_cache(cli_ctx *ctx, int argc, char **argv);
int cmd_import(cli_ctx *ctx, int argc, char **argv);

/* import --input NAME=SHAPE: "x=1,3,224,224" into *b (name up to 255
 * bytes; 1 to CLI_BIND_DIMS dims, each 1 .. 2^31-1). -1 with *e
 * (ENPU_E_USAGE) on any other form. */
#define CLI_BIND_DIMS 8
typedef struct cli_bind {
	char name[256];
	int ndim;
	long long dim[CLI_BIND_DIMS];
} cli_bind;
int cli_parse_bind(const char *arg, cli_bind *b, enpu_err *e);

/* ---- options (opts.c) ------------------------------------------------ */

typedef enum cli_opt_type {
	CLI_OPT_STR,      /* dst: const char ** (points into argv) */
	CLI_OPT_FLAG,     /* dst: int *, set to 1 */
	CLI_OPT_DOUBLE,   /* dst: double *, finite and >= 0 */
	CLI_OPT_LIST,     /* dst: cli_strlist *, repeatable (import --input) */
} cli_opt_type;

/* The values of a repeatable option, in order (pointing into argv). */
#define CLI_LIST_MAX 64
typedef struct cli_strlist {
	const char *v[CLI_LIST_MAX];
	int n;
} cli_strlist;

typedef struct cli_opt {
	const char *name;     /* "--spec"; the table ends with {NULL} */
	cli_opt_type type;
	void *dst;
} cli_opt;

/* Parse argv[1..argc) for verb: "--x V", "--x=V", flags, and positionals
 * (up to max_pos into pos[], counted in *n_pos); "--" ends the options.
 * Returns 0, 1 when -h/--help was given (nothing else is checked), or -1
 * with *e (ENPU_E_USAGE, fix naming `eulernpu VERB --help`). */
int cli_parse_opts(const char *verb, int argc, char **argv, const cli_opt *opts,
		   const char **pos, int max_pos, int *n_pos, enpu_err *e);

/* Fill *e with a usage error for verb and return -1. */
int cli_usage(enpu_err *e, const char *verb, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Print the three lines on stderr; returns the exit status of e's code. */
int cli_report(const enpu_err *e);

/* Fill *e from a server's error object {"code","message","where","fix"}.
 * An unknown or absent code becomes ENPU_E_SERVER. */
void cli_err_from_json(struct json_object *err, enpu_err *e);

/* Open ctx->conn if not yet open (starting a private daemon when no server
 * is configured). 0 or -1 with *e. */
int cli_connect(cli_ctx *ctx, enpu_err *e);

/* ---- outputs (outputs.c) ---------------------------------------------- */

/* A path option as the user gave it: "--out" and its value (NULL: absent). */
typedef struct cli_path {
	const char *flag, *path;
} cli_path;

/* Refuse (ENPU_E_USAGE for verb, -1) outputs that name the same file as
 * each other or as an input, or a file output naming an existing
 * directory (bit i of dirs set: outs[i] is one, compile --out); paths
 * compared resolved (realpath of existing ones, the parent's realpath plus
 * the base name of new ones). At most 8 of each. 0 when all is well. */
int cli_outputs_check(const char *verb, const cli_path *outs, int n_out, unsigned dirs,
		      const cli_path *ins, int n_in, enpu_err *e);

/* A new file beside dest (".BASE.tmp.XXXXXX", mode 0666 & ~umask) for an
 * atomic write: its fd, its name into tmp; -1 with *e (ENPU_E_IO naming
 * dest, the fix about the user's disk). */
int cli_tmp_open(const char *dest, char *tmp, size_t cap, enpu_err *e);
/* fsync and close fd, rename tmp to dest; on failure tmp is removed and
 * *e says so (ENPU_E_IO as above). 0 or -1. */
int cli_tmp_commit(int fd, const char *tmp, const char *dest, enpu_err *e);
/* Write n bytes to path atomically through the two above. 0 or -1. */
int cli_write_output(const char *path, const void *p, size_t n, enpu_err *e);
/* When *e is an ENPU_E_IO (a local write failed), reword it to name the
 * output path and the user's disk (not the server's storage). Returns -1. */
int cli_local_io(enpu_err *e, const char *path);

/* compile --out DIR: check that DIR is absent, an empty directory or an
 * eulernpu artifact (else ENPU_E_USAGE for verb), and create a temporary
 * directory beside it (name into tmp). 0 or -1 with *e. */
int cli_outdir_begin(const char *verb, const char *dir, char *tmp, size_t cap, enpu_err *e);
/* import --out DIR: the same, but DIR must be absent or an empty
 * directory (never replaced: it may hold a hand-written spec). */
int cli_outdir_begin_new(const char *verb, const char *dir, char *tmp, size_t cap, enpu_err *e);
/* Move the finished tmp into the place of DIR, absent or empty: a DIR
 * that gained files meanwhile is left alone (ENPU_E_USAGE for verb), and
 * tmp removed. 0 or -1. */
int cli_outdir_commit_new(const char *verb, const char *tmp, const char *dir, enpu_err *e);
/* Move the finished tmp into DIR's place (an old artifact there is set
 * aside, then removed). tmp is gone afterwards either way. 0 or -1. */
int cli_outdir_commit(const char *tmp, const char *dir, enpu_err *e);
/* Remove the temporary directory of a failed compile. */
void cli_outdir_abort(const char *tmp);

/* ---- formatting (fmt.c) ---------------------------------------------- */

/* Python's repr() of a float: the shortest digits that round-trip, fixed
 * notation for exponents in [-4, 16), else "1e-05" style; "0.0", "inf",
 * "-inf", "nan". Returns out. */
char *cli_float_repr(double x, char *out, size_t cap);

/* NumPy's shape tuple: "(1, 4)", "(8,)", "()". Returns out. */
char *cli_tuple_str(const long long *dims, int n, char *out, size_t cap);

/* A path from a manifest is safe to join under a directory: relative, no
 * "." or ".." or empty component, no backslash or control characters,
 * shorter than 1024 bytes. 1 = safe. */
int cli_path_is_safe(const char *path);

/* Small json-c accessors: NULL / -1 / 0 when absent or of another type. */
const char *cli_json_str(struct json_object *o, const char *key);
int cli_json_int(struct json_object *o, const char *key, long long *out);
/* A verb's --json answer: o as one pretty JSON document on stdout. */
void cli_print_json(struct json_object *o);
/* An aligned table on stdout: ncol heads, then rows of cells (row-major,
 * nrows * ncol strings), two spaces between columns, the last unpadded. */
void cli_table_print(const char *const *heads, int ncol, char *const *cells, size_t nrows);

/* ---- npu_sim reports (report.c) ---------------------------------------- */

/* A byte count for people: "512 B", "1.2 KiB", "3.0 MiB", "1.5 GiB" (one
 * decimal past bytes; a value that would round to 1024.0 moves up a unit).
 * Returns out. */
char *cli_bytes_str(uint64_t n, char *out, size_t cap);

/* Columns of text as people see them: UTF-8 code points, not bytes. */
size_t cli_text_width(const char *s);

/* The line `run` prints under "Run      OK:" for an npu_sim job, from the
 * job's "npu" object {cycles, time_us, clock_mhz, dram_bytes, utilisation}
 * (missing fields print as "-"). -1 when npu is not an object with cycles
 * (not an npu_sim job): print nothing then. */
int cli_npu_summary(struct json_object *npu, char *out, size_t cap);
/* "fpga_board : 5 of 8 ops on the PL in 2 segments · 3 on the PS" from a
 * validate or compile answer; -1 when it has no partition. */
int cli_fpga_summary(struct json_object *res, char *out, size_t cap);

/* `eulernpu report`'s text for a parsed report.json (label names it in
 * errors): for npu_sim a header, the per-op table sorted by cost (compute +
 * stall cycles, widest first; ties in schedule order) and a totals line;
 * for another backend one line saying there is no cycle model. Appends to
 * out. -1 with *e (ENPU_E_USAGE) when rep is not an eulernpu report. */
int cli_report_render(struct json_object *rep, const char *label, enpu_buf *out,
		      enpu_err *e);

/* The sha256 of a local file (digests.c): remembered across runs for
 * files of 1 MiB or more while their inode, size and times are unchanged
 * (EULERNPU_DIGEST_CACHE=off: always hashed). */
int cli_sha256_file(const char *path, char hex[65], enpu_err *e);
/* The file's identity as it is now ("DEV INO SIZE MTIME CTIME", the value
 * of H_LOCAL_STAT) when the record holds hex as its digest under it: 0,
 * or -1 (the record is off, has no such entry, or the file moved since). */
int cli_sha256_vouch(const char *path, const char *hex, char *out, size_t cap);

/* An artifact named on the command line (artifacts.c): the directory
 * `compile --out` wrote, or an id. check: it is one of the two (before
 * connecting); use: its id, a directory's artifact imported when the
 * server lacks it. 0, or -1 with *e. */
int cli_artifact_check(const char *art, enpu_err *e);
int cli_artifact_use(cli_conn *c, const char *art, char id[65], enpu_err *e);

#endif

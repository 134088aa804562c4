/* boards.h: the pool of board agents a lab server fronts (--board
 * NAME=URL): per board a health thread (up/down, backoff while down) and a
 * dispatcher thread that takes one board job at a time for the backends the
 * board serves; a timer enforces --job-timeout on queued and running jobs. */
#ifndef SRV_BOARDS_H
#define SRV_BOARDS_H

#include "srv.h"
#include "err.h"

struct json_object;
typedef struct srv_boards srv_boards;

/* Start the pool of ctx->cfg.boards (zero boards is a valid, empty pool:
 * board jobs are then refused with 503). ctx->jobs and ctx->cas must be
 * open. NULL + *e on failure. */
srv_boards *srv_boards_start(srv_ctx *ctx, enpu_err *e);
/* Stop and join every thread (jobs in flight are cancelled by
 * srv_jobs_shutdown, which must come first), then free. NULL is fine. */
void srv_boards_free(srv_boards *b);
/* Make the pool serve exactly these boards (SIGHUP): boards no longer
 * listed (by name and URL) stop taking jobs (one running finishes), new
 * ones start. Called by the thread that started the pool. 0 or -1 + *e. */
int srv_boards_reload(srv_boards *b, const srv_board_cfg *cfg, int n, enpu_err *e);

/* 1 when the backend is one that runs on boards (zynq_ps, fpga_board). */
int srv_backend_on_board(const char *backend);
/* 1 when some board serves backend, up or down (a board never reached yet
 * counts: it may serve it); 0 when the job could never run here. */
int srv_boards_serves(srv_boards *b, const char *backend);
/* 0 when a board that serves backend is up (or not checked yet); else -1
 * with *e an E0811 listing each such board's state, since when, and its
 * last error. */
int srv_boards_check_up(srv_boards *b, const char *backend, enpu_err *e);
/* Backend bits served by boards that are up now. */
unsigned srv_boards_up_mask(srv_boards *b);
/* GET /v1/boards: {"boards": [...]}. Caller puts. */
struct json_object *srv_boards_json(srv_boards *b);

/* ---- pure helpers (unit-tested) -------------------------------------------- */

/* Seconds to wait before health-checking a board that failed `failures`
 * times in a row: 1, 2, 4, ... capped at max_s (at least 1). */
int srv_board_backoff(int failures, int max_s);
/* Parse "NAME=URL": NAME of [A-Za-z0-9_.-] (1..63 chars), URL
 * http://HOST:PORT[/] or unix:/PATH. 0, or -1 with ENPU_E_USAGE. */
int srv_board_parse(const char *arg, srv_board_cfg *out, enpu_err *e);

#endif

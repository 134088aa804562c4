/* board.h: the lab server's link to one board agent, over the same REST
 * API that any client uses (libcurl, one easy handle per link and thread):
 * health checks, and forwarding one job: upload only the blobs the board
 * lacks, import the artifact by its manifest, run, long-poll, and fetch the
 * result and report into the local CAS. */
#ifndef SRV_BOARD_H
#define SRV_BOARD_H

#include "srv.h"
#include "cas.h"
#include "jobs.h"
#include "wire.h"

struct json_object;
typedef struct srv_blink srv_blink;

/* name and url are copied; token (may be NULL) is sent as a bearer token on
 * every call; timeout_s bounds each HTTP call (connect included). NULL on
 * out of memory. */
srv_blink *srv_blink_new(const char *name, const char *url, const char *token, int timeout_s);
void srv_blink_free(srv_blink *l);
/* CA certificates (PEM file) to verify https:// boards with; NULL = the
 * system's. Set once, before any link is used (--board-cacert). */
void srv_blink_set_cacert(const char *path);

/* GET /v1/health, then one authenticated call (an empty POST
 * /v1/blobs/missing) so that a wrong token shows up as a fault here and not
 * at the first job. 0 with the health object in *out (caller puts), or -1
 * with *e (ENPU_E_BOARD_FAULT, or ENPU_E_AUTH when the board refused the
 * token). A non-zero *stop (may be NULL) aborts the calls. */
int srv_blink_health(srv_blink *l, const volatile int *stop, struct json_object **out,
		     enpu_err *e);

/* Forward job rj: see the file comment; the result must be an npz of the
 * artifact's outputs (loaded within lim), at most srv_board_result_cap
 * bytes. Returns how it ended: SRV_RUN_OK (res filled), SRV_RUN_MODEL (the
 * model's error on the board, intact, in *e),
 * SRV_RUN_FAULT (*e says what the board did; res->board_error its own
 * error as data, or NULL), or SRV_RUN_CANCEL (rj's
 * cancel flag or deadline; the board's job was cancelled with DELETE). */
srv_rkind srv_blink_run(srv_blink *l, srv_cas *cas, const enpu_limits *lim, const srv_rjob *rj,
			srv_rresult *res, enpu_err *e);

/* The board's error object {"code","message","where","fix"} as an enpu_err
 * (an unknown code becomes ENPU_E_BOARD_FAULT naming it). Pure. */
void srv_board_err_from_json(struct json_object *err, const char *board, enpu_err *e);

/* ---- untrusted answers (board_check.c, all pure) ---- */

/* The most bytes a result npz of these outputs (float32) may take: their
 * data, an npz's headers per member, and a small margin. */
uint64_t srv_board_result_cap(const enpu_wire_output *want, int n);
/* got holds exactly the outputs want (names, float32, shapes): 0, else -1
 * with *e an E0812 saying how it differs ("board X returned ..."). */
int srv_board_check_result(const enpu_wire_output *want, int n, const enpu_tlist *got,
			   const char *board, enpu_err *e);
/* The board's job JSON lists exactly the outputs want: 0, else -1 (E0812). */
int srv_board_check_claim(const enpu_wire_output *want, int n, const enpu_wire_job *wj,
			  const char *board, enpu_err *e);
/* [{name, shape}] of want, as a job shows its outputs. */
struct json_object *srv_board_outputs_json(const enpu_wire_output *want, int n);
/* 1 when a board's error with code c is the model's own (it fails the same
 * way anywhere: sizes, spec, weights, npz, input), else 0. */
int srv_board_is_model(enpu_code c);
/* The board's own error be about a job (what: "its job 'X' failed") as
 * the lab's *e: SRV_RUN_MODEL with be intact for a model error, else
 * SRV_RUN_FAULT with an E0812 naming the board and the code, and, when
 * data is non-NULL, {board, code, message} in *data (caller puts): the
 * board's words are data, never the user's error. */
srv_rkind srv_board_wrap(const enpu_err *be, const char *board, const char *what, enpu_err *e,
			 struct json_object **data);

#endif

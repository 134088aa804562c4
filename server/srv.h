/* srv.h: what every module of eulernpud shares: the configuration from the
 * command line, the daemon-wide context handed to each route, and the log.
 */
#ifndef SRV_H
#define SRV_H

#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include "api.h"
#include "enpu.h"

#define SRV_JSON_MAX         (1u << 20)   /* JSON request bodies */
#define SRV_JSON_DEPTH       32
#define SRV_FORM_MAX         (64u << 10)  /* multipart text fields, in total */
#define SRV_WAIT_MAX         300          /* ?wait= cap, seconds */

/* What this daemon is: a private or shared daemon (local; server is the
 * same with a lab server's label), or a board agent that runs zynq_ps and
 * fpga_board jobs itself. Only local/server forward board jobs. */
typedef enum srv_role { SRV_ROLE_LOCAL, SRV_ROLE_SERVER, SRV_ROLE_BOARD } srv_role;

#define SRV_MAX_BOARDS       64

typedef struct srv_board_cfg {
	char name[64];
	char url[512];            /* http://host:port or unix:/path */
} srv_board_cfg;

typedef struct srv_config {
	const char *socket_path;   /* NULL = none (when --listen only) */
	const char *listen;        /* "HOST:PORT" or NULL */
	const char *port_file;
	const char *cache_dir;
	const char *log_file;
	const char *pid_file;
	int workers;
	int threads;
	uint64_t max_upload;
	int max_queue;
	int idle_exit;             /* seconds, 0 = never */
	int conn_limit;
	int conn_timeout;
	srv_role role;
	const char *pl;            /* board role: the PL driver ("emulated") */
	const char *token_file;    /* board role: bearer token required of clients */
	const char *board_token_file;  /* lab server: token sent to boards */
	srv_board_cfg boards[SRV_MAX_BOARDS];
	int n_boards;
	int board_health_interval; /* seconds between health checks of an up board */
	int board_timeout;         /* seconds, one HTTP call to a board */
	int board_backoff_max;     /* seconds, longest wait between checks of a down board */
	int job_timeout;           /* seconds, a board job's queue + run time */
	int board_retries;         /* re-dispatches after board faults */
	uint64_t cache_max;        /* bytes of blobs kept; 0 = unbounded */
} srv_config;

struct srv_cas;
struct srv_jobs;
struct srv_boards;

typedef struct srv_ctx {
	srv_config cfg;
	struct srv_cas *cas;
	struct srv_jobs *jobs;
	const enpu_limits *lim;
	struct srv_boards *boards;     /* NULL in the board role */
	char *token;                   /* board role: required bearer token, or NULL */
	char *board_token;             /* lab server: token for the boards, or NULL */
	atomic_ullong blobs_received;  /* PUT /v1/blobs that stored new bytes */
	atomic_ullong blobs_bytes_received;
	volatile int stopping;
} srv_ctx;

/* The PL this build has, as GET /v1/health says it (board role). */
#define SRV_PL_EMULATED       "emulated"
#define SRV_PL_EMULATED_DESC  "emulated (reference kernels, modelled PL cycles; no bitstream)"

/* Keep the cache under --cache-max (evict.c): least recently used blobs
 * that no queued or running job needs go first, then artifact directories
 * that lost a file. A no-op when the bound is 0 or not exceeded. */
void srv_cache_enforce(srv_ctx *ctx);

/* The log: one line each, timestamped, to --log FILE or stderr. Never
 * fails visibly; thread-safe. */
int srv_log_open(const char *path);      /* NULL = stderr; -1 if it cannot be opened */
void srv_log_close(void);
void srv_log(const char *level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* RFC 3339 UTC ("2025-01-31T12:00:00.123Z") of a CLOCK_REALTIME time. */
void srv_time_str(const struct timespec *t, char *buf, size_t cap);
double srv_now(void);                    /* CLOCK_MONOTONIC seconds */

#endif

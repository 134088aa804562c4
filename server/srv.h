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

#define SRV_JSON_MAX         (1u << 20)   /* default --max-json-bytes */
#define SRV_JSON_DEPTH       32           /* default --max-json-depth */
#define SRV_FORM_MAX         (64u << 10)  /* multipart text fields, in total */
#define SRV_WAIT_MAX         300          /* ?wait= cap, seconds */

/* What this daemon is: a private or shared daemon (local; server is the
 * same with a lab server's label), or a board agent that runs zynq_ps and
 * fpga_board jobs itself. Only local/server forward board jobs. */
typedef enum srv_role { SRV_ROLE_LOCAL, SRV_ROLE_SERVER, SRV_ROLE_BOARD } srv_role;

#define SRV_MAX_BOARDS       64
#define SRV_REMOTE_TRUST_CFG 32   /* --remote-cache-trust files (SRV_REMOTE_TRUST_MAX) */

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
	int idle_exit_ms;          /* --idle-exit, in milliseconds; 0 = never */
	int conn_limit;
	int http_threads;
	int loop_job_us;
	int conn_timeout;
	srv_role role;
	const char *node_id;       /* --node-id: job ids "<node>-<hex>"; NULL = no prefix */
	const char *pl;            /* board role: the PL driver ("emulated") */
	const char *token_file;    /* board role: bearer token required of clients */
	const char *board_token_file;  /* lab server: token sent to boards */
	srv_board_cfg boards[SRV_MAX_BOARDS];
	int n_boards;
	int board_health_interval; /* seconds between health checks of an up board */
	int board_timeout;         /* seconds, one HTTP call to a board */
	int board_backoff_max;     /* seconds, longest wait between checks of a down board */
	int job_timeout;           /* seconds, a job's queue + run time (every job) */
	int job_ttl;               /* seconds a finished job is kept */
	int job_history;           /* finished jobs kept at most */
	int board_retries;         /* re-dispatches after board faults */
	int board_wait;            /* seconds a queued board job waits with no board up */
	uint64_t cache_max;        /* bytes of blobs kept; 0 = unbounded */
	/* access, TLS, config (auth.c, config.c) */
	const char *tokens_file;   /* --tokens: "TOKEN ROLE [NAME]" lines; TCP only */
	int socket_mode;           /* of the Unix socket (default 0600) */
	const char *socket_group;  /* group of the Unix socket, or NULL */
	const char *tls_cert, *tls_key;   /* PEM files: TLS on the TCP listener */
	const char *www_dir;       /* --www: the status page's files; "none" = no page */
	const char *board_cacert;  /* CA file for https:// boards */
	const char *config_file;   /* the YAML file read, or NULL */
	const char *log_level;     /* error|warn|info|debug, or NULL (info) */
	/* limits: every size a client can make the daemon handle */
	enpu_limits limits;        /* spec, YAML, tensors, npz (ctx->lim points here) */
	uint64_t max_json_bytes;   /* JSON and raw request bodies */
	int max_json_depth;
	uint64_t max_onnx_bytes;   /* an ONNX model to import (serialized bytes) */
	uint64_t max_onnx_nodes;   /* nodes of its graph */
	int request_timeout;       /* seconds for a whole request body; 0 = none */
	int drain_timeout;         /* SIGTERM: seconds to wait for jobs to finish */
	/* the remote cache tier (server/cache/remote.h), off without a URL */
	const char *remote_cache;          /* http(s)://... or NULL */
	const char *remote_cache_mode;     /* read (default) or readwrite */
	const char *remote_cache_token_file;
	const char *remote_cache_cacert;
	const char *remote_cache_sign_key; /* PEM Ed25519 private key */
	const char *remote_cache_trust[SRV_REMOTE_TRUST_CFG];   /* PEM public keys */
	int n_remote_cache_trust;
	int remote_cache_timeout_ms;       /* a call's bound (blobs: a stall's) */
	int remote_cache_backoff;          /* seconds before a degraded remote is probed */
	int remote_cache_queue;            /* uploads waiting at most */
	int remote_cache_miss_ttl;         /* seconds a key the remote lacked is not asked */
} srv_config;

struct srv_cas;
struct srv_jobs;
struct srv_boards;
struct srv_observer;

typedef struct srv_ctx {
	srv_config cfg;
	struct srv_cas *cas;
	struct srv_jobs *jobs;
	struct srv_models *models;     /* named versions of artifacts (models.h) */
	struct srv_www *www;           /* the status page's files, or NULL (routes_www.c) */
	const enpu_limits *lim;
	struct srv_boards *boards;     /* NULL in the board role */
	struct srv_remote *remote;     /* the remote cache tier, or NULL (remote.h) */
	char *token;                   /* unused: tokens live in auth (auth.c) */
	struct srv_auth *auth;         /* the token table, or NULL (no tokens) */
	char *board_token;             /* lab server: token for the boards, or NULL */
	atomic_ullong blobs_received;  /* PUT /v1/blobs that stored new bytes */
	atomic_ullong blobs_bytes_received;
	atomic_ullong blobs_local;     /* of those, copied from a file (H_LOCAL_FILE) */
	atomic_ullong blobs_local_vouched;   /* of those, taken with the digest vouched for (H_LOCAL_STAT) */
	volatile int stopping;
	volatile int draining;         /* SIGTERM: POST /v1/jobs answers 503 */
	char *tls_cert_pem, *tls_key_pem;
	/* hooks fed each finished request and job (obs.h); NULL = none */
	const struct srv_observer *obs;
} srv_ctx;

/* The PL this build has, as GET /v1/health says it (board role). */
#define SRV_PL_EMULATED       "emulated"
#define SRV_PL_EMULATED_DESC  "emulated (reference kernels, modelled PL cycles; no bitstream)"

/* Keep the cache under --cache-max (evict.c): least recently used blobs
 * that no queued or running job needs go first, then artifact directories
 * that lost a file. A no-op when the bound is 0 or not exceeded. */
void srv_cache_enforce(srv_ctx *ctx);
/* Around a job submission's checks of its artifact and input and its
 * queueing: no eviction pass runs in between (evict.c). */
void srv_cache_pin_begin(srv_ctx *ctx);
void srv_cache_pin_end(srv_ctx *ctx);
/* As srv_cache_pin_begin, but 0 at once (nothing held) while a pass runs. */
int srv_cache_pin_try(srv_ctx *ctx);

/* ---- access (auth.c) ----------------------------------------------------- */

/* Who may call what. A token table is read from --tokens (lines "TOKEN ROLE
 * [NAME]", ROLE user or admin; the file must not be world-readable) and from
 * --token-file (one token of role admin, checked on every listener, as a
 * board agent always did). Tokens are kept as SHA-256 digests only. */
typedef struct srv_auth srv_auth;

/* Parse a token file's text (label names it in errors: "label:line").
 * NULL + *e (ENPU_E_CONFIG) on a bad line; never quotes a token. */
srv_auth *srv_auth_parse(const char *text, size_t len, const char *label, enpu_err *e);
void srv_auth_free(srv_auth *a);
int srv_auth_count(const srv_auth *a);
/* Check an Authorization header value against every token (constant time
 * in the position of the match). 1 and the token's role (SRV_ROLE_USER /
 * SRV_ROLE_ADMIN as int) and name when it matches; 0 otherwise. */
int srv_auth_match(const srv_auth *a, const char *authorization, int *role,
		   char *name, size_t name_cap);
/* A token file (--tokens, --token-file, --board-token-file) must be a
 * regular file that others may neither read nor write (its group may
 * read it: 640 shares it with the daemon's group). 0, or -1 + *e
 * (ENPU_E_CONFIG naming the file, the fix chmod 600). */
int srv_token_file_private(const char *path, enpu_err *e);
/* The same check for any secret file (a key): what names it in errors. */
int srv_secret_file_private(const char *path, const char *what, enpu_err *e);
/* (Re)load ctx->auth from --tokens and --token-file (SIGHUP): a bad file
 * keeps the old table. 0, or -1 + *e. */
int srv_auth_load(srv_ctx *ctx, enpu_err *e);
/* The decision for one request: 0 allowed, 401, or 403 (name filled with
 * the token's name for the message). tcp: the request came over TCP. */
int srv_auth_decide(srv_ctx *ctx, int tcp, int need, const char *authorization,
		    char *name, size_t name_cap);
void srv_auth_shutdown(srv_ctx *ctx);

/* ---- identity and ownership (auth.c) ---------------------------------------
 * Who a request is, for owning jobs and blobs (docs/access.md):
 *   TCP (and any listener with --token-file) with a token table: the
 *     token's name (unnamed tokens: "token-" + 12 hex of its SHA-256);
 *     admin when its role is admin;
 *   a Unix socket otherwise: "uid:N" of the peer (SO_PEERCRED); uid 0 and
 *     the daemon's own uid are admins;
 *   TCP without tokens: everyone is "anonymous", an admin (shares all).
 * A request that sent no valid token (public routes only) is SRV_NOBODY,
 * which owns nothing. */
#define SRV_ANONYMOUS "anonymous"
#define SRV_NOBODY    "-"
typedef struct srv_ident {
	char name[64];
	int admin;                 /* sees and cancels every job, reads every blob */
} srv_ident;
/* peer_uid: the Unix peer's uid, -1 when unknown or on TCP. */
void srv_auth_identify(srv_ctx *ctx, int tcp, long peer_uid, const char *authorization,
		       srv_ident *out);
/* 1 when who may see what owner owns: an admin, or the same name. */
int srv_ident_owns(const srv_ident *who, const char *owner);

/* ---- the configuration file (config.c) ------------------------------------ */

/* A YAML mapping of option names (the long flags without "--") to scalars;
 * "boards" (also "board") is a list of NAME=URL strings, of {name, url}
 * mappings, or a mapping NAME: URL. Each setting becomes one item, applied
 * by main.c through the same table as the flags. */
typedef struct srv_cfg_item {
	char *key;                 /* "max-queue", "board" */
	char *value;
	int line, col;             /* 1-based, of the value */
	int kline, kcol;           /* of the key */
} srv_cfg_item;

typedef struct srv_cfg_file {
	char *path;
	srv_cfg_item *items;
	int n;
} srv_cfg_file;

/* 0, or -1 + *e (ENPU_E_CONFIG, where = "path:line:col"). An empty file
 * is an empty configuration. */
/* Every setting's default, but the cache directory (NULL: main.c picks
 * $XDG_CACHE_HOME/eulernpu). */
void srv_config_defaults(srv_config *c);
int srv_cfg_read(const char *path, srv_cfg_file *out, enpu_err *e);
int srv_cfg_parse(const char *text, size_t len, const char *path, srv_cfg_file *out,
		  enpu_err *e);
void srv_cfg_free(srv_cfg_file *f);

/* The log: one line each, timestamped, to --log FILE or stderr. Never
 * fails visibly; thread-safe. */
int srv_log_open(const char *path);      /* NULL = stderr; -1 if it cannot be opened */
void srv_log_close(void);
void srv_log(const char *level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The access line of a request, as srv_log("info", "req=%s method=%s route=%s
 * status=%u bytes=%llu ms=%.1f") writes it, formatted without printf (every
 * request writes one). rid, method and route are the daemon's own strings
 * (a request id, a method and a route of metrics.c's tables): not scrubbed. */
void srv_log_access(const char *rid, const char *method, const char *route, unsigned status,
		    uint64_t bytes, double ms);
/* A local job's success line, srv_log("info", "job=%s artifact=%.12s
 * succeeded in %.3fs"), formatted the same way (every job writes one). */
void srv_log_job_done(const char *id, const char *artifact, double seconds);

/* RFC 3339 UTC ("2025-01-31T12:00:00.123Z") of a CLOCK_REALTIME time. */
void srv_time_str(const struct timespec *t, char *buf, size_t cap);
double srv_now(void);                    /* CLOCK_MONOTONIC seconds */
/* CLOCK_REALTIME now plus s seconds (s >= 0): a pthread_cond_timedwait
 * deadline on a condition variable of the default clock. */
void srv_realtime_after(double s, struct timespec *out);

#endif

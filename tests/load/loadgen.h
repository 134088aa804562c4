/* loadgen.h: what the load generator's files share (tests/load/): the
 * options, the run's flags and counters, the example's files and variants,
 * and each file's entry points. loadgen.c holds the state and main();
 * http.c is the HTTP client (one libcurl handle per client, 429 and
 * Retry-After, blob uploads); scenario.c the iterations of "run" and "mix";
 * setup.c what exists before the clients start (files, variants, the
 * reference result); report.c the summary table and its JSON. */
#ifndef LOADGEN_H
#define LOADGEN_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <curl/curl.h>
#include <json-c/json.h>
#include "buf.h"
#include "clock.h"

#define WAIT_S        60     /* ?wait= of a job's long poll */
#define HTTP_TIMEOUT  (WAIT_S + 30)
#define MAX_TRIES     40     /* recoveries of one operation before it fails */
#define FAILS_SHOWN   8
#define RETRY_MAX_S   10     /* longest Retry-After we sleep (a bigger one is capped) */
#define BODY_SHOWN    2000
#define WARMUP_MAX_S  120    /* --warmup-iters waits at most this much longer */

enum { K_PUT, K_HEAD, K_COMPILE, K_JOB, K_POLL, K_RESULT, K_CACHE, K_N };

/* What one answer counted as. RECOVERED: a documented eviction answer
 * (409 E0804 with the missing list, 404 for an evicted artifact or result)
 * that the client then repaired. */
enum { O_OK, O_429, O_RECOVERED, O_FAIL };

/* Outcomes of one job attempt. */
enum { J_OK, J_FAIL = -1, J_STOP = -2, J_NOART = 1, J_RERUN = 2 };

typedef struct kstat {
	long req, ok, q429, recovered, fail;
	double *lat;          /* ms of the successful answers */
	size_t n, cap;
} kstat;

typedef struct variant {
	char *spec, *weights;
	size_t spec_len, weights_len;
	char ds[65], dw[65];
	char art[65];         /* "" until compiled once */
	char result[65];      /* the first result's digest: every later one must match */
} variant;

typedef struct client {
	int id;
	CURL *h;
	enpu_buf resp;
	char cerr[CURL_ERROR_SIZE];
	char retry_after[32];
	double ms;
	unsigned seed;
	long iters;
	kstat ks[K_N];
} client;

typedef struct options {
	const char *socket, *url, *scenario, *json, *token_file, *example;
	int clients, variants, mix;
	double seconds, warmup;
	long requests, warmup_iters;
	long daemon_pid;
} options;

/* loadgen.c: the state of the run */
extern options opt;
extern char base[1024];
extern char auth[600];
extern atomic_int measuring, stopping;
extern atomic_long tickets;
extern atomic_long fails_seen;
extern atomic_long warm_iters;   /* successful iterations during the warm-up */
extern pthread_mutex_t mu;       /* variants, run_ref */

/* setup.c: the tiny_mlp files, and (mix) the variants */
extern enpu_buf ex_spec, ex_weights, ex_input;
extern char d_spec[65], d_weights[65], d_input[65];
extern char run_art[65], run_ref[65];
extern variant *vars;

/* http.c (now_s, sleep_s, rss_kib: clock.h) */
void note(client *c, int kind, int outcome);
void show_fail(client *c, const char *what, const char *method, const char *path, long status);
long http(client *c, const char *method, const char *path, const void *body, size_t len,
	  const char *ctype);
long call(client *c, int kind, const char *method, const char *path, const void *body,
	  size_t len, const char *ctype);
long call_json(client *c, int kind, const char *method, const char *path, json_object *o);
json_object *resp_json(client *c);
const char *jstr(json_object *o, const char *k);
void err_code(json_object *o, char code[16]);
int put_blob(client *c, const char *d);
int upload_missing(client *c, int kind, const char *what, const char *method,
		   const char *path, long st);

/* scenario.c */
int compile(client *c, const char *ds, const char *dw, const char *name, char art[65]);
int job_once(client *c, const char *art, int evict, char result[65]);
void *client_main(void *arg);

/* setup.c */
int setup(client *c);
long evictions(client *c);
void free_inputs(void);

/* report.c */
int report(client *cs, double secs, long rss_warm, long rss_end, long evicted);

#endif

/* remote_int.h: inside the remote cache tier (remote.c, remote_push.c). */
#ifndef SRV_REMOTE_INT_H
#define SRV_REMOTE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include "remote.h"
#include "enpu.h"

#define RQ_TRIES 5          /* an upload is given up after this many failures */
/* A key the remote did not answer (a miss, an entry refused) is not asked
 * again for --remote-cache-miss-ttl seconds: a compile's second request
 * (after the client uploaded the weights the first lacked) asks the
 * remote once. The keys of the last NEG_SLOTS misses at most (by slot). */
#define NEG_SLOTS 64

typedef struct rq_item {
	char key[65], id[65];
	int tries;
} rq_item;

struct srv_remote {
	char *url;                  /* without a trailing '/' */
	char *auth;                 /* "Authorization: Bearer ..." or NULL */
	char *cacert;
	int readwrite;
	int timeout_ms, backoff_s, queue_max, miss_ttl_s;
	srv_rkeys keys;
	struct srv_cas *cas;
	const enpu_limits *lim;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int degraded;               /* under mu */
	double retry_at;            /* srv_now() of the next probe, when degraded */
	char last_error[256];
	char neg_key[NEG_SLOTS][65];   /* under mu: the keys missed lately */
	double neg_at[NEG_SLOTS];
	rq_item *q;                 /* a ring of queue_max items */
	int q_head, q_n;
	int stop, started;
	pthread_t th;
	atomic_ullong hits, misses, untrusted, errors, bytes_in, bytes_out, uploads, dropped;
};

/* One call to the remote. The answer's body goes to sink (NULL: dropped),
 * at most max bytes (more: the call fails); the request's body, when
 * method is PUT, comes from in (a file of in_len bytes) or from mem.
 * big: a blob transfer (bounded by stalls, not by a total time). The
 * HTTP status in *status (0 on a transport failure, with *e). 0 when an
 * HTTP answer came, -1 + *e otherwise. */
typedef int (*rx_sink)(void *ud, const void *p, size_t n);
typedef struct rx_call {
	const char *method;         /* GET, HEAD, PUT */
	const char *path;           /* "/cas/<d>", "/ac/<key>" */
	rx_sink sink;
	void *sink_ud;
	uint64_t max;
	FILE *in;
	const void *mem;
	uint64_t in_len;
	int big;
} rx_call;
int rx_do(srv_remote *rc, const rx_call *x, long *status, enpu_err *e);
/* rx_do for a lookup: 1 = 200, 0 = 404, -1 = any other answer or none
 * (rx_failed: counted, the remote degraded). */
int rx_found(srv_remote *rc, const rx_call *x);

/* The remote failed (a transport error, an unexpected status): counted,
 * logged once per state change, and degraded until a probe succeeds. */
void rx_failed(srv_remote *rc, const char *what, const enpu_err *e, long status);
/* 1 when the remote may be asked now (not degraded). */
int rx_usable(srv_remote *rc);

/* remote_push.c: the uploader thread. */
void *rq_main(void *arg);

#endif

/* http.c: libmicrohttpd glue for eulernpud: the listeners, per-request
 * state from first byte to completion (request ids, the access check, the
 * dispatch to a route's handler, the observer's report), the handler
 * threads, and the reaper of connections stuck in their headers.
 *
 * MHD runs a pool of --http-threads threads, each an epoll loop over many
 * connections (with 16 keep-alive clients, a thread per connection spent a
 * quarter of a health check switching threads). A handler that may block
 * runs on a handler thread while MHD holds its connection suspended
 * (srv_route.where); handler threads are started as needed, so a blocked
 * handler never holds up another, and end after HANDLER_IDLE_S idle.
 * Routing is http_req.c's, body intake http_body.c's, replies
 * http_reply.c's. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include "http_int.h"
#include "obs.h"
#include "routes.h"

/* One per MHD daemon: whether it serves TCP (tokens apply) and TLS. */
typedef struct listener {
	srv_ctx *ctx;
	struct MHD_Daemon *d;
	int tcp, tls;
} listener;

#define MAX_LISTENERS 8
static listener listeners[MAX_LISTENERS];

static atomic_int n_active;
static atomic_ulong next_id;
static atomic_llong last_ms;

const char *srv_req_id(const srv_req *r) { return r->rid; }
const srv_ident *srv_req_who(const srv_req *r) { return &r->who; }
int srv_req_is_own_user(const srv_req *r) { return r->peer_uid >= 0 && r->peer_uid == (long)geteuid(); }

/* The uid of a Unix socket's peer (SO_PEERCRED), -1 on TCP or when the
 * kernel does not say. */
static long peer_uid(const listener *lst, struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci;
	struct ucred cr;
	socklen_t n = sizeof cr;

	if (lst->tcp)
		return -1;
	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (!ci || getsockopt(ci->connect_fd, SOL_SOCKET, SO_PEERCRED, &cr, &n) != 0 ||
	    n != sizeof cr)
		return -1;
	return (long)cr.uid;
}

/* 64 random bits per request (unique across restarts and daemons, unlike a
 * counter): a per-thread splitmix64 stream seeded from getrandom once, so
 * a request costs no system call; the counter is the fallback seed. */
static void make_rid(srv_req *r)
{
	static _Thread_local uint64_t state;
	static _Thread_local int seeded;
	uint64_t v;

	if (!seeded) {
		if (getrandom(&state, sizeof state, GRND_NONBLOCK) != (ssize_t)sizeof state)
			state = ((uint64_t)getpid() << 40) ^ (uint64_t)r->id ^ (uint64_t)pthread_self();
		seeded = 1;
	}
	v = (state += 0x9e3779b97f4a7c15ULL);
	v = (v ^ (v >> 30)) * 0xbf58476d1ce4e5b9ULL;
	v = (v ^ (v >> 27)) * 0x94d049bb133111ebULL;
	v ^= v >> 31;
	snprintf(r->rid, sizeof r->rid, "%016llx", (unsigned long long)v);
}

static void touch(void)
{
	atomic_store(&last_ms, (long long)(srv_now() * 1000.0));
}

int srv_http_active(void) { return atomic_load(&n_active); }
double srv_http_last_activity(void) { return (double)atomic_load(&last_ms) / 1000.0; }
/* ---- handler threads -------------------------------------------------------------- */

#define HANDLER_IDLE_S 30

typedef struct task {
	struct task *next;
	struct MHD_Connection *conn;
	void (*fn)(void *);
	void *arg;
} task;

static pthread_mutex_t task_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t task_cv = PTHREAD_COND_INITIALIZER;    /* a task, or stop */
static pthread_cond_t task_zero = PTHREAD_COND_INITIALIZER;  /* none in flight */
static task *task_head, *task_tail;
static int n_queued, n_idle, n_inflight;

static void *handler_thread(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "http-handler");
	pthread_mutex_lock(&task_mu);
	for (;;) {
		task *t;

		while (!task_head) {
			struct timespec until;
			int rc;

			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_sec += HANDLER_IDLE_S;
			n_idle++;
			rc = pthread_cond_timedwait(&task_cv, &task_mu, &until);
			n_idle--;
			if (rc == ETIMEDOUT && !task_head) {
				pthread_mutex_unlock(&task_mu);
				return NULL;
			}
		}
		t = task_head;
		task_head = t->next;
		if (!task_head)
			task_tail = NULL;
		n_queued--;
		pthread_mutex_unlock(&task_mu);
		t->fn(t->arg);
		/* after this the connection is MHD's again: no touching it or t->arg */
		MHD_resume_connection(t->conn);
		free(t);
		pthread_mutex_lock(&task_mu);
		if (--n_inflight == 0)
			pthread_cond_broadcast(&task_zero);
	}
}

/* Suspend conn and run fn(arg) on a handler thread, which resumes conn.
 * -1 (nothing done) when neither memory nor a thread can be had. */
static int run_off_loop(struct MHD_Connection *conn, void (*fn)(void *), void *arg)
{
	task *t = calloc(1, sizeof *t);
	pthread_t th;
	pthread_attr_t at;
	int spawn, ok = 1;

	if (!t)
		return -1;
	t->conn = conn;
	t->fn = fn;
	t->arg = arg;
	pthread_mutex_lock(&task_mu);
	spawn = n_idle <= n_queued;
	if (spawn) {
		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		ok = pthread_create(&th, &at, handler_thread, NULL) == 0;
		pthread_attr_destroy(&at);
	}
	if (!ok && n_idle + (n_inflight - n_queued) == 0) {
		/* no thread now, and none that will come back for the queue */
		pthread_mutex_unlock(&task_mu);
		free(t);
		return -1;
	}
	MHD_suspend_connection(conn);
	if (task_tail)
		task_tail->next = t;
	else
		task_head = t;
	task_tail = t;
	n_queued++;
	n_inflight++;
	if (!spawn)
		pthread_cond_signal(&task_cv);
	pthread_mutex_unlock(&task_mu);
	return 0;
}

/* Wait until no handler runs (they end once their jobs and long polls do:
 * ctx->stopping wakes those): MHD must not free a connection one holds. */
static void handlers_drain(void)
{
	pthread_mutex_lock(&task_mu);
	while (n_inflight > 0)
		pthread_cond_wait(&task_zero, &task_mu);
	pthread_mutex_unlock(&task_mu);
}

int srv_req_await(srv_req *r, void (*wait)(void *), void *arg)
{
	if (run_off_loop(r->conn, wait, arg) == 0)
		return 0;
	wait(arg);
	return 1;
}

int srv_req_on_loop(const srv_req *r) { return r->on_loop; }
void srv_req_defer(srv_req *r) { r->defer = 1; }

static void run_route(void *arg)
{
	srv_req *r = arg;

	r->route->fn(r->ctx, r);
}

/* The route's handler runs on the loop (SRV_ON_LOOP; SRV_ON_LOOP_NOWAIT without
 * a positive ?wait=). */
static int on_loop(srv_req *r)
{
	const char *w;

	if (r->route->where == SRV_ON_LOOP)
		return 1;
	if (r->route->where != SRV_ON_LOOP_NOWAIT)
		return 0;
	w = srv_req_query(r, Q_WAIT);
	return !w || strtol(w, NULL, 10) <= 0;   /* a bad value: the handler's 400 */
}

/* ---- MHD callbacks --------------------------------------------------------------- */

static void hconn_busy(struct MHD_Connection *conn, int busy);

static enum MHD_Result queue(srv_req *r)
{
	enum MHD_Result ret;

	if (!r->resp)
		srv_reply_fail(r, ENPU_E_INTERNAL, NULL, "handler gave no answer");
	if (!r->resp)
		return MHD_NO;
	MHD_add_response_header(r->resp, "X-Request-Id", r->rid);
	ret = MHD_queue_response(r->conn, r->status, r->resp);
	MHD_destroy_response(r->resp);
	r->resp = NULL;
	return ret;
}

/* The first call of a request (its headers are in): its state, the route,
 * the access check and the body's setup. An early answer (404, 405, 401,
 * 403, 503 while draining, a body refused up front) is queued at once. */
static enum MHD_Result begin_request(const listener *lst, struct MHD_Connection *conn,
				     const char *url, const char *method, void **req_cls)
{
	srv_ctx *ctx = lst->ctx;
	srv_req *r;
	char allow[128], who[64];
	int deny;

	r = calloc(1, sizeof *r);
	if (!r)
		return MHD_NO;
	*req_cls = r;
	atomic_fetch_add(&n_active, 1);
	hconn_busy(conn, 1);
	touch();
	r->conn = conn;
	r->ctx = ctx;
	r->lst = lst;
	r->id = atomic_fetch_add(&next_id, 1) + 1;
	make_rid(r);
	r->t0 = srv_now();
	r->url = strdup(url);
	snprintf(r->method, sizeof r->method, "%s", method);
	if (!r->url)
		return MHD_NO;
	if (http_head_too_large(r))
		return queue(r);
	r->route = http_route_find(r, allow, sizeof allow);
	if (!r->route) {
		if (allow[0]) {
			srv_reply_fail(r, ENPU_E_METHOD, url, "%s is not allowed on '%s' (allowed: %s)",
				       method, url, allow);
			srv_reply_header(r, MHD_HTTP_HEADER_ALLOW, allow);
		} else {
			srv_reply_fail(r, ENPU_E_NOT_FOUND, url, "no route '%s %s'", method, url);
		}
		return queue(r);
	}
	r->peer_uid = peer_uid(lst, conn);
	srv_auth_identify(ctx, lst->tcp, r->peer_uid,
			  srv_req_header(r, MHD_HTTP_HEADER_AUTHORIZATION), &r->who);
	/* tokens: on TCP (and everywhere with --token-file); never logged */
	deny = srv_auth_decide(ctx, lst->tcp, (int)r->route->access,
			       srv_req_header(r, MHD_HTTP_HEADER_AUTHORIZATION), who, sizeof who);
	if (deny == 401) {
		srv_reply_fail(r, ENPU_E_AUTH, url, "%s '%s' needs 'Authorization: Bearer TOKEN' "
			       "with a token this server knows", method, url);
		srv_reply_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
		return queue(r);
	}
	if (deny == 403) {
		srv_reply_fail(r, ENPU_E_FORBIDDEN, url, "token '%s' has role user; %s '%s' "
			       "needs role admin", who, method, url);
		return queue(r);
	}
	if (ctx->draining && !strcmp(r->method, "POST") && !strcmp(r->route->pattern, API_JOBS)) {
		srv_reply_fail(r, ENPU_E_UNREACHABLE, url, "the server is shutting down and "
			       "takes no new jobs");
		srv_reply_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "30");
		return queue(r);
	}
	if (http_begin_body(r) != 0)
		return queue(r);
	return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_data_size, void **req_cls)
{
	const listener *lst = cls;
	srv_ctx *ctx = lst->ctx;
	srv_req *r = *req_cls;
	(void)version;

	if (!r)
		return begin_request(lst, conn, url, method, req_cls);
	if (r->off)                /* resumed: the handler thread has answered */
		return queue(r);
	if (*upload_data_size) {
		/* MHD bounds idle gaps (--conn-timeout); this bounds the whole body */
		if (ctx->cfg.request_timeout > 0 && !r->failed &&
		    srv_now() - r->t0 > (double)ctx->cfg.request_timeout) {
			srv_log("warn", "req=%s %s %s: body not received within --request-timeout "
				"%d s; closing the connection", r->rid, r->method, r->url,
				ctx->cfg.request_timeout);
			return MHD_NO;
		}
		http_feed_body(r, upload_data, *upload_data_size);
		*upload_data_size = 0;
		return MHD_YES;
	}
	http_end_body(r);
	touch();
	if (r->failed) {
		srv_reply_error(r, &r->err, NULL);
		return queue(r);
	}
	if (on_loop(r)) {
		r->on_loop = 1;
		r->route->fn(ctx, r);
		r->on_loop = 0;
		if (!r->defer || r->resp)
			return queue(r);
	}
	r->off = 1;
	if (run_off_loop(conn, run_route, r) == 0)
		return MHD_YES;
	r->route->fn(ctx, r);   /* no thread to be had: here, then */
	return queue(r);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
			 enum MHD_RequestTerminationCode toe)
{
	srv_req *r = *req_cls;
	double secs;
	int i;
	(void)cls; (void)conn;

	if (!r)
		return;
	hconn_busy(conn, 0);
	secs = srv_now() - r->t0;
	/* the request's log line is the observer's (metrics.c in the daemon) */
	if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK)
		srv_log("debug", "req=%s aborted (code %d)", r->rid, (int)toe);
	srv_obs_request(r->ctx->obs, r->method, r->route ? r->route->pattern : "unmatched", r->status,
			r->resp_bytes, secs, r->rid);
	if (r->pp)
		MHD_destroy_post_processor(r->pp);
	if (r->part_up)
		srv_upload_abort(r->part_up);
	if (r->upload)
		srv_upload_abort(r->upload);
	if (r->resp)
		MHD_destroy_response(r->resp);
	json_object_put(r->form);
	json_object_put(r->names);
	json_object_put(r->json);
	enpu_buf_free(&r->raw);
	enpu_buf_free(&r->part_val);
	free(r->part_file);
	for (i = 0; i < r->n_params; i++)
		free(r->params[i]);
	free(r->url);
	free(r);
	*req_cls = NULL;
	touch();
	atomic_fetch_sub(&n_active, 1);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char line[512];
	size_t n;
	(void)cls;

	vsnprintf(line, sizeof line, fmt, ap);
	n = strlen(line);
	while (n && line[n - 1] == '\n')
		line[--n] = '\0';
	srv_log("warn", "mhd: %s", line);
}

/* ---- slow headers ------------------------------------------------------------------ */

/* --conn-timeout bounds idle gaps only, so a client sending a header byte a
 * second never trips it, and the --request-timeout check in on_request runs
 * only once the headers are in: a few such clients would hold every slot of
 * --conn-limit. So every connection is listed from accept to close, and a
 * reaper shuts the socket of one whose request has not got past its headers
 * within --conn-timeout (or --request-timeout, if smaller) since it connected
 * or since its last request ended. MHD closes a socket only after its CLOSED
 * notification, which takes the lock the reaper holds: never a reused fd. */
typedef struct hconn {
	struct hconn *next, *prev;
	int fd;
	int busy;          /* a request is past its headers (until it completes) */
	int cut;
	double since;      /* connected, or the last request ended */
	double bound;
} hconn;

static pthread_mutex_t hconn_mu = PTHREAD_MUTEX_INITIALIZER;
static hconn *hconns;
static pthread_once_t reaper_once = PTHREAD_ONCE_INIT;

static void *reaper(void *arg)
{
	(void)arg;
	for (;;) {
		double now;
		sleep(1);
		now = srv_now();
		pthread_mutex_lock(&hconn_mu);
		for (hconn *h = hconns; h; h = h->next)
			if (!h->busy && !h->cut && now - h->since > h->bound) {
				srv_log("warn", "a request's headers did not arrive within %.0f s "
					"(--conn-timeout, --request-timeout); closing the connection",
					h->bound);
				shutdown(h->fd, SHUT_RDWR);
				h->cut = 1;
			}
		pthread_mutex_unlock(&hconn_mu);
	}
	return NULL;
}

static void reaper_start(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, reaper, NULL) == 0)
		pthread_detach(t);
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	const listener *lst = cls;
	hconn *h = *socket_context;
	int rt = lst->ctx->cfg.request_timeout, ct = lst->ctx->cfg.conn_timeout;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		if (!ci || !(h = calloc(1, sizeof *h)))
			return;
		h->fd = ci->connect_fd;
		h->since = srv_now();
		h->bound = rt > 0 && rt < ct ? rt : ct;
		pthread_mutex_lock(&hconn_mu);
		h->next = hconns;
		if (hconns)
			hconns->prev = h;
		hconns = h;
		pthread_mutex_unlock(&hconn_mu);
		*socket_context = h;
		return;
	}
	if (!h)
		return;
	pthread_mutex_lock(&hconn_mu);
	if (h->prev)
		h->prev->next = h->next;
	else
		hconns = h->next;
	if (h->next)
		h->next->prev = h->prev;
	pthread_mutex_unlock(&hconn_mu);
	free(h);
	*socket_context = NULL;
}

static void hconn_busy(struct MHD_Connection *conn, int busy)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	hconn *h = ci ? ci->socket_context : NULL;

	if (!h)
		return;
	pthread_mutex_lock(&hconn_mu);
	h->busy = busy;
	h->since = srv_now();
	pthread_mutex_unlock(&hconn_mu);
}

/* MHD's own %HH decoding, except that a path or argument holding %00 stays
 * escaped: decoded, the NUL would end the C string early, so that
 * "/v1/blobs/<digest>%00junk" passed as the digest. Escaped, it is refused. */
static size_t unescape(void *cls, struct MHD_Connection *c, char *s)
{
	(void)cls; (void)c;
	if (strstr(s, "%00"))
		return strlen(s);
	return MHD_http_unescape(s);
}

/* A TCP listening socket (as opposed to a Unix one): tokens and TLS apply. */
static int is_tcp(int fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0)
		return 1;   /* unknown: the stricter choice */
	return ss.ss_family != AF_UNIX;
}

struct MHD_Daemon *srv_http_start(srv_ctx *ctx, int listen_fd)
{
	unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME |
			 MHD_USE_ERROR_LOG | MHD_USE_ITC;
	struct MHD_OptionItem tls[3] = {{MHD_OPTION_END, 0, NULL}};
	listener *l = NULL;
	int i;

	touch();
	pthread_once(&reaper_once, reaper_start);
	for (i = 0; i < MAX_LISTENERS; i++)
		if (!listeners[i].ctx) {
			l = &listeners[i];
			break;
		}
	if (!l) {
		srv_log("error", "too many listening sockets (at most %d)", MAX_LISTENERS);
		return NULL;
	}
	l->ctx = ctx;
	l->tcp = is_tcp(listen_fd);
	l->tls = l->tcp && ctx->tls_cert_pem && ctx->tls_key_pem;
	if (l->tls) {
		flags |= MHD_USE_TLS;
		tls[0] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, ctx->tls_cert_pem};
		tls[1] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, ctx->tls_key_pem};
		tls[2] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
	}
	l->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, l,
				MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
				MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL,
				MHD_OPTION_LISTEN_SOCKET, listen_fd,
				MHD_OPTION_NOTIFY_COMPLETED, on_completed, ctx,
				MHD_OPTION_NOTIFY_CONNECTION, on_connection, l,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned int)ctx->cfg.conn_limit,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)ctx->cfg.conn_timeout,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_CONN_MEMORY,
				MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)(ctx->cfg.http_threads <
					ctx->cfg.conn_limit ? ctx->cfg.http_threads : ctx->cfg.conn_limit),
				MHD_OPTION_ARRAY, tls,
				MHD_OPTION_END);
	if (!l->d) {
		srv_log("error", "cannot start the HTTP%s server on fd %d", l->tls ? "S" : "",
			listen_fd);
		memset(l, 0, sizeof *l);
		return NULL;
	}
	return l->d;
}

int srv_http_tls_supported(void)
{
	return MHD_is_feature_supported(MHD_FEATURE_TLS) == MHD_YES;
}

int srv_http_quiesce(struct MHD_Daemon *d)
{
	/* After a quiesce the listening socket is ours to close again. */
	return d ? (int)MHD_quiesce_daemon(d) : -1;
}

void srv_http_stop(struct MHD_Daemon *d)
{
	int i;

	if (!d)
		return;
	handlers_drain();
	MHD_stop_daemon(d);
	for (i = 0; i < MAX_LISTENERS; i++)
		if (listeners[i].d == d)
			memset(&listeners[i], 0, sizeof listeners[i]);
}

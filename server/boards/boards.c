/* boards.c: the lab server's pool of board agents. Each board has a health
 * thread (GET /v1/health every --board-health-interval while up; while down
 * with backoff from 1 s doubling up to --board-backoff-max) and a dispatcher
 * thread that takes one board job at a time for the backends the board
 * said it serves, and forwards it through board.c. A board fault marks the
 * board down and sends the job back to the queue for another board (at most
 * --board-retries times); a timer thread fails jobs past --job-timeout. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "srv.h"
#include "backend.h"
#include "ops.h"
#include "jobs.h"
#include "board.h"
#include "boards.h"
#include "http.h"

#define TICK_S 0.2              /* the job-timeout timer's period */

typedef struct board {
	struct srv_boards *pool;
	char name[64], url[512];
	srv_blink *hlink, *dlink;   /* health and dispatch: one curl handle per thread */
	pthread_t health_t, disp_t;
	int health_started, disp_started;
	/* under pool->mu (up is also read by the job table without it) */
	atomic_int up;
	int seen, failures;
	unsigned mask;              /* board backends it serves (bits) */
	char pl[200];
	char last_error[800];
	struct timespec last_seen, since;   /* since: in this state (up/down) */
	double next_check;
	long long faults;           /* board faults of jobs it ran (metrics) */
	int busy;
	char job[ENPU_JOB_ID_SIZE];
	long long artifacts_cached, jobs_done;
	volatile int gone;          /* removed by a reload: threads leave */
} board;

struct srv_boards {
	srv_ctx *ctx;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	volatile int stopping;
	board *b;                   /* BOARD_SLOTS, so that reloads never move one */
	int n;                      /* slots used, gone ones included */
	pthread_t timer_t;
	int timer_started;
};

#define BOARD_SLOTS (4 * SRV_MAX_BOARDS)

#define BOARD_MASK enpu_backends_on_board()   /* the backends board agents run */

/* ---- pure helpers ------------------------------------------------------------ */

int srv_board_backoff(int failures, int max_s)
{
	int s = 1;

	if (max_s < 1)
		max_s = 1;
	while (failures-- > 1 && s < max_s)
		s *= 2;
	return s < max_s ? s : max_s;
}

int srv_board_parse(const char *arg, srv_board_cfg *out, enpu_err *e)
{
	const char *eq = strchr(arg, '=');
	size_t nlen;
	const char *url, *p, *colon;

	memset(out, 0, sizeof *out);
	if (!eq || eq == arg)
		return enpu_fail(e, ENPU_E_USAGE, "--board", "give --board NAME=http://HOST:PORT",
				 "--board '%.200s' is not NAME=URL", arg);
	nlen = (size_t)(eq - arg);
	if (nlen >= sizeof out->name || strspn(arg, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
					     "0123456789_.-") < nlen)
		return enpu_fail(e, ENPU_E_USAGE, "--board", "use letters, digits, '_', '.', '-' (at most 63)",
				 "board name '%.*s' is not a plain name", (int)(nlen > 80 ? 80 : nlen), arg);
	url = eq + 1;
	if (strlen(url) >= sizeof out->url)
		return enpu_fail(e, ENPU_E_USAGE, "--board", NULL, "board URL of '%.*s' is too long",
				 (int)nlen, arg);
	if (!strncmp(url, "unix:", 5)) {
		if (url[5] != '/')
			return enpu_fail(e, ENPU_E_USAGE, "--board", "give unix:/absolute/path.sock",
					 "board '%.*s': '%.200s' names no absolute socket path", (int)nlen,
					 arg, url);
	} else if (!strncmp(url, "http://", 7) || !strncmp(url, "https://", 8)) {
		p = url + (url[4] == 's' ? 8 : 7);
		colon = strrchr(p, ':');
		if (!colon || colon == p || !colon[1] || strspn(colon + 1, "0123456789/") != strlen(colon + 1) ||
		    colon[1] == '/' || (strchr(p, '/') && strchr(p, '/') < colon))
			return enpu_fail(e, ENPU_E_USAGE, "--board", "give --board NAME=http://HOST:PORT",
					 "board '%.*s': '%.200s' is not http://HOST:PORT", (int)nlen, arg, url);
		/* a path after the port would be prepended to every API path */
		if (strchr(colon, '/') && strcmp(strchr(colon, '/'), "/") != 0)
			return enpu_fail(e, ENPU_E_USAGE, "--board", "give --board NAME=http://HOST:PORT",
					 "board '%.*s': '%.200s' has a path after the port", (int)nlen, arg,
					 url);
		long port = strtol(colon + 1, NULL, 10);
		if (port < 1 || port > 65535)
			return enpu_fail(e, ENPU_E_USAGE, "--board", NULL, "board '%.*s': port of '%.200s' "
					 "is not in 1..65535", (int)nlen, arg, url);
	} else {
		return enpu_fail(e, ENPU_E_USAGE, "--board", "give --board NAME=http://HOST:PORT",
				 "board '%.*s': '%.200s' is neither http://HOST:PORT nor unix:/PATH",
				 (int)nlen, arg, url);
	}
	memcpy(out->name, arg, nlen);
	out->name[nlen] = '\0';
	snprintf(out->url, sizeof out->url, "%s", url);
	return 0;
}

int srv_backend_on_board(const char *backend)
{
	int bk = backend ? enpu_backend_parse(backend) : -1;
	return bk >= 0 && (BOARD_MASK & (1u << bk));
}

/* ---- state changes (under pool->mu) ------------------------------------------------ */

static void mark_down(board *b, const char *why)
{
	int was = b->up;
	int wait;

	b->up = 0;
	if (was || !b->since.tv_sec)
		clock_gettime(CLOCK_REALTIME, &b->since);
	b->failures++;
	wait = srv_board_backoff(b->failures, b->pool->ctx->cfg.board_backoff_max);
	b->next_check = srv_now() + wait;
	snprintf(b->last_error, sizeof b->last_error, "%s", why);
	if (was || b->failures == 1)
		srv_log("warn", "board=%s down: %s (next check in %d s)", b->name, why, wait);
	pthread_cond_broadcast(&b->pool->cv);
}

static unsigned mask_of(json_object *h)
{
	json_object *arr;
	unsigned m = 0;
	size_t i;

	if (!json_object_object_get_ex(h, F_BACKENDS, &arr) || !json_object_is_type(arr, json_type_array))
		return 0;
	for (i = 0; i < json_object_array_length(arr); i++) {
		const char *name = json_object_get_string(json_object_array_get_idx(arr, i));
		int bk = name ? enpu_backend_parse(name) : -1;
		if (bk >= 0)
			m |= 1u << bk;
	}
	return m & BOARD_MASK;
}

static void mark_up(board *b, json_object *h)
{
	json_object *v;
	int was = b->up;

	if (!was)
		clock_gettime(CLOCK_REALTIME, &b->since);
	b->up = 1;
	b->seen = 1;
	b->failures = 0;
	b->mask = mask_of(h);
	b->next_check = srv_now() + b->pool->ctx->cfg.board_health_interval;
	b->last_error[0] = '\0';
	clock_gettime(CLOCK_REALTIME, &b->last_seen);
	b->pl[0] = '\0';
	if (json_object_object_get_ex(h, F_PL, &v) && json_object_is_type(v, json_type_string))
		snprintf(b->pl, sizeof b->pl, "%s", json_object_get_string(v));
	if (json_object_object_get_ex(h, F_ARTIFACTS_CACHED, &v) && json_object_is_type(v, json_type_int))
		b->artifacts_cached = json_object_get_int64(v);
	if (!was)
		srv_log("info", "board=%s up (%s)", b->name, b->pl[0] ? b->pl : "no PL named");
	pthread_cond_broadcast(&b->pool->cv);
}

/* ---- threads --------------------------------------------------------------------- */

static void wait_until(srv_boards *p, double t)
{
	struct timespec ts;
	double dt = t - srv_now();

	if (dt <= 0)
		return;
	if (dt > 1)
		dt = 1;            /* wake now and then: stop, and state changes */
	srv_realtime_after(dt, &ts);
	pthread_cond_timedwait(&p->cv, &p->mu, &ts);
}

static void *health_main(void *arg)
{
	board *b = arg;
	srv_boards *p = b->pool;

	pthread_mutex_lock(&p->mu);
	while (!p->stopping && !b->gone) {
		json_object *h = NULL;
		enpu_err e = ENPU_ERR_INIT;
		int rc;

		if (srv_now() < b->next_check) {
			wait_until(p, b->next_check);
			continue;
		}
		pthread_mutex_unlock(&p->mu);
		rc = srv_blink_health(b->hlink, &p->stopping, &h, &e);
		pthread_mutex_lock(&p->mu);
		if (p->stopping || b->gone) {
			json_object_put(h);
			break;
		}
		if (rc == 0) {
			int was = b->up;
			mark_up(b, h);
			if (!was) {
				pthread_mutex_unlock(&p->mu);
				srv_jobs_kick(p->ctx->jobs);
				pthread_mutex_lock(&p->mu);
			}
		} else {
			mark_down(b, e.message);
		}
		json_object_put(h);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* An earlier board in the list that is up, idle and serves at least what
 * b serves: it gets the next job, so that the order of --board is the order
 * of preference. Under pool->mu. */
static int earlier_idle(const board *b)
{
	const srv_boards *p = b->pool;

	for (const board *o = p->b; o < b; o++)
		if (o->up && !o->busy && (o->mask & b->mask) == b->mask)
			return 1;
	return 0;
}

static void *disp_main(void *arg)
{
	board *b = arg;
	srv_boards *p = b->pool;
	srv_ctx *ctx = p->ctx;

	for (;;) {
		srv_rjob rj;
		srv_rresult res;
		enpu_err e = ENPU_ERR_INIT;
		srv_rkind kind;
		unsigned mask;
		int rc;

		pthread_mutex_lock(&p->mu);
		while (!p->stopping && !b->gone && (!(b->up && b->mask) || earlier_idle(b)))
			wait_until(p, srv_now() + 1);
		mask = b->mask;
		pthread_mutex_unlock(&p->mu);
		if (p->stopping || b->gone)
			break;
		rc = srv_jobs_take_remote(ctx->jobs, mask, &b->up, b->name, 0.25, &rj);
		if (rc < 0)
			break;
		if (rc == 0)
			continue;
		pthread_mutex_lock(&p->mu);
		b->busy = 1;
		snprintf(b->job, sizeof b->job, "%s", rj.id);
		pthread_cond_broadcast(&p->cv);    /* later boards may take the next job */
		pthread_mutex_unlock(&p->mu);

		double t0 = srv_now();
		kind = srv_blink_run(b->dlink, ctx->cas, ctx->lim, &rj, &res, &e);
		srv_log(kind == SRV_RUN_OK ? "info" : "warn", "job=%s board=%s attempt=%d %s in %.3fs%s%s",
			rj.id, b->name, rj.attempt,
			kind == SRV_RUN_OK ? "succeeded" : kind == SRV_RUN_MODEL ? "failed (model)"
			: kind == SRV_RUN_FAULT ? "failed (board fault)" : "cancelled",
			srv_now() - t0, kind == SRV_RUN_OK ? "" : ": ",
			kind == SRV_RUN_OK ? "" : e.message);

		pthread_mutex_lock(&p->mu);
		b->busy = 0;
		b->job[0] = '\0';
		pthread_cond_broadcast(&p->cv);
		if (kind == SRV_RUN_OK || kind == SRV_RUN_MODEL)
			b->jobs_done++;
		if (kind == SRV_RUN_FAULT) {
			b->faults++;
			mark_down(b, e.message);
		}
		pthread_mutex_unlock(&p->mu);
		srv_jobs_remote_done(ctx->jobs, rj.id, kind, &res, &e, ctx->cfg.board_retries);
		json_object_put(res.outputs);
		json_object_put(res.extra);
		json_object_put(res.board_error);
		if (kind == SRV_RUN_OK)
			srv_cache_enforce(ctx);
	}
	return NULL;
}

/* Board b may serve backend bit bk (a board never reached yet may). Under
 * pool->mu. */
static int may_serve(const board *b, int bk)
{
	return !b->gone && (!b->seen || (b->mask & (1u << bk)));
}

/* "b1 down since T: why; b2 ..." for the boards that may serve bk, into
 * out. Under pool->mu. */
static void down_text(const srv_boards *p, int bk, char *out, size_t cap)
{
	size_t k = 0;
	char ts[48];

	out[0] = '\0';
	for (int i = 0; i < p->n && k < cap; i++) {
		const board *b = &p->b[i];
		if (!may_serve(b, bk))
			continue;
		if (b->since.tv_sec)
			srv_time_str(&b->since, ts, sizeof ts);
		else
			snprintf(ts, sizeof ts, "the start");
		k += (size_t)snprintf(out + k, cap - k, "%s%s %s since %s: %.200s", k ? "; " : "",
				      b->name, b->up ? "up" : "down", ts, b->last_error);
	}
}

static void *timer_main(void *arg)
{
	srv_boards *p = arg;
	char text[ENPU_BACKENDS_MAX][512];
	const char *why[ENPU_BACKENDS_MAX];

	pthread_mutex_lock(&p->mu);
	while (!p->stopping) {
		unsigned up = 0;
		for (int bk = 0; bk < enpu_backend_count(); bk++) {
			char d[440];
			down_text(p, bk, d, sizeof d);
			snprintf(text[bk], sizeof text[bk], "waiting for a board: %s",
				 d[0] ? d : "none serves it");
			why[bk] = text[bk];
		}
		for (int i = 0; i < p->n; i++)
			if (p->b[i].up && !p->b[i].gone)
				up |= p->b[i].mask;
		pthread_mutex_unlock(&p->mu);
		srv_jobs_expire(p->ctx->jobs, up, why, p->ctx->cfg.board_wait);
		pthread_mutex_lock(&p->mu);
		if (!p->stopping)
			wait_until(p, srv_now() + TICK_S);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* ---- the pool ------------------------------------------------------------------------ */

/* Set up slot p->n for c and start its threads; only the thread that starts
 * and frees the pool calls this (start, reload). */
static int board_add(srv_boards *p, const srv_board_cfg *c, enpu_err *e)
{
	srv_ctx *ctx = p->ctx;
	board *b;

	if (p->n == BOARD_SLOTS)
		return enpu_fail(e, ENPU_E_LIMIT, c->name, "restart the server",
				 "no room for board '%s': %d boards were added since the start",
				 c->name, BOARD_SLOTS);
	b = &p->b[p->n];
	memset(b, 0, sizeof *b);
	b->pool = p;
	snprintf(b->name, sizeof b->name, "%s", c->name);
	snprintf(b->url, sizeof b->url, "%s", c->url);
	b->hlink = srv_blink_new(b->name, b->url, ctx->board_token, ctx->cfg.board_timeout);
	b->dlink = srv_blink_new(b->name, b->url, ctx->board_token, ctx->cfg.board_timeout);
	snprintf(b->last_error, sizeof b->last_error, "not checked yet");
	pthread_mutex_lock(&p->mu);
	p->n++;         /* freed with the pool whatever happens next */
	pthread_mutex_unlock(&p->mu);
	if (!b->hlink || !b->dlink)
		return enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
	if (pthread_create(&b->health_t, NULL, health_main, b) != 0 ||
	    !(b->health_started = 1) ||
	    pthread_create(&b->disp_t, NULL, disp_main, b) != 0 || !(b->disp_started = 1))
		return enpu_fail(e, ENPU_E_INTERNAL, NULL, NULL, "cannot start the threads of board '%s'",
				 b->name);
	return 0;
}

srv_boards *srv_boards_start(srv_ctx *ctx, enpu_err *e)
{
	srv_boards *p = calloc(1, sizeof *p);
	int i;

	if (!p) {
		enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
		return NULL;
	}
	p->ctx = ctx;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	p->b = calloc(BOARD_SLOTS, sizeof *p->b);
	if (!p->b) {
		srv_boards_free(p);
		enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
		return NULL;
	}
	for (i = 0; i < ctx->cfg.n_boards; i++) {
		if (board_add(p, &ctx->cfg.boards[i], e) != 0) {
			srv_boards_free(p);
			return NULL;
		}
	}
	if (pthread_create(&p->timer_t, NULL, timer_main, p) != 0) {
		srv_boards_free(p);
		enpu_fail(e, ENPU_E_INTERNAL, NULL, NULL, "cannot start the job timer");
		return NULL;
	}
	p->timer_started = 1;
	return p;
}

int srv_boards_reload(srv_boards *p, const srv_board_cfg *cfg, int n, enpu_err *e)
{
	int i, k;

	if (!p)
		return 0;
	pthread_mutex_lock(&p->mu);
	for (i = 0; i < p->n; i++) {
		board *b = &p->b[i];
		int keep = 0;
		if (b->gone)
			continue;
		for (k = 0; k < n; k++)
			if (!strcmp(cfg[k].name, b->name) && !strcmp(cfg[k].url, b->url))
				keep = 1;
		if (!keep) {
			/* its threads leave; a job it runs now finishes there */
			b->gone = 1;
			b->up = 0;
			srv_log("info", "board=%s removed", b->name);
		}
	}
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	for (k = 0; k < n; k++) {
		int have = 0;
		for (i = 0; i < p->n; i++)
			if (!p->b[i].gone && !strcmp(cfg[k].name, p->b[i].name))
				have = 1;
		if (have)
			continue;
		if (board_add(p, &cfg[k], e) != 0)
			return -1;
		srv_log("info", "board=%s added (%s)", cfg[k].name, cfg[k].url);
	}
	return 0;
}

void srv_boards_free(srv_boards *p)
{
	int i;

	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->stopping = 1;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	/* dispatchers leave once srv_jobs_take_remote says the table stops */
	srv_jobs_kick(p->ctx->jobs);
	for (i = 0; i < p->n; i++) {
		if (p->b[i].health_started)
			pthread_join(p->b[i].health_t, NULL);
		if (p->b[i].disp_started)
			pthread_join(p->b[i].disp_t, NULL);
		srv_blink_free(p->b[i].hlink);
		srv_blink_free(p->b[i].dlink);
	}
	if (p->timer_started)
		pthread_join(p->timer_t, NULL);
	free(p->b);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	free(p);
}

int srv_boards_check_up(srv_boards *p, const char *backend, enpu_err *e)
{
	int bk = enpu_backend_parse(backend), i, ok = 0;
	char d[600];

	if (!p || bk < 0)
		return enpu_fail(e, ENPU_E_NO_BOARD, F_BACKEND, NULL, "no board serves backend '%.40s'",
				 backend);
	pthread_mutex_lock(&p->mu);
	for (i = 0; i < p->n; i++) {
		const board *b = &p->b[i];
		/* up, or not checked yet: the first check is under way */
		if (may_serve(b, bk) && (b->up || (!b->seen && !b->failures)))
			ok = 1;
	}
	if (!ok)
		down_text(p, bk, d, sizeof d);
	pthread_mutex_unlock(&p->mu);
	if (ok)
		return 0;
	return enpu_fail(e, ENPU_E_NO_BOARD, F_BACKEND, "start or fix a board serving it (eulernpu "
			 "boards), then submit again", "no board serving backend '%s' is up: %s",
			 backend, d);
}

int srv_boards_serves(srv_boards *p, const char *backend)
{
	int bk = enpu_backend_parse(backend), i, yes = 0;

	if (!p || bk < 0)
		return 0;
	pthread_mutex_lock(&p->mu);
	for (i = 0; i < p->n; i++)
		if (!p->b[i].gone && (!p->b[i].seen || (p->b[i].mask & (1u << bk))))
			yes = 1;
	pthread_mutex_unlock(&p->mu);
	return yes;
}

unsigned srv_boards_up_mask(srv_boards *p)
{
	unsigned m = 0;
	int i;

	if (!p)
		return 0;
	pthread_mutex_lock(&p->mu);
	for (i = 0; i < p->n; i++)
		if (p->b[i].up)
			m |= p->b[i].mask;
	pthread_mutex_unlock(&p->mu);
	return m;
}

json_object *srv_boards_json(srv_boards *p)
{
	json_object *o = json_object_new_object(), *arr = json_object_new_array();
	unsigned masks[BOARD_SLOTS];
	int i, bk, n;

	json_object_object_add(o, F_BOARDS, arr);
	if (!p)
		return o;
	pthread_mutex_lock(&p->mu);
	n = p->n;
	for (i = 0; i < n; i++)
		masks[i] = p->b[i].seen ? p->b[i].mask : BOARD_MASK;
	pthread_mutex_unlock(&p->mu);
	for (i = 0; i < n; i++) {
		if (p->b[i].gone)
			continue;
		/* counted outside our lock: the job table has its own */
		int queue = srv_jobs_remote_queued(p->ctx->jobs, masks[i]);
		board *b = &p->b[i];
		json_object *x = json_object_new_object(), *bks = json_object_new_array();

		pthread_mutex_lock(&p->mu);
		for (bk = 0; bk < enpu_backend_count(); bk++)
			if (b->mask & (1u << bk))
				json_object_array_add(bks, json_object_new_string(
					enpu_backend_name(bk)));
		json_object_object_add(x, F_NAME, json_object_new_string(b->name));
		json_object_object_add(x, F_URL, json_object_new_string(b->url));
		json_object_object_add(x, F_STATE, json_object_new_string(b->up ? BOARD_UP : BOARD_DOWN));
		json_object_object_add(x, F_BUSY, json_object_new_boolean(b->busy));
		json_object_object_add(x, F_FAULTS, json_object_new_int64(b->faults));
		json_object_object_add(x, F_JOB, b->busy ? json_object_new_string(b->job) : NULL);
		json_object_object_add(x, F_QUEUE, json_object_new_int(queue));
		json_object_object_add(x, F_BACKENDS, bks);
		json_object_object_add(x, F_PL, b->pl[0] ? json_object_new_string(b->pl) : NULL);
		json_object_object_add(x, F_LAST_ERROR, b->last_error[0] ?
				       json_object_new_string(b->last_error) : NULL);
		json_object_object_add(x, F_LAST_SEEN, srv_json_time(&b->last_seen));
		json_object_object_add(x, F_SINCE, srv_json_time(&b->since));   /* null: not checked yet */
		json_object_object_add(x, F_ARTIFACTS_CACHED, json_object_new_int64(b->artifacts_cached));
		json_object_object_add(x, F_JOBS_DONE, json_object_new_int64(b->jobs_done));
		pthread_mutex_unlock(&p->mu);
		json_object_array_add(arr, x);
	}
	return o;
}

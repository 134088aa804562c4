/* http_sse.c: server-sent event streams (srv_reply_sse). Events are
 * formatted into a buffer and handed to MHD as it pulls. The reader never
 * blocks its HTTP thread: with nothing to send it has the source's next
 * run on a handler thread (srv_req_await), which waits up to a second for
 * what comes next; MHD pulls again when that returns. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <microhttpd.h>
#include "srv.h"
#include "http.h"

typedef struct sse_stream {
	srv_req *r;
	srv_sse_next_fn next;
	void *src;
	void (*src_free)(void *);
	const volatile int *stopping;
	double end;
	enpu_buf pending;
	size_t sent;
	int rc;                    /* next's last answer: 0 go on, -1 the end */
} sse_stream;

static void sse_wait(void *cls)
{
	sse_stream *st = cls;
	size_t before = st->pending.len;

	st->rc = st->next(st->src, fmin(1.0, st->end - srv_now()), &st->pending);
	if (st->rc < 0 && st->pending.len == before)
		st->rc = -2;   /* ended with nothing more to say */
}

static ssize_t sse_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	sse_stream *st = cls;
	size_t n;

	(void)pos;
	while (st->sent == st->pending.len) {
		enpu_buf_reset(&st->pending);
		st->sent = 0;
		if (st->rc < 0 || *st->stopping || srv_now() >= st->end)
			return MHD_CONTENT_READER_END_OF_STREAM;
		if (srv_req_await(st->r, sse_wait, st) == 0)
			return 0;   /* pulled again once next is done (else it ran here) */
	}
	n = st->pending.len - st->sent;
	if (n > max)
		n = max;
	memcpy(buf, st->pending.data + st->sent, n);
	st->sent += n;
	return (ssize_t)n;
}

static void sse_free(void *cls)
{
	sse_stream *st = cls;

	if (st->src_free)
		st->src_free(st->src);
	enpu_buf_free(&st->pending);
	free(st);
}

int srv_sse_event(enpu_buf *out, const char *event, const char *id, const char *json)
{
	if (id && enpu_buf_addf(out, "id: %s\n", id) != 0)
		return -1;
	return enpu_buf_addf(out, "event: %s\ndata: %s\n\n", event, json);
}

void srv_reply_sse(srv_req *r, const enpu_buf *first, srv_sse_next_fn next, void *src,
		   void (*src_free)(void *), const volatile int *stopping, double end)
{
	sse_stream *st = calloc(1, sizeof *st);

	if (!st || (first && enpu_buf_add(&st->pending, first->data, first->len) != 0)) {
		if (st)
			enpu_buf_free(&st->pending);
		free(st);
		if (src_free)
			src_free(src);
		srv_reply_fail(r, ENPU_E_NOMEM, NULL, "out of memory");
		return;
	}
	st->r = r;
	st->next = next;
	st->src = src;
	st->src_free = src_free;
	st->stopping = stopping;
	st->end = end;
	srv_reply_stream(r, 200, "text/event-stream", sse_read, st, sse_free);
	srv_reply_header(r, "Cache-Control", "no-cache");
}

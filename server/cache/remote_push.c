/* remote_push.c: the remote cache's uploader, one thread: takes what
 * local compiles queued (srv_remote_push), writes the artifact's files
 * and its manifest to /cas/ (those the remote lacks: a HEAD first), then
 * its signed entry to /ac/ last, so that a reader never finds an entry
 * whose blobs are not there yet. A failure degrades the remote
 * (rx_failed); while degraded the thread probes it every
 * --remote-cache-backoff seconds and uploads nothing, and once a probe
 * answers the queue goes on. An upload that failed RQ_TRIES times is
 * given up (counted). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "srv.h"
#include "digest.h"
#include "cas.h"
#include "artifact.h"
#include "wire.h"
#include "json.h"
#include "remote_int.h"

/* The digest of no bytes: a HEAD of its /cas/ path is the probe. */
#define EMPTY_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

enum { PUSH_OK, PUSH_GONE, PUSH_FAILED };

/* The remote answers: any status but a server error or a refusal of our
 * token. 1 = up. */
static int probe(srv_remote *rc)
{
	enpu_err e = ENPU_ERR_INIT;
	rx_call x = {"HEAD", "/cas/" EMPTY_SHA256, NULL, NULL, 0, NULL, NULL, 0, 0};
	long st;

	if (rx_do(rc, &x, &st, &e) != 0 || st >= 500 || st == 401 || st == 403) {
		pthread_mutex_lock(&rc->mu);
		snprintf(rc->last_error, sizeof rc->last_error, "probe: %.200s",
			 st ? "HTTP status >= 500, 401 or 403" : e.message);
		pthread_mutex_unlock(&rc->mu);
		return 0;
	}
	return 1;
}

/* path (a /cas/ or /ac/ path) onto the remote from the file at file
 * (len bytes) or from mem. 0, or -1 (the remote degraded). */
static int put(srv_remote *rc, const char *path, const char *file, const void *mem, uint64_t len)
{
	enpu_err e = ENPU_ERR_INIT;
	rx_call x = {"PUT", path, NULL, NULL, 64 << 10, NULL, mem, len, 1};
	struct stat st;
	long status = 0;
	int r;

	if (file) {
		x.in = fopen(file, "rb");
		if (!x.in || fstat(fileno(x.in), &st) != 0 || (uint64_t)st.st_size != len) {
			if (x.in)
				fclose(x.in);
			srv_log("warn", "remote cache: cannot read '%s' to upload", file);
			return -2;
		}
	}
	r = rx_do(rc, &x, &status, &e);
	if (x.in)
		fclose(x.in);
	if (r != 0 || status < 200 || status > 299) {
		rx_failed(rc, path, r ? &e : NULL, r ? 0 : status);
		return -1;
	}
	return 0;
}

/* 1 when the remote holds /cas/<digest>, 0 when not, -1 failed. */
static int has(srv_remote *rc, const char *digest)
{
	char path[80];
	rx_call x = {"HEAD", path, NULL, NULL, 0, NULL, NULL, 0, 0};

	snprintf(path, sizeof path, "/cas/%s", digest);
	return rx_found(rc, &x);
}

/* One blob onto the remote unless it is there. 0, -1 failed, -2 gone here. */
static int push_blob(srv_remote *rc, const char *digest, const char *file, const void *mem,
		     uint64_t len)
{
	char path[80];
	int h = has(rc, digest);

	if (h != 0)
		return h > 0 ? 0 : -1;
	snprintf(path, sizeof path, "/cas/%s", digest);
	return put(rc, path, file, mem, len);
}

static int push_one(srv_remote *rc, const rq_item *it)
{
	enpu_err e = ENPU_ERR_INIT;
	enpu_buf raw = ENPU_BUF_INIT, doc = ENPU_BUF_INIT;
	enpu_manifest m;
	srv_rentry en;
	char dir[4300], file[4600], path[80];
	int r = 0;

	if (srv_artifact_manifest(rc->cas, it->id, &m, &raw, &e) != 0) {
		enpu_buf_free(&raw);
		srv_log("info", "remote cache: artifact %.12s left the cache before its upload", it->id);
		return PUSH_GONE;
	}
	srv_artifact_dir(rc->cas, it->id, dir, sizeof dir);
	for (int i = 0; i < m.n && r == 0; i++) {
		snprintf(file, sizeof file, "%s/%s", dir, m.files[i].path);
		r = push_blob(rc, m.files[i].sha256, file, NULL, m.files[i].bytes);
	}
	memcpy(en.key, it->key, 65);
	memcpy(en.id, it->id, 65);
	enpu_sha256_hex(raw.data ? raw.data : "", raw.len, en.manifest);
	if (r == 0)
		r = push_blob(rc, en.manifest, NULL, raw.data ? raw.data : "", raw.len);
	if (r == 0 && srv_rentry_make(&rc->keys, &en, &doc, &e) != 0) {
		srv_log("error", "remote cache: %s", e.message);
		r = -2;
	}
	snprintf(path, sizeof path, "/ac/%s", it->key);
	if (r == 0)
		r = put(rc, path, NULL, doc.data, doc.len);
	enpu_manifest_free(&m);
	enpu_buf_free(&raw);
	enpu_buf_free(&doc);
	if (r == -2)
		return PUSH_GONE;
	if (r != 0)
		return PUSH_FAILED;
	srv_log("info", "remote cache: uploaded artifact=%.12s key=%.12s", it->id, it->key);
	return PUSH_OK;
}

/* Wait on the condition variable until t (srv_now() seconds) at most. */
static void wait_until(srv_remote *rc, double t)
{
	struct timespec ts;
	double d = t - srv_now();

	if (d <= 0)
		return;
	srv_realtime_after(d, &ts);
	pthread_cond_timedwait(&rc->cv, &rc->mu, &ts);
}

void *rq_main(void *arg)
{
	srv_remote *rc = arg;

	enpu_json_thread();
	pthread_mutex_lock(&rc->mu);
	while (!rc->stop) {
		rq_item it;
		int r;

		if (rc->degraded) {
			if (srv_now() < rc->retry_at) {
				wait_until(rc, rc->retry_at);
				continue;
			}
			pthread_mutex_unlock(&rc->mu);
			r = probe(rc);
			pthread_mutex_lock(&rc->mu);
			if (r) {
				rc->degraded = 0;
				srv_log("info", "remote cache is back: %d upload(s) queued", rc->q_n);
			} else {
				rc->retry_at = srv_now() + rc->backoff_s;
			}
			continue;
		}
		if (rc->q_n == 0) {
			wait_until(rc, srv_now() + 1);
			continue;
		}
		it = rc->q[rc->q_head];
		pthread_mutex_unlock(&rc->mu);
		r = push_one(rc, &it);
		pthread_mutex_lock(&rc->mu);
		/* the item stays first until done or given up: the order is kept */
		if (r == PUSH_FAILED && ++rc->q[rc->q_head].tries < RQ_TRIES)
			continue;
		if (r == PUSH_FAILED) {
			atomic_fetch_add(&rc->dropped, 1);
			srv_log("warn", "remote cache: artifact %.12s not uploaded after %d tries",
				it.id, RQ_TRIES);
		} else if (r == PUSH_OK) {
			atomic_fetch_add(&rc->uploads, 1);
		}
		rc->q_head = (rc->q_head + 1) % rc->queue_max;
		rc->q_n--;
	}
	pthread_mutex_unlock(&rc->mu);
	return NULL;
}

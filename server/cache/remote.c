/* remote.c: the remote cache tier (remote.h): its configuration, the
 * calls to the remote (libcurl, bounded in time and size), its state (ok
 * or degraded), and the read path: key -> a signed entry -> the manifest
 * -> the files the cache lacks, each checked by digest on the way in,
 * then imported as any untrusted manifest is. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>
#include <json-c/json.h>
#include "srv.h"
#include "digest.h"
#include "daemon.h"
#include "cas.h"
#include "artifact.h"
#include "wire.h"
#include "remote_int.h"

#define MANIFEST_MAX (1u << 20)   /* enpu_manifest_parse refuses more */
/* A blob transfer slower than this (bytes/s) for --remote-cache-timeout is
 * dropped: a remote that slow is worse than compiling here. */
#define RX_CRAWL 65536L

static int bad_cfg(enpu_err *e, const char *what, const char *fix, const char *fmt, const char *arg)
{
	enpu_fail(e, ENPU_E_CONFIG, what, fix, fmt, arg);
	return -1;
}

srv_remote *srv_remote_new(const srv_remote_cfg *cfg, enpu_err *e)
{
	srv_remote *rc;
	size_t n;
	char *tok = NULL;

	if (strncmp(cfg->url, "http://", 7) && strncmp(cfg->url, "https://", 8)) {
		bad_cfg(e, "--remote-cache", "give http://HOST:PORT[/PREFIX] or https://...",
			"remote cache URL '%.200s' is not http(s)://", cfg->url);
		return NULL;
	}
	if (strpbrk(cfg->url, " \t\r\n?#")) {
		bad_cfg(e, "--remote-cache", NULL, "remote cache URL '%.200s' holds a space, "
			"'?' or '#'", cfg->url);
		return NULL;
	}
	if (cfg->mode && strcmp(cfg->mode, "read") && strcmp(cfg->mode, "readwrite")) {
		bad_cfg(e, "--remote-cache-mode", "read or readwrite",
			"--remote-cache-mode '%.40s' is not read or readwrite", cfg->mode);
		return NULL;
	}
	if (cfg->mode && !strcmp(cfg->mode, "readwrite") && !cfg->sign_key) {
		bad_cfg(e, "--remote-cache-mode", "give --remote-cache-sign-key FILE (openssl "
			"genpkey -algorithm ed25519 -out FILE), or --remote-cache-mode read",
			"--remote-cache-mode readwrite signs what it writes: it needs a sign key%s", "");
		return NULL;
	}
	if (cfg->cacert && access(cfg->cacert, R_OK) != 0) {
		enpu_fail(e, ENPU_E_CONFIG, "--remote-cache-cacert", NULL,
			  "--remote-cache-cacert '%.300s': %s", cfg->cacert, strerror(errno));
		return NULL;
	}
	rc = calloc(1, sizeof *rc);
	if (!rc) {
		enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&rc->mu, NULL);
	pthread_cond_init(&rc->cv, NULL);
	rc->url = strdup(cfg->url);
	rc->cacert = cfg->cacert ? strdup(cfg->cacert) : NULL;
	rc->readwrite = cfg->mode && !strcmp(cfg->mode, "readwrite");
	rc->timeout_ms = cfg->timeout_ms > 0 ? cfg->timeout_ms : 2000;
	rc->backoff_s = cfg->backoff_s > 0 ? cfg->backoff_s : 30;
	rc->queue_max = cfg->queue_max > 0 ? cfg->queue_max : 256;
	rc->miss_ttl_s = cfg->miss_ttl_s > 0 ? cfg->miss_ttl_s : 0;
	rc->q = calloc((size_t)rc->queue_max, sizeof *rc->q);
	if (!rc->url || (cfg->cacert && !rc->cacert) || !rc->q) {
		enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
		srv_remote_free(rc);
		return NULL;
	}
	n = strlen(rc->url);
	while (n > 0 && rc->url[n - 1] == '/')
		rc->url[--n] = '\0';
	if (srv_rkeys_load(&rc->keys, cfg->sign_key, cfg->trust, cfg->n_trust, e) != 0) {
		srv_remote_free(rc);
		return NULL;
	}
	if (cfg->token_file) {
		if (srv_read_token("--remote-cache-token-file", cfg->token_file, &tok) != 0) {
			*e = (enpu_err)ENPU_ERR_INIT;   /* printed on stderr already */
			srv_remote_free(rc);
			return NULL;
		}
		n = strlen(tok) + 32;
		rc->auth = malloc(n);
		if (rc->auth)
			snprintf(rc->auth, n, "Authorization: Bearer %s", tok);
		free(tok);
	}
	return rc;
}

int srv_remote_start(srv_remote *rc, struct srv_cas *c, const enpu_limits *lim, enpu_err *e)
{
	rc->cas = c;
	rc->lim = lim;
	if (pthread_create(&rc->th, NULL, rq_main, rc) != 0)
		return enpu_fail(e, ENPU_E_INTERNAL, NULL, NULL, "cannot start the remote cache's "
				 "uploader");
	rc->started = 1;
	srv_log("info", "remote cache %s (%s, %d trusted key(s))", rc->url,
		rc->readwrite ? "readwrite" : "read", rc->keys.n_pub);
	return 0;
}

void srv_remote_free(srv_remote *rc)
{
	if (!rc)
		return;
	pthread_mutex_lock(&rc->mu);
	rc->stop = 1;
	pthread_cond_broadcast(&rc->cv);
	pthread_mutex_unlock(&rc->mu);
	if (rc->started)
		pthread_join(rc->th, NULL);
	if (rc->q_n)
		srv_log("warn", "remote cache: %d upload(s) not done at stop", rc->q_n);
	srv_rkeys_free(&rc->keys);
	if (rc->auth)
		memset(rc->auth, 0, strlen(rc->auth));
	free(rc->auth);
	free(rc->url);
	free(rc->cacert);
	free(rc->q);
	pthread_cond_destroy(&rc->cv);
	pthread_mutex_destroy(&rc->mu);
	free(rc);
}

/* ---- calls ---------------------------------------------------------------- */

typedef struct rx_state {
	srv_remote *rc;
	const rx_call *x;
	uint64_t got, sent;
	int over;                   /* the answer passed x->max */
	int sink_failed;
	const unsigned char *mem;   /* PUT from memory: the rest */
	uint64_t mem_left;
} rx_state;

static size_t rx_write(char *p, size_t sz, size_t nm, void *ud)
{
	rx_state *s = ud;
	size_t n = sz * nm;

	if (s->got + n > s->x->max) {
		s->over = 1;
		return 0;
	}
	s->got += n;
	if (s->x->sink && s->x->sink(s->x->sink_ud, p, n) != 0) {
		s->sink_failed = 1;
		return 0;
	}
	return n;
}

static size_t rx_read(char *p, size_t sz, size_t nm, void *ud)
{
	rx_state *s = ud;
	size_t n = sz * nm;

	if (s->x->in) {
		n = fread(p, 1, n, s->x->in);
		s->sent += n;
		return n;
	}
	if (n > s->mem_left)
		n = (size_t)s->mem_left;
	memcpy(p, s->mem, n);
	s->mem += n;
	s->mem_left -= n;
	s->sent += n;
	return n;
}

/* A stop cuts a transfer short. */
static int rx_progress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	rx_state *s = ud;
	(void)dt, (void)dn, (void)ut, (void)un;
	return s->rc->stop ? 1 : 0;
}

int rx_do(srv_remote *rc, const rx_call *x, long *status, enpu_err *e)
{
	rx_state s;
	struct curl_slist *h = NULL;
	char url[4400];
	CURL *cu;
	CURLcode cr;
	long st = 0;

	memset(&s, 0, sizeof s);
	s.rc = rc;
	s.x = x;
	s.mem = x->mem;
	s.mem_left = x->mem ? x->in_len : 0;
	*status = 0;
	snprintf(url, sizeof url, "%s%s", rc->url, x->path);
	cu = curl_easy_init();
	if (!cu)
		return enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory (curl)");
	curl_easy_setopt(cu, CURLOPT_URL, url);
	curl_easy_setopt(cu, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(cu, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(cu, CURLOPT_CONNECTTIMEOUT_MS, (long)rc->timeout_ms);
	if (x->big) {   /* a blob: dropped when it crawls, however long it is */
		curl_easy_setopt(cu, CURLOPT_LOW_SPEED_LIMIT, RX_CRAWL);
		curl_easy_setopt(cu, CURLOPT_LOW_SPEED_TIME, (long)(rc->timeout_ms + 999) / 1000);
	} else {
		curl_easy_setopt(cu, CURLOPT_TIMEOUT_MS, (long)rc->timeout_ms);
	}
	if (rc->cacert)
		curl_easy_setopt(cu, CURLOPT_CAINFO, rc->cacert);
	if (rc->auth)
		h = curl_slist_append(h, rc->auth);
	if (!strcmp(x->method, "PUT")) {
		h = curl_slist_append(h, "Content-Type: application/octet-stream");
		h = curl_slist_append(h, "Expect:");
		curl_easy_setopt(cu, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(cu, CURLOPT_READFUNCTION, rx_read);
		curl_easy_setopt(cu, CURLOPT_READDATA, &s);
		curl_easy_setopt(cu, CURLOPT_INFILESIZE_LARGE, (curl_off_t)x->in_len);
	} else if (!strcmp(x->method, "HEAD")) {
		curl_easy_setopt(cu, CURLOPT_NOBODY, 1L);
	}
	curl_easy_setopt(cu, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(cu, CURLOPT_WRITEFUNCTION, rx_write);
	curl_easy_setopt(cu, CURLOPT_WRITEDATA, &s);
	curl_easy_setopt(cu, CURLOPT_XFERINFOFUNCTION, rx_progress);
	curl_easy_setopt(cu, CURLOPT_XFERINFODATA, &s);
	curl_easy_setopt(cu, CURLOPT_NOPROGRESS, 0L);
	cr = curl_easy_perform(cu);
	curl_easy_getinfo(cu, CURLINFO_RESPONSE_CODE, &st);
	curl_easy_cleanup(cu);
	curl_slist_free_all(h);
	atomic_fetch_add(&rc->bytes_in, s.got);
	atomic_fetch_add(&rc->bytes_out, s.sent);
	if (s.over)
		return enpu_fail(e, ENPU_E_SERVER, x->path, NULL, "the remote's answer to %s %s is "
				 "larger than %llu bytes", x->method, x->path,
				 (unsigned long long)x->max);
	if (s.sink_failed)
		return enpu_fail(e, ENPU_E_STORAGE, x->path, NULL, "cannot store %s from the remote",
				 x->path);
	if (cr != CURLE_OK)
		return enpu_fail(e, ENPU_E_SERVER, x->path, NULL, "%s %s: %s", x->method, x->path,
				 curl_easy_strerror(cr));
	*status = st;
	return 0;
}

int rx_usable(srv_remote *rc)
{
	int ok;

	pthread_mutex_lock(&rc->mu);
	ok = !rc->degraded && !rc->stop;
	pthread_mutex_unlock(&rc->mu);
	return ok;
}

void rx_failed(srv_remote *rc, const char *what, const enpu_err *e, long status)
{
	char msg[256];
	int was;

	atomic_fetch_add(&rc->errors, 1);
	if (status)
		snprintf(msg, sizeof msg, "%.80s: HTTP status %ld", what, status);
	else
		snprintf(msg, sizeof msg, "%.80s: %.160s", what, e ? e->message : "failed");
	pthread_mutex_lock(&rc->mu);
	was = rc->degraded;
	rc->degraded = 1;
	rc->retry_at = srv_now() + rc->backoff_s;
	snprintf(rc->last_error, sizeof rc->last_error, "%s", msg);
	pthread_cond_broadcast(&rc->cv);
	pthread_mutex_unlock(&rc->mu);
	if (!was)
		srv_log("warn", "remote cache degraded (local only; again in %d s): %s", rc->backoff_s,
			msg);
}

/* ---- the read path ----------------------------------------------------------- */

static int buf_sink(void *ud, const void *p, size_t n)
{
	return enpu_buf_add(ud, p, n);
}

int rx_found(srv_remote *rc, const rx_call *x)
{
	enpu_err e = ENPU_ERR_INIT;
	long st;

	if (rx_do(rc, x, &st, &e) != 0) {
		rx_failed(rc, x->path, &e, 0);
		return -1;
	}
	if (st == 200)
		return 1;
	if (st == 404)
		return 0;
	rx_failed(rc, x->path, NULL, st);
	return -1;
}

/* GET path into b (at most max bytes): rx_found's answer. */
static int get_small(srv_remote *rc, const char *path, uint64_t max, enpu_buf *b)
{
	rx_call x = {"GET", path, buf_sink, b, max, NULL, NULL, 0, 0};

	return rx_found(rc, &x);
}

static int upload_sink(void *ud, const void *p, size_t n)
{
	enpu_err e = ENPU_ERR_INIT;

	return srv_upload_write(ud, p, n, &e);
}

/* /cas/<digest> (bytes long, as the manifest lists it) into the local
 * cache, hashed on the way in (srv_upload_*) and kept only when it is
 * digest. 0, or -1 (logged; the remote degraded when it failed). */
static int fetch_blob(srv_remote *rc, const char *digest, uint64_t bytes)
{
	enpu_err e = ENPU_ERR_INIT;
	char path[80], got[65];
	srv_upload *u = srv_upload_begin(rc->cas, &e);
	rx_call x = {"GET", path, upload_sink, NULL, bytes, NULL, NULL, 0, 1};
	int existed = 0;
	long st;

	if (!u) {
		srv_log("error", "remote cache: %s", e.message);
		return -1;
	}
	snprintf(path, sizeof path, "/cas/%s", digest);
	x.sink_ud = u;
	if (rx_do(rc, &x, &st, &e) != 0 || st != 200) {
		srv_upload_abort(u);
		if (e.code == ENPU_E_STORAGE || st == 404) {   /* not the remote's failure */
			atomic_fetch_add(&rc->errors, 1);
			srv_log("warn", "remote cache: blob %.12s: %s", digest,
				st == 404 ? "not on the remote" : e.message);
			return -1;
		}
		rx_failed(rc, path, st ? NULL : &e, st);
		return -1;
	}
	if (srv_upload_finish(u, digest, got, &existed, &e) != 0) {
		atomic_fetch_add(&rc->errors, 1);
		srv_log("warn", "remote cache: blob %.12s refused: %s", digest, e.message);
		return -1;
	}
	return 0;
}

/* The key m gives: its compiler, backend, target (the canonical JSON),
 * spec and weights digests. 0, or -1 when it lacks one. */
static int manifest_key(const enpu_manifest *m, char key[65])
{
	json_object *spec, *v;
	const char *comp, *sd, *wd, *ts;

	if (!json_object_object_get_ex(m->root, "compiler", &v) || !(comp = json_object_get_string(v)) ||
	    !json_object_object_get_ex(m->root, "spec", &spec) ||
	    !json_object_object_get_ex(spec, "sha256", &v) || !(sd = json_object_get_string(v)) ||
	    !json_object_object_get_ex(m->root, "weights_sha256", &v) ||
	    !(wd = json_object_get_string(v)))
		return -1;
	ts = m->target ? json_object_to_json_string_ext(m->target, JSON_C_TO_STRING_PLAIN) : "null";
	return srv_ac_key(comp, m->backend, ts ? ts : "null", sd, wd, key);
}

static int refused(srv_remote *rc, const char *key, const char *why)
{
	atomic_fetch_add(&rc->untrusted, 1);
	atomic_fetch_add(&rc->misses, 1);
	srv_log("warn", "remote cache: entry %.12s ignored: %s", key, why);
	return 0;
}

/* The manifest of entry en: fetched, checked by digest, parsed, its id
 * en's and its key en's. 1 (m, raw filled), 0 refused or failed. */
static int fetch_manifest(srv_remote *rc, const srv_rentry *en, enpu_manifest *m, enpu_buf *raw)
{
	enpu_err e = ENPU_ERR_INIT;
	char path[80], dig[65], key[65];
	int r;

	snprintf(path, sizeof path, "/cas/%s", en->manifest);
	r = get_small(rc, path, MANIFEST_MAX, raw);
	if (r <= 0) {
		if (r == 0)
			return refused(rc, en->key, "its manifest is not on the remote");
		return 0;
	}
	enpu_sha256_hex(raw->data ? raw->data : "", raw->len, dig);
	if (strcmp(dig, en->manifest) != 0)
		return refused(rc, en->key, "its manifest's bytes do not match their digest");
	if (enpu_manifest_parse(raw->data ? raw->data : "", raw->len, "manifest.json", m, &e) != 0)
		return refused(rc, en->key, e.message);
	if (strcmp(m->id, en->id) != 0 || manifest_key(m, key) != 0 || strcmp(key, en->key) != 0) {
		enpu_manifest_free(m);
		return refused(rc, en->key, "its manifest is of other inputs (compiler, backend, "
			       "target, spec or weights) than the key");
	}
	return 1;
}

/* 1 when key missed within the last miss_ttl_s seconds; with add, note
 * that it did. Without a ttl, never. */
static int neg_memo(srv_remote *rc, const char *key, int add)
{
	unsigned slot = 0;
	int hit;

	if (rc->miss_ttl_s == 0)
		return 0;
	for (int i = 0; i < 8; i++)   /* a key is a hex digest: any digits spread */
		slot = slot * 16 + (unsigned)(key[i] <= '9' ? key[i] - '0' : key[i] - 'a' + 10);
	slot %= NEG_SLOTS;
	pthread_mutex_lock(&rc->mu);
	hit = !strcmp(rc->neg_key[slot], key) && srv_now() < rc->neg_at[slot] + rc->miss_ttl_s;
	if (add) {
		memcpy(rc->neg_key[slot], key, 65);
		rc->neg_at[slot] = srv_now();
	}
	pthread_mutex_unlock(&rc->mu);
	return hit;
}

int srv_remote_fetch(srv_remote *rc, const char *key, char id[65])
{
	enpu_buf doc = ENPU_BUF_INIT, raw = ENPU_BUF_INIT;
	enpu_err e = ENPU_ERR_INIT;
	enpu_manifest m;
	srv_rentry en;
	json_object *missing = NULL;
	char path[80];
	int r, created = 0, hit = 0;
	double t0 = srv_now();

	if (!rc || !enpu_is_sha256_hex(key) || !rx_usable(rc) || neg_memo(rc, key, 0))
		return 0;
	snprintf(path, sizeof path, "/ac/%s", key);
	r = get_small(rc, path, SRV_RENTRY_MAX, &doc);
	if (r <= 0) {
		if (r == 0)
			atomic_fetch_add(&rc->misses, 1);
		goto out;
	}
	if (srv_rentry_check(&rc->keys, doc.data ? doc.data : "", doc.len, key, &en, &e) !=
	    SRV_RENTRY_OK) {
		refused(rc, key, e.message);
		goto out;
	}
	if (!fetch_manifest(rc, &en, &m, &raw))
		goto out;
	for (int i = 0; i < m.n && hit == 0; i++)
		if (!srv_cas_verify(rc->cas, m.files[i].sha256, NULL) &&
		    fetch_blob(rc, m.files[i].sha256, m.files[i].bytes) != 0)
			hit = -1;
	if (hit == 0 && srv_artifact_import_stored(rc->cas, en.id, raw.data, raw.len, rc->lim,
						   &missing, &created, &e) != 0) {
		srv_log("warn", "remote cache: artifact %.12s not imported: %s", en.id, e.message);
		atomic_fetch_add(&rc->untrusted, 1);
		hit = -1;
	}
	json_object_put(missing);
	enpu_manifest_free(&m);
	if (hit == 0 && srv_ac_put(rc->cas, key, en.id, &e) == 0) {
		memcpy(id, en.id, 65);
		hit = 1;
		atomic_fetch_add(&rc->hits, 1);
		srv_log("info", "remote cache hit key=%.12s artifact=%.12s (%s, %.3f s)", key, en.id,
			created ? "fetched" : "present", srv_now() - t0);
	} else {
		atomic_fetch_add(&rc->misses, 1);
	}
out:
	if (hit != 1)
		neg_memo(rc, key, 1);
	enpu_buf_free(&doc);
	enpu_buf_free(&raw);
	return hit == 1;
}

void srv_remote_push(srv_remote *rc, const char *key, const char *id)
{
	if (!rc || !rc->readwrite)
		return;
	pthread_mutex_lock(&rc->mu);
	if (rc->q_n == rc->queue_max) {
		pthread_mutex_unlock(&rc->mu);
		atomic_fetch_add(&rc->dropped, 1);
		srv_log("warn", "remote cache: upload queue full (%d): artifact %.12s not uploaded",
			rc->queue_max, id);
		return;
	}
	rq_item *it = &rc->q[(rc->q_head + rc->q_n) % rc->queue_max];
	memcpy(it->key, key, 65);
	memcpy(it->id, id, 65);
	it->tries = 0;
	rc->q_n++;
	pthread_cond_broadcast(&rc->cv);
	pthread_mutex_unlock(&rc->mu);
}

void srv_remote_stats_get(srv_remote *rc, srv_remote_stats *o)
{
	memset(o, 0, sizeof *o);
	if (!rc)
		return;
	o->hits = atomic_load(&rc->hits);
	o->misses = atomic_load(&rc->misses);
	o->untrusted = atomic_load(&rc->untrusted);
	o->errors = atomic_load(&rc->errors);
	o->bytes_in = atomic_load(&rc->bytes_in);
	o->bytes_out = atomic_load(&rc->bytes_out);
	o->uploads = atomic_load(&rc->uploads);
	o->dropped = atomic_load(&rc->dropped);
	pthread_mutex_lock(&rc->mu);
	o->queued = rc->q_n;
	o->degraded = rc->degraded;
	pthread_mutex_unlock(&rc->mu);
}

json_object *srv_remote_health_json(srv_remote *rc)
{
	json_object *o = json_object_new_object();

	pthread_mutex_lock(&rc->mu);
	json_object_object_add(o, "state", json_object_new_string(rc->degraded ? "degraded" : "ok"));
	json_object_object_add(o, "mode", json_object_new_string(rc->readwrite ? "readwrite" : "read"));
	json_object_object_add(o, "queued", json_object_new_int(rc->q_n));
	if (rc->last_error[0])
		json_object_object_add(o, "last_error", json_object_new_string(rc->last_error));
	if (rc->degraded) {
		double in = rc->retry_at - srv_now();
		json_object_object_add(o, "retry_in", json_object_new_int(in > 0 ? (int)(in + 0.999) : 0));
	}
	pthread_mutex_unlock(&rc->mu);
	return o;
}

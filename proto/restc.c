/* restc.c: the REST client both sides use. One easy handle per connection,
 * reset before each request so that options never leak from one call into
 * the next, while curl keeps the connection open between them. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>
#include <json-c/json.h>
#include <openssl/rand.h>
#include <unistd.h>
#include "api.h"
#include "digest.h"
#include "restc.h"

struct enpu_rest {
	char *url;          /* as given */
	char *base;         /* "http://localhost" for a socket, else the URL */
	char *sock;         /* Unix socket path or NULL */
	char *auth;         /* "Authorization: Bearer ..." or NULL; never printed */
	int auth_on_sock;
	char *cacert;       /* CA file for https, or NULL */
	int retries;        /* enpu_rest_set_retry */
	long retry_max_s;
	enpu_rest_retry_note retry_note;
	enpu_rest_cfg cfg;
	CURL *h;
};

/* The process's session header (H_SESSION), made once: 64 random bits
 * (the pid and the clock if the generator fails: it only spreads load). */
static char session_hdr[48];
static pthread_once_t session_once = PTHREAD_ONCE_INIT;

static void session_init(void)
{
	unsigned char b[8];
	struct timespec ts;
	uint64_t v = 0;

	if (RAND_bytes(b, sizeof b) == 1) {
		for (size_t i = 0; i < sizeof b; i++)
			v = v << 8 | b[i];
	} else {
		clock_gettime(CLOCK_REALTIME, &ts);
		v = (uint64_t)getpid() << 40 ^ (uint64_t)ts.tv_sec << 20 ^ (uint64_t)ts.tv_nsec;
	}
	snprintf(session_hdr, sizeof session_hdr, H_SESSION ": %016llx", (unsigned long long)v);
}

int enpu_rest_url_kind(const char *url)
{
	if (!strncmp(url, "unix:", 5))
		return url[5] ? 1 : 0;
	return !strncmp(url, "http://", 7) || !strncmp(url, "https://", 8) ? 2 : 0;
}

enpu_rest *enpu_rest_new(const char *url, const enpu_rest_cfg *cfg)
{
	int kind = enpu_rest_url_kind(url);
	enpu_rest *r;
	size_t n;

	if (!kind || !(r = calloc(1, sizeof *r)))
		return NULL;
	r->cfg = *cfg;
	if (!r->cfg.ops.ud)
		r->cfg.ops.ud = r;
	r->url = strdup(url);
	r->base = strdup(kind == 1 ? "http://localhost" : url);
	if (kind == 1)
		r->sock = strdup(url + 5);
	r->h = curl_easy_init();
	if (!r->url || !r->base || (kind == 1 && !r->sock) || !r->h) {
		enpu_rest_free(r);
		return NULL;
	}
	n = strlen(r->base);
	while (n > 0 && r->base[n - 1] == '/')
		r->base[--n] = '\0';
	return r;
}

void enpu_rest_free(enpu_rest *r)
{
	if (!r)
		return;
	if (r->h)
		curl_easy_cleanup(r->h);
	if (r->auth) {
		memset(r->auth, 0, strlen(r->auth));
		free(r->auth);
	}
	free(r->cacert);
	free(r->url);
	free(r->base);
	free(r->sock);
	free(r);
}

int enpu_rest_set_auth(enpu_rest *r, const char *token, int on_socket, const char *cacert)
{
	size_t n;

	if (token) {
		n = strlen(token) + 32;
		r->auth = malloc(n);
		if (!r->auth)
			return -1;
		snprintf(r->auth, n, H_AUTHORIZATION ": Bearer %s", token);
	}
	r->auth_on_sock = on_socket;
	if (cacert && !(r->cacert = strdup(cacert)))
		return -1;
	return 0;
}

void enpu_rest_set_retry(enpu_rest *r, int n, long max_s, enpu_rest_retry_note note)
{
	r->retries = n > 0 ? n : 0;
	r->retry_max_s = max_s > 0 ? max_s : 0;
	r->retry_note = note;
}

int enpu_rest_retry_safe(const enpu_rest_req *q)
{
	static const char *const posts[] = {API_JOBS, API_COMPILE, API_BLOBS_MISSING};
	size_t n;

	if (!strcmp(q->method, "GET") || !strcmp(q->method, "HEAD") ||
	    !strcmp(q->method, "PUT") || !strcmp(q->method, "DELETE"))
		return 1;
	if (strcmp(q->method, "POST") != 0)
		return 0;
	for (size_t i = 0; i < sizeof posts / sizeof posts[0]; i++) {
		n = strlen(posts[i]);
		if (!strncmp(q->path, posts[i], n) && (q->path[n] == '\0' || q->path[n] == '?'))
			return 1;
	}
	return 0;
}

const char *enpu_rest_url(const enpu_rest *r)
{
	return r->url;
}

const char *enpu_rest_socket(const enpu_rest *r)
{
	return r->sock;
}

/* Where the body goes: to the sink when the answer is 2xx (decided at the
 * first byte, once the status is known), else into the buffer. */
typedef struct wsink {
	CURL *h;
	const enpu_rest_req *q;
	const enpu_rest_ops *ops;
	enpu_buf *buf;
	enpu_err *e;
	int decided, to_sink, why, werr;
} wsink;

static size_t on_write(char *p, size_t size, size_t nmemb, void *ud)
{
	wsink *s = ud;
	size_t n = size * nmemb;

	if (!s->decided) {
		long st = 0;

		curl_easy_getinfo(s->h, CURLINFO_RESPONSE_CODE, &st);
		s->to_sink = s->q->sink && st >= 200 && st < 300;
		s->decided = 1;
	}
	if (s->to_sink) {
		int en = 0;

		if (s->q->sink(s->q->sink_ud, p, n, &en, s->e) != 0) {
			s->why = en ? ENPU_REST_SINK_IO : ENPU_REST_SINK;
			s->werr = en;
			return 0;
		}
		return n;
	}
	if (enpu_buf_add(s->buf, p, n) < 0) {
		s->why = ENPU_REST_TOO_LARGE;
		return 0;
	}
	return n;
}

static int on_xfer(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	const wsink *s = ud;
	const enpu_rest_ops *o = s->ops;

	return o->xfer(o->ud, s->q, dt > 0 ? (uint64_t)dt : 0, dn > 0 ? (uint64_t)dn : 0,
		       ut > 0 ? (uint64_t)ut : 0, un > 0 ? (uint64_t)un : 0);
}

static enpu_rest_why why_of(CURLcode rc, const wsink *s)
{
	switch (rc) {
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
		return ENPU_REST_CONNECT;
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_SSL_CERTPROBLEM:
		return ENPU_REST_TLS;
	case CURLE_OPERATION_TIMEDOUT:
		return ENPU_REST_TIMEOUT;
	case CURLE_WRITE_ERROR:
		return s->why ? (enpu_rest_why)s->why : ENPU_REST_OTHER;
	case CURLE_READ_ERROR:
		return ENPU_REST_READ;
	case CURLE_ABORTED_BY_CALLBACK:
		return ENPU_REST_ABORTED;
	default:
		return ENPU_REST_OTHER;
	}
}

/* A fresh handle with what every request has (URL, socket, CA, timeouts,
 * agent, the body's writer s); the headers every request sends. */
static struct curl_slist *set_common(enpu_rest *r, const char *url, char *errbuf, long total,
				     wsink *s)
{
	struct curl_slist *hdrs = NULL;

	curl_easy_reset(r->h);
	curl_easy_setopt(r->h, CURLOPT_URL, url);
	if (r->sock)
		curl_easy_setopt(r->h, CURLOPT_UNIX_SOCKET_PATH, r->sock);
	curl_easy_setopt(r->h, CURLOPT_ERRORBUFFER, errbuf);
	if (r->cacert)
		curl_easy_setopt(r->h, CURLOPT_CAINFO, r->cacert);
	curl_easy_setopt(r->h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(r->h, CURLOPT_CONNECTTIMEOUT, r->cfg.connect_s);
	if (total > 0)
		curl_easy_setopt(r->h, CURLOPT_TIMEOUT, total);
	curl_easy_setopt(r->h, CURLOPT_USERAGENT, r->cfg.agent);
	curl_easy_setopt(r->h, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(r->h, CURLOPT_WRITEDATA, s);
	/* No "Expect: 100-continue" round trip before uploads. */
	hdrs = curl_slist_append(hdrs, "Expect:");
	if (r->auth && (!r->sock || r->auth_on_sock))
		hdrs = curl_slist_append(hdrs, r->auth);
	if (!r->sock) {   /* a balancer keeps the process on one node */
		pthread_once(&session_once, session_init);
		hdrs = curl_slist_append(hdrs, session_hdr);
	}
	return hdrs;
}

/* The method and the body: q's upload file streamed (*up, open until the
 * caller closes it), or q's body for POST and PUT. 0, or -1 with f when
 * the upload file cannot be read. */
static int set_body(enpu_rest *r, const enpu_rest_req *q, struct curl_slist **hdrs, FILE **up,
		    enpu_rest_fault *f)
{
	if (q->upload_file) {
		long long size;

		*up = fopen(q->upload_file, "rb");
		if (!*up || fseek(*up, 0, SEEK_END) != 0 || (size = ftell(*up)) < 0 ||
		    fseek(*up, 0, SEEK_SET) != 0) {
			f->why = ENPU_REST_FILE;
			f->file_errno = errno;
			f->text = f->code_text = "";
			return -1;
		}
		*hdrs = curl_slist_append(*hdrs, "Content-Type: application/octet-stream");
		curl_easy_setopt(r->h, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(r->h, CURLOPT_READDATA, *up);
		curl_easy_setopt(r->h, CURLOPT_INFILESIZE_LARGE, (curl_off_t)size);
	} else if (!strcmp(q->method, "POST") || !strcmp(q->method, "PUT")) {
		char ct[128];

		snprintf(ct, sizeof ct, "Content-Type: %s",
			 q->content_type ? q->content_type : "application/json");
		*hdrs = curl_slist_append(*hdrs, ct);
		curl_easy_setopt(r->h, CURLOPT_POSTFIELDS, q->body ? q->body : "");
		curl_easy_setopt(r->h, CURLOPT_POSTFIELDSIZE_LARGE,
				 (curl_off_t)(q->body ? q->body_len : 0));
		if (!strcmp(q->method, "PUT"))
			curl_easy_setopt(r->h, CURLOPT_CUSTOMREQUEST, "PUT");
	} else if (strcmp(q->method, "GET") != 0) {
		curl_easy_setopt(r->h, CURLOPT_CUSTOMREQUEST, q->method);
	}
	return 0;
}

/* What went wrong in a transfer that failed with rc, for the fault hook
 * (f->text may point into errbuf). */
static void fault_of(enpu_rest *r, CURLcode rc, const wsink *s, const char *errbuf,
		     enpu_rest_fault *f)
{
	f->why = why_of(rc, s);
	f->code_text = curl_easy_strerror(rc);
	f->text = errbuf[0] ? errbuf : f->code_text;
	f->sink_errno = s->werr;
	if (f->why == ENPU_REST_CONNECT && r->sock) {
		long oserr = 0;

		curl_easy_getinfo(r->h, CURLINFO_OS_ERRNO, &oserr);
		f->os_errno = (int)oserr;
	}
}

static int do_once(enpu_rest *r, const enpu_rest_req *q, long *status, enpu_buf *resp,
		   enpu_err *e)
{
	char errbuf[CURL_ERROR_SIZE] = "";
	char *url = NULL;
	struct curl_slist *hdrs = NULL;
	FILE *up = NULL;
	wsink s = {r->h, q, &r->cfg.ops, resp, e, 0, 0, 0, 0};
	enpu_rest_fault f = {0};
	long total = r->cfg.call_s + q->timeout;
	CURLcode rc;
	int ret = -1;
	size_t ulen = strlen(r->base) + strlen(q->path) + 1;

	*status = 0;
	if (resp->cap == 0)
		resp->cap = r->cfg.resp_cap;
	url = malloc(ulen);
	if (!url)
		return enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory for a request");
	snprintf(url, ulen, "%s%s", r->base, q->path);

	hdrs = set_common(r, url, errbuf, total, &s);
	for (size_t i = 0; q->headers && q->headers[i]; i++)
		hdrs = curl_slist_append(hdrs, q->headers[i]);
	if (set_body(r, q, &hdrs, &up, &f) < 0) {
		ret = r->cfg.ops.fault(r->cfg.ops.ud, q, &f, e);
		goto out;
	}
	curl_easy_setopt(r->h, CURLOPT_HTTPHEADER, hdrs);
	if (r->cfg.ops.xfer_on && r->cfg.ops.xfer_on(r->cfg.ops.ud, q)) {
		curl_easy_setopt(r->h, CURLOPT_XFERINFOFUNCTION, on_xfer);
		curl_easy_setopt(r->h, CURLOPT_XFERINFODATA, &s);
		curl_easy_setopt(r->h, CURLOPT_NOPROGRESS, 0L);
	}

	rc = curl_easy_perform(r->h);
	if (r->cfg.ops.xfer_off)
		r->cfg.ops.xfer_off(r->cfg.ops.ud);
	if (rc == CURLE_OK) {
		curl_easy_getinfo(r->h, CURLINFO_RESPONSE_CODE, status);
		ret = 0;
	} else {
		fault_of(r, rc, &s, errbuf, &f);
		ret = r->cfg.ops.fault(r->cfg.ops.ud, q, &f, e);
	}
out:
	if (up)
		fclose(up);
	curl_slist_free_all(hdrs);
	free(url);
	return ret;
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The wait before retry n: what Retry-After asked (curl reads seconds and
 * dates alike), within [1, ENPU_REST_RETRY_CAP]. */
static long retry_wait(enpu_rest *r)
{
	curl_off_t ra = 0;

	if (curl_easy_getinfo(r->h, CURLINFO_RETRY_AFTER, &ra) != CURLE_OK || ra < 1)
		return 1;
	return ra > ENPU_REST_RETRY_CAP ? ENPU_REST_RETRY_CAP : (long)ra;
}

/* Sleep s seconds; -1 when a signal cut it short (the caller stops). */
static int nap(long s)
{
	struct timespec ts = {s, 0};

	return nanosleep(&ts, NULL) == 0 ? 0 : -1;
}

int enpu_rest_do(enpu_rest *r, const enpu_rest_req *q, long *status, enpu_buf *resp,
		 enpu_err *e)
{
	double t0 = mono_s();
	int rc;

	for (int n = 1;; n++) {
		long wait;

		rc = do_once(r, q, status, resp, e);
		if (rc != 0 || (*status != 429 && *status != 503) || n > r->retries ||
		    !enpu_rest_retry_safe(q))
			return rc;
		wait = retry_wait(r);
		if (r->retry_max_s && mono_s() - t0 + (double)wait > (double)r->retry_max_s)
			return rc;
		if (r->retry_note && r->retry_note(r->cfg.ops.ud, q, *status, wait, n, r->retries))
			return rc;
		if (nap(wait) != 0)
			return rc;
		enpu_buf_free(resp);
	}
}

struct json_object *enpu_rest_parse(const enpu_rest *r, const enpu_buf *resp)
{
	struct json_tokener *tok;
	struct json_object *o;

	if (!resp->data || resp->len == 0 || resp->len > (size_t)0x7fffffff)
		return NULL;
	tok = json_tokener_new_ex(r->cfg.depth);
	if (!tok)
		return NULL;
	o = json_tokener_parse_ex(tok, resp->data, (int)resp->len);
	if (json_tokener_get_error(tok) != json_tokener_success) {
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	return o;
}

static struct json_object *parse_obj(const enpu_rest *r, const enpu_buf *resp)
{
	struct json_object *o = enpu_rest_parse(r, resp);

	if (o && !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		o = NULL;
	}
	return o;
}

int enpu_rest_json(enpu_rest *r, const enpu_rest_req *q, int accept_4xx, long *status,
		   struct json_object **out, struct json_object **err_body, enpu_err *e)
{
	enpu_buf resp = ENPU_BUF_INIT;
	long st;
	int rc = enpu_rest_do(r, q, &st, &resp, e);

	*out = NULL;
	if (err_body)
		*err_body = NULL;
	if (rc != 0)
		goto out;
	if (status)
		*status = st;
	if (st < 200 || st >= 300) {
		if (accept_4xx && st != 401 && st != 429 && st < 500) {
			*out = parse_obj(r, &resp);
			goto out;
		}
		rc = r->cfg.ops.status(r->cfg.ops.ud, q, st, &resp, e);
		if (err_body)
			*err_body = enpu_rest_parse(r, &resp);
		goto out;
	}
	*out = parse_obj(r, &resp);
	if (!*out)
		rc = r->cfg.ops.broken(r->cfg.ops.ud, q, ENPU_REST_NOT_OBJECT, e);
out:
	enpu_buf_free(&resp);
	return rc;
}

/* The caller's sink behind one that hashes what passes. */
typedef struct hsink {
	const enpu_rest_req *q;
	enpu_sha256 *sha;
} hsink;

static int hash_sink(void *ud, const void *p, size_t n, int *errno_out, enpu_err *e)
{
	hsink *h = ud;

	if (enpu_sha256_update(h->sha, p, n) != 0) {
		*errno_out = ENOMEM;
		return -1;
	}
	return h->q->sink(h->q->sink_ud, p, n, errno_out, e);
}

int enpu_rest_fetch(enpu_rest *r, const enpu_rest_req *q, char got[65], enpu_err *e)
{
	enpu_buf resp = ENPU_BUF_INIT;
	enpu_rest_req hq = *q;
	hsink h = {q, NULL};
	long st;
	int rc;

	if (got) {
		h.sha = enpu_sha256_new();
		if (!h.sha)
			return enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory for a digest");
		hq.sink = hash_sink;
		hq.sink_ud = &h;
	}
	rc = enpu_rest_do(r, &hq, &st, &resp, e);
	if (rc == 0 && (st < 200 || st >= 300))
		rc = r->cfg.ops.status(r->cfg.ops.ud, q, st, &resp, e);
	if (h.sha) {
		if (rc == 0 && enpu_sha256_final(h.sha, got) != 0)
			rc = enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "cannot finish a digest");
		else if (rc != 0)
			enpu_sha256_free(h.sha);
	}
	enpu_buf_free(&resp);
	return rc;
}

int enpu_rest_blobs_sync(enpu_rest *r, int n, const char *const *digests,
			 int (*put)(void *ud, int i, const char *path, enpu_err *e), void *ud,
			 int *n_put, enpu_err *e)
{
	struct json_object *req = json_object_new_object();
	struct json_object *arr = json_object_new_array();
	struct json_object *res = NULL, *missing;
	enpu_rest_req q = {0};
	char path[128];
	int ret = -1, puts = 0;

	if (!req || !arr) {
		json_object_put(arr);
		enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
		goto out;
	}
	json_object_object_add(req, F_DIGESTS, arr);
	for (int i = 0; i < n; i++)
		json_object_array_add(arr, json_object_new_string(digests[i]));
	q.method = "POST";
	q.path = API_BLOBS_MISSING;
	q.body = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN |
						JSON_C_TO_STRING_NOSLASHESCAPE);
	q.body_len = strlen(q.body);
	ret = enpu_rest_json(r, &q, 0, NULL, &res, NULL, e);
	if (ret != 0)
		goto out;
	if (!json_object_object_get_ex(res, F_MISSING, &missing) ||
	    !json_object_is_type(missing, json_type_array)) {
		ret = r->cfg.ops.broken(r->cfg.ops.ud, &q, ENPU_REST_NO_MISSING, e);
		goto out;
	}
	/* Walk our list, not the server's: each missing digest is sent once,
	 * from the first place that has it, and an unknown digest in the
	 * answer cannot make us send anything we were not asked to. */
	for (int i = 0; i < n; i++) {
		int want = 0, dup = 0;

		for (size_t k = 0; k < json_object_array_length(missing); k++) {
			const char *d = json_object_get_string(json_object_array_get_idx(missing, k));

			if (d && strcmp(d, digests[i]) == 0)
				want = 1;
		}
		for (int j = 0; j < i; j++)
			if (strcmp(digests[j], digests[i]) == 0)
				dup = 1;
		if (!want || dup)
			continue;
		snprintf(path, sizeof path, "%s%s", API_BLOBS, digests[i]);
		ret = put(ud, i, path, e);
		if (ret != 0)
			goto out;
		puts++;
	}
	ret = 0;
out:
	if (n_put)
		*n_put += puts;
	json_object_put(req);
	json_object_put(res);
	return ret;
}

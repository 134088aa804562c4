/* rest.c: REST calls over libcurl for the client. One easy handle per
 * connection, reset before each request so that options never leak from one
 * call into the next, while curl keeps the connection open between them. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <curl/curl.h>
#include <json-c/json.h>
#include "cli.h"
#include "rest.h"
#include "digest.h"
#include "progress.h"

#define RESP_CAP (64u << 20)      /* JSON answers and error bodies */
#define CONNECT_TIMEOUT 10L
#define UNREACH_FIX "start eulernpud, or unset EULERNPU_SERVER to use a private daemon"

struct cli_conn {
	char *url;          /* as given */
	char *base;         /* "http://localhost" for a socket, else the URL */
	char *sock;         /* Unix socket path or NULL */
	char *auth;         /* "Authorization: Bearer ..." or NULL; never printed */
	char *cacert;       /* CA file for https, or NULL */
	CURL *h;
};

int cli_conn_set_auth(cli_conn *c, const char *token, const char *cacert)
{
	size_t n;

	if (token) {
		n = strlen(token) + 32;
		c->auth = malloc(n);
		if (!c->auth)
			return -1;
		snprintf(c->auth, n, "Authorization: Bearer %s", token);
	}
	if (cacert && !(c->cacert = strdup(cacert)))
		return -1;
	return 0;
}

cli_conn *cli_conn_new(const char *url, enpu_err *e)
{
	cli_conn *c;
	size_t n;

	if (strncmp(url, "unix:", 5) != 0 && strncmp(url, "http://", 7) != 0 &&
	    strncmp(url, "https://", 8) != 0) {
		enpu_fail(e, ENPU_E_USAGE, "--server",
			  "give unix:/path/to.sock or http://host:port",
			  "server '%s' is neither unix:PATH nor an http:// URL", url);
		return NULL;
	}
	if (strncmp(url, "unix:", 5) == 0 && url[5] == '\0') {
		enpu_fail(e, ENPU_E_USAGE, "--server", "give unix:/path/to.sock",
			  "server '%s' names no socket path", url);
		return NULL;
	}
	c = calloc(1, sizeof *c);
	if (!c)
		goto nomem;
	c->url = strdup(url);
	if (!c->url)
		goto nomem;
	if (strncmp(url, "unix:", 5) == 0) {
		c->sock = strdup(url + 5);
		c->base = strdup("http://localhost");
	} else {
		c->base = strdup(url);
	}
	if (!c->base || (strncmp(url, "unix:", 5) == 0 && !c->sock))
		goto nomem;
	n = strlen(c->base);
	while (n > 0 && c->base[n - 1] == '/')
		c->base[--n] = '\0';
	c->h = curl_easy_init();
	if (!c->h)
		goto nomem;
	return c;
nomem:
	cli_conn_free(c);
	enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "cannot set up a connection to '%s'", url);
	return NULL;
}

void cli_conn_free(cli_conn *c)
{
	if (!c)
		return;
	if (c->h)
		curl_easy_cleanup(c->h);
	if (c->auth) {
		memset(c->auth, 0, strlen(c->auth));
		free(c->auth);
	}
	free(c->cacert);
	free(c->url);
	free(c->base);
	free(c->sock);
	free(c);
}

const char *cli_conn_url(const cli_conn *c)
{
	return c->url;
}

/* Where the body goes: to out_fd when the answer is 2xx (decided at the
 * first byte, once the status is known), else into the buffer. */
typedef struct sink {
	CURL *h;
	int fd;
	enpu_buf *buf;
	int decided, to_fd, werr;
} sink;

static size_t on_write(char *p, size_t size, size_t nmemb, void *ud)
{
	sink *s = ud;
	size_t n = size * nmemb;

	if (!s->decided) {
		long st = 0;

		curl_easy_getinfo(s->h, CURLINFO_RESPONSE_CODE, &st);
		s->to_fd = s->fd > 0 && st >= 200 && st < 300;
		s->decided = 1;
	}
	if (s->to_fd) {
		size_t off = 0;

		while (off < n) {
			ssize_t w = write(s->fd, p + off, n - off);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				s->werr = errno ? errno : EIO;
				return 0;
			}
			off += (size_t)w;
		}
		return n;
	}
	if (enpu_buf_add(s->buf, p, n) < 0) {
		s->werr = EFBIG;
		return 0;
	}
	return n;
}

/* curl calls this often (about once a second even when no byte moves), so
 * a long-poll keeps the wait line's seconds ticking too. */
static int on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	const cli_req *r = ud;

	if (r->label && r->upload_file)
		cli_progress_xfer(ulnow > 0 ? (uint64_t)ulnow : 0, ultotal > 0 ? (uint64_t)ultotal : 0);
	else if (r->label)
		cli_progress_xfer(dlnow > 0 ? (uint64_t)dlnow : 0, dltotal > 0 ? (uint64_t)dltotal : 0);
	else
		cli_progress_tick();
	return 0;
}

int cli_http_do(cli_conn *c, const cli_req *r, long *status, enpu_buf *resp, enpu_err *e)
{
	char errbuf[CURL_ERROR_SIZE] = "";
	char *url = NULL;
	struct curl_slist *hdrs = NULL;
	FILE *up = NULL;
	sink s = {c->h, r->out_fd, resp, 0, 0, 0};
	CURLcode rc;
	int ret = -1;
	size_t ulen = strlen(c->base) + strlen(r->path) + 1;

	*status = 0;
	if (resp->cap == 0)
		resp->cap = RESP_CAP;
	url = malloc(ulen);
	if (!url)
		return enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory for a request");
	snprintf(url, ulen, "%s%s", c->base, r->path);

	curl_easy_reset(c->h);
	curl_easy_setopt(c->h, CURLOPT_URL, url);
	if (c->sock)
		curl_easy_setopt(c->h, CURLOPT_UNIX_SOCKET_PATH, c->sock);
	curl_easy_setopt(c->h, CURLOPT_ERRORBUFFER, errbuf);
	if (c->cacert)
		curl_easy_setopt(c->h, CURLOPT_CAINFO, c->cacert);
	curl_easy_setopt(c->h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c->h, CURLOPT_CONNECTTIMEOUT, CONNECT_TIMEOUT);
	if (r->timeout > 0)
		curl_easy_setopt(c->h, CURLOPT_TIMEOUT, r->timeout);
	curl_easy_setopt(c->h, CURLOPT_USERAGENT, "eulernpu/" CLI_VERSION);
	curl_easy_setopt(c->h, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(c->h, CURLOPT_WRITEDATA, &s);
	/* No "Expect: 100-continue" round trip before uploads. */
	hdrs = curl_slist_append(hdrs, "Expect:");
	if (c->auth && !c->sock)
		hdrs = curl_slist_append(hdrs, c->auth);

	if (r->upload_file) {
		struct stat st;

		up = fopen(r->upload_file, "rb");
		if (!up || fstat(fileno(up), &st) < 0) {
			enpu_fail(e, ENPU_E_IO, r->upload_file, NULL, "cannot open '%s': %s",
				  r->upload_file, strerror(errno));
			goto out;
		}
		hdrs = curl_slist_append(hdrs, "Content-Type: application/octet-stream");
		curl_easy_setopt(c->h, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(c->h, CURLOPT_READDATA, up);
		curl_easy_setopt(c->h, CURLOPT_INFILESIZE_LARGE, (curl_off_t)st.st_size);
	} else if (strcmp(r->method, "POST") == 0 || strcmp(r->method, "PUT") == 0) {
		char ct[128];

		snprintf(ct, sizeof ct, "Content-Type: %s",
			 r->content_type ? r->content_type : "application/json");
		hdrs = curl_slist_append(hdrs, ct);
		curl_easy_setopt(c->h, CURLOPT_POSTFIELDS, r->body ? r->body : "");
		curl_easy_setopt(c->h, CURLOPT_POSTFIELDSIZE_LARGE,
				 (curl_off_t)(r->body ? r->body_len : 0));
		if (strcmp(r->method, "PUT") == 0)
			curl_easy_setopt(c->h, CURLOPT_CUSTOMREQUEST, "PUT");
	} else if (strcmp(r->method, "GET") != 0) {
		curl_easy_setopt(c->h, CURLOPT_CUSTOMREQUEST, r->method);
	}
	curl_easy_setopt(c->h, CURLOPT_HTTPHEADER, hdrs);
	if ((r->label && cli_progress_xfer_begin(r->label)) || cli_progress_waiting()) {
		curl_easy_setopt(c->h, CURLOPT_XFERINFOFUNCTION, on_progress);
		curl_easy_setopt(c->h, CURLOPT_XFERINFODATA, (void *)r);
		curl_easy_setopt(c->h, CURLOPT_NOPROGRESS, 0L);
	}

	rc = curl_easy_perform(c->h);
	cli_progress_xfer_end();
	if (rc == CURLE_OK) {
		curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, status);
		ret = 0;
		goto out;
	}
	switch (rc) {
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
		if (c->sock) {
			long oserr = 0;

			curl_easy_getinfo(c->h, CURLINFO_OS_ERRNO, &oserr);
			enpu_fail(e, ENPU_E_UNREACHABLE, c->url, UNREACH_FIX,
				  "no daemon answers on socket '%s': %s", c->sock,
				  oserr ? strerror((int)oserr) : curl_easy_strerror(rc));
		} else {
			enpu_fail(e, ENPU_E_UNREACHABLE, c->url, UNREACH_FIX,
				  "cannot connect to the server: %s",
				  errbuf[0] ? errbuf : curl_easy_strerror(rc));
		}
		break;
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_SSL_CERTPROBLEM:
		enpu_fail(e, ENPU_E_UNREACHABLE, c->url,
			  "pass --cacert FILE (or set EULERNPU_CACERT) naming the CA that signed "
			  "the server's certificate",
			  "cannot make a trusted TLS connection to the server: %s",
			  errbuf[0] ? errbuf : curl_easy_strerror(rc));
		break;
	case CURLE_OPERATION_TIMEDOUT:
		enpu_fail(e, ENPU_E_UNREACHABLE, c->url, UNREACH_FIX,
			  "%s %s: the server did not answer in time", r->method, r->path);
		break;
	case CURLE_WRITE_ERROR:
		enpu_fail(e, s.werr == EFBIG ? ENPU_E_SERVER : ENPU_E_IO, c->url, NULL,
			  "%s %s: cannot store the answer: %s", r->method, r->path,
			  s.werr == EFBIG ? "too large" : strerror(s.werr));
		break;
	case CURLE_READ_ERROR:
		enpu_fail(e, ENPU_E_IO, r->upload_file, NULL, "cannot read '%s' while uploading it",
			  r->upload_file ? r->upload_file : "(body)");
		break;
	default:
		enpu_fail(e, ENPU_E_SERVER, c->url, NULL, "%s %s failed: %s", r->method, r->path,
			  errbuf[0] ? errbuf : curl_easy_strerror(rc));
		break;
	}
out:
	if (up)
		fclose(up);
	curl_slist_free_all(hdrs);
	free(url);
	return ret;
}

static struct json_object *parse_json(const enpu_buf *b)
{
	struct json_tokener *tok;
	struct json_object *o;

	if (!b->data || b->len == 0 || b->len > (size_t)0x7fffffff)
		return NULL;
	tok = json_tokener_new();
	if (!tok)
		return NULL;
	o = json_tokener_parse_ex(tok, b->data, (int)b->len);
	if (json_tokener_get_error(tok) != json_tokener_success) {
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	return o;
}

int cli_http_fail(cli_conn *c, long status, const enpu_buf *resp, enpu_err *e)
{
	struct json_object *o = parse_json(resp), *err;

	if (o && json_object_object_get_ex(o, "error", &err) &&
	    json_object_is_type(err, json_type_object)) {
		cli_err_from_json(err, e);
	} else {
		enpu_fail(e, ENPU_E_SERVER, c->url, NULL,
			  "the server answered HTTP %ld without an error body", status);
	}
	json_object_put(o);
	return -1;
}

int cli_http_json(cli_conn *c, const char *method, const char *path,
		  struct json_object *body, long timeout, struct json_object **out,
		  long *out_status, struct json_object **err_body, enpu_err *e)
{
	enpu_buf resp = ENPU_BUF_INIT;
	cli_req r = {0};
	long status;
	const char *txt = NULL;
	int ret = -1;

	if (out)
		*out = NULL;
	if (err_body)
		*err_body = NULL;
	if (body)
		txt = json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN |
						     JSON_C_TO_STRING_NOSLASHESCAPE);
	r.method = method;
	r.path = path;
	r.body = txt;
	r.body_len = txt ? strlen(txt) : 0;
	r.timeout = timeout;
	if (cli_http_do(c, &r, &status, &resp, e) < 0)
		goto out;
	if (out_status)
		*out_status = status;
	if (status < 200 || status >= 300) {
		cli_http_fail(c, status, &resp, e);
		if (err_body)
			*err_body = parse_json(&resp);
		goto out;
	}
	if (out) {
		*out = parse_json(&resp);
		if (!*out || !json_object_is_type(*out, json_type_object)) {
			json_object_put(*out);
			*out = NULL;
			enpu_fail(e, ENPU_E_SERVER, c->url, NULL,
				  "%s %s: the answer is not a JSON object", method, path);
			goto out;
		}
	}
	ret = 0;
out:
	enpu_buf_free(&resp);
	return ret;
}

int cli_http_download(cli_conn *c, const char *path, const char *dest,
		      const char *sha256, long timeout, enpu_err *e)
{
	enpu_buf resp = ENPU_BUF_INIT;
	char *dcopy = NULL, *bcopy = NULL, *tmp = NULL;
	char got[65];
	cli_req r = {0};
	long status;
	int fd = -1, ret = -1;
	size_t n;

	dcopy = strdup(dest);
	bcopy = strdup(dest);
	n = strlen(dest) + 32;
	tmp = malloc(n);
	if (!dcopy || !bcopy || !tmp) {
		enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory for '%s'", dest);
		goto out;
	}
	snprintf(tmp, n, "%s/.%s.tmp.XXXXXX", dirname(dcopy), basename(bcopy));
	fd = mkstemp(tmp);
	if (fd < 0) {
		enpu_fail(e, ENPU_E_IO, dest, NULL, "cannot create a file next to '%s': %s",
			  dest, strerror(errno));
		goto out;
	}
	r.method = "GET";
	r.path = path;
	r.out_fd = fd;
	r.timeout = timeout;
	r.label = dest;
	if (cli_http_do(c, &r, &status, &resp, e) < 0)
		goto out;
	if (status < 200 || status >= 300) {
		cli_http_fail(c, status, &resp, e);
		goto out;
	}
	if (fsync(fd) < 0 || close(fd) < 0) {
		fd = -1;
		enpu_fail(e, ENPU_E_IO, dest, NULL, "cannot write '%s': %s", dest, strerror(errno));
		goto out;
	}
	fd = -1;
	if (sha256) {
		if (enpu_sha256_file(tmp, got, e) < 0)
			goto out;
		if (strcmp(got, sha256) != 0) {
			enpu_fail(e, ENPU_E_ARTIFACT_DIGEST, path, NULL,
				  "downloaded bytes hash to %.12s…, the server listed %.12s…",
				  got, sha256);
			goto out;
		}
	}
	if (rename(tmp, dest) < 0) {
		enpu_fail(e, ENPU_E_IO, dest, NULL, "cannot rename into '%s': %s", dest,
			  strerror(errno));
		goto out;
	}
	tmp[0] = '\0';
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	if (tmp && tmp[0] && ret < 0)
		unlink(tmp);
	free(tmp);
	free(dcopy);
	free(bcopy);
	enpu_buf_free(&resp);
	return ret;
}

int cli_http_health(cli_conn *c, enpu_err *e)
{
	enpu_buf resp = ENPU_BUF_INIT;
	cli_req r = {0};
	long status;
	int ret;

	r.method = "GET";
	r.path = "/v1/health";
	r.timeout = 5;
	ret = cli_http_do(c, &r, &status, &resp, e);
	if (ret == 0 && status != 200)
		ret = enpu_fail(e, ENPU_E_UNREACHABLE, c->url, NULL,
				"health check answered HTTP %ld", status);
	enpu_buf_free(&resp);
	return ret;
}

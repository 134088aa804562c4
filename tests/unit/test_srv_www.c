/* test_srv_www.c: the status page's files (routes_www.c): which files of
 * --www DIR are taken and which refused, and what GET / and GET /ui/{file}
 * answer through the real HTTP layer (an in-process daemon on 127.0.0.1
 * with a token table): the bytes, content types, the security headers,
 * the ETag and If-None-Match (exact, in a list, weak, "*", stale), 404 for
 * names outside the set (traversal, encodings, subdirectories), HEAD, no
 * token needed while /v1/jobs still asks for one, and no page at all. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <curl/curl.h>
#include <json-c/json.h>
#include "srv.h"
#include "http.h"
#include "routes.h"
#include "metrics.h"
#include "digest.h"
#include "daemon.h"

#define TOKEN_USER "www-user-31c9d0e2aa"

static char tmp[256], dir[300];
static srv_ctx ctx;
static struct MHD_Daemon *mhd;
static int port;

static const char index_html[] = "<!doctype html><title>t</title><script src=/ui/app.js></script>\n";
static const char app_js[] = "'use strict'; console.log('app');\n";
static const char style_css[] = "body { color: #111; }\n";
/* routes_www.c's policy, written out again: a change must change both */
static const char csp[] =
	"default-src 'self'; img-src 'self' data: blob:; style-src 'self'; script-src 'self'; "
	"connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
	"form-action 'self'";

static void put_file(const char *d, const char *name, const void *p, size_t n)
{
	char path[600];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", d, name);
	f = fopen(path, "wb");
	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	cr_assert_eq(fwrite(p, 1, n, f), n);
	cr_assert_eq(fclose(f), 0);
}

/* A page directory: three files and a link to one, names that are not a
 * page file's, a subdirectory with a page file's name. */
static void make_dir(void)
{
	const char *base = getenv("TMPDIR");
	char sub[400];

	snprintf(tmp, sizeof tmp, "%.200s/enpu-www.XXXXXX", base && *base ? base : "/tmp");
	cr_assert_not_null(mkdtemp(tmp));
	snprintf(dir, sizeof dir, "%s/www", tmp);
	cr_assert_eq(mkdir(dir, 0700), 0);
	put_file(dir, "index.html", index_html, strlen(index_html));
	put_file(dir, "app.js", app_js, strlen(app_js));
	put_file(dir, "style.css", style_css, strlen(style_css));
	put_file(dir, "Secret.JS", "no", 2);          /* upper case: not a page name */
	put_file(dir, ".hidden.js", "no", 2);
	put_file(dir, "notes.md", "no", 2);           /* no page extension */
	put_file(dir, "_x.js", "no", 2);              /* starts with neither letter nor digit */
	put_file(dir, "-x.js", "no", 2);
	put_file(dir, "js", "no", 2);                 /* an extension and no name */
	snprintf(sub, sizeof sub, "%s/link.js", dir);  /* a link to a regular file is taken */
	cr_assert_eq(symlink("app.js", sub), 0, "%s", strerror(errno));
	snprintf(sub, sizeof sub, "%s/sub.js", dir);   /* a directory with a page name */
	cr_assert_eq(mkdir(sub, 0700), 0);
	put_file(sub, "x.js", "no", 2);
}

static void stop(void)
{
	if (mhd) {
		int s = srv_http_quiesce(mhd);
		if (s >= 0)
			close(s);
		srv_http_stop(mhd);
		mhd = NULL;
	}
	srv_www_free(ctx.www);
	ctx.www = NULL;
	srv_auth_shutdown(&ctx);
	curl_global_cleanup();
	srv_log_close();
	if (tmp[0])
		srv_rmtree(tmp);
	tmp[0] = '\0';
}

/* The daemon, with the page of make_dir (page = 1) or none. */
static void start(int page)
{
	enpu_err e = ENPU_ERR_INIT;
	struct sockaddr_in sa;
	socklen_t len = sizeof sa;
	char tokens[400], logp[400];
	int fd;

	memset(&ctx, 0, sizeof ctx);
	make_dir();
	snprintf(logp, sizeof logp, "%s/log", tmp);
	cr_assert_eq(srv_log_open(logp), 0);
	srv_log_set_level("error");
	curl_global_init(CURL_GLOBAL_DEFAULT);
	snprintf(tokens, sizeof tokens, "%s/tokens", tmp);
	put_file(tmp, "tokens", TOKEN_USER " user alice\n", strlen(TOKEN_USER " user alice\n"));
	chmod(tokens, 0600);
	srv_config_defaults(&ctx.cfg);
	ctx.cfg.listen = "127.0.0.1:0";
	ctx.cfg.tokens_file = tokens;
	ctx.cfg.conn_timeout = 10;
	ctx.lim = &ctx.cfg.limits;
	cr_assert_eq(srv_auth_load(&ctx, &e), 0, "%s", e.message);
	if (page) {
		ctx.www = srv_www_load(dir, &e);
		cr_assert_not_null(ctx.www, "%s", e.message);
	}
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert(fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 && listen(fd, 16) == 0 &&
		  getsockname(fd, (struct sockaddr *)&sa, &len) == 0, "listen: %s", strerror(errno));
	port = ntohs(sa.sin_port);
	mhd = srv_http_start(&ctx, fd);
	cr_assert_not_null(mhd);
}

typedef struct reply {
	long status;
	char body[8192];
	size_t len;
	char headers[8192];
	size_t hlen;
} reply;

/* curl's callbacks: the body and the header lines, each kept up to its
 * buffer's size (less a NUL, which memset in get put there). */
static size_t keep(char *buf, size_t cap, size_t *len, const char *p, size_t k)
{
	size_t take = k < cap - 1 - *len ? k : cap - 1 - *len;

	memcpy(buf + *len, p, take);
	*len += take;
	return k;
}

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
	reply *r = arg;
	return keep(r->body, sizeof r->body, &r->len, p, size * n);
}

static size_t on_header(char *p, size_t size, size_t n, void *arg)
{
	reply *r = arg;
	return keep(r->headers, sizeof r->headers, &r->hlen, p, size * n);
}

/* GET (or HEAD) path with one extra header line (or NULL). */
static void get(const char *method, const char *path, const char *hdr, reply *r)
{
	CURL *c = curl_easy_init();
	struct curl_slist *h = hdr ? curl_slist_append(NULL, hdr) : NULL;
	char url[1200];
	CURLcode rc;

	memset(r, 0, sizeof *r);
	snprintf(url, sizeof url, "http://127.0.0.1:%d%s", port, path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PATH_AS_IS, 1L);   /* send "/ui/../x" as it is */
	if (!strcmp(method, "HEAD"))
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
	rc = curl_easy_perform(c);
	if (rc == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	cr_assert_eq(rc, CURLE_OK, "%s %s: %s", method, path, curl_easy_strerror(rc));
}

/* The value of header name in r ("" when absent), into out. */
static const char *header(const reply *r, const char *name, char *out, size_t cap)
{
	size_t n = strlen(name);

	out[0] = '\0';
	for (const char *p = r->headers; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p)) {
		if (!strncasecmp(p, name, n) && p[n] == ':') {
			const char *v = p + n + 1;
			size_t k;
			v += strspn(v, " ");
			k = strcspn(v, "\r\n");
			snprintf(out, cap, "%.*s", (int)(k < cap ? k : cap - 1), v);
			break;
		}
	}
	return out;
}

TestSuite(www, .fini = stop);

Test(www, serves_the_files_as_they_are)
{
	static const struct { const char *path, *body, *type; } want[] = {
		{"/", index_html, "text/html; charset=utf-8"},
		{"/ui/index.html", index_html, "text/html; charset=utf-8"},
		{"/ui/app.js", app_js, "text/javascript; charset=utf-8"},
		{"/ui/style.css", style_css, "text/css; charset=utf-8"},
		{"/ui/link.js", app_js, "text/javascript; charset=utf-8"},
	};
	reply r;
	char v[1024];

	start(1);
	cr_expect_eq(srv_www_count(ctx.www), 4, "index.html, app.js, style.css, link.js taken, the "
		     "rest left out: %d", srv_www_count(ctx.www));
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		get("GET", want[i].path, NULL, &r);
		cr_expect_eq(r.status, 200, "%s: %ld", want[i].path, r.status);
		cr_expect(r.len == strlen(want[i].body) && !memcmp(r.body, want[i].body, r.len),
			  "%s: the file's bytes", want[i].path);
		cr_expect_str_eq(header(&r, "Content-Type", v, sizeof v), want[i].type, "%s", want[i].path);
		cr_expect_str_eq(header(&r, "Cache-Control", v, sizeof v), "no-cache");
		cr_expect_str_eq(header(&r, "X-Content-Type-Options", v, sizeof v), "nosniff");
		cr_expect_str_eq(header(&r, "Referrer-Policy", v, sizeof v), "no-referrer");
		cr_expect_str_eq(header(&r, "Content-Security-Policy", v, sizeof v), csp, "%s",
				 want[i].path);
	}
}

Test(www, etag_and_if_none_match)
{
	reply r;
	char tag[128], other[128], h[300], v[256], hex[65], want[40];

	start(1);
	get("GET", "/ui/app.js", NULL, &r);
	header(&r, "ETag", tag, sizeof tag);
	enpu_sha256_hex(app_js, strlen(app_js), hex);
	snprintf(want, sizeof want, "\"%.32s\"", hex);
	cr_assert_str_eq(tag, want, "the first 32 hex digits of the file's SHA-256, quoted");
	get("GET", "/ui/app.js", NULL, &r);
	cr_expect_str_eq(header(&r, "ETag", v, sizeof v), tag, "the same file, the same tag");
	get("GET", "/ui/style.css", NULL, &r);
	header(&r, "ETag", other, sizeof other);
	cr_expect_str_neq(other, tag, "another file, another tag");

	const char *fresh[] = {"%s", "\"0000\", %s", "\"0000\",%s , \"1111\"", "W/%s", "*"};
	for (size_t i = 0; i < sizeof fresh / sizeof fresh[0]; i++) {
		char val[200];
		snprintf(val, sizeof val, fresh[i], tag);
		snprintf(h, sizeof h, "If-None-Match: %s", val);
		get("GET", "/ui/app.js", h, &r);
		cr_expect_eq(r.status, 304, "If-None-Match: %s -> %ld", val, r.status);
		cr_expect_eq(r.len, 0, "a 304 has no body");
		cr_expect_str_eq(header(&r, "ETag", v, sizeof v), tag, "a 304 names its tag");
	}
	snprintf(h, sizeof h, "If-None-Match: %s", other);
	get("GET", "/ui/app.js", h, &r);
	cr_expect_eq(r.status, 200, "another file's tag is stale: %ld", r.status);
	snprintf(h, sizeof h, "If-None-Match: %.33s", tag);   /* a tag cut short */
	get("GET", "/ui/app.js", h, &r);
	cr_expect_eq(r.status, 200, "a prefix of the tag is not the tag: %ld", r.status);
	snprintf(h, sizeof h, "If-None-Match: %sx", tag);     /* a longer one */
	get("GET", "/ui/app.js", h, &r);
	cr_expect_eq(r.status, 200, "the tag and more is not the tag: %ld", r.status);
	cr_expect(r.len == strlen(app_js) && !memcmp(r.body, app_js, r.len), "a 200 has the file");
}

Test(www, nothing_outside_the_set)
{
	static const char *const paths[] = {
		"/ui/Secret.JS", "/ui/.hidden.js", "/ui/notes.md", "/ui/_x.js", "/ui/-x.js", "/ui/js",
		"/ui/sub.js", "/ui/sub.js/x.js", "/ui/APP.JS", "/ui/app.js/", "/ui//app.js",
		"/ui/a/b", "/ui/../www/app.js", "/ui/%2e%2e%2fapp.js", "/ui/..%2ftokens",
		"/ui/%2e%2e/tokens", "/ui/app.js%00", "/ui/", "/ui", "/ui/tokens", "/ui/..",
		"/index.html", "/app.js",
	};
	reply r;
	char v[256];

	start(1);
	for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
		get("GET", paths[i], NULL, &r);
		cr_expect(r.status == 404 || r.status == 400, "%s -> %ld", paths[i], r.status);
		cr_expect(strstr(r.body, "\"error\"") != NULL, "%s: an error, never a file's bytes: %s",
			  paths[i], r.body);
	}
	get("GET", "/ui/%61pp.js", NULL, &r);   /* an escaped letter is the letter */
	cr_expect(r.status == 200 && r.len == strlen(app_js), "/ui/%%61pp.js: %ld", r.status);
	get("GET", "/ui/nope.js", NULL, &r);
	cr_expect_eq(r.status, 404);
	cr_expect(strstr(r.body, "E0800") && strstr(r.body, "nope.js"), "the usual 404 error: %s",
		  r.body);
	cr_expect_str_eq(header(&r, "Content-Type", v, sizeof v), "application/json");
}

/* A raw request (curl never shows a body a HEAD answer should not have):
 * the whole answer, until the server closes, into out. */
static size_t raw(const char *request, char *out, size_t cap)
{
	struct sockaddr_in sa;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	size_t len = 0;
	ssize_t k;

	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)port);
	cr_assert(fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0, "%s", strerror(errno));
	cr_assert_eq(write(fd, request, strlen(request)), (ssize_t)strlen(request));
	while (len < cap - 1 && (k = read(fd, out + len, cap - 1 - len)) > 0)
		len += (size_t)k;
	out[len] = '\0';
	close(fd);
	return len;
}

Test(www, head_public_and_private)
{
	char ans[4096], want[64];
	const char *end;
	size_t n;

	start(1);
	n = raw("HEAD / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", ans, sizeof ans);
	end = strstr(ans, "\r\n\r\n");
	cr_assert_not_null(end, "an answer: %s", ans);
	cr_expect(!strncmp(ans, "HTTP/1.1 200", 12), "HEAD / without a token: %.40s", ans);
	cr_expect_eq(n, (size_t)(end + 4 - ans), "HEAD: nothing after the headers: %s", end + 4);
	snprintf(want, sizeof want, "\r\nContent-Length: %zu\r\n", strlen(index_html));
	cr_expect(strstr(ans, want) != NULL, "its length all the same: %s", ans);
	cr_expect(strstr(ans, "\r\nETag: \"") != NULL, "and its tag: %s", ans);

	reply r;
	get("GET", "/ui/app.js", NULL, &r);
	cr_expect_eq(r.status, 200, "no token needed for the page's files");
	get("GET", "/v1/jobs", NULL, &r);
	cr_expect_eq(r.status, 401, "the API still asks for one: %ld", r.status);
}

/* The field of body's {"error": {...}}, or "" */
static const char *error_field(const char *body, const char *field, char *out, size_t cap)
{
	json_object *j = json_tokener_parse(body), *err, *v;

	out[0] = '\0';
	if (j && json_object_object_get_ex(j, "error", &err) &&
	    json_object_object_get_ex(err, field, &v))
		snprintf(out, cap, "%s", json_object_get_string(v));
	json_object_put(j);
	return out;
}

Test(www, no_page)
{
	static const char *const paths[] = {"/", "/ui/app.js", "/ui/index.html"};
	reply r;
	char v[512];

	start(0);
	for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
		get("GET", paths[i], NULL, &r);
		cr_expect_eq(r.status, 404, "%s: %ld", paths[i], r.status);
		cr_expect_str_eq(error_field(r.body, "code", v, sizeof v), "E0800", "%s", r.body);
		cr_expect(strstr(error_field(r.body, "fix", v, sizeof v), "--www DIR") != NULL,
			  "the fix says how to have a page: %s", r.body);
		cr_expect_str_eq(header(&r, "ETag", v, sizeof v), "", "no tag without a file");
	}
}

Test(www, refused_directories)
{
	enpu_err e = ENPU_ERR_INIT;
	char path[400];
	srv_www *w;

	make_dir();
	snprintf(path, sizeof path, "%s/index.html", dir);
	cr_assert_eq(unlink(path), 0);
	w = srv_www_load(dir, &e);
	cr_expect_null(w, "no index.html: refused");
	cr_expect_eq(e.code, ENPU_E_CONFIG);
	cr_expect(strstr(e.message, "index.html") != NULL, "%s", e.message);
	srv_www_free(w);

	e = (enpu_err)ENPU_ERR_INIT;
	snprintf(path, sizeof path, "%s/missing", tmp);
	w = srv_www_load(path, &e);
	cr_expect_null(w, "a directory that is not there: refused");
	cr_expect_eq(e.code, ENPU_E_CONFIG);
	srv_www_free(w);

	/* SRV_WWW_MAX_FILES files: taken at the bound (the four of make_dir and
	 * more), refused one past it; the files left out do not count */
	put_file(dir, "index.html", index_html, strlen(index_html));
	for (int i = 4; i <= SRV_WWW_MAX_FILES; i++) {
		char name[32];
		snprintf(name, sizeof name, "f%d.txt", i);
		e = (enpu_err)ENPU_ERR_INIT;
		w = srv_www_load(dir, &e);
		cr_expect_not_null(w, "%d files: taken (%s)", i, e.message);
		cr_expect_eq(srv_www_count(w), i);
		srv_www_free(w);
		put_file(dir, name, "x", 1);
	}
	e = (enpu_err)ENPU_ERR_INIT;
	w = srv_www_load(dir, &e);
	cr_expect_null(w, "%d files: refused", SRV_WWW_MAX_FILES + 1);
	cr_expect_eq(e.code, ENPU_E_CONFIG);
	cr_expect(strstr(e.message, "files") && strstr(e.message, dir), "names the bound and the "
		  "directory: %s", e.message);
	srv_www_free(w);

	/* SRV_WWW_MAX_BYTES in all: taken at the bound, refused a byte past it,
	 * with no one file past it */
	srv_rmtree(tmp);
	make_dir();
	size_t half = SRV_WWW_MAX_BYTES / 2, rest = SRV_WWW_MAX_BYTES - half -
		strlen(index_html) - 2 * strlen(app_js) - strlen(style_css);   /* link.js too */
	char *fill = malloc(half);
	cr_assert_not_null(fill);
	memset(fill, 'x', half);
	put_file(dir, "a.txt", fill, half);
	put_file(dir, "b.txt", fill, rest);
	e = (enpu_err)ENPU_ERR_INIT;
	w = srv_www_load(dir, &e);
	cr_expect_not_null(w, "exactly %d bytes: taken (%s)", SRV_WWW_MAX_BYTES, e.message);
	srv_www_free(w);
	put_file(dir, "b.txt", fill, rest + 1);
	free(fill);
	e = (enpu_err)ENPU_ERR_INIT;
	w = srv_www_load(dir, &e);
	cr_expect_null(w, "%d bytes and one: refused", SRV_WWW_MAX_BYTES);
	cr_expect_eq(e.code, ENPU_E_CONFIG);
	cr_expect(strstr(e.message, "bytes") && strstr(e.message, dir), "names the bound and the "
		  "directory: %s", e.message);
	srv_www_free(w);
}

/* --help gives the bounds as written in routes.h. */
Test(www_help, gives_the_bounds, .init = cr_redirect_stdout)
{
	char *argv[] = {"eulernpud", "--help", NULL}, want[80], text[16384];
	srv_config c;
	FILE *out;
	size_t n;

	srv_opts_defaults(&c);
	cr_assert_eq(srv_opts_parse(2, argv, &c), 1, "--help: printed, done");
	fflush(stdout);
	out = cr_get_redirected_stdout();
	n = fread(text, 1, sizeof text - 1, out);
	text[n] = '\0';
	snprintf(want, sizeof want, "at most %d files, %d MiB in all", SRV_WWW_MAX_FILES,
		 SRV_WWW_MAX_BYTES >> 20);
	cr_expect(strstr(text, "--www DIR") && strstr(text, want), "--help says '%s'", want);
}

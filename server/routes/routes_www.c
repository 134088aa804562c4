/* routes_www.c: the status page: GET / (index.html) and GET /ui/{file},
 * the files of --www DIR (server/www/ in the source tree, installed in
 * share/eulernpu/www). They are read once, at start-up, into memory, with
 * their content type and an ETag; a request only ever looks a name up in
 * that table, so no path a client sends reaches the file system. The page
 * holds no data (its calls carry the user's token), so both routes are
 * public; each answer forbids everything but its own origin (CSP). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "srv.h"
#include "api.h"
#include "buf.h"
#include "digest.h"
#include "routes.h"

#define WWW_NAME_MAX 64     /* a file name's bytes, with its NUL */

typedef struct www_file {
	char name[WWW_NAME_MAX];
	const char *type;
	char etag[35];          /* "<32 hex of its SHA-256>", with the quotes */
	char *data;
	size_t len;
} www_file;

struct srv_www {
	www_file f[SRV_WWW_MAX_FILES];   /* sorted by name (bsearch) */
	int n;
	size_t bytes;
};

static const char csp[] =
	"default-src 'self'; img-src 'self' data: blob:; style-src 'self'; script-src 'self'; "
	"connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
	"form-action 'self'";

static const char fix_dir[] = "give --www the page's directory (server/www in the source "
			      "tree), or --www none";

/* The content type of a name the page may hold ([a-z0-9][a-z0-9._-]* with
 * a known extension), or NULL: nothing else is ever served, so a name
 * needs no escaping anywhere. */
static const char *www_type(const char *name)
{
	static const char *const types[][2] = {
		{".html", "text/html; charset=utf-8"}, {".css", "text/css; charset=utf-8"},
		{".js", "text/javascript; charset=utf-8"}, {".svg", "image/svg+xml"},
		{".png", "image/png"}, {".ico", "image/x-icon"}, {".txt", "text/plain; charset=utf-8"},
	};
	size_t n = strlen(name);

	if (n >= WWW_NAME_MAX || !strchr("abcdefghijklmnopqrstuvwxyz0123456789", name[0]) ||
	    strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789._-") != n)
		return NULL;
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
		size_t k = strlen(types[i][0]);
		if (n > k && !strcmp(name + n - k, types[i][0]))
			return types[i][1];
	}
	return NULL;
}

void srv_www_free(srv_www *w)
{
	if (!w)
		return;
	for (int i = 0; i < w->n; i++)
		free(w->f[i].data);
	free(w);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const www_file *)a)->name, ((const www_file *)b)->name);
}

static const www_file *www_find(const srv_www *w, const char *name)
{
	www_file key;

	if (!w || !name || strlen(name) >= sizeof key.name)
		return NULL;
	snprintf(key.name, sizeof key.name, "%s", name);
	return bsearch(&key, w->f, (size_t)w->n, sizeof w->f[0], by_name);
}

/* Entry name of dir into w when it is a page file (a regular file, or a
 * link to one, with a page name): 0 (taken or left out, the latter logged
 * at debug), or -1 with *e past a bound or when it cannot be read. */
static int www_take(srv_www *w, const char *dir, const char *name, enpu_err *e)
{
	const char *type = www_type(name);
	enpu_buf b = ENPU_BUF_INIT;
	char path[PATH_MAX], hex[65];
	struct stat st;
	www_file *f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	if (!type || stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
		srv_log("debug", "www: '%s' left out (%s)", path, type ? "not a regular file" :
			"not a page file's name: [a-z0-9][a-z0-9._-]*.html|css|js|svg|png|ico|txt");
		return 0;
	}
	if (w->n == SRV_WWW_MAX_FILES)
		return enpu_fail(e, ENPU_E_CONFIG, "--www", fix_dir, "'%s' holds more than %d page "
				 "files", dir, SRV_WWW_MAX_FILES);
	if (enpu_read_file(path, SRV_WWW_MAX_BYTES - w->bytes, &b, e) != 0) {
		enpu_buf_free(&b);   /* what it read before the bound */
		if (e->code == ENPU_E_LIMIT)
			enpu_fail(e, ENPU_E_CONFIG, "--www", fix_dir, "the page files of '%s' come to "
				  "more than %d bytes (%d MiB)", dir, SRV_WWW_MAX_BYTES,
				  SRV_WWW_MAX_BYTES >> 20);
		else
			e->code = ENPU_E_CONFIG;
		return -1;
	}
	f = &w->f[w->n++];
	snprintf(f->name, sizeof f->name, "%s", name);
	f->type = type;
	f->data = enpu_buf_detach(&b, &f->len);
	enpu_sha256_hex(f->data, f->len, hex);
	snprintf(f->etag, sizeof f->etag, "\"%.32s\"", hex);   /* strong: the bytes' own */
	w->bytes += f->len;
	return 0;
}

srv_www *srv_www_load(const char *dir, enpu_err *e)
{
	srv_www *w = calloc(1, sizeof *w);
	struct dirent *de;
	DIR *d;
	int rc = 0;

	if (!w) {
		enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
		return NULL;
	}
	d = opendir(dir);
	if (!d) {
		enpu_fail(e, ENPU_E_CONFIG, "--www", fix_dir, "cannot read the status page's "
			  "directory '%s': %s", dir, strerror(errno));
		free(w);
		return NULL;
	}
	while (rc == 0 && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			rc = www_take(w, dir, de->d_name, e);
	closedir(d);
	qsort(w->f, (size_t)w->n, sizeof w->f[0], by_name);
	if (rc == 0 && !www_find(w, "index.html"))
		rc = enpu_fail(e, ENPU_E_CONFIG, "--www", fix_dir, "'%s' has no index.html", dir);
	if (rc != 0) {
		srv_www_free(w);
		return NULL;
	}
	return w;
}

int srv_www_count(const srv_www *w)
{
	return w ? w->n : 0;
}

/* s, past blanks, ends an If-None-Match item. */
static int item_ends(const char *s)
{
	s += strspn(s, " \t");
	return *s == ',' || *s == '\0';
}

/* If-None-Match names the file's tag: "*", or a comma list of tags, weak
 * ones (W/) compared weakly (RFC 9110 13.1.2: a GET compares weakly). */
static int not_modified(const char *inm, const char *etag)
{
	size_t n = strlen(etag);

	for (const char *p = inm; p && *p; p += strcspn(p, ",")) {
		p += strspn(p, " \t,");
		if (!strncmp(p, "W/", 2))
			p += 2;
		if ((*p == '*' && item_ends(p + 1)) || (!strncmp(p, etag, n) && item_ends(p + n)))
			return 1;
	}
	return 0;
}

/* The headers of every page answer, 304s too: the tag to ask again with,
 * ask each time (no-cache: a new daemon may serve a new page), and the
 * policy that keeps the page to this origin. */
static void www_headers(srv_req *r, const www_file *f)
{
	srv_reply_header(r, "ETag", f->etag);
	srv_reply_header(r, "Cache-Control", "no-cache");
	srv_reply_header(r, "Content-Security-Policy", csp);
	srv_reply_header(r, "X-Content-Type-Options", "nosniff");
	srv_reply_header(r, "Referrer-Policy", "no-referrer");
}

static void serve(srv_ctx *ctx, srv_req *r, const char *name)
{
	const www_file *f = www_find(ctx->www, name);
	enpu_err e = ENPU_ERR_INIT;

	if (!ctx->www) {
		enpu_fail(&e, ENPU_E_NOT_FOUND, NULL, "start eulernpud with --www DIR (server/www in "
			  "the source tree)", "this server has no status page (--www none, or no "
			  "www directory beside the program)");
		srv_reply_error(r, &e, NULL);
		return;
	}
	if (!f) {
		srv_reply_fail(r, ENPU_E_NOT_FOUND, NULL, "the status page has no file '%.64s'", name);
		return;
	}
	if (not_modified(srv_req_header(r, "If-None-Match"), f->etag))
		srv_reply_bytes(r, 304, "", 0, f->type);
	else
		srv_reply_bytes(r, 200, f->data, f->len, f->type);
	www_headers(r, f);
}

void srv_get_www_index(srv_ctx *ctx, srv_req *r)
{
	serve(ctx, r, "index.html");
}

void srv_get_www_file(srv_ctx *ctx, srv_req *r)
{
	serve(ctx, r, srv_req_param(r, 0));
}

/* The default --www: beside the program, installed (BINDIR/../share/
 * eulernpu/www) or in the source tree (bin/../server/www); NULL if neither
 * has an index.html. */
const char *srv_www_default_dir(void)
{
	static const char *const rel[] = {"/../share/eulernpu/www", "/../server/www"};
	static char out[PATH_MAX];
	char exe[PATH_MAX], probe[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	char *slash;

	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
		snprintf(probe, sizeof probe, "%s%s/index.html", exe, rel[i]);
		if (access(probe, R_OK) == 0) {
			probe[strlen(probe) - strlen("/index.html")] = '\0';
			return realpath(probe, out);   /* without "bin/..": for the log */
		}
	}
	return NULL;
}

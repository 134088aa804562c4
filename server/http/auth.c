/* auth.c: bearer tokens. The token table (--tokens, --token-file) is kept
 * as SHA-256 digests and checked against every entry with CRYPTO_memcmp, so
 * neither the tokens' lengths nor the position of a match show in timing.
 * SIGHUP swaps in a fresh table under a rwlock. Tokens are never logged. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include "srv.h"
#include "buf.h"
#include "http.h"

#define TOKENS_MAX_BYTES (1u << 20)
#define TOKENS_MAX 4096

typedef struct tok {
	unsigned char d[32];
	int role;                  /* SRV_ROLE_USER or SRV_ROLE_ADMIN */
	char name[64];
} tok;

struct srv_auth {
	tok *t;
	int n;
	int all_listeners;         /* --token-file: Unix sockets too */
};

static pthread_rwlock_t auth_mu = PTHREAD_RWLOCK_INITIALIZER;

static int sha256(const char *s, size_t n, unsigned char out[32])
{
	unsigned int len = 0;

	return EVP_Digest(s, n, out, &len, EVP_sha256(), NULL) == 1 && len == 32 ? 0 : -1;
}

static int add_token(srv_auth *a, const char *t, size_t n, int role, const char *name)
{
	tok *nt;

	if (a->n == TOKENS_MAX)
		return -1;
	nt = realloc(a->t, (size_t)(a->n + 1) * sizeof *nt);
	if (!nt)
		return -1;
	a->t = nt;
	memset(&a->t[a->n], 0, sizeof a->t[a->n]);
	if (sha256(t, n, a->t[a->n].d) != 0)
		return -1;
	a->t[a->n].role = role;
	snprintf(a->t[a->n].name, sizeof a->t[a->n].name, "%s", name);
	a->n++;
	return 0;
}

/* The next whitespace-separated word of [*p, end). */
static int word(const char **p, const char *end, const char **w, size_t *n)
{
	const char *s = *p;

	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	*w = s;
	while (s < end && *s != ' ' && *s != '\t')
		s++;
	*n = (size_t)(s - *w);
	*p = s;
	return *n > 0;
}

/* The name of a token without one: "token-" and the first 12 hex digits of
 * its SHA-256. It owns jobs and blobs, so it must not move to another token
 * when lines are added or removed (a line number would). */
static int unnamed(const char *t, size_t n, char *name, size_t cap)
{
	unsigned char d[32];

	if (sha256(t, n, d) != 0)
		return -1;
	snprintf(name, cap, "token-%02x%02x%02x%02x%02x%02x", d[0], d[1], d[2], d[3], d[4], d[5]);
	OPENSSL_cleanse(d, sizeof d);
	return 0;
}

srv_auth *srv_auth_parse(const char *text, size_t len, const char *label, enpu_err *e)
{
	srv_auth *a = calloc(1, sizeof *a);
	const char *p = text, *end = text + len;
	char where[600], name[64];
	int line = 0;

	if (!a) {
		enpu_fail(e, ENPU_E_NOMEM, label, NULL, "out of memory reading tokens");
		return NULL;
	}
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end, *q = p, *tw, *rw, *nw;
		size_t tn, rn, nn, i;
		int role;

		line++;
		snprintf(where, sizeof where, "%s:%d", label, line);
		if (le > p && le[-1] == '\r')
			le--;
		if (!word(&q, le, &tw, &tn) || tw[0] == '#') {
			p = nl ? nl + 1 : end;
			continue;
		}
		for (i = 0; i < tn; i++)
			if ((unsigned char)tw[i] < 0x21 || (unsigned char)tw[i] == 0x7f)
				break;
		if (i < tn) {
			enpu_fail(e, ENPU_E_CONFIG, where, "write each token as printable characters",
				  "the token has a control character");
			goto fail;
		}
		if (!word(&q, le, &rw, &rn)) {
			enpu_fail(e, ENPU_E_CONFIG, where, "write lines as 'TOKEN ROLE [NAME]'",
				  "the line has a token but no role (user or admin)");
			goto fail;
		}
		if (rn == 4 && !strncmp(rw, "user", 4))
			role = SRV_ROLE_USER;
		else if (rn == 5 && !strncmp(rw, "admin", 5))
			role = SRV_ROLE_ADMIN;
		else {
			enpu_fail(e, ENPU_E_CONFIG, where, "use role user or admin",
				  "role '%.*s' is neither user nor admin", (int)(rn > 40 ? 40 : rn), rw);
			goto fail;
		}
		if (word(&q, le, &nw, &nn))
			snprintf(name, sizeof name, "%.*s", (int)(nn > 63 ? 63 : nn), nw);
		else if (unnamed(tw, tn, name, sizeof name) != 0) {
			enpu_fail(e, ENPU_E_NOMEM, where, NULL, "cannot hash the token");
			goto fail;
		}
		if (word(&q, le, &nw, &nn)) {
			enpu_fail(e, ENPU_E_CONFIG, where, "write lines as 'TOKEN ROLE [NAME]'",
				  "unexpected text after the name '%s'", name);
			goto fail;
		}
		if (add_token(a, tw, tn, role, name) != 0) {
			enpu_fail(e, ENPU_E_LIMIT, where, NULL, "too many tokens (at most %d)", TOKENS_MAX);
			goto fail;
		}
		p = nl ? nl + 1 : end;
	}
	return a;
fail:
	srv_auth_free(a);
	return NULL;
}

void srv_auth_free(srv_auth *a)
{
	if (!a)
		return;
	if (a->t)
		OPENSSL_cleanse(a->t, (size_t)a->n * sizeof *a->t);
	free(a->t);
	free(a);
}

int srv_auth_count(const srv_auth *a)
{
	return a ? a->n : 0;
}

int srv_auth_match(const srv_auth *a, const char *authorization, int *role,
		   char *name, size_t name_cap)
{
	unsigned char d[32];
	const char *t;
	int i, hit = -1;
	unsigned found = 0;

	if (!a || !authorization || strncasecmp(authorization, "Bearer ", 7) != 0)
		return 0;
	t = authorization + 7;
	while (*t == ' ')
		t++;
	if (!*t || sha256(t, strlen(t), d) != 0)
		return 0;
	/* every entry is compared; the index is chosen without a branch on the
	 * comparison so the loop's time does not depend on where it matched */
	for (i = 0; i < a->n; i++) {
		unsigned eq = (unsigned)(CRYPTO_memcmp(d, a->t[i].d, 32) == 0);
		unsigned mask = 0u - (eq & (1u - found));
		hit = (int)(((unsigned)hit & ~mask) | ((unsigned)i & mask));
		found |= eq;
	}
	if (!found)
		return 0;
	*role = a->t[hit].role;
	if (name && name_cap)
		snprintf(name, name_cap, "%s", a->t[hit].name);
	return 1;
}

int srv_secret_file_private(const char *path, const char *what, enpu_err *e)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return enpu_fail(e, ENPU_E_CONFIG, path, NULL, "cannot open the %s '%s': %s",
				 what, path, strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return enpu_fail(e, ENPU_E_CONFIG, path, NULL, "%s '%s' is not a regular file",
				 what, path);
	}
	close(fd);
	if (st.st_mode & (S_IROTH | S_IWOTH))
		return enpu_fail(e, ENPU_E_CONFIG, path,
				 "chmod 600 the file (640 to share it with a group)",
				 "%s '%s' is readable or writable by everyone (mode %04o)",
				 what, path, (unsigned)(st.st_mode & 07777));
	return 0;
}

int srv_token_file_private(const char *path, enpu_err *e)
{
	return srv_secret_file_private(path, "token file", e);
}

/* A --tokens file: not world-readable, at most 1 MiB. */
static srv_auth *load_tokens(const char *path, enpu_err *e)
{
	enpu_buf b = ENPU_BUF_INIT;
	srv_auth *a;

	if (srv_token_file_private(path, e) != 0)
		return NULL;
	if (enpu_read_file(path, TOKENS_MAX_BYTES, &b, e) != 0) {
		enpu_buf_free(&b);
		return NULL;
	}
	a = srv_auth_parse(b.data ? b.data : "", b.len, path, e);
	if (b.data)
		OPENSSL_cleanse(b.data, b.len);
	enpu_buf_free(&b);
	return a;
}

/* --token-file: one token (the first word of the file), role admin; the
 * file as private as --tokens. */
static int load_single(srv_auth *a, const char *path, enpu_err *e)
{
	enpu_buf b = ENPU_BUF_INIT;
	size_t n = 0, i;
	int rc = -1;

	if (srv_token_file_private(path, e) != 0 || enpu_read_file(path, 4096, &b, e) != 0)
		goto out;
	n = b.len;
	while (n > 0 && strchr("\r\n\t ", b.data[n - 1]))
		n--;
	for (i = 0; i < n; i++)
		if ((unsigned char)b.data[i] <= ' ' || (unsigned char)b.data[i] == 0x7f)
			break;
	if (n == 0 || i < n) {
		enpu_fail(e, ENPU_E_CONFIG, path, NULL, "token file '%s': the token must be one line "
			  "of printable characters, without spaces", path);
		goto out;
	}
	if (add_token(a, b.data, n, SRV_ROLE_ADMIN, "token-file") != 0) {
		enpu_fail(e, ENPU_E_NOMEM, path, NULL, "out of memory reading tokens");
		goto out;
	}
	a->all_listeners = 1;
	rc = 0;
out:
	if (b.data)
		OPENSSL_cleanse(b.data, b.len);
	enpu_buf_free(&b);
	return rc;
}

int srv_auth_load(srv_ctx *ctx, enpu_err *e)
{
	srv_auth *a = NULL, *old;

	if (!ctx->cfg.tokens_file && !ctx->cfg.token_file)
		return 0;
	if (ctx->cfg.tokens_file) {
		a = load_tokens(ctx->cfg.tokens_file, e);
		if (!a)
			return -1;
	} else {
		a = calloc(1, sizeof *a);
		if (!a)
			return enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory reading tokens");
	}
	if (ctx->cfg.token_file && load_single(a, ctx->cfg.token_file, e) != 0) {
		srv_auth_free(a);
		return -1;
	}
	pthread_rwlock_wrlock(&auth_mu);
	old = ctx->auth;
	ctx->auth = a;
	pthread_rwlock_unlock(&auth_mu);
	srv_auth_free(old);
	return 0;
}

int srv_auth_decide(srv_ctx *ctx, int tcp, int need, const char *authorization,
		    char *name, size_t name_cap)
{
	int rc = 0, role = 0;

	if (need == SRV_ROLE_PUBLIC)
		return 0;
	pthread_rwlock_rdlock(&auth_mu);
	if (ctx->auth && (tcp || ctx->auth->all_listeners)) {
		if (!srv_auth_match(ctx->auth, authorization, &role, name, name_cap))
			rc = 401;
		else if (need == SRV_ROLE_ADMIN && role != SRV_ROLE_ADMIN)
			rc = 403;
	}
	pthread_rwlock_unlock(&auth_mu);
	return rc;
}

void srv_auth_shutdown(srv_ctx *ctx)
{
	pthread_rwlock_wrlock(&auth_mu);
	srv_auth_free(ctx->auth);
	ctx->auth = NULL;
	pthread_rwlock_unlock(&auth_mu);
}

/* ---- identity ------------------------------------------------------------- */

void srv_auth_identify(srv_ctx *ctx, int tcp, long peer_uid, const char *authorization,
		       srv_ident *out)
{
	int role = 0, tokens;

	memset(out, 0, sizeof *out);
	pthread_rwlock_rdlock(&auth_mu);
	tokens = ctx->auth && (tcp || ctx->auth->all_listeners);
	if (tokens && srv_auth_match(ctx->auth, authorization, &role, out->name, sizeof out->name))
		out->admin = role == SRV_ROLE_ADMIN;
	pthread_rwlock_unlock(&auth_mu);
	if (out->name[0])
		return;
	if (tokens) {                   /* a public route without a token */
		snprintf(out->name, sizeof out->name, "%s", SRV_NOBODY);
	} else if (!tcp) {              /* a Unix socket: the peer's uid */
		if (peer_uid < 0) {
			snprintf(out->name, sizeof out->name, "%s", SRV_NOBODY);
			return;
		}
		snprintf(out->name, sizeof out->name, "uid:%ld", peer_uid);
		out->admin = peer_uid == 0 || peer_uid == (long)geteuid();
	} else {                        /* TCP without tokens: one shared identity */
		snprintf(out->name, sizeof out->name, "%s", SRV_ANONYMOUS);
		out->admin = 1;
	}
}

int srv_ident_owns(const srv_ident *who, const char *owner)
{
	if (!who)
		return 0;
	return who->admin || (owner && who->name[0] && strcmp(who->name, SRV_NOBODY) != 0 &&
			      !strcmp(who->name, owner));
}

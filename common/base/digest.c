/* digest.c: SHA-256 through OpenSSL's EVP interface, as lowercase hex. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <openssl/evp.h>
#include "digest.h"

/* SHA-256 fetched from the default provider once: EVP_sha256() is
 * fetched again (a lookup under a lock) at every digest, a tenth of the
 * cost of hashing a job's small result. Kept for the process's life. */
static EVP_MD *sha256_md;
static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;

static void sha256_fetch(void)
{
	sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL);
}

static const EVP_MD *sha256(void)
{
	pthread_once(&sha256_once, sha256_fetch);
	return sha256_md ? sha256_md : EVP_sha256();
}

struct enpu_sha256 {
	EVP_MD_CTX *ctx;
};

enpu_sha256 *enpu_sha256_new(void)
{
	enpu_sha256 *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->ctx = EVP_MD_CTX_new();
	if (!c->ctx || EVP_DigestInit_ex(c->ctx, sha256(), NULL) != 1) {
		enpu_sha256_free(c);
		return NULL;
	}
	return c;
}

int enpu_sha256_update(enpu_sha256 *c, const void *p, size_t n)
{
	return EVP_DigestUpdate(c->ctx, p, n) == 1 ? 0 : -1;
}

void enpu_hex(const unsigned char *md, size_t n, char *out)
{
	static const char hex[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 15];
	}
	out[2 * n] = '\0';
}

int enpu_sha256_final(enpu_sha256 *c, char out_hex[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned n = 0;
	int ok = EVP_DigestFinal_ex(c->ctx, md, &n) == 1 && n == 32;

	if (ok)
		enpu_hex(md, n, out_hex);
	else
		out_hex[0] = '\0';
	enpu_sha256_free(c);
	return ok ? 0 : -1;
}

void enpu_sha256_free(enpu_sha256 *c)
{
	if (!c)
		return;
	EVP_MD_CTX_free(c->ctx);
	free(c);
}

void enpu_sha256_hex(const void *p, size_t n, char out_hex[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned len = 0;

	if (EVP_Digest(p, n, md, &len, sha256(), NULL) == 1 && len == 32)
		enpu_hex(md, len, out_hex);
	else
		out_hex[0] = '\0';
}

int enpu_sha256_file(const char *path, char out_hex[65], enpu_err *e)
{
	unsigned char chunk[65536];
	enpu_sha256 *c;
	size_t n;
	FILE *f = fopen(path, "rb");

	if (!f)
		return enpu_fail(e, ENPU_E_IO, path, NULL, "cannot open '%s': %s", path, strerror(errno));
	c = enpu_sha256_new();
	if (!c) {
		fclose(f);
		return enpu_fail(e, ENPU_E_NOMEM, path, NULL, "cannot start a SHA-256 context");
	}
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		enpu_sha256_update(c, chunk, n);
	if (ferror(f)) {
		int err = errno;
		fclose(f);
		enpu_sha256_free(c);
		return enpu_fail(e, ENPU_E_IO, path, NULL, "cannot read '%s': %s", path, strerror(err));
	}
	fclose(f);
	if (enpu_sha256_final(c, out_hex))
		return enpu_fail(e, ENPU_E_INTERNAL, path, NULL, "SHA-256 failed");
	return 0;
}

int enpu_is_sha256_hex(const char *s)
{
	if (!s)
		return 0;
	for (int i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[64] == '\0';
}

/* digest.h: SHA-256 (OpenSSL libcrypto EVP), as lowercase hex. */
#ifndef ENPU_DIGEST_H
#define ENPU_DIGEST_H

#include <stddef.h>
#include "err.h"

typedef struct enpu_sha256 enpu_sha256;   /* streaming context */

enpu_sha256 *enpu_sha256_new(void);
int enpu_sha256_update(enpu_sha256 *c, const void *p, size_t n);
/* Finish into 64 hex chars + NUL, and free the context. */
int enpu_sha256_final(enpu_sha256 *c, char out_hex[65]);
void enpu_sha256_free(enpu_sha256 *c);    /* abandon without finishing */

void enpu_sha256_hex(const void *p, size_t n, char out_hex[65]);
int enpu_sha256_file(const char *path, char out_hex[65], enpu_err *e);
int enpu_is_sha256_hex(const char *s);    /* 64 lowercase hex chars exactly */
/* n bytes as 2n lowercase hex digits and a NUL into out (2n + 1 bytes). */
void enpu_hex(const unsigned char *p, size_t n, char *out);

#endif

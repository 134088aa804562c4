/* cas.h: the daemon's cache on disk. The filesystem IS the index:
 *   cas/<2 hex>/<sha256>   blobs by the SHA-256 of their bytes
 *   ac/<key>               action cache: compile key -> artifact id (text)
 *   artifacts/<id>/        materialized artifacts (see artifact.h)
 *   tmp/                   uploads and builds in progress (emptied at open)
 * Every write goes to tmp/ (same filesystem), is fsynced, renamed into place,
 * and the directory fsynced: a crash leaves the old state or the new. */
#ifndef SRV_CAS_H
#define SRV_CAS_H

#include <stddef.h>
#include <stdint.h>
#include "err.h"

typedef struct srv_cas srv_cas;

/* Open (creating the layout) the cache at dir and empty tmp/. NULL + *e. */
srv_cas *srv_cas_open(const char *dir, enpu_err *e);
void srv_cas_close(srv_cas *c);
const char *srv_cas_root(const srv_cas *c);

/* Path of a blob (whether or not it exists). digest must be valid hex. */
void srv_cas_blob_path(const srv_cas *c, const char *digest, char *out, size_t cap);
/* 1 if the blob exists (its size in *size if non-NULL), 0 if not. */
int srv_cas_has(const srv_cas *c, const char *digest, uint64_t *size);

/* Mark a blob as just used (its mtime, which --cache-max eviction orders
 * by). Silent when the blob is absent. */
void srv_cas_touch(const srv_cas *c, const char *digest);

/* Streaming upload: bytes go to a temp file while being hashed. finish
 * checks the digest against expect (NULL = accept any), moves the file into
 * place (keeping an existing blob: *existed = 1) and frees u, success or not.
 * abort drops everything. */
typedef struct srv_upload srv_upload;
srv_upload *srv_upload_begin(srv_cas *c, enpu_err *e);
int srv_upload_write(srv_upload *u, const void *p, size_t n, enpu_err *e);
uint64_t srv_upload_bytes(const srv_upload *u);
int srv_upload_finish(srv_upload *u, const char *expect, char digest[65],
		      int *existed, enpu_err *e);
void srv_upload_abort(srv_upload *u);

/* Store bytes / a file's content (the file is left alone; hard-linked when
 * possible, else copied). The digest comes back in digest. */
int srv_cas_put_mem(srv_cas *c, const void *p, size_t n, char digest[65], enpu_err *e);
int srv_cas_put_file(srv_cas *c, const char *path, char digest[65], enpu_err *e);

/* Action cache. get: 1 = hit (id filled), 0 = miss. put replaces atomically. */
int srv_ac_get(srv_cas *c, const char *key, char id[65]);
int srv_ac_put(srv_cas *c, const char *key, const char *id, enpu_err *e);
/* Number of action-cache entries (for tests and metrics). */
int srv_ac_count(srv_cas *c);

/* A new empty directory / a fresh file name under tmp/ (not created). */
int srv_cas_tmpdir(srv_cas *c, char *out, size_t cap, enpu_err *e);
void srv_cas_tmpname(srv_cas *c, const char *suffix, char *out, size_t cap);

/* Write bytes to path atomically via tmp/. */
int srv_cas_write_atomic(srv_cas *c, const char *path, const void *p, size_t n, enpu_err *e);

/* Helpers shared with artifact.c. */
int srv_fsync_dir(const char *dir);
int srv_link_or_copy(const char *from, const char *to, enpu_err *e);
void srv_rmtree(const char *path);
void srv_random_hex(char *out, size_t nhex);   /* nhex chars + NUL */

#endif

/* cas_index.h: the cache's in-memory index (cas_index.c), inside
 * server/cache/ only. What the disk holds, kept so that no question about
 * the whole cache walks or stats the disk:
 *   blobs      by digest, with size and last use, and in last-use order
 *              (the LRU that --cache-max evicts from, oldest first)
 *   artifacts  by id, with the digests of their listed files, bytes and
 *              last use; the reverse map blob -> the artifacts listing it
 *   ac         action-cache entries by key, with the artifact each names,
 *              and the reverse map artifact -> keys
 *   counts     entries and blob bytes, readable without the lock
 * Ordered structures are red-black trees (libbsd's <bsd/sys/tree.h>): a
 * lookup, an insertion, a removal or a move to the newest end is O(log N).
 * Not thread-safe by itself: struct srv_cas holds its mutex (cas_int.h);
 * every function here but ix_counts_get is called with that mutex held.
 * Outside server/cache/ only the listing's types (ix_kind, ix_entry,
 * ix_cursor) are used, through cas.h's srv_cas_page.
 * The index is rebuilt from disk in one pass at open and kept as the cache
 * changes (cas_scan.c reconciles it with the disk: ix_mark/ix_sweep). */
#ifndef SRV_CAS_INDEX_H
#define SRV_CAS_INDEX_H

#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

typedef struct srv_index srv_index;

/* Entry kinds, in the order a listing breaks ties of equal last use. */
typedef enum ix_kind { IX_BLOB = 0, IX_AC = 1, IX_ARTIFACT = 2, IX_NKINDS } ix_kind;

typedef struct ix_counts {
	uint64_t blobs, blob_bytes, artifacts, ac;
} ix_counts;

srv_index *ix_new(void);
void ix_free(srv_index *ix);
/* Without the lock: each figure is exact, the four may be from moments
 * apart while a change is under way. */
void ix_counts_get(const srv_index *ix, ix_counts *out);

/* ---- blobs ---- */
/* Insert, or update the size (and the last use when used is later). 0, -1 OOM. */
int ix_blob_put(srv_index *ix, const char *digest, uint64_t size, const struct timespec *used);
/* 1 and its size / last use (either may be NULL) when present. */
int ix_blob_get(const srv_index *ix, const char *digest, uint64_t *size, struct timespec *used);
/* Move to the newest end with last use `used`. 1 when present. */
int ix_blob_touch(srv_index *ix, const char *digest, const struct timespec *used);
/* The same, saying whether its last use was under `within` seconds before
 * `used`: 1 or 0 (moved either way), -1 when absent. */
int ix_blob_touch_recent(srv_index *ix, const char *digest, const struct timespec *used,
			 long within);
/* Remove; 1 (and *size) when it was there. */
int ix_blob_del(srv_index *ix, const char *digest, uint64_t *size);
/* The least recently used blob (oldest first) and the next newer one:
 * NULL at the end. The pointer is valid until the blob is removed. */
typedef struct ix_blob ix_blob;
const ix_blob *ix_lru_first(const srv_index *ix);
const ix_blob *ix_lru_next(const srv_index *ix, const ix_blob *b);
const char *ix_blob_digest(const ix_blob *b);
uint64_t ix_blob_size(const ix_blob *b);
/* The artifacts that list digest as a file: up to cap ids into out; the
 * count (which may be more than cap). */
int ix_blob_users(const srv_index *ix, const char *digest, char (*out)[65], int cap);

/* ---- artifacts ---- */
/* Insert or replace artifact id listing files[0..n) (their digests) of
 * `bytes` in all; its last use is the newest of its blobs' (or now when
 * none is indexed). bad: its manifest is unreadable (gc drops it). 0, -1. */
int ix_art_put(srv_index *ix, const char *id, const char (*files)[65], int n, uint64_t bytes,
	       int bad);
int ix_art_has(const srv_index *ix, const char *id);
int ix_art_touch(srv_index *ix, const char *id, const struct timespec *used);
/* When artifact id's last use is under `within` seconds before `used`:
 * move it and the blobs it lists to the newest end with last use `used`,
 * and 1; otherwise nothing changes, and 0. */
int ix_art_touch_recent(srv_index *ix, const char *id, const struct timespec *used, long within);
int ix_art_del(srv_index *ix, const char *id);
/* The ids of artifacts that are bad or list a blob the index lacks, up to
 * cap; the count. */
int ix_art_lost(const srv_index *ix, char (*out)[65], int cap);

/* ---- action cache ---- */
int ix_ac_put(srv_index *ix, const char *key, const char *art, const struct timespec *used);
int ix_ac_get(const srv_index *ix, const char *key, char art[65]);
int ix_ac_touch(srv_index *ix, const char *key, const struct timespec *used);
int ix_ac_del(srv_index *ix, const char *key);
/* The keys naming artifact art (art NULL: those naming an artifact the
 * index lacks), up to cap; the count. */
int ix_ac_keys_for(const srv_index *ix, const char *art, char (*out)[65], int cap);

/* ---- listing: newest use first, all kinds merged ---- */
typedef struct ix_entry {
	ix_kind kind;
	char id[65];
	char art[65];            /* IX_AC: the artifact it names */
	int64_t bytes;           /* -1 for IX_AC */
	struct timespec used;
} ix_entry;
/* A position in the listing: entries strictly after it come next. */
typedef struct ix_cursor {
	struct timespec used;
	ix_kind kind;
	char id[65];
} ix_cursor;
/* Up to limit entries of the kinds in mask (bit 1 << kind), newest first,
 * after *from (NULL: from the newest), into out. *more = 1 when entries
 * remain after the last one given. Returns the count. */
int ix_page(const srv_index *ix, unsigned mask, const ix_cursor *from, int limit, ix_entry *out,
	    int *more);
/* Every blob (for gc): fn(digest, size, arg) in LRU order; stops when fn
 * returns non-zero, and returns that. */
int ix_blob_each(const srv_index *ix, int (*fn)(const char *digest, uint64_t size, void *arg),
		 void *arg);

/* ---- reconciling with the disk (cas_scan.c) ---- */
/* Start a pass: every entry unseen by the pass's end is removed by
 * ix_sweep. Entries put during the pass count as seen. */
void ix_mark(srv_index *ix);
/* The pass saw this entry on disk: 1 when the index holds it (now marked
 * seen), 0 when not (the caller puts it). */
int ix_seen(srv_index *ix, ix_kind kind, const char *id);
/* Remove what the pass did not see; returns how many entries went. */
int ix_sweep(srv_index *ix);

#endif

/* cas.h: the daemon's cache on disk (cas.c, cas_fs.c, cas_verify.c, cas_put.c,
 * cas_ac.c, cas_scan.c, cas_index.c; cas_int.h inside). On disk:
 *   cas/<2 hex>/<sha256>        blobs by the SHA-256 of their bytes
 *   ac/<2 hex>/<key>            action cache: compile key -> artifact id (text)
 *   artifacts/<2 hex>/<id>/     materialized artifacts (see artifact.h)
 *   owners/<2 hex>/<sha256>     who uploaded a blob (owners.c)
 *   models/<name>.json          a named model's versions (models.c)
 *   tmp/                        uploads and builds in progress (emptied at open)
 * The disk is the truth and survives a restart; an index in memory
 * (cas_index.h), built from it in one pass at open and kept as the cache
 * changes, answers what would otherwise walk it: counts and bytes, the
 * LRU order, which artifacts list a blob, which keys name an artifact,
 * the listing. Every write goes to tmp/ (same filesystem) and is renamed
 * into place; what is fsynced is the policy of docs/architecture.md
 * ("Cache"): a crash leaves the old state or the new. */
#ifndef SRV_CAS_H
#define SRV_CAS_H

#include <sys/stat.h>

#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include "err.h"
#include "cas_index.h"

typedef struct srv_cas srv_cas;

/* Open (creating the layout) the cache at dir and empty tmp/. NULL + *e. */
srv_cas *srv_cas_open(const char *dir, enpu_err *e);
void srv_cas_close(srv_cas *c);
const char *srv_cas_root(const srv_cas *c);

/* Path of a blob (whether or not it exists). digest must be valid hex. */
void srv_cas_blob_path(const srv_cas *c, const char *digest, char *out, size_t cap);
/* 1 if the blob exists (its size in *size if non-NULL), 0 if not. */
int srv_cas_has(const srv_cas *c, const char *digest, uint64_t *size);

/* Integrity on read. verify: 1 when the blob is present and its bytes hash
 * to its name (size in *size); a blob that does not is deleted, logged and
 * counted, and the answer is 0, as if it had never been there. A file is
 * hashed the first time it is checked in this run and again after any
 * change to it (inode, size or ctime differ from when it last hashed
 * right); otherwise the check is one stat(). force hashes regardless. */
int srv_cas_verify(srv_cas *c, const char *digest, uint64_t *size);
/* The same check for any file (an artifact's, a hard link of a blob):
 * 1 = hashes to digest, 0 = does not or cannot be read. Never deletes. */
int srv_cas_check_file(srv_cas *c, const char *path, const char *digest, int force);
/* path (a blob just stored, its digest computed from its bytes as they
 * were written) is known to hash to digest: its first check is a stat. */
void srv_cas_memo_good(srv_cas *c, const char *path, const char *digest);
/* 1 when path is a file already verified to hash to digest and unchanged
 * since (one stat; never reads it); 0 when that is not known. */
int srv_cas_known_good(srv_cas *c, const char *path, const char *digest);
/* to (a file of an artifact being installed) becomes a hard link to the
 * blob digest, or a copy of it where no link can be made
 * (srv_link_or_copy). A blob known good stays so through the link, whose
 * change of its ctime would otherwise make its next check hash it. */
int srv_cas_link_blob(srv_cas *c, const char *digest, const char *to, enpu_err *e);
/* link(from, to) of a file of the cache (a blob): 0, or -1 with errno. A
 * file known good (srv_cas_known_good) stays so through the link. */
int srv_cas_link_known(srv_cas *c, const char *from, const char *to);

/* The bytes of a blob of at most max bytes, appended to out: 0, or -1
 * when it is absent, larger or cannot be read. No hashing: the caller has
 * verified the blob (srv_cas_verify or srv_cas_known_good). A small blob
 * read before, whose file stats the same, is copied from memory (a job's
 * input, read at every run of it). */
struct enpu_buf;
int srv_cas_read_small(srv_cas *c, const char *digest, size_t max, struct enpu_buf *out);

/* Every blob with its size and last use, oldest first (from the index).
 * *out is malloc'd. */
typedef struct srv_cas_entry {
	char digest[65];
	uint64_t size;
	struct timespec mtime;
} srv_cas_entry;
int srv_cas_list(srv_cas *c, srv_cas_entry **out, int *n, uint64_t *total);
/* Delete a blob (no pin check here). 1 = deleted, 0 = absent. */
int srv_cas_remove(srv_cas *c, const char *digest);

/* Mark a blob as just used (its mtime, which --cache-max eviction orders
 * by). Silent when the blob is absent. */
void srv_cas_touch(srv_cas *c, const char *digest);

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
/* The upload's bytes: the first `size` bytes of the open file fd, copied
 * by the kernel on a thread of its own while this one hashes what is
 * already copied (so the copy costs about what the hash does). What is
 * hashed is the upload's own file: a source changed meanwhile gives bytes
 * that fail finish's digest check, never a blob unlike its name.
 * With `vouched` (a digest the caller takes as the file's while it has
 * the identity `as`, see routes_blobs.c's vouched_for), the copy is not
 * hashed when the file's inode, size and times after it are still `as`'s:
 * finish takes `vouched` as its digest (srv_upload_vouched says so). When
 * they moved, the copy is hashed after all. */
int srv_upload_copy_fd(srv_upload *u, int fd, uint64_t size, const char *vouched,
		       const struct stat *as, enpu_err *e);
int srv_upload_vouched(const srv_upload *u);
/* This upload is of bytes made again when a crash loses them (a board
 * job's result and report): not fsynced (srv_cas_put_mem_volatile). */
void srv_upload_volatile(srv_upload *u);

/* Store bytes / a file's content (the file is left alone; hard-linked when
 * possible, else copied). The digest comes back in digest. */
int srv_cas_put_mem(srv_cas *c, const void *p, size_t n, char digest[65], enpu_err *e);
/* The same without an fsync, for bytes a crash may lose because they are
 * made again (a job's result and report): renamed into place whole, so a
 * kill -9 loses nothing; a power cut may lose them or leave bytes that
 * fail their integrity check on read (dropped, counted). The fsync policy
 * is docs/architecture.md's ("Cache"). */
int srv_cas_put_mem_volatile(srv_cas *c, const void *p, size_t n, char digest[65], enpu_err *e);
int srv_cas_put_file(srv_cas *c, const char *path, char digest[65], enpu_err *e);
/* The same for a file whose digest the caller computed from the very bytes
 * it wrote (a compile's own output): stored under digest, not hashed again. */
int srv_cas_put_file_as(srv_cas *c, const char *path, const char *digest, enpu_err *e);

/* Action cache. get: 1 = hit (id filled), 0 = miss. put replaces atomically. */
int srv_ac_get(srv_cas *c, const char *key, char id[65]);
int srv_ac_put(srv_cas *c, const char *key, const char *id, enpu_err *e);
/* The compile key: the SHA-256 of "eulernpu-ac-v2\n<compiler>\n<backend>
 * \n<target JSON>\n<spec>\n<weights>\n" (routes_compile.c's key; the
 * remote tier computes it again from a manifest). 0, or -1 (no memory). */
int srv_ac_key(const char *compiler, const char *backend, const char *target_json,
	       const char *spec_d, const char *weights_d, char key[65]);
/* Number of action-cache entries (the index's count). */
int srv_ac_count(srv_cas *c);
/* Every entry: key, artifact id, last hit (from the index). *out is malloc'd. */
typedef struct srv_ac_entry {
	char key[65], id[65];
	struct timespec mtime;
} srv_ac_entry;
int srv_ac_list(srv_cas *c, srv_ac_entry **out, int *n);
/* Mark an entry as just hit (its mtime). */
void srv_ac_touch(srv_cas *c, const char *key);
/* Remove one entry (1 = removed); remove the entries naming artifact id
 * (id NULL: those whose artifact directory is gone). Returns the count. */
int srv_ac_remove(srv_cas *c, const char *key);
int srv_ac_drop_for(srv_cas *c, const char *id);
/* srv_ac_drop_for(c, id) with each entry taken by srv_cas_take into later
 * (the caller's srv_paths_remove removes them; NULL: unlinked here). */
struct srv_paths;
int srv_ac_take_for(srv_cas *c, const char *id, struct srv_paths *later);

/* Temp entries (uploads, builds) untouched for max_age seconds, and every
 * removal's rename (".rm"): removed. Returns the count. */
int srv_cas_clean_tmp(srv_cas *c, int max_age);

/* A new empty directory / a fresh file name under tmp/ (not created). */
int srv_cas_tmpdir(srv_cas *c, char *out, size_t cap, enpu_err *e);
void srv_cas_tmpname(srv_cas *c, const char *suffix, char *out, size_t cap);

/* Write bytes to path atomically via tmp/. */
int srv_cas_write_atomic(srv_cas *c, const char *path, const void *p, size_t n, enpu_err *e);

/* Cache statistics (GET /v1/cache, /metrics). Entry counts and bytes come
 * from the index (no disk access; rebuilt from the disk at open); the counters are kept in
 * memory and saved to <cache>/stats.json at close and on each gc, so they
 * survive a clean restart (a crash loses those since the last save). */
typedef struct srv_cache_stats {
	uint64_t blobs;              /* CAS blobs */
	uint64_t blob_bytes;         /* their bytes (what --cache-max bounds) */
	uint64_t artifacts;          /* artifacts/<id> directories */
	uint64_t ac_entries;         /* action-cache entries */
	uint64_t ac_hits, ac_misses; /* compile lookups */
	uint64_t cas_hits, cas_misses;   /* blobs asked for: blobs/missing, GETs, job inputs */
	uint64_t evictions;          /* blobs evicted under --cache-max (and by gc) */
	uint64_t evicted_bytes;
	uint64_t integrity_failures; /* blobs / artifacts dropped because a digest was wrong */
	uint64_t artifact_loads;     /* artifacts loaded and verified in full (enpu_artifact_load):
				      * an import, a job's when no loaded handle is at hand */
} srv_cache_stats;

void srv_cas_stats(struct srv_cas *c, srv_cache_stats *out);

/* Count events (thread-safe). */
typedef enum srv_cas_event {
	SRV_EV_AC_HIT, SRV_EV_AC_MISS, SRV_EV_CAS_HIT, SRV_EV_CAS_MISS,
	SRV_EV_EVICT, SRV_EV_INTEGRITY, SRV_EV_LOAD
} srv_cas_event;
void srv_cas_count(srv_cas *c, srv_cas_event ev, uint64_t bytes);
/* Save the counters to <cache>/stats.json now (also done at close). */
void srv_cas_save_stats(srv_cas *c);

/* ---- the index (cas_scan.c over cas_index.c) -----------------------------
 * Re-read the disk into the index (gc): adds what it lacks, forgets what
 * is gone. 0, or -1 (out of memory). */
int srv_cas_resync(srv_cas *c);
/* artifacts/<id> is installed: index it from its manifest (a no-op when
 * absent or already indexed). */
void srv_cas_index_artifact(srv_cas *c, const char *id);
/* Rename artifacts/<id> out of the cache and forget it, in one step: into
 * later's directory (srv_paths; gone is then empty), or, with later NULL
 * or no directory, to a fresh name under tmp/ (into gone, which the
 * caller removes; in place when the rename fails). 1 when it existed
 * (gone empty otherwise). */
int srv_cas_unlink_artifact(srv_cas *c, const char *id, struct srv_paths *later, char *gone,
			    size_t cap);
void srv_cas_touch_artifact(srv_cas *c, const char *id);
/* An artifact used again within CAS_TOUCH_DISK_S of its last use: moved
 * with its listed blobs to the newest end of the index's LRU (no file is
 * read or touched), and 1; 0 when the caller must touch it in full. */
int srv_cas_touch_artifact_recent(srv_cas *c, const char *id);
/* 1 when the index holds artifact id (in memory, no disk: its files are
 * checked where it is used), else 0. */
int srv_cas_has_artifact(srv_cas *c, const char *id);
/* The artifacts listing blob digest / the artifacts that are bad or list
 * a blob the cache lacks: ids into *out (malloc'd); the count, -1 OOM. */
int srv_cas_blob_users(srv_cas *c, const char *digest, char (**out)[65]);
int srv_cas_lost_artifacts(srv_cas *c, char (**out)[65]);
/* A page of the listing (ix_page): newest use first. */
int srv_cas_page(srv_cas *c, unsigned mask, const ix_cursor *from, int limit, ix_entry *out,
		 int *more);
/* Eviction's step: remove least recently used blobs, oldest first, those
 * keep(digest, arg) keeps skipped, while the blob bytes are over max, at
 * most cap of them (their digests and sizes into out). The count. Each
 * blob leaves cas/ by srv_cas_take into later, or by an unlink when
 * another name (an artifact's file) still links it. */
int srv_cas_evict_lru(srv_cas *c, uint64_t max, int (*keep)(const char *digest, void *arg),
		      void *arg, srv_cas_entry *out, int cap, struct srv_paths *later);

/* ---- who uploaded a blob (owners.c) --------------------------------------
 * owners/<2 hex>/<sha256>: the identities (srv_ident names) that uploaded
 * the blob, one a line, the newest SRV_OWNERS_MAX kept. Written atomically,
 * only while the blob exists; dropped with the blob. */
#define SRV_OWNERS_MAX 64
/* Record name as an uploader of digest (a no-op when the blob is absent,
 * the name is empty, or already recorded). 0, or -1 + *e. */
int srv_owners_add(srv_cas *c, const char *digest, const char *name, enpu_err *e);
/* 1 when name is recorded as an uploader of digest. */
int srv_owners_has(srv_cas *c, const char *digest, const char *name);
/* Forget digest's uploaders (its blob was removed): the record is taken
 * into later (srv_cas_take: removed with the rest of an eviction's files,
 * in the background), or unlinked when later is NULL. */
void srv_owners_drop(srv_cas *c, const char *digest, struct srv_paths *later);
/* Remove the records of absent blobs (gc). Returns the count. */
int srv_owners_prune(srv_cas *c);

/* ---- cache management (evict.c) ---------------------------------------- */
struct srv_ctx;

/* What a gc (or an eviction) did. */
typedef struct srv_gc_result {
	uint64_t evicted, evicted_bytes;     /* blobs removed for --cache-max */
	uint64_t artifacts_dropped;          /* lost a blob, or failed verification */
	uint64_t ac_dropped;                 /* entries naming an absent artifact */
	uint64_t tmp_removed;                /* stale temp entries */
	uint64_t verified;                   /* blobs hashed (verify only) */
	uint64_t integrity_failures;         /* blobs dropped by that */
	uint64_t held_bytes, max_bytes;      /* blob bytes after, and the bound */
} srv_gc_result;

#define SRV_TMP_STALE 3600   /* seconds before an untouched temp entry is stale */

/* POST /v1/cache/gc: remove stale temp entries, optionally re-hash every
 * blob (verify), evict down to --cache-max, drop artifacts whose blobs are
 * gone and action-cache entries naming absent artifacts. 0 or -1 (OOM). */
int srv_cache_gc(struct srv_ctx *ctx, int verify, srv_gc_result *res);
/* The start-up pass (a gc without the re-read: finish an eviction a crash
 * cut short, bring the cache under a smaller --cache-max, drop what lost
 * a blob) in a thread of its own: the daemon answers meanwhile. stop waits
 * for it (the pass ends early once ctx->stopping is set). evicting: 1
 * while that pass, or any eviction, runs. */
int srv_cache_start(struct srv_ctx *ctx);
void srv_cache_stop(void);
int srv_cache_evicting(void);
/* 1 when a queued or running job needs digest (a blob or an artifact id,
 * with every file of the artifact), 0 if not, -1 on out of memory. */
int srv_cache_pinned(struct srv_ctx *ctx, const char *digest);

/* Helpers shared with artifact.c. */
int srv_fsync_dir(const char *dir);
/* 1 when two stats are of the same, unchanged file: device, inode, size
 * and ctime (which every write, rename onto it or touch moves). */
int srv_stat_same_file(const struct stat *a, const struct stat *b);
/* mkdir dir (a fan-out directory); when it is new, fsync its parent so
 * that it outlives a power cut. 0, or -1 with errno. */
int srv_mkdir_shard(const char *dir);
int srv_link_or_copy(const char *from, const char *to, enpu_err *e);
void srv_rmtree(const char *path);
/* Paths taken out of the cache by a rename into tmp/, to be removed
 * together (srv_paths_remove). What srv_cas_take and
 * srv_cas_unlink_artifact take goes into a directory of the list's own,
 * tmp/<random>.rm/ (into, made at the first take and again after each
 * CAS_TAKE_PER_DIR names), under short names: a rename into a small
 * directory no other thread uses is cheaper than one into tmp/ while the
 * reclaimer unlinks there, and the directory is one path to remove. */
typedef struct srv_paths {
	char **p;
	int n, cap;
	char *into;     /* NULL, or the directory (malloc'd) */
	unsigned k;     /* names used in it */
} srv_paths;
#define SRV_PATHS_INIT {NULL, 0, 0, NULL, 0}
/* Add a copy of path; -1 (nothing added) when out of memory. */
int srv_paths_add(srv_paths *l, const char *path);
/* srv_rmtree each path of l, on up to SRV_RECLAIM_THREADS threads at once,
 * and empty l. The last unlink of a file can wait for the disk (ext4
 * mounted with -o discard discards its blocks there and then, ~0.5 ms on
 * a virtual disk), so removals overlap their waits; without a thread, in
 * turn here. */
#define SRV_RECLAIM_THREADS 16
void srv_paths_remove(srv_paths *l);
/* Hand l's paths to the cache's reclaimer, a thread that removes them
 * (as srv_paths_remove does) in the background, and empty l: an eviction
 * pass is done once what it took is out of the cache, and the disk's
 * waits are the reclaimer's. Without a thread, removed here. What a stop
 * leaves in tmp/, the next start removes (every ".rm"). */
void srv_cas_reclaim(srv_cas *c, srv_paths *l);
/* Paths handed to the reclaimer and not yet removed (GET /v1/cache:
 * reclaiming). */
long srv_cas_reclaiming(srv_cas *c);
/* Until the reclaimer has removed all it was handed (a gc's files are off
 * the disk when it answers). */
void srv_cas_reclaim_wait(srv_cas *c);
/* Take path out of its place: renamed into later's directory, or to a
 * fresh ".rm" name in tmp/ that is added to later (a rename costs no wait
 * for the disk, so it can be done under a lock), or unlinked when later is
 * NULL or that fails. 1 when it was there, 0 with errno. */
int srv_cas_take(srv_cas *c, const char *path, srv_paths *later);
void srv_random_hex(char *out, size_t nhex);   /* nhex chars + NUL */

#endif

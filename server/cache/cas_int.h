/* cas_int.h: the cache directory's state (struct srv_cas), shared by the
 * files that implement cas.h and by nothing else: cas.c (open, stats,
 * paths, listing, temp space), cas_fs.c (file helpers), cas_verify.c
 * (integrity checks), cas_put.c (uploads and puts), cas_ac.c (the action
 * cache), cas_scan.c (the pass over the disk: migration, index rebuild),
 * cas_index.c (the in-memory index). */
#ifndef SRV_CAS_INT_H
#define SRV_CAS_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <sys/types.h>
#include <time.h>
#include "cas.h"
#include "cas_index.h"

/* The persisted counters, in stats.json under these names. */
enum { CNT_AC_HITS, CNT_AC_MISSES, CNT_CAS_HITS, CNT_CAS_MISSES, CNT_EVICTIONS,
       CNT_EVICTED_BYTES, CNT_INTEGRITY, CNT_LOADS, CNT_N };

/* A use writes a blob's mtime when its last one is this many seconds old
 * or more (cas_verify.c's srv_cas_touch). */
#define CAS_TOUCH_DISK_S 1

/* What was last hashed right, by inode: a direct-mapped table (a collision
 * only costs a re-hash). */
#define MEMO_SLOTS 4096
typedef struct memo {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec ctime;
	char digest[65];
} memo;

/* The bytes of small blobs a job reads again and again (its input), by
 * digest, with the stat of the file they were read from: a read that
 * stats the same is a copy from here, not an open and a read. Only bytes
 * the verify memo vouched for are kept (cas_verify.c, srv_cas_read_small). */
#define BYTES_SLOTS 64
#define BYTES_MAX (64 * 1024)
typedef struct bytes_memo {
	memo id;              /* the file's stat and the blob's digest */
	unsigned char *bytes;
	size_t len;
} bytes_memo;

/* The digests of the last small volatile puts (a job's result and
 * report), one per slot by length, with their bytes: a put of the same
 * bytes again (most jobs make what the run before made) has that digest
 * without hashing (cas_put.c). */
#define PUT_MEMO_SLOTS 16
#define PUT_MEMO_MAX 4096
typedef struct put_memo {
	size_t len;            /* 0: empty */
	char digest[65];
	unsigned char bytes[PUT_MEMO_MAX];
} put_memo;

struct srv_cas {
	char *root;
	char cas[4096], ac[4096], tmp[4096], art[4096];
	atomic_ullong cnt[CNT_N];
	pthread_mutex_t memo_mu;   /* memo and bmemo */
	memo memo[MEMO_SLOTS];
	bytes_memo bmemo[BYTES_SLOTS];
	put_memo pmemo[PUT_MEMO_SLOTS];   /* under memo_mu */
	/* the index (cas_index.h) and the mutex of every change to the index
	 * and of the disk change that goes with it (a blob's unlink, an
	 * artifact directory's rename out of artifacts/) */
	pthread_mutex_t ix_mu;
	srv_index *ix;
	/* the reclaimer (cas_fs.c): paths taken out of the cache, removed by
	 * its thread; rc_pending counts them from hand-over to removal */
	pthread_mutex_t rc_mu;
	pthread_cond_t rc_more, rc_idle;
	srv_paths rc_q;
	pthread_t rc_th;
	int rc_started;
	atomic_int rc_stop;
	atomic_long rc_pending;
};

/* Empty a directory (what it holds, subdirectories too); 0, or -1 (cas_fs.c). */
int cas_clean_dir(const char *dir);
/* ac/<2 hex>/<key> (cas_ac.c). */
void cas_ac_path(const srv_cas *c, const char *key, char *out, size_t cap);
/* The entry at p: its artifact id and last hit (mtime). 1, or 0 when it is
 * no entry (unreadable, not a regular file, not an id). */
int cas_ac_read(const char *p, char id[65], struct timespec *used);
/* The same for the entry name in the directory dfd (or AT_FDCWD). */
int cas_ac_read_at(int dfd, const char *name, char id[65], struct timespec *used);
/* Move a flat ac/ and artifacts/ (the layout before fan-out directories)
 * into ac/<2 hex>/ and artifacts/<2 hex>/; then reconcile the index with
 * the disk (cas_scan.c). 0, or -1 (out of memory). */
int cas_migrate(srv_cas *c);
int cas_index_sync(srv_cas *c);
/* The keys naming artifact art (NULL: an absent one) into *out
 * (malloc'd): the count, or -1 (cas_scan.c). */
int cas_ac_keys(srv_cas *c, const char *art, char (**out)[65]);
/* Stop the reclaimer: it ends after the paths it is removing; what it
 * was handed and did not remove stays in tmp/ for the next start
 * (cas_fs.c). */
void cas_reclaim_stop(srv_cas *c);
/* A name to rename something taken out of the cache to (cas.c): inside
 * l's directory (made at its first use; 1), or a fresh ".rm" name in
 * tmp/ for the caller to add to l (0; l NULL or no directory). out is
 * empty when no name fits. */
int cas_take_name(srv_cas *c, srv_paths *l, char *out, size_t cap);
/* Names a take puts in one directory of l's (cas_take_name) before it
 * makes the next: each rename into a directory looks the new name up and
 * finds room for it by a walk of a directory block, and short names pack
 * a block with hundreds of entries; 64 keep the walk short, for one mkdir
 * per 64 renames. */
#define CAS_TAKE_PER_DIR 64
/* l's directory, if it has one, becomes one of its paths (cas_fs.c). */
void cas_paths_seal(srv_paths *l);
/* openat(dfd, name) to read, not following a last symlink, without
 * moving the access time when the file is ours (O_NOATIME: a read of
 * every manifest and entry at start-up then writes no inode). -1 with
 * errno (cas_fs.c). */
int cas_open_ro_at(int dfd, const char *name);
/* CLOCK_REALTIME now (what utimensat(NULL) writes). */
void cas_now(struct timespec *t);

#endif

/* cas_int.h: the cache directory's state (struct srv_cas), shared by the
 * files that implement cas.h and by nothing else: cas.c (open, stats,
 * paths, listing, temp space), cas_fs.c (file helpers), cas_verify.c
 * (integrity checks), cas_put.c (uploads and puts), cas_ac.c (the action
 * cache). */
#ifndef SRV_CAS_INT_H
#define SRV_CAS_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <sys/types.h>
#include <time.h>
#include "cas.h"

/* The persisted counters, in stats.json under these names. */
enum { CNT_AC_HITS, CNT_AC_MISSES, CNT_CAS_HITS, CNT_CAS_MISSES, CNT_EVICTIONS,
       CNT_EVICTED_BYTES, CNT_INTEGRITY, CNT_LOADS, CNT_N };

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

struct srv_cas {
	char *root;
	char cas[4096], ac[4096], tmp[4096], art[4096];
	atomic_ullong cnt[CNT_N];
	pthread_mutex_t memo_mu;
	memo memo[MEMO_SLOTS];
};

/* Empty a directory (not recursive: files only); 0, or -1 (cas_fs.c). */
int cas_clean_dir(const char *dir);

#endif

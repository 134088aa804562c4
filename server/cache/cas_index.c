/* cas_index.c: the cache's in-memory index (cas_index.h): red-black trees
 * of blobs, artifacts and action-cache entries by id and by last use, the
 * reverse maps blob -> artifacts and artifact -> action-cache keys, and
 * the counts. Pure memory: no I/O, no lock (the caller's). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bsd/sys/tree.h>
#include "cas_index.h"

/* libbsd's RB_GENERATE_STATIC marks the functions with BSD's __unused,
 * which glibc lacks: the same through the macro it expands to. */
#define IX_RB_GENERATE(name, type, field, cmp) \
	RB_GENERATE_INTERNAL(name, type, field, cmp, static __attribute__((unused)))

struct ix_art;

struct ix_blob {
	RB_ENTRY(ix_blob) by_id, by_use;
	char digest[65];
	uint64_t size;
	struct timespec used;
	unsigned gen;
};

/* One (blob, artifact) pair: artifact art lists blob as a file. */
typedef struct ix_use {
	RB_ENTRY(ix_use) by_blob;
	const char *blob;          /* art->files[i] */
	struct ix_art *art;
} ix_use;

typedef struct ix_art {
	RB_ENTRY(ix_art) by_id, by_use;
	char id[65];
	uint64_t bytes;
	struct timespec used;
	unsigned gen;
	int bad, n;
	char (*files)[65];
	ix_use *uses;              /* n of them */
} ix_art;

typedef struct ix_ac {
	RB_ENTRY(ix_ac) by_id, by_use, by_art;
	char key[65], art[65];
	struct timespec used;
	unsigned gen;
} ix_ac;

static int ts_cmp(const struct timespec *a, const struct timespec *b)
{
	if (a->tv_sec != b->tv_sec)
		return a->tv_sec < b->tv_sec ? -1 : 1;
	if (a->tv_nsec != b->tv_nsec)
		return a->tv_nsec < b->tv_nsec ? -1 : 1;
	return 0;
}

static int blob_id_cmp(const ix_blob *a, const ix_blob *b) { return strcmp(a->digest, b->digest); }
static int blob_use_cmp(const ix_blob *a, const ix_blob *b)
{
	int c = ts_cmp(&a->used, &b->used);
	return c ? c : strcmp(a->digest, b->digest);
}
static int art_id_cmp(const ix_art *a, const ix_art *b) { return strcmp(a->id, b->id); }
static int art_use_cmp(const ix_art *a, const ix_art *b)
{
	int c = ts_cmp(&a->used, &b->used);
	return c ? c : strcmp(a->id, b->id);
}
static int use_cmp(const ix_use *a, const ix_use *b)
{
	int c = strcmp(a->blob, b->blob);
	uintptr_t x = (uintptr_t)a->art, y = (uintptr_t)b->art;
	return c ? c : x < y ? -1 : x > y;
}
static int ac_id_cmp(const ix_ac *a, const ix_ac *b) { return strcmp(a->key, b->key); }
static int ac_use_cmp(const ix_ac *a, const ix_ac *b)
{
	int c = ts_cmp(&a->used, &b->used);
	return c ? c : strcmp(a->key, b->key);
}
static int ac_art_cmp(const ix_ac *a, const ix_ac *b)
{
	int c = strcmp(a->art, b->art);
	return c ? c : strcmp(a->key, b->key);
}

RB_HEAD(blob_id, ix_blob);
RB_HEAD(blob_use, ix_blob);
RB_HEAD(art_id, ix_art);
RB_HEAD(art_use, ix_art);
RB_HEAD(use_blob, ix_use);
RB_HEAD(ac_id, ix_ac);
RB_HEAD(ac_use, ix_ac);
RB_HEAD(ac_art, ix_ac);
IX_RB_GENERATE(blob_id, ix_blob, by_id, blob_id_cmp)
IX_RB_GENERATE(blob_use, ix_blob, by_use, blob_use_cmp)
IX_RB_GENERATE(art_id, ix_art, by_id, art_id_cmp)
IX_RB_GENERATE(art_use, ix_art, by_use, art_use_cmp)
IX_RB_GENERATE(use_blob, ix_use, by_blob, use_cmp)
IX_RB_GENERATE(ac_id, ix_ac, by_id, ac_id_cmp)
IX_RB_GENERATE(ac_use, ix_ac, by_use, ac_use_cmp)
IX_RB_GENERATE(ac_art, ix_ac, by_art, ac_art_cmp)

struct srv_index {
	struct blob_id blob_id;
	struct blob_use blob_use;
	struct art_id art_id;
	struct art_use art_use;
	struct use_blob uses;
	struct ac_id ac_id;
	struct ac_use ac_use;
	struct ac_art ac_art;
	atomic_ullong n_blobs, blob_bytes, n_arts, n_ac;
	unsigned gen;
};

srv_index *ix_new(void)
{
	srv_index *ix = calloc(1, sizeof *ix);

	if (!ix)
		return NULL;
	RB_INIT(&ix->blob_id);
	RB_INIT(&ix->blob_use);
	RB_INIT(&ix->art_id);
	RB_INIT(&ix->art_use);
	RB_INIT(&ix->uses);
	RB_INIT(&ix->ac_id);
	RB_INIT(&ix->ac_use);
	RB_INIT(&ix->ac_art);
	return ix;
}

void ix_free(srv_index *ix)
{
	ix_blob *b;
	ix_art *a;
	ix_ac *e;

	if (!ix)
		return;
	while ((b = RB_MIN(blob_id, &ix->blob_id)))
		ix_blob_del(ix, b->digest, NULL);
	while ((a = RB_MIN(art_id, &ix->art_id)))
		ix_art_del(ix, a->id);
	while ((e = RB_MIN(ac_id, &ix->ac_id)))
		ix_ac_del(ix, e->key);
	free(ix);
}

void ix_counts_get(const srv_index *ix, ix_counts *out)
{
	out->blobs = atomic_load(&ix->n_blobs);
	out->blob_bytes = atomic_load(&ix->blob_bytes);
	out->artifacts = atomic_load(&ix->n_arts);
	out->ac = atomic_load(&ix->n_ac);
}

static void now(struct timespec *t)
{
	clock_gettime(CLOCK_REALTIME, t);
}

/* ---- blobs ---------------------------------------------------------------- */

static ix_blob *blob_find(const srv_index *ix, const char *digest)
{
	ix_blob k;
	size_t n = strnlen(digest, sizeof k.digest - 1);   /* every lookup of a use: no printf */

	memcpy(k.digest, digest, n);
	k.digest[n] = '\0';
	return RB_FIND(blob_id, (struct blob_id *)&ix->blob_id, &k);
}

int ix_blob_put(srv_index *ix, const char *digest, uint64_t size, const struct timespec *used)
{
	ix_blob *b = blob_find(ix, digest);

	if (b) {
		atomic_fetch_sub(&ix->blob_bytes, b->size);
		atomic_fetch_add(&ix->blob_bytes, size);
		b->size = size;
		b->gen = ix->gen;
		if (ts_cmp(used, &b->used) > 0)
			ix_blob_touch(ix, digest, used);
		return 0;
	}
	b = calloc(1, sizeof *b);
	if (!b)
		return -1;
	snprintf(b->digest, sizeof b->digest, "%s", digest);
	b->size = size;
	b->used = *used;
	b->gen = ix->gen;
	RB_INSERT(blob_id, &ix->blob_id, b);
	RB_INSERT(blob_use, &ix->blob_use, b);
	atomic_fetch_add(&ix->n_blobs, 1);
	atomic_fetch_add(&ix->blob_bytes, size);
	return 0;
}

int ix_blob_get(const srv_index *ix, const char *digest, uint64_t *size, struct timespec *used)
{
	const ix_blob *b = blob_find(ix, digest);

	if (!b)
		return 0;
	if (size)
		*size = b->size;
	if (used)
		*used = b->used;
	return 1;
}

/* A last use `then` under `within` seconds before `now` (a clock that
 * went back counts as not recent). */
static int used_within(const struct timespec *then, const struct timespec *now, long within)
{
	return now->tv_sec >= then->tv_sec && now->tv_sec - then->tv_sec < within;
}

int ix_blob_touch(srv_index *ix, const char *digest, const struct timespec *used)
{
	return ix_blob_touch_recent(ix, digest, used, 0) >= 0;
}

int ix_blob_touch_recent(srv_index *ix, const char *digest, const struct timespec *used,
			 long within)
{
	ix_blob *b = blob_find(ix, digest);
	int recent;

	if (!b)
		return -1;
	recent = used_within(&b->used, used, within);
	RB_REMOVE(blob_use, &ix->blob_use, b);
	b->used = *used;
	RB_INSERT(blob_use, &ix->blob_use, b);
	return recent;
}

int ix_blob_del(srv_index *ix, const char *digest, uint64_t *size)
{
	ix_blob *b = blob_find(ix, digest);

	if (!b)
		return 0;
	RB_REMOVE(blob_id, &ix->blob_id, b);
	RB_REMOVE(blob_use, &ix->blob_use, b);
	atomic_fetch_sub(&ix->n_blobs, 1);
	atomic_fetch_sub(&ix->blob_bytes, b->size);
	if (size)
		*size = b->size;
	free(b);
	return 1;
}

const ix_blob *ix_lru_first(const srv_index *ix)
{
	return RB_MIN(blob_use, (struct blob_use *)&ix->blob_use);
}

const ix_blob *ix_lru_next(const srv_index *ix, const ix_blob *b)
{
	(void)ix;
	return RB_NEXT(blob_use, NULL, (ix_blob *)b);
}

const char *ix_blob_digest(const ix_blob *b) { return b->digest; }
uint64_t ix_blob_size(const ix_blob *b) { return b->size; }

int ix_blob_users(const srv_index *ix, const char *digest, char (*out)[65], int cap)
{
	ix_use k = {.blob = digest, .art = NULL}, *u;
	int n = 0;

	for (u = RB_NFIND(use_blob, (struct use_blob *)&ix->uses, &k);
	     u && !strcmp(u->blob, digest); u = RB_NEXT(use_blob, NULL, u)) {
		if (n < cap)
			memcpy(out[n], u->art->id, 65);
		n++;
	}
	return n;
}

int ix_blob_each(const srv_index *ix, int (*fn)(const char *digest, uint64_t size, void *arg),
		 void *arg)
{
	const ix_blob *b;
	int r;

	for (b = ix_lru_first(ix); b; b = ix_lru_next(ix, b))
		if ((r = fn(b->digest, b->size, arg)) != 0)
			return r;
	return 0;
}

/* ---- artifacts ------------------------------------------------------------ */

static ix_art *art_find(const srv_index *ix, const char *id)
{
	ix_art k;

	snprintf(k.id, sizeof k.id, "%s", id);
	return RB_FIND(art_id, (struct art_id *)&ix->art_id, &k);
}

int ix_art_put(srv_index *ix, const char *id, const char (*files)[65], int n, uint64_t bytes,
	       int bad)
{
	ix_art *a = calloc(1, sizeof *a);
	struct timespec t = {0, 0};
	int i;

	if (!a || (n > 0 && (!(a->files = calloc((size_t)n, sizeof *a->files)) ||
			     !(a->uses = calloc((size_t)n, sizeof *a->uses))))) {
		if (a) {
			free(a->files);
			free(a);
		}
		return -1;
	}
	ix_art_del(ix, id);
	snprintf(a->id, sizeof a->id, "%s", id);
	a->bytes = bytes;
	a->bad = bad;
	a->n = n;
	a->gen = ix->gen;
	for (i = 0; i < n; i++) {
		struct timespec u;
		snprintf(a->files[i], sizeof a->files[i], "%s", files[i]);
		a->uses[i].blob = a->files[i];
		a->uses[i].art = a;
		/* a file listed twice is one pair */
		if (RB_INSERT(use_blob, &ix->uses, &a->uses[i]))
			a->uses[i].art = NULL;
		if (ix_blob_get(ix, files[i], NULL, &u) && ts_cmp(&u, &t) > 0)
			t = u;
	}
	if (t.tv_sec == 0 && t.tv_nsec == 0)
		now(&t);
	a->used = t;
	RB_INSERT(art_id, &ix->art_id, a);
	RB_INSERT(art_use, &ix->art_use, a);
	atomic_fetch_add(&ix->n_arts, 1);
	return 0;
}

int ix_art_has(const srv_index *ix, const char *id)
{
	return art_find(ix, id) != NULL;
}

int ix_art_touch(srv_index *ix, const char *id, const struct timespec *used)
{
	ix_art *a = art_find(ix, id);

	if (!a)
		return 0;
	RB_REMOVE(art_use, &ix->art_use, a);
	a->used = *used;
	RB_INSERT(art_use, &ix->art_use, a);
	return 1;
}

int ix_art_touch_recent(srv_index *ix, const char *id, const struct timespec *used, long within)
{
	ix_art *a = art_find(ix, id);

	if (!a || !used_within(&a->used, used, within))
		return 0;
	for (int i = 0; i < a->n; i++)
		ix_blob_touch(ix, a->files[i], used);
	return ix_art_touch(ix, id, used);
}

int ix_art_del(srv_index *ix, const char *id)
{
	ix_art *a = art_find(ix, id);
	int i;

	if (!a)
		return 0;
	for (i = 0; i < a->n; i++)
		if (a->uses[i].art)
			RB_REMOVE(use_blob, &ix->uses, &a->uses[i]);
	RB_REMOVE(art_id, &ix->art_id, a);
	RB_REMOVE(art_use, &ix->art_use, a);
	atomic_fetch_sub(&ix->n_arts, 1);
	free(a->files);
	free(a->uses);
	free(a);
	return 1;
}

int ix_art_lost(const srv_index *ix, char (*out)[65], int cap)
{
	ix_art *a;
	int n = 0, i, lost;

	RB_FOREACH(a, art_id, (struct art_id *)&ix->art_id) {
		lost = a->bad;
		for (i = 0; i < a->n && !lost; i++)
			lost = !blob_find(ix, a->files[i]);
		if (!lost)
			continue;
		if (n < cap)
			memcpy(out[n], a->id, 65);
		n++;
	}
	return n;
}

/* ---- action cache ----------------------------------------------------------- */

static ix_ac *ac_find(const srv_index *ix, const char *key)
{
	ix_ac k;

	snprintf(k.key, sizeof k.key, "%s", key);
	return RB_FIND(ac_id, (struct ac_id *)&ix->ac_id, &k);
}

int ix_ac_put(srv_index *ix, const char *key, const char *art, const struct timespec *used)
{
	ix_ac *e = ac_find(ix, key);

	if (!e) {
		if (!(e = calloc(1, sizeof *e)))
			return -1;
		snprintf(e->key, sizeof e->key, "%s", key);
		atomic_fetch_add(&ix->n_ac, 1);
	} else {
		RB_REMOVE(ac_id, &ix->ac_id, e);
		RB_REMOVE(ac_use, &ix->ac_use, e);
		RB_REMOVE(ac_art, &ix->ac_art, e);
	}
	snprintf(e->art, sizeof e->art, "%s", art);
	e->used = *used;
	e->gen = ix->gen;
	RB_INSERT(ac_id, &ix->ac_id, e);
	RB_INSERT(ac_use, &ix->ac_use, e);
	RB_INSERT(ac_art, &ix->ac_art, e);
	return 0;
}

int ix_ac_get(const srv_index *ix, const char *key, char art[65])
{
	const ix_ac *e = ac_find(ix, key);

	if (!e)
		return 0;
	if (art)
		memcpy(art, e->art, 65);
	return 1;
}

int ix_ac_touch(srv_index *ix, const char *key, const struct timespec *used)
{
	ix_ac *e = ac_find(ix, key);

	if (!e)
		return 0;
	RB_REMOVE(ac_use, &ix->ac_use, e);
	e->used = *used;
	RB_INSERT(ac_use, &ix->ac_use, e);
	return 1;
}

int ix_ac_del(srv_index *ix, const char *key)
{
	ix_ac *e = ac_find(ix, key);

	if (!e)
		return 0;
	RB_REMOVE(ac_id, &ix->ac_id, e);
	RB_REMOVE(ac_use, &ix->ac_use, e);
	RB_REMOVE(ac_art, &ix->ac_art, e);
	atomic_fetch_sub(&ix->n_ac, 1);
	free(e);
	return 1;
}

int ix_ac_keys_for(const srv_index *ix, const char *art, char (*out)[65], int cap)
{
	ix_ac k, *e;
	int n = 0;

	if (!art) {
		RB_FOREACH(e, ac_id, (struct ac_id *)&ix->ac_id) {
			if (art_find(ix, e->art))
				continue;
			if (n < cap)
				memcpy(out[n], e->key, 65);
			n++;
		}
		return n;
	}
	snprintf(k.art, sizeof k.art, "%s", art);
	k.key[0] = '\0';
	for (e = RB_NFIND(ac_art, (struct ac_art *)&ix->ac_art, &k); e && !strcmp(e->art, art);
	     e = RB_NEXT(ac_art, NULL, e)) {
		if (n < cap)
			memcpy(out[n], e->key, 65);
		n++;
	}
	return n;
}

/* ---- listing ------------------------------------------------------------------ */

/* The three last-use trees seen alike: a node of kind k. */
static const struct timespec *k_used(ix_kind k, const void *p)
{
	return k == IX_BLOB ? &((const ix_blob *)p)->used : k == IX_AC ? &((const ix_ac *)p)->used
	       : &((const ix_art *)p)->used;
}

static const char *k_id(ix_kind k, const void *p)
{
	return k == IX_BLOB ? ((const ix_blob *)p)->digest : k == IX_AC ? ((const ix_ac *)p)->key
	       : ((const ix_art *)p)->id;
}

static const void *k_max(const srv_index *ix, ix_kind k)
{
	if (k == IX_BLOB)
		return RB_MAX(blob_use, (struct blob_use *)&ix->blob_use);
	if (k == IX_AC)
		return RB_MAX(ac_use, (struct ac_use *)&ix->ac_use);
	return RB_MAX(art_use, (struct art_use *)&ix->art_use);
}

static const void *k_prev(ix_kind k, const void *p)
{
	if (k == IX_BLOB)
		return RB_PREV(blob_use, NULL, (ix_blob *)p);
	if (k == IX_AC)
		return RB_PREV(ac_use, NULL, (ix_ac *)p);
	return RB_PREV(art_use, NULL, (ix_art *)p);
}

/* The first node at or after (t, id) in last-use order, or NULL. */
static const void *k_nfind(const srv_index *ix, ix_kind k, const struct timespec *t, const char *id)
{
	if (k == IX_BLOB) {
		ix_blob key;
		key.used = *t;
		snprintf(key.digest, sizeof key.digest, "%s", id);
		return RB_NFIND(blob_use, (struct blob_use *)&ix->blob_use, &key);
	}
	if (k == IX_AC) {
		ix_ac key;
		key.used = *t;
		snprintf(key.key, sizeof key.key, "%s", id);
		return RB_NFIND(ac_use, (struct ac_use *)&ix->ac_use, &key);
	}
	ix_art key;
	key.used = *t;
	snprintf(key.id, sizeof key.id, "%s", id);
	return RB_NFIND(art_use, (struct art_use *)&ix->art_use, &key);
}

/* The listing is in descending (last use, kind, id) order: the newest
 * node of kind k after cursor c. "g" sorts after every hex id. */
static const void *k_start(const srv_index *ix, ix_kind k, const ix_cursor *c)
{
	const void *n;

	if (!c)
		return k_max(ix, k);
	n = k_nfind(ix, k, &c->used, k == c->kind ? c->id : k < c->kind ? "g" : "");
	return n ? k_prev(k, n) : k_max(ix, k);
}

/* 1 when (kind a, node x) comes before (kind b, node y) in the listing. */
static int k_before(ix_kind a, const void *x, ix_kind b, const void *y)
{
	int c = ts_cmp(k_used(a, x), k_used(b, y));

	if (c)
		return c > 0;
	if (a != b)
		return a > b;
	return strcmp(k_id(a, x), k_id(b, y)) > 0;
}

static void k_fill(ix_kind k, const void *p, ix_entry *e)
{
	memset(e, 0, sizeof *e);
	e->kind = k;
	e->used = *k_used(k, p);
	snprintf(e->id, sizeof e->id, "%s", k_id(k, p));
	if (k == IX_BLOB) {
		e->bytes = (int64_t)((const ix_blob *)p)->size;
	} else if (k == IX_AC) {
		e->bytes = -1;
		memcpy(e->art, ((const ix_ac *)p)->art, 65);
	} else {
		e->bytes = (int64_t)((const ix_art *)p)->bytes;
	}
}

int ix_page(const srv_index *ix, unsigned mask, const ix_cursor *from, int limit, ix_entry *out,
	    int *more)
{
	const void *cur[IX_NKINDS];
	int k, n = 0;

	for (k = 0; k < IX_NKINDS; k++)
		cur[k] = mask & (1u << k) ? k_start(ix, (ix_kind)k, from) : NULL;
	for (;;) {
		int best = -1;
		for (k = 0; k < IX_NKINDS; k++)
			if (cur[k] && (best < 0 || k_before((ix_kind)k, cur[k], (ix_kind)best, cur[best])))
				best = k;
		if (best < 0 || n == limit) {
			*more = best >= 0;
			return n;
		}
		k_fill((ix_kind)best, cur[best], &out[n++]);
		cur[best] = k_prev((ix_kind)best, cur[best]);
	}
}

/* ---- reconciling with the disk -------------------------------------------------- */

void ix_mark(srv_index *ix)
{
	ix->gen++;
}

int ix_seen(srv_index *ix, ix_kind kind, const char *id)
{
	ix_blob *b;
	ix_art *a;
	ix_ac *e;

	switch (kind) {
	case IX_BLOB:
		if (!(b = blob_find(ix, id)))
			return 0;
		b->gen = ix->gen;
		return 1;
	case IX_ARTIFACT:
		if (!(a = art_find(ix, id)))
			return 0;
		a->gen = ix->gen;
		return 1;
	case IX_AC:
		if (!(e = ac_find(ix, id)))
			return 0;
		e->gen = ix->gen;
		return 1;
	default:
		return 0;
	}
}

int ix_sweep(srv_index *ix)
{
	ix_blob *b, *bn;
	ix_art *a, *an;
	ix_ac *e, *en;
	int n = 0;

	RB_FOREACH_SAFE(b, blob_id, &ix->blob_id, bn)
		if (b->gen != ix->gen)
			n += ix_blob_del(ix, b->digest, NULL);
	RB_FOREACH_SAFE(a, art_id, &ix->art_id, an)
		if (a->gen != ix->gen)
			n += ix_art_del(ix, a->id);
	RB_FOREACH_SAFE(e, ac_id, &ix->ac_id, en)
		if (e->gen != ix->gen)
			n += ix_ac_del(ix, e->key);
	return n;
}

/* artifact_lru.c: the loaded artifacts (enpu_artifact handles) the job
 * workers share, a few slots in least-recently-used order; a handle in use
 * is never freed, a dropped artifact's handle goes stale (artifact.h:
 * srv_artifact_get, srv_artifact_release). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "srv.h"
#include "artifact.h"
#include "artifact_int.h"

#define LRU_SLOTS 8

/* ---- loaded handles ------------------------------------------------------ */

/* stale: its directory was dropped while the handle was in use; it is
 * freed at the last release and never handed out again. */
typedef struct slot {
	char dir[4300];
	enpu_artifact *a;
	int refs;
	int stale;
	unsigned long used;
} slot;

static slot lru[LRU_SLOTS];
static unsigned long lru_clock;
static pthread_mutex_t lru_mu = PTHREAD_MUTEX_INITIALIZER;

/* Keep handle a of dir with refs users: in a free slot or in place of the
 * least recently used one nobody uses. 0 when every slot is in use (a is
 * then not kept: the caller owns it). */
int srv_artifact_lru_put(const char *dir, enpu_artifact *a, int refs)
{
	int i, victim = -1;

	pthread_mutex_lock(&lru_mu);
	for (i = 0; i < LRU_SLOTS; i++) {
		if (!lru[i].a) {
			victim = i;
			break;
		}
		if (lru[i].refs == 0 && (victim < 0 || lru[i].used < lru[victim].used))
			victim = i;
	}
	if (victim >= 0) {
		if (lru[victim].a)
			enpu_artifact_free(lru[victim].a);
		snprintf(lru[victim].dir, sizeof lru[victim].dir, "%s", dir);
		lru[victim].a = a;
		lru[victim].refs = refs;
		lru[victim].stale = 0;
		lru[victim].used = ++lru_clock;
	}
	pthread_mutex_unlock(&lru_mu);
	return victim >= 0;
}

int srv_artifact_get(srv_cas *c, const char *id, const enpu_limits *lim,
		     enpu_artifact **out, enpu_err *e)
{
	*out = NULL;
	/* The files on disk, every time (a stat each when unchanged): a handle
	 * in memory must not hide a corrupted cache. */
	if (!srv_artifact_verify(c, id, NULL, e))
		return -1;
	return srv_artifact_get_checked(c, id, lim, out, e);
}

int srv_artifact_get_checked(srv_cas *c, const char *id, const enpu_limits *lim,
			     enpu_artifact **out, enpu_err *e)
{
	char dir[4300];
	enpu_artifact *a = NULL;
	int i;

	*out = NULL;
	/* No stat of dir: the caller's check has just stated every file, and
	 * a drop since marks the handle stale (lru_forget); a load of a
	 * directory gone meanwhile fails below. */
	srv_artifact_dir(c, id, dir, sizeof dir);
	pthread_mutex_lock(&lru_mu);
	for (i = 0; i < LRU_SLOTS; i++)
		if (lru[i].a && !lru[i].stale && !strcmp(lru[i].dir, dir)) {
			lru[i].refs++;
			lru[i].used = ++lru_clock;
			*out = lru[i].a;
			pthread_mutex_unlock(&lru_mu);
			return 0;
		}
	pthread_mutex_unlock(&lru_mu);

	/* Load outside the lock: it reads every file (hashed by the check
	 * above: not again). */
	srv_cas_count(c, SRV_EV_LOAD, 0);
	if (enpu_artifact_load_ex(dir, lim, ENPU_LOAD_TRUSTED, &a, e) != 0) {
		/* removed while we read it (an eviction's drop, as in
		 * srv_artifact_verify): gone, not damaged */
		if (!srv_artifact_present(c, id))
			enpu_fail(e, ENPU_E_NOT_FOUND, id, "compile it, or import it with PUT "
				  API_ARTIFACTS "{id}", "no artifact '%s' on this server (evicted)", id);
		return -1;
	}
	if (strcmp(enpu_artifact_id(a), id) != 0) {
		enpu_fail(e, ENPU_E_ARTIFACT, id, NULL, "artifact directory '%.12s' holds artifact "
			  "'%.12s'", id, enpu_artifact_id(a));
		enpu_artifact_free(a);
		return -1;
	}
	srv_artifact_lru_put(dir, a, 1);
	/* No free slot (all in use): the caller gets a private handle. */
	*out = a;
	return 0;
}

void srv_artifact_release(enpu_artifact *a)
{
	int i;

	if (!a)
		return;
	pthread_mutex_lock(&lru_mu);
	for (i = 0; i < LRU_SLOTS; i++)
		if (lru[i].a == a) {
			if (--lru[i].refs == 0 && lru[i].stale) {
				enpu_artifact_free(lru[i].a);
				memset(&lru[i], 0, sizeof lru[i]);
			}
			pthread_mutex_unlock(&lru_mu);
			return;
		}
	pthread_mutex_unlock(&lru_mu);
	enpu_artifact_free(a);
}

void srv_artifact_lru_forget(const char *dir)
{
	int i;

	pthread_mutex_lock(&lru_mu);
	for (i = 0; i < LRU_SLOTS; i++) {
		if (!lru[i].a || strcmp(lru[i].dir, dir) != 0)
			continue;
		if (lru[i].refs == 0) {
			enpu_artifact_free(lru[i].a);
			memset(&lru[i], 0, sizeof lru[i]);
		} else {
			lru[i].stale = 1;
		}
	}
	pthread_mutex_unlock(&lru_mu);
}

void srv_artifact_cache_clear(void)
{
	int i;

	pthread_mutex_lock(&lru_mu);
	for (i = 0; i < LRU_SLOTS; i++)
		if (lru[i].a && lru[i].refs == 0) {
			enpu_artifact_free(lru[i].a);
			memset(&lru[i], 0, sizeof lru[i]);
		}
	pthread_mutex_unlock(&lru_mu);
}

/* artifact_int.h: what artifact.c and artifact_lru.c share inside the
 * cache. */
#ifndef SRV_ARTIFACT_INT_H
#define SRV_ARTIFACT_INT_H

#include "enpu.h"

/* Keep handle a of the artifact directory dir with refs users: in a free
 * slot or in place of the least recently used one nobody uses. 0 when
 * every slot is in use (a is then not kept: the caller owns it). */
int srv_artifact_lru_put(const char *dir, enpu_artifact *a, int refs);
/* dir was dropped: its handle is freed, or marked stale while in use. */
void srv_artifact_lru_forget(const char *dir);

#endif

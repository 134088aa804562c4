/* jobs_owner.c: who may see a job. Every job records the identity that
 * submitted it (srv_jobreq.owner, shown as "owner"); srv_ident_owns
 * decides (an admin, or the same name). Routes ask here before they show,
 * stream or cancel a job, and before they hand out a blob a job uses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "jobs_int.h"

#define USES_MIN 1024
#define ANY_OWNER "\001"       /* no name holds it: the key of "any owner" */

typedef struct juse {
	struct juse *next;
	unsigned h;
	int n;                     /* jobs that use it */
	char key[sizeof ((job *)0)->owner + 1 + 65];   /* owner '\n' digest */
} juse;

/* A key is owner '\n' digest. It is hashed and compared in place, never
 * formatted: this runs a dozen times a job, under the table's lock. A part too
 * long for the key is no key (-1): nothing is counted or found under it. */
static int use_hash(const char *owner, const char *digest, unsigned *h)
{
	uint64_t x = 0xcbf29ce484222325ull;   /* FNV-1a, as jobs_hash_id */
	size_t no = strlen(owner), nd = strlen(digest), i;

	if (no + 1 + nd >= sizeof ((juse *)0)->key)
		return -1;
	for (i = 0; i < no; i++)
		x = (x ^ (unsigned char)owner[i]) * 0x100000001b3ull;
	x = (x ^ '\n') * 0x100000001b3ull;
	for (i = 0; i < nd; i++)
		x = (x ^ (unsigned char)digest[i]) * 0x100000001b3ull;
	*h = (unsigned)(x ^ (x >> 32));
	return 0;
}

static int use_is(const juse *u, const char *owner, const char *digest)
{
	size_t no = strlen(owner);

	return !strncmp(u->key, owner, no) && u->key[no] == '\n' && !strcmp(u->key + no + 1, digest);
}

static juse **use_slot(srv_jobs *j, const char *owner, const char *digest, unsigned h)
{
	juse **pp = &j->uses[h & j->umask];

	for (; *pp; pp = &(*pp)->next)
		if ((*pp)->h == h && use_is(*pp, owner, digest))
			break;
	return pp;
}

/* Twice the buckets past one entry per bucket; a failed growth keeps the
 * table (longer chains, still right). */
static void uses_grow(srv_jobs *j)
{
	unsigned n = (j->umask + 1) * 2, i;
	juse **nu;

	if (j->n_uses <= j->umask + 1 || n == 0 || !(nu = calloc(n, sizeof *nu)))
		return;
	for (i = 0; i <= j->umask; i++)
		for (juse *u = j->uses[i], *next; u; u = next) {
			next = u->next;
			u->next = nu[u->h & (n - 1)];
			nu[u->h & (n - 1)] = u;
		}
	free(j->uses);
	j->uses = nu;
	j->umask = n - 1;
}

/* delta +1 / -1 on one key. Out of memory: the entry is missing, so the
 * blob reads as not used (refused, never wrongly granted). */
static void use_count(srv_jobs *j, const char *owner, const char *digest, int delta)
{
	unsigned h;
	juse **pp, *u;

	if (use_hash(owner, digest, &h) != 0)
		return;
	if (!j->uses) {
		if (delta < 0 || !(j->uses = calloc(USES_MIN, sizeof *j->uses)))
			return;
		j->umask = USES_MIN - 1;
	}
	pp = use_slot(j, owner, digest, h);
	if ((u = *pp)) {
		if ((u->n += delta) <= 0) {
			*pp = u->next;
			free(u);
			j->n_uses--;
		}
		return;
	}
	if (delta < 0 || !(u = calloc(1, sizeof *u)))
		return;
	u->h = h;
	u->n = delta;
	snprintf(u->key, sizeof u->key, "%s\n%s", owner, digest);   /* once per new key */
	u->next = j->uses[h & j->umask];
	j->uses[h & j->umask] = u;
	j->n_uses++;
	uses_grow(j);
}

void jobs_uses_job(srv_jobs *j, const job *jb, const char *digest, int delta)
{
	if (!digest[0])
		return;
	use_count(j, jb->owner, digest, delta);
	use_count(j, ANY_OWNER, digest, delta);
}

void jobs_uses_free(srv_jobs *j)
{
	if (!j->uses)
		return;
	for (unsigned i = 0; i <= j->umask; i++)
		for (juse *u = j->uses[i], *next; u; u = next) {
			next = u->next;
			free(u);
		}
	free(j->uses);
	j->uses = NULL;
	j->n_uses = 0;
}

static int used_by(srv_jobs *j, const char *owner, const char *digest)
{
	unsigned h;

	return use_hash(owner, digest, &h) == 0 && j->uses && *use_slot(j, owner, digest, h) != NULL;
}

int srv_jobs_visible(srv_jobs *j, const char *id, const srv_ident *who)
{
	const job *jb;
	int ok;

	pthread_mutex_lock(&j->mu);
	jb = jobs_find(j, id);
	ok = jb && srv_ident_owns(who, jb->owner);
	pthread_mutex_unlock(&j->mu);
	return ok;
}

int srv_jobs_uses(srv_jobs *j, const srv_ident *who, const char *digest)
{
	int ok;

	if (!who || !(who->admin || srv_ident_owns(who, who->name)))
		return 0;
	pthread_mutex_lock(&j->mu);
	ok = used_by(j, who->admin ? ANY_OWNER : who->name, digest);
	pthread_mutex_unlock(&j->mu);
	return ok;
}

/* jobs_owner.c: who may see a job. Every job records the identity that
 * submitted it (srv_jobreq.owner, shown as "owner"); srv_ident_owns
 * decides (an admin, or the same name). Routes ask here before they show,
 * stream or cancel a job, and before they hand out a blob a job uses. */
#include <string.h>
#include "jobs_int.h"

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
	int ok = 0;

	pthread_mutex_lock(&j->mu);
	for (const job *jb = j->newest; jb && !ok; jb = jb->aprev) {
		if (!srv_ident_owns(who, jb->owner))
			continue;
		ok = !strcmp(jb->input, digest) || (jb->state == S_SUCCEEDED &&
			(!strcmp(jb->result, digest) || !strcmp(jb->report, digest)));
	}
	pthread_mutex_unlock(&j->mu);
	return ok;
}

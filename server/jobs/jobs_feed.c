/* jobs_feed.c: every job's changes in one sequence, for the event stream
 * of the whole table (GET /v1/events, the status page): a ring of the
 * last SRV_JOBS_FEED changes, each the job's id and owner (not its JSON:
 * a reader takes the job's current JSON when it sends, so a change costs
 * the job path a copy of two strings, and a wake-up only when a stream
 * waits). A reader that fell further behind than the ring is told so
 * (*reset) and starts again from the table itself. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "jobs_int.h"

int jobs_feed_init(srv_jobs *j)
{
	pthread_cond_init(&j->feed_cv, NULL);
	j->feed = calloc(SRV_JOBS_FEED, sizeof *j->feed);
	return j->feed ? 0 : -1;
}

void jobs_feed_free(srv_jobs *j)
{
	if (!j->feed)
		return;
	free(j->feed);
	j->feed = NULL;
	pthread_cond_destroy(&j->feed_cv);
}

void jobs_feed_push(srv_jobs *j, const job *jb)
{
	srv_feed_ev *ev = &j->feed[++j->feed_seq % SRV_JOBS_FEED];

	ev->seq = j->feed_seq;
	memcpy(ev->id, jb->id, sizeof ev->id);
	memcpy(ev->owner, jb->owner, sizeof ev->owner);
	if (j->feed_readers > 0)
		pthread_cond_broadcast(&j->feed_cv);
}

uint64_t srv_jobs_feed_seq(srv_jobs *j)
{
	uint64_t s;

	pthread_mutex_lock(&j->mu);
	s = j->feed_seq;
	pthread_mutex_unlock(&j->mu);
	return s;
}

int srv_jobs_feed_next(srv_jobs *j, uint64_t *since, double wait_s, srv_feed_ev *out, int cap,
		       int *reset)
{
	struct timespec until;
	int n = 0;

	*reset = 0;
	srv_realtime_after(wait_s > 0 ? wait_s : 0, &until);
	pthread_mutex_lock(&j->mu);
	j->feed_readers++;
	while (j->feed_seq <= *since && !j->stopping && wait_s > 0 &&
	       pthread_cond_timedwait(&j->feed_cv, &j->mu, &until) == 0)
		;
	j->feed_readers--;
	/* a number from before a restart, or too old for the ring */
	if (*since > j->feed_seq || j->feed_seq - *since > SRV_JOBS_FEED) {
		*reset = 1;
		*since = j->feed_seq;
	}
	while (*since < j->feed_seq && n < cap) {
		const srv_feed_ev *ev = &j->feed[++*since % SRV_JOBS_FEED];
		out[n++] = *ev;
	}
	n = j->stopping && !n ? -1 : n;
	pthread_mutex_unlock(&j->mu);
	return n;
}

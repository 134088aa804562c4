/* routes_pending.c: TEMPORARY placeholders for routes being written right
 * now (jobs list and events, cache management). Each answers 404 so the
 * tree builds; the engineers implementing them delete this file. */
#include "srv.h"
#include "routes.h"

#define PENDING(fn) void fn(srv_ctx *ctx, srv_req *r) \
	{ (void)ctx; srv_reply_fail(r, ENPU_E_NOT_FOUND, NULL, "not available yet"); }

PENDING(srv_list_jobs)
PENDING(srv_get_job_events)
PENDING(srv_get_cache_stats)
PENDING(srv_get_cache_entries)
PENDING(srv_delete_cache_entry)
PENDING(srv_post_cache_gc)

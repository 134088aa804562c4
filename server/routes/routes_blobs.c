/* routes_blobs.c: the CAS over HTTP. POST /v1/blobs/missing answers which
 * digests the server lacks; PUT /v1/blobs/{sha256} stores a streamed upload
 * once its bytes hash to the digest (idempotent); GET/HEAD fetch. A blob
 * is verified (srv_cas_verify) before it is called present or sent: one
 * with the wrong bytes is dropped and answers as missing, so the client
 * uploads it again. A blob is readable only by those who uploaded it, own a
 * job that uses it, or are admins (docs/access.md); to anyone else it is
 * missing, and uploading its bytes makes it theirs too. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <json-c/json.h>
#include "buf.h"
#include "srv.h"
#include "digest.h"
#include "cas.h"
#include "jobs.h"
#include "routes.h"

#define MAX_DIGESTS 100000

int srv_blob_readable(srv_ctx *ctx, srv_req *r, const char *digest)
{
	const srv_ident *who = srv_req_who(r);

	if (who->admin)
		return 1;
	if (!srv_ident_owns(who, who->name))   /* nobody */
		return 0;
	return srv_owners_has(ctx->cas, digest, who->name) ||
	       srv_jobs_uses(ctx->jobs, who, digest);
}

/* The caller proved it holds digest's bytes (an upload that hashed to it):
 * it may read the blob from now on. */
void srv_blob_uploaded(srv_ctx *ctx, srv_req *r, const char *digest)
{
	enpu_err e = ENPU_ERR_INIT;

	if (srv_owners_add(ctx->cas, digest, srv_req_who(r)->name, &e) != 0)
		srv_log("warn", "req=%s cache: cannot record the uploader of %s: %s",
			srv_req_id(r), digest, e.message);
}

void srv_post_blobs_missing(srv_ctx *ctx, srv_req *r)
{
	json_object *arr, *missing, *o;
	size_t i, n;

	if (!json_object_object_get_ex(srv_req_json(r), F_DIGESTS, &arr) ||
	    !json_object_is_type(arr, json_type_array)) {
		srv_reply_fail(r, ENPU_E_BAD_REQUEST, F_DIGESTS,
			       "field '" F_DIGESTS "' is required: a list of sha256 digests");
		return;
	}
	n = json_object_array_length(arr);
	if (n > MAX_DIGESTS) {
		srv_reply_fail(r, ENPU_E_TOO_LARGE, F_DIGESTS, "%zu digests in one request (at most %d)",
			       n, MAX_DIGESTS);
		return;
	}
	for (i = 0; i < n; i++) {
		json_object *d = json_object_array_get_idx(arr, i);
		if (!json_object_is_type(d, json_type_string) || json_object_get_string_len(d) != 64 ||
		    !enpu_is_sha256_hex(json_object_get_string(d))) {
			srv_reply_fail(r, ENPU_E_BAD_REQUEST, F_DIGESTS,
				       "'" F_DIGESTS "[%zu]' is not a sha256 digest (64 lowercase hex): '%.80s'",
				       i, json_object_get_string(d));
			return;
		}
	}
	missing = json_object_new_array();
	for (i = 0; i < n; i++) {
		const char *d = json_object_get_string(json_object_array_get_idx(arr, i));
		/* a blob the caller may not read is missing to it: it uploads
		 * the bytes, and so proves it has them */
		if (!srv_cas_verify(ctx->cas, d, NULL) || !srv_blob_readable(ctx, r, d)) {
			srv_cas_count(ctx->cas, SRV_EV_CAS_MISS, 0);
			json_object_array_add(missing, json_object_new_string(d));
		} else {
			srv_cas_count(ctx->cas, SRV_EV_CAS_HIT, 0);
			srv_cas_touch(ctx->cas, d);   /* about to be used */
		}
	}
	o = json_object_new_object();
	json_object_object_add(o, F_MISSING, missing);
	srv_reply_json(r, 200, o);
}

/* The digest the request names may be taken as the file's without
 * hashing its copy: its H_LOCAL_STAT is the file's identity as it is now
 * (inode, size, times to the nanosecond), and neither time is within the
 * last two seconds (a write within a time's granularity could leave it
 * unmoved). The claim comes from the client's digest record, which holds
 * a digest only under those conditions (client/digests.c), as git's index
 * and Bazel's digest cache do; the copy is then checked to have been made
 * from that very file (srv_upload_copy_fd). Its sender is the daemon's
 * own user, who owns the cache's files and could write a blob directly:
 * taking its word crosses no trust boundary. */
static int vouched_for(const char *claim, const struct stat *sb)
{
	unsigned long long dev, ino, size;
	long long ms, cs;
	long mns, cns;
	int used = 0;
	struct stat c = {0};

	if (!claim || sscanf(claim, "%llu %llu %llu %lld.%ld %lld.%ld%n", &dev, &ino, &size, &ms, &mns,
			     &cs, &cns, &used) != 7 || claim[used] != '\0')
		return 0;
	c.st_dev = (dev_t)dev;
	c.st_ino = (ino_t)ino;
	c.st_size = (off_t)size;
	c.st_mtim = (struct timespec){(time_t)ms, mns};
	c.st_ctim = (struct timespec){(time_t)cs, cns};
	return enpu_stat_unchanged(&c, sb) && sb->st_mtim.tv_sec + 2 < time(NULL) &&
	       sb->st_ctim.tv_sec + 2 < time(NULL);
}

/* The upload of PUT with X-Eulernpu-Local-File: the file copied by the
 * daemon, for its own user only (who could read the file anyway); NULL
 * after a reply. */
static srv_upload *local_upload(srv_ctx *ctx, srv_req *r, const char *path, const char *want)
{
	enpu_err e = ENPU_ERR_INIT;
	srv_upload *u = NULL;
	struct stat sb;
	int fd;

	if (!srv_req_is_own_user(r)) {
		srv_reply_fail(r, ENPU_E_FORBIDDEN, H_LOCAL_FILE,
			       H_LOCAL_FILE " is for the daemon's own user over its Unix socket: "
			       "send the bytes as the body");
		return NULL;
	}
	if (path[0] != '/' || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		srv_reply_fail(r, ENPU_E_BAD_REQUEST, H_LOCAL_FILE, "cannot read '%.200s': %s", path,
			       path[0] != '/' ? "not an absolute path" : strerror(errno));
		return NULL;
	}
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		srv_reply_fail(r, ENPU_E_BAD_REQUEST, H_LOCAL_FILE, "'%.200s' is not a regular file",
			       path);
		close(fd);
		return NULL;
	}
	if ((uint64_t)sb.st_size > ctx->cfg.max_upload) {
		enpu_fail(&e, ENPU_E_TOO_LARGE, H_LOCAL_FILE,
			  "send a smaller file, or raise the server's --max-upload",
			  "'%.200s' has %lld bytes, more than the limit of %llu bytes (--max-upload)",
			  path, (long long)sb.st_size, (unsigned long long)ctx->cfg.max_upload);
	} else if ((u = srv_upload_begin(ctx->cas, &e)) &&
		   srv_upload_copy_fd(u, fd, (uint64_t)sb.st_size,
				      enpu_is_sha256_hex(want) &&
				      vouched_for(srv_req_header(r, H_LOCAL_STAT), &sb) ? want : NULL,
				      &sb, &e) != 0) {
		srv_upload_abort(u);
		u = NULL;
	}
	close(fd);
	if (e.code) {
		srv_reply_error(r, &e, NULL);
		return NULL;
	}
	return u;
}

void srv_put_blob(srv_ctx *ctx, srv_req *r)
{
	srv_upload *u = srv_req_take_upload(r);
	const char *want = srv_req_param(r, 0), *local = srv_req_header(r, H_LOCAL_FILE);
	enpu_err e = ENPU_ERR_INIT;
	char dig[65];
	int existed = 0, vouched;
	uint64_t n;
	json_object *o;

	if (!u && local && !(u = local_upload(ctx, r, local, want)))
		return;
	if (!u) {
		srv_reply_fail(r, ENPU_E_INTERNAL, NULL, "no upload in progress");
		return;
	}
	n = srv_upload_bytes(u);
	vouched = srv_upload_vouched(u);
	if (srv_upload_finish(u, want, dig, &existed, &e) != 0) {
		snprintf(e.where, sizeof e.where, API_BLOBS "%s", want);
		srv_reply_error(r, &e, NULL);
		return;
	}
	srv_blob_uploaded(ctx, r, dig);
	if (!existed) {
		atomic_fetch_add(&ctx->blobs_received, 1);
		atomic_fetch_add(&ctx->blobs_bytes_received, n);
		if (local)
			atomic_fetch_add(&ctx->blobs_local, 1);
		if (vouched)
			atomic_fetch_add(&ctx->blobs_local_vouched, 1);
	}
	o = json_object_new_object();
	json_object_object_add(o, F_SHA256, json_object_new_string(dig));
	json_object_object_add(o, F_BYTES, json_object_new_int64((int64_t)n));
	json_object_object_add(o, "created", json_object_new_boolean(!existed));
	srv_reply_json(r, existed ? 200 : 201, o);
	if (!existed)
		srv_cache_enforce(ctx);
}

void srv_get_blob(srv_ctx *ctx, srv_req *r)
{
	const char *d = srv_req_param(r, 0);
	char path[4300];

	if (!enpu_is_sha256_hex(d)) {
		srv_reply_fail(r, ENPU_E_BAD_REQUEST, d,
			       "'%.80s' is not a sha256 digest (64 lowercase hex)", d);
		return;
	}
	/* Hashed before it is sent (once per change of the file, see cas.h):
	 * bad bytes never leave, at the cost of one extra read of the blob. */
	/* another's blob answers as an absent one: nothing says it exists */
	if (!srv_cas_verify(ctx->cas, d, NULL) || !srv_blob_readable(ctx, r, d)) {
		srv_cas_count(ctx->cas, SRV_EV_CAS_MISS, 0);
		srv_reply_fail(r, ENPU_E_NOT_FOUND, d, "blob %s is not on the server", d);
		return;
	}
	srv_cas_count(ctx->cas, SRV_EV_CAS_HIT, 0);
	srv_cas_touch(ctx->cas, d);
	srv_cas_blob_path(ctx->cas, d, path, sizeof path);
	srv_reply_file(r, path, "application/octet-stream");
}

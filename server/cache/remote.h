/* remote.h: the remote cache tier (remote.c: the reads and the state;
 * remote_push.c: the uploads, in a thread of their own; remote_sign.c:
 * Ed25519 keys and the signed action-cache entries). In front of the
 * local cache, an HTTP cache of the layout bazel-remote, nginx WebDAV and
 * S3 gateways serve:
 *   GET/HEAD/PUT <url>/cas/<sha256>   a blob, by the SHA-256 of its bytes
 *   GET/PUT      <url>/ac/<key>       an action-cache entry (a signed JSON
 *                                     document, srv_rentry_make)
 * A local miss asks the remote: the entry must carry a trusted signature
 * and name the key it was looked up by; its manifest and the files the
 * cache lacks are fetched, each checked against its digest, and imported
 * as an untrusted manifest is (srv_artifact_import_stored: not hashed
 * again, the weights' arrays not read); the manifest must
 * give back the key (compiler, backend, target, spec, weights). After a
 * local compile (mode readwrite), its files, its manifest and last its
 * entry are written to the remote from a bounded queue, by a thread:
 * never in the compile's way. A failing or slow remote (each call bounded
 * by --remote-cache-timeout) is "degraded": the daemon works from its
 * local cache alone and probes the remote again after
 * --remote-cache-backoff seconds. docs/architecture.md, "Remote cache". */
#ifndef SRV_REMOTE_H
#define SRV_REMOTE_H

#include <stddef.h>
#include <stdint.h>
#include "err.h"
#include "buf.h"

struct srv_cas;
struct json_object;

/* ---- keys and entries (remote_sign.c) ------------------------------------ */

#define SRV_REMOTE_TRUST_MAX 32     /* --remote-cache-trust keys at most */
#define SRV_RENTRY_MAX       4096   /* bytes of an entry document at most */
#define SRV_RKEY_FILE_MAX    65536  /* bytes of a PEM key file at most */

typedef struct srv_rkeys {
	void *sign;                 /* EVP_PKEY * (Ed25519) of the sign key, or NULL */
	unsigned char pub[SRV_REMOTE_TRUST_MAX + 1][32];   /* trusted raw public keys */
	int n_pub;                  /* the sign key's own public half is the first */
} srv_rkeys;

/* A PEM Ed25519 private key (as `openssl genpkey -algorithm ed25519`
 * makes) as the sign key, its public half trusted; or a PEM public key
 * trusted. label names the text in errors. 0, or -1 + *e (E0816). */
int srv_rkeys_add_private(srv_rkeys *k, const char *pem, size_t len, const char *label,
			  enpu_err *e);
int srv_rkeys_add_public(srv_rkeys *k, const char *pem, size_t len, const char *label,
			 enpu_err *e);
/* The same from files: the private key's file must be a regular file
 * that others may neither read nor write (as a token file); a public key
 * a regular file. Both at most SRV_RKEY_FILE_MAX bytes. */
int srv_rkeys_load(srv_rkeys *k, const char *sign_path, const char *const *trust, int n_trust,
		   enpu_err *e);
void srv_rkeys_free(srv_rkeys *k);

/* What an entry says: compile key -> artifact id, and the digest of the
 * artifact's manifest.json (its blob in /cas/). */
typedef struct srv_rentry {
	char key[65], id[65], manifest[65];
} srv_rentry;

/* The entry document, signed with k's sign key: {"format":
 * "eulernpu-remote-ac", "version": 1, "key", "artifact_id", "manifest",
 * "signer" (the raw public key, hex), "signature" (Ed25519 over
 * "eulernpu-ac-v1\n<key>\n<artifact_id>\n<manifest>\n", hex)}. 0, or -1 + *e. */
int srv_rentry_make(const srv_rkeys *k, const srv_rentry *en, enpu_buf *out, enpu_err *e);

/* Why an entry was refused (counted apart: untrusted vs broken). */
typedef enum srv_rentry_verdict {
	SRV_RENTRY_OK = 0,
	SRV_RENTRY_BAD,            /* not an entry: size, JSON, fields, hex */
	SRV_RENTRY_UNTRUSTED,      /* signer not among the trusted keys */
	SRV_RENTRY_BADSIG,         /* the signature does not verify */
	SRV_RENTRY_OTHER_KEY       /* signed, but for another key than asked */
} srv_rentry_verdict;
/* Parse text (len bytes, at most SRV_RENTRY_MAX) and check it: every
 * field, the signer trusted by k, the signature, and want_key (NULL: any).
 * The verdict; on SRV_RENTRY_OK *out is filled; else e says why. */
srv_rentry_verdict srv_rentry_check(const srv_rkeys *k, const char *text, size_t len,
				    const char *want_key, srv_rentry *out, enpu_err *e);

/* ---- the tier (remote.c, remote_push.c) ------------------------------------ */

typedef struct srv_remote srv_remote;

typedef struct srv_remote_cfg {
	const char *url;            /* http(s)://host[:port][/prefix] */
	const char *mode;           /* "read" or "readwrite" (NULL: read) */
	const char *token_file;     /* bearer token, or NULL */
	const char *cacert;         /* CA file for https, or NULL */
	const char *sign_key;       /* PEM Ed25519 private key, or NULL */
	const char *const *trust;   /* PEM public keys */
	int n_trust;
	int timeout_ms;             /* a call's connect and small-answer bound; a blob
				     * transfer that stalls this long is dropped */
	int backoff_s;              /* a degraded remote is probed again after this */
	int queue_max;              /* artifacts waiting for upload at most */
	int miss_ttl_s;             /* a key that missed is not asked again for this
				     * long (0: asked every time) */
} srv_remote_cfg;

/* Check the configuration and read the files it names (before any
 * thread): NULL + *e (E0816) when it is wrong. Nothing is contacted. */
srv_remote *srv_remote_new(const srv_remote_cfg *cfg, enpu_err *e);
/* Start the uploader over the open cache. 0, or -1 + *e. */
int srv_remote_start(srv_remote *rc, struct srv_cas *c, const enpu_limits *lim, enpu_err *e);
/* Stop the uploader (a transfer in flight is cut; what is queued is
 * dropped and logged) and free rc. NULL is a no-op. */
void srv_remote_free(srv_remote *rc);

/* key's artifact from the remote: 1 when the remote holds a trusted entry
 * for key whose manifest gives key back, and the artifact is now in the
 * local cache with key's entry (id filled); 0 when not (a miss, an entry
 * refused, a remote degraded or failing: counted and logged, never an
 * error of the caller's). Bounded by the configured timeouts. */
int srv_remote_fetch(srv_remote *rc, const char *key, char id[65]);
/* Queue key -> id (just compiled here) for upload: a no-op in mode read;
 * a full queue drops it (counted). Never waits for the remote. */
void srv_remote_push(srv_remote *rc, const char *key, const char *id);

/* The counters (/metrics) and the state (GET /v1/health). */
typedef struct srv_remote_stats {
	uint64_t hits, misses;       /* fetches: an artifact came / did not */
	uint64_t untrusted;          /* entries refused: signature, signer, key, manifest */
	uint64_t errors;             /* failed calls (transport, status, digest) */
	uint64_t bytes_in, bytes_out;
	uint64_t uploads;            /* entries written */
	uint64_t dropped;            /* uploads given up (queue full, retries spent) */
	int queued;
	int degraded;
} srv_remote_stats;
void srv_remote_stats_get(srv_remote *rc, srv_remote_stats *out);
/* {"state": "ok"|"degraded", "mode", "url", "queued", "last_error"?,
 * "retry_in"?}: a new object. */
struct json_object *srv_remote_health_json(srv_remote *rc);

#endif

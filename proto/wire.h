/* wire.h: what both sides of the API read and write the same way: the
 * error object {"code","message","where","fix"} to and from an enpu_err,
 * string fields, the one rule for a relative path that names a file of an
 * artifact, and the job JSON (GET /v1/jobs/{id}) read into a struct. */
#ifndef ENPU_WIRE_H
#define ENPU_WIRE_H

#include <stddef.h>
#include "err.h"

struct json_object;

/* o's string member key, or NULL (o NULL, no such key, not a string). */
const char *enpu_wire_str(struct json_object *o, const char *key);

/* err's code, message, where and fix as *e (reset first; a missing message
 * is the code's title): 0. When the code is missing or unknown, -1 and *e
 * reset only: the caller says whose error it was (*code and *msg, may be
 * NULL, get the strings as sent, or NULL). */
int enpu_wire_err_from_json(struct json_object *err, enpu_err *e, const char **code,
			    const char **msg);

/* 1 when p is a safe relative path of at most max bytes: non-empty, not
 * absolute, no empty, "." or ".." component (so no trailing slash), no
 * backslash and no control character; else 0 (also for NULL). Pure. */
int enpu_wire_path_is_safe(const char *p, size_t max);

/* ---- error objects out ---------------------------------------------------- */

/* A JSON string of s (NULL = "") where each byte that is not valid UTF-8
 * becomes U+FFFD, so that strict parsers read every answer. */
struct json_object *enpu_wire_text(const char *s);

/* e as the API's error object {"code","title","message","where","fix",
 * "see"} (an empty fix is the code's default). The reader above takes it
 * back. Caller puts. */
struct json_object *enpu_wire_err_to_json(const enpu_err *e);

/* ---- job JSON in ----------------------------------------------------------- */

#define ENPU_WIRE_JOB_OUTPUTS 64    /* outputs a job may list */
#define ENPU_WIRE_RANK 8            /* dimensions of one output */
#define ENPU_WIRE_DIM_MAX 2147483647LL

typedef struct enpu_wire_output {
	char name[128];
	int ndim;
	long long dim[ENPU_WIRE_RANK];
} enpu_wire_output;

/* The body of GET /v1/jobs/{id} as the readers of a job need it. Strings
 * absent or null are "", numbers absent or null are -1 (has_* says). */
typedef struct enpu_wire_job {
	char id[65], state[16], backend[32], board[64], failure[16];
	char result[65], report[65];          /* sha256 hex or "" */
	char waiting[512];                    /* queued: why it waits, or "" */
	double seconds, eta;
	long long position, attempts;
	int n_outputs;
	enpu_wire_output outputs[ENPU_WIRE_JOB_OUTPUTS];
	struct json_object *error;            /* borrowed from the parsed object, or NULL */
} enpu_wire_job;

/* Read job JSON o into *j: every known field must have its type (string,
 * number or null; outputs an array of {name, shape} within the bounds
 * above, result and report sha256 hex, state one of the job states);
 * unknown fields are ignored. 0, or -1 with why (may be NULL) saying
 * which field is wrong. id and state are required. j->error points into
 * o. Pure. */
int enpu_wire_job_read(struct json_object *o, enpu_wire_job *j, char *why, size_t cap);

#endif

/* wire.h: what both sides of the API read the same way: the error object
 * {"code","message","where","fix"} as an enpu_err, string fields, and the
 * one rule for a relative path that names a file of an artifact. */
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

#endif

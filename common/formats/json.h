/* json.h: the json-c helpers shared by every JSON file the project reads or
 * writes (graph.json, plan.json, manifest.json, report.json, the API's
 * bodies): one output style, strict parsing, typed field access whose
 * errors name the file and the field, canonical forms. */
#ifndef ENPU_JSON_H
#define ENPU_JSON_H

#include <stdint.h>
#include <json-c/json.h>
#include "buf.h"
#include "err.h"

/* Maximum size of any JSON file of an artifact. */
#define ENPU_ARTIFACT_MAX_JSON (64u << 20)

/* Serialize o (pretty, two-space indent, no slash escapes, trailing
 * newline) appended to out: the same object gives the same bytes. */
int enpu_json_dump(struct json_object *o, enpu_buf *out, enpu_err *e);

/* Building objects without checking every call: add (or push) v, or, when
 * v is NULL (an allocation failed) or cannot be added, drop it and set
 * *bad. The caller checks *bad once at the end. */
void enpu_json_put(struct json_object *o, const char *k, struct json_object *v, int *bad);
void enpu_json_push(struct json_object *a, struct json_object *v, int *bad);
/* An integer-valued double as an integer ("1000"), else the shortest %.Ng
 * that reads back as the same double: canonical and exact. */
struct json_object *enpu_json_exact_double(double d);
/* qsort comparison of two const char * (strcmp order). */
int enpu_cmp_strptr(const void *a, const void *b);

/* Parse strict JSON of exactly len bytes. NULL with ENPU_E_ARTIFACT naming
 * label on any syntax error. Caller puts the result. */
struct json_object *enpu_json_parse(const char *text, size_t len, const char *label,
				    enpu_err *e);

/* Field access: o must be an object; key must exist with type t. Errors are
 * ENPU_E_ARTIFACT "<label>: <ctx>field 'key' ...". ctx may be "" or e.g.
 * "op 'fc1': ". The result is borrowed. */
struct json_object *enpu_json_field(struct json_object *o, const char *key, json_type t,
				    const char *label, const char *ctx, enpu_err *e);
/* An integer in [lo, hi]. */
int enpu_json_int(struct json_object *v, int64_t lo, int64_t hi, const char *label,
		  const char *what, int64_t *out, enpu_err *e);

/* A deep copy with object keys sorted (strcmp), recursively: the canonical
 * form used for target options. NULL in, NULL out. */
struct json_object *enpu_json_canonical(struct json_object *o);

#endif

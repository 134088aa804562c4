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

/* Add v under k, a string of static storage (a literal, a field name of
 * api.h): json-c keeps the pointer where json_object_object_add copies
 * the key (a malloc and a free a key: the job and report JSON of every
 * job hold about fifty). 0 or -1, as json_object_object_add. */
static inline int enpu_json_addc(struct json_object *o, const char *k, struct json_object *v)
{
	return json_object_object_add_ex(o, k, v, JSON_C_OBJECT_ADD_CONSTANT_KEY);
}

/* Building objects without checking every call: add (or push) v, or, when
 * v is NULL (an allocation failed) or cannot be added, drop it and set
 * *bad. The caller checks *bad once at the end. */
void enpu_json_put(struct json_object *o, const char *k, struct json_object *v, int *bad);
void enpu_json_push(struct json_object *a, struct json_object *v, int *bad);
/* An integer-valued double as an integer ("1000"), else the shortest %.Ng
 * that reads back as the same double: canonical and exact. */
struct json_object *enpu_json_exact_double(double d);
/* An array that serializes as text, verbatim: JSON the caller made once
 * and keeps (a loaded artifact's outputs), put into a reply without being
 * parsed and built again. In memory it is an empty array, so read text,
 * not it. NULL when memory runs out. */
struct json_object *enpu_json_raw(const char *text);
/* qsort comparison of two const char * (strcmp order). */
int enpu_cmp_strptr(const void *a, const void *b);

/* Before a json_tokener parse on this thread: json-c (0.16) copies the
 * thread's locale at every parse (duplocale, newlocale, freelocale), each
 * a malloc under glibc's one global locale lock unless the thread already
 * uses the C locale object, when all three are no-ops. So the first call
 * on a thread makes it use that object (the same as the process's "C"
 * locale: the project never sets another). enpu_json_parse calls it. */
void enpu_json_thread(void);

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

/* Reading back an object this project wrote (a manifest's target
 * options): every error is ENPU_E_ARTIFACT at label, "<what>: <message>",
 * fix "recompile the artifact". */
typedef struct enpu_jread {
	const char *label;     /* the file: "manifest.json" */
	const char *what;      /* the object: "npu_sim target" */
	enpu_err *e;
} enpu_jread;

int enpu_jread_fail(enpu_jread *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* o is an object with exactly the fields named (NULL-terminated): no
 * other, none missing; vals[i] gets fields[i]'s value (borrowed). */
int enpu_jread_fields(enpu_jread *r, struct json_object *o, const char *const *fields,
		      struct json_object **vals);
/* v is an integer in [lo, hi] / a finite number from 0 (excluded unless
 * zero_ok) to hi / one of names (NULL-terminated), its index. what names
 * the field in the message. */
int enpu_jread_int(enpu_jread *r, struct json_object *v, const char *what, int64_t lo,
		   int64_t hi, int64_t *out);
/* v is a list of exactly n integers, each in [lo, hi]. */
int enpu_jread_ints(enpu_jread *r, struct json_object *v, const char *what, size_t n, int64_t lo,
		    int64_t hi, int64_t *out);
int enpu_jread_num(enpu_jread *r, struct json_object *v, const char *what, int zero_ok,
		   double hi, double *out);
int enpu_jread_choice(enpu_jread *r, struct json_object *v, const char *what,
		      const char *const *names, int *idx);

/* A deep copy with object keys sorted (strcmp), recursively: the canonical
 * form used for target options. NULL in, NULL out. */
struct json_object *enpu_json_canonical(struct json_object *o);

#endif

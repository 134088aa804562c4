/* spec.h: spec.yaml (format v1, docs/spec-format.md): parsing with libyaml and
 * validation into an enpu_graph.
 *
 * The parser keeps the line and column of every node so that every error
 * names file:line:column. Aliases and anchors are bounded by
 * limits->max_yaml_nodes (counted after expansion) and nesting by
 * max_yaml_depth, so an alias bomb is an error, not a memory blow-up. */
#ifndef ENPU_SPEC_H
#define ENPU_SPEC_H

#include <stddef.h>
#include "ir.h"

struct json_object;

typedef struct enpu_spec enpu_spec;   /* opaque: the parsed, unvalidated file */

/* Parse YAML text. label is the file name used in errors ("spec.yaml").
 * Checks syntax and the schema (types, required/unknown fields, version);
 * references, shapes, and backends are the validator's. */
int enpu_spec_parse(const char *yaml, size_t len, const char *label,
		    const enpu_limits *lim, enpu_spec **out, enpu_err *e);
int enpu_spec_load(const char *path, const char *label, const enpu_limits *lim,
		   enpu_spec **out, enpu_err *e);
void enpu_spec_free(enpu_spec *s);

const char *enpu_spec_name(const enpu_spec *s);
const char *enpu_spec_label(const enpu_spec *s);      /* the file name used in errors */
const char *enpu_spec_backend(const enpu_spec *s);       /* default "cpu_ref" */
int enpu_spec_n_ops(const enpu_spec *s);
int enpu_spec_n_components(const enpu_spec *s);
/* targets.<backend> as JSON (borrowed, NULL when absent). */
struct json_object *enpu_spec_target(const enpu_spec *s, const char *backend);

/* Validate for a backend (NULL = the spec's own): names, references,
 * cycles, attributes, shape inference of every op, declared shapes, dtypes,
 * outputs produced, and the backend's capability (ENPU_E_LOWERING naming the
 * op, the backend and the backends that do lower it). On success *out is a
 * new graph (caller frees). */
int enpu_validate(const enpu_spec *s, const char *backend, enpu_graph **out, enpu_err *e);

#endif

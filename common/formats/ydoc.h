/* ydoc.h: the one limited YAML loader (libyaml events into a node tree that
 * keeps every node's line:col) and the helpers that read the tree: plain
 * scalars, allowed fields with did-you-mean, edit distance. */
#ifndef ENPU_YDOC_H
#define ENPU_YDOC_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include "ir.h"

enum { ENPU_YN_SCALAR, ENPU_YN_SEQ, ENPU_YN_MAP };

/* A YAML node. Aliases are not copied: an alias is one more pointer to the
 * anchored node, so the tree is a DAG and nodes are freed via the document. */
typedef struct enpu_ynode {
	int kind;
	int line, col;           /* 1-based start of the node */
	int plain;               /* scalar written without quotes or tag */
	char *text;              /* scalar, NUL-terminated */
	size_t len;
	struct enpu_ynode **kids; /* seq: n items; map: n pairs, kids[2i] key, kids[2i+1] value */
	size_t n, alloc;
	uint64_t size;           /* nodes in the subtree after alias expansion */
	int height;              /* 1 for a scalar */
} enpu_ynode;

typedef struct enpu_ydoc enpu_ydoc;   /* opaque: the node arena and the root */

/* How a document is loaded. The limits are the caller's documented
 * settings (enpu_limits for specs and target files, the config readers'
 * own constants for config files). */
typedef struct enpu_yaml_opts {
	const char *what;        /* the document in messages: "spec", "target file" */
	uint64_t max_bytes;      /* longer texts fail with ENPU_E_LIMIT */
	uint64_t max_nodes;      /* nodes counted after alias expansion */
	int max_depth;           /* nesting, also after alias expansion */
	enpu_code code;          /* 0: syntax errors ENPU_E_YAML, a second document
				  * ENPU_E_SCHEMA, limits ENPU_E_LIMIT (fix: raise the
				  * enpu_limits setting); else this code for every
				  * error (the limits being the caller's constants) */
	const char *invalid;     /* syntax error prefix; NULL: "invalid YAML" */
	const char *fix;         /* fix line of syntax errors; NULL for none */
	int no_aliases;          /* refuse anchors and aliases (config files) */
} enpu_yaml_opts;

/* Load one YAML document. Errors name label:line:col: syntax, a second
 * document, an undefined alias, and (ENPU_E_LIMIT) size, node count and
 * depth. An empty document (nothing, or only `~`) has a NULL root. On
 * success *doc is new (enpu_ydoc_free). */
int enpu_yaml_load(const char *text, size_t len, const char *label, const enpu_yaml_opts *o,
		   enpu_ydoc **doc, enpu_err *e);
/* A target file: enpu_yaml_load with the limits of lim (NULL: defaults). */
int enpu_yaml_parse(const char *text, size_t len, const char *label, const enpu_limits *lim,
		    enpu_ydoc **doc, enpu_err *e);
/* The root node (NULL when empty) and the file name errors use. */
const enpu_ynode *enpu_ydoc_root(const enpu_ydoc *d);
const char *enpu_ydoc_label(const enpu_ydoc *d);
void enpu_ydoc_free(enpu_ydoc *d);

/* Plain-scalar readers (YAML 1.2 core schema). 0 ok; -1 not of that type;
 * -2 (int only) out of range of int64. enpu_ynode_null: 1 when null. */
int enpu_ynode_int(const enpu_ynode *n, int64_t *v);
int enpu_ynode_float(const enpu_ynode *n, double *v);
int enpu_ynode_bool(const enpu_ynode *n, int *v);
int enpu_ynode_null(const enpu_ynode *n);
/* 1 when s, written as a plain scalar, reads back as null. */
int enpu_yaml_null_text(const char *s);
/* The value of key in a mapping (the first), or NULL. */
const enpu_ynode *enpu_ynode_get(const enpu_ynode *map, const char *key);

/* The allowed-fields check: split a mapping into the values of its allowed
 * keys (vals[i] for allowed[i], NULL when absent; keys[i] the key node, keys
 * may be NULL). Non-string keys, unknown keys (with the closest allowed one
 * as "did you mean") and duplicates fail with code at label:line:col of the
 * key. in_what ends every message ("at the top level", "in npu_sim"). */
enum {
	ENPU_YF_KEY = 0,         /* "unknown key 'x' IN (allowed: a, b); did you mean 'a'?" */
	ENPU_YF_FIELD = 1,       /* "unknown field 'x' IN (did you mean 'a'?)", fix "use one of: a, b" */
	ENPU_YF_NULL_ABSENT = 2  /* a key whose value is null counts as absent */
};
int enpu_yaml_fields(const enpu_ynode *map, const char *const *allowed, const char *in_what,
		     const char *label, enpu_code code, int flags, const enpu_ynode **keys,
		     const enpu_ynode **vals, enpu_err *e);

/* Fail with code at "label:line:col", the message printf-formatted, as
 * every error about a YAML node reads; returns -1. */
int enpu_yaml_fail(enpu_err *e, enpu_code code, const char *label, int line, int col,
		   const char *fix, const char *fmt, ...) __attribute__((format(printf, 7, 8)));
int enpu_yaml_failv(enpu_err *e, enpu_code code, const char *label, int line, int col,
		    const char *fix, const char *fmt, va_list ap);

/* ---- typed getters --------------------------------------------------- */

/* What the readers of one document share (a target file, targets.X of a
 * spec): every error is code at label:line:col of the offending node
 * (1:1 without one), with the three lines (code, message, fix). */
typedef struct enpu_yread {
	const char *label;
	enpu_code code;
	enpu_err *e;
} enpu_yread;

int enpu_yread_fail(const enpu_yread *r, const enpu_ynode *n, const char *fix, const char *fmt,
		    ...) __attribute__((format(printf, 4, 5)));
int enpu_yread_failv(const enpu_yread *r, const enpu_ynode *n, const char *fix, const char *fmt,
		     va_list ap);
/* A node for messages: a scalar's text, "[...]", "{...}", "" for NULL. */
const char *enpu_ynode_txt(const enpu_ynode *n);
/* An integer in [lo, hi]: "<what> must be an integer from lo to hi (got 'x')". */
int enpu_yread_int(const enpu_yread *r, const enpu_ynode *v, const char *what, int64_t lo,
		   int64_t hi, int64_t *out);
/* A finite number > 0 and at most hi (INFINITY: no bound): "<what> must
 * be a finite number greater than 0" / "... a number greater than 0 and at
 * most hi". */
int enpu_yread_pos(const enpu_yread *r, const enpu_ynode *v, const char *what, double hi,
		   const char *fix, double *out);
/* One of names (NULL-terminated) into *idx: "'field' must be one of a, b
 * (got 'x') (did you mean 'a'?)", fix "use one of: a, b". */
int enpu_yread_choice(const enpu_yread *r, const enpu_ynode *v, const char *field,
		      const char *const *names, int *idx);
/* A list of exactly n integers, each in [lo, hi]; else "<what> must be a
 * list of <shape>" with fix (an example), or the item's enpu_yread_int
 * error (item_what[i] names item i). */
int enpu_yread_ints(const enpu_yread *r, const enpu_ynode *v, const char *what, const char *shape,
		    const char *fix, size_t n, const char *const *item_what, int64_t lo,
		    int64_t hi, int64_t *out);

/* Levenshtein distance, capped: returns cap + 1 when larger (cheap on
 * long or very different strings). */
int enpu_edit_distance(const char *a, const char *b, int cap);
/* The closest of a NULL-terminated list of names (edit distance at most 2,
 * and less than the candidate's length), or NULL when none is close. */
const char *enpu_closest(const char *w, const char *const *cands);
/* "a, b, c" into buf, truncated to fit cap. */
void enpu_join(const char *const *list, char *buf, size_t cap);

#endif

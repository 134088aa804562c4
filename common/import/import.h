/* import.h: ONNX to spec v2. enpu_import turns a serialized ModelProto into
 * the text of a spec.yaml (`eulernpu: 2`) and the bytes of its weights.npz,
 * which validate, compile and run like any hand-written spec. Everything is
 * in memory: the CLI reads files and the daemon reads blobs, and both call
 * this one function (docs/import.md says what is mapped and how). */
#ifndef ENPU_IMPORT_H
#define ENPU_IMPORT_H

#include <stddef.h>
#include <stdint.h>
#include "buf.h"
#include "err.h"
#include "tensor.h"
#include "onnx_read.h"

/* `--input NAME=SHAPE`: binds a graph input's shape (every dim, symbolic
 * or not). Inputs not bound keep their fixed dims; a symbolic dim left
 * unbound is 1. */
typedef struct enpu_import_bind {
	const char *name;
	enpu_shape shape;
} enpu_import_bind;

/* Reads the bytes of an external-data tensor: `length` bytes (0 = to the
 * end of the file) at `offset` of the file `location` (as written in the
 * model, relative to the model's directory). Returns 0, or -1 with *e. The
 * importer checks location (no absolute path, no ".." component) before it
 * calls this, and checks the length it gets back. */
typedef int (*enpu_import_ext_fn)(void *ctx, const char *location, uint64_t offset,
				  uint64_t length, enpu_buf *out, enpu_err *e);

typedef struct enpu_import_opts {
	const char *name;                /* the spec's name; NULL: the graph's name,
					  * else "model" */
	const enpu_import_bind *bind;
	int n_bind;
	enpu_import_ext_fn ext;          /* NULL: external data is an error */
	void *ext_ctx;
	const enpu_onnx_limits *lim;     /* NULL: enpu_onnx_limits_default() */
} enpu_import_opts;

/* Import the ModelProto in model[0 .. len). label names it in errors (the
 * file name). On success spec gets the YAML text and weights the npz
 * bytes; on failure *e says why. A model with nodes the importer cannot map
 * fails once, listing every such node (name, op type, opset, reason). */
int enpu_import(const void *model, size_t len, const char *label,
		const enpu_import_opts *o, enpu_buf *spec, enpu_buf *weights, enpu_err *e);

#endif

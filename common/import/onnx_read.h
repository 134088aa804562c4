/* onnx_read.h: reading ONNX (a ModelProto, or a bare TensorProto such as
 * the node tests' input_0.pb) from memory into a plain in-memory form for
 * the importer: opsets, graph inputs/outputs with their shapes (symbolic
 * dims by name), initializers as float32/int64 tensors, nodes with their
 * attributes. Parsing is protobuf-c's, from code generated at build time
 * from Debian's onnx.proto (build/gen/onnx.pb-c.[ch]); nothing here keeps
 * a pointer into protobuf-c's structures. Bad input is an enpu_err. */
#ifndef ENPU_ONNX_READ_H
#define ENPU_ONNX_READ_H

#include <stddef.h>
#include <stdint.h>
#include "err.h"
#include "tensor.h"

/* Hard limits on what the reader accepts; each a documented setting.
 * NULL means enpu_onnx_limits_default(). */
typedef struct enpu_onnx_limits {
	uint64_t max_model_bytes;    /* serialized bytes (default 1 GiB) */
	uint64_t max_nodes;          /* nodes in the graph (default 100000) */
	uint64_t max_tensor_elems;   /* per tensor (default 1<<28) */
	uint64_t max_attr_elems;     /* per attribute list (default 1<<20) */
} enpu_onnx_limits;

const enpu_onnx_limits *enpu_onnx_limits_default(void);

/* ONNX TensorProto.DataType codes the reader keeps values of: FLOAT into
 * f; INT64, INT32 and BOOL widened into i; DOUBLE rounded into f (shape
 * arithmetic and constant folding need them, spec tensors are float32). */
#define ENPU_ONNX_FLOAT 1
#define ENPU_ONNX_UINT8 2     /* spec v3's quantised tensors: widened into i */
#define ENPU_ONNX_INT8 3
#define ENPU_ONNX_INT32 6
#define ENPU_ONNX_INT64 7
#define ENPU_ONNX_BOOL 9
#define ENPU_ONNX_DOUBLE 11
#define ENPU_ONNX_UINT32 12
#define ENPU_ONNX_UINT64 13

typedef struct enpu_onnx_tensor {
	char *name;          /* owned, "" when unnamed */
	int elem_type;       /* an ENPU_ONNX_* code above, or any other (then
			      * name and shape only) */
	enpu_shape shape;
	uint64_t numel;
	float *f;            /* owned, numel floats when FLOAT or DOUBLE */
	int64_t *i;          /* owned, numel int64s when INT64, INT32, UINT8,
			      * INT8 or BOOL;
			      * both NULL for any other elem_type, and for
			      * external data until the importer reads it */
	/* data_location EXTERNAL: the file (as written in the model, relative
	 * to its directory; not checked here), the byte offset and length
	 * (0 = to the end of the file) from the external_data key-values */
	int external;
	char *ext_location;  /* owned */
	uint64_t ext_offset, ext_length;
} enpu_onnx_tensor;

/* A graph input or output: elem_type 0 when not given; ndim -1 when the
 * shape is not given; a dim is dim[k] >= 0, or symbolic (param[k] set,
 * dim[k] -1), or unknown (both unset, dim[k] -1). */
typedef struct enpu_onnx_value {
	char *name;
	int elem_type;
	int not_tensor;      /* 1: a sequence, map, optional or sparse value */
	int ndim;
	int64_t dim[ENPU_MAX_DIMS];
	char *param[ENPU_MAX_DIMS];
} enpu_onnx_value;

typedef enum enpu_onnx_atype {
	ENPU_ONNX_A_FLOAT = 1, ENPU_ONNX_A_INT = 2, ENPU_ONNX_A_STRING = 3,
	ENPU_ONNX_A_TENSOR = 4, ENPU_ONNX_A_FLOATS = 6, ENPU_ONNX_A_INTS = 7,
	ENPU_ONNX_A_STRINGS = 8,
	/* also kept, type only (no value read): GRAPH 5, TENSORS 9, GRAPHS 10,
	 * SPARSE_TENSOR 11, SPARSE_TENSORS 12, TYPE_PROTO 13, TYPE_PROTOS 14 */
} enpu_onnx_atype;   /* ONNX's AttributeType numbers */

typedef struct enpu_onnx_attr {
	char *name;
	enpu_onnx_atype type;
	float f;
	int64_t i;
	char *s;                 /* STRING (NUL-terminated copy; slen bytes) */
	size_t slen;
	enpu_onnx_tensor *t;     /* TENSOR */
	size_t n;                /* FLOATS, INTS, STRINGS: list length */
	float *floats;
	int64_t *ints;
	char **strings;
} enpu_onnx_attr;

typedef struct enpu_onnx_node {
	char *name, *op_type, *domain;   /* "" when absent */
	size_t n_in, n_out, n_attr;
	char **in;                       /* "" for an omitted optional input */
	char **out;
	enpu_onnx_attr *attr;
} enpu_onnx_node;

typedef struct enpu_onnx_opset {
	char *domain;   /* "" is ai.onnx */
	int64_t version;
} enpu_onnx_opset;

typedef struct enpu_onnx_model {
	int64_t ir_version;
	char *graph_name, *producer;     /* "" when absent */
	size_t n_opset, n_in, n_out, n_init, n_node;
	enpu_onnx_opset *opset;
	enpu_onnx_value *in, *out;
	enpu_onnx_tensor *init;
	enpu_onnx_node *node;
} enpu_onnx_model;

/* Read a serialized ModelProto; label names it in errors. */
int enpu_onnx_read(const void *buf, size_t len, const char *label,
		   const enpu_onnx_limits *lim, enpu_onnx_model **out, enpu_err *e);
void enpu_onnx_free(enpu_onnx_model *m);
/* Read a serialized bare TensorProto (the node tests' *.pb files). */
int enpu_onnx_read_tensor(const void *buf, size_t len, const char *label,
			  const enpu_onnx_limits *lim, enpu_onnx_tensor *out, enpu_err *e);
void enpu_onnx_tensor_free(enpu_onnx_tensor *t);
/* Fill t->f or t->i from len bytes of little-endian raw data (an external
 * file's bytes) by t->elem_type; the count must match t->numel. */
int enpu_onnx_tensor_set_raw(enpu_onnx_tensor *t, const void *raw, size_t len,
			     const char *label, enpu_err *e);
/* The attribute called name of node n, or NULL. */
const enpu_onnx_attr *enpu_onnx_attr_find(const enpu_onnx_node *n, const char *name);

#endif

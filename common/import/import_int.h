/* import_int.h: the importer's internals shared by its rooms: import.c
 * (the driver: value table, topological walk, inputs, outputs), import_map.c
 * (the ONNX op -> spec op table), import_fold.c (constant folding of int64,
 * bool and data-movement nodes) and import_write.c (spec YAML, weights npz).
 *
 * Every ONNX value is a row of the value table: a graph input, the output of
 * a spec op (runtime), or a constant (an initializer, a Constant node, or a
 * folded node's output). A constant becomes a weight only when a spec op
 * reads it. Mapping functions emit spec ops through imp_emit, which runs
 * the op's own shape rule and, when every input is a float constant, its
 * own kernel instead (folding: the values cpu_ref would compute). */
#ifndef ENPU_IMPORT_INT_H
#define ENPU_IMPORT_INT_H

#include <stdint.h>
#include "import.h"
#include "ops.h"

enum { IV_INPUT = 1, IV_RUNTIME, IV_CONST };

typedef struct imp_val {
	char *onnx;            /* the ONNX value name (owned) */
	char *spec;            /* its spec tensor name once a spec op reads or
				* writes it (owned), else NULL */
	int kind;              /* IV_* */
	int dtype;             /* ENPU_ONNX_FLOAT, _INT64 (also int32, int8,
				* uint8), _BOOL */
	enpu_dtype sdt;        /* spec v3: the int8, uint8 or int32 a value
				* is in the spec (an initializer's, a graph
				* input's, a quantised op's output); 0 = by
				* dtype (imp_spec_dtype) */
	enpu_shape shape;
	uint64_t numel;
	float *f;              /* IV_CONST float data (owned) */
	int64_t *i;            /* IV_CONST int64/bool data (owned) */
	int init;              /* 1: from an initializer (its name is the weight's) */
	int weight;            /* 1: written as a weight */
} imp_val;

/* An attribute of an emitted spec op, by the contract's name. */
enum { IA_INT = 1, IA_FLOAT, IA_STR, IA_INTS, IA_FLOATS };
#define IMP_MAX_ATTRS 12
typedef struct imp_attr {
	const char *name;      /* static */
	int type;
	int64_t i;
	float f;
	const char *s;         /* static or the model's (checked against the
				* op's choices: written into the YAML as is) */
	int n;
	int64_t v[ENPU_MAX_LIST];
	float fv[ENPU_MAX_LIST];
} imp_attr;

typedef struct imp_attrs {
	int n;
	imp_attr a[IMP_MAX_ATTRS];
} imp_attrs;

typedef struct imp_op {
	char *name, *comp;     /* owned */
	const char *op;        /* the opdef's name */
	int n_in, n_out;
	int *in, *out;         /* value indices (owned) */
	imp_attrs at;
} imp_op;

/* A string -> int map (open addressing; keys owned). */
typedef struct imp_smap {
	char **k;
	int *v;
	size_t cap, n;
} imp_smap;

int imp_smap_get(const imp_smap *m, const char *k);    /* -1 absent */
int imp_smap_put(imp_smap *m, const char *k, int v);   /* 0, -1 no memory */
void imp_smap_free(imp_smap *m);

/* A node's part in a QDQ model's import (import_qdq.c): skipped (a DQ or Q
 * its anchor absorbs), or an anchor mapped as the QOperator node `op`
 * reading in[0..n_in) into `out` (the Q's output), with the integer clip
 * [qlo, qhi] of a folded Relu or Clip when `clip`. */
typedef struct imp_qdq {
	unsigned char skip, clip, move;
	const char *op;             /* "QLinearConv", ...; move: the op itself */
	const char **in;            /* owned array of the model's names */
	int n_in;
	const char *out, *bias;
	const struct enpu_onnx_node *q;
	int qk, ak;                 /* the Q's node, the activation's (-1 none) */
	int32_t qlo, qhi;
	char *tmp;                  /* owned: the unclipped output's name */
} imp_qdq;

typedef struct imp_ctx {
	const enpu_onnx_model *m;
	const char *label;
	const enpu_import_opts *o;
	const enpu_onnx_limits *lim;
	int64_t opset;
	enpu_err *e;
	imp_val *v;
	size_t nv, av;
	imp_smap byname;       /* ONNX value name -> value index (aliases too) */
	imp_smap names;        /* every spec name given out (ops, tensors, components) */
	imp_op *ops;
	size_t nops, aops;
	uint64_t folded;       /* elements of folded constants so far */
	/* the node being mapped: names its ops and its component */
	const enpu_onnx_node *cur;
	int cur_sub;
	char *cur_comp;        /* its scope key (owned), NULL: the model's */
	/* nodes that cannot be mapped: the list for the one error */
	char bad[640];
	size_t badlen;
	int n_bad, n_listed;
	char *model_name;      /* owned */
	char **out_spec;       /* graph output k's spec name, reserved before any
				* op is named (owned; NULL once taken) */
	imp_qdq *qdq;          /* per node (import_qdq.c), NULL: no DequantizeLinear */
} imp_ctx;

/* Mapping result: 0 mapped (or folded), 1 not mappable (imp_bad said why),
 * -1 a hard error in *c->e. */
typedef int (*imp_map_fn)(imp_ctx *c, const enpu_onnx_node *n);

typedef struct imp_mapping {
	const char *onnx;      /* op_type */
	int from, to;          /* the opsets this row handles */
	int min_in;            /* inputs it needs (others may be "") */
	imp_map_fn fn;
} imp_mapping;

const imp_mapping *imp_map_find(const char *op_type, int64_t opset);
/* The node's inputs as value indices into in[0..max) (-1 absent): n_in. */
int imp_ins(imp_ctx *c, const enpu_onnx_node *n, int *in, int max);
/* Emit op reading in[0..n_in) into the node's output 0: 0, 1, -1. */
int imp_emit1(imp_ctx *c, const enpu_onnx_node *n, const char *op, const int *in, int n_in,
	      const imp_attrs *at);
/* import_map_conv.c: Conv, MaxPool/AveragePool, GlobalMaxPool, ConvTranspose */
int m_conv(imp_ctx *c, const enpu_onnx_node *n);
int m_pool(imp_ctx *c, const enpu_onnx_node *n);
int m_global_max(imp_ctx *c, const enpu_onnx_node *n);
int m_convt(imp_ctx *c, const enpu_onnx_node *n);
int m_qconv(imp_ctx *c, const enpu_onnx_node *n);   /* ConvInteger, QLinearConv */
int m_qlinear_ms(imp_ctx *c, const enpu_onnx_node *n);   /* com.microsoft QLinear ops */

/* import.c */
int imp_bad(imp_ctx *c, const enpu_onnx_node *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int imp_find(imp_ctx *c, const char *onnx);           /* index or -1 */
int imp_in(imp_ctx *c, const enpu_onnx_node *n, size_t k);  /* input k's index, -1 absent */
int imp_newval(imp_ctx *c, const char *onnx, int kind);     /* -1 with *c->e */
/* The value for output k of n, or a temporary (k < 0) named after n. */
int imp_outval(imp_ctx *c, const enpu_onnx_node *n, int k);
int imp_alias(imp_ctx *c, const char *onnx, int idx);
int imp_const_alloc(imp_ctx *c, int idx, int dtype, const enpu_shape *s);
/* Emit spec op `op` reading in[0..n_in) into out[0..n_out) (value indices,
 * outputs fresh): shape rule, then either the kernel (every input a float
 * constant) or a spec op. 0, 1 (imp_bad), -1. */
int imp_emit(imp_ctx *c, const enpu_onnx_node *n, const char *op, const int *in, int n_in,
	     const imp_attrs *at, const int *out, int n_out);
int imp_is_const(const imp_ctx *c, int idx);
/* The dtype value v has as a spec tensor: sdt, else float32 or int64. */
enpu_dtype imp_spec_dtype(const imp_val *v);
/* The spec dtype of an ONNX elem_type the spec reads (float, int8,
 * uint8, int32), else 0. */
enpu_dtype imp_onnx_sdt(int elem_type);

/* attribute helpers */
void ia_int(imp_attrs *a, const char *name, int64_t v);
void ia_float(imp_attrs *a, const char *name, float v);
void ia_str(imp_attrs *a, const char *name, const char *v);
void ia_ints(imp_attrs *a, const char *name, const int64_t *v, int n);
void ia_floats(imp_attrs *a, const char *name, const float *v, int n);
int64_t oa_int(const enpu_onnx_node *n, const char *name, int64_t dflt);
float oa_float(const enpu_onnx_node *n, const char *name, float dflt);
const char *oa_str(const enpu_onnx_node *n, const char *name, const char *dflt);
/* INTS attribute into v (at most max): its length, -1 absent, -2 too long */
int oa_ints(const enpu_onnx_node *n, const char *name, int64_t *v, int max);

/* import_fold.c: fold n (every input constant) on int64/bool data or data
 * movement. 0 folded, 1 not foldable here (try the mapping), 2 not
 * mappable (imp_bad said why), -1 hard error. */
int imp_fold(imp_ctx *c, const enpu_onnx_node *n);

/* import_qdq.c: plan a QDQ model's fusions before the walk (0, -1), map a
 * planned anchor (0, 1, -1), free the plan */
int imp_qdq_plan(imp_ctx *c);
int imp_qdq_emit(imp_ctx *c, const enpu_onnx_node *n, imp_qdq *p);
void imp_qdq_free(imp_ctx *c);
/* import_map_conv.c: the window attributes of a 2-D or 1-D pool node */
int imp_pool_attrs(imp_ctx *c, const enpu_onnx_node *n, int avg, imp_attrs *at, int *nsp);

/* import_write.c */
int imp_write(imp_ctx *c, const int64_t *outs, enpu_buf *spec, enpu_buf *weights);
/* The spec name rule [A-Za-z0-9_.-]+: base sanitized, unique in c. */
char *imp_unique(imp_ctx *c, const char *base);

#endif

/* ops.h: the operator table. Ops are data: one row names each op, its
 * arity, attributes (with defaults), shape rule and reference kernel. Which
 * backends lower it and how (npu_sim's class and cost) is the backends'
 * (backend.h, common/backends/). Adding an op touches ops.c, one
 * kernel, and the tables of the backends that cost ops (npusim.c). */
#ifndef ENPU_OPS_H
#define ENPU_OPS_H

#include <stddef.h>
#include <stdint.h>
#include "tensor.h"
#include "par.h"

typedef enum enpu_opid {
	ENPU_OP_MATMUL, ENPU_OP_GEMM,
	ENPU_OP_ADD, ENPU_OP_SUB, ENPU_OP_MUL, ENPU_OP_DIV,
	ENPU_OP_RELU, ENPU_OP_SIGMOID, ENPU_OP_TANH, ENPU_OP_LEAKY_RELU,
	ENPU_OP_CLIP, ENPU_OP_GELU, ENPU_OP_SOFTMAX,
	ENPU_OP_CONV2D, ENPU_OP_MAXPOOL2D, ENPU_OP_AVGPOOL2D, ENPU_OP_GLOBAL_AVGPOOL,
	ENPU_OP_BATCHNORM, ENPU_OP_RESHAPE, ENPU_OP_FLATTEN, ENPU_OP_TRANSPOSE,
	ENPU_OP_CONCAT,
	/* spec v2 (eulernpu: 2) */
	ENPU_OP_EXP, ENPU_OP_SQRT, ENPU_OP_NEG, ENPU_OP_ABS, ENPU_OP_RECIPROCAL,
	ENPU_OP_ERF, ENPU_OP_LOG,
	ENPU_OP_COUNT
} enpu_opid;

/* Resolved attributes of one op: one flat struct for all ops (each op reads
 * its own fields). Defaults come from the table; shape rules normalize
 * (negative axes become non-negative, absent perm becomes the reverse). */
typedef struct enpu_attrs {
	float alpha, beta;            /* gemm (1, 1); leaky_relu alpha (0.01) */
	int trans_a, trans_b;         /* gemm (0, 0) */
	float min, max;               /* clip (-inf, +inf when absent) */
	int approximate;              /* gelu: 0 = none, 1 = tanh */
	int axis;                     /* softmax (-1), flatten (1), concat (required) */
	int kernel[2];                /* pools (required) */
	int strides[2];               /* conv (1,1); pools (= kernel) */
	int pads[4];                  /* t, l, b, r (0) */
	int dilations[2];             /* conv (1,1) */
	int group;                    /* conv (1) */
	int count_include_pad;        /* avgpool (0) */
	float epsilon;                /* batchnorm (1e-5) */
	int n_shape;                  /* reshape: target shape as written */
	int64_t shape[ENPU_MAX_DIMS];
	int n_perm;                   /* transpose: 0 = reverse */
	int perm[ENPU_MAX_DIMS];
	unsigned set;                 /* bit i set = attribute i of the op's row given explicitly */
} enpu_attrs;

typedef enum enpu_attr_type {
	ENPU_ATTR_FLOAT,      /* float field */
	ENPU_ATTR_INT,        /* int field */
	ENPU_ATTR_BOOL01,     /* int field, 0 or 1 */
	ENPU_ATTR_INTS,       /* int array field: count fixed by `count` */
	ENPU_ATTR_DIMS,       /* reshape shape: int64 list into shape/n_shape */
	ENPU_ATTR_PERM,       /* int list into perm/n_perm */
	ENPU_ATTR_ENUM,       /* string from `choices`, stored as its index in an int field */
} enpu_attr_type;

typedef struct enpu_attrdef {
	const char *name;
	enpu_attr_type type;
	size_t offset;                /* offsetof(enpu_attrs, field) */
	int count;                    /* for INTS: number of elements */
	const char *dflt;             /* default as YAML text, NULL = required/none */
	const char *const *choices;   /* for ENUM, NULL-terminated */
} enpu_attrdef;

/* A tensor as a kernel sees it: shape and contiguous C-order float32 data. */
typedef struct enpu_view {
	enpu_shape shape;
	float *data;
} enpu_view;

/* Shape rule: from the input shapes and attributes, compute the output
 * shapes (n_out given by the op row) and normalize attrs in place. Returns 0,
 * or -1 with a one-line reason in why ("inner dimensions differ: 8 vs 16"). */
typedef int (*enpu_shape_fn)(enpu_attrs *a, const enpu_shape *in, int n_in,
			     enpu_shape *out, char *why, size_t whylen);

/* Reference kernel: inputs and outputs have the shapes the shape rule gave;
 * outputs are preallocated and may alias nothing. Returns 0, -1 only on
 * scratch allocation failure. Threads (par, may be NULL) split outputs. */
typedef int (*enpu_kernel_fn)(const enpu_attrs *a, const enpu_view *in, int n_in,
			      enpu_view *out, int n_out, enpu_par *par);

/* A backend is a row of the registry (common/backends/backend.c); its
 * index there (0 .. enpu_backend_count() - 1) is its bit in masks. The
 * registry holds at most ENPU_BACKENDS_MAX rows, which also sizes arrays
 * kept per backend. */
#define ENPU_BACKENDS_MAX 16

typedef struct enpu_opdef {
	const char *name;             /* as written in spec.yaml: "matmul" */
	enpu_opid id;
	int min_in, max_in;           /* max_in -1 = variadic (concat) */
	int n_out;                    /* always 1 in v1 */
	const enpu_attrdef *attrs;    /* terminated by {NULL} */
	enpu_shape_fn shape;
	enpu_kernel_fn kernel;        /* cpu_ref reference kernel */
	const char *kernel_name;      /* "matmul_f32": recorded in graph.json */
	int since;                    /* the spec version that added it: 1 or 2 */
} enpu_opdef;

const enpu_opdef *enpu_op_by_name(const char *name);  /* NULL if unknown */
const enpu_opdef *enpu_op_by_id(enpu_opid id);
int enpu_backend_count(void);                          /* rows in the registry */
const char *enpu_backend_name(int i);                  /* "cpu_ref"; "unknown" */
int enpu_backend_parse(const char *s);                 /* its index; -1 if unknown */

/* Fill attrs with the op's defaults (parsing each dflt string). */
void enpu_attrs_defaults(const enpu_opdef *d, enpu_attrs *a);

#endif

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
	ENPU_OP_PAD, ENPU_OP_SLICE, ENPU_OP_SQUEEZE, ENPU_OP_UNSQUEEZE,
	ENPU_OP_REDUCE_MEAN, ENPU_OP_REDUCE_SUM, ENPU_OP_REDUCE_MAX, ENPU_OP_REDUCE_MIN,
	ENPU_OP_LAYER_NORM,
	ENPU_OP_CONV_TRANSPOSE2D, ENPU_OP_RESIZE,
	ENPU_OP_POW, ENPU_OP_MIN, ENPU_OP_MAX, ENPU_OP_HARD_SIGMOID, ENPU_OP_HARD_SWISH,
	ENPU_OP_PRELU, ENPU_OP_ELU, ENPU_OP_SOFTPLUS,
	ENPU_OP_CONV1D, ENPU_OP_MAXPOOL1D, ENPU_OP_AVGPOOL1D,
	ENPU_OP_SPLIT, ENPU_OP_GATHER,
	/* spec v3 (eulernpu: 3): the quantised ops (kernels_q.c) */
	ENPU_OP_QUANTIZE_LINEAR, ENPU_OP_DEQUANTIZE_LINEAR,
	ENPU_OP_MATMUL_INTEGER, ENPU_OP_CONV_INTEGER,
	ENPU_OP_QLINEAR_MATMUL, ENPU_OP_QLINEAR_CONV,
	/* spec v3's integer forms (kernels_qew.c) */
	ENPU_OP_QLINEAR_ADD, ENPU_OP_QLINEAR_MUL, ENPU_OP_QLINEAR_GLOBAL_AVGPOOL,
	ENPU_OP_QLINEAR_AVGPOOL, ENPU_OP_QLINEAR_CONCAT,
	ENPU_OP_COUNT
} enpu_opid;

/* A set of ops (npu_sim's `ops:`, the board's `pl_ops`): bit id % 64 of
 * word id / 64 per op. Two words: spec v3 takes the table past 64 ops. Build
 * one with ENPU_OPBIT(id) or ENPU_OPMASK(id, id, ...) and combine them
 * with the helpers below (never with C's bit operators). */
#define ENPU_OPMASK_WORDS 2
typedef struct enpu_opmask {
	uint64_t w[ENPU_OPMASK_WORDS];
} enpu_opmask;
_Static_assert(ENPU_OP_COUNT <= 64 * ENPU_OPMASK_WORDS, "enpu_opmask holds too few ops");

static inline enpu_opmask enpu_opmask_none(void)
{
	enpu_opmask m = {{0}};
	return m;
}

static inline enpu_opmask enpu_opbit(int id)
{
	enpu_opmask m = {{0}};

	if (id >= 0 && id < 64 * ENPU_OPMASK_WORDS)
		m.w[id / 64] = (uint64_t)1 << (id % 64);
	return m;
}

static inline int enpu_opmask_has(enpu_opmask m, int id)
{
	return id >= 0 && id < 64 * ENPU_OPMASK_WORDS && (m.w[id / 64] >> (id % 64) & 1);
}

static inline void enpu_opmask_set(enpu_opmask *m, int id)
{
	if (id >= 0 && id < 64 * ENPU_OPMASK_WORDS)
		m->w[id / 64] |= (uint64_t)1 << (id % 64);
}

static inline void enpu_opmask_clear(enpu_opmask *m, int id)
{
	if (id >= 0 && id < 64 * ENPU_OPMASK_WORDS)
		m->w[id / 64] &= ~((uint64_t)1 << (id % 64));
}

static inline enpu_opmask enpu_opmask_or(enpu_opmask a, enpu_opmask b)
{
	for (int i = 0; i < ENPU_OPMASK_WORDS; i++)
		a.w[i] |= b.w[i];
	return a;
}

static inline enpu_opmask enpu_opmask_and(enpu_opmask a, enpu_opmask b)
{
	for (int i = 0; i < ENPU_OPMASK_WORDS; i++)
		a.w[i] &= b.w[i];
	return a;
}

static inline int enpu_opmask_eq(enpu_opmask a, enpu_opmask b)
{
	for (int i = 0; i < ENPU_OPMASK_WORDS; i++)
		if (a.w[i] != b.w[i])
			return 0;
	return 1;
}

static inline int enpu_opmask_empty(enpu_opmask m)
{
	return enpu_opmask_eq(m, enpu_opmask_none());
}

/* The ops of ids[], which ends with -1. */
static inline enpu_opmask enpu_opmask_of(const int *ids)
{
	enpu_opmask m = {{0}};

	for (; *ids >= 0; ids++)
		enpu_opmask_set(&m, *ids);
	return m;
}

/* Every op of the table. */
static inline enpu_opmask enpu_opmask_all(void)
{
	enpu_opmask m = {{0}};

	for (int i = 0; i < ENPU_OP_COUNT; i++)
		enpu_opmask_set(&m, i);
	return m;
}

#define ENPU_OPBIT(id) enpu_opbit(id)
#define ENPU_OPMASK(...) enpu_opmask_of((const int[]){__VA_ARGS__, -1})
#define ENPU_OPS_ALL enpu_opmask_all()

/* A variable-length integer list attribute (spec v2: axes, slice's
 * starts/ends/steps, pad's pads): n = 0 when absent. */
#define ENPU_MAX_LIST (2 * ENPU_MAX_DIMS)
typedef struct enpu_ilist {
	int n;
	int64_t v[ENPU_MAX_LIST];
} enpu_ilist;

/* split's sizes: one per output, up to ENPU_MAX_SPLIT (= ENPU_MAX_OP_OUTPUTS,
 * ir.h); a list of its own because enpu_ilist holds ENPU_MAX_LIST (16). n = 0
 * when absent. */
#define ENPU_MAX_SPLIT 64
typedef struct enpu_sizes {
	int n;
	int64_t v[ENPU_MAX_SPLIT];
} enpu_sizes;

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
	/* spec v2 ops add their fields below (one per attribute). */
	enpu_ilist pad_pads;          /* pad `pads`: 2·rank, begins then ends (< 0 crops) */
	int pad_mode;                 /* pad `mode`: 0 constant, 1 reflect, 2 edge */
	float pad_value;              /* pad `value` (0.0): what constant mode writes */
	enpu_ilist starts, ends;      /* slice (required) */
	enpu_ilist steps;             /* slice (absent = all 1; the rule fills them) */
	enpu_ilist axes;              /* slice (absent = 0..n-1), squeeze (absent = the
				       * dims of size 1), unsqueeze (required), reduce_*
				       * (absent = all axes); the rules make them
				       * non-negative. layer_norm: axis (-1) and
				       * epsilon (1e-5) above */
	int keepdims;                 /* reduce_* (1) */
	int output_padding[2];        /* conv_transpose2d (0, 0); strides, pads, dilations, group as conv */
	int resize_mode;              /* resize: 0 = nearest, 1 = linear */
	int coord_mode;               /* resize: 0 half_pixel, 1 asymmetric, 2 align_corners,
				       * 3 pytorch_half_pixel */
	int nearest_mode;             /* resize: 0 round_prefer_floor, 1 round_prefer_ceil,
				       * 2 floor, 3 ceil */
	float scales[2];              /* resize [sh, sw]: NaN, NaN when absent */
	enpu_ilist sizes;             /* resize [oh, ow]: n 0 when absent */
	/* conv1d, maxpool1d, avgpool1d use kernel[0], strides[0], pads[0]
	 * (begin) and pads[1] (end), dilations[0], group, count_include_pad */
	int ceil_mode;                /* pools (0); maxpool2d/avgpool2d gain it in v2 */
	enpu_sizes split;             /* split: sizes along axis (absent = equal parts) */
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
	ENPU_ATTR_FLOATS,     /* float array field: count fixed by `count` */
	ENPU_ATTR_LIST,       /* enpu_ilist field: at most `count` (<= ENPU_MAX_LIST)
			       * int64s; absent (no default) = n 0 */
	ENPU_ATTR_SIZES,      /* enpu_sizes field: at most `count` (<= ENPU_MAX_SPLIT)
			       * int64s; absent (no default) = n 0 */
} enpu_attr_type;

typedef struct enpu_attrdef {
	const char *name;
	enpu_attr_type type;
	size_t offset;                /* offsetof(enpu_attrs, field) */
	int count;                    /* INTS, FLOATS: number of elements;
				       * LIST: the most it takes */
	const char *dflt;             /* default as YAML text, NULL = required/none */
	const char *const *choices;   /* for ENUM, NULL-terminated */
} enpu_attrdef;

/* A tensor as a kernel sees it: shape and contiguous C-order data, float32
 * unless dtype says otherwise. An int64 input (gather's indices, ops.h
 * int64_in) is int64 data behind the same pointer: read it through
 * enpu_view_i64. The engine sets dtype from the graph; the float32 kernels
 * never read it (a caller of those may leave it 0); the quantised kernels
 * (kernels_q.c) read their integer inputs and outputs by it. */
typedef struct enpu_view {
	enpu_shape shape;
	float *data;
	enpu_dtype dtype;
} enpu_view;

static inline const int64_t *enpu_view_i64(const enpu_view *v)
{
	return (const int64_t *)(const void *)v->data;
}

/* The type rule of an op (its row's `types`; NULL: every input float32,
 * except the int64_in weights, and every output float32). Spec v3.
 *   in[k]    the dtypes input k accepts (ENPU_DTBIT set); an input past
 *            the last entry of a variadic op (concat) takes in[n - 1]
 *   like[k]  j + 1 when input k must have input j's dtype (a zero point
 *            its tensor's), 0 when free; a variadic op's inputs past the
 *            last entry must have input 0's dtype ("mixed types")
 *   out_from the output's dtype is input out_from's (-1: always out_dt);
 *            when that optional input is absent, out_dt
 *   cycle    0, or a variadic op whose inputs past n repeat the rule's
 *            last `cycle` entries (qlinear_concat's (x, scale, zp)
 *            triples): input k >= n takes entry j = n - cycle + (k - n) %
 *            cycle, and a `like` of j that points into those entries
 *            points as far past it as k is past j (a triple's zero point
 *            is like its own x); one before them stays as written */
#define ENPU_TYPE_MAX_IN 9
typedef struct enpu_typerule {
	int n;
	unsigned in[ENPU_TYPE_MAX_IN];
	signed char like[ENPU_TYPE_MAX_IN];
	int out_from;
	enpu_dtype out_dt;
	int cycle;
} enpu_typerule;

/* Shape rule: from the input shapes and attributes, compute the n_out
 * output shapes (the op row's n_out, or for variadic outputs the number of
 * names the spec wrote) and normalize attrs in place. Returns 0, or -1 with
 * a one-line reason in why ("inner dimensions differ: 8 vs 16"). */
typedef int (*enpu_shape_fn)(enpu_attrs *a, const enpu_shape *in, int n_in,
			     enpu_shape *out, int n_out, char *why, size_t whylen);

/* Reference kernel: inputs and outputs have the shapes the shape rule gave;
 * outputs are preallocated and may alias nothing. Returns 0, -1 only on
 * scratch allocation failure. Threads (par, may be NULL) split outputs. */
typedef int (*enpu_kernel_fn)(const enpu_attrs *a, const enpu_view *in, int n_in,
			      enpu_view *out, int n_out, enpu_par *par);

/* Scratch rule: the bytes of scratch memory the kernel uses for these
 * input shapes and output shape (out[0]); the memory plan reserves them
 * for the op's step. */
typedef size_t (*enpu_scratch_fn)(const enpu_attrs *a, const enpu_shape *in, int n_in,
				  const enpu_shape *out);

/* A backend is a row of the registry (common/backends/backend.c); its
 * index there (0 .. enpu_backend_count() - 1) is its bit in masks. The
 * registry holds at most ENPU_BACKENDS_MAX rows, which also sizes arrays
 * kept per backend. */
#define ENPU_BACKENDS_MAX 16

typedef struct enpu_opdef {
	const char *name;             /* as written in spec.yaml: "matmul" */
	enpu_opid id;
	int min_in, max_in;           /* max_in -1 = variadic (concat) */
	int n_out;                    /* 1; -1 = variadic: 1 .. ENPU_MAX_OP_OUTPUTS
				       * (split: as many as 'out' names) */
	const enpu_attrdef *attrs;    /* terminated by {NULL} */
	enpu_shape_fn shape;
	enpu_kernel_fn kernel;        /* cpu_ref reference kernel */
	const char *kernel_name;      /* "matmul_f32": recorded in graph.json */
	int since;                    /* the spec version that added it: 1 or 2 */
	int n_attrs_v1;               /* a v1 op that spec v2 gave attributes (ceil_mode,
				       * maxpool2d's dilations): how many of attrs are
				       * v1's; the rest are an error in an `eulernpu: 1`
				       * spec and are written to graph.json only when
				       * not default (v1 artifact ids stay). 0 = all. */
	unsigned int64_in;            /* bit k: input k is an int64 weight (gather's
				       * indices); every other input is float32 */
	enpu_scratch_fn scratch;      /* NULL: the kernel needs none */
	const enpu_typerule *types;   /* spec v3: NULL = float32 (and int64_in) */
} enpu_opdef;

/* The dtype of the output of op d whose inputs have dtypes dt[0..n_in-1],
 * by its type rule: 0 with *out set, or -1 with why ("input 2 'b' is int8,
 * must be float32", "mixed types: ...") and *bad the input at fault (0-based).
 * names[k] (may be NULL) names input k in why. */
int enpu_op_out_dtype(const enpu_opdef *d, const enpu_dtype *dt, int n_in,
		      const char *const *names, enpu_dtype *out, int *bad, char *why,
		      size_t whylen);

const enpu_opdef *enpu_op_by_name(const char *name);  /* NULL if unknown */
const enpu_opdef *enpu_op_by_id(enpu_opid id);
int enpu_backend_count(void);                          /* rows in the registry */
const char *enpu_backend_name(int i);                  /* "cpu_ref"; "unknown" */
int enpu_backend_parse(const char *s);                 /* its index; -1 if unknown */

/* Fill attrs with the op's defaults (parsing each dflt string). */
void enpu_attrs_defaults(const enpu_opdef *d, enpu_attrs *a);

/* The spec version that added attribute i of op d (n_attrs_v1), and
 * whether a's value of it is the default (1) or not (0). */
int enpu_attr_since(const enpu_opdef *d, int i);
int enpu_attr_is_default(const enpu_opdef *d, int i, const enpu_attrs *a);

#endif

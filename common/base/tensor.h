/* tensor.h: shapes, dtypes, tensors (float32; int64 for gather's
 * indices; spec v3's int8, uint8 and int32), tensor lists, and the size limits that every reader of user
 * data honours. What a dtype is (name, element size, .npy descr) is known
 * in one place: the dtype table of tensor.c. */
#ifndef ENPU_TENSOR_H
#define ENPU_TENSOR_H

#include <stddef.h>
#include <stdint.h>
#include "err.h"

#define ENPU_MAX_DIMS 8

typedef enum enpu_dtype {
	ENPU_DT_INVALID = 0,
	ENPU_DT_F32 = 1,
	ENPU_DT_I64 = 2,     /* spec v2 weights: gather's indices only */
	ENPU_DT_I8 = 3,      /* spec v3: quantised tensors, zero points */
	ENPU_DT_U8 = 4,      /* spec v3: quantised tensors, zero points */
	ENPU_DT_I32 = 5,     /* spec v3: integer accumulators, quantised biases */
	ENPU_DT_COUNT
} enpu_dtype;

/* A set of dtypes: bit ENPU_DTBIT(dt) per dtype (the ops' type rules). */
#define ENPU_DTBIT(dt) (1u << (dt))

typedef struct enpu_shape {
	int ndim;                       /* 0 = scalar */
	int64_t dim[ENPU_MAX_DIMS];
} enpu_shape;

typedef struct enpu_tensor {
	char *name;          /* owned */
	enpu_dtype dtype;
	enpu_shape shape;
	union {              /* owned, numel elements of dtype (may be NULL when
			      * numel == 0); one allocation, seen as its dtype */
		float *data;
		int64_t *i64;
		int8_t *i8;
		uint8_t *u8;
		int32_t *i32;
		void *bytes;
	};
} enpu_tensor;

typedef struct enpu_tlist {
	enpu_tensor *items;
	size_t n, alloc;
} enpu_tlist;

#define ENPU_TLIST_INIT {NULL, 0, 0}

/* Limits on what a user can hand over. Every reader takes a pointer to one;
 * NULL means enpu_limits_default(). Each field is a documented setting. */
typedef struct enpu_limits {
	uint64_t max_tensor_elems;     /* per tensor (default 1<<28) */
	uint64_t max_tensor_bytes;     /* per tensor (default 1 GiB) */
	uint64_t max_npz_members;      /* default 4096 */
	uint64_t max_npz_bytes;        /* total decompressed bytes (default 2 GiB) */
	uint64_t max_spec_bytes;       /* default 4 MiB */
	int max_yaml_depth;            /* default 64 */
	uint64_t max_yaml_nodes;       /* nodes after alias expansion (default 1<<20) */
	uint64_t max_ops;              /* default 100000 */
} enpu_limits;

const enpu_limits *enpu_limits_default(void);

const char *enpu_dtype_name(enpu_dtype dt);    /* "float32", "int8", "invalid" */
enpu_dtype enpu_dtype_parse(const char *s);     /* ENPU_DT_INVALID when unknown */
size_t enpu_dtype_size(enpu_dtype dt);          /* bytes per element; 0 when invalid */
const char *enpu_dtype_descr(enpu_dtype dt);    /* .npy descr "<f4", "|i1"; NULL if invalid */
enpu_dtype enpu_dtype_from_descr(const char *descr); /* ENPU_DT_INVALID when unknown */

/* Element count with overflow check: 0 ok (*out set), -1 on overflow or a
 * negative dim. numel of a 0-d shape is 1. */
int enpu_shape_numel(const enpu_shape *s, uint64_t *out);
int enpu_shape_eq(const enpu_shape *a, const enpu_shape *b);
/* "[1, 8]" / "[]" into buf. Returns buf. */
char *enpu_shape_str(const enpu_shape *s, char *buf, size_t cap);
/* "(1, 8)" NumPy style, "(8,)" for one dim, "()" for scalar. */
char *enpu_shape_pystr(const enpu_shape *s, char *buf, size_t cap);

/* Allocate data for t->shape and t->dtype (zeroed; an unset dtype becomes
 * float32). 0 or -1 with *e (NOMEM/LIMIT). */
int enpu_tensor_alloc(enpu_tensor *t, const enpu_limits *lim, enpu_err *e);
void enpu_tensor_free(enpu_tensor *t);

/* Append: the list takes ownership of t's name and data (t is zeroed). */
int enpu_tlist_push(enpu_tlist *l, enpu_tensor *t, enpu_err *e);
/* Append a copy of every tensor of src (names and data) to dst. 0, or -1
 * with *e (NOMEM): dst then holds what was copied, for the caller to free. */
int enpu_tlist_copy(const enpu_tlist *src, enpu_tlist *dst, enpu_err *e);
enpu_tensor *enpu_tlist_find(const enpu_tlist *l, const char *name);
void enpu_tlist_free(enpu_tlist *l);
/* "a, b, c": the names in list order, truncated to fit cap. */
void enpu_tlist_names(const enpu_tlist *l, char *buf, size_t cap);

#endif

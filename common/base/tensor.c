/* tensor.c: dtypes (the one table of names, element sizes and .npy
 * descrs), shapes, tensors and tensor lists; the default limits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tensor.h"

static const enpu_limits defaults = {
	.max_tensor_elems = (uint64_t)1 << 28,
	.max_tensor_bytes = (uint64_t)1 << 30,
	.max_npz_members = 4096,
	.max_npz_bytes = (uint64_t)2 << 30,
	.max_spec_bytes = (uint64_t)4 << 20,
	.max_yaml_depth = 64,
	.max_yaml_nodes = (uint64_t)1 << 20,
	.max_ops = 100000,
};

const enpu_limits *enpu_limits_default(void)
{
	return &defaults;
}

/* Every dtype: its spec name, element size and .npy descr (little-endian,
 * as numpy writes them). A new dtype is one row here and one enum value. */
static const struct dtinfo {
	enpu_dtype dt;
	const char *name, *descr;
	size_t size;
} dtypes[] = {
	{ENPU_DT_F32, "float32", "<f4", 4},
	{ENPU_DT_I64, "int64", "<i8", 8},
	{ENPU_DT_I8, "int8", "|i1", 1},
	{ENPU_DT_U8, "uint8", "|u1", 1},
	{ENPU_DT_I32, "int32", "<i4", 4},
};
#define N_DTYPES (sizeof(dtypes) / sizeof(dtypes[0]))

static const struct dtinfo *dtinfo(enpu_dtype dt)
{
	for (size_t i = 0; i < N_DTYPES; i++)
		if (dtypes[i].dt == dt)
			return &dtypes[i];
	return NULL;
}

const char *enpu_dtype_name(enpu_dtype dt)
{
	return dtinfo(dt) ? dtinfo(dt)->name : "invalid";
}

enpu_dtype enpu_dtype_parse(const char *s)
{
	for (size_t i = 0; s && i < N_DTYPES; i++)
		if (strcmp(dtypes[i].name, s) == 0)
			return dtypes[i].dt;
	return ENPU_DT_INVALID;
}

size_t enpu_dtype_size(enpu_dtype dt)
{
	return dtinfo(dt) ? dtinfo(dt)->size : 0;
}

const char *enpu_dtype_descr(enpu_dtype dt)
{
	return dtinfo(dt) ? dtinfo(dt)->descr : NULL;
}

enpu_dtype enpu_dtype_from_descr(const char *descr)
{
	for (size_t i = 0; descr && i < N_DTYPES; i++)
		if (strcmp(dtypes[i].descr, descr) == 0)
			return dtypes[i].dt;
	return ENPU_DT_INVALID;
}

int enpu_shape_numel(const enpu_shape *s, uint64_t *out)
{
	uint64_t n = 1;

	if (s->ndim < 0 || s->ndim > ENPU_MAX_DIMS)
		return -1;
	for (int i = 0; i < s->ndim; i++) {
		uint64_t d;
		if (s->dim[i] < 0)
			return -1;
		d = (uint64_t)s->dim[i];
		if (d && n > UINT64_MAX / d)
			return -1;
		n *= d;
	}
	*out = n;
	return 0;
}

int enpu_shape_eq(const enpu_shape *a, const enpu_shape *b)
{
	if (a->ndim != b->ndim)
		return 0;
	for (int i = 0; i < a->ndim; i++)
		if (a->dim[i] != b->dim[i])
			return 0;
	return 1;
}

/* v in decimal at p (at most 20 characters); returns the end. */
static char *put_i64(char *p, int64_t v)
{
	char d[20];
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	int n = 0;

	do
		d[n++] = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	if (v < 0)
		*p++ = '-';
	while (n)
		*p++ = d[--n];
	return p;
}

/* The shape's text, cut to cap as snprintf cuts (every shape of every job's
 * files and reports is written here: no printf). */
static char *shape_fmt(const enpu_shape *s, char *buf, size_t cap, char open, char close, int py)
{
	char t[2 + ENPU_MAX_DIMS * 22 + 2], *p = t;
	int nd = s->ndim < 0 ? 0 : s->ndim > ENPU_MAX_DIMS ? ENPU_MAX_DIMS : s->ndim;
	size_t n;

	if (!cap)
		return buf;
	*p++ = open;
	for (int i = 0; i < nd; i++) {
		if (i) {
			*p++ = ',';
			*p++ = ' ';
		}
		p = put_i64(p, s->dim[i]);
	}
	if (py && nd == 1)
		*p++ = ',';
	*p++ = close;
	n = (size_t)(p - t) < cap - 1 ? (size_t)(p - t) : cap - 1;
	memcpy(buf, t, n);
	buf[n] = '\0';
	return buf;
}

char *enpu_shape_str(const enpu_shape *s, char *buf, size_t cap)
{
	return shape_fmt(s, buf, cap, '[', ']', 0);
}

char *enpu_shape_pystr(const enpu_shape *s, char *buf, size_t cap)
{
	return shape_fmt(s, buf, cap, '(', ')', 1);
}

int enpu_tensor_alloc(enpu_tensor *t, const enpu_limits *lim, enpu_err *e)
{
	uint64_t n;
	size_t es;
	char sh[128];

	if (!lim)
		lim = enpu_limits_default();
	if (t->dtype == ENPU_DT_INVALID)
		t->dtype = ENPU_DT_F32;
	es = enpu_dtype_size(t->dtype) ? enpu_dtype_size(t->dtype) : sizeof(float);
	if (enpu_shape_numel(&t->shape, &n) || n > lim->max_tensor_elems ||
	    n > lim->max_tensor_bytes / es || n > SIZE_MAX / es)
		return enpu_fail(e, ENPU_E_LIMIT, t->name, NULL,
				 "tensor '%s' of shape %s exceeds the limit of %llu elements",
				 t->name ? t->name : "?", enpu_shape_str(&t->shape, sh, sizeof(sh)),
				 (unsigned long long)lim->max_tensor_elems);
	t->bytes = calloc(n ? (size_t)n : 1, es);
	if (!t->data)
		return enpu_fail(e, ENPU_E_NOMEM, t->name, NULL, "cannot allocate tensor '%s'",
				 t->name ? t->name : "?");
	return 0;
}

void enpu_tensor_free(enpu_tensor *t)
{
	if (!t)
		return;
	free(t->name);
	free(t->data);
	t->name = NULL;
	t->data = NULL;
}

int enpu_tlist_push(enpu_tlist *l, enpu_tensor *t, enpu_err *e)
{
	if (l->n == l->alloc) {
		size_t n = l->alloc ? l->alloc * 2 : 8;
		enpu_tensor *p = realloc(l->items, n * sizeof(*p));
		if (!p)
			return enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
		l->items = p;
		l->alloc = n;
	}
	l->items[l->n++] = *t;
	memset(t, 0, sizeof(*t));
	return 0;
}

int enpu_tlist_copy(const enpu_tlist *src, enpu_tlist *dst, enpu_err *e)
{
	for (size_t i = 0; i < src->n; i++) {
		const enpu_tensor *s = &src->items[i];
		enpu_tensor t;
		uint64_t n = 0;
		size_t es = enpu_dtype_size(s->dtype) ? enpu_dtype_size(s->dtype) : sizeof(float);

		memset(&t, 0, sizeof t);
		t.dtype = s->dtype;
		t.shape = s->shape;
		if (enpu_shape_numel(&t.shape, &n) != 0 || n > SIZE_MAX / es)
			return enpu_fail(e, ENPU_E_LIMIT, s->name, NULL, "tensor '%s' is too large",
					 s->name ? s->name : "?");
		if ((s->name && !(t.name = strdup(s->name))) ||
		    !(t.bytes = malloc(n ? (size_t)n * es : 1))) {
			enpu_tensor_free(&t);
			return enpu_fail(e, ENPU_E_NOMEM, s->name, NULL, "out of memory");
		}
		if (n && s->bytes)
			memcpy(t.bytes, s->bytes, (size_t)n * es);
		if (enpu_tlist_push(dst, &t, e) != 0) {
			enpu_tensor_free(&t);
			return -1;
		}
	}
	return 0;
}

enpu_tensor *enpu_tlist_find(const enpu_tlist *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->items[i].name && strcmp(l->items[i].name, name) == 0)
			return &l->items[i];
	return NULL;
}

void enpu_tlist_free(enpu_tlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		enpu_tensor_free(&l->items[i]);
	free(l->items);
	l->items = NULL;
	l->n = l->alloc = 0;
}

void enpu_tlist_names(const enpu_tlist *l, char *buf, size_t cap)
{
	size_t used = 0;

	if (!cap)
		return;
	buf[0] = '\0';
	for (size_t i = 0; i < l->n && used + 1 < cap; i++) {
		int n = snprintf(buf + used, cap - used, "%s%s", i ? ", " : "", l->items[i].name);
		if (n < 0)
			break;
		used += (size_t)n;
	}
}

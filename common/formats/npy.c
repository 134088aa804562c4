/* npy.c: the NumPy .npy format: parsing (versions 1.0, 2.0, 3.0) and writing
 * (1.0, as np.save does). The header is a tiny Python dict literal, parsed
 * here by hand; every declared size is checked before it is trusted. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "npz.h"

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_MAX_HEADER 65536    /* numpy writes < 300 bytes for ndim <= 8 */
#define NPY_ALIGN 64            /* numpy >= 1.14 aligns the data to 64 */
#define NPY_GROWTH_DIGITS 21    /* numpy pads for in-place growth of dim 0 */
#define NPY_DESCR_MAX 32

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define HOST_BE 1
#else
#define HOST_BE 0
#endif

static const char fix_f32[] = "convert before saving: np.save(path, arr.astype('<f4'))";

/* ---- little-endian helpers (the data may sit at any offset) ---- */

/* n elements of es bytes each (4 or 8), little-endian in the file. */
static void load_le(void *dst, const unsigned char *src, uint64_t n, size_t es)
{
	if (!n)
		return;
#if HOST_BE
	for (uint64_t i = 0; i < n; i++)
		for (size_t j = 0; j < es; j++)
			((unsigned char *)dst)[i * es + j] = src[i * es + es - 1 - j];
#else
	memcpy(dst, src, (size_t)n * es);
#endif
}

static int store_le(enpu_buf *out, const void *src, uint64_t n, size_t es)
{
	if (!n)
		return 0;
#if HOST_BE
	for (uint64_t i = 0; i < n; i++) {
		unsigned char p[8];
		for (size_t j = 0; j < es; j++)
			p[j] = ((const unsigned char *)src)[i * es + es - 1 - j];
		if (enpu_buf_add(out, p, es))
			return -1;
	}
	return 0;
#else
	return enpu_buf_add(out, src, (size_t)n * es);
#endif
}

/* ---- the header dict: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } ---- */

typedef struct hcur {
	const char *p, *end;
	const char *why;        /* what was malformed, for the message */
} hcur;

static void skip_ws(hcur *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
		c->p++;
}

static int eat(hcur *c, char ch)
{
	skip_ws(c);
	if (c->p < c->end && *c->p == ch) {
		c->p++;
		return 1;
	}
	return 0;
}

/* A quoted string without escapes (dtype strings and keys have none). */
static int parse_str(hcur *c, char *out, size_t cap)
{
	char q;
	size_t n = 0;

	skip_ws(c);
	if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
		return c->why = "expected a quoted string", -1;
	q = *c->p++;
	while (c->p < c->end && *c->p != q) {
		unsigned char ch = (unsigned char)*c->p++;
		if (ch < 0x20 || ch >= 0x7f || ch == '\\' || n + 1 >= cap)
			return c->why = "bad string", -1;
		out[n++] = (char)ch;
	}
	if (c->p >= c->end)
		return c->why = "unterminated string", -1;
	c->p++;
	out[n] = '\0';
	return 0;
}

static int parse_bool(hcur *c, int *out)
{
	skip_ws(c);
	for (int v = 0; v <= 1; v++) {
		const char *w = v ? "True" : "False";
		size_t n = strlen(w);
		if ((size_t)(c->end - c->p) >= n && !memcmp(c->p, w, n)) {
			c->p += n;
			*out = v;
			return 0;
		}
	}
	return c->why = "'fortran_order' must be True or False", -1;
}

/* A Python int literal >= 0 (a trailing 'L' from Python 2 files is fine). */
static int parse_dim(hcur *c, int64_t *out)
{
	uint64_t v = 0;
	const char *start;

	skip_ws(c);
	start = c->p;
	while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
		unsigned d = (unsigned)(*c->p - '0');
		if (v > ((uint64_t)INT64_MAX - d) / 10)
			return c->why = "dimension too large", -1;
		v = v * 10 + d;
		c->p++;
	}
	if (c->p == start || (c->p - start > 1 && *start == '0'))
		return c->why = "'shape' must be a tuple of non-negative integers", -1;
	if (c->p < c->end && *c->p == 'L')
		c->p++;
	*out = (int64_t)v;
	return 0;
}

/* 1 when there are too many dims, so that it can be reported as a limit. */
static int parse_shape(hcur *c, enpu_shape *s)
{
	s->ndim = 0;
	if (!eat(c, '('))
		return c->why = "'shape' must be a tuple", -1;
	if (eat(c, ')'))
		return 0;
	for (;;) {
		int64_t d;
		if (parse_dim(c, &d))
			return -1;
		if (s->ndim == ENPU_MAX_DIMS)
			return 1;
		s->dim[s->ndim++] = d;
		if (eat(c, ')')) {
			if (s->ndim == 1)   /* "(8)" is an int in Python, not a tuple */
				return c->why = "'shape' must be a tuple", -1;
			return 0;
		}
		if (!eat(c, ','))
			return c->why = "expected ',' or ')' in 'shape'", -1;
		if (eat(c, ')'))
			return 0;
	}
}

/* Exactly the three keys, each once, any order; then only whitespace. */
static int parse_header(const char *h, size_t n, const char *label, char *descr,
			int *fortran, enpu_shape *s, enpu_err *e)
{
	hcur c = {h, h + n, NULL};
	unsigned seen = 0;

	if (!eat(&c, '{')) {
		c.why = "it is not a dict";
		goto bad;
	}
	while (!eat(&c, '}')) {
		char key[32];
		unsigned bit;
		int r = 0;

		if (parse_str(&c, key, sizeof(key)))
			goto bad;
		if (!strcmp(key, "descr"))
			bit = 1;
		else if (!strcmp(key, "fortran_order"))
			bit = 2;
		else if (!strcmp(key, "shape"))
			bit = 4;
		else {
			c.why = "unknown key";
			goto bad;
		}
		if (seen & bit) {
			c.why = "duplicate key";
			goto bad;
		}
		seen |= bit;
		if (!eat(&c, ':')) {
			c.why = "expected ':'";
			goto bad;
		}
		skip_ws(&c);
		if (bit == 1 && c.p < c.end && *c.p == '[')
			return enpu_fail(e, ENPU_E_NPY_DTYPE, label, fix_f32,
					 "structured array dtypes are not supported: float32 ('<f4') only for now");
		if (bit == 1)
			r = parse_str(&c, descr, NPY_DESCR_MAX);
		else if (bit == 2)
			r = parse_bool(&c, fortran);
		else
			r = parse_shape(&c, s);
		if (r > 0)
			return enpu_fail(e, ENPU_E_LIMIT, label, NULL,
					 "array has more than %d dimensions, the most supported",
					 ENPU_MAX_DIMS);
		if (r)
			goto bad;
		if (!eat(&c, ',')) {
			if (eat(&c, '}'))
				break;
			c.why = "expected ',' or '}'";
			goto bad;
		}
	}
	skip_ws(&c);
	if (c.p != c.end) {
		c.why = "trailing characters after the dict";
		goto bad;
	}
	if (seen != 7) {
		c.why = "it needs the keys 'descr', 'fortran_order' and 'shape'";
		goto bad;
	}
	return 0;
bad:
	return enpu_fail(e, ENPU_E_NPY, label, NULL, "malformed .npy header: %s (at byte %zu of the header)",
			 c.why ? c.why : "syntax error", (size_t)(c.p - h));
}

int enpu_npy_parse_header(const void *buf, size_t len, uint64_t total, const char *label,
			  const enpu_limits *lim, enpu_dtype *dtype, enpu_shape *shape,
			  size_t *data_off, enpu_err *e)
{
	const unsigned char *b = buf;
	char descr[NPY_DESCR_MAX], shp[256];
	enpu_shape s = {0, {0}};
	int fortran = 0;
	size_t pre, hlen;
	uint64_t numel, need, avail;
	enpu_dtype dt;
	size_t es;

	if (!lim)
		lim = enpu_limits_default();
	if (!label)
		label = "array";
	if (len && memcmp(b, NPY_MAGIC, len < NPY_MAGIC_LEN ? len : NPY_MAGIC_LEN))
		return enpu_fail(e, ENPU_E_NPY, label, NULL, "not a .npy array (bad magic bytes)");
	if (len < NPY_MAGIC_LEN + 4)
		goto truncated;
	if (b[6] == 1 && b[7] == 0) {
		pre = 10;
		hlen = (size_t)b[8] | (size_t)b[9] << 8;
	} else if ((b[6] == 2 || b[6] == 3) && b[7] == 0) {
		if (len < 12)
			goto truncated;
		pre = 12;
		hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
	} else {
		return enpu_fail(e, ENPU_E_NPY, label, "save with a current numpy (np.save)",
				 "unsupported .npy format version %u.%u", b[6], b[7]);
	}
	if (hlen > NPY_MAX_HEADER)
		return enpu_fail(e, ENPU_E_NPY, label, NULL,
				 ".npy header of %zu bytes is too long (at most %d)", hlen, NPY_MAX_HEADER);
	if (hlen > len - pre || pre + hlen > total)
		goto truncated;
	if (parse_header((const char *)b + pre, hlen, label, descr, &fortran, &s, e))
		return -1;
	if ((dt = enpu_dtype_from_descr(descr)) == ENPU_DT_INVALID)
		return enpu_fail(e, ENPU_E_NPY_DTYPE, label, fix_f32,
				 "array dtype '%s' is not supported: float32 ('<f4') only, or int64 ('<i8') for "
				 "weights, or spec v3's int8 ('|i1'), uint8 ('|u1'), int32 ('<i4')",
				 descr);
	es = enpu_dtype_size(dt);
	if (fortran)
		return enpu_fail(e, ENPU_E_NPY_ORDER, label, "np.save(path, np.ascontiguousarray(arr))",
				 "fortran_order arrays are not supported; save with np.ascontiguousarray");
	enpu_shape_pystr(&s, shp, sizeof(shp));
	if (enpu_shape_numel(&s, &numel))
		return enpu_fail(e, ENPU_E_NPY, label, NULL,
				 "array shape %s overflows the element count", shp);
	if (numel > lim->max_tensor_elems || numel > UINT64_MAX / es ||
	    numel * es > lim->max_tensor_bytes || numel * es > SIZE_MAX)
		return enpu_fail(e, ENPU_E_LIMIT, label, "raise the tensor limits or split the tensor",
				 "array of shape %s exceeds the limits (%llu elements, %llu bytes per tensor)",
				 shp, (unsigned long long)lim->max_tensor_elems,
				 (unsigned long long)lim->max_tensor_bytes);
	need = numel * es;
	avail = total - pre - hlen;
	if (avail < need)
		return enpu_fail(e, ENPU_E_NPY, label, NULL,
				 "array data truncated: shape %s needs %llu bytes, %llu present",
				 shp, (unsigned long long)need, (unsigned long long)avail);
	if (avail > need)
		return enpu_fail(e, ENPU_E_NPY, label, NULL,
				 "array has %llu bytes of trailing data: shape %s needs %llu bytes, %llu present",
				 (unsigned long long)(avail - need), shp, (unsigned long long)need,
				 (unsigned long long)avail);
	*dtype = dt;
	*shape = s;
	*data_off = pre + hlen;
	return 0;
truncated:
	return enpu_fail(e, ENPU_E_NPY, label, NULL,
			 "truncated .npy array: the header runs past the end (%llu bytes)",
			 (unsigned long long)total);
}

int enpu_npy_parse(const void *buf, size_t len, const char *label,
		   const enpu_limits *lim, enpu_tensor *out, enpu_err *e)
{
	size_t off, es;
	uint64_t numel;

	memset(out, 0, sizeof(*out));
	if (enpu_npy_parse_header(buf, len, len, label, lim, &out->dtype, &out->shape, &off, e))
		return -1;
	es = enpu_dtype_size(out->dtype);
	enpu_shape_numel(&out->shape, &numel);   /* checked by the header's parse */
	if (numel && !(out->bytes = malloc((size_t)(numel * es))))
		return enpu_fail(e, ENPU_E_NOMEM, label ? label : "array", NULL,
				 "cannot allocate %llu bytes for the array",
				 (unsigned long long)(numel * es));
	load_le(out->bytes, (const unsigned char *)buf + off, numel, es);
	return 0;
}

/* Byte-identical to numpy's np.save (1.24) for float32 and int64 C-order
 * arrays: the header here, the data after it. */
int enpu_npy_write_header(const char *name, enpu_dtype dtype, const enpu_shape *shape,
			  enpu_buf *out, enpu_err *e)
{
	/* the header dict as numpy writes it, then spaces: the dim 0 room
	 * (NPY_GROWTH_DIGITS), the alignment to NPY_ALIGN, a final '\n' */
	char spaces[NPY_GROWTH_DIGITS + NPY_ALIGN];
	size_t len0 = out->len, dict, hlen, pad, grow = 0;
	char shp[256];
	unsigned char pre[10];
	uint64_t numel;
	size_t es = enpu_dtype_size(dtype);

	if (!name)
		name = "";
	if (!es)
		return enpu_fail(e, ENPU_E_DTYPE, NULL, NULL,
				 "tensor '%s' is %s, only float32 and int64 can be written", name,
				 enpu_dtype_name(dtype));
	if (shape->ndim < 0 || shape->ndim > ENPU_MAX_DIMS || enpu_shape_numel(shape, &numel) ||
	    numel > SIZE_MAX / es)
		return enpu_fail(e, ENPU_E_INTERNAL, NULL, NULL, "tensor '%s' has an invalid shape",
				 name);
	enpu_shape_pystr(shape, shp, sizeof(shp));
	if (shape->ndim > 0) {   /* the room left beside dim 0's digits (and sign) */
		size_t nd = shape->dim[0] < 0 ? 2 : 1;
		for (int64_t v = shape->dim[0]; v <= -10 || v >= 10; v /= 10)
			nd++;
		grow = nd < NPY_GROWTH_DIGITS ? NPY_GROWTH_DIGITS - nd : 0;
	}
	dict = strlen("{'descr': '") + strlen(enpu_dtype_descr(dtype)) +
	       strlen("', 'fortran_order': False, 'shape': ") + strlen(shp) + strlen(", }") + grow;
	hlen = dict + 1;        /* + the final '\n' */
	pad = NPY_ALIGN - (sizeof(pre) + hlen) % NPY_ALIGN;    /* 1..64, as numpy */
	hlen += pad;
	memcpy(pre, NPY_MAGIC, NPY_MAGIC_LEN);
	pre[6] = 1;
	pre[7] = 0;
	pre[8] = hlen & 0xff;
	pre[9] = (hlen >> 8) & 0xff;
	memset(spaces, ' ', grow + pad);
	if (enpu_buf_add(out, pre, sizeof(pre)) || enpu_buf_adds(out, "{'descr': '") ||
	    enpu_buf_adds(out, enpu_dtype_descr(dtype)) ||
	    enpu_buf_adds(out, "', 'fortran_order': False, 'shape': ") || enpu_buf_adds(out, shp) ||
	    enpu_buf_adds(out, ", }") || enpu_buf_add(out, spaces, grow + pad) ||
	    enpu_buf_add(out, "\n", 1)) {
		if (out->data) {
			out->len = len0;
			out->data[len0] = '\0';
		}
		return enpu_fail(e, ENPU_E_NOMEM, NULL, NULL,
				 "cannot serialize tensor '%s': out of memory", name);
	}
	return 0;
}

int enpu_npy_write(const enpu_tensor *t, enpu_buf *out, enpu_err *e)
{
	const char *name = t->name ? t->name : "";
	size_t len0 = out->len, es = enpu_dtype_size(t->dtype);
	uint64_t numel;

	if (enpu_npy_write_header(name, t->dtype, &t->shape, out, e))
		return -1;
	enpu_shape_numel(&t->shape, &numel);   /* checked by the header */
	if (numel && !t->bytes) {
		out->len = len0;
		out->data[len0] = '\0';
		return enpu_fail(e, ENPU_E_INTERNAL, NULL, NULL, "tensor '%s' has no data", name);
	}
	if (store_le(out, t->bytes, numel, es)) {
		out->len = len0;
		out->data[len0] = '\0';
		return enpu_fail(e, ENPU_E_NOMEM, NULL, NULL,
				 "cannot serialize tensor '%s': out of memory", name);
	}
	return 0;
}

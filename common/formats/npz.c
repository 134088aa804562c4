/* npz.c: .npz archives (a zip of <name>.npy members) read and written with
 * libzip. Member names, declared sizes and the bytes really inflated are all
 * checked against the limits before a tensor is trusted (zip bombs, lies). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zip.h>
#include "npz.h"
#include "npz_int.h"

/* the most a member may exceed its tensor data: magic, length and a header
 * of NPY_MAX_HEADER (npy.c) */
#define NPY_MAX_OVERHEAD (65536 + 12)
#define ZIP_EOCD_LEN 22         /* the smallest zip: an empty archive */
#define DOS_DATE_1980 ((0 << 9) | (1 << 5) | 1)   /* 1980-01-01 */

/* ---- names ---- */

/* Printable UTF-8 (no controls, C0 or C1), shortest forms, no surrogates. */
static int utf8_printable(const unsigned char *s, size_t n)
{
	size_t i = 0, k;
	unsigned long cp;

	while (i < n) {
		k = enpu_utf8_seq(s + i, n - i, &cp);
		if (!k || cp < 0x20 || (cp >= 0x7f && cp < 0xa0))
			return 0;
		i += k;
	}
	return 1;
}

/* A name for a message: anything unprintable as \xNN, cut to fit. */
static const char *show(const char *raw, char *buf, size_t cap)
{
	const unsigned char *s = (const unsigned char *)raw;
	size_t n = strlen(raw), o = 0;
	int ok = utf8_printable(s, n);

	for (size_t i = 0; i < n && o + 5 < cap; i++) {
		if (s[i] < 0x20 || s[i] == 0x7f || (s[i] >= 0x80 && !ok) || s[i] == '\'')
			o += (size_t)snprintf(buf + o, cap - o, "\\x%02x", s[i]);
		else
			buf[o++] = (char)s[i];
	}
	buf[o] = '\0';
	return buf;
}

/* Why a tensor name cannot be an npz key, or NULL when it can. */
static const char *bad_name(const char *name, size_t n)
{
	if (n == 0)
		return "is empty";
	if (memchr(name, '/', n) || memchr(name, '\\', n))
		return "holds a path separator";
	/* libzip turns a NUL inside a zip name into ' ', so reject spaces too */
	if (memchr(name, ' ', n))
		return "holds a space (or a NUL byte)";
	for (size_t i = 0; i + 1 < n; i++)
		if (name[i] == '.' && name[i + 1] == '.')
			return "holds '..'";
	if (!utf8_printable((const unsigned char *)name, n))
		return "is not printable UTF-8";
	return NULL;
}

/* ---- reading ---- */

/* Map a libzip error to ours. The text is taken from a private copy: the
 * string libzip caches in a source's own error is never freed. */
static int zip_fail_code(enpu_err *e, int zcode, int sys, const char *where)
{
	zip_error_t ze;
	const char *why;

	zip_error_init(&ze);
	zip_error_set(&ze, zcode, sys);
	why = zip_error_strerror(&ze);
	switch (zcode) {
	case ZIP_ER_NOZIP:
		enpu_fail(e, ENPU_E_NPY, where, "save it with np.savez or np.savez_compressed",
			  "'%s' is not an .npz file (zip archive)", where);
		break;
	case ZIP_ER_NOENT:
	case ZIP_ER_OPEN:
	case ZIP_ER_READ:
	case ZIP_ER_SEEK:
		enpu_fail(e, ENPU_E_IO, where, NULL, "cannot read the file: %s", why);
		break;
	case ZIP_ER_MEMORY:
		enpu_fail(e, ENPU_E_NOMEM, where, NULL, "out of memory reading the archive");
		break;
	case ZIP_ER_CRC:
		enpu_fail(e, ENPU_E_NPY, where, NULL, "CRC mismatch: the member data is corrupt");
		break;
	default:
		enpu_fail(e, ENPU_E_NPY, where, NULL, "corrupt or truncated .npz archive: %s", why);
		break;
	}
	zip_error_fini(&ze);
	return -1;
}

int enpu_npz_zip_fail(enpu_err *e, const zip_error_t *ze, const char *where)
{
	return zip_fail_code(e, zip_error_code_zip(ze), zip_error_code_system(ze), where);
}

#define zip_fail enpu_npz_zip_fail

/* Read member i whole: at most declared + 1 bytes, so a member whose headers
 * lie about its size is caught without decompressing the rest of it. */
static int read_member(zip_t *za, zip_uint64_t i, uint64_t declared, const char *mlabel,
		       unsigned char **outp, enpu_err *e)
{
	zip_file_t *zf;
	unsigned char *p;
	uint64_t got = 0;
	int rc;

	if (!(zf = zip_fopen_index(za, i, 0)))
		return zip_fail(e, zip_get_error(za), mlabel);
	if (!(p = malloc((size_t)declared + 1))) {
		zip_fclose(zf);
		return enpu_fail(e, ENPU_E_NOMEM, mlabel, NULL, "cannot allocate %llu bytes",
				 (unsigned long long)declared + 1);
	}
	while (got < declared + 1) {
		zip_int64_t r = zip_fread(zf, p + got, declared + 1 - got);
		if (r < 0) {
			zip_fail(e, zip_file_get_error(zf), mlabel);
			goto fail;
		}
		if (r == 0)
			break;
		got += (uint64_t)r;
	}
	if (got != declared) {
		enpu_fail(e, ENPU_E_NPY, mlabel, NULL,
			  "member size mismatch: the zip headers declare %llu bytes, the data holds %s%llu",
			  (unsigned long long)declared, got > declared ? "more than " : "",
			  (unsigned long long)(got > declared ? declared : got));
		goto fail;
	}
	if ((rc = zip_fclose(zf)) != 0) {
		zip_fail_code(e, rc, 0, mlabel);
		free(p);
		return -1;
	}
	*outp = p;
	return 0;
fail:
	zip_fclose(zf);
	free(p);
	return -1;
}

/* Open src as a zip (takes ownership of src): *dup set when libzip saw a
 * name twice (then the member loop names it). NULL on failure. */
static zip_t *open_archive(zip_source_t *src, const char *label, int *dup, enpu_err *e)
{
	zip_error_t ze;
	zip_stat_t st;
	zip_t *za;

	zip_error_init(&ze);
	zip_stat_init(&st);
	if (zip_source_stat(src, &st) < 0) {
		zip_fail(e, zip_source_error(src), label);
		zip_source_free(src);
		return NULL;
	}
	/* libzip opens an empty file as an empty archive; numpy never writes one */
	if ((st.valid & ZIP_STAT_SIZE) && st.size < ZIP_EOCD_LEN) {
		zip_source_free(src);
		zip_fail_code(e, ZIP_ER_NOZIP, 0, label);
		return NULL;
	}
	za = zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &ze);
	if (!za && zip_error_code_zip(&ze) == ZIP_ER_EXISTS) {
		/* a name twice: reopen without the check so the loop names it */
		*dup = 1;
		zip_error_fini(&ze);
		zip_error_init(&ze);
		za = zip_open_from_source(src, ZIP_RDONLY, &ze);
	}
	if (!za) {
		zip_source_free(src);
		zip_fail(e, &ze, label);
	}
	zip_error_fini(&ze);
	return za;
}

int enpu_npz_check_member_name(const enpu_tlist *out, size_t n0, const char *raw, size_t rlen,
			     const char *label, enpu_err *e)
{
	char shown[256];
	const char *why;

	if (rlen < 4 || strcmp(raw + rlen - 4, ".npy"))
		return enpu_fail(e, ENPU_E_NPY, label, "an .npz holds only <name>.npy arrays (np.savez)",
				 "member '%s' is not an .npy array", show(raw, shown, sizeof(shown)));
	if ((why = bad_name(raw, rlen - 4)))
		return enpu_fail(e, ENPU_E_NPY, label, "rename the array when saving",
				 "member '%s' is not a valid tensor name: it %s",
				 show(raw, shown, sizeof(shown)), why);
	for (size_t j = n0; j < out->n; j++)
		if (strlen(out->items[j].name) == rlen - 4 &&
		    !memcmp(out->items[j].name, raw, rlen - 4))
			return enpu_fail(e, ENPU_E_NPY, label, NULL,
					 "member '%s' appears more than once",
					 show(raw, shown, sizeof(shown)));
	return 0;
}

int enpu_npz_member_limits(uint64_t size, uint64_t total, const char *label, const char *mlabel,
			   const enpu_limits *lim, enpu_err *e)
{
	/* the declared size, checked before a byte is inflated (zip bombs) */
	if (size > lim->max_npz_bytes - total)
		return enpu_fail(e, ENPU_E_LIMIT, mlabel, "raise max_npz_bytes or split the file",
				 "'%s' decompresses to more than the limit of %llu bytes", label,
				 (unsigned long long)lim->max_npz_bytes);
	if ((size > NPY_MAX_OVERHEAD && size - NPY_MAX_OVERHEAD > lim->max_tensor_bytes) ||
	    size >= SIZE_MAX)
		return enpu_fail(e, ENPU_E_LIMIT, mlabel, "raise max_tensor_bytes or split the tensor",
				 "member of %llu bytes exceeds the limit of %llu bytes per tensor",
				 (unsigned long long)size, (unsigned long long)lim->max_tensor_bytes);
	return 0;
}

/* Member i (named raw, rlen bytes) onto out, within the limits; *total
 * counts the bytes inflated so far. */
static int read_one(zip_t *za, zip_int64_t i, const char *raw, size_t rlen, const char *label,
		    const enpu_limits *lim, uint64_t *total, enpu_tlist *out, enpu_err *e)
{
	char mlabel[600];
	unsigned char *data = NULL;
	enpu_tensor t;
	zip_stat_t st;
	int rc;

	snprintf(mlabel, sizeof(mlabel), "%s member '%.*s'", label, (int)(rlen - 4), raw);
	zip_stat_init(&st);
	if (zip_stat_index(za, (zip_uint64_t)i, 0, &st) < 0 || !(st.valid & ZIP_STAT_SIZE))
		return zip_fail(e, zip_get_error(za), mlabel);
	if (enpu_npz_member_limits(st.size, *total, label, mlabel, lim, e))
		return -1;
	if (read_member(za, (zip_uint64_t)i, st.size, mlabel, &data, e))
		return -1;
	*total += st.size;
	rc = enpu_npy_parse(data, (size_t)st.size, mlabel, lim, &t, e);
	free(data);
	if (rc)
		return -1;
	if (!(t.name = strndup(raw, rlen - 4))) {
		enpu_tensor_free(&t);
		return enpu_fail(e, ENPU_E_NOMEM, mlabel, NULL, "out of memory");
	}
	if (enpu_tlist_push(out, &t, e)) {
		enpu_tensor_free(&t);
		return -1;
	}
	return 0;
}

/* Takes ownership of src. On failure out is left as it was. */
static int read_archive(zip_source_t *src, const char *label, const enpu_limits *lim,
			enpu_tlist *out, enpu_err *e)
{
	size_t n0 = out->n;
	zip_t *za;
	zip_int64_t nent;
	uint64_t total = 0;
	int dup = 0;

	if (!lim)
		lim = enpu_limits_default();
	if (!(za = open_archive(src, label, &dup, e)))
		goto fail;
	nent = zip_get_num_entries(za, 0);
	if (nent < 0 || (uint64_t)nent > lim->max_npz_members) {
		enpu_fail(e, ENPU_E_LIMIT, label, "raise max_npz_members or split the file",
			  "'%s' holds %lld members, more than the limit of %llu", label,
			  (long long)nent, (unsigned long long)lim->max_npz_members);
		goto fail;
	}
	for (zip_int64_t i = 0; i < nent; i++) {
		const char *raw = zip_get_name(za, (zip_uint64_t)i, ZIP_FL_ENC_RAW);

		if (!raw) {
			zip_fail(e, zip_get_error(za), label);
			goto fail;
		}
		if (enpu_npz_check_member_name(out, n0, raw, strlen(raw), label, e) ||
		    read_one(za, i, raw, strlen(raw), label, lim, &total, out, e))
			goto fail;
	}
	if (dup) {      /* libzip saw a duplicate that the loop did not */
		enpu_fail(e, ENPU_E_NPY, label, NULL, "'%s' holds a member name more than once", label);
		goto fail;
	}
	zip_discard(za);
	return 0;
fail:
	if (za)
		zip_discard(za);
	while (out->n > n0)
		enpu_tensor_free(&out->items[--out->n]);
	return -1;
}

/* path as a zip source (NULL + *e when it cannot be one) */
static zip_source_t *file_source(const char *path, const char *label, enpu_err *e)
{
	zip_error_t ze;
	zip_source_t *src;
	struct stat sb;

	/* libzip's own words for these are "Read error", "Operation not supported" */
	if (stat(path, &sb) < 0) {
		enpu_fail(e, ENPU_E_IO, label, NULL, "cannot open the file: %s", strerror(errno));
		return NULL;
	}
	if (S_ISDIR(sb.st_mode)) {
		enpu_fail(e, ENPU_E_IO, label, NULL, "cannot read the file: it is a directory");
		return NULL;
	}
	zip_error_init(&ze);
	if (!(src = zip_source_file_create(path, 0, -1, &ze)))
		zip_fail(e, &ze, label);
	zip_error_fini(&ze);
	return src;
}

int enpu_npz_read(const char *path, const char *label, const enpu_limits *lim,
		  enpu_tlist *out, enpu_err *e)
{
	zip_source_t *src;

	if (!label)
		label = path;
	if (!(src = file_source(path, label, e)))
		return -1;
	return read_archive(src, label, lim, out, e);
}

zip_t *enpu_npz_open(const char *path, const char *label, enpu_err *e)
{
	zip_source_t *src = file_source(path, label, e);
	int dup = 0;
	zip_t *za;

	if (!src)
		return NULL;
	za = open_archive(src, label, &dup, e);
	if (za && dup) {   /* a name twice: the archive is not an .npz we take */
		zip_discard(za);
		enpu_fail(e, ENPU_E_NPY, label, NULL, "a member name appears more than once");
		return NULL;
	}
	return za;
}

int enpu_npz_read_mem(const void *buf, size_t len, const char *label,
		      const enpu_limits *lim, enpu_tlist *out, enpu_err *e)
{
	zip_error_t ze;
	zip_source_t *src;

	if (!label)
		label = "data";
	zip_error_init(&ze);
	if (!(src = zip_source_buffer_create(len ? buf : NULL, len, 0, &ze))) {
		zip_fail(e, &ze, label);
		zip_error_fini(&ze);
		return -1;
	}
	zip_error_fini(&ze);
	return read_archive(src, label, lim, out, e);
}

/* ---- writing ---- */

/* Build the archive in memory, then hand it to the atomic file writer. Every
 * member is stored, stamped 1980-01-01 00:00, with a UTF-8 name: the same
 * tensors give the same bytes on every run. */
int enpu_npz_write(const char *path, const enpu_tlist *ts, enpu_err *e)
{
	enpu_buf b = ENPU_BUF_INIT;
	int rc = enpu_npz_write_mem(ts, path, &b, e);

	if (rc == 0)
		rc = enpu_write_file_atomic(path, b.data ? b.data : "", b.len, e);
	enpu_buf_free(&b);
	return rc;
}

/* Every tensor's name can be an .npz key, and none repeats. */
static int check_names(const enpu_tlist *ts, const char *path, enpu_err *e)
{
	for (size_t i = 0; i < ts->n; i++) {
		const char *name = ts->items[i].name ? ts->items[i].name : "";
		const char *why = bad_name(name, strlen(name));
		char shown[256];

		if (why)
			return enpu_fail(e, ENPU_E_NAME, path, NULL,
					 "tensor name '%s' cannot be an .npz key: it %s",
					 show(name, shown, sizeof(shown)), why);
		for (size_t j = 0; j < i; j++)
			if (!strcmp(ts->items[j].name, name))
				return enpu_fail(e, ENPU_E_NAME, path, NULL,
						 "tensor name '%s' appears more than once", name);
	}
	return 0;
}

static int zip_failed(zip_t *za, const char *path, enpu_err *e)
{
	return enpu_fail(e, ENPU_E_INTERNAL, path, NULL, "cannot build the .npz: %s",
			 zip_error_strerror(zip_get_error(za)));
}

/* Tensor t as <name>.npy, stored, dated 1980: the same tensors give the
 * same bytes. */
static int add_member(zip_t *za, const enpu_tensor *t, const char *path, enpu_err *e)
{
	enpu_buf nb = ENPU_BUF_INIT, zname = ENPU_BUF_INIT;
	zip_source_t *ms;
	zip_int64_t idx;
	size_t n;
	char *d;

	if (enpu_npy_write(t, &nb, e))
		return -1;
	d = enpu_buf_detach(&nb, &n);
	if (!d || enpu_buf_addf(&zname, "%s.npy", t->name)) {
		free(d);
		enpu_buf_free(&zname);
		return enpu_fail(e, ENPU_E_NOMEM, path, NULL, "out of memory");
	}
	if (!(ms = zip_source_buffer(za, d, n, 1))) {
		free(d);
		enpu_buf_free(&zname);
		return zip_failed(za, path, e);
	}
	idx = zip_file_add(za, zname.data, ms, ZIP_FL_ENC_UTF_8);
	enpu_buf_free(&zname);
	if (idx < 0) {
		zip_source_free(ms);
		return zip_failed(za, path, e);
	}
	return enpu_npz_member_settings(za, (zip_uint64_t)idx, path, e);
}

int enpu_npz_member_settings(zip_t *za, zip_uint64_t idx, const char *path, enpu_err *e)
{
	if (zip_set_file_compression(za, idx, ZIP_CM_STORE, 0) < 0 ||
	    zip_file_set_dostime(za, idx, 0, DOS_DATE_1980, 0) < 0)
		return zip_failed(za, path, e);
	return 0;
}

/* The closed archive's bytes (in src) appended to out. */
static int read_back(zip_source_t *src, const char *path, enpu_buf *out, enpu_err *e)
{
	unsigned char *img = NULL;
	zip_stat_t st;
	int rc;

	zip_stat_init(&st);
	if (zip_source_stat(src, &st) < 0 || !(st.valid & ZIP_STAT_SIZE) || st.size >= SIZE_MAX ||
	    !(img = malloc((size_t)st.size + 1)) || zip_source_open(src) < 0) {
		free(img);
		return enpu_fail(e, ENPU_E_NOMEM, path, NULL, "cannot assemble the .npz in memory");
	}
	if (zip_source_read(src, img, st.size) != (zip_int64_t)st.size) {
		zip_source_close(src);
		free(img);
		return enpu_fail(e, ENPU_E_INTERNAL, path, NULL,
				 "cannot read back the .npz built in memory");
	}
	zip_source_close(src);
	img[st.size] = '\0';
	if (!out->data && (!out->cap || (size_t)st.size <= out->cap)) {
		/* an empty buffer takes the image as it is: no second copy of
		 * what may be all of a model's weights */
		out->data = (char *)img;
		out->len = (size_t)st.size;
		out->alloc = (size_t)st.size + 1;
		return 0;
	}
	rc = enpu_buf_add(out, img, (size_t)st.size);
	free(img);
	return rc < 0 ? enpu_fail(e, ENPU_E_NOMEM, path, NULL, "out of memory") : 0;
}

int enpu_npz_write_mem(const enpu_tlist *ts, const char *path, enpu_buf *out, enpu_err *e)
{
	static const unsigned char empty_zip[ZIP_EOCD_LEN] = {'P', 'K', 5, 6};
	zip_error_t ze;
	zip_source_t *src = NULL;
	zip_t *za = NULL;
	int rc = -1;

	if (check_names(ts, path, e))
		return -1;
	if (ts->n == 0) {   /* libzip writes nothing at all for an empty archive */
		if (enpu_buf_add(out, empty_zip, sizeof(empty_zip)) < 0)
			return enpu_fail(e, ENPU_E_NOMEM, path, NULL, "out of memory");
		return 0;
	}
	zip_error_init(&ze);
	if (!(src = zip_source_buffer_create(NULL, 0, 0, &ze)) ||
	    !(za = zip_open_from_source(src, ZIP_TRUNCATE, &ze))) {
		enpu_fail(e, ENPU_E_INTERNAL, path, NULL, "cannot build the .npz: %s",
			  zip_error_strerror(&ze));
		goto out;
	}
	zip_source_keep(src);   /* the bytes are read back after zip_close */
	for (size_t i = 0; i < ts->n; i++)
		if (add_member(za, &ts->items[i], path, e))
			goto out;
	if (zip_close(za) < 0) {
		zip_failed(za, path, e);
		goto out;
	}
	za = NULL;
	rc = read_back(src, path, out, e);
out:
	if (za)
		zip_discard(za);
	if (src)
		zip_source_free(src);
	zip_error_fini(&ze);
	return rc;
}

/* npz_stream.c: an .npz used without holding its arrays (npz.h): its
 * members' headers read and checked as enpu_npz_read checks them, a
 * member's data loaded only when asked for, and a new .npz written from
 * chosen members, each streamed from the old file through libzip into the
 * new one (a canonical header, then the data as it lies: the reader
 * accepts only little-endian C-order arrays, which is what the writer
 * writes). The new file's bytes are those enpu_npz_write gives for the
 * same tensors. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <zip.h>
#include <zlib.h>
#include "npz.h"
#include "npz_int.h"
#include "digest.h"

#define HEAD_READ (65536 + 12)   /* a header's most: magic, length, NPY_MAX_HEADER */

void enpu_npz_index_free(enpu_npz_index *ix)
{
	if (!ix)
		return;
	enpu_tlist_free(&ix->meta);
	free(ix->member);
	free(ix->data_off);
	free(ix->crc);
	free(ix->head_crc);
	free(ix->path);
	free(ix->label);
	memset(ix, 0, sizeof(*ix));
}

/* Member i's header into a tensor without data (name set) on ix. */
static int scan_one(zip_t *za, zip_int64_t i, const char *raw, size_t rlen, const char *label,
		    const enpu_limits *lim, uint64_t *total, unsigned char *head,
		    enpu_npz_index *ix, enpu_err *e)
{
	char mlabel[600];
	zip_stat_t st;
	zip_file_t *zf;
	zip_int64_t got = 0, r;
	enpu_tensor t;
	size_t off;

	memset(&t, 0, sizeof t);
	snprintf(mlabel, sizeof(mlabel), "%s member '%.*s'", label, (int)(rlen - 4), raw);
	zip_stat_init(&st);
	if (zip_stat_index(za, (zip_uint64_t)i, 0, &st) < 0 || !(st.valid & ZIP_STAT_SIZE))
		return enpu_npz_zip_fail(e, zip_get_error(za), mlabel);
	if (enpu_npz_member_limits(st.size, *total, label, mlabel, lim, e))
		return -1;
	*total += st.size;
	if (!(zf = zip_fopen_index(za, (zip_uint64_t)i, 0)))
		return enpu_npz_zip_fail(e, zip_get_error(za), mlabel);
	while ((uint64_t)got < st.size && got < HEAD_READ &&
	       (r = zip_fread(zf, head + got, (zip_uint64_t)(HEAD_READ - got))) > 0)
		got += r;
	zip_fclose(zf);
	if ((uint64_t)got < st.size && got < HEAD_READ)
		return enpu_fail(e, ENPU_E_NPY, mlabel, NULL, "cannot read the member's .npy header");
	if (enpu_npy_parse_header(head, (size_t)got, st.size, mlabel, lim, &t.dtype, &t.shape, &off,
				  e))
		return -1;
	if (!(t.name = strndup(raw, rlen - 4)))
		return enpu_fail(e, ENPU_E_NOMEM, mlabel, NULL, "out of memory");
	if (enpu_tlist_push(&ix->meta, &t, e)) {
		enpu_tensor_free(&t);
		return -1;
	}
	ix->member[ix->meta.n - 1] = (uint64_t)i;
	ix->data_off[ix->meta.n - 1] = off;
	ix->crc[ix->meta.n - 1] = (st.valid & ZIP_STAT_CRC) ? st.crc : 0;
	ix->head_crc[ix->meta.n - 1] = (uint32_t)crc32(0, head, (uInt)off);
	if (!(st.valid & ZIP_STAT_CRC) || !(st.valid & ZIP_STAT_COMP_METHOD) ||
	    st.comp_method != ZIP_CM_STORE ||
	    ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) && st.encryption_method != ZIP_EM_NONE))
		ix->all_stored = 0;
	return 0;
}

int enpu_npz_scan(const char *path, const char *label, const enpu_limits *lim,
		  enpu_npz_index *ix, enpu_err *e)
{
	zip_t *za;
	zip_int64_t nent;
	uint64_t total = 0;
	unsigned char *head = NULL;
	int rc = -1;

	memset(ix, 0, sizeof(*ix));
	if (!lim)
		lim = enpu_limits_default();
	if (!label)
		label = path;
	if (!(za = enpu_npz_open(path, label, e)))
		return -1;
	nent = zip_get_num_entries(za, 0);
	if (nent < 0 || (uint64_t)nent > lim->max_npz_members) {
		enpu_fail(e, ENPU_E_LIMIT, label, "split the weights into fewer arrays",
			  "'%s' has %lld members, more than the limit of %llu", label, (long long)nent,
			  (unsigned long long)lim->max_npz_members);
		goto out;
	}
	ix->member = calloc((size_t)(nent ? nent : 1), sizeof(*ix->member));
	ix->data_off = calloc((size_t)(nent ? nent : 1), sizeof(*ix->data_off));
	ix->crc = calloc((size_t)(nent ? nent : 1), sizeof(*ix->crc));
	ix->head_crc = calloc((size_t)(nent ? nent : 1), sizeof(*ix->head_crc));
	ix->path = strdup(path);
	ix->label = strdup(label);
	head = malloc(HEAD_READ);
	if (!ix->member || !ix->data_off || !ix->crc || !ix->head_crc || !ix->path || !ix->label || !head) {
		enpu_fail(e, ENPU_E_NOMEM, label, NULL, "out of memory");
		goto out;
	}
	ix->all_stored = 1;
	for (zip_int64_t i = 0; i < nent; i++) {
		const char *raw = zip_get_name(za, (zip_uint64_t)i, ZIP_FL_ENC_RAW);
		if (!raw) {
			enpu_npz_zip_fail(e, zip_get_error(za), label);
			goto out;
		}
		if (enpu_npz_check_member_name(&ix->meta, 0, raw, strlen(raw), label, e) ||
		    scan_one(za, i, raw, strlen(raw), label, lim, &total, head, ix, e))
			goto out;
	}
	rc = 0;
out:
	free(head);
	zip_discard(za);
	if (rc)
		enpu_npz_index_free(ix);
	return rc;
}

int enpu_npz_scan_load(enpu_npz_index *ix, size_t k, const char *label, enpu_err *e)
{
	enpu_tensor *t = &ix->meta.items[k];
	zip_t *za;
	zip_file_t *zf;
	uint64_t numel, need, got = 0;
	size_t es = enpu_dtype_size(t->dtype);
	unsigned char skip[4096];
	int rc = -1;

	if (t->bytes)
		return 0;
	enpu_shape_numel(&t->shape, &numel);   /* checked by the scan */
	need = numel * es;
	if (!(za = enpu_npz_open(ix->path, label, e)))
		return -1;
	if (!(zf = zip_fopen_index(za, ix->member[k], 0))) {
		enpu_npz_zip_fail(e, zip_get_error(za), label);
		goto out;
	}
	if (need && !(t->bytes = malloc((size_t)need))) {
		enpu_fail(e, ENPU_E_NOMEM, label, NULL, "out of memory");
		goto close;
	}
	for (uint64_t off = 0; off < ix->data_off[k];) {   /* past the header */
		zip_int64_t r = zip_fread(zf, skip, ix->data_off[k] - off < sizeof skip ?
					  ix->data_off[k] - off : sizeof skip);
		if (r <= 0)
			goto short_read;
		off += (uint64_t)r;
	}
	while (got < need) {
		zip_int64_t r = zip_fread(zf, (unsigned char *)t->bytes + got, need - got);
		if (r <= 0)
			goto short_read;
		got += (uint64_t)r;
	}
	if (zip_fread(zf, skip, 1) != 0) {   /* its end, where libzip checks the CRC */
		enpu_fail(e, ENPU_E_NPY, label, NULL, "CRC mismatch: the member data is corrupt");
		goto drop;
	}
	rc = 0;
	goto close;
short_read:
	enpu_fail(e, ENPU_E_NPY, label, NULL, "member '%s' ends before its data does", t->name);
drop:
	free(t->bytes);
	t->bytes = NULL;
close:
	zip_fclose(zf);
out:
	zip_discard(za);
	return rc;
}

/* ---- writing from an index ------------------------------------------------- */

/* ix's member k of each name: k_of[i] for names[i] (the members sorted by
 * name once, each name looked up by bisection: O(n log n) for thousands
 * of members). 0, or the index + 1 of the first name ix lacks; -1 out of
 * memory. */
typedef struct named {
	const char *name;
	size_t k;
} named;

static int cmp_named(const void *a, const void *b)
{
	return strcmp(((const named *)a)->name, ((const named *)b)->name);
}

static long members_of(const enpu_npz_index *ix, const char *const *names, size_t n,
		       size_t *k_of)
{
	size_t m = ix->meta.n;
	named *by = malloc((m ? m : 1) * sizeof *by);

	if (!by)
		return -1;
	for (size_t k = 0; k < m; k++)
		by[k] = (named){ix->meta.items[k].name, k};
	qsort(by, m, sizeof *by, cmp_named);
	for (size_t i = 0; i < n; i++) {
		named key = {names[i], 0};
		const named *hit = m ? bsearch(&key, by, m, sizeof *by, cmp_named) : NULL;
		if (!hit) {
			free(by);
			return (long)i + 1;
		}
		k_of[i] = hit->k;
	}
	free(by);
	return 0;
}

/* The first old member that could not be read, and how. */
struct src_fault {
	int ze;                   /* ZIP_ER_READ or ZIP_ER_CRC; 0: none */
	const char *member;
};

/* One new member: the canonical header, then the old member's data, read
 * through a window on the old archive. libzip checks no CRC on a part of
 * a member, and computes the new member's CRC as it writes it: the old
 * CRC is checked against that one afterwards (check_crcs), so the data
 * is read and CRC'd once. */
typedef struct member_src {
	zip_t *from, *to;         /* the old archive; the new (for errors) */
	uint64_t index, skip, data;
	enpu_buf head;
	zip_source_t *in;         /* open: the old member's data */
	uint64_t pos;             /* bytes handed out */
	zip_error_t err;
	struct src_fault *bad;    /* set when the old member cannot be read */
	const char *name;
} member_src;

/* The old member is what failed: the caller says so as a bad-input error
 * (the source's fault), not as a write error. */
static zip_int64_t member_bad(member_src *m, int ze)
{
	zip_error_set(&m->err, ze, 0);
	if (!m->bad->ze)
		*m->bad = (struct src_fault){ze, m->name};
	return -1;
}

static void member_drop_in(member_src *m)
{
	if (m->in) {
		zip_source_close(m->in);
		zip_source_free(m->in);
	}
	m->in = NULL;
}

static zip_int64_t member_cb(void *ud, void *data, zip_uint64_t len, zip_source_cmd_t cmd)
{
	member_src *m = ud;

	switch (cmd) {
	case ZIP_SOURCE_OPEN:
		m->in = zip_source_zip(m->to, m->from, m->index, 0, m->skip, (zip_int64_t)m->data);
		if (!m->in || zip_source_open(m->in) < 0) {
			if (m->in)
				zip_source_free(m->in);
			m->in = NULL;
			return member_bad(m, ZIP_ER_READ);
		}
		m->pos = 0;
		return 0;
	case ZIP_SOURCE_READ: {
		zip_uint64_t n = 0;
		if (m->pos < m->head.len) {
			n = m->head.len - m->pos < len ? m->head.len - m->pos : len;
			memcpy(data, m->head.data + m->pos, n);
		} else if (m->pos < m->head.len + m->data) {
			uint64_t left = m->head.len + m->data - m->pos;
			zip_int64_t r = zip_source_read(m->in, data, left < len ? left : len);
			if (r <= 0)
				return member_bad(m, ZIP_ER_READ);
			n = (zip_uint64_t)r;
		}
		m->pos += n;
		return (zip_int64_t)n;
	}
	case ZIP_SOURCE_CLOSE:
		member_drop_in(m);
		return 0;
	case ZIP_SOURCE_STAT: {
		zip_stat_t *st = data;
		zip_stat_init(st);
		st->size = m->head.len + m->data;
		st->valid |= ZIP_STAT_SIZE;
		return sizeof(*st);
	}
	case ZIP_SOURCE_ERROR:
		return zip_error_to_data(&m->err, data, len);
	case ZIP_SOURCE_FREE:
		member_drop_in(m);
		enpu_buf_free(&m->head);
		zip_error_fini(&m->err);
		free(m);
		return 0;
	case ZIP_SOURCE_SUPPORTS:
		return zip_source_make_command_bitmap(ZIP_SOURCE_OPEN, ZIP_SOURCE_READ,
						      ZIP_SOURCE_CLOSE, ZIP_SOURCE_STAT,
						      ZIP_SOURCE_ERROR, ZIP_SOURCE_FREE, -1);
	default:
		zip_error_set(&m->err, ZIP_ER_OPNOTSUPP, 0);
		return -1;
	}
}

/* What new member i's CRC must say of the old member it copies. */
typedef struct crc_expect {
	uint32_t new_head;        /* CRC-32 of the new header */
	uint32_t old_head, old;   /* of the old header; of the old member */
	uint64_t data;            /* the data's length, after either header */
	const char *name;
} crc_expect;

/* The old members' CRCs against the new archive's: CRC-32 is linear, so
 * crc(head + data) = shift(crc(head), |data|) ^ crc(data), and the data's
 * CRC follows from the new member's (zlib's crc32_combine shifts). The
 * first old member that disagrees goes to *bad. -1: the new file cannot
 * be read back. */
static int check_crcs(const char *path, const crc_expect *x, size_t n, struct src_fault *bad)
{
	int zerr = 0;
	zip_t *za = zip_open(path, ZIP_RDONLY, &zerr);

	if (!za)
		return -1;
	for (size_t i = 0; i < n; i++) {
		zip_stat_t st;
		uLong data_crc;
		zip_stat_init(&st);
		if (zip_stat_index(za, i, 0, &st) < 0 || !(st.valid & ZIP_STAT_CRC)) {
			zip_discard(za);
			return -1;
		}
		data_crc = st.crc ^ crc32_combine(x[i].new_head, 0, (z_off_t)x[i].data);
		if (crc32_combine(x[i].old_head, data_crc, (z_off_t)x[i].data) != x[i].old) {
			*bad = (struct src_fault){ZIP_ER_CRC, x[i].name};
			break;
		}
	}
	zip_discard(za);
	return 0;
}

static int add_streamed(zip_t *za, zip_t *from, const enpu_npz_index *ix, size_t k,
			struct src_fault *bad, crc_expect *x, const char *label, enpu_err *e)
{
	const enpu_tensor *t = &ix->meta.items[k];
	member_src *m = calloc(1, sizeof *m);
	enpu_buf zname = ENPU_BUF_INIT;
	zip_source_t *src;
	zip_int64_t idx;
	uint64_t numel;

	if (!m)
		return enpu_fail(e, ENPU_E_NOMEM, label, NULL, "out of memory");
	enpu_shape_numel(&t->shape, &numel);
	*m = (member_src){.from = from, .to = za, .index = ix->member[k], .skip = ix->data_off[k],
			  .data = numel * enpu_dtype_size(t->dtype), .head = ENPU_BUF_INIT,
			  .bad = bad, .name = t->name};
	zip_error_init(&m->err);
	if (enpu_npy_write_header(t->name, t->dtype, &t->shape, &m->head, e) ||
	    enpu_buf_addf(&zname, "%s.npy", t->name)) {
		enpu_buf_free(&m->head);
		free(m);
		enpu_buf_free(&zname);
		return e->code ? -1 : enpu_fail(e, ENPU_E_NOMEM, label, NULL, "out of memory");
	}
	*x = (crc_expect){(uint32_t)crc32(0, (const Bytef *)m->head.data, (uInt)m->head.len),
			  ix->head_crc[k], ix->crc[k], m->data, t->name};
	if (!(src = zip_source_function(za, member_cb, m))) {
		enpu_buf_free(&m->head);
		free(m);
		enpu_buf_free(&zname);
		return enpu_npz_zip_fail(e, zip_get_error(za), label);
	}
	idx = zip_file_add(za, zname.data, src, ZIP_FL_ENC_UTF_8);
	enpu_buf_free(&zname);
	if (idx < 0) {
		zip_source_free(src);
		return enpu_npz_zip_fail(e, zip_get_error(za), label);
	}
	return enpu_npz_member_settings(za, (zip_uint64_t)idx, label, e);
}

/* The source's corrupt data, found while writing or by check_crcs. */
static int source_fault(const enpu_npz_index *ix, const struct src_fault *bad, enpu_err *e)
{
	return enpu_fail(e, ENPU_E_NPY, ix->label, NULL, "member '%s': %s", bad->member,
			 bad->ze == ZIP_ER_CRC ? "CRC mismatch: the member data is corrupt" :
			 "it ends before its data does");
}

/* path made durable and hashed: its writeback started first, so the disk
 * writes while the hash reads the page cache, and the fsync waits only
 * for what is left. */
static int hash_and_sync(const char *path, char sha256[65], uint64_t *size, enpu_err *e)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;
	struct stat sb;

	if (fd < 0)
		goto fail;
#ifdef SYNC_FILE_RANGE_WRITE
	(void)sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);   /* a hint: fsync decides */
#endif
	if (enpu_sha256_file(path, sha256, e) < 0) {
		close(fd);
		return -1;
	}
	if (fsync(fd) != 0 || fstat(fd, &sb) != 0) {
		err = errno;
		close(fd);
		errno = err;
		goto fail;
	}
	close(fd);
	*size = (uint64_t)sb.st_size;
	return 0;
fail:
	err = errno;
	enpu_fail(e, ENPU_E_IO, path, NULL, "cannot write '%s': %s", path, strerror(err));
	e->sys_errno = err;
	return -1;
}

int enpu_npz_write_from(const enpu_npz_index *ix, const char *const *names, size_t n,
			const char *dst, char sha256[65], uint64_t *size, enpu_err *e)
{
	char tmp[4200];
	zip_t *from = NULL, *za = NULL;
	crc_expect *x = NULL;
	size_t *k_of = NULL;
	long miss;
	int zerr = 0, rc = -1;
	struct src_fault bad = {0, NULL};

	static atomic_uint seq;
	/* a new name, created by libzip (which gives it the umask's mode) */
	if ((size_t)snprintf(tmp, sizeof tmp, "%s.%ld.%u.tmp", dst, (long)getpid(),
			     atomic_fetch_add(&seq, 1)) >= sizeof tmp)
		return enpu_fail(e, ENPU_E_IO, dst, NULL, "path too long");
	if (n == 0) {   /* libzip writes nothing at all for an empty archive */
		enpu_tlist none = ENPU_TLIST_INIT;
		if (enpu_npz_write(dst, &none, e) || enpu_sha256_file(dst, sha256, e))
			return -1;
		*size = 22;
		return 0;
	}
	if (!(x = calloc(n, sizeof *x)) || !(k_of = malloc(n * sizeof *k_of))) {
		enpu_fail(e, ENPU_E_NOMEM, dst, NULL, "out of memory");
		goto out;
	}
	if (!(from = enpu_npz_open(ix->path, dst, e)))
		goto out;
	if (!(za = zip_open(tmp, ZIP_CREATE | ZIP_EXCL, &zerr))) {
		enpu_fail(e, ENPU_E_IO, dst, NULL, "cannot create '%s' (libzip error %d)", tmp, zerr);
		goto out;
	}
	if ((miss = members_of(ix, names, n, k_of)) != 0) {
		if (miss < 0)
			enpu_fail(e, ENPU_E_NOMEM, dst, NULL, "out of memory");
		else
			enpu_fail(e, ENPU_E_INTERNAL, dst, NULL, "no member '%s' to copy",
				  names[miss - 1]);
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		if (add_streamed(za, from, ix, k_of[i], &bad, &x[i], dst, e))
			goto out;
	if (zip_close(za) < 0) {
		zip_error_t *ze = zip_get_error(za);
		if (bad.ze)   /* the source's data, read only now, is short */
			source_fault(ix, &bad, e);
		else if (!e->code) {   /* a member's own read error is already said */
			enpu_fail(e, ENPU_E_IO, dst, NULL, "cannot write '%s': %s", dst,
				  zip_error_strerror(ze));
			if (zip_error_system_type(ze) == ZIP_ET_SYS)
				e->sys_errno = zip_error_code_system(ze);
		}
		goto out;
	}
	za = NULL;
	if (check_crcs(tmp, x, n, &bad) < 0) {
		enpu_fail(e, ENPU_E_IO, dst, NULL, "cannot read back '%s'", tmp);
		goto out;
	}
	if (bad.ze) {
		source_fault(ix, &bad, e);
		goto out;
	}
	if (hash_and_sync(tmp, sha256, size, e) < 0)
		goto out;
	if (rename(tmp, dst) != 0) {
		int err = errno;
		enpu_fail(e, ENPU_E_IO, dst, NULL, "cannot write '%s': %s", dst, strerror(err));
		e->sys_errno = err;
		goto out;
	}
	rc = 0;
out:
	if (za)
		zip_discard(za);
	if (from)
		zip_discard(from);
	free(x);
	free(k_of);
	unlink(tmp);
	return rc;
}

/* ---- the file as it is ---------------------------------------------------- */

#define CRC_PART (32u << 20)   /* a worker's unit: part of a member's bytes */
#define CRC_BUF (1u << 20)

/* Bytes [start, start + len) of member `member`, and their CRC-32. */
typedef struct crc_part {
	uint64_t member, start, len;
	uint32_t crc;
	int bad;                  /* ZIP_ER_READ: could not be read */
} crc_part;

typedef struct crc_work {
	const char *path;
	crc_part *parts;
	size_t n;
	atomic_size_t next;
} crc_work;

static int crc_window(zip_t *za, crc_part *p, unsigned char *buf)
{
	zip_source_t *s = zip_source_zip(za, za, p->member, 0, p->start, (zip_int64_t)p->len);
	uLong c = crc32(0, NULL, 0);
	uint64_t got = 0;

	if (!s)
		return -1;
	if (zip_source_open(s) < 0) {
		zip_source_free(s);
		return -1;
	}
	while (got < p->len) {
		zip_int64_t r = zip_source_read(s, buf, p->len - got < CRC_BUF ? p->len - got : CRC_BUF);
		if (r <= 0)
			break;
		c = crc32_z(c, buf, (size_t)r);
		got += (uint64_t)r;
	}
	zip_source_close(s);
	zip_source_free(s);
	p->crc = (uint32_t)c;
	return got == p->len ? 0 : -1;
}

/* A worker: parts taken in turn until none is left, each read through its
 * own handle on the archive (a zip_t is not shared between threads). */
static void *crc_worker(void *arg)
{
	crc_work *w = arg;
	int zerr = 0;
	zip_t *za = zip_open(w->path, ZIP_RDONLY, &zerr);
	unsigned char *buf = malloc(CRC_BUF);

	for (size_t i; (i = atomic_fetch_add(&w->next, 1)) < w->n;)
		if (!za || !buf || crc_window(za, &w->parts[i], buf) < 0)
			w->parts[i].bad = ZIP_ER_READ;
	free(buf);
	if (za)
		zip_discard(za);
	return NULL;
}

/* Every member's bytes against its CRC, the parts on up to `threads`
 * threads (this one included); the first member that fails into *bad. */
static int check_members(const enpu_npz_index *ix, int threads, struct src_fault *bad,
			 enpu_err *e)
{
	crc_work w = {.path = ix->path};
	size_t cap = 0, p = 0;
	pthread_t tid[7];
	int started = 0;

	for (size_t k = 0; k < ix->meta.n; k++) {
		uint64_t numel, size;
		enpu_shape_numel(&ix->meta.items[k].shape, &numel);
		size = ix->data_off[k] + numel * enpu_dtype_size(ix->meta.items[k].dtype);
		cap += (size_t)(size / CRC_PART) + 1;
	}
	if (!(w.parts = calloc(cap, sizeof *w.parts)))
		return enpu_fail(e, ENPU_E_NOMEM, ix->label, NULL, "out of memory");
	for (size_t k = 0; k < ix->meta.n; k++) {
		uint64_t numel, size, at = 0;
		enpu_shape_numel(&ix->meta.items[k].shape, &numel);
		size = ix->data_off[k] + numel * enpu_dtype_size(ix->meta.items[k].dtype);
		do {
			uint64_t len = size - at < CRC_PART ? size - at : CRC_PART;
			w.parts[p++] = (crc_part){ix->member[k], at, len, 0, 0};
			at += len;
		} while (at < size);
	}
	w.n = p;
	atomic_init(&w.next, 0);
	if (threads > 8)
		threads = 8;
	while (started < threads - 1 && (size_t)started + 1 < w.n &&
	       pthread_create(&tid[started], NULL, crc_worker, &w) == 0)
		started++;
	crc_worker(&w);
	for (int t = 0; t < started; t++)
		pthread_join(tid[t], NULL);
	for (size_t i = 0, k = 0; i < w.n; k++) {   /* member k's parts, in order */
		uint32_t crc = 0;
		int first = 1;
		for (; i < w.n && w.parts[i].member == ix->member[k]; i++) {
			if (w.parts[i].bad && !bad->ze)
				*bad = (struct src_fault){ZIP_ER_READ, ix->meta.items[k].name};
			crc = first ? w.parts[i].crc :
			      (uint32_t)crc32_combine(crc, w.parts[i].crc, (z_off_t)w.parts[i].len);
			first = 0;
		}
		if (crc != ix->crc[k] && !bad->ze)
			*bad = (struct src_fault){ZIP_ER_CRC, ix->meta.items[k].name};
	}
	free(w.parts);
	return 0;
}

/* dst, a new name, with src's bytes: a hard link (by lk, when given),
 * else a copy (fsynced) that must hash to sha256. */
static int link_or_copy(const char *src, const char *dst, const enpu_linker *lk,
			const char *sha256, uint64_t *size, enpu_err *e)
{
	struct stat sb;
	char got[65];
	int linked = lk && lk->link(lk->ud, src, dst) == 0, err;

	if (!linked && enpu_copy_file(src, dst, 0644, 1) != 0)
		goto fail;
	if (stat(dst, &sb) != 0) {
		err = errno;
		unlink(dst);
		errno = err;
		goto fail;
	}
	*size = (uint64_t)sb.st_size;
	if (linked)   /* the file nobody changes: its digest is known */
		return 0;
	if (enpu_sha256_file(dst, got, e) < 0) {
		unlink(dst);
		return -1;
	}
	if (strcmp(got, sha256) != 0) {
		unlink(dst);
		return enpu_fail(e, ENPU_E_IO, dst, NULL,
				 "the weights file changed while it was compiled: compile it again");
	}
	return 0;
fail:
	err = errno;
	enpu_fail(e, ENPU_E_IO, dst, NULL, "cannot write '%s': %s", dst, strerror(err));
	e->sys_errno = err;
	return -1;
}

int enpu_npz_link_from(const enpu_npz_index *ix, const char *const *names, size_t n,
		       const char *dst, int threads, const enpu_linker *link, const char *sha256,
		       uint64_t *size, enpu_err *e)
{
	struct src_fault bad = {0, NULL};
	size_t *k_of;
	long miss;

	if (!ix->all_stored || n == 0 || n != ix->meta.n)
		return 0;
	if (!(k_of = malloc(n * sizeof *k_of)))
		return enpu_fail(e, ENPU_E_NOMEM, ix->label, NULL, "out of memory");
	miss = members_of(ix, names, n, k_of);
	free(k_of);
	if (miss < 0)
		return enpu_fail(e, ENPU_E_NOMEM, ix->label, NULL, "out of memory");
	if (miss > 0)   /* not the members named: re-packed instead */
		return 0;
	if (check_members(ix, threads, &bad, e) < 0)
		return -1;
	if (bad.ze)
		return source_fault(ix, &bad, e);
	return link_or_copy(ix->path, dst, link, sha256, size, e) < 0 ? -1 : 1;
}

/* buf.h: the one growable byte buffer (and string builder), with a size cap.
 *
 * The buffer owns its bytes; data is always NUL-terminated (not counted in
 * len) so it can be used as a C string. A cap of 0 means "no cap". */
#ifndef ENPU_BUF_H
#define ENPU_BUF_H

#include <stddef.h>
#include <stdarg.h>

typedef struct enpu_buf {
	char *data;
	size_t len;
	size_t alloc;
	size_t cap;    /* maximum len; appends past it fail */
} enpu_buf;

#define ENPU_BUF_INIT {NULL, 0, 0, 0}

/* All return 0, or -1 on allocation failure or when the cap would be
 * exceeded (the buffer is left unchanged). */
int enpu_buf_add(enpu_buf *b, const void *p, size_t n);
int enpu_buf_adds(enpu_buf *b, const char *s);
int enpu_buf_addf(enpu_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int enpu_buf_vaddf(enpu_buf *b, const char *fmt, va_list ap);
void enpu_buf_reset(enpu_buf *b);     /* len = 0, keeps memory */
void enpu_buf_free(enpu_buf *b);      /* frees, back to ENPU_BUF_INIT (cap kept) */
char *enpu_buf_detach(enpu_buf *b, size_t *len); /* caller frees result */

/* The strings after cap, up to a NULL, one after another into out, cut to
 * fit cap bytes with their NUL (cap > 0): snprintf(out, cap, "%s%s...")
 * without the format's parse, for the paths every job builds. Returns the
 * length of the whole (>= cap: cut), as snprintf does. */
size_t enpu_str_cat(char *out, size_t cap, ...) __attribute__((sentinel));

/* The length (1-4) of the valid UTF-8 sequence at s, within n bytes, with
 * its code point in *cp; 0 when invalid (overlong forms, surrogates, past
 * U+10FFFF, cut short: RFC 3629). */
size_t enpu_utf8_seq(const void *s, size_t n, unsigned long *cp);

/* Read a whole file into b (appending), failing past max bytes (0 = b->cap
 * or unlimited). Returns 0 or -1 with *e filled (ENPU_E_IO / ENPU_E_LIMIT). */
struct enpu_err;
int enpu_read_file(const char *path, size_t max, enpu_buf *b, struct enpu_err *e);

/* Write bytes to path atomically: temp file in the same directory, fsync,
 * rename, fsync of the directory. 0 or -1 with *e (ENPU_E_IO). */
int enpu_write_file_atomic(const char *path, const void *p, size_t n, struct enpu_err *e);

/* All n bytes of p to fd, across short writes and EINTR: 0, or -1 with
 * errno (ENOSPC when a write wrote nothing). */
int enpu_write_all(int fd, const void *p, size_t n);

/* err, from a first copy_file_range, says the kernel cannot copy between
 * these files (another filesystem on an older kernel, no support): the
 * caller copies them by read and write instead. */
int enpu_copy_range_unsupported(int err);

/* to, a new file (O_EXCL; mode as open(2) and the umask make it) with
 * from's bytes: a reflink where the filesystem shares extents (btrfs,
 * xfs), else copied in the kernel (copy_file_range), else by read and
 * write; fsynced when durable. 0, or -1 with errno, leaving no `to`. */
int enpu_copy_file(const char *from, const char *to, int mode, int durable);

/* How a caller makes a hard link `to` of the file `from` (0, or -1 with
 * errno): a content-addressed cache links its blobs through its own
 * bookkeeping (the server's srv_cas_link_known keeps a verified blob known
 * good, though the link moves its ctime). */
typedef struct enpu_linker {
	int (*link)(void *ud, const char *from, const char *to);
	void *ud;
} enpu_linker;

/* a and b, two stats of one file, say it did not change between them:
 * the same device, inode, size, and modification and change times to the
 * nanosecond (any write moves the change time, which no user tool sets
 * back). The trust a digest record puts in a file (client/digests.c). */
struct stat;
int enpu_stat_unchanged(const struct stat *a, const struct stat *b);

/* mkdir -p with mode 0755 (or the given mode). 0 or -1 with *e. */
int enpu_mkdirs(const char *path, int mode, struct enpu_err *e);

#endif

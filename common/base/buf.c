/* buf.c: the growable buffer, and the one way to read and (atomically)
 * write a whole file. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/fs.h>
#include "buf.h"
#include "err.h"

static int grow(enpu_buf *b, size_t extra)
{
	size_t need, n;
	char *p;

	if (extra > SIZE_MAX - b->len - 1)
		return -1;
	need = b->len + extra;
	if (b->cap && need > b->cap)
		return -1;
	if (need + 1 <= b->alloc)
		return 0;
	n = b->alloc ? b->alloc : 64;
	while (n < need + 1)
		n = n > SIZE_MAX / 2 ? need + 1 : n * 2;
	p = realloc(b->data, n);
	if (!p)
		return -1;
	b->data = p;
	b->alloc = n;
	return 0;
}

int enpu_buf_add(enpu_buf *b, const void *p, size_t n)
{
	if (grow(b, n))
		return -1;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int enpu_buf_adds(enpu_buf *b, const char *s)
{
	return enpu_buf_add(b, s, strlen(s));
}

int enpu_buf_vaddf(enpu_buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0 || grow(b, (size_t)n))
		return -1;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int enpu_buf_addf(enpu_buf *b, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = enpu_buf_vaddf(b, fmt, ap);
	va_end(ap);
	return r;
}

void enpu_buf_reset(enpu_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

void enpu_buf_free(enpu_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->alloc = 0;
}

char *enpu_buf_detach(enpu_buf *b, size_t *len)
{
	char *p = b->data;

	if (!p && grow(b, 0) == 0) {
		p = b->data;
		p[0] = '\0';
	}
	if (len)
		*len = b->len;
	b->data = NULL;
	b->len = b->alloc = 0;
	return p;
}

size_t enpu_utf8_seq(const void *p, size_t n, unsigned long *cp)
{
	const unsigned char *s = p;
	unsigned long c;
	size_t k, j;

	if (n == 0)
		return 0;
	c = s[0];
	if (c < 0x80)
		k = 1;
	else if (c >= 0xc2 && c <= 0xdf)
		k = 2, c &= 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		k = 3, c &= 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		k = 4, c &= 0x07;
	else
		return 0;
	if (k > n)
		return 0;
	for (j = 1; j < k; j++) {
		if ((s[j] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[j] & 0x3f);
	}
	if ((k == 3 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))) ||
	    (k == 4 && (c < 0x10000 || c > 0x10ffff)))
		return 0;
	*cp = c;
	return k;
}

/* ENPU_E_IO "cannot <what> '<name>': <strerror(err)>", keeping err. */
static int io_fail(enpu_err *e, int err, const char *path, const char *what, const char *name)
{
	enpu_fail(e, ENPU_E_IO, path, NULL, "cannot %s '%s': %s", what, name, strerror(err));
	if (e)
		e->sys_errno = err;
	return -1;
}

int enpu_read_file(const char *path, size_t max, enpu_buf *b, enpu_err *e)
{
	char chunk[65536];
	size_t start = b->len;
	ssize_t n;
	int fd;

	if (!max)
		max = b->cap ? b->cap : SIZE_MAX;
	/* read(2), not stdio: no FILE to allocate, no fstat, one read past
	 * the end (a small file costs open, read, read, close) */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return io_fail(e, errno, path, "open", path);
	for (;;) {
		n = read(fd, chunk, sizeof chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (b->len - start + (size_t)n > max) {
			close(fd);
			b->len = start;
			return enpu_fail(e, ENPU_E_LIMIT, path, NULL,
					 "'%s' is larger than the limit of %zu bytes", path, max);
		}
		if (enpu_buf_add(b, chunk, (size_t)n)) {
			close(fd);
			b->len = start;
			return enpu_fail(e, ENPU_E_NOMEM, path, NULL, "cannot hold '%s' in memory", path);
		}
	}
	if (n < 0) {
		int err = errno;
		close(fd);
		b->len = start;
		return io_fail(e, err, path, "read", path);
	}
	close(fd);
	if (!b->data && grow(b, 0) == 0)
		b->data[0] = '\0';
	return 0;
}

static void fsync_dir_of(const char *path)
{
	char *copy = strdup(path);
	int fd;

	if (!copy)
		return;
	fd = open(dirname(copy), O_RDONLY | O_DIRECTORY);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	free(copy);
}

/* The process's umask without changing it (umask(2) would, racing other
 * threads): the Umask line of /proc/self/status, else 022. */
static mode_t cur_umask(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[128];
	unsigned m = 022;

	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "Umask: %o", &m) == 1)
			break;
	if (f)
		fclose(f);
	return (mode_t)(m & 0777);
}

int enpu_write_file_atomic(const char *path, const void *p, size_t n, enpu_err *e)
{
	enpu_buf tmp = ENPU_BUF_INIT;
	const char *c = p;
	int fd, ret = -1;

	if (enpu_buf_addf(&tmp, "%s.tmp.XXXXXX", path))
		return enpu_fail(e, ENPU_E_NOMEM, path, NULL, "out of memory");
	fd = mkstemp(tmp.data);
	if (fd < 0) {
		io_fail(e, errno, path, "create", tmp.data);
		goto out;
	}
	if (enpu_write_all(fd, c, n) != 0) {
		io_fail(e, errno, path, "write", path);
		goto fail;
	}
	/* mkstemp made it 0600: give it the mode open(2) would (0666 & ~umask) */
	if (fchmod(fd, 0666 & ~cur_umask()) || fsync(fd)) {
		io_fail(e, errno, path, "sync", path);
		goto fail;
	}
	if (close(fd)) {
		fd = -1;
		io_fail(e, errno, path, "write", path);
		goto fail;
	}
	fd = -1;
	if (rename(tmp.data, path)) {
		io_fail(e, errno, path, "rename into", path);
		goto fail;
	}
	fsync_dir_of(path);
	ret = 0;
	goto out;
fail:
	if (fd >= 0)
		close(fd);
	unlink(tmp.data);
out:
	enpu_buf_free(&tmp);
	return ret;
}

int enpu_mkdirs(const char *path, int mode, enpu_err *e)
{
	char *p = strdup(path);
	struct stat st;

	if (!p)
		return enpu_fail(e, ENPU_E_NOMEM, path, NULL, "out of memory");
	if (!mode)
		mode = 0755;
	for (char *s = p + 1; ; s++) {
		if (*s == '/' || *s == '\0') {
			char c = *s;
			*s = '\0';
			if (mkdir(p, (mode_t)mode) && errno != EEXIST) {
				io_fail(e, errno, path, "create directory", p);
				free(p);
				return -1;
			}
			*s = c;
			if (!c)
				break;
		}
	}
	free(p);
	if (stat(path, &st) || !S_ISDIR(st.st_mode))
		return enpu_fail(e, ENPU_E_IO, path, NULL, "'%s' is not a directory", path);
	return 0;
}

size_t enpu_str_cat(char *out, size_t cap, ...)
{
	va_list ap;
	const char *p;
	size_t n = 0;

	va_start(ap, cap);
	while ((p = va_arg(ap, const char *)) != NULL) {
		size_t k = strlen(p);
		if (n < cap) {
			size_t room = cap - 1 - n;
			memcpy(out + n, p, k < room ? k : room);
		}
		n += k;
	}
	va_end(ap);
	if (cap)
		out[n < cap ? n : cap - 1] = '\0';
	return n;
}

/* n bytes from in to out by read and write. 0, or -1 (errno). */
static int copy_rw(int in, int out)
{
	char buf[1 << 16];
	ssize_t n;

	while ((n = read(in, buf, sizeof buf)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (enpu_write_all(out, buf, (size_t)n) != 0)
			return -1;
	}
	return 0;
}

int enpu_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n > 0) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = ENOSPC;
			return -1;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

int enpu_stat_unchanged(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

int enpu_copy_range_unsupported(int err)
{
	return err == EXDEV || err == EINVAL || err == ENOSYS || err == EOPNOTSUPP;
}

int enpu_copy_file(const char *from, const char *to, int mode, int durable)
{
	int in = open(from, O_RDONLY | O_CLOEXEC), out = -1, err = 0;
	struct stat sb;

	if (in < 0)
		return -1;
	if (fstat(in, &sb) != 0 || (out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)) < 0) {
		err = errno;
		close(in);
		errno = err;
		return -1;
	}
#ifdef FICLONE
	if (ioctl(out, FICLONE, in) == 0)
		goto done;
#endif
	for (off_t left = sb.st_size; left > 0;) {
		ssize_t n = copy_file_range(in, NULL, out, NULL, (size_t)left, 0);
		if (n > 0) {
			left -= n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && left == sb.st_size &&   /* the kernel cannot: copy it here */
		    enpu_copy_range_unsupported(errno)) {
			if (copy_rw(in, out) != 0)
				err = errno;
		} else {
			err = n == 0 ? EIO : errno;   /* 0: the file shrank under us */
		}
		break;
	}
done:
	if (!err && durable && fsync(out) != 0)
		err = errno;
	if (close(out) != 0 && !err)
		err = errno;
	close(in);
	if (err) {
		unlink(to);
		errno = err;
		return -1;
	}
	return 0;
}

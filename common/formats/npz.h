/* npz.h: NumPy .npy and .npz reading and writing (libzip + zlib).
 *
 * Reads what numpy writes: np.save (format 1.0, 2.0, 3.0), np.savez (stored)
 * and np.savez_compressed (deflated), zip64 members. Little-endian float32
 * ('<f4') and int64 ('<i8', spec v2 weights) are accepted (the dtype table
 * of tensor.c); other dtypes are ENPU_E_NPY_DTYPE.
 * C-order only: fortran_order True is ENPU_E_NPY_ORDER. Every declared size
 * is checked against the real one and against the limits; a truncated or
 * corrupt file is ENPU_E_NPY, never a crash. Writing produces files that
 * numpy reads, byte-identical for identical input (fixed zip timestamps,
 * members in list order, stored, version 1.0 headers). */
#ifndef ENPU_NPZ_H
#define ENPU_NPZ_H

#include <stddef.h>
#include "tensor.h"
#include "buf.h"

/* Parse one .npy image. label names it in errors ("input.npz member 'x'").
 * On success fills *out (data owned by out, name NULL). */
int enpu_npy_parse(const void *buf, size_t len, const char *label,
		   const enpu_limits *lim, enpu_tensor *out, enpu_err *e);

/* The header alone: buf holds the image's first len bytes (at least its
 * header, or all of it), total is the image's size. dtype, shape and the
 * data's offset, checked as enpu_npy_parse checks them (the data is
 * total - *data_off bytes, exactly what the shape needs). */
int enpu_npy_parse_header(const void *buf, size_t len, uint64_t total, const char *label,
			  const enpu_limits *lim, enpu_dtype *dtype, enpu_shape *shape,
			  size_t *data_off, enpu_err *e);

/* Serialize t as a .npy (format 1.0, '<f4' or '<i8', C order) appended to
 * out; or only its header (the data, little-endian, follows it). */
int enpu_npy_write(const enpu_tensor *t, enpu_buf *out, enpu_err *e);
int enpu_npy_write_header(const char *name, enpu_dtype dtype, const enpu_shape *shape,
			  enpu_buf *out, enpu_err *e);

/* Read every member of an .npz; member "x.npy" becomes tensor "x". Member
 * names with '/' or '\\' or "..", duplicate names, or non-.npy members are
 * ENPU_E_NPY. label names the file in errors (usually the user's path).
 * Tensors are appended to out in archive order. */
int enpu_npz_read(const char *path, const char *label, const enpu_limits *lim,
		  enpu_tlist *out, enpu_err *e);
int enpu_npz_read_mem(const void *buf, size_t len, const char *label,
		      const enpu_limits *lim, enpu_tlist *out, enpu_err *e);

/* Write the tensors as an .npz (stored members "<name>.npy", in order),
 * atomically (temp + fsync + rename). Deterministic bytes. */
int enpu_npz_write(const char *path, const enpu_tlist *ts, enpu_err *e);
/* The same bytes appended to out (label names the file in errors). */
int enpu_npz_write_mem(const enpu_tlist *ts, const char *label, enpu_buf *out, enpu_err *e);

/* ---- without holding the arrays (npz_stream.c) ---- */

/* An .npz's members, headers read and checked as enpu_npz_read checks the
 * whole file, their data left in the file. */
typedef struct enpu_npz_index {
	char *path;
	char *label;              /* what errors about the source call it */
	enpu_tlist meta;          /* name, dtype, shape; data NULL until loaded */
	uint64_t *member;         /* meta.items[k]'s zip index */
	uint64_t *data_off;       /* and its data's offset in the member */
	uint32_t *crc;            /* the member's CRC-32 (central directory) */
	uint32_t *head_crc;       /* the CRC-32 of its first data_off bytes */
	int all_stored;           /* every member stored (not compressed), its CRC known */
} enpu_npz_index;

int enpu_npz_scan(const char *path, const char *label, const enpu_limits *lim,
		  enpu_npz_index *ix, enpu_err *e);
/* Load meta.items[k]'s data (a small array the caller must look at). */
int enpu_npz_scan_load(enpu_npz_index *ix, size_t k, const char *label, enpu_err *e);
void enpu_npz_index_free(enpu_npz_index *ix);

/* Write dst (temp + fsync + rename) with the members named, in that
 * order, streamed from ix's file: the bytes enpu_npz_write gives for those
 * tensors; its sha256 and size. */
int enpu_npz_write_from(const enpu_npz_index *ix, const char *const *names, size_t n,
			const char *dst, char sha256[65], uint64_t *size, enpu_err *e);

/* dst as ix's file itself, when that holds exactly the members named and
 * all of them stored (ix->all_stored): a weights file as good as the one
 * enpu_npz_write_from makes (the same tensors, read by the same reader).
 * Every member's data is read and CRC-checked first (on up to `threads`
 * threads, parts of a member combined with crc32_combine). Then dst is a
 * hard link to the file made by `link` when given (a file nobody changes:
 * a blob of a content-addressed cache) and it can be made, no byte copied;
 * else a copy, fsynced and hashed: bytes that do not hash to sha256 (the
 * file's digest, which the caller knows) fail with E0003 (changed meanwhile).
 * 1 when it did, 0 when ix is not such a file (nothing done), -1 + e (a
 * corrupt member is E0400 as in a read). */
int enpu_npz_link_from(const enpu_npz_index *ix, const char *const *names, size_t n,
		       const char *dst, int threads, const enpu_linker *link, const char *sha256,
		       uint64_t *size, enpu_err *e);

#endif

/* npz.h: NumPy .npy and .npz reading and writing (libzip + zlib).
 *
 * Reads what numpy writes: np.save (format 1.0, 2.0, 3.0), np.savez (stored)
 * and np.savez_compressed (deflated), zip64 members. Only little-endian
 * float32 ('<f4') is accepted for now; other dtypes are ENPU_E_NPY_DTYPE.
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

/* Serialize t as a .npy (format 1.0, '<f4', C order) appended to out. */
int enpu_npy_write(const enpu_tensor *t, enpu_buf *out, enpu_err *e);

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

#endif

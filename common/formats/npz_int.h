/* npz_int.h: what npz.c shares with npz_stream.c (the .npz reader's checks
 * and the writer's member settings), and nothing else includes. */
#ifndef ENPU_NPZ_INT_H
#define ENPU_NPZ_INT_H

#include <zip.h>
#include "npz.h"

/* libzip's error as ours (ENPU_E_NPY, _IO or _NOMEM), where names the file. */
int enpu_npz_zip_fail(enpu_err *e, const zip_error_t *ze, const char *where);
/* path opened as an .npz (the reader's checks: not a directory, not
 * empty, no name twice), or NULL + *e. */
zip_t *enpu_npz_open(const char *path, const char *label, enpu_err *e);
/* Member raw (rlen bytes) is <name>.npy with a valid name not yet among
 * out's tensors from n0 on. */
int enpu_npz_check_member_name(const enpu_tlist *out, size_t n0, const char *raw, size_t rlen,
			       const char *label, enpu_err *e);
/* A member declaring size bytes after total bytes of the archive so far,
 * against the limits (checked before a byte is inflated). */
int enpu_npz_member_limits(uint64_t size, uint64_t total, const char *label, const char *mlabel,
			   const enpu_limits *lim, enpu_err *e);
/* The writer's member: stored, dated 1980-01-01 (deterministic bytes). */
int enpu_npz_member_settings(zip_t *za, zip_uint64_t idx, const char *path, enpu_err *e);

#endif

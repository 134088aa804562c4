/* bundle.h: the cross-ISA bundle and result formats, shared by the host
 * tool that writes bundles and compares results (bundle.c, full library)
 * and the runner that executes them on any CPU (runner.c and its reader,
 * reader.c: compute core).
 *
 * Everything is little-endian whatever the CPU: integers are written byte
 * by byte, floats as the bit pattern of their IEEE-754 binary32 value, so
 * the same file means the same thing on x86-64, armhf and aarch64, 32 or 64
 * bits. No struct is ever dumped raw.
 *
 *   str      u32 length (<= BND_MAX_STR), then that many bytes, no NUL
 *   shape    u32 ndim (<= 8), then ndim x i64 dims (each >= 0)
 *
 * Bundle, version 2 (.bundle; 2 adds several outputs, split's sizes, int64):
 *   magic    8 bytes "ENPUBNDL"
 *   u32      version (3)
 *   u32      flags (0)
 *   str      graph name
 *   str      backend the artifact was compiled for (informational)
 *   u32      n_tensors; each tensor:
 *              str name; u8 dtype (1 = float32, 2 = int64: weights only);
 *              u8 kind (0 input, 1 weight,
 *              2 intermediate); u8 is_output (0/1); u8 reserved (0); shape
 *   u32      n_inputs;  n_inputs x u32 tensor index (graph input order)
 *   u32      n_outputs; n_outputs x u32 tensor index (spec output order)
 *   u32      n_ops; each op, in schedule order:
 *              str name; str operator ("conv2d": looked up in the op table)
 *              u32 n_in; n_in x u32 tensor index; u32 n_out (1..64);
 *              n_out x u32 output tensor index
 *              attrs: the resolved enpu_attrs, field by field:
 *                f32 alpha, f32 beta, i32 trans_a, i32 trans_b, f32 min,
 *                f32 max, i32 approximate, i32 axis, 2 x i32 kernel,
 *                2 x i32 strides, 4 x i32 pads, 2 x i32 dilations,
 *                i32 group, i32 count_include_pad, f32 epsilon,
 *                u32 n_shape, 8 x i64 shape, u32 n_perm, 8 x i32 perm,
 *                u32 set, u32 n_split, n_split x i64 split
 *                u32 set
 *              then every attribute of the op's row (ops.c), in its order,
 *              by type: FLOAT f32; INT, BOOL01, ENUM (the choice's index)
 *              i32; INTS count x i32; FLOATS count x f32; LIST u32 n
 *              (<= count), n x i64; DIMS, PERM and SIZES nothing
 *              (above). The
 *              fields spec v2 ops add travel this way.
 *   plan:    u64 arena_bytes; u32 n_bufs; each buffer:
 *              u32 tensor (BND_SCRATCH: the scratch of op first_op);
 *              u64 offset; u64 bytes; u32 first_op; u32 last_op
 *   u32      n_data; each: u32 tensor (an input or a weight, each exactly
 *              once); u64 count (= its numel); count x f32 (count x i64
 *              for an int64 tensor)
 *   magic    8 bytes "ENPUEND1", and nothing after it
 *
 * The reader re-runs every op's shape rule and checks it against the
 * recorded output shape, re-verifies the memory plan (enpu_plan_verify),
 * and rejects anything truncated, trailing, out of range or inconsistent.
 *
 * Result, version 1 (what the runner writes):
 *   magic    8 bytes "ENPURES1"
 *   u32      n_outputs; each: str name; shape; u64 count; count x f32
 */
#ifndef ENPU_CROSS_BUNDLE_H
#define ENPU_CROSS_BUNDLE_H

#include <stdint.h>
#include <string.h>

#define BND_MAGIC "ENPUBNDL"
#define BND_END "ENPUEND1"
#define BND_RES_MAGIC "ENPURES1"
#define BND_VERSION 3u
#define BND_SCRATCH 0xffffffffu
#define BND_MAX_STR 4096u
#define BND_MAX_TENSORS 65536u
#define BND_MAX_OPS 65536u
#define BND_DIMS 8      /* dims of attrs.shape / attrs.perm in version 1 */

static inline void bnd_put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

static inline void bnd_put64(unsigned char *p, uint64_t v)
{
	bnd_put32(p, (uint32_t)v);
	bnd_put32(p + 4, (uint32_t)(v >> 32));
}

static inline uint32_t bnd_get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline uint64_t bnd_get64(const unsigned char *p)
{
	return (uint64_t)bnd_get32(p) | (uint64_t)bnd_get32(p + 4) << 32;
}

/* float <-> its binary32 bit pattern (memcpy: no aliasing games). */
static inline uint32_t bnd_fbits(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof(u));
	return u;
}

static inline float bnd_bitsf(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof(f));
	return f;
}

#endif

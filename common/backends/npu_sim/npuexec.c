/* npuexec.c: matmul, gemm and conv2d on the simulated systolic array, fold
 * by fold, on the GEMM core's micro-kernels (common/run/gemm.h). One GEMM
 * is C (M x N) = A (M x K) x B (K x N); the dataflow maps (Sr, Sc, T) =
 * (M, N, K) for os, (K, N, M) for ws and (K, M, N) for is, which fixes the
 * output tiles the array produces and their order:
 *
 *   os: tiles of rows x cols of C, row tiles outer; each streams all of K.
 *   ws: a stationary tile of B (a K-fold x an N-fold of `cols`) while all
 *       M rows stream: the output tiles are N-folds of all M rows, taken
 *       in order; a tile's K-folds follow each other in ascending order,
 *       the partial sums carried in the output from one fold to the next.
 *   is: the same with a stationary tile of A: M-folds of all N columns.
 *
 * The executor takes C tile by tile in that order (enpu_gemm_compute's
 * blocks; a tile is widened to whole micro-tiles, MR x NR of the
 * instruction set). Within a tile every element is one chain
 * acc = 0.0f; for k ascending: acc = fmaf(A[m,k], B[k,n], acc), carried
 * across K blocks exactly as across K-folds (a float stored and reloaded
 * is the same float), then the reference kernel's epilogue: the bits of
 * kernels.c for any array size, dataflow and thread count. Threads take
 * whole tiles. conv2d's GEMM has the reference's orientation (rows of C are
 * output channels, columns output positions: the array's N and M), so its
 * tiles are the array's transposed; a depthwise conv runs the reference's
 * direct kernel, and conv_transpose2d (spec v2), costed as a GEMM, its
 * reference gather kernel (see enpu_npu_exec_gemm); spec v3's integer
 * GEMMs are exact in any order and run their reference kernels. */
#include <string.h>
#include "kernels.h"
#include "gemm.h"
#include "npuexec.h"

static size_t cdiv(size_t a, size_t b)
{
	return a / b + (a % b != 0);
}

/* The array's output tiles of an M x N GEMM (the array's coordinates) as
 * the core's blocks; conv: C is N x M (transposed). */
static enpu_gemm_blocks folds(const enpu_npu_target *t, size_t M, size_t N, int conv)
{
	size_t R = t->rows > 0 ? (size_t)t->rows : 1, Cc = t->cols > 0 ? (size_t)t->cols : 1;
	size_t tm, tn, mr = (size_t)enpu_gemm_mr(), nr = (size_t)enpu_gemm_nr();
	enpu_gemm_blocks b;

	switch (t->dataflow) {
	case ENPU_DF_OS:
		tm = R, tn = Cc;
		break;
	case ENPU_DF_WS:
		tm = M, tn = Cc;
		break;
	default:
		tm = Cc, tn = N;
		break;
	}
	tm = tm ? tm : 1;
	tn = tn ? tn : 1;
	if (conv) {   /* C's rows are the array's columns: tiles transposed, row tiles inner */
		b.bm = cdiv(tn, mr);
		b.bn = cdiv(tm, nr);
		b.col_major = 1;
	} else {
		b.bm = cdiv(tm, mr);
		b.bn = cdiv(tn, nr);
		b.col_major = 0;
	}
	return b;
}

/* matmul: one GEMM per broadcast batch, as kernels.c's matmul. */
static int exec_matmul(const enpu_npu_target *t, const enpu_view *in, enpu_view *out,
		       enpu_par *par)
{
	const enpu_shape *sa = &in[0].shape, *sb = &in[1].shape;
	size_t M = sa->ndim >= 2 ? (size_t)sa->dim[sa->ndim - 2] : 1;
	size_t N = sb->ndim >= 2 ? (size_t)sb->dim[sb->ndim - 1] : 1;
	enpu_gemm_blocks b = folds(t, M, N, 0);

	return enpu_k_matmul_tiles(in, out, &b, par);
}

/* gemm (ONNX): as kernels.c's gemm. */
static int exec_gemm(const enpu_npu_target *t, const enpu_attrs *at, const enpu_view *in,
		     int n_in, enpu_view *out, enpu_par *par)
{
	enpu_gemm_blocks b = folds(t, (size_t)out[0].shape.dim[0], (size_t)out[0].shape.dim[1], 0);

	return enpu_k_gemm_tiles(at, in, n_in, out, &b, par);
}

/* conv2d: per image and group one GEMM of M = OH * OW (im2col rows),
 * N = the group's output channels, K = C/group * kH * kW; then + bias. */
static int exec_conv(const enpu_npu_target *t, const enpu_attrs *at, const enpu_view *in,
		     int n_in, enpu_view *out, enpu_par *par)
{
	const enpu_shape *sw = &in[1].shape, *so = &out[0].shape;
	size_t G = at->group > 0 ? (size_t)at->group : 1;
	size_t P = (size_t)so->dim[2] * (size_t)so->dim[3], Mg = (size_t)sw->dim[0] / G;
	enpu_gemm_blocks b = folds(t, P, Mg, 1);

	return enpu_k_conv2d_tiles(at, in, n_in, out, &b, par);
}

int enpu_npu_exec_gemm(const enpu_npu_target *t, const enpu_irop *op, const enpu_view *in,
		       int n_in, enpu_view *out, enpu_par *par)
{
	switch (op->def->id) {
	case ENPU_OP_MATMUL:
		return exec_matmul(t, in, out, par);
	case ENPU_OP_GEMM:
		return exec_gemm(t, &op->attrs, in, n_in, out, par);
	case ENPU_OP_CONV2D:
		return exec_conv(t, &op->attrs, in, n_in, out, par);
	case ENPU_OP_CONV_TRANSPOSE2D:
		/* costed as the zero-inserted GEMM; computed as the reference
		 * gather (each output's chain skips the inserted zeros, which a
		 * dense GEMM would add as fmaf(w, 0.0f, acc)): cpu_ref's bits */
		return enpu_k_conv_transpose2d(&op->attrs, in, n_in, out, 1, par);
	case ENPU_OP_CONV1D: {   /* conv2d with kH = 1 (kernels_conv.c's view) */
		enpu_attrs a2;
		enpu_view in2[3], out2;

		if (n_in < 2 || n_in > 3)
			return -1;
		enpu_conv1d_as_2d(&op->attrs, in, n_in, out, &a2, in2, &out2);
		return exec_conv(t, &a2, in2, n_in, &out2, par);
	}
	case ENPU_OP_MATMUL_INTEGER:
	case ENPU_OP_CONV_INTEGER:
	case ENPU_OP_QLINEAR_MATMUL:
	case ENPU_OP_QLINEAR_CONV:
		/* spec v3's integer GEMMs: int32 sums are exact, so any fold
		 * order gives the reference's bytes; the reference kernel
		 * computes them (kernels_q.c) */
		return 1;
	default:
		return -1;
	}
}

/* npuexec.h: the npu_sim executor's GEMM: matmul, gemm and conv2d computed
 * fold by fold as the target's systolic array would, with the bits of the
 * cpu_ref kernels (docs/spec-format.md, "Reference arithmetic"). Internal to
 * common/: exec.c calls it for ops whose npu class is ENPU_NPU_GEMM. */
#ifndef ENPU_NPUEXEC_H
#define ENPU_NPUEXEC_H

#include "ir.h"
#include "npusim.h"

/* Run GEMM-class op (matmul, gemm, conv2d) on t's array: views as for the
 * op's reference kernel. 0, or -1 when scratch memory cannot be had (or op
 * is not GEMM-class), or 1 for spec v3's integer GEMMs: exact in any
 * order, the caller runs their reference kernel. The same bytes as the
 * reference kernel for any array size, dataflow and thread count. */
int enpu_npu_exec_gemm(const enpu_npu_target *t, const enpu_irop *op, const enpu_view *in,
		       int n_in, enpu_view *out, enpu_par *par);

#endif

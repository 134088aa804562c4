/* vec.h: elementwise loops built for the vector units the CPU has. A
 * function marked ENPU_VEC is compiled for AVX-512, AVX2 and the baseline,
 * and the loader picks the one the CPU runs (target_clones); GCC is also
 * asked to vectorize its loops at -O2 with its full cost model. Each lane
 * computes exactly what the scalar loop computes: the same IEEE operation
 * per element, no contraction (-ffp-contract=off), no reassociation (no
 * -ffast-math), so the clones give the same bits. Elsewhere (the cross
 * runners' Arm builds) it marks nothing. */
#ifndef ENPU_VEC_H
#define ENPU_VEC_H

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define ENPU_VEC __attribute__((target_clones("avx512f", "avx2", "default"), \
				optimize("tree-vectorize", "vect-cost-model=dynamic")))
#elif defined(__x86_64__) && defined(__clang__)
#define ENPU_VEC __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define ENPU_VEC
#endif

#endif

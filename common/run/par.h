/* par.h: a small fixed thread pool for kernels.
 *
 * Kernels split their OUTPUTS across threads, never one output's reduction,
 * so the bits never depend on the thread count (docs/spec-format.md). */
#ifndef ENPU_PAR_H
#define ENPU_PAR_H

#include <stddef.h>

typedef struct enpu_par enpu_par;

/* nthreads <= 1 gives a pool that runs everything on the caller. NULL on
 * allocation/thread-creation failure. */
enpu_par *enpu_par_create(int nthreads);
void enpu_par_destroy(enpu_par *p);
int enpu_par_threads(const enpu_par *p);   /* 1 for NULL */

/* Call fn(ctx, begin, end) over disjoint ranges covering [0, n), in parallel,
 * and return when all are done. p may be NULL (serial). Ranges are at least
 * `grain` long (grain 0 = 1). Not reentrant: one call at a time per pool. */
typedef void (*enpu_par_fn)(void *ctx, size_t begin, size_t end);
void enpu_par_for(enpu_par *p, size_t n, size_t grain, enpu_par_fn fn, void *ctx);

/* The scratch memory of the op being run, which the engine points at the
 * op's scratch in the memory plan before it calls the op's kernel (a pool
 * runs one op at a time). enpu_par_scratch gives it when it holds at least
 * `bytes`, else NULL (and NULL for a NULL pool). */
void enpu_par_set_scratch(enpu_par *p, void *mem, size_t bytes);
void *enpu_par_scratch(enpu_par *p, size_t bytes);

#endif

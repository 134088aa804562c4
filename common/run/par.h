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

#endif

/* reader.h: the cross-ISA runner's bundle reader (reader.c), used by the
 * runner's driver (runner.c). Compute core only: a bundle (bundle.h)
 * becomes a graph rebuilt through the op table, its plan, and the data of
 * its inputs and weights. */
#ifndef ENPU_CROSS_READER_H
#define ENPU_CROSS_READER_H

#include <stddef.h>
#include "err.h"
#include "ir.h"
#include "plan.h"

/* A loaded bundle: the graph, its plan, and the data of inputs and weights
 * (per tensor index, NULL for intermediates). */
typedef struct bundle {
	enpu_graph *g;
	enpu_plan plan;
	float **data;
} bundle;

/* Parse len bytes (label names them in errors) into *b. 0, or -1 with *e
 * (nothing left allocated). Every field is checked: a damaged bundle is
 * rejected, never run. */
int bundle_parse(const unsigned char *p, size_t len, const char *label, bundle *b, enpu_err *e);

/* Free what bundle_parse() allocated, and zero *b. */
void bundle_free(bundle *b);

#endif

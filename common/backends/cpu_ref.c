/* cpu_ref: the reference kernels on this CPU; they define the bits
 * (docs/spec-format.md). No target options, no plan of its own, no report
 * section: every op is its op table kernel. */
#include <stdio.h>
#include "backend.h"

static const char *cpu_ref_lowering(const enpu_graph *g, const void *st, int k, char *kernel,
				    size_t cap)
{
	(void)st;
	snprintf(kernel, cap, "cpu_ref.%s", g->ops[k].def->kernel_name);
	return "reference";
}

const enpu_backend_def enpu_bk_cpu_ref = {
	.name = "cpu_ref",
	.lowering = cpu_ref_lowering,
};

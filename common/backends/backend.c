/* backend.c: the registry of backends (backend.h). One line a backend; a
 * backend's index here is its bit in masks. The only place that knows
 * them all. */
#include <stdio.h>
#include <string.h>
#include "backend.h"
#include "target.h"
#include "spec_int.h"

static const enpu_backend_def *const registry[] = {
	&enpu_bk_cpu_ref,
	&enpu_bk_npu_sim,
	&enpu_bk_zynq_ps,
	&enpu_bk_fpga_board,
};

#define N_REGISTRY ((int)(sizeof(registry) / sizeof(registry[0])))
_Static_assert(N_REGISTRY <= ENPU_BACKENDS_MAX, "raise ENPU_BACKENDS_MAX (ops.h)");

int enpu_backend_count(void)
{
	return N_REGISTRY;
}

const enpu_backend_def *enpu_backend_at(int i)
{
	return i >= 0 && i < N_REGISTRY ? registry[i] : NULL;
}

int enpu_backend_index(const enpu_backend_def *d)
{
	for (int i = 0; d && i < N_REGISTRY; i++)
		if (registry[i] == d)
			return i;
	return -1;
}

const enpu_backend_def *enpu_backend_by_name(const char *name)
{
	return enpu_backend_at(enpu_backend_parse(name));
}

const char *enpu_backend_name(int i)
{
	return i >= 0 && i < N_REGISTRY ? registry[i]->name : "unknown";
}

int enpu_backend_parse(const char *s)
{
	for (int i = 0; s && i < N_REGISTRY; i++)
		if (strcmp(registry[i]->name, s) == 0)
			return i;
	return -1;
}

void enpu_backend_names(char *buf, size_t cap)
{
	size_t off = 0;

	if (cap)
		buf[0] = 0;
	for (int i = 0; i < N_REGISTRY && off < cap; i++)
		off += (size_t)snprintf(buf + off, cap - off, "%s%s", i ? ", " : "", registry[i]->name);
}

unsigned enpu_backends_on_board(void)
{
	unsigned m = 0;

	for (int i = 0; i < N_REGISTRY; i++)
		if (registry[i]->on_board)
			m |= 1u << i;
	return m;
}

unsigned enpu_backends_lowering(const enpu_opdef *d)
{
	unsigned m = 0;

	for (int i = 0; i < N_REGISTRY; i++)
		if (!registry[i]->can_lower || registry[i]->can_lower(d))
			m |= 1u << i;
	return m;
}

int enpu_backend_need_map(const enpu_backend_def *d, const enpu_ynode *node, const char *label,
			  enpu_err *e)
{
	char where[600];

	if (!node || node->kind == ENPU_YN_MAP)
		return 0;
	snprintf(where, sizeof where, "%s:%d:%d", label, node->line, node->col);
	return enpu_fail(e, ENPU_E_TARGET, where, "write the options as a mapping (field: value)",
			 "options of backend '%s' must be a mapping", d->name);
}

int enpu_backend_counts(const enpu_graph *g, const enpu_target *t, int *pl_ops, int *ps_ops,
			int *segments, enpu_err *e)
{
	const enpu_backend_def *d = enpu_target_def(t);
	void *st = NULL;

	*pl_ops = *ps_ops = *segments = 0;
	if (!d->counts)
		return 0;
	if (d->plan && d->plan(g, enpu_target_options(t), 0, &st, e) < 0)
		return -1;
	d->counts(g, st, pl_ops, ps_ops, segments);
	if (d->state_free)
		d->state_free(st);
	return 0;
}

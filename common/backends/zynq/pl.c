/* pl.c: the PL driver registry, the process-wide choice of driver, and the
 * fpga_board executor hook that drives a PL segment through whichever
 * driver is chosen. The hook knows only the interface in pl.h. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include "enpu.h"
#include "pl.h"

/* Every in-tree driver; a real one for a given bitstream goes here too. */
static const enpu_pl_driver *const drivers[] = {&enpu_pl_emulated, NULL};

static _Atomic(const enpu_pl_driver *) current;

const enpu_pl_driver *enpu_pl_by_name(const char *name)
{
	for (int i = 0; name && drivers[i]; i++)
		if (strcmp(drivers[i]->name, name) == 0)
			return drivers[i];
	return NULL;
}

static char names[256];
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static void build_names(void)
{
	size_t off = 0;

	for (int i = 0; drivers[i] && off < sizeof(names); i++)
		off += (size_t)snprintf(names + off, sizeof(names) - off, "%s%s", i ? ", " : "",
					drivers[i]->name);
}

const char *enpu_pl_names(void)
{
	pthread_once(&names_once, build_names);
	return names;
}

int enpu_pl_select(const char *name, enpu_err *e)
{
	const enpu_pl_driver *d = enpu_pl_by_name(name);

	if (!d)
		return enpu_fail(e, ENPU_E_USAGE, "--pl", NULL, "unknown PL driver '%.64s' (known: %s)",
				 name ? name : "", enpu_pl_names());
	atomic_store(&current, d);
	return 0;
}

void enpu_pl_set(const enpu_pl_driver *d)
{
	atomic_store(&current, d);
}

const enpu_pl_driver *enpu_pl_current(void)
{
	const enpu_pl_driver *d = atomic_load(&current);

	return d ? d : &enpu_pl_emulated;
}

const char *enpu_pl_current_name(void)
{
	return enpu_pl_current()->name;
}

const char *enpu_pl_current_description(void)
{
	return enpu_pl_current()->description;
}

/* One segment through the driver, start to finish. */
static int run_segment(enpu_pl_exec *x, const enpu_fpga_seg *s, enpu_err *e)
{
	const enpu_pl_driver *d = x->drv;
	char bitstream[48];
	enpu_pl_segment ps;
	uint64_t cyc = 0;

	snprintf(bitstream, sizeof(bitstream), "fpga_board.pl.%d", s->id);
	ps.bitstream = bitstream;
	ps.g = x->g;
	ps.seg = s;
	if (d->load(x->handle, &ps, e) < 0)
		return -1;
	for (int i = 0; i < s->n_in; i++) {
		const float *src = x->data[s->in[i].tensor];

		if (s->in[i].bytes > SIZE_MAX || (!src && s->in[i].bytes))
			return enpu_fail(e, ENPU_E_INTERNAL, x->g->tensors[s->in[i].tensor].name, NULL,
					 "PL segment %d: tensor '%s' has no data", s->id,
					 x->g->tensors[s->in[i].tensor].name);
		if (d->transfer_in(x->handle, i, src, (size_t)s->in[i].bytes, e) < 0)
			return -1;
	}
	if (d->start(x->handle, e) < 0 ||
	    d->wait(x->handle, x->timeout_ms > 0 ? x->timeout_ms : 60000, &cyc, e) < 0)
		return -1;
	for (int i = 0; i < s->n_out; i++) {
		float *dst = x->data[s->out[i].tensor];

		if (s->out[i].bytes > SIZE_MAX || (!dst && s->out[i].bytes))
			return enpu_fail(e, ENPU_E_INTERNAL, x->g->tensors[s->out[i].tensor].name, NULL,
					 "PL segment %d: tensor '%s' has no buffer", s->id,
					 x->g->tensors[s->out[i].tensor].name);
		if (d->read_back(x->handle, i, dst, (size_t)s->out[i].bytes, e) < 0)
			return -1;
	}
	if (__builtin_add_overflow(x->pl_cycles, cyc, &x->pl_cycles))
		x->pl_cycles = UINT64_MAX;
	x->segments_run++;
	return 0;
}

int enpu_pl_hook(void *ctx, int op, const enpu_view *in, int n_in, enpu_view *out,
		 enpu_par *par, enpu_err *e)
{
	enpu_pl_exec *x = ctx;
	const enpu_fpga_seg *s;
	int sid;

	(void)in, (void)n_in, (void)out, (void)par;
	if (op < 0 || op >= x->part->n_ops || (sid = x->part->op_seg[op]) < 0)
		return 1;   /* a PS op: the reference kernel */
	s = &x->part->segs[sid];
	if (op != s->first_op)
		return 0;   /* computed with the segment's first op */
	if (run_segment(x, s, e) < 0) {
		enpu_err ignored = ENPU_ERR_INIT;

		/* leave the PL clean for the next run; the first error stands */
		x->drv->reset(x->handle, &ignored);
		return -1;
	}
	return 0;
}

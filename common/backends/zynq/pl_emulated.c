/* pl_emulated.c: the emulated PL. It behaves as the PL of a board would
 * as far as the executor can see: the DMA-in buffers are copied into its
 * own memory, the segment's ops run there (the reference kernels, so the
 * bytes are cpu_ref's), and results leave only through read_back. It
 * reports the modelled PL cycles of the segment. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pl.h"

enum { ST_IDLE, ST_LOADED, ST_DONE };

typedef struct emu {
	enpu_par *par;
	const enpu_graph *g;
	const enpu_fpga_seg *seg;
	char bitstream[48];
	float **mem;              /* per graph tensor: PL-side memory, NULL = not on the PL */
	int n_mem;
	unsigned char *filled;    /* per DMA-in buffer: transferred */
	int state;
	uint64_t cycles;
} emu;

static void drop(emu *m)
{
	for (int i = 0; i < m->n_mem; i++)
		free(m->mem[i]);
	free(m->mem);
	free(m->filled);
	m->mem = NULL;
	m->filled = NULL;
	m->n_mem = 0;
	m->g = NULL;
	m->seg = NULL;
	m->state = ST_IDLE;
}

static int emu_open(const enpu_pl_config *cfg, void **handle, enpu_err *e)
{
	emu *m = calloc(1, sizeof(*m));

	if (!m)
		return enpu_fail(e, ENPU_E_NOMEM, "pl", NULL, "cannot open the emulated PL");
	m->par = cfg ? cfg->par : NULL;
	*handle = m;
	return 0;
}

static int alloc_tensor(emu *m, int t, enpu_err *e)
{
	uint64_t n;
	size_t es = enpu_dtype_size(m->g->tensors[t].dtype);   /* int8 segments: 1 */

	if (m->mem[t])
		return 0;
	if (!es)
		es = sizeof(float);
	if (enpu_shape_numel(&m->g->tensors[t].shape, &n) < 0 || n > SIZE_MAX / es)
		return enpu_fail(e, ENPU_E_LIMIT, m->g->tensors[t].name, NULL,
				 "tensor '%s' is too large for the emulated PL", m->g->tensors[t].name);
	if (!(m->mem[t] = malloc(n ? (size_t)n * es : 1)))
		return enpu_fail(e, ENPU_E_NOMEM, m->g->tensors[t].name, NULL,
				 "the emulated PL cannot hold tensor '%s'", m->g->tensors[t].name);
	return 0;
}

/* "Configure" the PL for the segment: memory for what it reads and writes. */
static int emu_load(void *h, const enpu_pl_segment *s, enpu_err *e)
{
	emu *m = h;
	const enpu_fpga_seg *seg = s->seg;

	drop(m);
	if (!s->g || !seg || seg->first_op < 0 || seg->n_ops < 1 ||
	    seg->first_op > s->g->n_ops - seg->n_ops)
		return enpu_fail(e, ENPU_E_INTERNAL, "pl", NULL, "emulated PL: bad segment");
	m->g = s->g;
	m->seg = seg;
	snprintf(m->bitstream, sizeof(m->bitstream), "%s", s->bitstream ? s->bitstream : "?");
	m->mem = calloc((size_t)(s->g->n_tensors > 0 ? s->g->n_tensors : 1), sizeof(*m->mem));
	m->filled = calloc((size_t)(seg->n_in > 0 ? seg->n_in : 1), 1);
	if (!m->mem || !m->filled) {
		drop(m);
		return enpu_fail(e, ENPU_E_NOMEM, "pl", NULL, "cannot load the emulated PL");
	}
	m->n_mem = s->g->n_tensors;
	for (int i = 0; i < seg->n_in; i++)
		if (seg->in[i].tensor < 0 || seg->in[i].tensor >= m->n_mem ||
		    alloc_tensor(m, seg->in[i].tensor, e) < 0)
			goto fail;
	for (int k = seg->first_op; k < seg->first_op + seg->n_ops; k++)
		if (alloc_tensor(m, s->g->ops[k].out[0], e) < 0)
			goto fail;
	m->state = ST_LOADED;
	return 0;
fail:
	drop(m);
	if (e && e->code == ENPU_OK)
		enpu_fail(e, ENPU_E_INTERNAL, "pl", NULL, "emulated PL: bad segment buffer");
	return -1;
}

static int emu_transfer_in(void *h, int buf, const void *data, size_t bytes, enpu_err *e)
{
	emu *m = h;

	if (m->state != ST_LOADED || buf < 0 || buf >= m->seg->n_in)
		return enpu_fail(e, ENPU_E_JOB_FAILED, m->bitstream, NULL,
				 "emulated PL: DMA-in of buffer %d before load or out of range", buf);
	if (bytes != m->seg->in[buf].bytes)
		return enpu_fail(e, ENPU_E_JOB_FAILED, m->bitstream, NULL,
				 "emulated PL: DMA-in of buffer %d is %zu bytes, the segment expects %llu",
				 buf, bytes, (unsigned long long)m->seg->in[buf].bytes);
	memcpy(m->mem[m->seg->in[buf].tensor], data, bytes);
	m->filled[buf] = 1;
	return 0;
}

/* The segment's ops over PL memory; synchronous, so wait() only reports. */
static int emu_start(void *h, enpu_err *e)
{
	emu *m = h;
	enpu_view in[ENPU_MAX_OP_INPUTS], out[1];

	if (m->state != ST_LOADED)
		return enpu_fail(e, ENPU_E_JOB_FAILED, "pl", NULL, "emulated PL: start before load");
	for (int i = 0; i < m->seg->n_in; i++)
		if (!m->filled[i])
			return enpu_fail(e, ENPU_E_JOB_FAILED, m->bitstream, NULL,
					 "emulated PL: start before DMA-in buffer %d ('%s') arrived", i,
					 m->g->tensors[m->seg->in[i].tensor].name);
	for (int k = m->seg->first_op; k < m->seg->first_op + m->seg->n_ops; k++) {
		const enpu_irop *op = &m->g->ops[k];

		if (op->n_in > ENPU_MAX_OP_INPUTS)
			return enpu_fail(e, ENPU_E_INTERNAL, op->name, NULL, "too many inputs");
		for (int j = 0; j < op->n_in; j++) {
			in[j].shape = m->g->tensors[op->in[j]].shape;
			in[j].dtype = m->g->tensors[op->in[j]].dtype;   /* int8 segments */
			if (!(in[j].data = m->mem[op->in[j]]))
				return enpu_fail(e, ENPU_E_JOB_FAILED, m->bitstream, NULL,
						 "emulated PL: op '%s' reads '%s', which is not on the PL",
						 op->name, m->g->tensors[op->in[j]].name);
		}
		out[0].shape = m->g->tensors[op->out[0]].shape;
		out[0].dtype = m->g->tensors[op->out[0]].dtype;
		out[0].data = m->mem[op->out[0]];
		if (op->def->kernel(&op->attrs, in, op->n_in, out, 1, m->par) < 0)
			return enpu_fail(e, ENPU_E_NOMEM, op->name, NULL,
					 "op '%s' (%s) could not allocate its scratch memory", op->name,
					 op->def->name);
	}
	m->cycles = m->seg->pl_cycles;
	m->state = ST_DONE;
	return 0;
}

static int emu_wait(void *h, int timeout_ms, uint64_t *cycles, enpu_err *e)
{
	emu *m = h;

	(void)timeout_ms;
	if (m->state != ST_DONE)
		return enpu_fail(e, ENPU_E_JOB_FAILED, "pl", NULL, "emulated PL: wait before start");
	if (cycles)
		*cycles = m->cycles;
	return 0;
}

static int emu_read_back(void *h, int buf, void *data, size_t bytes, enpu_err *e)
{
	emu *m = h;

	if (m->state != ST_DONE || buf < 0 || buf >= m->seg->n_out)
		return enpu_fail(e, ENPU_E_JOB_FAILED, "pl", NULL,
				 "emulated PL: read-back of buffer %d before the run or out of range", buf);
	if (bytes != m->seg->out[buf].bytes)
		return enpu_fail(e, ENPU_E_JOB_FAILED, m->bitstream, NULL,
				 "emulated PL: read-back of buffer %d is %zu bytes, the segment holds %llu",
				 buf, bytes, (unsigned long long)m->seg->out[buf].bytes);
	memcpy(data, m->mem[m->seg->out[buf].tensor], bytes);
	return 0;
}

static int emu_reset(void *h, enpu_err *e)
{
	(void)e;
	drop(h);
	return 0;
}

static void emu_close(void *h)
{
	if (!h)
		return;
	drop(h);
	free(h);
}

const enpu_pl_driver enpu_pl_emulated = {
	"emulated",
	"emulated PL: the reference kernels on the CPU, cycles from the npu_sim model",
	emu_open, emu_load, emu_transfer_in, emu_start, emu_wait, emu_read_back, emu_reset,
	emu_close,
};

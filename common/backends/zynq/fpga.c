/* fpga.c: the fpga_board lowering (see fpga.h): PL segments and PS ops,
 * the DMA buffers between them and the modelled PL cycles. A pure function
 * of the graph and the target, so the loader can derive it again and hold
 * the artifact's files to it (fpga_json.c). No JSON here: the compute core
 * links this file without the JSON library. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fpga.h"
#include "npusim.h"

void enpu_board_pl_model(const enpu_board_target *t, enpu_npu_target *npu)
{
	enpu_npu_target_default(npu);
	npu->rows = t->rows;
	npu->cols = t->cols;
	npu->dataflow = t->dataflow;
	npu->vector_lanes = t->cols;
	npu->clock_mhz = t->clock_mhz;
}

void enpu_fpga_part_free(enpu_fpga_part *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->n_segs; i++) {
		free(p->segs[i].in);
		free(p->segs[i].out);
	}
	free(p->segs);
	free(p->op_seg);
	memset(p, 0, sizeof(*p));
}

static int tensor_bytes(const enpu_graph *g, int t, uint64_t *out)
{
	uint64_t n, es = enpu_dtype_size(g->tensors[t].dtype);

	if (!es || enpu_shape_numel(&g->tensors[t].shape, &n) < 0 || n > UINT64_MAX / es)
		return -1;
	*out = n * es;
	return 0;
}

/* Every tensor op k touches fits the PL: bytes within half the on-chip
 * buffer (the other half holds the next tile: double buffering, as the
 * npu_sim SRAMs), every dim within max_dim. */
static int fits(const enpu_graph *g, const enpu_board_target *t, int k)
{
	const enpu_irop *op = &g->ops[k];
	uint64_t half = (uint64_t)t->buffer_kib * 1024 / 2, bytes;

	for (int j = 0; j < op->n_in + op->n_out; j++) {
		int ti = j < op->n_in ? op->in[j] : op->out[j - op->n_in];
		const enpu_shape *s = &g->tensors[ti].shape;

		if (tensor_bytes(g, ti, &bytes) < 0 || bytes > half)
			return 0;
		for (int d = 0; d < s->ndim; d++)
			if (s->dim[d] > t->max_dim)
				return 0;
	}
	return 1;
}

/* Ops reading tensor t (an op reading it twice counts once). */
static void count_readers(const enpu_graph *g, int *readers, int *last_reader)
{
	for (int i = 0; i < g->n_tensors; i++) {
		readers[i] = 0;
		last_reader[i] = -1;
	}
	for (int k = 0; k < g->n_ops; k++)
		for (int j = 0; j < g->ops[k].n_in; j++) {
			int ti = g->ops[k].in[j];

			if (last_reader[ti] != k)
				readers[ti]++;
			last_reader[ti] = k;
		}
}

static int push_buf(const enpu_graph *g, enpu_fpga_buf **arr, int *n, int t, uint64_t *sum,
		    int *sat)
{
	enpu_fpga_buf *b;

	for (int i = 0; i < *n; i++)
		if ((*arr)[i].tensor == t)
			return 0;
	if (!(b = realloc(*arr, sizeof(**arr) * (size_t)(*n + 1))))
		return -1;
	*arr = b;
	b[*n].tensor = t;
	if (tensor_bytes(g, t, &b[*n].bytes) < 0)
		*sat = 1;
	if (__builtin_add_overflow(*sum, b[*n].bytes, sum))
		*sat = 1;
	(*n)++;
	return 0;
}

/* The buffers of segment s (ops first..last): what the PL reads that the
 * PS made, and what the PS needs back. */
static int seg_buffers(const enpu_graph *g, enpu_fpga_seg *s, const int *last_reader, int *sat)
{
	int first = s->first_op, last = s->first_op + s->n_ops - 1;

	for (int k = first; k <= last; k++) {
		const enpu_irop *op = &g->ops[k];

		for (int j = 0; j < op->n_in; j++) {
			int ti = op->in[j], pr = g->tensors[ti].kind == ENPU_TK_INTERMEDIATE ?
				g->tensors[ti].producer : -1;

			if ((pr < first || pr > last) &&
			    push_buf(g, &s->in, &s->n_in, ti, &s->dma_in_bytes, sat) < 0)
				return -1;
		}
	}
	for (int k = first; k <= last; k++)
		for (int j = 0; j < g->ops[k].n_out; j++) {
			int ti = g->ops[k].out[j];

			if ((k == last || g->tensors[ti].is_output || last_reader[ti] > last) &&
			    push_buf(g, &s->out, &s->n_out, ti, &s->dma_out_bytes, sat) < 0)
				return -1;
		}
	return 0;
}

/* An op's bit in pl_ops. conv1d (spec v2) rides on conv2d's: the PL runs
 * it as the conv2d with kH = 1 it is (kernels_conv.c), with the same bytes,
 * so `pl_ops` (and the target's JSON, hence v1 artifact ids) need no
 * entry of its own. Spec v3's integer GEMMs ride likewise: conv_integer
 * and qlinear_conv on conv2d's bit, matmul_integer and qlinear_matmul on
 * matmul's (the PL's array takes int8 words; its kernels are the
 * reference's, kernels_q.c, so the bytes are cpu_ref's). */
static int pl_id(enpu_opid id)
{
	switch (id) {
	case ENPU_OP_CONV1D:
	case ENPU_OP_CONV_INTEGER:
	case ENPU_OP_QLINEAR_CONV:
		return ENPU_OP_CONV2D;
	case ENPU_OP_MATMUL_INTEGER:
	case ENPU_OP_QLINEAR_MATMUL:
		return ENPU_OP_MATMUL;
	default:
		return (int)id;
	}
}

/* The end (one past) of the PL segment that starts with GEMM k: the
 * elementwise ops that follow, each reading only its predecessor's output. */
static int seg_end(const enpu_graph *g, const enpu_board_target *t, const int *readers, int k)
{
	int j = k + 1;

	while (j < g->n_ops) {
		const enpu_irop *nx = &g->ops[j];
		int prev = g->ops[j - 1].out[0];

		if (!enpu_opmask_has(enpu_opmask_and(t->pl_ops, ENPU_PL_ELEMENTWISE), nx->def->id) ||
		    nx->n_in < 1 || nx->in[0] != prev || readers[prev] != 1 || !fits(g, t, j))
			break;
		j++;
	}
	return j;
}

/* Ops k..j-1 as a new segment of p: its buffers, its compute (from nr)
 * and DMA cycles. *sat set when a count overflows. -1: out of memory. */
static int add_seg(const enpu_graph *g, enpu_fpga_part *p, int k, int j, const int *last_reader,
		   const enpu_npu_report *nr, int *sat)
{
	uint64_t bytes, d = p->target.dma_bytes_per_cycle ? p->target.dma_bytes_per_cycle : 1;
	enpu_fpga_seg *s;

	if (!(s = realloc(p->segs, sizeof(*p->segs) * (size_t)(p->n_segs + 1))))
		return -1;
	p->segs = s;
	s = &p->segs[p->n_segs];
	memset(s, 0, sizeof(*s));
	s->id = p->n_segs++;
	s->first_op = k;
	s->n_ops = j - k;
	if (seg_buffers(g, s, last_reader, sat) < 0)
		return -1;
	for (int i = k; i < j; i++) {
		p->op_seg[i] = s->id;
		if (__builtin_add_overflow(s->compute_cycles, nr->ops[i].compute_cycles,
					   &s->compute_cycles))
			*sat = 1;
	}
	p->pl_ops += j - k;
	if (__builtin_add_overflow(s->dma_in_bytes, s->dma_out_bytes, &bytes))
		*sat = 1;
	s->dma_cycles = bytes / d + (bytes % d != 0);
	if (__builtin_add_overflow(s->compute_cycles, s->dma_cycles, &s->pl_cycles) ||
	    __builtin_add_overflow(p->pl_cycles, s->pl_cycles, &p->pl_cycles) ||
	    __builtin_add_overflow(p->dma_bytes, bytes, &p->dma_bytes))
		*sat = 1;
	return 0;
}

int enpu_fpga_partition(const enpu_graph *g, const enpu_board_target *t, enpu_fpga_part *p,
			enpu_err *e)
{
	int *readers = NULL, *last_reader = NULL, sat = 0;
	enpu_npu_target model;
	enpu_npu_report nr;
	size_t nt = (size_t)(g->n_tensors > 0 ? g->n_tensors : 1);

	memset(p, 0, sizeof(*p));
	memset(&nr, 0, sizeof(nr));
	p->target = *t;
	p->n_ops = g->n_ops;
	readers = malloc(sizeof(int) * nt);
	last_reader = malloc(sizeof(int) * nt);
	p->op_seg = malloc(sizeof(int) * (size_t)(g->n_ops > 0 ? g->n_ops : 1));
	if (!readers || !last_reader || !p->op_seg)
		goto nomem;
	count_readers(g, readers, last_reader);
	/* the PL's cycles are the npu_sim model's on the PL array */
	enpu_board_pl_model(t, &model);
	if (enpu_npu_model(g, &model, 0, &nr, e) < 0)
		goto fail;
	for (int k = 0; k < g->n_ops;) {
		int j;

		if (!enpu_opmask_has(enpu_opmask_and(t->pl_ops, ENPU_PL_GEMMS), pl_id(g->ops[k].def->id)) ||
		    !fits(g, t, k)) {
			p->op_seg[k++] = -1;
			p->ps_ops++;
			continue;
		}
		j = seg_end(g, t, readers, k);
		if (add_seg(g, p, k, j, last_reader, &nr, &sat) < 0)
			goto nomem;
		k = j;
	}
	if (sat) {
		enpu_fail(e, ENPU_E_LIMIT, g->name, "make the model smaller",
			  "the fpga_board model of '%s' overflows a 64-bit count", g->name);
		goto fail;
	}
	enpu_npu_report_free(&nr);
	free(readers);
	free(last_reader);
	return 0;
nomem:
	enpu_fail(e, ENPU_E_NOMEM, g->name, NULL, "out of memory partitioning '%s' for the PL",
		  g->name);
fail:
	enpu_npu_report_free(&nr);
	free(readers);
	free(last_reader);
	enpu_fpga_part_free(p);
	return -1;
}

const char *enpu_fpga_op_lowering(const enpu_graph *g, const enpu_fpga_part *p, int k,
				  char *kernel, size_t cap)
{
	if (p->op_seg[k] >= 0) {
		snprintf(kernel, cap, "fpga_board.pl.%d", p->op_seg[k]);
		return "pl";
	}
	snprintf(kernel, cap, "fpga_board.ps.%s", g->ops[k].def->name);
	return "ps";
}


/* fpga.h: the fpga_board lowering. A pure function of the graph and the
 * target splits the ops into PL segments (a GEMM-class op and the
 * elementwise ops fused after it) and PS ops, with the DMA buffers that
 * cross PS<->PL and the modelled PL cycles. Compile records it in
 * graph.json and plan.json ("fpga"); the artifact loader derives it again
 * and checks both; the executor drives the PL through pl.h with it.
 * Internal to common/. docs/boards.md documents the rules. */
#ifndef ENPU_FPGA_H
#define ENPU_FPGA_H

#include <stdint.h>
#include "ir.h"
#include "buf.h"
#include "board_target.h"

struct json_object;
struct enpu_artifact;

/* One buffer that crosses PS<->PL: a graph tensor and its bytes. */
typedef struct enpu_fpga_buf {
	int tensor;
	uint64_t bytes;
} enpu_fpga_buf;

typedef struct enpu_fpga_seg {
	int id;                        /* 0, 1, ... in schedule order */
	int first_op, n_ops;           /* ops first_op .. first_op + n_ops - 1 */
	enpu_fpga_buf *in; int n_in;   /* PS -> PL: activations and weights, first use order */
	enpu_fpga_buf *out; int n_out; /* PL -> PS: the segment's output, and any segment
					* tensor read after it or a graph output */
	uint64_t dma_in_bytes, dma_out_bytes;
	uint64_t compute_cycles;       /* the npu_sim model's cycles of its ops on the PL array */
	uint64_t dma_cycles;           /* ceil((in + out bytes) / dma_bytes_per_cycle) */
	uint64_t pl_cycles;            /* compute + dma */
} enpu_fpga_seg;

typedef struct enpu_fpga_part {
	enpu_board_target target;
	enpu_fpga_seg *segs; int n_segs;
	int *op_seg; int n_ops;        /* per op: its segment id, -1 = runs on the PS */
	int pl_ops, ps_ops;
	uint64_t pl_cycles, dma_bytes; /* totals over the segments */
} enpu_fpga_part;

#define ENPU_FPGA_PART_INIT {{0}, NULL, 0, NULL, 0, 0, 0, 0, 0}

/* The npu_sim target that models the PL: its array and dataflow, vector
 * lanes = its columns, 4-byte words, every op, unlimited bandwidth (DMA
 * is counted apart), the PL clock. */
void enpu_board_pl_model(const enpu_board_target *t, enpu_npu_target *npu);

/* Partition g for t (an fpga_board target). In schedule order, a segment
 * starts at a GEMM-class op in pl_ops and takes each next op while that op
 * is elementwise and in pl_ops, its first input is the previous op's
 * output, and no other op reads that output. Every tensor a segment op
 * reads or writes must fit the limits (bytes <= buffer_kib * 1024 / 2,
 * every dim <= max_dim): a GEMM that does not fit runs on the PS, a fused
 * op that does not fit ends the segment. Everything else runs on the PS.
 * -1 only when memory or a 64-bit count runs out. */
int enpu_fpga_partition(const enpu_graph *g, const enpu_board_target *t, enpu_fpga_part *p,
			enpu_err *e);
void enpu_fpga_part_free(enpu_fpga_part *p);

/* graph.json's lowering and kernel of op k: "pl", "fpga_board.pl.<seg>" or
 * "ps", "fpga_board.ps.<op type>". */
const char *enpu_fpga_op_lowering(const enpu_graph *g, const enpu_fpga_part *p, int k,
				  char *kernel, size_t cap);

/* plan.json's "fpga" section: {"target", "segments": [{"id", "ops",
 * "dma_in": [{"tensor", "bytes"}], "dma_out", "dma_bytes", "compute_cycles",
 * "dma_cycles", "pl_cycles"}], "ps_ops", "pl_op_count", "ps_op_count",
 * "pl_cycles"}. New reference. */
struct json_object *enpu_fpga_plan_json(const enpu_graph *g, const enpu_fpga_part *p);
/* report.json's "fpga" section: {"pl": driver name, "target", "segments":
 * [{"id", "ops", "pl_cycles", "dma_in_bytes", "dma_out_bytes"}], "pl_ops",
 * "ps_ops", "pl_cycles_total", "dma_bytes_total", "pl_time_us"}. */
struct json_object *enpu_fpga_report_json(const enpu_graph *g, const enpu_fpga_part *p,
					  const char *pl_name);

/* The board target of a zynq_ps or fpga_board artifact (NULL otherwise),
 * and an fpga_board artifact's partition (NULL otherwise):
 * backends/fpga_board.c. */
const enpu_board_target *enpu_artifact_board(const struct enpu_artifact *a);
const enpu_fpga_part *enpu_artifact_fpga(const struct enpu_artifact *a);

#endif

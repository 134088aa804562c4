/* board_target.h: the target options of the two board backends, zynq_ps
 * (the Zynq's ARM cores) and fpga_board (its programmable logic, the PL,
 * plus the ARM cores as the PS). YAML in (targets.<backend> or a target
 * file), canonical JSON both ways (manifest.json, the compile cache key). */
#ifndef ENPU_BOARD_TARGET_H
#define ENPU_BOARD_TARGET_H

#include <stdint.h>
#include "ops.h"
#include "npusim.h"

struct json_object;
struct enpu_ynode;
struct enpu_target;
struct enpu_backend_def;

typedef enum enpu_board_cpu {
	ENPU_CPU_CORTEX_A9,    /* Zynq-7000 (the default) */
	ENPU_CPU_CORTEX_A53,   /* Zynq UltraScale+ */
	ENPU_CPU_COUNT
} enpu_board_cpu;

/* The PL's ops when the target does not say: the three GEMM-class ops and
 * the cheap elementwise ops (no divider, no transcendental units): add,
 * sub, mul, relu, leaky_relu, clip. */
#define ENPU_PL_OPS_DEFAULT \
	ENPU_OPMASK(ENPU_OP_MATMUL, ENPU_OP_GEMM, ENPU_OP_CONV2D, ENPU_OP_ADD, ENPU_OP_SUB, \
		    ENPU_OP_MUL, ENPU_OP_RELU, ENPU_OP_LEAKY_RELU, ENPU_OP_CLIP)

/* The ops a PL segment can start with (GEMM-class, on the array). */
#define ENPU_PL_GEMMS ENPU_OPMASK(ENPU_OP_MATMUL, ENPU_OP_GEMM, ENPU_OP_CONV2D)
/* The elementwise ops a segment can fuse after its GEMM; `pl_ops` may name
 * any op of these two sets and no other. */
#define ENPU_PL_ELEMENTWISE \
	ENPU_OPMASK(ENPU_OP_ADD, ENPU_OP_SUB, ENPU_OP_MUL, ENPU_OP_DIV, ENPU_OP_RELU, \
		    ENPU_OP_SIGMOID, ENPU_OP_TANH, ENPU_OP_LEAKY_RELU, ENPU_OP_CLIP, ENPU_OP_GELU)

typedef struct enpu_board_target {
	int pl;                        /* 1: fpga_board's (its row's `pl`): the PL fields count */
	enpu_board_cpu cpu;            /* both; informational in v1 */
	/* fpga_board only (defaults filled for zynq_ps too, never used) */
	enpu_opmask pl_ops;            /* ops.h's op set; ENPU_PL_OPS_DEFAULT */
	uint32_t buffer_kib;           /* on-chip buffer; 512 */
	int64_t max_dim;               /* largest dim of any PL tensor; 4096 */
	int rows, cols;                /* the PL's systolic array; 8 x 8 */
	enpu_dataflow dataflow;        /* os */
	double clock_mhz;              /* PL clock; 100 */
	uint32_t dma_bytes_per_cycle;  /* PS<->PL DMA bandwidth; 8 */
} enpu_board_target;

const char *enpu_board_cpu_name(enpu_board_cpu c);   /* "cortex-a9" */

/* Board targets differ by their backend's row: d->pl says whether the PL
 * fields belong to it (fpga_board) or only the cpu (zynq_ps). */
void enpu_board_target_default(const struct enpu_backend_def *d, enpu_board_target *t);

/* From the YAML mapping of targets.<backend> (or a target file's root);
 * node NULL or null = all defaults. Unknown fields (with did-you-mean),
 * wrong types, values out of range and unknown ops or CPUs are
 * ENPU_E_TARGET at label:line:col of the offending node. */
int enpu_board_target_parse(const struct enpu_backend_def *d, const struct enpu_ynode *node,
			    const char *label, enpu_board_target *t, enpu_err *e);

/* Canonical JSON: every field present, keys sorted, pl_ops sorted by name.
 * zynq_ps: {"cpu"}; fpga_board: {"array", "buffer_kib", "clock_mhz", "cpu",
 * "dataflow", "dma_bytes_per_cycle", "max_dim", "pl_ops"}. New reference. */
struct json_object *enpu_board_target_json(const enpu_board_target *t);
/* Back from that JSON (an artifact's manifest): every field required,
 * nothing else allowed. ENPU_E_ARTIFACT naming label. */
int enpu_board_target_from_json(const struct enpu_backend_def *d, struct json_object *o,
				const char *label, enpu_board_target *t, enpu_err *e);

/* The options hooks of both board backends' rows (backend.h), o an
 * enpu_board_target. */
int enpu_board_opts_parse(const struct enpu_backend_def *d, void *o, const struct enpu_ynode *node,
			  const char *label, enpu_err *e);
struct json_object *enpu_board_opts_json(const void *o);
int enpu_board_opts_from_json(const struct enpu_backend_def *d, void *o, struct json_object *v,
			      const char *label, enpu_err *e);

/* The board options of a resolved target (target.c), NULL for other
 * backends. */
const enpu_board_target *enpu_target_board(const struct enpu_target *t);

#endif

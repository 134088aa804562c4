/* npusim.h: the npu_sim backend's target description and its cycle and
 * memory model (SCALE-Sim v2 compatible compute cycles).
 *
 * The model is a pure function of the op graph and the target: compile
 * records its tiling in plan.json, and every npu_sim run reports it in
 * report.json. docs/npu-sim.md documents every rule here. */
#ifndef ENPU_NPUSIM_H
#define ENPU_NPUSIM_H

#include <stdint.h>
#include "ir.h"

struct json_object;
struct enpu_ynode;

typedef enum enpu_dataflow {
	ENPU_DF_OS,   /* output stationary: (Sr, Sc, T) = (M, N, K) */
	ENPU_DF_WS,   /* weight stationary: (K, N, M) */
	ENPU_DF_IS,   /* input stationary:  (K, M, N) */
} enpu_dataflow;

enum { ENPU_SRAM_IFMAP, ENPU_SRAM_FILTER, ENPU_SRAM_OFMAP, ENPU_SRAM_COUNT };
const char *enpu_npu_sram_name(int i);   /* "ifmap", "filter", "ofmap" */

typedef struct enpu_npu_target {
	int rows, cols;                 /* array: [rows, cols]; default 16 x 16 */
	enpu_dataflow dataflow;         /* default os */
	uint32_t sram_kib[ENPU_SRAM_COUNT]; /* ifmap, filter, ofmap; each double-buffered */
	int word_bytes;                 /* a float32 element's bytes: default 4;
					 * scalesim_compat: 1 (int tensors: their own) */
	double dram_bytes_per_cycle;    /* 0 = unlimited: no stalls */
	double clock_mhz;               /* default 1000 */
	int vector_lanes;               /* default 16 */
	enpu_opmask ops;                /* ops.h's op set: supported; default all */
	int ops_given;                  /* `ops:` was written */
	int scalesim_compat;            /* SCALE-Sim's conventions: 1-byte words, the -1 */
} enpu_npu_target;

void enpu_npu_target_default(enpu_npu_target *t);

/* From the YAML mapping of targets.npu_sim (or a target file's root
 * mapping); node NULL = all defaults. Unknown fields, wrong types and values
 * out of range are ENPU_E_TARGET at label:line:col of the offending node; an
 * unknown op in `ops:` too (with did-you-mean). */
int enpu_npu_target_parse(const struct enpu_ynode *node, const char *label,
			  enpu_npu_target *t, enpu_err *e);

/* Canonical JSON, every field present (defaults filled), keys sorted:
 * the form recorded in manifest.json and hashed into the compile cache key.
 * New reference; caller puts it. */
struct json_object *enpu_npu_target_json(const enpu_npu_target *t);
/* Back from that JSON (manifest/plan of an artifact). ENPU_E_ARTIFACT on
 * anything malformed, naming label. */
int enpu_npu_target_from_json(struct json_object *o, const char *label,
			      enpu_npu_target *t, enpu_err *e);

/* The npu_sim target of a loaded artifact (its manifest's), NULL for other
 * backends (backends/npu_sim.c). */
struct enpu_artifact;
struct enpu_target;
const enpu_npu_target *enpu_artifact_npu(const struct enpu_artifact *a);
/* The npu_sim options of a resolved target, NULL for other backends. */
const enpu_npu_target *enpu_target_npu(const struct enpu_target *t);

/* ---- the model ---------------------------------------------------------- */

/* How an op lowers on the NPU (enpu_npu_class_of). */
typedef enum enpu_npu_class {
	ENPU_NPU_GEMM,     /* systolic array: matmul, gemm, conv2d (im2col view) */
	ENPU_NPU_VECTOR,   /* vector unit: elementwise, activations, softmax, pools, batchnorm */
	ENPU_NPU_FREE,     /* reshape, flatten: no data moves */
	ENPU_NPU_MOVE,     /* transpose, concat: data movement through DRAM */
} enpu_npu_class;

const char *enpu_npu_class_name(enpu_npu_class c);   /* "gemm", "vector", "free", "move" */
/* How op type d lowers on the NPU, and its vector passes over its
 * elements (pools: per window tap): npu_sim's own table (npusim.c). */
enpu_npu_class enpu_npu_class_of(const enpu_opdef *d);
int enpu_npu_passes_of(const enpu_opdef *d);
/* 1 when npu_sim lowers op type d: every op of spec v1 and v2, and the
 * spec v3 ops its table has a row for (the backend's can_lower). */
int enpu_npu_lowers_op(const enpu_opdef *d);
/* Bytes of one element of tensor ti in the model's SRAM and DRAM counts
 * (docs/npu-sim.md, "int8"): spec v3's integer tensors their own size
 * (int8, uint8: 1; int32: 4), float32 tensors (and gather's int64
 * indices) the target's word_bytes. */
uint64_t enpu_npu_elem_bytes(const enpu_graph *g, const enpu_npu_target *t, int ti);

typedef struct enpu_npu_opstats {
	int op;                           /* graph op index */
	enpu_npu_class cls;
	/* gemm: one GEMM of M x K times K x N per group (matmul batches count as groups) */
	uint64_t M, N, K, groups;
	uint64_t Sr, Sc, T;               /* the dataflow's mapping */
	uint64_t row_folds, col_folds, folds;  /* folds = row_folds * col_folds, per group */
	uint64_t tile_words[ENPU_SRAM_COUNT];  /* largest per-fold tile in each SRAM */
	/* vector / move */
	uint64_t elements;
	int passes;
	/* every class */
	uint64_t compute_cycles, stall_cycles;
	double utilisation;               /* MACs / (compute_cycles * rows * cols); 0 for non-gemm */
	double mapping_efficiency;        /* Sr*Sc / (folds * rows * cols); 0 for non-gemm */
	uint64_t sram_reads[ENPU_SRAM_COUNT], sram_writes[ENPU_SRAM_COUNT];   /* words */
	uint64_t dram_read_bytes[ENPU_SRAM_COUNT], dram_write_bytes[ENPU_SRAM_COUNT];
	uint64_t sram_bytes;              /* SRAM this op keeps resident */
} enpu_npu_opstats;

typedef struct enpu_npu_report {
	enpu_npu_target target;
	enpu_npu_opstats *ops; int n_ops;  /* one per graph op, in schedule order */
	uint64_t compute_cycles, stall_cycles, total_cycles;
	double time_us;                    /* total_cycles / clock_mhz */
	uint64_t dram_read_bytes, dram_write_bytes;
	uint64_t peak_sram_bytes;          /* max over ops */
	uint64_t peak_dram_bytes;          /* inputs + weights + arena_bytes */
	double utilisation;                /* sum MACs / (gemm compute cycles * rows * cols) */
} enpu_npu_report;

/* SCALE-Sim v2's compute cycles of one GEMM (M x K times K x N) on the
 * target's array and dataflow: folds = ceil(Sr/R) * ceil(Sc/C); per fold
 * T + R + C - 2 (os) or 2R + C + T - 2 (ws, is); cycles = folds * per-fold,
 * minus 1 in scalesim_compat mode. *folds may be NULL. */
uint64_t enpu_npu_gemm_cycles(const enpu_npu_target *t, uint64_t M, uint64_t N,
			      uint64_t K, uint64_t *folds);

/* Model every op of g on t. arena_bytes is the memory plan's arena.
 * Fills *r (caller frees with enpu_npu_report_free). */
int enpu_npu_model(const enpu_graph *g, const enpu_npu_target *t, uint64_t arena_bytes,
		   enpu_npu_report *r, enpu_err *e);
void enpu_npu_report_free(enpu_npu_report *r);

/* plan.json's "npu" section: the target and, per op, the lowering, the
 * tiling (folds, tile sizes per SRAM), SRAM/DRAM traffic and, with counts,
 * its compute and stall cycles, and the model's peak DRAM: every fact
 * report.json needs that is not a sum or a ratio of these. counts 0 gives
 * the section of builds before that (an older artifact's), to compare. */
struct json_object *enpu_npu_plan_json(const enpu_graph *g, const enpu_npu_report *r,
				       int counts);
/* The model back from that section (npuplan.c), for a trusted load: the
 * per-op counts as written, ratios (enpu_npu_ratios) and totals
 * (enpu_npu_totals) derived from them, bit-identical to enpu_npu_model's.
 * 1 = the section has no counts (an older build's): derive the model.
 * ENPU_E_ARTIFACT at label on anything malformed. */
int enpu_npu_plan_read(const enpu_graph *g, const enpu_npu_target *t,
		       struct json_object *sec, const char *label, enpu_npu_report *r,
		       enpu_err *e);
/* A GEMM op's utilisation and mapping efficiency from its counts (0 for
 * the other classes). */
void enpu_npu_ratios(const enpu_npu_target *t, enpu_npu_opstats *st);
/* r's totals (all but peak_dram_bytes) from its ops and r->target; 1 when
 * a sum overflows. */
int enpu_npu_totals(enpu_npu_report *r);
/* An op's place on the roofline, from its counts (docs/npu-sim.md,
 * "Roofline"): MACs = groups*M*N*K (gemm; 0 otherwise), DRAM bytes = read
 * + write bytes over the three operands (saturating), arithmetic
 * intensity = MACs / DRAM bytes (has_intensity: a gemm op that moves DRAM
 * bytes), needed_bytes_per_cycle = DRAM bytes / compute cycles: the least
 * dram_bytes_per_cycle at which the op does not stall (0 when it moves no
 * bytes; has_needed 0 when it moves bytes in no compute cycles), and
 * memory_bound = it stalls at the target's bandwidth (stall_cycles > 0). */
typedef struct enpu_npu_roofline {
	uint64_t macs, dram_bytes;
	int has_intensity, has_needed, memory_bound;
	double intensity, needed_bytes_per_cycle;
} enpu_npu_roofline;
void enpu_npu_roofline_of(const enpu_npu_opstats *st, enpu_npu_roofline *rf);

/* report.json's "npu" section: per op (name, lowering, M/N/K or elements,
 * folds, compute and stall cycles, utilisation, mapping efficiency, the
 * roofline (arithmetic_intensity, needed_bytes_per_cycle, memory_bound),
 * SRAM and DRAM traffic per operand) and totals. */
struct json_object *enpu_npu_report_json(const enpu_graph *g, const enpu_npu_report *r);

#endif

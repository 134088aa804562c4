/* enpu.h: the toolchain core's top-level verbs, as the daemon calls them.
 * compile (spec + weights -> artifact dir), artifact loading, run (artifact +
 * input.npz -> result.npz) and compare (two npz files -> report). */
#ifndef ENPU_H
#define ENPU_H

#include <stdint.h>
#include "err.h"
#include "buf.h"
#include "tensor.h"
#include "spec.h"
#include "ir.h"
#include "par.h"
#include "target.h"

#define ENPU_VERSION "0.2.0"
#define ENPU_COMPILER_ID "eulernpu-compiler " ENPU_VERSION

/* ---- compile ---------------------------------------------------------- */

typedef struct enpu_compile_info {
	char artifact_id[65];   /* hex sha256 */
	int n_ops;              /* ops lowered */
	int n_components;
	char backend[32];
	uint64_t arena_bytes;   /* memory plan size */
	/* zynq_ps and fpga_board (0 otherwise): ops on the PL and on the PS,
	 * and PL segments (zynq_ps: every op on the PS, no segment) */
	int pl_ops, ps_ops, pl_segments;
} enpu_compile_info;

/* Validate spec for the target (which names the backend; NULL = the spec's
 * backend and targets), check weights.npz against the spec (names, shapes,
 * dtypes: ENPU_E_WEIGHT_*; weights_label names the file in errors), and
 * write the artifact into outdir (created; must be empty or absent):
 * graph.json (with each op's lowering), plan.json (schedule, memory plan,
 * and for npu_sim the tiling), weights/<backend>.npz, manifest.json (with
 * the canonical target options and the summary, wire.h). Byte-identical
 * output for identical inputs. spec_digest is recorded in the manifest
 * (hex; NULL = null). */
int enpu_compile(const enpu_spec *spec, const enpu_target *target,
		 const char *weights_path, const char *weights_label,
		 const char *spec_digest, const char *outdir,
		 const enpu_limits *lim, enpu_compile_info *info, enpu_err *e);

/* The same in memory: the weights already read (weights_sha256: the hex
 * digest of the weights file they came from, which the manifest records;
 * a caller that stores files by content already has it), the artifact's
 * files built into *out, nothing written. The file-path version above is
 * enpu_npz_read + enpu_compile_mem + enpu_compiled_write. */
#define ENPU_ARTIFACT_FILES 4
typedef struct enpu_artifact_file {
	char path[64];          /* relative: "graph.json", "weights/npu_sim.npz", ... */
	enpu_buf data;          /* empty when on_disk */
	char sha256[65];        /* hex digest of its bytes */
	uint64_t size;          /* its bytes */
	int on_disk;            /* written by the compile already (the streamed
				 * weights of enpu_compile_to_dir), not in data */
} enpu_artifact_file;

typedef struct enpu_compiled {
	/* graph.json, plan.json, weights/<backend>.npz, manifest.json: in
	 * manifest (path) order, the manifest last */
	enpu_artifact_file files[ENPU_ARTIFACT_FILES];
	enpu_compile_info info;
} enpu_compiled;

int enpu_compile_mem(const enpu_spec *spec, const enpu_target *target, const enpu_tlist *weights,
		     const char *weights_label, const char *weights_sha256,
		     const char *spec_digest, const enpu_limits *lim, enpu_compiled *out,
		     enpu_err *e);
void enpu_compiled_free(enpu_compiled *c);

/* The same into outdir (created; empty or absent) without holding the
 * weights: weights_path's members are scanned (headers only; gather's
 * int64 indices read). weights/<backend>.npz is the weights file itself
 * when all its members are stored (their CRCs checked; its digest is
 * weights_sha256, which must be given): a hard link to it made by `link`
 * when given (weights_path is a file nobody changes, a blob of a
 * content-addressed cache), else a copy; a file with deflated members is
 * streamed member by member into enpu_npz_write's bytes. The other files
 * are built in memory (out's copies of them kept) and written, the
 * manifest last. For a file enpu_npz_write wrote, the same bytes as
 * enpu_compile_mem + enpu_compiled_write (which always re-packs); memory
 * does not grow with the weights. On failure nothing is left in outdir. */
int enpu_compile_to_dir(const enpu_spec *spec, const enpu_target *target,
			const char *weights_path, const char *weights_label,
			const char *weights_sha256, const char *spec_digest,
			const enpu_limits *lim, const char *outdir, const enpu_linker *link,
			enpu_compiled *out, enpu_err *e);
/* Write c's files into outdir (created; must be empty or absent), the
 * manifest last; on failure nothing of them is left behind. */
int enpu_compiled_write(const enpu_compiled *c, const char *outdir, enpu_err *e);

/* ---- artifact --------------------------------------------------------- */

typedef struct enpu_artifact enpu_artifact;  /* opaque, loaded and verified */

/* Load dir/manifest.json (enpu_manifest_parse, wire.h), verify every listed
 * file's size and sha256 and that no path escapes dir, parse graph.json
 * (once; re-running shape rules), plan.json and the weights, derive the
 * backend's plan again and check graph.json's lowerings, plan.json's
 * section and the manifest's summary against it. ENPU_E_ARTIFACT /
 * ENPU_E_ARTIFACT_DIGEST on any inconsistency. */
int enpu_artifact_load(const char *dir, const enpu_limits *lim,
		       enpu_artifact **out, enpu_err *e);
/* The same with flags: ENPU_LOAD_TRUSTED when the caller has just checked
 * every listed file's digest itself (the daemon's content-addressed cache,
 * srv_artifact_verify, after a deep load at import): the files' sizes are
 * checked, not hashed again, and the backend's plan is read from plan.json
 * where it can be (the npu model), not derived again; the rest is as deep. */
#define ENPU_LOAD_TRUSTED 1u
/* Only the first half of that: the caller has hashed every listed file
 * itself (the daemon's import of blobs hashed as they arrived,
 * srv_artifact_import): the sizes are checked, the digests not; the rest
 * (the plan derived again and compared, the summary, the weights) is as
 * deep as a load without flags. */
#define ENPU_LOAD_HASHED 2u
int enpu_artifact_load_ex(const char *dir, const enpu_limits *lim, unsigned flags,
			  enpu_artifact **out, enpu_err *e);
void enpu_artifact_free(enpu_artifact *a);
const char *enpu_artifact_id(const enpu_artifact *a);
const char *enpu_artifact_backend(const enpu_artifact *a);
const enpu_graph *enpu_artifact_graph(const enpu_artifact *a);
/* Its outputs' names and shapes as one line of JSON, [{"name", "shape"}]
 * (report.json's "outputs", and a job's): made once at load. */
const char *enpu_artifact_outputs_json(const enpu_artifact *a);
/* report.json's bytes for a backend whose report depends on the artifact
 * alone (no backend section: exec.c), kept in the loaded artifact by the
 * first run that made them: get appends them to out (1), or says they are
 * not kept yet (0), or -1 when out cannot grow; set keeps a copy (once). */
int enpu_artifact_report_memo(const enpu_artifact *a, enpu_buf *out);
void enpu_artifact_report_memo_set(const enpu_artifact *a, const void *p, size_t n);

/* The artifact id: sha256 over "eulernpu-artifact-v1\n" then, for each file
 * in path order, "<path>\0<sha256 hex>\n". manifest.json is not part of it.
 * paths/digests: n entries, already sorted by path (strcmp). */
void enpu_artifact_id_of(const char *const *paths, const char *const *digests,
			 int n, char out_hex[65]);

/* ---- run -------------------------------------------------------------- */

typedef struct enpu_run_info {
	int n_outputs;
	char first_shape[64];   /* "(1, 4)" of the first output */
	double seconds;         /* wall time of execution only */
	/* a backend with an NPU model (npu_sim; has_npu 0 otherwise): the
	 * model's totals, as in report.json */
	int has_npu;
	uint64_t npu_cycles;
	double npu_time_us;
	uint64_t npu_dram_bytes;
	double npu_utilisation;
	double npu_clock_mhz;   /* the clock the totals were timed at */
	/* zynq_ps and fpga_board (0 otherwise), as in report.json: ops on the
	 * PL and the PS, PL segments run, and the PL cycles the PL driver
	 * reported (the emulated PL: the modelled cycles) */
	int pl_ops, ps_ops, pl_segments;
	uint64_t pl_cycles;
} enpu_run_info;

/* Check input.npz (keys, shapes, dtypes: ENPU_E_INPUT_*; input_label names
 * the file in errors), execute every op into the planned arena (cpu_ref:
 * the reference kernels; npu_sim: GEMMs tiled fold by fold as the array
 * computes them, the rest on the reference kernels, the same bits), and
 * write result.npz with the spec's outputs by name, in order. par may be
 * NULL. The same bytes for any thread count. cancel, if non-NULL, is polled
 * between ops: non-zero aborts (-1, E0807). report_path, if non-NULL, gets
 * report.json: {"backend", "artifact", "seconds", "outputs": [...], and the
 * backend's section (backend.h): npu_sim "npu": enpu_npu_report_json;
 * fpga_board "fpga": the segments the PL driver (enpu_pl_current) ran,
 * PL/PS op counts, PL cycles and DMA bytes; zynq_ps "zynq": {"cpu"}}.
 * fpga_board runs each PL segment through the PL driver, the PS ops on
 * the reference kernels: the same bits as cpu_ref. */
int enpu_run(const enpu_artifact *a, const char *input_path, const char *input_label,
	     const char *result_path, const char *report_path, enpu_par *par,
	     const volatile int *cancel, const enpu_limits *lim, enpu_run_info *info,
	     enpu_err *e);
/* The same in memory: the inputs already read (checked here; a graph
 * output that is a graph input has its NaNs made canonical in place), the
 * outputs appended to *results (spec order; freed on failure), report.json's
 * bytes appended to *report when non-NULL. enpu_run is enpu_npz_read +
 * this + enpu_npz_write (+ the report's file). */
int enpu_run_mem(const enpu_artifact *a, enpu_tlist *inputs, const char *input_label,
		 enpu_tlist *results, enpu_buf *report, enpu_par *par,
		 const volatile int *cancel, const enpu_limits *lim, enpu_run_info *info,
		 enpu_err *e);

/* ---- boards ----------------------------------------------------------- */


/* The PL driver that runs fpga_board segments in this process (pl.h):
 * "emulated" unless enpu_pl_select chose another. Select once at start-up
 * (eulernpud --pl NAME), before any run; an unknown name is -1
 * (ENPU_E_USAGE, listing enpu_pl_names()). */
int enpu_pl_select(const char *name, enpu_err *e);
const char *enpu_pl_names(void);                 /* "emulated" (comma-separated) */
const char *enpu_pl_current_name(void);          /* for GET /v1/health */
const char *enpu_pl_current_description(void);  /* one plain line */

/* ---- compare ---------------------------------------------------------- */

typedef struct enpu_cmp_opts {
	double atol;   /* default 1e-5 */
	double rtol;   /* default 0 */
	int exact;     /* byte-equality */
} enpu_cmp_opts;

typedef struct enpu_cmp_result {
	int n_tensors;
	double max_abs_diff;        /* over all tensors */
	int ok;                     /* 1 = within tolerance / equal */
	/* when !ok: the worst offender */
	char tensor[256];
	char index[128];            /* "(0, 3)" */
	double got, expected;       /* the values (a float32's or an integer's) */
	double diff;
} enpu_cmp_result;

/* Compare got.npz against expected.npz. Returns 0 when the comparison could
 * be made (res->ok says whether it passed; a failure also fills *e with
 * ENPU_E_CMP_DIFF naming tensor, index, both values, diff), -1 when it
 * could not: missing key (ENPU_E_CMP_KEY, listing both key sets), shape
 * (ENPU_E_CMP_SHAPE) or dtype (ENPU_E_CMP_DTYPE) mismatch, bad file.
 * A float32 tensor passes when |got - exp| <= atol + rtol * |exp| for every
 * element (NaN equals NaN only in the same position; with exact, bytes must
 * match); an integer tensor (int8, uint8, int32, int64) when every element
 * is equal, in either mode: quantised results are exact by construction. */
int enpu_compare(const char *got_path, const char *got_label,
		 const char *exp_path, const char *exp_label,
		 const enpu_cmp_opts *o, const enpu_limits *lim,
		 enpu_cmp_result *res, enpu_err *e);

#endif

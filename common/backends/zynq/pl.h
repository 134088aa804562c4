/* pl.h: the PL driver interface. The fpga_board executor drives the
 * programmable logic only through an enpu_pl_driver: open, load a segment
 * (its "bitstream"), DMA the input buffers in, start, wait, read the output
 * buffers back, reset, close. A real UIO/DMA driver for a given bitstream
 * is one more table like the emulated one (pl_emulated.c) plus a line in
 * pl.c's list; the scheduler does not change. */
#ifndef ENPU_PL_H
#define ENPU_PL_H

#include <stddef.h>
#include <stdint.h>
#include "engine.h"
#include "fpga.h"

/* What a driver is opened with. */
typedef struct enpu_pl_config {
	const enpu_board_target *target;   /* the artifact's fpga_board target */
	enpu_par *par;                     /* threads the driver may use; NULL = serial */
	const char *device;                /* e.g. "/dev/uio0"; NULL for the emulated PL */
} enpu_pl_config;

/* What load() gets: one PL segment of a graph. Buffer ids: transfer_in's
 * id is an index into seg->in (the DMA-in list), read_back's an index into
 * seg->out. Valid until the next load(), reset() or close(). */
typedef struct enpu_pl_segment {
	const char *bitstream;             /* "fpga_board.pl.<id>": which configuration */
	const enpu_graph *g;
	const enpu_fpga_seg *seg;          /* ops, DMA buffers and their bytes, modelled cycles */
} enpu_pl_segment;

/* Every function returns 0, or -1 with *e filled (ENPU_E_JOB_FAILED for a
 * PL that misbehaves, ENPU_E_NOMEM, ...). A call out of order (start
 * before load, read_back before wait) is an error, never a crash. */
typedef struct enpu_pl_driver {
	const char *name;                  /* "emulated": the daemon's --pl NAME */
	const char *description;           /* one line for GET /v1/health */
	int (*open)(const enpu_pl_config *cfg, void **handle, enpu_err *e);
	int (*load)(void *h, const enpu_pl_segment *s, enpu_err *e);
	int (*transfer_in)(void *h, int buf, const void *data, size_t bytes, enpu_err *e);
	int (*start)(void *h, enpu_err *e);
	/* cycles (may be NULL) gets the PL cycles of the run: measured by a
	 * real PL, modelled by the emulated one */
	int (*wait)(void *h, int timeout_ms, uint64_t *cycles, enpu_err *e);
	int (*read_back)(void *h, int buf, void *data, size_t bytes, enpu_err *e);
	int (*reset)(void *h, enpu_err *e);
	void (*close)(void *h);            /* NULL ok */
} enpu_pl_driver;

/* The in-tree drivers. */
extern const enpu_pl_driver enpu_pl_emulated;

/* A driver by name (NULL if unknown), and the known names ("emulated"),
 * comma-separated, for usage text and errors. */
const enpu_pl_driver *enpu_pl_by_name(const char *name);
const char *enpu_pl_names(void);

/* The process-wide PL that enpu_run uses for fpga_board artifacts; the
 * emulated one unless changed. Set it once at start-up (the daemon's
 * --pl), before any run: runs read it without a lock. enpu_pl_select
 * returns -1 (ENPU_E_USAGE) for an unknown name; enpu_pl_set(NULL)
 * restores the emulated PL. */
int enpu_pl_select(const char *name, enpu_err *e);
void enpu_pl_set(const enpu_pl_driver *d);
const enpu_pl_driver *enpu_pl_current(void);

/* The fpga_board executor: an enpu_engine hook. At the first op of a PL
 * segment it drives the PL (load, transfer_in every DMA-in buffer from the
 * engine's tensors, start, wait, read_back every DMA-out buffer into them)
 * and answers 0 for the segment's other ops; PS ops answer 1 (the
 * reference kernel). */
typedef struct enpu_pl_exec {
	const enpu_graph *g;
	const enpu_fpga_part *part;
	const enpu_pl_driver *drv;
	void *handle;                      /* from drv->open */
	float *const *data;                /* the engine's tensor table */
	int timeout_ms;                    /* per segment; <= 0 = 60000 */
	uint64_t pl_cycles;                /* summed from wait() */
	int segments_run;
} enpu_pl_exec;

int enpu_pl_hook(void *ctx, int op, const enpu_view *in, int n_in, enpu_view *out,
		 enpu_par *par, enpu_err *e);

#endif

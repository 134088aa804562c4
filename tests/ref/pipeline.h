/* pipeline.h: one model directory (spec.yaml, weights.npz, input.npz)
 * through the whole core, as the tests that compare backends need it:
 * load the spec, resolve a target, compile, load the artifact, run with a
 * thread count, read the result back. */
#ifndef ENPU_TEST_PIPELINE_H
#define ENPU_TEST_PIPELINE_H

#include "enpu.h"
#include "buf.h"

/* Compile dir/spec.yaml for backend under target_yaml (the text of a target
 * file; NULL = the spec's own targets) into a fresh directory under work,
 * run dir/input.npz with `threads` threads (report: a report.json to write,
 * or NULL) and read result.npz's bytes into res (the npz writer is
 * deterministic: equal bytes mean equal bits). ci/ri may be NULL. 0, or -1
 * with the stage and the error in why. */
int tpl_compile_run(const char *dir, const char *backend, const char *target_yaml, int threads,
		    const char *work, const char *report, enpu_buf *res,
		    enpu_compile_info *ci, enpu_run_info *ri, char *why, size_t cap);

/* tests/data, found from the repository root or a build directory below
 * it (the first candidate holding the subdirectory probe, e.g. "npusim"),
 * or $ENPU_TEST_DATA when set. */
const char *tpl_data_dir(const char *probe);

/* The directories named in a cases.txt (one a line, '#' comments), each
 * prefixed, into names; their number, or -1 when list cannot be read. */
int tpl_read_cases(const char *list, const char *prefix, char names[][256], int max);

/* Replace member rel of the artifact in adir with text and fix its
 * manifest (digests, sizes, id), so that only the member's own
 * consistency is left to catch (rel "manifest.json": just written). 0 or -1. */
int tpl_rewrite_member(const char *adir, const char *rel, const char *text, size_t len);

#endif

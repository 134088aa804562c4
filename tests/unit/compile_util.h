/* compile_util.h: one compile of a parsed spec into a directory, and a
 * look into the graph.json it wrote, for the unit tests that compile in
 * process (test_artifact.c, test_v2conv.c). */
#ifndef COMPILE_UTIL_H
#define COMPILE_UTIL_H

#include <string.h>
#include <criterion/criterion.h>
#include <json-c/json.h>
#include "enpu.h"

/* Compile s for backend (NULL = the spec's) with the spec's targets. */
static inline int compile_spec(const enpu_spec *s, const char *backend, const char *w,
			       const char *spec_digest, const char *out,
			       enpu_compile_info *info, enpu_err *e)
{
	enpu_target *t = NULL;
	int rc;

	if (enpu_target_resolve(s, backend, NULL, NULL, NULL, &t, e) < 0)
		return -1;
	rc = enpu_compile(s, t, w, "weights.npz", spec_digest, out, NULL, info, e);
	enpu_target_free(t);
	return rc;
}

/* graph.json's entry of tensor name (the test fails without one). */
static inline json_object *tensor_entry(json_object *g, const char *name)
{
	json_object *ts = json_object_object_get(g, "tensors");

	for (size_t i = 0; i < json_object_array_length(ts); i++) {
		json_object *t = json_object_array_get_idx(ts, i);
		if (strcmp(json_object_get_string(json_object_object_get(t, "name")), name) == 0)
			return t;
	}
	cr_assert_fail("no tensor %s", name);
	return NULL;
}

#endif

/* board_check.c: a board's answers are untrusted input. The pure checks
 * the board link (board.c) makes before it believes a board: the most
 * bytes a result may take, the result's tensors against the artifact's
 * outputs, the outputs the board's job JSON claims, and the board's own
 * error about a job wrapped as the lab's (a model error stays one; any
 * other is a board fault naming the board, its code and message kept as
 * data). */
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>
#include "srv.h"
#include "board.h"

#define NPZ_SLACK 4096u          /* an npz's zip directory and end records */
#define NPZ_MEMBER 512u          /* per member: zip headers, .npy header */

uint64_t srv_board_result_cap(const enpu_wire_output *want, int n)
{
	uint64_t cap = NPZ_SLACK;

	for (int i = 0; i < n; i++) {
		uint64_t b = 4;     /* float32 */
		for (int d = 0; d < want[i].ndim; d++) {
			if (want[i].dim[d] && b > UINT64_MAX / 4 / (uint64_t)want[i].dim[d])
				return UINT64_MAX / 2;
			b *= (uint64_t)want[i].dim[d];
		}
		if (cap > UINT64_MAX / 2 - b)
			return UINT64_MAX / 2;
		cap += b + NPZ_MEMBER + 2 * strlen(want[i].name);
	}
	return cap;
}

static void shape_str(const long long *dim, int ndim, char *out, size_t cap)
{
	size_t k = (size_t)snprintf(out, cap, "(");

	for (int d = 0; d < ndim && k < cap; d++)
		k += (size_t)snprintf(out + k, cap - k, "%s%lld", d ? ", " : "", dim[d]);
	if (k < cap)
		snprintf(out + k, cap - k, ")");
}

int srv_board_check_result(const enpu_wire_output *want, int n, const enpu_tlist *got,
			   const char *board, enpu_err *e)
{
	char ws[160], gs[160];
	long long gd[ENPU_MAX_DIMS];

	if (got->n != (size_t)n)
		return enpu_fail(e, ENPU_E_BOARD_FAULT, board, NULL, "board '%s' returned a result "
				 "of %zu tensors; the artifact has %d outputs", board, got->n, n);
	for (int i = 0; i < n; i++) {
		const enpu_tensor *t = enpu_tlist_find(got, want[i].name);
		int same;

		if (!t)
			return enpu_fail(e, ENPU_E_BOARD_FAULT, board, NULL, "board '%s' returned a "
					 "result without output '%.100s' (it has '%.100s')", board,
					 want[i].name, got->items[i].name);
		enpu_dtype wdt = want[i].dtype ? (enpu_dtype)want[i].dtype : ENPU_DT_F32;

		same = t->dtype == wdt && t->shape.ndim == want[i].ndim;
		for (int d = 0; d < t->shape.ndim && d < ENPU_MAX_DIMS; d++) {
			gd[d] = (long long)t->shape.dim[d];
			same = same && d < want[i].ndim && gd[d] == want[i].dim[d];
		}
		if (!same) {
			shape_str(want[i].dim, want[i].ndim, ws, sizeof ws);
			shape_str(gd, t->shape.ndim, gs, sizeof gs);
			return enpu_fail(e, ENPU_E_BOARD_FAULT, board, NULL, "board '%s' returned output "
					 "'%.100s' of shape %s %s; the artifact's is %s %s", board,
					 want[i].name, gs, enpu_dtype_name(t->dtype), ws,
					 enpu_dtype_name(wdt));
		}
	}
	return 0;
}

int srv_board_check_claim(const enpu_wire_output *want, int n, const enpu_wire_job *wj,
			  const char *board, enpu_err *e)
{
	int same = wj->n_outputs == n;

	for (int i = 0; same && i < n; i++) {
		same = !strcmp(wj->outputs[i].name, want[i].name) && wj->outputs[i].ndim == want[i].ndim;
		for (int d = 0; same && d < want[i].ndim; d++)
			same = wj->outputs[i].dim[d] == want[i].dim[d];
	}
	if (same)
		return 0;
	return enpu_fail(e, ENPU_E_BOARD_FAULT, board, NULL, "board '%s' returned a job whose "
			 "outputs are not the artifact's", board);
}

json_object *srv_board_outputs_json(const enpu_wire_output *want, int n)
{
	json_object *arr = json_object_new_array();

	for (int i = 0; i < n; i++) {
		json_object *o = json_object_new_object(), *sh = json_object_new_array();
		for (int d = 0; d < want[i].ndim; d++)
			json_object_array_add(sh, json_object_new_int64(want[i].dim[d]));
		json_object_object_add(o, F_NAME, json_object_new_string(want[i].name));
		json_object_object_add(o, F_SHAPE, sh);
		json_object_array_add(arr, o);
	}
	return arr;
}

int srv_board_is_model(enpu_code c)
{
	/* what the model and its input can make fail on any machine: sizes,
	 * the spec and its weights, the npz files, the input */
	return c == ENPU_E_LIMIT || (c >= ENPU_E_YAML && c <= ENPU_E_INPUT_EXTRA);
}

srv_rkind srv_board_wrap(const enpu_err *be, const char *board, const char *what, enpu_err *e,
			 json_object **data)
{
	const enpu_code_info *ci = enpu_code_info_of(be->code);

	if (data)
		*data = NULL;
	if (srv_board_is_model(be->code)) {
		*e = *be;
		return SRV_RUN_MODEL;
	}
	enpu_fail(e, ENPU_E_BOARD_FAULT, board, NULL, "board '%s' returned an error of its own "
		  "(%s, %s): %s", board, ci->id, ci->title, what);
	if (data) {
		*data = json_object_new_object();
		json_object_object_add(*data, F_BOARD, json_object_new_string(board));
		json_object_object_add(*data, "code", json_object_new_string(ci->id));
		json_object_object_add(*data, "message", enpu_wire_text(be->message));
	}
	return SRV_RUN_FAULT;
}

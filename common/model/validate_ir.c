/* validate_ir.c: the validator's dtype rules of op inputs (spec_int.h).
 * Each op's row says the dtypes of its inputs and output (ops.h
 * enpu_typerule; float32 when it has none): the float32 ops take float32
 * only, the quantised ops of spec v3 their integer tensors, and the inputs
 * a row marks as int64 weights (gather's indices) must be weights. */
#include <stdio.h>
#include "spec_int.h"
#include "ir.h"

int enpu_check_input_dtype(const enpu_spec *s, const enpu_sop *op, const enpu_opdef *d, int k,
			   const enpu_irtensor *t, enpu_err *e)
{
	const enpu_sstr *in = &op->in[k];
	int want64 = k < 32 && (d->int64_in >> k & 1);
	char at[600];

	if (!want64 || (t->dtype == ENPU_DT_I64 && t->kind == ENPU_TK_WEIGHT))
		return 0;
	enpu_spec_where(s, in->line, in->col, at, sizeof(at));
	return enpu_fail(e, ENPU_E_DTYPE, at, "declare the indices as a weight with dtype: int64",
			 "op '%.64s' (%s) reads '%.64s' as input %d: it must be an int64 "
			 "weight, not a %s %s", op->name.s, d->name, t->name, k + 1,
			 enpu_dtype_name(t->dtype),
			 t->kind == ENPU_TK_WEIGHT ? "weight" : "tensor");
}

int enpu_check_op_types(const enpu_spec *s, const enpu_sop *op, const enpu_opdef *d,
			const enpu_graph *g, const int *in, enpu_dtype *out, enpu_err *e)
{
	enpu_dtype dt[ENPU_MAX_OP_INPUTS];
	const char *names[ENPU_MAX_OP_INPUTS];
	char why[400], at[600];
	const char *fix;
	int bad, n = op->n_in < ENPU_MAX_OP_INPUTS ? op->n_in : ENPU_MAX_OP_INPUTS;

	for (int k = 0; k < n; k++) {
		dt[k] = g->tensors[in[k]].dtype;
		names[k] = g->tensors[in[k]].name;
	}
	if (enpu_op_out_dtype(d, dt, n, names, out, &bad, why, sizeof(why)) == 0)
		return 0;
	enpu_spec_where(s, op->in[bad].line, op->in[bad].col, at, sizeof(at));
	if (d->types)
		fix = "give each input a dtype of the op's type rule (docs/spec-format.md)";
	else if (dt[bad] == ENPU_DT_I64)
		fix = "int64 weights can only be gather's indices";
	else
		fix = "float ops take float32: dequantize_linear an integer tensor first (eulernpu: 3)";
	return enpu_fail(e, ENPU_E_DTYPE, at, fix, "op '%.64s' (%s) %s", op->name.s, d->name, why);
}

/* validate_ir.c: the validator's dtype rule of op inputs (spec_int.h).
 * Every tensor an op reads is float32, except the inputs the op's row marks
 * as int64 weights (gather's indices); int64 reaches nothing else. */
#include "spec_int.h"
#include "ir.h"

int enpu_check_input_dtype(const enpu_spec *s, const enpu_sop *op, const enpu_opdef *d, int k,
			   const enpu_irtensor *t, enpu_err *e)
{
	const enpu_sstr *in = &op->in[k];
	int want64 = k < 32 && (d->int64_in >> k & 1);
	char at[600];

	if (want64 ? (t->dtype == ENPU_DT_I64 && t->kind == ENPU_TK_WEIGHT) : t->dtype == ENPU_DT_F32)
		return 0;
	enpu_spec_where(s, in->line, in->col, at, sizeof(at));
	if (want64)
		return enpu_fail(e, ENPU_E_DTYPE, at, "declare the indices as a weight with dtype: int64",
				 "op '%.64s' (%s) reads '%.64s' as input %d: it must be an int64 "
				 "weight, not a %s %s", op->name.s, d->name, t->name, k + 1,
				 enpu_dtype_name(t->dtype),
				 t->kind == ENPU_TK_WEIGHT ? "weight" : "tensor");
	return enpu_fail(e, ENPU_E_DTYPE, at, "int64 weights can only be gather's indices",
			 "op '%.64s' (%s) reads '%.64s' (%s) as input %d, which must be float32",
			 op->name.s, d->name, t->name, enpu_dtype_name(t->dtype), k + 1);
}

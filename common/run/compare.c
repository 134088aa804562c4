/* compare.c: enpu_compare, a result against golden values. Both files must
 * hold the same keys with the same shapes and dtypes; float32 elements pass
 * within atol + rtol * |expected| (computed in double), or bit for bit with
 * exact; integer elements (spec v3's int8, uint8, int32; int64) only when
 * equal, in either mode. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "enpu.h"
#include "npz.h"

/* The NumPy index tuple of flat index i in shape s: "(0, 3)", "(3,)", "()". */
static void index_str(const enpu_shape *s, uint64_t i, char *buf, size_t cap)
{
	int64_t idx[ENPU_MAX_DIMS];
	size_t used = 0;

	for (int d = s->ndim - 1; d >= 0; d--) {
		uint64_t n = s->dim[d] > 0 ? (uint64_t)s->dim[d] : 1;
		idx[d] = (int64_t)(i % n);
		i /= n;
	}
	used += (size_t)snprintf(buf, cap, "(");
	for (int d = 0; d < s->ndim && used < cap; d++)
		used += (size_t)snprintf(buf + used, cap - used, "%s%lld", d ? ", " : "",
					 (long long)idx[d]);
	if (used < cap)
		snprintf(buf + used, cap - used, "%s)", s->ndim == 1 ? "," : "");
}

/* Both files hold the same keys: a golden tensor the result lacks, or a
 * tensor of the result the golden lacks, is ENPU_E_CMP_KEY naming it. */
static int check_keys(const enpu_tlist *got, const char *got_label, const enpu_tlist *exp,
		      const char *exp_label, enpu_err *e)
{
	char gk[256], ek[256];

	/* expected's keys first: a missing golden tensor is the likelier mistake */
	for (int side = 0; side < 2; side++) {
		const enpu_tlist *a = side ? got : exp, *b = side ? exp : got;

		for (size_t i = 0; i < a->n; i++) {
			if (enpu_tlist_find(b, a->items[i].name))
				continue;
			enpu_tlist_names(got, gk, sizeof(gk));
			enpu_tlist_names(exp, ek, sizeof(ek));
			return enpu_fail(e, ENPU_E_CMP_KEY, side ? exp_label : got_label,
					 "compare results of the same model: the keys must match",
					 side ? "the result has tensor '%s' that the golden lacks (got has [%s], expected has [%s])"
					      : "the result lacks golden tensor '%s' (got has [%s], expected has [%s])",
					 a->items[i].name, gk, ek);
		}
	}
	return 0;
}

/* Same dtype and shape; *n the element count. */
static int check_like(const enpu_tensor *g, const char *got_label, const enpu_tensor *x,
		      const char *exp_label, uint64_t *n, enpu_err *e)
{
	char s1[96], s2[96];

	if (g->dtype != x->dtype)
		return enpu_fail(e, ENPU_E_CMP_DTYPE, got_label, NULL,
				 "tensor '%s': got %s, expected %s", x->name,
				 enpu_dtype_name(g->dtype), enpu_dtype_name(x->dtype));
	if (!enpu_shape_eq(&g->shape, &x->shape))
		return enpu_fail(e, ENPU_E_CMP_SHAPE, got_label, NULL,
				 "tensor '%s': got shape %s, expected %s", x->name,
				 enpu_shape_pystr(&g->shape, s1, sizeof(s1)),
				 enpu_shape_pystr(&x->shape, s2, sizeof(s2)));
	if (enpu_shape_numel(&x->shape, n) < 0)
		return enpu_fail(e, ENPU_E_CMP_SHAPE, exp_label, NULL,
				 "tensor '%s' has an invalid shape", x->name);
	return 0;
}

/* The worst offender so far: the largest excess over its tolerance. */
typedef struct worst {
	const enpu_tensor *t;
	uint64_t i;
	double tol;
} worst;

/* element j of an integer tensor, as a double (exact but for int64s past
 * 2^53, which then compare as their nearest doubles: equal bytes always
 * pass, and the message rounds) */
static double ival(const enpu_tensor *t, uint64_t j)
{
	switch (t->dtype) {
	case ENPU_DT_I8:
		return t->i8[j];
	case ENPU_DT_U8:
		return t->u8[j];
	case ENPU_DT_I32:
		return t->i32[j];
	case ENPU_DT_I64:
		return (double)t->i64[j];
	default:
		return 0;
	}
}

/* The worst offender so far, by its excess over tol */
static void note_bad(const enpu_tensor *g, uint64_t j, double d, double tol, double gv, double xv,
		     worst *w, enpu_cmp_result *res)
{
	if (!w->t || d - tol > res->diff - w->tol) {
		w->t = g;
		w->i = j;
		w->tol = tol;
		res->diff = d;
		res->got = gv;
		res->expected = xv;
	}
}

/* Every element of integer tensor g against x: equal, in every mode. */
static void compare_ints(const enpu_tensor *g, const enpu_tensor *x, uint64_t n,
			 worst *w, enpu_cmp_result *res)
{
	for (uint64_t j = 0; j < n; j++) {
		double gv = ival(g, j), xv = ival(x, j), d = fabs(gv - xv);
		int bad = g->dtype == ENPU_DT_I64 ? g->i64[j] != x->i64[j] : gv != xv;

		if (d > res->max_abs_diff)
			res->max_abs_diff = d;
		if (bad)
			note_bad(g, j, d, 0, gv, xv, w, res);
	}
}

/* Every element of g against x (same shape, n elements). */
static void compare_tensor(const enpu_tensor *g, const enpu_tensor *x, uint64_t n,
			   const enpu_cmp_opts *o, worst *w, enpu_cmp_result *res)
{
	if (x->dtype != ENPU_DT_F32) {
		compare_ints(g, x, n, w, res);
		return;
	}
	for (uint64_t j = 0; j < n; j++) {
		float gv = g->data[j], xv = x->data[j];
		double d = fabs((double)gv - (double)xv), tol;
		int bad;

		if (isnan(gv) || isnan(xv)) {
			bad = !(isnan(gv) && isnan(xv));
			d = bad ? INFINITY : 0;
			tol = 0;
		} else if (isinf(gv) || isinf(xv)) {
			bad = gv != xv;
			d = bad ? INFINITY : 0;
			tol = 0;
		} else {
			tol = o->atol + o->rtol * fabs((double)xv);
			bad = d > tol;
		}
		if (o->exact) {
			bad = memcmp(&gv, &xv, sizeof(float)) != 0;
			tol = 0;
		}
		if (!isnan(d) && d > res->max_abs_diff)
			res->max_abs_diff = d;
		if (bad)
			note_bad(g, j, d, tol, gv, xv, w, res);
	}
}

/* A float for a message: NaN, +Inf, -Inf or %.8g. */
static const char *fstr(double v, char *buf, size_t cap)
{
	if (isnan(v))
		return "NaN";
	if (isinf(v))
		return v > 0 ? "+Inf" : "-Inf";
	snprintf(buf, cap, "%.8g", v);
	return buf;
}

/* ENPU_E_CMP_DIFF for the worst offender. A NaN or an infinity on either
 * side has no tolerance: the message says which values differ. */
static void fail_worst(const enpu_cmp_result *res, const enpu_tensor *t, const enpu_cmp_opts *o,
		       double tol, const char *got_label, enpu_err *e)
{
	char g[32], x[32];

	if (t->dtype != ENPU_DT_F32)
		enpu_fail(e, ENPU_E_CMP_DIFF, got_label, NULL,
			  "tensor '%s' differs at %s: got %.17g, expected %.17g (%s: integers must be equal)",
			  res->tensor, res->index, res->got, res->expected, enpu_dtype_name(t->dtype));
	else if (o->exact)
		enpu_fail(e, ENPU_E_CMP_DIFF, got_label, NULL,
			  "tensor '%s' differs at %s: got %.9g, expected %.9g (exact comparison: the bits differ)",
			  res->tensor, res->index, (double)res->got, (double)res->expected);
	else if (!isfinite(res->got) || !isfinite(res->expected))
		enpu_fail(e, ENPU_E_CMP_DIFF, got_label, NULL,
			  "tensor '%s' differs at %s: got %s where the golden is %s (NaN and infinities must match exactly)",
			  res->tensor, res->index, fstr(res->got, g, sizeof(g)),
			  fstr(res->expected, x, sizeof(x)));
	else
		enpu_fail(e, ENPU_E_CMP_DIFF, got_label, NULL,
			  "tensor '%s' differs at %s: got %.8g, expected %.8g, |diff| %.4g > tol %.4g",
			  res->tensor, res->index, (double)res->got, (double)res->expected,
			  res->diff, tol);
}

int enpu_compare(const char *got_path, const char *got_label,
		 const char *exp_path, const char *exp_label,
		 const enpu_cmp_opts *o, const enpu_limits *lim,
		 enpu_cmp_result *res, enpu_err *e)
{
	enpu_tlist got = ENPU_TLIST_INIT, exp = ENPU_TLIST_INIT;
	enpu_cmp_opts dflt = {1e-5, 0, 0};
	worst w = {NULL, 0, 0};
	int rc = -1;

	if (!o)
		o = &dflt;
	if (!lim)
		lim = enpu_limits_default();
	if (!got_label)
		got_label = "got.npz";
	if (!exp_label)
		exp_label = "expected.npz";
	memset(res, 0, sizeof(*res));
	if (enpu_npz_read(got_path, got_label, lim, &got, e) < 0 ||
	    enpu_npz_read(exp_path, exp_label, lim, &exp, e) < 0 ||
	    check_keys(&got, got_label, &exp, exp_label, e) < 0)
		goto out;
	for (size_t i = 0; i < exp.n; i++) {
		const enpu_tensor *x = &exp.items[i], *g = enpu_tlist_find(&got, x->name);
		uint64_t n;

		if (check_like(g, got_label, x, exp_label, &n, e) < 0)
			goto out;
		res->n_tensors++;
		compare_tensor(g, x, n, o, &w, res);
	}
	res->ok = w.t == NULL;
	if (!res->ok) {
		snprintf(res->tensor, sizeof(res->tensor), "%s", w.t->name);
		index_str(&w.t->shape, w.i, res->index, sizeof(res->index));
		fail_worst(res, w.t, o, w.tol, got_label, e);
	}
	rc = 0;
out:
	enpu_tlist_free(&got);
	enpu_tlist_free(&exp);
	return rc;
}

/* compare.c: enpu_compare, a result against golden values. Both files must
 * hold the same keys with the same shapes and dtypes; elements pass within
 * atol + rtol * |expected| (computed in double), or bit for bit with exact. */
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

int enpu_compare(const char *got_path, const char *got_label,
		 const char *exp_path, const char *exp_label,
		 const enpu_cmp_opts *o, const enpu_limits *lim,
		 enpu_cmp_result *res, enpu_err *e)
{
	enpu_tlist got = ENPU_TLIST_INIT, exp = ENPU_TLIST_INIT;
	enpu_cmp_opts dflt = {1e-5, 0, 0};
	char gk[256], ek[256], s1[96], s2[96];
	const enpu_tensor *worst_t = NULL;
	uint64_t worst_i = 0;
	double worst_tol = 0;
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
	    enpu_npz_read(exp_path, exp_label, lim, &exp, e) < 0)
		goto out;

	/* keys both ways, expected's order first */
	for (int side = 0; side < 2; side++) {
		const enpu_tlist *a = side ? &got : &exp, *b = side ? &exp : &got;
		for (size_t i = 0; i < a->n; i++) {
			if (enpu_tlist_find(b, a->items[i].name))
				continue;
			enpu_tlist_names(&got, gk, sizeof(gk));
			enpu_tlist_names(&exp, ek, sizeof(ek));
			enpu_fail(e, ENPU_E_CMP_KEY, side ? exp_label : got_label,
				  "compare results of the same model: the keys must match",
				  "golden tensor key not found: '%s' (got has [%s], expected has [%s])",
				  a->items[i].name, gk, ek);
			goto out;
		}
	}

	for (size_t i = 0; i < exp.n; i++) {
		const enpu_tensor *x = &exp.items[i], *g = enpu_tlist_find(&got, x->name);
		uint64_t n;

		if (g->dtype != x->dtype) {
			enpu_fail(e, ENPU_E_CMP_DTYPE, got_label, NULL,
				  "tensor '%s': got %s, expected %s", x->name,
				  enpu_dtype_name(g->dtype), enpu_dtype_name(x->dtype));
			goto out;
		}
		if (!enpu_shape_eq(&g->shape, &x->shape)) {
			enpu_fail(e, ENPU_E_CMP_SHAPE, got_label, NULL,
				  "tensor '%s': got shape %s, expected %s", x->name,
				  enpu_shape_pystr(&g->shape, s1, sizeof(s1)),
				  enpu_shape_pystr(&x->shape, s2, sizeof(s2)));
			goto out;
		}
		if (enpu_shape_numel(&x->shape, &n) < 0) {
			enpu_fail(e, ENPU_E_CMP_SHAPE, exp_label, NULL, "tensor '%s' has an invalid shape",
				  x->name);
			goto out;
		}
		res->n_tensors++;
		for (uint64_t j = 0; j < n; j++) {
			float gv = g->data[j], xv = x->data[j];
			double d = fabs((double)gv - (double)xv), tol, viol;
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
			if (!bad)
				continue;
			/* the worst offender: the largest excess over its tolerance */
			viol = d - tol;
			if (!worst_t || viol > res->diff - worst_tol) {
				worst_t = g;
				worst_i = j;
				worst_tol = tol;
				res->diff = d;
				res->got = gv;
				res->expected = xv;
			}
		}
	}
	res->ok = worst_t == NULL;
	if (!res->ok) {
		snprintf(res->tensor, sizeof(res->tensor), "%s", worst_t->name);
		index_str(&worst_t->shape, worst_i, res->index, sizeof(res->index));
		if (o->exact)
			enpu_fail(e, ENPU_E_CMP_DIFF, got_label, NULL,
				  "tensor '%s' differs at %s: got %.9g, expected %.9g (exact comparison: the bits differ)",
				  res->tensor, res->index, (double)res->got, (double)res->expected);
		else
			enpu_fail(e, ENPU_E_CMP_DIFF, got_label, NULL,
				  "tensor '%s' differs at %s: got %.8g, expected %.8g, |diff| %.4g > tol %.4g",
				  res->tensor, res->index, (double)res->got, (double)res->expected,
				  res->diff, worst_tol);
	}
	rc = 0;
out:
	enpu_tlist_free(&got);
	enpu_tlist_free(&exp);
	return rc;
}

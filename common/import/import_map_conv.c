/* import_map_conv.c: the mappings of ONNX's convolutions and pools (Conv,
 * ConvTranspose, MaxPool, AveragePool, GlobalMaxPool; spec v3's
 * ConvInteger and QLinearConv) onto spec ops; the table that names them is
 * in import_map.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "import_int.h"
#include "shape.h"

/* auto_pad into explicit pads [b1, b2, .., e1, e2, ..] for nsp spatial dims
 * of x (dims 2..), kernel k, strides s, dilations d: 0, or 1 (imp_bad). */
static int auto_pads(imp_ctx *c, const enpu_onnx_node *n, const enpu_shape *x, int nsp,
		     const int64_t *k, const int64_t *s, const int64_t *d, int64_t *pads)
{
	const char *ap = oa_str(n, "auto_pad", "NOTSET");

	if (!strcmp(ap, "NOTSET"))
		return 0;
	for (int i = 0; i < nsp; i++) {
		int64_t in = x->dim[2 + i], outd = (in + s[i] - 1) / s[i];
		int64_t tot = (outd - 1) * s[i] + (k[i] - 1) * d[i] + 1 - in;
		if (!strcmp(ap, "VALID") || tot < 0)
			tot = 0;
		else if (strcmp(ap, "SAME_UPPER") && strcmp(ap, "SAME_LOWER"))
			return imp_bad(c, n, "auto_pad %.20s", ap);
		if (!strcmp(ap, "VALID"))
			pads[i] = pads[i + nsp] = 0;
		else {
			pads[i] = !strcmp(ap, "SAME_UPPER") ? tot / 2 : tot - tot / 2;
			pads[i + nsp] = tot - pads[i];
		}
	}
	return 0;
}

/* kernel, strides, dilations, pads of a conv or pool node with nsp spatial
 * dims (kernel from kw's dims when given). */
static int window(imp_ctx *c, const enpu_onnx_node *n, const enpu_shape *x, const enpu_shape *kw,
		  int nsp, int64_t *k, int64_t *s, int64_t *d, int64_t *p)
{
	int nk = oa_ints(n, "kernel_shape", k, 2);

	if (kw)
		for (int i = 0; i < nsp; i++)
			k[i] = kw->dim[2 + i];
	else if (nk != nsp)
		return imp_bad(c, n, "kernel_shape of %d dims for %d spatial dims", nk, nsp);
	for (int i = 0; i < nsp; i++)
		s[i] = d[i] = 1, p[i] = p[i + nsp] = 0;
	if ((oa_ints(n, "strides", s, 2) >= 0 && oa_ints(n, "strides", s, 2) != nsp) ||
	    (oa_ints(n, "dilations", d, 2) >= 0 && oa_ints(n, "dilations", d, 2) != nsp) ||
	    (oa_ints(n, "pads", p, 4) >= 0 && oa_ints(n, "pads", p, 4) != 2 * nsp))
		return imp_bad(c, n, "strides, dilations or pads of another length");
	return auto_pads(c, n, x, nsp, k, s, d, p);
}

/* conv attributes of node n (x value xi, weight wi) with nsp spatial dims
 * into at: 0, or 1 (imp_bad) */
static int conv_attrs(imp_ctx *c, const enpu_onnx_node *n, int xi, int wi, int nsp, imp_attrs *at)
{
	int64_t k[2], s[2], d[2], p[4];

	if (window(c, n, &c->v[xi].shape, &c->v[wi].shape, nsp, k, s, d, p))
		return 1;
	ia_ints(at, "strides", s, nsp);
	ia_ints(at, "pads", p, 2 * nsp);
	if (d[0] != 1 || (nsp == 2 && d[1] != 1))
		ia_ints(at, "dilations", d, nsp);
	if (oa_int(n, "group", 1) != 1)
		ia_int(at, "group", oa_int(n, "group", 1));
	return 0;
}

int m_conv(imp_ctx *c, const enpu_onnx_node *n)
{
	imp_attrs at = {0};
	int in[3], nin = imp_ins(c, n, in, 3), nsp;

	if (in[1] < 0 || in[0] < 0)
		return imp_bad(c, n, "no weight");
	nsp = c->v[in[1]].shape.ndim - 2;
	if (nsp != 1 && nsp != 2)
		return imp_bad(c, n, "%d spatial dims (conv1d and conv2d take 1 and 2)", nsp);
	if (conv_attrs(c, n, in[0], in[1], nsp, &at))
		return 1;
	return imp_emit1(c, n, nsp == 1 ? "conv1d" : "conv2d", in, nin > 2 && in[2] >= 0 ? 3 : 2, &at);
}

/* ConvInteger (x, w, [x_zero_point], [w_zero_point]) -> conv_integer and
 * QLinearConv (x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, [B]) ->
 * qlinear_conv: 2-D only */
int m_qconv(imp_ctx *c, const enpu_onnx_node *n)
{
	imp_attrs at = {0};
	int q = n->op_type[0] == 'Q', in[9], nin = imp_ins(c, n, in, 9), wi = q ? 3 : 1;

	while (nin > 0 && in[nin - 1] < 0)
		nin--;
	for (int k = 0; k < nin; k++)
		if (in[k] < 0)
			return imp_bad(c, n, "input %d absent while a later one is given", k + 1);
	if (nin <= wi || c->v[in[wi]].shape.ndim != 4 || c->v[in[0]].shape.ndim != 4)
		return imp_bad(c, n, "not 2-D (%s)", q ? "qlinear_conv" : "conv_integer");
	if (conv_attrs(c, n, in[0], in[wi], 2, &at))
		return 1;
	return imp_emit1(c, n, q ? "qlinear_conv" : "conv_integer", in, nin, &at);
}

/* kernel, strides, pads, count_include_pad, ceil_mode, dilations of pool
 * node n (input 0 its x) into at, its spatial dims in *nsp: 0, or 1
 * (imp_bad) */
int imp_pool_attrs(imp_ctx *c, const enpu_onnx_node *n, int avg, imp_attrs *at, int *nsp_out)
{
	int in[1], nsp;
	int64_t k[2], s[2], d[2], p[4];

	imp_ins(c, n, in, 1);
	nsp = *nsp_out = c->v[in[0]].shape.ndim - 2;
	if (nsp != 1 && nsp != 2)
		return imp_bad(c, n, "%d spatial dims (pools take 1 and 2)", nsp);
	if (!avg && n->n_out > 1 && n->out[1][0])
		return imp_bad(c, n, "the Indices output");
	if (oa_int(n, "storage_order", 0))
		return imp_bad(c, n, "storage_order 1");
	if (window(c, n, &c->v[in[0]].shape, NULL, nsp, k, s, d, p))
		return 1;
	ia_ints(at, "kernel", k, nsp);
	ia_ints(at, "strides", s, nsp);
	ia_ints(at, "pads", p, 2 * nsp);
	if (avg && oa_int(n, "count_include_pad", 0))
		ia_int(at, "count_include_pad", 1);
	if (oa_int(n, "ceil_mode", 0))
		ia_int(at, "ceil_mode", 1);
	if (d[0] != 1 || (nsp == 2 && d[1] != 1)) {
		if (avg)
			return imp_bad(c, n, "dilations on AveragePool");
		ia_ints(at, "dilations", d, nsp);
	}
	return 0;
}

int m_pool(imp_ctx *c, const enpu_onnx_node *n)
{
	imp_attrs at = {0};
	int in[1], nsp, avg = n->op_type[0] == 'A';

	imp_ins(c, n, in, 1);
	if (imp_pool_attrs(c, n, avg, &at, &nsp))
		return 1;
	return imp_emit1(c, n, avg ? nsp == 1 ? "avgpool1d" : "avgpool2d" :
		     nsp == 1 ? "maxpool1d" : "maxpool2d", in, 1, &at);
}

/* ONNX Runtime's com.microsoft QLinearAdd, QLinearMul (A, A_scale, A_zp, B,
 * B_scale, B_zp, C_scale, C_zp), QLinearGlobalAveragePool and
 * QLinearAveragePool (X, X_scale, X_zp, Y_scale, Y_zp; NCHW) and
 * QLinearConcat (Y_scale, Y_zp, then X, X_scale, X_zp per input): one
 * spec op each; every zero point given */
int m_qlinear_ms(imp_ctx *c, const enpu_onnx_node *n)
{
	imp_attrs at = {0};
	int in[2 + 3 * ENPU_QCONCAT_MAX], nin = imp_ins(c, n, in, 2 + 3 * ENPU_QCONCAT_MAX), nsp;
	const char *t = n->op_type + 7, *op;

	if (strcmp(n->domain, "com.microsoft"))
		return imp_bad(c, n, "op %.32s of domain '%.40s' (ONNX Runtime's is com.microsoft)",
			       n->op_type, n->domain);
	if (nin > 2 + 3 * ENPU_QCONCAT_MAX)
		return imp_bad(c, n, "more than %d inputs to join", ENPU_QCONCAT_MAX);
	for (int k = 0; k < nin; k++)
		if (in[k] < 0)
			return imp_bad(c, n, "input %d absent (a zero point the spec op needs)", k + 1);
	if (!strcmp(t, "Add") || !strcmp(t, "Mul"))
		op = t[0] == 'A' ? "qlinear_add" : "qlinear_mul";
	else if (!strcmp(t, "GlobalAveragePool")) {
		if (oa_int(n, "channels_last", 0))
			return imp_bad(c, n, "channels_last (the spec op is NCHW)");
		op = "qlinear_global_avgpool";
	} else if (!strcmp(t, "AveragePool")) {
		if (oa_int(n, "channels_last", 0))
			return imp_bad(c, n, "channels_last (the spec op is NCHW)");
		if (imp_pool_attrs(c, n, 1, &at, &nsp))
			return 1;
		if (nsp != 2)
			return imp_bad(c, n, "%d spatial dims (qlinear_avgpool takes 2)", nsp);
		op = "qlinear_avgpool";
	} else if (!strcmp(t, "Concat")) {
		ia_int(&at, "axis", oa_int(n, "axis", 0));
		op = "qlinear_concat";
	} else {
		return imp_bad(c, n, "op %.32s is not imported", n->op_type);
	}
	return imp_emit1(c, n, op, in, nin, &at);
}

int m_global_max(imp_ctx *c, const enpu_onnx_node *n)
{
	imp_attrs at = {0};
	int in[1];
	int64_t ax[ENPU_MAX_DIMS];

	imp_ins(c, n, in, 1);
	for (int k = 2; k < c->v[in[0]].shape.ndim; k++)
		ax[k - 2] = k;
	ia_ints(&at, "axes", ax, c->v[in[0]].shape.ndim - 2);
	ia_int(&at, "keepdims", 1);
	return imp_emit1(c, n, "reduce_max", in, 1, &at);
}

/* ConvTranspose: output_shape becomes pads (ONNX's formula). */
int m_convt(imp_ctx *c, const enpu_onnx_node *n)
{
	imp_attrs at = {0};
	int in[3], nin = imp_ins(c, n, in, 3);
	int64_t k[2], s[2], d[2], p[4], op[2] = {0, 0}, os[4];
	const char *ap = oa_str(n, "auto_pad", "NOTSET");

	if (in[1] < 0 || c->v[in[1]].shape.ndim != 4 || c->v[in[0]].shape.ndim != 4)
		return imp_bad(c, n, "not 2-D (conv_transpose2d)");
	for (int i = 0; i < 2; i++)
		k[i] = c->v[in[1]].shape.dim[2 + i], s[i] = d[i] = 1, p[i] = p[i + 2] = 0;
	oa_ints(n, "strides", s, 2);
	oa_ints(n, "dilations", d, 2);
	oa_ints(n, "pads", p, 4);
	oa_ints(n, "output_padding", op, 2);
	int nos = oa_ints(n, "output_shape", os, 4);
	if (nos >= 2 || strcmp(ap, "NOTSET")) {
		for (int i = 0; i < 2; i++) {
			int64_t in_i = c->v[in[0]].shape.dim[2 + i];
			int64_t want = nos >= 2 ? os[nos - 2 + i] : in_i * s[i];
			int64_t tot = s[i] * (in_i - 1) + op[i] + (k[i] - 1) * d[i] + 1 - want;
			if (tot < 0) {   /* a larger output: the rest is output_padding */
				op[i] -= tot;
				p[i] = p[i + 2] = 0;
				continue;
			}
			if (!strcmp(ap, "SAME_UPPER"))
				p[i] = tot / 2, p[i + 2] = tot - tot / 2;
			else
				p[i] = tot - tot / 2, p[i + 2] = tot / 2;
		}
	}
	ia_ints(&at, "strides", s, 2);
	ia_ints(&at, "pads", p, 4);
	ia_ints(&at, "output_padding", op, 2);
	ia_ints(&at, "dilations", d, 2);
	ia_int(&at, "group", oa_int(n, "group", 1));
	return imp_emit1(c, n, "conv_transpose2d", in, nin > 2 && in[2] >= 0 ? 3 : 2, &at);
}


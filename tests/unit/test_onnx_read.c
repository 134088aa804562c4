/* test_onnx_read.c: tests for common/import/onnx_read.c on real models from
 * Debian's libonnx-testdata (ONNX 1.12's node tests, whose inputs and
 * attributes are fixed by ONNX's own generator: test_conv_with_strides_
 * padding is x = arange(35) as (1,1,7,5), W = ones (1,1,3,3), kernel 3x3,
 * pads 1, strides 2), plus hostile bytes: truncated and bit-flipped models
 * give an error and never crash (run under SAN=1 too). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "buf.h"
#include "onnx.pb-c.h"
#include "onnx_read.h"

#define NODE "/usr/share/libonnx-testdata/data/node/"
#define TORCH "/usr/share/libonnx-testdata/data/pytorch-converted/"

static enpu_buf load(const char *path)
{
	enpu_buf b = ENPU_BUF_INIT;
	enpu_err e = {0};

	cr_assert_eq(enpu_read_file(path, 1u << 28, &b, &e), 0,
		     "cannot read %s: %s (install libonnx-testdata: make deps)", path, e.message);
	return b;
}

static enpu_onnx_model *model(const char *path)
{
	enpu_buf b = load(path);
	enpu_onnx_model *m = NULL;
	enpu_err e = {0};

	cr_assert_eq(enpu_onnx_read(b.data, b.len, path, NULL, &m, &e), 0, "%s: %s", path, e.message);
	enpu_buf_free(&b);
	return m;
}

static void assert_ints(const enpu_onnx_attr *a, const int64_t *want, size_t n)
{
	cr_assert(a);
	cr_assert_eq(a->type, ENPU_ONNX_A_INTS);
	cr_assert_eq(a->n, n);
	for (size_t k = 0; k < n; k++)
		cr_assert_eq(a->ints[k], want[k], "%s[%zu]", a->name, k);
}

Test(onnx_read, conv_with_strides_padding)
{
	enpu_onnx_model *m = model(NODE "test_conv_with_strides_padding/model.onnx");
	static const int64_t k33[] = {3, 3}, p1[] = {1, 1, 1, 1}, s2[] = {2, 2};
	static const int64_t xs[] = {1, 1, 7, 5}, ws[] = {1, 1, 3, 3}, ys[] = {1, 1, 4, 3};

	cr_assert_eq(m->n_opset, 1);
	cr_assert_str_eq(m->opset[0].domain, "");
	cr_assert_geq(m->opset[0].version, 1);
	cr_assert_eq(m->n_node, 1);
	cr_assert_str_eq(m->node[0].op_type, "Conv");
	cr_assert_eq(m->node[0].n_in, 2);
	cr_assert_str_eq(m->node[0].in[0], "x");
	cr_assert_str_eq(m->node[0].in[1], "W");
	cr_assert_str_eq(m->node[0].out[0], "y");
	assert_ints(enpu_onnx_attr_find(&m->node[0], "kernel_shape"), k33, 2);
	assert_ints(enpu_onnx_attr_find(&m->node[0], "pads"), p1, 4);
	assert_ints(enpu_onnx_attr_find(&m->node[0], "strides"), s2, 2);
	cr_assert_null(enpu_onnx_attr_find(&m->node[0], "dilations"));
	cr_assert_eq(m->n_in, 2);
	cr_assert_eq(m->n_out, 1);
	cr_assert_eq(m->n_init, 0);
	for (int k = 0; k < 4; k++) {
		cr_assert_eq(m->in[0].dim[k], xs[k]);
		cr_assert_eq(m->in[1].dim[k], ws[k]);
		cr_assert_eq(m->out[0].dim[k], ys[k]);
	}
	cr_assert_eq(m->in[0].elem_type, ENPU_ONNX_FLOAT);
	enpu_onnx_free(m);
}

Test(onnx_read, bare_tensor_input)
{
	enpu_buf b = load(NODE "test_conv_with_strides_padding/test_data_set_0/input_0.pb");
	enpu_onnx_tensor t;
	enpu_err e = {0};

	cr_assert_eq(enpu_onnx_read_tensor(b.data, b.len, "input_0.pb", NULL, &t, &e), 0, "%s", e.message);
	cr_assert_str_eq(t.name, "x");
	cr_assert_eq(t.elem_type, ENPU_ONNX_FLOAT);
	cr_assert_eq(t.shape.ndim, 4);
	cr_assert_eq(t.shape.dim[2], 7);
	cr_assert_eq(t.shape.dim[3], 5);
	cr_assert_eq(t.numel, 35);
	for (int k = 0; k < 35; k++)
		cr_assert_eq(t.f[k], (float)k, "x[%d] = %g", k, t.f[k]);
	enpu_onnx_tensor_free(&t);
	enpu_buf_free(&b);
}

Test(onnx_read, float_string_and_tensor_attributes)
{
	enpu_onnx_model *m = model(NODE "test_leakyrelu/model.onnx");
	const enpu_onnx_attr *a = enpu_onnx_attr_find(&m->node[0], "alpha");

	cr_assert_str_eq(m->node[0].op_type, "LeakyRelu");
	cr_assert(a);
	cr_assert_eq(a->type, ENPU_ONNX_A_FLOAT);
	cr_assert_float_eq(a->f, 0.1f, 1e-9);
	enpu_onnx_free(m);

	m = model(NODE "test_depthtospace_crd_mode/model.onnx");
	a = enpu_onnx_attr_find(&m->node[0], "mode");
	cr_assert(a);
	cr_assert_eq(a->type, ENPU_ONNX_A_STRING);
	cr_assert_str_eq(a->s, "CRD");
	a = enpu_onnx_attr_find(&m->node[0], "blocksize");
	cr_assert(a);
	cr_assert_eq(a->type, ENPU_ONNX_A_INT);
	cr_assert_eq(a->i, 2);
	enpu_onnx_free(m);

	m = model(NODE "test_constant/model.onnx");
	cr_assert_str_eq(m->node[0].op_type, "Constant");
	a = enpu_onnx_attr_find(&m->node[0], "value");
	cr_assert(a);
	cr_assert_eq(a->type, ENPU_ONNX_A_TENSOR);
	cr_assert_eq(a->t->elem_type, ENPU_ONNX_FLOAT);
	cr_assert_eq(a->t->shape.ndim, 2);
	cr_assert_eq(a->t->numel, 25);
	enpu_onnx_free(m);
}

Test(onnx_read, int64_initializer_symbolic_dims_and_unread_kinds)
{
	enpu_onnx_model *m = model(TORCH "../pytorch-operator/test_operator_non_float_params/model.onnx");

	cr_assert_eq(m->n_init, 1);
	cr_assert_eq(m->init[0].elem_type, ENPU_ONNX_INT64);
	cr_assert_eq(m->init[0].shape.ndim, 2);
	cr_assert_eq(m->init[0].numel, 4);
	cr_assert_null(m->init[0].f);
	for (int k = 0; k < 4; k++)
		cr_assert_eq(m->init[0].i[k], k + 1);
	enpu_onnx_free(m);

	m = model(TORCH "../simple/test_sequence_model8/model.onnx");
	cr_assert_str_eq(m->in[0].name, "X");
	cr_assert_eq(m->in[0].ndim, 1);
	cr_assert_eq(m->in[0].dim[0], -1);
	cr_assert_str_eq(m->in[0].param[0], "n");
	enpu_onnx_free(m);

	/* a graph attribute: type kept, no value; a sequence input: marked */
	m = model(NODE "test_if/model.onnx");
	cr_assert_str_eq(m->node[0].op_type, "If");
	cr_assert_eq(enpu_onnx_attr_find(&m->node[0], "else_branch")->type, 5);
	enpu_onnx_free(m);
	m = model(NODE "test_identity_sequence/model.onnx");
	cr_assert_eq(m->in[0].not_tensor, 1);
	cr_assert_eq(m->in[0].ndim, -1);
	enpu_onnx_free(m);

	/* an int32 tensor attribute: widened into i (ONNX's generator: 0) */
	m = model(NODE "test_constantofshape_int_zeros/model.onnx");
	const enpu_onnx_attr *a = enpu_onnx_attr_find(&m->node[0], "value");
	cr_assert_eq(a->t->elem_type, ENPU_ONNX_INT32);
	cr_assert_eq(a->t->numel, 1);
	cr_assert(!a->t->f && a->t->i);
	cr_assert_eq(a->t->i[0], 0);
	enpu_onnx_free(m);
}

/* Every model Debian ships in libonnx-testdata reads. */
Test(onnx_read, every_testdata_model)
{
	static const char *const sets[] = {"node", "pytorch-converted", "pytorch-operator", "simple"};
	char path[1024];
	size_t total = 0;

	for (size_t s = 0; s < sizeof(sets) / sizeof(sets[0]); s++) {
		snprintf(path, sizeof(path), "/usr/share/libonnx-testdata/data/%s", sets[s]);
		DIR *d = opendir(path);
		struct dirent *de;

		cr_assert(d, "%s missing (install libonnx-testdata: make deps)", path);
		while ((de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/usr/share/libonnx-testdata/data/%s/%s/model.onnx",
				 sets[s], de->d_name);
			enpu_onnx_free(model(path));
			total++;
		}
		closedir(d);
	}
	cr_assert_gt(total, 1000, "only %zu models", total);
}

/* A TensorProto packed by protobuf-c, read back. */
static int read_packed(const Onnx__TensorProto *p, enpu_onnx_tensor *t, enpu_err *e)
{
	size_t n = onnx__tensor_proto__get_packed_size(p);
	uint8_t *buf = malloc(n + 1);
	int rc;

	onnx__tensor_proto__pack(p, buf);
	rc = enpu_onnx_read_tensor(buf, n, "t.pb", NULL, t, e);
	free(buf);
	return rc;
}

/* p reads back as the values want (n bytes), float or int64. */
static void same_back(const Onnx__TensorProto *p, const void *want, size_t n)
{
	enpu_onnx_tensor t;
	enpu_err e = {0};

	cr_assert_eq(read_packed(p, &t, &e), 0, "%s", e.message);
	cr_assert_eq(t.numel * 4 * (t.i ? 2 : 1), n);
	cr_assert_arr_eq(t.i ? (const void *)t.i : (const void *)t.f, want, n);
	enpu_onnx_tensor_free(&t);
}

Test(onnx_read, raw_and_typed_forms)
{
	Onnx__TensorProto p = ONNX__TENSOR_PROTO__INIT;
	int64_t dims[] = {2, 3};
	float fv[6] = {1.5f, -2, 3, 4, 5, 6.25f};
	int64_t iv[6] = {-1, 2, 1LL << 40, 4, 5, 6};
	enpu_onnx_tensor t;
	enpu_err e = {0};

	p.name = "w";
	p.n_dims = 2;
	p.dims = dims;
	p.has_data_type = 1;
	p.data_type = ENPU_ONNX_FLOAT;
	p.n_float_data = 6;
	p.float_data = fv;
	same_back(&p, fv, sizeof(fv));
	p.n_float_data = 0;
	p.has_raw_data = 1;
	p.raw_data.len = sizeof(fv);
	p.raw_data.data = (uint8_t *)fv;
	same_back(&p, fv, sizeof(fv));
	p.data_type = ENPU_ONNX_INT64;
	p.raw_data.len = sizeof(iv);
	p.raw_data.data = (uint8_t *)iv;
	same_back(&p, iv, sizeof(iv));
	p.has_raw_data = 0;
	p.n_int64_data = 6;
	p.int64_data = iv;
	same_back(&p, iv, sizeof(iv));

	/* five values where the dims need six */
	p.n_int64_data = 5;
	cr_assert_eq(read_packed(&p, &t, &e), -1);
	cr_assert_eq(e.code, ENPU_E_ONNX);
	cr_assert(strstr(e.message, "'w'") && strstr(e.message, "5"), "%s", e.message);
	p.n_int64_data = 6;

	/* a negative dim */
	dims[1] = -3;
	cr_assert_eq(read_packed(&p, &t, &e), -1);
	cr_assert_eq(e.code, ENPU_E_ONNX);
	dims[1] = 3;
}

/* uint32 and uint64 (Pow's exponent in ONNX's own tests): typed in
 * uint64_data, raw as 4 or 8 bytes each, read as int64; a uint64 past
 * INT64_MAX is refused, naming the tensor. */
Test(onnx_read, unsigned_forms)
{
	Onnx__TensorProto p = ONNX__TENSOR_PROTO__INIT;
	int64_t dims[] = {3};
	uint64_t typed[3] = {4, 5, 6};
	uint32_t raw32[3] = {7, 0, 4000000000u};
	uint64_t big[3] = {1, 2, 1ULL << 63};
	int64_t want_typed[3] = {4, 5, 6}, want32[3] = {7, 0, 4000000000LL};
	enpu_onnx_tensor t;
	enpu_err e = {0};

	p.name = "y";
	p.n_dims = 1;
	p.dims = dims;
	p.has_data_type = 1;
	p.n_uint64_data = 3;
	p.uint64_data = typed;
	p.data_type = ENPU_ONNX_UINT32;
	same_back(&p, want_typed, sizeof(want_typed));
	p.data_type = ENPU_ONNX_UINT64;
	same_back(&p, want_typed, sizeof(want_typed));
	p.n_uint64_data = 0;
	p.has_raw_data = 1;
	p.data_type = ENPU_ONNX_UINT32;
	p.raw_data.len = sizeof(raw32);
	p.raw_data.data = (uint8_t *)raw32;
	same_back(&p, want32, sizeof(want32));
	p.data_type = ENPU_ONNX_UINT64;
	p.raw_data.len = sizeof(big);
	p.raw_data.data = (uint8_t *)big;
	cr_assert_eq(read_packed(&p, &t, &e), -1);
	cr_assert_eq(e.code, ENPU_E_ONNX);
	cr_assert(strstr(e.message, "'y'") && strstr(e.message, "9223372036854775808"), "%s", e.message);
}

/* External data: the location, offset and length are kept (the importer
 * checks the path and reads the bytes); no location is E0403 naming the
 * tensor, and so is an offset that is not a number. */
Test(onnx_read, external_data_fields)
{
	Onnx__TensorProto p = ONNX__TENSOR_PROTO__INIT;
	Onnx__StringStringEntryProto loc = ONNX__STRING_STRING_ENTRY_PROTO__INIT;
	Onnx__StringStringEntryProto off = ONNX__STRING_STRING_ENTRY_PROTO__INIT;
	Onnx__StringStringEntryProto len = ONNX__STRING_STRING_ENTRY_PROTO__INIT;
	Onnx__StringStringEntryProto *ext[] = {&loc, &off, &len};
	int64_t dims[] = {4};
	float raw[4] = {1, -2, 3.5f, 4};
	enpu_onnx_tensor t;
	enpu_err e = {0};
	char out[2048];

	p.name = "fc1.weight";
	p.n_dims = 1;
	p.dims = dims;
	p.has_data_type = 1;
	p.data_type = ENPU_ONNX_FLOAT;
	loc.key = "location";
	loc.value = "../../etc/passwd";
	off.key = "offset";
	off.value = "4096";
	len.key = "length";
	len.value = "16";
	p.n_external_data = 3;
	p.external_data = ext;
	p.has_data_location = 1;
	p.data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
	cr_assert_eq(read_packed(&p, &t, &e), 0, "%s", e.message);
	cr_assert(t.external && !t.f && !t.i);
	cr_assert_str_eq(t.ext_location, "../../etc/passwd");
	cr_assert_eq(t.ext_offset, 4096);
	cr_assert_eq(t.ext_length, 16);
	cr_assert_eq(enpu_onnx_tensor_set_raw(&t, raw, 12, "m.onnx", &e), -1);
	cr_assert(strstr(e.message, "'fc1.weight'"), "%s", e.message);
	cr_assert_eq(enpu_onnx_tensor_set_raw(&t, raw, 16, "m.onnx", &e), 0, "%s", e.message);
	cr_assert(t.f && t.f[2] == 3.5f);
	enpu_onnx_tensor_free(&t);

	off.value = "-1";
	cr_assert_eq(read_packed(&p, &t, &e), -1);
	cr_assert_eq(e.code, ENPU_E_ONNX);
	off.value = "0";
	p.n_external_data = 0;
	cr_assert_eq(read_packed(&p, &t, &e), -1);
	cr_assert_eq(e.code, ENPU_E_ONNX);
	enpu_err_render(&e, out, sizeof(out));
	cr_assert(strstr(out, "error[E0403]") && strstr(out, "'fc1.weight'") &&
		  strstr(out, "location") && strstr(out, "See: eulernpu explain E0403"), "%s", out);
}

/* A one-node model with an attribute of type `type`, packed. */
static uint8_t *pack_model(int type, size_t *n)
{
	Onnx__AttributeProto at = ONNX__ATTRIBUTE_PROTO__INIT, *ats[] = {&at};
	Onnx__NodeProto nd = ONNX__NODE_PROTO__INIT, *nds[] = {&nd};
	Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
	Onnx__ModelProto m = ONNX__MODEL_PROTO__INIT;
	uint8_t *buf;

	at.name = "alpha";
	at.has_type = 1;
	at.type = (Onnx__AttributeProto__AttributeType)type;
	at.has_f = 1;
	at.f = 0.5f;
	nd.op_type = "Elu";
	nd.name = "act";
	nd.n_attribute = 1;
	nd.attribute = ats;
	g.n_node = 1;
	g.node = nds;
	m.graph = &g;
	*n = onnx__model_proto__get_packed_size(&m);
	buf = malloc(*n + 1);
	onnx__model_proto__pack(&m, buf);
	return buf;
}

Test(onnx_read, unknown_attribute_type_and_limits)
{
	size_t n;
	uint8_t *buf = pack_model(99, &n);
	enpu_onnx_model *m = NULL;
	enpu_onnx_limits lim = *enpu_onnx_limits_default();
	enpu_err e = {0};

	cr_assert_eq(enpu_onnx_read(buf, n, "m.onnx", NULL, &m, &e), -1);
	cr_assert_eq(e.code, ENPU_E_ONNX);
	cr_assert(strstr(e.message, "'act'") && strstr(e.message, "'alpha'") && strstr(e.message, "99"),
		  "%s", e.message);
	cr_assert_null(m);
	free(buf);

	buf = pack_model(ENPU_ONNX_A_FLOAT, &n);
	cr_assert_eq(enpu_onnx_read(buf, n, "m.onnx", NULL, &m, &e), 0, "%s", e.message);
	cr_assert_float_eq(m->node[0].attr[0].f, 0.5f, 0);
	enpu_onnx_free(m);
	lim.max_nodes = 0;
	cr_assert_eq(enpu_onnx_read(buf, n, "m.onnx", &lim, &m, &e), -1);
	cr_assert_eq(e.code, ENPU_E_LIMIT);
	cr_assert(strstr(e.message, "max_nodes"), "%s", e.message);
	lim = *enpu_onnx_limits_default();
	lim.max_model_bytes = n - 1;
	cr_assert_eq(enpu_onnx_read(buf, n, "m.onnx", &lim, &m, &e), -1);
	cr_assert_eq(e.code, ENPU_E_LIMIT);
	free(buf);

	enpu_buf b = load(NODE "test_conv_with_strides_padding/test_data_set_0/input_0.pb");
	enpu_onnx_tensor t;
	lim = *enpu_onnx_limits_default();
	lim.max_tensor_elems = 34;
	cr_assert_eq(enpu_onnx_read_tensor(b.data, b.len, "x.pb", &lim, &t, &e), -1);
	cr_assert_eq(e.code, ENPU_E_LIMIT);
	cr_assert(strstr(e.message, "max_tensor_elems"), "%s", e.message);
	enpu_buf_free(&b);
}

/* Truncated and bit-flipped bytes: an error or a model, never a crash or a
 * leak (SAN=1 checks both). Every prefix, and every bit of every byte. */
static void hostile(const char *path, int tensor)
{
	enpu_buf b = load(path);
	uint8_t *c = malloc(b.len);
	size_t ok = 0, bad = 0;
	enpu_err e;

	for (size_t cut = 0; cut <= b.len; cut++) {
		enpu_onnx_model *m = NULL;
		enpu_onnx_tensor t;
		int rc = tensor ? enpu_onnx_read_tensor(b.data, cut, "t", NULL, &t, &e) :
				  enpu_onnx_read(b.data, cut, "m", NULL, &m, &e);

		if (rc == 0) {
			ok++;
			enpu_onnx_free(m);
			enpu_onnx_tensor_free(tensor ? &t : NULL);
			continue;
		}
		bad++;
		cr_assert(e.code == ENPU_E_ONNX || e.code == ENPU_E_LIMIT, "code %d", e.code);
	}
	cr_assert_gt(ok, 0, "not even the whole of %s was read", path);
	cr_assert_gt(bad, 0, "no truncation of %s was refused", path);
	for (size_t k = 0; k < b.len * 8; k++) {
		enpu_onnx_model *m = NULL;
		enpu_onnx_tensor t;

		memcpy(c, b.data, b.len);
		c[k / 8] ^= (uint8_t)(1u << (k % 8));
		if (tensor ? enpu_onnx_read_tensor(c, b.len, "t", NULL, &t, &e) :
			     enpu_onnx_read(c, b.len, "m", NULL, &m, &e))
			continue;
		enpu_onnx_free(m);
		enpu_onnx_tensor_free(tensor ? &t : NULL);
	}
	free(c);
	enpu_buf_free(&b);
}

Test(onnx_read, truncated_and_bit_flipped_never_crash)
{
	hostile(NODE "test_conv_with_strides_padding/model.onnx", 0);
	hostile(NODE "test_conv_with_strides_padding/test_data_set_0/input_0.pb", 1);
	hostile(NODE "test_depthtospace_crd_mode/model.onnx", 0);
	hostile(NODE "test_constant/model.onnx", 0);
}

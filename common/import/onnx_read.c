/* onnx_read.c: ONNX ModelProto / TensorProto bytes -> enpu_onnx_model
 * (onnx_read.h). protobuf-c unpacks (malformed wire data -> E0403); this
 * file checks every size against enpu_onnx_limits before it allocates, and
 * copies what the importer needs into plain structures. Tensors: float32,
 * int64, int32, uint32, uint64 (a value past int64 is refused), int8,
 * uint8, bool and double, from raw_data (little-endian, the host's order on every platform
 * the project builds for) or the typed fields; other dtypes keep their name
 * and shape only; external data keeps its location, offset and length (the
 * importer reads the file through its caller, enpu_onnx_tensor_set_raw).
 * Attribute types the importer cannot use yet (graphs, sparse tensors, type
 * protos, tensor lists) keep their type but no value, so the importer can
 * name every such node at once; an unknown type is an error. */
#include <stdlib.h>
#include <string.h>
#include "onnx.pb-c.h"
#include "onnx_read.h"

static const enpu_onnx_limits defaults = {
	.max_model_bytes = 1ull << 30,
	.max_nodes = 100000,
	.max_tensor_elems = 1ull << 28,
	.max_attr_elems = 1ull << 20,
};

const enpu_onnx_limits *enpu_onnx_limits_default(void)
{
	return &defaults;
}

static const char *FIX_BAD = "re-export the model (torch.onnx.export, onnx.save) and check the file is complete";

static int nomem(enpu_err *e, const char *label)
{
	return enpu_fail(e, ENPU_E_NOMEM, label, NULL, "out of memory reading the ONNX model");
}

static char *dupstr(const char *s)
{
	return strdup(s ? s : "");
}

void enpu_onnx_tensor_free(enpu_onnx_tensor *t)
{
	if (!t)
		return;
	free(t->name);
	free(t->f);
	free(t->i);
	free(t->ext_location);
	memset(t, 0, sizeof(*t));
}

/* Bytes per element of the dtypes whose values are kept; 0 for others. */
static size_t elem_size(int type)
{
	switch (type) {
	case ENPU_ONNX_FLOAT:
	case ENPU_ONNX_INT32:
	case ENPU_ONNX_UINT32:
		return 4;
	case ENPU_ONNX_INT64:
	case ENPU_ONNX_DOUBLE:
	case ENPU_ONNX_UINT64:
		return 8;
	case ENPU_ONNX_BOOL:
	case ENPU_ONNX_INT8:
	case ENPU_ONNX_UINT8:
		return 1;
	}
	return 0;
}

/* n elements of type from src (little-endian raw, or the typed field's
 * own array: int32_data holds INT32, INT8, UINT8 and BOOL as int32) into
 * t->f / t->i. */
static int fill(enpu_onnx_tensor *t, const void *src, int typed, const char *label, enpu_err *e)
{
	uint64_t n = t->numel;
	int ty = t->elem_type;

	if (ty == ENPU_ONNX_FLOAT || ty == ENPU_ONNX_DOUBLE)
		t->f = malloc(n ? n * sizeof(float) : 1);
	else
		t->i = malloc(n ? n * sizeof(int64_t) : 1);
	if (!t->f && !t->i)
		return nomem(e, label);
	for (uint64_t k = 0; k < n; k++) {
		if (ty == ENPU_ONNX_FLOAT) {
			memcpy(&t->f[k], (const char *)src + 4 * k, 4);
		} else if (ty == ENPU_ONNX_DOUBLE) {
			double d;
			memcpy(&d, (const char *)src + 8 * k, 8);
			t->f[k] = (float)d;
		} else if (ty == ENPU_ONNX_INT64) {
			memcpy(&t->i[k], (const char *)src + 8 * k, 8);
		} else if (ty == ENPU_ONNX_UINT32 || ty == ENPU_ONNX_UINT64) {
			/* typed: both in uint64_data; raw: 4 or 8 bytes each */
			uint64_t u = 0;
			uint32_t u32;
			if (ty == ENPU_ONNX_UINT32 && !typed)
				memcpy(&u32, (const char *)src + 4 * k, 4), u = u32;
			else
				memcpy(&u, (const char *)src + 8 * k, 8);
			if (u > INT64_MAX)
				return enpu_fail(e, ENPU_E_ONNX, label, NULL,
						 "tensor '%s' holds the unsigned value %llu, past int64",
						 t->name ? t->name : "", (unsigned long long)u);
			t->i[k] = (int64_t)u;
		} else if (ty == ENPU_ONNX_INT32 || typed) {
			int32_t v;
			memcpy(&v, (const char *)src + 4 * k, 4);
			t->i[k] = ty == ENPU_ONNX_BOOL ? v != 0 : ty == ENPU_ONNX_INT8 ? (int8_t)v :
				  ty == ENPU_ONNX_UINT8 ? (uint8_t)v : v;
		} else if (ty == ENPU_ONNX_INT8) {
			t->i[k] = ((const int8_t *)src)[k];
		} else if (ty == ENPU_ONNX_UINT8) {
			t->i[k] = ((const uint8_t *)src)[k];
		} else {
			t->i[k] = ((const uint8_t *)src)[k] != 0;
		}
	}
	return 0;
}

int enpu_onnx_tensor_set_raw(enpu_onnx_tensor *t, const void *raw, size_t len,
			     const char *label, enpu_err *e)
{
	size_t esz = elem_size(t->elem_type);

	if (!esz)
		return enpu_fail(e, ENPU_E_ONNX, label, NULL, "tensor '%s' has data type %d, which is not read",
				 t->name ? t->name : "", t->elem_type);
	if (len % esz || len / esz != t->numel)
		return enpu_fail(e, ENPU_E_ONNX, label, FIX_BAD,
				 "tensor '%s' has %zu bytes of data where its dims need %llu values",
				 t->name ? t->name : "", len, (unsigned long long)t->numel);
	return fill(t, raw, 0, label, e);
}

/* external_data key-values: location (required), offset, length. */
static int conv_external(const Onnx__TensorProto *p, const char *nm, const char *label,
			 enpu_onnx_tensor *t, enpu_err *e)
{
	t->external = 1;
	for (size_t k = 0; k < p->n_external_data; k++) {
		const char *key = p->external_data[k]->key, *val = p->external_data[k]->value;
		char *end;

		if (!key || !val)
			continue;
		if (!strcmp(key, "location")) {
			free(t->ext_location);
			if (!(t->ext_location = dupstr(val)))
				return nomem(e, label);
			continue;
		}
		if (strcmp(key, "offset") && strcmp(key, "length"))
			continue;   /* checksum, basepath: not needed */
		unsigned long long v = strtoull(val, &end, 10);
		if (!*val || *end || *val == '-')
			return enpu_fail(e, ENPU_E_ONNX, label, FIX_BAD,
					 "tensor '%s' has external_data %s '%s', not a byte count", nm, key, val);
		*(key[0] == 'o' ? &t->ext_offset : &t->ext_length) = v;
	}
	if (!t->ext_location || !t->ext_location[0])
		return enpu_fail(e, ENPU_E_ONNX, label, FIX_BAD,
				 "tensor '%s' keeps its data in an external file but names no location", nm);
	return 0;
}

/* TensorProto -> enpu_onnx_tensor; what names the tensor in errors. */
static int conv_tensor(const Onnx__TensorProto *p, const char *label,
		       const enpu_onnx_limits *lim, enpu_onnx_tensor *t, enpu_err *e)
{
	const char *nm = p->name ? p->name : "";
	uint64_t numel = 1;
	size_t esz, have;
	const void *src;

	memset(t, 0, sizeof(*t));
	if (p->n_dims > ENPU_MAX_DIMS)
		return enpu_fail(e, ENPU_E_LIMIT, label, NULL, "tensor '%s' has %zu dims (at most %d)",
				 nm, p->n_dims, ENPU_MAX_DIMS);
	for (size_t k = 0; k < p->n_dims; k++) {
		if (p->dims[k] < 0)
			return enpu_fail(e, ENPU_E_ONNX, label, FIX_BAD, "tensor '%s' has negative dim %lld",
					 nm, (long long)p->dims[k]);
		if (p->dims[k] && numel > lim->max_tensor_elems / (uint64_t)p->dims[k])
			return enpu_fail(e, ENPU_E_LIMIT, label, "raise max_tensor_elems",
					 "tensor '%s' has more than %llu elements (max_tensor_elems)",
					 nm, (unsigned long long)lim->max_tensor_elems);
		numel *= (uint64_t)p->dims[k];
	}
	if (numel > lim->max_tensor_elems)
		return enpu_fail(e, ENPU_E_LIMIT, label, "raise max_tensor_elems",
				 "tensor '%s' has more than %llu elements (max_tensor_elems)",
				 nm, (unsigned long long)lim->max_tensor_elems);
	t->elem_type = p->data_type;
	t->shape.ndim = (int)p->n_dims;
	for (size_t k = 0; k < p->n_dims; k++)
		t->shape.dim[k] = p->dims[k];
	t->numel = numel;
	if (!(t->name = dupstr(nm)))
		return nomem(e, label);
	if (p->n_external_data || (p->has_data_location &&
				   p->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL))
		return conv_external(p, nm, label, t, e);
	if (!(esz = elem_size(p->data_type)))
		return 0;   /* shape only */
	switch (p->data_type) {
	case ENPU_ONNX_FLOAT:
		have = p->n_float_data, src = p->float_data;
		break;
	case ENPU_ONNX_INT64:
		have = p->n_int64_data, src = p->int64_data;
		break;
	case ENPU_ONNX_DOUBLE:
		have = p->n_double_data, src = p->double_data;
		break;
	case ENPU_ONNX_UINT32:
	case ENPU_ONNX_UINT64:
		have = p->n_uint64_data, src = p->uint64_data;
		break;
	default:
		have = p->n_int32_data, src = p->int32_data;
		break;
	}
	if (p->has_raw_data)
		have = p->raw_data.len / esz, src = p->raw_data.data;
	if ((p->has_raw_data && p->raw_data.len % esz) || have != numel)
		return enpu_fail(e, ENPU_E_ONNX, label, FIX_BAD,
				 "tensor '%s' holds %zu values (%s) where its dims need %llu", nm, have,
				 p->has_raw_data ? "raw_data" : "typed field", (unsigned long long)numel);
	return fill(t, src, !p->has_raw_data, label, e);
}

/* The serialized size against max_model_bytes, before protobuf-c unpacks. */
static int too_big(size_t len, const char *label, const enpu_onnx_limits *lim, enpu_err *e)
{
	if (len <= lim->max_model_bytes)
		return 0;
	return enpu_fail(e, ENPU_E_LIMIT, label, "raise max_model_bytes",
			 "%zu bytes is more than max_model_bytes (%llu)", len,
			 (unsigned long long)lim->max_model_bytes);
}

int enpu_onnx_read_tensor(const void *buf, size_t len, const char *label,
			  const enpu_onnx_limits *lim, enpu_onnx_tensor *out, enpu_err *e)
{
	Onnx__TensorProto *p;
	int rc;

	if (!lim)
		lim = &defaults;
	memset(out, 0, sizeof(*out));
	if (too_big(len, label, lim, e))
		return -1;
	p = onnx__tensor_proto__unpack(NULL, len, buf);
	if (!p)
		return enpu_fail(e, ENPU_E_ONNX, label, FIX_BAD, "not a valid ONNX TensorProto (malformed protobuf)");
	rc = conv_tensor(p, label, lim, out, e);
	onnx__tensor_proto__free_unpacked(p, NULL);
	if (rc)
		enpu_onnx_tensor_free(out);
	return rc;
}

static void free_value(enpu_onnx_value *v)
{
	free(v->name);
	for (int k = 0; k < ENPU_MAX_DIMS; k++)
		free(v->param[k]);
}

static void free_attr(enpu_onnx_attr *a)
{
	free(a->name);
	free(a->s);
	if (a->t) {
		enpu_onnx_tensor_free(a->t);
		free(a->t);
	}
	free(a->floats);
	free(a->ints);
	for (size_t k = 0; a->strings && k < a->n; k++)
		free(a->strings[k]);
	free(a->strings);
}

static void free_node(enpu_onnx_node *n)
{
	free(n->name);
	free(n->op_type);
	free(n->domain);
	for (size_t k = 0; n->in && k < n->n_in; k++)
		free(n->in[k]);
	for (size_t k = 0; n->out && k < n->n_out; k++)
		free(n->out[k]);
	for (size_t k = 0; n->attr && k < n->n_attr; k++)
		free_attr(&n->attr[k]);
	free(n->in);
	free(n->out);
	free(n->attr);
}

void enpu_onnx_free(enpu_onnx_model *m)
{
	if (!m)
		return;
	for (size_t k = 0; m->opset && k < m->n_opset; k++)
		free(m->opset[k].domain);
	for (size_t k = 0; m->in && k < m->n_in; k++)
		free_value(&m->in[k]);
	for (size_t k = 0; m->out && k < m->n_out; k++)
		free_value(&m->out[k]);
	for (size_t k = 0; m->init && k < m->n_init; k++)
		enpu_onnx_tensor_free(&m->init[k]);
	for (size_t k = 0; m->node && k < m->n_node; k++)
		free_node(&m->node[k]);
	free(m->graph_name);
	free(m->producer);
	free(m->opset);
	free(m->in);
	free(m->out);
	free(m->init);
	free(m->node);
	free(m);
}

static int conv_value(const Onnx__ValueInfoProto *p, const char *label, enpu_onnx_value *v,
		      enpu_err *e)
{
	const Onnx__TypeProto__Tensor *tt = NULL;

	v->ndim = -1;
	v->name = dupstr(p->name);
	if (!v->name)
		return nomem(e, label);
	if (p->type && p->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
		tt = p->type->tensor_type;
	else if (p->type && p->type->value_case != ONNX__TYPE_PROTO__VALUE__NOT_SET)
		v->not_tensor = 1;
	if (!tt)
		return 0;
	v->elem_type = tt->has_elem_type ? tt->elem_type : 0;
	if (!tt->shape)
		return 0;
	if (tt->shape->n_dim > ENPU_MAX_DIMS)
		return enpu_fail(e, ENPU_E_LIMIT, label, NULL, "graph input/output '%s' has %zu dims (at most %d)",
				 v->name, tt->shape->n_dim, ENPU_MAX_DIMS);
	v->ndim = (int)tt->shape->n_dim;
	for (int k = 0; k < v->ndim; k++) {
		const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[k];

		v->dim[k] = -1;
		if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && d->dim_value >= 0)
			v->dim[k] = d->dim_value;
		else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
			 !(v->param[k] = dupstr(d->dim_param)))
			return nomem(e, label);
	}
	return 0;
}

/* One attribute; node names the node in errors. */
static int conv_attr(const Onnx__AttributeProto *p, const char *node, const char *label,
		     const enpu_onnx_limits *lim, enpu_onnx_attr *a, enpu_err *e)
{
	const char *nm = p->name ? p->name : "";
	size_t n = 0;

	if (!(a->name = dupstr(nm)))
		return nomem(e, label);
	a->type = (enpu_onnx_atype)p->type;
	switch (p->type) {
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT:
		a->f = p->f;
		return 0;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT:
		a->i = p->i;
		return 0;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING:
		if (!(a->s = malloc(p->s.len + 1)))
			return nomem(e, label);
		if (p->s.len)
			memcpy(a->s, p->s.data, p->s.len);
		a->s[p->s.len] = 0;
		a->slen = p->s.len;
		return 0;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR:
		if (!p->t)
			return enpu_fail(e, ENPU_E_ONNX, label, FIX_BAD,
					 "node '%s' attribute '%s' is a tensor without a value", node, nm);
		if (!(a->t = calloc(1, sizeof(*a->t))))
			return nomem(e, label);
		return conv_tensor(p->t, label, lim, a->t, e);
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS:
		n = p->n_floats;
		break;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS:
		n = p->n_ints;
		break;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS:
		n = p->n_strings;
		break;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH:
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR:
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO:
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS:
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS:
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSORS:
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTOS:
		return 0;   /* type recorded, value not read: the importer names the node */
	default:
		return enpu_fail(e, ENPU_E_ONNX, label, FIX_BAD,
				 "node '%s' attribute '%s' has unknown attribute type %d", node, nm,
				 (int)p->type);
	}
	if (n > lim->max_attr_elems)
		return enpu_fail(e, ENPU_E_LIMIT, label, "raise max_attr_elems",
				 "node '%s' attribute '%s' has %zu values (max_attr_elems %llu)", node, nm, n,
				 (unsigned long long)lim->max_attr_elems);
	a->n = n;
	if (p->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS) {
		if (!(a->floats = malloc(n * sizeof(float) + 1)))
			return nomem(e, label);
		if (n)
			memcpy(a->floats, p->floats, n * sizeof(float));
	} else if (p->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS) {
		if (!(a->ints = malloc(n * sizeof(int64_t) + 1)))
			return nomem(e, label);
		if (n)
			memcpy(a->ints, p->ints, n * sizeof(int64_t));
	} else {
		if (!(a->strings = calloc(n + 1, sizeof(char *))))
			return nomem(e, label);
		for (size_t k = 0; k < n; k++) {
			if (!(a->strings[k] = malloc(p->strings[k].len + 1)))
				return nomem(e, label);
			if (p->strings[k].len)
				memcpy(a->strings[k], p->strings[k].data, p->strings[k].len);
			a->strings[k][p->strings[k].len] = 0;
		}
	}
	return 0;
}

static char **dup_list(char *const *src, size_t n)
{
	char **l = calloc(n + 1, sizeof(char *));

	for (size_t k = 0; l && k < n; k++)
		if (!(l[k] = dupstr(src[k])))
			return l;   /* the caller's free walks n entries; NULLs are fine */
	return l;
}

static int conv_node(const Onnx__NodeProto *p, const char *label, const enpu_onnx_limits *lim,
		     enpu_onnx_node *n, enpu_err *e)
{
	n->name = dupstr(p->name);
	n->op_type = dupstr(p->op_type);
	n->domain = dupstr(p->domain);
	n->in = dup_list(p->input, p->n_input);
	n->out = dup_list(p->output, p->n_output);
	n->attr = calloc(p->n_attribute + 1, sizeof(*n->attr));
	n->n_in = p->n_input;
	n->n_out = p->n_output;
	if (!n->name || !n->op_type || !n->domain || !n->in || !n->out || !n->attr)
		return nomem(e, label);
	for (size_t k = 0; k < p->n_input; k++)
		if (!n->in[k])
			return nomem(e, label);
	for (size_t k = 0; k < p->n_output; k++)
		if (!n->out[k])
			return nomem(e, label);
	for (size_t k = 0; k < p->n_attribute; k++) {
		n->n_attr = k + 1;
		if (conv_attr(p->attribute[k], n->name, label, lim, &n->attr[k], e))
			return -1;
	}
	return 0;
}

static int conv_model(const Onnx__ModelProto *p, const char *label, const enpu_onnx_limits *lim,
		      enpu_onnx_model *m, enpu_err *e)
{
	const Onnx__GraphProto *g = p->graph;

	m->ir_version = p->has_ir_version ? p->ir_version : 0;
	if (!g)
		return enpu_fail(e, ENPU_E_ONNX, label, FIX_BAD, "the model has no graph");
	if (!(m->graph_name = dupstr(g->name)) || !(m->producer = dupstr(p->producer_name)))
		return nomem(e, label);
	if (g->n_node > lim->max_nodes)
		return enpu_fail(e, ENPU_E_LIMIT, label, "raise max_nodes",
				 "the graph has %zu nodes (max_nodes %llu)", g->n_node,
				 (unsigned long long)lim->max_nodes);
	if (g->n_sparse_initializer)
		return enpu_fail(e, ENPU_E_ONNX, label, "store the initializers dense",
				 "the graph has %zu sparse initializers, which are not read",
				 g->n_sparse_initializer);
	m->opset = calloc(p->n_opset_import + 1, sizeof(*m->opset));
	m->in = calloc(g->n_input + 1, sizeof(*m->in));
	m->out = calloc(g->n_output + 1, sizeof(*m->out));
	m->init = calloc(g->n_initializer + 1, sizeof(*m->init));
	m->node = calloc(g->n_node + 1, sizeof(*m->node));
	if (!m->opset || !m->in || !m->out || !m->init || !m->node)
		return nomem(e, label);
	for (size_t k = 0; k < p->n_opset_import; k++, m->n_opset++) {
		m->opset[k].version = p->opset_import[k]->version;
		if (!(m->opset[k].domain = dupstr(p->opset_import[k]->domain)))
			return nomem(e, label);
	}
	for (size_t k = 0; k < g->n_input; k++)
		if (m->n_in++, conv_value(g->input[k], label, &m->in[k], e))
			return -1;
	for (size_t k = 0; k < g->n_output; k++)
		if (m->n_out++, conv_value(g->output[k], label, &m->out[k], e))
			return -1;
	for (size_t k = 0; k < g->n_initializer; k++)
		if (m->n_init++, conv_tensor(g->initializer[k], label, lim, &m->init[k], e))
			return -1;
	for (size_t k = 0; k < g->n_node; k++)
		if (m->n_node++, conv_node(g->node[k], label, lim, &m->node[k], e))
			return -1;
	return 0;
}

int enpu_onnx_read(const void *buf, size_t len, const char *label,
		   const enpu_onnx_limits *lim, enpu_onnx_model **out, enpu_err *e)
{
	Onnx__ModelProto *p;
	enpu_onnx_model *m;
	int rc;

	if (!lim)
		lim = &defaults;
	*out = NULL;
	if (too_big(len, label, lim, e))
		return -1;
	p = onnx__model_proto__unpack(NULL, len, buf);
	if (!p)
		return enpu_fail(e, ENPU_E_ONNX, label, FIX_BAD, "not a valid ONNX model (malformed protobuf)");
	m = calloc(1, sizeof(*m));
	rc = m ? conv_model(p, label, lim, m, e) : nomem(e, label);
	onnx__model_proto__free_unpacked(p, NULL);
	if (rc) {
		enpu_onnx_free(m);
		return -1;
	}
	*out = m;
	return 0;
}

const enpu_onnx_attr *enpu_onnx_attr_find(const enpu_onnx_node *n, const char *name)
{
	for (size_t k = 0; k < n->n_attr; k++)
		if (strcmp(n->attr[k].name, name) == 0)
			return &n->attr[k];
	return NULL;
}

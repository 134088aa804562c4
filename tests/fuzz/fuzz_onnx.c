/* fuzz_onnx.c: libFuzzer target for the ONNX reader (common/import/
 * onnx_read.c) and the importer (import.c). The bytes are read as a
 * ModelProto and as a bare TensorProto; whatever reads must be
 * self-consistent (every tensor's data covers its numel, every node's names
 * are strings); a model that reads is imported, and a spec the importer
 * writes must parse and validate, its weights read (a failure must be
 * E0403, E0404, a limit or out of memory): anything else aborts, so the
 * fuzzer reports it as a crash. Seeds: libonnx-testdata's models and
 * .pb tensors (seed.sh). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "onnx_read.h"
#include "import.h"
#include "spec.h"
#include "npz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static enpu_onnx_limits lim;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* small enough that a hostile dims field costs no time */
	lim = *enpu_onnx_limits_default();
	lim.max_tensor_elems = 1u << 20;
	lim.max_nodes = 4096;
	lim.max_attr_elems = 1u << 16;
	return 0;
}

static void check_tensor(const enpu_onnx_tensor *t)
{
	volatile float fs = 0;
	volatile uint64_t is = 0;

	if (!t->name || t->shape.ndim < 0 || t->shape.ndim > ENPU_MAX_DIMS ||
	    t->numel > lim.max_tensor_elems)
		abort();
	for (uint64_t k = 0; t->f && k < t->numel; k++)
		fs += t->f[k];   /* ASan checks the buffer covers numel */
	for (uint64_t k = 0; t->i && k < t->numel; k++)
		is += (uint64_t)t->i[k];
	(void)fs;   /* the reads are the check */
	(void)is;
}

static void check_model(const enpu_onnx_model *m)
{
	for (size_t k = 0; k < m->n_init; k++)
		check_tensor(&m->init[k]);
	for (size_t k = 0; k < m->n_in + m->n_out; k++) {
		const enpu_onnx_value *v = k < m->n_in ? &m->in[k] : &m->out[k - m->n_in];

		if (!v->name || v->ndim > ENPU_MAX_DIMS)
			abort();
	}
	for (size_t k = 0; k < m->n_node; k++) {
		const enpu_onnx_node *n = &m->node[k];

		if (!n->op_type || !n->domain || !n->name)
			abort();
		for (size_t j = 0; j < n->n_in; j++)
			(void)strlen(n->in[j]);
		for (size_t j = 0; j < n->n_out; j++)
			(void)strlen(n->out[j]);
		for (size_t j = 0; j < n->n_attr; j++) {
			const enpu_onnx_attr *a = &n->attr[j];

			if (enpu_onnx_attr_find(n, a->name) == NULL)
				abort();
			if (a->t)
				check_tensor(a->t);
			for (size_t i = 0; a->strings && i < a->n; i++)
				(void)strlen(a->strings[i]);
		}
	}
}

static void check_import(const uint8_t *data, size_t size)
{
	enpu_import_opts o = {0};
	enpu_buf spec = ENPU_BUF_INIT, w = ENPU_BUF_INIT;
	enpu_err e = ENPU_ERR_INIT;
	enpu_spec *s = NULL;
	enpu_graph *g = NULL;
	enpu_tlist wl = ENPU_TLIST_INIT;

	o.lim = &lim;
	if (enpu_import(data, size, "fuzz.onnx", &o, &spec, &w, &e)) {
		if (e.code != ENPU_E_ONNX && e.code != ENPU_E_IMPORT && e.code != ENPU_E_LIMIT &&
		    e.code != ENPU_E_NOMEM)
			abort();
		return;
	}
	if (enpu_spec_parse(spec.data, spec.len, "spec.yaml", NULL, &s, &e) ||
	    enpu_validate(s, "cpu_ref", &g, &e) ||
	    enpu_npz_read_mem(w.data, w.len, "weights.npz", NULL, &wl, &e))
		abort();
	enpu_tlist_free(&wl);
	enpu_graph_free(g);
	enpu_spec_free(s);
	enpu_buf_free(&spec);
	enpu_buf_free(&w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enpu_onnx_model *m = NULL;
	enpu_onnx_tensor t;
	enpu_err e = ENPU_ERR_INIT;

	if (enpu_onnx_read(data, size, "fuzz.onnx", &lim, &m, &e) == 0) {
		check_model(m);
		enpu_onnx_free(m);
		check_import(data, size);
	} else if (e.code != ENPU_E_ONNX && e.code != ENPU_E_LIMIT && e.code != ENPU_E_NOMEM) {
		abort();
	}
	if (enpu_onnx_read_tensor(data, size, "fuzz.pb", &lim, &t, &e) == 0) {
		check_tensor(&t);
		enpu_onnx_tensor_free(&t);
	}
	return 0;
}

/* board_target.c: targets.zynq_ps and targets.fpga_board. YAML in with
 * every error at the offending node's line:col, canonical JSON out for the
 * manifest and the cache key, and back from JSON when an artifact loads.
 * docs/boards.md documents every field. */
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend.h"
#include "board_target.h"
#include "graphjson.h"
#include "json.h"
#include "spec_int.h"

#define MAX_ARRAY 4096
#define MAX_BUFFER_KIB 1048576          /* 1 GiB of on-chip buffer is plenty */
#define MAX_DIM_LIMIT INT64_C(2147483647)
#define MAX_DMA 65536

static const char *const cpu_names[] = {"cortex-a9", "cortex-a53", NULL};
static const char *const df_names[] = {"os", "ws", "is", NULL};

/* Fields in sorted order: the canonical JSON's order too. */
enum { F_ARRAY, F_BUFFER, F_CLOCK, F_CPU, F_DATAFLOW, F_DMA, F_MAXDIM, F_PLOPS, F_COUNT };
static const char *const fpga_fields[] = {
	"array", "buffer_kib", "clock_mhz", "cpu", "dataflow", "dma_bytes_per_cycle",
	"max_dim", "pl_ops", NULL};
static const char *const zynq_fields[] = {"cpu", NULL};

const char *enpu_board_cpu_name(enpu_board_cpu c)
{
	return (unsigned)c < ENPU_CPU_COUNT ? cpu_names[c] : "?";
}

void enpu_board_target_default(const enpu_backend_def *d, enpu_board_target *t)
{
	memset(t, 0, sizeof(*t));
	t->pl = d->pl;
	t->cpu = ENPU_CPU_CORTEX_A9;
	t->pl_ops = ENPU_PL_OPS_DEFAULT;
	t->buffer_kib = 512;
	t->max_dim = 4096;
	t->rows = 8;
	t->cols = 8;
	t->dataflow = ENPU_DF_OS;
	t->clock_mhz = 100;
	t->dma_bytes_per_cycle = 8;
}

/* ---- YAML --------------------------------------------------------------- */

/* Names of the ops in mask, in table order, NULL-terminated. */
static void op_names(enpu_opmask mask, const char **names)
{
	int n = 0;

	for (int i = 0; i < ENPU_OP_COUNT; i++)
		if (enpu_opmask_has(mask, i))
			names[n++] = enpu_op_by_id((enpu_opid)i)->name;
	names[n] = NULL;
}

/* Split the mapping into its allowed fields; unknown or duplicate keys fail.
 * A field written as null (`clock_mhz:`) keeps its default. */
static int split(const enpu_yread *c, const char *what, const enpu_ynode *map,
		 const char *const *allowed, const enpu_ynode **vals)
{
	char in_what[96];

	snprintf(in_what, sizeof(in_what), "in %s", what);
	return enpu_yaml_fields(map, allowed, in_what, c->label, ENPU_E_TARGET,
				ENPU_YF_FIELD | ENPU_YF_NULL_ABSENT, NULL, vals, c->e);
}

static int parse_array(const enpu_yread *c, const enpu_ynode *v, enpu_board_target *t)
{
	static const char *const what[] = {"'array' rows", "'array' cols"};
	int64_t rc[2];

	if (enpu_yread_ints(c, v, "'array'", "two integers [rows, cols]",
			    "write array: [rows, cols], e.g. array: [8, 8]", 2, what, 1, MAX_ARRAY, rc))
		return -1;
	t->rows = (int)rc[0];
	t->cols = (int)rc[1];
	return 0;
}

static int parse_pl_ops(const enpu_yread *c, const enpu_ynode *v, enpu_board_target *t)
{
	const char *all[ENPU_OP_COUNT + 1], *pl[ENPU_OP_COUNT + 1];
	char list[512], fix[600];

	op_names(ENPU_OPS_ALL, all);
	op_names(enpu_opmask_or(ENPU_PL_GEMMS, ENPU_PL_ELEMENTWISE), pl);
	enpu_join(pl, list, sizeof(list));
	if (v->kind != ENPU_YN_SEQ)
		return enpu_yread_fail(c, v, "write pl_ops: [matmul, gemm, conv2d, add, relu]",
			       "'pl_ops' must be a list of op names");
	t->pl_ops = enpu_opmask_none();
	for (size_t i = 0; i < v->n; i++) {
		const enpu_ynode *it = v->kids[i];
		const enpu_opdef *d = it->kind == ENPU_YN_SCALAR ? enpu_op_by_name(it->text) : NULL;

		if (!d) {
			const char *near = it->kind == ENPU_YN_SCALAR ? enpu_closest(it->text, all) : NULL;

			snprintf(fix, sizeof(fix), "the PL takes: %s", list);
			return enpu_yread_fail(c, it, fix, "unknown op '%.64s' in 'pl_ops'%s%s%s", enpu_ynode_txt(it),
				       near ? " (did you mean '" : "", near ? near : "",
				       near ? "'?)" : "");
		}
		if (!enpu_opmask_has(enpu_opmask_or(ENPU_PL_GEMMS, ENPU_PL_ELEMENTWISE), d->id)) {
			snprintf(fix, sizeof(fix), "leave it out (it runs on the PS); the PL takes: %s",
				 list);
			return enpu_yread_fail(c, it, fix,
				       "op '%s' in 'pl_ops' cannot run on the PL: it takes GEMM-class and elementwise ops only",
				       d->name);
		}
		enpu_opmask_set(&t->pl_ops, d->id);
	}
	return 0;
}

/* fpga_board's fields: the cpu and the PL's (v indexed by F_*). */
static int parse_pl_fields(const enpu_yread *c, const enpu_ynode *const *v, enpu_board_target *t)
{
	int64_t x;
	int idx;

	if (v[F_CPU]) {
		if (enpu_yread_choice(c, v[F_CPU], "cpu", cpu_names, &idx))
			return -1;
		t->cpu = (enpu_board_cpu)idx;
	}
	if (v[F_ARRAY] && parse_array(c, v[F_ARRAY], t))
		return -1;
	if (v[F_DATAFLOW]) {
		if (enpu_yread_choice(c, v[F_DATAFLOW], "dataflow", df_names, &idx))
			return -1;
		t->dataflow = (enpu_dataflow)idx;
	}
	if (v[F_BUFFER]) {
		if (enpu_yread_int(c, v[F_BUFFER], "'buffer_kib'", 1, MAX_BUFFER_KIB, &x))
			return -1;
		t->buffer_kib = (uint32_t)x;
	}
	if (v[F_MAXDIM]) {
		if (enpu_yread_int(c, v[F_MAXDIM], "'max_dim'", 1, MAX_DIM_LIMIT, &x))
			return -1;
		t->max_dim = x;
	}
	if (v[F_DMA]) {
		if (enpu_yread_int(c, v[F_DMA], "'dma_bytes_per_cycle'", 1, MAX_DMA, &x))
			return -1;
		t->dma_bytes_per_cycle = (uint32_t)x;
	}
	if (v[F_CLOCK] && enpu_yread_pos(c, v[F_CLOCK], "'clock_mhz'", 1e6, NULL, &t->clock_mhz))
		return -1;
	if (v[F_PLOPS] && parse_pl_ops(c, v[F_PLOPS], t))
		return -1;
	return 0;
}

int enpu_board_target_parse(const enpu_backend_def *d, const enpu_ynode *node,
			    const char *label, enpu_board_target *t, enpu_err *e)
{
	const enpu_ynode *v[F_COUNT];
	const char *const *fields = d->pl ? fpga_fields : zynq_fields;
	char what[64];
	enpu_yread c = {label ? label : "target", ENPU_E_TARGET, e};
	int idx;

	snprintf(what, sizeof(what), "the %s target", d->name);
	enpu_board_target_default(d, t);
	if (!node || enpu_ynode_null(node))
		return 0;
	if (node->kind != ENPU_YN_MAP) {
		char list[256];

		enpu_join(fields, list, sizeof(list));
		return enpu_yread_fail(&c, node, NULL, "%s must be a mapping of fields (%s)", what, list);
	}
	if (split(&c, what, node, fields, v))
		return -1;
	if (!t->pl) {
		/* zynq_fields is {"cpu"}: its one slot is v[0] */
		if (v[0] && enpu_yread_choice(&c, v[0], "cpu", cpu_names, &idx))
			return -1;
		if (v[0])
			t->cpu = (enpu_board_cpu)idx;
		return 0;
	}
	return parse_pl_fields(&c, v, t);
}

/* ---- JSON --------------------------------------------------------------- */

json_object *enpu_board_target_json(const enpu_board_target *t)
{
	json_object *o = json_object_new_object(), *a;
	const char *names[ENPU_OP_COUNT + 1];
	int bad = !o, n = 0;

	if (bad)
		return NULL;
	if (!t->pl) {
		enpu_json_put(o, "cpu", json_object_new_string(enpu_board_cpu_name(t->cpu)), &bad);
		goto out;
	}
	/* keys in sorted order: json-c keeps insertion order */
	if ((a = json_object_new_array())) {
		enpu_json_push(a, json_object_new_int(t->rows), &bad);
		enpu_json_push(a, json_object_new_int(t->cols), &bad);
	}
	enpu_json_put(o, "array", a, &bad);
	enpu_json_put(o, "buffer_kib", json_object_new_int64(t->buffer_kib), &bad);
	enpu_json_put(o, "clock_mhz", enpu_json_exact_double(t->clock_mhz), &bad);
	enpu_json_put(o, "cpu", json_object_new_string(enpu_board_cpu_name(t->cpu)), &bad);
	enpu_json_put(o, "dataflow", json_object_new_string(df_names[t->dataflow <= ENPU_DF_IS ? t->dataflow : 0]),
	    &bad);
	enpu_json_put(o, "dma_bytes_per_cycle", json_object_new_int64(t->dma_bytes_per_cycle), &bad);
	enpu_json_put(o, "max_dim", json_object_new_int64(t->max_dim), &bad);
	op_names(t->pl_ops, names);
	while (names[n])
		n++;
	qsort(names, (size_t)n, sizeof(names[0]), enpu_cmp_strptr);
	if ((a = json_object_new_array()))
		for (int i = 0; i < n; i++)
			enpu_json_push(a, json_object_new_string(names[i]), &bad);
	enpu_json_put(o, "pl_ops", a, &bad);
out:
	if (bad) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static int read_pl_ops(enpu_jread *r, json_object *v, enpu_board_target *t)
{
	if (!json_object_is_type(v, json_type_array))
		return enpu_jread_fail(r, "'pl_ops' is not a list");
	t->pl_ops = enpu_opmask_none();
	for (size_t i = 0; i < json_object_array_length(v); i++) {
		json_object *it = json_object_array_get_idx(v, i);
		const enpu_opdef *od = json_object_is_type(it, json_type_string) ?
			enpu_op_by_name(json_object_get_string(it)) : NULL;

		if (!od || !enpu_opmask_has(enpu_opmask_or(ENPU_PL_GEMMS, ENPU_PL_ELEMENTWISE), od->id))
			return enpu_jread_fail(r, "'pl_ops' entry %zu is not an op the PL takes", i);
		enpu_opmask_set(&t->pl_ops, od->id);
	}
	return 0;
}

int enpu_board_target_from_json(const enpu_backend_def *d, json_object *o, const char *label,
				enpu_board_target *t, enpu_err *e)
{
	char what[64];
	enpu_jread r = {label ? label : "target", what, e};
	json_object *v[F_COUNT];
	int64_t x[3], rc[2];
	int idx[2];

	snprintf(what, sizeof(what), "%s target", d->name);
	enpu_board_target_default(d, t);
	if (!t->pl) {
		/* zynq_fields is {"cpu"}: its one slot is v[0] */
		if (enpu_jread_fields(&r, o, zynq_fields, v) ||
		    enpu_jread_choice(&r, v[0], "cpu", cpu_names, &idx[0]))
			return -1;
		t->cpu = (enpu_board_cpu)idx[0];
		return 0;
	}
	if (enpu_jread_fields(&r, o, fpga_fields, v) ||
	    enpu_jread_choice(&r, v[F_CPU], "cpu", cpu_names, &idx[0]) ||
	    enpu_jread_ints(&r, v[F_ARRAY], "array", 2, 1, MAX_ARRAY, rc) ||
	    enpu_jread_int(&r, v[F_BUFFER], "buffer_kib", 1, MAX_BUFFER_KIB, &x[0]) ||
	    enpu_jread_int(&r, v[F_MAXDIM], "max_dim", 1, MAX_DIM_LIMIT, &x[1]) ||
	    enpu_jread_int(&r, v[F_DMA], "dma_bytes_per_cycle", 1, MAX_DMA, &x[2]) ||
	    enpu_jread_choice(&r, v[F_DATAFLOW], "dataflow", df_names, &idx[1]) ||
	    enpu_jread_num(&r, v[F_CLOCK], "clock_mhz", 0, 1e6, &t->clock_mhz) ||
	    read_pl_ops(&r, v[F_PLOPS], t))
		return -1;
	t->cpu = (enpu_board_cpu)idx[0];
	t->rows = (int)rc[0];
	t->cols = (int)rc[1];
	t->buffer_kib = (uint32_t)x[0];
	t->max_dim = x[1];
	t->dma_bytes_per_cycle = (uint32_t)x[2];
	t->dataflow = (enpu_dataflow)idx[1];
	return 0;
}

/* ---- the options hooks of both board backends (backend.h) -------------- */

int enpu_board_opts_parse(const enpu_backend_def *d, void *o, const enpu_ynode *node,
			  const char *label, enpu_err *e)
{
	if (enpu_backend_need_map(d, node, label, e) < 0)
		return -1;
	return enpu_board_target_parse(d, node, label, o, e);
}

json_object *enpu_board_opts_json(const void *o)
{
	return enpu_board_target_json(o);
}

int enpu_board_opts_from_json(const enpu_backend_def *d, void *o, json_object *v,
			      const char *label, enpu_err *e)
{
	return enpu_board_target_from_json(d, v, label, o, e);
}

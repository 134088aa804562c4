/* npu_target.c: the npu_sim target description: defaults, from YAML
 * (targets.npu_sim or a target file, errors at file:line:col), and its
 * canonical JSON both ways (manifest.json, the cache key). The fields and
 * their limits: docs/npu-sim.md, "The target". */
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "npusim.h"
#include "json.h"
#include "spec_int.h"

#define MAX_ARRAY 4096
#define MAX_SRAM_KIB 1048576
#define MAX_WORD_BYTES 8
#define MAX_LANES 65536

static const char *const df_names[] = {"os", "ws", "is", NULL};
static const char *const sram_names[] = {"ifmap", "filter", "ofmap", NULL};

const char *enpu_npu_sram_name(int i)
{
	return i >= 0 && i < ENPU_SRAM_COUNT ? sram_names[i] : "?";
}

/* The target's fields, sorted: the order of the canonical JSON too. */
enum { F_ARRAY, F_CLOCK, F_DATAFLOW, F_DRAM, F_OPS, F_COMPAT, F_SRAM, F_LANES,
       F_WORD, F_COUNT };
static const char *const field_names[] = {
	"array", "clock_mhz", "dataflow", "dram_bytes_per_cycle", "ops",
	"scalesim_compat", "sram_kib", "vector_lanes", "word_bytes", NULL};

/* ---- target ------------------------------------------------------------- */

void enpu_npu_target_default(enpu_npu_target *t)
{
	memset(t, 0, sizeof(*t));
	t->rows = 16;
	t->cols = 16;
	t->dataflow = ENPU_DF_OS;
	for (int i = 0; i < ENPU_SRAM_COUNT; i++)
		t->sram_kib[i] = 64;
	t->word_bytes = 4;
	t->dram_bytes_per_cycle = 0;
	t->clock_mhz = 1000;
	t->vector_lanes = 16;
	t->ops = ENPU_OPS_ALL;
	t->ops_given = 0;
	t->scalesim_compat = 0;
}

/* The op names in table order, NULL-terminated (ENPU_OP_COUNT + 1 slots). */
static void op_name_list(const char **names)
{
	int n = 0;

	for (int i = 0; i < ENPU_OP_COUNT; i++)
		names[n++] = enpu_op_by_id((enpu_opid)i)->name;
	names[n] = NULL;
}

/* Split a mapping into its allowed keys; unknown or duplicate keys fail. */
static int split(const enpu_yread *c, const enpu_ynode *map, const char *const *allowed,
		 const enpu_ynode **keys, const enpu_ynode **vals, const char *in_what)
{
	return enpu_yaml_fields(map, allowed, in_what, c->label, ENPU_E_TARGET, ENPU_YF_FIELD, keys,
				vals, c->e);
}

static int parse_array(const enpu_yread *c, const enpu_ynode *v, enpu_npu_target *t)
{
	static const char *const what[] = {"'array' rows", "'array' cols"};
	int64_t rc[2];

	if (enpu_yread_ints(c, v, "'array'", "two integers [rows, cols]",
			    "write array: [rows, cols], e.g. array: [16, 16]", 2, what, 1, MAX_ARRAY, rc))
		return -1;
	t->rows = (int)rc[0];
	t->cols = (int)rc[1];
	return 0;
}

static int parse_dataflow(const enpu_yread *c, const enpu_ynode *v, enpu_npu_target *t)
{
	if (v->kind == ENPU_YN_SCALAR)
		for (int i = 0; df_names[i]; i++)
			if (strcmp(v->text, df_names[i]) == 0) {
				t->dataflow = (enpu_dataflow)i;
				return 0;
			}
	return enpu_yread_fail(c, v, "os = output stationary, ws = weight stationary, is = input stationary",
		       "'dataflow' must be one of os, ws, is (got '%.32s')", enpu_ynode_txt(v));
}

static int parse_sram(const enpu_yread *c, const enpu_ynode *v, enpu_npu_target *t)
{
	const enpu_ynode *k[ENPU_SRAM_COUNT], *val[ENPU_SRAM_COUNT];
	char what[32];
	int64_t x;

	if (v->kind != ENPU_YN_MAP)
		return enpu_yread_fail(c, v, "write sram_kib: {ifmap: 64, filter: 64, ofmap: 64}",
			       "'sram_kib' must be a mapping of ifmap, filter, ofmap to KiB");
	if (split(c, v, sram_names, k, val, "in 'sram_kib'"))
		return -1;
	for (int i = 0; i < ENPU_SRAM_COUNT; i++) {
		if (!val[i] || enpu_ynode_null(val[i]))
			continue;
		snprintf(what, sizeof(what), "'sram_kib.%s'", sram_names[i]);
		if (enpu_yread_int(c, val[i], what, 1, MAX_SRAM_KIB, &x))
			return -1;
		t->sram_kib[i] = (uint32_t)x;
	}
	return 0;
}

static int parse_ops(const enpu_yread *c, const enpu_ynode *v, enpu_npu_target *t)
{
	const char *names[ENPU_OP_COUNT + 1];

	op_name_list(names);
	if (v->kind != ENPU_YN_SEQ)
		return enpu_yread_fail(c, v, "write ops: [matmul, add, relu]",
			       "'ops' must be a list of op names");
	t->ops = enpu_opmask_none();
	t->ops_given = 1;
	for (size_t i = 0; i < v->n; i++) {
		const enpu_ynode *it = v->kids[i];
		const enpu_opdef *d = it->kind == ENPU_YN_SCALAR ? enpu_op_by_name(it->text) : NULL;

		if (!d) {
			char list[512], fix[600];
			const char *near = it->kind == ENPU_YN_SCALAR ? enpu_closest(it->text, names) : NULL;

			enpu_join(names, list, sizeof(list));
			snprintf(fix, sizeof(fix), "known ops: %s", list);
			return enpu_yread_fail(c, it, fix, "unknown op '%.64s' in 'ops'%s%s%s", enpu_ynode_txt(it),
				       near ? " (did you mean '" : "", near ? near : "",
				       near ? "'?)" : "");
		}
		enpu_opmask_set(&t->ops, d->id);
	}
	return 0;
}

int enpu_npu_target_parse(const enpu_ynode *node, const char *label, enpu_npu_target *t,
			  enpu_err *e)
{
	const enpu_ynode *k[F_COUNT], *v[F_COUNT];
	enpu_yread c = {label ? label : "target", ENPU_E_TARGET, e};
	int64_t x;

	enpu_npu_target_default(t);
	if (!node || enpu_ynode_null(node))
		return 0;
	if (node->kind != ENPU_YN_MAP) {
		char list[256];

		enpu_join(field_names, list, sizeof(list));
		return enpu_yread_fail(&c, node, NULL, "the npu_sim target must be a mapping of fields (%s)",
			       list);
	}
	if (split(&c, node, field_names, k, v, "in the npu_sim target"))
		return -1;
	/* a field written as null (`clock_mhz:`) keeps its default */
	for (int i = 0; i < F_COUNT; i++)
		if (v[i] && enpu_ynode_null(v[i]))
			k[i] = v[i] = NULL;
	if (v[F_ARRAY] && parse_array(&c, v[F_ARRAY], t))
		return -1;
	if (v[F_DATAFLOW] && parse_dataflow(&c, v[F_DATAFLOW], t))
		return -1;
	if (v[F_SRAM] && parse_sram(&c, v[F_SRAM], t))
		return -1;
	if (v[F_WORD]) {
		if (enpu_yread_int(&c, v[F_WORD], "'word_bytes'", 1, MAX_WORD_BYTES, &x))
			return -1;
		t->word_bytes = (int)x;
	}
	if (v[F_DRAM] && enpu_yread_pos(&c, v[F_DRAM], "'dram_bytes_per_cycle'", INFINITY,
				       "leave it out for unlimited bandwidth (no stalls)",
				       &t->dram_bytes_per_cycle))
		return -1;
	if (v[F_CLOCK] && enpu_yread_pos(&c, v[F_CLOCK], "'clock_mhz'", INFINITY, NULL, &t->clock_mhz))
		return -1;
	if (v[F_LANES]) {
		if (enpu_yread_int(&c, v[F_LANES], "'vector_lanes'", 1, MAX_LANES, &x))
			return -1;
		t->vector_lanes = (int)x;
	}
	if (v[F_OPS] && parse_ops(&c, v[F_OPS], t))
		return -1;
	if (v[F_COMPAT] && enpu_ynode_bool(v[F_COMPAT], &t->scalesim_compat))
		return enpu_yread_fail(&c, v[F_COMPAT], NULL, "'scalesim_compat' must be true or false (got '%.32s')",
			       enpu_ynode_txt(v[F_COMPAT]));
	if (t->scalesim_compat) {
		if (v[F_WORD] && t->word_bytes != 1)
			return enpu_yread_fail(&c, v[F_WORD], "drop 'word_bytes' or set it to 1",
				       "'word_bytes: %d' conflicts with 'scalesim_compat: true', which counts 1-byte words as SCALE-Sim does",
				       t->word_bytes);
		t->word_bytes = 1;
		/* SCALE-Sim's Bandwidth: whole words per cycle per memory */
		if (v[F_DRAM] && t->dram_bytes_per_cycle != floor(t->dram_bytes_per_cycle))
			return enpu_yread_fail(&c, v[F_DRAM], "round it to a whole number",
				       "'dram_bytes_per_cycle: %g' with 'scalesim_compat: true' must be a whole number (SCALE-Sim's Bandwidth, words per cycle)",
				       t->dram_bytes_per_cycle);
	}
	return 0;
}

json_object *enpu_npu_target_json(const enpu_npu_target *t)
{
	json_object *o = json_object_new_object(), *a, *s;
	int bad = !o;

	if (bad)
		return NULL;
	/* keys in sorted order: json-c keeps insertion order */
	a = json_object_new_array();
	if (a) {
		enpu_json_push(a, json_object_new_int(t->rows), &bad);
		enpu_json_push(a, json_object_new_int(t->cols), &bad);
	}
	enpu_json_put(o, "array", a, &bad);
	enpu_json_put(o, "clock_mhz", enpu_json_exact_double(t->clock_mhz), &bad);
	enpu_json_put(o, "dataflow", json_object_new_string(df_names[t->dataflow <= ENPU_DF_IS ? t->dataflow : 0]), &bad);
	enpu_json_put(o, "dram_bytes_per_cycle", enpu_json_exact_double(t->dram_bytes_per_cycle), &bad);
	if (t->ops_given) {
		const char *names[ENPU_OP_COUNT];
		int n = 0;

		for (int i = 0; i < ENPU_OP_COUNT; i++)
			if (enpu_opmask_has(t->ops, i))
				names[n++] = enpu_op_by_id((enpu_opid)i)->name;
		qsort(names, (size_t)n, sizeof(names[0]), enpu_cmp_strptr);
		a = json_object_new_array();
		for (int i = 0; a && i < n; i++)
			enpu_json_push(a, json_object_new_string(names[i]), &bad);
		enpu_json_put(o, "ops", a, &bad);
	} else if (json_object_object_add(o, "ops", NULL)) {
		bad = 1;
	}
	enpu_json_put(o, "scalesim_compat", json_object_new_boolean(t->scalesim_compat), &bad);
	s = json_object_new_object();
	if (s) {
		enpu_json_put(s, "filter", json_object_new_int64(t->sram_kib[ENPU_SRAM_FILTER]), &bad);
		enpu_json_put(s, "ifmap", json_object_new_int64(t->sram_kib[ENPU_SRAM_IFMAP]), &bad);
		enpu_json_put(s, "ofmap", json_object_new_int64(t->sram_kib[ENPU_SRAM_OFMAP]), &bad);
	}
	enpu_json_put(o, "sram_kib", s, &bad);
	enpu_json_put(o, "vector_lanes", json_object_new_int(t->vector_lanes), &bad);
	enpu_json_put(o, "word_bytes", json_object_new_int(t->word_bytes), &bad);
	if (bad) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* ---- target from JSON --------------------------------------------------- */

static int read_ops(enpu_jread *r, json_object *v, enpu_npu_target *t)
{
	if (!v)
		return 0;
	if (!json_object_is_type(v, json_type_array))
		return enpu_jread_fail(r, "'ops' is neither null nor a list");
	t->ops = enpu_opmask_none();
	t->ops_given = 1;
	for (size_t i = 0; i < json_object_array_length(v); i++) {
		json_object *x = json_object_array_get_idx(v, i);
		const enpu_opdef *d = json_object_is_type(x, json_type_string) ?
			enpu_op_by_name(json_object_get_string(x)) : NULL;

		if (!d)
			return enpu_jread_fail(r, "'ops' names an unknown op");
		enpu_opmask_set(&t->ops, d->id);
	}
	return 0;
}

static int read_sram(enpu_jread *r, json_object *v, enpu_npu_target *t)
{
	json_object *x[ENPU_SRAM_COUNT];
	int64_t n;
	enpu_jread rs = *r;

	rs.what = "npu_sim target: 'sram_kib'";
	if (enpu_jread_fields(&rs, v, sram_names, x))
		return -1;
	for (int i = 0; i < ENPU_SRAM_COUNT; i++) {
		if (enpu_jread_int(r, x[i], sram_names[i], 1, MAX_SRAM_KIB, &n))
			return -1;
		t->sram_kib[i] = (uint32_t)n;
	}
	return 0;
}

int enpu_npu_target_from_json(json_object *o, const char *label, enpu_npu_target *t,
			      enpu_err *e)
{
	enpu_jread r = {label ? label : "manifest.json", "npu_sim target", e};
	json_object *v[F_COUNT];
	int64_t rc[2], lanes, word;
	int df;

	enpu_npu_target_default(t);
	if (enpu_jread_fields(&r, o, field_names, v) ||
	    enpu_jread_ints(&r, v[F_ARRAY], "array", 2, 1, MAX_ARRAY, rc) ||
	    enpu_jread_num(&r, v[F_CLOCK], "clock_mhz", 0, HUGE_VAL, &t->clock_mhz) ||
	    enpu_jread_num(&r, v[F_DRAM], "dram_bytes_per_cycle", 1, HUGE_VAL,
			   &t->dram_bytes_per_cycle) ||
	    enpu_jread_choice(&r, v[F_DATAFLOW], "dataflow", df_names, &df) ||
	    read_ops(&r, v[F_OPS], t))
		return -1;
	if (!json_object_is_type(v[F_COMPAT], json_type_boolean))
		return enpu_jread_fail(&r, "'scalesim_compat' is not a boolean");
	if (read_sram(&r, v[F_SRAM], t) ||
	    enpu_jread_int(&r, v[F_LANES], "vector_lanes", 1, MAX_LANES, &lanes) ||
	    enpu_jread_int(&r, v[F_WORD], "word_bytes", 1, MAX_WORD_BYTES, &word))
		return -1;
	t->rows = (int)rc[0];
	t->cols = (int)rc[1];
	t->dataflow = (enpu_dataflow)df;
	t->scalesim_compat = json_object_get_boolean(v[F_COMPAT]) ? 1 : 0;
	t->vector_lanes = (int)lanes;
	t->word_bytes = (int)word;
	if (t->scalesim_compat && t->word_bytes != 1)
		return enpu_jread_fail(&r, "'word_bytes' is %d with scalesim_compat (must be 1)",
				       t->word_bytes);
	if (t->scalesim_compat && t->dram_bytes_per_cycle != floor(t->dram_bytes_per_cycle))
		return enpu_jread_fail(&r, "'dram_bytes_per_cycle' is %g with scalesim_compat (must be whole)",
				       t->dram_bytes_per_cycle);
	return 0;
}

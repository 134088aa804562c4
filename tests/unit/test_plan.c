/* test_plan.c: the memory planner on hand-built graphs, and plan.json both
 * ways (including plans that must be refused). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "plan.h"
#include "ops.h"

/* A graph builder: tensors and ops appended by name. */
static enpu_graph *mk(void)
{
	enpu_graph *g = calloc(1, sizeof(*g));
	g->name = strdup("t");
	g->backend = strdup("cpu_ref");
	g->tensors = calloc(32, sizeof(*g->tensors));
	g->ops = calloc(32, sizeof(*g->ops));
	g->inputs = calloc(32, sizeof(int));
	g->outputs = calloc(32, sizeof(int));
	g->components = calloc(1, sizeof(char *));
	g->components[0] = strdup("c");
	g->n_components = 1;
	return g;
}

static int tens(enpu_graph *g, const char *name, enpu_tkind kind, int64_t n, int out)
{
	enpu_irtensor *t = &g->tensors[g->n_tensors];
	t->name = strdup(name);
	t->dtype = ENPU_DT_F32;
	t->shape.ndim = 2;
	t->shape.dim[0] = 1;
	t->shape.dim[1] = n;
	t->kind = kind;
	t->is_output = out;
	t->producer = t->last_use = -1;
	if (kind == ENPU_TK_INPUT)
		g->inputs[g->n_inputs++] = g->n_tensors;
	if (out)
		g->outputs[g->n_outputs++] = g->n_tensors;
	return g->n_tensors++;
}

static void op(enpu_graph *g, const char *name, const char *kind, int a, int b, int out)
{
	enpu_irop *o = &g->ops[g->n_ops];
	o->name = strdup(name);
	o->def = enpu_op_by_name(kind);
	o->n_in = b < 0 ? 1 : 2;
	o->in = malloc(sizeof(int) * 2);
	o->in[0] = a;
	o->in[1] = b;
	o->n_out = 1;
	o->out = malloc(sizeof(int));
	o->out[0] = out;
	enpu_attrs_defaults(o->def, &o->attrs);
	g->tensors[out].producer = g->n_ops;
	g->tensors[a].last_use = g->n_ops;
	if (b >= 0)
		g->tensors[b].last_use = g->n_ops;
	g->n_ops++;
}

/* Independent of enpu_plan_verify: live-at-once buffers never share bytes. */
static void assert_sound(const enpu_graph *g, const enpu_plan *p)
{
	for (int i = 0; i < p->n_bufs; i++) {
		const enpu_plan_buf *x = &p->bufs[i];
		cr_assert_eq(x->offset % 64, 0);
		cr_assert(x->offset + x->bytes <= p->arena_bytes);
		for (int j = i + 1; j < p->n_bufs; j++) {
			const enpu_plan_buf *y = &p->bufs[j];
			int live = x->first_op <= y->last_op && y->first_op <= x->last_op;
			int mem = x->offset < y->offset + y->bytes && y->offset < x->offset + x->bytes;
			cr_assert(!(live && mem), "'%s' and '%s' overlap while both live",
				  g->tensors[x->tensor].name, g->tensors[y->tensor].name);
		}
	}
	enpu_err e = ENPU_ERR_INIT;
	cr_assert_eq(enpu_plan_verify(g, p, "plan.json", &e), 0, "%s", e.message);
}

static const enpu_plan_buf *buf_of(const enpu_graph *g, const enpu_plan *p, const char *n)
{
	int t = enpu_graph_find(g, n);
	cr_assert(t >= 0);
	cr_assert(p->tensor_buf[t] >= 0);
	return &p->bufs[p->tensor_buf[t]];
}

static enpu_graph *chain(void)
{
	enpu_graph *g = mk();
	int x = tens(g, "x", ENPU_TK_INPUT, 16, 0);
	int a = tens(g, "a", ENPU_TK_INTERMEDIATE, 16, 0);
	int b = tens(g, "b", ENPU_TK_INTERMEDIATE, 16, 0);
	int c = tens(g, "c", ENPU_TK_INTERMEDIATE, 16, 0);
	int d = tens(g, "d", ENPU_TK_INTERMEDIATE, 16, 1);
	op(g, "r1", "relu", x, -1, a);
	op(g, "r2", "relu", a, -1, b);
	op(g, "r3", "relu", b, -1, c);
	op(g, "r4", "relu", c, -1, d);
	return g;
}

Test(plan, chain_shares_two_buffers)
{
	enpu_graph *g = chain();
	enpu_plan p = ENPU_PLAN_INIT;
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(enpu_plan_build(g, &p, &e), 0, "%s", e.message);
	cr_assert_eq(p.n_bufs, 4);
	cr_assert_eq(p.arena_bytes, 2 * 64, "arena %llu", (unsigned long long)p.arena_bytes);
	/* a and c do not live together: they share; b does not share with either */
	cr_assert_eq(buf_of(g, &p, "a")->offset, buf_of(g, &p, "c")->offset);
	cr_assert_neq(buf_of(g, &p, "a")->offset, buf_of(g, &p, "b")->offset);
	assert_sound(g, &p);
	enpu_plan_free(&p);
	enpu_graph_free(g);
}

Test(plan, diamond_keeps_live_tensors_apart)
{
	enpu_graph *g = mk();
	int x = tens(g, "x", ENPU_TK_INPUT, 8, 0);
	int a = tens(g, "a", ENPU_TK_INTERMEDIATE, 8, 0);
	int b = tens(g, "b", ENPU_TK_INTERMEDIATE, 8, 0);
	int c = tens(g, "c", ENPU_TK_INTERMEDIATE, 8, 0);
	int d = tens(g, "d", ENPU_TK_INTERMEDIATE, 8, 1);
	enpu_plan p = ENPU_PLAN_INIT;
	enpu_err e = ENPU_ERR_INIT;

	op(g, "o1", "relu", x, -1, a);
	op(g, "o2", "relu", a, -1, b);
	op(g, "o3", "relu", a, -1, c);
	op(g, "o4", "add", b, c, d);
	cr_assert_eq(enpu_plan_build(g, &p, &e), 0, "%s", e.message);
	cr_assert_eq(buf_of(g, &p, "a")->last_op, 2);
	cr_assert_neq(buf_of(g, &p, "a")->offset, buf_of(g, &p, "b")->offset);
	cr_assert_neq(buf_of(g, &p, "a")->offset, buf_of(g, &p, "c")->offset);
	cr_assert_neq(buf_of(g, &p, "b")->offset, buf_of(g, &p, "c")->offset);
	/* d is written while b and c are read: it cannot take their bytes */
	cr_assert_neq(buf_of(g, &p, "d")->offset, buf_of(g, &p, "b")->offset);
	cr_assert_neq(buf_of(g, &p, "d")->offset, buf_of(g, &p, "c")->offset);
	assert_sound(g, &p);
	cr_assert_eq(p.arena_bytes, 3 * 64);
	enpu_plan_free(&p);
	enpu_graph_free(g);
}

Test(plan, outputs_live_to_the_end)
{
	enpu_graph *g = mk();
	int x = tens(g, "x", ENPU_TK_INPUT, 16, 0);
	int y = tens(g, "y", ENPU_TK_INTERMEDIATE, 16, 1);
	int a = tens(g, "a", ENPU_TK_INTERMEDIATE, 16, 0);
	int b = tens(g, "b", ENPU_TK_INTERMEDIATE, 16, 0);
	int z = tens(g, "z", ENPU_TK_INTERMEDIATE, 16, 1);
	enpu_plan p = ENPU_PLAN_INIT;
	enpu_err e = ENPU_ERR_INIT;

	op(g, "o1", "relu", x, -1, y);   /* y: an output nobody reads */
	op(g, "o2", "relu", x, -1, a);
	op(g, "o3", "relu", a, -1, b);
	op(g, "o4", "relu", b, -1, z);
	cr_assert_eq(enpu_plan_build(g, &p, &e), 0, "%s", e.message);
	cr_assert_eq(buf_of(g, &p, "y")->first_op, 0);
	cr_assert_eq(buf_of(g, &p, "y")->last_op, 3);
	cr_assert_eq(buf_of(g, &p, "z")->last_op, 3);
	for (int i = 0; i < p.n_bufs; i++)
		if (p.bufs[i].tensor != y)
			cr_assert_neq(p.bufs[i].offset, buf_of(g, &p, "y")->offset);
	assert_sound(g, &p);
	enpu_plan_free(&p);
	enpu_graph_free(g);
}

Test(plan, offsets_are_aligned)
{
	enpu_graph *g = mk();
	int x = tens(g, "x", ENPU_TK_INPUT, 3, 0);
	int a = tens(g, "a", ENPU_TK_INTERMEDIATE, 3, 0);     /* 12 bytes */
	int b = tens(g, "b", ENPU_TK_INTERMEDIATE, 3, 0);
	int c = tens(g, "c", ENPU_TK_INTERMEDIATE, 3, 1);
	enpu_plan p = ENPU_PLAN_INIT;
	enpu_err e = ENPU_ERR_INIT;

	op(g, "o1", "relu", x, -1, a);
	op(g, "o2", "relu", a, -1, b);
	op(g, "o3", "add", a, b, c);
	cr_assert_eq(enpu_plan_build(g, &p, &e), 0, "%s", e.message);
	for (int i = 0; i < p.n_bufs; i++) {
		cr_assert_eq(p.bufs[i].offset % 64, 0);
		cr_assert_eq(p.bufs[i].bytes, 12);
	}
	cr_assert_eq(p.arena_bytes % 64, 0);
	cr_assert_eq(p.arena_bytes, 3 * 64);
	/* the bound counts each live buffer as its aligned size */
	cr_assert_eq(p.lower_bound, 3 * 64);
	assert_sound(g, &p);
	enpu_plan_free(&p);
	enpu_graph_free(g);
}

Test(plan, biggest_first_fills_gaps)
{
	/* a big tensor dies early; two small ones later fit in its bytes */
	enpu_graph *g = mk();
	int x = tens(g, "x", ENPU_TK_INPUT, 64, 0);
	int big = tens(g, "big", ENPU_TK_INTERMEDIATE, 64, 0);   /* 256 B */
	int s1 = tens(g, "s1", ENPU_TK_INTERMEDIATE, 16, 0);
	int s2 = tens(g, "s2", ENPU_TK_INTERMEDIATE, 16, 0);
	int s3 = tens(g, "s3", ENPU_TK_INTERMEDIATE, 16, 1);
	enpu_plan p = ENPU_PLAN_INIT;
	enpu_err e = ENPU_ERR_INIT;

	op(g, "o1", "relu", x, -1, big);
	g->tensors[s1].shape = g->tensors[big].shape;   /* placeholder, fixed below */
	g->tensors[s1].shape.dim[1] = 16;
	op(g, "o2", "relu", big, -1, s1);
	op(g, "o3", "relu", s1, -1, s2);
	op(g, "o4", "relu", s2, -1, s3);
	cr_assert_eq(enpu_plan_build(g, &p, &e), 0, "%s", e.message);
	cr_assert_eq(p.arena_bytes, 256 + 64, "arena %llu", (unsigned long long)p.arena_bytes);
	assert_sound(g, &p);
	enpu_plan_free(&p);
	enpu_graph_free(g);
}

Test(plan, json_round_trip)
{
	enpu_graph *g = chain();
	enpu_plan p = ENPU_PLAN_INIT, q = ENPU_PLAN_INIT;
	enpu_buf b = ENPU_BUF_INIT, b2 = ENPU_BUF_INIT;
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(enpu_plan_build(g, &p, &e), 0);
	cr_assert_eq(enpu_plan_to_json(g, &p, &b, &e), 0);
	cr_assert(strstr(b.data, "\"format\": \"eulernpu-plan\""));
	cr_assert(strstr(b.data, "\"alignment\": 64"));
	cr_assert_eq(enpu_plan_from_json(g, b.data, b.len, "plan.json", &q, &e), 0, "%s", e.message);
	cr_assert_eq(q.n_bufs, p.n_bufs);
	cr_assert_eq(q.arena_bytes, p.arena_bytes);
	for (int i = 0; i < p.n_bufs; i++) {
		cr_assert_eq(q.bufs[i].tensor, p.bufs[i].tensor);
		cr_assert_eq(q.bufs[i].offset, p.bufs[i].offset);
		cr_assert_eq(q.bufs[i].first_op, p.bufs[i].first_op);
		cr_assert_eq(q.bufs[i].last_op, p.bufs[i].last_op);
	}
	cr_assert_eq(enpu_plan_to_json(g, &q, &b2, &e), 0);
	cr_assert_str_eq(b.data, b2.data);
	enpu_plan_free(&p);
	enpu_plan_free(&q);
	enpu_buf_free(&b);
	enpu_buf_free(&b2);
	enpu_graph_free(g);
}

static void refuse(const char *from, const char *to)
{
	enpu_graph *g = chain();
	enpu_plan p = ENPU_PLAN_INIT, q = ENPU_PLAN_INIT;
	enpu_buf b = ENPU_BUF_INIT;
	enpu_err e = ENPU_ERR_INIT;
	char *s, *hit;

	cr_assert_eq(enpu_plan_build(g, &p, &e), 0);
	cr_assert_eq(enpu_plan_to_json(g, &p, &b, &e), 0);
	hit = strstr(b.data, from);
	cr_assert(hit, "'%s' not in plan:\n%s", from, b.data);
	s = calloc(1, b.len + strlen(to) + 1);
	memcpy(s, b.data, (size_t)(hit - b.data));
	strcat(s, to);
	strcat(s, hit + strlen(from));
	cr_assert_eq(enpu_plan_from_json(g, s, strlen(s), "plan.json", &q, &e), -1,
		     "accepted:\n%s", s);
	cr_assert_eq(e.code, ENPU_E_ARTIFACT);
	cr_assert_str_eq(e.where, "plan.json");
	free(s);
	enpu_plan_free(&p);
	enpu_buf_free(&b);
	enpu_graph_free(g);
}

Test(plan, refuses_bad_plans)
{
	refuse("\"arena_bytes\": 128", "\"arena_bytes\": 64");        /* outside the arena */
	refuse("\"offset\": 64", "\"offset\": 0");                    /* live overlap */
	refuse("\"offset\": 64", "\"offset\": 32");                   /* misaligned */
	refuse("\"bytes\": 64", "\"bytes\": 60");                     /* wrong size */
	refuse("\"first_op\": \"r2\"", "\"first_op\": \"r3\"");       /* wrong lifetime */
	refuse("\"tensor\": \"a\"", "\"tensor\": \"x\"");             /* not an intermediate */
	refuse("\"tensor\": \"a\"", "\"tensor\": 7");                 /* wrong type */
	refuse("\"schedule\": [", "\"schedule\": [ \"r0\",");        /* wrong schedule */
	refuse("\"alignment\": 64", "\"alignment\": 8");
	refuse("\"version\": 1", "\"version\": 2");
	refuse("{", "[");                                              /* not JSON */
}

/* ---- the placement strategies on fixtures with known optima ----------- */

typedef struct fixture {
	enpu_plan_buf b[64];
	int n;
	uint64_t optimum, lower;
	char beats[4][16];
	int n_beats;
} fixture;

static void read_fixture(const char *path, fixture *f)
{
	FILE *fp = fopen(path, "r");
	char line[256], word[16];
	unsigned long long v;

	cr_assert_not_null(fp, "%s", path);
	memset(f, 0, sizeof(*f));
	while (fgets(line, sizeof line, fp)) {
		unsigned long long sz;
		int a, b;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(line, "buffer %llu %d %d", &sz, &a, &b) == 3) {
			cr_assert_lt(f->n, 64);
			f->b[f->n++] = (enpu_plan_buf){.tensor = f->n, .bytes = sz * 64, .first_op = a,
						      .last_op = b};
		} else if (sscanf(line, "optimum %llu", &v) == 1) {
			f->optimum = v * 64;
		} else if (sscanf(line, "lower_bound %llu", &v) == 1) {
			f->lower = v * 64;
		} else if (sscanf(line, "beats %15s", word) == 1) {
			snprintf(f->beats[f->n_beats++], sizeof f->beats[0], "%s", word);
		} else {
			cr_assert_fail("%s: cannot read '%s'", path, line);
		}
	}
	fclose(fp);
	cr_assert(f->n > 0 && f->optimum > 0, "%s: no buffers or no optimum", path);
}

/* every buffer pair that meets is apart, offsets aligned, inside the arena */
static void assert_placed(const fixture *f, uint64_t arena)
{
	for (int i = 0; i < f->n; i++) {
		cr_assert_eq(f->b[i].offset % 64, 0);
		cr_assert_leq(f->b[i].offset + f->b[i].bytes, arena);
		for (int j = i + 1; j < f->n; j++)
			if (f->b[i].first_op <= f->b[j].last_op && f->b[j].first_op <= f->b[i].last_op)
				cr_assert(f->b[i].offset + f->b[i].bytes <= f->b[j].offset ||
					  f->b[j].offset + f->b[j].bytes <= f->b[i].offset,
					  "buffers %d and %d overlap", i, j);
	}
}

Test(plan, fixtures_reach_their_optimum)
{
	static const char *const names[] = {"greedy_size_loses", "every_greedy_loses",
					    "breadth_wins"};

	for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
		char path[256];
		fixture f;
		uint64_t arena, lower;
		const char *strategy;

		snprintf(path, sizeof path, "tests/data/plans/%s.plan", names[k]);
		read_fixture(path, &f);
		cr_assert_eq(enpu_plan_place(f.b, f.n, &arena, &lower, &strategy), 0);
		cr_assert_eq(lower, f.lower, "%s: lower bound %llu", names[k],
			     (unsigned long long)lower);
		cr_assert_eq(arena, f.optimum, "%s: arena %llu by %s, optimum %llu", names[k],
			     (unsigned long long)arena, strategy, (unsigned long long)f.optimum);
		for (int i = 0; i < f.n_beats; i++)
			cr_assert_str_neq(strategy, f.beats[i], "%s: %s won", names[k], strategy);
		assert_placed(&f, arena);
	}
}

/* Where the bound cannot be reached quickly, the best strategy still gives
 * a sound placement no smaller than the bound; and a chain of equal
 * tensors reaches it (two buffers, the bound). */
Test(plan, random_sets_are_sound_and_bounded)
{
	unsigned seed = 12345;

	for (int t = 0; t < 300; t++) {
		fixture f = {.n = 3 + t % 12};
		uint64_t arena, lower;
		const char *strategy;
		for (int i = 0; i < f.n; i++) {
			seed = seed * 1103515245u + 12345u;
			f.b[i].bytes = 1 + (seed >> 8) % 500;
			f.b[i].first_op = (int)((seed >> 20) % 9);
			f.b[i].last_op = f.b[i].first_op + (int)((seed >> 4) % 4);
		}
		cr_assert_eq(enpu_plan_place(f.b, f.n, &arena, &lower, &strategy), 0);
		cr_assert_geq(arena, lower);
		assert_placed(&f, arena);
	}
}

/* plan.json says which strategy won and the lower bound; read back, they
 * are what was written. */
Test(plan, json_names_the_strategy_and_bound)
{
	enpu_graph *g = chain();
	enpu_plan p = ENPU_PLAN_INIT, q = ENPU_PLAN_INIT;
	enpu_err e = ENPU_ERR_INIT;
	enpu_buf out = ENPU_BUF_INIT;

	cr_assert_eq(enpu_plan_build(g, &p, &e), 0, "%s", e.message);
	cr_assert_eq(p.lower_bound, 2 * 64);
	cr_assert_eq(p.arena_bytes, p.lower_bound);
	cr_assert_str_eq(p.strategy, "greedy-size");
	cr_assert_eq(enpu_plan_to_json(g, &p, &out, &e), 0, "%s", e.message);
	cr_assert(strstr(out.data, "\"strategy\": \"greedy-size\""), "%s", out.data);
	cr_assert(strstr(out.data, "\"lower_bound\": 128"), "%s", out.data);
	cr_assert_eq(enpu_plan_from_json(g, out.data, out.len, "plan.json", &q, &e), 0, "%s",
		     e.message);
	cr_assert_str_eq(q.strategy, "greedy-size");
	cr_assert_eq(q.lower_bound, 128);
	enpu_buf_free(&out);
	enpu_plan_free(&p);
	enpu_plan_free(&q);
	enpu_graph_free(g);
}

/* test_npusim_scalesim.c: npu_sim with scalesim_compat against SCALE-Sim
 * v2's own reports, layer by layer: each directory of
 * tests/data/npusim/scalesim/ holds a run's scale.cfg, topology.csv and
 * reports (README.md there says how they were made). Compute cycles, SRAM
 * reads and DRAM reads and writes per operand must be SCALE-Sim's. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "npusim.h"
#include "pipeline.h"
#include "npusim_graphs.h"

#define MAXL 64

typedef struct layer {
	char name[128];
	long long H, W, kh, kw, C, N, S;
	long long cycles, stalls;
	long long sram_if, sram_f, sram_of, dram_if, dram_f, dram_of;
} layer;

typedef struct run {
	int rows, cols;
	enpu_dataflow df;
	uint32_t sram[3];
	double bw;                      /* Bandwidth: words per cycle per memory */
	int user;                       /* InterfaceBandwidth: USER (else CALC) */
	int n;
	layer l[MAXL];
} run;

static FILE *open_run(const char *dir, const char *file)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/npusim/scalesim/%s/%s", tpl_data_dir("npusim"), dir, file);
	f = fopen(path, "r");
	cr_assert(f, "cannot open %s", path);
	return f;
}

/* "Key: value" or "Key = value" lines of scale.cfg. */
static void read_cfg(const char *dir, run *r)
{
	char line[256], key[64], val[64];
	FILE *f = open_run(dir, "scale.cfg");
	int seen = 0;

	while (fgets(line, sizeof(line), f)) {
		char *p = strpbrk(line, ":=");

		if (!p || line[0] == '[')
			continue;
		*p = ' ';
		if (sscanf(line, "%63s %63s", key, val) != 2)
			continue;
		if (!strcmp(key, "ArrayHeight"))
			r->rows = atoi(val), seen++;
		else if (!strcmp(key, "ArrayWidth"))
			r->cols = atoi(val), seen++;
		else if (!strcmp(key, "IfmapSramSzkB"))
			r->sram[0] = (uint32_t)atoi(val), seen++;
		else if (!strcmp(key, "FilterSramSzkB"))
			r->sram[1] = (uint32_t)atoi(val), seen++;
		else if (!strcmp(key, "OfmapSramSzkB"))
			r->sram[2] = (uint32_t)atoi(val), seen++;
		else if (!strcmp(key, "Bandwidth"))
			r->bw = atof(val);
		else if (!strcmp(key, "InterfaceBandwidth"))
			r->user = !strcmp(val, "USER");
		else if (!strcmp(key, "Dataflow"))
			r->df = !strcmp(val, "os") ? ENPU_DF_OS : !strcmp(val, "ws") ? ENPU_DF_WS : ENPU_DF_IS, seen++;
	}
	fclose(f);
	cr_assert_eq(seen, 6, "%s/scale.cfg: %d of the 6 fields", dir, seen);
}

/* The CSV rows after the header, as numbers (the first field kept as text). */
static int read_csv(const char *dir, const char *file, int want, long long v[MAXL][20],
		    char names[MAXL][128])
{
	char line[1024];
	FILE *f = open_run(dir, file);
	int n = 0;

	cr_assert(fgets(line, sizeof(line), f), "%s/%s is empty", dir, file);
	while (n < MAXL && fgets(line, sizeof(line), f)) {
		char *save = NULL, *tok = strtok_r(line, ",", &save);
		int k = 0;

		if (!tok || line[0] == '\n')
			continue;
		if (names)
			snprintf(names[n], 128, "%.120s", tok);
		while ((tok = strtok_r(NULL, ",", &save)) && k < 20)
			if (strspn(tok, " \r\n") != strlen(tok))
				v[n][k++] = (long long)strtod(tok, NULL);
		cr_assert_geq(k, want, "%s/%s row %d: %d fields", dir, file, n + 1, k);
		n++;
	}
	fclose(f);
	return n;
}

static void read_run(const char *dir, run *r)
{
	static long long v[MAXL][20];
	static char names[MAXL][128];
	int n;

	memset(r, 0, sizeof(*r));
	read_cfg(dir, r);
	r->n = read_csv(dir, "topology.csv", 7, v, names);
	for (int i = 0; i < r->n; i++) {
		layer *l = &r->l[i];

		snprintf(l->name, sizeof(l->name), "%.120s", names[i]);
		l->H = v[i][0], l->W = v[i][1], l->kh = v[i][2], l->kw = v[i][3];
		l->C = v[i][4], l->N = v[i][5], l->S = v[i][6];
	}
	n = read_csv(dir, "COMPUTE_REPORT.csv", 2, v, NULL);
	cr_assert_eq(n, r->n, "%s: %d layers in COMPUTE_REPORT, %d in the topology", dir, n, r->n);
	for (int i = 0; i < n; i++)
		r->l[i].cycles = v[i][0], r->l[i].stalls = v[i][1];
	n = read_csv(dir, "DETAILED_ACCESS_REPORT.csv", 18, v, NULL);
	cr_assert_eq(n, r->n, "%s: %d layers in DETAILED_ACCESS_REPORT", dir, n);
	for (int i = 0; i < n; i++) {
		layer *l = &r->l[i];

		l->sram_if = v[i][2], l->sram_f = v[i][5], l->sram_of = v[i][8];
		l->dram_if = v[i][11], l->dram_f = v[i][14], l->dram_of = v[i][17];
	}
}

/* How a layer is built: float32 conv2d / matmul, or spec v3's int8 form
 * (qlinear_conv / qlinear_matmul: int8 in, weights and out; per-channel
 * weight scales and zero points, an int32 bias on the conv), or the
 * integer form (conv_integer / matmul_integer: int8 in, int32 out). */
enum { L_FLOAT, L_QLINEAR, L_INTEGER };

static int qt(enpu_graph *g, const char *name, enpu_dtype dt, int64_t n)
{
	int t = n ? T(g, name, ENPU_TK_WEIGHT, n) : tens(g, name, ENPU_TK_WEIGHT, 0, NULL);

	g->tensors[t].dtype = dt;
	return t;
}

/* The layer as npu_sim sees it: a conv2d with no padding over the input the
 * windows read, or (1x1 input and kernel) the matmul of the fc. */
static enpu_graph *layer_graph_as(const layer *l, int kind)
{
	enpu_graph *g = mk();
	long long oh = (l->H - l->kh) / l->S + 1, ow = (l->W - l->kw) / l->S + 1;
	int fc = l->H == 1 && l->W == 1 && l->kh == 1 && l->kw == 1;
	int x, w, o, in[9], n = 0;
	enpu_irop *c;

	if (fc) {
		x = T(g, "a", ENPU_TK_INPUT, 1, l->C), w = T(g, "b", ENPU_TK_WEIGHT, l->C, l->N);
		o = T(g, "o", ENPU_TK_INTERMEDIATE, 1, l->N);
	} else {
		x = T(g, "x", ENPU_TK_INPUT, 1, l->C, l->H, l->W);
		w = T(g, "w", ENPU_TK_WEIGHT, l->N, l->C, l->kh, l->kw);
		o = T(g, "o", ENPU_TK_INTERMEDIATE, 1, l->N, oh, ow);
	}
	if (kind != L_FLOAT) {
		g->tensors[x].dtype = g->tensors[w].dtype = ENPU_DT_I8;
		g->tensors[o].dtype = kind == L_QLINEAR ? ENPU_DT_I8 : ENPU_DT_I32;
	}
	in[n++] = x;
	if (kind == L_QLINEAR) {
		in[n++] = qt(g, "xs", ENPU_DT_F32, 0), in[n++] = qt(g, "xz", ENPU_DT_I8, 0);
		in[n++] = w;
		in[n++] = qt(g, "ws", ENPU_DT_F32, l->N), in[n++] = qt(g, "wz", ENPU_DT_I8, l->N);
		in[n++] = qt(g, "ys", ENPU_DT_F32, 0), in[n++] = qt(g, "yz", ENPU_DT_I8, 0);
		if (!fc)
			in[n++] = qt(g, "bias", ENPU_DT_I32, l->N);
	} else {
		in[n++] = w;
		if (kind == L_INTEGER)
			in[n++] = qt(g, "xz", ENPU_DT_I8, 0), in[n++] = qt(g, "wz", ENPU_DT_I8, l->N);
	}
	c = op(g, l->name, fc ? (kind == L_QLINEAR ? ENPU_OP_QLINEAR_MATMUL :
				 kind == L_INTEGER ? ENPU_OP_MATMUL_INTEGER : ENPU_OP_MATMUL) :
		  kind == L_QLINEAR ? ENPU_OP_QLINEAR_CONV :
		  kind == L_INTEGER ? ENPU_OP_CONV_INTEGER : ENPU_OP_CONV2D, n, in, o);
	if (!fc)
		c->attrs.strides[0] = c->attrs.strides[1] = (int)l->S;
	return g;
}

static enpu_graph *layer_graph(const layer *l)
{
	return layer_graph_as(l, L_FLOAT);
}

#define SAME(what, got, want) \
	cr_expect_eq((long long)(got), (want), "%s layer %d (%s): " what " %lld, SCALE-Sim %lld", \
		     dir, i, l->name, (long long)(got), (long long)(want))

/* kind L_FLOAT: float32 layers with 1-byte words (scalesim_compat's
 * pretence); L_QLINEAR: the int8 layers, word_bytes left at the float32
 * default of 4: int8 tensors are 1 byte, no pretending needed. */
static void check_run_as(const char *dir, int layers, int kind)
{
	static run r;
	enpu_npu_target t;

	read_run(dir, &r);
	cr_assert_eq(r.n, layers, "%s: %d layers, want %d", dir, r.n, layers);
	enpu_npu_target_default(&t);
	t.rows = r.rows, t.cols = r.cols, t.dataflow = r.df;
	memcpy(t.sram_kib, r.sram, sizeof(t.sram_kib));
	t.scalesim_compat = 1;
	t.word_bytes = kind == L_FLOAT ? 1 : 4;
	for (int i = 0; i < r.n; i++) {
		const layer *l = &r.l[i];
		enpu_graph *g = layer_graph_as(l, kind);
		enpu_npu_report rep;
		const enpu_npu_opstats *s;
		long long quirk = 0;

		model(g, &t, 0, &rep);
		s = &rep.ops[0];
		/* CALC mode never stalls; its total is the compute cycles */
		cr_expect_eq(l->stalls, 0, "%s layer %d: SCALE-Sim stalled in CALC mode", dir, i);
		SAME("compute cycles", s->compute_cycles, l->cycles);
		SAME("ifmap SRAM reads", s->sram_reads[ENPU_SRAM_IFMAP], l->sram_if);
		SAME("filter SRAM reads", s->sram_reads[ENPU_SRAM_FILTER], l->sram_f);
		/* os: SCALE-Sim adds R + C per fold to its ofmap write count
		 * (docs/npu-sim.md); npu_sim does not copy that */
		if (r.df == ENPU_DF_OS)
			quirk = (long long)s->folds * (r.rows + r.cols);
		SAME("ofmap SRAM writes (+ SCALE-Sim's os quirk)", s->sram_writes[ENPU_SRAM_OFMAP] + quirk,
		     l->sram_of);
		SAME("ifmap DRAM reads", s->dram_read_bytes[ENPU_SRAM_IFMAP], l->dram_if);
		SAME("filter DRAM reads", s->dram_read_bytes[ENPU_SRAM_FILTER], l->dram_f);
		SAME("ofmap DRAM writes", s->dram_write_bytes[ENPU_SRAM_OFMAP], l->dram_of);
		SAME("ofmap DRAM reads", s->dram_read_bytes[ENPU_SRAM_OFMAP], 0);
		enpu_npu_report_free(&rep);
		enpu_graph_free(g);
	}
}

static void check_run(const char *dir, int layers)
{
	check_run_as(dir, layers, L_FLOAT);
}

/* The reference run: resnet18's 20 convolutions and fc, 32x32 ws, 64 KB. */
Test(npusim_scalesim, resnet18_ws32)
{
	check_run("resnet18_ws32", 21);
}

/* The same layers in int8 (qlinear_conv, qlinear_matmul): SCALE-Sim's
 * cycles and words, with int8's own 1-byte words (word_bytes 4 stays the
 * float32 size and is not used). */
Test(npusim_scalesim, int8_resnet18_ws32)
{
	check_run_as("resnet18_ws32", 21, L_QLINEAR);
}

Test(npusim_scalesim, int8_resnet18_os32)
{
	check_run_as("resnet18_os32", 21, L_QLINEAR);
}

Test(npusim_scalesim, int8_resnet18_is32)
{
	check_run_as("resnet18_is32", 21, L_QLINEAR);
}

Test(npusim_scalesim, int8_sub_ws16x24)
{
	check_run_as("sub_ws16x24", 6, L_QLINEAR);
}

/* The default model on the same layers, 1-byte words: printed with
 * ENPU_NPUSIM_TABLE set (docs/npu-sim.md's comparison table). */
static void default_table(const char *dir)
{
	static run r;
	enpu_npu_target t;
	long long tot[2][4] = {{0}};

	read_run(dir, &r);
	enpu_npu_target_default(&t);
	t.rows = r.rows, t.cols = r.cols, t.dataflow = r.df;
	memcpy(t.sram_kib, r.sram, sizeof(t.sram_kib));
	t.word_bytes = 1;
	for (int i = 0; i < r.n; i++) {
		const layer *l = &r.l[i];
		enpu_graph *g = layer_graph(l);
		enpu_npu_report rep;
		const enpu_npu_opstats *s;

		model(g, &t, 0, &rep);
		s = &rep.ops[0];
		if (getenv("ENPU_NPUSIM_TABLE"))
			fprintf(stderr, "%s\t%d\t%s\t%llu\t%lld\t%llu\t%lld\t%llu+%llu\t%lld\n", dir, i, l->name,
				(unsigned long long)s->dram_read_bytes[0], l->dram_if,
				(unsigned long long)s->dram_read_bytes[1], l->dram_f,
				(unsigned long long)s->dram_write_bytes[2],
				(unsigned long long)s->dram_read_bytes[2], l->dram_of);
		tot[0][0] += (long long)s->dram_read_bytes[0], tot[1][0] += l->dram_if;
		tot[0][1] += (long long)s->dram_read_bytes[1], tot[1][1] += l->dram_f;
		tot[0][2] += (long long)(s->dram_write_bytes[2] + s->dram_read_bytes[2]);
		tot[1][2] += l->dram_of;
		enpu_npu_report_free(&rep);
		enpu_graph_free(g);
	}
	if (getenv("ENPU_NPUSIM_TABLE"))
		fprintf(stderr, "%s total\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\n", dir, tot[0][0], tot[1][0],
			tot[0][1], tot[1][1], tot[0][2], tot[1][2]);
}

Test(npusim_scalesim, default_ws32)
{
	static run r;
	static const double bw[] = {0, 8, 16, 32};
	unsigned long long ss_bytes = 0, last = 0;

	default_table("resnet18_ws32");
	/* totals over the run at 8, 16, 32 bytes per cycle, both modes */
	read_run("resnet18_ws32", &r);
	for (int i = 0; i < r.n; i++)
		ss_bytes += (unsigned long long)(r.l[i].dram_if + r.l[i].dram_f + r.l[i].dram_of);
	for (int compat = 0; compat < 2; compat++)
		for (int b = 0; b < 4; b++) {
			enpu_npu_target t;
			unsigned long long bytes = 0, stall = 0, cyc = 0;

			enpu_npu_target_default(&t);
			t.rows = r.rows, t.cols = r.cols, t.dataflow = r.df;
			memcpy(t.sram_kib, r.sram, sizeof(t.sram_kib));
			t.word_bytes = 1, t.scalesim_compat = compat, t.dram_bytes_per_cycle = bw[b];
			for (int i = 0; i < r.n; i++) {
				enpu_graph *g = layer_graph(&r.l[i]);
				enpu_npu_report rep;

				model(g, &t, 0, &rep);
				bytes += rep.dram_read_bytes + rep.dram_write_bytes;
				stall += rep.stall_cycles, cyc += rep.compute_cycles;
				/* stalls only with a bandwidth, never negative time */
				cr_expect(bw[b] > 0 || rep.stall_cycles == 0);
				enpu_npu_report_free(&rep);
				enpu_graph_free(g);
			}
			/* compat without a bandwidth: SCALE-Sim's CALC DRAM
			 * words, 1 byte each (with one, its USER mode's: whole
			 * prefetches, never fewer); more bandwidth never stalls
			 * more */
			if (compat && !b)
				cr_expect_eq(bytes, ss_bytes, "compat DRAM %llu bytes, SCALE-Sim %llu", bytes, ss_bytes);
			if (compat && b)
				cr_expect_geq(bytes, ss_bytes, "compat USER DRAM %llu bytes, CALC %llu", bytes, ss_bytes);
			if (b > 1)
				cr_expect_leq(stall, last, "stalls grow with bandwidth %g", bw[b]);
			last = stall;
			if (getenv("ENPU_NPUSIM_TABLE"))
				fprintf(stderr, "compat=%d bw=%g: DRAM %llu bytes, compute %llu, stall %llu\n",
					compat, bw[b], bytes, cyc, stall);
		}
}

/* Another array and SRAM sizes: 16 rows x 24 columns, 24/16/40 KB, six of
 * resnet18's layers (conv1, strided 3x3 and 1x1, layer3's 3x3, fc). */
Test(npusim_scalesim, sub_ws16x24)
{
	check_run("sub_ws16x24", 6);
}

/* The reference layers in output stationary. */
Test(npusim_scalesim, resnet18_os32)
{
	check_run("resnet18_os32", 21);
}

/* SCALE-Sim's USER bandwidth mode (Bandwidth words per cycle per memory) on
 * small layers of a CALC run (a USER run takes minutes): with
 * scalesim_compat and dram_bytes_per_cycle = Bandwidth (1-byte words),
 * npu_sim replays its read buffers' prefetches and its write buffer's
 * drains, so the stall cycles and the DRAM words per operand are
 * SCALE-Sim's; its compute cycles (total - stall) are the CALC run's. At
 * a bandwidth no layer can use, the stalls vanish and the totals are the
 * CALC run's Total Cycles. in_calc: each USER layer's row in the CALC run
 * (calc_dir NULL: a USER run with no CALC run of its configuration). */
static void check_user(const char *dir, const char *calc_dir, const int *in_calc)
{
	static run u, c;
	enpu_npu_target t;

	read_run(dir, &u);
	cr_assert(u.user, "%s: a USER run", dir);
	if (calc_dir) {
		read_run(calc_dir, &c);
		cr_assert(!c.user, "%s: a CALC run", calc_dir);
	}
	cr_assert(u.bw > 0);
	enpu_npu_target_default(&t);
	t.rows = u.rows, t.cols = u.cols, t.dataflow = u.df;
	memcpy(t.sram_kib, u.sram, sizeof(t.sram_kib));
	t.scalesim_compat = 1, t.word_bytes = 1;
	for (int i = 0; i < u.n; i++) {
		const layer *l = &u.l[i], *cl = calc_dir ? &c.l[in_calc[i]] : l;
		enpu_graph *g = layer_graph(l);
		enpu_npu_report rep;
		const enpu_npu_opstats *s;
		long long quirk = 0;

		cr_assert_str_eq(l->name, cl->name);
		t.dram_bytes_per_cycle = u.bw * t.word_bytes;
		model(g, &t, 0, &rep);
		s = &rep.ops[0];
		SAME("compute cycles (USER total - stall)", s->compute_cycles, l->cycles - l->stalls);
		if (calc_dir)
			SAME("compute cycles (CALC total)", s->compute_cycles, cl->cycles);
		cr_expect_gt(l->stalls, 0, "%s layer %d: SCALE-Sim stalls at %g words/cycle", dir, i, u.bw);
		SAME("stall cycles", s->stall_cycles, l->stalls);
		SAME("ifmap DRAM reads", s->dram_read_bytes[ENPU_SRAM_IFMAP], l->dram_if);
		SAME("filter DRAM reads", s->dram_read_bytes[ENPU_SRAM_FILTER], l->dram_f);
		SAME("ofmap DRAM writes", s->dram_write_bytes[ENPU_SRAM_OFMAP], l->dram_of);
		SAME("ifmap SRAM reads", s->sram_reads[ENPU_SRAM_IFMAP], l->sram_if);
		SAME("filter SRAM reads", s->sram_reads[ENPU_SRAM_FILTER], l->sram_f);
		if (u.df == ENPU_DF_OS)   /* SCALE-Sim's os count (check_run) */
			quirk = (long long)s->folds * (u.rows + u.cols);
		SAME("ofmap SRAM writes", s->sram_writes[ENPU_SRAM_OFMAP] + quirk, l->sram_of);
		if (getenv("ENPU_NPUSIM_TABLE") && calc_dir)
			fprintf(stderr, "%s %s: compute %llu, stall %llu at %g B/cycle, DRAM ifmap %llu filter %llu "
				"ofmap %llu; SCALE-Sim USER stall %lld, DRAM %lld %lld %lld (CALC %lld %lld %lld)\n",
				dir, l->name, (unsigned long long)s->compute_cycles,
				(unsigned long long)s->stall_cycles, u.bw,
				(unsigned long long)s->dram_read_bytes[0], (unsigned long long)s->dram_read_bytes[1],
				(unsigned long long)s->dram_write_bytes[2], l->stalls, l->dram_if, l->dram_f,
				l->dram_of, cl->dram_if, cl->dram_f, cl->dram_of);
		enpu_npu_report_free(&rep);
		enpu_graph_free(g);
	}
	/* converges to CALC on every layer of the CALC run: 10^6 words per
	 * cycle hides every prefetch and drain */
	if (!calc_dir)
		return;
	t.rows = c.rows, t.cols = c.cols, t.dataflow = c.df;
	memcpy(t.sram_kib, c.sram, sizeof(t.sram_kib));
	t.dram_bytes_per_cycle = 1e6;
	for (int i = 0; i < c.n; i++) {
		enpu_graph *g = layer_graph(&c.l[i]);
		enpu_npu_report rep;

		model(g, &t, 0, &rep);
		cr_expect_eq(rep.stall_cycles, 0, "%s layer %d: %llu stall cycles at 1e6 words/cycle", calc_dir, i,
			     (unsigned long long)rep.stall_cycles);
		cr_expect_eq((long long)rep.total_cycles, c.l[i].cycles, "%s layer %d: %llu cycles at 1e6, CALC %lld",
			     calc_dir, i, (unsigned long long)rep.total_cycles, c.l[i].cycles);
		enpu_npu_report_free(&rep);
		enpu_graph_free(g);
	}
}

/* 10 and 32 words per cycle on two layers of sub_ws16x24 (layer4.0's
 * downsample and fc: rows 4 and 5 there). */
Test(npusim_scalesim, user_bandwidth_sub_ws16x24)
{
	static const int in_calc[] = {4, 5};

	check_user("sub_ws16x24_user10", "sub_ws16x24", in_calc);
	check_user("sub_ws16x24_user32", "sub_ws16x24", in_calc);
}

/* The other dataflows' prefetch matrices: 16 words per cycle on
 * layer4.0's downsample, os and is, sub_ws16x24's array and SRAMs. */
Test(npusim_scalesim, user_bandwidth_os_is)
{
	check_user("sub_os16x24_user16", NULL, NULL);
	check_user("sub_is16x24_user16", NULL, NULL);
}

/* The reference layers in input stationary (and the default model's
 * counts on them, printed with ENPU_NPUSIM_TABLE set). */
Test(npusim_scalesim, resnet18_is32)
{
	check_run("resnet18_is32", 21);
	default_table("resnet18_is32");
}

/* The default model's bytes of an int8 layer are a quarter of the float
 * layer's, operand by operand, once the SRAMs hold the same number of
 * words (the int8 operand's SRAM a quarter of the float one's: each holds
 * sram_kib * 1024 / element bytes words, and reuse is counted in words).
 * The filter part adds what the float layers here lack: qlinear_conv's
 * int32 bias, the float32 scales and the int8 zero points, each in its
 * own size. conv_integer's int32 ofmap costs what the float32 one does.
 * At the same SRAM sizes an int8 operand fits four times the words, so
 * it never costs more than a quarter; the totals of both are printed with
 * ENPU_NPUSIM_TABLE set (docs/npu-sim.md, "int8"). */
Test(npusim_scalesim, int8_default_quarter)
{
	static run r;
	enpu_npu_target tf, tq, tsame;
	unsigned long long tot[2][2] = {{0}};   /* float, int8 at the same target: cycles, bytes */

	read_run("resnet18_ws32", &r);
	enpu_npu_target_default(&tq);
	tq.rows = r.rows, tq.cols = r.cols, tq.dataflow = r.df;
	memcpy(tq.sram_kib, r.sram, sizeof(tq.sram_kib));
	tsame = tq;
	for (int kind = L_QLINEAR; kind <= L_INTEGER; kind++)
		for (int i = 0; i < r.n; i++) {
			const layer *l = &r.l[i];
			const char *dir = kind == L_QLINEAR ? "qlinear" : "integer";
			enpu_graph *gf = layer_graph_as(l, L_FLOAT), *gq = layer_graph_as(l, kind);
			int conv = !(l->H == 1 && l->W == 1 && l->kh == 1 && l->kw == 1);
			long long extra;
			enpu_npu_report rf, rq;
			const enpu_npu_opstats *f, *q;

			tf = tq;
			tf.sram_kib[ENPU_SRAM_IFMAP] *= 4, tf.sram_kib[ENPU_SRAM_FILTER] *= 4;
			if (kind == L_QLINEAR)
				tf.sram_kib[ENPU_SRAM_OFMAP] *= 4;
			model(gf, &tf, 0, &rf);
			model(gq, &tq, 0, &rq);
			f = &rf.ops[0], q = &rq.ops[0];
			SAME("compute cycles", q->compute_cycles, (long long)f->compute_cycles);
			SAME("ifmap DRAM bytes x 4", q->dram_read_bytes[ENPU_SRAM_IFMAP] * 4,
			     (long long)f->dram_read_bytes[ENPU_SRAM_IFMAP]);
			/* qlinear: bias 4N, scales 4 (1 + N + 1), zero points 1 + N + 1;
			 * integer: the zero points 1 + N */
			extra = kind == L_QLINEAR ? (conv ? 4 * l->N : 0) + 4 * (l->N + 2) + (l->N + 2)
						  : 1 + l->N;
			SAME("filter DRAM bytes without bias, scales, zero points, x 4",
			     (long long)(q->dram_read_bytes[ENPU_SRAM_FILTER] - (uint64_t)extra) * 4,
			     (long long)f->dram_read_bytes[ENPU_SRAM_FILTER]);
			SAME("ofmap DRAM write bytes (x 4 for int8)",
			     q->dram_write_bytes[ENPU_SRAM_OFMAP] * (kind == L_QLINEAR ? 4 : 1),
			     (long long)f->dram_write_bytes[ENPU_SRAM_OFMAP]);
			SAME("ofmap DRAM read bytes (x 4 for int8)",
			     q->dram_read_bytes[ENPU_SRAM_OFMAP] * (kind == L_QLINEAR ? 4 : 1),
			     (long long)f->dram_read_bytes[ENPU_SRAM_OFMAP]);
			SAME("SRAM ifmap reads (words)", q->sram_reads[0], (long long)f->sram_reads[0]);
			enpu_npu_report_free(&rf);
			enpu_graph_free(gf);
			if (kind == L_QLINEAR) {
				/* the same SRAMs: never more than a quarter */
				gf = layer_graph_as(l, L_FLOAT);
				model(gf, &tsame, 0, &rf);
				f = &rf.ops[0];
				for (int k = 0; k < ENPU_SRAM_COUNT; k++) {
					cr_expect_leq(q->dram_read_bytes[k] * 4 - (k == 1 ? (uint64_t)extra * 4 : 0),
						      f->dram_read_bytes[k], "layer %d operand %d", i, k);
					cr_expect_leq(q->dram_write_bytes[k] * 4, f->dram_write_bytes[k],
						      "layer %d operand %d", i, k);
				}
				tot[0][0] += rf.total_cycles, tot[1][0] += rq.total_cycles;
				tot[0][1] += rf.dram_read_bytes + rf.dram_write_bytes;
				tot[1][1] += rq.dram_read_bytes + rq.dram_write_bytes;
				enpu_npu_report_free(&rf);
				enpu_graph_free(gf);
			}
			enpu_npu_report_free(&rq);
			enpu_graph_free(gq);
		}
	cr_expect_eq(tot[0][0], tot[1][0], "the same cycles");
	if (getenv("ENPU_NPUSIM_TABLE"))
		fprintf(stderr, "resnet18_ws32 default mode: float32 %llu cycles, DRAM %llu bytes; "
			"int8 %llu cycles, DRAM %llu bytes\n", tot[0][0], tot[0][1], tot[1][0], tot[1][1]);
}

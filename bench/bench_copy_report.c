/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vsw-bench-copy output: the per-group tables, the CSV, the gnuplot PNG and
 * the check against the targets. Reads the results only.
 */
#include <stdlib.h>
#include <string.h>

#include "bench_copy.h"

enum { I_MEMCPY, I_RTE }; /* fixed first columns (bench_copy.c) */

static double
bpc(const struct bench_results *r, int st, int c, unsigned si, unsigned i)
{
	double cpc = r->cell[st][c][si][i].cpc;

	return cpc > 0 ? (double)r->sizes[si] / cpc : 0;
}

/* The best anchor's bytes/cycle; *which gets its column. */
static double
best_anchor(const struct bench_results *r, int st, int c, unsigned si,
	unsigned *which)
{
	double best = 0;
	unsigned i;

	*which = I_MEMCPY;
	for (i = 0; i < r->n_impls; i++)
		if (r->impls[i].anchor && bpc(r, st, c, si, i) > best) {
			best = bpc(r, st, c, si, i);
			*which = i;
		}
	return best;
}

/* The subject (vsw inlined) against the best anchor (> 1: vsw wins). */
static double
ratio_best(const struct bench_results *r, int st, int c, unsigned si)
{
	unsigned w;
	double best = best_anchor(r, st, c, si, &w);

	return best > 0 ? bpc(r, st, c, si, r->subject) / best : 0;
}

void
bench_report_table(const struct bench_results *r, int st, int c)
{
	const struct bench_case *k = &r->cases[c];
	unsigned si, i;

	printf("\n%s, %s (src+%zu, dst+%zu): bytes per TSC cycle, median\n",
		r->state_names[st], k->label, k->src_off, k->dst_off);
	printf("%6s", "size");
	for (i = 0; i < r->n_impls; i++)
		if (!r->impls[i].hot_only || st == 0)
			printf(" %*s",
				(int)strlen(r->impls[i].name) < 6
					? 6
					: (int)strlen(r->impls[i].name),
				r->impls[i].name);
	printf(" | %8s %8s %8s %8s %s\n", "GB/s", "/memcpy", "/rte", "/best",
		"best anchor");
	for (si = 0; si < r->n_sizes; si++) {
		double v;
		double m = bpc(r, st, c, si, I_MEMCPY);
		double t = bpc(r, st, c, si, I_RTE);
		bool noisy = false;

		printf("%6zu", r->sizes[si]);
		for (i = 0; i < r->n_impls; i++) {
			int w = (int)strlen(r->impls[i].name);

			if (r->impls[i].hot_only && st != 0)
				continue;
			v = bpc(r, st, c, si, i);
			printf(" %*.*f", w < 6 ? 6 : w, v < 10 ? 2 : 1, v);
			noisy |= r->cell[st][c][si][i].noisy;
		}
		v = bpc(r, st, c, si, r->subject);
		best_anchor(r, st, c, si, &i);
		printf(" | %8.1f %8.2f %8.2f %8.2f %s%s\n", v * r->tsc_ghz,
			m > 0 ? v / m : 0, t > 0 ? v / t : 0,
			ratio_best(r, st, c, si), r->impls[i].name,
			noisy ? " (noisy)" : "");
	}
	fflush(stdout);
}

int
bench_report_csv(const struct bench_results *r, const char *path)
{
	FILE *f = fopen(path, "w");
	unsigned si, i;
	int st, c;

	if (f == NULL) {
		perror(path);
		return -1;
	}
	fprintf(f, "state,case,src_off,dst_off,size,impl,cycles_per_copy,"
		   "bytes_per_cycle,gb_per_s,ratio_vs_memcpy,"
		   "ratio_vs_rte_memcpy,redo,noisy\n");
	for (st = 0; st < N_STATES; st++)
		for (c = 0; c < N_CASES; c++)
			for (si = 0; si < r->n_sizes; si++)
				for (i = 0; i < r->n_impls; i++) {
					const struct bench_cell *cell =
						&r->cell[st][c][si][i];
					double v = bpc(r, st, c, si, i);
					double m = bpc(r, st, c, si, I_MEMCPY);
					double t = bpc(r, st, c, si, I_RTE);

					if (cell->cpc <= 0)
						continue;
					fprintf(f,
						"%s,%s,%zu,%zu,%zu,%s,%.3f,%."
						"3f,"
						"%.3f,%.3f,%.3f,%d,%d\n",
						r->state_names[st],
						r->cases[c].name,
						r->cases[c].src_off,
						r->cases[c].dst_off,
						r->sizes[si], r->impls[i].name,
						cell->cpc, v, v * r->tsc_ghz,
						m > 0 ? v / m : 0,
						t > 0 ? v / t : 0, cell->redo,
						cell->noisy);
				}
	if (fclose(f) != 0) {
		perror(path);
		return -1;
	}
	printf("\nCSV: %s\n", path);
	return 0;
}

static void
plot_block(FILE *g, const struct bench_results *r, int c)
{
	unsigned si, i;

	fprintf(g, "$d%d << EOD\nsize", c);
	for (i = 0; i < r->n_impls; i++)
		if (!r->impls[i].hot_only)
			fprintf(g, " %s", r->impls[i].name);
	fprintf(g, "\n");
	for (si = 0; si < r->n_sizes; si++) {
		fprintf(g, "%zu", r->sizes[si]);
		for (i = 0; i < r->n_impls; i++)
			if (!r->impls[i].hot_only)
				fprintf(g, " %.3f", bpc(r, 0, c, si, i));
		fprintf(g, "\n");
	}
	fprintf(g, "EOD\n");
}

int
bench_report_plot(const struct bench_results *r, const char *path)
{
	static const int panels[] = {0, 1}; /* hot aligned, hot coal12 */
	unsigned i, ncol = 0;
	FILE *g;
	int rc, p;

	for (i = 0; i < r->n_impls; i++)
		ncol += !r->impls[i].hot_only;
	g = popen("gnuplot", "w");
	if (g == NULL) {
		perror("gnuplot");
		return -1;
	}
	fprintf(g,
		"set terminal pngcairo noenhanced size 1600,650 font ',10'\n"
		"set output '%s'\n",
		path);
	for (p = 0; p < 2; p++)
		plot_block(g, r, panels[p]);
	fprintf(g,
		"set multiplot layout 1,2 title 'vsw copy engine: "
		"throughput vs size, hot (L1/L2), TSC %.2f GHz'\n"
		"set logscale x 2\nset grid\nset key top left\n"
		"set xlabel 'copy size (bytes)'\n"
		"set ylabel 'bytes per TSC cycle'\n"
		"set key autotitle columnhead\n",
		r->tsc_ghz);
	for (p = 0; p < 2; p++)
		fprintf(g,
			"set title 'hot, %s'\n"
			"plot for [k=2:%u] $d%d using 1:k with linespoints, "
			"%.2f with lines dashtype 2 lc 'black' "
			"title 'L1 store bw'\n",
			r->cases[panels[p]].label, ncol + 1, panels[p],
			r->l1_store_bpc);
	fprintf(g, "unset multiplot\n");
	rc = pclose(g);
	if (rc != 0) {
		fprintf(stderr,
			"vsw-bench-copy: gnuplot failed (status %d); "
			"is it installed? apt-get install gnuplot-nox\n",
			rc);
		return -1;
	}
	printf("plot: %s\n", path);
	return 0;
}

/* Lowest vsw/best ratio over sizes in [lo, hi]; lists the misses. */
static double
check(const struct bench_results *r, int st, int c, size_t lo, size_t hi,
	double want, bool vs_l1)
{
	double worst = 1e9;
	unsigned si;

	for (si = 0; si < r->n_sizes; si++) {
		double q;

		if (r->sizes[si] < lo || r->sizes[si] > hi)
			continue;
		q = vs_l1 ? bpc(r, st, c, si, r->subject) / r->l1_store_bpc
			  : ratio_best(r, st, c, si);
		if (q < worst)
			worst = q;
		if (q < want)
			printf("    miss: %s %s %zu B: %.2f\n",
				r->state_names[st], r->cases[c].name,
				r->sizes[si], q);
	}
	return worst;
}

static bool
measured(const struct bench_results *r, int st)
{
	return r->cell[st][0][0][r->subject].cpc > 0;
}

int
bench_report_targets(const struct bench_results *r)
{
	double w;
	int c, fails = 0;

	printf("\ntargets (%s against the best anchor; ratios of "
	       "bytes/cycle):\n",
		r->impls[r->subject].name);
	for (c = 0; c < N_CASES && measured(r, 0); c++) {
		w = check(r, 0, c, 64, 65536, 1.0, false);
		printf("  hot %-8s 64 B-64 KiB  >= 1.00x best anchor: "
		       "worst %.2f  %s\n",
			r->cases[c].name, w, w >= 1.0 ? "met" : "MISSED");
		fails += w < 1.0;
	}
	if (!measured(r, 0))
		goto cold;
	w = check(r, 0, 0, 512, 8192, 0.9, true);
	printf("  hot aligned  512 B-8 KiB >= 0.90x L1 store bw (%.1f B/c): "
	       "worst %.2f  %s\n",
		r->l1_store_bpc, w, w >= 0.9 ? "met" : "MISSED");
	fails += w < 0.9;
cold:
	for (c = 0; c < N_CASES && measured(r, 2); c++) {
		w = check(r, 2, c, 0, (size_t)-1, 0.95, false);
		printf("  cold %-8s all sizes   >= 0.95x best anchor: "
		       "worst %.2f  %s\n",
			r->cases[c].name, w, w >= 0.95 ? "met" : "MISSED");
		fails += w < 0.95;
	}
	return fails;
}

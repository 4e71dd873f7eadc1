/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vsw-bench-copy: per-size copy throughput of glibc memcpy, DPDK rte_memcpy
 * (as our build compiles it) and vsw_copy (auto and each ISA forced), for
 * four alignment cases and three cache states, side by side in one run.
 *
 * Method: the thread is pinned; each (state, case, size) group times every
 * implementation with rdtsc over batches of copies (warm-up first, batch
 * length calibrated to a cycle budget), the implementations' batches
 * interleaved, and keeps the median cycles per copy; that ROUNDS times,
 * and the cell is the median of the rounds' medians. A fixed
 * dependent-multiply loop is timed before and after each group; if the
 * machine's speed moved between the two (another tenant, a frequency
 * change) the group is measured again, up to three times. Reports bytes
 * per TSC cycle and GB/s, ratios, a CSV and a gnuplot PNG.
 * Single-threaded; trusts nothing but its own arguments.
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vsw/copy.h>

#include "bench_copy.h"

#define HOT_SPAN ((size_t)160 * 1024)	      /* per side: >= 64 KiB + pad */
#define WARM_SPAN ((size_t)256 * 1024)	      /* per side: 512 KiB in all */
#define COLD_SPAN ((size_t)256 * 1024 * 1024) /* per side: 512 MiB in all */

struct opts {
	bool quick;
	const char *csv;
	const char *plot;
	int cpu;
	int only;	  /* one cache state, or -1 for all */
	unsigned n_sizes; /* from --sizes, or 0 */
	size_t sizes[MAX_SIZES];
	size_t large_min;
};

static const size_t full_sizes[] = {1, 2, 4, 8, 16, 32, 48, 64, 96, 128, 192,
	256, 384, 512, 768, 1024, 1518, 2048, 3072, 4096, 8192, 9216, 16384,
	24576, 65536};
static const size_t quick_sizes[] = {
	16, 64, 256, 1024, 1518, 4096, 16384, 65536};

static const struct bench_case cases[N_CASES] = {
	{"aligned", "both 64-byte aligned", 0, 0},
	{"coal12", "co-aligned +12 (virtio-net header)", 12, 12},
	{"src2", "dst aligned, src +2", 2, 0},
	{"mis3_17", "src +3, dst +17", 3, 17},
};
static const char *const state_names[N_STATES] = {"hot", "warm", "cold"};

enum { I_VSW = 2 }; /* the dispatcher column (setup_impls) */

static BENCH_COPY_RUNNER(run_memcpy, memcpy);
static BENCH_COPY_RUNNER(run_vsw, vsw_copy);

static struct bench_impl impls[MAX_IMPLS];
static char impl_names[MAX_IMPLS][32];
static struct bench_results res;

static void
progress(unsigned done, unsigned total, int st, int c, size_t n)
{
	if (isatty(2))
		fprintf(stderr, "\r\033[K[%u/%u] %s %s %zu B", done, total,
			state_names[st], cases[c].name, n);
	else if (done % 24 == 0)
		fprintf(stderr, "[%u/%u] %s %s\n", done, total, state_names[st],
			cases[c].name);
}

static int
pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0) {
		/* default: the highest CPU we may run on */
		if (sched_getaffinity(0, sizeof(set), &set) != 0)
			return -errno;
		for (cpu = CPU_SETSIZE - 1; cpu > 0 && !CPU_ISSET(cpu, &set);
			cpu--)
			;
	}
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) != 0)
		return -errno;
	return cpu;
}

static uint8_t *
region(size_t span)
{
	uint8_t *p = aligned_alloc(4096, span);

	if (p == NULL) {
		fprintf(stderr, "vsw-bench-copy: out of memory (%zu bytes)\n",
			span);
		exit(1);
	}
	memset(p, 0x33, span); /* fault every page in before timing */
	return p;
}

/* The CPU model (these machines vary: Intel Xeon or AMD EPYC). */
static void
cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256], *p;

	snprintf(buf, len, "unknown CPU");
	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "model name", 10) == 0 &&
			(p = strchr(line, ':')) != NULL) {
			snprintf(buf, len, "%s", p + 2);
			buf[strcspn(buf, "\n")] = '\0';
			break;
		}
	if (f != NULL)
		fclose(f);
}

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: vsw-bench-copy [--quick] [--csv FILE] [--plot "
		"FILE.png]\n"
		"                      [--cpu N] [--large-min BYTES]\n"
		"                      [--state hot|warm|cold] [--sizes "
		"N,N,..]\n"
		"  --quick      few sizes and batches (CI smoke, < 20 s)\n"
		"  --csv        write every measurement as CSV\n"
		"  --plot       PNG (gnuplot): hot aligned and hot co-aligned\n"
		"  --cpu        pin to this CPU (default: the highest "
		"allowed)\n"
		"  --large-min  vsw large-path (rep movsb) threshold; 0: off\n"
		"  --state      measure one cache state only (tuning)\n"
		"  --sizes      measure these sizes only (1..65536; tuning)\n");
}

static int
parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{"quick", no_argument, NULL, 'q'},
		{"csv", required_argument, NULL, 'c'},
		{"plot", required_argument, NULL, 'p'},
		{"cpu", required_argument, NULL, 'C'},
		{"large-min", required_argument, NULL, 'L'},
		{"state", required_argument, NULL, 's'},
		{"sizes", required_argument, NULL, 'S'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	char *end;
	int ch;

	memset(o, 0, sizeof(*o));
	o->cpu = -1;
	o->only = -1;
	o->large_min = 0;
	while ((ch = getopt_long(argc, argv, "qc:p:C:L:s:S:h", lo, NULL)) !=
		-1) {
		switch (ch) {
		case 'q':
			o->quick = true;
			break;
		case 'c':
			o->csv = optarg;
			break;
		case 'p':
			o->plot = optarg;
			break;
		case 'C':
			o->cpu = (int)strtol(optarg, &end, 10);
			if (*end != '\0' || o->cpu < 0)
				return -1;
			break;
		case 'L':
			o->large_min = strtoull(optarg, &end, 0);
			if (*end != '\0')
				return -1;
			if (o->large_min == 0)
				o->large_min = SIZE_MAX;
			break;
		case 's':
			for (o->only = 0; o->only < N_STATES; o->only++)
				if (strcmp(optarg, state_names[o->only]) == 0)
					break;
			if (o->only == N_STATES)
				return -1;
			break;
		case 'S':
			for (end = optarg;
				*end != '\0' && o->n_sizes < MAX_SIZES;) {
				o->sizes[o->n_sizes] = strtoull(end, &end, 0);
				if (o->sizes[o->n_sizes] == 0 ||
					o->sizes[o->n_sizes++] > 65536 ||
					(*end != ',' && *end != '\0'))
					return -1;
				end += *end == ',';
			}
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			return -1;
		}
	}
	return optind == argc ? 0 : -1;
}

static void
add_impl(const char *name, bench_runner *run, const char *vsw, bool anchor)
{
	unsigned i = res.n_impls++;

	snprintf(impl_names[i], sizeof(impl_names[i]), "%s", name);
	impls[i] = (struct bench_impl){.name = impl_names[i],
		.run = run,
		.vsw_impl = vsw,
		.anchor = anchor};
}

/*
 * Columns: memcpy, rte (Debian's build), then on x86 rte-nat (-march=native
 * -DRTE_MEMCPY_AVX512) and seq64 (inline 64-byte AVX-512 moves, AVX-512
 * CPUs only): the anchors. Then vsw (through the dispatcher, as baseline
 * code calls it), inl (vsw_copy inlined, compiled for the best ISA the CPU
 * runs: what the per-ISA data path runs, and the subject of the targets),
 * and every implementation forced through the dispatcher.
 */
static void
setup_impls(void)
{
	static char vsw_names[MAX_IMPLS][40];
	uint32_t cpu = vsw_copy_cpu_features();
	unsigned i;

	res.subject = I_VSW;
	add_impl("memcpy", run_memcpy, NULL, true);
	add_impl("rte", bench_run_rte, NULL, true);
	add_impl("vsw", run_vsw, "auto", false);
#if defined(__x86_64__)
	add_impl("rte-nat", bench_run_rte_native, NULL, true);
	if (cpu & VSW_COPY_CPU_AVX512)
		add_impl("seq64", bench_run_seq64, NULL, true);
	res.subject = res.n_impls;
	if (cpu & VSW_COPY_CPU_AVX512)
		add_impl("inl-avx512", bench_run_inl_avx512, "avx512", false);
	else if (cpu & VSW_COPY_CPU_AVX2)
		add_impl("inl-avx2", bench_run_inl_avx2, "avx2", false);
	else
		add_impl("inl-sse2", bench_run_inl_sse2, "sse2", false);
#endif
	for (i = 0; i < vsw_copy_impl_count() && res.n_impls < MAX_IMPLS; i++) {
		const char *name;
		bool avail;

		vsw_copy_impl_info(i, &name, &avail);
		if (!avail) {
			fprintf(stderr, "vsw-bench-copy: %s: not on this CPU\n",
				name);
			continue;
		}
		snprintf(vsw_names[i], sizeof(vsw_names[i]), "vsw-%s", name);
		add_impl(vsw_names[i], run_vsw, name, false);
	}
}

int
main(int argc, char **argv)
{
	static const size_t spans[N_STATES] = {HOT_SPAN, WARM_SPAN, COLD_SPAN};
	struct opts o;
	uint8_t *base[N_STATES][2];
	unsigned total, done = 0, si;
	char model[128];
	int st, c, cpu;

	if (parse(argc, argv, &o) != 0) {
		usage(stderr);
		return 2;
	}
	if (o.large_min != 0 && vsw_copy_large_min_set(o.large_min) != 0) {
		fprintf(stderr,
			"vsw-bench-copy: --large-min: CPU lacks ERMS\n");
		return 2;
	}
	cpu = pin(o.cpu);
	if (cpu < 0) {
		fprintf(stderr, "vsw-bench-copy: cannot pin to CPU %d: %s\n",
			o.cpu, strerror(-cpu));
		return 1;
	}
	res.cases = cases;
	res.impls = impls;
	res.state_names = state_names;
	res.n_sizes = o.quick ? sizeof(quick_sizes) / sizeof(size_t)
			      : sizeof(full_sizes) / sizeof(size_t);
	memcpy(res.sizes, o.quick ? quick_sizes : full_sizes,
		res.n_sizes * sizeof(size_t));
	if (o.n_sizes > 0) {
		res.n_sizes = o.n_sizes;
		memcpy(res.sizes, o.sizes, o.n_sizes * sizeof(size_t));
	}
	setup_impls();
	for (st = 0; st < N_STATES; st++) {
		base[st][0] = region(spans[st]);
		base[st][1] = region(spans[st]);
	}
	res.tsc_ghz = bench_tsc_calibrate();
	bench_measure_l1_store(&res, base[ST_HOT][0]);
	cpu_model(model, sizeof(model));
	printf("vsw-bench-copy: %s\n", model);
	printf("vsw-bench-copy: CPU %d pinned, TSC %.3f GHz, vsw auto = %s, "
	       "large path from %zu B%s\n",
		cpu, res.tsc_ghz, vsw_copy_impl_get(), vsw_copy_large_min_get(),
		vsw_copy_large_min_get() == SIZE_MAX ? " (off)" : "");
	printf("cycles are TSC cycles; L1 store bandwidth (%s, 8 KiB): "
	       "%.1f B/cycle = %.1f GB/s\n",
		res.l1_store_isa, res.l1_store_bpc,
		res.l1_store_bpc * res.tsc_ghz);
	total = (o.only < 0 ? N_STATES : 1) * N_CASES * res.n_sizes;
	for (st = 0; st < N_STATES; st++) {
		if (o.only >= 0 && st != o.only)
			continue;
		for (c = 0; c < N_CASES; c++) {
			for (si = 0; si < res.n_sizes; si++) {
				progress(done++, total, st, c, res.sizes[si]);
				bench_run_group(&res, st, c, si, base[st],
					spans[st], o.quick);
			}
			if (isatty(2))
				fprintf(stderr, "\r\033[K");
			bench_report_table(&res, st, c);
		}
	}
	vsw_copy_impl_set("auto");
	if (o.csv != NULL && bench_report_csv(&res, o.csv) != 0)
		return 1;
	if (o.plot != NULL && bench_report_plot(&res, o.plot) != 0)
		return 1;
	bench_guard_summary(&res);
	bench_report_targets(&res);
	return 0;
}

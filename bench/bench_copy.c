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
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <immintrin.h>
#include <x86intrin.h>
#endif

#include <vsw/copy.h>

#include "bench_copy.h"

#define MAX_BATCHES 64
#define ROUNDS 5 /* medians per group; the cell is their median */
#define MAX_ROUNDS ROUNDS
#define HOT_SPAN ((size_t)160 * 1024)	      /* per side: >= 64 KiB + pad */
#define WARM_SPAN ((size_t)256 * 1024)	      /* per side: 512 KiB in all */
#define COLD_SPAN ((size_t)256 * 1024 * 1024) /* per side: 512 MiB in all */
#define GUARD_TOL 0.03			      /* speed change tolerated */
/*
 * dst sits 2 KiB further into its page than src, so copies below 2 KiB
 * see no 4K aliasing between their loads and the previous copy's stores
 * (same low 12 address bits), which page-aligned twin buffers would give
 * every implementation alike, and which real mbuf/guest buffers rarely
 * have. The price: with dst +12 or +17, a hot copy of exactly 2 KiB ends
 * just past dst's page, and every implementation's last store is split
 * across two pages (all columns dip at 2048 B there alone).
 */
#define DST_SHIFT 2048

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
	65536};
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

static inline uint64_t
tsc_begin(void)
{
#if defined(__x86_64__)
	uint64_t t;

	_mm_lfence();
	t = __rdtsc();
	_mm_lfence();
	return t;
#else
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

static inline uint64_t
tsc_end(void)
{
#if defined(__x86_64__)
	unsigned int aux;
	uint64_t t = __rdtscp(&aux);

	_mm_lfence();
	return t;
#else
	return tsc_begin();
#endif
}

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double
tsc_calibrate(void)
{
	double t0 = now_ns();
	uint64_t c0 = tsc_begin();

	while (now_ns() - t0 < 100e6)
		;
	return (double)(tsc_end() - c0) / (now_ns() - t0);
}

/* Fixed work whose duration tracks the core clock (the slowdown guard). */
static uint64_t
ref_loop_once(void)
{
	uint64_t x = 1, t0 = tsc_begin();
	int i;

	for (i = 0; i < 20000; i++) {
		x = x * 2862933555777941757ull + 3037000493ull;
		__asm__ volatile("" : "+r"(x));
	}
	return tsc_end() - t0;
}

static double
ref_loop(void)
{
	uint64_t best = UINT64_MAX, t;
	int i;

	for (i = 0; i < 5; i++)
		if ((t = ref_loop_once()) < best)
			best = t;
	return (double)best;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Select the vsw implementation im copies through; false: unavailable. */
static bool
impl_select(const struct bench_impl *im)
{
	return im->vsw_impl == NULL || vsw_copy_impl_set(im->vsw_impl) == 0;
}

/*
 * Median TSC cycles per copy of every implementation on one job (out[i],
 * 0: not measured). Batches are interleaved: batch b of every
 * implementation before batch b + 1 of any, so a load change on the
 * machine shifts all of them alike rather than whichever ran then. They
 * all continue one slot cursor (j->pos): in the cold state no batch
 * re-reads lines another implementation just pulled into the L3 (which
 * may be as big as a few hundred MiB), as when each started at slot 0.
 */
static void
measure_all(struct bench_job *j, unsigned batches, double budget, int st,
	double *out)
{
	static double v[MAX_IMPLS][MAX_BATCHES];
	uint64_t iters[MAX_IMPLS] = {0}, t0;
	unsigned b, i, k;
	double est;

	for (i = 0; i < res.n_impls; i++) {
		out[i] = 0;
		if ((impls[i].hot_only && st != ST_HOT) ||
			!impl_select(&impls[i]))
			continue;
		j->iters = 16;
		impls[i].run(j);
		t0 = tsc_begin();
		impls[i].run(j);
		est = (double)(tsc_end() - t0) / 16;
		j->iters = (uint64_t)(budget / (est > 1 ? est : 1));
		if (j->iters < 4)
			j->iters = 4;
		iters[i] = j->iters;
		impls[i].run(j); /* warm-up at the batch length */
	}
	/* Each batch starts one column further on, so no implementation
	 * always runs right after the same neighbour. */
	for (b = 0; b < batches; b++)
		for (k = 0; k < res.n_impls; k++) {
			i = (k + b) % res.n_impls;
			if (iters[i] == 0)
				continue;
			impl_select(&impls[i]);
			j->iters = iters[i];
			t0 = tsc_begin();
			impls[i].run(j);
			v[i][b] = (double)(tsc_end() - t0) / (double)iters[i];
		}
	for (i = 0; i < res.n_impls; i++) {
		if (iters[i] == 0)
			continue;
		qsort(v[i], batches, sizeof(v[i][0]), cmp_double);
		out[i] = v[i][batches / 2];
	}
}

/*
 * The median over rounds of measure_all()'s medians, each round with its
 * own calibration and warm-up: one 64-192 B cell moved by a cycle (30 %)
 * between runs of the same binary, more than between its batches.
 */
static void
measure_rounds(struct bench_job *j, unsigned rounds, unsigned batches,
	double budget, int st, double *out)
{
	static double m[MAX_IMPLS][MAX_ROUNDS];
	double one[MAX_IMPLS];
	unsigned r, i;

	for (r = 0; r < rounds; r++) {
		measure_all(j, batches, budget, st, one);
		for (i = 0; i < res.n_impls; i++)
			m[i][r] = one[i];
	}
	for (i = 0; i < res.n_impls; i++) {
		qsort(m[i], rounds, sizeof(m[i][0]), cmp_double);
		out[i] = m[i][rounds / 2];
	}
}

static size_t
gcd(size_t a, size_t b)
{
	while (b != 0) {
		size_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/*
 * Lay out the slots of a group: hot is one slot; warm and cold rotate
 * over the span with a golden-ratio step, so consecutive copies land far
 * apart and the prefetchers cannot follow.
 */
static void
job_init(struct bench_job *j, uint8_t *dbase, uint8_t *sbase, size_t span,
	int st, const struct bench_case *c, size_t n)
{
	memset(j, 0, sizeof(*j));
	j->n = n;
	j->dst = dbase + DST_SHIFT + c->dst_off;
	j->src = sbase + c->src_off;
	j->stride = (n + 64 + 127) & ~(size_t)63;
	j->nslots = st == ST_HOT ? 1 : (span - DST_SHIFT) / j->stride;
	if (j->nslots < 2 && st != ST_HOT)
		j->nslots = 2;
	j->step = j->nslots > 2 ? (size_t)(j->nslots * 0.618) : 1;
	while (j->nslots > 2 && gcd(j->step, j->nslots) != 1)
		j->step++;
	if (j->nslots == 1)
		j->step = 0;
	j->stepb = j->step * j->stride;
	j->wrap = j->nslots * j->stride;
}

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

/* One group: every implementation on one (state, case, size). */
static void
run_group(int st, int c, unsigned si, uint8_t *base[2], size_t span,
	const struct opts *o)
{
	struct bench_job j;
	/* ~80 us batches hot/warm, ~300 us cold, ROUNDS rounds: a full run
	 * takes ~2 minutes */
	unsigned batches =
		st == ST_COLD ? (o->quick ? 9 : 31) : (o->quick ? 11 : 41);
	double budget = st == ST_COLD ? 800e3 : (o->quick ? 50e3 : 200e3);
	unsigned rounds = o->quick ? 1 : ROUNDS;
	/* slot cursor per state, continued from group to group */
	static size_t cursor[N_STATES];
	int attempt;
	unsigned i;

	for (attempt = 0; attempt < 4; attempt++) {
		double before = ref_loop(), after, cpc[MAX_IMPLS];

		job_init(&j, base[0], base[1], span, st, &cases[c],
			res.sizes[si]);
		j.pos = cursor[st] % j.nslots;
		measure_rounds(&j, rounds, batches, budget, st, cpc);
		cursor[st] = j.pos;
		for (i = 0; i < res.n_impls; i++) {
			res.cell[st][c][si][i].cpc = cpc[i];
			res.cell[st][c][si][i].redo = attempt;
		}
		after = ref_loop();
		if (after < before * (1 + GUARD_TOL) &&
			after > before * (1 - GUARD_TOL))
			return;
	}
	for (i = 0; i < res.n_impls; i++)
		res.cell[st][c][si][i].noisy = true;
}

static void
guard_summary(void)
{
	unsigned redo = 0, noisy = 0, si;
	int st, c;

	for (st = 0; st < N_STATES; st++)
		for (c = 0; c < N_CASES; c++)
			for (si = 0; si < res.n_sizes; si++) {
				const struct bench_cell *x =
					res.cell[st][c][si];

				redo += x[0].redo > 0;
				noisy += x[0].noisy;
			}
	printf("\nslowdown guard: %u group(s) re-measured because the "
	       "reference "
	       "loop moved > %.0f%%, %u still moving after 3 retries "
	       "(marked noisy)\n",
		redo, GUARD_TOL * 100, noisy);
}

#if defined(__x86_64__)
__attribute__((target("avx512f"))) static void
store_loop_avx512(uint8_t *buf, size_t len, unsigned reps)
{
	__m512i v = _mm512_set1_epi32(0x5a5a5a5a);
	size_t off;

	while (reps-- > 0) {
		for (off = 0; off < len; off += 256) {
			_mm512_store_si512((void *)(buf + off), v);
			_mm512_store_si512((void *)(buf + off + 64), v);
			_mm512_store_si512((void *)(buf + off + 128), v);
			_mm512_store_si512((void *)(buf + off + 192), v);
		}
		__asm__ volatile("" : : "r"(buf) : "memory");
	}
}

__attribute__((target("avx2"))) static void
store_loop_avx2(uint8_t *buf, size_t len, unsigned reps)
{
	__m256i v = _mm256_set1_epi32(0x5a5a5a5a);
	size_t off;

	while (reps-- > 0) {
		for (off = 0; off < len; off += 64) {
			_mm256_store_si256((__m256i *)(buf + off), v);
			_mm256_store_si256((__m256i *)(buf + off + 32), v);
		}
		__asm__ volatile("" : : "r"(buf) : "memory");
	}
}
#endif

static void
store_loop_generic(uint8_t *buf, size_t len, unsigned reps)
{
	while (reps-- > 0) {
		memset(buf, 0x5a, len);
		__asm__ volatile("" : : "r"(buf) : "memory");
	}
}

/* The L1 store bandwidth: aligned 64-byte stores over 8 KiB, bytes/cycle. */
static void
measure_l1_store(uint8_t *buf)
{
	void (*fn)(uint8_t *, size_t, unsigned) = store_loop_generic;
	const size_t len = 8192;
	const unsigned reps = 64;
	double v[31];
	unsigned b;

	res.l1_store_isa = "memset";
#if defined(__x86_64__)
	if (vsw_copy_cpu_features() & VSW_COPY_CPU_AVX512) {
		fn = store_loop_avx512;
		res.l1_store_isa = "avx512 64-byte stores";
	} else if (vsw_copy_cpu_features() & VSW_COPY_CPU_AVX2) {
		fn = store_loop_avx2;
		res.l1_store_isa = "avx2 2x32-byte stores";
	}
#endif
	fn(buf, len, reps);
	for (b = 0; b < 31; b++) {
		uint64_t t0 = tsc_begin();

		fn(buf, len, reps);
		v[b] = (double)len * reps / (double)(tsc_end() - t0);
	}
	qsort(v, 31, sizeof(v[0]), cmp_double);
	res.l1_store_bpc = v[15];
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
	res.tsc_ghz = tsc_calibrate();
	measure_l1_store(base[ST_HOT][0]);
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
				run_group(st, c, si, base[st], spans[st], &o);
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
	guard_summary();
	bench_report_targets(&res);
	return 0;
}

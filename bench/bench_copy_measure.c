/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vsw-bench-copy's measuring core: the TSC, the slowdown guard, the slot
 * layout of a group and its interleaved batches and rounds (method in
 * bench_copy.c), and the L1 store bandwidth.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__)
#include <immintrin.h>
#include <x86intrin.h>
#endif

#include <vsw/copy.h>

#include "bench_copy.h"

#define MAX_BATCHES 64
#define ROUNDS 5 /* medians per group; the cell is their median */
#define MAX_ROUNDS ROUNDS
#define GUARD_TOL 0.03 /* speed change tolerated */
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

double
bench_tsc_calibrate(void)
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
measure_all(const struct bench_results *r, struct bench_job *j,
	unsigned batches, double budget, int st, double *out)
{
	static double v[MAX_IMPLS][MAX_BATCHES];
	uint64_t iters[MAX_IMPLS] = {0}, t0;
	unsigned b, i, k;
	double est;

	for (i = 0; i < r->n_impls; i++) {
		out[i] = 0;
		if ((r->impls[i].hot_only && st != ST_HOT) ||
			!impl_select(&r->impls[i]))
			continue;
		j->iters = 16;
		r->impls[i].run(j);
		t0 = tsc_begin();
		r->impls[i].run(j);
		est = (double)(tsc_end() - t0) / 16;
		j->iters = (uint64_t)(budget / (est > 1 ? est : 1));
		if (j->iters < 4)
			j->iters = 4;
		iters[i] = j->iters;
		r->impls[i].run(j); /* warm-up at the batch length */
	}
	/* Each batch starts one column further on, so no implementation
	 * always runs right after the same neighbour. */
	for (b = 0; b < batches; b++)
		for (k = 0; k < r->n_impls; k++) {
			i = (k + b) % r->n_impls;
			if (iters[i] == 0)
				continue;
			impl_select(&r->impls[i]);
			j->iters = iters[i];
			t0 = tsc_begin();
			r->impls[i].run(j);
			v[i][b] = (double)(tsc_end() - t0) / (double)iters[i];
		}
	for (i = 0; i < r->n_impls; i++) {
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
measure_rounds(const struct bench_results *r, struct bench_job *j,
	unsigned rounds, unsigned batches, double budget, int st, double *out)
{
	static double m[MAX_IMPLS][MAX_ROUNDS];
	double one[MAX_IMPLS];
	unsigned k, i;

	for (k = 0; k < rounds; k++) {
		measure_all(r, j, batches, budget, st, one);
		for (i = 0; i < r->n_impls; i++)
			m[i][k] = one[i];
	}
	for (i = 0; i < r->n_impls; i++) {
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

/* One group: every implementation on one (state, case, size). */
void
bench_run_group(struct bench_results *r, int st, int c, unsigned si,
	uint8_t *base[2], size_t span, bool quick)
{
	struct bench_job j;
	/* ~80 us batches hot/warm, ~300 us cold, ROUNDS rounds: a full run
	 * takes ~2 minutes */
	unsigned batches = st == ST_COLD ? (quick ? 9 : 31) : (quick ? 11 : 41);
	double budget = st == ST_COLD ? 800e3 : (quick ? 50e3 : 200e3);
	unsigned rounds = quick ? 1 : ROUNDS;
	/* slot cursor per state, continued from group to group */
	static size_t cursor[N_STATES];
	int attempt;
	unsigned i;

	for (attempt = 0; attempt < 4; attempt++) {
		double before = ref_loop(), after, cpc[MAX_IMPLS];

		job_init(&j, base[0], base[1], span, st, &r->cases[c],
			r->sizes[si]);
		j.pos = cursor[st] % j.nslots;
		measure_rounds(r, &j, rounds, batches, budget, st, cpc);
		cursor[st] = j.pos;
		for (i = 0; i < r->n_impls; i++) {
			r->cell[st][c][si][i].cpc = cpc[i];
			r->cell[st][c][si][i].redo = attempt;
		}
		after = ref_loop();
		if (after < before * (1 + GUARD_TOL) &&
			after > before * (1 - GUARD_TOL))
			return;
	}
	for (i = 0; i < r->n_impls; i++)
		r->cell[st][c][si][i].noisy = true;
}

void
bench_guard_summary(const struct bench_results *r)
{
	unsigned redo = 0, noisy = 0, si;
	int st, c;

	for (st = 0; st < N_STATES; st++)
		for (c = 0; c < N_CASES; c++)
			for (si = 0; si < r->n_sizes; si++) {
				const struct bench_cell *x = r->cell[st][c][si];

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
void
bench_measure_l1_store(struct bench_results *r, uint8_t *buf)
{
	void (*fn)(uint8_t *, size_t, unsigned) = store_loop_generic;
	const size_t len = 8192;
	const unsigned reps = 64;
	double v[31];
	unsigned b;

	r->l1_store_isa = "memset";
#if defined(__x86_64__)
	if (vsw_copy_cpu_features() & VSW_COPY_CPU_AVX512) {
		fn = store_loop_avx512;
		r->l1_store_isa = "avx512 64-byte stores";
	} else if (vsw_copy_cpu_features() & VSW_COPY_CPU_AVX2) {
		fn = store_loop_avx2;
		r->l1_store_isa = "avx2 2x32-byte stores";
	}
#endif
	fn(buf, len, reps);
	for (b = 0; b < 31; b++) {
		uint64_t t0 = tsc_begin();

		fn(buf, len, reps);
		v[b] = (double)len * reps / (double)(tsc_end() - t0);
	}
	qsort(v, 31, sizeof(v[0]), cmp_double);
	r->l1_store_bpc = v[15];
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vsw-bench-copy internals: the job a runner executes, the runner template
 * (one per copy function, so each inlines its own copy), and the result
 * table shared by the measuring and the reporting files.
 */
#ifndef BENCH_COPY_H
#define BENCH_COPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* One timed batch: iters copies of n bytes, rotating over nslots slots. */
struct bench_job {
	uint8_t *dst; /* first slot's destination (offset applied) */
	const uint8_t *src;
	size_t n;
	size_t stride; /* bytes between slots */
	size_t nslots; /* 1: hot */
	size_t step;   /* slot increment, coprime with nslots */
	size_t pos;    /* next slot; kept across batches */
	uint64_t iters;
	size_t stepb; /* step * stride */
	size_t wrap;  /* nslots * stride */
};

typedef void bench_runner(struct bench_job *j);

/*
 * The barrier after each copy keeps the compiler from merging or dropping
 * repeated copies into the same buffer; it costs no instruction. It also
 * makes the loop reload stepb and wrap from *j, which keeps the values
 * live across the copy down to six: no runner then spills loop state
 * around its calls (stores that would compete with the copy's).
 */
#define BENCH_COPY_RUNNER(fn, copy)                                         \
	void fn(struct bench_job *j)                                        \
	{                                                                   \
		uint8_t *d = j->dst;                                        \
		const uint8_t *s = j->src;                                  \
		size_t n = j->n, off = j->pos * j->stride;                  \
		uint64_t i;                                                 \
                                                                            \
		for (i = j->iters; i > 0; i--) {                            \
			copy(d + off, s + off, n);                          \
			__asm__ volatile("" : : "r"(d), "r"(s) : "memory"); \
			off += j->stepb;                                    \
			if (off >= j->wrap)                                 \
				off -= j->wrap;                             \
		}                                                           \
		j->pos = off / j->stride;                                   \
	}                                                                   \
	_Static_assert(1, "use with a semicolon, like a declaration")

/* bench_copy_rte.c (twice), bench_copy_seq.c, bench_copy_inl.c (per ISA) */
bench_runner bench_run_rte, bench_run_rte_native, bench_run_seq64;
bench_runner bench_run_inl_sse2, bench_run_inl_avx2, bench_run_inl_avx512;

enum { ST_HOT, ST_WARM, ST_COLD, N_STATES };
enum { N_CASES = 4, MAX_SIZES = 32, MAX_IMPLS = 14 };

struct bench_impl {
	const char *name; /* column name */
	bench_runner *run;
	const char *vsw_impl; /* vsw implementation to select, or NULL */
	bool hot_only;
	bool anchor; /* one of the references the subject must beat */
};

struct bench_cell {
	double cpc; /* median TSC cycles per copy; 0: not measured */
	int redo;   /* groups repeated because the machine speed moved */
	bool noisy; /* still moving after the last retry */
};

struct bench_case {
	const char *name;
	const char *label;
	size_t src_off, dst_off;
};

struct bench_results {
	double tsc_ghz;
	double l1_store_bpc; /* aligned 64-byte store loop, bytes/cycle */
	const char *l1_store_isa;
	unsigned n_sizes, n_impls;
	unsigned subject; /* the column the targets judge (vsw inlined) */
	size_t sizes[MAX_SIZES];
	const struct bench_impl *impls;
	const struct bench_case *cases;
	const char *const *state_names;
	struct bench_cell cell[N_STATES][N_CASES][MAX_SIZES][MAX_IMPLS];
};

/* bench_copy_measure.c: TSC GHz; one group measured into r->cell; the
 * guard's summary line; the L1 store bandwidth into r. */
double bench_tsc_calibrate(void);
void bench_run_group(struct bench_results *r, int st, int c, unsigned si,
	uint8_t *base[2], size_t span, bool quick);
void bench_guard_summary(const struct bench_results *r);
void bench_measure_l1_store(struct bench_results *r, uint8_t *buf);

/* bench_copy_report.c */
void bench_report_table(const struct bench_results *r, int st, int c);
int bench_report_csv(const struct bench_results *r, const char *path);
int bench_report_plot(const struct bench_results *r, const char *path);
int bench_report_targets(const struct bench_results *r);

#endif /* BENCH_COPY_H */

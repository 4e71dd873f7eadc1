/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The data path per ISA: the public enqueue/dequeue entries call the set
 * of one ISA. "baseline" is the sources compiled for the build's target,
 * copies through the copy engine's dispatcher; "sse2", "avx2", "avx512"
 * are the same sources compiled with that ISA's flags and its copy body
 * inlined. "best" is the best ISA build the CPU runs (the copy engine's
 * CPUID/XCR0 probe, VSW_CPU_HIDE included). "auto", the default, is
 * baseline: measured (doc/benchmarks.md, Intel Xeon, 2026-12-01) the ISA
 * builds were no faster, enqueue 1.02-1.2x baseline's cycles per packet
 * at 1-9 KiB and dequeue 0.93-1.0x, and on AMD Zen 4 (2026-12-07) the
 * avx512 build 0.99-1.07x and 0.97-1.01x, so they are opt-in until a
 * machine shows a gain.
 *
 * An ISA build's copies are that ISA's copy body inlined, with no table
 * load (include/vsw/copy.h, VSW_COPY_INLINE), so it may run only while the
 * copy engine's active table is that ISA's: each burst checks it, and
 * otherwise (the copy validator on, another copy implementation selected)
 * runs the baseline build, whose copies go through the engine.
 * vsw_virtq_datapath_impl_get() names the selection, ..._effective() what
 * a burst runs now.
 *
 * Threads: a poller loads the table pointer once per burst (one relaxed
 * load of an immutable static: a whole old or a whole new table, and no
 * table is ever freed, so no grace period is needed), and the copy
 * engine's table pointer once; set() comes from the control thread.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <vsw/copy.h>
#include <vsw/virtq.h>

#include "virtq_isa.h"

struct virtq_dp_isa {
	const char *name;
	uint32_t needs; /* VSW_COPY_CPU_* bits */
	const struct vsw_copy_ops
		*copy; /* the copy table it inlines, or NULL */
	virtq_enq_fn *enqueue;
	virtq_deq_fn *dequeue;
};

static virtq_enq_fn resolve_enqueue;
static virtq_deq_fn resolve_dequeue;

static const struct virtq_dp_isa resolve_isa = {
	"auto", 0, NULL, resolve_enqueue, resolve_dequeue};

/* Best last: "best" takes the last one available; "auto" the first. */
static const struct virtq_dp_isa dp_isas[] = {
	{"baseline", 0, NULL, virtq_enqueue_base, virtq_dequeue_base},
#if defined(__x86_64__)
	{"sse2", VSW_COPY_CPU_SSE2, &vsw_copy_ops_sse2, virtq_enqueue_sse2,
		virtq_dequeue_sse2},
	{"avx2", VSW_COPY_CPU_AVX2, &vsw_copy_ops_avx2, virtq_enqueue_avx2,
		virtq_dequeue_avx2},
	{"avx512", VSW_COPY_CPU_AVX512, &vsw_copy_ops_avx512,
		virtq_enqueue_avx512, virtq_dequeue_avx512},
#endif
};
#define N_DP_ISAS (sizeof(dp_isas) / sizeof(dp_isas[0]))

static const struct virtq_dp_isa *dp_active = &resolve_isa;

static bool
dp_available(const struct virtq_dp_isa *isa)
{
	return (isa->needs & ~vsw_copy_cpu_features()) == 0;
}

static const struct virtq_dp_isa *
dp_best(void)
{
	unsigned i = N_DP_ISAS;

	while (--i > 0)
		if (dp_available(&dp_isas[i]))
			break;
	return &dp_isas[i];
}

static const struct virtq_dp_isa *
dp_auto(void)
{
	return &dp_isas[0];
}

static const struct virtq_dp_isa *
dp_get(void)
{
	return __atomic_load_n(&dp_active, __ATOMIC_RELAXED);
}

/* What this burst runs: the selection, or baseline while the copy engine
 * is not on the selection's own table (and for the resolver: NULL). */
static inline const struct virtq_dp_isa *
dp_burst(void)
{
	const struct virtq_dp_isa *isa = dp_get();

	if (isa->copy == NULL ||
		isa->copy ==
			__atomic_load_n(&vsw_copy_active_ops, __ATOMIC_RELAXED))
		return isa;
	return &dp_isas[0];
}

/* First burst before any set(): install "auto", then run it. Two pollers
 * racing here store the same table. */
static uint16_t
resolve_enqueue(struct vsw_virtq *vq, struct rte_mbuf **pkts, uint16_t n)
{
	const struct virtq_dp_isa *isa = dp_auto();

	__atomic_compare_exchange_n(&dp_active,
		&(const struct virtq_dp_isa *){&resolve_isa}, isa, false,
		__ATOMIC_RELAXED, __ATOMIC_RELAXED);
	return dp_burst()->enqueue(vq, pkts, n);
}

static uint16_t
resolve_dequeue(struct vsw_virtq *vq, struct rte_mempool *mp,
	struct rte_mbuf **pkts, uint16_t n)
{
	const struct virtq_dp_isa *isa = dp_auto();

	__atomic_compare_exchange_n(&dp_active,
		&(const struct virtq_dp_isa *){&resolve_isa}, isa, false,
		__ATOMIC_RELAXED, __ATOMIC_RELAXED);
	return dp_burst()->dequeue(vq, mp, pkts, n);
}

uint16_t
vsw_virtq_enqueue_burst(
	struct vsw_virtq *vq, struct rte_mbuf **pkts, uint16_t n)
{
	return dp_get()->enqueue(vq, pkts, n);
}

uint16_t
vsw_virtq_dequeue_burst(struct vsw_virtq *vq, struct rte_mempool *mp,
	struct rte_mbuf **pkts, uint16_t n)
{
	return dp_burst()->dequeue(vq, mp, pkts, n);
}

unsigned
vsw_virtq_datapath_impl_count(void)
{
	return N_DP_ISAS;
}

int
vsw_virtq_datapath_impl_info(unsigned idx, const char **name, bool *available)
{
	if (idx >= N_DP_ISAS)
		return -EINVAL;
	if (name != NULL)
		*name = dp_isas[idx].name;
	if (available != NULL)
		*available = dp_available(&dp_isas[idx]);
	return 0;
}

int
vsw_virtq_datapath_impl_set(const char *name)
{
	const struct virtq_dp_isa *isa = NULL;
	unsigned i;

	if (name == NULL)
		return -EINVAL;
	if (strcmp(name, "auto") == 0)
		isa = dp_auto();
	else if (strcmp(name, "best") == 0)
		isa = dp_best();
	for (i = 0; isa == NULL && i < N_DP_ISAS; i++)
		if (strcmp(name, dp_isas[i].name) == 0)
			isa = &dp_isas[i];
	if (isa == NULL)
		return -EINVAL;
	if (!dp_available(isa))
		return -ENOTSUP;
	__atomic_store_n(&dp_active, isa, __ATOMIC_RELAXED);
	return 0;
}

const char *
vsw_virtq_datapath_impl_get(void)
{
	const struct virtq_dp_isa *isa = dp_get();

	return isa == &resolve_isa ? dp_auto()->name : isa->name;
}

const char *
vsw_virtq_datapath_impl_effective(void)
{
	const struct virtq_dp_isa *isa = dp_get();

	if (isa == &resolve_isa)
		isa = dp_auto();
	if (isa->copy != NULL &&
		isa->copy !=
			__atomic_load_n(&vsw_copy_active_ops, __ATOMIC_RELAXED))
		isa = &dp_isas[0];
	return isa->name;
}

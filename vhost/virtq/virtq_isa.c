/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The data path per ISA: the public enqueue/dequeue entries call the set
 * of one ISA, chosen at the first burst ("auto": the best the CPU runs,
 * from the copy engine's CPUID/XCR0 probe, VSW_CPU_HIDE included) or by
 * vsw_virtq_datapath_impl_set(). "baseline" is the sources compiled for
 * the build's target with copies through the copy engine's dispatcher;
 * "sse2", "avx2", "avx512" are the same sources compiled with that ISA's
 * flags and its copy body inlined.
 *
 * Threads: a poller loads the table pointer once per burst (one relaxed
 * load of an immutable static: a whole old or a whole new table, and no
 * table is ever freed, so no grace period is needed); set() comes from
 * the control thread.
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
	virtq_enq_fn *enqueue;
	virtq_deq_fn *dequeue;
};

static virtq_enq_fn resolve_enqueue;
static virtq_deq_fn resolve_dequeue;

static const struct virtq_dp_isa resolve_isa = {
	"auto", 0, resolve_enqueue, resolve_dequeue};

/* Best last: "auto" takes the last one available. */
static const struct virtq_dp_isa dp_isas[] = {
	{"baseline", 0, virtq_enqueue_base, virtq_dequeue_base},
#if defined(__x86_64__)
	{"sse2", VSW_COPY_CPU_SSE2, virtq_enqueue_sse2, virtq_dequeue_sse2},
	{"avx2", VSW_COPY_CPU_AVX2, virtq_enqueue_avx2, virtq_dequeue_avx2},
	{"avx512", VSW_COPY_CPU_AVX512, virtq_enqueue_avx512,
		virtq_dequeue_avx512},
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
dp_get(void)
{
	return __atomic_load_n(&dp_active, __ATOMIC_RELAXED);
}

/* First burst before any set(): install "auto", then run it. Two pollers
 * racing here store the same table. */
static uint16_t
resolve_enqueue(struct vsw_virtq *vq, struct rte_mbuf **pkts, uint16_t n)
{
	const struct virtq_dp_isa *isa = dp_best();

	__atomic_compare_exchange_n(&dp_active,
		&(const struct virtq_dp_isa *){&resolve_isa}, isa, false,
		__ATOMIC_RELAXED, __ATOMIC_RELAXED);
	return dp_get()->enqueue(vq, pkts, n);
}

static uint16_t
resolve_dequeue(struct vsw_virtq *vq, struct rte_mempool *mp,
	struct rte_mbuf **pkts, uint16_t n)
{
	const struct virtq_dp_isa *isa = dp_best();

	__atomic_compare_exchange_n(&dp_active,
		&(const struct virtq_dp_isa *){&resolve_isa}, isa, false,
		__ATOMIC_RELAXED, __ATOMIC_RELAXED);
	return dp_get()->dequeue(vq, mp, pkts, n);
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
	return dp_get()->dequeue(vq, mp, pkts, n);
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

	return isa == &resolve_isa ? dp_best()->name : isa->name;
}

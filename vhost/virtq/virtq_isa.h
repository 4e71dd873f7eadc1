/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The data path compiled once per ISA: virtq_isa_enq.c and virtq_isa_deq.c
 * include the split-ring sources under a per-ISA name (VIRTQ_ISA, set by
 * meson with that ISA's -m flags), and virtq_isa.c calls the set picked at
 * start-up or by vsw_virtq_datapath_impl_set().
 */
#ifndef VIRTQ_ISA_H
#define VIRTQ_ISA_H

#include <stdint.h>

struct vsw_virtq;
struct rte_mbuf;
struct rte_mempool;

#define VIRTQ_ISA_CAT_(a, b) a##_##b
#define VIRTQ_ISA_CAT(a, b) VIRTQ_ISA_CAT_(a, b)
/* The name of fn in the ISA being compiled, e.g. virtq_enqueue_avx2. */
#define VIRTQ_ISA_SYM(fn) VIRTQ_ISA_CAT(fn, VIRTQ_ISA)

typedef uint16_t virtq_enq_fn(
	struct vsw_virtq *vq, struct rte_mbuf **pkts, uint16_t n);
typedef uint16_t virtq_deq_fn(struct vsw_virtq *vq, struct rte_mempool *mp,
	struct rte_mbuf **pkts, uint16_t n);

#define VIRTQ_ISA_DECLARE(isa)            \
	virtq_enq_fn virtq_enqueue_##isa; \
	virtq_deq_fn virtq_dequeue_##isa

VIRTQ_ISA_DECLARE(base);
#if defined(__x86_64__)
VIRTQ_ISA_DECLARE(sse2);
VIRTQ_ISA_DECLARE(avx2);
VIRTQ_ISA_DECLARE(avx512);
#endif

#endif /* VIRTQ_ISA_H */

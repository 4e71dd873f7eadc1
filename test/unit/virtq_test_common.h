/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared by the split (test_virtq.h) and packed (test_virtq_packed.h)
 * ring tests: feature bits, counter names and expected counter moves.
 */
#ifndef VSW_TEST_VIRTQ_TEST_COMMON_H
#define VSW_TEST_VIRTQ_TEST_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include <vsw/virtq.h>

#define F(bit) (1ull << (bit))
#define F_MRG F(VSW_VIRTIO_NET_F_MRG_RXBUF)
#define F_V1 F(VSW_VIRTIO_F_VERSION_1)
#define F_IND F(VSW_VIRTIO_RING_F_INDIRECT_DESC)
#define F_EVT F(VSW_VIRTIO_RING_F_EVENT_IDX)
#define F_STD (F_MRG | F_V1 | F_IND)
#define S(name) VSW_VIRTQ_STAT_##name

/* Counter s moved by exactly d. */
struct stat_delta {
	enum vsw_virtq_stat s;
	uint64_t d;
};

struct rte_mbuf;
struct rte_mempool;

/* One single-segment mbuf from mp holding len bytes of pattern. */
struct rte_mbuf *virtq_test_mbuf(
	struct rte_mempool *mp, uint32_t len, uint8_t pattern);

/* The deferred-copy tests' frames (test_virtq_defer.c,
 * test_virtq_packed_defer.c): an mbuf from mp holding len bytes of the
 * frame of seed in segments of at most max_seg (0: as few as the pool's
 * mbufs allow); out[0..len) checked against that frame. */
struct rte_mbuf *virtq_test_frame_mbuf(
	struct rte_mempool *mp, uint32_t len, uint8_t seed, uint32_t max_seg);
void virtq_test_frame_expect(const uint8_t *out, uint32_t len, uint8_t seed);

/* Pool audit around a test: every mbuf in mp's pool once (tg_pool_audit);
 * mark returns how many are in use, check asserts the same number again
 * (a double free that hides a leak keeps the in-use count right but leaves
 * an mbuf in the pool twice). */
unsigned int virtq_pool_mark(struct rte_mempool *mp);
void virtq_pool_check(struct rte_mempool *mp, unsigned int baseline);

/*
 * Asserts that exactly the counters in d[0..n) moved since seen (the
 * counters at the last check), by exactly their amounts; seen is updated.
 */
void virtq_stats_expect(const struct vsw_virtq *vq, uint64_t *seen,
	const struct stat_delta *d, size_t n);

#endif /* VSW_TEST_VIRTQ_TEST_COMMON_H */

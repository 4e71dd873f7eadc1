/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mbufs for tests, fuzzers and benchmarks (vsw_testlib): EAL start-up for
 * a test process, mbuf chains built from and compared with flat bytes.
 */
#ifndef VSW_TEST_TL_MBUF_H
#define VSW_TEST_TL_MBUF_H

#include <stdbool.h>
#include <stdint.h>

struct rte_mbuf;
struct rte_mempool;
struct tl_rng;

/*
 * rte_eal_init with no hugepages (256 MB), no PCI, no shared config,
 * lcore 0, the given file prefix (--in-memory is refused together with
 * --no-huge by DPDK 22.11).
 */
int tl_eal_init(const char *prog, const char *file_prefix);

/*
 * An mbuf chain holding data[0..len) (len 0: one empty mbuf), segments of
 * at most max_seg bytes (0: as much as an mbuf holds). With r, the shape
 * is random: every segment's headroom in [0, RTE_PKTMBUF_HEADROOM], and
 * segments cut short at random. Without r, segments are filled to the
 * brim behind the pool's default headroom. NULL when the pool runs dry.
 */
struct rte_mbuf *tl_mbuf_build(struct rte_mempool *mp, const uint8_t *data,
	uint32_t len, struct tl_rng *r, uint32_t max_seg);

/* tl_mbuf_build without r, the head's data at data_off. */
struct rte_mbuf *tl_mbuf_build_at(struct rte_mempool *mp, const uint8_t *data,
	uint32_t len, uint32_t max_seg, uint16_t data_off);

/* m's segments hold exactly data[0..len), pkt_len and nb_segs add up. */
bool tl_mbuf_equal(const struct rte_mbuf *m, const uint8_t *data, uint32_t len);

#endif /* VSW_TEST_TL_MBUF_H */

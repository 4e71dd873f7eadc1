/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers shared by virtqueue tests, benchmarks and fuzzers: EAL start-up
 * for test processes, a seeded RNG, and mbufs built from / compared with
 * flat byte arrays.
 */
#ifndef VSW_TEST_GUEST_UTIL_H
#define VSW_TEST_GUEST_UTIL_H

#include <stdbool.h>
#include <stdint.h>

struct rte_mbuf;
struct rte_mempool;

/*
 * rte_eal_init with no hugepages, no PCI, no shared config, the given
 * prefix (--in-memory is refused together with --no-huge by DPDK 22.11).
 */
int tg_eal_init(const char *prog, const char *file_prefix);

/* xorshift64*: reproducible from the seed. */
struct tg_rng {
	uint64_t s;
};
void tg_rng_seed(struct tg_rng *r, uint64_t seed);
uint64_t tg_rand(struct tg_rng *r);
/* Uniform in [lo, hi]. */
uint32_t tg_rand_range(struct tg_rng *r, uint32_t lo, uint32_t hi);
void tg_rand_bytes(struct tg_rng *r, uint8_t *p, uint32_t len);

/*
 * An mbuf chain holding data[0..len): segment sizes random (max_seg 0:
 * as big as the mbufs allow), head headroom random in [0, default].
 * NULL when the pool runs dry.
 */
struct rte_mbuf *tg_mbuf_build(struct rte_mempool *mp, const uint8_t *data,
	uint32_t len, struct tg_rng *r, uint32_t max_seg);

/* true when m's segments hold exactly data[0..len) and pkt_len/nb_segs add up. */
bool tg_mbuf_equal(const struct rte_mbuf *m, const uint8_t *data,
	uint32_t len);

#endif /* VSW_TEST_GUEST_UTIL_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TCP/UDP over IPv4/IPv6 frames as a guest with offloads hands them over
 * (vsw_testlib, DPDK): the L4 checksum field holds only the pseudo-header
 * sum (virtio's NEEDS_CSUM), the mbuf carries the TSO or checksum request.
 * Plus the tests' own ones' complement sum, the reference their checks
 * compare vsw's software offloads against.
 */
#ifndef VSW_TEST_TL_PKT_H
#define VSW_TEST_TL_PKT_H

#include <stdbool.h>
#include <stdint.h>

struct rte_mbuf;
struct rte_mempool;
struct tl_rng;

struct tl_pkt {
	bool v6, udp, tso;
	uint8_t tcp_flags; /* TCP only */
	uint32_t payload;  /* L4 payload bytes */
	uint32_t mss;	   /* TSO only */
	/* set by tl_pkt_build: offsets of L3 (l2) and L4 (l4), lengths */
	uint32_t l2, l3, l4, hlen, len;
};

static inline uint32_t
tl_rd16(const uint8_t *p)
{
	return (uint32_t)(p[0] << 8 | p[1]);
}

static inline uint32_t
tl_rd32(const uint8_t *p)
{
	return tl_rd16(p) << 16 | tl_rd16(p + 2);
}

static inline void
tl_wr16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* Ones' complement sum of p[0..n) (odd n: a zero pad byte) onto sum,
 * folded to 16 bits; 0xffff over a packet whose checksum verifies. */
uint32_t tl_ocsum(const uint8_t *p, uint32_t n, uint32_t sum);

/*
 * The frame s describes into d (s->hlen + s->payload bytes, s's offsets
 * and lengths filled in): Ethernet dst/src, IPv4 (id 0x1234, a complete
 * header checksum) or IPv6, TCP (random ports and numbers, s->tcp_flags)
 * or UDP, a random payload; the L4 checksum is the pseudo-header sum.
 */
void tl_pkt_build(uint8_t *d, struct tl_pkt *s, const uint8_t dst[6],
	const uint8_t src[6], struct tl_rng *r);

/* d as built for s in an mbuf chain of random shape (tl_mbuf_build), with
 * l2/l3(/l4, tso_segsz) lengths and the TSO or checksum request; NULL when
 * the pool runs dry. */
struct rte_mbuf *tl_pkt_mbuf(struct rte_mempool *mp, const uint8_t *d,
	const struct tl_pkt *s, struct tl_rng *r);

/* The L4 sum of the complete packet d[0..len) with the pseudo-header of
 * the L3 header at l3 (L4 at l4, protocol proto): 0xffff if it verifies. */
uint32_t tl_pkt_l4_sum(const uint8_t *d, uint32_t len, bool v6, uint32_t l3,
	uint32_t l4, uint8_t proto);

#endif /* VSW_TEST_TL_PKT_H */

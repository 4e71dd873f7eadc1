/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Offload test frames and the reference checksum (see tl_pkt.h).
 */
#include <string.h>

#include <rte_mbuf.h>

#include "tl_mbuf.h"
#include "tl_pkt.h"
#include "tl_rng.h"

uint32_t
tl_ocsum(const uint8_t *p, uint32_t n, uint32_t sum)
{
	for (uint32_t i = 0; i + 1 < n; i += 2)
		sum += tl_rd16(p + i);
	if (n & 1)
		sum += (uint32_t)p[n - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum;
}

/* The pseudo-header sum of the L3 header at l3 for l4len bytes of L4. */
static uint32_t
pseudo_sum(
	const uint8_t *d, bool v6, uint32_t l3, uint8_t proto, uint32_t l4len)
{
	uint32_t sum =
		v6 ? tl_ocsum(d + l3 + 8, 32, 0) : tl_ocsum(d + l3 + 12, 8, 0);

	return tl_ocsum(d, 0, sum + proto + l4len);
}

void
tl_pkt_build(uint8_t *d, struct tl_pkt *s, const uint8_t dst[6],
	const uint8_t src[6], struct tl_rng *r)
{
	uint32_t l4len = s->udp ? 8 : 20, o;
	uint8_t proto = s->udp ? 17 : 6;

	memset(d, 0, 128);
	memcpy(d, dst, 6);
	memcpy(d + 6, src, 6);
	tl_wr16(d + 12, s->v6 ? 0x86dd : 0x0800);
	s->l2 = 14;
	s->l3 = s->v6 ? 40 : 20;
	s->l4 = s->l2 + s->l3;
	s->hlen = s->l4 + l4len;
	s->len = s->hlen + s->payload;
	o = s->l2;
	if (s->v6) {
		d[o] = 0x60;
		tl_wr16(d + o + 4, l4len + s->payload);
		d[o + 6] = proto;
		d[o + 7] = 64;
		tl_rand_bytes(r, d + o + 8, 32);
	} else {
		d[o] = 0x45;
		tl_wr16(d + o + 2, 20 + l4len + s->payload);
		tl_wr16(d + o + 4, 0x1234);
		d[o + 8] = 64;
		d[o + 9] = proto;
		tl_rand_bytes(r, d + o + 12, 8);
		/* the header checksum a guest computed (complete) */
		tl_wr16(d + o + 10, ~tl_ocsum(d + o, 20, 0) & 0xffff);
	}
	o = s->l4;
	tl_rand_bytes(r, d + o, 4);
	if (s->udp) {
		tl_wr16(d + o + 4, 8 + s->payload);
	} else {
		tl_rand_bytes(r, d + o + 4, 8);
		d[o + 12] = 0x50;
		d[o + 13] = s->tcp_flags;
		d[o + 14] = 0xff;
	}
	tl_rand_bytes(r, d + s->hlen, s->payload);
	tl_wr16(d + o + (s->udp ? 6 : 16),
		pseudo_sum(d, s->v6, s->l2, proto, s->len - o));
}

struct rte_mbuf *
tl_pkt_mbuf(struct rte_mempool *mp, const uint8_t *d, const struct tl_pkt *s,
	struct tl_rng *r)
{
	struct rte_mbuf *m = tl_mbuf_build(mp, d, s->len, r, 0);

	if (m == NULL)
		return NULL;
	m->l2_len = s->l2;
	m->l3_len = s->l3;
	m->ol_flags = s->v6 ? RTE_MBUF_F_TX_IPV6 : RTE_MBUF_F_TX_IPV4;
	if (s->tso) {
		m->l4_len = 20;
		m->tso_segsz = (uint16_t)s->mss;
		m->ol_flags |= RTE_MBUF_F_TX_TCP_SEG | RTE_MBUF_F_TX_TCP_CKSUM;
	} else {
		m->ol_flags |= s->udp ? RTE_MBUF_F_TX_UDP_CKSUM
				      : RTE_MBUF_F_TX_TCP_CKSUM;
	}
	return m;
}

uint32_t
tl_pkt_l4_sum(const uint8_t *d, uint32_t len, bool v6, uint32_t l3, uint32_t l4,
	uint8_t proto)
{
	return tl_ocsum(
		d + l4, len - l4, pseudo_sum(d, v6, l3, proto, len - l4));
}

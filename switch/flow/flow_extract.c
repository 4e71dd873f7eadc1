/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Flow key extraction: packet bytes -> struct vsw_flow_key.
 *
 * Runs on PMD threads (and in tests/benchmarks), touches nothing shared.
 * Trusts the mbuf's own metadata (data_len of each segment, pkt_len equal to
 * their sum, next chain); trusts nothing inside the packet bytes: every
 * header is read only when it lies completely inside the packet (and inside
 * the IP datagram's own length for L4), so a truncated or malformed packet
 * yields the fields of its complete headers and zero for the rest.
 *
 * Header units (a unit fills its fields only when all of it is present):
 *   Ethernet 14 B; each VLAN tag 4 B (outer 0x8100/0x88a8, one inner 0x8100);
 *   IPv4 IHL*4 B incl. options; IPv6 40 B; each IPv6 extension header
 *   (hop-by-hop, routing, destination options: (len+1)*8 B; fragment 8 B);
 *   TCP 20 B; UDP 8 B; SCTP 12 B; ICMP/ICMPv6 4 B; Ethernet/IPv4 ARP 28 B.
 *
 * The parser is one always-inline body with a constant "multi" argument:
 * contiguous mbufs read straight from the first segment, chained mbufs fall
 * back to rte_pktmbuf_read() for headers that straddle segments.
 */
#include <stdbool.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include <vsw/flow.h>

#define ETH_HLEN 14
#define VLAN_HLEN 4
#define ETYPE_VLAN 0x8100
#define ETYPE_QINQ 0x88a8
#define ETYPE_IPV4 0x0800
#define ETYPE_IPV6 0x86dd
#define ETYPE_ARP 0x0806

#define PROTO_HOPOPTS 0
#define PROTO_ICMP 1
#define PROTO_TCP 6
#define PROTO_UDP 17
#define PROTO_ROUTING 43
#define PROTO_FRAGMENT 44
#define PROTO_ICMPV6 58
#define PROTO_DSTOPTS 60
#define PROTO_SCTP 132

/* An IPv6 chain longer than this is left unparsed (nw_proto = next one). */
#define IPV6_MAX_EXT_HDRS 8

/* Where the parser stands in one packet. */
struct fx_pkt {
	const struct rte_mbuf *m;
	const uint8_t *base; /* first segment's data */
	uint32_t seg_len;    /* bytes readable at base */
	uint32_t limit;	     /* bytes of the packet the parse may use */
};

static inline uint16_t
rd16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* A big-endian 16-bit field in host order (rte_be_to_cpu_16 of a variable
 * is an asm xchg the compiler cannot fold into the load). */
static inline uint16_t
rd16be(const uint8_t *p)
{
	return (uint16_t)((unsigned)p[0] << 8 | p[1]);
}

/* Pointer to len bytes at off, or NULL when they are not all in the packet. */
static __rte_always_inline const uint8_t *
fx_pull(const struct fx_pkt *c, uint32_t off, uint32_t len, void *buf,
	const bool multi)
{
	if (unlikely(off + len > c->limit))
		return NULL;
	/* Contiguous: limit starts at seg_len and only shrinks. */
	if (!multi || likely(off + len <= c->seg_len))
		return c->base + off;
	return rte_pktmbuf_read(c->m, off, len, buf);
}

static __rte_always_inline void
fx_l4(const struct fx_pkt *c, uint32_t off, uint8_t proto, bool v6,
	struct vsw_flow_key *key, const bool multi)
{
	uint8_t buf[20];
	const uint8_t *p;

	switch (proto) {
	case PROTO_TCP:
		p = fx_pull(c, off, 20, buf, multi);
		if (p == NULL || (p[12] >> 4) < 5)
			return;
		memcpy(&key->tp_src, p, 4);
		key->tcp_flags = rd16(p + 12) & rte_cpu_to_be_16(0x0fff);
		return;
	case PROTO_UDP:
		p = fx_pull(c, off, 8, buf, multi);
		break;
	case PROTO_SCTP:
		p = fx_pull(c, off, 12, buf, multi);
		break;
	case PROTO_ICMP:
	case PROTO_ICMPV6:
		if ((proto == PROTO_ICMPV6) != v6)
			return;
		p = fx_pull(c, off, 4, buf, multi);
		if (p == NULL)
			return;
		key->tp_src = rte_cpu_to_be_16(p[0]);
		key->tp_dst = rte_cpu_to_be_16(p[1]);
		return;
	default:
		return;
	}
	if (p != NULL)
		memcpy(&key->tp_src, p, 4);
}

static __rte_always_inline void
fx_ipv4(struct fx_pkt *c, uint32_t off, struct vsw_flow_key *key,
	const bool multi)
{
	uint8_t buf[20];
	const uint8_t *p = fx_pull(c, off, 20, buf, multi);
	uint32_t hlen, tot;
	uint16_t frag;

	if (p == NULL || (p[0] >> 4) != 4)
		return;
	hlen = (uint32_t)(p[0] & 0xf) * 4;
	tot = rd16be(p + 2);
	/* Options must be complete; the datagram must hold its header. */
	if (hlen < 20 || tot < hlen || off + hlen > c->limit)
		return;
	key->nw_tos = p[1];
	key->nw_ttl = p[8];
	key->nw_proto = p[9];
	memcpy(key->nw_src, p + 12, 4);
	memcpy(key->nw_dst, p + 16, 4);
	frag = rd16be(p + 6);
	if (frag & 0x3fff) {
		key->nw_frag = VSW_FRAG_ANY;
		if (frag & 0x1fff) {
			key->nw_frag |= VSW_FRAG_LATER;
			return;
		}
	}
	/* Bytes beyond the datagram (Ethernet padding) are not L4. */
	if (off + tot < c->limit)
		c->limit = off + tot;
	fx_l4(c, off + hlen, key->nw_proto, false, key, multi);
}

/* Walk IPv6 extension headers; returns the L4 offset or 0 to stop. */
static __rte_always_inline uint32_t
fx_ipv6_ext(const struct fx_pkt *c, uint32_t off, struct vsw_flow_key *key,
	const bool multi)
{
	uint8_t buf[8];
	const uint8_t *p;
	unsigned i;

	for (i = 0; i < IPV6_MAX_EXT_HDRS; i++) {
		switch (key->nw_proto) {
		case PROTO_HOPOPTS:
		case PROTO_ROUTING:
		case PROTO_DSTOPTS:
			p = fx_pull(c, off, 2, buf, multi);
			if (p == NULL ||
				off + ((uint32_t)p[1] + 1) * 8 > c->limit)
				return 0;
			key->nw_proto = p[0];
			off += ((uint32_t)p[1] + 1) * 8;
			break;
		case PROTO_FRAGMENT:
			p = fx_pull(c, off, 8, buf, multi);
			if (p == NULL)
				return 0;
			key->nw_proto = p[0];
			key->nw_frag = VSW_FRAG_ANY;
			if (rd16(p + 2) & rte_cpu_to_be_16(0xfff8)) {
				key->nw_frag |= VSW_FRAG_LATER;
				return 0;
			}
			off += 8;
			break;
		default:
			return off;
		}
	}
	return 0;
}

static __rte_always_inline void
fx_ipv6(struct fx_pkt *c, uint32_t off, struct vsw_flow_key *key,
	const bool multi)
{
	uint8_t buf[40];
	const uint8_t *p = fx_pull(c, off, 40, buf, multi);
	uint32_t plen;

	if (p == NULL || (p[0] >> 4) != 6)
		return;
	key->nw_tos = (uint8_t)((p[0] << 4) | (p[1] >> 4));
	key->nw_proto = p[6];
	key->nw_ttl = p[7];
	memcpy(key->nw_src, p + 8, 32);
	plen = rd16be(p + 4);
	off += 40;
	/* payload length 0 is a jumbogram (or broken): use the packet. */
	if (plen != 0 && off + plen < c->limit)
		c->limit = off + plen;
	off = fx_ipv6_ext(c, off, key, multi);
	if (off != 0)
		fx_l4(c, off, key->nw_proto, true, key, multi);
}

static __rte_always_inline void
fx_arp(const struct fx_pkt *c, uint32_t off, struct vsw_flow_key *key,
	const bool multi)
{
	/* htype 1 (Ethernet), ptype IPv4, hlen 6, plen 4 */
	static const uint8_t eth_ipv4[6] = {0, 1, 8, 0, 6, 4};
	uint8_t buf[28];
	const uint8_t *p = fx_pull(c, off, 28, buf, multi);
	uint16_t op;

	if (p == NULL || memcmp(p, eth_ipv4, sizeof(eth_ipv4)) != 0)
		return;
	op = rd16be(p + 6);
	key->nw_proto = op <= 0xff ? (uint8_t)op : 0;
	memcpy(key->nw_src, p + 14, 4);
	memcpy(key->nw_dst, p + 24, 4);
}

static __rte_always_inline void
fx_packet(struct fx_pkt *c, struct vsw_flow_key *key, const bool multi)
{
	uint8_t buf[ETH_HLEN];
	const uint8_t *p = fx_pull(c, 0, ETH_HLEN, buf, multi);
	uint32_t off = ETH_HLEN;
	uint16_t type;

	if (p == NULL)
		return;
	memcpy(key->dl_dst, p, 12);
	type = rd16(p + 12);
	key->dl_type = type;
	if (type == rte_cpu_to_be_16(ETYPE_VLAN) ||
		type == rte_cpu_to_be_16(ETYPE_QINQ)) {
		p = fx_pull(c, off, VLAN_HLEN, buf, multi);
		if (p == NULL)
			return;
		key->vlan_tci = rd16(p) | rte_cpu_to_be_16(VSW_VLAN_PRESENT);
		type = rd16(p + 2);
		off += VLAN_HLEN;
		key->dl_type = type;
		if (type == rte_cpu_to_be_16(ETYPE_VLAN)) {
			/* QinQ: match the outer tag, skip the inner one. */
			p = fx_pull(c, off, VLAN_HLEN, buf, multi);
			if (p == NULL)
				return;
			type = rd16(p + 2);
			off += VLAN_HLEN;
			key->dl_type = type;
		}
	}
	if (type == rte_cpu_to_be_16(ETYPE_IPV4))
		fx_ipv4(c, off, key, multi);
	else if (type == rte_cpu_to_be_16(ETYPE_IPV6))
		fx_ipv6(c, off, key, multi);
	else if (type == rte_cpu_to_be_16(ETYPE_ARP))
		fx_arp(c, off, key, multi);
}

static __rte_always_inline void
fx_contig(const struct rte_mbuf *m, struct vsw_flow_key *key)
{
	struct fx_pkt c = {
		.m = m,
		.base = rte_pktmbuf_mtod(m, const uint8_t *),
		.seg_len = RTE_MIN(m->data_len, m->pkt_len),
	};

	c.limit = c.seg_len;
	fx_packet(&c, key, false);
}

static __rte_noinline void
fx_multi(const struct rte_mbuf *m, struct vsw_flow_key *key)
{
	struct fx_pkt c = {
		.m = m,
		.base = rte_pktmbuf_mtod(m, const uint8_t *),
		.seg_len = RTE_MIN(m->data_len, m->pkt_len),
		.limit = m->pkt_len,
	};

	fx_packet(&c, key, true);
}

static __rte_always_inline void
fx_one(const struct rte_mbuf *m, uint16_t in_port, struct vsw_flow_key *key)
{
	memset(key, 0, sizeof(*key));
	key->in_port = in_port;
	if (likely(m->next == NULL))
		fx_contig(m, key);
	else
		fx_multi(m, key);
}

void
vsw_flow_extract(
	const struct rte_mbuf *m, uint16_t in_port, struct vsw_flow_key *key)
{
	fx_one(m, in_port, key);
}

void
vsw_flow_extract_burst(struct rte_mbuf *const *pkts, uint32_t n,
	uint16_t in_port, struct vsw_flow_key *keys)
{
	uint32_t i;

	if (n > 0)
		rte_prefetch0(rte_pktmbuf_mtod(pkts[0], const void *));
	for (i = 0; i < n; i++) {
		if (i + 1 < n)
			rte_prefetch0(
				rte_pktmbuf_mtod(pkts[i + 1], const void *));
		fx_one(pkts[i], in_port, &keys[i]);
	}
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vsw flow keys: what the switch core matches on, extracted from packets.
 *
 * One fixed 64-byte layout (eight 64-bit words, one cache line) so that a
 * masked compare is eight AND/XOR/OR word operations (or one 512-bit op) and
 * hashing walks words. A mask has the same layout: a set bit = "care".
 * Every multi-byte protocol field is stored in network byte order, exactly
 * as on the wire, so extraction is loads and stores, never byte swaps.
 * Fields that do not apply to a packet are zero.
 */
#ifndef VSW_FLOW_H
#define VSW_FLOW_H

#include <stdint.h>

struct rte_mbuf;

#define VSW_FLOW_KEY_WORDS 8

/* vlan_tci: set when the packet carried an 802.1Q tag (as OVS's CFI bit). */
#define VSW_VLAN_PRESENT 0x1000 /* host order; stored as htons() */

/* nw_frag bits. */
#define VSW_FRAG_ANY 0x01   /* a fragment (first or later) */
#define VSW_FRAG_LATER 0x02 /* not the first fragment: no L4 header */

struct vsw_flow_key {
	uint8_t dl_dst[6];     /*  0 Ethernet destination */
	uint8_t dl_src[6];     /*  6 Ethernet source */
	uint16_t dl_type;      /* 12 ethertype after VLAN tags (net order) */
	uint16_t vlan_tci;     /* 14 outer tag's TCI | VSW_VLAN_PRESENT, net */
	uint16_t in_port;      /* 16 input port number (host order) */
	uint8_t nw_proto;      /* 18 IP protocol; ARP: low byte of opcode */
	uint8_t nw_tos;        /* 19 DSCP << 2 | ECN (IPv4 TOS, IPv6 TC) */
	uint8_t nw_ttl;        /* 20 TTL / hop limit */
	uint8_t nw_frag;       /* 21 VSW_FRAG_* */
	uint16_t tcp_flags;    /* 22 TCP flags, low 12 bits (net order) */
	uint16_t tp_src;       /* 24 L4 source port; ICMP: type (net order) */
	uint16_t tp_dst;       /* 26 L4 dest port; ICMP: code (net order) */
	uint32_t pad;          /* 28 always zero */
	uint8_t nw_src[16];    /* 32 IPv6 source; IPv4 / ARP SPA in [0..3] */
	uint8_t nw_dst[16];    /* 48 IPv6 dest; IPv4 / ARP TPA in [0..3] */
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct vsw_flow_key) == 8 * VSW_FLOW_KEY_WORDS,
	"flow key must be eight 64-bit words");

/* A mask uses the key's layout. */
struct vsw_flow_mask {
	struct vsw_flow_key m;
};

static inline const uint64_t *
vsw_flow_key_words(const struct vsw_flow_key *k)
{
	return (const uint64_t *)(const void *)k;
}

/*
 * Extract the key of one packet. Parses as far as the packet is valid and
 * never reads past its data (multi-segment mbufs included); a truncated
 * header leaves the fields it would have filled at zero. A header fills its
 * fields only when complete: Ethernet 14 B, each VLAN tag 4 B (outer
 * 0x8100/0x88a8 tag matched, one inner 0x8100 tag skipped), IPv4 with all
 * its options, IPv6 40 B, each IPv6 extension header (hop-by-hop, routing,
 * destination options, fragment; nw_proto follows the chain), TCP 20 B,
 * UDP 8 B, SCTP 12 B, ICMP/ICMPv6 4 B, Ethernet/IPv4 ARP 28 B. L4 must lie
 * inside the IP datagram's own length; later fragments have no L4 fields.
 */
void vsw_flow_extract(const struct rte_mbuf *m, uint16_t in_port,
	struct vsw_flow_key *key);

/* Extract n (<= 32) keys at once. */
void vsw_flow_extract_burst(struct rte_mbuf *const *pkts, uint32_t n,
	uint16_t in_port, struct vsw_flow_key *keys);

#endif /* VSW_FLOW_H */

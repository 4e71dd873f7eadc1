/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * VXLAN (RFC 7348) over IPv4 as the switch core's overlay uses it: the
 * outer-header template, encapsulation into an mbuf's headroom and the
 * checks a packet from the underlay passes before it is decapsulated.
 *
 * Pure functions of their arguments (no switch state), so tests compare
 * them with a reference codec. Addresses and the VNI are in host order
 * unless a name says _be.
 *
 * Outer frame: Ethernet (14) + IPv4 without options (20; DF set, TTL 64,
 * checksum filled in) + UDP (8; destination port 4789, source port from the
 * inner flow hash, checksum 0 as RFC 7348 allows over IPv4) + VXLAN (8;
 * flags 0x08, the VNI) = VSW_VXLAN_OVERHEAD bytes before the inner frame.
 * An inner frame of L bytes makes an outer IPv4 packet of L + 36 bytes, so
 * an underlay MTU M carries inner frames of at most M - 36 bytes (inner
 * IP MTU M - 50 for an untagged inner frame).
 */
#ifndef VSW_VXLAN_H
#define VSW_VXLAN_H

#include <stdint.h>

struct rte_mbuf;

#define VSW_VXLAN_UDP_PORT 4789
#define VSW_VXLAN_OVERHEAD 50u  /* outer Ethernet + IPv4 + UDP + VXLAN */
#define VSW_VXLAN_L3_OVERHEAD 36u /* what counts against the underlay MTU */
#define VSW_VXLAN_VNI_MAX 0xffffffu
#define VSW_VXLAN_OUTER_TTL 64
#define VSW_VXLAN_INNER_MIN 14u /* an inner frame carries an Ethernet header */

/* The outer headers of one (local VTEP, remote VTEP) pair, precomputed:
 * destination MAC, VNI, lengths, source port and checksum are per packet. */
struct vsw_vxlan_tmpl {
	uint8_t hdr[VSW_VXLAN_OVERHEAD];
	uint32_t csum_base; /* one's-complement sum of the fixed IPv4 words */
};

void vsw_vxlan_tmpl_init(struct vsw_vxlan_tmpl *t, const uint8_t src_mac[6],
	uint32_t src_ip, uint32_t dst_ip);

/* RFC 7348 source port: 49152 + the flow hash folded into 14 bits. */
static inline uint16_t
vsw_vxlan_src_port(uint32_t hash)
{
	return (uint16_t)(49152u + ((hash ^ hash >> 16) & 0x3fffu));
}

/*
 * A hash of the inner frame's flow: Ethernet addresses, and for IPv4 (no
 * fragment) the addresses and the first 4 bytes after the IP header (the
 * ports of TCP/UDP). Reads at most len bytes of p.
 */
uint32_t vsw_vxlan_flow_hash(const uint8_t *p, uint32_t len);

/*
 * Encapsulate m in place: prepend the template (headroom >= 50, first
 * segment exclusively ours: the caller checks), set the destination MAC,
 * VNI, lengths, source port and IPv4 checksum. The inner frame is not
 * copied. Returns 0, or -1 when the headroom is short (m unchanged).
 */
int vsw_vxlan_encap(struct rte_mbuf *m, const struct vsw_vxlan_tmpl *t,
	const uint8_t dst_mac[6], uint32_t vni, uint16_t src_port);

/* What an underlay packet is, after vsw_vxlan_parse(). */
enum vsw_vxlan_verdict {
	VSW_VXLAN_OK,        /* VXLAN for local_ip: decapsulate */
	VSW_VXLAN_NOT_OURS,  /* anything else: the underlay's own rules */
	VSW_VXLAN_BAD_IP,    /* to local_ip: IPv4 version or IHL wrong */
	VSW_VXLAN_TRUNCATED, /* to local_ip: a header or the inner frame cut */
	VSW_VXLAN_BAD_CSUM,  /* to local_ip: IPv4 header checksum wrong */
	VSW_VXLAN_FRAGMENT,  /* UDP to local_ip: MF or an offset (no reassembly) */
	VSW_VXLAN_TTL,       /* UDP 4789 to local_ip with TTL 0 */
	VSW_VXLAN_BAD_UDP,   /* UDP length past the IPv4 payload or < 8 */
	VSW_VXLAN_BAD_FLAGS, /* VXLAN I flag clear */
	VSW_VXLAN_N_VERDICTS
};

struct vsw_vxlan_rx {
	uint32_t vni;
	uint32_t src_ip;     /* outer source: the remote VTEP */
	uint32_t inner_off;  /* inner frame: bytes [inner_off, +inner_len) */
	uint32_t inner_len;
};

/*
 * Classify an underlay frame: p holds its first seg_len bytes (the headers
 * must be there), pkt_len is the whole frame. Addressed to us means an
 * untagged IPv4 frame whose destination is local_ip; frames too short to
 * tell (< 34 bytes), to other addresses, of another protocol than UDP or
 * another UDP port are NOT_OURS. Never reads past seg_len.
 */
enum vsw_vxlan_verdict vsw_vxlan_parse(const uint8_t *p, uint32_t seg_len,
	uint32_t pkt_len, uint32_t local_ip, struct vsw_vxlan_rx *rx);

#endif /* VSW_VXLAN_H */

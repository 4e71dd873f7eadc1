/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * VXLAN codec (vsw/vxlan.h): the outer-header template, encapsulation by
 * prepending into the headroom, and the underlay checks before
 * decapsulation.
 *
 * Runs on PMDs, per packet; no state. vsw_vxlan_parse() trusts nothing in
 * the packet: every field it reads was first checked to lie inside seg_len
 * bytes, and every length field is checked against the frame before it
 * decides anything by it.
 */
#include <string.h>

#include <rte_byteorder.h>
#include <rte_mbuf.h>

#include <vsw/vxlan.h>

#define ETH_LEN 14
#define IP4_LEN 20
#define UDP_LEN 8
#define VXH_LEN 8
#define IP_OFF ETH_LEN
#define UDP_OFF (ETH_LEN + IP4_LEN)
#define VXH_OFF (UDP_OFF + UDP_LEN)
#define IP_DF 0x4000
#define IP_MF 0x2000
#define IP_OFFSET_MASK 0x1fff
#define VXLAN_FLAG_I 0x08

static inline uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static inline void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void
put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static inline uint16_t
fold(uint32_t sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

void
vsw_vxlan_tmpl_init(struct vsw_vxlan_tmpl *t, const uint8_t src_mac[6],
	uint32_t src_ip, uint32_t dst_ip)
{
	uint8_t *h = t->hdr, *ip = h + IP_OFF;
	uint32_t sum = 0;
	unsigned i;

	memset(h, 0, sizeof(t->hdr));
	memcpy(h + 6, src_mac, 6);
	put16(h + 12, 0x0800);
	ip[0] = 0x45;
	put16(ip + 6, IP_DF);
	ip[8] = VSW_VXLAN_OUTER_TTL;
	ip[9] = 17; /* UDP */
	put32(ip + 12, src_ip);
	put32(ip + 16, dst_ip);
	put16(h + UDP_OFF + 2, VSW_VXLAN_UDP_PORT);
	h[VXH_OFF] = VXLAN_FLAG_I;
	/* Total length (the only per-packet IPv4 word) and checksum are 0
	 * here: the per-packet checksum is fold(base + length). */
	for (i = 0; i < IP4_LEN; i += 2)
		sum += get16(ip + i);
	t->csum_base = sum;
}

int
vsw_vxlan_encap(struct rte_mbuf *m, const struct vsw_vxlan_tmpl *t,
	const uint8_t dst_mac[6], uint32_t vni, uint16_t src_port)
{
	uint32_t inner = rte_pktmbuf_pkt_len(m);
	uint16_t ip_len = (uint16_t)(inner + VSW_VXLAN_L3_OVERHEAD);
	uint8_t *h;

	h = (uint8_t *)rte_pktmbuf_prepend(m, VSW_VXLAN_OVERHEAD);
	if (unlikely(h == NULL))
		return -1;
	memcpy(h, t->hdr, VSW_VXLAN_OVERHEAD);
	memcpy(h, dst_mac, 6);
	put16(h + IP_OFF + 2, ip_len);
	put16(h + IP_OFF + 10, (uint16_t)~fold(t->csum_base + ip_len));
	put16(h + UDP_OFF, src_port);
	put16(h + UDP_OFF + 4, (uint16_t)(ip_len - IP4_LEN));
	put32(h + VXH_OFF + 4, vni << 8);
	/* The inner frame's offload metadata does not describe the outer
	 * packet; the caller never encapsulates one that needs it. */
	m->ol_flags = 0;
	m->packet_type = 0;
	return 0;
}

uint32_t
vsw_vxlan_flow_hash(const uint8_t *p, uint32_t len)
{
	uint32_t h = 0x9747b28cu, w[5] = {0}, n = 3, ihl, i;

	if (len < ETH_LEN)
		return h;
	w[0] = get32(p);
	w[1] = get32(p + 4);
	w[2] = get32(p + 8);
	if (get16(p + 12) == 0x0800 && len >= ETH_LEN + IP4_LEN &&
		(p[IP_OFF] >> 4) == 4) {
		ihl = (uint32_t)(p[IP_OFF] & 0xf) * 4;
		w[3] = get32(p + IP_OFF + 12) ^ get32(p + IP_OFF + 16);
		n = 4;
		if ((get16(p + IP_OFF + 6) & (IP_MF | IP_OFFSET_MASK)) == 0 &&
			ihl >= IP4_LEN && len >= ETH_LEN + ihl + 4) {
			w[4] = get32(p + ETH_LEN + ihl) ^ p[IP_OFF + 9];
			n = 5;
		}
	}
	for (i = 0; i < n; i++) { /* multiply-xorshift per word */
		h ^= w[i];
		h *= 0x85ebca6bu;
		h ^= h >> 13;
	}
	return h;
}

static bool
ip4_csum_ok(const uint8_t *ip, uint32_t ihl)
{
	uint32_t sum = 0, i;

	for (i = 0; i < ihl; i += 2)
		sum += get16(ip + i);
	return fold(sum) == 0xffff;
}

enum vsw_vxlan_verdict
vsw_vxlan_parse(const uint8_t *p, uint32_t seg_len, uint32_t pkt_len,
	uint32_t local_ip, struct vsw_vxlan_rx *rx)
{
	const uint8_t *ip = p + IP_OFF, *udp;
	uint32_t ihl, tot, udp_len;

	if (seg_len > pkt_len)
		seg_len = pkt_len;
	/* Ours is decided by the destination address: 34 bytes. */
	if (seg_len < ETH_LEN + IP4_LEN || get16(p + 12) != 0x0800 ||
		get32(ip + 16) != local_ip)
		return VSW_VXLAN_NOT_OURS;
	ihl = (uint32_t)(ip[0] & 0xf) * 4;
	if ((ip[0] >> 4) != 4 || ihl < IP4_LEN)
		return VSW_VXLAN_BAD_IP;
	if (seg_len < ETH_LEN + ihl)
		return VSW_VXLAN_TRUNCATED;
	if (!ip4_csum_ok(ip, ihl))
		return VSW_VXLAN_BAD_CSUM;
	if (ip[9] != 17)
		return VSW_VXLAN_NOT_OURS;
	if (get16(ip + 6) & (IP_MF | IP_OFFSET_MASK))
		return VSW_VXLAN_FRAGMENT;
	tot = get16(ip + 2);
	if (tot < ihl + UDP_LEN || tot > pkt_len - ETH_LEN ||
		seg_len < ETH_LEN + ihl + UDP_LEN)
		return VSW_VXLAN_TRUNCATED;
	udp = ip + ihl;
	if (get16(udp + 2) != VSW_VXLAN_UDP_PORT)
		return VSW_VXLAN_NOT_OURS;
	if (ip[8] == 0)
		return VSW_VXLAN_TTL;
	udp_len = get16(udp + 4);
	if (udp_len < UDP_LEN || udp_len > tot - ihl)
		return VSW_VXLAN_BAD_UDP;
	if (udp_len < UDP_LEN + VXH_LEN + VSW_VXLAN_INNER_MIN ||
		seg_len < ETH_LEN + ihl + UDP_LEN + VXH_LEN)
		return VSW_VXLAN_TRUNCATED;
	if (!(udp[UDP_LEN] & VXLAN_FLAG_I))
		return VSW_VXLAN_BAD_FLAGS;
	rx->vni = get32(udp + UDP_LEN + 4) >> 8;
	rx->src_ip = get32(ip + 12);
	rx->inner_off = ETH_LEN + ihl + UDP_LEN + VXH_LEN;
	rx->inner_len = udp_len - UDP_LEN - VXH_LEN;
	return VSW_VXLAN_OK;
}

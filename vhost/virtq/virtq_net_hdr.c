/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The virtio-net header's offload fields (virtio 1.1, 5.1.6.2) <-> mbuf
 * offload metadata (DPDK's TX convention: RTE_MBUF_F_TX_*, l2/l3/l4_len,
 * tso_segsz).
 *
 * Dequeue: the header comes from the guest and is hostile. It is believed
 * only where the packet's own headers agree with it: csum_start must be
 * where the packet's TCP or UDP header starts and csum_offset must point at
 * that protocol's checksum; a GSO type must name the packet's IP version
 * and TCP. So the metadata handed on never points past the packet (the
 * DPDK vhost bug class of CVE-2024-11614), and the switch's software
 * segmentation and checksum code can trust it.
 *
 * Called once per packet by the burst functions only when the queue
 * negotiated offloads (chosen per burst); the packed-ring path can call the
 * same two functions. No allocation, no locks; reads the mbuf only within
 * pkt_len.
 */
#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#include "virtq_priv.h"

#define L4_TCP_CSUM_OFF 16 /* offsetof(struct rte_tcp_hdr, cksum) */
#define L4_UDP_CSUM_OFF 6  /* offsetof(struct rte_udp_hdr, dgram_cksum) */
#define VLAN_TAGS_MAX 2

_Static_assert(sizeof(struct vsw_virtio_net_hdr) == 12, "virtio 1.1 5.1.6");

/* What the packet's own headers say; l4_len 0 when L4 is not TCP/UDP. */
struct pkt_hdrs {
	uint16_t l2_len;
	uint16_t l3_len;
	uint16_t l4_len;
	uint8_t ipv;   /* 4, 6, or 0: not IP */
	uint8_t proto; /* IPPROTO_TCP, IPPROTO_UDP or another */
};

/* Bytes [off, off + len) of m, copied to buf if they span segments. */
static inline const void *
hdr_at(const struct rte_mbuf *m, uint32_t off, uint32_t len, void *buf)
{
	if (off + len > m->pkt_len)
		return NULL;
	return rte_pktmbuf_read(m, off, len, buf);
}

/* L2 (Ethernet + VLAN tags) then the IP header; 0, or -1 if none. */
static int
parse_l3(const struct rte_mbuf *m, struct pkt_hdrs *p)
{
	union {
		struct rte_ether_hdr eth;
		struct rte_vlan_hdr vlan;
		struct rte_ipv4_hdr ip4;
		struct rte_ipv6_hdr ip6;
	} buf;
	const struct rte_ether_hdr *eth = hdr_at(m, 0, sizeof(*eth), &buf);
	uint16_t type;
	unsigned tags;

	if (eth == NULL)
		return -1;
	type = eth->ether_type;
	p->l2_len = sizeof(*eth);
	for (tags = 0; tags <= VLAN_TAGS_MAX; tags++) {
		const struct rte_vlan_hdr *v;

		if (type != rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN) &&
			type != rte_cpu_to_be_16(RTE_ETHER_TYPE_QINQ))
			break;
		if (tags == VLAN_TAGS_MAX)
			return -1;
		v = hdr_at(m, p->l2_len, sizeof(*v), &buf);
		if (v == NULL)
			return -1;
		type = v->eth_proto;
		p->l2_len += sizeof(*v);
	}
	if (type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4)) {
		const struct rte_ipv4_hdr *ip =
			hdr_at(m, p->l2_len, sizeof(*ip), &buf);

		if (ip == NULL || (ip->version_ihl >> 4) != 4 ||
			(ip->version_ihl & 0xf) < 5)
			return -1;
		p->ipv = 4;
		p->l3_len = (uint16_t)((ip->version_ihl & 0xf) * 4);
		p->proto = ip->next_proto_id;
		/* a fragment's L4 header is not where csum_start says */
		if ((ip->fragment_offset &
			    rte_cpu_to_be_16(RTE_IPV4_HDR_OFFSET_MASK |
					     RTE_IPV4_HDR_MF_FLAG)) != 0)
			p->proto = 0;
	} else if (type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6)) {
		const struct rte_ipv6_hdr *ip =
			hdr_at(m, p->l2_len, sizeof(*ip), &buf);

		if (ip == NULL)
			return -1;
		p->ipv = 6;
		p->l3_len = sizeof(*ip);
		p->proto = ip->proto;
	} else {
		return -1;
	}
	return 0;
}

/* The whole chain of headers; l4_len 0 unless TCP/UDP lies within m. */
static void
parse_hdrs(const struct rte_mbuf *m, struct pkt_hdrs *p)
{
	uint32_t l4;

	memset(p, 0, sizeof(*p));
	if (parse_l3(m, p) < 0)
		return;
	l4 = (uint32_t)p->l2_len + p->l3_len;
	if (p->proto == IPPROTO_TCP) {
		struct rte_tcp_hdr buf;
		const struct rte_tcp_hdr *th = hdr_at(m, l4, sizeof(*th), &buf);
		uint16_t len = th ? (uint16_t)((th->data_off >> 4) * 4) : 0;

		if (len >= sizeof(*th) && l4 + len <= m->pkt_len)
			p->l4_len = len;
	} else if (p->proto == IPPROTO_UDP) {
		if (l4 + sizeof(struct rte_udp_hdr) <= m->pkt_len)
			p->l4_len = sizeof(struct rte_udp_hdr);
	}
}

/* NEEDS_CSUM: the checksum must be the packet's TCP or UDP one. */
static int
check_csum(const struct vsw_virtio_net_hdr *h, const struct pkt_hdrs *p,
	uint32_t pkt_len)
{
	uint32_t l4 = (uint32_t)p->l2_len + p->l3_len;

	/* 32-bit: no u16 overflow makes a far offset look near */
	if ((uint32_t)h->csum_start + h->csum_offset + 2 > pkt_len)
		return VSW_VIRTQ_STAT_DEQ_DROP_HDR_CSUM_RANGE;
	if (p->l4_len == 0 || h->csum_start != l4)
		return VSW_VIRTQ_STAT_DEQ_DROP_HDR_CSUM_L4;
	if (h->csum_offset !=
		(p->proto == IPPROTO_TCP ? L4_TCP_CSUM_OFF : L4_UDP_CSUM_OFF))
		return VSW_VIRTQ_STAT_DEQ_DROP_HDR_CSUM_L4;
	return 0;
}

/* A GSO header: negotiated type, the packet's protocols, sane sizes. */
static int
check_gso(const struct vsw_virtio_net_hdr *h, const struct pkt_hdrs *p,
	uint32_t pkt_len, uint64_t features)
{
	uint32_t hdrs, payload, segs;
	unsigned ipv, bit;

	if (h->gso_type == VSW_VIRTIO_NET_HDR_GSO_TCPV4) {
		ipv = 4;
		bit = VSW_VIRTIO_NET_F_HOST_TSO4;
	} else if (h->gso_type == VSW_VIRTIO_NET_HDR_GSO_TCPV6) {
		ipv = 6;
		bit = VSW_VIRTIO_NET_F_HOST_TSO6;
	} else {
		return VSW_VIRTQ_STAT_DEQ_DROP_HDR_GSO_TYPE; /* UDP, ECN, ? */
	}
	if (!((features >> bit) & 1) || p->ipv != ipv ||
		p->proto != IPPROTO_TCP || p->l4_len == 0)
		return VSW_VIRTQ_STAT_DEQ_DROP_HDR_GSO_TYPE;
	if (h->hdr_len > pkt_len)
		return VSW_VIRTQ_STAT_DEQ_DROP_HDR_LEN;
	if (pkt_len - p->l2_len > VSW_VIRTQ_GSO_IP_MAX)
		return VSW_VIRTQ_STAT_DEQ_DROP_HDR_GSO_TOTAL;
	if (h->gso_size == 0)
		return VSW_VIRTQ_STAT_DEQ_DROP_HDR_GSO_SIZE;
	hdrs = (uint32_t)p->l2_len + p->l3_len + p->l4_len;
	payload = pkt_len - hdrs; /* l4_len != 0: hdrs <= pkt_len */
	segs = (payload + h->gso_size - 1) / h->gso_size;
	if (segs > VSW_VIRTQ_GSO_SEGS_MAX)
		return VSW_VIRTQ_STAT_DEQ_DROP_HDR_GSO_SIZE;
	return 0;
}

int
vsw_virtq_net_hdr_to_mbuf(const struct vsw_virtio_net_hdr *h,
	struct rte_mbuf *m, uint64_t features)
{
	bool csum = (h->flags & VSW_VIRTIO_NET_HDR_F_NEEDS_CSUM) &&
		    ((features >> VSW_VIRTIO_NET_F_CSUM) & 1);
	bool gso = h->gso_type != VSW_VIRTIO_NET_HDR_GSO_NONE;
	struct pkt_hdrs p;
	int rc;

	if (likely(!csum && !gso))
		return 0;
	if (gso && !csum) /* virtio 1.1 5.1.6.2: GSO implies NEEDS_CSUM */
		return VSW_VIRTQ_STAT_DEQ_DROP_HDR_GSO_TYPE;
	parse_hdrs(m, &p);
	if (csum) {
		rc = check_csum(h, &p, m->pkt_len);
		if (rc != 0)
			return rc;
	}
	if (gso) {
		rc = check_gso(h, &p, m->pkt_len, features);
		if (rc != 0)
			return rc;
	}
	m->l2_len = p.l2_len;
	m->l3_len = p.l3_len;
	m->ol_flags |= p.ipv == 4 ? RTE_MBUF_F_TX_IPV4 : RTE_MBUF_F_TX_IPV6;
	if (gso) {
		m->l4_len = p.l4_len;
		m->tso_segsz = h->gso_size;
		m->ol_flags |= RTE_MBUF_F_TX_TCP_SEG | RTE_MBUF_F_TX_TCP_CKSUM;
	} else {
		m->ol_flags |= p.proto == IPPROTO_TCP ? RTE_MBUF_F_TX_TCP_CKSUM
						      : RTE_MBUF_F_TX_UDP_CKSUM;
	}
	return 0;
}

int
vsw_virtq_net_hdr_from_mbuf(const struct rte_mbuf *m,
	struct vsw_virtio_net_hdr *h, uint64_t features)
{
	uint64_t l4 = m->ol_flags & RTE_MBUF_F_TX_L4_MASK;
	uint16_t start = (uint16_t)(m->l2_len + m->l3_len);

	memset(h, 0, sizeof(*h));
	if (m->ol_flags & RTE_MBUF_F_TX_TCP_SEG) {
		bool v4 = (m->ol_flags & RTE_MBUF_F_TX_IPV4) != 0;
		unsigned bit = v4 ? VSW_VIRTIO_NET_F_GUEST_TSO4
				  : VSW_VIRTIO_NET_F_GUEST_TSO6;

		if (!((features >> bit) & 1))
			return -1;
		h->gso_type = v4 ? VSW_VIRTIO_NET_HDR_GSO_TCPV4
				 : VSW_VIRTIO_NET_HDR_GSO_TCPV6;
		h->gso_size = m->tso_segsz;
		h->hdr_len = (uint16_t)(start + m->l4_len);
		l4 = RTE_MBUF_F_TX_TCP_CKSUM;
	}
	if (l4 == 0)
		return 0;
	if (!((features >> VSW_VIRTIO_NET_F_GUEST_CSUM) & 1))
		return -1;
	if (l4 != RTE_MBUF_F_TX_TCP_CKSUM && l4 != RTE_MBUF_F_TX_UDP_CKSUM)
		return -1; /* SCTP: not a virtio offload */
	h->flags = VSW_VIRTIO_NET_HDR_F_NEEDS_CSUM;
	h->csum_start = start;
	h->csum_offset = l4 == RTE_MBUF_F_TX_TCP_CKSUM ? L4_TCP_CSUM_OFF
						       : L4_UDP_CSUM_OFF;
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Software offloads at the output: for a destination port that cannot
 * take what a packet carries (TSO, a partial checksum; the port says
 * which it can through tx_offloads), the packet is segmented and its
 * checksums completed here, per destination, just before tx_burst. A TSO
 * frame bound for a port that has TSO passes untouched: no segmentation,
 * no checksum work.
 *
 * Not DPDK's rte_gso: 22.11 has no TCP/IPv6 GSO, and its segments are
 * indirect mbufs over the original payload, so each still needs a second
 * pool and a checksum pass over the payload anyway. Here a segment is one
 * copy of its bytes (header + payload slice, chained when longer than an
 * mbuf) from cfg.seg_pool, checksummed while hot.
 *
 * Runs on the PMD that owns the output batch; no locks, mbufs from the
 * pool only (a pool per-lcore cache: no shared writes in the steady state).
 * The mbuf metadata is trusted as far as the virtq set it (checked against
 * the packet there); the lengths are re-checked so no other producer can
 * make this read past a packet. A packet shared with other destinations (a
 * flood) is never modified in place: a copy is.
 */
#include <errno.h>

#include <rte_byteorder.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>

#include "switch_priv.h"

#define OL_HDR_MAX 256u /* l2 + l3 + l4 bytes a segment repeats, at most */
#define TCP_FIN 0x01
#define TCP_PSH 0x08
#define TCP_CWR 0x80

static inline bool
shared(const struct rte_mbuf *m)
{
	return rte_mbuf_refcnt_read(m) != 1 || RTE_MBUF_CLONED(m) ||
	       (RTE_MBUF_HAS_EXTBUF(m) &&
		       rte_mbuf_ext_refcnt_read(m->shinfo) != 1);
}

/* The VSW_PORT_OL_* bits packet m needs; 0 = it is complete. */
static inline uint32_t
ol_needed(uint64_t ol)
{
	if (ol & RTE_MBUF_F_TX_TCP_SEG)
		return VSW_PORT_OL_CSUM |
		       ((ol & RTE_MBUF_F_TX_IPV4) ? VSW_PORT_OL_TSO4
						  : VSW_PORT_OL_TSO6);
	return (ol & RTE_MBUF_F_TX_L4_MASK) ? VSW_PORT_OL_CSUM : 0;
}

bool
offload_needed(struct rte_mbuf *const *pkts, uint16_t n, uint32_t capa)
{
	uint64_t any = 0;
	uint32_t need = 0;
	uint16_t i;

	/* the common answer (no offloaded packet) from one OR per packet:
	 * the flags' cache line is the one the port's tx reads next */
	for (i = 0; i < n; i++)
		any |= pkts[i]->ol_flags;
	if (likely((any & (RTE_MBUF_F_TX_TCP_SEG | RTE_MBUF_F_TX_L4_MASK)) ==
		    0))
		return false;
	for (i = 0; i < n; i++)
		need |= ol_needed(pkts[i]->ol_flags);
	return (need & ~capa) != 0;
}

/* Appends len bytes to the chain ending in *tail; -1 if the pool ran dry. */
static int
chain_put(struct rte_mempool *mp, struct rte_mbuf *head, struct rte_mbuf **tail,
	const uint8_t *src, uint32_t len)
{
	while (len != 0) {
		struct rte_mbuf *t = *tail;
		uint32_t k = rte_pktmbuf_tailroom(t);

		if (k == 0) {
			struct rte_mbuf *s = rte_pktmbuf_alloc(mp);

			if (unlikely(s == NULL))
				return -1;
			s->data_off = 0;
			t->next = s;
			head->nb_segs++;
			*tail = t = s;
			k = rte_pktmbuf_tailroom(t);
		}
		k = RTE_MIN(k, len);
		memcpy(rte_pktmbuf_mtod_offset(t, uint8_t *, t->data_len), src,
			k);
		t->data_len = (uint16_t)(t->data_len + k);
		head->pkt_len += k;
		src += k;
		len -= k;
	}
	return 0;
}

/* Appends bytes [off, off + len) of m (within pkt_len: checked). */
static int
chain_copy(struct rte_mempool *mp, struct rte_mbuf *head,
	struct rte_mbuf **tail, const struct rte_mbuf *m, uint32_t off,
	uint32_t len)
{
	const struct rte_mbuf *s = m;

	while (s != NULL && off >= s->data_len) {
		off -= s->data_len;
		s = s->next;
	}
	for (; s != NULL && len != 0; s = s->next, off = 0) {
		uint32_t k = RTE_MIN(len, (uint32_t)s->data_len - off);

		if (chain_put(mp, head, tail,
			    rte_pktmbuf_mtod_offset(s, const uint8_t *, off),
			    k) < 0)
			return -1;
		len -= k;
	}
	return len == 0 ? 0 : -1;
}

/* ~(ones' complement sum) of [off, pkt_len) of m plus sum. Not
 * rte_raw_cksum_mbuf: 22.11 truncates a segment's unfolded sum to 16 bits
 * before byte-swapping it after an odd-length segment (wrong checksums
 * for chains with odd segment lengths). */
static uint16_t
csum_from(const struct rte_mbuf *m, uint32_t off, uint32_t sum)
{
	const struct rte_mbuf *s = m;
	uint32_t done = 0;

	while (s != NULL && off >= s->data_len) {
		off -= s->data_len;
		s = s->next;
	}
	for (; s != NULL; s = s->next, off = 0) {
		uint32_t len = (uint32_t)s->data_len - off;
		uint16_t t = __rte_raw_cksum_reduce(__rte_raw_cksum(
			rte_pktmbuf_mtod_offset(s, const uint8_t *, off), len,
			0));

		sum += (done & 1) ? rte_bswap16(t) : t;
		sum = (sum & 0xffff) + (sum >> 16);
		done += len;
	}
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* Segment number idx of the TCP packet m: fix lengths, ids, sequence,
 * flags, and compute its IP and TCP checksums. */
static void
seg_fix(struct rte_mbuf *s, const struct rte_mbuf *m, uint32_t idx,
	uint32_t payload_off, uint32_t len, bool last)
{
	uint8_t *d = rte_pktmbuf_mtod(s, uint8_t *);
	struct rte_tcp_hdr *th =
		(struct rte_tcp_hdr *)(d + m->l2_len + m->l3_len);
	uint32_t l4 = (uint32_t)m->l2_len + m->l3_len;
	uint32_t phdr;

	th->sent_seq =
		rte_cpu_to_be_32(rte_be_to_cpu_32(th->sent_seq) + payload_off);
	if (!last)
		th->tcp_flags &= (uint8_t) ~(TCP_FIN | TCP_PSH);
	if (idx != 0)
		th->tcp_flags &= (uint8_t)~TCP_CWR;
	th->cksum = 0;
	if (m->ol_flags & RTE_MBUF_F_TX_IPV4) {
		struct rte_ipv4_hdr *ip =
			(struct rte_ipv4_hdr *)(d + m->l2_len);

		ip->total_length = rte_cpu_to_be_16(
			(uint16_t)(m->l3_len + m->l4_len + len));
		ip->packet_id = rte_cpu_to_be_16(
			(uint16_t)(rte_be_to_cpu_16(ip->packet_id) + idx));
		ip->hdr_checksum = 0;
		ip->hdr_checksum = rte_ipv4_cksum(ip);
		phdr = rte_ipv4_phdr_cksum(ip, 0);
	} else {
		struct rte_ipv6_hdr *ip =
			(struct rte_ipv6_hdr *)(d + m->l2_len);

		ip->payload_len = rte_cpu_to_be_16((uint16_t)(m->l4_len + len));
		phdr = rte_ipv6_phdr_cksum(ip, 0);
	}
	th->cksum = csum_from(s, l4, phdr);
}

/* One segment: header + payload [off, off + len); NULL: pool empty. */
static struct rte_mbuf *
seg_build(struct rte_mempool *mp, const struct rte_mbuf *m, const uint8_t *hdr,
	uint32_t hlen, uint32_t off, uint32_t len)
{
	struct rte_mbuf *s = rte_pktmbuf_alloc(mp), *tail = s;

	if (unlikely(s == NULL))
		return NULL;
	if (chain_put(mp, s, &tail, hdr, hlen) < 0 ||
		chain_copy(mp, s, &tail, m, hlen + off, len) < 0) {
		rte_pktmbuf_free(s);
		return NULL;
	}
	return s;
}

/* Metadata a segmenter may rely on: headers inside the packet and at
 * most OL_HDR_MAX, a non-zero MSS, a bounded number of segments. */
static bool
tso_sane(const struct rte_mbuf *m, uint32_t mss)
{
	uint32_t hlen = (uint32_t)m->l2_len + m->l3_len + m->l4_len;

	return mss != 0 && m->l4_len >= sizeof(struct rte_tcp_hdr) &&
	       hlen <= OL_HDR_MAX && hlen <= m->pkt_len &&
	       (m->pkt_len - hlen) / mss < 2 * VSW_SWITCH_BURST * 8;
}

int
offload_segment(struct rte_mempool *mp, const struct rte_mbuf *m, uint32_t mss,
	offload_emit_fn emit, void *arg, unsigned *made)
{
	uint32_t hlen = (uint32_t)m->l2_len + m->l3_len + m->l4_len;
	uint32_t total, off, idx = 0;
	uint8_t buf[OL_HDR_MAX];
	const uint8_t *hdr;

	*made = 0;
	if (mss == 0)
		mss = m->tso_segsz;
	if (unlikely(mp == NULL || !tso_sane(m, mss)))
		return -EINVAL;
	hdr = rte_pktmbuf_read(m, 0, hlen, buf); /* may span segments */
	total = m->pkt_len - hlen;
	for (off = 0; off < total || idx == 0; off += mss, idx++) {
		uint32_t len = RTE_MIN(mss, total - off);
		struct rte_mbuf *s = seg_build(mp, m, hdr, hlen, off, len);

		if (unlikely(s == NULL)) {
			*made = idx;
			return -ENOMEM;
		}
		seg_fix(s, m, idx, off, len, off + len >= total);
		emit(arg, s);
	}
	*made = idx;
	return 0;
}

/* Sends what has collected in out[] once it is a burst (or at the end). */
struct ol_out {
	struct rte_mbuf *pkts[VSW_SWITCH_BURST];
	uint16_t n;
};

static inline void
ol_push(struct vsw_pmd *pmd, const struct vsw_port *p, struct vsw_out_batch *b,
	struct ol_out *o, struct rte_mbuf *m)
{
	o->pkts[o->n++] = m;
	if (o->n == VSW_SWITCH_BURST) {
		out_tx(pmd, p, b, o->pkts, o->n);
		o->n = 0;
	}
}

struct ol_emit {
	struct vsw_pmd *pmd;
	const struct vsw_port *p;
	struct vsw_out_batch *b;
	struct ol_out *o;
};

static void
ol_emit(void *arg, struct rte_mbuf *s)
{
	struct ol_emit *e = arg;

	ol_push(e->pmd, e->p, e->b, e->o, s);
}

/* Segments m into o (m is freed); the number of segments, 0 on failure. */
static unsigned
ol_segment(struct vsw_pmd *pmd, const struct vsw_port *p,
	struct vsw_out_batch *b, struct ol_out *o, struct rte_mbuf *m)
{
	struct ol_emit e = {.pmd = pmd, .p = p, .b = b, .o = o};
	unsigned made;
	int rc = offload_segment(
		pmd->sw->cfg.seg_pool, m, 0, ol_emit, &e, &made);

	rte_pktmbuf_free(m);
	if (unlikely(rc < 0)) {
		/* the segments made stand (extra), the packet counts as
		 * dropped: in + extra = out + drops */
		ctr_add(&pmd->ctr[VSW_PMD_GSO_EXTRA], made);
		ctr_add(&pmd->port_ctr[b->port].sw_gso_segs, made);
		return 0;
	}
	return made;
}

/* Stores v (as laid out in memory) at byte off < pkt_len - 1 of m. */
static void
put16(struct rte_mbuf *m, uint32_t off, uint16_t v)
{
	const uint8_t *b = (const uint8_t *)&v;
	struct rte_mbuf *s = m;
	unsigned i;

	for (i = 0; i < 2; i++, off++) {
		while (off >= s->data_len) {
			off -= s->data_len;
			s = s->next;
		}
		*rte_pktmbuf_mtod_offset(s, uint8_t *, off) = b[i];
	}
}

struct rte_mbuf *
offload_csum(struct vsw_pmd *pmd, struct rte_mbuf *m)
{
	uint64_t l4 = m->ol_flags & RTE_MBUF_F_TX_L4_MASK;
	uint32_t start = (uint32_t)m->l2_len + m->l3_len;
	uint32_t at = start + (l4 == RTE_MBUF_F_TX_TCP_CKSUM ? 16 : 6);
	uint16_t ck;

	if (unlikely((l4 != RTE_MBUF_F_TX_TCP_CKSUM &&
			     l4 != RTE_MBUF_F_TX_UDP_CKSUM) ||
		     at + 2 > m->pkt_len))
		goto drop;
	if (shared(m)) {
		struct rte_mbuf *c =
			pmd->sw->cfg.seg_pool == NULL
				? NULL
				: rte_pktmbuf_copy(m, pmd->sw->cfg.seg_pool, 0,
					  UINT32_MAX);

		if (unlikely(c == NULL))
			goto drop;
		rte_pktmbuf_free(m);
		m = c;
	}
	/* the field holds the pseudo-header sum (virtio and DPDK alike) */
	ck = csum_from(m, start, 0);
	if (l4 == RTE_MBUF_F_TX_UDP_CKSUM && ck == 0)
		ck = 0xffff; /* 0 means "no checksum" in UDP */
	put16(m, at, ck);
	m->ol_flags &= ~RTE_MBUF_F_TX_L4_MASK;
	return m;
drop:
	rte_pktmbuf_free(m);
	return NULL;
}

void
offload_send(struct vsw_pmd *pmd, const struct vsw_port *p,
	struct vsw_out_batch *b, uint32_t capa)
{
	struct vsw_port_ctr *pc = &pmd->port_ctr[b->port];
	struct ol_out o;
	uint64_t dropped = 0, gso = 0, csum = 0, extra = 0;
	uint16_t i;

	o.n = 0;
	for (i = 0; i < b->n; i++) {
		struct rte_mbuf *m = b->pkts[i];
		uint32_t need = ol_needed(m->ol_flags) & ~capa;

		if (likely(need == 0)) {
			ol_push(pmd, p, b, &o, m);
		} else if (need & (VSW_PORT_OL_TSO4 | VSW_PORT_OL_TSO6) ||
			   (m->ol_flags & RTE_MBUF_F_TX_TCP_SEG)) {
			unsigned k = ol_segment(pmd, p, b, &o, m);

			gso += k != 0;
			extra += k != 0 ? k - 1 : 0;
			dropped += k == 0;
		} else {
			m = offload_csum(pmd, m);
			if (m != NULL) {
				csum++;
				ol_push(pmd, p, b, &o, m);
			} else {
				dropped++;
			}
		}
	}
	if (o.n != 0)
		out_tx(pmd, p, b, o.pkts, o.n);
	ctr_add(&pmd->ctr[VSW_PMD_SW_GSO], gso);
	ctr_add(&pmd->ctr[VSW_PMD_SW_CSUM], csum);
	ctr_add(&pmd->ctr[VSW_PMD_GSO_EXTRA], extra);
	ctr_add(&pmd->ctr[VSW_PMD_DROP_OFFLOAD], dropped);
	ctr_add(&pc->sw_gso, gso);
	ctr_add(&pc->sw_gso_segs, gso + extra);
	ctr_add(&pc->sw_csum, csum);
	ctr_add(&pc->sw_ol_drops, dropped);
	b->n = 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The overlay on the PMD: frames of a domain's local ports are switched in
 * their domain (learn the source; a local destination, a remote one behind
 * a VTEP, or flood to the other local ports plus one encapsulated copy per
 * VTEP); from the underlay, VXLAN for the local VTEP is checked,
 * decapsulated and switched in its domain to local ports only (split
 * horizon: never back into the overlay), ARP for the local IP is answered
 * or consumed, and the rest goes back to the rule table.
 *
 * One published table per burst (RCU), no locks, no allocation but the
 * copies head-end replication needs (each VTEP's copy gets its own outer
 * header; local ports share one mbuf by reference) and the segments of a
 * guest TSO frame (offload.c's segmenter, from the segment pool). Room: a
 * local port gets at most one append per input packet (out_ensure_room
 * covers it); the underlay may get several (one per VTEP or segment), so
 * its appends check. Accounting: a replica is a clone, a segment beyond
 * the first is a gso extra; every packet not sent is freed and counted in
 * drop_overlay and by reason.
 * Learning: local source MACs only. Decapsulated frames teach nothing
 * but the outer source MAC of their VTEP: remote MACs come from the
 * control plane (mac-add), as EVPN does it.
 */
#include <errno.h>

#include <rte_mbuf.h>

#include "l2domain_priv.h"

#define ETH_LEN 14
#define ARP_FRAME 42
#define OL_NEEDS_HELP                                    \
	(RTE_MBUF_F_TX_TCP_SEG | RTE_MBUF_F_TX_UDP_SEG | \
		RTE_MBUF_F_TX_L4_MASK | RTE_MBUF_F_TX_IP_CKSUM)

struct ov_burst {
	struct vsw_pmd *pmd;
	const struct ov_table *t;
	struct vsw_overlay *ov;
	struct ov_pmd_ctr *c;
	bool underlay_up;
};

static inline bool
writable(const struct rte_mbuf *m)
{
	return rte_mbuf_refcnt_read(m) == 1 && !RTE_MBUF_CLONED(m) &&
	       (!RTE_MBUF_HAS_EXTBUF(m) ||
		       rte_mbuf_ext_refcnt_read(m->shinfo) == 1);
}

static inline uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

/* Count a drop of a packet already freed (or never made). */
static void
count_drop(struct ov_burst *b, enum vsw_overlay_counter why,
	const struct ov_dom *d)
{
	ctr_add(&b->c->c[why], 1);
	ctr_add(&b->pmd->ctr[VSW_PMD_DROP_OVERLAY], 1);
	if (d != NULL)
		ctr_add(&b->c->dom[d->id][DC_DROPS], 1);
}

static void
drop(struct ov_burst *b, enum vsw_overlay_counter why, const struct ov_dom *d,
	struct rte_mbuf *m)
{
	rte_pktmbuf_free(m);
	count_drop(b, why, d);
}

static void
underlay_send(struct ov_burst *b, struct rte_mbuf *m)
{
	struct vsw_out_batch *ob;

	if (unlikely(!b->underlay_up)) {
		drop(b, VSW_OVERLAY_NO_OUTPUT, NULL, m);
		return;
	}
	ob = out_batch_get(b->pmd, b->t->cfg.underlay);
	if (unlikely(ob->n == VSW_OUT_BATCH_CAP))
		out_flush_one(b->pmd, ob);
	ob->pkts[ob->n++] = m;
}

/* Drop m, or with copy only count it (m stays the caller's). */
static void
drop_or_count(struct ov_burst *b, enum vsw_overlay_counter why,
	const struct ov_dom *d, struct rte_mbuf *m, bool copy)
{
	if (copy)
		count_drop(b, why, d);
	else
		drop(b, why, d, m);
}

/* m, or a copy of it (with copy, or when m is shared or short of
 * headroom: m is then freed unless copy): exclusively ours with room for
 * the outer headers; NULL when the pool ran dry (counted). */
static struct rte_mbuf *
own(struct ov_burst *b, const struct ov_dom *d, struct rte_mbuf *m, bool copy)
{
	struct rte_mbuf *c = NULL;

	if (likely(!copy && writable(m) &&
		    rte_pktmbuf_headroom(m) >= VSW_VXLAN_OVERHEAD))
		return m;
	if (b->pmd->sw->cfg.seg_pool != NULL)
		c = rte_pktmbuf_copy(
			m, b->pmd->sw->cfg.seg_pool, 0, UINT32_MAX);
	if (!copy)
		rte_pktmbuf_free(m);
	if (unlikely(c == NULL ||
		     rte_pktmbuf_headroom(c) < VSW_VXLAN_OVERHEAD)) {
		rte_pktmbuf_free(c);
		count_drop(b, VSW_OVERLAY_COPY_FAIL, d);
		return NULL;
	}
	return c;
}

/* What encapsulates one complete frame m (ours, room checked) for the
 * VTEP of slot, its MAC known. */
struct encap_to {
	struct ov_burst *b;
	const struct ov_dom *d;
	uint16_t slot;
	uint32_t hash;
	uint64_t mac;
};

static void
encap_out(void *arg, struct rte_mbuf *m)
{
	const struct encap_to *e = arg;
	uint8_t dmac[6];

	if (unlikely(rte_pktmbuf_headroom(m) < VSW_VXLAN_OVERHEAD)) {
		drop(e->b, VSW_OVERLAY_COPY_FAIL, e->d, m); /* a tiny pool */
		return;
	}
	for (unsigned i = 0; i < 6; i++)
		dmac[i] = (uint8_t)(e->mac >> (40 - 8 * i));
	vsw_vxlan_encap(m, &e->b->t->tmpl[e->slot], dmac, e->d->vni,
		vsw_vxlan_src_port(e->hash));
	ctr_add(&e->b->c->c[VSW_OVERLAY_ENCAP], 1);
	ctr_add(&e->b->c->dom[e->d->id][DC_TX_VXLAN], 1);
	underlay_send(e->b, m);
}

/*
 * A TSO frame (m left to the caller with copy, else freed): segmented in
 * software to the MSS that fits the underlay (the guest's gso_size is for
 * its own MTU; the smaller one wins), each segment encapsulated. Counted
 * as offload.c counts a segmentation for the underlay port: sw_gso,
 * sw_gso_segs, the extra segments in gso_extra. Unusable metadata or
 * headers that leave no payload room: vxlan_offload.
 */
static void
encap_tso(struct encap_to *e, struct rte_mbuf *m, bool copy)
{
	struct vsw_pmd *pmd = e->b->pmd;
	struct vsw_port_ctr *pc = &pmd->port_ctr[e->b->t->cfg.underlay];
	uint32_t hlen = (uint32_t)m->l2_len + m->l3_len + m->l4_len;
	uint32_t room = e->b->t->cfg.mtu - VSW_VXLAN_L3_OVERHEAD, mss;
	unsigned made = 0;
	int rc = -EINVAL;

	if (likely(hlen < room && m->tso_segsz != 0)) {
		mss = RTE_MIN((uint32_t)m->tso_segsz, room - hlen);
		rc = offload_segment(
			pmd->sw->cfg.seg_pool, m, mss, encap_out, e, &made);
	}
	if (!copy)
		rte_pktmbuf_free(m);
	if (unlikely(rc < 0)) {
		/* the segments made stand: in + extra = out + drops */
		ctr_add(&pmd->ctr[VSW_PMD_GSO_EXTRA], made);
		ctr_add(&pc->sw_gso_segs, made);
		count_drop(e->b,
			rc == -ENOMEM ? VSW_OVERLAY_COPY_FAIL
				      : VSW_OVERLAY_OFFLOAD,
			e->d);
		return;
	}
	ctr_add(&pmd->ctr[VSW_PMD_GSO_EXTRA], made - 1);
	ctr_add(&pmd->ctr[VSW_PMD_SW_GSO], 1);
	ctr_add(&pc->sw_gso, 1);
	ctr_add(&pc->sw_gso_segs, made);
}

/*
 * Encapsulate m (or, with copy, a copy of it: m stays the caller's) for the
 * VTEP in neighbour slot `slot` and send it to the underlay. A copy counts
 * as a clone whether it is sent or dropped. A frame with offload metadata
 * is completed first (TSO: encap_tso; a partial TCP/UDP checksum: filled
 * in, counted in sw_csum); what cannot be (UDP segmentation, an IP
 * checksum request without TSO, SCTP, insane metadata) is dropped as
 * vxlan_offload.
 */
static void
encap_send(struct ov_burst *b, const struct ov_dom *d, uint16_t slot,
	struct rte_mbuf *m, uint32_t hash, bool copy)
{
	struct encap_to e = {.b = b,
		.d = d,
		.slot = slot,
		.hash = hash,
		.mac = __atomic_load_n(
			&b->ov->neigh[slot].mac, __ATOMIC_RELAXED)};
	uint64_t ol = m->ol_flags & OL_NEEDS_HELP;

	if (copy)
		ctr_add(&b->pmd->ctr[VSW_PMD_CLONES], 1);
	if (unlikely(e.mac == 0)) {
		drop_or_count(b, VSW_OVERLAY_NO_NEIGH, d, m, copy);
		return;
	}
	if (unlikely(ol != 0)) {
		if ((ol & ~(RTE_MBUF_F_TX_IP_CKSUM |
				  RTE_MBUF_F_TX_TCP_CKSUM)) ==
			RTE_MBUF_F_TX_TCP_SEG) {
			encap_tso(&e, m, copy);
			return;
		}
		if (ol != RTE_MBUF_F_TX_TCP_CKSUM &&
			ol != RTE_MBUF_F_TX_UDP_CKSUM) {
			drop_or_count(b, VSW_OVERLAY_OFFLOAD, d, m, copy);
			return;
		}
	}
	if (unlikely(rte_pktmbuf_pkt_len(m) >
		     b->t->cfg.mtu - VSW_VXLAN_L3_OVERHEAD)) {
		drop_or_count(b, VSW_OVERLAY_TOO_BIG, d, m, copy);
		return;
	}
	m = own(b, d, m, copy);
	if (unlikely(m == NULL))
		return;
	if (unlikely(ol != 0)) {
		m = offload_csum(b->pmd, m); /* in place: m is ours */
		if (unlikely(m == NULL)) {
			count_drop(b, VSW_OVERLAY_OFFLOAD, d);
			return;
		}
		ctr_add(&b->pmd->ctr[VSW_PMD_SW_CSUM], 1);
		ctr_add(&b->pmd->port_ctr[b->t->cfg.underlay].sw_csum, 1);
	}
	encap_out(&e, m);
}

static inline uint32_t
flow_hash(const struct rte_mbuf *m)
{
	return vsw_vxlan_flow_hash(
		rte_pktmbuf_mtod(m, const uint8_t *), m->data_len);
}

/* Is port a present local port of d? */
static inline bool
local_ok(const struct ov_burst *b, const struct ov_dom *d, int port)
{
	unsigned di = b->t->port_dom[port];

	return b->pmd->pt->port[port] != NULL && di != 0 &&
	       b->t->dom[di - 1] == d;
}

static inline void
local_send(struct ov_burst *b, const struct ov_dom *d, uint16_t port,
	struct rte_mbuf *m)
{
	struct vsw_out_batch *ob = out_batch_get(b->pmd, port);

	ob->pkts[ob->n++] = m;
	ctr_add(&b->c->dom[d->id][DC_TX_LOCAL], 1);
}

/* d's present local ports except in_port (OV_NO_PORT: none excluded). */
static unsigned
flood_ports(const struct ov_burst *b, const struct ov_dom *d, uint16_t in_port,
	uint16_t *out)
{
	unsigned k = 0;

	for (unsigned i = 0; i < d->n_ports; i++)
		if (d->ports[i] != in_port &&
			b->pmd->pt->port[d->ports[i]] != NULL)
			out[k++] = d->ports[i];
	return k;
}

/* Flood one frame: the other local ports share m; with vteps, each VTEP
 * gets its own encapsulated copy (m itself for the last one when no local
 * port takes it). */
static void
flood(struct ov_burst *b, const struct ov_dom *d, uint16_t in_port,
	struct rte_mbuf *m, bool vteps)
{
	uint16_t out[VSW_SWITCH_DOMAIN_PORTS];
	unsigned k = flood_ports(b, d, in_port, out);
	unsigned v = vteps ? d->n_vteps : 0, i;
	uint32_t hash = v > 0 ? flow_hash(m) : 0;

	if (k + v == 0) {
		drop(b, VSW_OVERLAY_NO_OUTPUT, d, m);
		return;
	}
	ctr_add(&b->c->dom[d->id][DC_FLOOD], 1);
	ctr_add(&b->c->dom[d->id][DC_FLOOD_COPIES], k + v);
	for (i = 0; i < v; i++) /* m is still exclusively ours here */
		encap_send(b, d, d->vteps[i], m, hash, i + 1 < v || k > 0);
	if (k == 0)
		return;
	if (k > 1) {
		rte_pktmbuf_refcnt_update(m, (int16_t)(k - 1));
		ctr_add(&b->pmd->ctr[VSW_PMD_CLONES], k - 1);
	}
	for (i = 0; i < k; i++)
		local_send(b, d, out[i], m);
}

/* A burst from local port in_port of domain d. */
static void
dom_local_burst(struct ov_burst *b, const struct ov_dom *d, uint16_t in_port,
	struct rte_mbuf **pkts, unsigned n)
{
	uint32_t epoch = mac_table_epoch(d->mac);

	ctr_add(&b->c->dom[d->id][DC_RX_LOCAL], n);
	for (unsigned i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		const uint8_t *eth = rte_pktmbuf_mtod(m, const uint8_t *);
		int port, slot;

		if (unlikely(m->data_len < ETH_LEN)) {
			drop(b, VSW_OVERLAY_NO_OUTPUT, d, m);
			continue;
		}
		mac_learn(d->mac, eth + 6, in_port, epoch);
		if (!(eth[0] & 1)) {
			port = mac_find(d->mac, eth);
			if (port == in_port) {
				drop(b, VSW_OVERLAY_NO_OUTPUT, d, m);
				continue;
			}
			if (port >= 0 && local_ok(b, d, port)) {
				local_send(b, d, (uint16_t)port, m);
				continue;
			}
			slot = ov_rmac_find(d, ov_mac_key(eth));
			if (slot >= 0) {
				encap_send(b, d, (uint16_t)slot, m,
					flow_hash(m), false);
				continue;
			}
		}
		flood(b, d, in_port, m, true);
	}
}

/* A decapsulated frame of domain d: to local ports only. */
static void
dom_vxlan_one(struct ov_burst *b, const struct ov_dom *d, struct rte_mbuf *m)
{
	const uint8_t *eth = rte_pktmbuf_mtod(m, const uint8_t *);
	int port;

	ctr_add(&b->c->dom[d->id][DC_RX_VXLAN], 1);
	if (!(eth[0] & 1)) {
		port = mac_find(d->mac, eth);
		if (port >= 0 && local_ok(b, d, port)) {
			local_send(b, d, (uint16_t)port, m);
			return;
		}
		if (ov_rmac_find(d, ov_mac_key(eth)) >= 0) {
			drop(b, VSW_OVERLAY_SPLIT_HORIZON, d, m);
			return;
		}
	}
	flood(b, d, OV_NO_PORT, m, false);
}

/* The outer source MAC (or an ARP sender's) of a known remote VTEP; it
 * is heard (the tick's refresh need not ask). The shared line is written
 * only on a change and once per tick's clear, not per packet. */
static void
neigh_learn(struct ov_burst *b, uint32_t ip, const uint8_t *mac)
{
	int slot = ov_neigh_find(b->t, b->ov, ip);
	uint64_t key = ov_mac_key(mac), old;
	struct ov_neigh *g;

	if (slot < 0 || (mac[0] & 1))
		return;
	g = &b->ov->neigh[slot];
	old = __atomic_load_n(&g->mac, __ATOMIC_RELAXED);
	if (old != key) {
		__atomic_store_n(&g->mac, key, __ATOMIC_RELAXED);
		ctr_add(&b->c->c[VSW_OVERLAY_NEIGH_LEARNED], 1);
		if (old != 0)
			ctr_add(&b->c->c[VSW_OVERLAY_NEIGH_CHANGED], 1);
	}
	if (!__atomic_load_n(&g->heard, __ATOMIC_RELAXED))
		__atomic_store_n(&g->heard, 1, __ATOMIC_RELAXED);
}

/* ARP on the underlay: true when it was for the local VTEP (answered,
 * consumed or dropped), false for the rule table. */
static bool
arp_in(struct ov_burst *b, struct rte_mbuf *m)
{
	static const uint8_t eth_ip4[6] = {0, 1, 8, 0, 6, 4};
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	const struct vsw_overlay_config *c = &b->t->cfg;

	if (m->data_len < ARP_FRAME || memcmp(p + 14, eth_ip4, 6) != 0 ||
		get32(p + 38) != c->local_ip)
		return false;
	neigh_learn(b, get32(p + 28), p + 22);
	if (p[20] == 0 && p[21] == 2) {
		drop(b, VSW_OVERLAY_ARP_CONSUMED, NULL, m);
		return true;
	}
	if (p[20] != 0 || p[21] != 1 || !writable(m)) {
		drop(b, VSW_OVERLAY_ARP_BAD, NULL, m);
		return true;
	}
	/* The request becomes its reply, in place. */
	memcpy(p, p + 22, 6);
	memcpy(p + 6, c->local_mac, 6);
	p[21] = 2;
	memcpy(p + 32, p + 22, 10); /* target = the asker (MAC, IP) */
	memcpy(p + 22, c->local_mac, 6);
	p[28] = (uint8_t)(c->local_ip >> 24);
	p[29] = (uint8_t)(c->local_ip >> 16);
	p[30] = (uint8_t)(c->local_ip >> 8);
	p[31] = (uint8_t)c->local_ip;
	ctr_add(&b->c->c[VSW_OVERLAY_ARP_REPLIED], 1);
	underlay_send(b, m);
	return true;
}

static const enum vsw_overlay_counter verdict_ctr[VSW_VXLAN_N_VERDICTS] = {
	[VSW_VXLAN_BAD_IP] = VSW_OVERLAY_BAD_IP,
	[VSW_VXLAN_TRUNCATED] = VSW_OVERLAY_TRUNCATED,
	[VSW_VXLAN_BAD_CSUM] = VSW_OVERLAY_BAD_CSUM,
	[VSW_VXLAN_FRAGMENT] = VSW_OVERLAY_FRAGMENT,
	[VSW_VXLAN_TTL] = VSW_OVERLAY_TTL,
	[VSW_VXLAN_BAD_UDP] = VSW_OVERLAY_BAD_UDP,
	[VSW_VXLAN_BAD_FLAGS] = VSW_OVERLAY_BAD_FLAGS,
};

/* One underlay packet: false when it goes to the rule table. */
static bool
underlay_one(struct ov_burst *b, struct rte_mbuf *m)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t pkt_len = rte_pktmbuf_pkt_len(m);
	struct vsw_vxlan_rx rx;
	const struct ov_dom *d;
	enum vsw_vxlan_verdict v;

	if (m->data_len >= ETH_LEN && p[12] == 0x08 && p[13] == 0x06)
		return arp_in(b, m);
	v = vsw_vxlan_parse(p, m->data_len, pkt_len, b->t->cfg.local_ip, &rx);
	if (v == VSW_VXLAN_NOT_OURS)
		return false;
	if (unlikely(v != VSW_VXLAN_OK)) {
		drop(b, verdict_ctr[v], NULL, m);
		return true;
	}
	d = ov_dom_find(b->t, rx.vni);
	if (unlikely(d == NULL)) {
		drop(b, VSW_OVERLAY_UNKNOWN_VNI, NULL, m);
		return true;
	}
	neigh_learn(b, rx.src_ip, p + 6);
	rte_pktmbuf_adj(m, (uint16_t)rx.inner_off);
	if (unlikely(rte_pktmbuf_trim(m, (uint16_t)(pkt_len - rx.inner_off -
						    rx.inner_len)) < 0)) {
		drop(b, VSW_OVERLAY_TRUNCATED, d, m);
		return true;
	}
	m->ol_flags = 0; /* the underlay's rx flags describe the outer packet */
	m->packet_type = 0;
	ctr_add(&b->c->c[VSW_OVERLAY_DECAP], 1);
	dom_vxlan_one(b, d, m);
	return true;
}

static inline void
burst_init(struct ov_burst *b, struct vsw_pmd *pmd, const struct ov_table *t)
{
	b->pmd = pmd;
	b->t = t;
	b->ov = pmd->sw->ov;
	b->c = &b->ov->pmd[pmd->idx];
	b->underlay_up = t->on && pmd->pt->port[t->cfg.underlay] != NULL;
}

unsigned
overlay_ingress(struct vsw_pmd *pmd, const struct ov_table *t, uint16_t in_port,
	struct rte_mbuf **pkts, unsigned n)
{
	unsigned di = t->port_dom[in_port], i, j = 0;
	struct ov_burst b;

	if (likely(di == 0 && !(t->on && in_port == t->cfg.underlay)))
		return n;
	burst_init(&b, pmd, t);
	if (di != 0) {
		dom_local_burst(&b, t->dom[di - 1], in_port, pkts, n);
		return 0;
	}
	for (i = 0; i < n; i++)
		if (!underlay_one(&b, pkts[i]))
			pkts[j++] = pkts[i];
	return j;
}

void
overlay_inject(struct vsw_pmd *pmd, const struct ov_table *t)
{
	struct vsw_overlay *ov = pmd->sw->ov;
	uint32_t tail = ov->ring_tail;
	uint32_t head = __atomic_load_n(&ov->ring_head, __ATOMIC_ACQUIRE);
	struct ov_burst b;

	if (likely(head == tail))
		return;
	burst_init(&b, pmd, t);
	pmd->in_queue = 0;
	for (; tail != head; tail++) {
		ctr_add(&pmd->ctr[VSW_PMD_INJECTED], 1);
		underlay_send(&b, ov->ring[tail % OV_INJECT_RING]);
	}
	__atomic_store_n(&ov->ring_tail, tail, __ATOMIC_RELEASE);
}

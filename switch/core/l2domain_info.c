/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The overlay seen from the control thread: domains, their MACs and
 * counters, the neighbour table, and the once-a-second tick that ages the
 * domains' learned MACs, queues ARP requests for unresolved VTEPs and
 * re-asks known ones not heard from for a while (so a VTEP whose MAC
 * changed is followed, and a dead one forgotten).
 *
 * Control thread only. Counters are read with relaxed loads (one writer
 * each, the PMD). The ARP requests are built here, from the switch's
 * seg_pool, and handed to PMD 0 through a single-producer single-consumer
 * ring (l2domain_priv.h): the PMD only appends them to the underlay's
 * output batch.
 */
#include <errno.h>
#include <string.h>

#include <rte_mbuf.h>

#include "l2domain_priv.h"

#define ARP_FRAME 42
#define ARP_RETRY_SEC 1

static const char *const counter_names[] = {
#define VSW_OVERLAY_COUNTER_NAME(e, s) s,
	VSW_OVERLAY_COUNTERS(VSW_OVERLAY_COUNTER_NAME)
#undef VSW_OVERLAY_COUNTER_NAME
};
_Static_assert(sizeof(counter_names) / sizeof(counter_names[0]) ==
		       VSW_OVERLAY_N_COUNTERS,
	"a name per overlay counter");

const char *
vsw_overlay_counter_name(enum vsw_overlay_counter c)
{
	return (unsigned)c < VSW_OVERLAY_N_COUNTERS ? counter_names[c] : NULL;
}

void
vsw_switch_overlay_stats(
	const struct vsw_switch *sw, uint64_t out[VSW_OVERLAY_N_COUNTERS])
{
	const struct vsw_overlay *ov = sw->ov;

	for (unsigned k = 0; k < VSW_OVERLAY_N_COUNTERS; k++) {
		out[k] = ov->ctl_ctr[k];
		for (unsigned p = 0; p < sw->cfg.n_pmds; p++)
			out[k] += ctr_read(&ov->pmd[p].c[k]);
	}
}

unsigned
vsw_switch_domains(const struct vsw_switch *sw, uint32_t *vnis, unsigned max)
{
	const struct ov_table *t = sw->ov->table;

	if (t == NULL)
		return 0;
	for (unsigned i = 0; i < t->n_doms && i < max; i++)
		vnis[i] = t->dom[i]->vni;
	return t->n_doms;
}

static void
dom_stats(const struct vsw_switch *sw, const struct ov_dom *d,
	struct vsw_domain_stats *st)
{
	const struct vsw_overlay *ov = sw->ov;
	uint64_t c[DC_N];

	for (unsigned k = 0; k < DC_N; k++) {
		c[k] = 0;
		for (unsigned p = 0; p < sw->cfg.n_pmds; p++)
			c[k] += ctr_read(&ov->pmd[p].dom[d->id][k]);
		c[k] -= ov->dom_base[d->id][k];
	}
	st->rx_local = c[DC_RX_LOCAL];
	st->rx_vxlan = c[DC_RX_VXLAN];
	st->tx_local = c[DC_TX_LOCAL];
	st->tx_vxlan = c[DC_TX_VXLAN];
	st->flooded = c[DC_FLOOD];
	st->flood_copies = c[DC_FLOOD_COPIES];
	st->drops = c[DC_DROPS];
}

int
vsw_switch_domain_get(
	const struct vsw_switch *sw, uint32_t vni, struct vsw_domain_info *info)
{
	const struct ov_table *t = sw->ov->table;
	const struct ov_dom *d = t != NULL ? ov_dom_find(t, vni) : NULL;

	if (d == NULL)
		return -ENOENT;
	memset(info, 0, sizeof(*info));
	info->vni = vni;
	info->n_ports = d->n_ports;
	memcpy(info->ports, d->ports, d->n_ports * sizeof(d->ports[0]));
	info->n_vteps = d->n_vteps;
	for (unsigned v = 0; v < d->n_vteps; v++)
		info->vteps[v] = sw->ov->neigh[d->vteps[v]].ip;
	info->n_remote_macs = d->n_rmacs;
	info->n_local_macs = mac_table_count(d->mac);
	dom_stats(sw, d, &info->stats);
	return 0;
}

struct walk_ctx {
	vsw_switch_domain_mac_cb cb;
	void *arg;
};

static void
local_mac(const uint8_t mac[6], int port, uint32_t age, void *arg)
{
	struct walk_ctx *w = arg;

	w->cb(mac, false, (uint16_t)port, 0, age, w->arg);
}

int
vsw_switch_domain_macs(const struct vsw_switch *sw, uint32_t vni,
	vsw_switch_domain_mac_cb cb, void *arg)
{
	const struct ov_table *t = sw->ov->table;
	const struct ov_dom *d = t != NULL ? ov_dom_find(t, vni) : NULL;
	struct walk_ctx w = {cb, arg};

	if (d == NULL)
		return -ENOENT;
	mac_table_walk(d->mac, local_mac, &w);
	for (uint32_t i = 0; d->rmac != NULL && i <= d->rmask; i++) {
		uint64_t key = d->rmac[i].key;
		uint8_t mac[6];

		if (key == 0)
			continue;
		for (unsigned b = 0; b < 6; b++)
			mac[b] = (uint8_t)(key >> (40 - 8 * b));
		cb(mac, true, 0, sw->ov->neigh[d->rmac[i].vtep].ip, 0, arg);
	}
	return 0;
}

unsigned
vsw_switch_overlay_neighs(const struct vsw_switch *sw,
	struct vsw_overlay_neigh *out, unsigned max)
{
	unsigned n = 0;

	for (unsigned s = 0; s < VSW_SWITCH_MAX_VTEPS; s++) {
		const struct ov_neigh *g = &sw->ov->neigh[s];
		uint64_t mac = __atomic_load_n(&g->mac, __ATOMIC_RELAXED);

		if (g->ip == 0)
			continue;
		if (n < max) {
			out[n].ip = g->ip;
			out[n].known = mac != 0;
			for (unsigned b = 0; b < 6; b++)
				out[n].mac[b] = (uint8_t)(mac >> (40 - 8 * b));
			out[n].refs = g->refs;
		}
		n++;
	}
	return n;
}

static void
put_ip(uint8_t *p, uint32_t ip)
{
	p[0] = (uint8_t)(ip >> 24);
	p[1] = (uint8_t)(ip >> 16);
	p[2] = (uint8_t)(ip >> 8);
	p[3] = (uint8_t)ip;
}

/* A broadcast ARP request for ip from the local VTEP, or NULL. */
static struct rte_mbuf *
arp_request(
	struct rte_mempool *mp, const struct vsw_overlay_config *c, uint32_t ip)
{
	static const uint8_t head[8] = {0, 1, 8, 0, 6, 4, 0, 1};
	struct rte_mbuf *m = mp != NULL ? rte_pktmbuf_alloc(mp) : NULL;
	uint8_t *p;

	if (m == NULL)
		return NULL;
	p = (uint8_t *)rte_pktmbuf_append(m, ARP_FRAME);
	if (p == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	memset(p, 0xff, 6);
	memcpy(p + 6, c->local_mac, 6);
	p[12] = 0x08;
	p[13] = 0x06;
	memcpy(p + 14, head, sizeof(head));
	memcpy(p + 22, c->local_mac, 6);
	put_ip(p + 28, c->local_ip);
	memset(p + 32, 0, 6);
	put_ip(p + 38, ip);
	return m;
}

/* Queue for PMD 0; false when the ring is full. */
static bool
inject(struct vsw_overlay *ov, struct rte_mbuf *m)
{
	uint32_t head = ov->ring_head;

	if (head - __atomic_load_n(&ov->ring_tail, __ATOMIC_ACQUIRE) ==
		OV_INJECT_RING)
		return false;
	ov->ring[head % OV_INJECT_RING] = m;
	__atomic_store_n(&ov->ring_head, head + 1, __ATOMIC_RELEASE);
	return true;
}

/* Queue an ARP request for g (counted under ok or ARP_REQ_FAIL). */
static void
arp_ask(struct vsw_switch *sw, const struct ov_table *t, struct ov_neigh *g,
	uint64_t now, enum vsw_overlay_counter ok)
{
	struct vsw_overlay *ov = sw->ov;
	struct rte_mbuf *m = arp_request(sw->cfg.seg_pool, &t->cfg, g->ip);

	g->last_req = now;
	if (m != NULL && inject(ov, m)) {
		ov->ctl_ctr[ok]++;
		return;
	}
	rte_pktmbuf_free(m);
	ov->ctl_ctr[VSW_OVERLAY_ARP_REQ_FAIL]++;
}

/* A known VTEP: heard since the last tick, due for a refresh request, or
 * forgotten after the last one went unanswered. */
static void
neigh_refresh(struct vsw_switch *sw, const struct ov_table *t,
	struct ov_neigh *g, uint64_t now)
{
	if (__atomic_load_n(&g->heard, __ATOMIC_RELAXED)) {
		__atomic_store_n(&g->heard, 0, __ATOMIC_RELAXED);
		g->last_ok = now;
		g->probes = 0;
	}
	if (g->last_ok == 0)
		g->last_ok = now;
	if (now - g->last_ok < VSW_OVERLAY_REFRESH_SEC ||
		(g->probes != 0 && now - g->last_req < ARP_RETRY_SEC))
		return;
	if (g->probes == VSW_OVERLAY_REFRESH_PROBES) {
		__atomic_store_n(&g->mac, 0, __ATOMIC_RELAXED);
		sw->ov->ctl_ctr[VSW_OVERLAY_NEIGH_EXPIRED]++;
		g->probes = 0;
		g->last_ok = 0;
		arp_ask(sw, t, g, now, VSW_OVERLAY_ARP_REQUESTS);
		return;
	}
	g->probes++;
	arp_ask(sw, t, g, now, VSW_OVERLAY_ARP_REFRESH);
}

void
vsw_switch_overlay_tick(struct vsw_switch *sw, uint64_t now)
{
	struct vsw_overlay *ov = sw->ov;
	const struct ov_table *t = ov->table;

	if (t == NULL)
		return;
	for (unsigned i = 0; i < t->n_doms; i++)
		mac_table_age(t->dom[i]->mac, now);
	if (!t->on)
		return;
	for (unsigned s = 0; s < VSW_SWITCH_MAX_VTEPS; s++) {
		struct ov_neigh *g = &ov->neigh[s];

		if (g->ip == 0)
			continue;
		if (__atomic_load_n(&g->mac, __ATOMIC_RELAXED) != 0) {
			neigh_refresh(sw, t, g, now);
			continue;
		}
		if (g->last_req != 0 && now - g->last_req < ARP_RETRY_SEC)
			continue;
		arp_ask(sw, t, g, now, VSW_OVERLAY_ARP_REQUESTS);
	}
}

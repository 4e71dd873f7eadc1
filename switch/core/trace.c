/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Trace (vsw/trace.h): a packet through the datapath's own functions on
 * the control thread, which publishes the tables and so may read them
 * without a read-side section; and the packet builder that turns a match
 * into the bytes the trace extracts from.
 */
#include <errno.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_mbuf.h>
#include <urcu-qsbr.h>

#include <vsw/trace.h>

#include "switch_priv.h"

#define ETH_HLEN 14
#define VLAN_HLEN 4
#define MIN_FRAME 60

int
vsw_trace_packet(struct vsw_switch *sw, struct rte_mbuf *m, uint16_t in_port,
	struct vsw_trace *t)
{
	uint64_t hits[VSW_PMD_RANKED_SUBTABLES] = {0};
	struct vsw_dpcls_lookup_stats st = {
		.subtable_hits = hits,
		.n_subtable_hits = VSW_PMD_RANKED_SUBTABLES,
	};
	const struct vsw_rule_table *rt = rcu_dereference(sw->rules);
	const struct vsw_port_table *pt = rcu_dereference(sw->ports);
	const struct vsw_sw_rule *r;
	void *res[1] = {NULL};

	if (in_port >= VSW_SWITCH_MAX_PORTS)
		return -EINVAL;
	memset(t, 0, sizeof(*t));
	t->normal_learned = -1;
	t->subtable = UINT32_MAX;
	vsw_flow_extract_burst(&m, 1, in_port, &t->key);
	t->n_subtables = vsw_dpcls_n_subtables(rt->cls);
	t->matched = vsw_dpcls_lookup(rt->cls, &t->key, 1, res, &st) != 0;
	t->subtables_visited = st.subtable_lookups;
	if (!t->matched) {
		t->verdict = VSW_TRACE_DROP_NO_RULE;
		return 0;
	}
	for (uint32_t i = 0; i < VSW_PMD_RANKED_SUBTABLES; i++)
		if (hits[i] != 0)
			t->subtable = i;
	r = res[0];
	t->rule_id = r->id;
	t->rule = r->rule;
	t->port_pair = rt->pair[in_port] == r;
	actions_trace(pt, sw->mac, r, in_port, &t->key, t);
	return 0;
}

static uint8_t *
put16(uint8_t *p, uint16_t host)
{
	uint16_t be = rte_cpu_to_be_16(host);

	memcpy(p, &be, 2);
	return p + 2;
}

/* The L4 header for proto at p; its length. */
static unsigned
build_l4(const struct vsw_flow_key *k, uint8_t *p)
{
	switch (k->nw_proto) {
	case 6: /* TCP: ports, data offset 5 words */
		memcpy(p, &k->tp_src, 2);
		memcpy(p + 2, &k->tp_dst, 2);
		p[12] = 5 << 4;
		return 20;
	case 17: /* UDP */
		memcpy(p, &k->tp_src, 2);
		memcpy(p + 2, &k->tp_dst, 2);
		put16(p + 4, 8);
		return 8;
	case 132: /* SCTP */
		memcpy(p, &k->tp_src, 2);
		memcpy(p + 2, &k->tp_dst, 2);
		return 12;
	case 1:
	case 58: /* ICMP, ICMPv6: type and code */
		p[0] = (uint8_t)rte_be_to_cpu_16(k->tp_src);
		p[1] = (uint8_t)rte_be_to_cpu_16(k->tp_dst);
		return 4;
	default:
		return 0;
	}
}

static unsigned
build_l3(const struct vsw_flow_key *k, uint8_t *p)
{
	uint16_t type = rte_be_to_cpu_16(k->dl_type);
	unsigned l4;

	if (type == 0x0800) {
		l4 = build_l4(k, p + 20);
		p[0] = 0x45;
		p[1] = k->nw_tos;
		put16(p + 2, (uint16_t)(20 + l4));
		p[8] = 64;
		p[9] = k->nw_proto;
		memcpy(p + 12, k->nw_src, 4);
		memcpy(p + 16, k->nw_dst, 4);
		return 20 + l4;
	}
	if (type == 0x86dd) {
		l4 = build_l4(k, p + 40);
		p[0] = (uint8_t)(0x60 | k->nw_tos >> 4);
		p[1] = (uint8_t)(k->nw_tos << 4);
		put16(p + 4, (uint16_t)l4);
		p[6] = k->nw_proto;
		p[7] = 64;
		memcpy(p + 8, k->nw_src, 16);
		memcpy(p + 24, k->nw_dst, 16);
		return 40 + l4;
	}
	if (type == 0x0806) { /* Ethernet/IPv4 ARP, opcode = nw_proto */
		put16(p, 1);
		put16(p + 2, 0x0800);
		p[4] = 6;
		p[5] = 4;
		put16(p + 6, k->nw_proto);
		memcpy(p + 8, k->dl_src, 6);
		memcpy(p + 14, k->nw_src, 4);
		memcpy(p + 24, k->nw_dst, 4);
		return 28;
	}
	return 0;
}

int
vsw_trace_build(const struct vsw_rule *match, struct rte_mbuf *m)
{
	const struct vsw_flow_key *k = &match->key;
	uint8_t pkt[ETH_HLEN + VLAN_HLEN + 40 + 20] = {0};
	uint16_t tci = rte_be_to_cpu_16(k->vlan_tci);
	unsigned len = 12;
	char *dst;

	memcpy(pkt, k->dl_dst, 6);
	memcpy(pkt + 6, k->dl_src, 6);
	if (tci & VSW_VLAN_PRESENT) {
		put16(pkt + len, 0x8100);
		put16(pkt + len + 2, tci & (uint16_t)~VSW_VLAN_PRESENT);
		len += VLAN_HLEN;
	}
	memcpy(pkt + len, &k->dl_type, 2);
	len += 2;
	len += build_l3(k, pkt + len);
	if (len < MIN_FRAME)
		len = MIN_FRAME;
	dst = rte_pktmbuf_append(m, (uint16_t)len);
	if (dst == NULL)
		return -ENOSPC;
	memcpy(dst, pkt, len);
	return 0;
}

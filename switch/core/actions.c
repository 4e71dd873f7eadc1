/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Rule actions on the datapath: VLAN push/strip, output to ports, drop,
 * flood and normal (L2 learning).
 *
 * Runs on a PMD, on a run of packets that matched the same rule (so each
 * rule's plan is decided once per run, not per packet). Room in every output
 * batch was made before the burst, and the parser guarantees at most one
 * append per port per packet, so appends are unchecked stores. A packet going
 * to k ports gets k - 1 extra references (every segment), never a copy; VLAN
 * edits happen before any output, while the packet is still exclusive.
 * Trusts: the compiled rule, the PMD's port table snapshot, the keys.
 */
#include <errno.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_mbuf.h>

#include <vsw/trace.h>

#include "switch_priv.h"

#define ETH_ADDRS 12
#define VLAN_HDR 4

/* May the first segment's data be changed in place? Not if anyone else
 * holds this mbuf, or the buffer it points into. */
static inline bool
writable(const struct rte_mbuf *m)
{
	return rte_mbuf_refcnt_read(m) == 1 && !RTE_MBUF_CLONED(m) &&
	       (!RTE_MBUF_HAS_EXTBUF(m) ||
		       rte_mbuf_ext_refcnt_read(m->shinfo) == 1);
}

static int
vlan_push(struct rte_mbuf *m, uint16_t vid)
{
	uint8_t *d;
	uint16_t tag[2];

	if (unlikely(!writable(m) || m->data_len < ETH_ADDRS))
		return -1;
	d = (uint8_t *)rte_pktmbuf_prepend(m, VLAN_HDR);
	if (unlikely(d == NULL))
		return -1;
	memmove(d, d + VLAN_HDR, ETH_ADDRS);
	tag[0] = rte_cpu_to_be_16(0x8100);
	tag[1] = rte_cpu_to_be_16(vid & 0x0fff);
	memcpy(d + ETH_ADDRS, tag, sizeof(tag));
	m->l2_len += VLAN_HDR; /* offload metadata follows the headers */
	return 0;
}

static int
vlan_strip(struct rte_mbuf *m)
{
	uint8_t *d = rte_pktmbuf_mtod(m, uint8_t *);
	uint16_t type;

	if (m->data_len < ETH_ADDRS + VLAN_HDR + 2)
		return 0; /* too short to carry a tag: nothing to strip */
	memcpy(&type, d + ETH_ADDRS, sizeof(type));
	if (type != rte_cpu_to_be_16(0x8100) &&
		type != rte_cpu_to_be_16(0x88a8))
		return 0;
	if (unlikely(!writable(m)))
		return -1;
	memmove(d + VLAN_HDR, d, ETH_ADDRS);
	rte_pktmbuf_adj(m, VLAN_HDR);
	if (m->l2_len >= VLAN_HDR) /* 0: no offload metadata */
		m->l2_len -= VLAN_HDR;
	return 0;
}

/* Apply the edits; drops packets that cannot be edited. Returns new n. */
static unsigned
run_edits(struct vsw_pmd *pmd, const struct vsw_sw_rule *r,
	struct rte_mbuf **pkts, const struct vsw_flow_key **keys, unsigned n)
{
	unsigned i, e, j = 0;

	for (i = 0; i < n; i++) {
		int rc = 0;

		for (e = 0; e < r->n_edits && rc == 0; e++)
			rc = r->edits[e].type == VSW_ACTION_PUSH_VLAN
				     ? vlan_push(pkts[i], r->edits[e].arg)
				     : vlan_strip(pkts[i]);
		if (unlikely(rc < 0)) {
			rte_pktmbuf_free(pkts[i]);
			ctr_add(&pmd->ctr[VSW_PMD_DROP_VLAN], 1);
			continue;
		}
		keys[j] = keys[i];
		pkts[j++] = pkts[i];
	}
	return j;
}

/* Send n packets to each of ports[0..k): k - 1 extra references each. */
static void
out_multi(struct vsw_pmd *pmd, const uint16_t *ports, unsigned k,
	struct rte_mbuf **pkts, unsigned n)
{
	unsigned i, p;

	if (k > 1) {
		for (i = 0; i < n; i++)
			rte_pktmbuf_refcnt_update(pkts[i], (int16_t)(k - 1));
		ctr_add(&pmd->ctr[VSW_PMD_CLONES], (uint64_t)n * (k - 1));
	}
	for (p = 0; p < k; p++) {
		struct vsw_out_batch *b = out_batch_get(pmd, ports[p]);
		struct rte_mbuf **dst = &b->pkts[b->n];

		for (i = 0; i < n; i++) /* room ensured: no bound check */
			dst[i] = pkts[i];
		b->n = (uint16_t)(b->n + n);
	}
}

static void
drop(struct vsw_pmd *pmd, enum vsw_pmd_counter why, struct rte_mbuf **pkts,
	unsigned n)
{
	rte_pktmbuf_free_bulk(pkts, n);
	ctr_add(&pmd->ctr[why], n);
}

/* Present ports from list[0..n) except in_port; sets *gone if any absent. */
static unsigned
live_ports(const struct vsw_port_table *pt, const uint16_t *list, unsigned n,
	uint16_t in_port, uint16_t *out, bool *gone)
{
	unsigned i, k = 0;

	for (i = 0; i < n; i++) {
		if (list[i] == in_port)
			continue;
		if (list[i] < VSW_SWITCH_MAX_PORTS && pt->port[list[i]] != NULL)
			out[k++] = list[i];
		else
			*gone = true;
	}
	return k;
}

static void
run_ports(struct vsw_pmd *pmd, const uint16_t *list, unsigned n_list,
	uint16_t in_port, struct rte_mbuf **pkts, unsigned n)
{
	uint16_t ports[VSW_SWITCH_MAX_PORTS];
	bool gone = false;
	unsigned k = live_ports(pmd->pt, list, n_list, in_port, ports, &gone);

	if (k == 0)
		drop(pmd,
			gone ? VSW_PMD_DROP_PORT_GONE : VSW_PMD_DROP_NO_OUTPUT,
			pkts, n);
	else
		out_multi(pmd, ports, k, pkts, n);
}

enum { NORMAL_FLOOD = -1, NORMAL_DROP = -2 };

/* Where normal sends one packet: a present port, NORMAL_FLOOD (unknown,
 * broadcast, multicast, learned on a deleted port) or NORMAL_DROP (learned
 * on in_port: never back where it came from). *learned: the MAC table's
 * answer. Shared by the datapath and the trace. */
static inline int
normal_dest(const struct vsw_mac_table *mac, const struct vsw_port_table *pt,
	uint16_t in_port, const struct vsw_flow_key *key, int *learned)
{
	int port = -1;

	if (!(key->dl_dst[0] & 1))
		port = mac_find(mac, key->dl_dst);
	*learned = port;
	if (port == in_port)
		return NORMAL_DROP;
	if (port >= 0 && pt->port[port] != NULL)
		return port;
	return NORMAL_FLOOD;
}

static void
run_normal(struct vsw_pmd *pmd, uint16_t in_port, struct rte_mbuf **pkts,
	const struct vsw_flow_key *const *keys, unsigned n)
{
	struct vsw_mac_table *mac = pmd->sw->mac;
	const struct vsw_port_table *pt = pmd->pt;
	uint32_t epoch = mac_table_epoch(mac);
	uint16_t flood[VSW_SWITCH_MAX_PORTS];
	bool gone = false;
	unsigned i, k;

	/* The flood set is the same for the whole run. */
	k = live_ports(pt, pt->list, pt->n_ports, in_port, flood, &gone);
	for (i = 0; i < n; i++) {
		const struct vsw_flow_key *key = keys[i];
		int learned, port;

		mac_learn(mac, key->dl_src, in_port, epoch);
		port = normal_dest(mac, pt, in_port, key, &learned);
		if (port >= 0) {
			struct vsw_out_batch *b =
				out_batch_get(pmd, (uint16_t)port);

			b->pkts[b->n++] = pkts[i];
		} else if (port == NORMAL_FLOOD && k > 0) {
			out_multi(pmd, flood, k, &pkts[i], 1);
		} else {
			drop(pmd, VSW_PMD_DROP_NO_OUTPUT, &pkts[i], 1);
		}
	}
}

/* One output port, not the input one, present: the common case. */
static inline bool
single_out(const struct vsw_pmd *pmd, const struct vsw_sw_rule *r,
	uint16_t in_port)
{
	uint16_t p = r->out_ports[0];

	return r->n_out == 1 && p != in_port && p < VSW_SWITCH_MAX_PORTS &&
	       pmd->pt->port[p] != NULL;
}

static inline void
rule_count(struct vsw_pmd *pmd, const struct vsw_sw_rule *r,
	struct rte_mbuf *const *pkts, unsigned n)
{
	struct vsw_rule_ctr *rc = &pmd->rule_ctr[r->id];
	uint64_t bytes = 0;
	unsigned i;

	for (i = 0; i < n; i++)
		bytes += rte_pktmbuf_pkt_len(pkts[i]);
	ctr_add(&rc->packets, n);
	ctr_add(&rc->bytes, bytes);
}

static inline void
run_rule(struct vsw_pmd *pmd, const struct vsw_sw_rule *r, uint16_t in_port,
	struct rte_mbuf **pkts, const struct vsw_flow_key *const *keys,
	unsigned n)
{
	const struct vsw_flow_key *ek[VSW_SWITCH_BURST];

	rule_count(pmd, r, pkts, n);
	if (likely(r->out_kind == VSW_OUT_PORTS && r->n_edits == 0 &&
		    single_out(pmd, r, in_port))) {
		out_multi(pmd, r->out_ports, 1, pkts, n);
		return;
	}
	if (unlikely(r->n_edits > 0)) {
		memcpy(ek, keys, n * sizeof(*keys));
		n = run_edits(pmd, r, pkts, ek, n);
		keys = ek;
	}
	switch (r->out_kind) {
	case VSW_OUT_PORTS:
		run_ports(pmd, r->out_ports, r->n_out, in_port, pkts, n);
		break;
	case VSW_OUT_NORMAL:
		run_normal(pmd, in_port, pkts, keys, n);
		break;
	case VSW_OUT_FLOOD:
		run_ports(
			pmd, pmd->pt->list, pmd->pt->n_ports, in_port, pkts, n);
		break;
	default:
		drop(pmd, VSW_PMD_DROP_ACTION, pkts, n);
		break;
	}
}

void
actions_burst(struct vsw_pmd *pmd, uint16_t in_port, struct rte_mbuf **pkts,
	const struct vsw_flow_key *keys, void *const *res, unsigned n)
{
	const struct vsw_flow_key *kp[VSW_SWITCH_BURST];
	unsigned i, j;

	for (i = 0; i < n; i++)
		kp[i] = &keys[i];
	/* Runs of consecutive packets with the same rule act together. */
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && res[j] == res[i]; j++)
			;
		if (unlikely(res[i] == NULL))
			drop(pmd, VSW_PMD_DROP_NO_RULE, &pkts[i], j - i);
		else
			run_rule(pmd, res[i], in_port, &pkts[i], &kp[i], j - i);
	}
}

void
actions_rule_burst(struct vsw_pmd *pmd, const struct vsw_sw_rule *r,
	uint16_t in_port, struct rte_mbuf **pkts, unsigned n)
{
	/* A port-pair rule has one output port and no edits, so it needs no
	 * flow keys (and run_rule's edit path, which copies them, is not
	 * reachable from here). */
	rule_count(pmd, r, pkts, n);
	if (likely(single_out(pmd, r, in_port)))
		out_multi(pmd, r->out_ports, 1, pkts, n);
	else
		run_ports(pmd, r->out_ports, r->n_out, in_port, pkts, n);
}

/*
 * Dry run of run_rule for one packet (vsw_trace_packet): the same
 * decisions (live_ports, normal_dest, the flood set), recorded in t
 * instead of sent; the MAC table is read, not learned into.
 */
void
actions_trace(const struct vsw_port_table *pt,
	const struct vsw_mac_table *mac, const struct vsw_sw_rule *r,
	uint16_t in_port, const struct vsw_flow_key *key, struct vsw_trace *t)
{
	bool gone = false;
	unsigned k = 0;
	int port;

	switch (r->out_kind) {
	case VSW_OUT_PORTS:
		t->kind = VSW_TRACE_KIND_PORTS;
		k = live_ports(pt, r->out_ports, r->n_out, in_port, t->out,
			&gone);
		break;
	case VSW_OUT_FLOOD:
		t->kind = VSW_TRACE_KIND_FLOOD;
		k = live_ports(pt, pt->list, pt->n_ports, in_port, t->out,
			&gone);
		break;
	case VSW_OUT_NORMAL:
		t->kind = VSW_TRACE_KIND_NORMAL;
		port = normal_dest(mac, pt, in_port, key, &t->normal_learned);
		/* the datapath learns the packet's own source first */
		if (!(key->dl_src[0] & 1) &&
				memcmp(key->dl_src, key->dl_dst, 6) == 0) {
			t->normal_learned = in_port;
			port = NORMAL_DROP;
		}
		if (port >= 0) {
			t->out[k++] = (uint16_t)port;
		} else if (port == NORMAL_FLOOD) {
			t->normal_flood = true;
			k = live_ports(pt, pt->list, pt->n_ports, in_port,
				t->out, &gone);
			gone = false; /* an empty flood set: no output */
		}
		break;
	default:
		t->kind = VSW_TRACE_KIND_DROP;
		t->verdict = VSW_TRACE_DROP_ACTION;
		return;
	}
	t->n_out = (uint16_t)k;
	t->verdict = k > 0 ? VSW_TRACE_OUTPUT : gone ?
		VSW_TRACE_DROP_PORT_GONE : VSW_TRACE_DROP_NO_OUTPUT;
}

/* What the parser guarantees, checked again for rules built in code: the
 * unchecked appends rely on at most one append per port per packet. */
static int
check_action(
	const struct vsw_sw_rule *r, const struct vsw_action *a, unsigned seen)
{
	const unsigned outs = 1u << VSW_ACTION_OUTPUT |
			      1u << VSW_ACTION_NORMAL | 1u << VSW_ACTION_FLOOD;
	unsigned i;

	if (a->type > VSW_ACTION_STRIP_VLAN || (seen & 1u << VSW_ACTION_DROP))
		return -EINVAL;
	if (a->type == VSW_ACTION_DROP && seen != 0)
		return -EINVAL;
	if ((a->type == VSW_ACTION_PUSH_VLAN ||
		    a->type == VSW_ACTION_STRIP_VLAN) &&
		(seen & outs))
		return -EINVAL;
	if (a->type == VSW_ACTION_PUSH_VLAN && a->arg > 4095)
		return -EINVAL;
	if ((a->type == VSW_ACTION_NORMAL || a->type == VSW_ACTION_FLOOD) &&
		(seen & outs))
		return -EINVAL;
	if (a->type == VSW_ACTION_OUTPUT) {
		if (seen & (1u << VSW_ACTION_NORMAL | 1u << VSW_ACTION_FLOOD))
			return -EINVAL;
		for (i = 0; i < r->n_out; i++)
			if (r->out_ports[i] == a->arg)
				return -EINVAL;
	}
	return 0;
}

int
actions_compile(struct vsw_sw_rule *r)
{
	unsigned seen = 0;
	uint32_t i;

	r->out_kind = VSW_OUT_DROP;
	r->n_out = 0;
	r->n_edits = 0;
	if (r->rule.n_actions > VSW_RULE_MAX_ACTIONS)
		return -EINVAL;
	for (i = 0; i < r->rule.n_actions; i++) {
		const struct vsw_action *a = &r->rule.actions[i];

		if (check_action(r, a, seen) < 0)
			return -EINVAL;
		seen |= 1u << a->type;
		switch (a->type) {
		case VSW_ACTION_OUTPUT:
			/* A number past the table stays: it counts as gone. */
			r->out_kind = VSW_OUT_PORTS;
			r->out_ports[r->n_out++] = a->arg;
			break;
		case VSW_ACTION_NORMAL:
			r->out_kind = VSW_OUT_NORMAL;
			break;
		case VSW_ACTION_FLOOD:
			r->out_kind = VSW_OUT_FLOOD;
			break;
		case VSW_ACTION_PUSH_VLAN:
		case VSW_ACTION_STRIP_VLAN:
			r->edits[r->n_edits++] = *a;
			break;
		default: /* drop */
			break;
		}
	}
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vsw trace: where would this packet go (OVS's ofproto/trace), answered by
 * the datapath's own code, not a model of it: the packet's key comes from
 * vsw_flow_extract_burst(), the rule from vsw_dpcls_lookup() on the
 * published classifier, the outputs from the actions' own decisions
 * (actions.c: live ports, normal's MAC table answer, the flood set) run
 * in a dry-run mode that records instead of sending, and learns nothing.
 *
 * The EMC is not consulted: each PMD owns its EMC and no other thread may
 * read it. Nothing is lost by that: an EMC entry caches a classifier
 * answer and every PMD flushes its EMC when the rules change, so a hit
 * there gives the rule reported here. Likewise the port-pair fast path
 * (port_pair is set): it is taken only for the rule this lookup returns
 * for every packet from in_port.
 *
 * Control thread only (the one that publishes the tables, so they cannot
 * be freed under it); PMD-private state (EMC, batches, counters) is never
 * touched.
 */
#ifndef VSW_TRACE_H
#define VSW_TRACE_H

#include <stdbool.h>
#include <stdint.h>

#include <vsw/flow.h>
#include <vsw/rule.h>
#include <vsw/switch.h>

struct rte_mbuf;

enum vsw_trace_verdict {
	VSW_TRACE_OUTPUT,         /* to out[0 .. n_out) */
	VSW_TRACE_DROP_NO_RULE,   /* pmd counter drop_no_rule */
	VSW_TRACE_DROP_ACTION,    /* drop_action: drop or no output action */
	VSW_TRACE_DROP_NO_OUTPUT, /* drop_no_output: only the input port */
	VSW_TRACE_DROP_PORT_GONE, /* drop_port_gone: output ports deleted */
};

enum vsw_trace_kind {
	VSW_TRACE_KIND_DROP,
	VSW_TRACE_KIND_PORTS,
	VSW_TRACE_KIND_NORMAL,
	VSW_TRACE_KIND_FLOOD,
};

struct vsw_trace {
	struct vsw_flow_key key;     /* what flow extract made of it */
	uint32_t n_subtables;        /* in the published classifier */
	uint64_t subtables_visited;  /* by this lookup */
	bool matched;
	uint32_t subtable;           /* lookup position that matched, or
	                              * UINT32_MAX (past the counted 64) */
	uint32_t rule_id;
	struct vsw_rule rule;        /* the matched rule */
	bool port_pair;              /* PMDs reach it by the port-pair fast
	                              * path: no extract, EMC, classifier */
	enum vsw_trace_kind kind;    /* its output plan */
	int normal_learned;          /* normal: dl_dst's port, -1 unknown or
	                              * multicast */
	bool normal_flood;           /* normal: flooded */
	enum vsw_trace_verdict verdict;
	uint16_t n_out;
	uint16_t out[VSW_SWITCH_MAX_PORTS];
};

/* Trace packet m arriving on in_port (m is only read). 0, or -EINVAL. */
int vsw_trace_packet(struct vsw_switch *sw, struct rte_mbuf *m,
	uint16_t in_port, struct vsw_trace *t);

/*
 * Write into m (empty) a packet with the fields of match's (masked) key:
 * Ethernet, an 802.1Q tag when the match names a VLAN, then by dl_type
 * IPv4 / IPv6 (+ TCP, UDP, SCTP, ICMP by nw_proto) or ARP, padded to 60
 * bytes. 0, or -ENOSPC when m has no room.
 */
int vsw_trace_build(const struct vsw_rule *match, struct rte_mbuf *m);

#endif /* VSW_TRACE_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * trace FLOW: where a packet with these fields would go, as OVS's
 * ofproto/trace answers. FLOW is rule match syntax (vsw_rule_parse, the
 * switch's only parser) and must name in_port; fields it leaves out are
 * zero. The packet is built from the fields (vsw_trace_build), then the
 * datapath's own code decides (vsw_trace_packet, vsw/trace.h). Control
 * thread.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <arpa/inet.h>
#include <rte_mbuf.h>

#include <vsw/rule.h>
#include <vsw/switch.h>
#include <vsw/trace.h>

#include "vswd_priv.h"

static const char *const verdicts[] = {
	[VSW_TRACE_OUTPUT] = "output",
	[VSW_TRACE_DROP_NO_RULE] = "drop_no_rule",
	[VSW_TRACE_DROP_ACTION] = "drop_action",
	[VSW_TRACE_DROP_NO_OUTPUT] = "drop_no_output",
	[VSW_TRACE_DROP_PORT_GONE] = "drop_port_gone",
};

/* The extracted key as match text: every field the packet has, exact. */
static void
key_text(struct vswd *d, const struct vsw_flow_key *k, char *buf, size_t len)
{
	struct vsw_rule r;
	uint16_t type = ntohs(k->dl_type);
	const char *comma;
	char text[VSW_RULE_TEXT_MAX * 2];

	memset(&r, 0, sizeof(r));
	r.key = *k;
	memset(&r.mask, 0xff, sizeof(r.mask));
	r.fields = VSW_RULE_F_IN_PORT | VSW_RULE_F_DL_SRC | VSW_RULE_F_DL_DST |
		   VSW_RULE_F_DL_TYPE;
	if (ntohs(k->vlan_tci) & VSW_VLAN_PRESENT) {
		r.fields |= VSW_RULE_F_DL_VLAN;
		r.mask.m.vlan_tci = htons(VSW_VLAN_PRESENT | 0x0fff);
	}
	if (type == 0x0800 || type == 0x86dd || type == 0x0806)
		r.fields |= VSW_RULE_F_NW_SRC | VSW_RULE_F_NW_DST |
			    VSW_RULE_F_NW_PROTO;
	if (type == 0x0800 || type == 0x86dd) {
		r.fields |= VSW_RULE_F_NW_TOS;
		if (k->nw_proto == 6 || k->nw_proto == 17 ||
				k->nw_proto == 132 || k->nw_proto == 1 ||
				k->nw_proto == 58)
			r.fields |= VSW_RULE_F_TP_SRC | VSW_RULE_F_TP_DST;
	}
	vsw_rule_format(&r, 1, vsw_switch_port_name, d->sw, text, sizeof(text));
	comma = strchr(text, ','); /* past "priority=0" */
	snprintf(buf, len, "%s", comma != NULL ? comma + 1 : text);
}

static void
ports_text(struct vswd *d, const uint16_t *p, unsigned n, char *buf,
	size_t len, bool json)
{
	size_t off = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < n && off < len; i++) {
		const char *name = vsw_switch_port_name(p[i], d->sw);
		char num[8];

		snprintf(num, sizeof(num), "%u", p[i]);
		off += (size_t)snprintf(buf + off, len - off,
			json ? "%s\"%s\"" : "%soutput:%s", i ? "," : "",
			name ? name : num);
	}
}

static void
reply_text(struct vswd *d, const struct vsw_trace *t, const char *flow,
	const char *rule, const char *outs, struct vsw_ctl_reply *r)
{
	vsw_ctl_reply_printf(r, "Flow: %s\nCache: EMC per PMD, not read "
		"(a hit there returns the rule below: EMCs are flushed at "
		"every rule change)\nClassifier: %u subtable(s), %lu visited",
		flow, t->n_subtables, (unsigned long)t->subtables_visited);
	if (!t->matched) {
		vsw_ctl_reply_printf(r, ", no match\nRule: none\n"
			"Datapath actions: drop (no rule)\n");
		return;
	}
	if (t->subtable != UINT32_MAX)
		vsw_ctl_reply_printf(r, ", matched in subtable %u", t->subtable);
	vsw_ctl_reply_printf(r, "\nRule: id %u, %s\n", t->rule_id, rule);
	if (t->port_pair)
		vsw_ctl_reply_printf(r, "Port pair: PMDs send this in_port's "
			"packets by the fast path (no extract, EMC, classifier)\n");
	if (t->kind == VSW_TRACE_KIND_NORMAL) {
		const char *lp = t->normal_learned >= 0 ? vsw_switch_port_name(
			(uint16_t)t->normal_learned, d->sw) : NULL;

		vsw_ctl_reply_printf(r, "Normal: dl_dst %s%s%s\n",
			t->normal_learned >= 0 ? "learned on " :
			"unknown or multicast",
			t->normal_learned >= 0 ? (lp ? lp : "a deleted port") :
			"", t->normal_flood ? ", flood" : "");
	}
	if (t->verdict == VSW_TRACE_OUTPUT)
		vsw_ctl_reply_printf(r, "Datapath actions: %s\n", outs);
	else
		vsw_ctl_reply_printf(r, "Datapath actions: drop (%s)\n",
			verdicts[t->verdict] + 5);
}

static void
reply_json(struct vswd *d, const struct vsw_trace *t, const char *flow, const char *rule,
	const char *outs, struct vsw_ctl_reply *r)
{
	vsw_ctl_reply_printf(r, "{\"flow\": ");
	vsw_ctl_reply_json_str(r, flow);
	vsw_ctl_reply_printf(r, ", \"emc\": \"not read (per PMD)\", "
		"\"subtables\": %u, \"subtables_visited\": %lu, \"rule\": ",
		t->n_subtables, (unsigned long)t->subtables_visited);
	if (t->matched) {
		vsw_ctl_reply_printf(r, "{\"id\": %u, \"priority\": %d, "
			"\"text\": ", t->rule_id, t->rule.priority);
		vsw_ctl_reply_json_str(r, rule);
		if (t->subtable != UINT32_MAX)
			vsw_ctl_reply_printf(r, ", \"subtable\": %u}",
				t->subtable);
		else
			vsw_ctl_reply_printf(r, ", \"subtable\": null}");
	} else {
		vsw_ctl_reply_printf(r, "null");
	}
	if (t->matched && t->kind == VSW_TRACE_KIND_NORMAL) {
		const char *lp = t->normal_learned >= 0 ? vsw_switch_port_name(
			(uint16_t)t->normal_learned, d->sw) : NULL;

		vsw_ctl_reply_printf(r, ", \"normal\": {\"learned_port\": ");
		if (lp != NULL)
			vsw_ctl_reply_json_str(r, lp);
		else
			vsw_ctl_reply_printf(r, "null");
		vsw_ctl_reply_printf(r, ", \"flood\": %s}",
			t->normal_flood ? "true" : "false");
	}
	vsw_ctl_reply_printf(r, ", \"port_pair\": %s",
		t->matched && t->port_pair ? "true" : "false");
	vsw_ctl_reply_printf(r, ", \"verdict\": \"%s\", \"outputs\": [%s]}\n",
		verdicts[t->verdict], outs);
}

void
vswd_cmd_trace(void *ctx, int argc, char **argv, struct vsw_ctl_reply *r)
{
	struct vswd *d = ctx;
	struct vsw_rule match;
	struct vsw_trace t;
	struct rte_mbuf *m;
	char err[256], flow[VSW_RULE_TEXT_MAX * 2], rule[VSW_RULE_TEXT_MAX * 2];
	char outs[VSW_SWITCH_MAX_PORTS * 40], text[VSW_CTL_LINE_MAX];

	if (!rule_join_args(argc, argv, text, sizeof(text))) {
		vsw_ctl_reply_error(r, "flow too long");
		return;
	}
	if (vsw_rule_parse(text, VSW_RULE_PARSE_MATCH_ONLY,
			vsw_switch_port_lookup, d->sw, &match, err,
			sizeof(err)) < 0) {
		vsw_ctl_reply_error(r, "%s", err);
		return;
	}
	if (!(match.fields & VSW_RULE_F_IN_PORT)) {
		vsw_ctl_reply_error(r, "trace needs in_port=PORT");
		return;
	}
	m = rte_pktmbuf_alloc(d->pool);
	if (m == NULL || vsw_trace_build(&match, m) < 0 ||
			vsw_trace_packet(d->sw, m, match.key.in_port, &t) < 0) {
		rte_pktmbuf_free(m);
		vsw_ctl_reply_error(r, "trace: no mbuf or bad in_port");
		return;
	}
	rte_pktmbuf_free(m);
	key_text(d, &t.key, flow, sizeof(flow));
	vsw_rule_format(&t.rule, 0, vsw_switch_port_name, d->sw, rule,
		sizeof(rule));
	ports_text(d, t.out, t.n_out, outs, sizeof(outs), r->json);
	if (r->json)
		reply_json(d, &t, flow, rule, outs, r);
	else
		reply_text(d, &t, flow, rule, outs, r);
}

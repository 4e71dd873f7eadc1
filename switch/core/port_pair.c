/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The port-pair fast path (OVS's "simple match"), decided on the control
 * side when a rule table is published, never per packet.
 *
 * An in_port X gets a pair rule when the highest-priority rule that can
 * match a packet from X is "in_port=X, actions=output:Y" (no other match
 * field, one output port Y != X, no VLAN edit) and every other rule that
 * can match X has a strictly lower priority: then that rule is what the
 * classifier returns for every packet from X, whatever its bytes, so the
 * PMD skips flow extract, EMC and classifier for X's bursts (pmd.c). A
 * tie at the top priority gets no pair: the classifier decides it.
 *
 * Control thread only, O(rules + ports) per publication. A rule whose
 * in_port mask is partial or empty is taken to match every port.
 */
#include <string.h>

#include "switch_priv.h"

/* Per in_port: the best exact-in_port rule and the runner-up priority. */
struct pair_top {
	const struct vsw_sw_rule *best;
	int32_t second;
};

/* Does r match every packet from its in_port, and nothing else? */
static bool
in_port_only(const struct vsw_sw_rule *r)
{
	static const struct vsw_flow_key zero;
	struct vsw_flow_key m = r->rule.mask.m;

	if (m.in_port != UINT16_MAX)
		return false;
	m.in_port = 0; /* memcmp: the key words would alias this store */
	return memcmp(&m, &zero, sizeof(m)) == 0;
}

static bool
plain_output(const struct vsw_sw_rule *r)
{
	return r->out_kind == VSW_OUT_PORTS && r->n_out == 1 &&
	       r->n_edits == 0 && r->out_ports[0] != r->rule.key.in_port;
}

static void
top_add(struct pair_top *t, const struct vsw_sw_rule *r)
{
	int32_t prio = r->rule.priority;

	if (t->best == NULL || prio > t->best->rule.priority) {
		if (t->best != NULL)
			t->second = t->best->rule.priority;
		t->best = r;
	} else if (prio > t->second) {
		t->second = prio;
	}
}

void
port_pair_build(const struct vsw_switch *sw, struct vsw_rule_table *t)
{
	struct pair_top top[VSW_SWITCH_MAX_PORTS];
	int32_t any = -1; /* best priority of a rule matching every port */
	uint32_t id;
	unsigned x;

	memset(t->pair, 0, sizeof(t->pair));
	if (sw->cfg.no_port_pair || sw->n_rules == 0)
		return;
	for (x = 0; x < VSW_SWITCH_MAX_PORTS; x++)
		top[x] = (struct pair_top){NULL, -1};
	for (id = 0; id < sw->cfg.max_rules; id++) {
		const struct vsw_sw_rule *r = sw->by_id[id];

		if (r == NULL || r->dying)
			continue;
		if (r->rule.mask.m.in_port != UINT16_MAX) {
			if (r->rule.priority > any)
				any = r->rule.priority;
		} else if (r->rule.key.in_port < VSW_SWITCH_MAX_PORTS) {
			top_add(&top[r->rule.key.in_port], r);
		} /* else: a port number no packet can come from */
	}
	for (x = 0; x < VSW_SWITCH_MAX_PORTS; x++) {
		const struct vsw_sw_rule *r = top[x].best;

		if (r != NULL && r->rule.priority > top[x].second &&
			r->rule.priority > any && in_port_only(r) &&
			plain_output(r))
			t->pair[x] = r;
	}
}

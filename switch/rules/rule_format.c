/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Rule formatter: a parsed rule back to the text vsw_rule_parse() accepts
 * (for flow dumps). Runs on the control thread; trusts the rule to be one
 * vsw_rule_parse() produced. Canonical order: priority, protocol, in_port,
 * Ethernet, VLAN, network, transport, actions.
 */
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <vsw/rule.h>

#include "rule_priv.h"

struct out {
	char *buf;
	size_t len;
	size_t used; /* what would have been written */
	vsw_rule_port_name_fn name;
	void *name_arg;
};

static void __attribute__((format(printf, 2, 3)))
put(struct out *o, const char *fmt, ...)
{
	size_t room = o->used < o->len ? o->len - o->used : 0;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(room > 0 ? o->buf + o->used : NULL, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->used += (size_t)n;
}

static void
put_port(struct out *o, uint16_t port)
{
	const char *n = o->name != NULL ? o->name(port, o->name_arg) : NULL;

	if (n != NULL)
		put(o, "%s", n);
	else
		put(o, "%u", port);
}

static void
put_mac(struct out *o, const uint8_t *a)
{
	put(o, "%02x:%02x:%02x:%02x:%02x:%02x", a[0], a[1], a[2], a[3], a[4],
		a[5]);
}

static bool
all_ones(const uint8_t *m, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (m[i] != 0xff)
			return false;
	return true;
}

/* Prefix length of a contiguous mask, or -1. */
static int
prefix_len(const uint8_t *m, unsigned n)
{
	unsigned i, plen = 0;
	bool ended = false;

	for (i = 0; i < n * 8; i++) {
		bool bit = (m[i / 8] >> (7 - i % 8)) & 1;

		if (bit && ended)
			return -1;
		if (!bit)
			ended = true;
		else
			plen++;
	}
	return (int)plen;
}

static void
put_dl(struct out *o, const char *name, const uint8_t *k, const uint8_t *m)
{
	put(o, ",%s=", name);
	put_mac(o, k);
	if (!all_ones(m, 6)) {
		put(o, "/");
		put_mac(o, m);
	}
}

static void
put_nw(struct out *o, const char *name, bool v6, const uint8_t *k,
	const uint8_t *m)
{
	unsigned n = v6 ? 16 : 4;
	char a[INET6_ADDRSTRLEN];
	int plen = prefix_len(m, n);

	inet_ntop(v6 ? AF_INET6 : AF_INET, k, a, sizeof(a));
	put(o, ",%s=%s", name, a);
	if (plen == (int)n * 8)
		return;
	if (plen >= 0) {
		put(o, "/%d", plen);
	} else {
		inet_ntop(v6 ? AF_INET6 : AF_INET, m, a, sizeof(a));
		put(o, "/%s", a);
	}
}

static void
put_be16(struct out *o, const char *name, uint16_t k, uint16_t m)
{
	put(o, ",%s=%u", name, ntohs(k));
	if (m != 0xffff)
		put(o, "/0x%04x", ntohs(m));
}

/* The protocol part; returns true if it covered nw_proto too. */
static bool
put_protocol(struct out *o, const struct vsw_rule *r)
{
	bool has_proto = r->fields & VSW_RULE_F_NW_PROTO;
	uint16_t t = ntohs(r->key.dl_type);
	const struct vsw_rule_shorthand *sh;
	unsigned i, n;

	sh = rule_shorthands(&n);
	for (i = 0; i < n; i++) {
		if (sh[i].dl_type != t || sh[i].has_proto != has_proto ||
			(has_proto && sh[i].nw_proto != r->key.nw_proto))
			continue;
		put(o, ",%s", sh[i].name);
		return has_proto;
	}
	/* No shorthand with this protocol: dl_type alone (arp, nw_proto=1). */
	for (i = 0; i < n; i++) {
		if (sh[i].dl_type == t && !sh[i].has_proto) {
			put(o, ",%s", sh[i].name);
			return false;
		}
	}
	put(o, ",dl_type=0x%04x", t);
	return false;
}

static void
put_match(struct out *o, const struct vsw_rule *r)
{
	const struct vsw_flow_key *k = &r->key, *m = &r->mask.m;
	bool v6 = ntohs(k->dl_type) == 0x86dd;
	bool proto_done = false;

	if (r->fields & VSW_RULE_F_DL_TYPE)
		proto_done = put_protocol(o, r);
	if (r->fields & VSW_RULE_F_IN_PORT) {
		put(o, ",in_port=");
		put_port(o, k->in_port);
	}
	if (r->fields & VSW_RULE_F_DL_SRC)
		put_dl(o, "dl_src", k->dl_src, m->dl_src);
	if (r->fields & VSW_RULE_F_DL_DST)
		put_dl(o, "dl_dst", k->dl_dst, m->dl_dst);
	if (r->fields & VSW_RULE_F_DL_VLAN) {
		if (m->vlan_tci == htons(VSW_VLAN_PRESENT))
			put(o, ",dl_vlan=0x%04x", VSW_RULE_VLAN_NONE);
		else
			put(o, ",dl_vlan=%u", ntohs(k->vlan_tci) & 0x0fff);
	}
	if (r->fields & VSW_RULE_F_NW_SRC)
		put_nw(o, "nw_src", v6, k->nw_src, m->nw_src);
	if (r->fields & VSW_RULE_F_NW_DST)
		put_nw(o, "nw_dst", v6, k->nw_dst, m->nw_dst);
	if ((r->fields & VSW_RULE_F_NW_PROTO) && !proto_done)
		put(o, ",nw_proto=%u", k->nw_proto);
	if (r->fields & VSW_RULE_F_NW_TOS)
		put(o, ",nw_tos=%u", k->nw_tos);
	if (r->fields & VSW_RULE_F_TP_SRC)
		put_be16(o, "tp_src", k->tp_src, m->tp_src);
	if (r->fields & VSW_RULE_F_TP_DST)
		put_be16(o, "tp_dst", k->tp_dst, m->tp_dst);
}

static void
put_actions(struct out *o, const struct vsw_rule *r)
{
	uint32_t i;

	put(o, ",actions=");
	for (i = 0; i < r->n_actions; i++) {
		const struct vsw_action *a = &r->actions[i];

		if (i > 0)
			put(o, ",");
		switch (a->type) {
		case VSW_ACTION_OUTPUT:
			put(o, "output:");
			put_port(o, a->arg);
			break;
		case VSW_ACTION_DROP:
			put(o, "drop");
			break;
		case VSW_ACTION_NORMAL:
			put(o, "normal");
			break;
		case VSW_ACTION_FLOOD:
			put(o, "flood");
			break;
		case VSW_ACTION_PUSH_VLAN:
			put(o, "push_vlan:%u", a->arg);
			break;
		case VSW_ACTION_STRIP_VLAN:
			put(o, "strip_vlan");
			break;
		default:
			put(o, "unknown(%u)", a->type);
			break;
		}
	}
	if (r->n_actions == 0)
		put(o, "drop");
}

int
vsw_rule_format(const struct vsw_rule *rule, int match_only,
	vsw_rule_port_name_fn name, void *name_arg, char *buf, size_t len)
{
	struct out o = {buf, len, 0, name, name_arg};

	if (len > 0)
		buf[0] = '\0';
	put(&o, "priority=%d", rule->priority);
	put_match(&o, rule);
	if (!match_only)
		put_actions(&o, rule);
	return (int)o.used;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vsw switch rules: a match (masked flow key + priority) and an action list,
 * and their text form in the spirit of ovs-ofctl:
 *
 *   priority=100,in_port=vm1,tcp,nw_dst=10.0.0.0/8,tp_dst=80,actions=output:2
 *
 * Match fields: priority= in_port= dl_src= dl_dst= (with /mask) dl_vlan=
 * (0..4095, or 0xffff = untagged) dl_type= or one of the shorthands ip ipv6
 * arp tcp udp icmp tcp6 udp6 icmp6 sctp sctp6, nw_src= nw_dst= (/prefix or
 * /netmask; IPv4, or IPv6 when dl_type is IPv6), nw_proto= nw_tos= (DSCP bits,
 * a multiple of 4), tp_src= tp_dst= (/mask). Actions, in order: push_vlan:VID
 * and strip_vlan (only before any output), then output:PORT (several, each
 * port once) or exactly one of normal, flood; or drop alone. An empty action
 * list drops. Fields are given at most once; a field needing a protocol
 * (nw_src needs ip/ipv6/arp, tp_src needs nw_proto) rejects the rule without.
 *
 * Parsing is the only place where user text enters the switch; it writes the
 * result only on success and names the offending token on failure.
 */
#ifndef VSW_RULE_H
#define VSW_RULE_H

#include <stddef.h>
#include <stdint.h>

#include <vsw/flow.h>

#define VSW_RULE_MAX_ACTIONS 16
#define VSW_RULE_PRIORITY_DEFAULT 32768
#define VSW_RULE_PRIORITY_MAX 65535
/* dl_vlan value meaning "no 802.1Q tag". */
#define VSW_RULE_VLAN_NONE 0xffff
/* Longest text vsw_rule_format() produces with port numbers (names add). */
#define VSW_RULE_TEXT_MAX 1024

enum vsw_action_type {
	VSW_ACTION_OUTPUT,     /* arg: port number */
	VSW_ACTION_DROP,       /* explicit drop (alone) */
	VSW_ACTION_NORMAL,     /* L2 learning switch */
	VSW_ACTION_FLOOD,      /* every port but the input one */
	VSW_ACTION_PUSH_VLAN,  /* arg: VID, pushes an outer 802.1Q tag */
	VSW_ACTION_STRIP_VLAN, /* removes the outer tag, if any */
};

struct vsw_action {
	uint16_t type; /* enum vsw_action_type */
	uint16_t arg;
};

/* Which match fields the text named (for formatting back). */
enum vsw_rule_field {
	VSW_RULE_F_IN_PORT = 1u << 0,
	VSW_RULE_F_DL_SRC = 1u << 1,
	VSW_RULE_F_DL_DST = 1u << 2,
	VSW_RULE_F_DL_VLAN = 1u << 3,
	VSW_RULE_F_DL_TYPE = 1u << 4,
	VSW_RULE_F_NW_SRC = 1u << 5,
	VSW_RULE_F_NW_DST = 1u << 6,
	VSW_RULE_F_NW_PROTO = 1u << 7,
	VSW_RULE_F_NW_TOS = 1u << 8,
	VSW_RULE_F_TP_SRC = 1u << 9,
	VSW_RULE_F_TP_DST = 1u << 10,
};

struct vsw_rule {
	struct vsw_flow_key key;   /* already masked by mask */
	struct vsw_flow_mask mask;
	int32_t priority;          /* 0..65535, higher wins */
	uint32_t fields;           /* enum vsw_rule_field bits */
	uint32_t n_actions;
	struct vsw_action actions[VSW_RULE_MAX_ACTIONS];
};

/*
 * Resolve a port name to its number: >= 0, or a negative errno if unknown.
 * Called for in_port= and output: values that are not plain numbers.
 */
typedef int (*vsw_rule_port_lookup_fn)(const char *name, void *arg);
/* Port number to name for formatting; NULL (or a NULL return) = number. */
typedef const char *(*vsw_rule_port_name_fn)(uint16_t port, void *arg);

/* vsw_rule_parse() flags. */
#define VSW_RULE_PARSE_MATCH_ONLY 0x1 /* no actions= (e.g. for deletion) */

/*
 * Parse text into *rule. lookup may be NULL (then only port numbers are
 * accepted). On error returns -EINVAL (or the lookup's error), leaves *rule
 * unchanged and writes a one-line message naming the offending token into
 * err (errlen bytes, may be 0).
 */
int vsw_rule_parse(const char *text, unsigned flags,
	vsw_rule_port_lookup_fn lookup, void *lookup_arg,
	struct vsw_rule *rule, char *err, size_t errlen);

/*
 * Format a rule back to text that vsw_rule_parse() turns into the same rule
 * (priority first, then the match, then actions=...; the match part only if
 * the rule has no actions and match_only is set). Returns the length it needed
 * (snprintf-like, the output is truncated if len is too small).
 */
int vsw_rule_format(const struct vsw_rule *rule, int match_only,
	vsw_rule_port_name_fn name, void *name_arg, char *buf, size_t len);

/* Compare the match (key, mask, priority) of two rules; 1 if equal. */
int vsw_rule_match_equal(const struct vsw_rule *a, const struct vsw_rule *b);

#endif /* VSW_RULE_H */

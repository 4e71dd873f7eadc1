/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Rule text parser, the action list: "actions=output:vm2,push_vlan:10,..."
 * (vsw/rule.h lists what is accepted). Control thread; trusts nothing in
 * the text: every action is checked for syntax, range and order, and every
 * error names its token.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <vsw/rule.h>

#include "rule_priv.h"

static int
add_action(struct parse_ctx *c, const char *tok, uint16_t type, uint16_t arg)
{
	if (c->r.n_actions >= VSW_RULE_MAX_ACTIONS)
		return rule_parse_fail(c, tok, "too many actions (max %d)",
			VSW_RULE_MAX_ACTIONS);
	c->r.actions[c->r.n_actions].type = type;
	c->r.actions[c->r.n_actions].arg = arg;
	c->r.n_actions++;
	return 0;
}

/* Output-kind actions seen so far in the list (bits of 1 << type). */
static int
check_order(struct parse_ctx *c, const char *tok, uint16_t type, unsigned seen)
{
	const unsigned outs = 1u << VSW_ACTION_OUTPUT |
			      1u << VSW_ACTION_NORMAL | 1u << VSW_ACTION_FLOOD;

	if (seen & (1u << VSW_ACTION_DROP))
		return rule_parse_fail(c, tok, "'drop' must be the only action");
	if (type == VSW_ACTION_DROP && c->r.n_actions > 0)
		return rule_parse_fail(c, tok, "'drop' must be the only action");
	if ((type == VSW_ACTION_PUSH_VLAN || type == VSW_ACTION_STRIP_VLAN) &&
		(seen & outs))
		return rule_parse_fail(c, tok, "VLAN edits must come before any output");
	if ((type == VSW_ACTION_NORMAL || type == VSW_ACTION_FLOOD) &&
		(seen & outs))
		return rule_parse_fail(c, tok,
			"normal/flood cannot be combined with "
			"other outputs");
	if (type == VSW_ACTION_OUTPUT &&
		(seen & (1u << VSW_ACTION_NORMAL | 1u << VSW_ACTION_FLOOD)))
		return rule_parse_fail(c, tok,
			"output cannot be combined with "
			"normal/flood");
	return 0;
}

static int
parse_one_action(struct parse_ctx *c, char *tok, unsigned *seen)
{
	uint16_t type, arg = 0;
	uint32_t v;
	unsigned i;
	int rc;

	if (strncmp(tok, "output:", 7) == 0) {
		type = VSW_ACTION_OUTPUT;
		if ((rc = rule_parse_port(c, tok, tok + 7, &arg)) < 0)
			return rc;
		for (i = 0; i < c->r.n_actions; i++)
			if (c->r.actions[i].type == VSW_ACTION_OUTPUT &&
				c->r.actions[i].arg == arg)
				return rule_parse_fail(c, tok, "port output twice");
	} else if (strncmp(tok, "push_vlan:", 10) == 0) {
		type = VSW_ACTION_PUSH_VLAN;
		if (rule_parse_uint(tok + 10, 4095, &v) < 0)
			return rule_parse_fail(c, tok, "VLAN id must be 0..4095");
		arg = (uint16_t)v;
	} else if (strcmp(tok, "drop") == 0) {
		type = VSW_ACTION_DROP;
	} else if (strcmp(tok, "normal") == 0) {
		type = VSW_ACTION_NORMAL;
	} else if (strcmp(tok, "flood") == 0) {
		type = VSW_ACTION_FLOOD;
	} else if (strcmp(tok, "strip_vlan") == 0) {
		type = VSW_ACTION_STRIP_VLAN;
	} else {
		return rule_parse_fail(c, tok,
			tok[0] == '\0' ? "empty action" : "unknown action");
	}
	if ((rc = check_order(c, tok, type, *seen)) < 0)
		return rc;
	*seen |= 1u << type;
	return add_action(c, tok, type, arg);
}

static char *
trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

int
rule_parse_actions(struct parse_ctx *c, char *list)
{
	unsigned seen = 0;
	char *tok, *next;
	int rc;

	list = trim(list);
	if (*list == '\0') /* "actions=" alone: an explicit drop */
		return add_action(c, "actions=", VSW_ACTION_DROP, 0);
	for (tok = list; tok != NULL; tok = next) {
		next = strchr(tok, ',');
		if (next != NULL)
			*next++ = '\0';
		if ((rc = parse_one_action(c, trim(tok), &seen)) < 0)
			return rc;
	}
	return 0;
}

/* Which pass applies a token: protocol first, then nw_proto (which
 * tp_src/tp_dst need), then the rest. */

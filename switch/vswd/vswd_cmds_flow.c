/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Rule commands: flow-add, flow-del, flow-dump, flow-flush. Control thread.
 * The rule text goes through vsw_rule_parse() (the switch's only parser);
 * several words are joined with ',' so both `flow-add "a,b"` and
 * `flow-add a b` work. A parse error names the token and changes nothing.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <vsw/rule.h>
#include <vsw/switch.h>

#include "vswd_priv.h"

/* Join argv[1..argc) with ','; false when it does not fit. */
static bool
join_args(int argc, char **argv, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 1; i < argc; i++) {
		int n = snprintf(buf + off, len - off, "%s%s", i > 1 ? "," : "",
			argv[i]);

		if (n < 0 || (size_t)n >= len - off)
			return false;
		off += (size_t)n;
	}
	return true;
}

static int
parse_rule(struct vswd *d, int argc, char **argv, unsigned flags,
	struct vsw_rule *rule, struct vsw_ctl_reply *r)
{
	char text[VSW_CTL_LINE_MAX], err[256];

	if (!join_args(argc, argv, text, sizeof(text))) {
		vsw_ctl_reply_error(r, "rule text too long");
		return -1;
	}
	if (vsw_rule_parse(text, flags, vsw_switch_port_lookup, d->sw, rule,
			err, sizeof(err)) < 0) {
		vsw_ctl_reply_error(r, "%s", err);
		return -1;
	}
	return 0;
}

void
vswd_cmd_flow_add(void *ctx, int argc, char **argv, struct vsw_ctl_reply *r)
{
	struct vswd *d = ctx;
	struct vsw_rule rule;
	int rc;

	if (parse_rule(d, argc, argv, 0, &rule, r) < 0)
		return;
	rc = vsw_switch_rules_add(d->sw, &rule, 1);
	if (rc < 0) {
		vsw_ctl_reply_error(r, "cannot add rule: %s", rc == -ENOSPC ?
			"rule table full" : strerror(-rc));
		return;
	}
	if (r->json)
		vsw_ctl_reply_printf(r, "{\"rules\": %u}\n",
			vsw_switch_n_rules(d->sw));
	else
		vsw_ctl_reply_printf(r, "rule added (%u rules)\n",
			vsw_switch_n_rules(d->sw));
}

void
vswd_cmd_flow_del(void *ctx, int argc, char **argv, struct vsw_ctl_reply *r)
{
	struct vswd *d = ctx;
	struct vsw_rule rule;

	if (parse_rule(d, argc, argv, VSW_RULE_PARSE_MATCH_ONLY, &rule, r) < 0)
		return;
	if (vsw_switch_rule_del(d->sw, &rule) < 0) {
		vsw_ctl_reply_error(r, "no rule with exactly this match and "
			"priority");
		return;
	}
	if (r->json)
		vsw_ctl_reply_printf(r, "{\"rules\": %u}\n",
			vsw_switch_n_rules(d->sw));
	else
		vsw_ctl_reply_printf(r, "rule deleted (%u rules)\n",
			vsw_switch_n_rules(d->sw));
}

struct dump_ctx {
	struct vswd *d;
	struct vsw_ctl_reply *r;
	unsigned n;
};

static void
dump_one(const struct vsw_rule *rule, const struct vsw_rule_stats *st,
	void *arg)
{
	struct dump_ctx *c = arg;
	char text[VSW_RULE_TEXT_MAX * 2];

	vsw_rule_format(rule, 0, vsw_switch_port_name, c->d->sw, text,
		sizeof(text));
	if (c->r->json) {
		vsw_ctl_reply_printf(c->r, "%s{\"n_packets\": %" PRIu64
			", \"n_bytes\": %" PRIu64 ", \"rule\": ",
			c->n ? ", " : "", st->packets, st->bytes);
		vsw_ctl_reply_json_str(c->r, text);
		vsw_ctl_reply_printf(c->r, "}");
	} else {
		vsw_ctl_reply_printf(c->r, "n_packets=%" PRIu64 ", n_bytes=%"
			PRIu64 ", %s\n", st->packets, st->bytes, text);
	}
	c->n++;
}

void
vswd_cmd_flow_dump(void *ctx, int argc, char **argv, struct vsw_ctl_reply *r)
{
	struct dump_ctx c = {.d = ctx, .r = r};

	(void)argc;
	(void)argv;
	if (r->json)
		vsw_ctl_reply_printf(r, "{\"rules\": [");
	vsw_switch_rules_dump(c.d->sw, dump_one, &c);
	if (r->json)
		vsw_ctl_reply_printf(r, "]}\n");
}

void
vswd_cmd_flow_flush(void *ctx, int argc, char **argv, struct vsw_ctl_reply *r)
{
	struct vswd *d = ctx;
	int rc;

	(void)argc;
	(void)argv;
	rc = vsw_switch_rules_replace(d->sw, NULL, 0);
	if (rc < 0) {
		vsw_ctl_reply_error(r, "cannot flush rules: %s", strerror(-rc));
		return;
	}
	if (r->json)
		vsw_ctl_reply_printf(r, "{\"rules\": 0}\n");
	else
		vsw_ctl_reply_printf(r, "rules flushed\n");
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Rule commands: flow-add, flow-del, flow-dump, flow-flush. Control thread.
 * The rule text goes through vsw_rule_parse() (the switch's only parser);
 * several words are joined with ',' so both `flow-add "a,b"` and
 * `flow-add a b` work. A parse error names the token and changes nothing.
 *
 * flow-dump prints rules as `ovs-ofctl dump-flows` users read them:
 *   priority=100, n_packets=12, n_bytes=840, duration=3.250s, in_port=vm1 actions=output:vm2
 * duration is the time since the rule (its match and priority) was first
 * installed; replacing its actions keeps it, like its counters. The switch
 * core keeps no clock, so install times live here, keyed by the rule's
 * match text, and a dump drops the ones of rules that are gone.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <vsw/rule.h>
#include <vsw/switch.h>

#include "vswd_priv.h"

/* Join argv[1..argc) with ','; false when it does not fit. */
bool
rule_join_args(int argc, char **argv, char *buf, size_t len)
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

/* ---- install times ---- */

#define TIME_BUCKETS 1024u

struct rule_time {
	struct rule_time *next;
	double installed;  /* CLOCK_MONOTONIC seconds */
	uint32_t seen;     /* dump generation that last saw it */
	char key[];        /* "priority=N,<match>", port numbers */
};

struct vswd_rule_times {
	uint32_t gen;
	struct rule_time *b[TIME_BUCKETS];
};

static double
now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void
rule_key(const struct vsw_rule *rule, char *key, size_t len)
{
	vsw_rule_format(rule, 1, NULL, NULL, key, len);
}

static struct rule_time **
time_slot(struct vswd_rule_times *t, const char *key)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	struct rule_time **pp;

	for (const char *p = key; *p != '\0'; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	pp = &t->b[h % TIME_BUCKETS];
	while (*pp != NULL && strcmp((*pp)->key, key) != 0)
		pp = &(*pp)->next;
	return pp;
}

/* The rule's entry, made now if it has none (NULL: out of memory). */
static struct rule_time *
time_get(struct vswd *d, const struct vsw_rule *rule)
{
	char key[VSW_RULE_TEXT_MAX];
	struct rule_time **pp, *e;
	size_t n;

	if (d->rule_times == NULL)
		d->rule_times = calloc(1, sizeof(*d->rule_times));
	if (d->rule_times == NULL)
		return NULL;
	rule_key(rule, key, sizeof(key));
	pp = time_slot(d->rule_times, key);
	if (*pp != NULL)
		return *pp;
	n = strlen(key) + 1;
	e = malloc(sizeof(*e) + n);
	if (e == NULL)
		return NULL;
	memcpy(e->key, key, n);
	e->installed = now_sec();
	e->seen = d->rule_times->gen;
	e->next = NULL;
	*pp = e;
	return e;
}

static void
time_del(struct vswd *d, const struct vsw_rule *rule)
{
	char key[VSW_RULE_TEXT_MAX];
	struct rule_time **pp, *e;

	if (d->rule_times == NULL)
		return;
	rule_key(rule, key, sizeof(key));
	pp = time_slot(d->rule_times, key);
	e = *pp;
	if (e != NULL) {
		*pp = e->next;
		free(e);
	}
}

/* Drop entries the last dump did not see (all = every entry). */
static void
times_prune(struct vswd *d, bool all)
{
	struct vswd_rule_times *t = d->rule_times;

	for (unsigned i = 0; t != NULL && i < TIME_BUCKETS; i++) {
		struct rule_time **pp = &t->b[i];

		while (*pp != NULL) {
			struct rule_time *e = *pp;

			if (all || e->seen != t->gen) {
				*pp = e->next;
				free(e);
			} else {
				pp = &e->next;
			}
		}
	}
}

void
vswd_rule_times_free(struct vswd *d)
{
	times_prune(d, true);
	free(d->rule_times);
	d->rule_times = NULL;
}

/* ---- commands ---- */

static int
parse_rule(struct vswd *d, int argc, char **argv, unsigned flags,
	struct vsw_rule *rule, struct vsw_ctl_reply *r)
{
	char text[VSW_CTL_LINE_MAX], err[256];

	if (!rule_join_args(argc, argv, text, sizeof(text))) {
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
	time_get(d, &rule); /* a replaced rule keeps its time */
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
	time_del(d, &rule);
	if (r->json)
		vsw_ctl_reply_printf(r, "{\"rules\": %u}\n",
			vsw_switch_n_rules(d->sw));
	else
		vsw_ctl_reply_printf(r, "rule deleted (%u rules)\n",
			vsw_switch_n_rules(d->sw));
}

unsigned
rule_gone_ports(struct vswd *d, const struct vsw_rule *r, uint16_t *out,
	unsigned max)
{
	unsigned n = 0;

	if ((r->fields & VSW_RULE_F_IN_PORT) &&
			vsw_switch_port_name(r->key.in_port, d->sw) == NULL)
		out[n++] = r->key.in_port;
	for (uint32_t a = 0; a < r->n_actions && n < max; a++)
		if (r->actions[a].type == VSW_ACTION_OUTPUT &&
				vsw_switch_port_name(r->actions[a].arg, d->sw) ==
				NULL)
			out[n++] = r->actions[a].arg;
	return n;
}

struct dump_ctx {
	struct vswd *d;
	struct vsw_ctl_reply *r;
	double now;
	unsigned n;
};

/* " [deleted port 0 (was vm1)]" for each port the rule names that is gone;
 * JSON: "deleted_ports": [{"port": 0, "was": "vm1"}]. */
static void
put_gone(struct dump_ctx *c, const struct vsw_rule *rule)
{
	uint16_t gone[VSW_RULE_MAX_ACTIONS + 1];
	unsigned n = rule_gone_ports(c->d, rule, gone, VSW_RULE_MAX_ACTIONS + 1);

	if (c->r->json)
		vsw_ctl_reply_printf(c->r, ", \"deleted_ports\": [");
	for (unsigned i = 0; i < n; i++) {
		const char *was = vsw_switch_port_gone_name(c->d->sw, gone[i]);

		if (c->r->json) {
			vsw_ctl_reply_printf(c->r, "%s{\"port\": %u, \"was\": ",
				i ? ", " : "", gone[i]);
			if (was != NULL)
				vsw_ctl_reply_json_str(c->r, was);
			else
				vsw_ctl_reply_printf(c->r, "null");
			vsw_ctl_reply_printf(c->r, "}");
		} else {
			vsw_ctl_reply_printf(c->r, " [deleted port %u%s%s%s]",
				gone[i], was ? " (was " : "", was ? was : "",
				was ? ")" : "");
		}
	}
	if (c->r->json)
		vsw_ctl_reply_printf(c->r, "]");
}

/*
 * Split vsw_rule_format()'s "priority=N[,MATCH],actions=A" into its match
 * (after the priority, possibly "") and its actions.
 */
static void
split_rule(char *text, const char **match, const char **actions)
{
	char *a = strstr(text, ",actions=");
	char *m = strchr(text, ',');

	*actions = "";
	if (a != NULL) {
		*a = '\0';
		*actions = a + strlen(",actions=");
	}
	*match = m != NULL && m < (a != NULL ? a : m + 1) ? m + 1 : "";
}

static void
dump_json(struct dump_ctx *c, const struct vsw_rule *rule,
	const struct vsw_rule_stats *st, const char *full, const char *match,
	const char *actions, double dur)
{
	struct vsw_ctl_reply *r = c->r;

	vsw_ctl_reply_printf(r, "%s{\"priority\": %d, \"match\": ",
		c->n ? ", " : "", rule->priority);
	vsw_ctl_reply_json_str(r, match);
	vsw_ctl_reply_printf(r, ", \"actions\": ");
	vsw_ctl_reply_json_str(r, actions);
	vsw_ctl_reply_printf(r, ", \"n_packets\": %" PRIu64 ", \"n_bytes\": %"
		PRIu64 ", \"duration\": %.3f, \"rule\": ", st->packets,
		st->bytes, dur);
	vsw_ctl_reply_json_str(r, full);
	put_gone(c, rule);
	vsw_ctl_reply_printf(r, "}");
}

static void
dump_one(const struct vsw_rule *rule, const struct vsw_rule_stats *st,
	void *arg)
{
	struct dump_ctx *c = arg;
	char full[VSW_RULE_TEXT_MAX * 2], text[VSW_RULE_TEXT_MAX * 2];
	const char *match, *actions;
	struct rule_time *t = time_get(c->d, rule);
	double dur = 0;

	if (t != NULL) {
		t->seen = c->d->rule_times->gen;
		dur = c->now > t->installed ? c->now - t->installed : 0;
	}
	vsw_rule_format(rule, 0, vsw_switch_port_name, c->d->sw, full,
		sizeof(full));
	memcpy(text, full, sizeof(text));
	split_rule(text, &match, &actions);
	if (c->r->json)
		dump_json(c, rule, st, full, match, actions, dur);
	else {
		vsw_ctl_reply_printf(c->r, "priority=%d, n_packets=%" PRIu64
			", n_bytes=%" PRIu64 ", duration=%.3fs, %s%sactions=%s",
			rule->priority, st->packets, st->bytes, dur, match,
			*match != '\0' ? " " : "", actions);
		put_gone(c, rule);
		vsw_ctl_reply_printf(c->r, "\n");
	}
	c->n++;
}

void
vswd_cmd_flow_dump(void *ctx, int argc, char **argv, struct vsw_ctl_reply *r)
{
	struct dump_ctx c = {.d = ctx, .r = r, .now = now_sec()};

	(void)argc;
	(void)argv;
	if (c.d->rule_times != NULL)
		c.d->rule_times->gen++;
	if (r->json)
		vsw_ctl_reply_printf(r, "{\"rules\": [");
	vsw_switch_rules_dump(c.d->sw, dump_one, &c);
	if (r->json)
		vsw_ctl_reply_printf(r, "]}\n");
	times_prune(c.d, false);
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
	times_prune(d, true);
	if (r->json)
		vsw_ctl_reply_printf(r, "{\"rules\": 0}\n");
	else
		vsw_ctl_reply_printf(r, "rules flushed\n");
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vsw_trace_packet against the real datapath: for random rule sets and
 * random packets (built by vsw_trace_build from random match text), the
 * trace's answer (rule, verdict, output ports) is compared with where the
 * same packet went through the PMD's burst path on ring ports: which ports
 * received it, which drop counter moved, which rule's hit counter moved.
 * Each packet goes twice (an EMC miss, then an EMC hit). Edge cases: no
 * rule at all, priority ties, normal learned on the input port or on a
 * deleted port, outputs only to the input port or to a deleted port, an
 * empty flood set. And port numbers around rules that name a deleted
 * port (vsw_switch_port_gone_name).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rte_mbuf.h>

#include <vsw/rule.h>
#include <vsw/switch.h>
#include <vsw/trace.h>

#include "switch_harness.h"

#define N_PORTS 4
#define MAX_DUMP 64

static const char *const macs[] = {"52:54:00:00:00:01", "52:54:00:00:00:02",
	"52:54:00:00:00:03", "ff:ff:ff:ff:ff:ff", "01:00:5e:00:00:01"};

struct dump {
	unsigned n;
	struct vsw_rule rule[MAX_DUMP];
	uint64_t packets[MAX_DUMP];
};

static void
dump_cb(const struct vsw_rule *rule, const struct vsw_rule_stats *st,
	void *arg)
{
	struct dump *d = arg;

	assert_true(d->n < MAX_DUMP);
	d->rule[d->n] = *rule;
	d->packets[d->n++] = st->packets;
}

static uint64_t
ctr(struct ctx *c, enum vsw_pmd_counter k)
{
	struct vsw_pmd_stats s;

	pmd_stats(c, 0, &s);
	return s.c[k];
}

static struct rte_mbuf *
build(const char *text, struct vsw_rule *match)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	char err[256];

	assert_non_null(m);
	if (vsw_rule_parse(text, VSW_RULE_PARSE_MATCH_ONLY, NULL, NULL, match,
			err, sizeof(err)) != 0)
		fail_msg("packet '%s': %s", text, err);
	assert_int_equal(vsw_trace_build(match, m), 0);
	return m;
}

static const enum vsw_pmd_counter drop_ctr[] = {
	[VSW_TRACE_DROP_NO_RULE] = VSW_PMD_DROP_NO_RULE,
	[VSW_TRACE_DROP_ACTION] = VSW_PMD_DROP_ACTION,
	[VSW_TRACE_DROP_NO_OUTPUT] = VSW_PMD_DROP_NO_OUTPUT,
	[VSW_TRACE_DROP_PORT_GONE] = VSW_PMD_DROP_PORT_GONE,
};

/* Trace text's packet, then send it through the datapath: they agree.
 * emc: 1 = must be an EMC hit, 0 = a miss, -1 = either. Returns the
 * trace's verdict. */
static enum vsw_trace_verdict
check_one(struct ctx *c, const char *text, int emc)
{
	struct vsw_rule match;
	struct vsw_trace t;
	struct rte_mbuf *m = build(text, &match), *out[8];
	uint64_t before[VSW_PMD_N_COUNTERS];
	struct dump d0 = {0}, d1 = {0};
	unsigned got = 0, want = 0, p, n, hit = MAX_DUMP;
	const uint64_t *kw, *mw, *rw;

	assert_int_equal(vsw_trace_packet(c->sw, m, match.key.in_port, &t), 0);
	/* the packet carries every field the text named */
	kw = vsw_flow_key_words(&t.key);
	mw = vsw_flow_key_words(&match.mask.m);
	rw = vsw_flow_key_words(&match.key);
	for (unsigned w = 0; w < VSW_FLOW_KEY_WORDS; w++)
		if ((kw[w] & mw[w]) != rw[w])
			fail_msg("%s: key word %u differs", text, w);
	for (unsigned k = 0; k < VSW_PMD_N_COUNTERS; k++)
		before[k] = ctr(c, (enum vsw_pmd_counter)k);
	vsw_switch_rules_dump(c->sw, dump_cb, &d0);
	inject(c, match.key.in_port, &m, 1);
	poll_all(c);
	for (p = 0; p < c->n_ports; p++) {
		if (c->rp[p] == NULL)
			continue;
		n = collect(c, p, out, 8);
		if (n > 1)
			fail_msg("%s: %u copies on port %u", text, n, p);
		got |= n << p;
		free_all(out, n);
	}
	for (unsigned i = 0; i < t.n_out; i++)
		want |= 1u << t.out[i];
	if (got != want)
		fail_msg("%s: datapath sent to 0x%x, trace says 0x%x (verdict "
			"%d)", text, got, want, t.verdict);
	for (unsigned v = VSW_TRACE_DROP_NO_RULE; v <= VSW_TRACE_DROP_PORT_GONE;
			v++)
		if (ctr(c, drop_ctr[v]) - before[drop_ctr[v]] !=
				(t.verdict == v))
			fail_msg("%s: drop counter %u moved %lu, trace verdict "
				"%d", text, v, (unsigned long)(ctr(c,
				drop_ctr[v]) - before[drop_ctr[v]]), t.verdict);
	vsw_switch_rules_dump(c->sw, dump_cb, &d1);
	assert_int_equal(d0.n, d1.n);
	for (unsigned i = 0; i < d1.n; i++)
		if (d1.packets[i] != d0.packets[i])
			hit = i;
	assert_int_equal(hit != MAX_DUMP, t.matched);
	if (t.matched)
		assert_true(vsw_rule_match_equal(&d1.rule[hit], &t.rule));
	if (t.matched && emc >= 0)
		assert_int_equal(ctr(c, VSW_PMD_EMC_HIT) -
			before[VSW_PMD_EMC_HIT], emc);
	return t.verdict;
}

static void
rand_rule(char *buf, size_t len, unsigned n_ports)
{
	static const char *const protos[] = {"", ",ip", ",udp", ",tcp", ",arp"};
	unsigned proto = (unsigned)rand() % 5, a = (unsigned)rand() % n_ports;
	int off = snprintf(buf, len, "priority=%d", rand() % 4 * 10);

	if (rand() % 2)
		off += snprintf(buf + off, len - (size_t)off, ",in_port=%d",
			rand() % (int)n_ports);
	if (rand() % 3 == 0)
		off += snprintf(buf + off, len - (size_t)off, ",dl_dst=%s",
			macs[rand() % 5]);
	off += snprintf(buf + off, len - (size_t)off, "%s", protos[proto]);
	if (proto >= 1 && proto <= 3 && rand() % 2)
		off += snprintf(buf + off, len - (size_t)off,
			",nw_dst=10.%d.0.0/16", rand() % 2);
	if ((proto == 2 || proto == 3) && rand() % 2)
		off += snprintf(buf + off, len - (size_t)off, ",tp_dst=%d",
			53 + rand() % 2);
	switch (rand() % 7) {
	case 0:
		snprintf(buf + off, len - (size_t)off, ",actions=output:%u", a);
		break;
	case 1:
		snprintf(buf + off, len - (size_t)off,
			",actions=output:%u,output:%u", a, (a + 1) % n_ports);
		break;
	case 2:
		snprintf(buf + off, len - (size_t)off, ",actions=drop");
		break;
	case 3:
	case 4:
		snprintf(buf + off, len - (size_t)off, ",actions=normal");
		break;
	case 5:
		snprintf(buf + off, len - (size_t)off, ",actions=flood");
		break;
	default:
		snprintf(buf + off, len - (size_t)off,
			",actions=push_vlan:7,output:%u", a);
		break;
	}
}

static void
rand_packet(struct ctx *c, char *buf, size_t len)
{
	static const char *const protos[] = {"dl_type=0x88b5", "ip", "udp",
		"tcp", "arp", "udp6"};
	unsigned proto = (unsigned)rand() % 6, in;
	int off;

	do
		in = (unsigned)rand() % c->n_ports;
	while (c->rp[in] == NULL);
	off = snprintf(buf, len, "in_port=%u,dl_src=%s,dl_dst=%s,%s", in,
		macs[rand() % 4], macs[rand() % 5], protos[proto]);
	if (proto >= 1 && proto <= 3)
		off += snprintf(buf + off, len - (size_t)off,
			",nw_dst=10.%d.%d.1", rand() % 3, rand() % 4);
	if (proto == 2 || proto == 3)
		snprintf(buf + off, len - (size_t)off, ",tp_dst=%d",
			52 + rand() % 3);
}

static void
test_random(void **state)
{
	char text[256];
	unsigned verdicts[5] = {0};

	(void)state;
	srand(18);
	for (unsigned round = 0; round < 60; round++) {
		struct ctx *c = ctx_new(1, N_PORTS, 1);
		unsigned n_rules = (unsigned)rand() % 8;

		for (unsigned i = 0; i < n_rules; i++) {
			rand_rule(text, sizeof(text), N_PORTS);
			add_rule(c, text);
		}
		if (round % 3 == 2) { /* rules that name a deleted port */
			vsw_switch_port_del(c->sw, N_PORTS - 1);
			c->port_sums_off = true;
			vsw_port_ring_destroy(c->rp[N_PORTS - 1]);
			c->rp[N_PORTS - 1] = NULL;
		}
		for (unsigned k = 0; k < 40; k++) {
			enum vsw_trace_verdict v;

			rand_packet(c, text, sizeof(text));
			v = check_one(c, text, -1);
			verdicts[v]++;
			/* the same packet again: now from the EMC (but a
			 * normal rule's answer may have moved with what the
			 * first one taught the MAC table: still compared) */
			if (v != VSW_TRACE_DROP_NO_RULE)
				check_one(c, text, 1);
		}
		check_identity(c);
		ctx_free(c);
	}
	for (unsigned v = 0; v < 5; v++) {
		print_message("# verdict %u: %u packets\n", v, verdicts[v]);
		assert_true(verdicts[v] > 0); /* every outcome was compared */
	}
}

static void
test_edges(void **state)
{
	struct ctx *c = ctx_new(1, 3, 1);
	const char *pkt01 = "in_port=0,dl_src=52:54:00:00:00:01,"
			    "dl_dst=52:54:00:00:00:02,udp,nw_dst=10.0.0.1";
	const char *pkt10 = "in_port=1,dl_src=52:54:00:00:00:02,"
			    "dl_dst=52:54:00:00:00:01,udp,nw_dst=10.0.0.1";

	(void)state;
	/* no rule at all */
	assert_int_equal(check_one(c, pkt01, 0), VSW_TRACE_DROP_NO_RULE);
	/* output only to the input port */
	add_rule(c, "priority=10,in_port=0,actions=output:0");
	assert_int_equal(check_one(c, pkt01, 0),
		VSW_TRACE_DROP_NO_OUTPUT);
	/* a tie: two overlapping rules of one priority, in two subtables */
	add_rule(c, "priority=20,udp,actions=output:1");
	add_rule(c, "priority=20,ip,nw_dst=10.0.0.0/8,actions=output:2");
	assert_int_equal(check_one(c, pkt01, 0), VSW_TRACE_OUTPUT);
	assert_int_equal(check_one(c, pkt01, 1), VSW_TRACE_OUTPUT);
	/* normal: learn .01 on 0 (flood), then .02 -> .01 goes to 0 only */
	add_rule(c, "priority=30,actions=normal");
	assert_int_equal(check_one(c, pkt01, 0), VSW_TRACE_OUTPUT);
	assert_int_equal(check_one(c, pkt10, 0), VSW_TRACE_OUTPUT);
	/* dl_dst learned on the input port: never sent back */
	assert_int_equal(check_one(c, "in_port=0,dl_src=52:54:00:00:00:03,"
		"dl_dst=52:54:00:00:00:01,udp", 0), VSW_TRACE_DROP_NO_OUTPUT);
	/* its own source as destination: learned first, then dropped */
	assert_int_equal(check_one(c, "in_port=2,dl_src=52:54:00:00:00:07,"
		"dl_dst=52:54:00:00:00:07,udp", 0), VSW_TRACE_DROP_NO_OUTPUT);
	/* learned on a port since deleted: flood to what is left */
	vsw_switch_port_del(c->sw, 0);
	vsw_port_ring_destroy(c->rp[0]);
	c->rp[0] = NULL;
	c->port_sums_off = true;
	assert_int_equal(check_one(c, pkt10, -1), VSW_TRACE_OUTPUT);
	/* outputs only to the deleted port */
	add_rule(c, "priority=40,in_port=1,actions=output:0");
	assert_int_equal(check_one(c, pkt10, 0),
		VSW_TRACE_DROP_PORT_GONE);
	check_identity(c);
	ctx_free(c);

	/* one port: an empty flood set */
	c = ctx_new(1, 1, 1);
	add_rule(c, "priority=0,actions=flood");
	assert_int_equal(check_one(c, "in_port=0,udp", 0),
		VSW_TRACE_DROP_NO_OUTPUT);
	ctx_free(c);
}

/* Add a ring port; its number. */
static int
add_port(struct ctx *c, const char *name)
{
	struct vsw_port_ring *rp = vsw_port_ring_create(name, 64);
	int no;

	assert_non_null(rp);
	no = vsw_switch_port_add(c->sw, name, &vsw_port_ring_ops, rp, 1, 1);
	assert_true(no >= 0 && no < MAX_TP);
	c->rp[no] = rp;
	if ((unsigned)no >= c->n_ports)
		c->n_ports = (unsigned)no + 1;
	return no;
}

static void
del_port(struct ctx *c, unsigned no)
{
	assert_int_equal(vsw_switch_port_del(c->sw, (uint16_t)no), 0);
	vsw_port_ring_destroy(c->rp[no]);
	c->rp[no] = NULL;
	c->port_sums_off = true;
}

/* Rules that name a deleted port: kept, never match / drop as port_gone;
 * the same name gets its number (and so its rules) back; a new name does
 * not inherit them. */
static void
test_deleted_port_rules(void **state)
{
	struct ctx *c = ctx_new(1, 3, 1);
	const char *from0 = "in_port=0,dl_dst=52:54:00:00:00:02,udp";
	const char *from1 = "in_port=1,dl_dst=52:54:00:00:00:02,udp";

	(void)state;
	add_rule(c, "priority=10,in_port=0,actions=output:p1");
	add_rule(c, "priority=10,in_port=p1,actions=output:p2");
	assert_int_equal(check_one(c, from0, 0), VSW_TRACE_OUTPUT);
	del_port(c, 1);
	assert_string_equal(vsw_switch_port_gone_name(c->sw, 1), "p1");
	assert_null(vsw_switch_port_gone_name(c->sw, 0));
	assert_null(vsw_switch_port_gone_name(c->sw, 5));
	assert_int_equal(vsw_switch_n_rules(c->sw), 2);
	assert_int_equal(check_one(c, from0, -1), VSW_TRACE_DROP_PORT_GONE);
	/* a new name: not number 1, which the rules name */
	assert_int_equal(add_port(c, "new"), 3);
	/* the old name: number 1 again, and its rules with it */
	assert_int_equal(add_port(c, "p1"), 1);
	assert_null(vsw_switch_port_gone_name(c->sw, 1));
	assert_int_equal(check_one(c, from0, -1), VSW_TRACE_OUTPUT);
	assert_int_equal(check_one(c, from1, -1), VSW_TRACE_OUTPUT);
	/* no rule names 3: the lowest free number is reused by a new name */
	del_port(c, 3);
	assert_int_equal(add_port(c, "other"), 3);
	check_identity(c);
	ctx_free(c);
}

static int
group_setup(void **state)
{
	(void)state;
	return harness_setup("vsw_test_trace");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_edges),
		cmocka_unit_test(test_deleted_port_rules),
		cmocka_unit_test(test_random),
	};

	return cmocka_run_group_tests(tests, group_setup, harness_teardown);
}

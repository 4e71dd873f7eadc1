/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The port-pair fast path (switch/core/port_pair.c) against the normal
 * path: two switches, one built with no_port_pair, get the same random
 * rule changes and the same random bursts; every port must receive the
 * same packets in the same order, every rule and drop counter must agree,
 * and the lookup hits must add up (emc + classifier + pair = emc +
 * classifier). Directed cases pin the decision at its bounds: a tie at the
 * top priority, a wildcard rule one priority below and at the same one,
 * an extra match field, two outputs, an edit, output to in_port, a deleted
 * pair rule, and what the trace reports.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rte_mbuf.h>
#include <urcu-qsbr.h>

#include <vsw/pmd.h>
#include <vsw/switch.h>
#include <vsw/trace.h>

#include "switch_harness.h"

#define N_PORTS 4
#define MAX_DUMP 256

static struct ctx *
ctx_ref(bool reference)
{
	struct ctx *c;

	harness_no_port_pair = reference;
	c = ctx_new(1, N_PORTS, 1);
	harness_no_port_pair = false;
	return c;
}

static void
parse(const char *text, unsigned flags, struct vsw_rule *r)
{
	char err[256];

	if (vsw_rule_parse(text, flags, NULL, NULL, r, err, sizeof(err)) != 0)
		fail_msg("rule '%s': %s", text, err);
}

/* Fast-path hits after sending k packets from port in (the rest freed). */
static uint64_t
pair_hits_of(struct ctx *c, unsigned in, unsigned k)
{
	struct rte_mbuf *pkts[32], *out[64];
	struct vsw_pmd_stats s0, s1;
	uint8_t a[6], b[6];
	unsigned i, p;

	host_mac(in, a);
	host_mac(in + 1, b);
	pmd_stats(c, 0, &s0);
	for (i = 0; i < k; i++)
		pkts[i] = mk_pkt(b, a, -1, 0x0a000001, i, PKT_LEN);
	inject(c, in, pkts, k);
	poll_all(c);
	for (p = 0; p < N_PORTS; p++)
		free_all(out, collect(c, p, out, 64));
	pmd_stats(c, 0, &s1);
	return s1.c[VSW_PMD_PAIR_HIT] - s0.c[VSW_PMD_PAIR_HIT];
}

static bool
traced_pair(struct ctx *c, unsigned in)
{
	struct rte_mbuf *m;
	struct vsw_trace t;
	uint8_t a[6];

	host_mac(in, a);
	m = mk_pkt(bcast, a, -1, 0x0a000001, 0, PKT_LEN);
	assert_int_equal(vsw_trace_packet(c->sw, m, (uint16_t)in, &t), 0);
	rte_pktmbuf_free(m);
	return t.matched && t.port_pair;
}

/* With rules[] alone (replacing all), does port 0 take the fast path? */
static bool
pair_with(const char *const *rules, unsigned n)
{
	struct ctx *c = ctx_ref(false);
	struct vsw_rule r[8];
	bool on, traced;
	unsigned i;

	for (i = 0; i < n; i++)
		parse(rules[i], 0, &r[i]);
	assert_int_equal(vsw_switch_rules_replace(c->sw, r, n), 0);
	on = pair_hits_of(c, 0, 8) == 8;
	traced = traced_pair(c, 0);
	assert_int_equal(on, traced); /* the trace tells the truth */
	check_identity(c);
	ctx_free(c);
	return on;
}

static void
test_pair_decision(void **state)
{
	static const char *const plain[] = {"priority=9,in_port=0,"
					    "actions=output:1"};
	static const char *const below[] = {
		"priority=9,in_port=0,actions=output:1",
		"priority=8,udp,actions=output:2",
		"priority=8,in_port=0,udp,actions=output:3"};
	static const char *const tie_any[] = {
		"priority=9,in_port=0,actions=output:1",
		"priority=9,udp,actions=output:2"};
	static const char *const tie_port[] = {
		"priority=9,in_port=0,actions=output:1",
		"priority=9,in_port=0,udp,actions=output:2"};
	static const char *const above[] = {
		"priority=9,in_port=0,actions=output:1",
		"priority=10,in_port=0,udp,actions=output:2"};
	static const char *const other_port[] = {
		"priority=9,in_port=0,actions=output:1",
		"priority=99,in_port=1,actions=output:2"};
	static const char *const extra_field[] = {
		"priority=9,in_port=0,ip,actions=output:1"};
	static const char *const two_out[] = {
		"priority=9,in_port=0,actions=output:1,output:2"};
	static const char *const edit[] = {
		"priority=9,in_port=0,actions=push_vlan:5,output:1"};
	static const char *const self[] = {
		"priority=9,in_port=0,actions=output:0"};
	static const char *const normal[] = {
		"priority=9,in_port=0,actions=normal"};

	(void)state;
	assert_true(pair_with(plain, 1));
	assert_true(pair_with(below, 3));
	assert_false(pair_with(tie_any, 2));
	assert_false(pair_with(tie_port, 2));
	assert_false(pair_with(above, 2));
	assert_true(pair_with(other_port, 2));
	assert_false(pair_with(extra_field, 1));
	assert_false(pair_with(two_out, 1));
	assert_false(pair_with(edit, 1));
	assert_false(pair_with(self, 1));
	assert_false(pair_with(normal, 1));
}

/* Deleting the pair rule (by match, or by a covering match) or a rule
 * that blocked it republishes the decision. */
static void
test_pair_follows_changes(void **state)
{
	struct ctx *c = ctx_ref(false);
	struct vsw_rule m;

	(void)state;
	add_rule(c, "priority=9,in_port=0,actions=output:1");
	add_rule(c, "priority=9,udp,actions=output:2");
	assert_int_equal(pair_hits_of(c, 0, 4), 0);
	parse("priority=9,udp", VSW_RULE_PARSE_MATCH_ONLY, &m);
	assert_int_equal(vsw_switch_rule_del(c->sw, &m), 0);
	assert_int_equal(pair_hits_of(c, 0, 4), 4);
	parse("priority=9,in_port=0", VSW_RULE_PARSE_MATCH_ONLY, &m);
	assert_int_equal(vsw_switch_rule_del(c->sw, &m), 0);
	assert_int_equal(pair_hits_of(c, 0, 4), 0); /* no rule: dropped */
	add_rule(c, "priority=5,in_port=0,actions=output:2");
	add_rule(c, "priority=7,in_port=1,udp,actions=output:2");
	assert_int_equal(pair_hits_of(c, 0, 4), 4);
	parse("in_port=0", VSW_RULE_PARSE_MATCH_ONLY, &m);
	assert_int_equal(vsw_switch_rules_del_matching(c->sw, &m), 1);
	assert_int_equal(pair_hits_of(c, 0, 4), 0);
	check_identity(c);
	ctx_free(c);
}

struct dump {
	unsigned n;
	struct vsw_rule_stats st[MAX_DUMP];
	int32_t prio[MAX_DUMP];
};

static void
dump_cb(const struct vsw_rule *r, const struct vsw_rule_stats *st, void *arg)
{
	struct dump *d = arg;

	assert_true(d->n < MAX_DUMP);
	d->prio[d->n] = r->priority;
	d->st[d->n++] = *st;
}

/* A random rule: mostly port pairs, with what blocks or breaks them. */
static void
random_rule(char *buf, size_t len)
{
	unsigned in = (unsigned)rand() % (N_PORTS + 1); /* N_PORTS: any */
	unsigned o1 = (unsigned)rand() % N_PORTS, o2 = (o1 + 1) % N_PORTS;
	unsigned prio = (unsigned)rand() % 4;
	char act[64], match[64];
	int kind = rand() % 8;

	switch (rand() % 8) {
	case 0:
	case 1:
	case 2:
	case 3:
		snprintf(act, sizeof(act), "output:%u", o1);
		break;
	case 4:
		snprintf(act, sizeof(act), "output:%u,output:%u", o1, o2);
		break;
	case 5:
		snprintf(act, sizeof(act), "push_vlan:7,output:%u", o1);
		break;
	case 6:
		snprintf(act, sizeof(act), "%s", rand() % 2 ? "drop" : "flood");
		break;
	default:
		snprintf(act, sizeof(act), "normal");
		break;
	}
	if (in < N_PORTS)
		snprintf(match, sizeof(match), "in_port=%u%s", in,
			kind < 5    ? ""
			: kind == 5 ? ",udp"
				    : ",ip,nw_dst=10.0.0.2");
	else
		snprintf(match, sizeof(match), "%s",
			kind < 4 ? "udp" : "ip,nw_dst=10.0.0.1");
	snprintf(buf, len, "priority=%u,%s,actions=%s", prio, match, act);
}

static void
random_change(struct ctx *a, struct ctx *b)
{
	struct ctx *both[2] = {a, b};
	struct vsw_rule r;
	char text[160];
	int op = rand() % 6, rc[2];

	if (op < 4) {
		random_rule(text, sizeof(text));
		parse(text, 0, &r);
		for (int i = 0; i < 2; i++)
			assert_int_equal(
				vsw_switch_rules_add(both[i]->sw, &r, 1), 0);
		return;
	}
	random_rule(text, sizeof(text));
	*strstr(text, ",actions=") = '\0';
	if (op == 5)
		memmove(text, strchr(text, ',') + 1, strlen(strchr(text, ',')));
	parse(text, VSW_RULE_PARSE_MATCH_ONLY, &r);
	for (int i = 0; i < 2; i++)
		rc[i] = op == 4 ? vsw_switch_rule_del(both[i]->sw, &r)
				: vsw_switch_rules_del_matching(
					  both[i]->sw, &r);
	assert_int_equal(rc[0], rc[1]);
}

/* The same random burst into port in of both switches. */
static void
random_burst(struct ctx *a, struct ctx *b, unsigned in, uint32_t *seq)
{
	struct rte_mbuf *pa[32], *pb[32];
	unsigned n = 1 + (unsigned)rand() % 32, i;
	uint8_t src[6], dst[6];

	for (i = 0; i < n; i++) {
		uint32_t dip = 0x0a000001 + (uint32_t)(rand() % 3);
		uint16_t len = (uint16_t)(PKT_LEN + rand() % 200);
		int vlan = rand() % 4 == 0 ? 7 : -1;

		host_mac((unsigned)rand() % N_PORTS, src);
		if (rand() % 3 == 0)
			memcpy(dst, bcast, 6);
		else
			host_mac((unsigned)rand() % N_PORTS, dst);
		pa[i] = mk_pkt(dst, src, vlan, dip, *seq, len);
		pb[i] = mk_pkt(dst, src, vlan, dip, (*seq)++, len);
		if (rand() % 5 == 0) { /* not UDP: proto 6 */
			unsigned o = vlan >= 0 ? 18 : 14;

			rte_pktmbuf_mtod(pa[i], uint8_t *)[o + 9] = 6;
			rte_pktmbuf_mtod(pb[i], uint8_t *)[o + 9] = 6;
		}
	}
	inject(a, in, pa, n);
	inject(b, in, pb, n);
}

static void
compare_outputs(struct ctx *a, struct ctx *b)
{
	struct rte_mbuf *oa[512], *ob[512];
	unsigned p, i, na, nb;

	for (p = 0; p < N_PORTS; p++) {
		na = collect(a, p, oa, 512);
		nb = collect(b, p, ob, 512);
		assert_int_equal(na, nb);
		for (i = 0; i < na; i++) {
			assert_int_equal(pkt_seq(oa[i]), pkt_seq(ob[i]));
			assert_int_equal(oa[i]->pkt_len, ob[i]->pkt_len);
		}
		free_all(oa, na);
		free_all(ob, nb);
	}
}

static void
compare_counters(struct ctx *a, struct ctx *b, uint64_t *pair_hits)
{
	static struct dump da, db;
	struct vsw_pmd_stats sa, sb;
	unsigned i;

	pmd_stats(a, 0, &sa);
	pmd_stats(b, 0, &sb);
	assert_int_equal(sb.c[VSW_PMD_PAIR_HIT], 0);
	assert_int_equal(sa.c[VSW_PMD_EMC_HIT] + sa.c[VSW_PMD_CLS_HIT] +
				 sa.c[VSW_PMD_PAIR_HIT],
		sb.c[VSW_PMD_EMC_HIT] + sb.c[VSW_PMD_CLS_HIT]);
	for (i = 0; i < VSW_PMD_N_COUNTERS; i++) {
		if (i == VSW_PMD_EMC_HIT || i == VSW_PMD_CLS_HIT ||
			i == VSW_PMD_PAIR_HIT ||
			i == VSW_PMD_SUBTABLE_LOOKUPS ||
			(i >= VSW_PMD_ITER_BUSY && i <= VSW_PMD_CYCLES_SLEEP))
			continue;
		if (sa.c[i] != sb.c[i])
			fail_msg("counter %s: %lu vs %lu",
				vsw_pmd_counter_name((enum vsw_pmd_counter)i),
				(unsigned long)sa.c[i], (unsigned long)sb.c[i]);
	}
	da.n = db.n = 0;
	vsw_switch_rules_dump(a->sw, dump_cb, &da);
	vsw_switch_rules_dump(b->sw, dump_cb, &db);
	assert_int_equal(da.n, db.n);
	for (i = 0; i < da.n; i++) {
		assert_int_equal(da.prio[i], db.prio[i]);
		assert_int_equal(da.st[i].packets, db.st[i].packets);
		assert_int_equal(da.st[i].bytes, db.st[i].bytes);
	}
	*pair_hits = sa.c[VSW_PMD_PAIR_HIT];
}

static void
test_pair_random_vs_normal(void **state)
{
	struct ctx *a = ctx_ref(false), *b = ctx_ref(true);
	uint64_t hits = 0, rounds_with = 0, last = 0;
	uint32_t seq = 0;
	unsigned round, k;

	(void)state;
	srand(15);
	for (round = 0; round < 400; round++) {
		if (round % 50 == 0) { /* start over from a few pairs */
			struct vsw_rule r;

			parse("priority=1,in_port=0,actions=output:1", 0, &r);
			assert_int_equal(
				vsw_switch_rules_replace(a->sw, &r, 1), 0);
			assert_int_equal(
				vsw_switch_rules_replace(b->sw, &r, 1), 0);
		}
		random_change(a, b);
		for (k = 0; k < 3; k++)
			random_burst(a, b, (unsigned)rand() % N_PORTS, &seq);
		poll_all(a);
		poll_all(b);
		compare_outputs(a, b);
		compare_counters(a, b, &hits);
		rounds_with += hits > last;
		last = hits;
	}
	/* Both paths were exercised, often. */
	assert_true(rounds_with > 40 && rounds_with < 360);
	check_identity(a);
	check_identity(b);
	ctx_free(a);
	ctx_free(b);
}

static int
setup(void **state)
{
	(void)state;
	return harness_setup("test_port_pair");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pair_decision),
		cmocka_unit_test(test_pair_follows_changes),
		cmocka_unit_test(test_pair_random_vs_normal),
	};

	return cmocka_run_group_tests(tests, setup, harness_teardown);
}

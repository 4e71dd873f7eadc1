/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Switch core tables: rule add/replace/delete (EMC never stale), subtable
 * re-ranking, ports and rx-queue assignment to PMDs. The same under
 * concurrency (rules replaced under a classifying PMD, lock-free learning):
 * test_switch_concurrent.c. Every test ends with the mempool's in-use
 * count back at zero.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rte_eal.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_pause.h>
#include <urcu-qsbr.h>

#include <vsw/switch.h>

#include "switch_harness.h"
#include "test_switch_rules.h"

static void
test_rule_changes(void **state)
{
	struct ctx *c = ctx_new(1, 4, 1);
	struct vsw_rule r[3];
	struct vsw_rule_stats rs;
	struct vsw_pmd_stats s;

	(void)state;
	add_rule(c, "priority=10,ip,nw_dst=10.0.0.1,actions=output:1");
	assert_int_equal(send_ip(c, 0x0a000001, 8), 0x2); /* EMC filled */
	assert_int_equal(send_ip(c, 0x0a000001, 8), 0x2);
	pmd_stats(c, 0, &s);
	assert_true(s.c[VSW_PMD_EMC_HIT] >= 8);
	/* Same match, new actions: replaces, keeps counters, EMC not stale. */
	add_rule(c, "priority=10,ip,nw_dst=10.0.0.1,actions=output:2");
	assert_int_equal(vsw_switch_n_rules(c->sw), 1);
	assert_int_equal(send_ip(c, 0x0a000001, 8), 0x4);
	rs = rule_stats(c, "priority=10,ip,nw_dst=10.0.0.1,actions=drop");
	assert_int_equal(rs.packets, 24);
	/* A higher-priority rule wins at once. */
	add_rule(c, "priority=20,ip,nw_dst=10.0.0.0/8,actions=output:3");
	assert_int_equal(send_ip(c, 0x0a000001, 8), 0x8);
	/* Deleting it falls back; deleting again is -ENOENT. */
	assert_int_equal(
		vsw_rule_parse("priority=20,ip,nw_dst=10.0.0.0/8",
			VSW_RULE_PARSE_MATCH_ONLY, NULL, NULL, &r[0], NULL, 0),
		0);
	assert_int_equal(vsw_switch_rule_del(c->sw, &r[0]), 0);
	assert_int_equal(vsw_switch_rule_del(c->sw, &r[0]), -ENOENT);
	assert_int_equal(send_ip(c, 0x0a000001, 8), 0x4);
	/* Replace the whole set; a duplicate within the set: last wins. */
	assert_int_equal(vsw_rule_parse("ip,actions=output:1", 0, NULL, NULL,
				 &r[0], NULL, 0),
		0);
	assert_int_equal(vsw_rule_parse("ip,actions=output:3", 0, NULL, NULL,
				 &r[1], NULL, 0),
		0);
	assert_int_equal(vsw_rule_parse("arp,actions=flood", 0, NULL, NULL,
				 &r[2], NULL, 0),
		0);
	assert_int_equal(vsw_switch_rules_replace(c->sw, r, 3), 0);
	assert_int_equal(vsw_switch_n_rules(c->sw), 2);
	assert_int_equal(send_ip(c, 0x0a000001, 8), 0x8);
	rs = rule_stats(c, "ip,actions=drop");
	assert_int_equal(rs.packets, 8); /* a fresh id starts at zero */
	/* All or nothing: a bad rule in a batch changes nothing. */
	r[1].n_actions = VSW_RULE_MAX_ACTIONS + 1;
	r[0].priority = 99;
	assert_int_equal(vsw_switch_rules_add(c->sw, r, 2), -EINVAL);
	assert_int_equal(vsw_switch_n_rules(c->sw), 2);
	assert_int_equal(send_ip(c, 0x0a000001, 8), 0x8);
	/* Rules built in code get the parser's action checks too. */
	assert_int_equal(vsw_rule_parse("ip,actions=output:1,output:2", 0, NULL,
				 NULL, &r[1], NULL, 0),
		0);
	r[1].actions[1].arg = 1; /* the same port twice */
	assert_int_equal(vsw_switch_rules_add(c->sw, &r[1], 1), -EINVAL);
	r[1].actions[1].type = VSW_ACTION_FLOOD;
	assert_int_equal(vsw_switch_rules_add(c->sw, &r[1], 1), -EINVAL);
	r[1].actions[1].type = VSW_ACTION_PUSH_VLAN; /* edit after output */
	assert_int_equal(vsw_switch_rules_add(c->sw, &r[1], 1), -EINVAL);
	r[1].actions[0].type = 99;
	assert_int_equal(vsw_switch_rules_add(c->sw, &r[1], 1), -EINVAL);
	assert_int_equal(vsw_switch_n_rules(c->sw), 2);
	assert_int_equal(vsw_switch_rules_replace(c->sw, NULL, 0), 0);
	assert_int_equal(send_ip(c, 0x0a000001, 8), 0x0);
	check_identity(c);
	ctx_free(c);
}

static void
test_rule_del_matching(void **state)
{
	struct ctx *c = ctx_new(1, 4, 1);
	struct vsw_rule m;

	(void)state;
	add_rule(c, "ip,actions=output:3");
	add_rule(c, "arp,actions=flood");
	add_rule(c, "priority=7,tcp,nw_dst=10.0.0.2,actions=output:1");
	add_rule(c, "priority=8,dl_dst=02:00:00:00:00:01,actions=output:1");
	/* Non-strict delete: every rule at least as specific as "ip". */
	assert_int_equal(vsw_rule_parse("ip", VSW_RULE_PARSE_MATCH_ONLY, NULL,
				 NULL, &m, NULL, 0),
		0);
	assert_int_equal(vsw_switch_rules_del_matching(c->sw, &m), 2);
	assert_int_equal(vsw_switch_n_rules(c->sw), 2); /* arp, dl_dst */
	assert_int_equal(send_ip(c, 0x0a000001, 8), 0x0);
	assert_int_equal(vsw_switch_rules_del_matching(c->sw, &m), 0);
	/* Unicast dl_dst (a partial mask): the dl_dst rule has it; arp
	 * matches any dl_dst, so it stays. */
	assert_int_equal(
		vsw_rule_parse("dl_dst=00:00:00:00:00:00/"
			       "01:00:00:00:00:00",
			VSW_RULE_PARSE_MATCH_ONLY, NULL, NULL, &m, NULL, 0),
		0);
	assert_int_equal(vsw_switch_rules_del_matching(c->sw, &m), 1);
	/* An empty match deletes all. */
	assert_int_equal(vsw_rule_parse("", VSW_RULE_PARSE_MATCH_ONLY, NULL,
				 NULL, &m, NULL, 0),
		0);
	assert_int_equal(vsw_switch_rules_del_matching(c->sw, &m), 1);
	assert_int_equal(vsw_switch_n_rules(c->sw), 0);
	check_identity(c);
	ctx_free(c);
}

/* Average subtables visited per classifier hit for k packets to dip. */
static double
lookups_per_hit(struct ctx *c, uint32_t dip, unsigned k)
{
	struct vsw_pmd_stats s;

	vsw_switch_pmd_stats_clear(c->sw, -1);
	c->port_sums_off = true;
	assert_int_equal(send_ip(c, dip, k), 0x2);
	pmd_stats(c, 0, &s);
	assert_int_equal(s.c[VSW_PMD_CLS_HIT], k);
	return s.avg_subtable_lookups_per_hit;
}

static void
test_rerank(void **state)
{
	struct ctx *c = ctx_new(1, 2, 0); /* EMC off: every packet looks up */

	(void)state;
	/* Two subtables of equal priority; traffic hits one of them. */
	add_rule(c, "priority=100,ip,nw_dst=10.0.0.1,actions=output:1");
	add_rule(c, "priority=100,udp,tp_dst=2000,nw_dst=10.0.0.2,"
		    "actions=output:1");
	lookups_per_hit(c, 0x0a000002, 32); /* counts for the current order */
	assert_int_equal(vsw_switch_rerank(c->sw), 0);
	assert_true(lookups_per_hit(c, 0x0a000002, 32) == 1.0);
	/* Now the other subtable gets more traffic: visited second... */
	assert_true(lookups_per_hit(c, 0x0a000001, 32) == 2.0);
	assert_true(lookups_per_hit(c, 0x0a000001, 32) == 2.0);
	assert_int_equal(vsw_switch_rerank(c->sw), 0);
	/* ...until re-ranked first. */
	assert_true(lookups_per_hit(c, 0x0a000001, 32) == 1.0);
	check_identity(c);
	ctx_free(c);
}

static void
test_rerank_keeps_emc(void **state)
{
	struct ctx *c = ctx_new(1, 2, 1);
	struct vsw_pmd_stats s;

	(void)state;
	add_rule(c, "priority=100,ip,nw_dst=10.0.0.1,actions=output:1");
	add_rule(c, "priority=100,udp,tp_dst=2000,actions=output:1");
	assert_int_equal(send_ip(c, 0x0a000001, 8), 0x2); /* fills the EMC */
	assert_int_equal(vsw_switch_rerank(c->sw), 0);
	vsw_switch_pmd_stats_clear(c->sw, -1);
	c->port_sums_off = true;
	assert_int_equal(send_ip(c, 0x0a000001, 8), 0x2);
	pmd_stats(c, 0, &s);
	assert_int_equal(s.c[VSW_PMD_EMC_HIT], 8); /* same rules: no flush */
	/* EMC insertion off at run time: a new flow stays in the classifier. */
	vsw_switch_set_emc_insert_inv_prob(c->sw, 0);
	assert_int_equal(send_ip(c, 0x0a000002, 8), 0x2);
	assert_int_equal(send_ip(c, 0x0a000002, 8), 0x2);
	pmd_stats(c, 0, &s);
	assert_int_equal(s.c[VSW_PMD_EMC_HIT], 8);
	vsw_switch_set_emc_insert_inv_prob(c->sw, 1);
	assert_int_equal(send_ip(c, 0x0a000002, 8), 0x2);
	assert_int_equal(send_ip(c, 0x0a000002, 8), 0x2);
	pmd_stats(c, 0, &s);
	assert_int_equal(s.c[VSW_PMD_EMC_HIT], 16);
	check_identity(c);
	ctx_free(c);
}

static void
test_ports_and_pmds(void **state)
{
	struct ctx *c = ctx_new(2, 4, 1);
	struct vsw_pmd_stats s0, s1;
	struct rte_mbuf *m[4];
	uint8_t a[6];
	unsigned i;
	int no;

	(void)state;
	host_mac(0, a);
	add_rule(c, "actions=drop");
	assert_int_equal(vsw_switch_port_add(c->sw, "p1", &vsw_port_ring_ops,
				 c->rp[1], 1, 1),
		-EEXIST);
	assert_int_equal(vsw_switch_port_add(
				 c->sw, "", &vsw_port_ring_ops, c->rp[1], 1, 1),
		-EINVAL);
	assert_int_equal(vsw_switch_port_lookup("p3", c->sw), 3);
	assert_string_equal(vsw_switch_port_name(2, c->sw), "p2");
	/* Round-robin: PMD 0 polls ports 0 and 2, PMD 1 ports 1 and 3. */
	for (i = 0; i < 4; i++) {
		m[i] = mk_pkt(bcast, a, -1, 1, i, PKT_LEN);
		inject(c, i, &m[i], 1);
	}
	assert_int_equal(vsw_pmd_poll_once(vsw_switch_pmd(c->sw, 1)), 2);
	assert_int_equal(vsw_pmd_poll_once(vsw_switch_pmd(c->sw, 0)), 2);
	rcu_quiescent_state();
	/* After deleting port 1: PMD 0 polls 0 and 3, PMD 1 polls 2. */
	assert_int_equal(vsw_switch_port_del(c->sw, 1), 0);
	c->port_sums_off = true;
	assert_int_equal(vsw_switch_port_del(c->sw, 1), -ENOENT);
	for (i = 0; i < 4; i++) {
		if (i == 1)
			continue;
		m[i] = mk_pkt(bcast, a, -1, 1, i, PKT_LEN);
		inject(c, i, &m[i], 1);
	}
	assert_int_equal(vsw_pmd_poll_once(vsw_switch_pmd(c->sw, 1)), 1);
	assert_int_equal(vsw_pmd_poll_once(vsw_switch_pmd(c->sw, 0)), 2);
	rcu_quiescent_state();
	pmd_stats(c, 0, &s0);
	pmd_stats(c, 1, &s1);
	assert_int_equal(s0.c[VSW_PMD_RX], 4);
	assert_int_equal(s1.c[VSW_PMD_RX], 3);
	/* The lowest free number is reused; its counters start at zero. */
	no = vsw_switch_port_add(
		c->sw, "again", &vsw_port_ring_ops, c->rp[1], 1, 1);
	assert_int_equal(no, 1);
	{
		struct vsw_port_stats ps;

		assert_int_equal(vsw_switch_port_stats(c->sw, 1, &ps), 0);
		assert_int_equal(ps.rx, 0);
	}
	assert_int_equal(vsw_switch_n_ports(c->sw), 4);
	/* Port 0 gets a second rx queue: it goes to PMD 1 (0/q0 -> PMD 0,
	 * 0/q1 -> PMD 1, 1 -> PMD 0, ...); the ring port serves any queue. */
	assert_int_equal(vsw_switch_port_set_queues(c->sw, 9, 2, 1), -ENOENT);
	assert_int_equal(vsw_switch_port_set_queues(c->sw, 0, 2, 0), -EINVAL);
	for (i = 0; i < 4; i++)
		m[i] = mk_pkt(bcast, a, -1, 1, i, PKT_LEN);
	inject(c, 0, m, 4);
	assert_int_equal(vsw_pmd_poll_once(vsw_switch_pmd(c->sw, 1)), 0);
	assert_int_equal(vsw_switch_port_set_queues(c->sw, 0, 2, 1), 0);
	assert_int_equal(vsw_pmd_poll_once(vsw_switch_pmd(c->sw, 1)), 4);
	rcu_quiescent_state();
	check_identity(c);
	ctx_free(c);
}

static int
group_setup(void **state)
{
	(void)state;
	return harness_setup("vsw_test_switch_rules");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rule_changes),
		cmocka_unit_test(test_rule_del_matching),
		cmocka_unit_test(test_rerank),
		cmocka_unit_test(test_rerank_keeps_emc),
		cmocka_unit_test(test_ports_and_pmds),
		cmocka_unit_test(test_concurrent_replace),
		cmocka_unit_test(test_concurrent_learning),
	};

	return cmocka_run_group_tests(tests, group_setup, harness_teardown);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Rx queue assignment by measured cycles (vsw_switch_rxq_assign_cycles, the
 * pure part of pmd-rxq-rebalance): every queue placed, the exact limits (1
 * PMD, more PMDs than queues, equal loads), many random loads against the
 * greedy bound; then vsw_switch_rxq_rebalance on a 2-PMD switch with ring
 * ports: two busy queues that round-robin put on one PMD end up apart.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <rte_mbuf.h>
#include <urcu-qsbr.h>

#include <vsw/switch.h>

#include "switch_harness.h"

#define NQ_MAX 256

static void
assign(const uint64_t *load, unsigned n, unsigned n_pmds, uint8_t *out)
{
	memset(out, 0xee, n);
	assert_int_equal(vsw_switch_rxq_assign_cycles(load, n, n_pmds, out), 0);
	for (unsigned i = 0; i < n; i++)
		assert_true(out[i] < n_pmds);
}

static void
sums(const uint64_t *load, const uint8_t *pmd_of, unsigned n, uint64_t *sum,
	unsigned *cnt)
{
	memset(sum, 0, VSW_SWITCH_MAX_PMDS * sizeof(*sum));
	memset(cnt, 0, VSW_SWITCH_MAX_PMDS * sizeof(*cnt));
	for (unsigned i = 0; i < n; i++) {
		sum[pmd_of[i]] += load[i];
		cnt[pmd_of[i]]++;
	}
}

static void
test_one_pmd(void **state)
{
	uint64_t load[5] = {5, 1, 9, 0, 3};
	uint8_t out[5];

	(void)state;
	assign(load, 5, 1, out);
	for (unsigned i = 0; i < 5; i++)
		assert_int_equal(out[i], 0);
	assert_int_equal(vsw_switch_rxq_assign_cycles(load, 0, 1, out), 0);
	assert_int_equal(
		vsw_switch_rxq_assign_cycles(load, 5, 0, out), -EINVAL);
	assert_int_equal(vsw_switch_rxq_assign_cycles(
				 load, 5, VSW_SWITCH_MAX_PMDS + 1, out),
		-EINVAL);
}

/* More PMDs than queues: every queue alone on its PMD, loaded or not. */
static void
test_more_pmds_than_queues(void **state)
{
	uint64_t load[5] = {0, 7, 7, 0, 100}, sum[VSW_SWITCH_MAX_PMDS];
	unsigned cnt[VSW_SWITCH_MAX_PMDS];
	uint8_t out[5];

	(void)state;
	assign(load, 5, VSW_SWITCH_MAX_PMDS, out);
	sums(load, out, 5, sum, cnt);
	for (unsigned m = 0; m < VSW_SWITCH_MAX_PMDS; m++)
		assert_true(cnt[m] <= 1);
	/* The heaviest goes first, to PMD 0; equal loads by index. */
	assert_int_equal(out[4], 0);
	assert_int_equal(out[1], 1);
	assert_int_equal(out[2], 2);
}

/* Equal loads (and all-zero loads: nothing measured yet) spread evenly. */
static void
test_equal_loads(void **state)
{
	uint64_t load[NQ_MAX], sum[VSW_SWITCH_MAX_PMDS];
	unsigned cnt[VSW_SWITCH_MAX_PMDS];
	uint8_t out[NQ_MAX];

	(void)state;
	for (uint64_t v = 0; v <= 1000; v += 1000) {
		for (unsigned n = 1; n <= 40; n++) {
			for (unsigned m = 1; m <= VSW_SWITCH_MAX_PMDS; m++) {
				unsigned lo = n, hi = 0;

				for (unsigned i = 0; i < n; i++)
					load[i] = v;
				assign(load, n, m, out);
				sums(load, out, n, sum, cnt);
				for (unsigned k = 0; k < m; k++) {
					lo = cnt[k] < lo ? cnt[k] : lo;
					hi = cnt[k] > hi ? cnt[k] : hi;
				}
				assert_true(hi - lo <= 1);
			}
		}
	}
}

/*
 * Random loads: every queue placed, the largest PMD load within the list
 * scheduling bound sum/m + max (LPT is not optimal, so a bound, not the
 * optimum), and no PMD with two queues while there are PMDs to spare.
 */
static void
test_random_loads(void **state)
{
	uint64_t load[NQ_MAX], sum[VSW_SWITCH_MAX_PMDS];
	unsigned cnt[VSW_SWITCH_MAX_PMDS];
	uint8_t out[NQ_MAX];

	(void)state;
	srand(16);
	for (unsigned iter = 0; iter < 2000; iter++) {
		unsigned n = 1 + (unsigned)rand() % NQ_MAX;
		unsigned m = 1 + (unsigned)rand() % VSW_SWITCH_MAX_PMDS;
		uint64_t total = 0, big = 0, hi = 0;

		for (unsigned i = 0; i < n; i++) {
			/* Mostly small, a few heavy hitters, some idle. */
			unsigned r = (unsigned)rand() % 10;

			load[i] = r == 0   ? 0
				  : r == 1 ? (uint64_t)rand() * 1000
					   : (uint64_t)(rand() % 100000);
			total += load[i];
			big = load[i] > big ? load[i] : big;
		}
		assign(load, n, m, out);
		sums(load, out, n, sum, cnt);
		for (unsigned k = 0; k < m; k++)
			hi = sum[k] > hi ? sum[k] : hi;
		assert_true(hi <= total / m + big);
		if (n <= m)
			for (unsigned k = 0; k < m; k++)
				assert_true(cnt[k] <= 1);
	}
}

/* 2 PMDs, 4 ring ports: round-robin puts ports 0 and 2 on PMD 0; only they
 * carry traffic; after a rebalance by cycles they are apart. */
static void
test_rebalance_switch(void **state)
{
	struct ctx *c = ctx_new(2, 4, 1);
	uint8_t dst[6], src[6];
	uint64_t cyc0 = 0, cyc2 = 0, cyc1 = 0;

	(void)state;
	add_rule(c, "in_port=0,actions=output:1");
	add_rule(c, "in_port=2,actions=output:3");
	assert_int_equal(vsw_switch_rxq_pmd(c->sw, 0, 0), 0);
	assert_int_equal(vsw_switch_rxq_pmd(c->sw, 2, 0), 0);
	host_mac(1, dst);
	host_mac(2, src);
	for (unsigned round = 0; round < 50; round++) {
		for (unsigned port = 0; port <= 2; port += 2) {
			struct rte_mbuf *pkts[32], *out[32];
			unsigned got;

			for (unsigned i = 0; i < 32; i++)
				pkts[i] =
					mk_pkt(dst, src, -1, 0x0a000001, i, 64);
			inject(c, port, pkts, 32);
			poll_all(c);
			got = collect(c, port + 1, out, 32);
			assert_int_equal(got, 32);
			free_all(out, got);
		}
	}
	assert_int_equal(vsw_switch_rxq_cycles(c->sw, 0, 0, &cyc0), 0);
	assert_int_equal(vsw_switch_rxq_cycles(c->sw, 2, 0, &cyc2), 0);
	assert_int_equal(vsw_switch_rxq_cycles(c->sw, 1, 0, &cyc1), 0);
	assert_true(cyc0 > 0 && cyc2 > 0);
	assert_true(cyc1 < cyc0 && cyc1 < cyc2);
	assert_int_equal(vsw_switch_rxq_cycles(c->sw, 0, 1, &cyc1), -ENOENT);
	assert_int_equal(vsw_switch_rxq_cycles(c->sw, 9, 0, &cyc1), -ENOENT);
	assert_int_equal(
		vsw_switch_rxq_rebalance(c->sw, VSW_RXQ_ASSIGN_CYCLES), 0);
	assert_int_not_equal(vsw_switch_rxq_pmd(c->sw, 0, 0),
		vsw_switch_rxq_pmd(c->sw, 2, 0));
	/* A new interval: the counts start again. */
	assert_int_equal(vsw_switch_rxq_cycles(c->sw, 0, 0, &cyc0), 0);
	assert_true(cyc0 == 0);
	/* Pins survive an unrelated port change; traffic still flows. */
	assert_int_equal(vsw_switch_port_set_queues(c->sw, 3, 1, 1), 0);
	assert_int_not_equal(vsw_switch_rxq_pmd(c->sw, 0, 0),
		vsw_switch_rxq_pmd(c->sw, 2, 0));
	assert_int_equal(send_ip(c, 0x0a000001, 8), 1u << 1);
	assert_int_equal(
		vsw_switch_rxq_rebalance(c->sw, VSW_RXQ_ASSIGN_ROUNDROBIN), 0);
	assert_int_equal(vsw_switch_rxq_pmd(c->sw, 0, 0), 0);
	assert_int_equal(vsw_switch_rxq_pmd(c->sw, 2, 0), 0);
	check_identity(c);
	ctx_free(c);
}

static int
group_setup(void **state)
{
	(void)state;
	return harness_setup("vsw_test_rxq_assign");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_pmd),
		cmocka_unit_test(test_more_pmds_than_queues),
		cmocka_unit_test(test_equal_loads),
		cmocka_unit_test(test_random_loads),
		cmocka_unit_test(test_rebalance_switch),
	};

	return cmocka_run_group_tests(tests, group_setup, harness_teardown);
}

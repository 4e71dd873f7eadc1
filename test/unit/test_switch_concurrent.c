/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The switch core under concurrency: a PMD lcore classifying while the
 * rule set is replaced thousands of times, and two PMD threads learning
 * MACs lock-free at the same time. Every test ends with the mempool's
 * in-use count back at zero. Run from test_switch_rules.c's main.
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

/*
 * Concurrency: a PMD lcore switches packets from port 0 while this thread
 * replaces the whole rule set thousands of times. Set A sends flow f to port
 * 1 + f % 3, set B to 1 + (f + 1) % 3: a packet may leave on either, never
 * on the third, and never twice or not at all.
 */
enum { FLOWS = 12, REPLACES = 2000, PER_ROUND = 48 };

static void
build_set(struct vsw_rule *rules, unsigned shift)
{
	unsigned f;

	for (f = 0; f < FLOWS; f++) {
		char text[128];

		/* Two mask shapes (two subtables) + a catch-all. */
		if (f % 2)
			snprintf(text, sizeof(text),
				"priority=100,ip,"
				"nw_dst=10.0.0.%u,actions=output:%u",
				f, 1 + (f + shift) % 3);
		else
			snprintf(text, sizeof(text),
				"priority=90,udp,"
				"nw_dst=10.0.0.%u,tp_dst=2000,actions=output:%"
				"u",
				f, 1 + (f + shift) % 3);
		assert_int_equal(
			vsw_rule_parse(text, 0, NULL, NULL, &rules[f], NULL, 0),
			0);
	}
	assert_int_equal(vsw_rule_parse("priority=0,actions=drop", 0, NULL,
				 NULL, &rules[FLOWS], NULL, 0),
		0);
}

static unsigned
drain_check(struct ctx *c, uint8_t *seen, uint32_t n_sent)
{
	struct rte_mbuf *out[64];
	unsigned p, i, n, total = 0;

	for (p = 1; p <= 3; p++) {
		while ((n = collect(c, p, out, 64)) > 0) {
			for (i = 0; i < n; i++) {
				uint32_t s = pkt_seq(out[i]);
				unsigned f = s % FLOWS;

				assert_true(s < n_sent);
				assert_int_equal(seen[s], 0);
				seen[s] = 1;
				if (p != 1 + f % 3 && p != 1 + (f + 1) % 3)
					fail_msg("flow %u on port %u", f, p);
			}
			free_all(out, n);
			total += n;
		}
	}
	return total;
}

void
test_concurrent_replace(void **state)
{
	struct ctx *c;
	struct vsw_rule a[FLOWS + 1], b[FLOWS + 1];
	uint8_t *seen = calloc(REPLACES * PER_ROUND, 1), ma[6], mb[6];
	uint32_t seq = 0;
	unsigned i, k, received = 0, refused = 0, spins;
	struct vsw_pmd_stats s;

	(void)state;
	if (rte_lcore_count() < 2 || !rte_lcore_is_enabled(1)) {
		free(seen);
		skip();
	}
	assert_non_null(seen);
	c = ctx_new(1, 4, 1);
	host_mac(0, ma);
	host_mac(1, mb);
	build_set(a, 0);
	build_set(b, 1);
	assert_int_equal(vsw_switch_rules_replace(c->sw, a, FLOWS + 1), 0);
	assert_int_equal(vsw_switch_pmds_start(c->sw), 0);
	for (i = 0; i < REPLACES; i++) {
		struct rte_mbuf *in[PER_ROUND];

		/* Several bursts per round, so the EMC holds entries when the
		 * rule set changes under it. */
		for (k = 0; k < PER_ROUND; k++, seq++)
			in[k] = mk_pkt(mb, ma, -1, 0x0a000000 + seq % FLOWS,
				seq, PKT_LEN);
		k = vsw_port_ring_inject(c->rp[0], in, PER_ROUND);
		if (k < PER_ROUND) { /* ring full: take them back */
			free_all(&in[k], PER_ROUND - k);
			memset(&seen[seq - PER_ROUND + k], 2, PER_ROUND - k);
			refused += PER_ROUND - k;
		}
		/* Alternate the two writer paths: a whole new classifier, and
		 * a clone whose rules get new actions (same matches). */
		if (i % 4 < 2)
			assert_int_equal(vsw_switch_rules_replace(c->sw,
						 i % 2 ? a : b, FLOWS + 1),
				0);
		else
			assert_int_equal(vsw_switch_rules_add(c->sw,
						 i % 2 ? a : b, FLOWS + 1),
				0);
		received += drain_check(c, seen, seq);
	}
	for (spins = 0; spins < 20000000; spins++) {
		received += drain_check(c, seen, seq);
		if (received == seq - refused)
			break;
		rte_pause();
	}
	vsw_switch_pmds_stop(c->sw);
	received += drain_check(c, seen, seq);
	for (k = 0; k < seq; k++)
		if (seen[k] == 0)
			fail_msg("packet %u lost", k);
	pmd_stats(c, 0, &s);
	assert_int_equal(
		s.c[VSW_PMD_DROP_NO_RULE] + s.c[VSW_PMD_DROP_ACTION], 0);
	assert_int_equal(s.c[VSW_PMD_RX], received);
	print_message("# %u packets through %u rule-set changes, %" PRIu64
		      " EMC hits, %" PRIu64 " classifier hits\n",
		received, REPLACES, s.c[VSW_PMD_EMC_HIT], s.c[VSW_PMD_CLS_HIT]);
	check_identity(c);
	free(seen);
	ctx_free(c);
}

/*
 * Lock-free MAC learning: two PMD threads (each polling two ports) learn
 * and forward "normal" traffic at the same time. Hosts never move, so each
 * packet goes either to its destination's home port (learned), or to every
 * port but the input one (not learned yet), or nowhere when the destination
 * lives on the input port and is known. In the end every host is learned on
 * its home port.
 */
enum { L_HOSTS = 16, L_PORTS = 4, L_ROUNDS = 400, L_BURST = 16 };

static void *
pmd_thread(void *pmd)
{
	vsw_pmd_main(pmd);
	return NULL;
}

/* Record which ports each packet reached (each port at most once). */
static void
collect_reached(struct ctx *c, uint8_t *got, uint32_t n_sent)
{
	unsigned p, i;

	for (p = 0; p < L_PORTS; p++) {
		struct rte_mbuf *out[64];
		unsigned n;

		while ((n = collect(c, p, out, 64)) > 0) {
			for (i = 0; i < n; i++) {
				uint32_t s = pkt_seq(out[i]);

				assert_true(s < n_sent);
				assert_false(got[s] & (1u << p));
				got[s] |= (uint8_t)(1u << p);
			}
			free_all(out, n);
		}
	}
}

/* Both PMDs together have received n packets (bounds mbufs in flight). */
static void
wait_received(struct ctx *c, uint32_t n)
{
	struct vsw_pmd_stats s0, s1;

	do {
		rte_pause();
		pmd_stats(c, 0, &s0);
		pmd_stats(c, 1, &s1);
	} while (s0.c[VSW_PMD_RX] + s1.c[VSW_PMD_RX] < n);
}

/* What the learning test sent: input port and destination host of each. */
struct learn_log {
	uint8_t *in_of;
	uint8_t *dst_of;
	uint8_t *got; /* bitmap of ports reached */
	uint32_t n;
};

/* One round: a burst from two hosts of every port to varied hosts. */
static void
learn_round(struct ctx *c, struct learn_log *lg, unsigned r)
{
	unsigned port, k;

	for (port = 0; port < L_PORTS; port++) {
		struct rte_mbuf *in[L_BURST];

		for (k = 0; k < L_BURST; k++, lg->n++) {
			unsigned src =
				port +
				L_PORTS * ((lg->n / 7) % (L_HOSTS / L_PORTS));
			unsigned dst = (lg->n * 5 + r) % L_HOSTS;
			uint8_t sm[6], dm[6];

			host_mac(src, sm);
			host_mac(dst, dm);
			in[k] = mk_pkt(dm, sm, -1, 1, lg->n, PKT_LEN);
			lg->in_of[lg->n] = (uint8_t)port;
			lg->dst_of[lg->n] = (uint8_t)dst;
		}
		for (k = 0; k < L_BURST; rte_pause()) /* until all fit */
			k += vsw_port_ring_inject(
				c->rp[port], &in[k], L_BURST - k);
	}
	wait_received(c, lg->n);
	collect_reached(c, lg->got, lg->n);
}

/* Each packet: unicast home, flooded, or dropped as local and known. */
static void
learn_check(struct ctx *c, const struct learn_log *lg)
{
	unsigned i, delivered = 0;

	for (i = 0; i < lg->n; i++) {
		unsigned in = lg->in_of[i], home = lg->dst_of[i] % L_PORTS;
		unsigned all = ((1u << L_PORTS) - 1) & ~(1u << in);
		unsigned want = home == in ? 0 : 1u << home;

		if (lg->got[i] != want && lg->got[i] != all)
			fail_msg(
				"packet %u from port %u to host %u: ports 0x%x",
				i, in, lg->dst_of[i], lg->got[i]);
		delivered += lg->got[i] != 0;
	}
	for (i = 0; i < L_HOSTS; i++) {
		uint8_t m[6];

		host_mac(i, m);
		assert_int_equal(
			vsw_switch_mac_lookup(c->sw, m), (int)(i % L_PORTS));
	}
	print_message(
		"# %u packets, %u delivered, learned from two PMD threads\n",
		lg->n, delivered);
}

void
test_concurrent_learning(void **state)
{
	size_t max = L_ROUNDS * L_PORTS * L_BURST;
	struct learn_log lg = {
		calloc(max, 1), calloc(max, 1), calloc(max, 1), 0};
	unsigned r, i;
	pthread_t th[2];
	struct ctx *c;

	(void)state;
	assert_true(lg.in_of != NULL && lg.dst_of != NULL && lg.got != NULL);
	/* Room for every output even if this thread is not scheduled for a
	 * while (three threads on two cores): no tx drops to explain. */
	harness_ring_size = 4096;
	c = ctx_new(2, L_PORTS, 1); /* host h lives on port h % L_PORTS */
	harness_ring_size = 1024;
	add_rule(c, "actions=normal");
	for (i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, pmd_thread,
					 vsw_switch_pmd(c->sw, i)),
			0);
	for (r = 0; r < L_ROUNDS; r++)
		learn_round(c, &lg, r);
	/* Every packet was received; a PMD finishes its iteration (and
	 * flushes) before it looks at the stop flag. */
	vsw_switch_pmds_stop(c->sw);
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	collect_reached(c, lg.got, lg.n);
	learn_check(c, &lg);
	check_identity(c);
	free(lg.in_of);
	free(lg.dst_of);
	free(lg.got);
	ctx_free(c);
}

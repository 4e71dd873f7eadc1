/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Switch core actions through the public API with in-memory ring ports:
 * output, multi-output by reference count, drop reasons, normal (against a
 * reference learning switch), aging, VLAN push/strip byte-exact, output
 * batching, per-PMD accounting (rx + clones = tx + drops). Every test ends
 * with the mempool's in-use count back at zero.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
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

static void
test_output(void **state)
{
	struct ctx *c;
	struct rte_mbuf *in[100], *out[128];
	uint8_t ref[100][PKT_LEN], a[6], b[6];
	struct vsw_pmd_stats s;
	struct vsw_rule_stats rs;
	unsigned i, n;

	(void)state;
	/* EMC and classifier: the rules below would make port 0 a port
	 * pair (test_port_pair checks that path against this one). */
	harness_no_port_pair = true;
	c = ctx_new(1, 3, 1);
	harness_no_port_pair = false;
	host_mac(0, a);
	host_mac(1, b);
	add_rule(c, "priority=10,in_port=0,actions=output:2");
	add_rule(c, "priority=5,ip,actions=drop");
	for (i = 0; i < 100; i++) {
		in[i] = mk_pkt(b, a, -1, 0x0a000000 + i % 7, i, PKT_LEN);
		memcpy(ref[i], rte_pktmbuf_mtod(in[i], void *), PKT_LEN);
	}
	inject(c, 0, in, 100);
	poll_all(c);
	n = collect(c, 2, out, 128);
	assert_int_equal(n, 100);
	for (i = 0; i < n; i++) { /* in order, byte-exact */
		assert_int_equal(rte_pktmbuf_pkt_len(out[i]), PKT_LEN);
		assert_memory_equal(
			rte_pktmbuf_mtod(out[i], void *), ref[i], PKT_LEN);
		assert_int_equal(rte_mbuf_refcnt_read(out[i]), 1);
	}
	free_all(out, n);
	assert_int_equal(collect(c, 1, out, 128), 0);
	/* Same packets from port 1: the lower-priority drop. */
	for (i = 0; i < 20; i++)
		in[i] = mk_pkt(b, a, -1, 0x0a000001, i, PKT_LEN);
	inject(c, 1, in, 20);
	poll_all(c);
	pmd_stats(c, 0, &s);
	assert_int_equal(s.c[VSW_PMD_RX], 120);
	assert_int_equal(s.c[VSW_PMD_TX], 100);
	assert_int_equal(s.c[VSW_PMD_DROP_ACTION], 20);
	assert_int_equal(s.c[VSW_PMD_EMC_HIT] + s.c[VSW_PMD_CLS_HIT], 120);
	assert_true(s.c[VSW_PMD_EMC_HIT] > 0);
	rs = rule_stats(c, "priority=10,in_port=0,actions=drop");
	assert_int_equal(rs.packets, 100);
	assert_int_equal(rs.bytes, 100 * PKT_LEN);
	rs = rule_stats(c, "priority=5,ip,actions=drop");
	assert_int_equal(rs.packets, 20);
	check_identity(c);
	ctx_free(c);
}

/* A two-segment packet: headers in the first mbuf, the rest in a second. */
static struct rte_mbuf *
mk_chain(const uint8_t dst[6], const uint8_t src[6], uint32_t seq)
{
	struct rte_mbuf *m = mk_pkt(dst, src, -1, 0x0a000001, seq, PKT_LEN);
	struct rte_mbuf *t = rte_pktmbuf_alloc(pool);

	assert_non_null(t);
	assert_non_null(rte_pktmbuf_append(t, 100));
	assert_int_equal(rte_pktmbuf_chain(m, t), 0);
	return m;
}

static void
test_multi_output(void **state)
{
	struct ctx *c = ctx_new(1, 4, 1);
	struct rte_mbuf *in[40], *out[3][64];
	struct vsw_pmd_stats s;
	uint8_t a[6], b[6];
	unsigned i, p, n[3];

	(void)state;
	host_mac(0, a);
	host_mac(1, b);
	/* Output to the input port is skipped (OpenFlow in_port rule). */
	add_rule(c, "in_port=0,actions=output:0,output:1,output:2,output:3");
	for (i = 0; i < 40; i++)
		in[i] = i % 4 == 3 ? mk_chain(b, a, i)
				   : mk_pkt(b, a, -1, 0x0a000001, i, PKT_LEN);
	inject(c, 0, in, 40);
	poll_all(c);
	assert_int_equal(collect(c, 0, out[0], 64), 0);
	for (p = 0; p < 3; p++) {
		n[p] = collect(c, p + 1, out[p], 64);
		assert_int_equal(n[p], 40);
	}
	for (i = 0; i < 40; i++) { /* one mbuf, three references */
		assert_ptr_equal(out[0][i], in[i]);
		assert_ptr_equal(out[1][i], in[i]);
		assert_ptr_equal(out[2][i], in[i]);
		assert_int_equal(rte_mbuf_refcnt_read(in[i]), 3);
		if (in[i]->next != NULL)
			assert_int_equal(rte_mbuf_refcnt_read(in[i]->next), 3);
		assert_int_equal(pkt_seq(in[i]), i);
	}
	pmd_stats(c, 0, &s);
	assert_int_equal(s.c[VSW_PMD_CLONES], 80);
	assert_int_equal(s.c[VSW_PMD_TX], 120);
	check_identity(c);
	for (p = 0; p < 3; p++) /* freeing every reference frees each once */
		free_all(out[p], n[p]);
	ctx_free(c);
}

static unsigned send_one(
	struct ctx *c, unsigned port, unsigned src, unsigned dst);

static void
test_flood(void **state)
{
	struct ctx *c = ctx_new(1, 4, 1);
	struct rte_mbuf *in[8], *out[8];
	struct vsw_pmd_stats s;
	uint8_t a[6], b[6];
	unsigned i, p;

	(void)state;
	host_mac(0, a);
	host_mac(1, b);
	add_rule(c, "actions=flood");
	for (i = 0; i < 8; i++)
		in[i] = mk_pkt(b, a, -1, 1, i, PKT_LEN);
	inject(c, 2, in, 8);
	poll_all(c);
	assert_int_equal(collect(c, 2, out, 8), 0); /* never back */
	for (p = 0; p < 4; p++) {
		unsigned n;

		if (p == 2)
			continue;
		n = collect(c, p, out, 8);
		assert_int_equal(n, 8);
		for (i = 0; i < n; i++)
			assert_ptr_equal(out[i], in[i]);
		free_all(out, n);
	}
	/* With the other ports gone, flooding has nowhere to go. */
	for (p = 0; p < 4; p++) {
		if (p == 2)
			continue;
		assert_int_equal(vsw_switch_port_del(c->sw, (uint16_t)p), 0);
		vsw_port_ring_destroy(c->rp[p]);
		c->rp[p] = NULL;
	}
	c->port_sums_off = true;
	for (i = 0; i < 8; i++)
		in[i] = mk_pkt(b, a, -1, 1, i, PKT_LEN);
	inject(c, 2, in, 8);
	poll_all(c);
	pmd_stats(c, 0, &s);
	assert_int_equal(s.c[VSW_PMD_CLONES], 16);
	assert_int_equal(s.c[VSW_PMD_DROP_NO_OUTPUT], 8);
	check_identity(c);
	ctx_free(c);
}

static void
test_mac_table_full(void **state)
{
	struct ctx *c;
	unsigned h, learned = 0;

	(void)state;
	harness_mac_entries = 16; /* 16 slots: most of 200 hosts evicted */
	c = ctx_new(1, 4, 1);
	harness_mac_entries = 4096;
	add_rule(c, "actions=normal");
	for (h = 0; h < 200; h++)
		send_one(c, h % 4, h, 250);
	for (h = 0; h < 200; h++) {
		uint8_t m[6];
		int port;

		host_mac(h, m);
		port = vsw_switch_mac_lookup(c->sw, m);
		if (port == -ENOENT)
			continue;
		assert_int_equal(port, (int)(h % 4)); /* never a wrong port */
		learned++;
	}
	assert_true(learned > 0 && learned <= 20);
	assert_int_equal(vsw_switch_mac_count(c->sw), learned);
	check_identity(c);
	ctx_free(c);
}

static void
test_drops(void **state)
{
	struct ctx *c = ctx_new(1, 3, 0);
	struct rte_mbuf *in[32];
	struct vsw_pmd_stats s;
	uint8_t a[6];
	unsigned i;

	(void)state;
	host_mac(0, a);
	add_rule(c, "in_port=0,actions=drop");
	add_rule(c, "in_port=1,actions=output:5");    /* no such port */
	add_rule(c, "in_port=2,ip,actions=output:2"); /* only back: none */
	for (i = 0; i < 10; i++)
		in[i] = mk_pkt(bcast, a, -1, 1, i, PKT_LEN);
	inject(c, 0, in, 10);
	for (i = 0; i < 11; i++)
		in[i] = mk_pkt(bcast, a, -1, 1, i, PKT_LEN);
	inject(c, 1, in, 11);
	for (i = 0; i < 12; i++)
		in[i] = mk_pkt(bcast, a, -1, 1, i, PKT_LEN);
	inject(c, 2, in, 12);
	/* Not IP on port 2: no rule at all. */
	for (i = 0; i < 13; i++) {
		in[i] = mk_pkt(bcast, a, -1, 1, i, PKT_LEN);
		rte_pktmbuf_mtod(in[i], uint8_t *)[12] = 0x88;
	}
	inject(c, 2, in, 13);
	poll_all(c);
	pmd_stats(c, 0, &s);
	assert_int_equal(s.c[VSW_PMD_RX], 46);
	assert_int_equal(s.c[VSW_PMD_DROP_ACTION], 10);
	assert_int_equal(s.c[VSW_PMD_DROP_PORT_GONE], 11);
	assert_int_equal(s.c[VSW_PMD_DROP_NO_OUTPUT], 12);
	assert_int_equal(s.c[VSW_PMD_DROP_NO_RULE], 13);
	assert_int_equal(s.c[VSW_PMD_EMC_HIT], 0); /* EMC insertion off */
	check_identity(c);
	ctx_free(c);
}

/* Reference learning switch: expected destination port set of a packet. */
static unsigned
ref_normal(
	int *table, unsigned src, int dst, unsigned in_port, unsigned n_ports)
{
	unsigned all = ((1u << n_ports) - 1) & ~(1u << in_port);

	table[src] = (int)in_port;
	if (dst < 0 || table[dst] < 0)
		return all;
	return table[dst] == (int)in_port ? 0 : 1u << table[dst];
}

static void
test_normal_reference(void **state)
{
	enum { HOSTS = 8, PORTS = 4, ROUNDS = 300 };
	struct ctx *c = ctx_new(1, PORTS, 1);
	int table[HOSTS];
	unsigned seed = 7, r, i, p;
	uint32_t seq = 0;

	(void)state;
	add_rule(c, "actions=normal");
	for (i = 0; i < HOSTS; i++)
		table[i] = -1;
	for (r = 0; r < ROUNDS; r++) {
		unsigned port = (unsigned)rand_r(&seed) % PORTS;
		unsigned k = 1 + (unsigned)rand_r(&seed) % 32;
		unsigned exp[32] = {0}, got[32] = {0};
		struct rte_mbuf *in[32], *out[32];
		uint32_t first = seq;

		for (i = 0; i < k; i++, seq++) {
			/* hosts h and h + 4 live on port h % 4 */
			unsigned src =
				port + PORTS * ((unsigned)rand_r(&seed) % 2);
			int dst = rand_r(&seed) % 9 == 0
					  ? -1
					  : rand_r(&seed) % HOSTS;
			uint8_t sm[6], dm[6];

			host_mac(src, sm);
			if (dst < 0)
				memcpy(dm, bcast, 6);
			else
				host_mac((unsigned)dst, dm);
			in[i] = mk_pkt(dm, sm, -1, 1, seq, PKT_LEN);
			exp[i] = ref_normal(table, src, dst, port, PORTS);
		}
		inject(c, port, in, k);
		poll_all(c);
		for (p = 0; p < PORTS; p++) {
			unsigned n = collect(c, p, out, 32);

			for (i = 0; i < n; i++) {
				uint32_t s = pkt_seq(out[i]) - first;

				assert_true(s < k);
				assert_false(got[s] & (1u << p)); /* once */
				got[s] |= 1u << p;
			}
			free_all(out, n);
		}
		for (i = 0; i < k; i++)
			if (got[i] != exp[i])
				fail_msg("round %u pkt %u: got ports 0x%x, "
					 "expected 0x%x",
					r, i, got[i], exp[i]);
	}
	for (i = 0; i < HOSTS; i++) {
		uint8_t m[6];

		host_mac(i, m);
		assert_int_equal(vsw_switch_mac_lookup(c->sw, m),
			table[i] < 0 ? -ENOENT : table[i]);
	}
	check_identity(c);
	ctx_free(c);
}

/* Send one packet src -> dst on port; return the bitmap of ports reached. */
static unsigned
send_one(struct ctx *c, unsigned port, unsigned src, unsigned dst)
{
	struct rte_mbuf *m, *out[4];
	uint8_t sm[6], dm[6];
	unsigned p, got = 0, n;

	host_mac(src, sm);
	host_mac(dst, dm);
	m = mk_pkt(dm, sm, -1, 1, 0, PKT_LEN);
	inject(c, port, &m, 1);
	poll_all(c);
	for (p = 0; p < c->n_ports; p++) {
		if (c->rp[p] == NULL)
			continue;
		n = collect(c, p, out, 4);
		if (n > 0)
			got |= 1u << p;
		free_all(out, n);
	}
	return got;
}

static void
test_normal_aging_moves(void **state)
{
	struct ctx *c = ctx_new(1, 4, 1);
	uint8_t ma[6], mb[6];

	(void)state;
	add_rule(c, "actions=normal");
	host_mac(0, ma);
	host_mac(1, mb);
	assert_int_equal(vsw_switch_mac_age(c->sw, 0), 0);
	assert_int_equal(send_one(c, 0, 0, 1), 0xe); /* B unknown: flood */
	assert_int_equal(send_one(c, 1, 1, 0), 0x1); /* A learned on 0 */
	assert_int_equal(send_one(c, 0, 0, 1), 0x2); /* B learned on 1 */
	assert_int_equal(send_one(c, 0, 2, 0), 0x0); /* A is on 0: drop */
	assert_int_equal(vsw_switch_mac_count(c->sw), 3);
	assert_int_equal(send_one(c, 3, 1, 0), 0x1); /* B moves to 3 */
	assert_int_equal(vsw_switch_mac_lookup(c->sw, mb), 3);
	assert_int_equal(send_one(c, 0, 0, 1), 0x8);
	/* Aging: B refreshed at 5, A and host 2 only seen at 0. */
	assert_int_equal(vsw_switch_mac_age(c->sw, 5), 0);
	assert_int_equal(send_one(c, 3, 1, 7), 0x7);
	assert_int_equal(vsw_switch_mac_age(c->sw, 14), 2);
	assert_int_equal(vsw_switch_mac_lookup(c->sw, ma), -ENOENT);
	assert_int_equal(vsw_switch_mac_lookup(c->sw, mb), 3);
	assert_int_equal(send_one(c, 3, 1, 0), 0x7); /* A forgotten: flood */
	assert_int_equal(vsw_switch_mac_age(c->sw, 100), 1);
	assert_int_equal(vsw_switch_mac_count(c->sw), 0);
	/* Deleting a port forgets what was learned on it. */
	assert_int_equal(send_one(c, 2, 0, 1), 0xb);
	assert_int_equal(vsw_switch_mac_lookup(c->sw, ma), 2);
	assert_int_equal(vsw_switch_port_del(c->sw, 2), 0);
	c->port_sums_off = true;
	assert_int_equal(vsw_switch_mac_lookup(c->sw, ma), -ENOENT);
	vsw_port_ring_destroy(c->rp[2]);
	c->rp[2] = NULL;
	assert_int_equal(send_one(c, 1, 1, 0), 0x9); /* flood skips port 2 */
	vsw_switch_mac_flush(c->sw);
	assert_int_equal(vsw_switch_mac_count(c->sw), 0);
	check_identity(c);
	ctx_free(c);
}

static void
expect_bytes(struct ctx *c, unsigned port, const uint8_t *want, unsigned len)
{
	struct rte_mbuf *out[4];
	unsigned n = collect(c, port, out, 4);

	assert_int_equal(n, 1);
	assert_int_equal(rte_pktmbuf_pkt_len(out[0]), len);
	assert_memory_equal(rte_pktmbuf_mtod(out[0], void *), want, len);
	free_all(out, n);
}

static void
test_vlan(void **state)
{
	struct ctx *c = ctx_new(1, 4, 1);
	uint8_t a[6], b[6], plain[PKT_LEN], tagged[PKT_LEN + 4],
		qinq[PKT_LEN + 8];
	struct rte_mbuf *m;
	struct vsw_pmd_stats s;

	(void)state;
	host_mac(0, a);
	host_mac(1, b);
	add_rule(c, "in_port=0,actions=push_vlan:100,output:1");
	add_rule(c, "in_port=1,dl_vlan=100,actions=strip_vlan,output:2");
	add_rule(c, "in_port=1,dl_vlan=0xffff,actions=strip_vlan,output:3");
	add_rule(c, "in_port=2,actions=push_vlan:7,output:3");
	/* Expected bytes built independently of the switch. */
	m = mk_pkt(b, a, -1, 1, 1, PKT_LEN);
	memcpy(plain, rte_pktmbuf_mtod(m, void *), PKT_LEN);
	memcpy(tagged, plain, 12);
	memcpy(tagged + 12, "\x81\x00\x00\x64", 4);
	memcpy(tagged + 16, plain + 12, PKT_LEN - 12);
	inject(c, 0, &m, 1);
	poll_all(c);
	expect_bytes(c, 1, tagged, PKT_LEN + 4);
	/* Strip the tag again: the original bytes. */
	m = mk_pkt(b, a, 100, 1, 1, PKT_LEN + 4);
	memcpy(rte_pktmbuf_mtod(m, void *), tagged, PKT_LEN + 4);
	inject(c, 1, &m, 1);
	poll_all(c);
	expect_bytes(c, 2, plain, PKT_LEN);
	/* strip_vlan on an untagged packet leaves it as it is. */
	m = mk_pkt(b, a, -1, 1, 1, PKT_LEN);
	inject(c, 1, &m, 1);
	poll_all(c);
	expect_bytes(c, 3, plain, PKT_LEN);
	/* push on a tagged packet adds an outer tag (QinQ). */
	m = mk_pkt(b, a, 100, 1, 1, PKT_LEN + 4);
	memcpy(rte_pktmbuf_mtod(m, void *), tagged, PKT_LEN + 4);
	memcpy(qinq, plain, 12);
	memcpy(qinq + 12, "\x81\x00\x00\x07\x81\x00\x00\x64", 8);
	memcpy(qinq + 20, plain + 12, PKT_LEN - 12);
	inject(c, 2, &m, 1);
	poll_all(c);
	expect_bytes(c, 3, qinq, PKT_LEN + 8);
	/* No headroom: counted and freed, not corrupted. */
	m = rte_pktmbuf_alloc(pool);
	m->data_off = 0;
	memcpy(rte_pktmbuf_append(m, PKT_LEN), plain, PKT_LEN);
	inject(c, 0, &m, 1);
	poll_all(c);
	assert_int_equal(collect(c, 1, &m, 1), 0);
	/* Someone else holds a reference: never edited in place. */
	m = mk_pkt(b, a, -1, 1, 1, PKT_LEN);
	rte_mbuf_refcnt_update(m, 1);
	inject(c, 0, &m, 1);
	poll_all(c);
	assert_int_equal(rte_mbuf_refcnt_read(m), 1);
	assert_memory_equal(rte_pktmbuf_mtod(m, void *), plain, PKT_LEN);
	rte_pktmbuf_free(m);
	pmd_stats(c, 0, &s);
	assert_int_equal(s.c[VSW_PMD_DROP_VLAN], 2);
	check_identity(c);
	ctx_free(c);
}

static void
test_output_batching(void **state)
{
	struct ctx *c = ctx_new(1, 4, 1);
	struct rte_mbuf *in[32], *out[128];
	struct vsw_pmd_stats s;
	struct vsw_port_stats ps;
	uint8_t a[6], b[6];
	unsigned i, p, n;

	(void)state;
	host_mac(0, a);
	host_mac(1, b);
	add_rule(c, "ip,actions=output:3");
	for (p = 0; p < 3; p++) {
		for (i = 0; i < 32; i++)
			in[i] = mk_pkt(b, a, -1, 1, p * 32 + i, PKT_LEN);
		inject(c, p, in, 32);
	}
	/* One iteration: each rx queue's burst leaves as its own batch
	 * before the next queue is polled (not one 64 + 32 at the end). */
	assert_int_equal(vsw_pmd_poll_once(vsw_switch_pmd(c->sw, 0)), 96);
	rcu_quiescent_state();
	pmd_stats(c, 0, &s);
	assert_int_equal(s.c[VSW_PMD_BATCHES], 3);
	assert_int_equal(s.c[VSW_PMD_BATCH_PKTS], 96);
	assert_true(s.avg_packets_per_batch == 32.0);
	assert_int_equal(s.c[VSW_PMD_ITER_BUSY], 1);
	n = collect(c, 3, out, 128);
	assert_int_equal(n, 96);
	for (i = 0; i < n; i++) /* order kept across batches */
		assert_int_equal(pkt_seq(out[i]), i);
	free_all(out, n);
	/* A port that delivers 10 per call: it frees the other 22 itself
	 * (tx_burst owns all it is given) and the switch counts them. */
	vsw_port_ring_set_tx_limit(c->rp[3], 10);
	for (i = 0; i < 32; i++)
		in[i] = mk_pkt(b, a, -1, 1, i, PKT_LEN);
	inject(c, 0, in, 32);
	poll_all(c);
	n = collect(c, 3, out, 128);
	assert_int_equal(n, 10);
	free_all(out, n);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
	pmd_stats(c, 0, &s);
	assert_int_equal(s.c[VSW_PMD_DROP_TX_UNDELIVERED], 22);
	assert_int_equal(vsw_switch_port_stats(c->sw, 3, &ps), 0);
	assert_int_equal(ps.tx, 106);
	assert_int_equal(ps.tx_drops, 22);
	assert_true(s.c[VSW_PMD_ITER_IDLE] >= 1);
	check_identity(c);
	/* Clearing stores a baseline. */
	vsw_switch_pmd_stats_clear(c->sw, -1);
	pmd_stats(c, 0, &s);
	assert_int_equal(s.c[VSW_PMD_RX], 0);
	assert_int_equal(s.c[VSW_PMD_BATCHES], 0);
	ctx_free(c);
}

static int
group_setup(void **state)
{
	(void)state;
	return harness_setup("vsw_test_switch");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_output),
		cmocka_unit_test(test_multi_output),
		cmocka_unit_test(test_flood),
		cmocka_unit_test(test_mac_table_full),
		cmocka_unit_test(test_drops),
		cmocka_unit_test(test_normal_reference),
		cmocka_unit_test(test_normal_aging_moves),
		cmocka_unit_test(test_vlan),
		cmocka_unit_test(test_output_batching),
	};

	return cmocka_run_group_tests(tests, group_setup, harness_teardown);
}

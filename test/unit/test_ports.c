/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The port adapters (switch/ports/) and the switch core's side of the port
 * contract (vsw/port.h): ring, ethdev (a real net_ring vdev) and vhost-user
 * (a vport with no guest) adapters own what they are sent and report what
 * they delivered; the switch picks the tx queue per (PMD, rx queue), locks
 * only a shared queue, and counts what a port did not deliver.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <urcu-qsbr.h>

#include <vsw/port.h>
#include <vsw/switch.h>
#include <vsw/virtq.h>
#include <vsw/vport.h>

#include "switch_harness.h"

static void
mk_burst(struct rte_mbuf **m, unsigned n, uint32_t seq0)
{
	uint8_t a[6], b[6];

	host_mac(0, a);
	host_mac(1, b);
	for (unsigned i = 0; i < n; i++)
		m[i] = mk_pkt(b, a, -1, 1, seq0 + i, PKT_LEN);
}

/* ---- ring adapter ---- */

static void
test_ring_adapter(void **state)
{
	struct vsw_port_ring *p = vsw_port_ring_create("r", 16);
	struct rte_mbuf *m[32], *out[32];
	unsigned n;

	(void)state;
	assert_non_null(p);
	mk_burst(m, 8, 0);
	assert_int_equal(vsw_port_ring_inject(p, m, 8), 8);
	assert_int_equal(vsw_port_ring_ops.rx_burst(p, 0, out, 32), 8);
	for (unsigned i = 0; i < 8; i++)
		assert_ptr_equal(out[i], m[i]);
	/* The limit: 3 delivered, 5 freed by the adapter. */
	vsw_port_ring_set_tx_limit(p, 3);
	assert_int_equal(vsw_port_ring_ops.tx_burst(p, 0, out, 8), 3);
	assert_int_equal(rte_mempool_in_use_count(pool), 3);
	n = vsw_port_ring_collect(p, out, 32);
	assert_int_equal(n, 3);
	assert_int_equal(pkt_seq(out[2]), 2);
	free_all(out, n);
	/* A full ring (15 usable entries): delivered what fit, freed the rest. */
	vsw_port_ring_set_tx_limit(p, UINT16_MAX);
	mk_burst(m, 32, 100);
	assert_int_equal(vsw_port_ring_ops.tx_burst(p, 0, m, 32), 15);
	assert_int_equal(rte_mempool_in_use_count(pool), 15);
	n = vsw_port_ring_collect(p, out, 32);
	assert_int_equal(n, 15);
	assert_int_equal(pkt_seq(out[14]), 114);
	free_all(out, n);
	vsw_port_ring_destroy(p);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

/* ---- ethdev adapter on net_ring ---- */

static void
test_eth_adapter(void **state)
{
	struct rte_ring *rx = rte_ring_create("eth_rx", 64, SOCKET_ID_ANY,
		RING_F_SP_ENQ | RING_F_SC_DEQ);
	struct rte_ring *tx = rte_ring_create("eth_tx", 16, SOCKET_ID_ANY,
		RING_F_SP_ENQ | RING_F_SC_DEQ);
	struct rte_eth_conf conf;
	struct vsw_port_eth e;
	struct rte_mbuf *m[32], *out[32];
	int id;
	unsigned n;

	(void)state;
	assert_non_null(rx);
	assert_non_null(tx);
	id = rte_eth_from_rings("net_ring_vsw", &rx, 1, &tx, 1, SOCKET_ID_ANY);
	assert_true(id >= 0);
	memset(&conf, 0, sizeof(conf));
	assert_int_equal(rte_eth_dev_configure((uint16_t)id, 1, 1, &conf), 0);
	assert_int_equal(rte_eth_rx_queue_setup((uint16_t)id, 0, 64,
				 SOCKET_ID_ANY, NULL, pool), 0);
	assert_int_equal(rte_eth_tx_queue_setup((uint16_t)id, 0, 64,
				 SOCKET_ID_ANY, NULL), 0);
	assert_int_equal(rte_eth_dev_start((uint16_t)id), 0);
	vsw_port_eth_init(&e, (uint16_t)id);

	mk_burst(m, 5, 0);
	assert_int_equal(rte_ring_enqueue_burst(rx, (void **)m, 5, NULL), 5);
	assert_int_equal(vsw_port_eth_ops.rx_burst(&e, 0, out, 32), 5);
	assert_ptr_equal(out[4], m[4]);
	free_all(out, 5);
	/* The tx ring holds 15: delivered 15, the other 17 freed here. */
	mk_burst(m, 32, 10);
	assert_int_equal(vsw_port_eth_ops.tx_burst(&e, 0, m, 32), 15);
	assert_int_equal(rte_mempool_in_use_count(pool), 15);
	n = rte_ring_dequeue_burst(tx, (void **)out, 32, NULL);
	assert_int_equal(n, 15);
	assert_int_equal(pkt_seq(out[0]), 10);
	free_all(out, n);
	assert_int_equal(rte_eth_dev_stop((uint16_t)id), 0);
	assert_int_equal(rte_eth_dev_close((uint16_t)id), 0);
	rte_ring_free(rx);
	rte_ring_free(tx);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

/* ---- vhost-user adapter on a vport without a guest ---- */

static void
test_vhost_adapter_not_ready(void **state)
{
	struct vsw_vport_config cfg;
	struct vsw_vport *vp = NULL;
	struct vsw_port_vhost h;
	uint64_t s0[VSW_VIRTQ_STAT__MAX], s1[VSW_VIRTQ_STAT__MAX];
	struct rte_mbuf *m[32];
	char dir[] = "/tmp/vsw-test-ports-XXXXXX", path[108];

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/v.sock", dir);
	vsw_vport_config_init(&cfg);
	cfg.name = "v";
	cfg.path = path;
	cfg.queue_pairs = 2;
	assert_int_equal(vsw_vport_create(&cfg, &vp), 0);
	vsw_port_vhost_init(&h, vp, pool);
	assert_int_equal(vsw_port_vhost_ops.rx_burst(&h, 1, m, 32), 0);
	/* No guest: nothing delivered, all freed, counted on queue pair 1. */
	mk_burst(m, 7, 0);
	assert_int_equal(vsw_port_vhost_ops.tx_burst(&h, 1, m, 7), 0);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
	assert_int_equal(vsw_vport_queue_stats_get(vp, 0, s0), 0);
	assert_int_equal(vsw_vport_queue_stats_get(vp, 1, s1), 0);
	assert_int_equal(s0[VSW_VIRTQ_STAT_ENQ_DROP_NOT_READY], 0);
	assert_int_equal(s1[VSW_VIRTQ_STAT_ENQ_DROP_NOT_READY], 7);
	assert_int_equal(vsw_vport_queue_stats_get(vp, 2, s1), -ENOENT);
	vsw_vport_destroy(vp);
	rmdir(dir);
}

/* ---- the switch's per-(port, tx queue) batches ---- */

#define MAX_Q 64
#define MAX_SENDS 256

/* A port that records every tx_burst: queue, count, first packet seq. */
struct rec_port {
	unsigned limit; /* deliver at most this many per call */
	unsigned n_sends;
	struct {
		uint16_t q;
		uint16_t n;
		uint32_t seq0;
	} send[MAX_SENDS];
	unsigned per_q[MAX_Q];
	int in_flight[MAX_Q]; /* concurrent callers on one queue */
	int overlap;
	unsigned delay_us;
};

static uint16_t
rec_rx(void *port, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	(void)port, (void)q, (void)pkts, (void)n;
	return 0;
}

static uint16_t
rec_tx(void *port, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	struct rec_port *r = port;
	uint16_t k = n < r->limit ? n : (uint16_t)r->limit;

	if (__atomic_add_fetch(&r->in_flight[q], 1, __ATOMIC_ACQ_REL) > 1)
		__atomic_store_n(&r->overlap, 1, __ATOMIC_RELAXED);
	if (r->delay_us)
		usleep(r->delay_us);
	if (r->n_sends < MAX_SENDS) {
		r->send[r->n_sends].q = q;
		r->send[r->n_sends].n = n;
		r->send[r->n_sends].seq0 = pkt_seq(pkts[0]);
	}
	r->n_sends++;
	r->per_q[q] += k;
	__atomic_sub_fetch(&r->in_flight[q], 1, __ATOMIC_ACQ_REL);
	rte_pktmbuf_free_bulk(pkts, n); /* "delivered" ones are gone too */
	return k;
}

static const struct vsw_port_ops rec_ops = {rec_rx, rec_tx};

/* A switch with n_pmds PMDs, ring port 0 (in) and rec port 1 (n_txq). */
static struct ctx *
rec_switch(unsigned n_pmds, uint16_t n_txq, struct rec_port *r)
{
	struct ctx *c = ctx_new(n_pmds, 1, 0);

	memset(r, 0, sizeof(*r));
	r->limit = UINT16_MAX;
	assert_int_equal(vsw_switch_port_add(c->sw, "rec", &rec_ops, r, 1,
				 n_txq), 1);
	add_rule(c, "in_port=0,actions=output:1");
	c->n_ports = 2; /* rp[1] stays NULL: check_identity sums port 1 too */
	return c;
}

/* One burst of n from rx queue q_in on PMD pmd; returns the tx queue. */
static uint16_t
send_one(struct ctx *c, struct rec_port *r, unsigned pmd, uint16_t q_in,
	unsigned n)
{
	struct vsw_pmd *p = vsw_switch_pmd(c->sw, pmd);
	struct rte_mbuf *m[32];
	unsigned before = r->n_sends;

	mk_burst(m, n, q_in * 1000u);
	vsw_pmd_process_rxq(p, 0, q_in, m, n);
	vsw_pmd_flush(p);
	assert_int_equal(r->n_sends, before + 1);
	assert_int_equal(r->send[before].n, n);
	assert_int_equal(r->send[before].seq0, q_in * 1000u);
	return r->send[before].q;
}

static uint64_t
pmd_ctr(struct ctx *c, unsigned pmd, enum vsw_pmd_counter k)
{
	struct vsw_pmd_stats s;

	pmd_stats(c, pmd, &s);
	return s.c[k];
}

/* Owned queues: PMD i sends on i + (q_in % owned) * n_pmds, unlocked. */
static void
check_owned(unsigned n_pmds, uint16_t n_txq)
{
	struct rec_port r;
	struct ctx *c = rec_switch(n_pmds, n_txq, &r);

	for (unsigned i = 0; i < n_pmds; i++) {
		unsigned owned = (n_txq - i + n_pmds - 1) / n_pmds;

		if (owned > VSW_SWITCH_TXQ_SPREAD)
			owned = VSW_SWITCH_TXQ_SPREAD;
		for (uint16_t q_in = 0; q_in < 20; q_in++)
			assert_int_equal(send_one(c, &r, i, q_in, 4),
				i + (q_in % owned) * n_pmds);
		assert_int_equal(pmd_ctr(c, i, VSW_PMD_TXQ_LOCKED), 0);
	}
	check_identity(c);
	ctx_free(c);
}

static void
test_txq_owned(void **state)
{
	(void)state;
	check_owned(1, 1);
	check_owned(1, 2); /* vswd-mq: a packet leaves on its input queue */
	check_owned(4, 8);
	check_owned(3, 8); /* PMDs 0 and 1 own 3 queues, PMD 2 owns 2 */
	check_owned(2, 2);
	check_owned(1, 40); /* at most VSW_SWITCH_TXQ_SPREAD spread over */
}

/* Fewer tx queues than PMDs: PMD i sends on i % n_txq, locked. */
static void
test_txq_shared(void **state)
{
	struct rec_port r;
	struct ctx *c = rec_switch(4, 3, &r);

	(void)state;
	for (unsigned i = 0; i < 4; i++) {
		for (uint16_t q_in = 0; q_in < 3; q_in++)
			assert_int_equal(send_one(c, &r, i, q_in, 2), i % 3);
		assert_int_equal(pmd_ctr(c, i, VSW_PMD_TXQ_LOCKED), 3);
	}
	/* The queue count changes: the new plan applies, shared no more. */
	assert_int_equal(vsw_switch_port_set_queues(c->sw, 1, 1, 4), 0);
	for (unsigned i = 0; i < 4; i++) {
		assert_int_equal(send_one(c, &r, i, 1, 2), i);
		assert_int_equal(pmd_ctr(c, i, VSW_PMD_TXQ_LOCKED), 3);
	}
	check_identity(c);
	ctx_free(c);
}

/* Two rx queues in one iteration: two batches, each on its own queue. */
static void
test_txq_batches_per_queue(void **state)
{
	struct rec_port r;
	struct ctx *c = rec_switch(1, 2, &r);
	struct vsw_pmd *p = vsw_switch_pmd(c->sw, 0);
	struct rte_mbuf *m[32];

	(void)state;
	for (uint16_t k = 0; k < 4; k++) {
		uint16_t q_in = k & 1;

		mk_burst(m, 16, q_in * 1000u + (k >> 1) * 16u);
		vsw_pmd_process_rxq(p, 0, q_in, m, 16);
	}
	vsw_pmd_flush(p);
	assert_int_equal(r.n_sends, 2);
	assert_int_equal(r.send[0].q, 0);
	assert_int_equal(r.send[0].n, 32);
	assert_int_equal(r.send[0].seq0, 0);
	assert_int_equal(r.send[1].q, 1);
	assert_int_equal(r.send[1].n, 32);
	assert_int_equal(r.send[1].seq0, 1000);
	assert_int_equal(pmd_ctr(c, 0, VSW_PMD_BATCHES), 2);
	check_identity(c);
	ctx_free(c);
}

/* What tx_burst did not deliver is counted, once, as undelivered. */
static void
test_undelivered_counted(void **state)
{
	struct rec_port r;
	struct ctx *c = rec_switch(2, 2, &r);
	struct vsw_port_stats ps;
	struct vsw_pmd_stats s;
	uint64_t drops = 0;

	(void)state;
	r.limit = 5;
	send_one(c, &r, 0, 0, 32);
	send_one(c, &r, 1, 0, 32);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
	for (unsigned i = 0; i < 2; i++) {
		pmd_stats(c, i, &s);
		assert_int_equal(s.c[VSW_PMD_TX], 5);
		assert_int_equal(s.c[VSW_PMD_DROP_TX_UNDELIVERED], 27);
		for (int d = VSW_PMD_DROP_FIRST; d <= VSW_PMD_DROP_LAST; d++)
			drops += s.c[d];
	}
	assert_int_equal(drops, 54); /* in = out + drops: 64 = 10 + 54 */
	assert_int_equal(vsw_switch_port_stats(c->sw, 1, &ps), 0);
	assert_int_equal(ps.tx, 10);
	assert_int_equal(ps.tx_drops, 54);
	assert_int_equal(r.per_q[0] + r.per_q[1], 10);
	check_identity(c);
	ctx_free(c);
}

/*
 * More (port, queue) pairs in one iteration than a PMD has batches (17 ports
 * x 16 queues > 256): the pool is sent early, nothing is lost or reordered.
 */
static void
test_batch_pool_exhausted(void **state)
{
	enum { N_REC = 17, N_Q = 16 };
	struct rec_port *r = calloc(N_REC, sizeof(*r));
	struct ctx *c = ctx_new(1, 1, 0);
	struct vsw_pmd *p = vsw_switch_pmd(c->sw, 0);
	struct rte_mbuf *m[2];
	unsigned sends = 0;

	(void)state;
	assert_non_null(r);
	for (unsigned k = 0; k < N_REC; k++) {
		char name[16];

		snprintf(name, sizeof(name), "rec%u", k);
		r[k].limit = UINT16_MAX;
		assert_int_equal(vsw_switch_port_add(c->sw, name, &rec_ops,
					 &r[k], 1, N_Q), (int)k + 1);
	}
	add_rule(c, "actions=flood");
	for (uint16_t q = 0; q < N_Q; q++) {
		mk_burst(m, 2, q * 1000u);
		vsw_pmd_process_rxq(p, 0, q, m, 2);
	}
	vsw_pmd_flush(p);
	for (unsigned k = 0; k < N_REC; k++) {
		assert_int_equal(r[k].n_sends, N_Q);
		for (uint16_t q = 0; q < N_Q; q++) {
			assert_int_equal(r[k].per_q[q], 2);
			sends++;
		}
	}
	assert_int_equal(pmd_ctr(c, 0, VSW_PMD_BATCHES), sends);
	assert_int_equal(pmd_ctr(c, 0, VSW_PMD_TX), 2 * sends);
	assert_int_equal(pmd_ctr(c, 0, VSW_PMD_RX) +
			pmd_ctr(c, 0, VSW_PMD_CLONES), 2 * sends);
	for (unsigned k = 0; k < N_REC; k++) {
		struct vsw_port_stats ps;

		assert_int_equal(vsw_switch_port_stats(c->sw, (uint16_t)(k + 1),
					 &ps), 0);
		assert_int_equal(ps.tx, 2 * N_Q);
	}
	ctx_free(c);
	free(r);
}

/* ---- a shared queue under two PMD threads ---- */

struct pmd_thread {
	struct ctx *c;
	unsigned pmd;
	unsigned bursts;
};

static void *
pmd_thread_main(void *arg)
{
	struct pmd_thread *t = arg;
	struct vsw_pmd *p = vsw_switch_pmd(t->c->sw, t->pmd);
	struct rte_mbuf *m[8];

	rcu_register_thread();
	for (unsigned k = 0; k < t->bursts; k++) {
		mk_burst(m, 8, k);
		vsw_pmd_process_rxq(p, 0, 0, m, 8);
		vsw_pmd_flush(p);
		rcu_quiescent_state();
	}
	rcu_unregister_thread();
	return NULL;
}

static void
test_txq_shared_threads(void **state)
{
	struct rec_port r;
	struct ctx *c = rec_switch(2, 1, &r);
	struct pmd_thread t[2] = {{c, 0, 200}, {c, 1, 200}};
	pthread_t th[2];
	uint64_t locked = 0, contended = 0;

	(void)state;
	r.delay_us = 20;
	rcu_thread_offline(); /* the main thread waits, not a reader */
	for (int i = 0; i < 2; i++)
		assert_int_equal(
			pthread_create(&th[i], NULL, pmd_thread_main, &t[i]), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	rcu_thread_online();
	assert_int_equal(r.overlap, 0);
	assert_int_equal(r.per_q[0], 2 * 200 * 8);
	for (unsigned i = 0; i < 2; i++) {
		locked += pmd_ctr(c, i, VSW_PMD_TXQ_LOCKED);
		contended += pmd_ctr(c, i, VSW_PMD_TXQ_CONTENDED);
	}
	assert_int_equal(locked, 400);
	assert_true(contended <= locked);
	print_message("# shared queue: %" PRIu64 " of %" PRIu64
		      " locked sends contended\n", contended, locked);
	check_identity(c);
	ctx_free(c);
}

static int
group_setup(void **state)
{
	(void)state;
	return harness_setup("vsw_test_ports");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring_adapter),
		cmocka_unit_test(test_eth_adapter),
		cmocka_unit_test(test_vhost_adapter_not_ready),
		cmocka_unit_test(test_txq_owned),
		cmocka_unit_test(test_txq_shared),
		cmocka_unit_test(test_txq_batches_per_queue),
		cmocka_unit_test(test_undelivered_counted),
		cmocka_unit_test(test_batch_pool_exhausted),
		cmocka_unit_test(test_txq_shared_threads),
	};

	return cmocka_run_group_tests(tests, group_setup, harness_teardown);
}

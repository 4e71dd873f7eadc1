/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * In-memory ring port: a vsw_port_ops backed by two rte_rings, for tests,
 * benchmarks and internal ports. inject() feeds what the switch receives;
 * collect() takes what it sent. One queue each way (queue ids ignored).
 *
 * rx: one injecting thread, one polling PMD. tx: any number of PMDs (multi-
 * producer ring), one collecting thread. tx owns what it is given: what the
 * ring (or the test limit) refuses is freed here, not delivered.
 */
#include <stdio.h>
#include <stdlib.h>

#include <rte_mbuf.h>
#include <rte_ring.h>

#include <vsw/port.h>

struct vsw_port_ring {
	struct rte_ring *rx;
	struct rte_ring *tx;
	unsigned tx_limit;
};

static uint16_t
ring_rx_burst(void *port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n)
{
	struct vsw_port_ring *p = port;

	(void)queue;
	return (uint16_t)rte_ring_dequeue_burst(p->rx, (void **)pkts, n, NULL);
}

static uint16_t
ring_tx_burst(void *port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n)
{
	struct vsw_port_ring *p = port;
	unsigned want = n < p->tx_limit ? n : p->tx_limit, sent;

	(void)queue;
	sent = rte_ring_enqueue_burst(p->tx, (void **)pkts, want, NULL);
	if (sent < n)
		rte_pktmbuf_free_bulk(&pkts[sent], n - sent);
	return (uint16_t)sent;
}

const struct vsw_port_ops vsw_port_ring_ops = {
	.rx_burst = ring_rx_burst,
	.tx_burst = ring_tx_burst,
};

static void
drain(struct rte_ring *r)
{
	struct rte_mbuf *m[32];
	unsigned n;

	while ((n = rte_ring_dequeue_burst(r, (void **)m, 32, NULL)) > 0)
		rte_pktmbuf_free_bulk(m, n);
}

struct vsw_port_ring *
vsw_port_ring_create(const char *name, unsigned size)
{
	struct vsw_port_ring *p = calloc(1, sizeof(*p));
	char rname[RTE_RING_NAMESIZE];

	if (p == NULL)
		return NULL;
	p->tx_limit = UINT16_MAX;
	snprintf(rname, sizeof(rname), "vrp_rx_%p", (void *)p);
	p->rx = rte_ring_create(
		rname, size, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	snprintf(rname, sizeof(rname), "vrp_tx_%p", (void *)p);
	p->tx = rte_ring_create(rname, size, SOCKET_ID_ANY, RING_F_SC_DEQ);
	(void)name;
	if (p->rx == NULL || p->tx == NULL) {
		vsw_port_ring_destroy(p);
		return NULL;
	}
	return p;
}

void
vsw_port_ring_destroy(struct vsw_port_ring *p)
{
	if (p == NULL)
		return;
	if (p->rx != NULL) {
		drain(p->rx);
		rte_ring_free(p->rx);
	}
	if (p->tx != NULL) {
		drain(p->tx);
		rte_ring_free(p->tx);
	}
	free(p);
}

unsigned
vsw_port_ring_inject(
	struct vsw_port_ring *p, struct rte_mbuf **pkts, unsigned n)
{
	return rte_ring_enqueue_burst(p->rx, (void **)pkts, n, NULL);
}

unsigned
vsw_port_ring_collect(
	struct vsw_port_ring *p, struct rte_mbuf **pkts, unsigned n)
{
	return rte_ring_dequeue_burst(p->tx, (void **)pkts, n, NULL);
}

void
vsw_port_ring_set_tx_limit(struct vsw_port_ring *p, unsigned limit)
{
	p->tx_limit = limit;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vhost-user port adapter: vsw_port_ops on a vsw_vport. Runs on PMDs; the
 * switch core chooses the queue pair and never calls tx_burst concurrently
 * on one (vsw/port.h), so no lock here.
 *
 * tx copies into the guest, so it frees every mbuf it is given and returns
 * how many the guest received; the vport counts the rest by reason
 * (ENQ_DROP_* per queue pair), the switch counts them as undelivered.
 */
#include <rte_mbuf.h>

#include <vsw/port.h>
#include <vsw/vport.h>

static uint16_t
vhost_rx_burst(void *port, uint16_t queue, struct rte_mbuf **pkts,
	uint16_t n)
{
	const struct vsw_port_vhost *p = port;

	return vsw_vport_dequeue_burst(p->vport, queue, p->pool, pkts, n);
}

static uint16_t
vhost_tx_burst(void *port, uint16_t queue, struct rte_mbuf **pkts,
	uint16_t n)
{
	const struct vsw_port_vhost *p = port;
	/* A switch batch may hold two bursts: the virtq takes them in one
	 * call (vsw_virtq_enqueue_burst), one used-ring publish. */
	uint16_t sent = vsw_vport_enqueue_burst(p->vport, queue, pkts, n);

	rte_pktmbuf_free_bulk(pkts, n);
	return sent;
}

const struct vsw_port_ops vsw_port_vhost_ops = {
	.rx_burst = vhost_rx_burst,
	.tx_burst = vhost_tx_burst,
};

void
vsw_port_vhost_init(struct vsw_port_vhost *p, struct vsw_vport *vport,
	struct rte_mempool *pool)
{
	p->vport = vport;
	p->pool = pool;
}

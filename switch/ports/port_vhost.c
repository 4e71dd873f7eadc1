/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vhost-user port adapter: vsw_port_ops on a vsw_vport. Runs on PMDs; the
 * switch core chooses the queue pair and never calls tx_burst concurrently
 * on one (vsw/port.h), so no lock here.
 *
 * tx copies into the guest, so it frees every mbuf it is given and returns
 * how many the guest received; the vport counts the rest by reason
 * (ENQ_DROP_* per queue pair), the switch counts them as undelivered.
 * Retries on a full guest ring live here, not in the switch core: only the
 * vport knows which packets found no buffer (the burst's tail) and which
 * were dropped for good (too large, bad descriptor), and other ports'
 * "full" (an ethdev tx ring) needs no retry of this kind.
 */
#include <errno.h>
#include <string.h>

#include <rte_mbuf.h>

#include <vsw/port.h>
#include <vsw/vport.h>

_Static_assert(VSW_PORT_VHOST_QUEUES == VSW_VPORT_QUEUE_PAIRS_MAX,
	"one retry counter per queue pair");

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
	struct vsw_port_vhost *p = port;
	unsigned max = __atomic_load_n(&p->tx_retries_max, __ATOMIC_RELAXED);
	uint16_t sent;

	/* A switch batch may hold two bursts: the virtq takes them in one
	 * call (vsw_virtq_enqueue_burst), one used-ring publish. */
	if (max == 0 || unlikely(queue >= VSW_PORT_VHOST_QUEUES))
		sent = vsw_vport_enqueue_burst(p->vport, queue, pkts, n);
	else
		sent = vsw_vport_enqueue_burst_retry(
			p->vport, queue, pkts, n, max, &p->tx_retries[queue]);

	rte_pktmbuf_free_bulk(pkts, n);
	return sent;
}

/* The guest's receive offloads, from what it negotiated last (a guest
 * renegotiating in between is caught by the virtq: ENQ_DROP_OFFLOAD). */
static uint32_t
vhost_tx_offloads(void *port)
{
	const struct vsw_port_vhost *p = port;
	uint64_t f = vsw_vport_features(p->vport);

	if (!((f >> VSW_VIRTIO_NET_F_GUEST_CSUM) & 1))
		return 0; /* GUEST_TSO* needs GUEST_CSUM (virtio 1.1 5.1.3.1) */
	return (((f >> VSW_VIRTIO_NET_F_GUEST_CSUM) & 1) ? VSW_PORT_OL_CSUM
							  : 0) |
		(((f >> VSW_VIRTIO_NET_F_GUEST_TSO4) & 1) ? VSW_PORT_OL_TSO4
							   : 0) |
		(((f >> VSW_VIRTIO_NET_F_GUEST_TSO6) & 1) ? VSW_PORT_OL_TSO6
							   : 0);
}

const struct vsw_port_ops vsw_port_vhost_ops = {
	.rx_burst = vhost_rx_burst,
	.tx_burst = vhost_tx_burst,
	.tx_offloads = vhost_tx_offloads,
};

void
vsw_port_vhost_init(struct vsw_port_vhost *p, struct vsw_vport *vport,
	struct rte_mempool *pool)
{
	p->vport = vport;
	p->pool = pool;
	p->tx_retries_max = VSW_PORT_VHOST_TX_RETRIES_DEFAULT;
	memset(p->tx_retries, 0, sizeof(p->tx_retries));
}

int
vsw_port_vhost_set_tx_retries(struct vsw_port_vhost *p, unsigned max)
{
	if (max > VSW_PORT_VHOST_TX_RETRIES_MAX)
		return -EINVAL;
	__atomic_store_n(&p->tx_retries_max, max, __ATOMIC_RELAXED);
	return 0;
}

unsigned
vsw_port_vhost_tx_retries_max(const struct vsw_port_vhost *p)
{
	return __atomic_load_n(&p->tx_retries_max, __ATOMIC_RELAXED);
}

uint64_t
vsw_port_vhost_tx_retries(const struct vsw_port_vhost *p, uint16_t qp)
{
	if (qp >= VSW_PORT_VHOST_QUEUES)
		return 0;
	return __atomic_load_n(&p->tx_retries[qp], __ATOMIC_RELAXED);
}

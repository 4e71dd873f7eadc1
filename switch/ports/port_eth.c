/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DPDK ethdev port adapter: vsw_port_ops on a configured, started ethdev
 * (the daemon probes and configures it). Runs on PMDs; the switch core
 * never calls tx_burst concurrently on one queue (vsw/port.h), so no lock.
 *
 * tx owns what it is given: what rte_eth_tx_burst took is delivered, the
 * rest (tx ring full) is freed here.
 */
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <vsw/port.h>

static uint16_t
eth_rx_burst(void *port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n)
{
	const struct vsw_port_eth *p = port;

	return rte_eth_rx_burst(p->port_id, queue, pkts, n);
}

static uint16_t
eth_tx_burst(void *port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n)
{
	const struct vsw_port_eth *p = port;
	uint16_t sent = rte_eth_tx_burst(p->port_id, queue, pkts, n);

	if (unlikely(sent < n))
		rte_pktmbuf_free_bulk(&pkts[sent], n - sent);
	return sent;
}

/* What the device was configured to do; the rest the switch does. The
 * mbuf metadata is already in DPDK's TX convention (l2/l3/l4_len,
 * tso_segsz, pseudo-header sum in the checksum field). */
static uint32_t
eth_tx_offloads(void *port)
{
	const struct vsw_port_eth *p = port;

	return p->tx_ol;
}

const struct vsw_port_ops vsw_port_eth_ops = {
	.rx_burst = eth_rx_burst,
	.tx_burst = eth_tx_burst,
	.tx_offloads = eth_tx_offloads,
};

void
vsw_port_eth_init(struct vsw_port_eth *p, uint16_t port_id)
{
	p->port_id = port_id;
	p->tx_ol = 0;
}

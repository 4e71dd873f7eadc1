/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vsw port contract: what the switch core calls on a port from its PMD
 * threads, and the port adapters that implement it (switch/ports/).
 */
#ifndef VSW_PORT_H
#define VSW_PORT_H

#include <stdint.h>

struct rte_mbuf;
struct rte_mempool;
struct vsw_vport;

#define VSW_PORT_NAME_MAX 32

/*
 * A port as the switch sees it. port is the pointer given to
 * vsw_switch_port_add().
 *
 * rx_burst(port, queue, pkts, n): stores up to n mbufs (the caller's now)
 * and returns how many.
 *
 * tx_burst(port, queue, pkts, n): takes ownership of all n packets and
 * returns how many it delivered (0..n); it frees itself whatever it did not
 * deliver. The switch counts n - delivered as the PMD drop reason
 * drop_tx_undelivered (and in the port's tx_drops); the port may refine the
 * reasons in its own counters (a vhost-user port: ENQ_DROP_* per queue
 * pair, see port-show).
 *
 * Queues are chosen by the switch core, never by a tag in the mbuf: a PMD
 * owns the tx queues q with q % n_pmds == its index when the port has at
 * least as many tx queues as PMDs, and sends a burst received on rx queue
 * q_in to the (q_in % owned)-th of them (so a multiqueue guest's packet
 * leaves on its input queue number). A port with fewer tx queues than PMDs
 * has them shared: PMD i sends on queue i % n_txq, and the switch core holds
 * a spinlock per (port, tx queue) around tx_burst there, and only there
 * (counted: txq_lock_* in pmd-stats-show). So tx_burst is never called
 * concurrently on one queue, and adapters take no lock. rx queues are polled
 * by one PMD at a time.
 */
/*
 * tx_offloads(port) (may be NULL: none): the offloads tx_burst accepts
 * right now, VSW_PORT_OL_* bits. A packet carrying TSO or a partial
 * checksum (RTE_MBUF_F_TX_TCP_SEG, RTE_MBUF_F_TX_{TCP,UDP}_CKSUM, as a
 * vhost-user guest sent it) that its destination cannot take is segmented
 * and/or its checksum completed by the switch before tx_burst
 * (switch/core/offload.c). Called once per output batch, on the PMD.
 */
#define VSW_PORT_OL_CSUM 1u /* partial TCP/UDP checksums (IPv4 and IPv6) */
#define VSW_PORT_OL_TSO4 2u /* TCP segmentation, IPv4 */
#define VSW_PORT_OL_TSO6 4u /* TCP segmentation, IPv6 */
#define VSW_PORT_OL_ALL (VSW_PORT_OL_CSUM | VSW_PORT_OL_TSO4 | VSW_PORT_OL_TSO6)
struct vsw_port_ops {
	uint16_t (*rx_burst)(void *port, uint16_t queue,
		struct rte_mbuf **pkts, uint16_t n);
	uint16_t (*tx_burst)(void *port, uint16_t queue,
		struct rte_mbuf **pkts, uint16_t n);
	uint32_t (*tx_offloads)(void *port);
};

/* ---- in-memory ring port (tests, benchmarks, internal ports) ---- */

struct vsw_port_ring;
/* size: ring entries per direction (power of two). NULL on failure. */
struct vsw_port_ring *vsw_port_ring_create(const char *name, unsigned size);
/* Frees packets still queued. */
void vsw_port_ring_destroy(struct vsw_port_ring *p);
extern const struct vsw_port_ops vsw_port_ring_ops;
/* Queue packets for the switch to receive: returns how many fit. */
unsigned vsw_port_ring_inject(struct vsw_port_ring *p,
	struct rte_mbuf **pkts, unsigned n);
/* Take packets the switch sent to this port: returns how many. */
unsigned vsw_port_ring_collect(struct vsw_port_ring *p,
	struct rte_mbuf **pkts, unsigned n);
/* Make tx_burst deliver at most this many per call (tests of tx drops);
 * it frees the rest, as the contract says. */
void vsw_port_ring_set_tx_limit(struct vsw_port_ring *p, unsigned limit);

/* ---- vhost-user port (a vsw_vport; see vsw/vport.h) ---- */

/*
 * The port object is the caller's (e.g. embedded in a daemon's port); the
 * switch gets &vhost as its port pointer. rx dequeues from the guest's TX
 * vring of queue pair `queue` into mbufs from pool; tx copies into the
 * guest's RX vring, frees all n and returns how many the guest got (the
 * vport counts the others by reason: ENQ_DROP_*).
 */
/*
 * tx retries (OVS tx-retries-max): when the guest's RX ring is full, the
 * packets left over are offered again up to tx_retries_max times within
 * the burst (vsw_vport_enqueue_burst_retry: short busy pause, never blocks)
 * before they count as dropped; each retry is counted per queue pair.
 */
#define VSW_PORT_VHOST_TX_RETRIES_DEFAULT 8
#define VSW_PORT_VHOST_TX_RETRIES_MAX 64
#define VSW_PORT_VHOST_QUEUES 16 /* = VSW_VPORT_QUEUE_PAIRS_MAX */
struct vsw_port_vhost {
	struct vsw_vport *vport;
	struct rte_mempool *pool;
	uint32_t tx_retries_max; /* control thread writes (atomic) */
	/* Per queue pair; one writer: the PMD sending on it (vsw/port.h). */
	uint64_t tx_retries[VSW_PORT_VHOST_QUEUES];
};
/* tx_retries_max starts at VSW_PORT_VHOST_TX_RETRIES_DEFAULT. */
void vsw_port_vhost_init(struct vsw_port_vhost *p, struct vsw_vport *vport,
	struct rte_mempool *pool);
/* 0..VSW_PORT_VHOST_TX_RETRIES_MAX (0 = drop at once): 0 or -EINVAL.
 * Any thread; PMDs pick it up at their next burst. */
int vsw_port_vhost_set_tx_retries(struct vsw_port_vhost *p, unsigned max);
unsigned vsw_port_vhost_tx_retries_max(const struct vsw_port_vhost *p);
/* Retries made on queue pair qp so far (0 for qp out of range). */
uint64_t vsw_port_vhost_tx_retries(const struct vsw_port_vhost *p, uint16_t qp);
extern const struct vsw_port_ops vsw_port_vhost_ops;

/* ---- DPDK ethdev port (configured and started by the caller) ---- */

/* tx: what rte_eth_tx_burst took is delivered, the rest is freed.
 * tx_ol: the VSW_PORT_OL_* the caller enabled on the device's tx queues
 * (RTE_ETH_TX_OFFLOAD_TCP_TSO / _TCP_CKSUM + _UDP_CKSUM); 0 after init. */
struct vsw_port_eth {
	uint16_t port_id;
	uint32_t tx_ol;
};
void vsw_port_eth_init(struct vsw_port_eth *p, uint16_t port_id);
extern const struct vsw_port_ops vsw_port_eth_ops;

#endif /* VSW_PORT_H */

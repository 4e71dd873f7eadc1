/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vsw port contract: what the switch core calls on a port from its PMD
 * threads, and the port adapters that implement it (switch/ports/).
 */
#ifndef VSW_PORT_H
#define VSW_PORT_H

#include <stdint.h>

struct rte_mbuf;

#define VSW_PORT_NAME_MAX 32

/*
 * A port as the switch sees it. port is the pointer given to
 * vsw_switch_port_add(). rx_burst returns how many mbufs it stored in pkts.
 * tx_burst returns how many of pkts it took (it owns those now); the switch
 * frees the rest and counts them as tx drops. A PMD uses tx queue
 * (pmd index % n_txq): with fewer tx queues than PMDs, tx_burst must be
 * safe for concurrent callers on one queue. rx queues are polled by one PMD
 * at a time.
 */
struct vsw_port_ops {
	uint16_t (*rx_burst)(void *port, uint16_t queue,
		struct rte_mbuf **pkts, uint16_t n);
	uint16_t (*tx_burst)(void *port, uint16_t queue,
		struct rte_mbuf **pkts, uint16_t n);
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
/* Make tx_burst accept at most this many per call (tests of tx drops). */
void vsw_port_ring_set_tx_limit(struct vsw_port_ring *p, unsigned limit);

#endif /* VSW_PORT_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vsw vhost-user ports: one unix socket each, the vhost-user protocol done
 * by librte_vhost (registered as an external backend), the packets moved by
 * vsw's own virtqueue data path (vsw/virtq.h).
 *
 * Threads:
 * - control thread: vsw_vport_create/destroy/stats_get. Must not be an
 *   online urcu-qsbr reader (the calls may wait for a grace period).
 * - librte_vhost's threads run the device callbacks (vport_dev.c); they
 *   publish and unpublish per-queue state with urcu-qsbr and wait for a
 *   grace period before anything a poller could still touch goes away.
 * - pollers (PMD threads): vsw_vport_enqueue_burst/dequeue_burst. A poller
 *   must be registered with urcu-qsbr (rcu_register_thread()), must call
 *   rcu_quiescent_state() regularly between bursts (once per poll-loop
 *   iteration), and must go offline (rcu_thread_offline()) or unregister
 *   before it blocks. One poller per queue pair and direction at a time.
 *
 * Queue numbering: queue pair qp = the guest's RX vring 2*qp (we enqueue
 * into it) and its TX vring 2*qp+1 (we dequeue from it).
 */
#ifndef VSW_VPORT_H
#define VSW_VPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <vsw/virtq.h>

struct rte_mbuf;
struct rte_mempool;
struct vsw_vport;

#define VSW_VPORT_QUEUE_PAIRS_MAX 16u
#define VSW_VPORT_SOCKET_MODE_DEFAULT 0660u
/* Largest vring a guest may set up (SET_VRING_NUM above it is refused):
 * QEMU's own maximum; up to VSW_VIRTQ_SIZE_MAX as a port option. */
#define VSW_VPORT_RING_SIZE_DEFAULT 1024u

struct vsw_vport_config {
	const char *name;     /* for logs and stats; NULL: the path */
	const char *path;     /* unix socket path */
	bool client;	      /* connect to path (and reconnect) instead of
			       * creating and listening on it */
	uint16_t queue_pairs; /* offered to the guest: 1..QUEUE_PAIRS_MAX */
	uint32_t socket_mode; /* server mode; 0 = SOCKET_MODE_DEFAULT */
	uid_t owner;	      /* server mode; (uid_t)-1 = leave as created */
	gid_t group;	      /* server mode; (gid_t)-1 = leave as created */
	uint32_t max_pkt_len; /* passed to vsw_virtq_config; 0 = default */
	uint32_t max_ring_size; /* power of two <= VSW_VIRTQ_SIZE_MAX; 0 =
				 * VSW_VPORT_RING_SIZE_DEFAULT */
};

/* Defaults for a config: server mode, 1 queue pair, 0660, owner kept. */
void vsw_vport_config_init(struct vsw_vport_config *cfg);

/*
 * Create a port: register the socket with librte_vhost, offer the feature
 * set (VERSION_1, MRG_RXBUF, INDIRECT_DESC, EVENT_IDX, MQ, PROTOCOL_FEATURES;
 * protocol features MQ and REPLY_ACK; nothing else) and start it (server:
 * listen, with the configured mode/owner; client: connect, retrying every
 * second until the peer is there and again after each disconnect).
 * The EAL must be initialised. Returns 0 and *out, or a negative errno
 * (-EINVAL bad config, -EEXIST path already used by a port, -EADDRINUSE a
 * live socket exists at path, -EIO librte_vhost refused, -ENOMEM).
 * A stale socket file (nobody listening) at path is replaced in server mode.
 */
int vsw_vport_create(
	const struct vsw_vport_config *cfg, struct vsw_vport **out);

/*
 * Destroy a port: disconnects the guest (destroy_device runs, waits for a
 * grace period), unregisters the socket and removes its file in server
 * mode. Pollers must not use the port any more (they may still be running
 * other ports). NULL is ignored.
 */
void vsw_vport_destroy(struct vsw_vport *port);

/* The name given at creation (never NULL). */
const char *vsw_vport_name(const struct vsw_vport *port);

/* Queue pairs offered (the config value). */
uint16_t vsw_vport_queue_pairs(const struct vsw_vport *port);

/*
 * Host -> guest on queue pair qp: vsw_virtq_enqueue_burst() on the guest's
 * RX vring if the guest has it enabled and set up, else every packet is
 * counted as ENQ_DROP_NOT_READY. n <= VSW_VIRTQ_BURST_MAX. Returns how many
 * were delivered; the mbufs stay the caller's (the caller frees all n).
 * qp >= queue pairs: nothing delivered, counted as not ready on queue 0.
 */
uint16_t vsw_vport_enqueue_burst(struct vsw_vport *port, uint16_t qp,
	struct rte_mbuf **pkts, uint16_t n);

/*
 * The same, retrying when the guest's RX ring is full (OVS tx-retries-max):
 * the packets that found no buffer are offered again after a ~1 us busy
 * pause, at most max_retries times, and not after a retry that delivered
 * nothing. Only the last attempt's leftovers count as ENQ_DROP_RING_FULL;
 * *retries (the caller's, one writer) counts the retries. Never blocks.
 */
uint16_t vsw_vport_enqueue_burst_retry(struct vsw_vport *port, uint16_t qp,
	struct rte_mbuf **pkts, uint16_t n, unsigned max_retries,
	uint64_t *retries);

/*
 * Guest -> host on queue pair qp: vsw_virtq_dequeue_burst() on the guest's
 * TX vring, or 0 when it is not enabled/set up. Mbufs come from mp and
 * belong to the caller.
 */
uint16_t vsw_vport_dequeue_burst(struct vsw_vport *port, uint16_t qp,
	struct rte_mempool *mp, struct rte_mbuf **pkts, uint16_t n);

/* What the control thread can ask about a port. */
struct vsw_vport_info {
	bool connected;	       /* a vhost-user connection exists */
	bool running;	       /* librte_vhost called new_device */
	uint16_t queues_live;  /* vrings being polled right now */
	uint64_t features;     /* negotiated (valid when running) */
	uint64_t connects;     /* new_device calls so far */
	uint64_t queue_errors; /* vrings that failed set-up (see log) */
	uint64_t disconnects;  /* vhost-user connections closed, for any
				* reason (librte_vhost drops the connection
				* on a message it or vsw refuses) */
	uint64_t msg_rejected; /* messages vsw's own checks refused (see
				* log); the connection is closed after,
				* unless the front-end asked for a reply
				* (NEED_REPLY: nacked, no effect) */
	uint64_t fd_rejected;  /* of those, refused for an fd (wrong type
				* or count), plus vrings whose call fd
				* stopped being a non-blocking eventfd */
	uint64_t call_failed;  /* guest interrupts not sent: the call
				* eventfd was full (EAGAIN), or failed */
	uint64_t mem_faults;   /* SIGBUS in its guest memory (a file
				* shrunk under its mapping): each one
				* disconnected the port */
	uint32_t mem_unsealed; /* regions of the current memory table
				* that can shrink (no F_SEAL_SHRINK, or
				* hugetlbfs): the SIGBUS guard covers them */
};

void vsw_vport_info_get(struct vsw_vport *port, struct vsw_vport_info *info);

/*
 * Counters of the whole port since creation, summed over its vrings and
 * over reconnects (indices as in enum vsw_virtq_stat). Packets refused
 * because a queue was not enabled are in ENQ_DROP_NOT_READY. Control
 * thread; the values of live queues are read while pollers write them
 * (each counter is a single aligned 64-bit word: no torn values).
 */
void vsw_vport_stats_get(
	struct vsw_vport *port, uint64_t stats[VSW_VIRTQ_STAT__MAX]);
/* The same for queue pair qp alone (its two vrings; a send to a queue pair
 * beyond the offered ones is counted on pair 0). 0 or -ENOENT. */
int vsw_vport_queue_stats_get(struct vsw_vport *port, uint16_t qp,
	uint64_t stats[VSW_VIRTQ_STAT__MAX]);

#endif /* VSW_VPORT_H */

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
#include <vsw/watchdog.h>

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
	bool no_offloads;     /* do not offer CSUM, GUEST_CSUM, HOST_TSO4/6,
			       * GUEST_TSO4/6 (they are offered by default) */
};

/* Defaults for a config: server mode, 1 queue pair, 0660, owner kept. */
void vsw_vport_config_init(struct vsw_vport_config *cfg);

/*
 * Create a port: register the socket with librte_vhost, offer the feature
 * set (VERSION_1, MRG_RXBUF, INDIRECT_DESC, EVENT_IDX, MQ, LOG_ALL,
 * GUEST_ANNOUNCE, MTU, PROTOCOL_FEATURES, and unless cfg.no_offloads CSUM,
 * GUEST_CSUM, HOST_TSO4/6, GUEST_TSO4/6; protocol features MQ, REPLY_ACK,
 * LOG_SHMFD, RARP and NET_MTU; nothing else) and start it (server:
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

/*
 * On a PMD thread, before it polls: the watchdog slot (vsw/watchdog.h)
 * its guest-interrupt writes publish in. A thread that never binds one is
 * not watched.
 */
void vsw_vport_pmd_bind(struct vsw_watchdog_slot *slot);

/* Queue pairs offered (the config value). */
uint16_t vsw_vport_queue_pairs(const struct vsw_vport *port);

/* The feature bits the guest negotiated last (0 before the first
 * connection). Any thread, pollers included: one relaxed load. A
 * renegotiation may change them between this call and a burst; the virtq
 * guards that (ENQ_DROP_OFFLOAD). */
uint64_t vsw_vport_features(const struct vsw_vport *port);

/*
 * Host -> guest on queue pair qp: vsw_virtq_enqueue_burst() on the guest's
 * RX vring if the guest has it enabled and set up; a pair the guest
 * disabled sends on an enabled one instead (vsw_vport_qp_state: tx_to);
 * with none, every packet is counted as ENQ_DROP_NOT_READY on qp.
 * n <= VSW_VIRTQ_BURST_MAX. Returns how many were delivered; the mbufs
 * stay the caller's (the caller frees all n). qp >= queue pairs: nothing
 * delivered, counted as not ready on queue 0.
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
 * belong to the caller. After a SEND_RARP (live migration), the first
 * burst on a live TX vring starts with a RARP frame from the guest's MAC
 * (vport info rarp_sent).
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
				* eventfd was full (EAGAIN), or failed, or
				* was given up (call_blocked) */
	uint64_t call_blocked; /* vrings whose call eventfd write blocked
				* (the peer cleared O_NONBLOCK on the file it
				* shares and filled the counter) until the
				* PMD watchdog's signal: fd given up, port
				* disconnected */
	uint64_t mem_faults;   /* SIGBUS in its guest memory (a file
				* shrunk under its mapping): each one
				* disconnected the port */
	uint32_t mem_unsealed; /* regions of the current memory table
				* that can shrink (no F_SEAL_SHRINK, or
				* hugetlbfs): the SIGBUS guard covers them */
	/* live migration */
	bool dirty_log;		 /* LOG_ALL negotiated: migration running */
	uint16_t queues_logging; /* live vrings logging their writes */
	uint64_t rarp_received;	 /* SEND_RARP messages (guest moved here) */
	uint64_t rarp_sent;	 /* RARP frames injected into the switch (by
				  * the next RX burst: counted by the switch
				  * as received, not by the virtq) */
};

void vsw_vport_info_get(struct vsw_vport *port, struct vsw_vport_info *info);

/*
 * One queue pair as the guest and vsw use it. enabled: the guest enabled
 * both its vrings (SET_VRING_ENABLE; a Linux guest enables min(pairs,
 * vCPUs) until `ethtool -L`). live: vsw polls its TX vring and sends to
 * its RX vring. tx_to: where sends the switch picks for this pair go (the
 * pair itself when live; an enabled pair when the guest disabled this one,
 * as OVS-DPDK re-steers; VSW_VPORT_QP_NONE: none enabled, counted as
 * ENQ_DROP_NOT_READY). why: "" when live, else a few words ("not
 * connected", "not configured", "disabled by guest", "no ring addresses",
 * "no kick fd", "rings not ready", "device not started", "being
 * reconfigured", "set-up failed (see log)"); static storage.
 */
#define VSW_VPORT_QP_NONE UINT16_MAX
struct vsw_vport_qp_state {
	bool enabled;
	bool live;
	uint16_t tx_to;
	const char *why;
};
/* Control thread. 0, or -ENOENT for qp beyond the queue pairs offered. */
int vsw_vport_qp_state_get(
	struct vsw_vport *port, uint16_t qp, struct vsw_vport_qp_state *st);

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

/*
 * The guest's MTU (VIRTIO_NET_F_MTU: QEMU's host_mtu= puts it in the
 * guest's config space and sends NET_SET_MTU before it starts the device;
 * 68..65535, and no more than the limit). The limit holds from the next
 * NET_SET_MTU on (0: none); vswd sets underlay MTU - 50 on the ports of
 * an L2 domain. A guest whose MTU is already above a new limit keeps it
 * (its config space cannot change under it): logged and counted in
 * over_limit. Control thread.
 */
struct vsw_vport_mtu {
	uint16_t mtu;	     /* accepted last on this connection; 0: none */
	uint16_t limit;	     /* 0: none */
	uint64_t refused;    /* NET_SET_MTU refused (range or limit) */
	uint64_t over_limit; /* limits set below the guest's MTU */
};
void vsw_vport_mtu_limit_set(struct vsw_vport *port, uint16_t limit);
void vsw_vport_mtu_get(struct vsw_vport *port, struct vsw_vport_mtu *out);

#endif /* VSW_VPORT_H */

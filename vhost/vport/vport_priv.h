/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vhost-user port internals shared by vport.c (socket lifecycle, port
 * table, data-path entry points) and vport_dev.c (librte_vhost callbacks,
 * queue publication).
 */
#ifndef VSW_VPORT_PRIV_H
#define VSW_VPORT_PRIV_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <rte_common.h>
#include <rte_log.h>
#include <rte_spinlock.h>

#include <vsw/vport.h>
#include <vsw/virtq.h>

extern int vport_logtype;

#define VPORT_LOG(level, port, fmt, ...)                                   \
	rte_log(RTE_LOG_##level, vport_logtype, "vport %s: " fmt "\n", \
		(port)->name, ##__VA_ARGS__)

/*
 * One vring. `live` is what pollers see (RCU-published; NULL: not polled).
 * Everything else belongs to the vhost thread under port->lock, except
 * not_ready which only the queue's poller writes.
 */
struct vport_queue {
	struct vsw_virtq *live; /* RCU: == vq while published, else NULL */
	struct vsw_virtq *vq;	/* created on publish, destroyed on retire */
	struct vsw_vport *port;
	int callfd;	  /* guest interrupt eventfd, < 0: none */
	uint16_t index;	  /* vring index */
	char name[80];	  /* "<port> q<pair> rx|tx", for virtq logs */
	bool ready;	  /* librte_vhost: rings, kick and call set up
			   * (vring_state_changed; it sees every vring
			   * enabled, see guest_on) */
	bool guest_on;	  /* the guest's own SET_VRING_ENABLE state */
	bool addr_seen;	  /* SET_VRING_ADDR came (port-show) */
	bool kick_seen;	  /* SET_VRING_KICK with an fd came (port-show) */
	uint32_t num;	  /* size from the last SET_VRING_NUM (checks) */
	uint64_t retired[VSW_VIRTQ_STAT__MAX]; /* previous incarnations */
	/* poller-owned, on its own cache line */
	uint64_t not_ready __attribute__((aligned(64)));
	uint64_t call_failed; /* call eventfd write failed (EAGAIN: full) */
	bool call_broken;     /* given up: it blocked (atomic; reset on
			       * publish, while no poller sees the queue) */
	/* RX vrings: taken by senders when txmap says this queue takes
	 * packets re-steered from a disabled pair (vport_txq) */
	rte_spinlock_t tx_lock;
};

/*
 * Where a send to queue pair qp goes (port->txmap[qp], one 16-bit word a
 * sender reads once per burst): the pair in the low byte
 * (VPORT_TXQ_NONE: no pair enabled, the burst counts as not ready), and
 * VPORT_TXQ_LOCK when that pair also takes bursts meant for other pairs
 * (the guest disabled them): then senders take its tx_lock. An enabled
 * pair always maps to itself; a disabled one to the enabled pairs in
 * turn (OVS-DPDK's vhost txq remap). vport_dev.c rewrites it in three
 * grace-period-separated steps so no two senders ever share a pair
 * without both locking.
 */
#define VPORT_TXQ_NONE 0xffu
#define VPORT_TXQ_LOCK 0x100u

struct vsw_vport {
	char name[64];
	char path[PATH_MAX];
	struct vsw_vport_config cfg; /* name/path point into the arrays */
	pthread_mutex_t lock;	     /* device state, below */
	int vid;		     /* librte_vhost device, -1: none */
	int conn_fd;		     /* its socket (librte_vhost's), -1 */
	bool running;		     /* new_device accepted, not destroyed */
	bool parked;		     /* queues withdrawn around a message */
	uint64_t features;
	uint64_t guest_features; /* as the guest sent SET_FEATURES (vport_qp.c:
				  * librte_vhost records it without
				  * PROTOCOL_FEATURES) */
	uint64_t connects;
	uint64_t queue_errors;
	uint64_t disconnects;
	uint64_t msg_rejected;
	uint64_t fd_rejected;  /* of msg_rejected: for an fd they carried */
	bool mem_seen;	       /* librte_vhost took a memory table:
				* rte_vhost_get_mem_table() crashes
				* (NULL dev->mem) before that in 22.11 */
	uint64_t mem_faults;   /* SIGBUS in its mappings (vport_mem.c) */
	uintptr_t mem_fault_addr; /* the last one's address */
	uint64_t mem_faults_logged;
	uint64_t call_blocked;	      /* call fds given up (PMDs, atomic) */
	uint64_t call_blocked_logged; /* of those, logged */
	uint32_t mem_unsealed; /* regions the SIGBUS guard protects */
	uint64_t rarp_received; /* SEND_RARP messages */
	uint64_t rarp_sent;	/* RARP frames injected (poller, atomic) */
	uint32_t rarp_pending;	/* SEND_RARP seen, not injected (atomic) */
	uint8_t rarp_mac[6];
	uint16_t mtu;		 /* NET_SET_MTU accepted last; 0: none */
	uint16_t mtu_limit;	 /* vsw_vport_mtu_limit_set; 0: none */
	uint64_t mtu_refused;	 /* NET_SET_MTU refused (range, limit) */
	uint64_t mtu_over_limit; /* limits set below the guest's MTU */
	uint64_t log_next_tsc; /* rate limit for guest-error lines */
	uint32_t log_suppressed;
	struct vsw_mem mem;	    /* what published queues translate with */
	uint16_t nr_queues;	    /* 2 * queue pairs */
	struct vport_queue *queues; /* nr_queues, 64-byte aligned */
	/* per queue pair, senders read (vport_txq); vhost thread writes */
	uint16_t txmap[VSW_VPORT_QUEUE_PAIRS_MAX];
	struct vsw_vport *next;	    /* port table (vport.c) */
};

/* The port owning librte_vhost device vid (by socket path), or NULL. */
struct vsw_vport *vport_lookup_vid(int vid);

/* librte_vhost callbacks (vport_dev.c). */
extern const struct rte_vhost_device_ops vport_dev_ops;

/*
 * vsw's checks on vhost-user messages against the request table
 * (vport_msg.c, vport_msg_table.h): NULL or why not.
 */
const char *vport_msg_check(struct vsw_vport *port, void *msg);
struct vport_msg_ctx;
/* The pre-message hook's verdict (vport_msg.c): true: refused, counted,
 * logged, its fds closed. */
bool vport_msg_refuse(struct vsw_vport *port, struct vport_msg_ctx *ctx);
/* At device start: each mapped region's fd still fit (vport_fd.c). */
const char *vport_mem_files_check(struct vsw_vport *port);

/*
 * The fds a message carries (vport_fd.c), after vport_msg_check passed:
 * the right count, eventfds for kick/call/err (call made non-blocking),
 * memfd/tmpfs/hugetlbfs files holding each region. NULL or why not.
 */
const char *vport_fds_check(const struct vport_msg_ctx *ctx);
/* Close a refused message's fds (librte_vhost will not). */
void vport_fds_close(struct vport_msg_ctx *ctx);
/* An eventfd, now non-blocking, or why not. */
const char *vport_callfd_prepare(int fd);
/* A file that can back guest RAM and holds [offset, offset + size). */
const char *vport_region_fd_check(int fd, uint64_t offset, uint64_t size);
/* fd is the port's connection socket (async-signal-safe). */
bool vport_is_conn(int fd, const char *path, bool client);
/* Seal a memfd against shrinking if it still takes seals; whether it
 * cannot shrink now (vport_mem.c). */
bool vport_region_seal(int fd);
/*
 * Guest memory faults (vport_mem.c): register the port's mapped memory
 * table (after librte_vhost mapped it) so that a SIGBUS in it disconnects
 * the port instead of killing vswd; remove before it is unmapped. add:
 * one range (align: its page size), for tests too.
 */
int vport_guard_register(struct vsw_vport *port);
int vport_guard_add(struct vsw_vport *port, void *addr, uint64_t len,
	uint64_t align);
void vport_guard_remove(struct vsw_vport *port);
/* Log faults not logged yet (rate-limited), from a normal context. */
void vport_guard_report(struct vsw_vport *port);
/* chown/chmod the socket just created at path, never through a symlink
 * or onto another file (vport_fd.c). 0 or -errno. */
int vport_sock_perms(const char *path, uid_t owner, gid_t group, mode_t mode);
/* Make the port's connection socket(s) non-blocking; the fd or -ENOENT. */
int vport_conn_nonblock(const struct vsw_vport *port);
/* Replies the front-end has not read: far more than a well-behaved one
 * leaves (it reads each reply before its next request) and well below the
 * socket buffer, so no reply is ever dropped for a peer that reads. */
#define VPORT_CONN_BACKLOG_MAX (16u << 10)
bool vport_conn_backlogged(int fd);
/* A memory table fit to translate with: 1..8 regions, each non-empty,
 * no range wrapping, none overlapping another in guest-physical space. */
const char *vport_mem_check(const struct vsw_mem *mem);

/* What a front-end caused, rate-limited per port (include/vsw/log.h). */
void vport_log_guest(struct vsw_vport *port, const char *fmt, ...) __rte_cold
	__rte_format_printf(2, 3);
/* "SET_VRING_CALL refused: why" (the request's name from the table). */
void vport_log_refused(
	struct vsw_vport *port, uint32_t request, const char *why) __rte_cold;

/* Where a burst for queue pair qp (< queue pairs) goes: its RX vring's
 * queue, or NULL; *lock: take q->tx_lock around the enqueue. Pollers. */
static inline struct vport_queue *
vport_txq(struct vsw_vport *port, uint16_t qp, bool *lock)
{
	uint16_t m = __atomic_load_n(&port->txmap[qp], __ATOMIC_RELAXED);

	*lock = (m & VPORT_TXQ_LOCK) != 0;
	if (unlikely((m & 0xffu) == VPORT_TXQ_NONE))
		return NULL;
	return &port->queues[2 * (m & 0xffu)];
}

/* vport_dev.c: publish vring q (if not live) / withdraw it (grace period). */
int vport_queue_publish(struct vsw_vport *port, struct vport_queue *q);
void vport_queue_withdraw(struct vsw_vport *port, struct vport_queue *q);
/* vport_qp.c, port->lock held: publish or withdraw q by ready/guest_on
 * (and update txmap around it); rewrite txmap from which pairs serve; take a per-vring message's
 * meaning for the guest's queue use (SET_VRING_ENABLE: rewritten). */
struct vport_msg;
void vport_queue_update(struct vsw_vport *port, struct vport_queue *q);
void vport_txmap_update(struct vsw_vport *port);
void vport_qp_msg(struct vsw_vport *port, struct vport_msg *m);
/*
 * Live migration (vport_migrate.c). SET_LOG_BASE's payload (NULL or why
 * not) and its fd; the log for a queue's config when LOG_ALL is on (0, or
 * -ENODATA: no log); SEND_RARP noted; the RARP for the next RX burst, if
 * one is pending (0 or 1 mbufs stored in pkts[0]).
 */
struct rte_mempool;
struct rte_mbuf;
const char *vport_log_base_check(
	struct vsw_vport *port, const struct vport_msg *m);
const char *vport_log_fd_check(int fd, uint64_t offset, uint64_t size);
int vport_log_get(struct vsw_vport *port, struct vsw_virtq_config *cfg);
void vport_rarp_note(struct vsw_vport *port, const struct vport_msg *m);
uint16_t vport_rarp_inject(struct vsw_vport *port, struct rte_mempool *mp,
	struct rte_mbuf **pkts);

/* Free per-queue storage (control thread, port gone from librte_vhost). */
void vport_queues_free(struct vsw_vport *port);

#endif /* VSW_VPORT_PRIV_H */

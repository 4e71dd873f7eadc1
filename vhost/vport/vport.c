/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vhost-user ports: the port table, socket lifecycle (register with
 * librte_vhost as an external backend, feature set, server socket
 * permissions, client reconnect), the data-path entry points and counters.
 *
 * Threads: create/destroy/info/stats run on the control thread; the burst
 * functions on pollers (urcu-qsbr readers, see vsw/port.h); the device
 * callbacks live in vport_dev.c.
 *
 * Trust: the config comes from our own caller (checked here, once); the
 * socket peer only ever reaches us through librte_vhost and vport_dev.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_vhost.h>
#include <urcu-qsbr.h>

#include "vport_priv.h"

RTE_LOG_REGISTER(vport_logtype, vsw.vport, INFO);

/* What we offer: split and packed rings, in-order use (virtq_inorder.c),
 * mergeable RX, indirect, event idx, MQ; the MTU in the guest's config
 * space (QEMU clears F_MTU from its host_mtu= unless we offer it, then
 * tells us with NET_SET_MTU, checked in vport_msg.c); live
 * migration: dirty logging, the guest announcing itself (its driver needs
 * the control queue, which QEMU serves itself). */
#define VPORT_FEATURES                                                     \
	((1ULL << VIRTIO_F_VERSION_1) | (1ULL << VIRTIO_NET_F_MRG_RXBUF) | \
		(1ULL << VIRTIO_RING_F_INDIRECT_DESC) |                    \
		(1ULL << VIRTIO_RING_F_EVENT_IDX) |                        \
		(1ULL << VIRTIO_F_RING_PACKED) |                           \
		(1ULL << VIRTIO_F_IN_ORDER) |                              \
		(1ULL << VIRTIO_NET_F_MQ) |                                \
		(1ULL << VIRTIO_NET_F_MTU) |                               \
		(1ULL << VHOST_F_LOG_ALL) |                                \
		(1ULL << VIRTIO_NET_F_GUEST_ANNOUNCE) |                    \
		(1ULL << VHOST_USER_F_PROTOCOL_FEATURES))
/* Checksum and TCP segmentation offloads, both directions (virtio 1.1
 * 5.1.3); unless the port's config turns them off. Not offered: ECN (the
 * switch's software segmentation would have to carry CWR the same way),
 * UFO/USO (deprecated in Linux / needs virtio 1.2 HOST_USO; UDP GSO is
 * rare from guests and costs a second segmentation path), GUEST_ANNOUNCE
 * and CTRL_GUEST_OFFLOADS (no control queue). */
#define VPORT_OFFLOAD_FEATURES                                              \
	((1ULL << VIRTIO_NET_F_CSUM) | (1ULL << VIRTIO_NET_F_GUEST_CSUM) |  \
		(1ULL << VIRTIO_NET_F_HOST_TSO4) |                          \
		(1ULL << VIRTIO_NET_F_HOST_TSO6) |                          \
		(1ULL << VIRTIO_NET_F_GUEST_TSO4) |                         \
		(1ULL << VIRTIO_NET_F_GUEST_TSO6))
#define VPORT_PROTOCOL_FEATURES                      \
	((1ULL << VHOST_USER_PROTOCOL_F_MQ) |        \
		(1ULL << VHOST_USER_PROTOCOL_F_REPLY_ACK) | \
		(1ULL << VHOST_USER_PROTOCOL_F_LOG_SHMFD) | \
		(1ULL << VHOST_USER_PROTOCOL_F_RARP) |      \
		(1ULL << VHOST_USER_PROTOCOL_F_NET_MTU))

/* The virtq contract numbers bits like virtio; check we agree. */
_Static_assert(VSW_VIRTIO_NET_F_MRG_RXBUF == VIRTIO_NET_F_MRG_RXBUF, "bit");
_Static_assert(
	VSW_VIRTIO_RING_F_INDIRECT_DESC == VIRTIO_RING_F_INDIRECT_DESC, "bit");
_Static_assert(VSW_VIRTIO_RING_F_EVENT_IDX == VIRTIO_RING_F_EVENT_IDX, "bit");
_Static_assert(VSW_VIRTIO_F_VERSION_1 == VIRTIO_F_VERSION_1, "bit");
_Static_assert(VSW_VIRTIO_NET_F_CSUM == VIRTIO_NET_F_CSUM &&
		VSW_VIRTIO_NET_F_GUEST_CSUM == VIRTIO_NET_F_GUEST_CSUM &&
		VSW_VIRTIO_NET_F_HOST_TSO4 == VIRTIO_NET_F_HOST_TSO4 &&
		VSW_VIRTIO_NET_F_HOST_TSO6 == VIRTIO_NET_F_HOST_TSO6 &&
		VSW_VIRTIO_NET_F_GUEST_TSO4 == VIRTIO_NET_F_GUEST_TSO4 &&
		VSW_VIRTIO_NET_F_GUEST_TSO6 == VIRTIO_NET_F_GUEST_TSO6,
	"offload bits");
_Static_assert(VSW_VIRTIO_F_RING_PACKED == VIRTIO_F_RING_PACKED, "bit");
_Static_assert(VSW_VIRTIO_F_IN_ORDER == VIRTIO_F_IN_ORDER, "bit");
_Static_assert(VSW_VHOST_F_LOG_ALL == VHOST_F_LOG_ALL, "bit");

/* Port table: control thread and librte_vhost's threads. */
static pthread_mutex_t vport_table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vsw_vport *vport_table;

struct vsw_vport *
vport_lookup_vid(int vid)
{
	char path[PATH_MAX];
	struct vsw_vport *p;

	if (rte_vhost_get_ifname(vid, path, sizeof(path)) != 0)
		return NULL;
	pthread_mutex_lock(&vport_table_lock);
	for (p = vport_table; p != NULL; p = p->next)
		if (strcmp(p->path, path) == 0)
			break;
	pthread_mutex_unlock(&vport_table_lock);
	return p;
}

void
vsw_vport_config_init(struct vsw_vport_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->queue_pairs = 1;
	cfg->socket_mode = VSW_VPORT_SOCKET_MODE_DEFAULT;
	cfg->owner = (uid_t)-1;
	cfg->group = (gid_t)-1;
}

static int
config_check(const struct vsw_vport_config *cfg)
{
	struct sockaddr_un sun;

	if (cfg->path == NULL || cfg->path[0] == '\0' ||
		strlen(cfg->path) >= sizeof(sun.sun_path))
		return -EINVAL;
	if (cfg->queue_pairs == 0 ||
		cfg->queue_pairs > VSW_VPORT_QUEUE_PAIRS_MAX)
		return -EINVAL;
	if (cfg->socket_mode > 07777)
		return -EINVAL;
	if (cfg->max_ring_size > VSW_VIRTQ_SIZE_MAX ||
		(cfg->max_ring_size & (cfg->max_ring_size - 1)))
		return -EINVAL;
	if (cfg->name != NULL && strlen(cfg->name) >= 64)
		return -EINVAL;
	return 0;
}

/*
 * A socket file at path: live (someone accepts) -> -EADDRINUSE; stale ->
 * removed; anything else -> -EEXIST. No file -> 0.
 */
static int
stale_socket_remove(const char *path)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct stat st;
	int fd, rc;

	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* config_check bounded the length */
	memcpy(sun.sun_path, path, strlen(path) + 1);
	rc = connect(fd, (struct sockaddr *)&sun, sizeof(sun));
	close(fd);
	if (rc == 0)
		return -EADDRINUSE;
	if (errno != ECONNREFUSED)
		return -EADDRINUSE;
	return unlink(path) == 0 ? 0 : -errno;
}

static struct vsw_vport *
port_alloc(const struct vsw_vport_config *cfg)
{
	struct vsw_vport *port = calloc(1, sizeof(*port));
	uint16_t i;

	if (port == NULL)
		return NULL;
	snprintf(port->path, sizeof(port->path), "%s", cfg->path);
	snprintf(port->name, sizeof(port->name), "%s",
		cfg->name != NULL ? cfg->name : cfg->path);
	port->cfg = *cfg;
	port->cfg.path = port->path;
	port->cfg.name = port->name;
	if (port->cfg.socket_mode == 0)
		port->cfg.socket_mode = VSW_VPORT_SOCKET_MODE_DEFAULT;
	pthread_mutex_init(&port->lock, NULL);
	port->vid = -1;
	port->conn_fd = -1;
	port->nr_queues = 2 * cfg->queue_pairs;
	for (i = 0; i < VSW_VPORT_QUEUE_PAIRS_MAX; i++)
		port->txmap[i] = VPORT_TXQ_NONE;
	port->queues =
		aligned_alloc(64, port->nr_queues * sizeof(*port->queues));
	if (port->queues == NULL)
		goto fail;
	memset(port->queues, 0, port->nr_queues * sizeof(*port->queues));
	for (i = 0; i < port->nr_queues; i++) {
		struct vport_queue *q = &port->queues[i];

		q->port = port;
		q->index = i;
		q->callfd = -1;
		rte_spinlock_init(&q->tx_lock);
		snprintf(q->name, sizeof(q->name), "%s q%u %s", port->name,
			i / 2, i % 2 ? "tx" : "rx");
	}
	return port;
fail:
	vport_queues_free(port);
	free(port);
	return NULL;
}

/* Server mode: the socket gets our mode and owner before anyone else can
 * connect: created under a tight umask, then opened up (vport_fd.c). */
static int
server_start(struct vsw_vport *port)
{
	mode_t old = umask(0177);
	int rc = rte_vhost_driver_start(port->path);

	umask(old);
	if (rc != 0)
		return -EIO;
	/* never through a symlink swapped in since the bind */
	rc = vport_sock_perms(port->path, port->cfg.owner, port->cfg.group,
		port->cfg.socket_mode);
	if (rc != 0)
		VPORT_LOG(ERR, port, "socket owner/mode not set: %s",
			strerror(-rc));
	return rc;
}

static int
driver_setup(struct vsw_vport *port)
{
	uint64_t flags = port->cfg.client ? RTE_VHOST_USER_CLIENT : 0;
	uint64_t features = VPORT_FEATURES |
		(port->cfg.no_offloads ? 0 : VPORT_OFFLOAD_FEATURES);

	if (rte_vhost_driver_register(port->path, flags) != 0)
		return -EIO;
	/* Setting the features is what makes us an external backend. */
	if (rte_vhost_driver_set_features(port->path, features) != 0 ||
		rte_vhost_driver_set_protocol_features(
			port->path, VPORT_PROTOCOL_FEATURES) != 0 ||
		rte_vhost_driver_callback_register(
			port->path, &vport_dev_ops) != 0) {
		rte_vhost_driver_unregister(port->path);
		return -EIO;
	}
	return 0;
}

int
vsw_vport_create(const struct vsw_vport_config *cfg, struct vsw_vport **out)
{
	struct vsw_vport *port, *p;
	int rc;

	rc = config_check(cfg);
	if (rc != 0)
		return rc;
	port = port_alloc(cfg);
	if (port == NULL)
		return -ENOMEM;
	pthread_mutex_lock(&vport_table_lock);
	for (p = vport_table; p != NULL; p = p->next)
		if (strcmp(p->path, port->path) == 0)
			break;
	if (p == NULL) {
		port->next = vport_table;
		vport_table = port;
	}
	pthread_mutex_unlock(&vport_table_lock);
	if (p != NULL) {
		rc = -EEXIST;
		goto free_port;
	}
	if (!cfg->client) {
		rc = stale_socket_remove(port->path);
		if (rc != 0)
			goto unlink_port;
	}
	rc = driver_setup(port);
	if (rc != 0)
		goto unlink_port;
	rc = cfg->client ? (rte_vhost_driver_start(port->path) ? -EIO : 0)
			 : server_start(port);
	if (rc != 0) {
		rte_vhost_driver_unregister(port->path);
		if (!cfg->client)
			unlink(port->path);
		goto unlink_port;
	}
	VPORT_LOG(INFO, port, "%s %s, %u queue pair(s)",
		cfg->client ? "connecting to" : "listening on", port->path,
		cfg->queue_pairs);
	*out = port;
	return 0;
unlink_port:
	pthread_mutex_lock(&vport_table_lock);
	for (struct vsw_vport **pp = &vport_table; *pp; pp = &(*pp)->next) {
		if (*pp == port) {
			*pp = port->next;
			break;
		}
	}
	pthread_mutex_unlock(&vport_table_lock);
free_port:
	VPORT_LOG(ERR, port, "not created: %s", strerror(-rc));
	vport_queues_free(port);
	pthread_mutex_destroy(&port->lock);
	free(port);
	return rc;
}

void
vsw_vport_destroy(struct vsw_vport *port)
{
	struct vsw_vport **pp;

	if (port == NULL)
		return;
	/* No lock held: unregister runs destroy_device (which takes
	 * port->lock) and retries while a callback is in flight. */
	rte_vhost_driver_unregister(port->path);
	pthread_mutex_lock(&port->lock);
	{
		uint16_t i;

		/* destroy_device normally did this; be sure */
		for (i = 0; i < port->nr_queues; i++)
			rcu_assign_pointer(port->queues[i].live, NULL);
	}
	pthread_mutex_unlock(&port->lock);
	synchronize_rcu();
	pthread_mutex_lock(&vport_table_lock);
	for (pp = &vport_table; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == port) {
			*pp = port->next;
			break;
		}
	}
	pthread_mutex_unlock(&vport_table_lock);
	if (!port->cfg.client)
		unlink(port->path);
	VPORT_LOG(INFO, port, "destroyed");
	vport_queues_free(port);
	pthread_mutex_destroy(&port->lock);
	free(port);
}

const char *
vsw_vport_name(const struct vsw_vport *port)
{
	return port->name;
}

uint16_t
vsw_vport_queue_pairs(const struct vsw_vport *port)
{
	return port->cfg.queue_pairs;
}

uint64_t
vsw_vport_features(const struct vsw_vport *port)
{
	/* written by librte_vhost's thread at new_device: one aligned word */
	return __atomic_load_n(&port->features, __ATOMIC_RELAXED);
}

/*
 * The live RX virtq a burst for qp goes to (vport_txq: the pair itself, or
 * an enabled one when the guest disabled qp), with its tx_lock taken when
 * the pair is shared (*locked); NULL when there is none: the burst counts
 * as not ready on qp (each pair's counter has one writer: its sender).
 */
static inline struct vsw_virtq *
txq_get(struct vsw_vport *port, uint16_t qp, uint16_t n,
	struct vport_queue **locked)
{
	struct vport_queue *q;
	struct vsw_virtq *vq = NULL;
	bool lock;

	*locked = NULL;
	if (unlikely(qp >= port->cfg.queue_pairs)) {
		port->queues[0].not_ready += n;
		return NULL;
	}
	q = vport_txq(port, qp, &lock);
	if (likely(q != NULL))
		vq = rcu_dereference(q->live);
	if (unlikely(vq == NULL)) {
		port->queues[2 * qp].not_ready += n;
		return NULL;
	}
	if (unlikely(lock)) {
		rte_spinlock_lock(&q->tx_lock);
		*locked = q;
	}
	return vq;
}

uint16_t
vsw_vport_enqueue_burst(
	struct vsw_vport *port, uint16_t qp, struct rte_mbuf **pkts, uint16_t n)
{
	struct vport_queue *locked;
	struct vsw_virtq *vq = txq_get(port, qp, n, &locked);
	uint16_t sent;

	if (unlikely(vq == NULL))
		return 0;
	sent = vsw_virtq_enqueue_burst(vq, pkts, n);
	if (unlikely(locked != NULL))
		rte_spinlock_unlock(&locked->tx_lock);
	return sent;
}

uint16_t
vsw_vport_enqueue_burst_retry(struct vsw_vport *port, uint16_t qp,
	struct rte_mbuf **pkts, uint16_t n, unsigned max_retries,
	uint64_t *retries)
{
	const enum vsw_virtq_stat ring_full = VSW_VIRTQ_STAT_ENQ_DROP_RING_FULL;
	struct vport_queue *locked;
	struct vsw_virtq *vq = txq_get(port, qp, n, &locked);
	uint16_t sent = 0, off = 0, got;
	uint64_t full0, full;
	unsigned tries;

	if (unlikely(vq == NULL))
		return 0;
	for (tries = 0;; tries++) {
		full0 = vsw_virtq_stat(vq, ring_full);
		got = vsw_virtq_enqueue_burst(vq, pkts + off, n - off);
		full = vsw_virtq_stat(vq, ring_full) - full0;
		sent += got;
		/* Stop when all fit, when out of retries, or when a retry
		 * found the guest had drained nothing (waiting on burns the
		 * PMD for every other port). */
		if (full == 0 || tries == max_retries || (tries > 0 && !got))
			break;
		/* The ring-full packets are the burst's tail: take them back
		 * (uncounted) and offer them again at once, as OVS's
		 * tx-retries-max does (a 1 us busy wait here stalled every
		 * other port of the PMD); one pause hint, tens of cycles. */
		vsw_virtq_enqueue_retry(vq, (uint16_t)full);
		off = (uint16_t)(n - full);
		__atomic_store_n(retries, *retries + 1, __ATOMIC_RELAXED);
		rte_pause();
	}
	if (unlikely(locked != NULL))
		rte_spinlock_unlock(&locked->tx_lock);
	return sent;
}

uint16_t
vsw_vport_dequeue_burst(struct vsw_vport *port, uint16_t qp,
	struct rte_mempool *mp, struct rte_mbuf **pkts, uint16_t n)
{
	struct vsw_virtq *vq;

	if (unlikely(qp >= port->cfg.queue_pairs))
		return 0;
	vq = rcu_dereference(port->queues[2 * qp + 1].live);
	if (unlikely(vq == NULL))
		return 0;
	if (unlikely(__atomic_load_n(&port->rarp_pending, __ATOMIC_RELAXED)) &&
		n > 0) {
		uint16_t k = vport_rarp_inject(port, mp, pkts);

		return k + vsw_virtq_dequeue_burst(vq, mp, pkts + k, n - k);
	}
	return vsw_virtq_dequeue_burst(vq, mp, pkts, n);
}

void
vsw_vport_info_get(struct vsw_vport *port, struct vsw_vport_info *info)
{
	uint16_t i;

	memset(info, 0, sizeof(*info));
	pthread_mutex_lock(&port->lock);
	info->connected = port->vid >= 0;
	info->running = port->running;
	info->features = port->features;
	info->connects = port->connects;
	info->queue_errors = port->queue_errors;
	info->disconnects = port->disconnects;
	info->msg_rejected = port->msg_rejected;
	info->fd_rejected = port->fd_rejected;
	info->mem_faults = __atomic_load_n(&port->mem_faults, __ATOMIC_RELAXED);
	info->mem_unsealed = port->mem_unsealed;
	info->call_blocked =
		__atomic_load_n(&port->call_blocked, __ATOMIC_RELAXED);
	info->dirty_log = (port->features & (1ULL << VHOST_F_LOG_ALL)) != 0;
	info->rarp_received = port->rarp_received;
	info->rarp_sent = __atomic_load_n(&port->rarp_sent, __ATOMIC_RELAXED);
	for (i = 0; i < port->nr_queues; i++) {
		const struct vport_queue *q = &port->queues[i];

		info->queues_live += q->live != NULL;
		info->queues_logging +=
			q->vq != NULL && vsw_virtq_logging(q->vq);
		/* the poller's counter: one aligned word, not torn */
		info->call_failed +=
			*(const volatile uint64_t *)&q->call_failed;
	}
	pthread_mutex_unlock(&port->lock);
}

/* Adds one vring's counters (earlier incarnations, the live queue, drops
 * while not published) to stats; under port->lock, which keeps the vhost
 * thread from retiring or creating the queue meanwhile. */
static void
queue_stats_add(const struct vport_queue *q,
	uint64_t stats[VSW_VIRTQ_STAT__MAX])
{
	uint64_t live[VSW_VIRTQ_STAT__MAX] = {0};
	uint32_t s;

	if (q->vq != NULL)
		vsw_virtq_stats_read(q->vq, live);
	for (s = 0; s < VSW_VIRTQ_STAT__MAX; s++)
		stats[s] += q->retired[s] + live[s];
	stats[VSW_VIRTQ_STAT_ENQ_DROP_NOT_READY] +=
		*(const volatile uint64_t *)&q->not_ready;
}

void
vsw_vport_stats_get(struct vsw_vport *port, uint64_t stats[VSW_VIRTQ_STAT__MAX])
{
	uint16_t i;

	memset(stats, 0, sizeof(stats[0]) * VSW_VIRTQ_STAT__MAX);
	pthread_mutex_lock(&port->lock);
	for (i = 0; i < port->nr_queues; i++)
		queue_stats_add(&port->queues[i], stats);
	pthread_mutex_unlock(&port->lock);
}

int
vsw_vport_queue_stats_get(struct vsw_vport *port, uint16_t qp,
	uint64_t stats[VSW_VIRTQ_STAT__MAX])
{
	uint16_t i;

	memset(stats, 0, sizeof(stats[0]) * VSW_VIRTQ_STAT__MAX);
	if (qp >= port->cfg.queue_pairs)
		return -ENOENT;
	pthread_mutex_lock(&port->lock);
	for (i = 2 * qp; i < 2 * qp + 2 && i < port->nr_queues; i++)
		queue_stats_add(&port->queues[i], stats);
	pthread_mutex_unlock(&port->lock);
	return 0;
}

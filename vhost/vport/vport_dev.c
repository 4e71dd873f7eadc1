/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vhost-user device callbacks: what librte_vhost tells us about a
 * connection (device ready or gone, a vring enabled or disabled, a raw
 * protocol message before and after the library handles it) turned into
 * per-vring struct vsw_virtq that pollers pick up through urcu-qsbr.
 *
 * Threads: librte_vhost's event thread runs the callbacks (its reconnect
 * thread runs new_connection; the control thread runs destroy_device from
 * inside rte_vhost_driver_unregister). Each callback holds port->lock.
 * A queue is withdrawn by storing NULL and waiting for a grace period
 * (synchronize_rcu) before anything a poller could still touch changes:
 * vring pointers, guest memory mappings, the call eventfd.
 *
 * Trust: librte_vhost's own message validation is not enough (see
 * vport_msg.c): every message is checked there first and a refused one
 * closes the connection (counted in msg_rejected). We re-check the memory
 * table as mapped (vport_mem_check, as for the one sent) and that each ring
 * pointer lies in it; vsw_virtq_create checks the rest. One connection per
 * port: callbacks for any other vid are ignored. We never call a librte_vhost
 * function that takes a vring lock from a callback that the message
 * handler runs with all vring locks held (vring_state_changed, pre/post
 * message): rte_vhost_vring_call and rte_vhost_enable_guest_notification
 * would deadlock there.
 *
 * Guest interrupts: the virtq decides (EVENT_IDX / NO_INTERRUPT) and calls
 * vport_notify(), which writes the vring's call eventfd itself.
 * rte_vhost_vring_call() is wrong for an external backend in 22.11: it
 * re-decides from librte_vhost's own last_used_idx/signalled_used, which
 * only its built-in data path advances (with EVENT_IDX the guest would
 * stop being notified after the first call), and it takes the vring's
 * access lock on the data path.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_vhost.h>
#include <urcu-qsbr.h>

#include "vport_msg_table.h"
#include "vport_priv.h"

/* The calling PMD's watchdog slot (vsw_vport_pmd_bind), NULL: none. */
static __thread struct vsw_watchdog_slot *pmd_slot;

void
vsw_vport_pmd_bind(struct vsw_watchdog_slot *slot)
{
	pmd_slot = slot;
}

/*
 * The write blocked until the watchdog's signal: the peer cleared
 * O_NONBLOCK on the file it shares with us and filled the counter. No
 * more writes to it; the port is disconnected (shutdown of its socket, as
 * for a guest memory fault: librte_vhost then withdraws the queues), and
 * the control side logs it (callfd_report).
 */
static __rte_noinline __rte_cold void
callfd_blocked(struct vport_queue *q)
{
	struct vsw_vport *port = q->port;
	int fd;

	__atomic_store_n(&q->call_broken, true, __ATOMIC_RELAXED);
	__atomic_fetch_add(&port->call_blocked, 1, __ATOMIC_RELAXED);
	fd = __atomic_load_n(&port->conn_fd, __ATOMIC_RELAXED);
	if (fd >= 0 && vport_is_conn(fd, port->path, port->cfg.client))
		shutdown(fd, SHUT_RDWR);
}

static void
vport_notify(void *ctx)
{
	struct vport_queue *q = ctx;
	struct vsw_watchdog_slot *s = pmd_slot;
	const uint64_t one = 1;
	bool fired;
	ssize_t n;

	if (unlikely(__atomic_load_n(&q->call_broken, __ATOMIC_RELAXED))) {
		q->call_failed++;
		return;
	}
	/* a non-blocking eventfd (vport_callfd_prepare): EAGAIN means the
	 * counter is saturated, and the guest has a pending interrupt; an
	 * EINTR the watchdog did not cause is retried */
	do {
		vsw_watchdog_enter(s, q);
		n = write(q->callfd, &one, sizeof(one));
		fired = vsw_watchdog_leave(s);
	} while (unlikely(n < 0 && errno == EINTR && !fired));
	if (likely(n == sizeof(one)))
		return;
	q->call_failed++;
	if (fired && n < 0 && errno == EINTR)
		callfd_blocked(q);
}

/* Log call fds given up since the last report (rate-limited). */
static void
callfd_report(struct vsw_vport *port)
{
	uint64_t n = __atomic_load_n(&port->call_blocked, __ATOMIC_RELAXED);

	if (n == port->call_blocked_logged)
		return;
	vport_log_guest(port,
		"guest interrupt write blocked (call eventfd made blocking "
		"and full by the peer): %" PRIu64 " vring(s) given up, "
		"disconnected",
		n - port->call_blocked_logged);
	port->call_blocked_logged = n;
}

/* Load and check the guest memory table into port->mem. */
static int
mem_load(struct vsw_vport *port)
{
	struct rte_vhost_memory *m = NULL;
	struct vsw_mem mem = {.nregions = 0};
	const char *why = NULL;
	uint32_t i;

	port->mem.nregions = 0;
	if (rte_vhost_get_mem_table(port->vid, &m) != 0 || m == NULL)
		why = "not available";
	else if (m->nregions == 0 || m->nregions > VSW_MEM_REGIONS_MAX)
		why = "memory table: region count not 1..8";
	for (i = 0; why == NULL && i < m->nregions; i++) {
		const struct rte_vhost_mem_region *r = &m->regions[i];

		if (r->host_user_addr == 0)
			why = "memory table: region not mapped";
		mem.regions[i].guest_phys_addr = r->guest_phys_addr;
		mem.regions[i].size = r->size;
		mem.regions[i].host_user_addr = r->host_user_addr;
		mem.nregions = i + 1;
	}
	free(m);
	if (why == NULL)
		why = vport_mem_check(&mem);
	if (why == NULL)
		why = vport_mem_files_check(port);
	if (why == NULL && vport_guard_register(port) != 0)
		why = "memory table: SIGBUS guard not registered";
	if (why != NULL) {
		VPORT_LOG(ERR, port, "guest memory table rejected: %s", why);
		return -EINVAL;
	}
	port->mem = mem;
	VPORT_LOG(INFO, port, "guest memory: %u region(s), %u not sealed "
		"against shrinking (SIGBUS guard)", mem.nregions,
		port->mem_unsealed);
	return 0;
}

/* Our address of a ring (as librte_vhost translated it) back to a GPA. */
static int
hva_to_gpa(const struct vsw_mem *mem, const void *p, uint64_t *gpa)
{
	uint64_t hva = (uint64_t)(uintptr_t)p;
	uint32_t i;

	for (i = 0; i < mem->nregions; i++) {
		const struct vsw_mem_region *r = &mem->regions[i];

		if (hva >= r->host_user_addr &&
			hva - r->host_user_addr < r->size) {
			*gpa = r->guest_phys_addr + (hva - r->host_user_addr);
			return 0;
		}
	}
	return -EFAULT;
}

/* Fill a virtq from what librte_vhost holds for vring q and publish it. */
int
vport_queue_publish(struct vsw_vport *port, struct vport_queue *q)
{
	struct vsw_virtq_config cfg;
	struct rte_vhost_vring vr;
	int rc;

	if (q->live != NULL)
		return 0;
	memset(&cfg, 0, sizeof(cfg));
	if (rte_vhost_get_vhost_vring(port->vid, q->index, &vr) != 0 ||
		rte_vhost_get_vring_base(port->vid, q->index,
			&cfg.last_avail_idx, &cfg.last_used_idx) != 0) {
		rc = -EIO;
		goto fail;
	}
	if (hva_to_gpa(&port->mem, vr.desc, &cfg.desc_gpa) != 0 ||
		hva_to_gpa(&port->mem, vr.avail, &cfg.avail_gpa) != 0 ||
		hva_to_gpa(&port->mem, vr.used, &cfg.used_gpa) != 0) {
		rc = -EFAULT;
		goto fail;
	}
	cfg.size = vr.size;
	cfg.features = port->features;
	if (vport_log_get(port, &cfg) != 0) {
		rc = -ENODATA;
		goto fail;
	}
	cfg.mem = &port->mem;
	cfg.max_pkt_len = port->cfg.max_pkt_len;
	/* the peer shares the call fd's file: it may have cleared
	 * O_NONBLOCK since SET_VRING_CALL */
	if (vr.callfd >= 0 && vport_callfd_prepare(vr.callfd) != NULL) {
		port->fd_rejected++;
		rc = -EBADF;
		goto fail;
	}
	q->callfd = vr.callfd;
	q->call_broken = false; /* a new file, or the peer's new chance */
	cfg.notify = vr.callfd >= 0 ? vport_notify : NULL;
	cfg.notify_ctx = q;
	cfg.name = q->name;
	q->vq = vsw_virtq_create(&cfg);
	if (q->vq == NULL) {
		rc = -rte_errno;
		goto fail;
	}
	rcu_assign_pointer(q->live, q->vq);
	VPORT_LOG(DEBUG, port, "vring %u live (size %u, avail %u, used %u)",
		q->index, vr.size, cfg.last_avail_idx, cfg.last_used_idx);
	return 0;
fail:
	port->queue_errors++;
	VPORT_LOG(
		ERR, port, "vring %u not set up: %s", q->index, strerror(-rc));
	return rc;
}

/*
 * After a grace period: hand the ring indices back to librte_vhost (so a
 * GET_VRING_BASE or a later re-publish resumes where we stopped) and fold
 * the counters into the port's totals.
 */
static void
queue_retire(struct vsw_vport *port, struct vport_queue *q)
{
	uint64_t st[VSW_VIRTQ_STAT__MAX];
	uint32_t s;

	if (q->vq == NULL)
		return;
	if (port->vid >= 0)
		rte_vhost_set_vring_base(port->vid, q->index,
			vsw_virtq_last_avail_idx(q->vq),
			vsw_virtq_last_used_idx(q->vq));
	vsw_virtq_stats_read(q->vq, st);
	for (s = 0; s < VSW_VIRTQ_STAT__MAX; s++)
		q->retired[s] += st[s];
	vsw_virtq_destroy(q->vq);
	q->vq = NULL;
}

void
vport_queue_withdraw(struct vsw_vport *port, struct vport_queue *q)
{
	if (q->live != NULL) {
		rcu_assign_pointer(q->live, NULL);
		synchronize_rcu();
	}
	queue_retire(port, q);
}

static void
queues_withdraw_all(struct vsw_vport *port)
{
	bool any = false;
	uint16_t i;

	for (i = 0; i < port->nr_queues; i++) {
		if (port->queues[i].live != NULL) {
			rcu_assign_pointer(port->queues[i].live, NULL);
			any = true;
		}
	}
	if (any)
		synchronize_rcu();
	for (i = 0; i < port->nr_queues; i++)
		queue_retire(port, &port->queues[i]);
}

static void
queues_publish_all(struct vsw_vport *port)
{
	uint16_t i;
	int rc;

	rc = mem_load(port);
	if (rc != 0) {
		port->queue_errors++;
		return;
	}
	for (i = 0; i < port->nr_queues; i++)
		if (port->queues[i].ready && port->queues[i].guest_on)
			vport_queue_publish(port, &port->queues[i]);
}

/* Callbacks find their port by socket path; NULL means not ours. */
static struct vsw_vport *
dev_lock_any(int vid)
{
	struct vsw_vport *port = vport_lookup_vid(vid);

	if (port != NULL)
		pthread_mutex_lock(&port->lock);
	return port;
}

/*
 * The port, locked, if vid is its connection. A port serves one
 * connection at a time (new_connection refuses others); anything about
 * another vid (one being refused) is not ours to act on.
 */
static struct vsw_vport *
dev_lock(int vid)
{
	struct vsw_vport *port = dev_lock_any(vid);

	if (port != NULL && port->vid != vid) {
		pthread_mutex_unlock(&port->lock);
		return NULL;
	}
	return port;
}

/*
 * Every message, before librte_vhost acts on it. A refused one
 * (vport_msg_refuse) returns ERR: librte_vhost then runs neither its
 * handler nor the post hook, and nacks it (NEED_REPLY, connection kept)
 * or closes the connection.
 */
static enum rte_vhost_msg_result
dev_pre_msg(int vid, void *msg)
{
	struct vport_msg_ctx *ctx = msg;
	struct vport_msg *m = &ctx->msg;
	struct vsw_vport *port = dev_lock(vid);
	const struct vport_msg_row *row;

	if (port == NULL)
		return RTE_VHOST_MSG_RESULT_NOT_HANDLED;
	if (vport_msg_refuse(port, ctx)) {
		pthread_mutex_unlock(&port->lock);
		return RTE_VHOST_MSG_RESULT_ERR;
	}
	if (m->request == VPORT_MSG_SEND_RARP) {
		/* librte_vhost's own handler sets a flag only its own
		 * dequeue reads: vsw's RX burst injects the RARP */
		vport_rarp_note(port, m);
		pthread_mutex_unlock(&port->lock);
		return RTE_VHOST_MSG_RESULT_OK;
	}
	vport_qp_msg(port, m);
	if (m->request == VPORT_MSG_GET_QUEUE_NUM) {
		/* librte_vhost 22.11 would answer its own maximum (128). */
		m->u.u64 = port->cfg.queue_pairs;
		m->size = sizeof(m->u.u64);
		pthread_mutex_unlock(&port->lock);
		return RTE_VHOST_MSG_RESULT_REPLY;
	}
	/*
	 * SET_MEM_TABLE unmaps guest memory; SET_VRING_KICK re-translates
	 * ring addresses; SET_VRING_CALL closes the old eventfd; some of
	 * these come without a state callback to an external backend:
	 * withdraw everything first, republish after.
	 */
	/* librte_vhost's handler unmaps the old table */
	if (m->request == VPORT_MSG_SET_MEM_TABLE)
		vport_guard_remove(port);
	row = vport_msg_row(m->request);
	if (row != NULL && (row->flags & VPORT_MSG_F_PARK) && port->running) {
		queues_withdraw_all(port);
		port->parked = true;
	}
	pthread_mutex_unlock(&port->lock);
	return RTE_VHOST_MSG_RESULT_NOT_HANDLED;
}

static enum rte_vhost_msg_result
dev_post_msg(int vid, void *msg)
{
	const struct vport_msg *m = msg;
	struct vsw_vport *port = dev_lock(vid);

	if (port == NULL)
		return RTE_VHOST_MSG_RESULT_NOT_HANDLED;
	/* only messages vsw accepted and librte_vhost handled get here */
	if (m->request == VPORT_MSG_SET_MEM_TABLE) {
		port->mem_seen = true;
		vport_guard_register(port);
	}
	if (port->parked) {
		port->parked = false;
		if (port->running)
			queues_publish_all(port);
	}
	pthread_mutex_unlock(&port->lock);
	return RTE_VHOST_MSG_RESULT_NOT_HANDLED;
}

static const struct rte_vhost_user_extern_ops vport_msg_ops = {
	.pre_msg_handle = dev_pre_msg,
	.post_msg_handle = dev_post_msg,
};

static int
dev_new_connection(int vid)
{
	struct vsw_vport *port = dev_lock_any(vid);
	uint16_t i;

	if (port == NULL)
		return -1;
	if (port->vid >= 0) {
		/* a second front-end on the same socket would take over
		 * the port's device state: refused, librte_vhost closes it */
		port->msg_rejected++;
		vport_log_guest(port,
			"connection (vid %d) refused: port already connected",
			vid);
		pthread_mutex_unlock(&port->lock);
		return -1;
	}
	port->vid = vid;
	port->running = false;
	port->parked = false;
	port->mem_seen = false;
	port->guest_features = 0;
	/* librte_vhost reads and writes it on its one event thread */
	port->conn_fd = vport_conn_nonblock(port);
	if (port->conn_fd < 0)
		VPORT_LOG(WARNING, port, "connection socket not found");
	for (i = 0; i < port->nr_queues; i++) {
		struct vport_queue *q = &port->queues[i];

		q->ready = q->guest_on = false;
		q->addr_seen = q->kick_seen = false;
		q->num = 0;
	}
	if (rte_vhost_extern_callback_register(vid, &vport_msg_ops, port) != 0)
		VPORT_LOG(WARNING, port, "message hooks not registered");
	VPORT_LOG(INFO, port, "connected (vid %d)", vid);
	pthread_mutex_unlock(&port->lock);
	return 0;
}

static void
dev_destroy_connection(int vid)
{
	struct vsw_vport *port = dev_lock(vid);

	if (port == NULL)
		return;
	/* destroy_device ran before if the device was running */
	queues_withdraw_all(port);
	/* librte_vhost unmaps guest memory after this callback */
	vport_guard_remove(port);
	vport_guard_report(port);
	callfd_report(port);
	port->running = false;
	vport_txmap_update(port);
	port->vid = -1;
	port->conn_fd = -1;
	port->mtu = 0; /* a new connection sends its own */
	port->disconnects++;
	VPORT_LOG(INFO, port, "disconnected");
	pthread_mutex_unlock(&port->lock);
}

static int
dev_new_device(int vid)
{
	struct vsw_vport *port = dev_lock(vid);
	uint16_t i, nr;

	if (port == NULL)
		return -1;
	if (rte_vhost_get_negotiated_features(vid, &port->features) != 0) {
		pthread_mutex_unlock(&port->lock);
		return -1;
	}
	/* librte_vhost was not shown PROTOCOL_FEATURES (vport_qp.c) */
	port->features |= port->guest_features &
		(1ull << VHOST_USER_F_PROTOCOL_FEATURES);
	port->vid = vid;
	port->running = true;
	port->connects++;
	queues_publish_all(port);
	vport_txmap_update(port);
	/* We poll: ask the guest not to kick (best effort, no vring lock
	 * is held by librte_vhost while new_device runs). */
	nr = rte_vhost_get_vring_num(vid);
	for (i = 0; i < nr && i < port->nr_queues; i++)
		rte_vhost_enable_guest_notification(vid, i, 0);
	VPORT_LOG(INFO, port, "device ready: features 0x%" PRIx64 ", %u vrings",
		port->features, nr);
	pthread_mutex_unlock(&port->lock);
	return 0;
}

static void
dev_destroy_device(int vid)
{
	struct vsw_vport *port = dev_lock(vid);

	if (port == NULL)
		return;
	/* returns only after a grace period: no poller is on the rings */
	queues_withdraw_all(port);
	port->running = false;
	vport_guard_report(port);
	callfd_report(port);
	vport_txmap_update(port);
	VPORT_LOG(INFO, port, "device stopped");
	pthread_mutex_unlock(&port->lock);
}

/*
 * SET_FEATURES on a running device: librte_vhost lets only LOG_ALL change
 * (live migration starts or ends). The queues are withdrawn (the message
 * parks them); the post hook republishes them with or without the log.
 */
static int
dev_features_changed(int vid, uint64_t features)
{
	struct vsw_vport *port = dev_lock(vid);

	if (port == NULL)
		return -1;
	VPORT_LOG(INFO, port, "dirty logging %s",
		(features & (1ULL << VHOST_F_LOG_ALL)) ? "on" : "off");
	port->features = features;
	pthread_mutex_unlock(&port->lock);
	return 0;
}

static int
dev_vring_state_changed(int vid, uint16_t index, int enable)
{
	struct vsw_vport *port = dev_lock(vid);
	struct vport_queue *q;

	if (port == NULL)
		return -1;
	if (index >= port->nr_queues) {
		VPORT_LOG(WARNING, port,
			"vring %u beyond %u queue pairs: ignored", index,
			port->cfg.queue_pairs);
		pthread_mutex_unlock(&port->lock);
		return 0;
	}
	/* librte_vhost's readiness: rings and fds (vport_qp.c) */
	q = &port->queues[index];
	q->ready = enable != 0;
	vport_queue_update(port, q);
	VPORT_LOG(DEBUG, port, "vring %u %sready", index, enable ? "" : "not ");
	pthread_mutex_unlock(&port->lock);
	return 0;
}

const struct rte_vhost_device_ops vport_dev_ops = {
	.new_device = dev_new_device,
	.destroy_device = dev_destroy_device,
	.vring_state_changed = dev_vring_state_changed,
	.features_changed = dev_features_changed,
	.new_connection = dev_new_connection,
	.destroy_connection = dev_destroy_connection,
};

void
vport_queues_free(struct vsw_vport *port)
{
	uint16_t i;

	if (port->queues == NULL)
		return;
	for (i = 0; i < port->nr_queues; i++)
		vsw_virtq_destroy(port->queues[i].vq);
	free(port->queues);
	port->queues = NULL;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Queue pairs the guest uses: its own enable state per vring, what vsw
 * polls and sends to, and where sends meant for a disabled pair go.
 *
 * A guest enables min(queue pairs offered, its vCPUs) pairs until told
 * otherwise (`ethtool -L eth0 combined N`): QEMU sets up every vring and
 * sends SET_VRING_ENABLE 1 or 0 for each. librte_vhost 22.11 starts an
 * external backend (new_device) only once every vring it allocated is
 * ready *and enabled* (virtio_is_ready); the two-vring shortcut is for
 * its built-in net backend only. So the pre-message hook records the
 * guest's state in guest_on and lets librte_vhost see every vring
 * enabled: its readiness then means rings and fds are set up (q->ready,
 * from vring_state_changed), and vsw publishes a vring when it is ready
 * and the guest has it on.
 *
 * A front-end may also never send SET_VRING_ENABLE for the vrings it
 * does not use: DPDK's virtio_user (testpmd --rxq=1 on queues=2) sets up
 * all four vrings (call, num, base, addr, kick) and enables 0 and 1 only.
 * librte_vhost enables a vring at its kick when PROTOCOL_FEATURES is not
 * negotiated (the spec's rule), so the hook hides that one bit from the
 * SET_FEATURES librte_vhost records (the guest still negotiated it: vsw
 * keeps its own copy, guest_features, and applies the rule itself; the
 * bit changes nothing else in librte_vhost's message handling). A vring
 * the front-end allocated but never gave rings and a kick still keeps
 * the device from starting: port-show says which ("no kick fd").
 *
 * Sends to a disabled pair: the switch core picks tx queues without
 * knowing the guest's choice (vsw/port.h). As OVS-DPDK does
 * (netdev_dpdk_remap_txqs), they are re-steered to the enabled pairs in
 * turn; a pair that takes another's bursts is then shared by two senders,
 * which take its tx_lock (only then). No pair enabled: counted as not
 * ready on the pair asked for.
 *
 * Threads: librte_vhost's event thread (port->lock held) for the updates;
 * the control thread (port->lock held) for vsw_vport_qp_state_get.
 */
#include <errno.h>
#include <string.h>

#include <rte_vhost.h>
#include <urcu-qsbr.h>

#include "vport_msg_table.h"
#include "vport_priv.h"

/* The guest's RX vring of pair qp is being sent to (not just published:
 * a pair parked around a message stays in the map). */
static bool
pair_serving(const struct vsw_vport *port, uint16_t qp)
{
	const struct vport_queue *q = &port->queues[2 * qp];

	return port->running && q->ready && q->guest_on;
}

static void
txmap_compute(const struct vsw_vport *port, uint16_t *map)
{
	uint16_t on[VSW_VPORT_QUEUE_PAIRS_MAX];
	uint8_t users[VSW_VPORT_QUEUE_PAIRS_MAX] = {0};
	uint16_t pairs = port->cfg.queue_pairs, n_on = 0, qp;

	for (qp = 0; qp < pairs; qp++)
		if (pair_serving(port, qp))
			on[n_on++] = qp;
	for (qp = 0; qp < pairs; qp++) {
		if (n_on == 0)
			map[qp] = VPORT_TXQ_NONE;
		else if (pair_serving(port, qp))
			map[qp] = qp;
		else
			map[qp] = on[qp % n_on];
		if (map[qp] != VPORT_TXQ_NONE)
			users[map[qp]]++;
	}
	for (qp = 0; qp < pairs; qp++)
		if (map[qp] != VPORT_TXQ_NONE && users[map[qp]] > 1)
			map[qp] |= VPORT_TXQ_LOCK;
}

/* Store one step of the map; a grace period after it when it changed. */
static void
txmap_step(struct vsw_vport *port, const uint16_t *map)
{
	uint16_t qp;
	bool changed = false;

	for (qp = 0; qp < port->cfg.queue_pairs; qp++) {
		if (port->txmap[qp] == map[qp])
			continue;
		__atomic_store_n(&port->txmap[qp], map[qp], __ATOMIC_RELAXED);
		changed = true;
	}
	if (changed)
		synchronize_rcu();
}

/* Pair t as a target locked in the old or the new map. */
static uint16_t
with_lock(const bool *locked, uint16_t m)
{
	uint16_t t = m & 0xffu;

	if (t != VPORT_TXQ_NONE && locked[t])
		m |= VPORT_TXQ_LOCK;
	return m;
}

/*
 * Senders read their entry once per burst, so during a change some use
 * the old map and some the new. Step 1 locks every pair that is shared in
 * either map (targets unchanged), step 2 moves the targets (still
 * locked), step 3 drops the locks the new map does not need: at each
 * point any two senders that can meet on a pair both lock it.
 */
void
vport_txmap_update(struct vsw_vport *port)
{
	uint16_t want[VSW_VPORT_QUEUE_PAIRS_MAX];
	uint16_t step[VSW_VPORT_QUEUE_PAIRS_MAX];
	bool locked[VSW_VPORT_QUEUE_PAIRS_MAX] = {false};
	uint16_t pairs = port->cfg.queue_pairs, qp;

	txmap_compute(port, want);
	if (memcmp(want, port->txmap, pairs * sizeof(want[0])) == 0)
		return;
	for (qp = 0; qp < pairs; qp++) {
		uint16_t o = port->txmap[qp], w = want[qp];

		if ((o & VPORT_TXQ_LOCK) && (o & 0xffu) != VPORT_TXQ_NONE)
			locked[o & 0xffu] = true;
		if ((w & VPORT_TXQ_LOCK) && (w & 0xffu) != VPORT_TXQ_NONE)
			locked[w & 0xffu] = true;
	}
	for (qp = 0; qp < pairs; qp++)
		step[qp] = with_lock(locked, port->txmap[qp]);
	txmap_step(port, step);
	for (qp = 0; qp < pairs; qp++)
		step[qp] = with_lock(locked, want[qp]);
	txmap_step(port, step);
	txmap_step(port, want);
}

/*
 * Publish or withdraw vring q as its state now says, and follow with the
 * map: a pair is published before sends are steered to it and withdrawn
 * after they are steered away, so no burst meets it half set up.
 */
void
vport_queue_update(struct vsw_vport *port, struct vport_queue *q)
{
	bool on = q->ready && q->guest_on;

	if (!on)
		vport_txmap_update(port);
	if (port->running && !port->parked) {
		if (on)
			vport_queue_publish(port, q);
		else
			vport_queue_withdraw(port, q);
	}
	if (on)
		vport_txmap_update(port);
}

/*
 * What a per-vring message says about the guest's use of the vring, from
 * the pre-message hook once vsw's checks passed (index < nr_queues).
 */
void
vport_qp_msg(struct vsw_vport *port, struct vport_msg *m)
{
	struct vport_queue *q;

	switch (m->request) {
	case VPORT_MSG_SET_FEATURES:
		port->guest_features = m->u.u64;
		m->u.u64 &= ~(1ull << VHOST_USER_F_PROTOCOL_FEATURES);
		break;
	case VPORT_MSG_SET_VRING_ENABLE:
		q = &port->queues[m->u.state.index];
		q->guest_on = m->u.state.num != 0;
		VPORT_LOG(DEBUG, port, "vring %u %s by the guest", q->index,
			q->guest_on ? "enabled" : "disabled");
		/* librte_vhost sees it enabled (see above) */
		m->u.state.num = 1;
		vport_queue_update(port, q);
		break;
	case VPORT_MSG_SET_VRING_ADDR:
		port->queues[m->u.addr.index].addr_seen = true;
		break;
	case VPORT_MSG_SET_VRING_KICK:
		q = &port->queues[m->u.u64 & VPORT_MSG_VRING_IDX_MASK];
		q->kick_seen = !(m->u.u64 & VPORT_MSG_VRING_NOFD);
		/* without PROTOCOL_FEATURES a vring starts enabled at its
		 * kick (the spec) */
		if (!(port->guest_features &
			    (1ull << VHOST_USER_F_PROTOCOL_FEATURES)))
			q->guest_on = true;
		break;
	case VPORT_MSG_GET_VRING_BASE:
		/* the ring stops; librte_vhost closes its kick fd */
		q = &port->queues[m->u.state.index];
		q->addr_seen = false;
		q->kick_seen = false;
		break;
	default:
		break;
	}
}

static const char *
qp_why_not(const struct vsw_vport *port, uint16_t qp)
{
	const struct vport_queue *rx = &port->queues[2 * qp];
	const struct vport_queue *tx = &port->queues[2 * qp + 1];

	if (port->vid < 0)
		return "not connected";
	if (!rx->guest_on && !tx->guest_on && !rx->addr_seen &&
		!tx->addr_seen && !rx->kick_seen && !tx->kick_seen)
		return "not configured";
	if (!rx->guest_on || !tx->guest_on)
		return "disabled by guest";
	if (!rx->addr_seen || !tx->addr_seen)
		return "no ring addresses";
	if (!rx->kick_seen || !tx->kick_seen)
		return "no kick fd";
	if (!rx->ready || !tx->ready)
		return "rings not ready";
	if (!port->running)
		return "device not started";
	if (port->parked)
		return "being reconfigured";
	return "set-up failed (see log)";
}

int
vsw_vport_qp_state_get(
	struct vsw_vport *port, uint16_t qp, struct vsw_vport_qp_state *st)
{
	uint16_t m;

	memset(st, 0, sizeof(*st));
	if (qp >= port->cfg.queue_pairs)
		return -ENOENT;
	pthread_mutex_lock(&port->lock);
	st->enabled = port->vid >= 0 && port->queues[2 * qp].guest_on &&
		port->queues[2 * qp + 1].guest_on;
	st->live = port->queues[2 * qp].live != NULL &&
		port->queues[2 * qp + 1].live != NULL;
	m = port->txmap[qp] & 0xffu;
	st->tx_to = m == VPORT_TXQ_NONE ? VSW_VPORT_QP_NONE : m;
	st->why = st->live ? "" : qp_why_not(port, qp);
	pthread_mutex_unlock(&port->lock);
	return 0;
}

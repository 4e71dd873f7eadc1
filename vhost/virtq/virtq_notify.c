/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Publishing used entries and deciding whether to kick the guest: the
 * burst's shadow used ring is copied out, used->idx is stored once with
 * release order, and the guest is notified at most once per burst when it
 * asked (EVENT_IDX: used_event; otherwise VRING_AVAIL_F_NO_INTERRUPT).
 *
 * avail_event (whether the guest kicks us) is not written here: a polling
 * backend wants no kicks, and the port controls them through librte_vhost
 * (rte_vhost_enable_guest_notification), which owns that field.
 *
 * With a dirty log, the used entries and the used index are logged, and
 * the burst's log bits are ORed in after the publish (virtq_log.c).
 *
 * Runs on the queue's poller. Reads used_event and the avail flags from
 * guest memory (any value is safe: they only decide whether to kick).
 */
#include "virtq_priv.h"

/* virtio 1.1 2.7.7.2: kick when new_idx has passed event since old. */
static inline bool
need_event(uint16_t event, uint16_t new_idx, uint16_t old)
{
	return (uint16_t)(new_idx - event - 1) < (uint16_t)(new_idx - old);
}

static bool
guest_wants_kick(struct vsw_virtq *vq)
{
	uint16_t old, now;

	if (vq->used_event == NULL) {
		uint16_t flags = __atomic_load_n(&vq->avail->flags,
			__ATOMIC_RELAXED);

		return !(flags & VRING_AVAIL_F_NO_INTERRUPT);
	}
	old = vq->signalled_used;
	now = vq->last_used_idx;
	vq->signalled_used = now;
	if (unlikely(!vq->signalled_used_valid)) {
		vq->signalled_used_valid = true;
		return true;
	}
	return need_event(__atomic_load_n(vq->used_event, __ATOMIC_RELAXED),
		now, old);
}

static void
publish_used(struct vsw_virtq *vq)
{
	uint32_t mask = vq->size - 1;
	uint16_t used = vq->last_used_idx;
	uint32_t i;

	for (i = 0; i < vq->shadow_n; i++) {
		struct vring_used_elem *e = &vq->used->ring[(used + i) & mask];

		e->id = vq->shadow[i].id;
		e->len = vq->shadow[i].len;
	}
	virtq_used_publish(vq, vq->shadow_n);
}

void
virtq_used_publish(struct vsw_virtq *vq, uint32_t n)
{
	uint16_t used = vq->last_used_idx;

	if (unlikely(virtq_logging(vq)))
		virtq_log_used(vq, used, n);
	used = (uint16_t)(used + n);
	vq->shadow_n = 0;
	vq->last_used_idx = used;
	__atomic_store_n(&vq->used->idx, used, __ATOMIC_RELEASE);
	/* the used idx store must be visible before we read used_event/flags
	 * (store-load order), or guest and host may each wait for the other */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (guest_wants_kick(vq) && vq->notify != NULL) {
		vq->notify(vq->notify_ctx);
		virtq_count(vq, VSW_VIRTQ_STAT_NOTIFY_SENT, 1);
	} else {
		virtq_count(vq, VSW_VIRTQ_STAT_NOTIFY_SUPPRESSED, 1);
	}
}

void
virtq_flush_used(struct vsw_virtq *vq)
{
	if (vq->shadow_n != 0)
		publish_used(vq);
	/* once per burst: chains copied into but left posted (rolled back)
	 * were written too */
	if (unlikely(virtq_logging(vq)))
		virtq_log_flush(vq);
}

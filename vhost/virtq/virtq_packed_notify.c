/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Publishing a burst's used descriptors on a packed ring, and the driver
 * event suppression rules (virtio 1.1, 2.8.10, 2.8.21): each used entry is
 * written at its chain's first slot, and the flags of the burst's first
 * entry go last, after a release barrier, so the driver (which polls that
 * one slot) sees the whole batch at once (2.8.6 / "Multi-buffer requests").
 * Then a kick when the driver event area asks: ENABLE always, DISABLE
 * never, DESC (with EVENT_IDX) when the descriptor at off/wrap was among
 * those just used.
 *
 * With a dirty log, the slots the burst's used descriptors went to are
 * logged and the burst's bits ORed in after the publish (virtq_log.c).
 * The device event area is written once, at create (virtq.c logs it).
 *
 * Runs on the queue's poller. The driver event area may hold anything: it
 * only decides whether to kick.
 */
#include "virtq_packed.h"

/* A position with its wrap counter on a 2*size circle (wrap 1 is lap 0). */
static inline uint32_t
lin(const struct vsw_virtq *vq, uint32_t idx, bool wrap)
{
	return idx + (wrap ? 0 : vq->size);
}

/* Used slots [old, now) on the circle include the event's? */
static bool
packed_need_event(const struct vsw_virtq *vq, uint16_t off_wrap, uint32_t old,
	uint32_t now)
{
	uint32_t ring = 2 * vq->size;
	uint32_t ev = lin(vq, (off_wrap & 0x7fffu) % vq->size, off_wrap >> 15);

	return (now + ring - ev - 1) % ring < (now + ring - old) % ring;
}

static bool
packed_wants_kick(struct vsw_virtq *vq)
{
	const struct vring_packed_desc_event *de = vq->driver_event;
	uint16_t flags = __atomic_load_n(&de->flags, __ATOMIC_RELAXED) & 3;
	uint16_t old = vq->signalled_used;
	uint32_t o, now;
	bool valid = vq->signalled_used_valid;

	vq->signalled_used =
		vq->last_used_idx | (uint16_t)(vq->used_wrap << 15);
	vq->signalled_used_valid = true;
	if (flags == VRING_PACKED_EVENT_FLAG_DISABLE)
		return false;
	if (flags != VRING_PACKED_EVENT_FLAG_DESC ||
		!virtq_has(vq, VSW_VIRTIO_RING_F_EVENT_IDX) || !valid)
		return true;
	o = lin(vq, old & 0x7fffu, old >> 15);
	now = lin(vq, vq->last_used_idx, vq->used_wrap);
	return packed_need_event(vq,
		__atomic_load_n(&de->off_wrap, __ATOMIC_RELAXED), o, now);
}

/* Used descriptor flags: AVAIL = USED = the wrap counter; WRITE if data. */
static __rte_always_inline uint16_t
used_flags(bool wrap, uint32_t len)
{
	return (uint16_t)((wrap ? PACKED_F_AVAIL | PACKED_F_USED : 0) |
		(len != 0 ? VRING_DESC_F_WRITE : 0));
}

void
virtq_packed_flush(struct vsw_virtq *vq)
{
	struct vring_packed_desc *first;
	uint16_t idx = vq->last_used_idx;
	bool wrap = vq->used_wrap;
	uint16_t first_flags;
	uint32_t i;

	if (vq->shadow_n == 0) {
		/* chains copied into, then rolled back, were written too */
		if (unlikely(virtq_logging(vq)))
			virtq_log_flush(vq);
		return;
	}
	first = &vq->pdesc[idx];
	first->id = PSHADOW_BUF(vq->shadow[0].id);
	first->len = vq->shadow[0].len;
	first_flags = used_flags(wrap, vq->shadow[0].len);
	packed_id_clear(vq, vq->shadow[0].id);
	packed_advance(vq, &idx, &wrap, PSHADOW_NDESC(vq->shadow[0].id));
	for (i = 1; i < vq->shadow_n; i++) {
		struct vring_packed_desc *d = &vq->pdesc[idx];
		uint32_t v = vq->shadow[i].id;

		d->id = PSHADOW_BUF(v);
		d->len = vq->shadow[i].len;
		__atomic_store_n(&d->flags, used_flags(wrap, vq->shadow[i].len),
			__ATOMIC_RELAXED);
		packed_id_clear(vq, v);
		packed_advance(vq, &idx, &wrap, PSHADOW_NDESC(v));
	}
	/* the batch becomes visible with its first descriptor's flags */
	__atomic_store_n(&first->flags, first_flags, __ATOMIC_RELEASE);
	vq->shadow_n = 0;
	if (unlikely(virtq_logging(vq))) {
		uint16_t from = vq->last_used_idx;

		virtq_log_pdesc(vq, from, (uint32_t)idx - from +
				(wrap != vq->used_wrap ? vq->size : 0));
		virtq_log_flush(vq);
	}
	vq->last_used_idx = idx;
	vq->used_wrap = wrap;
	/* store-load order: the flags before the driver event area */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (packed_wants_kick(vq) && vq->notify != NULL) {
		vq->notify(vq->notify_ctx);
		virtq_count(vq, VSW_VIRTQ_STAT_NOTIFY_SENT, 1);
	} else {
		virtq_count(vq, VSW_VIRTQ_STAT_NOTIFY_SUPPRESSED, 1);
	}
}

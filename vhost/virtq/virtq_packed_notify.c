/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Publishing a burst's used descriptors on a packed ring, and the driver
 * event suppression rules (virtio 1.1, 2.8.10, 2.8.21): each used entry is
 * written at its chain's first slot, and the flags of the burst's first
 * entry go last, after a release barrier, so the driver (which polls that
 * one slot) sees the whole batch at once (2.8.6 / "Multi-buffer requests").
 * A TX burst with VIRTIO_F_IN_ORDER is one used descriptor (the last
 * chain's id at the first chain's slot, "in-order use of descriptors"):
 * the driver infers the buffers before it, and the device skips the
 * burst's slots.
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
#include <stddef.h>
#include <string.h>

#include <rte_byteorder.h>

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

/*
 * len, id and flags (lap: AVAIL | USED of its lap, or 0; WRITE added when
 * len > 0) of a used descriptor that is not the batch's first: its flags
 * need no order of their own (the first one's release covers them), so
 * one 8-byte store where the ring's byte order is the CPU's.
 */
static __rte_always_inline void
used_write(struct vring_packed_desc *d, uint16_t id, uint32_t len,
	uint16_t lap)
{
#if RTE_BYTE_ORDER == RTE_LITTLE_ENDIAN
	uint64_t v = len | (uint64_t)id << 32 | (uint64_t)lap << 48 |
		(uint64_t)(len != 0) << (48 + 1);

	RTE_BUILD_BUG_ON(VRING_DESC_F_WRITE != 1u << 1);
	memcpy((uint8_t *)d + offsetof(struct vring_packed_desc, len), &v,
		sizeof(v));
#else
	d->id = id;
	d->len = len;
	__atomic_store_n(&d->flags, (uint16_t)(lap | (len != 0 ?
		VRING_DESC_F_WRITE : 0)), __ATOMIC_RELAXED);
#endif
}

/* The burst's ids leave flight: a new stamp (a full lap: clear them). */
static __rte_always_inline void
ids_release(struct vsw_virtq *vq)
{
	if (unlikely(++vq->id_gen == 0)) {
		memset(vq->id_stamp, 0, vq->size * sizeof(vq->id_stamp[0]));
		vq->id_gen = 1;
	}
}

/* The shadow's descriptors, the first one's flags last; returns the ring
 * slots their chains took. batch: one descriptor for all (see header). */
static __rte_always_inline uint32_t
used_write_all(struct vsw_virtq *vq, bool batch)
{
	struct vring_packed_desc *first = &vq->pdesc[vq->last_used_idx];
	uint32_t i, n = vq->shadow_n, slots, at;
	uint16_t lap;

	if (batch) {
		first->id = PSHADOW_BUF(vq->shadow[n - 1].id);
		first->len = 0;
		__atomic_store_n(&first->flags, used_flags(vq->used_wrap, 0),
			__ATOMIC_RELEASE);
		for (i = 0, slots = 0; i < n; i++)
			slots += PSHADOW_NDESC(vq->shadow[i].id);
		return slots;
	}
	first->id = PSHADOW_BUF(vq->shadow[0].id);
	first->len = vq->shadow[0].len;
	slots = PSHADOW_NDESC(vq->shadow[0].id);
	at = vq->last_used_idx + slots;
	lap = used_flags(vq->used_wrap, 0);
	for (i = 1; i < n; i++) {
		uint32_t v = vq->shadow[i].id;

		if (at >= vq->size) { /* the burst crosses the ring's end */
			at -= vq->size;
			lap ^= PACKED_F_AVAIL | PACKED_F_USED;
		}
		used_write(&vq->pdesc[at], PSHADOW_BUF(v), vq->shadow[i].len,
			lap);
		at += PSHADOW_NDESC(v);
		slots += PSHADOW_NDESC(v);
	}
	/* the batch becomes visible with its first descriptor's flags */
	__atomic_store_n(&first->flags,
		used_flags(vq->used_wrap, vq->shadow[0].len), __ATOMIC_RELEASE);
	return slots;
}

void
virtq_packed_flush(struct vsw_virtq *vq, bool batch)
{
	uint32_t slots;

	if (vq->shadow_n == 0) {
		/* chains copied into, then rolled back, were written too */
		if (unlikely(virtq_logging(vq)))
			virtq_log_flush(vq);
		return;
	}
	slots = used_write_all(vq, batch);
	vq->shadow_n = 0;
	ids_release(vq);
	if (unlikely(virtq_logging(vq))) {
		virtq_log_pdesc(vq, vq->last_used_idx, batch ? 1 : slots);
		virtq_log_flush(vq);
	}
	/* a batch skips its chains' later slots too */
	packed_advance(vq, &vq->last_used_idx, &vq->used_wrap, slots);
	/* store-load order: the flags before the driver event area */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (packed_wants_kick(vq) && vq->notify != NULL) {
		vq->notify(vq->notify_ctx);
		virtq_count(vq, VSW_VIRTQ_STAT_NOTIFY_SENT, 1);
	} else {
		virtq_count(vq, VSW_VIRTQ_STAT_NOTIFY_SUPPRESSED, 1);
	}
}

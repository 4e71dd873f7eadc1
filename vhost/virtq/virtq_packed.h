/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Private to the packed-ring files of vhost/virtq/ (virtio 1.1, 2.8): ring
 * positions with their wrap counters, the availability test, the packed
 * descriptor-chain walker (checks in virtq_packed_desc.c) and the shadow
 * used entries, which remember how many ring slots their chain took.
 *
 * Positions: the device keeps last_avail_idx/avail_wrap (the next slot it
 * reads) and last_used_idx/used_wrap (the next slot it writes a used
 * descriptor to). vsw uses chains in order, so the used side trails the
 * avail side by the burst's chains and catches up at each flush.
 */
#ifndef VSW_VIRTQ_PACKED_H
#define VSW_VIRTQ_PACKED_H

#include "virtq_priv.h"

#define PACKED_F_AVAIL (1u << VRING_PACKED_DESC_F_AVAIL)
#define PACKED_F_USED (1u << VRING_PACKED_DESC_F_USED)

/* A shadow entry's id: the buffer id, and the ring slots its chain took. */
#define PSHADOW_ID(id, ndesc) ((uint32_t)(id) | ((uint32_t)(ndesc) << 16))
#define PSHADOW_BUF(v) ((uint16_t)(v))
#define PSHADOW_NDESC(v) ((uint16_t)((v) >> 16))

/* Available: AVAIL matches the wrap counter, USED does not (2.8.1). */
static __rte_always_inline bool
packed_avail(uint16_t flags, bool wrap)
{
	return !!(flags & PACKED_F_AVAIL) == wrap &&
		!!(flags & PACKED_F_USED) != wrap;
}

/* Moves a position on by n (< size) slots, flipping the wrap counter. */
static __rte_always_inline void
packed_advance(const struct vsw_virtq *vq, uint16_t *idx, bool *wrap,
	uint32_t n)
{
	uint32_t i = (uint32_t)*idx + n;

	if (i >= vq->size) {
		i -= vq->size;
		*wrap = !*wrap;
	}
	*idx = (uint16_t)i;
}

/* The flags of the slot at the device's avail position (acquire). */
static __rte_always_inline bool
packed_head_ready(const struct vsw_virtq *vq)
{
	uint16_t f = __atomic_load_n(&vq->pdesc[vq->last_avail_idx].flags,
		__ATOMIC_ACQUIRE);

	return packed_avail(f, vq->avail_wrap);
}

/*
 * One chain in the ring from the avail position (direct descriptors linked
 * by NEXT, or one INDIRECT descriptor and its table). ring_n is how many
 * ring slots the chain took so far; id the buffer id of its last slot.
 */
struct virtq_pwalk {
	const struct vring_packed_desc *table; /* indirect, read in place */
	uint64_t table_gpa;
	uint32_t n;      /* indirect: entries in the table */
	uint32_t count;  /* indirect: entries taken */
	uint32_t ring_n; /* ring slots taken */
	uint16_t slot;   /* ring slot of the current ring descriptor */
	bool wrap;       /* its wrap counter */
	bool indirect;
	uint16_t flags;  /* current ring descriptor */
	uint16_t id;
	uint16_t dir;    /* VRING_DESC_F_WRITE (enqueue) or 0 (dequeue) */
	uint64_t gpa;    /* unconsumed rest of the current descriptor */
	uint64_t left;
	enum vsw_virtq_stat err;
};

int virtq_pwalk_start(struct vsw_virtq *vq, struct virtq_pwalk *w,
	uint16_t dir);
int virtq_pwalk_next(struct vsw_virtq *vq, struct virtq_pwalk *w);
int virtq_pwalk_skip(struct vsw_virtq *vq, struct virtq_pwalk *w);

/*
 * Skips the rest of the chain's ring slots (a chain used only in part, or
 * a bad one), so ring_n and id are the whole chain's. 0, or -1 when the
 * chain has no end (w->err set): the ring cannot go on. Inline for the
 * common case, a chain already at its last slot.
 */
static __rte_always_inline int
virtq_pwalk_finish(struct vsw_virtq *vq, struct virtq_pwalk *w)
{
	if (likely(!(w->flags & VRING_DESC_F_NEXT) &&
		    w->err != VSW_VIRTQ_STAT_ERR_DESC_NOT_AVAIL &&
		    w->err != VSW_VIRTQ_STAT_ERR_DESC_LOOP))
		return 0;
	return virtq_pwalk_skip(vq, w);
}

/* Like virtq_walk_span: 1 with a span, 0 at the chain's end, -1 (w->err). */
static __rte_always_inline int
virtq_pwalk_span(struct vsw_virtq *vq, struct virtq_pwalk *w, uint8_t **p,
	uint32_t *len)
{
	uint64_t contig;
	void *va;

	while (w->left == 0) {
		int rc;

		/* the common end (a direct chain's last slot) without a call */
		if (!w->indirect && !(w->flags & VRING_DESC_F_NEXT))
			return 0;
		rc = virtq_pwalk_next(vq, w);
		if (rc <= 0)
			return rc;
	}
	va = virtq_translate(vq->mem, w->gpa, w->left, &contig);
	if (unlikely(va == NULL)) {
		w->err = VSW_VIRTQ_STAT_ERR_DESC_ADDR;
		return -1;
	}
	*p = va;
	*len = (uint32_t)contig;
	w->gpa += contig;
	w->left -= contig;
	return 1;
}

static __rte_always_inline bool
packed_id_busy(const struct vsw_virtq *vq, uint16_t id)
{
	return (vq->inflight[id >> 6] >> (id & 63)) & 1;
}

static __rte_always_inline void
packed_id_clear(struct vsw_virtq *vq, uint32_t v)
{
	uint16_t id = PSHADOW_BUF(v);

	if (likely(id < vq->size))
		vq->inflight[id >> 6] &= ~(1ull << (id & 63));
}

/* A used entry for the end of the burst; its id is now in flight. */
static __rte_always_inline void
virtq_pshadow_push(struct vsw_virtq *vq, uint16_t id, uint32_t ndesc,
	uint32_t len)
{
	vq->shadow[vq->shadow_n].id = PSHADOW_ID(id, ndesc);
	vq->shadow[vq->shadow_n].len = len;
	vq->shadow_n++;
	if (likely(id < vq->size))
		vq->inflight[id >> 6] |= 1ull << (id & 63);
}

/* Drops shadow entries from `from` on (their ids leave flight). */
static inline void
virtq_pshadow_trim(struct vsw_virtq *vq, uint32_t from)
{
	uint32_t i;

	for (i = from; i < vq->shadow_n; i++)
		packed_id_clear(vq, vq->shadow[i].id);
	vq->shadow_n = from;
}

/* virtq_packed_notify.c: write the used descriptors, then kick if asked. */
void virtq_packed_flush(struct vsw_virtq *vq);

#endif /* VSW_VIRTQ_PACKED_H */

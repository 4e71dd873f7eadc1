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

/* Available: AVAIL matches the wrap counter, USED does not (2.8.1). One
 * mask and compare: lap 1 wants AVAIL alone, lap 0 USED alone. */
static __rte_always_inline bool
packed_avail(uint16_t flags, bool wrap)
{
	return (flags & (PACKED_F_AVAIL | PACKED_F_USED)) ==
		(wrap ? PACKED_F_AVAIL : PACKED_F_USED);
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

/*
 * Ring slots taken since the last flush (their used descriptors not yet
 * written): from the used position to the avail position. In a ring that
 * holds still a burst cannot take more than the ring's size, but a guest
 * that rewrites its ring during the burst (or puts its RX buffers on the
 * ring, so that the device's own copies rewrite it) can make taken slots
 * available again: more chains than the shadow holds, and a used position
 * that no longer follows the avail one. So nothing is taken past it.
 */
static __rte_always_inline uint32_t
packed_taken(const struct vsw_virtq *vq)
{
	uint32_t d = (uint32_t)vq->last_avail_idx - vq->last_used_idx;

	return vq->avail_wrap == vq->used_wrap ? d : d + vq->size;
}

/* The flags of the slot at the device's avail position (acquire), and
 * room for a chain (packed_taken). */
static __rte_always_inline bool
packed_head_ready(const struct vsw_virtq *vq)
{
	uint16_t f = __atomic_load_n(&vq->pdesc[vq->last_avail_idx].flags,
		__ATOMIC_ACQUIRE);

	return packed_avail(f, vq->avail_wrap) && packed_taken(vq) < vq->size;
}

/*
 * The fast batch (virtio_net.c's PACKED_BATCH_SIZE idea): four chains of
 * one descriptor each, read as one cache line. The position must be a
 * multiple of 4 and 4 slots short of the ring's end or closer (the batch
 * never wraps), the burst's budget must cover 4 chains, and all four must
 * be available in this lap with no NEXT or INDIRECT and the direction dir,
 * ids in range, distinct and not in flight. Then d[] holds them (read
 * after an acquire fence) and true; otherwise false, nothing taken: the
 * one-chain path takes them, with its checks and counters.
 */
#define PACKED_BATCH 4

static __rte_always_inline bool
packed_batch_read(const struct vsw_virtq *vq, struct vring_packed_desc *d,
	uint16_t dir)
{
	const uint16_t mask = PACKED_F_AVAIL | PACKED_F_USED |
		VRING_DESC_F_NEXT | VRING_DESC_F_INDIRECT | VRING_DESC_F_WRITE;
	const uint16_t want =
		(vq->avail_wrap ? PACKED_F_AVAIL : PACKED_F_USED) | dir;
	const volatile struct vring_packed_desc *r;
	uint32_t idx = vq->last_avail_idx, i;
	uint16_t bad = 0;

	if ((idx & (PACKED_BATCH - 1)) != 0 || idx + PACKED_BATCH > vq->size ||
		vq->budget < PACKED_BATCH ||
		packed_taken(vq) + PACKED_BATCH > vq->size)
		return false;
	r = &vq->pdesc[idx];
	for (i = 0; i < PACKED_BATCH; i++)
		bad |= (uint16_t)((r[i].flags & mask) ^ want);
	if (bad != 0)
		return false;
	/* the flags before the rest of each descriptor (2.8.6) */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	for (i = 0; i < PACKED_BATCH; i++) {
		d[i].addr = r[i].addr;
		d[i].len = r[i].len;
		d[i].id = r[i].id;
		if (unlikely(d[i].id >= vq->size ||
			    vq->id_stamp[d[i].id] == vq->id_gen))
			return false;
	}
	return d[0].id != d[1].id && d[0].id != d[2].id &&
		d[0].id != d[3].id && d[1].id != d[2].id &&
		d[1].id != d[3].id && d[2].id != d[3].id;
}

/* The batch is taken: its ids in flight, its shadow entries (lens[i] used
 * bytes), the avail position 4 on (never past the ring's end: at most to
 * it, which flips the wrap counter). */
static __rte_always_inline void
packed_batch_take(struct vsw_virtq *vq, const struct vring_packed_desc *d,
	const uint32_t *lens)
{
	uint32_t i, at = vq->shadow_n;

	for (i = 0; i < PACKED_BATCH; i++) {
		vq->id_stamp[d[i].id] = vq->id_gen;
		vq->shadow[at + i].id = PSHADOW_ID(d[i].id, 1);
		vq->shadow[at + i].len = lens[i];
	}
	vq->shadow_n = at + PACKED_BATCH;
	vq->budget -= PACKED_BATCH;
	vq->last_avail_idx = (uint16_t)(vq->last_avail_idx + PACKED_BATCH);
	if (vq->last_avail_idx == vq->size) {
		vq->last_avail_idx = 0;
		vq->avail_wrap = !vq->avail_wrap;
	}
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
	uint32_t room;   /* ring slots it may take (packed_taken) */
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

int virtq_pwalk_next(struct vsw_virtq *vq, struct virtq_pwalk *w);
int virtq_pwalk_skip(struct vsw_virtq *vq, struct virtq_pwalk *w);
/* The head is an INDIRECT descriptor d: enter its table (checked). */
int virtq_pwalk_indirect(struct vsw_virtq *vq, struct virtq_pwalk *w,
	const struct vring_packed_desc *d);

/*
 * Starts the walk at the avail position, whose head was seen available
 * (acquire): 0, or -1 with w->err (the chain is bad; virtq_pwalk_finish
 * still finds its end). Inline: one per chain, and the head needs neither
 * the lap test nor the length limit of the later slots (virtq_pwalk_next).
 */
static __rte_always_inline int
virtq_pwalk_start(struct vsw_virtq *vq, struct virtq_pwalk *w, uint16_t dir)
{
	const volatile struct vring_packed_desc *v =
		&vq->pdesc[vq->last_avail_idx];
	uint64_t addr = v->addr;
	uint32_t len = v->len;

	w->slot = vq->last_avail_idx;
	w->wrap = vq->avail_wrap;
	w->ring_n = 1;
	w->room = vq->size - packed_taken(vq);
	w->indirect = false;
	w->dir = dir;
	w->id = v->id;
	w->flags = v->flags;
	w->left = 0;
	w->err = VSW_VIRTQ_STAT__MAX;
	vq->budget--;
	if (unlikely(w->flags & VRING_DESC_F_INDIRECT)) {
		struct vring_packed_desc d = {addr, len, w->id, w->flags};

		return virtq_pwalk_indirect(vq, w, &d) < 0 ? -1 : 0;
	}
	if (unlikely(len == 0)) {
		w->err = VSW_VIRTQ_STAT_ERR_DESC_ZERO_LEN;
		return -1;
	}
	if (unlikely((w->flags & VRING_DESC_F_WRITE) != dir)) {
		w->err = VSW_VIRTQ_STAT_ERR_DESC_WRONG_DIR;
		return -1;
	}
	w->gpa = addr;
	w->left = len;
	return 0;
}

/*
 * Skips the rest of the chain's ring slots (a chain used only in part, or
 * a bad one), so ring_n and id are the whole chain's. 0, or -1 when the
 * chain has no end (w->err set): the ring cannot go on. Inline for the
 * common case, a chain already at its last slot.
 */
static __rte_always_inline int
virtq_pwalk_finish(struct vsw_virtq *vq, struct virtq_pwalk *w)
{
	/* a chain without an end keeps NEXT (virtq_packed_desc.c) */
	if (likely(!(w->flags & VRING_DESC_F_NEXT)))
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

/*
 * Buffer ids in the shadow (taken this burst): id_stamp[id] == id_gen. The
 * flush moves id_gen on, which releases them all at once.
 */
static __rte_always_inline bool
packed_id_busy(const struct vsw_virtq *vq, uint16_t id)
{
	return vq->id_stamp[id] == vq->id_gen;
}

/* id (< size, checked by the caller) is in flight from now on. */
static __rte_always_inline void
packed_id_take(struct vsw_virtq *vq, uint16_t id)
{
	vq->id_stamp[id] = vq->id_gen;
}

/* A used entry for the end of the burst (its id taken, or a bad one). */
static __rte_always_inline void
virtq_pshadow_push(struct vsw_virtq *vq, uint16_t id, uint32_t ndesc,
	uint32_t len)
{
	vq->shadow[vq->shadow_n].id = PSHADOW_ID(id, ndesc);
	vq->shadow[vq->shadow_n].len = len;
	vq->shadow_n++;
}

/* Drops shadow entries from `from` on (their ids leave flight). */
static inline void
virtq_pshadow_trim(struct vsw_virtq *vq, uint32_t from)
{
	uint32_t i;

	for (i = from; i < vq->shadow_n; i++) {
		uint16_t id = PSHADOW_BUF(vq->shadow[i].id);

		if (likely(id < vq->size))
			vq->id_stamp[id] = 0; /* id_gen is never 0 */
	}
	vq->shadow_n = from;
}

/*
 * virtq_packed_notify.c: write the used descriptors, then kick if asked.
 * batch (a TX burst with IN_ORDER, every entry len 0 with a valid id):
 * one used descriptor for the whole burst (the last chain's id at the
 * first chain's slot).
 */
void virtq_packed_flush(struct vsw_virtq *vq, bool batch);

#endif /* VSW_VIRTQ_PACKED_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packed descriptor-chain validation (virtio 1.1, 2.8.6, 2.8.7): loads the
 * ring descriptors of a chain from the avail position, and the entries of
 * an indirect table, checking what the guest controls: every descriptor
 * after the head marked available with the same lap (the driver writes the
 * head last, so a chain that runs into an unavailable slot has no end), no
 * more than chain_lim (min(size, VSW_VIRTQ_CHAIN_MAX)) ring slots, INDIRECT
 * only as a chain's one descriptor, the table length (multiple of 16, not
 * empty, <= chain_lim), no zero length, the direction flag. Inside a table only WRITE counts
 * (2.8.7: other flags and the id are reserved, ignored), and only on RX
 * (see pwalk_take).
 *
 * A chain whose end cannot be found (ERR_DESC_NOT_AVAIL, ERR_DESC_LOOP)
 * leaves no way to find the next chain: the callers break the ring. Any
 * other bad chain is skipped to its end (virtq_pwalk_finish) and returned.
 *
 * Every descriptor read (ring slot, table entry, slot skipped) is charged
 * to the burst's budget, as in virtq_desc.c; the bursts check it before
 * each chain. Skipping a chain longer than chain_lim reads at most the
 * ring's size of slots: the end must be found to go on. No chain runs
 * into the slots its burst took before it (w->room, packed_taken): that is
 * a loop too, as it can only be in a ring rewritten during the burst.
 *
 * Runs on the queue's poller; reads each descriptor once.
 */
#include "virtq_packed.h"

static int
pwalk_fail(struct virtq_pwalk *w, enum vsw_virtq_stat why)
{
	w->err = why;
	return -1;
}

static __rte_always_inline void
pdesc_read(const volatile struct vring_packed_desc *v,
	struct vring_packed_desc *d)
{
	d->addr = v->addr;
	d->len = v->len;
	d->id = v->id;
	d->flags = v->flags;
}

/*
 * Makes d (a direct descriptor or a table entry) the current span. dir_mask
 * is VRING_DESC_F_WRITE, or 0 for a TX table entry: DPDK's virtio driver
 * (22.11) leaves WRITE set on the header entry of its packed indirect TX
 * tables. Reading such a buffer harms nothing, so TX tables are taken as
 * they come; RX still needs WRITE everywhere.
 */
static __rte_always_inline int
pwalk_take(struct virtq_pwalk *w, const struct vring_packed_desc *d,
	uint16_t dir_mask)
{
	if (unlikely(d->len == 0))
		return pwalk_fail(w, VSW_VIRTQ_STAT_ERR_DESC_ZERO_LEN);
	if (unlikely((d->flags & dir_mask) != w->dir))
		return pwalk_fail(w, VSW_VIRTQ_STAT_ERR_DESC_WRONG_DIR);
	w->gpa = d->addr;
	w->left = d->len;
	return 1;
}

/* Entry w->count of the indirect table. */
static int
pwalk_table_next(struct vsw_virtq *vq, struct virtq_pwalk *w)
{
	struct vring_packed_desc d;
	uint64_t at = w->table_gpa + (uint64_t)w->count * sizeof(d);

	if (w->count == w->n)
		return 0;
	vq->budget--;
	if (likely(w->table != NULL))
		pdesc_read(&w->table[w->count], &d);
	else if (virtq_mem_read(vq->mem, &d, at, sizeof(d)) < 0)
		return pwalk_fail(w, VSW_VIRTQ_STAT_ERR_DESC_ADDR);
	w->count++;
	return pwalk_take(w, &d, w->dir);
}

int
virtq_pwalk_indirect(struct vsw_virtq *vq, struct virtq_pwalk *w,
	const struct vring_packed_desc *d)
{
	uint64_t contig;
	void *va;

	/* 2.8.7: not within a NEXT list, neither as its head nor later */
	if (unlikely(w->ring_n != 1 || (d->flags & VRING_DESC_F_NEXT)))
		return pwalk_fail(w, VSW_VIRTQ_STAT_ERR_INDIRECT_NEXT);
	if (unlikely(d->len == 0 || d->len % sizeof(*d) != 0 ||
		    d->len / sizeof(*d) > vq->chain_lim))
		return pwalk_fail(w, VSW_VIRTQ_STAT_ERR_INDIRECT_LEN);
	va = virtq_translate(vq->mem, d->addr, d->len, &contig);
	if (unlikely(va == NULL))
		return pwalk_fail(w, VSW_VIRTQ_STAT_ERR_DESC_ADDR);
	w->table = contig == d->len && ((uintptr_t)va & 7) == 0 ? va : NULL;
	w->table_gpa = d->addr;
	w->n = d->len / sizeof(*d);
	w->count = 0;
	w->indirect = true;
	return pwalk_table_next(vq, w);
}

/* The ring descriptor at w->slot, a later one of the chain (the head is
 * virtq_pwalk_start's, virtq_packed.h): available in the same lap. */
static __rte_always_inline int
pwalk_ring_load(struct vsw_virtq *vq, struct virtq_pwalk *w)
{
	struct vring_packed_desc d;

	vq->budget--;
	pdesc_read(&vq->pdesc[w->slot], &d);
	if (unlikely(!packed_avail(d.flags, w->wrap)))
		return pwalk_fail(w, VSW_VIRTQ_STAT_ERR_DESC_NOT_AVAIL);
	w->flags = d.flags;
	w->id = d.id;
	/* chain_lim <= size: a ring of at most CHAIN_MAX has no longer
	 * chain but a loop; a longer one is skipped (flags kept for it).
	 * Past room it runs into the burst's own slots: a loop too. */
	if (unlikely(++w->ring_n > vq->chain_lim || w->ring_n > w->room)) {
		if (w->ring_n <= w->room) /* skipped to its end */
			return pwalk_fail(w, VSW_VIRTQ_STAT_ERR_CHAIN_LEN);
		w->flags |= VRING_DESC_F_NEXT; /* no end: finish fails */
		return pwalk_fail(w, VSW_VIRTQ_STAT_ERR_DESC_LOOP);
	}
	if (d.flags & VRING_DESC_F_INDIRECT)
		return virtq_pwalk_indirect(vq, w, &d);
	return pwalk_take(w, &d, VRING_DESC_F_WRITE);
}

/* Next descriptor of the chain: 1 loaded, 0 at the end, -1 (w->err). */
int
virtq_pwalk_next(struct vsw_virtq *vq, struct virtq_pwalk *w)
{
	if (w->indirect)
		return pwalk_table_next(vq, w);
	if (!(w->flags & VRING_DESC_F_NEXT))
		return 0;
	packed_advance(vq, &w->slot, &w->wrap, 1);
	return pwalk_ring_load(vq, w);
}

/* virtq_pwalk_finish's slow path (virtq_packed.h). */
int
virtq_pwalk_skip(struct vsw_virtq *vq, struct virtq_pwalk *w)
{
	if (unlikely(w->err == VSW_VIRTQ_STAT_ERR_DESC_NOT_AVAIL ||
		    w->err == VSW_VIRTQ_STAT_ERR_DESC_LOOP))
		return -1;
	while (w->flags & VRING_DESC_F_NEXT) {
		const volatile struct vring_packed_desc *v;
		uint16_t f;

		packed_advance(vq, &w->slot, &w->wrap, 1);
		vq->budget--;
		v = &vq->pdesc[w->slot];
		f = v->flags;
		/* the checks of pwalk_ring_load, in its order */
		if (unlikely(!packed_avail(f, w->wrap))) {
			w->err = VSW_VIRTQ_STAT_ERR_DESC_NOT_AVAIL;
			return -1;
		}
		if (unlikely(++w->ring_n > w->room)) {
			w->err = VSW_VIRTQ_STAT_ERR_DESC_LOOP;
			return -1;
		}
		w->flags = f;
		w->id = v->id;
	}
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Descriptor-chain validation: loads each descriptor of a chain (direct or
 * through one indirect table) and checks everything the guest controls:
 * index < table size, no more descriptors than the table holds (loops),
 * at most VSW_VIRTQ_CHAIN_MAX buffer descriptors in the chain, indirect
 * table length (multiple of 16, not empty, <= min(ring size, CHAIN_MAX)),
 * no nested indirect, no INDIRECT|NEXT, no zero length, the direction
 * flag. Every descriptor read is charged to the burst's budget (one
 * decrement; the burst loops check it per chain). Addresses are checked
 * when spans are translated (virtq_walk_span).
 *
 * Runs on the queue's poller. Trusts the struct vsw_virtq and the region
 * table; trusts nothing in guest memory, and reads each descriptor once.
 */
#include <errno.h>

#include "virtq_priv.h"

static int
walk_fail(struct virtq_walk *w, enum vsw_virtq_stat why)
{
	w->err = why;
	return -1;
}

/* One descriptor of the current table, read once (the guest may change it). */
static int
walk_read(struct vsw_virtq *vq, struct virtq_walk *w, uint32_t idx,
	struct vring_desc *d)
{
	if (likely(w->table != NULL)) {
		const volatile struct vring_desc *v = &w->table[idx];

		d->addr = v->addr;
		d->len = v->len;
		d->flags = v->flags;
		d->next = v->next;
		return 0;
	}
	/* indirect table split over regions or unaligned: byte-wise */
	if (virtq_mem_read(vq->mem, d, w->table_gpa + (uint64_t)idx * 16,
		    sizeof(*d)) < 0)
		return walk_fail(w, VSW_VIRTQ_STAT_ERR_DESC_ADDR);
	return 0;
}

/* d is an INDIRECT descriptor of the ring's own table: switch to its table. */
static int
walk_enter_indirect(struct vsw_virtq *vq, struct virtq_walk *w,
	const struct vring_desc *d)
{
	uint64_t contig;
	void *va;

	if (unlikely(w->indirect))
		return walk_fail(w, VSW_VIRTQ_STAT_ERR_INDIRECT_NESTED);
	if (unlikely(d->flags & VRING_DESC_F_NEXT))
		return walk_fail(w, VSW_VIRTQ_STAT_ERR_INDIRECT_NEXT);
	if (unlikely(d->len == 0 || d->len % sizeof(struct vring_desc) != 0 ||
		    d->len / sizeof(struct vring_desc) > vq->chain_lim))
		return walk_fail(w, VSW_VIRTQ_STAT_ERR_INDIRECT_LEN);
	va = virtq_translate(vq->mem, d->addr, d->len, &contig);
	if (unlikely(va == NULL))
		return walk_fail(w, VSW_VIRTQ_STAT_ERR_DESC_ADDR);
	/* read in place only when whole and aligned; else copy per entry */
	if (contig == d->len && ((uintptr_t)va & 7) == 0)
		w->table = va;
	else
		w->table = NULL;
	w->table_gpa = d->addr;
	w->ring_n = (uint16_t)w->count;
	w->n = d->len / sizeof(struct vring_desc);
	/* the ring's descriptors before it, less the INDIRECT one, are
	 * buffers too: the chain's total stays within CHAIN_MAX */
	w->lim = RTE_MIN(w->n, VSW_VIRTQ_CHAIN_MAX + 1 - w->count);
	w->count = 0;
	w->indirect = true;
	return 0;
}

/*
 * Makes descriptor idx of the current table the current one; enters an
 * indirect table (and loads its entry 0) when idx points to one.
 */
int
virtq_walk_load(struct vsw_virtq *vq, struct virtq_walk *w, uint32_t idx)
{
	struct vring_desc d;

	for (;;) {
		if (unlikely(idx >= w->n))
			return walk_fail(w, VSW_VIRTQ_STAT_ERR_DESC_INDEX);
		if (unlikely(++w->count > w->lim))
			return walk_fail(w, w->count > w->n ?
					VSW_VIRTQ_STAT_ERR_DESC_LOOP :
					VSW_VIRTQ_STAT_ERR_CHAIN_LEN);
		vq->budget--;
		if (unlikely(walk_read(vq, w, idx, &d) < 0))
			return -1;
		if (!(d.flags & VRING_DESC_F_INDIRECT))
			break;
		if (walk_enter_indirect(vq, w, &d) < 0)
			return -1;
		idx = 0;
	}
	if (unlikely(d.len == 0))
		return walk_fail(w, VSW_VIRTQ_STAT_ERR_DESC_ZERO_LEN);
	if (unlikely((d.flags & VRING_DESC_F_WRITE) != w->dir))
		return walk_fail(w, VSW_VIRTQ_STAT_ERR_DESC_WRONG_DIR);
	w->flags = d.flags;
	w->next = d.next;
	w->gpa = d.addr;
	w->left = d.len;
	return 0;
}

/* head was checked < size by the caller (else the ring is broken). */
int
virtq_walk_start(struct vsw_virtq *vq, struct virtq_walk *w, uint16_t head,
	uint16_t dir)
{
	w->table = vq->desc;
	w->n = vq->size;
	w->lim = vq->chain_lim;
	w->count = 0;
	w->dir = dir;
	w->indirect = false;
	w->left = 0;
	return virtq_walk_load(vq, w, head);
}

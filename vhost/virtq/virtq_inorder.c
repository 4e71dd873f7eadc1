/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * VIRTIO_F_IN_ORDER on split rings (virtio 1.1 2.6.9): the device uses
 * buffers in the order they were made available, so it may report a batch
 * with one used entry, the id of the batch's last chain, written at the
 * batch's first used slot, and advance used->idx by the batch's size.
 *
 * vsw does this on TX queues (dequeue), where every used length is 0: one
 * 8-byte store per burst instead of one per chain, so one used-ring line
 * crosses to the guest's core instead of up to four. RX queues (enqueue)
 * keep one entry per chain: each carries its own length (DPDK's in-order
 * receive path reads the length of every slot).
 *
 * A guest that negotiates IN_ORDER but posts chains out of ring order only
 * gets what it asked for less efficiently: the burst is published one
 * entry per chain (always correct) and counted as DEQ_INORDER_MISS. vsw's
 * own state never depends on the order. A dropped chain (bad descriptor,
 * no mbuf) also makes its burst go out one entry per chain: how many
 * descriptors it took is unknown then.
 *
 * Runs on the queue's poller; reads nothing from guest memory.
 */
#include "virtq_priv.h"

void
virtq_inorder_miss(struct vsw_virtq *vq)
{
	virtq_count(vq, VSW_VIRTQ_STAT_DEQ_INORDER_MISS, 1);
	virtq_log_guest(vq, "in-order tx chains out of ring order");
}

void
virtq_inorder_flush_used(struct vsw_virtq *vq, bool ordered)
{
	uint32_t mask = vq->size - 1, n = vq->shadow_n, i;
	uint16_t used = vq->last_used_idx;

	if (n != 0) {
		if (likely(ordered)) {
			struct vring_used_elem *e = &vq->used->ring[used & mask];

			e->id = vq->shadow[n - 1].id;
			e->len = vq->shadow[n - 1].len;
		} else {
			for (i = 0; i < n; i++) {
				struct vring_used_elem *e =
					&vq->used->ring[(used + i) & mask];

				e->id = vq->shadow[i].id;
				e->len = vq->shadow[i].len;
			}
		}
		virtq_used_publish(vq, n);
	}
	if (unlikely(virtq_logging(vq)))
		virtq_log_flush(vq);
}

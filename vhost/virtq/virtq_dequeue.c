/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Guest -> host (the guest's TX queue): takes chains from the avail ring,
 * skips the virtio-net header wherever it lies (split over descriptors or
 * sharing one with data), copies the frame through vsw_copy() into mbufs
 * from the caller's mempool (chained when longer than one mbuf), and
 * returns every chain used (len 0: the device wrote nothing). A burst
 * stops taking chains when its descriptor budget is spent (<vsw/virtq.h>).
 *
 * Runs on the queue's poller; no locks, no allocation besides mbufs.
 * Trusts the struct vsw_virtq; every descriptor is checked by the walker.
 */
#include <rte_mbuf.h>

#include <vsw/copy.h>

#include "virtq_priv.h"

/* Appends a fresh segment to m after seg; NULL when the pool is empty. */
static struct rte_mbuf *
seg_append(struct rte_mempool *mp, struct rte_mbuf *m, struct rte_mbuf *seg)
{
	struct rte_mbuf *s = rte_pktmbuf_alloc(mp);

	if (unlikely(s == NULL))
		return NULL;
	s->data_off = 0; /* only the head needs headroom */
	seg->next = s;
	m->nb_segs++;
	return s;
}

/*
 * Places the head's data at the guest frame's offset within a cache line,
 * so this copy is co-aligned, and so is the data copy of a later enqueue
 * into a guest RX buffer that starts aligned (data 12 bytes in, like the
 * frame of a TX buffer). Headroom stays 65..128 bytes. Measured with
 * bench/vsw-bench-virtq (glibc memcpy as vsw_copy): dequeue -4..-16% at
 * 1518..9000 B, enqueue of such mbufs -5..-11% at 1024..9000 B; both
 * +3..9% at 256..512 B, hence only for frames starting with >= 1 KiB.
 */
static __rte_always_inline void
deq_align_head(struct rte_mbuf *m, const uint8_t *src, uint8_t **dst,
	uint32_t *room)
{
	uintptr_t low = (uintptr_t)m->buf_addr + RTE_PKTMBUF_HEADROOM - 63;

	if (RTE_PKTMBUF_HEADROOM < 128 || m->data_off != RTE_PKTMBUF_HEADROOM)
		return;
	m->data_off = (uint16_t)(RTE_PKTMBUF_HEADROOM - 63 +
		(((uintptr_t)src - low) & 63));
	*dst = rte_pktmbuf_mtod(m, uint8_t *);
	*room = rte_pktmbuf_tailroom(m);
}

/*
 * Copies one chain's frame into m (a fresh head). Returns 0, or the
 * DEQ_DROP_* counter; a bad descriptor also sets *why (ERR_*). With offl
 * (constant per burst) the virtio-net header is kept in *hdr. On success
 * *ndesc is how many ring descriptors the chain took (in-order bursts).
 */
static __rte_always_inline int
dequeue_chain(struct vsw_virtq *vq, struct rte_mempool *mp,
	struct rte_mbuf *m, uint16_t head, enum vsw_virtq_stat *why,
	bool offl, uint8_t *hdr, uint32_t *ndesc)
{
	struct rte_mbuf *seg = m;
	uint8_t *dst = rte_pktmbuf_mtod(m, uint8_t *);
	uint32_t room = rte_pktmbuf_tailroom(m);
	uint32_t skip = vq->hdr_len;
	uint64_t total = 0;
	bool first = vq->deq_align;
	struct virtq_walk w;
	uint8_t *src;
	uint32_t len;
	int rc;

	if (unlikely(virtq_walk_start(vq, &w, head, 0) < 0))
		goto bad;
	while ((rc = virtq_walk_span(vq, &w, &src, &len)) > 0) {
		total += len;
		if (unlikely(total > vq->max_pkt_len))
			return VSW_VIRTQ_STAT_DEQ_DROP_TOO_LARGE;
		if (unlikely(skip != 0)) {
			uint32_t k = RTE_MIN(skip, len);

			if (offl)
				memcpy(hdr + (vq->hdr_len - skip), src, k);
			skip -= k;
			src += k;
			len -= k;
		}
		if (unlikely(first) && len != 0) {
			first = false;
			/* measured: costs 3-5% at 256..512 B, pays above */
			if (len >= 1024)
				deq_align_head(m, src, &dst, &room);
		}
		while (len != 0) {
			uint32_t k;

			if (unlikely(room == 0)) {
				seg = seg_append(mp, m, seg);
				if (seg == NULL)
					return VSW_VIRTQ_STAT_DEQ_DROP_NO_MBUF;
				dst = rte_pktmbuf_mtod(seg, uint8_t *);
				room = rte_pktmbuf_tailroom(seg);
			}
			k = RTE_MIN(len, room);
			vsw_copy(dst, src, VIRTQ_COPY_LEN(k));
			dst += k;
			src += k;
			len -= k;
			room -= k;
			seg->data_len += k;
		}
	}
	if (unlikely(rc < 0))
		goto bad;
	if (unlikely(total <= vq->hdr_len))
		return VSW_VIRTQ_STAT_DEQ_DROP_SHORT_HDR;
	m->pkt_len = (uint32_t)(total - vq->hdr_len);
	*ndesc = virtq_walk_ring_descs(&w);
	return 0;
bad:
	*why = w.err;
	return VSW_VIRTQ_STAT_DEQ_DROP_BAD_DESC;
}

static __rte_noinline void
dequeue_drop(struct vsw_virtq *vq, struct rte_mbuf *m, uint16_t head,
	int reason, enum vsw_virtq_stat why)
{
	virtq_count(vq, (enum vsw_virtq_stat)reason, 1);
	if (reason == VSW_VIRTQ_STAT_DEQ_DROP_BAD_DESC) {
		virtq_count(vq, why, 1);
		virtq_log_guest(vq, "tx chain %u dropped: %s", head,
			vsw_virtq_stat_name(why));
	} else if (reason != VSW_VIRTQ_STAT_DEQ_DROP_NO_MBUF) {
		virtq_log_guest(vq, "tx chain %u dropped: %s", head,
			vsw_virtq_stat_name((enum vsw_virtq_stat)reason));
	}
	/* keep the head for the next chain */
	rte_pktmbuf_free(m->next);
	rte_pktmbuf_reset(m);
}

/* Heads for up to n chains: all at once, else as many as the pool has. */
static uint16_t
alloc_heads(struct rte_mempool *mp, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t i;

	if (likely(rte_pktmbuf_alloc_bulk(mp, pkts, n) == 0))
		return n;
	for (i = 0; i < n; i++) {
		pkts[i] = rte_pktmbuf_alloc(mp);
		if (pkts[i] == NULL)
			break;
	}
	return i;
}

/* With offl: the header's offload fields checked and mapped (once). */
static __rte_always_inline int
dequeue_offload(struct vsw_virtq *vq, struct rte_mbuf *m,
	const struct vsw_virtio_net_hdr *h, uint64_t *gso, uint64_t *csum)
{
	int rc = vsw_virtq_net_hdr_to_mbuf(h, m, vq->features);

	*gso += (m->ol_flags & RTE_MBUF_F_TX_TCP_SEG) != 0;
	*csum += (m->ol_flags & RTE_MBUF_F_TX_L4_MASK) != 0;
	return rc;
}

/* Chains ready for a burst of at most n; 0 when none or the ring broke. */
static __rte_always_inline uint16_t
dequeue_ready(struct vsw_virtq *vq, uint16_t n)
{
	int avail;

	if (unlikely(vq->broken))
		return 0;
	avail = virtq_avail_count(vq);
	if (unlikely(avail < 0)) {
		virtq_break(vq, VSW_VIRTQ_STAT_ERR_AVAIL_IDX, "avail idx",
			vq->avail->idx);
		return 0;
	}
	return RTE_MIN(n, (uint16_t)avail);
}

/* A burst's tallies, counted once at its end. */
struct deq_tally {
	uint64_t bytes;
	uint64_t gso;
	uint64_t csum;
	uint16_t out;
	bool ordered; /* inorder: every head followed its predecessor */
	bool miss;
};

static __rte_always_inline void
dequeue_finish(struct vsw_virtq *vq, struct rte_mbuf **pkts, uint16_t count,
	const struct deq_tally *t, bool offl, bool inorder)
{
	if (t->out < count)
		rte_pktmbuf_free_bulk(&pkts[t->out], count - t->out);
	virtq_count(vq, VSW_VIRTQ_STAT_DEQ_PACKETS, t->out);
	virtq_count(vq, VSW_VIRTQ_STAT_DEQ_BYTES, t->bytes);
	if (offl) {
		virtq_count(vq, VSW_VIRTQ_STAT_DEQ_GSO_PACKETS, t->gso);
		virtq_count(vq, VSW_VIRTQ_STAT_DEQ_CSUM_PARTIAL, t->csum);
	}
	if (inorder) {
		if (unlikely(t->miss))
			virtq_inorder_miss(vq);
		virtq_inorder_flush_used(vq, t->ordered);
	} else
		virtq_flush_used(vq);
}

/*
 * While chain i copies, the next chain's buffer (its descriptor was
 * prefetched one chain earlier) and the descriptor after it are fetched:
 * only chains of this burst, i.e. published ones.
 */
static __rte_always_inline void
dequeue_prefetch(struct vsw_virtq *vq, uint16_t i, uint16_t count)
{
	if (i + 1 < count)
		virtq_prefetch_buf(
			vq, (uint16_t)(vq->last_avail_idx + 1), false);
	if (i + 2 < count)
		virtq_prefetch_desc(vq, (uint16_t)(vq->last_avail_idx + 2));
}

/*
 * offl and inorder are constant per call site: four specialisations, no
 * per-packet test of the features. inorder (split ring, IN_ORDER): each
 * head should follow the previous chain's descriptors; when all of the
 * burst's do, its used entries go out as one (virtq_inorder.c).
 */
static __rte_always_inline uint16_t
dequeue_burst(struct vsw_virtq *vq, struct rte_mempool *mp,
	struct rte_mbuf **pkts, uint16_t n, bool offl, bool inorder)
{
	struct deq_tally t = {.ordered = true};
	enum vsw_virtq_stat why = VSW_VIRTQ_STAT__MAX;
	struct vsw_virtio_net_hdr h;
	uint16_t i, count, expect = 0;

	if (vq->packed) /* fixed per queue: one predictable branch a burst */
		return virtq_packed_dequeue_burst(vq, mp, pkts, n);
	count = dequeue_ready(vq, n);
	if (count == 0)
		return 0;
	/* the first descriptors arrive while the heads are allocated */
	virtq_prefetch_desc(vq, vq->last_avail_idx);
	if (count > 1)
		virtq_prefetch_desc(vq, (uint16_t)(vq->last_avail_idx + 1));
	/* no mbuf, no chain taken: the guest's packets wait in its ring */
	count = alloc_heads(mp, pkts, count);
	virtq_budget_reset(vq);
	for (i = 0; i < count; i++) {
		uint16_t head = virtq_avail_head(vq, vq->last_avail_idx);
		struct rte_mbuf *m = pkts[t.out];
		uint32_t ndesc = 0;
		int rc;

		/* the rest stays in the ring for the next burst */
		if (unlikely(virtq_budget_spent(vq))) {
			virtq_count(vq, VSW_VIRTQ_STAT_BUDGET_CUT, 1);
			break;
		}
		if (unlikely(head >= vq->size)) {
			virtq_break(vq, VSW_VIRTQ_STAT_ERR_DESC_INDEX,
				"avail head", head);
			break;
		}
		dequeue_prefetch(vq, i, count);
		vq->last_avail_idx++;
		/* after a drop the expected head is unknown: not checked */
		if (inorder && i != 0 && t.ordered &&
			unlikely(head != expect)) {
			t.ordered = false;
			t.miss = true;
		}
		rc = dequeue_chain(vq, mp, m, head, &why, offl, (uint8_t *)&h,
			&ndesc);
		if (inorder) {
			if (unlikely(rc != 0))
				t.ordered = false; /* ndesc unknown */
			expect = (uint16_t)((head + ndesc) & (vq->size - 1));
		}
		if (offl && rc == 0)
			rc = dequeue_offload(vq, m, &h, &t.gso, &t.csum);
		virtq_shadow_push(vq, head, 0);
		if (likely(rc == 0)) {
			t.bytes += m->pkt_len;
			t.out++;
		} else {
			dequeue_drop(vq, m, head, rc, why);
		}
	}
	dequeue_finish(vq, pkts, count, &t, offl, inorder);
	return t.out;
}

static __rte_noinline uint16_t
dequeue_burst_plain(struct vsw_virtq *vq, struct rte_mempool *mp,
	struct rte_mbuf **pkts, uint16_t n)
{
	return dequeue_burst(vq, mp, pkts, n, false, false);
}

static __rte_noinline uint16_t
dequeue_burst_offl(struct vsw_virtq *vq, struct rte_mempool *mp,
	struct rte_mbuf **pkts, uint16_t n)
{
	return dequeue_burst(vq, mp, pkts, n, true, false);
}

static __rte_noinline uint16_t
dequeue_burst_plain_inorder(struct vsw_virtq *vq, struct rte_mempool *mp,
	struct rte_mbuf **pkts, uint16_t n)
{
	return dequeue_burst(vq, mp, pkts, n, false, true);
}

static __rte_noinline uint16_t
dequeue_burst_offl_inorder(struct vsw_virtq *vq, struct rte_mempool *mp,
	struct rte_mbuf **pkts, uint16_t n)
{
	return dequeue_burst(vq, mp, pkts, n, true, true);
}

uint16_t
vsw_virtq_dequeue_burst(struct vsw_virtq *vq, struct rte_mempool *mp,
	struct rte_mbuf **pkts, uint16_t n)
{
	if (vq->in_order) /* fixed per queue, like the features below */
		return vq->features & VSW_VIRTQ_F_DEQ_OFFLOADS
			? dequeue_burst_offl_inorder(vq, mp, pkts, n)
			: dequeue_burst_plain_inorder(vq, mp, pkts, n);
	if (vq->features & VSW_VIRTQ_F_DEQ_OFFLOADS)
		return dequeue_burst_offl(vq, mp, pkts, n);
	return dequeue_burst_plain(vq, mp, pkts, n);
}

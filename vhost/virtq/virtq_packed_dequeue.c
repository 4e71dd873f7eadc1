/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Guest -> host on a packed ring: the same copy as virtq_dequeue.c (header
 * skipped wherever it lies, frame copied through vsw_copy() into chained
 * mbufs from the caller's pool), fed by the packed walker. Chains are
 * taken in ring order while the slot at the avail position is available;
 * each goes back as one used descriptor (len 0) at the end of the burst,
 * or, with VIRTIO_F_IN_ORDER, the whole burst as one.
 * With checksum/TSO offloads negotiated the header is kept and mapped onto
 * the mbuf as on split rings (vsw_virtq_net_hdr_to_mbuf).
 *
 * Runs on the queue's poller; no locks, no allocation besides mbufs.
 */
#include <string.h>

#include <rte_mbuf.h>

#include <vsw/copy.h>

#include "virtq_packed.h"

static struct rte_mbuf *
pseg_append(struct rte_mempool *mp, struct rte_mbuf *m, struct rte_mbuf *seg)
{
	struct rte_mbuf *s = rte_pktmbuf_alloc(mp);

	if (unlikely(s == NULL))
		return NULL;
	s->data_off = 0; /* only the head needs headroom */
	seg->next = s;
	m->nb_segs++;
	return s;
}

/* As deq_align_head in virtq_dequeue.c (measured there). */
static __rte_always_inline void
pdeq_align_head(struct rte_mbuf *m, const uint8_t *src, uint8_t **dst,
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

/* Copies the chain's frame into m; 0 or the DEQ_DROP_* counter. With offl
 * (constant per burst) the virtio-net header is kept in hdr. */
static __rte_always_inline int
pdequeue_chain(struct vsw_virtq *vq, struct rte_mempool *mp,
	struct rte_mbuf *m, struct virtq_pwalk *w, bool offl, uint8_t *hdr)
{
	struct rte_mbuf *seg = m;
	uint8_t *dst = rte_pktmbuf_mtod(m, uint8_t *);
	uint32_t room = rte_pktmbuf_tailroom(m);
	uint32_t skip = vq->hdr_len;
	uint64_t total = 0;
	bool first = vq->deq_align;
	uint8_t *src;
	uint32_t len;
	int rc;

	if (unlikely(virtq_pwalk_start(vq, w, 0) < 0))
		return VSW_VIRTQ_STAT_DEQ_DROP_BAD_DESC;
	while ((rc = virtq_pwalk_span(vq, w, &src, &len)) > 0) {
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
			if (len >= 1024)
				pdeq_align_head(m, src, &dst, &room);
		}
		while (len != 0) {
			uint32_t k;

			if (unlikely(room == 0)) {
				seg = pseg_append(mp, m, seg);
				if (seg == NULL)
					return VSW_VIRTQ_STAT_DEQ_DROP_NO_MBUF;
				dst = rte_pktmbuf_mtod(seg, uint8_t *);
				room = rte_pktmbuf_tailroom(seg);
			}
			k = RTE_MIN(len, room);
			vsw_copy(dst, src, k);
			dst += k;
			src += k;
			len -= k;
			room -= k;
			seg->data_len += k;
		}
	}
	if (unlikely(rc < 0))
		return VSW_VIRTQ_STAT_DEQ_DROP_BAD_DESC;
	if (unlikely(total <= vq->hdr_len))
		return VSW_VIRTQ_STAT_DEQ_DROP_SHORT_HDR;
	m->pkt_len = (uint32_t)(total - vq->hdr_len);
	return 0;
}

static __rte_noinline void
pdequeue_drop(struct vsw_virtq *vq, struct rte_mbuf *m, uint16_t id,
	int reason, enum vsw_virtq_stat why)
{
	virtq_count(vq, (enum vsw_virtq_stat)reason, 1);
	if (reason == VSW_VIRTQ_STAT_DEQ_DROP_BAD_DESC) {
		virtq_count(vq, why, 1);
		virtq_log_guest(vq, "tx buffer %u dropped: %s", id,
			vsw_virtq_stat_name(why));
	} else if (reason != VSW_VIRTQ_STAT_DEQ_DROP_NO_MBUF) {
		virtq_log_guest(vq, "tx buffer %u dropped: %s", id,
			vsw_virtq_stat_name((enum vsw_virtq_stat)reason));
	}
	rte_pktmbuf_free(m->next);
	rte_pktmbuf_reset(m);
}

static uint16_t
palloc_heads(struct rte_mempool *mp, struct rte_mbuf **pkts, uint16_t n)
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

/*
 * One chain into m: 0 delivered, else dropped (counted, m reset); -1 when
 * the chain has no end (the ring is broken, nothing taken).
 */
static __rte_always_inline int
pdequeue_one(struct vsw_virtq *vq, struct rte_mempool *mp, struct rte_mbuf *m,
	bool offl, bool *ids_ok)
{
	struct vsw_virtio_net_hdr h = {0};
	struct virtq_pwalk w;
	int rc = pdequeue_chain(vq, mp, m, &w, offl, (uint8_t *)&h);

	if (unlikely(virtq_pwalk_finish(vq, &w) < 0)) {
		virtq_break(vq, w.err, "tx chain at slot", vq->last_avail_idx);
		rte_pktmbuf_free(m->next);
		rte_pktmbuf_reset(m);
		return -1;
	}
	if (unlikely(w.id >= vq->size || packed_id_busy(vq, w.id))) {
		*ids_ok = false; /* no batch can name it */
		if (rc != VSW_VIRTQ_STAT_DEQ_DROP_BAD_DESC) {
			rc = VSW_VIRTQ_STAT_DEQ_DROP_BAD_DESC;
			w.err = VSW_VIRTQ_STAT_ERR_DESC_ID;
		}
	} else {
		packed_id_take(vq, w.id);
	}
	if (offl && rc == 0)
		rc = vsw_virtq_net_hdr_to_mbuf(&h, m, vq->features);
	virtq_pshadow_push(vq, w.id, w.ring_n, 0);
	packed_advance(vq, &vq->last_avail_idx, &vq->avail_wrap, w.ring_n);
	if (unlikely(rc != 0))
		pdequeue_drop(vq, m, w.id, rc, w.err);
	return rc;
}

/*
 * Four one-descriptor chains into m[0..3] (packed_batch_read): each frame
 * after the header in one guest region and one mbuf, no longer than
 * max_pkt_len; true when taken (all four delivered), false to take them
 * one by one. Without offloads only (the header is skipped unread).
 */
static __rte_always_inline bool
pdequeue_batch(struct vsw_virtq *vq, struct rte_mbuf **m, uint64_t *bytes)
{
	struct vring_packed_desc d[PACKED_BATCH];
	const uint32_t lens[PACKED_BATCH] = {0};
	const uint8_t *src[PACKED_BATCH];
	uint32_t i, hl = vq->hdr_len;

	if (!packed_batch_read(vq, d, 0))
		return false;
	for (i = 0; i < PACKED_BATCH; i++) {
		uint64_t contig;

		if (unlikely(d[i].len <= hl || d[i].len > vq->max_pkt_len ||
			    d[i].len - hl > rte_pktmbuf_tailroom(m[i])))
			return false;
		src[i] = virtq_translate(vq->mem, d[i].addr, d[i].len,
			&contig);
		if (unlikely(src[i] == NULL || contig != d[i].len))
			return false;
	}
	for (i = 0; i < PACKED_BATCH; i++) {
		const uint8_t *s = src[i] + hl;
		uint32_t len = d[i].len - hl, room;
		uint8_t *dst = rte_pktmbuf_mtod(m[i], uint8_t *);

		if (vq->deq_align && len >= 1024)
			pdeq_align_head(m[i], s, &dst, &room);
		vsw_copy(dst, s, len);
		m[i]->data_len = (uint16_t)len;
		m[i]->pkt_len = len;
		*bytes += len;
	}
	packed_batch_take(vq, d, lens);
	return true;
}

/*
 * offl and inorder are constant per call site: four specialisations.
 * inorder (VIRTIO_F_IN_ORDER): the burst goes back as one used descriptor
 * unless a chain's id was out of range or already taken (then one each,
 * as without the feature; that chain is dropped and counted).
 */
static __rte_always_inline uint16_t
pdequeue_burst(struct vsw_virtq *vq, struct rte_mempool *mp,
	struct rte_mbuf **pkts, uint16_t n, bool offl, bool inorder)
{
	uint64_t bytes = 0, gso = 0, csum = 0;
	uint16_t i, count, out = 0;
	bool ids_ok = true;

	if (unlikely(vq->broken) || n == 0 || !packed_head_ready(vq))
		return 0;
	/* no mbuf, no chain taken: the guest's packets wait in its ring */
	count = palloc_heads(mp, pkts, n);
	virtq_budget_reset(vq);
	for (i = 0; i < count; i++) {
		struct rte_mbuf *m = pkts[out];
		int rc;

		if (i != 0 && !packed_head_ready(vq))
			break;
		/* the rest stays in the ring for the next burst */
		if (unlikely(virtq_budget_spent(vq))) {
			virtq_count(vq, VSW_VIRTQ_STAT_BUDGET_CUT, 1);
			break;
		}
		/* pkts[out..] are fresh (or reset) mbufs, count - i of them */
		if (!offl && count - i >= PACKED_BATCH &&
			pdequeue_batch(vq, &pkts[out], &bytes)) {
			out += PACKED_BATCH;
			i += PACKED_BATCH - 1;
			continue;
		}
		rc = pdequeue_one(vq, mp, m, offl, &ids_ok);
		if (likely(rc == 0)) {
			bytes += m->pkt_len;
			out++;
			if (offl) {
				gso += (m->ol_flags & RTE_MBUF_F_TX_TCP_SEG) != 0;
				csum += (m->ol_flags & RTE_MBUF_F_TX_L4_MASK) != 0;
			}
		} else if (rc < 0) {
			break;
		}
	}
	if (out < count)
		rte_pktmbuf_free_bulk(&pkts[out], count - out);
	virtq_count(vq, VSW_VIRTQ_STAT_DEQ_PACKETS, out);
	virtq_count(vq, VSW_VIRTQ_STAT_DEQ_BYTES, bytes);
	if (offl) {
		virtq_count(vq, VSW_VIRTQ_STAT_DEQ_GSO_PACKETS, gso);
		virtq_count(vq, VSW_VIRTQ_STAT_DEQ_CSUM_PARTIAL, csum);
	}
	virtq_packed_flush(vq, inorder && ids_ok);
	return out;
}

static __rte_noinline uint16_t
pdequeue_burst_plain(struct vsw_virtq *vq, struct rte_mempool *mp,
	struct rte_mbuf **pkts, uint16_t n)
{
	return pdequeue_burst(vq, mp, pkts, n, false, false);
}

static __rte_noinline uint16_t
pdequeue_burst_offl(struct vsw_virtq *vq, struct rte_mempool *mp,
	struct rte_mbuf **pkts, uint16_t n)
{
	return pdequeue_burst(vq, mp, pkts, n, true, false);
}

static __rte_noinline uint16_t
pdequeue_burst_plain_inorder(struct vsw_virtq *vq, struct rte_mempool *mp,
	struct rte_mbuf **pkts, uint16_t n)
{
	return pdequeue_burst(vq, mp, pkts, n, false, true);
}

static __rte_noinline uint16_t
pdequeue_burst_offl_inorder(struct vsw_virtq *vq, struct rte_mempool *mp,
	struct rte_mbuf **pkts, uint16_t n)
{
	return pdequeue_burst(vq, mp, pkts, n, true, true);
}

uint16_t
virtq_packed_dequeue_burst(struct vsw_virtq *vq, struct rte_mempool *mp,
	struct rte_mbuf **pkts, uint16_t n)
{
	bool offl = vq->features & VSW_VIRTQ_F_DEQ_OFFLOADS;

	if (vq->in_order) /* fixed per queue, like the features */
		return offl ? pdequeue_burst_offl_inorder(vq, mp, pkts, n)
			    : pdequeue_burst_plain_inorder(vq, mp, pkts, n);
	if (unlikely(offl))
		return pdequeue_burst_offl(vq, mp, pkts, n);
	return pdequeue_burst_plain(vq, mp, pkts, n);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Host -> guest (the guest's RX queue): copies each mbuf (any number of
 * segments) behind a virtio-net header into the guest's posted buffers,
 * through vsw_copy(). With MRG_RXBUF a packet spreads over as many chains
 * as it needs and num_buffers says how many; without it a packet must fit
 * one chain. Used entries collect in the shadow ring and are published once
 * per burst (virtq_notify.c).
 *
 * Deferred copies: without dirty logging, a frame's copies of at most
 * VIRTQ_DEFER_LEN bytes (past the header, from mbuf data) are noted in
 * vq->defer and done after the burst's last chain was walked, so the
 * buffers' misses of a burst overlap (each chain's first lines were
 * prefetched as it was taken); larger copies run at once. A packet that
 * fails drops its noted copies (its chains may go to the next packet).
 *
 * Co-alignment: with cfg.hdr_coalign, when the first mbuf segment is ours
 * alone (direct, refcnt 1) and has headroom, the header is written into
 * that headroom so header and data go to the guest as one run. Measured
 * (bench/vsw-bench-virtq, glibc memcpy as vsw_copy): no better than
 * copying the header on its own when the mbuf data is already co-aligned
 * (dequeue's deq_align does that), and 5..20% slower at 64..512 B (the
 * 12-byte store is reloaded at once by wider loads: a store-forwarding
 * stall). So it is off by default; re-measure with the real copy engine.
 *
 * Runs on the queue's poller; no locks, no allocation. The mbufs are
 * trusted (they come from the switch); every descriptor is checked by the
 * walker (virtq_desc.c).
 */
#include <rte_byteorder.h>
#include <rte_mbuf.h>

#include <vsw/copy.h>

#include "virtq_priv.h"

/* A packet's progress through the guest's chains. */
struct enq_pkt {
	struct virtq_walk w;
	uint16_t head;
	uint16_t nbufs;
	uint32_t chain_len;  /* bytes written into the current chain */
	uint32_t off;        /* header + frame bytes written so far */
	uint8_t *nb[2];      /* num_buffers in guest memory (may be split) */
	uint64_t nb_gpa[2];  /* their guest addresses (dirty logging) */
	uint16_t start_avail;
	uint32_t start_shadow;
	uint32_t start_defer;
	uint16_t avail_end;
};

/* Result of one packet, beyond the ENQ_DROP_* counters. */
#define ENQ_OK 0
#define ENQ_BROKEN (-1)

/* Undo a packet that cannot be placed: its chains stay posted. */
static int
enq_rollback(struct vsw_virtq *vq, struct enq_pkt *p, int reason)
{
	vq->last_avail_idx = p->start_avail;
	vq->shadow_n = p->start_shadow;
	return reason;
}

/* A bad chain: every chain the packet took goes back with len 0. */
static int
enq_bad(struct vsw_virtq *vq, struct enq_pkt *p, int reason)
{
	uint32_t i;

	for (i = p->start_shadow; i < vq->shadow_n; i++)
		vq->shadow[i].len = 0;
	virtq_shadow_push(vq, p->head, 0);
	return reason;
}

/*
 * A chain was taken: the next one's buffer (its descriptor was prefetched
 * a chain earlier) and the descriptor after it are fetched while this one
 * is filled; only chains before avail_end (published).
 */
static __rte_always_inline void
enq_prefetch(struct vsw_virtq *vq, uint16_t avail_end)
{
	uint16_t left = (uint16_t)(avail_end - vq->last_avail_idx);

	if (left > 0)
		virtq_prefetch_buf(vq, vq->last_avail_idx, true);
	if (left > 1)
		virtq_prefetch_desc(vq, (uint16_t)(vq->last_avail_idx + 1));
}

/* Takes the next avail chain for the packet; ENQ_OK or a failure code. */
static __rte_always_inline int
enq_take_chain(struct vsw_virtq *vq, struct enq_pkt *p)
{
	uint16_t head;

	if (unlikely(vq->last_avail_idx == p->avail_end))
		return enq_rollback(vq, p, VSW_VIRTQ_STAT_ENQ_DROP_RING_FULL);
	if (unlikely(virtq_budget_spent(vq)))
		return enq_rollback(vq, p, VSW_VIRTQ_STAT_ENQ_DROP_BUDGET);
	head = virtq_avail_head(vq, vq->last_avail_idx);
	if (unlikely(head >= vq->size)) {
		enq_rollback(vq, p, 0);
		virtq_break(vq, VSW_VIRTQ_STAT_ERR_DESC_INDEX, "avail head",
			head);
		return ENQ_BROKEN;
	}
	vq->last_avail_idx++;
	enq_prefetch(vq, p->avail_end);
	p->head = head;
	p->chain_len = 0;
	p->nbufs++;
	if (unlikely(virtq_walk_start(vq, &p->w, head, VRING_DESC_F_WRITE) <
		    0))
		return enq_bad(vq, p, VSW_VIRTQ_STAT_ENQ_DROP_BAD_DESC);
	return ENQ_OK;
}

/* The current chain is full and bytes remain: move to the next one. */
static int
enq_chain_full(struct vsw_virtq *vq, struct enq_pkt *p, bool mrg)
{
	if (unlikely(p->off < vq->hdr_len))
		return enq_bad(vq, p, VSW_VIRTQ_STAT_ENQ_DROP_SHORT_HDR);
	if (!mrg)
		return enq_rollback(vq, p, VSW_VIRTQ_STAT_ENQ_DROP_TOO_LARGE);
	virtq_shadow_push(vq, p->head, p->chain_len);
	return enq_take_chain(vq, p);
}

/* Remembers where the header's num_buffers bytes (10, 11) landed. */
static __rte_always_inline void
enq_note_nb(struct enq_pkt *p, uint8_t *dst, uint64_t gpa, uint32_t k,
	bool log)
{
	if (p->off <= 10 && p->off + k > 10) {
		p->nb[0] = dst + (10 - p->off);
		if (log)
			p->nb_gpa[0] = gpa + (10 - p->off);
	}
	if (p->off <= 11 && p->off + k > 11) {
		p->nb[1] = dst + (11 - p->off);
		if (log)
			p->nb_gpa[1] = gpa + (11 - p->off);
	}
}

/*
 * The header's offload fields from m (offl: the guest negotiated some);
 * ENQ_OK, or ENQ_DROP_OFFLOAD for what the guest cannot take (the switch
 * segments for such ports; this guards a renegotiation in between).
 */
static __rte_always_inline int
enq_offload_hdr(const struct vsw_virtq *vq, const struct rte_mbuf *m,
	uint8_t *hdr, bool offl)
{
	struct vsw_virtio_net_hdr h;

	if (!offl)
		return likely((m->ol_flags & (RTE_MBUF_F_TX_TCP_SEG |
				      RTE_MBUF_F_TX_L4_MASK)) == 0)
			? ENQ_OK
			: VSW_VIRTQ_STAT_ENQ_DROP_OFFLOAD;
	if (unlikely(vsw_virtq_net_hdr_from_mbuf(m, &h, vq->features) != 0))
		return VSW_VIRTQ_STAT_ENQ_DROP_OFFLOAD;
	memcpy(hdr, &h, 10); /* num_buffers: set by the caller */
	return ENQ_OK;
}

/*
 * Copies sp/sl, then the segments from seg on, into the packet's chains
 * (the first one taken). Returns ENQ_OK, an ENQ_DROP_* counter (p->w.err
 * set for BAD_DESC), or ENQ_BROKEN. log (constant per instance): note
 * every page each copy wrote in the dirty log, by guest address (dgpa
 * follows dp).
 */
static __rte_always_inline int
enq_copy(struct vsw_virtq *vq, struct enq_pkt *p, const uint8_t *sp,
	uint32_t sl, const struct rte_mbuf *seg, bool mrg, bool log)
{
	uint64_t dgpa = 0;
	uint8_t *dp = NULL;
	uint32_t dl = 0;
	int rc;

	for (;;) {
		uint32_t k;

		if (sl == 0) {
			if (seg == NULL)
				return ENQ_OK;
			sp = rte_pktmbuf_mtod(seg, const uint8_t *);
			sl = seg->data_len;
			seg = seg->next;
			continue;
		}
		if (dl == 0) {
			rc = virtq_walk_span(vq, &p->w, &dp, &dl);
			if (unlikely(rc < 0))
				return enq_bad(vq, p,
					VSW_VIRTQ_STAT_ENQ_DROP_BAD_DESC);
			if (rc == 0) {
				rc = enq_chain_full(vq, p, mrg);
				if (unlikely(rc != ENQ_OK))
					return rc;
			}
			if (log)
				dgpa = p->w.gpa - dl; /* the span's start */
			continue;
		}
		k = RTE_MIN(sl, dl);
		if (mrg && unlikely(p->off < 12))
			enq_note_nb(p, dp, dgpa, k, log);
		if (p->off == 0 && k == vq->hdr_len) /* the header, whole */
			virtq_hdr_store(dp, sp, k);
		else if (p->off >= vq->hdr_len) /* frame bytes: mbuf data */
			virtq_defer_copy(vq, dp, sp, VIRTQ_COPY_LEN(k), !log);
		else /* (part of) the header: it lives on our stack */
			vsw_copy(dp, sp, VIRTQ_COPY_LEN(k));
		if (log) {
			virtq_log_write(vq, dgpa, k);
			dgpa += k;
		}
		sp += k;
		sl -= k;
		dp += k;
		dl -= k;
		p->off += k;
		p->chain_len += k;
	}
}

/*
 * Header + packet into the guest (enq_copy). Returns ENQ_OK, an ENQ_DROP_*
 * counter (*why set for BAD_DESC), or ENQ_BROKEN.
 */
static __rte_always_inline int
enqueue_one(struct vsw_virtq *vq, struct rte_mbuf *m, uint16_t avail_end,
	bool mrg, bool offl, bool log, enum vsw_virtq_stat *why)
{
	uint8_t hdr[12] = {0};
	const uint8_t *sp = hdr;
	uint32_t sl = vq->hdr_len;
	const struct rte_mbuf *seg = m;
	struct enq_pkt p;
	int rc;

	p.w.err = VSW_VIRTQ_STAT__MAX;
	p.nbufs = 0;
	p.off = 0;
	p.nb[0] = p.nb[1] = NULL;
	p.start_avail = vq->last_avail_idx;
	p.start_shadow = vq->shadow_n;
	p.start_defer = vq->defer_n;
	p.avail_end = avail_end;
	if (unlikely(m->pkt_len + vq->hdr_len > vq->max_pkt_len))
		return VSW_VIRTQ_STAT_ENQ_DROP_TOO_LARGE;
	rc = enq_offload_hdr(vq, m, hdr, offl);
	if (unlikely(rc != ENQ_OK))
		return rc;
	hdr[10] = 1; /* num_buffers, patched below when more are used */
	virtq_hdr_coalign(vq, m, hdr, &sp, &sl, &seg);
	rc = enq_take_chain(vq, &p);
	if (likely(rc == ENQ_OK))
		rc = enq_copy(vq, &p, sp, sl, seg, mrg, log);
	if (unlikely(rc != ENQ_OK)) {
		vq->defer_n = p.start_defer;
		*why = p.w.err;
		return rc;
	}
	virtq_shadow_push(vq, p.head, p.chain_len);
	if (mrg && p.nbufs != 1) {
		*p.nb[0] = (uint8_t)p.nbufs;
		*p.nb[1] = (uint8_t)(p.nbufs >> 8);
		if (log) { /* written again after their copy was noted */
			virtq_log_write(vq, p.nb_gpa[0], 1);
			virtq_log_write(vq, p.nb_gpa[1], 1);
		}
	}
	return ENQ_OK;
}

static __rte_noinline void
enqueue_drop(struct vsw_virtq *vq, int reason, enum vsw_virtq_stat why)
{
	virtq_count(vq, (enum vsw_virtq_stat)reason, 1);
	if (reason == VSW_VIRTQ_STAT_ENQ_DROP_BAD_DESC) {
		virtq_count(vq, why, 1);
		virtq_log_guest(vq, "rx chain dropped: %s",
			vsw_virtq_stat_name(why));
	} else if (reason == VSW_VIRTQ_STAT_ENQ_DROP_SHORT_HDR) {
		virtq_log_guest(vq, "rx buffer shorter than the header");
	}
}

/* mrg, offl and log are constant per call site: enqueue_one is
 * specialised per variant, and the copy loop without a log has no logging
 * code. */
static __rte_always_inline uint16_t
enqueue_burst(struct vsw_virtq *vq, struct rte_mbuf **pkts, uint16_t n,
	uint16_t avail_end, bool mrg, bool offl, bool log)
{
	enum vsw_virtq_stat why = VSW_VIRTQ_STAT__MAX;
	uint64_t bytes = 0, gso = 0, csum = 0;
	uint16_t i, out = 0;

	for (i = 0; i < n; i++) {
		int rc;

		if (offl) /* TSO frames: the budget grows with the bytes */
			vq->budget += RTE_MIN(pkts[i]->pkt_len,
					      VSW_VIRTQ_CREDIT_PKT_MAX) /
				      VSW_VIRTQ_CREDIT_BYTES;
		rc = enqueue_one(vq, pkts[i], avail_end, mrg, offl, log, &why);

		if (likely(rc == ENQ_OK)) {
			bytes += pkts[i]->pkt_len;
			out++;
			if (offl) {
				uint64_t ol = pkts[i]->ol_flags;

				gso += (ol & RTE_MBUF_F_TX_TCP_SEG) != 0;
				csum += (ol & RTE_MBUF_F_TX_L4_MASK) != 0;
			}
			continue;
		}
		if (rc == ENQ_BROKEN) {
			virtq_count(vq, VSW_VIRTQ_STAT_ENQ_DROP_NOT_READY,
				n - i);
			break;
		}
		if (rc == VSW_VIRTQ_STAT_ENQ_DROP_RING_FULL ||
			rc == VSW_VIRTQ_STAT_ENQ_DROP_BUDGET) {
			virtq_count(vq, (enum vsw_virtq_stat)rc, n - i);
			virtq_count(vq, VSW_VIRTQ_STAT_BUDGET_CUT,
				rc == VSW_VIRTQ_STAT_ENQ_DROP_BUDGET);
			break;
		}
		enqueue_drop(vq, rc, why);
	}
	virtq_count(vq, VSW_VIRTQ_STAT_ENQ_PACKETS, out);
	virtq_count(vq, VSW_VIRTQ_STAT_ENQ_BYTES, bytes);
	if (offl) {
		virtq_count(vq, VSW_VIRTQ_STAT_ENQ_GSO_PACKETS, gso);
		virtq_count(vq, VSW_VIRTQ_STAT_ENQ_CSUM_PARTIAL, csum);
	}
	if (!log)
		virtq_defer_run(vq);
	virtq_flush_used(vq);
	return out;
}

static __rte_noinline uint16_t
enqueue_burst_mrg(struct vsw_virtq *vq, struct rte_mbuf **pkts, uint16_t n,
	uint16_t avail_end)
{
	return enqueue_burst(vq, pkts, n, avail_end, true, false, false);
}

static __rte_noinline uint16_t
enqueue_burst_one(struct vsw_virtq *vq, struct rte_mbuf **pkts, uint16_t n,
	uint16_t avail_end)
{
	return enqueue_burst(vq, pkts, n, avail_end, false, false, false);
}

/* The guest negotiated receive offloads (Linux always has MRG_RXBUF). */
static __rte_noinline uint16_t
enqueue_burst_mrg_offl(struct vsw_virtq *vq, struct rte_mbuf **pkts,
	uint16_t n, uint16_t avail_end)
{
	return enqueue_burst(vq, pkts, n, avail_end, true, true, false);
}

static __rte_noinline uint16_t
enqueue_burst_one_offl(struct vsw_virtq *vq, struct rte_mbuf **pkts,
	uint16_t n, uint16_t avail_end)
{
	return enqueue_burst(vq, pkts, n, avail_end, false, true, false);
}

/* Live migration (virtq_log.c): the same, logging what they write (offl
 * read per burst: the logging variants are cold). */
static __rte_noinline __rte_cold uint16_t
enqueue_burst_mrg_log(struct vsw_virtq *vq, struct rte_mbuf **pkts,
	uint16_t n, uint16_t avail_end)
{
	return enqueue_burst(vq, pkts, n, avail_end, true,
		(vq->features & VSW_VIRTQ_F_ENQ_OFFLOADS) != 0, true);
}

static __rte_noinline __rte_cold uint16_t
enqueue_burst_one_log(struct vsw_virtq *vq, struct rte_mbuf **pkts,
	uint16_t n, uint16_t avail_end)
{
	return enqueue_burst(vq, pkts, n, avail_end, false,
		(vq->features & VSW_VIRTQ_F_ENQ_OFFLOADS) != 0, true);
}

uint16_t
vsw_virtq_enqueue_burst(struct vsw_virtq *vq, struct rte_mbuf **pkts,
	uint16_t n)
{
	uint16_t end;
	int avail;

	if (vq->packed) /* fixed per queue: one predictable branch a burst */
		return virtq_packed_enqueue_burst(vq, pkts, n);
	/* n > VSW_VIRTQ_BURST_MAX works too: a burst never takes more than
	 * the ring's size of chains, which the shadow ring holds */
	if (unlikely(vq->broken)) {
		virtq_count(vq, VSW_VIRTQ_STAT_ENQ_DROP_NOT_READY, n);
		return 0;
	}
	if (n == 0)
		return 0;
	avail = virtq_avail_count(vq);
	if (unlikely(avail < 0)) {
		virtq_break(vq, VSW_VIRTQ_STAT_ERR_AVAIL_IDX, "avail idx",
			vq->avail->idx);
		virtq_count(vq, VSW_VIRTQ_STAT_ENQ_DROP_NOT_READY, n);
		return 0;
	}
	if (avail == 0) {
		virtq_count(vq, VSW_VIRTQ_STAT_ENQ_DROP_RING_FULL, n);
		return 0;
	}
	virtq_budget_reset(vq);
	end = (uint16_t)(vq->last_avail_idx + avail);
	/* the first chain's descriptors (the buffers follow per chain) */
	virtq_prefetch_desc(vq, vq->last_avail_idx);
	if (avail > 1)
		virtq_prefetch_desc(vq, (uint16_t)(vq->last_avail_idx + 1));
	if (unlikely(virtq_logging(vq)))
		return virtq_has(vq, VSW_VIRTIO_NET_F_MRG_RXBUF)
			       ? enqueue_burst_mrg_log(vq, pkts, n, end)
			       : enqueue_burst_one_log(vq, pkts, n, end);
	if (unlikely(vq->features & VSW_VIRTQ_F_ENQ_OFFLOADS))
		return virtq_has(vq, VSW_VIRTIO_NET_F_MRG_RXBUF)
			? enqueue_burst_mrg_offl(vq, pkts, n, end)
			: enqueue_burst_one_offl(vq, pkts, n, end);
	if (virtq_has(vq, VSW_VIRTIO_NET_F_MRG_RXBUF))
		return enqueue_burst_mrg(vq, pkts, n, end);
	return enqueue_burst_one(vq, pkts, n, end);
}

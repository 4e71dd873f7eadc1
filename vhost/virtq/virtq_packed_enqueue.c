/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Host -> guest on a packed ring: as virtq_enqueue.c (header + mbuf
 * segments copied through vsw_copy(); MRG_RXBUF spreads a packet over as
 * many chains as it needs and sets num_buffers; without it a packet must
 * fit one chain), fed by the packed walker. A chain used in part still
 * takes all its ring slots (virtq_pwalk_finish finds its end and id). Used
 * descriptors collect in the shadow and are written once per burst. With
 * checksum/TSO offloads negotiated the header carries the mbuf's offload
 * metadata (vsw_virtq_net_hdr_from_mbuf); without, a packet asking for
 * one is dropped (enq_drop_offload), as on split rings. cfg.hdr_coalign
 * writes the header into the mbuf's headroom as on split rings (one copy
 * run; off by default, measured slower there). Frame copies of at most
 * VIRTQ_DEFER_LEN bytes wait for the burst's end as on split rings
 * (virtq_defer_copy: not with a dirty log; a failed packet drops its own).
 *
 * Runs on the queue's poller; no locks, no allocation.
 */
#include <string.h>

#include <rte_mbuf.h>

#include <vsw/copy.h>

#include "virtq_packed.h"

struct penq_pkt {
	struct virtq_pwalk w;
	uint16_t nbufs;
	uint32_t chain_len;
	uint32_t off;
	uint8_t *nb[2];
	uint64_t nb_gpa[2]; /* their guest addresses (dirty logging) */
	uint16_t start_avail;
	bool start_wrap;
	uint32_t start_shadow;
	uint32_t start_defer;
};

#define PENQ_OK 0
#define PENQ_BROKEN (-1)

/* The packet cannot be placed: its chains stay posted. */
static int
penq_rollback(struct vsw_virtq *vq, struct penq_pkt *p, int reason)
{
	vq->last_avail_idx = p->start_avail;
	vq->avail_wrap = p->start_wrap;
	virtq_pshadow_trim(vq, p->start_shadow);
	return reason;
}

/*
 * Closes the current chain with used length len: finds its end, checks its
 * id, queues its used descriptor. PENQ_OK, ENQ_DROP_BAD_DESC (id), or
 * PENQ_BROKEN (no end).
 */
static __rte_always_inline int
penq_close(struct vsw_virtq *vq, struct penq_pkt *p, uint32_t len)
{
	struct virtq_pwalk *w = &p->w;
	int rc = PENQ_OK;

	if (unlikely(virtq_pwalk_finish(vq, w) < 0)) {
		penq_rollback(vq, p, 0);
		virtq_break(vq, w->err, "rx chain at slot", vq->last_avail_idx);
		return PENQ_BROKEN;
	}
	if (unlikely(w->id >= vq->size || packed_id_busy(vq, w->id))) {
		w->err = VSW_VIRTQ_STAT_ERR_DESC_ID;
		rc = VSW_VIRTQ_STAT_ENQ_DROP_BAD_DESC;
		len = 0;
	} else {
		packed_id_take(vq, w->id);
	}
	virtq_pshadow_push(vq, w->id, w->ring_n, len);
	packed_advance(vq, &vq->last_avail_idx, &vq->avail_wrap, w->ring_n);
	return rc;
}

/* Every chain the packet took (and closed) goes back with len 0. */
static int
penq_zero(struct vsw_virtq *vq, struct penq_pkt *p, int reason)
{
	uint32_t i;

	for (i = p->start_shadow; i < vq->shadow_n; i++)
		vq->shadow[i].len = 0;
	return reason;
}

/* A bad current chain: closed with len 0, and the packet's others too. */
static int
penq_bad(struct vsw_virtq *vq, struct penq_pkt *p, int reason)
{
	enum vsw_virtq_stat why = p->w.err;
	int rc;

	penq_zero(vq, p, 0);
	rc = penq_close(vq, p, 0);
	if (rc == PENQ_BROKEN)
		return rc;
	p->w.err = why;
	return reason;
}

static __rte_always_inline int
penq_take_chain(struct vsw_virtq *vq, struct penq_pkt *p)
{
	if (unlikely(!packed_head_ready(vq)))
		return penq_rollback(vq, p, VSW_VIRTQ_STAT_ENQ_DROP_RING_FULL);
	if (unlikely(virtq_budget_spent(vq)))
		return penq_rollback(vq, p, VSW_VIRTQ_STAT_ENQ_DROP_BUDGET);
	p->chain_len = 0;
	p->nbufs++;
	if (unlikely(virtq_pwalk_start(vq, &p->w, VRING_DESC_F_WRITE) < 0))
		return penq_bad(vq, p, VSW_VIRTQ_STAT_ENQ_DROP_BAD_DESC);
	return PENQ_OK;
}

static int
penq_chain_full(struct vsw_virtq *vq, struct penq_pkt *p, bool mrg)
{
	int rc;

	if (unlikely(p->off < vq->hdr_len))
		return penq_bad(vq, p, VSW_VIRTQ_STAT_ENQ_DROP_SHORT_HDR);
	if (!mrg)
		return penq_rollback(vq, p, VSW_VIRTQ_STAT_ENQ_DROP_TOO_LARGE);
	rc = penq_close(vq, p, p->chain_len);
	if (unlikely(rc != PENQ_OK))
		return rc == PENQ_BROKEN ? rc : penq_zero(vq, p, rc);
	return penq_take_chain(vq, p);
}

static __rte_always_inline void
penq_note_nb(struct penq_pkt *p, uint8_t *dst, uint64_t gpa, uint32_t k,
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

/* The header's offload fields from m (offl: the guest negotiated some). */
static __rte_always_inline int
penq_offload_hdr(const struct vsw_virtq *vq, const struct rte_mbuf *m,
	uint8_t *hdr, bool offl)
{
	struct vsw_virtio_net_hdr h;

	if (!offl)
		return likely((m->ol_flags & (RTE_MBUF_F_TX_TCP_SEG |
				      RTE_MBUF_F_TX_L4_MASK)) == 0)
			? PENQ_OK
			: VSW_VIRTQ_STAT_ENQ_DROP_OFFLOAD;
	if (unlikely(vsw_virtq_net_hdr_from_mbuf(m, &h, vq->features) != 0))
		return VSW_VIRTQ_STAT_ENQ_DROP_OFFLOAD;
	memcpy(hdr, &h, 10); /* num_buffers: set by the caller */
	return PENQ_OK;
}

/* The copy of a packet's runs (sp/sl, then seg on) into its chains, from
 * its first chain (taken); PENQ_OK, an ENQ_DROP_* (the packet's chains
 * closed or rolled back), or PENQ_BROKEN. log: as penqueue_one. */
static __rte_always_inline int
penq_copy(struct vsw_virtq *vq, struct penq_pkt *p, const uint8_t *sp,
	uint32_t sl, const struct rte_mbuf *seg, bool mrg, bool log)
{
	uint64_t dgpa = 0;
	uint32_t dl = 0;
	uint8_t *dp = NULL;
	int rc;

	for (;;) {
		uint32_t k;

		if (sl == 0) {
			if (seg == NULL)
				return PENQ_OK;
			sp = rte_pktmbuf_mtod(seg, const uint8_t *);
			sl = seg->data_len;
			seg = seg->next;
			continue;
		}
		if (dl == 0) {
			rc = virtq_pwalk_span(vq, &p->w, &dp, &dl);
			if (unlikely(rc < 0))
				return penq_bad(vq, p,
					VSW_VIRTQ_STAT_ENQ_DROP_BAD_DESC);
			if (rc == 0) {
				rc = penq_chain_full(vq, p, mrg);
				if (unlikely(rc != PENQ_OK))
					return rc;
			}
			if (log)
				dgpa = p->w.gpa - dl; /* the span's start */
			continue;
		}
		k = RTE_MIN(sl, dl);
		if (mrg && unlikely(p->off < 12))
			penq_note_nb(p, dp, dgpa, k, log);
		if (p->off == 0 && k == vq->hdr_len) /* the header, whole */
			virtq_hdr_store(dp, sp, k);
		else if (p->off >= vq->hdr_len) /* frame bytes: mbuf data */
			virtq_defer_copy(vq, dp, sp, k, !log);
		else /* (part of) the header: it lives on our stack */
			vsw_copy(dp, sp, k);
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

/* Header + packet into the guest: PENQ_OK, an ENQ_DROP_*, or PENQ_BROKEN.
 * log (constant per instance): every page each copy wrote is noted in the
 * dirty log by guest address. */
static __rte_always_inline int
penqueue_one(struct vsw_virtq *vq, struct rte_mbuf *m, bool mrg, bool offl,
	bool log, enum vsw_virtq_stat *why)
{
	uint8_t hdr[12] = {0};
	const uint8_t *sp = hdr;
	uint32_t sl = vq->hdr_len;
	const struct rte_mbuf *seg = m;
	struct penq_pkt p;
	int rc;

	p.w.err = VSW_VIRTQ_STAT__MAX;
	p.nbufs = 0;
	p.off = 0;
	p.nb[0] = p.nb[1] = NULL;
	p.start_avail = vq->last_avail_idx;
	p.start_wrap = vq->avail_wrap;
	p.start_shadow = vq->shadow_n;
	p.start_defer = vq->defer_n;
	if (unlikely(m->pkt_len + vq->hdr_len > vq->max_pkt_len))
		return VSW_VIRTQ_STAT_ENQ_DROP_TOO_LARGE;
	rc = penq_offload_hdr(vq, m, hdr, offl);
	if (unlikely(rc != PENQ_OK))
		return rc;
	hdr[10] = 1; /* num_buffers, patched below when more are used */
	virtq_hdr_coalign(vq, m, hdr, &sp, &sl, &seg);
	rc = penq_take_chain(vq, &p);
	if (likely(rc == PENQ_OK))
		rc = penq_copy(vq, &p, sp, sl, seg, mrg, log);
	if (unlikely(rc != PENQ_OK))
		goto out;
	rc = penq_close(vq, &p, p.chain_len);
	if (unlikely(rc != PENQ_OK)) {
		if (rc != PENQ_BROKEN)
			rc = penq_zero(vq, &p, rc);
		goto out;
	}
	if (mrg && p.nbufs != 1) {
		*p.nb[0] = (uint8_t)p.nbufs;
		*p.nb[1] = (uint8_t)(p.nbufs >> 8);
		if (log) { /* written again after their copy was noted */
			virtq_log_write(vq, p.nb_gpa[0], 1);
			virtq_log_write(vq, p.nb_gpa[1], 1);
		}
	}
	return PENQ_OK;
out:
	vq->defer_n = p.start_defer; /* its chains may go to the next one */
	*why = p.w.err;
	return rc;
}

/*
 * Four packets into four one-descriptor chains (packed_batch_read): each
 * packet one segment, header + packet inside its chain and one guest
 * region, no offload it cannot carry; true when all four are placed
 * (num_buffers 1 each), false to place them one by one. Not with a dirty
 * log or cfg.hdr_coalign (their variants keep the one-chain path).
 */
static __rte_always_inline bool
penqueue_batch(struct vsw_virtq *vq, struct rte_mbuf **pkts, bool offl,
	uint64_t *bytes)
{
	struct vring_packed_desc d[PACKED_BATCH];
	uint8_t hdr[PACKED_BATCH][12];
	uint8_t *dst[PACKED_BATCH];
	uint32_t lens[PACKED_BATCH], i, hl = vq->hdr_len;

	if (vq->hdr_coalign || !packed_batch_read(vq, d, VRING_DESC_F_WRITE))
		return false;
	for (i = 0; i < PACKED_BATCH; i++) {
		const struct rte_mbuf *m = pkts[i];
		uint64_t contig;

		lens[i] = hl + m->pkt_len;
		if (unlikely(m->nb_segs != 1 || lens[i] > d[i].len ||
			    lens[i] > vq->max_pkt_len))
			return false;
		memset(hdr[i], 0, sizeof(hdr[i]));
		if (unlikely(penq_offload_hdr(vq, m, hdr[i], offl) != PENQ_OK))
			return false;
		dst[i] = virtq_translate(vq->mem, d[i].addr, lens[i], &contig);
		if (unlikely(dst[i] == NULL || contig != lens[i]))
			return false;
	}
	for (i = 0; i < PACKED_BATCH; i++) {
		hdr[i][10] = 1; /* num_buffers */
		virtq_hdr_store(dst[i], hdr[i], hl);
		virtq_defer_copy(vq, dst[i] + hl,
			rte_pktmbuf_mtod(pkts[i], uint8_t *), pkts[i]->pkt_len,
			true);
		*bytes += pkts[i]->pkt_len;
	}
	packed_batch_take(vq, d, lens);
	return true;
}

static __rte_noinline void
penqueue_drop(struct vsw_virtq *vq, int reason, enum vsw_virtq_stat why)
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

/* The offload counters' share of n placed packets. */
static __rte_always_inline void
penq_count_offl(struct rte_mbuf *const *pkts, uint32_t n, uint64_t *gso,
	uint64_t *csum)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		uint64_t ol = pkts[i]->ol_flags;

		*gso += (ol & RTE_MBUF_F_TX_TCP_SEG) != 0;
		*csum += (ol & RTE_MBUF_F_TX_L4_MASK) != 0;
	}
}

/* mrg, offl and log are constant per call site: penqueue_one is
 * specialised per variant, and the copy loop without a log has no logging
 * code. */
static __rte_always_inline uint16_t
penqueue_burst(struct vsw_virtq *vq, struct rte_mbuf **pkts, uint16_t n,
	bool mrg, bool offl, bool log)
{
	enum vsw_virtq_stat why = VSW_VIRTQ_STAT__MAX;
	uint64_t bytes = 0, gso = 0, csum = 0;
	uint16_t i, out = 0;

	for (i = 0; i < n; i++) {
		int rc;

		if (!log && n - i >= PACKED_BATCH &&
			penqueue_batch(vq, &pkts[i], offl, &bytes)) {
			if (offl)
				penq_count_offl(&pkts[i], PACKED_BATCH, &gso,
					&csum);
			out += PACKED_BATCH;
			i += PACKED_BATCH - 1;
			continue;
		}
		rc = penqueue_one(vq, pkts[i], mrg, offl, log, &why);
		if (likely(rc == PENQ_OK)) {
			bytes += pkts[i]->pkt_len;
			out++;
			if (offl)
				penq_count_offl(&pkts[i], 1, &gso, &csum);
			continue;
		}
		if (rc == PENQ_BROKEN) {
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
		penqueue_drop(vq, rc, why);
	}
	virtq_count(vq, VSW_VIRTQ_STAT_ENQ_PACKETS, out);
	virtq_count(vq, VSW_VIRTQ_STAT_ENQ_BYTES, bytes);
	if (offl) {
		virtq_count(vq, VSW_VIRTQ_STAT_ENQ_GSO_PACKETS, gso);
		virtq_count(vq, VSW_VIRTQ_STAT_ENQ_CSUM_PARTIAL, csum);
	}
	if (!log)
		virtq_defer_run(vq);
	virtq_packed_flush(vq, false); /* RX: one per chain, each its len */
	return out;
}

static __rte_noinline uint16_t
penqueue_burst_mrg(struct vsw_virtq *vq, struct rte_mbuf **pkts, uint16_t n)
{
	return penqueue_burst(vq, pkts, n, true, false, false);
}

static __rte_noinline uint16_t
penqueue_burst_one(struct vsw_virtq *vq, struct rte_mbuf **pkts, uint16_t n)
{
	return penqueue_burst(vq, pkts, n, false, false, false);
}

/* The guest negotiated receive offloads (Linux always has MRG_RXBUF). */
static __rte_noinline uint16_t
penqueue_burst_mrg_offl(struct vsw_virtq *vq, struct rte_mbuf **pkts,
	uint16_t n)
{
	return penqueue_burst(vq, pkts, n, true, true, false);
}

static __rte_noinline uint16_t
penqueue_burst_one_offl(struct vsw_virtq *vq, struct rte_mbuf **pkts,
	uint16_t n)
{
	return penqueue_burst(vq, pkts, n, false, true, false);
}

/* Live migration (virtq_log.c): the same, logging what they write (offl
 * read per burst: the logging variants are cold). */
static __rte_noinline __rte_cold uint16_t
penqueue_burst_mrg_log(struct vsw_virtq *vq, struct rte_mbuf **pkts,
	uint16_t n)
{
	return penqueue_burst(vq, pkts, n, true,
		(vq->features & VSW_VIRTQ_F_ENQ_OFFLOADS) != 0, true);
}

static __rte_noinline __rte_cold uint16_t
penqueue_burst_one_log(struct vsw_virtq *vq, struct rte_mbuf **pkts,
	uint16_t n)
{
	return penqueue_burst(vq, pkts, n, false,
		(vq->features & VSW_VIRTQ_F_ENQ_OFFLOADS) != 0, true);
}

uint16_t
virtq_packed_enqueue_burst(struct vsw_virtq *vq, struct rte_mbuf **pkts,
	uint16_t n)
{
	if (unlikely(vq->broken)) {
		virtq_count(vq, VSW_VIRTQ_STAT_ENQ_DROP_NOT_READY, n);
		return 0;
	}
	if (n == 0)
		return 0;
	if (!packed_head_ready(vq)) {
		virtq_count(vq, VSW_VIRTQ_STAT_ENQ_DROP_RING_FULL, n);
		return 0;
	}
	virtq_budget_reset(vq);
	if (unlikely(virtq_logging(vq)))
		return virtq_has(vq, VSW_VIRTIO_NET_F_MRG_RXBUF)
			       ? penqueue_burst_mrg_log(vq, pkts, n)
			       : penqueue_burst_one_log(vq, pkts, n);
	if (unlikely(vq->features & VSW_VIRTQ_F_ENQ_OFFLOADS))
		return virtq_has(vq, VSW_VIRTIO_NET_F_MRG_RXBUF)
			       ? penqueue_burst_mrg_offl(vq, pkts, n)
			       : penqueue_burst_one_offl(vq, pkts, n);
	if (virtq_has(vq, VSW_VIRTIO_NET_F_MRG_RXBUF))
		return penqueue_burst_mrg(vq, pkts, n);
	return penqueue_burst_one(vq, pkts, n);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Private to the .c files of vhost/virtq/: the queue's layout, ring
 * access, the inline guest address translation, the descriptor-chain
 * walker, the shadow used ring and the rate-limited guest-error log.
 * Nothing here is for other modules (tests and fuzzers included: they use
 * <vsw/virtq.h>).
 */
#ifndef VSW_VIRTQ_PRIV_H
#define VSW_VIRTQ_PRIV_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <linux/virtio_ring.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_log.h>
#include <rte_mbuf.h>

#include <vsw/copy.h>
#include <vsw/virtq.h>

extern int virtq_logtype;

/* One used entry waiting for the end of the burst. */
struct virtq_used_shadow {
	uint32_t id;
	uint32_t len;
};

/*
 * An RX copy of at most VIRTQ_DEFER_LEN bytes, held to the end of the burst
 * (virtq_enqueue.c, virtq_packed_enqueue.c): the burst's chains are all
 * walked, and their buffers prefetched, before the first of these copies
 * stalls on a miss (lib/vhost's batch copies do the same up to its
 * MAX_BATCH_LEN, 256).
 */
#define VIRTQ_DEFER_LEN 256u
#define VIRTQ_DEFER_MAX (2 * VSW_VIRTQ_BURST_MAX) /* more: copied at once */
struct virtq_defer {
	uint8_t *dst;
	const uint8_t *src;
	uint32_t len;
};

/* Dirty-log bits of a burst, by 64-page word, ORed in at its end. */
#define VIRTQ_LOG_CACHE 8
struct virtq_log_entry {
	uint64_t word; /* page / 64 */
	uint64_t mask;
};

/*
 * The queue. Line 0 holds what every burst reads (ring pointers, sizes,
 * indices, flags); line 1 the shadow count and the notify path, then the
 * counters; cold fields last; the RX's deferred copies and the
 * shadow used ring (cfg.size entries, filled per burst and published
 * once) follow on their own lines.
 */
struct vsw_virtq {
	union { /* which one: packed */
		struct vring_desc *desc;
		struct vring_packed_desc *pdesc;
	};
	union {
		struct vring_avail *avail;
		const struct vring_packed_desc_event *driver_event;
	};
	union {
		struct vring_used *used;
		struct vring_packed_desc_event *device_event;
	};
	const struct vsw_mem *mem;
	uint64_t features;
	uint32_t size;
	uint32_t hdr_len;      /* 12 with MRG_RXBUF or VERSION_1, else 10 */
	uint32_t max_pkt_len;
	uint16_t last_avail_idx; /* packed: 0..size-1, wrap counters below */
	uint16_t last_used_idx;
	uint16_t signalled_used; /* EVENT_IDX bookkeeping (packed: | wrap) */
	bool signalled_used_valid;
	bool broken;           /* ring inconsistent: the queue is stopped */
	bool hdr_coalign;      /* cfg.hdr_coalign */
	bool deq_align;        /* !cfg.no_deq_align */
	uint16_t chain_lim;    /* min(size, VSW_VIRTQ_CHAIN_MAX) */
	/* line 1 */
	uint32_t shadow_n __rte_cache_aligned;
	int32_t budget;        /* descriptors this burst may still read */
	bool packed;           /* VSW_VIRTIO_F_RING_PACKED: virtq_packed*.c */
	bool avail_wrap;       /* packed: the device's wrap counters */
	bool used_wrap;
	bool in_order;         /* VSW_VIRTIO_F_IN_ORDER: virtq_inorder.c (split),
				* batched TX used descriptors (packed) */
	uint8_t pf_region;     /* virtq_prefetch_buf: the region last hit */
	uint16_t id_gen;       /* packed: this burst's stamp in id_stamp */
	const uint16_t *used_event; /* avail->ring[size], with EVENT_IDX */
	vsw_virtq_notify_fn notify;
	void *notify_ctx;
	uint16_t *id_stamp;    /* packed: [id] == id_gen: id in the shadow */
	uint8_t *log;          /* dirty log (cfg.log_base), NULL: off */
	uint64_t log_size;     /* bytes */
	uint64_t used_gpa;     /* for logging used-ring writes (packed: the
				* device event area) */
	uint32_t log_n;        /* entries in log_cache */
	uint32_t defer_n;      /* entries in defer (RX, this burst) */
	uint32_t defer_max;    /* VIRTQ_DEFER_MAX; 0: cfg.no_rx_defer */
	uint64_t stats[VSW_VIRTQ_STAT__MAX];
	struct virtq_log_entry log_cache[VIRTQ_LOG_CACHE];
	/* cold */
	uint64_t desc_gpa;     /* packed: logging used descriptor writes */
	const char *name;
	uint64_t log_next_tsc; /* rate limiter for guest-error log lines */
	uint32_t log_suppressed;
	struct virtq_defer defer[VIRTQ_DEFER_MAX] __rte_cache_aligned;
	struct virtq_used_shadow shadow[] __rte_cache_aligned;
};
_Static_assert(offsetof(struct vsw_virtq, shadow_n) == RTE_CACHE_LINE_SIZE,
	"the per-burst fields fit one cache line");

/* Guest-caused problems: one line per queue per second at most. */
void virtq_log_guest(struct vsw_virtq *vq, const char *fmt, ...)
	__rte_cold __rte_format_printf(2, 3);

#define VIRTQ_LOG(level, fmt, ...)                                             \
	rte_log(RTE_LOG_##level, virtq_logtype, "vsw.virtq: " fmt "\n",   \
		##__VA_ARGS__)

static inline void
virtq_count(struct vsw_virtq *vq, enum vsw_virtq_stat s, uint64_t n)
{
	vq->stats[s] += n;
}

/*
 * Guest physical -> our virtual address. Overflow-safe: [gpa, gpa + len)
 * must not wrap; *contig is how much of it lies in the one region found.
 */
static __rte_always_inline void *
virtq_translate(const struct vsw_mem *mem, uint64_t gpa, uint64_t len,
	uint64_t *contig)
{
	uint32_t i;

	if (unlikely(len == 0 || len - 1 > UINT64_MAX - gpa))
		return NULL;
	for (i = 0; i < mem->nregions; i++) {
		const struct vsw_mem_region *r = &mem->regions[i];
		uint64_t off = gpa - r->guest_phys_addr;

		if (gpa >= r->guest_phys_addr && off < r->size) {
			uint64_t room = r->size - off;

			*contig = len < room ? len : room;
			return (void *)(uintptr_t)(r->host_user_addr + off);
		}
	}
	return NULL;
}

/* Copy len guest bytes at gpa to dst, across regions; -1 if any is missing. */
int virtq_mem_read(const struct vsw_mem *mem, void *dst, uint64_t gpa,
	uint32_t len);

/*
 * Walks one descriptor chain (direct, or through one indirect table) and
 * hands out translated spans. Every check on guest descriptors lives in
 * virtq_desc.c; on failure err names the ERR_* counter.
 */
struct virtq_walk {
	const struct vring_desc *table; /* NULL: indirect table read by gpa */
	uint64_t table_gpa;
	uint32_t n;     /* entries in the current table */
	uint32_t count; /* descriptors taken from the current table */
	uint32_t lim;   /* ... at most: n, or less (VSW_VIRTQ_CHAIN_MAX) */
	uint16_t flags; /* current descriptor */
	uint16_t next;
	uint16_t dir;   /* VRING_DESC_F_WRITE (enqueue) or 0 (dequeue) */
	bool indirect;
	uint16_t ring_n; /* indirect: ring descriptors taken (its own last) */
	uint64_t gpa;   /* unconsumed rest of the current descriptor */
	uint64_t left;
	enum vsw_virtq_stat err;
};

int virtq_walk_start(struct vsw_virtq *vq, struct virtq_walk *w, uint16_t head,
	uint16_t dir);
int virtq_walk_load(struct vsw_virtq *vq, struct virtq_walk *w, uint32_t idx);

/*
 * Next span of the chain: 1 with p and len set, 0 at the chain's end, -1 on a
 * bad descriptor (w->err). A span never crosses a region boundary.
 */
static __rte_always_inline int
virtq_walk_span(struct vsw_virtq *vq, struct virtq_walk *w, uint8_t **p,
	uint32_t *len)
{
	uint64_t contig;
	void *va;

	while (w->left == 0) {
		if (!(w->flags & VRING_DESC_F_NEXT))
			return 0;
		if (unlikely(virtq_walk_load(vq, w, w->next) < 0))
			return -1;
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

/* Ring descriptors a walked chain took: with IN_ORDER the next chain's
 * head follows them. */
static __rte_always_inline uint32_t
virtq_walk_ring_descs(const struct virtq_walk *w)
{
	return w->indirect ? w->ring_n : w->count;
}

/* The avail ring's head at position idx (not yet validated). */
static __rte_always_inline uint16_t
virtq_avail_head(const struct vsw_virtq *vq, uint16_t idx)
{
	const volatile uint16_t *ring = vq->avail->ring;

	return ring[idx & (vq->size - 1)];
}

/*
 * Reads the avail index once per burst (acquire: ring entries and
 * descriptors written before it are visible). Returns how many entries are
 * ready, or -1 when the index is more than size ahead (ring broken).
 */
static __rte_always_inline int
virtq_avail_count(struct vsw_virtq *vq)
{
	uint16_t idx = __atomic_load_n(&vq->avail->idx, __ATOMIC_ACQUIRE);
	uint16_t n = (uint16_t)(idx - vq->last_avail_idx);

	if (unlikely(n > vq->size))
		return -1;
	return n;
}

/*
 * Prefetch hints for the chain at avail position idx, which the caller
 * knows is published (before its burst's end). Nothing trusts what they
 * read: the chain is walked and checked as usual later; a head >= size or
 * an address outside guest memory just prefetches nothing. Reading an
 * avail entry or descriptor early is harmless (they are in guest memory
 * and the guest may change them until we walk them).
 */
static __rte_always_inline void
virtq_prefetch_desc(const struct vsw_virtq *vq, uint16_t idx)
{
	uint16_t head = virtq_avail_head(vq, idx);

	if (likely(head < vq->size))
		rte_prefetch0(&vq->desc[head]);
}

/* gpa's two lines in region r, ours; NULL if they are not both in it. */
static __rte_always_inline uint8_t *
virtq_region_lines(const struct vsw_mem_region *r, uint64_t gpa)
{
	uint64_t off = gpa - r->guest_phys_addr;

	if (off >= r->size || r->size - off < 2 * RTE_CACHE_LINE_SIZE)
		return NULL;
	return (uint8_t *)(uintptr_t)(r->host_user_addr + off);
}

/*
 * A hint's guest address -> ours: the region last hit first (one compare
 * in steady state), else all of them, which moves the hint (a full
 * translation per chain cost as much as the walk's own, measured with
 * callgrind). NULL outside guest memory.
 */
static __rte_always_inline uint8_t *
virtq_prefetch_va(struct vsw_virtq *vq, uint64_t gpa)
{
	const struct vsw_mem *mem = vq->mem;
	uint32_t i = vq->pf_region;
	uint8_t *va;

	if (likely(i < mem->nregions)) {
		va = virtq_region_lines(&mem->regions[i], gpa);
		if (likely(va != NULL))
			return va;
	}
	for (i = 0; i < mem->nregions; i++) {
		va = virtq_region_lines(&mem->regions[i], gpa);
		if (va != NULL) {
			vq->pf_region = (uint8_t)i;
			return va;
		}
	}
	return NULL;
}

/*
 * ... the first two lines of its head descriptor's buffer (wr: the copy
 * will write them); for an indirect head its table, which the walk reads
 * first.
 */
static __rte_always_inline void
virtq_prefetch_buf(struct vsw_virtq *vq, uint16_t idx, bool wr)
{
	uint16_t head = virtq_avail_head(vq, idx);
	uint8_t *va;

	if (unlikely(head >= vq->size))
		return;
	va = virtq_prefetch_va(vq, vq->desc[head].addr);
	if (unlikely(va == NULL))
		return;
	if (wr) { /* a constant per call site; the builtin wants one */
		/* the header's own line is only read when it already holds
		 * the header (virtq_hdr_store): taken for writing only when
		 * the frame starts in it too */
		if (((uintptr_t)va & (RTE_CACHE_LINE_SIZE - 1)) + vq->hdr_len <
			RTE_CACHE_LINE_SIZE)
			__builtin_prefetch(va, 1, 3);
		else
			rte_prefetch0(va);
		__builtin_prefetch(va + RTE_CACHE_LINE_SIZE, 1, 3);
	} else {
		rte_prefetch0(va);
		rte_prefetch0(va + RTE_CACHE_LINE_SIZE);
	}
}

/*
 * Bench only (-Dc_args=-DVSW_BENCH_COPY_CAP=N, bench/vsw-loopback.py
 * --cap-build): each split-ring data copy stops after N bytes and leaves
 * the rest stale, so a loop's cost without its copies shows. Never set in
 * a real build; without it this is the length itself.
 */
#ifdef VSW_BENCH_COPY_CAP
#define VIRTQ_COPY_LEN(k) RTE_MIN((uint32_t)(k), (uint32_t)VSW_BENCH_COPY_CAP)
#else
#define VIRTQ_COPY_LEN(k) (k)
#endif

/*
 * The virtio-net header (len 10 or 12) into a guest RX buffer, unless the
 * buffer already holds exactly it. A DPDK guest's TX clears the header it
 * pushes with compare-and-store, and its RX without offloads never reads
 * it, so in steady state the header's line is written by neither side and
 * stays shared, instead of crossing between the two cores twice a packet
 * (lib/vhost compares the same way). Reading a guest RX buffer is safe:
 * any contents only decide whether we store.
 */
static __rte_always_inline void
virtq_hdr_store(uint8_t *dst, const uint8_t *hdr, uint32_t len)
{
	uint64_t a, b;
	uint32_t c, d;

	memcpy(&a, dst, 8);
	memcpy(&b, hdr, 8);
	memcpy(&c, dst + len - 4, 4); /* the rest, overlapping at len 10 */
	memcpy(&d, hdr + len - 4, 4);
	if (a != b || c != d)
		memcpy(dst, hdr, len);
}

/* A burst may start one more chain while its descriptor budget lasts. */
static __rte_always_inline void
virtq_budget_reset(struct vsw_virtq *vq)
{
	vq->budget = VSW_VIRTQ_BURST_DESCS;
}

static __rte_always_inline bool
virtq_budget_spent(const struct vsw_virtq *vq)
{
	return vq->budget <= 0;
}

/* At most size entries per burst: a burst takes at most size chains. */
static __rte_always_inline void
virtq_shadow_push(struct vsw_virtq *vq, uint16_t id, uint32_t len)
{
	vq->shadow[vq->shadow_n].id = id;
	vq->shadow[vq->shadow_n].len = len;
	vq->shadow_n++;
}

/*
 * Dirty logging (virtq_log.c; contract in <vsw/virtq.h>). virtq_log_write
 * notes the pages of [gpa, gpa + len) (len > 0, inside guest memory) in the
 * burst's cache; virtq_log_flush ORs the cache into the log (release: after
 * the writes it covers). Only for a queue with virtq_logging(vq).
 */
void virtq_log_pages(struct vsw_virtq *vq, uint64_t first, uint64_t last);
void virtq_log_flush(struct vsw_virtq *vq);
/* used->ring[first .. first + n) (mod size) and used->idx */
void virtq_log_used(struct vsw_virtq *vq, uint16_t first, uint32_t n);
/* packed: descriptor slots [first .. first + n) (mod size) */
void virtq_log_pdesc(struct vsw_virtq *vq, uint16_t first, uint32_t n);

/*
 * Co-alignment (cfg.hdr_coalign), split and packed alike: when the first
 * segment is ours alone and has the headroom, write the virtio-net header
 * in front of it, so header + first segment are copied as one run.
 */
static __rte_always_inline void
virtq_hdr_coalign(const struct vsw_virtq *vq, struct rte_mbuf *m,
	const uint8_t *hdr, const uint8_t **sp, uint32_t *sl,
	const struct rte_mbuf **seg)
{
	uint8_t *h;

	if (!vq->hdr_coalign || !RTE_MBUF_DIRECT(m) ||
		rte_mbuf_refcnt_read(m) != 1 ||
		rte_pktmbuf_headroom(m) < vq->hdr_len)
		return;
	h = rte_pktmbuf_mtod(m, uint8_t *) - vq->hdr_len;
	memcpy(h, hdr, vq->hdr_len);
	*sp = h;
	*sl += m->data_len;
	*seg = m->next;
}

/*
 * One frame copy of k bytes from mbuf data: noted for the end of the burst
 * (defer: no dirty log; constant per instance) when it is small and the
 * burst has room left, else done now.
 */
static __rte_always_inline void
virtq_defer_copy(struct vsw_virtq *vq, uint8_t *dp, const uint8_t *sp,
	uint32_t k, bool defer)
{
	if (defer && k <= VIRTQ_DEFER_LEN && vq->defer_n < vq->defer_max) {
		struct virtq_defer *d = &vq->defer[vq->defer_n++];

		d->dst = dp;
		d->src = sp;
		d->len = k;
		return;
	}
	vsw_copy(dp, sp, k);
}

/* The burst's deferred copies, before its used entries are published. */
static __rte_always_inline void
virtq_defer_run(struct vsw_virtq *vq)
{
	uint32_t i;

	for (i = 0; i < vq->defer_n; i++)
		vsw_copy(vq->defer[i].dst, vq->defer[i].src,
			vq->defer[i].len);
	vq->defer_n = 0;
}

static __rte_always_inline bool
virtq_logging(const struct vsw_virtq *vq)
{
	return vq->log != NULL;
}

static __rte_always_inline void
virtq_log_write(struct vsw_virtq *vq, uint64_t gpa, uint64_t len)
{
	uint64_t first = gpa >> VSW_VIRTQ_LOG_PAGE_SHIFT;
	uint64_t last = (gpa + len - 1) >> VSW_VIRTQ_LOG_PAGE_SHIFT;
	struct virtq_log_entry *e;

	/* the common case: the page word the previous copy touched */
	if (likely(vq->log_n != 0)) {
		e = &vq->log_cache[vq->log_n - 1];
		if ((first >> 6) == e->word && (last >> 6) == e->word) {
			e->mask |= (UINT64_MAX >> (63 - (last & 63))) &
				   (UINT64_MAX << (first & 63));
			return;
		}
	}
	virtq_log_pages(vq, first, last);
}

/* virtq_notify.c: publish the shadow used ring, then kick if asked. */
void virtq_flush_used(struct vsw_virtq *vq);
/* ... its used->idx: n entries on (their ring entries written), then kick */
void virtq_used_publish(struct vsw_virtq *vq, uint32_t n);
/* virtq_inorder.c: the same for a split TX queue with IN_ORDER: one used
 * entry for the burst when its chains came in ring order (ordered) */
void virtq_inorder_flush_used(struct vsw_virtq *vq, bool ordered);
/* ... a head of the burst did not follow its predecessor: count, log */
void virtq_inorder_miss(struct vsw_virtq *vq) __rte_cold;

/* virtq_packed_*.c: the packed-ring bursts (vsw_virtq_*_burst dispatch) */
uint16_t virtq_packed_enqueue_burst(struct vsw_virtq *vq,
	struct rte_mbuf **pkts, uint16_t n);
uint16_t virtq_packed_dequeue_burst(struct vsw_virtq *vq,
	struct rte_mempool *mp, struct rte_mbuf **pkts, uint16_t n);

/* virtq.c: stop the queue (ring inconsistent); counts ERR_RING_BROKEN. */
void virtq_break(struct vsw_virtq *vq, enum vsw_virtq_stat why,
	const char *what, uint32_t val);

static inline bool
virtq_has(const struct vsw_virtq *vq, unsigned int bit)
{
	return (vq->features >> bit) & 1;
}

#endif /* VSW_VIRTQ_PRIV_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vsw virtqueue data path: split virtqueues (virtio 1.1, section 2.7) served
 * from the backend's side, on a plain struct. No librte_vhost in here: the
 * vhost-user port code creates a struct vsw_virtq from a config filled with
 * what librte_vhost hands over; unit tests fill the config from the
 * software guest; fuzzers from raw bytes.
 *
 * Direction names are the backend's: enqueue = host -> guest (the guest's RX
 * queue), dequeue = guest -> host (the guest's TX queue).
 *
 * Trust: everything in guest memory (descriptors, avail ring, lengths,
 * addresses, flags, indirect tables, the avail index) is hostile until
 * checked. The config and the region table are trusted (the port code
 * validated them when the memory table arrived).
 *
 * Threads: one poller owns a queue at a time; no locks inside.
 */
#ifndef VSW_VIRTQ_H
#define VSW_VIRTQ_H

#include <stdbool.h>
#include <stdint.h>

struct rte_mbuf;
struct rte_mempool;

#define VSW_VIRTQ_SIZE_MAX 32768u  /* virtio 1.1: queue size <= 32768 */
#define VSW_VIRTQ_BURST_MAX 32u    /* packets per burst call, at most */
/*
 * What one guest can make a burst do (issue 10: one guest must not starve
 * the others on its PMD). A chain holds at most CHAIN_MAX buffer
 * descriptors, ring and indirect table together (the INDIRECT descriptor
 * itself is not one), and an indirect table at most min(ring size,
 * CHAIN_MAX) entries: Linux posts at most MAX_SKB_FRAGS + 2 (19; 47 with
 * CONFIG_MAX_SKB_FRAGS=45), DPDK's virtio PMD 8 in a table (256 vectors is
 * DPDK vhost's own limit, BUF_VECTOR_MAX). A burst stops taking chains once
 * it has read BURST_DESCS descriptors (every one read: ring, INDIRECT and
 * table entries; a repeated head counts each time), so it reads at most
 * BURST_DESCS + CHAIN_MAX; what it leaves is served by the next
 * burst (dequeue) or dropped as ENQ_DROP_BUDGET (enqueue: the guest's
 * buffers stay posted). Legitimate bursts stay far below: 32 TX chains of
 * 47, 64 RX packets of 32 mergeable buffers.
 * Enqueue to a guest that negotiated receive offloads: each packet adds
 * one descriptor per CREDIT_BYTES of its length (up to CREDIT_PKT_MAX) to
 * the budget as it starts, since 64 TSO frames of 64 KiB into 1.5 KiB
 * mergeable buffers legitimately need ~2,750. The bound stays set by what
 * the switch sends, never by the guest: BURST_DESCS + CHAIN_MAX + 64 per
 * packet, and a guest posting buffers below 1 KiB still meets the cut.
 */
#define VSW_VIRTQ_CHAIN_MAX 256u
#define VSW_VIRTQ_BURST_DESCS 2048u
#define VSW_VIRTQ_CREDIT_BYTES 1024u
#define VSW_VIRTQ_CREDIT_PKT_MAX 65536u
#define VSW_MEM_REGIONS_MAX 8u     /* vhost-user VHOST_MEMORY_MAX_NREGIONS */

/* Feature bits the data path looks at (virtio 1.1 numbering). */
#define VSW_VIRTIO_NET_F_MRG_RXBUF 15
#define VSW_VIRTIO_RING_F_INDIRECT_DESC 28
#define VSW_VIRTIO_RING_F_EVENT_IDX 29
#define VSW_VIRTIO_F_VERSION_1 32
/* Offloads (virtio 1.1, 5.1.3): the virtio-net header carries them. */
#define VSW_VIRTIO_NET_F_CSUM 0        /* guest TX: partial checksums */
#define VSW_VIRTIO_NET_F_GUEST_CSUM 1  /* guest RX: partial checksums */
#define VSW_VIRTIO_NET_F_GUEST_TSO4 7
#define VSW_VIRTIO_NET_F_GUEST_TSO6 8
#define VSW_VIRTIO_NET_F_HOST_TSO4 11
#define VSW_VIRTIO_NET_F_HOST_TSO6 12
/* The header from the guest is read (dequeue) with any of these, */
#define VSW_VIRTQ_F_DEQ_OFFLOADS                                              \
	((1ULL << VSW_VIRTIO_NET_F_CSUM) |                                     \
		(1ULL << VSW_VIRTIO_NET_F_HOST_TSO4) |                         \
		(1ULL << VSW_VIRTIO_NET_F_HOST_TSO6))
/* and written for the guest (enqueue) with any of these. */
#define VSW_VIRTQ_F_ENQ_OFFLOADS                                              \
	((1ULL << VSW_VIRTIO_NET_F_GUEST_CSUM) |                               \
		(1ULL << VSW_VIRTIO_NET_F_GUEST_TSO4) |                        \
		(1ULL << VSW_VIRTIO_NET_F_GUEST_TSO6))
#define VSW_VIRTIO_F_RING_PACKED 34 /* packed rings (virtio 1.1, 2.8) */
/* buffers are used in the order they were made available (virtio 1.1
 * 2.6.9): split TX queues then publish one used entry per burst */
#define VSW_VIRTIO_F_IN_ORDER 35
#define VSW_VHOST_F_LOG_ALL 26 /* vhost: dirty logging (live migration) */

/*
 * Dirty log (live migration): one bit per 4 KiB guest-physical page, page p
 * is bit p % 8 of byte p / 8, set with an atomic OR after the write it
 * covers (the vhost-user protocol's log). A queue created with
 * cfg.log_base logs every byte it writes into guest memory: RX buffer
 * contents (every page each copy touched), used-ring entries and the used
 * index; on packed rings the used descriptors (the slots each burst's used
 * descriptors went to) and the device event area (written once, at
 * create). It never writes avail_event (the port keeps guest kicks off, and
 * librte_vhost writes that word only to turn them on), nor anything else.
 * The burst paths pick their logging variant once per burst; the bits of a
 * burst are collected and ORed in once at its end (after its writes).
 * Code of this folder that writes guest memory elsewhere calls virtq_log_write(vq, gpa, len) (vhost/virtq/virtq_priv.h) for it
 * when virtq_logging(vq), and its used-ring writer flushes with
 * virtq_log_flush(vq) at the end of the burst.
 */
#define VSW_VIRTQ_LOG_PAGE_SHIFT 12

/* One guest memory region: guest physical range -> our virtual address. */
struct vsw_mem_region {
	uint64_t guest_phys_addr;
	uint64_t size;
	uint64_t host_user_addr;
};

/* The guest memory table, as negotiated (trusted: validated on arrival). */
struct vsw_mem {
	uint32_t nregions;
	struct vsw_mem_region regions[VSW_MEM_REGIONS_MAX];
};

/*
 * Per-queue counters, one writer (the queue's poller). The X-macro gives
 * both the enum and the names, so they cannot drift.
 *
 * Partition, enqueue side: every packet passed to vsw_virtq_enqueue_burst()
 * is counted exactly once, in ENQ_PACKETS (delivered) or in one ENQ_DROP_*.
 * Dequeue side: every chain taken from the avail ring is counted exactly once,
 * in DEQ_PACKETS (returned as an mbuf) or in one DEQ_DROP_*.
 *
 * ERR_* say why (a packet dropped for a bad descriptor moves *_DROP_BAD_DESC
 * and exactly one ERR_DESC_* / ERR_INDIRECT_*). ERR_AVAIL_IDX and an avail
 * ring head index >= size (ERR_DESC_INDEX) make the ring inconsistent: the
 * queue stops (broken) and ERR_RING_BROKEN moves once. Packed rings:
 * a chain that runs into a descriptor not marked available
 * (ERR_DESC_NOT_AVAIL; a chain longer than the ring does too, at its own
 * head a lap later) has no end to skip to, so it breaks the ring too; a buffer id >= size or one
 * already taken in this burst (ERR_DESC_ID) drops the chain. Packets offered to a
 * broken queue are ENQ_DROP_NOT_READY; a broken queue dequeues nothing.
 * NOTIFY_SENT + NOTIFY_SUPPRESSED = bursts that published used entries.
 * LOG_PAGES: dirty-log bits set (pages, counted once per burst each).
 *
 * Enqueue drop reasons: RING_FULL (not enough guest buffers posted; the rest
 * of the burst is dropped the same way), TOO_LARGE (hdr_len + pkt_len >
 * max_pkt_len, or, without MRG_RXBUF, more than the next chain holds: that
 * chain stays posted), BAD_DESC (chain(s) returned with used len 0),
 * SHORT_HDR (first chain smaller than hdr_len; returned with len 0),
 * BUDGET (the burst had read VSW_VIRTQ_BURST_DESCS descriptors: this
 * packet and the rest of the burst; the chains stay posted).
 * ENQ_DROP_OFFLOAD: the mbuf asks for an offload (TSO, partial checksum)
 * the guest did not negotiate (the switch segments and completes
 * checksums for such ports first: this is the guard for a renegotiation
 * in between).
 * Dequeue: TOO_LARGE (chain bytes > max_pkt_len), NO_MBUF (segment
 * allocation failed mid-chain; when no head mbuf can be had, chains stay
 * posted instead), SHORT_HDR (chain holds hdr_len bytes or fewer),
 * HDR_* (with offloads negotiated, a virtio-net header the packet's own
 * headers contradict; see vsw_virtq_net_hdr_to_mbuf()).
 * ERR_CHAIN_LEN: more than VSW_VIRTQ_CHAIN_MAX buffer descriptors (a chain
 * longer than its table is ERR_DESC_LOOP). BUDGET_CUT: bursts (either
 * direction) that the descriptor budget stopped early; a dequeue burst
 * leaves the rest of the ring for the next one.
 * DEQ_GSO_PACKETS / DEQ_CSUM_PARTIAL / ENQ_GSO_PACKETS / ENQ_CSUM_PARTIAL
 * count offloaded packets among the delivered ones (not a partition).
 */
#define VSW_VIRTQ_STATS(X)                                                     \
	X(ENQ_PACKETS, "enq_packets")                                          \
	X(ENQ_BYTES, "enq_bytes")                                              \
	X(ENQ_DROP_RING_FULL, "enq_drop_ring_full")                            \
	X(ENQ_DROP_NOT_READY, "enq_drop_not_ready")                            \
	X(ENQ_DROP_TOO_LARGE, "enq_drop_too_large")                            \
	X(ENQ_DROP_BAD_DESC, "enq_drop_bad_desc")                              \
	X(ENQ_DROP_BUDGET, "enq_drop_budget")                                  \
	X(ENQ_DROP_SHORT_HDR, "enq_drop_short_hdr")                            \
	X(ENQ_DROP_OFFLOAD, "enq_drop_offload")                                \
	X(DEQ_PACKETS, "deq_packets")                                          \
	X(DEQ_BYTES, "deq_bytes")                                              \
	X(DEQ_DROP_BAD_DESC, "deq_drop_bad_desc")                              \
	X(DEQ_DROP_TOO_LARGE, "deq_drop_too_large")                            \
	X(DEQ_DROP_NO_MBUF, "deq_drop_no_mbuf")                                \
	X(DEQ_DROP_SHORT_HDR, "deq_drop_short_hdr")                            \
	X(DEQ_DROP_HDR_CSUM_RANGE, "deq_drop_hdr_csum_range")                  \
	X(DEQ_DROP_HDR_CSUM_L4, "deq_drop_hdr_csum_l4")                        \
	X(DEQ_DROP_HDR_GSO_TYPE, "deq_drop_hdr_gso_type")                      \
	X(DEQ_DROP_HDR_GSO_SIZE, "deq_drop_hdr_gso_size")                      \
	X(DEQ_DROP_HDR_LEN, "deq_drop_hdr_len")                                \
	X(DEQ_DROP_HDR_GSO_TOTAL, "deq_drop_hdr_gso_total")                    \
	X(ERR_DESC_INDEX, "err_desc_index")                                    \
	X(ERR_DESC_LOOP, "err_desc_loop")                                      \
	X(ERR_DESC_ADDR, "err_desc_addr")                                      \
	X(ERR_DESC_ZERO_LEN, "err_desc_zero_len")                              \
	X(ERR_DESC_WRONG_DIR, "err_desc_wrong_dir")                            \
	X(ERR_INDIRECT_NESTED, "err_indirect_nested")                          \
	X(ERR_INDIRECT_LEN, "err_indirect_len")                                \
	X(ERR_INDIRECT_NEXT, "err_indirect_next")                              \
	X(ERR_CHAIN_LEN, "err_chain_len")                                      \
	X(ERR_DESC_NOT_AVAIL, "err_desc_not_avail")                            \
	X(ERR_DESC_ID, "err_desc_id")                                          \
	X(ERR_AVAIL_IDX, "err_avail_idx")                                      \
	X(ERR_RING_BROKEN, "err_ring_broken")                                  \
	X(BUDGET_CUT, "budget_cut")                                            \
	X(NOTIFY_SENT, "notify_sent")                                          \
	X(NOTIFY_SUPPRESSED, "notify_suppressed")                              \
	X(DEQ_GSO_PACKETS, "deq_gso_packets")                                  \
	X(DEQ_CSUM_PARTIAL, "deq_csum_partial")                                \
	X(ENQ_GSO_PACKETS, "enq_gso_packets")                                  \
	X(ENQ_CSUM_PARTIAL, "enq_csum_partial")                              \
	X(LOG_PAGES, "log_pages")                                              \
	X(DEQ_INORDER_MISS, "deq_inorder_miss")

enum vsw_virtq_stat {
#define VSW_VIRTQ_STAT_ENUM(e, s) VSW_VIRTQ_STAT_##e,
	VSW_VIRTQ_STATS(VSW_VIRTQ_STAT_ENUM)
#undef VSW_VIRTQ_STAT_ENUM
	VSW_VIRTQ_STAT__MAX
};

/* Name of a counter ("enq_drop_ring_full", ...); NULL when out of range. */
const char *vsw_virtq_stat_name(enum vsw_virtq_stat s);

/* How the queue signals the guest ("interrupt"): the port supplies it. */
typedef void (*vsw_virtq_notify_fn)(void *ctx);

/*
 * Everything the caller sets about a queue, once, when the guest has set it
 * up. Zero is the default for every field that has one.
 */
struct vsw_virtq_config {
	uint64_t desc_gpa;   /* ring addresses as the guest gave them; */
	uint64_t avail_gpa;  /* translated and range-checked by create */
	uint64_t used_gpa;   /* (packed: driver and device event areas) */
	uint32_t size;       /* 1..VSW_VIRTQ_SIZE_MAX, a power of two unless
			      * packed */
	uint16_t last_avail_idx; /* where to resume (reconnect); packed: */
	uint16_t last_used_idx;  /* bit 15 the wrap counter, 0..14 the index */
	uint64_t features;   /* negotiated feature bits; with
			      * VSW_VIRTIO_F_RING_PACKED the ring is packed */
	const struct vsw_mem *mem; /* must outlive the queue */
	vsw_virtq_notify_fn notify; /* may be NULL: never notify */
	void *notify_ctx;
	uint32_t max_pkt_len; /* chain bytes incl. header, both directions:
			       * bigger are dropped; 0 = 65535 + hdr_len */
	const char *name;     /* for log lines ("vm1 q0"); may be NULL; must
			       * outlive the queue */
	/* Copy placement, measured (see virtq_enqueue.c, virtq_dequeue.c);
	 * the defaults are what ports use, benchmarks and fuzzers flip them. */
	bool hdr_coalign;  /* enqueue: header into the first segment's
			    * headroom, copied with the data as one run */
	bool no_deq_align; /* dequeue: keep the mbuf data at the default
			    * headroom instead of co-aligning it */
	bool no_rx_defer;  /* enqueue: every frame copy at once, none of
			    * <= 256 B held to the burst's end */
	/* Dirty log (see VSW_VIRTQ_LOG_PAGE_SHIFT): NULL = no logging. It
	 * must cover every region of mem (create: EINVAL otherwise) and stay
	 * mapped while the queue lives. */
	uint8_t *log_base;
	uint64_t log_size; /* bytes */
};

/*
 * The queue: private to the data path (layout in vhost/virtq/virtq_priv.h).
 * One poller owns it at a time; the accessors below may be called by the
 * thread that owns the queue, or by any thread once no poller can reach it
 * (after an RCU grace period), except vsw_virtq_stats_read (any thread).
 */
struct vsw_virtq;

/*
 * Allocates a queue and sets it up from cfg: translates and checks the
 * three ring areas (each must lie inside one guest memory region, with the
 * right alignment and size for cfg->size) and sizes the shadow used ring to
 * cfg->size. The only allocation the queue ever makes: the burst calls
 * allocate nothing but mbufs. Counters start at 0. Returns the queue, or
 * NULL with rte_errno set: EINVAL (bad size; no memory table or more than
 * VSW_MEM_REGIONS_MAX regions; a log that does not cover it), EFAULT (a ring outside guest memory,
 * logged), ENOMEM.
 */
struct vsw_virtq *vsw_virtq_create(const struct vsw_virtq_config *cfg);

/* Frees a queue (NULL: nothing). No poller may still reach it. */
void vsw_virtq_destroy(struct vsw_virtq *vq);

/*
 * Ring position: the next avail entry the queue will take, and the used
 * index it last published. What GET_VRING_BASE reports (the port hands them
 * to rte_vhost_set_vring_base), and cfg.last_*_idx to resume from. Packed:
 * the ring position in bits 0..14 and the wrap counter in bit 15 (the
 * vhost-user encoding of GET_VRING_BASE for packed rings).
 */
uint16_t vsw_virtq_last_avail_idx(const struct vsw_virtq *vq);
uint16_t vsw_virtq_last_used_idx(const struct vsw_virtq *vq);

/*
 * true once the ring was found inconsistent (ERR_AVAIL_IDX, or an avail
 * head >= size): the queue is stopped for good; only a new queue created
 * from a fresh config (the guest resets the ring) runs again.
 */
bool vsw_virtq_broken(const struct vsw_virtq *vq);

/* true when the queue logs its guest writes (created with a log). */
bool vsw_virtq_logging(const struct vsw_virtq *vq);

/*
 * Bytes of dirty log needed to cover mem: 1 bit per 4 KiB page up to the
 * highest guest-physical address of any region (0 for an empty table).
 */
uint64_t vsw_virtq_log_size_needed(const struct vsw_mem *mem);

/* One counter (0 when s is out of range); the owning thread. */
uint64_t vsw_virtq_stat(const struct vsw_virtq *vq, enum vsw_virtq_stat s);

/*
 * A retry (vsw_vport_enqueue_burst_retry): the caller offers again the last
 * n packets that the previous vsw_virtq_enqueue_burst() counted as
 * ENQ_DROP_RING_FULL; they are not dropped yet, so they leave that counter
 * (the next burst counts them once, delivered or not). The owning thread;
 * n at most what that burst counted there.
 */
void vsw_virtq_enqueue_retry(struct vsw_virtq *vq, uint16_t n);

/*
 * Copies every counter into stats[]. Any thread: each counter is read
 * whole, but the set is not one instant (the poller may be counting).
 */
void vsw_virtq_stats_read(const struct vsw_virtq *vq,
	uint64_t stats[VSW_VIRTQ_STAT__MAX]);

/*
 * Host -> guest. Copies each of pkts[0..n) (n <= VSW_VIRTQ_BURST_MAX,
 * single- or multi-segment) into guest RX buffers (mergeable when
 * MRG_RXBUF was negotiated: num_buffers set), publishes the used ring once,
 * and notifies the guest at most once if it asked.
 * Returns how many packets were delivered. Every packet not delivered is
 * counted under one ENQ_DROP_* reason. The mbufs stay the caller's (the
 * caller frees all n); with cfg.hdr_coalign (off by default) the header is
 * written into the headroom of a first segment that is direct, refcnt 1
 * and has hdr_len bytes of headroom. n may exceed VSW_VIRTQ_BURST_MAX.
 */
uint16_t vsw_virtq_enqueue_burst(struct vsw_virtq *vq, struct rte_mbuf **pkts,
	uint16_t n);

/*
 * Guest -> host. Takes up to n (<= VSW_VIRTQ_BURST_MAX) chains from the
 * guest's TX ring, copies each (minus the virtio-net header) into mbufs
 * from mp (chained when larger than one mbuf), returns them used, publishes
 * the used ring once and notifies at most once. Returns how many mbufs were
 * stored in pkts; they belong to the caller. A bad chain is returned to the
 * guest with length 0 and counted (DEQ_DROP_* plus the ERR_* that says why).
 * Used lengths are always 0 (the device writes nothing into TX buffers).
 * Unless cfg.no_deq_align, a head mbuf whose frame starts with >= 1
 * KiB has its data placed at the guest frame's offset modulo 64 (headroom
 * 65..128 bytes instead of RTE_PKTMBUF_HEADROOM).
 */
uint16_t vsw_virtq_dequeue_burst(struct vsw_virtq *vq, struct rte_mempool *mp,
	struct rte_mbuf **pkts, uint16_t n);

/*
 * The data path per ISA: the split-ring enqueue and dequeue above are
 * compiled once per ISA ("baseline": the build's target, copies through
 * the copy engine's dispatcher; "sse2", "avx2", "avx512": that ISA's flags,
 * its copy body inlined in every copy). "auto" (the default) is baseline,
 * which measured no slower; "best" is the best ISA build this CPU runs
 * (CPUID, VSW_CPU_HIDE honoured). The packed ring is not per ISA yet.
 * Control thread; a poller sees the change from its next burst.
 */
unsigned vsw_virtq_datapath_impl_count(void);
/* Name and availability of implementation idx; -EINVAL out of range. */
int vsw_virtq_datapath_impl_info(unsigned idx, const char **name,
	bool *available);
/* "auto", "best" or a listed name: 0; -EINVAL unknown; -ENOTSUP CPU
 * lacks it (nothing changes then). */
int vsw_virtq_datapath_impl_set(const char *name);
/* The selected implementation ("auto" and "best" resolved). */
const char *vsw_virtq_datapath_impl_get(void);
/*
 * What a burst runs now: the selection, or "baseline" while the copy
 * engine's active implementation is not the selected ISA (the copy
 * validator on, or copy-impl set to another one): the ISA builds inline
 * their own copy body, and those copies must not bypass the engine.
 */
const char *vsw_virtq_datapath_impl_effective(void);

/*
 * The virtio-net header (virtio 1.1, 5.1.6), little-endian in guest memory
 * (VERSION_1; vsw is little-endian only), num_buffers included.
 */
#define VSW_VIRTIO_NET_HDR_F_NEEDS_CSUM 1
#define VSW_VIRTIO_NET_HDR_F_DATA_VALID 2
#define VSW_VIRTIO_NET_HDR_GSO_NONE 0
#define VSW_VIRTIO_NET_HDR_GSO_TCPV4 1
#define VSW_VIRTIO_NET_HDR_GSO_UDP 3
#define VSW_VIRTIO_NET_HDR_GSO_TCPV6 4
#define VSW_VIRTIO_NET_HDR_GSO_ECN 0x80
struct vsw_virtio_net_hdr {
	uint8_t flags;
	uint8_t gso_type;
	uint16_t hdr_len;
	uint16_t gso_size;
	uint16_t csum_start;
	uint16_t csum_offset;
	uint16_t num_buffers;
} __attribute__((packed));

/* A GSO frame's IP datagram (IP header + payload) is at most this long,
 * and it may not make more than VSW_VIRTQ_GSO_SEGS_MAX segments (the
 * switch segments it in software for ports without TSO: the bound keeps
 * that work per packet small; Linux TCP with an MSS >= 256 stays under). */
#define VSW_VIRTQ_GSO_IP_MAX 65535u
#define VSW_VIRTQ_GSO_SEGS_MAX 256u

/*
 * Guest -> host: checks h (from the guest, hostile) against m's own
 * headers (Ethernet, up to two VLAN tags, IPv4 or IPv6 without extension
 * headers, TCP or UDP) and sets m's offload metadata: NEEDS_CSUM ->
 * RTE_MBUF_F_TX_{TCP,UDP}_CKSUM with l2/l3_len (the checksum field keeps
 * the guest's pseudo-header sum, as DPDK's TX convention wants); GSO TCPV4
 * / TCPV6 -> RTE_MBUF_F_TX_TCP_SEG with l4_len and tso_segsz, plus
 * RTE_MBUF_F_TX_IPV4/IPV6. features: the negotiated bits (GSO needs
 * HOST_TSO4/6, NEEDS_CSUM needs CSUM; without them the field is ignored,
 * as before offloads). Returns 0, or the VSW_VIRTQ_STAT_DEQ_DROP_HDR_*
 * reason: CSUM_RANGE (csum_start + csum_offset + 2 > pkt_len), CSUM_L4
 * (NEEDS_CSUM not at the TCP/UDP checksum of the packet), GSO_TYPE
 * (unknown or ECN type, not negotiated, not the packet's protocols, or
 * without NEEDS_CSUM), GSO_SIZE (0, or more than GSO_SEGS_MAX segments),
 * LEN (hdr_len > pkt_len), GSO_TOTAL (IP datagram > GSO_IP_MAX). Reads
 * nothing past pkt_len. m's data may be chained.
 */
int vsw_virtq_net_hdr_to_mbuf(const struct vsw_virtio_net_hdr *h,
	struct rte_mbuf *m, uint64_t features);

/*
 * Host -> guest: the header for m's offload metadata (num_buffers left
 * 0). Returns 0, or -1 when m asks for what features lack (TSO without
 * GUEST_TSO4/6, a partial checksum without GUEST_CSUM).
 */
int vsw_virtq_net_hdr_from_mbuf(const struct rte_mbuf *m,
	struct vsw_virtio_net_hdr *h, uint64_t features);

/*
 * Translate the start of a guest range. Returns our address of gpa, or NULL
 * when gpa lies in no region or len == 0 or gpa + len wraps. *contig gets how
 * many bytes of [gpa, gpa+len) are contiguous from there (shorter than len
 * when the range runs into the next region; the caller continues at
 * gpa + *contig).
 */
void *vsw_mem_translate(const struct vsw_mem *mem, uint64_t gpa, uint64_t len,
	uint64_t *contig);

#endif /* VSW_VIRTQ_H */

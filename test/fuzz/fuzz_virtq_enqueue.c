/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: vsw_virtq_enqueue_burst (host -> guest) over a ring and
 * guest memory built from the input (layout: fuzz_virtq.h). A burst
 * operation is followed by one (u16 length, u8 segment size) pair per
 * packet; packets are single- or multi-segment mbufs with known contents.
 *
 * Oracle: a reference model written here from the contract (virtq.h and
 * the headers of virtq_desc.c, virtq_enqueue.c) replays each burst on a
 * copy of guest memory taken just before it: it takes chains from the avail
 * ring in order, walks each (direct or one indirect table) only as far as
 * the packet needs, writes the header (num_buffers patched once the packet
 * is placed) and the frame bytes, rolls back or returns chains with len 0
 * as the contract says, and publishes the used entries. Frame copies of at
 * most 256 bytes (one mbuf segment's part in one guest span, the first 64
 * of a burst) land at the burst's end, in order, before the used entries;
 * a failed packet's are dropped: a hostile guest whose buffers overlap its
 * ring or each other sees that order (later walks read the ring without
 * them, a later header can be overwritten). After the burst
 * the guest memory must equal the copy byte for byte (used ids and
 * lengths, num_buffers, headers, frame bytes, and nothing written
 * anywhere else), and every ENQ_* / ERR_* counter, the ring position and
 * the broken flag must be what the model says. Besides: the return value
 * is the delivered count; a queue takes as many chains as it returns used
 * entries; counters partition (fz_check_common); the mbufs are not
 * modified (their data; the headroom may carry the header with
 * hdr_coalign); the pool is whole again after they are freed (count per
 * burst, fz_pool_check per input: no mbuf in it twice). ASan with guard
 * pages catches any access outside guest memory.
 */
#include <string.h>
#include <linux/virtio_ring.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "fuzz_check.h"
#include "fuzz_virtq.h"
#include "tl_mbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define PKTS_MAX 48u

static struct vsw_virtq *vq;
static struct fz_guest guest;
static struct fz_q q;

/* Packet i holds pat[i * 61 ...]: distinct, position-dependent bytes. */
static uint8_t pat[PKTS_MAX * 61 + 65536];

static const uint8_t *
pattern(uint32_t pkt)
{
	return pat + pkt * 61u;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_env_init();
	for (size_t i = 0; i < sizeof(pat); i++)
		pat[i] = (uint8_t)(i * 7u + (i >> 8) * 13u + (i >> 16));
	return 0;
}

/* --- the reference model -------------------------------------------------- */

#define REF_OK 0
#define REF_BROKEN (-1)

/* guest memory as the model sees it: a copy per region */
static uint8_t shadow[FZ_REGIONS][FZ_SLOT_PAGES * FZ_PAGE];

static void
shadow_take(void)
{
	for (uint32_t i = 0; i < guest.mem.nregions; i++)
		memcpy(shadow[i], guest.host[i], guest.mem.regions[i].size);
}

static bool
shadow_equal(void)
{
	for (uint32_t i = 0; i < guest.mem.nregions; i++)
		if (memcmp(shadow[i], guest.host[i],
			    guest.mem.regions[i].size) != 0)
			return false;
	return true;
}

/* fz_translate, into the copy */
static uint8_t *
sh_at(uint64_t gpa, uint64_t len, uint64_t *contig)
{
	uint8_t *p = fz_translate(&guest, gpa, len, contig);

	for (uint32_t i = 0; p != NULL && i < guest.mem.nregions; i++)
		if (p >= guest.host[i] &&
			p < guest.host[i] + guest.mem.regions[i].size)
			return shadow[i] + (p - guest.host[i]);
	return NULL;
}

static int
sh_read(uint64_t gpa, void *dst, uint64_t len)
{
	uint8_t *out = dst;
	uint64_t c;

	while (len > 0) {
		const uint8_t *p = sh_at(gpa, len, &c);

		if (p == NULL)
			return -1;
		memcpy(out, p, c);
		out += c;
		gpa += c;
		len -= c;
	}
	return 0;
}

/* descriptors the modelled burst has read (the budget, virtq.h) */
static uint32_t rw_reads;

/* A write-only chain being walked; ring: descriptors read from the ring's
 * own table (the INDIRECT one included) once in a table. */
struct rwalk {
	uint64_t table;
	uint32_t n, count, ring;
	bool indirect;
	uint16_t flags, next;
	uint64_t gpa, left;
	int err;
};

static int
rw_bad(struct rwalk *w, enum vsw_virtq_stat err)
{
	w->err = err;
	return -1;
}

static int
rw_load(struct rwalk *w, uint32_t idx)
{
	struct vring_desc d;
	uint64_t c;

	for (;;) {
		if (idx >= w->n)
			return rw_bad(w, VSW_VIRTQ_STAT_ERR_DESC_INDEX);
		if (++w->count > w->n)
			return rw_bad(w, VSW_VIRTQ_STAT_ERR_DESC_LOOP);
		/* buffers: the ring's before the table, less the INDIRECT */
		if ((w->indirect ? w->ring - 1 + w->count : w->count) >
			VSW_VIRTQ_CHAIN_MAX)
			return rw_bad(w, VSW_VIRTQ_STAT_ERR_CHAIN_LEN);
		rw_reads++;
		if (sh_read(w->table + 16ull * idx, &d, 16) < 0)
			return rw_bad(w, VSW_VIRTQ_STAT_ERR_DESC_ADDR);
		if (!(d.flags & VRING_DESC_F_INDIRECT))
			break;
		if (w->indirect)
			return rw_bad(w, VSW_VIRTQ_STAT_ERR_INDIRECT_NESTED);
		if (d.flags & VRING_DESC_F_NEXT)
			return rw_bad(w, VSW_VIRTQ_STAT_ERR_INDIRECT_NEXT);
		if (d.len == 0 || d.len % 16 || d.len / 16 > q.cfg.size ||
			d.len / 16 > VSW_VIRTQ_CHAIN_MAX)
			return rw_bad(w, VSW_VIRTQ_STAT_ERR_INDIRECT_LEN);
		if (sh_at(d.addr, d.len, &c) == NULL)
			return rw_bad(w, VSW_VIRTQ_STAT_ERR_DESC_ADDR);
		w->table = d.addr;
		w->n = d.len / 16;
		w->ring = w->count;
		w->count = 0;
		w->indirect = true;
		idx = 0;
	}
	if (d.len == 0)
		return rw_bad(w, VSW_VIRTQ_STAT_ERR_DESC_ZERO_LEN);
	if (!(d.flags & VRING_DESC_F_WRITE))
		return rw_bad(w, VSW_VIRTQ_STAT_ERR_DESC_WRONG_DIR);
	w->flags = d.flags;
	w->next = d.next;
	w->gpa = d.addr;
	w->left = d.len;
	return 0;
}

/* Next piece of the chain in the copy: 1, 0 at its end, -1 bad. */
static int
rw_span(struct rwalk *w, uint8_t **p, uint64_t *len)
{
	while (w->left == 0) {
		if (!(w->flags & VRING_DESC_F_NEXT))
			return 0;
		if (rw_load(w, w->next) < 0)
			return -1;
	}
	*p = sh_at(w->gpa, w->left, len);
	if (*p == NULL)
		return rw_bad(w, VSW_VIRTQ_STAT_ERR_DESC_ADDR);
	w->gpa += *len;
	w->left -= *len;
	return 1;
}

/* The model's burst state. */
static struct {
	uint16_t cur, end;     /* next avail entry, end of what is available */
	uint32_t nused;
	uint32_t used_id[VSW_VIRTQ_SIZE_MAX], used_len[VSW_VIRTQ_SIZE_MAX];
	uint64_t want[VSW_VIRTQ_STAT__MAX];
	bool broken;
} ref;

struct rpkt {
	struct rwalk w;
	uint16_t start, head, nbufs;
	uint32_t start_used, chain_len;
};

static void
ref_push(uint16_t id, uint32_t len)
{
	FZ_CHECK(ref.nused < q.cfg.size);
	ref.used_id[ref.nused] = id;
	ref.used_len[ref.nused] = len;
	ref.nused++;
}

static int
ref_rollback(struct rpkt *p, int why)
{
	ref.cur = p->start;
	ref.nused = p->start_used;
	return why;
}

static int
ref_return_bad(struct rpkt *p, int why)
{
	for (uint32_t i = p->start_used; i < ref.nused; i++)
		ref.used_len[i] = 0;
	ref_push(p->head, 0);
	return why;
}

static int
ref_take(struct rpkt *p)
{
	uint16_t head;

	if (ref.cur == ref.end)
		return ref_rollback(p, VSW_VIRTQ_STAT_ENQ_DROP_RING_FULL);
	/* no chain once the burst has read its budget; buffers stay posted */
	if (rw_reads >= VSW_VIRTQ_BURST_DESCS)
		return ref_rollback(p, VSW_VIRTQ_STAT_ENQ_DROP_BUDGET);
	FZ_CHECK(sh_read(q.cfg.avail_gpa + 4 +
				 2ull * (ref.cur & (q.cfg.size - 1)),
			 &head, 2) == 0);
	if (head >= q.cfg.size)
		return ref_rollback(p, REF_BROKEN);
	ref.cur++;
	p->head = head;
	p->chain_len = 0;
	p->nbufs++;
	p->w = (struct rwalk){.table = q.cfg.desc_gpa, .n = q.cfg.size};
	if (rw_load(&p->w, head) < 0)
		return ref_return_bad(p, VSW_VIRTQ_STAT_ENQ_DROP_BAD_DESC);
	return REF_OK;
}

/* Frame copies held to the end of the burst (virtq_enqueue.c). */
#define REF_DEFER_LEN 256u
#define REF_DEFER_MAX (2 * VSW_VIRTQ_BURST_MAX)

static struct {
	uint8_t *dst;
	const uint8_t *src;
	uint32_t len;
} pend[REF_DEFER_MAX];
static uint32_t npend;

static void
ref_frame_copy(uint8_t *dst, const uint8_t *src, uint32_t len, bool defer)
{
	if (defer && len <= REF_DEFER_LEN && npend < REF_DEFER_MAX) {
		pend[npend].dst = dst;
		pend[npend].src = src;
		pend[npend].len = len;
		npend++;
		return;
	}
	memcpy(dst, src, len);
}

static void
ref_pend_run(void)
{
	for (uint32_t i = 0; i < npend; i++)
		memcpy(pend[i].dst, pend[i].src, pend[i].len);
	npend = 0;
}

/*
 * Whether the queue writes this packet's header into the headroom of its
 * first segment and copies them as one run (cfg.hdr_coalign's rule).
 */
static bool
ref_coalign(const struct rte_mbuf *m)
{
	return (q.mode & FZ_M_HDR_COALIGN) && RTE_MBUF_DIRECT(m) &&
		rte_mbuf_refcnt_read(m) == 1 &&
		rte_pktmbuf_headroom(m) >= q.hdr_len;
}

/* One packet: header + frame, as the guest must find it. */
static int
ref_packet(const struct rte_mbuf *m, const uint8_t *frame, int *err)
{
	bool mrg = q.mode & FZ_M_MRG;
	uint32_t len = m->pkt_len, total = q.hdr_len + len, off = 0;
	uint8_t hdr[12] = {0}, *nb[2] = {NULL, NULL}, *dp = NULL;
	uint64_t dl = 0;
	struct rpkt p = {.start = ref.cur, .start_used = ref.nused};
	uint32_t start_pend = npend;
	/* the source run being copied ends at packet offset run_end: the
	 * header (a stack buffer), or header and first segment as one run,
	 * then each later segment; seg is the next one */
	bool co = ref_coalign(m);
	const struct rte_mbuf *seg = co ? m->next : m;
	uint32_t run_end = q.hdr_len + (co ? m->data_len : 0);
	int rc;

	if (total > q.max_pkt_len)
		return VSW_VIRTQ_STAT_ENQ_DROP_TOO_LARGE;
	hdr[10] = 1;
	rc = ref_take(&p);
	while (rc == REF_OK && off < total) {
		uint32_t k;

		if (dl == 0) {
			rc = rw_span(&p.w, &dp, &dl);
			if (rc < 0) {
				rc = ref_return_bad(&p,
					VSW_VIRTQ_STAT_ENQ_DROP_BAD_DESC);
			} else if (rc == 0 && off < q.hdr_len) {
				rc = ref_return_bad(&p,
					VSW_VIRTQ_STAT_ENQ_DROP_SHORT_HDR);
			} else if (rc == 0 && !mrg) {
				rc = ref_rollback(&p,
					VSW_VIRTQ_STAT_ENQ_DROP_TOO_LARGE);
			} else if (rc == 0) {
				ref_push(p.head, p.chain_len);
				rc = ref_take(&p);
			} else {
				rc = REF_OK;
			}
			continue;
		}
		/* one copy: the span's part of one source run; the header
		 * byte by byte (noting where num_buffers goes), frame bytes
		 * deferred when the copy starts past the header */
		uint32_t piece;
		bool past_hdr = off >= q.hdr_len;

		while (off == run_end && seg != NULL) {
			run_end += seg->data_len;
			seg = seg->next;
		}
		piece = (uint32_t)RTE_MIN(dl, (uint64_t)(run_end - off));

		for (k = 0; k < piece && off < q.hdr_len; k++, off++) {
			dp[k] = hdr[off];
			if (off == 10 || off == 11)
				nb[off - 10] = &dp[k];
		}
		if (k < piece) {
			ref_frame_copy(dp + k, frame + off - q.hdr_len,
				piece - k, past_hdr);
			off += piece - k;
			k = piece;
		}
		dp += k;
		dl -= k;
		p.chain_len += k;
	}
	if (rc != REF_OK) {
		npend = start_pend;
		*err = p.w.err;
		return rc;
	}
	ref_push(p.head, p.chain_len);
	if (mrg && p.nbufs != 1) {
		*nb[0] = (uint8_t)p.nbufs;
		*nb[1] = (uint8_t)(p.nbufs >> 8);
	}
	return REF_OK;
}

/* The burst on the copy; ref.want gets the counter moves. */
static void
ref_burst(struct rte_mbuf *const *pkts, uint16_t n)
{
	uint16_t avail_idx, avail, used_idx;

	ref.nused = 0;
	memset(ref.want, 0, sizeof(ref.want));
	ref.cur = vsw_virtq_last_avail_idx(vq);
	ref.broken = vsw_virtq_broken(vq);
	shadow_take();
	if (ref.broken) {
		ref.want[VSW_VIRTQ_STAT_ENQ_DROP_NOT_READY] = n;
		return;
	}
	FZ_CHECK(sh_read(q.cfg.avail_gpa + 2, &avail_idx, 2) == 0);
	avail = (uint16_t)(avail_idx - ref.cur);
	if (avail > q.cfg.size) {
		ref.want[VSW_VIRTQ_STAT_ERR_AVAIL_IDX] = 1;
		ref.want[VSW_VIRTQ_STAT_ERR_RING_BROKEN] = 1;
		ref.want[VSW_VIRTQ_STAT_ENQ_DROP_NOT_READY] = n;
		ref.broken = true;
		return;
	}
	if (avail == 0) {
		ref.want[VSW_VIRTQ_STAT_ENQ_DROP_RING_FULL] = n;
		return;
	}
	ref.end = (uint16_t)(ref.cur + avail);
	rw_reads = 0;
	npend = 0;
	for (uint16_t i = 0; i < n; i++) {
		int err = VSW_VIRTQ_STAT__MAX;
		int rc = ref_packet(pkts[i], pattern(i), &err);

		if (rc == REF_OK) {
			ref.want[VSW_VIRTQ_STAT_ENQ_PACKETS]++;
			ref.want[VSW_VIRTQ_STAT_ENQ_BYTES] += pkts[i]->pkt_len;
		} else if (rc == REF_BROKEN) {
			ref.want[VSW_VIRTQ_STAT_ERR_DESC_INDEX]++;
			ref.want[VSW_VIRTQ_STAT_ERR_RING_BROKEN] = 1;
			ref.want[VSW_VIRTQ_STAT_ENQ_DROP_NOT_READY] += n - i;
			ref.broken = true;
			break;
		} else if (rc == VSW_VIRTQ_STAT_ENQ_DROP_RING_FULL) {
			ref.want[rc] += n - i;
			break;
		} else if (rc == VSW_VIRTQ_STAT_ENQ_DROP_BUDGET) {
			ref.want[rc] += n - i; /* this one and the rest */
			ref.want[VSW_VIRTQ_STAT_BUDGET_CUT] = 1;
			break;
		} else {
			ref.want[rc]++;
			if (rc == VSW_VIRTQ_STAT_ENQ_DROP_BAD_DESC)
				ref.want[err]++;
		}
	}
	ref_pend_run();
	if (ref.nused == 0)
		return;
	for (uint32_t j = 0; j < ref.nused; j++) {
		uint16_t slot = (uint16_t)(vsw_virtq_last_used_idx(vq) + j) &
			(q.cfg.size - 1);
		uint8_t *e = sh_at(q.cfg.used_gpa + 4 + 8ull * slot, 8,
			&(uint64_t){0});

		memcpy(e, &ref.used_id[j], 4);
		memcpy(e + 4, &ref.used_len[j], 4);
	}
	used_idx = (uint16_t)(vsw_virtq_last_used_idx(vq) + ref.nused);
	memcpy(sh_at(q.cfg.used_gpa + 2, 2, &(uint64_t){0}), &used_idx, 2);
}

/* The queue did what the model did. */
static void
ref_check(const struct fz_snap *s)
{
	for (int c = VSW_VIRTQ_STAT_ENQ_PACKETS;
		c <= VSW_VIRTQ_STAT_BUDGET_CUT; c++) {
		if (c >= VSW_VIRTQ_STAT_DEQ_PACKETS &&
			c <= VSW_VIRTQ_STAT_DEQ_DROP_SHORT_HDR)
			continue;
		if (fz_delta(s, vq, (enum vsw_virtq_stat)c) != ref.want[c]) {
			fprintf(stderr, "counter %s moved %lu, model %lu\n",
				vsw_virtq_stat_name((enum vsw_virtq_stat)c),
				(unsigned long)fz_delta(s, vq,
					(enum vsw_virtq_stat)c),
				(unsigned long)ref.want[c]);
			FZ_CHECK(!"counters as the model says");
		}
	}
	FZ_CHECK(vsw_virtq_broken(vq) == ref.broken);
	FZ_CHECK(vsw_virtq_last_avail_idx(vq) == ref.cur);
	FZ_CHECK((uint16_t)(vsw_virtq_last_used_idx(vq) - s->last_used) ==
		 ref.nused);
	FZ_CHECK(shadow_equal());
}

static void
run_burst(struct fz_in *in, uint16_t n)
{
	struct rte_mempool *mp;
	struct rte_mbuf *pkts[PKTS_MAX];
	uint32_t lens[PKTS_MAX];
	uint64_t drops = 0, used_bytes = 0, offered = 0;
	struct fz_snap s;
	uint16_t got, taken, published;

	/* packets come from the big pool: the small one is for dequeue */
	mp = fz_pool(&(struct fz_q){.mode = 0});
	for (uint16_t i = 0; i < n; i++) {
		uint16_t l = fz_u16(in);
		uint8_t sg = fz_u8(in);

		/* mostly MTU-sized, sometimes up to 32 KiB */
		lens[i] = (l & 0x8000) ? (l & 0x7fffu) : l % 2048u;
		/* at most 33 segments: 48 packets never drain the pool */
		pkts[i] = tl_mbuf_build(mp, pattern(i), lens[i], NULL,
			RTE_MAX(1 + sg * 16u, lens[i] / 32 + 1));
		FZ_CHECK(pkts[i] != NULL);
		offered += lens[i];
	}
	fz_snap_take(&s, vq, &q);
	ref_burst(pkts, n);
	got = vsw_virtq_enqueue_burst(vq, pkts, n);
	ref_check(&s);
	FZ_CHECK(got <= n);
	for (int c = VSW_VIRTQ_STAT_ENQ_DROP_RING_FULL;
		c <= VSW_VIRTQ_STAT_ENQ_DROP_SHORT_HDR; c++)
		drops += fz_delta(&s, vq, (enum vsw_virtq_stat)c);
	FZ_CHECK(fz_delta(&s, vq, VSW_VIRTQ_STAT_ENQ_PACKETS) == got);
	FZ_CHECK(got + drops == n);
	FZ_CHECK(fz_delta(&s, vq, VSW_VIRTQ_STAT_ENQ_BYTES) <= offered);
	taken = (uint16_t)(vsw_virtq_last_avail_idx(vq) - s.last_avail);
	published = fz_check_common(&s, vq, &q,
		fz_delta(&s, vq, VSW_VIRTQ_STAT_ENQ_DROP_BAD_DESC));
	FZ_CHECK(published == taken);
	if (s.broken)
		FZ_CHECK(taken == 0 && got == 0 &&
			 fz_delta(&s, vq, VSW_VIRTQ_STAT_ENQ_DROP_NOT_READY) == n);
	for (uint16_t i = 0; i < published; i++)
		used_bytes += q.used->ring[(uint16_t)(s.last_used + i) &
					   (q.cfg.size - 1)].len;
	FZ_CHECK(used_bytes == fz_delta(&s, vq, VSW_VIRTQ_STAT_ENQ_BYTES) +
				      (uint64_t)q.hdr_len * got);
	if (!(q.mode & FZ_M_MRG))
		FZ_CHECK(published >= got);
	for (uint16_t i = 0; i < n; i++) {
		FZ_CHECK(tl_mbuf_equal(pkts[i], pattern(i), lens[i]));
		FZ_CHECK(rte_mbuf_check(pkts[i], 1, NULL) == 0);
	}
	rte_pktmbuf_free_bulk(pkts, n);
	FZ_CHECK(rte_mempool_in_use_count(mp) == 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = {data, size};
	int rc, bursts = 0;

	vq = fz_setup(&guest, &q, &in, VRING_DESC_F_WRITE);
	if (vq == NULL) {
		fz_debug(vq, &q, "create failed");
		return 0;
	}
	while ((rc = fz_op(&guest, &q, &in)) >= 0) {
		if (rc == 0)
			continue;
		/* 1..32, and now and then more than a burst */
		run_burst(&in, (uint16_t)(rc == 32 ? PKTS_MAX : rc));
		bursts++;
	}
	if (bursts == 0)
		run_burst(&in, 8);
	fz_debug(vq, &q, "end");
	fz_pool_check(fz_pool(&(struct fz_q){.mode = 0}));
	vsw_virtq_destroy(vq);
	vq = NULL;
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: vsw_virtq_dequeue_burst on a packed ring (guest -> host)
 * over descriptors, indirect tables and guest memory from the input, plus
 * enqueue bursts into the same ring (checked by the counter partition).
 *
 * Guest memory (fixed here, so inputs aim at edges): region 0 (ring, event
 * areas, tables: 64 KiB), regions 1 and 2 adjacent (data: 256 + 64 KiB,
 * buffers may straddle), a gap between 0 and 1; guard pages around each.
 *
 * Input: u8 ring size (1..64), u8 mode (bit 0 MRG_RXBUF, bit 1 EVENT_IDX,
 * bit 2 no dequeue align, bit 3 IN_ORDER, bit 4 no RX copy deferral), u16
 * start position (slot | wrap << 15), then the ring's descriptors, then
 * operations until the input ends:
 *   op 0..3: burst of dequeue (u8 n), op 4: a descriptor rewritten,
 *   op 5: 16 bytes written into the data region (tables, headers),
 *   op 6: enqueue burst (u8 n).
 * A descriptor is u8 place, u32 offset, u32 len, u16 id, u8 flag mode,
 * u8 flag bits (see rd_desc).
 *
 * Oracle: a reference walker written here from the packed-ring contract
 * (virtq.h, virtq_packed_desc.c's header; not from the code) predicts
 * each dequeue burst: which chains it takes (head available in the
 * device's lap; stops at a chain without an end, which breaks the ring),
 * each chain's ring slots and id (of its last slot), its fate (frame
 * bytes; too large; short header; bad with the ERR_* that says why; id out
 * of range or already taken in this burst), and the descriptor budget
 * (each slot and table entry read; checked before each chain). After the burst: mbufs equal
 * the good chains' frames in order; each drop and ERR_* counter moved by
 * the predicted amount; one used descriptor per chain taken at its first
 * slot, id and len 0, flags of the device's lap; with IN_ORDER and every
 * id in range and distinct, one for the burst instead (the last chain's
 * id at the first chain's slot, the other chains' slots as they were);
 * the ring position moved by the chains' slots. ASan with guard pages
 * catches any stray access.
 */
#include <string.h>
#include <sys/mman.h>
#include <linux/virtio_ring.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "fuzz_check.h"
#include "fuzz_virtq.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define R0_GPA 0x10000ull
#define R0_SIZE 0x10000ull
#define R1_GPA 0x100000ull
#define R1_SIZE 0x40000ull
#define R2_GPA (R1_GPA + R1_SIZE)
#define R2_SIZE 0x10000ull
#define EV_OFF 0x8000ull
#define F_AV (1u << VRING_PACKED_DESC_F_AVAIL)
#define F_US (1u << VRING_PACKED_DESC_F_USED)
#define REF_BYTES_MAX (65535u + 12u + 4096u)

static struct vsw_mem mem;
static uint8_t *host[3];
static const uint64_t rgpa[3] = {R0_GPA, R1_GPA, R2_GPA};
static const uint64_t rsize[3] = {R0_SIZE, R1_SIZE, R2_SIZE};
static struct fz_q fq; /* for fz_pool only (big pool) */
static uint8_t ref_bytes[VSW_VIRTQ_BURST_MAX][REF_BYTES_MAX];

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	uint32_t i;

	(void)argc;
	(void)argv;
	fz_env_init();
	for (i = 0; i < 3; i++) {
		uint8_t *m = mmap(NULL, rsize[i] + 2 * FZ_PAGE,
			PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
			0);

		FZ_CHECK(m != MAP_FAILED);
		FZ_CHECK(mprotect(m, FZ_PAGE, PROT_NONE) == 0);
		FZ_CHECK(mprotect(m + FZ_PAGE + rsize[i], FZ_PAGE,
				 PROT_NONE) == 0);
		host[i] = m + FZ_PAGE;
		mem.regions[i].guest_phys_addr = rgpa[i];
		mem.regions[i].size = rsize[i];
		mem.regions[i].host_user_addr = (uint64_t)(uintptr_t)host[i];
	}
	mem.nregions = 3;
	return 0;
}

/* Reference translation: the region holding gpa, and how much is there. */
static uint8_t *
ref_tr(uint64_t gpa, uint64_t len, uint64_t *contig)
{
	uint32_t i;

	if (len == 0 || gpa + len - 1 < gpa)
		return NULL;
	for (i = 0; i < 3; i++)
		if (gpa >= rgpa[i] && gpa - rgpa[i] < rsize[i]) {
			uint64_t room = rsize[i] - (gpa - rgpa[i]);

			*contig = len < room ? len : room;
			return host[i] + (gpa - rgpa[i]);
		}
	return NULL;
}

static int
ref_read(uint64_t gpa, void *dst, uint64_t len)
{
	uint8_t *o = dst;
	uint64_t c;

	while (len > 0) {
		const uint8_t *p = ref_tr(gpa, len, &c);

		if (p == NULL)
			return -1;
		memcpy(o, p, c);
		o += c;
		gpa += c;
		len -= c;
	}
	return 0;
}

static struct vring_packed_desc *ring;
static uint32_t qsize;
static bool in_order;
static uint32_t hdr_len = 12, max_len = 65535 + 12;

/* One descriptor from the input (addresses aimed at memory and edges). */
static void
rd_desc(struct fz_in *in, struct vring_packed_desc *d)
{
	uint8_t place = fz_u8(in);
	uint32_t off = fz_u32(in), len = fz_u32(in);
	uint8_t fm, fb;
	static const uint64_t base[4] = {R0_GPA, R1_GPA, R2_GPA + R2_SIZE,
		R0_GPA + R0_SIZE};

	d->id = fz_u16(in);
	fm = fz_u8(in);
	fb = fz_u8(in);
	if (place < 192)
		d->addr = base[place & 1] + (off % (uint32_t)R1_SIZE);
	else if (place < 240)
		d->addr = base[2 + (place & 1)] - (off & 0xff); /* ends */
	else
		d->addr = ((uint64_t)off << 32) | len;
	d->len = fm & 0x40 ? len : len % 4096;
	/* mostly: the chosen NEXT/WRITE/INDIRECT bits, available in lap fm&1 */
	if (fm & 0x80)
		d->flags = (uint16_t)(fb | fm << 8);
	else
		d->flags = (fb & 7) | ((fm & 1) ? F_AV : F_US);
}

static bool
ref_avail(uint16_t f, bool w)
{
	return !!(f & F_AV) == w && !!(f & F_US) != w;
}

struct ref {
	int outcome; /* 0 ok, else a DEQ_DROP_* counter */
	int err;
	uint32_t len, nslots;
	uint32_t reads; /* descriptors read: slots and table entries */
	uint16_t id, slot;
	bool wrap;
};

/* Copies one descriptor's bytes; 0, or the problem (bad/too large). */
static int
ref_copy(struct ref *r, uint8_t *out, uint64_t *total, uint64_t gpa,
	uint64_t left)
{
	uint64_t c;

	for (; left > 0; gpa += c, left -= c) {
		const uint8_t *p = ref_tr(gpa, left, &c);

		if (p == NULL) {
			r->err = VSW_VIRTQ_STAT_ERR_DESC_ADDR;
			return VSW_VIRTQ_STAT_DEQ_DROP_BAD_DESC;
		}
		*total += c;
		if (*total > max_len)
			return VSW_VIRTQ_STAT_DEQ_DROP_TOO_LARGE;
		memcpy(out + *total - c, p, c);
	}
	return 0;
}

static int
ref_bad(struct ref *r, int err)
{
	r->err = err;
	return VSW_VIRTQ_STAT_DEQ_DROP_BAD_DESC;
}

/* An indirect ring descriptor's table (it is the chain's only slot). */
static int
ref_table(struct ref *r, const struct vring_packed_desc *d, uint8_t *out,
	uint64_t *total)
{
	uint64_t c;
	uint32_t i;

	if (r->nslots != 1 || (d->flags & VRING_DESC_F_NEXT))
		return ref_bad(r, VSW_VIRTQ_STAT_ERR_INDIRECT_NEXT);
	if (d->len == 0 || d->len % 16 || d->len / 16 > qsize)
		return ref_bad(r, VSW_VIRTQ_STAT_ERR_INDIRECT_LEN);
	if (ref_tr(d->addr, d->len, &c) == NULL)
		return ref_bad(r, VSW_VIRTQ_STAT_ERR_DESC_ADDR);
	for (i = 0; i < d->len / 16; i++) {
		struct vring_packed_desc e;
		int rc;

		r->reads++;
		if (ref_read(d->addr + 16ull * i, &e, 16) < 0)
			return ref_bad(r, VSW_VIRTQ_STAT_ERR_DESC_ADDR);
		if (e.len == 0) /* TX: WRITE in a table is taken */
			return ref_bad(r, VSW_VIRTQ_STAT_ERR_DESC_ZERO_LEN);
		rc = ref_copy(r, out, total, e.addr, e.len);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* The chain at (slot, wrap): 1 taken (r filled), 0 none, -1 no end. */
static int
ref_chain(uint16_t slot, bool wrap, struct ref *r, uint8_t *out)
{
	uint64_t total = 0;
	int fate = 0;

	if (!ref_avail(ring[slot].flags, wrap))
		return 0;
	r->slot = slot;
	r->wrap = wrap;
	r->nslots = 0;
	r->reads = 0;
	r->err = 0;
	for (;;) {
		struct vring_packed_desc d = ring[slot];

		if (r->nslots != 0 && !ref_avail(d.flags, wrap)) {
			r->err = VSW_VIRTQ_STAT_ERR_DESC_NOT_AVAIL;
			return -1;
		}
		r->reads++;
		if (++r->nslots > qsize) {
			r->err = VSW_VIRTQ_STAT_ERR_DESC_LOOP;
			return -1;
		}
		r->id = d.id;
		if (fate == 0 && (d.flags & VRING_DESC_F_INDIRECT))
			fate = ref_table(r, &d, out, &total);
		else if (fate == 0 && d.len == 0)
			fate = ref_bad(r, VSW_VIRTQ_STAT_ERR_DESC_ZERO_LEN);
		else if (fate == 0 && (d.flags & VRING_DESC_F_WRITE))
			fate = ref_bad(r, VSW_VIRTQ_STAT_ERR_DESC_WRONG_DIR);
		else if (fate == 0)
			fate = ref_copy(r, out, &total, d.addr, d.len);
		if (!(d.flags & VRING_DESC_F_NEXT))
			break;
		if (++slot == qsize) {
			slot = 0;
			wrap = !wrap;
		}
	}
	if (fate == 0 && total <= hdr_len)
		fate = VSW_VIRTQ_STAT_DEQ_DROP_SHORT_HDR;
	r->outcome = fate;
	r->len = fate == 0 ? (uint32_t)(total - hdr_len) : 0;
	return 1;
}

static bool
mbuf_is(const struct rte_mbuf *m, const uint8_t *data, uint32_t len)
{
	uint32_t off = 0;

	if (m->pkt_len != len)
		return false;
	for (const struct rte_mbuf *s = m; s != NULL; s = s->next) {
		if (off + s->data_len > len ||
			memcmp(rte_pktmbuf_mtod(s, const uint8_t *), data + off,
				s->data_len) != 0)
			return false;
		off += s->data_len;
	}
	return off == len;
}

static void
pos_split(uint16_t p, uint16_t *slot, bool *wrap)
{
	*slot = p & 0x7fff;
	*wrap = p >> 15;
}

/* What the reference predicts a dequeue burst does (deq_predict). */
struct deq_pred {
	struct ref refs[VSW_VIRTQ_BURST_MAX]; /* the chains it takes */
	uint64_t want[VSW_VIRTQ_STAT__MAX];   /* what each counter moves by */
	uint16_t taken;                       /* chains taken */
	uint16_t good;                        /* of them, frames */
	uint16_t slot;                        /* the ring position after */
	bool wrap;
	bool breaks; /* a chain without an end breaks the ring */
	bool ids_ok; /* every id in range and distinct */
};

/* Walk the chains a burst of n may take from the ring position, as the
 * contract says; a broken ring takes none. */
static void
deq_predict(struct deq_pred *p, uint16_t n, bool broken)
{
	uint64_t inflight[1024 / 64] = {0};
	uint32_t reads = 0;
	uint16_t i;

	memset(p->want, 0, sizeof(p->want));
	p->taken = p->good = 0;
	p->breaks = false;
	p->ids_ok = true;
	for (i = 0; i < n && !broken; i++) {
		struct ref *r = &p->refs[p->taken];
		int rc = ref_chain(p->slot, p->wrap, r, ref_bytes[p->taken]);

		if (rc == 0)
			break;
		/* the budget, checked before each chain (head available) */
		if (reads >= VSW_VIRTQ_BURST_DESCS) {
			p->want[VSW_VIRTQ_STAT_BUDGET_CUT]++;
			break;
		}
		reads += r->reads;
		if (rc < 0) {
			p->want[r->err]++;
			p->want[VSW_VIRTQ_STAT_ERR_RING_BROKEN]++;
			p->breaks = true;
			break;
		}
		bool busy = r->id < qsize &&
			((inflight[r->id >> 6] >> (r->id & 63)) & 1);

		p->ids_ok = p->ids_ok && r->id < qsize && !busy;
		if ((r->id >= qsize || busy) &&
			r->outcome != VSW_VIRTQ_STAT_DEQ_DROP_BAD_DESC) {
			r->outcome = VSW_VIRTQ_STAT_DEQ_DROP_BAD_DESC;
			r->err = VSW_VIRTQ_STAT_ERR_DESC_ID;
		}
		if (r->id < qsize)
			inflight[r->id >> 6] |= 1ull << (r->id & 63);
		if (r->outcome != 0) {
			p->want[r->outcome]++;
			if (r->outcome == VSW_VIRTQ_STAT_DEQ_DROP_BAD_DESC)
				p->want[r->err]++;
		} else {
			p->good++;
		}
		p->slot = (uint16_t)(p->slot + r->nslots);
		if (p->slot >= qsize) {
			p->slot = (uint16_t)(p->slot - qsize);
			p->wrap = !p->wrap;
		}
		p->taken++;
	}
}

/* The used descriptors the burst wrote (snap: the ring before it) and
 * the mbufs it returned, against the prediction; adds the frames' bytes
 * to p->want. */
static void
deq_check_used(struct deq_pred *p, struct rte_mbuf *const *pkts,
	const struct vring_packed_desc *snap)
{
	bool batch = in_order && p->ids_ok;
	uint16_t i, j = 0, last = (uint16_t)(p->taken - 1);

	for (i = 0; i < p->taken; i++) {
		const struct ref *r = &p->refs[i];
		const struct vring_packed_desc *u = &ring[r->slot];
		uint16_t fl = r->wrap ? F_AV | F_US : 0;

		if (batch && i != 0) /* the device skipped this chain */
			FZ_CHECK(memcmp(u, &snap[r->slot], sizeof(*u)) == 0);
		else
			FZ_CHECK(u->id == p->refs[batch ? last : i].id &&
				 u->len == 0 &&
				 (u->flags & (F_AV | F_US |
					      VRING_DESC_F_WRITE)) == fl);
		if (r->outcome == 0) {
			FZ_CHECK(mbuf_is(pkts[j], ref_bytes[i] + hdr_len,
				r->len));
			p->want[VSW_VIRTQ_STAT_DEQ_BYTES] += r->len;
			j++;
		}
	}
}

/* Each counter from first up to (not with) end moved by want: the names
 * of those that did not, then abort. */
static void
stats_check_moved(const uint64_t *before, const uint64_t *after,
	const uint64_t *want, unsigned int first, unsigned int end)
{
	unsigned int i;

	for (i = first; i < end; i++) {
		if (after[i] - before[i] != want[i])
			fprintf(stderr, "%s moved by %llu, predicted %llu\n",
				vsw_virtq_stat_name(i),
				(unsigned long long)(after[i] - before[i]),
				(unsigned long long)want[i]);
		FZ_CHECK(after[i] - before[i] == want[i]);
	}
}

static void
deq_burst(struct vsw_virtq *vq, uint16_t n)
{
	static struct deq_pred p;
	static struct vring_packed_desc snap[64];
	uint64_t before[VSW_VIRTQ_STAT__MAX], after[VSW_VIRTQ_STAT__MAX];
	struct rte_mbuf *pkts[VSW_VIRTQ_BURST_MAX];
	bool broken = vsw_virtq_broken(vq);
	uint16_t got;

	pos_split(vsw_virtq_last_avail_idx(vq), &p.slot, &p.wrap);
	deq_predict(&p, n, broken);
	memcpy(snap, ring, qsize * sizeof(snap[0]));
	vsw_virtq_stats_read(vq, before);
	got = vsw_virtq_dequeue_burst(vq, fz_pool(&fq), pkts, n);
	vsw_virtq_stats_read(vq, after);
	FZ_CHECK(got == p.good);
	deq_check_used(&p, pkts, snap);
	p.want[VSW_VIRTQ_STAT_DEQ_PACKETS] = p.good;
	stats_check_moved(before, after, p.want, VSW_VIRTQ_STAT_DEQ_PACKETS,
		VSW_VIRTQ_STAT_NOTIFY_SENT);
	FZ_CHECK(after[VSW_VIRTQ_STAT_NOTIFY_SENT] +
			 after[VSW_VIRTQ_STAT_NOTIFY_SUPPRESSED] -
			 before[VSW_VIRTQ_STAT_NOTIFY_SENT] -
			 before[VSW_VIRTQ_STAT_NOTIFY_SUPPRESSED] ==
		 (p.taken != 0));
	FZ_CHECK(vsw_virtq_broken(vq) == (broken || p.breaks));
	FZ_CHECK(vsw_virtq_last_avail_idx(vq) ==
		 (uint16_t)(p.slot | (p.wrap ? 0x8000 : 0)));
	FZ_CHECK(vsw_virtq_last_used_idx(vq) == vsw_virtq_last_avail_idx(vq));
	rte_pktmbuf_free_bulk(pkts, got);
}

/* Enqueue: no oracle beyond the partition, the positions (and ASan). The
 * mbufs' bytes come from the input: a buffer may lie on the ring, and the
 * copy then rewrites descriptors the burst has yet to read. */
static void
enq_burst(struct vsw_virtq *vq, uint16_t n, uint16_t len)
{
	uint64_t b[VSW_VIRTQ_STAT__MAX], a[VSW_VIRTQ_STAT__MAX], sum = 0;
	struct rte_mbuf *pkts[VSW_VIRTQ_BURST_MAX];
	uint16_t i, k, got;
	uint8_t *d;

	for (i = 0; i < n; i++) {
		pkts[i] = rte_pktmbuf_alloc(fz_pool(&fq));
		FZ_CHECK(pkts[i] != NULL);
		d = (uint8_t *)rte_pktmbuf_append(pkts[i], len % 2000);
		FZ_CHECK(d != NULL || len % 2000 == 0);
		/* from the input: the copy may land on the ring itself, and
		 * an mbuf's stale bytes would make the input not replay */
		for (k = 0; k < len % 2000; k++)
			d[k] = (uint8_t)((len >> 8) ^ (k * 0x9d) ^ i);
	}
	vsw_virtq_stats_read(vq, b);
	got = vsw_virtq_enqueue_burst(vq, pkts, n);
	vsw_virtq_stats_read(vq, a);
	for (i = VSW_VIRTQ_STAT_ENQ_DROP_RING_FULL;
		i <= VSW_VIRTQ_STAT_ENQ_DROP_SHORT_HDR; i++)
		sum += a[i] - b[i];
	FZ_CHECK(a[VSW_VIRTQ_STAT_ENQ_PACKETS] -
			 b[VSW_VIRTQ_STAT_ENQ_PACKETS] == got);
	FZ_CHECK(got + sum == n);
	/* every chain it took went back (none past a lap: packed_taken) */
	FZ_CHECK(vsw_virtq_last_used_idx(vq) == vsw_virtq_last_avail_idx(vq));
	rte_pktmbuf_free_bulk(pkts, n);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = {data, size};
	struct vsw_virtq_config cfg;
	struct vsw_virtq *vq;
	uint8_t mode;
	uint16_t pos, i;
	int op;

	for (i = 0; i < 3; i++)
		memset(host[i], 0, rsize[i]);
	qsize = 1 + fz_u8(&in) % 64;
	mode = fz_u8(&in);
	pos = fz_u16(&in);
	memset(&cfg, 0, sizeof(cfg));
	cfg.desc_gpa = R0_GPA;
	cfg.avail_gpa = R0_GPA + EV_OFF;
	cfg.used_gpa = R0_GPA + EV_OFF + 4;
	cfg.size = qsize;
	cfg.mem = &mem;
	cfg.features = (1ull << VSW_VIRTIO_F_RING_PACKED) |
		(1ull << VSW_VIRTIO_F_VERSION_1) |
		(1ull << VSW_VIRTIO_RING_F_INDIRECT_DESC) |
		(mode & 1 ? 1ull << VSW_VIRTIO_NET_F_MRG_RXBUF : 0) |
		(mode & 2 ? 1ull << VSW_VIRTIO_RING_F_EVENT_IDX : 0) |
		(mode & 8 ? 1ull << VSW_VIRTIO_F_IN_ORDER : 0);
	in_order = mode & 8;
	cfg.no_deq_align = mode & 4;
	cfg.no_rx_defer = mode & 16; /* RX copies landing mid-burst */
	cfg.last_avail_idx = cfg.last_used_idx =
		(uint16_t)(((pos & 0x7fff) % qsize) | (pos & 0x8000));
	ring = (struct vring_packed_desc *)host[0];
	for (i = 0; i < qsize; i++)
		rd_desc(&in, &ring[i]);
	vq = vsw_virtq_create(&cfg);
	FZ_CHECK(vq != NULL);
	while (in.n > 0) {
		op = fz_u8(&in) % 7;
		if (op < 4) {
			deq_burst(vq, fz_u8(&in) % (VSW_VIRTQ_BURST_MAX + 1));
		} else if (op == 4) {
			rd_desc(&in, &ring[fz_u8(&in) % qsize]);
		} else if (op == 5) {
			uint32_t at = fz_u32(&in) % (R1_SIZE + R2_SIZE - 16);
			uint8_t b[16];

			for (i = 0; i < 16; i++)
				b[i] = fz_u8(&in);
			bool r1 = at < R1_SIZE;

			memcpy(host[r1 ? 1 : 2] + (r1 ? at : at - R1_SIZE), b,
				r1 && at + 16 > R1_SIZE ? R1_SIZE - at : 16);
		} else {
			uint16_t n = fz_u8(&in) % (VSW_VIRTQ_BURST_MAX + 1);

			enq_burst(vq, n, fz_u16(&in));
		}
	}
	deq_burst(vq, VSW_VIRTQ_BURST_MAX);
	vsw_virtq_destroy(vq);
	fz_pool_check(fz_pool(&fq));
	return 0;
}

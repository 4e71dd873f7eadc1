/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: vsw_virtq_dequeue_burst (guest -> host) over a ring and
 * guest memory built from the input (layout: fuzz_virtq.h).
 *
 * Oracle: a reference walker written here from the contract (virtq.h,
 * virtq_desc.c's header) predicts, before each burst, every chain the burst
 * may take: its outcome (frame bytes, too large, short header, or bad with
 * the ERR_* counter that says why), where a head >= ring size breaks the
 * ring, and where the descriptor budget stops the burst (budget_cut). After the burst: chains taken = min(n, available) up to the break;
 * with no mbuf shortage, the mbufs returned are exactly the chains predicted
 * good, in order, byte for byte; every drop counter moved by the predicted
 * amount; used entries carry the taken heads with len 0; counters partition
 * (fz_check_common); every mbuf is sane and the pool is whole again after
 * they are freed (count per burst; fz_pool_check per input: no mbuf in it
 * twice). ASan with guard pages catches any access outside guest
 * memory.
 */
#include <string.h>
#include <linux/virtio_ring.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "fuzz_check.h"
#include "fuzz_virtq.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define REF_OK (-1)
#define REF_BYTES_MAX (65535u + 12u + 8192u)

struct ref {
	int outcome; /* REF_OK, or the DEQ_DROP_* counter */
	int err;     /* ERR_* for BAD_DESC */
	uint32_t len; /* frame bytes (after the header) */
	uint32_t off; /* where they are in ref_bytes */
};

static struct vsw_virtq *vq;
static struct fz_guest guest;
static struct fz_q q;
/* descriptors the predicted burst has read (the budget, virtq.h) */
static uint32_t ref_reads;
static uint8_t ref_bytes[VSW_VIRTQ_BURST_MAX * REF_BYTES_MAX];

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_env_init();
	return 0;
}

static int
ref_bad(struct ref *r, enum vsw_virtq_stat err)
{
	r->outcome = VSW_VIRTQ_STAT_DEQ_DROP_BAD_DESC;
	r->err = err;
	return -1;
}

/*
 * Loads descriptor idx of the current table (entering an indirect one).
 * *ring: descriptors read from the ring's own table (the INDIRECT one
 * included); with a table, the buffers are *ring - 1 + *count.
 */
static int
ref_load(struct ref *r, uint64_t *table, uint32_t *n, uint32_t *count,
	uint32_t *ring, bool *indirect, uint32_t idx, struct vring_desc *d)
{
	uint64_t c;

	for (;;) {
		if (idx >= *n)
			return ref_bad(r, VSW_VIRTQ_STAT_ERR_DESC_INDEX);
		if (++*count > *n)
			return ref_bad(r, VSW_VIRTQ_STAT_ERR_DESC_LOOP);
		if ((*indirect ? *ring - 1 + *count : *count) >
			VSW_VIRTQ_CHAIN_MAX)
			return ref_bad(r, VSW_VIRTQ_STAT_ERR_CHAIN_LEN);
		ref_reads++;
		if (fz_read(&guest, *table + 16ull * idx, d, 16) < 0)
			return ref_bad(r, VSW_VIRTQ_STAT_ERR_DESC_ADDR);
		if (!(d->flags & VRING_DESC_F_INDIRECT))
			break;
		if (*indirect)
			return ref_bad(r, VSW_VIRTQ_STAT_ERR_INDIRECT_NESTED);
		if (d->flags & VRING_DESC_F_NEXT)
			return ref_bad(r, VSW_VIRTQ_STAT_ERR_INDIRECT_NEXT);
		if (d->len == 0 || d->len % 16 || d->len / 16 > q.cfg.size ||
			d->len / 16 > VSW_VIRTQ_CHAIN_MAX)
			return ref_bad(r, VSW_VIRTQ_STAT_ERR_INDIRECT_LEN);
		if (fz_translate(&guest, d->addr, d->len, &c) == NULL)
			return ref_bad(r, VSW_VIRTQ_STAT_ERR_DESC_ADDR);
		*table = d->addr;
		*n = d->len / 16;
		*ring = *count;
		*count = 0;
		*indirect = true;
		idx = 0;
	}
	if (d->len == 0)
		return ref_bad(r, VSW_VIRTQ_STAT_ERR_DESC_ZERO_LEN);
	if (d->flags & VRING_DESC_F_WRITE)
		return ref_bad(r, VSW_VIRTQ_STAT_ERR_DESC_WRONG_DIR);
	return 0;
}

/* What the device should make of the chain at head. */
static void
ref_chain(struct ref *r, uint16_t head, uint8_t *out)
{
	uint64_t table = q.cfg.desc_gpa, total = 0;
	uint32_t n = q.cfg.size, count = 0, ring = 0, idx = head;
	bool indirect = false;
	struct vring_desc d;

	r->outcome = REF_OK;
	r->len = 0;
	for (;;) {
		uint64_t gpa, left, c;

		if (ref_load(r, &table, &n, &count, &ring, &indirect, idx,
			    &d) < 0)
			return;
		for (gpa = d.addr, left = d.len; left > 0;
			gpa += c, left -= c) {
			const uint8_t *p = fz_translate(&guest, gpa, left, &c);

			if (p == NULL) {
				ref_bad(r, VSW_VIRTQ_STAT_ERR_DESC_ADDR);
				return;
			}
			total += c;
			if (total > q.max_pkt_len) {
				r->outcome = VSW_VIRTQ_STAT_DEQ_DROP_TOO_LARGE;
				return;
			}
			memcpy(out + total - c, p, c);
		}
		if (!(d.flags & VRING_DESC_F_NEXT))
			break;
		idx = d.next;
	}
	if (total <= q.hdr_len) {
		r->outcome = VSW_VIRTQ_STAT_DEQ_DROP_SHORT_HDR;
		return;
	}
	r->len = (uint32_t)(total - q.hdr_len);
}

static bool
mbuf_is(const struct rte_mbuf *m, const uint8_t *data, uint32_t len)
{
	uint32_t off = 0, nseg = 0;

	if (m->pkt_len != len)
		return false;
	for (const struct rte_mbuf *s = m; s != NULL; s = s->next, nseg++) {
		if (off + s->data_len > len ||
			memcmp(rte_pktmbuf_mtod(s, const uint8_t *), data + off,
				s->data_len) != 0)
			return false;
		off += s->data_len;
	}
	return off == len && nseg == m->nb_segs;
}

/* Predicts the burst: how many chains it takes, and each one's fate. */
#define BREAK_AVAIL 1
#define BREAK_HEAD 2

/* *upper: chains a burst may take when it reads fewer descriptors than
 * predicted (an mbuf shortage ends a chain early): the budget aside. */
static uint16_t
predict(uint16_t n, struct ref *refs, uint16_t *heads, int *breaks,
	bool *cut, uint16_t *upper)
{
	uint16_t last = vsw_virtq_last_avail_idx(vq);
	uint16_t avail = (uint16_t)(q.avail->idx - last);
	uint16_t take, i;

	*breaks = 0;
	*cut = false;
	*upper = 0;
	ref_reads = 0;
	if (vsw_virtq_broken(vq))
		return 0;
	if (avail > q.cfg.size) {
		*breaks = BREAK_AVAIL;
		return 0;
	}
	take = n < avail ? n : avail;
	*upper = take;
	for (i = 0; i < take; i++) {
		if (ref_reads >= VSW_VIRTQ_BURST_DESCS) {
			*cut = true; /* the rest waits for the next burst */
			return i;
		}
		heads[i] = q.avail->ring[(uint16_t)(last + i) &
					 (q.cfg.size - 1)];
		if (heads[i] >= q.cfg.size) {
			*breaks = BREAK_HEAD;
			return i;
		}
		refs[i].off = i * REF_BYTES_MAX;
		ref_chain(&refs[i], heads[i], ref_bytes + refs[i].off);
	}
	return take;
}

static void
check_burst(const struct fz_snap *s, struct rte_mbuf **pkts, uint16_t got,
	const struct ref *refs, const uint16_t *heads, uint16_t expect,
	int breaks, bool cut, uint16_t upper)
{
	uint16_t taken = (uint16_t)(vsw_virtq_last_avail_idx(vq) -
		s->last_avail);
	uint64_t drops = 0, bytes = 0, no_mbuf;
	uint64_t want[VSW_VIRTQ_STAT__MAX] = {0};
	uint16_t published, j = 0;

	for (int c = VSW_VIRTQ_STAT_DEQ_DROP_BAD_DESC;
		c <= VSW_VIRTQ_STAT_DEQ_DROP_SHORT_HDR; c++)
		drops += fz_delta(s, vq, (enum vsw_virtq_stat)c);
	FZ_CHECK(fz_delta(s, vq, VSW_VIRTQ_STAT_DEQ_PACKETS) == got);
	FZ_CHECK(got + drops == taken);
	FZ_CHECK(taken <= ((q.mode & FZ_M_SMALL_POOL) ? upper : expect));
	published = fz_check_common(s, vq, &q,
		fz_delta(s, vq, VSW_VIRTQ_STAT_DEQ_DROP_BAD_DESC));
	FZ_CHECK(published == taken);
	for (uint16_t i = 0; i < taken; i++) {
		const struct vring_used_elem *e =
			&q.used->ring[(uint16_t)(s->last_used + i) &
				      (q.cfg.size - 1)];

		/* beyond the prediction (mbuf shortage): heads not read */
		FZ_CHECK(i >= expect || (e->id == heads[i] && e->len == 0));
	}
	for (uint16_t i = 0; i < got; i++) {
		const struct rte_mbuf *m = pkts[i];

		FZ_CHECK(rte_mbuf_check(m, 1, NULL) == 0);
		FZ_CHECK(m->pkt_len > 0 &&
			 m->pkt_len + q.hdr_len <= q.max_pkt_len);
		bytes += m->pkt_len;
	}
	FZ_CHECK(fz_delta(s, vq, VSW_VIRTQ_STAT_DEQ_BYTES) == bytes);
	no_mbuf = fz_delta(s, vq, VSW_VIRTQ_STAT_DEQ_DROP_NO_MBUF);
	if (taken != expect || no_mbuf != 0) {
		/* mbuf shortage (small pool): fates may differ, no more */
		FZ_CHECK(q.mode & FZ_M_SMALL_POOL);
		return;
	}
	FZ_CHECK(vsw_virtq_broken(vq) == (s->broken || breaks != 0));
	FZ_CHECK(fz_delta(s, vq, VSW_VIRTQ_STAT_BUDGET_CUT) == cut);
	/* exact: the good chains, in order, byte for byte */
	for (uint16_t i = 0; i < taken; i++) {
		if (refs[i].outcome != REF_OK) {
			want[refs[i].outcome]++;
			if (refs[i].outcome == VSW_VIRTQ_STAT_DEQ_DROP_BAD_DESC)
				want[refs[i].err]++;
			continue;
		}
		FZ_CHECK(j < got);
		FZ_CHECK(mbuf_is(pkts[j], ref_bytes + refs[i].off + q.hdr_len,
			refs[i].len));
		j++;
	}
	FZ_CHECK(j == got);
	for (int c = VSW_VIRTQ_STAT_DEQ_DROP_BAD_DESC;
		c <= VSW_VIRTQ_STAT_ERR_CHAIN_LEN; c++) {
		uint64_t d = fz_delta(s, vq, (enum vsw_virtq_stat)c);

		if (c == VSW_VIRTQ_STAT_ERR_DESC_INDEX && breaks == BREAK_HEAD)
			d--; /* the head that broke the ring */
		FZ_CHECK(d == want[c]);
	}
}

static void
run_burst(uint16_t n)
{
	static struct ref refs[VSW_VIRTQ_BURST_MAX];
	struct rte_mbuf *pkts[VSW_VIRTQ_BURST_MAX];
	uint16_t heads[VSW_VIRTQ_BURST_MAX];
	struct rte_mempool *mp = fz_pool(&q);
	struct fz_snap s;
	uint16_t got, expect, upper;
	int breaks;
	bool cut;

	expect = predict(n, refs, heads, &breaks, &cut, &upper);
	fz_snap_take(&s, vq, &q);
	got = vsw_virtq_dequeue_burst(vq, mp, pkts, n);
	FZ_CHECK(got <= n);
	check_burst(&s, pkts, got, refs, heads, expect, breaks, cut, upper);
	rte_pktmbuf_free_bulk(pkts, got);
	FZ_CHECK(rte_mempool_in_use_count(mp) == 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = {data, size};
	int rc, bursts = 0;

	vq = fz_setup(&guest, &q, &in, 0);
	if (vq == NULL) {
		fz_debug(vq, &q, "create failed");
		return 0;
	}
	while ((rc = fz_op(&guest, &q, &in)) >= 0) {
		if (rc == 0)
			continue;
		run_burst((uint16_t)(rc % (VSW_VIRTQ_BURST_MAX + 1)));
		bursts++;
	}
	if (bursts == 0)
		run_burst(VSW_VIRTQ_BURST_MAX);
	fz_debug(vq, &q, "end");
	fz_pool_check(fz_pool(&q));
	vsw_virtq_destroy(vq);
	vq = NULL;
	return 0;
}

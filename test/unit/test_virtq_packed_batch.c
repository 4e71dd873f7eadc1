/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The packed ring's four-descriptor batch (packed_batch_read in
 * virtq_packed.h; pdequeue_batch, penqueue_batch). A batch is taken only
 * at a position that is a multiple of 4 and 4 slots short of the ring's
 * end or closer, with all four slots available in this lap, single
 * descriptors in the right direction, ids in range, distinct and not in
 * flight, each buffer in one region (and, TX, one mbuf; RX, one segment
 * that fits): anything else goes one chain at a time, with its checks and
 * counters. The reference is the software guest's record, as in
 * test_virtq_packed.c: frames byte for byte, used ids in ring order,
 * positions and counters.
 *   1. random sequences of single, chained and indirect chains over ring
 *      sizes 4, 5, 6, 8, 12, 64, 100 (batches at 0 and at size - 4, the
 *      wrap flip at a batch's edge, a ring end inside what would be one),
 *      both directions, mergeable and not
 *   2. one of the four not available: the other lap's flags, used flags
 *   3. one of the four chained (its slots' ids differing), one indirect;
 *      the burst's descriptor budget 2 short of a batch
 *   4. ids: one twice, one == size, one still in flight from the burst
 *   5. lengths: the header only, longer than max_pkt_len, outside guest
 *      memory, across a region boundary, a TX slot write-only, an RX slot
 *      read-only, an RX buffer shorter than its packet, a two-segment
 *      mbuf, a frame longer than one mbuf
 *   6. cfg.max_pkt_len: one byte over it, TX and RX; an RX packet asking
 *      for an offload the guest did not negotiate
 *   7. four slots past the ring's end that look available (guest memory
 *      after the ring): never read
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_virtq_packed.h"

#define AV(w) tgp_avail_flags(w)
#define NEXT VRING_DESC_F_NEXT
#define WR VRING_DESC_F_WRITE

static uint8_t frames[64][3000];

/* --- 1. random sequences against the guest's record ----------------------- */

/* Posts a TX chain of kind 's' (one descriptor), 'c' (two) or 'i'
 * (indirect) holding frames[k] (len); returns its id. */
static int
post_tx(struct pfx *f, char kind, uint32_t k, uint32_t len)
{
	uint32_t all = f->q.hdr_len + len;
	uint32_t pieces[2] = {all, 0};

	if (kind != 's' && all >= 2) {
		pieces[0] = all / 2;
		pieces[1] = all - all / 2;
	}
	return tgp_tx_post(&f->q, frames[k], len, pieces,
		pieces[1] != 0 ? 2 : 1, kind == 'i');
}

static char
rand_kind(void)
{
	uint32_t r = tl_rand_range(&ptest_rng, 0, 9);

	return r < 7 ? 's' : (r < 8 ? 'c' : 'i');
}

/* kinds (NUL-terminated; "" random): posts them (as many as fit), then
 * dequeues in bursts of burst (0: random) and checks the frames, the used
 * ids in ring order and the counters. */
static void
tx_seq(struct pfx *f, const char *kinds, uint16_t burst)
{
	uint32_t n = 0, got = 0, bursts = 0, flen[64], i, want;
	uint64_t bytes = 0;
	uint16_t ids[64];

	tg_data_reset(&f->g);
	want = kinds[0] != '\0' ? (uint32_t)strlen(kinds)
				: tl_rand_range(&ptest_rng, 1, 64);
	while (n < want) {
		char kind = kinds[0] != '\0' ? kinds[n] : rand_kind();
		uint32_t len = tl_rand_range(&ptest_rng, 0, 7) == 0
			? tl_rand_range(&ptest_rng, 1024, 3000)
			: tl_rand_range(&ptest_rng, 1, 200);
		int id;

		tl_rand_bytes(&ptest_rng, frames[n], len);
		id = post_tx(f, kind, n, len);
		if (id < 0)
			break;
		ids[n] = (uint16_t)id;
		flen[n++] = len;
	}
	while (got < n) {
		struct rte_mbuf *pkts[VSW_VIRTQ_BURST_MAX];
		uint16_t w = burst != 0 ? burst
			: (uint16_t)tl_rand_range(&ptest_rng, 1, 32);
		uint16_t k = vsw_virtq_dequeue_burst(f->vq, ptest_pool, pkts,
			w);

		assert_true(k > 0 && k <= w);
		bursts++;
		for (i = 0; i < k; i++, got++) {
			assert_true(got < n);
			assert_true(tl_mbuf_equal(pkts[i], frames[got],
				flen[got]));
			bytes += flen[got];
		}
		rte_pktmbuf_free_bulk(pkts, k);
	}
	assert_int_equal(pfx_deq(f, 32), 0);
	for (i = 0; i < n; i++) {
		uint16_t id;
		uint32_t len;

		assert_int_equal(tgp_used_pop(&f->q, &id, &len), 1);
		assert_int_equal(id, ids[i]);
	}
	assert_int_equal(f->q.free_slots, f->q.size);
	if (n != 0)
		PFX_EXPECT(f, {S(DEQ_PACKETS), n}, {S(DEQ_BYTES), bytes},
			{S(NOTIFY_SENT), bursts});
	assert_int_equal(vsw_virtq_last_avail_idx(f->vq),
		tgp_pos(f->q.next_avail, f->q.avail_wrap));
	f->kicks = 0;
}

/* The RX chains the guest has posted and the device not yet taken, in
 * ring order (their capacities), across bursts. */
struct rxm {
	uint32_t cap[4096];
	uint32_t head, tail;
};

/* RX: posts chains of kind 's' (one buffer of caps[i]), 'c' (two), 'i'
 * (indirect) while they fit (when none is left posted), then npk packets
 * (single segments; with seg2 the third is two) into them; the greedy
 * model of test_virtq_packed.c says where each goes; the guest reads them
 * back. */
static void
rx_seq(struct pfx *f, struct rxm *r, const char *kinds, const uint32_t *caps,
	uint32_t npk, const uint32_t *plens, bool seg2)
{
	struct rte_mbuf *pkts[32];
	uint32_t nd = 0, i, hdr = f->q.hdr_len, deliver[32];
	uint64_t st[VSW_VIRTQ_STAT__MAX], before[VSW_VIRTQ_STAT__MAX];
	uint16_t nbufs[32], nb;
	bool mrg = f->q.features & F_MRG, full = false;
	uint64_t bytes = 0;
	int len;

	/* new chains only into an empty ring: data is not reused under a
	 * posted chain */
	if (r->head != r->tail)
		kinds = "";
	else
		tg_data_reset(&f->g);
	for (i = 0; kinds[i] != '\0'; i++) {
		uint32_t l[2] = {caps[i], 0}, n = 1;

		if (kinds[i] != 's') {
			l[0] = hdr;
			l[1] = caps[i] - hdr;
			n = 2;
		}
		if (tgp_rx_post(&f->q, l, n, kinds[i] == 'i') < 0)
			break;
		r->cap[r->tail++ % RTE_DIM(r->cap)] = caps[i];
	}
	for (i = 0; i < npk; i++) {
		uint32_t need = hdr + plens[i], h = r->head, k = 0;

		tl_rand_bytes(&ptest_rng, frames[i], plens[i]);
		pkts[i] = seg2 && i == 2
			? tl_mbuf_build_at(ptest_pool, frames[i], plens[i],
				  plens[i] / 2 + 1, RTE_PKTMBUF_HEADROOM)
			: pfx_mbuf(plens[i], 0);
		assert_non_null(pkts[i]);
		if (!(seg2 && i == 2))
			memcpy(rte_pktmbuf_mtod(pkts[i], uint8_t *),
				frames[i], plens[i]);
		if (full)
			continue;
		while (need > 0 && h != r->tail && (mrg || k == 0)) {
			need -= RTE_MIN(need, r->cap[h % RTE_DIM(r->cap)]);
			h++;
			k++;
		}
		if (need > 0 && (mrg || r->head == r->tail)) {
			full = true; /* ring full: this and the rest */
		} else if (need == 0) {
			r->head = h;
			nbufs[nd] = (uint16_t)k;
			deliver[nd++] = i;
			bytes += plens[i];
		}
	}
	vsw_virtq_stats_read(f->vq, before);
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, pkts, (uint16_t)npk),
		nd);
	vsw_virtq_stats_read(f->vq, st);
	assert_int_equal(st[S(ENQ_PACKETS)] - before[S(ENQ_PACKETS)], nd);
	assert_int_equal(st[S(ENQ_BYTES)] - before[S(ENQ_BYTES)], bytes);
	for (i = 0; i < nd; i++) {
		static uint8_t buf[65536];

		len = tgp_rx_recv(&f->q, buf, sizeof(buf), &nb);
		assert_int_equal(len, plens[deliver[i]]);
		assert_int_equal(nb, nbufs[i]);
		assert_memory_equal(buf, frames[deliver[i]], len);
	}
	assert_int_equal(tgp_rx_recv(&f->q, frames[63], 4, &nb), -1);
	assert_int_equal(vsw_virtq_last_used_idx(f->vq),
		tgp_pos(f->q.next_used, f->q.used_wrap));
	for (i = 0; i < npk; i++)
		rte_pktmbuf_free(pkts[i]);
}

static const uint32_t sizes[] = {4, 5, 6, 8, 12, 64, 100};

static void
test_pb_tx_random(void **state)
{
	uint32_t s, r;

	(void)state;
	for (s = 0; s < RTE_DIM(sizes); s++) {
		struct pfx *f = pfx_new(sizes[s], F_STD);

		for (r = 0; r < 16; r++) /* all-single rounds: batches */
			tx_seq(f, r % 2 ? "" : "ssssssssssssssss",
				r % 3 == 0 ? 32 : 0);
		pfx_free(f);
	}
}

static void
test_pb_rx_random(void **state)
{
	static struct rxm r;
	uint32_t s, round, i;

	(void)state;
	for (s = 0; s < RTE_DIM(sizes); s++) {
		uint64_t feat = s % 2 ? F_STD : F_V1 | F_IND;
		struct pfx *f = pfx_new(sizes[s], feat);

		r.head = r.tail = 0;
		for (round = 0; round < 60; round++) {
			char kinds[65];
			uint32_t caps[64], plens[32], n;
			uint32_t k = RTE_MIN(sizes[s], 64u);

			for (i = 0; i < k; i++) {
				kinds[i] = rand_kind();
				caps[i] = tl_rand_range(&ptest_rng, 100, 2048);
			}
			kinds[k] = '\0';
			n = tl_rand_range(&ptest_rng, 1, 32);
			for (i = 0; i < n; i++)
				plens[i] = tl_rand_range(&ptest_rng, 1, 1500);
			rx_seq(f, &r, kinds, caps, n, plens, round % 5 == 0);
		}
		pfx_free(f);
	}
}

/* --- 2-7. one slot of four breaks the batch --------------------------- */

/* A TX buffer: header + n bytes of frames[k]; its gpa. */
static uint64_t
tx_raw_buf(struct pfx *f, uint32_t k, uint32_t n)
{
	uint64_t gpa = tg_alloc_data(&f->g, f->q.hdr_len + n, 1);

	uint8_t zero[12] = {0};

	tl_rand_bytes(&ptest_rng, frames[k], n);
	tg_write(&f->g, gpa, zero, f->q.hdr_len); /* may span regions */
	tg_write(&f->g, gpa + f->q.hdr_len, frames[k], n);
	return gpa;
}

/* Dequeues one burst; the frames of the slots listed in want[] (by
 * frames[] index) must come out, in order; returns the count. */
static uint16_t
deq_expect(struct pfx *f, const uint32_t *want, uint16_t n, uint32_t len)
{
	struct rte_mbuf *pkts[VSW_VIRTQ_BURST_MAX];
	uint16_t k = vsw_virtq_dequeue_burst(f->vq, ptest_pool, pkts, 32), i;

	assert_int_equal(k, n);
	for (i = 0; i < k; i++)
		assert_true(tl_mbuf_equal(pkts[i], frames[want[i]], len));
	rte_pktmbuf_free_bulk(pkts, k);
	return k;
}

/* Checks the used descriptor at slot: id, len and this lap's flags. */
static void
used_at(struct pfx *f, uint16_t slot, uint16_t id, uint32_t len, bool wrap)
{
	const struct vring_packed_desc *d = &f->q.desc[slot];

	assert_int_equal(!!(d->flags & TGP_F_USED), wrap);
	assert_int_equal(!!(d->flags & TGP_F_AVAIL), wrap);
	assert_int_equal(d->id, id);
	assert_int_equal(d->len, len);
}

static void
test_pb_not_avail(void **state)
{
	/* the other lap's, used in this lap, never posted */
	const uint16_t bad[] = {AV(false), TGP_F_AVAIL | TGP_F_USED, 0};
	static const uint32_t w1[] = {3};
	uint32_t c, s, i;

	(void)state;
	for (c = 0; c < 3; c++) {
		for (s = 0; s < 4; s++) { /* the slot that is not ready */
			struct pfx *f = pfx_new(8, F_STD);
			uint32_t order[4], k = 0;
			uint64_t b[4];

			for (i = 0; i < 4; i++)
				b[i] = tx_raw_buf(f, i, 60);
			for (i = 0; i < 4; i++)
				tgp_desc_raw(&f->q, (uint16_t)i, b[i], 72,
					(uint16_t)i, i != s ? AV(true) : bad[c]);
			for (i = 0; i < s; i++)
				order[k++] = i;
			deq_expect(f, order, (uint16_t)k, 60);
			for (i = 0; i < s; i++)
				used_at(f, (uint16_t)i, (uint16_t)i, 0, true);
			PFX_EXPECT(f, {S(DEQ_PACKETS), s},
				{S(DEQ_BYTES), 60 * s},
				{S(NOTIFY_SENT), s != 0});
			if (s == 3) {
				tgp_desc_raw(&f->q, 3, b[3], 72, 3, AV(true));
				deq_expect(f, w1, 1, 60);
			}
			pfx_free(f);
		}
	}
}

static void
test_pb_chained_indirect(void **state)
{
	static const char *const seqs[] = {"cssssss", "scssssss", "sscsssss",
		"ssscsssss", "issss", "sisss", "ssiss", "sssis", "ccss",
		"ssssc", "ssssi"};
	uint32_t i, r;

	(void)state;
	for (i = 0; i < RTE_DIM(seqs); i++) {
		struct pfx *f = pfx_new(12, F_STD);

		for (r = 0; r < 8; r++) /* every ring position */
			tx_seq(f, seqs[i], 32);
		pfx_free(f);
	}
}

static void
test_pb_ids(void **state)
{
	static const uint16_t idsets[][8] = {
		{0, 1, 1, 3}, {0, 1, 2, 0}, {3, 1, 2, 3}, {0, 1, 2, 8},
		{8, 1, 2, 3}, {0, 1, 2, 3, 4, 5, 0, 7}, {0, 1, 2, 3, 7, 5, 6, 3},
	};
	static const uint8_t nids[] = {4, 4, 4, 4, 4, 8, 8};
	static const uint8_t dropped[] = {3, 4, 4, 4, 1, 7, 8};
	uint32_t c, i;

	(void)state;
	for (c = 0; c < RTE_DIM(idsets); c++) {
		struct pfx *f = pfx_new(8, F_STD);
		uint32_t want[8], k = 0;

		for (i = 0; i < nids[c]; i++) {
			uint64_t b = tx_raw_buf(f, i, 60);

			if (i + 1 != dropped[c])
				want[k++] = i;
			tgp_desc_raw(&f->q, (uint16_t)i, b, 72, idsets[c][i],
				AV(true));
		}
		deq_expect(f, want, (uint16_t)k, 60);
		for (i = 0; i < nids[c]; i++)
			used_at(f, (uint16_t)i, idsets[c][i], 0, true);
		PFX_EXPECT(f, {S(DEQ_PACKETS), k}, {S(DEQ_BYTES), 60 * k},
			{S(DEQ_DROP_BAD_DESC), 1}, {S(ERR_DESC_ID), 1},
			{S(NOTIFY_SENT), 1});
		pfx_free(f);
	}
}

/* Slots 0..3 all delivered (slot 2: a 3000 B frame with big). */
static void
tx_whole(struct pfx *f, bool big, const uint32_t *all)
{
	struct rte_mbuf *pkts[VSW_VIRTQ_BURST_MAX];
	uint16_t k;
	uint32_t i;

	if (big) {
		uint64_t b = tx_raw_buf(f, 2, 3000);

		tgp_desc_raw(&f->q, 2, b, f->q.hdr_len + 3000, 2, AV(true));
	}
	k = vsw_virtq_dequeue_burst(f->vq, ptest_pool, pkts, 32);
	assert_int_equal(k, 4);
	for (i = 0; i < 4; i++) {
		const char *why = NULL;

		/* every segment inside its buffer (data_off + data_len) */
		assert_int_equal(rte_mbuf_check(pkts[i], 1, &why), 0);
		assert_true(tl_mbuf_equal(pkts[i], frames[all[i]],
			i == 2 && big ? 3000 : 60));
	}
	rte_pktmbuf_free_bulk(pkts, k);
	PFX_EXPECT(f, {S(DEQ_PACKETS), 4}, {S(DEQ_BYTES), big ? 3180 : 240},
		{S(NOTIFY_SENT), 1});
	pfx_free(f);
}

/* TX: slot 2 of 0..3 is bad in one way; the others go through. */
static void
test_pb_tx_lens(void **state)
{
	static const uint32_t want[] = {0, 1, 3}, all[] = {0, 1, 2, 3};
	uint32_t c, i;

	(void)state;
	for (c = 0; c < 6; c++) {
		struct pfx *f = pfx_new(8, F_STD);
		uint32_t hl = f->q.hdr_len, len = 60;
		uint64_t b[4];
		uint16_t fl = AV(true);

		for (i = 0; i < 4; i++) {
			if (i == 2 && c == 3)
				tg_data_near_boundary(&f->g, 30);
			b[i] = tx_raw_buf(f, i, 60);
		}
		if (c == 0)
			len = 0; /* the header only */
		else if (c == 1)
			len = 65536; /* more than max_pkt_len */
		else if (c == 2)
			b[2] = 0x7f000000ull; /* no region there */
		else if (c == 4)
			fl |= WR;
		for (i = 0; i < 4; i++)
			tgp_desc_raw(&f->q, (uint16_t)i, b[i],
				i == 2 ? hl + len : hl + 60, (uint16_t)i,
				i == 2 ? fl : AV(true));
		if (c == 3 || c == 5) { /* across regions; longer than an
					 * mbuf (c 5: slot 2 holds 3000 B) */
			tx_whole(f, c == 5, all);
			continue;
		}
		deq_expect(f, want, 3, 60);
		used_at(f, 2, 2, 0, true);
		PFX_EXPECT(f, {S(DEQ_PACKETS), 3}, {S(DEQ_BYTES), 180},
			{c == 0 ? S(DEQ_DROP_SHORT_HDR)
				: (c == 1 ? S(DEQ_DROP_TOO_LARGE)
					  : S(DEQ_DROP_BAD_DESC)), 1},
			{c == 2 ? S(ERR_DESC_ADDR)
				: (c == 4 ? S(ERR_DESC_WRONG_DIR)
					  : S(NOTIFY_SUPPRESSED)),
				c >= 2},
			{S(NOTIFY_SENT), 1});
		pfx_free(f);
	}
}

/* RX: slot 2 of 0..3 read-only, too short, or a packet of two segments;
 * buffers across a region boundary. */
static void
test_pb_rx_lens(void **state)
{
	static const uint32_t caps[] = {2048, 2048, 100, 2048, 2048, 2048,
		2048, 2048};
	static const uint32_t big[] = {2048, 2048, 2048, 2048, 2048, 2048,
		2048, 2048};
	static const uint32_t plens[] = {500, 500, 500, 500, 500, 500};
	static struct rxm r;
	uint32_t c;

	(void)state;
	for (c = 0; c < 2; c++) {
		struct pfx *f = pfx_new(8, c % 2 ? F_STD : F_V1 | F_IND);

		r.head = r.tail = 0; /* slot 2 too short */
		rx_seq(f, &r, "ssssssss", caps, 6, plens, false);
		pfx_free(f);
		f = pfx_new(8, c % 2 ? F_STD : F_V1 | F_IND);
		r.head = r.tail = 0; /* packet 2 in two segments */
		rx_seq(f, &r, "ssssssss", big, 4, plens, true);
		pfx_free(f);
	}
	for (c = 0; c < 2; c++) { /* slot 2 read-only; across regions */
		struct pfx *f = pfx_new(8, F_STD);
		struct rte_mbuf *m[4];
		uint8_t fill[2048];
		uint64_t b[4];
		uint32_t i;

		for (i = 0; i < 4; i++) {
			if (i == 2 && c == 1)
				tg_data_near_boundary(&f->g, 100);
			b[i] = tg_alloc_data(&f->g, 2048, 1);
			memset(fill, 0xee, sizeof(fill));
			tg_write(&f->g, b[i], fill, sizeof(fill));
			tgp_desc_raw(&f->q, (uint16_t)i, b[i], 2048,
				(uint16_t)i,
				AV(true) | (i == 2 && c == 0 ? 0 : WR));
			tl_rand_bytes(&ptest_rng, frames[i], 500);
			m[i] = pfx_mbuf(500, 0);
			memcpy(rte_pktmbuf_mtod(m[i], uint8_t *), frames[i],
				500);
		}
		assert_int_equal(vsw_virtq_enqueue_burst(f->vq, m, 4),
			4 - (c == 0));
		for (i = 0; i < 4; i++) {
			const uint8_t *g = tg_host(&f->g, b[i]);
			uint8_t part[500];

			used_at(f, (uint16_t)i, (uint16_t)i,
				i == 2 && c == 0 ? 0 : 512, true);
			if (i == 2 && c == 0) {
				assert_int_equal(g[0], 0xee);
				continue;
			}
			assert_int_equal(g[10], 1); /* num_buffers */
			if (i == 2) { /* 100 bytes to the boundary */
				tg_read(&f->g, b[i] + 12, part, 500);
				assert_memory_equal(part, frames[i], 500);
			} else {
				assert_memory_equal(g + 12, frames[i], 500);
			}
			rte_pktmbuf_free(m[i]);
		}
		if (c == 0) {
			rte_pktmbuf_free(m[2]);
			PFX_EXPECT(f, {S(ENQ_PACKETS), 3},
				{S(ENQ_BYTES), 1500},
				{S(ENQ_DROP_BAD_DESC), 1},
				{S(ERR_DESC_WRONG_DIR), 1},
				{S(NOTIFY_SENT), 1});
		}
		pfx_free(f);
	}
}

/* A chain inside what would be a batch, its two slots carrying different
 * ids (the id is the last slot's), its first slot more than a header. */
static void
test_pb_chain_ids(void **state)
{
	uint32_t at;

	(void)state;
	for (at = 0; at < 3; at++) { /* the chain at slots at, at + 1 */
		struct pfx *f = pfx_new(8, F_STD);
		uint32_t hl = f->q.hdr_len, i, k = 0, order[8];
		uint64_t b[8];

		for (i = 0; i < 8; i++)
			b[i] = tx_raw_buf(f, i, 60);
		for (i = 0; i < 8; i++) {
			bool head = i == at, tail = i == at + 1;

			/* the chain: 40 bytes of frames[at], then 20 of the
			 * tail's buffer (its frame's first 20: set below) */
			tgp_desc_raw(&f->q, (uint16_t)i, b[i],
				head ? hl + 40 : (tail ? 20 : hl + 60),
				(uint16_t)(head ? 7 : i),
				AV(true) | (head ? NEXT : 0));
			if (!head && !tail)
				order[k++] = i;
		}
		/* the chain's frame: 40 bytes from at, 20 from at + 1 */
		memcpy(frames[8], frames[at], 40);
		tg_read(&f->g, b[at + 1], frames[8] + 40, 20);
		{
			struct rte_mbuf *pkts[VSW_VIRTQ_BURST_MAX];
			uint16_t n = vsw_virtq_dequeue_burst(f->vq, ptest_pool,
				pkts, 32), j, o = 0;

			assert_int_equal(n, 7);
			for (j = 0; j < n; j++) {
				bool chain = j == at;

				assert_true(tl_mbuf_equal(pkts[j],
					frames[chain ? 8 : order[o]],
					60));
				if (!chain)
					o++;
			}
			rte_pktmbuf_free_bulk(pkts, n);
		}
		used_at(f, (uint16_t)at, (uint16_t)(at + 1), 0, true);
		PFX_EXPECT(f, {S(DEQ_PACKETS), 7}, {S(DEQ_BYTES), 420},
			{S(NOTIFY_SENT), 1});
		pfx_free(f);
	}
}

/* The burst's budget: 8 indirect chains leave 2 reads, 4 single chains
 * follow at slot 8: 2 of them go this burst, 2 the next. */
static void
test_pb_budget(void **state)
{
	struct pfx *f = pfx_new(1024, F_STD);
	uint32_t hl = f->q.hdr_len, i;
	struct vring_packed_desc *t = calloc(255, sizeof(*t));
	uint64_t data = tg_alloc_data(&f->g, 256, 1), tb[2];
	uint32_t nt[2] = {253, 255};
	uint8_t zero[12] = {0};

	(void)state;
	assert_non_null(t);
	tg_write(&f->g, data, zero, hl);
	for (i = 0; i < 2; i++) { /* tables of one-byte entries */
		uint32_t j;

		for (j = 0; j < nt[i]; j++)
			t[j] = (struct vring_packed_desc){data + j, 1, 0, 0};
		tb[i] = tg_alloc_ring(&f->g, 16ull * nt[i], 16);
		tg_write(&f->g, tb[i], t, 16ull * nt[i]);
	}
	free(t);
	/* 254 + 7 * 256 = 2046 reads */
	for (i = 0; i < 8; i++)
		tgp_desc_raw(&f->q, (uint16_t)i, tb[i != 0],
			16 * nt[i != 0], (uint16_t)i,
			AV(true) | VRING_DESC_F_INDIRECT);
	for (i = 8; i < 12; i++)
		tgp_desc_raw(&f->q, (uint16_t)i, tx_raw_buf(f, i, 60), hl + 60,
			(uint16_t)i, AV(true));
	assert_int_equal(pfx_deq(f, 32), 10);
	assert_int_equal(vsw_virtq_last_avail_idx(f->vq), tgp_pos(10, true));
	assert_int_equal(pfx_deq(f, 32), 2);
	pfx_free(f);
}

/* cfg.max_pkt_len below what a mbuf or buffer holds: TX slot 2 and RX
 * packet 2 one byte over it (dropped), the others at it; and, without
 * offloads, RX packet 2 asking for TSO (dropped). */
static void
test_pb_max_len(void **state)
{
	static const uint32_t want[] = {0, 1, 3};
	uint32_t c, i;

	(void)state;
	for (c = 0; c < 3; c++) {
		struct pfx *f = pfx_new(8, F_STD);
		uint32_t hl = f->q.hdr_len, max = hl + 500;
		struct rte_mbuf *m[4];

		f->q.cfg.max_pkt_len = max;
		pfx_resume(f);
		if (c == 0) {
			for (i = 0; i < 4; i++) {
				uint32_t n = i == 2 ? 501 : 500;

				tgp_desc_raw(&f->q, (uint16_t)i,
					tx_raw_buf(f, i, n), hl + n,
					(uint16_t)i, AV(true));
			}
			deq_expect(f, want, 3, 500);
			PFX_EXPECT(f, {S(DEQ_PACKETS), 3},
				{S(DEQ_BYTES), 1500},
				{S(DEQ_DROP_TOO_LARGE), 1},
				{S(NOTIFY_SENT), 1});
			pfx_free(f);
			continue;
		}
		for (i = 0; i < 4; i++) {
			uint64_t b = tg_alloc_data(&f->g, 2048, 1);

			tgp_desc_raw(&f->q, (uint16_t)i, b, 2048, (uint16_t)i,
				AV(true) | WR);
			m[i] = pfx_mbuf(i == 2 && c == 1 ? 501 : 500, 7);
		}
		if (c == 2)
			m[2]->ol_flags |= RTE_MBUF_F_TX_TCP_SEG |
				RTE_MBUF_F_TX_TCP_CKSUM;
		assert_int_equal(vsw_virtq_enqueue_burst(f->vq, m, 4), 3);
		/* packet 2 took no chain: 3 went into slot 2 */
		for (i = 0; i < 3; i++)
			used_at(f, (uint16_t)i, (uint16_t)i, hl + 500, true);
		assert_false(tgp_avail_flags(true) !=
			(f->q.desc[3].flags & (TGP_F_AVAIL | TGP_F_USED)));
		for (i = 0; i < 4; i++)
			rte_pktmbuf_free(m[i]);
		PFX_EXPECT(f, {S(ENQ_PACKETS), 3}, {S(ENQ_BYTES), 1500},
			{c == 1 ? S(ENQ_DROP_TOO_LARGE) : S(ENQ_DROP_OFFLOAD),
				1},
			{S(NOTIFY_SENT), 1});
		pfx_free(f);
	}
}

/* 7: ring size 6, position 4: slots "6" and "7" (guest memory past the
 * ring) look available and hold frames; the batch must not read them. */
static void
test_pb_past_end(void **state)
{
	static const uint32_t first[] = {0, 1, 2, 3}, next[] = {4, 5, 6, 7};
	struct pfx *f = pfx_new(6, F_STD);
	uint64_t b[8];
	uint32_t i;

	(void)state;
	for (i = 0; i < 8; i++)
		b[i] = tx_raw_buf(f, i, 60);
	for (i = 0; i < 4; i++)
		tgp_desc_raw(&f->q, (uint16_t)i, b[i], 72, (uint16_t)i,
			AV(true));
	deq_expect(f, first, 4, 60);
	/* 4, 5 in this lap, 0, 1 in the next; "6", "7" lie past the end */
	tgp_desc_raw(&f->q, 4, b[4], 72, 4, AV(true));
	tgp_desc_raw(&f->q, 5, b[5], 72, 5, AV(true));
	tgp_desc_raw(&f->q, 6, b[0], 72, 2, AV(true));
	tgp_desc_raw(&f->q, 7, b[1], 72, 3, AV(true));
	tgp_desc_raw(&f->q, 0, b[6], 72, 0, AV(false));
	tgp_desc_raw(&f->q, 1, b[7], 72, 1, AV(false));
	deq_expect(f, next, 4, 60);
	used_at(f, 4, 4, 0, true);
	used_at(f, 0, 0, 0, false);
	assert_int_equal(vsw_virtq_last_avail_idx(f->vq), tgp_pos(2, false));
	pfx_free(f);
}

#define T(fn)                                                                  \
	cmocka_unit_test_setup_teardown(fn, pfx_pool_setup, pfx_pool_teardown)

int
test_virtq_packed_batch_run(void)
{
	const struct CMUnitTest tests[] = {
		T(test_pb_tx_random),
		T(test_pb_rx_random),
		T(test_pb_not_avail),
		T(test_pb_chained_indirect),
		T(test_pb_ids),
		T(test_pb_tx_lens),
		T(test_pb_rx_lens),
		T(test_pb_chain_ids),
		T(test_pb_budget),
		T(test_pb_max_len),
		T(test_pb_past_end),
	};

	return cmocka_run_group_tests_name("virtq_packed_batch", tests,
		NULL, NULL);
}

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
 * test_virtq_packed.c: pb_frames byte for byte, used ids in ring order,
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
 * Items 5-7 (and the chain ids of 4) are in test_virtq_packed_batch_lens.c,
 * with the helpers of this file (test_virtq_packed.h, pb_*).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_virtq_packed.h"

#define AV(w) tgp_avail_flags(w)
#define NEXT VRING_DESC_F_NEXT
#define WR VRING_DESC_F_WRITE

uint8_t pb_frames[64][3000];

/* --- 1. random sequences against the guest's record ----------------------- */

/* Posts a TX chain of kind 's' (one descriptor), 'c' (two) or 'i'
 * (indirect) holding pb_frames[k] (len); returns its id. */
static int
post_tx(struct pfx *f, char kind, uint32_t k, uint32_t len)
{
	uint32_t all = f->q.hdr_len + len;
	uint32_t pieces[2] = {all, 0};

	if (kind != 's' && all >= 2) {
		pieces[0] = all / 2;
		pieces[1] = all - all / 2;
	}
	return tgp_tx_post(&f->q, pb_frames[k], len, pieces,
		pieces[1] != 0 ? 2 : 1, kind == 'i');
}

static char
rand_kind(void)
{
	uint32_t r = tl_rand_range(&ptest_rng, 0, 9);

	return r < 7 ? 's' : (r < 8 ? 'c' : 'i');
}

/* kinds (NUL-terminated; "" random): posts them (as many as fit), then
 * dequeues in bursts of burst (0: random) and checks the pb_frames, the used
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

		tl_rand_bytes(&ptest_rng, pb_frames[n], len);
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
			assert_true(tl_mbuf_equal(pkts[i], pb_frames[got],
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

/* RX: posts chains of kind 's' (one buffer of caps[i]), 'c' (two), 'i'
 * (indirect) while they fit (when none is left posted), then npk packets
 * (single segments; with seg2 the third is two) into them; the greedy
 * model of test_virtq_packed.c says where each goes; the guest reads them
 * back. */
void
pb_rx_seq(struct pfx *f, struct rxm *r, const char *kinds,
	const uint32_t *caps, uint32_t npk, const uint32_t *plens, bool seg2)
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

		tl_rand_bytes(&ptest_rng, pb_frames[i], plens[i]);
		pkts[i] = seg2 && i == 2
			? tl_mbuf_build_at(ptest_pool, pb_frames[i], plens[i],
				  plens[i] / 2 + 1, RTE_PKTMBUF_HEADROOM)
			: pfx_mbuf(plens[i], 0);
		assert_non_null(pkts[i]);
		if (!(seg2 && i == 2))
			memcpy(rte_pktmbuf_mtod(pkts[i], uint8_t *),
				pb_frames[i], plens[i]);
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
		assert_memory_equal(buf, pb_frames[deliver[i]], len);
	}
	assert_int_equal(tgp_rx_recv(&f->q, pb_frames[63], 4, &nb), -1);
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
			pb_rx_seq(f, &r, kinds, caps, n, plens, round % 5 == 0);
		}
		pfx_free(f);
	}
}

/* --- 2-7. one slot of four breaks the batch --------------------------- */

/* A TX buffer: header + n bytes of pb_frames[k]; its gpa. */
uint64_t
pb_tx_raw_buf(struct pfx *f, uint32_t k, uint32_t n)
{
	uint64_t gpa = tg_alloc_data(&f->g, f->q.hdr_len + n, 1);

	uint8_t zero[12] = {0};

	tl_rand_bytes(&ptest_rng, pb_frames[k], n);
	tg_write(&f->g, gpa, zero, f->q.hdr_len); /* may span regions */
	tg_write(&f->g, gpa + f->q.hdr_len, pb_frames[k], n);
	return gpa;
}

/* Dequeues one burst; the pb_frames of the slots listed in want[] (by
 * pb_frames[] index) must come out, in order; returns the count. */
uint16_t
pb_deq_expect(struct pfx *f, const uint32_t *want, uint16_t n, uint32_t len)
{
	struct rte_mbuf *pkts[VSW_VIRTQ_BURST_MAX];
	uint16_t k = vsw_virtq_dequeue_burst(f->vq, ptest_pool, pkts, 32), i;

	assert_int_equal(k, n);
	for (i = 0; i < k; i++)
		assert_true(tl_mbuf_equal(pkts[i], pb_frames[want[i]], len));
	rte_pktmbuf_free_bulk(pkts, k);
	return k;
}

/* Checks the used descriptor at slot: id, len and this lap's flags. */
void
pb_used_at(struct pfx *f, uint16_t slot, uint16_t id, uint32_t len, bool wrap)
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
				b[i] = pb_tx_raw_buf(f, i, 60);
			for (i = 0; i < 4; i++)
				tgp_desc_raw(&f->q, (uint16_t)i, b[i], 72,
					(uint16_t)i, i != s ? AV(true) : bad[c]);
			for (i = 0; i < s; i++)
				order[k++] = i;
			pb_deq_expect(f, order, (uint16_t)k, 60);
			for (i = 0; i < s; i++)
				pb_used_at(f, (uint16_t)i, (uint16_t)i, 0,
					true);
			PFX_EXPECT(f, {S(DEQ_PACKETS), s},
				{S(DEQ_BYTES), 60 * s},
				{S(NOTIFY_SENT), s != 0});
			if (s == 3) {
				tgp_desc_raw(&f->q, 3, b[3], 72, 3, AV(true));
				pb_deq_expect(f, w1, 1, 60);
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
			uint64_t b = pb_tx_raw_buf(f, i, 60);

			if (i + 1 != dropped[c])
				want[k++] = i;
			tgp_desc_raw(&f->q, (uint16_t)i, b, 72, idsets[c][i],
				AV(true));
		}
		pb_deq_expect(f, want, (uint16_t)k, 60);
		for (i = 0; i < nids[c]; i++)
			pb_used_at(f, (uint16_t)i, idsets[c][i], 0, true);
		PFX_EXPECT(f, {S(DEQ_PACKETS), k}, {S(DEQ_BYTES), 60 * k},
			{S(DEQ_DROP_BAD_DESC), 1}, {S(ERR_DESC_ID), 1},
			{S(NOTIFY_SENT), 1});
		pfx_free(f);
	}
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
	};

	return cmocka_run_group_tests_name("virtq_packed_batch", tests,
		NULL, NULL);
}

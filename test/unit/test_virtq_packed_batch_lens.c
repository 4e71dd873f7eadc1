/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The packed ring's four-descriptor batch, continued from
 * test_virtq_packed_batch.c (its helpers and reference; the rules a batch
 * follows are listed there): items 5-7 of its list, the lengths and
 * limits of a batch's buffers, ids across chains, the budget, and four
 * slots past the ring's end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_virtq_packed.h"

#define AV(w) tgp_avail_flags(w)
#define NEXT VRING_DESC_F_NEXT
#define WR VRING_DESC_F_WRITE

/* Slots 0..3 all delivered (slot 2: a 3000 B frame with big). */
static void
tx_whole(struct pfx *f, bool big, const uint32_t *all)
{
	struct rte_mbuf *pkts[VSW_VIRTQ_BURST_MAX];
	uint16_t k;
	uint32_t i;

	if (big) {
		uint64_t b = pb_tx_raw_buf(f, 2, 3000);

		tgp_desc_raw(&f->q, 2, b, f->q.hdr_len + 3000, 2, AV(true));
	}
	k = vsw_virtq_dequeue_burst(f->vq, ptest_pool, pkts, 32);
	assert_int_equal(k, 4);
	for (i = 0; i < 4; i++) {
		const char *why = NULL;

		/* every segment inside its buffer (data_off + data_len) */
		assert_int_equal(rte_mbuf_check(pkts[i], 1, &why), 0);
		assert_true(tl_mbuf_equal(pkts[i], pb_frames[all[i]],
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
			b[i] = pb_tx_raw_buf(f, i, 60);
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
		pb_deq_expect(f, want, 3, 60);
		pb_used_at(f, 2, 2, 0, true);
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
		pb_rx_seq(f, &r, "ssssssss", caps, 6, plens, false);
		pfx_free(f);
		f = pfx_new(8, c % 2 ? F_STD : F_V1 | F_IND);
		r.head = r.tail = 0; /* packet 2 in two segments */
		pb_rx_seq(f, &r, "ssssssss", big, 4, plens, true);
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
			tl_rand_bytes(&ptest_rng, pb_frames[i], 500);
			m[i] = pfx_mbuf(500, 0);
			memcpy(rte_pktmbuf_mtod(m[i], uint8_t *), pb_frames[i],
				500);
		}
		assert_int_equal(vsw_virtq_enqueue_burst(f->vq, m, 4),
			4 - (c == 0));
		for (i = 0; i < 4; i++) {
			const uint8_t *g = tg_host(&f->g, b[i]);
			uint8_t part[500];

			pb_used_at(f, (uint16_t)i, (uint16_t)i,
				i == 2 && c == 0 ? 0 : 512, true);
			if (i == 2 && c == 0) {
				assert_int_equal(g[0], 0xee);
				continue;
			}
			assert_int_equal(g[10], 1); /* num_buffers */
			if (i == 2) { /* 100 bytes to the boundary */
				tg_read(&f->g, b[i] + 12, part, 500);
				assert_memory_equal(part, pb_frames[i], 500);
			} else {
				assert_memory_equal(g + 12, pb_frames[i], 500);
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
			b[i] = pb_tx_raw_buf(f, i, 60);
		for (i = 0; i < 8; i++) {
			bool head = i == at, tail = i == at + 1;

			/* the chain: 40 bytes of pb_frames[at], then 20 of the
			 * tail's buffer (its frame's first 20: set below) */
			tgp_desc_raw(&f->q, (uint16_t)i, b[i],
				head ? hl + 40 : (tail ? 20 : hl + 60),
				(uint16_t)(head ? 7 : i),
				AV(true) | (head ? NEXT : 0));
			if (!head && !tail)
				order[k++] = i;
		}
		/* the chain's frame: 40 bytes from at, 20 from at + 1 */
		memcpy(pb_frames[8], pb_frames[at], 40);
		tg_read(&f->g, b[at + 1], pb_frames[8] + 40, 20);
		{
			struct rte_mbuf *pkts[VSW_VIRTQ_BURST_MAX];
			uint16_t n = vsw_virtq_dequeue_burst(f->vq, ptest_pool,
				pkts, 32), j, o = 0;

			assert_int_equal(n, 7);
			for (j = 0; j < n; j++) {
				bool chain = j == at;

				assert_true(tl_mbuf_equal(pkts[j],
					pb_frames[chain ? 8 : order[o]],
					60));
				if (!chain)
					o++;
			}
			rte_pktmbuf_free_bulk(pkts, n);
		}
		pb_used_at(f, (uint16_t)at, (uint16_t)(at + 1), 0, true);
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
		tgp_desc_raw(&f->q, (uint16_t)i, pb_tx_raw_buf(f, i, 60),
			hl + 60, (uint16_t)i, AV(true));
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
					pb_tx_raw_buf(f, i, n), hl + n,
					(uint16_t)i, AV(true));
			}
			pb_deq_expect(f, want, 3, 500);
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
			pb_used_at(f, (uint16_t)i, (uint16_t)i, hl + 500, true);
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
 * ring) look available and hold pb_frames; the batch must not read them. */
static void
test_pb_past_end(void **state)
{
	static const uint32_t first[] = {0, 1, 2, 3}, next[] = {4, 5, 6, 7};
	struct pfx *f = pfx_new(6, F_STD);
	uint64_t b[8];
	uint32_t i;

	(void)state;
	for (i = 0; i < 8; i++)
		b[i] = pb_tx_raw_buf(f, i, 60);
	for (i = 0; i < 4; i++)
		tgp_desc_raw(&f->q, (uint16_t)i, b[i], 72, (uint16_t)i,
			AV(true));
	pb_deq_expect(f, first, 4, 60);
	/* 4, 5 in this lap, 0, 1 in the next; "6", "7" lie past the end */
	tgp_desc_raw(&f->q, 4, b[4], 72, 4, AV(true));
	tgp_desc_raw(&f->q, 5, b[5], 72, 5, AV(true));
	tgp_desc_raw(&f->q, 6, b[0], 72, 2, AV(true));
	tgp_desc_raw(&f->q, 7, b[1], 72, 3, AV(true));
	tgp_desc_raw(&f->q, 0, b[6], 72, 0, AV(false));
	tgp_desc_raw(&f->q, 1, b[7], 72, 1, AV(false));
	pb_deq_expect(f, next, 4, 60);
	pb_used_at(f, 4, 4, 0, true);
	pb_used_at(f, 0, 0, 0, false);
	assert_int_equal(vsw_virtq_last_avail_idx(f->vq), tgp_pos(2, false));
	pfx_free(f);
}

#define T(fn)                                                                  \
	cmocka_unit_test_setup_teardown(fn, pfx_pool_setup, pfx_pool_teardown)

int
test_virtq_packed_batch_lens_run(void)
{
	const struct CMUnitTest tests[] = {
		T(test_pb_tx_lens),
		T(test_pb_rx_lens),
		T(test_pb_chain_ids),
		T(test_pb_budget),
		T(test_pb_max_len),
		T(test_pb_past_end),
	};

	return cmocka_run_group_tests_name("virtq_packed_batch_lens", tests,
		NULL, NULL);
}

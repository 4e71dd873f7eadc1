/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The split ring's prefetch hints (virtq_prefetch_desc/_buf): while one
 * chain is copied, the next chain's descriptor and buffer are fetched.
 * They read guest memory ahead of the walk, so their bounds are pinned
 * here: a published head >= size right after the last good chain (TX: the
 * burst's next-to-last, RX: the packet's next chain), with the descriptor
 * table placed so that desc[0xffff] lies past the ring region (a hint
 * that trusted the head would fault); buffers spread over every region,
 * one whose second line lies past its region's end, one outside guest
 * memory, and the avail ring wrapping in the middle of a burst. The
 * results must be those of a ring walked without hints. Last, the RX
 * header store, which reads the posted buffer before it writes.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "test_virtq.h"

#define QSZ 256u
#define WR VRING_DESC_F_WRITE
#define HI (QSZ - 1)
#define DATA_END (TG_DATA_GPA + TG_DATA_REGIONS * TG_DATA_REGION)

static void
pf_notify(void *ctx)
{
	((struct fx *)ctx)->kicks++;
}

/* fx_new with the descriptor table 4 KiB into region 0: desc[0xffff]
 * (16 * 0xffff bytes on) is past the region's end, in its guard page. */
static struct fx *
pf_fx_new(uint64_t features)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(tg_guest_init(&f->g), 0);
	tg_alloc_ring(&f->g, 4096, 4096);
	assert_int_equal(tg_vq_init(&f->q, &f->g, QSZ, features), 0);
	assert_true((uintptr_t)f->q.desc + 16ull * 0xffff >=
		    (uintptr_t)tg_host(&f->g, TG_RING_GPA) + TG_RING_SIZE);
	f->q.cfg.notify = pf_notify;
	f->q.cfg.notify_ctx = f;
	f->q.cfg.name = "test pf";
	f->vq = vsw_virtq_create(&f->q.cfg);
	assert_non_null(f->vq);
	return f;
}

static uint8_t
pf_byte(uint32_t i, uint8_t seed)
{
	return (uint8_t)(seed + i * 7);
}

/* TX chain at desc d: one buffer at gpa, header + flen bytes of seed. */
static void
pf_tx_chain(struct fx *f, uint16_t d, uint64_t gpa, uint32_t flen, uint8_t seed)
{
	uint32_t i;

	for (i = 0; i < f->q.hdr_len + flen; i++) {
		uint8_t b =
			i < f->q.hdr_len ? 0 : pf_byte(i - f->q.hdr_len, seed);

		tg_write(&f->g, gpa + i, &b, 1);
	}
	fx_set_desc(f, d, gpa, f->q.hdr_len + flen, 0, 0);
	tg_avail_push_raw(&f->q, d);
}

static void
pf_expect_frame(struct rte_mbuf *m, uint32_t flen, uint8_t seed)
{
	uint8_t *want = malloc(flen);
	uint32_t i;

	assert_non_null(want);
	for (i = 0; i < flen; i++)
		want[i] = pf_byte(i, seed);
	assert_int_equal(m->pkt_len, flen);
	assert_true(tl_mbuf_equal(m, want, flen));
	free(want);
}

/* TX: the burst's last good chain is followed by a published head 0xffff:
 * its buffer hint must not read desc[0xffff]; the walk then breaks the
 * ring there, as without hints. */
static void
test_pf_tx_bad_next_head(void **state)
{
	struct fx *f = pf_fx_new(F_STD);
	struct rte_mbuf *m[8];
	uint16_t i, n;

	(void)state;
	for (i = 0; i < 3; i++)
		pf_tx_chain(f, i, tg_alloc_data(&f->g, 2048, 64), 1000 + i,
			(uint8_t)i);
	tg_avail_push_raw(&f->q, 0xffff);
	tg_kick(&f->q);
	n = vsw_virtq_dequeue_burst(f->vq, test_pool, m, 8);
	assert_int_equal(n, 3);
	for (i = 0; i < n; i++) {
		pf_expect_frame(m[i], 1000 + i, (uint8_t)i);
		rte_pktmbuf_free(m[i]);
	}
	FX_EXPECT(f, {S(DEQ_PACKETS), 3}, {S(DEQ_BYTES), 3003},
		{S(ERR_DESC_INDEX), 1}, {S(ERR_RING_BROKEN), 1},
		{S(NOTIFY_SENT), 1});
	assert_true(vsw_virtq_broken(f->vq));
	fx_free(f);
}

/* RX: the packet's chain is followed by a published head 0xffff (the
 * next chain's hint reads it); one packet, nothing else. */
static void
test_pf_rx_bad_next_head(void **state)
{
	struct fx *f = pf_fx_new(F_STD);
	uint32_t lens[1] = {2048};
	struct rte_mbuf *m = fx_mbuf(1500, 9);
	uint8_t out[2048];
	uint16_t nb;

	(void)state;
	assert_true(tg_rx_post(&f->q, lens, 1, false) >= 0);
	tg_avail_push_raw(&f->q, 0xffff);
	tg_kick(&f->q);
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, &m, 1), 1);
	FX_EXPECT(f, {S(ENQ_PACKETS), 1}, {S(ENQ_BYTES), 1500},
		{S(NOTIFY_SENT), 1});
	assert_false(vsw_virtq_broken(f->vq));
	assert_int_equal(tg_rx_recv(&f->q, out, sizeof(out), &nb), 1500);
	assert_int_equal(nb, 1);
	rte_pktmbuf_free(m);
	fx_free(f);
}

/*
 * TX: bursts whose chains' buffers lie in every region in turn (the
 * region hint moves each time), one 100 bytes before the data regions'
 * end (its second line is not in guest memory: no hint), one outside
 * guest memory (dropped by the walk), the avail ring wrapping mid-burst.
 */
static void
test_pf_tx_regions_wrap(void **state)
{
	struct fx *f = pf_fx_new(F_STD);
	uint64_t far = tg_alloc_far(&f->g, 4096);
	struct rte_mbuf *m[8];
	uint16_t i, n, round;

	(void)state;
	for (round = 0; round < 70; round++) { /* 70 x 4 chains: wraps */
		uint64_t gpa[4] = {
			TG_DATA_GPA + 4096,
			far,
			TG_DATA_GPA + 2 * TG_DATA_REGION + 8192,
			DATA_END - 100,
		};

		for (i = 0; i < 4; i++)
			pf_tx_chain(f, (uint16_t)(round * 4 + i) % QSZ, gpa[i],
				i == 3 ? 100 - f->q.hdr_len : 512u + i,
				(uint8_t)(round + i));
		if (round == 69) /* and one outside guest memory */
			fx_set_desc(f, (uint16_t)(round * 4 + 3) % QSZ,
				TG_FAR_GPA + TG_FAR_SIZE + 4096, 200, 0, 0);
		tg_kick(&f->q);
		n = vsw_virtq_dequeue_burst(f->vq, test_pool, m, 8);
		assert_int_equal(n, round == 69 ? 3 : 4);
		for (i = 0; i < n; i++) {
			pf_expect_frame(m[i],
				i == 3 ? 100 - f->q.hdr_len : 512u + i,
				(uint8_t)(round + i));
			rte_pktmbuf_free(m[i]);
		}
		if (round == 69)
			FX_EXPECT(f, {S(DEQ_PACKETS), 3},
				{S(DEQ_BYTES), 512 + 513 + 514},
				{S(DEQ_DROP_BAD_DESC), 1},
				{S(ERR_DESC_ADDR), 1}, {S(NOTIFY_SENT), 1});
		else
			FX_EXPECT(f, {S(DEQ_PACKETS), 4},
				{S(DEQ_BYTES),
					512 + 513 + 514 + 100 - f->q.hdr_len},
				{S(NOTIFY_SENT), 1});
	}
	assert_false(vsw_virtq_broken(f->vq));
	fx_free(f);
}

/* RX: a 9000 B packet over five chains in three regions (the last one
 * ending at the data regions' end), the ring wrapping. */
static void
test_pf_rx_regions_wrap(void **state)
{
	struct fx *f = pf_fx_new(F_STD);
	uint64_t far = tg_alloc_far(&f->g, 8192);
	static uint8_t out[9100], frame[9000];
	uint16_t round, i, nb;

	(void)state;
	for (round = 0; round < 60; round++) { /* 60 x 5 chains: wraps */
		uint64_t gpa[5] = {
			TG_DATA_GPA + 4096,
			far,
			far + 4096,
			TG_DATA_GPA + 2 * TG_DATA_REGION,
			DATA_END - 2048,
		};
		struct rte_mbuf *m;

		memset(frame, round, sizeof(frame));
		m = tl_mbuf_build(test_pool, frame, sizeof(frame), NULL, 0);
		assert_non_null(m);
		for (i = 0; i < 5; i++) {
			uint16_t d = (uint16_t)(round * 5 + i) % QSZ;

			fx_set_desc(f, d, gpa[i], 2048, WR, 0);
			tg_avail_push_raw(&f->q, d);
		}
		tg_kick(&f->q);
		assert_int_equal(vsw_virtq_enqueue_burst(f->vq, &m, 1), 1);
		FX_EXPECT(f, {S(ENQ_PACKETS), 1}, {S(ENQ_BYTES), 9000},
			{S(NOTIFY_SENT), 1});
		/* read back by hand: the chains were posted raw */
		for (i = 0; i < 5; i++) {
			uint16_t id;
			uint32_t len;

			assert_int_equal(tg_used_pop(&f->q, &id, &len), 1);
			assert_int_equal(id, (round * 5 + i) % QSZ);
			assert_int_equal(len, i < 4 ? 2048 : 9012 - 4 * 2048);
			tg_read(&f->g, gpa[i], out + i * 2048, len);
		}
		nb = (uint16_t)(out[10] | out[11] << 8);
		assert_int_equal(nb, 5);
		assert_true(tl_mbuf_equal(m, out + 12, 9000));
		rte_pktmbuf_free(m);
	}
	assert_false(vsw_virtq_broken(f->vq));
	fx_free(f);
}

/*
 * The RX header store (virtq_hdr_store) reads the posted buffer first: a
 * header already there is not written again (its page is read-only here,
 * so a store faults), one that differs in its first byte or its last one
 * is rewritten. Header lengths 12 (MRG_RXBUF, VERSION_1) and 10 (legacy).
 */
static void
hs_rx(uint64_t features, uint32_t flip)
{
	struct fx *f = fx_new(QSZ, features);
	uint32_t hl = f->q.hdr_len, len = 100, ulen;
	uint64_t b = tg_alloc_data(&f->g, 8192, 4096);
	uint8_t want[12] = {0}, out[12 + 100];
	struct rte_mbuf *m = fx_mbuf(len, 0x3c);
	uint8_t *page = tg_host(&f->g, b);
	uint16_t id;

	if (hl == 12)
		want[10] = 1; /* num_buffers */
	memcpy(out, want, hl);
	if (flip != UINT32_MAX)
		out[flip] ^= 0x40;
	tg_write(&f->g, b + 4096 - hl, out, hl);
	if (flip == UINT32_MAX)
		assert_int_equal(mprotect(page, 4096, PROT_READ), 0);
	fx_set_desc(f, HI, b + 4096 - hl, hl + 2048, WR, 0);
	tg_avail_push_raw(&f->q, HI);
	tg_kick(&f->q);
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, &m, 1), 1);
	assert_int_equal(mprotect(page, 4096, PROT_READ | PROT_WRITE), 0);
	assert_int_equal(tg_used_pop(&f->q, &id, &ulen), 1);
	assert_int_equal(id, HI);
	assert_int_equal(ulen, hl + len);
	tg_read(&f->g, b + 4096 - hl, out, hl + len);
	assert_memory_equal(out, want, hl);
	assert_true(tl_mbuf_equal(m, out + hl, len));
	rte_pktmbuf_free(m);
	FX_EXPECT(f, {S(ENQ_PACKETS), 1}, {S(ENQ_BYTES), len},
		{S(NOTIFY_SENT), 1});
	fx_free(f);
}

static void
test_hs_rx_header(void **state)
{
	static const uint64_t feats[] = {F_STD, F_IND};
	uint32_t i;

	(void)state;
	for (i = 0; i < RTE_DIM(feats); i++) {
		uint32_t hl = (feats[i] & (F_MRG | F_V1)) ? 12 : 10;

		hs_rx(feats[i], UINT32_MAX); /* in place: not stored */
		hs_rx(feats[i], 0);
		hs_rx(feats[i], hl - 1);
	}
}

#define T(fn) \
	cmocka_unit_test_setup_teardown(fn, fx_pool_setup, fx_pool_teardown)

int
test_virtq_prefetch_run(void)
{
	const struct CMUnitTest tests[] = {
		T(test_pf_tx_bad_next_head),
		T(test_pf_rx_bad_next_head),
		T(test_pf_tx_regions_wrap),
		T(test_pf_rx_regions_wrap),
		T(test_hs_rx_header),
	};

	return cmocka_run_group_tests_name("virtq_prefetch", tests, NULL, NULL);
}

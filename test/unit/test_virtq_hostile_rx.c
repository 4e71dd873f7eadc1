/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hostile-guest cases on the RX side (host -> guest; the numbered list is
 * at the top of test_virtq.c): the device must never write outside the
 * buffers the guest posted as writable, and must account for every packet.
 */
#include <stdlib.h>
#include <string.h>

#include "test_virtq.h"

#define QSZ 256u
#define HI (QSZ - 1)

static bool
still_filled(struct fx *f, uint64_t gpa, uint32_t len)
{
	const uint8_t *p = tg_host(&f->g, gpa);
	uint32_t i;

	for (i = 0; i < len; i++)
		if (p[i] != TG_FILL)
			return false;
	return true;
}

/* Enqueues one packet of len; expects it dropped with these counters. */
static void
rx_expect_drop(struct fx *f, uint32_t len, enum vsw_virtq_stat drop,
	enum vsw_virtq_stat err, uint32_t used_entries)
{
	struct rte_mbuf *m = fx_mbuf(len, 0x77);
	uint32_t i, ulen;
	uint16_t id;

	tg_kick(&f->q);
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, &m, 1), 0);
	rte_pktmbuf_free(m);
	for (i = 0; i < used_entries; i++) {
		assert_int_equal(tg_used_pop(&f->q, &id, &ulen), 1);
		assert_int_equal(ulen, 0);
	}
	assert_int_equal(tg_used_pop(&f->q, &id, &ulen), 0);
	if (err == VSW_VIRTQ_STAT__MAX && used_entries == 0)
		FX_EXPECT(f, {drop, 1});
	else if (err == VSW_VIRTQ_STAT__MAX)
		FX_EXPECT(f, {drop, 1}, {S(NOTIFY_SENT), 1});
	else
		FX_EXPECT(f, {drop, 1}, {err, 1}, {S(NOTIFY_SENT), 1});
	assert_false(vsw_virtq_broken(f->vq));
}

/* One packet of len goes through and reads back. */
static void
rx_works(struct fx *f, uint32_t len)
{
	struct rte_mbuf *m = fx_mbuf(len, 0x42);
	uint8_t *buf = malloc(len);
	uint16_t nb;

	assert_non_null(buf);
	tg_kick(&f->q);
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, &m, 1), 1);
	assert_int_equal(tg_rx_recv(&f->q, buf, len, &nb), len);
	assert_memory_equal(buf, rte_pktmbuf_mtod(m, uint8_t *), len);
	rte_pktmbuf_free(m);
	free(buf);
	FX_EXPECT(f, {S(ENQ_PACKETS), 1}, {S(ENQ_BYTES), len},
		{S(NOTIFY_SENT), 1});
}

/* 8, 11, 22 */
static void
test_rx_bad_buffers(void **state)
{
	struct fx *f = fx_new(QSZ, F_STD);
	uint64_t b = tg_alloc_data(&f->g, 2048, 1), edge;
	uint32_t lens[1] = {2048};

	(void)state;
	/* 11: read-only buffer: not one byte written */
	fx_set_desc(f, HI, b, 2048, 0, 0);
	tg_avail_push_raw(&f->q, HI);
	rx_expect_drop(f, 100, S(ENQ_DROP_BAD_DESC), S(ERR_DESC_WRONG_DIR),
		1);
	assert_true(still_filled(f, b, 2048));
	/* 8: buffer running off the end of the last region into the gap */
	tg_alloc_far(&f->g, TG_FAR_SIZE - 8);
	edge = tg_alloc_far(&f->g, 8);
	fx_set_desc(f, HI, edge, 64, VRING_DESC_F_WRITE, 0);
	tg_avail_push_raw(&f->q, HI);
	rx_expect_drop(f, 100, S(ENQ_DROP_BAD_DESC), S(ERR_DESC_ADDR), 1);
	/* 22: mergeable buffer shorter than the header */
	fx_set_desc(f, HI, b, 8, VRING_DESC_F_WRITE, 0);
	tg_avail_push_raw(&f->q, HI);
	rx_expect_drop(f, 100, S(ENQ_DROP_SHORT_HDR), VSW_VIRTQ_STAT__MAX, 1);
	assert_true(tg_untouched(&f->g));
	assert_true(tg_rx_post(&f->q, lens, 1, false) >= 0);
	rx_works(f, 1000);
	fx_free(f);
}

/* 23: without MRG_RXBUF a too-small chain stays posted */
static void
test_rx_nonmrg_too_large(void **state)
{
	struct fx *f = fx_new(QSZ, F_V1 | F_IND);
	uint32_t lens[2] = {50, 62};

	(void)state;
	assert_true(tg_rx_post(&f->q, lens, 2, false) >= 0);
	rx_expect_drop(f, 101, S(ENQ_DROP_TOO_LARGE), VSW_VIRTQ_STAT__MAX, 0);
	assert_int_equal(vsw_virtq_last_avail_idx(f->vq), 0);
	rx_works(f, 100); /* 12 + 100 fits exactly */
	assert_true(tg_untouched(&f->g));
	fx_free(f);
}

/* 24: the second chain of a mergeable packet is bad: both come back */
static void
test_rx_mrg_second_chain_bad(void **state)
{
	struct fx *f = fx_new(QSZ, F_STD);
	uint32_t lens[1] = {64};
	uint64_t b = tg_alloc_data(&f->g, 512, 1);

	(void)state;
	assert_true(tg_rx_post(&f->q, lens, 1, false) >= 0);
	fx_set_desc(f, HI, b, 512, 0, 0); /* read-only */
	tg_avail_push_raw(&f->q, HI);
	rx_expect_drop(f, 300, S(ENQ_DROP_BAD_DESC), S(ERR_DESC_WRONG_DIR),
		2);
	assert_true(still_filled(f, b, 512));
	assert_true(tg_untouched(&f->g));
	fx_free(f);
}

/* Ring full partway through a burst, and a bad head mid-burst. */
static void
test_rx_partition(void **state)
{
	struct fx *f = fx_new(QSZ, F_STD);
	struct rte_mbuf *m[8];
	uint32_t lens[1] = {1500}, i;
	uint8_t buf[1500];
	uint16_t nb;

	(void)state;
	for (i = 0; i < 8; i++)
		m[i] = fx_mbuf(1000 + i, (uint8_t)i);
	for (i = 0; i < 3; i++)
		assert_true(tg_rx_post(&f->q, lens, 1, false) >= 0);
	tg_kick(&f->q);
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, m, 8), 3);
	FX_EXPECT(f, {S(ENQ_PACKETS), 3}, {S(ENQ_BYTES), 3003},
		{S(ENQ_DROP_RING_FULL), 5}, {S(NOTIFY_SENT), 1});
	for (i = 0; i < 3; i++)
		assert_int_equal(tg_rx_recv(&f->q, buf, sizeof(buf), &nb),
			1000 + i);
	/* a mergeable packet that needs more buffers than posted: rolled
	 * back, its buffers stay for the next one */
	assert_true(tg_rx_post(&f->q, lens, 1, false) >= 0);
	tg_kick(&f->q);
	{
		struct rte_mbuf *big = fx_mbuf(1600, 9);

		assert_int_equal(vsw_virtq_enqueue_burst(f->vq, &big, 1), 0);
		FX_EXPECT(f, {S(ENQ_DROP_RING_FULL), 1});
		assert_int_equal(vsw_virtq_last_avail_idx(f->vq), 3);
		rte_pktmbuf_free(big);
	}
	/* the bad head follows one good chain */
	tg_avail_push_raw(&f->q, 4000);
	tg_kick(&f->q);
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, m, 4), 1);
	FX_EXPECT(f, {S(ENQ_PACKETS), 1}, {S(ENQ_BYTES), 1000},
		{S(ENQ_DROP_NOT_READY), 3}, {S(ERR_DESC_INDEX), 1},
		{S(ERR_RING_BROKEN), 1}, {S(NOTIFY_SENT), 1});
	assert_int_equal(tg_rx_recv(&f->q, buf, sizeof(buf), &nb), 1000);
	assert_true(vsw_virtq_broken(f->vq));
	for (i = 0; i < 8; i++)
		rte_pktmbuf_free(m[i]);
	fx_free(f);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_pool_setup, fx_pool_teardown)

int test_virtq_hostile_rx_run(void);

int
test_virtq_hostile_rx_run(void)
{
	const struct CMUnitTest tests[] = {
		T(test_rx_bad_buffers),
		T(test_rx_nonmrg_too_large),
		T(test_rx_mrg_second_chain_bad),
		T(test_rx_partition),
	};

	return cmocka_run_group_tests_name("virtq_hostile_rx", tests, NULL,
		NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packed rings at the exact limits: the last slot wrapping to 0 (wrap
 * counters flip on both sides), a chain crossing the wrap, a chain as long
 * as the ring, an indirect table as long as the ring (and one entry more),
 * 64 KiB frames (and one byte more), a buffer ending at a region's last
 * byte (and one past), the driver event rules, the device event area,
 * reconnect with the wrap bit, and ring areas at create.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>

#include "test_virtq_packed.h"

/* One single-descriptor frame through the ring: moves both sides by one. */
static void
step(struct pfx *f)
{
	uint8_t fr[64] = {1};
	uint32_t piece = f->q.hdr_len + sizeof(fr);
	uint16_t id;
	uint32_t len;

	assert_true(tgp_tx_post(&f->q, fr, sizeof(fr), &piece, 1, false) >= 0);
	assert_int_equal(pfx_deq(f, 32), 1);
	assert_int_equal(tgp_used_pop(&f->q, &id, &len), 1);
}

static void
test_packed_wrap(void **state)
{
	uint8_t fr[400];
	uint32_t pieces[4] = {12 + 100, 100, 100, 100};
	struct rte_mbuf *pkts[4];
	struct pfx *f = pfx_new(8, F_STD);
	uint16_t id;
	uint32_t len, i;

	(void)state;

	for (i = 0; i < 7; i++)
		step(f);
	/* at slot 7 (the last), lap 1: the next frame wraps to 0 */
	assert_int_equal(vsw_virtq_last_avail_idx(f->vq), tgp_pos(7, true));
	step(f);
	assert_int_equal(vsw_virtq_last_avail_idx(f->vq), tgp_pos(0, false));
	assert_int_equal(vsw_virtq_last_used_idx(f->vq), tgp_pos(0, false));
	for (i = 0; i < 6; i++)
		step(f);
	/* a 4-descriptor chain at slots 6, 7, 0, 1 across the wrap */
	memset(fr, 0x5c, sizeof(fr));
	fr[399] = 7;
	assert_true(tgp_tx_post(&f->q, fr, sizeof(fr), pieces, 4, false) >= 0);
	assert_int_equal(vsw_virtq_dequeue_burst(f->vq, ptest_pool, pkts, 4),
		1);
	assert_true(tl_mbuf_equal(pkts[0], fr, sizeof(fr)));
	rte_pktmbuf_free(pkts[0]);
	assert_int_equal(vsw_virtq_last_avail_idx(f->vq), tgp_pos(2, true));
	assert_int_equal(tgp_used_pop(&f->q, &id, &len), 1);
	assert_int_equal(f->q.next_used, 2);
	assert_true(f->q.used_wrap);
	/* a chain as long as the ring (8), then through it again */
	for (i = 0; i < 2; i++) {
		uint32_t p8[8] = {12, 1, 1, 1, 1, 1, 1, 1};
		uint8_t b[7] = {1, 2, 3, 4, 5, 6, 7};

		assert_true(tgp_tx_post(&f->q, b, 7, p8, 8, false) >= 0);
		assert_int_equal(vsw_virtq_dequeue_burst(f->vq, ptest_pool,
			pkts, 4), 1);
		assert_true(tl_mbuf_equal(pkts[0], b, 7));
		rte_pktmbuf_free(pkts[0]);
		assert_int_equal(tgp_used_pop(&f->q, &id, &len), 1);
	}
	assert_int_equal(vsw_virtq_last_avail_idx(f->vq), tgp_pos(2, true));
	PFX_EXPECT(f, {S(DEQ_PACKETS), 17}, {S(DEQ_BYTES), 14 * 64 + 400 + 14},
		{S(NOTIFY_SENT), 17});
	pfx_free(f);
}

/* An indirect table of n entries (header in entry 0, 1 byte in the rest). */
static int
post_indirect(struct pfx *f, uint32_t n)
{
	uint32_t p[64], i;
	uint8_t b[64];

	p[0] = f->q.hdr_len + 1;
	for (i = 1; i < n; i++)
		p[i] = 1;
	memset(b, 3, sizeof(b));
	return tgp_tx_post(&f->q, b, n, p, n, true);
}

static void
test_packed_indirect_limit(void **state)
{
	struct pfx *f = pfx_new(16, F_STD);
	uint16_t id;
	uint32_t len;

	(void)state;
	assert_true(post_indirect(f, 16) >= 0);
	assert_int_equal(pfx_deq(f, 32), 1);
	assert_int_equal(tgp_used_pop(&f->q, &id, &len), 1);
	PFX_EXPECT(f, {S(DEQ_PACKETS), 1}, {S(DEQ_BYTES), 16},
		{S(NOTIFY_SENT), 1});
	assert_true(post_indirect(f, 17) >= 0);
	assert_int_equal(pfx_deq(f, 32), 0);
	assert_int_equal(tgp_used_pop(&f->q, &id, &len), 1);
	assert_int_equal(len, 0);
	PFX_EXPECT(f, {S(DEQ_DROP_BAD_DESC), 1}, {S(ERR_INDIRECT_LEN), 1},
		{S(NOTIFY_SENT), 1});
	pfx_free(f);
}

static void
test_packed_64k(void **state)
{
	static uint8_t fr[65536];
	static uint8_t back[65536 + 64];
	struct pfx *f = pfx_new(64, F_STD);
	uint32_t piece[2] = {12 + 65535, 0}, rx[4] = {16384 + 12, 16384,
		16384, 16384};
	struct rte_mbuf *m;
	uint16_t id, nb;
	uint32_t len;

	(void)state;
	tl_rand_bytes(&ptest_rng, fr, sizeof(fr));
	assert_true(tgp_tx_post(&f->q, fr, 65535, piece, 1, false) >= 0);
	piece[0] = 12 + 65536;
	assert_true(tgp_tx_post(&f->q, fr, 65536, piece, 1, false) >= 0);
	assert_int_equal(pfx_deq(f, 32), 1);
	assert_int_equal(tgp_used_pop(&f->q, &id, &len), 1);
	assert_int_equal(tgp_used_pop(&f->q, &id, &len), 1);
	PFX_EXPECT(f, {S(DEQ_PACKETS), 1}, {S(DEQ_BYTES), 65535},
		{S(DEQ_DROP_TOO_LARGE), 1}, {S(NOTIFY_SENT), 1});
	/* enqueue: 65535 fits four 16 KiB buffers, 65536 is too large */
	tg_data_reset(&f->g);
	assert_true(tgp_rx_post(&f->q, rx, 4, false) >= 0);
	m = tl_mbuf_build(ptest_pool, fr, 65536, NULL, 0);
	assert_non_null(m);
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, &m, 1), 0);
	rte_pktmbuf_trim(m, 1);
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, &m, 1), 1);
	rte_pktmbuf_free(m);
	assert_int_equal(tgp_rx_recv(&f->q, back, sizeof(back), &nb), 65535);
	assert_int_equal(nb, 1);
	assert_memory_equal(back, fr, 65535);
	PFX_EXPECT(f, {S(ENQ_PACKETS), 1}, {S(ENQ_BYTES), 65535},
		{S(ENQ_DROP_TOO_LARGE), 1}, {S(NOTIFY_SENT), 1});
	pfx_free(f);
}

/* A TX buffer ending at the far region's last byte, then one past it. */
static void
test_packed_region_end(void **state)
{
	struct pfx *f = pfx_new(8, F_STD);
	uint64_t end = TG_FAR_GPA + TG_FAR_SIZE;
	uint16_t slot, id;
	uint32_t len;

	(void)state;
	memset(tg_host(&f->g, end - 112), 0, 12);
	/* ids 0 and 1 taken from the guest's free list, by hand */
	f->q.nfree_id -= 2;
	f->q.free_slots -= 2;
	f->q.buf[0].busy = f->q.buf[1].busy = true;
	f->q.buf[0].nslots = f->q.buf[1].nslots = 1;
	tgp_desc_raw(&f->q, 0, end - 112, 112, 0, tgp_avail_flags(true));
	tgp_desc_raw(&f->q, 1, end - 112, 113, 1, tgp_avail_flags(true));
	assert_int_equal(pfx_deq(f, 32), 1);
	PFX_EXPECT(f, {S(DEQ_PACKETS), 1}, {S(DEQ_BYTES), 100},
		{S(DEQ_DROP_BAD_DESC), 1}, {S(ERR_DESC_ADDR), 1},
		{S(NOTIFY_SENT), 1});
	for (slot = 0; slot < 2; slot++) {
		assert_int_equal(tgp_used_pop(&f->q, &id, &len), 1);
		assert_int_equal(id, slot);
	}
	pfx_free(f);
}

static void
test_packed_notify(void **state)
{
	struct pfx *f = pfx_new(8, F_STD | F_EVT);
	uint32_t i;

	(void)state;
	/* vsw polls: the device event area says so from the start */
	assert_int_equal(f->q.device_event->flags,
		VRING_PACKED_EVENT_FLAG_DISABLE);
	f->q.driver_event->flags = VRING_PACKED_EVENT_FLAG_DISABLE;
	step(f);
	PFX_EXPECT(f, {S(DEQ_PACKETS), 1}, {S(DEQ_BYTES), 64},
		{S(NOTIFY_SUPPRESSED), 1});
	/* DESC: kick exactly when slot 5 of lap 0 (wrap 1) gets used; the
	 * device is at slot 1 now */
	f->q.driver_event->off_wrap = 5 | 0x8000;
	f->q.driver_event->flags = VRING_PACKED_EVENT_FLAG_DESC;
	for (i = 1; i < 8; i++) {
		f->kicks = 0;
		step(f);
		assert_int_equal(f->kicks, i == 5 ? 1 : 0);
	}
	/* the same slot in lap 1 (wrap 0) fires one lap later only */
	f->q.driver_event->off_wrap = 5;
	for (i = 0; i < 16; i++) {
		f->kicks = 0;
		step(f);
		assert_int_equal(f->kicks, i == 5 ? 1 : 0);
	}
	f->q.driver_event->flags = VRING_PACKED_EVENT_FLAG_ENABLE;
	f->kicks = 0;
	step(f);
	assert_int_equal(f->kicks, 1);
	pfx_free(f);
	/* without EVENT_IDX, DESC means "enabled" */
	f = pfx_new(8, F_STD);
	f->q.driver_event->flags = VRING_PACKED_EVENT_FLAG_DESC;
	f->q.driver_event->off_wrap = 5 | 0x8000;
	step(f);
	step(f);
	assert_int_equal(f->kicks, 2);
	pfx_free(f);
}

static void
test_packed_reconnect(void **state)
{
	struct pfx *f = pfx_new(5, F_STD);
	uint32_t i;

	(void)state;
	for (i = 0; i < 13; i++) {
		if (i % 3 == 0)
			pfx_resume(f);
		step(f);
	}
	/* 13 steps on a ring of 5: slot 3, lap 2 (wrap 1) */
	assert_int_equal(vsw_virtq_last_avail_idx(f->vq), tgp_pos(3, true));
	PFX_EXPECT(f, {S(DEQ_PACKETS), 1}, {S(DEQ_BYTES), 64},
		{S(NOTIFY_SENT), 1});
	/* a position beyond the ring is refused */
	f->q.cfg.last_avail_idx = 5;
	assert_null(vsw_virtq_create(&f->q.cfg));
	assert_int_equal(rte_errno, EINVAL);
	pfx_free(f);
}

static void
test_packed_create(void **state)
{
	struct pfx *f = pfx_new(8, F_STD);
	struct vsw_virtq_config c = f->q.cfg;
	uint64_t end = TG_RING_GPA + TG_RING_SIZE;
	struct vsw_virtq *vq;

	(void)state;
	c.avail_gpa = end - 4; /* the event areas: 4 bytes, at the end */
	c.used_gpa = end - 8;
	vq = vsw_virtq_create(&c);

	assert_non_null(vq);
	vsw_virtq_destroy(vq);
	c.avail_gpa = end - 2;
	assert_null(vsw_virtq_create(&c));
	assert_int_equal(rte_errno, EFAULT);
	c.avail_gpa = end - 4;
	c.used_gpa = end;
	assert_null(vsw_virtq_create(&c));
	c.used_gpa = end - 6; /* unaligned */
	assert_null(vsw_virtq_create(&c));
	c.used_gpa = end - 8;
	c.desc_gpa = end - 16 * 8 + 16; /* ring one entry past the end */
	assert_null(vsw_virtq_create(&c));
	c.desc_gpa = end - 16 * 8;
	assert_non_null(vq = vsw_virtq_create(&c));
	vsw_virtq_destroy(vq);
	c.size = 32769;
	assert_null(vsw_virtq_create(&c));
	assert_int_equal(rte_errno, EINVAL);
	pfx_free(f);
}

#define T(fn)                                                                  \
	cmocka_unit_test_setup_teardown(fn, pfx_pool_setup, pfx_pool_teardown)

int test_packed_limits_run(void);

int
test_packed_limits_run(void)
{
	const struct CMUnitTest tests[] = {
		T(test_packed_wrap),
		T(test_packed_indirect_limit),
		T(test_packed_64k),
		T(test_packed_region_end),
		T(test_packed_notify),
		T(test_packed_reconnect),
		T(test_packed_create),
	};

	return cmocka_run_group_tests_name("virtq_packed_limits", tests, NULL,
		NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hostile guests on packed rings. Each case writes raw descriptors and
 * asserts the exact counters that moved, what the guest gets back (a used
 * descriptor per chain taken, len 0 when dropped, in ring order with the
 * chain's id) and that the queue goes on, or stops for good when the ring
 * cannot be followed any more:
 *   1. wrap counter lies (a slot that looks used, or available in another
 *      lap): nothing taken, nothing counted
 *   2. a descriptor marked available twice: taken once
 *   3. buffer id >= ring size                   (dropped, err_desc_id)
 *   4. buffer id reused while in flight          (second one dropped)
 *   5. chain running into an unavailable slot    (no end: ring broken)
 *   6. chain longer than the ring: it meets its own head a lap later,
 *      not available there                      (no end: ring broken)
 *   7. indirect table outside guest memory
 *   8. INDIRECT with NEXT; INDIRECT inside a chain (chain skipped whole)
 *   9. indirect table length 0, not a multiple of 16; a TX table entry
 *      with WRITE (taken: DPDK's driver sets it), an RX one without
 *      (dropped)
 *  10. zero length; TX descriptor write-only; RX descriptor read-only
 *      (guest memory unchanged)
 *  11. RX buffer id out of range
 *  12. 200 queues of random garbage: no crash, every dropped chain and
 *      every broken ring counted with exactly one reason
 *  13. RX buffers on the ring itself: each packet re-arms its slot for
 *      the next lap; a burst still takes at most the ring's size of
 *      slots (the rest is ring-full) and the used position follows;
 *      re-armed slots are not taken by the four-chain batch either, and
 *      a chain running into a slot its burst took is a loop (broken)
 */
#include <stdio.h>
#include <string.h>

#include "test_virtq_packed.h"

#define AV(w) tgp_avail_flags(w)
#define NEXT VRING_DESC_F_NEXT
#define WR VRING_DESC_F_WRITE
#define IND VRING_DESC_F_INDIRECT

/* A TX buffer holding a header and n bytes; returns its gpa. */
static uint64_t
tx_buf(struct pfx *f, uint32_t n)
{
	uint64_t gpa = tg_alloc_data(&f->g, f->q.hdr_len + n, 1);

	memset(tg_host(&f->g, gpa), 0, f->q.hdr_len + n);
	return gpa;
}

/* Pops one used descriptor and checks its id and length. */
static void
used_is(struct pfx *f, uint16_t want_id, uint32_t want_len, uint16_t nslots)
{
	struct vring_packed_desc *d = &f->q.desc[f->q.next_used];
	uint16_t fl = d->flags;

	assert_int_equal(!!(fl & TGP_F_USED), f->q.used_wrap);
	assert_int_equal(!!(fl & TGP_F_AVAIL), f->q.used_wrap);
	assert_int_equal(d->id, want_id);
	assert_int_equal(d->len, want_len);
	f->q.next_used = (uint16_t)(f->q.next_used + nslots);
	if (f->q.next_used >= f->q.size) {
		f->q.next_used = (uint16_t)(f->q.next_used - f->q.size);
		f->q.used_wrap = !f->q.used_wrap;
	}
}

static void
test_ph_wrap_lies(void **state)
{
	struct pfx *f = pfx_new(4, F_STD);
	uint64_t b = tx_buf(f, 60);

	(void)state;
	tgp_desc_raw(&f->q, 0, b, 72, 0, TGP_F_AVAIL | TGP_F_USED);
	assert_int_equal(pfx_deq(f, 32), 0);
	tgp_desc_raw(&f->q, 0, b, 72, 0, AV(false));
	assert_int_equal(pfx_deq(f, 32), 0);
	tgp_desc_raw(&f->q, 0, b, 72, 0, 0);
	assert_int_equal(pfx_deq(f, 32), 0);
	PFX_NOTHING(f);
	tgp_desc_raw(&f->q, 0, b, 72, 0, AV(true));
	assert_int_equal(pfx_deq(f, 32), 1);
	used_is(f, 0, 0, 1);
	/* 2: the same slot made available again in the same lap */
	tgp_desc_raw(&f->q, 0, b, 72, 1, AV(true));
	assert_int_equal(pfx_deq(f, 32), 0);
	PFX_EXPECT(f, {S(DEQ_PACKETS), 1}, {S(DEQ_BYTES), 60},
		{S(NOTIFY_SENT), 1});
	pfx_free(f);
}

static void
test_ph_ids(void **state)
{
	struct pfx *f = pfx_new(4, F_STD);
	uint64_t b = tx_buf(f, 60);

	(void)state;
	tgp_desc_raw(&f->q, 0, b, 72, 4, AV(true)); /* 3: id == size */
	tgp_desc_raw(&f->q, 1, b, 72, 2, AV(true)); /* 4: id 2 twice */
	tgp_desc_raw(&f->q, 2, b, 72, 2, AV(true));
	assert_int_equal(pfx_deq(f, 32), 1);
	used_is(f, 4, 0, 1);
	used_is(f, 2, 0, 1);
	used_is(f, 2, 0, 1);
	PFX_EXPECT(f, {S(DEQ_PACKETS), 1}, {S(DEQ_BYTES), 60},
		{S(DEQ_DROP_BAD_DESC), 2}, {S(ERR_DESC_ID), 2},
		{S(NOTIFY_SENT), 1});
	/* out of flight after the burst: id 2 is fine again */
	tgp_desc_raw(&f->q, 3, b, 72, 2, AV(true));
	assert_int_equal(pfx_deq(f, 32), 1);
	used_is(f, 2, 0, 1);
	pfx_free(f);
}

static void
test_ph_no_end(void **state)
{
	struct pfx *f = pfx_new(4, F_STD);
	uint64_t b = tx_buf(f, 60);
	struct rte_mbuf *m;
	uint32_t i;

	(void)state;
	/* 5: slot 1 is not available: the chain has no end */
	tgp_desc_raw(&f->q, 1, b, 72, 1, AV(false) | NEXT);
	tgp_desc_raw(&f->q, 0, b, 72, 0, AV(true) | NEXT);
	assert_int_equal(pfx_deq(f, 32), 0);
	PFX_EXPECT(f, {S(ERR_DESC_NOT_AVAIL), 1}, {S(ERR_RING_BROKEN), 1});
	assert_true(vsw_virtq_broken(f->vq));
	assert_int_equal(pfx_deq(f, 32), 0);
	m = pfx_mbuf(60, 1);
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, &m, 1), 0);
	rte_pktmbuf_free(m);
	PFX_EXPECT(f, {S(ENQ_DROP_NOT_READY), 1});
	pfx_free(f);
	/* 6: every slot available with NEXT: longer than the ring */
	f = pfx_new(4, F_STD);
	b = tx_buf(f, 60);
	for (i = 4; i-- > 0;)
		tgp_desc_raw(&f->q, (uint16_t)i, b, 72, 0, AV(true) | NEXT);
	assert_int_equal(pfx_deq(f, 32), 0);
	PFX_EXPECT(f, {S(ERR_DESC_NOT_AVAIL), 1}, {S(ERR_RING_BROKEN), 1});
	/* one slot fewer with NEXT is a chain as long as the ring: fine */
	pfx_free(f);
	f = pfx_new(4, F_STD);
	b = tx_buf(f, 60);
	for (i = 4; i-- > 0;)
		tgp_desc_raw(&f->q, (uint16_t)i, b + (i ? 72 : 0),
			i ? 1 : 72, 3,
			AV(true) | (i < 3 ? NEXT : 0));
	assert_int_equal(pfx_deq(f, 32), 1);
	used_is(f, 3, 0, 4);
	PFX_EXPECT(f, {S(DEQ_PACKETS), 1}, {S(DEQ_BYTES), 63},
		{S(NOTIFY_SENT), 1});
	pfx_free(f);
}

static void
bad_one(struct pfx *f, enum vsw_virtq_stat why, uint16_t id, uint16_t nslots)
{
	assert_int_equal(pfx_deq(f, 32), 0);
	used_is(f, id, 0, nslots);
	PFX_EXPECT(f, {S(DEQ_DROP_BAD_DESC), 1}, {why, 1},
		{S(NOTIFY_SENT), 1});
	assert_false(vsw_virtq_broken(f->vq));
}

static void
test_ph_indirect(void **state)
{
	struct pfx *f = pfx_new(8, F_STD);
	uint64_t b = tx_buf(f, 60);
	uint64_t t = tg_alloc_data(&f->g, 32, 16);
	struct vring_packed_desc e = {.addr = b, .len = 72};

	(void)state;
	tg_write(&f->g, t, &e, sizeof(e));
	/* 7: the table in the gap between regions */
	tgp_desc_raw(&f->q, 0, TG_FAR_GPA - 64, 32, 1, AV(true) | IND);
	bad_one(f, S(ERR_DESC_ADDR), 1, 1);
	/* 8: INDIRECT with NEXT: both slots skipped, the last one's id */
	tgp_desc_raw(&f->q, 2, b, 72, 6, AV(true));
	tgp_desc_raw(&f->q, 1, t, 16, 5, AV(true) | IND | NEXT);
	bad_one(f, S(ERR_INDIRECT_NEXT), 6, 2);
	tgp_desc_raw(&f->q, 4, t, 16, 2, AV(true) | IND);
	tgp_desc_raw(&f->q, 3, b, 12, 1, AV(true) | NEXT);
	bad_one(f, S(ERR_INDIRECT_NEXT), 2, 2);
	/* 9: table length 0, 17 */
	tgp_desc_raw(&f->q, 5, t, 0, 3, AV(true) | IND);
	bad_one(f, S(ERR_INDIRECT_LEN), 3, 1);
	tgp_desc_raw(&f->q, 6, t, 17, 3, AV(true) | IND);
	bad_one(f, S(ERR_INDIRECT_LEN), 3, 1);
	/* a good one after all that; its entry has WRITE set, as DPDK's
	 * driver leaves it on TX header entries: taken (TX only reads) */
	e.flags = WR;
	tg_write(&f->g, t, &e, sizeof(e));
	tgp_desc_raw(&f->q, 7, t, 16, 3, AV(true) | IND);
	assert_int_equal(pfx_deq(f, 32), 1);
	used_is(f, 3, 0, 1);
	PFX_EXPECT(f, {S(DEQ_PACKETS), 1}, {S(DEQ_BYTES), 60},
		{S(NOTIFY_SENT), 1});
	pfx_free(f);
}

/* RX through an indirect table: every entry must be write-only. */
static void
test_ph_indirect_rx(void **state)
{
	struct pfx *f = pfx_new(4, F_STD);
	uint64_t t = tg_alloc_data(&f->g, 32, 16);
	struct vring_packed_desc e[2] = {
		{.addr = tg_alloc_data(&f->g, 64, 1), .len = 64, .flags = WR},
		{.addr = tg_alloc_data(&f->g, 64, 1), .len = 64},
	};
	struct rte_mbuf *m = pfx_mbuf(100, 0x42);

	(void)state;
	tg_write(&f->g, t, e, sizeof(e));
	tgp_desc_raw(&f->q, 0, t, 32, 2, AV(true) | IND);
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, &m, 1), 0);
	used_is(f, 2, 0, 1);
	PFX_EXPECT(f, {S(ENQ_DROP_BAD_DESC), 1}, {S(ERR_DESC_WRONG_DIR), 1},
		{S(NOTIFY_SENT), 1});
	e[1].flags = WR;
	tg_write(&f->g, t, e, sizeof(e));
	tgp_desc_raw(&f->q, 1, t, 32, 2, AV(true) | IND);
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, &m, 1), 1);
	used_is(f, 2, 112, 1);
	rte_pktmbuf_free(m);
	pfx_free(f);
}

static void
test_ph_desc(void **state)
{
	struct pfx *f = pfx_new(8, F_STD);
	uint64_t b = tx_buf(f, 60);
	uint64_t rx = tg_alloc_data(&f->g, 2048, 1);
	struct rte_mbuf *m;

	(void)state;
	tgp_desc_raw(&f->q, 0, b, 0, 1, AV(true)); /* 10 */
	bad_one(f, S(ERR_DESC_ZERO_LEN), 1, 1);
	tgp_desc_raw(&f->q, 1, b, 72, 1, AV(true) | WR);
	bad_one(f, S(ERR_DESC_WRONG_DIR), 1, 1);
	/* RX: read-only buffer, then an id out of range (11) */
	tgp_desc_raw(&f->q, 2, rx, 2048, 1, AV(true));
	tgp_desc_raw(&f->q, 3, rx, 2048, 9, AV(true) | WR);
	m = pfx_mbuf(100, 0x77);
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, &m, 1), 0);
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, &m, 1), 0);
	rte_pktmbuf_free(m);
	assert_true(tg_untouched(&f->g));
	used_is(f, 1, 0, 1);
	used_is(f, 9, 0, 1);
	PFX_EXPECT(f, {S(ENQ_DROP_BAD_DESC), 2}, {S(ERR_DESC_WRONG_DIR), 1},
		{S(ERR_DESC_ID), 1}, {S(NOTIFY_SENT), 2});
	pfx_free(f);
}

/* 12: garbage descriptors; the counters must still add up. */
static void
test_ph_garbage(void **state)
{
	uint32_t q;

	(void)state;
	for (q = 0; q < 200; q++) {
		uint32_t size = tl_rand_range(&ptest_rng, 1, 64), i, r;
		struct pfx *f = pfx_new(size,
			F_STD | (q & 1 ? F_EVT : 0) | (q & 2 ? 0 : F_MRG));
		uint64_t errs = 0, st[VSW_VIRTQ_STAT__MAX];

		for (r = 0; r < 8; r++) {
			struct rte_mbuf *m[4];

			for (i = 0; i < size; i++) {
				uint64_t a = TG_DATA_GPA - 64 +
					tl_rand_range(&ptest_rng, 0, 1 << 22);
				uint16_t fl = (uint16_t)tl_rand32(&ptest_rng);

				if (tl_rand_range(&ptest_rng, 0, 1))
					fl = (fl & (NEXT | WR | IND)) |
						AV(tl_rand_range(&ptest_rng,
							0, 1));
				tgp_desc_raw(&f->q, (uint16_t)i, a,
					tl_rand_range(&ptest_rng, 0, 5000),
					(uint16_t)tl_rand_range(&ptest_rng, 0,
						size + 1),
					fl);
			}
			f->q.driver_event->flags =
				(uint16_t)tl_rand32(&ptest_rng);
			f->q.driver_event->off_wrap =
				(uint16_t)tl_rand32(&ptest_rng);
			for (i = 0; i < 4; i++)
				m[i] = pfx_mbuf(tl_rand_range(&ptest_rng, 1,
					1500), 0x11);
			pfx_deq(f, (uint16_t)tl_rand_range(&ptest_rng, 1, 32));
			vsw_virtq_enqueue_burst(f->vq, m, 4);
			for (i = 0; i < 4; i++)
				rte_pktmbuf_free(m[i]);
		}
		vsw_virtq_stats_read(f->vq, st);
		for (i = S(ERR_DESC_INDEX); i <= S(ERR_DESC_ID); i++)
			if (i != S(ERR_RING_BROKEN))
				errs += st[i];
		assert_int_equal(errs, st[S(DEQ_DROP_BAD_DESC)] +
			st[S(ENQ_DROP_BAD_DESC)] + st[S(ERR_RING_BROKEN)]);
		assert_true(st[S(ERR_RING_BROKEN)] <= 1);
		pfx_free(f);
	}
}

/* A descriptor image, as the guest (or a copy landing on the ring) writes
 * it. */
static void
desc_image(uint8_t *p, uint64_t addr, uint32_t len, uint16_t id,
	uint16_t flags)
{
	struct vring_packed_desc d = {addr, len, id, flags};

	memcpy(p, &d, sizeof(d));
}

/* A descriptor's last 4 bytes (id, flags): where a 4-byte frame lands
 * when its RX buffer is that descriptor (the header takes addr and len). */
static void
slot_tail(uint8_t *p, uint16_t id, uint16_t flags)
{
	memcpy(p, &id, sizeof(id));
	memcpy(p + sizeof(id), &flags, sizeof(flags));
}

/* A queue whose RX copies are done at once (cfg.no_rx_defer): a frame
 * landing on the ring rewrites it during the burst, as the guest's other
 * vCPU could; deferred, the copies would land after the burst's walks. */
static struct pfx *
pfx_new_at_once(uint32_t size, uint64_t features)
{
	struct pfx *f = pfx_new(size, features);

	f->q.cfg.no_rx_defer = true;
	pfx_resume(f);
	return f;
}

/* 13: each RX buffer is its own descriptor; the packet's 4 bytes land on
 * its id and flags and make it available again in the next lap. */
static void
test_ph_rx_on_ring(void **state)
{
	static const uint32_t sizes[] = {1, 2, 4, 5};
	uint32_t k;

	(void)state;
	for (k = 0; k < RTE_DIM(sizes); k++) {
		uint32_t size = sizes[k], n = 2 * size + 1, s;
		struct pfx *f = pfx_new_at_once(size, F_STD);
		struct rte_mbuf *m[16];
		uint16_t rearm = TGP_F_USED | WR; /* available in lap 0 */

		for (s = 0; s < size; s++)
			tgp_desc_raw(&f->q, (uint16_t)s,
				f->q.cfg.desc_gpa + 16ull * s, 16,
				(uint16_t)s, AV(true) | WR);
		for (s = 0; s < n; s++) {
			m[s] = pfx_mbuf(4, 0);
			slot_tail(rte_pktmbuf_mtod(m[s], uint8_t *),
				(uint16_t)(s % size), rearm);
		}
		assert_int_equal(vsw_virtq_enqueue_burst(f->vq, m,
					 (uint16_t)n), size);
		for (s = 0; s < n; s++)
			rte_pktmbuf_free(m[s]);
		for (s = 0; s < size; s++)
			used_is(f, (uint16_t)s, 16, 1);
		assert_int_equal(vsw_virtq_last_avail_idx(f->vq), 0);
		assert_int_equal(vsw_virtq_last_used_idx(f->vq), 0);
		assert_false(vsw_virtq_broken(f->vq));
		PFX_EXPECT(f, {S(ENQ_PACKETS), size}, {S(ENQ_BYTES), 4 * size},
			{S(ENQ_DROP_RING_FULL), n - size}, {S(NOTIFY_SENT), 1});
		pfx_free(f);
	}
}

/* 13b: slots 0-3 (ids out of range: dropped, not in flight) are taken one
 * by one; chain 4+5 puts its 64 bytes on them: four fresh descriptors,
 * distinct ids, lap 0. After slots 6 and 7 the burst is at slot 0 again
 * with all 8 slots taken: the batch must not take the four. */
static void
test_ph_rx_on_ring_batch(void **state)
{
	struct pfx *f = pfx_new_at_once(8, F_STD);
	uint64_t ring = f->q.cfg.desc_gpa;
	struct rte_mbuf *m[11];
	uint16_t s;

	(void)state;
	for (s = 0; s < 8; s++)
		if (s < 4 || s > 5)
			tgp_desc_raw(&f->q, s, tg_alloc_data(&f->g, 76, 1), 76,
				s < 4 ? 100 : s, AV(true) | WR);
	tgp_desc_raw(&f->q, 4, tg_alloc_data(&f->g, 12, 1), 12, 4,
		AV(true) | WR | NEXT);
	tgp_desc_raw(&f->q, 5, ring, 64, 5, AV(true) | WR);
	for (s = 0; s < 11; s++)
		m[s] = pfx_mbuf(64, (uint8_t)s);
	for (s = 0; s < 4; s++)
		desc_image(rte_pktmbuf_mtod_offset(m[4], uint8_t *, 16 * s),
			tg_alloc_data(&f->g, 76, 1), 76, s, TGP_F_USED | WR);
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, m, 11), 3);
	for (s = 0; s < 11; s++)
		rte_pktmbuf_free(m[s]);
	for (s = 0; s < 4; s++)
		used_is(f, 100, 0, 1);
	used_is(f, 5, 76, 2); /* the id of its last slot */
	used_is(f, 6, 76, 1);
	used_is(f, 7, 76, 1);
	assert_int_equal(vsw_virtq_last_avail_idx(f->vq), 0);
	assert_int_equal(vsw_virtq_last_used_idx(f->vq), 0);
	PFX_EXPECT(f, {S(ENQ_PACKETS), 3}, {S(ENQ_BYTES), 3 * 64},
		{S(ENQ_DROP_BAD_DESC), 4}, {S(ERR_DESC_ID), 4},
		{S(ENQ_DROP_RING_FULL), 4}, {S(NOTIFY_SENT), 1});
	pfx_free(f);
}

/* 13c: slot 0 re-arms itself for lap 0 (id 3); the chain at 2 runs on
 * through 3 into slot 0, which this burst took: no end in this lap. */
static void
test_ph_rx_on_ring_chain(void **state)
{
	struct pfx *f = pfx_new_at_once(4, F_STD);
	struct rte_mbuf *m[3];
	uint16_t s;

	(void)state;
	tgp_desc_raw(&f->q, 0, f->q.cfg.desc_gpa, 16, 0, AV(true) | WR);
	tgp_desc_raw(&f->q, 1, tg_alloc_data(&f->g, 76, 1), 76, 1,
		AV(true) | WR);
	tgp_desc_raw(&f->q, 2, tg_alloc_data(&f->g, 12, 1), 12, 2,
		AV(true) | WR | NEXT);
	tgp_desc_raw(&f->q, 3, tg_alloc_data(&f->g, 64, 1), 64, 2,
		AV(true) | WR | NEXT);
	for (s = 0; s < 3; s++)
		m[s] = pfx_mbuf(4, (uint8_t)s);
	/* packet 0's 4 bytes land on slot 0's id and flags */
	slot_tail(rte_pktmbuf_mtod(m[0], uint8_t *), 3, TGP_F_USED | WR);
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, m, 3), 2);
	for (s = 0; s < 3; s++)
		rte_pktmbuf_free(m[s]);
	used_is(f, 0, 16, 1);
	used_is(f, 1, 16, 1);
	assert_true(vsw_virtq_broken(f->vq));
	assert_int_equal(vsw_virtq_last_avail_idx(f->vq), 2 | 0x8000);
	assert_int_equal(vsw_virtq_last_used_idx(f->vq), 2 | 0x8000);
	PFX_EXPECT(f, {S(ENQ_PACKETS), 2}, {S(ENQ_BYTES), 8},
		{S(ENQ_DROP_NOT_READY), 1}, {S(ERR_DESC_LOOP), 1},
		{S(ERR_RING_BROKEN), 1}, {S(NOTIFY_SENT), 1});
	pfx_free(f);
}

#define T(fn)                                                                  \
	cmocka_unit_test_setup_teardown(fn, pfx_pool_setup, pfx_pool_teardown)

int
test_virtq_packed_hostile_run(void)
{
	const struct CMUnitTest tests[] = {
		T(test_ph_wrap_lies),
		T(test_ph_ids),
		T(test_ph_no_end),
		T(test_ph_indirect),
		T(test_ph_indirect_rx),
		T(test_ph_desc),
		T(test_ph_garbage),
		T(test_ph_rx_on_ring),
		T(test_ph_rx_on_ring_batch),
		T(test_ph_rx_on_ring_chain),
	};

	return cmocka_run_group_tests_name("virtq_packed_hostile", tests,
		NULL, NULL);
}

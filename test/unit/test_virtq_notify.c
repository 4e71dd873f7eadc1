/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Split-ring notifications (the guest's NO_INTERRUPT flag and its used
 * event index, a kick at most once per burst), a burst that takes the
 * whole ring, and reconnect (the queue re-created at the ring position the
 * port saved, indices wrapping meanwhile). Run from test_virtq.c's main
 * (its group "virtq").
 */
#include <stdlib.h>
#include <string.h>

#include "test_virtq.h"

/* --- notifications ---------------------------------------------------------- */

static void
enq_one(struct fx *f, uint32_t npkts)
{
	uint32_t lens[1] = {2048}, i;
	struct rte_mbuf *m[32];

	for (i = 0; i < npkts; i++) {
		assert_true(tg_rx_post(&f->q, lens, 1, false) >= 0);
		m[i] = fx_mbuf(60, (uint8_t)i);
	}
	tg_kick(&f->q);
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, m, (uint16_t)npkts),
		npkts);
	for (i = 0; i < npkts; i++) {
		uint16_t id;
		uint32_t len;

		rte_pktmbuf_free(m[i]);
		assert_int_equal(tg_used_pop(&f->q, &id, &len), 1);
	}
}

void
test_notify_flags(void **state)
{
	struct fx *f = fx_new(256, F_STD);
	struct rte_mbuf *m = fx_mbuf(60, 1);

	(void)state;
	enq_one(f, 32); /* one burst of 32: one kick */
	assert_int_equal(f->kicks, 1);
	FX_EXPECT(f, {S(ENQ_PACKETS), 32}, {S(ENQ_BYTES), 32 * 60},
		{S(NOTIFY_SENT), 1});
	f->q.avail->flags = VRING_AVAIL_F_NO_INTERRUPT;
	enq_one(f, 3);
	assert_int_equal(f->kicks, 1);
	FX_EXPECT(f, {S(ENQ_PACKETS), 3}, {S(ENQ_BYTES), 3 * 60},
		{S(NOTIFY_SUPPRESSED), 1});
	f->q.avail->flags = 0;
	enq_one(f, 1);
	assert_int_equal(f->kicks, 2);
	FX_EXPECT(f, {S(ENQ_PACKETS), 1}, {S(ENQ_BYTES), 60},
		{S(NOTIFY_SENT), 1});
	/* nothing published (ring full): no decision, no counter */
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, &m, 1), 0);
	FX_EXPECT(f, {S(ENQ_DROP_RING_FULL), 1});
	/* no notify function: never called, counted as suppressed (the
	 * queue comes back without one, where it stopped) */
	f->q.cfg.notify = NULL;
	fx_resume(f);
	enq_one(f, 1);
	assert_int_equal(f->kicks, 2);
	FX_EXPECT(f, {S(ENQ_PACKETS), 1}, {S(ENQ_BYTES), 60},
		{S(NOTIFY_SUPPRESSED), 1});
	rte_pktmbuf_free(m);
	fx_free(f);
}

void
test_notify_event_idx(void **state)
{
	struct fx *f = fx_new(256, F_STD | F_EVT);

	(void)state;
	f->q.avail->flags = VRING_AVAIL_F_NO_INTERRUPT; /* ignored: EVENT_IDX */
	*f->q.used_event = 100;
	enq_one(f, 1); /* the first publish always kicks */
	assert_int_equal(f->kicks, 1);
	FX_EXPECT(f, {S(ENQ_PACKETS), 1}, {S(ENQ_BYTES), 60},
		{S(NOTIFY_SENT), 1});
	*f->q.used_event = 1; /* wants a kick once used idx passes 1 */
	enq_one(f, 1);        /* used 1 -> 2 */
	assert_int_equal(f->kicks, 2);
	*f->q.used_event = 5;
	enq_one(f, 1); /* 2 -> 3: not yet */
	enq_one(f, 2); /* 3 -> 5: not yet (5 not passed) */
	assert_int_equal(f->kicks, 2);
	enq_one(f, 3); /* 5 -> 8: passed 5 */
	assert_int_equal(f->kicks, 3);
	FX_EXPECT(f, {S(ENQ_PACKETS), 7}, {S(ENQ_BYTES), 7 * 60},
		{S(NOTIFY_SENT), 2}, {S(NOTIFY_SUPPRESSED), 2});
	/* an event index long passed (guest asleep) does not kick again */
	*f->q.used_event = 6;
	enq_one(f, 2);
	assert_int_equal(f->kicks, 3);
	/* used_event just behind the new index: kick */
	*f->q.used_event = 10;
	enq_one(f, 2); /* 10 -> 12 */
	assert_int_equal(f->kicks, 4);
	FX_EXPECT(f, {S(ENQ_PACKETS), 4}, {S(ENQ_BYTES), 4 * 60},
		{S(NOTIFY_SENT), 1}, {S(NOTIFY_SUPPRESSED), 1});
	fx_free(f);
}

/* --- a burst that takes the whole ring ----------------------------------------- */

/* Every chain of a size-8 ring in one burst: the shadow used ring's limit. */
void
test_full_ring(void **state)
{
	static const uint8_t frame[100];
	struct fx *tx = fx_new(8, F_STD), *rx = fx_new(8, F_STD);
	uint32_t piece = 12 + 60, small[1] = {64}, len, i, round;
	struct rte_mbuf *m[12];
	uint16_t id;

	(void)state;
	for (round = 0; round < 3; round++) { /* indices wrap the ring */
		for (i = 0; i < 8; i++)
			assert_true(tg_tx_post(&tx->q, frame, 60, &piece, 1,
					    false) >= 0);
		tg_kick(&tx->q);
		assert_int_equal(vsw_virtq_dequeue_burst(tx->vq, test_pool, m,
					 32), 8);
		rte_pktmbuf_free_bulk(m, 8);
		for (i = 0; i < 8; i++)
			assert_int_equal(tg_used_pop(&tx->q, &id, &len), 1);
		FX_EXPECT(tx, {S(DEQ_PACKETS), 8}, {S(DEQ_BYTES), 8 * 60},
			{S(NOTIFY_SENT), 1});
		/* mergeable: 12 + 100 bytes take two 64-byte chains each, so
		 * 4 packets use all 8 and the other 2 find the ring full */
		for (i = 0; i < 8; i++)
			assert_true(tg_rx_post(&rx->q, small, 1, false) >= 0);
		tg_kick(&rx->q);
		for (i = 0; i < 6; i++)
			m[i] = fx_mbuf(100, (uint8_t)i);
		assert_int_equal(vsw_virtq_enqueue_burst(rx->vq, m, 6), 4);
		rte_pktmbuf_free_bulk(m, 6);
		for (i = 0; i < 8; i++)
			assert_int_equal(tg_used_pop(&rx->q, &id, &len), 1);
		FX_EXPECT(rx, {S(ENQ_PACKETS), 4}, {S(ENQ_BYTES), 4 * 100},
			{S(ENQ_DROP_RING_FULL), 2}, {S(NOTIFY_SENT), 1});
	}
	fx_free(tx);
	fx_free(rx);
}

/* --- reconnect ---------------------------------------------------------------- */

static void
set_indices(struct fx *f, uint16_t at)
{
	f->q.avail_idx = f->q.used_seen = at;
	f->q.avail->idx = f->q.used->idx = at;
	f->q.cfg.last_avail_idx = f->q.cfg.last_used_idx = at;
	fx_reinit(f);
}

void
test_reconnect(void **state)
{
	struct fx *tx = fx_new(64, F_STD), *rx = fx_new(64, F_STD | F_EVT);
	struct rte_mbuf *pkts[32];
	uint32_t lens[1] = {256}, i;
	struct frame fr[20];
	int heads[20];
	uint8_t buf[256];
	uint16_t k, nb;

	(void)state;
	set_indices(tx, 65530); /* indices wrap during the test */
	set_indices(rx, 65531);
	for (i = 0; i < 20; i++) {
		fr[i].len = 60 + i;
		fr[i].data = malloc(fr[i].len);
		memset(fr[i].data, (int)i, fr[i].len);
		heads[i] = tg_tx_post(&tx->q, fr[i].data, fr[i].len,
			(uint32_t[]){12 + fr[i].len}, 1, false);
		assert_true(tg_rx_post(&rx->q, lens, 1, false) >= 0);
	}
	tg_kick(&tx->q);
	tg_kick(&rx->q);
	k = vsw_virtq_dequeue_burst(tx->vq, test_pool, pkts, 7);
	assert_int_equal(k, 7);
	assert_int_equal(vsw_virtq_enqueue_burst(rx->vq, pkts, 7), 7);
	for (i = 0; i < 7; i++)
		rte_pktmbuf_free(pkts[i]);
	/* the port saves the indices (rte_vhost_set_vring_base) and the
	 * queue comes back as a new struct from the saved values */
	fx_resume(tx);
	fx_resume(rx);
	k = vsw_virtq_dequeue_burst(tx->vq, test_pool, pkts, 32);
	assert_int_equal(k, 13);
	assert_int_equal(vsw_virtq_enqueue_burst(rx->vq, pkts, 13), 13);
	for (i = 0; i < 13; i++)
		rte_pktmbuf_free(pkts[i]);
	for (i = 0; i < 20; i++) {
		uint16_t id;
		uint32_t len;

		assert_int_equal(tg_used_pop(&tx->q, &id, &len), 1);
		assert_int_equal(id, heads[i]);
		assert_int_equal(tg_rx_recv(&rx->q, buf, sizeof(buf), &nb),
			fr[i].len);
		assert_memory_equal(buf, fr[i].data, fr[i].len);
		free(fr[i].data);
	}
	assert_int_equal(tx->q.used->idx, (uint16_t)(65530 + 20));
	FX_EXPECT(tx, {S(DEQ_PACKETS), 13}, {S(DEQ_BYTES), 13 * 60 + 169},
		{S(NOTIFY_SENT), 1});
	fx_free(tx);
	fx_free(rx);
}

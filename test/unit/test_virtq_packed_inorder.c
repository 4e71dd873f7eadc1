/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * VIRTIO_F_IN_ORDER on packed rings (virtq_packed_dequeue.c, _notify.c): a
 * TX burst goes back as ONE used descriptor, the last chain's buffer id
 * written at the first chain's slot (flags of that slot's lap), and the
 * device's used position skips every slot of the burst; the driver infers
 * the buffers before the named one. Checked against a model of the ring
 * (which slots the device may write, what it writes there, where its
 * position goes) over random bursts on ring sizes that are and are not
 * powers of two, and at the exact limits: a batch of one, of the burst
 * size, across the ring's end, across the wrap counter's flip, of the
 * whole ring. Hostile: IN_ORDER claimed but ids out of ring order (a batch
 * still names the last), an id twice in a burst or out of range (dropped,
 * counted, the burst one descriptor per chain). RX keeps one per chain.
 *
 * The guest is the software guest's in-order packed driver (id = head
 * slot, batches inferred), like DPDK's in-order TX path.
 */
#include <stdlib.h>
#include <string.h>

#include "test_virtq_packed.h"

#define F_INO F(VSW_VIRTIO_F_IN_ORDER)
#define F_AU (TGP_F_AVAIL | TGP_F_USED)

struct io_chain {
	uint16_t slot;   /* head */
	bool wrap;       /* its lap */
	uint16_t nslots;
	uint16_t id;
	uint32_t flen;
	uint8_t seed;
};

struct io {
	struct pfx *f;
	uint32_t n;      /* posted, not yet dequeued */
	struct io_chain c[256];
	uint64_t bytes, pkts, bursts;
};

static void
io_frame(uint8_t *b, uint32_t len, uint8_t seed)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		b[i] = (uint8_t)(seed + i * 7);
}

/* A frame of flen bytes in npieces ring slots, or one indirect slot. */
static void
io_post(struct io *io, uint32_t flen, uint32_t npieces, bool indirect,
	uint8_t seed)
{
	static uint8_t frame[9000];
	struct tgp_vq *q = &io->f->q;
	uint32_t pieces[8], total = q->hdr_len + flen, j, left = total;
	struct io_chain *c = &io->c[io->n];
	int id;

	assert_true(npieces <= 8 && npieces <= total);
	for (j = 0; j + 1 < npieces; j++) {
		pieces[j] = total / npieces;
		left -= pieces[j];
	}
	pieces[j] = left;
	io_frame(frame, flen, seed);
	c->slot = q->next_avail;
	c->wrap = q->avail_wrap;
	id = tgp_tx_post(q, frame, flen, pieces, npieces, indirect);
	assert_int_equal(id, c->slot); /* in order: id = head slot */
	c->id = (uint16_t)id;
	c->nslots = (uint16_t)(indirect ? 1 : npieces);
	c->flen = flen;
	c->seed = seed;
	io->n++;
}

static bool
frame_ok(const struct rte_mbuf *m, const struct io_chain *c)
{
	static uint8_t want[9000];

	io_frame(want, c->flen, c->seed);
	return m->pkt_len == c->flen && tl_mbuf_equal(m, want, c->flen);
}

/*
 * One burst of up to n against the model: packets byte for byte; batched:
 * one used descriptor (last id, len 0, the first slot's lap) at the first
 * chain's slot and every other slot of the ring as it was; else one per
 * chain. The device's position moves by the burst's slots; the guest then
 * takes the buffers back in order. Returns the count.
 */
static uint16_t
io_burst(struct io *io, uint16_t n, bool batched)
{
	static struct vring_packed_desc before[1024];
	struct tgp_vq *q = &io->f->q;
	struct rte_mbuf *m[VSW_VIRTQ_BURST_MAX];
	uint16_t got, take = RTE_MIN(n, io->n), i, pos;
	uint32_t slots = 0, s;
	bool wrap;

	memcpy(before, q->desc, q->size * sizeof(before[0]));
	got = vsw_virtq_dequeue_burst(io->f->vq, ptest_pool, m, n);
	assert_int_equal(got, take);
	for (i = 0; i < got; i++) {
		assert_true(frame_ok(m[i], &io->c[i]));
		io->bytes += io->c[i].flen;
		slots += io->c[i].nslots;
	}
	rte_pktmbuf_free_bulk(m, got);
	for (s = 0; s < q->size; s++) {
		const struct vring_packed_desc *d = &q->desc[s];
		int k = -1; /* which chain's used descriptor slot s holds */

		for (i = 0; i < take && k < 0; i++)
			if (io->c[i].slot == s && (i == 0 || !batched))
				k = i;
		if (k < 0) {
			assert_memory_equal(d, &before[s], sizeof(*d));
			continue;
		}
		assert_int_equal(d->id, io->c[batched ? take - 1 : k].id);
		assert_int_equal(d->len, 0);
		assert_int_equal(d->flags & (F_AU | VRING_DESC_F_WRITE),
			io->c[k].wrap ? F_AU : 0);
	}
	pos = (uint16_t)(io->c[0].slot + (take ? slots : 0));
	wrap = io->c[0].wrap;
	if (take != 0 && pos >= q->size) {
		pos = (uint16_t)(pos - q->size);
		wrap = !wrap;
	}
	if (take != 0)
		assert_int_equal(vsw_virtq_last_used_idx(io->f->vq),
			tgp_pos(pos, wrap));
	for (i = 0; i < take; i++) { /* the driver's inference */
		uint16_t id;
		uint32_t len;

		assert_int_equal(tgp_used_pop(q, &id, &len), 1);
		assert_int_equal(id, io->c[i].id);
	}
	memmove(io->c, io->c + take, (io->n - take) * sizeof(io->c[0]));
	io->n -= take;
	io->pkts += got;
	io->bursts += take != 0;
	return got;
}

static struct io *
io_new(uint32_t size, uint64_t features)
{
	struct io *io = calloc(1, sizeof(*io));

	assert_non_null(io);
	io->f = pfx_new(size, features);
	return io;
}

/* The counters moved as the bursts say; frees the fixture. */
static void
io_done(struct io *io)
{
	PFX_EXPECT(io->f, {S(DEQ_PACKETS), io->pkts},
		{S(DEQ_BYTES), io->bytes}, {S(NOTIFY_SENT), io->bursts});
	assert_int_equal(io->f->q.free_slots, io->f->q.size);
	assert_false(vsw_virtq_broken(io->f->vq));
	pfx_free(io->f);
	free(io);
}

/* Random bursts (chains of 1..4 slots, a quarter indirect, frames
 * 1..3000 B, bursts 1..32) against the model, many laps of each ring. */
static void
test_pinorder_random(void **state)
{
	static const uint32_t sizes[] = {1, 3, 7, 64, 100, 256};
	uint32_t z, round;

	(void)state;
	for (z = 0; z < RTE_DIM(sizes); z++) {
		struct io *io = io_new(sizes[z], F_STD | F_INO);
		uint32_t maxp = RTE_MIN(4u, sizes[z]);

		for (round = 0; round < 150; round++) {
			uint32_t k = tl_rand_range(&ptest_rng, 1, 40), j;

			tg_data_reset(&io->f->g);
			for (j = 0; j < k; j++) {
				uint32_t np = tl_rand_range(&ptest_rng, 1,
					maxp);
				bool ind = tl_rand_range(&ptest_rng, 0, 3) == 0;

				if (io->f->q.free_slots < (ind ? 1 : np))
					break;
				io_post(io, tl_rand_range(&ptest_rng, 1, 3000),
					np, ind, (uint8_t)tl_rand32(&ptest_rng));
			}
			while (io->n != 0)
				io_burst(io, (uint16_t)tl_rand_range(&ptest_rng,
					1, 32), true);
		}
		assert_int_equal(vsw_virtq_last_avail_idx(io->f->vq),
			tgp_pos(io->f->q.next_avail, io->f->q.avail_wrap));
		io_done(io);
	}
}

/* A batch of one: the chain's own descriptor, as without IN_ORDER. */
static void
test_pinorder_batch_of_one(void **state)
{
	struct io *io = io_new(64, F_STD | F_INO);

	(void)state;
	io_post(io, 100, 3, false, 1);
	assert_int_equal(io_burst(io, 32, true), 1);
	assert_int_equal(io->f->q.desc[0].id, 0);
	io_post(io, 60, 1, false, 2);
	io_post(io, 61, 1, true, 3);
	assert_int_equal(io_burst(io, 1, true), 1); /* burst of one */
	assert_int_equal(io_burst(io, 1, true), 1);
	io_done(io);
}

/* A batch of the burst's size: 32 chains, one descriptor; then the next
 * 32 at the position the first batch skipped to. */
static void
test_pinorder_batch_of_burst(void **state)
{
	struct io *io = io_new(256, F_STD | F_INO);
	uint32_t i;

	(void)state;
	for (i = 0; i < 64; i++)
		io_post(io, 64 + i, 1 + i % 2, false, (uint8_t)i);
	assert_int_equal(io_burst(io, VSW_VIRTQ_BURST_MAX, true), 32);
	assert_int_equal(io->f->q.desc[0].id, 46); /* 16 x 1 + 15 x 2 */
	assert_int_equal(io_burst(io, VSW_VIRTQ_BURST_MAX, true), 32);
	assert_int_equal(io->f->q.desc[48].id, 94);
	io_done(io);
}

/* Across the ring's end and the wrap counter's flip: a batch whose first
 * slot is 62 (lap 1) and whose chains take 63, 0 and 1 (lap 0) is one
 * descriptor at 62 with lap 1's flags; the next, from slot 2, lap 0's. A
 * chain that itself crosses the end heads a batch too. */
static void
test_pinorder_batch_across_wrap(void **state)
{
	struct io *io = io_new(64, F_STD | F_INO);
	uint32_t i;

	(void)state;
	for (i = 0; i < 62; i++)
		io_post(io, 60, 1, false, (uint8_t)i);
	while (io->n != 0)
		io_burst(io, 31, true);
	io_post(io, 100, 1, false, 1);  /* 62 */
	io_post(io, 200, 2, false, 2);  /* 63, 0 */
	io_post(io, 300, 1, false, 3);  /* 1 */
	assert_int_equal(io_burst(io, 32, true), 3);
	assert_int_equal(io->f->q.desc[62].id, 1);
	assert_int_equal(io->f->q.desc[62].flags & F_AU, F_AU);
	assert_int_equal(vsw_virtq_last_used_idx(io->f->vq), tgp_pos(2, false));
	io_post(io, 400, 2, true, 4);   /* 2, indirect */
	io_post(io, 500, 1, false, 5);  /* 3 */
	assert_int_equal(io_burst(io, 32, true), 2);
	assert_int_equal(io->f->q.desc[2].id, 3);
	assert_int_equal(io->f->q.desc[2].flags & F_AU, 0);
	for (i = 0; i < 58; i++)        /* 4 .. 61 */
		io_post(io, 64, 1, false, (uint8_t)i);
	while (io->n != 0)
		io_burst(io, 29, true);
	io_post(io, 70, 4, false, 6);   /* 62, 63, 0, 1: crosses the end */
	io_post(io, 80, 1, false, 7);   /* 2 */
	assert_int_equal(io_burst(io, 32, true), 2);
	assert_int_equal(io->f->q.desc[62].id, 2);
	assert_int_equal(io->f->q.desc[62].flags & F_AU, 0); /* lap 0 */
	assert_int_equal(vsw_virtq_last_used_idx(io->f->vq), tgp_pos(3, true));
	io_done(io);
}

/* A batch of the whole ring (3 slots, not a power of two) from slot 0:
 * one descriptor at 0 naming id 2; the position is back at 0, lap
 * flipped; twice, so both laps' flags are seen. */
static void
test_pinorder_batch_whole_ring(void **state)
{
	struct io *io = io_new(3, F_STD | F_INO);
	uint32_t lap, i;

	(void)state;
	for (lap = 0; lap < 2; lap++) {
		for (i = 0; i < 3; i++)
			io_post(io, 50 + i, 1, false, (uint8_t)(lap + i));
		assert_int_equal(io_burst(io, 32, true), 3);
		assert_int_equal(io->f->q.desc[0].id, 2);
		assert_int_equal(vsw_virtq_last_used_idx(io->f->vq),
			tgp_pos(0, lap == 1));
	}
	io_done(io);
}

/* One raw TX descriptor at slot s of lap wrap: a 112-byte frame. */
static void
raw_tx(struct pfx *f, uint16_t s, bool wrap, uint16_t id, uint64_t gpa)
{
	tgp_desc_raw(&f->q, s, gpa, 124, id, tgp_avail_flags(wrap));
}

/*
 * Hostile: IN_ORDER negotiated, then ids out of ring order. Distinct ids
 * reversed: all delivered, one descriptor naming the last chain's id (the
 * spec's batch; the driver broke its own inference). An id twice in a
 * burst, or one out of range: that chain dropped and counted, the burst
 * one descriptor per chain with the ids as posted. The position is right
 * either way and the next burst is batched again.
 */
static void
test_pinorder_hostile_ids(void **state)
{
	struct pfx *f = pfx_new(64, F_STD | F_INO);
	uint64_t gpa = tg_alloc_data(&f->g, 124, 1);
	uint16_t i;

	(void)state;
	for (i = 0; i < 4; i++) /* ids 3, 2, 1, 0 at slots 0..3 */
		raw_tx(f, i, true, (uint16_t)(3 - i), gpa);
	assert_int_equal(pfx_deq(f, 32), 4);
	assert_int_equal(f->q.desc[0].id, 0);
	assert_int_equal(f->q.desc[0].flags & F_AU, F_AU);
	for (i = 1; i < 4; i++) /* untouched: still the driver's */
		assert_int_equal(f->q.desc[i].flags & F_AU, TGP_F_AVAIL);
	assert_int_equal(vsw_virtq_last_used_idx(f->vq), tgp_pos(4, true));
	PFX_EXPECT(f, {S(DEQ_PACKETS), 4}, {S(DEQ_BYTES), 448},
		{S(NOTIFY_SENT), 1});
	raw_tx(f, 4, true, 9, gpa);     /* id 9 twice, then 63 + 1 */
	raw_tx(f, 5, true, 9, gpa);
	raw_tx(f, 6, true, 64, gpa);
	raw_tx(f, 7, true, 7, gpa);
	assert_int_equal(pfx_deq(f, 32), 2);
	for (i = 4; i < 8; i++) {
		static const uint16_t want[4] = {9, 9, 64, 7};

		assert_int_equal(f->q.desc[i].id, want[i - 4]);
		assert_int_equal(f->q.desc[i].flags & F_AU, F_AU);
		assert_int_equal(f->q.desc[i].len, 0);
	}
	PFX_EXPECT(f, {S(DEQ_PACKETS), 2}, {S(DEQ_BYTES), 224},
		{S(DEQ_DROP_BAD_DESC), 2}, {S(ERR_DESC_ID), 2},
		{S(NOTIFY_SENT), 1});
	raw_tx(f, 8, true, 8, gpa);
	raw_tx(f, 9, true, 9, gpa);
	assert_int_equal(pfx_deq(f, 32), 2);
	assert_int_equal(f->q.desc[8].id, 9);
	assert_int_equal(f->q.desc[9].flags & F_AU, TGP_F_AVAIL);
	PFX_EXPECT(f, {S(DEQ_PACKETS), 2}, {S(DEQ_BYTES), 224},
		{S(NOTIFY_SENT), 1});
	assert_false(vsw_virtq_broken(f->vq));
	pfx_free(f);
}

/* RX with IN_ORDER: one used descriptor per chain, each with its length
 * (DPDK's receive path reads every slot's). */
static void
test_pinorder_rx_one_per_chain(void **state)
{
	struct pfx *f = pfx_new(64, F_STD | F_INO);
	const uint32_t lens[1] = {2048};
	struct rte_mbuf *m[3];
	uint8_t out[2048];
	uint16_t nb, i;

	(void)state;
	for (i = 0; i < 3; i++) {
		assert_int_equal(tgp_rx_post(&f->q, lens, 1, false), i);
		m[i] = pfx_mbuf(100u + 100u * i, (uint8_t)i);
	}
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, m, 3), 3);
	for (i = 0; i < 3; i++) {
		assert_int_equal(f->q.desc[i].id, i);
		assert_int_equal(f->q.desc[i].len, 112u + 100u * i);
		assert_int_equal(tgp_rx_recv(&f->q, out, sizeof(out), &nb),
			100 + 100 * i);
		rte_pktmbuf_free(m[i]);
	}
	PFX_EXPECT(f, {S(ENQ_PACKETS), 3}, {S(ENQ_BYTES), 600},
		{S(NOTIFY_SENT), 1});
	pfx_free(f);
}

/* Without IN_ORDER the same in-order posting gets one per chain. */
static void
test_pinorder_off_one_per_chain(void **state)
{
	struct io *io = io_new(64, F_STD);
	uint32_t i;

	(void)state;
	io->f->q.in_order = true; /* the guest posts id = slot anyway */
	for (i = 0; i < 20; i++)
		io_post(io, 64 + i, 1 + i % 3, i % 4 == 0, (uint8_t)i);
	assert_int_equal(io_burst(io, 32, false), 20);
	io_done(io);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, pfx_pool_setup, \
	pfx_pool_teardown)

int
test_virtq_packed_inorder_run(void)
{
	const struct CMUnitTest tests[] = {
		T(test_pinorder_random),
		T(test_pinorder_batch_of_one),
		T(test_pinorder_batch_of_burst),
		T(test_pinorder_batch_across_wrap),
		T(test_pinorder_batch_whole_ring),
		T(test_pinorder_hostile_ids),
		T(test_pinorder_rx_one_per_chain),
		T(test_pinorder_off_one_per_chain),
	};

	return cmocka_run_group_tests_name("virtq_packed_inorder", tests, NULL,
		NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * VIRTIO_F_IN_ORDER on split rings (vhost/virtq/virtq_inorder.c): a TX
 * burst whose chains come in ring order is published as one used entry,
 * the last chain's id at the burst's first used slot, used->idx advanced
 * by the burst's chain count (virtio 1.1 2.6.9). Checked against a
 * reference model of the used ring over random bursts, at the exact
 * limits (a batch whose used slots and descriptors cross the ring's end, a
 * batch of the ring's size), and for hostile guests (out of ring order
 * despite IN_ORDER, a bad chain in a batch): those get one entry per chain.
 *
 * The guest here is an in-order driver written for these tests: it takes
 * descriptors in ring order (the next of the table's last is 0), like
 * DPDK's virtio in-order TX path.
 */
#include <stdlib.h>
#include <string.h>

#include "test_virtq.h"

#define F_INO F(VSW_VIRTIO_F_IN_ORDER)
#define MARK 0xdeadbeefu /* used slots the device must not write */

struct io_guest {
	struct fx *f;
	uint16_t next;   /* next descriptor in ring order */
	uint16_t nheads; /* posted, not yet dequeued */
	uint16_t heads[1024];
	uint32_t lens[1024];
	uint8_t seeds[1024];
};

static uint32_t
qmask(const struct io_guest *io)
{
	return io->f->q.size - 1;
}

/* Header (zero) and frame bytes seed + 3 i, cut into npieces buffers. */
static uint64_t
fill_data(struct io_guest *io, uint32_t total, uint8_t seed)
{
	uint64_t gpa = tg_alloc_data(&io->f->g, total, 1);
	uint32_t hl = io->f->q.hdr_len, i;

	for (i = 0; i < total; i++) {
		uint8_t b = i < hl ? 0 : (uint8_t)(seed + (i - hl) * 3);

		tg_write(&io->f->g, gpa + i, &b, 1);
	}
	return gpa;
}

/* Piece j of total cut into n (the last takes the rest). */
static void
piece(uint32_t total, uint32_t n, uint32_t j, uint32_t *off, uint32_t *len)
{
	uint32_t each = total / n;

	*off = j * each;
	*len = j + 1 == n ? total - *off : each;
}

/*
 * Posts a frame of flen bytes in npieces descriptors, in ring order, or
 * through one indirect table (one ring descriptor). Returns the head.
 */
static uint16_t
io_post(struct io_guest *io, uint32_t flen, uint32_t npieces, bool indirect,
	uint8_t seed)
{
	struct vring_desc *d = io->f->q.desc;
	uint32_t total = io->f->q.hdr_len + flen, j, off, len;
	uint64_t gpa = fill_data(io, total, seed);
	uint16_t head = io->next;

	if (indirect) {
		uint64_t tbl = tg_alloc_data(&io->f->g, 16 * npieces, 16);

		for (j = 0; j < npieces; j++) {
			struct vring_desc e;

			piece(total, npieces, j, &off, &len);
			e = (struct vring_desc){gpa + off, len,
				j + 1 < npieces ? VRING_DESC_F_NEXT : 0,
				(uint16_t)(j + 1)};
			tg_write(&io->f->g, tbl + 16 * j, &e, sizeof(e));
		}
		d[head] = (struct vring_desc){tbl, 16 * npieces,
			VRING_DESC_F_INDIRECT, 0};
		io->next = (uint16_t)((head + 1) & qmask(io));
	} else {
		for (j = 0; j < npieces; j++) {
			uint16_t x = io->next;

			piece(total, npieces, j, &off, &len);
			io->next = (uint16_t)((x + 1) & qmask(io));
			d[x] = (struct vring_desc){gpa + off, len,
				j + 1 < npieces ? VRING_DESC_F_NEXT : 0,
				io->next};
		}
	}
	tg_avail_push_raw(&io->f->q, head);
	io->heads[io->nheads] = head;
	io->lens[io->nheads] = flen;
	io->seeds[io->nheads] = seed;
	io->nheads++;
	return head;
}

static bool
frame_ok(const struct rte_mbuf *m, uint32_t flen, uint8_t seed)
{
	uint8_t *want = malloc(flen ? flen : 1);
	uint32_t i;
	bool ok;

	assert_non_null(want);
	for (i = 0; i < flen; i++)
		want[i] = (uint8_t)(seed + i * 3);
	ok = m->pkt_len == flen && tl_mbuf_equal(m, want, flen);
	free(want);
	return ok;
}

static void
mark_used(struct io_guest *io)
{
	uint32_t i;

	for (i = 0; i < io->f->q.size; i++)
		io->f->q.used->ring[i] = (struct vring_used_elem){MARK, MARK};
}

/*
 * One burst of at most n; checks the packets and the used ring against the
 * model: batched (one entry) or one entry per chain. Returns the count.
 */
static uint16_t
io_burst(struct io_guest *io, uint16_t n, bool batched)
{
	struct vring_used *u = io->f->q.used;
	uint16_t used0 = u->idx, got, i, take;
	struct rte_mbuf *m[1024];

	mark_used(io);
	take = RTE_MIN(n, io->nheads);
	got = vsw_virtq_dequeue_burst(io->f->vq, test_pool, m, n);
	assert_int_equal(got, take);
	for (i = 0; i < got; i++) {
		assert_true(frame_ok(m[i], io->lens[i], io->seeds[i]));
		rte_pktmbuf_free(m[i]);
	}
	assert_int_equal(u->idx, (uint16_t)(used0 + take));
	for (i = 0; i < io->f->q.size; i++) {
		const struct vring_used_elem *e = &u->ring[i];
		uint16_t pos = (uint16_t)((i - used0) & qmask(io));
		bool written = take != 0 && (batched ? pos == 0 : pos < take);

		if (!written) {
			assert_int_equal(e->id, MARK);
			assert_int_equal(e->len, MARK);
			continue;
		}
		assert_int_equal(e->id, io->heads[batched ? take - 1 : pos]);
		assert_int_equal(e->len, 0);
	}
	memmove(io->heads, io->heads + take, (io->nheads - take) * 2);
	memmove(io->lens, io->lens + take, (io->nheads - take) * 4);
	memmove(io->seeds, io->seeds + take, io->nheads - take);
	io->nheads -= take;
	return got;
}

static struct io_guest *
io_new(uint32_t size, uint64_t features)
{
	struct io_guest *io = calloc(1, sizeof(*io));

	assert_non_null(io);
	io->f = fx_new(size, features);
	return io;
}

static void
io_free(struct io_guest *io)
{
	fx_free(io->f);
	free(io);
}

/* Random in-order bursts (chains of 1..4 pieces, a quarter indirect,
 * frames 1..3000 B, bursts 1..32) against the model, many ring laps. */
static void
test_inorder_random(void **state)
{
	struct io_guest *io = io_new(256, F_STD | F_INO);
	uint64_t pkts = 0, bursts = 0;
	uint32_t round;

	(void)state;
	for (round = 0; round < 400; round++) {
		uint32_t k = tl_rand_range(&test_rng, 1, 40), j;

		tg_data_reset(&io->f->g);
		for (j = 0; j < k; j++)
			io_post(io, tl_rand_range(&test_rng, 1, 3000),
				tl_rand_range(&test_rng, 1, 4),
				tl_rand_range(&test_rng, 0, 3) == 0,
				(uint8_t)tl_rand32(&test_rng));
		tg_kick(&io->f->q);
		while (io->nheads != 0) {
			pkts += io_burst(io,
				(uint16_t)tl_rand_range(&test_rng, 1, 32), true);
			bursts++;
		}
	}
	FX_EXPECT(io->f, {S(DEQ_PACKETS), pkts},
		{S(DEQ_BYTES), vsw_virtq_stat(io->f->vq, S(DEQ_BYTES))},
		{S(NOTIFY_SENT), bursts});
	io_free(io);
}

/* The exact end of the ring: used slots 62, 63, 0, 1 and descriptors
 * 63 -> 0 in one batch; one entry at slot 62, idx + 4; the next batch
 * starts at slot 2. */
static void
test_inorder_batch_crosses_ring_end(void **state)
{
	struct io_guest *io = io_new(64, F_STD | F_INO);
	uint32_t i;

	(void)state;
	for (i = 0; i < 62; i++)
		io_post(io, 60, 1, false, (uint8_t)i);
	tg_kick(&io->f->q);
	assert_int_equal(io_burst(io, 31, true), 31);
	assert_int_equal(io_burst(io, 31, true), 31);
	assert_int_equal(io->f->q.used->idx, 62);
	tg_data_reset(&io->f->g);
	assert_int_equal(io_post(io, 100, 1, false, 1), 62);
	assert_int_equal(io_post(io, 200, 2, false, 2), 63); /* 63, 0 */
	assert_int_equal(io_post(io, 300, 1, false, 3), 1);
	assert_int_equal(io_post(io, 400, 3, true, 4), 2);
	tg_kick(&io->f->q);
	assert_int_equal(io_burst(io, 32, true), 4);
	assert_int_equal(io->f->q.used->idx, 66);
	assert_int_equal(io->f->q.used->ring[62].id, 2);
	assert_int_equal(io_post(io, 64, 1, false, 5), 3);
	tg_kick(&io->f->q);
	assert_int_equal(io_burst(io, 32, true), 1);
	assert_int_equal(io->f->q.used->ring[2].id, 3);
	FX_EXPECT(io->f, {S(DEQ_PACKETS), 67},
		{S(DEQ_BYTES), 62 * 60 + 1000 + 64}, {S(NOTIFY_SENT), 4});
	assert_false(vsw_virtq_broken(io->f->vq));
	io_free(io);
}

/* A batch of the ring's size (32 chains, ring full), starting mid-ring:
 * one entry, idx + 32. */
static void
test_inorder_batch_is_ring_size(void **state)
{
	struct io_guest *io = io_new(32, F_STD | F_INO);
	uint32_t i;

	(void)state;
	for (i = 0; i < 5; i++)
		io_post(io, 64, 1, false, (uint8_t)i);
	tg_kick(&io->f->q);
	assert_int_equal(io_burst(io, 32, true), 5);
	for (i = 0; i < 32; i++)
		io_post(io, 64 + i, 1, false, (uint8_t)(7 * i));
	tg_kick(&io->f->q);
	assert_int_equal(io_burst(io, 32, true), 32);
	assert_int_equal(io->f->q.used->idx, 37);
	assert_int_equal(io->f->q.used->ring[5].id, 4); /* 5 + 31 mod 32 */
	FX_EXPECT(io->f, {S(DEQ_PACKETS), 37},
		{S(DEQ_BYTES), 5 * 64 + 32 * 64 + 31 * 16},
		{S(NOTIFY_SENT), 2});
	io_free(io);
}

/* Hostile: IN_ORDER negotiated, heads posted out of ring order (a chain
 * skipped, then one taken back): every chain still dequeues, each gets
 * its own used entry, the burst counts DEQ_INORDER_MISS once; the next
 * in-order burst is batched again. */
static void
test_inorder_hostile_out_of_order(void **state)
{
	struct io_guest *io = io_new(64, F_STD | F_INO);

	(void)state;
	io_post(io, 100, 1, false, 1);  /* head 0 */
	io->next = 2;                    /* skips descriptor 1 */
	io_post(io, 200, 1, false, 2);  /* head 2 */
	io->next = 1;
	io_post(io, 300, 1, false, 3);  /* head 1: backwards */
	io->next = 3;
	tg_kick(&io->f->q);
	assert_int_equal(io_burst(io, 32, false), 3);
	FX_EXPECT(io->f, {S(DEQ_PACKETS), 3}, {S(DEQ_BYTES), 600},
		{S(DEQ_INORDER_MISS), 1}, {S(NOTIFY_SENT), 1});
	/* the same head twice in one burst (a lie the walker allows) */
	io_post(io, 64, 1, false, 4);   /* head 3 */
	io->next = 3;
	io_post(io, 64, 1, false, 4);   /* head 3 again */
	tg_kick(&io->f->q);
	assert_int_equal(io_burst(io, 32, false), 2);
	FX_EXPECT(io->f, {S(DEQ_PACKETS), 2}, {S(DEQ_BYTES), 128},
		{S(DEQ_INORDER_MISS), 1}, {S(NOTIFY_SENT), 1});
	io_post(io, 64, 2, false, 5);   /* heads 4 (4, 5) and 6 */
	io_post(io, 64, 1, false, 6);
	tg_kick(&io->f->q);
	assert_int_equal(io_burst(io, 32, true), 2);
	FX_EXPECT(io->f, {S(DEQ_PACKETS), 2}, {S(DEQ_BYTES), 128},
		{S(NOTIFY_SENT), 1});
	assert_false(vsw_virtq_broken(io->f->vq));
	io_free(io);
}

/* A bad chain inside a batch: dropped and counted, and the burst goes out
 * one entry per chain (the bad chain's descriptor count is unknown), not
 * counted as out of order. */
static void
test_inorder_bad_chain_unbatched(void **state)
{
	struct io_guest *io = io_new(64, F_STD | F_INO);
	struct rte_mbuf *m[8];
	uint16_t bad;
	uint32_t i;

	(void)state;
	io_post(io, 100, 1, false, 1);
	bad = io_post(io, 100, 1, false, 2);
	io->f->q.desc[bad].len = 0;
	io_post(io, 100, 1, false, 3);
	tg_kick(&io->f->q);
	mark_used(io);
	assert_int_equal(vsw_virtq_dequeue_burst(io->f->vq, test_pool, m, 8),
		2);
	assert_true(frame_ok(m[0], 100, 1));
	assert_true(frame_ok(m[1], 100, 3));
	rte_pktmbuf_free(m[0]);
	rte_pktmbuf_free(m[1]);
	assert_int_equal(io->f->q.used->idx, 3);
	for (i = 0; i < 3; i++) {
		assert_int_equal(io->f->q.used->ring[i].id, i);
		assert_int_equal(io->f->q.used->ring[i].len, 0);
	}
	assert_int_equal(io->f->q.used->ring[3].id, MARK);
	FX_EXPECT(io->f, {S(DEQ_PACKETS), 2}, {S(DEQ_BYTES), 200},
		{S(DEQ_DROP_BAD_DESC), 1}, {S(ERR_DESC_ZERO_LEN), 1},
		{S(NOTIFY_SENT), 1});
	io_free(io);
}

/* Without IN_ORDER nothing changes: the same ring-order posting gets one
 * used entry per chain. */
static void
test_no_inorder_one_entry_per_chain(void **state)
{
	struct io_guest *io = io_new(64, F_STD);
	uint32_t i;

	(void)state;
	for (i = 0; i < 20; i++)
		io_post(io, 64 + i, 1 + i % 3, i % 4 == 0, (uint8_t)i);
	tg_kick(&io->f->q);
	assert_int_equal(io_burst(io, 32, false), 20);
	io_free(io);
}

/* RX (enqueue) with IN_ORDER keeps one used entry per chain: each has its
 * own length. */
static void
test_inorder_rx_one_entry_per_chain(void **state)
{
	struct fx *f = fx_new(64, F_STD | F_INO);
	const uint32_t lens[1] = {2048};
	struct rte_mbuf *m[3];
	uint8_t out[2048];
	uint16_t nb, i;

	(void)state;
	for (i = 0; i < 3; i++) {
		assert_true(tg_rx_post(&f->q, lens, 1, false) >= 0);
		m[i] = fx_mbuf(100u + 100u * i, (uint8_t)i);
	}
	tg_kick(&f->q);
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, m, 3), 3);
	assert_int_equal(f->q.used->idx, 3);
	for (i = 0; i < 3; i++) {
		assert_int_equal(f->q.used->ring[i].len, f->q.hdr_len + 100u +
			100u * i);
		assert_int_equal(tg_rx_recv(&f->q, out, sizeof(out), &nb),
			100 + 100 * i);
		rte_pktmbuf_free(m[i]);
	}
	FX_EXPECT(f, {S(ENQ_PACKETS), 3}, {S(ENQ_BYTES), 600},
		{S(NOTIFY_SENT), 1});
	fx_free(f);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_pool_setup, fx_pool_teardown)

int
test_virtq_inorder_run(void)
{
	const struct CMUnitTest tests[] = {
		T(test_inorder_random),
		T(test_inorder_batch_crosses_ring_end),
		T(test_inorder_batch_is_ring_size),
		T(test_inorder_hostile_out_of_order),
		T(test_inorder_bad_chain_unbatched),
		T(test_no_inorder_one_entry_per_chain),
		T(test_inorder_rx_one_entry_per_chain),
	};

	return cmocka_run_group_tests_name("virtq_inorder", tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hostile-guest cases of the virtqueue data path (the numbered list is at
 * the top of test_virtq.c). The guest writes descriptors by hand at the top
 * of the table (the software guest's own allocator hands out low indices),
 * so a queue keeps working after a dropped chain and the test shows it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mempool.h>

#include "test_virtq.h"

#define QSZ 256u
#define HI (QSZ - 1) /* first hand-written descriptor */

/* A guest buffer holding a zero header and len bytes of data. */
static uint64_t
tx_buf(struct fx *f, uint32_t len)
{
	uint64_t gpa = tg_alloc_data(&f->g, f->q.hdr_len + len, 1);
	uint8_t *p = tg_host(&f->g, gpa);

	memset(p, 0, f->q.hdr_len);
	memset(p + f->q.hdr_len, 0x3c, len);
	return gpa;
}

static void
post_raw(struct fx *f, uint16_t head)
{
	tg_avail_push_raw(&f->q, head);
	tg_kick(&f->q);
}

/* A normal packet still goes through (the queue was not stopped). */
static void
tx_still_works(struct fx *f)
{
	static const uint8_t frame[64];
	struct rte_mbuf *m;
	uint16_t id;
	uint32_t len, piece = 12 + sizeof(frame);
	int head = tg_tx_post(&f->q, frame, sizeof(frame), &piece, 1, false);

	tg_kick(&f->q);
	assert_int_equal(vsw_virtq_dequeue_burst(f->vq, test_pool, &m, 1), 1);
	assert_true(tl_mbuf_equal(m, frame, sizeof(frame)));
	rte_pktmbuf_free(m);
	assert_int_equal(tg_used_pop(&f->q, &id, &len), 1);
	assert_int_equal(id, head);
	FX_EXPECT(f, {S(DEQ_PACKETS), 1}, {S(DEQ_BYTES), sizeof(frame)},
		{S(NOTIFY_SENT), 1});
}

/* Dequeue drops the chain at head (fx_tx_drop), and nothing else moved:
 * guest memory untouched, the queue still works. */
static void
tx_expect_drop(struct fx *f, uint16_t head, enum vsw_virtq_stat drop,
	enum vsw_virtq_stat err)
{
	fx_tx_drop(f, head, drop, err);
	assert_true(tg_untouched(&f->g));
	tx_still_works(f);
}

#define NOERR VSW_VIRTQ_STAT__MAX

/* 1 */
static void
test_head_out_of_range(void **state)
{
	struct fx *f = fx_new(QSZ, F_STD);
	struct rte_mbuf *m[2] = {fx_mbuf(60, 1), fx_mbuf(60, 2)};
	struct rte_mbuf *out[2];

	(void)state;
	post_raw(f, QSZ + 44);
	/* its own output array: passing m would lose m's mbufs and free the
	 * heads dequeue took (and put back) a second time below */
	assert_int_equal(vsw_virtq_dequeue_burst(f->vq, test_pool, out, 2), 0);
	FX_EXPECT(f, {S(ERR_DESC_INDEX), 1}, {S(ERR_RING_BROKEN), 1});
	assert_true(vsw_virtq_broken(f->vq));
	assert_int_equal(f->q.used->idx, 0);
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, m, 2), 0);
	FX_EXPECT(f, {S(ENQ_DROP_NOT_READY), 2});
	rte_pktmbuf_free(m[0]);
	rte_pktmbuf_free(m[1]);
	fx_free(f);
}

/* 2, 3, 4, 6, 7, 9, 10: one bad descriptor each */
static void
test_bad_descs(void **state)
{
	struct fx *f = fx_new(QSZ, F_STD);
	uint64_t b = tx_buf(f, 100), gap = TG_RING_GPA + TG_RING_SIZE + 4096;

	(void)state;
	fx_set_desc(f, HI, b, 20, VRING_DESC_F_NEXT, 999);
	tx_expect_drop(f, HI, S(DEQ_DROP_BAD_DESC), S(ERR_DESC_INDEX));
	fx_set_desc(f, HI, b, 8, VRING_DESC_F_NEXT, HI - 1);
	fx_set_desc(f, HI - 1, b + 8, 8, VRING_DESC_F_NEXT, HI);
	tx_expect_drop(f, HI, S(DEQ_DROP_BAD_DESC), S(ERR_DESC_LOOP));
	fx_set_desc(f, HI, b, 8, VRING_DESC_F_NEXT, HI); /* self loop */
	tx_expect_drop(f, HI, S(DEQ_DROP_BAD_DESC), S(ERR_DESC_LOOP));
	fx_set_desc(f, HI, gap, 112, 0, 0);
	tx_expect_drop(f, HI, S(DEQ_DROP_BAD_DESC), S(ERR_DESC_ADDR));
	fx_set_desc(f, HI, UINT64_MAX - 7, 64, 0, 0);
	tx_expect_drop(f, HI, S(DEQ_DROP_BAD_DESC), S(ERR_DESC_ADDR));
	fx_set_desc(f, HI, b, 12, VRING_DESC_F_NEXT, HI - 1);
	fx_set_desc(f, HI - 1, b + 12, 0, 0, 0);
	tx_expect_drop(f, HI, S(DEQ_DROP_BAD_DESC), S(ERR_DESC_ZERO_LEN));
	fx_set_desc(f, HI, b, 12, VRING_DESC_F_NEXT, HI - 1);
	fx_set_desc(f, HI - 1, b + 12, 100, VRING_DESC_F_WRITE, 0);
	tx_expect_drop(f, HI, S(DEQ_DROP_BAD_DESC), S(ERR_DESC_WRONG_DIR));
	fx_free(f);
}

/* An indirect table of n entries with the given descriptors. */
static uint64_t
ind_table(struct fx *f, const struct vring_desc *d, uint32_t n)
{
	uint64_t t = tg_alloc_data(&f->g, 16ull * n, 16);

	tg_write(&f->g, t, d, 16ull * n);
	return t;
}

/* 4, 12-17: indirect tables */
static void
test_bad_indirect(void **state)
{
	struct fx *f = fx_new(QSZ, F_STD);
	uint64_t b = tx_buf(f, 100), t;
	struct vring_desc d[4] = {
		{b, 12, VRING_DESC_F_NEXT, 1},
		{b + 12, 50, VRING_DESC_F_NEXT, 2},
		{b + 62, 50, VRING_DESC_F_NEXT, 1}, /* back to 1 */
		{0, 0, 0, 0},
	};

	(void)state;
	t = ind_table(f, d, 4);
	fx_set_desc(f, HI, t, 64, VRING_DESC_F_INDIRECT, 0);
	tx_expect_drop(f, HI, S(DEQ_DROP_BAD_DESC), S(ERR_DESC_LOOP));
	fx_set_desc(f, HI, t, 24, VRING_DESC_F_INDIRECT, 0);
	tx_expect_drop(f, HI, S(DEQ_DROP_BAD_DESC), S(ERR_INDIRECT_LEN));
	t = tg_alloc_data(&f->g, 16 * (QSZ + 1), 16);
	fx_set_desc(f, HI, t, 16 * (QSZ + 1), VRING_DESC_F_INDIRECT, 0);
	tx_expect_drop(f, HI, S(DEQ_DROP_BAD_DESC), S(ERR_INDIRECT_LEN));
	fx_set_desc(f, HI, t, 0, VRING_DESC_F_INDIRECT, 0);
	tx_expect_drop(f, HI, S(DEQ_DROP_BAD_DESC), S(ERR_INDIRECT_LEN));
	d[2].flags = 0;
	d[3] = (struct vring_desc){t, 32, VRING_DESC_F_INDIRECT, 0};
	d[0].next = 3; /* entry 3 is itself indirect */
	t = ind_table(f, d, 4);
	fx_set_desc(f, HI, t, 64, VRING_DESC_F_INDIRECT, 0);
	tx_expect_drop(f, HI, S(DEQ_DROP_BAD_DESC), S(ERR_INDIRECT_NESTED));
	d[0].next = 1;
	t = ind_table(f, d, 3);
	fx_set_desc(f, HI, t, 48, VRING_DESC_F_INDIRECT | VRING_DESC_F_NEXT,
		HI - 1);
	fx_set_desc(f, HI - 1, b, 12, 0, 0);
	tx_expect_drop(f, HI, S(DEQ_DROP_BAD_DESC), S(ERR_INDIRECT_NEXT));
	fx_set_desc(f, HI, TG_FAR_GPA - 64, 48, VRING_DESC_F_INDIRECT, 0);
	tx_expect_drop(f, HI, S(DEQ_DROP_BAD_DESC), S(ERR_DESC_ADDR));
	/* and the good table works */
	fx_set_desc(f, HI, t, 48, VRING_DESC_F_INDIRECT, 0);
	post_raw(f, HI);
	{
		struct rte_mbuf *m;
		uint16_t id;
		uint32_t len;

		assert_int_equal(vsw_virtq_dequeue_burst(f->vq, test_pool, &m,
					 1),
			1);
		assert_int_equal(m->pkt_len, 100);
		rte_pktmbuf_free(m);
		assert_int_equal(tg_used_pop(&f->q, &id, &len), 1);
		FX_EXPECT(f, {S(DEQ_PACKETS), 1}, {S(DEQ_BYTES), 100},
			{S(NOTIFY_SENT), 1});
	}
	fx_free(f);
}

/* 5: a chain exactly as long as the ring is fine */
static void
test_chain_ring_size(void **state)
{
	struct fx *f = fx_new(8, F_STD);
	uint64_t b = tx_buf(f, 8 * 10 - 12);
	struct rte_mbuf *m;
	uint16_t i, id;
	uint32_t len;

	(void)state;
	for (i = 0; i < 8; i++)
		fx_set_desc(f, i, b + 10 * i, 10, i < 7 ? VRING_DESC_F_NEXT : 0,
			(uint16_t)(i + 1));
	post_raw(f, 0);
	assert_int_equal(vsw_virtq_dequeue_burst(f->vq, test_pool, &m, 1), 1);
	assert_int_equal(m->pkt_len, 68);
	rte_pktmbuf_free(m);
	assert_int_equal(tg_used_pop(&f->q, &id, &len), 1);
	FX_EXPECT(f, {S(DEQ_PACKETS), 1}, {S(DEQ_BYTES), 68},
		{S(NOTIFY_SENT), 1});
	/* one more (loop back to 0) is a loop */
	f->q.desc[7].flags = VRING_DESC_F_NEXT;
	f->q.desc[7].next = 0;
	post_raw(f, 0);
	assert_int_equal(vsw_virtq_dequeue_burst(f->vq, test_pool, &m, 1), 0);
	FX_EXPECT(f, {S(DEQ_DROP_BAD_DESC), 1}, {S(ERR_DESC_LOOP), 1},
		{S(NOTIFY_SENT), 1});
	fx_free(f);
}

/* 18 */
static void
test_avail_idx_jump(void **state)
{
	struct fx *f = fx_new(QSZ, F_STD);
	struct rte_mbuf *m;

	(void)state;
	f->q.avail->idx = QSZ + 1;
	assert_int_equal(vsw_virtq_dequeue_burst(f->vq, test_pool, &m, 1), 0);
	FX_EXPECT(f, {S(ERR_AVAIL_IDX), 1}, {S(ERR_RING_BROKEN), 1});
	assert_true(vsw_virtq_broken(f->vq));
	f->q.avail->idx = 1; /* too late: stopped until set up again */
	assert_int_equal(vsw_virtq_dequeue_burst(f->vq, test_pool, &m, 1), 0);
	FX_NOTHING(f);
	assert_int_equal(f->q.used->idx, 0);
	fx_free(f);
}

/* 19, 20, 21: header and size limits on TX */
static void
test_tx_header_and_size(void **state)
{
	struct fx *f = fx_new(QSZ, F_STD);
	uint8_t frame[1001];
	uint32_t pieces[14], i;
	struct rte_mbuf *m;
	uint16_t id;
	uint32_t len;
	uint64_t b = tx_buf(f, 0);

	(void)state;
	fx_set_desc(f, HI, b, 8, 0, 0);
	tx_expect_drop(f, HI, S(DEQ_DROP_SHORT_HDR), NOERR);
	fx_set_desc(f, HI, b, 12, 0, 0); /* header only: no frame */
	tx_expect_drop(f, HI, S(DEQ_DROP_SHORT_HDR), NOERR);
	for (i = 0; i < sizeof(frame); i++)
		frame[i] = (uint8_t)(i * 7);
	for (i = 0; i < 12; i++)
		pieces[i] = 1;
	pieces[12] = 1;
	pieces[13] = 999;
	for (i = 0; i < 2; i++) {
		tg_tx_post(&f->q, frame, 1000, pieces, 14, i == 1);
		tg_kick(&f->q);
		assert_int_equal(vsw_virtq_dequeue_burst(f->vq, test_pool, &m,
					 1),
			1);
		assert_true(tl_mbuf_equal(m, frame, 1000));
		rte_pktmbuf_free(m);
		assert_int_equal(tg_used_pop(&f->q, &id, &len), 1);
	}
	FX_EXPECT(f, {S(DEQ_PACKETS), 2}, {S(DEQ_BYTES), 2000},
		{S(NOTIFY_SENT), 2});
	f->q.cfg.max_pkt_len = 12 + 1000;
	fx_resume(f);
	pieces[0] = 12 + 1001;
	tg_tx_post(&f->q, frame, 1001, pieces, 1, false);
	tg_kick(&f->q);
	assert_int_equal(vsw_virtq_dequeue_burst(f->vq, test_pool, &m, 1), 0);
	assert_int_equal(tg_used_pop(&f->q, &id, &len), 1);
	assert_int_equal(len, 0);
	FX_EXPECT(f, {S(DEQ_DROP_TOO_LARGE), 1}, {S(NOTIFY_SENT), 1});
	fx_free(f);
}

/* 25: indirect tables straddling regions, or unaligned: read slowly */
static void
test_indirect_straddle(void **state)
{
	struct fx *f = fx_new(QSZ, F_STD);
	uint64_t b = tx_buf(f, 100), t;
	struct vring_desc d[2] = {
		{b, 40, VRING_DESC_F_NEXT, 1},
		{b + 40, 72, 0, 0},
	};
	struct rte_mbuf *m;
	uint16_t id;
	uint32_t len, i;

	(void)state;
	tg_data_near_boundary(&f->g, 16);
	for (i = 0; i < 2; i++) {
		t = tg_alloc_data(&f->g, 33, 1) + i; /* i == 1: unaligned */
		tg_write(&f->g, t, d, sizeof(d));
		fx_set_desc(f, HI, t, 32, VRING_DESC_F_INDIRECT, 0);
		post_raw(f, HI);
		assert_int_equal(vsw_virtq_dequeue_burst(f->vq, test_pool, &m,
					 1),
			1);
		assert_int_equal(m->pkt_len, 100);
		rte_pktmbuf_free(m);
		assert_int_equal(tg_used_pop(&f->q, &id, &len), 1);
	}
	FX_EXPECT(f, {S(DEQ_PACKETS), 2}, {S(DEQ_BYTES), 200},
		{S(NOTIFY_SENT), 2});
	fx_free(f);
}

/* 26: the pool runs dry in the middle of a chain */
static void
test_no_mbuf(void **state)
{
	struct rte_mempool *tiny = rte_pktmbuf_pool_create("tiny", 3, 0, 0,
		256 + RTE_PKTMBUF_HEADROOM, (int)rte_socket_id());
	struct fx *f = fx_new(QSZ, F_STD);
	uint64_t b = tx_buf(f, 2000);
	struct rte_mbuf *m[3];
	uint16_t id;
	uint32_t len;

	(void)state;
	assert_non_null(tiny);
	fx_set_desc(f, HI, b, 12 + 2000, 0, 0);
	post_raw(f, HI);
	assert_int_equal(vsw_virtq_dequeue_burst(f->vq, tiny, m, 1), 0);
	assert_int_equal(tg_used_pop(&f->q, &id, &len), 1);
	assert_int_equal(len, 0);
	FX_EXPECT(f, {S(DEQ_DROP_NO_MBUF), 1}, {S(NOTIFY_SENT), 1});
	assert_int_equal(rte_mempool_in_use_count(tiny), 0);
	/* no head mbuf at all: the chain stays in the ring, nothing counted */
	assert_int_equal(rte_pktmbuf_alloc_bulk(tiny, m, 3), 0);
	post_raw(f, HI);
	assert_int_equal(vsw_virtq_dequeue_burst(f->vq, tiny, m, 1), 0);
	FX_NOTHING(f);
	assert_int_equal(vsw_virtq_last_avail_idx(f->vq), 1);
	rte_pktmbuf_free_bulk(m, 3);
	rte_mempool_free(tiny);
	fx_free(f);
}

/* create refuses the config: NULL, and rte_errno says why */
static void
create_fails(const struct vsw_virtq_config *c, int err)
{
	rte_errno = 0;
	assert_null(vsw_virtq_create(c));
	assert_int_equal(rte_errno, err);
}

/* 27 */
static void
test_init_errors(void **state)
{
	struct fx *f = fx_new(QSZ, F_STD);
	struct vsw_virtq_config c = f->q.cfg;
	struct vsw_virtq *vq;

	(void)state;
	c.size = 0;
	create_fails(&c, EINVAL);
	c.size = 3;
	create_fails(&c, EINVAL);
	c.size = 65536;
	create_fails(&c, EINVAL);
	c = f->q.cfg;
	c.mem = NULL;
	create_fails(&c, EINVAL);
	create_fails(NULL, EINVAL);
	c = f->q.cfg;
	c.desc_gpa = TG_RING_GPA + TG_RING_SIZE - 16; /* runs into the gap */
	create_fails(&c, EFAULT);
	c = f->q.cfg;
	c.used_gpa += 2; /* misaligned */
	create_fails(&c, EFAULT);
	/* the largest ring fits (its shadow used ring is sized to it) */
	c = f->q.cfg;
	c.size = VSW_VIRTQ_SIZE_MAX;
	c.desc_gpa = TG_RING_GPA;
	c.avail_gpa = TG_RING_GPA + 16ull * VSW_VIRTQ_SIZE_MAX;
	c.used_gpa = TG_RING_GPA + 18ull * VSW_VIRTQ_SIZE_MAX + 4096;
	vq = vsw_virtq_create(&c);
	assert_non_null(vq);
	assert_false(vsw_virtq_broken(vq));
	assert_int_equal(vsw_virtq_last_avail_idx(vq), c.last_avail_idx);
	vsw_virtq_destroy(vq);
	vsw_virtq_destroy(NULL);
	fx_free(f);
}

/* --- random garbage rings ------------------------------------------------ */

#define POOL_LEN 65536u

/* A random guest address: mostly inside the buffer pool, sometimes not. */
static void
rand_range(uint64_t pool, uint64_t *addr, uint32_t *len)
{
	uint32_t off = tl_rand_range(&test_rng, 0, POOL_LEN - 1);

	switch (tl_rand_range(&test_rng, 0, 15)) {
	case 0:
		*addr = TG_RING_GPA + TG_RING_SIZE + off; /* gap */
		*len = tl_rand_range(&test_rng, 1, 4096);
		return;
	case 1:
		*addr = UINT64_MAX - tl_rand_range(&test_rng, 0, 64);
		*len = tl_rand_range(&test_rng, 1, 4096);
		return;
	case 2:
		*addr = pool + off;
		*len = 0;
		return;
	default:
		*addr = pool + off;
		*len = tl_rand_range(&test_rng, 1, POOL_LEN - off);
		if (*len > 2048 && tl_rand_range(&test_rng, 0, 3) != 0)
			*len = tl_rand_range(&test_rng, 1, 2048);
	}
}

static void
rand_desc(struct vring_desc *d, uint64_t pool, uint32_t n, uint64_t tables)
{
	uint64_t a;
	uint32_t l;

	rand_range(pool, &a, &l);
	d->addr = a;
	d->len = l;
	d->flags = (uint16_t)(tl_rand(&test_rng) & 7);
	if (d->flags & VRING_DESC_F_INDIRECT) { /* point at a random table */
		d->addr = tables + 16ull * tl_rand_range(&test_rng, 0, 63);
		d->len = 16 * tl_rand_range(&test_rng, 0, 20) +
			(tl_rand_range(&test_rng, 0, 7) == 0 ? 8 : 0);
	}
	d->next = (uint16_t)(tl_rand_range(&test_rng, 0, 15) == 0 ?
			tl_rand(&test_rng) : tl_rand_range(&test_rng, 0, n - 1));
}

/* One garbage queue: bursts both ways must stay in bounds and add up. */
static void
garbage_round(uint32_t size, uint64_t features)
{
	struct fx *f = fx_new(size, features);
	uint64_t pool = tg_alloc_data(&f->g, POOL_LEN, 1);
	uint64_t tables = tg_alloc_data(&f->g, 16 * 84, 16);
	struct rte_mbuf *m[8], *out[8];
	uint64_t offered = 0, taken = 0, enq_drops = 0, deq_drops = 0, why = 0;
	struct vring_desc d;
	uint32_t i;

	for (i = 0; i < size; i++)
		rand_desc(&f->q.desc[i], pool, size, tables);
	for (i = 0; i < 84; i++) {
		rand_desc(&d, pool, 20, tables);
		tg_write(&f->g, tables + 16ull * i, &d, sizeof(d));
	}
	for (i = 0; i < size; i++)
		f->q.avail->ring[i] = (uint16_t)(tl_rand_range(&test_rng, 0,
			31) == 0 ? tl_rand(&test_rng) :
			tl_rand_range(&test_rng, 0, size - 1));
	f->q.avail->idx = (uint16_t)(tl_rand_range(&test_rng, 0, 20) == 0 ?
			tl_rand(&test_rng) : tl_rand_range(&test_rng, 0, size));
	for (i = 0; i < 8; i++)
		m[i] = fx_mbuf(tl_rand_range(&test_rng, 1, 2000), (uint8_t)i);
	for (i = 0; i < 6; i++) {
		uint16_t burst = (uint16_t)tl_rand_range(&test_rng, 1, 8);
		uint16_t used0 = f->q.used->idx, k;

		if (i & 1) {
			offered += burst;
			vsw_virtq_enqueue_burst(f->vq, m, burst);
			continue;
		}
		k = vsw_virtq_dequeue_burst(f->vq, test_pool, out, burst);
		rte_pktmbuf_free_bulk(out, k);
		taken += (uint16_t)(f->q.used->idx - used0);
	}
	for (i = 0; i < VSW_VIRTQ_STAT__MAX; i++) {
		if (strncmp(vsw_virtq_stat_name(i), "enq_drop_", 9) == 0)
			enq_drops += vsw_virtq_stat(f->vq, i);
		if (strncmp(vsw_virtq_stat_name(i), "deq_drop_", 9) == 0)
			deq_drops += vsw_virtq_stat(f->vq, i);
		if (strncmp(vsw_virtq_stat_name(i), "err_desc_", 9) == 0 ||
			strncmp(vsw_virtq_stat_name(i), "err_indirect_", 13) == 0)
			why += vsw_virtq_stat(f->vq, i);
	}
	/* one ERR_DESC_* / ERR_INDIRECT_* per bad-descriptor drop, plus one
	 * ERR_DESC_INDEX for a bad avail head (which broke the ring) */
	assert_int_equal(why, vsw_virtq_stat(f->vq, S(ENQ_DROP_BAD_DESC)) +
			vsw_virtq_stat(f->vq, S(DEQ_DROP_BAD_DESC)) +
			vsw_virtq_stat(f->vq, S(ERR_RING_BROKEN)) -
			vsw_virtq_stat(f->vq, S(ERR_AVAIL_IDX)));
	/* every packet offered and every chain taken, counted exactly once */
	assert_int_equal(vsw_virtq_stat(f->vq, S(ENQ_PACKETS)) + enq_drops,
		offered);
	assert_int_equal(vsw_virtq_stat(f->vq, S(DEQ_PACKETS)) + deq_drops,
		taken);
	assert_true(tg_untouched(&f->g));
	for (i = 0; i < 8; i++)
		rte_pktmbuf_free(m[i]);
	fx_free(f);
}

static void
test_garbage_rings(void **state)
{
	static const uint64_t feats[] = {F_STD, F_STD | F_EVT, F_V1 | F_IND,
		F_IND};
	uint32_t r;

	(void)state;
	for (r = 0; r < 300; r++)
		garbage_round(r % 3 == 0 ? 16 : 64, feats[r % 4]);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_pool_setup, fx_pool_teardown)

int test_virtq_hostile_rx_run(void);
int test_virtq_limits_run(void);
int test_virtq_budget_run(void);

int
test_virtq_hostile_run(void)
{
	const struct CMUnitTest tests[] = {
		T(test_head_out_of_range),
		T(test_bad_descs),
		T(test_bad_indirect),
		T(test_chain_ring_size),
		T(test_avail_idx_jump),
		T(test_tx_header_and_size),
		T(test_indirect_straddle),
		T(test_no_mbuf),
		T(test_init_errors),
		T(test_garbage_rings),
	};

	return cmocka_run_group_tests_name("virtq_hostile_tx", tests, NULL,
		       NULL) |
		test_virtq_hostile_rx_run() | test_virtq_limits_run() |
		test_virtq_budget_run();
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Exact limits of every bound on guest input (issue 11, gap 2): for each
 * comparison against a guest-controlled value in vhost/virtq/, the last
 * value that must pass and the first that must fail, so an off-by-one in
 * either direction fails a test. Each case names the check it pins; the
 * mutants in test/mutants/virtq-*.patch show that it does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>

#include "test_virtq.h"

#define QSZ 256u
#define HI (QSZ - 1)
#define WR VRING_DESC_F_WRITE
#define NX VRING_DESC_F_NEXT
#define NOERR VSW_VIRTQ_STAT__MAX

/* ends of regions followed by a gap, and a boundary between two regions */
#define DATA_END (TG_DATA_GPA + TG_DATA_REGIONS * TG_DATA_REGION)
#define DATA_SEAM (TG_DATA_GPA + TG_DATA_REGION)
#define FAR_END (TG_FAR_GPA + TG_FAR_SIZE)
#define RING_END (TG_RING_GPA + TG_RING_SIZE)

static void
post_raw(struct fx *f, uint16_t head)
{
	tg_avail_push_raw(&f->q, head);
	tg_kick(&f->q);
}

/* Fills [gpa, gpa+len) with a zero header and then bytes from seed. */
static void
tx_fill(struct fx *f, uint64_t gpa, uint32_t len, uint8_t seed)
{
	uint32_t i;

	for (i = 0; i < len; i++) {
		uint8_t b = i < f->q.hdr_len ? 0 : (uint8_t)(seed + i * 7);

		tg_write(&f->g, gpa + i, &b, 1);
	}
}

/* The chain at head dequeues as one packet: the frame seed wrote. */
static void
tx_ok(struct fx *f, uint16_t head, uint32_t chain_len, uint8_t seed)
{
	uint32_t flen = chain_len - f->q.hdr_len, i;
	uint8_t *want = malloc(flen);
	struct rte_mbuf *m;
	uint16_t id;
	uint32_t len;

	assert_non_null(want);
	for (i = 0; i < flen; i++)
		want[i] = (uint8_t)(seed + (i + f->q.hdr_len) * 7);
	post_raw(f, head);
	assert_int_equal(vsw_virtq_dequeue_burst(f->vq, test_pool, &m, 1), 1);
	assert_true(tl_mbuf_equal(m, want, flen));
	rte_pktmbuf_free(m);
	free(want);
	assert_int_equal(tg_used_pop(&f->q, &id, &len), 1);
	assert_int_equal(id, head);
	FX_EXPECT(f, {S(DEQ_PACKETS), 1}, {S(DEQ_BYTES), flen},
		{S(NOTIFY_SENT), 1});
}

#define tx_drop fx_tx_drop

/* virtq_walk_load: idx >= w->n for `next` in the ring (n = ring size) */
static void
test_limit_next_ring(void **state)
{
	struct fx *f = fx_new(QSZ, F_STD);
	uint64_t b = tg_alloc_data(&f->g, 200, 1);

	(void)state;
	tx_fill(f, b, 200, 1);
	fx_set_desc(f, HI - 1, b, 100, NX, QSZ - 1);
	fx_set_desc(f, HI, b + 100, 100, 0, 0);
	tx_ok(f, HI - 1, 200, 1);
	fx_set_desc(f, HI - 1, b, 100, NX, QSZ);
	tx_drop(f, HI - 1, S(DEQ_DROP_BAD_DESC), S(ERR_DESC_INDEX));
	fx_free(f);
}

/* the avail head: head >= size breaks the ring, size - 1 is a chain */
static void
test_limit_head(void **state)
{
	struct fx *f = fx_new(QSZ, F_STD);
	uint64_t b = tg_alloc_data(&f->g, 100, 1);
	struct rte_mbuf *m[2] = {NULL, NULL};
	uint32_t lens[1] = {2048};

	(void)state;
	tx_fill(f, b, 100, 2);
	fx_set_desc(f, HI, b, 100, 0, 0);
	tx_ok(f, HI, 100, 2);
	post_raw(f, QSZ);
	assert_int_equal(vsw_virtq_dequeue_burst(f->vq, test_pool, m, 2), 0);
	FX_EXPECT(f, {S(ERR_DESC_INDEX), 1}, {S(ERR_RING_BROKEN), 1});
	assert_true(vsw_virtq_broken(f->vq));
	fx_free(f);
	/* and on RX */
	f = fx_new(QSZ, F_STD);
	assert_true(tg_rx_post(&f->q, lens, 1, false) >= 0);
	tg_avail_push_raw(&f->q, QSZ);
	tg_kick(&f->q);
	m[0] = fx_mbuf(100, 3);
	m[1] = fx_mbuf(100, 4);
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, m, 2), 1);
	FX_EXPECT(f, {S(ENQ_PACKETS), 1}, {S(ENQ_BYTES), 100},
		{S(ERR_DESC_INDEX), 1}, {S(ERR_RING_BROKEN), 1},
		{S(ENQ_DROP_NOT_READY), 1}, {S(NOTIFY_SENT), 1});
	assert_true(vsw_virtq_broken(f->vq));
	rte_pktmbuf_free(m[0]);
	rte_pktmbuf_free(m[1]);
	fx_free(f);
}

/* ++w->count > w->n: a chain of ring-size descriptors passes; the
 * (size + 1)-th is a loop even when the chain would end right there (RX:
 * the packet fits; TX: the limit is reached) */
static void
test_limit_chain_loop(void **state)
{
	struct fx *f = fx_new(8, F_STD);
	uint64_t b = tg_alloc_data(&f->g, 80, 1);
	struct rte_mbuf *m;
	uint16_t i, id;
	uint32_t len;

	(void)state;
	for (i = 0; i < 8; i++) /* 0 -> 1 -> ... -> 7 -> 0 */
		fx_set_desc(f, i, b + 10 * i, 10, WR | NX,
			(uint16_t)((i + 1) % 8));
	m = fx_mbuf(80 - 12, 17); /* 8 descriptors exactly: still a loop */
	post_raw(f, 0);
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, &m, 1), 1);
	assert_int_equal(tg_used_pop(&f->q, &id, &len), 1);
	assert_int_equal(len, 80);
	FX_EXPECT(f, {S(ENQ_PACKETS), 1}, {S(ENQ_BYTES), 68},
		{S(NOTIFY_SENT), 1});
	rte_pktmbuf_free(m);
	m = fx_mbuf(80 - 12 + 1, 18); /* needs a 9th */
	post_raw(f, 0);
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, &m, 1), 0);
	assert_int_equal(tg_used_pop(&f->q, &id, &len), 1);
	assert_int_equal(len, 0);
	FX_EXPECT(f, {S(ENQ_DROP_BAD_DESC), 1}, {S(ERR_DESC_LOOP), 1},
		{S(NOTIFY_SENT), 1});
	rte_pktmbuf_free(m);
	fx_free(f);
	/* TX: 8 x 10 bytes fit max_pkt_len = 80; the 9th is the loop, not
	 * TOO_LARGE */
	f = fx_new(8, F_STD);
	b = tg_alloc_data(&f->g, 80, 1);
	f->q.cfg.max_pkt_len = 80;
	fx_reinit(f);
	tx_fill(f, b, 80, 19);
	for (i = 0; i < 8; i++)
		fx_set_desc(f, i, b + 10 * i, 10, i < 7 ? NX : 0,
			(uint16_t)(i + 1));
	tx_ok(f, 0, 80, 19);
	f->q.desc[7].flags = NX;
	f->q.desc[7].next = 0;
	tx_drop(f, 0, S(DEQ_DROP_BAD_DESC), S(ERR_DESC_LOOP));
	fx_free(f);
}

/* An indirect table of n entries in region 0, plus one good entry after
 * it (what an index of n would read if it were accepted). */
static uint64_t
ind_table(struct fx *f, const struct vring_desc *d, uint32_t n,
	const struct vring_desc *after)
{
	uint64_t t = tg_alloc_ring(&f->g, 16ull * (n + 1), 16);

	tg_write(&f->g, t, d, 16ull * n);
	tg_write(&f->g, t + 16ull * n, after, 16);
	return t;
}

/* idx >= w->n inside an indirect table (n = table length), the loop
 * bound there (chain = table length passes, one more loops) */
static void
test_limit_indirect_index(void **state)
{
	struct fx *f = fx_new(QSZ, F_STD);
	uint64_t b = tg_alloc_data(&f->g, 400, 1), t;
	struct vring_desc d[4] = {
		{b, 100, NX, 1},
		{b + 100, 100, NX, 2},
		{b + 200, 100, NX, 3},
		{b + 300, 100, 0, 0},
	};
	struct vring_desc good = {b + 300, 100, 0, 0};

	(void)state;
	tx_fill(f, b, 400, 5);
	t = ind_table(f, d, 4, &good);
	fx_set_desc(f, HI, t, 64, VRING_DESC_F_INDIRECT, 0);
	tx_ok(f, HI, 400, 5); /* 4 entries, next = 3 = length - 1 */
	d[2].next = 4;        /* = length: the entry after the table */
	t = ind_table(f, d, 4, &good);
	fx_set_desc(f, HI, t, 64, VRING_DESC_F_INDIRECT, 0);
	tx_drop(f, HI, S(DEQ_DROP_BAD_DESC), S(ERR_DESC_INDEX));
	d[2].next = 3;
	d[3] = (struct vring_desc){b + 300, 100, NX, 0}; /* 5th: a loop */
	t = ind_table(f, d, 4, &good);
	fx_set_desc(f, HI, t, 64, VRING_DESC_F_INDIRECT, 0);
	tx_drop(f, HI, S(DEQ_DROP_BAD_DESC), S(ERR_DESC_LOOP));
	fx_free(f);
}

/* walk_enter_indirect: len 0, not a multiple of 16, more than size entries */
static void
test_limit_indirect_len(void **state)
{
	struct fx *f = fx_new(QSZ, F_STD);
	uint64_t b = tg_alloc_data(&f->g, 400, 1), t;
	struct vring_desc *big = calloc(QSZ + 1, sizeof(*big));
	uint32_t i;

	(void)state;
	assert_non_null(big);
	tx_fill(f, b, 400, 6);
	/* one entry, exactly 16 bytes */
	big[0] = (struct vring_desc){b, 400, 0, 0};
	t = ind_table(f, big, 1, &big[0]);
	fx_set_desc(f, HI, t, 16, VRING_DESC_F_INDIRECT, 0);
	tx_ok(f, HI, 400, 6);
	for (i = 1; i < 16; i++) { /* 17..31: not a multiple */
		fx_set_desc(f, HI, t, 16 + i, VRING_DESC_F_INDIRECT, 0);
		tx_drop(f, HI, S(DEQ_DROP_BAD_DESC), S(ERR_INDIRECT_LEN));
	}
	fx_set_desc(f, HI, t, 15, VRING_DESC_F_INDIRECT, 0);
	tx_drop(f, HI, S(DEQ_DROP_BAD_DESC), S(ERR_INDIRECT_LEN));
	/* exactly ring size entries, one chain through all of them */
	for (i = 0; i < QSZ; i++)
		big[i] = (struct vring_desc){b + i, 1, NX, (uint16_t)(i + 1)};
	big[QSZ - 1].len = 400 - (QSZ - 1);
	big[QSZ - 1].flags = 0;
	big[QSZ] = big[QSZ - 1];
	t = ind_table(f, big, QSZ, &big[QSZ]);
	fx_set_desc(f, HI, t, 16 * QSZ, VRING_DESC_F_INDIRECT, 0);
	tx_ok(f, HI, 400, 6);
	/* one more entry is too many, whatever it holds */
	t = ind_table(f, big, QSZ + 1, &big[QSZ]);
	fx_set_desc(f, HI, t, 16 * (QSZ + 1), VRING_DESC_F_INDIRECT, 0);
	tx_drop(f, HI, S(DEQ_DROP_BAD_DESC), S(ERR_INDIRECT_LEN));
	free(big);
	fx_free(f);
}

/* virtq_translate: a buffer ending exactly at a region's end (then a gap)
 * and one byte past; a buffer across two adjacent regions, exactly at the
 * seam; a range ending at 2^64 - 1 and one wrapping */
static void
test_limit_region_end(void **state)
{
	struct fx *f = fx_new(QSZ, F_STD);
	static const uint64_t ends[] = {DATA_END, FAR_END};
	uint32_t i;

	(void)state;
	for (i = 0; i < RTE_DIM(ends); i++) {
		tx_fill(f, ends[i] - 300, 300, (uint8_t)(7 + i));
		fx_set_desc(f, HI, ends[i] - 300, 300, 0, 0);
		tx_ok(f, HI, 300, (uint8_t)(7 + i));
		fx_set_desc(f, HI, ends[i] - 300, 301, 0, 0);
		tx_drop(f, HI, S(DEQ_DROP_BAD_DESC), S(ERR_DESC_ADDR));
		fx_set_desc(f, HI, ends[i], 1, 0, 0); /* first byte past */
		tx_drop(f, HI, S(DEQ_DROP_BAD_DESC), S(ERR_DESC_ADDR));
		/* the second descriptor starts exactly at the end */
		fx_set_desc(f, HI, ends[i] - 300, 300, NX, HI - 1);
		fx_set_desc(f, HI - 1, ends[i], 1, 0, 0);
		tx_drop(f, HI, S(DEQ_DROP_BAD_DESC), S(ERR_DESC_ADDR));
	}
	/* across the seam of regions 1 and 2: one span each side */
	tx_fill(f, DATA_SEAM - 150, 300, 9);
	fx_set_desc(f, HI, DATA_SEAM - 150, 300, 0, 0);
	tx_ok(f, HI, 300, 9);
	fx_set_desc(f, HI, DATA_SEAM - 150, 150, NX, HI - 1);
	fx_set_desc(f, HI - 1, DATA_SEAM, 150, 0, 0);
	tx_ok(f, HI, 300, 9);
	/* no region up there: both fail, neither may wrap into low memory */
	fx_set_desc(f, HI, UINT64_MAX - 99, 100, 0, 0);
	tx_drop(f, HI, S(DEQ_DROP_BAD_DESC), S(ERR_DESC_ADDR));
	fx_set_desc(f, HI, UINT64_MAX - 99, 101 + (uint32_t)TG_DATA_GPA, 0, 0);
	tx_drop(f, HI, S(DEQ_DROP_BAD_DESC), S(ERR_DESC_ADDR));
	assert_null(vsw_mem_translate(&f->g.mem, UINT64_MAX, 2,
		&(uint64_t){0}));
	fx_free(f);
}

/* virtq_avail_count: exactly size ahead is a full ring, size + 1 breaks */
static void
test_limit_avail_ahead(void **state)
{
	struct fx *f = fx_new(8, F_STD);
	uint64_t b = tg_alloc_data(&f->g, 100, 1);
	struct rte_mbuf *m[9];
	uint16_t i, id;
	uint32_t len;

	(void)state;
	tx_fill(f, b, 100, 10);
	for (i = 0; i < 8; i++) {
		fx_set_desc(f, i, b, 100, 0, 0);
		tg_avail_push_raw(&f->q, i);
	}
	tg_kick(&f->q);
	assert_int_equal(vsw_virtq_dequeue_burst(f->vq, test_pool, m, 9), 8);
	rte_pktmbuf_free_bulk(m, 8);
	for (i = 0; i < 8; i++)
		assert_int_equal(tg_used_pop(&f->q, &id, &len), 1);
	FX_EXPECT(f, {S(DEQ_PACKETS), 8}, {S(DEQ_BYTES), 8 * 88},
		{S(NOTIFY_SENT), 1});
	f->q.avail->idx = (uint16_t)(f->q.avail->idx + 9);
	assert_int_equal(vsw_virtq_dequeue_burst(f->vq, test_pool, m, 9), 0);
	FX_EXPECT(f, {S(ERR_AVAIL_IDX), 1}, {S(ERR_RING_BROKEN), 1});
	assert_true(vsw_virtq_broken(f->vq));
	fx_free(f);
	/* the same on RX: 8 buffers for 9 packets, then 9 ahead */
	f = fx_new(8, F_STD);
	for (i = 0; i < 8; i++)
		assert_true(tg_rx_post(&f->q, (uint32_t[]){2048}, 1, false) >=
			0);
	tg_kick(&f->q);
	for (i = 0; i < 9; i++)
		m[i] = fx_mbuf(64, (uint8_t)i);
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, m, 9), 8);
	FX_EXPECT(f, {S(ENQ_PACKETS), 8}, {S(ENQ_BYTES), 8 * 64},
		{S(ENQ_DROP_RING_FULL), 1}, {S(NOTIFY_SENT), 1});
	f->q.avail->idx = (uint16_t)(f->q.avail->idx + 9);
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, m, 1), 0);
	FX_EXPECT(f, {S(ERR_AVAIL_IDX), 1}, {S(ERR_RING_BROKEN), 1},
		{S(ENQ_DROP_NOT_READY), 1});
	for (i = 0; i < 9; i++)
		rte_pktmbuf_free(m[i]);
	fx_free(f);
}

/* max_pkt_len: chain bytes incl. header; exactly the limit passes */
static void
test_limit_max_pkt(void **state)
{
	struct fx *f = fx_new(QSZ, F_STD);
	uint64_t b = tg_alloc_data(&f->g, 1013, 1);
	struct rte_mbuf *m;
	uint16_t nb;
	uint8_t out[1100];

	(void)state;
	f->q.cfg.max_pkt_len = 12 + 1000;
	fx_reinit(f);
	tx_fill(f, b, 1013, 11);
	fx_set_desc(f, HI, b, 1012, 0, 0);
	tx_ok(f, HI, 1012, 11);
	/* the byte over in a 2nd desc */
	fx_set_desc(f, HI, b, 1000, NX, HI - 1);
	fx_set_desc(f, HI - 1, b + 1000, 13, 0, 0);
	tx_drop(f, HI, S(DEQ_DROP_TOO_LARGE), NOERR);
	/* RX: the same limit */
	assert_true(tg_rx_post(&f->q, (uint32_t[]){2048}, 1, false) >= 0);
	tg_kick(&f->q);
	m = fx_mbuf(1001, 12);
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, &m, 1), 0);
	FX_EXPECT(f, {S(ENQ_DROP_TOO_LARGE), 1});
	rte_pktmbuf_free(m);
	m = fx_mbuf(1000, 13);
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, &m, 1), 1);
	assert_int_equal(tg_rx_recv(&f->q, out, sizeof(out), &nb), 1000);
	assert_memory_equal(out, rte_pktmbuf_mtod(m, uint8_t *), 1000);
	FX_EXPECT(f, {S(ENQ_PACKETS), 1}, {S(ENQ_BYTES), 1000},
		{S(NOTIFY_SENT), 1});
	rte_pktmbuf_free(m);
	fx_free(f);
}

/* RX: a buffer ending exactly at a region's end is filled to its last
 * byte; one byte longer is a bad descriptor and nothing is written past */
static void
test_limit_rx_region_end(void **state)
{
	struct fx *f = fx_new(QSZ, F_STD);
	struct rte_mbuf *m = fx_mbuf(288, 14);
	const uint8_t *p = tg_host(&f->g, FAR_END - 300);
	uint16_t id;
	uint32_t len;

	(void)state;
	fx_set_desc(f, HI, FAR_END - 300, 300, WR, 0);
	post_raw(f, HI);
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, &m, 1), 1);
	assert_int_equal(tg_used_pop(&f->q, &id, &len), 1);
	assert_int_equal(id, HI);
	assert_int_equal(len, 300);
	assert_int_equal(p[10], 1); /* num_buffers */
	assert_memory_equal(p + 12, rte_pktmbuf_mtod(m, uint8_t *), 288);
	FX_EXPECT(f, {S(ENQ_PACKETS), 1}, {S(ENQ_BYTES), 288},
		{S(NOTIFY_SENT), 1});
	/* a longer frame needs the byte past the end */
	rte_pktmbuf_free(m);
	m = fx_mbuf(289, 16);
	fx_set_desc(f, HI, FAR_END - 300, 301, WR, 0);
	post_raw(f, HI);
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, &m, 1), 0);
	assert_int_equal(tg_used_pop(&f->q, &id, &len), 1);
	assert_int_equal(len, 0);
	FX_EXPECT(f, {S(ENQ_DROP_BAD_DESC), 1}, {S(ERR_DESC_ADDR), 1},
		{S(NOTIFY_SENT), 1});
	rte_pktmbuf_free(m);
	fx_free(f);
}

/* enq_chain_full: a first chain of exactly hdr_len bytes holds the header
 * (the frame goes on in the next), one byte less is SHORT_HDR */
static void
test_limit_rx_short_hdr(void **state)
{
	struct fx *f = fx_new(QSZ, F_STD);
	struct rte_mbuf *m = fx_mbuf(100, 15);
	uint8_t out[128];
	uint16_t nb, id;
	uint32_t len;

	(void)state;
	assert_true(tg_rx_post(&f->q, (uint32_t[]){12}, 1, false) >= 0);
	assert_true(tg_rx_post(&f->q, (uint32_t[]){200}, 1, false) >= 0);
	tg_kick(&f->q);
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, &m, 1), 1);
	assert_int_equal(tg_rx_recv(&f->q, out, sizeof(out), &nb), 100);
	assert_int_equal(nb, 2);
	assert_memory_equal(out, rte_pktmbuf_mtod(m, uint8_t *), 100);
	FX_EXPECT(f, {S(ENQ_PACKETS), 1}, {S(ENQ_BYTES), 100},
		{S(NOTIFY_SENT), 1});
	assert_true(tg_rx_post(&f->q, (uint32_t[]){11}, 1, false) >= 0);
	assert_true(tg_rx_post(&f->q, (uint32_t[]){200}, 1, false) >= 0);
	tg_kick(&f->q);
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, &m, 1), 0);
	assert_int_equal(tg_used_pop(&f->q, &id, &len), 1);
	assert_int_equal(len, 0);
	FX_EXPECT(f, {S(ENQ_DROP_SHORT_HDR), 1}, {S(NOTIFY_SENT), 1});
	rte_pktmbuf_free(m);
	fx_free(f);
}

/* ring_area: each ring may end exactly at its region's end, not past it */
static void
test_limit_ring_area(void **state)
{
	struct fx *f = fx_new(QSZ, F_STD | F_EVT);
	struct vsw_virtq_config c;
	struct vsw_virtq *vq;
	const uint64_t dlen = 16ull * QSZ, alen = 4 + 2ull * QSZ + 2,
		       ulen = 4 + 8ull * QSZ + 2;

	(void)state;
	c = f->q.cfg;
	c.desc_gpa = RING_END - dlen;
	c.avail_gpa = RING_END - dlen - 4096 - alen; /* even: 2-aligned */
	c.used_gpa = RING_END - dlen - 2 * 4096 - ((ulen + 3) & ~3ull);
	vq = vsw_virtq_create(&c);
	assert_non_null(vq);
	vsw_virtq_destroy(vq);
	c = f->q.cfg;
	c.avail_gpa = RING_END - alen;
	vq = vsw_virtq_create(&c);
	assert_non_null(vq);
	vsw_virtq_destroy(vq);
	c.avail_gpa += 2; /* used_event two bytes past */
	rte_errno = 0;
	assert_null(vsw_virtq_create(&c));
	assert_int_equal(rte_errno, EFAULT);
	c = f->q.cfg;
	c.used_gpa = RING_END - ulen - 2; /* 4 + 8n + 2: the last 4-aligned */
	vq = vsw_virtq_create(&c);
	assert_non_null(vq);
	vsw_virtq_destroy(vq);
	c.used_gpa += 4; /* avail_event 2 bytes past */
	rte_errno = 0;
	assert_null(vsw_virtq_create(&c));
	assert_int_equal(rte_errno, EFAULT);
	fx_free(f);
	/* without EVENT_IDX the used ring can end exactly at the end */
	f = fx_new(QSZ, F_STD);
	c = f->q.cfg;
	c.used_gpa = RING_END - (ulen - 2);
	vq = vsw_virtq_create(&c);
	assert_non_null(vq);
	vsw_virtq_destroy(vq);
	c.used_gpa += 4;
	rte_errno = 0;
	assert_null(vsw_virtq_create(&c));
	assert_int_equal(rte_errno, EFAULT);
	c = f->q.cfg;
	c.desc_gpa = RING_END - dlen + 16;
	rte_errno = 0;
	assert_null(vsw_virtq_create(&c));
	assert_int_equal(rte_errno, EFAULT);
	fx_free(f);
}

#define T(fn)                                                                  \
	cmocka_unit_test_setup_teardown(fn, fx_pool_setup, fx_pool_teardown)

int test_virtq_limits_run(void);

int
test_virtq_limits_run(void)
{
	const struct CMUnitTest tests[] = {
		T(test_limit_next_ring),
		T(test_limit_head),
		T(test_limit_chain_loop),
		T(test_limit_indirect_index),
		T(test_limit_indirect_len),
		T(test_limit_region_end),
		T(test_limit_avail_ahead),
		T(test_limit_max_pkt),
		T(test_limit_rx_region_end),
		T(test_limit_rx_short_hdr),
		T(test_limit_ring_area),
	};

	return cmocka_run_group_tests_name("virtq_limits", tests, NULL, NULL);
}

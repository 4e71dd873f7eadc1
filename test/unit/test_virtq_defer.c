/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The split RX's deferred copies (virtq_enqueue.c): frame copies of at
 * most VIRTQ_DEFER_LEN (256) bytes wait for the end of the burst, at most
 * VIRTQ_DEFER_MAX (64) of them a burst; the rest are done at once. The
 * reference is the frame each mbuf holds: every packet must read back
 * byte for byte, at the limits: bursts of 1, of VSW_VIRTQ_BURST_MAX and of
 * one more packet than the deferred array holds; frames and segments of
 * 255, 256 and 257 bytes; more small segments in a burst than the array
 * holds; a packet dropped after some of its copies were noted, whose chain
 * the next packet fills with a copy done at once; a copy that ends exactly
 * at a region's end (a guard page follows) and one split by the boundary
 * of two adjacent regions.
 */
#include <stdlib.h>
#include <string.h>

#include "test_virtq.h"

#define QSZ 256u
#define WR VRING_DESC_F_WRITE
#define F_NOMRG (F_V1 | F_IND) /* non-mergeable, 12-byte header */
#define DATA_END (TG_DATA_GPA + TG_DATA_REGIONS * TG_DATA_REGION)
#define NPKT_MAX 65u

/*
 * n packets (lengths from lens[] in turn, segments of at most max_seg)
 * into chains (n of them, or more for mergeable packets over several) of
 * the given buffer lengths, one burst; each one read back.
 */
static void
df_burst_chains(uint64_t features, uint16_t n, const uint32_t *lens,
	uint32_t nlens, uint32_t max_seg, const uint32_t *bufs, uint32_t nbufs,
	uint16_t chains)
{
	struct fx *f = fx_new(QSZ, features);
	struct rte_mbuf *m[NPKT_MAX];
	static uint8_t out[9100];
	uint64_t bytes = 0;
	uint16_t i, nb;

	assert_true(n <= NPKT_MAX && chains >= n && chains <= QSZ);
	for (i = 0; i < chains; i++)
		assert_true(tg_rx_post(&f->q, bufs, nbufs, false) >= 0);
	for (i = 0; i < n; i++) {
		m[i] = virtq_test_frame_mbuf(test_pool, lens[i % nlens],
			(uint8_t)(i * 13 + 1), max_seg);
		bytes += m[i]->pkt_len;
	}
	tg_kick(&f->q);
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, m, n), n);
	FX_EXPECT(f, {S(ENQ_PACKETS), n}, {S(ENQ_BYTES), bytes},
		{S(NOTIFY_SENT), 1});
	for (i = 0; i < n; i++) {
		int len = tg_rx_recv(&f->q, out, sizeof(out), &nb);

		assert_int_equal(len, lens[i % nlens]);
		virtq_test_frame_expect(
			out, (uint32_t)len, (uint8_t)(i * 13 + 1));
		rte_pktmbuf_free(m[i]);
	}
	assert_int_equal(tg_rx_recv(&f->q, out, sizeof(out), &nb), -1);
	assert_false(vsw_virtq_broken(f->vq));
	fx_free(f);
}

static void
df_burst(uint64_t features, uint16_t n, const uint32_t *lens, uint32_t nlens,
	uint32_t max_seg, const uint32_t *bufs, uint32_t nbufs)
{
	df_burst_chains(features, n, lens, nlens, max_seg, bufs, nbufs, n);
}

/* Bursts of 1, 32 and 65 packets of 1..1500 bytes (255, 256, 257 among
 * them), mergeable and not, one 2 KiB buffer a chain. */
static void
test_defer_bursts(void **state)
{
	static const uint32_t lens[] = {64, 256, 257, 1, 255, 1500, 60};
	static const uint64_t feats[] = {F_STD, F_NOMRG};
	static const uint16_t ns[] = {1, VSW_VIRTQ_BURST_MAX, NPKT_MAX};
	uint32_t buf = 2048, i, j;

	(void)state;
	for (i = 0; i < RTE_DIM(feats); i++)
		for (j = 0; j < RTE_DIM(ns); j++) {
			df_burst(feats[i], ns[j], lens, RTE_DIM(lens), 0, &buf,
				1);
			df_burst(feats[i], ns[j], &lens[j], 1, 0, &buf, 1);
		}
}

/*
 * Segments of 256 (noted) and 257 bytes (copied at once), 32 packets of
 * three or more segments (more small copies than the array holds), into
 * chains of one buffer and of three (112, 100, 2048: the copies cut at
 * descriptor ends); mergeable with 300-byte buffers too (a packet over
 * several chains).
 */
static void
test_defer_segments(void **state)
{
	static const uint32_t lens[] = {700, 769, 1500, 256};
	static const uint32_t one[] = {2048}, three[] = {112, 100, 2048};
	static const uint32_t small[] = {300};
	uint32_t seg;

	(void)state;
	for (seg = 255; seg <= 257; seg++) {
		df_burst(F_NOMRG, 32, lens, RTE_DIM(lens), seg, one, 1);
		df_burst(F_NOMRG, 32, lens, RTE_DIM(lens), seg, three, 3);
		df_burst(F_STD, 32, lens, RTE_DIM(lens), seg, three, 3);
		df_burst_chains(
			F_STD, 8, lens, RTE_DIM(lens), seg, small, 1, 8 * 6);
	}
}

/*
 * Non-mergeable: packet b (400 B in segments of 100) fills 300 B of chain
 * x, noting three copies, then does not fit (TOO_LARGE, x stays posted);
 * packet c (280 B, copied at once) takes x, d (64 B) the next chain. b's
 * noted copies must be gone: run at the burst's end they would overwrite
 * c's bytes.
 */
static void
test_defer_dropped_packet(void **state)
{
	struct fx *f = fx_new(QSZ, F_NOMRG);
	uint32_t x = 12 + 300, y = 2048;
	struct rte_mbuf *m[3];
	uint8_t out[400];
	uint16_t nb;

	(void)state;
	assert_true(tg_rx_post(&f->q, &x, 1, false) >= 0);
	assert_true(tg_rx_post(&f->q, &y, 1, false) >= 0);
	tg_kick(&f->q);
	m[0] = virtq_test_frame_mbuf(test_pool, 400, 3, 100);
	m[1] = virtq_test_frame_mbuf(test_pool, 280, 5, 0);
	m[2] = virtq_test_frame_mbuf(test_pool, 64, 7, 0);
	/* the drop ends the packet, not the burst: all three are handled */
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, m, 3), 2);
	FX_EXPECT(f, {S(ENQ_PACKETS), 2}, {S(ENQ_BYTES), 280 + 64},
		{S(ENQ_DROP_TOO_LARGE), 1}, {S(NOTIFY_SENT), 1});
	assert_int_equal(tg_rx_recv(&f->q, out, sizeof(out), &nb), 280);
	virtq_test_frame_expect(out, 280, 5);
	assert_int_equal(tg_rx_recv(&f->q, out, sizeof(out), &nb), 64);
	virtq_test_frame_expect(out, 64, 7);
	rte_pktmbuf_free(m[0]);
	rte_pktmbuf_free(m[1]);
	rte_pktmbuf_free(m[2]);
	fx_free(f);
}

/* One chain of one buffer at gpa (len bytes), raw; packet of plen bytes;
 * read back by hand. */
static void
df_raw_one(struct fx *f, uint16_t d, uint64_t gpa, uint32_t len, uint32_t plen,
	uint8_t seed)
{
	struct rte_mbuf *m = virtq_test_frame_mbuf(test_pool, plen, seed, 0);
	static uint8_t out[2048 + 12];
	uint32_t ulen;
	uint16_t id;

	fx_set_desc(f, d, gpa, len, WR, 0);
	tg_avail_push_raw(&f->q, d);
	tg_kick(&f->q);
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, &m, 1), 1);
	FX_EXPECT(f, {S(ENQ_PACKETS), 1}, {S(ENQ_BYTES), plen},
		{S(NOTIFY_SENT), 1});
	assert_int_equal(tg_used_pop(&f->q, &id, &ulen), 1);
	assert_int_equal(id, d);
	assert_int_equal(ulen, 12 + plen);
	tg_read(&f->g, gpa, out, ulen);
	virtq_test_frame_expect(out + 12, plen, seed);
	rte_pktmbuf_free(m);
}

/*
 * Buffers that end exactly at the data regions' end (a guard page
 * follows: one byte too many faults) holding frames of 256 and 257 bytes,
 * and one split by the boundary of regions 1 and 2 (the frame's copy cut
 * in two spans of 100 and 156 bytes).
 */
static void
test_defer_region_end(void **state)
{
	struct fx *f = fx_new(QSZ, F_NOMRG);
	uint32_t plen;
	uint16_t d = 0;

	(void)state;
	for (plen = 255; plen <= 257; plen++) {
		df_raw_one(f, d, DATA_END - 12 - plen, 12 + plen, plen,
			(uint8_t)plen);
		d++;
	}
	df_raw_one(f, d, TG_DATA_GPA + TG_DATA_REGION - 112, 2048, 256, 9);
	assert_false(vsw_virtq_broken(f->vq));
	fx_free(f);
}

#define T(fn) \
	cmocka_unit_test_setup_teardown(fn, fx_pool_setup, fx_pool_teardown)

int
test_virtq_defer_run(void)
{
	const struct CMUnitTest tests[] = {
		T(test_defer_bursts),
		T(test_defer_segments),
		T(test_defer_dropped_packet),
		T(test_defer_region_end),
	};

	return cmocka_run_group_tests_name("virtq_defer", tests, NULL, NULL);
}

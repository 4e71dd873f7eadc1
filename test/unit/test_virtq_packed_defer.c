/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The packed RX's deferred copies (virtq_packed_enqueue.c, as on split
 * rings: test_virtq_defer.c): frame copies of at most VIRTQ_DEFER_LEN
 * (256) bytes wait for the end of the burst, at most VIRTQ_DEFER_MAX (64)
 * a burst; the rest are done at once. The reference is the frame each mbuf
 * holds: every packet must read back byte for byte, at the limits: bursts
 * of 1, of VSW_VIRTQ_BURST_MAX and of one more packet than the array
 * holds, through the four-chain batch (single-segment packets, one buffer
 * a chain) and one by one (segments, chains of three buffers, in-order);
 * frames and segments of 255, 256 and 257 bytes; a packet dropped after
 * some of its copies were noted, whose chain the next packet fills.
 */
#include <stdlib.h>
#include <string.h>

#include "test_virtq_packed.h"

#define QSZ 256u
#define F_NOMRG (F_V1 | F_IND) /* non-mergeable, 12-byte header */
#define F_INO F(VSW_VIRTIO_F_IN_ORDER)
#define NPKT_MAX 65u

/*
 * n packets (lengths from lens[] in turn, segments of at most max_seg)
 * into chains of the given buffer lengths (chains of them posted), one
 * burst; each one read back.
 */
static void
pd_burst_chains(uint64_t features, uint16_t n, const uint32_t *lens,
	uint32_t nlens, uint32_t max_seg, const uint32_t *bufs, uint32_t nbufs,
	uint16_t chains)
{
	struct pfx *f = pfx_new(QSZ, features);
	struct rte_mbuf *m[NPKT_MAX];
	static uint8_t out[9100];
	uint64_t bytes = 0;
	uint16_t i, nb;

	assert_true(n <= NPKT_MAX && chains >= n && chains <= QSZ);
	for (i = 0; i < chains; i++)
		assert_true(tgp_rx_post(&f->q, bufs, nbufs, false) >= 0);
	for (i = 0; i < n; i++) {
		m[i] = virtq_test_frame_mbuf(ptest_pool, lens[i % nlens],
			(uint8_t)(i * 13 + 1), max_seg);
		bytes += m[i]->pkt_len;
	}
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, m, n), n);
	PFX_EXPECT(f, {S(ENQ_PACKETS), n}, {S(ENQ_BYTES), bytes},
		{S(NOTIFY_SENT), 1});
	for (i = 0; i < n; i++) {
		int len = tgp_rx_recv(&f->q, out, sizeof(out), &nb);

		assert_int_equal(len, lens[i % nlens]);
		virtq_test_frame_expect(
			out, (uint32_t)len, (uint8_t)(i * 13 + 1));
		rte_pktmbuf_free(m[i]);
	}
	assert_int_equal(tgp_rx_recv(&f->q, out, sizeof(out), &nb), -1);
	assert_false(vsw_virtq_broken(f->vq));
	pfx_free(f);
}

/* Bursts of 1, 32 and 65 packets of 1..1500 bytes (255, 256, 257 among
 * them), mergeable, not, and in order, one 2 KiB buffer a chain (the
 * four-chain batch takes them). */
static void
test_pdefer_bursts(void **state)
{
	static const uint32_t lens[] = {64, 256, 257, 1, 255, 1500, 60};
	static const uint64_t feats[] = {
		F_STD, F_NOMRG, F_STD | F_INO, F_NOMRG | F_INO};
	static const uint16_t ns[] = {1, VSW_VIRTQ_BURST_MAX, NPKT_MAX};
	uint32_t buf = 2048, i, j;

	(void)state;
	for (i = 0; i < RTE_DIM(feats); i++)
		for (j = 0; j < RTE_DIM(ns); j++) {
			pd_burst_chains(feats[i], ns[j], lens, RTE_DIM(lens), 0,
				&buf, 1, ns[j]);
			pd_burst_chains(feats[i], ns[j], &lens[j], 1, 0, &buf,
				1, ns[j]);
		}
}

/*
 * Segments of 255, 256 (noted) and 257 bytes (copied at once), 32 packets
 * of three or more segments (more small copies than the array holds),
 * into chains of one buffer and of three (112, 100, 2048: the copies cut
 * at descriptor ends); mergeable with 300-byte buffers too.
 */
static void
test_pdefer_segments(void **state)
{
	static const uint32_t lens[] = {700, 769, 1500, 256};
	static const uint32_t one[] = {2048}, three[] = {112, 100, 2048};
	static const uint32_t small[] = {300};
	uint32_t seg;

	(void)state;
	for (seg = 255; seg <= 257; seg++) {
		pd_burst_chains(
			F_NOMRG, 32, lens, RTE_DIM(lens), seg, one, 1, 32);
		pd_burst_chains(
			F_NOMRG, 32, lens, RTE_DIM(lens), seg, three, 3, 32);
		pd_burst_chains(
			F_STD, 32, lens, RTE_DIM(lens), seg, three, 3, 32);
		pd_burst_chains(
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
test_pdefer_dropped_packet(void **state)
{
	struct pfx *f = pfx_new(QSZ, F_NOMRG);
	uint32_t x = 12 + 300, y = 2048;
	struct rte_mbuf *m[3];
	uint8_t out[400];
	uint16_t nb;

	(void)state;
	assert_true(tgp_rx_post(&f->q, &x, 1, false) >= 0);
	assert_true(tgp_rx_post(&f->q, &y, 1, false) >= 0);
	m[0] = virtq_test_frame_mbuf(ptest_pool, 400, 3, 100);
	m[1] = virtq_test_frame_mbuf(ptest_pool, 280, 5, 0);
	m[2] = virtq_test_frame_mbuf(ptest_pool, 64, 7, 0);
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, m, 3), 2);
	PFX_EXPECT(f, {S(ENQ_PACKETS), 2}, {S(ENQ_BYTES), 280 + 64},
		{S(ENQ_DROP_TOO_LARGE), 1}, {S(NOTIFY_SENT), 1});
	assert_int_equal(tgp_rx_recv(&f->q, out, sizeof(out), &nb), 280);
	virtq_test_frame_expect(out, 280, 5);
	assert_int_equal(tgp_rx_recv(&f->q, out, sizeof(out), &nb), 64);
	virtq_test_frame_expect(out, 64, 7);
	rte_pktmbuf_free(m[0]);
	rte_pktmbuf_free(m[1]);
	rte_pktmbuf_free(m[2]);
	pfx_free(f);
}

#define T(fn) \
	cmocka_unit_test_setup_teardown(fn, pfx_pool_setup, pfx_pool_teardown)

int
test_virtq_packed_defer_run(void)
{
	const struct CMUnitTest tests[] = {
		T(test_pdefer_bursts),
		T(test_pdefer_segments),
		T(test_pdefer_dropped_packet),
	};

	return cmocka_run_group_tests_name(
		"virtq_packed_defer", tests, NULL, NULL);
}

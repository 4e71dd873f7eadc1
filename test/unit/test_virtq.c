/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the virtqueue data path (vhost/virtq*.c), driven by the
 * software guest (test/guest/). The reference is the guest itself: what
 * it sent must come out of dequeue byte for byte, what enqueue wrote must
 * read back byte for byte with the num_buffers and used lengths a greedy
 * in-order placement predicts, and every counter must move exactly as
 * the header's partition says.
 *
 * This file: translation, random round trips (dequeue, enqueue, and the
 * two chained), and main. The fixture is test_virtq_fx.c; notification
 * decisions, a burst that takes the whole ring and reconnect are
 * test_virtq_notify.c. Hostile guests are in test_virtq_hostile.c; the
 * cases:
 *   1. avail ring head index >= ring size        (ring broken, queue stops)
 *   2. chain "next" index >= ring size
 *   3. chain loop (a -> b -> a)
 *   4. loop inside an indirect table
 *   5. chain exactly as long as the ring          (accepted: edge)
 *   6. descriptor address in a gap between regions
 *   7. addr + len wraps around 2^64
 *   8. buffer running off the end of a region into a gap
 *   9. zero-length descriptor
 *  10. write-only descriptor on TX
 *  11. read-only descriptor on RX                 (guest buffer unchanged)
 *  12. indirect table length not a multiple of 16
 *  13. indirect table larger than the ring (huge)
 *  14. indirect table of length 0
 *  15. nested indirect
 *  16. INDIRECT together with NEXT
 *  17. indirect table outside guest memory
 *  18. avail index more than ring size ahead     (ring broken, queue stops)
 *  19. TX chain shorter than the virtio-net header
 *  20. TX header split over several 1-byte descriptors (accepted)
 *  21. TX chain longer than max_pkt_len
 *  22. mergeable RX buffer shorter than the header
 *  23. non-mergeable RX: packet bigger than the chain (chain stays posted)
 *  24. mergeable RX: second chain of a packet bad (both returned len 0)
 *  25. indirect table straddling two regions (accepted, slow read)
 *  26. mempool empty mid-chain (DEQ_DROP_NO_MBUF)
 *  27. rings outside guest memory / bad size at init (-EFAULT / -EINVAL)
 *  28. 300 queues of random garbage (descriptors, indirect tables, avail
 *      heads and index): no crash or stray write, and the counters add up
 * Each asserts the exact counters that moved (and that no other did),
 * used len 0 for every chain taken and dropped, that guest memory beyond
 * the posted buffers still holds its fill pattern, and runs with guard
 * pages around every region (and under ASan in CI).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mempool.h>

#include "test_virtq.h"

/* --- translation ---------------------------------------------------------- */

static void
test_translate(void **state)
{
	struct tg_guest g;
	uint64_t c = 0, end = TG_DATA_GPA + TG_DATA_REGION;
	uint8_t *p;

	(void)state;
	assert_int_equal(tg_guest_init(&g), 0);
	p = vsw_mem_translate(&g.mem, TG_RING_GPA + 100, 50, &c);
	assert_ptr_equal(p, g.reg[0].base + 100);
	assert_int_equal(c, 50);
	/* spans two adjacent regions: shortened to the first */
	p = vsw_mem_translate(&g.mem, end - 10, 100, &c);
	assert_ptr_equal(p, g.reg[1].base + TG_DATA_REGION - 10);
	assert_int_equal(c, 10);
	p = vsw_mem_translate(&g.mem, end, 90, &c);
	assert_ptr_equal(p, g.reg[2].base);
	assert_int_equal(c, 90);
	/* last byte of a region before a gap; the gap; wrap; empty */
	p = vsw_mem_translate(&g.mem, TG_RING_GPA + TG_RING_SIZE - 1, 8, &c);
	assert_ptr_equal(p, g.reg[0].base + TG_RING_SIZE - 1);
	assert_int_equal(c, 1);
	assert_null(vsw_mem_translate(&g.mem, TG_RING_GPA + TG_RING_SIZE, 1,
		&c));
	assert_null(vsw_mem_translate(&g.mem, TG_RING_GPA - 1, 1, &c));
	assert_null(vsw_mem_translate(&g.mem, TG_RING_GPA, 0, &c));
	assert_null(vsw_mem_translate(&g.mem, TG_DATA_GPA, UINT64_MAX, &c));
	assert_null(vsw_mem_translate(&g.mem, UINT64_MAX - 8, 16, &c));
	tg_guest_fini(&g);
}

/* --- random traffic -------------------------------------------------------- */

static uint32_t
rand_frame_len(void)
{
	switch (tl_rand_range(&test_rng, 0, 9)) {
	case 0:
		return tl_rand_range(&test_rng, 65000, 65535);
	case 1:
	case 2:
	case 3:
		return tl_rand_range(&test_rng, 1, 65535);
	default:
		return tl_rand_range(&test_rng, 1, 1600);
	}
}

/* Random cuts of a total-byte stream into at most max pieces. */
static uint32_t
rand_pieces(uint32_t total, uint32_t hdr, uint32_t *pieces, uint32_t max)
{
	uint32_t cuts[TG_CHAIN_MAX + 1], n = 0, i, j, np = 0;
	uint32_t want = tl_rand_range(&test_rng, 0, max - 1);

	if (total > 1 && tl_rand_range(&test_rng, 0, 2) == 0)
		cuts[n++] = hdr < total ? hdr : total - 1; /* header alone */
	for (i = n; i < want && total > 1; i++)
		cuts[n++] = tl_rand_range(&test_rng, 1, total - 1);
	cuts[n++] = total;
	for (i = 1; i < n; i++) /* insertion sort, few elements */
		for (j = i; j > 0 && cuts[j - 1] > cuts[j]; j--) {
			uint32_t t = cuts[j];

			cuts[j] = cuts[j - 1];
			cuts[j - 1] = t;
		}
	for (i = 0, j = 0; i < n; i++) {
		if (cuts[i] == j)
			continue;
		pieces[np++] = cuts[i] - j;
		j = cuts[i];
	}
	return np;
}


static void
rand_frames(struct frame *fr, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		fr[i].len = rand_frame_len();
		fr[i].data = malloc(fr[i].len);
		assert_non_null(fr[i].data);
		tl_rand_bytes(&test_rng, fr[i].data, fr[i].len);
	}
}

static void
free_frames(struct frame *fr, uint32_t n)
{
	while (n-- > 0)
		free(fr[n].data);
}

/* The guest sends n frames as random chains; returns the heads. */
static void
guest_send(struct fx *f, const struct frame *fr, uint32_t n, int *heads)
{
	uint32_t i, pieces[16], np;

	for (i = 0; i < n; i++) {
		bool ind = tl_rand_range(&test_rng, 0, 2) == 0;

		np = rand_pieces(f->q.hdr_len + fr[i].len, f->q.hdr_len, pieces,
			ind ? 16 : 8);
		heads[i] = tg_tx_post(&f->q, fr[i].data, fr[i].len, pieces, np,
			ind);
		assert_true(heads[i] >= 0);
	}
	tg_kick(&f->q);
}

/* Dequeues n packets in random bursts; checks data, used ring, counters. */
static void
dequeue_check(struct fx *f, const struct frame *fr, uint32_t n,
	const int *heads, struct rte_mbuf **keep)
{
	struct rte_mbuf *pkts[VSW_VIRTQ_BURST_MAX];
	uint32_t got = 0, bursts = 0, i;
	uint64_t bytes = 0;

	while (got < n) {
		uint16_t want = (uint16_t)tl_rand_range(&test_rng, 1, 32);
		uint16_t k = vsw_virtq_dequeue_burst(f->vq, test_pool, pkts,
			want);

		assert_true(k > 0 && k <= want);
		bursts++;
		for (i = 0; i < k; i++, got++) {
			assert_true(got < n);
			assert_true(tl_mbuf_equal(pkts[i], fr[got].data,
				fr[got].len));
			bytes += fr[got].len;
			if (keep != NULL)
				keep[got] = pkts[i];
			else
				rte_pktmbuf_free(pkts[i]);
		}
	}
	assert_int_equal(vsw_virtq_dequeue_burst(f->vq, test_pool, pkts, 32),
		0);
	for (i = 0; i < n; i++) {
		uint16_t id;
		uint32_t len;

		assert_int_equal(tg_used_pop(&f->q, &id, &len), 1);
		assert_int_equal(id, heads[i]);
		assert_int_equal(len, 0);
	}
	FX_EXPECT(f, {S(DEQ_PACKETS), n}, {S(DEQ_BYTES), bytes},
		{S(NOTIFY_SENT), bursts});
	assert_int_equal(f->kicks, bursts);
	f->kicks = 0;
}

static void
test_dequeue_random(void **state)
{
	static const uint64_t feats[] = {F_STD, F_V1 | F_IND, F_IND};
	struct frame fr[32];
	int heads[32];
	uint32_t round, n;

	(void)state;
	for (round = 0; round < 24; round++) {
		struct fx *f = fx_new(1024, feats[round % 3]);

		f->q.cfg.no_deq_align = !(round & 1);
		fx_reinit(f);
		n = tl_rand_range(&test_rng, 1, 32);
		rand_frames(fr, n);
		guest_send(f, fr, n, heads);
		dequeue_check(f, fr, n, heads, NULL);
		assert_true(tg_untouched(&f->g));
		free_frames(fr, n);
		fx_free(f);
	}
}

/*
 * The guest posts RX chains so that the packets, placed greedily in order,
 * use all of them; records each chain's expected used length.
 */
static uint32_t
guest_post_rx(struct fx *f, const struct frame *fr, uint32_t n, bool mrg,
	uint32_t *exp_len, uint16_t *exp_nbufs)
{
	uint32_t i, nch = 0, lens[16];

	for (i = 0; i < n; i++) {
		uint32_t need = f->q.hdr_len + fr[i].len;

		exp_nbufs[i] = 0;
		while (need > 0) {
			uint32_t cap = mrg ? tl_rand_range(&test_rng, 12, 5000) :
				need + tl_rand_range(&test_rng, 0, 64);
			uint32_t nl = rand_pieces(cap, 12, lens, mrg ? 3 : 16);
			bool ind = tl_rand_range(&test_rng, 0, 3) == 0;

			assert_true(tg_rx_post(&f->q, lens, nl, ind) >= 0);
			assert_true(nch < 4096);
			exp_len[nch++] = cap < need ? cap : need;
			need -= cap < need ? cap : need;
			exp_nbufs[i]++;
		}
	}
	tg_kick(&f->q);
	return nch;
}

/* Builds n mbufs of the frames with random segmentation. */
static void
build_mbufs(const struct frame *fr, uint32_t n, struct rte_mbuf **m)
{
	uint32_t i, max_seg = tl_rand_range(&test_rng, 0, 1) ? 0 :
		tl_rand_range(&test_rng, 1, 3000);


	for (i = 0; i < n; i++) {
		/* at most ~64 (random: ~128) segments a packet: the pool
		 * must hold a whole round */
		uint32_t seg = max_seg == 0 ? 0 : RTE_MAX(max_seg,
			fr[i].len / 64);

		m[i] = tl_mbuf_build(test_pool, fr[i].data, fr[i].len,
			&test_rng, seg);
		assert_non_null(m[i]);
	}
}

/* Enqueues n mbufs, then the guest receives and checks everything. */
static void
enqueue_check(struct fx *f, const struct frame *fr, uint32_t n,
	struct rte_mbuf **m, uint32_t nch, const uint32_t *exp_len,
	const uint16_t *exp_nbufs)
{
	uint16_t used0 = f->q.used_seen, nb;
	uint8_t *buf = malloc(65536);
	uint64_t bytes = 0;
	uint32_t i;

	assert_non_null(buf);
	/* like a driver re-enabling callbacks: kick me at the next used */
	*f->q.used_event = f->q.used_seen;
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, m, (uint16_t)n), n);
	assert_int_equal((uint16_t)(f->q.used->idx - used0), nch);
	for (i = 0; i < nch; i++)
		assert_int_equal(f->q.used->ring[(used0 + i) & (f->q.size - 1)]
				.len,
			exp_len[i]);
	for (i = 0; i < n; i++) {
		assert_int_equal(tg_rx_recv(&f->q, buf, 65536, &nb),
			fr[i].len);
		assert_memory_equal(buf, fr[i].data, fr[i].len);
		if (f->q.hdr_len == 12)
			assert_int_equal(nb, exp_nbufs[i]);
		bytes += fr[i].len;
		rte_pktmbuf_free(m[i]);
	}
	assert_int_equal(tg_rx_recv(&f->q, buf, 65536, &nb), -1);
	FX_EXPECT(f, {S(ENQ_PACKETS), n}, {S(ENQ_BYTES), bytes},
		{S(NOTIFY_SENT), 1});
	free(buf);
}

static void
test_enqueue_random(void **state)
{
	static const uint64_t feats[] = {F_STD, F_STD | F_EVT, F_V1 | F_IND,
		F_IND};
	struct rte_mbuf *m[32];
	uint32_t exp_len[4096], round, n, nch;
	uint16_t exp_nbufs[32];
	struct frame fr[32];

	(void)state;
	for (round = 0; round < 32; round++) {
		uint64_t ft = feats[round % 4];
		struct fx *f = fx_new(4096, ft);
		bool mrg = ft & F_MRG;

		f->q.cfg.hdr_coalign = round & 4;
		fx_reinit(f);
		n = tl_rand_range(&test_rng, 1, mrg ? 12 : 24);
		rand_frames(fr, n);
		nch = guest_post_rx(f, fr, n, mrg, exp_len, exp_nbufs);
		build_mbufs(fr, n, m);
		if (round & 8) /* shared first segment: no header in headroom */
			rte_mbuf_refcnt_update(m[0], 1);
		enqueue_check(f, fr, n, m, nch, exp_len, exp_nbufs);
		if (round & 8)
			rte_pktmbuf_free(m[0]);
		assert_true(tg_untouched(&f->g));
		free_frames(fr, n);
		fx_free(f);
	}
}

/* Guest TX -> dequeue -> enqueue -> guest RX, byte-exact, many rounds. */
static void
test_loop_random(void **state)
{
	struct fx *tx = fx_new(512, F_STD), *rx = fx_new(4096, F_STD | F_EVT);
	struct rte_mbuf *m[32];
	uint32_t exp_len[4096], round, n, nch;
	uint16_t exp_nbufs[32];
	struct frame fr[32];
	int heads[32];

	(void)state;
	for (round = 0; round < 16; round++) {
		n = tl_rand_range(&test_rng, 1, 12);
		rand_frames(fr, n);
		guest_send(tx, fr, n, heads);
		dequeue_check(tx, fr, n, heads, m);
		nch = guest_post_rx(rx, fr, n, true, exp_len, exp_nbufs);
		enqueue_check(rx, fr, n, m, nch, exp_len, exp_nbufs);
		free_frames(fr, n);
		tg_data_reset(&tx->g);
		tg_data_reset(&rx->g);
	}
	fx_free(tx);
	fx_free(rx);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_pool_setup, fx_pool_teardown)

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		T(test_translate),
		T(test_dequeue_random),
		T(test_enqueue_random),
		T(test_loop_random),
		T(test_notify_flags),
		T(test_notify_event_idx),
		T(test_full_ring),
		T(test_reconnect),
	};
	int rc;

	(void)argc;
	if (tl_eal_init(argv[0], "vsw_test_virtq") < 0) {
		fprintf(stderr, "EAL init failed\n");
		return 1;
	}
	test_pool = rte_pktmbuf_pool_create("test_virtq", 16383, 0, 0,
		RTE_MBUF_DEFAULT_BUF_SIZE, (int)rte_socket_id());
	if (test_pool == NULL) {
		fprintf(stderr, "mempool: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	tl_rng_init(&test_rng, "test_virtq", 0x5eed0001);
	rc = test_virtq_datapath_select();
	if (rc != 0) {
		rte_mempool_free(test_pool);
		rte_eal_cleanup();
		return rc < 0;
	}
	rc = cmocka_run_group_tests_name("virtq", tests, NULL, NULL);
	rc |= test_virtq_hostile_run();
	rc |= test_net_hdr_run();
	rc |= test_virtq_log_run();
	rc |= test_virtq_isa_run();
	rc |= test_virtq_inorder_run();
	rc |= test_virtq_prefetch_run();
	rc |= test_virtq_defer_run();
	rte_mempool_free(test_pool);
	rte_eal_cleanup();
	return rc;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the packed-ring data path (vhost/virtq/virtq_packed*.c),
 * driven by the software guest's packed driver (test/guest/guest_packed.c).
 * The reference is the guest's own record: what it sent must come out of
 * dequeue byte for byte with one used descriptor per chain, in ring order,
 * carrying the chain's buffer id; what enqueue wrote must read back byte
 * for byte with the num_buffers and used lengths a greedy in-order model
 * predicts; counters move exactly as <vsw/virtq.h> says.
 *
 * This file: random round trips over ring sizes that are and are not
 * powers of two (many laps: the wrap counters flip), the exact limits (a
 * chain crossing the wrap, a chain as long as the ring, an indirect table
 * as long as the ring and one more, 64 KiB frames and one byte more, a
 * buffer ending at a region's end and one byte past), the driver event
 * rules (ENABLE, DISABLE, DESC with EVENT_IDX), the device event area, and
 * reconnect at a position with the wrap bit. Hostile guests are in
 * test_virtq_packed_hostile.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mempool.h>

#include "test_virtq_packed.h"

struct rte_mempool *ptest_pool;
struct tl_rng ptest_rng;
static unsigned int pool_baseline;

static void
pfx_notify(void *ctx)
{
	((struct pfx *)ctx)->kicks++;
}

struct pfx *
pfx_new(uint32_t size, uint64_t features)
{
	struct pfx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(tg_guest_init(&f->g), 0);
	assert_int_equal(tgp_vq_init(&f->q, &f->g, size, features), 0);
	f->q.cfg.notify = pfx_notify;
	f->q.cfg.notify_ctx = f;
	f->q.cfg.name = "packed q0";
	f->vq = vsw_virtq_create(&f->q.cfg);
	assert_non_null(f->vq);
	return f;
}

void
pfx_resume(struct pfx *f)
{
	f->q.cfg.last_avail_idx = vsw_virtq_last_avail_idx(f->vq);
	f->q.cfg.last_used_idx = vsw_virtq_last_used_idx(f->vq);
	vsw_virtq_destroy(f->vq);
	f->vq = vsw_virtq_create(&f->q.cfg);
	assert_non_null(f->vq);
	memset(f->seen, 0, sizeof(f->seen));
}

void
pfx_free(struct pfx *f)
{
	vsw_virtq_destroy(f->vq);
	tgp_vq_fini(&f->q);
	tg_guest_fini(&f->g);
	free(f);
}

void
pfx_expect(struct pfx *f, const struct stat_delta *d, size_t n)
{
	virtq_stats_expect(f->vq, f->seen, d, n);
}

uint16_t
pfx_deq(struct pfx *f, uint16_t n)
{
	struct rte_mbuf *pkts[VSW_VIRTQ_BURST_MAX];
	uint16_t k = vsw_virtq_dequeue_burst(f->vq, ptest_pool, pkts, n);

	rte_pktmbuf_free_bulk(pkts, k);
	return k;
}

struct rte_mbuf *
pfx_mbuf(uint32_t len, uint8_t pattern)
{
	return virtq_test_mbuf(ptest_pool, len, pattern);
}

int
pfx_pool_setup(void **state)
{
	(void)state;
	pool_baseline = virtq_pool_mark(ptest_pool);
	return 0;
}

int
pfx_pool_teardown(void **state)
{
	(void)state;
	virtq_pool_check(ptest_pool, pool_baseline);
	return 0;
}

static const uint32_t ring_sizes[] = {1, 2, 3, 7, 16, 100, 256};

static uint32_t
rand_len(uint32_t big)
{
	if (tl_rand_range(&ptest_rng, 0, 15) == 0)
		return tl_rand_range(&ptest_rng, big - 500, big);
	return tl_rand_range(&ptest_rng, 1, 9000);
}

/* n random cuts (each >= 1 byte) of total into pieces[]; returns count. */
static uint32_t
rand_pieces(uint32_t total, uint32_t *pieces, uint32_t max)
{
	uint32_t n = tl_rand_range(&ptest_rng, 1, max), i, left = total;

	if (n > total)
		n = total;
	for (i = 0; i + 1 < n; i++) {
		pieces[i] = tl_rand_range(&ptest_rng, 1, left - (n - 1 - i));
		left -= pieces[i];
	}
	pieces[i] = left;
	return n;
}

/* --- dequeue: random chains, many laps ------------------------------------ */

static void
dequeue_round(struct pfx *f, uint32_t max_desc)
{
	static uint8_t frame[64][65536];
	static uint32_t flen[64];
	uint16_t ids[64];
	uint32_t n = 0, got = 0, bursts = 0, pieces[16], i;
	uint64_t bytes = 0, total = 0;

	tg_data_reset(&f->g);
	while (n < 64 && total < 1500000) {
		bool ind = tl_rand_range(&ptest_rng, 0, 2) == 0;
		uint32_t np, len = rand_len(65535);
		int id;

		tl_rand_bytes(&ptest_rng, frame[n], len);
		np = rand_pieces(f->q.hdr_len + len, pieces,
			ind ? RTE_MIN(16u, f->q.size) : max_desc);
		id = tgp_tx_post(&f->q, frame[n], len, pieces, np, ind);
		if (id < 0)
			break;
		ids[n] = (uint16_t)id;
		flen[n++] = len;
		total += len;
	}
	while (got < n) {
		struct rte_mbuf *pkts[VSW_VIRTQ_BURST_MAX];
		uint16_t want = (uint16_t)tl_rand_range(&ptest_rng, 1, 32);
		uint16_t k = vsw_virtq_dequeue_burst(f->vq, ptest_pool, pkts,
			want);

		assert_true(k > 0 && k <= want);
		bursts++;
		for (i = 0; i < k; i++, got++) {
			assert_true(got < n);
			assert_true(tl_mbuf_equal(pkts[i], frame[got],
				flen[got]));
			bytes += flen[got];
		}
		rte_pktmbuf_free_bulk(pkts, k);
	}
	assert_int_equal(pfx_deq(f, 32), 0);
	for (i = 0; i < n; i++) {
		uint16_t id;
		uint32_t len;

		assert_int_equal(tgp_used_pop(&f->q, &id, &len), 1);
		assert_int_equal(id, ids[i]);
	}
	assert_int_equal(f->q.free_slots, f->q.size);
	PFX_EXPECT(f, {S(DEQ_PACKETS), n}, {S(DEQ_BYTES), bytes},
		{S(NOTIFY_SENT), bursts});
	assert_int_equal(f->kicks, bursts);
	f->kicks = 0;
}

static void
test_packed_dequeue_random(void **state)
{
	uint32_t s, r;

	(void)state;
	for (s = 0; s < RTE_DIM(ring_sizes); s++) {
		struct pfx *f = pfx_new(ring_sizes[s], F_STD);

		for (r = 0; r < 12; r++)
			dequeue_round(f, RTE_MIN(8u, ring_sizes[s]));
		/* the device's position is the guest's, wrap bit and all */
		assert_int_equal(vsw_virtq_last_avail_idx(f->vq),
			tgp_pos(f->q.next_avail, f->q.avail_wrap));
		assert_int_equal(vsw_virtq_last_used_idx(f->vq),
			tgp_pos(f->q.next_used, f->q.used_wrap));
		pfx_free(f);
	}
}

/* --- enqueue: the greedy in-order model ----------------------------------- */

struct posted {
	uint16_t id;
	uint32_t cap;
};

/* RX buffers until the ring is full: 1..4 pieces, hdr..4096 bytes in all,
 * a quarter indirect; ring[] gets each chain's id and room. */
static uint32_t
post_rx_random(struct pfx *f, struct posted *ring)
{
	uint32_t np = 0, hdr = f->q.hdr_len, lens[8];

	for (;;) {
		uint32_t n = tl_rand_range(&ptest_rng, 1,
			RTE_MIN(4u, f->q.size));
		uint32_t cap = 0, k;
		int id;

		for (k = 0; k < n; k++) {
			lens[k] = tl_rand_range(&ptest_rng, k ? 1 : hdr, 1024);
			cap += lens[k];
		}
		id = tgp_rx_post(&f->q, lens, n,
			tl_rand_range(&ptest_rng, 0, 3) == 0);
		if (id < 0)
			break;
		ring[np].id = (uint16_t)id;
		ring[np++].cap = cap;
	}
	return np;
}

/* The buffers left posted come back on a later burst: drains them (empty
 * packets) and takes the counters as seen. */
static void
drain_posted(struct pfx *f)
{
	uint32_t i;

	while (f->q.free_slots != f->q.size) {
		struct rte_mbuf *m = pfx_mbuf(0, 0); /* fits any chain */
		static uint8_t buf[8192];
		uint16_t nb;

		assert_int_equal(vsw_virtq_enqueue_burst(f->vq, &m, 1), 1);
		rte_pktmbuf_free(m);
		assert_int_equal(tgp_rx_recv(&f->q, buf, sizeof(buf), &nb), 0);
	}
	for (i = 0; i < VSW_VIRTQ_STAT__MAX; i++)
		f->seen[i] = vsw_virtq_stat(f->vq, i);
}

static void
enqueue_round(struct pfx *f, bool mrg)
{
	static uint8_t data[32][65536];
	struct posted ring[256];
	struct rte_mbuf *pkts[32];
	uint32_t np = 0, head = 0, i, hdr = f->q.hdr_len;
	uint32_t npk = tl_rand_range(&ptest_rng, 1, 32), lens[8];
	uint32_t plen[32], deliver[32], nd = 0, full = 0, big = 0;
	uint64_t bytes = 0;
	uint16_t nbufs[32], out;

	tg_data_reset(&f->g);
	np = post_rx_random(f, ring);
	for (i = 0; i < npk; i++) { /* the model, packet by packet */
		uint32_t need, h = head, nb = 0;

		plen[i] = rand_len(mrg ? 65535 : 1100);
		tl_rand_bytes(&ptest_rng, data[i], plen[i]);
		pkts[i] = tl_mbuf_build(ptest_pool, data[i], plen[i],
			&ptest_rng, 0);
		assert_non_null(pkts[i]);
		if (full)
			continue;
		need = hdr + plen[i];
		while (need > 0 && h < np && (mrg || nb == 0)) {
			need -= RTE_MIN(need, ring[h].cap);
			h++;
			nb++;
		}
		if (need > 0 && (mrg || head == np)) {
			full = npk - i; /* ring full: this and the rest */
		} else if (need > 0) {
			big++; /* too large: the chain stays posted */
		} else {
			head = h;
			nbufs[nd] = (uint16_t)nb;
			deliver[nd++] = i;
			bytes += plen[i];
		}
	}
	out = vsw_virtq_enqueue_burst(f->vq, pkts, (uint16_t)npk);
	assert_int_equal(out, nd);
	for (i = 0; i < nd; i++) { /* the guest reads them back */
		static uint8_t buf[65536 + 64];
		uint16_t nb;
		int len = tgp_rx_recv(&f->q, buf, sizeof(buf), &nb);

		assert_int_equal(len, plen[deliver[i]]);
		assert_int_equal(nb, nbufs[i]);
		assert_memory_equal(buf, data[deliver[i]], plen[deliver[i]]);
	}
	assert_int_equal(tgp_rx_recv(&f->q, (uint8_t *)lens, 4, &nbufs[0]),
		-1);
	for (i = 0; i < npk; i++)
		rte_pktmbuf_free(pkts[i]);
	if (nd != 0)
		PFX_EXPECT(f, {S(ENQ_PACKETS), nd}, {S(ENQ_BYTES), bytes},
			{S(ENQ_DROP_RING_FULL), full},
			{S(ENQ_DROP_TOO_LARGE), big}, {S(NOTIFY_SENT), 1});
	else
		PFX_EXPECT(f, {S(ENQ_DROP_RING_FULL), full},
			{S(ENQ_DROP_TOO_LARGE), big});
	drain_posted(f);
}

static void
test_packed_enqueue_random(void **state)
{
	uint32_t s, r, m;

	(void)state;
	for (m = 0; m < 2; m++)
		for (s = 0; s < RTE_DIM(ring_sizes); s++) {
			struct pfx *f = pfx_new(ring_sizes[s],
				m ? F_STD : F_V1 | F_IND);

			if (s & 1) { /* header into the headroom: one run */
				f->q.cfg.hdr_coalign = true;
				pfx_resume(f);
			}
			for (r = 0; r < 10; r++)
				enqueue_round(f, m == 1);
			assert_int_equal(vsw_virtq_last_used_idx(f->vq),
				tgp_pos(f->q.next_used, f->q.used_wrap));
			pfx_free(f);
		}
}

/* hdr_coalign: the header goes to the guest from the mbuf's headroom
 * (written there, then copied with the data as one run); a shared mbuf
 * keeps its headroom untouched and gets the header copied on its own. */
static void
test_packed_hdr_coalign(void **state)
{
	struct pfx *f = pfx_new(16, F_STD);
	const uint32_t lens[1] = {2048};
	struct rte_mbuf *m[2];
	uint8_t out[2048], *h;
	uint16_t nb, i;

	(void)state;
	f->q.cfg.hdr_coalign = true;
	pfx_resume(f);
	for (i = 0; i < 2; i++) {
		assert_true(tgp_rx_post(&f->q, lens, 1, false) >= 0);
		m[i] = pfx_mbuf(300, (uint8_t)(0x40 + i));
		memset(rte_pktmbuf_mtod(m[i], uint8_t *) - 12, 0xee, 12);
	}
	rte_mbuf_refcnt_update(m[1], 1);
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, m, 2), 2);
	for (i = 0; i < 2; i++) {
		assert_int_equal(tgp_rx_recv(&f->q, out, sizeof(out), &nb),
			300);
		assert_int_equal(nb, 1);
		assert_int_equal(out[0], 0x40 + i);
		assert_int_equal(out[299], 0x40 + i);
		h = rte_pktmbuf_mtod(m[i], uint8_t *) - 12;
		assert_int_equal(h[0], i == 0 ? 0 : 0xee);
		assert_int_equal(h[10], i == 0 ? 1 : 0xee);
	}
	rte_pktmbuf_free(m[0]);
	rte_pktmbuf_free(m[1]);
	rte_pktmbuf_free(m[1]);
	PFX_EXPECT(f, {S(ENQ_PACKETS), 2}, {S(ENQ_BYTES), 600},
		{S(NOTIFY_SENT), 1});
	pfx_free(f);
}

int test_packed_limits_run(void);

#define T(fn)                                                                  \
	cmocka_unit_test_setup_teardown(fn, pfx_pool_setup, pfx_pool_teardown)

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		T(test_packed_dequeue_random),
		T(test_packed_enqueue_random),
		T(test_packed_hdr_coalign),
	};
	int rc;

	(void)argc;
	if (tl_eal_init(argv[0], "vsw_test_virtq_packed") < 0) {
		fprintf(stderr, "EAL init failed\n");
		return 1;
	}
	ptest_pool = rte_pktmbuf_pool_create("test_vq_packed", 16383, 0, 0,
		RTE_MBUF_DEFAULT_BUF_SIZE, (int)rte_socket_id());
	if (ptest_pool == NULL) {
		fprintf(stderr, "mempool: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	tl_rng_init(&ptest_rng, "test_virtq_packed", 0x5eed0014);
	rc = cmocka_run_group_tests_name("virtq_packed", tests, NULL, NULL);
	rc |= test_packed_limits_run();
	rc |= test_virtq_packed_hostile_run();
	rc |= test_virtq_packed_budget_run();
	rc |= test_virtq_packed_log_run();
	rc |= test_virtq_packed_offl_run();
	rc |= test_virtq_packed_inorder_run();
	rc |= test_virtq_packed_batch_run();
	rc |= test_virtq_packed_batch_lens_run();
	rc |= test_virtq_packed_defer_run();
	rte_mempool_free(ptest_pool);
	rte_eal_cleanup();
	return rc;
}

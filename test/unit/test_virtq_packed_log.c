/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The packed ring for the dirty-log cases (test_virtq_log.c): RX chains of
 * 1 to 3 buffers, direct or an indirect table, up to a ring's worth a
 * burst on rings of 8 and 64 that wrap often; TX frames direct or
 * indirect. Then the packed limits: an RX buffer ending exactly at a page
 * end (the next page's bit stays clear) and one byte past it (set), used
 * descriptors wrapping from the ring's last page to its first, the device
 * event area written at create. test/mutants/virtq-packed-log-*.patch
 * prove it.
 */
#include <stdlib.h>
#include <string.h>

#include "test_virtq_packed.h"
#include "virtq_log_ref.h"

#define PAGE VLOG_PAGE
#define WR VRING_DESC_F_WRITE

struct lfx {
	struct pfx *f;
	uint8_t *log;
	uint64_t size;
};

/* A packed queue created with a dirty log. */
static void
lfx_new(struct lfx *l, uint32_t size, uint64_t features)
{
	l->f = pfx_new(size, features);
	l->size = vsw_virtq_log_size_needed(&l->f->g.mem);
	l->log = calloc(1, l->size);
	assert_non_null(l->log);
	l->f->q.cfg.log_base = l->log;
	l->f->q.cfg.log_size = l->size;
	pfx_resume(l->f);
	assert_true(vsw_virtq_logging(l->f->vq));
}

static void
lfx_free(struct lfx *l)
{
	pfx_free(l->f);
	free(l->log);
}

static void *
packed_create(uint32_t size, uint64_t features)
{
	return pfx_new(size, features);
}

static void
packed_restart(void *q)
{
	pfx_resume(q);
}

static void
packed_destroy(void *q)
{
	pfx_free(q);
}

static struct vsw_virtq_config *
packed_cfg(void *q)
{
	return &((struct pfx *)q)->q.cfg;
}

static struct tg_guest *
packed_guest(void *q)
{
	return &((struct pfx *)q)->g;
}

static struct vsw_virtq *
packed_vq(void *q)
{
	return ((struct pfx *)q)->vq;
}

static void
packed_rx_post_random(void *q, bool mrg)
{
	struct pfx *f = q;
	uint32_t lens[4], n, k, i, j;

	n = tl_rand_range(&ptest_rng, 1, f->q.size);
	for (i = 0; i < n; i++) {
		k = tl_rand_range(&ptest_rng, 1, 3);
		for (j = 0; j < k; j++)
			lens[j] = mrg ? tl_rand_range(&ptest_rng, 64, 4200)
				      : tl_rand_range(&ptest_rng, 600, 3000);
		if (tgp_rx_post(&f->q, lens, k,
			    tl_rand_range(&ptest_rng, 0, 1)) < 0)
			break;
	}
}

static void
drain_rx(struct pfx *f)
{
	static uint8_t buf[65536 + 64];
	uint16_t nb;

	while (tgp_rx_recv(&f->q, buf, sizeof(buf), &nb) != -1)
		;
}

/* What stays posted would be the next round's: filled and taken too. */
static void
packed_rx_drain(void *q)
{
	struct pfx *f = q;

	drain_rx(f);
	while (f->q.free_slots != f->q.size) {
		struct rte_mbuf *z = pfx_mbuf(0, 0);

		assert_int_equal(vsw_virtq_enqueue_burst(f->vq, &z, 1), 1);
		rte_pktmbuf_free(z);
		drain_rx(f);
	}
}

static void
packed_tx_post(void *q, const uint8_t *frame, uint32_t len)
{
	uint32_t piece = 12 + len;

	assert_true(tgp_tx_post(&((struct pfx *)q)->q, frame, len, &piece, 1,
			    tl_rand_range(&ptest_rng, 0, 1)) >= 0);
}

static uint16_t
packed_tx_dequeue(void *q, uint16_t n)
{
	return pfx_deq(q, n);
}

static void
packed_tx_reap(void *q)
{
	uint16_t id;
	uint32_t len;

	while (tgp_used_pop(&((struct pfx *)q)->q, &id, &len) == 1)
		;
}

/* Used descriptors go where the burst's first chain was: rings of up to
 * 256 entries lie in one page. */
static uint64_t
packed_tx_used_gpa(void *q)
{
	return ((struct pfx *)q)->q.cfg.desc_gpa;
}

/* An RX buffer of len bytes at gpa in the next slot (not near the
 * ring's end), filled by one packet; the guest's positions move past it. */
static void
rx_exact(struct lfx *l, uint64_t gpa, uint32_t len)
{
	struct rte_mbuf *m = pfx_mbuf(len - 12, 0x5a);
	struct pfx *f = l->f;
	uint16_t slot = f->q.next_avail;

	tgp_desc_raw(&f->q, slot, gpa, len, slot,
		(uint16_t)(tgp_avail_flags(f->q.avail_wrap) | WR));
	memset(l->log, 0, l->size);
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, &m, 1), 1);
	rte_pktmbuf_free(m);
	assert_int_equal(f->q.desc[slot].len, len);
	f->q.next_avail = f->q.next_used = (uint16_t)(slot + 1);
}

/* The limits: a buffer ending at a page's end and one byte past it;
 * used descriptors across the ring's end (its last page to its first). */
static void
test_plog_limits(void **state)
{
	struct vlog_snap s = {{NULL}};
	uint64_t data, ring;
	uint16_t id;
	uint32_t len, i;
	struct lfx l;

	(void)state;
	lfx_new(&l, 512, F_STD);
	ring = l.f->q.cfg.desc_gpa; /* 512 * 16: two pages */
	assert_int_equal(ring % PAGE, 0);
	data = tg_alloc_data(&l.f->g, 4 * PAGE, PAGE);
	/* ends at the end of page 1 of data: page 2 stays clear */
	rx_exact(&l, data + 2 * PAGE - 1500, 1500);
	assert_true(vlog_bit(l.log, data + PAGE));
	assert_false(vlog_bit(l.log, data + 2 * PAGE));
	assert_false(vlog_bit(l.log, data));
	assert_true(vlog_bit(l.log, ring)); /* its used descriptor */
	/* one byte past the end of page 2: pages 2 and 3 */
	rx_exact(&l, data + 3 * PAGE - 1499, 1500);
	assert_true(vlog_bit(l.log, data + 2 * PAGE));
	assert_true(vlog_bit(l.log, data + 3 * PAGE));
	assert_false(vlog_bit(l.log, data + PAGE));
	/* to slot 510 (one frame a slot), then 4 frames: 510, 511, 0, 1 */
	for (i = 2; i < 510; i += 4) {
		uint8_t fr[64] = {1};
		uint32_t piece = 12 + sizeof(fr), k;

		for (k = 0; k < 4 && i + k < 510; k++)
			assert_true(tgp_tx_post(&l.f->q, fr, sizeof(fr), &piece,
					    1, false) >= 0);
		assert_int_equal(pfx_deq(l.f, 32), k);
		while (tgp_used_pop(&l.f->q, &id, &len) == 1)
			;
	}
	assert_int_equal(vsw_virtq_last_used_idx(l.f->vq), tgp_pos(510, true));
	for (i = 0; i < 4; i++) {
		uint8_t fr[64] = {2};
		uint32_t piece = 12 + sizeof(fr);

		assert_true(tgp_tx_post(&l.f->q, fr, sizeof(fr), &piece, 1,
				    false) >= 0);
	}
	memset(l.log, 0, l.size);
	vlog_snap_take(&l.f->g, &s);
	assert_int_equal(pfx_deq(l.f, 32), 4);
	vlog_snap_check(&l.f->g, &s, l.log, &(uint32_t){0});
	assert_true(vlog_bit(l.log, ring));	   /* slots 0, 1 */
	assert_true(vlog_bit(l.log, ring + PAGE)); /* slots 510, 511 */
	vlog_snap_free(&s);
	lfx_free(&l);
}

/* The device event area (written at create) is logged; no log: none. */
static void
test_plog_create(void **state)
{
	struct pfx *f = pfx_new(64, F_STD);
	uint8_t *log;
	uint64_t size = vsw_virtq_log_size_needed(&f->g.mem);
	uint32_t i;

	(void)state;
	assert_false(vsw_virtq_logging(f->vq));
	log = calloc(1, size);
	assert_non_null(log);
	f->q.cfg.log_base = log;
	f->q.cfg.log_size = size;
	pfx_resume(f);
	assert_true(vlog_bit(log, f->q.cfg.used_gpa));
	for (i = 0; i < size; i++) /* that one page only */
		assert_int_equal(
			log[i], i == f->q.cfg.used_gpa / PAGE / 8
					? 1u << (f->q.cfg.used_gpa / PAGE % 8)
					: 0);
	pfx_free(f);
	free(log);
}

#define T(fn) \
	cmocka_unit_test_setup_teardown(fn, pfx_pool_setup, pfx_pool_teardown)

static const struct vlog_cfg packed_rx_cfgs[] = {
	{64, F_STD | F_EVT},
	{8, F_STD},
	{64, F_V1 | F_IND},
};

int
test_virtq_packed_log_run(void)
{
	static const struct vlog_ring packed = {
		.name = "virtq_packed_log",
		.rng = &ptest_rng,
		.pool = &ptest_pool,
		.setup = pfx_pool_setup,
		.teardown = pfx_pool_teardown,
		.create = packed_create,
		.restart = packed_restart,
		.destroy = packed_destroy,
		.cfg = packed_cfg,
		.guest = packed_guest,
		.vq = packed_vq,
		.rx_post_random = packed_rx_post_random,
		.rx_drain = packed_rx_drain,
		.tx_post = packed_tx_post,
		.tx_dequeue = packed_tx_dequeue,
		.tx_reap = packed_tx_reap,
		.tx_used_gpa = packed_tx_used_gpa,
		.rx_cfgs = packed_rx_cfgs,
		.n_rx_cfgs = RTE_DIM(packed_rx_cfgs),
		.rounds = 40,
		.tx_size = 64,
	};
	const struct CMUnitTest own[] = {
		T(test_plog_limits),
		T(test_plog_create),
	};

	return vlog_run(&packed, own, RTE_DIM(own));
}

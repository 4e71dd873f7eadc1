/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Dirty logging on packed rings against a reference (as test_virtq_log.c
 * for split rings): guest memory is snapshotted before each burst and
 * compared after; every 4 KiB page whose bytes changed must have its bit
 * in the log. Random RX bursts (chains, indirect tables, mergeable or
 * not, rings of 8 and 64 that wrap often) and TX bursts; then the limits:
 * an RX buffer ending exactly at a page end (the next page's bit stays
 * clear) and one byte past it (set), used descriptors wrapping from the
 * ring's last page to its first, the device event area written at create.
 * Without a log nothing is logged. test/mutants/virtq-packed-log-*.patch
 * prove it.
 */
#include <stdlib.h>
#include <string.h>

#include "test_virtq_packed.h"

#define PAGE 4096u
#define WR VRING_DESC_F_WRITE

struct snap {
	uint8_t *copy[TG_NREGIONS];
};

static void
snap_take(struct tg_guest *g, struct snap *s)
{
	uint32_t i;

	for (i = 0; i < g->mem.nregions; i++) {
		if (s->copy[i] == NULL)
			s->copy[i] = malloc(g->mem.regions[i].size);
		assert_non_null(s->copy[i]);
		memcpy(s->copy[i], g->reg[i].base, g->mem.regions[i].size);
	}
}

static void
snap_free(struct snap *s)
{
	uint32_t i;

	for (i = 0; i < TG_NREGIONS; i++)
		free(s->copy[i]);
}

static bool
log_bit(const uint8_t *log, uint64_t gpa)
{
	uint64_t p = gpa / PAGE;

	return (log[p / 8] >> (p % 8)) & 1;
}

/* Every changed page logged; returns how many pages changed. */
static uint32_t
snap_check(struct tg_guest *g, const struct snap *s, const uint8_t *log)
{
	uint32_t i, changed = 0;
	uint64_t off;

	for (i = 0; i < g->mem.nregions; i++) {
		const struct vsw_mem_region *r = &g->mem.regions[i];

		for (off = 0; off < r->size; off += PAGE) {
			uint64_t n = RTE_MIN(PAGE, r->size - off);

			if (memcmp(s->copy[i] + off, g->reg[i].base + off,
				    n) == 0)
				continue;
			changed++;
			if (!log_bit(log, r->guest_phys_addr + off))
				fail_msg("page %#llx written, not logged",
					(unsigned long long)(r->guest_phys_addr +
						off));
		}
	}
	return changed;
}

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

static void
drain_rx(struct pfx *f)
{
	static uint8_t buf[65536 + 64];
	uint16_t nb;

	while (tgp_rx_recv(&f->q, buf, sizeof(buf), &nb) != -1)
		;
}

static void
post_random_rx(struct pfx *f, bool mrg)
{
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
enqueue_rounds(uint32_t size, uint64_t features)
{
	bool mrg = features & F_MRG;
	struct snap s = {{NULL}};
	uint32_t r, changed = 0;
	struct lfx l;

	lfx_new(&l, size, features);
	for (r = 0; r < 40; r++) {
		struct rte_mbuf *m[VSW_VIRTQ_BURST_MAX];
		static uint8_t data[9000];
		uint32_t n = tl_rand_range(&ptest_rng, 1, VSW_VIRTQ_BURST_MAX);
		uint32_t i;

		tg_data_reset(&l.f->g);
		if (r % 3 == 0) /* buffers across a region boundary */
			tg_data_near_boundary(&l.f->g,
				tl_rand_range(&ptest_rng, 1, 3000));
		post_random_rx(l.f, mrg);
		for (i = 0; i < n; i++) {
			uint32_t len = tl_rand_range(&ptest_rng, 14,
				mrg ? 9000 : 1500);

			tl_rand_bytes(&ptest_rng, data, len);
			m[i] = tl_mbuf_build(ptest_pool, data, len, &ptest_rng,
				tl_rand_range(&ptest_rng, 0, 1)
					? 0
					: tl_rand_range(&ptest_rng, 60, 2000));
			assert_non_null(m[i]);
		}
		memset(l.log, 0, l.size); /* QEMU: exchanged to 0 as synced */
		snap_take(&l.f->g, &s);
		vsw_virtq_enqueue_burst(l.f->vq, m, (uint16_t)n);
		changed += snap_check(&l.f->g, &s, l.log);
		for (i = 0; i < n; i++)
			rte_pktmbuf_free(m[i]);
		drain_rx(l.f);
		/* what stays posted is the next round's; the guest reposts */
		while (l.f->q.free_slots != l.f->q.size) {
			struct rte_mbuf *z = pfx_mbuf(0, 0);

			assert_int_equal(vsw_virtq_enqueue_burst(l.f->vq, &z, 1),
				1);
			rte_pktmbuf_free(z);
			drain_rx(l.f);
		}
	}
	assert_true(changed > 40);
	snap_free(&s);
	lfx_free(&l);
}

static void
test_plog_enqueue(void **state)
{
	(void)state;
	enqueue_rounds(64, F_STD | F_EVT);
	enqueue_rounds(8, F_STD);
	enqueue_rounds(64, F_V1 | F_IND);
}

/* TX: only the used descriptors are written, and logged. */
static void
test_plog_dequeue(void **state)
{
	struct snap s = {{NULL}};
	uint32_t r, changed = 0;
	struct lfx l;

	(void)state;
	lfx_new(&l, 64, F_STD);
	for (r = 0; r < 40; r++) {
		uint8_t frame[1600];
		uint32_t n = tl_rand_range(&ptest_rng, 1, 20), i, piece;
		uint16_t id;
		uint32_t len;

		for (i = 0; i < n; i++) {
			uint32_t fl = tl_rand_range(&ptest_rng, 60, 1500);

			piece = 12 + fl;
			tl_rand_bytes(&ptest_rng, frame, fl);
			assert_true(tgp_tx_post(&l.f->q, frame, fl, &piece, 1,
					    tl_rand_range(&ptest_rng, 0, 1)) >=
				0);
		}
		memset(l.log, 0, l.size);
		snap_take(&l.f->g, &s);
		assert_int_equal(pfx_deq(l.f, VSW_VIRTQ_BURST_MAX), n);
		changed += snap_check(&l.f->g, &s, l.log);
		while (tgp_used_pop(&l.f->q, &id, &len) == 1)
			;
	}
	assert_true(changed >= 40);
	snap_free(&s);
	lfx_free(&l);
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
	struct snap s = {{NULL}};
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
	assert_true(log_bit(l.log, data + PAGE));
	assert_false(log_bit(l.log, data + 2 * PAGE));
	assert_false(log_bit(l.log, data));
	assert_true(log_bit(l.log, ring)); /* its used descriptor */
	/* one byte past the end of page 2: pages 2 and 3 */
	rx_exact(&l, data + 3 * PAGE - 1499, 1500);
	assert_true(log_bit(l.log, data + 2 * PAGE));
	assert_true(log_bit(l.log, data + 3 * PAGE));
	assert_false(log_bit(l.log, data + PAGE));
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
	snap_take(&l.f->g, &s);
	assert_int_equal(pfx_deq(l.f, 32), 4);
	snap_check(&l.f->g, &s, l.log);
	assert_true(log_bit(l.log, ring));        /* slots 0, 1 */
	assert_true(log_bit(l.log, ring + PAGE)); /* slots 510, 511 */
	snap_free(&s);
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
	assert_true(log_bit(log, f->q.cfg.used_gpa));
	for (i = 0; i < size; i++) /* that one page only */
		assert_int_equal(log[i],
			i == f->q.cfg.used_gpa / PAGE / 8
				? 1u << (f->q.cfg.used_gpa / PAGE % 8)
				: 0);
	pfx_free(f);
	free(log);
}

#define T(fn)                                                                  \
	cmocka_unit_test_setup_teardown(fn, pfx_pool_setup, pfx_pool_teardown)

int
test_virtq_packed_log_run(void)
{
	const struct CMUnitTest tests[] = {
		T(test_plog_enqueue),
		T(test_plog_dequeue),
		T(test_plog_limits),
		T(test_plog_create),
	};

	return cmocka_run_group_tests_name("virtq_packed_log", tests, NULL,
		NULL);
}

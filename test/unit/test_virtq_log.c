/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Dirty logging (vhost/virtq/virtq_log.c) against a reference: guest
 * memory is snapshotted before each burst and compared after, and every
 * 4 KiB page whose bytes changed must have its bit in the log (bit p % 8
 * of byte p / 8, page p = gpa >> 12). Random RX chains (lengths, indirect,
 * regions and their boundaries, mergeable or not), random multi-segment
 * packets, dequeue bursts; the log starts poisoned with nothing, is
 * cleared between bursts the way QEMU clears it, and pages logged though
 * unchanged are counted (a few: a copy that rewrites equal bytes).
 * Without a log, queues write no bit; a log smaller than the memory table
 * needs is refused at create.
 */
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>

#include "test_virtq.h"

#define PAGE 4096u

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

/* Changed pages all logged; returns how many were logged unchanged. */
static uint32_t
snap_check(struct tg_guest *g, const struct snap *s, const uint8_t *log,
	uint32_t *changed)
{
	uint32_t i, extra = 0;
	uint64_t off;

	for (i = 0; i < g->mem.nregions; i++) {
		const struct vsw_mem_region *r = &g->mem.regions[i];

		for (off = 0; off < r->size; off += PAGE) {
			uint64_t n = RTE_MIN(PAGE, r->size - off);
			bool diff = memcmp(s->copy[i] + off,
					    g->reg[i].base + off, n) != 0;
			bool bit = log_bit(log, r->guest_phys_addr + off);

			if (diff && !bit)
				fail_msg("page %#llx written, not logged",
					(unsigned long long)(r->guest_phys_addr +
						off));
			*changed += diff;
			extra += bit && !diff;
		}
	}
	return extra;
}

static struct fx *
fx_log_new(uint64_t features, uint8_t **log, uint64_t *size)
{
	struct fx *f = fx_new(256, features);

	*size = vsw_virtq_log_size_needed(&f->g.mem);
	*log = calloc(1, *size);
	assert_non_null(*log);
	f->q.cfg.log_base = *log;
	f->q.cfg.log_size = *size;
	fx_reinit(f);
	assert_true(vsw_virtq_logging(f->vq));
	return f;
}

static void
post_random_rx(struct fx *f, bool mrg)
{
	uint32_t lens[4], n, k, i;

	n = tl_rand_range(&test_rng, 1, 40);
	for (i = 0; i < n; i++) {
		k = tl_rand_range(&test_rng, 1, 4);
		for (uint32_t j = 0; j < k; j++)
			lens[j] = mrg ? tl_rand_range(&test_rng, 64, 4200)
				      : tl_rand_range(&test_rng, 2000, 5000);
		if (tg_rx_post(&f->q, lens, k, tl_rand_range(&test_rng, 0, 1)) <
			0)
			break;
	}
	tg_kick(&f->q);
}

static void
drain_rx(struct fx *f)
{
	uint8_t *buf = malloc(65536);
	uint16_t nb;

	assert_non_null(buf);
	while (tg_rx_recv(&f->q, buf, 65536, &nb) != -1)
		;
	free(buf);
}

static void
log_enqueue_rounds(uint64_t features)
{
	bool mrg = features & F_MRG;
	struct snap s = {{NULL}};
	uint64_t size, logged = 0;
	uint32_t r, changed = 0, extra = 0;
	uint8_t *log;
	struct fx *f = fx_log_new(features, &log, &size);

	for (r = 0; r < 60; r++) {
		struct rte_mbuf *m[VSW_VIRTQ_BURST_MAX];
		uint8_t data[9000];
		uint32_t n = tl_rand_range(&test_rng, 1, VSW_VIRTQ_BURST_MAX);
		uint32_t i;

		tg_data_reset(&f->g);
		if (r % 3 == 0) /* chains across a region boundary */
			tg_data_near_boundary(&f->g,
				tl_rand_range(&test_rng, 1, 3000));
		post_random_rx(f, mrg);
		for (i = 0; i < n; i++) {
			uint32_t len = tl_rand_range(&test_rng, 14,
				mrg ? 9000 : 1500);

			tl_rand_bytes(&test_rng, data, len);
			m[i] = tl_mbuf_build(test_pool, data, len, &test_rng,
				tl_rand_range(&test_rng, 0, 1)
					? 0
					: tl_rand_range(&test_rng, 60, 2000));
			assert_non_null(m[i]);
		}
		memset(log, 0, size); /* QEMU: exchanged to 0 as synced */
		snap_take(&f->g, &s);
		vsw_virtq_enqueue_burst(f->vq, m, (uint16_t)n);
		extra += snap_check(&f->g, &s, log, &changed);
		for (i = 0; i < n; i++)
			rte_pktmbuf_free(m[i]);
		drain_rx(f);
	}
	logged = vsw_virtq_stat(f->vq, VSW_VIRTQ_STAT_LOG_PAGES);
	print_message("# features %#llx: %u pages written, %llu logged, %u "
		      "logged unchanged\n",
		(unsigned long long)features, changed,
		(unsigned long long)logged, extra);
	assert_true(changed > 60);
	/* unchanged-but-logged pages: equal bytes rewritten (used ring
	 * entries, headers) only */
	assert_true(extra <= changed);
	snap_free(&s);
	fx_free(f);
	free(log);
}

static void
test_log_enqueue(void **state)
{
	(void)state;
	log_enqueue_rounds(F_STD | F_EVT);
	log_enqueue_rounds(F_V1 | F_IND);
}

/* TX: only used entries and the used index are written, and logged. */
static void
test_log_dequeue(void **state)
{
	struct snap s = {{NULL}};
	uint64_t size;
	uint32_t r, changed = 0;
	uint8_t *log;
	struct fx *f = fx_log_new(F_STD, &log, &size);

	(void)state;
	for (r = 0; r < 40; r++) {
		struct rte_mbuf *m[VSW_VIRTQ_BURST_MAX];
		uint8_t frame[1600];
		uint32_t n = tl_rand_range(&test_rng, 1, 20), i, piece;
		uint16_t got;

		for (i = 0; i < n; i++) {
			uint32_t len = tl_rand_range(&test_rng, 60, 1500);

			piece = 12 + len;
			tl_rand_bytes(&test_rng, frame, len);
			assert_true(tg_tx_post(&f->q, frame, len, &piece, 1,
					    false) >= 0);
		}
		tg_kick(&f->q);
		memset(log, 0, size);
		snap_take(&f->g, &s);
		got = vsw_virtq_dequeue_burst(f->vq, test_pool, m,
			VSW_VIRTQ_BURST_MAX);
		assert_int_equal(got, n);
		snap_check(&f->g, &s, log, &changed);
		/* the used index page, always */
		assert_true(log_bit(log, f->q.cfg.used_gpa));
		rte_pktmbuf_free_bulk(m, got);
		while (tg_used_pop(&f->q, &(uint16_t){0}, &(uint32_t){0}) == 1)
			;
	}
	snap_free(&s);
	fx_free(f);
	free(log);
}

/* No log: not logging; a log one byte short of the table: refused. */
static void
test_log_config(void **state)
{
	struct fx *f = fx_new(256, F_STD);
	uint64_t need = vsw_virtq_log_size_needed(&f->g.mem);
	uint8_t *log = calloc(1, need);

	(void)state;
	assert_false(vsw_virtq_logging(f->vq));
	assert_int_equal(need, ((f->g.mem.regions[TG_NREGIONS - 1]
					 .guest_phys_addr +
				       f->g.mem.regions[TG_NREGIONS - 1].size -
				       1) >>
				      15) +
			1);
	f->q.cfg.log_base = log;
	f->q.cfg.log_size = need - 1;
	assert_null(vsw_virtq_create(&f->q.cfg));
	assert_int_equal(rte_errno, EINVAL);
	f->q.cfg.log_size = need;
	fx_reinit(f);
	assert_true(vsw_virtq_logging(f->vq));
	fx_free(f);
	free(log);
}

int test_virtq_log_run(void);

int
test_virtq_log_run(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_log_enqueue, fx_pool_setup,
			fx_pool_teardown),
		cmocka_unit_test_setup_teardown(test_log_dequeue, fx_pool_setup,
			fx_pool_teardown),
		cmocka_unit_test_setup_teardown(test_log_config, fx_pool_setup,
			fx_pool_teardown),
	};

	return cmocka_run_group_tests_name("virtq_log", tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Dirty logging (vhost/virtq/virtq_log.c, virtq_packed*.c) against a
 * reference, one set of cases over split and packed rings (virtq_log_ref.h):
 * guest memory is snapshotted before each burst and compared after, and
 * every 4 KiB page whose bytes changed must have its bit in the log. Random
 * RX chains (lengths, indirect, regions and their boundaries, mergeable or
 * not; the ring type posts them its way), random multi-segment packets,
 * TX bursts; the log starts poisoned with nothing, is cleared between
 * bursts the way QEMU clears it, and pages logged though unchanged are
 * counted (a few: a copy that rewrites equal bytes). Without a log queues
 * write no bit; a log smaller than the memory table needs is refused at
 * create. The ring types' own limits are in their files.
 */
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_mbuf.h>

#include <vsw/virtq.h>

#include "tl_mbuf.h"
#include "tl_rng.h"
#include "virtq_log_ref.h"
#include "virtq_test_common.h"

#define TX_ROUNDS 40u
#define EXTRA_MAX 8u

static const struct vlog_ring *ring; /* the running group's */

void
vlog_snap_take(struct tg_guest *g, struct vlog_snap *s)
{
	uint32_t i;

	for (i = 0; i < g->mem.nregions; i++) {
		if (s->copy[i] == NULL)
			s->copy[i] = malloc(g->mem.regions[i].size);
		assert_non_null(s->copy[i]);
		memcpy(s->copy[i], g->reg[i].base, g->mem.regions[i].size);
	}
}

void
vlog_snap_free(struct vlog_snap *s)
{
	uint32_t i;

	for (i = 0; i < TG_NREGIONS; i++)
		free(s->copy[i]);
}

bool
vlog_bit(const uint8_t *log, uint64_t gpa)
{
	uint64_t p = gpa / VLOG_PAGE;

	return (log[p / 8] >> (p % 8)) & 1;
}

uint32_t
vlog_snap_check(struct tg_guest *g, const struct vlog_snap *s,
	const uint8_t *log, uint32_t *extra)
{
	uint32_t i, changed = 0;
	uint64_t off;

	for (i = 0; i < g->mem.nregions; i++) {
		const struct vsw_mem_region *r = &g->mem.regions[i];

		for (off = 0; off < r->size; off += VLOG_PAGE) {
			uint64_t n = RTE_MIN(VLOG_PAGE, r->size - off);
			bool diff = memcmp(s->copy[i] + off,
					    g->reg[i].base + off, n) != 0;
			bool bit = vlog_bit(log, r->guest_phys_addr + off);

			if (diff && !bit)
				fail_msg("page %#llx written, not logged",
					(unsigned long long)(r->guest_phys_addr +
							     off));
			changed += diff;
			*extra += bit && !diff;
		}
	}
	return changed;
}

struct lq {
	void *q;
	uint8_t *log;
	uint64_t size;
};

/* A queue of the ring type under test, logging from its start. */
static void
lq_new(struct lq *l, uint32_t size, uint64_t features)
{
	struct vsw_virtq_config *c;

	l->q = ring->create(size, features);
	c = ring->cfg(l->q);
	l->size = vsw_virtq_log_size_needed(&ring->guest(l->q)->mem);
	l->log = calloc(1, l->size);
	assert_non_null(l->log);
	c->log_base = l->log;
	c->log_size = l->size;
	ring->restart(l->q);
	assert_true(vsw_virtq_logging(ring->vq(l->q)));
}

static void
lq_free(struct lq *l)
{
	ring->destroy(l->q);
	free(l->log);
}

static void
rx_rounds(const struct vlog_cfg *cfg)
{
	bool mrg = cfg->features & F_MRG;
	struct tl_rng *rng = ring->rng;
	struct vlog_snap s = {{NULL}};
	uint32_t r, changed = 0, extra = 0;
	uint64_t logged;
	struct lq l;

	lq_new(&l, cfg->size, cfg->features);
	for (r = 0; r < ring->rounds; r++) {
		struct tg_guest *g = ring->guest(l.q);
		struct rte_mbuf *m[VSW_VIRTQ_BURST_MAX];
		static uint8_t data[9000];
		uint32_t n = tl_rand_range(rng, 1, VSW_VIRTQ_BURST_MAX);
		uint32_t i;

		tg_data_reset(g);
		if (r % 3 == 0) /* chains across a region boundary */
			tg_data_near_boundary(g, tl_rand_range(rng, 1, 3000));
		ring->rx_post_random(l.q, mrg);
		for (i = 0; i < n; i++) {
			uint32_t len =
				tl_rand_range(rng, 14, mrg ? 9000 : 1500);

			tl_rand_bytes(rng, data, len);
			m[i] = tl_mbuf_build(*ring->pool, data, len, rng,
				tl_rand_range(rng, 0, 1)
					? 0
					: tl_rand_range(rng, 60, 2000));
			assert_non_null(m[i]);
		}
		memset(l.log, 0, l.size); /* QEMU: exchanged to 0 as synced */
		vlog_snap_take(g, &s);
		vsw_virtq_enqueue_burst(ring->vq(l.q), m, (uint16_t)n);
		changed += vlog_snap_check(g, &s, l.log, &extra);
		for (i = 0; i < n; i++)
			rte_pktmbuf_free(m[i]);
		ring->rx_drain(l.q);
	}
	logged = vsw_virtq_stat(ring->vq(l.q), VSW_VIRTQ_STAT_LOG_PAGES);
	print_message("# %s ring %u features %#llx: %u pages written, %llu "
		      "logged, %u logged unchanged\n",
		ring->name, cfg->size, (unsigned long long)cfg->features,
		changed, (unsigned long long)logged, extra);
	assert_true(changed > ring->rounds);
	/* unchanged-but-logged pages: equal bytes rewritten (used ring
	 * entries, headers) only */
	assert_true(extra <= changed);
	vlog_snap_free(&s);
	lq_free(&l);
}

static void
test_log_enqueue(void **state)
{
	(void)state;
	for (unsigned i = 0; i < ring->n_rx_cfgs; i++)
		rx_rounds(&ring->rx_cfgs[i]);
}

/* TX: only used entries (and the split used index) are written, and
 * logged; the page of the used entries every burst. */
static void
test_log_dequeue(void **state)
{
	struct tl_rng *rng = ring->rng;
	struct vlog_snap s = {{NULL}};
	uint32_t r, changed = 0, extra = 0;
	struct lq l;

	(void)state;
	lq_new(&l, ring->tx_size, F_STD);
	for (r = 0; r < TX_ROUNDS; r++) {
		struct tg_guest *g = ring->guest(l.q);
		uint8_t frame[1600];
		uint32_t n = tl_rand_range(rng, 1, 20), i;

		for (i = 0; i < n; i++) {
			uint32_t len = tl_rand_range(rng, 60, 1500);

			tl_rand_bytes(rng, frame, len);
			ring->tx_post(l.q, frame, len);
		}
		memset(l.log, 0, l.size);
		vlog_snap_take(g, &s);
		assert_int_equal(ring->tx_dequeue(l.q, VSW_VIRTQ_BURST_MAX), n);
		changed += vlog_snap_check(g, &s, l.log, &extra);
		assert_true(vlog_bit(l.log, ring->tx_used_gpa(l.q)));
		ring->tx_reap(l.q);
	}
	assert_true(changed >= TX_ROUNDS);
	vlog_snap_free(&s);
	lq_free(&l);
}

/* No log: not logging; a log one byte short of the table: refused. */
static void
test_log_config(void **state)
{
	void *q = ring->create(ring->tx_size, F_V1);
	struct tg_guest *g = ring->guest(q);
	struct vsw_virtq_config *c = ring->cfg(q);
	uint64_t need = vsw_virtq_log_size_needed(&g->mem);
	uint8_t *log = calloc(1, need);

	(void)state;
	assert_non_null(log);
	assert_false(vsw_virtq_logging(ring->vq(q)));
	assert_int_equal(
		need, ((g->mem.regions[TG_NREGIONS - 1].guest_phys_addr +
			       g->mem.regions[TG_NREGIONS - 1].size - 1) >>
			      15) +
			      1);
	c->log_base = log;
	c->log_size = need - 1;
	assert_null(vsw_virtq_create(c));
	assert_int_equal(rte_errno, EINVAL);
	c->log_size = need;
	ring->restart(q);
	assert_true(vsw_virtq_logging(ring->vq(q)));
	ring->destroy(q);
	free(log);
}

int
vlog_run(const struct vlog_ring *r, const struct CMUnitTest *extra,
	size_t n_extra)
{
	struct CMUnitTest tests[3 + EXTRA_MAX] = {
		cmocka_unit_test_setup_teardown(
			test_log_enqueue, r->setup, r->teardown),
		cmocka_unit_test_setup_teardown(
			test_log_dequeue, r->setup, r->teardown),
		cmocka_unit_test_setup_teardown(
			test_log_config, r->setup, r->teardown),
	};

	if (n_extra > EXTRA_MAX)
		return 1;
	if (n_extra != 0)
		memcpy(&tests[3], extra, n_extra * sizeof(*extra));
	ring = r;
	return _cmocka_run_group_tests(r->name, tests, 3 + n_extra, NULL, NULL);
}

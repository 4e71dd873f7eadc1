/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The split ring for the dirty-log cases (test_virtq_log.c): RX chains of
 * 1 to 4 buffers, direct or indirect, posted 1 to 40 a burst; TX frames in
 * one direct buffer, visible as posted; every TX burst writes the used
 * index's page.
 */
#include <stdlib.h>

#include "test_virtq.h"
#include "virtq_log_ref.h"

static void *
split_create(uint32_t size, uint64_t features)
{
	return fx_new(size, features);
}

static void
split_restart(void *q)
{
	fx_resume(q);
}

static void
split_destroy(void *q)
{
	fx_free(q);
}

static struct vsw_virtq_config *
split_cfg(void *q)
{
	return &((struct fx *)q)->q.cfg;
}

static struct tg_guest *
split_guest(void *q)
{
	return &((struct fx *)q)->g;
}

static struct vsw_virtq *
split_vq(void *q)
{
	return ((struct fx *)q)->vq;
}

static void
split_rx_post_random(void *q, bool mrg)
{
	struct fx *f = q;
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
split_rx_drain(void *q)
{
	static uint8_t buf[65536];
	struct fx *f = q;
	uint16_t nb;

	while (tg_rx_recv(&f->q, buf, sizeof(buf), &nb) != -1)
		;
}

static void
split_tx_post(void *q, const uint8_t *frame, uint32_t len)
{
	struct fx *f = q;
	uint32_t piece = 12 + len;

	assert_true(tg_tx_post(&f->q, frame, len, &piece, 1, false) >= 0);
	tg_kick(&f->q);
}

static uint16_t
split_tx_dequeue(void *q, uint16_t n)
{
	struct rte_mbuf *m[VSW_VIRTQ_BURST_MAX];
	struct fx *f = q;
	uint16_t got;

	got = vsw_virtq_dequeue_burst(f->vq, test_pool, m, n);
	rte_pktmbuf_free_bulk(m, got);
	return got;
}

static void
split_tx_reap(void *q)
{
	while (tg_used_pop(&((struct fx *)q)->q, &(uint16_t){0},
		       &(uint32_t){0}) == 1)
		;
}

static uint64_t
split_tx_used_gpa(void *q)
{
	return ((struct fx *)q)->q.cfg.used_gpa;
}

static const struct vlog_cfg split_rx_cfgs[] = {
	{256, F_STD | F_EVT},
	{256, F_V1 | F_IND},
};

int
test_virtq_log_run(void)
{
	static const struct vlog_ring split = {
		.name = "virtq_log",
		.rng = &test_rng,
		.pool = &test_pool,
		.setup = fx_pool_setup,
		.teardown = fx_pool_teardown,
		.create = split_create,
		.restart = split_restart,
		.destroy = split_destroy,
		.cfg = split_cfg,
		.guest = split_guest,
		.vq = split_vq,
		.rx_post_random = split_rx_post_random,
		.rx_drain = split_rx_drain,
		.tx_post = split_tx_post,
		.tx_dequeue = split_tx_dequeue,
		.tx_reap = split_tx_reap,
		.tx_used_gpa = split_tx_used_gpa,
		.rx_cfgs = split_rx_cfgs,
		.n_rx_cfgs = RTE_DIM(split_rx_cfgs),
		.rounds = 60,
		.tx_size = 256,
	};

	return vlog_run(&split, NULL, 0);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The split-ring tests' fixture (test_virtq.h): one vsw_virtq and the
 * software guest that drives it, the counters checked against the last
 * check, the mempool audited around every case.
 */
#include <stdlib.h>
#include <string.h>

#include "test_virtq.h"

struct rte_mempool *test_pool;
struct tl_rng test_rng;
static unsigned int pool_baseline;

static void
fx_notify(void *ctx)
{
	((struct fx *)ctx)->kicks++;
}

struct fx *
fx_new(uint32_t size, uint64_t features)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(tg_guest_init(&f->g), 0);
	assert_int_equal(tg_vq_init(&f->q, &f->g, size, features), 0);
	f->q.cfg.notify = fx_notify;
	f->q.cfg.notify_ctx = f;
	f->q.cfg.name = "test q0";
	f->vq = vsw_virtq_create(&f->q.cfg);
	assert_non_null(f->vq);
	return f;
}

void
fx_reinit(struct fx *f)
{
	vsw_virtq_destroy(f->vq);
	f->vq = vsw_virtq_create(&f->q.cfg);
	assert_non_null(f->vq);
	memset(f->seen, 0, sizeof(f->seen));
}

void
fx_resume(struct fx *f)
{
	f->q.cfg.last_avail_idx = vsw_virtq_last_avail_idx(f->vq);
	f->q.cfg.last_used_idx = vsw_virtq_last_used_idx(f->vq);
	fx_reinit(f);
}

void
fx_free(struct fx *f)
{
	vsw_virtq_destroy(f->vq);
	tg_vq_fini(&f->q);
	tg_guest_fini(&f->g);
	free(f);
}

void
fx_expect(struct fx *f, const struct stat_delta *d, size_t n)
{
	virtq_stats_expect(f->vq, f->seen, d, n);
}

void
fx_set_desc(struct fx *f, uint16_t i, uint64_t addr, uint32_t len,
	uint16_t flags, uint16_t next)
{
	f->q.desc[i] = (struct vring_desc){addr, len, flags, next};
}

struct rte_mbuf *
fx_mbuf(uint32_t len, uint8_t pattern)
{
	return virtq_test_mbuf(test_pool, len, pattern);
}

void
fx_tx_drop(struct fx *f, uint16_t head, enum vsw_virtq_stat drop,
	enum vsw_virtq_stat err)
{
	struct rte_mbuf *m[4];
	uint16_t id;
	uint32_t len;

	tg_avail_push_raw(&f->q, head);
	tg_kick(&f->q);
	assert_int_equal(vsw_virtq_dequeue_burst(f->vq, test_pool, m, 4), 0);
	assert_int_equal(tg_used_pop(&f->q, &id, &len), 1);
	assert_int_equal(id, head);
	assert_int_equal(len, 0);
	if (err == VSW_VIRTQ_STAT__MAX)
		FX_EXPECT(f, {drop, 1}, {S(NOTIFY_SENT), 1});
	else
		FX_EXPECT(f, {drop, 1}, {err, 1}, {S(NOTIFY_SENT), 1});
	assert_false(vsw_virtq_broken(f->vq));
}

int
fx_pool_setup(void **state)
{
	(void)state;
	pool_baseline = virtq_pool_mark(test_pool);
	return 0;
}

/* Every mbuf is back, once: a double free that hides a leak keeps the
 * in-use count right but leaves an mbuf in the pool twice. */
int
fx_pool_teardown(void **state)
{
	(void)state;
	virtq_pool_check(test_pool, pool_baseline);
	return 0;
}

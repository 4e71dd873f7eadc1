/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by the test_virtq*.c files: one queue + its guest, helpers. */
#ifndef VSW_TEST_VIRTQ_H
#define VSW_TEST_VIRTQ_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <rte_common.h>
#include <rte_mbuf.h>

#include <vsw/virtq.h>

#include "guest.h"
#include "pool_audit.h"
#include "tl_mbuf.h"
#include "tl_rng.h"
#include "virtq_test_common.h"

struct fx {
	struct tg_guest g;
	struct tg_vq q;
	struct vsw_virtq *vq;
	unsigned int kicks;
	uint64_t seen[VSW_VIRTQ_STAT__MAX]; /* counters at the last check */
};

extern struct rte_mempool *test_pool;
extern struct tl_rng test_rng;

struct fx *fx_new(uint32_t size, uint64_t features);
/* Re-creates the vsw_virtq from the guest's config (reconnect). */
void fx_reinit(struct fx *f);
/* The same, resuming at the queue's ring position (the port's way). */
void fx_resume(struct fx *f);
void fx_free(struct fx *f);

/* Asserts that exactly these counters moved, by exactly these amounts. */
void fx_expect(struct fx *f, const struct stat_delta *d, size_t n);
#define FX_EXPECT(f, ...)                                                      \
	do {                                                                   \
		const struct stat_delta d_[] = {__VA_ARGS__};                  \
		fx_expect(f, d_, RTE_DIM(d_));                                 \
	} while (0)
#define FX_NOTHING(f) fx_expect(f, NULL, 0)

/* One single-segment mbuf holding len bytes of pattern. */
struct rte_mbuf *fx_mbuf(uint32_t len, uint8_t pattern);
/* Writes descriptor i of f's ring as a guest would (not yet posted). */
void fx_set_desc(struct fx *f, uint16_t i, uint64_t addr, uint32_t len,
	uint16_t flags, uint16_t next);

/*
 * Offers head on TX alone: the burst returns nothing, the chain comes back
 * used with length 0, exactly drop (+ err unless VSW_VIRTQ_STAT__MAX) and
 * one notification moved, the ring is not broken.
 */
void fx_tx_drop(struct fx *f, uint16_t head, enum vsw_virtq_stat drop,
	enum vsw_virtq_stat err);

/* cmocka setup/teardown: the mempool is whole (each free mbuf in it once,
 * tg_pool_audit) and what is in use returns to the baseline. */
int fx_pool_setup(void **state);
int fx_pool_teardown(void **state);

/* A frame's bytes as the test made them (malloc'd). */
struct frame {
	uint8_t *data;
	uint32_t len;
};

/* Cases of the group "virtq" (test_virtq.c's main) in other files:
 * test_virtq_notify.c */
void test_notify_flags(void **state);
void test_notify_event_idx(void **state);
void test_full_ring(void **state);
void test_reconnect(void **state);

int test_virtq_hostile_run(void);
int test_net_hdr_run(void); /* test_net_hdr.c */
int test_virtq_log_run(void); /* test_virtq_log_split.c: dirty logging */
/* test_virtq_isa.c: VSW_TEST_DATAPATH (0 go on, 1 skipped, < 0 error) */
int test_virtq_datapath_select(void);
int test_virtq_isa_run(void);
int test_virtq_inorder_run(void); /* test_virtq_inorder.c */
int test_virtq_prefetch_run(void); /* test_virtq_prefetch.c */
int test_virtq_defer_run(void); /* test_virtq_defer.c */

#endif /* VSW_TEST_VIRTQ_H */

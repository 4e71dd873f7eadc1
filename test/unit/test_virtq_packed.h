/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by the packed-ring unit tests: one packed queue + its guest. */
#ifndef VSW_TEST_VIRTQ_PACKED_H
#define VSW_TEST_VIRTQ_PACKED_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <rte_common.h>
#include <rte_mbuf.h>

#include <vsw/virtq.h>

#include "guest_packed.h"
#include "pool_audit.h"
#include "tl_mbuf.h"
#include "tl_rng.h"
#include "virtq_test_common.h"

struct pfx {
	struct tg_guest g;
	struct tgp_vq q;
	struct vsw_virtq *vq;
	unsigned int kicks;
	uint64_t seen[VSW_VIRTQ_STAT__MAX];
};

extern struct rte_mempool *ptest_pool;
extern struct tl_rng ptest_rng;

struct pfx *pfx_new(uint32_t size, uint64_t features);
/* Re-creates the queue at its ring position (the port's reconnect). */
void pfx_resume(struct pfx *f);
void pfx_free(struct pfx *f);

/* Asserts that exactly these counters moved, by exactly these amounts. */
void pfx_expect(struct pfx *f, const struct stat_delta *d, size_t n);
#define PFX_EXPECT(f, ...)                                                     \
	do {                                                                   \
		const struct stat_delta d_[] = {__VA_ARGS__};                  \
		pfx_expect(f, d_, RTE_DIM(d_));                                \
	} while (0)
#define PFX_NOTHING(f) pfx_expect(f, NULL, 0)

/* Dequeues one burst of up to n; frees the mbufs; returns the count. */
uint16_t pfx_deq(struct pfx *f, uint16_t n);
/* A single-segment mbuf of len bytes of pattern. */
struct rte_mbuf *pfx_mbuf(uint32_t len, uint8_t pattern);

int pfx_pool_setup(void **state);
int pfx_pool_teardown(void **state);

int test_virtq_packed_hostile_run(void);
int test_virtq_packed_budget_run(void);
int test_virtq_packed_log_run(void);
int test_virtq_packed_offl_run(void);
int test_virtq_packed_inorder_run(void);
int test_virtq_packed_batch_run(void);
int test_virtq_packed_batch_lens_run(void);
int test_virtq_packed_defer_run(void);

/* test_virtq_packed_batch.c's frames and helpers, shared with
 * test_virtq_packed_batch_lens.c. */
extern uint8_t pb_frames[64][3000];
/* The RX chains the guest has posted and the device not yet taken, in
 * ring order (their capacities), across bursts. */
struct rxm {
	uint32_t cap[4096];
	uint32_t head, tail;
};

void pb_rx_seq(struct pfx *f, struct rxm *r, const char *kinds,
	const uint32_t *caps, uint32_t npk, const uint32_t *plens, bool seg2);
/* A TX buffer: header + n bytes of pb_frames[k]; its gpa. */
uint64_t pb_tx_raw_buf(struct pfx *f, uint32_t k, uint32_t n);
/* Dequeues one burst; the frames listed in want[] must come out, in
 * order; returns the count. */
uint16_t pb_deq_expect(struct pfx *f, const uint32_t *want, uint16_t n,
	uint32_t len);
/* Checks the used descriptor at slot: id, len and this lap's flags. */
void pb_used_at(struct pfx *f, uint16_t slot, uint16_t id, uint32_t len,
	bool wrap);

#endif /* VSW_TEST_VIRTQ_PACKED_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The work bounds of issue 10 item 5 on packed rings (as hostile_budget.c
 * for split rings): a guest keeping its packed TX or RX ring full of the
 * costliest legal chains (one INDIRECT slot, a table of VSW_VIRTQ_CHAIN_MAX
 * one-byte entries: 257 descriptors read a chain) for a second, and a
 * direct chain one ring slot longer than CHAIN_MAX. The rings are 512
 * (vu_front's largest packed ring): a burst meets the 2,048-descriptor
 * budget after 8 chains. What the front-end checks itself: every TX chain
 * it posted comes back used with its id and length 0 (cut bursts lose
 * nothing); the long chain comes back with length 0 and the queue goes
 * on. The driver checks the counters and the a -> b pair's rate.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "hostile.h"

#define RS 512u
#define TXQ 1u
#define RXQ 0u
#define F_PACKED (1ull << 34)
#define CHAIN_MAX 256u /* VSW_VIRTQ_CHAIN_MAX: the tests' own copy */
#define DATA_OFF 0x0u
#define TXTAB_OFF 0x1000u
#define RXTAB_OFF 0x3000u
#define RXDATA_OFF 0x5000u
#define ATTACK_MS 1000

static uint64_t
gpa_of(struct hs_ctx *c, uint32_t off)
{
	return vu_gpa(&c->f, vu_ptr(&c->f, VU_SCRATCH + off));
}

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int
dev_up(struct hs_ctx *c)
{
	int rc = vu_open(&c->f, c->path);

	if (rc == 0 && ((rc = vu_negotiate(&c->f, VU_FEATURES_DEFAULT |
					F_PACKED)) ||
			       (rc = vu_mem_table(&c->f)) ||
			       (rc = vu_vring_setup_packed(&c->f, RXQ, RS)) ||
			       (rc = vu_vring_setup_packed(&c->f, TXQ, RS))))
		vu_close(&c->f);
	if (rc != 0)
		hs_note("packed device set-up failed: %s", strerror(-rc));
	return rc;
}

/* A table of n one-byte entries (dir: 0 or WRITE) at off over data. */
static uint64_t
table(struct hs_ctx *c, uint32_t off, uint32_t data, uint32_t n, uint16_t dir)
{
	struct vring_packed_desc *t = vu_ptr(&c->f, VU_SCRATCH + off);
	uint32_t i;

	for (i = 0; i < n; i++)
		t[i] = (struct vring_packed_desc){gpa_of(c, data + i), 1, 0,
			dir};
	return gpa_of(c, off);
}

/* Offers slot `next_avail` with id = slot; moves the position on. */
static void
offer(struct hs_ctx *c, uint32_t q, uint64_t addr, uint32_t len,
	uint16_t flags)
{
	struct vu_ring *r = &c->f.q[q];

	vu_pdesc_set(&c->f, q, r->next_avail, addr, len, r->next_avail,
		(uint16_t)(flags | vu_pavail(r->avail_wrap)));
	if (++r->next_avail == r->size) {
		r->next_avail = 0;
		r->avail_wrap = !r->avail_wrap;
	}
}

/*
 * Keeps ring q full of INDIRECT slots (table tab, CHAIN_MAX entries) for
 * ATTACK_MS; TX: then every chain must come back, id in order, length 0.
 */
static int
flood(struct hs_ctx *c, uint32_t q, uint64_t tab)
{
	struct vu_ring *r = &c->f.q[q];
	uint64_t t0 = now_ms(), taken = 0;
	uint32_t out = 0;
	uint16_t id;
	uint32_t len;
	int i;

	while (now_ms() - t0 < ATTACK_MS) {
		while (vu_pused_pop(&c->f, q, 1, &id, &len)) {
			if (q == TXQ && (id != (r->next_used + RS - 1) % RS ||
					    len != 0)) {
				hs_note("used id %u len %u", id, len);
				return 1;
			}
			out--;
			taken++;
		}
		while (out < RS) {
			offer(c, q, tab, 16 * CHAIN_MAX,
				VRING_DESC_F_INDIRECT);
			out++;
		}
		hs_sleep_ms(1);
	}
	for (i = 0; q == TXQ && out != 0 && i < 5000; i++) {
		while (out != 0 && vu_pused_pop(&c->f, q, 1, &id, &len))
			out--;
		hs_sleep_ms(1);
	}
	if (q == TXQ && out != 0) {
		hs_note("%u posted chains never came back", out);
		return 1;
	}
	if (taken == 0) {
		hs_note("no chain used in %d ms", ATTACK_MS);
		return 1;
	}
	hs_note("packed ring %u: %llu chains of %u descriptors in %d ms", RS,
		(unsigned long long)taken, CHAIN_MAX + 1, ATTACK_MS);
	return 0;
}

static int
s_ptx_flood(struct hs_ctx *c)
{
	uint8_t *d;

	if (dev_up(c) != 0)
		return 1;
	d = vu_ptr(&c->f, VU_SCRATCH + DATA_OFF);
	memset(d, 0, VU_HDR_LEN);
	hs_frame(d + VU_HDR_LEN, CHAIN_MAX - VU_HDR_LEN, 9);
	return flood(c, TXQ, table(c, TXTAB_OFF, DATA_OFF, CHAIN_MAX, 0));
}

static int
s_prx_flood(struct hs_ctx *c)
{
	if (dev_up(c) != 0)
		return 1;
	return flood(c, RXQ, table(c, RXTAB_OFF, RXDATA_OFF, CHAIN_MAX,
				     VRING_DESC_F_WRITE));
}

/* A direct chain of CHAIN_MAX + 1 one-byte slots, then a good frame. */
static int
s_pchain_long(struct hs_ctx *c)
{
	struct vu_ring *r = &c->f.q[TXQ];
	uint16_t id, slot;
	uint32_t i, len;

	if (dev_up(c) != 0)
		return 1;
	memset(vu_ptr(&c->f, VU_SCRATCH + DATA_OFF), 0, VU_HDR_LEN);
	for (i = 0; i <= CHAIN_MAX; i++) {
		slot = r->next_avail;
		vu_pdesc_set(&c->f, TXQ, slot, gpa_of(c, DATA_OFF + i), 1,
			(uint16_t)CHAIN_MAX,
			(uint16_t)(vu_pavail(r->avail_wrap) |
				(i < CHAIN_MAX ? VRING_DESC_F_NEXT : 0)));
		if (++r->next_avail == r->size) {
			r->next_avail = 0;
			r->avail_wrap = !r->avail_wrap;
		}
	}
	offer(c, TXQ, gpa_of(c, DATA_OFF), VU_HDR_LEN + 60, 0);
	for (i = 0; i < 3000 && !vu_pused_pop(&c->f, TXQ, CHAIN_MAX + 1, &id,
				     &len); i++)
		hs_sleep_ms(1);
	if (i == 3000 || id != CHAIN_MAX || len != 0) {
		hs_note("chain of %u not returned with length 0",
			CHAIN_MAX + 1);
		return 1;
	}
	for (i = 0; i < 3000 && !vu_pused_pop(&c->f, TXQ, 1, &id, &len); i++)
		hs_sleep_ms(1);
	if (i == 3000 || id != CHAIN_MAX + 1) {
		hs_note("the frame after the long chain was not consumed");
		return 1;
	}
	return 0;
}

const struct hs_scenario hs_packed_budget_scenarios[] = {
	{"packed-tx-budget-flood", "budget_cut,deq_packets",
		"packed TX ring 512 kept full: INDIRECT slots of 256 one-byte "
		"entries, for 1 s",
		s_ptx_flood},
	{"packed-rx-budget-flood", "budget_cut,enq_drop_budget",
		"packed RX ring 512 kept full: INDIRECT slots of 256 one-byte "
		"write entries",
		s_prx_flood},
	{"packed-tx-chain-257", "err_chain_len,deq_drop_bad_desc",
		"packed direct chain of 257 slots (> VSW_VIRTQ_CHAIN_MAX)",
		s_pchain_long},
};
const size_t hs_n_packed_budget = sizeof(hs_packed_budget_scenarios) /
	sizeof(hs_packed_budget_scenarios[0]);

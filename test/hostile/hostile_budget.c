/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Work per burst (issue 10, item 5): a guest that posts the most
 * descriptors it legally may, so that every burst vsw takes costs as much
 * as it can, must not starve the ports that share its PMD. The worst legal
 * layout: every avail entry the same head, an INDIRECT descriptor pointing
 * at the longest table allowed (VSW_VIRTQ_CHAIN_MAX one-byte entries), the
 * whole ring kept full for a second. Also the ring-size cap (the port's
 * max-ring-size, default 1024) and a chain one descriptor too long.
 *
 * What the front-end checks itself: every chain it posted comes back used
 * (the budget cuts bursts short, it loses nothing), with length 0; it
 * prints the PMD iteration time the attack implies (chains per burst from
 * the budget; elapsed time / bursts) as a note. The driver checks the
 * counters and that the a -> b pair kept >= 90 % of its quiet rate.
 * Scenarios whose counters say "!port=hbig" run on the driver's port with
 * max-ring-size=32768.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "hostile.h"

#define TXQ 1u
#define RXQ 0u
#define CHAIN_MAX 256u	  /* VSW_VIRTQ_CHAIN_MAX: the tests' own copy */
#define BURST_DESCS 2048u /* VSW_VIRTQ_BURST_DESCS */
#define DATA_OFF 0x0u	  /* the bytes the one-byte descriptors name */
#define TXTAB_OFF 0x1000u /* TX indirect table */
#define RXTAB_OFF 0x3000u /* RX indirect table */
#define RXDATA_OFF 0x5000u
#define RING_OFF 0x100000u   /* the big TX ring: up to ~836 KiB */
#define BIGTAB_OFF 0x200000u /* the issue's table: 32768 entries, 512 KiB */
#define BIGDATA_OFF 0x300000u
#define ATTACK_MS 1000

static uint64_t
gpa_of(struct hs_ctx *c, uint32_t off)
{
	return vu_gpa(&c->f, vu_ptr(&c->f, VU_SCRATCH + off));
}

static uint64_t
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Connected, negotiated, memory table, RX ring of 256 laid out as usual. */
static int
negotiated(struct hs_ctx *c)
{
	int rc = vu_open(&c->f, c->path);

	if (rc == 0)
		rc = vu_negotiate(&c->f, VU_FEATURES_DEFAULT);
	if (rc == 0)
		rc = vu_mem_table(&c->f);
	if (rc != 0)
		hs_note("set-up failed: %s", strerror(-rc));
	return rc;
}

/* The TX ring with n entries in scratch memory, sent like any other. */
static int
tx_ring(struct hs_ctx *c, uint32_t n)
{
	struct vu_ring *r = &c->f.q[TXQ];
	uint8_t *area = vu_ptr(&c->f, VU_SCRATCH + RING_OFF);

	memset(area, 0, vring_size(n, 4096));
	vring_init(&r->vr, n, area, 4096);
	r->size = n;
	r->avail_idx = r->used_seen = 0;
	return vu_vring_resume(&c->f, TXQ, 0);
}

/* Descriptor 0 of ring q: INDIRECT, a table of n one-byte entries. */
static void
one_byte_table(struct hs_ctx *c, uint32_t q, uint32_t n, uint16_t dir)
{
	uint32_t off =
		q == TXQ ? (n > CHAIN_MAX ? BIGTAB_OFF : TXTAB_OFF) : RXTAB_OFF;
	uint32_t data = q == TXQ ? (n > CHAIN_MAX ? BIGDATA_OFF : DATA_OFF)
				 : RXDATA_OFF;
	struct vring_desc *t = vu_ptr(&c->f, VU_SCRATCH + off);
	uint32_t i;

	for (i = 0; i < n; i++)
		t[i] = (struct vring_desc){gpa_of(c, data + i), 1,
			(uint16_t)(dir | (i + 1 < n ? VRING_DESC_F_NEXT : 0)),
			(uint16_t)(i + 1)};
	c->f.q[q].vr.desc[0] = (struct vring_desc){
		gpa_of(c, off), 16 * n, VRING_DESC_F_INDIRECT, 0};
}

/*
 * Keeps TX ring n full of head 0 (a table of tab one-byte entries) for
 * ATTACK_MS, then waits until every entry came back used with length 0.
 * Notes the PMD iteration time the budget implies.
 */
static int
tx_flood(struct hs_ctx *c, uint32_t n, uint32_t tab)
{
	struct vu_ring *r = &c->f.q[TXQ];
	uint32_t data = tab > CHAIN_MAX ? BIGDATA_OFF : DATA_OFF;
	uint64_t t0, dt, taken = 0;
	uint32_t per_burst = (BURST_DESCS + tab) / (tab + 1);
	uint16_t u, seen = 0;
	uint32_t i;

	/* header 0, then a frame: one byte per descriptor */
	memset(vu_ptr(&c->f, VU_SCRATCH + data), 0, VU_HDR_LEN);
	hs_frame(vu_ptr(&c->f, VU_SCRATCH + data + VU_HDR_LEN),
		tab - VU_HDR_LEN, 9);
	one_byte_table(c, TXQ, tab, 0);
	t0 = now_us();
	while ((dt = now_us() - t0) < ATTACK_MS * 1000u) {
		u = vu_used_idx(&c->f, TXQ);
		taken += (uint16_t)(u - seen);
		seen = u;
		while ((uint16_t)(r->avail_idx - u) < n)
			vu_avail_push(&c->f, TXQ, 0);
		hs_sleep_ms(1);
	}
	if (!vu_wait_used(&c->f, TXQ, r->avail_idx, 5000)) {
		hs_note("posted chains never all came back (%u in the ring)",
			(uint16_t)(r->avail_idx - vu_used_idx(&c->f, TXQ)));
		return 1;
	}
	for (i = 0; i < n; i++) {
		const struct vring_used_elem *e = &r->vr.used->ring[i];

		if (e->id != 0 || e->len != 0) {
			hs_note("used entry %u: id %u len %u", i, e->id,
				e->len);
			return 1;
		}
	}
	if (taken == 0) {
		hs_note("no chain taken in %d ms", ATTACK_MS);
		return 1;
	}
	if (tab > CHAIN_MAX) {
		hs_note("ring %u: %llu chains of a %u-entry table refused in "
			"%llu ms",
			n, (unsigned long long)taken, tab,
			(unsigned long long)(dt / 1000));
		return 0;
	}
	hs_note("ring %u: %llu chains of %u descriptors in %llu ms; at %u "
		"chains a burst, %.1f us per PMD iteration",
		n, (unsigned long long)taken, tab + 1,
		(unsigned long long)(dt / 1000), per_burst,
		(double)dt * per_burst / (double)taken);
	return 0;
}

/* The issue's layout: a 32768 ring, a table of 32768 one-byte entries
 * (refused now: err_indirect_len; before issue 10, 9 ms a burst). */
static int
s_tx_flood_issue(struct hs_ctx *c)
{
	if (negotiated(c) != 0 || vu_vring_setup(&c->f, RXQ, 256) != 0 ||
		tx_ring(c, 32768) != 0)
		return 1;
	return tx_flood(c, 32768, 32768);
}

static int
s_tx_flood_cap(struct hs_ctx *c)
{
	if (negotiated(c) != 0 || vu_vring_setup(&c->f, RXQ, 256) != 0 ||
		tx_ring(c, 1024) != 0)
		return 1;
	return tx_flood(c, 1024, CHAIN_MAX);
}

static int
s_tx_flood_32k(struct hs_ctx *c)
{
	if (negotiated(c) != 0 || vu_vring_setup(&c->f, RXQ, 256) != 0 ||
		tx_ring(c, 32768) != 0)
		return 1;
	return tx_flood(c, 32768, CHAIN_MAX);
}

/* The same on RX: the peer's frames land in 256-byte chains of 257
 * descriptors; a burst stops after 2048 and drops the rest (counted). */
static int
s_rx_flood(struct hs_ctx *c)
{
	struct vu_ring *r = &c->f.q[RXQ];
	uint64_t t0;
	uint16_t u;

	if (negotiated(c) != 0 || vu_vring_setup(&c->f, RXQ, 256) != 0 ||
		vu_vring_setup(&c->f, TXQ, 256) != 0)
		return 1;
	one_byte_table(c, RXQ, CHAIN_MAX, VRING_DESC_F_WRITE);
	t0 = now_us();
	while (now_us() - t0 < ATTACK_MS * 1000u) {
		u = vu_used_idx(&c->f, RXQ);
		while ((uint16_t)(r->avail_idx - u) < r->size)
			vu_avail_push(&c->f, RXQ, 0);
		hs_sleep_ms(1);
	}
	if (vu_used_idx(&c->f, RXQ) == 0) {
		hs_note("no RX chain used (no traffic?)");
		return 1;
	}
	return 0;
}

/* SET_VRING_NUM above the port's cap: refused, connection closed. */
static int
ring_num(struct hs_ctx *c, uint32_t num)
{
	if (negotiated(c) != 0)
		return 1;
	vu_send_state(&c->f, VU_SET_VRING_NUM, TXQ, num);
	if (!vu_peer_closed(&c->f, 3000)) {
		hs_note("SET_VRING_NUM %u accepted", num);
		return 1;
	}
	return 0;
}

static int
s_num_cap2(struct hs_ctx *c)
{
	return ring_num(c, 2048);
}

static int
s_num_32k(struct hs_ctx *c)
{
	return ring_num(c, 32768);
}

/* A direct chain of CHAIN_MAX + 1 one-byte descriptors (ring 1024). */
static int
s_chain_long(struct hs_ctx *c)
{
	struct vu_ring *r = &c->f.q[TXQ];
	uint16_t i, want;

	if (negotiated(c) != 0 || vu_vring_setup(&c->f, RXQ, 256) != 0 ||
		tx_ring(c, 1024) != 0)
		return 1;
	memset(vu_ptr(&c->f, VU_SCRATCH + DATA_OFF), 0, VU_HDR_LEN);
	for (i = 0; i <= CHAIN_MAX; i++)
		r->vr.desc[i] = (struct vring_desc){gpa_of(c, DATA_OFF + i), 1,
			i < CHAIN_MAX ? VRING_DESC_F_NEXT : 0,
			(uint16_t)(i + 1)};
	want = r->avail_idx + 1;
	vu_avail_push(&c->f, TXQ, 0);
	if (!vu_wait_used(&c->f, TXQ, want, 3000) ||
		r->vr.used->ring[0].len != 0) {
		hs_note("chain of %u not returned with length 0",
			CHAIN_MAX + 1);
		return 1;
	}
	return 0;
}

const struct hs_scenario hs_budget_scenarios[] = {
	{"tx-budget-flood", "budget_cut,deq_packets",
		"ring 1024 (the cap) full of one head: 256 one-byte indirect "
		"entries, for 1 s",
		s_tx_flood_cap},
	{"tx-budget-flood-32k", "budget_cut,deq_packets,!port=hbig",
		"the same with a 32768 ring (max-ring-size=32768)",
		s_tx_flood_32k},
	{"tx-flood-issue-10", "err_indirect_len,deq_drop_bad_desc,!port=hbig",
		"issue 10's layout: ring 32768 of one head, a table of 32768 "
		"one-byte entries",
		s_tx_flood_issue},
	{"rx-budget-flood", "budget_cut,enq_drop_budget",
		"RX ring full of one head: 256 one-byte indirect entries",
		s_rx_flood},
	{"tx-chain-257", "err_chain_len,deq_drop_bad_desc",
		"direct chain of 257 descriptors (> VSW_VIRTQ_CHAIN_MAX)",
		s_chain_long},
	{"ring-size-above-cap", "msg_rejected,disconnects",
		"SET_VRING_NUM 2048 (default max-ring-size 1024)", s_num_cap2},
	{"ring-size-32768-capped", "msg_rejected,disconnects",
		"SET_VRING_NUM 32768 (legal, above the default cap)",
		s_num_32k},
};
const size_t hs_n_budget =
	sizeof(hs_budget_scenarios) / sizeof(hs_budget_scenarios[0]);

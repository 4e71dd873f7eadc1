/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Work per burst (issue 10, item 5), one scenario table over split and
 * packed rings: a guest that posts the most descriptors it legally may, so
 * that every burst vsw takes costs as much as it can, must not starve the
 * ports that share its PMD. The worst legal layout: a ring kept full for a
 * second of INDIRECT chains that point at the longest table allowed
 * (VSW_VIRTQ_CHAIN_MAX one-byte entries: 257 descriptors read a chain;
 * split: every avail entry the same head), on TX and on RX. Also a direct
 * chain one descriptor too long (then a good frame), and, split, the
 * ring-size cap (the port's max-ring-size, default 1024) and the issue's
 * own layout. Packed rings are 512 (vu_front's largest packed ring).
 *
 * What the front-end checks itself: every TX chain it posted comes back
 * used (the budget cuts bursts short, it loses nothing), with its id and
 * length 0; it prints the PMD iteration time the attack implies (chains
 * per burst from the budget; elapsed time / bursts) as a note. The driver
 * checks the counters and that the a -> b pair kept >= 90 % of its quiet
 * rate. Scenarios whose counters say "!port=hbig" run on the driver's
 * port with max-ring-size=32768.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "hostile.h"

#define TXQ 1u
#define RXQ 0u
#define F_PACKED (1ull << 34)
#define PACKED_RING 512u
#define CHAIN_MAX 256u	  /* VSW_VIRTQ_CHAIN_MAX: the tests' own copy */
#define BURST_DESCS 2048u /* VSW_VIRTQ_BURST_DESCS */
#define DATA_OFF 0x0u	  /* the bytes the one-byte descriptors name */
#define TXTAB_OFF 0x1000u /* TX indirect table */
#define RXTAB_OFF 0x3000u /* RX indirect table */
#define RXDATA_OFF 0x5000u
#define RING_OFF 0x100000u   /* the big split TX ring: up to ~836 KiB */
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

/* The split TX ring with n entries in scratch memory, sent like any other. */
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

/*
 * Connected, negotiated, memory table, both rings: packed, 512 each;
 * split, RX 256 and TX tx_size (0: 256 laid out as usual).
 */
static int
dev_up(struct hs_ctx *c, bool packed, uint32_t tx_size)
{
	int rc = vu_open(&c->f, c->path);

	if (rc == 0)
		rc = vu_negotiate(
			&c->f, VU_FEATURES_DEFAULT | (packed ? F_PACKED : 0));
	if (rc == 0)
		rc = vu_mem_table(&c->f);
	if (rc == 0 && packed) {
		rc = vu_vring_setup_packed(&c->f, RXQ, PACKED_RING);
		if (rc == 0)
			rc = vu_vring_setup_packed(&c->f, TXQ, PACKED_RING);
	} else if (rc == 0) {
		rc = vu_vring_setup(&c->f, RXQ, 256);
		if (rc == 0)
			rc = tx_size ? tx_ring(c, tx_size)
				     : vu_vring_setup(&c->f, TXQ, 256);
	}
	if (rc != 0)
		hs_note("%s set-up failed: %s", packed ? "packed" : "split",
			strerror(-rc));
	return rc;
}

/* A flood in progress: ring q full of one chain, an indirect table. */
struct flood {
	uint32_t q;
	uint64_t tab;	 /* the table's address */
	uint32_t tab_n;	 /* its one-byte entries */
	uint16_t seen;	 /* split: used index taken so far */
	uint32_t out;	 /* packed: slots offered, not yet used */
	uint32_t ring_n; /* ring size */
};

/* One ring type's ways to post, keep full and take back a flood. */
struct ring_kind {
	bool packed;
	/* writes the table of fl->tab_n one-byte entries (dir: 0 or WRITE)
	 * at off over data and sets fl->tab */
	void (*table)(struct hs_ctx *c, struct flood *fl, uint32_t off,
		uint32_t data, uint16_t dir);
	void (*fill)(struct hs_ctx *c, struct flood *fl);
	/* chains used since the last call; -1 when a TX one came back with
	 * another id or a length */
	int (*reap)(struct hs_ctx *c, struct flood *fl);
	/* TX: true once every offered chain came back within ms */
	bool (*all_back)(struct hs_ctx *c, struct flood *fl, int ms);
};

/* Split: descriptor 0 INDIRECT, every avail entry head 0. */
static void
split_table(struct hs_ctx *c, struct flood *fl, uint32_t off, uint32_t data,
	uint16_t dir)
{
	struct vring_desc *t = vu_ptr(&c->f, VU_SCRATCH + off);
	uint32_t i, n = fl->tab_n;

	for (i = 0; i < n; i++)
		t[i] = (struct vring_desc){gpa_of(c, data + i), 1,
			(uint16_t)(dir | (i + 1 < n ? VRING_DESC_F_NEXT : 0)),
			(uint16_t)(i + 1)};
	fl->tab = gpa_of(c, off);
	c->f.q[fl->q].vr.desc[0] =
		(struct vring_desc){fl->tab, 16 * n, VRING_DESC_F_INDIRECT, 0};
}

static void
split_fill(struct hs_ctx *c, struct flood *fl)
{
	struct vu_ring *r = &c->f.q[fl->q];
	uint16_t u = vu_used_idx(&c->f, fl->q);

	while ((uint16_t)(r->avail_idx - u) < fl->ring_n)
		vu_avail_push(&c->f, fl->q, 0);
}

static int
split_reap(struct hs_ctx *c, struct flood *fl)
{
	struct vu_ring *r = &c->f.q[fl->q];
	uint16_t u = vu_used_idx(&c->f, fl->q), n = (uint16_t)(u - fl->seen);

	for (; fl->q == TXQ && fl->seen != u; fl->seen++) {
		const struct vring_used_elem *e =
			&r->vr.used->ring[fl->seen % fl->ring_n];

		if (e->id != 0 || e->len != 0) {
			hs_note("used entry %u: id %u len %u",
				fl->seen % fl->ring_n, e->id, e->len);
			return -1;
		}
	}
	fl->seen = u;
	return n;
}

static bool
split_all_back(struct hs_ctx *c, struct flood *fl, int ms)
{
	struct vu_ring *r = &c->f.q[fl->q];

	if (vu_wait_used(&c->f, fl->q, r->avail_idx, ms))
		return true;
	fl->out = (uint16_t)(r->avail_idx - vu_used_idx(&c->f, fl->q));
	return false;
}

/* Packed: each slot INDIRECT, id = slot. */
static void
packed_table(struct hs_ctx *c, struct flood *fl, uint32_t off, uint32_t data,
	uint16_t dir)
{
	struct vring_packed_desc *t = vu_ptr(&c->f, VU_SCRATCH + off);
	uint32_t i;

	for (i = 0; i < fl->tab_n; i++)
		t[i] = (struct vring_packed_desc){
			gpa_of(c, data + i), 1, 0, dir};
	fl->tab = gpa_of(c, off);
}

/* Offers slot `next_avail` with id = slot; moves the position on. */
static void
offer(struct hs_ctx *c, uint32_t q, uint64_t addr, uint32_t len, uint16_t flags)
{
	struct vu_ring *r = &c->f.q[q];

	vu_pdesc_set(&c->f, q, r->next_avail, addr, len, r->next_avail,
		(uint16_t)(flags | vu_pavail(r->avail_wrap)));
	if (++r->next_avail == r->size) {
		r->next_avail = 0;
		r->avail_wrap = !r->avail_wrap;
	}
}

static void
packed_fill(struct hs_ctx *c, struct flood *fl)
{
	for (; fl->out < fl->ring_n; fl->out++)
		offer(c, fl->q, fl->tab, 16 * fl->tab_n, VRING_DESC_F_INDIRECT);
}

static int
packed_reap(struct hs_ctx *c, struct flood *fl)
{
	struct vu_ring *r = &c->f.q[fl->q];
	uint16_t id;
	uint32_t len;
	int n = 0;

	while (fl->out != 0 && vu_pused_pop(&c->f, fl->q, 1, &id, &len)) {
		if (fl->q == TXQ &&
			(id != (r->next_used + r->size - 1) % r->size ||
				len != 0)) {
			hs_note("used id %u len %u", id, len);
			return -1;
		}
		fl->out--;
		n++;
	}
	return n;
}

static bool
packed_all_back(struct hs_ctx *c, struct flood *fl, int ms)
{
	for (int i = 0; fl->out != 0 && i < ms; i++) {
		if (packed_reap(c, fl) < 0)
			return false;
		hs_sleep_ms(1);
	}
	return fl->out == 0;
}

static const struct ring_kind split_kind = {
	false, split_table, split_fill, split_reap, split_all_back};
static const struct ring_kind packed_kind = {
	true, packed_table, packed_fill, packed_reap, packed_all_back};

/*
 * Keeps ring fl->q full of the flood's chain for ATTACK_MS; TX: then every
 * chain must come back, length 0. Notes the PMD iteration time the budget
 * implies.
 */
static int
flood_run(struct hs_ctx *c, const struct ring_kind *k, struct flood *fl)
{
	uint32_t per_burst = (BURST_DESCS + fl->tab_n) / (fl->tab_n + 1);
	uint64_t t0 = now_us(), dt, taken = 0;
	int got;

	while ((dt = now_us() - t0) < ATTACK_MS * 1000u) {
		if ((got = k->reap(c, fl)) < 0)
			return 1;
		taken += (unsigned)got;
		k->fill(c, fl);
		hs_sleep_ms(1);
	}
	if (fl->q == TXQ && (!k->all_back(c, fl, 5000) || k->reap(c, fl) < 0)) {
		hs_note("posted chains never all came back (%u out)", fl->out);
		return 1;
	}
	if (taken == 0) {
		hs_note("no chain used in %d ms", ATTACK_MS);
		return 1;
	}
	if (fl->tab_n > CHAIN_MAX) {
		hs_note("ring %u: %llu chains of a %u-entry table refused in "
			"%llu ms",
			fl->ring_n, (unsigned long long)taken, fl->tab_n,
			(unsigned long long)(dt / 1000));
		return 0;
	}
	if (fl->q == RXQ) { /* the peer's frames set the pace, not the PMD */
		hs_note("%s RX ring %u: %llu chains of %u descriptors used in "
			"%llu ms",
			k->packed ? "packed" : "split", fl->ring_n,
			(unsigned long long)taken, fl->tab_n + 1,
			(unsigned long long)(dt / 1000));
		return 0;
	}
	hs_note("%s TX ring %u: %llu chains of %u descriptors in %llu ms; at "
		"%u chains a burst, %.1f us per PMD iteration",
		k->packed ? "packed" : "split", fl->ring_n,
		(unsigned long long)taken, fl->tab_n + 1,
		(unsigned long long)(dt / 1000), per_burst,
		(double)dt * per_burst / (double)taken);
	return 0;
}

/* TX: a ring of ring_n (0: the packed 512) full of chains of a tab_n
 * table; the frame is one byte per descriptor after a zero header. */
static int
tx_flood(struct hs_ctx *c, const struct ring_kind *k, uint32_t ring_n,
	uint32_t tab_n)
{
	uint32_t data = tab_n > CHAIN_MAX ? BIGDATA_OFF : DATA_OFF;
	struct flood fl = {.q = TXQ, .tab_n = tab_n, .ring_n = ring_n};

	if (k->packed)
		fl.ring_n = PACKED_RING;
	if (dev_up(c, k->packed, ring_n) != 0)
		return 1;
	memset(vu_ptr(&c->f, VU_SCRATCH + data), 0, VU_HDR_LEN);
	hs_frame(vu_ptr(&c->f, VU_SCRATCH + data + VU_HDR_LEN),
		tab_n - VU_HDR_LEN, 9);
	k->table(c, &fl, tab_n > CHAIN_MAX ? BIGTAB_OFF : TXTAB_OFF, data, 0);
	return flood_run(c, k, &fl);
}

/* RX: the peer's frames land in 256-byte chains of 257 descriptors; a
 * burst stops after 2048 and drops the rest (counted). */
static int
rx_flood(struct hs_ctx *c, const struct ring_kind *k)
{
	struct flood fl = {.q = RXQ,
		.tab_n = CHAIN_MAX,
		.ring_n = k->packed ? PACKED_RING : 256};

	if (dev_up(c, k->packed, 0) != 0)
		return 1;
	k->table(c, &fl, RXTAB_OFF, RXDATA_OFF, VRING_DESC_F_WRITE);
	return flood_run(c, k, &fl);
}

/* The issue's layout: a 32768 ring, a table of 32768 one-byte entries
 * (refused now: err_indirect_len; before issue 10, 9 ms a burst). */
static int
s_tx_flood_issue(struct hs_ctx *c)
{
	return tx_flood(c, &split_kind, 32768, 32768);
}

static int
s_tx_flood_cap(struct hs_ctx *c)
{
	return tx_flood(c, &split_kind, 1024, CHAIN_MAX);
}

static int
s_tx_flood_32k(struct hs_ctx *c)
{
	return tx_flood(c, &split_kind, 32768, CHAIN_MAX);
}

static int
s_ptx_flood(struct hs_ctx *c)
{
	return tx_flood(c, &packed_kind, 0, CHAIN_MAX);
}

static int
s_rx_flood(struct hs_ctx *c)
{
	return rx_flood(c, &split_kind);
}

static int
s_prx_flood(struct hs_ctx *c)
{
	return rx_flood(c, &packed_kind);
}

/* SET_VRING_NUM above the port's cap: refused, connection closed. */
static int
ring_num(struct hs_ctx *c, uint32_t num)
{
	int rc = vu_open(&c->f, c->path);

	if (rc == 0)
		rc = vu_negotiate(&c->f, VU_FEATURES_DEFAULT);
	if (rc == 0)
		rc = vu_mem_table(&c->f);
	if (rc != 0) {
		hs_note("set-up failed: %s", strerror(-rc));
		return 1;
	}
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

/* Split: a direct chain of CHAIN_MAX + 1 one-byte descriptors (ring 1024). */
static int
s_chain_long(struct hs_ctx *c)
{
	struct vu_ring *r = &c->f.q[TXQ];
	uint16_t i, want;

	if (dev_up(c, false, 1024) != 0)
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

/* Packed: a direct chain of CHAIN_MAX + 1 one-byte slots, then a good
 * frame. */
static int
s_pchain_long(struct hs_ctx *c)
{
	struct vu_ring *r = &c->f.q[TXQ];
	uint16_t id, slot;
	uint32_t i, len;

	if (dev_up(c, true, 0) != 0)
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
	for (i = 0;
		i < 3000 && !vu_pused_pop(&c->f, TXQ, CHAIN_MAX + 1, &id, &len);
		i++)
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
const size_t hs_n_budget =
	sizeof(hs_budget_scenarios) / sizeof(hs_budget_scenarios[0]);

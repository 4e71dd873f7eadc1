/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The work bounds of issue 10 item 5 on packed rings, at their exact
 * limits (as test_virtq_budget.c for split rings): the per-burst budget of
 * VSW_VIRTQ_BURST_DESCS descriptors read (ring slots and table entries,
 * checked before each chain) at budget - 1, budget and budget + 1, both
 * directions; a chain of VSW_VIRTQ_CHAIN_MAX ring slots and one more
 * (err_chain_len: skipped, the ring goes on); an indirect table of
 * min(size, CHAIN_MAX) entries and one more (err_indirect_len).
 * test/mutants/packed-budget-*.patch and packed-chain-*.patch prove them.
 */
#include <stdlib.h>
#include <string.h>

#include "test_virtq_packed.h"

#define QSZ 1024u
#define CMAX VSW_VIRTQ_CHAIN_MAX
#define AV(w) tgp_avail_flags(w)
#define NX VRING_DESC_F_NEXT
#define WR VRING_DESC_F_WRITE
#define IND VRING_DESC_F_INDIRECT

_Static_assert(VSW_VIRTQ_BURST_DESCS == 8 * 256,
	"the layouts below: chains of 256 reads fill the budget");

/* A table of n one-byte entries over n bytes from data; its gpa. */
static uint64_t
ptable(struct pfx *f, uint32_t n, uint64_t data, uint16_t dir)
{
	struct vring_packed_desc *t = calloc(n, sizeof(*t));
	uint64_t gpa = tg_alloc_ring(&f->g, 16ull * n, 16);
	uint32_t i;

	assert_non_null(t);
	for (i = 0; i < n; i++)
		t[i] = (struct vring_packed_desc){data + i, 1, 0, dir};
	tg_write(&f->g, gpa, t, 16ull * n);
	free(t);
	return gpa;
}

/* Ring slot `slot` (first lap) as INDIRECT to a table of n entries. */
static void
pind(struct pfx *f, uint16_t slot, uint64_t table, uint32_t n)
{
	tgp_desc_raw(&f->q, slot, table, 16 * n, slot, AV(true) | IND);
}

/* len bytes: a zero header, then a pattern (a TX frame's buffer). */
static uint64_t
tx_bytes(struct pfx *f, uint32_t len)
{
	uint64_t data = tg_alloc_data(&f->g, len, 1);
	uint8_t *b = tg_host(&f->g, data);
	uint32_t i;

	for (i = 0; i < len; i++)
		b[i] = i < f->q.hdr_len ? 0 : (uint8_t)i;
	return data;
}

/* The next used descriptor: its id, length and the slots it skips. */
static void
used_is(struct pfx *f, uint16_t id, uint32_t len, uint16_t nslots)
{
	const struct vring_packed_desc *d = &f->q.desc[f->q.next_used];

	assert_int_equal(!!(d->flags & TGP_F_USED), f->q.used_wrap);
	assert_int_equal(!!(d->flags & TGP_F_AVAIL), f->q.used_wrap);
	assert_int_equal(d->id, id);
	assert_int_equal(d->len, len);
	f->q.next_used = (uint16_t)(f->q.next_used + nslots);
	if (f->q.next_used >= f->q.size) {
		f->q.next_used = (uint16_t)(f->q.next_used - f->q.size);
		f->q.used_wrap = !f->q.used_wrap;
	}
}

/*
 * TX: slot 0 a table of `first` entries (first + 1 reads), slots 1..15
 * tables of 255 (256 reads). A burst of 32 takes `want` chains, stops
 * (budget_cut), the next burst takes the rest: none lost.
 */
static void
deq_budget(uint32_t first, uint16_t want)
{
	struct pfx *f = pfx_new(QSZ, F_STD);
	uint64_t data = tx_bytes(f, 256);
	uint64_t t_first = ptable(f, first, data, 0);
	uint64_t t_rest = ptable(f, 255, data, 0);
	uint32_t fl = first - f->q.hdr_len, rest = 255 - f->q.hdr_len;
	uint16_t i;

	pind(f, 0, t_first, first);
	for (i = 1; i < 16; i++)
		pind(f, i, t_rest, 255);
	assert_int_equal(pfx_deq(f, 32), want);
	assert_int_equal(vsw_virtq_last_avail_idx(f->vq), tgp_pos(want, true));
	PFX_EXPECT(f, {S(DEQ_PACKETS), want},
		{S(DEQ_BYTES), fl + (want - 1u) * rest}, {S(BUDGET_CUT), 1},
		{S(NOTIFY_SENT), 1});
	for (i = 0; i < want; i++)
		used_is(f, i, 0, 1);
	/* the rest, next burst: under the budget, no cut */
	assert_int_equal(pfx_deq(f, 32), 16 - want);
	PFX_EXPECT(f, {S(DEQ_PACKETS), 16u - want},
		{S(DEQ_BYTES), (16u - want) * rest}, {S(NOTIFY_SENT), 1});
	for (i = want; i < 16; i++)
		used_is(f, i, 0, 1);
	pfx_free(f);
}

/* After 7 chains of 256 reads: 255 more (2047: one more chain starts),
 * 256 (2048: spent, it stops), 257 (2049: stops). */
static void
test_pbudget_deq(void **state)
{
	(void)state;
	deq_budget(254, 9); /* budget - 1 */
	deq_budget(255, 8); /* budget */
	deq_budget(256, 8); /* budget + 1 */
}

/*
 * RX, mergeable: 64 slots INDIRECT to one table of 256 one-byte write
 * entries. A packet of L bytes reads 1 + 12 + L: the first is `first`
 * bytes, then 243-byte packets (256 reads); 12 offered, `want` delivered,
 * the rest enq_drop_budget, their chains still posted. With mid: 7
 * packets of 243, then one of 300 that needs a second chain once the
 * first has spent the budget (rolled back, dropped).
 */
static void
enq_budget(uint32_t first, uint16_t want, bool mid)
{
	struct pfx *f = pfx_new(QSZ, F_STD);
	uint64_t table = ptable(f, 256, tg_alloc_data(&f->g, 256, 1), WR);
	uint16_t i, n = mid ? 8 : 12;
	struct rte_mbuf *m[12];
	uint64_t bytes = 0;

	for (i = 0; i < 64; i++)
		pind(f, i, table, 256);
	for (i = 0; i < n; i++) {
		uint32_t len = mid ? (i < 7 ? 243 : 300) : (i ? 243 : first);

		m[i] = pfx_mbuf(len, (uint8_t)i);
		if (i < want)
			bytes += len;
	}
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, m, n), want);
	assert_int_equal(vsw_virtq_last_avail_idx(f->vq), tgp_pos(want, true));
	PFX_EXPECT(f, {S(ENQ_PACKETS), want}, {S(ENQ_BYTES), bytes},
		{S(ENQ_DROP_BUDGET), (uint64_t)(n - want)}, {S(BUDGET_CUT), 1},
		{S(NOTIFY_SENT), 1});
	for (i = 0; i < want; i++)
		used_is(f, i, 12 + m[i]->pkt_len, 1);
	assert_int_equal(f->q.desc[want].flags, AV(true) | IND);
	rte_pktmbuf_free_bulk(m, n);
	pfx_free(f);
}

static void
test_pbudget_enq(void **state)
{
	(void)state;
	enq_budget(242, 9, false); /* budget - 1 */
	enq_budget(243, 8, false); /* budget */
	enq_budget(244, 8, false); /* budget + 1 */
	enq_budget(0, 7, true);
}

/* n one-byte ring descriptors from slot `at` (first lap), id in the last. */
static void
pchain(struct pfx *f, uint16_t at, uint32_t n, uint64_t data, uint16_t dir,
	uint16_t id)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		tgp_desc_raw(&f->q, (uint16_t)(at + i), data + i, 1, id,
			(uint16_t)(AV(true) | dir | (i + 1 < n ? NX : 0)));
}

/* CHAIN_MAX ring slots pass; CHAIN_MAX + 1 are err_chain_len, skipped
 * whole, and the next chain is taken (TX and RX). */
static void
test_pchain_max(void **state)
{
	struct pfx *f = pfx_new(QSZ, F_STD);
	uint64_t data = tx_bytes(f, CMAX + 1);
	struct rte_mbuf *m;

	(void)state;
	pchain(f, 0, CMAX, data, 0, 7);
	assert_int_equal(pfx_deq(f, 32), 1);
	PFX_EXPECT(f, {S(DEQ_PACKETS), 1}, {S(DEQ_BYTES), CMAX - 12},
		{S(NOTIFY_SENT), 1});
	used_is(f, 7, 0, CMAX);
	pchain(f, CMAX, CMAX + 1, data, 0, 8);
	pchain(f, 2 * CMAX + 1, 20, data, 0, 9);
	assert_int_equal(pfx_deq(f, 32), 1);
	PFX_EXPECT(f, {S(DEQ_PACKETS), 1}, {S(DEQ_BYTES), 20 - 12},
		{S(DEQ_DROP_BAD_DESC), 1}, {S(ERR_CHAIN_LEN), 1},
		{S(NOTIFY_SENT), 1});
	used_is(f, 8, 0, CMAX + 1);
	used_is(f, 9, 0, 20);
	pfx_free(f);
	/* RX: 256 one-byte buffers take 244 bytes + header, 257 do not */
	f = pfx_new(QSZ, F_STD);
	data = tg_alloc_data(&f->g, CMAX + 1, 1);
	pchain(f, 0, CMAX, data, WR, 10);
	m = pfx_mbuf(CMAX - 12, 1);
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, &m, 1), 1);
	rte_pktmbuf_free(m);
	PFX_EXPECT(f, {S(ENQ_PACKETS), 1}, {S(ENQ_BYTES), CMAX - 12},
		{S(NOTIFY_SENT), 1});
	used_is(f, 10, CMAX, CMAX);
	pchain(f, CMAX, CMAX + 1, data, WR, 11);
	m = pfx_mbuf(CMAX - 11, 1);
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, &m, 1), 0);
	rte_pktmbuf_free(m);
	PFX_EXPECT(f, {S(ENQ_DROP_BAD_DESC), 1}, {S(ERR_CHAIN_LEN), 1},
		{S(NOTIFY_SENT), 1});
	used_is(f, 11, 0, CMAX + 1);
	assert_false(vsw_virtq_broken(f->vq));
	pfx_free(f);
}

/* A table of min(size, CMAX) entries passes, one more is
 * err_indirect_len: in a ring larger than CMAX and in one of 64. */
static void
test_pindirect_max(void **state)
{
	static const uint32_t sizes[] = {QSZ, 64};
	uint32_t i;

	(void)state;
	for (i = 0; i < RTE_DIM(sizes); i++) {
		struct pfx *f = pfx_new(sizes[i], F_STD);
		uint32_t lim = RTE_MIN(sizes[i], CMAX);
		uint64_t data = tx_bytes(f, lim + 1);

		pind(f, 0, ptable(f, lim, data, 0), lim);
		pind(f, 1, ptable(f, lim + 1, data, 0), lim + 1);
		assert_int_equal(pfx_deq(f, 32), 1);
		PFX_EXPECT(f, {S(DEQ_PACKETS), 1}, {S(DEQ_BYTES), lim - 12},
			{S(DEQ_DROP_BAD_DESC), 1}, {S(ERR_INDIRECT_LEN), 1},
			{S(NOTIFY_SENT), 1});
		used_is(f, 0, 0, 1);
		used_is(f, 1, 0, 1);
		pfx_free(f);
	}
}

#define T(fn)                                                                  \
	cmocka_unit_test_setup_teardown(fn, pfx_pool_setup, pfx_pool_teardown)

int
test_virtq_packed_budget_run(void)
{
	const struct CMUnitTest tests[] = {
		T(test_pbudget_deq),
		T(test_pbudget_enq),
		T(test_pchain_max),
		T(test_pindirect_max),
	};

	return cmocka_run_group_tests_name("virtq_packed_budget", tests, NULL,
		NULL);
}

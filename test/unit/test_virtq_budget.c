/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Exact limits of the work bounds (issue 10, item 5): the per-burst
 * descriptor budget (VSW_VIRTQ_BURST_DESCS read, checked before each
 * chain) at budget - 1, budget and budget + 1 descriptors, in both
 * directions, with one head repeated over the whole avail ring; the chain
 * length (VSW_VIRTQ_CHAIN_MAX buffer descriptors, direct and indirect
 * together) and the indirect table length (min(size, CHAIN_MAX)) at the
 * limit and one past. The limits of test_virtq_limits.c, for these bounds;
 * test/mutants/virtq-budget-*.patch and virtq-chain-*.patch prove them.
 */
#include <stdlib.h>
#include <string.h>

#include "test_virtq.h"

#define QSZ 1024u
#define BUDGET VSW_VIRTQ_BURST_DESCS
#define CMAX VSW_VIRTQ_CHAIN_MAX
#define NX VRING_DESC_F_NEXT
#define WR VRING_DESC_F_WRITE
#define IND VRING_DESC_F_INDIRECT

_Static_assert(BUDGET % 256 == 0 && BUDGET / 256 < 16,
	"the layouts below: chains of 256 reads fill the budget");

/* Ring descriptor `slot` points at a table of n one-byte entries naming
 * n consecutive bytes at data (dir: 0 or WR). */
static void
table_at(struct fx *f, uint16_t slot, uint32_t n, uint64_t data, uint16_t dir)
{
	struct vring_desc *t = calloc(n, sizeof(*t));
	uint64_t gpa = tg_alloc_ring(&f->g, 16ull * n, 16);
	uint32_t i;

	assert_non_null(t);
	for (i = 0; i < n; i++)
		t[i] = (struct vring_desc){data + i, 1,
			(uint16_t)(dir | (i + 1 < n ? NX : 0)),
			(uint16_t)(i + 1)};
	tg_write(&f->g, gpa, t, 16ull * n);
	f->q.desc[slot] = (struct vring_desc){gpa, 16 * n, IND, 0};
	free(t);
}

/* A zero header, then bytes: what a TX chain over [data, +len) carries. */
static uint64_t
tx_bytes(struct fx *f, uint32_t len)
{
	uint64_t data = tg_alloc_data(&f->g, len, 1);
	uint8_t *b = calloc(1, len);
	uint32_t i;

	assert_non_null(b);
	for (i = f->q.hdr_len; i < len; i++)
		b[i] = (uint8_t)i;
	tg_write(&f->g, data, b, len);
	free(b);
	return data;
}

static void
push(struct fx *f, uint16_t head, uint32_t times)
{
	while (times-- > 0)
		tg_avail_push_raw(&f->q, head);
	tg_kick(&f->q);
}

/*
 * TX: `first` (a chain of first + 1 reads) once, then the same head of
 * 256 reads (INDIRECT + 255) 15 times. A burst of 32 takes `want` chains,
 * stops (budget_cut) and the next burst takes the rest: none lost.
 */
static void
deq_budget(uint32_t first, uint16_t want)
{
	struct fx *f = fx_new(QSZ, F_STD);
	uint64_t data = tx_bytes(f, 256);
	struct rte_mbuf *m[32];
	uint32_t fl = first - f->q.hdr_len, rest = 255 - f->q.hdr_len;
	uint16_t got, i, id;
	uint32_t len;

	table_at(f, 0, 255, data, 0);
	table_at(f, 1, first, data, 0);
	push(f, 1, 1);
	push(f, 0, 15);
	got = vsw_virtq_dequeue_burst(f->vq, test_pool, m, 32);
	assert_int_equal(got, want);
	assert_int_equal(vsw_virtq_last_avail_idx(f->vq), want);
	FX_EXPECT(f, {S(DEQ_PACKETS), want},
		{S(DEQ_BYTES), fl + (want - 1u) * rest}, {S(BUDGET_CUT), 1},
		{S(NOTIFY_SENT), 1});
	rte_pktmbuf_free_bulk(m, got);
	for (i = 0; i < want; i++) {
		assert_int_equal(tg_used_pop(&f->q, &id, &len), 1);
		assert_int_equal(id, i == 0 ? 1 : 0);
	}
	assert_int_equal(tg_used_pop(&f->q, &id, &len), 0);
	/* the rest, next burst: under the budget, no cut */
	got = vsw_virtq_dequeue_burst(f->vq, test_pool, m, 32);
	assert_int_equal(got, 16 - want);
	FX_EXPECT(f, {S(DEQ_PACKETS), 16u - want},
		{S(DEQ_BYTES), (16u - want) * rest}, {S(NOTIFY_SENT), 1});
	rte_pktmbuf_free_bulk(m, got);
	fx_free(f);
}

/* After 7 chains of 256 reads: 255 more (2047: one more chain starts),
 * 256 (2048: the budget is spent, it stops), 257 (2049: stops). */
static void
test_budget_deq(void **state)
{
	(void)state;
	deq_budget(254, 9); /* budget - 1 */
	deq_budget(255, 8); /* budget */
	deq_budget(256, 8); /* budget + 1 */
}

/*
 * RX, mergeable: one head over the ring, a table of 256 one-byte write
 * entries (256 bytes a chain). A packet of L bytes reads 1 + 12 + L. The
 * first packet is `first` bytes, then 243-byte packets (256 reads each);
 * 12 offered: `want` delivered, the rest enq_drop_budget, the chains they
 * would have used still posted.
 */
static void
enq_budget(uint32_t first, uint16_t want)
{
	struct fx *f = fx_new(QSZ, F_STD);
	uint64_t data = tg_alloc_data(&f->g, 256, 1);
	struct rte_mbuf *m[12];
	uint16_t i, id;
	uint32_t len;

	table_at(f, 0, 256, data, WR);
	push(f, 0, 64);
	for (i = 0; i < 12; i++)
		m[i] = fx_mbuf(i == 0 ? first : 243, (uint8_t)i);
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, m, 12), want);
	assert_int_equal(vsw_virtq_last_avail_idx(f->vq), want);
	FX_EXPECT(f, {S(ENQ_PACKETS), want},
		{S(ENQ_BYTES), first + (want - 1u) * 243},
		{S(ENQ_DROP_BUDGET), 12u - want}, {S(BUDGET_CUT), 1},
		{S(NOTIFY_SENT), 1});
	for (i = 0; i < want; i++) {
		assert_int_equal(tg_used_pop(&f->q, &id, &len), 1);
		assert_int_equal(id, 0);
		assert_int_equal(len, 12 + (i == 0 ? first : 243));
	}
	assert_int_equal(tg_used_pop(&f->q, &id, &len), 0);
	rte_pktmbuf_free_bulk(m, 12);
	fx_free(f);
}

/* Mid-packet: 7 packets of 256 reads, then one that needs a second
 * chain when the first has spent the budget: rolled back, dropped. */
static void
enq_budget_mid_packet(void)
{
	struct fx *f = fx_new(QSZ, F_STD);
	uint64_t data = tg_alloc_data(&f->g, 256, 1);
	struct rte_mbuf *m[8];
	uint16_t i, id;
	uint32_t len;

	table_at(f, 0, 256, data, WR);
	push(f, 0, 64);
	for (i = 0; i < 8; i++)
		m[i] = fx_mbuf(i < 7 ? 243 : 300, (uint8_t)i);
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, m, 8), 7);
	assert_int_equal(vsw_virtq_last_avail_idx(f->vq), 7);
	FX_EXPECT(f, {S(ENQ_PACKETS), 7}, {S(ENQ_BYTES), 7 * 243},
		{S(ENQ_DROP_BUDGET), 1}, {S(BUDGET_CUT), 1},
		{S(NOTIFY_SENT), 1});
	for (i = 0; i < 7; i++)
		assert_int_equal(tg_used_pop(&f->q, &id, &len), 1);
	assert_int_equal(tg_used_pop(&f->q, &id, &len), 0);
	rte_pktmbuf_free_bulk(m, 8);
	fx_free(f);
}

static void
test_budget_enq(void **state)
{
	(void)state;
	enq_budget(242, 9); /* budget - 1 */
	enq_budget(243, 8); /* budget */
	enq_budget(244, 8); /* budget + 1 */
	enq_budget_mid_packet();
}

/*
 * TSO to a guest with receive offloads: the enqueue budget grows by one
 * descriptor per VSW_VIRTQ_CREDIT_BYTES of each packet (at most
 * CREDIT_PKT_MAX) as the packet starts. The reference: how many of n
 * packets of len bytes fit, one read per chain of one buf-byte buffer
 * (a packet that cannot take all its chains is rolled back).
 */
static uint16_t
credit_ref(uint32_t n, uint32_t len, uint32_t buf, bool credit)
{
	int64_t budget = BUDGET;
	uint32_t chains = (len + 12 + buf - 1) / buf, i, c;

	for (i = 0; i < n; i++) {
		if (credit)
			budget += RTE_MIN(len, VSW_VIRTQ_CREDIT_PKT_MAX) /
				  VSW_VIRTQ_CREDIT_BYTES;
		for (c = 0; c < chains; c++) {
			if (budget <= 0)
				return (uint16_t)i;
			budget--;
		}
	}
	return (uint16_t)n;
}

/* n packets of len bytes (one mbuf, sent n times) into one buf-byte
 * buffer posted size times; offl: the guest has GUEST_CSUM+TSO4/6. */
static void
enq_credit(uint32_t len, uint32_t buf, bool offl)
{
	const uint32_t size = 8192, n = 64;
	uint64_t feat = F_STD | (offl ? F(VSW_VIRTIO_NET_F_GUEST_CSUM) |
			F(VSW_VIRTIO_NET_F_GUEST_TSO4) |
			F(VSW_VIRTIO_NET_F_GUEST_TSO6) : 0);
	struct fx *f = fx_new(size, feat);
	uint64_t data = tg_alloc_data(&f->g, buf, 1);
	uint16_t want = credit_ref(n, len, buf, offl), i, id;
	uint32_t chains = (len + 12 + buf - 1) / buf, ulen;
	static uint8_t bytes[65536];
	struct rte_mbuf *m, *pkts[64];

	memset(bytes, 3, len);
	m = tl_mbuf_build(test_pool, bytes, len, NULL, 0);
	assert_non_null(m);
	assert_true(chains * (uint32_t)want <= size);
	f->q.desc[0] = (struct vring_desc){data, buf, WR, 0};
	push(f, 0, size);
	for (i = 0; i < n; i++)
		pkts[i] = m;
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, pkts, n), want);
	assert_int_equal(vsw_virtq_last_avail_idx(f->vq), want * chains);
	if (want == n)
		FX_EXPECT(f, {S(ENQ_PACKETS), n}, {S(ENQ_BYTES), n * len},
			{S(NOTIFY_SENT), 1});
	else
		FX_EXPECT(f, {S(ENQ_PACKETS), want},
			{S(ENQ_BYTES), (uint64_t)want * len},
			{S(ENQ_DROP_BUDGET), n - want}, {S(BUDGET_CUT), 1},
			{S(NOTIFY_SENT), 1});
	for (i = 0; i < want * chains; i++)
		assert_int_equal(tg_used_pop(&f->q, &id, &ulen), 1);
	assert_int_equal(tg_used_pop(&f->q, &id, &ulen), 0);
	rte_pktmbuf_free(m);
	fx_free(f);
}

static void
test_budget_tso_credit(void **state)
{
	(void)state;
	/* 64 x 64000 B into 1.5 KiB buffers: 2,688 chains; without receive
	 * offloads (no TSO frames) the plain budget cuts it at 48 */
	assert_int_equal(credit_ref(64, 64000, 1536, false), 48);
	enq_credit(64000, 1536, false);
	assert_int_equal(credit_ref(64, 64000, 1536, true), 64);
	enq_credit(64000, 1536, true);
	/* a guest posting buffers below 1 KiB still meets the cut */
	assert_true(credit_ref(64, 64000, 512, true) < 64);
	enq_credit(64000, 512, true);
	enq_credit(64000, 128, true);
	enq_credit(65535, 1024, true);
	enq_credit(9000, 1024, true);
}

/* The chain at head dequeues as one packet of len bytes (header incl.). */
static void
tx_one(struct fx *f, uint16_t head, uint32_t len)
{
	struct rte_mbuf *m;
	uint16_t id;
	uint32_t ulen;

	push(f, head, 1);
	assert_int_equal(vsw_virtq_dequeue_burst(f->vq, test_pool, &m, 1), 1);
	assert_int_equal(m->pkt_len, len - f->q.hdr_len);
	rte_pktmbuf_free(m);
	assert_int_equal(tg_used_pop(&f->q, &id, &ulen), 1);
	FX_EXPECT(f, {S(DEQ_PACKETS), 1}, {S(DEQ_BYTES), len - f->q.hdr_len},
		{S(NOTIFY_SENT), 1});
}

/* n one-byte direct descriptors from slot 10 on, the last ending it. */
static void
direct_chain(struct fx *f, uint32_t n, uint64_t data, uint16_t last_flags,
	uint16_t last_next)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		f->q.desc[10 + i] = (struct vring_desc){data + i, 1,
			i + 1 < n ? NX : last_flags,
			(uint16_t)(i + 1 < n ? 11 + i : last_next)};
}

/* CHAIN_MAX buffers pass, CHAIN_MAX + 1 are err_chain_len: direct, and
 * direct buffers before an indirect table (which counts with them). */
static void
test_chain_max(void **state)
{
	struct fx *f = fx_new(QSZ, F_STD);
	uint64_t data = tx_bytes(f, 2 * CMAX);

	(void)state;
	direct_chain(f, CMAX, data, 0, 0);
	tx_one(f, 10, CMAX);
	direct_chain(f, CMAX + 1, data, 0, 0);
	fx_tx_drop(f, 10, S(DEQ_DROP_BAD_DESC), S(ERR_CHAIN_LEN));
	/* 1 direct + a table of CMAX - 1, then of CMAX */
	table_at(f, 500, CMAX - 1, data + 1, 0);
	direct_chain(f, 1, data, NX, 500);
	tx_one(f, 10, CMAX);
	table_at(f, 500, CMAX, data + 1, 0);
	fx_tx_drop(f, 10, S(DEQ_DROP_BAD_DESC), S(ERR_CHAIN_LEN));
	/* 255 direct + a table of 1: 256; of 2: 257 */
	table_at(f, 500, 1, data + CMAX - 1, 0);
	direct_chain(f, CMAX - 1, data, NX, 500);
	tx_one(f, 10, CMAX);
	table_at(f, 500, 2, data + CMAX - 1, 0);
	fx_tx_drop(f, 10, S(DEQ_DROP_BAD_DESC), S(ERR_CHAIN_LEN));
	/* 256 direct and then the INDIRECT one: its 257th read */
	direct_chain(f, CMAX, data, NX, 500);
	fx_tx_drop(f, 10, S(DEQ_DROP_BAD_DESC), S(ERR_CHAIN_LEN));
	fx_free(f);
}

/* A table of CMAX entries in a ring larger than CMAX passes, CMAX + 1 is
 * err_indirect_len; in a ring of 64, 64 passes and 65 fails. */
static void
test_indirect_max(void **state)
{
	static const uint32_t sizes[] = {QSZ, 64};
	uint32_t i;

	(void)state;
	for (i = 0; i < RTE_DIM(sizes); i++) {
		struct fx *f = fx_new(sizes[i], F_STD);
		uint32_t lim = RTE_MIN(sizes[i], CMAX);
		uint64_t data = tx_bytes(f, lim + 1);

		table_at(f, 3, lim, data, 0);
		tx_one(f, 3, lim);
		table_at(f, 3, lim + 1, data, 0);
		fx_tx_drop(f, 3, S(DEQ_DROP_BAD_DESC), S(ERR_INDIRECT_LEN));
		fx_free(f);
	}
}

#define T(fn)                                                                  \
	cmocka_unit_test_setup_teardown(fn, fx_pool_setup, fx_pool_teardown)

int test_virtq_budget_run(void);

int
test_virtq_budget_run(void)
{
	const struct CMUnitTest tests[] = {
		T(test_budget_deq),
		T(test_budget_enq),
		T(test_budget_tso_credit),
		T(test_chain_max),
		T(test_indirect_max),
	};

	return cmocka_run_group_tests_name("virtq_budget", tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Checksum/TSO offloads on packed rings (as on split rings, whose header
 * mapping test_net_hdr.c covers): a TX frame whose header says NEEDS_CSUM
 * at its TCP checksum leaves as an mbuf with TX_TCP_CKSUM (deq_csum_partial);
 * a bad csum_start is dropped (deq_drop_hdr_csum_l4); an RX mbuf with
 * TX_TCP_CKSUM reaches a GUEST_CSUM guest with NEEDS_CSUM at 34/16, and a
 * guest without GUEST_CSUM not at all (enq_drop_offload).
 * Last, the RX header store, which reads the posted buffer before it
 * writes. test/mutants/packed-offl-*.patch prove it.
 */
#include <string.h>
#include <sys/mman.h>

#include "test_virtq_packed.h"

#define WR VRING_DESC_F_WRITE

/* Ethernet + IPv4 + TCP, 100 bytes in all, into b. */
static void
tcp_frame(uint8_t *b)
{
	memset(b, 0, 100);
	b[12] = 0x08;       /* IPv4 */
	b[14] = 0x45;
	b[17] = 100 - 14;   /* total length */
	b[22] = 64;
	b[23] = 6;          /* TCP */
	b[14 + 20 + 12] = 5 << 4;
}

/* One TX chain: header h, then the TCP frame; dequeued, ol_flags back. */
static int
tx_one(struct pfx *f, uint16_t csum_start, uint64_t *ol)
{
	struct vsw_virtio_net_hdr h = {.flags = VSW_VIRTIO_NET_HDR_F_NEEDS_CSUM,
		.csum_start = csum_start, .csum_offset = 16};
	uint64_t gpa = tg_alloc_data(&f->g, 12 + 100, 1);
	uint8_t *p = tg_host(&f->g, gpa);
	uint16_t slot = f->q.next_avail;
	struct rte_mbuf *m;
	uint16_t n;

	memcpy(p, &h, 12);
	tcp_frame(p + 12);
	tgp_desc_raw(&f->q, slot, gpa, 112, slot,
		tgp_avail_flags(f->q.avail_wrap));
	f->q.next_avail = f->q.next_used = (uint16_t)(slot + 1);
	n = vsw_virtq_dequeue_burst(f->vq, ptest_pool, &m, 1);
	if (n == 1) {
		*ol = m->ol_flags;
		rte_pktmbuf_free(m);
	}
	return n;
}

static void
test_poffl_dequeue(void **state)
{
	struct pfx *f = pfx_new(64, F_STD | F(VSW_VIRTIO_NET_F_CSUM));
	uint64_t ol = 0;

	(void)state;
	assert_int_equal(tx_one(f, 34, &ol), 1);
	assert_int_equal(ol & RTE_MBUF_F_TX_L4_MASK, RTE_MBUF_F_TX_TCP_CKSUM);
	PFX_EXPECT(f, {S(DEQ_PACKETS), 1}, {S(DEQ_BYTES), 100},
		{S(DEQ_CSUM_PARTIAL), 1}, {S(NOTIFY_SENT), 1});
	assert_int_equal(tx_one(f, 35, &ol), 0);
	PFX_EXPECT(f, {S(DEQ_DROP_HDR_CSUM_L4), 1}, {S(NOTIFY_SENT), 1});
	pfx_free(f);
}

/* An RX mbuf asking for a TCP checksum; returns what was enqueued. */
static uint16_t
rx_one(struct pfx *f, uint8_t *hdr)
{
	struct rte_mbuf *m = pfx_mbuf(100, 0);
	uint64_t gpa = tg_alloc_data(&f->g, 2048, 1);
	uint16_t slot = f->q.next_avail, n;

	tcp_frame(rte_pktmbuf_mtod(m, uint8_t *));
	m->l2_len = 14;
	m->l3_len = 20;
	m->ol_flags |= RTE_MBUF_F_TX_TCP_CKSUM | RTE_MBUF_F_TX_IPV4;
	tgp_desc_raw(&f->q, slot, gpa, 2048, slot,
		(uint16_t)(tgp_avail_flags(f->q.avail_wrap) | WR));
	n = vsw_virtq_enqueue_burst(f->vq, &m, 1);
	rte_pktmbuf_free(m);
	memcpy(hdr, tg_host(&f->g, gpa), 12);
	if (n == 1)
		f->q.next_avail = f->q.next_used = (uint16_t)(slot + 1);
	return n;
}

static void
test_poffl_enqueue(void **state)
{
	struct pfx *f = pfx_new(64, F_STD | F(VSW_VIRTIO_NET_F_GUEST_CSUM));
	struct vsw_virtio_net_hdr h;

	(void)state;
	assert_int_equal(rx_one(f, (uint8_t *)&h), 1);
	assert_int_equal(h.flags, VSW_VIRTIO_NET_HDR_F_NEEDS_CSUM);
	assert_int_equal(h.csum_start, 34);
	assert_int_equal(h.csum_offset, 16);
	assert_int_equal(h.num_buffers, 1);
	PFX_EXPECT(f, {S(ENQ_PACKETS), 1}, {S(ENQ_BYTES), 100},
		{S(ENQ_CSUM_PARTIAL), 1}, {S(NOTIFY_SENT), 1});
	pfx_free(f);
	f = pfx_new(64, F_STD);
	assert_int_equal(rx_one(f, (uint8_t *)&h), 0);
	PFX_EXPECT(f, {S(ENQ_DROP_OFFLOAD), 1});
	pfx_free(f);
}

/*
 * The RX header store (virtq_hdr_store), packed: a header already in the
 * buffer is not written again (its page read-only: a store faults), one
 * differing in its first or last byte is; through the four-chain batch
 * (slots 0..3) and one chain alone (slot 4).
 */
static void
hs_prx(uint64_t features, uint32_t flip)
{
	struct pfx *f = pfx_new(64, features);
	uint32_t hl = f->q.hdr_len, len = 100, ulen, i;
	uint8_t want[12] = {0}, out[12 + 100];
	struct rte_mbuf *m[5];
	uint64_t b[5];

	if (hl == 12)
		want[10] = 1; /* num_buffers */
	for (i = 0; i < 5; i++) {
		b[i] = tg_alloc_data(&f->g, 8192, 4096);
		memcpy(out, want, hl);
		if (flip != UINT32_MAX)
			out[flip] ^= 0x40;
		tg_write(&f->g, b[i] + 4096 - hl, out, hl);
		if (flip == UINT32_MAX)
			assert_int_equal(mprotect(tg_host(&f->g, b[i]), 4096,
						 PROT_READ),
				0);
		tgp_desc_raw(&f->q, (uint16_t)i, b[i] + 4096 - hl, hl + 2048,
			(uint16_t)i, tgp_avail_flags(true) | WR);
		m[i] = pfx_mbuf(len, (uint8_t)(0x30 + i));
	}
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, m, 4), 4);
	assert_int_equal(vsw_virtq_enqueue_burst(f->vq, &m[4], 1), 1);
	for (i = 0; i < 5; i++) {
		/* raw slots: the used descriptors read in place */
		const struct vring_packed_desc *d = &f->q.desc[i];

		assert_int_equal(mprotect(tg_host(&f->g, b[i]), 4096,
					 PROT_READ | PROT_WRITE),
			0);
		assert_int_equal(d->flags & (TGP_F_AVAIL | TGP_F_USED),
			TGP_F_AVAIL | TGP_F_USED);
		assert_int_equal(d->id, i);
		ulen = d->len;
		assert_int_equal(ulen, hl + len);
		tg_read(&f->g, b[i] + 4096 - hl, out, hl + len);
		assert_memory_equal(out, want, hl);
		assert_true(tl_mbuf_equal(m[i], out + hl, len));
		rte_pktmbuf_free(m[i]);
	}
	PFX_EXPECT(f, {S(ENQ_PACKETS), 5}, {S(ENQ_BYTES), 5 * len},
		{S(NOTIFY_SENT), 2});
	pfx_free(f);
}

static void
test_poffl_hdr_store(void **state)
{
	static const uint64_t feats[] = {F_STD, F_IND};
	uint32_t i;

	(void)state;
	for (i = 0; i < RTE_DIM(feats); i++) {
		uint32_t hl = (feats[i] & (F_MRG | F_V1)) ? 12 : 10;

		hs_prx(feats[i], UINT32_MAX); /* in place: not stored */
		hs_prx(feats[i], 0);
		hs_prx(feats[i], hl - 1);
	}
}

#define T(fn)                                                                  \
	cmocka_unit_test_setup_teardown(fn, pfx_pool_setup, pfx_pool_teardown)

int
test_virtq_packed_offl_run(void)
{
	const struct CMUnitTest tests[] = {
		T(test_poffl_dequeue),
		T(test_poffl_enqueue),
		T(test_poffl_hdr_store),
	};

	return cmocka_run_group_tests_name("virtq_packed_offl", tests, NULL,
		NULL);
}

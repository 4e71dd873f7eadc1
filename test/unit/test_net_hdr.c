/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The virtio-net header's offload fields (vhost/virtq/virtq_net_hdr.c):
 * every DEQ_DROP_HDR_* reason at its exact limit (one byte inside is
 * accepted, one past is dropped), the metadata a good header maps to, the
 * header written back, and both through the queue with the software guest
 * (a header split over descriptors; a guest without GUEST_TSO gets no TSO
 * frame).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_virtq.h"

#define ALL_OFFL                                                    \
	(F(VSW_VIRTIO_NET_F_CSUM) | F(VSW_VIRTIO_NET_F_HOST_TSO4) | \
		F(VSW_VIRTIO_NET_F_HOST_TSO6) |                     \
		F(VSW_VIRTIO_NET_F_GUEST_CSUM) |                    \
		F(VSW_VIRTIO_NET_F_GUEST_TSO4) |                    \
		F(VSW_VIRTIO_NET_F_GUEST_TSO6))
#define PKT_MAX (65536 + 64)

/* A frame: Ethernet [+ VLAN], IPv4 or IPv6, TCP (20 B) or UDP (8 B) or
 * ICMP (8 B), payload; lengths filled in. Returns its length; *l4 gets
 * where L4 starts. */
static uint32_t
frame(uint8_t *d, int ipv, int proto, bool vlan, uint32_t payload, uint32_t *l4)
{
	uint32_t o = 12, l4len = proto == 6 ? 20 : 8, ip;

	memset(d, 0, 64);
	memset(d, 0x02, 12);
	if (vlan) {
		d[o++] = 0x81, d[o++] = 0x00, d[o++] = 0x00, d[o++] = 0x07;
	}
	d[o++] = ipv == 4 ? 0x08 : 0x86;
	d[o++] = ipv == 4 ? 0x00 : 0xdd;
	ip = o;
	if (ipv == 4) {
		uint32_t tot = 20 + l4len + payload;

		d[o] = 0x45;
		d[o + 2] = (uint8_t)(tot >> 8), d[o + 3] = (uint8_t)tot;
		d[o + 8] = 64;
		d[o + 9] = (uint8_t)proto;
		o += 20;
	} else {
		uint32_t pl = l4len + payload;

		d[o] = 0x60;
		d[o + 4] = (uint8_t)(pl >> 8), d[o + 5] = (uint8_t)pl;
		d[o + 6] = (uint8_t)proto;
		d[o + 7] = 64;
		o += 40;
	}
	(void)ip;
	*l4 = o;
	memset(d + o, 0, l4len);
	if (proto == 6)
		d[o + 12] = 0x50;
	for (uint32_t i = 0; i < payload; i++)
		d[o + l4len + i] = (uint8_t)(i * 7 + 1);
	return o + l4len + payload;
}

static struct rte_mbuf *
mb(const uint8_t *d, uint32_t len)
{
	struct rte_mbuf *m = tl_mbuf_build(test_pool, d, len, NULL, 0);

	assert_non_null(m);
	return m;
}

/* The verdict on header h for frame d[0..len), features f. */
static int
verdict(const struct vsw_virtio_net_hdr *h, const uint8_t *d, uint32_t len,
	uint64_t f, struct rte_mbuf **keep)
{
	struct rte_mbuf *m = mb(d, len);
	int rc = vsw_virtq_net_hdr_to_mbuf(h, m, f);

	if (keep != NULL && rc == 0)
		*keep = m;
	else
		rte_pktmbuf_free(m);
	return rc;
}

static struct vsw_virtio_net_hdr
csum_hdr(uint32_t start, uint32_t off)
{
	struct vsw_virtio_net_hdr h = {.flags = VSW_VIRTIO_NET_HDR_F_NEEDS_CSUM,
		.csum_start = (uint16_t)start,
		.csum_offset = (uint16_t)off};

	return h;
}

static struct vsw_virtio_net_hdr
gso_hdr(uint8_t type, uint32_t l4, uint16_t mss, uint16_t hdr_len)
{
	struct vsw_virtio_net_hdr h = csum_hdr(l4, 16);

	h.gso_type = type;
	h.gso_size = mss;
	h.hdr_len = hdr_len;
	return h;
}

/* csum_start + csum_offset + 2 == len is inside; len + 1 is not. */
static void
test_csum_range_limits(void **state)
{
	static uint8_t d[256];
	struct vsw_virtio_net_hdr h;
	struct rte_mbuf *m = NULL;
	uint32_t l4, len;

	(void)state;
	len = frame(d, 4, 17, false, 0, &l4); /* UDP header, no payload */
	h = csum_hdr(l4, 6);
	assert_int_equal(l4 + 6 + 2, len);
	assert_int_equal(verdict(&h, d, len, ALL_OFFL, &m), 0);
	assert_true(m->ol_flags & RTE_MBUF_F_TX_UDP_CKSUM);
	assert_true(m->ol_flags & RTE_MBUF_F_TX_IPV4);
	assert_int_equal(m->l2_len, 14);
	assert_int_equal(m->l3_len, 20);
	rte_pktmbuf_free(m);
	h.csum_offset = 7; /* + 2 = len + 1 */
	assert_int_equal(verdict(&h, d, len, ALL_OFFL, NULL),
		S(DEQ_DROP_HDR_CSUM_RANGE));
	h.csum_offset = 6; /* the packet one byte short */
	assert_int_equal(verdict(&h, d, len - 1, ALL_OFFL, NULL),
		S(DEQ_DROP_HDR_CSUM_RANGE));
	/* no 16-bit wrap makes far look near */
	h = csum_hdr(0xffff, 0xffff);
	assert_int_equal(verdict(&h, d, len, ALL_OFFL, NULL),
		S(DEQ_DROP_HDR_CSUM_RANGE));
	h = csum_hdr(0, 0xfffe);
	assert_int_equal(verdict(&h, d, len, ALL_OFFL, NULL),
		S(DEQ_DROP_HDR_CSUM_RANGE));
}

/* NEEDS_CSUM must be exactly the packet's TCP/UDP checksum. */
static void
test_csum_l4(void **state)
{
	static uint8_t d[256];
	struct vsw_virtio_net_hdr h;
	uint32_t l4, len;

	(void)state;
	len = frame(d, 6, 6, true, 100, &l4);
	h = csum_hdr(l4, 16);
	assert_int_equal(verdict(&h, d, len, ALL_OFFL, NULL), 0);
	h = csum_hdr(l4 + 1, 16);
	assert_int_equal(
		verdict(&h, d, len, ALL_OFFL, NULL), S(DEQ_DROP_HDR_CSUM_L4));
	h = csum_hdr(l4, 6); /* UDP's offset on TCP */
	assert_int_equal(
		verdict(&h, d, len, ALL_OFFL, NULL), S(DEQ_DROP_HDR_CSUM_L4));
	len = frame(d, 4, 1, false, 40, &l4); /* ICMP */
	h = csum_hdr(l4, 2);
	assert_int_equal(
		verdict(&h, d, len, ALL_OFFL, NULL), S(DEQ_DROP_HDR_CSUM_L4));
	/* a TCP header cut short by the packet's end */
	len = frame(d, 4, 6, false, 0, &l4);
	h = csum_hdr(l4, 16);
	assert_int_equal(verdict(&h, d, len - 1, ALL_OFFL, NULL),
		S(DEQ_DROP_HDR_CSUM_L4));
	/* without CSUM negotiated the flag is not read (as before) */
	h = csum_hdr(l4 + 1, 16);
	assert_int_equal(verdict(&h, d, len, 0, NULL), 0);
}

/* GSO types: only TCPV4/TCPV6, negotiated, matching, with NEEDS_CSUM. */
static void
test_gso_type(void **state)
{
	static uint8_t d[2048];
	struct vsw_virtio_net_hdr h;
	struct rte_mbuf *m = NULL;
	uint32_t l4, len;

	(void)state;
	len = frame(d, 4, 6, false, 1000, &l4);
	h = gso_hdr(VSW_VIRTIO_NET_HDR_GSO_TCPV4, l4, 100, (uint16_t)(l4 + 20));
	assert_int_equal(verdict(&h, d, len, ALL_OFFL, &m), 0);
	assert_true(m->ol_flags & RTE_MBUF_F_TX_TCP_SEG);
	assert_int_equal(m->tso_segsz, 100);
	assert_int_equal(m->l4_len, 20);
	rte_pktmbuf_free(m);
	h.gso_type = VSW_VIRTIO_NET_HDR_GSO_TCPV6;
	assert_int_equal(
		verdict(&h, d, len, ALL_OFFL, NULL), S(DEQ_DROP_HDR_GSO_TYPE));
	h.gso_type = VSW_VIRTIO_NET_HDR_GSO_UDP;
	assert_int_equal(
		verdict(&h, d, len, ALL_OFFL, NULL), S(DEQ_DROP_HDR_GSO_TYPE));
	h.gso_type = VSW_VIRTIO_NET_HDR_GSO_TCPV4 | VSW_VIRTIO_NET_HDR_GSO_ECN;
	assert_int_equal(
		verdict(&h, d, len, ALL_OFFL, NULL), S(DEQ_DROP_HDR_GSO_TYPE));
	h.gso_type = 2;
	assert_int_equal(
		verdict(&h, d, len, ALL_OFFL, NULL), S(DEQ_DROP_HDR_GSO_TYPE));
	h.gso_type = VSW_VIRTIO_NET_HDR_GSO_TCPV4;
	assert_int_equal(
		verdict(&h, d, len, ALL_OFFL & ~F(VSW_VIRTIO_NET_F_HOST_TSO4),
			NULL),
		S(DEQ_DROP_HDR_GSO_TYPE));
	h.flags = 0; /* GSO without NEEDS_CSUM */
	assert_int_equal(
		verdict(&h, d, len, ALL_OFFL, NULL), S(DEQ_DROP_HDR_GSO_TYPE));
	len = frame(d, 4, 17, false, 1000, &l4); /* TCPV4 on UDP */
	h = gso_hdr(VSW_VIRTIO_NET_HDR_GSO_TCPV4, l4, 100, 0);
	h.csum_offset = 6;
	assert_int_equal(
		verdict(&h, d, len, ALL_OFFL, NULL), S(DEQ_DROP_HDR_GSO_TYPE));
	len = frame(d, 6, 6, false, 1000, &l4);
	h = gso_hdr(VSW_VIRTIO_NET_HDR_GSO_TCPV6, l4, 100, 0);
	assert_int_equal(verdict(&h, d, len, ALL_OFFL, &m), 0);
	assert_true(m->ol_flags & RTE_MBUF_F_TX_IPV6);
	rte_pktmbuf_free(m);
}

/* gso_size: 0 dropped; VSW_VIRTQ_GSO_SEGS_MAX segments fit, one more
 * does not; hdr_len == len fits, len + 1 does not. */
static void
test_gso_size_hdr_len(void **state)
{
	static uint8_t d[4096];
	struct vsw_virtio_net_hdr h;
	uint32_t l4, len, payload = VSW_VIRTQ_GSO_SEGS_MAX * 8;

	(void)state;
	len = frame(d, 4, 6, false, payload, &l4);
	h = gso_hdr(VSW_VIRTIO_NET_HDR_GSO_TCPV4, l4, 8, (uint16_t)len);
	assert_int_equal(verdict(&h, d, len, ALL_OFFL, NULL), 0);
	h.hdr_len = (uint16_t)(len + 1);
	assert_int_equal(
		verdict(&h, d, len, ALL_OFFL, NULL), S(DEQ_DROP_HDR_LEN));
	h.hdr_len = 0;
	h.gso_size = 0;
	assert_int_equal(
		verdict(&h, d, len, ALL_OFFL, NULL), S(DEQ_DROP_HDR_GSO_SIZE));
	h.gso_size = 7; /* 293 segments */
	assert_int_equal(
		verdict(&h, d, len, ALL_OFFL, NULL), S(DEQ_DROP_HDR_GSO_SIZE));
	len = frame(d, 4, 6, false, payload + 1, &l4); /* 257 of 8 */
	h.gso_size = 8;
	assert_int_equal(
		verdict(&h, d, len, ALL_OFFL, NULL), S(DEQ_DROP_HDR_GSO_SIZE));
	h.gso_size = 9;
	assert_int_equal(verdict(&h, d, len, ALL_OFFL, NULL), 0);
}

/* The IP datagram of a GSO frame: 65535 bytes fit, 65536 do not. */
static void
test_gso_total(void **state)
{
	static uint8_t d[PKT_MAX];
	struct vsw_virtio_net_hdr h;
	uint32_t l4, len;

	(void)state;
	len = frame(d, 6, 6, false, 65535 - 40 - 20, &l4);
	assert_int_equal(len - 14, 65535);
	h = gso_hdr(VSW_VIRTIO_NET_HDR_GSO_TCPV6, l4, 1440, 0);
	assert_int_equal(verdict(&h, d, len, ALL_OFFL, NULL), 0);
	len = frame(d, 6, 6, false, 65536 - 40 - 20, &l4);
	assert_int_equal(
		verdict(&h, d, len, ALL_OFFL, NULL), S(DEQ_DROP_HDR_GSO_TOTAL));
}

/* Metadata back to a header: what the guest negotiated, or refused. */
static void
test_from_mbuf(void **state)
{
	static uint8_t d[2048];
	struct vsw_virtio_net_hdr h, back;
	struct rte_mbuf *m = NULL;
	uint32_t l4, len;

	(void)state;
	len = frame(d, 4, 6, true, 1500, &l4);
	h = gso_hdr(
		VSW_VIRTIO_NET_HDR_GSO_TCPV4, l4, 1448, (uint16_t)(l4 + 20));
	assert_int_equal(verdict(&h, d, len, ALL_OFFL, &m), 0);
	assert_int_equal(vsw_virtq_net_hdr_from_mbuf(m, &back, ALL_OFFL), 0);
	assert_memory_equal(&h, &back, sizeof(h));
	assert_int_equal(vsw_virtq_net_hdr_from_mbuf(m, &back,
				 ALL_OFFL & ~F(VSW_VIRTIO_NET_F_GUEST_TSO4)),
		-1);
	assert_int_equal(vsw_virtq_net_hdr_from_mbuf(m, &back,
				 ALL_OFFL & ~F(VSW_VIRTIO_NET_F_GUEST_CSUM)),
		-1);
	m->ol_flags &= ~RTE_MBUF_F_TX_TCP_SEG;
	assert_int_equal(vsw_virtq_net_hdr_from_mbuf(
				 m, &back, F(VSW_VIRTIO_NET_F_GUEST_CSUM)),
		0);
	assert_int_equal(back.flags, VSW_VIRTIO_NET_HDR_F_NEEDS_CSUM);
	assert_int_equal(back.gso_type, 0);
	assert_int_equal(back.csum_start, l4);
	assert_int_equal(back.csum_offset, 16);
	m->ol_flags = 0;
	assert_int_equal(vsw_virtq_net_hdr_from_mbuf(m, &back, 0), 0);
	assert_int_equal(back.flags | back.gso_type | back.csum_start, 0);
	rte_pktmbuf_free(m);
}

/* Writes h over the first 12 bytes of a posted TX chain, whatever the
 * buffers' cut. */
static void
chain_write_hdr(struct fx *f, int head, const struct vsw_virtio_net_hdr *h)
{
	const struct tg_chain *c = &f->q.chain[head];
	const uint8_t *p = (const uint8_t *)h;
	uint32_t left = sizeof(*h), b;

	for (b = 0; b < c->nbuf && left != 0; b++) {
		uint32_t k = RTE_MIN(left, c->buf_len[b]);

		tg_write(&f->g, c->buf_gpa[b], p, k);
		p += k;
		left -= k;
	}
}

/* Through the queue: a TSO header split 5 + 7 over two descriptors maps
 * to TSO metadata; a hostile one is dropped and counted; the frame sent
 * back to a guest with GUEST_TSO4 carries the header, one without it
 * does not get the frame (ENQ_DROP_OFFLOAD). */
static void
test_queue_paths(void **state)
{
	static uint8_t d[4096], out[4096];
	uint32_t pieces[] = {5, 7, 0};
	struct vsw_virtio_net_hdr h, bad, got;
	struct rte_mbuf *pkts[2];
	struct fx *tx = fx_new(256, F_STD | ALL_OFFL);
	struct fx *rx = fx_new(256, F_STD | ALL_OFFL);
	struct fx *plain = fx_new(256, F_STD);
	uint32_t l4, len, ulen, rxlen = 4096;
	uint16_t nb, id;
	int head, rxhead;

	(void)state;
	len = frame(d, 4, 6, false, 3000, &l4);
	pieces[2] = len;
	h = gso_hdr(
		VSW_VIRTIO_NET_HDR_GSO_TCPV4, l4, 1448, (uint16_t)(l4 + 20));
	head = tg_tx_post(&tx->q, d, len, pieces, 3, false);
	assert_true(head >= 0);
	chain_write_hdr(tx, head, &h);
	bad = h;
	bad.gso_size = 0;
	head = tg_tx_post(&tx->q, d, len, pieces, 3, false);
	chain_write_hdr(tx, head, &bad);
	tg_kick(&tx->q);
	assert_int_equal(
		vsw_virtq_dequeue_burst(tx->vq, test_pool, pkts, 2), 1);
	FX_EXPECT(tx, {S(DEQ_PACKETS), 1}, {S(DEQ_BYTES), len},
		{S(DEQ_DROP_HDR_GSO_SIZE), 1}, {S(DEQ_GSO_PACKETS), 1},
		{S(DEQ_CSUM_PARTIAL), 1}, {S(NOTIFY_SENT), 1});
	assert_true(pkts[0]->ol_flags & RTE_MBUF_F_TX_TCP_SEG);
	assert_int_equal(pkts[0]->tso_segsz, 1448);
	assert_true(tl_mbuf_equal(pkts[0], d, len));
	while (tg_used_pop(&tx->q, &id, &ulen) == 1)
		;
	rxhead = tg_rx_post(&rx->q, &rxlen, 1, false);
	assert_true(rxhead >= 0);
	tg_kick(&rx->q);
	assert_int_equal(vsw_virtq_enqueue_burst(rx->vq, pkts, 1), 1);
	tg_read(&rx->g, rx->q.chain[rxhead].buf_gpa[0], &got, 10);
	assert_memory_equal(&got, &h, 10);
	assert_int_equal(tg_rx_recv(&rx->q, out, sizeof(out), &nb), (int)len);
	assert_memory_equal(out, d, len);
	FX_EXPECT(rx, {S(ENQ_PACKETS), 1}, {S(ENQ_BYTES), len},
		{S(ENQ_GSO_PACKETS), 1}, {S(ENQ_CSUM_PARTIAL), 1},
		{S(NOTIFY_SENT), 1});
	rxhead = tg_rx_post(&plain->q, &rxlen, 1, false);
	tg_kick(&plain->q);
	assert_int_equal(vsw_virtq_enqueue_burst(plain->vq, pkts, 1), 0);
	FX_EXPECT(plain, {S(ENQ_DROP_OFFLOAD), 1});
	rte_pktmbuf_free(pkts[0]);
	fx_free(tx);
	fx_free(rx);
	fx_free(plain);
}

#define T(fn) \
	cmocka_unit_test_setup_teardown(fn, fx_pool_setup, fx_pool_teardown)

int
test_net_hdr_run(void)
{
	const struct CMUnitTest tests[] = {
		T(test_csum_range_limits),
		T(test_csum_l4),
		T(test_gso_type),
		T(test_gso_size_hdr_len),
		T(test_gso_total),
		T(test_from_mbuf),
		T(test_queue_paths),
	};

	return cmocka_run_group_tests_name("net_hdr", tests, NULL, NULL);
}

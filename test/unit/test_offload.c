/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Software offloads at the switch output (switch/core/offload.c), checked
 * against the test's own reference: random TCP/IPv4 and TCP/IPv6 TSO
 * frames and partial TCP/UDP checksums, flooded to a port that takes every
 * offload (the packet must arrive untouched, metadata and all) and to one
 * that takes none (it must get segments whose payloads concatenate to the
 * original, each at most MSS, sequence numbers, IPv4 ids and lengths
 * right, FIN/PSH on the last only, IP and TCP/UDP checksums verified by an
 * independent ones' complement sum). The accounting identity holds with
 * the extra segments, and every mbuf comes back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <urcu-qsbr.h>

#include <vsw/port.h>

#include "switch_harness.h"
#include "tl_mbuf.h"
#include "tl_rng.h"

#define FRAME_MAX 20000

static struct tl_rng rng;

static uint32_t
capa_all(void *port)
{
	(void)port;
	return VSW_PORT_OL_ALL;
}

static struct vsw_port_ops capable_ops;

/* p0 in, p1 takes no offload (a ring port), p2 takes every offload. */
static struct ctx *
offload_ctx(void)
{
	struct ctx *c = ctx_new(1, 3, 1);

	capable_ops = vsw_port_ring_ops;
	capable_ops.tx_offloads = capa_all;
	assert_int_equal(vsw_switch_port_del(c->sw, 2), 0);
	assert_int_equal(
		vsw_switch_port_add(c->sw, "p2", &capable_ops, c->rp[2], 1, 1),
		2);
	c->port_sums_off = true;
	add_rule(c, "in_port=0,actions=output:1,output:2");
	return c;
}

static uint32_t
ocsum(const uint8_t *p, uint32_t n, uint32_t sum)
{
	for (uint32_t i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		sum += (uint32_t)p[n - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum;
}

static uint32_t
rd16(const uint8_t *p)
{
	return (uint32_t)(p[0] << 8 | p[1]);
}

static uint32_t
rd32(const uint8_t *p)
{
	return rd16(p) << 16 | rd16(p + 2);
}

/* The L4 checksum of a complete packet verifies (sum incl. pseudo = 0). */
static void
l4_verify(const uint8_t *d, uint32_t len, bool v6, uint32_t l3, uint32_t l4,
	uint8_t proto)
{
	uint32_t sum = v6 ? ocsum(d + l3 + 8, 32, 0) : ocsum(d + l3 + 12, 8, 0);

	sum = ocsum((const uint8_t[]){0, proto, (uint8_t)((len - l4) >> 8),
			    (uint8_t)(len - l4)},
		4, sum);
	sum = ocsum(d + l4, len - l4, sum);
	assert_int_equal(sum, 0xffff);
	if (!v6)
		assert_int_equal(ocsum(d + l3, 20, 0), 0xffff);
}

struct spec {
	bool v6, udp, tso;
	uint32_t payload, mss, l2, l3, l4, hlen, len;
	uint8_t flags;
};

/* A frame per spec into d; the checksum field holds the pseudo-header
 * sum (partial), as a guest leaves it. */
static void
build(uint8_t *d, struct spec *s)
{
	uint32_t l4len = s->udp ? 8 : 20, o;

	memset(d, 0, 128);
	memset(d, 0x02, 6);
	memset(d + 6, 0x0a, 6);
	d[12] = s->v6 ? 0x86 : 0x08;
	d[13] = s->v6 ? 0xdd : 0x00;
	s->l2 = 14;
	s->l3 = s->v6 ? 40 : 20;
	s->l4 = s->l2 + s->l3;
	s->hlen = s->l4 + l4len;
	s->len = s->hlen + s->payload;
	o = s->l2;
	if (s->v6) {
		d[o] = 0x60;
		d[o + 4] = (uint8_t)((l4len + s->payload) >> 8);
		d[o + 5] = (uint8_t)(l4len + s->payload);
		d[o + 6] = s->udp ? 17 : 6;
		d[o + 7] = 64;
		for (int i = 0; i < 32; i++)
			d[o + 8 + i] = (uint8_t)tl_rand32(&rng);
	} else {
		uint32_t tot = 20 + l4len + s->payload;

		d[o] = 0x45;
		d[o + 2] = (uint8_t)(tot >> 8), d[o + 3] = (uint8_t)tot;
		d[o + 4] = 0x12, d[o + 5] = 0x34;
		d[o + 8] = 64;
		d[o + 9] = s->udp ? 17 : 6;
		for (int i = 0; i < 8; i++)
			d[o + 12 + i] = (uint8_t)tl_rand32(&rng);
		/* the header checksum a guest computed (complete) */
		uint32_t ck = ~ocsum(d + o, 20, 0) & 0xffff;

		d[o + 10] = (uint8_t)(ck >> 8), d[o + 11] = (uint8_t)ck;
	}
	o = s->l4;
	for (int i = 0; i < 4; i++)
		d[o + i] = (uint8_t)tl_rand32(&rng);
	if (s->udp) {
		d[o + 4] = (uint8_t)((8 + s->payload) >> 8);
		d[o + 5] = (uint8_t)(8 + s->payload);
	} else {
		for (int i = 4; i < 12; i++)
			d[o + i] = (uint8_t)tl_rand32(&rng);
		d[o + 12] = 0x50;
		d[o + 13] = s->flags;
		d[o + 14] = 0xff;
	}
	for (uint32_t i = 0; i < s->payload; i++)
		d[s->hlen + i] = (uint8_t)tl_rand32(&rng);
	/* pseudo-header sum (with the L4 length) in the checksum field */
	{
		uint32_t at = o + (s->udp ? 6 : 16), sum;

		sum = s->v6 ? ocsum(d + s->l2 + 8, 32, 0)
			    : ocsum(d + s->l2 + 12, 8, 0);
		sum = ocsum((const uint8_t[]){0, s->udp ? 17 : 6,
				    (uint8_t)((s->len - o) >> 8),
				    (uint8_t)(s->len - o)},
			4, sum);
		d[at] = (uint8_t)(sum >> 8), d[at + 1] = (uint8_t)sum;
	}
}

static struct rte_mbuf *
to_mbuf(const uint8_t *d, const struct spec *s)
{
	struct rte_mbuf *m = tl_mbuf_build(pool, d, s->len, &rng, 0);

	assert_non_null(m);
	m->l2_len = s->l2;
	m->l3_len = s->l3;
	m->ol_flags = s->v6 ? RTE_MBUF_F_TX_IPV6 : RTE_MBUF_F_TX_IPV4;
	if (s->tso) {
		m->l4_len = 20;
		m->tso_segsz = (uint16_t)s->mss;
		m->ol_flags |= RTE_MBUF_F_TX_TCP_SEG | RTE_MBUF_F_TX_TCP_CKSUM;
	} else {
		m->ol_flags |= s->udp ? RTE_MBUF_F_TX_UDP_CKSUM
				      : RTE_MBUF_F_TX_TCP_CKSUM;
	}
	return m;
}

/* Segments from the incapable port against the original frame d. */
static void
check_segments(struct rte_mbuf **seg, unsigned n, const uint8_t *d,
	const struct spec *s)
{
	static uint8_t b[FRAME_MAX];
	uint32_t off = 0, seq0 = rd32(d + s->l4 + 4);

	for (unsigned i = 0; i < n; i++) {
		uint32_t len = seg[i]->pkt_len, pl = len - s->hlen;
		const uint8_t *x = rte_pktmbuf_read(seg[i], 0, len, b);

		assert_int_equal(
			seg[i]->ol_flags &
				(RTE_MBUF_F_TX_TCP_SEG | RTE_MBUF_F_TX_L4_MASK),
			0);
		assert_true(len >= s->hlen && pl <= s->mss);
		assert_true(i + 1 == n || pl == s->mss);
		assert_memory_equal(x, d, 12); /* MACs */
		assert_memory_equal(x + s->hlen, d + s->hlen + off, pl);
		assert_int_equal(rd32(x + s->l4 + 4), seq0 + off);
		if (i + 1 != n)
			assert_int_equal(x[s->l4 + 13] & 0x09, 0);
		else
			assert_int_equal(x[s->l4 + 13], d[s->l4 + 13]);
		if (s->v6) {
			assert_int_equal(rd16(x + s->l2 + 4), len - s->l4);
		} else {
			assert_int_equal(rd16(x + s->l2 + 2), len - s->l2);
			assert_int_equal(
				rd16(x + s->l2 + 4), (0x1234 + i) & 0xffff);
		}
		l4_verify(x, len, s->v6, s->l2, s->l4, 6);
		off += pl;
	}
	assert_int_equal(off, s->payload);
}

static void
one_case(struct ctx *c, struct spec *s)
{
	static uint8_t d[FRAME_MAX], b[FRAME_MAX];
	struct rte_mbuf *m, *got[600];
	struct vsw_pmd_stats st0, st1;
	struct vsw_port_stats p0[3], p1[3];
	unsigned n, k;

	build(d, s);
	m = to_mbuf(d, s);
	pmd_stats(c, 0, &st0);
	for (k = 0; k < 3; k++)
		assert_int_equal(vsw_switch_port_stats(c->sw, k, &p0[k]), 0);
	inject(c, 0, &m, 1);
	poll_all(c);
	pmd_stats(c, 0, &st1);
	for (k = 0; k < 3; k++)
		assert_int_equal(vsw_switch_port_stats(c->sw, k, &p1[k]), 0);
	/* per destination: only p1 (no offloads) had work done for it */
	for (k = 0; k < 3; k += 2) {
		assert_int_equal(p1[k].sw_gso_packets, p0[k].sw_gso_packets);
		assert_int_equal(p1[k].sw_gso_segments, p0[k].sw_gso_segments);
		assert_int_equal(p1[k].sw_csum_packets, p0[k].sw_csum_packets);
	}
	/* the capable port: the very packet, offload metadata and all */
	assert_int_equal(collect(c, 2, got, 600), 1);
	assert_true(got[0]->ol_flags &
		    (s->tso ? RTE_MBUF_F_TX_TCP_SEG : RTE_MBUF_F_TX_L4_MASK));
	assert_true(tl_mbuf_equal(got[0], d, s->len));
	free_all(got, 1);
	n = collect(c, 1, got, 600);
	if (s->tso) {
		assert_int_equal(
			n, s->payload ? (s->payload + s->mss - 1) / s->mss : 1);
		check_segments(got, n, d, s);
		assert_int_equal(
			st1.c[VSW_PMD_SW_GSO] - st0.c[VSW_PMD_SW_GSO], 1);
		assert_int_equal(
			st1.c[VSW_PMD_GSO_EXTRA] - st0.c[VSW_PMD_GSO_EXTRA],
			n - 1);
		assert_int_equal(
			p1[1].sw_gso_packets - p0[1].sw_gso_packets, 1);
		assert_int_equal(
			p1[1].sw_gso_segments - p0[1].sw_gso_segments, n);
		assert_int_equal(p1[1].sw_csum_packets, p0[1].sw_csum_packets);
	} else {
		const uint8_t *x;

		assert_int_equal(n, 1);
		x = rte_pktmbuf_read(got[0], 0, s->len, b);
		l4_verify(x, s->len, s->v6, s->l2, s->l4, s->udp ? 17 : 6);
		/* only the checksum changed */
		assert_memory_equal(x, d, s->l4 + (s->udp ? 6 : 16));
		assert_memory_equal(x + s->l4 + (s->udp ? 8 : 18),
			d + s->l4 + (s->udp ? 8 : 18),
			s->len - s->l4 - (s->udp ? 8 : 18));
		assert_int_equal(
			st1.c[VSW_PMD_SW_CSUM] - st0.c[VSW_PMD_SW_CSUM], 1);
		assert_int_equal(
			p1[1].sw_csum_packets - p0[1].sw_csum_packets, 1);
		assert_int_equal(p1[1].sw_gso_packets, p0[1].sw_gso_packets);
	}
	assert_int_equal(p1[1].sw_offload_drops, p0[1].sw_offload_drops);
	free_all(got, n);
	check_identity(c);
}

static void
test_tso_random(void **state)
{
	struct ctx *c = offload_ctx();

	(void)state;
	for (unsigned i = 0; i < 120; i++) {
		struct spec s = {.v6 = i & 1,
			.tso = true,
			.flags = (i & 2) ? 0x19 /* FIN PSH ACK */ : 0x10};

		s.mss = 1 + tl_rand32(&rng) % 3000;
		s.payload = tl_rand32(&rng) % (FRAME_MAX - 200);
		if (s.payload / s.mss > 250)
			s.mss = s.payload / 250 + 1;
		if (i % 10 == 0)
			s.payload = s.mss * (1 + i % 7); /* exact multiples */
		if (i == 3)
			s.payload = 0;
		one_case(c, &s);
	}
	ctx_free(c);
}

static void
test_csum_random(void **state)
{
	struct ctx *c = offload_ctx();

	(void)state;
	for (unsigned i = 0; i < 200; i++) {
		struct spec s = {.v6 = i & 1,
			.udp = (i >> 1) & 1,
			.payload = tl_rand32(&rng) % 9000};

		one_case(c, &s);
	}
	ctx_free(c);
}

/* No pool to segment from: every such packet is a counted drop. */
static void
test_no_pool_dropped(void **state)
{
	struct ctx *c = offload_ctx();
	struct rte_mbuf *m, *got[4];
	struct vsw_pmd_stats st;
	struct vsw_port_stats ps;
	static uint8_t d[FRAME_MAX];
	struct spec s = {.tso = true, .mss = 100, .payload = 1000};

	(void)state;
	build(d, &s);
	/* a TSO frame with an MSS of 0 cannot be segmented either */
	m = to_mbuf(d, &s);
	m->tso_segsz = 0;
	inject(c, 0, &m, 1);
	poll_all(c);
	assert_int_equal(collect(c, 1, got, 4), 0);
	assert_int_equal(collect(c, 2, got, 4), 1);
	free_all(got, 1);
	pmd_stats(c, 0, &st);
	assert_int_equal(st.c[VSW_PMD_DROP_OFFLOAD], 1);
	/* counted for the destination it was bound for, not the other */
	assert_int_equal(vsw_switch_port_stats(c->sw, 1, &ps), 0);
	assert_int_equal(ps.sw_offload_drops, 1);
	assert_int_equal(ps.sw_gso_packets, 0);
	assert_int_equal(vsw_switch_port_stats(c->sw, 2, &ps), 0);
	assert_int_equal(ps.sw_offload_drops, 0);
	check_identity(c);
	ctx_free(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tso_random),
		cmocka_unit_test(test_csum_random),
		cmocka_unit_test(test_no_pool_dropped),
	};
	int rc;

	if (harness_setup("vsw_test_offload") < 0)
		return 1;
	tl_rng_init(&rng, "test_offload", 0x0ff10ad);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	harness_teardown(NULL);
	return rc;
}

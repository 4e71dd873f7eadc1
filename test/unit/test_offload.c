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
#include "tl_pkt.h"
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

/* The L4 checksum of a complete packet verifies (sum incl. pseudo = 0). */
static void
l4_verify(const uint8_t *d, uint32_t len, bool v6, uint32_t l3, uint32_t l4,
	uint8_t proto)
{
	assert_int_equal(tl_pkt_l4_sum(d, len, v6, l3, l4, proto), 0xffff);
	if (!v6)
		assert_int_equal(tl_ocsum(d + l3, 20, 0), 0xffff);
}

static const uint8_t dst_mac[6] = {2, 2, 2, 2, 2, 2};
static const uint8_t src_mac[6] = {10, 10, 10, 10, 10, 10};

/* A frame per spec into d; the checksum field holds the pseudo-header
 * sum (partial), as a guest leaves it. */
static void
build(uint8_t *d, struct tl_pkt *s)
{
	tl_pkt_build(d, s, dst_mac, src_mac, &rng);
}

static struct rte_mbuf *
to_mbuf(const uint8_t *d, const struct tl_pkt *s)
{
	struct rte_mbuf *m = tl_pkt_mbuf(pool, d, s, &rng);

	assert_non_null(m);
	return m;
}

/* Segments from the incapable port against the original frame d. */
static void
check_segments(struct rte_mbuf **seg, unsigned n, const uint8_t *d,
	const struct tl_pkt *s)
{
	static uint8_t b[FRAME_MAX];
	uint32_t off = 0, seq0 = tl_rd32(d + s->l4 + 4);

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
		assert_int_equal(tl_rd32(x + s->l4 + 4), seq0 + off);
		if (i + 1 != n)
			assert_int_equal(x[s->l4 + 13] & 0x09, 0);
		else
			assert_int_equal(x[s->l4 + 13], d[s->l4 + 13]);
		if (s->v6) {
			assert_int_equal(tl_rd16(x + s->l2 + 4), len - s->l4);
		} else {
			assert_int_equal(tl_rd16(x + s->l2 + 2), len - s->l2);
			assert_int_equal(
				tl_rd16(x + s->l2 + 4), (0x1234 + i) & 0xffff);
		}
		l4_verify(x, len, s->v6, s->l2, s->l4, 6);
		off += pl;
	}
	assert_int_equal(off, s->payload);
}

static void
one_case(struct ctx *c, struct tl_pkt *s)
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
		struct tl_pkt s = {.v6 = i & 1,
			.tso = true,
			.tcp_flags = (i & 2) ? 0x19 /* FIN PSH ACK */ : 0x10};

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
		struct tl_pkt s = {.v6 = i & 1,
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
	struct tl_pkt s = {.tso = true, .mss = 100, .payload = 1000};

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

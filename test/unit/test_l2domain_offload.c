/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Guest offloads through an L2 domain to a remote VTEP: TSO frames (64 KiB
 * and exactly one byte over the inner MSS, IPv4 and IPv6, a guest MSS
 * larger and smaller than the overlay's) and partial TCP/UDP checksums,
 * completed in software before encapsulation. Every outer packet is
 * decoded by a reference written here (RFC 7348 field by field), must fit
 * the underlay MTU, and the inner segments must carry the original
 * payload in order with right lengths, sequence numbers and valid IP and
 * TCP/UDP checksums (an independent ones' complement sum). What cannot be
 * completed is counted as vxlan_offload; packets in = out + counted drops.
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>
#include <rte_mbuf.h>

#include <vsw/vxlan.h>

#include "l2domain_fx.h"
#include "switch_harness.h"
#include "tl_mbuf.h"
#include "tl_pkt.h"
#include "tl_rng.h"

#define INNER_MAX (MTU - 36) /* inner frame bytes the underlay carries */
#define FRAME_MAX 65600

static uint8_t frame[FRAME_MAX], got[FRAME_MAX];

/* The shared fixture's domain on p0 (underlay), p1 and p2, VTEPs 2 and 3
 * resolved by ARP, the remote MAC r9 behind VTEP 3. */
static struct ctx *
offload_setup(void)
{
	struct ctx *c = ctx_new(1, 3, 1);
	uint8_t r9[6];

	domain_setup(c);
	resolve(c, vt2_mac, VT2);
	resolve(c, vt3_mac, VT3);
	assert_int_equal(ovc(c, VSW_OVERLAY_ARP_CONSUMED), 2);
	host_mac(9, r9);
	assert_int_equal(vsw_switch_domain_mac_add(c->sw, VNI, r9, VT3), 0);
	return c;
}

struct spec {
	struct tl_pkt p;
	bool bcast;
};

/* A guest's frame to r9 (or broadcast): the L4 checksum field holds the
 * pseudo-header sum, as virtio's NEEDS_CSUM leaves it. */
static void
build(struct spec *s)
{
	uint8_t r9[6], h1[6];

	host_mac(9, r9);
	host_mac(1, h1);
	s->p.tcp_flags = 0x19; /* FIN PSH ACK */
	tl_pkt_build(frame, &s->p, s->bcast ? bcast : r9, h1, &test_rng);
}

static struct rte_mbuf *
to_mbuf(const struct spec *s, uint64_t extra_ol)
{
	struct rte_mbuf *m = tl_pkt_mbuf(pool, frame, &s->p, &test_rng);

	assert_non_null(m);
	m->ol_flags |= extra_ol;
	return m;
}

/* The reference decoder: an outer frame from us to VTEP vt (2 or 3) in
 * VNI, within the underlay MTU; returns the inner frame's offset. */
static uint32_t
ref_decap(const uint8_t *p, uint32_t len, unsigned vt)
{
	assert_true(len >= 50 && len - 14 <= MTU);
	assert_memory_equal(p, vt == 2 ? vt2_mac : vt3_mac, 6);
	assert_memory_equal(p + 6, local_mac, 6);
	assert_int_equal(tl_rd16(p + 12), 0x0800);
	assert_int_equal(p[14], 0x45);
	assert_int_equal(tl_rd16(p + 16), len - 14);
	assert_int_equal(tl_rd16(p + 20), 0x4000); /* DF */
	assert_int_equal(p[23], 17);
	assert_int_equal(tl_ocsum(p + 14, 20, 0), 0xffff);
	assert_int_equal(tl_rd32(p + 26), LOCAL);
	assert_int_equal(tl_rd32(p + 30), vt == 2 ? VT2 : VT3);
	assert_int_equal(tl_rd16(p + 36), 4789);
	assert_int_equal(tl_rd16(p + 38), len - 34);
	assert_int_equal(p[42], 0x08);
	assert_int_equal(tl_rd32(p + 46) >> 8, VNI);
	return 50;
}

/* The inner frame x of len bytes: lengths and checksums complete. */
static void
inner_verify(const uint8_t *x, uint32_t len, const struct spec *s)
{
	uint32_t sum, l4 = len - s->p.l4;

	assert_memory_equal(x, frame, 14);
	if (s->p.v6) {
		assert_int_equal(tl_rd16(x + s->p.l2 + 4), l4);
		sum = tl_ocsum(x + s->p.l2 + 8, 32, 0);
	} else {
		assert_int_equal(tl_rd16(x + s->p.l2 + 2), len - s->p.l2);
		assert_int_equal(tl_ocsum(x + s->p.l2, 20, 0), 0xffff);
		sum = tl_ocsum(x + s->p.l2 + 12, 8, 0);
	}
	sum += (s->p.udp ? 17u : 6u) + l4;
	assert_int_equal(tl_ocsum(x + s->p.l4, l4, sum), 0xffff);
	if (s->p.udp)
		assert_int_equal(tl_rd16(x + s->p.l4 + 4), l4);
}

/* The outer packets for VTEP vt among out[0..n): decoded, checked and
 * reassembled against frame; returns how many there were. */
static unsigned
check_vtep(struct rte_mbuf **out, unsigned n, unsigned vt, const struct spec *s,
	uint32_t mss)
{
	uint32_t off = 0, k = 0, seq0 = tl_rd32(frame + s->p.l4 + 4);

	for (unsigned i = 0; i < n; i++) {
		uint32_t len = rte_pktmbuf_pkt_len(out[i]), in, pl;
		const uint8_t *p = rte_pktmbuf_read(out[i], 0, len, got);
		const uint8_t *x;

		if (tl_rd32(p + 30) != (vt == 2 ? VT2 : VT3))
			continue;
		x = p + ref_decap(p, len, vt);
		in = len - 50;
		assert_true(in <= INNER_MAX);
		inner_verify(x, in, s);
		pl = in - s->p.hlen;
		if (!s->p.tso) {
			assert_int_equal(in, s->p.len);
			assert_memory_equal(
				x, frame, s->p.l4 + (s->p.udp ? 6 : 16));
			assert_memory_equal(
				x + s->p.hlen, frame + s->p.hlen, pl);
			k++;
			continue;
		}
		assert_true(pl <= mss);
		if (s->p.v6) {
			assert_memory_equal(x + 14, frame + 14, 4);
			assert_memory_equal(x + 20, frame + 20, 34);
		} else {
			assert_memory_equal(x + 22, frame + 22, 2);
			assert_memory_equal(x + 26, frame + 26, 8);
		}
		assert_memory_equal(
			x + s->p.l4, frame + s->p.l4, 4); /* ports */
		assert_memory_equal(x + s->p.l4 + 8, frame + s->p.l4 + 8, 4);
		assert_int_equal(tl_rd32(x + s->p.l4 + 4), seq0 + off);
		assert_memory_equal(x + s->p.hlen, frame + s->p.hlen + off, pl);
		if (off + pl < s->p.payload) {
			assert_int_equal(pl, mss);
			assert_int_equal(
				x[s->p.l4 + 13], 0x10); /* no FIN PSH */
		} else {
			assert_int_equal(x[s->p.l4 + 13], 0x19);
		}
		if (!s->p.v6)
			assert_int_equal(tl_rd16(x + s->p.l2 + 4), 0x1234 + k);
		off += pl;
		k++;
	}
	if (s->p.tso) {
		assert_int_equal(off, s->p.payload);
		assert_int_equal(k, (s->p.payload + mss - 1) / mss);
	}
	return k;
}

/* One frame from p1: every VTEP it goes to (VTEP 3 alone for r9, both
 * for broadcast) gets it complete; counters and the identity hold. */
static void
one_case(struct ctx *c, struct spec *s)
{
	static struct rte_mbuf *out[600];
	uint32_t mss = 0, vteps = s->bcast ? 2 : 1, segs;
	struct vsw_pmd_stats st0, st1;
	struct vsw_port_stats p0, p1;
	uint64_t enc0 = ovc(c, VSW_OVERLAY_ENCAP);
	struct rte_mbuf *m;
	unsigned n;

	build(s);
	if (s->p.tso)
		mss = RTE_MIN(s->p.mss, INNER_MAX - s->p.hlen);
	segs = s->p.tso ? (s->p.payload + mss - 1) / mss : 1;
	m = to_mbuf(s, 0);
	pmd_stats(c, 0, &st0);
	assert_int_equal(vsw_switch_port_stats(c->sw, 0, &p0), 0);
	inject(c, 1, &m, 1);
	poll_all(c);
	pmd_stats(c, 0, &st1);
	assert_int_equal(vsw_switch_port_stats(c->sw, 0, &p1), 0);
	n = collect(c, 0, out, 600);
	assert_int_equal(n, segs * vteps);
	assert_int_equal(check_vtep(out, n, 3, s, mss), segs);
	if (s->bcast)
		assert_int_equal(check_vtep(out, n, 2, s, mss), segs);
	free_all(out, n);
	if (s->bcast) /* p2's copy: the original, as its output made it */
		free_all(out, collect(c, 2, out, 600));
	assert_int_equal(ovc(c, VSW_OVERLAY_ENCAP) - enc0, segs * vteps);
	assert_int_equal(
		p1.sw_gso_packets - p0.sw_gso_packets, s->p.tso ? vteps : 0);
	assert_int_equal(p1.sw_gso_segments - p0.sw_gso_segments,
		s->p.tso ? segs * vteps : 0);
	assert_int_equal(
		p1.sw_csum_packets - p0.sw_csum_packets, s->p.tso ? 0 : vteps);
	/* p2's share of a flood is segmented by its own output */
	assert_int_equal(st1.c[VSW_PMD_SW_GSO] - st0.c[VSW_PMD_SW_GSO],
		s->p.tso ? vteps + s->bcast : 0);
	assert_int_equal(ovc(c, VSW_OVERLAY_OFFLOAD), 0);
	assert_int_equal(ovc(c, VSW_OVERLAY_TOO_BIG), 0);
	check_identity(c);
}

/* TSO: 64 KiB (the largest IPv4 packet) with the guest's MSS for MTU
 * 1500, exactly one byte over the overlay's MSS, a guest MSS below the
 * overlay's (kept), IPv6, flooded to both VTEPs, and random sizes. */
static void
test_tso(void **state)
{
	struct ctx *c = offload_setup();
	const uint32_t omss4 = INNER_MAX - 54, omss6 = INNER_MAX - 74;
	struct spec cases[] = {
		{.p.tso = true, .p.payload = 65535 - 40, .p.mss = 1460},
		{.p.tso = true, .p.payload = omss4 + 1, .p.mss = 1460},
		{.p.tso = true, .p.payload = omss4, .p.mss = 1460},
		{.p.tso = true, .p.payload = 5000, .p.mss = 536},
		{.p.tso = true,
			.p.v6 = true,
			.p.payload = 65535 - 20,
			.p.mss = 1440},
		{.p.tso = true,
			.p.v6 = true,
			.p.payload = omss6 + 1,
			.p.mss = 1440},
		{.p.tso = true,
			.bcast = true,
			.p.payload = 20000,
			.p.mss = 1460},
		{.p.tso = true, .p.payload = 1, .p.mss = 1460},
	};

	(void)state;
	for (unsigned i = 0; i < RTE_DIM(cases); i++)
		one_case(c, &cases[i]);
	for (unsigned i = 0; i < 40; i++) {
		struct spec s = {
			.p.tso = true, .p.v6 = i & 1, .bcast = i % 5 == 0};

		s.p.mss = tl_rand_range(&test_rng, 200, 9000);
		s.p.payload = tl_rand_range(&test_rng, 1, 60000);
		one_case(c, &s);
	}
	ctx_free(c);
}

/* Partial checksums: TCP and UDP, IPv4 and IPv6, up to the inner limit. */
static void
test_csum(void **state)
{
	struct ctx *c = offload_setup();

	(void)state;
	for (unsigned i = 0; i < 64; i++) {
		struct spec s = {
			.p.udp = i & 1, .p.v6 = i & 2, .bcast = i % 7 == 0};
		uint32_t hl = 14 + (s.p.v6 ? 40 : 20) + (s.p.udp ? 8 : 20);

		s.p.payload =
			i < 4 ? INNER_MAX - hl
			      : tl_rand_range(&test_rng, 0, INNER_MAX - hl);
		one_case(c, &s);
	}
	ctx_free(c);
}

/* What cannot be completed: counted as vxlan_offload, nothing sent. */
static void
test_cannot(void **state)
{
	struct ctx *c = offload_setup();
	struct spec s = {.p.tso = true, .p.payload = 3000, .p.mss = 1460};
	struct spec u = {.p.udp = true, .p.payload = 100};
	struct rte_mbuf *m[4], *out[8];

	(void)state;
	build(&s);
	m[0] = to_mbuf(&s, RTE_MBUF_F_TX_UDP_SEG);
	m[1] = to_mbuf(&s, 0);
	m[1]->tso_segsz = 0;
	m[2] = to_mbuf(&s, 0);
	m[2]->l4_len = 8; /* shorter than a TCP header */
	build(&u);
	m[3] = to_mbuf(&u, 0);
	m[3]->ol_flags = (m[3]->ol_flags & ~RTE_MBUF_F_TX_L4_MASK) |
			 RTE_MBUF_F_TX_SCTP_CKSUM;
	inject(c, 1, m, 4);
	poll_all(c);
	assert_int_equal(collect(c, 0, out, 8), 0);
	assert_int_equal(ovc(c, VSW_OVERLAY_OFFLOAD), 4);
	assert_int_equal(ovc(c, VSW_OVERLAY_ENCAP), 0);
	check_identity(c);
	ctx_free(c);
}

static int
group_setup(void **state)
{
	(void)state;
	tl_rng_init(&test_rng, "test_l2domain_offload", 0x17);
	return harness_setup("vsw_test_l2domain_offload");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tso),
		cmocka_unit_test(test_csum),
		cmocka_unit_test(test_cannot),
	};

	return cmocka_run_group_tests(tests, group_setup, harness_teardown);
}

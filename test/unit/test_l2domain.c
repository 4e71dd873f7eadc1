/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * L2 domains and the VXLAN datapath through the whole switch core, on
 * ring ports: p0 the underlay, p1 and p2 local ports of domain 100, p3 a
 * port the rule table serves. Learning, flooding with head-end
 * replication, split horizon, remote MACs, the local-wins rule, ARP for
 * the local VTEP (answered, learned, requested, refreshed), the inner size
 * limit at exactly the underlay MTU - 36 and one past, hostile underlay input,
 * and packets in = out + counted drops after every step.
 */
#include <arpa/inet.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>

#include <cmocka.h>
#include <rte_mbuf.h>

#include <vsw/vxlan.h>

#include "switch_harness.h"
#include "tl_mbuf.h"
#include "tl_rng.h"

#define VNI 100
#define LOCAL 0x0a000001u
#define VT2 0x0a000002u
#define VT3 0x0a000003u
#define MTU 1500

static const uint8_t local_mac[6] = {0x02, 0xaa, 0, 0, 0, 1};
static const uint8_t vt2_mac[6] = {0x02, 0xbb, 0, 0, 0, 2};
static const uint8_t vt3_mac[6] = {0x02, 0xbb, 0, 0, 0, 3};
static struct tl_rng rng;

static uint64_t
ovc(struct ctx *c, enum vsw_overlay_counter k)
{
	uint64_t v[VSW_OVERLAY_N_COUNTERS];

	vsw_switch_overlay_stats(c->sw, v);
	return v[k];
}

static struct ctx *
setup(void)
{
	struct ctx *c = ctx_new(1, 4, 1);
	struct vsw_overlay_config oc = {.underlay = 0, .local_ip = LOCAL,
		.mtu = MTU};

	memcpy(oc.local_mac, local_mac, 6);
	add_rule(c, "in_port=p0,actions=output:p3");
	assert_int_equal(vsw_switch_overlay_set(c->sw, &oc), 0);
	assert_int_equal(vsw_switch_domain_add(c->sw, VNI), 0);
	assert_int_equal(vsw_switch_domain_port_add(c->sw, VNI, 1), 0);
	assert_int_equal(vsw_switch_domain_port_add(c->sw, VNI, 2), 0);
	assert_int_equal(vsw_switch_vtep_add(c->sw, VNI, VT2), 0);
	assert_int_equal(vsw_switch_vtep_add(c->sw, VNI, VT3), 0);
	return c;
}

static void
put32(uint8_t *p, uint32_t v)
{
	v = htonl(v);
	memcpy(p, &v, 4);
}

/* An ARP packet on the underlay: op 1 or 2, sender (mac, spa), target
 * tpa. */
static struct rte_mbuf *
mk_arp(unsigned op, const uint8_t sha[6], uint32_t spa, uint32_t tpa)
{
	static const uint8_t head[8] = {0, 1, 8, 0, 6, 4, 0, 0};
	uint8_t p[60];
	struct rte_mbuf *m;

	memset(p, 0, 60);
	memset(p, 0xff, 6);
	memcpy(p + 6, sha, 6);
	p[12] = 8;
	p[13] = 6;
	memcpy(p + 14, head, 8);
	p[21] = (uint8_t)op;
	memcpy(p + 22, sha, 6);
	put32(p + 28, spa);
	put32(p + 38, tpa);
	m = tl_mbuf_build_at(pool, p, 60, 0, RTE_PKTMBUF_HEADROOM);
	assert_non_null(m);
	return m;
}

/* Teach the switch VTEP ip's MAC by an ARP reply to us. */
static void
resolve(struct ctx *c, const uint8_t mac[6], uint32_t ip)
{
	struct rte_mbuf *m = mk_arp(2, mac, ip, LOCAL);

	inject(c, 0, &m, 1);
	poll_all(c);
}

/* m encapsulated as VTEP src would send it to us. */
static struct rte_mbuf *
from_vtep(struct rte_mbuf *m, const uint8_t smac[6], uint32_t sip,
	uint32_t vni)
{
	struct vsw_vxlan_tmpl t;

	vsw_vxlan_tmpl_init(&t, smac, sip, LOCAL);
	assert_int_equal(vsw_vxlan_encap(m, &t, local_mac, vni, 50000), 0);
	return m;
}

/* Collect p0 and check each is VXLAN from us, VNI 100; *to gets the
 * bitmap of VTEPs (bit 2, 3) by outer destination. */
static unsigned
collect_vxlan(struct ctx *c, unsigned *to, uint32_t want_len)
{
	struct rte_mbuf *out[64];
	unsigned n = collect(c, 0, out, 64);

	*to = 0;
	for (unsigned i = 0; i < n; i++) {
		const uint8_t *p = rte_pktmbuf_mtod(out[i], const uint8_t *);
		struct vsw_vxlan_rx rx;
		uint32_t dst;

		memcpy(&dst, p + 30, 4);
		dst = ntohl(dst);
		assert_int_equal(vsw_vxlan_parse(p, out[i]->data_len,
					 rte_pktmbuf_pkt_len(out[i]), dst, &rx),
			VSW_VXLAN_OK);
		assert_int_equal(rx.vni, VNI);
		assert_int_equal(rx.src_ip, LOCAL);
		assert_int_equal(rx.inner_len, want_len);
		assert_memory_equal(p + 6, local_mac, 6);
		assert_memory_equal(p, dst == VT2 ? vt2_mac : vt3_mac, 6);
		*to |= 1u << (dst & 0xff);
	}
	free_all(out, n);
	return n;
}

static unsigned
count_at(struct ctx *c, unsigned port)
{
	struct rte_mbuf *out[64];
	unsigned n = collect(c, port, out, 64);

	free_all(out, n);
	return n;
}

/* Flood before and after the VTEPs resolve; then unicast by learning and
 * by remote MAC; replicas are copies, the locals share. */
static void
test_flood_and_learn(void **state)
{
	struct ctx *c = setup();
	uint8_t h1[6], h2[6], r9[6];
	struct rte_mbuf *m;
	unsigned to;

	(void)state;
	host_mac(1, h1);
	host_mac(2, h2);
	host_mac(9, r9);
	m = mk_pkt(bcast, h1, -1, 1, 0, 64);
	inject(c, 1, &m, 1);
	poll_all(c);
	assert_int_equal(count_at(c, 2), 1);
	assert_int_equal(collect_vxlan(c, &to, 64), 0);
	assert_int_equal(ovc(c, VSW_OVERLAY_NO_NEIGH), 2);
	check_identity(c);

	resolve(c, vt2_mac, VT2);
	resolve(c, vt3_mac, VT3);
	assert_int_equal(ovc(c, VSW_OVERLAY_ARP_CONSUMED), 2);
	assert_int_equal(count_at(c, 3), 0); /* not through the rules */
	m = mk_pkt(bcast, h2, -1, 1, 0, 64);
	inject(c, 2, &m, 1);
	poll_all(c);
	assert_int_equal(count_at(c, 1), 1);
	assert_int_equal(count_at(c, 2), 0);
	assert_int_equal(collect_vxlan(c, &to, 64), 2);
	assert_int_equal(to, 1u << 2 | 1u << 3);
	/* h1 was learned on p1: unicast there only */
	m = mk_pkt(h1, h2, -1, 1, 0, 64);
	inject(c, 2, &m, 1);
	poll_all(c);
	assert_int_equal(count_at(c, 1), 1);
	assert_int_equal(collect_vxlan(c, &to, 64), 0);
	/* unknown unicast floods */
	m = mk_pkt(r9, h1, -1, 1, 0, 100);
	inject(c, 1, &m, 1);
	poll_all(c);
	assert_int_equal(count_at(c, 2), 1);
	assert_int_equal(collect_vxlan(c, &to, 100), 2);
	/* a remote MAC: one copy, to its VTEP */
	assert_int_equal(vsw_switch_domain_mac_add(c->sw, VNI, r9, VT3), 0);
	m = mk_pkt(r9, h1, -1, 1, 0, 100);
	inject(c, 1, &m, 1);
	poll_all(c);
	assert_int_equal(count_at(c, 2), 0);
	assert_int_equal(collect_vxlan(c, &to, 100), 1);
	assert_int_equal(to, 1u << 3);
	/* only VTEP 2 in the flood list, no other local port: the original
	 * itself is encapsulated */
	assert_int_equal(vsw_switch_vtep_del(c->sw, VNI, VT3), 0);
	assert_int_equal(vsw_switch_domain_port_del(c->sw, VNI, 2), 0);
	m = mk_pkt(bcast, h1, -1, 1, 0, 64);
	inject(c, 1, &m, 1);
	poll_all(c);
	assert_int_equal(collect_vxlan(c, &to, 64), 1);
	assert_int_equal(to, 1u << 2);
	/* p2 left: back to the rule table (none for it: no_rule) */
	m = mk_pkt(bcast, h2, -1, 1, 0, 64);
	inject(c, 2, &m, 1);
	poll_all(c);
	assert_int_equal(count_at(c, 1) + count_at(c, 0), 0);
	check_identity(c);
	ctx_free(c);
}

/* From the underlay: to a learned local MAC, flood to local ports only,
 * split horizon for remote MACs, unknown VNI, not-VXLAN to the rules. */
static void
test_decap(void **state)
{
	struct ctx *c = setup();
	uint8_t h1[6], h2[6], r9[6], r8[6];
	struct rte_mbuf *m;
	unsigned to;

	(void)state;
	host_mac(1, h1);
	host_mac(2, h2);
	host_mac(9, r9);
	host_mac(8, r8);
	m = mk_pkt(bcast, h1, -1, 1, 0, 64); /* learn h1 on p1 */
	inject(c, 1, &m, 1);
	poll_all(c);
	count_at(c, 2);
	m = from_vtep(mk_pkt(h1, r8, -1, 1, 7, 80), vt2_mac, VT2, VNI);
	inject(c, 0, &m, 1);
	poll_all(c);
	assert_int_equal(count_at(c, 2), 0);
	{
		struct rte_mbuf *o;

		assert_int_equal(collect(c, 1, &o, 1), 1);
		assert_int_equal(rte_pktmbuf_pkt_len(o), 80);
		assert_int_equal(pkt_seq(o), 7);
		assert_memory_equal(rte_pktmbuf_mtod(o, uint8_t *), h1, 6);
		rte_pktmbuf_free(o);
	}
	/* the outer source taught VTEP 2's MAC */
	assert_int_equal(ovc(c, VSW_OVERLAY_NEIGH_LEARNED), 1);
	/* nothing learned from the inner source: r8 floods both ways */
	m = from_vtep(mk_pkt(bcast, r8, -1, 1, 0, 64), vt2_mac, VT2, VNI);
	inject(c, 0, &m, 1);
	poll_all(c);
	assert_int_equal(count_at(c, 1), 1);
	assert_int_equal(count_at(c, 2), 1);
	assert_int_equal(collect_vxlan(c, &to, 64), 0); /* split horizon */
	/* to a remote MAC: never back into the overlay */
	assert_int_equal(vsw_switch_domain_mac_add(c->sw, VNI, r9, VT3), 0);
	m = from_vtep(mk_pkt(r9, r8, -1, 1, 0, 64), vt2_mac, VT2, VNI);
	inject(c, 0, &m, 1);
	poll_all(c);
	assert_int_equal(count_at(c, 0) + count_at(c, 1) + count_at(c, 2), 0);
	assert_int_equal(ovc(c, VSW_OVERLAY_SPLIT_HORIZON), 1);
	/* unknown VNI */
	m = from_vtep(mk_pkt(h1, r8, -1, 1, 0, 64), vt2_mac, VT2, VNI + 1);
	inject(c, 0, &m, 1);
	poll_all(c);
	assert_int_equal(count_at(c, 1), 0);
	assert_int_equal(ovc(c, VSW_OVERLAY_UNKNOWN_VNI), 1);
	/* plain IP on the underlay (not to us; to us, UDP 1000 -> 2000 but its
	 * checksum 0 would be a counted drop): the rule table's */
	m = mk_pkt(h1, r8, -1, VT3, 0, 64);
	inject(c, 0, &m, 1);
	poll_all(c);
	assert_int_equal(count_at(c, 3), 1);
	check_identity(c);
	ctx_free(c);
}

/* Inner frames up to MTU - 36 go; one byte more is dropped and counted. */
static void
test_inner_limit(void **state)
{
	struct ctx *c = setup();
	uint8_t h1[6], r9[6];
	struct rte_mbuf *m[2];
	unsigned to;

	(void)state;
	host_mac(1, h1);
	host_mac(9, r9);
	resolve(c, vt3_mac, VT3);
	assert_int_equal(vsw_switch_domain_mac_add(c->sw, VNI, r9, VT3), 0);
	m[0] = mk_pkt(r9, h1, -1, 1, 0, MTU - 36);
	m[1] = mk_pkt(r9, h1, -1, 1, 1, MTU - 35);
	inject(c, 1, m, 2);
	poll_all(c);
	assert_int_equal(collect_vxlan(c, &to, MTU - 36), 1);
	assert_int_equal(ovc(c, VSW_OVERLAY_TOO_BIG), 1);
	check_identity(c);
	ctx_free(c);
}

/* A remote MAC that moves here: learning it locally wins; mac-add of a
 * new location forgets the local entry. */
static void
test_local_wins(void **state)
{
	struct ctx *c = setup();
	uint8_t h2[6], r9[6];
	struct rte_mbuf *m;
	unsigned to;

	(void)state;
	host_mac(2, h2);
	host_mac(9, r9);
	resolve(c, vt2_mac, VT2);
	resolve(c, vt3_mac, VT3);
	assert_int_equal(vsw_switch_domain_mac_add(c->sw, VNI, r9, VT3), 0);
	m = mk_pkt(bcast, r9, -1, 1, 0, 64); /* r9 shows up on p1 */
	inject(c, 1, &m, 1);
	poll_all(c);
	count_at(c, 2);
	collect_vxlan(c, &to, 64);
	m = mk_pkt(r9, h2, -1, 1, 0, 64);
	inject(c, 2, &m, 1);
	poll_all(c);
	assert_int_equal(count_at(c, 1), 1);
	assert_int_equal(collect_vxlan(c, &to, 64), 0);
	/* the same route again changes nothing; a move to VTEP 2 does */
	assert_int_equal(vsw_switch_domain_mac_add(c->sw, VNI, r9, VT3), 0);
	m = mk_pkt(r9, h2, -1, 1, 0, 64);
	inject(c, 2, &m, 1);
	poll_all(c);
	assert_int_equal(count_at(c, 1), 1);
	assert_int_equal(vsw_switch_domain_mac_add(c->sw, VNI, r9, VT2), 0);
	m = mk_pkt(r9, h2, -1, 1, 0, 64);
	inject(c, 2, &m, 1);
	poll_all(c);
	assert_int_equal(count_at(c, 1), 0);
	assert_int_equal(collect_vxlan(c, &to, 64), 1);
	assert_int_equal(to, 1u << 2);
	assert_int_equal(vsw_switch_domain_mac_del(c->sw, VNI, r9), 0);
	assert_int_equal(vsw_switch_domain_mac_del(c->sw, VNI, r9), -ENOENT);
	check_identity(c);
	ctx_free(c);
}

/* ARP: a request for the local IP is answered in place; the tick asks
 * for unresolved VTEPs once a second, through PMD 0. */
static void
test_arp(void **state)
{
	struct ctx *c = setup();
	struct rte_mbuf *m, *o[4];
	const uint8_t *p;
	uint32_t ip;

	(void)state;
	m = mk_arp(1, vt2_mac, VT2, LOCAL);
	inject(c, 0, &m, 1);
	poll_all(c);
	assert_int_equal(collect(c, 0, o, 4), 1);
	p = rte_pktmbuf_mtod(o[0], const uint8_t *);
	assert_memory_equal(p, vt2_mac, 6);
	assert_memory_equal(p + 6, local_mac, 6);
	assert_int_equal(p[21], 2);
	assert_memory_equal(p + 22, local_mac, 6);
	memcpy(&ip, p + 28, 4);
	assert_int_equal(ntohl(ip), LOCAL);
	assert_memory_equal(p + 32, vt2_mac, 6);
	memcpy(&ip, p + 38, 4);
	assert_int_equal(ntohl(ip), VT2);
	rte_pktmbuf_free(o[0]);
	/* the asker is VTEP 2: learned from its request */
	vsw_switch_overlay_tick(c->sw, 10);
	poll_all(c);
	assert_int_equal(collect(c, 0, o, 4), 1); /* only VTEP 3 asked for */
	p = rte_pktmbuf_mtod(o[0], const uint8_t *);
	assert_memory_equal(p, bcast, 6);
	assert_int_equal(p[21], 1);
	memcpy(&ip, p + 38, 4);
	assert_int_equal(ntohl(ip), VT3);
	rte_pktmbuf_free(o[0]);
	vsw_switch_overlay_tick(c->sw, 10); /* rate limit: not again yet */
	poll_all(c);
	assert_int_equal(collect(c, 0, o, 4), 0);
	vsw_switch_overlay_tick(c->sw, 11);
	poll_all(c);
	assert_int_equal(collect(c, 0, o, 4), 1);
	rte_pktmbuf_free(o[0]);
	assert_int_equal(ovc(c, VSW_OVERLAY_ARP_REQUESTS), 2);
	/* ARP for another address: the rules' */
	m = mk_arp(1, vt2_mac, VT2, VT3);
	inject(c, 0, &m, 1);
	poll_all(c);
	assert_int_equal(count_at(c, 3), 1);
	check_identity(c);
	ctx_free(c);
}

/* What p0 sent: ARP requests (bit per target VTEP, 2 or 3) and VXLAN
 * packets (outer destination MAC into *dmac); how many. */
static unsigned
underlay_out(struct ctx *c, unsigned *asked, uint8_t dmac[6])
{
	struct rte_mbuf *o[8];
	unsigned n = collect(c, 0, o, 8);

	*asked = 0;
	for (unsigned i = 0; i < n; i++) {
		const uint8_t *p = rte_pktmbuf_mtod(o[i], const uint8_t *);
		uint32_t ip;

		if (p[12] == 8 && p[13] == 6) {
			assert_memory_equal(p, bcast, 6);
			assert_int_equal(p[21], 1);
			memcpy(&ip, p + 38, 4);
			*asked |= 1u << (ntohl(ip) & 0xff);
		} else {
			memcpy(dmac, p, 6);
		}
	}
	free_all(o, n);
	return n;
}

/*
 * ARP refresh: a known VTEP not heard from for VSW_OVERLAY_REFRESH_SEC is
 * asked again, to the second; its answer from a new MAC (the underlay NIC
 * replaced) moves one-way traffic there; a VTEP that stays silent is asked
 * VSW_OVERLAY_REFRESH_PROBES times a second apart, then forgotten (its
 * traffic counted as vxlan_no_neigh) until it answers; VXLAN from a VTEP
 * at its MAC counts as hearing it.
 */
static void
test_arp_refresh(void **state)
{
	static const uint8_t vt2_new[6] = {0x02, 0xcc, 0, 0, 0, 2};
	const uint64_t t0 = 100, due = t0 + VSW_OVERLAY_REFRESH_SEC;
	struct ctx *c = setup();
	uint8_t h1[6], r9[6], r8[6], dmac[6];
	struct rte_mbuf *m;
	unsigned asked, k;

	(void)state;
	host_mac(1, h1);
	host_mac(9, r9);
	host_mac(8, r8);
	resolve(c, vt2_mac, VT2);
	resolve(c, vt3_mac, VT3);
	assert_int_equal(vsw_switch_domain_mac_add(c->sw, VNI, r9, VT2), 0);
	assert_int_equal(vsw_switch_domain_mac_add(c->sw, VNI, r8, VT3), 0);
	vsw_switch_overlay_tick(c->sw, t0);
	vsw_switch_overlay_tick(c->sw, due - 1);
	poll_all(c);
	assert_int_equal(underlay_out(c, &asked, dmac), 0);
	vsw_switch_overlay_tick(c->sw, due);
	poll_all(c);
	assert_int_equal(underlay_out(c, &asked, dmac), 2);
	assert_int_equal(asked, (1u << 2) | (1u << 3));
	assert_int_equal(ovc(c, VSW_OVERLAY_ARP_REFRESH), 2);
	/* VTEP 2 answers from its new NIC: one-way traffic follows */
	resolve(c, vt2_new, VT2);
	assert_int_equal(ovc(c, VSW_OVERLAY_NEIGH_CHANGED), 1);
	m = mk_pkt(r9, h1, -1, 1, 0, 64);
	inject(c, 1, &m, 1);
	poll_all(c);
	assert_int_equal(underlay_out(c, &asked, dmac), 1);
	assert_memory_equal(dmac, vt2_new, 6);
	/* VTEP 3 stays silent: asked again a second apart, then forgotten */
	for (k = 2; k <= VSW_OVERLAY_REFRESH_PROBES; k++) {
		vsw_switch_overlay_tick(c->sw, due + k - 1);
		poll_all(c);
		assert_int_equal(underlay_out(c, &asked, dmac), 1);
		assert_int_equal(asked, 1u << 3);
	}
	assert_int_equal(ovc(c, VSW_OVERLAY_NEIGH_EXPIRED), 0);
	vsw_switch_overlay_tick(c->sw, due + k - 1);
	poll_all(c);
	assert_int_equal(underlay_out(c, &asked, dmac), 1);
	assert_int_equal(asked, 1u << 3);
	assert_int_equal(ovc(c, VSW_OVERLAY_NEIGH_EXPIRED), 1);
	assert_int_equal(ovc(c, VSW_OVERLAY_ARP_REFRESH),
		2 + VSW_OVERLAY_REFRESH_PROBES - 1);
	m = mk_pkt(r8, h1, -1, 1, 0, 64);
	inject(c, 1, &m, 1);
	poll_all(c);
	assert_int_equal(underlay_out(c, &asked, dmac), 0);
	assert_int_equal(ovc(c, VSW_OVERLAY_NO_NEIGH), 1);
	resolve(c, vt3_mac, VT3);
	m = mk_pkt(r8, h1, -1, 1, 0, 64);
	inject(c, 1, &m, 1);
	poll_all(c);
	assert_int_equal(underlay_out(c, &asked, dmac), 1);
	assert_memory_equal(dmac, vt3_mac, 6);
	/* VXLAN from VTEP 2 at its MAC counts as heard: only VTEP 3 is due */
	vsw_switch_overlay_tick(c->sw, due + k);
	m = from_vtep(mk_pkt(h1, r9, -1, 1, 0, 64), vt2_new, VT2, VNI);
	inject(c, 0, &m, 1);
	poll_all(c);
	count_at(c, 1);
	vsw_switch_overlay_tick(c->sw, due + k + VSW_OVERLAY_REFRESH_SEC - 1);
	vsw_switch_overlay_tick(c->sw, due + k + VSW_OVERLAY_REFRESH_SEC);
	poll_all(c);
	assert_int_equal(underlay_out(c, &asked, dmac), 1);
	assert_int_equal(asked, 1u << 3);
	check_identity(c);
	ctx_free(c);
}

/* Garbage and near-VXLAN on the underlay: no crash, every packet out or
 * counted. */
static void
test_hostile_underlay(void **state)
{
	struct ctx *c = setup();
	uint8_t h1[6];

	(void)state;
	host_mac(1, h1);
	resolve(c, vt2_mac, VT2);
	for (unsigned round = 0; round < 200; round++) {
		struct rte_mbuf *m[16];

		for (unsigned i = 0; i < 16; i++) {
			uint32_t len = tl_rand_range(&rng, 1, 160);
			uint8_t *p;

			if (i & 1) {
				m[i] = from_vtep(mk_pkt(tl_rand32(&rng) & 1 ?
						bcast : h1, h1, -1, 1, 0, 64),
					vt2_mac, VT2, VNI);
				p = rte_pktmbuf_mtod(m[i], uint8_t *);
				p[tl_rand_range(&rng, 0, 60)] =
					(uint8_t)tl_rand32(&rng);
				if (tl_rand32(&rng) & 1)
					rte_pktmbuf_trim(m[i],
						(uint16_t)tl_rand_range(&rng,
							0, 100));
				continue;
			}
			m[i] = rte_pktmbuf_alloc(pool);
			p = (uint8_t *)rte_pktmbuf_append(m[i], (uint16_t)len);
			tl_rand_bytes(&rng, p, len);
			if (len >= 42 && (round & 1)) {
				p[12] = 8;
				p[13] = 6;
				put32(p + 38, LOCAL);
			}
		}
		inject(c, 0, m, 16);
		poll_all(c);
		for (unsigned port = 0; port < 4; port++)
			count_at(c, port);
	}
	check_identity(c);
	ctx_free(c);
}

/* The control interface's refusals. */
static void
test_control(void **state)
{
	struct ctx *c = setup();
	uint8_t h1[6], mc[6] = {1, 0, 0x5e, 0, 0, 1};
	struct vsw_domain_info in;
	uint32_t vnis[4];

	(void)state;
	host_mac(1, h1);
	assert_int_equal(vsw_switch_domain_add(c->sw, 0), -EINVAL);
	assert_int_equal(vsw_switch_domain_add(c->sw, VSW_VXLAN_VNI_MAX + 1),
		-EINVAL);
	assert_int_equal(vsw_switch_domain_add(c->sw, VSW_VXLAN_VNI_MAX), 0);
	assert_int_equal(vsw_switch_domain_add(c->sw, 1), 0);
	assert_int_equal(vsw_switch_domain_add(c->sw, VNI), -EEXIST);
	assert_int_equal(vsw_switch_domains(c->sw, vnis, 4), 3);
	assert_int_equal(vnis[0], 1);
	assert_int_equal(vnis[1], VNI);
	assert_int_equal(vnis[2], VSW_VXLAN_VNI_MAX);
	assert_int_equal(vsw_switch_domain_port_add(c->sw, 1, 1), -EBUSY);
	assert_int_equal(vsw_switch_domain_port_add(c->sw, VNI, 1), -EEXIST);
	assert_int_equal(vsw_switch_domain_port_add(c->sw, 1, 0), -EBUSY);
	assert_int_equal(vsw_switch_domain_port_add(c->sw, 1, 9), -ENOENT);
	assert_int_equal(vsw_switch_domain_port_add(c->sw, 2, 3), -ENOENT);
	assert_int_equal(vsw_switch_vtep_add(c->sw, VNI, VT2), -EEXIST);
	assert_int_equal(vsw_switch_vtep_add(c->sw, VNI, LOCAL), -EINVAL);
	assert_int_equal(vsw_switch_domain_mac_add(c->sw, VNI, mc, VT2),
		-EINVAL);
	assert_int_equal(vsw_switch_domain_mac_add(c->sw, VNI, h1, 0),
		-EINVAL);
	assert_int_equal(vsw_switch_domain_get(c->sw, VNI, &in), 0);
	assert_int_equal(in.n_ports, 2);
	assert_int_equal(in.n_vteps, 2);
	/* many remote MACs: the hash grows, every one found, then deleted */
	for (unsigned i = 0; i < 300; i++) {
		uint8_t m[6] = {2, 1, 0, 0, (uint8_t)(i >> 8), (uint8_t)i};

		assert_int_equal(vsw_switch_domain_mac_add(c->sw, 1, m,
					 i & 1 ? VT2 : VT3), 0);
	}
	assert_int_equal(vsw_switch_domain_get(c->sw, 1, &in), 0);
	assert_int_equal(in.n_remote_macs, 300);
	for (unsigned i = 0; i < 300; i += 2) {
		uint8_t m[6] = {2, 1, 0, 0, (uint8_t)(i >> 8), (uint8_t)i};

		assert_int_equal(vsw_switch_domain_mac_del(c->sw, 1, m), 0);
	}
	assert_int_equal(vsw_switch_domain_get(c->sw, 1, &in), 0);
	assert_int_equal(in.n_remote_macs, 150);
	assert_int_equal(vsw_switch_domain_del(c->sw, 1), 0);
	assert_int_equal(vsw_switch_domain_del(c->sw, 1), -ENOENT);
	/* a deleted port leaves its domain (its number may be reused); a
	 * deleted underlay unsets the overlay */
	struct vsw_overlay_config oc;

	assert_int_equal(vsw_switch_port_del(c->sw, 2), 0);
	assert_int_equal(vsw_switch_domain_get(c->sw, VNI, &in), 0);
	assert_int_equal(in.n_ports, 1);
	assert_int_equal(in.ports[0], 1);
	assert_int_equal(vsw_switch_overlay_get(c->sw, &oc), 0);
	assert_int_equal(vsw_switch_port_del(c->sw, 0), 0);
	assert_int_equal(vsw_switch_overlay_get(c->sw, &oc), -ENOENT);
	/* the neighbours that domain 1 alone named are gone with it */
	assert_int_equal(vsw_switch_overlay_neighs(c->sw, NULL, 0), 2);
	assert_int_equal(vsw_switch_domain_del(c->sw, VNI), 0);
	assert_int_equal(vsw_switch_overlay_neighs(c->sw, NULL, 0), 0);
	ctx_free(c);
}

static int
group_setup(void **state)
{
	(void)state;
	tl_rng_init(&rng, "test_l2domain", 0x17);
	return harness_setup("vsw_test_l2domain");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flood_and_learn),
		cmocka_unit_test(test_decap),
		cmocka_unit_test(test_inner_limit),
		cmocka_unit_test(test_local_wins),
		cmocka_unit_test(test_arp),
		cmocka_unit_test(test_arp_refresh),
		cmocka_unit_test(test_hostile_underlay),
		cmocka_unit_test(test_control),
	};

	return cmocka_run_group_tests(tests, group_setup, harness_teardown);
}

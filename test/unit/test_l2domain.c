/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * L2 domains and the VXLAN datapath through the whole switch core, on
 * ring ports: p0 the underlay, p1 and p2 local ports of domain 100, p3 a
 * port the rule table serves (l2domain_fx.c). Learning, flooding with
 * head-end replication, split horizon, remote MACs, the local-wins rule,
 * the inner size limit at exactly the underlay MTU - 36 and one past, the
 * control calls' refusals, and packets in = out + counted drops after
 * every step. ARP for the local VTEP (answered, learned, requested,
 * refreshed) and hostile underlay input: test_l2domain_arp.c.
 */
#include <arpa/inet.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>

#include <cmocka.h>
#include <rte_mbuf.h>

#include <vsw/vxlan.h>

#include "l2domain_fx.h"
#include "tl_mbuf.h"

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
	tl_rng_init(&test_rng, "test_l2domain", 0x17);
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

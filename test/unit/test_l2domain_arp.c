/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * L2 domains on the underlay side (l2domain_fx.c's switch): ARP for the
 * local VTEP answered, learned, requested and refreshed, and hostile
 * underlay input; packets in = out + counted drops after every step. Run
 * from test_l2domain.c's main, in its table's order.
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

/* ARP: a request for the local IP is answered in place; the tick asks
 * for unresolved VTEPs once a second, through PMD 0. */
void
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
void
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
void
test_hostile_underlay(void **state)
{
	struct tl_rng *rng = &test_rng;
	struct ctx *c = setup();
	uint8_t h1[6];

	(void)state;
	host_mac(1, h1);
	resolve(c, vt2_mac, VT2);
	for (unsigned round = 0; round < 200; round++) {
		struct rte_mbuf *m[16];

		for (unsigned i = 0; i < 16; i++) {
			uint32_t len = tl_rand_range(rng, 1, 160);
			uint8_t *p;

			if (i & 1) {
				m[i] = from_vtep(mk_pkt(tl_rand32(rng) & 1 ?
						bcast : h1, h1, -1, 1, 0, 64),
					vt2_mac, VT2, VNI);
				p = rte_pktmbuf_mtod(m[i], uint8_t *);
				p[tl_rand_range(rng, 0, 60)] =
					(uint8_t)tl_rand32(rng);
				if (tl_rand32(rng) & 1)
					rte_pktmbuf_trim(m[i],
						(uint16_t)tl_rand_range(rng,
							0, 100));
				continue;
			}
			m[i] = rte_pktmbuf_alloc(pool);
			p = (uint8_t *)rte_pktmbuf_append(m[i], (uint16_t)len);
			tl_rand_bytes(rng, p, len);
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

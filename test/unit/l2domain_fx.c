/* SPDX-License-Identifier: BSD-3-Clause */
/* The L2 domain tests' fixture: see l2domain_fx.h. */
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

const uint8_t local_mac[6] = {0x02, 0xaa, 0, 0, 0, 1};
const uint8_t vt2_mac[6] = {0x02, 0xbb, 0, 0, 0, 2};
const uint8_t vt3_mac[6] = {0x02, 0xbb, 0, 0, 0, 3};
struct tl_rng test_rng;

uint64_t
ovc(struct ctx *c, enum vsw_overlay_counter k)
{
	uint64_t v[VSW_OVERLAY_N_COUNTERS];

	vsw_switch_overlay_stats(c->sw, v);
	return v[k];
}

struct ctx *
setup(void)
{
	struct ctx *c = ctx_new(1, 4, 1);

	add_rule(c, "in_port=p0,actions=output:p3");
	domain_setup(c);
	return c;
}

void
domain_setup(struct ctx *c)
{
	struct vsw_overlay_config oc = {.underlay = 0, .local_ip = LOCAL,
		.mtu = MTU};

	memcpy(oc.local_mac, local_mac, 6);
	assert_int_equal(vsw_switch_overlay_set(c->sw, &oc), 0);
	assert_int_equal(vsw_switch_domain_add(c->sw, VNI), 0);
	assert_int_equal(vsw_switch_domain_port_add(c->sw, VNI, 1), 0);
	assert_int_equal(vsw_switch_domain_port_add(c->sw, VNI, 2), 0);
	assert_int_equal(vsw_switch_vtep_add(c->sw, VNI, VT2), 0);
	assert_int_equal(vsw_switch_vtep_add(c->sw, VNI, VT3), 0);
}

void
put32(uint8_t *p, uint32_t v)
{
	v = htonl(v);
	memcpy(p, &v, 4);
}

struct rte_mbuf *
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

void
resolve(struct ctx *c, const uint8_t mac[6], uint32_t ip)
{
	struct rte_mbuf *m = mk_arp(2, mac, ip, LOCAL);

	inject(c, 0, &m, 1);
	poll_all(c);
}

struct rte_mbuf *
from_vtep(struct rte_mbuf *m, const uint8_t smac[6], uint32_t sip,
	uint32_t vni)
{
	struct vsw_vxlan_tmpl t;

	vsw_vxlan_tmpl_init(&t, smac, sip, LOCAL);
	assert_int_equal(vsw_vxlan_encap(m, &t, local_mac, vni, 50000), 0);
	return m;
}

unsigned
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

unsigned
count_at(struct ctx *c, unsigned port)
{
	struct rte_mbuf *out[64];
	unsigned n = collect(c, port, out, 64);

	free_all(out, n);
	return n;
}

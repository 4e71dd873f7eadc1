/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The L2 domain tests' fixture (l2domain_fx.c), shared by test_l2domain.c,
 * test_l2domain_arp.c and test_l2domain_offload.c: a switch on ring ports (switch_harness.h), p0
 * the underlay, p1 and p2 local ports of domain VNI, p3 a port the rule
 * table serves; remote VTEPs VT2 and VT3.
 */
#ifndef TEST_L2DOMAIN_FX_H
#define TEST_L2DOMAIN_FX_H

#include <stdint.h>

#include <rte_mbuf.h>

#include <vsw/switch.h>

#include "switch_harness.h"
#include "tl_rng.h"

#define VNI 100
#define LOCAL 0x0a000001u
#define VT2 0x0a000002u
#define VT3 0x0a000003u
#define MTU 1500

extern const uint8_t local_mac[6];
extern const uint8_t vt2_mac[6];
extern const uint8_t vt3_mac[6];
/* One generator for both files, seeded in main's group setup. */
extern struct tl_rng test_rng;

uint64_t ovc(struct ctx *c, enum vsw_overlay_counter k);
/* The switch above: domain VNI on p1, p2, VTEPs VT2 and VT3, MTU. */
struct ctx *setup(void);
/* setup()'s overlay on c (p0 its underlay, ports p1 and p2): for a
 * switch of other ports and rules (test_l2domain_offload.c). */
void domain_setup(struct ctx *c);
void put32(uint8_t *p, uint32_t v);
/* An ARP packet on the underlay: op 1 or 2, sender (mac, spa), target
 * tpa. */
struct rte_mbuf *mk_arp(unsigned op, const uint8_t sha[6], uint32_t spa,
	uint32_t tpa);
/* Teach the switch VTEP ip's MAC by an ARP reply to us. */
void resolve(struct ctx *c, const uint8_t mac[6], uint32_t ip);
/* m encapsulated as VTEP src would send it to us. */
struct rte_mbuf *from_vtep(struct rte_mbuf *m, const uint8_t smac[6],
	uint32_t sip, uint32_t vni);
/* Collect p0 and check each is VXLAN from us, VNI 100; *to gets the
 * bitmap of VTEPs (bit 2, 3) by outer destination. */
unsigned collect_vxlan(struct ctx *c, unsigned *to, uint32_t want_len);
/* Collect port's output and free it: how many. */
unsigned count_at(struct ctx *c, unsigned port);

/* The cases of test_l2domain_arp.c (run from test_l2domain.c's main). */
void test_arp(void **state);
void test_arp_refresh(void **state);
void test_hostile_underlay(void **state);

#endif /* TEST_L2DOMAIN_FX_H */

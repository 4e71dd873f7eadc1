/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The flow key tests' packet builder and checks (flow_pb.c), shared by
 * test_flow.c (crafted packets) and test_flow_hostile.c (broken headers,
 * random packets, checksum and offload metadata).
 *
 * The builder writes headers and, independently of the extractor, records
 * the key it expects once each header unit is complete (a snapshot per
 * header end offset). No EAL: mbufs are plain structs pointing at malloc'd
 * buffers of exactly their segment's length, so ASan sees any overread.
 */
#ifndef TEST_FLOW_PB_H
#define TEST_FLOW_PB_H

#include <stdint.h>

#include <rte_mbuf.h>

#include <vsw/flow.h>

#include "tl_rng.h"

#define PB_MAX 600
#define PB_SNAPS 24
#define IN_PORT 7
#define MAX_SEGS 4

#define IP4(a, b, c, d) \
	((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

/* Packet under construction plus the keys expected at each header end. */
struct pb {
	uint8_t d[PB_MAX];
	uint32_t len;
	uint32_t ip_len_off; /* where to patch the IPv4/IPv6 length, or 0 */
	uint32_t ip_off;
	int ip_ver;
	int n_tags;
	struct vsw_flow_key exp;
	uint32_t n_snap;
	uint32_t snap_end[PB_SNAPS];
	struct vsw_flow_key snap[PB_SNAPS];
};

struct chain {
	struct rte_mbuf m[MAX_SEGS];
	uint8_t *buf[MAX_SEGS];
};

/* One generator for both files, seeded in main: the cases draw from it in
 * their order in main's table. */
extern struct tl_rng test_rng;

static inline uint32_t
rnd(void)
{
	return tl_rand32(&test_rng);
}

void put16(uint8_t *p, uint16_t host);

void pb_init(struct pb *b);
void pb_eth(struct pb *b, uint16_t type);
/* A VLAN tag whose TPID was the previous type; next = following type. */
void pb_vlan(struct pb *b, uint16_t tci, uint16_t next);
void pb_ipv4(struct pb *b, uint8_t proto, uint32_t src, uint32_t dst,
	uint8_t tos, uint8_t ttl, uint16_t frag_field, uint32_t opt_len);
void pb_ipv6(struct pb *b, uint8_t nh, uint8_t tc, uint8_t hlim,
	uint8_t seed);
/* Hop-by-hop, routing or destination options header of (units+1)*8 B. */
void pb_ipv6_opt(struct pb *b, uint8_t next, uint8_t units);
void pb_ipv6_frag(struct pb *b, uint8_t next, uint16_t offset8, int more);
void pb_tcp(struct pb *b, uint16_t sport, uint16_t dport, uint16_t flags);
/* UDP (8 B) or SCTP (12 B): ports only. */
void pb_ports(struct pb *b, uint32_t hlen, uint16_t sport, uint16_t dport);
/* ICMP/ICMPv6: a 4-byte unit (type, code, checksum), then the rest. */
void pb_icmp(struct pb *b, uint8_t type, uint8_t code);
void pb_arp(struct pb *b, uint16_t op, uint32_t spa, uint32_t tpa);
void pb_payload(struct pb *b, uint32_t n);
/* Patch the IP length field now that the datagram is complete. */
void pb_finish(struct pb *b);

/* Build a chain over data split at cuts[] (ascending, n_cuts < MAX_SEGS). */
struct rte_mbuf *chain_build(struct chain *c, const uint8_t *data,
	uint32_t len, const uint32_t *cuts, unsigned n_cuts);
void chain_free(struct chain *c);
void extract_cut(const uint8_t *data, uint32_t len, const uint32_t *cuts,
	unsigned n_cuts, struct vsw_flow_key *key);
/* got == exp, else every differing byte printed and the case failed. */
void key_check(const struct vsw_flow_key *got,
	const struct vsw_flow_key *exp, const char *what, uint32_t len,
	uint32_t cut);
/* Whole, every truncation, every 2- and sampled 3-segment split. */
void check_packet(struct pb *b);

/* The cases of test_flow_hostile.c (run from test_flow.c's main). */
void test_malformed(void **state);
void test_random_packets(void **state);
void test_partial_csum_same_key(void **state);

#endif /* TEST_FLOW_PB_H */

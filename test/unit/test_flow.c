/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for flow key extraction (switch/flow_extract.c).
 *
 * A packet builder writes headers and, independently of the extractor,
 * records the key it expects once each header unit is complete (a snapshot
 * per header end offset). Every crafted packet is then extracted whole,
 * truncated at every byte offset (the buffer is allocated with exactly the
 * truncated length, so ASan catches any read past the data; the expected key
 * is the last snapshot that fits), and split into two and three segments at
 * every offset (same key as contiguous). Random packets check that
 * contiguous and chained extraction agree and never read out of bounds.
 * No EAL: mbufs are plain structs pointing at malloc'd buffers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rte_byteorder.h>
#include <rte_mbuf.h>

#include <vsw/flow.h>

#include "tl_rng.h"

#define PB_MAX 600
#define PB_SNAPS 24
#define IN_PORT 7

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

static struct tl_rng rng; /* tl_rng_init in main */

static uint32_t
rnd(void)
{
	return tl_rand32(&rng);
}

static void
pb_snap(struct pb *b)
{
	assert_true(b->n_snap < PB_SNAPS);
	b->snap_end[b->n_snap] = b->len;
	b->snap[b->n_snap] = b->exp;
	b->n_snap++;
}

static void
pb_init(struct pb *b)
{
	memset(b, 0, sizeof(*b));
	b->exp.in_port = IN_PORT;
	pb_snap(b);
}

static uint8_t *
pb_put(struct pb *b, uint32_t n)
{
	uint8_t *p = b->d + b->len;

	assert_true(b->len + n <= PB_MAX);
	b->len += n;
	return p;
}

static void
put16(uint8_t *p, uint16_t host)
{
	p[0] = (uint8_t)(host >> 8);
	p[1] = (uint8_t)host;
}

static uint16_t
net16(uint16_t host)
{
	return rte_cpu_to_be_16(host);
}

static void
pb_eth(struct pb *b, uint16_t type)
{
	static const uint8_t dst[6] = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55};
	static const uint8_t src[6] = {0x0a, 0xbb, 0xcc, 0xdd, 0xee, 0xf1};
	uint8_t *p = pb_put(b, 14);

	memcpy(p, dst, 6);
	memcpy(p + 6, src, 6);
	put16(p + 12, type);
	memcpy(b->exp.dl_dst, dst, 6);
	memcpy(b->exp.dl_src, src, 6);
	b->exp.dl_type = net16(type);
	pb_snap(b);
}

/* A VLAN tag whose TPID was the previous type; next = following type. */
static void
pb_vlan(struct pb *b, uint16_t tci, uint16_t next)
{
	uint8_t *p = pb_put(b, 4);

	put16(p, tci);
	put16(p + 2, next);
	if (b->n_tags == 0)
		b->exp.vlan_tci = net16(tci | 0x1000);
	b->n_tags++;
	b->exp.dl_type = net16(next);
	pb_snap(b);
}

static void
pb_ipv4(struct pb *b, uint8_t proto, uint32_t src, uint32_t dst, uint8_t tos,
	uint8_t ttl, uint16_t frag_field, uint32_t opt_len)
{
	uint32_t hlen = 20 + opt_len;
	uint8_t *p = pb_put(b, hlen);
	uint32_t i;

	p[0] = (uint8_t)(0x40 | (hlen / 4));
	p[1] = tos;
	b->ip_len_off = (uint32_t)(p + 2 - b->d);
	b->ip_off = (uint32_t)(p - b->d);
	b->ip_ver = 4;
	put16(p + 4, 0x1234);
	put16(p + 6, frag_field);
	p[8] = ttl;
	p[9] = proto;
	put16(p + 10, 0);
	put16(p + 12, (uint16_t)(src >> 16));
	put16(p + 14, (uint16_t)src);
	put16(p + 16, (uint16_t)(dst >> 16));
	put16(p + 18, (uint16_t)dst);
	for (i = 0; i < opt_len; i++)
		p[20 + i] = i + 1 == opt_len ? 0 : 1; /* NOPs then EOL */
	b->exp.nw_proto = proto;
	b->exp.nw_tos = tos;
	b->exp.nw_ttl = ttl;
	for (i = 0; i < 4; i++) {
		b->exp.nw_src[i] = (uint8_t)(src >> (24 - 8 * i));
		b->exp.nw_dst[i] = (uint8_t)(dst >> (24 - 8 * i));
	}
	/* MF = 0x2000, offset = low 13 bits. */
	if ((frag_field & 0x2000) || (frag_field & 0x1fff))
		b->exp.nw_frag = VSW_FRAG_ANY;
	if (frag_field & 0x1fff)
		b->exp.nw_frag |= VSW_FRAG_LATER;
	pb_snap(b);
}

static void
pb_ipv6(struct pb *b, uint8_t nh, uint8_t tc, uint8_t hlim, uint8_t seed)
{
	uint8_t *p = pb_put(b, 40);
	uint32_t i;

	p[0] = (uint8_t)(0x60 | (tc >> 4));
	p[1] = (uint8_t)((tc << 4) | 0x5);
	p[2] = 0xab;
	p[3] = 0xcd;
	b->ip_len_off = (uint32_t)(p + 4 - b->d);
	b->ip_off = (uint32_t)(p + 40 - b->d);
	b->ip_ver = 6;
	p[6] = nh;
	p[7] = hlim;
	for (i = 0; i < 16; i++) {
		p[8 + i] = (uint8_t)(seed + i);
		p[24 + i] = (uint8_t)(seed * 3 + 100 + i);
		b->exp.nw_src[i] = p[8 + i];
		b->exp.nw_dst[i] = p[24 + i];
	}
	b->exp.nw_proto = nh;
	b->exp.nw_tos = tc;
	b->exp.nw_ttl = hlim;
	pb_snap(b);
}

/* Hop-by-hop, routing or destination options header of (units+1)*8 B. */
static void
pb_ipv6_opt(struct pb *b, uint8_t next, uint8_t units)
{
	uint32_t n = ((uint32_t)units + 1) * 8, i;
	uint8_t *p = pb_put(b, n);

	p[0] = next;
	p[1] = units;
	for (i = 2; i < n; i++)
		p[i] = (uint8_t)(0x30 + i);
	b->exp.nw_proto = next;
	pb_snap(b);
}

static void
pb_ipv6_frag(struct pb *b, uint8_t next, uint16_t offset8, int more)
{
	uint8_t *p = pb_put(b, 8);

	p[0] = next;
	p[1] = 0;
	put16(p + 2, (uint16_t)((offset8 << 3) | (more ? 1 : 0)));
	memset(p + 4, 0x5a, 4);
	b->exp.nw_proto = next;
	b->exp.nw_frag = VSW_FRAG_ANY | (offset8 ? VSW_FRAG_LATER : 0);
	pb_snap(b);
}

static void
pb_tcp(struct pb *b, uint16_t sport, uint16_t dport, uint16_t flags)
{
	uint8_t *p = pb_put(b, 20);

	memset(p, 0, 20);
	put16(p, sport);
	put16(p + 2, dport);
	put16(p + 12, (uint16_t)(0x5000 | flags));
	b->exp.tp_src = net16(sport);
	b->exp.tp_dst = net16(dport);
	b->exp.tcp_flags = net16(flags & 0x0fff);
	pb_snap(b);
}

/* UDP (8 B) or SCTP (12 B): ports only. */
static void
pb_ports(struct pb *b, uint32_t hlen, uint16_t sport, uint16_t dport)
{
	uint8_t *p = pb_put(b, hlen);

	memset(p, 0xee, hlen);
	put16(p, sport);
	put16(p + 2, dport);
	b->exp.tp_src = net16(sport);
	b->exp.tp_dst = net16(dport);
	pb_snap(b);
}

static void pb_payload(struct pb *b, uint32_t n);

/* ICMP/ICMPv6: a 4-byte unit (type, code, checksum), then the rest. */
static void
pb_icmp(struct pb *b, uint8_t type, uint8_t code)
{
	uint8_t *p = pb_put(b, 4);

	p[0] = type;
	p[1] = code;
	p[2] = 0x77;
	p[3] = 0x78;
	b->exp.tp_src = net16(type);
	b->exp.tp_dst = net16(code);
	pb_snap(b);
	pb_payload(b, 4);
}

static void
pb_arp(struct pb *b, uint16_t op, uint32_t spa, uint32_t tpa)
{
	uint8_t *p = pb_put(b, 28);
	uint32_t i;

	put16(p, 1);
	put16(p + 2, 0x0800);
	p[4] = 6;
	p[5] = 4;
	put16(p + 6, op);
	memset(p + 8, 0x11, 6);
	memset(p + 18, 0x22, 6);
	for (i = 0; i < 4; i++) {
		p[14 + i] = (uint8_t)(spa >> (24 - 8 * i));
		p[24 + i] = (uint8_t)(tpa >> (24 - 8 * i));
		b->exp.nw_src[i] = p[14 + i];
		b->exp.nw_dst[i] = p[24 + i];
	}
	b->exp.nw_proto = op <= 255 ? (uint8_t)op : 0;
	pb_snap(b);
}

static void
pb_payload(struct pb *b, uint32_t n)
{
	uint8_t *p = pb_put(b, n);
	uint32_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)rnd();
}

/* Patch the IP length field now that the datagram is complete. */
static void
pb_finish(struct pb *b)
{
	if (b->ip_ver == 4)
		put16(b->d + b->ip_len_off,
			(uint16_t)(b->len - (b->ip_len_off - 2)));
	else if (b->ip_ver == 6)
		put16(b->d + b->ip_len_off, (uint16_t)(b->len - b->ip_off));
}

static const struct vsw_flow_key *
pb_expect(const struct pb *b, uint32_t len)
{
	uint32_t i = b->n_snap - 1;

	while (b->snap_end[i] > len)
		i--;
	return &b->snap[i];
}

/* --- mbufs without an EAL --------------------------------------------- */

#define MAX_SEGS 4

struct chain {
	struct rte_mbuf m[MAX_SEGS];
	uint8_t *buf[MAX_SEGS];
};

/* Build a chain over data split at cuts[] (ascending, n_cuts < MAX_SEGS). */
static struct rte_mbuf *
chain_build(struct chain *c, const uint8_t *data, uint32_t len,
	const uint32_t *cuts, unsigned n_cuts)
{
	uint32_t start = 0, end;
	unsigned s;

	memset(c, 0, sizeof(*c));
	for (s = 0; s <= n_cuts; s++) {
		end = s < n_cuts ? cuts[s] : len;
		/* Exactly the segment's bytes: ASan sees any overread. */
		c->buf[s] = malloc(end - start ? end - start : 1);
		assert_non_null(c->buf[s]);
		memcpy(c->buf[s], data + start, end - start);
		c->m[s].buf_addr = c->buf[s];
		c->m[s].buf_len = (uint16_t)(end - start);
		c->m[s].data_off = 0;
		c->m[s].data_len = (uint16_t)(end - start);
		c->m[s].next = s < n_cuts ? &c->m[s + 1] : NULL;
		start = end;
	}
	c->m[0].pkt_len = len;
	c->m[0].nb_segs = (uint16_t)(n_cuts + 1);
	return &c->m[0];
}

static void
chain_free(struct chain *c)
{
	unsigned s;

	for (s = 0; s < MAX_SEGS; s++)
		free(c->buf[s]);
}

static void
extract_cut(const uint8_t *data, uint32_t len, const uint32_t *cuts,
	unsigned n_cuts, struct vsw_flow_key *key)
{
	struct chain c;

	vsw_flow_extract(
		chain_build(&c, data, len, cuts, n_cuts), IN_PORT, key);
	chain_free(&c);
}

static void
key_check(const struct vsw_flow_key *got, const struct vsw_flow_key *exp,
	const char *what, uint32_t len, uint32_t cut)
{
	const uint8_t *g = (const uint8_t *)got, *e = (const uint8_t *)exp;
	unsigned i;

	if (memcmp(got, exp, sizeof(*got)) == 0)
		return;
	for (i = 0; i < sizeof(*got); i++)
		if (g[i] != e[i])
			print_error("%s len %u cut %u: key byte %u is %#x, "
				    "expected %#x\n",
				what, len, cut, i, g[i], e[i]);
	fail();
}

/* Whole, every truncation, every 2- and sampled 3-segment split. */
static void
check_packet(struct pb *b)
{
	struct vsw_flow_key got;
	uint32_t len, cut[2];

	pb_finish(b);
	for (len = 0; len <= b->len; len++) {
		extract_cut(b->d, len, NULL, 0, &got);
		key_check(&got, pb_expect(b, len), "contiguous", len, 0);
		for (cut[0] = 0; cut[0] <= len; cut[0] += len < 80 ? 1 : 7) {
			extract_cut(b->d, len, cut, 1, &got);
			key_check(
				&got, pb_expect(b, len), "2 segs", len, cut[0]);
		}
		cut[0] = len ? rnd() % len : 0;
		cut[1] = cut[0] + (len - cut[0] ? rnd() % (len - cut[0]) : 0);
		extract_cut(b->d, len, cut, 2, &got);
		key_check(&got, pb_expect(b, len), "3 segs", len, cut[0]);
	}
	/* Every split of the whole packet, one byte steps. */
	for (cut[0] = 0; cut[0] <= b->len; cut[0]++) {
		extract_cut(b->d, b->len, cut, 1, &got);
		key_check(&got, pb_expect(b, b->len), "2 segs", b->len, cut[0]);
	}
}

/* --- crafted packets ---------------------------------------------------- */

#define IP4(a, b, c, d) \
	((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

static void
test_ipv4_l4(void **state)
{
	struct pb b;

	(void)state;
	pb_init(&b);
	pb_eth(&b, 0x0800);
	pb_ipv4(&b, 6, IP4(10, 0, 0, 1), IP4(192, 168, 7, 9), 0xb9, 64, 0x4000,
		0);
	pb_tcp(&b, 43211, 80, 0x0812); /* NS bit + ACK + SYN */
	pb_payload(&b, 30);
	check_packet(&b);

	pb_init(&b);
	pb_eth(&b, 0x0800);
	pb_ipv4(&b, 17, IP4(1, 2, 3, 4), IP4(5, 6, 7, 8), 0x02, 1, 0, 0);
	pb_ports(&b, 8, 53, 33333);
	pb_payload(&b, 12);
	check_packet(&b);

	pb_init(&b);
	pb_eth(&b, 0x0800);
	pb_ipv4(&b, 132, IP4(9, 9, 9, 9), IP4(8, 8, 8, 8), 0, 255, 0, 0);
	pb_ports(&b, 12, 2905, 2906);
	check_packet(&b);

	pb_init(&b);
	pb_eth(&b, 0x0800);
	pb_ipv4(&b, 1, IP4(172, 16, 0, 1), IP4(172, 16, 0, 2), 0, 63, 0, 0);
	pb_icmp(&b, 8, 0);
	pb_payload(&b, 20);
	check_packet(&b);

	/* ICMP type 3 code 13, and an unknown protocol (GRE): no ports. */
	pb_init(&b);
	pb_eth(&b, 0x0800);
	pb_ipv4(&b, 1, IP4(172, 16, 0, 1), IP4(172, 16, 0, 2), 0, 63, 0, 0);
	pb_icmp(&b, 3, 13);
	check_packet(&b);

	pb_init(&b);
	pb_eth(&b, 0x0800);
	pb_ipv4(&b, 47, IP4(172, 16, 0, 1), IP4(172, 16, 0, 2), 0, 63, 0, 0);
	pb_payload(&b, 24);
	check_packet(&b);
}

static void
test_ipv4_options_frags(void **state)
{
	unsigned opt;
	struct pb b;

	(void)state;
	for (opt = 4; opt <= 40; opt += 12) {
		pb_init(&b);
		pb_eth(&b, 0x0800);
		pb_ipv4(&b, 6, IP4(10, 1, 1, 1), IP4(10, 2, 2, 2), 0x10, 7, 0,
			opt);
		pb_tcp(&b, 1000, 2000, 0x018);
		pb_payload(&b, 5);
		check_packet(&b);
	}
	/* First fragment (MF, offset 0): ports still parsed. */
	pb_init(&b);
	pb_eth(&b, 0x0800);
	pb_ipv4(&b, 17, IP4(10, 1, 1, 1), IP4(10, 2, 2, 2), 0, 9, 0x2000, 8);
	pb_ports(&b, 8, 4789, 4790);
	pb_payload(&b, 40);
	check_packet(&b);
	/* Later fragment: no L4 even though bytes follow. */
	pb_init(&b);
	pb_eth(&b, 0x0800);
	pb_ipv4(&b, 17, IP4(10, 1, 1, 1), IP4(10, 2, 2, 2), 0, 9, 0x00b9, 0);
	pb_payload(&b, 40);
	check_packet(&b);
	/* Last fragment (offset, no MF), DF set. */
	pb_init(&b);
	pb_eth(&b, 0x0800);
	pb_ipv4(&b, 6, IP4(10, 1, 1, 1), IP4(10, 2, 2, 2), 0, 9, 0x4001, 0);
	pb_payload(&b, 40);
	check_packet(&b);
}

static void
test_vlan_qinq(void **state)
{
	struct pb b;

	(void)state;
	pb_init(&b);
	pb_eth(&b, 0x8100);
	pb_vlan(&b, 0xa123, 0x0800); /* PCP 5, VID 0x123 */
	pb_ipv4(&b, 17, IP4(10, 0, 0, 1), IP4(10, 0, 0, 2), 0, 64, 0, 0);
	pb_ports(&b, 8, 67, 68);
	check_packet(&b);

	/* 802.1ad outer + 802.1Q inner: the outer tag is matched. */
	pb_init(&b);
	pb_eth(&b, 0x88a8);
	pb_vlan(&b, 0x0064, 0x8100);
	pb_vlan(&b, 0x2005, 0x86dd);
	pb_ipv6(&b, 6, 0x2e, 32, 1);
	pb_tcp(&b, 22, 65000, 0x002);
	check_packet(&b);

	/* Old-style QinQ with 0x8100 outside, ARP inside. */
	pb_init(&b);
	pb_eth(&b, 0x8100);
	pb_vlan(&b, 0x0fff, 0x8100);
	pb_vlan(&b, 0x0001, 0x0806);
	pb_arp(&b, 2, IP4(192, 168, 1, 1), IP4(192, 168, 1, 77));
	check_packet(&b);

	/* Tag with an unknown inner type (LLDP-like): L2 only. */
	pb_init(&b);
	pb_eth(&b, 0x8100);
	pb_vlan(&b, 0x0003, 0x88cc);
	pb_payload(&b, 30);
	check_packet(&b);
}

static void
test_ipv6(void **state)
{
	struct pb b;

	(void)state;
	pb_init(&b);
	pb_eth(&b, 0x86dd);
	pb_ipv6(&b, 17, 0xb8, 255, 40);
	pb_ports(&b, 8, 546, 547);
	pb_payload(&b, 10);
	check_packet(&b);

	pb_init(&b);
	pb_eth(&b, 0x86dd);
	pb_ipv6(&b, 58, 0, 255, 41);
	pb_icmp(&b, 135, 0);
	pb_payload(&b, 16);
	check_packet(&b);

	pb_init(&b);
	pb_eth(&b, 0x86dd);
	pb_ipv6(&b, 132, 0, 3, 42);
	pb_ports(&b, 12, 36412, 36412);
	check_packet(&b);

	/* Hop-by-hop, routing, destination options, then TCP. */
	pb_init(&b);
	pb_eth(&b, 0x86dd);
	pb_ipv6(&b, 0, 0x01, 64, 43);
	pb_ipv6_opt(&b, 43, 0);
	pb_ipv6_opt(&b, 60, 2);
	pb_ipv6_opt(&b, 6, 1);
	pb_tcp(&b, 5001, 443, 0x011);
	pb_payload(&b, 3);
	check_packet(&b);

	/* First fragment then UDP; later fragment stops before L4. */
	pb_init(&b);
	pb_eth(&b, 0x86dd);
	pb_ipv6(&b, 44, 0, 64, 44);
	pb_ipv6_frag(&b, 17, 0, 1);
	pb_ports(&b, 8, 1, 2);
	pb_payload(&b, 20);
	check_packet(&b);

	pb_init(&b);
	pb_eth(&b, 0x86dd);
	pb_ipv6(&b, 60, 0, 64, 45);
	pb_ipv6_opt(&b, 44, 0);
	pb_ipv6_frag(&b, 6, 185, 0);
	pb_payload(&b, 30);
	check_packet(&b);

	pb_init(&b);
	pb_eth(&b, 0x86dd);
	pb_ipv6(&b, 44, 0, 64, 47);
	pb_ipv6_frag(&b, 17, 1, 1);
	pb_payload(&b, 8);
	check_packet(&b);

	/* ICMP (v4 number) inside IPv6: not an ICMPv6 header. */
	pb_init(&b);
	pb_eth(&b, 0x86dd);
	pb_ipv6(&b, 1, 0, 64, 46);
	pb_payload(&b, 8);
	check_packet(&b);
}

static void
test_arp_l2(void **state)
{
	struct pb b;

	(void)state;
	pb_init(&b);
	pb_eth(&b, 0x0806);
	pb_arp(&b, 1, IP4(10, 10, 10, 1), IP4(10, 10, 10, 254));
	pb_payload(&b, 18); /* Ethernet padding */
	check_packet(&b);

	pb_init(&b);
	pb_eth(&b, 0x0806);
	pb_arp(&b, 0x1234, IP4(1, 1, 1, 1), IP4(2, 2, 2, 2));
	check_packet(&b);

	pb_init(&b);
	pb_eth(&b, 0x88cc);
	pb_payload(&b, 50);
	check_packet(&b);

	pb_init(&b);
	pb_eth(&b, 0x0042); /* 802.3 length field */
	pb_payload(&b, 0x42);
	check_packet(&b);
}

/* Broken headers stop the parse where they start; expectations by hand. */
static void
test_malformed(void **state)
{
	struct vsw_flow_key got, exp;
	struct pb b;

	(void)state;
	/* IHL 4: no IP fields at all. */
	pb_init(&b);
	pb_eth(&b, 0x0800);
	exp = b.exp;
	pb_ipv4(&b, 6, IP4(1, 1, 1, 1), IP4(2, 2, 2, 2), 0, 1, 0, 0);
	pb_tcp(&b, 1, 2, 0);
	pb_finish(&b);
	b.d[14] = 0x44;
	extract_cut(b.d, b.len, NULL, 0, &got);
	key_check(&got, &exp, "ihl 4", b.len, 0);
	/* Version 6 inside an IPv4 ethertype. */
	b.d[14] = 0x65;
	extract_cut(b.d, b.len, NULL, 0, &got);
	key_check(&got, &exp, "ip version", b.len, 0);
	/* Total length shorter than the header. */
	b.d[14] = 0x45;
	put16(b.d + 16, 19);
	extract_cut(b.d, b.len, NULL, 0, &got);
	key_check(&got, &exp, "tot_len", b.len, 0);
	/* Total length ending inside TCP: IP fields, no ports. */
	put16(b.d + 16, 30);
	extract_cut(b.d, b.len, NULL, 0, &got);
	key_check(&got, &b.snap[2], "tot_len in L4", b.len, 0);
	/* TCP data offset < 5: no TCP fields. */
	put16(b.d + 16, 40);
	b.d[34 + 12] = 0x40;
	extract_cut(b.d, b.len, NULL, 0, &got);
	key_check(&got, &b.snap[2], "tcp doff", b.len, 0);

	/* UDP cut by one byte by the IP length, Ethernet padding behind. */
	pb_init(&b);
	pb_eth(&b, 0x0800);
	pb_ipv4(&b, 17, IP4(1, 1, 1, 1), IP4(2, 2, 2, 2), 0, 1, 0, 0);
	exp = b.exp;
	pb_ports(&b, 8, 1, 2);
	pb_finish(&b);
	put16(b.d + 16, 27);
	pb_payload(&b, 18);
	extract_cut(b.d, b.len, NULL, 0, &got);
	key_check(&got, &exp, "udp past tot_len", b.len, 0);
	put16(b.d + 16, 28);
	extract_cut(b.d, b.len, NULL, 0, &got);
	key_check(&got, &b.snap[3], "udp at tot_len", b.len, 0);

	/* IPv6 payload length ending inside UDP. */
	pb_init(&b);
	pb_eth(&b, 0x86dd);
	pb_ipv6(&b, 17, 0, 1, 9);
	exp = b.exp;
	pb_ports(&b, 8, 1, 2);
	pb_finish(&b);
	put16(b.d + 18, 7);
	pb_payload(&b, 18);
	extract_cut(b.d, b.len, NULL, 0, &got);
	key_check(&got, &exp, "udp past payload_len", b.len, 0);

	/* ARP for another hardware type: L2 only. */
	pb_init(&b);
	pb_eth(&b, 0x0806);
	exp = b.exp;
	pb_arp(&b, 1, 1, 2);
	b.d[15] = 6; /* IEEE 802 */
	extract_cut(b.d, b.len, NULL, 0, &got);
	key_check(&got, &exp, "arp htype", b.len, 0);
}

/*
 * Random packets (protocol numbers biased to the parsed ones): chained
 * extraction equals contiguous, the burst API equals one-by-one, and ASan
 * sees every byte read.
 */
static void
test_random_packets(void **state)
{
	static const uint16_t types[] = {
		0x0800, 0x86dd, 0x8100, 0x88a8, 0x0806};
	static const uint8_t protos[] = {6, 17, 132, 1, 58, 0, 43, 44, 60};
	struct rte_mbuf *pkts[32];
	struct vsw_flow_key a, c, burst[32];
	struct chain ch[32];
	uint8_t d[200];
	unsigned iter, i, j;

	(void)state;
	for (iter = 0; iter < 3200; iter++) { /* whole bursts */
		uint32_t len = rnd() % sizeof(d), cuts[2];

		for (i = 0; i < len; i++)
			d[i] = (uint8_t)rnd();
		if (len > 14)
			put16(d + 12, types[rnd() % 5]);
		for (i = 14; i + 4 <= len && i < 30; i += 4) {
			if (rnd() % 2)
				put16(d + i + 2, types[rnd() % 5]);
		}
		for (i = 14; i < len && i < 80; i++) {
			if (rnd() % 4 == 0)
				d[i] = protos[rnd() % 9];
			else if (rnd() % 6 == 0)
				d[i] = (uint8_t)(rnd() % 2 ? 0x45 : 0x60);
		}
		extract_cut(d, len, NULL, 0, &a);
		cuts[0] = len ? rnd() % len : 0;
		cuts[1] =
			cuts[0] + (len - cuts[0] ? rnd() % (len - cuts[0]) : 0);
		extract_cut(d, len, cuts, 1 + rnd() % 2, &c);
		key_check(&c, &a, "random", len, cuts[0]);
		j = iter % 32;
		pkts[j] = chain_build(&ch[j], d, len, cuts, rnd() % 3);
		burst[j] = a;
		if (j == 31) {
			struct vsw_flow_key out[32];

			vsw_flow_extract_burst(pkts, 32, IN_PORT, out);
			for (j = 0; j < 32; j++) {
				key_check(&out[j], &burst[j], "burst", 0, j);
				chain_free(&ch[j]);
			}
		}
	}
}

/* Ones' complement sum of n bytes, big-endian words (the test's own). */
static uint32_t
ocsum(const uint8_t *p, uint32_t n, uint32_t sum)
{
	uint32_t i;

	for (i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		sum += (uint32_t)p[n - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum;
}

/*
 * A packet whose TCP/UDP checksum is partial (the pseudo-header sum a
 * guest leaves with NEEDS_CSUM) and carries offload metadata (TSO or
 * partial checksum flags, l2/l3/l4_len) has the same key as the complete
 * one, and as one with a garbage checksum: the classifier never reads
 * checksums or offload metadata (issue #12).
 */
static void
test_partial_csum_same_key(void **state)
{
	unsigned iter;

	(void)state;
	for (iter = 0; iter < 400; iter++) {
		bool v6 = iter & 1, tcp = (iter >> 1) & 1, vlan = (iter >> 2) & 1;
		uint8_t proto = tcp ? 6 : 17;
		uint32_t l4, l2 = vlan ? 18 : 14, ck_at, sum, i;
		struct vsw_flow_key k[3];
		struct chain c[3];
		struct pb b;

		pb_init(&b);
		pb_eth(&b, vlan ? 0x8100 : (v6 ? 0x86dd : 0x0800));
		if (vlan)
			pb_vlan(&b, (uint16_t)(rnd() & 0xfff),
				v6 ? 0x86dd : 0x0800);
		if (v6)
			pb_ipv6(&b, proto, 0, 64, (uint8_t)rnd());
		else
			pb_ipv4(&b, proto, rnd(), rnd(), 0, 64, 0, 0);
		l4 = b.len;
		if (tcp)
			pb_tcp(&b, (uint16_t)rnd(), (uint16_t)rnd(), 0x18);
		else
			pb_ports(&b, 8, (uint16_t)rnd(), (uint16_t)rnd());
		pb_payload(&b, 1 + rnd() % 300);
		pb_finish(&b);
		ck_at = l4 + (tcp ? 16 : 6);
		/* the pseudo-header sum: addresses, protocol, L4 length */
		sum = v6 ? ocsum(b.d + l2 + 8, 32, 0)
			 : ocsum(b.d + l2 + 12, 8, 0);
		sum = ocsum((const uint8_t[]){0, proto,
				    (uint8_t)((b.len - l4) >> 8),
				    (uint8_t)(b.len - l4)}, 4, sum);
		b.d[ck_at] = (uint8_t)(sum >> 8);
		b.d[ck_at + 1] = (uint8_t)sum;
		chain_build(&c[1], b.d, b.len, NULL, 0); /* partial */
		i = ~ocsum(b.d + l4, b.len - l4, 0) & 0xffff;
		b.d[ck_at] = (uint8_t)(i >> 8);
		b.d[ck_at + 1] = (uint8_t)i;
		chain_build(&c[0], b.d, b.len, NULL, 0); /* complete */
		b.d[ck_at] ^= (uint8_t)(1 + rnd() % 255);
		chain_build(&c[2], b.d, b.len, NULL, 0); /* wrong */
		c[1].m[0].ol_flags = (v6 ? RTE_MBUF_F_TX_IPV6 : RTE_MBUF_F_TX_IPV4) |
			(tcp ? RTE_MBUF_F_TX_TCP_CKSUM : RTE_MBUF_F_TX_UDP_CKSUM);
		c[1].m[0].l2_len = l2;
		c[1].m[0].l3_len = l4 - l2;
		c[2].m[0].ol_flags = RTE_MBUF_F_TX_TCP_SEG | RTE_MBUF_F_TX_IPV4;
		c[2].m[0].tso_segsz = 1448;
		for (i = 0; i < 3; i++) {
			vsw_flow_extract(&c[i].m[0], IN_PORT, &k[i]);
			chain_free(&c[i]);
		}
		assert_memory_equal(&k[0], &k[1], sizeof(k[0]));
		assert_memory_equal(&k[0], &k[2], sizeof(k[0]));
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipv4_l4),
		cmocka_unit_test(test_ipv4_options_frags),
		cmocka_unit_test(test_vlan_qinq),
		cmocka_unit_test(test_ipv6),
		cmocka_unit_test(test_arp_l2),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_random_packets),
		cmocka_unit_test(test_partial_csum_same_key),
	};

	tl_rng_init(&rng, "test_flow", 0x9e3779b97f4a7c15ull);
	return cmocka_run_group_tests(tests, NULL, NULL);
}

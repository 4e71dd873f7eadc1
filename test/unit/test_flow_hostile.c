/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Flow key extraction on hostile and odd input: broken headers stop the
 * parse where they start; random packets extract the same chained as
 * contiguous, in a burst as one by one, and never read out of bounds;
 * partial checksums and offload metadata do not change the key. Run from
 * test_flow.c's main, in its table's order (one random generator).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "flow_pb.h"

/* Broken headers stop the parse where they start; expectations by hand. */
void
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
void
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
void
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

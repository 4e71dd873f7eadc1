/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for flow key extraction (switch/flow_extract.c): crafted
 * packets. The packet builder (flow_pb.c) records the key it expects at
 * each header end; every crafted packet is then extracted whole,
 * truncated at every byte offset (the buffer is allocated with exactly the
 * truncated length, so ASan catches any read past the data; the expected
 * key is the last snapshot that fits), and split into two and three
 * segments at every offset (same key as contiguous). Broken headers,
 * random packets and checksum/offload metadata: test_flow_hostile.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "flow_pb.h"

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

	tl_rng_init(&test_rng, "test_flow", 0x9e3779b97f4a7c15ull);
	return cmocka_run_group_tests(tests, NULL, NULL);
}

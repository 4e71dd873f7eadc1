/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The devargs keys vswd refuses without --allow-devargs-files
 * (switch/vswd/vswd_devargs.c): every key that names a file, socket,
 * interface or program is found wherever it stands, and nothing else is:
 * values, device names and keys that merely contain one are not.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "vswd_priv.h"

static const char *
named(const char *devargs)
{
	static char key[64];

	return vswd_devargs_named_key(devargs, key, sizeof(key));
}

static void
test_refused(void **state)
{
	static const struct {
		const char *devargs, *key;
	} cases[] = {
		{"net_pcap0,tx_pcap=/etc/shadow", "tx_pcap"},
		{"net_pcap0,rx_pcap=/etc/shadow", "rx_pcap"},
		{"net_pcap0,iface=eth0", "iface"},
		{"net_pcap0,rx_iface=eth0", "rx_iface"},
		{"net_pcap0,rx_iface_in=eth0", "rx_iface_in"},
		{"net_pcap0,tx_iface=eth0", "tx_iface"},
		{"net_af_packet0,iface=eth0", "iface"},
		{"net_af_xdp0,iface=eth0,xdp_prog=/x.o", "iface"},
		{"net_af_xdp0,start_queue=0,xdp_prog=/x.o", "xdp_prog"},
		{"net_tap0,remote=eth0", "remote"},
		{"net_vhost0,iface=/tmp/s,queues=1", "iface"},
		{"net_virtio_user0,path=/dev/vhost-net", "path"},
		{"net_memif0,role=server,socket=/run/x", "socket"},
		{"net_softnic0,firmware=/x.cli", "firmware"},
		{"net_failsafe0,exec(/bin/sh -c id)", "exec"},
		{"net_failsafe0,dev(net_null0),fd(3)", "fd"},
		{"net_failsafe0,dev(net_pcap1,tx_pcap=/x)", "tx_pcap"},
		{"net_pcap0, tx_pcap=/x", "tx_pcap"},
		{"net_pcap0,tx_pcap", "tx_pcap"}, /* no value */
		{"net_null0,size=64,,tx_pcap=/x", "tx_pcap"},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *k = named(cases[i].devargs);

		if (k == NULL || strcmp(k, cases[i].key) != 0)
			fail_msg("%s: got %s, want %s", cases[i].devargs,
				k ? k : "(none)", cases[i].key);
	}
}

static void
test_allowed(void **state)
{
	static const char *const cases[] = {
		"net_null0,size=64",
		"net_null0",
		"0000:03:00.0",
		"net_ring0,nodeaction=r0:0:CREATE",
		"net_pcap0",  /* no key at all */
		"tx_pcap=/x", /* the device name, not a key */
		"net_null0,size=64,copy=1",
		"net_null0,tx_pcapx=1", /* a longer key */
		"net_null0,xtx_pcap=1",
		"net_null0,size=/path,name=iface", /* in values */
		"net_null0,execx=1",
		"",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (named(cases[i]) != NULL)
			fail_msg("%s: refused for %s", cases[i],
				named(cases[i]));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_allowed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

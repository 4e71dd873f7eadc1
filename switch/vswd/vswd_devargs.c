/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * devargs keys that make vswd open something by name as its own user
 * (usually root): a file (net_pcap rx_pcap/tx_pcap, net_af_xdp xdp_prog,
 * net_softnic firmware), a socket (net_vhost iface, net_virtio_user path,
 * net_memif socket), a host interface (net_pcap *iface*, net_af_packet,
 * net_af_xdp, net_tap/net_tun iface and remote), or a program
 * (net_failsafe exec(...), fd(...)). The drivers and keys are DPDK
 * 22.11's (doc/guides/nics). A control client may add ports, but should
 * not get those by that: refused unless vswd runs with
 * --allow-devargs-files. Control thread.
 */
#include <stdio.h>
#include <string.h>

#include "vswd_priv.h"

static const char *const named_keys[] = {
	"rx_pcap",
	"tx_pcap",
	"rx_iface",
	"rx_iface_in",
	"tx_iface",
	"iface",
	"xdp_prog",
	"remote",
	"path",
	"socket",
	"firmware",
	NULL,
};

/* failsafe's sub-device forms that run a program or take an fd */
static const char *const call_forms[] = {"exec(", "fd(", NULL};

const char *
vswd_devargs_named_key(const char *devargs, char *key, size_t len)
{
	const char *p = devargs + strcspn(devargs, ",");
	size_t i;

	/* the first word is the device; then key=value or form(...) */
	while (*p == ',') {
		const char *t = p + 1 + strspn(p + 1, " \t");
		size_t n = strcspn(t, ","), k = strcspn(t, "=,");

		for (i = 0; call_forms[i] != NULL; i++)
			if (strncmp(t, call_forms[i], strlen(call_forms[i])) ==
				0) {
				snprintf(key, len, "%.*s",
					(int)strlen(call_forms[i]) - 1, t);
				return key;
			}
		for (i = 0; named_keys[i] != NULL; i++)
			if (k == strlen(named_keys[i]) &&
				strncmp(t, named_keys[i], k) == 0) {
				snprintf(key, len, "%s", named_keys[i]);
				return key;
			}
		p = t + n;
	}
	return NULL;
}

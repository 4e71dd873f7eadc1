/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Overlay commands that change the state (VXLAN L2 domains): overlay-set,
 * domain-add/-del, domain-port-add/-del, vtep-add/-del, mac-add/-del;
 * those that print it back are in vswd_cmds_overlay_show.c.
 *
 * Control thread. Arguments are parsed here and handed to the typed
 * vsw_switch_* overlay calls; the switch holds the state, which is also
 * what config-show and the state file print back.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>

#include <vsw/vxlan.h>

#include "vswd_priv.h"

int
vswd_overlay_parse_vni(const char *s, uint32_t *vni, struct vsw_ctl_reply *r)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || *s < '0' || *s > '9' || *end != '\0' || v == 0 ||
		v > VSW_VXLAN_VNI_MAX) {
		vsw_ctl_reply_error(r, "bad VNI '%s' (1..16777215)", s);
		return -1;
	}
	*vni = (uint32_t)v;
	return 0;
}

static int
parse_ip(const char *s, uint32_t *ip, struct vsw_ctl_reply *r)
{
	struct in_addr a;

	if (inet_pton(AF_INET, s, &a) != 1 || a.s_addr == 0) {
		vsw_ctl_reply_error(r, "bad IPv4 address '%s'", s);
		return -1;
	}
	*ip = ntohl(a.s_addr);
	return 0;
}

static int
parse_mac(const char *s, uint8_t mac[6], struct vsw_ctl_reply *r)
{
	unsigned b[6];
	char tail;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3],
		    &b[4], &b[5], &tail) != 6 ||
		strlen(s) != 17) {
		vsw_ctl_reply_error(r, "bad MAC '%s' (xx:xx:xx:xx:xx:xx)", s);
		return -1;
	}
	for (unsigned i = 0; i < 6; i++)
		mac[i] = (uint8_t)b[i];
	return 0;
}

void
vswd_overlay_ip_str(uint32_t ip, char *buf, size_t len)
{
	struct in_addr a = {.s_addr = htonl(ip)};

	inet_ntop(AF_INET, &a, buf, (socklen_t)len);
}

void
vswd_overlay_mac_str(const uint8_t m[6], char *buf, size_t len)
{
	snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2],
		m[3], m[4], m[5]);
}

/* A switch error as a reply; what names what. */
static void
reply_rc(struct vsw_ctl_reply *r, int rc, const char *what)
{
	static const struct {
		int rc;
		const char *msg;
	} msgs[] = {
		{-ENOENT, "no such domain, port, VTEP or MAC"},
		{-EEXIST, "already there"},
		{-EBUSY, "in use (the underlay, or a port of another domain)"},
		{-ENOSPC, "table full"},
		{-ENOMEM, "out of memory"},
		{-EINVAL, "invalid argument"},
	};

	for (size_t i = 0; i < sizeof(msgs) / sizeof(msgs[0]); i++)
		if (msgs[i].rc == rc) {
			vsw_ctl_reply_error(r, "%s: %s", what, msgs[i].msg);
			return;
		}
	vsw_ctl_reply_error(r, "%s: %s", what, strerror(-rc));
}

static void
reply_ok(struct vsw_ctl_reply *r, const char *cmd)
{
	if (r->json)
		vsw_ctl_reply_printf(r, "{\"ok\": true}\n");
	else
		vsw_ctl_reply_printf(r, "%s: ok\n", cmd);
}

static struct vswd_port *
port_arg(struct vswd *d, const char *name, struct vsw_ctl_reply *r)
{
	struct vswd_port *p = vswd_port_find(d, name);

	if (p == NULL)
		vsw_ctl_reply_error(r, "no port '%s'", name);
	return p;
}

/* overlay-set underlay=PORT local-ip=A.B.C.D [mtu=N] */
void
vswd_cmd_overlay_set(void *ctx, int argc, char **argv, struct vsw_ctl_reply *r)
{
	struct vswd *d = ctx;
	struct vsw_overlay_config c = {0};
	const char *ul = NULL, *ip = NULL;
	struct rte_ether_addr ea;
	unsigned long mtu = 0;
	bool mtu_arg = false;
	struct vswd_port *p;
	uint16_t dev_mtu;
	int rc;

	for (int i = 1; i < argc; i++) {
		char *end = NULL;

		if (strncmp(argv[i], "underlay=", 9) == 0) {
			ul = argv[i] + 9;
		} else if (strncmp(argv[i], "local-ip=", 9) == 0) {
			ip = argv[i] + 9;
		} else if (strncmp(argv[i], "mtu=", 4) == 0) {
			mtu_arg = true;
			mtu = strtoul(argv[i] + 4, &end, 10);
			if (*end != '\0' || mtu < 100 || mtu > 65535) {
				vsw_ctl_reply_error(r,
					"bad mtu '%s' "
					"(100..65535)",
					argv[i] + 4);
				return;
			}
		} else {
			vsw_ctl_reply_error(r, "unknown '%s'", argv[i]);
			return;
		}
	}
	if (ul == NULL || ip == NULL) {
		vsw_ctl_reply_error(r, "need underlay=PORT and "
				       "local-ip=A.B.C.D");
		return;
	}
	if ((p = port_arg(d, ul, r)) == NULL ||
		parse_ip(ip, &c.local_ip, r) < 0)
		return;
	if (p->type != VSWD_PORT_DPDK) {
		vsw_ctl_reply_error(r,
			"underlay '%s' is not a dpdk "
			"port",
			ul);
		return;
	}
	if (rte_eth_macaddr_get(p->eth_port, &ea) != 0) {
		vsw_ctl_reply_error(r, "cannot read the MAC of '%s'", ul);
		return;
	}
	if (mtu == 0)
		mtu = rte_eth_dev_get_mtu(p->eth_port, &dev_mtu) == 0 ? dev_mtu
								      : 1500;
	if (mtu > 65535) {
		vsw_ctl_reply_error(r, "bad mtu");
		return;
	}
	memcpy(c.local_mac, ea.addr_bytes, 6);
	c.underlay = p->port_no;
	c.mtu = (uint16_t)mtu;
	rc = vsw_switch_overlay_set(d->sw, &c);
	if (rc < 0) {
		reply_rc(r, rc, "overlay-set");
		return;
	}
	d->overlay_mtu_given = mtu_arg ? (uint16_t)mtu : 0;
	vswd_overlay_mtu_sync(d);
	reply_ok(r, argv[0]);
}

/* domain-add VNI, domain-del VNI */
void
vswd_cmd_domain_add(void *ctx, int argc, char **argv, struct vsw_ctl_reply *r)
{
	struct vswd *d = ctx;
	bool add = strcmp(argv[0], "domain-add") == 0;
	uint32_t vni;
	int rc;

	(void)argc;
	if (vswd_overlay_parse_vni(argv[1], &vni, r) < 0)
		return;
	rc = add ? vsw_switch_domain_add(d->sw, vni)
		 : vsw_switch_domain_del(d->sw, vni);
	if (rc < 0) {
		reply_rc(r, rc, argv[0]);
		return;
	}
	vswd_overlay_mtu_sync(d);
	reply_ok(r, argv[0]);
}

/* domain-port-add VNI PORT, domain-port-del VNI PORT */
void
vswd_cmd_domain_port(void *ctx, int argc, char **argv, struct vsw_ctl_reply *r)
{
	struct vswd *d = ctx;
	bool add = strcmp(argv[0], "domain-port-add") == 0;
	struct vswd_port *p;
	uint32_t vni;
	int rc;

	(void)argc;
	if (vswd_overlay_parse_vni(argv[1], &vni, r) < 0 ||
		(p = port_arg(d, argv[2], r)) == NULL)
		return;
	rc = add ? vsw_switch_domain_port_add(d->sw, vni, p->port_no)
		 : vsw_switch_domain_port_del(d->sw, vni, p->port_no);
	if (rc < 0) {
		reply_rc(r, rc, argv[0]);
		return;
	}
	vswd_overlay_mtu_sync(d);
	reply_ok(r, argv[0]);
}

/* vtep-add VNI IP, vtep-del VNI IP */
void
vswd_cmd_vtep(void *ctx, int argc, char **argv, struct vsw_ctl_reply *r)
{
	struct vswd *d = ctx;
	bool add = strcmp(argv[0], "vtep-add") == 0;
	uint32_t vni, ip;
	int rc;

	(void)argc;
	if (vswd_overlay_parse_vni(argv[1], &vni, r) < 0 ||
		parse_ip(argv[2], &ip, r) < 0)
		return;
	rc = add ? vsw_switch_vtep_add(d->sw, vni, ip)
		 : vsw_switch_vtep_del(d->sw, vni, ip);
	if (rc < 0) {
		reply_rc(r, rc, argv[0]);
		return;
	}
	reply_ok(r, argv[0]);
}

/* mac-add VNI MAC IP, mac-del VNI MAC */
void
vswd_cmd_mac(void *ctx, int argc, char **argv, struct vsw_ctl_reply *r)
{
	struct vswd *d = ctx;
	bool add = strcmp(argv[0], "mac-add") == 0;
	uint8_t mac[6];
	uint32_t vni, ip = 0;
	int rc;

	if (add != (argc == 4)) {
		vsw_ctl_reply_error(r, "usage: mac-add VNI MAC IP | "
				       "mac-del VNI MAC");
		return;
	}
	if (vswd_overlay_parse_vni(argv[1], &vni, r) < 0 ||
		parse_mac(argv[2], mac, r) < 0 ||
		(add && parse_ip(argv[3], &ip, r) < 0))
		return;
	rc = add ? vsw_switch_domain_mac_add(d->sw, vni, mac, ip)
		 : vsw_switch_domain_mac_del(d->sw, vni, mac);
	if (rc < 0) {
		reply_rc(r, rc, argv[0]);
		return;
	}
	reply_ok(r, argv[0]);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Overlay commands (VXLAN L2 domains): overlay-set/-show, domain-add/-del,
 * domain-port-add/-del, vtep-add/-del, mac-add/-del, domain-show, and the
 * lines that recreate them in the running configuration.
 *
 * Control thread. Arguments are parsed here and handed to the typed
 * vsw_switch_* overlay calls; the switch holds the state, which is also
 * what config-show and the state file print back.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>

#include <vsw/vxlan.h>

#include "vswd_priv.h"

static int
parse_vni(const char *s, uint32_t *vni, struct vsw_ctl_reply *r)
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

static void
ip_str(uint32_t ip, char *buf, size_t len)
{
	struct in_addr a = {.s_addr = htonl(ip)};

	inet_ntop(AF_INET, &a, buf, (socklen_t)len);
}

static void
mac_str(const uint8_t m[6], char *buf, size_t len)
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

static void
show_neighs(struct vswd *d, struct vsw_ctl_reply *r)
{
	struct vsw_overlay_neigh n[VSW_SWITCH_MAX_VTEPS];
	unsigned k = vsw_switch_overlay_neighs(d->sw, n, VSW_SWITCH_MAX_VTEPS);
	char ip[INET_ADDRSTRLEN], mac[18];

	for (unsigned i = 0; i < k; i++) {
		ip_str(n[i].ip, ip, sizeof(ip));
		mac_str(n[i].mac, mac, sizeof(mac));
		if (r->json)
			vsw_ctl_reply_printf(r,
				"%s{\"ip\": \"%s\", \"mac\": "
				"%s%s%s, \"refs\": %u}",
				i ? ", " : "", ip, n[i].known ? "\"" : "",
				n[i].known ? mac : "null",
				n[i].known ? "\"" : "", n[i].refs);
		else
			vsw_ctl_reply_printf(r, "  neighbour %s %s refs %u\n",
				ip, n[i].known ? mac : "(unresolved)",
				n[i].refs);
	}
}

void
vswd_cmd_overlay_show(void *ctx, int argc, char **argv, struct vsw_ctl_reply *r)
{
	struct vswd *d = ctx;
	uint64_t c[VSW_OVERLAY_N_COUNTERS];
	struct vsw_overlay_config cfg;
	char ip[INET_ADDRSTRLEN], mac[18];
	bool on = vsw_switch_overlay_get(d->sw, &cfg) == 0;

	(void)argc;
	(void)argv;
	vsw_switch_overlay_stats(d->sw, c);
	if (on) {
		ip_str(cfg.local_ip, ip, sizeof(ip));
		mac_str(cfg.local_mac, mac, sizeof(mac));
	}
	if (r->json) {
		if (on)
			vsw_ctl_reply_printf(r,
				"{\"overlay\": {\"underlay\": "
				"\"%s\", \"local_ip\": \"%s\", \"local_mac\": "
				"\"%s\", \"mtu\": %u, \"inner_mtu\": %u}",
				vsw_switch_port_name(cfg.underlay, d->sw), ip,
				mac, cfg.mtu, cfg.mtu - 50u);
		else
			vsw_ctl_reply_printf(r, "{\"overlay\": null");
		vsw_ctl_reply_printf(r, ", \"neighbours\": [");
		show_neighs(d, r);
		vsw_ctl_reply_printf(r, "], \"counters\": {");
		for (unsigned k = 0; k < VSW_OVERLAY_N_COUNTERS; k++)
			vsw_ctl_reply_printf(r, "%s\"%s\": %lu", k ? ", " : "",
				vsw_overlay_counter_name(k),
				(unsigned long)c[k]);
		vsw_ctl_reply_printf(r, "}}\n");
		return;
	}
	if (on)
		vsw_ctl_reply_printf(r,
			"overlay: local-ip %s mac %s underlay "
			"%s mtu %u (inner IP MTU %u)\n",
			ip, mac, vsw_switch_port_name(cfg.underlay, d->sw),
			cfg.mtu, cfg.mtu - 50u);
	else
		vsw_ctl_reply_printf(r, "overlay: not set\n");
	show_neighs(d, r);
	for (unsigned k = 0; k < VSW_OVERLAY_N_COUNTERS; k++)
		vsw_ctl_reply_printf(r, "  %s: %lu\n",
			vsw_overlay_counter_name(k), (unsigned long)c[k]);
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
	if (parse_vni(argv[1], &vni, r) < 0)
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
	if (parse_vni(argv[1], &vni, r) < 0 ||
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
	if (parse_vni(argv[1], &vni, r) < 0 || parse_ip(argv[2], &ip, r) < 0)
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
	if (parse_vni(argv[1], &vni, r) < 0 || parse_mac(argv[2], mac, r) < 0 ||
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

struct mac_show {
	struct vswd *d;
	struct vsw_ctl_reply *r;
	unsigned n;
};

static void
mac_line(const uint8_t mac[6], bool remote, uint16_t port, uint32_t vtep,
	uint32_t age_s, void *arg)
{
	struct mac_show *m = arg;
	char ms[18], ip[INET_ADDRSTRLEN];
	const char *pname =
		remote ? NULL : vsw_switch_port_name(port, m->d->sw);

	mac_str(mac, ms, sizeof(ms));
	ip_str(vtep, ip, sizeof(ip));
	if (m->r->json && remote)
		vsw_ctl_reply_printf(m->r,
			"%s{\"mac\": \"%s\", \"type\": "
			"\"remote\", \"vtep\": \"%s\"}",
			m->n ? ", " : "", ms, ip);
	else if (m->r->json)
		vsw_ctl_reply_printf(m->r,
			"%s{\"mac\": \"%s\", \"type\": "
			"\"local\", \"port\": ",
			m->n ? ", " : "", ms);
	else if (remote)
		vsw_ctl_reply_printf(m->r, "    %s remote vtep %s\n", ms, ip);
	else
		vsw_ctl_reply_printf(m->r, "    %s local port %s age %us\n", ms,
			pname ? pname : "?", age_s);
	if (m->r->json && !remote) {
		if (pname != NULL)
			vsw_ctl_reply_json_str(m->r, pname);
		else
			vsw_ctl_reply_printf(m->r, "null");
		vsw_ctl_reply_printf(m->r, ", \"age_ms\": %lu}",
			(unsigned long)age_s * 1000ul);
	}
	m->n++;
}

static void
show_domain(struct vswd *d, const struct vsw_domain_info *in,
	struct vsw_ctl_reply *r, bool first)
{
	const struct vsw_domain_stats *s = &in->stats;
	struct mac_show ms = {d, r, 0};
	char ip[INET_ADDRSTRLEN];
	const char *pn;

	vsw_ctl_reply_printf(r,
		r->json ? "%s{\"vni\": %u, \"ports\": ["
			: "%sdomain %u\n  ports:",
		r->json && !first ? ", " : "", in->vni);
	for (unsigned i = 0; i < in->n_ports; i++) {
		pn = vsw_switch_port_name(in->ports[i], d->sw);
		if (r->json) {
			vsw_ctl_reply_printf(r, i ? ", " : "");
			vsw_ctl_reply_json_str(r, pn ? pn : "?");
		} else {
			vsw_ctl_reply_printf(r, " %s", pn ? pn : "?");
		}
	}
	vswd_overlay_mtu_show(d, in, r);
	vsw_ctl_reply_printf(r, r->json ? "], \"vteps\": [" : "\n  vteps:");
	for (unsigned i = 0; i < in->n_vteps; i++) {
		ip_str(in->vteps[i], ip, sizeof(ip));
		vsw_ctl_reply_printf(r, r->json ? "%s\"%s\"" : "%s %s",
			r->json && i ? ", " : "", ip);
	}
	vsw_ctl_reply_printf(r, r->json ? "], \"macs\": [" : "\n  macs:\n");
	vsw_switch_domain_macs(d->sw, in->vni, mac_line, &ms);
	vsw_ctl_reply_printf(r,
		r->json ? "], \"stats\": {\"rx_local\": %lu, "
			  "\"rx_vxlan\": %lu, \"tx_local\": %lu, \"tx_vxlan\": "
			  "%lu, "
			  "\"flooded\": %lu, \"flood_copies\": %lu, "
			  "\"drops\": %lu, \"local_macs\": %u, "
			  "\"remote_macs\": %u}}"
			: "  stats: rx_local %lu rx_vxlan %lu tx_local %lu "
			  "tx_vxlan %lu flooded %lu flood_copies %lu drops "
			  "%lu local_macs %u remote_macs %u\n",
		(unsigned long)s->rx_local, (unsigned long)s->rx_vxlan,
		(unsigned long)s->tx_local, (unsigned long)s->tx_vxlan,
		(unsigned long)s->flooded, (unsigned long)s->flood_copies,
		(unsigned long)s->drops, in->n_local_macs, in->n_remote_macs);
}

/* domain-show [VNI] */
void
vswd_cmd_domain_show(void *ctx, int argc, char **argv, struct vsw_ctl_reply *r)
{
	static uint32_t vnis[VSW_SWITCH_MAX_DOMAINS];
	struct vswd *d = ctx;
	struct vsw_domain_info in;
	unsigned n;

	if (argc == 2) {
		if (parse_vni(argv[1], &vnis[0], r) < 0)
			return;
		if (vsw_switch_domain_get(d->sw, vnis[0], &in) < 0) {
			vsw_ctl_reply_error(r, "no domain %u", vnis[0]);
			return;
		}
		n = 1;
	} else {
		n = vsw_switch_domains(d->sw, vnis, VSW_SWITCH_MAX_DOMAINS);
	}
	if (r->json)
		vsw_ctl_reply_printf(r, "{\"domains\": [");
	for (unsigned i = 0; i < n; i++)
		if (vsw_switch_domain_get(d->sw, vnis[i], &in) == 0)
			show_domain(d, &in, r, i == 0);
	if (r->json)
		vsw_ctl_reply_printf(r, "]}\n");
}

/* ---- the running configuration ---- */

struct cfg_ctx {
	struct vsw_ctl_reply *r;
	vswd_emit_fn emit;
	bool *first;
	uint32_t vni;
};

static void emit_line(struct cfg_ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void
emit_line(struct cfg_ctx *c, const char *fmt, ...)
{
	char line[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	c->emit(c->r, line, *c->first);
	*c->first = false;
}

static void
cfg_mac(const uint8_t mac[6], bool remote, uint16_t port, uint32_t vtep,
	uint32_t age_s, void *arg)
{
	char ms[18], ip[INET_ADDRSTRLEN];

	(void)port;
	(void)age_s;
	if (!remote)
		return; /* learned: not configuration */
	mac_str(mac, ms, sizeof(ms));
	ip_str(vtep, ip, sizeof(ip));
	emit_line(
		arg, "mac-add %u %s %s", ((struct cfg_ctx *)arg)->vni, ms, ip);
}

void
vswd_overlay_config_lines(
	struct vswd *d, struct vsw_ctl_reply *r, vswd_emit_fn emit, bool *first)
{
	static uint32_t vnis[VSW_SWITCH_MAX_DOMAINS];
	struct cfg_ctx c = {r, emit, first, 0};
	struct vsw_overlay_config cfg;
	struct vsw_domain_info in;
	char ip[INET_ADDRSTRLEN];
	const char *pn;
	unsigned n;

	if (vsw_switch_overlay_get(d->sw, &cfg) == 0 &&
		(pn = vsw_switch_port_name(cfg.underlay, d->sw)) != NULL) {
		ip_str(cfg.local_ip, ip, sizeof(ip));
		if (d->overlay_mtu_given != 0)
			emit_line(&c,
				"overlay-set underlay=%s local-ip=%s "
				"mtu=%u",
				pn, ip, d->overlay_mtu_given);
		else
			emit_line(&c, "overlay-set underlay=%s local-ip=%s", pn,
				ip);
	}
	n = vsw_switch_domains(d->sw, vnis, VSW_SWITCH_MAX_DOMAINS);
	for (unsigned i = 0; i < n; i++) {
		if (vsw_switch_domain_get(d->sw, vnis[i], &in) < 0)
			continue;
		emit_line(&c, "domain-add %u", in.vni);
		for (unsigned p = 0; p < in.n_ports; p++)
			if ((pn = vsw_switch_port_name(in.ports[p], d->sw)))
				emit_line(&c, "domain-port-add %u %s", in.vni,
					pn);
		for (unsigned v = 0; v < in.n_vteps; v++) {
			ip_str(in.vteps[v], ip, sizeof(ip));
			emit_line(&c, "vtep-add %u %s", in.vni, ip);
		}
		c.vni = in.vni;
		vsw_switch_domain_macs(d->sw, in.vni, cfg_mac, &c);
	}
}

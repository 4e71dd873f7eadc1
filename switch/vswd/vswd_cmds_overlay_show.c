/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Overlay state as the commands show it: overlay-show, domain-show, and
 * the lines that recreate it in the running configuration (config-show,
 * the state file). Control thread; reads the switch, changes nothing.
 */
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>

#include <vsw/vxlan.h>

#include "vswd_priv.h"

static void
show_neighs(struct vswd *d, struct vsw_ctl_reply *r)
{
	struct vsw_overlay_neigh n[VSW_SWITCH_MAX_VTEPS];
	unsigned k = vsw_switch_overlay_neighs(d->sw, n, VSW_SWITCH_MAX_VTEPS);
	char ip[INET_ADDRSTRLEN], mac[18];

	for (unsigned i = 0; i < k; i++) {
		vswd_overlay_ip_str(n[i].ip, ip, sizeof(ip));
		vswd_overlay_mac_str(n[i].mac, mac, sizeof(mac));
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
		vswd_overlay_ip_str(cfg.local_ip, ip, sizeof(ip));
		vswd_overlay_mac_str(cfg.local_mac, mac, sizeof(mac));
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

	vswd_overlay_mac_str(mac, ms, sizeof(ms));
	vswd_overlay_ip_str(vtep, ip, sizeof(ip));
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
		vswd_overlay_ip_str(in->vteps[i], ip, sizeof(ip));
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
		if (vswd_overlay_parse_vni(argv[1], &vnis[0], r) < 0)
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
	vswd_overlay_mac_str(mac, ms, sizeof(ms));
	vswd_overlay_ip_str(vtep, ip, sizeof(ip));
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
		vswd_overlay_ip_str(cfg.local_ip, ip, sizeof(ip));
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
			vswd_overlay_ip_str(in.vteps[v], ip, sizeof(ip));
			emit_line(&c, "vtep-add %u %s", in.vni, ip);
		}
		c.vni = in.vni;
		vsw_switch_domain_macs(d->sw, in.vni, cfg_mac, &c);
	}
}

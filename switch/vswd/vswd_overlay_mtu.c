/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Guest MTUs on an overlay: vswd keeps each vhost-user port's MTU limit
 * (vsw_vport_mtu_limit_set: the largest NET_SET_MTU it accepts) at the
 * underlay MTU - 50 while the port is in an L2 domain, so a guest started
 * with QEMU's host_mtu= gets an MTU whose frames fit the VXLAN packets,
 * and shows what each guest set (domain-show).
 *
 * Control thread (the overlay commands call it).
 */
#include <string.h>

#include <vsw/vport.h>
#include <vsw/vxlan.h>

#include "vswd_priv.h"

/*
 * Each vhost-user port's MTU limit (vsw_vport_mtu_limit_set): underlay
 * MTU - 50 in a domain of a set overlay, else none. After every change
 * of the underlay MTU, the domains or their ports.
 */
void
vswd_overlay_mtu_sync(struct vswd *d)
{
	static bool in_dom[VSW_SWITCH_MAX_PORTS];
	static uint32_t vnis[VSW_SWITCH_MAX_DOMAINS];
	struct vsw_overlay_config cfg;
	struct vsw_domain_info in;
	unsigned n = vsw_switch_domains(d->sw, vnis, VSW_SWITCH_MAX_DOMAINS);
	uint16_t limit = 0;

	if (vsw_switch_overlay_get(d->sw, &cfg) == 0)
		limit = (uint16_t)(cfg.mtu - VSW_VXLAN_OVERHEAD);
	memset(in_dom, 0, sizeof(in_dom));
	for (unsigned i = 0; i < n; i++)
		if (vsw_switch_domain_get(d->sw, vnis[i], &in) == 0)
			for (unsigned k = 0; k < in.n_ports; k++)
				in_dom[in.ports[k]] = true;
	for (struct vswd_port *p = d->ports; p != NULL; p = p->next)
		if (p->type == VSWD_PORT_VHOST && p->vport != NULL)
			vsw_vport_mtu_limit_set(
				p->vport, in_dom[p->port_no] ? limit : 0);
}

/* The guest MTU of each vhost-user port of the domain (NET_SET_MTU). */
void
vswd_overlay_mtu_show(struct vswd *d, const struct vsw_domain_info *in,
	struct vsw_ctl_reply *r)
{
	struct vsw_vport_mtu mt;
	unsigned n = 0;

	vsw_ctl_reply_printf(r, r->json ? "], \"port_mtu\": [" : "\n  mtu:");
	for (struct vswd_port *p = d->ports; p != NULL; p = p->next) {
		bool member = false;

		for (unsigned i = 0; i < in->n_ports; i++)
			member |= in->ports[i] == p->port_no;
		if (!member || p->type != VSWD_PORT_VHOST || p->vport == NULL)
			continue;
		vsw_vport_mtu_get(p->vport, &mt);
		if (r->json) {
			vsw_ctl_reply_printf(r, "%s{\"port\": ", n ? ", " : "");
			vsw_ctl_reply_json_str(r, p->name);
			vsw_ctl_reply_printf(r,
				", \"mtu\": %u, \"limit\": %u, \"refused\": "
				"%lu, \"over_limit\": %lu}",
				mt.mtu, mt.limit, (unsigned long)mt.refused,
				(unsigned long)mt.over_limit);
		} else {
			vsw_ctl_reply_printf(r,
				" %s %u (limit %u, refused %lu, over limit "
				"%lu)",
				p->name, mt.mtu, mt.limit,
				(unsigned long)mt.refused,
				(unsigned long)mt.over_limit);
		}
		n++;
	}
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The overlay's part of the metrics page (vswd_metrics.c writes the rest):
 * VXLAN encapsulations and decapsulations, every overlay drop by reason,
 * ARP and neighbour events, the neighbour table's size, and per L2 domain
 * its packets, floods, drops, MAC counts and its guests' MTUs. Nothing
 * when no domain and no overlay exist.
 *
 * Control thread: the same calls overlay-show and domain-show make.
 */
#include <inttypes.h>
#include <stdio.h>

#include <vsw/switch.h>
#include <vsw/vport.h>

#include "vswd_priv.h"

enum ov_family { OF_PACKETS, OF_DROPS, OF_ARP, OF_NEIGH, OF_N };

static const struct {
	const char *name, *label, *help;
} families[OF_N] = {
	[OF_PACKETS] = {"vsw_overlay_packets_total", "direction",
		"VXLAN packets encapsulated to and decapsulated from remote "
		"VTEPs."},
	[OF_DROPS] = {"vsw_overlay_drops_total", "reason",
		"Overlay drops by reason (overlay-show; their sum is the PMD "
		"drop_overlay less arp_replies_consumed)."},
	[OF_ARP] = {"vsw_overlay_arp_total", "event",
		"ARP on the underlay for the local VTEP: replies sent, "
		"replies consumed, requests and refreshes sent, failures."},
	[OF_NEIGH] = {"vsw_overlay_neigh_events_total", "event",
		"Remote VTEP neighbours: MACs learned, changed, forgotten."},
};

/* Each overlay counter's family and label value. */
static const struct {
	enum ov_family f;
	const char *v;
} counter_family[VSW_OVERLAY_N_COUNTERS] = {
	[VSW_OVERLAY_ENCAP] = {OF_PACKETS, "encap"},
	[VSW_OVERLAY_DECAP] = {OF_PACKETS, "decap"},
	[VSW_OVERLAY_NO_NEIGH] = {OF_DROPS, NULL},
	[VSW_OVERLAY_TOO_BIG] = {OF_DROPS, NULL},
	[VSW_OVERLAY_OFFLOAD] = {OF_DROPS, NULL},
	[VSW_OVERLAY_COPY_FAIL] = {OF_DROPS, NULL},
	[VSW_OVERLAY_BAD_IP] = {OF_DROPS, NULL},
	[VSW_OVERLAY_TRUNCATED] = {OF_DROPS, NULL},
	[VSW_OVERLAY_BAD_CSUM] = {OF_DROPS, NULL},
	[VSW_OVERLAY_FRAGMENT] = {OF_DROPS, NULL},
	[VSW_OVERLAY_TTL] = {OF_DROPS, NULL},
	[VSW_OVERLAY_BAD_UDP] = {OF_DROPS, NULL},
	[VSW_OVERLAY_BAD_FLAGS] = {OF_DROPS, NULL},
	[VSW_OVERLAY_UNKNOWN_VNI] = {OF_DROPS, NULL},
	[VSW_OVERLAY_SPLIT_HORIZON] = {OF_DROPS, NULL},
	[VSW_OVERLAY_NO_OUTPUT] = {OF_DROPS, NULL},
	[VSW_OVERLAY_ARP_BAD] = {OF_DROPS, NULL},
	[VSW_OVERLAY_ARP_REPLIED] = {OF_ARP, "replies_sent"},
	[VSW_OVERLAY_ARP_CONSUMED] = {OF_ARP, "replies_consumed"},
	[VSW_OVERLAY_ARP_REQUESTS] = {OF_ARP, "requests_sent"},
	[VSW_OVERLAY_ARP_REQ_FAIL] = {OF_ARP, "request_failures"},
	[VSW_OVERLAY_ARP_REFRESH] = {OF_ARP, "refreshes_sent"},
	[VSW_OVERLAY_NEIGH_LEARNED] = {OF_NEIGH, "learned"},
	[VSW_OVERLAY_NEIGH_CHANGED] = {OF_NEIGH, "mac_changed"},
	[VSW_OVERLAY_NEIGH_EXPIRED] = {OF_NEIGH, "expired"},
};
/* a new counter needs a row above: the compiler counts them */
_Static_assert(VSW_OVERLAY_NEIGH_EXPIRED + 1 == VSW_OVERLAY_N_COUNTERS,
	"every overlay counter has a metrics family");

static void
overlay_counters(struct vswd *d, struct vsw_ctl_reply *r)
{
	uint64_t c[VSW_OVERLAY_N_COUNTERS];

	vsw_switch_overlay_stats(d->sw, c);
	for (unsigned f = 0; f < OF_N; f++) {
		metrics_family(
			r, families[f].name, "counter", families[f].help);
		for (unsigned k = 0; k < VSW_OVERLAY_N_COUNTERS; k++) {
			const char *v = counter_family[k].v;

			if (counter_family[k].f != f)
				continue;
			vsw_ctl_reply_printf(r, "%s{%s=\"%s\"} %" PRIu64 "\n",
				families[f].name, families[f].label,
				v != NULL ? v : vsw_overlay_counter_name(k),
				c[k]);
		}
	}
}

static void
neighbours(struct vswd *d, struct vsw_ctl_reply *r)
{
	static struct vsw_overlay_neigh n[VSW_SWITCH_MAX_VTEPS];
	unsigned k = vsw_switch_overlay_neighs(d->sw, n, VSW_SWITCH_MAX_VTEPS);
	unsigned known = 0;

	for (unsigned i = 0; i < k; i++)
		known += n[i].known;
	metrics_family(r, "vsw_overlay_neighbours", "gauge",
		"Remote VTEPs by whether their MAC is known.");
	vsw_ctl_reply_printf(r,
		"vsw_overlay_neighbours{state=\"resolved\"} %u\n"
		"vsw_overlay_neighbours{state=\"unresolved\"} %u\n",
		known, k - known);
}

/* Per-domain families; which: 0 packets, 1 floods, 2 drops, 3 MACs. */
static void
domain_samples(struct vsw_ctl_reply *r, const struct vsw_domain_info *in,
	unsigned which)
{
	const struct vsw_domain_stats *s = &in->stats;
	const uint64_t pk[4] = {
		s->rx_local, s->rx_vxlan, s->tx_local, s->tx_vxlan};
	static const char *const dir[4] = {
		"rx_local", "rx_vxlan", "tx_local", "tx_vxlan"};

	if (which == 0) {
		for (unsigned k = 0; k < 4; k++)
			vsw_ctl_reply_printf(r,
				"vsw_domain_packets_total{vni=\"%u\","
				"direction=\"%s\"} %" PRIu64 "\n",
				in->vni, dir[k], pk[k]);
	} else if (which == 1) {
		vsw_ctl_reply_printf(r,
			"vsw_domain_floods_total{vni=\"%u\",what=\"frames\"} "
			"%" PRIu64 "\n"
			"vsw_domain_floods_total{vni=\"%u\",what=\"copies\"} "
			"%" PRIu64 "\n",
			in->vni, s->flooded, in->vni, s->flood_copies);
	} else if (which == 2) {
		vsw_ctl_reply_printf(r,
			"vsw_domain_drops_total{vni=\"%u\"} %" PRIu64 "\n",
			in->vni, s->drops);
	} else {
		vsw_ctl_reply_printf(r,
			"vsw_domain_macs{vni=\"%u\",type=\"local\"} %u\n"
			"vsw_domain_macs{vni=\"%u\",type=\"remote\"} %u\n",
			in->vni, in->n_local_macs, in->vni, in->n_remote_macs);
	}
}

/* The guest MTU and refused NET_SET_MTU of each vhost-user domain port. */
static void
domain_mtus(struct vswd *d, struct vsw_ctl_reply *r,
	const struct vsw_domain_info *in, bool refused)
{
	struct vsw_vport_mtu mt;

	for (unsigned i = 0; i < in->n_ports; i++) {
		const char *pn = vsw_switch_port_name(in->ports[i], d->sw);
		struct vswd_port *p = pn != NULL ? vswd_port_find(d, pn) : NULL;

		if (p == NULL || p->type != VSWD_PORT_VHOST || p->vport == NULL)
			continue;
		vsw_vport_mtu_get(p->vport, &mt);
		vsw_ctl_reply_printf(r, "%s{vni=\"%u\",port=\"",
			refused ? "vsw_domain_port_mtu_refused_total"
				: "vsw_domain_port_mtu",
			in->vni);
		metrics_label(r, pn);
		vsw_ctl_reply_printf(r, "\"} %" PRIu64 "\n",
			refused ? mt.refused : (uint64_t)mt.mtu);
	}
}

static void
domains(struct vswd *d, struct vsw_ctl_reply *r)
{
	static const struct {
		const char *name, *type, *help;
	} fam[] = {
		{"vsw_domain_packets_total", "counter",
			"L2 domain frames: from local ports, decapsulated, to "
			"local ports, encapsulated."},
		{"vsw_domain_floods_total", "counter",
			"Frames flooded (unknown, broadcast, multicast) and "
			"the "
			"copies they became (local ports + VTEPs)."},
		{"vsw_domain_drops_total", "counter",
			"Frames of the domain dropped (by reason: "
			"vsw_overlay_drops_total)."},
		{"vsw_domain_macs", "gauge",
			"MACs: learned on local ports, remote (mac-add)."},
		{"vsw_domain_port_mtu", "gauge",
			"The MTU the guest's QEMU set (NET_SET_MTU; 0: none)."},
		{"vsw_domain_port_mtu_refused_total", "counter",
			"NET_SET_MTU refused: above underlay MTU - 50, or out "
			"of 68..65535."},
	};
	static uint32_t vnis[VSW_SWITCH_MAX_DOMAINS];
	unsigned n = vsw_switch_domains(d->sw, vnis, VSW_SWITCH_MAX_DOMAINS);
	struct vsw_domain_info in;

	for (unsigned f = 0; f < sizeof(fam) / sizeof(fam[0]); f++) {
		metrics_family(r, fam[f].name, fam[f].type, fam[f].help);
		for (unsigned i = 0; i < n; i++) {
			if (vsw_switch_domain_get(d->sw, vnis[i], &in) != 0)
				continue;
			if (f < 4)
				domain_samples(r, &in, f);
			else
				domain_mtus(d, r, &in, f == 5);
		}
	}
}

void
vswd_metrics_overlay(struct vswd *d, struct vsw_ctl_reply *r)
{
	struct vsw_overlay_config cfg;
	uint32_t vni;

	if (vsw_switch_overlay_get(d->sw, &cfg) != 0 &&
		vsw_switch_domains(d->sw, &vni, 1) == 0)
		return;
	overlay_counters(d, r);
	neighbours(d, r);
	domains(d, r);
}

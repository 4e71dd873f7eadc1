/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * port-show [PORT]: each port's state, counters, negotiated features and
 * per queue pair detail, as text or JSON. Control thread; reads the
 * switch's, the vport's and the ethdev's counters and changes nothing.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>

#include <vsw/port.h>
#include <vsw/vport.h>
#include <vsw/switch.h>
#include <vsw/virtq.h>

#include "vswd_priv.h"

/* An ethdev's link as the driver reports it (no wait). */
static const char *
eth_link_state(const struct vswd_port *p)
{
	struct rte_eth_link link;

	memset(&link, 0, sizeof(link));
	if (rte_eth_link_get_nowait(p->eth_port, &link) != 0)
		return "down: driver cannot report its link";
	if (link.link_status == RTE_ETH_LINK_DOWN)
		return "down: ethdev reports no carrier (peer or interface "
		       "down)";
	return "up";
}

/* Why a port is (not) passing traffic, in a few words. */
static const char *
link_state(const struct vswd_port *p, const struct vsw_vport_info *vi)
{
	if (p->type != VSWD_PORT_VHOST)
		return eth_link_state(p);
	if (!vi->connected)
		return "down: no vhost-user connection";
	if (!vi->running)
		return "down: guest connected, device not started";
	if (vi->queues_live == 0)
		return "down: no queue enabled by the guest";
	return "up";
}

/* Host -> guest counters: what port-show refines per queue pair. */
static bool
is_enq_stat(int s)
{
	return strncmp(vsw_virtq_stat_name((enum vsw_virtq_stat)s), "enq_",
		       4) == 0;
}

/* Per queue pair: the guest enabled it, vsw serves it, or why not; where
 * sends for it go when the guest disabled it. */
static void
qp_state_text(struct vswd_port *p, uint16_t q, struct vsw_ctl_reply *r)
{
	struct vsw_vport_qp_state st;

	vsw_vport_qp_state_get(p->vport, q, &st);
	vsw_ctl_reply_printf(r, " %s, %s", st.enabled ? "enabled" : "disabled",
		st.live ? "live" : "not live");
	if (!st.live)
		vsw_ctl_reply_printf(r, " (%s)", st.why);
	if (st.tx_to == VSW_VPORT_QP_NONE)
		vsw_ctl_reply_printf(r, ", tx dropped (no pair enabled)");
	else if (st.tx_to != q)
		vsw_ctl_reply_printf(r, ", tx to pair %u", st.tx_to);
	vsw_ctl_reply_printf(r, ";");
}

/* Per queue pair: its state, then where the switch's tx_drops went
 * (ENQ_DROP_*). */
static void
show_queues_text(struct vswd_port *p, struct vsw_ctl_reply *r)
{
	for (uint16_t q = 0; q < p->queues; q++) {
		uint64_t vs[VSW_VIRTQ_STAT__MAX];

		vsw_vport_queue_stats_get(p->vport, q, vs);
		vsw_ctl_reply_printf(r, "  queue pair %u:", q);
		qp_state_text(p, q, r);
		for (int s = 0; s < VSW_VIRTQ_STAT__MAX; s++)
			if (is_enq_stat(s) && vs[s] != 0)
				vsw_ctl_reply_printf(r, " %s=%" PRIu64,
					vsw_virtq_stat_name(
						(enum vsw_virtq_stat)s),
					vs[s]);
		vsw_ctl_reply_printf(r, "\n");
	}
}

static void
show_qp_json(struct vswd_port *p, struct vsw_ctl_reply *r)
{
	vsw_ctl_reply_printf(r, ", \"queue_pairs\": [");
	for (uint16_t q = 0; q < p->queues; q++) {
		struct vsw_vport_qp_state st;
		uint64_t vs[VSW_VIRTQ_STAT__MAX];

		vsw_vport_qp_state_get(p->vport, q, &st);
		vsw_ctl_reply_printf(r,
			"%s{\"qp\": %u, \"enabled\": %s, \"live\": %s, "
			"\"tx_to\": ",
			q ? ", " : "", q, st.enabled ? "true" : "false",
			st.live ? "true" : "false");
		if (st.tx_to == VSW_VPORT_QP_NONE)
			vsw_ctl_reply_printf(r, "null");
		else
			vsw_ctl_reply_printf(r, "%u", st.tx_to);
		vsw_ctl_reply_printf(r, ", \"why\": ");
		vsw_ctl_reply_json_str(r, st.why);
		vsw_vport_queue_stats_get(p->vport, q, vs);
		for (int i = 0; i < VSW_VIRTQ_STAT__MAX; i++)
			vsw_ctl_reply_printf(r, ", \"%s\": %" PRIu64,
				vsw_virtq_stat_name((enum vsw_virtq_stat)i),
				vs[i]);
		vsw_ctl_reply_printf(r, "}");
	}
	vsw_ctl_reply_printf(r, "]");
}

static void
show_queues_json(struct vswd_port *p, struct vsw_ctl_reply *r)
{
	show_qp_json(p, r);
	vsw_ctl_reply_printf(r, ", \"queue_pairs_enq\": [");
	for (uint16_t q = 0; q < p->queues; q++) {
		uint64_t vs[VSW_VIRTQ_STAT__MAX];
		bool first = true;

		vsw_vport_queue_stats_get(p->vport, q, vs);
		vsw_ctl_reply_printf(r, "%s{", q ? ", " : "");
		for (int s = 0; s < VSW_VIRTQ_STAT__MAX; s++) {
			if (!is_enq_stat(s))
				continue;
			vsw_ctl_reply_printf(r, "%s\"%s\": %" PRIu64,
				first ? "" : ", ",
				vsw_virtq_stat_name((enum vsw_virtq_stat)s),
				vs[s]);
			first = false;
		}
		vsw_ctl_reply_printf(r, "}");
	}
	vsw_ctl_reply_printf(r, "]");
}

/* The ethdev's own counters: rte_eth_stats, then every xstat (text: the
 * non-zero ones). */
static void
show_eth(const struct vswd_port *p, struct vsw_ctl_reply *r)
{
	struct rte_eth_stats es;
	struct rte_eth_xstat_name *names = NULL;
	struct rte_eth_xstat *xs = NULL;
	int n = rte_eth_xstats_get_names(p->eth_port, NULL, 0);

	memset(&es, 0, sizeof(es));
	rte_eth_stats_get(p->eth_port, &es);
	vsw_ctl_reply_printf(r,
		r->json ? ", \"eth_stats\": {\"ipackets\": %" PRIu64
			  ", \"opackets\": %" PRIu64 ", \"ibytes\": %" PRIu64
			  ", \"obytes\": %" PRIu64 ", \"imissed\": %" PRIu64
			  ", \"ierrors\": %" PRIu64 ", \"oerrors\": %" PRIu64
			  ", \"rx_nombuf\": %" PRIu64 "}"
			: "  ethdev: ipackets=%" PRIu64 " opackets=%" PRIu64
			  " ibytes=%" PRIu64 " obytes=%" PRIu64
			  " imissed=%" PRIu64 " ierrors=%" PRIu64
			  " oerrors=%" PRIu64 " rx_nombuf=%" PRIu64 "\n",
		es.ipackets, es.opackets, es.ibytes, es.obytes, es.imissed,
		es.ierrors, es.oerrors, es.rx_nombuf);
	if (n > 0) {
		names = calloc((size_t)n, sizeof(*names));
		xs = calloc((size_t)n, sizeof(*xs));
	}
	if (names == NULL || xs == NULL ||
		rte_eth_xstats_get_names(p->eth_port, names, (unsigned)n) !=
			n ||
		rte_eth_xstats_get(p->eth_port, xs, (unsigned)n) != n)
		n = 0;
	if (r->json)
		vsw_ctl_reply_printf(r, ", \"xstats\": {");
	for (int i = 0, first = 1; i < n; i++) {
		if (xs[i].id >= (uint64_t)n)
			continue;
		if (r->json) {
			vsw_ctl_reply_printf(r, "%s", first ? "" : ", ");
			vsw_ctl_reply_json_str(r, names[xs[i].id].name);
			vsw_ctl_reply_printf(r, ": %" PRIu64, xs[i].value);
			first = 0;
		} else if (xs[i].value != 0) {
			vsw_ctl_reply_printf(r, "  %s=%" PRIu64 "\n",
				names[xs[i].id].name, xs[i].value);
		}
	}
	if (r->json)
		vsw_ctl_reply_printf(r, "}");
	free(names);
	free(xs);
}

/* Retries on a full guest ring, per queue pair and in all. */
static uint64_t
vhost_retries(const struct vswd_port *p)
{
	uint64_t sum = 0;

	for (uint16_t q = 0; q < p->queues; q++)
		sum += vsw_port_vhost_tx_retries(&p->vhost, q);
	return sum;
}

/* Which virtqueue layout the guest negotiated (before it did: split). */
static const char *
rings_text(uint64_t f)
{
	return (f >> VSW_VIRTIO_F_RING_PACKED) & 1 ? "packed" : "split";
}

/* "csum+tso4+tso6", "csum", "nothing": which offloads a direction has. */
static const char *
offloads_text(uint64_t f, unsigned csum, unsigned tso4, unsigned tso6)
{
	static const char *const text[8] = {"nothing", "csum", "tso4",
		"csum+tso4", "tso6", "csum+tso6", "tso4+tso6",
		"csum+tso4+tso6"};

	return text[((f >> csum) & 1) | (((f >> tso4) & 1) << 1) |
		(((f >> tso6) & 1) << 2)];
}

static void
show_port_text(struct vswd_port *p, const struct vsw_port_stats *ps,
	const struct vsw_vport_info *vi, const uint64_t *vs,
	struct vsw_ctl_reply *r)
{
	vsw_ctl_reply_printf(r, "port %u: %s (%s, %s)\n", p->port_no, p->name,
		p->type == VSWD_PORT_VHOST ? "vhost-user" : "dpdk", p->path);
	vsw_ctl_reply_printf(r, "  link: %s\n", link_state(p, vi));
	vsw_ctl_reply_printf(r, "  switch: rx=%" PRIu64 " tx=%" PRIu64
		" tx_drops=%" PRIu64 "\n", ps->rx, ps->tx, ps->tx_drops);
	vsw_ctl_reply_printf(r, "  software offloads for it: %" PRIu64
		" TSO frames segmented into %" PRIu64 " segments, %" PRIu64
		" checksums completed, %" PRIu64 " dropped\n",
		ps->sw_gso_packets, ps->sw_gso_segments, ps->sw_csum_packets,
		ps->sw_offload_drops);
	if (p->type != VSWD_PORT_VHOST) {
		show_eth(p, r);
		return;
	}
	vsw_ctl_reply_printf(r,
		"  tx retries: %" PRIu64 " (at most %u per "
		"burst)\n",
		vhost_retries(p), vsw_port_vhost_tx_retries_max(&p->vhost));
	vsw_ctl_reply_printf(r, "  queue pairs: %u offered, %u vrings live; "
		"features 0x%" PRIx64 " (%s rings); connects %" PRIu64
		"; max ring size %u\n", p->queues, vi->queues_live,
		vi->features, rings_text(vi->features), vi->connects,
		p->max_ring_size);
	vsw_ctl_reply_printf(r, "  offloads: %s; guest sends %s, receives %s\n",
		p->no_offloads ? "off" : "offered",
		offloads_text(vi->features, VSW_VIRTIO_NET_F_CSUM,
			VSW_VIRTIO_NET_F_HOST_TSO4, VSW_VIRTIO_NET_F_HOST_TSO6),
		offloads_text(vi->features, VSW_VIRTIO_NET_F_GUEST_CSUM,
			VSW_VIRTIO_NET_F_GUEST_TSO4,
			VSW_VIRTIO_NET_F_GUEST_TSO6));
	vsw_ctl_reply_printf(r, "  vhost-user: disconnects %" PRIu64
		", messages rejected %" PRIu64 " (for an fd %" PRIu64
		"), vring set-up errors %" PRIu64 ", interrupts failed %"
		PRIu64 " (blocked %" PRIu64 ")\n", vi->disconnects,
		vi->msg_rejected, vi->fd_rejected, vi->queue_errors,
		vi->call_failed, vi->call_blocked);
	vsw_ctl_reply_printf(r, "  guest memory: faults %" PRIu64
		", regions unsealed %u\n", vi->mem_faults, vi->mem_unsealed);
	vsw_ctl_reply_printf(r, "  migration: dirty log %s (%u vrings logging, "
		"%" PRIu64 " pages logged), RARP %" PRIu64 " received, %" PRIu64
		" injected\n", vi->dirty_log ? "on" : "off", vi->queues_logging,
		vs[VSW_VIRTQ_STAT_LOG_PAGES], vi->rarp_received, vi->rarp_sent);
	for (int s = 0; s < VSW_VIRTQ_STAT__MAX; s++)
		if (vs[s] != 0)
			vsw_ctl_reply_printf(r, "  %s=%" PRIu64 "\n",
				vsw_virtq_stat_name((enum vsw_virtq_stat)s),
				vs[s]);
	show_queues_text(p, r);
}

static void
show_port_json(struct vswd_port *p, const struct vsw_port_stats *ps,
	const struct vsw_vport_info *vi, const uint64_t *vs,
	struct vsw_ctl_reply *r)
{
	vsw_ctl_reply_printf(r, "{\"name\": ");
	vsw_ctl_reply_json_str(r, p->name);
	vsw_ctl_reply_printf(r, ", \"number\": %u, \"type\": \"%s\", "
		"\"path\": ", p->port_no,
		p->type == VSWD_PORT_VHOST ? "vhost-user" : "dpdk");
	vsw_ctl_reply_json_str(r, p->path);
	vsw_ctl_reply_printf(r, ", \"link\": ");
	vsw_ctl_reply_json_str(r, link_state(p, vi));
	vsw_ctl_reply_printf(r, ", \"rx\": %" PRIu64 ", \"tx\": %" PRIu64
		", \"tx_drops\": %" PRIu64, ps->rx, ps->tx, ps->tx_drops);
	vsw_ctl_reply_printf(r, ", \"sw_gso_packets\": %" PRIu64
		", \"sw_gso_segments\": %" PRIu64 ", \"sw_csum_packets\": %"
		PRIu64 ", \"sw_offload_drops\": %" PRIu64, ps->sw_gso_packets,
		ps->sw_gso_segments, ps->sw_csum_packets, ps->sw_offload_drops);
	if (p->type == VSWD_PORT_VHOST) {
		vsw_ctl_reply_printf(r,
			", \"queue_pairs\": %u, \"max_ring_size\": %u, "
			"\"vrings_live\": %u, \"features\": %" PRIu64
			", \"connects\": %" PRIu64 ", \"disconnects\": %" PRIu64
			", \"msg_rejected\": %" PRIu64
			", \"fd_rejected\": %" PRIu64
			", \"queue_errors\": %" PRIu64
			", \"call_failed\": %" PRIu64
			", \"call_blocked\": %" PRIu64
			", \"mem_faults\": %" PRIu64
			", \"mem_unsealed\": %u"
			", \"tx_retries\": %" PRIu64
			", \"tx_retries_max\": %u, \"offloads\": %s"
			", \"rings\": \"%s\"",
			p->queues, p->max_ring_size, vi->queues_live,
			vi->features, vi->connects,
			vi->disconnects, vi->msg_rejected, vi->fd_rejected,
			vi->queue_errors, vi->call_failed, vi->call_blocked,
			vi->mem_faults,
			vi->mem_unsealed, vhost_retries(p),
			vsw_port_vhost_tx_retries_max(&p->vhost),
			p->no_offloads ? "false" : "true",
			rings_text(vi->features));
		vsw_ctl_reply_printf(r, ", \"dirty_log\": %s, "
			"\"vrings_logging\": %u, \"log_pages\": %" PRIu64
			", \"rarp_received\": %" PRIu64 ", \"rarp_sent\": %"
			PRIu64 ", \"virtq\": {", vi->dirty_log ? "true" : "false",
			vi->queues_logging, vs[VSW_VIRTQ_STAT_LOG_PAGES],
			vi->rarp_received, vi->rarp_sent);
		for (int s = 0; s < VSW_VIRTQ_STAT__MAX; s++)
			vsw_ctl_reply_printf(r, "%s\"%s\": %" PRIu64,
				s ? ", " : "",
				vsw_virtq_stat_name((enum vsw_virtq_stat)s),
				vs[s]);
		vsw_ctl_reply_printf(r, "}");
		show_queues_json(p, r);
	} else {
		show_eth(p, r);
	}
	vsw_ctl_reply_printf(r, "}");
}

void
vswd_cmd_port_show(void *ctx, int argc, char **argv, struct vsw_ctl_reply *r)
{
	struct vswd *d = ctx;
	bool first = true;

	if (argc == 2 && vswd_port_find(d, argv[1]) == NULL) {
		vsw_ctl_reply_error(r, "no port '%.40s'", argv[1]);
		return;
	}
	if (r->json)
		vsw_ctl_reply_printf(r, "{\"ports\": [");
	for (struct vswd_port *p = d->ports; p != NULL; p = p->next) {
		struct vsw_port_stats ps = {0};
		struct vsw_vport_info vi = {0};
		uint64_t vs[VSW_VIRTQ_STAT__MAX] = {0};

		if (argc == 2 && strcmp(argv[1], p->name) != 0)
			continue;
		vsw_switch_port_stats(d->sw, p->port_no, &ps);
		if (p->type == VSWD_PORT_VHOST) {
			vsw_vport_info_get(p->vport, &vi);
			vsw_vport_stats_get(p->vport, vs);
		}
		if (r->json) {
			vsw_ctl_reply_printf(r, "%s", first ? "" : ", ");
			show_port_json(p, &ps, &vi, vs, r);
		} else {
			show_port_text(p, &ps, &vi, vs, r);
		}
		first = false;
	}
	if (r->json)
		vsw_ctl_reply_printf(r, "]}\n");
}

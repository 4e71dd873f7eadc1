/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Metrics in the Prometheus text exposition format (version 0.0.4): one
 * function, vswd_metrics_format(), writes the whole page; the HTTP endpoint
 * (vswd_metrics_http.c) and `vswctl metrics` both serve what it wrote, so
 * the two can never disagree. Control thread only: it walks the port list
 * and the rule table like port-show and flow-dump do, and reads the PMD
 * counters through vsw_switch_pmd_stats() (one writer each, relaxed loads).
 *
 * Every family's samples are written together under one HELP and one TYPE
 * line, as the format requires; names are vsw_..., counters end in _total.
 * PMD and port counters count since start (PMDs: since pmd-stats-clear,
 * which Prometheus sees as a counter reset).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>

#include <vsw/copy.h>
#include <vsw/dpcls.h>
#include <vsw/rule.h>
#include <vsw/switch.h>
#include <vsw/virtq.h>
#include <vsw/vswd.h>

#include "vswd_priv.h"

static void
family(struct vsw_ctl_reply *r, const char *name, const char *type,
	const char *help)
{
	vsw_ctl_reply_printf(r, "# HELP %s %s\n# TYPE %s %s\n", name, help,
		name, type);
}

/* A label value: backslash, double quote and newline escaped. */
static void
label_value(struct vsw_ctl_reply *r, const char *s)
{
	for (; *s != '\0'; s++) {
		if (*s == '\\' || *s == '"')
			vsw_ctl_reply_printf(r, "\\%c", *s);
		else if (*s == '\n')
			vsw_ctl_reply_printf(r, "\\n");
		else
			vsw_ctl_reply_printf(r, "%c", *s);
	}
}

/* The two for vswd_metrics_overlay.c. */
void
metrics_family(struct vsw_ctl_reply *r, const char *name, const char *type,
	const char *help)
{
	family(r, name, type, help);
}

void
metrics_label(struct vsw_ctl_reply *r, const char *s)
{
	label_value(r, s);
}

/* name{port="p"[,k="v"]} value */
static void
port_sample(struct vsw_ctl_reply *r, const char *name, const char *port,
	const char *k, const char *v, uint64_t value)
{
	vsw_ctl_reply_printf(r, "%s{port=\"", name);
	label_value(r, port);
	if (k != NULL) {
		vsw_ctl_reply_printf(r, "\",%s=\"", k);
		label_value(r, v);
	}
	vsw_ctl_reply_printf(r, "\"} %" PRIu64 "\n", value);
}

/* ---- ports ---- */

struct port_snap {
	const struct vswd_port *p;
	struct vsw_port_stats ps;
	uint64_t vs[VSW_VIRTQ_STAT__MAX];
};

static bool
is_drop_stat(int s)
{
	return (s >= VSW_VIRTQ_STAT_ENQ_DROP_RING_FULL &&
			s <= VSW_VIRTQ_STAT_ENQ_DROP_OFFLOAD) ||
		(s >= VSW_VIRTQ_STAT_DEQ_DROP_BAD_DESC &&
			s <= VSW_VIRTQ_STAT_DEQ_DROP_HDR_GSO_TOTAL);
}

static bool
is_error_stat(int s)
{
	return s >= VSW_VIRTQ_STAT_ERR_DESC_INDEX &&
		s <= VSW_VIRTQ_STAT_ERR_RING_BROKEN;
}

/* What vswd did in software for a destination that could not take a
 * packet's offloads (port-show "software offloads for it"). */
static void
ports_sw_offload(
	struct vsw_ctl_reply *r, const struct port_snap *s, unsigned n)
{
	const char *gso = "vsw_port_sw_gso_frames_total";
	const char *seg = "vsw_port_sw_gso_segments_total";
	const char *csum = "vsw_port_sw_csum_packets_total";
	const char *drop = "vsw_port_sw_offload_drops_total";

	family(r, gso, "counter", "TSO frames vswd segmented in software for "
		"a port without TSO.");
	for (unsigned i = 0; i < n; i++)
		port_sample(r, gso, s[i].p->name, NULL, NULL,
			s[i].ps.sw_gso_packets);
	family(r, seg, "counter", "Segments those TSO frames became.");
	for (unsigned i = 0; i < n; i++)
		port_sample(r, seg, s[i].p->name, NULL, NULL,
			s[i].ps.sw_gso_segments);
	family(r, csum, "counter", "Partial checksums vswd completed in "
		"software for a port without checksum offload.");
	for (unsigned i = 0; i < n; i++)
		port_sample(r, csum, s[i].p->name, NULL, NULL,
			s[i].ps.sw_csum_packets);
	family(r, drop, "counter", "Packets for a port that vswd could not "
		"segment (no mbuf): dropped.");
	for (unsigned i = 0; i < n; i++)
		port_sample(r, drop, s[i].p->name, NULL, NULL,
			s[i].ps.sw_offload_drops);
}

static void
ports_switch(struct vsw_ctl_reply *r, const struct port_snap *s, unsigned n)
{
	family(r, "vsw_port_packets_total", "counter",
		"Packets the switch received from (rx) and delivered to (tx) "
		"a port.");
	for (unsigned i = 0; i < n; i++) {
		port_sample(r, "vsw_port_packets_total", s[i].p->name,
			"direction", "rx", s[i].ps.rx);
		port_sample(r, "vsw_port_packets_total", s[i].p->name,
			"direction", "tx", s[i].ps.tx);
	}
	family(r, "vsw_port_tx_drops_total", "counter",
		"Packets sent to a port that it did not deliver (the vhost "
		"drop reasons refine them).");
	for (unsigned i = 0; i < n; i++)
		port_sample(r, "vsw_port_tx_drops_total", s[i].p->name, NULL,
			NULL, s[i].ps.tx_drops);
	ports_sw_offload(r, s, n);
}

static void
ports_vhost(struct vsw_ctl_reply *r, const struct port_snap *s, unsigned n)
{
	family(r, "vsw_port_bytes_total", "counter",
		"Bytes a vhost-user port took from the guest (rx) and gave "
		"to it (tx).");
	for (unsigned i = 0; i < n; i++) {
		if (s[i].p->type != VSWD_PORT_VHOST)
			continue;
		port_sample(r, "vsw_port_bytes_total", s[i].p->name,
			"direction", "rx", s[i].vs[VSW_VIRTQ_STAT_DEQ_BYTES]);
		port_sample(r, "vsw_port_bytes_total", s[i].p->name,
			"direction", "tx", s[i].vs[VSW_VIRTQ_STAT_ENQ_BYTES]);
	}
	family(r, "vsw_port_drops_total", "counter",
		"Packets a vhost-user port dropped, by reason (enq_: to the "
		"guest, deq_: from the guest).");
	for (unsigned i = 0; i < n; i++)
		for (int k = 0; s[i].p->type == VSWD_PORT_VHOST &&
				k < VSW_VIRTQ_STAT__MAX; k++)
			if (is_drop_stat(k))
				port_sample(r, "vsw_port_drops_total",
					s[i].p->name, "reason",
					vsw_virtq_stat_name(k), s[i].vs[k]);
	family(r, "vsw_port_ring_errors_total", "counter",
		"Guest ring errors a vhost-user port counted, by reason.");
	for (unsigned i = 0; i < n; i++)
		for (int k = 0; s[i].p->type == VSWD_PORT_VHOST &&
				k < VSW_VIRTQ_STAT__MAX; k++)
			if (is_error_stat(k))
				port_sample(r, "vsw_port_ring_errors_total",
					s[i].p->name, "reason",
					vsw_virtq_stat_name(k), s[i].vs[k]);
	family(r, "vsw_port_dirty_log_pages_total", "counter",
		"Guest pages a vhost-user port marked in the dirty log (live "
		"migration).");
	for (unsigned i = 0; i < n; i++)
		if (s[i].p->type == VSWD_PORT_VHOST)
			port_sample(r, "vsw_port_dirty_log_pages_total",
				s[i].p->name, NULL, NULL,
				s[i].vs[VSW_VIRTQ_STAT_LOG_PAGES]);
}

/* name{port="p",queue="q",k="v"} value */
static void
queue_sample(struct vsw_ctl_reply *r, const char *name, const char *port,
	unsigned q, const char *k, const char *v, uint64_t value)
{
	vsw_ctl_reply_printf(r, "%s{port=\"", name);
	label_value(r, port);
	vsw_ctl_reply_printf(r, "\",queue=\"%u\",%s=\"%s\"} %" PRIu64 "\n", q,
		k, v, value);
}

enum queue_family { QF_PACKETS, QF_BYTES, QF_DROPS, QF__MAX };

static const char *const queue_families[QF__MAX][2] = {
	[QF_PACKETS] = {"vsw_queue_packets_total", "Packets a vhost-user "
		"queue pair took from the guest (rx) and gave to it (tx)."},
	[QF_BYTES] = {"vsw_queue_bytes_total", "Bytes a vhost-user queue "
		"pair took from the guest (rx) and gave to it (tx)."},
	[QF_DROPS] = {"vsw_queue_drops_total", "Packets a vhost-user queue "
		"pair dropped, by reason."},
};

static void
queue_one(struct vsw_ctl_reply *r, enum queue_family f, const char *port,
	unsigned q, const uint64_t *vs)
{
	const char *name = queue_families[f][0];

	if (f == QF_PACKETS || f == QF_BYTES) {
		bool pk = f == QF_PACKETS;

		queue_sample(r, name, port, q, "direction", "rx",
			vs[pk ? VSW_VIRTQ_STAT_DEQ_PACKETS :
				VSW_VIRTQ_STAT_DEQ_BYTES]);
		queue_sample(r, name, port, q, "direction", "tx",
			vs[pk ? VSW_VIRTQ_STAT_ENQ_PACKETS :
				VSW_VIRTQ_STAT_ENQ_BYTES]);
		return;
	}
	for (int k = 0; k < VSW_VIRTQ_STAT__MAX; k++)
		if (is_drop_stat(k))
			queue_sample(r, name, port, q, "reason",
				vsw_virtq_stat_name(k), vs[k]);
}

/* Per queue pair of every vhost-user port (vsw_vport_queue_stats_get). */
static void
queues_vhost(struct vsw_ctl_reply *r, const struct port_snap *s, unsigned n)
{
	uint64_t vs[VSW_VIRTQ_STAT__MAX];

	for (int f = 0; f < QF__MAX; f++) {
		family(r, queue_families[f][0], "counter",
			queue_families[f][1]);
		for (unsigned i = 0; i < n; i++)
			for (unsigned q = 0; s[i].p->type == VSWD_PORT_VHOST &&
					q < s[i].p->queues; q++)
				if (vsw_vport_queue_stats_get(s[i].p->vport, q,
						vs) == 0)
					queue_one(r, f, s[i].p->name, q, vs);
	}
}

static void
metrics_ports(struct vswd *d, struct vsw_ctl_reply *r)
{
	static struct port_snap snap[VSW_SWITCH_MAX_PORTS];
	unsigned n = 0;

	for (struct vswd_port *p = d->ports; p != NULL &&
			n < VSW_SWITCH_MAX_PORTS; p = p->next) {
		struct port_snap *s = &snap[n++];

		memset(s, 0, sizeof(*s));
		s->p = p;
		vsw_switch_port_stats(d->sw, p->port_no, &s->ps);
		if (p->type == VSWD_PORT_VHOST)
			vsw_vport_stats_get(p->vport, s->vs);
	}
	ports_switch(r, snap, n);
	ports_vhost(r, snap, n);
	queues_vhost(r, snap, n);
}

/* ---- PMDs ---- */

/* One family with one sample per PMD per labelled counter. */
struct pmd_family {
	const char *name;
	const char *type;
	const char *help;
	const char *label;          /* NULL: no extra label */
	const char *values[3];      /* label values, NULL-terminated */
	enum vsw_pmd_counter c[3];  /* their counters */
};

static const struct pmd_family pmd_families[] = {
	{"vsw_pmd_packets_total", "counter",
		"Packets a PMD received (rx) and delivered (tx).",
		"direction", {"rx", "tx"}, {VSW_PMD_RX, VSW_PMD_TX}},
	{"vsw_pmd_cache_hits_total", "counter",
		"Packets matched by the exact-match cache, the classifier or "
		"the port-pair fast path.",
		"cache", {"emc", "classifier", "port_pair"},
		{VSW_PMD_EMC_HIT, VSW_PMD_CLS_HIT, VSW_PMD_PAIR_HIT}},
	{"vsw_pmd_subtable_lookups_total", "counter",
		"Classifier subtables searched for classifier hits.",
		NULL, {NULL, NULL}, {VSW_PMD_SUBTABLE_LOOKUPS}},
	{"vsw_pmd_clones_total", "counter",
		"Extra references made when a packet goes to several ports.",
		NULL, {NULL, NULL}, {VSW_PMD_CLONES}},
	{"vsw_pmd_cycles_total", "counter",
		"TSC cycles spent in iterations that received packets (busy) "
		"or none (idle).",
		"state", {"busy", "idle"},
		{VSW_PMD_CYCLES_BUSY, VSW_PMD_CYCLES_IDLE}},
	{"vsw_pmd_iterations_total", "counter",
		"Poll-loop iterations that received packets (busy) or none "
		"(idle).",
		"state", {"busy", "idle"},
		{VSW_PMD_ITER_BUSY, VSW_PMD_ITER_IDLE}},
	{"vsw_pmd_txq_lock_total", "counter",
		"Sends on a tx queue PMDs share (under its lock), and how many "
		"found the lock taken.",
		"event", {"sends", "contended"},
		{VSW_PMD_TXQ_LOCKED, VSW_PMD_TXQ_CONTENDED}},
	{"vsw_pmd_output_batches_total", "counter",
		"Output batches a PMD flushed to ports.",
		NULL, {NULL, NULL}, {VSW_PMD_BATCHES}},
	{"vsw_pmd_output_batch_packets_total", "counter",
		"Packets in the flushed output batches.",
		NULL, {NULL, NULL}, {VSW_PMD_BATCH_PKTS}},
	{"vsw_pmd_watchdog_signals_total", "counter",
		"Signals the PMD watchdog sent a PMD stuck in a write to a "
		"peer's fd (a guest's call eventfd).",
		NULL, {NULL, NULL}, {VSW_PMD_WATCHDOG_SIGNALS}},
};

static void
pmd_sample(struct vsw_ctl_reply *r, const char *name, unsigned pmd,
	const char *k, const char *v)
{
	vsw_ctl_reply_printf(r, "%s{pmd=\"%u\"", name, pmd);
	if (k != NULL)
		vsw_ctl_reply_printf(r, ",%s=\"%s\"", k, v);
	vsw_ctl_reply_printf(r, "} ");
}

static void
metrics_pmds(struct vswd *d, struct vsw_ctl_reply *r)
{
	static struct vsw_pmd_stats st[VSW_SWITCH_MAX_PMDS];
	bool ok[VSW_SWITCH_MAX_PMDS];
	const char *drop = "vsw_pmd_drops_total";
	const char *avg = "vsw_pmd_avg_batch_packets";

	for (unsigned i = 0; i < d->n_pmds; i++)
		ok[i] = vsw_switch_pmd_stats(d->sw, i, &st[i]) == 0;
	for (size_t f = 0; f < RTE_DIM(pmd_families); f++) {
		const struct pmd_family *pf = &pmd_families[f];

		family(r, pf->name, pf->type, pf->help);
		for (unsigned i = 0; i < d->n_pmds; i++)
			for (int j = 0; ok[i] && j < 3 &&
				(j == 0 || (pf->label && pf->values[j])); j++) {
				pmd_sample(r, pf->name, i, pf->label,
					pf->values[j]);
				vsw_ctl_reply_printf(r, "%" PRIu64 "\n",
					st[i].c[pf->c[j]]);
			}
	}
	family(r, drop, "counter", "Packets a PMD dropped, by reason; "
		"rx + clones = tx + drops.");
	for (unsigned i = 0; i < d->n_pmds; i++)
		for (int k = VSW_PMD_DROP_FIRST; ok[i] && k <= VSW_PMD_DROP_LAST;
				k++) {
			/* "drop_no_rule" -> reason="no_rule" */
			const char *n = vsw_pmd_counter_name(k);

			pmd_sample(r, drop, i, "reason",
				strncmp(n, "drop_", 5) == 0 ? n + 5 : n);
			vsw_ctl_reply_printf(r, "%" PRIu64 "\n", st[i].c[k]);
		}
	family(r, avg, "gauge", "Average packets per output batch since "
		"the counters were cleared.");
	for (unsigned i = 0; i < d->n_pmds; i++) {
		if (!ok[i])
			continue;
		pmd_sample(r, avg, i, NULL, NULL);
		vsw_ctl_reply_printf(r, "%.3f\n", st[i].avg_packets_per_batch);
	}
}

/* ---- rules ---- */

struct rules_ctx {
	struct vswd *d;
	struct vsw_ctl_reply *r;
	bool bytes;
};

static void
rule_sample(const struct vsw_rule *rule, const struct vsw_rule_stats *st,
	void *arg)
{
	struct rules_ctx *c = arg;
	char text[VSW_RULE_TEXT_MAX * 2];

	vsw_rule_format(rule, 0, vsw_switch_port_name, c->d->sw, text,
		sizeof(text));
	vsw_ctl_reply_printf(c->r, "%s{rule=\"",
		c->bytes ? "vsw_rule_bytes_total" : "vsw_rule_packets_total");
	label_value(c->r, text);
	vsw_ctl_reply_printf(c->r, "\"} %" PRIu64 "\n",
		c->bytes ? st->bytes : st->packets);
}

static void
metrics_rules(struct vswd *d, struct vsw_ctl_reply *r)
{
	struct rules_ctx c = {.d = d, .r = r};

	family(r, "vsw_rules", "gauge", "Rules in the rule table.");
	vsw_ctl_reply_printf(r, "vsw_rules %u\n", vsw_switch_n_rules(d->sw));
	family(r, "vsw_rule_packets_total", "counter",
		"Packets that hit a rule (label: the rule as flow-dump "
		"prints it).");
	vsw_switch_rules_dump(d->sw, rule_sample, &c);
	family(r, "vsw_rule_bytes_total", "counter",
		"Bytes of the packets that hit a rule.");
	c.bytes = true;
	vsw_switch_rules_dump(d->sw, rule_sample, &c);
}

void
vswd_metrics_format(struct vswd *d, struct vsw_ctl_reply *r)
{
	family(r, "vsw_build_info", "gauge", "vswd's version (always 1).");
	vsw_ctl_reply_printf(r, "vsw_build_info{version=\"%s\"} 1\n",
		VSWD_VERSION);
	family(r, "vsw_pmds", "gauge", "PMD threads.");
	vsw_ctl_reply_printf(r, "vsw_pmds %u\n", d->n_pmds);
	if (d->sw == NULL)
		return;
	metrics_ports(d, r);
	metrics_pmds(d, r);
	metrics_rules(d, r);
	vswd_metrics_overlay(d, r);
	family(r, "vsw_validator_mismatches_total", "counter",
		"Disagreements between implementations seen by the copy and "
		"classifier validators (0 when they are off).");
	vsw_ctl_reply_printf(r, "vsw_validator_mismatches_total"
		"{validator=\"copy\"} %" PRIu64 "\n",
		vsw_copy_validator_mismatches());
	vsw_ctl_reply_printf(r, "vsw_validator_mismatches_total"
		"{validator=\"classifier\"} %" PRIu64 "\n",
		vsw_dpcls_validator_mismatches());
}

/* metrics: the page the HTTP endpoint serves (--json: as one string). */
void
vswd_cmd_metrics(void *ctx, int argc, char **argv, struct vsw_ctl_reply *r)
{
	struct vsw_ctl_reply text;

	(void)argc;
	(void)argv;
	if (!r->json) {
		vswd_metrics_format(ctx, r);
		return;
	}
	vsw_ctl_reply_init(&text, false);
	vswd_metrics_format(ctx, &text);
	if (text.oom) {
		vsw_ctl_reply_error(r, "metrics: out of memory");
	} else {
		vsw_ctl_reply_printf(r, "{\"content_type\": \"%s\", "
			"\"metrics\": ", VSWD_METRICS_CONTENT_TYPE);
		vsw_ctl_reply_json_str(r, text.buf != NULL ? text.buf : "");
		vsw_ctl_reply_printf(r, "}\n");
	}
	vsw_ctl_reply_free(&text);
}

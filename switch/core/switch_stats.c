/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Switch statistics: per-PMD counters (pmd-stats-show / pmd-perf-show data)
 * and per-port sums. Per-rule counts are read by vsw_switch_rules_dump.
 *
 * Any thread reads; each counter has one writer (its PMD), so reads are
 * relaxed atomic loads and "clear" stores a baseline instead of writing to
 * PMD memory. Structured data only: text formatting is the daemon's job.
 */
#include <errno.h>
#include <string.h>

#include "switch_priv.h"

static const char *const counter_names[] = {
#define VSW_PMD_COUNTER_NAME(e, s) [VSW_PMD_##e] = s,
	VSW_PMD_COUNTERS(VSW_PMD_COUNTER_NAME)
#undef VSW_PMD_COUNTER_NAME
};

_Static_assert(
	sizeof(counter_names) / sizeof(counter_names[0]) == VSW_PMD_N_COUNTERS,
	"one name per counter");

const char *
vsw_pmd_counter_name(enum vsw_pmd_counter c)
{
	return (unsigned)c < VSW_PMD_N_COUNTERS ? counter_names[c] : NULL;
}

static void
raw_counters(const struct vsw_pmd *pmd, uint64_t *c)
{
	unsigned i;

	for (i = 0; i < VSW_PMD_N_COUNTERS; i++)
		c[i] = ctr_read(&pmd->ctr[i]);
	/* The classifier counts subtable visits into the PMD's own struct. */
	c[VSW_PMD_SUBTABLE_LOOKUPS] =
		ctr_read(&pmd->cls_stats.subtable_lookups);
	/* The watchdog thread counts the signals it sent this PMD in its
	 * slot (vsw/watchdog.h). */
	c[VSW_PMD_WATCHDOG_SIGNALS] = ctr_read(&pmd->wd.signals);
}

static double
ratio(uint64_t a, uint64_t b)
{
	return b == 0 ? 0.0 : (double)a / (double)b;
}

int
vsw_switch_pmd_stats(
	struct vsw_switch *sw, unsigned idx, struct vsw_pmd_stats *out)
{
	const struct vsw_pmd *pmd = vsw_switch_pmd(sw, idx);
	uint64_t *c = out->c;
	unsigned i;

	if (pmd == NULL)
		return -ENOENT;
	memset(out, 0, sizeof(*out));
	raw_counters(pmd, c);
	for (i = 0; i < VSW_PMD_N_COUNTERS; i++)
		c[i] -= pmd->ctr_base[i];
	out->avg_subtable_lookups_per_hit =
		ratio(c[VSW_PMD_SUBTABLE_LOOKUPS], c[VSW_PMD_CLS_HIT]);
	out->avg_packets_per_batch =
		ratio(c[VSW_PMD_BATCH_PKTS], c[VSW_PMD_BATCHES]);
	out->cycles_per_packet = ratio(c[VSW_PMD_CYCLES_BUSY], c[VSW_PMD_RX]);
	out->busy_ratio = ratio(c[VSW_PMD_CYCLES_BUSY],
		c[VSW_PMD_CYCLES_BUSY] + c[VSW_PMD_CYCLES_IDLE]);
	return 0;
}

void
vsw_switch_pmd_stats_clear(struct vsw_switch *sw, int idx)
{
	unsigned i;

	for (i = 0; i < sw->cfg.n_pmds; i++)
		if (idx < 0 || (unsigned)idx == i)
			raw_counters(sw->pmd[i], sw->pmd[i]->ctr_base);
}

int
vsw_switch_port_stats(
	struct vsw_switch *sw, uint16_t port_no, struct vsw_port_stats *out)
{
	unsigned i;

	if (port_no >= VSW_SWITCH_MAX_PORTS || sw->ports->port[port_no] == NULL)
		return -ENOENT;
	memset(out, 0, sizeof(*out));
	for (i = 0; i < sw->cfg.n_pmds; i++) {
		const struct vsw_port_ctr *pc = &sw->pmd[i]->port_ctr[port_no];

		out->rx += ctr_read(&pc->rx);
		out->tx += ctr_read(&pc->tx);
		out->tx_drops += ctr_read(&pc->tx_drops);
		out->sw_gso_packets += ctr_read(&pc->sw_gso);
		out->sw_gso_segments += ctr_read(&pc->sw_gso_segs);
		out->sw_csum_packets += ctr_read(&pc->sw_csum);
		out->sw_offload_drops += ctr_read(&pc->sw_ol_drops);
	}
	out->rx -= sw->port_base[port_no].rx;
	out->tx -= sw->port_base[port_no].tx;
	out->tx_drops -= sw->port_base[port_no].tx_drops;
	out->sw_gso_packets -= sw->port_base[port_no].sw_gso;
	out->sw_gso_segments -= sw->port_base[port_no].sw_gso_segs;
	out->sw_csum_packets -= sw->port_base[port_no].sw_csum;
	out->sw_offload_drops -= sw->port_base[port_no].sw_ol_drops;
	return 0;
}

void
port_stats_rebase(struct vsw_switch *sw, uint16_t port_no)
{
	struct vsw_port_ctr *b = &sw->port_base[port_no];
	unsigned i;

	memset(b, 0, sizeof(*b));
	for (i = 0; i < sw->cfg.n_pmds; i++) {
		const struct vsw_port_ctr *pc = &sw->pmd[i]->port_ctr[port_no];

		b->rx += ctr_read(&pc->rx);
		b->tx += ctr_read(&pc->tx);
		b->tx_drops += ctr_read(&pc->tx_drops);
		b->sw_gso += ctr_read(&pc->sw_gso);
		b->sw_gso_segs += ctr_read(&pc->sw_gso_segs);
		b->sw_csum += ctr_read(&pc->sw_csum);
		b->sw_ol_drops += ctr_read(&pc->sw_ol_drops);
	}
}

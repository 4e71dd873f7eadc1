/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PMD and implementation commands: pmd-stats-show, pmd-stats-clear,
 * pmd-perf-show, pmd-rxq-show, pmd-rxq-rebalance, pmd-sleep-set,
 * copy-impl-show/set, datapath-impl-show/set, lookup-impl-show/set, emc-set. Control thread; reads PMD
 * counters (one writer each) and calls the modules' typed setters.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vsw/copy.h>
#include <vsw/dpcls.h>
#include <vsw/switch.h>
#include <vsw/virtq.h>

#include "vswd_priv.h"

/* Which PMDs a command is about: all, or argv[1] as an index. */
static int
pmd_range(struct vswd *d, int argc, char **argv, unsigned *lo, unsigned *hi,
	struct vsw_ctl_reply *r)
{
	char *end;
	unsigned long v;

	*lo = 0;
	*hi = d->n_pmds;
	if (argc < 2)
		return 0;
	v = strtoul(argv[1], &end, 10);
	if (*argv[1] == '\0' || *end != '\0' || v >= d->n_pmds) {
		vsw_ctl_reply_error(r, "no PMD '%.20s' (0..%u)", argv[1],
			d->n_pmds - 1);
		return -1;
	}
	*lo = (unsigned)v;
	*hi = (unsigned)v + 1;
	return 0;
}

static void
stats_text(struct vswd *d, unsigned i, const struct vsw_pmd_stats *s,
	struct vsw_ctl_reply *r)
{
	const uint64_t *c = s->c;
	uint64_t cyc = c[VSW_PMD_CYCLES_BUSY] + c[VSW_PMD_CYCLES_IDLE];

	vsw_ctl_reply_printf(r, "pmd %u (lcore %u):\n", i, d->pmd_lcores[i]);
	vsw_ctl_reply_printf(r, "  packets received: %" PRIu64 "\n",
		c[VSW_PMD_RX]);
	vsw_ctl_reply_printf(r, "  emc hits: %" PRIu64 "\n",
		c[VSW_PMD_EMC_HIT]);
	vsw_ctl_reply_printf(r, "  classifier hits: %" PRIu64 "\n",
		c[VSW_PMD_CLS_HIT]);
	vsw_ctl_reply_printf(r, "  port pair hits: %" PRIu64 "\n",
		c[VSW_PMD_PAIR_HIT]);
	vsw_ctl_reply_printf(r, "  avg. subtable lookups per classifier hit: "
		"%.2f\n", s->avg_subtable_lookups_per_hit);
	vsw_ctl_reply_printf(r, "  miss (no rule): %" PRIu64 "\n",
		c[VSW_PMD_DROP_NO_RULE]);
	vsw_ctl_reply_printf(r, "  packets sent: %" PRIu64 "\n",
		c[VSW_PMD_TX]);
	for (int k = VSW_PMD_DROP_FIRST; k <= VSW_PMD_DROP_LAST; k++)
		vsw_ctl_reply_printf(r, "  dropped, %s: %" PRIu64 "\n",
			vsw_pmd_counter_name((enum vsw_pmd_counter)k), c[k]);
	vsw_ctl_reply_printf(r, "  avg. packets per output batch: %.2f\n",
		s->avg_packets_per_batch);
	vsw_ctl_reply_printf(r, "  sends on a shared tx queue: %" PRIu64
		" (lock contended: %" PRIu64 ")\n", c[VSW_PMD_TXQ_LOCKED],
		c[VSW_PMD_TXQ_CONTENDED]);
	vsw_ctl_reply_printf(r, "  idle cycles: %" PRIu64 " (%.2f%%)\n",
		c[VSW_PMD_CYCLES_IDLE],
		cyc ? 100.0 * (double)c[VSW_PMD_CYCLES_IDLE] / (double)cyc : 0);
	vsw_ctl_reply_printf(r, "  processing cycles: %" PRIu64 " (%.2f%%)\n",
		c[VSW_PMD_CYCLES_BUSY],
		cyc ? 100.0 * (double)c[VSW_PMD_CYCLES_BUSY] / (double)cyc : 0);
	vsw_ctl_reply_printf(r, "  avg. processing cycles per packet: %.1f\n",
		s->cycles_per_packet);
	vsw_ctl_reply_printf(r,
		"  idle sleeps: %" PRIu64 " (%" PRIu64
		" cycles asleep; pmd-sleep-max %u us)\n",
		c[VSW_PMD_SLEEPS], c[VSW_PMD_CYCLES_SLEEP],
		vsw_switch_pmd_sleep_max(d->sw));
	vsw_ctl_reply_printf(r,
		"  watchdog signals (stuck in a guest-interrupt write): %" PRIu64
		"\n",
		c[VSW_PMD_WATCHDOG_SIGNALS]);
}

static void
stats_json(unsigned i, bool first, const struct vsw_pmd_stats *s,
	struct vsw_ctl_reply *r)
{
	vsw_ctl_reply_printf(r, "%s{\"pmd\": %u", first ? "" : ", ", i);
	for (int k = 0; k < VSW_PMD_N_COUNTERS; k++)
		vsw_ctl_reply_printf(r, ", \"%s\": %" PRIu64,
			vsw_pmd_counter_name((enum vsw_pmd_counter)k), s->c[k]);
	vsw_ctl_reply_printf(r, ", \"avg_subtable_lookups_per_hit\": %.3f, "
		"\"avg_packets_per_batch\": %.3f, \"cycles_per_packet\": %.1f, "
		"\"busy_ratio\": %.4f}", s->avg_subtable_lookups_per_hit,
		s->avg_packets_per_batch, s->cycles_per_packet, s->busy_ratio);
}

typedef void (*pmd_show_fn)(struct vswd *d, unsigned i, bool first,
	const struct vsw_pmd_stats *s, struct vsw_ctl_reply *r);

/* Show every PMD in the command's range, as a JSON list or text. */
static void
show_pmds(struct vswd *d, int argc, char **argv, pmd_show_fn one,
	struct vsw_ctl_reply *r)
{
	unsigned lo, hi;

	if (pmd_range(d, argc, argv, &lo, &hi, r) < 0)
		return;
	if (r->json)
		vsw_ctl_reply_printf(r, "{\"pmds\": [");
	for (unsigned i = lo; i < hi; i++) {
		struct vsw_pmd_stats s;

		if (vsw_switch_pmd_stats(d->sw, i, &s) == 0)
			one(d, i, i == lo, &s, r);
	}
	if (r->json)
		vsw_ctl_reply_printf(r, "]}\n");
}

static void
stats_one(struct vswd *d, unsigned i, bool first,
	const struct vsw_pmd_stats *s, struct vsw_ctl_reply *r)
{
	if (r->json)
		stats_json(i, first, s, r);
	else
		stats_text(d, i, s, r);
}

void
vswd_cmd_pmd_stats_show(void *ctx, int argc, char **argv,
	struct vsw_ctl_reply *r)
{
	show_pmds(ctx, argc, argv, stats_one, r);
}

void
vswd_cmd_pmd_stats_clear(void *ctx, int argc, char **argv,
	struct vsw_ctl_reply *r)
{
	struct vswd *d = ctx;
	unsigned lo, hi;

	if (pmd_range(d, argc, argv, &lo, &hi, r) < 0)
		return;
	if (argc < 2)
		vsw_switch_pmd_stats_clear(d->sw, -1);
	else
		vsw_switch_pmd_stats_clear(d->sw, (int)lo);
	if (r->json)
		vsw_ctl_reply_printf(r, "{\"cleared\": true}\n");
	else
		vsw_ctl_reply_printf(r, "pmd stats cleared\n");
}

/* Share of all cycles (busy, idle polling, asleep) spent asleep. */
static double
sleep_pct(const uint64_t *c)
{
	uint64_t all = c[VSW_PMD_CYCLES_BUSY] + c[VSW_PMD_CYCLES_IDLE] +
		       c[VSW_PMD_CYCLES_SLEEP];

	return all ? 100.0 * (double)c[VSW_PMD_CYCLES_SLEEP] / (double)all
		   : 0.0;
}

static void
perf_one(struct vswd *d, unsigned i, bool first,
	const struct vsw_pmd_stats *s, struct vsw_ctl_reply *r)
{
	const uint64_t *c = s->c;
	uint64_t it = c[VSW_PMD_ITER_BUSY] + c[VSW_PMD_ITER_IDLE];
	double per_iter = c[VSW_PMD_ITER_BUSY] ? (double)c[VSW_PMD_RX] /
		(double)c[VSW_PMD_ITER_BUSY] : 0.0;

	if (r->json) {
		vsw_ctl_reply_printf(r,
			"%s{\"pmd\": %u, \"iterations\": %" PRIu64
			", \"busy_iterations\": %" PRIu64
			", \"cycles_per_packet\": %.1f, \"busy_ratio\": %.4f, "
			"\"packets_per_busy_iteration\": %.2f, \"sleeps\": "
			"%" PRIu64 ", \"sleep_cycles\": %" PRIu64
			", \"sleep_max_us\": %u}",
			first ? "" : ", ", i, it, c[VSW_PMD_ITER_BUSY],
			s->cycles_per_packet, s->busy_ratio, per_iter,
			c[VSW_PMD_SLEEPS], c[VSW_PMD_CYCLES_SLEEP],
			vsw_switch_pmd_sleep_max(d->sw));
		return;
	}
	vsw_ctl_reply_printf(r,
		"pmd %u (lcore %u):\n"
		"  iterations: %" PRIu64 " (busy %" PRIu64 ", idle %" PRIu64
		")\n"
		"  busy ratio: %.2f%%\n"
		"  packets per busy iteration: %.2f\n"
		"  busy cycles per packet: %.1f\n"
		"  idle sleeps: %" PRIu64 " (%.2f%% of cycles asleep; max %u"
		" us)\n",
		i, d->pmd_lcores[i], it, c[VSW_PMD_ITER_BUSY],
		c[VSW_PMD_ITER_IDLE], 100.0 * s->busy_ratio, per_iter,
		s->cycles_per_packet, c[VSW_PMD_SLEEPS], sleep_pct(c),
		vsw_switch_pmd_sleep_max(d->sw));
}

void
vswd_cmd_pmd_perf_show(void *ctx, int argc, char **argv,
	struct vsw_ctl_reply *r)
{
	show_pmds(ctx, argc, argv, perf_one, r);
}

void
vswd_cmd_pmd_rxq_show(void *ctx, int argc, char **argv,
	struct vsw_ctl_reply *r)
{
	struct vswd *d = ctx;
	bool first = true;

	(void)argc;
	(void)argv;
	if (r->json)
		vsw_ctl_reply_printf(r, "{\"rxqs\": [");
	for (struct vswd_port *p = d->ports; p != NULL; p = p->next) {
		for (uint16_t q = 0; q < p->queues; q++) {
			int pmd = vsw_switch_rxq_pmd(d->sw, p->port_no, q);
			uint64_t cyc = 0;

			vsw_switch_rxq_cycles(d->sw, p->port_no, q, &cyc);
			if (r->json) {
				vsw_ctl_reply_printf(
					r, "%s{\"port\": ", first ? "" : ", ");
				vsw_ctl_reply_json_str(r, p->name);
				vsw_ctl_reply_printf(r,
					", \"queue\": %u, "
					"\"pmd\": %d, \"cycles\": %" PRIu64 "}",
					q, pmd, cyc);
			} else {
				vsw_ctl_reply_printf(r,
					"port %-16s queue %2u "
					"pmd %d cycles %" PRIu64 "\n",
					p->name, q, pmd, cyc);
			}
			first = false;
		}
	}
	if (r->json)
		vsw_ctl_reply_printf(r, "]}\n");
}

/* pmd-rxq-rebalance [cycles|roundrobin] */
void
vswd_cmd_pmd_rxq_rebalance(
	void *ctx, int argc, char **argv, struct vsw_ctl_reply *r)
{
	struct vswd *d = ctx;
	enum vsw_rxq_assign how = VSW_RXQ_ASSIGN_CYCLES;
	int rc;

	if (argc == 2 && strcmp(argv[1], "roundrobin") == 0) {
		how = VSW_RXQ_ASSIGN_ROUNDROBIN;
	} else if (argc == 2 && strcmp(argv[1], "cycles") != 0) {
		vsw_ctl_reply_error(r, "pmd-rxq-rebalance takes cycles or "
				       "roundrobin");
		return;
	}
	rc = vsw_switch_rxq_rebalance(d->sw, how);
	if (rc < 0) {
		vsw_ctl_reply_error(r, "rebalance failed: %s", strerror(-rc));
		return;
	}
	vsw_ctl_reply_printf(r,
		r->json ? "{\"assign\": \"%s\"}\n"
			: "rx queues reassigned (%s)\n",
		how == VSW_RXQ_ASSIGN_CYCLES ? "cycles" : "roundrobin");
}

/* pmd-sleep-set MICROSECONDS: idle back-off limit, 0 = off. */
void
vswd_cmd_pmd_sleep_set(
	void *ctx, int argc, char **argv, struct vsw_ctl_reply *r)
{
	struct vswd *d = ctx;
	unsigned long v;
	char *end;

	(void)argc;
	v = strtoul(argv[1], &end, 10);
	if (*argv[1] < '0' || *argv[1] > '9' || *end != '\0' ||
		v > VSW_SWITCH_SLEEP_MAX_US) {
		vsw_ctl_reply_error(r,
			"pmd-sleep-set takes microseconds "
			"0..%u",
			VSW_SWITCH_SLEEP_MAX_US);
		return;
	}
	vsw_switch_set_pmd_sleep_max(d->sw, (uint32_t)v);
	vsw_ctl_reply_printf(r,
		r->json ? "{\"pmd_sleep_max_us\": %lu}\n"
			: "pmd-sleep-max: %lu us (0 = off)\n",
		v);
}

/*
 * The implementations of one module; validator: "on"/"off" for a module
 * whose validator is a switch (copy), NULL where it is an implementation
 * (lookup: autovalidator). The mismatch count is what tests assert is 0.
 */
static void
impl_list(struct vsw_ctl_reply *r, const char *current, unsigned n,
	const char *(*name_of)(unsigned, bool *), const char *validator,
	uint64_t mismatches, const char *effective)
{
	if (r->json) {
		vsw_ctl_reply_printf(r, "{\"active\": ");
		vsw_ctl_reply_json_str(r, current);
		if (effective != NULL) {
			vsw_ctl_reply_printf(r, ", \"effective\": ");
			vsw_ctl_reply_json_str(r, effective);
		}
		vsw_ctl_reply_printf(r, ", \"implementations\": [");
	} else if (effective != NULL) {
		vsw_ctl_reply_printf(r, "bursts run: %s\n", effective);
	}
	for (unsigned i = 0; i < n; i++) {
		bool avail = true;
		const char *name = name_of(i, &avail);

		if (r->json) {
			vsw_ctl_reply_printf(r, "%s{\"name\": ", i ? ", " : "");
			vsw_ctl_reply_json_str(r, name);
			vsw_ctl_reply_printf(r, ", \"available\": %s}",
				avail ? "true" : "false");
		} else {
			vsw_ctl_reply_printf(r, "  %s %-12s%s\n",
				strcmp(name, current) == 0 ? "*" : " ", name,
				avail ? "" : " (not supported by this CPU)");
		}
	}
	if (r->json) {
		vsw_ctl_reply_printf(r, "]");
		if (validator != NULL)
			vsw_ctl_reply_printf(r, ", \"validator\": %s",
				strcmp(validator, "on") == 0 ? "true" : "false");
		vsw_ctl_reply_printf(r, ", \"validator_mismatches\": %" PRIu64
			"}\n", mismatches);
	} else {
		vsw_ctl_reply_printf(r, "validator%s%s: %" PRIu64
			" mismatches\n", validator != NULL ? " " : "",
			validator != NULL ? validator : "", mismatches);
	}
}

static const char *
copy_name_of(unsigned i, bool *avail)
{
	const char *name = "?";

	vsw_copy_impl_info(i, &name, avail);
	return name;
}

void
vswd_cmd_copy_impl_show(void *ctx, int argc, char **argv,
	struct vsw_ctl_reply *r)
{
	(void)ctx;
	(void)argc;
	(void)argv;
	impl_list(r, vsw_copy_impl_get(), vsw_copy_impl_count(), copy_name_of,
		vsw_copy_validator_get() ? "on" : "off",
		vsw_copy_validator_mismatches(), NULL);
}

/* The reply of an *-impl-set command: rc from the module's setter. */
static void
impl_set_reply(struct vsw_ctl_reply *r, int rc, const char *what,
	const char *asked, const char *active)
{
	if (rc < 0) {
		vsw_ctl_reply_error(r, "%s %s implementation '%.32s'",
			rc == -ENOTSUP ? "this CPU cannot run" : "no", what,
			asked);
		return;
	}
	if (r->json)
		vsw_ctl_reply_printf(r, "{\"active\": \"%s\"}\n", active);
	else
		vsw_ctl_reply_printf(r, "%s implementation: %s\n", what, active);
}

void
vswd_cmd_copy_impl_set(void *ctx, int argc, char **argv,
	struct vsw_ctl_reply *r)
{
	int rc = vsw_copy_impl_set(argv[1]);

	(void)ctx;
	(void)argc;
	impl_set_reply(r, rc, "copy", argv[1], vsw_copy_impl_get());
}

static const char *
datapath_name_of(unsigned i, bool *avail)
{
	const char *name = "?";

	vsw_virtq_datapath_impl_info(i, &name, avail);
	return name;
}

/* The virtq data path per ISA; while the copy validator is on (or another
 * copy implementation is selected) bursts run the baseline build. */
void
vswd_cmd_datapath_impl_show(void *ctx, int argc, char **argv,
	struct vsw_ctl_reply *r)
{
	(void)ctx;
	(void)argc;
	(void)argv;
	impl_list(r, vsw_virtq_datapath_impl_get(),
		vsw_virtq_datapath_impl_count(), datapath_name_of,
		vsw_copy_validator_get() ? "on" : "off",
		vsw_copy_validator_mismatches(),
		vsw_virtq_datapath_impl_effective());
}

void
vswd_cmd_datapath_impl_set(void *ctx, int argc, char **argv,
	struct vsw_ctl_reply *r)
{
	int rc = vsw_virtq_datapath_impl_set(argv[1]);

	(void)ctx;
	(void)argc;
	impl_set_reply(r, rc, "datapath", argv[1],
		vsw_virtq_datapath_impl_get());
}

static const char *lookup_names[16];

static const char *
lookup_name_of(unsigned i, bool *avail)
{
	*avail = true;
	return lookup_names[i];
}

void
vswd_cmd_lookup_impl_show(void *ctx, int argc, char **argv,
	struct vsw_ctl_reply *r)
{
	unsigned n = vsw_dpcls_impl_list(lookup_names, 16);

	(void)ctx;
	(void)argc;
	(void)argv;
	impl_list(r, vsw_dpcls_impl_get(), n, lookup_name_of, NULL,
		vsw_dpcls_validator_mismatches(), NULL);
}

void
vswd_cmd_lookup_impl_set(void *ctx, int argc, char **argv,
	struct vsw_ctl_reply *r)
{
	int rc = vsw_dpcls_impl_set(argv[1]);

	(void)ctx;
	(void)argc;
	impl_set_reply(r, rc, "lookup", argv[1], vsw_dpcls_impl_get());
}

/* emc-set on|off|INV_PROB: insertion probability 1/INV_PROB (0 = off). */
void
vswd_cmd_emc_set(void *ctx, int argc, char **argv, struct vsw_ctl_reply *r)
{
	struct vswd *d = ctx;
	unsigned long v;
	char *end;

	(void)argc;
	if (strcmp(argv[1], "off") == 0) {
		v = 0;
	} else if (strcmp(argv[1], "on") == 0) {
		v = 100;
	} else {
		v = strtoul(argv[1], &end, 10);
		if (*argv[1] == '\0' || *end != '\0' || v > 1000000) {
			vsw_ctl_reply_error(r, "emc-set takes on, off or an "
				"inverse probability 0..1000000");
			return;
		}
	}
	vsw_switch_set_emc_insert_inv_prob(d->sw, (uint32_t)v);
	vsw_ctl_reply_printf(r, r->json ? "{\"emc_insert_inv_prob\": %lu}\n" :
		"emc insertion probability: 1/%lu (0 = off)\n", v);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The PMD poll loop: rx burst -> flow keys -> EMC -> classifier -> actions
 * on runs of packets that share a rule -> output batches, flushed once per
 * iteration; then a quiescent state. An in_port with a port-pair rule
 * (port_pair.c) goes from rx burst straight to that rule's actions.
 *
 * Runs on one PMD thread (a DPDK lcore, or a test thread). Reads the port
 * and rule tables under liburcu-qsbr and holds them for one iteration; owns
 * its EMC, batches and counters; allocates nothing and takes no lock but a
 * shared tx queue's (output_batch.c). When
 * the rule table version changes it flushes its EMC before the next lookup,
 * so no EMC entry can point at a rule freed after the grace period.
 * Trusts ports' rx_burst for the count it returns (clamped to the burst).
 */
#include <errno.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_mbuf.h>
#include <urcu-qsbr.h>

#include "l2domain_priv.h"

_Static_assert(VSW_SWITCH_BURST <= 32 && VSW_SWITCH_BURST == VSW_DPCLS_BURST,
	"one 32-bit map covers a whole burst");

static inline const struct vsw_rule_table *
rules_enter(struct vsw_pmd *pmd)
{
	const struct vsw_rule_table *rt = rcu_dereference(pmd->sw->rules);

	if (unlikely(rt->gen != pmd->rules_gen)) {
		if (rt->version != pmd->rules_version && pmd->emc != NULL)
			vsw_emc_flush(pmd->emc);
		pmd->rules_version = rt->version;
		pmd->rules_gen = rt->gen;
		/* Positions changed: count afresh; gen last, so the control
		 * thread never sums old counts under the new generation. */
		memset(pmd->subtable_hits, 0, sizeof(pmd->subtable_hits));
		__atomic_store_n(&pmd->hits_gen, rt->gen, __ATOMIC_RELEASE);
	}
	return rt;
}

/* Classify keys[0..n): res[i] = rule or NULL. */
static void
classify(struct vsw_pmd *pmd, const struct vsw_rule_table *rt,
	const struct vsw_flow_key *keys, unsigned n, void **res)
{
	uint32_t map = n == 32 ? UINT32_MAX : (1u << n) - 1;
	uint32_t hit = 0, miss, found = 0, none, m;

	if (pmd->emc != NULL)
		hit = vsw_emc_lookup(pmd->emc, keys, map, res);
	miss = map & ~hit;
	if (miss != 0) {
		found = vsw_dpcls_lookup(
			rt->cls, keys, miss, res, &pmd->cls_stats);
		for (m = found; pmd->emc != NULL && m != 0; m &= m - 1) {
			unsigned i = (unsigned)__builtin_ctz(m);

			vsw_emc_insert(pmd->emc, &keys[i], res[i]);
		}
		for (none = miss & ~found; none != 0; none &= none - 1)
			res[__builtin_ctz(none)] = NULL;
	}
	ctr_add(
		&pmd->ctr[VSW_PMD_EMC_HIT], (unsigned)__builtin_popcount(hit));
	ctr_add(&pmd->ctr[VSW_PMD_CLS_HIT],
		(unsigned)__builtin_popcount(found));
}

void
vsw_pmd_process_rxq(struct vsw_pmd *pmd, uint16_t in_port, uint16_t in_queue,
	struct rte_mbuf **pkts, unsigned n)
{
	struct vsw_flow_key keys[VSW_SWITCH_BURST];
	void *res[VSW_SWITCH_BURST];
	const struct vsw_rule_table *rt;
	const struct vsw_sw_rule *pair;
	const struct ov_table *ovt;

	if (unlikely(n == 0))
		return;
	if (pmd->pt == NULL)
		pmd->pt = rcu_dereference(pmd->sw->ports);
	rt = rules_enter(pmd);
	ctr_add(&pmd->ctr[VSW_PMD_RX], n);
	ctr_add(&pmd->port_ctr[in_port].rx, n);
	out_ensure_room(pmd, n);
	pmd->in_queue = in_queue; /* picks each destination's tx queue */
	/* Domain ports and the underlay's VXLAN/ARP bypass the rules. */
	ovt = rcu_dereference(pmd->sw->ov->table);
	if (unlikely(ovt != NULL)) {
		n = overlay_ingress(pmd, ovt, in_port, pkts, n);
		if (n == 0)
			return;
	}
	pair = rt->pair[in_port];
	if (pair != NULL) { /* every packet from in_port hits this rule */
		ctr_add(&pmd->ctr[VSW_PMD_PAIR_HIT], n);
		actions_rule_burst(pmd, pair, in_port, pkts, n);
		return;
	}
	vsw_flow_extract_burst(pkts, n, in_port, keys);
	classify(pmd, rt, keys, n, res);
	actions_burst(pmd, in_port, pkts, keys, res, n);
}

void
vsw_pmd_process_burst(struct vsw_pmd *pmd, uint16_t in_port,
	struct rte_mbuf **pkts, unsigned n)
{
	vsw_pmd_process_rxq(pmd, in_port, 0, pkts, n);
}

void
vsw_pmd_flush(struct vsw_pmd *pmd)
{
	if (pmd->n_batches > 0) {
		if (pmd->pt == NULL)
			pmd->pt = rcu_dereference(pmd->sw->ports);
		out_flush_all(pmd);
	}
	pmd->pt = NULL;
}

/* Busy rx queues of one iteration, for their share of the flush. */
struct rxq_busy {
	const struct vsw_rxq_ref *r;
	unsigned n;
};

static inline void
rxq_charge(struct vsw_pmd *pmd, const struct vsw_rxq_ref *r, uint64_t c)
{
	if (likely(r->queue < VSW_SWITCH_RXQ_MEASURED))
		ctr_add(&pmd->rxq_cycles[r->port][r->queue], c);
}

/* The iteration's tail (empty polls after the last busy queue, the
 * overlay's injected packets and their flush) goes to the busy queues by
 * their packets; each queue's own flush is already charged to it. */
static __rte_noinline void
rxq_charge_flush(struct vsw_pmd *pmd, const struct rxq_busy *b, unsigned n_busy,
	unsigned total, uint64_t c)
{
	for (unsigned i = 0; i < n_busy; i++)
		rxq_charge(pmd, b[i].r, c * b[i].n / total);
}

unsigned
vsw_pmd_poll_once(struct vsw_pmd *pmd)
{
	struct rte_mbuf *pkts[VSW_SWITCH_BURST];
	struct rxq_busy busy[VSW_SWITCH_BURST];
	const struct vsw_port_table *pt;
	uint64_t t0 = rte_rdtsc(), t = t0, now, dt;
	unsigned total = 0, n_busy = 0;
	uint32_t q, want;

	pt = rcu_dereference(pmd->sw->ports);
	pmd->pt = pt;
	want = __atomic_load_n(&pmd->sw->emc_inv_prob, __ATOMIC_RELAXED);
	if (unlikely(want != pmd->emc_inv_prob)) { /* the EMC is ours alone */
		pmd->emc_inv_prob = want;
		if (pmd->emc != NULL)
			vsw_emc_set_insert_inv_prob(pmd->emc, want);
	}
	for (q = pt->rxq_first[pmd->idx]; q < pt->rxq_first[pmd->idx + 1];
		q++) {
		const struct vsw_rxq_ref *r = &pt->rxqs[q];
		const struct vsw_port *p = pt->port[r->port];
		unsigned n = p->ops->rx_burst(
			p->ctx, r->queue, pkts, VSW_SWITCH_BURST);

		if (unlikely(n > VSW_SWITCH_BURST))
			n = VSW_SWITCH_BURST; /* a broken port: ignore excess */
		if (n == 0)
			continue;
		vsw_pmd_process_rxq(pmd, r->port, r->queue, pkts, n);
		/* Each queue's output leaves before the next queue is polled
		 * (OVS with tx-flush-interval 0): a 9000 B burst's mbufs are
		 * copied out while they are still in cache, not after the
		 * next queue's burst has gone through L2 (-18 % at 9000 B). */
		if (pmd->n_batches > 0)
			out_flush_all(pmd);
		total += n;
		/* One TSC read per busy queue, its flush included; empty
		 * polls before it are charged to it (a few dozen cycles). */
		now = rte_rdtsc();
		rxq_charge(pmd, r, now - t);
		t = now;
		if (n_busy < VSW_SWITCH_BURST)
			busy[n_busy++] = (struct rxq_busy){r, n};
	}
	if (unlikely(pmd->idx == 0)) { /* the overlay's ARP requests */
		const struct ov_table *ovt = rcu_dereference(pmd->sw->ov->table);

		if (ovt != NULL && ovt->on)
			overlay_inject(pmd, ovt);
	}
	vsw_pmd_flush(pmd);
	now = rte_rdtsc();
	dt = now - t0;
	if (total > 0) {
		if (n_busy == 1)
			rxq_charge(pmd, busy[0].r, now - t);
		else
			rxq_charge_flush(pmd, busy, n_busy, total, now - t);
		ctr_add(&pmd->ctr[VSW_PMD_ITER_BUSY], 1);
		ctr_add(&pmd->ctr[VSW_PMD_CYCLES_BUSY], dt);
	} else {
		ctr_add(&pmd->ctr[VSW_PMD_ITER_IDLE], 1);
		ctr_add(&pmd->ctr[VSW_PMD_CYCLES_IDLE], dt);
	}
	return total;
}

/*
 * Nothing came in: sleep one back-off step (1, 2, 4 ... us up to max_us).
 * RCU-offline while asleep, so the control thread's grace periods do not
 * wait for us; online again before the next snapshot.
 */
static __rte_noinline void
pmd_idle_sleep(struct vsw_pmd *pmd, uint32_t max_us)
{
	uint32_t us = pmd->sleep_us == 0 ? 1 : 2 * pmd->sleep_us;
	struct timespec ts;
	uint64_t t0;

	if (us > max_us)
		us = max_us;
	pmd->sleep_us = us;
	ts.tv_sec = us / 1000000;
	ts.tv_nsec = (long)(us % 1000000) * 1000;
	rcu_thread_offline();
	t0 = rte_rdtsc();
	nanosleep(&ts, NULL);
	ctr_add(&pmd->ctr[VSW_PMD_SLEEPS], 1);
	ctr_add(&pmd->ctr[VSW_PMD_CYCLES_SLEEP], rte_rdtsc() - t0);
	rcu_thread_online();
}

int
vsw_pmd_main(void *arg)
{
	struct vsw_pmd *pmd = arg;

	/* The default 50 us timer slack would swamp a 1 us back-off step. */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	vsw_watchdog_arm(&pmd->wd);
	if (pmd->sw->cfg.pmd_thread_init != NULL)
		pmd->sw->cfg.pmd_thread_init(&pmd->wd);
	rcu_register_thread();
	while (!__atomic_load_n(&pmd->stop, __ATOMIC_ACQUIRE)) {
		uint32_t max_us;

		if (vsw_pmd_poll_once(pmd) != 0) {
			pmd->sleep_us = 0;
		} else {
			max_us = __atomic_load_n(
				&pmd->sw->pmd_sleep_max_us, __ATOMIC_RELAXED);
			if (unlikely(max_us != 0))
				pmd_idle_sleep(pmd, max_us);
		}
		rcu_quiescent_state();
	}
	rcu_unregister_thread();
	return 0;
}

int
vsw_switch_set_pmd_sleep_max(struct vsw_switch *sw, uint32_t max_us)
{
	if (max_us > VSW_SWITCH_SLEEP_MAX_US)
		return -EINVAL;
	__atomic_store_n(&sw->pmd_sleep_max_us, max_us, __ATOMIC_RELAXED);
	return 0;
}

uint32_t
vsw_switch_pmd_sleep_max(const struct vsw_switch *sw)
{
	return __atomic_load_n(&sw->pmd_sleep_max_us, __ATOMIC_RELAXED);
}

/* One watchdog for all PMDs (vsw/watchdog.h), checking every 1 ms. */
static int
watchdog_start(struct vsw_switch *sw)
{
	struct vsw_watchdog_slot *slots[VSW_SWITCH_MAX_PMDS];
	unsigned i;

	if (sw->watchdog != NULL || sw->cfg.watchdog_bound_us == 0)
		return 0;
	for (i = 0; i < sw->cfg.n_pmds; i++)
		slots[i] = &sw->pmd[i]->wd;
	sw->watchdog = vsw_watchdog_start(
		slots, sw->cfg.n_pmds, sw->cfg.watchdog_bound_us, 1000);
	return sw->watchdog != NULL ? 0 : -errno;
}

int
vsw_switch_pmds_start(struct vsw_switch *sw)
{
	unsigned i;
	int rc;

	rc = watchdog_start(sw);
	if (rc != 0)
		return rc;
	for (i = 0; i < sw->cfg.n_pmds; i++) {
		struct vsw_pmd *pmd = sw->pmd[i];

		if (pmd->launched)
			continue;
		__atomic_store_n(&pmd->stop, false, __ATOMIC_RELEASE);
		rc = rte_eal_remote_launch(vsw_pmd_main, pmd, pmd->lcore);
		if (rc != 0) {
			vsw_switch_pmds_stop(sw);
			return rc < 0 ? rc : -EBUSY;
		}
		pmd->launched = true;
	}
	return 0;
}

void
vsw_switch_pmds_stop(struct vsw_switch *sw)
{
	unsigned i;

	for (i = 0; i < sw->cfg.n_pmds; i++)
		__atomic_store_n(&sw->pmd[i]->stop, true, __ATOMIC_RELEASE);
	for (i = 0; i < sw->cfg.n_pmds; i++) {
		if (!sw->pmd[i]->launched)
			continue;
		rte_eal_wait_lcore(sw->pmd[i]->lcore);
		sw->pmd[i]->launched = false;
	}
	/* last: it may be what gets a stuck PMD out */
	vsw_watchdog_stop(sw->watchdog);
	sw->watchdog = NULL;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The port table as the switch sees it: ports (name, number, ops), the
 * assignment of their rx queues to PMDs (round-robin over ports in number
 * order, then queues) and of their tx queues (owned or shared, vsw/port.h).
 *
 * The control thread builds a whole new table on every change, publishes it
 * with rcu_assign_pointer and frees the old one (and a removed port) after
 * synchronize_rcu(), so PMDs read a consistent, immutable table without
 * locks. Trusts the caller's ops; checks names and queue counts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <urcu-qsbr.h>

#include "l2domain_priv.h"

/* The PMD of rx queue (p, q): a rebalance's pin, else the next in turn. */
static unsigned
rxq_pmd(const struct vsw_switch *sw, unsigned p, unsigned q, unsigned *k)
{
	unsigned n_pmds = sw->cfg.n_pmds;

	if (q < VSW_SWITCH_RXQ_MEASURED && sw->rxq_pin[p][q] < n_pmds)
		return sw->rxq_pin[p][q];
	return (*k)++ % n_pmds;
}

static struct vsw_port_table *
table_build(const struct vsw_switch *sw, struct vsw_port *const *ports)
{
	unsigned n_pmds = sw->cfg.n_pmds, total = 0, k = 0, p, q, i;
	uint32_t count[VSW_SWITCH_MAX_PMDS] = {0};
	struct vsw_port_table *t;

	for (p = 0; p < VSW_SWITCH_MAX_PORTS; p++)
		if (ports[p] != NULL)
			total += ports[p]->n_rxq;
	t = calloc(1, sizeof(*t) + total * sizeof(t->rxqs[0]));
	if (t == NULL)
		return NULL;
	/* Pass 1: how many queues each PMD gets; pass 2: place them. */
	for (p = 0; p < VSW_SWITCH_MAX_PORTS; p++) {
		if (ports[p] == NULL)
			continue;
		t->port[p] = ports[p];
		t->list[t->n_ports++] = (uint16_t)p;
		for (q = 0; q < ports[p]->n_rxq; q++)
			count[rxq_pmd(sw, p, q, &k)]++;
	}
	for (i = 0; i < n_pmds; i++)
		t->rxq_first[i + 1] = t->rxq_first[i] + count[i];
	for (i = n_pmds; i < VSW_SWITCH_MAX_PMDS; i++)
		t->rxq_first[i + 1] = t->rxq_first[i];
	memset(count, 0, sizeof(count));
	k = 0;
	for (i = 0; i < t->n_ports; i++) {
		p = t->list[i];
		for (q = 0; q < ports[p]->n_rxq; q++) {
			unsigned pmd = rxq_pmd(sw, p, q, &k);
			struct vsw_rxq_ref *r =
				&t->rxqs[t->rxq_first[pmd] + count[pmd]++];

			r->port = (uint16_t)p;
			r->queue = (uint16_t)q;
		}
	}
	return t;
}

/* Publish a table built from ports[]; the old one is freed after a grace
 * period. Returns 0 or -ENOMEM (nothing changed). */
static int
publish(struct vsw_switch *sw, struct vsw_port *const *ports)
{
	struct vsw_port_table *old = sw->ports, *t = table_build(sw, ports);

	if (t == NULL)
		return -ENOMEM;
	rcu_assign_pointer(sw->ports, t);
	synchronize_rcu();
	free(old);
	return 0;
}

void
port_txq_plan(struct vsw_port *p, unsigned n_pmds, bool lock_all)
{
	unsigned i;

	for (i = 0; i < n_pmds; i++) {
		struct vsw_port_txq *t = &p->txq[i];

		if (p->n_txq >= n_pmds) {
			/* Owned: i, i + n_pmds, ...; no other PMD sends there. */
			unsigned owned = (p->n_txq - i + n_pmds - 1) / n_pmds;

			t->first = (uint16_t)i;
			t->stride = (uint16_t)n_pmds;
			t->n_spread = (uint8_t)(owned < VSW_SWITCH_TXQ_SPREAD ?
					owned : VSW_SWITCH_TXQ_SPREAD);
			t->locked = lock_all;
		} else {
			/* Shared: PMDs i and i + n_txq send on one queue. */
			t->first = (uint16_t)(i % p->n_txq);
			t->stride = 0;
			t->n_spread = 1;
			t->locked = true;
		}
	}
}

int
port_table_init(struct vsw_switch *sw)
{
	struct vsw_port *none[VSW_SWITCH_MAX_PORTS] = {0};

	memset(sw->rxq_pin, RXQ_UNPINNED, sizeof(sw->rxq_pin));
	sw->ports = table_build(sw, none);
	return sw->ports == NULL ? -ENOMEM : 0;
}

void
port_table_fini(struct vsw_switch *sw)
{
	unsigned i;

	if (sw->ports == NULL)
		return;
	for (i = 0; i < sw->ports->n_ports; i++)
		free(sw->ports->port[sw->ports->list[i]]);
	free(sw->ports);
	sw->ports = NULL;
}

int
vsw_switch_port_lookup(const char *name, void *arg)
{
	const struct vsw_switch *sw = arg;
	const struct vsw_port_table *t = sw->ports;
	unsigned i;

	for (i = 0; i < t->n_ports; i++)
		if (strcmp(t->port[t->list[i]]->name, name) == 0)
			return t->list[i];
	return -ENOENT;
}

const char *
vsw_switch_port_name(uint16_t port_no, void *arg)
{
	const struct vsw_switch *sw = arg;

	if (port_no >= VSW_SWITCH_MAX_PORTS || sw->ports->port[port_no] == NULL)
		return NULL;
	return sw->ports->port[port_no]->name;
}

unsigned
vsw_switch_n_ports(const struct vsw_switch *sw)
{
	return sw->ports->n_ports;
}

/* Sum of (port, queue)'s cycles over the PMDs. */
static uint64_t
rxq_cycles_raw(const struct vsw_switch *sw, unsigned p, unsigned q)
{
	uint64_t c = 0;

	for (unsigned i = 0; i < sw->cfg.n_pmds; i++)
		c += ctr_read(&sw->pmd[i]->rxq_cycles[p][q]);
	return c;
}

/* A new measuring interval for port p's rx queues (a reused number must
 * not inherit the old port's cycles or placement). */
static void
rxq_rebase(struct vsw_switch *sw, unsigned p, bool unpin)
{
	for (unsigned q = 0; q < VSW_SWITCH_RXQ_MEASURED; q++) {
		sw->rxq_base[p][q] = rxq_cycles_raw(sw, p, q);
		if (unpin)
			sw->rxq_pin[p][q] = RXQ_UNPINNED;
	}
}

/* Mark the port numbers the rules name (in_port=, output:). */
static void
numbers_named(const struct vsw_switch *sw, bool *named)
{
	for (uint32_t i = 0; i < sw->cfg.max_rules; i++) {
		const struct vsw_rule *r;

		if (sw->by_id[i] == NULL)
			continue;
		r = &sw->by_id[i]->rule;
		if ((r->fields & VSW_RULE_F_IN_PORT) &&
				r->key.in_port < VSW_SWITCH_MAX_PORTS)
			named[r->key.in_port] = true;
		for (uint32_t a = 0; a < r->n_actions; a++)
			if (r->actions[a].type == VSW_ACTION_OUTPUT &&
					r->actions[a].arg < VSW_SWITCH_MAX_PORTS)
				named[r->actions[a].arg] = true;
	}
}

/*
 * A new port's number: the one this name had before (rules that name it
 * apply again, as OVS gives an interface its old OpenFlow port back), else
 * the lowest free number no rule names (a new port never inherits rules
 * left by a deleted one), else the lowest free number.
 */
static unsigned
pick_number(const struct vsw_switch *sw, struct vsw_port *const *ports,
	const char *name)
{
	bool named[VSW_SWITCH_MAX_PORTS] = {false};
	unsigned no, lowest = VSW_SWITCH_MAX_PORTS;

	for (no = 0; no < VSW_SWITCH_MAX_PORTS; no++)
		if (ports[no] == NULL && strcmp(sw->gone_name[no], name) == 0)
			return no;
	numbers_named(sw, named);
	for (no = 0; no < VSW_SWITCH_MAX_PORTS; no++) {
		if (ports[no] != NULL)
			continue;
		if (!named[no])
			return no;
		if (lowest == VSW_SWITCH_MAX_PORTS)
			lowest = no;
	}
	return lowest;
}

const char *
vsw_switch_port_gone_name(const struct vsw_switch *sw, uint16_t port_no)
{
	if (port_no >= VSW_SWITCH_MAX_PORTS || sw->ports->port[port_no] ||
			sw->gone_name[port_no][0] == '\0')
		return NULL;
	return sw->gone_name[port_no];
}

int
vsw_switch_port_add(struct vsw_switch *sw, const char *name,
	const struct vsw_port_ops *ops, void *ctx, uint16_t n_rxq,
	uint16_t n_txq)
{
	struct vsw_port *ports[VSW_SWITCH_MAX_PORTS], *p;
	unsigned no;
	int rc;

	if (name == NULL || name[0] == '\0' ||
		strlen(name) >= VSW_PORT_NAME_MAX || ops == NULL ||
		ops->rx_burst == NULL || ops->tx_burst == NULL || n_txq == 0)
		return -EINVAL;
	if (vsw_switch_port_lookup(name, sw) >= 0)
		return -EEXIST;
	memcpy(ports, sw->ports->port, sizeof(ports));
	no = pick_number(sw, ports, name);
	if (no == VSW_SWITCH_MAX_PORTS)
		return -ENOSPC;
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return -ENOMEM;
	strcpy(p->name, name);
	p->no = (uint16_t)no;
	p->n_rxq = n_rxq;
	p->n_txq = n_txq;
	p->ops = ops;
	p->ctx = ctx;
	port_txq_plan(p, sw->cfg.n_pmds, false);
	ports[no] = p;
	port_stats_rebase(sw, (uint16_t)no);
	rxq_rebase(sw, no, true);
	rc = publish(sw, ports);
	if (rc < 0) {
		free(p);
		return rc;
	}
	return (int)no;
}

/* Publish a copy of port_no with these queue counts; the old struct is
 * freed after the grace period (PMDs may be reading it). */
static int
publish_queues(struct vsw_switch *sw, uint16_t port_no, uint16_t n_rxq,
	uint16_t n_txq, bool lock_all)
{
	struct vsw_port *ports[VSW_SWITCH_MAX_PORTS], *old, *p;
	int rc;

	old = sw->ports->port[port_no];
	p = malloc(sizeof(*p));
	if (p == NULL)
		return -ENOMEM;
	*p = *old;
	p->n_rxq = n_rxq;
	p->n_txq = n_txq;
	port_txq_plan(p, sw->cfg.n_pmds, lock_all);
	memcpy(ports, sw->ports->port, sizeof(ports));
	ports[port_no] = p;
	rc = publish(sw, ports);
	if (rc < 0) {
		free(p);
		return rc;
	}
	free(old);
	return 0;
}

int
vsw_switch_port_set_queues(
	struct vsw_switch *sw, uint16_t port_no, uint16_t n_rxq, uint16_t n_txq)
{
	const struct vsw_port *old;
	int rc = 0;

	if (port_no >= VSW_SWITCH_MAX_PORTS || sw->ports->port[port_no] == NULL)
		return -ENOENT;
	if (n_txq == 0)
		return -EINVAL;
	old = sw->ports->port[port_no];
	/*
	 * Between a publish and its grace period PMDs use either version: a
	 * new tx queue plan goes old plan locked, new plan locked, new plan,
	 * so two versions that coexist never send on one queue unlocked.
	 */
	if (n_txq != old->n_txq) {
		rc = publish_queues(sw, port_no, old->n_rxq, old->n_txq, true);
		if (rc == 0)
			rc = publish_queues(sw, port_no, n_rxq, n_txq, true);
	}
	if (rc == 0)
		rc = publish_queues(sw, port_no, n_rxq, n_txq, false);
	return rc;
}

int
vsw_switch_port_del(struct vsw_switch *sw, uint16_t port_no)
{
	struct vsw_port *ports[VSW_SWITCH_MAX_PORTS], *p;
	int rc;

	if (port_no >= VSW_SWITCH_MAX_PORTS || sw->ports->port[port_no] == NULL)
		return -ENOENT;
	overlay_port_gone(sw, port_no); /* its number may go to another port */
	memcpy(ports, sw->ports->port, sizeof(ports));
	p = ports[port_no];
	ports[port_no] = NULL;
	rc = publish(sw, ports);
	if (rc < 0)
		return rc;
	/* After the grace period no PMD learns on or sends to it any more. */
	snprintf(sw->gone_name[port_no], sizeof(sw->gone_name[port_no]), "%s",
		p->name);
	free(p);
	mac_table_flush_port(sw->mac, port_no);
	return 0;
}

int
vsw_switch_rxq_pmd(const struct vsw_switch *sw, uint16_t port_no,
	uint16_t queue)
{
	/* Control thread: the only writer, so the table cannot change here. */
	const struct vsw_port_table *t = sw->ports;

	for (unsigned i = 0; i < sw->cfg.n_pmds; i++)
		for (uint32_t k = t->rxq_first[i]; k < t->rxq_first[i + 1]; k++)
			if (t->rxqs[k].port == port_no &&
					t->rxqs[k].queue == queue)
				return (int)i;
	return -ENOENT;
}

int
vsw_switch_rxq_cycles(const struct vsw_switch *sw, uint16_t port_no,
	uint16_t queue, uint64_t *cycles)
{
	const struct vsw_port *p;

	if (port_no >= VSW_SWITCH_MAX_PORTS)
		return -ENOENT;
	p = sw->ports->port[port_no];
	if (p == NULL || queue >= p->n_rxq)
		return -ENOENT;
	*cycles = queue < VSW_SWITCH_RXQ_MEASURED
			  ? rxq_cycles_raw(sw, port_no, queue) -
				    sw->rxq_base[port_no][queue]
			  : 0;
	return 0;
}

struct rxq_load {
	uint64_t load;
	unsigned idx;
};

static int
load_desc(const void *a, const void *b)
{
	const struct rxq_load *x = a, *y = b;

	if (x->load != y->load)
		return x->load < y->load ? 1 : -1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

int
vsw_switch_rxq_assign_cycles(
	const uint64_t *load, unsigned n, unsigned n_pmds, uint8_t *pmd_of)
{
	uint64_t sum[VSW_SWITCH_MAX_PMDS] = {0};
	unsigned cnt[VSW_SWITCH_MAX_PMDS] = {0};
	struct rxq_load *v;

	if (n_pmds == 0 || n_pmds > VSW_SWITCH_MAX_PMDS)
		return -EINVAL;
	if (n == 0)
		return 0;
	v = malloc(n * sizeof(*v));
	if (v == NULL)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++)
		v[i] = (struct rxq_load){load[i], i};
	qsort(v, n, sizeof(*v), load_desc);
	/* Longest first onto the least loaded: within 4/3 of the best. */
	for (unsigned i = 0; i < n; i++) {
		unsigned best = 0;

		for (unsigned m = 1; m < n_pmds; m++)
			if (sum[m] < sum[best] ||
				(sum[m] == sum[best] && cnt[m] < cnt[best]))
				best = m;
		sum[best] += v[i].load;
		cnt[best]++;
		pmd_of[v[i].idx] = (uint8_t)best;
	}
	free(v);
	return 0;
}

/* Pin every measured rx queue of the current table by its cycles. */
static int
pin_by_cycles(struct vsw_switch *sw)
{
	const struct vsw_port_table *t = sw->ports;
	uint32_t n = t->rxq_first[sw->cfg.n_pmds], k = 0;
	struct vsw_rxq_ref *ref = malloc((n + 1) * sizeof(*ref));
	uint64_t *load = calloc(n + 1, sizeof(*load));
	uint8_t *pmd_of = malloc(n + 1);
	int rc = -ENOMEM;

	if (ref != NULL && load != NULL && pmd_of != NULL) {
		for (uint32_t i = 0; i < n; i++) {
			if (t->rxqs[i].queue >= VSW_SWITCH_RXQ_MEASURED)
				continue; /* stays round-robin */
			ref[k] = t->rxqs[i];
			vsw_switch_rxq_cycles(
				sw, ref[k].port, ref[k].queue, &load[k]);
			k++;
		}
		rc = vsw_switch_rxq_assign_cycles(
			load, k, sw->cfg.n_pmds, pmd_of);
	}
	for (uint32_t i = 0; rc == 0 && i < k; i++)
		sw->rxq_pin[ref[i].port][ref[i].queue] = pmd_of[i];
	free(ref);
	free(load);
	free(pmd_of);
	return rc;
}

int
vsw_switch_rxq_rebalance(struct vsw_switch *sw, enum vsw_rxq_assign how)
{
	uint8_t saved[VSW_SWITCH_MAX_PORTS][VSW_SWITCH_RXQ_MEASURED];
	int rc = 0;

	memcpy(saved, sw->rxq_pin, sizeof(saved));
	if (how == VSW_RXQ_ASSIGN_CYCLES)
		rc = pin_by_cycles(sw);
	else
		memset(sw->rxq_pin, RXQ_UNPINNED, sizeof(sw->rxq_pin));
	if (rc == 0)
		rc = publish(sw, sw->ports->port);
	if (rc < 0) {
		memcpy(sw->rxq_pin, saved, sizeof(saved));
		return rc;
	}
	for (unsigned p = 0; p < VSW_SWITCH_MAX_PORTS; p++)
		rxq_rebase(sw, p, false);
	return 0;
}

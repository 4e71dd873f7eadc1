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
#include <stdlib.h>
#include <string.h>

#include <urcu-qsbr.h>

#include "switch_priv.h"

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
			count[k++ % n_pmds]++;
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
			unsigned pmd = k++ % n_pmds;
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
	for (no = 0; no < VSW_SWITCH_MAX_PORTS && ports[no] != NULL; no++)
		;
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
	memcpy(ports, sw->ports->port, sizeof(ports));
	p = ports[port_no];
	ports[port_no] = NULL;
	rc = publish(sw, ports);
	if (rc < 0)
		return rc;
	/* After the grace period no PMD learns on or sends to it any more. */
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

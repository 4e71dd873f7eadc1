/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The overlay's control side (vsw/switch.h "overlay"): the local VTEP,
 * L2 domains, their ports, flood lists and remote MACs, published under
 * RCU like the port and rule tables.
 *
 * Every change clones the published table and the one domain it changes,
 * edits the clones, rebuilds what is derived (port -> domain, IP ->
 * neighbour slot, the per-VTEP header templates), publishes and frees the
 * old versions after a grace period (remote MACs: l2domain_rmac.c).
 * Neighbour slots (one per remote VTEP
 * IP, refcounted by flood-list entries and remote MACs) and each domain's
 * learned-MAC table live outside the versions. Control thread only;
 * nothing here runs on a PMD.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>
#include <urcu-qsbr.h>

#include "l2domain_priv.h"

int
overlay_init(struct vsw_switch *sw)
{
	struct vsw_overlay *ov = calloc(1, sizeof(*ov));

	if (ov == NULL)
		return -ENOMEM;
	ov->pmd = calloc(sw->cfg.n_pmds, sizeof(*ov->pmd));
	if (ov->pmd == NULL) {
		free(ov);
		return -ENOMEM;
	}
	sw->ov = ov;
	return 0;
}

static void
dom_version_free(struct ov_dom *d)
{
	if (d != NULL)
		free(d->rmac);
	free(d);
}

void
overlay_fini(struct vsw_switch *sw)
{
	struct vsw_overlay *ov = sw->ov;
	struct ov_table *t;

	if (ov == NULL)
		return;
	t = ov->table;
	for (unsigned i = 0; t != NULL && i < t->n_doms; i++) {
		mac_table_destroy(t->dom[i]->mac);
		dom_version_free(t->dom[i]);
	}
	free(t);
	while (ov->ring_tail != ov->ring_head)
		rte_pktmbuf_free(ov->ring[ov->ring_tail++ % OV_INJECT_RING]);
	free(ov->pmd);
	free(ov);
	sw->ov = NULL;
}

/* A copy of the published table to change (a fresh one the first time). */
static struct ov_table *
table_clone(const struct vsw_overlay *ov)
{
	struct ov_table *t = malloc(sizeof(*t));

	if (t == NULL)
		return NULL;
	if (ov->table != NULL) {
		memcpy(t, ov->table, sizeof(*t));
	} else {
		memset(t, 0, sizeof(*t));
		t->cfg.underlay = OV_NO_PORT;
	}
	return t;
}

/* What follows from the domains and neighbours: port -> domain, IP ->
 * slot, a header template per slot in use. */
static void
table_derive(struct ov_table *t, const struct vsw_overlay *ov)
{
	memset(t->port_dom, 0, sizeof(t->port_dom));
	for (unsigned i = 0; i < t->n_doms; i++)
		for (unsigned p = 0; p < t->dom[i]->n_ports; p++)
			t->port_dom[t->dom[i]->ports[p]] = (uint16_t)(i + 1);
	memset(t->neigh_of, 0, sizeof(t->neigh_of));
	for (unsigned s = 0; s < VSW_SWITCH_MAX_VTEPS; s++) {
		uint32_t ip = ov->neigh[s].ip, h = ov_ip_hash(ip);

		if (ip == 0)
			continue;
		while (t->neigh_of[h & (OV_NEIGH_HASH - 1)] != 0)
			h++;
		t->neigh_of[h & (OV_NEIGH_HASH - 1)] = (uint16_t)(s + 1);
		vsw_vxlan_tmpl_init(
			&t->tmpl[s], t->cfg.local_mac, t->cfg.local_ip, ip);
	}
}

/* Publish t; after the grace period free the old table and old_dom (the
 * version of one domain t replaced, or NULL). */
static void
publish(struct vsw_switch *sw, struct ov_table *t, struct ov_dom *old_dom)
{
	struct ov_table *old = sw->ov->table;

	table_derive(t, sw->ov);
	rcu_assign_pointer(sw->ov->table, t);
	synchronize_rcu();
	free(old);
	dom_version_free(old_dom);
}

int
vsw_switch_overlay_set(
	struct vsw_switch *sw, const struct vsw_overlay_config *c)
{
	struct vsw_overlay *ov = sw->ov;
	struct ov_table *t;

	if (c->local_ip == 0 || c->mtu < VSW_VXLAN_L3_OVERHEAD + 64 ||
		(c->local_mac[0] & 1) || c->underlay >= VSW_SWITCH_MAX_PORTS)
		return -EINVAL;
	if (sw->ports->port[c->underlay] == NULL)
		return -ENOENT;
	if (ov->table != NULL && ov->table->port_dom[c->underlay] != 0)
		return -EBUSY;
	for (unsigned s = 0; s < VSW_SWITCH_MAX_VTEPS; s++)
		if (ov->neigh[s].ip == c->local_ip)
			return -EBUSY; /* a remote VTEP has that address */
	t = table_clone(ov);
	if (t == NULL)
		return -ENOMEM;
	t->on = true;
	t->cfg = *c;
	publish(sw, t, NULL);
	return 0;
}

int
vsw_switch_overlay_get(
	const struct vsw_switch *sw, struct vsw_overlay_config *c)
{
	if (sw->ov->table == NULL || !sw->ov->table->on)
		return -ENOENT;
	*c = sw->ov->table->cfg;
	return 0;
}

/* Index of vni in t->dom (or where it would go); *found says which. */
static unsigned
dom_index(const struct ov_table *t, uint32_t vni, bool *found)
{
	unsigned lo = 0, hi = t->n_doms;

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;

		if (t->dom[mid]->vni < vni)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < t->n_doms && t->dom[lo]->vni == vni;
	return lo;
}

int
vsw_switch_domain_add(struct vsw_switch *sw, uint32_t vni)
{
	struct vsw_overlay *ov = sw->ov;
	struct ov_table *t;
	struct ov_dom *d;
	unsigned i, id;
	bool found = false;

	if (vni == 0 || vni > VSW_VXLAN_VNI_MAX)
		return -EINVAL;
	if (ov->table != NULL) {
		dom_index(ov->table, vni, &found);
		if (found)
			return -EEXIST;
	}
	for (id = 0; id < VSW_SWITCH_MAX_DOMAINS && ov->id_used[id]; id++)
		;
	if (id == VSW_SWITCH_MAX_DOMAINS)
		return -ENOSPC;
	d = calloc(1, sizeof(*d));
	t = table_clone(ov);
	if (d != NULL)
		d->mac = mac_table_create(
			VSW_SWITCH_DOMAIN_MAC_ENTRIES, sw->cfg.mac_max_age);
	if (d == NULL || t == NULL || d->mac == NULL) {
		if (d != NULL)
			mac_table_destroy(d->mac);
		free(d);
		free(t);
		return -ENOMEM;
	}
	d->vni = vni;
	d->id = (uint16_t)id;
	i = dom_index(t, vni, &found);
	memmove(&t->dom[i + 1], &t->dom[i], (t->n_doms - i) * sizeof(d));
	t->dom[i] = d;
	t->n_doms++;
	ov->id_used[id] = true;
	/* counters of a reused id start from zero */
	memset(ov->dom_base[id], 0, sizeof(ov->dom_base[id]));
	for (unsigned p = 0; p < sw->cfg.n_pmds; p++)
		for (unsigned k = 0; k < DC_N; k++)
			ov->dom_base[id][k] += ctr_read(&ov->pmd[p].dom[id][k]);
	publish(sw, t, NULL);
	return 0;
}

int
vsw_switch_domain_del(struct vsw_switch *sw, uint32_t vni)
{
	struct vsw_overlay *ov = sw->ov;
	struct vsw_mac_table *mac;
	struct ov_table *t;
	struct ov_dom *d;
	unsigned i, id;
	bool found = false;

	if (ov->table == NULL)
		return -ENOENT;
	i = dom_index(ov->table, vni, &found);
	if (!found)
		return -ENOENT;
	t = table_clone(ov);
	if (t == NULL)
		return -ENOMEM;
	d = t->dom[i];
	memmove(&t->dom[i], &t->dom[i + 1], (t->n_doms - i - 1) * sizeof(d));
	t->n_doms--;
	for (unsigned v = 0; v < d->n_vteps; v++)
		neigh_unref(ov, d->vteps[v]);
	for (uint32_t r = 0; d->rmac != NULL && r <= d->rmask; r++)
		if (d->rmac[r].key != 0)
			neigh_unref(ov, d->rmac[r].vtep);
	mac = d->mac;
	id = d->id;
	publish(sw, t, d); /* frees d's version after the grace period */
	mac_table_destroy(mac);
	ov->id_used[id] = false;
	return 0;
}

int
dom_edit_begin(struct vsw_switch *sw, uint32_t vni, struct dom_edit *e)
{
	bool found = false;
	unsigned i;

	if (sw->ov->table == NULL)
		return -ENOENT;
	i = dom_index(sw->ov->table, vni, &found);
	if (!found)
		return -ENOENT;
	e->t = table_clone(sw->ov);
	e->d = malloc(sizeof(*e->d));
	if (e->t == NULL || e->d == NULL) {
		free(e->t);
		free(e->d);
		return -ENOMEM;
	}
	e->old = e->t->dom[i];
	*e->d = *e->old;
	e->d->rmac = NULL; /* a change of remote MACs builds its own */
	e->t->dom[i] = e->d;
	if (e->old->rmac != NULL) {
		size_t sz = (e->old->rmask + 1u) * sizeof(*e->old->rmac);

		e->d->rmac = malloc(sz);
		if (e->d->rmac == NULL) {
			free(e->t);
			free(e->d);
			return -ENOMEM;
		}
		memcpy(e->d->rmac, e->old->rmac, sz);
	}
	return 0;
}

void
dom_edit_abort(struct dom_edit *e)
{
	dom_version_free(e->d);
	free(e->t);
}

void
dom_edit_commit(struct vsw_switch *sw, struct dom_edit *e)
{
	publish(sw, e->t, e->old);
}

int
vsw_switch_domain_port_add(
	struct vsw_switch *sw, uint32_t vni, uint16_t port_no)
{
	const struct ov_table *cur = sw->ov->table;
	struct dom_edit e;
	int rc;

	if (port_no >= VSW_SWITCH_MAX_PORTS || sw->ports->port[port_no] == NULL)
		return -ENOENT;
	if (cur != NULL && cur->on && cur->cfg.underlay == port_no)
		return -EBUSY;
	rc = dom_edit_begin(sw, vni, &e);
	if (rc < 0)
		return rc;
	if (cur->port_dom[port_no] != 0) {
		rc = cur->dom[cur->port_dom[port_no] - 1]->vni == vni ? -EEXIST
								      : -EBUSY;
	} else if (e.d->n_ports == VSW_SWITCH_DOMAIN_PORTS) {
		rc = -ENOSPC;
	}
	if (rc < 0) {
		dom_edit_abort(&e);
		return rc;
	}
	e.d->ports[e.d->n_ports++] = port_no;
	dom_edit_commit(sw, &e);
	return 0;
}

int
vsw_switch_domain_port_del(
	struct vsw_switch *sw, uint32_t vni, uint16_t port_no)
{
	struct dom_edit e;
	unsigned i;
	int rc = dom_edit_begin(sw, vni, &e);

	if (rc < 0)
		return rc;
	for (i = 0; i < e.d->n_ports && e.d->ports[i] != port_no; i++)
		;
	if (i == e.d->n_ports) {
		dom_edit_abort(&e);
		return -ENOENT;
	}
	e.d->ports[i] = e.d->ports[--e.d->n_ports];
	dom_edit_commit(sw, &e);
	/* No PMD sends from it in this domain now: forget its MACs. */
	mac_table_flush_port(e.d->mac, port_no);
	return 0;
}

void
overlay_port_gone(struct vsw_switch *sw, uint16_t port_no)
{
	const struct ov_table *cur = sw->ov->table;
	struct ov_table *t;

	if (cur == NULL)
		return;
	if (cur->port_dom[port_no] != 0)
		vsw_switch_domain_port_del(
			sw, cur->dom[cur->port_dom[port_no] - 1]->vni, port_no);
	cur = sw->ov->table;
	if (cur->on && cur->cfg.underlay == port_no &&
		(t = table_clone(sw->ov)) != NULL) {
		t->on = false;
		t->cfg.underlay = OV_NO_PORT;
		publish(sw, t, NULL);
	}
}

/* ---- neighbours (remote VTEPs) ---- */

/* The slot of ip, taken (a new one if needed) with one more reference;
 * -ENOSPC. */
int
neigh_ref(struct vsw_overlay *ov, uint32_t ip)
{
	int free_slot = -1;

	for (unsigned s = 0; s < VSW_SWITCH_MAX_VTEPS; s++) {
		if (ov->neigh[s].ip == ip) {
			ov->neigh[s].refs++;
			return (int)s;
		}
		if (ov->neigh[s].ip == 0 && free_slot < 0)
			free_slot = (int)s;
	}
	if (free_slot < 0)
		return -ENOSPC;
	ov->neigh[free_slot].refs = 1;
	ov->neigh[free_slot].last_req = 0;
	ov->neigh[free_slot].last_ok = 0;
	ov->neigh[free_slot].probes = 0;
	__atomic_store_n(&ov->neigh[free_slot].heard, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&ov->neigh[free_slot].mac, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&ov->neigh[free_slot].ip, ip, __ATOMIC_RELAXED);
	return free_slot;
}

/* The slot stays reserved until the next publish has dropped it from the
 * IP hash (ip = 0 only removes it from the next derive). */
void
neigh_unref(struct vsw_overlay *ov, uint16_t slot)
{
	struct ov_neigh *n = &ov->neigh[slot];

	if (n->refs > 0 && --n->refs == 0) {
		__atomic_store_n(&n->ip, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&n->mac, 0, __ATOMIC_RELAXED);
	}
}

bool
ip_ok(const struct vsw_switch *sw, uint32_t ip)
{
	const struct ov_table *t = sw->ov->table;

	return ip != 0 && ip != 0xffffffffu &&
	       !(t != NULL && t->on && t->cfg.local_ip == ip);
}

int
vsw_switch_vtep_add(struct vsw_switch *sw, uint32_t vni, uint32_t ip)
{
	struct vsw_overlay *ov = sw->ov;
	struct dom_edit e;
	int rc, slot;

	if (!ip_ok(sw, ip))
		return -EINVAL;
	rc = dom_edit_begin(sw, vni, &e);
	if (rc < 0)
		return rc;
	for (unsigned v = 0; v < e.d->n_vteps; v++)
		if (ov->neigh[e.d->vteps[v]].ip == ip)
			rc = -EEXIST;
	if (rc == 0 && e.d->n_vteps == VSW_SWITCH_DOMAIN_VTEPS)
		rc = -ENOSPC;
	slot = rc == 0 ? neigh_ref(ov, ip) : rc;
	if (slot < 0) {
		dom_edit_abort(&e);
		return slot;
	}
	e.d->vteps[e.d->n_vteps++] = (uint16_t)slot;
	dom_edit_commit(sw, &e);
	return 0;
}

int
vsw_switch_vtep_del(struct vsw_switch *sw, uint32_t vni, uint32_t ip)
{
	struct vsw_overlay *ov = sw->ov;
	struct dom_edit e;
	unsigned v;
	int rc = dom_edit_begin(sw, vni, &e);

	if (rc < 0)
		return rc;
	for (v = 0; v < e.d->n_vteps && ov->neigh[e.d->vteps[v]].ip != ip; v++)
		;
	if (v == e.d->n_vteps) {
		dom_edit_abort(&e);
		return -ENOENT;
	}
	neigh_unref(ov, e.d->vteps[v]);
	e.d->vteps[v] = e.d->vteps[--e.d->n_vteps];
	dom_edit_commit(sw, &e);
	return 0;
}

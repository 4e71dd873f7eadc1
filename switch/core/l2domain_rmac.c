/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The overlay's remote MACs (vsw_switch_domain_mac_add/_del): per domain
 * version an open-addressing hash, MAC -> neighbour slot, at most half
 * full, rebuilt (grown, or without a deleted key) into the domain's clone
 * on a change, so a published version never changes. Control thread.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "l2domain_priv.h"

/* Rebuild d's remote hash into nslots (a power of two) without key skip
 * (0: keep all). 0 or -ENOMEM (d unchanged). */
static int
rmac_rebuild(struct ov_dom *d, uint32_t nslots, uint64_t skip)
{
	struct ov_rmac *n = calloc(nslots, sizeof(*n));
	uint32_t count = 0;

	if (n == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; d->rmac != NULL && i <= d->rmask; i++) {
		uint64_t key = d->rmac[i].key;
		uint32_t h = ov_rmac_hash(key);

		if (key == 0 || key == skip)
			continue;
		while (n[h & (nslots - 1)].key != 0)
			h++;
		n[h & (nslots - 1)] = d->rmac[i];
		count++;
	}
	free(d->rmac);
	d->rmac = n;
	d->rmask = nslots - 1;
	d->n_rmacs = count;
	return 0;
}

static struct ov_rmac *
rmac_slot(struct ov_dom *d, uint64_t key)
{
	uint32_t h = ov_rmac_hash(key);

	for (uint32_t i = 0; i <= d->rmask; i++) {
		struct ov_rmac *r = &d->rmac[(h + i) & d->rmask];

		if (r->key == key || r->key == 0)
			return r;
	}
	return NULL; /* not reached: the hash is at most half full */
}

static bool
mac_ok(const uint8_t mac[6])
{
	return !(mac[0] & 1) && (ov_mac_key(mac) & ~OV_MAC_KNOWN) != 0;
}

/* Make room for one more remote MAC in e's domain. */
static int
rmac_room(struct dom_edit *e)
{
	uint32_t slots = e->d->rmac == NULL ? 0 : e->d->rmask + 1;

	if (e->d->n_rmacs >= VSW_SWITCH_DOMAIN_RMACS)
		return -ENOSPC;
	if ((e->d->n_rmacs + 1) * 2 <= slots)
		return 0;
	return rmac_rebuild(e->d, slots == 0 ? 16 : 2 * slots, 0);
}

int
vsw_switch_domain_mac_add(
	struct vsw_switch *sw, uint32_t vni, const uint8_t mac[6], uint32_t ip)
{
	struct vsw_overlay *ov = sw->ov;
	uint64_t key = ov_mac_key(mac);
	struct ov_rmac *r;
	struct dom_edit e;
	int rc, slot;

	if (!mac_ok(mac) || !ip_ok(sw, ip))
		return -EINVAL;
	rc = dom_edit_begin(sw, vni, &e);
	if (rc < 0)
		return rc;
	slot = ov_rmac_find(e.d, key);
	if (slot >= 0 && ov->neigh[slot].ip == ip) {
		dom_edit_abort(&e); /* the same route again: nothing to do */
		return 0;
	}
	rc = slot >= 0 ? 0 : rmac_room(&e);
	if (rc == 0)
		rc = slot = neigh_ref(ov, ip);
	if (rc < 0) {
		dom_edit_abort(&e);
		return rc;
	}
	r = rmac_slot(e.d, key);
	if (r->key == 0)
		e.d->n_rmacs++;
	else
		neigh_unref(ov, r->vtep);
	r->key = key;
	r->vtep = (uint16_t)slot;
	dom_edit_commit(sw, &e);
	/* New or moved: the MAC is over there now (a later local frame from
	 * it is learned again and wins). */
	mac_table_forget(e.d->mac, mac);
	return 0;
}

int
vsw_switch_domain_mac_del(
	struct vsw_switch *sw, uint32_t vni, const uint8_t mac[6])
{
	uint64_t key = ov_mac_key(mac);
	struct dom_edit e;
	int rc = dom_edit_begin(sw, vni, &e), slot;

	if (rc < 0)
		return rc;
	slot = ov_rmac_find(e.d, key);
	if (slot < 0) {
		dom_edit_abort(&e);
		return -ENOENT;
	}
	rc = rmac_rebuild(e.d, e.d->rmask + 1, key);
	if (rc < 0) {
		dom_edit_abort(&e);
		return rc;
	}
	neigh_unref(sw->ov, (uint16_t)slot);
	dom_edit_commit(sw, &e);
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The overlay's state (VXLAN L2 domains), shared by l2domain.c (control:
 * build, publish, dump) and l2domain_dp.c (the PMD side).
 *
 * Published, immutable after publication: struct ov_table and the struct
 * ov_dom versions it points to (a change clones the table and the one
 * domain it changes; PMDs read one table per burst). Stable for the
 * switch's life, outside the versions: the neighbour slots (a remote
 * VTEP's IP and refcount are control-thread only; its MAC word is written
 * by PMDs that learn it and read by the PMDs that encapsulate), each
 * domain's learned-MAC table (shared by its versions, mac_learning.c) and
 * the per-PMD counters. Control -> PMD 0: a single-producer,
 * single-consumer ring of ARP requests built on the control thread.
 */
#ifndef VSW_L2DOMAIN_PRIV_H
#define VSW_L2DOMAIN_PRIV_H

#include <stdint.h>

#include <vsw/vxlan.h>

#include "switch_priv.h"

#define OV_NEIGH_HASH 512 /* IP -> neighbour slot, >= 2 x MAX_VTEPS */
#define OV_INJECT_RING 64 /* ARP requests in flight to PMD 0 */
#define OV_NO_PORT 0xffff

/* A neighbour's MAC word: OV_MAC_KNOWN | the MAC as 48 bits; 0 unknown. */
#define OV_MAC_KNOWN (1ull << 48)

struct ov_neigh {
	uint32_t ip;       /* control writes (atomic: PMDs read); 0 = free */
	uint32_t refs;     /* control: flood-list entries + remote MACs */
	uint64_t mac;	   /* atomic: PMDs learn, control resets/forgets */
	uint64_t last_req; /* control: time of the last ARP request */
	uint64_t last_ok;  /* control: when it was last heard at its MAC */
	uint32_t heard;	   /* atomic: PMDs set it (once per clear) when the
			    * VTEP is heard at mac, the tick clears it */
	uint32_t probes;   /* control: refresh requests unanswered */
};

struct ov_rmac {
	uint64_t key;  /* OV_MAC_KNOWN | MAC; 0 = empty */
	uint16_t vtep; /* neighbour slot */
};

/* Per-domain counters, per PMD. */
enum {
	DC_RX_LOCAL,
	DC_RX_VXLAN,
	DC_TX_LOCAL,
	DC_TX_VXLAN,
	DC_FLOOD,
	DC_FLOOD_COPIES,
	DC_DROPS,
	DC_N
};

struct ov_dom {
	uint32_t vni;
	uint16_t id; /* stable while the domain exists: counters */
	uint16_t n_ports;
	uint16_t n_vteps;
	uint16_t ports[VSW_SWITCH_DOMAIN_PORTS];
	uint16_t vteps[VSW_SWITCH_DOMAIN_VTEPS]; /* neighbour slots */
	struct vsw_mac_table *mac;               /* learned local MACs */
	uint32_t n_rmacs;
	uint32_t rmask;       /* rmac[0 .. rmask] (power of two, >= 2 n) */
	struct ov_rmac *rmac; /* this version's own; NULL if none */
};

struct ov_table {
	bool on; /* overlay_set done */
	struct vsw_overlay_config cfg;
	uint16_t n_doms;
	uint16_t port_dom[VSW_SWITCH_MAX_PORTS]; /* 1 + index in dom[] */
	uint16_t neigh_of[OV_NEIGH_HASH];        /* 1 + slot, linear probe */
	struct vsw_vxlan_tmpl tmpl[VSW_SWITCH_MAX_VTEPS]; /* by slot */
	struct ov_dom *dom[VSW_SWITCH_MAX_DOMAINS];       /* by vni */
};

struct ov_pmd_ctr {
	uint64_t c[VSW_OVERLAY_N_COUNTERS];
	uint64_t dom[VSW_SWITCH_MAX_DOMAINS][DC_N];
};

struct vsw_overlay {
	struct ov_table *table; /* RCU-published; NULL: no overlay at all */
	struct ov_neigh neigh[VSW_SWITCH_MAX_VTEPS];
	struct ov_pmd_ctr *pmd; /* [n_pmds] */
	uint64_t ctl_ctr[VSW_OVERLAY_N_COUNTERS];
	/* Per domain id: in use, counter baseline when it was taken. */
	bool id_used[VSW_SWITCH_MAX_DOMAINS];
	uint64_t dom_base[VSW_SWITCH_MAX_DOMAINS][DC_N];
	/* ARP requests, control -> PMD 0 (head: producer, tail: consumer). */
	uint32_t ring_head;
	uint32_t ring_tail;
	struct rte_mbuf *ring[OV_INJECT_RING];
};

static inline uint32_t
ov_ip_hash(uint32_t ip)
{
	return (ip * 0x9e3779b1u) >> 23; /* 9 bits: OV_NEIGH_HASH */
}

/* Neighbour slot of a remote VTEP by IP, or -1. */
static inline int
ov_neigh_find(const struct ov_table *t, const struct vsw_overlay *ov,
	uint32_t ip)
{
	uint32_t h = ov_ip_hash(ip), i;

	for (i = 0; i < OV_NEIGH_HASH; i++) {
		unsigned s = t->neigh_of[(h + i) & (OV_NEIGH_HASH - 1)];

		if (s == 0)
			return -1;
		if (__atomic_load_n(&ov->neigh[s - 1].ip, __ATOMIC_RELAXED) ==
			ip)
			return (int)s - 1;
	}
	return -1;
}

static inline uint64_t
ov_mac_key(const uint8_t m[6])
{
	return OV_MAC_KNOWN | (uint64_t)m[0] << 40 | (uint64_t)m[1] << 32 |
	       (uint64_t)m[2] << 24 | (uint64_t)m[3] << 16 |
	       (uint64_t)m[4] << 8 | m[5];
}

static inline uint32_t
ov_rmac_hash(uint64_t key)
{
	return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 32);
}

/* Remote MAC's neighbour slot, or -1. */
static inline int
ov_rmac_find(const struct ov_dom *d, uint64_t key)
{
	uint32_t i, h;

	if (d->rmac == NULL)
		return -1;
	h = ov_rmac_hash(key);
	for (i = 0; i <= d->rmask; i++) {
		const struct ov_rmac *r = &d->rmac[(h + i) & d->rmask];

		if (r->key == key)
			return r->vtep;
		if (r->key == 0)
			return -1;
	}
	return -1;
}

/* Domain by VNI (binary search), or NULL. */
static inline const struct ov_dom *
ov_dom_find(const struct ov_table *t, uint32_t vni)
{
	unsigned lo = 0, hi = t->n_doms;

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;

		if (t->dom[mid]->vni == vni)
			return t->dom[mid];
		if (t->dom[mid]->vni < vni)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* l2domain.c */
int overlay_init(struct vsw_switch *sw);
void overlay_fini(struct vsw_switch *sw);
/* Before a port goes: it leaves its domain; if it is the underlay, the
 * overlay is unset (overlay_set again once it is back). */
void overlay_port_gone(struct vsw_switch *sw, uint16_t port_no);

/* l2domain.c, for l2domain_rmac.c: */
/* A clone of domain vni in a clone of the table, to change and then
 * commit(); -ENOENT, -ENOMEM. */
struct dom_edit {
	struct ov_table *t;
	struct ov_dom *d;
	struct ov_dom *old;
};
int dom_edit_begin(struct vsw_switch *sw, uint32_t vni, struct dom_edit *e);
void dom_edit_abort(struct dom_edit *e);
/* Publish e's clones; the old domain version is freed after the grace
 * period. */
void dom_edit_commit(struct vsw_switch *sw, struct dom_edit *e);
/* The neighbour slot of ip with one more reference (a new slot if need
 * be), or -ENOSPC; unref drops one and frees the slot at zero. */
int neigh_ref(struct vsw_overlay *ov, uint32_t ip);
void neigh_unref(struct vsw_overlay *ov, uint16_t slot);
/* A remote VTEP address: not 0, broadcast or the local IP. */
bool ip_ok(const struct vsw_switch *sw, uint32_t ip);

/* l2domain_dp.c: called by the PMD loop. ingress takes the packets of a
 * domain port, and from the underlay the VXLAN and ARP ones for the local
 * VTEP; it leaves the rest in pkts[0 .. returned) for the rule table. */
unsigned overlay_ingress(struct vsw_pmd *pmd, const struct ov_table *t,
	uint16_t in_port, struct rte_mbuf **pkts, unsigned n);
/* PMD 0: send the ARP requests the control thread queued. */
void overlay_inject(struct vsw_pmd *pmd, const struct ov_table *t);

#endif /* VSW_L2DOMAIN_PRIV_H */

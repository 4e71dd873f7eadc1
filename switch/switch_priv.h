/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Switch core internals shared by the switch/ .c files (never included outside).
 *
 * Published, immutable after publication: struct vsw_port_table and
 * struct vsw_rule_table (each read by PMDs under RCU). Owned by one PMD:
 * struct vsw_pmd (counters, output batches, EMC). Shared and written by PMDs
 * with atomics only: the MAC table.
 */
#ifndef VSW_SWITCH_PRIV_H
#define VSW_SWITCH_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include <vsw/dpcls.h>
#include <vsw/switch.h>

struct rte_mbuf;

/* Room for two bursts: ensured free for a whole burst before it is acted
 * on, so appends need no per-packet bound check (seed 000). */
#define VSW_OUT_BATCH_CAP (2 * VSW_SWITCH_BURST)

struct vsw_port {
	char name[VSW_PORT_NAME_MAX];
	uint16_t no;
	uint16_t n_rxq;
	uint16_t n_txq;
	const struct vsw_port_ops *ops;
	void *ctx;
};

struct vsw_rxq_ref {
	uint16_t port;
	uint16_t queue;
};

/* One published version of the ports and of the rx queue assignment. */
struct vsw_port_table {
	struct vsw_port *port[VSW_SWITCH_MAX_PORTS]; /* NULL = no port */
	uint16_t n_ports;
	uint16_t list[VSW_SWITCH_MAX_PORTS]; /* numbers of present ports */
	/* PMD i polls rxqs[rxq_first[i] .. rxq_first[i + 1]). */
	uint32_t rxq_first[VSW_SWITCH_MAX_PMDS + 1];
	struct vsw_rxq_ref rxqs[]; /* sum of n_rxq */
};

enum vsw_out_kind {
	VSW_OUT_DROP,   /* explicit drop (or no output action) */
	VSW_OUT_PORTS,  /* out_ports[0 .. n_out) */
	VSW_OUT_NORMAL,
	VSW_OUT_FLOOD,
};

/* A rule as the datapath runs it; shared by table versions, freed after a
 * grace period once no published table holds it. */
struct vsw_sw_rule {
	struct vsw_rule rule;
	uint32_t id;  /* index into per-PMD rule counters */
	struct vsw_sw_rule *hnext; /* control thread's match hash chain */
	uint8_t out_kind;
	uint8_t n_out;
	uint8_t n_edits;
	uint16_t out_ports[VSW_RULE_MAX_ACTIONS];
	struct vsw_action edits[VSW_RULE_MAX_ACTIONS]; /* VLAN push/strip */
};

struct vsw_rule_table {
	struct vsw_dpcls *cls;
	uint64_t version; /* PMDs flush their EMC when it changes */
};

struct vsw_out_batch {
	uint16_t n;
	struct rte_mbuf *pkts[VSW_OUT_BATCH_CAP];
};

struct vsw_port_ctr {
	uint64_t rx;
	uint64_t tx;
	uint64_t tx_drops;
};

struct vsw_pmd {
	struct vsw_switch *sw;
	unsigned idx;
	unsigned lcore;
	bool launched;
	volatile bool stop;

	/* Read once per iteration (or per process call) under RCU. */
	const struct vsw_port_table *pt;
	uint64_t rules_version;
	struct vsw_emc *emc; /* NULL when the EMC is off */

	/* Owned counters (single writer: this PMD). */
	uint64_t ctr[VSW_PMD_N_COUNTERS];
	struct vsw_dpcls_lookup_stats cls_stats;
	struct vsw_port_ctr port_ctr[VSW_SWITCH_MAX_PORTS];
	uint64_t *rule_pkts;  /* [max_rules] */
	uint64_t *rule_bytes; /* [max_rules] */
	uint64_t ctr_base[VSW_PMD_N_COUNTERS]; /* written by clear only */

	/* Output batches, one per port; dirty[] lists the non-empty ones. */
	uint16_t n_dirty;
	uint16_t dirty[VSW_SWITCH_MAX_PORTS];
	struct vsw_out_batch batch[VSW_SWITCH_MAX_PORTS];
};

struct vsw_mac_table;

struct vsw_switch {
	struct vsw_switch_config cfg;
	struct vsw_port_table *ports;  /* RCU-published */
	struct vsw_rule_table *rules;  /* RCU-published */
	struct vsw_mac_table *mac;
	uint64_t rules_version;
	/* Control thread only: every live rule by id, and free ids. */
	struct vsw_sw_rule **by_id;
	struct vsw_sw_rule **hash; /* by match; hash_mask + 1 buckets */
	uint32_t hash_mask;
	uint32_t n_rules;
	uint32_t *free_ids;
	uint32_t n_free;
	/* Per-rule counter baselines (sum over PMDs when the id was taken). */
	struct vsw_rule_stats *rule_base;
	/* Per-port counter baselines, taken when a port number is (re)used. */
	struct vsw_port_ctr port_base[VSW_SWITCH_MAX_PORTS];
	struct vsw_pmd *pmd[VSW_SWITCH_MAX_PMDS];
};

/* Counters: one writer, readable by others without tearing. */
static inline void
vsw_ctr_add(uint64_t *c, uint64_t v)
{
	__atomic_store_n(c, *c + v, __ATOMIC_RELAXED);
}

static inline uint64_t
vsw_ctr_read(const uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

/* port_table.c */
int vsw_port_table_init(struct vsw_switch *sw);
void vsw_port_table_fini(struct vsw_switch *sw);

/* rule_table.c */
int vsw_rule_table_init(struct vsw_switch *sw);
void vsw_rule_table_fini(struct vsw_switch *sw);

/* mac_learning.c */
struct vsw_mac_table *vsw_mac_table_create(uint32_t entries, uint32_t max_age);
void vsw_mac_table_destroy(struct vsw_mac_table *t);
uint32_t vsw_mac_table_epoch(const struct vsw_mac_table *t);
/* Learn src on in_port (PMD, lock-free); multicast sources are ignored. */
void vsw_mac_learn(struct vsw_mac_table *t, const uint8_t src[6],
	uint16_t in_port, uint32_t epoch);
/* Learned port, or -1. */
int vsw_mac_find(const struct vsw_mac_table *t, const uint8_t mac[6]);
unsigned vsw_mac_table_age(struct vsw_mac_table *t, uint64_t now);
void vsw_mac_table_flush_port(struct vsw_mac_table *t, int port);
unsigned vsw_mac_table_count(const struct vsw_mac_table *t);

/* switch_stats.c: a new port's counters start from zero. */
void vsw_port_stats_rebase(struct vsw_switch *sw, uint16_t port_no);

/* output_batch.c */
/* Make room for n more packets in every non-empty batch. */
void vsw_out_ensure_room(struct vsw_pmd *pmd, unsigned n);
void vsw_out_flush_all(struct vsw_pmd *pmd);

/* actions.c: run one rule's actions on a run of packets that matched it. */
void vsw_actions_run(struct vsw_pmd *pmd, const struct vsw_sw_rule *r,
	uint16_t in_port, struct rte_mbuf **pkts,
	const struct vsw_flow_key *const *keys, unsigned n);
/* Compile the datapath form of rule (out_kind, ports, edits). */
void vsw_actions_compile(struct vsw_sw_rule *r);

/* Append without a bound check: vsw_out_ensure_room() made room. */
static inline struct vsw_out_batch *
vsw_out_batch_get(struct vsw_pmd *pmd, uint16_t port)
{
	struct vsw_out_batch *b = &pmd->batch[port];

	if (b->n == 0)
		pmd->dirty[pmd->n_dirty++] = port;
	return b;
}

#endif /* VSW_SWITCH_PRIV_H */

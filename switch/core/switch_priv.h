/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Switch core internals shared by the switch/ .c files (never included outside).
 *
 * Published, immutable after publication: struct vsw_port_table and
 * struct vsw_rule_table (each read by PMDs under RCU). Owned by one PMD:
 * struct vsw_pmd (counters, output batches, EMC). Shared and written by PMDs
 * with atomics only: the MAC table. Shared by PMDs under a lock: a tx queue
 * that fewer queues than PMDs forces them to share (vsw_switch.txq_lock).
 */
#ifndef VSW_SWITCH_PRIV_H
#define VSW_SWITCH_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include <vsw/dpcls.h>
#include <vsw/emc.h>
#include <vsw/switch.h>

#include <rte_branch_prediction.h>
#include <rte_spinlock.h>

struct rte_mbuf;
struct rte_mempool;

/* Room for two bursts: ensured free for a whole burst before it is acted
 * on, so appends need no per-packet bound check (seed 000). */
#define VSW_OUT_BATCH_CAP (2 * VSW_SWITCH_BURST)

/*
 * Output batches: a PMD's pool of VSW_OUT_BATCHES, each bound to one
 * (port, tx queue) until the end of the iteration; batch_of maps (port,
 * spread slot) to a batch. Memory per PMD: 256 x 520 B batches + 8 KiB map,
 * about 140 KiB, fixed at creation.
 */
#define VSW_OUT_BATCHES VSW_SWITCH_MAX_PORTS

/* How one PMD sends to one port: tx queues first + k * stride for
 * k < n_spread; locked when PMDs share them. */
struct vsw_port_txq {
	uint16_t first;
	uint16_t stride;
	uint8_t n_spread; /* 1..VSW_SWITCH_TXQ_SPREAD */
	bool locked;
};

struct vsw_port {
	char name[VSW_PORT_NAME_MAX];
	uint16_t no;
	uint16_t n_rxq;
	uint16_t n_txq;
	const struct vsw_port_ops *ops;
	void *ctx;
	struct vsw_port_txq txq[VSW_SWITCH_MAX_PMDS]; /* by PMD index */
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
	/* First cache line: all a PMD reads on a hit without VLAN edits. */
	uint32_t id;  /* index into per-PMD rule counters */
	uint8_t out_kind;
	uint8_t n_out;
	uint8_t n_edits;
	uint16_t out_ports[VSW_RULE_MAX_ACTIONS];
	struct vsw_action edits[VSW_RULE_MAX_ACTIONS]; /* VLAN push/strip */
	struct vsw_sw_rule *hnext; /* control thread's match hash chain */
	bool dying; /* control: leaves with the table being published */
	struct vsw_rule rule;
};

struct vsw_rule_table {
	struct vsw_dpcls *cls;
	uint64_t version; /* rules changed: PMDs flush their EMC */
	uint64_t gen;     /* any publish (also re-ranking): reset hit counts */
	/* The port-pair fast path (port_pair.c): the one rule every packet
	 * from in_port hits, when it is "in_port=X, actions=output:Y", or
	 * NULL: classify as usual. */
	const struct vsw_sw_rule *pair[VSW_SWITCH_MAX_PORTS];
};

/* Subtable positions whose hits a PMD counts for re-ranking. */
#define VSW_PMD_RANKED_SUBTABLES 64

struct vsw_out_batch {
	uint16_t n;
	uint16_t port;
	uint16_t txq;
	uint8_t slot;
	bool locked;
	struct rte_mbuf *pkts[VSW_OUT_BATCH_CAP];
};

/* Packets and bytes side by side: one cache line touched per rule hit. */
struct vsw_rule_ctr {
	uint64_t packets;
	uint64_t bytes;
};

struct vsw_port_ctr {
	uint64_t rx;
	uint64_t tx;
	uint64_t tx_drops;
	/* software offloads done for this destination (offload.c) */
	uint64_t sw_gso;
	uint64_t sw_gso_segs;
	uint64_t sw_csum;
	uint64_t sw_ol_drops;
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
	uint64_t rules_gen;
	struct vsw_emc *emc; /* NULL when the EMC is off */
	uint32_t sleep_us;   /* current idle back-off step, 0 = awake */
	uint32_t emc_inv_prob; /* what this PMD's EMC is set to */
	struct vsw_watchdog_slot wd; /* its thread's, while it runs */

	/* Owned counters (single writer: this PMD). */
	uint64_t ctr[VSW_PMD_N_COUNTERS];
	struct vsw_dpcls_lookup_stats cls_stats;
	/* Hits per subtable position of the classifier of generation
	 * hits_gen (read by the control thread for re-ranking). */
	uint64_t hits_gen;
	uint64_t subtable_hits[VSW_PMD_RANKED_SUBTABLES];
	struct vsw_port_ctr port_ctr[VSW_SWITCH_MAX_PORTS];
	struct vsw_rule_ctr *rule_ctr; /* [max_rules] */
	uint64_t ctr_base[VSW_PMD_N_COUNTERS]; /* written by clear only */

	/* Output batches: batch[0 .. n_batches) are bound for this
	 * iteration; batch_of[port][slot] is 1 + the index, 0 = none. */
	uint16_t in_queue; /* rx queue of the burst being acted on */
	uint16_t n_batches;
	struct vsw_out_batch batch[VSW_OUT_BATCHES];
	uint16_t batch_of[VSW_SWITCH_MAX_PORTS][VSW_SWITCH_TXQ_SPREAD];

	/* Busy cycles per (port, rx queue < VSW_SWITCH_RXQ_MEASURED): rx,
	 * processing and a share of the flush (pmd-rxq-rebalance). */
	uint64_t rxq_cycles[VSW_SWITCH_MAX_PORTS][VSW_SWITCH_RXQ_MEASURED];
};

/* An rx queue no rebalance has placed: round-robin. */
#define RXQ_UNPINNED 0xff

struct vsw_mac_table;
struct vsw_overlay;

struct vsw_switch {
	struct vsw_switch_config cfg;
	struct vsw_port_table *ports;  /* RCU-published */
	struct vsw_rule_table *rules;  /* RCU-published */
	struct vsw_mac_table *mac;
	struct vsw_overlay *ov; /* VXLAN L2 domains (l2domain_priv.h) */
	uint64_t rules_version;
	uint64_t rules_gen;
	uint32_t emc_inv_prob; /* wanted; PMDs follow (atomic) */
	uint32_t pmd_sleep_max_us; /* idle back-off limit, 0 = off (atomic) */
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
	struct vsw_watchdog *watchdog; /* while PMDs run, NULL: none */
	/* Around tx_burst on a shared tx queue (port, txq % MAX_PMDS); the
	 * only lock a PMD takes. Outlives port table versions. */
	rte_spinlock_t txq_lock[VSW_SWITCH_MAX_PORTS][VSW_SWITCH_MAX_PMDS];
	/* Control thread: the PMD a rebalance gave each rx queue, and the
	 * cycle sums (over PMDs) at the last rebalance or port add. */
	uint8_t rxq_pin[VSW_SWITCH_MAX_PORTS][VSW_SWITCH_RXQ_MEASURED];
	/* Control thread: the name of the port a free number last had ("":
	 * never used), so the same name gets its number back. */
	char gone_name[VSW_SWITCH_MAX_PORTS][VSW_PORT_NAME_MAX];
	uint64_t rxq_base[VSW_SWITCH_MAX_PORTS][VSW_SWITCH_RXQ_MEASURED];
};

/* Counters: one writer, readable by others without tearing. */
static inline void
ctr_add(uint64_t *c, uint64_t v)
{
	__atomic_store_n(c, *c + v, __ATOMIC_RELAXED);
}

static inline uint64_t
ctr_read(const uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

/* port_table.c */
int port_table_init(struct vsw_switch *sw);
void port_table_fini(struct vsw_switch *sw);

/* rule_table.c */
int rule_table_init(struct vsw_switch *sw);
void rule_table_fini(struct vsw_switch *sw);

/* port_pair.c: fill t->pair from the live rules (sw->by_id, less the
 * dying ones) before t is published; all NULL if cfg.no_port_pair. */
void port_pair_build(const struct vsw_switch *sw, struct vsw_rule_table *t);

/* mac_learning.c */
struct vsw_mac_table *mac_table_create(uint32_t entries, uint32_t max_age);
void mac_table_destroy(struct vsw_mac_table *t);
uint32_t mac_table_epoch(const struct vsw_mac_table *t);
/* Learn src on in_port (PMD, lock-free); multicast sources are ignored. */
void mac_learn(struct vsw_mac_table *t, const uint8_t src[6],
	uint16_t in_port, uint32_t epoch);
/* Learned port, or -1. */
int mac_find(const struct vsw_mac_table *t, const uint8_t mac[6]);
unsigned mac_table_age(struct vsw_mac_table *t, uint64_t now);
void mac_table_flush_port(struct vsw_mac_table *t, int port);
unsigned mac_table_count(const struct vsw_mac_table *t);
/* Forget mac (whatever port it was learned on). */
void mac_table_forget(struct vsw_mac_table *t, const uint8_t mac[6]);
/* Every entry: its MAC, port and seconds since last seen (control). */
typedef void (*mac_walk_fn)(const uint8_t mac[6], int port, uint32_t age,
	void *arg);
void mac_table_walk(const struct vsw_mac_table *t, mac_walk_fn fn, void *arg);

/* switch_stats.c: a new port's counters start from zero. */
void port_stats_rebase(struct vsw_switch *sw, uint16_t port_no);

/* port_table.c: how each PMD sends to p (p->n_txq set); lock_all while a
 * tx queue count changes. */
void port_txq_plan(struct vsw_port *p, unsigned n_pmds, bool lock_all);

/* output_batch.c */
/* Make room for n more packets in every non-empty batch. */
void out_ensure_room(struct vsw_pmd *pmd, unsigned n);
void out_flush_all(struct vsw_pmd *pmd);
/* Send batch b now (it stays bound): for appends that may exceed one per
 * packet (the overlay's head-end replication to the underlay). */
void out_flush_one(struct vsw_pmd *pmd, struct vsw_out_batch *b);
/* The slow path of out_batch_get: the spread slot of the current rx queue
 * (in_queue % owned queues, per call, never per packet), and a batch bound
 * to (port, slot) if there is none yet. */
struct vsw_out_batch *out_batch_find(struct vsw_pmd *pmd, uint16_t port);

/* Send n packets of batch b (its port p and tx queue) and count them. */
void out_tx(struct vsw_pmd *pmd, const struct vsw_port *p,
	struct vsw_out_batch *b, struct rte_mbuf **pkts, uint16_t n);

/* offload.c: does any of pkts need an offload capa lacks? */
bool offload_needed(struct rte_mbuf *const *pkts, uint16_t n, uint32_t capa);
/* Send batch b to p, segmenting and completing checksums where capa
 * lacks what a packet needs; empties b. */
void offload_send(struct vsw_pmd *pmd, const struct vsw_port *p,
	struct vsw_out_batch *b, uint32_t capa);
/* Segment TSO packet m (left to the caller, unchanged) at mss (0: its own
 * tso_segsz) into complete packets from mp, each handed to emit in order;
 * *made = how many. 0; -EINVAL (metadata unusable: none made) or -ENOMEM
 * (mp ran dry after *made). */
typedef void (*offload_emit_fn)(void *arg, struct rte_mbuf *seg);
int offload_segment(struct rte_mempool *mp, const struct rte_mbuf *m,
	uint32_t mss, offload_emit_fn emit, void *arg, unsigned *made);
/* Complete m's partial TCP/UDP checksum: the packet (maybe a private copy
 * of a shared one), or NULL (freed) when that cannot be done. */
struct rte_mbuf *offload_csum(struct vsw_pmd *pmd, struct rte_mbuf *m);

/* actions.c: act on a classified burst; res[i] is packet i's rule (struct
 * vsw_sw_rule) or NULL (no rule: dropped and counted). */
void actions_burst(struct vsw_pmd *pmd, uint16_t in_port,
	struct rte_mbuf **pkts, const struct vsw_flow_key *keys,
	void *const *res, unsigned n);
/* All n packets hit rule r, which has no edits and no normal action (keys
 * are not needed): the port-pair fast path. */
void actions_rule_burst(struct vsw_pmd *pmd, const struct vsw_sw_rule *r,
	uint16_t in_port, struct rte_mbuf **pkts, unsigned n);
/* The dry run for vsw_trace_packet (vsw/trace.h). */
struct vsw_trace;
void actions_trace(const struct vsw_port_table *pt,
	const struct vsw_mac_table *mac, const struct vsw_sw_rule *r,
	uint16_t in_port, const struct vsw_flow_key *key, struct vsw_trace *t);
/* Compile the datapath form of rule (out_kind, ports, edits); -EINVAL if
 * the action list breaks the rules in vsw/rule.h. */
int actions_compile(struct vsw_sw_rule *r);

/*
 * The batch for present port `port` and the current burst's rx queue; append
 * without a bound check: out_ensure_room() made room. Inline only the common
 * case (rx queue 0, batch already bound): small enough that the actions
 * stay inlined; the spread slot and binding are out of line.
 */
static inline struct vsw_out_batch *
out_batch_get(struct vsw_pmd *pmd, uint16_t port)
{
	if (likely(pmd->in_queue == 0)) {
		unsigned idx = pmd->batch_of[port][0];

		if (likely(idx != 0))
			return &pmd->batch[idx - 1];
	}
	return out_batch_find(pmd, port);
}

#endif /* VSW_SWITCH_PRIV_H */

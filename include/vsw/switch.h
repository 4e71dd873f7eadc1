/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vsw switch core: a port table, a rule table, PMD threads that poll the
 * ports' rx queues, classify (EMC, then the wildcard classifier), run the
 * matched rule's actions and send through per-PMD output batches.
 *
 * Threads: one control thread calls every vsw_switch_* function (it must be
 * registered with liburcu-qsbr: rcu_register_thread()). PMDs run
 * vsw_pmd_poll_once() in a loop (vsw_switch_pmds_start() does that on DPDK
 * lcores) and read the port and rule tables under RCU; they take no locks
 * and allocate nothing. Every table change publishes a new version and
 * returns after a grace period: when vsw_switch_port_del() or a rule change
 * returns, no PMD still uses the old version.
 *
 * Packet accounting, per PMD: rx + clones = tx + every drop counter
 * (VSW_PMD_DROP_*); "clones" are the extra references made when one packet
 * goes to several ports.
 */
#ifndef VSW_SWITCH_H
#define VSW_SWITCH_H

#include <stdbool.h>
#include <stdint.h>

#include <vsw/rule.h>

struct rte_mbuf;

#define VSW_SWITCH_MAX_PORTS 256
#define VSW_SWITCH_MAX_PMDS 16
#define VSW_SWITCH_BURST 32
#define VSW_PORT_NAME_MAX 32

/*
 * A port as the switch sees it. port is the pointer given to
 * vsw_switch_port_add(). rx_burst returns how many mbufs it stored in pkts.
 * tx_burst returns how many of pkts it took (it owns those now); the switch
 * frees the rest and counts them as tx drops. A PMD uses tx queue
 * (pmd index % n_txq): with fewer tx queues than PMDs, tx_burst must be
 * safe for concurrent callers on one queue. rx queues are polled by one PMD
 * at a time.
 */
struct vsw_port_ops {
	uint16_t (*rx_burst)(void *port, uint16_t queue,
		struct rte_mbuf **pkts, uint16_t n);
	uint16_t (*tx_burst)(void *port, uint16_t queue,
		struct rte_mbuf **pkts, uint16_t n);
};

struct vsw_switch_config {
	unsigned n_pmds;                       /* 1..VSW_SWITCH_MAX_PMDS */
	unsigned pmd_lcores[VSW_SWITCH_MAX_PMDS]; /* for vsw_switch_pmds_start */
	uint32_t max_rules;           /* rule ids (per-PMD counter arrays) */
	uint32_t emc_entries;         /* per PMD; 0 = no EMC at all */
	uint32_t emc_insert_inv_prob; /* 1 = always, N = 1/N, 0 = never */
	uint32_t mac_entries;         /* MAC table size (power of two) */
	uint32_t mac_max_age;         /* seconds (in vsw_switch_mac_age units) */
};

/* Defaults: 1 PMD on lcore 1, 65536 rules, 8192 EMC entries, 1/100. */
void vsw_switch_config_init(struct vsw_switch_config *cfg);

struct vsw_switch;
struct vsw_pmd;

/* NULL on bad config (errno EINVAL) or allocation failure (ENOMEM). */
struct vsw_switch *vsw_switch_create(const struct vsw_switch_config *cfg);
/* PMDs must be stopped; ports still present are dropped (not closed). */
void vsw_switch_destroy(struct vsw_switch *sw);

/* ---- ports (control thread) ---- */

/*
 * Add a port; returns its number (lowest free) or -EEXIST (name taken),
 * -ENOSPC, -EINVAL, -ENOMEM. rx queues are spread over the PMDs round-robin.
 * ops and port must stay valid until vsw_switch_port_del() returns.
 */
int vsw_switch_port_add(struct vsw_switch *sw, const char *name,
	const struct vsw_port_ops *ops, void *port, uint16_t n_rxq,
	uint16_t n_txq);
/* Remove; when it returns no PMD touches the port. 0 or -ENOENT. */
int vsw_switch_port_del(struct vsw_switch *sw, uint16_t port_no);
/* Number of a port by name, or -ENOENT (a vsw_rule_port_lookup_fn with
 * arg = the switch). */
int vsw_switch_port_lookup(const char *name, void *sw);
/* Name of a port or NULL (a vsw_rule_port_name_fn with arg = the switch). */
const char *vsw_switch_port_name(uint16_t port_no, void *sw);
unsigned vsw_switch_n_ports(const struct vsw_switch *sw);

/* ---- rules (control thread); each call publishes once ---- */

/*
 * Add n rules at once (all or nothing). A rule whose match (key, mask,
 * priority) equals an existing one replaces its actions and keeps its
 * counters. 0, -ENOSPC (max_rules), -ENOMEM, -EINVAL (n_actions).
 */
int vsw_switch_rules_add(struct vsw_switch *sw, const struct vsw_rule *rules,
	unsigned n);
/* Delete the rule with exactly this match: 0 or -ENOENT. */
int vsw_switch_rule_del(struct vsw_switch *sw, const struct vsw_rule *match);
/* Replace the whole rule set by rules[0..n) in one publish. */
int vsw_switch_rules_replace(struct vsw_switch *sw,
	const struct vsw_rule *rules, unsigned n);
unsigned vsw_switch_n_rules(const struct vsw_switch *sw);

struct vsw_rule_stats {
	uint64_t packets;
	uint64_t bytes;
};
typedef void (*vsw_switch_rule_cb)(const struct vsw_rule *rule,
	const struct vsw_rule_stats *stats, void *arg);
/* Call cb for every rule, by descending priority. */
void vsw_switch_rules_dump(struct vsw_switch *sw, vsw_switch_rule_cb cb,
	void *arg);

/* ---- PMDs ---- */

struct vsw_pmd *vsw_switch_pmd(struct vsw_switch *sw, unsigned idx);
/* Launch every PMD on its lcore (rte_eal_remote_launch): 0 or -errno. */
int vsw_switch_pmds_start(struct vsw_switch *sw);
/* Stop and wait for every launched PMD. */
void vsw_switch_pmds_stop(struct vsw_switch *sw);

/*
 * One poll iteration: every rx queue assigned to this PMD, output batches
 * flushed, stats. Returns packets received. The calling thread must be a
 * registered RCU reader; it must call rcu_quiescent_state() between
 * iterations (vsw_pmd_main does both).
 */
unsigned vsw_pmd_poll_once(struct vsw_pmd *pmd);
/* lcore entry point: register, poll until stopped, unregister. */
int vsw_pmd_main(void *pmd);

/*
 * The switch path without I/O, for benchmarks and tests: classify and act
 * on n (<= VSW_SWITCH_BURST) packets that arrived on in_port; outputs go to
 * the output batches, which vsw_pmd_flush() sends. Same thread rules as
 * vsw_pmd_poll_once(); no quiescent state between process and flush.
 */
void vsw_pmd_process_burst(struct vsw_pmd *pmd, uint16_t in_port,
	struct rte_mbuf **pkts, unsigned n);
void vsw_pmd_flush(struct vsw_pmd *pmd);

/* ---- MAC learning (normal action) ---- */

/*
 * Advance the MAC table's clock to now (seconds, any monotonic origin) and
 * remove entries not seen for mac_max_age. Control thread or a timer; PMDs
 * learn concurrently without locks. Returns entries removed.
 */
unsigned vsw_switch_mac_age(struct vsw_switch *sw, uint64_t now);
/* Learned port of (mac) or -ENOENT. */
int vsw_switch_mac_lookup(struct vsw_switch *sw, const uint8_t mac[6]);
unsigned vsw_switch_mac_count(struct vsw_switch *sw);
void vsw_switch_mac_flush(struct vsw_switch *sw);

/* ---- stats (any thread; counters have one writer, the PMD) ---- */

/* Per-PMD counters: X(enum suffix, name). */
#define VSW_PMD_COUNTERS(X)                                                   \
	X(RX, "rx_packets")                                                   \
	X(EMC_HIT, "emc_hits")                                                \
	X(CLS_HIT, "classifier_hits")                                         \
	X(SUBTABLE_LOOKUPS, "subtable_lookups")                               \
	X(TX, "tx_packets")                                                   \
	X(CLONES, "multi_output_clones")                                      \
	X(DROP_NO_RULE, "drop_no_rule")                                       \
	X(DROP_ACTION, "drop_action")                                         \
	X(DROP_NO_OUTPUT, "drop_no_output")                                   \
	X(DROP_PORT_GONE, "drop_port_gone")                                   \
	X(DROP_VLAN, "drop_vlan_edit")                                        \
	X(DROP_TX_FULL, "drop_tx_full")                                       \
	X(BATCHES, "output_batches")                                          \
	X(BATCH_PKTS, "output_batch_packets")                                 \
	X(ITER_BUSY, "busy_iterations")                                       \
	X(ITER_IDLE, "idle_iterations")                                       \
	X(CYCLES_BUSY, "busy_cycles")                                         \
	X(CYCLES_IDLE, "idle_cycles")

enum vsw_pmd_counter {
#define VSW_PMD_COUNTER_ENUM(e, s) VSW_PMD_##e,
	VSW_PMD_COUNTERS(VSW_PMD_COUNTER_ENUM)
#undef VSW_PMD_COUNTER_ENUM
	VSW_PMD_N_COUNTERS
};

/* The drop reasons are the contiguous range [FIRST, LAST]. */
#define VSW_PMD_DROP_FIRST VSW_PMD_DROP_NO_RULE
#define VSW_PMD_DROP_LAST VSW_PMD_DROP_TX_FULL

const char *vsw_pmd_counter_name(enum vsw_pmd_counter c);

struct vsw_pmd_stats {
	uint64_t c[VSW_PMD_N_COUNTERS];
	/* Derived, as pmd-stats-show / pmd-perf-show print them. */
	double avg_subtable_lookups_per_hit;
	double avg_packets_per_batch;
	double cycles_per_packet; /* busy cycles / rx packets */
	double busy_ratio;        /* busy cycles / all cycles */
};

/* Counters since the last clear; -ENOENT if no such PMD. */
int vsw_switch_pmd_stats(struct vsw_switch *sw, unsigned pmd,
	struct vsw_pmd_stats *out);
/* Clear one PMD's counters (or all, pmd = -1): stores a baseline. */
void vsw_switch_pmd_stats_clear(struct vsw_switch *sw, int pmd);

struct vsw_port_stats {
	uint64_t rx;       /* received */
	uint64_t tx;       /* taken by the port's tx_burst */
	uint64_t tx_drops; /* refused by tx_burst, or port gone */
};
/* Summed over PMDs; -ENOENT if there is no such port. */
int vsw_switch_port_stats(struct vsw_switch *sw, uint16_t port_no,
	struct vsw_port_stats *out);

/* ---- in-memory ring port (tests, benchmarks, internal ports) ---- */

struct vsw_ring_port;
/* size: ring entries per direction (power of two). NULL on failure. */
struct vsw_ring_port *vsw_ring_port_create(const char *name, unsigned size);
/* Frees packets still queued. */
void vsw_ring_port_destroy(struct vsw_ring_port *p);
extern const struct vsw_port_ops vsw_ring_port_ops;
/* Queue packets for the switch to receive: returns how many fit. */
unsigned vsw_ring_port_inject(struct vsw_ring_port *p,
	struct rte_mbuf **pkts, unsigned n);
/* Take packets the switch sent to this port: returns how many. */
unsigned vsw_ring_port_collect(struct vsw_ring_port *p,
	struct rte_mbuf **pkts, unsigned n);
/* Make tx_burst accept at most this many per call (tests of tx drops). */
void vsw_ring_port_set_tx_limit(struct vsw_ring_port *p, unsigned limit);

#endif /* VSW_SWITCH_H */

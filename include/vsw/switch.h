/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vsw switch core: a port table, a rule table, PMD threads that poll the
 * ports' rx queues, classify (EMC, then the wildcard classifier), run the
 * matched rule's actions and send through per-PMD output batches.
 *
 * Threads: one control thread calls every vsw_switch_* function (it need
 * not be a liburcu-qsbr reader: it publishes and waits for grace periods;
 * if registered, it must not be inside a read-side section). PMDs run
 * vsw_pmd_poll_once() in a loop (vsw_switch_pmds_start() does that on DPDK
 * lcores) and read the port and rule tables under RCU; they allocate
 * nothing, and take no lock but the one around a tx queue that PMDs share
 * (vsw/port.h). Every table change publishes a new version and
 * returns after a grace period: when vsw_switch_port_del() or a rule change
 * returns, no PMD still uses the old version.
 *
 * Packet accounting, per PMD: rx + clones + sw_gso_extra_segments +
 * injected = tx + every drop counter (VSW_PMD_DROP_*); "clones" are the
 * extra references or copies made when one packet goes to several ports
 * (or VTEPs), sw_gso_extra_segments the packets software segmentation added
 * (k segments of one packet add k - 1), injected the packets the control
 * thread made (the overlay's ARP requests). drop_overlay counts the
 * overlay's drops (by reason in vsw_switch_overlay_stats) and the ARP
 * replies to the local VTEP it consumed.
 */
#ifndef VSW_SWITCH_H
#define VSW_SWITCH_H

#include <stdbool.h>
#include <stdint.h>

#include <vsw/pmd.h>
#include <vsw/port.h>
#include <vsw/rule.h>
#include <vsw/watchdog.h>


#define VSW_SWITCH_MAX_PORTS 256
#define VSW_SWITCH_MAX_PMDS 16
#define VSW_SWITCH_BURST 32
/* Owned tx queues of one port a PMD spreads its bursts over, at most. */
#define VSW_SWITCH_TXQ_SPREAD 16
/* rx queues per port whose cycles PMDs measure (and a rebalance places). */
#define VSW_SWITCH_RXQ_MEASURED 16

struct vsw_switch_config {
	unsigned n_pmds;                       /* 1..VSW_SWITCH_MAX_PMDS */
	unsigned pmd_lcores[VSW_SWITCH_MAX_PMDS]; /* for vsw_switch_pmds_start */
	uint32_t max_rules;           /* rule ids (per-PMD counter arrays) */
	uint32_t emc_entries;         /* per PMD; 0 = no EMC at all */
	uint32_t emc_insert_inv_prob; /* 1 = always, N = 1/N, 0 = never */
	uint32_t mac_entries;         /* MAC table size (power of two) */
	uint32_t mac_max_age;         /* seconds (in vsw_switch_mac_age units) */
	/* Mbufs for software segmentation and checksum completion (for a
	 * destination without the offload a packet carries); NULL: such
	 * packets are dropped (drop_offload). Must outlive the switch. */
	struct rte_mempool *seg_pool;
	/* The PMD watchdog (vsw/watchdog.h): a PMD inside a watched syscall
	 * for longer than this is signalled out of it; 0: no watchdog. */
	uint32_t watchdog_bound_us;
	/* Called on each PMD thread before its loop with its watchdog slot
	 * (vswd: vsw_vport_pmd_bind); NULL: none. */
	void (*pmd_thread_init)(struct vsw_watchdog_slot *slot);
	/* true: never take the port-pair fast path (an in_port whose only
	 * reachable rule is "in_port=X, actions=output:Y" skips flow extract,
	 * EMC and classifier; counted in port_pair_hits). For A/B tests. */
	bool no_port_pair;
};

/* Defaults: 1 PMD on lcore 1, 65536 rules, 8192 EMC entries, 1/100, a
 * watchdog bound of VSW_WATCHDOG_BOUND_US. */
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
 * -ENOSPC, -EINVAL, -ENOMEM. rx queues are spread over the PMDs round-robin;
 * tx queues are owned or shared as vsw/port.h says (a PMD spreads over at
 * most VSW_SWITCH_TXQ_SPREAD of its owned queues). ops and port must stay
 * valid until vsw_switch_port_del() returns.
 */
int vsw_switch_port_add(struct vsw_switch *sw, const char *name,
	const struct vsw_port_ops *ops, void *port, uint16_t n_rxq,
	uint16_t n_txq);
/*
 * Change a port's queue counts (e.g. a guest enabled more queues); rx queues
 * are reassigned to PMDs. When it returns, no PMD polls a queue that is gone.
 * A change of n_txq passes through versions that lock every tx queue, so a
 * PMD on the old table and one on the new never send on a queue at once.
 * 0, -ENOENT, -EINVAL (n_txq 0), -ENOMEM.
 */
int vsw_switch_port_set_queues(struct vsw_switch *sw, uint16_t port_no,
	uint16_t n_rxq, uint16_t n_txq);
/* Remove; when it returns no PMD touches the port. 0 or -ENOENT. */
int vsw_switch_port_del(struct vsw_switch *sw, uint16_t port_no);
/* Number of a port by name, or -ENOENT (a vsw_rule_port_lookup_fn with
 * arg = the switch). */
int vsw_switch_port_lookup(const char *name, void *sw);
/* Name of a port or NULL (a vsw_rule_port_name_fn with arg = the switch). */
const char *vsw_switch_port_name(uint16_t port_no, void *sw);
unsigned vsw_switch_n_ports(const struct vsw_switch *sw);
/*
 * Port numbers and deleted ports: rules that name a deleted port stay (as
 * in OVS: an in_port= match then never matches, an output: to it drops,
 * counted as port_gone). A port added again under the same name gets its
 * old number back, so those rules apply again; a new name gets the lowest
 * free number no rule names (the lowest free one if every one is named).
 * gone_name: the deleted port that last had port_no, or NULL (a port has
 * it, or none ever did).
 */
const char *vsw_switch_port_gone_name(const struct vsw_switch *sw,
	uint16_t port_no);
/* Which PMD polls rx queue (port_no, queue): its index, or -ENOENT.
 * Control thread (pmd-rxq-show). */
int vsw_switch_rxq_pmd(const struct vsw_switch *sw, uint16_t port_no,
	uint16_t queue);

/*
 * Busy cycles rx queue (port_no, queue) cost its PMDs since the port was
 * added or the last rebalance: receive, switch, and its share (by packets)
 * of the output flush. 0 or -ENOENT. Control thread.
 */
int vsw_switch_rxq_cycles(const struct vsw_switch *sw, uint16_t port_no,
	uint16_t queue, uint64_t *cycles);

enum vsw_rxq_assign {
	VSW_RXQ_ASSIGN_ROUNDROBIN, /* ports in number order, then queues */
	VSW_RXQ_ASSIGN_CYCLES,	   /* by measured cycles (OVS "cycles") */
};
/*
 * Reassign every rx queue to the PMDs and publish: by measured cycles
 * (vsw_switch_rxq_assign_cycles on vsw_switch_rxq_cycles) or back to
 * round-robin. Queues added later go round-robin. Starts a new measuring
 * interval. 0 or -ENOMEM (nothing changed).
 */
int vsw_switch_rxq_rebalance(struct vsw_switch *sw, enum vsw_rxq_assign how);
/*
 * The assignment itself (pure, for tests): queues by descending load (ties:
 * lower index first), each to the PMD with the least load so far (ties:
 * fewer queues, then lower index). pmd_of[i] gets queue i's PMD.
 * 0 or -ENOMEM.
 */
int vsw_switch_rxq_assign_cycles(
	const uint64_t *load, unsigned n, unsigned n_pmds, uint8_t *pmd_of);

/* ---- rules (control thread); each call publishes once ---- */

/*
 * Add n rules at once (all or nothing). A rule whose match (key, mask,
 * priority) equals an existing one replaces its actions and keeps its
 * counters. 0, -ENOSPC (max_rules), -ENOMEM, -EINVAL (priority, or an
 * action list vsw_rule_parse() would refuse: see vsw/rule.h).
 */
int vsw_switch_rules_add(struct vsw_switch *sw, const struct vsw_rule *rules,
	unsigned n);
/* Delete the rule with exactly this match: 0 or -ENOENT. */
int vsw_switch_rule_del(struct vsw_switch *sw, const struct vsw_rule *match);
/*
 * Delete every rule that matches at least the fields match names, with the
 * same values (ovs-ofctl del-flows without --strict; priority ignored; an
 * empty match deletes all). Returns how many, or -ENOMEM (none deleted).
 */
int vsw_switch_rules_del_matching(struct vsw_switch *sw,
	const struct vsw_rule *match);
/* Replace the whole rule set by rules[0..n) in one publish. */
int vsw_switch_rules_replace(struct vsw_switch *sw,
	const struct vsw_rule *rules, unsigned n);
unsigned vsw_switch_n_rules(const struct vsw_switch *sw);

/*
 * Re-rank the classifier's subtables by the hits the PMDs counted since the
 * last publish (among equal maximum priority, more hits first) and publish
 * the re-ordered copy; EMCs stay valid. Call it periodically (e.g. every
 * second from a timer). 0 or -ENOMEM.
 */
int vsw_switch_rerank(struct vsw_switch *sw);

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

/* EMC insertion probability 1/inv_prob for every PMD (0 = never insert);
 * PMDs apply it at their next iteration. No effect if emc_entries was 0. */
void vsw_switch_set_emc_insert_inv_prob(struct vsw_switch *sw,
	uint32_t inv_prob);

/*
 * Idle back-off (OVS's pmd-sleep-max): a PMD whose iteration received
 * nothing sleeps 1, 2, 4 ... microseconds, at most max_us, and polls at
 * full speed again from the first packet. It goes RCU-offline while it
 * sleeps, so it never holds up a grace period. 0 (the default) = never
 * sleep. PMDs read it every iteration. At most VSW_SWITCH_SLEEP_MAX_US.
 */
#define VSW_SWITCH_SLEEP_MAX_US 10000
int vsw_switch_set_pmd_sleep_max(struct vsw_switch *sw, uint32_t max_us);
uint32_t vsw_switch_pmd_sleep_max(const struct vsw_switch *sw);

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
	uint64_t tx;       /* delivered by the port's tx_burst */
	uint64_t tx_drops; /* not delivered by tx_burst, or port gone */
	/* Software offloads for this destination (it could not take them):
	 * TSO frames segmented, the segments they became, partial checksums
	 * completed, and packets dropped because segmentation was
	 * impossible (the PMD's drop_offload, per port). */
	uint64_t sw_gso_packets;
	uint64_t sw_gso_segments;
	uint64_t sw_csum_packets;
	uint64_t sw_offload_drops;
};
/* Summed over PMDs; -ENOENT if there is no such port. */
int vsw_switch_port_stats(struct vsw_switch *sw, uint16_t port_no,
	struct vsw_port_stats *out);

/* ---- overlay: VXLAN L2 domains (l2domain.c; datapath l2domain_dp.c) ----
 *
 * One local VTEP per switch on an underlay port; L2 domains by VNI. A
 * local port that joins a domain has its frames switched inside it
 * (per-domain MAC learning; unknown, broadcast and multicast flooded to
 * the domain's other local ports and, one copy each, to its VTEPs) instead
 * of through the rule table. Frames from the underlay that are VXLAN to the
 * local IP with a known VNI are decapsulated and switched in their domain
 * (to local ports only: split horizon); ARP requests for the local IP are
 * answered; everything else from the underlay follows the rule table.
 * Control thread only, each call publishes (RCU) and returns after a grace
 * period. IPs in host order.
 */
#define VSW_SWITCH_MAX_DOMAINS 1024
#define VSW_SWITCH_MAX_VTEPS 256      /* distinct remote VTEPs in all */
#define VSW_SWITCH_DOMAIN_PORTS 64    /* local ports per domain */
#define VSW_SWITCH_DOMAIN_VTEPS 64    /* flood list per domain */
#define VSW_SWITCH_DOMAIN_RMACS 65536 /* remote MACs per domain */
#define VSW_SWITCH_DOMAIN_MAC_ENTRIES 4096 /* learned local MACs (table) */

struct vsw_overlay_config {
	uint16_t underlay;    /* port number of the underlay (an ethdev) */
	uint32_t local_ip;    /* != 0 */
	uint8_t local_mac[6]; /* the underlay port's MAC */
	uint16_t mtu;         /* underlay MTU: inner frames <= mtu - 36 */
};
/* 0, -ENOENT (no such port), -EBUSY (a domain port), -EINVAL. */
int vsw_switch_overlay_set(struct vsw_switch *sw,
	const struct vsw_overlay_config *c);
/* 0, or -ENOENT when overlay_set was never called. */
int vsw_switch_overlay_get(const struct vsw_switch *sw,
	struct vsw_overlay_config *c);

/* 0, -EEXIST, -EINVAL (vni 0 or > 2^24 - 1), -ENOSPC, -ENOMEM. */
int vsw_switch_domain_add(struct vsw_switch *sw, uint32_t vni);
/* 0 or -ENOENT; its ports go back to the rule table. */
int vsw_switch_domain_del(struct vsw_switch *sw, uint32_t vni);
/* 0, -ENOENT (domain or port), -EEXIST, -EBUSY (in another domain, or the
 * underlay), -ENOSPC. Leaving forgets the port's learned MACs. */
int vsw_switch_domain_port_add(struct vsw_switch *sw, uint32_t vni,
	uint16_t port_no);
int vsw_switch_domain_port_del(struct vsw_switch *sw, uint32_t vni,
	uint16_t port_no);
/* A remote VTEP in the flood list: 0, -ENOENT, -EEXIST, -EINVAL, -ENOSPC. */
int vsw_switch_vtep_add(struct vsw_switch *sw, uint32_t vni, uint32_t ip);
int vsw_switch_vtep_del(struct vsw_switch *sw, uint32_t vni, uint32_t ip);
/* A remote MAC behind VTEP ip (replaces an older entry for mac; when it is
 * new or moved, a local learned entry for mac is forgotten: the MAC is
 * elsewhere now; local learning afterwards wins again). 0, -ENOENT,
 * -EINVAL (multicast or zero MAC, ip 0 or the local IP), -ENOSPC. */
int vsw_switch_domain_mac_add(struct vsw_switch *sw, uint32_t vni,
	const uint8_t mac[6], uint32_t ip);
int vsw_switch_domain_mac_del(struct vsw_switch *sw, uint32_t vni,
	const uint8_t mac[6]);

/* Per domain, summed over PMDs. */
struct vsw_domain_stats {
	uint64_t rx_local;  /* frames from local ports */
	uint64_t rx_vxlan;  /* decapsulated frames */
	uint64_t tx_local;  /* frames handed to local ports */
	uint64_t tx_vxlan;  /* encapsulated frames */
	uint64_t flooded;   /* frames flooded (once per frame) */
	uint64_t flood_copies; /* what they became: local ports + VTEPs */
	uint64_t drops;
};
struct vsw_domain_info {
	uint32_t vni;
	uint16_t n_ports;
	uint16_t ports[VSW_SWITCH_DOMAIN_PORTS];
	uint16_t n_vteps;
	uint32_t vteps[VSW_SWITCH_DOMAIN_VTEPS];
	uint32_t n_remote_macs;
	uint32_t n_local_macs; /* learned, not aged out yet */
	struct vsw_domain_stats stats;
};
/* VNIs in ascending order into vnis[0..max); returns how many exist. */
unsigned vsw_switch_domains(const struct vsw_switch *sw, uint32_t *vnis,
	unsigned max);
/* 0 or -ENOENT. */
int vsw_switch_domain_get(const struct vsw_switch *sw, uint32_t vni,
	struct vsw_domain_info *info);
/* Every MAC of a domain: learned local ones (remote false, port, age in
 * seconds) and remote ones (remote true, vtep_ip). 0 or -ENOENT. */
typedef void (*vsw_switch_domain_mac_cb)(const uint8_t mac[6], bool remote,
	uint16_t port, uint32_t vtep_ip, uint32_t age_s, void *arg);
int vsw_switch_domain_macs(const struct vsw_switch *sw, uint32_t vni,
	vsw_switch_domain_mac_cb cb, void *arg);

/* Overlay counters summed over PMDs (the control thread's too). */
#define VSW_OVERLAY_COUNTERS(X)                                               \
	X(ENCAP, "vxlan_encap")                                               \
	X(DECAP, "vxlan_decap")                                               \
	X(NO_NEIGH, "vxlan_no_neigh")                                         \
	X(TOO_BIG, "vxlan_too_big")                                           \
	X(OFFLOAD, "vxlan_offload")                                           \
	X(COPY_FAIL, "vxlan_copy_fail")                                       \
	X(BAD_IP, "vxlan_bad_ip")                                             \
	X(TRUNCATED, "vxlan_truncated")                                       \
	X(BAD_CSUM, "vxlan_bad_csum")                                         \
	X(FRAGMENT, "vxlan_fragment")                                         \
	X(TTL, "vxlan_ttl")                                                   \
	X(BAD_UDP, "vxlan_bad_udp")                                           \
	X(BAD_FLAGS, "vxlan_bad_flags")                                       \
	X(UNKNOWN_VNI, "vxlan_unknown_vni")                                   \
	X(SPLIT_HORIZON, "domain_split_horizon")                              \
	X(NO_OUTPUT, "domain_no_output")                                      \
	X(ARP_REPLIED, "arp_replies_sent")                                    \
	X(ARP_CONSUMED, "arp_replies_consumed")                               \
	X(ARP_BAD, "arp_drops")                                               \
	X(ARP_REQUESTS, "arp_requests_sent")                                  \
	X(ARP_REQ_FAIL, "arp_request_failures")                               \
	X(NEIGH_LEARNED, "neigh_learned")                                     \
	X(NEIGH_CHANGED, "neigh_mac_changed")                                 \
	X(ARP_REFRESH, "arp_refreshes_sent")                                  \
	X(NEIGH_EXPIRED, "neigh_expired")

enum vsw_overlay_counter {
#define VSW_OVERLAY_COUNTER_ENUM(e, s) VSW_OVERLAY_##e,
	VSW_OVERLAY_COUNTERS(VSW_OVERLAY_COUNTER_ENUM)
#undef VSW_OVERLAY_COUNTER_ENUM
	VSW_OVERLAY_N_COUNTERS
};
const char *vsw_overlay_counter_name(enum vsw_overlay_counter c);
void vsw_switch_overlay_stats(const struct vsw_switch *sw,
	uint64_t out[VSW_OVERLAY_N_COUNTERS]);

struct vsw_overlay_neigh {
	uint32_t ip;
	bool known;
	uint8_t mac[6];
	uint32_t refs; /* flood-list entries and remote MACs naming it */
};
/* Remote VTEPs into out[0..max); returns how many there are. */
unsigned vsw_switch_overlay_neighs(const struct vsw_switch *sw,
	struct vsw_overlay_neigh *out, unsigned max);
/*
 * Once a second (any monotonic seconds): an ARP request for each remote
 * VTEP whose MAC is unknown, built here and sent by PMD 0 at its next
 * iteration (counted as injected). A known VTEP not heard from at its MAC
 * (ARP from it, or VXLAN whose outer source is that MAC) for
 * VSW_OVERLAY_REFRESH_SEC is asked again (arp_refreshes_sent), once a
 * second, VSW_OVERLAY_REFRESH_PROBES times; the answer keeps it, or moves
 * it to a new MAC (neigh_mac_changed: an underlay NIC replaced); with no
 * answer its MAC is forgotten (neigh_expired) and asked for as unknown.
 * Also ages the domains' learned MACs like vsw_switch_mac_age.
 */
#define VSW_OVERLAY_REFRESH_SEC 60
#define VSW_OVERLAY_REFRESH_PROBES 3
void vsw_switch_overlay_tick(struct vsw_switch *sw, uint64_t now);

#endif /* VSW_SWITCH_H */

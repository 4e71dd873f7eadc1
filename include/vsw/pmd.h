/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vsw PMD threads: the poll loop of the switch core (vsw/switch.h creates
 * and configures them) and the per-PMD counters it keeps.
 *
 * A PMD owns its counters, its output batches (one per destination port and
 * tx queue) and its EMC; it reads the switch's published port and rule
 * tables under liburcu-qsbr. Its only lock is the per (port, tx queue)
 * spinlock around tx_burst on a queue that PMDs share (fewer tx queues than
 * PMDs, see vsw/port.h), counted in txq_lock_sends / txq_lock_contended.
 */
#ifndef VSW_PMD_H
#define VSW_PMD_H

#include <stdint.h>

struct rte_mbuf;
struct vsw_pmd;

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
/* in_port < VSW_SWITCH_MAX_PORTS; the burst came in on rx queue 0. */
void vsw_pmd_process_burst(struct vsw_pmd *pmd, uint16_t in_port,
	struct rte_mbuf **pkts, unsigned n);
/* The same for a burst received on rx queue in_queue of in_port: it leaves
 * each destination on the tx queue vsw/port.h describes. */
void vsw_pmd_process_rxq(struct vsw_pmd *pmd, uint16_t in_port,
	uint16_t in_queue, struct rte_mbuf **pkts, unsigned n);
void vsw_pmd_flush(struct vsw_pmd *pmd);

/* Per-PMD counters: X(enum suffix, name). */
#define VSW_PMD_COUNTERS(X)                                                   \
	X(RX, "rx_packets")                                                   \
	X(EMC_HIT, "emc_hits")                                                \
	X(CLS_HIT, "classifier_hits")                                         \
	X(PAIR_HIT, "port_pair_hits")                                         \
	X(SUBTABLE_LOOKUPS, "subtable_lookups")                               \
	X(TX, "tx_packets")                                                   \
	X(CLONES, "multi_output_clones")                                      \
	X(GSO_EXTRA, "sw_gso_extra_segments")                                 \
	X(DROP_NO_RULE, "drop_no_rule")                                       \
	X(DROP_ACTION, "drop_action")                                         \
	X(DROP_NO_OUTPUT, "drop_no_output")                                   \
	X(DROP_PORT_GONE, "drop_port_gone")                                   \
	X(DROP_VLAN, "drop_vlan_edit")                                        \
	X(DROP_OFFLOAD, "drop_offload")                                       \
	X(DROP_OVERLAY, "drop_overlay")                                       \
	X(DROP_TX_UNDELIVERED, "drop_tx_undelivered")                         \
	X(BATCHES, "output_batches")                                          \
	X(BATCH_PKTS, "output_batch_packets")                                 \
	X(TXQ_LOCKED, "txq_lock_sends")                                       \
	X(TXQ_CONTENDED, "txq_lock_contended")                                \
	X(ITER_BUSY, "busy_iterations")                                       \
	X(ITER_IDLE, "idle_iterations")                                       \
	X(CYCLES_BUSY, "busy_cycles")                                         \
	X(CYCLES_IDLE, "idle_cycles")                                         \
	X(SLEEPS, "sleeps")                                                   \
	X(CYCLES_SLEEP, "sleep_cycles")                                       \
	X(SW_GSO, "sw_gso_packets")                                           \
	X(SW_CSUM, "sw_csum_packets")                                         \
	X(INJECTED, "injected_packets")                                       \
	X(WATCHDOG_SIGNALS, "watchdog_signals")

enum vsw_pmd_counter {
#define VSW_PMD_COUNTER_ENUM(e, s) VSW_PMD_##e,
	VSW_PMD_COUNTERS(VSW_PMD_COUNTER_ENUM)
#undef VSW_PMD_COUNTER_ENUM
	VSW_PMD_N_COUNTERS
};

/* The drop reasons are the contiguous range [FIRST, LAST]. */
#define VSW_PMD_DROP_FIRST VSW_PMD_DROP_NO_RULE
#define VSW_PMD_DROP_LAST VSW_PMD_DROP_TX_UNDELIVERED

const char *vsw_pmd_counter_name(enum vsw_pmd_counter c);

#endif /* VSW_PMD_H */

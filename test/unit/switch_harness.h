/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test harness for the switch-core tests: an EAL, a mempool, a switch with
 * in-memory ring ports, packet builders, single-threaded polling and the
 * accounting identity check shared by test_switch.c and test_switch_rules.c.
 */
#ifndef VSW_TEST_SWITCH_HARNESS_H
#define VSW_TEST_SWITCH_HARNESS_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include <vsw/switch.h>

#define MAX_TP 6
#define PKT_LEN 64

extern struct rte_mempool *pool;
extern const uint8_t bcast[6];
/* Ring port size for ctx_new() (each direction). */
extern unsigned harness_ring_size;
/* MAC table size for ctx_new(). */
extern uint32_t harness_mac_entries;
/* ctx_new() switches without the port-pair fast path (the reference). */
extern bool harness_no_port_pair;

struct ctx {
	struct vsw_switch *sw;
	struct vsw_port_ring *rp[MAX_TP];
	unsigned n_ports;
	unsigned n_pmds;
	bool port_sums_off; /* port deleted or PMD stats cleared */
};

/* A switch with n_ports ring ports p0.. (numbers 0..); asserts success. */
struct ctx *ctx_new(unsigned n_pmds, unsigned n_ports, uint32_t emc_inv_prob);
/* Destroy; asserts the mempool's in-use count is back at zero. */
void ctx_free(struct ctx *c);
void add_rule(struct ctx *c, const char *text);
void host_mac(unsigned h, uint8_t mac[6]);
/* Ethernet [+ 802.1Q] + IPv4 + UDP + 4-byte sequence number, len bytes. */
struct rte_mbuf *mk_pkt(const uint8_t dst[6], const uint8_t src[6], int vlan,
	uint32_t dip, uint32_t seq, uint16_t len);
uint32_t pkt_seq(const struct rte_mbuf *m);
void inject(struct ctx *c, unsigned port, struct rte_mbuf **pkts, unsigned n);
void poll_all(struct ctx *c);
unsigned collect(struct ctx *c, unsigned port, struct rte_mbuf **out,
	unsigned max);
void free_all(struct rte_mbuf **m, unsigned n);
void pmd_stats(struct ctx *c, unsigned pmd, struct vsw_pmd_stats *s);
/* rx + clones + injected = tx + drops on every PMD; port sums match PMD sums. */
void check_identity(struct ctx *c);
struct vsw_rule_stats rule_stats(struct ctx *c, const char *text);
/* Send k packets to dst IP on port 0; bitmap of ports reached. */
unsigned send_ip(struct ctx *c, uint32_t dip, unsigned k);
int harness_setup(const char *prefix);
int harness_teardown(void **state);

#endif /* VSW_TEST_SWITCH_HARNESS_H */

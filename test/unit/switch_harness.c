/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared switch-core test harness (see switch_harness.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rte_eal.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_pause.h>
#include <urcu-qsbr.h>

#include <vsw/switch.h>

#include "switch_harness.h"

struct rte_mempool *pool;
unsigned harness_ring_size = 1024;
uint32_t harness_mac_entries = 4096;
bool harness_no_port_pair;

struct ctx *
ctx_new(unsigned n_pmds, unsigned n_ports, uint32_t emc_inv_prob)
{
	struct vsw_switch_config cfg;
	struct ctx *c = calloc(1, sizeof(*c));
	unsigned i;

	assert_non_null(c);
	vsw_switch_config_init(&cfg);
	cfg.n_pmds = n_pmds;
	cfg.pmd_lcores[0] = 1;
	cfg.max_rules = 1024;
	cfg.emc_entries = 1024;
	cfg.emc_insert_inv_prob = emc_inv_prob;
	cfg.mac_max_age = 10;
	cfg.mac_entries = harness_mac_entries;
	cfg.seg_pool = pool; /* software segmentation (test_offload) */
	cfg.no_port_pair = harness_no_port_pair;
	c->sw = vsw_switch_create(&cfg);
	assert_non_null(c->sw);
	c->n_ports = n_ports;
	c->n_pmds = n_pmds;
	for (i = 0; i < n_ports; i++) {
		char name[16];

		snprintf(name, sizeof(name), "p%u", i);
		c->rp[i] = vsw_port_ring_create(name, harness_ring_size);
		assert_non_null(c->rp[i]);
		assert_int_equal(vsw_switch_port_add(c->sw, name,
					 &vsw_port_ring_ops, c->rp[i], 1, 1),
			(int)i);
	}
	return c;
}

/* Destroy everything and check that no mbuf leaked or was freed twice. */
void
ctx_free(struct ctx *c)
{
	unsigned i;

	for (i = 0; i < c->n_ports; i++)
		if (c->rp[i] != NULL)
			vsw_switch_port_del(c->sw, (uint16_t)i);
	for (i = 0; i < c->n_ports; i++)
		vsw_port_ring_destroy(c->rp[i]);
	vsw_switch_destroy(c->sw);
	free(c);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

void
add_rule(struct ctx *c, const char *text)
{
	struct vsw_rule r;
	char err[256];

	if (vsw_rule_parse(text, 0, vsw_switch_port_lookup, c->sw, &r, err,
		    sizeof(err)) != 0)
		fail_msg("rule '%s': %s", text, err);
	assert_int_equal(vsw_switch_rules_add(c->sw, &r, 1), 0);
}

const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

void
host_mac(unsigned h, uint8_t mac[6])
{
	static const uint8_t base[6] = {0x02, 0, 0, 0, 0, 0};

	memcpy(mac, base, 6);
	mac[5] = (uint8_t)(h + 1);
}

/* Ethernet [+ 802.1Q] + IPv4 + UDP + 4-byte sequence number, len bytes. */
struct rte_mbuf *
mk_pkt(const uint8_t dst[6], const uint8_t src[6], int vlan, uint32_t dip,
	uint32_t seq, uint16_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	uint8_t *d;
	unsigned o = 12;
	uint16_t v;

	assert_non_null(m);
	d = (uint8_t *)rte_pktmbuf_append(m, len);
	assert_non_null(d);
	memset(d, 0, len);
	memcpy(d, dst, 6);
	memcpy(d + 6, src, 6);
	if (vlan >= 0) {
		v = htons(0x8100);
		memcpy(d + o, &v, 2);
		v = htons((uint16_t)vlan);
		memcpy(d + o + 2, &v, 2);
		o += 4;
	}
	v = htons(0x0800);
	memcpy(d + o, &v, 2);
	o += 2;
	d[o] = 0x45;
	v = htons((uint16_t)(len - o));
	memcpy(d + o + 2, &v, 2);
	d[o + 8] = 64;
	d[o + 9] = 17;
	memcpy(d + o + 12, "\x01\x01\x01\x01", 4);
	dip = htonl(dip);
	memcpy(d + o + 16, &dip, 4);
	o += 20;
	v = htons(1000);
	memcpy(d + o, &v, 2);
	v = htons(2000);
	memcpy(d + o + 2, &v, 2);
	v = htons((uint16_t)(len - o));
	memcpy(d + o + 4, &v, 2);
	memcpy(d + o + 8, &seq, 4);
	return m;
}

uint32_t
pkt_seq(const struct rte_mbuf *m)
{
	uint8_t buf[64];
	const uint8_t *d = rte_pktmbuf_read(m, 0, 60, buf);
	unsigned o = 12;
	uint32_t seq;

	assert_non_null(d);
	while (d[o] == 0x81 || d[o] == 0x88)
		o += 4;
	memcpy(&seq, d + o + 2 + 20 + 8, 4);
	return seq;
}

void
inject(struct ctx *c, unsigned port, struct rte_mbuf **pkts, unsigned n)
{
	assert_int_equal(vsw_port_ring_inject(c->rp[port], pkts, n), n);
}

/* Single-threaded PMD iterations until every PMD is idle. */
void
poll_all(struct ctx *c)
{
	unsigned i, got;

	do {
		got = 0;
		for (i = 0; i < c->n_pmds; i++)
			got += vsw_pmd_poll_once(vsw_switch_pmd(c->sw, i));
		rcu_quiescent_state();
	} while (got > 0);
}

unsigned
collect(struct ctx *c, unsigned port, struct rte_mbuf **out, unsigned max)
{
	return vsw_port_ring_collect(c->rp[port], out, max);
}

void
free_all(struct rte_mbuf **m, unsigned n)
{
	rte_pktmbuf_free_bulk(m, n);
}

void
pmd_stats(struct ctx *c, unsigned pmd, struct vsw_pmd_stats *s)
{
	assert_int_equal(vsw_switch_pmd_stats(c->sw, pmd, s), 0);
}

/* rx + clones + injected = tx + drops on every PMD; port sums match PMD sums. */
void
check_identity(struct ctx *c)
{
	uint64_t rx = 0, tx = 0, prx = 0, ptx = 0;
	unsigned i, d;

	for (i = 0; i < c->n_pmds; i++) {
		struct vsw_pmd_stats s;
		uint64_t drops = 0;

		pmd_stats(c, i, &s);
		for (d = VSW_PMD_DROP_FIRST; d <= VSW_PMD_DROP_LAST; d++)
			drops += s.c[d];
		assert_int_equal(s.c[VSW_PMD_RX] + s.c[VSW_PMD_CLONES] +
				s.c[VSW_PMD_GSO_EXTRA] + s.c[VSW_PMD_INJECTED],
			s.c[VSW_PMD_TX] + drops);
		rx += s.c[VSW_PMD_RX];
		tx += s.c[VSW_PMD_TX];
	}
	for (i = 0; i < c->n_ports; i++) {
		struct vsw_port_stats ps;

		if (vsw_switch_port_stats(c->sw, (uint16_t)i, &ps) < 0)
			continue;
		prx += ps.rx;
		ptx += ps.tx;
	}
	if (!c->port_sums_off) {
		assert_int_equal(rx, prx);
		assert_int_equal(tx, ptx);
	}
}

struct dump_find {
	const char *text;
	struct vsw_rule_stats st;
	int found;
};

static void
dump_cb(const struct vsw_rule *r, const struct vsw_rule_stats *st, void *arg)
{
	struct dump_find *f = arg;
	struct vsw_rule want;

	assert_int_equal(
		vsw_rule_parse(f->text, 0, NULL, NULL, &want, NULL, 0), 0);
	if (vsw_rule_match_equal(r, &want)) {
		f->st = *st;
		f->found++;
	}
}

struct vsw_rule_stats
rule_stats(struct ctx *c, const char *text)
{
	struct dump_find f = {text, {0, 0}, 0};

	vsw_switch_rules_dump(c->sw, dump_cb, &f);
	assert_int_equal(f.found, 1);
	return f.st;
}

/* Send k packets to dst IP on port 0; bitmap of ports reached. */
unsigned
send_ip(struct ctx *c, uint32_t dip, unsigned k)
{
	struct rte_mbuf *in[32], *out[32];
	uint8_t a[6], b[6];
	unsigned i, p, got = 0, n;

	host_mac(0, a);
	host_mac(1, b);
	for (i = 0; i < k; i++)
		in[i] = mk_pkt(b, a, -1, dip, i, PKT_LEN);
	inject(c, 0, in, k);
	poll_all(c);
	for (p = 0; p < c->n_ports; p++) {
		n = collect(c, p, out, 32);
		if (n > 0) {
			assert_int_equal(n, k);
			got |= 1u << p;
		}
		free_all(out, n);
	}
	return got;
}

int
harness_setup(const char *prefix)
{
	char fp[64];
	char *argv[] = {"test_switch", "--no-huge", "-m", "256", "--no-pci",
		"--no-shconf", fp, "-l", "0,1", "--log-level=*:error"};

	snprintf(fp, sizeof(fp), "--file-prefix=%s", prefix);
	if (rte_eal_init(sizeof(argv) / sizeof(argv[0]), argv) < 0)
		return -1;
	pool = rte_pktmbuf_pool_create("test_switch", 8191, 0, 0,
		RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	if (pool == NULL)
		return -1;
	rcu_register_thread();
	return 0;
}

int
harness_teardown(void **state)
{
	(void)state;
	rcu_unregister_thread();
	rte_mempool_free(pool);
	rte_eal_cleanup();
	return 0;
}

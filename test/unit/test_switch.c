/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Switch core through its public API with in-memory ring ports: output,
 * multi-output by reference count, drop reasons, normal (against a reference
 * learning switch), aging, VLAN push/strip byte-exact, output batching, rule
 * and port changes, per-PMD accounting (rx + clones = tx + drops), and a PMD
 * lcore classifying while the rule set is replaced thousands of times.
 * Every test ends with the mempool's in-use count back at zero.
 */
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

#define MAX_TP 6
#define PKT_LEN 64

static struct rte_mempool *pool;

struct ctx {
	struct vsw_switch *sw;
	struct vsw_ring_port *rp[MAX_TP];
	unsigned n_ports;
	unsigned n_pmds;
	bool port_deleted; /* port sums no longer cover every packet */
};

static struct ctx *
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
	c->sw = vsw_switch_create(&cfg);
	assert_non_null(c->sw);
	c->n_ports = n_ports;
	c->n_pmds = n_pmds;
	for (i = 0; i < n_ports; i++) {
		char name[16];

		snprintf(name, sizeof(name), "p%u", i);
		c->rp[i] = vsw_ring_port_create(name, 1024);
		assert_non_null(c->rp[i]);
		assert_int_equal(vsw_switch_port_add(c->sw, name,
			&vsw_ring_port_ops, c->rp[i], 1, 1), (int)i);
	}
	return c;
}

/* Destroy everything and check that no mbuf leaked or was freed twice. */
static void
ctx_free(struct ctx *c)
{
	unsigned i;

	for (i = 0; i < c->n_ports; i++)
		if (c->rp[i] != NULL)
			vsw_switch_port_del(c->sw, (uint16_t)i);
	for (i = 0; i < c->n_ports; i++)
		vsw_ring_port_destroy(c->rp[i]);
	vsw_switch_destroy(c->sw);
	free(c);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

static void
add_rule(struct ctx *c, const char *text)
{
	struct vsw_rule r;
	char err[256];

	if (vsw_rule_parse(text, 0, vsw_switch_port_lookup, c->sw, &r, err,
			sizeof(err)) != 0)
		fail_msg("rule '%s': %s", text, err);
	assert_int_equal(vsw_switch_rules_add(c->sw, &r, 1), 0);
}

static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

static void
host_mac(unsigned h, uint8_t mac[6])
{
	static const uint8_t base[6] = {0x02, 0, 0, 0, 0, 0};

	memcpy(mac, base, 6);
	mac[5] = (uint8_t)(h + 1);
}

/* Ethernet [+ 802.1Q] + IPv4 + UDP + 4-byte sequence number, len bytes. */
static struct rte_mbuf *
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

static uint32_t
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

static void
inject(struct ctx *c, unsigned port, struct rte_mbuf **pkts, unsigned n)
{
	assert_int_equal(vsw_ring_port_inject(c->rp[port], pkts, n), n);
}

/* Single-threaded PMD iterations until every PMD is idle. */
static void
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

static unsigned
collect(struct ctx *c, unsigned port, struct rte_mbuf **out, unsigned max)
{
	return vsw_ring_port_collect(c->rp[port], out, max);
}

static void
free_all(struct rte_mbuf **m, unsigned n)
{
	rte_pktmbuf_free_bulk(m, n);
}

static void
pmd_stats(struct ctx *c, unsigned pmd, struct vsw_pmd_stats *s)
{
	assert_int_equal(vsw_switch_pmd_stats(c->sw, pmd, s), 0);
}

/* rx + clones = tx + drops on every PMD; port sums match PMD sums. */
static void
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
		assert_int_equal(s.c[VSW_PMD_RX] + s.c[VSW_PMD_CLONES],
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
	if (!c->port_deleted) {
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

	assert_int_equal(vsw_rule_parse(f->text, 0, NULL, NULL, &want, NULL, 0),
		0);
	if (vsw_rule_match_equal(r, &want)) {
		f->st = *st;
		f->found++;
	}
}

static struct vsw_rule_stats
rule_stats(struct ctx *c, const char *text)
{
	struct dump_find f = {text, {0, 0}, 0};

	vsw_switch_rules_dump(c->sw, dump_cb, &f);
	assert_int_equal(f.found, 1);
	return f.st;
}

static void
test_output(void **state)
{
	struct ctx *c = ctx_new(1, 3, 1);
	struct rte_mbuf *in[100], *out[128];
	uint8_t ref[100][PKT_LEN], a[6], b[6];
	struct vsw_pmd_stats s;
	struct vsw_rule_stats rs;
	unsigned i, n;

	(void)state;
	host_mac(0, a);
	host_mac(1, b);
	add_rule(c, "priority=10,in_port=0,actions=output:2");
	add_rule(c, "priority=5,ip,actions=drop");
	for (i = 0; i < 100; i++) {
		in[i] = mk_pkt(b, a, -1, 0x0a000000 + i % 7, i, PKT_LEN);
		memcpy(ref[i], rte_pktmbuf_mtod(in[i], void *), PKT_LEN);
	}
	inject(c, 0, in, 100);
	poll_all(c);
	n = collect(c, 2, out, 128);
	assert_int_equal(n, 100);
	for (i = 0; i < n; i++) { /* in order, byte-exact */
		assert_int_equal(rte_pktmbuf_pkt_len(out[i]), PKT_LEN);
		assert_memory_equal(rte_pktmbuf_mtod(out[i], void *), ref[i],
			PKT_LEN);
		assert_int_equal(rte_mbuf_refcnt_read(out[i]), 1);
	}
	free_all(out, n);
	assert_int_equal(collect(c, 1, out, 128), 0);
	/* Same packets from port 1: the lower-priority drop. */
	for (i = 0; i < 20; i++)
		in[i] = mk_pkt(b, a, -1, 0x0a000001, i, PKT_LEN);
	inject(c, 1, in, 20);
	poll_all(c);
	pmd_stats(c, 0, &s);
	assert_int_equal(s.c[VSW_PMD_RX], 120);
	assert_int_equal(s.c[VSW_PMD_TX], 100);
	assert_int_equal(s.c[VSW_PMD_DROP_ACTION], 20);
	assert_int_equal(s.c[VSW_PMD_EMC_HIT] + s.c[VSW_PMD_CLS_HIT], 120);
	assert_true(s.c[VSW_PMD_EMC_HIT] > 0);
	rs = rule_stats(c, "priority=10,in_port=0,actions=drop");
	assert_int_equal(rs.packets, 100);
	assert_int_equal(rs.bytes, 100 * PKT_LEN);
	rs = rule_stats(c, "priority=5,ip,actions=drop");
	assert_int_equal(rs.packets, 20);
	check_identity(c);
	ctx_free(c);
}

/* A two-segment packet: headers in the first mbuf, the rest in a second. */
static struct rte_mbuf *
mk_chain(const uint8_t dst[6], const uint8_t src[6], uint32_t seq)
{
	struct rte_mbuf *m = mk_pkt(dst, src, -1, 0x0a000001, seq, PKT_LEN);
	struct rte_mbuf *t = rte_pktmbuf_alloc(pool);

	assert_non_null(t);
	assert_non_null(rte_pktmbuf_append(t, 100));
	assert_int_equal(rte_pktmbuf_chain(m, t), 0);
	return m;
}

static void
test_multi_output(void **state)
{
	struct ctx *c = ctx_new(1, 4, 1);
	struct rte_mbuf *in[40], *out[3][64];
	struct vsw_pmd_stats s;
	uint8_t a[6], b[6];
	unsigned i, p, n[3];

	(void)state;
	host_mac(0, a);
	host_mac(1, b);
	/* Output to the input port is skipped (OpenFlow in_port rule). */
	add_rule(c, "in_port=0,actions=output:0,output:1,output:2,output:3");
	for (i = 0; i < 40; i++)
		in[i] = i % 4 == 3 ? mk_chain(b, a, i) :
			mk_pkt(b, a, -1, 0x0a000001, i, PKT_LEN);
	inject(c, 0, in, 40);
	poll_all(c);
	assert_int_equal(collect(c, 0, out[0], 64), 0);
	for (p = 0; p < 3; p++) {
		n[p] = collect(c, p + 1, out[p], 64);
		assert_int_equal(n[p], 40);
	}
	for (i = 0; i < 40; i++) { /* one mbuf, three references */
		assert_ptr_equal(out[0][i], in[i]);
		assert_ptr_equal(out[1][i], in[i]);
		assert_ptr_equal(out[2][i], in[i]);
		assert_int_equal(rte_mbuf_refcnt_read(in[i]), 3);
		if (in[i]->next != NULL)
			assert_int_equal(rte_mbuf_refcnt_read(in[i]->next), 3);
		assert_int_equal(pkt_seq(in[i]), i);
	}
	pmd_stats(c, 0, &s);
	assert_int_equal(s.c[VSW_PMD_CLONES], 80);
	assert_int_equal(s.c[VSW_PMD_TX], 120);
	check_identity(c);
	for (p = 0; p < 3; p++) /* freeing every reference frees each once */
		free_all(out[p], n[p]);
	ctx_free(c);
}

static void
test_drops(void **state)
{
	struct ctx *c = ctx_new(1, 3, 0);
	struct rte_mbuf *in[32];
	struct vsw_pmd_stats s;
	uint8_t a[6];
	unsigned i;

	(void)state;
	host_mac(0, a);
	add_rule(c, "in_port=0,actions=drop");
	add_rule(c, "in_port=1,actions=output:5");  /* no such port */
	add_rule(c, "in_port=2,ip,actions=output:2"); /* only back: none */
	for (i = 0; i < 10; i++)
		in[i] = mk_pkt(bcast, a, -1, 1, i, PKT_LEN);
	inject(c, 0, in, 10);
	for (i = 0; i < 11; i++)
		in[i] = mk_pkt(bcast, a, -1, 1, i, PKT_LEN);
	inject(c, 1, in, 11);
	for (i = 0; i < 12; i++)
		in[i] = mk_pkt(bcast, a, -1, 1, i, PKT_LEN);
	inject(c, 2, in, 12);
	/* Not IP on port 2: no rule at all. */
	for (i = 0; i < 13; i++) {
		in[i] = mk_pkt(bcast, a, -1, 1, i, PKT_LEN);
		rte_pktmbuf_mtod(in[i], uint8_t *)[12] = 0x88;
	}
	inject(c, 2, in, 13);
	poll_all(c);
	pmd_stats(c, 0, &s);
	assert_int_equal(s.c[VSW_PMD_RX], 46);
	assert_int_equal(s.c[VSW_PMD_DROP_ACTION], 10);
	assert_int_equal(s.c[VSW_PMD_DROP_PORT_GONE], 11);
	assert_int_equal(s.c[VSW_PMD_DROP_NO_OUTPUT], 12);
	assert_int_equal(s.c[VSW_PMD_DROP_NO_RULE], 13);
	assert_int_equal(s.c[VSW_PMD_EMC_HIT], 0); /* EMC insertion off */
	check_identity(c);
	ctx_free(c);
}

/* Reference learning switch: expected destination port set of a packet. */
static unsigned
ref_normal(int *table, unsigned src, int dst, unsigned in_port,
	unsigned n_ports)
{
	unsigned all = ((1u << n_ports) - 1) & ~(1u << in_port);

	table[src] = (int)in_port;
	if (dst < 0 || table[dst] < 0)
		return all;
	return table[dst] == (int)in_port ? 0 : 1u << table[dst];
}

static void
test_normal_reference(void **state)
{
	enum { HOSTS = 8, PORTS = 4, ROUNDS = 300 };
	struct ctx *c = ctx_new(1, PORTS, 1);
	int table[HOSTS];
	unsigned seed = 7, r, i, p;
	uint32_t seq = 0;

	(void)state;
	add_rule(c, "actions=normal");
	for (i = 0; i < HOSTS; i++)
		table[i] = -1;
	for (r = 0; r < ROUNDS; r++) {
		unsigned port = (unsigned)rand_r(&seed) % PORTS;
		unsigned k = 1 + (unsigned)rand_r(&seed) % 32;
		unsigned exp[32] = {0}, got[32] = {0};
		struct rte_mbuf *in[32], *out[32];
		uint32_t first = seq;

		for (i = 0; i < k; i++, seq++) {
			/* hosts h and h + 4 live on port h % 4 */
			unsigned src = port + PORTS * ((unsigned)rand_r(&seed) % 2);
			int dst = rand_r(&seed) % 9 == 0 ? -1 :
				rand_r(&seed) % HOSTS;
			uint8_t sm[6], dm[6];

			host_mac(src, sm);
			if (dst < 0)
				memcpy(dm, bcast, 6);
			else
				host_mac((unsigned)dst, dm);
			in[i] = mk_pkt(dm, sm, -1, 1, seq, PKT_LEN);
			exp[i] = ref_normal(table, src, dst, port, PORTS);
		}
		inject(c, port, in, k);
		poll_all(c);
		for (p = 0; p < PORTS; p++) {
			unsigned n = collect(c, p, out, 32);

			for (i = 0; i < n; i++) {
				uint32_t s = pkt_seq(out[i]) - first;

				assert_true(s < k);
				assert_false(got[s] & (1u << p)); /* once */
				got[s] |= 1u << p;
			}
			free_all(out, n);
		}
		for (i = 0; i < k; i++)
			if (got[i] != exp[i])
				fail_msg("round %u pkt %u: got ports 0x%x, "
					"expected 0x%x", r, i, got[i], exp[i]);
	}
	for (i = 0; i < HOSTS; i++) {
		uint8_t m[6];

		host_mac(i, m);
		assert_int_equal(vsw_switch_mac_lookup(c->sw, m), table[i] < 0 ?
			-ENOENT : table[i]);
	}
	check_identity(c);
	ctx_free(c);
}

/* Send one packet src -> dst on port; return the bitmap of ports reached. */
static unsigned
send_one(struct ctx *c, unsigned port, unsigned src, unsigned dst)
{
	struct rte_mbuf *m, *out[4];
	uint8_t sm[6], dm[6];
	unsigned p, got = 0, n;

	host_mac(src, sm);
	host_mac(dst, dm);
	m = mk_pkt(dm, sm, -1, 1, 0, PKT_LEN);
	inject(c, port, &m, 1);
	poll_all(c);
	for (p = 0; p < c->n_ports; p++) {
		if (c->rp[p] == NULL)
			continue;
		n = collect(c, p, out, 4);
		if (n > 0)
			got |= 1u << p;
		free_all(out, n);
	}
	return got;
}

static void
test_normal_aging_moves(void **state)
{
	struct ctx *c = ctx_new(1, 4, 1);
	uint8_t ma[6], mb[6];

	(void)state;
	add_rule(c, "actions=normal");
	host_mac(0, ma);
	host_mac(1, mb);
	assert_int_equal(vsw_switch_mac_age(c->sw, 0), 0);
	assert_int_equal(send_one(c, 0, 0, 1), 0xe);  /* B unknown: flood */
	assert_int_equal(send_one(c, 1, 1, 0), 0x1);  /* A learned on 0 */
	assert_int_equal(send_one(c, 0, 0, 1), 0x2);  /* B learned on 1 */
	assert_int_equal(send_one(c, 0, 2, 0), 0x0);  /* A is on 0: drop */
	assert_int_equal(vsw_switch_mac_count(c->sw), 3);
	assert_int_equal(send_one(c, 3, 1, 0), 0x1);  /* B moves to 3 */
	assert_int_equal(vsw_switch_mac_lookup(c->sw, mb), 3);
	assert_int_equal(send_one(c, 0, 0, 1), 0x8);
	/* Aging: B refreshed at 5, A and host 2 only seen at 0. */
	assert_int_equal(vsw_switch_mac_age(c->sw, 5), 0);
	assert_int_equal(send_one(c, 3, 1, 7), 0x7);
	assert_int_equal(vsw_switch_mac_age(c->sw, 14), 2);
	assert_int_equal(vsw_switch_mac_lookup(c->sw, ma), -ENOENT);
	assert_int_equal(vsw_switch_mac_lookup(c->sw, mb), 3);
	assert_int_equal(send_one(c, 3, 1, 0), 0x7);  /* A forgotten: flood */
	assert_int_equal(vsw_switch_mac_age(c->sw, 100), 1);
	assert_int_equal(vsw_switch_mac_count(c->sw), 0);
	/* Deleting a port forgets what was learned on it. */
	assert_int_equal(send_one(c, 2, 0, 1), 0xb);
	assert_int_equal(vsw_switch_mac_lookup(c->sw, ma), 2);
	assert_int_equal(vsw_switch_port_del(c->sw, 2), 0);
	c->port_deleted = true;
	assert_int_equal(vsw_switch_mac_lookup(c->sw, ma), -ENOENT);
	vsw_ring_port_destroy(c->rp[2]);
	c->rp[2] = NULL;
	assert_int_equal(send_one(c, 1, 1, 0), 0x9);  /* flood skips port 2 */
	vsw_switch_mac_flush(c->sw);
	assert_int_equal(vsw_switch_mac_count(c->sw), 0);
	check_identity(c);
	ctx_free(c);
}

static void
expect_bytes(struct ctx *c, unsigned port, const uint8_t *want, unsigned len)
{
	struct rte_mbuf *out[4];
	unsigned n = collect(c, port, out, 4);

	assert_int_equal(n, 1);
	assert_int_equal(rte_pktmbuf_pkt_len(out[0]), len);
	assert_memory_equal(rte_pktmbuf_mtod(out[0], void *), want, len);
	free_all(out, n);
}

static void
test_vlan(void **state)
{
	struct ctx *c = ctx_new(1, 4, 1);
	uint8_t a[6], b[6], plain[PKT_LEN], tagged[PKT_LEN + 4],
		qinq[PKT_LEN + 8];
	struct rte_mbuf *m;
	struct vsw_pmd_stats s;

	(void)state;
	host_mac(0, a);
	host_mac(1, b);
	add_rule(c, "in_port=0,actions=push_vlan:100,output:1");
	add_rule(c, "in_port=1,dl_vlan=100,actions=strip_vlan,output:2");
	add_rule(c, "in_port=1,dl_vlan=0xffff,actions=strip_vlan,output:3");
	add_rule(c, "in_port=2,actions=push_vlan:7,output:3");
	/* Expected bytes built independently of the switch. */
	m = mk_pkt(b, a, -1, 1, 1, PKT_LEN);
	memcpy(plain, rte_pktmbuf_mtod(m, void *), PKT_LEN);
	memcpy(tagged, plain, 12);
	memcpy(tagged + 12, "\x81\x00\x00\x64", 4);
	memcpy(tagged + 16, plain + 12, PKT_LEN - 12);
	inject(c, 0, &m, 1);
	poll_all(c);
	expect_bytes(c, 1, tagged, PKT_LEN + 4);
	/* Strip the tag again: the original bytes. */
	m = mk_pkt(b, a, 100, 1, 1, PKT_LEN + 4);
	memcpy(rte_pktmbuf_mtod(m, void *), tagged, PKT_LEN + 4);
	inject(c, 1, &m, 1);
	poll_all(c);
	expect_bytes(c, 2, plain, PKT_LEN);
	/* strip_vlan on an untagged packet leaves it as it is. */
	m = mk_pkt(b, a, -1, 1, 1, PKT_LEN);
	inject(c, 1, &m, 1);
	poll_all(c);
	expect_bytes(c, 3, plain, PKT_LEN);
	/* push on a tagged packet adds an outer tag (QinQ). */
	m = mk_pkt(b, a, 100, 1, 1, PKT_LEN + 4);
	memcpy(rte_pktmbuf_mtod(m, void *), tagged, PKT_LEN + 4);
	memcpy(qinq, plain, 12);
	memcpy(qinq + 12, "\x81\x00\x00\x07\x81\x00\x00\x64", 8);
	memcpy(qinq + 20, plain + 12, PKT_LEN - 12);
	inject(c, 2, &m, 1);
	poll_all(c);
	expect_bytes(c, 3, qinq, PKT_LEN + 8);
	/* No headroom: counted and freed, not corrupted. */
	m = rte_pktmbuf_alloc(pool);
	m->data_off = 0;
	memcpy(rte_pktmbuf_append(m, PKT_LEN), plain, PKT_LEN);
	inject(c, 0, &m, 1);
	poll_all(c);
	assert_int_equal(collect(c, 1, &m, 1), 0);
	pmd_stats(c, 0, &s);
	assert_int_equal(s.c[VSW_PMD_DROP_VLAN], 1);
	check_identity(c);
	ctx_free(c);
}

static void
test_output_batching(void **state)
{
	struct ctx *c = ctx_new(1, 4, 1);
	struct rte_mbuf *in[32], *out[128];
	struct vsw_pmd_stats s;
	struct vsw_port_stats ps;
	uint8_t a[6], b[6];
	unsigned i, p, n;

	(void)state;
	host_mac(0, a);
	host_mac(1, b);
	add_rule(c, "ip,actions=output:3");
	for (p = 0; p < 3; p++) {
		for (i = 0; i < 32; i++)
			in[i] = mk_pkt(b, a, -1, 1, p * 32 + i, PKT_LEN);
		inject(c, p, in, 32);
	}
	/* One iteration: 32 + 32 fit a batch, the third burst flushes it
	 * first, the rest goes at the end of the iteration. */
	assert_int_equal(vsw_pmd_poll_once(vsw_switch_pmd(c->sw, 0)), 96);
	rcu_quiescent_state();
	pmd_stats(c, 0, &s);
	assert_int_equal(s.c[VSW_PMD_BATCHES], 2);
	assert_int_equal(s.c[VSW_PMD_BATCH_PKTS], 96);
	assert_true(s.avg_packets_per_batch == 48.0);
	assert_int_equal(s.c[VSW_PMD_ITER_BUSY], 1);
	n = collect(c, 3, out, 128);
	assert_int_equal(n, 96);
	for (i = 0; i < n; i++) /* order kept across batches */
		assert_int_equal(pkt_seq(out[i]), i);
	free_all(out, n);
	/* A port that takes 10 per call: the rest is freed and counted. */
	vsw_ring_port_set_tx_limit(c->rp[3], 10);
	for (i = 0; i < 32; i++)
		in[i] = mk_pkt(b, a, -1, 1, i, PKT_LEN);
	inject(c, 0, in, 32);
	poll_all(c);
	n = collect(c, 3, out, 128);
	assert_int_equal(n, 10);
	free_all(out, n);
	pmd_stats(c, 0, &s);
	assert_int_equal(s.c[VSW_PMD_DROP_TX_FULL], 22);
	assert_int_equal(vsw_switch_port_stats(c->sw, 3, &ps), 0);
	assert_int_equal(ps.tx, 106);
	assert_int_equal(ps.tx_drops, 22);
	assert_true(s.c[VSW_PMD_ITER_IDLE] >= 1);
	check_identity(c);
	/* Clearing stores a baseline. */
	vsw_switch_pmd_stats_clear(c->sw, -1);
	pmd_stats(c, 0, &s);
	assert_int_equal(s.c[VSW_PMD_RX], 0);
	assert_int_equal(s.c[VSW_PMD_BATCHES], 0);
	ctx_free(c);
}

/* Send k packets to dst IP on port 0; bitmap of ports reached. */
static unsigned
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

static void
test_rule_changes(void **state)
{
	struct ctx *c = ctx_new(1, 4, 1);
	struct vsw_rule r[3];
	struct vsw_rule_stats rs;
	struct vsw_pmd_stats s;

	(void)state;
	add_rule(c, "priority=10,ip,nw_dst=10.0.0.1,actions=output:1");
	assert_int_equal(send_ip(c, 0x0a000001, 8), 0x2); /* EMC filled */
	assert_int_equal(send_ip(c, 0x0a000001, 8), 0x2);
	pmd_stats(c, 0, &s);
	assert_true(s.c[VSW_PMD_EMC_HIT] >= 8);
	/* Same match, new actions: replaces, keeps counters, EMC not stale. */
	add_rule(c, "priority=10,ip,nw_dst=10.0.0.1,actions=output:2");
	assert_int_equal(vsw_switch_n_rules(c->sw), 1);
	assert_int_equal(send_ip(c, 0x0a000001, 8), 0x4);
	rs = rule_stats(c, "priority=10,ip,nw_dst=10.0.0.1,actions=drop");
	assert_int_equal(rs.packets, 24);
	/* A higher-priority rule wins at once. */
	add_rule(c, "priority=20,ip,nw_dst=10.0.0.0/8,actions=output:3");
	assert_int_equal(send_ip(c, 0x0a000001, 8), 0x8);
	/* Deleting it falls back; deleting again is -ENOENT. */
	assert_int_equal(vsw_rule_parse("priority=20,ip,nw_dst=10.0.0.0/8",
		VSW_RULE_PARSE_MATCH_ONLY, NULL, NULL, &r[0], NULL, 0), 0);
	assert_int_equal(vsw_switch_rule_del(c->sw, &r[0]), 0);
	assert_int_equal(vsw_switch_rule_del(c->sw, &r[0]), -ENOENT);
	assert_int_equal(send_ip(c, 0x0a000001, 8), 0x4);
	/* Replace the whole set; a duplicate within the set: last wins. */
	assert_int_equal(vsw_rule_parse("ip,actions=output:1", 0, NULL, NULL,
		&r[0], NULL, 0), 0);
	assert_int_equal(vsw_rule_parse("ip,actions=output:3", 0, NULL, NULL,
		&r[1], NULL, 0), 0);
	assert_int_equal(vsw_rule_parse("arp,actions=flood", 0, NULL, NULL,
		&r[2], NULL, 0), 0);
	assert_int_equal(vsw_switch_rules_replace(c->sw, r, 3), 0);
	assert_int_equal(vsw_switch_n_rules(c->sw), 2);
	assert_int_equal(send_ip(c, 0x0a000001, 8), 0x8);
	rs = rule_stats(c, "ip,actions=drop");
	assert_int_equal(rs.packets, 8); /* a fresh id starts at zero */
	/* All or nothing: a bad rule in a batch changes nothing. */
	r[1].n_actions = VSW_RULE_MAX_ACTIONS + 1;
	r[0].priority = 99;
	assert_int_equal(vsw_switch_rules_add(c->sw, r, 2), -EINVAL);
	assert_int_equal(vsw_switch_n_rules(c->sw), 2);
	assert_int_equal(send_ip(c, 0x0a000001, 8), 0x8);
	assert_int_equal(vsw_switch_rules_replace(c->sw, NULL, 0), 0);
	assert_int_equal(send_ip(c, 0x0a000001, 8), 0x0);
	check_identity(c);
	ctx_free(c);
}

static void
test_ports_and_pmds(void **state)
{
	struct ctx *c = ctx_new(2, 4, 1);
	struct vsw_pmd_stats s0, s1;
	struct rte_mbuf *m[4];
	uint8_t a[6];
	unsigned i;
	int no;

	(void)state;
	host_mac(0, a);
	add_rule(c, "actions=drop");
	assert_int_equal(vsw_switch_port_add(c->sw, "p1", &vsw_ring_port_ops,
		c->rp[1], 1, 1), -EEXIST);
	assert_int_equal(vsw_switch_port_add(c->sw, "", &vsw_ring_port_ops,
		c->rp[1], 1, 1), -EINVAL);
	assert_int_equal(vsw_switch_port_lookup("p3", c->sw), 3);
	assert_string_equal(vsw_switch_port_name(2, c->sw), "p2");
	/* Round-robin: PMD 0 polls ports 0 and 2, PMD 1 ports 1 and 3. */
	for (i = 0; i < 4; i++) {
		m[i] = mk_pkt(bcast, a, -1, 1, i, PKT_LEN);
		inject(c, i, &m[i], 1);
	}
	assert_int_equal(vsw_pmd_poll_once(vsw_switch_pmd(c->sw, 1)), 2);
	assert_int_equal(vsw_pmd_poll_once(vsw_switch_pmd(c->sw, 0)), 2);
	rcu_quiescent_state();
	/* After deleting port 1: PMD 0 polls 0 and 3, PMD 1 polls 2. */
	assert_int_equal(vsw_switch_port_del(c->sw, 1), 0);
	c->port_deleted = true;
	assert_int_equal(vsw_switch_port_del(c->sw, 1), -ENOENT);
	for (i = 0; i < 4; i++) {
		if (i == 1)
			continue;
		m[i] = mk_pkt(bcast, a, -1, 1, i, PKT_LEN);
		inject(c, i, &m[i], 1);
	}
	assert_int_equal(vsw_pmd_poll_once(vsw_switch_pmd(c->sw, 1)), 1);
	assert_int_equal(vsw_pmd_poll_once(vsw_switch_pmd(c->sw, 0)), 2);
	rcu_quiescent_state();
	pmd_stats(c, 0, &s0);
	pmd_stats(c, 1, &s1);
	assert_int_equal(s0.c[VSW_PMD_RX], 4);
	assert_int_equal(s1.c[VSW_PMD_RX], 3);
	/* The lowest free number is reused; its counters start at zero. */
	no = vsw_switch_port_add(c->sw, "again", &vsw_ring_port_ops, c->rp[1],
		1, 1);
	assert_int_equal(no, 1);
	{
		struct vsw_port_stats ps;

		assert_int_equal(vsw_switch_port_stats(c->sw, 1, &ps), 0);
		assert_int_equal(ps.rx, 0);
	}
	assert_int_equal(vsw_switch_n_ports(c->sw), 4);
	check_identity(c);
	ctx_free(c);
}

/*
 * Concurrency: a PMD lcore switches packets from port 0 while this thread
 * replaces the whole rule set thousands of times. Set A sends flow f to port
 * 1 + f % 3, set B to 1 + (f + 1) % 3: a packet may leave on either, never
 * on the third, and never twice or not at all.
 */
enum { FLOWS = 48, REPLACES = 2000 };

static void
build_set(struct vsw_rule *rules, unsigned shift)
{
	unsigned f;

	for (f = 0; f < FLOWS; f++) {
		char text[128];

		/* Two mask shapes (two subtables) + a catch-all. */
		if (f % 2)
			snprintf(text, sizeof(text), "priority=100,ip,"
				"nw_dst=10.0.0.%u,actions=output:%u", f,
				1 + (f + shift) % 3);
		else
			snprintf(text, sizeof(text), "priority=90,udp,"
				"nw_dst=10.0.0.%u,tp_dst=2000,actions=output:%u",
				f, 1 + (f + shift) % 3);
		assert_int_equal(vsw_rule_parse(text, 0, NULL, NULL, &rules[f],
			NULL, 0), 0);
	}
	assert_int_equal(vsw_rule_parse("priority=0,actions=drop", 0, NULL,
		NULL, &rules[FLOWS], NULL, 0), 0);
}

static unsigned
drain_check(struct ctx *c, uint8_t *seen, uint32_t n_sent)
{
	struct rte_mbuf *out[64];
	unsigned p, i, n, total = 0;

	for (p = 1; p <= 3; p++) {
		while ((n = collect(c, p, out, 64)) > 0) {
			for (i = 0; i < n; i++) {
				uint32_t s = pkt_seq(out[i]);
				unsigned f = s % FLOWS;

				assert_true(s < n_sent);
				assert_int_equal(seen[s], 0);
				seen[s] = 1;
				if (p != 1 + f % 3 && p != 1 + (f + 1) % 3)
					fail_msg("flow %u on port %u", f, p);
			}
			free_all(out, n);
			total += n;
		}
	}
	return total;
}

static void
test_concurrent_replace(void **state)
{
	struct ctx *c;
	struct vsw_rule a[FLOWS + 1], b[FLOWS + 1];
	uint8_t *seen = calloc(REPLACES * 16, 1), ma[6], mb[6];
	uint32_t seq = 0;
	unsigned i, k, received = 0, refused = 0, spins;
	struct vsw_pmd_stats s;

	(void)state;
	if (rte_lcore_count() < 2 || !rte_lcore_is_enabled(1)) {
		free(seen);
		skip();
	}
	assert_non_null(seen);
	c = ctx_new(1, 4, 1);
	host_mac(0, ma);
	host_mac(1, mb);
	build_set(a, 0);
	build_set(b, 1);
	assert_int_equal(vsw_switch_rules_replace(c->sw, a, FLOWS + 1), 0);
	assert_int_equal(vsw_switch_pmds_start(c->sw), 0);
	for (i = 0; i < REPLACES; i++) {
		struct rte_mbuf *in[16];

		for (k = 0; k < 16; k++, seq++)
			in[k] = mk_pkt(mb, ma, -1, 0x0a000000 + seq % FLOWS,
				seq, PKT_LEN);
		k = vsw_ring_port_inject(c->rp[0], in, 16);
		if (k < 16) { /* ring full: take them back */
			free_all(&in[k], 16 - k);
			memset(&seen[seq - 16 + k], 2, 16 - k);
			refused += 16 - k;
		}
		assert_int_equal(vsw_switch_rules_replace(c->sw,
			i % 2 ? a : b, FLOWS + 1), 0);
		received += drain_check(c, seen, seq);
	}
	for (spins = 0; spins < 20000000; spins++) {
		received += drain_check(c, seen, seq);
		if (received == seq - refused)
			break;
		rte_pause();
	}
	vsw_switch_pmds_stop(c->sw);
	received += drain_check(c, seen, seq);
	for (k = 0; k < seq; k++)
		if (seen[k] == 0)
			fail_msg("packet %u lost", k);
	pmd_stats(c, 0, &s);
	assert_int_equal(s.c[VSW_PMD_DROP_NO_RULE] + s.c[VSW_PMD_DROP_ACTION],
		0);
	assert_int_equal(s.c[VSW_PMD_RX], received);
	print_message("%u packets through %u rule-set replacements, %" PRIu64
		" EMC hits, %" PRIu64 " classifier hits\n", received, REPLACES,
		s.c[VSW_PMD_EMC_HIT], s.c[VSW_PMD_CLS_HIT]);
	check_identity(c);
	free(seen);
	ctx_free(c);
}

static int
group_setup(void **state)
{
	char *argv[] = {"test_switch", "--no-huge", "-m", "256", "--no-pci",
		"--no-shconf", "--file-prefix=vsw_test_switch",
		"-l", "0,1", "--log-level=*:error"};

	(void)state;
	if (rte_eal_init(sizeof(argv) / sizeof(argv[0]), argv) < 0)
		return -1;
	pool = rte_pktmbuf_pool_create("test_switch", 8191, 0, 0,
		RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	if (pool == NULL)
		return -1;
	rcu_register_thread();
	return 0;
}

static int
group_teardown(void **state)
{
	(void)state;
	rcu_unregister_thread();
	rte_mempool_free(pool);
	rte_eal_cleanup();
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_output),
		cmocka_unit_test(test_multi_output),
		cmocka_unit_test(test_drops),
		cmocka_unit_test(test_normal_reference),
		cmocka_unit_test(test_normal_aging_moves),
		cmocka_unit_test(test_vlan),
		cmocka_unit_test(test_output_batching),
		cmocka_unit_test(test_rule_changes),
		cmocka_unit_test(test_ports_and_pmds),
		cmocka_unit_test(test_concurrent_replace),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

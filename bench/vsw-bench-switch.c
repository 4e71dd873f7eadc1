/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Whole switch path on mbufs, no I/O: flow-key extraction + EMC/classifier
 * + actions + output batching, into a sink port that hands the mbufs back
 * (so the same packets are switched again). Prints cycles per packet (rdtsc,
 * best of several runs, since the machine is shared) for:
 *   1 flow, EMC on           (target <= 60)
 *   1024 flows, EMC off, 4 subtables (target <= 120)
 * and neighbours (1 flow EMC off, 1024 flows EMC on, normal action,
 * 2-port multi-output), plus extraction alone for scale; and the overlay
 * (VXLAN) against the plain switch at 64 B and 1518 B: a domain port to one
 * remote VTEP (encapsulation) and the underlay to a domain port
 * (decapsulation). The sink undoes what the switch did to a packet
 * (encap: strips the 50 bytes again; decap: prepends them back, the
 * bytes are still in the buffer) so the same mbufs go round; that costs
 * the overlay rows a few cycles the plain ones do not pay.
 *
 * Usage: vsw-bench-switch [--bursts N] [--runs N] [--only SCENARIO_INDEX]
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_mbuf.h>
#include <urcu-qsbr.h>

#include <vsw/dpcls.h>
#include <vsw/flow.h>
#include <vsw/switch.h>
#include <vsw/vxlan.h>

#define BURST 32
#define MAX_FLOWS 1024
#define PKT_LEN 64

static struct rte_mempool *pool;

/* A port that takes everything and keeps the pointers for reuse. */
struct sink {
	uint64_t n;
	int undo; /* +50: strip an outer header; -50: put it back */
};

static uint16_t
sink_rx(void *port, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	(void)port;
	(void)q;
	(void)pkts;
	(void)n;
	return 0;
}

static uint16_t
sink_tx(void *port, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	struct sink *s = port;
	uint16_t i;

	(void)q;
	/* "Transmit": drop the extra reference a multi-output made (as a
	 * real port's free would); the last one stays with the benchmark. */
	for (i = 0; i < n; i++)
		if (rte_mbuf_refcnt_read(pkts[i]) > 1)
			rte_mbuf_refcnt_update(pkts[i], -1);
	if (s->undo > 0)
		for (i = 0; i < n; i++)
			rte_pktmbuf_adj(pkts[i], (uint16_t)s->undo);
	else if (s->undo < 0)
		for (i = 0; i < n; i++)
			rte_pktmbuf_prepend(pkts[i], (uint16_t)-s->undo);
	s->n += n;
	return n;
}

static const struct vsw_port_ops sink_ops = {sink_rx, sink_tx};

struct flowspec {
	uint8_t dst[6];
	uint32_t sip, dip;
	uint8_t proto;
	uint16_t dport;
};

static struct rte_mbuf *
mk_pkt_len(const struct flowspec *f, uint16_t len);

static struct rte_mbuf *
mk_pkt(const struct flowspec *f)
{
	return mk_pkt_len(f, PKT_LEN);
}

static struct rte_mbuf *
mk_pkt_len(const struct flowspec *f, uint16_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	uint8_t *d;
	uint16_t v;
	uint32_t a;

	if (m == NULL)
		exit(1);
	d = (uint8_t *)rte_pktmbuf_append(m, len);
	if (d == NULL)
		exit(1);
	memset(d, 0, len);
	memcpy(d, f->dst, 6);
	memcpy(d + 6, "\x02\x00\x00\x00\xff\x01", 6);
	v = htons(0x0800);
	memcpy(d + 12, &v, 2);
	d[14] = 0x45;
	v = htons((uint16_t)(len - 14));
	memcpy(d + 16, &v, 2);
	d[22] = 64;
	d[23] = f->proto;
	a = htonl(f->sip);
	memcpy(d + 26, &a, 4);
	a = htonl(f->dip);
	memcpy(d + 30, &a, 4);
	v = htons(1000);
	memcpy(d + 34, &v, 2);
	v = htons(f->dport);
	memcpy(d + 36, &v, 2);
	v = htons((uint16_t)(len - 34));
	memcpy(d + 38, &v, 2);
	return m;
}

static void
add_rule(struct vsw_switch *sw, const char *text)
{
	struct vsw_rule r;
	char err[256];

	if (vsw_rule_parse(text, 0, vsw_switch_port_lookup, sw, &r, err,
		    sizeof(err)) != 0 ||
		vsw_switch_rules_add(sw, &r, 1) != 0) {
		fprintf(stderr, "rule '%s': %s\n", text, err);
		exit(1);
	}
}

/* Flow f of the 4-subtable set: one rule shape per f % 4. */
static void
flow_4sub(unsigned f, struct flowspec *s, char *rule, size_t len)
{
	unsigned x = f / 4 / 256, y = f / 4 % 256;

	memcpy(s->dst, "\x02\x00\x00\x00\x00\x02", 6);
	s->sip = 0x0a090000 | f;
	s->dip = 0x0a090000 | f;
	s->proto = 17;
	s->dport = 2000;
	switch (f % 4) {
	case 0:
		s->dip = 0x0a010000 | x << 8 | y;
		snprintf(rule, len,
			"priority=100,ip,nw_dst=10.1.%u.%u,"
			"actions=output:1",
			x, y);
		break;
	case 1:
		s->dip = 0x0a020000 | x << 8 | y;
		snprintf(rule, len,
			"priority=100,udp,nw_dst=10.2.%u.%u,"
			"tp_dst=2000,actions=output:1",
			x, y);
		break;
	case 2:
		s->sip = 0x0a030000 | x << 8 | y;
		snprintf(rule, len,
			"priority=100,ip,nw_src=10.3.%u.%u,"
			"actions=output:1",
			x, y);
		break;
	default:
		s->dst[4] = (uint8_t)(0x10 + x);
		s->dst[5] = (uint8_t)y;
		snprintf(rule, len,
			"priority=100,dl_dst=02:00:00:00:%02x:%02x,"
			"actions=output:1",
			0x10 + x, y);
		break;
	}
}

struct scenario {
	const char *name;
	unsigned flows;
	uint32_t emc_inv_prob; /* 0 = EMC off */
	const char *actions;   /* NULL: the 4-subtable rule set */
	const char *target;
	int learn; /* let the switch learn the destination MAC first */
	uint16_t len; /* frame bytes; 0: PKT_LEN */
	int overlay;  /* OV_ENCAP: in is a domain port, out the underlay;
		       * OV_DECAP: in is the underlay, out a domain port */
	const char *rule; /* the one rule, whole (instead of actions) */
	bool no_pair;     /* cfg.no_port_pair */
};

enum { OV_NONE, OV_ENCAP, OV_DECAP };
#define OV_VNI 100
#define OV_LOCAL 0x0a000001u
#define OV_REMOTE 0x0a000002u
static const uint8_t ov_local_mac[6] = {2, 0xaa, 0, 0, 0, 1};
static const uint8_t ov_remote_mac[6] = {2, 0xbb, 0, 0, 0, 2};

/* Overlay set-up: VTEP OV_LOCAL on the underlay, domain OV_VNI with the
 * domain port, the remote VTEP resolved (by an ARP reply), and the MAC
 * the packets go to known on the far side of the benchmark's direction. */
static void
overlay_setup(struct vsw_switch *sw, struct vsw_pmd *pmd, int how,
	const uint8_t dst[6], struct sink *out)
{
	uint16_t ul = how == OV_ENCAP ? 1 : 0, dp = how == OV_ENCAP ? 0 : 1;
	struct vsw_overlay_config oc = {.underlay = ul, .local_ip = OV_LOCAL,
		.mtu = 9000};
	uint8_t arp[42] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0xbb, 0, 0,
		0, 2, 8, 6, 0, 1, 8, 0, 6, 4, 0, 2, 2, 0xbb, 0, 0, 0, 2, 10, 0,
		0, 2, 0, 0, 0, 0, 0, 0, 10, 0, 0, 1};
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);

	memcpy(oc.local_mac, ov_local_mac, 6);
	if (m == NULL || vsw_switch_overlay_set(sw, &oc) != 0 ||
		vsw_switch_domain_add(sw, OV_VNI) != 0 ||
		vsw_switch_domain_port_add(sw, OV_VNI, dp) != 0 ||
		vsw_switch_vtep_add(sw, OV_VNI, OV_REMOTE) != 0)
		exit(1);
	memcpy(rte_pktmbuf_append(m, sizeof(arp)), arp, sizeof(arp));
	vsw_pmd_process_burst(pmd, ul, &m, 1); /* consumed: resolves */
	vsw_pmd_flush(pmd);
	if (how == OV_ENCAP) {
		if (vsw_switch_domain_mac_add(sw, OV_VNI, dst, OV_REMOTE) != 0)
			exit(1);
		out->undo = VSW_VXLAN_OVERHEAD;
		return;
	}
	/* decap: dst lives behind the domain port */
	m = rte_pktmbuf_alloc(pool);
	if (m == NULL)
		exit(1);
	memset(rte_pktmbuf_append(m, 60), 0, 60);
	memset(rte_pktmbuf_mtod(m, uint8_t *), 0xff, 6);
	memcpy(rte_pktmbuf_mtod(m, uint8_t *) + 6, dst, 6);
	vsw_pmd_process_burst(pmd, dp, &m, 1);
	vsw_pmd_flush(pmd); /* flooded to the VTEP: the sink took it */
	rte_pktmbuf_free(m);
	out->undo = -(int)VSW_VXLAN_OVERHEAD;
}

/* For OV_DECAP: m as the remote VTEP sends it to us. */
static void
encap_from_remote(struct rte_mbuf *m)
{
	struct vsw_vxlan_tmpl t;

	vsw_vxlan_tmpl_init(&t, ov_remote_mac, OV_REMOTE, OV_LOCAL);
	if (vsw_vxlan_encap(m, &t, ov_local_mac, OV_VNI,
		    vsw_vxlan_src_port(vsw_vxlan_flow_hash(
			    rte_pktmbuf_mtod(m, uint8_t *), m->data_len))) != 0)
		exit(1);
}

struct result {
	double cpp;
	struct vsw_pmd_stats st;
};

/* The switch of scenario sc, ports "in", "out" and "out2" into sinks s. */
static struct vsw_switch *
switch_build(const struct scenario *sc, struct sink s[3])
{
	struct vsw_switch_config cfg;
	struct vsw_switch *sw;

	vsw_switch_config_init(&cfg);
	cfg.emc_entries = sc->emc_inv_prob ? 8192 : 0;
	cfg.emc_insert_inv_prob = sc->emc_inv_prob;
	cfg.max_rules = 4096;
	cfg.no_port_pair = sc->no_pair;
	sw = vsw_switch_create(&cfg);
	if (sw == NULL ||
		vsw_switch_port_add(sw, "in", &sink_ops, &s[0], 1, 1) != 0 ||
		vsw_switch_port_add(sw, "out", &sink_ops, &s[1], 1, 1) != 1 ||
		vsw_switch_port_add(sw, "out2", &sink_ops, &s[2], 1, 1) != 2)
		exit(1);
	return sw;
}

/* The rules of scenario sc (its one rule, one rule for every flow with
 * its actions, or the 4-subtable set) and n_pkts packets over its flows. */
static void
flows_build(struct vsw_switch *sw, const struct scenario *sc,
	struct rte_mbuf **pkts, unsigned n_pkts)
{
	unsigned f;

	for (f = 0; f < n_pkts; f++) {
		struct flowspec spec;
		char rule[160];

		flow_4sub(f % sc->flows, &spec, rule, sizeof(rule));
		if (sc->rule != NULL) {
			if (f == 0)
				add_rule(sw, sc->rule);
		} else if (sc->actions != NULL) { /* one rule for every flow */
			if (f == 0) {
				snprintf(rule, sizeof(rule), "ip,actions=%s",
					sc->actions);
				add_rule(sw, rule);
			}
		} else if (f < sc->flows) {
			add_rule(sw, rule);
		}
		pkts[f] = mk_pkt_len(&spec, sc->len ? sc->len : PKT_LEN);
	}
}

/* Let the switch learn flow 0's destination MAC on port 1. */
static void
learn_dst(struct vsw_pmd *pmd)
{
	struct flowspec spec;
	struct rte_mbuf *m;
	char rule[160];

	flow_4sub(0, &spec, rule, sizeof(rule));
	m = mk_pkt(&spec);
	memcpy(rte_pktmbuf_mtod(m, uint8_t *) + 6, spec.dst, 6);
	memcpy(rte_pktmbuf_mtod(m, uint8_t *), "\x02\0\0\0\xff\x01", 6);
	vsw_pmd_process_burst(pmd, 1, &m, 1);
	vsw_pmd_flush(pmd);
	rte_pktmbuf_free(m);
}

/* Best cycles per packet of runs runs of bursts bursts over pkts (run 0
 * warms the caches and does not count). */
static double
measure(struct vsw_pmd *pmd, struct rte_mbuf **pkts, unsigned n_pkts,
	unsigned bursts, unsigned runs)
{
	double best = 1e30;
	unsigned r, b;

	for (r = 0; r < runs + 1; r++) {
		uint64_t t0 = rte_rdtsc(), dt;

		for (b = 0; b < bursts; b++) {
			struct rte_mbuf **in = &pkts[(b * BURST) % n_pkts];

			vsw_pmd_process_burst(pmd, 0, in, BURST);
			vsw_pmd_flush(pmd);
		}
		dt = rte_rdtsc() - t0;
		if (r > 0 && (double)dt / ((double)bursts * BURST) < best)
			best = (double)dt / ((double)bursts * BURST);
		rcu_quiescent_state();
	}
	return best;
}

static struct result
run(const struct scenario *sc, unsigned bursts, unsigned runs)
{
	static struct rte_mbuf *pkts[MAX_FLOWS];
	struct sink s[3] = {{0}};
	struct vsw_switch *sw;
	struct vsw_pmd *pmd;
	struct result res = {1e30, {{0}}};
	unsigned f, n_pkts = sc->flows < BURST ? BURST : sc->flows;

	sw = switch_build(sc, s);
	flows_build(sw, sc, pkts, n_pkts);
	pmd = vsw_switch_pmd(sw, 0);
	if (sc->overlay != OV_NONE) {
		uint8_t dst[6];

		memcpy(dst, rte_pktmbuf_mtod(pkts[0], uint8_t *), 6);
		overlay_setup(sw, pmd, sc->overlay, dst, &s[1]);
		for (f = 0; sc->overlay == OV_DECAP && f < n_pkts; f++)
			encap_from_remote(pkts[f]);
	}
	if (sc->learn) /* dst MAC seen on port 1 */
		learn_dst(pmd);
	res.cpp = measure(pmd, pkts, n_pkts, bursts, runs);
	vsw_switch_pmd_stats(sw, 0, &res.st);
	for (f = 0; f < n_pkts; f++)
		rte_pktmbuf_free(pkts[f]);
	for (f = 0; f < 3; f++)
		vsw_switch_port_del(sw, (uint16_t)f);
	vsw_switch_destroy(sw);
	return res;
}

int
main(int argc, char **argv)
{
	char *eal[] = {argv[0], "--no-huge", "-m", "512", "--no-pci",
		"--no-shconf", "--file-prefix=vsw_bench_switch", "-l", "0",
		"--log-level=*:error"};
	static const struct scenario sc[] = {
		{"1 flow, EMC on", 1, 1, NULL, "<= 60"},
		{"1 flow, EMC off", 1, 0, NULL, ""},
		{"1024 flows, EMC off, 4 subtables", 1024, 0, NULL, "<= 120"},
		{"1024 flows, EMC on (1/1)", 1024, 1, NULL, ""},
		{"1024 flows, EMC on (1/100)", 1024, 100, NULL, ""},
		{"normal, unknown dst (flood 2), EMC on", 1, 1, "normal", ""},
		{"normal, learned dst, EMC on", 1, 1, "normal", "", 1},
		{"output:1,output:2, EMC on", 1, 1, "output:1,output:2", ""},
		{"plain output:1, 64 B, EMC on", 1, 1, "output:1", "", 0, 64},
		{"vxlan encap (domain->VTEP), 64 B", 1, 1, NULL, "", 0, 64,
			OV_ENCAP},
		{"vxlan decap (VTEP->domain), 64 B", 1, 1, NULL, "", 0, 64,
			OV_DECAP},
		{"plain output:1, 1518 B, EMC on", 1, 1, "output:1", "", 0,
			1518},
		{.name = "in_port=in,output:1 port pair, 64 B", .flows = 1,
			.emc_inv_prob = 1, .target = "", .len = 64,
			.rule = "in_port=in,actions=output:1"},
		{.name = "in_port=in,output:1 EMC, no pair",
			.flows = 1, .emc_inv_prob = 1, .target = "", .len = 64,
			.rule = "in_port=in,actions=output:1", .no_pair = true},
		{"vxlan encap (domain->VTEP), 1518 B", 1, 1, NULL, "", 0, 1518,
			OV_ENCAP},
		{"vxlan decap (VTEP->domain), 1518 B", 1, 1, NULL, "", 0, 1518,
			OV_DECAP},
	};
	unsigned bursts = 100000, runs = 5, i;
	int only = -1;
	double hz;

	for (i = 1; i + 1 < (unsigned)argc; i += 2) {
		if (strcmp(argv[i], "--bursts") == 0)
			bursts = (unsigned)atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--runs") == 0)
			runs = (unsigned)atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--only") == 0)
			only = atoi(argv[i + 1]);
	}
	if (rte_eal_init(sizeof(eal) / sizeof(eal[0]), eal) < 0)
		return 1;
	pool = rte_pktmbuf_pool_create("bench_switch", 4095, 0, 0,
		RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	if (pool == NULL)
		return 1;
	rcu_register_thread();
	hz = (double)rte_get_tsc_hz();
	printf("vsw switch path, %u-packet bursts of %u B, %u bursts x %u runs "
	       "(best), lookup impl %s, TSC %.2f GHz\n\n",
		BURST, PKT_LEN, bursts, runs, vsw_dpcls_impl_get(), hz / 1e9);
	printf("%-36s %9s %8s %8s %8s %9s %9s %7s\n", "scenario", "cyc/pkt",
		"Mpps", "emc_hit", "cls_hit", "subtbl/h", "pkts/bat", "target");
	for (i = 0; i < sizeof(sc) / sizeof(sc[0]); i++) {
		struct result r;
		double rx;

		if (only >= 0 && (unsigned)only != i)
			continue;
		r = run(&sc[i], bursts, runs);
		rx = (double)r.st.c[VSW_PMD_RX];

		printf("%-36s %9.1f %8.2f %7.0f%% %7.0f%% %9.2f %9.1f %7s\n",
			sc[i].name, r.cpp, hz / r.cpp / 1e6,
			100.0 * (double)r.st.c[VSW_PMD_EMC_HIT] / rx,
			100.0 * (double)r.st.c[VSW_PMD_CLS_HIT] / rx,
			r.st.avg_subtable_lookups_per_hit,
			r.st.avg_packets_per_batch, sc[i].target);
	}
	rcu_unregister_thread();
	rte_eal_cleanup();
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vsw-bench-dpcls: classifier, EMC and flow-key extraction throughput.
 *
 * Classifier: 1, 4, 16, 64 subtables x 1, 1 000, 100 000 rules (at least one
 * rule per subtable), all rules of one priority and disjoint (like datapath
 * megaflows), keys drawn from a pool that hits rules of every subtable
 * uniformly (so a key visits (n+1)/2 subtables on average). Per lookup
 * implementation: batch of 32 vs one key per call; then EMC in front
 * (default implementation, EMC filled with every pool key, insert 1/1) vs
 * off. Cycles are rdtsc over the whole run, divided by keys.
 * Extraction: cycles per packet through the burst API for common packets.
 *
 * Usage: vsw-bench-dpcls [--quick]    (run it under `nice`; no EAL needed)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_mbuf.h>

#include <vsw/dpcls.h>
#include <vsw/emc.h>
#include <vsw/flow.h>

#include "tl_rng.h"

#define POOL 4096

static struct tl_rng rng; /* fixed seed in main: the same keys every run */
static double tsc_ghz;

static uint64_t
rnd64(void)
{
	return tl_rand(&rng);
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void
calibrate_tsc(void)
{
	double t0 = now_s(), t1;
	uint64_t c0 = rte_rdtsc(), c1;

	do {
		t1 = now_s();
	} while (t1 - t0 < 0.05);
	c1 = rte_rdtsc();
	tsc_ghz = (double)(c1 - c0) / (t1 - t0) * 1e-9;
}

/*
 * Mask of subtable i: in_port, dl_type, nw_dst/(32 - i % 16); from i = 16
 * on also nw_proto + tp_dst, from 32 nw_src/8, from 48 both: 3 to 5 words.
 */
static void
bench_mask(unsigned i, struct vsw_flow_mask *m)
{
	unsigned plen = 32 - i % 16, b;

	memset(m, 0, sizeof(*m));
	m->m.in_port = 0xffff;
	m->m.dl_type = 0xffff;
	for (b = 0; b < plen; b++)
		m->m.nw_dst[b / 8] |= (uint8_t)(0x80u >> (b % 8));
	if ((i / 16) & 1) {
		m->m.nw_proto = 0xff;
		m->m.tp_dst = 0xffff;
	}
	if ((i / 16) & 2)
		m->m.nw_src[0] = 0xff;
}

static void
random_key(struct vsw_flow_key *k)
{
	uint64_t *w = (uint64_t *)(void *)k;
	unsigned i;

	for (i = 0; i < VSW_FLOW_KEY_WORDS; i++)
		w[i] = rnd64();
	k->dl_type = rte_cpu_to_be_16(0x0800);
}

struct setup {
	struct vsw_dpcls *cls;
	struct vsw_flow_key *rule_keys; /* masked key of rule r */
	unsigned *rule_st;
	struct vsw_flow_mask masks[64];
	struct vsw_flow_key *pool;
	unsigned n_rules;
};

static void
setup_build(struct setup *s, unsigned n_sub, unsigned n_rules)
{
	unsigned r;

	memset(s, 0, sizeof(*s));
	s->cls = vsw_dpcls_create();
	s->rule_keys = aligned_alloc(64, n_rules * sizeof(*s->rule_keys));
	s->rule_st = calloc(n_rules, sizeof(*s->rule_st));
	s->pool = aligned_alloc(64, POOL * sizeof(*s->pool));
	if (!s->cls || !s->rule_keys || !s->rule_st || !s->pool) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	for (r = 0; r < n_sub; r++)
		bench_mask(r, &s->masks[r]);
	for (r = 0; r < n_rules; r++) {
		unsigned st = r % n_sub;

		random_key(&s->rule_keys[r]);
		s->rule_st[r] = st;
		if (vsw_dpcls_insert(s->cls, &s->rule_keys[r], &s->masks[st], 0,
			    &s->rule_keys[r]) != 0) {
			fprintf(stderr, "insert failed\n");
			exit(1);
		}
	}
	s->n_rules = vsw_dpcls_n_rules(s->cls);
	/* Pool keys: a rule's bits under its mask, random bits elsewhere. */
	for (r = 0; r < POOL; r++) {
		unsigned ri = (unsigned)(rnd64() % n_rules), w;
		const uint64_t *rk =
			(const uint64_t *)(void *)&s->rule_keys[ri];
		const uint64_t *mk =
			(const uint64_t *)(void *)&s->masks[s->rule_st[ri]].m;
		uint64_t *pk = (uint64_t *)(void *)&s->pool[r];

		random_key(&s->pool[r]);
		for (w = 0; w < VSW_FLOW_KEY_WORDS; w++)
			pk[w] = (pk[w] & ~mk[w]) | (rk[w] & mk[w]);
	}
}

static void
setup_free(struct setup *s)
{
	vsw_dpcls_destroy(s->cls);
	free(s->rule_keys);
	free(s->rule_st);
	free(s->pool);
}

/* Each cell runs in chunks of one pass over the pool; the cheapest chunk
 * counts (see run_dpcls). */
#define CHUNK POOL

/* Cycles per key; batch = keys per call (32 or 1). */
static double
run_dpcls_once(const struct setup *s, unsigned batch, unsigned long n_keys,
	unsigned long *hits)
{
	void *res[VSW_DPCLS_BURST];
	uint32_t map = batch == 32 ? UINT32_MAX : 1;
	unsigned long i, h = 0;
	uint64_t c0, c1;

	c0 = rte_rdtsc();
	for (i = 0; i < n_keys; i += batch) {
		const struct vsw_flow_key *k = &s->pool[i % POOL];

		h += (unsigned long)__builtin_popcount(
			vsw_dpcls_lookup(s->cls, k, map, res, NULL));
	}
	c1 = rte_rdtsc();
	*hits = h;
	return (double)(c1 - c0) / (double)i;
}

/*
 * The box is shared: the cheapest of many short chunks is the figure least
 * disturbed by other processes (steady state, caches warm).
 */
static double
run_dpcls(const struct setup *s, unsigned batch, unsigned long n_keys,
	unsigned long *misses)
{
	unsigned long per = CHUNK, h, all = 0, r;
	double best = 1e30, c;

	for (r = 0; r < n_keys / CHUNK; r++) {
		c = run_dpcls_once(s, batch, per, &h);
		best = c < best ? c : best;
		all += per - h;
	}
	*misses = all; /* every pool key matches a rule */
	return best;
}

/* EMC in front of the classifier, as a PMD does it. */
static double
run_emc(const struct setup *s, struct vsw_emc *emc, unsigned long n_keys,
	unsigned long *hits)
{
	void *res[VSW_DPCLS_BURST];
	unsigned long i, h = 0;
	uint64_t c0, c1;

	c0 = rte_rdtsc();
	for (i = 0; i < n_keys; i += 32) {
		const struct vsw_flow_key *k = &s->pool[i % POOL];
		uint32_t miss, found, m;

		miss = ~vsw_emc_lookup(emc, k, UINT32_MAX, res);
		found = miss ? vsw_dpcls_lookup(s->cls, k, miss, res, NULL) : 0;
		for (m = found; m != 0; m &= m - 1) {
			unsigned j = (unsigned)__builtin_ctz(m);

			vsw_emc_insert(emc, &k[j], res[j]);
		}
		h += 32 - (unsigned long)__builtin_popcount(miss & ~found);
	}
	c1 = rte_rdtsc();
	*hits = h;
	return (double)(c1 - c0) / (double)i;
}

static void
bench_config(unsigned n_sub, unsigned n_rules, unsigned long n_keys)
{
	const char *names[8];
	unsigned n = vsw_dpcls_impl_list(names, 8), i;
	const char *saved = vsw_dpcls_impl_get();
	struct vsw_emc *emc = vsw_emc_create(8192);
	unsigned long hits; /* misses for run_dpcls() */
	struct setup s;
	double cyc;

	if (n_rules < n_sub)
		n_rules = n_sub;
	setup_build(&s, n_sub, n_rules);
	for (i = 0; i < n; i++) {
		double c1;

		vsw_dpcls_impl_set(names[i]);
		run_dpcls(&s, 32, POOL, &hits); /* warm */
		cyc = run_dpcls(&s, 32, n_keys, &hits);
		if (hits != 0)
			printf("!! %s: %lu keys missed\n", names[i], hits);
		c1 = run_dpcls(&s, 1, n_keys / 4, &hits);
		printf("%4u %7u  %-14s %8.1f %8.1f %6.2f  %8.2f\n", n_sub,
			s.n_rules, names[i], cyc, c1, c1 / cyc,
			tsc_ghz * 1e3 / cyc);
	}
	vsw_dpcls_impl_set(saved);
	run_emc(&s, emc, POOL * 2, &hits); /* fill */
	cyc = 1e30;
	for (i = 0; i < n_keys / CHUNK; i++) {
		double c = run_emc(&s, emc, CHUNK, &hits);

		cyc = c < cyc ? c : cyc;
	}
	printf("%4u %7u  %-14s %8.1f %8s %6s  %8.2f\n", n_sub, s.n_rules,
		"emc+default", cyc, "-", "-", tsc_ghz * 1e3 / cyc);
	vsw_emc_destroy(emc);
	setup_free(&s);
}

/* --- extraction ------------------------------------------------------- */

static unsigned
make_packet(uint8_t *d, unsigned kind)
{
	static const uint8_t eth[12] = {2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2};
	unsigned off = 14, l4;

	memset(d, 0, 128);
	memcpy(d, eth, 12);
	if (kind == 1) { /* VLAN */
		d[12] = 0x81;
		d[14] = 0x0a;
		d[15] = 0x0b;
		off += 4;
	}
	if (kind <= 1 || kind == 4) {
		d[off - 2] = 0x08;
		d[off] = 0x45;
		d[off + 3] = 50;
		d[off + 8] = 64;
		d[off + 9] = 17;
		l4 = off + 20;
	} else {
		d[off - 2] = 0x86;
		d[off - 1] = 0xdd;
		d[off] = 0x60;
		d[off + 5] = 30;
		d[off + 6] = kind == 3 ? 0 : 6;
		d[off + 7] = 64;
		l4 = off + 40;
		if (kind == 3) { /* hop-by-hop then TCP */
			d[l4] = 6;
			l4 += 8;
		}
		d[l4 + 12] = 0x50;
	}
	d[l4 + 1] = 99;
	d[l4 + 3] = 53;
	return 64 + (kind >= 2 && kind <= 3 ? 32 : 0);
}

static void
bench_extract(unsigned long n_pkts)
{
	static const char *const kinds[] = {"ipv4/udp", "vlan/ipv4/udp",
		"ipv6/tcp", "ipv6/hbh/tcp", "ipv4/udp 2 segs"};
	static uint8_t data[32][2][128];
	static struct rte_mbuf mb[32][2];
	struct rte_mbuf *pkts[32];
	struct vsw_flow_key keys[32];
	unsigned kind, i;

	printf("\nflow key extraction (burst of 32, %lu packets)\n", n_pkts);
	printf("%-16s %10s\n", "packet", "cycles/pkt");
	for (kind = 0; kind < 5; kind++) {
		double best = 1e30, c;
		unsigned long n;
		unsigned r;
		uint64_t c0;

		for (i = 0; i < 32; i++) {
			unsigned len = make_packet(data[i][0], kind);
			unsigned cut = kind == 4 ? 20 : len;

			memset(mb[i], 0, sizeof(mb[i]));
			memcpy(data[i][1], data[i][0] + cut, len - cut);
			mb[i][0].buf_addr = data[i][0];
			mb[i][0].data_len = (uint16_t)cut;
			mb[i][0].pkt_len = len;
			mb[i][0].nb_segs = 1;
			if (kind == 4) {
				mb[i][0].next = &mb[i][1];
				mb[i][0].nb_segs = 2;
				mb[i][1].buf_addr = data[i][1];
				mb[i][1].data_len = (uint16_t)(len - cut);
			}
			pkts[i] = &mb[i][0];
		}
		for (r = 0; r < n_pkts / CHUNK; r++) {
			c0 = rte_rdtsc();
			for (n = 0; n < CHUNK; n += 32)
				vsw_flow_extract_burst(pkts, 32, 1, keys);
			c = (double)(rte_rdtsc() - c0) / (double)n;
			best = c < best ? c : best;
		}
		printf("%-16s %10.1f\n", kinds[kind], best);
	}
}

int
main(int argc, char **argv)
{
	static const unsigned subs[] = {1, 4, 16, 64};
	static const unsigned rules[] = {1, 1000, 100000};
	int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
	unsigned long n_keys = quick ? 1u << 16 : 1u << 20;
	unsigned i, j;

	tl_rng_seed(&rng, 0x9e3779b97f4a7c15ull);
	calibrate_tsc();
	printf("vsw-bench-dpcls: TSC %.2f GHz, %lu keys per cell, "
	       "default lookup '%s'\n",
		tsc_ghz, n_keys, vsw_dpcls_impl_get());
	printf("cycles: cheapest chunk of %u keys; one-at-a-time runs a "
	       "quarter of the keys; Mkeys/s is batch-32\n",
		CHUNK);
	printf("%4s %7s  %-14s %8s %8s %6s  %8s\n", "subt", "rules", "impl",
		"cyc/key", "1-by-1", "ratio", "Mkeys/s");
	for (i = 0; i < sizeof(subs) / sizeof(subs[0]); i++)
		for (j = 0; j < sizeof(rules) / sizeof(rules[0]); j++)
			bench_config(subs[i], rules[j], n_keys);
	bench_extract(quick ? 1u << 18 : 1u << 22);
	return 0;
}

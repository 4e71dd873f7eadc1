/* SPDX-License-Identifier: BSD-3-Clause */
/* The flow key tests' packet builder and checks: see flow_pb.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rte_byteorder.h>

#include "flow_pb.h"

struct tl_rng test_rng; /* tl_rng_init in main */

static void
pb_snap(struct pb *b)
{
	assert_true(b->n_snap < PB_SNAPS);
	b->snap_end[b->n_snap] = b->len;
	b->snap[b->n_snap] = b->exp;
	b->n_snap++;
}

void
pb_init(struct pb *b)
{
	memset(b, 0, sizeof(*b));
	b->exp.in_port = IN_PORT;
	pb_snap(b);
}

static uint8_t *
pb_put(struct pb *b, uint32_t n)
{
	uint8_t *p = b->d + b->len;

	assert_true(b->len + n <= PB_MAX);
	b->len += n;
	return p;
}

void
put16(uint8_t *p, uint16_t host)
{
	p[0] = (uint8_t)(host >> 8);
	p[1] = (uint8_t)host;
}

static uint16_t
net16(uint16_t host)
{
	return rte_cpu_to_be_16(host);
}

void
pb_eth(struct pb *b, uint16_t type)
{
	static const uint8_t dst[6] = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55};
	static const uint8_t src[6] = {0x0a, 0xbb, 0xcc, 0xdd, 0xee, 0xf1};
	uint8_t *p = pb_put(b, 14);

	memcpy(p, dst, 6);
	memcpy(p + 6, src, 6);
	put16(p + 12, type);
	memcpy(b->exp.dl_dst, dst, 6);
	memcpy(b->exp.dl_src, src, 6);
	b->exp.dl_type = net16(type);
	pb_snap(b);
}

void
pb_vlan(struct pb *b, uint16_t tci, uint16_t next)
{
	uint8_t *p = pb_put(b, 4);

	put16(p, tci);
	put16(p + 2, next);
	if (b->n_tags == 0)
		b->exp.vlan_tci = net16(tci | 0x1000);
	b->n_tags++;
	b->exp.dl_type = net16(next);
	pb_snap(b);
}

void
pb_ipv4(struct pb *b, uint8_t proto, uint32_t src, uint32_t dst, uint8_t tos,
	uint8_t ttl, uint16_t frag_field, uint32_t opt_len)
{
	uint32_t hlen = 20 + opt_len;
	uint8_t *p = pb_put(b, hlen);
	uint32_t i;

	p[0] = (uint8_t)(0x40 | (hlen / 4));
	p[1] = tos;
	b->ip_len_off = (uint32_t)(p + 2 - b->d);
	b->ip_off = (uint32_t)(p - b->d);
	b->ip_ver = 4;
	put16(p + 4, 0x1234);
	put16(p + 6, frag_field);
	p[8] = ttl;
	p[9] = proto;
	put16(p + 10, 0);
	put16(p + 12, (uint16_t)(src >> 16));
	put16(p + 14, (uint16_t)src);
	put16(p + 16, (uint16_t)(dst >> 16));
	put16(p + 18, (uint16_t)dst);
	for (i = 0; i < opt_len; i++)
		p[20 + i] = i + 1 == opt_len ? 0 : 1; /* NOPs then EOL */
	b->exp.nw_proto = proto;
	b->exp.nw_tos = tos;
	b->exp.nw_ttl = ttl;
	for (i = 0; i < 4; i++) {
		b->exp.nw_src[i] = (uint8_t)(src >> (24 - 8 * i));
		b->exp.nw_dst[i] = (uint8_t)(dst >> (24 - 8 * i));
	}
	/* MF = 0x2000, offset = low 13 bits. */
	if ((frag_field & 0x2000) || (frag_field & 0x1fff))
		b->exp.nw_frag = VSW_FRAG_ANY;
	if (frag_field & 0x1fff)
		b->exp.nw_frag |= VSW_FRAG_LATER;
	pb_snap(b);
}

void
pb_ipv6(struct pb *b, uint8_t nh, uint8_t tc, uint8_t hlim, uint8_t seed)
{
	uint8_t *p = pb_put(b, 40);
	uint32_t i;

	p[0] = (uint8_t)(0x60 | (tc >> 4));
	p[1] = (uint8_t)((tc << 4) | 0x5);
	p[2] = 0xab;
	p[3] = 0xcd;
	b->ip_len_off = (uint32_t)(p + 4 - b->d);
	b->ip_off = (uint32_t)(p + 40 - b->d);
	b->ip_ver = 6;
	p[6] = nh;
	p[7] = hlim;
	for (i = 0; i < 16; i++) {
		p[8 + i] = (uint8_t)(seed + i);
		p[24 + i] = (uint8_t)(seed * 3 + 100 + i);
		b->exp.nw_src[i] = p[8 + i];
		b->exp.nw_dst[i] = p[24 + i];
	}
	b->exp.nw_proto = nh;
	b->exp.nw_tos = tc;
	b->exp.nw_ttl = hlim;
	pb_snap(b);
}

void
pb_ipv6_opt(struct pb *b, uint8_t next, uint8_t units)
{
	uint32_t n = ((uint32_t)units + 1) * 8, i;
	uint8_t *p = pb_put(b, n);

	p[0] = next;
	p[1] = units;
	for (i = 2; i < n; i++)
		p[i] = (uint8_t)(0x30 + i);
	b->exp.nw_proto = next;
	pb_snap(b);
}

void
pb_ipv6_frag(struct pb *b, uint8_t next, uint16_t offset8, int more)
{
	uint8_t *p = pb_put(b, 8);

	p[0] = next;
	p[1] = 0;
	put16(p + 2, (uint16_t)((offset8 << 3) | (more ? 1 : 0)));
	memset(p + 4, 0x5a, 4);
	b->exp.nw_proto = next;
	b->exp.nw_frag = VSW_FRAG_ANY | (offset8 ? VSW_FRAG_LATER : 0);
	pb_snap(b);
}

void
pb_tcp(struct pb *b, uint16_t sport, uint16_t dport, uint16_t flags)
{
	uint8_t *p = pb_put(b, 20);

	memset(p, 0, 20);
	put16(p, sport);
	put16(p + 2, dport);
	put16(p + 12, (uint16_t)(0x5000 | flags));
	b->exp.tp_src = net16(sport);
	b->exp.tp_dst = net16(dport);
	b->exp.tcp_flags = net16(flags & 0x0fff);
	pb_snap(b);
}

void
pb_ports(struct pb *b, uint32_t hlen, uint16_t sport, uint16_t dport)
{
	uint8_t *p = pb_put(b, hlen);

	memset(p, 0xee, hlen);
	put16(p, sport);
	put16(p + 2, dport);
	b->exp.tp_src = net16(sport);
	b->exp.tp_dst = net16(dport);
	pb_snap(b);
}

void
pb_icmp(struct pb *b, uint8_t type, uint8_t code)
{
	uint8_t *p = pb_put(b, 4);

	p[0] = type;
	p[1] = code;
	p[2] = 0x77;
	p[3] = 0x78;
	b->exp.tp_src = net16(type);
	b->exp.tp_dst = net16(code);
	pb_snap(b);
	pb_payload(b, 4);
}

void
pb_arp(struct pb *b, uint16_t op, uint32_t spa, uint32_t tpa)
{
	uint8_t *p = pb_put(b, 28);
	uint32_t i;

	put16(p, 1);
	put16(p + 2, 0x0800);
	p[4] = 6;
	p[5] = 4;
	put16(p + 6, op);
	memset(p + 8, 0x11, 6);
	memset(p + 18, 0x22, 6);
	for (i = 0; i < 4; i++) {
		p[14 + i] = (uint8_t)(spa >> (24 - 8 * i));
		p[24 + i] = (uint8_t)(tpa >> (24 - 8 * i));
		b->exp.nw_src[i] = p[14 + i];
		b->exp.nw_dst[i] = p[24 + i];
	}
	b->exp.nw_proto = op <= 255 ? (uint8_t)op : 0;
	pb_snap(b);
}

void
pb_payload(struct pb *b, uint32_t n)
{
	uint8_t *p = pb_put(b, n);
	uint32_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)rnd();
}

void
pb_finish(struct pb *b)
{
	if (b->ip_ver == 4)
		put16(b->d + b->ip_len_off,
			(uint16_t)(b->len - (b->ip_len_off - 2)));
	else if (b->ip_ver == 6)
		put16(b->d + b->ip_len_off, (uint16_t)(b->len - b->ip_off));
}

static const struct vsw_flow_key *
pb_expect(const struct pb *b, uint32_t len)
{
	uint32_t i = b->n_snap - 1;

	while (b->snap_end[i] > len)
		i--;
	return &b->snap[i];
}

struct rte_mbuf *
chain_build(struct chain *c, const uint8_t *data, uint32_t len,
	const uint32_t *cuts, unsigned n_cuts)
{
	uint32_t start = 0, end;
	unsigned s;

	memset(c, 0, sizeof(*c));
	for (s = 0; s <= n_cuts; s++) {
		end = s < n_cuts ? cuts[s] : len;
		/* Exactly the segment's bytes: ASan sees any overread. */
		c->buf[s] = malloc(end - start ? end - start : 1);
		assert_non_null(c->buf[s]);
		memcpy(c->buf[s], data + start, end - start);
		c->m[s].buf_addr = c->buf[s];
		c->m[s].buf_len = (uint16_t)(end - start);
		c->m[s].data_off = 0;
		c->m[s].data_len = (uint16_t)(end - start);
		c->m[s].next = s < n_cuts ? &c->m[s + 1] : NULL;
		start = end;
	}
	c->m[0].pkt_len = len;
	c->m[0].nb_segs = (uint16_t)(n_cuts + 1);
	return &c->m[0];
}

void
chain_free(struct chain *c)
{
	unsigned s;

	for (s = 0; s < MAX_SEGS; s++)
		free(c->buf[s]);
}

void
extract_cut(const uint8_t *data, uint32_t len, const uint32_t *cuts,
	unsigned n_cuts, struct vsw_flow_key *key)
{
	struct chain c;

	vsw_flow_extract(
		chain_build(&c, data, len, cuts, n_cuts), IN_PORT, key);
	chain_free(&c);
}

void
key_check(const struct vsw_flow_key *got, const struct vsw_flow_key *exp,
	const char *what, uint32_t len, uint32_t cut)
{
	const uint8_t *g = (const uint8_t *)got, *e = (const uint8_t *)exp;
	unsigned i;

	if (memcmp(got, exp, sizeof(*got)) == 0)
		return;
	for (i = 0; i < sizeof(*got); i++)
		if (g[i] != e[i])
			print_error("%s len %u cut %u: key byte %u is %#x, "
				    "expected %#x\n",
				what, len, cut, i, g[i], e[i]);
	fail();
}

void
check_packet(struct pb *b)
{
	struct vsw_flow_key got;
	uint32_t len, cut[2];

	pb_finish(b);
	for (len = 0; len <= b->len; len++) {
		extract_cut(b->d, len, NULL, 0, &got);
		key_check(&got, pb_expect(b, len), "contiguous", len, 0);
		for (cut[0] = 0; cut[0] <= len; cut[0] += len < 80 ? 1 : 7) {
			extract_cut(b->d, len, cut, 1, &got);
			key_check(
				&got, pb_expect(b, len), "2 segs", len, cut[0]);
		}
		cut[0] = len ? rnd() % len : 0;
		cut[1] = cut[0] + (len - cut[0] ? rnd() % (len - cut[0]) : 0);
		extract_cut(b->d, len, cut, 2, &got);
		key_check(&got, pb_expect(b, len), "3 segs", len, cut[0]);
	}
	/* Every split of the whole packet, one byte steps. */
	for (cut[0] = 0; cut[0] <= b->len; cut[0]++) {
		extract_cut(b->d, b->len, cut, 1, &got);
		key_check(&got, pb_expect(b, b->len), "2 segs", b->len, cut[0]);
	}
}

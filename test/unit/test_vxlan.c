/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The VXLAN codec (vsw/vxlan.h) against a reference written here, field
 * by field from RFC 791/768/7348: encapsulation of many random frames
 * byte for byte, and the underlay checks over random and mutated packets
 * and at every limit (truncation at each length 0..49, IHL, options,
 * fragments, TTL, UDP port and length, flags, destination). Every parse
 * reads a copy of exactly seg_len bytes in its own allocation, so the
 * sanitizer build catches a read past the frame.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <rte_mbuf.h>

#include <vsw/vxlan.h>

#include "switch_harness.h"
#include "tl_rng.h"

#define LOCAL_IP 0x0a000001u
#define REMOTE_IP 0x0a000002u
#define RANDOM_CASES 20000

static struct tl_rng rng;

static void
w16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static unsigned
r16(const uint8_t *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

static uint32_t
r32(const uint8_t *p)
{
	return (uint32_t)r16(p) << 16 | r16(p + 2);
}

/* RFC 1071 over n bytes (n even). */
static unsigned
ref_csum(const uint8_t *p, unsigned n)
{
	uint32_t s = 0;

	for (unsigned i = 0; i < n; i += 2)
		s += r16(p + i);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return ~s & 0xffff;
}

/* The outer frame as RFC 7348 section 5 draws it, with IHL words of IPv4
 * header (options zero-filled); returns its length. */
static unsigned
ref_encap(uint8_t *out, const uint8_t *inner, unsigned len,
	const uint8_t dmac[6], const uint8_t smac[6], uint32_t sip,
	uint32_t dip, uint32_t vni, unsigned sport, unsigned ihl_words)
{
	unsigned ihl = ihl_words * 4, o = 14 + ihl;

	memcpy(out, dmac, 6);
	memcpy(out + 6, smac, 6);
	w16(out + 12, 0x0800);
	memset(out + 14, 0, ihl);
	out[14] = (uint8_t)(0x40 | ihl_words);
	w16(out + 16, ihl + 16 + len);
	w16(out + 20, 0x4000); /* DF */
	out[22] = 64;
	out[23] = 17;
	w16(out + 26, sip >> 16);
	w16(out + 28, sip & 0xffff);
	w16(out + 30, dip >> 16);
	w16(out + 32, dip & 0xffff);
	w16(out + 24, ref_csum(out + 14, ihl));
	w16(out + o, sport);
	w16(out + o + 2, 4789);
	w16(out + o + 4, 16 + len);
	w16(out + o + 6, 0);
	memset(out + o + 8, 0, 8);
	out[o + 8] = 0x08;
	out[o + 12] = (uint8_t)(vni >> 16);
	out[o + 13] = (uint8_t)(vni >> 8);
	out[o + 14] = (uint8_t)vni;
	memcpy(out + o + 16, inner, len);
	return o + 16 + len;
}

/* The reference decoder: the order of decisions vsw/vxlan.h documents. */
static enum vsw_vxlan_verdict
ref_parse(const uint8_t *p, uint32_t seg, uint32_t pkt, uint32_t local,
	struct vsw_vxlan_rx *rx)
{
	unsigned ihl, tot, ul, u;

	if (seg > pkt)
		seg = pkt;
	if (seg < 34)
		return VSW_VXLAN_NOT_OURS;
	if (r16(p + 12) != 0x0800)
		return VSW_VXLAN_NOT_OURS;
	if (r32(p + 30) != local)
		return VSW_VXLAN_NOT_OURS;
	if (p[14] >> 4 != 4)
		return VSW_VXLAN_BAD_IP;
	ihl = (p[14] & 15) * 4u;
	if (ihl < 20)
		return VSW_VXLAN_BAD_IP;
	if (14 + ihl > seg)
		return VSW_VXLAN_TRUNCATED;
	if (ref_csum(p + 14, ihl) != 0)
		return VSW_VXLAN_BAD_CSUM;
	if (p[23] != 17)
		return VSW_VXLAN_NOT_OURS;
	if ((r16(p + 20) & 0x3fff) != 0)
		return VSW_VXLAN_FRAGMENT;
	tot = r16(p + 16);
	if (tot + 14 > pkt || tot < ihl + 8 || 14 + ihl + 8 > seg)
		return VSW_VXLAN_TRUNCATED;
	u = 14 + ihl;
	if (r16(p + u + 2) != 4789)
		return VSW_VXLAN_NOT_OURS;
	if (p[22] == 0)
		return VSW_VXLAN_TTL;
	ul = r16(p + u + 4);
	if (ul < 8 || ul > tot - ihl)
		return VSW_VXLAN_BAD_UDP;
	if (ul < 30 || u + 16 > seg)
		return VSW_VXLAN_TRUNCATED;
	if ((p[u + 8] & 0x08) == 0)
		return VSW_VXLAN_BAD_FLAGS;
	rx->vni = r32(p + u + 12) >> 8;
	rx->src_ip = r32(p + 26);
	rx->inner_off = u + 16;
	rx->inner_len = ul - 16;
	return VSW_VXLAN_OK;
}

/* vsw_vxlan_parse on an exact-size copy of p[0 .. seg). */
static enum vsw_vxlan_verdict
parse_copy(const uint8_t *p, uint32_t seg, uint32_t pkt, uint32_t local,
	struct vsw_vxlan_rx *rx)
{
	uint8_t *c = malloc(seg ? seg : 1);
	enum vsw_vxlan_verdict v;

	assert_non_null(c);
	memcpy(c, p, seg);
	v = vsw_vxlan_parse(c, seg, pkt, local, rx);
	free(c);
	return v;
}

static void
check_same(const uint8_t *p, uint32_t seg, uint32_t pkt)
{
	struct vsw_vxlan_rx a = {0}, b = {0};
	enum vsw_vxlan_verdict got = parse_copy(p, seg, pkt, LOCAL_IP, &a);
	enum vsw_vxlan_verdict want = ref_parse(p, seg, pkt, LOCAL_IP, &b);

	if (got != want)
		fail_msg("verdict %d, reference %d (seg %u pkt %u)", got, want,
			seg, pkt);
	if (got == VSW_VXLAN_OK)
		assert_memory_equal(&a, &b, sizeof(a));
}

/* A valid packet of inner length len and ihl_words, in buf. */
static unsigned
valid(uint8_t *buf, unsigned len, unsigned ihl_words, uint32_t vni)
{
	uint8_t inner[1600], dm[6] = {2, 0, 0, 0, 0, 1}, sm[6] = {2, 0, 0, 0,
		0, 2};

	tl_rand_bytes(&rng, inner, len);
	return ref_encap(buf, inner, len, dm, sm, REMOTE_IP, LOCAL_IP, vni,
		49152 + (tl_rand32(&rng) & 0x3fff), ihl_words);
}

/* Encapsulation of random frames equals the reference, byte for byte,
 * with the inner frame left where it was (no copy). */
static void
test_encap_random(void **state)
{
	(void)state;
	for (unsigned i = 0; i < 2000; i++) {
		uint8_t inner[1600], want[1700], dm[6], sm[6];
		unsigned len = tl_rand_range(&rng, 14, 1518);
		uint32_t sip = tl_rand32(&rng), dip = tl_rand32(&rng);
		uint32_t vni = tl_rand32(&rng) & VSW_VXLAN_VNI_MAX;
		uint16_t sport = vsw_vxlan_src_port(tl_rand32(&rng));
		struct vsw_vxlan_tmpl t;
		struct rte_mbuf *m;
		const uint8_t *before;

		tl_rand_bytes(&rng, inner, len);
		tl_rand_bytes(&rng, dm, 6);
		tl_rand_bytes(&rng, sm, 6);
		m = rte_pktmbuf_alloc(pool);
		assert_non_null(m);
		memcpy(rte_pktmbuf_append(m, (uint16_t)len), inner, len);
		m->ol_flags = RTE_MBUF_F_TX_TCP_CKSUM;
		before = rte_pktmbuf_mtod(m, const uint8_t *);
		vsw_vxlan_tmpl_init(&t, sm, sip, dip);
		assert_int_equal(vsw_vxlan_encap(m, &t, dm, vni, sport), 0);
		assert_true(sport >= 49152);
		assert_int_equal(rte_pktmbuf_pkt_len(m), len + 50);
		assert_ptr_equal(rte_pktmbuf_mtod_offset(m, uint8_t *, 50),
			before);
		ref_encap(want, inner, len, dm, sm, sip, dip, vni, sport, 5);
		assert_memory_equal(rte_pktmbuf_mtod(m, uint8_t *), want,
			len + 50);
		assert_int_equal(m->ol_flags, 0);
		rte_pktmbuf_free(m);
	}
}

/* 49 bytes of headroom: refused, the mbuf unchanged. */
static void
test_encap_headroom(void **state)
{
	uint8_t mac[6] = {2, 0, 0, 0, 0, 9};
	struct vsw_vxlan_tmpl t;
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);

	(void)state;
	assert_non_null(m);
	m->data_off = 49;
	memset(rte_pktmbuf_append(m, 60), 0xab, 60);
	vsw_vxlan_tmpl_init(&t, mac, 1, 2);
	assert_int_equal(vsw_vxlan_encap(m, &t, mac, 7, 50000), -1);
	assert_int_equal(m->data_off, 49);
	assert_int_equal(rte_pktmbuf_pkt_len(m), 60);
	m->data_off = 50;
	assert_int_equal(vsw_vxlan_encap(m, &t, mac, 7, 50000), 0);
	assert_int_equal(m->data_off, 0);
	rte_pktmbuf_free(m);
}

/* What the codec encapsulates, it decapsulates, every VNI bit intact. */
static void
test_roundtrip(void **state)
{
	uint8_t buf[1700];
	struct vsw_vxlan_rx rx;

	(void)state;
	for (unsigned i = 0; i < 1000; i++) {
		uint32_t vni = i == 0 ? VSW_VXLAN_VNI_MAX :
			i == 1 ? 1 : tl_rand32(&rng) & VSW_VXLAN_VNI_MAX;
		unsigned len = tl_rand_range(&rng, 14, 1518);
		unsigned n = valid(buf, len, 5, vni);

		assert_int_equal(parse_copy(buf, n, n, LOCAL_IP, &rx),
			VSW_VXLAN_OK);
		assert_int_equal(rx.vni, vni);
		assert_int_equal(rx.src_ip, REMOTE_IP);
		assert_int_equal(rx.inner_off, 50);
		assert_int_equal(rx.inner_len, len);
	}
}

/* A valid packet cut at every length 0..49: not ours while the
 * destination is not there (< 34), then truncated. */
static void
test_truncated_every_length(void **state)
{
	uint8_t buf[1700];
	struct vsw_vxlan_rx rx;
	unsigned n = valid(buf, 64, 5, 42);

	(void)state;
	for (unsigned len = 0; len < 50; len++) {
		enum vsw_vxlan_verdict v = parse_copy(buf, len, len, LOCAL_IP,
			&rx);

		assert_int_equal(v, len < 34 ? VSW_VXLAN_NOT_OURS :
					       VSW_VXLAN_TRUNCATED);
		/* headers in the segment, frame shorter than IP says */
		if (len >= 34)
			assert_int_equal(parse_copy(buf, len, len, LOCAL_IP,
						 &rx), VSW_VXLAN_TRUNCATED);
	}
	/* the whole frame but one byte */
	assert_int_equal(parse_copy(buf, n - 1, n - 1, LOCAL_IP, &rx),
		VSW_VXLAN_TRUNCATED);
	/* headers all in the first segment, the rest in others: fine */
	assert_int_equal(parse_copy(buf, 50, n, LOCAL_IP, &rx), VSW_VXLAN_OK);
	assert_int_equal(parse_copy(buf, 49, n, LOCAL_IP, &rx),
		VSW_VXLAN_TRUNCATED);
}

static void
recsum(uint8_t *buf)
{
	unsigned ihl = (buf[14] & 15) * 4u;

	w16(buf + 24, 0);
	w16(buf + 24, ref_csum(buf + 14, ihl < 20 ? 20 : ihl));
}

/* Each field at its limit, with the verdict spelled out. */
static void
test_limits(void **state)
{
	uint8_t buf[1700], b[1700];
	struct vsw_vxlan_rx rx;
	unsigned n = valid(buf, 100, 5, 77), ihl;

	(void)state;
#define CASE(edit, want)                                                      \
	do {                                                                  \
		memcpy(b, buf, n);                                            \
		edit;                                                         \
		assert_int_equal(parse_copy(b, n, n, LOCAL_IP, &rx), want);   \
		check_same(b, n, n);                                          \
	} while (0)
	CASE((void)0, VSW_VXLAN_OK);
	CASE(b[33] ^= 1, VSW_VXLAN_NOT_OURS);                  /* not our IP */
	CASE(w16(b + 12, 0x8100), VSW_VXLAN_NOT_OURS);         /* tagged */
	CASE((b[14] = 0x65, recsum(b)), VSW_VXLAN_BAD_IP);     /* version 6 */
	CASE((b[14] = 0x44, recsum(b)), VSW_VXLAN_BAD_IP);     /* IHL 4 */
	CASE(b[24] ^= 1, VSW_VXLAN_BAD_CSUM);
	CASE((b[23] = 6, recsum(b)), VSW_VXLAN_NOT_OURS);      /* TCP */
	CASE((b[20] |= 0x20, recsum(b)), VSW_VXLAN_FRAGMENT);  /* MF */
	CASE((b[21] = 1, recsum(b)), VSW_VXLAN_FRAGMENT);      /* offset 8 */
	CASE((b[20] = 0, recsum(b)), VSW_VXLAN_OK);            /* no DF */
	CASE((b[22] = 0, recsum(b)), VSW_VXLAN_TTL);
	CASE((b[22] = 1, recsum(b)), VSW_VXLAN_OK);
	CASE(w16(b + 36, 4790), VSW_VXLAN_NOT_OURS);           /* UDP port */
	CASE(w16(b + 36, 4788), VSW_VXLAN_NOT_OURS);
	CASE(w16(b + 38, 16 + 100 + 1), VSW_VXLAN_BAD_UDP);    /* past IP */
	CASE(w16(b + 38, 7), VSW_VXLAN_BAD_UDP);
	CASE(w16(b + 38, 29), VSW_VXLAN_TRUNCATED);            /* inner 13 */
	CASE(w16(b + 38, 30), VSW_VXLAN_OK);                   /* inner 14 */
	CASE((w16(b + 16, 20 + 8 - 1), recsum(b)), VSW_VXLAN_TRUNCATED);
	CASE((w16(b + 16, n - 14 + 1), recsum(b)), VSW_VXLAN_TRUNCATED);
	CASE(b[42] = 0, VSW_VXLAN_BAD_FLAGS);                  /* I clear */
	CASE(b[42] = 0xf7, VSW_VXLAN_BAD_FLAGS);
	CASE((b[42] = 0xff, b[49] = 0xff), VSW_VXLAN_OK);      /* reserved */
#undef CASE
	/* Ethernet padding after the IP packet: ignored. */
	memset(buf + n, 0, 20);
	assert_int_equal(parse_copy(buf, n + 20, n + 20, LOCAL_IP, &rx),
		VSW_VXLAN_OK);
	assert_int_equal(rx.inner_len, 100);
	/* IPv4 options, IHL 6..15: the inner frame after them. */
	for (ihl = 6; ihl <= 15; ihl++) {
		unsigned m = valid(b, 64, ihl, 9);

		assert_int_equal(parse_copy(b, m, m, LOCAL_IP, &rx),
			VSW_VXLAN_OK);
		assert_int_equal(rx.inner_off, 14 + ihl * 4 + 16);
		assert_int_equal(rx.inner_len, 64);
		assert_int_equal(parse_copy(b, 14 + ihl * 4 + 15, m, LOCAL_IP,
					 &rx), VSW_VXLAN_TRUNCATED);
	}
}

/* Random and mutated packets: the same verdict as the reference, no read
 * past seg_len. */
static void
test_hostile_random(void **state)
{
	uint8_t buf[1700];

	(void)state;
	for (unsigned i = 0; i < RANDOM_CASES; i++) {
		unsigned n = valid(buf, tl_rand_range(&rng, 0, 200),
			tl_rand_range(&rng, 5, 15), tl_rand32(&rng) >> 8);
		unsigned flips = tl_rand_range(&rng, 0, 3);
		uint32_t seg, pkt;

		for (unsigned f = 0; f < flips; f++) {
			unsigned at = tl_rand_range(&rng, 0, n < 80 ? n - 1 : 79);

			buf[at] = (uint8_t)tl_rand32(&rng);
		}
		if (tl_rand32(&rng) & 1)
			recsum(buf); /* get past the checksum often */
		pkt = tl_rand32(&rng) & 3 ? n : tl_rand_range(&rng, 0, n + 8);
		seg = tl_rand32(&rng) & 3 ? pkt : tl_rand_range(&rng, 0, pkt);
		if (pkt > n)
			memset(buf + n, 0, pkt - n);
		check_same(buf, seg, pkt);
	}
	/* pure noise, any length */
	for (unsigned i = 0; i < RANDOM_CASES; i++) {
		uint32_t len = tl_rand_range(&rng, 0, 120);

		tl_rand_bytes(&rng, buf, len);
		if (len >= 34 && (i & 1)) {
			w16(buf + 12, 0x0800);
			w16(buf + 30, LOCAL_IP >> 16);
			w16(buf + 32, LOCAL_IP & 0xffff);
		}
		check_same(buf, len, len);
	}
}

/* The flow hash: a function of the flow fields only, spread over the
 * 14 bits the source port takes. */
static void
test_flow_hash(void **state)
{
	uint8_t a[64], b[64];
	unsigned seen[16] = {0};

	(void)state;
	memset(a, 0, sizeof(a));
	w16(a + 12, 0x0800);
	a[14] = 0x45;
	for (unsigned i = 0; i < 4096; i++) {
		w16(a + 34, i);
		memcpy(b, a, sizeof(b));
		b[20] = 0x40; /* DF: not a flow field */
		b[60] = 0x77; /* payload */
		assert_int_equal(vsw_vxlan_flow_hash(a, 64),
			vsw_vxlan_flow_hash(b, 64));
		seen[(vsw_vxlan_src_port(vsw_vxlan_flow_hash(a, 64)) - 49152)
			>> 10]++;
	}
	for (unsigned k = 0; k < 16; k++)
		assert_true(seen[k] > 128); /* 256 expected in each */
	/* short frames read no further than len */
	for (unsigned len = 0; len < 40; len++) {
		uint8_t *c = malloc(len ? len : 1);

		memcpy(c, a, len);
		vsw_vxlan_flow_hash(c, len);
		free(c);
	}
}

static int
group_setup(void **state)
{
	(void)state;
	tl_rng_init(&rng, "test_vxlan", 0x7348);
	return harness_setup("vsw_test_vxlan");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encap_random),
		cmocka_unit_test(test_encap_headroom),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_truncated_every_length),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_hostile_random),
		cmocka_unit_test(test_flow_hash),
	};

	return cmocka_run_group_tests(tests, group_setup, harness_teardown);
}
